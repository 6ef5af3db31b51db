"""Empirical sensitivity of local training: brute force over neighbouring datasets.

Wei et al. 2020 (NbAFL, IEEE TIFS 15), Sec. III-A, eq. (4)-(6), bound the l2 sensitivity of a
client's (clipped) local solution by ``Ds_U = 2C/m`` and, Lemma 1 eq. (8) / Appendix A eq. (30),
that of the aggregate ``w = sum_i p_i w_i`` (eq. 7) by ``Ds_D = 2C p_i/m``.  Eq. (4) rests on
treating the local solution as the average of per-sample minimisers; for local SGD followed
by clipping (Algorithm 1, lines 6-8) only ``||w - w'|| <= 2C`` is guaranteed.  The functions
here measure ``||clip(w(D)) - clip(w(D'))||`` on many pairs (D, D') of the same size m that
differ in one sample, trained from the same start with the same batch order.

Same batch order: ``engine.local_train`` draws client k's batches from its own generator
(``engine.batch_generators``: seed, round, client id) and its count only, so training all the D's
as one :class:`~fldp.data.FederatedData` and all the D''s as another (same counts, same
config) gives client k of both the same schedule; D'_k holds its new sample at the position
of the one it replaces, so the new sample is seen in the same step.  The maximum over
sampled pairs is a *lower* bound on the sensitivity (the max over all pairs).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from fldp import engine, mechanisms, seeding, validate
from fldp.data import FederatedData
from fldp.models import Model

REPLACEMENTS = ("random", "flip")

__all__ = ["REPLACEMENTS", "NeighbourPairs", "neighbouring_pairs", "pair_data", "pair_uploads",
           "descend", "aggregated_distances"]


@dataclass(frozen=True)
class NeighbourPairs:
    """``num_pairs`` pairs (D_k, D'_k) over a pool of labelled rows.

    D_k is the pool rows ``index[k]`` (``[P, m]``); D'_k equals D_k except at position
    ``position[k]``, which holds pool row ``new_index[k]`` with label ``new_label[k]``.
    """

    index: torch.Tensor
    position: torch.Tensor
    new_index: torch.Tensor
    new_label: torch.Tensor

    @property
    def num_pairs(self) -> int:
        return self.index.shape[0]

    @property
    def m(self) -> int:
        return self.index.shape[1]


def neighbouring_pairs(labels: torch.Tensor, m: int, num_pairs: int, *, seed: int = 0,
                       replacement: str = "random", num_classes: int | None = None) -> NeighbourPairs:
    """Draw ``num_pairs`` neighbouring pairs of size-``m`` datasets from a pool with ``labels``.

    Neighbouring as in Wei et al. 2020, Sec. III-A (after eq. 5): same size, one sample differs.
    Each D_k is ``m`` distinct pool rows drawn at random; one position is replaced by

    * ``"random"``: another pool row not in D_k, with its own label;
    * ``"flip"``: the same image with a different (random) label, a worst-case-leaning
      choice (a mislabelled record is still a record of the data domain).
    """
    n = len(labels)
    m = validate.integer("m", m, 1, n - 1)
    num_pairs = validate.integer("num_pairs", num_pairs, 1)
    validate.choice("replacement", replacement, REPLACEMENTS)
    k_cls = num_classes or int(labels.max()) + 1
    rng = seeding.numpy_rng(int(seed), "sensitivity")
    index = np.empty((num_pairs, m), dtype=np.int64)
    new_index = np.empty(num_pairs, dtype=np.int64)
    for k in range(num_pairs):
        rows = rng.choice(n, size=m + 1, replace=False)
        index[k], new_index[k] = rows[:m], rows[m]
    position = rng.integers(0, m, size=num_pairs)
    y = labels.cpu().numpy()
    if replacement == "random":
        new_label = y[new_index]
    else:
        new_index = index[np.arange(num_pairs), position]
        new_label = (y[new_index] + rng.integers(1, k_cls, size=num_pairs)) % k_cls
    t = lambda a: torch.as_tensor(np.asarray(a, dtype=np.int64))  # noqa: E731
    return NeighbourPairs(t(index), t(position), t(new_index), t(new_label))


def pair_data(x: torch.Tensor, y: torch.Tensor, pairs: NeighbourPairs,
              rows: slice = slice(None)) -> tuple[FederatedData, FederatedData]:
    """The D's and the D''s of ``pairs[rows]`` as two FederatedData, client k = pair k."""
    idx = pairs.index[rows]
    xd, yd = x[idx], y[idx]
    xp, yp = xd.clone(), yd.clone()
    k = torch.arange(len(idx))
    pos = pairs.position[rows]
    xp[k, pos] = x[pairs.new_index[rows]]
    yp[k, pos] = pairs.new_label[rows]
    counts = torch.full((len(idx),), idx.shape[1], dtype=torch.int64)

    def fed(xs, ys):  # pair k = client k, rows stored flat in pair order
        flat_x, flat_y = xs.reshape(-1, *xs.shape[2:]), ys.reshape(-1)
        return FederatedData(flat_x, flat_y, counts, flat_x[:1], flat_y[:1])

    return fed(xd, yd), fed(xp, yp)


def pair_uploads(model: Model, start: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                 pairs: NeighbourPairs, config: engine.FLConfig, clip: float | None = None,
                 chunk: int = 25) -> tuple[torch.Tensor, torch.Tensor]:
    """Local models ``(clip(w(D_k)), clip(w(D'_k)))``, each ``[P, dim]``, by ``engine.local_train``.

    Both sides start from ``start`` and share the batch schedule (see module docstring);
    ``clip`` (C) applies Algorithm 1 line 8, ``w / max(1, ||w||/C)``.  Pairs are trained
    ``chunk`` at a time to bound memory.
    """
    chunk = validate.integer("chunk", chunk, 1)
    out_d, out_p = [], []
    for a in range(0, pairs.num_pairs, chunk):
        data_d, data_p = pair_data(x, y, pairs, slice(a, a + chunk))
        ids = torch.arange(data_d.num_clients)
        w_d = engine.local_train(model, start, data_d, ids, config)
        w_p = engine.local_train(model, start, data_p, ids, config)
        if clip is not None:
            w_d, w_p = mechanisms.clip_l2(w_d, bound=clip), mechanisms.clip_l2(w_p, bound=clip)
        out_d.append(w_d)
        out_p.append(w_p)
    return torch.cat(out_d), torch.cat(out_p)


def descend(model: Model, start: torch.Tensor, x: torch.Tensor, y: torch.Tensor, *, lr: float, mu: float,
            steps: int, checkpoints=()):
    """Full-batch gradient descent on the proximal local objective, the local solver of Wei et al.
    2020, Sec. III-A ("the batch size in the local training is equal to the number of training
    samples") and Algorithm 1, line 6 (w = argmin F_i(w) + mu/2 ||w - w^(t-1)||^2), run towards
    that argmin.

    ``x[K, m, ...]``, ``y[K, m]``: K local datasets, trained side by side from ``start`` (``[D]``,
    also the proximal anchor).  Each step is ``w <- w - lr (grad F_i(w) + mu (w - start))``, the
    step ``engine.local_train`` takes with ``batch_size=None`` (tested).  Yields
    ``(step, w, residual)`` at every step of ``checkpoints`` (and at ``steps``): the models
    ``[K, D]`` after ``step`` steps and the stationarity residual ``||grad of the objective||``
    there, ``[K]`` (0 exactly at a stationary point).  Step 0 is the start and its gradient.
    """
    lr = validate.positive("lr", lr)
    mu = validate.nonnegative("mu", mu)
    steps = validate.integer("steps", steps, 1)
    marks = {validate.integer("checkpoints[]", c, 0, steps) for c in checkpoints} | {steps}
    if x.shape[:2] != y.shape or len(y) == 0:
        raise ValueError(f"x and y must hold K local datasets of m rows each, got shapes {tuple(x.shape)} "
                         f"and {tuple(y.shape)}")
    anchor = start.expand(len(x), -1) if start.dim() == 1 else start

    def run():  # a generator: the checks above run at the call, not at the first step
        params = anchor.clone()
        for s in range(steps + 1):
            grad = engine.gradient(model, params, x, y)
            if mu:
                grad.add_(params, alpha=mu).sub_(anchor, alpha=mu)
            if s in marks:
                yield s, params.clone(), torch.linalg.vector_norm(grad, dim=1)
            if s < steps:
                params.sub_(grad, alpha=lr)

    return run()


def aggregated_distances(uploads_d: torch.Tensor, uploads_p: torch.Tensor,
                         weights: torch.Tensor) -> torch.Tensor:
    """``||s_D(D_i) - s_D(D'_i)||`` for each client i of one federation (Lemma 1, eq. 27-30).

    The federation's uploads are the rows of ``uploads_d`` (client i trained on D_i); for
    client i the neighbouring federation swaps in row i of ``uploads_p``.  Both aggregates
    are computed in full, ``sum_j p_j w_j`` (eq. 7), in float64, then subtracted
    (the result is ``p_i ||w_i(D_i) - w_i(D'_i)||`` up to rounding, as eq. 30 says).
    """
    if uploads_d.shape != uploads_p.shape or len(weights) != len(uploads_d):
        raise ValueError(f"shapes differ: uploads {tuple(uploads_d.shape)} vs "
                         f"{tuple(uploads_p.shape)}, weights {tuple(weights.shape)}")
    wd, wp = uploads_d.double(), uploads_p.double()
    p = weights.double()
    base = p @ wd
    out = torch.empty(len(wd), dtype=torch.float64)
    for i in range(len(wd)):
        swapped = wd.clone()
        swapped[i] = wp[i]
        out[i] = torch.linalg.vector_norm(p @ swapped - base)
    return out
