"""Paper-size rounds on a GPU, beside the same rounds on the CPU and beside a per-client loop.

    python benchmarks/gpu_bench.py [--device cuda] [--cpu-threads 16] [--rounds 2] [--quick]

Three measurements, each printed as one line:

* ``adaptive``: a round of the adaptive CLT noise scheme at the paper's size (Sec. 6.3: the CNN
  32/64/512, 582,026 parameters; all of MNIST over N = 100 clients, Dirichlet(1); K = 20, 5 local
  epochs of batches of 128, lr 0.1; noise c = 15 through the direction filter at p = 0): seconds
  per round with every client of the round in one program (the engine's default on a GPU,
  :func:`fldp.engine.client_chunk`), with one client at a time (``client_chunk=1``, a per-client
  loop), and on the CPU with ``--cpu-threads`` threads.
* ``nbafl``: a round of NbAFL at the paper's size (Wei et al. 2020, Sec. VI: the MLP on all of
  MNIST over N = 50 clients, 1 local epoch of batches of 50, eps = 60, C = 20), likewise.
* ``filter``: one client's filtered noise vector for the paper's CNN at p = -3 (about 741 tries
  per layer): microseconds per try, drawing one candidate at a time against the batched sampler
  (``benchmarks/filter_bench.py``), with a check that both give identical numbers.

Rounds are timed after one warm-up round, with the device synchronised; ``--quick`` uses a
tenth of MNIST and 2 local epochs (a smoke test of the script, not a measurement).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fldp import engine, models  # noqa: E402
from fldp.papers.adaptive_noise import algorithm as alg  # noqa: E402
from fldp.papers.adaptive_noise import experiments as ada  # noqa: E402
from fldp.papers.wei2020 import algorithm as nbafl  # noqa: E402
from fldp.papers.wei2020 import simulations as wsim  # noqa: E402


def _sync(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def per_round(make, device: str, rounds: int) -> float:
    """Seconds per round of ``make(rounds)`` (a function that trains ``rounds`` rounds), after
    one warm-up round."""
    make(1)
    _sync(device)
    t0 = time.perf_counter()
    make(rounds)
    _sync(device)
    return (time.perf_counter() - t0) / rounds


def adaptive(device: str, rounds: int, quick: bool, chunk=None) -> float:
    fd = ada.dataset(100, 1.0, 0, subsample=6000 if quick else None, max_test=1000)
    model = models.CNN(channels=(32, 64), hidden=512)

    def make(r):
        cfg = alg.config(scheme="ours", rounds=r, K=20, local_epochs=2 if quick else alg.EPOCHS, device=device,
                         eval_every=r, client_chunk=chunk)
        engine.run(model, fd, cfg, **alg.hooks(scheme="ours", c=15.0, p=0.0))
    return per_round(make, device, rounds)


def nbafl_round(device: str, rounds: int, quick: bool, chunk=None) -> float:
    fd = wsim.dataset(50, 0, subsample=6000 if quick else None, max_test=1000)

    def make(r):  # nbafl.run's configuration (algorithm.run), with the engine's client chunk set
        cal = nbafl.calibrate(eps=60.0, delta=0.01, C=20.0, L=1, N=fd.num_clients, T=r, m=fd.m)
        cfg = engine.FLConfig(num_rounds=r, local_epochs=1, batch_size=50, lr=0.05, mu=0.01, clip=20.0,
                              clip_mode="params", eval_every=r, device=device, client_chunk=chunk)
        engine.run(models.MLP(), fd, cfg, uplink=engine.gaussian_uplink(cal.sigma_U, sensitivity=cal.sensitivity_U),
                   downlink=engine.gaussian_downlink(cal.sigma_D, cal.sensitivity_D))
    return per_round(make, device, rounds)


def filter_line(device: str, p: float = -3.0) -> str:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import filter_bench as fb

    upd = torch.randn(1, fb.slices()[-1][2], generator=torch.Generator().manual_seed(1)).to(device) * 1e-2
    fb.compare(upd, sl=fb.slices(), c=15.0, p=-1.0)          # warm-up
    r = fb.compare(upd, sl=fb.slices(), c=15.0, p=p, seed=3)
    return (f"filter: one CNN noise vector at p={p:g} on {device}: {r['tries']} tries; one at a time {r['one_s']:.2f} s "
            f"({1e6 * r['one_s'] / r['tries']:.0f} us a try), batched {r['batched_s']:.2f} s "
            f"({1e6 * r['batched_s'] / r['tries']:.0f} us a try), {r['one_s'] / r['batched_s']:.1f}x; "
            f"identical: {r['same']} (same draws and tries: {r['same_draws']}, largest difference {r['max_diff']:.3g})")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--cpu-threads", type=int, default=0, help="also time the rounds on the CPU (0: skip)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--filter-p", type=float, default=-3.0, help="the filter's p for the sampler's line")
    a = ap.parse_args(argv)
    dev = a.device
    name = torch.cuda.get_device_name() if torch.device(dev).type == "cuda" else "CPU"
    print(f"# paper-size rounds on {dev} ({name}), torch {torch.__version__}, {a.rounds} timed round(s)"
          + (" [quick: a smoke test, not a measurement]" if a.quick else ""), flush=True)
    for label, fn in (("adaptive", adaptive), ("nbafl", nbafl_round)):
        one = fn(dev, a.rounds, a.quick)
        loop = fn(dev, a.rounds, a.quick, chunk=1)
        line = f"{label}: {one:.3f} s a round on {dev} (every client in one program), {loop:.3f} s one client at a time"
        if a.cpu_threads:
            torch.set_num_threads(a.cpu_threads)
            cpu = fn("cpu", a.rounds, a.quick)
            line += f"; CPU ({a.cpu_threads} threads) {cpu:.3f} s, {cpu / one:.1f}x"
        print(line, flush=True)
    print(filter_line(dev, a.filter_p), flush=True)


if __name__ == "__main__":
    main()
