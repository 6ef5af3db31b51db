"""NbAFL (Wei et al. 2020, Algorithm 1) as configured on the engine: calibration and runs."""
import math

import pytest
import torch

from fldp import accounting, engine, mechanisms, models
from fldp.data import FederatedData
from fldp.papers.wei2020 import algorithm as nbafl

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
    assert cal.eps_run == pytest.approx(mechanisms.gaussian_eps(z / 5, 0.01, 1.0), rel=1e-6)
    assert cal.eps_run > 4000  # the paper's eps = 60 per exposure is not the run's guarantee
    k = nbafl.calibrate(eps=60, delta=0.01, C=20, L=1, N=50, T=25, m=1200, K=20)
    one = accounting.gaussian(noise_multiplier=z)
    unsampled_rdp = accounting.epsilon(accounting.self_composed(one, count=25), delta=0.01, accountant="rdp")
    assert k.eps_run_sampled < unsampled_rdp and cal.eps_run_sampled is None  # amplified (RDP)


def test_krandom_undefined_b_gives_zero_server_noise():
    cal = nbafl.calibrate(eps=60, delta=0.01, C=20, L=1, N=50, T=25, m=1200, K=20)
    assert cal.sigma_D == 0 and "b undefined" in cal.rule


def toy():
    g = torch.Generator().manual_seed(0)
    xs = [torch.randn(20, 8, generator=g) for _ in range(4)]
    ys = [torch.randint(0, 3, (20,), generator=g) for _ in range(4)]
    return FederatedData.from_clients(xs, ys, torch.cat(xs), torch.cat(ys))


def test_run_spends_what_the_calibration_says_and_private_false_is_the_plain_engine():
    data, model = toy(), models.MLP(8, 6, 3)
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
    data, model = toy(), models.MLP(8, 6, 3)
    cal = nbafl.calibrate_accountant(eps=2.0, delta=1e-5, C=1.0, N=4, T=3, m=data.m, where=where)
    sens = 2 * 1.0 / data.m if where == "uplink" else 2 * 1.0 / (data.m * 4)
    sigma = cal.sigma_U if where == "uplink" else cal.sigma_D
    assert (cal.sigma_D if where == "uplink" else cal.sigma_U) == 0
    # 3 Gaussian releases of multiplier z compose to one of multiplier z / sqrt(3)
    z = sigma / sens
    assert mechanisms.gaussian_eps(z / math.sqrt(3), 1e-5, 1.0) == pytest.approx(2.0, rel=2e-3)
    hist, used = nbafl.run(model, data, T=3, lr=0.1, batch_size=5, calibration=cal)
    assert used is cal
    if where == "uplink":
        assert accounting.spent(hist, delta=1e-5).eps == pytest.approx(2.0, rel=2e-3)
    else:  # the uploads reach the trusted server in the clear; the broadcasts alone spend the target
        assert accounting.spent(hist, delta=1e-5).eps == math.inf
        assert accounting.spent(hist, delta=1e-5, clients=[]).eps == pytest.approx(2.0, rel=2e-3)
    plain, _ = nbafl.run(model, data, T=3, private=False, lr=0.1, batch_size=5)
    assert float((hist.params - plain.params).abs().max()) > 1e-3
