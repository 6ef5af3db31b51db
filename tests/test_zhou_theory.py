"""Zhou et al. (FedSGD-DPC) theory, pinned to values worked out by hand: the noise
calibrations of Theorems 1-2 (moved from tests/test_mechanisms.py with the functions), then
Propositions 1-2 (and Monte Carlo), Lemmas 1-4, Theorems 3-4, eq. (6), b*, the biconvex
problems of Secs. V-B / VI-B, Alternate Convex Search and Table I."""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from fldp.papers.zhou import theory as zt


def test_laplace_scale_theorem1():
    # Zhou Thm 1: 2 b T xi1 / (N d_i eps) = 2*1*22*300 / (10*6000*1) = 13200 / 60000 = 0.22
    assert zt.laplace_scale(eps=1.0, b=1, T=22, N=10, d_i=6000, xi1=300.0) == pytest.approx(0.22, rel=1e-15)
    # b = 5, T = 32, eps = 5: 2*5*32*300/(10*6000*5) = 96000/300000 = 0.32
    assert zt.laplace_scale(eps=5.0, b=5, T=32, N=10, d_i=6000, xi1=300.0) == pytest.approx(0.32, rel=1e-15)


def test_gaussian_sigma_theorem2():
    # Zhou Thm 2 eq. 5, c2 = 1, xi2 = 10, b = N = 10, T = 100, d_i = 6000, eps = 0.5, delta=1e-5:
    # var = 1 * 100 * 10 * 100 * ln(1e5) / (6000^2 * 0.25 * 10) = 1e5 * 11.512925 / 9e7
    #     = 0.01279214;  sigma = 0.1131024
    kw = dict(eps=0.5, delta=1e-5, b=10, T=100, N=10, d_i=6000, xi2=10.0)
    s = zt.gaussian_sigma(**kw, c2=1.0)
    assert s == pytest.approx(math.sqrt(1e5 * math.log(1e5) / 9e7), rel=1e-14)
    assert s == pytest.approx(0.1131024, abs=1e-7)
    # linear in c2
    assert zt.gaussian_sigma(**kw, c2=3.0) == pytest.approx(3 * s)


def test_keyword_only():
    with pytest.raises(TypeError, match="positional"):
        zt.laplace_scale(1.0, 1, 22, 10, 6000, 300.0)
    with pytest.raises(TypeError, match="positional"):
        zt.gaussian_sigma(0.5, 1e-5, 10, 100, 10, 6000, 10.0, 1.0)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_eps_errors(bad):
    for call in [
        lambda: zt.laplace_scale(eps=bad, b=1, T=1, N=1, d_i=1, xi1=1.0),
        lambda: zt.gaussian_sigma(eps=bad, delta=1e-5, b=1, T=1, N=1, d_i=1, xi2=1.0, c2=1.0),
    ]:
        with pytest.raises(ValueError, match=r"^eps=.*eps must be in \(0, inf\)"):
            call()


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_delta_errors(bad):
    with pytest.raises(ValueError, match=r"^delta=.*delta must be in \(0, 1\)"):
        zt.gaussian_sigma(eps=1.0, delta=bad, b=1, T=1, N=1, d_i=1, xi2=1.0, c2=1.0)


def test_other_argument_errors():
    with pytest.raises(ValueError, match=r"^b="):
        zt.laplace_scale(eps=1.0, b=11, T=1, N=10, d_i=100, xi1=1.0)  # b > N
    with pytest.raises(ValueError, match=r"^T="):
        zt.gaussian_sigma(eps=1.0, delta=1e-5, b=1, T=0, N=10, d_i=100, xi2=1.0, c2=1.0)
    with pytest.raises(ValueError, match=r"^c2="):
        zt.gaussian_sigma(eps=1.0, delta=1e-5, b=1, T=1, N=10, d_i=100, xi2=1.0, c2=0.0)


# =====================================================================================
# Sections IV-VI and Appendices A-H: variances, lemmas, Theorems 3-4, the optimisation.
# Hand-worked constants used throughout (small round numbers):
#   eta = 0.1, p = 10, b = 2, T = 5, xi1 = 3, N = 4, d = 100 (d_i = 25), eps = 1
#   (sum_i 1/eps_i^2 = 4), G = 2, lam = 2, mu = 1 (gamma = 2*2/1 = 4), Gamma = 0.5, Y0 = 3;
#   Gaussian: xi2 = 2, c2 = 1, delta = e^-2 (sum_i log(1/delta_i)/eps_i^2 = 4*2 = 8),
#   q = 0.5, Lambda = 1.
# =====================================================================================
LAP = dict(N=4, p=10, d=100, eps=1.0, xi1=3.0)
CURV = dict(G=2.0, lam=2.0, mu=1.0, Gamma=0.5, Y0=3.0)
GAU = dict(N=4, p=10, d=100, eps=1.0, delta=math.exp(-2.0), xi2=2.0, c2=1.0, q=0.5, Lambda=1.0)
OMEGA0 = dict(N=4, G=2.0, lam=2.0, Gamma=0.5)
MNIST = dict(mu=1.0, lam=1.5, G=17.95, Gamma=80.0, Y0=100.0, xi1=300.0, p=7840, d=60000, N=10)
FEMNIST = dict(mu=1.0, lam=2.25, G=18.9, Gamma=150.0, Y0=200.0, xi1=200.0, p=110526, d=70037, N=10)


def _U(C, gamma):
    return functools.partial(zt.U_laplace, C1=C.C1, C2=C.C2, C3=C.C3, gamma=gamma)


# ----------------------------------------------------------------- Propositions 1-2
def test_prop1_by_hand():
    # 8 eta^2 p b T^2 xi1^2 / (N d^2) * sum 1/eps^2 = 8*0.01*10*2*25*9 / (4*10000) * 4
    #   = 360 / 40000 * 4 = 0.009 * 4 = 0.036
    assert zt.aggregated_laplace_variance(eta=0.1, b=2, T=5, **LAP) == pytest.approx(0.036, rel=1e-12)
    # per-client eps = (1, 1, 2, 2): sum = 1 + 1 + 0.25 + 0.25 = 2.5 -> 0.009 * 2.5 = 0.0225
    v = zt.aggregated_laplace_variance(eta=0.1, b=2, T=5, **{**LAP, "eps": [1, 1, 2, 2]})
    assert v == pytest.approx(0.0225, rel=1e-12)


