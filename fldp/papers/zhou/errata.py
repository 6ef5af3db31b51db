"""Errata of Zhou et al. (FedSGD-DPC): what a referee reading (``docs/referee/zhou.md``, Part A,
A5-A17) found wrong in the paper's mathematics and no other chapter registers, as pure functions
and as the claims of ``notebooks/zhou/05_errata`` (:data:`CLAIMS`).  Lemmas 1-2 under Algorithm 1's
round robin (:func:`round_robin_sets`, :func:`selection_moments`); the replies a client really makes
and what they spend (:func:`max_replies_cdf`, :func:`max_replies_quantile`, :func:`reply_spend`);
the cap Assumptions 4-5 put on Y_T (:func:`y_T_cap`, :func:`informative_T`); the bound's minimum
against Y_0 (:func:`min_bound`); Solution 3's K.K.T. test (:func:`solution3_slope`,
:func:`solution3_margin`); the curvature of Sec. VI-B's U (:func:`gaussian_curvature`,
:func:`numerical_hessian`); the Gamma recipe (:func:`label_skew_gamma`); the statistics the
estimation releases (:func:`local_statistics`); the signal-to-noise ratio of a run
(:func:`snr_bound`).  The paper's own formulas come from :mod:`fldp.papers.zhou.theory` and :mod:`fldp.papers.zhou.algorithm`.
"""
from __future__ import annotations

import itertools
import math
from typing import Callable, Optional, Sequence

import numpy as np
import torch

from fldp import accounting, engine, validate
from fldp.models import Model
from fldp.papers.zhou import algorithm as alg, theory as th
from fldp.verdicts import Claim, catalogue

__all__ = [
    "round_robin_sets", "selection_moments", "max_replies_cdf", "max_replies_quantile", "reply_spend",
    "y_T_cap", "informative_T", "min_bound", "solution3_slope", "solution3_margin", "gaussian_curvature",
    "numerical_hessian", "label_skew_gamma", "local_statistics", "with_release_epsilon", "snr_bound", "CLAIMS",
]

MAX_ENUMERATED = th.MAX_ENUMERATED_CLIENTS


# -- A5: Lemmas 1-2 under round robin ------------------------------------------------------------
def round_robin_sets(*, N: int, b: int, T: int) -> np.ndarray:
    """``[T, b]``: the clients Algorithm 1 queries at t = 1..T "with a round robin manner" (Zhou et
    al., Alg. 1), as the engine selects them (:func:`fldp.engine.select_clients` under
    :func:`fldp.papers.zhou.algorithm.config` with ``sampler="round_robin"``)."""
    N = validate.integer("N", N, 1)
    b = validate.integer("b", b, 1, N, why="b <= N")
    T = validate.integer("T", T, 1)
    cfg = alg.config(mechanism="laplace", b=b, T=T, sampler="round_robin")
    return np.stack([engine.select_clients(cfg, N, t).numpy() for t in range(1, T + 1)])


def _clients_and_values(d_i, nu):
    sizes = validate.array("d_i", d_i, validate.positive).ravel()
    N = sizes.size
    if not 2 <= N <= MAX_ENUMERATED:
        raise ValueError(f"d_i has {N} entries: N must be in [2, {MAX_ENUMERATED}] to enumerate the client sets")
    v = validate.array("nu", nu, validate.real)
    if v.ndim != 2 or v.shape[0] != N:
        raise ValueError(f"nu has shape {v.shape}: it must be [N, D] with one row per client (N={N})")
    return sizes, v


