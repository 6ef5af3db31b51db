"""Generic noise mechanisms, their calibration and clipping, as pure functions: only what every
paper shares.  The Gaussian mechanism has two separately named calibrations: the *classic*
``sigma = c * sensitivity / eps``, ``c = sqrt(2 ln(1.25/delta))`` (Dwork & Roth 2014, Thm A.1;
:func:`classic_gaussian_sigma`), used by every paper reproduced here and proven only for
``eps < 1``, and the *analytic* one, exact at every ``eps > 0`` (Balle & Wang 2018, Thm 8: the
exact privacy profile :func:`gaussian_delta`, inverted by :func:`analytic_gaussian_sigma` and
:func:`gaussian_eps`).  Beside them: the Laplace mechanism (:func:`laplace_scale`), l2 / l1
clipping (:func:`clip_l2`, :func:`clip_l1`, :func:`row_norms`) and seeded samplers
(:func:`gaussian_noise`, :func:`laplace_noise`) that take an explicit :class:`torch.Generator`
and never touch the global RNG.  Every formula names its source (paper and equation) in its
docstring, and every argument is keyword-only (the data ``x`` or ``shape`` excepted).  A
paper's own calibrations live in its ``fldp/papers/<paper>/theory.py`` (e.g. Zhou et al.'s
Theorems 1-2 in :mod:`fldp.papers.zhou.theory`); composition, sampling and calibration by an
accountant in :mod:`fldp.accounting`.
"""
from __future__ import annotations

import math
from typing import Sequence, Union

import numpy as np
import torch
from scipy import optimize, special

from fldp import validate

ArrayLike = Union[float, np.ndarray]
Scale = Union[float, torch.Tensor]

__all__ = [
    "classic_gaussian_c",
    "classic_gaussian_sigma",
    "classic_gaussian_valid",
    "gaussian_delta",
    "analytic_gaussian_sigma",
    "gaussian_eps",
    "laplace_scale",
    "gaussian_noise",
    "laplace_noise",
    "row_norms",
    "clip_l2",
    "clip_l1",
]


# --------------------------------------------------------------------------------------
# Classic Gaussian mechanism
# --------------------------------------------------------------------------------------

def classic_gaussian_c(*, delta: float) -> float:
    """Constant of the classic Gaussian mechanism, ``c = sqrt(2 ln(1.25/delta))``.

    Source: Dwork & Roth, "The Algorithmic Foundations of Differential Privacy" (2014),
    Thm A.1; used as ``c >= sqrt(2 ln(1.25/delta))`` in Wei et al. 2020 (TIFS), Sec. II-C,
    and in Li, Chang & Chi 2020, Sec. 2.2 (after eq. 4).  Example: delta = 0.01 gives
    ``sqrt(2 ln 125) = 3.10727...``.
    """
    delta = validate.open_unit("delta", delta)
    return math.sqrt(2.0 * math.log(1.25 / delta))


def classic_gaussian_valid(*, eps: float) -> bool:
    """Whether the classic bound's proof covers ``eps``: True iff ``eps < 1``.

    Dwork & Roth 2014 Thm A.1 and Wei et al. 2020 Sec. II-C state the bound for
    ``eps in (0, 1)`` only.
    """
    eps = validate.positive("eps", eps)
    return eps < 1.0


def classic_gaussian_sigma(*, eps: float, delta: float, sensitivity: float) -> float:
    """Classic Gaussian noise std ``sigma = c * sensitivity / eps``, ``c`` as above.

    Source: Dwork & Roth 2014, Thm A.1; Wei et al. 2020, Sec. II-C (``sigma >= c Ds/eps``)
    and Sec. III eq. 4-6 (``sigma_U = c L Ds_U / eps`` with ``Ds_U = 2C/m``).

    The proof covers only ``eps in (0, 1)`` (see :func:`classic_gaussian_valid`).  This
    function does *not* refuse ``eps >= 1``, because the reproduced papers use eps = 50-100
    and the notebooks must compute what they computed; but beyond eps = 1 the value is not
    a guarantee, and for large eps it is too small (the exact delta at this sigma exceeds
    the target: see :func:`gaussian_delta`).  Use :func:`analytic_gaussian_sigma` for a
    calibration that is exact at every ``eps > 0``.
    """
    eps = validate.positive("eps", eps)
    sensitivity = validate.positive("sensitivity", sensitivity)
    return classic_gaussian_c(delta=delta) * sensitivity / eps


