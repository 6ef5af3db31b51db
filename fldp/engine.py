"""One federated-learning engine for every algorithm in the four papers.

A round of :func:`run` (Wei et al. 2020, Algorithm 1, read generally)::

    select K of N clients            (all; K uniformly without replacement; round robin)
    local training, all K at once    (S steps or E epochs of SGD, mini-batch or full batch,
                                      optional proximal term mu/2 ||w - w_global||^2,
                                      optional per-step gradient clipping)
    clip the upload                  (parameters w / max(1, ||w||/C), or the update w - w_global)
    client dropout                   (each selected client fails to upload with prob. p)
    uplink hook                      (per-client noise: the privacy mechanism)
    aggregate                        (weighted by p_i, N/K-scaled unbiased sum, or plain mean)
    downlink hook                    (server noise before broadcast)
    evaluate                         (global training loss F(w), test loss and accuracy)

All selected clients train as **one batched tensor computation**: parameters are rows of
``params[K, D]`` and the model's forward uses batched matrix products (see
:mod:`fldp.models`), so there is no Python loop over clients.  Algorithms differ only in
their :class:`FLConfig` and in the two hooks; none re-implements training or aggregation.

Randomness: no global RNG is used.  Each random stream ("init", "select", "batch",
"uplink", "downlink", "dropout") of each round has its own ``torch.Generator`` derived from
``(seed, stream, round)`` by :func:`generator`, so the data order, the client selection
and the noise are reproducible one by one: changing the noise does not change which
clients were selected or which batches they drew.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Union

import numpy as np
import torch

from . import mechanisms, validate
from .data import FederatedData
from .models import Model

STREAMS = {"init": 1, "select": 2, "batch": 3, "uplink": 4, "downlink": 5, "dropout": 6}
CLIP_MODES = (None, "params", "update", "grad")
SAMPLERS = ("uniform", "round_robin")
AGGREGATIONS = ("weighted", "unbiased", "mean")


def generator(seed: int, stream: str, round_: int = 0) -> torch.Generator:
    """The generator of one random ``stream`` in one round, derived from ``seed``."""
    validate.choice("stream", stream, STREAMS)
    state = np.random.SeedSequence([int(seed), STREAMS[stream], int(round_)]).generate_state(1, np.uint64)[0]
    return torch.Generator().manual_seed(int(state & 0x7FFF_FFFF_FFFF_FFFF))


@dataclass(frozen=True)
class FLConfig:
    """Settings of a federated run.  Exactly one of ``local_steps`` / ``local_epochs``.

    ``lr`` is a float or a function of the global local-step counter
    ``t = (round - 1) * steps_per_round + s`` (e.g. Li et al.'s 0.2 / (1 + 0.01 t)).
    ``batch_size=None`` means full-batch gradient descent on the local dataset.
    ``noise=False`` switches every privacy hook off (the non-private baseline).
    """

    num_rounds: int
    local_steps: Optional[int] = None
    local_epochs: Optional[int] = None
    batch_size: Optional[int] = None
    lr: Union[float, Callable[[int], float]] = 0.1
    mu: float = 0.0
    clip: Optional[float] = None
    clip_mode: Optional[str] = None
    clip_norm: str = "l2"
    clients_per_round: Optional[int] = None
    sampler: str = "uniform"
    aggregation: str = "weighted"
    dropout: float = 0.0
    noise: bool = True
    eval_every: int = 1
    eval_train: bool = True
    client_chunk: Optional[int] = None
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
        if not callable(self.lr):
            validate.positive("lr", self.lr)
        validate.nonnegative("mu", self.mu)
        validate.choice("clip_mode", self.clip_mode, CLIP_MODES)
        validate.choice("clip_norm", self.clip_norm, ("l1", "l2"))
        if self.clip_mode is not None:
            if self.clip is None:
                raise ValueError(f"clip_mode={self.clip_mode!r} needs a clipping bound clip > 0")
            validate.positive("clip", self.clip)
        validate.choice("sampler", self.sampler, SAMPLERS)
        validate.choice("aggregation", self.aggregation, AGGREGATIONS)
        validate.probability("dropout", self.dropout)
        if self.dropout == 1:
            raise ValueError("dropout=1 is out of range: dropout must be in [0, 1)")
        validate.integer("eval_every", self.eval_every, 1)
        if self.client_chunk is not None:
            validate.integer("client_chunk", self.client_chunk, 1)

    def learning_rate(self, t: int) -> float:
        return float(self.lr(t)) if callable(self.lr) else float(self.lr)


@dataclass
class RoundContext:
    """What a privacy hook may look at in round ``t`` (1-based)."""

    t: int
    config: FLConfig
    data: FederatedData
    selected: torch.Tensor          # ids of the clients chosen this round
    clients: torch.Tensor           # ids of the clients that upload (selected minus dropouts)
    global_params: torch.Tensor     # w^(t-1), the model the clients started from


UplinkHook = Callable[[RoundContext, torch.Tensor, torch.Generator], torch.Tensor]
DownlinkHook = Callable[[RoundContext, torch.Tensor, torch.Generator], torch.Tensor]


@dataclass
class History:
    """Per-round record of a run (round 0 is the initial model)."""

    rounds: list = field(default_factory=list)
    train_loss: list = field(default_factory=list)
    test_loss: list = field(default_factory=list)
    test_acc: list = field(default_factory=list)
    clients: list = field(default_factory=list)
    upload_norm_median: list = field(default_factory=list)
    params: Optional[torch.Tensor] = None
    wall_time_s: float = 0.0

    def to_dict(self) -> dict:
        return {"rounds": self.rounds, "train_loss": self.train_loss, "test_loss": self.test_loss,
                "test_acc": self.test_acc, "upload_norm_median": self.upload_norm_median,
                "wall_time_s": self.wall_time_s}


# -- building blocks (public: notebooks and tests use them directly) ------------------------
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


def batch_schedule(counts: torch.Tensor, config: FLConfig, g: torch.Generator):
    """Yield ``(index[K, B], mask[K, B])`` for each local step of the clients with ``counts``.

    Full batch: every step sees all of a client's rows.  Epochs: a fresh permutation per
    client and epoch cut into batches (clients with less data finish early: their later
    steps are masked out).  Steps: each step draws ``B`` rows without replacement.
    """
    k, n_max = len(counts), int(counts.max())
    pos = torch.arange(n_max).expand(k, n_max)
    valid = pos < counts[:, None]
    b = config.batch_size
    if b is None or (config.local_steps is not None and b >= n_max):
        for _ in range(config.local_steps or config.local_epochs):
            yield pos, valid
        return
    if config.local_epochs is not None:
        for _ in range(config.local_epochs):
            keys = torch.rand(k, n_max, generator=g).masked_fill_(~valid, 2.0)
            perm = keys.argsort(dim=1)
            for s in range(0, n_max, b):
                idx = perm[:, s:s + b]
                yield idx, pos[:, s:s + idx.shape[1]] < counts[:, None]
        return
    for _ in range(config.local_steps):
        keys = torch.rand(k, n_max, generator=g).masked_fill_(~valid, 2.0)
        vals, idx = keys.topk(b, dim=1, largest=False)
        yield idx, vals < 1.5


def clip_rows(x: torch.Tensor, bound: float, norm: str = "l2") -> torch.Tensor:
    return mechanisms.clip_l2(x, bound) if norm == "l2" else mechanisms.clip_l1(x, bound)


def local_train(model: Model, start: torch.Tensor, data: FederatedData, clients: torch.Tensor,
                config: FLConfig, t: int = 1) -> torch.Tensor:
    """Train ``len(clients)`` local models from ``start`` (``[D]``, the broadcast model, or
    ``[K, D]``) on their own data, all at once; returns ``[K, D]``.

    Minimises F_i(w) + mu/2 ||w - start||^2 by SGD (Wei et al. 2020, Algorithm 1, line 6),
    with the per-step gradient clipped when ``config.clip_mode == "grad"`` (the gradient of
    the client's mini-batch; for batch size 1, as in Li et al., that is per-sample clipping).

    Clients are processed in chunks of :func:`client_chunk` rows so that a chunk's parameters
    and gradients stay in the CPU cache (for the 203k-parameter MLP, all 50 clients at once
    are 2-4x slower than chunks of 2-8).  The batch schedule is drawn once for all clients,
    so the result does not depend on the chunk size.
    """
    k = len(clients)
    anchor = start.expand(k, -1) if start.dim() == 1 else start
    counts = data.counts[clients]
    schedule = list(batch_schedule(counts, config, generator(config.seed, "batch", t)))
    lrs = [config.learning_rate((t - 1) * len(schedule) + s) for s in range(len(schedule))]
    chunk = config.client_chunk or client_chunk(model)
    out = []
    for a in range(0, k, chunk):
        rows = slice(a, a + chunk)
        cid, anc = clients[rows, None], anchor[rows]
        params = anc.clone()
        for lr, (idx, mask) in zip(lrs, schedule):
            idx, mask = idx[rows], mask[rows]
            grad = gradient(model, params, *_gather(data, cid, idx), mask)
            if config.clip_mode == "grad":
                grad = clip_rows(grad, config.clip, config.clip_norm)
            if config.mu:
                grad = grad + config.mu * (params - anc)
            active = mask.any(dim=1, keepdim=True).to(params.dtype)
            params = params - lr * active * grad
        out.append(params)
    return torch.cat(out) if len(out) > 1 else out[0]


def client_chunk(model: Model, cache_bytes: int = 16 << 20) -> int:
    """How many clients to train together: enough rows of parameters, gradients and
    temporaries (about 8 copies of float32) to fill ``cache_bytes`` of CPU cache."""
    return max(1, cache_bytes // (model.dim * 4 * 8))


def _gather(data: FederatedData, cid: torch.Tensor, idx: torch.Tensor):
    """``data.x[cid, idx]`` and ``data.y[cid, idx]`` as one ``index_select`` on flattened
    rows: about 4x faster than advanced indexing for MNIST-sized batches (benchmarks/)."""
    rows = (cid * data.x.shape[1] + idx).reshape(-1)
    x = data.x.flatten(0, 1).index_select(0, rows).view(*idx.shape, *data.x.shape[2:])
    return x, data.y.flatten(0, 1).index_select(0, rows).view(idx.shape)


def gradient(model: Model, params: torch.Tensor, xb: torch.Tensor, yb: torch.Tensor,
             mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Gradient of each row's mean loss ``[C, D]``: the model's closed form when it has one,
    autograd on ``model.loss`` otherwise."""
    if model.grad is not None:
        return model.grad(params, xb, yb, mask)
    p = params.detach().requires_grad_(True)
    with torch.enable_grad():
        (grad,) = torch.autograd.grad(model.loss(p, xb, yb, mask).sum(), p)
    return grad


def aggregate(uploads: torch.Tensor, clients: torch.Tensor, data: FederatedData,
              mode: str, num_selected: int) -> torch.Tensor:
    """Combine the uploads ``[K, D]`` into one model ``[D]``.

    * ``weighted``: sum_i p_i w_i / sum_i p_i over the uploading clients, p_i = |D_i|/|D|
      (Wei et al. 2020, eq. (1); Algorithm 1, line 13).
    * ``unbiased``: (N/K) sum_i p_i w_i, an unbiased estimate of sum_{all i} p_i w_i under
      uniform sampling (Zhou et al., Algorithm 1; Li, Chang, Chi 2020, Algorithm 1).
    * ``mean``: the plain average.
    """
    if mode == "mean":
        return uploads.mean(dim=0)
    p = data.weights[clients].to(uploads.dtype)
    if mode == "weighted":
        return (p[:, None] * uploads).sum(dim=0) / p.sum()
    return (data.num_clients / num_selected) * (p[:, None] * uploads).sum(dim=0)


def evaluate(model: Model, params: torch.Tensor, data: FederatedData, train: bool = True) -> dict:
    """Global training loss F(w) = sum_i p_i F_i(w) (all training rows), test loss and accuracy."""
    out = {}
    if train:
        out["train_loss"], _ = model.evaluate(params, data.x_train, data.y_train)
    out["test_loss"], out["test_acc"] = model.evaluate(params, data.x_test, data.y_test)
    return out


# -- the run -----------------------------------------------------------------------------------
def run(model: Model, data: FederatedData, config: FLConfig, *,
        uplink: Optional[UplinkHook] = None, downlink: Optional[DownlinkHook] = None,
        init_params: Optional[torch.Tensor] = None, progress: bool = False,
        desc: str = "rounds") -> History:
    """Run ``config.num_rounds`` rounds of federated training; returns the :class:`History`.

    ``uplink(ctx, uploads[K, D], generator)`` returns the perturbed uploads,
    ``downlink(ctx, aggregate[D], generator)`` the perturbed broadcast model; both are
    skipped when ``config.noise`` is False.  ``progress=True`` shows a tqdm bar.
    """
    from tqdm.auto import tqdm

    if config.clients_per_round is not None:
        validate.integer("clients_per_round", config.clients_per_round, 1, data.num_clients)
    t0 = time.perf_counter()
    w = init_params.clone() if init_params is not None else model.init(generator(config.seed, "init"))
    hist = History()
    _record(hist, model, w, data, config, 0, torch.arange(0), None)
    for t in tqdm(range(1, config.num_rounds + 1), desc=desc, disable=not progress, leave=False):
        selected = select_clients(config, data.num_clients, t)
        uploads = local_train(model, w, data, selected, config, t)
        raw_norm = float(torch.linalg.vector_norm(uploads - w, dim=1).median())
        if config.clip_mode == "params":
            uploads = clip_rows(uploads, config.clip, config.clip_norm)
        elif config.clip_mode == "update":
            uploads = w + clip_rows(uploads - w, config.clip, config.clip_norm)
        clients, uploads = _drop(config, t, selected, uploads)
        if len(clients) > 0:
            ctx = RoundContext(t, config, data, selected, clients, w)
            if config.noise and uplink is not None:
                uploads = uplink(ctx, uploads, generator(config.seed, "uplink", t))
            new = aggregate(uploads, clients, data, config.aggregation, len(selected))
            if config.noise and downlink is not None:
                new = downlink(ctx, new, generator(config.seed, "downlink", t))
            w = new
        if t % config.eval_every == 0 or t == config.num_rounds:
            _record(hist, model, w, data, config, t, clients, raw_norm)
    hist.params = w
    hist.wall_time_s = time.perf_counter() - t0
    return hist


def _drop(config, t, selected, uploads):
    if config.dropout == 0:
        return selected, uploads
    g = generator(config.seed, "dropout", t)
    keep = torch.rand(len(selected), generator=g) >= config.dropout
    return selected[keep], uploads[keep]


def _record(hist, model, w, data, config, t, clients, raw_norm):
    ev = evaluate(model, w, data, train=config.eval_train)
    hist.rounds.append(t)
    hist.train_loss.append(ev.get("train_loss", float("nan")))
    hist.test_loss.append(ev["test_loss"])
    hist.test_acc.append(ev["test_acc"])
    hist.clients.append(clients.tolist())
    hist.upload_norm_median.append(raw_norm)


# -- standard hooks ------------------------------------------------------------------------------
def _gaussian(sigma):
    def hook(ctx, x, g):
        s = sigma(ctx) if callable(sigma) else sigma
        return x + mechanisms.gaussian_noise(x.shape, s, g, dtype=x.dtype)

    return hook


def gaussian_uplink(sigma: Union[float, Callable[[RoundContext], float]]) -> UplinkHook:
    """Add N(0, sigma^2) to every coordinate of every upload (sigma may depend on the round)."""
    return _gaussian(sigma)


def gaussian_downlink(sigma: Union[float, Callable[[RoundContext], float]]) -> DownlinkHook:
    """Add N(0, sigma^2) to every coordinate of the aggregated model before broadcast."""
    return _gaussian(sigma)


def with_config(config: FLConfig, **changes) -> FLConfig:
    """A copy of ``config`` with some fields changed (validated again)."""
    return replace(config, **changes)
