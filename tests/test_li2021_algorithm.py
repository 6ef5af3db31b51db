"""Secure FedAvg (Li, Chang & Chi 2020, Algorithm 1) on the engine, against a plain
per-client reference; its calibration, accounting, constants and bad input."""
import math

import numpy as np
import pytest
import torch

from fldp import accounting, data as fdata, engine, mechanisms, models
from fldp.data import FederatedData
from helpers import engine_schedule, plain_round, toy_federation
from fldp.papers.li2021 import algorithm as alg, estimate as est, theory as th


TOY = dict(features=5, labels="noisy_sign", test=8)  # toy_federation(counts, **TOY)


def reference_round(model, data, w, selected, t, step, cal, cfg, clip):
    """One round of Algorithm 1 written out (``helpers.plain_round``): each client alone, Q
    steps of autograd mini-batch gradients clipped to G (the batch's or each sample's), eta at
    the global step, then eq. (9)'s noise at the upload and (N/K) sum p_k w_k."""
    Q, b = cfg.local_steps, cfg.batch_size  # per-sample clipping: one row moves its own step by 2G/b only
    df = 4 * Q * cal.G * 0.2 / (1 + 0.01 * (step + Q))
    df = df * (Q - 1 + 1 / b) / Q if clip == "sample" else df

    def noise(c, wk):
        gen = engine.generator(cfg.seed, "uplink", t, c)
        return wk + float(cal.z[c]) * df * mechanisms.gaussian_noise(wk.shape, sigma=1.0, generator=gen)

    return plain_round(w, data, selected, loss=lambda p, x, y: model.per_sample_loss(p[None], x[None], y[None])[0],
                       lr=lambda s: 0.2 / (1 + 0.01 * s), schedule=engine_schedule(cfg, data, selected, t), step=step,
                       clip_mode="sample_grad" if clip == "sample" else "batch_grad", clip_bound=cal.G,
                       regulariser=lambda p: model.regulariser(p[None]).sum(), noise=noise, aggregation="unbiased")


@pytest.mark.parametrize("clip,sizes", [("batch", None), ("sample", [12, 9, 15, 10])])
def test_rounds_match_per_client_reference(clip, sizes):
    data = toy_federation(sizes or [12] * 4, **TOY)
    model = alg.logreg(5)
    Q, b, K, R = 3, 2, 2, 3
    cal = alg.calibrate(eps=4.0, n=data.counts.numpy(), N=4, K=K, Q=Q, b=b, rounds=R, delta=1e-3, clip=clip)
    cfg = alg.config(Q=Q, b=b, K=K, rounds=R, clip=clip, seed=5)
    state = engine.init_state(model, data, cfg)
    w = state.params.clone()
    for t in range(1, R + 1):
        step = state.step
        state, ctx = engine.round_step(model, data, cfg, state, uplink=alg.Uplink(cal, cfg.lr))
        assert state.step == step + Q  # the global step counter drives the step size
        w = reference_round(model, data, w, ctx.selected, t, step, cal, cfg, clip)
        torch.testing.assert_close(state.params, w.float(), rtol=1e-4, atol=1e-5)


def test_paper_calibration_is_eq9_with_lemma1():
    n = np.array([325, 326])
    cal = alg.calibrate(eps=0.5, n=n, N=100, K=50, Q=10, b=1, rounds=5)
    q = 10 / 325
    z = math.sqrt(8 * q**2 * math.log(1.25 * q / 1e-4)) / 0.5  # eq. (9) with Df = 1
    assert cal.z[0] == pytest.approx(z, rel=1e-12)
    assert cal.z[0] == pytest.approx(0.4246508376, rel=1e-9)
    eta = 0.2 / (1 + 0.01 * 10)  # the first upload, t + 1 = Q = 10
    assert cal.sigma(eta=eta)[0] == pytest.approx(z * 4 * 10 * 2 * eta, rel=1e-12)
    assert cal.worst == 1  # the larger client has the smaller q, hence less noise
    # what the paper's sigma gives one upload, by its own amplification theorem done exactly
    assert cal.eps_upload_theorem > 5 * cal.eps
    assert cal.eps_run >= cal.eps_upload_accountant > 1.0