def selection_moments(*, d_i: Sequence[float], nu, b: int, T: int, sampler: str) -> dict:
    """Per round t = 1..T, the moments over the client set P_t of ``nu^b = (N/b) sum_{i in P_t}
    (d_i/d) nu_i`` against ``nu_bar = sum_i (d_i/d) nu_i`` at one model (Zhou et al., Lemma 1,
    ``E{nu_t^b} = nu_bar_t``, and Lemma 2, ``E||g_t^b - g_t||^2``, both given theta_t): ``bias[t] =
    ||E_P[nu^b] - nu_bar||`` and ``second[t] = E_P||nu^b - nu_bar||^2``.  ``sampler="uniform"``: every
    size-b set equally likely (the lemmas' proofs, Appendices B-C; the mean by
    :func:`~fldp.papers.zhou.theory.client_sampling_expectation`); ``"round_robin"``: Algorithm 1's
    rule, whose P_t is fixed by t (:func:`round_robin_sets`), so the expectation is that one set.
    ``nu`` is ``[N, D]`` (e.g. the clients' gradients); N <= 20."""
    sizes, v = _clients_and_values(d_i, nu)
    N = sizes.size
    b = validate.integer("b", b, 1, N, why="b <= N")
    T = validate.integer("T", T, 1)
    validate.choice("sampler", sampler, alg.SAMPLERS)
    w = sizes / sizes.sum()
    nu_bar = w @ v
    agg = lambda s: (N / b) * (w[list(s)] @ v[list(s)])  # noqa: E731
    if sampler == "uniform":
        mean = np.asarray(th.client_sampling_expectation(d_i=sizes, nu=v, b=b))
        second = float(np.mean([np.sum((agg(s) - nu_bar) ** 2) for s in itertools.combinations(range(N), b)]))
        return {"bias": np.full(T, float(np.linalg.norm(mean - nu_bar))), "second": np.full(T, second)}
    dev = np.array([np.linalg.norm(agg(s) - nu_bar) for s in round_robin_sets(N=N, b=b, T=T)])
    return {"bias": dev, "second": dev ** 2}


# -- A6: the replies a client makes ------------------------------------------------------------
def max_replies_cdf(*, N: int, T: int, m: int) -> float:
    """P(every client replies at most ``m`` times) in T rounds that each query one client (b = 1)
    drawn uniformly at random (Zhou et al., Sec. IV-A: "b out of N clients are randomly selected";
    the counts are multinomial(T, 1/N)).  Exact: client by client, the next one's count given the
    rounds left is binomial with probability 1/(clients left)."""
    from scipy.stats import binom

    N, T = validate.integer("N", N, 1), validate.integer("T", T, 1)
    m = validate.integer("m", m, 0)
    left = np.zeros(T + 1)
    left[T] = 1.0  # probability of each number of rounds still to distribute
    r, k = np.arange(T + 1)[:, None], np.arange(min(m, T) + 1)[None, :]
    for j in range(N - 1):
        pmf = binom.pmf(k, r, 1.0 / (N - j))  # [rounds left, this client's count]
        nxt = np.zeros(T + 1)
        for c in range(k.shape[1]):
            nxt[: T + 1 - c] += left[c:] * pmf[c:, c]
        left = nxt
    return float(min(1.0, left[: m + 1].sum()))  # the last client takes what is left


def max_replies_quantile(*, N: int, T: int, level: float) -> int:
    """The smallest m with ``P(max_i count_i <= m) >= level`` (:func:`max_replies_cdf`, b = 1): the
    replies the most-queried client makes at that level, against the bT/N of Zhou et al., Sec. IV-B."""
    N, T = validate.integer("N", N, 1), validate.integer("T", T, 1)
    level = validate.open_unit("level", level)
    for m in range(math.ceil(T / N), T + 1):
        if max_replies_cdf(N=N, T=T, m=m) >= level - 1e-12:
            return m
    return T


def reply_spend(*, cal: alg.Calibration, count: int, delta: float) -> dict:
    """What ``count`` replies with the noise of ``cal`` (a Laplace
    :class:`~fldp.papers.zhou.algorithm.Calibration`, Zhou et al., Theorem 1's scale) spend: ``pure`` (the (eps, 0) of Theorem 1's
    currency: pure DP composes by summing, count / noise multiplier) and ``pld`` (the eps at
    ``delta`` of :func:`fldp.accounting.epsilon` on the composed Laplace events)."""
    if not isinstance(cal, alg.Calibration) or cal.mechanism != "laplace":
        raise ValueError(f"cal={cal!r} is out of range: cal must be a Laplace Calibration of algorithm.calibrate")
    count = validate.integer("count", count, 1)
    z = cal.noise_multiplier
    event = accounting.self_composed(accounting.laplace(noise_multiplier=z), count=count)
    return {"pure": count / z, "pld": accounting.epsilon(event, delta=validate.open_unit("delta", delta))}


