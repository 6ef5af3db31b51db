"""Empirical privacy audit: a certified *lower* bound on eps from a distinguishing experiment, in
the style of Jagielski, Ullman & Oprea 2020 ("Auditing differentially private machine learning:
how private is private SGD?") and Nasr et al. 2021 / 2023 ("Adversary instantiation"; "Tight
auditing of differentially private machine learning").  The mechanism runs ``trials`` times on
a dataset D and ``trials`` times on its neighbour D' (D with a canary); a distinguisher scores
every output, a threshold is chosen on one half of the trials and true and false positives are
counted on the other (:func:`audit_scores`), and Clopper-Pearson intervals turn the counts into
eps (:func:`eps_from_rates`, Kairouz et al. 2015) or into a Gaussian-DP reading (:func:`gdp_mu`,
:func:`gdp_eps`; Dong, Roth & Su 2022), up to the audit's resolution
(:func:`max_certifiable_eps`).  The scores come from an exact simulation of one client's canary
under a scheme's mechanism (:func:`simulate`, :func:`audit_mechanism`) or from one round of the
real engine (:func:`audit_uploads`), which also catches an implementation that skips clipping.
The statistics are a few lines of scipy, rather than maintained auditing code, which needs
tensorflow.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable, Optional, Tuple

import numpy as np
import torch
from scipy import stats

from fldp import engine, mechanisms, seeding, validate
from fldp.verdicts import clopper_pearson
from fldp.data import FederatedData
from fldp.models import Model

__all__ = [
    "eps_from_rates", "gdp_mu", "gdp_eps", "max_certifiable_eps", "AuditResult",
    "audit_scores", "simulate", "audit_mechanism", "audit_uploads"
]


def eps_from_rates(*, tpr: float, fpr: float, delta: float) -> float:
    """The smallest eps an (eps, delta)-DP mechanism could have with this (TPR, FPR), floored at 0
    (inf when FPR = 0 < TPR - delta).

    An (eps, delta)-DP mechanism has TPR <= e^eps FPR + delta and 1 - FPR <= e^eps (1 - TPR) +
    delta (Kairouz et al. 2015), so
    ``eps >= max(log((TPR - delta) / FPR), log((1 - FPR - delta) / (1 - TPR)))``.  With the
    Clopper-Pearson bounds TPR_lo and FPR_hi (each side at ``alpha/2``) in place of the rates,
    the bound holds with confidence ``1 - alpha``."""
    tpr, fpr, delta = (validate.probability(n, v) for n, v in (("tpr", tpr), ("fpr", fpr), ("delta", delta)))

    def ratio(a, b):
        return 0.0 if a <= 0 else (math.inf if b <= 0 else math.log(a / b))

    return max(0.0, ratio(tpr - delta, fpr), ratio(1 - fpr - delta, 1 - tpr))


def gdp_mu(*, tpr: float, fpr: float) -> float:
    """The smallest mu of a mu-GDP mechanism with this (TPR, FPR): Phi^-1(1 - FPR) - Phi^-1(1 - TPR), floored at 0.

    The Gaussian-DP reading (Dong, Roth & Su 2022) of an audit's point, converted to eps at delta
    by :func:`gdp_eps`; it is the tighter reading when the mechanism is Gaussian."""
    tpr, fpr = validate.probability("tpr", tpr), validate.probability("fpr", fpr)
    if fpr <= 0 or tpr >= 1:
        return math.inf
    a, b = stats.norm.ppf(1 - fpr), stats.norm.ppf(1 - tpr)
    if math.isinf(a) or math.isinf(b):  # 1 - rate rounded to 1 (a rate below 6e-17): the tail directly
        a, b = stats.norm.isf(fpr), stats.norm.isf(tpr)
    return max(0.0, float(a - b))


def gdp_eps(*, mu: float, delta: float) -> float:
    """eps at delta of a mu-GDP mechanism (its profile is the Gaussian mechanism's with sigma = 1/mu);
    NaN at delta = 0, where no mu > 0 has a finite eps (the reading does not apply to pure DP);
    inf at mu = inf (perfect separation)."""
    mu, delta = validate.real("mu", mu, allow_inf=True), validate.probability("delta", delta)
    if mu < 0:
        raise ValueError(f"mu={mu!r} is out of range: mu must be in [0, inf]")
    if delta == 0:
        return math.nan
    if mu <= 0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    if math.isinf(1.0 / mu):  # a subnormal mu: sigma = 1/mu overflows, and its eps is 0
        return 0.0
    return mechanisms.gaussian_eps(sigma=1.0 / mu, delta=delta, sensitivity=1.0)


def max_certifiable_eps(n: int, *, alpha: float, delta: float) -> float:
    """What perfect separation on ``n`` evaluation trials per side certifies: the audit's resolution.

    About log(n / ln(2/alpha)): a claim of a larger eps can be neither confirmed nor refuted."""
    n = validate.integer("n", n, 1)
    tpr_lo, _ = clopper_pearson(n, n, alpha=alpha)
    _, fpr_hi = clopper_pearson(0, n, alpha=alpha)
    return eps_from_rates(tpr=tpr_lo, fpr=fpr_hi, delta=delta)


@dataclass(frozen=True)
class AuditResult:
    """The audit's outcome: the certified lower bounds and what they rest on."""

    eps_lower: float          # from the (eps, delta) trade-off, confidence 1 - alpha
    eps_lower_gdp: float      # from the Gaussian-DP reading of the same point
    mu_lower: float
    eps_max: float            # the resolution: what perfect separation would certify
    tpr_lower: float
    fpr_upper: float
    tp: int
    fp: int
    n: int                    # evaluation trials per side
    threshold: float
    delta: float
    alpha: float

    def as_dict(self) -> dict:
        return asdict(self)


def _bound(s_out: np.ndarray, s_in: np.ndarray, t: float, *, delta: float, alpha: float) -> tuple:
    """Counts at threshold ``t`` and what they certify: (eps lower bound, TPR_lo, FPR_hi, tp, fp)."""
    tp, fp = int((s_in >= t).sum()), int((s_out >= t).sum())
    tpr_lo, _ = clopper_pearson(tp, len(s_in), alpha=alpha)
    _, fpr_hi = clopper_pearson(fp, len(s_out), alpha=alpha)
    return eps_from_rates(tpr=tpr_lo, fpr=fpr_hi, delta=delta), tpr_lo, fpr_hi, tp, fp


def _best_threshold(s_out: np.ndarray, s_in: np.ndarray, *, delta: float, alpha: float) -> tuple:
    """(threshold, its bound) with the largest Clopper-Pearson bound on the selection half."""
    cands = np.unique(np.quantile(np.concatenate([s_out, s_in]), np.linspace(0.0, 1.0, 201)))
    best, best_t = -1.0, float(cands[0])
    for t in cands:
        e = _bound(s_out, s_in, t, delta=delta, alpha=alpha)[0]
        if e > best:
            best, best_t = e, float(t)
    return best_t, best


def _certify(ev_out: np.ndarray, ev_in: np.ndarray, t: float, *, delta: float, alpha: float) -> AuditResult:
    """The audit's result from the evaluation half at the threshold chosen on the selection half."""
    eps, tpr_lo, fpr_hi, tp, fp = _bound(ev_out, ev_in, t, delta=delta, alpha=alpha)
    mu = gdp_mu(tpr=tpr_lo, fpr=fpr_hi)
    n = min(len(ev_in), len(ev_out))
    return AuditResult(eps, gdp_eps(mu=mu, delta=delta), mu, max_certifiable_eps(n, alpha=alpha, delta=delta),
                       tpr_lo, fpr_hi, tp, fp, n, t, delta, alpha)


def audit_scores(scores_out, scores_in, *, delta: float, alpha: float = 0.05, seed: int = 0) -> AuditResult:
    """Certified lower bound from scores (higher = "the canary is in"): a threshold chosen on a
    random half of each side's trials, counts on the other half."""
    s_out = validate.array("scores_out", scores_out, validate.real).ravel()
    s_in = validate.array("scores_in", scores_in, validate.real).ravel()
    if min(len(s_out), len(s_in)) < 4:
        raise ValueError(f"scores_out, scores_in: need at least 4 trials per side, got {len(s_out)} and {len(s_in)}")
    delta, alpha = validate.probability("delta", delta), validate.open_unit("alpha", alpha)
    rng = seeding.numpy_rng(validate.integer("seed", seed, 0), "audit_split")
    s_out, s_in = rng.permutation(s_out), rng.permutation(s_in)
    h_out, h_in = len(s_out) // 2, len(s_in) // 2
    t, _ = _best_threshold(s_out[:h_out], s_in[:h_in], delta=delta, alpha=alpha)
    return _certify(s_out[h_out:], s_in[h_in:], t, delta=delta, alpha=alpha)


def simulate(*, noise: str, scale: float, sensitivity: float, rounds: int, trials: int,
             sampling_prob: float = 1.0, seed: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """Scores ``(without the canary, with it)`` of ``trials`` runs each: the client's releases on
    the canary's coordinate over ``rounds`` releases, each adding ``noise`` ("gaussian": std
    ``scale``; "laplace": scale ``scale``) and, with the canary, a shift of ``sensitivity`` in
    each release it is part of (probability ``sampling_prob``, independently per release).
    Score: the exact log-likelihood ratio of the ``rounds`` releases (Neyman-Pearson optimal).

    Exact and fast: a Dirac canary of the sensitivity the scheme assumes moves one coordinate, and
    the other coordinates are identically distributed under D and D', so they carry no
    information.  The releases are composed over the rounds the client is exposed and, where
    the scheme claims amplification, the canary is present in each with probability ``sampling_prob``
    (Poisson).  Since the sensitivity is taken as given, an implementation that skips clipping
    goes unseen here: :func:`audit_uploads` catches it."""
    validate.choice("noise", noise, ("gaussian", "laplace"))
    scale, s = validate.positive("scale", scale), validate.positive("sensitivity", sensitivity)
    rounds, trials = validate.integer("rounds", rounds, 1), validate.integer("trials", trials, 4)
    q = validate.probability("sampling_prob", sampling_prob)
    g = seeding.torch_generator(validate.integer("seed", seed, 0), "audit_releases")
    def sample(shape):
        if noise == "gaussian":
            return mechanisms.gaussian_noise(shape, sigma=scale, generator=g, dtype=torch.float64)
        return mechanisms.laplace_noise(shape, scale=scale, generator=g, dtype=torch.float64)

    x_out = sample((trials, rounds))
    present = (torch.rand(trials, rounds, generator=g, dtype=torch.float64) < q).double()
    x_in = sample((trials, rounds)) + s * present

    def llr(x):
        if noise == "gaussian":
            one = (2 * s * x - s * s) / (2 * scale * scale)   # log N(x; s, scale^2) - log N(x; 0, scale^2)
        else:
            # log Lap(x; s, scale) - log Lap(x; 0, scale) = (|x| - |x - s|)/scale, written as a clamp so
            # that its two point masses are exactly +-s/scale (rounding would otherwise differ between
            # the groups, a difference the threshold search would exploit)
            one = torch.clamp(2 * x - s, -s, s) / scale
        if q == 1.0:
            per = one
        elif q == 0.0:
            per = torch.zeros_like(one)
        else:  # the canary is in with probability q: log((1 - q) + q e^one)
            per = torch.logaddexp(torch.full_like(one, math.log1p(-q)), one + math.log(q))
        return per.sum(dim=1).numpy()

    return llr(x_out), llr(x_in)


def audit_mechanism(*, delta: float, alpha: float = 0.05, **simulation) -> AuditResult:
    """:func:`audit_scores` of :func:`simulate` (same keywords)."""
    s_out, s_in = simulate(**simulation)
    return audit_scores(s_out, s_in, delta=delta, alpha=alpha, seed=simulation.get("seed", 0))


def audit_uploads(model: Model, client_out: Tuple[torch.Tensor, torch.Tensor],
                  client_in: Tuple[torch.Tensor, torch.Tensor], config: engine.FLConfig, *,
                  uplink: Optional[Callable], trials: int, delta: float, alpha: float = 0.05,
                  start: Optional[torch.Tensor] = None, seed: int = 0) -> AuditResult:
    """End-to-end audit of one round's uploads: ``trials`` clients hold ``client_out`` = (x, y)
    and ``trials`` hold ``client_in`` (the neighbour with the canary); one :func:`fldp.engine.round_step`
    of ``config`` (local training, its clipping) with the ``uplink`` noise hook gives every
    client's noisy upload; the score is the upload's projection on the difference of the two
    groups' mean uploads in the selection half (the auditor runs the mechanism on both
    neighbours, as in Nasr et al. 2021), or the upload's norm (either sign) when that separates
    better there (a noise scaled to the update's norm gives itself away); the score and threshold
    are chosen on the selection half, the counts made on the other half.  The trials are extra
    clients of one batched call, half holding D and half D': this audits the real code (local
    training, clipping, the uplink noise hook), so it catches an implementation that skips
    clipping, which :func:`simulate` (that takes the sensitivity as given) cannot."""
    trials = validate.integer("trials", trials, 8)
    xs = [client_out[0]] * trials + [client_in[0]] * trials
    ys = [client_out[1]] * trials + [client_in[1]] * trials
    data = FederatedData.from_clients(xs, ys, client_out[0][:1], client_out[1][:1])
    cfg = engine.with_config(config, num_rounds=1, clients_per_round=None, seed=seed, eval_every=10**9)
    state = engine.init_state(model, data, cfg, init_params=start)
    seen = {}
    engine.round_step(model, data, cfg, state, uplink=uplink, observer=lambda ctx: seen.update(up=ctx.uploads,
                                                                                                 who=ctx.clients))
    up, who = seen["up"].double(), seen["who"]
    order = torch.argsort(who)
    up = up[order]
    u_out, u_in = up[:trials], up[trials:]
    h = trials // 2
    direction = u_in[:h].mean(0) - u_out[:h].mean(0)
    direction = direction / direction.norm().clamp_min(1e-300)
    scores = {"projection": lambda u: (u @ direction).numpy(), "norm": lambda u: u.norm(dim=1).numpy(),
              "-norm": lambda u: -u.norm(dim=1).numpy()}
    chosen = {name: _best_threshold(f(u_out[:h]), f(u_in[:h]), delta=delta, alpha=alpha) for name, f in scores.items()}
    best = max(chosen, key=lambda name: chosen[name][1])  # score and threshold chosen on the selection half only
    return _certify(scores[best](u_out[h:]), scores[best](u_in[h:]), chosen[best][0], delta=delta, alpha=alpha)
