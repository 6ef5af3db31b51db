"""fldp.papers.zhou.errata: the formulas of the Zhou et al. errata chapter (notebooks/zhou/05_errata)
against values computed by hand, and their argument checks."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from fldp import accounting, models
from fldp.papers.zhou import algorithm as alg, errata as er, theory as th
from fldp.verdicts import Claim


# -- A5: Lemmas 1-2 under round robin ------------------------------------------------------------
def test_round_robin_sets_are_algorithm_1s_order():
    assert er.round_robin_sets(N=10, b=1, T=3).tolist() == [[0], [1], [2]]
    assert er.round_robin_sets(N=10, b=3, T=4).tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 0, 1]]
    sets = er.round_robin_sets(N=10, b=5, T=7)
    assert np.bincount(sets.ravel(), minlength=10).tolist() == alg.replies(N=10, b=5, T=7).tolist()


NU = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])  # three equal clients, nu_bar = (1/3, 1/3)


def test_round_robin_is_biased_each_round():
    m = er.selection_moments(d_i=[5, 5, 5], nu=NU, b=1, T=4, sampler="round_robin")
    # round t queries client t - 1: nu^b = 3 (1/3) nu_i, minus nu_bar
    assert m["bias"] == pytest.approx([math.sqrt(5) / 3, math.sqrt(5) / 3, math.sqrt(2) / 3, math.sqrt(5) / 3])
    assert m["second"] == pytest.approx([5 / 9, 5 / 9, 2 / 9, 5 / 9])


def test_uniform_sets_are_unbiased_with_lemma_2s_exact_middle_line():
    for b, second in ((1, 4 / 9), (2, 1 / 9), (3, 0.0)):
        m = er.selection_moments(d_i=[5, 5, 5], nu=NU, b=b, T=2, sampler="uniform")
        assert np.all(m["bias"] < 1e-15)
        # App. C: (N - b)/(b N (N - 1)) sum_i ||nu_i - nu_bar||^2 = (N - b)/(6 b) * 12/9
        assert m["second"] == pytest.approx([second] * 2)
        assert second == pytest.approx((3 - b) / (b * 3 * 2) * 12 / 9)


def test_selection_moments_checks_its_arguments():
    with pytest.raises(ValueError, match="sampler"):
        er.selection_moments(d_i=[1, 1, 1], nu=NU, b=1, T=1, sampler="random")
    with pytest.raises(ValueError, match="nu has shape"):
        er.selection_moments(d_i=[1, 1], nu=NU, b=1, T=1, sampler="uniform")
    with pytest.raises(ValueError, match="b=4"):
        er.selection_moments(d_i=[1, 1, 1], nu=NU, b=4, T=1, sampler="uniform")


# -- A6: replies -----------------------------------------------------------------------------------
def test_max_replies_cdf_by_hand():
    assert er.max_replies_cdf(N=2, T=2, m=1) == pytest.approx(0.5)      # only (1, 1)
    assert er.max_replies_cdf(N=3, T=3, m=1) == pytest.approx(6 / 27)   # 3! of 3^3
    assert er.max_replies_cdf(N=3, T=3, m=0) == 0.0
    assert er.max_replies_cdf(N=3, T=3, m=3) == pytest.approx(1.0)
    assert er.max_replies_quantile(N=2, T=2, level=0.5) == 1
    assert er.max_replies_quantile(N=2, T=2, level=0.6) == 2
    with pytest.raises(ValueError, match="m=-1"):
        er.max_replies_cdf(N=2, T=2, m=-1)


def test_max_replies_cdf_agrees_with_a_simulation():
    rng = np.random.default_rng(0)
    counts = np.stack([np.bincount(rng.integers(0, 10, 22), minlength=10) for _ in range(20000)]).max(axis=1)
    assert er.max_replies_cdf(N=10, T=22, m=4) == pytest.approx(np.mean(counts <= 4), abs=0.015)


def test_reply_spend_of_table_1s_first_cell():
    cal = alg.calibrate(mechanism="laplace", eps=1.0, b=1, T=22, N=10, d_i=6000)
    assert cal.noise_multiplier == pytest.approx(2.2)  # bT/(N eps)
    spend = er.reply_spend(cal=cal, count=3, delta=1e-5)
    assert spend["pure"] == pytest.approx(3 / 2.2)
    assert spend["pld"] <= spend["pure"] + 1e-9
    with pytest.raises(ValueError, match="Laplace Calibration"):
        er.reply_spend(cal=dataclasses.replace(cal, mechanism="gaussian"), count=1, delta=1e-5)


# -- A7: the cap on Y_T ----------------------------------------------------------------------------
UNIT = dict(b=1, N=2, p=1, d=1.0, eps=1.0, xi1=1.0, G=1.0, lam=1.0, mu=1.0)  # gamma = 2, v = 8


def test_y_T_cap_by_hand():
    # T = 1: eta_0 = (2/mu)/gamma = 1, so (G/mu + G + sqrt(8))^2 = 12 + 8 sqrt(2)
    assert er.y_T_cap(T=1, **UNIT) == pytest.approx(12 + 8 * math.sqrt(2))
    # T -> inf: (G/mu + (2/mu) sqrt(8))^2 = 33 + 8 sqrt(2)
    assert er.y_T_cap(T=10**9, **UNIT) == pytest.approx(33 + 8 * math.sqrt(2), rel=1e-6)
    with pytest.raises(ValueError, match="integers >= 1"):
        er.y_T_cap(T=1.5, **UNIT)


def test_informative_T_brackets_where_the_bound_is_below_the_cap():
    k = dict(b=1, N=10, p=7840, d=60000.0, eps=1.0, xi1=300.0, G=17.95, lam=1.5, mu=1.0, Gamma=80.0, Y0=100.0)
    cap_kw = {n: k[n] for n in ("b", "N", "p", "d", "eps", "xi1", "G", "lam", "mu")}
    out = er.informative_T(T_max=500, **k)
    last = out["last"]
    bound = lambda T: th.laplace_bound(t=T, T=T, **k)  # noqa: E731
    assert bound(last) <= er.y_T_cap(T=last, **cap_kw) and bound(last + 1) > er.y_T_cap(T=last + 1, **cap_kw)
    assert out["above_from"] == last + 1
    assert out["cap_limit"] == pytest.approx(er.y_T_cap(T=10**9, **cap_kw), rel=1e-6)
    assert er.informative_T(T_max=last, **k)["above_from"] is None  # the grid ends below the cap


# -- A8, A9: the Laplace bound -----------------------------------------------------------------------
FIT = dict(N=10, p=7840, d=60000.0, xi1=300.0, G=17.95, lam=1.5, mu=1.0, Gamma=80.0, Y0=100.0)


def test_min_bound_is_2_C2_b_T_star():
    out = er.min_bound(b=1, eps=1.0, **FIT)
    C = th.laplace_C(eps=1.0, **FIT)
    assert out["U"] == pytest.approx(2 * C.C2 * 1 * out["T"])  # U* = 2 k T* at the minimiser of (a + k T^2)/(T + gamma)
    assert out["ratio"] == pytest.approx(out["U"] / 100.0)
    assert round(out["T"]) == 22  # Table I's T*(b* = 1) at eps = 1


def test_solution3_slope_and_margin_by_hand():
    assert er.solution3_slope(C1=4.0, C3=-1.0, gamma=2.0, b=2.0) == pytest.approx(-0.25)
    assert er.solution3_margin(Y0=1.0, lam=2.0, mu=1.0, Gamma=0.5) == pytest.approx(12.0)  # gamma = 4
    C = th.laplace_C(eps=1.0, **FIT)
    assert er.solution3_margin(Y0=100.0, lam=1.5, mu=1.0, Gamma=80.0) == pytest.approx(C.C1 / 10 + C.C3)
    h = 1e-6
    U = lambda T: th.U_laplace(T=T, b=10.0, **C._asdict(), gamma=3.0)  # noqa: E731
    assert (U(h) - U(0.0)) / h == pytest.approx(er.solution3_slope(C1=C.C1, C3=C.C3, gamma=3.0, b=10.0), rel=1e-4)
    with pytest.raises(ValueError, match="b=0.5"):
        er.solution3_slope(C1=1.0, C3=1.0, gamma=1.0, b=0.5)


# -- A10: the Gaussian U ---------------------------------------------------------------------------
def test_gaussian_curvature_by_hand_and_numerically():
    cf = er.gaussian_curvature(E1=2.0, E2=-3.0, gamma=1.0, T=1.0, b=1.0)
    assert cf == pytest.approx({"U_TT": -0.25, "U_bb": 2.0, "U_Tb": 0.5})
    U = lambda T, b: th.U_gaussian(T=T, b=b, E1=2.0, E2=-3.0, E3=0.0, gamma=1.0)  # noqa: E731
    H = er.numerical_hessian(U, T=1.0, b=1.5, h=1e-4)
    cf = er.gaussian_curvature(E1=2.0, E2=-3.0, gamma=1.0, T=1.0, b=1.5)
    assert H == pytest.approx(np.array([[cf["U_TT"], cf["U_Tb"]], [cf["U_Tb"], cf["U_bb"]]]), rel=1e-5)
    with pytest.raises(ValueError, match="its step"):
        er.numerical_hessian(U, T=0.0, b=1.5)


# -- A12: the Gamma recipe ---------------------------------------------------------------------------
def test_label_skew_gamma_by_hand():
    two = er.label_skew_gamma(label_dists=[[1, 0], [0, 1]])
    assert two["gamma"] == pytest.approx(math.log(2)) and two["recipe"] == pytest.approx(0.0)  # underestimates
    mixed = er.label_skew_gamma(label_dists=[[1] * 10, [10] + [0] * 9])
    h_mix = -(0.55 * math.log(0.55) + 9 * 0.05 * math.log(0.05))
    assert mixed["gamma"] == pytest.approx(h_mix - 0.5 * math.log(10))
    assert mixed["recipe"] == pytest.approx(0.5 * math.log(10)) and mixed["recipe"] > mixed["gamma"]  # overestimates
    assert er.label_skew_gamma(label_dists=[[1, 0], [0, 1]], weights=[3, 1])["gamma"] == pytest.approx(
        -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    with pytest.raises(ValueError, match="label_dists has shape"):
        er.label_skew_gamma(label_dists=[1, 2])


# -- A13: the released statistics ---------------------------------------------------------------------
def test_local_statistics_by_hand():
    model = models.MultinomialLogReg(in_features=2, num_classes=2)
    x, y = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), torch.tensor([0, 1, 1])
    zero = torch.zeros(4)
    assert er.local_statistics(model, x, y, theta0=zero, steps=0, lr=1.0) == pytest.approx(
        {"F_star": math.log(2), "gap": 0.0})
    # one step from 0: gradient X^T (1/2 - onehot)/3, so theta moves by lr (1/3) X^T (onehot - 1/2)
    step = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]).T @ (torch.tensor([[1.0, 0], [0, 1], [0, 1]]) - 0.5) / 3
    one = er.local_statistics(model, x, y, theta0=zero, steps=1, lr=1.0)
    assert one["gap"] == pytest.approx(float((step ** 2).sum()))
    assert er.local_statistics(model, x[:2], y[:2], theta0=zero, steps=1, lr=1.0) != one  # a neighbour differs
    with pytest.raises(ValueError, match="same number"):
        er.local_statistics(model, x, y[:2], theta0=zero, steps=1, lr=1.0)


def test_with_release_epsilon():
    lap = accounting.laplace(noise_multiplier=2.0)
    assert er.with_release_epsilon(training=lap, release_differs=True, delta=1e-5) == math.inf
    assert er.with_release_epsilon(training=lap, release_differs=False, delta=1e-5) == pytest.approx(0.5, abs=1e-3)


# -- A17: SNR ----------------------------------------------------------------------------------------
def test_snr_bound_by_hand():
    assert er.snr_bound(sigma=2.0, p=4, b=1, T=4, xi2=1.0) == pytest.approx(
        {"noise_norm": 4.0, "per_round": 0.25, "run": 0.5})
    # Fig. 7(b)'s smallest cell with eq. (5): sigma 27.4 at d_i = 600
    sigma = th.gaussian_sigma(eps=0.1, delta=1e-5, b=10, T=100, N=10, d_i=600, xi2=10.0,
                              c2=math.sqrt(2 * math.log(1.25e5)))
    assert er.snr_bound(sigma=sigma, p=7840, b=10, T=100, xi2=10.0)["run"] == pytest.approx(
        10 * 10 / (sigma * math.sqrt(784)))
    with pytest.raises(ValueError, match="sigma"):
        er.snr_bound(sigma=0.0, p=4, b=1, T=4, xi2=1.0)


def test_the_catalogue():
    assert len(er.CLAIMS) == 10
    assert all(isinstance(c, Claim) and c.kind == "derived" and c.source and c.falsifier for c in er.CLAIMS.values())