# --------------------------------------------------------------------------------------
# Exact (analytic) Gaussian mechanism
# --------------------------------------------------------------------------------------

def _log_gaussian_delta(eps, sigma, sensitivity):
    """log delta(eps) of the Gaussian mechanism; numpy-vectorised, no validation.

    With ``u = Delta/(2 sigma)`` and ``v = eps sigma/Delta``:
    ``delta = Phi(u - v) - e^eps Phi(-u - v) = exp(a) (1 - exp(b - a))`` where
    ``a = log Phi(u - v)`` and ``b = eps + log Phi(-u - v)`` (b < a whenever sigma > 0),
    so nothing overflows even at eps = 100 or far in the tails.
    """
    eps = np.asarray(eps, dtype=np.float64)
    sigma = np.asarray(sigma, dtype=np.float64)
    u = sensitivity / (2.0 * sigma)
    v = eps * sigma / sensitivity
    a = special.log_ndtr(u - v)
    b = eps + special.log_ndtr(-u - v)
    with np.errstate(divide="ignore"):
        # min(.., 0) guards against b - a rounding to a tiny positive number.
        return a + np.log(-np.expm1(np.minimum(b - a, 0.0)))


def _meets(eps: float, sigma: float, sensitivity: float, delta: float) -> bool:
    """Whether :func:`gaussian_delta` (the same expression, rounded the same way) is <= delta.

    The inversions below solve in log space; exp(log delta) can round one ulp above the target
    even where the log is at or below it, so their final check is made on what gaussian_delta
    returns."""
    return float(np.exp(_log_gaussian_delta(np.asarray(float(eps)), np.asarray(float(sigma)),
                                            sensitivity))) <= delta


def _check_array(name: str, value, check) -> np.ndarray:
    """Apply a scalar ``validate`` helper to every element (it raises on the first bad one)."""
    if np.ndim(value) == 0:
        return np.asarray(check(name, value))
    return validate.array(name, value, lambda _, x: check(name, x))


def gaussian_delta(*, eps: ArrayLike, sigma: ArrayLike, sensitivity: float) -> ArrayLike:
    """Exact privacy profile of the Gaussian mechanism: the smallest delta for (eps, delta)-DP.

    Source: Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy:
    Analytical Calibration and Optimal Denoising", ICML 2018, Thm 8::

        delta(eps) = Phi(D/(2 sigma) - eps sigma/D) - e^eps Phi(-D/(2 sigma) - eps sigma/D)

    with ``D`` the l2 sensitivity and ``Phi`` the standard normal CDF.  Computed in log
    space (``scipy.special.log_ndtr``), so eps = 100 neither overflows nor cancels.

    ``eps`` (>= 0) and ``sigma`` (> 0) may be numpy arrays (broadcast together); the
    result is then an array, otherwise a float.
    """
    scalar = np.ndim(eps) == 0 and np.ndim(sigma) == 0
    eps_a = _check_array("eps", eps, validate.nonnegative)
    sigma_a = _check_array("sigma", sigma, validate.positive)
    sensitivity = validate.positive("sensitivity", sensitivity)
    out = np.exp(_log_gaussian_delta(eps_a, sigma_a, sensitivity))
    return float(out) if scalar else out


def analytic_gaussian_sigma(*, eps: float, delta: float, sensitivity: float,
                            tol: float = 1e-12) -> float:
    """Smallest sigma with ``gaussian_delta(eps=eps, sigma=sigma, sensitivity=sensitivity) <= delta``.

    Source: Balle & Wang 2018 (ICML), Thm 8 (exact profile) and their Sec. 4 "analytic
    Gaussian mechanism" (calibration by numerically inverting the profile); the same
    inversion as ``dp_accounting.get_sigma_gaussian``.  Valid for every ``eps > 0``, unlike
    :func:`classic_gaussian_sigma`.

    ``delta(sigma)`` decreases monotonically in sigma; Brent's method on ``log sigma``
    finds the root to relative precision ``tol``, and the result is then nudged upward (if
    needed) so that it never overshoots: the returned sigma always satisfies the target.
    """
    eps = validate.positive("eps", eps)
    delta = validate.open_unit("delta", delta)
    sensitivity = validate.positive("sensitivity", sensitivity)
    tol = validate.positive("tol", tol)
    log_target = math.log(delta)

    def gap(log_sigma: float) -> float:
        return float(_log_gaussian_delta(eps, math.exp(log_sigma), sensitivity)) - log_target

    hi = math.log(sensitivity)
    while gap(hi) > 0:
        hi += math.log(2.0)
    lo = hi
    while gap(lo) <= 0:
        lo -= math.log(2.0)
    log_sigma = optimize.brentq(gap, lo, hi, xtol=tol / 4, rtol=4 * np.finfo(float).eps)
    sigma = math.exp(log_sigma)
    while gap(math.log(sigma)) > 0 or not _meets(eps, sigma, sensitivity, delta):
        sigma *= 1.0 + tol  # never return a sigma that misses the target
    return sigma