def test_prop1_monte_carlo():
    # b of N equal-size clients drawn uniformly each round, Theorem 1's Laplace noise with
    # each client's own eps_i, aggregated as w^b = (N/b) sum_{i in P} (d_i/d) eta w^i.
    rng = np.random.default_rng(12345)
    N, b, T, p, d_i, eta, xi1 = 4, 2, 5, 10, 25, 0.1, 3.0
    eps = np.array([0.5, 1.0, 2.0, 4.0])  # sum 1/eps^2 = 4 + 1 + 0.25 + 0.0625 = 5.3125
    scales = np.array([zt.laplace_scale(eps=e, b=b, T=T, N=N, d_i=d_i, xi1=xi1) for e in eps])
    M = 40000
    chosen = np.argsort(rng.random((M, N)), axis=1)[:, :b]
    noise = rng.laplace(0.0, 1.0, (M, b, p)) * scales[chosen][..., None]
    w = (N / b) * (d_i / (N * d_i)) * eta * noise.sum(axis=1)
    sq = (w**2).sum(axis=1)
    mean, se = sq.mean(), sq.std(ddof=1) / math.sqrt(M)
    prop1 = zt.aggregated_laplace_variance(eta=eta, p=p, b=b, T=T, N=N, d=N * d_i, eps=eps, xi1=xi1)
    assert prop1 == pytest.approx(0.009 * 5.3125, rel=1e-12)  # = 0.0478125
    assert abs(mean - prop1) < 3 * se
    # the simulation has the power to reject a wrong formula, e.g. b = 1 in place of b = 2
    wrong = zt.aggregated_laplace_variance(eta=eta, p=p, b=1, T=T, N=N, d=N * d_i, eps=eps, xi1=xi1)
    assert abs(mean - wrong) > 10 * se


def test_prop2_by_hand_and_monte_carlo():
    # c2^2 eta^2 p T xi2^2 / d^2 * sum log(1/delta)/eps^2 = 1*0.01*10*5*4/10000 * 8 = 2e-4*8 = 1.6e-3
    kw = dict(eta=0.1, p=10, T=5, N=4, d=100, eps=1.0, delta=math.exp(-2.0), xi2=2.0, c2=1.0)
    assert zt.aggregated_gaussian_variance(**kw) == pytest.approx(1.6e-3, rel=1e-12)
    # Monte Carlo with unequal d_i: Prop. 2 holds for any d_i (they cancel)
    rng = np.random.default_rng(7)
    N, b, T, p, eta = 4, 3, 5, 10, 0.1
    d_i = np.array([10, 20, 30, 40])
    sig = np.array([zt.gaussian_sigma(eps=1.0, delta=math.exp(-2.0), b=b, T=T, N=N, d_i=int(n), xi2=2.0, c2=1.0)
                    for n in d_i])
    M = 40000
    chosen = np.argsort(rng.random((M, N)), axis=1)[:, :b]
    noise = rng.normal(0.0, 1.0, (M, b, p)) * (sig[chosen] * d_i[chosen] / 100.0)[..., None]
    sq = (((N / b) * eta * noise.sum(axis=1)) ** 2).sum(axis=1)
    assert abs(sq.mean() - 1.6e-3) < 3 * sq.std(ddof=1) / math.sqrt(M)


# ----------------------------------------------------------------- Lemmas 1-4
def test_lemma1_enumeration_is_unbiased():
    rng = np.random.default_rng(3)
    d_i = np.array([5.0, 10.0, 20.0, 40.0, 25.0, 7.0])
    nu = rng.normal(size=(6, 3))
    full = (d_i / d_i.sum()) @ nu
    for b in range(1, 7):
        got = zt.client_sampling_expectation(d_i=d_i, nu=nu, b=b)
        np.testing.assert_allclose(got, full, rtol=1e-12, atol=1e-12)
    # dropping the N/b factor (a plain sum over P) would be biased: the enumeration sees it
    assert not np.allclose(zt.client_sampling_expectation(d_i=d_i, nu=nu, b=2) * 2 / 6, full)
    # hand: N=2, b=1, d_i = (1, 3), nu = (4, 8): subsets {1}: 2*(1/4)*4 = 2, {2}: 2*(3/4)*8 = 12;
    # mean 7 = (1/4)*4 + (3/4)*8
    assert zt.client_sampling_expectation(d_i=[1, 3], nu=[4.0, 8.0], b=1) == pytest.approx(7.0)


def test_lemma1_limits():
    with pytest.raises(ValueError, match=r"^N=21"):
        zt.client_sampling_expectation(d_i=[1.0] * 21, nu=np.zeros(21), b=2)
    with pytest.raises(ValueError, match=r"^nu "):
        zt.client_sampling_expectation(d_i=[1.0, 2.0], nu=np.zeros(3), b=1)
    with pytest.raises(ValueError, match=r"^b=3"):
        zt.client_sampling_expectation(d_i=[1.0, 2.0], nu=np.zeros(2), b=3)


def test_lemma2_by_hand_and_by_enumeration():
    # 2 (N-b)/(N-1) G^2/b = 2*2/3*4/2 = 8/3
    assert zt.client_sampling_variance(N=4, b=2, G=2.0) == pytest.approx(8 / 3, rel=1e-14)
    assert zt.client_sampling_variance(N=4, b=4, G=2.0) == 0.0  # everyone queried
    # exact E||g^b - g||^2 over all size-b sets (equal weights) = Appendix C's middle line
    # (N-b)/(b N (N-1)) sum_i ||x_i - g||^2, and it is below the lemma's bound
    rng = np.random.default_rng(5)
    N = 6
    x = rng.normal(size=(N, 4)) + 1.0
    g = x.mean(axis=0)
    G = math.sqrt(max((x**2).sum(axis=1)))
    for b in range(1, N + 1):
        exact = np.mean([((x[list(P)].mean(axis=0) - g) ** 2).sum()
                         for P in itertools.combinations(range(N), b)])
        middle = (N - b) / (b * N * (N - 1)) * ((x - g) ** 2).sum()
        assert exact == pytest.approx(middle, rel=1e-12, abs=1e-15)
        assert exact <= zt.client_sampling_variance(N=N, b=b, G=G) + 1e-15


