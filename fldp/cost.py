"""What a reproduction costs: the engine's work counted in FLOPs, and a cost model calibrated on
this machine that turns the work of the runs a notebook needs into a predicted time.

**Counting.**  :func:`fldp.engine.local_train` and :func:`fldp.engine.evaluate` add the work they
do to this process's :data:`COUNTER`: per model (``"MLP/203530"``: class and parameter count) the
FLOPs (samples x :meth:`fldp.models.Model.flops_per_sample`, padding included, since it is
computed), the local SGD steps and the evaluated samples.  :func:`fldp.sweep.run_all` and
:meth:`fldp.store.RunStore.run` take the difference around each run (:func:`measure`) and the run
store keeps it with the run, so a stored run says what it cost.

**The model.**  A run's time is predicted as ``sum over models of FLOPs / rate + steps x
step_s`` plus ``run_s`` (data loading, set-up): ``rate`` (GFLOP/s) and ``step_s`` (the fixed cost
of one batched step) are measured per model class by :func:`calibrate`, which times the engine's
local training at two batch shapes (a few seconds); ``run_s`` by loading MNIST's federated split.
The calibration is cached under ``build/cost/`` per host, torch version and fldp version.  It
measures one thread, as every run computes under ``fldp reproduce`` (whatever ``--jobs``, so that
the numbers do not depend on it).  ``benchmarks/cost_table.py`` sets the predictions beside the measured times.

Why not a profiler (torch.profiler, fvcore's FLOP counter): they count by tracing the operators
of a run as it runs; the plan needs the count before anything runs, from the shapes alone, and
the engine's models are few and written out (:meth:`fldp.models.Model.layer_flops`).
"""
from __future__ import annotations

import contextlib
import json
import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

__all__ = ["Counter", "COUNTER", "measure", "Calibration", "calibrate", "run_seconds", "predict", "total_flops",
           "CALIBRATION_SHAPES"]


@dataclass
class Counter:
    """Work done in this process, per model: ``{"MLP/203530": {"flops", "steps", "eval"}}``."""

    work: dict = field(default_factory=dict)

    def add(self, model, samples: int, *, train: bool) -> None:
        """``samples`` forward (+ backward when ``train``) passes of ``model``; a train call is a step."""
        key = f"{type(model).__name__}/{model.dim}"
        w = self.work.setdefault(key, {"flops": 0, "steps": 0, "eval": 0})
        w["flops"] += int(samples) * model.flops_per_sample(train=train)
        if train:
            w["steps"] += 1
        else:
            w["eval"] += int(samples)

    def snapshot(self) -> dict:
        return {k: dict(v) for k, v in self.work.items()}

    def since(self, before: Mapping[str, Mapping[str, int]]) -> dict:
        """The work done since ``before`` (a :meth:`snapshot`), models without any left out."""
        out = {}
        for k, v in self.work.items():
            d = {m: v[m] - before.get(k, {}).get(m, 0) for m in v}
            if any(d.values()):
                out[k] = d
        return out


#: This process's counter (the engine adds to it).
COUNTER = Counter()


@contextlib.contextmanager
def measure() -> Iterator[dict]:
    """``with measure() as work: ...``: ``work`` holds the engine's work inside the block."""
    before, work = COUNTER.snapshot(), {}
    try:
        yield work
    finally:
        work.update(COUNTER.since(before))


def total_flops(work: Optional[Mapping[str, Mapping[str, int]]]) -> int:
    return sum(int(v.get("flops", 0)) for v in (work or {}).values())


# -- calibration ------------------------------------------------------------------------------
#: Per model class: the model, and the (clients, batch) shape timed for its rate (the papers'
#: typical one) and for its fixed cost per step (one client, one sample).
CALIBRATION_SHAPES = {
    "MLP": ("mlp", {}, (50, 50)),                                   # Wei et al., Sec. VI
    "CNN": ("cnn", {"channels": (8, 16), "hidden": 64}, (15, 128)),  # adaptive scheme, Sec. 7.1
    "MultinomialLogReg": ("logreg", {}, (10, 600)),                 # Zhou et al., Sec. VI
    "BinaryLogReg": ("binary_logreg", {"in_features": 105}, (50, 10)),  # Li et al., Sec. 4.1
}


CALIBRATION_VERSION = 2  # bump when calibrate() measures differently (a cached one is then stale)


@dataclass
class Calibration:
    """Measured on one machine: ``rate`` GFLOP/s and ``step_s`` per model class, ``run_s`` per run."""

    rate: dict
    step_s: dict
    run_s: float
    machine: dict
    load: float = 0.0  # the 1-minute load average when it was measured (a busy machine: pessimistic)

    def seconds(self, work: Optional[Mapping[str, Mapping[str, int]]]) -> float:
        """Predicted seconds of a run that did ``work`` (models not calibrated: the MLP's rate)."""
        total = self.run_s
        for key, w in (work or {}).items():
            cls = key.split("/")[0]
            rate, step = self.rate.get(cls, self.rate.get("MLP", 50.0)), self.step_s.get(cls, 1e-3)
            total += w.get("flops", 0) / (rate * 1e9) + w.get("steps", 0) * step
        return total


