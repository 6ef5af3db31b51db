"""Theory of Zhou et al., "Optimizing the Numbers of Queries and Replies in Federated
Learning with Differential Privacy" (FedSGD-DPC), as pure functions: the noise of Theorems 1-2
(eq. (5)) and its aggregate (Propositions 1-2), Lemmas 1-4, the bounds of Theorems 3-4, eq. (6)'s
T*, the closed-form b*, the biconvex U(T, b) of Secs. V-B and VI-B with its K.K.T. solutions,
Alternate Convex Search and Table I.  Every function takes keyword-only arguments named after
the paper's symbols (``xi1``, ``xi2``, ``c2``, ``lam`` for lambda, ``Lambda`` for Lambda_i,
``Y0``, ``Gamma``, ``gamma = 2 lam / mu``) and names the theorem or equation it implements;
per-client ``eps``, ``delta``, ``d_i`` and ``Lambda`` are a scalar shared by the N clients or N
values.  T and b are integers in the theorems and reals (``T >= 0``, ``1 <= b <= N``) in the
optimisation.  What re-deriving the paper found (typos, Solution 3 never optimal, the joint
Laplace optimum at b = 1 or b = N with b* = 1 iff ``C3 > 2 gamma sqrt(C1 C2)``, Table I's
rounding) is told where it is used, in each function's docstring, and in the chapters
``notebooks/zhou/01_mechanisms`` to ``03_gaussian``; ``tests/test_zhou_theory.py`` tests it.
"""
from __future__ import annotations

import itertools
import math
from typing import Callable, NamedTuple, Optional, Sequence, Union

import numpy as np
from scipy.optimize import minimize_scalar

from fldp import validate

__all__ = [
    "laplace_scale", "gaussian_sigma", "check_queries",
    "aggregated_laplace_variance", "aggregated_gaussian_variance",
    "client_sampling_variance", "sampled_gradient_variance", "one_step_bound",
    "client_sampling_expectation", "gamma_of", "learning_rate", "StepSchedule", "theorem3_schedule",
    "omega0_laplace", "omega1_laplace", "laplace_bound",
    "omega0_gaussian", "omega1_gaussian", "gaussian_bound",
    "LaplaceA", "laplace_A", "T_star", "LaplaceB", "laplace_B", "b_star",
    "LaplaceC", "laplace_C", "U_laplace", "Candidate", "laplace_kkt_solutions", "laplace_optimum",
    "GaussianE", "gaussian_E", "U_gaussian", "gaussian_solutions", "gaussian_optimum",
    "ACSResult", "acs", "acs_multistart", "Table1Row", "table1", "implied_gamma", "first_step_reading",
    "ScheduleCoverage", "appendix_e_coverage", "theorem2_c1_needed",
]

PerClient = Union[float, Sequence[float]]
MAX_ENUMERATED_CLIENTS = 20


# ------------------------------------------------------------------ argument checks
def _in_range(name, value, low, high=math.inf, *, low_open=False, allow_inf=False, why=None):
    """Every element of ``value`` (a real or an array) in [low, high], or (low, high] with
    ``low_open``; finite unless ``allow_inf``.  Real intervals fldp.validate has no helper
    for (b in [1, N], q in (0, 1], arrays of T >= 0), in its message style."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        a = np.asarray(math.nan)
    if isinstance(value, (bool, str)):
        a = np.asarray(math.nan)
    if a.size == 0:
        raise ValueError(f"{name} is empty: {name} must hold at least one value")
    bad = np.isnan(a) | (a <= low if low_open else a < low) | (a > high)
    if not allow_inf:
        bad |= np.isinf(a)
    if bad.any():
        shown = value if a.ndim == 0 else float(a[bad].flat[0])
        left = "(" if low_open or low == -math.inf else "["
        right = ")" if high == math.inf else "]"
        raise ValueError(f"{name}={shown!r} is out of range: {name} must be in "
                         f"{left}{low:g}, {high:g}{right}" + (f" ({why})" if why else ""))
    return float(a) if a.ndim == 0 else a


def _real(name, value):
    return _in_range(name, value, -math.inf)


def _per_client(name, value, N, check):
    """A per-client quantity as an array of N values; a scalar is shared by all clients."""
    if np.ndim(value) == 0:
        return np.full(N, check(name, value))
    if len(value) != N:
        raise ValueError(f"{name} has {len(value)} entries: {name} must be a scalar or have "
                         f"one entry per client (N={N})")
    return np.array([check(f"{name}[{i}]", v) for i, v in enumerate(value)])


def _curvature(mu, lam):
    """Validated (mu, lam, gamma = 2 lam / mu); Assumptions 3-4 force mu <= lam."""
    lam = validate.positive("lam", lam)
    mu = _in_range("mu", validate.positive("mu", mu), 0.0, lam, low_open=True,
                   why="mu <= lam, Assumptions 3-4")
    return mu, lam, 2.0 * lam / mu


def _out(x):
    """0-d arrays and numpy scalars back to Python floats."""
    return float(x) if np.ndim(x) == 0 else x


# ------------------------------------------------------------------ shared terms
def _inv_eps_sq_sum(eps, N):
    """``sum_{i in N} 1/eps_i^2`` (``N/eps^2`` for a shared eps)."""
    return float(np.sum(_per_client("eps", eps, N, validate.positive) ** -2.0))


def _log_delta_eps_sum(eps, delta, N):
    """``sum_{i in N} log(1/delta_i) / eps_i^2``."""
    e = _per_client("eps", eps, N, validate.positive)
    dl = _per_client("delta", delta, N, validate.open_unit)
    return float(np.sum(-np.log(dl) / e**2))


def _laplace_noise(*, p, N, d, xi1, eps):
    """``8 p xi1^2 sum_i 1/eps_i^2 / (N d^2)``: Proposition 1 per unit of eta_t^2 b T^2."""
    p = validate.integer("p", p, 1)
    N = validate.integer("N", N, 1)
    d = validate.positive("d", d)
    xi1 = validate.positive("xi1", xi1)
    return 8.0 * p * xi1**2 * _inv_eps_sq_sum(eps, N) / (N * d**2)


def _gaussian_noise(*, p, N, d, xi2, c2, eps, delta):
    """``c2^2 p xi2^2 sum_i log(1/delta_i)/eps_i^2 / d^2``: Proposition 2 per unit eta_t^2 T."""
    p = validate.integer("p", p, 1)
    N = validate.integer("N", N, 1)
    d = validate.positive("d", d)
    xi2 = validate.positive("xi2", xi2)
    c2 = validate.positive("c2", c2)
    return c2**2 * p * xi2**2 * _log_delta_eps_sum(eps, delta, N) / d**2


def _client_term(N, b, G):
    """Lemma 2's ``2 (N - b)/(N - 1) G^2 / b`` for validated N >= 2, b (real or integer)."""
    return 2.0 * (N - b) / (N - 1) * G**2 / b


