"""Li, Chang & Chi (secure FedAvg): amplification by subsampling and eq. (9), pinned to
values worked out by hand (moved from tests/test_mechanisms.py with the functions)."""
from __future__ import annotations

import math

import numpy as np

import pytest

from fldp import mechanisms as m
from fldp.papers.li2021 import theory as lt


def test_amplification():
    # Li et al. Sec. 2.3, Adult-like client: n_k = 325, b = 1, Q = 10, eps = 0.5
    p = 1 - (1 - 1 / 325) ** 10  # = 1 - 0.9696533 = 0.0303467
    assert p == pytest.approx(0.0303467, abs=1e-7)
    e = lt.amplified_eps(eps=0.5, b=1, n_k=325, Q=10)
    assert e == pytest.approx(math.log(1 + p * (math.exp(0.5) - 1)), rel=1e-12)
    assert e == pytest.approx(0.0194953, abs=1e-7)  # log(1 + 0.0303467*0.6487213)
    q = lt.sampling_ratio(b=1, n_k=325, Q=10)
    assert q == 10 / 325
    assert e <= 2 * q * 0.5  # eq. 7-8 hold for eps <= 1.256
    # ... but not for eps = 2: e^2 - 1 = 6.389 > 2*2, so log(1 + p*6.389) = 0.1772 > 2q*2 = 0.1231
    assert lt.amplified_eps(eps=2.0, b=1, n_k=325, Q=10) > 2 * q * 2.0
    # b = n_k: no amplification; huge eps stays finite
    assert lt.amplified_eps(eps=3.0, b=50, n_k=50, Q=1) == pytest.approx(3.0, rel=1e-14)
    assert lt.amplified_eps(eps=1000.0, b=50, n_k=50, Q=1) == pytest.approx(1000.0, rel=1e-14)
    assert lt.amplified_eps(eps=1000.0, b=1, n_k=2, Q=1) == pytest.approx(1000 + math.log(0.5), rel=1e-14)


def test_sigma_eq9():
    # eq. 9 with eps = 0.5, delta = 1e-4, q = 10/325, Df = 4 Q G eta = 4*10*2*0.2 = 16
    q, df = 10 / 325, 16.0
    s = lt.sigma_eq9(eps=0.5, delta=1e-4, q=q, sensitivity_df=df)
    assert s == pytest.approx(math.sqrt(8 * q**2 * df**2 * math.log(1.25 * q / 1e-4) / 0.25),
                              rel=1e-14)
    # = sqrt(0.00757396 * 256 * ln(384.615) / 0.25) = sqrt(0.00757396 * 256 * 5.952244 * 4)
    #   = sqrt(46.1641) = 6.794413
    assert s == pytest.approx(6.794413, abs=1e-6)
    # eq. 9 first line: the classic sigma for (eps / (2q), delta / q)
    assert s == pytest.approx(m.classic_gaussian_sigma(eps=0.5 / (2 * q), delta=1e-4 / q, sensitivity=df), rel=1e-14)
    with pytest.raises(ValueError, match=r"^delta="):
        lt.sigma_eq9(eps=0.5, delta=0.05, q=0.01, sensitivity_df=1.0)  # 1.25 q = 0.0125 <= delta


def test_keyword_only():
    with pytest.raises(TypeError, match="positional"):
        lt.sampling_ratio(1, 325, 10)
    with pytest.raises(TypeError, match="positional"):
        lt.amplified_eps(0.5, 1, 325, 10)
    with pytest.raises(TypeError, match="positional"):
        lt.sigma_eq9(0.5, 1e-4, 0.1, 16.0)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_eps_errors(bad):
    for call in [
        lambda: lt.amplified_eps(eps=bad, b=1, n_k=10, Q=1),
        lambda: lt.sigma_eq9(eps=bad, delta=1e-5, q=0.1, sensitivity_df=1.0),
    ]:
        with pytest.raises(ValueError, match=r"^eps=.*eps must be in \(0, inf\)"):
            call()


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_delta_errors(bad):
    with pytest.raises(ValueError, match=r"^delta=.*delta must be in \(0, 1\)"):
        lt.sigma_eq9(eps=1.0, delta=bad, q=0.1, sensitivity_df=1.0)


@pytest.mark.parametrize("bad", [0.0, -2.0])
def test_sensitivity_errors(bad):
    with pytest.raises(ValueError, match=r"^sensitivity_df="):
        lt.sigma_eq9(eps=1.0, delta=1e-5, q=0.1, sensitivity_df=bad)


