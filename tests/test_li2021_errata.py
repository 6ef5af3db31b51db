"""Li, Chang & Chi (secure FedAvg), the errata chapter's functions (fldp/papers/li2021/errata.py),
pinned to values worked out by hand, and its catalogue of claims."""
from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from fldp import verdicts as V
from fldp.data import FederatedData
from fldp.papers.li2021 import errata as E, theory as lt

ROOT = Path(__file__).resolve().parent.parent


# -- the step-size conditions -----------------------------------------------------------------------
def test_condition_ratios_closed_forms():
    # eta_t = 20/(100 + t): the lemma needs (100 + Q)/100 <= 2, the theorem (100 + Q)/101 <= 2
    assert E.lemma1_condition_ratio(alpha=100, Q=101) == pytest.approx(2.01, rel=1e-14)
    assert E.theorem1_condition_ratio(alpha=100, Q=101) == pytest.approx(201 / 101, rel=1e-14)  # 1.990
    assert E.lemma1_condition_ratio(alpha=100, Q=102) == pytest.approx(2.02, rel=1e-14)
    assert E.theorem1_condition_ratio(alpha=100, Q=102) == 2.0  # 202/101: the theorem's still holds
    assert E.theorem1_condition_ratio(alpha=100, Q=103) > 2
    window = [q for q in range(1, 300) if E.theorem1_condition_ratio(alpha=100, Q=q) <= 2
              < E.lemma1_condition_ratio(alpha=100, Q=q)]
    assert window == [101, 102]  # Q in (alpha, alpha + 2]
    # Theorem 1's own schedule at kappa = 1.125: alpha = 9, eta_0/eta_10 = 19/9, eta_1/eta_10 = 19/10
    assert E.lemma1_condition_ratio(alpha=9, Q=10) == pytest.approx(19 / 9, rel=1e-14)
    assert E.theorem1_condition_ratio(alpha=9, Q=10) == pytest.approx(1.9, rel=1e-14)
    assert E.theorem1_condition_ratio(alpha=5, Q=1) == 1.0  # Q = 1: eta_{t+1} <= 2 eta_{t+1}
    # the paper's Q: eta_0/eta_Q = 1.01 and 1.10
    assert [E.lemma1_condition_ratio(alpha=100, Q=q) for q in (1, 10)] == pytest.approx([1.01, 1.1], rel=1e-14)


def test_condition_ratios_step_by_step():
    # by hand: eta = 4, 2, 1, 0.5 and Q = 2: the one upload (t + 1 = 2) has max(4, 2)/1 = 4;
    # the theorem's eta_{t+1}/eta_{t+2}: 2/1 and 1/0.5, both 2
    assert E.condition_ratios(etas=[4.0, 2.0, 1.0, 0.5], Q=2) == {"lemma1": 4.0, "theorem1": 2.0}
    # the experiments' schedule agrees with the closed forms (the worst case is at the start)
    etas = lt.paper_lr(t=np.arange(2000))
    for Q in (1, 10, 101, 102):
        r = E.condition_ratios(etas=etas, Q=Q)
        assert r["lemma1"] == pytest.approx(E.lemma1_condition_ratio(alpha=100, Q=Q), rel=1e-12)
        assert r["theorem1"] == pytest.approx(E.theorem1_condition_ratio(alpha=100, Q=Q), rel=1e-12)
    with pytest.raises(ValueError, match="etas"):
        E.condition_ratios(etas=[1.0, 0.5], Q=2)


def test_mended_alpha_gives_both_conditions():
    assert E.mended_alpha(kappa=1.125, Q=10) == 10.0  # max(9, 10)
    assert E.mended_alpha(kappa=2.0, Q=10) == 16.0    # max(16, 10)
    for kappa, Q in itertools.product((1.125, 2.0, 12.5), (1, 10, 50, 120)):
        a = E.mended_alpha(kappa=kappa, Q=Q)
        r = E.condition_ratios(etas=2.0 / (a + np.arange(4 * Q + 2)), Q=Q)
        assert r["lemma1"] <= 2 + 1e-12 and r["theorem1"] <= 2 + 1e-12
    with pytest.raises(ValueError, match="kappa"):
        E.mended_alpha(kappa=0.0, Q=1)