def _omega0(N, b, G, lam, Gamma):
    """Theorem 3's ``omega_0`` for validated N, b."""
    G = validate.nonnegative("G", G)
    Gamma = validate.nonnegative("Gamma", Gamma)
    return _client_term(N, b, G) + 2.0 * validate.positive("lam", lam) * Gamma


def _client_sizes(d_i, d, N):
    """The d_i: None means equal clients d/N; a scalar or N values must sum to d."""
    if d_i is None:
        return np.full(N, d / N)
    sizes = _per_client("d_i", d_i, N, validate.positive)
    if not math.isclose(sizes.sum(), d, rel_tol=1e-9):
        raise ValueError(f"d_i={d_i!r} is out of range: the d_i must sum to d={d!r} "
                         f"(they sum to {sizes.sum()!r})")
    return sizes


def _sgd_term(*, N, d, d_i, q, Lambda):
    """Lemma 4's ``sum_{i in N} d_i Lambda_i^2 / (q d^2)``."""
    d = validate.positive("d", d)
    q = _in_range("q", q, 0.0, 1.0, low_open=True)
    sizes = _client_sizes(d_i, d, N)
    lam_i = _per_client("Lambda", Lambda, N, validate.nonnegative)
    return float(np.sum(sizes * lam_i**2)) / (q * d**2)


# ------------------------------------------------------------------ Theorems 1-2
def check_queries(*, N: int, b: int, T: int, d_i: int) -> tuple[int, int, int, int]:
    """The query schedule of Zhou et al., Sec. IV-A, validated: N clients (>= 1), b of them
    per global iteration (1 <= b <= N), T iterations (>= 1), d_i samples on client i (>= 1)."""
    N = validate.integer("N", N, 1)
    return N, validate.integer("b", b, 1, N, why="b <= N"), validate.integer("T", T, 1), validate.integer("d_i", d_i, 1)


def laplace_scale(*, eps: float, b: int, T: int, N: int, d_i: int, xi1: float) -> float:
    """Per-coordinate Laplace scale ``2 b T xi_1 / (N d_i eps_i)`` of FedSGD-DPC.

    Source: Zhou et al., Theorem 1 (Laplace mechanism, from their [12]): client i is
    (eps_i, 0)-DP over T global iterations.  ``b T / N`` is the number of iterations client
    i takes part in, ``2 xi_1 / d_i`` the l1 sensitivity of its gradient (Assumption 1:
    ``xi_1`` bounds the l1 norm of per-sample gradients), ``b`` the clients queried per
    round out of ``N``, ``d_i`` client i's number of samples, ``eps`` client i's budget eps_i.
    """
    eps = validate.positive("eps", eps)
    N, b, T, d_i = check_queries(N=N, b=b, T=T, d_i=d_i)
    xi1 = validate.positive("xi1", xi1)
    return 2.0 * b * T * xi1 / (N * d_i * eps)


def gaussian_sigma(*, eps: float, delta: float, b: int, T: int, N: int, d_i: int, xi2: float,
                   c2: float) -> float:
    """Gaussian std of FedSGD-DPC: ``sigma_i^2 = c_2^2 xi_2^2 b T log(1/delta_i)/(d_i^2 eps_i^2 N)``.

    Source: Zhou et al., Theorem 2, eq. (5) (the paper states ``sigma_i^2 >=`` this; we
    return the equality).  It extends Abadi et al. 2016 (moments accountant) Thm 1:
    ``c_2`` is an unspecified constant there and here (so it must be given), ``log`` is the
    natural logarithm, ``xi_2`` bounds the l2 norm of per-sample gradients (Assumption 2),
    ``(eps, delta)`` is client i's budget (eps_i, delta_i).  The theorem also requires sampling probability ``q in (0, 1)`` and ``eps_i < c_1 q^2 T``
    for another unspecified constant ``c_1``; this function does not check that condition.
    """
    eps = validate.positive("eps", eps)
    delta = validate.open_unit("delta", delta)
    N, b, T, d_i = check_queries(N=N, b=b, T=T, d_i=d_i)
    xi2 = validate.positive("xi2", xi2)
    c2 = validate.positive("c2", c2)
    var = c2**2 * xi2**2 * b * T * math.log(1.0 / delta) / (d_i**2 * eps**2 * N)
    return math.sqrt(var)


# ------------------------------------------------------------------ Propositions 1-2
def aggregated_laplace_variance(*, eta: float, p: int, b: int, T: int, N: int, d: float,
                                eps: PerClient, xi1: float) -> float:
    """``E||w_t^b||^2 = 8 eta_t^2 p b T^2 xi_1^2 / (N d^2) sum_{i in N} 1/eps_i^2``.

    Source: Zhou et al., Proposition 1 (proof: Appendix A): the aggregated noise
    ``w_t^b = (N/b) sum_{i in P_t} (d_i/d) eta_t w_t^i`` of b uniformly drawn clients, each
    adding Theorem 1's Laplace noise; ``eta`` is the learning rate eta_t, ``p`` the model
    dimension, ``d = sum_i d_i``.  Re-derived: exact (not a bound) for uniformly random size-b
    client sets, and independent of the d_i, which cancel between Theorem 1's noise scale and
    the d_i/d weight.
    """
    N = validate.integer("N", N, 1)
    b = validate.integer("b", b, 1, N, why="b <= N")
    T = validate.integer("T", T, 1)
    eta = validate.positive("eta", eta)
    return eta**2 * b * T**2 * _laplace_noise(p=p, N=N, d=d, xi1=xi1, eps=eps)


def aggregated_gaussian_variance(*, eta: float, p: int, T: int, N: int, d: float,
                                 eps: PerClient, delta: PerClient, xi2: float,
                                 c2: float) -> float:
    """``E||w_t^b||^2 = c_2^2 eta_t^2 p T xi_2^2 / d^2 sum_{i in N} log(1/delta_i)/eps_i^2``.

    Source: Zhou et al., Proposition 2 (Theorem 2's noise, eq. (5), aggregated as in
    Proposition 1).  Independent of b: the (N/b)^2 of the aggregation cancels the b/N of the
    variance and the b/N chance of being drawn.  ``delta`` may be per client too.  Exact,
    like Proposition 1, and independent of the d_i (they cancel between eq. (5)'s noise and the
    d_i/d weight).
    """
    T = validate.integer("T", T, 1)
    eta = validate.positive("eta", eta)
    return eta**2 * T * _gaussian_noise(p=p, N=N, d=d, xi2=xi2, c2=c2, eps=eps, delta=delta)


