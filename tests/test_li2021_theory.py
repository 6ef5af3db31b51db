"""Li, Chang & Chi (secure FedAvg): amplification by subsampling and eq. (9), pinned to
values worked out by hand (moved from tests/test_mechanisms.py with the functions)."""
from __future__ import annotations

import math

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
    assert s == pytest.approx(m.classic_gaussian_sigma(0.5 / (2 * q), 1e-4 / q, df), rel=1e-14)
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
