"""The adaptive scheme's batched filter sampler (``algorithm.perturb``) against the sampler that
draws and tests one candidate at a time (``benchmarks/filter_bench.one_at_a_time``, the code as it
was): the same noise, the same tries and the same next numbers of every client's generator."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from fldp.papers.adaptive_noise import algorithm as alg
from fldp.seeding import one_thread
from helpers import load_script

bench = load_script(Path(__file__).resolve().parents[1] / "benchmarks" / "filter_bench.py", "filter_bench")

# layers below 16 numbers (torch's serial normal path), not a multiple of 16 (a refilled tail
# block), a multiple of 16, and one of several thousand
LAYERS = (("a", 7), ("b", 17), ("c", 100), ("d", 32), ("e", 4096))


def _same(u, *, c, p, reading="noise", layers=LAYERS, seed=0, max_tries=100_000):
    with one_thread():
        r = bench.compare(u, sl=bench.slices(layers), c=c, p=p, reading=reading, seed=seed, max_tries=max_tries)
    return r


@pytest.mark.parametrize("p", [None, 0.0, -1.0, -2.0])
@pytest.mark.parametrize("reading", ["noise", "perturbed"])
def test_batched_sampler_gives_the_one_at_a_time_numbers(p, reading):
    u = torch.randn(5, sum(d for _, d in LAYERS), generator=torch.Generator().manual_seed(3))
    u[2] = 0.0                                   # a client that sends nothing: noise of norm 0, one try
    r = _same(u, c=3.0, p=p, reading=reading, seed=11)
    assert r["same"], r
    assert r["tries"] >= 5 * len(LAYERS)


def test_batched_sampler_draws_several_candidates_per_launch():
    # where a try is likely to fail, a client's candidates come several per launch ...
    assert alg._candidates(17, -2.0, 3.0, "noise", "cpu") >= 40
    # ... within 2^16 numbers on a CPU, and within the budget on a GPU
    assert alg._candidates(1 << 15, -2.0, 3.0, "noise", "cpu") == 2
    assert alg._candidates(1 << 20, -3.0, 3.0, "noise", "cuda") == alg.CANDIDATE_BUDGET["cuda"] >> 20
    # and the numbers stay the one-at-a-time sampler's at p = -3, ~740 tries a layer
    u = torch.randn(2, 117, generator=torch.Generator().manual_seed(4))
    r = _same(u, c=15.0, p=-3.0, layers=(("w", 100), ("b", 17)), seed=5)
    assert r["same"] and r["tries"] > 200


def test_batched_sampler_stops_where_the_old_one_did():
    u = torch.randn(2, 4)
    for fn in (bench.one_at_a_time, alg.perturb):
        with pytest.raises(RuntimeError, match="p=-6.*max_tries=5"):
            fn(u, slices=[("w", 0, 4)], c=1.0, p=-6.0, generators=bench.generators(2, 0, "cpu"), max_tries=5)
    # a cap the batched sampler reaches inside a launch is the cap the old one reached
    r = _same(torch.randn(3, 100, generator=torch.Generator().manual_seed(6)), c=2.0, p=-1.0,
              layers=(("w", 100),), max_tries=50)
    assert r["same"]


def test_the_comparison_can_fail():
    # a sampler that skips one draw of each client's stream is told apart
    def skipping(updates, *, generators, **kw):
        for g in generators:
            torch.randn(1, generator=g)
        return alg.perturb(updates, generators=generators, **kw)

    u = torch.randn(3, 40, generator=torch.Generator().manual_seed(7))
    gens_a, gens_b = bench.generators(3, 0, "cpu"), bench.generators(3, 0, "cpu")
    a, _ = bench.one_at_a_time(u, slices=[("w", 0, 40)], c=1.0, p=0.0, generators=gens_a)
    b, _ = skipping(u, slices=[("w", 0, 40)], c=1.0, p=0.0, generators=gens_b)
    assert not torch.equal(a, b)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_batched_sampler_on_cuda_gives_the_one_at_a_time_numbers():
    # on a GPU the candidates of a client are many per launch (CUDA generators, Philox): the same
    # draws and tries; the noise within a float32 ulp (a GPU's row norm depends on the tensor's shape)
    layers = LAYERS + (("big", 1 << 20),)
    u = torch.randn(4, sum(d for _, d in layers), generator=torch.Generator().manual_seed(8)).to("cuda") * 1e-2
    for p in (0.0, -2.0):
        r = bench.compare(u, sl=bench.slices(layers), c=15.0, p=p, seed=12)
        assert r["same_draws"] and r["max_diff"] <= 2.4e-7, (p, r)
