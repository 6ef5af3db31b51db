"""Noise calibrations of Zhou et al., "Optimizing the Numbers of Queries and Replies in
Federated Learning with Differential Privacy" (FedSGD-DPC), as pure functions.

Every function takes keyword-only arguments named after the paper's symbols and names the
theorem or equation it implements.  Symbols (Sec. III-IV): ``N`` clients, ``b`` of them
queried per global iteration, ``T`` global iterations (queries), so that client i replies
``b T / N`` times; ``d_i`` samples on client i; ``xi1`` / ``xi2`` bound the l1 / l2 norm of
per-sample gradients (Assumptions 1-2); ``(eps, delta)`` is client i's budget
``(eps_i, delta_i)``; ``c2`` is the unspecified constant of Theorem 2.
"""
from __future__ import annotations

import math

from fldp import validate

__all__ = ["laplace_scale", "gaussian_sigma"]


def laplace_scale(*, eps: float, b: int, T: int, N: int, d_i: int, xi1: float) -> float:
    """Per-coordinate Laplace scale ``2 b T xi_1 / (N d_i eps_i)`` of FedSGD-DPC.

    Source: Zhou et al., Theorem 1 (Laplace mechanism, from their [12]): client i is
    (eps_i, 0)-DP over T global iterations.  ``b T / N`` is the number of iterations client
    i takes part in, ``2 xi_1 / d_i`` the l1 sensitivity of its gradient (Assumption 1:
    ``xi_1`` bounds the l1 norm of per-sample gradients), ``b`` the clients queried per
    round out of ``N``, ``d_i`` client i's number of samples.
    """
    eps = validate.positive("eps", eps)
    N = validate.integer("N", N, 1)
    b = validate.integer("b", b, 1, N)
    T = validate.integer("T", T, 1)
    d_i = validate.integer("d_i", d_i, 1)
    xi1 = validate.positive("xi1", xi1)
    return 2.0 * b * T * xi1 / (N * d_i * eps)


def gaussian_sigma(*, eps: float, delta: float, b: int, T: int, N: int, d_i: int, xi2: float,
                   c2: float) -> float:
    """Gaussian std of FedSGD-DPC: ``sigma_i^2 = c_2^2 xi_2^2 b T log(1/delta_i)/(d_i^2 eps_i^2 N)``.

    Source: Zhou et al., Theorem 2, eq. (5) (the paper states ``sigma_i^2 >=`` this; we
    return the equality).  It extends Abadi et al. 2016 (moments accountant) Thm 1:
    ``c_2`` is an unspecified constant there and here (so it must be given), ``log`` is the
    natural logarithm, ``xi_2`` bounds the l2 norm of per-sample gradients (Assumption 2).
    The theorem also requires sampling probability ``q in (0, 1)`` and ``eps_i < c_1 q^2 T``
    for another unspecified constant ``c_1``; this function does not check that condition.
    """
    eps = validate.positive("eps", eps)
    delta = validate.open_unit("delta", delta)
    N = validate.integer("N", N, 1)
    b = validate.integer("b", b, 1, N)
    T = validate.integer("T", T, 1)
    d_i = validate.integer("d_i", d_i, 1)
    xi2 = validate.positive("xi2", xi2)
    c2 = validate.positive("c2", c2)
    var = c2**2 * xi2**2 * b * T * math.log(1.0 / delta) / (d_i**2 * eps**2 * N)
    return math.sqrt(var)
