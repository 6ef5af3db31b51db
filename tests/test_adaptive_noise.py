"""Adaptive CLT noise scheme: formulas against hand-computed values, the hook against a
plain per-client reference, the DP baseline's calibration and spend."""
import math

import numpy as np
import pytest
import torch
from scipy import stats

from fldp import accounting, data as fdata, engine, mechanisms, models
from fldp.papers.adaptive_noise import algorithm as alg, theory as th
from helpers import engine_schedule, plain_round


# -- theory ------------------------------------------------------------------------------------
def test_angle_moments_by_hand():
    # d = 2: uniform on [0, 180], std 180 / sqrt(12)
    assert th.angle_moments(dim=2) == pytest.approx((90.0, 180 / math.sqrt(12)), rel=1e-9)
    # d = 3: density sin/2, E(theta - pi/2)^2 = pi^2/4 - 2
    assert th.angle_moments(dim=3)[1] == pytest.approx(math.degrees(math.sqrt(math.pi ** 2 / 4 - 2)), rel=1e-9)
    assert th.angle_moments(dim=1) == (90.0, 90.0)
    # large d: std -> 1/sqrt(d) rad (E asin(t)^2 = 1/d + 1/(d(d+2)) + ...)
    d = 10 ** 6
    assert th.angle_moments(dim=d)[1] == pytest.approx(math.degrees(math.sqrt(1 / d + 1 / d ** 2)), rel=1e-6)


def test_angle_cdf_by_hand_and_against_sampling():
    assert th.angle_cdf(theta=45.0, dim=2) == pytest.approx(0.25)
    assert th.angle_cdf(theta=60.0, dim=3) == pytest.approx((1 - math.cos(math.radians(60))) / 2)
    assert th.angle_cdf(theta=90.0, dim=57) == pytest.approx(0.5)
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(2, 20000, 10, generator=g, dtype=torch.float64)
    ang = np.degrees(torch.arccos(torch.nn.functional.cosine_similarity(a, b, dim=1)).numpy())
    assert stats.kstest(ang, lambda x: th.angle_cdf(theta=x, dim=10)).pvalue > 0.01
    assert ang.std() == pytest.approx(th.angle_moments(dim=10)[1], rel=0.02)


def test_expected_tries_match_table4_normal_tail():
    assert th.expected_tries(dim=300, p=0) == pytest.approx(2.0)  # symmetric: any d >= 2
    for p, paper in [(1, 1.1), (-1, 6.3), (-2, 43.9)]:
        assert th.expected_tries(dim=10 ** 5, p=p) == pytest.approx(th.expected_tries_normal(p=p), rel=5e-3)
        assert th.expected_tries_normal(p=p) == pytest.approx(paper, abs=0.1)
    assert th.expected_tries_normal(p=-3) == pytest.approx(740.8, rel=1e-3)  # Table 4 says 333.3


def test_perturbed_reading_by_hand_and_by_sampling():
    # d = 2, c = 2, p = 0: theta0 = 90, accepted iff phi < 90 + asin(1/2) = 120 degrees
    assert th.acceptance_probability(dim=2, p=0, c=2, reading="perturbed") == pytest.approx(2 / 3)
    assert th.acceptance_probability(dim=2, p=0, c=1, reading="perturbed") == 1.0
    g = torch.Generator().manual_seed(1)
    u = torch.randn(40000, 10, generator=g, dtype=torch.float64)
    z = torch.randn(40000, 10, generator=g, dtype=torch.float64)
    r = 3 * u.norm(dim=1, keepdim=True) * z / z.norm(dim=1, keepdim=True)
    ang = torch.rad2deg(torch.arccos(torch.nn.functional.cosine_similarity(u, u + r, dim=1)))
    freq = float((ang < th.threshold(dim=10, p=-1)).double().mean())
    want = th.acceptance_probability(dim=10, p=-1, c=3, reading="perturbed")
    assert freq == pytest.approx(want, abs=4 * math.sqrt(want * (1 - want) / 40000))


