"""The problem constants of Zhou et al.'s bounds, estimated from the data: mu, lambda, G,
Lambda_i, xi_1, xi_2 (Assumptions 1-6), Gamma (Definition 4) and Y_0, which Theorems 3-4 and
Table I need and the paper does not publish.  Its "Discussion of Implementation" (Sec. V-B) says
mu, lambda, xi_1 and G "can be estimated ... by leveraging the existing algorithms introduced in
[21], [42]" (Wang et al. 2019 measure such constants along the training trajectory) and gives a
recipe for Y_0 and Gamma only.  :func:`estimate_constants` does exactly this on a non-private
FedSGD trajectory (its docstring says how each constant is read, mu included, which Assumption 4
leaves at 0 for unregularised softmax regression), from the per-client
:func:`gradient_statistics`, :func:`secant_curvature` and :func:`local_optima`.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import torch

from fldp import curvature, engine, validate
from fldp.data import FederatedData
from fldp.models import Model
from fldp.papers.zhou import algorithm as alg

__all__ = ["flat_directions", "gradient_statistics", "secant_curvature", "local_optima", "estimate_constants"]


def flat_directions(model: Model, data: FederatedData, *, seed: int = 0, trials: int = 3) -> dict:
    """Assumption 4 (each F_i mu-strongly convex, mu > 0; Zhou et al., Sec. III) tested on the
    model itself: the largest change of any client's loss F_i when every class's weights move by one
    random vector v (``w -> w + v 1^T``: all logits of a row shift by x^T v, which a softmax does not
    see), against the change when only one class's weights move by the same v (a direction the loss
    does see, the measurement's power).  A loss that does not move along a line is not strongly
    convex there: the first is 0 up to rounding for softmax regression without bias, whose Hessian
    then has a null space of dimension ``in_features`` (784 on MNIST; one more with a bias, which
    shifts the same way), so mu = 0: only a regulariser would remove it.  Returns
    ``{"max_change_flat", "min_change_class", "flat_dim", "trials"}`` (losses in nats)."""
    trials = validate.integer("trials", trials, 1)
    if not hasattr(model, "num_classes") or "w" not in model.shapes:
        raise ValueError("model must be a softmax regression with weights 'w' of shape (features, classes)")
    feats, classes = model.shapes["w"]
    g = torch.Generator().manual_seed(int(seed))
    flat, seen = 0.0, float("inf")
    for _ in range(trials):
        theta = model.init(g)[None].double()
        v = torch.randn(feats, generator=g, dtype=torch.float64)
        w_flat = theta[:, :feats * classes].clone().view(1, feats, classes)
        shift_all = v[:, None].expand(feats, classes)
        shift_one = torch.zeros(feats, classes, dtype=torch.float64)
        shift_one[:, 0] = v
        for i in range(data.num_clients):
            x, y = data.client(i)
            x = x.double()[None]
            base = float(model.loss(theta, x, y[None])[0])
            for shift, kind in ((shift_all, "flat"), (shift_one, "class")):
                moved = (w_flat + shift[None]).reshape(1, -1)
                if model.bias:
                    moved = torch.cat([moved, theta[:, feats * classes:]], dim=1)
                change = abs(float(model.loss(moved, x, y[None])[0]) - base)
                flat, seen = (max(flat, change), seen) if kind == "flat" else (flat, min(seen, change))
    return {"max_change_flat": flat, "min_change_class": seen, "flat_dim": int(feats) + int(bool(model.bias)),
            "trials": trials}


def gradient_statistics(model: Model, params: torch.Tensor, data: FederatedData,
                        chunk: int = 1000) -> dict:
    """Per client at one model: mean ||g_zeta||^2, the full-batch gradient, Lambda_i^2, and
    the largest l1 / l2 row-gradient norm (``chunk`` rows at a time)."""
    out = {"mean_sq": [], "Lambda_sq": [], "max_l1": [], "max_l2": []}
    for i in range(data.num_clients):
        x, y = data.client(i)
        total = torch.zeros(model.dim, dtype=torch.float64)
        sq, l1, l2 = 0.0, 0.0, 0.0
        for a in range(0, len(y), chunk):
            g = engine.per_sample_gradients(model, params[None], x[None, a:a + chunk], y[None, a:a + chunk])[0].double()
            total += g.sum(dim=0)
            n2 = (g * g).sum(dim=1)
            sq += float(n2.sum())
            l1 = max(l1, float(g.abs().sum(dim=1).max()))
            l2 = max(l2, float(n2.max().sqrt()))
        n = len(y)
        mean = total / n
        out["mean_sq"].append(sq / n)
        out["Lambda_sq"].append(sq / n - float(mean @ mean))
        out["max_l1"].append(l1)
        out["max_l2"].append(l2)
    return {k: np.array(v) for k, v in out.items()}


def secant_curvature(model: Model, a: torch.Tensor, b: torch.Tensor, data: FederatedData) -> np.ndarray:
    """<grad F_i(b) - grad F_i(a), b - a> / ||b - a||^2 for every client i, ``[N]``."""
    return _secant(a, b, curvature.client_gradients(model, a, data), curvature.client_gradients(model, b, data))


def _secant(a, b, grads_a, grads_b):
    s = (b - a).double()
    return ((grads_b - grads_a).double() @ s / (s @ s)).numpy()


def local_optima(model: Model, theta0: torch.Tensor, data: FederatedData, *, local_steps: int,
                 local_lr: float) -> torch.Tensor:
    """theta_i* proxies: ``local_steps`` full-batch gradient steps of rate ``local_lr`` from
    ``theta0`` on each client's own rows, all clients at once (the engine's local training)."""
    cfg = engine.FLConfig(num_rounds=1, local_steps=validate.integer("local_steps", local_steps, 1),
                          sampling="full", lr=validate.positive("local_lr", local_lr), seed=0)
    return engine.local_train(model, theta0, data, torch.arange(data.num_clients), cfg)


def estimate_constants(model: Model, data: FederatedData, *, T_traj: int = 50, lr: float = 0.05,
                       lr_decay: float = 0.01, local_steps: int = 200, local_lr: Optional[float] = None,
                       stat_points: int = 4, hessian_points: int = 2, hessian_iters: int = 30,
                       seed: int = 0) -> dict:
    """mu, lambda, G, Gamma, Y_0, xi_1, xi_2, Lambda_i of ``model`` on ``data``, with p, d, N
    and gamma = 2 lambda / mu: the constants of Zhou et al.'s Theorems 3-4 and Table I
    (Assumptions 1-6, Definition 4), estimated as the paper's Sec. V-B "Discussion of
    Implementation" describes.

    The trajectory: ``T_traj`` rounds of non-private FedSGD (b = N, all N clients, every row,
    learning rate ``lr / (1 + lr_decay (t - 1))``, the experiments' rate) from the seeded
    initial model, theta_0..theta_K.  Gradient statistics at ``stat_points`` evenly spaced
    points (first and last included), Hessians at ``hessian_points``; secants between every
    pair of consecutive points.  ``local_lr`` defaults to 1/lambda (gradient descent's safe
    step on a lambda-smooth loss).  Each constant:

    * **lambda** = max over clients i and ``hessian_points`` trajectory points of the largest
      Hessian eigenvalue of F_i (power iteration, :func:`fldp.curvature.hessian_top_eigenvalue`);
    * **mu**: the smallest Hessian eigenvalue of unregularised softmax regression is exactly 0
      (adding one vector to every class's weights leaves the loss unchanged), so Assumption 4
      fails and the bound's gamma = 2 lambda / mu is infinite.  We take the curvature the
      iterates see: mu = min over clients and consecutive trajectory points of the secant
      <grad F_i(theta_{t+1}) - grad F_i(theta_t), theta_{t+1} - theta_t> / ||theta_{t+1} - theta_t||^2
      (restricted strong convexity along the path, in the spirit of [42]'s secant estimates);
    * **G^2** = max over points and clients of the mean over the client's rows of
      ||grad F(theta, zeta)||^2 (Assumption 5's expectation over zeta, unclipped);
    * **xi_1**, **xi_2** = max over points and rows of the l1 / l2 norm of a row's gradient
      (Assumptions 1-2, unclipped; the experiments clip at 300 and 10);
    * **Lambda_i^2** = max over points of the mean over client i's rows of
      ||grad F_i(theta, D_i) - grad F(theta, zeta)||^2 (Assumption 6);
    * **Y_0** = sum_i d_i/d ||theta_0 - theta_i*||^2 and **Gamma** = max_i F_i* - sum_i d_i/d F_i*
      (the paper's recipe), with theta_i* the local model after ``local_steps`` full-batch
      gradient steps of rate ``local_lr`` from theta_0 on client i's rows (:func:`local_optima`):
      a two-digit client's data are (nearly) linearly separable, so its unregularised optimum
      lies at infinity and theta_i* is a fixed-budget proxy (Y_0 grows with the budget;
      ``notebooks/zhou/02_laplace`` shows how much).
    """
    T_traj = validate.integer("T_traj", T_traj, 1)
    traj = []

    def observe(ctx):
        traj.extend(([ctx.global_params.clone()] if ctx.t == 1 else []) + [ctx.params.clone()])

    cfg = alg.config(mechanism="laplace", b=data.num_clients, T=T_traj, lr=lr, lr_decay=lr_decay,
                     private=False, seed=seed, eval_every=T_traj)
    hist = engine.run(model, data, cfg, observer=observe)
    pick = lambda k: sorted(set(np.linspace(0, T_traj, max(1, min(k, T_traj + 1))).round().astype(int).tolist()))
    stats = [gradient_statistics(model, traj[t], data) for t in pick(stat_points)]
    grads = [curvature.client_gradients(model, w, data) for w in traj]  # each point once
    curv = np.array([_secant(traj[t], traj[t + 1], grads[t], grads[t + 1]) for t in range(T_traj)])
    hess = [[curvature.hessian_top_eigenvalue(model, traj[t], *data.client(i), iters=hessian_iters,
                                              seed=seed)[0] for i in range(data.num_clients)]
            for t in pick(hessian_points)]
    theta0 = traj[0]
    mu, lam = float(curv.min()), float(np.max(hess))
    local_lr = 1.0 / lam if local_lr is None else local_lr
    opt = local_optima(model, theta0, data, local_steps=local_steps, local_lr=local_lr)
    p_i = data.weights.double().numpy()
    with torch.no_grad():  # F_i(theta_i*): each client's own local optimum on its own rows
        F_opt = model.loss(opt, *data.padded(torch.arange(data.num_clients))).double().numpy()
    Y0 = float((p_i * ((opt - theta0[None]).double() ** 2).sum(dim=1).numpy()).sum())
    stack = lambda k: np.stack([s[k] for s in stats])
    return {
        "mu": mu, "lam": lam, "gamma": 2 * lam / mu,
        "G": float(np.sqrt(stack("mean_sq").max())),
        "Gamma": float(F_opt.max() - (p_i * F_opt).sum()),
        "Y0": Y0, "xi1": float(stack("max_l1").max()), "xi2": float(stack("max_l2").max()),
        "Lambda": np.sqrt(stack("Lambda_sq").max(axis=0)).tolist(),
        "p": int(model.dim), "d": int(data.counts.sum()), "N": int(data.num_clients),
        "details": {"points": pick(stat_points), "hessian_points": pick(hessian_points),
                    "hessian_top": np.array(hess).tolist(), "secant_min_per_step": curv.min(axis=1).tolist(),
                    "F_i_star": F_opt.tolist(), "train_loss": list(hist.train_loss),
                    "local_steps": local_steps, "local_lr": local_lr, "T_traj": T_traj},
    }