def gaussian_eps(*, delta: float, sigma: float, sensitivity: float, tol: float = 1e-12) -> float:
    """Smallest eps for which the Gaussian mechanism with std ``sigma`` is (eps, delta)-DP.

    Source: Balle & Wang 2018 (ICML), Thm 8, inverted in eps (the profile decreases
    monotonically in eps); the same inversion as ``dp_accounting.get_epsilon_gaussian``.
    Returns 0.0 if ``delta(0) <= delta`` already.  The result is nudged upward (if needed)
    so that ``gaussian_delta(eps=result, sigma=sigma, sensitivity=sensitivity) <= delta`` always holds.
    """
    sigma = validate.positive("sigma", sigma)
    delta = validate.open_unit("delta", delta)
    sensitivity = validate.positive("sensitivity", sensitivity)
    tol = validate.positive("tol", tol)
    log_target = math.log(delta)

    def gap(eps: float) -> float:
        return float(_log_gaussian_delta(eps, sigma, sensitivity)) - log_target

    if gap(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while gap(hi) > 0:
        lo, hi = hi, 2.0 * hi
    eps = optimize.brentq(gap, lo, hi, xtol=tol, rtol=4 * np.finfo(float).eps)
    step = max(tol, 4 * np.finfo(float).eps * eps)
    while gap(eps) > 0 or not _meets(eps, sigma, sensitivity, delta):
        eps += step
    return eps


# --------------------------------------------------------------------------------------
# Laplace mechanism
# --------------------------------------------------------------------------------------

def laplace_scale(*, eps: float, sensitivity: float) -> float:
    """Laplace scale ``b = sensitivity / eps`` for (eps, 0)-DP with l1 sensitivity.

    Source: Dwork & Roth 2014, Def. 3.3 / Thm 3.6 (Laplace mechanism).
    """
    eps = validate.positive("eps", eps)
    sensitivity = validate.positive("sensitivity", sensitivity)
    return sensitivity / eps


# --------------------------------------------------------------------------------------
# Noise samplers (explicit generator, no global RNG)
# --------------------------------------------------------------------------------------

def _check_generator(generator) -> torch.Generator:
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator (got {type(generator).__name__}); "
            "the samplers never use the global RNG"
        )
    return generator


def _row_scale(name: str, value: Scale, shape: tuple, dtype, device) -> Union[float, torch.Tensor]:
    """Validate a float or a 1-D per-row tensor and return it ready to broadcast."""
    if isinstance(value, torch.Tensor) and value.ndim > 0:
        if value.ndim != 1 or len(shape) == 0 or value.shape[0] != shape[0]:
            raise ValueError(
                f"{name} has shape {tuple(value.shape)}: a tensor {name} must be 1-D with "
                f"one entry per row, i.e. shape ({shape[0] if shape else '?'},)"
            )
        for x in value.detach().cpu().tolist():
            validate.nonnegative(name, x)
        return value.to(dtype=dtype, device=device).reshape((-1,) + (1,) * (len(shape) - 1))
    if isinstance(value, torch.Tensor):
        value = value.item()
    return validate.nonnegative(name, value)


def _shape(shape) -> tuple:
    if isinstance(shape, int):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise ValueError(f"shape={shape!r} is out of range: shape must be an integer or a "
                         "sequence of integers >= 0") from None
    for i, s in enumerate(shape):
        validate.integer(f"shape[{i}]", s, 0)
    return shape


def gaussian_noise(shape: Sequence[int], *, sigma: Scale, generator: torch.Generator,
                   dtype=torch.float32) -> torch.Tensor:
    """Draw ``N(0, sigma^2)`` noise of ``shape`` from ``generator`` (on its device).

    ``sigma`` is a float, or a 1-D tensor of per-row stds broadcast over the leading dim
    (shape ``[K, D]`` with sigma ``[K]``: client k's row gets std ``sigma[k]``).  Rows with
    sigma == 0 come back as exact zeros.  The generator is advanced by the same amount
    whatever sigma is, so switching noise off does not shift later draws.
    Source: the Gaussian mechanism of Wei et al. 2020, Sec. II-C / Algorithm 1.
    """
    generator = _check_generator(generator)
    shape = _shape(shape)
    scale = _row_scale("sigma", sigma, shape, dtype, generator.device)
    z = torch.randn(shape, generator=generator, dtype=dtype, device=generator.device)
    if isinstance(scale, float):
        return torch.zeros_like(z) if scale == 0.0 else z * scale
    return torch.where(scale == 0, torch.zeros((), dtype=dtype, device=z.device), z * scale)