# ------------------------------------------------------------------ Lemmas 1-4
def client_sampling_expectation(*, d_i: Sequence[float], nu, b: int):
    """Exact ``E_P[(N/b) sum_{i in P} (d_i/d) nu_i]`` over all size-b client sets P.

    Source: Zhou et al., Lemma 1 and eq. (7) (Appendix B): every P in phi_b(N) equally
    likely; the lemma states this equals ``sum_{i in N} (d_i/d) nu_i`` (unbiased sampling).
    ``d_i`` are the N client sizes (d = their sum), ``nu`` an array whose first axis has the
    N values nu_t^i (any trailing shape).  Enumerates every P, so N <= 20 (itertools).
    """
    if np.ndim(d_i) != 1:
        raise ValueError(f"d_i={d_i!r} is out of range: d_i must be a sequence of the N client sizes")
    sizes = validate.array("d_i", d_i, validate.positive)
    N = len(sizes)
    if not 1 <= N <= MAX_ENUMERATED_CLIENTS:
        raise ValueError(f"N={N!r} is out of range: N (the length of d_i) must be in "
                         f"[1, {MAX_ENUMERATED_CLIENTS}] to enumerate every client set")
    b = validate.integer("b", b, 1, N, why="b <= N")
    nu = validate.array("nu", nu, validate.real)
    if nu.ndim == 0 or nu.shape[0] != N:
        raise ValueError(f"nu has shape {nu.shape}: its first axis must hold one value per client (N={N})")
    subsets = np.array(list(itertools.combinations(range(N), b)))
    member = np.zeros((len(subsets), N))
    member[np.arange(len(subsets))[:, None], subsets] = 1.0
    weighted = (sizes / sizes.sum())[:, None] * nu.reshape(N, -1)
    return _out((N / b) * (member @ weighted).mean(axis=0).reshape(nu.shape[1:]))


def client_sampling_variance(*, N: int, b: int, G: float) -> float:
    """``E||g_t^b - g_t||^2 <= 2 (N - b)/(N - 1) G^2 / b``.

    Source: Zhou et al., Lemma 2 (proof: Appendix C; Assumption 5: ``G`` bounds the expected
    squared gradient norm).  The proof's exact middle line is
    ``(N - b)/(b N (N - 1)) sum_i ||grad F_i - g_t||^2`` (equal weights).  Appendices E and H,
    which use the lemma, write its term with ``sigma^2`` where the lemma has ``G^2`` (a typo).
    """
    N = validate.integer("N", N, 2)
    b = validate.integer("b", b, 1, N, why="b <= N")
    return _client_term(N, b, validate.nonnegative("G", G))


def sampled_gradient_variance(*, N: int, b: int, G: float, d: float, q: float,
                              Lambda: PerClient, d_i: Optional[PerClient] = None) -> float:
    """``2 (N - b)/(N - 1) G^2 / b + sum_{i in N} d_i Lambda_i^2 / (q d^2)``.

    Source: Zhou et al., Lemma 4 (proof: Appendix G; Assumptions 5-6): Lemma 2's client
    sampling term plus the variance of using a q fraction of each client's samples
    (``q``; ``Lambda`` is Assumption 6's Lambda_i, scalar or per client).  ``d_i`` None means equal clients (d_i = d/N); given, the d_i must sum to d.
    """
    var = client_sampling_variance(N=N, b=b, G=G)
    return var + _sgd_term(N=N, d=d, d_i=d_i, q=q, Lambda=Lambda)


def one_step_bound(*, dist_sq: float, mu: float, lam: float, eta: float, Gamma: float) -> float:
    """``||nu_bar_{t+1} - theta*||^2 <= (1 - mu eta_t) ||theta_t - theta*||^2 + 2 lam eta_t^2 Gamma``.

    Source: Zhou et al., Lemma 3 (proof: Appendix D; Assumptions 3-4), one noiseless full-
    participation step; ``dist_sq`` is ``||theta_t - theta*||^2``, ``lam`` / ``mu`` the
    smoothness / strong-convexity constants (so ``mu <= lam``), ``Gamma`` the non-iid degree
    (Definition 4).  Requires ``eta_t <= 1/lam`` (ValueError otherwise).
    """
    mu, lam, _ = _curvature(mu, lam)
    dist_sq = validate.nonnegative("dist_sq", dist_sq)
    eta = _in_range("eta", eta, 0.0, 1.0 / lam, low_open=True, why="eta <= 1/lam")
    Gamma = validate.nonnegative("Gamma", Gamma)
    return (1.0 - mu * eta) * dist_sq + 2.0 * lam * eta**2 * Gamma


# ------------------------------------------------------------------ Theorem 3 (Laplace)
def gamma_of(*, mu: float, lam: float) -> float:
    """``gamma = 2 lam / mu`` (Zhou et al., Theorem 3; Appendix E sets alpha = 2/mu)."""
    return _curvature(mu, lam)[2]


def learning_rate(*, t: int, mu: float, lam: float) -> float:
    """``eta_t = (2/mu) / (t + gamma)`` with ``gamma = 2 lam / mu`` (Zhou et al., Theorem 3).

    ``eta_0 = 1/lam``, so Lemma 3's condition ``eta_t <= 1/lam`` holds for every t >= 0.
    """
    t = validate.integer("t", t, 0)
    mu, _, gamma = _curvature(mu, lam)
    return 2.0 / mu / (t + gamma)


class StepSchedule(NamedTuple):
    """A step size ``eta_t = eta0 / (1 + decay t)``, t = 0, 1, ..."""
    eta0: float
    decay: float


def theorem3_schedule(*, mu: float, lam: float) -> StepSchedule:
    """Theorem 3's step size written as ``eta0 / (1 + decay t)``: ``eta0 = 1/lam``,
    ``decay = 1/gamma = mu / (2 lam)``.

    Source: Zhou et al., Theorem 3 (and Theorem 4, which sets the same schedule):
    ``eta_t = (2/mu) / (t + gamma)`` with ``gamma = 2 lam / mu`` (Appendix E: alpha = 2/mu and
    ``eta_0 <= 1/lam``), i.e. ``(2/(mu gamma)) / (1 + t/gamma) = (1/lam) / (1 + t mu/(2 lam))``:
    the form of the experiments' "0.05 initially, decays gradually" (Sec. VII-A3), so the two
    compare by ``eta0`` and ``decay``.  :func:`learning_rate` gives eta_t itself.
    """
    mu, lam, gamma = _curvature(mu, lam)
    return StepSchedule(1.0 / lam, 1.0 / gamma)


