"""Shared test scaffolding: a toy federation and one plain federated round to check the engine against.

Imported by the tests as ``from helpers import ...`` (pytest puts ``tests/`` on ``sys.path``,
as for ``sweep_toy``, ``store_checks`` and ``property_examples``).

* :func:`toy_federation` builds a small :class:`~fldp.data.FederatedData` from a seeded
  generator: random features, random class labels or labels from the first feature's sign.
* :func:`plain_round` is one round of federated learning written out as a tutorial would:
  a Python loop over the clients, each alone, its local steps by autograd on a per-sample loss
  given by the test, clipping, its own noise, then the server's aggregation and step.  It
  borrows nothing from :mod:`fldp.engine` but what the test hands it (the clients and, if
  given, the batch indices of the round), never its arithmetic.  :func:`engine_schedule`
  gives the engine's batch indices for a round, so both sides see the same data order.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence, Union

import torch

from fldp import engine
from fldp.data import FederatedData


def toy_federation(counts: Sequence[int], features: int, *, seed: int = 0, classes: int = 3,
                   x: str = "normal", x_scale: float = 1.0, labels: str = "random", label_noise: float = 0.3,
                   per_client: bool = False, test: Optional[int] = None) -> FederatedData:
    """A federation whose client ``i`` holds ``counts[i]`` rows of ``features`` features.

    Drawn from ``torch.Generator().manual_seed(seed)`` in this order:

    * the features: ``x="normal"`` (``randn``) or ``"uniform"`` (``rand`` on [0, 1)), times
      ``x_scale``; all rows at once, or (``per_client=True``) one draw per client in turn;
    * the labels: ``labels="random"``: ``randint(0, classes)`` (all rows at once, or one draw
      per client after all the features when ``per_client``); ``"sign"``: 1 where the first
      feature is positive (nothing drawn); ``"noisy_sign"``: 1 where the first feature plus
      ``label_noise`` times a standard normal (drawn for all rows) is positive.

    The test set is the first ``test`` training rows (``None``: all of them).
    """
    g = torch.Generator().manual_seed(seed)
    counts = [int(c) for c in counts]
    draw = {"normal": torch.randn, "uniform": torch.rand}[x]
    if per_client:
        if labels != "random":
            raise ValueError("per_client draws random labels only")
        xs = [draw(c, features, generator=g) * x_scale for c in counts]
        ys = [torch.randint(0, classes, (c,), generator=g) for c in counts]
        rows, y = torch.cat(xs), torch.cat(ys)
    else:
        n = sum(counts)
        rows = draw(n, features, generator=g) * x_scale
        if labels == "random":
            y = torch.randint(0, classes, (n,), generator=g)
        elif labels == "sign":
            y = (rows[:, 0] > 0).long()
        elif labels == "noisy_sign":
            y = (rows[:, 0] + label_noise * torch.randn(n, generator=g) > 0).long()
        else:
            raise ValueError(f"labels={labels!r}: 'random', 'sign' or 'noisy_sign'")
    k = len(y) if test is None else test
    return FederatedData(rows, y, torch.tensor(counts, dtype=torch.int64), rows[:k], y[:k])


def clip(v: torch.Tensor, bound: float, norm: str = "l2") -> torch.Tensor:
    """``v`` scaled to norm at most ``bound`` (l1 or l2)."""
    return v / max(1.0, float(v.norm(p=1 if norm == "l1" else 2)) / bound)


def engine_schedule(cfg, data: FederatedData, clients: torch.Tensor, t: int) -> list:
    """The engine's batches of round ``t`` for ``clients``: a list over local steps of
    ``(idx [K, B], weights [K, B])``, row ``k`` for ``clients[k]`` (weight 0: no row)."""
    return list(engine.batch_schedule(data.counts[clients], cfg, engine.batch_generators(cfg, clients, t)))


Rate = Union[float, Callable[[int], float]]


def plain_round(w: torch.Tensor, data: FederatedData, clients: torch.Tensor, *,
                loss: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor], lr: Rate = 0.0,
                schedule: Optional[list] = None, step: int = 0,
                clip_mode: Optional[str] = None, clip_bound: Optional[float] = None, clip_norm: str = "l2",
                regulariser: Optional[Callable[[torch.Tensor], torch.Tensor]] = None, mu: float = 0.0,
                upload: str = "params", noise: Optional[Callable[[int, torch.Tensor], torch.Tensor]] = None,
                aggregation: str = "weighted", server_lr: float = 1.0,
                downlink: Optional[Callable[[torch.Tensor], torch.Tensor]] = None) -> torch.Tensor:
    """One round of plain federated learning from the global model ``w`` [D]; returns the new one.

    Each client ``c = clients[k]`` alone starts from ``w`` and, for each local step ``s``:

    * takes its rows ``idx[k]`` with weights ``weights[k] > 0`` from ``schedule[s]`` (see
      :func:`engine_schedule`); ``schedule=None``: one step on all its rows, weights ``1/n_c``;
    * the step's gradient by autograd: ``sum_b weight_b grad loss(w_c, x_b, y_b)`` where
      ``loss(params [D], x [B, F], y [B])`` gives the per-sample losses [B]; with
      ``clip_mode="sample_grad"`` one backward per sample, each gradient clipped to
      ``clip_bound`` (``clip_norm`` l1 or l2) before weighting (DP-SGD's micro-batch loop);
    * adds the gradient of ``regulariser(params)`` (not clipped per sample), then clips the
      whole step gradient for ``clip_mode="batch_grad"``, then adds the prox term
      ``mu (w_c - w)``;
    * ``upload="gradient"``: uploads the first step's gradient (before the prox term) and stops;
      otherwise ``w_c -= lr(step + s) g`` (``lr`` a number or a function of the global step).

    The upload is ``w_c`` (``"params"``) or ``w_c - w`` (``"update"``); ``clip_mode="params"``
    clips it, ``"update"`` clips the update (``w + clip(w_c - w)`` for parameters); then
    ``noise(c, upload)`` returns the noisy upload.  The server averages the uploads with
    ``p_c = n_c``: ``sum p_c u_c / sum p_c`` (``aggregation="weighted"``) or
    ``(N / K) sum (n_c / n) u_c`` (``"unbiased"``), takes its step with ``server_lr`` (eta):
    ``w + eta (agg - w)`` for parameters, ``w + eta agg`` for updates, ``w - eta agg`` for
    gradients, and applies ``downlink(w)`` if given.
    """
    lr_at = lr if callable(lr) else (lambda s: lr)
    sample_clip = clip_mode == "sample_grad"
    uploads = []
    for k, c in enumerate(clients.tolist()):
        xc, yc = data.client(c)
        if schedule is None:
            steps = [(torch.arange(len(yc)), torch.full((len(yc),), 1.0 / len(yc)))]
        else:
            steps = [(idx[k][wts[k] > 0], wts[k][wts[k] > 0]) for idx, wts in schedule]
        wc, g = w.clone(), None
        for s, (rows, weights) in enumerate(steps):
            if len(rows) == 0:
                continue
            x, y = xc[rows], yc[rows]
            if sample_clip:
                g = torch.zeros_like(w)
                for i in range(len(rows)):
                    p = wc.clone().requires_grad_(True)
                    (gi,) = torch.autograd.grad(loss(p, x[i:i + 1], y[i:i + 1]).sum(), p)
                    g = g + float(weights[i]) * clip(gi, clip_bound, clip_norm)
            else:
                p = wc.clone().requires_grad_(True)
                (g,) = torch.autograd.grad((weights.to(w.dtype) * loss(p, x, y)).sum(), p)
            if regulariser is not None:
                p = wc.clone().requires_grad_(True)
                (greg,) = torch.autograd.grad(regulariser(p), p)
                g = g + greg
            if clip_mode == "batch_grad":
                g = clip(g, clip_bound, clip_norm)
            if upload == "gradient":
                break
            if mu:
                g = g + mu * (wc - w)
            wc = wc - lr_at(step + s) * g
        u = g if upload == "gradient" else (wc - w if upload == "update" else wc)
        if clip_mode == "params":
            u = clip(u, clip_bound, clip_norm)
        elif clip_mode == "update":
            u = clip(u, clip_bound, clip_norm) if upload == "update" else w + clip(u - w, clip_bound, clip_norm)
        uploads.append(noise(c, u) if noise is not None else u)
    n = data.counts.to(torch.float64)
    if aggregation == "weighted":
        p = n[clients]
        agg = sum(float(pk) * u for pk, u in zip(p, uploads)) / float(p.sum())
    elif aggregation == "unbiased":
        agg = (data.num_clients / len(clients)) * sum(float(n[c] / n.sum()) * u
                                                      for c, u in zip(clients.tolist(), uploads))
    else:
        raise ValueError(f"aggregation={aggregation!r}")
    new = {"params": w + server_lr * (agg - w), "update": w + server_lr * agg,
           "gradient": w - server_lr * agg}[upload]
    return downlink(new) if downlink is not None else new


def load_script(path, name: str):
    """A script that is not a package module (``benchmarks/*.py``) imported under ``name`` (and
    registered in ``sys.modules`` under it)."""
    import importlib.util

    import sys

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module   # a dataclass in the script looks its module up there
    spec.loader.exec_module(module)
    return module


def assert_as_archived(result, record: dict, notebook: str) -> None:
    """``result`` (a run recomputed on one thread) is what the run archive holds in ``record``:
    exactly where ``notebook``'s runs were computed in this environment, within float rounding
    (:data:`fldp.repro.verify.ROUNDING_TOL`) where they were computed in another (another
    processor's kernels round float sums otherwise), as ``fldp store verify`` judges them."""
    from pathlib import Path

    from fldp.repro import archive, store, verify

    diffs = list(verify.differences(record["result"], store.normalise(result)))
    if diffs:
        changed = archive.environment_changes(Path(__file__).resolve().parent.parent / "results" / "costs", notebook)
        assert changed and verify.rounding_only(diffs), (notebook, changed, diffs[:3])