# -- A7: the cap on Y_T ---------------------------------------------------------------------------
def y_T_cap(*, T, b: int, N: int, p: int, d: float, eps, xi1: float, G: float, lam: float, mu: float):
    """The largest Y_T = E||theta_T - theta*||^2 Theorem 3's hypotheses allow (Zhou et al.,
    Assumptions 4-5, Theorem 3's step eta_t = (2/mu)/(t + gamma), Proposition 1):
    ``(G/mu + eta_{T-1} G + sqrt(E||w^b||^2))^2``.  Strong convexity gives ||grad F(theta)|| >=
    mu ||theta - theta*|| and Assumption 5 (with Jensen) E||grad F(theta_t)||^2 <= G^2, so Y_t <=
    G^2/mu^2 for t <= T - 1; the last step adds at most eta_{T-1} G and the noise (Minkowski).  It
    tends to ``(G/mu + (2/mu) sqrt(v))^2`` (v: Proposition 1 at eta = T = 1) as T grows: bounded."""
    T = np.asarray(validate.array("T", T, validate.positive), dtype=float)
    if np.any(T < 1) or np.any(T != np.round(T)):
        raise ValueError(f"T={T.tolist()} is out of range: T must be integers >= 1")
    G = validate.nonnegative("G", G)
    gamma = th.gamma_of(mu=mu, lam=lam)
    v = th.aggregated_laplace_variance(eta=1.0, p=p, b=b, T=1, N=N, d=d, eps=eps, xi1=xi1)
    eta = (2.0 / mu) / (T - 1 + gamma)
    cap = (G / mu + eta * G + eta * T * math.sqrt(v)) ** 2  # E||w^b||^2 = v eta^2 T^2
    return float(cap) if cap.ndim == 0 else cap


def informative_T(*, T_max: int, b: int, N: int, p: int, d: float, eps, xi1: float, G: float, lam: float,
                  mu: float, Gamma: float, Y0: float) -> dict:
    """Where Theorem 3's bound on Y_T (Zhou et al., = U(T, b) of Sec. V-B at integer T) lies at
    or below :func:`y_T_cap` for T = 1..``T_max``: ``{"first", "last"}`` (None when nowhere),
    ``"above_from"`` (the T after which the bound stays above the cap to T_max, None if it ends
    below it) and ``"cap_limit"`` (the cap as T grows)."""
    T_max = validate.integer("T_max", T_max, 1)
    Ts = np.arange(1, T_max + 1, dtype=float)
    C = th.laplace_C(N=N, p=p, d=d, eps=eps, xi1=xi1, G=G, lam=lam, mu=mu, Gamma=Gamma, Y0=Y0)
    bound = th.U_laplace(T=Ts, b=float(b), **C._asdict(), gamma=th.gamma_of(mu=mu, lam=lam))
    cap = y_T_cap(T=Ts, b=b, N=N, p=p, d=d, eps=eps, xi1=xi1, G=G, lam=lam, mu=mu)
    ok = np.nonzero(bound <= cap)[0]
    v = th.aggregated_laplace_variance(eta=1.0, p=p, b=b, T=1, N=N, d=d, eps=eps, xi1=xi1)
    return {"first": int(Ts[ok[0]]) if ok.size else None, "last": int(Ts[ok[-1]]) if ok.size else None,
            "above_from": (int(Ts[ok[-1]]) + 1 if ok.size else 1) if bound[-1] > cap[-1] else None,
            "cap_limit": (G / mu + 2.0 / mu * math.sqrt(v)) ** 2}


