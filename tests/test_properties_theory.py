"""Properties of the papers' formulas under Hypothesis : what each theory
module's docstrings state must hold everywhere in its domain, not only at the hand-computed
points of tests/test_*_theory.py.

* Wei et al. 2020: noise falls as eps grows and grows with T, L (Sec. III, Theorem 1);
  sigma_A = sqrt(sigma_D^2 + sigma_U^2 / N) (eq. (16)); K = N reduces Lemma 4 to Theorem 1;
  eq. (69) holds exactly above krandom_T_min; eq. (20) is the second derivative of (17); the
  bound (17) falls as eps grows; no mu beats theorem2_best_contraction; alpha2 < 0 exactly above
  theorem3_mu_min.
* Zhou et al.: noise scales (Theorems 1-2) fall as eps grows and grow with T; the bounds of
  Theorems 3-4 at t = T equal U(T, b) of Secs. V-B / VI-B and fall as eps grows; the K.K.T. optima are never beaten on
  the feasible set; T* (eq. (6)) and b* minimise U; Lemma 2's term falls with b.
* Li, Chang & Chi 2020: amplification never increases eps and grows with eps, Q and b;
  1 - (1 - b/n)^Q <= q = Q b / n (eq. (7)); eq. (8)'s 2 q eps bounds the amplified eps where
  eq8_valid; eq. (9)'s sigma falls as eps grows; Theorem 1's bound falls with T; the rounds
  of eq. (13) and of Theorem 1 fall as eps grows.
* Adaptive noise: the threshold, the acceptance probability and 1/tries grow with p; the angle's
  CDF is a CDF; Theorem 1's c bound never exceeds the paper's rule.
"""
from __future__ import annotations

import functools
import math

import pytest
from hypothesis import assume, given, strategies as st

from fldp.papers.adaptive_noise import theory as an
from fldp.papers.li2021 import theory as li
from fldp.papers.wei2020 import theory as wei
from fldp.papers.zhou import theory as zt

EPS = st.floats(0.1, 200.0)
POS = st.floats(0.01, 100.0)


def ordered(strategy):
    return st.tuples(strategy, strategy).map(sorted)


def close(a, b, rel=1e-9, abs_=1e-12):
    return a == pytest.approx(b, rel=rel, abs=abs_)


# ----------------------------------------------------------------- Wei et al. 2020
@given(eps=ordered(EPS), C=POS, m=st.integers(1, 10**4), L=st.integers(1, 20), delta=st.floats(1e-10, 0.5))
def test_wei_uplink_noise_falls_with_eps_grows_with_L(eps, C, m, L, delta):
    s = lambda e, l: wei.sigma_uplink(C=C, m=m, eps=e, L=l, delta=delta)  # noqa: E731
    assert s(eps[1], L) <= s(eps[0], L)
    assert s(eps[0], L) <= s(eps[0], L + 1)


@given(eps=ordered(EPS), T=ordered(st.integers(1, 500)), N=st.integers(1, 100), L=st.integers(1, 5), c=POS)
def test_wei_downlink_noise_falls_with_eps_grows_with_T_and_sigma_A_adds_up(eps, T, N, L, c):
    kw = dict(C=20.0, m=100, N=N, L=L, c=c)
    sD = lambda e, t: wei.sigma_downlink(T=t, eps=e, **kw)  # noqa: E731
    assert sD(eps[1], T[1]) <= sD(eps[0], T[1])
    assert sD(eps[0], T[0]) <= sD(eps[0], T[1])
    if T[0] <= L * math.sqrt(N):
        assert sD(eps[0], T[0]) == 0.0
    # eq. (16): sigma_A = sqrt(sigma_D^2 + sigma_U^2 / N), continuous at T = L sqrt(N)
    sU = wei.sigma_uplink(C=20.0, m=100, eps=eps[0], L=L, c=c)
    sA = wei.sigma_aggregate(T=T[1], eps=eps[0], **kw)
    assert close(sA, math.sqrt(sD(eps[0], T[1]) ** 2 + sU**2 / N))


