"""Wei et al. 2020 closed forms, pinned to values worked out by hand in each test."""
import inspect
import math

import numpy as np
import pytest

from fldp.papers.wei2020 import claims as cl, theory as th
from fldp.papers.wei2020.theory import BoundOutsideAssumptions

C0 = math.sqrt(2 * math.log(1.25 / 0.01))  # c for delta = 0.01: sqrt(2 ln 125) = 3.10751...
# a contraction point for Theorem 2/3: rho = beta = B = 1, l = 0.5, mu = 10
RHO, BETA, L_PL, BB, MU = 1.0, 1.0, 0.5, 1.0, 10.0
K2 = dict(rho=RHO, beta=BETA, l=L_PL, B=BB, mu=MU)  # Theorem 2's constants, by name
T3 = dict(Theta=1.0, rho=1, beta=1, B=1, mu=10, l=0.5)  # Theorem 3's, at the same point


# ------------------------------------------------------------------ Section III
def test_gaussian_c():
    assert th.gaussian_c(delta=0.01) == pytest.approx(3.107511, abs=1e-6)
    assert th.gaussian_c(delta=0.01) == pytest.approx(C0, rel=1e-12)


def test_sigma_uplink_hand_value_and_known_bugs():
    got = th.sigma_uplink(C=10, m=1200, eps=60, delta=0.01, L=1)
    expected = C0 * 1 * (2 * 10 / 1200) / 60
    assert got == pytest.approx(expected, rel=1e-12)
    assert got == pytest.approx(8.632e-4, rel=1e-3)
    assert th.sigma_uplink(C=10, m=1200, eps=60, c=C0) == pytest.approx(expected, rel=1e-12)
    assert th.uplink_sensitivity(C=10, m=1200) == pytest.approx(0.0166667, rel=1e-5)
    # known bugs of public implementations: T in place of L, and 2C/m replaced by C/m
    wrong_T = C0 * 25 * (2 * 10 / 1200) / 60
    wrong_no2 = C0 * 1 * (10 / 1200) / 60
    assert not math.isclose(got, wrong_T, rel_tol=1e-3)
    assert not math.isclose(got, wrong_no2, rel_tol=1e-3)
    assert th.sigma_uplink(C=10, m=1200, eps=60, delta=0.01, L=3) == pytest.approx(3 * expected)


def test_downlink_sensitivity():
    assert th.downlink_sensitivity(C=10, m=1200, p_i=1 / 50) == pytest.approx(2 * 10 * (1 / 50) / 1200)


def test_sigma_downlink_zero_below_threshold_and_hand_value():
    # sqrt(50) = 7.071 > 7, so T = 7 needs no server noise
    assert th.sigma_downlink(C=10, m=1200, N=50, T=7, L=1, eps=60, c=C0) == 0.0
    got = th.sigma_downlink(C=10, m=1200, N=50, T=25, L=1, eps=60, c=C0)
    assert got == pytest.approx(2 * C0 * 10 * math.sqrt(625 - 50) / (1200 * 50 * 60), rel=1e-12)
    arr = th.sigma_downlink(C=10, m=1200, N=50, T=np.array([1.0, 7.0, 8.0, 25.0]), L=1, eps=60, c=C0)
    assert arr[:2].tolist() == [0.0, 0.0]
    assert arr[2] == pytest.approx(2 * C0 * 10 * math.sqrt(64 - 50) / (1200 * 50 * 60))
    assert arr[3] == pytest.approx(got)


def test_sigma_aggregate_identity_and_branches():
    N, L = 50, 1
    for T in (8.0, 25.0, 100.0):  # T > L sqrt(N)
        sa = th.sigma_aggregate(C=10, m=1200, N=N, T=T, L=L, eps=60, c=C0)
        sd = th.sigma_downlink(C=10, m=1200, N=N, T=T, L=L, eps=60, c=C0)
        su = th.sigma_uplink(C=10, m=1200, eps=60, L=L, c=C0)
        assert sa**2 == pytest.approx(sd**2 + su**2 / N, rel=1e-12)
    assert th.sigma_aggregate(C=10, m=1200, N=N, T=25, L=L, eps=60, c=C0) == pytest.approx(
        C0 * 25 * (2 * 10 / (1200 * 50)) / 60)
    # T <= L sqrt(N): sigma_D = 0 and sigma_A = sigma_U / sqrt(N)
    assert th.sigma_aggregate(C=10, m=1200, N=N, T=5, L=L, eps=60, c=C0) == pytest.approx(
        C0 * 1 * (2 * 10 / 1200) / (math.sqrt(50) * 60))


# ------------------------------------------------------------------ Theorem 2
def test_lambdas():
    lam0, lam1, lam2 = th.lambdas(rho=1, B=1, mu=10)
    assert (lam0, lam1) == pytest.approx((0.5, 1 / 10 + 1 / 10))
    assert lam2 == pytest.approx(-1 / 10 + 1 / 100 + 1 / 200)  # = -0.085


def _hand_theorem2(c=3.0, m=100.0, N=50):
    P = 1 + 2 * 0.5 * (-0.085)  # 0.915
    k1 = 0.2 * 1 * c / (m * (1 - P)) * math.sqrt(2 / (N * math.pi))
    k0 = 0.5 * c**2 / (m**2 * (1 - P) * N)
    return P, k0, k1


def test_theorem2_constants_and_bound_hand_point():
    P, k0, k1 = _hand_theorem2()
    got = th.theorem2_constants(**K2, c=3.0, m=100, N=50)
    assert got == pytest.approx((P, k0, k1), rel=1e-12)
    T, eps, Theta = 10, 2.0, 1.0
    expected = P**T * Theta + (k1 * T / eps + k0 * T**2 / eps**2) * (1 - P**T)
    assert th.theorem2_bound(T=T, eps=eps, Theta=Theta, **got._asdict()) == pytest.approx(expected, rel=1e-12)
    arr = th.theorem2_bound(T=np.array([1.0, 10.0]), eps=eps, Theta=Theta, **got._asdict())
    assert arr[1] == pytest.approx(expected)


def test_theorem2_P_outside_unit_interval_raises():
    with pytest.raises(BoundOutsideAssumptions, match=r"P=1\.5.*mu"):
        th.theorem2_constants(rho=1, beta=1, l=0.5, B=1, mu=1.0, c=3.0, m=100, N=50)  # lambda2 = +0.5, P = 1.5
    with pytest.raises(BoundOutsideAssumptions, match=r"P=-16"):
        th.theorem2_constants(rho=1, beta=1, l=100, B=1, mu=10, c=3.0, m=100, N=50)  # P = 1 - 200*0.085
    with pytest.raises(ValueError, match=r"P=1\.2"):
        th.theorem2_bound(T=5, eps=1.0, Theta=1.0, P=1.2, kappa0=0.1, kappa1=0.1)
    with pytest.raises(ValueError, match=r"P=0"):
        th.theorem2_bound(T=5, eps=1.0, Theta=1.0, P=0.0, kappa0=0.1, kappa1=0.1)