def laplace_noise(shape: Sequence[int], *, scale: Scale, generator: torch.Generator,
                  dtype=torch.float32) -> torch.Tensor:
    """Draw ``Lap(0, scale)`` noise of ``shape`` from ``generator`` by the inverse CDF.

    ``x = -scale * sign(u) * log(1 - 2|u|)`` with ``u`` uniform on (-1/2, 1/2), drawn as
    ``u = (k + 1/2) / 2^52 - 1/2`` for an integer ``k`` uniform in ``[0, 2^52)`` (float64,
    exact, never 0 nor +-1/2, exactly symmetric), so no draw is infinite; the result is
    then cast to ``dtype``.  ``torch.distributions.Laplace`` is not used because it draws
    from the global RNG.  ``scale`` is a float or a 1-D per-row tensor, as in
    :func:`gaussian_noise`; scale 0 gives exact zeros.  The generator is advanced by the same
    amount whatever ``scale`` is, so switching noise off does not shift later draws.
    Source: Dwork & Roth 2014 Def. 3.3; Zhou et al. Theorem 1 (``Lap(0, s I_p)``).
    """
    generator = _check_generator(generator)
    shape = _shape(shape)
    s = _row_scale("scale", scale, shape, torch.float64, generator.device)
    k = torch.randint(0, 2**52, shape, generator=generator, dtype=torch.int64,
                      device=generator.device)
    u = (k.to(torch.float64) + 0.5) * 2.0**-52 - 0.5
    x = -torch.sign(u) * torch.log1p(-2.0 * u.abs())
    if isinstance(s, float):
        return torch.zeros(shape, dtype=dtype, device=x.device) if s == 0.0 else (x * s).to(dtype)
    return (x * s).to(dtype)


# --------------------------------------------------------------------------------------
# Clipping
# --------------------------------------------------------------------------------------

def row_norms(x: torch.Tensor, *, ord: int = 2) -> torch.Tensor:
    """l1 or l2 norm of each row (everything after the leading dim); a 0-d tensor for 1-D x."""
    validate.choice("ord", ord, (1, 2))
    if x.ndim == 0:
        raise ValueError("x has shape (): x must be 1-D (one vector) or [K, ...] (K rows)")
    if x.ndim == 1:
        return torch.linalg.vector_norm(x, ord=ord)
    return torch.linalg.vector_norm(x.reshape(x.shape[0], -1), ord=ord, dim=1)


def _clip(x: torch.Tensor, bound: float, ord: int) -> torch.Tensor:
    bound = validate.positive("bound", bound)
    norms = row_norms(x, ord=ord)
    factor = torch.clamp(norms / bound, min=1.0)
    if x.ndim > 1:
        factor = factor.reshape((-1,) + (1,) * (x.ndim - 1))
    return x / factor


def clip_l2(x: torch.Tensor, *, bound: float) -> torch.Tensor:
    """Row-wise ``x / max(1, ||x||_2 / bound)``: rows longer than ``bound`` scaled onto it.

    ``x`` is ``[K, D]`` (or ``[K, ...]``: each leading-dim slice is one row) or 1-D (one
    vector).  Returns only the clipped tensor; use :func:`row_norms` for the norms.
    Source: Wei et al. 2020, Algorithm 1 (``w / max(1, ||w|| / C)``); Abadi et al. 2016
    Algorithm 1; Zhou et al. Sec. VII (l2 clip 10 for the Gaussian mechanism).
    """
    return _clip(x, bound, 2)


def clip_l1(x: torch.Tensor, *, bound: float) -> torch.Tensor:
    """Row-wise ``x / max(1, ||x||_1 / bound)``, as :func:`clip_l2` with the l1 norm.

    Source: Zhou et al., Assumption 1 and Sec. VII (l1 clip ``xi_1`` = 300 / 200 for the
    Laplace mechanism, whose sensitivity is in l1).
    """
    return _clip(x, bound, 1)