def test_cost_multiple_weights_layers_by_size():
    t2 = 1 / (th.threshold(dim=2, p=-1) / 180)   # d = 2: uniform angle
    want = (2 * t2 + 10 ** 6 * th.expected_tries(dim=10 ** 6, p=-1)) / (10 ** 6 + 2)
    assert th.cost_multiple(dims=[2, 10 ** 6], p=-1) == pytest.approx(want)
    assert th.cost_multiple(dims=[10 ** 6], p=0) == pytest.approx(2.0)


def test_theorem1_variance_and_noise_scale_rules():
    assert th.aggregate_noise_variance(weights=[0.5, 0.25, 0.25], sigmas=[1, 2, 4]) == pytest.approx(1.5)
    assert th.noise_std(c=2, update_norm=3, dim=9) == pytest.approx(2.0)
    assert th.max_noise_scale(K=20) == pytest.approx(math.sqrt(20))
    assert th.max_noise_scale(K=20, rho=0.0) == pytest.approx(1.0)
    assert th.max_noise_scale(K=20, dropouts=4) == pytest.approx(4.0)
    assert th.paper_max_noise_scale(K=20, dropouts=4) == 16


def test_descent_probability_switches_at_sqrt_K_not_K():
    K = 20
    assert th.descent_probability(c=0.9 * math.sqrt(K), K=K, dim=2000, trials=400) > 0.99
    assert th.descent_probability(c=1.1 * math.sqrt(K), K=K, dim=2000, trials=400) < 0.01
    assert th.descent_probability(c=K, K=K, dim=2000, trials=400) == 0.0


@pytest.mark.parametrize("call", [
    lambda: th.max_noise_scale(K=5, dropouts=5),
    lambda: th.angle_moments(dim=0),
    lambda: th.acceptance_probability(dim=5, p=0, reading="both"),
    lambda: th.aggregate_noise_variance(weights=[1, 2], sigmas=[1]),
])
def test_bad_input_names_the_parameter(call):
    with pytest.raises(ValueError, match="dropouts|dim|reading|weights"):
        call()


# -- the hook ---------------------------------------------------------------------------------
def _gens(seeds):
    return [torch.Generator().manual_seed(s) for s in seeds]


def test_perturb_scales_each_layer_and_filters():
    slices = [("a", 0, 3), ("b", 3, 50), ("c", 50, 60)]
    u = torch.randn(6, 60, generator=torch.Generator().manual_seed(0))
    noisy, tries = alg.perturb(u, slices=slices, c=4.0, p=-1.0, generators=_gens(range(6)))
    for name, a, b in slices:
        r = (noisy - u)[:, a:b]
        torch.testing.assert_close(r.norm(dim=1), 4.0 * u[:, a:b].norm(dim=1), rtol=1e-5, atol=0)
        ang = torch.rad2deg(torch.arccos(torch.nn.functional.cosine_similarity(u[:, a:b], r, dim=1)))
        assert bool((ang < th.threshold(dim=b - a, p=-1.0)).all())
    assert tries.shape == (6, 3) and int(tries.min()) >= 1 and float(tries.float().mean()) > 2
    # no filter: one draw per layer
    _, once = alg.perturb(u, slices=slices, c=4.0, p=None, generators=_gens(range(6)))
    assert bool((once == 1).all())


def test_perturb_rows_depend_only_on_their_own_generator():
    slices = [("a", 0, 5), ("b", 5, 20)]
    u = torch.randn(4, 20, generator=torch.Generator().manual_seed(2))
    full, _ = alg.perturb(u, slices=slices, c=2.0, p=0.0, generators=_gens([10, 11, 12, 13]))
    part, _ = alg.perturb(u[[1, 3]], slices=slices, c=2.0, p=0.0, generators=_gens([11, 13]))
    torch.testing.assert_close(full[[1, 3]], part)


