"""The formulas of Li, Chang & Chi, "Secure Federated Averaging Algorithm with Differential
Privacy" (IEEE MLSP 2020), as pure functions: the step sizes, Lemma 1's sensitivity,
amplification by subsampling (Sec. 2.3, eq. (7)-(9)), Theorem 1's bound (eq. (12)) and
Remark 1's communication rounds (eq. (13)).  Every function takes keyword-only arguments named
after the paper's symbols and names the equation it implements.  Symbols (Sec. 2): client k
holds ``n_k`` samples and runs ``Q`` local SGD steps on mini-batches of size ``b`` between two
uploads, so one upload touches the fraction ``q = Q b / n_k`` of its data; ``Df``
(``sensitivity_df``) is the l2 sensitivity of the upload (Lemma 1: ``Df = 4 Q G eta_{t+1}`` with
``G`` the gradient-norm bound).  Sec. 3: ``L`` smoothness, ``mu`` strong convexity,
``kappa = L/mu``, ``gamma_k^2`` the variance of a one-sample gradient, ``Gamma`` the
heterogeneity, ``M`` the model dimension, ``n`` the total number of samples, ``N`` clients of
which ``K`` are sampled per round.
"""
from __future__ import annotations

import math

import numpy as np

from fldp import validate

__all__ = ["paper_lr", "theorem1_lr", "lemma1_sensitivity", "lemma1_sensitivity_steps", "per_sample_sensitivity", "lemma1_lr_ratio", "sampling_ratio",
           "inclusion_prob", "amplified_eps", "amplified_guarantee", "eq8_bound", "eq8_valid",
           "amplified_gaussian_eps", "sigma_eq9", "theorem1_A", "theorem1_B", "theorem1_C",
           "theorem1_bound", "rounds_eq13", "rounds_theorem1", "optimal_Q"]


def paper_lr(*, t, eta0: float = 0.2, decay: float = 0.01):
    """The experiments' step size ``eta_t = (1/5) / (1 + 0.01 t)`` at global step t = 0, 1, ...

    Source: Li, Chang & Chi 2020, Sec. 4.1.  Theorem 1's schedule 2 / (mu (alpha + t)) has
    this form with mu alpha = 10 and alpha = 100, i.e. mu = 0.1 and kappa = 12.5.
    """
    eta0, decay = validate.positive("eta0", eta0), validate.nonnegative("decay", decay)
    t = validate.array("t", t, validate.nonnegative)
    out = eta0 / (1.0 + decay * t)
    return float(out) if out.ndim == 0 else out


def theorem1_lr(*, t, mu: float, kappa: float):
    """Theorem 1's step size ``eta_t = 2 / (mu (alpha + t))`` with ``alpha = 8 kappa``.

    Source: Li, Chang & Chi 2020, Theorem 1 (kappa = L/mu > 1).
    """
    mu = validate.positive("mu", mu)
    kappa = validate.positive("kappa", kappa)
    if not kappa > 1:
        raise ValueError(f"kappa={kappa!r} is out of range: Theorem 1 needs kappa = L/mu > 1")
    t = validate.array("t", t, validate.nonnegative)
    out = 2.0 / (mu * (8.0 * kappa + t))
    return float(out) if out.ndim == 0 else out


def lemma1_sensitivity(*, Q: int, G: float, eta: float) -> float:
    """l2 sensitivity of one upload, ``Df = 4 Q G eta_{t+1}`` (replace one sample), as the
    paper states it.

    Source: Li, Chang & Chi 2020, Lemma 1 (eq. (10)-(11)); it assumes
    ``eta_{t+1-Q+tau} <= 2 eta_{t+1}`` for tau = 0..Q-1 (see :func:`lemma1_lr_ratio`).  The value
    returned is the paper's, unchanged: re-derived step by step (in the chapter
    ``notebooks/li2021/02_convergence``), it is a valid but loose upper bound, up to twice the
    :func:`lemma1_sensitivity_steps` that the proof's own steps give (about twice for the
    schedule of Sec. 4.1).
    """
    Q = validate.integer("Q", Q, 1)
    return 4.0 * Q * validate.positive("G", G) * validate.positive("eta", eta)