def test_other_argument_errors():
    with pytest.raises(ValueError, match=r"^q="):
        lt.sigma_eq9(eps=1.0, delta=1e-5, q=1.5, sensitivity_df=1.0)
    with pytest.raises(ValueError, match=r"^Q="):
        lt.sampling_ratio(b=10, n_k=100, Q=11)  # Q b > n_k
    with pytest.raises(ValueError, match=r"^n_k="):
        lt.amplified_eps(eps=1.0, b=1, n_k=0, Q=1)


# -- step sizes, Lemma 1, the amplification statement, Theorem 1, Remark 1 ----------------------
def test_step_sizes():
    assert lt.paper_lr(t=0) == pytest.approx(0.2)
    assert lt.paper_lr(t=100) == pytest.approx(0.1)
    # Theorem 1's schedule with mu = 0.1, kappa = 12.5 is the experiments' schedule
    assert lt.theorem1_lr(t=0, mu=0.1, kappa=12.5) == pytest.approx(0.2)
    assert lt.theorem1_lr(t=100, mu=0.1, kappa=12.5) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="kappa"):
        lt.theorem1_lr(t=0, mu=0.1, kappa=1.0)


def test_lemma1():
    assert lt.lemma1_sensitivity(Q=10, G=2.0, eta=0.1) == pytest.approx(8.0)
    assert lt.lemma1_lr_ratio(Q=10) == pytest.approx(1.1)
    assert lt.lemma1_lr_ratio(Q=100) == pytest.approx(2.0)  # the largest Q Lemma 1 allows


def test_lemma1_sensitivity_steps_by_hand():
    # Q = 1, first upload (t + 1 = 1): one step at eta_0 = 0.2; 2 G eta_0 = 0.8
    assert lt.lemma1_sensitivity_steps(G=2.0, etas=[0.2]) == pytest.approx(0.8, rel=1e-14)
    # the paper's 4 Q G eta_1 = 8 * 0.2/1.01 = 1.58416: the proof's own bound is 1.01/2 = 0.505 of it
    paper_q1 = lt.lemma1_sensitivity(Q=1, G=2.0, eta=lt.paper_lr(t=1))
    assert paper_q1 == pytest.approx(1.6 / 1.01, rel=1e-14)
    assert 0.8 / paper_q1 == pytest.approx(0.505, rel=1e-12)
    # Q = 10, first upload: sum_{t=0}^{9} 0.2/(1 + 0.01 t) = 1.915323..., times 2G = 4: 7.661294
    steps = lt.lemma1_sensitivity_steps(G=2.0, etas=lt.paper_lr(t=np.arange(10)))
    assert steps == pytest.approx(7.661294, rel=1e-6)
    # the paper's 4 * 10 * 2 * 0.2/1.1 = 14.5454...: ratio 0.52671
    assert steps / lt.lemma1_sensitivity(Q=10, G=2.0, eta=lt.paper_lr(t=10)) == pytest.approx(0.526714, rel=1e-5)
    # two steps of 0.1 and 0.3: 2 * 1 * 0.4
    assert lt.lemma1_sensitivity_steps(G=1.0, etas=[0.1, 0.3]) == pytest.approx(0.8, rel=1e-14)
    for bad in ([], [0.1, -0.2], [[0.1]]):
        with pytest.raises(ValueError):
            lt.lemma1_sensitivity_steps(G=1.0, etas=bad)


def test_per_sample_sensitivity_by_hand():
    # Q = 10, G = 2, eta = 0.2, b = 4: 4 * 2 * 0.2 * (9 + 1/4) = 14.8 (Lemma 1: 16)
    assert lt.per_sample_sensitivity(Q=10, G=2.0, eta=0.2, b=4) == pytest.approx(14.8, rel=1e-14)
    assert lt.per_sample_sensitivity(Q=1, G=2.0, eta=0.2, b=4) == pytest.approx(0.4, rel=1e-14)  # Lemma 1 / b
    assert lt.per_sample_sensitivity(Q=10, G=2.0, eta=0.2, b=1) == pytest.approx(16.0, rel=1e-14)  # b = 1: Lemma 1
    with pytest.raises(ValueError, match="b"):
        lt.per_sample_sensitivity(Q=10, G=2.0, eta=0.2, b=0)


def test_amplification_statement():
    assert lt.inclusion_prob(b=1, n_k=4, Q=2) == pytest.approx(7 / 16)
    eps, delta = lt.amplified_guarantee(eps=1.0, delta=1e-4, b=1, n_k=4, Q=2)
    assert eps == pytest.approx(math.log(1 + 7 / 16 * (math.e - 1)))
    assert delta == pytest.approx(0.5e-4)
    assert lt.eq8_bound(eps=0.5, q=0.1) == pytest.approx(0.1)
    assert lt.eq8_valid(eps=1.2564) and not lt.eq8_valid(eps=1.2565)  # e^x = 1 + 2x at 1.25643