def test_lemma4_by_hand():
    # 8/3 + sum d_i Lambda^2 / (q d^2) = 8/3 + 4*25*1/(0.5*10000) = 8/3 + 0.02
    kw = dict(N=4, b=2, G=2.0, d=100, q=0.5, Lambda=1.0)
    assert zt.sampled_gradient_variance(**kw) == pytest.approx(8 / 3 + 0.02, rel=1e-14)
    assert zt.sampled_gradient_variance(**kw, d_i=25) == pytest.approx(8 / 3 + 0.02, rel=1e-14)
    assert zt.sampled_gradient_variance(**kw, d_i=[25] * 4) == pytest.approx(8 / 3 + 0.02, rel=1e-14)
    # unequal: d_i = (10,20,30,40), Lambda = (1,2,3,4): (10 + 80 + 270 + 640)/(0.5*10000) = 0.2
    kw.update(Lambda=[1, 2, 3, 4], d_i=[10, 20, 30, 40])
    assert zt.sampled_gradient_variance(**kw) == pytest.approx(8 / 3 + 0.2, rel=1e-14)
    with pytest.raises(ValueError, match=r"^d_i=.*sum to d"):
        zt.sampled_gradient_variance(**{**kw, "d_i": [10, 20, 30, 41]})
    with pytest.raises(ValueError, match=r"^Lambda has 3 entries"):
        zt.sampled_gradient_variance(**{**kw, "Lambda": [1, 2, 3]})


def test_lemma3_by_hand_and_on_quadratics():
    # (1 - mu eta) dist + 2 lam eta^2 Gamma = (1 - 0.5)*4 + 2*2*0.25*0.5 = 2 + 0.5 = 2.5
    assert zt.one_step_bound(dist_sq=4.0, mu=1.0, lam=2.0, eta=0.5, Gamma=0.5) == pytest.approx(2.5)
    # F_i(theta) = h_i/2 ||theta - c_i||^2 (mu = min h_i, lam = max h_i, F_i* = 0):
    # one noiseless full-participation step never exceeds the bound
    rng = np.random.default_rng(11)
    h, w = np.array([1.0, 2.0, 4.0]), np.array([0.2, 0.3, 0.5])
    c = rng.normal(size=(3, 2)) * 3
    theta_star = (w * h) @ c / (w * h).sum()
    Gamma = float(w @ (h / 2 * ((theta_star - c) ** 2).sum(axis=1)))  # F* - sum w_i F_i*
    for _ in range(200):
        theta = rng.normal(size=2) * 5
        eta = rng.uniform(0.01, 1 / h.max())
        nu = theta - eta * (w * h) @ (theta - c)
        bound = zt.one_step_bound(dist_sq=float(((theta - theta_star) ** 2).sum()), mu=h.min(),
                                  lam=h.max(), eta=eta, Gamma=Gamma)
        assert ((nu - theta_star) ** 2).sum() <= bound + 1e-12
    with pytest.raises(ValueError, match=r"^eta=0.6 .*\(0, 0.5\]"):
        zt.one_step_bound(dist_sq=4.0, mu=1.0, lam=2.0, eta=0.6, Gamma=0.5)


# ----------------------------------------------------------------- Theorems 3-4
def test_gamma_and_learning_rate():
    assert zt.gamma_of(mu=1.0, lam=2.0) == 4.0  # 2*2/1
    assert zt.learning_rate(t=0, mu=1.0, lam=2.0) == pytest.approx(0.5)  # (2/1)/(0+4) = 1/lam
    assert zt.learning_rate(t=6, mu=1.0, lam=2.0) == pytest.approx(0.2)  # 2/10
    with pytest.raises(ValueError, match=r"^mu=3.0 .*\(0, 2\]"):
        zt.gamma_of(mu=3.0, lam=2.0)  # Assumptions 3-4 force mu <= lam


def test_theorem3_schedule_by_hand():
    # mu = 0.2, lam = 10: gamma = 100, eta_t = 10/(t + 100) = 0.1/(1 + 0.01 t)
    s = zt.theorem3_schedule(mu=0.2, lam=10.0)
    assert s.eta0 == pytest.approx(0.1, rel=1e-14) and s.decay == pytest.approx(0.01, rel=1e-14)
    assert zt.learning_rate(t=50, mu=0.2, lam=10.0) == pytest.approx(s.eta0 / (1 + s.decay * 50))  # 10/150
    assert s.eta0 / (1 + s.decay * 50) == pytest.approx(1 / 15, rel=1e-14)
    # mu = 0.5, lam = 4: gamma = 16, eta0 = 1/4, decay = 1/16
    assert tuple(zt.theorem3_schedule(mu=0.5, lam=4.0)) == pytest.approx((0.25, 0.0625), rel=1e-14)
    for t in (0, 3, 40):
        assert zt.learning_rate(t=t, mu=0.5, lam=4.0) == pytest.approx(0.25 / (1 + t / 16), rel=1e-14)
    with pytest.raises(ValueError, match=r"^mu=5.0 .*\(0, 4\]"):
        zt.theorem3_schedule(mu=5.0, lam=4.0)
    with pytest.raises(TypeError):
        zt.theorem3_schedule(0.5, 4.0)


def test_theorem3_by_hand():
    # omega0 = 8/3 + 2*2*0.5 = 14/3;  omega1 = 32*10*2*25*9/(4*10000)*4 = 3.6*4 = 14.4
    assert zt.omega0_laplace(b=2, **OMEGA0) == pytest.approx(14 / 3, rel=1e-14)
    assert zt.omega1_laplace(b=2, T=5, **LAP) == pytest.approx(14.4, rel=1e-14)
    # Y_5 <= (4/1 * 14/3 + 4*3)/(5+4) + 14.4/(5+4) = (56/3 + 132/5)/9 = (676/15)/9 = 676/135
    assert zt.laplace_bound(t=5, T=5, b=2, **LAP, **CURV) == pytest.approx(676 / 135, rel=1e-14)
    # t = 0 with the same T: (676/15)/4 = 676/60
    assert zt.laplace_bound(t=0, T=5, b=2, **LAP, **CURV) == pytest.approx(676 / 60, rel=1e-14)