class ScheduleCoverage(NamedTuple):
    """Appendix E's general condition for a schedule ``eta_t = alpha / (t + gamma')``:
    ``alpha``, ``gamma_prime``, ``eta0_lam = eta_0 lambda`` (needs <= 1), ``alpha_mu`` (needs > 1)
    and ``covered`` (both hold)."""
    alpha: float
    gamma_prime: float
    eta0_lam: float
    alpha_mu: float
    covered: bool


def appendix_e_coverage(*, lr: float, decay: float, mu: float, lam: float) -> ScheduleCoverage:
    """Whether a schedule ``eta_t = lr / (1 + decay t)`` meets the condition under which Appendix E
    proves Theorem 3's rate (Zhou et al., Appendix E: "eta_t = alpha/(t + gamma), where alpha > 1/mu
    and gamma > 0 such that eta_0 <= min(1/mu, 1/lambda)"; Theorem 3 itself states only the special
    case alpha = 2/mu, gamma = 2 lambda/mu).  Written as ``alpha / (t + gamma')``:
    ``alpha = lr / decay``, ``gamma' = 1 / decay``; covered iff ``lr <= 1/lambda`` (with mu <=
    lambda, the min is 1/lambda) and ``alpha mu > 1``, i.e. ``decay < lr mu``.  ``mu = 0`` (a
    model that is not strongly convex) is covered by no schedule."""
    lr = validate.positive("lr", lr)
    decay = validate.positive("decay", decay)
    mu = validate.nonnegative("mu", mu)
    lam = validate.positive("lam", lam)
    if mu > lam:
        raise ValueError(f"mu={mu!r} is out of range: mu must be <= lam={lam!r} (strong convexity at most smoothness)")
    alpha = lr / decay
    return ScheduleCoverage(alpha, 1.0 / decay, lr * lam, alpha * mu, bool(lr * lam <= 1.0 and alpha * mu > 1.0))


def theorem2_c1_needed(*, eps: float, q: float, b: int, T: int, N: int, printed: bool = False) -> float:
    """The constant c_1 that Theorem 2's validity range ``eps < c_1 q^2 T'`` needs at a setting
    (Zhou et al., Theorem 2, from Abadi et al.'s Theorem 1, whose T' is the number of times the
    subsampled Gaussian mechanism is applied to the data set): ``eps / (q^2 T')``.  A client is
    queried ``T' = bT/N`` times (eq. (5) already puts bT/N in the noise), so that is the default;
    ``printed=True`` uses the printed ``T' = T``, which is N/b times too permissive."""
    eps = validate.positive("eps", eps)
    q = validate.open_unit("q", q)
    N, b, T = validate.integer("N", N, 1), validate.integer("b", b, 1), validate.integer("T", T, 1)
    if b > N:
        raise ValueError(f"b={b!r} is out of range: b must be <= N={N!r}")
    uses = T if printed else b * T / N
    return eps / (q * q * uses)


def omega0_laplace(*, N: int, b: int, G: float, lam: float, Gamma: float) -> float:
    """``omega_0 = 2 (N - b)/(N - 1) G^2 / b + 2 lam Gamma`` (Zhou et al., Theorem 3)."""
    N = validate.integer("N", N, 2)
    b = validate.integer("b", b, 1, N, why="b <= N")
    return _omega0(N, b, G, lam, Gamma)


def omega1_laplace(*, p: int, b: int, T: int, N: int, d: float, eps: PerClient,
                   xi1: float) -> float:
    """``omega_1 = 32 p b T^2 xi_1^2 / (N d^2) sum_{i in N} 1/eps_i^2`` (Zhou et al., Theorem 3).

    Equals ``4 E||w_t^b||^2 / eta_t^2`` of Proposition 1 (the 4 is alpha^2 mu^2).
    """
    N = validate.integer("N", N, 1)
    b = validate.integer("b", b, 1, N, why="b <= N")
    T = validate.integer("T", T, 1)
    return 4.0 * b * T**2 * _laplace_noise(p=p, N=N, d=d, xi1=xi1, eps=eps)


def _theorem_bound(*, t, T, mu, lam, Y0, omega0, omega1):
    """``1/(t+gamma) (4/mu^2 omega0 + gamma Y0) + 1/mu^2 1/(t+gamma) omega1`` (Thms 3-4)."""
    t = validate.integer("t", t, 0, T, why="t <= T")
    mu, _, gamma = _curvature(mu, lam)
    Y0 = validate.nonnegative("Y0", Y0)
    return (4.0 / mu**2 * omega0 + gamma * Y0 + omega1 / mu**2) / (t + gamma)


def laplace_bound(*, t: int, T: int, b: int, N: int, p: int, d: float, eps: PerClient,
                  xi1: float, G: float, lam: float, mu: float, Gamma: float, Y0: float) -> float:
    """Bound on ``Y_t = E||theta_t - theta*||^2`` of FedSGD-DPC with the Laplace mechanism.

    Source: Zhou et al., Theorem 3 (proof: Appendix E): with ``eta_t = (2/mu)/(t + gamma)``,
    ``Y_t <= 1/(t+gamma) (4/mu^2 omega_0 + gamma Y_0) + 1/mu^2 1/(t+gamma) omega_1``.  The
    iteration index t runs over 0..T, while the noise term omega_1 holds the total T (the
    noise scale is set for T replies); ``Y_T`` is ``t = T``; ``Y0 = ||theta_0 - theta*||^2``.
    """
    T = validate.integer("T", T, 1)
    omega0 = omega0_laplace(N=N, b=b, G=G, lam=lam, Gamma=Gamma)
    omega1 = omega1_laplace(p=p, b=b, T=T, N=N, d=d, eps=eps, xi1=xi1)
    return _theorem_bound(t=t, T=T, mu=mu, lam=lam, Y0=Y0, omega0=omega0, omega1=omega1)


# ------------------------------------------------------------------ Theorem 4 (Gaussian)
def omega0_gaussian(*, N: int, b: int, G: float, lam: float, Gamma: float, d: float,
                    q: float, Lambda: PerClient, d_i: Optional[PerClient] = None) -> float:
    """``omega'_0 = 2 (N-b)/(N-1) G^2/b + sum_i d_i Lambda_i^2/(q d^2) + 2 lam Gamma``.

    Source: Zhou et al., Theorem 4 (Lemma 4's variance in place of Lemma 2's).  ``d_i``
    None means equal clients (d_i = d/N).
    """
    omega0 = omega0_laplace(N=N, b=b, G=G, lam=lam, Gamma=Gamma)
    return omega0 + _sgd_term(N=N, d=d, d_i=d_i, q=q, Lambda=Lambda)