def test_amplified_gaussian_eps_is_the_theorem_on_the_exact_profile():
    from fldp import mechanisms
    # p = 1: no amplification, the exact Gaussian eps
    assert lt.amplified_gaussian_eps(sigma=2.0, sensitivity_df=1.0, delta=1e-5, b=10, n_k=10, Q=1) == \
        pytest.approx(mechanisms.gaussian_eps(sigma=2.0, delta=1e-5, sensitivity=1.0))
    p = lt.inclusion_prob(b=1, n_k=100, Q=3)
    eps0 = mechanisms.gaussian_eps(sigma=0.5, delta=1e-5 / p, sensitivity=1.0)
    assert lt.amplified_gaussian_eps(sigma=0.5, sensitivity_df=1.0, delta=1e-5, b=1, n_k=100, Q=3) == \
        pytest.approx(math.log1p(p * math.expm1(eps0)))
    # eq. (9)'s noise for eps = 0.5 at q = 1/325 gives one upload an eps in the hundreds
    q = 1 / 325
    sigma = lt.sigma_eq9(eps=0.5, delta=1e-4, q=q, sensitivity_df=1.0)
    assert lt.amplified_gaussian_eps(sigma=sigma, sensitivity_df=1.0, delta=1e-4, b=1, n_k=325, Q=1) > 400


def test_theorem1_terms_by_hand():
    assert lt.theorem1_A(p=[0.5, 0.5], gamma_sq=[2.0, 4.0], b=2, Q=3, G=2.0, L=1.0, Gamma=0.5) == \
        pytest.approx(0.75 + 128 + 3)
    # 64*10*2^4/(100*4) = 25.6; log 100; log(1.25^2 * 4 / (100 * 1e-4)) = log 625; 8 + 1
    assert lt.theorem1_B(M=10, Q=2, b=1, G=1.0, n=100, L=2.0, eps=1.0, delta=0.01) == \
        pytest.approx(6830.655428082062)
    assert lt.theorem1_C(N=11, K=5, Q=2, G=1.0) == pytest.approx(0.6 * 0.8 * 4)  # 6/10 * 4/5 * Q^2
    assert lt.theorem1_C(N=11, K=11, Q=2, G=1.0) == 0.0
    # kappa = 4, alpha = 32: 8/32 * (3/0.5 + 2*2*1)
    assert lt.theorem1_bound(T=0, L=2.0, mu=0.5, A=1.0, B=1.0, C=1.0, w0_dist_sq=1.0) == pytest.approx(2.5)
    np.testing.assert_allclose(lt.theorem1_bound(T=np.array([0, 32]), L=2.0, mu=0.5, A=1.0, B=1.0, C=1.0,
                                                 w0_dist_sq=1.0), [2.5, 1.25])
    with pytest.raises(ValueError, match="logarithm"):
        lt.theorem1_B(M=10, Q=1, b=1, G=1.0, n=10**6, L=1.0, eps=1.0, delta=0.5)


def test_remark1_rounds_and_optimal_Q():
    v = lt.rounds_eq13(Q=2, M=10, b=1, G=1.0, n=100, L=2.0, eps=1.0, delta=0.01, K=4,
                       sum_p2_gamma2=3.0, Gamma=0.5)
    assert v == pytest.approx(22.07337112219706 + 2.5 + 2.0)
    best, values = lt.optimal_Q(rounds=lambda Q: (Q - 3) ** 2 + 1.0, Q_max=10)
    assert best == 3 and len(values) == 10 and values[2] == 1.0
    # eq. (12)'s version: (A + B + C)/Q with the same inputs
    full = lt.rounds_theorem1(Q=2, M=10, b=1, G=1.0, n=100, N=8, K=4, L=2.0, eps=1.0, delta=0.01,
                              sum_p2_gamma2=3.0, Gamma=0.5)
    A = 3.0 + 8 + 6 * 2.0 * 0.5
    C = 4 / 7 * 4 / 4 * 4
    assert full == pytest.approx((A + lt.theorem1_B(M=10, Q=2, b=1, G=1.0, n=100, L=2.0, eps=1.0,
                                                     delta=0.01) + C) / 2)


def test_eq8_valid_far_beyond_its_root():
    """e^x - 1 <= 2x holds up to the root 1.25643 and never again (no overflow at large x)."""
    assert lt.eq8_valid(eps=1.2564) and not lt.eq8_valid(eps=1.2565) and not lt.eq8_valid(eps=2.0)
    assert not lt.eq8_valid(eps=162.5) and not lt.eq8_valid(eps=1e4)  # overflowed before  # 162.5: eq. (9) at Q = 1, b = 1