@given(eps=EPS, T=st.integers(1, 500), N=st.integers(1, 100), L=st.integers(1, 5))
def test_wei_lemma4_with_K_equal_N_is_theorem1(eps, T, N, L):
    kw = dict(C=20.0, m=100, N=N, T=T, L=L, eps=eps, c=3.0)
    assert close(wei.sigma_downlink_krandom(K=N, **kw), wei.sigma_downlink(**kw))
    assert close(wei.krandom_gamma(eps=eps, L=L, N=N, K=N), eps / (L * math.sqrt(N)))
    assert close(wei.krandom_b(eps=eps, T=T, N=N, K=N), 1.0)


@given(eps=EPS, N=st.integers(2, 100), data=st.data())
def test_wei_eq69_holds_exactly_above_T_min(eps, N, data):
    K = data.draw(st.integers(1, N - 1))
    t_min = wei.krandom_T_min(eps=eps, N=N, K=K, condition="eq69")
    above = wei.krandom_conditions(eps=eps, T=t_min * 1.001, N=N, K=K, L=1)
    below = wei.krandom_conditions(eps=eps, T=t_min * 0.999, N=N, K=K, L=1)
    assert above["eq69"] and not below["eq69"]
    assert above["eq75_switch"] == above["eq21_switch"]  # the two switches agree where b exists
    b = wei.krandom_b(eps=eps, T=t_min * 1.001, N=N, K=K)
    assert b > 0 and math.isfinite(b)


@given(T=st.floats(2.0, 200.0), eps=st.floats(1.0, 100.0), Theta=POS, P=st.floats(0.5, 0.99),
       k0=st.floats(0.0, 1.0), k1=st.floats(0.0, 1.0))
def test_wei_eq20_is_the_second_derivative_of_eq17(T, eps, Theta, P, k0, k1):
    kw = dict(T=T, eps=eps, Theta=Theta, P=P, kappa0=k0, kappa1=k1)
    exact, fd = wei.theorem2_second_derivative(**kw), wei.theorem2_second_derivative_fd(**kw, h=1e-3)
    scale = Theta + k1 * T / eps + k0 * (T / eps) ** 2 + 1.0
    assert abs(exact - fd) <= 1e-4 * scale


@given(T=st.integers(1, 500), eps=ordered(EPS), Theta=POS, P=st.floats(0.01, 0.99),
       k0=st.floats(0.0, 10.0), k1=st.floats(0.0, 10.0))
def test_wei_theorem2_bound_falls_as_eps_grows(T, eps, Theta, P, k0, k1):
    b = lambda e: wei.theorem2_bound(T=T, eps=e, Theta=Theta, P=P, kappa0=k0, kappa1=k1)  # noqa: E731
    assert b(eps[1]) <= b(eps[0]) * (1 + 1e-12)


@given(rho=POS, B=POS, l=POS, mu=st.floats(1e-3, 1e4))
def test_wei_no_mu_beats_the_best_contraction(rho, B, l, mu):
    mu_star, p_star = wei.theorem2_best_contraction(rho=rho, B=B, l=l)
    assert wei.theorem2_P(rho=rho, B=B, mu=mu, l=l) >= p_star - 1e-9 * (1 + abs(p_star))
    assert close(wei.theorem2_P(rho=rho, B=B, mu=mu_star, l=l), p_star)


@given(rho=POS, B=st.floats(0.01, 5.0), K=st.integers(1, 1000), x=st.floats(1.001, 100.0))
def test_wei_alpha2_is_negative_exactly_above_mu_min(rho, B, K, x):
    assume(B / math.sqrt(K) < 0.999)
    mu_min = wei.theorem3_mu_min(rho=rho, B=B, K=K)
    assert wei.theorem3_alpha2(rho=rho, B=B, mu=mu_min * x, K=K) < 0
    assert wei.theorem3_alpha2(rho=rho, B=B, mu=mu_min / x, K=K) > 0


@given(eps=ordered(st.floats(1.0, 200.0)), T=st.integers(100, 2000), N=st.integers(2, 100), data=st.data())
def test_wei_theorem3_bound_falls_as_eps_grows(eps, T, N, data):
    K = data.draw(st.integers(1, N))
    kw = dict(T=T, K=K, N=N, m=1200, Theta=1.0, rho=1.0, beta=1.0, B=1.0, mu=10.0, l=1.0, c=3.1)
    try:
        lo = wei.theorem3_bound(eps=eps[0], **kw)
    except wei.BoundOutsideAssumptions:  # eq. (69) fails at the smaller eps
        assume(False)
    try:
        hi = wei.theorem3_bound(eps=eps[1], **kw)
    except wei.BoundOutsideAssumptions:
        assume(False)  # ... or at the larger one (eq. (69) needs eps < -T ln(1 - K/N))
    assert hi <= lo * (1 + 1e-12)