def test_theorem3_bound_is_an_induction_invariant():
    # Appendix E: Y_{t+1} <= (1 - mu eta_t) Y_t + eta_t^2 omega, omega = Lemma 2 + 2 lam Gamma
    # + Prop. 1 / eta_t^2; the bound B_t must satisfy (1 - mu eta_t) B_t + eta_t^2 omega <= B_{t+1}
    T, b = 30, 3
    kw = dict(N=5, p=20, d=500, eps=[1.0, 2.0, 0.5, 1.0, 3.0], xi1=2.0)
    omega = (zt.client_sampling_variance(N=5, b=b, G=2.0) + 2 * 2.0 * 0.5
             + zt.aggregated_laplace_variance(eta=1.0, b=b, T=T, **kw))
    Y = zt.laplace_bound(t=0, T=T, b=b, **kw, **CURV)
    assert Y >= CURV["Y0"]
    for t in range(T):
        eta = zt.learning_rate(t=t, mu=1.0, lam=2.0)
        Y = (1 - 1.0 * eta) * Y + eta**2 * omega  # worst case of the recursion
        assert Y <= zt.laplace_bound(t=t + 1, T=T, b=b, **kw, **CURV) * (1 + 1e-12)


def test_theorem4_by_hand():
    # omega0' = 14/3 + 0.02;  omega1' = 4*1*10*5*4/10000*8 = 0.08*8 = 0.64
    assert zt.omega0_gaussian(b=2, d=100, q=0.5, Lambda=1.0, **OMEGA0) == pytest.approx(14 / 3 + 0.02)
    assert zt.omega1_gaussian(p=10, T=5, N=4, d=100, eps=1.0, delta=math.exp(-2.0), xi2=2.0,
                              c2=1.0) == pytest.approx(0.64, rel=1e-14)
    # Y_5 <= (4*(14/3 + 0.02) + 12 + 0.64)/9 = (56/3 + 318/25)/9 = (2354/75)/9 = 2354/675
    assert zt.gaussian_bound(t=5, T=5, b=2, **GAU, **CURV) == pytest.approx(2354 / 675, rel=1e-14)


# ----------------------------------------------------------------- eq. (6), b*
def test_eq6_by_hand():
    # A1 = 4/1 * 14/3 = 56/3;  A2 = 32*10*2*9*4/(4*10000) = 0.576
    A = zt.laplace_A(b=2, **LAP, G=2.0, lam=2.0, mu=1.0, Gamma=0.5)
    assert A.A1 == pytest.approx(56 / 3, rel=1e-14) and A.A2 == pytest.approx(0.576, rel=1e-14)
    # T* = sqrt(16 + (56/3 + 12)/0.576) - 4 = sqrt(16 + 53.2407...) - 4 = 4.3211021...
    Ts = zt.T_star(b=2, **LAP, **CURV)
    assert Ts == pytest.approx(math.sqrt(16 + (92 / 3) / 0.576) - 4, rel=1e-14)
    assert Ts == pytest.approx(4.3211021, abs=1e-7)
    # it minimises U(T) = (A1 + A2 T^2 + gamma Y0)/(T + gamma)
    U = lambda T: (A.A1 + A.A2 * T**2 + 4 * 3.0) / (T + 4)  # noqa: E731
    assert U(Ts) < min(U(Ts - 1e-3), U(Ts + 1e-3))
    # b real in the relaxation: b = 2.5 is fine, b outside [1, N] is not
    assert zt.T_star(b=2.5, **LAP, **CURV) < Ts
    for bad in (0.5, 4.5):
        with pytest.raises(ValueError, match=rf"^b={bad} .*\[1, 4\]"):
            zt.T_star(b=bad, **LAP, **CURV)


def test_b_star_by_hand_and_simplification():
    # paper's simplification: G N d / (2 T xi1) / sqrt(p (N-1) sum) = 2*4*100/(2*5*3)/sqrt(10*3*4)
    #   = 800 / (30 * sqrt(120)) = 2.4343225
    assert zt.b_star(T=5, **LAP, G=2.0) == pytest.approx(800 / (30 * math.sqrt(120)), rel=1e-14)
    # B1 = 4/1 * 4/9 * 8/3 = 128/27;  B2 = 1/9 * 32*10*25*9*4/(4*10000) = 7.2/9 = 0.8;
    # B3 = C3/9 = (28/3)/9 = 28/27;  sqrt(B1/B2) = sqrt(160/27) = 2.4343225
    B = zt.laplace_B(T=5, **LAP, **CURV)
    assert B == pytest.approx((128 / 27, 0.8, 28 / 27), rel=1e-14)
    assert math.sqrt(B.B1 / B.B2) == pytest.approx(800 / (30 * math.sqrt(120)), rel=1e-14)
    # sqrt(B1/B2) equals the simplification for any mu, lam, Gamma, Y0, T and per-client eps
    rng = np.random.default_rng(2)
    for _ in range(20):
        mu = rng.uniform(0.1, 2)
        kw = dict(N=7, p=int(rng.integers(1, 500)), d=rng.uniform(100, 1e4), eps=rng.uniform(0.2, 5, 7),
                  xi1=rng.uniform(0.5, 50), G=rng.uniform(0.1, 30))
        T = rng.uniform(0.5, 300)
        B = zt.laplace_B(T=T, **kw, mu=mu, lam=mu * rng.uniform(1, 5), Gamma=rng.uniform(0, 3), Y0=rng.uniform(0, 9))
        assert zt.b_star(T=T, **kw, clamp=False) == pytest.approx(math.sqrt(B.B1 / B.B2), rel=1e-12)


def test_b_star_clamped():
    # T = 1: 2.4343225 * 5 = 12.17 > N = 4 -> clamped to 4; G = 0.1: 0.0608 -> 1
    assert zt.b_star(T=1, **LAP, G=2.0, clamp=False) == pytest.approx(5 * 800 / (30 * math.sqrt(120)))
    assert zt.b_star(T=1, **LAP, G=2.0) == 4.0
    assert zt.b_star(T=5, **LAP, G=0.1) == 1.0
    assert zt.b_star(T=5, **LAP, G=2.0) == pytest.approx(2.4343225, abs=1e-7)  # interior: unchanged


# ----------------------------------------------------------------- biconvex problem (Laplace)
def test_laplace_C_and_U_by_hand():
    # C1 = 4*2*4*4/3 = 128/3;  C2 = 32*10*9*4/(4*10000) = 0.288;  C3 = 4*3 + 4*(2 - 8/3) = 28/3
    C = zt.laplace_C(**LAP, **CURV)
    assert C == pytest.approx((128 / 3, 0.288, 28 / 3), rel=1e-14)
    # U(5, 2) = (64/3 + 0.288*2*25 + 28/3)/9 = (92/3 + 14.4)/9 = 676/135 = Theorem 3 at t = T
    assert zt.U_laplace(T=5, b=2, gamma=4.0, **C._asdict()) == pytest.approx(676 / 135, rel=1e-14)


