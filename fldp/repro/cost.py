"""What a reproduction costs: a cost model calibrated on this machine, from which ``fldp
reproduce`` predicts its time.

The engine counts its work as it trains (:mod:`fldp.counting`), and the run store keeps that count
and each run's CPU seconds with the run.  **The model**: a run's time is ``sum over models of FLOPs
/ rate + steps x step_s + elements x elem_s``, plus ``run_s`` (the data split); :func:`calibrate`
measures the constants per model class by timing two-round engine runs in CPU seconds at three
shapes (one client of one sample: ``step_s``; many clients of one sample: ``elem_s``; the papers'
shape: ``rate``), about 15 s on one thread, cached under ``build/cost/`` per host, torch and fldp
version.  **The prediction** (:func:`run_seconds`): a run's own measured CPU time, moved to this
machine by the model's ratio; the model alone only where no CPU time was kept, since the FLOP
count misses what a run does outside the engine (an accountant calibrating its noise, a Hessian
estimate).  Why count rather than profile: :mod:`fldp.counting`.
"""
from __future__ import annotations

import contextlib
import json
import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from fldp.counting import measure

__all__ = ["Calibration", "calibrate", "cached_calibration", "run_seconds", "predict", "CALIBRATION_SHAPES"]


# -- calibration ------------------------------------------------------------------------------
#: Per model class: the model, and the (clients, batch) shape timed for its rate (the papers'
#: typical one) and for its fixed cost per step (one client, one sample).
CALIBRATION_SHAPES = {
    "MLP": ("mlp", {}, (50, 50)),                                   # Wei et al., Sec. VI
    "CNN": ("cnn", {"channels": (8, 16), "hidden": 64}, (15, 128)),  # adaptive scheme, Sec. 7.1
    "MultinomialLogReg": ("logreg", {}, (10, 600)),                 # Zhou et al., Sec. VI
    "BinaryLogReg": ("binary_logreg", {"in_features": 105}, (50, 10)),  # Li et al., Sec. 4.1
}


CALIBRATION_VERSION = 5  # bump when calibrate() measures differently (a cached one is then stale)


@dataclass
class Calibration:
    """Measured on one machine, per model class: ``rate`` GFLOP/s, ``step_s`` seconds per step and
    ``elem_s`` seconds per parameter element worked through; ``run_s`` seconds per run."""

    rate: dict
    step_s: dict
    elem_s: dict
    run_s: float
    machine: dict
    load: float = 0.0  # the 1-minute load average when it was measured (a busy machine: pessimistic)

    def as_dict(self) -> dict:
        return {"rate": self.rate, "step_s": self.step_s, "elem_s": self.elem_s, "run_s": self.run_s,
                "machine": self.machine, "load": self.load}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Calibration":
        return cls(d["rate"], d["step_s"], d["elem_s"], d["run_s"], d["machine"], d.get("load", 0.0))

    def seconds(self, work: Optional[Mapping[str, Mapping[str, int]]]) -> float:
        """Predicted seconds of a run that did ``work`` (models not calibrated: the MLP's rate)."""
        total = self.run_s
        for key, w in (work or {}).items():
            cls = key.split("/")[0]
            rate, step = self.rate.get(cls, self.rate.get("MLP", 50.0)), self.step_s.get(cls, 1e-3)
            elem = self.elem_s.get(cls, self.elem_s.get("MLP", 1e-9))
            total += w.get("flops", 0) / (rate * 1e9) + w.get("steps", 0) * step + w.get("elems", 0) * elem
        return total


def _machine() -> dict:
    import torch

    from fldp import __version__

    return {"calibration": CALIBRATION_VERSION, "host": platform.node(), "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count(), "threads": 1, "torch": torch.__version__,
            "fldp": __version__}