# ----------------------------------------------------------------- Zhou et al.
@given(eps=ordered(st.floats(0.01, 100.0)), T=ordered(st.integers(1, 1000)), N=st.integers(1, 100),
       d_i=st.integers(1, 10**5), delta=st.floats(1e-10, 0.5), data=st.data())
def test_zhou_noise_falls_as_eps_grows_and_grows_with_T(eps, T, N, d_i, delta, data):
    b = data.draw(st.integers(1, N))
    lap = lambda e, t: zt.laplace_scale(eps=e, b=b, T=t, N=N, d_i=d_i, xi1=300.0)  # noqa: E731
    gau = lambda e, t: zt.gaussian_sigma(eps=e, delta=delta, b=b, T=t, N=N, d_i=d_i, xi2=10.0, c2=1.0)  # noqa: E731
    for f in (lap, gau):
        assert f(eps[1], T[0]) <= f(eps[0], T[0])
        assert f(eps[0], T[0]) <= f(eps[0], T[1])


@given(N=st.integers(2, 50), G=POS, data=st.data())
def test_zhou_client_sampling_term_falls_with_b(N, G, data):
    b0, b1 = data.draw(ordered(st.integers(1, N)))
    v = lambda b: zt.client_sampling_variance(N=N, b=b, G=G)  # noqa: E731
    assert v(b1) <= v(b0) and v(N) == 0.0


CURV = st.fixed_dictionaries(dict(G=st.floats(0.1, 20.0), Gamma=st.floats(0.0, 10.0), Y0=st.floats(0.0, 100.0)))


@st.composite
def curvature(draw):
    lam = draw(st.floats(0.1, 10.0))
    mu = draw(st.floats(0.05, 1.0)) * lam
    return dict(lam=lam, mu=mu, **draw(CURV))


@given(c=curvature(), T=st.integers(1, 200), eps=st.floats(0.1, 50.0), N=st.integers(2, 20), data=st.data())
def test_zhou_theorem3_bound_at_T_is_U_laplace_and_falls_as_eps_grows(c, T, eps, N, data):
    b = data.draw(st.integers(1, N))
    prob = dict(N=N, p=100, d=1000.0, xi1=3.0)
    bound = zt.laplace_bound(t=T, T=T, b=b, eps=eps, **prob, **c)
    C = zt.laplace_C(eps=eps, **prob, **c)
    U = zt.U_laplace(T=T, b=b, gamma=zt.gamma_of(mu=c["mu"], lam=c["lam"]), **C._asdict())
    assert close(bound, U)
    assert zt.laplace_bound(t=T, T=T, b=b, eps=2 * eps, **prob, **c) <= bound


@given(c=curvature(), T=st.integers(1, 200), eps=st.floats(0.1, 50.0), N=st.integers(2, 20),
       q=st.floats(0.01, 1.0), data=st.data())
def test_zhou_theorem4_bound_at_T_is_U_gaussian(c, T, eps, N, q, data):
    b = data.draw(st.integers(1, N))
    prob = dict(N=N, p=100, d=1000.0, q=q, Lambda=1.0, eps=eps, delta=1e-5, xi2=2.0, c2=1.0)
    bound = zt.gaussian_bound(t=T, T=T, b=b, **prob, **c)
    E = zt.gaussian_E(**prob, **c)
    U = zt.U_gaussian(T=T, b=b, gamma=zt.gamma_of(mu=c["mu"], lam=c["lam"]), **E._asdict())
    assert close(bound, U)


@given(C1=st.floats(0.0, 1e3), C2=st.floats(1e-4, 10.0), C3=st.floats(-1e3, 1e3), gamma=st.floats(0.1, 100.0),
       N=st.integers(1, 50), T=st.floats(0.0, 1e4), u=st.floats(0.0, 1.0))