def test_U_laplace_equals_theorem3_at_t_equals_T():
    rng = np.random.default_rng(8)
    for _ in range(10):
        mu = rng.uniform(0.2, 2)
        kw = dict(N=6, p=int(rng.integers(1, 100)), d=rng.uniform(50, 5000), eps=rng.uniform(0.3, 4, 6),
                  xi1=rng.uniform(0.5, 20))
        curv = dict(G=rng.uniform(0, 10), lam=mu * rng.uniform(1, 4), mu=mu, Gamma=rng.uniform(0, 2),
                    Y0=rng.uniform(0, 10))
        C = zt.laplace_C(**kw, **curv)
        g = zt.gamma_of(mu=curv["mu"], lam=curv["lam"])
        for T, b in [(1, 1), (3, 2), (17, 6), (60, 4)]:
            assert zt.U_laplace(T=T, b=b, gamma=g, **C._asdict()) == pytest.approx(
                zt.laplace_bound(t=T, T=T, b=b, **kw, **curv), rel=1e-12)


def test_U_laplace_vectorised():
    C = zt.laplace_C(**LAP, **CURV)
    Tg, bg = np.meshgrid(np.linspace(0, 20, 7), np.linspace(1, 4, 5))
    grid = zt.U_laplace(T=Tg, b=bg, gamma=4.0, **C._asdict())
    assert grid.shape == (5, 7)
    assert grid[2, 3] == zt.U_laplace(T=float(Tg[2, 3]), b=float(bg[2, 3]), gamma=4.0, **C._asdict())
    with pytest.raises(ValueError, match=r"^T=-1.0 .*\[0, inf\)"):
        zt.U_laplace(T=np.array([0.0, -1.0]), b=1.0, gamma=4.0, **C._asdict())


def test_kkt_solutions_by_hand():
    # C1 = 8, C2 = 0.5, C3 = 1, gamma = 2, N = 4.  At a T-optimum U = 2 C2 b T.
    #   b = 1: T = sqrt(4 + 9/0.5) - 2 = sqrt(22) - 2 = 2.6904, U = 2*0.5*1*T = 2.6904
    #   b = 4: T = sqrt(4 + 3/2) - 2 = sqrt(5.5) - 2 = 0.34521, U = 2*0.5*4*T = 1.38083
    #   T = 0: U(0, 4) = (2 + 1)/2 = 1.5
    s1, s2, s3 = zt.laplace_kkt_solutions(C1=8, C2=0.5, C3=1, gamma=2, N=4)
    assert (s1.b, s2.b, s3.b, s3.T) == (1.0, 4.0, 4.0, 0.0)
    assert s1.T == pytest.approx(math.sqrt(22) - 2) and s1.U == pytest.approx(math.sqrt(22) - 2)
    assert s2.T == pytest.approx(math.sqrt(5.5) - 2) and s2.U == pytest.approx(4 * (math.sqrt(5.5) - 2))
    assert s3.U == pytest.approx(1.5)
    assert zt.laplace_optimum(C1=8, C2=0.5, C3=1, gamma=2, N=4) == s2  # b* = N wins here
    # C3 = 10, C1 = 1: b = 1: sqrt(4 + 22) - 2 = 3.0990 (U = 3.0990); b = 4: sqrt(4 + 10.25/2) - 2
    # = 1.02076 (U = 4.083); T = 0: 10.25/2 = 5.125 -> b* = 1 wins
    best = zt.laplace_optimum(C1=1, C2=0.5, C3=10, gamma=2, N=4)
    assert (best.b, best.T) == (1.0, pytest.approx(math.sqrt(26) - 2))


def test_kkt_clamps_negative_or_undefined_T():
    # C3 = -5: b = 4 has C1/b + C3 = -3 -> sqrt(4 - 1.5) - 2 < 0 -> T = 0, U = -3/2
    s1, s2, _ = zt.laplace_kkt_solutions(C1=8, C2=0.5, C3=-5, gamma=2, N=4)
    assert not s1.clamped and s1.T == pytest.approx(math.sqrt(10) - 2)
    assert s2.clamped and s2.T == 0.0 and s2.U == pytest.approx(-1.5)
    # C3 = -20: 4 + (8 - 20)/0.5 < 0 and 4 + (2 - 20)/2 < 0: square roots undefined -> T = 0
    s1, s2, _ = zt.laplace_kkt_solutions(C1=8, C2=0.5, C3=-20, gamma=2, N=4)
    assert (s1.T, s1.U, s1.clamped) == (0.0, pytest.approx(-6.0), True)  # (8 - 20)/2
    assert (s2.T, s2.U, s2.clamped) == (0.0, pytest.approx(-9.0), True)  # (2 - 20)/2


def test_b_star_criterion_and_solution3_never_wins():
    # b* = 1 iff C3 > 2 gamma sqrt(C1 C2) (else N), on random constant sets
    rng = np.random.default_rng(4)
    for _ in range(200):
        C1, C2, g, N = rng.uniform(0.1, 50), rng.uniform(0.01, 5), rng.uniform(2, 10), int(rng.integers(2, 30))
        C3 = rng.uniform(-C1 / N, 4 * g * math.sqrt(C1 * C2))
        best = zt.laplace_optimum(C1=C1, C2=C2, C3=C3, gamma=g, N=N)
        assert best.b == (1.0 if C3 > 2 * g * math.sqrt(C1 * C2) else float(N))
        assert best.solution != "Solution 3 (T* = 0)"
    # with the paper's constants C1/N + C3 = gamma Y0 + 8 lam Gamma/mu^2 >= 0: dU/dT(0, b) < 0
    C = zt.laplace_C(**LAP, **CURV)
    assert C.C1 / 4 + C.C3 == pytest.approx(4 * 3.0 + 8 * 2.0 * 0.5 / 1.0)  # = 20
    s1, s2, s3 = zt.laplace_kkt_solutions(**C._asdict(), gamma=4.0, N=4)
    assert s3.U > min(s1.U, s2.U)