# -- eq. (12b) --------------------------------------------------------------------------------------
def test_noise_term_B_by_hand_and_from_eq9():
    # Q = b = 1, n_k = 325, K = 50: 64 * 106 * 4 * ln(1.5625/(325^2 1e-8)) / (50 * 325^2 * 0.25)
    #   = 27136 * ln(1479.29) / 1320312.5 = 27136 * 7.29931 / 1320312.5 = 0.150020
    B = E.noise_term_B(M=106, Q=1, b=1, G=2.0, n_k=325, K=50, eps=0.5, delta=1e-4)
    assert B == pytest.approx(0.150020, rel=1e-5)
    # it is M sigma^2 / (K eta^2) with eq. (9)'s sigma and Lemma 1's Df, at any eta
    for Q, K, eta in ((1, 50, 0.3), (10, 10, 0.05)):
        s = lt.sigma_eq9(eps=0.5, delta=1e-4, q=Q / 325, sensitivity_df=lt.lemma1_sensitivity(Q=Q, G=2.0, eta=eta))
        assert 106 * s**2 / (K * eta**2) == pytest.approx(
            E.noise_term_B(M=106, Q=Q, b=1, G=2.0, n_k=325, K=K, eps=0.5, delta=1e-4), rel=1e-12)
    with pytest.raises(ValueError, match="n_k"):
        E.noise_term_B(M=1, Q=10, b=40, G=1.0, n_k=325, K=1, eps=1.0, delta=1e-4)
    with pytest.raises(ValueError, match="delta"):
        E.noise_term_B(M=1, Q=1, b=1, G=1.0, n_k=325, K=1, eps=1.0, delta=0.01)


def test_B_ratio_factors_multiply_to_the_ratio():
    kw = dict(Q=10, b=1, n=32500, L=1.386, delta=1e-4)
    f = E.B_ratio_factors(**kw, n_k=325, K=50)
    assert f["8(Q-1)^2+1"] == 649.0 and f["K n_k^2/n"] == pytest.approx(162.5, rel=1e-14)
    assert f["log n"] == pytest.approx(10.38900, abs=1e-5)
    assert f["1/L^2"] == pytest.approx(1 / 1.386**2, rel=1e-14)
    printed = lt.theorem1_B(M=106, G=2.0, eps=0.5, **kw)
    derived = E.noise_term_B(M=106, Q=10, b=1, G=2.0, n_k=325, K=50, eps=0.5, delta=1e-4)
    assert math.prod(f.values()) == pytest.approx(printed / derived, rel=1e-12)


def test_theorem1_terms_under_a_rescaled_loss():
    kw = dict(L=1.5, mu=0.01, G=2.0, Gamma=0.1, gamma_sq=[1.0, 2.0], w0_dist_sq=4.0, M=10, n=2000, N=20, K=2,
              Q=3, b=1, eps=0.5, delta=1e-4)
    one, big = E.theorem1_terms(**kw), E.theorem1_terms(**kw, scale=10.0)
    assert one["B"] == pytest.approx(lt.theorem1_B(M=10, Q=3, b=1, G=2.0, n=2000, L=1.5, eps=0.5, delta=1e-4), rel=1e-14)
    # A = (1 + 2)/20^2 + 8 * 4 * 4 + 6 * 1.5 * 0.1 = 0.0075 + 128 + 0.9
    assert one["A"] == pytest.approx(128.9075, rel=1e-12)
    assert one["init"] == pytest.approx(2 * 1.5 * 4.0, rel=1e-14)
    for k in ("A/mu", "C/mu", "init", "B_derived/mu"):
        assert big[k] / one[k] == pytest.approx(10.0, rel=1e-12)
    assert big["B/mu"] / one["B/mu"] == pytest.approx(0.1, rel=1e-12)  # the printed B: 1/c
    with pytest.raises(ValueError, match="gamma_sq"):
        E.theorem1_terms(**{**kw, "gamma_sq": [1.0]})


