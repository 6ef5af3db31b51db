"""Tests for fldp.mechanisms: every number is worked out here, or checked against an
independent oracle (numerical integration of the privacy-loss definition, closed forms,
dp_accounting's own implementation), never against this module's earlier output."""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
import torch
from scipy import integrate, special, stats

from fldp import mechanisms as m


def gen(seed: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(seed)
    return g


# ----------------------------------------------------------------------------- classic


def test_classic_c_and_sigma_small_eps():
    # delta = 1e-5: c = sqrt(2 ln(1.25e5)) = sqrt(2 * 11.736069) = sqrt(23.472138) = 4.844805
    c = m.classic_gaussian_c(delta=1e-5)
    assert c == pytest.approx(math.sqrt(2 * math.log(125_000)), rel=1e-15)
    assert c == pytest.approx(4.844805, abs=1e-6)
    # eps = 0.5, Delta = 1: sigma = 4.844805 / 0.5 = 9.689610
    assert m.classic_gaussian_sigma(eps=0.5, delta=1e-5, sensitivity=1.0) == pytest.approx(9.689610, abs=1e-6)
    assert m.classic_gaussian_valid(eps=0.5) is True
    assert m.classic_gaussian_valid(eps=1.0) is False


def test_classic_sigma_wei_setting():
    # Wei et al. 2020 Sec. VI: delta = 0.01, eps = 60; Delta s_U = 2C/m with C = 10, m = 1200.
    # c = sqrt(2 ln 125) = sqrt(2 * 4.8283137) = sqrt(9.6566275) = 3.1075114
    # (not 3.10727: 3.10727^2 = 9.65513).
    c = m.classic_gaussian_c(delta=0.01)
    assert c == pytest.approx(3.1075114, abs=1e-7)
    sens = 2 * 10 / 1200  # = 1/60
    # sigma = c * (1/60) / 60 = 3.1075114 / 3600 = 8.631976e-4; eps >= 1 is computed, not refused
    assert m.classic_gaussian_sigma(eps=60, delta=0.01, sensitivity=sens) == pytest.approx(3.1075114 / 3600, rel=1e-7)
    assert m.classic_gaussian_sigma(eps=60, delta=0.01, sensitivity=sens) == pytest.approx(8.631976e-4, rel=1e-6)
    assert m.classic_gaussian_valid(eps=60) is False


# ----------------------------------------------------------------------- exact profile


def delta_by_integration(eps: float, sigma: float, sens: float) -> float:
    """Oracle: delta(eps) = E_{x ~ P}[max(0, 1 - e^{eps - L(x)})], P = N(0, sigma^2),
    P' = N(sens, sigma^2), L(x) = log p(x) - log p'(x); integrated with quad."""

    def loss(x):
        return stats.norm.logpdf(x, 0, sigma) - stats.norm.logpdf(x, sens, sigma)

    # L decreases in x; find where L = eps numerically (no closed form used).
    lo, hi = -1.0, 1.0
    while loss(lo) < eps:
        lo *= 2
    while loss(hi) > eps:
        hi *= 2
    from scipy.optimize import brentq

    x_star = brentq(lambda x: loss(x) - eps, lo, hi, xtol=1e-15 * max(1, abs(lo)))

    def integrand(x):
        return math.exp(stats.norm.logpdf(x, 0, sigma)) * -math.expm1(eps - loss(x))

    val, err = integrate.quad(integrand, x_star - 40 * sigma, x_star, epsabs=0, epsrel=1e-11,
                              limit=200)
    return val


@pytest.mark.parametrize(
    "eps, sigma, sens",
    [
        (0.5, 3.0, 1.0),
        (1.0, 1.0, 1.0),
        (3.0, 2.0, 1.0),  # tiny delta (~1e-5 region)
        (5.0, 0.5, 1.0),
        (10.0, 0.4845, 1.0),
        (0.0, 2.0, 1.0),
        (2.0, 0.05, 1 / 60),
    ],
)
def test_gaussian_delta_matches_integration(eps, sigma, sens):
    assert m.gaussian_delta(eps=eps, sigma=sigma, sensitivity=sens) == pytest.approx(
        delta_by_integration(eps, sigma, sens), rel=1e-8
    )


def test_gaussian_delta_at_eps_zero_closed_form():
    # delta(0) = TV(N(0,s^2), N(D,s^2)) = 2 Phi(D/(2s)) - 1; D = 1, s = 2: 2 Phi(0.25) - 1
    assert m.gaussian_delta(eps=0.0, sigma=2.0, sensitivity=1.0) == pytest.approx(2 * special.ndtr(0.25) - 1, rel=1e-12)
    assert m.gaussian_delta(eps=0.0, sigma=2.0, sensitivity=1.0) == pytest.approx(0.1974126, abs=1e-7)


def test_gaussian_delta_vectorised_and_large_eps():
    eps = np.array([0.0, 1.0, 10.0, 60.0, 100.0])
    vec = m.gaussian_delta(eps=eps, sigma=0.1, sensitivity=1.0)
    assert isinstance(vec, np.ndarray) and vec.shape == (5,)
    for e, d in zip(eps, vec):
        assert d == m.gaussian_delta(eps=float(e), sigma=0.1, sensitivity=1.0)
    assert np.all(np.isfinite(vec)) and np.all(np.diff(vec) <= 0)  # decreasing in eps
    # eps = 100 does not overflow and agrees with dp_accounting's independent
    # implementation: sigma = 0.1 -> (eps, delta) with delta = gaussian_delta(100, 0.1)
    d100 = m.gaussian_delta(eps=100.0, sigma=0.1, sensitivity=1.0)
    assert 0 < d100 < 1e-3
    assert dp_accounting.get_epsilon_gaussian(0.1, d100) == pytest.approx(100.0, rel=1e-9)
    assert delta_by_integration(100.0, 0.1, 1.0) == pytest.approx(d100, rel=1e-7)


def test_classic_conservative_for_small_eps():
    # eps = 0.5, delta = 1e-5: classic sigma 9.68961 gives exact delta 1.6e-8 << 1e-5
    s = m.classic_gaussian_sigma(eps=0.5, delta=1e-5, sensitivity=1.0)
    d = m.gaussian_delta(eps=0.5, sigma=s, sensitivity=1.0)
    assert d < 1e-5
    assert d == pytest.approx(delta_by_integration(0.5, s, 1.0), rel=1e-8)
    assert d == pytest.approx(1.6079e-8, rel=1e-3)


def test_classic_fails_for_large_eps():
    # Found numerically: at delta = 1e-5 the classic sigma stops being (eps, delta)-DP at
    # eps = 8.4198 (delta = 0.01: eps = 6.7718).  eps = 5 is still fine; eps = 10 is not.
    ok = m.classic_gaussian_sigma(eps=5.0, delta=1e-5, sensitivity=1.0)  # 0.968961
    assert m.gaussian_delta(eps=5.0, sigma=ok, sensitivity=1.0) == pytest.approx(1.349e-6, rel=1e-3)
    bad = m.classic_gaussian_sigma(eps=10.0, delta=1e-5, sensitivity=1.0)  # 4.844805 / 10 = 0.4844805
    assert bad == pytest.approx(0.4844805, abs=1e-7)
    true_delta = m.gaussian_delta(eps=10.0, sigma=bad, sensitivity=1.0)
    assert true_delta == pytest.approx(delta_by_integration(10.0, bad, 1.0), rel=1e-8)
    assert true_delta == pytest.approx(2.2654e-5, rel=1e-3)  # 2.27x the promised 1e-5
    assert m.analytic_gaussian_sigma(eps=10.0, delta=1e-5, sensitivity=1.0) == pytest.approx(0.49988862, rel=1e-7)
    # crossover: below ~8.42 conservative, above it not
    assert m.gaussian_delta(eps=8.4, sigma=m.classic_gaussian_sigma(eps=8.4, delta=1e-5, sensitivity=1.0), sensitivity=1.0) < 1e-5
    assert m.gaussian_delta(eps=8.44, sigma=m.classic_gaussian_sigma(eps=8.44, delta=1e-5, sensitivity=1.0), sensitivity=1.0) > 1e-5


def test_classic_at_wei_setting_gives_no_privacy():
    # Wei et al.: eps = 60, delta = 0.01, Delta = 1/60: classic sigma = 8.632e-4 has exact
    # delta = 1 - 4.5e-11 at eps = 60, i.e. essentially no (60, 0.01) guarantee; the same
    # sigma is exactly (230.37, 0.01)-DP.  The analytic sigma is 1.8619e-3 (2.16x larger).
    sens = 1 / 60
    s = m.classic_gaussian_sigma(eps=60, delta=0.01, sensitivity=sens)
    d = m.gaussian_delta(eps=60, sigma=s, sensitivity=sens)
    assert 1 - d == pytest.approx(4.48e-11, rel=1e-2)
    assert m.gaussian_eps(sigma=s, delta=0.01, sensitivity=sens) == pytest.approx(230.374, rel=1e-5)
    sa = m.analytic_gaussian_sigma(eps=60, delta=0.01, sensitivity=sens)
    assert sa == pytest.approx(dp_accounting.get_sigma_gaussian(60, 0.01) * sens, rel=1e-9)
    assert sa == pytest.approx(1.86193e-3, rel=1e-5)


# -------------------------------------------------------------------- analytic sigma


@pytest.mark.parametrize(
    "eps, delta, sens",
    [(0.5, 1e-5, 1.0), (1.0, 1e-5, 1.0), (5.0, 1e-3, 2.0), (60, 0.01, 1 / 60), (100, 1e-5, 1.0),
     (0.01, 1e-10, 0.3)],
)
def test_analytic_sigma_hits_target_never_overshoots(eps, delta, sens):
    s = m.analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=sens)
    d = m.gaussian_delta(eps=eps, sigma=s, sensitivity=sens)
    assert d <= delta
    assert d == pytest.approx(delta, rel=1e-9)
    assert m.gaussian_delta(eps=eps, sigma=s * (1 - 1e-6), sensitivity=sens) > delta
    # independent implementation (dp_accounting.get_sigma_gaussian, sensitivity 1)
    assert s == pytest.approx(dp_accounting.get_sigma_gaussian(eps, delta) * sens, rel=1e-9)