def test_min_over_T_is_monotone_in_b():
    # Sec. V-B: the optimum is at b = 1 or b = N because min_T U(T, b) is monotone in b
    for consts in (dict(**LAP, **CURV), dict(MNIST, eps=5.0)):
        vals = []
        for b in np.linspace(1, consts["N"], 25):
            C = zt.laplace_C(**consts)
            Tb = zt.T_star(b=b, **consts)
            vals.append(zt.U_laplace(T=Tb, b=b, gamma=zt.gamma_of(mu=consts["mu"], lam=consts["lam"]),
                                     **C._asdict()))
        diffs = np.diff(vals)
        assert (diffs > 0).all() or (diffs < 0).all()


def test_eq6_is_solutions_1_and_2():
    # two code paths: T_star via A1, A2 (Theorem 3's omegas); KKT via C1, C2, C3
    C = zt.laplace_C(**MNIST, eps=5.0)
    s1, s2, _ = zt.laplace_kkt_solutions(**C._asdict(), gamma=3.0, N=10)
    assert zt.T_star(b=1, **MNIST, eps=5.0) == pytest.approx(s1.T, rel=1e-12)
    assert zt.T_star(b=10, **MNIST, eps=5.0) == pytest.approx(s2.T, rel=1e-12)


# ----------------------------------------------------------------- Gaussian problem
def test_gaussian_E_and_U_by_hand():
    # E1 = 8*4*4/3 = 128/3;  E3 = 4*1*10*4*8/10000 = 0.128;
    # E2 = 4*(-8/3 + 0.02 + 2) + 4*3 - 4*0.128 = -32/3 + 8.08 + 12 - 0.512 = 8.901333...
    E = zt.gaussian_E(**GAU, **CURV)
    assert E == pytest.approx((128 / 3, 19.568 - 32 / 3, 0.128), rel=1e-13)
    # U(5, 2) = (128/3)/(2*9) + 8.901333/9 + 0.128 = 30.234667/9 + 0.128 = 2354/675 (Theorem 4)
    assert zt.U_gaussian(T=5, b=2, gamma=4.0, **E._asdict()) == pytest.approx(2354 / 675, rel=1e-13)


def test_U_gaussian_equals_theorem4_at_t_equals_T():
    rng = np.random.default_rng(9)
    for _ in range(10):
        mu = rng.uniform(0.2, 2)
        kw = dict(N=5, p=int(rng.integers(1, 100)), d=100.0, d_i=[10, 15, 20, 25, 30],
                  eps=rng.uniform(0.1, 2, 5), delta=rng.uniform(1e-6, 1e-2, 5), xi2=rng.uniform(0.5, 10),
                  c2=rng.uniform(0.5, 3), q=rng.uniform(0.01, 1), Lambda=rng.uniform(0, 3, 5))
        curv = dict(G=rng.uniform(0, 10), lam=mu * rng.uniform(1, 4), mu=mu, Gamma=rng.uniform(0, 2),
                    Y0=rng.uniform(0, 10))
        E = zt.gaussian_E(**kw, **curv)
        g = zt.gamma_of(mu=curv["mu"], lam=curv["lam"])
        for T, b in [(1, 1), (4, 2), (25, 5), (100, 3)]:
            assert zt.U_gaussian(T=T, b=b, gamma=g, **E._asdict()) == pytest.approx(
                zt.gaussian_bound(t=T, T=T, b=b, **kw, **curv), rel=1e-12)


def test_gaussian_solutions():
    E = zt.gaussian_E(**GAU, **CURV)
    s1, s2 = zt.gaussian_solutions(**E._asdict(), gamma=4.0, N=4)
    assert (s1.T, s1.b, s1.U) == (math.inf, 4.0, pytest.approx(0.128))
    # U(0, 4) = (128/12 + 8.901333)/4 + 0.128 = 19.568/4 + 0.128 = 5.02
    assert (s2.T, s2.b, s2.U) == (0.0, 4.0, pytest.approx(5.02))
    assert zt.gaussian_optimum(**E._asdict(), gamma=4.0, N=4) == s1  # E1/N + E2 > 0
    # E1/N + E2 = 1 - 3 < 0: T* = 0 wins, U = -2/2 + 1 = 0
    best = zt.gaussian_optimum(E1=4, E2=-3, E3=1, gamma=2, N=4)
    assert (best.T, best.U) == (0.0, pytest.approx(0.0))
    # sign rule: U(T, N) decreasing in T iff E1/N + E2 > 0
    for E1, E2 in [(4, -0.5), (4, -1.5)]:
        u = zt.U_gaussian(T=np.array([0.0, 1.0, 10.0, 1e3]), b=4, E1=E1, E2=E2, E3=1, gamma=2)
        assert ((np.diff(u) < 0).all()) == (E1 / 4 + E2 > 0)


# ----------------------------------------------------------------- Alternate Convex Search
@pytest.mark.parametrize("case", ["synthetic_bN", "synthetic_b1", "hand_consts_bN", "mnist_b1"])
def test_acs_matches_best_kkt_solution(case):
    if case.startswith("synthetic"):
        C = zt.LaplaceC(8.0, 0.5, 1.0) if case.endswith("bN") else zt.LaplaceC(1.0, 0.5, 10.0)
        g, N = 2.0, 4
    elif case == "hand_consts_bN":  # C3 = 28/3 < 2*4*sqrt(128/3*0.288) = 28.04: b* = N
        C, g, N = zt.laplace_C(**LAP, **CURV), 4.0, 4
    else:  # C3 = 973.6 > 2*3*sqrt(2864*0.2509) = 160.8: b* = 1
        C, g, N = zt.laplace_C(**MNIST, eps=5.0), 3.0, 10
    best = zt.laplace_optimum(**C._asdict(), gamma=g, N=N)
    assert best.b == (float(N) if case.endswith("bN") else 1.0)
    for res in (zt.acs(U=_U(C, g), T0=1.0, b0=(1 + N) / 2, N=N), zt.acs_multistart(U=_U(C, g), N=N)):
        assert res.converged
        assert res.U == pytest.approx(best.U, rel=1e-4)
        assert res.T == pytest.approx(best.T, rel=1e-3)
        assert res.b == pytest.approx(best.b, abs=1e-6)


