"""The empirical audit can fail: correctly calibrated mechanisms stay at or below the eps their
accountant gives, broken ones (noise 10x too small, clipping skipped, amplification claimed but
not there) are caught above it.  Statistics against hand-computed values.  Fixed seeds, fast."""
from __future__ import annotations

import math

import pytest
import torch
from scipy import stats

from fldp import verdicts as V
from fldp import accounting, audit, engine, models
from fldp import mechanisms as M


def test_clopper_pearson_hand_values():
    lo, hi = V.clopper_pearson(0, 10, alpha=0.05)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-9)  # 0.3085
    lo, hi = V.clopper_pearson(10, 10, alpha=0.05)
    assert lo == pytest.approx(0.025 ** (1 / 10), rel=1e-9) and hi == 1.0
    lo, hi = V.clopper_pearson(5, 10, alpha=0.05)
    assert (lo, hi) == (pytest.approx(0.18709, abs=1e-5), pytest.approx(0.81291, abs=1e-5))
    with pytest.raises(ValueError, match="successes=11 is out of range"):
        V.clopper_pearson(11, 10, alpha=0.05)


def test_eps_and_gdp_readings_hand_values():
    # Laplace at eps = 2 thresholded at x >= 1: TPR 1/2, FPR e^-2 / 2, exactly e^2 apart
    assert audit.eps_from_rates(tpr=0.5, fpr=0.5 * math.exp(-2), delta=0.0) == pytest.approx(2.0)
    assert audit.eps_from_rates(tpr=0.5, fpr=0.5, delta=0.0) == 0.0
    assert audit.eps_from_rates(tpr=0.3, fpr=0.0, delta=0.0) == math.inf
    assert audit.eps_from_rates(tpr=0.3, fpr=0.1, delta=0.05) == pytest.approx(math.log(2.5))
    assert audit.gdp_mu(tpr=stats.norm.cdf(1.0), fpr=0.5) == pytest.approx(1.0)
    assert audit.gdp_eps(mu=1.0, delta=1e-5) == pytest.approx(M.gaussian_eps(sigma=1.0, delta=1e-5, sensitivity=1.0))
    assert math.isnan(audit.gdp_eps(mu=1.0, delta=0.0))
    # perfect separation on 10,000 trials per side certifies about log(0.99963 / 0.00037) = 7.9
    assert audit.max_certifiable_eps(10_000, alpha=0.05, delta=1e-5) == pytest.approx(7.9048, abs=1e-3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_calibrated_gaussian_stays_below_its_accountant_eps_and_a_broken_one_does_not(seed):
    z = accounting.calibrate_gaussian_run(target_eps=2.0, target_delta=1e-5, rounds=10)  # 10 releases, whole run eps 2
    ok = audit.audit_mechanism(noise="gaussian", scale=z, sensitivity=1.0, rounds=10, trials=20_000, delta=1e-5, seed=seed)
    assert 0.3 < ok.eps_lower <= 2.0 and ok.eps_lower_gdp <= 2.0  # informative, and below the upper bound
    broken = audit.audit_mechanism(noise="gaussian", scale=z / 10, sensitivity=1.0, rounds=10, trials=20_000,
                                   delta=1e-5, seed=seed)  # noise 10x too small for the claimed eps = 2
    assert broken.eps_lower > 2.0 * 3  # caught: at 7.1 the audit is near its resolution (7.9)


@pytest.mark.parametrize("seed", [0, 1])
def test_laplace_audit_is_tight_for_pure_dp_and_catches_a_small_scale(seed):
    ok = audit.audit_mechanism(noise="laplace", scale=0.5, sensitivity=1.0, rounds=1, trials=20_000, delta=0.0, seed=seed)
    assert 1.7 < ok.eps_lower <= 2.0  # eps = 2 exactly: the audit gets close from below
    broken = audit.audit_mechanism(noise="laplace", scale=0.05, sensitivity=1.0, rounds=1, trials=20_000, delta=0.0,
                                   seed=seed)
    assert broken.eps_lower > 2.0 * 3


def test_amplification_by_sampling_holds_and_a_false_claim_of_it_is_caught():
    claimed = accounting.planned_epsilon(event=accounting.gaussian(noise_multiplier=1.0), rounds=50,
                                         client_sampling_prob=0.1, delta=1e-5)  # about 5.1 (RDP)
    real = audit.audit_mechanism(noise="gaussian", scale=1.0, sensitivity=1.0, rounds=50, sampling_prob=0.1,
                                 trials=20_000, delta=1e-5, seed=0)
    assert real.eps_lower <= claimed
    unsampled = audit.audit_mechanism(noise="gaussian", scale=1.0, sensitivity=1.0, rounds=50, sampling_prob=1.0,
                                      trials=20_000, delta=1e-5, seed=0)  # the sample was not secret after all
    assert unsampled.eps_lower > claimed


def _engine_audit(clip):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 5, generator=g)
    y = (x[:, 0] > 0).long()
    canary = (torch.cat([x, 30 * torch.ones(1, 5)]), torch.cat([y, torch.tensor([0])]))
    C, eps, delta = 1.0, 2.0, 1e-5
    sigma = M.analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=2 * C)  # clipped models differ by at most 2C
    cfg = engine.FLConfig(num_rounds=1, local_epochs=2, batch_size=3, lr=0.5, clip=clip,
                          clip_mode="params" if clip else None)
    return audit.audit_uploads(models.MultinomialLogReg(in_features=5, num_classes=2), (x, y), canary, cfg,
                               uplink=engine.gaussian_uplink(sigma, sensitivity=2 * C), trials=4000, delta=delta, seed=0)


def test_end_to_end_engine_audit_catches_skipped_clipping():
    """The real engine round (local SGD, clipping, the uplink hook) with the trials as clients."""
    assert _engine_audit(clip=1.0).eps_lower <= 2.0
    skipped = _engine_audit(clip=None)  # the same noise, no clipping: the canary's upload stands out
    assert skipped.eps_lower > 2.0 * 2


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="at least 4 trials"):
        audit.audit_scores([0.0, 1.0], [1.0, 2.0], delta=1e-5)
    with pytest.raises(ValueError, match="noise='uniform'"):
        audit.simulate(noise="uniform", scale=1.0, sensitivity=1.0, rounds=1, trials=10)
    with pytest.raises(ValueError, match="sampling_prob=1.5"):
        audit.simulate(noise="gaussian", scale=1.0, sensitivity=1.0, rounds=1, trials=10, sampling_prob=1.5)
