"""fldp.papers.wei2020.errata: the errata chapter's formulas against hand-computed values, and its claims."""
import itertools
import math

import numpy as np
import pytest
import torch
from scipy import stats

from fldp import verdicts as V
from fldp.data import FederatedData
from fldp.models import MLP, MultinomialLogReg
from fldp.papers.wei2020 import errata as E
from fldp.papers.wei2020 import theory as th

C_001 = math.sqrt(2 * math.log(125))  # c at delta = 0.01: 3.10727


# ---------------------------------------------------------------- Assumption 1 vs the MLP
def _small_mlp(seed=0):
    m = MLP(6, 5, 3)
    return m, m.init(torch.Generator().manual_seed(seed)).double()


def test_permute_hidden_leaves_the_function_unchanged_and_moves_the_parameters():
    m, w = _small_mlp()
    x = torch.randn(1, 40, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    perm = torch.tensor([2, 0, 4, 1, 3])
    wp = E.permute_hidden(params=w, perm=perm, in_features=6, hidden=5, num_classes=3)
    assert torch.allclose(m.forward(wp.reshape(1, -1), x), m.forward(w.reshape(1, -1), x), atol=1e-14)
    assert not torch.allclose(wp, w)
    p, pp = m.unflatten(w.reshape(1, -1)), m.unflatten(wp.reshape(1, -1))
    assert torch.equal(pp["w1"][0][:, 0], p["w1"][0][:, 2]) and torch.equal(pp["b2"], p["b2"])
    ident = E.permute_hidden(params=w, perm=torch.arange(5), in_features=6, hidden=5, num_classes=3)
    assert torch.equal(ident, w)


def test_symmetrise_hidden_is_a_one_feature_network():
    m, w = _small_mlp(3)
    x = torch.randn(1, 7, 6, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    ws = E.symmetrise_hidden(params=w, in_features=6, hidden=5, num_classes=3)
    p = m.unflatten(w.reshape(1, -1))
    w1, b1 = p["w1"][0].mean(dim=1), p["b1"][0].mean()
    w2, b2 = p["w2"][0].mean(dim=0), p["b2"][0]
    by_hand = b2 + 5 * torch.relu(x[0] @ w1 + b1)[:, None] * w2[None, :]  # 5 identical hidden units
    assert torch.allclose(m.forward(ws.reshape(1, -1), x)[0], by_hand, atol=1e-12)


def test_the_permutation_helpers_refuse_bad_input():
    _, w = _small_mlp()
    with pytest.raises(ValueError, match="perm must be a permutation"):
        E.permute_hidden(params=w, perm=[0, 0, 1, 2, 3], in_features=6, hidden=5, num_classes=3)
    with pytest.raises(ValueError, match="params has"):
        E.symmetrise_hidden(params=w[:-1], in_features=6, hidden=5, num_classes=3)
    with pytest.raises(ValueError, match="hidden=0 is out of range"):
        E.symmetrise_hidden(params=w, in_features=6, hidden=0, num_classes=3)


# ---------------------------------------------------------------- Appendix F, both sides
def test_two_sided_b_by_hand():
    # (T/eps) ln(1 + (N/K)(e^{eps/T} - 1)) at K = 20, T = 25, eps = 50: 0.5 ln(1 + 2.5 (e^2 - 1)) = 1.41580
    assert E.krandom_b_two_sided(eps=50, T=25, N=50, K=20) == pytest.approx(0.5 * math.log(1 + 2.5 * (math.e**2 - 1)))
    assert E.krandom_b_two_sided(eps=50, T=25, N=50, K=20) == pytest.approx(1.41580, abs=1e-5)
    assert E.krandom_b_two_sided(eps=30, T=25, N=50, K=40) == pytest.approx(1.13418, abs=1e-5)
    assert E.krandom_b_two_sided(eps=50, T=25, N=50, K=50) == pytest.approx(1.0)  # K = N: b' = b = 1
    np.testing.assert_allclose(E.krandom_b_two_sided(eps=50, T=np.array([25.0, 200.0]), N=50, K=20),
                               [1.41580, 2.14612], atol=1e-5)


def test_q_b_prime_is_at_most_one_and_q_b_at_least_one():
    for K, T, eps in [(40, 25, 30), (45, 25, 50), (20, 200, 50), (10, 400, 20)]:
        q = K / 50
        assert q * E.krandom_b_two_sided(eps=eps, T=T, N=50, K=K) < 1 < q * th.krandom_b(eps=eps, T=T, N=50, K=K)


def test_noise_multiplier_and_ratio_at_the_fig45_point_by_hand():
    # b undefined at K = 20, T = 25: (21) gives sigma_D = 0, the broadcast carries sigma_U/sqrt(K);
    # over Ds_D = 2C/(mK) that is c L sqrt(K)/eps, and against all clients' c T Ds_D/eps: L N/(T sqrt K)
    z = E.krandom_noise_multiplier(eps=50, T=25, N=50, K=20, L=1, c=C_001, sided="paper")
    assert z == pytest.approx(C_001 * math.sqrt(20) / 50)
    assert E.krandom_noise_ratio(eps=50, T=25, N=50, K=20, L=1, c=C_001, sided="paper") == pytest.approx(
        50 / (25 * math.sqrt(20)))  # 0.4472
    two = E.krandom_noise_ratio(eps=50, T=25, N=50, K=20, L=1, c=C_001, sided="two-sided")
    assert two == pytest.approx(50 / (20 * 1.4158013), rel=1e-6)  # 1/(q b') = 1.7658
    assert E.krandom_noise_multiplier(eps=50, T=25, N=50, K=20, L=1, c=C_001, sided="two-sided") == pytest.approx(
        C_001 * 25 / (1.4158013 * 50), rel=1e-6)


def test_noise_ratio_where_b_exists_matches_the_referee_table():
    assert E.krandom_noise_ratio(eps=30, T=25, N=50, K=40, L=1, c=C_001, sided="paper") == pytest.approx(0.725, abs=1e-3)
    assert E.krandom_noise_ratio(eps=30, T=25, N=50, K=40, L=1, c=C_001, sided="two-sided") == pytest.approx(1.102, abs=1e-3)
    assert E.krandom_noise_ratio(eps=50, T=200, N=50, K=20, L=1, c=C_001, sided="two-sided") == pytest.approx(1.165, abs=1e-3)
    with pytest.raises(ValueError, match="sided"):
        E.krandom_noise_ratio(eps=30, T=25, N=50, K=40, L=1, c=C_001, sided="one")
    with pytest.raises(ValueError, match="K=60 is out of range"):
        E.krandom_b_two_sided(eps=30, T=25, N=50, K=60)


def _closed(z, q, eps, side):
    """The hockey-stick divergence of N(0, z^2) and (1-q)N(0, z^2) + qN(1, z^2) by its crossing point."""
    a = math.exp(eps)
    if side == "upper":
        o = z * z * math.log((a - 1 + q) / q) + 0.5
        return (1 - q) * stats.norm.sf(o / z) + q * stats.norm.sf((o - 1) / z) - a * stats.norm.sf(o / z)
    x = 1 / a - 1 + q
    if x <= 0:
        return 0.0
    o = z * z * math.log(x / q) + 0.5
    return stats.norm.cdf(o / z) - a * ((1 - q) * stats.norm.cdf(o / z) + q * stats.norm.cdf((o - 1) / z))


@pytest.mark.parametrize("z,q,eps", [(0.5, 0.4, 1.0), (1.5, 0.8, 1.2), (3.859, 0.4, 0.25), (0.278, 0.4, 2.0)])
def test_mixture_hockey_stick_against_the_crossing_point_formula(z, q, eps):
    for side in ("upper", "lower"):
        assert E.mixture_hockey_stick(z=z, q=q, eps=eps, side=side) == pytest.approx(_closed(z, q, eps, side),
                                                                                   rel=1e-7, abs=1e-14)


def test_mixture_hockey_stick_by_hand():
    # q = 1: the Gaussian mechanism, delta(1) at sigma = 1 = Phi(-0.5) - e Phi(-1.5) = 0.308538 - 0.181601
    assert E.mixture_hockey_stick(z=1.0, q=1.0, eps=1.0, side="upper") == pytest.approx(0.126937, abs=1e-6)
    # the kept side vanishes once eps >= -ln(1 - q) (ln(m/p) >= ln(1 - q) everywhere)
    assert E.mixture_hockey_stick(z=0.3, q=0.4, eps=0.52, side="lower") == 0.0
    assert E.mixture_hockey_stick(z=0.3, q=0.4, eps=0.52, side="upper") > 0.2
    with pytest.raises(ValueError, match="side"):
        E.mixture_hockey_stick(z=1.0, q=0.5, eps=1.0, side="both")
    with pytest.raises(ValueError, match="q=0 is out of range"):
        E.mixture_hockey_stick(z=1.0, q=0.0, eps=1.0, side="upper")


# ---------------------------------------------------------------- Sec. III-A / Appendix B
def test_basic_composition_by_hand():
    r = E.basic_composition(eps=60, delta=0.01, n=25)
    z = C_001 * 25 / 60
    d1 = stats.norm.cdf(1 / (2 * z) - 2.4 * z) - math.exp(2.4) * stats.norm.cdf(-1 / (2 * z) - 2.4 * z)
    assert r.per_release_eps == pytest.approx(2.4) and not r.classic_range
    assert r.delta_1 == pytest.approx(d1, rel=1e-9) and r.delta_1 == pytest.approx(6.2493e-4, rel=1e-3)
    assert r.argument_delta == pytest.approx(25 * d1)
    assert r.exact_eps == pytest.approx(15.66, abs=0.01)  # wei2020/01: 15.7 at eps = 60
    assert r.exact_delta < 1e-40
    one = E.basic_composition(eps=0.5, delta=0.01, n=1)
    assert one.classic_range and one.argument_delta == one.delta_1 == pytest.approx(one.exact_delta)
    with pytest.raises(ValueError, match="n=0 is out of range"):
        E.basic_composition(eps=60, delta=0.01, n=0)


# ---------------------------------------------------------------- Remark 1 vs eq. (5)
def test_aggregate_sensitivity_by_hand():
    r = E.aggregate_sensitivity(sizes=[100, 900], C=1.0)
    np.testing.assert_allclose(r["measured"], [0.002, 0.002], rtol=1e-12)  # 2C/|D| for both clients
    np.testing.assert_allclose(r["eq5"], [0.002, 0.002], rtol=1e-12)
    np.testing.assert_allclose(r["paper"], [0.002, 0.018], rtol=1e-12)  # 2C p_i / m with m = 100
    eq = E.aggregate_sensitivity(sizes=[500, 500], C=2.0)
    np.testing.assert_allclose(eq["measured"], [0.004, 0.004], rtol=1e-12)
    with pytest.raises(ValueError, match="sizes"):
        E.aggregate_sensitivity(sizes=[10], C=1.0)
    with pytest.raises(ValueError, match="C=0 is out of range"):
        E.aggregate_sensitivity(sizes=[10, 20], C=0)


# ---------------------------------------------------------------- Appendix G, eq. (87)
def test_eq87_sides_identical_clients_differ_by_K():
    w = torch.arange(1.0, 5.0)
    lhs, rhs = E.eq87_sides(models=w.expand(6, -1), K=3)
    assert lhs == pytest.approx(30.0) and rhs == pytest.approx(10.0)  # ||w||^2 = 30, and 30/K


def test_eq87_sides_against_enumerating_every_subset():
    W = torch.randn(5, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    for K in (1, 2, 3, 5):
        subsets = list(itertools.combinations(range(5), K))
        lhs = np.mean([float((W[list(s)].mean(dim=0) ** 2).sum()) for s in subsets])
        rhs = np.mean([float((W[list(s)] ** 2).sum()) / K**2 for s in subsets])
        got = E.eq87_sides(models=W, K=K)
        assert got[0] == pytest.approx(lhs) and got[1] == pytest.approx(rhs)
    with pytest.raises(ValueError, match="K=6 is out of range"):
        E.eq87_sides(models=W, K=6)


# ---------------------------------------------------------------- Appendix D, theta
def _toy_data():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(30, 4, generator=g), torch.randint(0, 3, (30,), generator=g)
    return FederatedData(x, y, torch.tensor([10, 20]), x[:5], y[:5])


def test_local_inexactness_is_one_at_the_start_and_falls_with_a_descent_step():
    model, data = MultinomialLogReg(4, 3), _toy_data()
    start = torch.randn(model.dim, generator=torch.Generator().manual_seed(1))
    np.testing.assert_allclose(E.local_inexactness(model=model, start=start, local=start.expand(2, -1).clone(),
                                                   data=data, mu=0.5), [1.0, 1.0], rtol=1e-6)
    from fldp import engine
    x, y, mask = data.padded(torch.arange(2))
    g0 = engine.gradient(model, start.expand(2, -1), x, y, mask)
    theta = E.local_inexactness(model=model, start=start, local=start - 0.05 * g0, data=data, mu=0.0, grad_start=g0)
    assert np.all(theta < 1)
    with pytest.raises(ValueError, match="local must be"):
        E.local_inexactness(model=model, start=start, local=start.expand(3, -1), data=data, mu=0.0)


# ---------------------------------------------------------------- the catalogue
def test_the_catalogue_holds_the_chapters_derived_claims():
    assert set(E.CLAIMS) == {"assump1-vs-mlp", "appF-one-sided", "krandom-noise-variance", "remark1-artefact",
                             "basic-composition-argument", "thm3-not-thm2-at-K=N", "theta-exact-solver",
                             "appG-eq87"}
    for claim in E.CLAIMS.values():
        assert isinstance(claim, V.Claim) and claim.kind == "derived"
        assert claim.source.strip() and claim.falsifier.strip() and claim.setting_note.strip()