def test_analytic_sigma_known_values():
    # eps -> 0: delta(0) = 2 Phi(D/(2 sigma)) - 1 = delta  =>  sigma = D / (2 Phi^-1((1+delta)/2));
    # delta = 0.01: Phi^-1(0.505) = 0.0125335, sigma = 1/0.025067 = 39.8935
    s0 = 1 / (2 * special.ndtri(0.505))
    assert s0 == pytest.approx(39.8935, rel=1e-5)
    assert m.analytic_gaussian_sigma(eps=1e-10, delta=0.01, sensitivity=1.0) == pytest.approx(s0, rel=1e-6)
    # eps = 1, delta = 1e-5 (Balle & Wang 2018 setting): 3.7306, vs classic 4.8448
    assert m.analytic_gaussian_sigma(eps=1.0, delta=1e-5, sensitivity=1.0) == pytest.approx(3.730632, abs=1e-6)
    # linear in the sensitivity
    assert m.analytic_gaussian_sigma(eps=1.0, delta=1e-5, sensitivity=4.0) == pytest.approx(4 * 3.730632, abs=4e-6)


# ------------------------------------------------------------------------ gaussian_eps


def test_gaussian_eps_inverse_consistency():
    for eps, delta, sens in [(0.5, 1e-5, 1.0), (3.0, 1e-6, 2.0), (60.0, 0.01, 1 / 60)]:
        s = m.analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=sens)
        assert m.gaussian_eps(sigma=s, delta=delta, sensitivity=sens) == pytest.approx(eps, rel=1e-8)
    for sigma in [0.3, 1.0, 5.0]:
        e = m.gaussian_eps(sigma=sigma, delta=1e-5, sensitivity=1.0)
        assert m.gaussian_delta(eps=e, sigma=sigma, sensitivity=1.0) <= 1e-5
        assert m.gaussian_delta(eps=e, sigma=sigma, sensitivity=1.0) == pytest.approx(1e-5, rel=1e-8)
        assert e == pytest.approx(dp_accounting.get_epsilon_gaussian(sigma, 1e-5), rel=1e-9)