@pytest.mark.slow
def test_per_sample_clipping_bounds_only_the_step_with_the_sample_by_2G_over_b():
    n = np.array([325, 326])
    eta = 0.2 / 1.1
    for Q, b, df in [(1, 4, 4 * 2 * eta / 4), (10, 4, 4 * 2 * eta * 9.25), (10, 1, 4 * 10 * 2 * eta)]:
        batch = alg.calibrate(eps=0.5, n=n, N=100, K=50, Q=Q, b=b, rounds=5)
        sample = alg.calibrate(eps=0.5, n=n, N=100, K=50, Q=Q, b=b, rounds=5, clip="sample")
        np.testing.assert_array_equal(sample.z, batch.z)  # the same multipliers, a smaller sensitivity
        assert batch.df(eta=eta) == pytest.approx(4 * Q * 2 * eta, rel=1e-12)  # Lemma 1: 4 Q G eta
        assert sample.df(eta=eta) == pytest.approx(df, rel=1e-12)  # 4 G eta (Q - 1 + 1/b)
        np.testing.assert_allclose(sample.sigma(eta=eta), sample.z * df, rtol=1e-12)
    assert sample.as_dict()["clip"] == "sample"
    with pytest.raises(ValueError, match="clip"):
        alg.calibrate(eps=0.5, n=n, N=100, K=50, Q=10, b=4, rounds=5, clip="row")


@pytest.mark.slow
def test_accountant_calibration_meets_its_target():
    n = np.array([325] * 4)
    cal = alg.calibrate(eps=2.0, n=n, N=4, K=2, Q=5, b=2, rounds=20, rule="accountant", uploads=12)
    assert cal.eps_run <= 2.0 and cal.eps_run == pytest.approx(2.0, rel=0.01)
    looser = alg.run_eps(z=float(cal.z[0]) * 0.9, Q=5, b=2, n_k=325, uploads=12, delta=1e-4)
    assert looser["eps"] > 2.0


def test_run_spends_what_the_accountant_says():
    data = toy_federation([40] * 4, **TOY)
    model = alg.logreg(5)
    hist, cal = alg.run(model, data, eps=1.0, Q=2, b=4, K=2, rounds=6, delta=1e-3)
    sp = alg.spent(hist, cal)
    uploads = np.bincount([c for rec in hist.privacy for c in rec.clients], minlength=4)
    assert sp["uploads_max"] == uploads.max()
    u, z = int(uploads.max()), float(cal.z[0])
    plain = accounting.epsilon(accounting.self_composed(accounting.gaussian(noise_multiplier=z), count=u),
                               delta=1e-3)
    amp = accounting.epsilon(accounting.self_composed(accounting.sampled_without_replacement(
        accounting.gaussian(noise_multiplier=z), sample_size=8, population=40), count=u),
        delta=1e-3, accountant="rdp", relation="replace_one")
    assert sp["unamplified"] == pytest.approx(plain) and sp["amplified"] == pytest.approx(amp)
    assert sp["eps"] == pytest.approx(min(plain, amp))
    _, nonpriv = alg.run(model, data, Q=2, b=4, K=2, rounds=2, private=False)
    assert nonpriv is None


def test_scale_factor_of_unbiased_aggregation():
    equal = toy_federation([10] * 4, **TOY)
    np.testing.assert_allclose(alg.scale_factors(equal, K=2, rounds=5), 1.0)
    unequal = toy_federation([30, 10, 10, 30], **TOY)
    f = alg.scale_factors(unequal, K=2, rounds=40)
    assert set(np.round(f, 6)) <= {0.5, 1.0, 1.5}  # 2 * (p_i + p_j), p in {0.375, 0.125}
    assert f.std() > 0.2


@pytest.mark.parametrize("kwargs,name", [
    (dict(b=13), "b"), (dict(Q=0), "Q"), (dict(K=5), "K"), (dict(G=0.0), "G"),
    (dict(eps=0.0), "eps"), (dict(delta=1.0), "delta"), (dict(delta=0.0), "delta"),
])
def test_bad_parameters_name_themselves(kwargs, name):
    data = toy_federation([12] * 4, **TOY)
    model = alg.logreg(5)
    args = dict(eps=1.0, Q=1, b=1, K=2, rounds=1) | kwargs
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        alg.run(model, data, **args)


def test_Q_times_b_above_a_client_is_refused():
    with pytest.raises(ValueError, match="Q b must be <= n_k"):
        alg.calibrate(eps=1.0, n=np.array([12, 12]), N=2, K=1, Q=4, b=4, rounds=1)


