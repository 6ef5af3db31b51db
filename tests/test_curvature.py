"""fldp.curvature and fldp.papers.wei2020.constants against problems whose constants are known exactly.

* a quadratic (least squares, a Model defined here): Hessian X^T X / n, F* and w* in closed
  form, PL constant = smallest Hessian eigenvalue along its eigenvector;
* L2-regularised binary logistic regression (fldp.models.BinaryLogReg): Hessian
  X~^T S X~ / n + lambda I with S = diag(s (1 - s)), computed here with numpy;
* identical clients: B = 1 exactly; two clients with hand-picked gradients: B by hand.
"""
import math

import numpy as np
import pytest
import torch

from fldp import curvature as est
from fldp.papers.wei2020 import constants as wc
from fldp import models
from fldp.data import FederatedData


class LeastSquares(models.Model):
    """F(w) = mean_j (x_j^T w - y_j)^2 / 2: a quadratic with Hessian X^T X / n."""

    def __init__(self, d):
        self.num_classes = 1
        self.shapes = {"w": (d,)}
        super().__init__()

    def _fan_in(self, name, shape):
        return shape[0]

    def forward(self, params, x):
        return torch.bmm(x, params.unsqueeze(-1))  # [C, B, 1]

    def per_sample_loss(self, params, x, y):
        return 0.5 * (self.forward(params, x).squeeze(-1) - y) ** 2


def fed(x, y, counts):
    """FederatedData whose client i holds the next counts[i] rows of (x, y)."""
    return FederatedData(x, y, torch.tensor(counts), x[:5], y[:5])


def quadratic(seed=0, d=6, counts=(7, 9, 5, 11)):
    g = torch.Generator().manual_seed(seed)
    n = sum(counts)
    x = torch.randn(n, d, generator=g, dtype=torch.float64) * torch.linspace(0.5, 2.0, d, dtype=torch.float64)
    y = torch.randn(n, generator=g, dtype=torch.float64)
    return LeastSquares(d), fed(x, y, list(counts)), x, y


def test_client_gradients_and_global_gradient_quadratic():
    model, data, x, y = quadratic()
    w = torch.linspace(-1, 1, x.shape[1], dtype=torch.float64)
    grads = est.client_gradients(model, w, data)  # autograd path (no closed form)
    start = 0
    for i, c in enumerate(data.counts.tolist()):
        xi, yi = x[start:start + c], y[start:start + c]
        assert torch.allclose(grads[i], xi.T @ (xi @ w - yi) / c)
        start += c
    F, g, _ = est.global_loss_and_gradient(model, w, data)
    assert F == pytest.approx(float(0.5 * ((x @ w - y) ** 2).mean()), rel=1e-12)
    assert torch.allclose(g, x.T @ (x @ w - y) / len(y))  # sum_i p_i grad F_i = grad of the pooled mean