def test_gaussian_eps_zero_when_already_private():
    # sigma = 100, D = 1: delta(0) = 2 Phi(0.005) - 1 = 0.00399 <= 0.5
    assert 2 * special.ndtr(0.005) - 1 == pytest.approx(0.0039894, rel=1e-4)
    assert m.gaussian_eps(sigma=100.0, delta=0.5, sensitivity=1.0) == 0.0


# ---------------------------------------------------------------- Laplace


def test_laplace_scale():
    assert m.laplace_scale(eps=0.5, sensitivity=2.0) == 4.0  # 2 / 0.5


# --------------------------------------------------------------------- argument errors


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_eps_errors(bad):
    for call in [
        lambda: m.classic_gaussian_sigma(eps=bad, delta=1e-5, sensitivity=1.0),
        lambda: m.analytic_gaussian_sigma(eps=bad, delta=1e-5, sensitivity=1.0),
        lambda: m.laplace_scale(eps=bad, sensitivity=1.0),
        lambda: m.classic_gaussian_valid(eps=bad),
    ]:
        with pytest.raises(ValueError, match=r"^eps=.*eps must be in \(0, inf\)"):
            call()


def test_gaussian_delta_eps_errors():
    with pytest.raises(ValueError, match=r"^eps=-1.0 .*\[0, inf\)"):
        m.gaussian_delta(eps=-1.0, sigma=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match=r"^eps="):
        m.gaussian_delta(eps=np.array([1.0, -0.5]), sigma=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match=r"^sigma="):
        m.gaussian_delta(eps=1.0, sigma=0.0, sensitivity=1.0)
    with pytest.raises(ValueError, match=r"^sigma="):
        m.gaussian_eps(sigma=-1.0, delta=1e-5, sensitivity=1.0)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_delta_errors(bad):
    for call in [
        lambda: m.classic_gaussian_c(delta=bad),
        lambda: m.classic_gaussian_sigma(eps=1.0, delta=bad, sensitivity=1.0),
        lambda: m.analytic_gaussian_sigma(eps=1.0, delta=bad, sensitivity=1.0),
        lambda: m.gaussian_eps(sigma=1.0, delta=bad, sensitivity=1.0),
    ]:
        with pytest.raises(ValueError, match=r"^delta=.*delta must be in \(0, 1\)"):
            call()


