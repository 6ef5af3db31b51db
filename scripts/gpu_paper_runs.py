"""Compute on a GPU the paper-size runs of adaptive_noise/03's Fig. 5 and Table 1, the runs the
chapter asks for with ``paper_size=True`` (``--more``: those of Figs. 6 and 7) (the CNN 32/64/512, all of MNIST over N = 100 clients,
Dirichlet(1), K = 20, 50 rounds of 5 local epochs of 128, lr 0.1, seeds 0-2, ``device="cuda"``):
regular FL, ours c = 5 / 10 / 15 (p = 0), the DP baseline at eps = 15 / 20 / 30 with its clip per
round and lagged.  Seed by seed, each through a run store under ``--store`` (the same keys as the
chapter's sweep), starting no run after ``--budget`` seconds; then the store as a tar file
(``--tar``), to bring back and keep with ``fldp store checkpoint``.

    python scripts/gpu_paper_runs.py --store /tmp/gpu_runs --budget 420 --tar $OUT/gpu_runs.tar

The numbers of a run on a GPU are not a CPU's (float32 sums in another order): these runs carry
``device="cuda"`` in their configuration, so they are other runs than the CPU chapter's.
"""
from __future__ import annotations

import argparse
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fldp.papers.adaptive_noise import experiments as ex  # noqa: E402
from fldp.repro.store import RunStore  # noqa: E402

COMMON = dict(N=100, alpha=1.0, subsample=None, max_test=None, channels=[32, 64], hidden=512, K=20, rounds=50,
              local_epochs=5, batch_size=128, lr=0.1, eval_every=1, device="cuda")
DP = {"local": dict(dp="local"), "lagged": dict(dp="local", dp_clip="lagged")}
SPECS = {"regular": dict(scheme="regular"),
         **{f"ours c={c:g}": dict(scheme="ours", c=c, p=0.0) for c in (5, 10, 15)},
         **{f"DP {d} eps={e:g}": dict(scheme="dp", eps=e, **DP[d]) for d in DP for e in (15, 20, 30)}}
#: Fig. 6 (ours c = 15 at p = 2 and -2; p = 0 is Table 1's) and Fig. 7 (dropout 20 and 40 %, ours c = 15
#: against DP eps = 30): ``--figs 6 7``.
MORE = {f"ours c=15 p={q:g}": dict(scheme="ours", c=15, p=float(q)) for q in (2, -2)}
MORE.update({k: v for d in (0.2, 0.4) for k, v in ((f"ours c=15 drop={d:g}", dict(scheme="ours", c=15, p=0.0, dropout=d)),
                                                   (f"DP local eps=30 drop={d:g}", dict(scheme="dp", eps=30, dp="local", dropout=d)))})


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True)
    ap.add_argument("--budget", type=float, default=420.0, help="start no run after this many seconds")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--tar", default=None)
    ap.add_argument("--more", action="store_true", help="Figs. 6 and 7's runs instead of Table 1's")
    a = ap.parse_args(argv)
    store, t0, done = RunStore(a.store), time.perf_counter(), 0
    for seed in a.seeds:
        for name, spec in (MORE if a.more else SPECS).items():
            if time.perf_counter() - t0 > a.budget:
                break
            cfg = ex.full_config(ex.utility_run, **{**COMMON, **spec, "seed": seed})
            t1 = time.perf_counter()
            out = store.run(ex.utility_run, cfg)
            done += 1
            print(f"seed {seed} {name:18s} final acc {out['acc'][-1]:.4f} diverged_at {out['diverged_at']} "
                  f"{time.perf_counter() - t1:.1f} s", flush=True)
    print(f"{done} run(s) in {time.perf_counter() - t0:.0f} s", flush=True)
    if a.tar:
        with tarfile.open(a.tar, "w") as tar:
            tar.add(a.store, arcname="runs")


if __name__ == "__main__":
    main()