def lemma1_sensitivity_steps(*, G: float, etas) -> float:
    """l2 sensitivity bound of one upload from the step sizes of its Q local steps:
    ``2 G sum_{tau=0}^{Q-1} eta_{t+1-Q+tau}`` (replace one sample).

    Source: Li, Chang & Chi 2020, Lemma 1's proof (eq. (10)-(11)) with its slips mended and
    without the factor-2 relaxation ``eta_{t+1-Q+tau} <= 2 eta_{t+1}``: by eq. (10) and the
    triangle inequality, ``||w(D) - w(D')|| <= sum_tau eta_tau ||g_tau(D) - g_tau(D')|| <=
    2 G sum_tau eta_tau`` (Assumption 4).  At most :func:`lemma1_sensitivity` whenever the
    lemma's assumption holds; ``etas`` are the Q step sizes of the upload (e.g.
    ``paper_lr(t=range(t + 1 - Q, t + 1))``).  The derivation, step by step, is in the chapter
    ``notebooks/li2021/02_convergence``.
    """
    G = validate.positive("G", G)
    etas = validate.array("etas", etas, validate.positive)
    if etas.ndim != 1 or etas.size == 0:
        raise ValueError(f"etas has shape {etas.shape}: etas must be the Q >= 1 step sizes of one upload")
    return float(2.0 * G * etas.sum())


def per_sample_sensitivity(*, Q: int, G: float, eta: float, b: int) -> float:
    """l2 sensitivity of one upload under per-sample clipping, ``Df = 4 G eta_{t+1} (Q - 1 + 1/b)``
    (replace one sample): Lemma 1's ``4 Q G eta_{t+1}`` scaled by ``(Q - 1 + 1/b) / Q``.

    Source: Li, Chang & Chi 2020, Lemma 1's proof (eq. (10)-(11)) with every sample's gradient
    clipped to G before the mini-batch mean (the project's per-sample reading of Sec. 4.1's
    "gradient clipping on each iteration"): the one step that uses the differing sample moves
    the mean gradient by at most 2G/b, but the steps after it start from different iterates,
    where the clipped means can still differ by 2G, so only one of the Q terms shrinks.  Equals
    :func:`lemma1_sensitivity` divided by b at Q = 1 and equals it at b = 1.
    """
    b = validate.integer("b", b, 1)
    return lemma1_sensitivity(Q=Q, G=G, eta=eta) * (Q - 1 + 1 / b) / Q


def lemma1_lr_ratio(*, Q: int, decay: float = 0.01) -> float:
    """Largest ``eta_{t+1-Q+tau} / eta_{t+1}`` of the schedule eta0 / (1 + decay t) over all
    uploads: ``1 + decay Q``, reached at the first upload.  Lemma 1 needs it <= 2, i.e.
    ``Q <= 1/decay`` (Q <= 100 for the paper's schedule).

    Source: Li, Chang & Chi 2020, Lemma 1's assumption, for the schedule of Sec. 4.1.
    """
    Q = validate.integer("Q", Q, 1)
    return 1.0 + validate.nonnegative("decay", decay) * Q