def test_hessian_and_pl_and_theta_of_a_quadratic():
    model, data, x, y = quadratic()
    H = (x.T @ x / len(y)).numpy()
    evals, evecs = np.linalg.eigh(H)
    w_star = torch.linalg.lstsq(x, y.unsqueeze(-1)).solution.squeeze(-1)
    F_star = float(0.5 * ((x @ w_star - y) ** 2).mean())
    w = w_star + 0.3 * torch.randn(x.shape[1], generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    v = torch.randn(x.shape[1], dtype=torch.float64)
    assert torch.allclose(est.hessian_vector_product(model, w, x, y, v), torch.as_tensor(H) @ v)
    lam, _ = est.hessian_top_eigenvalue(model, w, x, y, iters=500, tol=1e-12)
    assert lam == pytest.approx(evals[-1], rel=1e-8)
    # PL along the smallest and the largest eigenvector: ||grad||^2 / (2 gap) = that eigenvalue
    traj = [w_star + s * torch.as_tensor(evecs[:, 0]) for s in (2.0, 1.0, 0.5)]
    traj += [w_star + torch.as_tensor(evecs[:, -1])]
    out = wc.estimate_constants(model, traj, data, F_star, hessian_iters=500, hessian_tol=1e-12)
    assert out["l"] == pytest.approx(evals[0], rel=1e-8)
    assert out["per_point"]["pl_ratio"][-1] == pytest.approx(evals[-1], rel=1e-8)
    assert out["rho"] == pytest.approx(evals[-1], rel=1e-8)
    F0 = float(0.5 * ((x @ traj[0] - y) ** 2).mean())
    assert out["Theta"] == pytest.approx(F0 - F_star, rel=1e-10)
    assert out["Theta"] == pytest.approx(0.5 * 4.0 * evals[0], rel=1e-8)  # (s^2/2) lambda_min
    # beta = max over points and clients of the client gradient norms, recomputed here
    norms = [float(torch.linalg.vector_norm(est.client_gradients(model, w_, data), dim=1).max()) for w_ in traj]
    assert out["beta"] == pytest.approx(max(norms), rel=1e-12)


def test_pl_constant_skips_points_at_or_below_F_star():
    l, i, ratio = est.pl_constant([3.0, 2.0, 1.0], [8.0, 2.0, 0.0], F_star=1.0)
    assert (l, i) == (1.0, 1) and math.isnan(ratio[2])  # 8/(2*2) = 2, 2/(2*1) = 1
    assert ratio[0] == pytest.approx(2.0)
    with pytest.raises(ValueError, match="F\\*"):
        est.pl_constant([1.0, 0.5], [1.0, 1.0], F_star=2.0)


def test_hessian_of_binary_logistic_regression_matches_closed_form():
    g = torch.Generator().manual_seed(3)
    n, d, lam2 = 60, 5, 1e-2
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = (torch.rand(n, generator=g, dtype=torch.float64) < 0.4).to(torch.int64)
    model = models.BinaryLogReg(d, l2=lam2, bias=True)
    w = 0.5 * torch.randn(d + 1, generator=g, dtype=torch.float64)
    xt = torch.cat([x, torch.ones(n, 1, dtype=torch.float64)], dim=1).numpy()
    s = 1 / (1 + np.exp(-(xt @ w.numpy())))
    H = xt.T @ (xt * (s * (1 - s))[:, None]) / n + lam2 * np.eye(d + 1)
    top = np.linalg.eigvalsh(H)[-1]
    lam, _ = est.hessian_top_eigenvalue(model, w, x, y, iters=1000, tol=1e-13)
    assert lam == pytest.approx(top, rel=1e-7)
    rho, lams = est.smoothness(model, [w, 0 * w], x, y, iters=1000, tol=1e-13)
    H0 = xt.T @ xt * 0.25 / n + lam2 * np.eye(d + 1)  # at w = 0, s(1 - s) = 1/4
    assert rho == pytest.approx(max(top, np.linalg.eigvalsh(H0)[-1]), rel=1e-7)
    # the closed-form client gradients agree with autograd here too
    data = fed(x, y, [20, 25, 15])
    closed = est.client_gradients(model, w, data)
    model.grad = None  # instance attribute: force the autograd path
    assert torch.allclose(closed, est.client_gradients(model, w, data))


def test_B_is_one_for_identical_clients_and_matches_hand_value():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(12, 4, generator=g, dtype=torch.float64)
    y = (torch.rand(12, generator=g) < 0.5).to(torch.int64)
    model = models.BinaryLogReg(4, l2=1e-3)
    same = fed(torch.cat([x] * 3), torch.cat([y] * 3), [12, 12, 12])
    w = torch.randn(5, generator=g, dtype=torch.float64)
    assert est.point_statistics(model, w, same)["B"] == pytest.approx(1.0, abs=1e-12)
    grads = torch.tensor([[3.0, 0.0], [1.0, 2.0]])
    mean_sq, full_sq = (9 + 5) / 2, 2.0**2 + 1.0**2
    assert est.dissimilarity(grads) == pytest.approx(math.sqrt(mean_sq / full_sq))
    wts = torch.tensor([0.25, 0.75])  # weighted: p = (1/4, 3/4)
    mean_sq = 0.25 * 9 + 0.75 * 5
    full_sq = (0.25 * 3 + 0.75 * 1) ** 2 + (0.75 * 2) ** 2
    assert est.dissimilarity(grads, wts) == pytest.approx(math.sqrt(mean_sq / full_sq))
    assert est.dissimilarity(torch.tensor([[1.0, 0.0], [-1.0, 0.0]])) == math.inf


def test_B_uses_data_weights_with_unequal_clients():
    model, data, x, y = quadratic(counts=(3, 12, 6))
    w = torch.ones(x.shape[1], dtype=torch.float64)
    grads = est.client_gradients(model, w, data)
    p = data.counts.double() / data.counts.sum()
    expect = math.sqrt(float((p * (grads**2).sum(1)).sum()) / float(((p[:, None] * grads).sum(0) ** 2).sum()))
    assert est.point_statistics(model, w, data)["B"] == pytest.approx(expect, rel=1e-12)
    assert expect > 1


def test_choose_mu_makes_lambda2_negative():
    from fldp.papers.wei2020 import theory as th

    mu = wc.choose_mu(rho=3.0, B=1.5, factor=2.0)
    assert mu == pytest.approx(2 * 3.0 * 1.5 * 1.75)
    lam2 = th.lambdas(rho=3.0, B=1.5, mu=mu)[2]
    assert lam2 == pytest.approx(-1 / (2 * mu))
    with pytest.raises(ValueError):
        wc.choose_mu(3.0, 1.5, factor=1.0)


def test_nonprivate_trajectory_records_every_round_and_matches_nbafl_run():
    from fldp.papers.wei2020 import algorithm as nbafl

    g = torch.Generator().manual_seed(0)
    x = torch.randn(40, 8, generator=g)
    y = torch.randint(0, 3, (40,), generator=g)
    data = fed(x, y, [10, 10, 10, 10])
    model = models.MLP(in_features=8, hidden=6, num_classes=3)
    hist, traj = wc.nonprivate_trajectory(model, data, T=3, lr=0.1, batch_size=5, seed=2)
    assert len(traj) == 4
    ref, _ = nbafl.run(model, data, T=3, private=False, lr=0.1, batch_size=5, seed=2)
    assert torch.equal(traj[-1], ref.params) and torch.equal(traj[-1], hist.params)
    assert not torch.equal(traj[0], traj[1])
    F = [est.global_loss_and_gradient(model, w, data)[0] for w in traj]
    assert F == pytest.approx(ref.train_loss, rel=1e-5)
    out = wc.estimate_nbafl_constants(model, data, T_traj=2, T_star=3, hessian_sample=None, seed=2,
                                       lr=0.1, batch_size=5)
    c = out["constants"]
    assert set(c) == {"rho", "beta", "l", "B", "Theta", "mu", "F_star"}
    assert c["F_star"] == pytest.approx(min(ref.train_loss))
    assert c["B"] >= 1 and c["rho"] > 0 and c["l"] > 0 and c["Theta"] > 0
    with pytest.raises(ValueError):
        wc.nonprivate_trajectory(model, data, T=1, private=True)
