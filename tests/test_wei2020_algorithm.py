"""NbAFL (Wei et al. 2020, Algorithm 1) as configured on the engine: calibration and runs."""
import math

import pytest
import torch

from fldp import accounting, engine, mechanisms, models
from fldp.papers.wei2020 import algorithm as nbafl
from helpers import toy_federation

C_DELTA_001 = math.sqrt(2 * math.log(125))  # c at delta = 0.01: 3.1072...


def test_calibration_by_hand():
    cal = nbafl.calibrate(eps=60, delta=0.01, C=20, L=1, N=50, T=25, m=1200)
    assert cal.c == pytest.approx(3.107511, abs=1e-6)
    assert cal.sigma_U == pytest.approx(2 * C_DELTA_001 * 20 / (1200 * 60), rel=1e-12)  # 1.7264e-3
    # Theorem 1: T = 25 > L sqrt(N) = 7.07: sigma_D = 2cC sqrt(T^2 - L^2 N) / (m N eps)
    assert cal.sigma_D == pytest.approx(2 * C_DELTA_001 * 20 * math.sqrt(625 - 50) / (1200 * 50 * 60), rel=1e-12)
    assert cal.rule == "Theorem 1, eq. (10)" and cal.sensitivity_U == pytest.approx(40 / 1200)


def test_whole_run_eps_is_T_uploads_of_multiplier_cL_over_eps():
    """Each upload is N(0, sigma_U^2) on a release of sensitivity 2C/m: multiplier
    z = c L / eps = 0.0518; T of them compose to one Gaussian of multiplier z / sqrt(T)."""
    cal = nbafl.calibrate(eps=60, delta=0.01, C=20, L=1, N=50, T=25, m=1200)
    z = C_DELTA_001 / 60
    assert cal.eps_run == pytest.approx(mechanisms.gaussian_eps(sigma=z / 5, delta=0.01, sensitivity=1.0), rel=1e-6)
    assert cal.eps_run > 4000  # the paper's eps = 60 per exposure is not the run's guarantee
    k = nbafl.calibrate(eps=60, delta=0.01, C=20, L=1, N=50, T=25, m=1200, K=20)
    one = accounting.gaussian(noise_multiplier=z)
    unsampled_rdp = accounting.epsilon(accounting.self_composed(one, count=25), delta=0.01, accountant="rdp")
    assert k.eps_run_sampled < unsampled_rdp and cal.eps_run_sampled is None  # amplified (RDP)


def test_krandom_undefined_b_gives_zero_server_noise():
    cal = nbafl.calibrate(eps=60, delta=0.01, C=20, L=1, N=50, T=25, m=1200, K=20)
    assert cal.sigma_D == 0 and "b undefined" in cal.rule


TOY = dict(counts=[20] * 4, features=8, per_client=True)  # 4 clients of 20 rows, all rows as test set


def test_run_spends_what_the_calibration_says_and_private_false_is_the_plain_engine():
    data, model = toy_federation(**TOY), models.MLP(8, 6, 3)
    hist, cal = nbafl.run(model, data, T=3, eps=5.0, delta=0.01, C=1.0, L=1, lr=0.1, batch_size=5)
    spent = accounting.spent(hist, delta=0.01)
    assert spent.eps == pytest.approx(cal.eps_run, rel=1e-9) and spent.uploads == {i: 3 for i in range(4)}
    plain, none = nbafl.run(model, data, T=3, private=False, lr=0.1, batch_size=5)
    cfg = engine.FLConfig(num_rounds=3, local_epochs=1, batch_size=5, lr=0.1, mu=0.01)
    assert none is None and torch.equal(plain.params, engine.run(model, data, cfg).params)
    assert float((hist.params - plain.params).abs().max()) > 1e-3  # clipping + noise did act