def test_perturb_gives_up_with_a_clear_message():
    u = torch.randn(2, 4)
    with pytest.raises(RuntimeError, match="p=-6.*max_tries=5"):
        alg.perturb(u, slices=[("w", 0, 4)], c=1.0, p=-6.0, generators=_gens([0, 1]), max_tries=5)


def _tiny():
    fd = fdata.federated_dataset("mnist", 10, "dirichlet", alpha=1.0, seed=0, subsample=600, max_test=200)
    return models.MultinomialLogReg(bias=True), fd


def test_round_matches_a_plain_per_client_reference():
    """One round of the scheme against ``helpers.plain_round``: each client trained alone by
    autograd on the engine's batches, its update perturbed by its own filtered noise, the
    noisy updates averaged with weights n_k."""
    model, fd = _tiny()
    cfg = alg.config(scheme="ours", rounds=1, K=4, local_epochs=1, batch_size=16, seed=3)
    hook = alg.AdaptiveUplink(c=3.0, p=0.0)
    state = engine.init_state(model, fd, cfg)
    new, ctx = engine.round_step(model, fd, cfg, state, uplink=hook)
    assert torch.equal(ctx.clients, ctx.selected)  # no dropout: every selected client uploads

    def perturb(k, update):
        g = [engine.generator(cfg.seed, "uplink", 1, k)]
        noisy, _ = alg.perturb(update[None], slices=alg.layer_slices(model), c=3.0, p=0.0, generators=g)
        return noisy[0]

    want = plain_round(state.params, fd, ctx.selected,
                       loss=lambda p, x, y: model.per_sample_loss(p[None], x[None], y[None])[0],
                       lr=cfg.learning_rate, schedule=engine_schedule(cfg, fd, ctx.selected, 1), upload="update",
                       noise=perturb, aggregation="weighted")
    torch.testing.assert_close(new.params, want, rtol=1e-5, atol=1e-6)


def test_c_zero_is_regular_fl_and_dp_baseline_noise_is_calibrated():
    model, fd = _tiny()
    reg = alg.run(model, fd, scheme="regular", rounds=2, K=5, local_epochs=1, batch_size=32)
    ours = alg.run(model, fd, scheme="ours", rounds=2, K=5, c=0.0, p=None, local_epochs=1, batch_size=32)
    torch.testing.assert_close(reg.history.params, ours.history.params)
    dp = alg.run(model, fd, scheme="dp", rounds=2, K=5, eps=30.0, local_epochs=1, batch_size=32)
    last = dp.uploads
    assert float(last["clean"].norm(dim=1).max()) <= last["clip"] * (1 + 1e-5)
    noise = last["noisy"] - last["clean"]
    want = alg.dp_noise_multiplier(eps=30.0) * last["clip"]
    assert float(noise.std()) == pytest.approx(want, rel=0.02)
    assert alg.dp_noise_multiplier(eps=30.0) == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 30)
    assert len(dp.snr) == 2 and all(0 < s < 1 for s in dp.snr)
    two = alg.run(model, fd, scheme="ours", rounds=2, K=5, c=2.0, p=None, local_epochs=1, batch_size=32)
    assert all(0.8 / 4 < s <= 1 / 4 * 1.001 for s in two.snr)  # about 1/c^2 by construction


def test_dp_spent_is_the_accountants_view():
    model, fd = _tiny()
    dp = alg.run(model, fd, scheme="dp", rounds=3, K=10, eps=20.0, local_epochs=1, batch_size=32)
    s = alg.dp_spent(dp.history, eps=20.0)
    z = alg.dp_noise_multiplier(eps=20.0)
    assert s["upload_eps"] == pytest.approx(mechanisms.gaussian_eps(sigma=z, delta=alg.DELTA, sensitivity=1.0))
    assert s["upload_eps_replace"] > s["upload_eps"] > 20.0
    assert s["uploads_worst"] == 3
    three = accounting.epsilon(accounting.self_composed(accounting.gaussian(noise_multiplier=z), count=3),
                               delta=alg.DELTA)
    assert s["run_eps"] == pytest.approx(three, rel=1e-3)
    # the adaptive scheme releases no DP event: eps = inf
    ours = alg.run(model, fd, scheme="ours", rounds=1, K=2, c=1.0, local_epochs=1, batch_size=32)
    assert math.isinf(accounting.spent(ours.history, delta=alg.DELTA).eps)


