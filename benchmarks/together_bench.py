"""Runs trained together against the same runs alone (``fldp.engine.run_many`` through
:func:`fldp.papers.zhou.experiments.fedsgd_dpc_runs`), in zhou/04's own settings, on one thread.

    .venv/bin/python benchmarks/together_bench.py                 # the two groups below, ~3 min
    .venv/bin/python benchmarks/together_bench.py --rounds 20     # shorter runs

Each group is a notebook's setting over its seeds and budgets (what ``fldp.repro.sweep`` hands a
worker as one job); the script times the runs one by one (``fedsgd_dpc_run``), then the group
together (``fedsgd_dpc_runs``), interleaved, best of ``--repeats``, checks that every result is
the same, and prints the CPU seconds per run and whether the wide products were taken
(``fldp.models.RUNS_TOGETHER``).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import torch

from fldp import counting, models
from fldp.papers.zhou import experiments as ex

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine_bench import roofline_gflops  # noqa: E402

#: zhou/04's heaviest setting families (its cost record): Laplace, every row (q = 1), b = 5 of
#: N = 10 clients of 6,000 rows; Gaussian, Poisson rate q = 0.01, b = 10, 12,000 rows.
GROUPS = {
    "laplace b=5 (full batch), 3 eps x 5 seeds": [
        dict(mechanism="laplace", eps=e, b=5, xi=300.0, seed=s) for e in (1.0, 5.0, 10.0) for s in range(5)],
    "gaussian b=10 (Poisson q=0.01), 3 eps x 5 seeds": [
        dict(mechanism="gaussian", eps=e, b=10, q=0.01, xi=10.0, rule="accountant", subsample=12000, seed=s)
        for e in (0.1, 0.5, 1.0) for s in range(5)],
}


def cpu(fn):
    """(CPU seconds, counted GFLOP, result) of ``fn()``."""
    with counting.measure() as m:
        out = fn()
    return m.cpu_s, counting.total_flops(m.work) / 1e9, out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=50, help="T of every run (zhou/04: 50-500)")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    roof = roofline_gflops(3)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, torch {torch.__version__}, 1 thread, T = {args.rounds}, "
          f"one-thread roofline {roof:.1f} GFLOP/s")
    for name, group in GROUPS.items():
        configs = [dict(c, T=args.rounds, eval_every=args.rounds) for c in group]
        ex.fedsgd_dpc_runs(configs)  # data, caches and every calibration warm, as in a worker
        alone, together = [], []
        for _ in range(args.repeats):
            a, flops, ra = cpu(lambda: [ex.fedsgd_dpc_run(**c) for c in configs])
            b, _, rb = cpu(lambda: ex.fedsgd_dpc_runs(configs))
            alone.append(a), together.append(b)
            assert ra == rb, "a run trained together differs from the run alone"
        a, b = min(alone) / len(configs), min(together) / len(configs)
        rate = lambda s: flops / len(configs) / s  # noqa: E731  (the same counted work either way)
        wide = sorted({v for k, v in models.RUNS_TOGETHER.items()})
        print(f"{name}: alone {a:.3f} s a run ({rate(a):.1f} GFLOP/s, {100 * rate(a) / roof:.0f}% of roofline), "
              f"together {b:.3f} s a run ({rate(b):.1f} GFLOP/s, {100 * rate(b) / roof:.0f}%), {a / b:.2f}x; "
              f"same numbers; wide products taken: {wide}")


if __name__ == "__main__":
    main()