def test_zhou_laplace_kkt_optimum_is_never_beaten(C1, C2, C3, gamma, N, T, u):
    best = zt.laplace_optimum(C1=C1, C2=C2, C3=C3, gamma=gamma, N=N)
    b = 1.0 + u * (N - 1)
    U = zt.U_laplace(T=T, b=b, C1=C1, C2=C2, C3=C3, gamma=gamma)
    assert best.U <= U + 1e-9 * (1 + abs(U))


@given(E1=st.floats(0.0, 1e3), E2=st.floats(-1e3, 1e3), E3=st.floats(0.0, 1e3), gamma=st.floats(0.1, 100.0),
       N=st.integers(1, 50), T=st.floats(0.0, 1e6), u=st.floats(0.0, 1.0))
def test_zhou_gaussian_optimum_is_never_beaten(E1, E2, E3, gamma, N, T, u):
    best = zt.gaussian_optimum(E1=E1, E2=E2, E3=E3, gamma=gamma, N=N)
    U = zt.U_gaussian(T=T, b=1.0 + u * (N - 1), E1=E1, E2=E2, E3=E3, gamma=gamma)
    assert best.U <= U + 1e-9 * (1 + abs(U))


@given(c=curvature(), eps=st.floats(0.1, 50.0), N=st.integers(2, 20), u=st.floats(0.0, 1.0), dT=st.floats(0.01, 5.0))
def test_zhou_T_star_and_b_star_minimise_U(c, eps, N, u, dT):
    prob = dict(N=N, p=100, d=1000.0, xi1=3.0, eps=eps)
    b = 1.0 + u * (N - 1)
    Ts = zt.T_star(b=b, **prob, **c)
    C = zt.laplace_C(**prob, **c)
    U = functools.partial(zt.U_laplace, gamma=zt.gamma_of(mu=c["mu"], lam=c["lam"]), **C._asdict())
    assert U(T=Ts, b=b) <= U(T=Ts + dT, b=b) * (1 + 1e-12)
    assert U(T=Ts, b=b) <= U(T=max(Ts - dT, 0.0), b=b) * (1 + 1e-12)
    T = Ts + dT
    bs = zt.b_star(T=T, G=c["G"], **prob)
    assert U(T=T, b=bs) <= U(T=T, b=b) * (1 + 1e-12)


@given(t=ordered(st.integers(0, 10**6)), lam=st.floats(0.1, 10.0), x=st.floats(0.05, 1.0))
def test_zhou_learning_rate_falls_and_starts_at_one_over_lambda(t, lam, x):
    mu = x * lam
    lr = lambda k: zt.learning_rate(t=k, mu=mu, lam=lam)  # noqa: E731
    assert lr(t[1]) <= lr(t[0]) and close(lr(0), 1 / lam)


@given(c=curvature(), T=st.integers(1, 200), eps=ordered(st.floats(0.1, 50.0)), N=st.integers(2, 20),
       q=st.floats(0.01, 1.0), data=st.data())
def test_zhou_theorem4_bound_falls_as_eps_grows(c, T, eps, N, q, data):
    b = data.draw(st.integers(1, N))
    prob = dict(N=N, p=100, d=1000.0, q=q, Lambda=1.0, delta=1e-5, xi2=2.0, c2=1.0)
    bound = lambda e: zt.gaussian_bound(t=T, T=T, b=b, eps=e, **prob, **c)  # noqa: E731
    assert bound(eps[1]) <= bound(eps[0])


