"""fldp.papers.wei2020.figures: each figure function draws from the numbers it is given (small made-up
inputs of the shapes notebooks/wei2020/01-04 pass) and returns a figure with the expected panels."""
from __future__ import annotations

from types import SimpleNamespace

import matplotlib.pyplot as plt  # the backend is Agg (tests/conftest.py)
import numpy as np
import pytest
from matplotlib.figure import Figure

from fldp.papers.wei2020 import figures


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _panels(fig):
    return [a for a in fig.axes if a.get_visible() and a.axison]


def test_classic_vs_analytic_sigma():
    eps = np.logspace(-1, 2, 5)
    fig = figures.fig_classic_vs_analytic_sigma(eps=eps, sigma_classic=1 / eps, sigma_analytic=2 / eps, Ds_U=1 / 60,
                                                delta=0.01, crossover_eps=6.77)
    assert isinstance(fig, Figure) and len(_panels(fig)) == 2
    np.testing.assert_allclose(fig.axes[1].lines[0].get_ydata(), 2.0)  # the ratio panel: analytic / classic


def test_lemma1_figures():
    gd = {"mu_0.01": {"mu": 0.01, "final_ratios": np.array([1.5, 2.0]), "ratio_vs_C": {2.0: 0.5, 20.0: 3.0}}}
    fig = figures.fig_lemma1_sensitivity_regimes(regime_ratios={"default": np.array([0.2, 0.4, 0.3])}, gd=gd,
                                                 num_pairs=3, regime_pairs=3, gd_pairs=2, C=20.0)
    assert len(_panels(fig)) == 1
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["default", "GD to argmin, mu 0.01"]
    fig = figures.fig_lemma1_ratio_vs_C_m(ratio_C={2.0: 0.4, 20.0: 0.05}, ratio_m={100: 0.1, 1200: 0.9}, gd=gd,
                                          model_norm=6.0, m=1200, C=20.0)
    assert len(_panels(fig)) == 2
    np.testing.assert_allclose(fig.axes[1].lines[0].get_xdata(), [100, 1200])


def test_eq16_sigma_A_simulation_histograms_the_largest_T():
    T = np.arange(1, 11)
    rng = np.random.default_rng(0)
    sim = [dict(T=t, empirical=1.0, se=0.01, sigma_A=2.0 * t, sample=rng.normal(0, 2.0 * t, 500)) for t in (2, 8)]
    fig = figures.fig_eq16_sigma_A_simulation(T=T, sigma_A=np.ones(10), sigma_D=np.zeros(10), sigma_U_avg=1.0, sim=sim,
                                              N=50, m=1200, C=20.0, eps=60, L=1)
    assert len(_panels(fig)) == 2
    assert "T=8" in fig.axes[1].get_legend().get_texts()[0].get_text()


def test_convergence_figures():
    k = dict(rho=10.0, beta=1.0, l=0.1, B=2.0, Theta=2.0, F_star=0.1, mu=40.0)
    pp = dict(max_client_grad=np.ones(4), B=np.ones(4), pl_ratio=np.ones(4), hessian_top_eig=-np.ones(2))
    fig = figures.fig_constants_trajectory(constants=k, per_point=pp, rho_points=[0, 3], train_loss=np.ones(6),
                                           T_traj=3, T_star=5)
    assert len(_panels(fig)) == 5  # the sixth panel is switched off
    mus = np.logspace(-3, 3, 20)
    fig = figures.fig_P_vs_mu(mu=mus, P=1 - 0.1 / mus, a=1.0, mu_exp=0.01, P_exp=-9.0, mu_used=2.0, P_used=0.95,
                              rho=10.0, B=2.0, l=0.1)
    assert len(_panels(fig)) == 2
    T = np.arange(1, 51, dtype=float)
    forms, eps_list = ["as printed", "re-derived"], [50, 100]
    curves = {(s, e): 2.0 - 0.01 * T + 1e-4 * T**2 for s in forms for e in eps_list}
    opt = {key: (int(T[np.argmin(v)]), float(np.min(v))) for key, v in curves.items()}
    fig = figures.fig_bound_vs_T(T=T, curves=curves, opt=opt, forms=forms, printed={"as printed": 1.0},
                                 eps_list=eps_list, Theta=2.0, T_max=50, N=50, m=1200, L=1, mu=40.0, P=0.99, d=100)
    assert len(_panels(fig)) == 4


def test_krandom_figures():
    Ks, T = np.arange(1, 6), np.arange(1, 11, dtype=float)
    T69 = {50: {int(K): 10.0 * K for K in Ks}}
    fig = figures.fig_lemma4_b_gamma(T=T, b_of_T={2: np.where(T > 3, 1.5, np.nan), 5: np.ones(10)}, K=Ks,
                                     eps_gamma={50: list(1.0 + Ks)}, T69=T69, T73=T69, eps=50, N=5, L=1)
    assert len(_panels(fig)) == 2 and len(fig.axes[0].lines) == 2
    res = SimpleNamespace(values={K: 1.0 - 0.01 * K for K in range(2, 6)}, K_star=5, bound=0.95)
    runs = {(v, r, e, t): (None if v == "b" and t == 20 else res) for v, r in (("a", "2C = 1"), ("b", "C = 20"))
            for e in (50,) for t in (10, 20)}
    fig = figures.fig_theorem3_bound_vs_K(runs=runs, panels=[("a", "2C = 1"), ("b", "C = 20")], printed="a",
                                          T_list=[10, 20], eps_list=[50], K69={(50, 10): 3.0, (50, 20): 2.0}, N=5,
                                          K_paper=2, Theta=1.0, d=100, mu3=3.0, mu03=4.0)
    assert len(_panels(fig)) == 4
    assert fig.axes[0].get_title() == "T = 10, a" and fig.axes[2].get_title() == "T = 10, b, C = 20"
