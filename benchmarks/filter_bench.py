"""The direction filter's sampler (the adaptive scheme, Algorithm 1 lines 8-12): cost per try, batched
against one candidate at a time, with the same numbers.

    python benchmarks/filter_bench.py [--p -3 -2 -1 0] [--clients 20] [--device cpu|cuda] [--repeats 3]

The layers are those of the paper's CNN (Sec. 6.3; :mod:`fldp.models`'s CNN 32/64/512 on MNIST:
582,026 parameters in 8 tensors).  For each p it perturbs the same updates of K clients with
:func:`fldp.papers.adaptive_noise.algorithm.perturb` and with :func:`one_at_a_time`, the sampler as
it was (each try draws one candidate per unfinished client, tests them, repeats), checks that the
noisy updates, the tries and the generators' next numbers are identical, and prints seconds per
call and microseconds per try.  On a CPU the two are identical bit for bit; on a GPU they make the
same draws and tries, and the noise can differ in the last bit of float32 (1.2e-7 on values near
0.8), because a GPU's norm of a row depends on the shape of the tensor holding it (the old sampler's
own GPU noise depends on how many clients are still drawing).  One thread unless ``--threads``.

:func:`one_at_a_time` is kept here, verbatim, as the baseline and as the reference the test
``tests/test_filter_sampler.py`` compares the batched sampler with.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Optional

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fldp import validate  # noqa: E402
from fldp.papers.adaptive_noise import algorithm as alg  # noqa: E402
from fldp.papers.adaptive_noise import theory as th  # noqa: E402

#: The paper's CNN (32 and 64 5x5 filters, 512 hidden units, 10 classes): its parameter tensors.
CNN_LAYERS = (("conv1.w", 800), ("conv1.b", 32), ("conv2.w", 51_200), ("conv2.b", 64),
              ("fc1.w", 3136 * 512), ("fc1.b", 512), ("fc2.w", 5120), ("fc2.b", 10))


def one_at_a_time(updates: torch.Tensor, *, slices, c: float, p: Optional[float], generators,
            reading: str = "noise", max_tries: int = 100_000):
    """Algorithm 1, lines 8-12, for the updates ``[K, D]`` of K clients (client k draws from
    ``generators[k]``): per layer, r = c ||u|| z / ||z||, z ~ N(0, I), redrawn (rows that
    fail only) until the angle passes theta_thres(dim, p); ``p=None`` skips the filter.
    Returns (noisy updates, tries ``[K, L]``: the draws each client needed per layer)."""
    validate.nonnegative("c", c)
    validate.choice("reading", reading, th.READINGS)
    validate.integer("max_tries", max_tries, 1)
    k = updates.shape[0]
    if len(generators) != k:
        raise ValueError(f"need one generator per client row (got {len(generators)} for {k} rows)")
    out = updates.clone()
    tries = torch.zeros(k, len(slices), dtype=torch.int64)
    for j, (name, a, b) in enumerate(slices):
        u = updates[:, a:b]
        scale = c * torch.linalg.vector_norm(u, dim=1, keepdim=True)
        thr = None if p is None else math.radians(th.threshold(dim=b - a, p=p))
        r = torch.empty_like(u)
        todo = torch.arange(k)
        while len(todo):
            if int(tries[todo, j].max()) >= max_tries:
                raise RuntimeError(
                    f"direction filter: p={p} in layer {name!r} ({b - a} parameters) needed more than "
                    f"max_tries={max_tries} draws (expected {th.expected_tries(dim=b - a, p=p, c=max(c, 1e-12), reading=reading):.3g})")
            z = torch.stack([torch.randn(b - a, generator=generators[int(i)], dtype=u.dtype,
                                         device=u.device) for i in todo])
            r[todo] = scale[todo] * z / torch.linalg.vector_norm(z, dim=1, keepdim=True)
            tries[todo, j] += 1
            if thr is None:
                break
            ref = r[todo] if reading == "noise" else u[todo] + r[todo]
            cos = torch.nn.functional.cosine_similarity(u[todo], ref, dim=1)
            ok = (torch.arccos(cos.clamp(-1, 1)) < thr) | (scale[todo, 0] == 0)
            todo = todo[~ok.cpu()]
        out[:, a:b] += r
    return out, tries


def slices(layers=CNN_LAYERS) -> list:
    """(name, start, end) of each layer in the flat vector."""
    out, a = [], 0
    for name, d in layers:
        out.append((name, a, a + d))
        a += d
    return out


def generators(k: int, seed: int, device: str) -> list:
    """One generator per client, seeded ``seed + i``."""
    return [torch.Generator(device=device).manual_seed(seed + i) for i in range(k)]


def compare(updates: torch.Tensor, *, sl, c: float, p: Optional[float], reading: str = "noise",
            seed: int = 0, max_tries: int = 100_000) -> dict:
    """Both samplers on the same updates and seeds: their timings, and whether the noisy updates,
    the tries and each generator's next draw are identical."""
    k, dev = updates.shape[0], updates.device.type
    res = {}
    for label, fn in (("one", one_at_a_time), ("batched", alg.perturb)):
        gens = generators(k, seed, dev)
        t0 = time.perf_counter()
        noisy, tries = fn(updates, slices=sl, c=c, p=p, generators=gens, reading=reading, max_tries=max_tries)
        if dev == "cuda":
            torch.cuda.synchronize()
        res[label] = dict(s=time.perf_counter() - t0, noisy=noisy, tries=tries,
                          nxt=torch.stack([torch.randn(3, generator=g, device=dev) for g in gens]))
    one, bat = res["one"], res["batched"]
    draws = bool(torch.equal(one["tries"], bat["tries"]) and torch.equal(one["nxt"], bat["nxt"]))
    return dict(same=draws and bool(torch.equal(one["noisy"], bat["noisy"])), same_draws=draws,
                max_diff=float((one["noisy"] - bat["noisy"]).abs().max()),
                tries=int(one["tries"].sum()), one_s=one["s"], batched_s=bat["s"])