def test_central_reading_noises_the_aggregate_once():
    model, fd = _tiny()
    r = alg.run(model, fd, scheme="dp", dp="central", rounds=2, K=5, eps=20.0, local_epochs=1, batch_size=32)
    last = r.uploads
    torch.testing.assert_close(last["noisy"], last["clean"])   # uploads leave the clients clean
    s = alg.dp_spent(r.history, eps=20.0, dp="central")
    z = alg.dp_noise_multiplier(eps=20.0)
    two = accounting.epsilon(accounting.self_composed(accounting.gaussian(noise_multiplier=z), count=2), delta=alg.DELTA)
    assert s["run_eps"] == pytest.approx(two, rel=1e-3) and math.isinf(s["server_eps"])


def test_simulated_aggregate_matches_theorem1_under_dropout():
    sim = alg.simulate_aggregate(K=10, dim=500, c=3.0, p=0.0, dropout=0.3, trials=60, norms=np.linspace(0.5, 1.5, 10))
    z = sim["R"] / np.sqrt(sim["predicted"])[:, None]
    assert z.var() == pytest.approx(1.0, abs=0.03)
    assert 5 < sim["survivors"].mean() < 9 and sim["survivors"].min() >= 1
    full = alg.simulate_aggregate(K=10, dim=500, c=3.0, trials=5, weights=[1] * 10)
    assert full["predicted"] == pytest.approx(np.full(5, 9.0 / 500 / 10))  # sum (1/K)^2 c^2 / d


def test_the_filter_biases_the_noise_towards_the_update():
    assert th.filter_drift(dim=2, p=0) == pytest.approx(2 / math.pi)   # uniform angle: E cos | cos > 0
    assert th.filter_drift(dim=3, p=0) == pytest.approx(0.5)           # uniform cosine
    assert th.filter_drift(dim=10 ** 6, p=0, c=2) == pytest.approx(2 * math.sqrt(2 / (math.pi * 10 ** 6)), rel=1e-3)
    u = torch.ones(3000, 10)
    noisy, _ = alg.perturb(u, slices=[("w", 0, 10)], c=15.0, p=0.0, generators=_gens(range(3000)))
    along = ((noisy - u) * u).sum(1) / (u * u).sum(1)
    assert float(along.mean()) == pytest.approx(th.filter_drift(dim=10, p=0, c=15), rel=0.05)


# -- the chapters' run helpers (fldp.papers.adaptive_noise.runs) -----------------------------------
def test_diverged_is_not_finite_and_untrained_is_apart():
    from fldp import verdicts as V
    from fldp.papers.adaptive_noise import runs as cl

    assert V.untrained(0.15, chance=0.1) and V.untrained(float("nan"), chance=0.1) and not V.untrained(0.2, chance=0.1)  # MNIST: below 19 %
    assert V.untrained(0.78, chance=0.76) and not V.untrained(0.79, chance=0.76)      # Adult: a constant guess is 76 %
    assert cl.diverged({"acc": [0.5, 0.9], "diverged_at": 3}) == 3
    assert cl.diverged({"acc": [0.5, 0.064], "diverged_at": None}) is None      # finite: not diverged ...
    assert cl.untrained({"acc": [0.5, 0.064], "diverged_at": None})             # ... but untrained
    assert not cl.untrained({"acc": 0.93}) and cl.diverged({"acc": 0.93}) is None
    runs = [{"acc": [0.3, 0.9]}, {"acc": [0.3, 0.05]}, {"acc": [0.3], "diverged_at": 2}]
    assert cl.diverged_seeds(runs) == "seed 1: untrained; seed 2: diverged in round 2"
    assert cl.finals(runs) == [0.9, 0.05, 0.3]                                  # the last finite evaluation
    v = V.gate_diverged({"DP": cl.diverged(runs[2]), "ours": cl.diverged(runs[0])})
    assert v.label == "inconclusive: diverged" and v.stats["diverged"] == ["DP"]


