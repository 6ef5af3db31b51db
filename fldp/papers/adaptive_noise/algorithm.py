"""The adaptive CLT noise scheme (Algorithm 1) and the paper's DP baseline (Sec. 6.2), on the
shared engine.  The scheme: K of N clients per round train locally and upload their update
Delta w_k, to which :class:`AdaptiveUplink` adds, per layer, noise of norm c ||Delta w_k|| redrawn
until its direction passes the filter (lines 8-12, :func:`perturb`); the server aggregates
sum_k (n_k/n) (Delta w_k + r_k) (line 14), with dropout (Sec. 7.2).  The baseline clips each
update to the median S of the update norms and adds Gaussian noise c_dp S / eps
(:func:`dp_uplink`, or :func:`dp_downlink` for the central reading); :func:`dp_spent` gives what
it really spends, the paper's guarantee at best.  The scheme has no (eps, delta): its noise
scales with the update, so a client whose update is zero releases it exactly (eps = inf for any
delta < 1); its privacy is measured by attacks.  :func:`config`, :func:`hooks` and :func:`run`
assemble a run; :func:`simulate_aggregate` checks Theorem 1 and Fig. 3 by simulation.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Optional

import torch

from fldp import accounting, attacks, engine, mechanisms, seeding, validate
from fldp.data import FederatedData
from fldp.models import Model
from fldp.papers.adaptive_noise import theory as th

__all__ = [
    "SCHEMES", "DP_READINGS", "DP_CLIPS", "DELTA", "BATCH", "LR", "EPOCHS", "dp_constant",
    "dp_noise_multiplier", "layer_slices", "perturb", "AdaptiveUplink", "dp_uplink", "dp_downlink",
    "config", "hooks", "Run", "run", "dp_spent", "simulate_aggregate"
]

SCHEMES = ("regular", "ours", "dp")
DP_READINGS = ("local", "central")
#: The DP baseline's clipping bound S: the median of this round's update norms ("round"), or
#: of every update norm of the rounds before ("lagged": the paper's "over the course of training").
DP_CLIPS = {"round": "median", "lagged": "median_lagged"}
DELTA = 1e-5               # Sec. 6.2
BATCH, LR, EPOCHS = 128, 0.1, 5   # Sec. 6.3


def dp_constant(*, delta: float = DELTA) -> float:
    """c_dp = sqrt(2 log(1.25/delta)) (Sec. 6.2; Dwork & Roth 2014, Thm A.1)."""
    return mechanisms.classic_gaussian_c(delta=delta)


def dp_noise_multiplier(*, eps: float, delta: float = DELTA) -> float:
    """sigma / S = c_dp / eps of the DP baseline (Sec. 6.2)."""
    return dp_constant(delta=delta) / validate.positive("eps", eps)


def layer_slices(model: Model) -> list[tuple[str, int, int]]:
    """(name, start, end) of every parameter tensor in the flat vector: the 'layers' the
    noise is drawn for (Sec. 4.2.2)."""
    return [(n, a, b) for n, (a, b) in model._offsets.items()]


#: Candidate noise held at once by the filter's sampler, in elements, per device type (32 MiB of
#: float32 on a CPU, where a large layer's draws are arithmetic; 512 MiB on a GPU, where one
#: launch of many candidates replaces many small ones).
CANDIDATE_BUDGET = {"cpu": 1 << 23, "cuda": 1 << 27}


@functools.lru_cache(maxsize=1024)
def _candidates(dim: int, p: float, c: float, reading: str, device_type: str) -> int:
    """How many candidates a client draws per launch in a layer of ``dim`` parameters: the
    expected tries 1 / P (rounded up), within the device's budget; on a CPU also within 2^16
    elements (a large layer's extra draws would cost more arithmetic than the launches save)."""
    tries = th.expected_tries(dim=dim, p=p, c=max(c, 1e-12), reading=reading)
    budget = CANDIDATE_BUDGET.get(device_type, CANDIDATE_BUDGET["cpu"])
    cap = max(1, budget // dim) if device_type == "cuda" else max(1, (1 << 16) // dim)
    return int(min(cap, math.ceil(tries) if math.isfinite(tries) else cap))


def perturb(updates: torch.Tensor, *, slices, c: float, p: Optional[float], generators,
            reading: str = "noise", max_tries: int = 100_000):
    """Algorithm 1, lines 8-12, for the updates ``[K, D]`` of K clients (client k draws from
    ``generators[k]``): per layer, r = c ||u|| z / ||z||, z ~ N(0, I), redrawn until the angle
    passes theta_thres(dim, p); ``p=None`` skips the filter.  Returns (noisy updates, tries
    ``[K, L]``: the draws each client needed per layer).

    The sampler draws several candidates of a client per launch (:func:`_candidates`), each by its
    own call on the client's generator, tests them together and keeps the first that passes, then
    sets the generator to the state after that one: the noise, the tries and the generator's next
    numbers are exactly those of drawing and testing one candidate at a time (tested against that
    sampler, ``benchmarks/filter_bench.py``), at a lower cost per try."""
    validate.nonnegative("c", c)
    validate.choice("reading", reading, th.READINGS)
    validate.integer("max_tries", max_tries, 1)
    k = updates.shape[0]
    if len(generators) != k:
        raise ValueError(f"need one generator per client row (got {len(generators)} for {k} rows)")
    out = updates.clone()
    tries = torch.zeros(k, len(slices), dtype=torch.int64)
    device_type = updates.device.type
    for j, (name, a, b) in enumerate(slices):
        d = b - a
        u = updates[:, a:b]
        scale = c * torch.linalg.vector_norm(u, dim=1, keepdim=True)
        thr = None if p is None else math.radians(th.threshold(dim=d, p=p))
        want = 1 if p is None else _candidates(d, float(p), float(c), reading, device_type)
        budget = CANDIDATE_BUDGET.get(device_type, CANDIDATE_BUDGET["cpu"])
        todo = list(range(k))
        while todo:
            left = max_tries - int(tries[todo, j].max())
            if left <= 0:
                raise RuntimeError(
                    f"direction filter: p={p} in layer {name!r} ({d} parameters) needed more than "
                    f"max_tries={max_tries} draws (expected {th.expected_tries(dim=d, p=p, c=max(c, 1e-12), reading=reading):.3g})")
            m = min(want, left)
            group = todo[:max(1, budget // (m * d))]
            z = torch.empty(len(group), m, d, dtype=u.dtype, device=u.device)
            states = []
            for g, i in enumerate(group):
                states.append([])
                for t in range(m):
                    z[g, t].normal_(generator=generators[i])
                    if m > 1:
                        states[g].append(generators[i].get_state())
            rows = torch.tensor(group)
            cand = scale[rows, None] * z / torch.linalg.vector_norm(z, dim=2, keepdim=True)
            if thr is None:
                ok = torch.ones(len(group), m, dtype=torch.bool)
            else:
                ug = u[rows, None].expand_as(cand)
                ref = cand if reading == "noise" else ug + cand
                cos = torch.nn.functional.cosine_similarity(ug, ref, dim=2)
                ok = ((torch.arccos(cos.clamp(-1, 1)) < thr) | (scale[rows] == 0)).cpu()
            passed = ok.any(1).tolist()
            first = ok.int().argmax(1).tolist()   # the first True in draw order, where any
            for g, i in enumerate(group):
                if passed[g]:
                    out[i, a:b] += cand[g, first[g]]
                    tries[i, j] += first[g] + 1
                    if first[g] < m - 1:
                        generators[i].set_state(states[g][first[g]])
                else:
                    tries[i, j] += m
            todo = [i for g, i in enumerate(group) if not passed[g]] + todo[len(group):]
    return out, tries


@dataclass
class AdaptiveUplink:
    """The scheme's uplink hook (noise scale ``c``, filter ``p``; ``None``: no filter).
    ``tries`` keeps each round's draws per client and layer (``[K, L]``) for Table 4.

    For every layer (every parameter tensor, weights and biases apart: :func:`layer_slices`)
    noise r ~ N(0, I) rescaled to ||r|| = c ||Delta w_k|| of that layer, redrawn until its angle
    passes the layer's direction filter theta_thres = mean + p std (Algorithm 1, lines 8-12;
    ``reading``: which angle, see
    :func:`fldp.papers.adaptive_noise.theory.acceptance_probability`)."""

    c: float
    p: Optional[float] = 0.0
    reading: str = "noise"
    max_tries: int = 100_000
    tries: list = field(default_factory=list)

    def __post_init__(self):
        validate.nonnegative("c", self.c)
        validate.choice("reading", self.reading, th.READINGS)

    def __call__(self, ctx: engine.RoundContext, x: torch.Tensor) -> torch.Tensor:
        if ctx.config.upload != "update":
            raise ValueError(f"the adaptive noise perturbs updates: needs upload='update' "
                             f"(got {ctx.config.upload!r})")
        noisy, tries = perturb(x, slices=layer_slices(ctx.model), c=self.c, p=self.p,
                               generators=ctx.generators("uplink"), reading=self.reading,
                               max_tries=self.max_tries)
        self.tries.append(tries)
        return noisy


def dp_uplink(*, eps: float, delta: float = DELTA) -> engine.NoiseUplink:
    """The DP baseline's hook as the paper states it ("clients add DP noise", ``dp="local"``):
    N(0, (c_dp S / eps)^2) per coordinate of each upload, S = the round's clipping bound (the
    median of the unclipped update norms), sensitivity S."""
    z = dp_noise_multiplier(eps=eps, delta=delta)
    return engine.gaussian_uplink(lambda ctx: z * ctx.clip, sensitivity=lambda ctx: ctx.clip)


def _max_share(ctx) -> float:
    """One client's largest weight in the aggregate, max_k n_k / sum_k n_k (uploaders)."""
    n = ctx.data.counts[ctx.clients].double()
    return float(n.max() / n.sum())


def dp_downlink(*, eps: float, delta: float = DELTA) -> engine.GaussianDownlink:
    """Another reading of the baseline (``dp="central"``, Geyer et al. 2017, whose median
    clipping the paper borrows): the same multiplier c_dp / eps, but the noise is added once
    to the aggregate, scaled to one client's influence on it, S max_k n_k / sum_k n_k."""
    z = dp_noise_multiplier(eps=eps, delta=delta)
    return engine.gaussian_downlink(lambda ctx: z * ctx.clip * _max_share(ctx),
                                    sensitivity=lambda ctx: ctx.clip * _max_share(ctx))


def config(*, scheme: str, rounds: int, K: int, local_epochs: int = EPOCHS, batch_size: int = BATCH,
           lr: float = LR, dropout: float = 0.0, seed: int = 0, device: str = "cpu",
           eval_every: int = 1, dp_clip: str = "round", **overrides) -> engine.FLConfig:
    """The engine settings of one run of the scheme (Sec. 6.3); ``scheme="dp"`` adds the
    baseline's median clipping of updates (``dp_clip``: :data:`DP_CLIPS`).  K of N clients per
    round, local SGD (``local_epochs`` epochs of batches of 128, lr 0.1; Sec. 6.3), uploads of
    the update Delta w_k = w_k - w (Algorithm 1, line 9), aggregation sum_k (n_k/n) (Delta w_k +
    r_k) (line 14, ``aggregation="weighted"``) and dropout of each selected client with
    probability d (Sec. 7.2, ``dropout``)."""
    validate.choice("scheme", scheme, SCHEMES)
    validate.choice("dp_clip", dp_clip, tuple(DP_CLIPS))
    dp = scheme == "dp"
    kw = dict(num_rounds=rounds, local_epochs=local_epochs, batch_size=batch_size, lr=lr,
              clients_per_round=K, upload="update", aggregation="weighted", dropout=dropout,
              clip=DP_CLIPS[dp_clip] if dp else None, clip_mode="update" if dp else None,
              eval_train=False, eval_every=eval_every, seed=seed, device=device)
    return engine.FLConfig(**{**kw, **overrides})


def hooks(*, scheme: str, c: float = 15.0, p: Optional[float] = 0.0, eps: float = 30.0,
          delta: float = DELTA, reading: str = "noise", dp: str = "local") -> dict:
    """The engine hooks of ``scheme``: none (regular FL), the :class:`AdaptiveUplink`, or the
    DP baseline's uplink (``dp="local"``) or downlink (``dp="central"``)."""
    validate.choice("scheme", scheme, SCHEMES)
    validate.choice("dp", dp, DP_READINGS)
    if scheme == "regular":
        return {}
    if scheme == "ours":
        return {"uplink": AdaptiveUplink(c, p, reading)}
    if dp == "local":
        return {"uplink": dp_uplink(eps=eps, delta=delta)}
    return {"downlink": dp_downlink(eps=eps, delta=delta)}


@dataclass
class Run:
    """One run: its history, the hook (with the filter's tries) and per-round SNR."""

    history: engine.History
    hook: object
    snr: list           # per round: mean over uploading clients of var(update) / var(noise)
    uploads: dict       # the last round's clean and noisy uploads, clients and start model


def run(model: Model, data: FederatedData, *, scheme: str, rounds: int, K: int, c: float = 15.0,
        p: Optional[float] = 0.0, eps: float = 30.0, delta: float = DELTA, reading: str = "noise",
        dp: str = "local", progress: bool = False, **settings) -> Run:
    """Train with ``scheme`` ('regular', 'ours' or 'dp') and keep what the chapter measures:
    the SNR of the uploads each round (central DP: of the aggregate) and the last round's
    clean and released uploads."""
    cfg = config(scheme=scheme, rounds=rounds, K=K, **settings)
    hk = hooks(scheme=scheme, c=c, p=p, eps=eps, delta=delta, reading=reading, dp=dp)
    snr, last = [], {}

    def observe(ctx):
        if len(ctx.clients):
            if "downlink" in hk:  # the released aggregate against the clean one
                clean = engine.aggregate(ctx.clean, ctx.clients, ctx.data, cfg.aggregation, len(ctx.selected))
                snr.append(float(attacks.snr(clean[None], (ctx.params - ctx.global_params)[None])[0]))
            else:
                snr.append(float(attacks.snr(ctx.clean, ctx.uploads).mean()) if hk else math.inf)
            last.update(clean=ctx.clean, noisy=ctx.uploads, clients=ctx.clients, start=ctx.global_params,
                        t=ctx.t, clip=ctx.clip)

    hist = engine.run(model, data, cfg, observer=observe, progress=progress, desc=scheme, **hk)
    return Run(hist, hk.get("uplink", hk.get("downlink")), snr, last)


def dp_spent(history, *, eps: float, delta: float = DELTA, dp: str = "local") -> dict:
    """What the DP baseline really spends: one release's exact eps at ``delta`` (noise
    multiplier c_dp / eps; sensitivity S, and 2S for a change of the client's data), and the
    whole run's worst client from the accountant (PLD).  ``dp="local"``: each client's uploads,
    against the server.  ``dp="central"``: the noisy broadcasts, every round, against an
    observer of the global model only (the server itself sees the clean uploads: eps = inf).

    The baseline (Sec. 6.2) clips each update to the median S of the round's unclipped update
    norms and adds N(0, sigma^2) per coordinate, sigma = c_dp S / eps, c_dp =
    sqrt(2 log(1.25/delta)), delta = 1e-5.  For the accountant one upload is a Gaussian
    mechanism of noise multiplier c_dp / eps on an update of norm <= S (the paper's reading:
    the client's clipped contribution present or absent; any change of the client's data can
    move the update by 2S, which halves the multiplier), composed over each client's uploads.
    The classic constant c_dp covers only eps < 1 and S is itself data-dependent (released
    unprotected), so the guarantee is the paper's at best; this is the exact one under that
    reading."""
    validate.choice("dp", dp, DP_READINGS)
    z = dp_noise_multiplier(eps=eps, delta=delta)
    out = {"eps_claimed": eps, "noise_multiplier": z, "reading": dp,
           "upload_eps": mechanisms.gaussian_eps(sigma=z, delta=delta, sensitivity=1.0),
           "upload_eps_replace": mechanisms.gaussian_eps(sigma=z, delta=delta, sensitivity=2.0)}
    if dp == "local":
        s = accounting.spent(history, delta=delta)
        return {**out, "run_eps": s.eps,
                "uploads_worst": s.uploads.get(s.worst_client, 0) if s.worst_client is not None else 0}
    releases = len(history.privacy)
    run_eps = accounting.epsilon(accounting.self_composed(accounting.gaussian(noise_multiplier=z), count=releases),
                                 delta=delta)
    return {**out, "run_eps": run_eps, "uploads_worst": releases, "server_eps": math.inf}


def simulate_aggregate(*, K: int, dim: int, c: float, p: Optional[float] = None, dropout: float = 0.0,
                       trials: int = 100, norms=None, weights=None, reading: str = "noise",
                       seed: int = 0) -> dict:
    """Theorem 1 and Fig. 3 by simulation: ``trials`` rounds of K clients with random update
    directions in R^dim (norms ``norms``, default 1; aggregation weights ``weights``, default
    equal), each dropping out with probability ``dropout`` (at least one stays).  Returns the
    aggregated noise R = sum_k w_k r_k / sum_k w_k over the survivors (``R[trials, dim]``),
    Theorem 1's per-coordinate variance of each trial (``predicted[trials]``) and the
    number of survivors (``survivors[trials]``)."""
    K = validate.integer("K", K, 1)
    dim = validate.integer("dim", dim, 2)
    validate.probability("dropout", dropout)
    trials = validate.integer("trials", trials, 1)
    norms = torch.ones(K, dtype=torch.float64) if norms is None else torch.as_tensor(norms, dtype=torch.float64)
    weights = torch.ones(K, dtype=torch.float64) if weights is None else torch.as_tensor(weights, dtype=torch.float64)
    if norms.shape != (K,) or weights.shape != (K,):
        raise ValueError(f"norms and weights need K={K} entries")
    g = seeding.torch_generator(int(seed), "trials")
    dirs = torch.randn(trials, K, dim, generator=g, dtype=torch.float64)
    updates = (norms[None, :, None] * dirs / dirs.norm(dim=-1, keepdim=True)).reshape(trials * K, dim)
    keep = torch.rand(trials, K, generator=g) >= dropout
    keep[torch.arange(trials), torch.randint(K, (trials,), generator=g)] |= ~keep.any(dim=1)
    gens = [seeding.torch_generator(int(seed), "uplink", 0, i) for i in range(trials * K)]
    noisy, _ = perturb(updates, slices=[("all", 0, dim)], c=c, p=p, generators=gens, reading=reading)
    r = (noisy - updates).reshape(trials, K, dim)
    share = weights[None, :] * keep
    share = share / share.sum(dim=1, keepdim=True)
    sig = c * norms / math.sqrt(dim)  # theory.noise_std of each client
    return {"R": (share[:, :, None] * r).sum(dim=1).numpy(),
            "predicted": (share ** 2 * sig[None, :] ** 2).sum(dim=1).numpy(),
            "survivors": keep.sum(dim=1).numpy()}
