"""The stored run functions of the constant estimates and Monte Carlo curves (Zhou et al.'s
constants and noise calibrations, Li, Chang & Chi's constants by Newton, the adaptive noise chapter's descent
probability): run twice through the store, the second run is read back, identical (tiny sizes)."""
from __future__ import annotations

import pytest

from fldp.repro import store as S
from fldp.papers.adaptive_noise import experiments as an, theory as an_theory
from fldp.papers.li2021 import estimate as li_estimate, experiments as li
from fldp.papers.zhou import estimate as zhou_estimate, experiments as zhou
from store_checks import assert_read_back

CASES = [
    pytest.param(zhou.constants_run, dict(subsample=200, max_test=100, T_traj=2, local_steps=2, stat_points=2,
                                          hessian_points=1), (zhou_estimate, "estimate_constants"), id="zhou-constants"),
    pytest.param(zhou.calibration_run, dict(mechanism="gaussian", eps=0.5, b=1, T=10, N=10, d_i=6000, q=0.01, xi=10.0,
                                            rule="accountant"), (zhou.alg, "calibrate"), id="zhou-calibration"),
    pytest.param(li.constants_run, dict(scheme="iid", N=10, iters=5), (li_estimate, "estimate_constants"), id="li-iid"),
    pytest.param(li.constants_run, dict(scheme="one_class", clients_per_class="equal", N=10, iters=5),
                 (li_estimate, "estimate_constants"), id="li-one-class"),
    pytest.param(an.descent_run, dict(c=[0.5, 2.0, 8.0], K=5, dim=20, rho=0.5, trials=20, seed=3),
                 (an_theory, "descent_probability"), id="adaptive-descent"),
]


@pytest.mark.slow
@pytest.mark.parametrize("fn, config, inner", CASES)
def test_run_twice_through_the_store_reads_it_back(tmp_path, monkeypatch, fn, config, inner, output_dir):
    assert_read_back(S.RunStore(tmp_path / "runs"), fn, config, monkeypatch, inner)


def test_li_constants_come_back_as_constants(tmp_path, output_dir):
    got = S.RunStore(tmp_path / "runs").run(li.constants_run, dict(scheme="iid", N=10, iters=5))
    assert li_estimate.Constants(**got).as_dict() == got and len(got["gamma_sq"]) == 10


def test_descent_curves_same_with_and_without_a_store(tmp_path, output_dir):
    keys = [((r, K), dict(rho=r, K=K)) for r in (1.0, 0.5) for K in (2, 4)]
    common = dict(c=[0.5, 3.0], dim=10, trials=10, seed=0)
    plain = an.descent_curves(None, keys, **common)
    stored = an.descent_curves(S.RunStore(tmp_path / "runs"), keys, **common)
    assert plain == stored and set(stored) == {k for k, _ in keys}
    assert stored[1.0, 2] == [an_theory.descent_probability(c=c, K=2, dim=10, rho=1.0, trials=10, seed=0)
                              for c in (0.5, 3.0)]