def test_label_attack_power_gate_needs_the_attack_to_beat_a_uniform_guess():
    from fldp.papers.adaptive_noise import runs as cl

    guess = [0.5, 0.6, 0.4, 0.7, 0.5, 0.6]
    assert cl.gate_guess([0.1, 0.2, 0.1, 0.15, 0.1, 0.2], guess, min_effect=0.05) is None                   # far better: power
    assert cl.gate_guess([0.1, 0.2, 0.1, 0.15, 0.1, 0.2], guess, min_effect=0.45).reason == "no-power"     # not by 0.45
    assert cl.gate_guess([0.6, 0.7, 0.5, 0.8, 0.6, 0.7], guess, min_effect=0.05).label == "inconclusive: no-power"  # worse
    assert cl.gate_guess([0.5, 0.6, 0.4, 0.7, 0.5, 0.6], guess, min_effect=0.0).label == "inconclusive: no-power"   # a tie


def test_theorem1_law_verdict():
    from fldp.papers.adaptive_noise import runs as cl

    ok = {"0": {"var_ratio": 1.01, "normal_p": 0.4}, "0.2": {"var_ratio": 0.99, "normal_p": 0.05}}
    assert cl.theorem1_law(ok).verdict == "holds"
    assert cl.theorem1_law({**ok, "0.4": {"var_ratio": 1.05, "normal_p": 0.5}}).verdict == "fails"   # variance off 5 %
    assert cl.theorem1_law({**ok, "0.4": {"var_ratio": 1.0, "normal_p": 0.001}}).verdict == "fails"  # not normal


# -- Theorem 1 at a layer of given size, one fixed update direction (01_scheme) --------------------
def test_fixed_direction_aggregate_draws_what_perturb_draws():
    d, n = 10, 3000
    u = torch.zeros(n, d, dtype=torch.float64)
    u[:, 0] = 1.0  # every update along e_1
    noisy, _ = alg.perturb(u, slices=[("w", 0, d)], c=2.0, p=0.0, generators=_gens(range(n)))
    r = ((noisy - u) / (2.0 / math.sqrt(d))).numpy()  # one client: Theorem 1's std is c ||u|| / sqrt(d)
    sim = th.fixed_direction_aggregate(dim=d, K=1, c=2.0, p=0.0, trials=n, seed=0)
    assert stats.ks_2samp(r[:, 0], sim["along"]).pvalue > 0.01
    assert stats.ks_2samp(r[:, 1], sim["across"]).pvalue > 0.01


def test_fixed_direction_aggregate_by_hand():
    # no filter: both elements standardised to mean 0, variance 1; one client in 10 dimensions is a
    # sphere coordinate, excess kurtosis -6 / (d + 2) = -0.5
    one = th.theorem1_elements(**th.fixed_direction_aggregate(dim=10, K=1, c=3.0, trials=20_000, seed=1))
    assert one["mean_along_ci"][0] < 0 < one["mean_along_ci"][1]
    assert one["var_along"] == pytest.approx(1.0, abs=0.05) and one["var_across"] == pytest.approx(1.0, abs=0.05)
    assert one["kurtosis_across"] == pytest.approx(-0.5, abs=0.12) and one["normal_p_across"] < 1e-6
    # the filter at p = 0, K equal clients: the element along the update has mean sqrt(K d) E[cos | cos > 0]
    K, d = 8, 64
    f = th.theorem1_elements(**th.fixed_direction_aggregate(dim=d, K=K, c=3.0, p=0.0, trials=4000, norms=[1.0] * K, seed=2))
    assert f["mean_along"] == pytest.approx(math.sqrt(K * d) * th.filter_drift(dim=d, p=0.0), rel=0.03)
    assert f["var_across"] == pytest.approx(1.0, abs=0.08)  # across the update the variance is Theorem 1's
    with pytest.raises(ValueError, match="norms"):
        th.fixed_direction_aggregate(dim=10, K=2, c=1.0, trials=5, norms=[1.0])
    with pytest.raises(ValueError, match="at least 20 trials"):
        th.theorem1_elements(along=[0.0] * 5, across=[0.0] * 5)


