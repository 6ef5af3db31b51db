"""The adaptive CLT noise scheme's formulas as pure functions (keyword-only arguments): the
per-coordinate noise std c ||Delta w_k|| / sqrt(d) of Sec. 4.2.1 and Appendix A
(:func:`noise_std`), Theorem 1's aggregated variance (:func:`aggregate_noise_variance`), the
noise-scale rule c <= K against the c <= sqrt(K) that Theorem 1 gives (:func:`max_noise_scale`,
:func:`descent_probability`), the law of the angle between random vectors and the direction
filter's threshold, acceptance and cost (Sec. 4.2.2, Fig. 4, Table 4), and Theorem 1 checked by
exact simulation (:func:`fixed_direction_aggregate`).  The paper's text is OCR'd roughly; each
function says how we read its formula (the "max(1, ...)" of Algorithm 1, line 9, in
:func:`noise_std`; which angle the filter tests, ``reading=``, in :func:`acceptance_probability`),
as the chapter ``notebooks/adaptive_noise/01_scheme`` does.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch
from scipy import integrate, special, stats

from fldp import seeding, validate

__all__ = [
    "noise_std", "aggregate_noise_variance", "max_noise_scale", "paper_max_noise_scale",
    "angle_moments", "angle_cdf", "angle_pdf", "threshold", "acceptance_probability",
    "filter_drift", "expected_tries", "mean_tries_interval", "expected_tries_normal",
    "cost_multiple", "descent_probability", "fixed_direction_aggregate", "theorem1_elements"
]

#: Which angle the direction filter tests: Delta w and r, or Delta w and Delta w + r
#: (:func:`acceptance_probability` says why "noise" is the default).
READINGS = ("noise", "perturbed")


def noise_std(*, c: float, update_norm: float, dim: int) -> float:
    """Per-coordinate std of client noise, sigma_k = c ||Delta w_k|| / sqrt(d) (Sec. 4.2.1,
    Appendix A: r_k ~ N(0, I) rescaled to norm c ||Delta w_k||, per layer, so ||r_k||^2 / d per
    coordinate).  Algorithm 1, line 9 prints the scale as "max(1, ...)", which we read as an OCR
    artefact of the fraction c ||Delta w_k|| / ||r_k||: with max(1, .) the noise would be
    N(0, I), std 1 per coordinate."""
    validate.nonnegative("c", c)
    validate.nonnegative("update_norm", update_norm)
    validate.integer("dim", dim, 1)
    return c * update_norm / math.sqrt(dim)


def aggregate_noise_variance(*, weights, sigmas) -> float:
    """Theorem 1: the variance of each coordinate of R = sum_k (n_k/n) r_k,
    sum_k (n_k/n)^2 sigma_k^2 (``weights`` n_k/n of the uploading clients, ``sigmas`` their
    per-coordinate noise stds)."""
    w = validate.array("weights", weights, validate.nonnegative).ravel()
    s = validate.array("sigmas", sigmas, validate.nonnegative).ravel()
    if w.shape != s.shape:
        raise ValueError(f"weights and sigmas need the same non-zero length (got {w.size} and {s.size})")
    return float(np.sum(w ** 2 * s ** 2))


def max_noise_scale(*, K: int, rho: float = 1.0, dropouts: int = 0) -> float:
    """The largest c with E||sum_k r_k||^2 <= ||sum_k Delta w_k||^2 for K - d equal-norm,
    equally weighted updates whose pairwise cosine is ``rho`` (Theorem 1 with sigma_k of
    :func:`noise_std`): c^2 / K' <= rho + (1 - rho) / K', i.e.
    c <= sqrt(K' rho + 1 - rho), K' = K - d.  The paper's rule (Sec. 4.2.1) is c <= K', "to keep
    ||sum r_k|| <= ||sum Delta w_k||"; but from Theorem 1 itself the aggregate noise norm is
    c / sqrt(K) times the update norm (equal weights, aligned updates), so the bound Theorem 1
    gives is c <= sqrt(K), not c <= K (:func:`paper_max_noise_scale` is the paper's rule,
    :func:`descent_probability` measures both).
    """
    K = validate.integer("K", K, 1)
    d = validate.integer("dropouts", dropouts, 0, K - 1, why="dropouts < K")
    rho = validate.probability("rho", rho)
    k = K - d
    return math.sqrt(k * rho + 1.0 - rho)


def paper_max_noise_scale(*, K: int, dropouts: int = 0) -> int:
    """The paper's rule (Sec. 4.2.1): c <= K - d ("c slightly above K - d" with SGD)."""
    K = validate.integer("K", K, 1)
    return K - validate.integer("dropouts", dropouts, 0, K - 1, why="dropouts < K")


# -- Fig. 4: the angle between two random vectors ---------------------------------------------
def _check_dim(dim) -> int:
    return validate.integer("dim", dim, 1)


def angle_moments(*, dim: int) -> tuple[float, float]:
    """Mean and std (degrees) of the angle between two independent isotropic random
    vectors in R^dim (Fig. 4): density proportional to sin^(d-2)(theta) on [0, 180], mean
    90 by symmetry; the std by quadrature (about 57.3 / sqrt(d) for large d), exact from the
    density rather than a normal approximation.  dim = 1: the angle is 0 or 180, std 90."""
    return _angle_moments(_check_dim(dim))  # validated first: the cache needs a hashable int


@lru_cache(maxsize=None)
def _angle_moments(d: int) -> tuple[float, float]:
    if d == 1:
        return 90.0, 90.0
    # sin^(d-2) integrates to B(1/2, (d-1)/2) over [0, pi]; the mass sits within
    # 40 / sqrt(d) of pi/2 (beyond it the density is below e^-800)
    log_z = special.betaln(0.5, (d - 1) / 2)
    half = min(math.pi / 2, 40.0 / math.sqrt(d))

    def f(u):  # u = theta - pi/2; sin(theta) = cos(u)
        return u * u * math.exp((d - 2) * math.log(max(math.cos(u), 1e-300)) - log_z)

    var, _ = integrate.quad(f, -half, half, points=[0.0], limit=400, epsabs=0, epsrel=1e-10)
    return 90.0, math.degrees(math.sqrt(var))


def angle_cdf(*, theta, dim: int):
    """P(angle <= theta) (theta in degrees, scalar or array) for two random vectors in
    R^dim: with t = cos(angle), (1 + t)/2 ~ Beta((d-1)/2, (d-1)/2), so the CDF is the
    regularised incomplete beta I_{(1 - cos theta)/2}((d-1)/2, (d-1)/2)."""
    d = _check_dim(dim)
    theta = validate.array("theta", theta, lambda n, v: validate.real(n, v, allow_inf=True))
    th = np.clip(np.radians(theta), 0.0, math.pi)
    if d == 1:
        out = np.where(th >= math.pi, 1.0, 0.5)
    else:
        a = (d - 1) / 2
        out = special.betainc(a, a, (1.0 - np.cos(th)) / 2.0)
    return float(out) if np.ndim(out) == 0 else out


def angle_pdf(*, theta, dim: int):
    """Density (per degree) of the random-vector angle in R^dim, dim >= 2 (Fig. 4):
    sin^(d-2)(theta) / B(1/2, (d-1)/2), times pi/180 for degrees."""
    d = validate.integer("dim", dim, 2)
    th = np.radians(validate.array("theta", theta, validate.real))
    log = (d - 2) * np.log(np.clip(np.sin(th), 1e-300, None)) - special.betaln(0.5, (d - 1) / 2)
    return np.exp(log) * math.pi / 180


def threshold(*, dim: int, p: float) -> float:
    """theta_thres = mean + p std (degrees) of the random-vector angle in R^dim (Sec. 4.2.2,
    "three-sigma rule"), clipped to [0, 180]."""
    mean, std = angle_moments(dim=_check_dim(dim))
    return float(min(180.0, max(0.0, mean + validate.real("p", p) * std)))


def acceptance_probability(*, dim: int, p: float, c: float = 1.0, reading: str = "noise") -> float:
    """Probability that one noise draw passes the direction filter of a layer of ``dim``
    parameters (Sec. 4.2.2).  ``reading="noise"``: the angle between the update and the
    noise, which has the random-vector law, so P = F(theta_thres).  ``reading="perturbed"``
    (Algorithm 1, line 10): the angle between Delta w and Delta w + r with ||r|| = c ||Delta w||;
    with phi the noise's angle, angle < theta0 iff sin(phi - theta0) < sin(theta0) / c.

    Which angle the paper filters is ambiguous: Algorithm 1, line 10 says the angle between
    Delta w and Delta w + r (``"perturbed"``); the pre-computed mean and std of Sec. 4.2.2 and
    Table 4's costs (2.0 at p = 0, 6.3 at p = -1, 43.9 at p = -2, i.e. 1 / Phi(p)) fit only the
    angle between Delta w and the noise r (``"noise"``, our default)."""
    validate.choice("reading", reading, READINGS)
    validate.nonnegative("c", c)  # the noise's norm relative to the update's; used by "perturbed"
    th0 = threshold(dim=dim, p=p)
    if reading == "noise":
        return angle_cdf(theta=th0, dim=dim)
    validate.positive("c", c)
    if th0 <= 0:
        return 0.0
    if th0 >= 180:
        return 1.0
    t0 = math.radians(th0)
    s = math.sin(t0) / c
    if s >= 1:
        return 1.0
    lo = math.degrees(t0 + math.asin(s))       # accepted: phi < lo ...
    hi = math.degrees(t0 + math.pi - math.asin(s))  # ... or phi > hi
    prob = angle_cdf(theta=min(lo, 180.0), dim=dim)
    if hi < 180.0:
        prob += 1.0 - angle_cdf(theta=hi, dim=dim)
    return float(min(1.0, prob))


def filter_drift(*, dim: int, p: float, c: float = 1.0) -> float:
    """The filtered noise's mean along the update, E[r . u] / ||u||^2 = c E[cos phi | phi <
    theta_thres] (``reading="noise"``; Sec. 4.2.2).  Theorem 1 takes the noise as zero-mean;
    the filter keeps the draws that lean towards the update, so r carries on average this
    multiple of the layer's update (about c sqrt(2 / (pi d)) at p = 0): an extra step.
    NaN when no draw passes (a threshold of 0 degrees): the mean given acceptance is undefined."""
    d = validate.integer("dim", dim, 2)
    validate.nonnegative("c", c)
    lo = math.cos(math.radians(threshold(dim=d, p=p)))  # accepted: cos(phi) > lo
    a = (d - 3) / 2
    log_z = special.betaln(0.5, (d - 1) / 2)
    dens = lambda t: math.exp(a * math.log(max(1 - t * t, 1e-300)) - log_z)
    mass = acceptance_probability(dim=d, p=p)
    if mass <= 0:
        return math.nan
    num, _ = integrate.quad(lambda t: t * dens(t), lo, 1.0, limit=400, points=[0.0] if lo < 0 else None)
    return float(c * num / mass)


def expected_tries(*, dim: int, p: float, c: float = 1.0, reading: str = "noise") -> float:
    """Expected draws until one passes the filter, 1 / P (a geometric number of tries); inf when
    no draw passes (a threshold of 0 degrees)."""
    prob = acceptance_probability(dim=dim, p=p, c=c, reading=reading)
    return math.inf if prob <= 0 else 1.0 / prob


def mean_tries_interval(*, dims, p: float, vectors: int, level: float = 0.95) -> dict:
    """The mean number of draws per layer that the direction filter needs (Sec. 4.2.2; Table 4
    counts its cost in them) over ``vectors`` noise vectors of a model with layers of sizes
    ``dims``, and the band a measurement of it falls in at ``level``.  Each layer's tries are
    geometric with P_l = :func:`acceptance_probability` (``reading="noise"``): mean 1/P_l,
    variance (1 - P_l)/P_l^2.  The mean of the vectors x L tries has expectation
    (1/L) sum_l 1/P_l and variance sum_l (1 - P_l)/P_l^2 / (vectors L^2); the band is the normal
    one, mean +- z sd with z the two-sided ``level`` quantile.  Returns ``{"mean", "sd", "low",
    "high"}``."""
    if np.ndim(dims) != 1 or len(dims) == 0:
        raise ValueError(f"dims={dims!r} is out of range: dims must be a non-empty sequence of layer sizes")
    dims = [validate.integer(f"dims[{i}]", d, 1) for i, d in enumerate(dims)]
    vectors = validate.integer("vectors", vectors, 1)
    level = validate.probability("level", level)
    probs = [acceptance_probability(dim=d, p=p) for d in dims]
    if min(probs) <= 0:
        raise ValueError(f"p={p!r} is out of range: some layer's filter passes no draw (a threshold of 0 degrees)")
    L = len(dims)
    mean = sum(1.0 / q for q in probs) / L
    sd = math.sqrt(sum((1.0 - q) / q ** 2 for q in probs) / (vectors * L * L))
    z = float(stats.norm.ppf(0.5 + level / 2))
    return {"mean": mean, "sd": sd, "low": mean - z * sd, "high": mean + z * sd}


def expected_tries_normal(*, p: float) -> float:
    """Expected tries when the angle is read as exactly normal: 1 / Phi(p) (the normal tail
    behind Table 4's multiples 2.0, 6.3, 43.9 at p = 0, -1, -2); inf below p = -38, where
    Phi(p) underflows to 0 (1 / Phi(p) is then beyond the floats)."""
    prob = float(stats.norm.cdf(validate.real("p", p)))
    return math.inf if prob <= 0 else 1.0 / prob


def cost_multiple(*, dims, p: float, c: float = 1.0, reading: str = "noise") -> float:
    """Table 4: the expected cost of the filtered noise in multiples of one plain draw
    (the DP baseline's): sum_l d_l tries_l / sum_l d_l over the layers of sizes ``dims``
    (each layer's noise is drawn, and redrawn, on its own)."""
    if np.ndim(dims) != 1:
        raise ValueError(f"dims={dims!r} is out of range: dims must be a sequence of layer sizes")
    dims = [validate.integer(f"dims[{i}]", d, 1) for i, d in enumerate(dims)]
    if not dims:
        raise ValueError("dims is empty: dims needs at least one layer size")
    tries = [expected_tries(dim=d, p=p, c=c, reading=reading) for d in dims]
    return float(sum(d * t for d, t in zip(dims, tries)) / sum(dims))


# -- Sec. 5: is descent preserved? ---------------------------------------------------------------
def descent_probability(*, c: float, K: int, dim: int, rho: float = 1.0, dropouts: int = 0,
                        trials: int = 2000, seed: int = 0) -> float:
    """Monte Carlo P(||sum_k r_k|| <= ||sum_k Delta w_k||) (Sec. 4.2.1's condition) for
    K - d unit-norm updates in R^dim with pairwise cosine ``rho`` (a shared direction plus
    independent parts) and noise r_k of norm c (random direction), equal weights."""
    validate.nonnegative("c", c)
    K = validate.integer("K", K, 1)
    d = validate.integer("dropouts", dropouts, 0, K - 1, why="dropouts < K")
    dim = validate.integer("dim", dim, 2)
    rho = validate.probability("rho", rho)
    trials = validate.integer("trials", trials, 1)
    k = K - d
    g = seeding.torch_generator(validate.integer("seed", seed, 0), "descent")
    shared = torch.randn(trials, 1, dim, generator=g, dtype=torch.float64)
    own = torch.randn(trials, k, dim, generator=g, dtype=torch.float64)
    unit = lambda v: v / torch.linalg.vector_norm(v, dim=-1, keepdim=True)
    updates = unit(math.sqrt(rho) * unit(shared) + math.sqrt(1 - rho) * unit(own))
    noise = c * unit(torch.randn(trials, k, dim, generator=g, dtype=torch.float64))
    ok = torch.linalg.vector_norm(noise.sum(1), dim=-1) <= torch.linalg.vector_norm(updates.sum(1), dim=-1)
    return float(ok.double().mean())


# -- Theorem 1 at a layer of given size, one fixed update direction ---------------------------------
def fixed_direction_aggregate(*, dim: int, K: int, c: float, p=None, trials: int, norms=None,
                              seed: int = 0) -> dict:
    """Theorem 1 at one layer of ``dim`` parameters by exact simulation, every client's update
    along the layer's first axis e_1 (a fixed direction, norms ``norms``, default 1; equal
    weights n_k/n = 1/K, the paper's "same amount of data").  Client k's noise is
    r_k = c ||Delta w_k|| z / ||z||, z ~ N(0, I_dim), redrawn until its angle to the update
    passes theta_thres(dim, p) (``p=None``: no filter), as
    :func:`fldp.papers.adaptive_noise.algorithm.perturb` draws it (``reading="noise"``); only the
    two elements read here are drawn, with ||z||^2 = z_1^2 + z_2^2 + a chi^2 of dim - 2 degrees of
    freedom (the same law).
    Returns, per trial, the aggregate's element along the update (``along``, R_1) and one
    element across it (``across``, R_2), each divided by Theorem 1's std
    sqrt(sum_k (1/K)^2 sigma_k^2), sigma_k = :func:`noise_std`: under Theorem 1 both are N(0, 1)."""
    d = validate.integer("dim", dim, 2)
    K = validate.integer("K", K, 1)
    c = validate.positive("c", c)
    trials = validate.integer("trials", trials, 1)
    n = np.ones(K) if norms is None else np.asarray(norms, dtype=float).ravel()
    if n.shape != (K,) or not np.all(np.isfinite(n)) or (n <= 0).any():
        raise ValueError(f"norms needs K={K} positive entries (got {n.tolist()})")
    rng = seeding.numpy_rng(validate.integer("seed", seed, 0), "trials", 2, d, K)
    lo = -math.inf if p is None else math.cos(math.radians(threshold(dim=d, p=p)))
    if p is not None and (accept := acceptance_probability(dim=d, p=p)) * 1e6 < 1:
        raise ValueError(f"p={p!r} is out of range: at dim={d} the filter passes {accept:.2g} of the draws "
                         "(need at least 1e-6, or the simulation never ends)")
    z1, z2, rest = (np.empty((trials, K)) for _ in range(3))
    todo = np.ones((trials, K), dtype=bool)
    while todo.any():  # redraw the rejected clients only (a geometric number of tries each)
        m = int(todo.sum())
        a, b = rng.standard_normal(m), rng.standard_normal(m)
        s = rng.chisquare(d - 2, m) if d > 2 else np.zeros(m)
        z1[todo], z2[todo], rest[todo] = a, b, s
        cos = z1 / np.sqrt(z1 ** 2 + z2 ** 2 + rest)
        todo &= ~(cos > lo)
    length = np.sqrt(z1 ** 2 + z2 ** 2 + rest)
    sd = math.sqrt(aggregate_noise_variance(weights=np.full(K, 1.0 / K),
                                            sigmas=[noise_std(c=c, update_norm=float(v), dim=d) for v in n]))
    scale = c * n[None, :] / K / sd
    return {"along": (scale * z1 / length).sum(axis=1), "across": (scale * z2 / length).sum(axis=1)}


def theorem1_elements(*, along, across) -> dict:
    """The numbers Theorem 1 is judged on, from :func:`fixed_direction_aggregate`'s standardised
    elements (``th.theorem1_elements(**sim)``): the mean along the update and its 95 %
    t-interval, both variances (Theorem 1: 1), the excess kurtosis across it (one client's
    noise, a sphere coordinate: -6 / (d + 2)) and D'Agostino's normality p-value of each element."""
    along = validate.array("along", along, validate.real).ravel()
    across = validate.array("across", across, validate.real).ravel()
    if along.size < 20 or across.size < 20:
        raise ValueError(f"along and across need at least 20 trials each (got {along.size} and {across.size})")
    half = float(stats.t.ppf(0.975, along.size - 1) * along.std(ddof=1) / math.sqrt(along.size))
    return {"mean_along": float(along.mean()), "mean_along_ci": [float(along.mean()) - half, float(along.mean()) + half],
            "var_along": float(along.var(ddof=1)), "var_across": float(across.var(ddof=1)),
            "kurtosis_across": float(stats.kurtosis(across)),
            "normal_p_along": float(stats.normaltest(along).pvalue), "normal_p_across": float(stats.normaltest(across).pvalue)}
