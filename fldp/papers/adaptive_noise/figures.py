"""Figures of the adaptive CLT noise chapters that take more than a notebook cell: each function
takes numbers a chapter computed and returns the matplotlib figure, which the chapter saves, shows
and records (``notebooks/adaptive_noise/``): the angle between random vectors (Fig. 4,
``01_scheme``), the probability that the direction of descent is preserved (Sec. 4.2.1,
``02_theory``) and the direction filter's cost (Tables 4-5, ``05_efficiency``)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from fldp.papers.adaptive_noise import theory as th

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["fig_angles", "fig_cost", "fig_descent_probability"]


def fig_angles(*, angles: Mapping[int, np.ndarray], samples: int) -> Figure:
    """Fig. 4 of the adaptive CLT noise paper (Sec. 4.2.2; ``notebooks/adaptive_noise/01_scheme``,
    figure ``fig04_angles``): one panel per dimension d, the histogram of the sampled angles
    (``angles``: d -> degrees, ``samples`` pairs each), the exact law sin^(d-2)
    (:func:`.theory.angle_pdf`) and the normal with the same mean and std
    (:func:`.theory.angle_moments`)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(angles), figsize=(13, 3.6))
    for ax, (d, ang) in zip(np.atleast_1d(axes), angles.items()):
        mean, std = th.angle_moments(dim=d)
        x = np.linspace(0, 180, 721)
        ax.hist(ang, bins=60, range=(0, 180), density=True, alpha=0.5, label=f"sampled ({samples} pairs)")
        ax.plot(x, th.angle_pdf(theta=x, dim=d), "k-", label="exact law, sin^(d-2)")
        ax.plot(x, stats.norm.pdf(x, mean, std), "r:", label="normal, same mean and std")
        ax.set(title=f"d = {d}: std {std:.2f} deg", xlabel="angle (degrees)", ylabel="density (per degree)")
    np.atleast_1d(axes)[-1].legend(fontsize=8, loc="upper left")
    fig.suptitle(f"Fig. 4: angle between two random vectors ({samples} samples)")
    fig.tight_layout()
    return fig


def fig_descent_probability(*, c_grid: np.ndarray, prob: Mapping[float, Mapping[int, Sequence[float]]],
                            dim: int, trials: int) -> Figure:
    """Sec. 4.2.1 of the adaptive CLT noise paper (``notebooks/adaptive_noise/02_theory``, figure
    ``descent_probability``): P(||sum r_k|| <= ||sum Delta w_k||) against the noise scale c on
    ``c_grid`` (``prob``: rho -> K -> one probability per c, one panel per rho), with Theorem 1's
    bound sqrt(K rho + 1 - rho) (:func:`.theory.max_noise_scale`, dotted) and the paper's c = K
    (a diamond); ``c_grid`` must hold every K."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(prob), figsize=(13, 4.4), sharey=True)
    for ax, (rho, by_K) in zip(np.atleast_1d(axes), prob.items()):
        for K, p in by_K.items():
            line, = ax.plot(c_grid, p, "-", label=f"K = {K}")
            ax.axvline(th.max_noise_scale(K=K, rho=rho), color=line.get_color(), ls=":", lw=1)
            ax.plot([K], [p[int(np.flatnonzero(np.isclose(c_grid, K))[0])]], "D", ms=9, mfc="none",
                    mec=line.get_color(), mew=2)
        ax.plot([], [], "k:", lw=1, label="sqrt(K rho + 1 - rho): Theorem 1's bound")
        ax.plot([], [], "D", ms=9, mfc="none", mec="k", mew=2, label="c = K: the paper's bound (Sec. 4.2.1)")
        ax.set(xscale="log", title=f"rho = {rho:g}", xlabel="noise scale c (log scale)",
               ylabel="P(||sum r_k|| <= ||sum Delta w_k||)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="center right")
    fig.suptitle(f"Is the direction of descent preserved? (dim = {dim}, {trials} trials per point; "
                 "curves: Monte Carlo on a log-spaced c grid)")
    return fig


def fig_cost(*, p_list: Sequence[float], measured: Mapping, expected: Mapping, band: Mapping,
             paper4: Mapping, paper5: Mapping, c: float) -> Figure:
    """Tables 4 and 5 of the adaptive CLT noise paper (Sec. 7.4; ``notebooks/adaptive_noise/
    05_efficiency``, figure ``table04_05_cost``). Left: the direction filter's cost against p in
    multiples of one DP draw: the measured tries per layer with their band (``measured[p]``:
    ``mean_tries``, ``cost``, ``multiple``; ``band[p]``: ``low``, ``high``), the expected costs
    (``expected[p]``: ``noise``, ``normal``, ``perturbed``) and the paper's Table 4 (``paper4``)
    and Table 5 over its DP time (``paper5``, with key ``"DP"``). Right: seconds per noise vector,
    measured (``measured[p]["seconds"]``) and the paper's Table 5."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.2))
    ps = list(p_list)
    mt = np.array([measured[q]["mean_tries"] for q in ps])
    axes[0].errorbar(ps, mt, yerr=[mt - [band[q]["low"] for q in ps], [band[q]["high"] for q in ps] - mt], fmt="D-",
                     capsize=3, label="measured tries per layer (ours), family-wise 95 % band")
    axes[0].plot(ps, [measured[q]["cost"] for q in ps], "o:", label="measured draws, weighted by layer size (Table 4's unit)")
    axes[0].plot(ps, [expected[q]["noise"] for q in ps], "s--", label="expected, exact angle law")
    axes[0].plot(ps, [expected[q]["normal"] for q in ps], ":", label="1 / Phi(p), normal tail")
    axes[0].plot(ps, [expected[q]["perturbed"] for q in ps], "^--", label="expected, 'perturbed' reading")
    axes[0].plot(ps, [measured[q]["multiple"] for q in ps], ".-", color="0.6",
                 label="measured wall time / DP draw (reported only)")
    in4 = [q for q in ps if q in paper4]
    axes[0].plot(in4, [paper4[q] for q in in4], "kx", ms=9, label="paper, Table 4")
    axes[0].plot(in4, [paper5[q] / paper5["DP"] for q in in4], "k+", ms=10, label="paper, Table 5's seconds / its DP time")
    axes[0].set(yscale="log", xlabel="p", ylabel="cost in multiples of one DP draw",
                title=f"Table 4: cost of the filter (c = {c:g})")
    axes[1].plot(ps, [measured[q]["seconds"] for q in ps], "o-", label="measured, one client, 2 CPU cores")
    in5 = [q for q in ps if q in paper5]
    axes[1].plot(in5, [paper5[q] for q in in5], "kx", ms=9, label="paper, Table 5 (GPU machine)")
    axes[1].set(yscale="log", xlabel="p", ylabel="seconds per noise vector", title="Table 5: time per noise vector")
    for ax in axes:
        ax.invert_xaxis()
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return fig
