"""Privacy amplification by subsampling and the upload noise of Li, Chang & Chi, "Secure
Federated Averaging Algorithm with Differential Privacy" (IEEE MLSP 2020), as pure functions.

Every function takes keyword-only arguments named after the paper's symbols and names the
equation it implements.  Symbols (Sec. 2): client k holds ``n_k`` samples and runs ``Q``
local SGD steps on mini-batches of size ``b`` between two uploads, so one upload touches the
fraction ``q = Q b / n_k`` of its data; ``Df`` (``sensitivity_df``) is the l2 sensitivity of
the upload (Lemma 1: ``Df = 4 Q G eta_{t+1}`` with ``G`` the gradient-norm bound).
"""
from __future__ import annotations

import math

import numpy as np

from fldp import validate

__all__ = ["sampling_ratio", "amplified_eps", "sigma_eq9"]


def sampling_ratio(*, b: int, n_k: int, Q: int) -> float:
    """``q = Q b / n_k``: fraction of client k's data touched by Q mini-batches of size b.

    Source: Li, Chang & Chi 2020, Sec. 2.3 (amplification statement before eq. (7)).
    ``Q b <= n_k`` is required so that q is a fraction in (0, 1].
    """
    n_k = validate.integer("n_k", n_k, 1)
    b = validate.integer("b", b, 1, n_k)
    Q = validate.integer("Q", Q, 1, n_k // b)
    return Q * b / n_k


def amplified_eps(*, eps: float, b: int, n_k: int, Q: int) -> float:
    """Amplified epsilon ``log(1 + (1 - (1 - b/n_k)^Q)(e^eps - 1))`` of one upload.

    Source: Li, Chang & Chi 2020, Sec. 2.3 (statement before eq. (7), citing Balle, Barthe &
    Gaboardi 2018): with mini-batches of size ``b`` drawn without replacement ``Q`` times
    from the ``n_k`` samples of client k and noise calibrated for (eps, delta) by the
    classic formula, the upload is ``(this value, q delta)``-DP with ``q = Q b / n_k`` (see
    :func:`sampling_ratio`).  The paper then bounds it, eq. (7)-(8), by ``2 q eps``,
    which holds only while ``e^eps - 1 <= 2 eps`` (eps <= 1.256...).  Computed stably
    (``log1p``/``expm1``; ``logaddexp`` for eps > 700).
    """
    eps = validate.positive("eps", eps)
    n_k = validate.integer("n_k", n_k, 1)
    b = validate.integer("b", b, 1, n_k)
    Q = validate.integer("Q", Q, 1)
    p = -math.expm1(Q * math.log1p(-b / n_k)) if b < n_k else 1.0  # 1 - (1 - b/n_k)^Q
    if eps <= 700.0:
        return math.log1p(p * math.expm1(eps))
    return float(np.logaddexp(math.log1p(-p) if p < 1 else -np.inf, math.log(p) + eps))


def sigma_eq9(*, eps: float, delta: float, q: float, sensitivity_df: float) -> float:
    """Upload noise std of secure FedAvg: ``sigma^2 = 8 q^2 Df^2 ln(1.25 q/delta)/eps^2``.

    Source: Li, Chang & Chi 2020, eq. (9): the classic sigma for (eps/(2q), delta/q), so
    that with amplification (eq. (7)-(8)) the upload is (eps, delta)-DP.  ``Df`` is the l2
    sensitivity of the upload (Lemma 1: ``Df = 4 Q G eta_{t+1}``), ``q = Q b / n_k``.
    ``delta < 1.25 q`` is required for the logarithm to be positive.  Inherits the classic
    bound's domain: valid only while ``eps / (2 q) < 1``.
    """
    eps = validate.positive("eps", eps)
    delta = validate.open_unit("delta", delta)
    q = validate.positive("q", q)
    if q > 1:
        validate.probability("q", q)
    sensitivity_df = validate.positive("sensitivity_df", sensitivity_df)
    if not delta < 1.25 * q:
        raise ValueError(
            f"delta={delta!r} is out of range: delta must be in (0, 1.25*q) = "
            f"(0, {1.25 * q!r}) for ln(1.25 q/delta) in eq. (9) to be positive"
        )
    return math.sqrt(8.0 * q**2 * sensitivity_df**2 * math.log(1.25 * q / delta)) / eps