def omega1_gaussian(*, p: int, T: int, N: int, d: float, eps: PerClient, delta: PerClient,
                    xi2: float, c2: float) -> float:
    """``omega'_1 = 4 c_2^2 p T xi_2^2 / d^2 sum_{i in N} log(1/delta_i)/eps_i^2``.

    Source: Zhou et al., Theorem 4; equals ``4 E||w_t^b||^2 / eta_t^2`` of Proposition 2.
    """
    T = validate.integer("T", T, 1)
    return 4.0 * T * _gaussian_noise(p=p, N=N, d=d, xi2=xi2, c2=c2, eps=eps, delta=delta)


def gaussian_bound(*, t: int, T: int, b: int, N: int, p: int, d: float, q: float,
                   Lambda: PerClient, eps: PerClient, delta: PerClient, xi2: float, c2: float,
                   G: float, lam: float, mu: float, Gamma: float, Y0: float,
                   d_i: Optional[PerClient] = None) -> float:
    """Bound on ``Y_t`` of FedSGD-DPC with the Gaussian mechanism.

    Source: Zhou et al., Theorem 4 (proof: Appendix H): ``Y_t <= 1/(t+gamma) (4/mu^2
    omega'_0 + gamma Y_0) + 1/mu^2 1/(t+gamma) omega'_1``.  Two typos in the statement:
    it sets ``gamma = 2 Delta / mu`` (read ``2 lam / mu``, as Appendix H does) and calls
    itself the bound "using the Laplace mechanism" (it is the Gaussian one).  It also needs
    Assumption 6 (through Lemma 4).  t runs over 0..T; omega'_1 holds the total T.
    """
    T = validate.integer("T", T, 1)
    omega0 = omega0_gaussian(N=N, b=b, G=G, lam=lam, Gamma=Gamma, d=d, q=q, Lambda=Lambda, d_i=d_i)
    omega1 = omega1_gaussian(p=p, T=T, N=N, d=d, eps=eps, delta=delta, xi2=xi2, c2=c2)
    return _theorem_bound(t=t, T=T, mu=mu, lam=lam, Y0=Y0, omega0=omega0, omega1=omega1)


# ------------------------------------------------------------------ Sec. V-B: T*, b*
def _argmin_T(a, k, gamma):
    """argmin over T >= 0 of ``(a + k T^2)/(T + gamma)``, k > 0: eq. (6)'s
    ``sqrt(gamma^2 + a/k) - gamma``, or 0 where that is negative or undefined (a < 0: the
    function increases in T)."""
    radicand = gamma**2 + a / k
    return max(math.sqrt(radicand) - gamma, 0.0) if radicand > 0 else 0.0


class LaplaceA(NamedTuple):
    A1: float
    A2: float


def laplace_A(*, b: float, N: int, p: int, d: float, eps: PerClient, xi1: float, G: float,
              lam: float, mu: float, Gamma: float) -> LaplaceA:
    """``A1 = 4/mu^2 (2 (N-b)/(N-1) G^2/b + 2 lam Gamma)``, ``A2 = 32/mu^2 p b xi1^2/(N d^2)
    sum_i 1/eps_i^2``, so that ``U(T) = (A1 + A2 T^2 + gamma Y0)/(T + gamma)``.

    Source: Zhou et al., Sec. V-B, before eq. (6) (b fixed, real in [1, N]).
    """
    N = validate.integer("N", N, 2)
    b = _in_range("b", b, 1.0, N, why="b <= N")
    mu, lam, _ = _curvature(mu, lam)
    A1 = 4.0 / mu**2 * _omega0(N, b, G, lam, Gamma)
    A2 = 4.0 * b * _laplace_noise(p=p, N=N, d=d, xi1=xi1, eps=eps) / mu**2
    return LaplaceA(A1, A2)


def T_star(*, b: float, N: int, p: int, d: float, eps: PerClient, xi1: float, G: float,
           lam: float, mu: float, Gamma: float, Y0: float) -> float:
    """``T* = sqrt(gamma^2 + (A1 + gamma Y0)/A2) - gamma``: the real T >= 0 minimising
    Theorem 3's Y_T for fixed b (Zhou et al., eq. (6); :func:`laplace_A`).

    With the paper's constants ``A1 + gamma Y0 > 0``, so T* > 0; should it not be, the
    minimiser over T >= 0 is 0 (returned instead of a negative or NaN value).  Eq. (6) is the
    T* of Solutions 1 & 2 (:func:`laplace_kkt_solutions`) at this b.
    """
    A1, A2 = laplace_A(b=b, N=N, p=p, d=d, eps=eps, xi1=xi1, G=G, lam=lam, mu=mu, Gamma=Gamma)
    gamma = gamma_of(mu=mu, lam=lam)
    return _argmin_T(A1 + gamma * validate.nonnegative("Y0", Y0), A2, gamma)


class LaplaceB(NamedTuple):
    B1: float
    B2: float
    B3: float


def laplace_B(*, T: float, N: int, p: int, d: float, eps: PerClient, xi1: float, G: float,
              lam: float, mu: float, Gamma: float, Y0: float) -> LaplaceB:
    """``U(b) = B1/b + B2 b + B3`` for fixed real T >= 0 (Zhou et al., Sec. V-B):
    ``B1 = 4/mu^2 G^2/(T+gamma) 2N/(N-1)``, ``B2 = 1/mu^2 1/(T+gamma) 32 p T^2 xi1^2/(N d^2)
    sum_i 1/eps_i^2``, ``B3 = gamma Y0/(T+gamma) + 4/mu^2 1/(T+gamma) (2 lam Gamma - 2 G^2/(N-1))``,
    i.e. ``C1, C2 T^2, C3`` of :func:`laplace_C` over ``T + gamma``.
    """
    T = _in_range("T", T, 0.0)
    C1, C2, C3 = laplace_C(N=N, p=p, d=d, eps=eps, xi1=xi1, G=G, lam=lam, mu=mu, Gamma=Gamma, Y0=Y0)
    scale = T + gamma_of(mu=mu, lam=lam)
    return LaplaceB(C1 / scale, C2 * T**2 / scale, C3 / scale)


def b_star(*, T: float, N: int, p: int, d: float, eps: PerClient, xi1: float, G: float,
           clamp: bool = True) -> float:
    """``b* = sqrt(B1/B2) = G N d / (2 T xi1) / sqrt(p (N-1)) / sqrt(sum_i 1/eps_i^2)``.

    Source: Zhou et al., Sec. V-B (the paper prints ``G n d``: read n = N).  The minimiser
    of the convex U(b) for fixed real T > 0 (:func:`laplace_B`); mu, lam, Gamma and Y0
    cancel out of B1/B2.  ``clamp=True`` (default) returns it clipped to the paper's
    constraint [1, N], the minimiser over 1 <= b <= N; ``clamp=False`` the unconstrained
    value.  Table I's b* column is this clamped value rounded *up*, see :func:`table1`.
    """
    N = validate.integer("N", N, 2)
    T = validate.positive("T", T)
    G = validate.nonnegative("G", G)
    p = validate.integer("p", p, 1)
    d = validate.positive("d", d)
    xi1 = validate.positive("xi1", xi1)
    b = G * N * d / (2.0 * T * xi1) / math.sqrt(p * (N - 1) * _inv_eps_sq_sum(eps, N))
    return min(max(b, 1.0), float(N)) if clamp else b