@pytest.mark.parametrize("bad", [0.0, -2.0])
def test_sensitivity_and_bound_errors(bad):
    for call in [
        lambda: m.classic_gaussian_sigma(eps=1.0, delta=1e-5, sensitivity=bad),
        lambda: m.analytic_gaussian_sigma(eps=1.0, delta=1e-5, sensitivity=bad),
        lambda: m.gaussian_delta(eps=1.0, sigma=1.0, sensitivity=bad),
        lambda: m.gaussian_eps(sigma=1.0, delta=1e-5, sensitivity=bad),
        lambda: m.laplace_scale(eps=1.0, sensitivity=bad),
    ]:
        with pytest.raises(ValueError, match=r"^sensitivity="):
            call()
    for clip in (m.clip_l2, m.clip_l1):
        with pytest.raises(ValueError, match=r"^bound="):
            clip(torch.ones(2, 3), bound=bad)


def test_numbers_are_keyword_only():
    # gaussian_eps and gaussian_delta once took (sigma, delta, s) and (eps, sigma, s): a number
    # in another function's order is refused, not silently read as another argument
    for call in [lambda: m.gaussian_eps(1.0, 1e-5, 1.0), lambda: m.gaussian_delta(1.0, 1.0, 1.0),
                 lambda: m.analytic_gaussian_sigma(2.0, 1e-5, 2.0), lambda: m.laplace_scale(1.0, 1.0),
                 lambda: m.clip_l2(torch.ones(2, 3), 1.0),
                 lambda: m.gaussian_noise((2,), 1.0, torch.Generator())]:
        with pytest.raises(TypeError, match="positional"):
            call()