def test_kappa_sign_variants_give_opposite_noise_terms():
    paper = th.theorem2_constants(**K2, c=3.0, m=100, N=50, kappa_sign="paper")
    app = th.theorem2_constants(**K2, c=3.0, m=100, N=50, kappa_sign="appendix")
    assert app.P == paper.P
    assert app.kappa0 == pytest.approx(-paper.kappa0) and app.kappa1 == pytest.approx(-paper.kappa1)
    assert paper.kappa0 > 0 and paper.kappa1 > 0
    T, eps, Theta = 10, 2.0, 1.0
    clean = paper.P**T * Theta
    assert th.theorem2_bound(T=T, eps=eps, Theta=Theta, **paper._asdict()) > clean > \
        th.theorem2_bound(T=T, eps=eps, Theta=Theta, **app._asdict())


def test_theorem2_clipping_scale_and_eq61():
    P, k0, k1 = _hand_theorem2()
    C = 5.0  # scale 2C = 10
    got = th.theorem2_constants(**K2, c=3.0, m=100, N=50, scale=2 * C)
    assert got == pytest.approx((P, 100 * k0, 10 * k1), rel=1e-12)
    T, eps, Theta = 10, 2.0, 1.0
    assert th.theorem2_bound_general(T=T, eps=eps, Theta=Theta, **K2, c=3.0, m=100, N=50, C=C) == \
        pytest.approx(P**T * Theta + (10 * k1 * T / eps + 100 * k0 * T**2 / eps**2) * (1 - P**T))
    # (61) with Ds_D = 2C/(mN), fed through (60), reproduces the scaled kappas
    e1, e2 = th.theorem2_noise_terms(T=T, eps=eps, c=3.0, m=100, N=50, scale=2 * C)
    sigma_A = 3.0 * T * (2 * C / (100 * 50)) / eps
    assert (e1, e2) == pytest.approx((sigma_A * math.sqrt(2 * 50 / math.pi), sigma_A**2 * 50))
    noise_part = (0.2 * 1 * e1 + 0.5 * e2) * (1 - P**T) / (1 - P)
    assert noise_part == pytest.approx((10 * k1 * T / eps + 100 * k0 * T**2 / eps**2) * (1 - P**T))
    # scale = 1 is the paper's (62): Ds_D = 1/(mN), i.e. 2C = 1
    e1p, _ = th.theorem2_noise_terms(T=T, eps=eps, c=3.0, m=100, N=50)
    assert e1p == pytest.approx(3.0 * T / eps / 100 * math.sqrt(2 / (50 * math.pi)))
    assert th.half_normal_mean(sigma=2.0) == pytest.approx(2.0 * math.sqrt(2 / math.pi))


def test_eq20_matches_finite_differences():
    P, k0, k1 = _hand_theorem2(m=1.0)  # m = 1 makes the noise terms matter
    for eps, Theta in ((1.0, 2.0), (3.0, 0.5), (0.5, 10.0)):
        for T in (1.5, 3.0, 10.0, 40.0, 100.0):
            exact = th.theorem2_second_derivative(T=T, eps=eps, Theta=Theta, P=P, kappa0=k0, kappa1=k1)
            f = lambda t: P**t * Theta + (k1 * t / eps + k0 * t**2 / eps**2) * (1 - P**t)  # noqa: E731
            h = 1e-3
            fd = (f(T + h) - 2 * f(T) + f(T - h)) / h**2
            assert exact == pytest.approx(fd, rel=1e-5, abs=1e-8)
            assert th.theorem2_second_derivative_fd(T=T, eps=eps, Theta=Theta, P=P, kappa0=k0, kappa1=k1) == \
                pytest.approx(fd)


def test_theorem2_optimal_T():
    P, k0, k1 = _hand_theorem2(m=5.0)
    eps, Theta = 1.0, 2.0
    vals = [P**t * Theta + (k1 * t / eps + k0 * t**2 / eps**2) * (1 - P**t) for t in range(1, 301)]
    T_star, best = th.theorem2_optimal_T(eps=eps, Theta=Theta, P=P, kappa0=k0, kappa1=k1, T_max=300)
    assert T_star == 1 + int(np.argmin(vals)) and best == pytest.approx(min(vals))
    assert 1 < T_star < 300  # an interior optimum (Remark 4)


# ------------------------------------------------------------------ Lemma 4
def test_krandom_b_gamma_hand_point():
    # N = 50, K = 20 (N/K = 2.5, q = 0.4), eps = 5, T = 25, L = 1: eq. (69) holds
    b = -(25 / 5) * math.log(1 - 2.5 + 2.5 * math.exp(-5 / 25))
    assert th.krandom_b(eps=5, T=25, N=50, K=20) == pytest.approx(b, rel=1e-12)
    assert b == pytest.approx(3.0181, abs=1e-4)
    gamma = -math.log(1 - 0.4 + 0.4 * math.exp(-60 / (1 * math.sqrt(20))))
    assert th.krandom_gamma(eps=60, L=1, N=50, K=20) == pytest.approx(gamma, rel=1e-12)
    sig = 2 * 3.0 * 10 * math.sqrt(25**2 / b**2 - 1 * 20) / (1200 * 20 * 5)
    for sw in ("eq21", "eq75"):
        assert th.sigma_downlink_krandom(C=10, m=1200, N=50, K=20, T=25, L=1, eps=5, c=3.0, switch=sw) == \
            pytest.approx(sig, rel=1e-12)
    cond = th.krandom_conditions(eps=5, T=25, N=50, K=20, L=1)
    assert cond["eq69"] and cond["eq73"] and cond["b_eps_over_T_in_(0,1)"]
    assert cond["eq21_switch"] and cond["eq75_switch"]


def test_krandom_paper_point_b_undefined():
    # the paper's Fig. 4-5 setting: N = 50, K = 20, T = 25, eps = 60 -> 1 - 2.5 + 2.5 e^-2.4 < 0
    assert 1 - 2.5 + 2.5 * math.exp(-60 / 25) < 0
    with pytest.raises(ValueError, match=r"eq\. \(69\).*T > 117\.5"):
        th.krandom_b(eps=60, T=25, N=50, K=20)
    with pytest.raises(ValueError, match=r"eq\. \(69\)"):
        th.sigma_downlink_krandom(C=10, m=1200, N=50, K=20, T=25, L=1, eps=60, c=C0)
    with pytest.raises(ValueError, match=r"eq\. \(69\)"):
        th.sigma_downlink_krandom(C=10, m=1200, N=50, K=20, T=25, L=1, eps=60, c=C0, switch="eq75",
                                  on_undefined_b="zero")
    assert th.sigma_downlink_krandom(C=10, m=1200, N=50, K=20, T=25, L=1, eps=60, c=C0, on_undefined_b="zero") == 0.0
    cond = th.krandom_conditions(eps=60, T=25, N=50, K=20, L=1)
    assert cond == {"eq69": False, "eq73": False, "b_eps_over_T_in_(0,1)": False,
                    "eq21_switch": False, "eq75_switch": None}


def test_krandom_K_equals_N_reduces_to_theorem1():
    N, L, eps = 50, 1, 60
    for T in (1.0, 7.0, 8.0, 25.0, 100.0):
        assert th.krandom_b(eps=eps, T=T, N=N, K=N) == pytest.approx(1.0, rel=1e-12)
    assert th.krandom_gamma(eps=eps, L=L, N=N, K=N) == pytest.approx(eps / (L * math.sqrt(N)))
    Ts = np.array([1.0, 7.0, 8.0, 25.0, 100.0])
    ref = th.sigma_downlink(C=10, m=1200, N=N, T=Ts, L=L, eps=eps, c=C0)
    for sw in ("eq21", "eq75"):
        assert th.sigma_downlink_krandom(C=10, m=1200, N=N, K=N, T=Ts, L=L, eps=eps, c=C0, switch=sw) == \
            pytest.approx(ref, rel=1e-12, abs=0)
    # K = N: ln(1 - q) = -inf so (69) always holds; (73) reduces to eps < T
    assert th.krandom_conditions(eps=60, T=25, N=N, K=N, L=1)["eq69"]
    assert not th.krandom_conditions(eps=60, T=25, N=N, K=N, L=1)["eq73"]
    assert th.krandom_conditions(eps=20, T=25, N=N, K=N, L=1)["eq73"]