# -- Remark 1 ---------------------------------------------------------------------------------------
def test_eq13_terms_and_the_rounds_of_theorem1():
    kw = dict(Q=2, M=106, b=1, G=2.0, n=32500, L=1.386, eps=0.5, delta=1e-4, K=10, sum_p2_gamma2=0.001, Gamma=0.08)
    t = E.eq13_terms(**kw)
    assert t["drift"] == pytest.approx(1.1 * 4 * 2, rel=1e-14)
    assert t["heterogeneity"] == pytest.approx((0.001 + 1.386 * 0.08) / 2, rel=1e-14)
    assert sum(t.values()) == pytest.approx(lt.rounds_eq13(**kw), rel=1e-14)
    # noise = 106 * 4 * ln(32500) * ln(4/(32500e-8)) * 32 / (32500 * 1.386^2 * 0.25)
    assert t["noise"] == pytest.approx(106 * 4 * math.log(32500) * math.log(4 / 32500e-8) * 32
                                       / (32500 * 1.386**2 * 0.25), rel=1e-10)
    # (1 + 2 + 3 + 2 * 0.5 * 2 * 4) / 2 = 7
    assert E.rounds_theorem1_full(A=1.0, B=2.0, C=3.0, mu=0.5, L=2.0, w0_dist_sq=4.0, Q=2) == 7.0


# -- eq. (12c) and line 21 --------------------------------------------------------------------------
def test_gamma_sum_to_K():
    # F* = 0.4, sum_N p_k F_k^* = 0.3: the first K = 10 of 100 clients carry 0.03 on average
    assert E.gamma_sum_to_K(F_star=0.4, Gamma=0.1, K=10, N=100) == pytest.approx(0.37, rel=1e-14)
    assert E.gamma_sum_to_K(F_star=0.4, Gamma=0.1, K=100, N=100) == pytest.approx(0.1, rel=1e-14)
    with pytest.raises(ValueError, match="Gamma"):
        E.gamma_sum_to_K(F_star=0.1, Gamma=0.2, K=1, N=2)
    with pytest.raises(ValueError, match="K"):
        E.gamma_sum_to_K(F_star=0.4, Gamma=0.1, K=101, N=100)


def test_line21_factor_and_its_spread():
    p = [0.5, 0.25, 0.125, 0.125]
    assert E.line21_factor(p=p, selected=np.array([0, 1]), K=2) == 1.5   # (4/2)(0.5 + 0.25)
    assert E.line21_factor(p=p, selected=np.arange(4), K=2) == 2.0       # S_0 = [N]: N/K
    assert E.line21_factor(p=np.full(10, 0.1), selected=np.array([3, 7]), K=2) == pytest.approx(1.0, rel=1e-14)
    # p = 0.4, 0.1, 0.4, 0.1 and K = 2: the six pairs give 1, 1, 1, 1, 1.6, 0.4 (variance 0.12)
    s = E.line21_factor_spread(p=[0.4, 0.1, 0.4, 0.1], K=2)
    pairs = [2 * (a + b) for a, b in itertools.combinations([0.4, 0.1, 0.4, 0.1], 2)]
    assert s["std"] == pytest.approx(float(np.std(pairs)), rel=1e-12) == pytest.approx(math.sqrt(0.12), rel=1e-12)
    assert (s["min"], s["max"]) == pytest.approx((0.4, 1.6), rel=1e-12)
    with pytest.raises(ValueError, match="p must be"):
        E.line21_factor(p=[0.5, 0.4], selected=np.array([0]), K=1)
    with pytest.raises(ValueError, match="selected"):
        E.line21_factor(p=p, selected=np.array([1, 1]), K=2)


def test_line21_noise_falls_with_K():
    assert E.aggregated_noise_std(sigma=2.0, p=np.full(100, 0.01), K=4) == pytest.approx(1.0, rel=1e-12)
    p = np.r_[np.full(50, 0.015), np.full(50, 0.005)]  # unequal: sigma sqrt((N/K) sum p^2) = sqrt(10 * 0.0125)
    assert E.aggregated_noise_std(sigma=1.0, p=p, K=10) == pytest.approx(math.sqrt(0.125), rel=1e-12)
    sim = [E.line21_noise_std(sigma=1.0, p=np.full(100, 0.01), K=K, draws=40000, seed=1) for K in (10, 100)]
    assert sim == pytest.approx([1 / math.sqrt(10), 0.1], rel=0.03)
    assert E.line21_noise_std(sigma=1.0, p=p, K=10, draws=40000, seed=2) == pytest.approx(math.sqrt(0.125), rel=0.03)


