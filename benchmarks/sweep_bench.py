"""Time a sweep on each backend: the NbAFL Fig. 10-11 grid at quick size (wei2020/05's quick mode).

    .venv/bin/python benchmarks/sweep_bench.py [--seeds 2] [--workers 2] [--out build/bench/sweep_bench.json]

Every backend runs the same configurations (``fldp.papers.wei2020.simulations.nbafl_run``, MNIST
subsample 3,000, N = 10, T in {2, 4, 8}, K in {2, 5, 10}, eps 50-100 and non-private) into a fresh
store, so each run executes once; then the sweep is repeated on the filled store (what a notebook
re-execution costs).  Baselines: in-process with 1 thread (one core) and with torch's default
threads (both cores).  On a 2-core machine the ideal parallel time is half the 1-thread time.
Batching several runs into one engine call is not a backend of fldp.repro.sweep; ``--batched`` times
what it would gain in NbAFL's own regime (full MNIST, N = 50, the MLP): engine_bench.py's
sweep-batching study (4 runs of one round as 4 separate rounds, or as one local_train over 4x
the client rows).  Run it on a quiet machine: it prints the load average.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from fldp.repro import store as S
from fldp.repro import sweep
from fldp.papers.wei2020 import simulations as sim

READING = sim.Reading()  # 05's reading: C = 20, L = 1, lr = 0.05


def grid(seeds) -> list:
    """wei2020/05 quick mode's Fig. 10 and Fig. 11 runs (final loss only)."""
    base = dict(N=10, delta=0.01, C=READING.C, mu=READING.mu, lr=READING.lr, local_epochs=READING.local_epochs,
                batch_size=READING.batch_size, subsample=3000, max_test=1000)
    fig10 = [dict(base, eps=e, T=t, L=READING.L_for(t), K=k, eval_every=t)
             for e in (60, 80) for t in (2, 4, 8) for k in (None, 4)]
    fig11 = [dict(base, eps=e, T=4, L=READING.L_for(4), K=k, eval_every=4) for e in (None, 50, 60, 100) for k in (2, 5, 10)]
    return [dict(c, seed=s) for c in fig10 + fig11 for s in seeds]


def timed(configs, **kw) -> tuple:
    with tempfile.TemporaryDirectory() as tmp:
        st = S.RunStore(tmp)
        t0 = time.perf_counter()
        out = sweep.run_all(sim.nbafl_run, configs, store=st, progress=False, **kw)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = sweep.run_all(sim.nbafl_run, configs, store=st, progress=False, **kw)
        warm = time.perf_counter() - t0
    assert out.ran == len(configs) and again.reused == len(configs)
    return cold, warm, out.results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("build/bench/sweep_bench.json"))
    ap.add_argument("--batched", action="store_true", help="only time batched runs in NbAFL's regime (engine_bench)")
    args = ap.parse_args()
    if args.batched:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import engine_bench as eb

        sw = eb.sweep_study(eb.regime_wei(), repeats=3)
        print(f"NbAFL regime: {sw['runs']} runs as separate rounds {sw['separate']:.2f} s, as one local_train of "
              f"{sw['rows']} rows {sw['batched']:.2f} s: gain {sw['separate'] / sw['batched']:.2f}x")
        return
    import torch

    configs = grid(range(args.seeds))
    sim.dataset(10, 0, 3000, 1000)  # warm this process's data cache, as a notebook would have
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, torch {torch.__version__}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}; {len(configs)} runs (Fig. 10-11 grid, quick size)")
    rows, reference = {}, None
    cases = [("inprocess, 1 thread", dict(backend="inprocess"), 1),
             (f"inprocess, {torch.get_num_threads()} threads", dict(backend="inprocess"), torch.get_num_threads()),
             (f"processes x {args.workers}", dict(backend="processes", workers=args.workers), None),
             (f"dask local cluster x {args.workers}", dict(backend="dask", workers=args.workers), None)]
    default_threads = torch.get_num_threads()
    for label, kw, threads in cases:
        torch.set_num_threads(threads or default_threads)
        cold, warm, res = timed(configs, **kw)
        reference = reference or res
        same = res == reference
        rows[label] = {"seconds": cold, "rerun_from_store_s": warm, "same_numbers": same}
        print(f"{label:32s} {cold:7.1f} s   rerun from the store {warm:5.2f} s   same numbers: {same}")
    base = rows["inprocess, 1 thread"]["seconds"]
    for label, r in rows.items():
        r["speedup_vs_1_thread"] = base / r["seconds"]
    print("# speed-up vs 1 thread: " + ", ".join(f"{k} {v['speedup_vs_1_thread']:.2f}x" for k, v in rows.items()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"runs": len(configs), "cores": os.cpu_count(), "results": rows}, indent=1))


if __name__ == "__main__":
    main()
