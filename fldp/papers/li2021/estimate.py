"""The constants of Li, Chang & Chi's Theorem 1 for L2-regularised logistic regression on a
federated split, computed (not guessed) from the data.

* ``w*`` and every client's ``F_k^*``: damped Newton on the regularised objective, all
  clients at once (batched [N, D, D] Hessians, D = 106 on Adult).  A client holding one
  class has no minimiser when the bias is not penalised (the loss falls towards 0 as the
  bias grows): its F_k^* is the infimum 0, reported as such.
* ``L`` (Assumption 1, for all w): the largest over clients of the global bound
  lambda_max(X_k~^T X_k~) / (4 n_k) + 2 l2_scale lambda, X_k~ the rows with a bias column
  (the logistic loss's curvature s(1-s) is at most 1/4).
* ``mu`` (Assumption 2): the regulariser's 2 lambda.  With the bias unpenalised this holds
  along w only; along the bias F_k is strongly convex only where its data curvature is,
  which vanishes far from w*.  ``mu_at_opt`` is the smallest Hessian eigenvalue of F at w*.
* ``gamma_k^2`` (Assumption 3, b = 1): the variance of one sample's gradient at w*,
  ``(1/n_k) sum_m ||grad l_m(w*) - grad F_k(w*)||^2``.
* ``Gamma = F(w*) - sum_k p_k F_k^*`` (eq. (12c)); ``G``: the clipping bound, beside the
  largest per-sample gradient norm met at w0 and w*.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from fldp import engine, validate
from fldp.data import FederatedData
from fldp.models import BinaryLogReg

__all__ = ["Constants", "newton", "estimate_constants"]


@dataclass(frozen=True)
class Constants:
    L: float
    mu: float
    mu_at_opt: float
    gamma_sq: list          # per client
    Gamma: float
    F_star: float
    w0_dist_sq: float
    G_max_w0: float
    G_max_opt: float
    M: int
    n: int
    newton_iters: int
    one_class_clients: int  # clients whose F_k^* is the infimum 0 (no minimiser)

    def as_dict(self) -> dict:
        return asdict(self)


def _design(data: FederatedData, clients: torch.Tensor):
    x, y, mask = data.padded(clients)
    x1 = torch.cat([x, torch.ones(*x.shape[:2], 1, dtype=x.dtype)], dim=2) * mask[..., None]
    return x.double(), y, mask.double(), x1.double()


def newton(model: BinaryLogReg, data: FederatedData, clients: torch.Tensor, *, iters: int = 50,
           tol: float = 1e-10):
    """Minimise each client's F_k (or, with all rows in one 'client', F) by damped Newton in
    float64, all at once; returns (w [K, D], F_k(w) [K], iterations)."""
    x, y, mask, x1 = _design(data, clients)
    n = mask.sum(dim=1)
    k, dim = len(clients), model.dim
    pen = model._penalty.double() * model.strong_convexity
    w = torch.zeros(k, dim, dtype=torch.float64)

    def f(w):
        z = (x1 * w[:, None, :]).sum(-1)
        s = 2 * y.double() - 1
        loss = (torch.nn.functional.softplus(-s * z) * mask).sum(1) / n
        return loss + 0.5 * (pen * w * w).sum(1)

    fw = f(w)
    for it in range(1, iters + 1):
        z = (x1 * w[:, None, :]).sum(-1)
        r = (torch.sigmoid(z) - y.double()) * mask
        g = torch.einsum("kn,knd->kd", r, x1) / n[:, None] + pen * w
        c = torch.sigmoid(z) * (1 - torch.sigmoid(z)) * mask / n[:, None]
        H = torch.einsum("kn,knd,kne->kde", c, x1, x1) + torch.diag_embed(pen)
        H = H + 1e-12 * torch.eye(dim, dtype=torch.float64)
        step = torch.linalg.solve(H, g.unsqueeze(-1)).squeeze(-1)
        t = torch.ones(k, dtype=torch.float64)
        for _ in range(30):  # backtracking per client
            new = f(w - t[:, None] * step)
            bad = new > fw - 1e-4 * t * (g * step).sum(1)
            if not bool(bad.any()):
                break
            t = torch.where(bad, t / 2, t)
        w = w - t[:, None] * step
        new_f = f(w)
        done = bool(((fw - new_f).abs() <= tol * (1 + fw.abs())).all())
        fw = new_f
        if done:
            break
    return w, fw, it


def estimate_constants(model: BinaryLogReg, data: FederatedData, *, iters: int = 50) -> Constants:
    """Theorem 1's constants for ``model`` on ``data`` (see the module docstring)."""
    if not isinstance(model, BinaryLogReg):
        raise ValueError(f"model={type(model).__name__} is not supported: estimate_constants needs "
                         "fldp.models.BinaryLogReg (Li et al.'s logistic regression)")
    iters = validate.integer("iters", iters, 1)
    N = data.num_clients
    everyone = FederatedData(data.x_train, data.y_train, data.counts.sum().reshape(1),
                             data.x_test, data.y_test)  # the union of the clients as one client
    w_star, F_star, used = newton(model, everyone, torch.arange(1), iters=iters)
    w_star = w_star[0]
    _, F_k, _ = newton(model, data, torch.arange(N), iters=iters)
    one_class = torch.tensor([len(torch.unique(data.client(i)[1])) == 1 for i in range(N)])
    if model.bias and not model.penalize_bias:
        F_k = torch.where(one_class, torch.zeros_like(F_k), F_k)  # the infimum, not attained
    p = data.weights.double()
    Gamma = float(F_star[0] - (p * F_k).sum())
    x, y, mask, x1 = _design(data, torch.arange(N))
    n_k = mask.sum(1)
    L_reg = model.strong_convexity
    gram = torch.einsum("knd,kne->kde", x1, x1) / (4 * n_k[:, None, None])
    L = float(torch.linalg.eigvalsh(gram)[:, -1].max()) + L_reg
    z = torch.sigmoid((x1 * w_star).sum(-1))
    H = torch.einsum("kn,knd,kne->de", z * (1 - z) * mask, x1, x1) / n_k.sum() + torch.diag(
        model._penalty.double() * L_reg)
    mu_opt = float(torch.linalg.eigvalsh(H)[0])
    gam, gmax = [], []
    for w in (w_star, torch.zeros_like(w_star)):
        g = engine.per_sample_gradients(model, w.float().expand(N, -1), x.float(), y).double()
        g = g * mask[..., None]
        gmax.append(float(torch.linalg.vector_norm(g + (model._penalty.double() * L_reg * w), dim=-1)
                          .mul(mask).max()))
        mean = g.sum(1) / n_k[:, None]
        gam.append(((((g - mean[:, None, :]) * mask[..., None]) ** 2).sum((1, 2)) / n_k).tolist())
    return Constants(L=L, mu=L_reg, mu_at_opt=mu_opt, gamma_sq=gam[0], Gamma=Gamma,
                     F_star=float(F_star[0]), w0_dist_sq=float((w_star**2).sum()),
                     G_max_w0=gmax[1], G_max_opt=gmax[0], M=model.dim, n=int(n_k.sum()),
                     newton_iters=used, one_class_clients=int(one_class.sum()))