@pytest.mark.parametrize("where", ["uplink", "server"])
def test_accountant_calibration_spends_its_target(where):
    """Calibrated by inversion to a whole-run target, the run's realised spend is the target
    (uplink: T uploads of sensitivity 2C/m; server: T broadcasts of sensitivity 2C/(mN))."""
    data, model = toy_federation(**TOY), models.MLP(8, 6, 3)
    cal = nbafl.calibrate_accountant(eps=2.0, delta=1e-5, C=1.0, N=4, T=3, m=data.m, where=where)
    sens = 2 * 1.0 / data.m if where == "uplink" else 2 * 1.0 / (data.m * 4)
    sigma = cal.sigma_U if where == "uplink" else cal.sigma_D
    assert (cal.sigma_D if where == "uplink" else cal.sigma_U) == 0
    # 3 Gaussian releases of multiplier z compose to one of multiplier z / sqrt(3)
    z = sigma / sens
    assert mechanisms.gaussian_eps(sigma=z / math.sqrt(3), delta=1e-5, sensitivity=1.0) == pytest.approx(2.0, rel=2e-3)
    hist, used = nbafl.run(model, data, T=3, lr=0.1, batch_size=5, calibration=cal)
    assert used is cal
    if where == "uplink":
        assert accounting.spent(hist, delta=1e-5).eps == pytest.approx(2.0, rel=2e-3)
    else:  # the uploads reach the trusted server in the clear; the broadcasts alone spend the target
        assert accounting.spent(hist, delta=1e-5).eps == math.inf
        assert accounting.spent(hist, delta=1e-5, clients=[]).eps == pytest.approx(2.0, rel=2e-3)
    plain, _ = nbafl.run(model, data, T=3, private=False, lr=0.1, batch_size=5)
    assert float((hist.params - plain.params).abs().max()) > 1e-3


def test_accountant_calibration_to_the_clipping_sensitivity_2C():
    """sensitivity="2C": the noise is the accountant's multiplier times 2C (uplink) or 2C/N
    (server), whatever m.  Hand-computed: T Gaussian releases of multiplier z compose to one of
    multiplier z / sqrt(T); its exact (eps, delta) curve (Balle & Wang 2018, Thm 8) is
    delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) with mu = sqrt(T)/z, which at
    eps = 4, delta = 1e-5 gives mu = 0.924931, so z = 5/0.924931 = 5.405809 for T = 25, and at
    eps = 1, T = 1 gives z = 3.730632 (the analytic Gaussian mechanism's multiplier)."""
    up = nbafl.calibrate_accountant(eps=4.0, delta=1e-5, C=20.0, N=50, T=25, m=1200, sensitivity="2C")
    assert up.sigma_U == pytest.approx(5.405809 * 40.0, rel=1e-4) and up.sigma_D == 0
    assert up.sigma_U >= 5.405809 * 40.0  # never below the exact multiplier: never overshoots eps
    assert up.sensitivity_U == 40.0 and up.upload_sensitivity == 40.0 and "2C" in up.rule
    paper = nbafl.calibrate_accountant(eps=4.0, delta=1e-5, C=20.0, N=50, T=25, m=1200)
    assert paper.sensitivity_U == pytest.approx(40.0 / 1200) and paper.upload_sensitivity is None
    assert up.sigma_U == pytest.approx(1200 * paper.sigma_U, rel=1e-12)  # m times the noise of 2C/m
    one = nbafl.calibrate_accountant(eps=1.0, delta=1e-5, C=20.0, N=50, T=1, m=1200, sensitivity="2C")
    assert one.sigma_U == pytest.approx(3.730632 * 40.0, rel=1e-4)
    server = nbafl.calibrate_accountant(eps=4.0, delta=1e-5, C=20.0, N=50, T=25, m=1200, where="server",
                                        sensitivity="2C")
    assert server.sensitivity_D == pytest.approx(0.8) and server.sigma_U == 0
    assert server.sigma_D == pytest.approx(5.405809 * 0.8, rel=1e-4)
    with pytest.raises(ValueError, match="sensitivity"):
        nbafl.calibrate_accountant(eps=4.0, delta=1e-5, C=20.0, N=50, T=25, m=1200, sensitivity="C")


def test_a_run_calibrated_to_2C_spends_its_target_against_2C():
    """The engine records each upload against the calibration's sensitivity (2C), so the run's
    realised spend is the target; the uploads are clipped to C, so 2C holds for any solver."""
    data, model = toy_federation(**TOY), models.MLP(8, 6, 3)
    cal = nbafl.calibrate_accountant(eps=2.0, delta=1e-5, C=1.0, N=4, T=3, m=data.m, sensitivity="2C")
    hist, used = nbafl.run(model, data, T=3, lr=0.1, batch_size=5, calibration=cal)
    assert used.sensitivity_U == 2.0
    assert accounting.spent(hist, delta=1e-5).eps == pytest.approx(2.0, rel=2e-3)