# ------------------------------------------------------------------ Sec. V-B: joint (T, b)
class LaplaceC(NamedTuple):
    C1: float
    C2: float
    C3: float


def laplace_C(*, N: int, p: int, d: float, eps: PerClient, xi1: float, G: float, lam: float,
              mu: float, Gamma: float, Y0: float) -> LaplaceC:
    """``C1 = 4/mu^2 2 N G^2/(N-1)``, ``C2 = 1/mu^2 32 p xi1^2/(N d^2) sum_i 1/eps_i^2``,
    ``C3 = gamma Y0 + 4/mu^2 (2 lam Gamma - 2 G^2/(N-1))`` of the biconvex problem
    ``min U(T, b) = (C1/b + C2 b T^2 + C3)/(T + gamma)`` (Zhou et al., Sec. V-B).

    C3 is negative when G^2/(N-1) outweighs lam Gamma + mu^2 gamma Y0/8.  The tuple unpacks
    into :func:`U_laplace` by name: ``U_laplace(T=T, b=b, gamma=g, **C._asdict())``.
    """
    N = validate.integer("N", N, 2)
    mu, lam, gamma = _curvature(mu, lam)
    G = validate.nonnegative("G", G)
    Gamma = validate.nonnegative("Gamma", Gamma)
    Y0 = validate.nonnegative("Y0", Y0)
    C1 = 4.0 / mu**2 * 2.0 * N * G**2 / (N - 1)
    C2 = 4.0 * _laplace_noise(p=p, N=N, d=d, xi1=xi1, eps=eps) / mu**2
    C3 = gamma * Y0 + 4.0 / mu**2 * (2.0 * lam * Gamma - 2.0 * G**2 / (N - 1))
    return LaplaceC(C1, C2, C3)


def U_laplace(*, T, b, C1: float, C2: float, C3: float, gamma: float):
    """``U(T, b) = (C1/b + C2 b T^2 + C3)/(T + gamma)`` (Zhou et al., Sec. V-B), equal to
    Theorem 3's bound at t = T exactly.  T >= 0 and b >= 1 are reals or numpy arrays (broadcast,
    e.g. for heat maps); the caller keeps b <= N.  U is convex in T only where
    ``C1/b + C3 > -C2 b gamma^2``, which physical constants always meet.
    """
    T = _in_range("T", T, 0.0)
    b = _in_range("b", b, 1.0)
    C1 = validate.nonnegative("C1", C1)
    C2 = validate.positive("C2", C2)
    C3 = _real("C3", C3)
    gamma = validate.positive("gamma", gamma)
    return _out((C1 / b + C2 * b * T**2 + C3) / (T + gamma))


class Candidate(NamedTuple):
    """One candidate optimum (T, b) with its U; ``clamped``: the closed form for T was
    negative or undefined and T = 0 (the minimiser over T >= 0) is used instead."""
    T: float
    b: float
    U: float
    solution: str
    clamped: bool = False


def laplace_kkt_solutions(*, C1: float, C2: float, C3: float, gamma: float,
                          N: int) -> tuple[Candidate, Candidate, Candidate]:
    """The three feasible K.K.T. solutions of ``min U(T, b)`` s.t. ``T >= 0, 1 <= b <= N``.

    Source: Zhou et al., Sec. V-B and Appendix F.  Solutions 1 & 2:
    ``T* = sqrt(gamma^2 + (C1/b + C3)/(C2 b)) - gamma`` with b* = 1 and b* = N (clamped to
    T = 0 where ``C1/b + C3 < 0`` makes it negative or undefined); Solution 3: T* = 0,
    where ``U(0, b) = (C1/b + C3)/gamma`` is smallest at b = N.  Solution 3 satisfies the
    K.K.T. conditions only if ``C1/N + C3 <= 0``, never the case for the paper's constants:
    with them ``C1/N + C3 = gamma Y0 + 8 lam Gamma / mu^2 >= 0``, so dU/dT < 0 at T = 0 for
    every b and T* = 0 is never optimal (T* only tends to 0 as eps -> 0); it is returned for
    completeness.  The joint optimum does sit at b = 1 or b = N, as Sec. V-B says: min_T U(T, b)
    is monotone in b, and b* = 1 wins iff ``C3 > 2 gamma sqrt(C1 C2)`` (b* = N below; at
    equality every b ties).  (1, T*(1)) is a partial optimum iff ``C3 >= 2 gamma sqrt(C1 C2)``
    and (N, T*(N)) iff ``C3 <= 2 gamma sqrt(C1 C2)``, so on this U :func:`acs` cannot stop
    short of the K.K.T. optimum.
    """
    N = validate.integer("N", N, 1)
    U = lambda T, b: U_laplace(T=T, b=b, C1=C1, C2=C2, C3=C3, gamma=gamma)  # noqa: E731
    out = []
    for label, b in (("Solution 1 (b* = 1)", 1.0), ("Solution 2 (b* = N)", float(N))):
        U(0.0, b)  # validates C1, C2, C3, gamma
        a = C1 / b + C3
        T = _argmin_T(a, C2 * b, gamma)
        out.append(Candidate(T, b, U(T, b), label, clamped=a < 0))
    out.append(Candidate(0.0, float(N), U(0.0, float(N)), "Solution 3 (T* = 0)"))
    return tuple(out)


def laplace_optimum(*, C1: float, C2: float, C3: float, gamma: float, N: int) -> Candidate:
    """The K.K.T. candidate with the smallest U (Zhou et al., Sec. V-B: "the best solution
    can be found by comparing three possible solutions")."""
    return min(laplace_kkt_solutions(C1=C1, C2=C2, C3=C3, gamma=gamma, N=N), key=lambda c: c.U)


# ------------------------------------------------------------------ Sec. VI-B (Gaussian)
class GaussianE(NamedTuple):
    E1: float
    E2: float
    E3: float