# -- A8: the bound's minimum against Y_0 --------------------------------------------------------
def min_bound(*, b: float, N: int, p: int, d: float, eps, xi1: float, G: float, lam: float, mu: float,
              Gamma: float, Y0: float) -> dict:
    """``{"T", "U", "Y0", "ratio"}``: eq. (6)'s T*(b) (Zhou et al., Sec. V-B), the bound there,
    ``U(T*, b) = min_T Y_T-bound``, and its ratio to Y_0 = ||theta_0 - theta*||^2, the value of not
    training.  Training for T* rounds is certified better than not training only if ratio < 1
    (U(0, b) > Y_0 always: U at T = 0 is not Y_0)."""
    kw = dict(N=N, p=p, d=d, eps=eps, xi1=xi1, G=G, lam=lam, mu=mu, Gamma=Gamma, Y0=Y0)
    T = th.T_star(b=b, **kw)
    C = th.laplace_C(**kw)
    U = th.U_laplace(T=T, b=b, **C._asdict(), gamma=th.gamma_of(mu=mu, lam=lam))
    Y0 = validate.positive("Y0", Y0)
    return {"T": T, "U": U, "Y0": Y0, "ratio": U / Y0}


# -- A9: Solution 3 ---------------------------------------------------------------------------------
def solution3_slope(*, C1: float, C3: float, gamma: float, b: float) -> float:
    """``dU/dT`` at T = 0 of ``U(T, b) = (C1/b + C2 b T^2 + C3)/(T + gamma)`` (Zhou et al., Sec.
    V-B): ``-(C1/b + C3)/gamma^2`` (C2 drops out).  Solution 3 (T* = 0) satisfies the K.K.T.
    conditions (Appendix F, with its multiplier rho_1 >= 0) only if this is >= 0."""
    C1 = validate.nonnegative("C1", C1)
    C3 = validate.real("C3", C3)
    gamma = validate.positive("gamma", gamma)
    b = validate.real("b", b)
    if b < 1:
        raise ValueError(f"b={b!r} is out of range: b must be in [1, inf)")
    return -(C1 / b + C3) / gamma**2


def solution3_margin(*, Y0: float, lam: float, mu: float, Gamma: float) -> float:
    """``C1/N + C3 = gamma Y0 + 8 lam Gamma / mu^2`` (Zhou et al., Sec. V-B's C1 and C3, whose G
    terms cancel at b = N): the smallest C1/b + C3 over 1 <= b <= N, independent of eps, G and N."""
    Y0, Gamma = validate.nonnegative("Y0", Y0), validate.nonnegative("Gamma", Gamma)
    gamma = th.gamma_of(mu=mu, lam=lam)
    return gamma * Y0 + 8.0 * lam * Gamma / mu**2


# -- A10: the curvature of Sec. VI-B's U ------------------------------------------------------------
def gaussian_curvature(*, E1: float, E2: float, gamma: float, T: float, b: float) -> dict:
    """Second derivatives of ``U(T, b) = E1/(b (T+gamma)) + E2/(T+gamma) + E3`` (Zhou et al., Sec.
    VI-B): ``U_TT = 2 (E1/b + E2)/(T+gamma)^3``, ``U_bb = 2 E1/(b^3 (T+gamma))``, ``U_Tb = E1/(b^2
    (T+gamma)^2)``.  U is convex in T (at fixed b) exactly where E1/b + E2 >= 0."""
    E1, E2 = validate.nonnegative("E1", E1), validate.real("E2", E2)
    gamma, T = validate.positive("gamma", gamma), validate.nonnegative("T", T)
    b = validate.positive("b", b)
    s = T + gamma
    return {"U_TT": 2.0 * (E1 / b + E2) / s**3, "U_bb": 2.0 * E1 / (b**3 * s), "U_Tb": E1 / (b**2 * s**2)}


