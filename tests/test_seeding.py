"""Common random numbers: a client's batches and noise depend on (seed, round, client) only."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from fldp import engine, seeding
from helpers import toy_federation


COUNTS = (30, 7, 52, 18, 40, 11)
TOY = dict(features=4, labels="sign", test=5)  # toy_federation(COUNTS, **TOY)


def _batches(cfg, data, clients, t=1):
    """client id -> list of the sets of row positions it trains on, step by step."""
    clients = torch.tensor(clients)
    sched = list(engine.batch_schedule(data.counts[clients], cfg, engine.batch_generators(cfg, clients, t)))
    return {int(c): [frozenset(idx[k][w[k] > 0].tolist()) for idx, w in sched] for k, c in enumerate(clients)}


@pytest.mark.parametrize("kw", [
    dict(local_epochs=2, batch_size=8),                                     # shuffle
    dict(local_steps=4, batch_size=5),                                      # fixed b
    dict(local_steps=4, sampling="fraction", sample_rate=0.3),              # Zhou's q d_i
    dict(local_steps=4, sampling="poisson", sample_rate=0.25),              # DP-SGD sampling
])
def test_a_clients_batches_do_not_depend_on_who_else_is_selected(kw):
    data, cfg = toy_federation(COUNTS, **TOY), engine.FLConfig(num_rounds=1, seed=3, **kw)
    alone = _batches(cfg, data, [2])[2]
    with_small = _batches(cfg, data, [1, 2, 5])[2]      # the others are smaller (less padding)
    with_all = _batches(cfg, data, [0, 1, 2, 3, 4, 5])[2]
    # the shuffle scheme's number of steps follows the largest client; the client's own steps agree
    own = [b for b in with_all if b]
    assert [b for b in alone if b] == [b for b in with_small if b] == own and own
    # another seed, or another round, gives other batches (the check can fail)
    assert _batches(engine.FLConfig(num_rounds=1, seed=4, **kw), data, [2])[2] != alone
    assert _batches(cfg, data, [2], t=2)[2] != alone


def test_a_clients_noise_and_model_do_not_depend_on_K_or_the_noise_level():
    """Two runs that differ in K share each common client's upload noise draw; runs that differ
    in sigma only share every client's batches (the paired comparison the register relies on)."""
    from fldp import mechanisms, models

    data, model = toy_federation(COUNTS, **TOY), models.MLP(4, 6, 2)
    seen = {}

    def observer(key):
        def obs(ctx):
            for row, c in enumerate(ctx.clients.tolist()):
                seen.setdefault(key, {})[c] = (ctx.clean[row].clone(), ctx.uploads[row].clone())
        return obs

    def hook(sigma):
        def uplink(ctx, x):
            return x + sigma * torch.stack([mechanisms.gaussian_noise(x.shape[1:], sigma=1.0, generator=g) for g in ctx.generators()])
        return uplink

    base = dict(num_rounds=1, local_epochs=1, batch_size=8, lr=0.1, seed=5)
    for key, k, sigma in (("K2", 2, 0.1), ("K5", 5, 0.1), ("K5-loud", 5, 1.0)):
        cfg = engine.FLConfig(clients_per_round=k, **base)
        engine.run(model, data, cfg, uplink=hook(sigma), observer=observer(key))
    common = set(seen["K2"]) & set(seen["K5"])
    assert common, "the two selections share no client; pick another seed"
    for c in common:
        clean2, up2 = seen["K2"][c]
        clean5, up5 = seen["K5"][c]
        assert torch.allclose(clean2, clean5, atol=1e-6)                 # same batches: same local model
        assert torch.allclose(up2 - clean2, up5 - clean5, atol=1e-6)     # same noise draw
    for c in seen["K5"]:
        assert torch.allclose(seen["K5"][c][0], seen["K5-loud"][c][0], atol=1e-6)  # the noise level changes no batch
        assert not torch.allclose(seen["K5"][c][1], seen["K5-loud"][c][1])


def test_key_is_one_function_of_seed_purpose_and_path():
    a = seeding.key(7, "batch", 3, 2)
    assert a == seeding.key(7, "batch", 3, 2) and 0 <= a < 2**63
    assert len({a, seeding.key(8, "batch", 3, 2), seeding.key(7, "uplink", 3, 2), seeding.key(7, "batch", 3, 1),
                seeding.key(7, "batch", 2, 2), seeding.key(7, "batch", 3)}) == 6
    assert engine.generator(7, "batch", 3, 2).initial_seed() == a
    x = seeding.numpy_rng(1, "partition").random(3)
    assert np.array_equal(x, seeding.numpy_rng(1, "partition").random(3))
    with pytest.raises(ValueError, match="purpose='batchh' is out of range"):
        seeding.key(1, "batchh")
    with pytest.raises(ValueError, match="seed=-1 is out of range"):
        seeding.key(-1, "batch")
    with pytest.raises(ValueError, match="seed=True is out of range"):
        seeding.key(True, "batch")
