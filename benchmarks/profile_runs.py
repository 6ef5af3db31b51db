"""Where one typical run of each heavy notebook spends its CPU, on one thread.

    python benchmarks/profile_runs.py [--only zhou/04_experiments ...] [--pick median|max] [--markdown]

For each notebook (default: the five heaviest, :data:`HEAVY`) the run is taken from its cost record
(``results/costs/<paper>/<notebook>.json``, written by the last full reproduction): the run of the
notebook's main function whose recorded CPU time is the median (``--pick max``: the most
expensive).  It is called again here, exactly as the notebook's sweep calls it (same function, same
configuration, so the same numbers), under :mod:`cProfile` with ``torch.set_num_threads(1)`` (as
``fldp reproduce``'s workers run), after loading its data once outside the profile (a worker holds
the data cache).  The time is split by where it is entered from outside (a function's time counted
once, in the first category of :data:`CATEGORIES` whose code it is in): gathering each step's batch
(``FederatedData.gather``), data preparation (the rest of ``fldp.data``: loading and splitting),
accountant calls (``fldp.accounting``, dp_accounting), evaluation (``engine.evaluate``), local training
(``engine.local_train``), the rest of the round (clipping, noise, aggregation: ``engine.round_step``
outside training), and the rest of the run.  Local training is split again into time inside torch's
operators (C++ functions called from Python) and the Python around them (the engine's, the model's
and autograd's Python code): per-step overhead.  The hook's own cost that lands between two events
is measured on empty calls (:func:`hook_leak`, about 0.6 us an event here) and taken off each share;
"accounted / plain" compares what is left with the unprofiled run's time (near 1: the shares
describe the plain run; above 1: the Python share is still an upper bound).

Why a ``sys.setprofile`` hook and not cProfile or ``torch.profiler``: the question is which layer
of the project (data, accountant, evaluation, training) a run's time goes to, and Python against
operators within training; cProfile keeps only caller edges (a function shared by training and
evaluation cannot be attributed), and ``torch.profiler`` sees only operators (``cnn_profile.py``
uses it for the convolution's operators).
"""
from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
#: The heavy notebooks of the plan (issue: the whole book in a third of the work).  wei2020/05 has no
#: cost record until its recomputation ends; 07 runs the same function (``simulations.nbafl_run``).
HEAVY = ("zhou/04_experiments", "li2021/03_experiments", "benchmark/02_accuracy", "adaptive_noise/03_utility",
         "wei2020/07_effect_regime")
#: A run whose recorded CPU time is longer is profiled once, without a warm-up or a plain timing.
LONG_S = 30.0
#: (name, path fragments or function names): a profiled function belongs to the first that matches.
CATEGORIES = (
    ("batch gathering", ("federated.py:gather", "federated.py:_rows", "federated.py:_span",
                         "federated.py:padded")),
    ("data preparation", ("fldp/data/",)),
    ("accountant", ("fldp/accounting.py", "dp_accounting/")),
    ("evaluation", ("engine.py:evaluate",)),
    ("local training", ("engine.py:local_train",)),
    ("rest of the round", ("engine.py:round_step",)),
)


def _category_of_code(code) -> str | None:
    n = f"{code.co_filename}:{code.co_name}"
    for cat, keys in CATEGORIES:
        if any(k in n for k in keys):
            return cat
    return None


def _category_of_c(fn) -> str | None:
    module = getattr(fn, "__module__", None) or ""
    return "accountant" if module.startswith("dp_accounting") else None


class StackProfile:
    """Exclusive time by (category of the nearest categorised frame on the stack, operator or Python):
    a ``sys.setprofile`` hook that keeps the call stack, so a function's time goes to where it was
    called from (cProfile keeps only caller edges, which cannot tell whose call a shared function's
    time belongs to)."""

    def __init__(self):
        self.times: dict[tuple, float] = {}
        self.events: dict[tuple, int] = {}
        self._stack: list[tuple] = []  # (category, builtin)
        self._last = 0.0

    def _charge(self, now: float) -> None:
        top = self._stack[-1] if self._stack else ("outside", False)
        self.times[top] = self.times.get(top, 0.0) + now - self._last
        self.events[top] = self.events.get(top, 0) + 1
        self._last = now

    def corrected(self, leak: float) -> dict[tuple, float]:
        """The times less the hook's cost that still lands between two events (``leak`` seconds per
        event, :func:`hook_leak`), never below zero."""
        return {k: max(0.0, t - leak * self.events.get(k, 0)) for k, t in self.times.items()}

    def __call__(self, frame, event, arg):
        now = time.perf_counter()
        self._charge(now)
        outer = self._stack[-1][0] if self._stack else "other"
        if event == "call":
            own = _category_of_code(frame.f_code)
            self._stack.append((own or outer, False))
        elif event == "c_call":
            own = _category_of_c(arg)
            self._stack.append((own or outer, True))
        elif event in ("return", "c_return", "c_exception") and self._stack:
            self._stack.pop()
        self._last = time.perf_counter()  # the hook's own time is charged to no one

    def run(self, fn, *args, **kwargs):
        self._last = time.perf_counter()
        sys.setprofile(self)
        try:
            return fn(*args, **kwargs)
        finally:
            sys.setprofile(None)


