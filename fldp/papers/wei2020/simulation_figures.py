"""Wei et al. 2020, Section VI: the figures of the simulation chapters (``notebooks/wei2020/05-08``)
that a notebook cell would otherwise draw at length.  Each function takes the numbers the chapter
computed and returns the matplotlib figure; the cell saves it and records the numbers.  The figures
of the runs themselves (Figs. 2-7, 10, 11 and the K-random map) are drawn by
:mod:`fldp.papers.wei2020.simulations` beside the runs they come from."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from fldp import plots

__all__ = ["fig9_bound_vs_experiment", "fig_settings_map", "fig_calibrated_accuracy"]


def fig9_bound_vs_experiment(*, T_list: Sequence[int], experiment: Mapping, T_grid, bounds: Mapping, C: float,
                             N: int, reading: str, vacuity: Mapping[str, float], mu: float):
    """Wei et al. 2020, Fig. 9 (05_simulations): Theorem 2's bound beside the experiment.
    ``experiment``: ``{eps: per-seed final training loss, seeds x T_list}``, drawn with the seed
    band; ``bounds``: ``{(eps, scale): bound + F* over T_grid}`` (scale 1: the paper's 2C = 1,
    dotted; else 2C, dash-dotted); ``vacuity``: the numbers of 05's ``fig09_vacuity`` (P at the
    constants' ``mu``, P* and mu*, P*^T, bound / Theta, l / (rho B (1 + B/2)) and what halving
    Theta needs), written below the axes.  Returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 5.2), layout="constrained")
    for eps, arr in experiment.items():
        plots.mean_band(ax, T_list, arr, label=f"experiment, eps = {eps}", marker="o")
    for (eps, scale), b in bounds.items():
        ax.plot(T_grid, b, ":" if scale == 1 else "-.",
                label=f"bound + F*, eps = {eps}" + (", 2C = 1 (paper)" if scale == 1 else f", 2C = {2*C:g}"))
    T, v = max(T_list), vacuity
    fig.text(0.01, 0.01, f"bound vacuous at these constants: P = {v['P_at_mu']:.5g} at mu = {mu:g};\nbest over mu: "
             f"P* = {v['P_star']:.4g} at mu* = {v['mu_star']:.3g}, P*^{T} = {v['P_star^T']:.3g}, "
             f"bound/Theta = {v['bound_share_of_Theta']:.3g};\nhalving Theta by T = {T} needs l / (rho B (1 + B/2)) "
             f">= {v['needed for P*^T <= 1/2']:.3g} (here {v['l/(rho B (1+B/2))']:.2g})",
             fontsize=7, va="bottom")  # below the axes, off the data
    fig.get_layout_engine().set(rect=(0, 0.16, 1, 0.84))
    ax.set(xlabel="number of aggregations T", ylabel="training loss", yscale="log",
           title=f"Fig. 9: bound vs experiment, N = {N}\nreading: {reading}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center right")
    return fig


def fig_settings_map(*, rows: Sequence[Mapping], C_list: Sequence[float], L_list: Sequence[int],
                     lr_list: Sequence[float], eps_list: Sequence[float], N: int, T: int, num_seeds: int,
                     min_progress: float):
    """Wei et al. 2020, Remark 2 and Fig. 2 over the settings the paper leaves out (06_settings_map):
    one heat map per learning rate of the smallest separation z of each (C, L) cell (``rows``:
    06's ``map`` table, with ``C``, ``L``, ``lr``, ``min z``, ``all seeds apart`` and
    ``progress``), clipped at 10, each cell marked "apart" where every seed is in order and
    "(does not train)" below ``min_progress``.  Returns the figure."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(lr_list), figsize=(4.6 * len(lr_list) + 1.5, 4.2), squeeze=False,
                             layout="constrained")
    for ax, lr in zip(axes[0], lr_list):
        sub = {(r["L"], r["C"]): r for r in rows if r["lr"] == lr}
        z = np.array([[np.clip(sub[L, C]["min z"], -10, 10) for C in C_list] for L in L_list])
        im = ax.imshow(z, cmap="RdBu", vmin=-10, vmax=10, origin="lower", aspect="auto")
        for (i, L), (j, C) in ((a, b) for a in enumerate(L_list) for b in enumerate(C_list)):
            r = sub[L, C]
            mark = ("\napart" if r["all seeds apart"] else "") + ("" if r["progress"] >= min_progress
                                                                  else "\n(does not train)")
            ax.text(j, i, f"{r['min z']:.1f}" + mark, ha="center", va="center", fontsize=8,
                    color="w" if abs(z[i, j]) > 6 else "k")
        ax.set(xticks=range(len(C_list)), xticklabels=[f"{C:g}" for C in C_list], yticks=range(len(L_list)),
               yticklabels=[f"{L}" + (" (= T)" if L == T else "") for L in L_list], xlabel="clipping bound C",
               ylabel="exposures L", title=f"lr = {lr}")
    fig.colorbar(im, ax=axes[0].tolist(), label="smallest separation z\n(seed-spread units, clipped at 10)")
    fig.suptitle(f"Remark 2's ordering eps {'>'.join(map(str, eps_list))}>non-private: N = {N}, T = {T}, "
                 f"{num_seeds} seeds", fontsize=10)
    return fig


def fig_calibrated_accuracy(*, target_eps: Sequence[float], accs: Mapping[str, np.ndarray], nonprivate_acc: float,
                            paper_runs: Sequence[Mapping], N: int, T: int, C: float, target_delta: float):
    """Wei et al. 2020's NbAFL calibrated by the accountant (08_calibrated): final test accuracy
    against the true whole-run eps.  ``accs``: ``{variant: per-seed accuracy, seeds x
    target_eps}`` ("where sensitivity", drawn with the seed band), ``nonprivate_acc`` the
    non-private run's mean, ``paper_runs`` the paper's own runs at the eps they really spend
    (:func:`fldp.papers.wei2020.simulations.paper_runs_at_true_eps`; one colour per L, a row
    without numbers left out).  Returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for (v, arr), mk in zip(accs.items(), "os^"):
        plots.mean_band(ax, target_eps, arr, marker=mk,
                        label=f"NbAFL, accountant-calibrated: {v.replace(' ', ' noise, sensitivity ')}"
                              + (" (refuted in 02)" if v.endswith("2C/m") else " (holds for any solver)"))
    ax.axhline(nonprivate_acc, color="k", ls="--", label="non-private")
    for p, col in zip(paper_runs, ["tab:red", "tab:purple", "tab:brown"]):
        if p["true eps"] is not None:
            ax.scatter(p["true eps"], p["acc"], marker="x", color=col, zorder=3,
                       label=f"paper's calibration, eps = {p['paper eps']} per exposure, L = {p['L']} (delta 0.01 > 1/m)")
    ax.set(xscale="log",
           xlabel=f"true whole-run eps per client, PLD (log scale; delta = {target_delta:g}, paper's runs at 0.01)",
           ylabel="final test accuracy", title=f"NbAFL on MNIST, N = {N}, T = {T}, C = {C:g}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig
