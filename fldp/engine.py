"""One federated-learning engine for every algorithm of the four papers.

A round (:func:`round_step`; :func:`run` is a loop over it):

.. code-block:: text

    select K of N clients            all; K uniformly without replacement; round robin
    local training, all K at once    S steps or E epochs of SGD on batches sampled as the
                                     paper says (shuffled epochs, fixed b without
                                     replacement, a fraction q of d_i, Poisson(q), or full
                                     batch), optional proximal term mu/2 ||w - w_global||^2,
                                     optional clipping of each step's gradient: of the
                                     mini-batch mean ("batch_grad") or of every sample's
                                     gradient before averaging ("sample_grad", DP-SGD)
    the upload                       the local model w_k, the update w_k - w, or the
                                     gradient g_k (one gradient at w)
    clip the upload                  ("params" / "update"; bound fixed or the round's median)
    client dropout                   each selected client fails to upload with prob. p
    uplink hook                      per-client noise: the privacy mechanism
    aggregate                        weighted by p_i, (N/K)-scaled unbiased sum, or mean
    server step                      params: w <- w + eta_s (agg - w); update: w <- w + eta_s agg;
                                     gradient: w <- w - eta_s agg  (eta_s = server_lr(t))
    downlink hook                    server noise before broadcast
    observer                         sees the round: uploads before and after noise, ...

All selected clients train as **one batched tensor computation** (parameters are the rows of
``params[K, D]``; see :mod:`fldp.models`), grouped by data size so that small clients do not pay for
the largest one's padding.  An algorithm is a :class:`FLConfig`, a calibration and at most a short
hook.  No global RNG: every stream of every round (and client) has its own generator
(:func:`generator`), so runs that share a seed are paired.  :func:`run_many` runs several runs side
by side, training together, round by round, those whose local training reads the same rows.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Sequence, Union

import torch

from fldp import mechanisms, seeding, validate

from fldp import counting
from fldp.data import FederatedData
from fldp.models import Model, sample_weights

__all__ = [
    "STREAMS", "CLIP_MODES", "MEDIAN_CLIPS", "UPLOADS", "SAMPLINGS", "SAMPLERS", "AGGREGATIONS",
    "Schedule", "generator", "batch_generators", "FLConfig", "RoundContext", "Hook", "Observer",
    "Diverged", "State", "History", "select_clients", "batch_schedule", "clip_rows", "gradient",
    "per_sample_gradients", "local_train", "local_train_runs", "trains_runs_together", "client_chunk", "aggregate", "server_step", "evaluate",
    "init_state", "round_step", "num_local_steps", "run", "run_many", "Scale", "NoiseUplink",
    "GaussianDownlink", "gaussian_uplink", "laplace_uplink", "gaussian_downlink", "with_config"
]

STREAMS = ("init", "select", "batch", "uplink", "downlink", "dropout")
CLIP_MODES = (None, "params", "update", "batch_grad", "sample_grad")
MEDIAN_CLIPS = ("median", "median_lagged")   # data-dependent upload bounds (FLConfig.clip)
UPLOADS = ("params", "update", "gradient")
SAMPLINGS = ("shuffle", "fixed", "fraction", "poisson", "full")
SAMPLERS = ("uniform", "round_robin")
AGGREGATIONS = ("weighted", "unbiased", "mean")

Schedule = Union[float, Callable[[int], float]]


def generator(seed: int, stream: str, round_: int = 0, client: Optional[int] = None,
              device: Union[str, torch.device] = "cpu") -> torch.Generator:
    """The generator of one random ``stream`` in one round (and for one ``client``), on
    ``device``: :func:`fldp.seeding.torch_generator` at ``(seed, stream, round, client)``.

    Each stream ("init", "select", "batch", "uplink", "downlink",
    "dropout") of each round has its own generator derived from ``(seed, stream, round)`` by
    :func:`generator` (:mod:`fldp.seeding`), and the batch and noise streams one generator **per
    client** as well: a client's batches and noise depend on the seed, the round and its id only,
    so changing the noise, K or the selection does not change any client's data order (common
    random numbers: runs that share a seed are paired), and a dropout does not shift the other
    clients' noise.  Generators live on ``config.device`` (noise is drawn there);
    the batch schedule and the selection are drawn on the CPU, so they are the same on every
    device.
    """
    validate.choice("stream", stream, STREAMS)
    path = (int(round_),) if client is None else (int(round_), int(client))
    return seeding.torch_generator(seed, stream, *path, device=device)


def batch_generators(config: "FLConfig", clients: torch.Tensor, t: int) -> list:
    """One batch generator per client of ``clients`` in round ``t``: a client's batches
    depend on its seed, round and id only, never on who else was selected."""
    return [generator(config.seed, "batch", t, int(c)) for c in clients]


@dataclass(frozen=True)
class FLConfig:
    """Settings of a federated run.  Exactly one of ``local_steps`` / ``local_epochs``.

    Local data sampling (``sampling``; by default ``shuffle`` with epochs and a batch size,
    ``fixed`` with steps and a batch size, ``full`` without a batch size):

    * ``shuffle``: each epoch a fresh permutation of the client's rows cut into batches of
      ``batch_size`` (Wei et al.'s local epochs);
    * ``fixed``: each step ``batch_size`` rows drawn without replacement (Li et al.);
    * ``fraction``: each step round(q d_i) rows without replacement, q = ``sample_rate``
      (Zhou et al.);
    * ``poisson``: each row included independently with probability q = ``sample_rate``;
      the gradient is divided by the expected batch size q d_i (what DP-SGD accountants assume);
    * ``full``: every row, every step (gradient descent).

    ``lr`` is a float or a function of the **global** local-step counter (local steps taken
    in all earlier rounds plus the step within this round), e.g. Li et al.'s
    0.2 / (1 + 0.01 t).  ``server_lr`` is a float or a function of the round t (1-based).
    ``clip`` is a float, ``"median"`` (upload clipping at the median of the round's
    unclipped upload norms) or ``"median_lagged"`` (at the median of every unclipped upload
    norm of the rounds before, "over the course of training"; round 1 uses its own).  ``noise=False`` switches every privacy hook off.
    """

    num_rounds: int
    local_steps: Optional[int] = None
    local_epochs: Optional[int] = None
    batch_size: Optional[int] = None
    sampling: Optional[str] = None
    sample_rate: Optional[float] = None
    lr: Schedule = 0.1
    mu: float = 0.0
    clip: Union[float, str, None] = None
    clip_mode: Optional[str] = None
    clip_norm: str = "l2"
    upload: str = "params"
    server_lr: Schedule = 1.0
    clients_per_round: Optional[int] = None
    sampler: str = "uniform"
    aggregation: str = "weighted"
    dropout: float = 0.0
    noise: bool = True
    eval_every: int = 1
    eval_train: bool = True
    client_chunk: Optional[int] = None
    device: str = "cpu"
    seed: int = 0

    def __post_init__(self):
        validate.integer("num_rounds", self.num_rounds, 1)
        if (self.local_steps is None) == (self.local_epochs is None):
            raise ValueError("give exactly one of local_steps and local_epochs "
                             f"(got local_steps={self.local_steps}, local_epochs={self.local_epochs})")
        if self.local_steps is not None:
            validate.integer("local_steps", self.local_steps, 1)
        if self.local_epochs is not None:
            validate.integer("local_epochs", self.local_epochs, 1)
        if self.batch_size is not None:
            validate.integer("batch_size", self.batch_size, 1)
        self._check_sampling()
        if not callable(self.lr):
            validate.positive("lr", self.lr)
        if not callable(self.server_lr):
            validate.positive("server_lr", self.server_lr)
        validate.nonnegative("mu", self.mu)
        validate.choice("clip_mode", self.clip_mode, CLIP_MODES)
        validate.choice("clip_norm", self.clip_norm, ("l1", "l2"))
        if self.clip_mode is not None:
            if self.clip is None:
                raise ValueError(f"clip_mode={self.clip_mode!r} needs a clipping bound clip > 0")
            if self.clip in MEDIAN_CLIPS:
                if self.clip_mode not in ("params", "update"):
                    raise ValueError(f"clip={self.clip!r} is out of range for clip_mode={self.clip_mode!r}: "
                                     "a per-round median bound applies to clip_mode 'params' or 'update'")
            else:
                validate.positive("clip", self.clip)
        validate.choice("upload", self.upload, UPLOADS)
        if self.clip_mode == "params" and self.upload != "params":
            raise ValueError(f"clip_mode='params' clips uploaded parameters: it needs upload='params' "
                             f"(got upload={self.upload!r}; use clip_mode='update')")
        if self.upload == "gradient" and self.local_steps != 1:
            raise ValueError(f"upload='gradient' needs local_steps=1 (one gradient at the broadcast "
                             f"model; got local_steps={self.local_steps}, local_epochs={self.local_epochs})")
        validate.choice("sampler", self.sampler, SAMPLERS)
        validate.choice("aggregation", self.aggregation, AGGREGATIONS)
        validate.probability("dropout", self.dropout)
        if self.dropout == 1:
            raise ValueError("dropout=1 is out of range: dropout must be in [0, 1)")
        validate.integer("eval_every", self.eval_every, 1)
        if self.client_chunk is not None:
            validate.integer("client_chunk", self.client_chunk, 1)
        if torch.device(self.device).type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device={self.device!r} is not available: no CUDA device here (use 'cpu')")

    @property
    def sampling_scheme(self) -> str:
        """``sampling``, or the default it implies: ``full`` without a batch size, else
        ``shuffle`` with epochs and ``fixed`` with steps."""
        if self.sampling is not None:
            return self.sampling
        return "full" if self.batch_size is None else ("shuffle" if self.local_epochs else "fixed")

    def _check_sampling(self) -> None:
        s = self.sampling_scheme
        validate.choice("sampling", s, SAMPLINGS)
        if s in ("fraction", "poisson"):
            if self.sample_rate is None:
                raise ValueError(f"sampling={s!r} needs sample_rate q in (0, 1]")
            if not validate.probability("sample_rate", self.sample_rate) > 0:
                raise ValueError(f"sample_rate={self.sample_rate!r} is out of range: sample_rate must be in (0, 1]")
            if self.local_steps is None:
                raise ValueError(f"sampling={s!r} draws one batch per step: give local_steps, not local_epochs")
        elif self.sample_rate is not None:
            raise ValueError(f"sample_rate={self.sample_rate!r} is only used by sampling 'fraction' or 'poisson'")
        if s in ("shuffle", "fixed") and self.batch_size is None:
            raise ValueError(f"sampling={s!r} needs a batch_size")
        if s == "shuffle" and self.local_epochs is None:
            raise ValueError("sampling='shuffle' cuts epochs into batches: give local_epochs")
        if s == "fixed" and self.local_steps is None:
            raise ValueError("sampling='fixed' draws one batch per step: give local_steps")
        if s in ("full", "fraction", "poisson") and self.batch_size is not None:
            raise ValueError(f"batch_size={self.batch_size!r} is not used by sampling={s!r}: leave it None")

    def learning_rate(self, step: int) -> float:
        """The local learning rate at global local step ``step`` (0-based)."""
        return float(self.lr(step)) if callable(self.lr) else float(self.lr)

    def server_learning_rate(self, t: int) -> float:
        """The server learning rate of round ``t`` (1-based)."""
        return float(self.server_lr(t)) if callable(self.server_lr) else float(self.server_lr)


@dataclass
class RoundContext:
    """Round ``t`` (1-based) as hooks and observers see it.

    Hooks see it after clipping and dropout (``uploads`` not yet noised); the observer sees
    it at the end of the round, with every field filled in.
    """

    t: int
    config: FLConfig
    data: FederatedData
    model: Model
    selected: torch.Tensor          # ids of the clients chosen this round
    clients: torch.Tensor           # ids of the clients that upload (selected minus dropouts)
    global_params: torch.Tensor     # w^(t-1), the model the clients started from
    step: int                       # global local-step counter at the start of the round
    lrs: list                       # the local learning rate of each local step of the round
    server_lr: float
    raw_norms: torch.Tensor         # l2 norm of what upload clipping bounds (the parameters
                                    # for clip_mode 'params', else the update or gradient), per
                                    # uploading client, before clipping
    clip: Optional[float]           # the upload clipping bound used this round
    clean: Optional[torch.Tensor] = None      # uploads [K', D] after clipping, before noise
    uploads: Optional[torch.Tensor] = None    # uploads after the uplink hook
    aggregate: Optional[torch.Tensor] = None  # the aggregated uploads [D]
    params: Optional[torch.Tensor] = None     # w^(t) after the server step and downlink hook

    def generators(self, stream: str = "uplink") -> list:
        """One generator per uploading client (row order of ``uploads``)."""
        return [generator(self.config.seed, stream, self.t, int(c), self.config.device)
                for c in self.clients]

    def generator(self, stream: str = "downlink") -> torch.Generator:
        """The round's generator of a server-side ``stream``."""
        return generator(self.config.seed, stream, self.t, device=self.config.device)


Hook = Callable[[RoundContext, torch.Tensor], torch.Tensor]
Observer = Callable[[RoundContext], None]


class Diverged(ArithmeticError):
    """A round's uploads are not finite: the model diverged (:func:`run` stops and records it)."""


@dataclass
class State:
    """Where a run stands: ``t`` rounds done, the global model, the global local-step counter."""

    t: int
    params: torch.Tensor
    step: int = 0
    norms: tuple = ()   # the unclipped upload norms of the rounds so far (clip="median_lagged" only)


@dataclass
class History:
    """Per-round record of a run (round 0 is the initial model).  ``privacy`` holds one
    :class:`fldp.accounting.PrivacyRecord` per round (who uploaded, with which mechanism)."""

    rounds: list = field(default_factory=list)
    train_loss: list = field(default_factory=list)
    test_loss: list = field(default_factory=list)
    test_acc: list = field(default_factory=list)
    clients: list = field(default_factory=list)
    upload_norm_median: list = field(default_factory=list)
    privacy: list = field(default_factory=list)
    params: Optional[torch.Tensor] = None
    wall_time_s: float = 0.0
    diverged_at: Optional[int] = None   # the round whose uploads were not finite (run stopped)

    def to_dict(self) -> dict:
        return {"rounds": self.rounds, "train_loss": self.train_loss, "test_loss": self.test_loss,
                "test_acc": self.test_acc, "upload_norm_median": self.upload_norm_median,
                "wall_time_s": self.wall_time_s, "diverged_at": self.diverged_at}


# -- building blocks (public: notebooks, tests and benchmarks use them) ----------------------
def select_clients(config: FLConfig, num_clients: int, t: int) -> torch.Tensor:
    """Client ids for round ``t``: all, K uniformly without replacement, or round robin."""
    k = config.clients_per_round
    if k is None:
        return torch.arange(num_clients)
    validate.integer("clients_per_round", k, 1, num_clients)
    if config.sampler == "round_robin":
        return (torch.arange(k) + (t - 1) * k) % num_clients
    g = generator(config.seed, "select", t)
    return torch.randperm(num_clients, generator=g)[:k].sort().values


def batch_schedule(counts: torch.Tensor, config: FLConfig, generators):
    """Yield ``(index[K, B], weights[K, B])`` for each local step of the clients with
    ``counts``: the positions of each client's batch within its own data, and the weight of
    each sample in the step's gradient (1/batch size on valid samples, 0 on padding;
    1/(q d_i) under Poisson sampling).  Drawn on the CPU, client i's from ``generators[i]``
    (:func:`batch_generators`) and its own count only, so a client's batches (as sets of rows)
    do not depend on the other clients.  See :class:`FLConfig`."""
    k, n_max = len(counts), int(counts.max())
    if len(generators) != k:
        raise ValueError(f"generators must hold one generator per client: got {len(generators)} for {k} clients")
    pos = torch.arange(n_max).expand(k, n_max)
    valid = pos < counts[:, None]
    s, b = config.sampling_scheme, config.batch_size
    mean = lambda mask: sample_weights(mask, None, *mask.shape, torch.float32)
    draws = config.local_epochs if s == "shuffle" else config.local_steps

    def uniforms():  # [draws, K, n_max]: client i's own draws, padding = 2 (sorts last, never chosen)
        u = torch.full((draws, k, n_max), 2.0)
        for i, (g, n) in enumerate(zip(generators, counts.tolist())):
            u[:, i, :n] = torch.rand(draws, n, generator=g)
        return u

    if s == "full" or (s == "fixed" and b >= n_max):
        for _ in range(config.local_steps or config.local_epochs):
            yield pos, mean(valid)
    elif s == "shuffle":
        for r in uniforms():
            perm = r.argsort(dim=1)
            for a in range(0, n_max, b):
                idx = perm[:, a:a + b]
                yield idx, mean(pos[:, a:a + idx.shape[1]] < counts[:, None])
    elif s == "fixed":
        for r in uniforms():
            vals, idx = r.topk(b, dim=1, largest=False)
            yield idx, mean(vals < 1.5)
    elif s == "fraction":
        size = torch.clamp((config.sample_rate * counts.to(torch.float64)).round().to(torch.int64), min=1)
        width = int(size.max())
        for r in uniforms():
            _, idx = r.topk(width, dim=1, largest=False)
            yield idx, mean(torch.arange(width)[None, :] < size[:, None])
    else:  # poisson
        expected = config.sample_rate * counts.to(torch.float32)
        for r in uniforms():
            chosen = r < config.sample_rate  # padding (2.0) is never chosen
            n = chosen.sum(dim=1)
            width = max(1, int(n.max()))
            idx = (~chosen).to(torch.int8).argsort(dim=1, stable=True)[:, :width]
            yield idx, (torch.arange(width)[None, :] < n[:, None]).to(torch.float32) / expected[:, None]


def clip_rows(x: torch.Tensor, bound: float, norm: str = "l2") -> torch.Tensor:
    return mechanisms.clip_l2(x, bound=bound) if norm == "l2" else mechanisms.clip_l1(x, bound=bound)


def gradient(model: Model, params: torch.Tensor, xb: torch.Tensor, yb: torch.Tensor,
             mask: Optional[torch.Tensor] = None, *, weights: Optional[torch.Tensor] = None,
             clip: Optional[float] = None, clip_norm: str = "l2",
             x_norm: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Gradient per row ``[C, D]`` of sum_b weights_b loss_b (+ regulariser); ``weights``
    default to the mean over the valid samples of ``mask``.  With ``clip``, every sample's
    gradient is clipped to norm ``clip`` (``clip_norm``) before the weighted sum (per-sample
    clipping; the data-independent regulariser is not clipped).

    The model's closed form when it has one (``x_norm``: the rows' norms ``[C, B]`` when known,
    which its per-sample clipping then need not recompute); otherwise autograd, with per-sample
    gradients from ``torch.func`` (vmap over clients and samples) when clipping per sample."""
    w = sample_weights(mask, weights, *yb.shape, params.dtype, params.device)
    ord = 1 if clip_norm == "l1" else 2
    if model.weighted_grad is not None:
        if x_norm is not None and clip is not None:
            return model.weighted_grad(params, xb, yb, w, clip, ord, x_norm=x_norm)
        return model.weighted_grad(params, xb, yb, w, clip, ord)
    p = params.detach().requires_grad_(True)
    if clip is None:
        with torch.enable_grad():
            (grad,) = torch.autograd.grad(model.loss(p, xb, yb, weights=w).sum(), p)
        return grad
    per = per_sample_gradients(model, params, xb, yb)  # [C, B, D]
    factor = torch.clamp(clip / torch.linalg.vector_norm(per, ord=ord, dim=-1).clamp_min(1e-30), max=1.0)
    out = torch.einsum("cb,cbd->cd", w * factor, per)
    with torch.enable_grad():
        reg = model.regulariser(p).sum()
    return out + torch.autograd.grad(reg, p)[0] if reg.requires_grad else out


def per_sample_gradients(model: Model, params: torch.Tensor, xb: torch.Tensor,
                         yb: torch.Tensor) -> torch.Tensor:
    """The gradient of each sample's loss, ``[C, B, D]``, for ``params[C, D]`` and rows
    ``(xb[C, B, ...], yb[C, B])`` (``torch.func`` vmap over clients and samples; the
    data-independent regulariser is left out)."""
    from torch.func import grad as fgrad, vmap

    def one(pk, xs, ys):
        return model.per_sample_loss(pk[None], xs[None, None], ys[None, None])[0, 0]

    return vmap(vmap(fgrad(one), in_dims=(None, 0, 0)))(params.detach(), xb, yb)


def local_train(model: Model, start: torch.Tensor, data: FederatedData, clients: torch.Tensor,
                config: FLConfig, t: int = 1, step: int = 0) -> torch.Tensor:
    """Train ``len(clients)`` local models from ``start`` (``[D]``, the broadcast model, or
    ``[K, D]``) on their own data, all at once; returns ``[K, D]``.

    Minimises F_i(w) + mu/2 ||w - start||^2 by SGD (Wei et al. 2020, Algorithm 1, line 6)
    with learning rate ``config.lr`` at global local steps ``step, step + 1, ...``; with
    ``clip_mode="batch_grad"`` each step's mini-batch gradient is clipped, with
    ``"sample_grad"`` each sample's gradient before averaging.  With ``upload="gradient"``
    it returns the (clipped) gradient at ``start`` instead (one step, no update).

    Clients are grouped by data size and processed in chunks of :func:`client_chunk` rows
    (so that a chunk's parameters and gradients stay in the CPU cache, and a chunk of small
    clients skips the steps in which none of them has data left).  The batch schedule is
    drawn once for all clients, so the result depends neither on the chunks nor the grouping.
    """
    k, dev = len(clients), data.device
    anchor = (start.expand(k, -1) if start.dim() == 1 else start).to(dev)
    out = torch.empty_like(anchor)
    for rows, params in _train_chunks(model, data, clients, config, t, step, lambda rows: anchor[rows]):
        out[rows] = params
    return out


def local_train_runs(model: Model, starts: torch.Tensor, data: FederatedData, clients: torch.Tensor,
                     config: FLConfig, t: int = 1, step: int = 0) -> torch.Tensor:
    """:func:`local_train` of R runs at once whose local training differs only in the model it
    starts from (``starts[R, D]``): the same clients, batches (``config``'s schedule), learning
    rates and training settings.  Returns ``[R, K, D]``, bit for bit what R calls of
    :func:`local_train` return (``tests/test_engine_runs.py``).

    Each step reads a client's batch once for all R models (:meth:`Model.weighted_grad_runs`:
    one product R times as wide), where R separate runs read it R times: the lever for the
    memory-bound logistic regressions (``benchmarks/README.md``).  Only for models with
    ``weighted_grad_runs`` and steps that are not fused (:func:`trains_runs_together`)."""
    n_runs, dev = starts.shape[0], data.device
    starts = starts.to(dev)
    out = torch.empty(n_runs, len(clients), model.dim, dtype=starts.dtype, device=dev)
    for rows, params in _train_chunks(model, data, clients, config, t, step,
                                      lambda rows: starts.unsqueeze(0).expand(len(rows), n_runs, model.dim),
                                      runs=n_runs):
        out[:, rows] = params.transpose(0, 1)
    return out


def _train_chunks(model: Model, data: FederatedData, clients: torch.Tensor, config: FLConfig, t: int, step: int,
                  anchor_of: Callable[[torch.Tensor], torch.Tensor], runs: Optional[int] = None):
    """The local training loop of :func:`local_train` (``runs=None``: the parameters of a chunk
    of c clients are ``[c, D]``) and :func:`local_train_runs` (``runs=R``: ``[c, R, D]``, each
    client's batch shared by its R models, :meth:`Model.weighted_grad_runs`).  ``anchor_of(rows)``
    gives the chunk's starting models (the proximal term's anchors); yields ``(rows, params)``
    per chunk, ``rows`` the positions of its clients in ``clients`` (on the data's device)."""
    dev = data.device
    counts = data.counts[clients]
    schedule = list(batch_schedule(counts, config, batch_generators(config, clients, t)))
    lrs = [config.learning_rate(step + s) for s in range(len(schedule))]
    chunk = max(1, (config.client_chunk or client_chunk(model, device=dev)) // (runs or 1))
    order = torch.argsort(counts, descending=True, stable=True)
    batch_clip = config.clip if config.clip_mode == "batch_grad" else None
    sample_clip = config.clip if config.clip_mode == "sample_grad" else None
    ord = 1 if config.clip_norm == "l1" else 2
    fused = (runs is None and model.sgd_step_ is not None and config.clip_mode not in ("batch_grad", "sample_grad")
             and config.upload != "gradient")
    norms_known = sample_clip is not None and model.weighted_grad is not None and data.x_train.dim() == 2
    for a in range(0, len(clients), chunk):
        rows = order[a:a + chunk]
        cid, anc = clients[rows].to(dev), anchor_of(rows.to(dev))
        width = int(counts[rows].max())
        params = anc.clone()
        for lr, (idx, wts) in zip(lrs, schedule):
            idx, wts = idx[rows], wts[rows]
            if idx.shape[1] > width:  # full batch: only this group's rows
                idx, wts = idx[:, :width], wts[:, :width]
            active = (wts != 0).any(dim=1)
            if not bool(active.any()):  # every client of the group has finished its epoch
                continue
            idx, wts = idx.to(dev), wts.to(dev)
            counting.COUNTER.add(model, idx.numel() * (runs or 1), train=True,  # the padded batch is computed too
                                 rows=len(rows) * (runs or 1))
            if fused and bool(active.all()):
                model.sgd_step_(params, anc, *data.gather(cid, idx), wts, lr, config.mu)
                continue
            xb, yb = data.gather(cid, idx)
            x_norm = data.gather_norms(cid, idx, ord) if norms_known else None  # each row's norm once per split
            if runs is None:
                grad = gradient(model, params, xb, yb, weights=wts, clip=sample_clip, clip_norm=config.clip_norm,
                                x_norm=x_norm)
            else:
                w = sample_weights(None, wts, *yb.shape, params.dtype, params.device)
                grad = model.weighted_grad_runs(params, xb, yb, w, sample_clip, ord, x_norm=x_norm)
            if batch_clip is not None:  # each run's gradient a row
                grad = clip_rows(grad.reshape(-1, model.dim), batch_clip, config.clip_norm).view(grad.shape)
            if config.upload == "gradient":
                params = grad
                break
            if config.mu:  # in place: grad is this step's own tensor, params a clone
                grad.add_(params, alpha=config.mu).sub_(anc, alpha=config.mu)
            if bool(active.all()):
                params.add_(grad, alpha=-lr)
            else:
                params.sub_((lr * active.to(dev, params.dtype)).view(-1, *[1] * (params.dim() - 1)) * grad)
        yield rows.to(dev), params


def trains_runs_together(model: Model, config: FLConfig) -> bool:
    """Whether runs of ``model`` under ``config`` can share their local training
    (:func:`local_train_runs`): the model has a runs-batched gradient and the step is not
    :func:`local_train`'s fused one (which has no gradient to share)."""
    fused = (model.sgd_step_ is not None and config.clip_mode not in ("batch_grad", "sample_grad")
             and config.upload != "gradient")
    return getattr(model, "weighted_grad_runs", None) is not None and not fused


def _training_key(config: FLConfig, selected: torch.Tensor, t: int, step: int, steps: int):
    """What one round's local training depends on besides the starting model: runs with equal
    keys train as one (:func:`run_many`).  The seed enters through the batch schedule, except
    under full-batch sampling, whose schedule draws nothing."""
    clipped = config.clip_mode in ("batch_grad", "sample_grad")
    return (tuple(selected.tolist()), t, config.sampling_scheme, config.local_steps, config.local_epochs,
            config.batch_size, config.sample_rate, tuple(config.learning_rate(step + s) for s in range(steps)),
            config.mu, config.clip if clipped else None, config.clip_mode if clipped else None,
            config.clip_norm if clipped else None, config.upload, config.client_chunk, str(config.device),
            None if config.sampling_scheme == "full" else config.seed)


def client_chunk(model: Model, cache_bytes: int = 16 << 20, device: Union[str, torch.device] = "cpu",
                 gpu_bytes: int = 2 << 30) -> int:
    """How many clients to train together.  On a CPU: enough rows of parameters, gradients and
    temporaries (about 8 copies of float32) to fill ``cache_bytes`` of CPU cache.  On a GPU, where
    small kernels leave it idle, every client of a round in one program: as many rows as fit in
    ``gpu_bytes`` (2 GiB; the paper's CNN, 582,026 parameters: 115 clients).  The result does not
    depend on the chunk (:func:`local_train`)."""
    per_row = model.dim * 4 * 8
    if torch.device(device).type == "cuda":
        return max(1, gpu_bytes // per_row)
    return max(1, cache_bytes // per_row)


def aggregate(uploads: torch.Tensor, clients: torch.Tensor, data: FederatedData,
              mode: str, num_selected: int) -> torch.Tensor:
    """Combine the uploads ``[K, D]`` into one vector ``[D]``.

    * ``weighted``: sum_i p_i x_i / sum_i p_i over the uploading clients, ``p_i = |D_i|/|D|``
      (Wei et al. 2020, eq. (1); Algorithm 1, line 13).
    * ``unbiased``: (N/K) sum_i p_i x_i, an unbiased estimate of sum_{all i} p_i x_i under
      uniform sampling (Zhou et al., Algorithm 1; Li, Chang, Chi 2020, Algorithm 1).  Over
      *parameters* with unequal p_i this multiplies the model by the random factor
      (N/K) sum_i p_i (about 0.8-1.2 per round at Dirichlet(1), K = 10 of 100): keep it
      where a paper states it, prefer it over updates or gradients.
    * ``mean``: the plain average.
    """
    if mode == "mean":
        return uploads.mean(dim=0)
    p = data.weights[clients].to(uploads.device, uploads.dtype)
    if mode == "weighted":
        return (p[:, None] * uploads).sum(dim=0) / p.sum()
    return (data.num_clients / num_selected) * (p[:, None] * uploads).sum(dim=0)


def server_step(config: FLConfig, w: torch.Tensor, agg: torch.Tensor, t: int) -> torch.Tensor:
    """Apply the aggregate: params w + eta (agg - w) (eta = 1: replace), update w + eta agg,
    gradient w - eta agg, with eta = ``config.server_lr`` at round ``t``."""
    eta = config.server_learning_rate(t)
    if config.upload == "params":
        return agg if eta == 1.0 else w + eta * (agg - w)
    return w + eta * agg if config.upload == "update" else w - eta * agg


def evaluate(model: Model, params: torch.Tensor, data: FederatedData, train: bool = True) -> dict:
    """Global training loss F(w) = sum_i p_i F_i(w) (all training rows), test loss and accuracy."""
    out = {}
    counting.COUNTER.add(model, len(data.y_test) + (len(data.y_train) if train else 0), train=False)
    if train:
        out["train_loss"], _ = model.evaluate(params, data.x_train, data.y_train)
    out["test_loss"], out["test_acc"] = model.evaluate(params, data.x_test, data.y_test)
    return out


# -- the round and the run ---------------------------------------------------------------------
def init_state(model: Model, data: FederatedData, config: FLConfig,
               init_params: Optional[torch.Tensor] = None) -> State:
    """Round 0: the initial model (``init_params`` or the model's seeded init) on the device."""
    w = init_params.clone() if init_params is not None else model.init(generator(config.seed, "init"))
    return State(0, w.to(config.device))


def round_step(model: Model, data: FederatedData, config: FLConfig, state: State, *,
               uplink: Optional[Hook] = None, downlink: Optional[Hook] = None,
               observer: Optional[Observer] = None,
               local: Optional[torch.Tensor] = None) -> tuple[State, RoundContext]:
    """One round from ``state``; returns the new state and the round's :class:`RoundContext`.
    ``local``: the selected clients' local models ``[K, D]`` when already trained
    (:func:`run_many` trains runs together), else :func:`local_train` trains them.

    ``uplink(ctx, uploads[K, D])`` returns the perturbed uploads and ``downlink(ctx, w[D])``
    the perturbed broadcast model; both are skipped when ``config.noise`` is False.  A hook
    may have a method ``event(ctx)`` describing its mechanism for the accountant (the uplink
    one DpEvent per uploading client, the downlink one DpEvent); ``observer(ctx)`` is called
    at the end of the round.
    """
    t, w = state.t + 1, state.params
    selected = select_clients(config, data.num_clients, t)
    steps = num_local_steps(data.counts[selected], config)
    if local is None:
        local = local_train(model, w, data, selected, config, t, state.step)
    counting.COUNTER.add_elems(model, len(selected))
    uploads = local - w if config.upload == "update" else local
    clients, uploads = _drop(config, t, selected, uploads)
    base = w if (config.clip_mode == "update" and config.upload == "params") else None
    clipped = uploads if base is None else uploads - base  # what upload clipping bounds
    raw = torch.linalg.vector_norm(clipped, dim=1)
    if not bool(torch.isfinite(raw).all()):
        raise Diverged(f"round {t}: the uploads of clients {clients[~torch.isfinite(raw).cpu()].tolist()} are not "
                       "finite (the model diverged)")
    bound = None
    if config.clip_mode in ("params", "update") and len(clients):
        if config.clip == "median_lagged":
            past = torch.tensor(state.norms, dtype=raw.dtype) if state.norms else raw.cpu()
            bound = float(past.median())
        else:
            bound = float(raw.median()) if config.clip == "median" else float(config.clip)
        if bound > 0:
            clipped = clip_rows(clipped, bound, config.clip_norm)
            uploads = clipped if base is None else base + clipped
    ctx = RoundContext(t, config, data, model, selected, clients, w, state.step,
                       [config.learning_rate(state.step + s) for s in range(steps)],
                       config.server_learning_rate(t), raw, bound, clean=uploads)
    new = w
    if len(clients) > 0:
        noisy = uplink(ctx, uploads) if (config.noise and uplink is not None) else uploads
        ctx.uploads = noisy
        ctx.aggregate = aggregate(noisy, clients, data, config.aggregation, len(selected))
        new = server_step(config, w, ctx.aggregate, t)
        if config.noise and downlink is not None:
            new = downlink(ctx, new)
    ctx.params = new
    if observer is not None:
        observer(ctx)
    norms = state.norms + tuple(raw.tolist()) if config.clip == "median_lagged" else ()
    return State(t, new, state.step + steps, norms), ctx


def num_local_steps(counts: torch.Tensor, config: FLConfig) -> int:
    """Local steps in a round whose selected clients hold ``counts`` rows (the longest
    client's: shuffled epochs of unequal clients end at different steps)."""
    if config.upload == "gradient":
        return 1
    if config.sampling_scheme == "shuffle":
        return config.local_epochs * -(-int(counts.max()) // config.batch_size)
    return config.local_steps or config.local_epochs


def run(model: Model, data: FederatedData, config: FLConfig, *,
        uplink: Optional[Hook] = None, downlink: Optional[Hook] = None,
        observer: Optional[Observer] = None, init_params: Optional[torch.Tensor] = None,
        progress: bool = False, desc: str = "rounds") -> History:
    """Run ``config.num_rounds`` rounds of :func:`round_step`; returns the :class:`History`
    (evaluated every ``config.eval_every`` rounds and at the end; ``progress`` shows a tqdm
    bar).  A run whose uploads stop being finite stops there, with ``History.diverged_at``
    and a warning.  Data and model live on ``config.device``."""
    return run_many(model, data, [config], uplinks=[uplink], downlinks=[downlink], observers=[observer],
                    init_params=[init_params], progress=progress, desc=desc)[0]


def run_many(model: Model, data: FederatedData, configs: Sequence[FLConfig], *,
             uplinks: Optional[Sequence[Optional[Hook]]] = None,
             downlinks: Optional[Sequence[Optional[Hook]]] = None,
             observers: Optional[Sequence[Optional[Observer]]] = None,
             init_params: Optional[Sequence[Optional[torch.Tensor]]] = None,
             progress: bool = False, desc: str = "rounds") -> list:
    """Several runs of :func:`run` on the same data, side by side; returns their histories, each
    the one :func:`run` returns for that run alone, bit for bit (``tests/test_engine_runs.py``).

    Round by round, the runs whose local training is the same computation but for the model it
    starts from (the same clients, batches, learning rates and training settings,
    :func:`_training_key`: e.g. runs that differ only in their noise, or in their seed under
    full-batch training) train as one (:func:`local_train_runs`) where the model allows it
    (:func:`trains_runs_together`); clipping, noise, aggregation and evaluation stay each run's
    own.  Runs may differ in their number of rounds; a run that diverges stops alone.  Each
    history's ``wall_time_s`` is its share of the whole."""
    from tqdm.auto import tqdm

    from fldp.accounting import PrivacyRecord

    n = len(configs)
    each = lambda xs: [None] * n if xs is None else list(xs)
    uplinks, downlinks, observers, init_params = each(uplinks), each(downlinks), each(observers), each(init_params)
    if not (len(uplinks) == len(downlinks) == len(observers) == len(init_params) == n):
        raise ValueError(f"uplinks, downlinks, observers and init_params must hold one entry per run ({n})")
    devices = {str(c.device) for c in configs}
    if len(devices) > 1:
        raise ValueError(f"configs must share one device: got {sorted(devices)}")
    for config in configs:
        if config.clients_per_round is not None:
            validate.integer("clients_per_round", config.clients_per_round, 1, data.num_clients)
        if config.aggregation == "unbiased" and config.upload == "params" and \
                int(data.counts.min()) != int(data.counts.max()):
            warnings.warn("aggregation='unbiased' over parameters with unequal client sizes scales the "
                          "model by the random factor (N/K) sum_i p_i each round; prefer upload='update'",
                          stacklevel=3)
    t0 = time.perf_counter()
    data = data.to(configs[0].device) if n else data
    states = [init_state(model, data, c, p) for c, p in zip(configs, init_params)]
    hists = [History() for _ in range(n)]
    for h, c, st in zip(hists, configs, states):
        _record(h, model, st.params, data, c, 0, torch.arange(0), float("nan"))
    live = [i for i in range(n)]
    for _ in tqdm(range(max((c.num_rounds for c in configs), default=0)), desc=desc,
                  disable=not progress, leave=False):
        live = [i for i in live if states[i].t < configs[i].num_rounds]
        local = _train_together(model, data, configs, states, live)
        for i in list(live):
            config, state, hist = configs[i], states[i], hists[i]
            try:
                state, ctx = round_step(model, data, config, state, uplink=uplinks[i], downlink=downlinks[i],
                                        observer=observers[i], local=local.get(i))
            except Diverged:  # stop; the last (finite) global model is the run's result
                hist.diverged_at = state.t + 1
                if hist.rounds[-1] != state.t:
                    _record(hist, model, state.params, data, config, state.t, torch.arange(0), float("nan"))
                warnings.warn(f"the run diverged in round {state.t + 1}: its uploads are not finite; stopped",
                              stacklevel=3)
                live.remove(i)
                continue
            states[i] = state
            on = config.noise
            hist.privacy.append(PrivacyRecord(
                round=ctx.t, clients=tuple(int(c) for c in ctx.clients),
                uplink=_events(uplinks[i], ctx, on) or (None,) * len(ctx.clients),
                downlink=_events(downlinks[i], ctx, on)))
            if ctx.t % config.eval_every == 0 or ctx.t == config.num_rounds:
                norm = float(ctx.raw_norms.median()) if len(ctx.raw_norms) else float("nan")
                _record(hist, model, state.params, data, config, ctx.t, ctx.clients, norm)
    for h, st in zip(hists, states):
        h.params = st.params
        h.wall_time_s = (time.perf_counter() - t0) / max(n, 1)
    return hists


def _train_together(model, data, configs, states, live) -> dict:
    """The local models of this round for the live runs that can share their training
    (:func:`local_train_runs`), ``{run: [K, D]}``; the others train in :func:`round_step`."""
    groups: dict = {}
    for i in live:
        config, state = configs[i], states[i]
        if not trains_runs_together(model, config):
            continue
        t = state.t + 1
        selected = select_clients(config, data.num_clients, t)
        steps = num_local_steps(data.counts[selected], config)
        groups.setdefault(_training_key(config, selected, t, state.step, steps), []).append((i, selected))
    out = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        (first, selected), ids = members[0], [i for i, _ in members]
        starts = torch.stack([states[i].params for i in ids])
        trained = local_train_runs(model, starts, data, selected, configs[first], states[first].t + 1,
                                   states[first].step)
        out.update({i: trained[j] for j, i in enumerate(ids)})
    return out


def _events(hook, ctx, on):
    if not on or hook is None or not hasattr(hook, "event") or len(ctx.clients) == 0:
        return None
    ev = hook.event(ctx)
    return tuple(ev) if isinstance(ev, (list, tuple)) else ev


def _drop(config, t, selected, uploads):
    if config.dropout == 0:
        return selected, uploads
    g = generator(config.seed, "dropout", t)
    keep = torch.rand(len(selected), generator=g) >= config.dropout
    return selected[keep], uploads[keep.to(uploads.device)]


def _record(hist, model, w, data, config, t, clients, raw_norm):
    ev = evaluate(model, w, data, train=config.eval_train)
    hist.rounds.append(t)
    hist.train_loss.append(ev.get("train_loss", float("nan")))
    hist.test_loss.append(ev["test_loss"])
    hist.test_acc.append(ev["test_acc"])
    hist.clients.append(clients.tolist())
    hist.upload_norm_median.append(raw_norm)


# -- standard hooks ------------------------------------------------------------------------------
Scale = Union[float, Callable[[RoundContext], Union[float, torch.Tensor]]]


def _scale(value, ctx, k, device, dtype=torch.float32):
    """A hook's scale this round: a float, or one value per uploading client (tensor [K])."""
    s = value(ctx) if callable(value) else value
    if isinstance(s, torch.Tensor) and s.ndim > 0:
        return s.to(device, dtype)
    return torch.full((k,), float(s), device=device, dtype=dtype)


@dataclass(frozen=True)
class NoiseUplink:
    """Add noise to each upload from the client's own generator (so a dropout does not
    shift the other clients' noise): ``kind`` 'gaussian' (std ``scale`` per coordinate) or
    'laplace' (scale b per coordinate).  ``scale`` is a float or a function of the round
    context returning a float or one value per uploading client.

    ``sensitivity`` (l2 for Gaussian, l1 for Laplace; a float or a function of the context)
    describes one upload for the accountant: :meth:`event` gives each client's mechanism
    with noise multiplier scale / sensitivity.  ``sampling_prob``: the upload is computed on
    a Poisson sample of the client's rows, each kept with this probability (``sampling=
    "poisson"`` with one local step, as DP-SGD), so each event is amplified by subsampling;
    the sensitivity is then that of the Poisson-sampled sum over the expected batch size."""

    scale: Scale
    kind: str = "gaussian"
    sensitivity: Optional[Scale] = None
    sampling_prob: Optional[float] = None

    def __post_init__(self):
        validate.choice("kind", self.kind, ("gaussian", "laplace"))
        if self.sampling_prob is not None and not 0 < validate.probability("sampling_prob", self.sampling_prob):
            raise ValueError(f"sampling_prob={self.sampling_prob!r} is out of range: sampling_prob must be in (0, 1]")

    def __call__(self, ctx: RoundContext, x: torch.Tensor) -> torch.Tensor:
        s = _scale(self.scale, ctx, len(x), x.device)
        draw, unit = ((mechanisms.gaussian_noise, {"sigma": 1.0}) if self.kind == "gaussian"
                      else (mechanisms.laplace_noise, {"scale": 1.0}))
        noise = torch.stack([draw(x.shape[1:], **unit, generator=g, dtype=x.dtype)
                             for g in ctx.generators("uplink")])
        return x + s[:, None].to(x.dtype) * noise

    def event(self, ctx: RoundContext):
        if self.sensitivity is None:
            return None
        from fldp import accounting

        k = len(ctx.clients)
        f64 = torch.float64  # the accountant's multipliers, without float32 rounding
        z = (_scale(self.scale, ctx, k, "cpu", f64) / _scale(self.sensitivity, ctx, k, "cpu", f64)).tolist()
        make = accounting.gaussian if self.kind == "gaussian" else accounting.laplace
        q = self.sampling_prob
        wrap = (lambda e: e) if q is None or q == 1 else \
            (lambda e: accounting.poisson_sampled(e, sampling_prob=q))
        return tuple(wrap(make(noise_multiplier=v)) if v > 0 else None for v in z)


@dataclass(frozen=True)
class GaussianDownlink:
    """Add N(0, sigma^2) to every coordinate of the broadcast model, from the round's
    'downlink' generator.  ``sensitivity``: l2 sensitivity of the broadcast, for the
    accountant (None: the broadcast is accounted as post-processing of the uploads)."""

    sigma: Scale
    sensitivity: Optional[Scale] = None

    def __call__(self, ctx: RoundContext, w: torch.Tensor) -> torch.Tensor:
        s = float(_scale(self.sigma, ctx, 1, "cpu")[0])
        return w + mechanisms.gaussian_noise(w.shape, sigma=s, generator=ctx.generator("downlink"), dtype=w.dtype)

    def event(self, ctx: RoundContext):
        if self.sensitivity is None:
            return None
        from fldp import accounting

        f64 = torch.float64
        z = float(_scale(self.sigma, ctx, 1, "cpu", f64)[0] / _scale(self.sensitivity, ctx, 1, "cpu", f64)[0])
        return accounting.gaussian(noise_multiplier=z) if z > 0 else None


def gaussian_uplink(sigma: Scale, sensitivity: Optional[Scale] = None,
                    sampling_prob: Optional[float] = None) -> NoiseUplink:
    """N(0, sigma^2) on every coordinate of every upload (sigma: float, per round or per client);
    ``sampling_prob``: the upload was computed on a Poisson sample (see :class:`NoiseUplink`)."""
    return NoiseUplink(sigma, "gaussian", sensitivity, sampling_prob)


def laplace_uplink(scale: Scale, sensitivity: Optional[Scale] = None,
                   sampling_prob: Optional[float] = None) -> NoiseUplink:
    """Lap(0, scale) on every coordinate of every upload (Zhou et al., Theorem 1)."""
    return NoiseUplink(scale, "laplace", sensitivity, sampling_prob)


def gaussian_downlink(sigma: Scale, sensitivity: Optional[Scale] = None) -> GaussianDownlink:
    """N(0, sigma^2) on every coordinate of the aggregated model before broadcast."""
    return GaussianDownlink(sigma, sensitivity)


def with_config(config: FLConfig, **changes) -> FLConfig:
    """A copy of ``config`` with some fields changed (validated again)."""
    return replace(config, **changes)