def test_acs_with_one_variable_fixed():
    g = 3.0
    C = zt.laplace_C(**MNIST, eps=5.0)
    res = zt.acs(U=_U(C, g), T0=1.0, b0=5.0, N=10, fixed="b")
    assert res.b == 5.0 and res.T == pytest.approx(zt.T_star(b=5, **MNIST, eps=5.0), rel=1e-6)
    for eps in (10.0, 1.0):  # interior b* = 4.27 and clamped b* = 1 (unclamped 0.43)
        C = zt.laplace_C(**MNIST, eps=eps)
        res = zt.acs(U=_U(C, g), T0=50.0, b0=5.0, N=10, fixed="T")
        assert res.T == 50.0
        assert res.b == pytest.approx(zt.b_star(T=50, eps=eps, **{k: MNIST[k] for k in ("N", "p", "d", "xi1", "G")}),
                                      rel=1e-6)


def test_acs_partial_optimum_and_multistart():
    # bilinear (hence biconvex) U = (T - 4)(b - 2.5) on [0, 10] x [1, 4]: two partial optima,
    # (0, 4) with U = -4*1.5 = -6 and (10, 1) with U = 6*(-1.5) = -9
    U = lambda T, b: (T - 4.0) * (b - 2.5)  # noqa: E731
    stuck = zt.acs(U=U, T0=0.0, b0=4.0, N=4, T_max=10.0)
    assert (stuck.T, stuck.b, stuck.U) == (0.0, 4.0, pytest.approx(-6.0))
    best = zt.acs_multistart(U=U, N=4, T_max=10.0)
    assert (best.T, best.b, best.U) == (10.0, 1.0, pytest.approx(-9.0))


def test_acs_on_gaussian_runs_to_T_max():
    E = zt.gaussian_E(**GAU, **CURV)  # E1/N + E2 > 0: Solution 1, T* = inf, b* = N
    U = functools.partial(zt.U_gaussian, gamma=4.0, **E._asdict())
    res = zt.acs(U=U, T0=1.0, b0=1.0, N=4, T_max=1e4)
    # U(1e4, 4) = E3 + (E1/4 + E2)/(1e4 + 4) = 0.128 + 19.568/10004: still above the limit E3
    assert res.T == 1e4 and res.b == 4.0 and res.U == pytest.approx(0.128 + 19.568 / 10004, rel=1e-12)


# ----------------------------------------------------------------- Table I
def test_table1_reproduces_the_paper_with_b_rounded_up():
    paper = {  # eps: (T*(b=5), T*(b=10), b*(T=50), T*(b*=1))
        "MNIST": (MNIST, {1: (5, 2, 1, 22), 5: (32, 20, 3, 121), 10: (67, 42, 5, 244)}),
        "FEMNIST": (FEMNIST, {1: (2, 1, 1, 11), 5: (22, 14, 2, 70), 10: (48, 31, 3, 145)}),
    }
    for consts, table in paper.values():
        rows = zt.table1(**consts, eps_values=[1, 5, 10], b_rounding="up")
        assert {r.eps: (r.T_b5, r.T_b10, r.b_T50, r.T_b1) for r in rows} == table
    # round-to-nearest b* gives (1, 2, 4): b* = G eps / 42 exactly = 0.43, 2.14, 4.27 for MNIST
    rows = zt.table1(**MNIST, eps_values=[1, 5, 10])
    assert [r.b_T50 for r in rows] == [1, 2, 4]
    assert [r.b_T50_exact for r in rows] == pytest.approx([17.95 / 42 * e for e in (1, 5, 10)], rel=1e-12)
    # unrounded values are the closed forms
    r = rows[1]
    assert r.T_b5_exact == zt.T_star(b=5, **MNIST, eps=5.0)
    assert r.T_b1_exact == zt.T_star(b=1, **MNIST, eps=5.0)


# ----------------------------------------------------------------- argument checks
SIGS = {
    "prop1": lambda **o: zt.aggregated_laplace_variance(**{**dict(eta=0.1, b=2, T=5, **LAP), **o}),
    "prop2": lambda **o: zt.aggregated_gaussian_variance(**{**dict(eta=0.1, p=10, T=5, N=4, d=100, eps=1.0,
                                                                   delta=0.1, xi2=2.0, c2=1.0), **o}),
    "lemma2": lambda **o: zt.client_sampling_variance(**{**dict(N=4, b=2, G=2.0), **o}),
    "lemma4": lambda **o: zt.sampled_gradient_variance(**{**dict(N=4, b=2, G=2.0, d=100, q=0.5, Lambda=1.0), **o}),
    "bound3": lambda **o: zt.laplace_bound(**{**dict(t=5, T=5, b=2, **LAP, **CURV), **o}),
    "bound4": lambda **o: zt.gaussian_bound(**{**dict(t=5, T=5, b=2, **GAU, **CURV), **o}),
    "T_star": lambda **o: zt.T_star(**{**dict(b=2.0, **LAP, **CURV), **o}),
    "laplace_C": lambda **o: zt.laplace_C(**{**LAP, **CURV, **o}),
    "gaussian_E": lambda **o: zt.gaussian_E(**{**GAU, **CURV, **o}),
}


@pytest.mark.parametrize("fn, override, pattern", [
    ("prop1", dict(b=5), r"^b=5 .*\[1, 4\]"),
    ("prop1", dict(b=0), r"^b=0 "),
    ("prop1", dict(T=0), r"^T=0 .*\[1, inf\]"),
    ("prop1", dict(eps=0.0), r"^eps=0.0 .*\(0, inf\)"),
    ("prop1", dict(eps=[1.0, 0.0, 1.0, 1.0]), r"^eps\[1\]=0.0 "),
    ("prop1", dict(eps=[1.0, 1.0]), r"^eps has 2 entries"),
    ("prop2", dict(delta=1.0), r"^delta=1.0 .*\(0, 1\)"),
    ("prop2", dict(T=0), r"^T=0 "),
    ("lemma2", dict(N=1, b=1), r"^N=1 .*\[2, inf\]"),
    ("lemma2", dict(b=5), r"^b=5 "),
    ("lemma4", dict(q=0.0), r"^q=0.0 .*\(0, 1\]"),
    ("lemma4", dict(q=1.5), r"^q=1.5 .*\(0, 1\]"),
    ("bound3", dict(T=0, t=0), r"^T=0 "),
    ("bound3", dict(t=6), r"^t=6 .*\[0, 5\]"),
    ("bound3", dict(mu=3.0), r"^mu=3.0 "),
    ("bound4", dict(q=1.5), r"^q=1.5 "),
    ("bound4", dict(delta=1.0), r"^delta=1.0 "),
    ("T_star", dict(b=4.5), r"^b=4.5 "),
    ("T_star", dict(N=1), r"^N=1 "),
    ("laplace_C", dict(N=1), r"^N=1 "),
    ("laplace_C", dict(eps=0.0), r"^eps=0.0 "),
    ("gaussian_E", dict(q=0.0), r"^q=0.0 "),
    ("gaussian_E", dict(N=1), r"^N=1 "),
])
def test_bad_parameters(fn, override, pattern):
    with pytest.raises(ValueError, match=pattern):
        SIGS[fn](**override)