# ----------------------------------------------------------------- Li, Chang & Chi 2020
@given(eps=ordered(st.floats(1e-3, 1000.0)), n_k=st.integers(1, 10**4), data=st.data())
def test_li_amplification_never_increases_eps_and_grows_with_eps_Q_b(eps, n_k, data):
    b = data.draw(st.integers(1, n_k))
    Q = data.draw(st.integers(1, max(1, n_k // b)))
    a = lambda e, bb=b, qq=Q: li.amplified_eps(eps=e, b=bb, n_k=n_k, Q=qq)  # noqa: E731
    assert 0 < a(eps[0]) <= eps[0] * (1 + 1e-12)
    assert a(eps[0]) <= a(eps[1])
    assert a(eps[0]) <= a(eps[0], qq=Q + 1) * (1 + 1e-12)
    if b < n_k:
        assert a(eps[0]) <= a(eps[0], bb=b + 1) * (1 + 1e-12)
    p, q = li.inclusion_prob(b=b, n_k=n_k, Q=Q), li.sampling_ratio(b=b, n_k=n_k, Q=Q)
    assert p <= q * (1 + 1e-12)  # eq. (7)
    if li.eq8_valid(eps=eps[0]):  # eq. (8): log(1 + q(e^eps - 1)) <= 2 q eps
        assert a(eps[0]) <= li.eq8_bound(eps=eps[0], q=q) * (1 + 1e-12)


@given(eps=ordered(st.floats(1e-3, 100.0)), q=st.floats(1e-3, 1.0), df=POS, x=st.floats(1e-6, 0.999))
def test_li_eq9_noise_falls_as_eps_grows(eps, q, df, x):
    delta = x * min(1.25 * q, 1.0) * 0.999
    assume(delta > 0)
    s = lambda e: li.sigma_eq9(eps=e, delta=delta, q=q, sensitivity_df=df)  # noqa: E731
    assert s(eps[1]) <= s(eps[0])


@given(T=ordered(st.floats(0.0, 1e6)), kappa=st.floats(1.01, 100.0), mu=POS, A=POS, B=ordered(POS), C=POS, w=POS)
def test_li_theorem1_bound_falls_with_T_and_grows_with_the_noise_term(T, kappa, mu, A, B, C, w):
    f = lambda t, bb: li.theorem1_bound(T=t, L=kappa * mu, mu=mu, A=A, B=bb, C=C, w0_dist_sq=w)  # noqa: E731
    assert f(T[1], B[0]) <= f(T[0], B[0])
    assert f(T[0], B[0]) <= f(T[0], B[1])


@given(eps=ordered(st.floats(0.01, 100.0)), Q=st.integers(1, 100), K=st.integers(1, 100))
def test_li_rounds_fall_as_eps_grows(eps, Q, K):
    kw = dict(Q=Q, M=7850, b=1, G=2.0, n=6000, L=1.0, delta=1e-4, sum_p2_gamma2=1.0, Gamma=0.1)
    assert li.rounds_eq13(eps=eps[1], K=K, **kw) <= li.rounds_eq13(eps=eps[0], K=K, **kw)
    assert li.rounds_theorem1(eps=eps[1], N=100, K=K, **kw) <= li.rounds_theorem1(eps=eps[0], N=100, K=K, **kw)


# ----------------------------------------------------------------- adaptive noise
@given(dim=st.integers(1, 10**5), p=ordered(st.floats(-6.0, 6.0)))
def test_adaptive_filter_accepts_more_as_p_grows(dim, p):
    assert an.threshold(dim=dim, p=p[0]) <= an.threshold(dim=dim, p=p[1])
    a0, a1 = (an.acceptance_probability(dim=dim, p=x) for x in p)
    assert 0 <= a0 <= a1 + 1e-12 <= 1 + 1e-12
    assert an.expected_tries(dim=dim, p=p[1]) <= an.expected_tries(dim=dim, p=p[0]) * (1 + 1e-9)
    assert an.expected_tries_normal(p=p[1]) <= an.expected_tries_normal(p=p[0])


@given(dim=st.integers(2, 10**4), theta=ordered(st.floats(-10.0, 190.0)))
def test_adaptive_angle_cdf_is_a_cdf(dim, theta):
    F = lambda t: an.angle_cdf(theta=t, dim=dim)  # noqa: E731
    assert 0 <= F(theta[0]) <= F(theta[1]) <= 1
    assert F(180.0) == pytest.approx(1.0) and F(0.0) == pytest.approx(0.0, abs=1e-12)


@given(K=st.integers(1, 1000), rho=st.floats(0.0, 1.0), data=st.data())
def test_adaptive_theorem1_c_bound_never_exceeds_the_papers_rule(K, rho, data):
    d = data.draw(st.integers(0, K - 1))
    c = an.max_noise_scale(K=K, rho=rho, dropouts=d)
    assert 1.0 - 1e-12 <= c <= an.paper_max_noise_scale(K=K, dropouts=d) + 1e-12
    assert c <= an.max_noise_scale(K=K, rho=min(1.0, rho + 0.1), dropouts=d) + 1e-12