def numerical_hessian(U: Callable[..., float], *, T: float, b: float, h: float = 1e-3) -> np.ndarray:
    """The 2 x 2 Hessian of ``U(T=..., b=...)`` (e.g. Zhou et al., Sec. VI-B's U, :func:`~fldp.papers.zhou.theory.U_gaussian`)
    at (T, b) by central differences of relative step
    ``h`` (steps ``h max(1, |T|)`` and ``h max(1, |b|)``); T must be at least its step (U may be
    undefined below T = 0)."""
    T, b, h = validate.nonnegative("T", T), validate.positive("b", b), validate.positive("h", h)
    hT, hb = h * max(1.0, T), h * max(1.0, b)
    if T < hT:
        raise ValueError(f"T={T!r} is out of range: T must be >= its step {hT!r} (central differences)")
    f = lambda dt, db: float(U(T=T + dt, b=b + db))  # noqa: E731
    tt = (f(hT, 0) - 2 * f(0, 0) + f(-hT, 0)) / hT**2
    bb = (f(0, hb) - 2 * f(0, 0) + f(0, -hb)) / hb**2
    tb = (f(hT, hb) - f(hT, -hb) - f(-hT, hb) + f(-hT, -hb)) / (4 * hT * hb)
    return np.array([[tt, tb], [tb, bb]])


# -- A12: the Gamma recipe ---------------------------------------------------------------------------
def _entropy(pi):
    pi = pi[pi > 0]
    return float(-(pi * np.log(pi)).sum())


def label_skew_gamma(*, label_dists, weights: Optional[Sequence[float]] = None) -> dict:
    """Gamma = F* - sum_i (d_i/d) F_i* (Zhou et al., Definition 4) and the paper's recipe
    ``max_i F_i* - sum_i (d_i/d) F_i*`` (Sec. V-B, Discussion of Implementation) for clients whose
    features carry no information (every row's x the same): a softmax then predicts a label
    distribution, so F_i* = H(pi_i) and F* = H(sum_i (d_i/d) pi_i) (cross-entropy in nats).
    ``label_dists``: ``[N, K]`` label counts or frequencies per client; ``weights``: the d_i/d
    (default: each row's total, i.e. counts).  Returns ``{"gamma", "recipe", "F_star", "F_i_star"}``."""
    P = validate.array("label_dists", label_dists, validate.nonnegative)
    if P.ndim != 2 or P.shape[0] < 1 or np.any(P.sum(axis=1) <= 0):
        raise ValueError(f"label_dists has shape {P.shape}: it must be [N, K] with a positive total in every row")
    w = P.sum(axis=1) if weights is None else validate.array("weights", weights, validate.nonnegative).ravel()
    if w.size != P.shape[0] or w.sum() <= 0:
        raise ValueError(f"weights must hold one non-negative weight per client ({P.shape[0]}), not all zero")
    w = w / w.sum()
    pi = P / P.sum(axis=1, keepdims=True)
    Fi = np.array([_entropy(r) for r in pi])
    F = _entropy(w @ pi)
    return {"gamma": F - float(w @ Fi), "recipe": float(Fi.max() - w @ Fi), "F_star": F, "F_i_star": Fi.tolist()}


# -- A13: what the estimation releases --------------------------------------------------------------
def local_statistics(model: Model, x: torch.Tensor, y: torch.Tensor, *, theta0: torch.Tensor, steps: int,
                     lr: float) -> dict:
    """What client i returns in the paper's estimation (Zhou et al., Sec. V-B, Discussion of
    Implementation): ``F_star`` = F_i(theta_i*) and ``gap`` = ||theta_0 - theta_i*||^2, with theta_i*
    read as ``steps`` full-batch gradient steps of rate ``lr`` from ``theta0`` on the client's rows
    ``x[B, F]``, ``y[B]`` (as ``fldp.papers.zhou.estimate.local_optima`` reads it).  Deterministic:
    the same rows give the same numbers."""
    steps = validate.integer("steps", steps, 0)
    lr = validate.positive("lr", lr)
    if x.ndim < 2 or len(x) != len(y) or len(y) < 1:
        raise ValueError(f"x and y must hold the same number (>= 1) of rows, got {tuple(x.shape)} and {tuple(y.shape)}")
    xb, yb = x[None].double(), y[None]
    theta = theta0.detach().double().reshape(1, -1).clone()
    for _ in range(steps):
        theta -= lr * engine.gradient(model, theta, xb, yb)
    with torch.no_grad():
        F = float(model.loss(theta, xb, yb)[0])
    return {"F_star": F, "gap": float(((theta[0] - theta0.double()) ** 2).sum())}