def test_T_zero_allowed_in_the_optimisation_only():
    C = zt.laplace_C(**LAP, **CURV)
    assert zt.U_laplace(T=0.0, b=4.0, gamma=4.0, **C._asdict()) == pytest.approx((128 / 12 + 28 / 3) / 4)
    assert zt.laplace_B(T=0.0, **LAP, **CURV).B2 == 0.0
    with pytest.raises(ValueError, match=r"^T=0 .*\(0, inf\)"):
        zt.b_star(T=0, **LAP, G=2.0)  # b* = sqrt(B1/B2) needs B2 > 0
    with pytest.raises(ValueError, match=r"^b=0.5 "):
        zt.U_laplace(T=1.0, b=0.5, gamma=4.0, **C._asdict())
    with pytest.raises(ValueError, match=r"^fixed="):
        zt.acs(U=_U(C, 4.0), T0=1.0, b0=1.0, N=4, fixed="x")
    with pytest.raises(ValueError, match=r"^b0=5.0 "):
        zt.acs(U=_U(C, 4.0), T0=1.0, b0=5.0, N=4)
    with pytest.raises(ValueError, match=r"^b_rounding="):
        zt.table1(**MNIST, eps_values=[1.0], b_rounding="down")


def test_new_functions_keyword_only():
    with pytest.raises(TypeError, match="positional"):
        zt.aggregated_laplace_variance(0.1, 10, 2, 5, 4, 100, 1.0, 3.0)
    with pytest.raises(TypeError, match="positional"):
        zt.U_laplace(1.0, 1.0, 1.0, 1.0, 1.0, 2.0)


def test_implied_gamma_by_hand_and_round_trip():
    # Table I, MNIST, T*(b=5): 5 at eps 1, 67 at eps 10:
    # gamma = (67^2 * 1 - 5^2 * 100) / (2 (5 * 100 - 67 * 1)) = (4489 - 2500) / 866 = 2.29677...
    assert zt.implied_gamma(T_a=5, eps_a=1, T_b=67, eps_b=10) == pytest.approx(1989 / 866)
    # round trip through eq. (6)
    const = dict(N=10, p=7840, d=60000.0, xi1=300.0, G=18.0, lam=1.5, mu=1.0, Gamma=80.0, Y0=100.0)
    Ta, Tb = (zt.T_star(b=5, eps=e, **const) for e in (1.0, 10.0))
    assert zt.implied_gamma(T_a=Ta, eps_a=1.0, T_b=Tb, eps_b=10.0) == pytest.approx(3.0, rel=1e-9)
    with pytest.raises(ValueError, match="T_a"):
        zt.implied_gamma(T_a=1, eps_a=1, T_b=4, eps_b=2)


def test_first_step_reading():
    # mu: the first step's smallest client secant; lam: the largest eigenvalue at the first point
    mu, lam = zt.first_step_reading(hessian_top=[[4.0, 6.0, 5.0], [8.0, 9.0, 7.0]], secant_min_per_step=[0.5, 0.3, 0.2])
    assert (mu, lam) == (0.5, 6.0)
    assert zt.gamma_of(mu=mu, lam=lam) == pytest.approx(24.0)  # 2 * 6 / 0.5
    with pytest.raises(ValueError):
        zt.first_step_reading(hessian_top=[4.0, 6.0], secant_min_per_step=[0.5])
    with pytest.raises(ValueError):
        zt.first_step_reading(hessian_top=[[4.0]], secant_min_per_step=[0.0])


def test_appendix_e_coverage_hand_values():
    """Appendix E: eta_t = alpha/(t + gamma') with alpha > 1/mu and eta_0 <= 1/lambda.  The
    experiments' 0.05/(1 + 0.01 t) is alpha = 5, gamma' = 100."""
    c = zt.appendix_e_coverage(lr=0.05, decay=0.01, mu=0.192, lam=9.36)
    assert c.alpha == pytest.approx(5.0) and c.gamma_prime == pytest.approx(100.0)
    assert c.eta0_lam == pytest.approx(0.468) and c.alpha_mu == pytest.approx(0.96) and not c.covered
    assert zt.appendix_e_coverage(lr=0.05, decay=0.01, mu=0.325, lam=6.23).covered        # alpha mu = 1.625
    assert not zt.appendix_e_coverage(lr=0.05, decay=0.01, mu=0.0, lam=9.36).covered      # mu = 0: no schedule
    assert not zt.appendix_e_coverage(lr=0.2, decay=0.01, mu=0.5, lam=9.36).covered       # eta_0 lambda = 1.87
    with pytest.raises(ValueError, match="mu=2.0 is out of range"):
        zt.appendix_e_coverage(lr=0.05, decay=0.01, mu=2.0, lam=1.0)


def test_theorem2_c1_needed_uses_the_replies_of_one_client():
    # T = 100, q = 0.01, N = 10: a client at b = 1 is queried 10 times -> c_1 >= 0.1 / (1e-4 * 10) = 100
    assert zt.theorem2_c1_needed(eps=0.1, q=0.01, b=1, T=100, N=10) == pytest.approx(100.0)
    assert zt.theorem2_c1_needed(eps=1.0, q=0.01, b=5, T=100, N=10) == pytest.approx(200.0)
    assert zt.theorem2_c1_needed(eps=0.1, q=0.01, b=1, T=100, N=10, printed=True) == pytest.approx(10.0)
    assert zt.theorem2_c1_needed(eps=0.5, q=0.01, b=10, T=100, N=10) == \
        pytest.approx(zt.theorem2_c1_needed(eps=0.5, q=0.01, b=10, T=100, N=10, printed=True))   # b = N: equal
    with pytest.raises(ValueError, match="b=11 is out of range"):
        zt.theorem2_c1_needed(eps=0.1, q=0.01, b=11, T=100, N=10)