def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--p", type=float, nargs="+", default=[0.0, -1.0, -2.0, -3.0])
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--c", type=float, default=15.0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    validate.integer("clients", a.clients, 1)
    torch.set_num_threads(a.threads)
    sl = slices()
    dim = sl[-1][2]
    upd = torch.randn(a.clients, dim, generator=torch.Generator().manual_seed(1)).to(a.device) * 1e-2
    print(f"# filter sampler: {a.clients} clients x {dim:,} parameters in {len(sl)} layers, c={a.c}, "
          f"device {a.device}, {torch.get_num_threads()} thread(s), torch {torch.__version__}")
    for p in a.p:
        reps = [compare(upd, sl=sl, c=a.c, p=p, seed=100 * rep) for rep in range(a.repeats)]
        one_us = statistics.median(1e6 * r["one_s"] / r["tries"] for r in reps)
        bat_us = statistics.median(1e6 * r["batched_s"] / r["tries"] for r in reps)
        exp = sum(th.expected_tries(dim=d, p=p) for _, d in CNN_LAYERS) * a.clients
        print(f"p={p:+.0f}: per try {one_us:.0f} us one at a time, {bat_us:.0f} us batched ({one_us / bat_us:.2f}x); "
              f"per call {statistics.median(r['one_s'] for r in reps):.3f} s -> "
              f"{statistics.median(r['batched_s'] for r in reps):.3f} s; tries per call "
              f"{statistics.median(r['tries'] for r in reps):.0f} (expected {exp:.0f}); "
              f"identical: {all(r['same'] for r in reps)} (same draws and tries: {all(r['same_draws'] for r in reps)}, "
              f"largest difference {max(r['max_diff'] for r in reps):.3g})")

if __name__ == "__main__":
    main()
