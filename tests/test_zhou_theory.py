"""Zhou et al. (FedSGD-DPC) noise calibrations, pinned to values worked out by hand
(moved from tests/test_mechanisms.py with the functions)."""
from __future__ import annotations

import math

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