def with_release_epsilon(*, training, release_differs: bool, delta: float) -> float:
    """The eps at ``delta`` (:func:`fldp.accounting.epsilon`) of a client's training event
    ``training`` composed with a release of statistics computed from its data without noise (Zhou et
    al., Sec. V-B, Discussion of Implementation: F_i*, ||theta_0 - theta_i*||^2):
    ``release_differs`` says whether the release differs between two neighbouring data sets (a
    deterministic release that does is a non-private event, eps = inf; one that does not costs nothing)."""
    import dp_accounting

    extra = [dp_accounting.NonPrivateDpEvent()] if release_differs else []
    return accounting.epsilon(accounting.composed([training, *extra]), delta=delta)


# -- A17: signal and noise of a run -------------------------------------------------------------------
def snr_bound(*, sigma: float, p: int, b: int, T: int, xi2: float) -> dict:
    """Norm signal-to-noise ratios of FedSGD-DPC with Gaussian replies of std ``sigma`` per
    coordinate (Zhou et al., eq. (5)) and equal clients: the aggregate (N/b) sum_{P_t} (d_i/d) w_i
    has std sigma/sqrt(b) per coordinate, so norm about ``noise = sigma sqrt(p/b)``, while the
    aggregated clipped gradient has norm at most ``xi2``.  ``per_round = xi2/noise``; over T rounds
    with any step sizes eta_t the accumulated signal is at most xi2 sum eta_t and the noise's norm
    sqrt(sum eta_t^2) noise, so ``run = sqrt(T) per_round`` bounds their ratio (Cauchy-Schwarz)."""
    sigma, xi2 = validate.positive("sigma", sigma), validate.positive("xi2", xi2)
    p, b, T = validate.integer("p", p, 1), validate.integer("b", b, 1), validate.integer("T", T, 1)
    noise = sigma * math.sqrt(p / b)
    return {"noise_norm": noise, "per_round": xi2 / noise, "run": math.sqrt(T) * xi2 / noise}


# -- the claims of notebooks/zhou/05_errata ------------------------------------------------------
lemma1_round_robin = Claim(
    "Lemma 1 under round robin",
    "Algorithm 1's round-robin client selection is unbiased given theta_t: E{nu_t^b} = nu_bar_t, the full "
    "participation step, at every global iteration (so Lemma 2's term is a variance, not a bias)",
    kind="derived", setting="reading",
    setting_note="the clients' full gradients at the initial model on the paper's two-digit MNIST split (unit pixels); "
                 "b in {1, 5, 10} (Sec. VII); the engine's round-robin selection",
    source="Alg. 1: 'The PS choose b clients with a round robin manner'; Lemma 1: 'Sampling clients with a round robin "
           "manner is unbiased, and thus we have E{nu_t^b} = nu_bar_t' (proof, App. B: every size-b set with "
           "probability 1/|phi_b(N)|)",
    falsifier="at some b and round, ||E_P[nu_t^b] - nu_bar_t|| under round robin above 1e-6 of ||nu_bar_t||, with the "
              "uniform enumeration at the same gradients below that (the measurement's power)")
replies_realised = Claim(
    "Theorem 1 at the replies Algorithm 1 makes",
    "Theorem 1's Laplace scale 2bT xi_1/(N d_i eps_i), set for bT/N replies, keeps every client within its eps_i "
    "(pure DP) at Table I's (b, T) under Algorithm 1's round robin",
    kind="derived", setting="paper",
    source="Sec. IV-B: 'each client i needs to respond bT/N queries to the PS given that the probability to participate "
           "each global iteration is b/N'; Theorem 1: '(eps_i, 0)-differential privacy over T global iterations if w_t^i "
           "is draw from Lap(0, 2bT xi_1/(N d_i eps_i))'; Table I",
    falsifier="the most-queried client's pure eps (its round-robin replies over Theorem 1's noise multiplier) at most "
              "eps_i at every (b, T) of Table I, MNIST and FEMNIST")
