"""The constants of Wei et al. 2020, Assumption 1, estimated for a model on FederatedData.

The convergence bounds of Theorems 2 and 3 need rho (smoothness), beta (Lipschitz bound on
the local gradients), l (Polyak-Lojasiewicz constant), B (dissimilarity, Lemma 2, eq. (37))
and Theta = F(w0) - F*.  The paper "uses estimated values" without saying how.  Here each
one is measured (with :mod:`fldp.curvature`) along the trajectory of NbAFL's non-private run
(:func:`nonprivate_trajectory`), as in Wang et al. 2019 (the paper's ref. [19]):

* rho = max over selected trajectory points of the spectral norm of the Hessian of F, on the
  global training data or a seeded random sample of it;
* beta = max over the trajectory and the clients of ||grad F_i(w)|| (full-batch gradients);
* l = min over the trajectory of ||grad F(w)||^2 / (2 (F(w) - F*)) (Assumption 1-2 solved for l);
* B = max over the trajectory of B(w) (eq. (37), clients weighted by ``p_i = |D_i|/|D|``);
* Theta = F(w0) - F*.

F* is not known for a neural network; :func:`estimate_nbafl_constants` takes it as the
smallest global training loss reached by a longer non-private run (an upper bound on the
true minimum; cross-entropy is >= 0, so the true F* lies in [0, that value]).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch

from fldp import seeding, validate
from fldp.curvature import pl_constant, smoothness, trajectory_statistics
from fldp.data import FederatedData
from fldp.models import Model
from fldp.papers.wei2020 import algorithm as nbafl

__all__ = ["choose_mu", "estimate_constants", "nonprivate_trajectory", "estimate_nbafl_constants"]


def choose_mu(rho: float, B: float, factor: float = 2.0) -> float:
    """mu = factor * rho B (1 + B/2).  lambda_2 of Lemma 3 (eq. 14) is < 0 iff
    mu > rho B (1 + B/2); factor 2 gives lambda_2 = -1/(2 mu), i.e. P = 1 - l/mu."""
    validate.positive("rho", rho), validate.positive("B", B)
    if not validate.positive("factor", factor) > 1:
        raise ValueError(f"factor={factor!r} is out of range: factor must be > 1 for lambda_2 < 0")
    return factor * rho * B * (1 + B / 2)


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
