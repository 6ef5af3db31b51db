"""The adaptive CLT noise chapters' figure functions (fldp/papers/adaptive_noise/figures.py) and the
decision rules of 01_scheme's Theorem 1 and Remark 1 claims (fldp/papers/adaptive_noise/runs.py)."""
import matplotlib.pyplot as plt  # the backend is Agg (tests/conftest.py)
import numpy as np
import pytest

from fldp.papers.adaptive_noise import figures
from fldp.papers.adaptive_noise import runs as cl
from fldp.papers.adaptive_noise import theory as th


def test_fig_angles_draws_one_panel_per_dimension():
    rng = np.random.default_rng(0)
    angles = {2: rng.uniform(0, 180, 300), 10: rng.normal(90, 18, 300)}
    fig = figures.fig_angles(angles=angles, samples=300)
    axes = fig.get_axes()
    assert len(axes) == 2
    assert axes[0].get_title() == f"d = 2: std {th.angle_moments(dim=2)[1]:.2f} deg"
    assert len(axes[1].lines) == 2 and len(axes[1].patches) == 60      # exact law, normal; 60 bins
    assert axes[-1].get_legend() is not None and axes[0].get_legend() is None
    assert "300 samples" in fig._suptitle.get_text()
    plt.close(fig)


def test_fig_descent_probability_marks_both_bounds():
    K_list, c_grid = [5, 20], np.unique(np.concatenate([np.geomspace(0.5, 25, 10), [5, 20], np.sqrt([5, 20])]))
    prob = {rho: {K: list(np.linspace(1, 0, c_grid.size)) for K in K_list} for rho in (1.0, 0.5)}
    fig = figures.fig_descent_probability(c_grid=c_grid, prob=prob, dim=200, trials=100)
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == ["rho = 1", "rho = 0.5"]
    ax = axes[1]
    bounds = sorted(line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == ":" and len(line.get_xdata()) == 2)
    assert bounds == pytest.approx(sorted(th.max_noise_scale(K=K, rho=0.5) for K in K_list))
    diamonds = [line for line in ax.lines if line.get_marker() == "D" and len(line.get_xdata()) == 1]
    i = int(np.flatnonzero(np.isclose(c_grid, 20))[0])
    assert diamonds[1].get_xdata()[0] == 20 and diamonds[1].get_ydata()[0] == prob[0.5][20][i]   # c = K on its curve
    plt.close(fig)


def test_fig_cost_plots_the_paper_only_where_it_has_a_value():
    p_list = [2, 0, -2]
    measured = {q: {"mean_tries": 1.0 + abs(q), "cost": 1.5, "multiple": 2.0, "seconds": 0.01} for q in p_list}
    expected = {q: {"noise": 1.2, "normal": 1.3, "perturbed": 1.0} for q in p_list}
    band = {q: {"low": 0.9 + abs(q), "high": 1.1 + abs(q)} for q in p_list}
    paper4, paper5 = {2: 1.0, 0: 2.0}, {"DP": 0.015, 2: 0.018, 0: 0.021}    # no value at p = -2
    fig = figures.fig_cost(p_list=p_list, measured=measured, expected=expected, band=band, paper4=paper4,
                           paper5=paper5, c=15.0)
    left, right = fig.get_axes()
    assert left.get_title() == "Table 4: cost of the filter (c = 15)" and left.xaxis_inverted()
    table4 = next(line for line in left.lines if line.get_label() == "paper, Table 4")
    assert list(table4.get_xdata()) == [2, 0] and list(table4.get_ydata()) == [1.0, 2.0]
    table5 = next(line for line in right.lines if line.get_label() == "paper, Table 5 (GPU machine)")
    assert list(table5.get_xdata()) == [2, 0] and list(table5.get_ydata()) == [0.018, 0.021]
    plt.close(fig)


E = {"normal_p_along": 0.3, "normal_p_across": 0.2}


def test_theorem1_normal_needs_both_elements_normal():
    assert cl.theorem1_normal(E, level=0.01).verdict == "holds"
    v = cl.theorem1_normal({**E, "normal_p_across": 0.001}, level=0.01)
    assert v.verdict == "fails" and v.why == "D'Agostino p 0.3 (along), 0.001 (across)"


def test_theorem1_at_layer_fails_on_a_lean_or_a_non_normal_element():
    rng = np.random.default_rng(0)
    centred = rng.normal(0, 1, 5000)
    assert cl.theorem1_at_layer(along=centred, elements=E, level=0.01, margin=0.1).verdict == "holds"
    assert cl.theorem1_at_layer(along=centred + 0.5, elements=E, level=0.01, margin=0.1).verdict == "fails"  # the filter's lean
    assert cl.theorem1_at_layer(along=centred, elements={**E, "normal_p_along": 1e-6}, level=0.01,
                                margin=0.1).verdict == "fails"


def test_remark1_clt_has_no_power_below_twice_the_standard_error():
    layers = {"conv1": E, "fc2.b": {**E, "normal_p_across": 1e-4}}
    kw = {"se": 0.07, "level": 0.01, "K": 31, "dim": 10, "trials": 5000}
    v = cl.remark1_clt(layers, expected_kurtosis=0.02, **kw)
    assert v.label == "inconclusive: no-power" and "excess kurtosis 0.02 at the 10-parameter layer" in v.why
    assert "5,000 rounds" in v.why
    assert cl.remark1_clt(layers, expected_kurtosis=0.2, **kw).verdict == "fails"              # power: judged, fails
    assert cl.remark1_clt({"conv1": E}, expected_kurtosis=0.2, **kw).verdict == "holds"