remarks_divergence = Claim(
    "Remarks I-II: Y_T diverges",
    "Under Theorem 3's hypotheses Y_T = E||theta_T - theta*||^2 can grow without bound as T grows ('Y_T diverges with "
    "the rate O(1/T + T)'), as Theorem 3's bound does",
    kind="derived", setting="reading",
    setting_note="the constants that reproduce Table I (02_laplace's fit) and the data's (secant and first-step mu), "
                 "at Table I's eps and b; Theorem 3's step size; T up to a grid end",
    source="Remark I (Sec. V-A): 'by taking all other variables as constants, Y_T diverges with the rate O(1/T + T) "
           "asymptotically as T approaches infinity'; Remark II; Assumptions 4-5",
    falsifier="the cap on Y_T that Assumptions 4-5 imply (G^2/mu^2 before the last step, plus that step's gradient and "
              "noise) growing without bound, or Theorem 3's bound staying at or below it on the whole T grid, at some "
              "setting")
bound_above_Y0 = Claim(
    "Sec. V-B: the optimised bound certifies training",
    "At Table I's budgets the minimised bound lies below the value of not training: min_T U(T, b) = U(T*, b) < Y_0 at "
    "every eps and b of Table I, so the T* of eq. (6) certifies that training helps (T* = 0 only for too small budgets)",
    kind="derived", setting="reading",
    setting_note="the constants that reproduce Table I (02_laplace's fit: every cell as printed) and the data's (secant "
                 "and first-step mu), every one required; Table I's eps, b, N, p, d, xi_1",
    source="Sec. V-B: 'we define U(T, b) = Y_T' and minimise it; Solution 3: 'T* = 0 ... possible if the privacy budgets "
           "of clients are too small'; Table I",
    falsifier="U(T*(b), b) >= Y_0 at some eps and b of Table I under some reading")
solution3_kkt = Claim(
    "Sec. V-B: Solution 3 (T* = 0) for small budgets",
    "Solution 3, T* = 0, satisfies the K.K.T. conditions of min U(T, b) when the clients' budgets are small enough",
    kind="derived", setting="reading",
    setting_note="the constants that reproduce Table I (02_laplace's fit) and the data's (secant and first-step mu); "
                 "eps from Table I's down to a thousandth of the smallest; b = 1 and b = N (C1/b + C3 is monotone in b)",
    source="Sec. V-B, Solution 3: 'T* = 0 ... This is possible if the privacy budgets of clients are too small'; Sec. "
           "VI-B, Remark I: 'Using both the Laplace mechanism and the Gaussian mechanism, we can see that the solution "
           "T* = 0 exists'; Appendix F",
    falsifier="some eps and b with dU/dT(0, b) = -(C1/b + C3)/gamma^2 >= 0 (checked beside by finite differences of U)")
gaussian_biconvex = Claim(
    "Sec. VI-B: U(T, b) strictly biconvex",
    "The Gaussian U(T, b) = E1/(b (T+gamma)) + E2/(T+gamma) + E3 is strictly biconvex (convex in T at fixed b and in b "
    "at fixed T), including where Solution 2 (T* = 0) applies",
    kind="derived", setting="reading",
    setting_note="the data's constants (02_laplace, secant and first-step mu) at the paper's Gaussian eps, delta, q, "
                 "xi_2 and the classic c_2 = sqrt(2 ln(1.25/delta)) (unstated); points T in {0.5, 100}, b = N",
    source="Sec. VI-B: 'It is not difficult to verify that U(T, b) is strictly biconvex'; Solution 2: 'T* = 0. This "
           "solution is feasible when the privacy budget is too small'",
    falsifier="a point of 0 <= T, 1 <= b <= N where the numerical d^2U/dT^2 or d^2U/db^2 is negative, its closed "
              "form agreeing in sign")
