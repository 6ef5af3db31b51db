"""Closed-form results of Wei et al. 2020 (NbAFL, IEEE TIFS 15) as pure functions: the noise of
Sec. III-A and Theorem 1 (eq. (5)-(10), (16)), Lemma 4's K-random calibration (eq. (21)-(22) with
conditions (69) and (73)), the convergence bounds of Theorems 2 and 3 (eq. (17)-(20), (23)-(25))
with their optima, and the privacy the classic calibration really buys.  Every public function takes
keyword-only arguments named after the paper's symbols (``sigma_downlink(C=20, m=1200, N=50, T=25,
L=1, eps=60, c=c)``), names the equation it implements and its validity range, and checks its
arguments with :mod:`fldp.validate`.  The printed forms are the defaults; what re-deriving the paper
found (the sign of kappa, 2C = 1, the moments of the noise in R^d, the alphas of Theorem 3: items U
and D1-D7) is told in the chapter ``notebooks/wei2020/03_convergence`` and selected by options
(``lambda1=``, ``moments=``, ``alphas=``, ``kappa_sign=``, ``scale=``), each documented where it is
taken.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fldp import validate
from fldp.validate import choice, integer, open_unit, positive, probability

try:  # the shared implementation, when fldp.mechanisms exists
    from fldp.mechanisms import classic_gaussian_c as _mechanisms_c
except ImportError:  # pragma: no cover - depends on the rest of the package
    _mechanisms_c = None

__all__ = [
    "BoundOutsideAssumptions", "gaussian_c", "half_normal_mean",
    "uplink_sensitivity", "sigma_uplink", "downlink_sensitivity", "sigma_downlink",
    "sigma_aggregate", "lambdas", "Theorem2Constants", "theorem2_constants", "theorem2_P",
    "theorem2_noise_terms", "theorem2_bound", "theorem2_bound_general", "theorem2_best_contraction",
    "theorem2_second_derivative", "theorem2_second_derivative_fd", "theorem2_optimal_T",
    "krandom_b", "krandom_gamma", "krandom_T_min", "krandom_conditions", "sigma_downlink_krandom",
    "Theorem3Constants", "theorem3_alpha2", "theorem3_Q", "theorem3_mu_min", "theorem3_constants",
    "theorem3_bound", "theorem3_optimal_K", "uplink_exposures_privacy",
    # the re-derived forms (module docstring, D1-D7)
    "noise_moments", "theorem2_bound_derived", "Remark4Optimum", "theorem2_optimal_T_derived", "remark4_C_max",
    "krandom_K_min", "theorem3_C_max", "OptimalK",
]


class BoundOutsideAssumptions(ValueError):
    """A convergence bound was asked for outside the range where its proof holds."""


# ---------------------------------------------------------------- small helpers
def _pos(name, x):
    """validate.positive for a scalar or every element of an array; returns float/array."""
    if np.ndim(x) == 0:
        return positive(name, x)
    return validate.array(name, x, lambda _, v: positive(name, v))  # the shared message, named name


def _out(x):
    """0-d arrays and numpy scalars back to Python floats/bools."""
    return np.asarray(x).item() if np.ndim(x) == 0 else x


def _real(name, x):
    return validate.real(name, x)


def _check_contraction(name, value, how):
    if not 0 < value < 1:
        raise BoundOutsideAssumptions(
            f"{name}={value!r} is outside (0, 1): the bound assumes 0 < {name} < 1 "
            f"(a contraction per round); {how}")
    return value


def gaussian_c(*, delta: float) -> float:
    """Wei et al. 2020, Section II-C: Gaussian-mechanism constant c = sqrt(2 ln(1.25/delta))
    (Dwork & Roth 2014, Thm A.1).

    Valid for delta in (0, 1); the paper states the mechanism for eps in (0, 1).
    """
    delta = open_unit("delta", delta)
    if _mechanisms_c is not None:
        return float(_mechanisms_c(delta=delta))
    return math.sqrt(2.0 * math.log(1.25 / delta))


def half_normal_mean(*, sigma):
    """Wei et al. 2020, eq. (61) and (100): E|n| = sigma sqrt(2/pi) for n ~ N(0, sigma^2).

    Right for one coordinate (d = 1) only: (61)/(100) use it for the norm of the whole noise
    vector.  The mean norm in R^d is :func:`noise_moments` (D2 in the module docstring).
    """
    return _out(_pos("sigma", sigma) * math.sqrt(2.0 / math.pi))


def _chi_mean(d):
    """E||z|| for z ~ N(0, I_d): sqrt(2) Gamma((d+1)/2) / Gamma(d/2), by lgamma (no overflow)."""
    return math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2) - math.lgamma(d / 2))


def noise_moments(*, sigma, d):
    """Wei et al. 2020, eq. (61) and (100) corrected (D2): (E||n||, E||n||^2) for n ~ N(0, sigma^2 I_d).

    E||n|| = sigma sqrt(2) Gamma((d+1)/2)/Gamma(d/2) (the chi distribution's mean, < sigma sqrt(d),
    about sigma sqrt(d)(1 - 1/(4d))) and E||n||^2 = d sigma^2, where sigma is the per-coordinate
    std (sigma_A of eq. (16)) and d the number of model coordinates.  d = 1 gives the
    half-normal sigma sqrt(2/pi) that (61) uses.  sigma may be an array.
    """
    d = integer("d", d, 1)
    sigma = _pos("sigma", sigma)
    return _out(sigma * _chi_mean(d)), _out(d * np.square(sigma))


# ------------------------------------------------------- Section III: noise levels
def uplink_sensitivity(*, C: float, m: float) -> float:
    """Wei et al. 2020, eq. (5)-(6): Ds_U = 2C/m (clipping bound C, smallest local dataset m)."""
    return 2.0 * positive("C", C) / positive("m", m)


def sigma_uplink(*, C, m, eps, L=1, c=None, delta=None):
    """Wei et al. 2020, Section III-A (after eq. (6)): sigma_U = c L Ds_U / eps = 2cLC/(m eps).

    L is the number of uplink exposures per client (L <= T), *not* the number of rounds T.
    Give exactly one of ``c`` and ``delta`` (then c = sqrt(2 ln(1.25/delta))); both or neither
    raise ValueError.  The Gaussian mechanism this rests on is proven for eps in (0, 1); the
    paper uses it with eps up to 100 (composed linearly over L exposures).
    """
    if c is None and delta is None:
        raise ValueError("sigma_uplink needs c or delta: give exactly one of c and delta "
                         "(c = sqrt(2 ln(1.25/delta)))")
    if c is not None and delta is not None:
        raise ValueError(f"sigma_uplink takes exactly one of c and delta, got both (c={c!r}, "
                         f"delta={delta!r}): pass c, or delta to use c = sqrt(2 ln(1.25/delta))")
    if c is None:
        c = gaussian_c(delta=delta)
    return positive("c", c) * positive("L", L) * uplink_sensitivity(C=C, m=m) / positive("eps", eps)


def downlink_sensitivity(*, C: float, m: float, p_i: float) -> float:
    """Wei et al. 2020, Lemma 1, eq. (8): Ds_D^{D_i} = 2 C p_i / m, ``p_i = |D_i|/|D|`` in [0, 1]."""
    return 2.0 * positive("C", C) * probability("p_i", p_i) / positive("m", m)


def sigma_downlink(*, C, m, N, T, L, eps, c):
    """Wei et al. 2020, Theorem 1, eq. (10): server noise for T aggregations (T may be an array).

    sigma_D = 2cC sqrt(T^2 - L^2 N)/(m N eps) if T > L sqrt(N), else 0.  Assumes p_i = 1/N
    (equal local datasets) and L <= T.
    """
    C, m, eps, c, L = (positive(n, v) for n, v in (("C", C), ("m", m), ("eps", eps), ("c", c), ("L", L)))
    N = integer("N", N, 1)
    T = _pos("T", T)
    rad = np.maximum(np.asarray(T, dtype=float) ** 2 - L**2 * N, 0.0)
    out = np.where(T > L * math.sqrt(N), 2 * c * C * np.sqrt(rad) / (m * N * eps), 0.0)
    return _out(out)


def sigma_aggregate(*, C, m, N, T, L, eps, c):
    """Wei et al. 2020, eq. (16): std of the total noise n = sum p_i n_i + n_D per coordinate.

    sigma_A = c T Ds_D / eps with Ds_D = 2C/(mN) if T > L sqrt(N); c L Ds_U/(sqrt(N) eps)
    otherwise.  Equals sqrt(sigma_D^2 + sigma_U^2/N) (Lemma 3 text); continuous at T = L sqrt(N).
    """
    C, m, eps, c, L = (positive(n, v) for n, v in (("C", C), ("m", m), ("eps", eps), ("c", c), ("L", L)))
    N = integer("N", N, 1)
    T = _pos("T", T)
    above = c * np.asarray(T, dtype=float) * (2 * C / (m * N)) / eps
    below = c * L * (2 * C / m) / (math.sqrt(N) * eps)
    return _out(np.where(T > L * math.sqrt(N), above, below))


# ------------------------------------------------------- Section IV: Theorem 2
LAMBDA1 = ("paper", "derived", "independent")


def lambdas(*, rho, B, mu, lambda1="paper"):
    """Wei et al. 2020, Lemma 3, eq. (13)-(14) (exact local solves, theta = 0, mu_bar = mu).

    Returns (lambda0, lambda1, lambda2) = (rho/2, lambda1, -1/mu + rho B/mu^2 + rho B^2/(2 mu^2));
    lambda2 < 0 iff mu > rho B (1 + B/2).  ``lambda1``: ``"paper"`` the printed (13),
    1/mu + rho B/mu; ``"derived"`` 1 + rho B/mu, what the step from (45) to (53) gives (the
    noise enters (45) with coefficient 1, not 1/mu: D1); ``"independent"`` 0, since
    E[grad F^T n] = 0 for zero-mean noise independent of the model.  Every lambda1 >= 0 gives
    a valid bound; only "derived" and "independent" are derived.
    """
    rho, B, mu = positive("rho", rho), positive("B", B), positive("mu", mu)
    lam1 = {"paper": 1 / mu + rho * B / mu, "derived": 1 + rho * B / mu,
            "independent": 0.0}[choice("lambda1", lambda1, LAMBDA1)]
    return (rho / 2, lam1, -1 / mu + rho * B / mu**2 + rho * B**2 / (2 * mu**2))


def _theorem2_P(rho, B, mu, l, lambda1="paper"):
    """(P, lambda0, lambda1, lambda2) of Theorem 2, raising BoundOutsideAssumptions unless 0 < P < 1."""
    lam0, lam1, lam2 = lambdas(rho=rho, B=B, mu=mu, lambda1=lambda1)
    P = 1 + 2 * positive("l", l) * lam2
    _check_contraction("P", P, f"needs -1/(2 l) < lambda2={lam2:.4g} < 0, i.e. mu > rho*B*(1+B/2)"
                       f" = {rho * B * (1 + B / 2):.4g} and mu large enough relative to l")
    return P, lam0, lam1, lam2


def _derived_inputs(moments, scale, **given):
    """Check the arguments of a ``moments=`` choice: ``"derived"`` needs every one of ``given``
    (d, C, L, ...) and refuses ``scale``; the printed forms refuse them (they would be ignored)."""
    if moments == "derived":
        if scale is not None:
            raise ValueError(f"scale={scale!r} is not used with moments='derived': the derived form takes the "
                             "clipping bound C itself (no single scale reproduces it: kappa1 grows with "
                             "2C sqrt(pi d/(2N)), kappa0 with 4C^2 d/N)")
        for name, v in given.items():
            if v is None:
                raise ValueError(f"{name}=None is out of range: moments='derived' needs {name}"
                                 + (" (the number of model coordinates)" if name == "d" else ""))
        return {n: (integer(n, v, 1) if n == "d" else positive(n, v)) for n, v in given.items()}
    for name, v in given.items():
        if v is not None:
            raise ValueError(f"{name}={v!r} is used only with moments='derived' (moments={moments!r} "
                             "has no such argument" + ("; give scale=2C to restore the clipping bound)"
                                                       if name == "C" else ")"))
    return {}


class Theorem2Constants(NamedTuple):
    P: float
    kappa0: float
    kappa1: float


def theorem2_constants(*, rho, beta, l, B, mu, c, m, N, kappa_sign="paper", scale=None, moments="eq61", d=None,
                       C=None, lambda1="paper"):
    """Wei et al. 2020, Theorem 2, eq. (18)-(19): P = 1 + 2 l lambda2,
    kappa1 = lambda1 beta c sqrt(2/(N pi)) / (m (1-P)), kappa0 = lambda0 c^2 / (m^2 (1-P) N).

    ``kappa_sign="appendix"`` uses Appendix E's (P-1) instead of (1-P) (a typo: see module
    docstring).  ``scale`` (default 1) = 2C restores the clipping bound the paper normalises to
    2C = 1 in (62): kappa1 is multiplied by scale, kappa0 by scale^2.  That still counts N
    clients where (61) needs the d model coordinates.  ``moments="derived"`` (D2) takes the
    moments of n in R^d with Ds_D = 2C/(mN): kappa1 = lambda1 beta 2cC chi_d/(mN(1-P)),
    kappa0 = lambda0 4c^2 C^2 d/(m^2 N^2 (1-P)), chi_d = E||z||, z ~ N(0, I_d); it needs ``d``
    and ``C`` and refuses ``scale``.  ``lambda1`` picks Lemma 3's lambda1 (:func:`lambdas`).
    Valid only for 0 < P < 1, i.e. -1/(2l) < lambda2 < 0; raises BoundOutsideAssumptions otherwise.
    """
    beta, l, c, m = positive("beta", beta), positive("l", l), positive("c", c), positive("m", m)
    N = integer("N", N, 1)
    moments = choice("moments", moments, ("eq61", "derived"))
    sign = {"paper": 1.0, "appendix": -1.0}[choice("kappa_sign", kappa_sign, ("paper", "appendix"))]
    extra = _derived_inputs(moments, scale, d=d, C=C)
    P, lam0, lam1, _ = _theorem2_P(rho, B, mu, l, lambda1)
    denom = sign * (1 - P)
    if moments == "derived":
        d, C = extra["d"], extra["C"]
        kappa1 = lam1 * beta * 2 * c * C * _chi_mean(d) / (m * N * denom)
        kappa0 = lam0 * 4 * c**2 * C**2 * d / (m**2 * N**2 * denom)
        return Theorem2Constants(P, kappa0, kappa1)
    scale = 1.0 if scale is None else positive("scale", scale)
    kappa1 = scale * lam1 * beta * c / (m * denom) * math.sqrt(2 / (N * math.pi))
    kappa0 = scale**2 * lam0 * c**2 / (m**2 * denom * N)
    return Theorem2Constants(P, kappa0, kappa1)


def theorem2_P(*, rho, B, mu, l):
    """Wei et al. 2020, Theorem 2, eq. (18): P = 1 + 2 l lambda2, lambda2 of Lemma 3, eq. (14).

    Returned for any value (no range check), e.g. to show where 0 < P < 1 fails;
    :func:`theorem2_constants` computes the same P and raises outside (0, 1).
    """
    return 1 + 2 * positive("l", l) * lambdas(rho=rho, B=B, mu=mu)[2]


def theorem2_best_contraction(*, rho, B, l):
    """Wei et al. 2020, eq. (14) and (18): the smallest P = 1 + 2 l lambda2 any mu can give.

    lambda2(mu) = (rho B (1 + B/2) - mu) / mu^2 is smallest at mu* = 2 rho B (1 + B/2), where
    it is -1 / (4 rho B (1 + B/2)); so P >= P* = 1 - l / (2 rho B (1 + B/2)) for every mu.
    Returns (mu*, P*).  Since the bound (17) is P^T Theta + n(T) (1 - P^T), a convex mix of
    the initial gap Theta and the noise term n(T), it cannot fall below
    min(Theta, n(T)) + P*^T (Theta - n(T))^+: when P*^T is close to 1 no mu makes it informative.
    (If P* <= 0, mu* lies outside Theorem 2's range 0 < P < 1.)
    """
    a = positive("rho", rho) * positive("B", B) * (1 + B / 2)
    return 2 * a, 1 - positive("l", l) / (2 * a)


def theorem2_noise_terms(*, T, eps, c, m, N, scale=None, moments="eq61", d=None, C=None, L=None):
    """Wei et al. 2020, eq. (61): (E||n||, E||n||^2) = (sigma_A sqrt(2N/pi), sigma_A^2 N)
    with sigma_A = c T Ds_D / eps (the T > L sqrt(N) branch of (16)).

    The paper's (62) "sets Ds_D = 1/N"; its kappas in fact correspond to Ds_D = 1/(mN),
    i.e. 2C = 1.  Here Ds_D = scale/(mN) (scale default 1): scale=1 reproduces (18)-(19),
    scale=2C is the actual sensitivity of Theorem 1.  ``moments="derived"`` (D2, D3): sigma_A of
    eq. (16) with both branches (:func:`sigma_aggregate`; needs ``C`` and ``L``) and the
    moments of n in R^d (:func:`noise_moments`; needs ``d``); it refuses ``scale``.  T may be an array.
    """
    N = integer("N", N, 1)
    moments = choice("moments", moments, ("eq61", "derived"))
    extra = _derived_inputs(moments, scale, d=d, C=C, L=L)
    if moments == "derived":
        sigma_A = sigma_aggregate(C=extra["C"], m=m, N=N, T=T, L=extra["L"], eps=eps, c=c)
        return noise_moments(sigma=sigma_A, d=extra["d"])
    scale = 1.0 if scale is None else positive("scale", scale)
    sigma_A = positive("c", c) * _pos("T", T) * (scale / (positive("m", m) * N)) / positive("eps", eps)
    return _out(sigma_A * math.sqrt(2 * N / math.pi)), _out(sigma_A**2 * N)


def theorem2_bound(*, T, eps, Theta, P, kappa0, kappa1):
    """Wei et al. 2020, Theorem 2, eq. (17): P^T Theta + (kappa1 T/eps + kappa0 T^2/eps^2)(1 - P^T).

    Bound on E{F(w~^(T)) - F(w*)}; T may be an array.  Derived for T > L sqrt(N) (Appendix E
    leaves T <= L sqrt(N) aside), under Assumption 1 and 0 < P < 1 (raises otherwise).
    """
    T, eps, Theta = _pos("T", T), positive("eps", eps), positive("Theta", Theta)
    _check_contraction("P", _real("P", P), "choose mu large enough that lambda2 < 0")
    k0, k1 = _real("kappa0", kappa0), _real("kappa1", kappa1)
    PT = np.power(P, T)
    return _out(PT * Theta + (k1 * T / eps + k0 * np.square(T) / eps**2) * (1 - PT))


def theorem2_bound_general(*, T, eps, Theta, rho, beta, l, B, mu, c, m, N, C, kappa_sign="paper"):
    """Wei et al. 2020, Theorem 2, eq. (17) with the clipping bound restored (scale = 2C in (61)-(62))."""
    k = theorem2_constants(rho=rho, beta=beta, l=l, B=B, mu=mu, c=c, m=m, N=N, kappa_sign=kappa_sign,
                           scale=2 * positive("C", C))
    return theorem2_bound(T=T, eps=eps, Theta=Theta, **k._asdict())


def theorem2_second_derivative(*, T, eps, Theta, P, kappa0, kappa1):
    """Wei et al. 2020, eq. (20): d^2h/dT^2 of the RHS h(T) of (17), T treated as continuous.

    (Theta - kappa1 T/eps - kappa0 T^2/eps^2) P^T ln^2 P - 2 (kappa1/eps + 2 kappa0 T/eps^2)
    P^T ln P + 2 kappa0/eps^2 (1 - P^T).  Checked exact against finite differences of (17).
    Valid for 0 < P < 1.
    """
    T, eps, Theta = _pos("T", T), positive("eps", eps), positive("Theta", Theta)
    _check_contraction("P", _real("P", P), "choose mu large enough that lambda2 < 0")
    k0, k1 = _real("kappa0", kappa0), _real("kappa1", kappa1)
    PT, lnP = np.power(P, T), math.log(P)
    return _out((Theta - k1 * T / eps - k0 * np.square(T) / eps**2) * PT * lnP**2
                - 2 * (k1 / eps + 2 * k0 * T / eps**2) * PT * lnP + 2 * k0 / eps**2 * (1 - PT))


def theorem2_second_derivative_fd(*, T, eps, Theta, P, kappa0, kappa1, h=1e-3):
    """Wei et al. 2020, eq. (20) cross-checked: central finite-difference second derivative of (17)."""
    f = lambda t: theorem2_bound(T=t, eps=eps, Theta=Theta, P=P, kappa0=kappa0, kappa1=kappa1)  # noqa: E731
    T, h = _pos("T", T), positive("h", h)
    if np.any(np.asarray(T) <= h):
        raise ValueError(f"h={h!r} is out of range: h must be < T={T!r} (the bound (17) is taken at T - h > 0)")
    return _out((f(T + h) - 2 * np.asarray(f(T)) + f(T - h)) / h**2)


def theorem2_optimal_T(*, eps, Theta, P, kappa0, kappa1, T_max):
    """Wei et al. 2020, Remark 4: integer T* in [1, T_max] minimising the Theorem 2 bound (17).

    Returns (T*, bound at T*).  The bound is derived for T > L sqrt(N); callers wanting that
    regime only should read T* against it.
    """
    T_max = integer("T_max", T_max, 1)
    Ts = np.arange(1, T_max + 1, dtype=float)
    vals = theorem2_bound(T=Ts, eps=eps, Theta=Theta, P=P, kappa0=kappa0, kappa1=kappa1)
    i = int(np.argmin(vals))
    return int(Ts[i]), float(vals[i])


def theorem2_bound_derived(*, T, eps, Theta, rho, beta, l, B, mu, c, m, N, C, L, d, lambda1="derived"):
    """Wei et al. 2020, Theorem 2 re-derived (D2, D3): the bound of recursion (60) for every T,

    h(T) = P^T Theta + (1 - P^T) S(T),  S(T) = [lambda1 beta E||n|| + lambda0 E||n||^2]/(1 - P),

    with E||n|| = chi_d sigma_A(T), E||n||^2 = d sigma_A(T)^2 (:func:`noise_moments`) and sigma_A
    the piecewise eq. (16): c L Ds_U/(sqrt(N) eps) for T <= L sqrt(N), c T Ds_D/eps above it
    (:func:`sigma_aggregate`).  For T > L sqrt(N) it is (17) with the kappas of
    ``theorem2_constants(moments="derived")``.  ``lambda1`` as in :func:`lambdas` (default:
    the paper's own route, 1 + rho B/mu).  Needs 0 < P < 1 (raises BoundOutsideAssumptions
    otherwise) and, as the proof, inactive clipping (U).  T may be an array.
    """
    Theta, beta = positive("Theta", Theta), positive("beta", beta)
    P, lam0, lam1, _ = _theorem2_P(rho, B, mu, l, lambda1)
    e1, e2 = theorem2_noise_terms(T=T, eps=eps, c=c, m=m, N=N, moments="derived", d=d, C=C, L=L)
    PT = np.power(P, np.asarray(T, dtype=float))
    return _out(PT * Theta + (1 - PT) * (lam1 * beta * np.asarray(e1) + lam0 * np.asarray(e2)) / (1 - P))


class Remark4Optimum(NamedTuple):
    T_star: int
    bound: float
    S0: float
    informative: bool


def theorem2_optimal_T_derived(*, eps, Theta, rho, beta, l, B, mu, c, m, N, C, L, d, T_max, lambda1="derived"):
    """Wei et al. 2020, Remark 4 on the re-derived Theorem 2 bound (D3): the integer T* in
    [1, T_max] minimising :func:`theorem2_bound_derived`.

    Returns ``(T_star, bound, S0, informative)``: S0 is the noise level S(T) for T <= L sqrt(N)
    (constant there), and ``informative = S0 < Theta``.  Since h(T) = Theta + (1 - P^T)(S - Theta)
    and S(T) is non-decreasing: if S0 >= Theta, h is non-decreasing from T = 1 and >= Theta
    everywhere (no optimum worth the name: T* = 1, the bound vacuous); if S0 < Theta, h falls
    on [1, L sqrt(N)] and T* >= L sqrt(N), inside the range where (17) is derived (for
    L sqrt(N) >= 1, i.e. L >= 1).
    """
    T_max = integer("T_max", T_max, 1)
    Ts = np.arange(1, T_max + 1, dtype=float)
    kw = dict(eps=eps, Theta=Theta, rho=rho, beta=beta, l=l, B=B, mu=mu, c=c, m=m, N=N, C=C, L=L, d=d,
              lambda1=lambda1)
    vals = np.asarray(theorem2_bound_derived(T=Ts, **kw))
    i = int(np.argmin(vals))
    P, lam0, lam1, _ = _theorem2_P(rho, B, mu, l, lambda1)
    e1, e2 = noise_moments(sigma=sigma_uplink(C=C, m=m, eps=eps, L=L, c=c) / math.sqrt(N), d=d)  # (16), T <= L sqrt(N)
    S0 = (lam1 * positive("beta", beta) * e1 + lam0 * e2) / (1 - P)
    return Remark4Optimum(int(Ts[i]), float(vals[i]), float(S0), bool(S0 < Theta))


def _noise_root(*, a, q, g):
    """The positive root u of a u + q u^2 = g (a, q >= 0, g > 0), written 2 g/(a + sqrt(a^2 + 4 q g))
    so that it stays accurate when q u^2 is tiny: the largest per-coordinate noise std u whose
    noise term a u + q u^2 (linear and quadratic moments) stays below g."""
    return 2 * g / (a + math.sqrt(a * a + 4 * q * g))


def remark4_C_max(*, eps, Theta, rho, beta, l, B, mu, c, m, N, L, d, lambda1="derived"):
    """Wei et al. 2020, Remark 4 on the re-derived Theorem 2 bound (D3): the largest clipping
    bound C for which the bound has an informative optimum over T.

    That holds iff S0 < Theta (:func:`theorem2_optimal_T_derived`), i.e. iff
    lambda1 beta chi_d u + lambda0 d u^2 < (1 - P) Theta with u = sigma_U/sqrt(N) =
    2cLC/(m sqrt(N) eps), so iff C < C_max = (m sqrt(N) eps/(2cL)) u_max with
    u_max = [-lambda1 beta chi_d + sqrt(lambda1^2 beta^2 chi_d^2 + 4 lambda0 d (1-P) Theta)]/(2 lambda0 d)
    (computed as 2 g/(a + sqrt(a^2 + 4 lambda0 d g)), g = (1-P) Theta, a = lambda1 beta chi_d).
    """
    eps, Theta, beta = positive("eps", eps), positive("Theta", Theta), positive("beta", beta)
    c, m, L = positive("c", c), positive("m", m), positive("L", L)
    N, d = integer("N", N, 1), integer("d", d, 1)
    P, lam0, lam1, _ = _theorem2_P(rho, B, mu, l, lambda1)
    u_max = _noise_root(a=lam1 * beta * _chi_mean(d), q=lam0 * d, g=(1 - P) * Theta)
    return m * math.sqrt(N) * eps / (2 * c * L) * u_max


# ------------------------------------------------------- Section V: K-random
def _q(N, K):
    N = integer("N", N, 1)
    K = integer("K", K, 1, N, why="K <= N")
    return N, K, K / N


def _ln_b_arg(eps, T, q):
    """ln(1 - N/K + (N/K) e^{-eps/T}) = ln(1 + expm1(-eps/T)/q); nan where the argument <= 0."""
    x = eps / np.asarray(T, dtype=float)
    if q == 1.0:
        return -x
    y = np.expm1(-x) / q
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(y > -1, np.log1p(np.maximum(y, -1)), np.nan)


def krandom_b(*, eps, T, N, K):
    """Wei et al. 2020, Lemma 4, eq. (22)/(67): b = -(T/eps) ln(1 - N/K + (N/K) e^{-eps/T}).

    Defined only when the log argument is > 0, i.e. eq. (69): eps < -T ln(1 - K/N)
    (always true for K = N, where b = 1).  Raises BoundOutsideAssumptions (a ValueError)
    otherwise.  T may be an array.
    """
    eps, T = positive("eps", eps), _pos("T", T)
    N, K, q = _q(N, K)
    ln_arg = _ln_b_arg(eps, T, q)
    if np.isnan(ln_arg).any():
        Tmin = krandom_T_min(eps=eps, N=N, K=K, condition="eq69")
        raise BoundOutsideAssumptions(
            f"b is undefined: 1 - N/K + (N/K) exp(-eps/T) <= 0 for eps={eps}, N={N}, K={K}, "
            f"T={T!r}; eq. (69) needs eps < -T ln(1 - K/N), i.e. T > {Tmin:.4g}")
    return _out(-(np.asarray(T, dtype=float) / eps) * ln_arg)


def krandom_gamma(*, eps, L, N, K):
    """Wei et al. 2020, Lemma 4, eq. (22)/(77): gamma = -ln(1 - K/N + (K/N) e^{-eps/(L sqrt(K))}).

    Defined for every eps > 0 and 1 <= K <= N; K = N gives gamma = eps/(L sqrt(N)).
    """
    eps, L = positive("eps", eps), positive("L", L)
    N, K, q = _q(N, K)
    y = eps / (L * math.sqrt(K))
    return y if q == 1.0 else -math.log1p(q * math.expm1(-y))


def krandom_T_min(*, eps, N, K, condition):
    """Wei et al. 2020, Appendix F: the T above which a condition of Lemma 4 holds.

    ``condition="eq69"``: eq. (69), eps < -T ln(1 - K/N) (b of eq. (22) defined), holds iff
    T > eps / -ln(1 - K/N); 0.0 for K = N, where it holds for every T.
    ``condition="eq73"``: eq. (73), eps < -T ln(1 - q + q/e) with q = K/N (the range in which
    (72) c^2 >= 2 ln(1.25/delta) is proven), holds iff T > eps / -ln(1 - q + q/e); eps for K = N.
    """
    eps = positive("eps", eps)
    N, K, q = _q(N, K)
    if choice("condition", condition, ("eq69", "eq73")) == "eq69":
        return eps / -math.log1p(-q) if K < N else 0.0
    return eps / -math.log(1 - q + q / math.e)


def krandom_K_min(*, eps, T, N):
    """Wei et al. 2020, Lemma 4, eq. (69) solved for K: eps < -T ln(1 - K/N) holds iff
    K > K_69 = N (1 - e^{-eps/T}) (b of eq. (22) is defined above it; K = N always qualifies).

    Returns K_69 as a float (compare integers K with it).  Below K_69, eq. (21) selects
    sigma_D = 0: only the uplink noise sigma_U/sqrt(K) is added, which grows as K falls, so the
    re-derived Theorem 3 bound (D4) has its kink at K_69.
    """
    eps, T = positive("eps", eps), positive("T", T)
    return integer("N", N, 1) * -math.expm1(-eps / T)


def krandom_conditions(*, eps, T, N, K, L):
    """Wei et al. 2020, Appendix F: the validity conditions of Lemma 4 at one (eps, T, N, K, L).

    'eq69': eps < -T ln(1-q) (b defined; true for K = N, where ln(1-q) = -inf);
    'eq73': eps < -T ln(1 - q + q/e); 'b_eps_over_T_in_(0,1)': 0 < b eps/T < 1, the range in
    which (72) c^2 >= 2 ln(1.25/delta) is proven; 'eq21_switch': T > eps/gamma;
    'eq75_switch': T > b L sqrt(K) (None when b is undefined).
    """
    eps, T, L = positive("eps", eps), positive("T", T), positive("L", L)
    N, K, q = _q(N, K)
    eq69 = q == 1.0 or eps < -T * math.log1p(-q)
    b = krandom_b(eps=eps, T=T, N=N, K=K) if eq69 else None
    return {
        "eq69": bool(eq69),
        "eq73": bool(eps < -T * math.log(1 - q + q / math.e)),
        "b_eps_over_T_in_(0,1)": bool(b is not None and 0 < b * eps / T < 1),
        "eq21_switch": bool(T > eps / krandom_gamma(eps=eps, L=L, N=N, K=K)),
        "eq75_switch": None if b is None else bool(T > b * L * math.sqrt(K)),
    }


def sigma_downlink_krandom(*, C, m, N, K, T, L, eps, c, switch="eq21", on_undefined_b="raise"):
    """Wei et al. 2020, Lemma 4, eq. (21) (= (75)-(76)): server noise under K-random scheduling.

    sigma_D = 2cC sqrt(T^2/b^2 - L^2 K)/(m K eps) where the switch holds, else 0.
    ``switch="eq21"``: T > eps/gamma (eq. 21/76); ``switch="eq75"``: T > b L sqrt(K).  The two
    agree wherever b is defined.  b needs eq. (69); where it fails this raises ValueError, or
    with ``on_undefined_b="zero"`` (eq21 only) returns 0, which is what (76) selects there
    because -eps/ln(1-q) < eps/gamma.  The c of (72) is proven only for 0 < b eps/T < 1 (73).
    """
    C, m, eps, c, L = (positive(n, v) for n, v in (("C", C), ("m", m), ("eps", eps), ("c", c), ("L", L)))
    N, K, q = _q(N, K)
    T = np.asarray(_pos("T", T), dtype=float)
    choice("switch", switch, ("eq21", "eq75"))
    choice("on_undefined_b", on_undefined_b, ("raise", "zero"))
    ln_arg = _ln_b_arg(eps, T, q)
    undefined = np.isnan(ln_arg)
    if undefined.any() and (on_undefined_b == "raise" or switch == "eq75"):
        krandom_b(eps=eps, T=T, N=N, K=K)  # raises with the eq. (69) message
    with np.errstate(invalid="ignore"):
        b = -(T / eps) * ln_arg  # nan where undefined; nan comparisons are False
        if switch == "eq21":
            on = (T > eps / krandom_gamma(eps=eps, L=L, N=N, K=K)) & ~undefined
        else:
            on = T > b * L * math.sqrt(K)
        rad = np.where(on, np.maximum(T**2 / b**2 - L**2 * K, 0.0), 0.0)
    return _out(np.where(on, 2 * c * C * np.sqrt(rad) / (m * K * eps), 0.0))


class Theorem3Constants(NamedTuple):
    Q: float
    alpha0: float
    alpha1: float
    alpha2: float


ALPHAS = ("paper", "derived", "independent")


def _alpha2(rho, B, mu, K):
    sK = math.sqrt(K)
    return (rho * B**2 / 2 + rho * B + rho * B**2 / K + 2 * rho * B**2 / sK + mu * B / sK - mu) / mu**2


def _sampling_factor(N, K):
    """(N - K)/(K (N - 1)): E_S||v - w||^2 over (1/N) sum_i ||w_i - w||^2 when K of N are drawn
    without replacement (eq. (88)); 0 at K = N (also for N = 1)."""
    return 0.0 if K == N else (N - K) / (K * (N - 1))


def _alpha2_of(rho, B, mu, K, N, alphas):
    """alpha2 of Theorem 3 for one ``alphas`` reading (inputs validated; N may be None unless independent)."""
    if alphas == "independent":
        lam2 = lambdas(rho=rho, B=B, mu=mu)[2]
        return lam2 + rho * B**2 * _sampling_factor(N, K) / (2 * mu**2)
    return _alpha2(rho, B, mu, K)  # (94); (93) gives the same


def _alphas(rho, B, mu, K, N, alphas):
    """(alpha0, alpha1, alpha2) of Theorem 3 for one ``alphas`` reading (inputs validated)."""
    a2 = _alpha2_of(rho, B, mu, K, N, alphas)
    if alphas == "independent":
        return rho / 2, 0.0, a2
    if alphas == "derived":
        return rho, 1 + 2 * rho * B / mu, a2
    return 2 * rho * K / N + rho, 1 + 2 * rho * B / mu + 2 * rho * B * math.sqrt(K) / (mu * N), a2


def _alpha_inputs(K, N, alphas):
    """Validate K (and N, needed by alphas="independent"); returns (K, N or None, alphas)."""
    alphas = choice("alphas", alphas, ALPHAS)
    if N is None:
        if alphas == "independent":
            raise ValueError("N=None is out of range: alphas='independent' needs N (the sampling factor "
                             "(N-K)/(K(N-1)) of eq. (88))")
        return integer("K", K, 1), None, alphas
    N, K, _ = _q(N, K)
    return K, N, alphas


def theorem3_alpha2(*, rho, B, mu, K, N=None, alphas="paper"):
    """Wei et al. 2020, Theorem 3, eq. (24) (= (94)): alpha2 = (rho B^2/2 + rho B + rho B^2/K
    + 2 rho B^2/sqrt(K) + mu B/sqrt(K) - mu)/mu^2, so that Q = 1 + 2 l alpha2.

    ``alphas="derived"`` gives the same alpha2 (the middle line of (93) reproduces (94)).
    ``alphas="independent"`` (D7; needs ``N``): alpha2' = lambda2 + rho B^2 (N-K)/(2 mu^2 K (N-1))
    with Lemma 3's lambda2, from smoothness, sampling without replacement (88) and noise
    independent of the model.  Returned for any sign; the bound needs alpha2 < 0
    (see :func:`theorem3_mu_min`).
    """
    rho, B, mu = positive("rho", rho), positive("B", B), positive("mu", mu)
    K, N, alphas = _alpha_inputs(K, N, alphas)
    return _alpha2_of(rho, B, mu, K, N, alphas)


def theorem3_Q(*, rho, B, mu, l, K, N=None, alphas="paper"):
    """Wei et al. 2020, Theorem 3, eq. (24): Q = 1 + 2 l alpha2 (alpha2 of :func:`theorem3_alpha2`,
    with the same ``alphas`` reading).

    Returned for any value (no range check), e.g. to plot Q against K;
    :func:`theorem3_constants` computes the same Q and raises outside (0, 1).
    """
    return 1 + 2 * positive("l", l) * theorem3_alpha2(rho=rho, B=B, mu=mu, K=K, N=N, alphas=alphas)


def theorem3_mu_min(*, rho, B, K, N=None, alphas="paper"):
    """Wei et al. 2020, Theorem 3, eq. (24) (= (94)) solved for mu: alpha2 < 0 iff
    mu > rho (B^2/2 + B + B^2/K + 2 B^2/sqrt(K)) / (1 - B/sqrt(K)).

    Returns that threshold (alpha2 = 0 there).  It exists only for K > B^2 (B/sqrt(K) < 1);
    for K <= B^2, alpha2 > 0 for every mu and this raises BoundOutsideAssumptions.  Q > 0
    needs, in addition, alpha2 > -1/(2l), i.e. mu not too close to this threshold.
    ``alphas="derived"`` has the same alpha2.  ``alphas="independent"`` (D7; needs ``N``):
    mu > rho B (1 + B/2) + rho B^2 (N-K)/(2 K (N-1)), which exists for every K: the K > B^2
    restriction comes from the loose step of (93), not from Theorem 3's setting.
    """
    rho, B = positive("rho", rho), positive("B", B)
    K, N, alphas = _alpha_inputs(K, N, alphas)
    if alphas == "independent":
        return rho * B * (1 + B / 2) + rho * B**2 * _sampling_factor(N, K) / 2
    if not B / math.sqrt(K) < 1:
        raise BoundOutsideAssumptions(
            f"K={K} is out of range: alpha2 < 0 for some mu needs B/sqrt(K) < 1, i.e. "
            f"K > B^2 = {B**2:.4g} (eq. (24)); with B={B!r} alpha2 > 0 for every mu")
    return rho * (B**2 / 2 + B + B**2 / K + 2 * B**2 / math.sqrt(K)) / (1 - B / math.sqrt(K))


def theorem3_constants(*, rho, B, mu, l, K, N, alphas="paper"):
    """Wei et al. 2020, Theorem 3, eq. (24)-(25) and (94)-(95): Q = 1 + 2 l alpha2,
    alpha2 = (rho B^2/2 + rho B + rho B^2/K + 2 rho B^2/sqrt(K) + mu B/sqrt(K) - mu)/mu^2,
    alpha1 = 1 + 2 rho B/mu + 2 rho B sqrt(K)/(mu N), alpha0 = 2 rho K/N + rho.

    ``alphas="derived"``: what the middle line of (93) gives, alpha1 = 1 + 2 rho B/mu and
    alpha0 = rho ((95)'s extra terms have no printed source), alpha2 as printed.
    ``alphas="independent"`` (D7): alpha2' = lambda2 + rho B^2 (N-K)/(2 mu^2 K (N-1)),
    alpha1' = 0, alpha0' = rho/2.  The bound needs alpha2 < 0 and 0 < Q < 1; raises
    BoundOutsideAssumptions otherwise.
    """
    rho, B, mu, l = positive("rho", rho), positive("B", B), positive("mu", mu), positive("l", l)
    K, N, alphas = _alpha_inputs(K, N, alphas)
    alpha0, alpha1, alpha2 = _alphas(rho, B, mu, K, N, alphas)
    Q = 1 + 2 * l * alpha2
    need = ("mu > rho B (1 + B/2) + rho B^2 (N-K)/(2K(N-1))" if alphas == "independent"
            else "B/sqrt(K) < 1 and mu big vs rho")
    _check_contraction("Q", Q, f"needs -1/(2 l) < alpha2={alpha2:.4g} < 0 (mu large enough; "
                       f"alpha2 < 0 needs {need})")
    return Theorem3Constants(Q, alpha0, alpha1, alpha2)


MOMENTS3 = ("eq23", "eq100", "derived")


def _sigma_AK(*, C, m, N, K, T, L, eps, c):
    """Per-coordinate std of the noise actually added under K-random scheduling (D4):
    sqrt(sigma_D,K^2 + sigma_U^2/K), sigma_D,K of eq. (21), 0 where (69) fails."""
    sD = sigma_downlink_krandom(C=C, m=m, N=N, K=K, T=T, L=L, eps=eps, c=c, on_undefined_b="zero")
    return math.sqrt(sD**2 + sigma_uplink(C=C, m=m, eps=eps, L=L, c=c) ** 2 / K)


def theorem3_bound(*, T, eps, K, N, m, Theta, rho, beta, B, mu, l, c, scale=None, moments="eq23", d=None, C=None,
                   L=None, alphas="paper"):
    """Wei et al. 2020, Theorem 3, eq. (23): Q^T Theta + (1-Q^T)/(1-Q) [c alpha1 beta sqrt(2/pi)
    / (-m K ln a) + c^2 alpha0 / (m^2 K^2 ln^2 a)], a = 1 - N/K + (N/K) e^{-eps/T}.

    Needs eq. (69) (a > 0; raises otherwise) and 0 < Q < 1.  As in Theorem 2 the clipping
    bound is normalised away (2C = 1): ``scale`` (default 1) = 2C multiplies the linear noise
    term by scale and the quadratic one by scale^2.  ``moments="eq100"`` uses (100) literally
    (E||n|| carries sqrt(2N/pi), E||n||^2 carries N), which (23) drops.

    ``moments="derived"`` (D4; needs ``d``, ``C``, ``L``, refuses ``scale``): (99) with the
    moments of the noise actually added, Q^T Theta + (1-Q^T)/(1-Q) [alpha1 beta chi_d sigma_AK
    + alpha0 d sigma_AK^2], sigma_AK^2 = sigma_D,K^2 + sigma_U^2/K with sigma_D,K of eq. (21),
    0 where (69) fails: defined for every K with 0 < Q < 1 (it does not raise where (69) fails).
    ``alphas`` picks (95) as printed, (93) or the independence route (:func:`theorem3_constants`).
    Scalar T.
    """
    T, eps, Theta = positive("T", T), positive("eps", eps), positive("Theta", Theta)
    beta, c, m = positive("beta", beta), positive("c", c), positive("m", m)
    moments = choice("moments", moments, MOMENTS3)
    extra = _derived_inputs(moments, scale, d=d, C=C, L=L)
    Q, a0, a1, _ = theorem3_constants(rho=rho, B=B, mu=mu, l=l, K=K, N=N, alphas=alphas)
    if moments == "derived":
        sAK = _sigma_AK(C=extra["C"], m=m, N=N, K=K, T=T, L=extra["L"], eps=eps, c=c)
        e1, e2 = noise_moments(sigma=sAK, d=extra["d"])
        return float(Q**T * Theta + (1 - Q**T) / (1 - Q) * (a1 * beta * e1 + a0 * e2))
    scale = 1.0 if scale is None else positive("scale", scale)
    b = krandom_b(eps=eps, T=T, N=N, K=K)  # raises if eq. (69) fails
    ln_a = -b * eps / T
    dim = N if moments == "eq100" else 1
    lin = scale * c * a1 * beta / (-m * K * ln_a) * math.sqrt(2 * dim / math.pi)
    quad = scale**2 * c**2 * a0 * dim / (m**2 * K**2 * ln_a**2)
    return float(Q**T * Theta + (1 - Q**T) / (1 - Q) * (lin + quad))


def theorem3_C_max(*, T, eps, K, N, m, Theta, rho, beta, B, mu, l, c, L, d, alphas="paper"):
    """Wei et al. 2020, Theorem 3 re-derived (D4): the largest clipping bound C at which the bound
    of ``theorem3_bound(moments="derived")`` at this K lies below Theta (promises progress).

    Q^T Theta + (1-Q^T)/(1-Q) S < Theta iff S < (1 - Q) Theta (any T >= 1), and
    S = alpha1 beta chi_d s C + alpha0 d s^2 C^2 with s = sigma_AK/C (independent of C), so
    C_max = u/s with u = 2 g/(a + sqrt(a^2 + 4 alpha0 d g)), g = (1-Q) Theta, a = alpha1 beta chi_d.
    Needs 0 < Q < 1 (raises BoundOutsideAssumptions otherwise).
    """
    T, eps, Theta = positive("T", T), positive("eps", eps), positive("Theta", Theta)
    beta, c, m, L = positive("beta", beta), positive("c", c), positive("m", m), positive("L", L)
    d = integer("d", d, 1)
    Q, a0, a1, _ = theorem3_constants(rho=rho, B=B, mu=mu, l=l, K=K, N=N, alphas=alphas)
    s = _sigma_AK(C=1.0, m=m, N=N, K=K, T=T, L=L, eps=eps, c=c)  # sigma_AK per unit C
    return _noise_root(a=a1 * beta * _chi_mean(d), q=a0 * d, g=(1 - Q) * Theta) / s


class OptimalK(NamedTuple):
    K_star: int
    bound: float
    values: dict
    K_69: float


def theorem3_optimal_K(*, T, eps, N, m, Theta, rho, beta, B, mu, l, c, scale=None, moments="eq23", d=None, C=None,
                       L=None, alphas="paper"):
    """Wei et al. 2020, Remark 5: integer K* in [1, N] minimising the Theorem 3 bound
    (:func:`theorem3_bound`, same ``scale``, ``moments``, ``d``, ``C``, ``L``, ``alphas``).

    K where the bound is undefined are skipped: under (23)/(100) where eq. (69) fails or Q is
    outside (0, 1); under ``moments="derived"`` only where Q is outside (0, 1) (every K is scanned).
    Returns ``(K_star, bound, values, K_69)``: the bound at K*, ``{K: bound}`` for every valid K,
    and K_69 = N (1 - e^{-eps/T}) (:func:`krandom_K_min`), the (69) edge beside which the
    derived bound has its kink.  Raises ValueError if no K is valid.
    """
    N = integer("N", N, 1)
    for name, v in (("T", T), ("eps", eps), ("m", m), ("Theta", Theta), ("rho", rho), ("beta", beta),
                    ("B", B), ("mu", mu), ("l", l), ("c", c)):
        positive(name, v)  # bad input raises here, not swallowed below
    moments = choice("moments", moments, MOMENTS3)
    choice("alphas", alphas, ALPHAS)
    _derived_inputs(moments, scale, d=d, C=C, L=L)
    if scale is not None:
        positive("scale", scale)
    vals = {}
    for K in range(1, N + 1):
        try:
            vals[K] = theorem3_bound(T=T, eps=eps, K=K, N=N, m=m, Theta=Theta, rho=rho, beta=beta, B=B, mu=mu,
                                     l=l, c=c, scale=scale, moments=moments, d=d, C=C, L=L, alphas=alphas)
        except BoundOutsideAssumptions:
            continue
    if not vals:
        raise ValueError(f"the Theorem 3 bound is undefined for every K in [1, N={N}] "
                         f"(eq. (69) or 0 < Q < 1 fails) at T={T}, eps={eps}, rho={rho}, B={B}, "
                         f"mu={mu}, l={l}")
    K_star = min(vals, key=vals.get)
    return OptimalK(K_star, vals[K_star], vals, krandom_K_min(eps=eps, T=T, N=N))




def uplink_exposures_privacy(*, eps, delta, L):
    """Wei et al. 2020, Sec. III-A: the exact privacy of a client's ``L`` uplink exposures
    when each carries Gaussian noise ``sigma_U = c L Ds_U / eps``, ``c = sqrt(2 ln(1.25/delta))``
    (the paper's "considering L exposures ... sigma_U = c L Ds_U/eps").

    ``L`` Gaussian releases of std ``sigma_U`` and sensitivity ``Ds_U`` compose exactly into one
    Gaussian release of sensitivity ``sqrt(L) Ds_U``; its exact profile (Balle & Wang 2018,
    Thm 8) gives the true delta at ``eps`` and the eps really bought at ``delta``.  Both depend
    on ``sigma_U / Ds_U = c L / eps`` only, not on C or m.  Returns ``(true_delta, eps_really)``;
    the paper's guarantee holds when ``true_delta <= delta``.
    """
    from fldp import mechanisms as M

    positive("eps", eps)
    open_unit("delta", delta)
    L = integer("L", L, 1)
    z = gaussian_c(delta=delta) * L / eps  # sigma_U / Ds_U
    return float(M.gaussian_delta(eps=eps, sigma=z, sensitivity=math.sqrt(L))), float(M.gaussian_eps(sigma=z, delta=delta, sensitivity=math.sqrt(L)))
