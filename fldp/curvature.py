"""Curvature and gradient statistics of a model on FederatedData, the measurements behind the
papers' problem constants: pure functions, tensors in, floats / numpy arrays out.

The convergence bounds of the papers need constants they "estimate" without saying how:
smoothness, Lipschitz bounds on local gradients, a Polyak-Lojasiewicz constant, a gradient
dissimilarity.  Each is measured here along a trajectory of models, as in Wang et al. 2019
(Wei et al.'s ref. [19]):

* the spectral norm of the Hessian of F (largest ``|eigenvalue|``, power iteration on
  Hessian-vector products computed by autograd double backward through ``model.loss``) on the
  global training data or a sample of it (:func:`hessian_top_eigenvalue`, :func:`smoothness`);
* the clients' full-batch gradients, all clients in one call (:func:`client_gradients`) and
  their largest norm;
* the PL ratio ``||grad F(w)||^2 / (2 (F(w) - F*))`` (:func:`pl_constant`), points with
  ``F(w) - F* <= min_gap`` skipped;
* the dissimilarity ``B(w) = sqrt(sum_i p_i ||grad F_i||^2 / ||grad F||^2)`` with
  ``p_i = |D_i| / |D|`` (:func:`dissimilarity`; Wei et al. 2020, Lemma 2, eq. (37)).

Which of these a paper needs, and how it assembles them, lives in its home:
:mod:`fldp.papers.wei2020.constants` (rho, beta, l, B, Theta of Wei et al.'s Assumption 1)
and :mod:`fldp.papers.zhou.estimate` (Zhou et al.'s L, mu, Lambda).
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
import torch

from fldp import engine, seeding, validate
from fldp.data import FederatedData
from fldp.models import Model

__all__ = [
    "client_mask", "client_losses", "client_gradients", "global_loss_and_gradient",
    "dissimilarity", "point_statistics", "trajectory_statistics", "pl_constant",
    "hessian_vector_product", "hessian_top_eigenvalue", "smoothness",
]


# ------------------------------------------------------------------ per-client quantities
def client_mask(data: FederatedData) -> torch.Tensor:
    """``mask[N, n_max]`` (0/1): the valid rows of each client in ``data.padded(all clients)``."""
    n_max = int(data.counts.max())
    return (torch.arange(n_max)[None, :] < data.counts[:, None]).to(data.x_train.dtype)


def _client_rows(data, chunk):
    n = data.num_clients
    chunk = n if chunk is None else validate.integer("chunk", chunk, 1)
    return [slice(a, min(a + chunk, n)) for a in range(0, n, chunk)]


@torch.no_grad()
def client_losses(model: Model, params: torch.Tensor, data: FederatedData,
                  chunk: Optional[int] = None) -> torch.Tensor:
    """F_i(w) for every client (mean loss over its own rows, regulariser included), ``[N]``."""
    out = []
    for r in _client_rows(data, chunk):
        k = r.stop - r.start
        x, y, mask = data.padded(torch.arange(r.start, r.stop))
        out.append(model.loss(params.reshape(1, -1).expand(k, -1), x, y, mask))
    return torch.cat(out)


def client_gradients(model: Model, params: torch.Tensor, data: FederatedData,
                     chunk: Optional[int] = None) -> torch.Tensor:
    """Full-batch gradient grad F_i(w) of every client at one model ``params[D]``, ``[N, D]``.

    Uses the model's closed-form ``grad`` (one batched call for all clients) when it has
    one, autograd on ``model.loss`` otherwise.  ``chunk`` clients at a time bounds memory.
    """
    out = []
    for r in _client_rows(data, chunk):
        k = r.stop - r.start
        rows = params.detach().reshape(1, -1).expand(k, -1)
        out.append(engine.gradient(model, rows, *data.padded(torch.arange(r.start, r.stop))))
    return torch.cat(out)


def global_loss_and_gradient(model: Model, params: torch.Tensor, data: FederatedData,
                             chunk: Optional[int] = None):
    """(F(w), grad F(w), client gradients) with F = sum_i p_i F_i, ``p_i = |D_i|/|D|`` (eq. 1)."""
    p = data.weights.to(torch.float64)
    grads = client_gradients(model, params, data, chunk)
    F = float((p * client_losses(model, params, data, chunk).to(torch.float64)).sum())
    g = (p[:, None] * grads.to(torch.float64)).sum(dim=0)
    return F, g, grads


def dissimilarity(grads: torch.Tensor, weights: Optional[torch.Tensor] = None) -> float:
    """B(w) of eq. (37): sqrt(sum_i p_i ||g_i||^2 / ||sum_i p_i g_i||^2), >= 1 (Jensen).

    ``grads[N, D]`` are the client gradients at one w; ``weights`` p_i (uniform if None).
    Returns inf when the weighted mean gradient is exactly zero.
    """
    g = grads.to(torch.float64)
    n = g.shape[0]
    p = torch.full((n,), 1.0 / n, dtype=torch.float64) if weights is None else weights.to(torch.float64)
    p = p / p.sum()
    mean_sq = float((p * (g * g).sum(dim=1)).sum())
    full_sq = float(((p[:, None] * g).sum(dim=0) ** 2).sum())
    return math.inf if full_sq == 0 else math.sqrt(mean_sq / full_sq)


def point_statistics(model: Model, params: torch.Tensor, data: FederatedData,
                     chunk: Optional[int] = None) -> dict:
    """At one model w: F(w), ||grad F(w)||^2, max_i ||grad F_i(w)|| and B(w)."""
    F, g, grads = global_loss_and_gradient(model, params, data, chunk)
    return {"F": F, "grad_sq": float((g * g).sum()),
            "max_client_grad": float(torch.linalg.vector_norm(grads.to(torch.float64), dim=1).max()),
            "B": dissimilarity(grads, data.weights)}


def trajectory_statistics(model: Model, trajectory: Sequence[torch.Tensor], data: FederatedData,
                          chunk: Optional[int] = None) -> dict:
    """:func:`point_statistics` at every model of ``trajectory``, as numpy arrays."""
    rows = [point_statistics(model, w, data, chunk) for w in trajectory]
    return {k: np.array([r[k] for r in rows]) for k in rows[0]}


def pl_constant(F, grad_sq, F_star: float, min_gap: float = 1e-8):
    """l = min_t ||grad F(w_t)||^2 / (2 (F(w_t) - F*)) over the points with F - F* > min_gap.

    Returns (l, index of the minimising point, the ratio at every point (nan where skipped)).
    Raises ValueError when no point lies above F* + min_gap.
    """
    F, grad_sq = np.asarray(F, dtype=float), np.asarray(grad_sq, dtype=float)
    gap = F - float(F_star)
    ok = gap > min_gap
    if not ok.any():
        raise ValueError(f"no trajectory point has F - F* > {min_gap} (F* = {F_star}): "
                         "F* is not below the trajectory's losses")
    ratio = np.full(F.shape, np.nan)
    ratio[ok] = grad_sq[ok] / (2 * gap[ok])
    i = int(np.nanargmin(ratio))
    return float(ratio[i]), i, ratio


# ------------------------------------------------------------------ smoothness
def _loss_fn(model, x, y):
    x, y = x.reshape(1, *x.shape), y.reshape(1, -1)
    return lambda p: model.loss(p, x, y).sum()


def hessian_vector_product(model: Model, params: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                           v: torch.Tensor) -> torch.Tensor:
    """H v, H the Hessian at ``params[D]`` of the mean loss of ``model`` on rows ``(x, y)``
    (regulariser included), by autograd double backward."""
    p = params.detach().reshape(1, -1).clone().requires_grad_(True)
    with torch.enable_grad():
        (g,) = torch.autograd.grad(_loss_fn(model, x, y)(p), p, create_graph=True)
        (hv,) = torch.autograd.grad((g * v.reshape(1, -1)).sum(), p)
    return hv.reshape(-1)


def hessian_top_eigenvalue(model: Model, params: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                           *, iters: int = 50, tol: float = 1e-4, seed: int = 0):
    """Eigenvalue of largest magnitude of the Hessian of the mean loss on ``(x, y)`` at ``params``.

    Power iteration v <- Hv/||Hv|| from a seeded Gaussian start; the gradient graph is built
    once and each iteration is one double-backward pass.  Stops when the Rayleigh quotient
    v^T H v changes by less than ``tol`` (relative).  Returns (lambda, iterations used);
    lambda is signed (a non-convex loss may have a dominant negative eigenvalue), and the
    smoothness constant is ``|lambda| = ||H||_2``.
    """
    iters = validate.integer("iters", iters, 1)
    validate.positive("tol", tol)
    g0 = seeding.torch_generator(int(seed), "hessian_start")
    p = params.detach().reshape(1, -1).clone().requires_grad_(True)
    with torch.enable_grad():
        (g,) = torch.autograd.grad(_loss_fn(model, x, y)(p), p, create_graph=True)
        v = torch.randn(p.shape, generator=g0, dtype=p.dtype)
        v = v / torch.linalg.vector_norm(v)
        lam, prev = 0.0, None
        for it in range(1, iters + 1):
            (hv,) = torch.autograd.grad((g * v).sum(), p, retain_graph=True)
            lam = float((v * hv).sum())
            norm = torch.linalg.vector_norm(hv)
            if norm == 0:
                return 0.0, it
            v = (hv / norm).detach()
            if prev is not None and abs(lam - prev) <= tol * max(abs(lam), 1e-30):
                break
            prev = lam
    return lam, it


def smoothness(model: Model, points: Sequence[torch.Tensor], x: torch.Tensor, y: torch.Tensor,
               **kwargs):
    """rho = max over ``points`` of ``|top Hessian eigenvalue|`` on ``(x, y)``; returns (rho, list)."""
    lams = [hessian_top_eigenvalue(model, w, x, y, **kwargs)[0] for w in points]
    return max(abs(v) for v in lams), lams