def sampling_ratio(*, b: int, n_k: int, Q: int) -> float:
    """``q = Q b / n_k``: fraction of client k's data touched by Q mini-batches of size b.

    Source: Li, Chang & Chi 2020, Sec. 2.3 (amplification statement before eq. (7)).
    ``Q b <= n_k`` is required so that q is a fraction in (0, 1].
    """
    n_k = validate.integer("n_k", n_k, 1)
    b = validate.integer("b", b, 1, n_k, why="b <= n_k")
    Q = validate.integer("Q", Q, 1, n_k // b, why="Q b <= n_k")
    return Q * b / n_k


def inclusion_prob(*, b: int, n_k: int, Q: int) -> float:
    """``1 - (1 - b/n_k)^Q``: probability that a given sample is in at least one of Q
    mini-batches of b drawn without replacement (independently per step).

    Source: Li, Chang & Chi 2020, Sec. 2.3 (the factor inside the amplified eps); eq. (7)
    bounds it by ``q = Q b / n_k`` (:func:`sampling_ratio`).
    """
    n_k = validate.integer("n_k", n_k, 1)
    b = validate.integer("b", b, 1, n_k, why="b <= n_k")
    Q = validate.integer("Q", Q, 1)
    return -math.expm1(Q * math.log1p(-b / n_k)) if b < n_k else 1.0


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
    b = validate.integer("b", b, 1, n_k, why="b <= n_k")
    Q = validate.integer("Q", Q, 1)
    p = inclusion_prob(b=b, n_k=n_k, Q=Q)
    if eps <= 700.0:
        return math.log1p(p * math.expm1(eps))
    return float(np.logaddexp(math.log1p(-p) if p < 1 else -np.inf, math.log(p) + eps))


def amplified_guarantee(*, eps: float, delta: float, b: int, n_k: int, Q: int) -> tuple:
    """``(log(1 + (1 - (1 - b/n_k)^Q)(e^eps - 1)), q delta)``: the guarantee of one upload
    whose noise gives (eps, delta) without subsampling.

    Source: Li, Chang & Chi 2020, Sec. 2.3, citing Balle, Barthe & Gaboardi 2018 (sampling
    without replacement, substitution relation); ``q = Q b / n_k``.
    """
    delta = validate.open_unit("delta", delta)
    q = sampling_ratio(b=b, n_k=n_k, Q=Q)
    return amplified_eps(eps=eps, b=b, n_k=n_k, Q=Q), q * delta


def eq8_bound(*, eps: float, q: float) -> float:
    """``2 q eps``: the paper's linear bound on the amplified eps.

    Source: Li, Chang & Chi 2020, eq. (8): log(1 + q(e^eps - 1)) <= q(e^eps - 1) <= 2 q eps.
    The last step holds only while ``e^eps - 1 <= 2 eps`` (:func:`eq8_valid`); eq. (9)
    applies it at eps / (2q), far above that range when q is small.
    """
    return 2.0 * validate.positive("q", q) * validate.positive("eps", eps)


def eq8_valid(*, eps: float) -> bool:
    """Whether eq. (8)'s step ``e^eps - 1 <= 2 eps`` holds: eps <= 1.2564 (root of
    e^x = 1 + 2x).  Source: Li, Chang & Chi 2020, eq. (8)."""
    eps = validate.positive("eps", eps)
    # e^x - 1 - 2x is convex with roots 0 and 1.2564: beyond 2 it is positive, and expm1
    # would overflow past 709, so answer without it there.
    return eps <= 2.0 and math.expm1(eps) <= 2.0 * eps


def amplified_gaussian_eps(*, sigma: float, sensitivity_df: float, delta: float, b: int,
                           n_k: int, Q: int) -> float:
    """eps of one upload with Gaussian noise ``sigma`` at ``delta``, by the amplification
    theorem the paper cites, applied to the **exact** Gaussian profile.

    Source: Li, Chang & Chi 2020, Sec. 2.3 (Balle, Barthe & Gaboardi 2018: an
    (eps0, delta0) mechanism on the union of Q mini-batches of b is
    (log(1 + p(e^eps0 - 1)), p delta0)-DP with p = 1 - (1 - b/n_k)^Q), with eps0 the exact
    eps of the Gaussian mechanism at delta0 = delta / p (Balle & Wang 2018, Thm 8) instead
    of the classic bound.  This is what eq. (9)'s noise really gives one upload.
    """
    from fldp import mechanisms

    delta = validate.open_unit("delta", delta)
    p = inclusion_prob(b=b, n_k=n_k, Q=Q)
    if delta >= p:
        return 0.0
    eps0 = mechanisms.gaussian_eps(sigma=validate.positive("sigma", sigma), delta=delta / p,
                                   sensitivity=validate.positive("sensitivity_df", sensitivity_df))
    return 0.0 if eps0 == 0 else amplified_eps(eps=eps0, b=b, n_k=n_k, Q=Q)


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


# -- Sec. 3: Theorem 1 and Remark 1 -----------------------------------------------------------
def _log_positive(name: str, value: float) -> float:
    if not value > 1:
        raise ValueError(f"{name}={value!r} is out of range: the argument of the logarithm must "
                         "be > 1 for the term to be positive")
    return math.log(value)


def theorem1_A(*, p, gamma_sq, b: int, Q: int, G: float, L: float, Gamma: float) -> float:
    """``A = sum_k p_k^2 gamma_k^2 / b + 8 (Q-1)^2 G^2 + 6 L Gamma``.

    Source: Li, Chang & Chi 2020, eq. (12a); ``p`` and ``gamma_sq`` are arrays over the
    clients summed (the paper's index runs to K).
    """
    p = validate.array("p", p, validate.nonnegative)
    gamma_sq = validate.array("gamma_sq", gamma_sq, validate.nonnegative)
    if p.shape != gamma_sq.shape:
        raise ValueError(f"p and gamma_sq must have the same shape (got {p.shape} and {gamma_sq.shape})")
    b, Q = validate.integer("b", b, 1), validate.integer("Q", Q, 1)
    G, L = validate.positive("G", G), validate.positive("L", L)
    Gamma = validate.nonnegative("Gamma", Gamma)
    return float((p**2 * gamma_sq).sum() / b + 8 * (Q - 1) ** 2 * G**2 + 6 * L * Gamma)


def theorem1_B(*, M: int, Q: int, b: int, G: float, n: int, L: float, eps: float,
               delta: float) -> float:
    """``B = 64 M Q^4 b^2 G^2 / (n L^2 eps^2) log(n) log(1.25^2 Q^2 b^2 / (n delta^2))
    (8 (Q-1)^2 + 1)``, the noise term, as printed.

    Source: Li, Chang & Chi 2020, eq. (12b).  Substituting eq. (9) with q = Q b / n_k gives
    ``log(1.25^2 Q^2 b^2 / (n_k^2 delta^2))`` instead: the printed n (not n_k^2) is kept.
    """
    M, Q, b, n = (validate.integer(k, v, 1) for k, v in (("M", M), ("Q", Q), ("b", b), ("n", n)))
    G, L, eps = validate.positive("G", G), validate.positive("L", L), validate.positive("eps", eps)
    delta = validate.open_unit("delta", delta)
    lg = _log_positive("1.25^2 Q^2 b^2 / (n delta^2)", 1.25**2 * Q**2 * b**2 / (n * delta**2))
    return (64 * M * Q**4 * b**2 * G**2 / (n * L**2 * eps**2) * math.log(n) * lg
            * (8 * (Q - 1) ** 2 + 1))


def theorem1_C(*, N: int, K: int, Q: int, G: float) -> float:
    """``C = (N - K)/(N - 1) (4/K) Q^2 G^2``, the client-sampling term (0 when K = N).

    Source: Li, Chang & Chi 2020, eq. (12c).
    """
    N = validate.integer("N", N, 2)
    K = validate.integer("K", K, 1, N, why="K <= N")
    Q = validate.integer("Q", Q, 1)
    return (N - K) / (N - 1) * 4.0 / K * Q**2 * validate.positive("G", G) ** 2


def theorem1_bound(*, T, L: float, mu: float, A: float, B: float, C: float,
                   w0_dist_sq: float):
    """``E[F(w_T)] - F* <= 2 kappa / (T + alpha) ((A + B + C)/mu + 2 L ||w0 - w*||^2)``,
    kappa = L/mu, alpha = 8 kappa; T is the number of local SGD steps (scalar or array).

    Source: Li, Chang & Chi 2020, Theorem 1.
    """
    L, mu = validate.positive("L", L), validate.positive("mu", mu)
    kappa = L / mu
    if not kappa > 1:
        raise ValueError(f"L/mu={kappa!r} is out of range: Theorem 1 needs kappa = L/mu > 1")
    for k, v in (("A", A), ("B", B), ("C", C), ("w0_dist_sq", w0_dist_sq)):
        validate.nonnegative(k, v)
    T = validate.array("T", T, validate.nonnegative)
    out = 2 * kappa / (T + 8 * kappa) * ((A + B + C) / mu + 2 * L * w0_dist_sq)
    return float(out) if out.ndim == 0 else out


def rounds_eq13(*, Q: int, M: int, b: int, G: float, n: int, L: float, eps: float,
                delta: float, K: int, sum_p2_gamma2: float, Gamma: float) -> float:
    """Remark 1's communication rounds to accuracy, up to a constant factor:
    ``M b^2 G^2 log(n) log(Q^2 b^2/(n delta^2)) Q^5 / (n L^2 eps^2) + (1 + 1/K) G^2 Q
    + (sum_k p_k^2 gamma_k^2 / b + L Gamma) / Q``.

    Source: Li, Chang & Chi 2020, Remark 1, eq. (13), as printed (its constants differ
    from eq. (12)'s: compare :func:`rounds_theorem1`).
    """
    Q, M, b, n, K = (validate.integer(k, v, 1) for k, v in
                     (("Q", Q), ("M", M), ("b", b), ("n", n), ("K", K)))
    G, L, eps = validate.positive("G", G), validate.positive("L", L), validate.positive("eps", eps)
    delta = validate.open_unit("delta", delta)
    s, Gamma = validate.nonnegative("sum_p2_gamma2", sum_p2_gamma2), validate.nonnegative("Gamma", Gamma)
    lg = _log_positive("Q^2 b^2 / (n delta^2)", Q**2 * b**2 / (n * delta**2))
    return (M * b**2 * G**2 * math.log(n) * lg * Q**5 / (n * L**2 * eps**2)
            + (1 + 1 / K) * G**2 * Q + (s / b + L * Gamma) / Q)


def rounds_theorem1(*, Q: int, M: int, b: int, G: float, n: int, N: int, K: int, L: float,
                    eps: float, delta: float, sum_p2_gamma2: float, Gamma: float) -> float:
    """``(A + B + C) / Q``: the rounds T/Q in which Theorem 1's bound reaches a fixed
    accuracy (for large T, T_eps is proportional to A + B + C), with eq. (12)'s constants.

    Source: Li, Chang & Chi 2020, Theorem 1 and eq. (12) (what Remark 1 simplifies).
    """
    A = theorem1_A(p=[1.0], gamma_sq=[validate.nonnegative("sum_p2_gamma2", sum_p2_gamma2)], b=b,
                   Q=Q, G=G, L=L, Gamma=Gamma)
    B = theorem1_B(M=M, Q=Q, b=b, G=G, n=n, L=L, eps=eps, delta=delta)
    return (A + B + theorem1_C(N=N, K=K, Q=Q, G=G)) / Q


def optimal_Q(*, rounds, Q_max: int = 100) -> tuple:
    """``(Q*, values)``: the integer Q in 1..Q_max minimising ``rounds(Q)`` (a function of
    Q, e.g. a :func:`functools.partial` of :func:`rounds_eq13`), and the values for each Q.

    Source: Li, Chang & Chi 2020, Remark 1 ("there exists an optimal Q").
    """
    if not callable(rounds):
        raise ValueError(f"rounds={rounds!r} is not callable: rounds must map Q to a number")
    Q_max = validate.integer("Q_max", Q_max, 1)
    values = np.array([rounds(Q=q) for q in range(1, Q_max + 1)])
    return int(np.argmin(values)) + 1, values
