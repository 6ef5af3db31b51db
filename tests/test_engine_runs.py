"""Runs trained side by side (``engine.run_many``, ``engine.local_train_runs``) against the same
runs trained alone by ``engine.run``: every history must be the same, bit for bit, because a
batched run is stored under the key of a run alone (the run archive holds both)."""
import pytest
import torch

from fldp import engine, models
from fldp.data import federated_dataset
from helpers import toy_federation

IN, OUT = 12, 3
COUNTS = [10, 12, 7, 15, 9, 11]


def mnist():
    return federated_dataset("mnist", 6, "classes", seed=0, subsample=1200, max_test=200)


def same(a: engine.History, b: engine.History):
    """Two histories hold the same numbers (NaN where both are NaN)."""
    torch.testing.assert_close(a.params, b.params, rtol=0, atol=0, equal_nan=True)  # bit for bit
    for f in ("rounds", "clients", "diverged_at"):
        assert getattr(a, f) == getattr(b, f), f
    for f in ("train_loss", "test_loss", "test_acc", "upload_norm_median"):
        assert torch.equal(torch.tensor(getattr(a, f), dtype=torch.float64).nan_to_num(7.5),
                           torch.tensor(getattr(b, f), dtype=torch.float64).nan_to_num(7.5)), f
    assert [p.clients for p in a.privacy] == [p.clients for p in b.privacy]
    assert [p.uplink for p in a.privacy] == [p.uplink for p in b.privacy]


def together_and_alone(model, data, configs, uplinks, monkeypatch, expect_shared=True):
    calls = []
    real = engine.local_train_runs
    monkeypatch.setattr(engine, "local_train_runs", lambda *a, **k: calls.append(len(a[1])) or real(*a, **k))
    many = engine.run_many(model, data, configs, uplinks=uplinks)
    monkeypatch.setattr(engine, "local_train_runs", real)
    alone = [engine.run(model, data, c, uplink=u) for c, u in zip(configs, uplinks)]
    for a, b in zip(many, alone):
        same(a, b)
    assert bool(calls) == expect_shared, calls  # the runs did (not) train together
    return many, calls


FULL = dict(local_steps=1, sampling="full", clip=3.0, clip_mode="sample_grad", upload="gradient",
            aggregation="unbiased", clients_per_round=3, sampler="round_robin", lr=0.5)


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_full_batch_runs_of_every_seed_and_noise_train_as_one(norm, monkeypatch):
    """Zhou et al.'s setting: one full-batch gradient per client, clipped per sample, Laplace or
    Gaussian noise of several scales, five seeds: one group of 6 runs every round."""
    data, model = mnist(), models.MultinomialLogReg()
    configs, uplinks = [], []
    for seed, scale in [(0, 0.01), (0, 0.1), (1, 0.01), (2, 0.3), (3, 0.05), (4, 0.0)]:
        configs.append(engine.FLConfig(num_rounds=4, seed=seed, clip_norm=norm, eval_every=2, **FULL))
        uplinks.append(engine.laplace_uplink(scale) if norm == "l1" else engine.gaussian_uplink(scale))
    _, calls = together_and_alone(model, data, configs, uplinks, monkeypatch)
    assert calls == [6] * 4


def test_sampled_batches_train_together_only_within_a_seed(monkeypatch):
    """Sampled batches depend on the seed: runs of one seed (several noise scales) share them,
    runs of other seeds do not; with unequal clients, a proximal term and several local steps."""
    data, model = toy_federation(COUNTS, features=IN, classes=OUT, per_client=True, test=20), \
        models.MultinomialLogReg(IN, OUT)
    base = dict(num_rounds=3, local_steps=3, sampling="fraction", sample_rate=0.3, lr=0.2, mu=0.1,
                clip=1.0, clip_mode="sample_grad", clients_per_round=4)
    configs = [engine.FLConfig(seed=s, **base) for s in (0, 0, 0, 1, 1, 2)]
    uplinks = [engine.gaussian_uplink(s) for s in (0.01, 0.1, 1.0, 0.01, 0.2, 0.05)]
    _, calls = together_and_alone(model, data, configs, uplinks, monkeypatch)
    assert sorted(calls) == [2, 2, 2, 3, 3, 3]


@pytest.mark.parametrize("kw", [dict(clip=0.5, clip_mode="batch_grad"), dict(clip_mode=None),
                                dict(sampling=None, batch_size=4, local_steps=2)])
