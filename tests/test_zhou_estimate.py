"""Zhou et al.'s problem constants estimated from data (fldp.papers.zhou.estimate)."""
import numpy as np
import pytest
import torch

from fldp import curvature, models
from fldp.papers.zhou import estimate as E
from helpers import toy_federation


TOY = dict(features=6, x="uniform", test=5)  # toy_federation(counts, **TOY)


def test_gradient_statistics_match_softmax_closed_form():
    data, model = toy_federation([20] * 3, **TOY), models.MultinomialLogReg(in_features=6, num_classes=3)
    w = model.init(torch.Generator().manual_seed(1)) * 3
    st = E.gradient_statistics(model, w, data, chunk=7)
    for i in range(3):
        x, y = data.client(i)
        r = torch.softmax(x @ w.view(6, 3), 1) - torch.nn.functional.one_hot(y, 3)
        g = (x[:, :, None] * r[:, None, :]).reshape(len(y), -1).double()   # x r^T per row
        assert st["mean_sq"][i] == pytest.approx(float((g * g).sum(1).mean()), rel=1e-5)
        assert st["max_l1"][i] == pytest.approx(float((x.abs().sum(1) * r.abs().sum(1)).max()), rel=1e-5)
        assert st["max_l2"][i] == pytest.approx(float(g.norm(dim=1).max()), rel=1e-5)
        lam_sq = float(((g - g.mean(0)) ** 2).sum(1).mean())
        assert st["Lambda_sq"][i] == pytest.approx(lam_sq, rel=1e-4)


def test_secant_curvature_of_a_quadratic_is_its_hessian_along_the_step():
    # one-class-free check: the secant of a smooth convex loss lies in [min, max] curvature
    data, model = toy_federation([20] * 3, **TOY), models.MultinomialLogReg(in_features=6, num_classes=3)
    a = torch.zeros(model.dim)
    b = a + 1e-3 * torch.randn(model.dim, generator=torch.Generator().manual_seed(2))
    s = E.secant_curvature(model, a, b, data)
    for i in range(3):
        x, y = data.client(i)
        top, _ = curvature.hessian_top_eigenvalue(model, a, x, y, iters=200, tol=1e-8)
        assert 0 <= s[i] <= top * 1.01


def test_estimate_constants_recipe():
    data, model = toy_federation([30] * 3, **TOY), models.MultinomialLogReg(in_features=6, num_classes=3)
    c = E.estimate_constants(model, data, T_traj=4, local_steps=30, stat_points=2, hessian_points=1)
    assert 0 < c["mu"] <= c["lam"] and c["gamma"] == pytest.approx(2 * c["lam"] / c["mu"])
    assert c["p"] == 18 and c["d"] == 90 and c["N"] == 3 and len(c["Lambda"]) == 3
    # Y0 and Gamma follow the paper's recipe from the local optima
    theta0 = model.init(__import__("fldp").engine.generator(0, "init"))
    opt = E.local_optima(model, theta0, data, local_steps=30, local_lr=1 / c["lam"])
    y0 = float((((opt - theta0) ** 2).sum(1)).mean())
    assert c["Y0"] == pytest.approx(y0, rel=1e-5)
    F = np.array(c["details"]["F_i_star"])
    assert c["Gamma"] == pytest.approx(F.max() - F.mean(), rel=1e-6) and c["Gamma"] >= 0
    losses0 = curvature.client_losses(model, theta0, data).numpy()
    assert (F < losses0).all()          # the local optima improve on theta_0


def test_flat_directions_show_softmax_regression_is_not_strongly_convex():
    """Assumption 4 on the model itself: moving every class's weights by one v leaves each F_i
    unchanged (a 6-dimensional null space here), moving one class's weights does not."""
    data, model = toy_federation([20] * 3, **TOY), models.MultinomialLogReg(in_features=6, num_classes=3)
    out = E.flat_directions(model, data, seed=3, trials=2)
    assert out["max_change_flat"] < 1e-12 and out["min_change_class"] > 1e-3
    assert out["flat_dim"] == 6 and out["trials"] == 2
    biased = E.flat_directions(models.MultinomialLogReg(in_features=6, num_classes=3, bias=True), data, seed=3)
    assert biased["max_change_flat"] < 1e-12 and biased["flat_dim"] == 7   # a bias shifts the same way
    with pytest.raises(ValueError, match="trials=0"):
        E.flat_directions(model, data, trials=0)