clip_vs_analysis = Claim(
    "Assumptions 1-2 at the experiments' clipping bounds",
    "The experiments' clipping bounds xi_1 = 300 (l1) and xi_2 = 10 (l2) are bounds of Assumptions 1-2 for the paper's "
    "model and data, so the unclipped gradient that Lemmas 2-4 and Theorems 3-4 analyse is what the clipped run computes",
    kind="derived", setting="reading",
    setting_note="the largest per-sample gradient norms along 02_laplace's non-private FedSGD trajectory (unit pixels; "
                 "a larger pixel scale only enlarges them)",
    source="Assumption 1: 'xi_1 = max_{t, i, theta_t^i, zeta in D_i} ||grad F_i(theta_t^i, zeta)||_1 < inf'; Assumption "
           "2; Sec. VII-A3: 'the clipping bound of gradients is xi_1 = 300 ... xi_2 = 10'",
    falsifier="a per-sample gradient on the trajectory with l1 norm above 300 or l2 norm above 10: clipping then "
              "changes the reply the analysis describes")
gamma_recipe = Claim(
    "Discussion of Implementation: the Gamma recipe",
    "Gamma is approximately max_i F_i* - sum_i (d_i/d) F_i*: within a factor of 2 of Gamma = F* - sum_i (d_i/d) F_i* "
    "at the paper's label split",
    kind="derived", setting="reading",
    setting_note="features that carry no information (every row's x the same), which isolates the label skew and gives "
                 "F_i* and F* in closed form (label entropies); the label counts of the paper's two-digit MNIST split",
    source="Sec. V-B, Discussion of Implementation: 'Gamma is approximately estimated as max_i F_i* - sum_i (d_i/d) "
           "F_i*'; Definition 4",
    falsifier="the recipe outside [Gamma/2, 2 Gamma] at the paper's split")
estimation_private = Claim(
    "Discussion of Implementation: estimation within eps_i",
    "Choosing T* and b* as the Discussion of Implementation describes keeps FedSGD-DPC (eps_i, delta_i)-DP: the "
    "statistics clients return for it (F_i*, ||theta_0 - theta_i*||^2) cost nothing beyond the training's budget",
    kind="derived", setting="reading",
    setting_note="client 0 of the paper's MNIST split against its neighbour without its last row; theta_i* read as "
                 "02_laplace's local optima (full-batch gradient steps at rate 1/lambda); the release costed by "
                 "fldp.accounting",
    source="Sec. V-B, Discussion of Implementation: 'Each client can easily deduce the optimal local parameters "
           "theta_i* ... each client returns the gap ||theta_0 - theta_i*||^2 to the PS'; 'client i returns F_i* to the "
           "PS'",
    falsifier="the returned statistics equal on the two neighbouring data sets (a constant release costs nothing)")
fig7_snr = Claim(
    "Fig. 7(b): signal above noise at the smallest cell",
    "At Fig. 7(b)'s smallest budget and data fraction (eps = 0.1, 10 % of each client's rows, b = N, T = 100), "
    "eq. (5)'s noise leaves the accumulated gradient able to exceed the accumulated noise (run SNR >= 1)",
    kind="derived", setting="reading",
    setting_note="c_2 = sqrt(2 ln(1.25/delta)) (unstated), q = 0.01, delta = 1e-5, xi_2 = 10; SNR in the parameter "
                 "norm for any step sizes (an upper bound); an SNR below 1 does not by itself rule out accuracy above "
                 "chance, it says the noise dominates the update",
    source="Sec. VII-B4 (Fig. 7): 'the model accuracy of FL with the Gaussian mechanism is very high even when the "
           "privacy budget is very small and only a small fraction of samples are used for training'",
    falsifier="the run SNR bound sqrt(T) xi_2 sqrt(b)/(sigma sqrt(p)) at eq. (5)'s sigma at least 1")

#: Every claim of the chapter by id.
CLAIMS = catalogue(globals())
