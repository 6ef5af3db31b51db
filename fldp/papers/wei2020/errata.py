"""Wei et al. 2020 (NbAFL): what a referee reading found wrong in the paper's mathematics and that
no other chapter registers, as pure functions and as the catalogue of the errata chapter's claims
(``notebooks/wei2020/09_errata``).  The functions: hidden-unit permutations of the paper's MLP
(Assumption 1's convexity against Sec. VI's network), the two-sided inverse of Appendix F's
subsampled privacy loss (b' beside Lemma 4's b of eq. (22)) with the broadcast noise it calls for,
the hockey-stick divergence of one K-random round in both directions (scipy quadrature), the
basic-composition argument of Sec. III-A and Appendix B beside the exact accountant
(:mod:`fldp.accounting`), the aggregate's sensitivity at unequal splits (Remark 1 against eq.
(5)), the two sides of Appendix G's eq. (87) and the inexactness theta of a local solver (Appendix
D).  Every function takes keyword-only arguments named after the paper's symbols, names its
equation and checks its arguments with :mod:`fldp.validate`.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from fldp import accounting, engine, validate
from fldp.models import MLP
from fldp.papers.wei2020 import theory
from fldp.verdicts import Claim, catalogue

__all__ = [
    "permute_hidden", "symmetrise_hidden", "krandom_b_two_sided", "krandom_noise_multiplier",
    "krandom_noise_ratio", "mixture_hockey_stick", "BasicComposition", "basic_composition",
    "aggregate_sensitivity", "eq87_sides", "local_inexactness", "SIDES", "CLAIMS",
]


# ------------------------------------------------------------------ Assumption 1 vs the MLP
def _mlp_parts(params, in_features, hidden, num_classes):
    if not isinstance(params, torch.Tensor) or params.dim() != 1:
        raise ValueError(f"params must be one model's flat parameter tensor [D], got {type(params).__name__}"
                         + (f" of shape {tuple(params.shape)}" if isinstance(params, torch.Tensor) else ""))
    mlp = MLP(validate.integer("in_features", in_features, 1), validate.integer("hidden", hidden, 1),
              validate.integer("num_classes", num_classes, 1))
    if params.numel() != mlp.dim:
        raise ValueError(f"params has {params.numel()} entries: the {in_features}-{hidden}-{num_classes} MLP has "
                         f"{mlp.dim}")
    return {k: v[0] for k, v in mlp.unflatten(params.reshape(1, -1)).items()}


def permute_hidden(*, params, perm, in_features=784, hidden=256, num_classes=10):
    """Wei et al. 2020, Sec. VI (the MLP of one hidden layer of 256 ReLU units) against
    Assumption 1, item 1: the parameters ``pi w`` of the same network with its hidden units
    reordered by ``perm`` (columns of w1, entries of b1, rows of w2; b2 unchanged).  The network
    computes the same function, so F(pi w) = F(w) for every loss; a convex F would then satisfy
    F((w + pi w)/2) <= F(w).  ``perm``: a permutation of range(hidden).  Returns a tensor [D]."""
    p = _mlp_parts(params, in_features, hidden, num_classes)
    perm = torch.as_tensor(perm, dtype=torch.int64).reshape(-1)
    if perm.numel() != hidden or not torch.equal(torch.sort(perm).values, torch.arange(hidden)):
        raise ValueError(f"perm must be a permutation of range(hidden={hidden}), got {perm.tolist()[:8]}...")
    return torch.cat([p["w1"][:, perm].reshape(-1), p["b1"][perm], p["w2"][perm, :].reshape(-1), p["b2"]])


def symmetrise_hidden(*, params, in_features=784, hidden=256, num_classes=10):
    """Wei et al. 2020, Assumption 1, item 1, with Jensen's inequality over all hidden-unit
    permutations of Sec. VI's MLP: the average of pi w over every pi, i.e. the network whose
    hidden units all equal the mean unit (a one-feature network).  A convex F would give
    F(average) <= F(w).  Returns a tensor [D]."""
    p = _mlp_parts(params, in_features, hidden, num_classes)
    w1 = p["w1"].mean(dim=1, keepdim=True).expand(-1, hidden)
    w2 = p["w2"].mean(dim=0, keepdim=True).expand(hidden, -1)
    return torch.cat([w1.reshape(-1), p["b1"].mean().expand(hidden), w2.reshape(-1), p["b2"]])


# ------------------------------------------------------------------ Appendix F, both sides
def _q(N, K):
    N = validate.integer("N", N, 2)
    K = validate.integer("K", K, 1, N, why="K <= N")
    return N, K, K / N


def krandom_b_two_sided(*, eps, T, N, K):
    """Wei et al. 2020, Appendix F, eq. (63)-(70) with both sides of (64) kept: the per-round
    privacy loss ln(1 - q + q e^y) (q = K/N) must also stay below eps/T, which gives the tail
    condition (70) with b replaced by b' = (T/eps) ln(1 + (N/K)(e^{eps/T} - 1)), the inverse of
    amplification by subsampling.  Defined for every eps, T > 0 (unlike b of eq. (22), which
    needs (69)); q b' <= 1 <= q b, with equality only at K = N (b' = b = 1).  T may be an array."""
    eps = validate.positive("eps", eps)
    T = validate.array("T", T, validate.positive)
    N, K, _ = _q(N, K)
    out = T / eps * np.log1p(N / K * np.expm1(eps / T))
    return float(out) if out.ndim == 0 else out


SIDES = ("paper", "two-sided")


def krandom_noise_multiplier(*, eps, T, N, K, L, c, sided):
    """Wei et al. 2020, Lemma 4 (eq. (21)-(22)) and Sec. V: the per-coordinate std of the noise a
    K-random broadcast carries, sqrt(sigma_D^2 + sigma_U^2/K), over its sensitivity
    Ds_D = 2C/(mK) (p_i = 1/K): a noise multiplier, independent of C and m.
    ``sided="paper"``: sigma_D of eq. (21), 0 where b is undefined ((69) fails), as (21) selects;
    ``"two-sided"``: sigma_A = c Ds_D T/(b' eps) (:func:`krandom_b_two_sided`), at least the
    uplink's sigma_U/sqrt(K), i.e. max(cT/(b' eps), cL sqrt(K)/eps)."""
    validate.choice("sided", sided, SIDES)
    N, K, _ = _q(N, K)
    eps, T, L, c = (validate.positive(n, v) for n, v in (("eps", eps), ("T", T), ("L", L), ("c", c)))
    sU = theory.sigma_uplink(C=1.0, m=1.0, eps=eps, L=L, c=c)
    if sided == "paper":
        sD = theory.sigma_downlink_krandom(C=1.0, m=1.0, N=N, K=K, T=T, L=L, eps=eps, c=c, on_undefined_b="zero")
        return math.sqrt(sD ** 2 + sU ** 2 / K) / (2.0 / K)
    return max(c * T / (krandom_b_two_sided(eps=eps, T=T, N=N, K=K) * eps), c * L * math.sqrt(K) / eps)


def krandom_noise_ratio(*, eps, T, N, K, L, c, sided):
    """Wei et al. 2020, Sec. V-VI (Fig. 10: "K-random scheduling can bring down the variance of
    artificial noises"): the std of the noise on a K-random broadcast (:func:`krandom_noise_multiplier`
    times Ds_D = 2C/(mK)) over that of an all-clients broadcast, eq. (16) with Ds_D = 2C/(mN).
    Below 1: K-random adds less noise.  With ``sided="two-sided"`` it is >= 1 (it is
    1/(q b') >= 1 where the server adds noise)."""
    N, K, _ = _q(N, K)
    sK = krandom_noise_multiplier(eps=eps, T=T, N=N, K=K, L=L, c=c, sided=sided) * 2.0 / K
    return sK / theory.sigma_aggregate(C=1.0, m=1.0, N=N, T=T, L=L, eps=eps, c=c)


def mixture_hockey_stick(*, z, q, eps, side):
    """Wei et al. 2020, Appendix F, eq. (63)-(65): the smallest delta for which one round's
    scalar release (the noise projected on the direction of Ds_D, sensitivity 1, noise std
    ``z``) is (eps, delta)-indistinguishable, between P = N(0, z^2) (client absent) and the
    mixture M = (1 - q) N(0, z^2) + q N(1, z^2) (client present with probability q = K/N).
    ``side="lower"``: H_eps(P || M) = int (p - e^eps m)_+, the side (65) keeps
    (ln(m/p) >= -eps); 0 once eps >= -ln(1 - q).  ``side="upper"``: H_eps(M || P), the side
    Appendix F drops (ln(m/p) <= eps), never 0.  By scipy's adaptive quadrature over
    [-40 z, 1 + 40 z] (the densities are below e^-800 outside)."""
    from scipy import integrate

    z = validate.positive("z", z)
    q = validate.probability("q", q)
    if q == 0:
        raise ValueError("q=0 is out of range: q must be in (0, 1] (K >= 1)")
    a = math.exp(validate.nonnegative("eps", eps))
    validate.choice("side", side, ("lower", "upper"))
    k = 1.0 / (z * math.sqrt(2 * math.pi))

    def pm(o):
        p = k * math.exp(-o * o / (2 * z * z))
        return p, (1 - q) * p + q * k * math.exp(-(o - 1) ** 2 / (2 * z * z))

    def upper(o):
        p, m = pm(o)
        return max(m - a * p, 0.0)

    def lower(o):
        p, m = pm(o)
        return max(p - a * m, 0.0)

    val, _ = integrate.quad(upper if side == "upper" else lower, -40 * z, 1 + 40 * z, points=[0.0, 0.5, 1.0],
                            limit=500, epsabs=1e-16, epsrel=1e-10)
    return float(val)


# ------------------------------------------------------------------ Sec. III-A / Appendix B
class BasicComposition(NamedTuple):
    per_release_eps: float
    classic_range: bool
    delta_1: float
    argument_delta: float
    exact_delta: float
    exact_eps: float


def basic_composition(*, eps, delta, n):
    """Wei et al. 2020, Sec. III-A ("sigma_U = cL Ds_U/eps due to the linear relation between eps
    and sigma_U") and Appendix B (sigma_A = cT Ds_D/eps): ``n`` (= L or T) Gaussian releases at
    noise multiplier z = c n/eps, c = sqrt(2 ln(1.25/delta)), each the classic mechanism at
    (eps/n, delta).  The argument is basic composition: (eps, n delta) where the classic theorem
    applies (eps/n < 1).  Returns (per_release_eps, classic_range, delta_1, argument_delta,
    exact_delta, exact_eps): delta_1 the exact delta of one release at eps/n and n delta_1 the
    most basic composition can give, beside the exact composition (one Gaussian of multiplier
    z/sqrt(n): :func:`fldp.accounting.delta_for` at eps, :func:`fldp.accounting.epsilon` at delta)."""
    eps = validate.positive("eps", eps)
    delta = validate.open_unit("delta", delta)
    n = validate.integer("n", n, 1)
    one = accounting.gaussian(noise_multiplier=theory.gaussian_c(delta=delta) * n / eps)
    d1 = accounting.delta_for(one, eps=eps / n)
    total = accounting.self_composed(one, count=n)
    return BasicComposition(eps / n, eps / n < 1, d1, min(1.0, n * d1), accounting.delta_for(total, eps=eps),
                            accounting.epsilon(total, delta=delta))


# ------------------------------------------------------------------ Remark 1 vs eq. (5)
def aggregate_sensitivity(*, sizes, C, dim=8, seed=0):
    """Wei et al. 2020, eq. (4)-(9) and Remark 1 at any split ``sizes`` = ``(|D_1|, ..., |D_N|)``:
    the move of the aggregate (7), s = sum_i p_i w_i with ``p_i = |D_i|/|D|``, when one sample of
    client i is replaced, with eq. (4)'s local model (the mean of the per-sample argmins, exact
    for the squared loss: w_i = mean_j x_ij, every ||x_ij|| = C) and the worst replacement
    (x -> -x).  Returns ``{"measured", "eq5", "paper"}``, arrays over i: the measured move,
    ``p_i Ds_U^{D_i} = p_i 2C/|D_i|`` of eq. (5) and (30) (``= 2C/|D|``), and Remark 1's 2C p_i/m of (8)-(9)."""
    sizes = np.asarray([validate.integer(f"sizes[{i}]", s, 1) for i, s in enumerate(sizes)], dtype=np.int64)
    if sizes.size < 2:
        raise ValueError(f"sizes={sizes.tolist()} must hold at least two clients' dataset sizes")
    C = validate.positive("C", C)
    rng = np.random.default_rng(validate.integer("seed", seed, 0))
    dim = validate.integer("dim", dim, 1)
    total, m = int(sizes.sum()), int(sizes.min())
    p = sizes / total
    xs = [rng.standard_normal((int(n), dim)) for n in sizes]
    xs = [C * x / np.linalg.norm(x, axis=1, keepdims=True) for x in xs]
    s = sum(pi * x.mean(axis=0) for pi, x in zip(p, xs))  # eq. (7) on D
    measured = []
    for i, x in enumerate(xs):
        y = x.copy()
        y[0] = -y[0]  # D' = D with client i's first sample replaced by its antipode
        s_prime = s + p[i] * (y.mean(axis=0) - x.mean(axis=0))  # eq. (7) on D'
        measured.append(float(np.linalg.norm(s - s_prime)))
    return {"measured": np.array(measured), "eq5": p * 2 * C / sizes, "paper": 2 * C * p / m}


# ------------------------------------------------------------------ Appendix G, eq. (87)
def eq87_sides(*, models, K):
    """Wei et al. 2020, Appendix G, eq. (87) with p_i = 1/K: the two sides
    (E_S ||(1/K) sum_{i in S} w_i||^2, E_S sum_{i in S} ||w_i/K||^2) over the uniformly drawn
    K-subsets S of the N rows of ``models`` [N, D], exactly: E_S sum_{i != j in S} w_i.w_j =
    K(K-1)/(N(N-1)) sum_{i != j} w_i.w_j.  (87) claims they are equal ("due to the
    independence"); they differ by the cross terms, which (88) keeps."""
    W = torch.as_tensor(models).to(torch.float64)
    if W.dim() != 2 or W.shape[0] < 2:
        raise ValueError(f"models must be [N, D] with N >= 2 client models, got shape {tuple(W.shape)}")
    N = W.shape[0]
    K = validate.integer("K", K, 1, N, why="K <= N")
    sq = (W * W).sum(dim=1)
    tot = W.sum(dim=0)
    cross = float(tot @ tot - sq.sum())
    mean_sq = float(sq.mean())
    lhs = (K * mean_sq + (K * (K - 1) / (N * (N - 1)) * cross if N > 1 else 0.0)) / K ** 2
    return lhs, mean_sq / K


# ------------------------------------------------------------------ Appendix D, theta
def local_inexactness(*, model, start, local, data, mu, clients=None, grad_start=None):
    """Wei et al. 2020, Appendix D, (48) (theta-solutions, Li et al.'s FedProx [18]): for each
    client i, theta_i = ||grad J_i(w_i; w~)|| / ||grad J_i(w~; w~)|| with
    J_i(w; w~) = F_i(w) + mu/2 ||w - w~||^2 (Algorithm 1, line 6), w~ = ``start`` [D] and
    w_i = ``local[i]`` the local solver's output; grad J_i(w~; w~) = grad F_i(w~).  Full-batch
    gradients of each client's own rows of ``data`` (:func:`fldp.engine.gradient`; ``grad_start``
    [K, D]: the clients' gradients at ``start`` when already computed).  Lemma 3's
    lambda_2 of (55) tends to (-1 + B theta)/mu as mu grows, so it can be negative only for
    theta < 1/B.  Returns a numpy array over ``clients`` (default all)."""
    mu = validate.nonnegative("mu", mu)
    ids = torch.arange(data.num_clients) if clients is None else torch.as_tensor(clients).reshape(-1)
    if local.dim() != 2 or local.shape[0] != len(ids):
        raise ValueError(f"local must be [K, D] with one row per client ({len(ids)}), got {tuple(local.shape)}")
    x, y, mask = data.padded(ids)
    g0 = (engine.gradient(model, start.reshape(1, -1).expand(len(ids), -1), x, y, mask) if grad_start is None
          else grad_start)
    if g0.shape != local.shape:
        raise ValueError(f"grad_start must be [K, D] like local {tuple(local.shape)}, got {tuple(g0.shape)}")
    gJ = engine.gradient(model, local, x, y, mask) + mu * (local - start.reshape(1, -1))
    return (torch.linalg.vector_norm(gJ.double(), dim=1) / torch.linalg.vector_norm(g0.double(), dim=1)).numpy()


# ------------------------------------------------------------------ the chapter's claims
SRC_ASSUMP1 = ("Assumption 1: '1) F_i(w) is convex; 2) F_i(w) satisfies the Polyak-Lojasiewicz condition with the "
               "positive parameter l, which implies that F(w) - F(w*) <= (1/2l)||grad F(w)||^2; ... 4) F_i(w) is "
               "beta-Lipschitz ... for any w, w''; Sec. VI: 'a MLP network with a single hidden layer containing 256 "
               "hidden units ... ReLU units and softmax of 10 classes ... cross-entropy loss'")
assump1_vs_mlp = Claim(
    "assump1-vs-mlp",
    "Assumption 1 holds for the paper's ReLU MLP (Sec. VI) with the constants estimated for it: F_i is convex "
    "(item 1), beta-Lipschitz (item 4), and items 2 and 4 together bound F - F* by beta^2/(2l) everywhere",
    kind="derived", source=SRC_ASSUMP1, setting="reading",
    setting_note="F_i: the mean cross-entropy on one client's rows of the iid MNIST split, w trained on them by "
                 "the simulations' local solver (SGD, lr 0.05, batch 50) from the seeded initial model; beta and l "
                 "as estimated by wei2020/03 (the paper gives no values)",
    falsifier="F((w + pi w)/2) above F(w) for a hidden-unit permutation pi (with F(pi w) = F(w)), or a point on a "
              "ray from w where F - F(w) exceeds beta^2/(2l) (F(w) >= F*), or a slope along it above beta")
SRC_APPF = ("Appendix F, (63)-(65): 'This quantity is bounded by eps, we require |ln Pr[M(D')=o]/Pr[M(D)=o]| <= eps' "
            "(64); 'Considering the independence of adding noises, we know T ln(1 - q + q e^{-(2n Ds_D + ||Ds_D||^2)"
            "/2 sigma_A^2}) >= -eps' (65); Lemma 4, eq. (21)-(22)")
appF_one_sided = Claim(
    "appF-one-sided",
    "Appendix F's calibration of the K-random broadcast (Lemma 4: sigma_D of (21) with b of (22)) bounds one round's "
    "privacy loss on both sides of (64): the dropped side's delta at eps/T is no larger than the kept side's or "
    "the target delta",
    kind="derived", source=SRC_APPF, setting="reading",
    setting_note="N = 50, delta = 0.01, L = 1 (unstated); rows: the paper's Fig. 4-5 point (K = 20, T = 25, eps = "
                 "50, 60, 100), where b is undefined and (21) gives sigma_D = 0, and three points where b exists "
                 "(K = 40, T = 25, eps = 30; K = 45, T = 25, eps = 50; K = 20, T = 200, eps = 50); the add/remove "
                 "relation of (63)",
    falsifier="at every row, the hockey-stick delta of the mixture against the Gaussian (the side (65) drops) at "
              "eps/T at or below the kept side's delta or the target delta")
SRC_FIG10 = ("Sec. VI-C (Fig. 10): 'K-random scheduling based NbAFL algorithm has a better convergence performance than "
             "the normalized NbAFL algorithm for a larger T. This is because that K-random scheduling can bring "
             "down the variance of artificial noises with little performance loss'")
krandom_noise_variance = Claim(
    "krandom-noise-variance",
    "K-random scheduling brings down the variance of the artificial noise on the broadcast, against all N clients "
    "at the same (eps, delta), once Appendix F's calibration bounds both sides of the privacy loss (b' for b)",
    kind="derived", source=SRC_FIG10, setting="reading",
    setting_note="eps = 60 and 80 (Fig. 10), N = 50, delta = 0.01, L = 1 (unstated), every T from 1 to 50 and every "
                 "K with 1 < K < N (K unstated for Fig. 10)",
    falsifier="a (eps, T, K) of the grid where the two-sided K-random broadcast noise is below the all-clients noise "
              "of eq. (16)")
SRC_REMARK1 = ("Remark 1: 'to achieve a small global sensitivity in the downlink channel which is defined by Ds_D = "
               "max{2Cp_i/m} (9), the ideal condition is that all the clients should use the same size of local "
               "datasets for training, i.e., p_i = 1/N'; eq. (5): Ds_U^{D_i} = 2C/|D_i|; eq. (30)")
remark1_artefact = Claim(
    "remark1-artefact",
    "Remark 1: the downlink sensitivity max_i Ds_D^{D_i} is smallest when all local datasets have the same size "
    "(p_i = 1/N): an unequal split raises it",
    kind="derived", source=SRC_REMARK1, setting="reading",
    setting_note="eq. (4)'s local model for the squared loss (where (4) is exact: the mean of the samples, each of "
                 "norm C), the worst replacement; splits N = 2 (100, 900) and N = 50 (sizes from 240 to 2160, 60,000 "
                 "in all), C = 1",
    falsifier="an unequal split whose measured largest move of the aggregate equals the equal split's (2C/|D|)")
SRC_COMPOSITION = ("Sec. III-A: 'Considering L exposures of local parameters, we need to set sigma_U = cL Ds_U/eps due "
                   "to the linear relation between eps and sigma_U in the Gaussian mechanism'; Appendix B: 'To ensure a "
                   "global (eps, delta)-DP in downlink channels, we know the standard deviation of additive noises "
                   "can be set to sigma_A = cT Ds_D/eps'; Sec. II-C: the mechanism 'for eps in (0, 1)'")
basic_composition_argument = Claim(
    "basic-composition-argument",
    "The proofs' argument (referee notes (c) uplink-L-composition and B3 thm1-T-delta) establishes (eps, delta): "
    "n = L (or T) releases, each the classic mechanism at (eps/n, delta), composed linearly",
    kind="derived", source=SRC_COMPOSITION, setting="reading",
    setting_note="n = L = T = 25 (the uplink at L = T and the downlink's T broadcasts have the same multiplier cT/eps), "
                 "eps = 50, 60, 100, delta = 0.01; the conclusion itself is judged by wei2020/01 "
                 "(classic_at_paper_eps, classic_at_paper_eps_L_T)",
    falsifier="eps/n below 1 (the classic theorem applies to each release) and n times the exact per-release delta "
              "at eps/n at or below delta, at every eps")
SRC_THM3 = ("Theorem 3, eq. (23)-(25), from Appendix G (88)-(94): with K = N every client is scheduled and the "
            "algorithm is Algorithm 1, whose bound is Theorem 2, eq. (17)-(18)")
thm3_vs_thm2 = Claim(
    "thm3-not-thm2-at-K=N",
    "At K = N (every client scheduled, i.e. Algorithm 1) Theorem 3 gives a bound (0 < Q < 1) at the mu where "
    "Theorem 2's is tightest (mu* = 2 rho B (1 + B/2), where 0 < P < 1)",
    kind="derived", source=SRC_THM3, setting="reading",
    setting_note="N = 50; rho, B, l as estimated by wei2020/03 (the paper gives no values); mu = mu* of Theorem 2 "
                 "(the mu wei2020/03-05 use)",
    falsifier="Q of (24) below 1 at K = N and mu* (as it is whenever B is small enough against sqrt(N))")
SRC_THETA = ("Appendix D: 'In this convex case, where mu_bar = mu, if theta = 0, all subproblems are solved accurately' "
             "(55)-(56); Sec. VI: 'For the optimizer of networks, we set the learning rate to 0.002'")
theta_exact_solver = Claim(
    "theta-exact-solver",
    "The simulations' local solver solves Algorithm 1's subproblem (line 6) accurately enough for Lemma 3: its "
    "theta (48) is below 1/B, without which lambda_2 of (55) is non-negative for every mu",
    kind="derived", source=SRC_THETA, setting="reading",
    setting_note="one local epoch of SGD, batch 50, mu = 0.01, at the paper's lr 0.002 and at the project's lr 0.05 "
                 "(the solver is unstated; it fails only if it fails at both); theta at round 1 (the seeded initial "
                 "model), a lower bound on the run's theta; B the uniform bound (38) as estimated by wei2020/03",
    falsifier="the largest theta_i over the N = 50 clients at round 1 below 1/B at one of the two learning rates")
SRC_EQ87 = ("Appendix G, (87): 'Due the independence between w_i and n_i, we know E||sum_{i=1}^K p_i w_i||^2 = "
            "E{sum_{i=1}^K ||p_i w_i||^2}', p_i = 1/K")
appG_eq87 = Claim(
    "appG-eq87",
    "Eq. (87) holds for the scheduled clients' local models: E||sum_{i in S} p_i w_i||^2 = E sum_{i in S} "
    "||p_i w_i||^2 (p_i = 1/K)",
    kind="derived", source=SRC_EQ87, setting="reading",
    setting_note="K = 20 of N = 50 (Fig. 4-5), exact expectation over the K-subsets; the local models of one round "
                 "from the seeded initial model (SGD, lr 0.05, batch 50, mu = 0.01, one epoch); harmless for the "
                 "bound, since (88) keeps the cross terms (87) drops",
    falsifier="local models whose two sides of (87) agree within 1 %")

#: This chapter's claims by id (one cause, one claim).
CLAIMS = catalogue(globals())