def typical_run(key: str, pick: str = "median") -> dict:
    """The run of notebook ``key`` (``paper/notebook``) to profile: from its cost record, of its main
    function (the one with the most CPU), the median (or most expensive) by recorded CPU time."""
    record = json.loads((ROOT / "results" / "costs" / f"{key}.json").read_text())
    runs = [r for r in record["runs"] if _cpu(r)]
    if not runs:
        raise SystemExit(f"{key}: its cost record lists no timed runs")
    by_fn: dict[str, float] = {}
    for r in runs:
        by_fn[r["fn"]] = by_fn.get(r["fn"], 0.0) + _cpu(r)
    fn = max(by_fn, key=by_fn.get)
    mine = sorted((r for r in runs if r["fn"] == fn), key=_cpu)
    run = mine[-1] if pick == "max" else mine[len(mine) // 2]
    return {"key": key, "fn": fn, "config": run["config"], "recorded_cpu_s": _cpu(run), "runs": len(mine),
            "fn_cpu_s": by_fn[fn], "median_cpu_s": statistics.median(_cpu(r) for r in mine)}


def _cpu(run: dict) -> float:
    """A recorded run's CPU seconds (wall seconds where CPU was not kept)."""
    return float(run.get("cpu_s") or run.get("seconds") or 0.0)


def _call(fn_path: str, config: dict):
    module, _, name = fn_path.partition(":")
    fn = getattr(importlib.import_module(module), name)
    fn = getattr(fn, "__wrapped__", fn)
    return fn(**config)


def hook_leak(calls: int = 200_000) -> float:
    """Seconds of the hook's own cost charged per event: a loop of empty Python calls timed with the
    hook (what it charges) against without (the best of three each)."""
    def f():
        return None

    def loop():
        for _ in range(calls):
            f()

    plain = min(_timed(loop) for _ in range(3))
    charged = []
    for _ in range(3):
        prof = StackProfile()
        prof.run(loop)
        charged.append((sum(prof.times.values()), sum(prof.events.values())))
    total, events = min(charged)
    return max(0.0, (total - plain) / events)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def profile_run(key: str, pick: str = "median", leak: float | None = None) -> dict:
    torch.set_num_threads(1)
    run = typical_run(key, pick)
    if run["recorded_cpu_s"] <= LONG_S:
        _call(run["fn"], run["config"])  # warm: data loaded and cached, kernels chosen (as in a worker)
        timed = []
        for _ in range(3):  # the best of three: other processes on the cores only slow a run down
            t0, c0 = time.perf_counter(), time.process_time()
            _call(run["fn"], run["config"])
            timed.append((time.perf_counter() - t0, time.process_time() - c0))
        plain_s, plain_cpu = min(timed)
    else:  # a long run is profiled once, cold (its data preparation included), beside its recorded time
        plain_s = plain_cpu = run["recorded_cpu_s"]
    prof = StackProfile()
    t0 = time.perf_counter()
    prof.run(_call, run["fn"], run["config"])
    profiled_s = time.perf_counter() - t0
    times = prof.corrected(hook_leak() if leak is None else leak)
    total = sum(times.values())
    cats = {c: sum(t for (cat, _), t in times.items() if cat == c) for c, _ in CATEGORIES}
    return {**run, "plain_s": plain_s, "plain_cpu_s": plain_cpu, "profiled_s": profiled_s, "total": total,
            "shares": {c: cats[c] / total for c in cats},
            "training_ops": times.get(("local training", True), 0.0) / total,
            "training_python": times.get(("local training", False), 0.0) / total,
            "accounted_s": total}


def _row(r: dict) -> list[str]:
    s = r["shares"]
    rest = 1 - sum(s.values())
    here = "-" if r["recorded_cpu_s"] > LONG_S else f"{r['plain_cpu_s']:.2f}"  # a long run is not re-timed
    return [r["key"], r["fn"].split(":")[-1], f"{r['runs']}", f"{r['median_cpu_s']:.2f}", here,
            f"{100 * s['local training']:.0f} ({100 * r['training_ops']:.0f} / {100 * r['training_python']:.0f})",
            f"{100 * s['batch gathering']:.0f}", f"{100 * s['rest of the round']:.0f}", f"{100 * s['evaluation']:.0f}",
            f"{100 * s['accountant']:.0f}", f"{100 * s['data preparation']:.0f}", f"{100 * rest:.0f}", f"{r['profiled_s'] / r['plain_s']:.1f}x",
            f"{r['accounted_s'] / r['plain_s']:.2f}"]


HEAD = ["notebook", "run", "runs", "median CPU s (record)", "CPU s here", "local training % (ops / Python)",
        "batch gathering %", "rest of round %", "evaluation %", "accountant %", "data %", "other %", "profiled / plain time", "accounted / plain time"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=list(HEAVY), help="notebooks (paper/notebook)")
    ap.add_argument("--pick", choices=("median", "max"), default="median")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args(argv)
    rows = []
    for key in args.only:
        r = profile_run(key, args.pick)
        rows.append(_row(r))
        print(f"# {key}: {r['fn']} {json.dumps(r['config'], sort_keys=True)}", file=sys.stderr, flush=True)
        print("# " + " | ".join(_row(r)), file=sys.stderr, flush=True)
    if args.markdown:
        print("| " + " | ".join(HEAD) + " |")
        print("|" + "---|" * len(HEAD))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        for row in rows:
            print(", ".join(f"{h}: {v}" for h, v in zip(HEAD, row)))


if __name__ == "__main__":
    main()