def test_krandom_switch_conditions_agree_on_grid():
    checked = 0
    for N in (10, 50, 100):
        for K in sorted({1, 2, N // 4, N // 2, N - 1, N}):
            for eps in (0.5, 1.0, 5.0, 20.0, 60.0, 100.0):
                for L in (1, 2, 3):
                    for T in (1, 3, 7, 10, 25, 60, 100, 200, 400, 1000):
                        cond = th.krandom_conditions(eps=eps, T=T, N=N, K=K, L=L)
                        if cond["eq69"]:
                            assert cond["eq21_switch"] == cond["eq75_switch"], (N, K, eps, L, T)
                            # (73) is the same statement as 0 < b eps/T < 1 once b exists
                            assert cond["eq73"] == cond["b_eps_over_T_in_(0,1)"]
                            checked += 1
                        else:  # b undefined only below eps/gamma: (21) picks sigma_D = 0
                            assert not cond["eq21_switch"]
    assert checked > 1000


# ------------------------------------------------------------------ Theorem 3
def test_theorem3_constants_hand_point():
    K, N = 20, 50
    alpha2 = (1 * 1 / 2 + 1 * 1 + 1 * 1 / K + 2 * 1 / math.sqrt(K) + 10 * 1 / math.sqrt(K) - 10) / 10**2
    alpha1 = 1 + 2 * 1 * 1 / 10 + 2 * 1 * 1 * math.sqrt(K) / (10 * N)
    alpha0 = 2 * 1 * K / N + 1
    Q = 1 + 2 * 0.5 * alpha2
    got = th.theorem3_constants(rho=1, B=1, mu=10, l=0.5, K=K, N=N)
    assert got == pytest.approx((Q, alpha0, alpha1, alpha2), rel=1e-12)
    assert 0 < Q < 1


def test_theorem3_Q_outside_raises():
    # K = 1, B = 1: mu*B/sqrt(K) - mu = 0, so alpha2 > 0 and Q > 1 for every mu
    with pytest.raises(BoundOutsideAssumptions, match=r"Q=1\.0"):
        th.theorem3_constants(rho=1, B=1, mu=10, l=0.5, K=1, N=50)


def test_theorem3_bound_hand_point():
    K, N, eps, T, m, c = 20, 50, 5.0, 25, 100.0, 3.0
    Q, a0, a1, _ = th.theorem3_constants(rho=1, B=1, mu=10, l=0.5, K=K, N=N)
    ln_a = math.log(1 - N / K + (N / K) * math.exp(-eps / T))
    lin = c * a1 * 1 / (-m * K * ln_a) * math.sqrt(2 / math.pi)
    quad = c**2 * a0 / (m**2 * K**2 * ln_a**2)
    expected = Q**T * 1.0 + (1 - Q**T) / (1 - Q) * (lin + quad)
    args = dict(T=T, eps=eps, K=K, N=N, m=m, Theta=1.0, rho=1, beta=1, B=1, mu=10, l=0.5, c=c)
    assert th.theorem3_bound(**args) == pytest.approx(expected, rel=1e-12)
    full = Q**T + (1 - Q**T) / (1 - Q) * (6 * math.sqrt(N) * lin + 36 * N * quad)
    assert th.theorem3_bound(**args, scale=6.0, moments="eq100") == pytest.approx(full, rel=1e-12)
    with pytest.raises(ValueError, match=r"eq\. \(69\)"):
        th.theorem3_bound(**{**args, "T": 25, "eps": 60.0})


def test_theorem3_optimal_K():
    # eps = 60, T = 25, N = 50: (69) holds only for K >= 46 (q > 1 - e^{-2.4})
    valid = [k for k in range(1, 51) if 1 - 50 / k + 50 / k * math.exp(-60 / 25) > 0]
    assert valid == [46, 47, 48, 49, 50]
    K_star, best, vals, _ = th.theorem3_optimal_K(T=25, eps=60.0, N=50, m=1200, c=C0, **T3)
    assert sorted(vals) == valid and best == min(vals.values()) and vals[K_star] == best
    K_star, best, vals, _ = th.theorem3_optimal_K(T=25, eps=5.0, N=50, m=1.0, c=3.0, **T3)
    assert min(vals) >= 2 and best == min(vals.values())
    with pytest.raises(ValueError, match="every K"):
        th.theorem3_optimal_K(T=25, eps=60.0, N=50, m=1200, c=C0, **{**T3, "mu": 1.0})  # mu = 1: no contraction


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call, name", [
    (lambda: th.sigma_uplink(C=10, m=1200, eps=0, delta=0.01), "eps"),
    (lambda: th.sigma_uplink(C=10, m=1200, eps=-1, c=3.0), "eps"),
    (lambda: th.sigma_downlink(C=10, m=1200, N=50, T=25, L=1, eps=0.0, c=3.0), "eps"),
    (lambda: th.sigma_uplink(C=10, m=1200, eps=60, delta=1.0), "delta"),
    (lambda: th.sigma_uplink(C=10, m=1200, eps=60, delta=0.0), "delta"),
    (lambda: th.gaussian_c(delta=1.5), "delta"),
    (lambda: th.sigma_downlink(C=10, m=1200, N=0, T=25, L=1, eps=60, c=3.0), "N"),
    (lambda: th.sigma_aggregate(C=10, m=1200, N=0, T=25, L=1, eps=60, c=3.0), "N"),
    (lambda: th.krandom_b(eps=60, T=25, N=50, K=60), "K"),
    (lambda: th.krandom_gamma(eps=60, L=1, N=50, K=0), "K"),
    (lambda: th.sigma_downlink_krandom(C=10, m=1200, N=50, K=51, T=25, L=1, eps=60, c=3.0), "K"),
    (lambda: th.uplink_sensitivity(C=-1, m=1200), "C"),
    (lambda: th.sigma_downlink(C=0, m=1200, N=50, T=25, L=1, eps=60, c=3.0), "C"),
    (lambda: th.sigma_downlink(C=10, m=1200, N=50, T=np.array([5.0, -1.0]), L=1, eps=60, c=3.0), "T"),
    (lambda: th.theorem2_constants(**K2, c=3.0, m=100, N=50, kappa_sign="x"), "kappa_sign"),
    (lambda: th.downlink_sensitivity(C=10, m=1200, p_i=1.5), "p_i"),
    (lambda: th.theorem2_optimal_T(eps=1.0, Theta=1.0, P=0.9, kappa0=0.1, kappa1=0.1, T_max=0), "T_max"),
    (lambda: th.theorem3_optimal_K(T=25, eps=-1.0, N=50, m=1200, c=3.0, **T3), "eps"),
    (lambda: th.krandom_T_min(eps=60, N=50, K=20, condition="eq21"), "condition"),
    (lambda: th.krandom_T_min(eps=60, N=50, K=51, condition="eq69"), "K"),
    (lambda: th.theorem3_alpha2(rho=1, B=1, mu=10, K=0), "K"),
    (lambda: th.theorem3_Q(rho=1, B=1, mu=10, l=0.0, K=20), "l"),
    (lambda: th.theorem3_mu_min(rho=1, B=2, K=4), "K"),
    (lambda: th.theorem3_mu_min(rho=-1, B=1, K=4), "rho"),
    (lambda: th.theorem2_P(rho=1, B=1, mu=0.0, l=0.5), "mu"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name}="):
        call()


def test_sigma_uplink_needs_c_or_delta():
    with pytest.raises(ValueError, match="c or delta"):
        th.sigma_uplink(C=10, m=1200, eps=60)
    with pytest.raises(ValueError, match="exactly one of c and delta"):
        th.sigma_uplink(C=10, m=1200, eps=60)


def test_sigma_uplink_refuses_both_c_and_delta():
    # before: c silently won over delta; now the ambiguity is an error naming both
    with pytest.raises(ValueError, match=r"exactly one of c and delta, got both \(c=3\.0, delta=0\.01\)"):
        th.sigma_uplink(C=10, m=1200, eps=60, c=3.0, delta=0.01)
    with pytest.raises(ValueError, match=r"c=.*delta="):
        th.sigma_uplink(C=10, m=1200, eps=60, c=C0, delta=0.01)  # even when they agree


# ------------------------------------------------------------------ keyword-only
@pytest.mark.parametrize("call", [
    lambda: th.gaussian_c(0.01),
    lambda: th.uplink_sensitivity(10, 1200),
    lambda: th.sigma_uplink(10, 1200, 60, c=3.0),
    lambda: th.sigma_downlink(10, 1200, 50, 25, 1, 60, 3.0),
    lambda: th.theorem2_bound(10, 2.0, 1.0, 0.9, 0.1, 0.1),
    lambda: th.krandom_b(5, 25, 50, 20),
    lambda: th.theorem3_bound(25, 5.0, 20, 50, 100.0, 1.0, 1, 1, 1, 10, 0.5, 3.0),
    lambda: th.theorem3_Q(1, 1, 10, 0.5, 20),
    lambda: th.theorem3_mu_min(1, 1, 4),
])
def test_positional_arguments_raise_type_error(call):
    with pytest.raises(TypeError, match="positional"):
        call()


def test_every_public_function_is_keyword_only():
    funcs = [getattr(th, n) for n in th.__all__ if inspect.isfunction(getattr(th, n))]
    assert len(funcs) >= 25
    for f in funcs:
        kinds = {p.kind for p in inspect.signature(f).parameters.values()}
        assert kinds == {inspect.Parameter.KEYWORD_ONLY}, f.__name__
        assert f.__doc__.startswith("Wei et al. 2020, "), f.__name__  # names the paper, then the equation


# ------------------------------------------------------------------ helpers moved out of notebook 04
def test_krandom_T_min_hand_values():
    # N = 50, K = 20 (q = 0.4), eps = 60: (69) needs T > 60 / -ln(0.6) = 60 / 0.5108256 = 117.4569
    t69 = th.krandom_T_min(eps=60, N=50, K=20, condition="eq69")
    assert t69 == pytest.approx(60 / -math.log(0.6), rel=1e-12)
    assert t69 == pytest.approx(117.4569, abs=1e-4)
    # (73): 1 - 0.4 + 0.4/e = 0.7471518, ln = -0.2914869, 60 / 0.2914869 = 205.8411
    assert th.krandom_T_min(eps=60, N=50, K=20, condition="eq73") == pytest.approx(205.8411, abs=1e-4)
    # the threshold is where krandom_conditions flips
    assert not th.krandom_conditions(eps=60, T=117, N=50, K=20, L=1)["eq69"]
    assert th.krandom_conditions(eps=60, T=118, N=50, K=20, L=1)["eq69"]
    assert not th.krandom_conditions(eps=60, T=205, N=50, K=20, L=1)["eq73"]
    assert th.krandom_conditions(eps=60, T=206, N=50, K=20, L=1)["eq73"]
    # K = N: b exists for every T (threshold 0); (73) reads eps < T
    assert th.krandom_T_min(eps=60, N=50, K=50, condition="eq69") == 0.0
    assert th.krandom_T_min(eps=60, N=50, K=50, condition="eq73") == pytest.approx(60.0, rel=1e-12)


def test_theorem2_P_hand_values():
    # rho = B = 1, mu = 10: lambda2 = -1/10 + 1/100 + 1/200 = -0.085, P = 1 + 2*0.5*(-0.085) = 0.915
    assert th.theorem2_P(rho=1, B=1, mu=10, l=0.5) == pytest.approx(0.915, rel=1e-12)
    assert th.theorem2_P(**{n: K2[n] for n in ("rho", "B", "mu", "l")}) == \
        pytest.approx(th.theorem2_constants(**K2, c=3.0, m=100, N=50).P, rel=1e-15)
    # mu = 1: lambda2 = -1 + 1 + 1/2 = 0.5, P = 1.5; returned, not raised (theorem2_constants raises)
    assert th.theorem2_P(rho=1, B=1, mu=1.0, l=0.5) == pytest.approx(1.5, rel=1e-12)


def test_theorem3_alpha2_and_Q_hand_values():
    # K = 20: (0.5 + 1 + 1/20 + 2/sqrt(20) + 10/sqrt(20) - 10) / 100
    #       = (1.55 + 0.4472136 + 2.2360680 - 10) / 100 = -0.05766718, Q = 1 - 0.05766718 = 0.9423328
    a2 = th.theorem3_alpha2(rho=1, B=1, mu=10, K=20)
    assert a2 == pytest.approx(-0.05766718, abs=1e-8)
    Q = th.theorem3_Q(rho=1, B=1, mu=10, l=0.5, K=20)
    assert Q == pytest.approx(0.9423328, abs=1e-7)
    assert (Q, a2) == pytest.approx(tuple(th.theorem3_constants(rho=1, B=1, mu=10, l=0.5, K=20, N=50)[::3]),
                                    rel=1e-15)
    # K = 1: alpha2 mu^2 = rho (7B^2/2 + B) + mu (B - 1) = 4.5, so alpha2 = 0.045 > 0 and Q = 1.045
    assert th.theorem3_alpha2(rho=1, B=1, mu=10, K=1) == pytest.approx(0.045, rel=1e-12)
    assert th.theorem3_Q(rho=1, B=1, mu=10, l=0.5, K=1) == pytest.approx(1.045, rel=1e-12)


def test_theorem3_mu_min_hand_values():
    # rho = B = 1, K = 4: (1/2 + 1 + 1/4 + 2/2) / (1 - 1/2) = 2.75 / 0.5 = 5.5
    mu = th.theorem3_mu_min(rho=1, B=1, K=4)
    assert mu == pytest.approx(5.5, rel=1e-12)
    assert th.theorem3_alpha2(rho=1, B=1, mu=mu, K=4) == pytest.approx(0.0, abs=1e-15)
    assert th.theorem3_alpha2(rho=1, B=1, mu=5.6, K=4) < 0 < th.theorem3_alpha2(rho=1, B=1, mu=5.4, K=4)
    # rho = 2, B = 1.5, K = 9: 2 (1.125 + 1.5 + 0.25 + 1.5) / (1 - 0.5) = 2 * 4.375 / 0.5 = 17.5
    assert th.theorem3_mu_min(rho=2, B=1.5, K=9) == pytest.approx(17.5, rel=1e-12)
    # K <= B^2: no mu makes alpha2 negative
    with pytest.raises(BoundOutsideAssumptions, match=r"^K=4 .*K > B\^2 = 4"):
        th.theorem3_mu_min(rho=1, B=2, K=4)
    with pytest.raises(BoundOutsideAssumptions, match=r"^K=1 "):
        th.theorem3_mu_min(rho=1, B=1, K=1)


def test_theorem2_best_contraction_hand_values():
    # rho = B = 1, l = 0.3: rho B (1 + B/2) = 1.5, mu* = 3, P* = 1 - 0.3/3 = 0.9
    mu, P = th.theorem2_best_contraction(rho=1.0, B=1.0, l=0.3)
    assert mu == pytest.approx(3.0) and P == pytest.approx(0.9)
    assert th.theorem2_P(rho=1.0, B=1.0, mu=3.0, l=0.3) == pytest.approx(0.9)
    # no other mu does better
    for other in (1.6, 2.0, 2.9, 3.1, 5.0, 50.0):
        assert th.theorem2_P(rho=1.0, B=1.0, mu=other, l=0.3) > 0.9


# ------------------------------------------------------------------ Remark 5's verdict (notebook 04)
def _row(K_star, K_min_valid, bound=1.0, bound_K_N=2.0):
    return {"K_star": K_star, "K_min_valid": K_min_valid, "bound": bound, "bound_K_N": bound_K_N}


def test_remark5_verdict_holds_fails_and_edge():
    interior = {"eps=60, T=200": _row(30, 21), "eps=100, T=200": _row(35, 21)}
    assert cl.remark5_verdict(rows=interior, N=50).verdict == "holds"
    at_N = {**interior, "eps=50, T=120": _row(50, 21, bound=2.0, bound_K_N=2.0)}  # counter-example: K = N is best
    assert cl.remark5_verdict(rows=at_N, N=50).verdict == "fails"
    no_gain = {"eps=50, T=120": _row(30, 21, bound=2.0, bound_K_N=2.0)}  # a tie with K = N does not beat it
    assert cl.remark5_verdict(rows=no_gain, N=50).verdict == "fails"
    edge = {**interior, "eps=60, T=120": _row(21, 21)}  # the minimum at the edge of validity
    v = cl.remark5_verdict(rows=edge, N=50)
    assert (v.verdict, v.reason) == ("inconclusive", "resolution")
    none = {"eps=60, T=25": _row(None, None, None, None)}
    assert cl.remark5_verdict(rows=none, N=50).reason == "resolution"
    with pytest.raises(ValueError, match="rows"):
        cl.remark5_verdict(rows={}, N=50)


# ------------------------------------------------------------------ Remark 5 and the exposures' privacy
def test_uplink_exposures_privacy_L_decides_the_paper_eps():
    # L = 1: one release at sigma_U = c Ds_U/eps; at eps = 60, delta = 0.01 the exact delta is
    # 1 - 4.48e-11 and the eps really bought 230.374 (tests/test_mechanisms.py, by the profile)
    d1, e1 = th.uplink_exposures_privacy(eps=60, delta=0.01, L=1)
    assert 1 - d1 == pytest.approx(4.48e-11, rel=1e-2)
    assert e1 == pytest.approx(230.374, rel=1e-5)
    # L = 4, 5 (values computed independently by the referee): the guarantee flips between them
    got4 = [th.uplink_exposures_privacy(eps=e, delta=0.01, L=4)[0] for e in (50, 60, 100)]
    assert got4 == pytest.approx([0.0107, 0.0689, 0.961], rel=2e-2)
    got5 = [th.uplink_exposures_privacy(eps=e, delta=0.01, L=5)[0] for e in (50, 60, 100)]
    assert got5 == pytest.approx([2.66e-4, 3.15e-3, 0.570], rel=2e-2)
    # L = T = 25 composes to sensitivity 5 Ds_U at multiplier 25 c/eps: the downlink's z = cT/eps over
    # T releases, hence the same eps really bought (11.9, 15.7, 34.8; notebook 01's exact downlink)
    for e, eps_T in ((50, 11.918), (60, 15.663), (100, 34.833)):
        d25, e25 = th.uplink_exposures_privacy(eps=e, delta=0.01, L=25)
        assert d25 < 1e-30 and e25 == pytest.approx(eps_T, rel=1e-3)
    with pytest.raises(ValueError, match="L"):
        th.uplink_exposures_privacy(eps=60, delta=0.01, L=0)


def test_remark5_verdict_nonvacuous_gates_bounds_above_theta():
    vac = {"eps=60, T=200": _row(26, 26, bound=2.2, bound_K_N=2.3), "eps=60, T=400": _row(30, 21, 2.3, 2.4)}
    v = cl.remark5_verdict_nonvacuous(rows=vac, N=50, Theta=2.155)
    assert (v.verdict, v.reason) == ("inconclusive", "no-power")
    # a row below Theta is judged by remark5_verdict; the vacuous ones are set aside
    mixed = {**vac, "eps=100, T=200": _row(35, 21, bound=1.0, bound_K_N=2.0)}
    v = cl.remark5_verdict_nonvacuous(rows=mixed, N=50, Theta=2.155)
    assert v.verdict == "holds" and sorted(v.stats["vacuous"]) == sorted(vac)
    edge = {**vac, "eps=100, T=120": _row(21, 21, bound=1.0, bound_K_N=2.0)}
    assert cl.remark5_verdict_nonvacuous(rows=edge, N=50, Theta=2.155).reason == "resolution"
    # K* = N with a non-vacuous bound still refutes
    assert cl.remark5_verdict_nonvacuous(rows={"a": _row(50, 21, 1.0, 1.0)}, N=50, Theta=2.0).verdict == "fails"
    with pytest.raises(ValueError, match="rows"):
        cl.remark5_verdict_nonvacuous(rows={}, N=50, Theta=1.0)


def test_classic_crossover_at_wei_delta():
    # notebook 01 reports (not judges) where the classic sigma = c Ds/eps stops being (eps, delta)-DP:
    # eps = 6.7718 at Wei's delta = 0.01 (8.4198 at delta = 1e-5: tests/test_mechanisms.py)
    from fldp import mechanisms as M
    d = lambda e: M.gaussian_delta(eps=e, sigma=M.classic_gaussian_sigma(eps=e, delta=0.01, sensitivity=1.0), sensitivity=1.0)
    assert d(6.76) < 0.01 < d(6.78)
    for e in (0.01, 0.5, 0.999):  # inside Dwork & Roth's proven range eps < 1
        assert d(e) < 0.01


# ------------------------------------------------------------------ the re-derived forms (D1-D7)
# The constants of notebook 03's committed full run (results/wei2020/03_convergence.json), the MLP's
# d = 784*256 + 256 + 256*10 + 10 and the paper's N, m, L; numbers below marked "check.py" were computed by
# an independent script of the re-derivation (numpy/scipy, no fldp; not kept in the repository).
K03 = dict(rho=13.712803840637207, beta=1.5303666254542148, l=0.04500551690871505, B=4.28632230748922,
           mu=369.49429057166276)
THETA03, D_MLP = 2.1550668885987356, 784 * 256 + 256 + 256 * 10 + 10
MU3_04 = 1858.1972838205634  # notebook 04's mu3 (2 x the smallest mu with alpha2 < 0 at K = 37)


def _chi(d):
    """E||z||, z ~ N(0, I_d), by scipy's chi distribution (not fldp's lgamma)."""
    from scipy import stats
    return float(stats.chi(d).mean())


@pytest.mark.parametrize("d, n", [(1, 200_000), (10, 50_000), (1000, 4_000)])
def test_noise_moments_against_monte_carlo(d, n):
    sigma = 0.7
    rng = np.random.default_rng(d)
    norms = np.concatenate([np.linalg.norm(rng.normal(0.0, sigma, size=(n // 4, d)), axis=1) for _ in range(4)])
    e1, e2 = th.noise_moments(sigma=sigma, d=d)
    se1 = norms.std() / math.sqrt(n)
    se2 = (norms**2).std() / math.sqrt(n)
    assert abs(e1 - norms.mean()) < 5 * se1
    assert abs(e2 - (norms**2).mean()) < 5 * se2
    assert e2 == pytest.approx(d * sigma**2, rel=1e-12)


def test_noise_moments_closed_forms():
    # d = 1 is the half-normal mean of (61); d = 2 is the Rayleigh mean sigma sqrt(pi/2)
    assert th.noise_moments(sigma=2.0, d=1)[0] == pytest.approx(th.half_normal_mean(sigma=2.0), rel=1e-12)
    assert th.noise_moments(sigma=2.0, d=2)[0] == pytest.approx(2.0 * math.sqrt(math.pi / 2), rel=1e-12)
    # d = 3: sigma 2 sqrt(2/pi) (Maxwell); the MLP's d: chi_d/sqrt(d) = 0.99999877 (check.py)
    assert th.noise_moments(sigma=1.0, d=3)[0] == pytest.approx(2 * math.sqrt(2 / math.pi), rel=1e-12)
    assert th.noise_moments(sigma=1.0, d=D_MLP)[0] / math.sqrt(D_MLP) == pytest.approx(0.9999987716, abs=1e-9)
    arr = th.noise_moments(sigma=np.array([1.0, 2.0]), d=10)
    assert arr[0] == pytest.approx([_chi(10), 2 * _chi(10)]) and arr[1] == pytest.approx([10.0, 40.0])


def test_lambda1_readings():
    # rho = B = 1, mu = 10: printed 1/10 + 1/10 = 0.2; the paper's route 1 + 1/10 = 1.1; independence 0
    assert th.lambdas(rho=1, B=1, mu=10)[1] == pytest.approx(0.2)
    assert th.lambdas(rho=1, B=1, mu=10, lambda1="derived") == pytest.approx((0.5, 1.1, -0.085))
    assert th.lambdas(rho=1, B=1, mu=10, lambda1="independent") == pytest.approx((0.5, 0.0, -0.085))
    # 03's constants: 0.162 printed, 1.159 corrected (the derivation's D1)
    assert th.lambdas(rho=K03["rho"], B=K03["B"], mu=K03["mu"])[1] == pytest.approx(0.1618, abs=1e-4)
    assert th.lambdas(rho=K03["rho"], B=K03["B"], mu=K03["mu"], lambda1="derived")[1] == pytest.approx(1.1591, abs=1e-4)


@pytest.mark.parametrize("d, C, N", [(10, 0.5, 50), (D_MLP, 20.0, 50), (1000, 3.0, 7)])
def test_derived_kappas_against_printed_ratios(d, C, N):
    # derived / printed (scale 1): kappa1 x 2C sqrt(pi d/(2N)) chi_d/sqrt(d), kappa0 x 4 C^2 d/N
    for lam in ("paper", "derived"):
        pr = th.theorem2_constants(**K03, c=C0, m=1200, N=N, lambda1=lam)
        de = th.theorem2_constants(**K03, c=C0, m=1200, N=N, moments="derived", d=d, C=C, lambda1=lam)
        assert de.P == pr.P
        assert de.kappa1 / pr.kappa1 == pytest.approx(2 * C * math.sqrt(math.pi * d / (2 * N)) * _chi(d) / math.sqrt(d),
                                                      rel=1e-9)
        assert de.kappa0 / pr.kappa0 == pytest.approx(4 * C**2 * d / N, rel=1e-12)
    assert th.theorem2_constants(**K03, c=C0, m=1200, N=N, moments="derived", d=d, C=C,
                                 lambda1="independent").kappa1 == 0.0


def test_kappa_sizes_of_the_derivation():
    # section 3c of the re-derivation, 03 constants, C = 20 (check.py): 0.594 / 0.00755 printed (2C = 1),
    # 23.8 / 12.1 with scale 40, 1,900 / 13,610 / 0 and 49,170 derived; ratios 3,198 and 6.5e6
    pr = th.theorem2_constants(**K03, c=C0, m=1200, N=50)
    assert (pr.kappa1, pr.kappa0) == pytest.approx((0.5940, 0.007550), rel=1e-3)
    r40 = th.theorem2_constants(**K03, c=C0, m=1200, N=50, scale=40)
    assert (r40.kappa1, r40.kappa0) == pytest.approx((23.76, 12.08), rel=1e-3)
    k1 = [th.theorem2_constants(**K03, c=C0, m=1200, N=50, moments="derived", d=D_MLP, C=20.0, lambda1=v)
          for v in ("paper", "derived", "independent")]
    assert [k.kappa1 for k in k1] == pytest.approx([1900, 13610, 0.0], rel=1e-3)
    assert all(k.kappa0 == pytest.approx(49170, rel=1e-3) for k in k1)
    assert k1[0].kappa1 / pr.kappa1 == pytest.approx(3198, abs=1)
    assert k1[0].kappa0 / pr.kappa0 == pytest.approx(6.5128e6, rel=1e-4)


def test_derived_moments_refuse_scale_and_printed_refuse_d():
    with pytest.raises(ValueError, match=r"^scale=40.*moments='derived'"):
        th.theorem2_constants(**K03, c=C0, m=1200, N=50, moments="derived", d=10, C=20.0, scale=40)
    with pytest.raises(ValueError, match=r"^d=None.*needs d"):
        th.theorem2_constants(**K03, c=C0, m=1200, N=50, moments="derived", C=20.0)
    with pytest.raises(ValueError, match=r"^C=20\.0 is used only with moments='derived'.*scale=2C"):
        th.theorem2_constants(**K03, c=C0, m=1200, N=50, C=20.0)
    with pytest.raises(ValueError, match=r"^d=10 is used only"):
        th.theorem3_bound(T=200, eps=60.0, K=20, N=50, m=1200, c=C0, d=10, **T3)
    with pytest.raises(ValueError, match=r"^scale=2\.0"):
        th.theorem3_bound(T=200, eps=60.0, K=20, N=50, m=1200, c=C0, moments="derived", d=10, C=1.0, L=1, scale=2.0,
                          **T3)
    with pytest.raises(ValueError, match=r"^lambda1="):
        th.lambdas(rho=1, B=1, mu=10, lambda1="printed")
    with pytest.raises(ValueError, match=r"^alphas="):
        th.theorem3_constants(rho=1, B=1, mu=10, l=0.5, K=20, N=50, alphas="tight")
    with pytest.raises(ValueError, match=r"^N=None.*alphas='independent'"):
        th.theorem3_alpha2(rho=1, B=1, mu=10, K=20, alphas="independent")


def test_theorem2_bound_derived_both_branches():
    kw = dict(eps=60.0, Theta=THETA03, c=C0, m=1200, N=50, C=20.0, L=1, d=D_MLP, **K03)
    P = th.theorem2_P(rho=K03["rho"], B=K03["B"], mu=K03["mu"], l=K03["l"])
    lam0, lam1 = K03["rho"] / 2, 1 + K03["rho"] * K03["B"] / K03["mu"]
    chi = _chi(D_MLP)
    for T in (1.0, 5.0, 7.0, 8.0, 25.0, 300.0):
        # (16) by hand: sigma_U/sqrt(N) up to L sqrt(N) = 7.07, c T 2C/(mN eps) above
        sA = 2 * C0 * 20.0 / (1200 * math.sqrt(50) * 60) if T <= math.sqrt(50) else C0 * T * 40 / (1200 * 50 * 60)
        S = (lam1 * K03["beta"] * chi * sA + lam0 * D_MLP * sA**2) / (1 - P)
        assert th.theorem2_bound_derived(T=T, **kw) == pytest.approx(P**T * THETA03 + (1 - P**T) * S, rel=1e-9)
    # above L sqrt(N) it is (17) with the derived kappas
    k = th.theorem2_constants(**K03, c=C0, m=1200, N=50, moments="derived", d=D_MLP, C=20.0, lambda1="derived")
    Ts = np.array([8.0, 25.0, 300.0])
    assert th.theorem2_bound_derived(T=Ts, **kw) == pytest.approx(
        th.theorem2_bound(T=Ts, eps=60.0, Theta=THETA03, **k._asdict()), rel=1e-9)


def test_remark4_numbers_of_the_derivation():
    # section 3a (check.py): C_max and h(1)/Theta at C = 20, per lambda1 reading and eps = 50, 60, 100
    c_max = {"paper": (0.1560, 0.1872, 0.3119), "derived": (0.02238, 0.02685, 0.04476),
             "independent": (0.9362, 1.123, 1.872)}
    h1 = {"paper": (1.07065, 1.05113, 1.02137), "derived": (1.16425, 1.12914, 1.06817),
          "independent": (1.05546, 1.03848, 1.01377)}
    base = dict(Theta=THETA03, c=C0, m=1200, N=50, L=1, d=D_MLP, **K03)
    for lam in c_max:
        for e, cm, h in zip((50, 60, 100), c_max[lam], h1[lam]):
            assert th.remark4_C_max(eps=e, lambda1=lam, **base) == pytest.approx(cm, rel=2e-3)
            opt = th.theorem2_optimal_T_derived(eps=e, C=20.0, T_max=500, lambda1=lam, **base)
            assert (opt.T_star, opt.informative) == (1, False)
            assert opt.bound / THETA03 == pytest.approx(h, abs=1e-5)
    # below C_max the optimum is informative and lies above L sqrt(N): lambda1 = 0, C = 0.01 gives
    # T* = 379, 454, 753 and h/Theta = 0.96967, 0.96377, 0.94070 (check.py)
    for e, Ts, h in ((50, 379, 0.96967), (60, 454, 0.96377), (100, 753, 0.94070)):
        opt = th.theorem2_optimal_T_derived(eps=e, C=0.01, T_max=3000, lambda1="independent", **base)
        assert opt.informative and opt.T_star == Ts and opt.bound / THETA03 == pytest.approx(h, abs=1e-5)


def test_remark4_C_max_is_the_root_of_S0_equals_Theta():
    base = dict(Theta=THETA03, c=C0, m=1200, N=50, L=1, d=D_MLP, **K03)
    P = th.theorem2_P(rho=K03["rho"], B=K03["B"], mu=K03["mu"], l=K03["l"])
    for lam, lam1 in (("paper", (1 + K03["rho"] * K03["B"]) / K03["mu"]), ("independent", 0.0)):
        for e in (50, 100):
            C = th.remark4_C_max(eps=e, lambda1=lam, **base)
            u = 2 * C0 * 1 * C / (1200 * math.sqrt(50) * e)  # sigma_U / sqrt(N), by hand
            S0 = (lam1 * K03["beta"] * _chi(D_MLP) * u + K03["rho"] / 2 * D_MLP * u**2) / (1 - P)
            assert S0 == pytest.approx(THETA03, rel=1e-9)
            lo = th.theorem2_optimal_T_derived(eps=e, C=C * (1 - 1e-6), T_max=50, lambda1=lam, **base)
            hi = th.theorem2_optimal_T_derived(eps=e, C=C * (1 + 1e-6), T_max=50, lambda1=lam, **base)
            assert lo.informative and not hi.informative
            assert lo.S0 == pytest.approx(THETA03, rel=1e-5)


def test_krandom_K_min_hand_values():
    # eps = 60, T = 120, N = 50: 50 (1 - e^{-1/2}) = 19.6735; eps = 50, T = 25: 50 (1 - e^{-2}) = 43.2332
    assert th.krandom_K_min(eps=60, T=120, N=50) == pytest.approx(19.6735, abs=1e-4)
    assert th.krandom_K_min(eps=50, T=25, N=50) == pytest.approx(43.2332, abs=1e-4)
    # it is (69)'s edge: krandom_conditions flips between floor and ceil
    for eps, T in ((60, 120), (50, 25), (100, 400)):
        k69 = th.krandom_K_min(eps=eps, T=T, N=50)
        assert not th.krandom_conditions(eps=eps, T=T, N=50, K=math.floor(k69), L=1)["eq69"]
        assert th.krandom_conditions(eps=eps, T=T, N=50, K=math.ceil(k69), L=1)["eq69"]


def test_theorem3_alpha_readings_hand_values():
    K, N = 20, 50
    lam2 = -0.085  # rho = B = 1, mu = 10
    # independence route (D7): alpha2' = lambda2 + rho B^2 (N-K)/(2 mu^2 K (N-1)) = -0.085 + 30/196000
    a = th.theorem3_constants(rho=1, B=1, mu=10, l=0.5, K=K, N=N, alphas="independent")
    assert (a.alpha0, a.alpha1, a.alpha2) == pytest.approx((0.5, 0.0, lam2 + 30 / 196000), rel=1e-12)
    assert a.Q == pytest.approx(1 + 2 * 0.5 * (lam2 + 30 / 196000), rel=1e-12)
    # (93): alpha1 = 1 + 2 rho B/mu = 1.2, alpha0 = rho = 1, alpha2 as printed (-0.05766718)
    b = th.theorem3_constants(rho=1, B=1, mu=10, l=0.5, K=K, N=N, alphas="derived")
    assert (b.alpha0, b.alpha1, b.alpha2) == pytest.approx((1.0, 1.2, -0.05766718), abs=1e-8)
    assert th.theorem3_alpha2(rho=1, B=1, mu=10, K=K, N=N, alphas="independent") == pytest.approx(a.alpha2)
    assert th.theorem3_Q(rho=1, B=1, mu=10, l=0.5, K=K, N=N, alphas="independent") == pytest.approx(a.Q)
    # K = N: no sampling term, alpha2' = lambda2 (also for N = 1)
    assert th.theorem3_alpha2(rho=1, B=1, mu=10, K=50, N=50, alphas="independent") == pytest.approx(lam2)
    assert th.theorem3_alpha2(rho=1, B=1, mu=10, K=1, N=1, alphas="independent") == pytest.approx(lam2)


def test_theorem3_mu_min_independence_covers_every_K():
    # 03's constants: rho B (1 + B/2) = 184.7 at K = N, + rho B^2 / 2 = 310.7 at K = 1 (the derivation's row 25)
    mu = lambda K: th.theorem3_mu_min(rho=K03["rho"], B=K03["B"], K=K, N=50, alphas="independent")  # noqa: E731
    assert mu(50) == pytest.approx(184.7, abs=0.05) and mu(1) == pytest.approx(310.7, abs=0.05)
    for K in (1, 2, 10, 18, 19, 49):  # the printed (94) has no mu for K <= B^2 = 18.4
        m_ = mu(K)
        assert th.theorem3_alpha2(rho=K03["rho"], B=K03["B"], mu=m_ * 1.01, K=K, N=50, alphas="independent") < 0
        assert th.theorem3_alpha2(rho=K03["rho"], B=K03["B"], mu=m_ * 0.99, K=K, N=50, alphas="independent") > 0
    with pytest.raises(BoundOutsideAssumptions):
        th.theorem3_mu_min(rho=K03["rho"], B=K03["B"], K=18, N=50, alphas="derived")


def test_theorem3_bound_derived_noise_and_continuity():
    # sigma_AK = max(2cC/(mK(-ln a)), 2cLC/(m sqrt(K) eps)) (the derivation's row 17), by hand
    N, K, eps, C, m, d = 50, 20, 60.0, 20.0, 1200, 1000
    kw = dict(eps=eps, K=K, N=N, m=m, Theta=THETA03, c=C0, moments="derived", d=d, C=C, L=1, alphas="independent",
              **{**K03, "mu": K03["mu"]})
    Q, a0, a1, _ = th.theorem3_constants(rho=K03["rho"], B=K03["B"], mu=K03["mu"], l=K03["l"], K=K, N=N,
                                         alphas="independent")
    for T in (25.0, 120.0, 200.0, 400.0):
        arg = 1 - N / K + (N / K) * math.exp(-eps / T)
        up = 2 * C0 * C / (m * math.sqrt(K) * eps)
        sAK = max(2 * C0 * C / (m * K * -math.log(arg)), up) if arg > 0 else up
        expected = Q**T * THETA03 + (1 - Q**T) / (1 - Q) * (a1 * K03["beta"] * _chi(d) * sAK + a0 * d * sAK**2)
        assert th.theorem3_bound(T=T, **kw) == pytest.approx(expected, rel=1e-9)
    # continuous at the (75)/(76) switch T = eps/gamma, where sigma_D,K reaches 0 (steeply: the switch lies
    # within 2e-6 of the (69) edge here, where b blows up, so the jump over T (1 -+ x) shrinks like x)
    Ts = eps / th.krandom_gamma(eps=eps, L=1, N=N, K=K)
    jump = [abs(th.theorem3_bound(T=Ts * (1 + x), **kw) / th.theorem3_bound(T=Ts * (1 - x), **kw) - 1)
            for x in (1e-9, 1e-11, 1e-13)]
    assert jump[0] < 1e-4 and jump[1] < jump[0] / 50 and jump[2] < 1e-7
    # where (69) fails the derived bound exists (uplink noise only); (23) raises there
    assert math.isfinite(th.theorem3_bound(T=25.0, **kw))
    with pytest.raises(BoundOutsideAssumptions, match=r"eq\. \(69\)"):
        th.theorem3_bound(T=25.0, eps=eps, K=30, N=N, m=m, Theta=THETA03, c=C0, **{**K03, "mu": MU3_04})


@pytest.mark.parametrize("eps, T, K_star", [(50, 25, 43), (60, 25, 45), (100, 25, 49), (60, 120, 19),
                                             (50, 400, 5), (100, 400, 11)])
def test_theorem3_optimal_K_is_the_eq69_edge(eps, T, K_star):
    # the derivation's table 3b: 03 constants, mu = 369.5, independence alphas, C = 20, d = the MLP's
    r = th.theorem3_optimal_K(T=T, eps=eps, N=50, m=1200, Theta=THETA03, c=C0, moments="derived", d=D_MLP, C=20.0,
                              L=1, alphas="independent", **K03)
    assert r.K_star == K_star == math.floor(50 * (1 - math.exp(-eps / T)))
    assert r.K_69 == pytest.approx(50 * (1 - math.exp(-eps / T)), rel=1e-12)
    assert sorted(r.values) == list(range(1, 51))  # every K: (69) does not cut the derived bound
    assert r.bound > THETA03  # vacuous at C = 20 (bound(K*)/Theta = 1.35 to 219)


def test_theorem3_C_max_and_vacuous_ranges():
    # the derivation's 3b: min_K bound < Theta needs C < 0.28-1.85 (independence, mu = 369.5) and
    # C < 4e-5 to 5e-3 with the printed alphas at mu3 (check3.py)
    base = dict(N=50, m=1200, Theta=THETA03, c=C0, L=1, d=D_MLP)
    def c_max(eps, T, alphas, mu):
        out = []
        for K in range(1, 51):
            try:
                out.append(th.theorem3_C_max(T=T, eps=eps, K=K, alphas=alphas, **base, **{**K03, "mu": mu}))
            except BoundOutsideAssumptions:
                pass
        return max(out)
    assert c_max(50, 400, "independent", K03["mu"]) == pytest.approx(0.277, abs=1e-3)
    assert c_max(100, 25, "independent", K03["mu"]) == pytest.approx(1.85, abs=1e-2)
    assert c_max(50, 400, "paper", MU3_04) == pytest.approx(4.31e-5, rel=1e-2)
    assert c_max(100, 25, "paper", MU3_04) == pytest.approx(4.70e-3, rel=1e-2)
    # the bound at C_max equals Theta
    C = th.theorem3_C_max(T=120, eps=60, K=19, alphas="independent", **base, **K03)
    assert th.theorem3_bound(T=120, eps=60, K=19, moments="derived", C=C, alphas="independent", **base,
                             **K03) == pytest.approx(THETA03, rel=1e-9)


def test_remark5_verdict_decides_at_K69_and_names_it():
    """The grid of K resolves K*: an optimum within 1 of K_69 (where sigma_D,K reaches 0, the paper's
    own mechanism) is decided like any other, and the verdict says where it lies."""
    row = lambda K, K69, b=1.0, bN=2.0: {"K_star": K, "K_min_valid": 1, "bound": b, "bound_K_N": bN,  # noqa: E731
                                         "K_69": K69}
    v = cl.remark5_verdict(rows={"eps=60, T=120": row(19, 19.67)}, N=50)
    assert v.verdict == "holds" and "K_69" in v.why and v.stats["at_K69"] == ["eps=60, T=120: K* = 19, K_69 = 19.67"]
    assert cl.remark5_verdict(rows={"a": row(20, 19.67, 2.5, 2.0)}, N=50).verdict == "fails"  # at K_69 but no better than K = N
    assert cl.remark5_verdict(rows={"a": row(21, 19.67)}, N=50).stats["at_K69"] == []  # more than 1 from the edge
    assert cl.remark5_verdict(rows={"a": row(50, 19.67, 1.0, 1.0)}, N=50).verdict == "fails"
    # without K_69 the old rule stands
    assert cl.remark5_verdict(rows={"a": _row(30, 21)}, N=50).verdict == "holds"
