"""Estimates of the constants of Wei et al. 2020, Assumption 1, for a model on FederatedData.

The convergence bounds of Theorems 2 and 3 need rho (smoothness), beta (Lipschitz bound on
the local gradients), l (Polyak-Lojasiewicz constant), B (dissimilarity, Lemma 2, eq. 37)
and Theta = F(w0) - F*.  The paper "uses estimated values" without saying how.  Here each
one is measured along a trajectory of models (for NbAFL: the non-private run of
:func:`nonprivate_trajectory`), as in Wang et al. 2019 (the paper's ref. [19]):

* rho = max over selected trajectory points of the spectral norm of the Hessian of F
  (largest |eigenvalue|, power iteration on Hessian-vector products computed by autograd
  double backward through ``model.loss``) on the global training data or a random sample
  of it (:func:`hessian_top_eigenvalue`);
* beta = max over the trajectory and the clients of ||grad F_i(w)|| (full-batch client
  gradients, all clients in one call, :func:`client_gradients`);
* l = min over the trajectory of ||grad F(w)||^2 / (2 (F(w) - F*)) (the PL inequality of
  Assumption 1-2 solved for l), points with F(w) - F* <= ``min_gap`` skipped;
* B = max over the trajectory of B(w) = sqrt(sum_i p_i ||grad F_i||^2 / ||grad F||^2)
  (eq. 37 with the expectation over clients weighted by p_i = |D_i|/|D|);
* Theta = F(w0) - F*.

F* is not known for a neural network; :func:`estimate_nbafl_constants` takes it as the
smallest global training loss reached by a longer non-private run (an upper bound on the
true minimum; cross-entropy is >= 0, so the true F* lies in [0, that value]).

All functions are pure (no global state); tensors in, floats / numpy arrays out.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
import torch

from . import engine, seeding, validate
from .data import FederatedData
from .models import Model

__all__ = [
    "client_mask", "client_losses", "client_gradients", "global_loss_and_gradient",
    "dissimilarity", "point_statistics", "trajectory_statistics", "pl_constant",
    "hessian_vector_product", "hessian_top_eigenvalue", "smoothness", "choose_mu",
    "estimate_constants", "nonprivate_trajectory", "estimate_nbafl_constants",
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
    """(F(w), grad F(w), client gradients) with F = sum_i p_i F_i, p_i = |D_i|/|D| (eq. 1)."""
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
    smoothness constant is |lambda| = ||H||_2.
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
    """rho = max over ``points`` of |top Hessian eigenvalue| on ``(x, y)``; returns (rho, list)."""
    lams = [hessian_top_eigenvalue(model, w, x, y, **kwargs)[0] for w in points]
    return max(abs(v) for v in lams), lams


def choose_mu(rho: float, B: float, factor: float = 2.0) -> float:
    """mu = factor * rho B (1 + B/2).  lambda_2 of Lemma 3 (eq. 14) is < 0 iff
    mu > rho B (1 + B/2); factor 2 gives lambda_2 = -1/(2 mu), i.e. P = 1 - l/mu."""
    validate.positive("rho", rho), validate.positive("B", B)
    if not validate.positive("factor", factor) > 1:
        raise ValueError(f"factor={factor!r} is out of range: factor must be > 1 for lambda_2 < 0")
    return factor * rho * B * (1 + B / 2)


# ------------------------------------------------------------------ all together
def estimate_constants(model: Model, trajectory: Sequence[torch.Tensor], data: FederatedData,
                       F_star: float, *, rho_points: Optional[Sequence[int]] = None,
                       hessian_sample: Optional[int] = None, hessian_iters: int = 50,
                       hessian_tol: float = 1e-4, seed: int = 0, chunk: Optional[int] = None) -> dict:
    """rho, beta, l, B, Theta of Assumption 1 along ``trajectory`` (w0 first), given F*.

    ``rho_points``: trajectory indices where the Hessian is evaluated (default: 4 evenly
    spaced, first and last included); ``hessian_sample``: number of training rows (a seeded
    random subset of ``data.x_train``) for the Hessian, all rows if None.  Returns a dict
    with the constants and, under ``"per_point"``, the per-point arrays behind them.
    """
    if len(trajectory) < 1:
        raise ValueError("trajectory is empty")
    st = trajectory_statistics(model, trajectory, data, chunk)
    l, i_l, ratio = pl_constant(st["F"], st["grad_sq"], F_star)
    n_pts = len(trajectory)
    if rho_points is None:
        rho_points = sorted(set(np.linspace(0, n_pts - 1, min(4, n_pts)).round().astype(int).tolist()))
    x, y = data.x_train, data.y_train
    if hessian_sample is not None and hessian_sample < len(y):
        g = seeding.torch_generator(int(seed), "hessian_rows")
        keep = torch.randperm(len(y), generator=g)[: validate.integer("hessian_sample", hessian_sample, 1)]
        x, y = x[keep], y[keep]
    rho, lams = smoothness(model, [trajectory[i] for i in rho_points], x, y,
                           iters=hessian_iters, tol=hessian_tol, seed=seed)
    return {
        "rho": rho, "beta": float(st["max_client_grad"].max()), "l": l, "B": float(st["B"].max()),
        "Theta": float(st["F"][0] - F_star), "F_star": float(F_star),
        "argmax_beta": int(st["max_client_grad"].argmax()), "argmin_l": i_l,
        "argmax_B": int(st["B"].argmax()), "rho_points": list(rho_points),
        "per_point": {**st, "pl_ratio": ratio, "hessian_top_eig": lams,
                      "hessian_rows": int(len(y))},
    }


def nonprivate_trajectory(model: Model, data: FederatedData, *, T: int, **run_kwargs):
    """``nbafl.run(model, data, T=T, private=False, eval_every=1, eval_train=True, **run_kwargs)``
    and the global model after every round: returns (history, [w^(0), ..., w^(T)])."""
    from .papers.wei2020 import algorithm as nbafl

    for k in ("private", "eval_every", "eval_train"):
        if k in run_kwargs:
            raise ValueError(f"{k} is fixed by nonprivate_trajectory")
    traj = []

    def observe(ctx):  # the engine's per-round observer: w^(t-1) before round 1, then w^(t)
        traj.extend(([ctx.global_params.clone()] if ctx.t == 1 else []) + [ctx.params.clone()])

    hist, _ = nbafl.run(model, data, T=T, private=False, eval_every=1, eval_train=True,
                        observer=observe, **run_kwargs)
    return hist, traj


def estimate_nbafl_constants(model: Model, data: FederatedData, *, T_traj: int, T_star: int,
                             mu_factor: float = 2.0, hessian_sample: Optional[int] = 5000,
                             hessian_iters: int = 30, seed: int = 0, **run_kwargs) -> dict:
    """The constants of Theorems 2-3 for NbAFL's non-private run, in one call.

    One non-private run (:func:`nonprivate_trajectory`) of ``T_star`` rounds; the trajectory
    for rho, beta, l, B is its first ``T_traj + 1`` models (w^(0..T_traj)); F* = the smallest
    global training loss over all ``T_star`` rounds; Theta = F(w^(0)) - F*; mu = mu_factor
    rho B (1 + B/2) (:func:`choose_mu`).  Returns {"constants": flat dict {rho, beta, l, B,
    Theta, mu, F_star}, "details": estimate_constants' dict, "train_loss": the run's losses}.
    """
    T_traj = validate.integer("T_traj", T_traj, 1)
    T_star = validate.integer("T_star", T_star, T_traj)
    hist, traj = nonprivate_trajectory(model, data, T=T_star, seed=seed, **run_kwargs)
    F_star = float(np.min(hist.train_loss))
    est = estimate_constants(model, traj[: T_traj + 1], data, F_star, hessian_sample=hessian_sample,
                             hessian_iters=hessian_iters, seed=seed)
    const = {k: est[k] for k in ("rho", "beta", "l", "B", "Theta")}
    const["mu"] = choose_mu(const["rho"], const["B"], mu_factor)
    const["F_star"] = F_star
    return {"constants": const, "details": est, "train_loss": list(hist.train_loss),
            "test_acc": list(hist.test_acc), "wall_time_s": hist.wall_time_s}