def test_li2021_model_regulariser_is_lambda_w_squared_without_bias():
    m = alg.logreg(3, l2=0.1)
    w = torch.tensor([[1.0, 2.0, -2.0, 5.0]])  # (w, b)
    assert float(m.regulariser(w)) == pytest.approx(0.1 * 9.0)  # lambda ||w||^2, b free
    assert m.strong_convexity == pytest.approx(0.2)
    default = models.BinaryLogReg(3, l2=0.1)
    assert float(default.regulariser(w)) == pytest.approx(0.05 * 34.0)
    x, y = torch.randn(1, 4, 3), torch.tensor([[0, 1, 1, 0]])
    p = w.clone().requires_grad_(True)
    loss = m.per_sample_loss(p, x, y).mean() + m.regulariser(p).sum()
    (g,) = torch.autograd.grad(loss, p)
    torch.testing.assert_close(m.weighted_grad(w, x, y, torch.full((1, 4), 0.25)), g)


def test_one_class_partition():
    y = torch.tensor([0] * 60 + [1] * 20)
    prop = fdata.partition(y, 8, "one_class", seed=1)
    assert sorted(len(p) for p in prop) == [10] * 8  # 6 + 2 clients of 10 rows
    assert all(len(torch.unique(y[p])) == 1 for p in prop)
    eq = fdata.partition(y, 8, "one_class", clients_per_class="equal", seed=1)
    assert sorted(len(p) for p in eq) == [5, 5, 5, 5, 15, 15, 15, 15]
    assert sorted(torch.cat(eq).tolist()) == list(range(80))
    with pytest.raises(ValueError, match="num_clients"):
        fdata.partition(y, 1, "one_class")


def test_constants_on_a_problem_with_known_answers():
    # two clients, each one class: F_k^* = 0 (bias free), so Gamma = F(w*)
    x = torch.tensor([[1.0], [2.0], [-1.0], [-2.0]])
    y = torch.tensor([1, 1, 0, 0])
    data = FederatedData(x, y, torch.tensor([2, 2]), x, y)
    m = alg.logreg(1, l2=0.05)
    c = est.estimate_constants(m, data)
    assert c.one_class_clients == 2 and c.Gamma == pytest.approx(c.F_star)
    # L: lambda_max of [[x^2, x], [x, 1]] averaged / 4 + 2 lambda, client 1: [[2.5, 1.5], [1.5, 1]]
    lam = (3.5 + math.sqrt(2.5**2 - 2 * 2.5 * 1 + 1 + 4 * 1.5**2)) / 2
    assert c.L == pytest.approx(lam / 4 + 0.1, rel=1e-9)
    assert c.mu == pytest.approx(0.1)
    # w*: stationarity of the symmetric problem (b* = 0): mean (sigmoid(w x) - y) x + 0.1 w = 0
    w = math.sqrt(c.w0_dist_sq)
    r = np.mean([(1 / (1 + math.exp(-w * xi)) - yi) * xi for xi, yi in [(1, 1), (2, 1), (-1, 0), (-2, 0)]])
    assert r + 0.1 * w == pytest.approx(0.0, abs=1e-8)


def test_audit_upload_refutes_eq9_at_the_papers_setting():
    """One upload at Sec. 4's Q = 10, b = 1, n_k = 325, eps = 0.5: the audit certifies more than
    the claimed 0.5 and no more than the accountant's upper bound for the same upload."""
    r = alg.audit_upload(eps=0.5, delta=1e-4, Q=10, b=1, n_k=325, trials=200_000, seed=0)
    upper = alg.run_eps(z=r["z"], Q=10, b=1, n_k=325, uploads=1, delta=1e-4)["eps"]
    assert 0.5 < r["eps_lower"] <= min(upper, r["resolution"])
    assert r["inclusion"] == pytest.approx(th.inclusion_prob(b=1, n_k=325, Q=10))
    assert r == alg.audit_upload(eps=0.5, delta=1e-4, Q=10, b=1, n_k=325, trials=200_000, seed=0)


def test_audit_upload_stays_below_the_upper_bound_where_eq9_is_ample():
    """At b = 32 (q near 1) eq. (9)'s noise is ample (the accountant's eps is below the target):
    a sound audit cannot certify more than that upper bound."""
    r = alg.audit_upload(eps=0.5, delta=1e-4, Q=10, b=32, n_k=325, trials=100_000, seed=1)
    upper = alg.run_eps(z=r["z"], Q=10, b=32, n_k=325, uploads=1, delta=1e-4)["eps"]
    assert upper < 0.5 and r["eps_lower"] <= upper
    with pytest.raises(ValueError):
        alg.audit_upload(eps=0.5, delta=1e-4, Q=10, b=1, n_k=325, trials=4)