def test_the_filters_tries_follow_the_exact_angle_law():
    # 05_efficiency reports this ratio instead of judging it: the tries of alg.perturb are geometric
    # with mean 1 / P(angle < theta_thres) (theory.expected_tries)
    slices = [("a", 0, 10), ("b", 10, 42)]
    u = torch.randn(4000, 42, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    _, tries = alg.perturb(u, slices=slices, c=5.0, p=-1.0, generators=_gens(range(4000)))
    for j, (_, a, b) in enumerate(slices):
        assert float(tries[:, j].double().mean()) == pytest.approx(th.expected_tries(dim=b - a, p=-1.0), rel=0.06)


def test_mean_tries_interval_by_hand():
    # at p = 0 the threshold is 90 degrees and P = 1/2 in every dimension: tries geometric with mean 2,
    # variance (1 - 1/2) / (1/2)^2 = 2; 2 vectors x 2 layers: variance of the mean 2 x 2 / (2 x 2^2) = 0.5
    band = th.mean_tries_interval(dims=[10, 100], p=0.0, vectors=2, level=0.95)
    assert band["mean"] == pytest.approx(2.0, rel=1e-9)
    assert band["sd"] == pytest.approx(math.sqrt(0.5), rel=1e-9)
    assert band["low"] == pytest.approx(2.0 - 1.959964 * 0.7071068, rel=1e-6)   # 0.614096
    assert band["high"] == pytest.approx(3.385904, rel=1e-6)
    # the mean is the layers' expected tries averaged; the band narrows like 1 / sqrt(vectors)
    many = th.mean_tries_interval(dims=[10, 100], p=-1.0, vectors=400)
    assert many["mean"] == pytest.approx((th.expected_tries(dim=10, p=-1.0) + th.expected_tries(dim=100, p=-1.0)) / 2)
    assert th.mean_tries_interval(dims=[10, 100], p=-1.0, vectors=100)["sd"] == pytest.approx(2 * many["sd"])
    with pytest.raises(ValueError, match="dims"):
        th.mean_tries_interval(dims=[], p=0.0, vectors=1)
    with pytest.raises(ValueError, match="vectors"):
        th.mean_tries_interval(dims=[10], p=0.0, vectors=0)


def test_seed_helpers_give_finals_divergence_and_nan_padded_curves():
    from fldp.papers.adaptive_noise import runs as cl
    rs = [{"acc": [0.1, 0.5, 0.9], "rounds": [0, 1, 2], "diverged_at": None},
          {"acc": [0.1, 0.12], "rounds": [0, 1], "diverged_at": 2},
          {"acc": [0.1, 0.11, 0.15], "rounds": [0, 1, 2], "diverged_at": None}]
    assert cl.finals(rs) == [0.9, 0.12, 0.15]
    assert cl.diverged_seeds(rs) == "seed 1: diverged in round 2; seed 2: untrained"
    assert cl.diverged_seeds(rs[:1]) is None
    x, y = cl.curves(rs)
    assert x.tolist() == [0, 1, 2] and y[0].tolist() == [0.1, 0.5, 0.9] and np.isnan(y[1, 2]) and y[1, 1] == 0.12
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    cl.band(ax, rs, "DP")
    assert ax.get_legend_handles_labels()[1] == ["DP (2/3 seeds diverged or untrained)"]
    assert len(ax.lines) == 3  # the mean and an x at the end of each bad seed
    plt.close(fig)