# -- the sampler ------------------------------------------------------------------------------------
def test_inclusion_probabilities_by_hand_and_simulated():
    # n_k = 10, b = 3, Q = 2: 4 blocks, 1 - (3/4)^2; 1 - 0.7^2; 6 of 10 rows
    assert E.inclusion_probabilities(n_k=10, b=3, Q=2) == pytest.approx(
        {"blocks": 0.4375, "independent": 0.51, "one pass": 0.6}, rel=1e-12)
    assert E.inclusion_probabilities(n_k=10, b=3, Q=5)["one pass"] == 1.0
    assert E.inclusion_probabilities(n_k=325, b=1, Q=10)["independent"] == pytest.approx(0.0303467, abs=1e-7)
    for s, want in E.inclusion_probabilities(n_k=10, b=3, Q=2).items():
        assert E.simulate_inclusion(n_k=10, b=3, Q=2, sampler=s, draws=50000, seed=0) == pytest.approx(want, abs=0.01)
    with pytest.raises(ValueError, match="sampler"):
        E.simulate_inclusion(n_k=10, b=3, Q=2, sampler="poisson", draws=10, seed=0)
    with pytest.raises(ValueError, match="b"):
        E.inclusion_probabilities(n_k=10, b=11, Q=1)


# -- Assumptions 2-4 --------------------------------------------------------------------------------
def test_bias_curvature():
    assert E.bias_curvature(bias=0.0) == 0.25
    assert E.bias_curvature(bias=math.log(3)) == pytest.approx(0.1875, rel=1e-14)  # s = 3/4: 3/16
    assert E.bias_curvature(bias=-math.log(3)) == pytest.approx(0.1875, rel=1e-14)
    assert E.bias_curvature(bias=30.0) < 1e-13
    with pytest.raises(ValueError, match="bias"):
        E.bias_curvature(bias=float("nan"))


def test_clipped_mean_bias():
    # rows (3, 0) and (-1, 0) clipped to 2: (2, 0) and (-1, 0), means (0.5, 0) against (1, 0)
    r = E.clipped_mean_bias(grads=[[3.0, 0.0], [-1.0, 0.0]], G=2.0)
    assert r == pytest.approx({"clipped": 0.5, "max_norm": 3.0, "mean_norm": 2.0, "bias": 0.5}, rel=1e-14)
    assert E.clipped_mean_bias(grads=[[1.0, 1.0], [-1.0, -1.0]], G=2.0)["bias"] == 0.0
    with pytest.raises(ValueError, match="grads"):
        E.clipped_mean_bias(grads=[1.0, 2.0], G=1.0)


def test_gradients_at_optimum_average_to_zero():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(60, 3, generator=g)
    y = (torch.rand(60, generator=g) < 0.3 + 0.4 * x[:, 0]).long()  # both classes, not separable
    data = FederatedData(x, y, torch.tensor([30, 30]), x[:5], y[:5])
    w, grads = E.gradients_at_optimum(data=data, l2=1e-3)
    assert w.shape == (4,) and grads.shape == (60, 4)
    assert np.linalg.norm(grads.mean(axis=0)) < 1e-6  # the first-order condition at w*
    assert np.linalg.norm(grads, axis=1).max() > 1e-3


# -- the catalogue ----------------------------------------------------------------------------------
def test_catalogue():
    assert len(E.CLAIMS) == 14
    assert all(c.kind == "derived" and c.source.strip() and c.falsifier.strip() for c in E.CLAIMS.values())
    assert {c.setting for c in E.CLAIMS.values()} <= set(V.SETTINGS)
    # every claim is named after a finding of the referee notes, whose summary table lists it
    notes = (ROOT / "docs" / "referee" / "li2021.md").read_text()
    keys = set(re.findall(r"^\| `([^`]+)`", notes, flags=re.M))
    assert {cid.split(" ")[0] for cid in E.CLAIMS} <= keys
