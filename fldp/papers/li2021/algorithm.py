"""Secure FedAvg (Li, Chang & Chi 2020, Algorithm 1) on the shared engine: K of N clients per
round run Q local SGD steps on mini-batches of b rows at the step size 0.2 / (1 + 0.01 t) of
Sec. 4.1, clip each step's gradient to G, add Gaussian noise z_k Df_t (eq. (9), Lemma 1) to the
model they upload, and the server forms (N/K) sum_k p_k w_k (line 21).  It holds the paper's
model (:func:`logreg`), the engine configuration (:func:`config`, whose docstring says how each
line is read, the two readings of the clipping included), the noise under eq. (9) or the
accountant (:func:`calibrate`, :class:`Uplink`), a run (:func:`run`), what a run really spends
(:func:`run_eps`, :func:`spent`: each upload read with and without amplification by subsampling,
composed over the uploads the honest-but-curious server sees), the aggregation's scale factor
(:func:`scale_factors`) and a simulated audit of one upload (:func:`audit_upload`).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch

from fldp.verdicts import clopper_pearson
from fldp import accounting, engine, validate
from fldp.data import FederatedData
from fldp.models import BinaryLogReg, Model
from fldp.papers.li2021 import theory as th

__all__ = [
    "RULES", "CLIPS", "DELTA", "G_CLIP", "LR0", "LR_DECAY", "PaperRate", "logreg", "check",
    "Calibration", "upload_event", "run_eps", "calibrate", "Uplink", "config", "scale_factors",
    "run", "spent", "audit_upload"
]

RULES = ("paper", "accountant")
CLIPS = ("batch", "sample")
DELTA = 1e-4   # Sec. 4.1
G_CLIP = 2.0   # Sec. 4.1
LR0, LR_DECAY = 0.2, 0.01  # Sec. 4.1: eta_t = (1/5) / (1 + 0.01 t)


class PaperRate:
    """eta_t = eta0 / (1 + decay t) at global local step t = 0, 1, ... (Sec. 4.1)."""

    def __init__(self, eta0: float = LR0, decay: float = LR_DECAY):
        self.eta0 = validate.positive("eta0", eta0)
        self.decay = validate.nonnegative("decay", decay)

    def __call__(self, t: int) -> float:
        return self.eta0 / (1.0 + self.decay * t)

    def __repr__(self) -> str:
        return f"PaperRate(eta0={self.eta0}, decay={self.decay})"


def logreg(in_features: int, *, l2: float = 1e-4) -> BinaryLogReg:
    """The paper's model (Sec. 4.1, 5): binary logistic regression with ``lambda ||w||^2``, the
    bias outside the norm (not penalised), lambda = 1e-4; its regulariser is 2 lambda-strongly convex."""
    return BinaryLogReg(in_features, l2, bias=True, l2_scale=1.0, penalize_bias=False)


def check(*, N: int, K: int, Q: int, b: int, n_min: int, G: float, eps: float, delta: float) -> None:
    """ValueError naming the first parameter out of its range."""
    N = validate.integer("N", N, 1)
    validate.integer("K", K, 1, N)
    validate.integer("Q", Q, 1)
    validate.integer("b", b, 1, n_min)
    validate.positive("G", G)
    validate.positive("eps", eps)
    validate.open_unit("delta", delta)


@dataclass(frozen=True)
class Calibration:
    """The upload noise of one secure-FedAvg run and what it spends.

    ``z[k]`` is client k's noise multiplier sigma_{t,k} / Df_t (constant over rounds);
    ``q[k] = Q b / n_k``; ``uploads`` the number of uploads the a-priori spend
    (``eps_run``) is composed over (default: every round, which bounds any selection).
    ``eps_upload`` is one upload's eps for the worst client at ``delta``: the paper's claim
    is ``eps``; ``eps_upload_theorem`` what the amplification theorem the paper cites
    gives with the exact Gaussian profile; ``eps_upload_accountant`` the accountant's.
    """

    rule: str
    clip: str
    eps: float
    delta: float
    N: int
    K: int
    Q: int
    b: int
    G: float
    n: np.ndarray
    q: np.ndarray
    z: np.ndarray
    uploads: int
    eps_upload_theorem: float
    eps_upload_accountant: float
    eps_run: float

    @property
    def worst(self) -> int:
        """The client with the least noise relative to its sensitivity."""
        return int(np.argmin(self.z))

    def df(self, *, eta: float) -> float:
        """The upload's l2 sensitivity Df_t at the upload step size eta_{t+1}: Lemma 1's
        4 Q G eta_{t+1}; under per-sample clipping 4 G eta_{t+1} (Q - 1 + 1/b), since only the
        step that uses the differing sample is bounded by 2G/b (:func:`config`,
        :func:`fldp.papers.li2021.theory.per_sample_sensitivity`)."""
        if self.clip == "sample":
            return th.per_sample_sensitivity(Q=self.Q, G=self.G, eta=eta, b=self.b)
        return th.lemma1_sensitivity(Q=self.Q, G=self.G, eta=eta)

    def sigma(self, *, eta: float) -> np.ndarray:
        """sigma_{t,k} for all clients at the upload step size eta_{t+1}."""
        return self.z * self.df(eta=eta)

    def as_dict(self) -> dict:
        w = self.worst
        return {"rule": self.rule, "clip": self.clip, "eps": self.eps, "delta": self.delta, "N": self.N, "K": self.K,
                "Q": self.Q, "b": self.b, "G": self.G, "n_min": int(self.n.min()),
                "n_max": int(self.n.max()), "q_worst": float(self.q[w]), "z_min": float(self.z.min()),
                "z_max": float(self.z.max()), "uploads": self.uploads,
                "eps_upload_theorem": self.eps_upload_theorem,
                "eps_upload_accountant": self.eps_upload_accountant, "eps_run": self.eps_run}


def upload_event(*, z: float, Q: int, b: int, n_k: int, amplified: bool = True):
    """One upload as a DpEvent: Gaussian (multiplier z against the replace-one sensitivity
    Df) sampled without replacement (Q b of n_k), or plain (``amplified=False``)."""
    g = accounting.gaussian(noise_multiplier=z)
    m = min(Q * b, n_k)
    if not amplified or m >= n_k:
        return g
    return accounting.sampled_without_replacement(g, sample_size=m, population=n_k)


def run_eps(*, z: float, Q: int, b: int, n_k: int, uploads: int, delta: float) -> dict:
    """Whole-run eps of a client making ``uploads`` uploads: both sound readings and the
    smaller, ``eps``.

    One upload of client k is a Gaussian mechanism with noise multiplier
    z_k = sigma_{t,k} / Df_t (the same every round: both scale with eta_{t+1}) on the union of
    Q mini-batches.  The two readings:

    * **amplified**: sampling without replacement of Q b of n_k rows under replace-one, RDP
      (Wang, Balle & Kasiviswanathan 2019; exact for Q = 1; for Q > 1 the union of Q batches
      contains a row with probability 1 - (1 - b/n_k)^Q <= Q b / n_k, the same mixture the
      paper's proof uses, read here with the larger ratio);
    * **unamplified**: the plain Gaussian of sensitivity Df (exact profile, composed exactly).

    The adversary is the honest-but-curious server, who sees who uploads: the spend is
    composed over the uploads each client makes, with no amplification by client sampling.
    """
    amp = accounting.epsilon(accounting.self_composed(upload_event(z=z, Q=Q, b=b, n_k=n_k), count=uploads),
                             delta=delta, accountant="rdp", relation="replace_one")
    plain = accounting.epsilon(accounting.self_composed(accounting.gaussian(noise_multiplier=z),
                                                        count=uploads), delta=delta)
    return {"amplified": amp, "unamplified": plain, "eps": min(amp, plain)}


def _paper_z(*, eps: float, delta: float, q: float) -> float:
    return th.sigma_eq9(eps=eps, delta=delta, q=q, sensitivity_df=1.0)


_CACHE: dict = {}


def calibrate(*, eps: float, n: np.ndarray, N: int, K: int, Q: int, b: int, rounds: int,
              G: float = G_CLIP, delta: float = DELTA, rule: str = "paper",
              uploads: Optional[int] = None, clip: str = "batch") -> Calibration:
    """The noise multipliers of every client (sizes ``n``) for budget (eps, delta).

    ``rule="paper"``: eq. (9), one upload (eps, delta)-DP by the paper's reading of
    amplification.  ``rule="accountant"``: the smallest z with which a client making
    ``uploads`` uploads (default ``rounds``) spends at most (eps, delta) in all (the
    amplified reading; by inversion), the same z for every client of the smallest size.
    ``uploads`` is the whole run by default; one upload is what the paper claims, so
    ``uploads=1`` is eq. (9)'s target met by a sound accountant.
    ``clip`` (``"batch"`` or ``"sample"``) sets the sensitivity the multipliers are applied to
    (:meth:`Calibration.df`), not the multipliers.  Cached: repeats of a setting (seeds)
    calibrate once.
    """
    key = (eps, tuple(np.asarray(n).tolist()), N, K, Q, b, rounds, G, delta, rule, uploads, clip)
    if key not in _CACHE:
        _CACHE[key] = _calibrate(eps=eps, n=n, N=N, K=K, Q=Q, b=b, rounds=rounds, G=G, delta=delta,
                                 rule=rule, uploads=uploads, clip=clip)
    return _CACHE[key]


def _calibrate(*, eps, n, N, K, Q, b, rounds, G, delta, rule, uploads, clip) -> Calibration:
    validate.choice("rule", rule, RULES)
    validate.choice("clip", clip, CLIPS)
    n = np.asarray(n, dtype=np.int64)
    check(N=N, K=K, Q=Q, b=b, n_min=int(n.min()), G=G, eps=eps, delta=delta)
    rounds = validate.integer("rounds", rounds, 1)
    uploads = rounds if uploads is None else validate.integer("uploads", uploads, 1, rounds)
    q = Q * b / n.astype(float)
    if np.any(q > 1):
        k = int(np.argmax(q))
        raise ValueError(f"Q={Q}, b={b} are out of range: Q b must be <= n_k for every client "
                         f"(client {k} holds n_k={int(n[k])} rows)")
    small = int(n.min())
    if rule == "paper":
        z = np.array([_paper_z(eps=eps, delta=delta, q=v) for v in q])
    else:
        make = lambda v: accounting.self_composed(upload_event(z=v, Q=Q, b=b, n_k=small), count=uploads)
        z0 = accounting.calibrate_noise_multiplier(make, target_eps=eps, target_delta=delta,
                                                   accountant="rdp", relation="replace_one")
        z = np.full(len(n), z0)
    w = int(np.argmin(z))
    theorem = th.amplified_gaussian_eps(sigma=float(z[w]), sensitivity_df=1.0, delta=delta, b=b,
                                        n_k=int(n[w]), Q=Q)
    one = run_eps(z=float(z[w]), Q=Q, b=b, n_k=int(n[w]), uploads=1, delta=delta)["eps"]
    whole = run_eps(z=float(z[w]), Q=Q, b=b, n_k=int(n[w]), uploads=uploads, delta=delta)["eps"]
    return Calibration(rule, clip, float(eps), float(delta), N, K, Q, b, float(G), n, q, z, uploads,
                       float(theorem), float(one), float(whole))


class Uplink(engine.NoiseUplink):
    """Eq. (9)'s noise on each upload: sigma_{t,k} = z_k Df_t, Df_t = 4 Q G eta_{t+1} (smaller
    under per-sample clipping, :meth:`Calibration.df`) with t + 1 = the global step of the
    upload; its event is :func:`upload_event`."""

    def __init__(self, cal: Calibration, rate):
        z = torch.as_tensor(cal.z, dtype=torch.float64)
        df = lambda ctx: cal.df(eta=rate(ctx.step + cal.Q))
        super().__init__(lambda ctx: z[ctx.clients] * df(ctx), "gaussian", lambda ctx: df(ctx))
        object.__setattr__(self, "cal", cal)

    def event(self, ctx):
        c = self.cal
        return tuple(upload_event(z=float(c.z[k]), Q=c.Q, b=c.b, n_k=int(c.n[k])) for k in ctx.clients)


def config(*, Q: int, b: int, K: int, rounds: int, G: float = G_CLIP, clip: str = "batch",
           eta0: float = LR0, decay: float = LR_DECAY, private: bool = True, seed: int = 0,
           eval_every: int = 1, eval_train: bool = True, device: str = "cpu") -> engine.FLConfig:
    """The engine configuration of secure FedAvg (Li, Chang & Chi 2020, Algorithm 1).
    ``private=False`` gives the paper's "without DP" (sigma = 0): the same clipping, no noise.
    The engine with:

    * K of N clients per round, drawn uniformly without replacement (line 22);
    * Q local SGD steps per round, each on a mini-batch of b rows drawn without replacement
      (``sampling="fixed"``), with the step size eta_t = 0.2 / (1 + 0.01 t) on the **global**
      step counter t (Sec. 4.1; the engine passes the global step to ``lr``, :class:`PaperRate`);
    * gradient clipping to G each step (Sec. 4.1: "determined by performing the gradient
      clipping on each iteration"): the paper clips the mini-batch gradient (``clip="batch"``,
      which bounds one sample's influence only at b = 1 or through Lemma 1's coarse 2G per
      step); ``clip="sample"`` clips each sample's gradient before averaging (DP-SGD's way), so
      that one sample moves the mean gradient of the step that uses it by at most 2G/b; the
      steps after it start from different iterates, where the clipped mean gradients can still
      differ by up to 2G, so Lemma 1's proof gives Df = 4 G eta_{t+1} (Q - 1 + 1/b) (the
      per-sample reading: Df / b at Q = 1, close to Df for large Q);
    * Gaussian noise on the uploaded model only (line 12, when mod(t+1, Q) = 0), std
      sigma_{t,k} = z_k Df_t (:class:`Uplink`, :func:`calibrate`);
    * the server's (N/K) sum_k p_k w_k (line 21, ``aggregation="unbiased"``;
      :func:`scale_factors`).
    """
    validate.choice("clip", clip, CLIPS)
    return engine.FLConfig(
        num_rounds=rounds, local_steps=Q, batch_size=b, sampling="fixed", lr=PaperRate(eta0, decay),
        clip=G, clip_mode="batch_grad" if clip == "batch" else "sample_grad", upload="params",
        clients_per_round=K, aggregation="unbiased", noise=private, seed=seed,
        eval_every=eval_every, eval_train=eval_train, device=device)


def scale_factors(data: FederatedData, *, K: int, rounds: int, seed: int = 0) -> np.ndarray:
    """(N/K) sum_{k in S_t} p_k for the clients the engine selects in rounds 1..``rounds``:
    the factor by which line 21's aggregation scales the model (1 for equal clients).  Over
    parameters the server's (N/K) sum_k p_k w_k multiplies the model by this factor, which is 1
    only when the sampled clients hold exactly K/N of the data."""
    cfg = engine.FLConfig(num_rounds=rounds, local_steps=1, clients_per_round=K, seed=seed)
    p = data.weights.double()
    return np.array([float(data.num_clients / K * p[engine.select_clients(cfg, data.num_clients, t)].sum())
                     for t in range(1, rounds + 1)])


def run(model: Model, data: FederatedData, *, eps: float = 0.5, Q: int = 1, b: int = 1,
        K: int = 50, rounds: int = 100, G: float = G_CLIP, delta: float = DELTA,
        clip: str = "batch", rule: str = "paper", uploads: Optional[int] = None,
        eta0: float = LR0, decay: float = LR_DECAY, private: bool = True, seed: int = 0,
        eval_every: int = 1, eval_train: bool = True, observer: Optional[engine.Observer] = None,
        progress: bool = False, device: str = "cpu"):
    """Run secure FedAvg for ``rounds`` = T/Q communication rounds; returns ``(history,
    calibration)`` (None when ``private=False``).  The realised spend: :func:`spent`."""
    check(N=data.num_clients, K=K, Q=Q, b=b, n_min=int(data.counts.min()), G=G, eps=eps, delta=delta)
    cfg = config(Q=Q, b=b, K=K, rounds=rounds, G=G, clip=clip, eta0=eta0, decay=decay,
                 private=private, seed=seed, eval_every=eval_every, eval_train=eval_train, device=device)
    cal = None
    if private:
        cal = calibrate(eps=eps, n=data.counts.numpy(), N=data.num_clients, K=K, Q=Q, b=b,
                        rounds=rounds, G=G, delta=delta, rule=rule, uploads=uploads, clip=clip)
    with warnings.catch_warnings():  # the chapter measures the scale factor (scale_factors)
        warnings.filterwarnings("ignore", message="aggregation='unbiased' over parameters")
        hist = engine.run(model, data, cfg, uplink=Uplink(cal, cfg.lr) if cal else None,
                          observer=observer, progress=progress,
                          desc=f"secure FedAvg Q={Q} b={b} K={K} eps={eps if private else 'inf'}")
    return hist, cal


def spent(history, cal: Calibration) -> dict:
    """What the run really spent at ``cal.delta``: each client's uploads composed under both
    readings (:func:`run_eps`), the smaller per client, then the worst client (``eps``);
    ``amplified`` / ``unamplified`` are the worst clients of each reading alone.  Both
    grow with the number of uploads, so among clients of equal noise only the one that
    uploaded most is accounted."""
    tally: dict = {}
    for rec in getattr(history, "privacy", history):
        for c in rec.clients:
            tally[c] = tally.get(c, 0) + 1
    top: dict = {}
    for c, u in tally.items():
        z = float(cal.z[c])
        if z not in top or u > tally[top[z]]:
            top[z] = c
    amp = accounting.spent(history, delta=cal.delta, accountant="rdp", relation="replace_one",
                           clients=sorted(top.values())).per_client
    plain = {c: accounting.epsilon(accounting.self_composed(accounting.gaussian(
        noise_multiplier=float(cal.z[c])), count=tally[c]), delta=cal.delta) for c in amp}
    best = {c: min(amp[c], plain[c]) for c in amp}
    worst = max(best, key=best.get)
    return {"eps": best[worst], "amplified": max(amp.values()), "unamplified": max(plain.values()),
            "uploads_max": max(tally.values()), "worst_client": worst, "eps_claim": cal.eps}


def audit_upload(*, eps: float, delta: float, Q: int, b: int, n_k: int, trials: int, alpha: float = 0.05,
                 seed: int = 0) -> dict:
    """A simulated audit of ONE upload under eq. (9)'s noise: a certified *lower* bound on its eps.

    The canary is a row whose presence moves the upload by Lemma 1's Df along one coordinate
    (the paper's own sensitivity: the audit checks eq. (9)'s calibration, not whether a real
    row can move an upload that far); it is in the upload's Q mini-batches with probability
    1 - (1 - b/n_k)^Q (eq. (7)); the noise is eq. (9)'s sigma = z Df.  If eq. (9) made the
    upload (eps, delta)-DP, every mechanism with that sensitivity and sampling would be, this
    one included.  :func:`fldp.audit.simulate` draws ``trials`` uploads without and with the
    canary, scored by the exact likelihood ratio; the threshold is chosen on the first half of
    each side, on a grid that reaches the rarest tails (at Q = b = 1 the canary is in 0.3 % of
    the uploads, finer than :func:`fldp.audit.audit_scores`' 0.5 % quantile grid), and the
    Clopper-Pearson counts on the second half certify eps >= ``eps_lower`` with confidence
    1 - ``alpha`` (:func:`fldp.audit.eps_from_rates`).  ``resolution``: what perfect
    separation of the second half would certify.
    """
    from fldp import audit

    trials = validate.integer("trials", trials, 8)
    q = th.sampling_ratio(b=b, n_k=n_k, Q=Q)
    z = th.sigma_eq9(eps=eps, delta=delta, q=q, sensitivity_df=1.0)
    p_in = th.inclusion_prob(b=b, n_k=n_k, Q=Q)
    s_out, s_in = audit.simulate(noise="gaussian", scale=z, sensitivity=1.0, rounds=1, trials=trials,
                                 sampling_prob=p_in, seed=seed)
    h = trials // 2

    def bound(out, inn, t):
        tp, fp = int((inn >= t).sum()), int((out >= t).sum())
        tpr_lo = clopper_pearson(tp, len(inn), alpha=alpha)[0]
        fpr_hi = clopper_pearson(fp, len(out), alpha=alpha)[1]
        return audit.eps_from_rates(tpr=tpr_lo, fpr=fpr_hi, delta=delta), tp, fp

    sel = np.concatenate([s_out[:h], s_in[:h]])
    levels = np.r_[np.linspace(0.0, 1.0, 201), 1.0 - np.geomspace(1.0 / sel.size, 0.5, 200)]
    t = max(np.unique(np.quantile(sel, levels)), key=lambda c: bound(s_out[:h], s_in[:h], c)[0])
    eps_lower, tp, fp = bound(s_out[h:], s_in[h:], t)
    n = trials - h
    return {"eps_lower": eps_lower, "resolution": audit.max_certifiable_eps(n, alpha=alpha, delta=delta),
            "tp": tp, "fp": fp, "n": n, "threshold": float(t), "z": z, "inclusion": p_in, "alpha": alpha}