def _time_rounds(model, clients: int, batch: int, test_rows: int, steps: int = 5, rounds: int = 2,
                 repeats: int = 2) -> tuple[float, dict]:
    """Seconds (CPU, best of ``repeats``) and counted work of :func:`fldp.engine.run`: ``rounds``
    rounds of ``clients`` clients, each ``steps`` local steps of ``batch`` samples, evaluated each
    round on ``test_rows`` test rows: local training, aggregation and evaluation, as in a run."""
    import torch

    from fldp import data as D, engine

    g = torch.Generator().manual_seed(0)
    d = _in_features(model)
    xs = [torch.rand(batch * steps, d, generator=g) for _ in range(clients)]
    ys = [torch.randint(0, model.num_classes, (batch * steps,), generator=g) for _ in range(clients)]
    x_test = torch.rand(test_rows, d, generator=g)
    fd = D.FederatedData.from_clients(xs, ys, x_test, torch.randint(0, model.num_classes, (test_rows,), generator=g))
    cfg = engine.FLConfig(num_rounds=rounds, local_steps=steps, batch_size=batch, lr=0.01, sampling="fixed",
                          eval_train=False)
    engine.run(model, fd, engine.with_config(cfg, num_rounds=1))  # warm-up
    best, work = float("inf"), {}
    for _ in range(repeats):
        with measure() as m:
            engine.run(model, fd, cfg)
        if m.cpu_s < best:
            best, work = m.cpu_s, m.work
    return best, work


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
    from fldp import models
    from fldp.repro.paths import PROJECT_ROOT, atomic_write_json

    cache = Path(cache) if cache else PROJECT_ROOT / "build" / "cost" / "calibration.json"
    machine = _machine()
    cached = None if refresh else cached_calibration(cache)
    if cached is not None:
        return cached
    from fldp import seeding

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    rate, step_s, elem_s = {}, {}, {}
    with seeding.one_thread():  # as every run computes under fldp reproduce (fldp.repro.chapters.plan)
        for cls, (name, kwargs, (clients, batch)) in CALIBRATION_SHAPES.items():
            model = models.make_model(name, **kwargs)
            small, w_small = _time_rounds(model, 1, 1, test_rows=1)
            wide, w_wide = _time_rounds(model, clients, 1, test_rows=1)
            big, w_big = _time_rounds(model, clients, batch, test_rows=1000)
            (ws,), (ww,), (wb,) = w_small.values(), w_wide.values(), w_big.values()
            step_s[cls] = small / ws["steps"]  # one client, one sample: the fixed cost of a step
            # many clients, one sample each: the element-wise work on their parameter rows
            elem_s[cls] = max(wide - ww["steps"] * step_s[cls], 0.0) / ww["elems"]
            # FLOPs over the time the rest leaves; a model so small that the big shape costs little
            # more than the others (Li's logistic regression): its time is the steps' and elements'
            rest = wb["steps"] * step_s[cls] + wb["elems"] * elem_s[cls]
            rate[cls] = wb["flops"] / max(big - rest, 0.25 * big) / 1e9
        run_s = _time_run_setup()
    cal = Calibration(rate, step_s, elem_s, run_s, machine, load)
    atomic_write_json(cache, cal.as_dict())
    return cal


def _time_run_setup() -> float:
    """Seconds to split MNIST over 100 clients once it is in memory (what every run does before
    training; reading the files happens once per process and is left out)."""
    from fldp import data as D

    D.federated_dataset("mnist", 100, "iid", seed=0)
    t0 = time.perf_counter()
    D.federated_dataset("mnist", 100, "iid", seed=1)
    return time.perf_counter() - t0


def run_seconds(run: Mapping[str, Any], cal: Calibration,
                measured_on: Optional[Calibration] = None) -> tuple[float, str]:
    """Predicted seconds of one manifest entry (``{"work", "cpu_s", "seconds"}``) on the machine
    of ``cal``, and how they were predicted:

    * ``"measured"``: the run's CPU seconds when it was computed (one thread, so other processes on
      the cores did not inflate them), moved to this machine by the cost model when the run trains
      and the calibration of the machine that measured it is known (``measured_on``): times
      ``cal.seconds(work) / measured_on.seconds(work)``.  It keeps what the FLOP count misses:
      an accountant calibrating the noise inside a run, a Hessian estimate;
    * ``"model"``: a run whose work was counted but not its CPU time, by the cost model;
    * ``"last"``: a run stored before either was kept, by the wall seconds it took."""
    cpu, work = run.get("cpu_s"), run.get("work")
    if cpu:
        if work and measured_on is not None:
            return float(cpu) * cal.seconds(work) / measured_on.seconds(work), "measured"
        return float(cpu), "measured"
    if work:
        return cal.seconds(work), "model"
    return float(run.get("seconds") or 0.0), "last"


def cached_calibration(cache: Optional[Path] = None) -> Optional[Calibration]:
    """This machine's calibration from ``cache`` (default ``build/cost/calibration.json``, where
    :func:`calibrate` writes it), or None when absent, unreadable or measured on another machine,
    torch or fldp version; measures nothing.  A notebook's cost record keeps it, so that its runs'
    times can be moved to another machine."""
    from fldp.repro.paths import PROJECT_ROOT

    cache = Path(cache) if cache else PROJECT_ROOT / "build" / "cost" / "calibration.json"
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        saved = json.loads(cache.read_text())
        if saved["machine"] == _machine():
            return Calibration.from_dict(saved)
    return None


def predict(runs: list, cal: Calibration, measured_on: Optional[Calibration] = None) -> float:
    """Predicted seconds of ``runs`` (manifest entries), :func:`run_seconds` summed."""
    return sum(run_seconds(r, cal, measured_on)[0] for r in runs)
