"""Where the time of the adaptive scheme's CNN round goes (engine_bench regime 5), by operator.

    python benchmarks/cnn_profile.py [--rounds R] [--threads T]

Profiles one round of the engine (``engine.round_step``: all K clients as one grouped convolution)
and one round of the naive per-client loop with ``torch.profiler`` (CPU), after a warm-up round,
and prints each one's top operators by self CPU time, and the share of convolution (forward and
backward), pooling, the fully connected layers and the rest.  Same shapes, same data, same batches
as ``benchmarks/engine_bench.py --regime 5``.
"""
from __future__ import annotations

import argparse
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_bench as eb  # noqa: E402

GROUPS = {"convolution": ("conv", "mkldnn_convolution", "slow_conv", "im2col", "col2im", "thnn_conv"),
          "pooling": ("max_pool", "pool"), "fully connected": ("addmm", "baddbmm", "bmm", "mm", "matmul", "linear")}


def group_of(name: str) -> str:
    low = name.lower()
    for group, keys in GROUPS.items():
        if any(k in low for k in keys):
            return group
    return "rest"


def profiled(fn, rounds: int):
    fn(1)  # warm-up (allocations, kernel choice)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for t in range(2, 2 + rounds):
            fn(t)
    return prof.key_averages()


def report(label: str, events, rounds: int, top: int = 8) -> None:
    rows = sorted(((e.key, e.self_cpu_time_total) for e in events), key=lambda r: -r[1])
    total = sum(s for _, s in rows)
    print(f"{label}: {total / 1e6 / rounds:.3f} s of self CPU time per round")
    shares = {}
    for name, s in rows:
        shares[group_of(name)] = shares.get(group_of(name), 0) + s
    print("  by kind: " + ", ".join(f"{g} {100 * s / total:.0f}%" for g, s in sorted(shares.items(), key=lambda r: -r[1])))
    for name, s in rows[:top]:
        print(f"  {100 * s / total:5.1f}%  {s / 1e6 / rounds:7.3f} s  {name}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2, help="profiled rounds after one warm-up (default 2)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    rg = eb.regime_cnn()
    w = eb.start_params(rg)
    print(f"# regime 5 ({rg.name}), torch {torch.__version__}, threads {torch.get_num_threads()}, {eb.load()}")
    report("engine (grouped convolution over the K clients)", profiled(lambda t: eb.engine_round(rg, w, t), args.rounds),
           args.rounds)
    report("naive loop (one nn.Module per client)", profiled(lambda t: eb.naive_round(rg, w, t), args.rounds),
           args.rounds)


if __name__ == "__main__":
    main()