def gaussian_E(*, N: int, p: int, d: float, q: float, Lambda: PerClient, eps: PerClient,
               delta: PerClient, xi2: float, c2: float, G: float, lam: float, mu: float,
               Gamma: float, Y0: float, d_i: Optional[PerClient] = None) -> GaussianE:
    """E1, E2, E3 of ``U(T, b) = E1/(b (T+gamma)) + E2/(T+gamma) + E3`` (Zhou et al., Sec. VI-B):

    ``E1 = 8 G^2/mu^2 N/(N-1)``,
    ``E2 = 4/mu^2 (-2 G^2/(N-1) + sum_i d_i Lambda_i^2/(q d^2) + 2 lam Gamma) + gamma Y0
    - 4/mu^2 (gamma c2^2 p xi2^2/d^2 sum_i log(1/delta_i)/eps_i^2)``,
    ``E3 = 4/mu^2 (c2^2 p xi2^2/d^2 sum_i log(1/delta_i)/eps_i^2)``, so E2's last term is
    ``-gamma E3`` (from ``T/(T + gamma) = 1 - gamma/(T + gamma)``); U equals Theorem 4's bound
    at t = T exactly.  The tuple unpacks into :func:`U_gaussian` by name, as
    :func:`laplace_C`'s does.
    """
    N = validate.integer("N", N, 2)
    mu, lam, gamma = _curvature(mu, lam)
    G = validate.nonnegative("G", G)
    Gamma = validate.nonnegative("Gamma", Gamma)
    Y0 = validate.nonnegative("Y0", Y0)
    noise = _gaussian_noise(p=p, N=N, d=d, xi2=xi2, c2=c2, eps=eps, delta=delta)
    sgd = _sgd_term(N=N, d=d, d_i=d_i, q=q, Lambda=Lambda)
    E1 = 8.0 * G**2 / mu**2 * N / (N - 1)
    E2 = 4.0 / mu**2 * (-2.0 * G**2 / (N - 1) + sgd + 2.0 * lam * Gamma) + gamma * Y0 \
        - 4.0 / mu**2 * (gamma * noise)
    E3 = 4.0 / mu**2 * noise
    return GaussianE(E1, E2, E3)


def U_gaussian(*, T, b, E1: float, E2: float, E3: float, gamma: float):
    """``U(T, b) = E1/(b (T+gamma)) + E2/(T+gamma) + E3`` (Zhou et al., Sec. VI-B); reals or
    numpy arrays, T in [0, inf] (T = inf gives the limit E3), b >= 1."""
    T = _in_range("T", T, 0.0, allow_inf=True)
    b = _in_range("b", b, 1.0)
    E1 = validate.nonnegative("E1", E1)
    E2 = _real("E2", E2)
    E3 = validate.nonnegative("E3", E3)
    gamma = validate.positive("gamma", gamma)
    return _out(E1 / (b * (T + gamma)) + E2 / (T + gamma) + E3)


def gaussian_solutions(*, E1: float, E2: float, E3: float, gamma: float,
                       N: int) -> tuple[Candidate, Candidate]:
    """The two solutions of Zhou et al., Sec. VI-B.  Solution 1: T* = inf, b* = N, U -> E3;
    Solution 2: T* = 0, b* = N, ``U = (E1/N + E2)/gamma + E3`` (the paper omits the E3).

    For every T, U decreases in b (E1 >= 0), so b* = N; ``U(T, N)`` is monotone in T,
    decreasing iff ``E1/N + E2 > 0``: Solution 1 wins then, Solution 2 if it is < 0.  (In
    the latter case U is concave, not convex, in T: the section's "strictly biconvex" needs
    ``E1/b + E2 > 0``.)
    """
    N = validate.integer("N", N, 1)
    U = lambda T: U_gaussian(T=T, b=float(N), E1=E1, E2=E2, E3=E3, gamma=gamma)  # noqa: E731
    return (Candidate(math.inf, float(N), U(math.inf), "Solution 1 (T* = inf, b* = N)"),
            Candidate(0.0, float(N), U(0.0), "Solution 2 (T* = 0, b* = N)"))


def gaussian_optimum(*, E1: float, E2: float, E3: float, gamma: float, N: int) -> Candidate:
    """The better of :func:`gaussian_solutions` (Solution 1 on a tie, E1/N + E2 = 0)."""
    return min(gaussian_solutions(E1=E1, E2=E2, E3=E3, gamma=gamma, N=N), key=lambda c: c.U)


# ------------------------------------------------------------------ Alternate Convex Search
class ACSResult(NamedTuple):
    T: float
    b: float
    U: float
    iterations: int
    converged: bool


def _argmin_1d(f, lo, hi):
    """Minimiser of a convex f on [lo, hi]: scipy's bounded Brent, then the two ends (Brent
    never evaluates them, and a boundary optimum is common here)."""
    res = minimize_scalar(f, bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-10, "maxiter": 1000})
    return min((float(res.x), lo, hi), key=f)


def acs(*, U: Callable[..., float], T0: float, b0: float, N: int, T_max: float = 1e6,
        tol: float = 1e-9, max_iter: int = 500, fixed: Optional[str] = None) -> ACSResult:
    """Alternate Convex Search (Gorski, Pfeuffer & Klamroth 2007) for ``min U(T, b)`` over
    ``0 <= T <= T_max``, ``1 <= b <= N``, as Zhou et al. (Sec. V-B, Proposition 3) suggest.

    ``U`` is called as ``U(T=..., b=...)`` (e.g. ``functools.partial(U_laplace, **C._asdict(),
    gamma=g)``).  Each iteration minimises over T with b fixed, then over b with T fixed
    (bounded Brent, scipy), from (T0, b0), until T and b change by at most ``tol`` (relative).
    ``fixed="b"`` or ``"T"`` keeps that variable at its start value.  For a biconvex U this
    ends at a *partial* optimum (optimal in T for its b and in b for its T), not necessarily
    the global one: use :func:`acs_multistart`.  (Sec. V-B's U_laplace has a single partial
    optimum, its K.K.T. optimum, except on the tie ``C3 = 2 gamma sqrt(C1 C2)``.)  A result at
    ``T_max`` (Sec. VI-B's T* = inf) means U still decreases there.
    """
    N = validate.integer("N", N, 1)
    T_max = validate.positive("T_max", T_max)
    T = _in_range("T0", T0, 0.0, T_max, why="T0 <= T_max")
    b = _in_range("b0", b0, 1.0, N, why="b0 <= N")
    tol = validate.positive("tol", tol)
    max_iter = validate.integer("max_iter", max_iter, 1)
    validate.choice("fixed", fixed, (None, "T", "b"))
    for it in range(1, max_iter + 1):
        T_new = T if fixed == "T" else _argmin_1d(lambda x: U(T=x, b=b), 0.0, T_max)
        b_new = b if fixed == "b" else _argmin_1d(lambda y: U(T=T_new, b=y), 1.0, float(N))
        done = abs(T_new - T) <= tol * (1 + abs(T)) and abs(b_new - b) <= tol * (1 + abs(b))
        T, b = T_new, b_new
        if done:
            return ACSResult(T, b, float(U(T=T, b=b)), it, True)
    return ACSResult(T, b, float(U(T=T, b=b)), max_iter, False)


