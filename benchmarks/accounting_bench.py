"""Time the realised-spend accounting of long runs (``fldp.accounting.spent``).

    .venv/bin/python benchmarks/accounting_bench.py [--repeats 5]

The run of ``tests/test_accounting.py::test_spent_100_clients_1000_rounds``, at several
lengths: N = 100 clients, K = 10 drawn at random each round (``random.Random(0)``), Gaussian
uploads of noise multiplier 1 and a Gaussian broadcast of multiplier 20 every round; the whole
run accounted per client (PLD, delta = 1e-5) and the worst client reported.  Clients with the
same events are accounted once, so the time grows with the number of distinct upload counts,
not with N.  Printed: one line per run length with the best and median of ``--repeats`` calls
(and the first call, before dp_accounting's own caches are warm), and the resulting eps, which
the test checks against the exact Gaussian profile.  The test asserts the value, never the time.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from fldp import accounting as A

DELTA = 1e-5


def records(rounds: int, clients: int = 100, per_round: int = 10) -> list:
    rng = random.Random(0)
    g, d = A.gaussian(noise_multiplier=1.0), A.gaussian(noise_multiplier=20.0)
    return [A.PrivacyRecord(round=t, clients=tuple(rng.sample(range(clients), per_round)),
                            uplink=(g,) * per_round, downlink=d) for t in range(1, rounds + 1)]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, nargs="+", default=[100, 1000, 10000])
    args = ap.parse_args(argv)
    try:
        la = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        la = "n/a"
    print(f"# fldp accounting benchmark  {time.strftime('%Y-%m-%d %H:%M')}  repeats {args.repeats}, load avg {la}")
    print(f"{'rounds':>7} {'uploads':>8} {'distinct':>8} {'first s':>8} {'best s':>8} {'median s':>8}  eps (worst client)")
    for rounds in args.rounds:
        recs = records(rounds)
        times = []
        for _ in range(1 + args.repeats):
            t0 = time.perf_counter()
            s = A.spent(recs, delta=DELTA, clients=range(100))
            times.append(time.perf_counter() - t0)
        warm = times[1:] or times
        print(f"{rounds:>7} {sum(s.uploads.values()):>8} {len(set(s.uploads.values())):>8} {times[0]:>8.4f} "
              f"{min(warm):>8.4f} {statistics.median(warm):>8.4f}  {s.eps:.6g} (client {s.worst_client}, "
              f"{s.uploads[s.worst_client]} uploads)", flush=True)


if __name__ == "__main__":
    main()
