"""Privacy properties under Hypothesis: calibrations round-trip against their
accountants and never overshoot the target (the opacus habit), and the accounting, the audit and
the calibrations are monotone where the mathematics says so.

* **round trips**: noise calibrated for a target (eps, delta), then accounted, gives at most the
  target (never above) and within a stated tolerance of it: fldp.mechanisms' analytic Gaussian
  sigma against its exact delta and eps, dp_accounting's noise multiplier against its epsilon,
  fldp.accounting's calibrate_gaussian_run against planned_epsilon (PLD and RDP), and the papers'
  calibrations with ``rule="accountant"`` (NbAFL's calibrate_accountant, FedSGD-DPC's calibrate,
  secure FedAvg's calibrate) against the accountant;
* **monotonicity**: noise falls as eps grows, the classic constant c grows as delta falls, spend
  grows with the number of releases and with the sampling rate, PLD is never looser than RDP,
  removing sampling never lowers eps, the profile falls in eps and sigma;
* **the audit never certifies more than the accountant**: for a mechanism calibrated by the
  accountant, the audit's certified lower bound (both readings) stays at or below the target.

Accounting is slow for many releases: release counts stay small and the expensive properties
ask for few examples (property_examples.budget; HYPOTHESIS_PROFILE=thorough runs 30x as many).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from fldp import accounting as A, audit, mechanisms as M, verdicts as V
from fldp.papers.li2021 import algorithm as li_alg
from fldp.papers.wei2020 import algorithm as wei_alg, theory as wei_th
from fldp.papers.zhou import algorithm as zhou_alg
from property_examples import budget

EPS = st.floats(0.05, 50.0)
SMALL_EPS = st.floats(0.2, 8.0)
DELTA = st.floats(1e-10, 0.1)
SENS = st.floats(0.01, 100.0)
Q = st.floats(0.01, 1.0)
ROUNDS = st.integers(1, 20)


def ordered(strategy):
    """Two values of ``strategy``, the first not larger."""
    return st.tuples(strategy, strategy).map(sorted)


# ----------------------------------------------------------------- fldp.mechanisms
@given(eps=EPS, delta=DELTA, sens=SENS)
def test_analytic_sigma_meets_its_target_exactly_and_never_overshoots(eps, delta, sens):
    sigma = M.analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=sens)
    d = M.gaussian_delta(eps=eps, sigma=sigma, sensitivity=sens)
    assert d <= delta and d >= delta * (1 - 1e-6)  # the guarantee: never above, and tight
    # gaussian_eps reads eps back to within its own resolution (tol = 1e-12, steps of at most
    # max(tol, 4 ulp eps)): it may read up to that much above eps although sigma meets eps exactly.
    e = M.gaussian_eps(sigma=sigma, delta=delta, sensitivity=sens)
    assert e <= eps + 2 * max(1e-12, 4 * np.finfo(float).eps * eps) and e >= eps * (1 - 1e-6)
    assert M.gaussian_delta(eps=e, sigma=sigma, sensitivity=sens) <= delta


@given(sigma=st.floats(0.05, 100.0), delta=DELTA, sens=SENS)
def test_gaussian_eps_inverts_the_profile_from_the_other_side(sigma, delta, sens):
    e = M.gaussian_eps(sigma=sigma, delta=delta, sensitivity=sens)
    assert M.gaussian_delta(eps=e, sigma=sigma, sensitivity=sens) <= delta  # the eps returned is a guarantee
    if e > 1e-6:  # and the smallest one: a little less eps is not (eps, delta)-DP
        assert M.gaussian_delta(eps=e * (1 - 1e-6), sigma=sigma, sensitivity=sens) > delta
        s2 = M.analytic_gaussian_sigma(eps=e, delta=delta, sensitivity=sens)
        assert s2 <= sigma * (1 + 1e-6)


@given(eps=st.floats(0.01, 0.999), delta=DELTA, sens=SENS)
def test_classic_sigma_is_a_guarantee_below_eps_1_and_never_below_the_exact_one(eps, delta, sens):
    classic = M.classic_gaussian_sigma(eps=eps, delta=delta, sensitivity=sens)
    assert M.classic_gaussian_valid(eps=eps)
    assert M.gaussian_delta(eps=eps, sigma=classic, sensitivity=sens) <= delta  # Dwork & Roth Thm A.1
    assert classic >= M.analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=sens)


@given(eps=ordered(EPS), delta=DELTA, sens=SENS)
def test_noise_falls_as_eps_grows(eps, delta, sens):
    lo, hi = eps
    assert M.classic_gaussian_sigma(eps=hi, delta=delta, sensitivity=sens) <= M.classic_gaussian_sigma(eps=lo, delta=delta, sensitivity=sens)
    assert M.analytic_gaussian_sigma(eps=hi, delta=delta, sensitivity=sens) <= M.analytic_gaussian_sigma(eps=lo, delta=delta, sensitivity=sens) * (1 + 1e-9)
    assert M.laplace_scale(eps=hi, sensitivity=sens) <= M.laplace_scale(eps=lo, sensitivity=sens)
    assert M.laplace_scale(eps=lo, sensitivity=sens) * lo == pytest.approx(sens, rel=1e-12)  # (eps, 0)-DP exactly


@given(delta=ordered(st.floats(1e-12, 0.99)), eps=EPS, sens=SENS)
def test_classic_c_and_noise_grow_as_delta_falls(delta, eps, sens):
    lo, hi = delta
    assert M.classic_gaussian_c(delta=lo) >= M.classic_gaussian_c(delta=hi)
    assert M.analytic_gaussian_sigma(eps=eps, delta=lo, sensitivity=sens) >= M.analytic_gaussian_sigma(eps=eps, delta=hi, sensitivity=sens) * (1 - 1e-9)


@given(eps=ordered(st.floats(0.0, 50.0)), sigma=ordered(st.floats(0.05, 100.0)), sens=SENS)
def test_the_privacy_profile_falls_in_eps_and_in_sigma(eps, sigma, sens):
    (e0, e1), (s0, s1) = eps, sigma
    d = M.gaussian_delta(eps=np.array([e0, e1]), sigma=np.array([s0, s0]), sensitivity=sens)
    assert 0 <= d[1] <= d[0] <= 1
    assert M.gaussian_delta(eps=e0, sigma=s1, sensitivity=sens) <= M.gaussian_delta(eps=e0, sigma=s0, sensitivity=sens)


def _rdp_eps(z, rounds, delta, q):
    return A.planned_epsilon(event=A.gaussian(noise_multiplier=z), rounds=rounds,
                             client_sampling_prob=q, delta=delta, accountant="rdp")


@pytest.mark.slow
@settings(max_examples=budget(4))
@given(eps=SMALL_EPS, delta=st.floats(1e-8, 1e-3), steps=st.integers(1, 10), q=st.floats(0.05, 1.0))
def test_rdp_calibration_round_trips_below_target(eps, delta, steps, q):
    z = A.calibrate_gaussian_run(target_eps=eps, target_delta=delta, rounds=steps, sampling_prob=q,
                                 accountant="rdp", tol=1e-6)
    spent = _rdp_eps(z, steps, delta, q)
    assert spent <= eps
    assert spent >= eps * 0.97  # tol 1e-6 on z; RDP's orders make eps a step function of z


@pytest.mark.slow
@settings(max_examples=budget(4))
@given(z=st.floats(0.5, 5.0), steps=ordered(ROUNDS), q=ordered(st.floats(0.05, 1.0)), delta=st.floats(1e-8, 1e-3))
def test_rdp_spend_grows_with_steps_and_sampling_rate(z, steps, q, delta):
    (n0, n1), (q0, q1) = steps, q
    e = _rdp_eps
    assert e(z, n0, delta, q1) <= e(z, n1, delta, q1) * (1 + 1e-9)
    assert e(z, n1, delta, q0) <= e(z, n1, delta, q1) * (1 + 1e-9)
    assert e(2 * z, n1, delta, q1) <= e(z, n1, delta, q1)


# ----------------------------------------------------------------- fldp.accounting
@settings(max_examples=budget(8))
@given(eps=SMALL_EPS, delta=st.floats(1e-8, 1e-3), rounds=ROUNDS)
def test_calibrate_gaussian_run_pld_round_trips_below_target(eps, delta, rounds):
    z = A.calibrate_gaussian_run(target_eps=eps, target_delta=delta, rounds=rounds)
    spent = A.planned_epsilon(event=A.gaussian(noise_multiplier=z), rounds=rounds, delta=delta)
    assert spent <= eps
    assert spent >= eps * (1 - 1e-3)  # tol 1e-4 on z


@pytest.mark.slow
@settings(max_examples=budget(3))
@given(eps=SMALL_EPS, delta=st.floats(1e-8, 1e-3), rounds=st.integers(1, 10), q=st.floats(0.05, 0.9))
def test_calibrate_gaussian_run_rdp_sampled_round_trips_below_target(eps, delta, rounds, q):
    z = A.calibrate_gaussian_run(target_eps=eps, target_delta=delta, rounds=rounds, sampling_prob=q,
                                 accountant="rdp")
    spent = A.planned_epsilon(event=A.gaussian(noise_multiplier=z), rounds=rounds, client_sampling_prob=q,
                              delta=delta, accountant="rdp")
    assert spent <= eps
    assert spent >= eps * 0.97


@settings(max_examples=budget(4))
@given(eps=ordered(SMALL_EPS), rounds=ordered(ROUNDS), delta=st.floats(1e-8, 1e-3))
def test_calibrated_noise_falls_as_eps_grows_and_grows_with_the_releases(eps, rounds, delta):
    (e0, e1), (r0, r1) = eps, rounds
    z = lambda e, r: A.calibrate_gaussian_run(target_eps=e, target_delta=delta, rounds=r)  # noqa: E731
    assert z(e1, r0) <= z(e0, r0) + 1e-4  # within the calibration's tol
    assert z(e0, r0) <= z(e0, r1) + 1e-4


@settings(max_examples=budget(4))
@given(z=st.floats(0.5, 5.0), rounds=ordered(ROUNDS), q=ordered(st.floats(0.05, 1.0)), delta=st.floats(1e-8, 1e-3))
def test_planned_spend_grows_with_rounds_and_sampling_rate(z, rounds, q, delta):
    (r0, r1), (q0, q1) = rounds, q
    g = A.gaussian(noise_multiplier=z)
    e = lambda r, p: A.planned_epsilon(event=g, rounds=r, client_sampling_prob=p, delta=delta,  # noqa: E731
                                       accountant="rdp")
    assert e(r0, q1) <= e(r1, q1) * (1 + 1e-9)
    assert e(r1, q0) <= e(r1, q1) * (1 + 1e-9)
    # PLD (exact for unsampled Gaussians) is never looser than RDP
    pld = A.planned_epsilon(event=g, rounds=r1, delta=delta)
    assert pld <= e(r1, 1.0) * (1 + 1e-9)


@settings(max_examples=budget(4))
@given(z=st.floats(0.5, 5.0), rounds=ROUNDS, q=st.floats(0.05, 0.9), delta=st.floats(1e-8, 1e-3))
def test_removing_sampling_never_lowers_eps_and_rdp_is_never_tighter_than_pld(z, rounds, q, delta):
    sampled = A.self_composed(A.poisson_sampled(A.gaussian(noise_multiplier=z), sampling_prob=q), count=rounds)
    bare = A.without_sampling(sampled)
    assert A.epsilon(sampled, delta=delta, accountant="rdp") <= A.epsilon(bare, delta=delta, accountant="rdp")
    both = A.compare(bare, delta=delta)
    assert both["pld"] <= both["rdp"] * (1 + 1e-9)


@given(z=st.floats(0.2, 10.0), rounds=ROUNDS, delta=DELTA)
def test_epsilon_and_delta_for_invert_each_other(z, rounds, delta):
    event = A.self_composed(A.gaussian(noise_multiplier=z), count=rounds)
    e = A.epsilon(event, delta=delta)
    assert A.delta_for(event, eps=e) <= delta


@settings(max_examples=budget(6))
@given(z=st.floats(0.5, 5.0), n=ordered(st.integers(1, 6)), delta=st.floats(1e-8, 1e-3))
def test_a_run_spends_more_with_every_round(z, n, delta):
    g = A.gaussian(noise_multiplier=z)
    records = [A.PrivacyRecord(round=t, clients=(0, 1), uplink=(g, g), downlink=None) for t in range(1, n[1] + 1)]
    short, long = A.spent(records[:n[0]], delta=delta), A.spent(records, delta=delta)
    assert short.eps <= long.eps * (1 + 1e-12)


# ----------------------------------------------------------------- fldp.audit
@settings(max_examples=budget(4))
@given(eps=st.floats(0.5, 4.0), rounds=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_the_audit_never_certifies_more_than_a_calibrated_gaussian_spends(eps, rounds, seed):
    delta = 1e-5
    z = A.calibrate_gaussian_run(target_eps=eps, target_delta=delta, rounds=rounds)
    res = audit.audit_mechanism(noise="gaussian", scale=z, sensitivity=1.0, rounds=rounds, trials=4000,
                                delta=delta, alpha=1e-3, seed=seed)
    assert res.eps_lower <= eps and res.eps_lower_gdp <= eps
    assert res.eps_lower <= res.eps_max


@settings(max_examples=budget(4))
@given(eps=st.floats(0.5, 4.0), rounds=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_the_audit_never_certifies_more_than_a_calibrated_laplace_spends(eps, rounds, seed):
    scale = rounds / eps  # pure DP composes by adding: rounds releases of eps / rounds
    res = audit.audit_mechanism(noise="laplace", scale=scale, sensitivity=1.0, rounds=rounds, trials=4000,
                                delta=0.0, alpha=1e-3, seed=seed)
    assert res.eps_lower <= eps


@settings(max_examples=budget(3))
@given(z=st.floats(0.7, 3.0), rounds=st.integers(1, 10), q=st.floats(0.05, 0.5), seed=st.integers(0, 10**6))
def test_the_audit_never_certifies_more_than_amplification_by_sampling_allows(z, rounds, q, seed):
    delta = 1e-5
    claimed = A.planned_epsilon(event=A.gaussian(noise_multiplier=z), rounds=rounds, client_sampling_prob=q,
                                delta=delta, accountant="rdp")
    res = audit.audit_mechanism(noise="gaussian", scale=z, sensitivity=1.0, rounds=rounds, sampling_prob=q,
                                trials=4000, delta=delta, alpha=1e-3, seed=seed)
    assert res.eps_lower <= claimed


@given(k=st.integers(0, 200), n=st.integers(1, 200), alpha=st.floats(1e-4, 0.5))
def test_clopper_pearson_brackets_the_rate_and_moves_with_k(k, n, alpha):
    assume(k <= n)
    lo, hi = V.clopper_pearson(k, n, alpha=alpha)
    assert 0 <= lo <= k / n <= hi <= 1
    if k < n:
        lo2, hi2 = V.clopper_pearson(k + 1, n, alpha=alpha)
        assert lo2 >= lo and hi2 >= hi


@given(tpr=ordered(st.floats(0, 1)), fpr=ordered(st.floats(0, 1)), delta=st.floats(0, 0.1))
def test_the_certified_eps_grows_with_tpr_and_falls_with_fpr(tpr, fpr, delta):
    (t0, t1), (f0, f1) = tpr, fpr
    e = lambda t, f: audit.eps_from_rates(tpr=t, fpr=f, delta=delta)  # noqa: E731
    assert e(t0, f1) <= e(t1, f1)
    assert e(t1, f1) <= e(t1, f0)
    assert audit.gdp_mu(tpr=t0, fpr=f1) <= audit.gdp_mu(tpr=t1, fpr=f0)


@given(mu=ordered(st.floats(0.0, 20.0)), delta=st.floats(1e-10, 0.5))
def test_gdp_eps_grows_with_mu(mu, delta):
    assert audit.gdp_eps(mu=mu[0], delta=delta) <= audit.gdp_eps(mu=mu[1], delta=delta) * (1 + 1e-9) + 1e-12


@given(n=ordered(st.integers(1, 10**6)), alpha=st.floats(1e-4, 0.5), delta=st.floats(0, 0.1))
def test_the_audit_resolution_grows_with_trials(n, alpha, delta):
    r = lambda k: audit.max_certifiable_eps(k, alpha=alpha, delta=delta)  # noqa: E731
    assert 0 <= r(n[0]) <= r(n[1]) < math.inf


# ----------------------------------------------------------------- the papers' calibrations
@settings(max_examples=budget(6))
@given(eps=SMALL_EPS, delta=st.floats(1e-8, 1e-2), T=st.integers(1, 50), where=st.sampled_from(["uplink", "server"]))
def test_nbafl_accountant_calibration_never_overshoots(eps, delta, T, where):
    cal = wei_alg.calibrate_accountant(eps=eps, delta=delta, C=20.0, N=10, T=T, m=100, where=where)
    if where == "uplink":
        z = cal.sigma_U / wei_th.uplink_sensitivity(C=cal.C, m=cal.m)
    else:
        z = cal.sigma_D / cal.sensitivity_D
    spent = A.epsilon(A.self_composed(A.gaussian(noise_multiplier=z), count=T), delta=delta)
    assert spent <= eps and spent >= eps * (1 - 1e-3)


@settings(max_examples=budget(6))
@given(eps=SMALL_EPS, b=st.integers(1, 10), T=st.integers(1, 30), d_i=st.integers(10, 10**4),
       mechanism=st.sampled_from(["laplace", "gaussian"]))
def test_fedsgd_dpc_accountant_calibration_never_overshoots(eps, b, T, d_i, mechanism):
    # the Gaussian with q = 1 (every row): the sampled one costs ~10 s of PLD per example
    cal = zhou_alg.calibrate(mechanism=mechanism, eps=eps, b=b, T=T, N=10, d_i=d_i, delta=1e-5,
                             q=1.0, rule="accountant")
    if mechanism == "laplace":  # pure DP: exactly eps (never a rounding above it) ...
        assert cal.eps_pure <= eps and cal.eps_pure >= eps * (1 - 1e-12)
        # ... which PLD reads with its pessimistic discretisation (1e-4 per release) on top
        assert cal.eps_run <= eps + 1e-4 * cal.replies_max
    else:
        assert eps * (1 - 1e-3) <= cal.eps_run <= eps


@pytest.mark.slow
def test_secure_fedavg_accountant_calibration_never_overshoots():
    # One fixed setting: RDP of sampling without replacement costs seconds per calibration.
    cal = li_alg.calibrate(eps=1.0, n=np.array([300, 400]), N=2, K=1, Q=2, b=5, rounds=3, rule="accountant")
    whole = li_alg.run_eps(z=float(cal.z.min()), Q=2, b=5, n_k=300, uploads=3, delta=cal.delta)["eps"]
    assert whole <= 1.0 and cal.eps_run <= 1.0