def acs_multistart(*, U: Callable[..., float], N: int,
                   starts: Optional[Sequence[tuple[float, float]]] = None,
                   T_max: float = 1e6, tol: float = 1e-9, max_iter: int = 500) -> ACSResult:
    """The best :func:`acs` result over several ``(T0, b0)`` starts (default: T0 = 1 and
    b0 = 1, (1 + N)/2, N), to escape ACS's partial optima.  For biconvex U in general: on
    Sec. V-B's U_laplace one start suffices (:func:`laplace_kkt_solutions`)."""
    N = validate.integer("N", N, 1)
    starts = starts if starts is not None else [(1.0, 1.0), (1.0, (1.0 + N) / 2), (1.0, float(N))]
    runs = [acs(U=U, T0=T0, b0=b0, N=N, T_max=T_max, tol=tol, max_iter=max_iter) for T0, b0 in starts]
    return min(runs, key=lambda r: r.U)


# ------------------------------------------------------------------ Table I
class Table1Row(NamedTuple):
    """One eps of Table I: integers as printed, and the unrounded values (``b_T50_exact``
    is the unconstrained sqrt(B1/B2), before clamping to [1, N])."""
    eps: float
    T_b5: int
    T_b10: int
    b_T50: int
    T_b1: int
    T_b5_exact: float
    T_b10_exact: float
    b_T50_exact: float
    T_b1_exact: float


def _round_half_up(x):
    return math.floor(x + 0.5)


def table1(*, mu: float, lam: float, G: float, Gamma: float, Y0: float, xi1: float, p: int,
           d: float, N: int, eps_values: Sequence[float],
           b_rounding: str = "nearest") -> tuple[Table1Row, ...]:
    """Zhou et al., Table I (Laplace mechanism): per eps (shared by all clients) T*(b = 5),
    T*(b = 10) (eq. (6)), b*(T = 50) (Sec. V-B, clamped to [1, N]) and T*(b* = 1).

    The paper prints integers without saying how it rounds.  T* is rounded to the nearest
    integer (halves up).  b* is rounded to the nearest integer (``b_rounding="nearest"``)
    or up (``"up"``), then kept in [1, N].  Only ``"up"`` can reproduce the printed table:
    with "nearest" its T* columns and its b* column ask for different G (for MNIST the T*
    columns need G in about [17.8, 18.1], the b*(T = 50) column G in [21, 23.1); FEMNIST:
    [18.1, 19.1] against [27.0, 31.5)).  With b* rounded up (and T* to the nearest integer) one
    constant set reproduces all twelve MNIST entries (``notebooks/zhou/02_laplace``).
    """
    validate.choice("b_rounding", b_rounding, ("nearest", "up"))
    N = validate.integer("N", N, 10)  # Table I fixes b = 10
    rnd = _round_half_up if b_rounding == "nearest" else math.ceil
    if np.ndim(eps_values) != 1:
        raise ValueError(f"eps_values={eps_values!r} is out of range: eps_values must be a sequence of eps")
    validate.array("eps_values", eps_values, validate.positive)
    problem = dict(N=N, p=p, d=d, xi1=xi1, G=G)
    rows = []
    for eps in eps_values:
        T_at = lambda b: T_star(b=b, eps=eps, lam=lam, mu=mu, Gamma=Gamma, Y0=Y0, **problem)  # noqa: E731
        T5, T10, T1 = T_at(5), T_at(10), T_at(1)
        b50 = b_star(T=50, eps=eps, clamp=False, **problem)
        b_int = min(max(rnd(b50), 1), N)
        rows.append(Table1Row(float(eps), _round_half_up(T5), _round_half_up(T10), b_int,
                              _round_half_up(T1), T5, T10, b50, T1))
    return tuple(rows)


def implied_gamma(*, T_a: float, eps_a: float, T_b: float, eps_b: float) -> float:
    """The gamma = 2 lambda/mu that makes eq. (6) give T* = ``T_a`` at ``eps_a`` and ``T_b``
    at ``eps_b`` for one fixed b (one column of Table I).

    Source: Zhou et al., eq. (6).  With b fixed, A2 is proportional to 1/eps^2 (all clients
    share eps) and A1, gamma, Y0 do not depend on eps, so (T* + gamma)^2 - gamma^2 =
    T*^2 + 2 gamma T* = K eps^2 for one K; two cells give
    ``gamma = (T_b^2 eps_a^2 - T_a^2 eps_b^2) / (2 (T_a eps_b^2 - T_b eps_a^2))``.
    """
    T_a, T_b = validate.positive("T_a", T_a), validate.positive("T_b", T_b)
    eps_a, eps_b = validate.positive("eps_a", eps_a), validate.positive("eps_b", eps_b)
    den = 2.0 * (T_a * eps_b**2 - T_b * eps_a**2)
    if den == 0:
        raise ValueError(f"T_a={T_a!r}, T_b={T_b!r} are out of range: T_a/eps_a^2 must differ from T_b/eps_b^2")
    return (T_b**2 * eps_a**2 - T_a**2 * eps_b**2) / den


def first_step_reading(*, hessian_top, secant_min_per_step) -> tuple[float, float]:
    """``(mu, lam)``: the best-conditioned reading of Assumptions 3-4 that a training trajectory
    allows, from its first step alone: mu the smallest secant curvature over the clients on the
    first step, lam the largest Hessian eigenvalue over the clients at the first point.

    Source: Zhou et al., Assumptions 3-4 and gamma = 2 lam/mu (Theorem 3).  A constant of strong
    convexity is at most every secant <grad F_i(b) - grad F_i(a), b - a>/||b - a||^2 and one of
    smoothness at least every Hessian eigenvalue, so constants valid on the first step give
    gamma >= 2 lam/mu of this reading; constants valid on the whole trajectory (the readings of
    :mod:`fldp.papers.zhou.estimate`) give a larger one.  ``hessian_top[j][i]``: point j (0 the
    start), client i; ``secant_min_per_step[t]``: the smallest client secant of step t.
    """
    h = validate.array("hessian_top", hessian_top, validate.real)
    s = validate.array("secant_min_per_step", secant_min_per_step, validate.positive).ravel()
    if h.ndim != 2 or h.size == 0 or s.size == 0:
        raise ValueError(f"hessian_top must be [points][clients] and secant_min_per_step non-empty, got shapes "
                         f"{h.shape} and {s.shape}")
    mu, lam = float(s[0]), float(h[0].max())
    if not mu <= lam:
        raise ValueError(f"secant_min_per_step[0]={mu!r} is out of range: the first secant mu must be at most "
                         f"lam = max(hessian_top[0]) = {lam!r} (a secant no larger than the largest eigenvalue)")
    return mu, lam
