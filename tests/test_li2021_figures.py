"""fldp.papers.li2021.figures draws the numbers it is given (notebooks/li2021/01_mechanism)."""
import matplotlib.pyplot as plt
import numpy as np

from fldp.papers.li2021 import figures


def test_fig_noise_eq9_leaves_out_the_settings_beyond_n_k():
    fig = figures.fig_noise_eq9(vs_b={1: [3.0, 2.0, 1.0], 10: [4.0, 3.0, None]},
                                vs_Q={1: [1.0, 2.0], 8: [2.0, None]}, vs_eps={1: [5.0, 1.0], 10: [6.0, 2.0]},
                                b_list=[1, 8, 32], Q_list=[1, 10], eps_list=[0.5, 5.0], eps=0.5, n_k=100)
    a0, a1, a2 = fig.axes
    assert [list(ln.get_xdata()) for ln in a0.lines] == [[1, 8, 32], [1, 8]]
    assert [list(ln.get_ydata()) for ln in a0.lines] == [[3.0, 2.0, 1.0], [4.0, 3.0]]
    assert [list(ln.get_xdata()) for ln in a1.lines] == [[1, 10], [1]]
    assert [list(ln.get_ydata()) for ln in a2.lines] == [[5.0, 1.0], [6.0, 2.0]]
    assert a0.get_title() == "eq. (9), n_k = 100, eps = 0.5" and a2.get_title() == "eq. (9), n_k = 100"
    plt.close(fig)


def test_fig_per_upload_eps_draws_every_bound_and_the_audit():
    rows = [dict(Q=Q, b=b, q=Q * b / 100, x=0.5 / (2 * Q * b / 100), amplified=1.0 * b, exact_profile=0.8 * b,
                 accountant=0.7 * b) for Q in (1, 10) for b in (1, 2)]
    audits = {"Q=1,b=1": {"eps_lower": 0.3}, "Q=10,b=1": {"eps_lower": 0.4}}
    fig = figures.fig_per_upload_eps(rows=rows, audits=audits, eps=0.5, n_k=100, delta=1e-4)
    assert len(fig.axes) == 2
    for ax, lower in zip(fig.axes, (0.3, 0.4)):
        lines = ax.lines  # the paper's eps, eq. (8), theorem, exact profile, accountant, audit
        assert len(lines) == 6
        np.testing.assert_allclose(lines[1].get_ydata(), [0.5, 0.5])  # 2 q x = eps
        assert list(lines[4].get_ydata()) == [0.7, 1.4]
        assert list(lines[5].get_ydata()) == [lower]
        assert "lies on the dashed line" in lines[1].get_label()
    plt.close(fig)
