"""Regular tests pinning the defects the property tests (tests/test_properties_*.py) found.

Each test names what the function did before the fix.  The fixes change no number for valid
input: the module tests (tests/test_mechanisms.py, ...) pin those.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from fldp import accounting as A, audit, mechanisms as M, validate
from fldp.papers.adaptive_noise import theory as an
from fldp.papers.li2021 import theory as li
from fldp.papers.wei2020 import theory as wei
from fldp.papers.zhou import algorithm as zhou_alg, theory as zt

SCORES = [0.1 * i for i in range(20)]


# ----------------------------------------------------------------- calibrations overshooting
@pytest.mark.parametrize("eps, delta, sens", [(38.15702693838952, 1e-9, 1.5),
                                              (40.15702693838952, 1e-9, 1.27734375)])
def test_analytic_sigma_never_misses_its_target_by_rounding(eps, delta, sens):
    # was: gaussian_delta(eps, sigma) = 1.0000000000000007e-09 > 1e-09 (the log-space root
    # rounded one ulp above the target once exponentiated)
    sigma = M.analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=sens)
    assert M.gaussian_delta(eps=eps, sigma=sigma, sensitivity=sens) <= delta


def test_gaussian_eps_is_a_guarantee_at_the_returned_eps():
    # was: gaussian_delta(gaussian_eps(...)) = 0.030000792671168966 > 0.030000792671168963
    sigma, delta, sens = 98.0, 0.030000792671168963, 8.65625
    assert M.gaussian_delta(eps=M.gaussian_eps(sigma=sigma, delta=delta, sensitivity=sens), sigma=sigma, sensitivity=sens) <= delta
    # and through the accountant: delta_for(epsilon(delta)) was 0.03320312500000001 > 0.033203125
    event = A.self_composed(A.gaussian(noise_multiplier=4.0), count=3)
    assert A.delta_for(event, eps=A.epsilon(event, delta=0.033203125)) <= 0.033203125


def test_fedsgd_dpc_laplace_accountant_calibration_never_overshoots_by_rounding():
    # was: eps_pure = 5.500000000000001 > 5.5 (scale = r sens / eps, then r / (scale / sens))
    cal = zhou_alg.calibrate(mechanism="laplace", eps=5.5, b=1, T=1, N=10, d_i=10, rule="accountant")
    assert cal.eps_pure <= 5.5
    assert cal.scale == pytest.approx(2 * 300.0 / 10 / 5.5, rel=1e-15)  # the same noise, to an ulp


# ----------------------------------------------------------------- NaN or inf returned silently
def test_nan_and_inf_are_refused_instead_of_returned():
    cases = [  # (call, what it returned before the fix)
        (lambda: audit.gdp_mu(tpr=math.nan, fpr=0.2), 0.0),
        (lambda: an.threshold(dim=100, p=math.nan), 0.0),
        (lambda: an.aggregate_noise_variance(weights=[math.nan, 0.5], sigmas=[0.1, 0.2]), math.nan),
        (lambda: an.angle_cdf(theta=math.nan, dim=100), math.nan),
        (lambda: an.angle_pdf(theta=math.inf, dim=100), math.nan),
        (lambda: an.expected_tries_normal(p=math.nan), math.nan),
        (lambda: li.paper_lr(t=math.nan), math.nan),
        (lambda: li.theorem1_lr(t=-100, mu=0.1, kappa=12.5), math.inf),
        (lambda: li.theorem1_A(p=[math.nan, 0.5], gamma_sq=[1.0, 2.0], b=1, Q=10, G=2.0, L=1.0, Gamma=0.1),
         math.nan),
        (lambda: li.theorem1_bound(T=math.nan, L=1.25, mu=0.1, A=1.0, B=2.0, C=0.5, w0_dist_sq=1.0), math.nan),
        (lambda: wei.theorem2_second_derivative_fd(T=25, eps=60.0, Theta=1.0, P=0.83, kappa0=1e-3, kappa1=1e-2,
                                                   h=0.0), math.nan),
        (lambda: zt.client_sampling_expectation(d_i=[1.0, 3.0, 2.0], nu=[math.nan, 8.0, 1.0], b=2), math.nan),
    ]
    for call, _before in cases:
        with pytest.raises(ValueError, match="is out of range"):
            call()


def test_audit_scores_refuse_nan_scores_by_name():
    # was: a NaN score was silently counted as a negative (eps_lower = 0.0)
    with pytest.raises(ValueError, match=r"^scores_out\[0\]=nan is out of range"):
        audit.audit_scores([math.nan] + SCORES[1:], SCORES, delta=1e-5)
    with pytest.raises(ValueError, match="^scores_in="):
        audit.audit_scores(SCORES, "a", delta=1e-5)
    with pytest.raises(ValueError, match="scores_out, scores_in: need at least 4 trials"):
        audit.audit_scores(SCORES[:3], SCORES, delta=1e-5)


def test_legitimate_infinities_are_inf_not_an_exception():
    # was: ZeroDivisionError (Phi(-40) underflows to 0)
    assert an.expected_tries_normal(p=-40.0) == math.inf
    assert an.expected_tries_normal(p=-2.0) == pytest.approx(43.955, abs=1e-3)  # Table 4, unchanged
    # was: ValueError naming sigma (1/mu overflows); a subnormal mu has eps 0
    assert audit.gdp_eps(mu=5e-324, delta=0.5) == 0.0


def test_gdp_mu_reads_tiny_rates_from_the_tail():
    # was: inf (1 - 1e-20 rounds to 1, Phi^-1(1) = inf), so a certified eps of inf
    assert audit.gdp_mu(tpr=1e-10, fpr=1e-20) == pytest.approx(2.900999187, rel=1e-9)
    assert audit.gdp_mu(tpr=1e-17, fpr=1e-18) == pytest.approx(0.2634971, rel=1e-6)  # was inf - inf = NaN, read as 0
    assert audit.gdp_mu(tpr=stats.norm.cdf(1.0), fpr=0.5) == pytest.approx(1.0)  # ordinary rates: unchanged


# ----------------------------------------------------------------- wrong types accepted or mis-reported
def test_bools_and_fractional_seeds_are_refused():
    x = torch.tensor([[3.0, 4.0]])
    with pytest.raises(ValueError, match="^ord=True is not supported"):
        M.row_norms(x, ord=True)  # was: the l1 norm (True == 1)
    with pytest.raises(ValueError, match="^seed=True is out of range"):
        audit.audit_scores(SCORES, SCORES, delta=1e-5, seed=True)  # was: seed 1
    with pytest.raises(ValueError, match="^seed=1.5 is out of range"):  # was: seed 1 (int(1.5))
        audit.simulate(noise="gaussian", scale=1.0, sensitivity=1.0, rounds=2, trials=20, seed=1.5)
    with pytest.raises(ValueError, match="^seed=None is out of range"):  # was: TypeError
        an.descent_probability(c=1.0, K=4, dim=10, trials=5, seed=None)
    with pytest.raises(ValueError, match="^c='a' is out of range"):  # was: ignored
        an.acceptance_probability(dim=100, p=-1.0, c="a")
    assert validate.integer("n", np.int64(3), 1) == 3 and validate.integer("n", torch.tensor(3), 1) == 3


@pytest.mark.parametrize("call, name", [
    (lambda: A.self_composed(A.gaussian(noise_multiplier=1.0), count=np.array([])), "count"),  # TypeError
    (lambda: M.gaussian_noise(None, sigma=1.0, generator=torch.Generator()), "shape"),  # TypeError
    (lambda: an.cost_multiple(dims=5, p=-1.0), "dims"),  # TypeError
    (lambda: an.angle_moments(dim=np.array([])), "dim"),  # TypeError (unhashable, in the cache)
    (lambda: zt.client_sampling_expectation(d_i=3.0, nu=[1.0], b=1), "d_i"),  # TypeError
    (lambda: wei.theorem2_bound(T=25, eps=60.0, Theta=1.0, P="a", kappa0=1e-3, kappa1=1e-2), "P"),  # TypeError
    (lambda: audit.gdp_eps(mu=math.nan, delta=1e-5), "mu"),  # ValueError naming sigma
    (lambda: zt.table1(mu=1.0, lam=1.5, G=17.95, Gamma=80.0, Y0=100.0, xi1=300.0, p=7840, d=60000.0, N=10,
                       eps_values=[math.nan]), "eps_values"),  # ValueError naming eps
])
def test_bad_input_is_a_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()


@pytest.mark.parametrize("call, name", [
    (lambda: M.gaussian_delta(eps=np.array([]), sigma=1.0, sensitivity=1.0), "eps"),
    (lambda: wei.sigma_downlink(C=20.0, m=1200, N=50, T=np.array([]), L=1, eps=60.0, c=3.1), "T"),
    (lambda: zt.U_laplace(T=np.array([]), b=2.0, C1=10.0, C2=0.01, C3=5.0, gamma=4.0), "T"),
    (lambda: zt.table1(mu=1.0, lam=1.5, G=17.95, Gamma=80.0, Y0=100.0, xi1=300.0, p=7840, d=60000.0, N=10,
                       eps_values=[]), "eps_values"),
    (lambda: li.paper_lr(t=[]), "t"),
])
def test_empty_arrays_are_refused(call, name):
    # was: an empty result (an empty array, an empty table)
    with pytest.raises(ValueError, match=rf"^{name} is empty"):
        call()


@pytest.mark.parametrize("call, names", [
    (lambda: A.sampled_without_replacement(A.gaussian(noise_multiplier=1.0), sample_size=10, population=7),
     ("sample_size", "population")),
    (lambda: li.sampling_ratio(b=39, n_k=325, Q=10), ("Q", "b", "n_k")),
    (lambda: zt.gamma_of(mu=1.0, lam=0.5), ("mu", "lam")),
    (lambda: wei.krandom_gamma(eps=60.0, L=1, N=11, K=20), ("K", "N")),
    (lambda: wei.theorem3_optimal_K(T=200, eps=60.0, N=10, m=1200, Theta=1.0, rho=1.0, beta=1.0, B=1.0, mu=10.0,
                                    l=41.0, c=3.1), ("N", "l", "mu")),
    (lambda: wei.theorem2_second_derivative_fd(T=25, eps=60.0, Theta=1.0, P=0.83, kappa0=1e-3, kappa1=1e-2, h=30.0),
     ("h", "T")),
])
def test_a_bound_set_by_another_parameter_names_it(call, names):
    # was: only the first parameter was named (e.g. "sample_size must be an integer in [1, 7]")
    with pytest.raises(ValueError) as err:
        call()
    for n in names:
        assert f"{n}" in str(err.value)


def test_validate_array_names_the_bad_element_and_keeps_grids_fast():
    with pytest.raises(ValueError, match=r"^T\[0, 1\]=-2.0 is out of range"):
        validate.array("T", np.array([[1.0, -2.0], [3.0, 4.0]]), validate.positive)
    with pytest.raises(ValueError, match=r"^t\[1\]=nan is out of range"):
        validate.array("t", [0.0, math.nan], validate.nonnegative)
    grid = np.arange(1.0, 1e6)  # a grid of T: checked through its extremes, not element by element
    assert validate.array("T", grid, validate.positive) is grid