def _machine() -> dict:
    import torch

    from . import __version__

    return {"calibration": CALIBRATION_VERSION, "host": platform.node(), "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count(), "threads": 1, "torch": torch.__version__,
            "fldp": __version__}


def _time_steps(model, clients: int, batch: int, repeats: int = 3, budget_s: float = 0.4) -> float:
    """Seconds of one local SGD step of ``clients`` x ``batch`` (best of ``repeats``)."""
    import torch

    from . import data as D, engine

    g = torch.Generator().manual_seed(0)
    d = _in_features(model)
    xs = [torch.rand(batch, d, generator=g) for _ in range(clients)]
    ys = [torch.randint(0, model.num_classes, (batch,), generator=g) for _ in range(clients)]
    fd = D.FederatedData.from_clients(xs, ys, xs[0], ys[0])
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, batch_size=batch, lr=0.01, sampling="fixed")
    start = model.init(torch.Generator().manual_seed(1))
    clients_t = torch.arange(clients)
    engine.local_train(model, start, fd, clients_t, cfg)  # warm-up
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        engine.local_train(model, start, fd, clients_t, cfg)
        best = min(best, time.perf_counter() - t0)
    return best


def _in_features(model) -> int:
    shapes = model.shapes
    if "w1" in shapes:
        return shapes["w1"][0]
    if "conv1" in shapes:
        return model.in_channels * model.image_size ** 2
    return shapes["w"][0]


def calibrate(*, cache: Optional[Path] = None, refresh: bool = False) -> Calibration:
    """Measure the cost model's constants on this machine (a few seconds), or read them from
    ``cache`` (default ``build/cost/calibration.json``) when it was measured on this machine with
    this torch, thread count and fldp version (``refresh=True``, ``fldp reproduce --plan
    --recalibrate``: measure again, e.g. after measuring on a busy machine)."""
    from . import models
    from .results import PROJECT_ROOT, atomic_write_json

    cache = Path(cache) if cache else PROJECT_ROOT / "build" / "cost" / "calibration.json"
    machine = _machine()
    if not refresh and cache.is_file():
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            saved = json.loads(cache.read_text())
            if saved["machine"] == machine:
                return Calibration(saved["rate"], saved["step_s"], saved["run_s"], saved["machine"], saved["load"])
    import torch

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    rate, step_s = {}, {}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as every run computes under fldp reproduce (pipeline.plan)
    try:
        for cls, (name, kwargs, (clients, batch)) in CALIBRATION_SHAPES.items():
            model = models.make_model(name, **kwargs)
            small = _time_steps(model, 1, 1)
            big = _time_steps(model, clients, batch)
            flops = clients * batch * model.flops_per_sample(train=True)
            step_s[cls] = small
            # a model so small that the big shape costs little more than one sample (Li's logistic
            # regression): its time is the steps', and the rate only needs to be large enough
            rate[cls] = flops / max(big - small, 0.25 * big) / 1e9
        run_s = _time_run_setup()
    finally:
        torch.set_num_threads(threads)
    cal = Calibration(rate, step_s, run_s, machine, load)
    atomic_write_json(cache, {"rate": rate, "step_s": step_s, "run_s": run_s, "machine": machine, "load": load})
    return cal


def _time_run_setup() -> float:
    """Seconds to split MNIST over 100 clients once it is in memory (what every run does before
    training; reading the files happens once per process and is left out)."""
    from . import data as D

    D.federated_dataset("mnist", 100, "iid", seed=0)
    t0 = time.perf_counter()
    D.federated_dataset("mnist", 100, "iid", seed=1)
    return time.perf_counter() - t0


def run_seconds(run: Mapping[str, Any], cal: Calibration) -> tuple[float, bool]:
    """Predicted seconds of one manifest entry (``{"work", "seconds"}``) and whether the cost model
    gave them: a run that trains (its ``work`` counts FLOPs) by the model; one that trains nothing
    (``work == {}``: an accountant, a Monte Carlo) or was stored before work was counted
    (``None``) by the seconds it took when it was computed."""
    if run.get("work"):
        return cal.seconds(run["work"]), True
    return float(run.get("seconds") or 0.0), False


def predict(runs: list, cal: Calibration) -> float:
    """Predicted seconds of ``runs`` (manifest entries), :func:`run_seconds` summed."""
    return sum(run_seconds(r, cal)[0] for r in runs)