def test_other_training_settings_train_together_too(kw, monkeypatch):
    data, model = toy_federation(COUNTS, features=IN, classes=OUT, per_client=True, test=20), \
        models.MultinomialLogReg(IN, OUT)
    base = dict(num_rounds=2, local_steps=2, sampling="full", lr=0.3, seed=0)
    configs = [engine.FLConfig(**{**base, **kw}) for _ in range(3)]
    uplinks = [engine.gaussian_uplink(s) for s in (0.0, 0.05, 0.5)]
    together_and_alone(model, data, configs, uplinks, monkeypatch)


def test_runs_of_different_lengths_and_a_diverging_run(monkeypatch):
    """A run that ends earlier leaves the group; one whose uploads blow up stops alone, where
    it stops when alone, and the others go on unchanged."""
    data, model = mnist(), models.MultinomialLogReg()
    configs = [engine.FLConfig(num_rounds=t, seed=s, **FULL) for t, s in ((5, 0), (2, 1), (5, 2))]
    uplinks = [engine.laplace_uplink(0.01), engine.laplace_uplink(0.01), engine.laplace_uplink(1e38)]
    with pytest.warns(UserWarning, match="diverged"):
        many, calls = together_and_alone(model, data, configs, uplinks, monkeypatch)
    assert many[2].diverged_at == 2 and many[0].diverged_at is None and len(many[1].rounds) == 3
    assert calls == [3, 3]  # rounds 1-2 together; then run 1 has ended, run 2 has stopped, run 0 trains alone


def test_models_without_a_runs_gradient_train_alone(monkeypatch):
    """The MLP's fused step has no gradient to share: run_many trains each run alone."""
    data = toy_federation(COUNTS, features=IN, classes=OUT, per_client=True, test=20)
    configs = [engine.FLConfig(num_rounds=2, local_epochs=1, batch_size=4, lr=0.1, seed=0) for _ in range(2)]
    together_and_alone(models.MLP(IN, 8, OUT), data, configs, [engine.gaussian_uplink(0.1)] * 2, monkeypatch,
                       expect_shared=False)


@pytest.mark.parametrize("b", [1, 2, 60])
@pytest.mark.parametrize("model", [models.MultinomialLogReg(784, 10), models.MultinomialLogReg(784, 10, bias=True),
                                   models.MultinomialLogReg(12, 3)], ids=["mnist", "mnist-bias", "tiny"])
def test_the_runs_gradient_is_the_gradient_of_each_run(b, model):
    """Twice each shape: the first call checks the batched computation, the second uses what it found."""
    g = torch.Generator().manual_seed(0)
    f, k = model.shapes["w"][0], model.num_classes
    x, y = torch.rand(4, b, f, generator=g), torch.randint(0, k, (4, b), generator=g)
    params, w = torch.randn(4, 5, model.dim, generator=g) * 0.05, torch.full((4, b), 1.0 / b)
    for clip, ord in ((None, 2), (0.7, 2), (2.0, 1), (None, 2), (0.7, 2), (2.0, 1)):
        got = model.weighted_grad_runs(params, x, y, w, clip, ord)
        for j in range(5):
            assert torch.equal(got[:, j], model.weighted_grad(params[:, j].contiguous(), x, y, w, clip, ord))


def test_a_shape_whose_batched_numbers_differ_is_computed_run_by_run(monkeypatch):
    """Where the batched computation does not give each run's numbers (planted here: it adds
    1e-6), the check finds it on the first batch and that shape's runs go one by one."""
    model, g = models.MultinomialLogReg(784, 10), torch.Generator().manual_seed(1)
    x, y = torch.rand(2, 7, 784, generator=g), torch.randint(0, 10, (2, 7), generator=g)
    params, w = torch.randn(2, 3, model.dim, generator=g) * 0.05, torch.full((2, 7), 1.0 / 7)
    real = model._wide_grad
    monkeypatch.setattr(model, "_wide_grad", lambda *a: real(*a) + 1e-6)
    monkeypatch.setattr(models, "RUNS_TOGETHER", {})
    for _ in range(2):
        got = model.weighted_grad_runs(params, x, y, w, None, 2)
        assert all(torch.equal(got[:, j], model.weighted_grad(params[:, j].contiguous(), x, y, w)) for j in range(3))
    assert list(models.RUNS_TOGETHER.values()) == [False]


def test_run_many_rejects_mismatched_hooks():
    data, model = mnist(), models.MultinomialLogReg()
    with pytest.raises(ValueError, match="one entry per run"):
        engine.run_many(model, data, [engine.FLConfig(num_rounds=1, **FULL)] * 2, uplinks=[None])
