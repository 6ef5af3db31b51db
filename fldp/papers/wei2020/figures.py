"""Figures of the Wei et al. 2020 (NbAFL) theory chapters (``notebooks/wei2020/01``-``04``) that
take more than a notebook cell: each function takes numbers a chapter computed and returns the
matplotlib figure, which the chapter saves, shows and records.  They compute nothing the chapter
records: the curves, ratios and optima arrive as arguments."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["fig_classic_vs_analytic_sigma", "fig_lemma1_sensitivity_regimes", "fig_lemma1_ratio_vs_C_m",
           "fig_eq16_sigma_A_simulation", "fig_constants_trajectory", "fig_P_vs_mu", "fig_bound_vs_T",
           "fig_lemma4_b_gamma", "fig_theorem3_bound_vs_K"]


def fig_classic_vs_analytic_sigma(*, eps, sigma_classic, sigma_analytic, Ds_U: float, delta: float,
                                  crossover_eps: float) -> Figure:
    """The paper's sigma = c Ds_U/eps against the smallest sigma that gives (eps, delta)-DP (the
    analytic Gaussian mechanism), and their ratio, against eps (Wei et al. 2020, Sec. II-C and
    III-A; ``notebooks/wei2020/01_preliminaries``, figure ``classic_vs_analytic_sigma``).

    ``eps``: the grid; ``sigma_classic``, ``sigma_analytic``: the two sigmas on it;
    ``crossover_eps``: where the classic calibration stops giving ``delta`` (a dotted line).
    """
    import matplotlib.pyplot as plt

    eg, cl, an = np.asarray(eps), np.asarray(sigma_classic), np.asarray(sigma_analytic)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    a1.loglog(eg, cl, label="paper: $\\sigma = c\\,\\Delta s_U/\\epsilon$ (classic)")
    a1.loglog(eg, an, "--", label="smallest $\\sigma$ for ($\\epsilon,\\delta$)-DP (analytic)")
    a1.set(xlabel="$\\epsilon$", ylabel="noise std $\\sigma$",
           title=f"$\\Delta s_U$ = 2C/m = {Ds_U:.4g}, $\\delta$ = {delta:g}")
    a2.semilogx(eg, an / cl, color="C2")
    a2.axhline(1, color="k", lw=0.8)
    a2.set(xlabel="$\\epsilon$", ylabel="analytic / classic $\\sigma$", title="> 1: the paper under-noises")
    for ax in (a1, a2):
        ax.axvspan(50, 100, color="C2", alpha=0.12, label="paper's $\\epsilon$ range")
        ax.axvline(crossover_eps, color="0.5", ls=":", label=f"crossover $\\epsilon$={crossover_eps:.2f}")
    a1.legend(fontsize=7)
    a2.legend(fontsize=7)
    return fig


def fig_lemma1_sensitivity_regimes(*, regime_ratios: dict, gd: dict, num_pairs: int, regime_pairs: int,
                                   gd_pairs: int, C: float) -> Figure:
    """Lemma 1 by brute force: the ratio ||w(D) - w(D')|| / (2C/m) of every sampled neighbouring
    pair, one box per mini-batch SGD regime and per reading of full-batch gradient descent to the
    argmin (Wei et al. 2020, eq. (5)-(6); ``notebooks/wei2020/02_global_dp``, figure
    ``lemma1_sensitivity_regimes``).

    ``regime_ratios``: regime name -> the pairs' ratios; ``gd``: reading -> a dict with ``mu`` and
    ``final_ratios``; the pair counts and ``C`` go into the labels.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.2))
    boxes = {**regime_ratios, **{f"GD to argmin, mu {g['mu']:g}": g["final_ratios"] for g in gd.values()}}
    names = list(boxes)
    ax.boxplot([boxes[n] for n in names], whis=(0, 100))
    for i, n in enumerate(names, 1):  # the pairs, jittered (a fixed generator per box)
        ax.plot(np.full(len(boxes[n]), i) + np.random.default_rng(i).uniform(-0.15, 0.15, len(boxes[n])),
                boxes[n], ".", color="C0" if n in regime_ratios else "C1", alpha=0.35, ms=3)
    ax.set_xticks(range(1, len(names) + 1), names, rotation=20, ha="right", rotation_mode="anchor")
    ax.axvline(len(regime_ratios) + 0.5, color="0.6", lw=0.8)
    ax.axhline(1, color="C3", ls="--", label="paper's bound 2C/m (ratio 1)")
    ax.set_yscale("log")
    ax.set(ylabel="||w(D) - w(D')|| / (2C/m)  (log scale)",
           xlabel="local solver: mini-batch SGD regimes (default: m = 1200, 1 epoch, batch 50, lr 0.05;\neach name "
                  "changes one setting)  |  full-batch GD to convergence.  Whiskers: min / max",
           title=f"Lemma 1 by brute force: neighbouring pairs ({num_pairs} default, {regime_pairs} other SGD, "
                 f"{gd_pairs} GD), C={C:g}")
    ax.legend(fontsize=8)
    return fig


def fig_lemma1_ratio_vs_C_m(*, ratio_C: dict, ratio_m: dict, gd: dict, model_norm: float, m: int, C: float) -> Figure:
    """The largest ratio ||w(D) - w(D')|| / (2C/m) over the pairs against the clipping bound C
    (SGD and full-batch GD) and against the local dataset size m (SGD) (Wei et al. 2020,
    eq. (5)-(6); ``notebooks/wei2020/02_global_dp``, figure ``lemma1_ratio_vs_C_m``).

    ``ratio_C``: C -> max ratio (SGD, default regime); ``ratio_m``: m -> max ratio; ``gd``:
    reading -> a dict with ``mu`` and ``ratio_vs_C`` (C -> max ratio); ``model_norm``: the largest
    ||w(D)||, where clipping starts to act (a dotted line).
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    a1.loglog(list(ratio_C), list(ratio_C.values()), "o-", label="SGD, default regime")
    for g, mk in zip(gd.values(), "s^Dv"):
        a1.loglog(list(g["ratio_vs_C"]), list(g["ratio_vs_C"].values()), mk + "--",
                  label=f"full-batch GD to convergence, mu {g['mu']:g}")
    a1.axvline(model_norm, color="0.5", ls=":", label="model norm ||w||")
    a1.set(xlabel="clipping bound C  (log scale)", title=f"max over pairs, m = {m}")
    a2.loglog(list(ratio_m), list(ratio_m.values()), "o-", label="SGD, default regime")
    a2.set(xlabel="local dataset size m  (log scale)", title=f"max over pairs, SGD default regime, C = {C:g}")
    for ax, xs in ((a1, list(ratio_C)), (a2, list(ratio_m))):
        ax.axhline(1, color="C3", ls="--", label="bound 2C/m (ratio 1)")
        ax.set_xticks(xs, [f"{v:g}" for v in xs])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_ylabel("max ||w(D) - w(D')|| / (2C/m)  (log scale)")
        ax.legend(fontsize=7)
    return fig


def fig_eq16_sigma_A_simulation(*, T, sigma_A, sigma_D, sigma_U_avg: float, sim: list[dict], N: int, m: int,
                                C: float, eps: float, L: int) -> Figure:
    """Eq. (16) by simulation: sigma_A, sigma_D and sigma_U/sqrt(N) against T with the simulated
    std of the noise on the broadcast model (+-3 standard errors), and the histogram of the
    simulated noise / sigma_A at the largest simulated T against N(0, 1) (Wei et al. 2020,
    eq. (15)-(16), Theorem 1; ``notebooks/wei2020/02_global_dp``, figure ``eq16_sigma_A_simulation``).

    ``T``: the grid of ``sigma_A`` and ``sigma_D`` (eq. (16), Theorem 1); ``sigma_U_avg``: the
    clients' averaged noise sigma_U/sqrt(N); ``sim``: one dict per simulated T with ``T``,
    ``empirical``, ``se``, ``sigma_A`` and ``sample`` (some noise coordinates).
    """
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    a1.plot(T, sigma_A, lw=2.5, label="$\\sigma_A$, eq. (16)")
    a1.plot(T, sigma_D, "--", label="$\\sigma_D$ (server, Theorem 1)")
    a1.axhline(sigma_U_avg, color="C2", ls="--", label="$\\sigma_U/\\sqrt{N}$ (clients, averaged)")
    a1.errorbar([s["T"] for s in sim], [s["empirical"] for s in sim], yerr=[3 * s["se"] for s in sim],
                fmt="o", color="C3", label="simulated std ($\\pm$3 SE)")
    a1.axvline(L * math.sqrt(N), color="0.5", ls=":", label="T = L$\\sqrt{N}$")
    a1.set(xlabel="number of aggregations T", ylabel="std of the noise on $\\tilde w$",
           title=f"N={N}, m={m}, C={C:g}, $\\epsilon$={eps}")
    a1.legend(fontsize=7)
    s = next(x for x in sim if x["T"] == max(y["T"] for y in sim))
    a2.hist(s["sample"] / s["sigma_A"], bins=80, density=True, alpha=0.5,
            label=f"simulated noise / $\\sigma_A$, T={s['T']}")
    xg = np.linspace(-4.5, 4.5, 300)
    a2.plot(xg, np.exp(-xg**2 / 2) / math.sqrt(2 * math.pi), label="N(0, 1)")
    a2.set(xlabel="noise value / $\\sigma_A$ (one coordinate)", ylabel="density",
           title="total noise $n = \\sum_i p_i n_i + n_D$ (eq. 15)")
    a2.legend(fontsize=8)
    return fig


def fig_constants_trajectory(*, constants: dict, per_point: dict, rho_points, train_loss, T_traj: int,
                             T_star: int) -> Figure:
    """The constants of Assumption 1 along the non-private run: the training loss, and per round
    max_i ||grad F_i|| (beta), B(w) of eq. (37), the PL ratio (l) and the Hessian's top eigenvalue
    (rho), each with the estimate drawn as a line (Wei et al. 2020, Assumption 1;
    ``notebooks/wei2020/03_convergence``, figure ``constants_trajectory``).

    ``constants``: ``rho``, ``beta``, ``l``, ``B``, ``Theta``, ``F_star``; ``per_point``: per round of
    the trajectory ``max_client_grad``, ``B``, ``pl_ratio`` and, at ``rho_points``,
    ``hessian_top_eig``; ``train_loss``: the whole run's, rounds 0..``T_star``.
    """
    import matplotlib.pyplot as plt

    k, pp, t = constants, per_point, np.arange(T_traj + 1)
    fig, axs = plt.subplots(2, 3, figsize=(14, 7))
    ax = list(axs.flat)[:5]
    axs.flat[5].axis("off")
    ax[0].plot(np.arange(T_star + 1), train_loss, "k-", label="F(w) (whole run)")
    ax[0].axvline(T_traj, color="grey", ls="--", lw=0.8, label="end of trajectory")
    for a, x_, y_, v in zip(ax, [None, t, t, t, rho_points], [None, pp["max_client_grad"], pp["B"], pp["pl_ratio"],
                            np.abs(pp["hessian_top_eig"])], ["F_star", "beta", "B", "l", "rho"]):
        a.axhline(k[v], color="r", ls=":", label=f"{v} = {k[v]:.3g}")
        if x_ is not None:
            a.plot(x_, y_, "o-", ms=3)
    for a, yl in zip(ax, ["global training loss F", "max_i ||grad F_i(w)||  (beta: max)", "B(w), eq. (37)  (B: max)",
                          "||grad F||^2 / (2 (F - F*))  (l: min)", "|top Hessian eigenvalue|  (rho: max)"]):
        a.set_xlabel("round t")
        a.set_ylabel(yl)
    for a in ax:
        a.legend(fontsize=7)
    fig.suptitle(f"Assumption 1 constants along the non-private run (F* = loss at its end): rho = {k['rho']:.2f}, "
                 f"beta = {k['beta']:.3f}, l = {k['l']:.3f}, B = {k['B']:.3f}, Theta = {k['Theta']:.3f}", fontsize=10)
    fig.tight_layout()
    return fig


def fig_P_vs_mu(*, mu, P, a: float, mu_exp: float, P_exp: float, mu_used: float, P_used: float, rho: float,
                B: float, l: float) -> Figure:
    """Theorem 2's contraction P = 1 + 2 l lambda_2 against the proximal mu, and 1 - P where
    0 < P < 1, with the simulations' mu and the bound's mu marked (Wei et al. 2020, eq. (14) and
    (18); ``notebooks/wei2020/03_convergence``, figure ``P_vs_mu``).

    ``mu``, ``P``: the grid and P on it; ``a``: rho B (1 + B/2), above which lambda_2 < 0.
    """
    import matplotlib.pyplot as plt

    mus, Ps = np.asarray(mu), np.asarray(P)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 3.8), layout="constrained")
    ax.plot(mus, Ps, "k-")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1)
    ax.axhspan(0, 1, color="g", alpha=0.15, label="0 < P < 1 (bound exists)")
    ax.axvline(a, color="grey", ls=":", label=f"mu = rho B (1 + B/2) = {a:.1f}")
    ax.plot([mu_exp], [P_exp], "rv", label=f"simulations' mu = {mu_exp}: P = {P_exp:.3g}")
    ax.plot([mu_used], [P_used], "g^", label=f"mu = {mu_used:.1f} used: P = {P_used:.5f}")
    ax.set_xlabel("proximal mu")
    ax.set_ylabel("P = 1 + 2 l lambda_2  (symlog)")
    ax.legend(fontsize=7)
    ok = (Ps > 0) & (Ps < 1)
    ax2.loglog(mus[ok], 1 - Ps[ok], "k-")
    ax2.axvline(a, color="grey", ls=":")
    ax2.set(xlabel="proximal mu", ylabel="1 - P (log), where 0 < P < 1",
            title="how far below 1 P gets (contraction per round)")
    fig.suptitle(f"eq. (18): P(mu) at rho = {rho:.3g}, B = {B:.3g}, l = {l:.3g}", fontsize=10)
    return fig


def fig_bound_vs_T(*, T, curves: dict, opt: dict, forms: list, printed, eps_list, Theta: float, T_max: int, N: int,
                   m: int, L: int, mu: float, P: float, d: int) -> Figure:
    """Fig. 8: Theorem 2's bound / Theta against T for each form (as printed, 2C put back,
    re-derived) and eps, with each curve's minimum over T, and a zoom on the minimum below
    (Wei et al. 2020, eq. (17)-(19), Fig. 8, Remark 4; ``notebooks/wei2020/03_convergence``,
    figure ``fig08_bound_vs_T``).

    ``curves``: ``(form, eps)`` -> the bound on ``T``; ``opt``: ``(form, eps)`` -> ``(T*, bound(T*))``;
    ``forms``: the columns, in order; ``printed``: the forms of (17) as printed (their shaded
    T <= L sqrt(N) is where (17) is not derived; the others' is where sigma_A is constant, D3).
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, len(forms), figsize=(4.8 * len(forms), 7.5), squeeze=False)
    for i, s in enumerate(forms):
        for j, e in enumerate(eps_list):
            for a_ in ax[:, i]:
                a_.plot(T, curves[s, e] / Theta, color=f"C{j}", label=f"eps = {e}")
                a_.plot(opt[s, e][0], opt[s, e][1] / Theta, "o", color=f"C{j}")
        b = [opt[s, e][1] / Theta for e in eps_list]
        lo, hi = min(1.0, *b), max(1.0, *b)
        ax[1, i].set(xlim=(0, min(T_max, 3 * max(opt[s, e][0] for e in eps_list) + 20)),
                     ylim=(lo - 0.1 * (hi - lo) - 1e-4, hi + 0.6 * (hi - lo) + 1e-4))
        ax[0, i].set(xscale="log", yscale="log")
        ax[0, i].set_title(s, fontsize=10)
        ax[1, i].set_title("zoom on the minimum (linear axes)", fontsize=9)
        ax[1, i].ticklabel_format(axis="y", useOffset=False)
    for a_, s in zip(ax.flat, forms * 2):
        a_.axvspan(0.5, L * math.sqrt(N), color="grey", alpha=0.2, label="T <= L sqrt(N): " + (
            "(17) not derived" if s in printed else "sigma_A constant (D3)"))
        a_.axhline(1, color="k", lw=0.6, ls=":", label="Theta: vacuous above")
        a_.set(xlabel="T (aggregations)", ylabel="bound / Theta")
        a_.legend(fontsize=7)
    fig.suptitle(f"Fig. 8: N = {N}, m = {m}, L = {L}, mu = {mu:.1f}, P = {P:.6f}, d = {d:,} "
                 "(dots: the minimum over T)", fontsize=10)
    fig.tight_layout()
    return fig


def fig_lemma4_b_gamma(*, T, b_of_T: dict, K, eps_gamma: dict, T69: dict, T73: dict, eps: float, N: int,
                       L: int) -> Figure:
    """Lemma 4's b against T for several K (missing where (69) fails), and the smallest admissible
    T against K: eq. (21)'s eps/gamma, (69) (on it) and (73) (Wei et al. 2020, eq. (21)-(22), (69),
    (73); ``notebooks/wei2020/04_krandom``, figure ``lemma4_b_gamma``).

    ``b_of_T``: K -> b on ``T`` at ``eps`` (NaN where undefined); ``eps_gamma``: eps -> eps/gamma
    for each K of ``K``; ``T69``, ``T73``: eps -> {K: the smallest T of (69), (73)}.
    """
    import matplotlib.pyplot as plt

    Ks = np.asarray(K)
    fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
    for j, (Kv, bb) in enumerate(b_of_T.items()):
        ax[0].plot(T, bb, color=f"C{j}", label=f"K = {Kv}")
    ax[0].set_yscale("log")
    ax[0].set_xlabel("T")
    ax[0].set_ylabel("b (log; missing: undefined)")
    ax[0].set_title(f"b, eq. (22), eps = {eps}, N = {N}, L = {L}", fontsize=9)
    ax[0].legend(fontsize=7)
    for j, e in enumerate(eps_gamma):
        ax[1].plot(Ks, eps_gamma[e], color=f"C{j}", label=f"eps/gamma, eps = {e}")
        ax[1].plot(Ks[:-1], [T69[e][int(Kv)] for Kv in Ks[:-1]], ls="none", marker="o", ms=3, markevery=5,
                   color=f"C{j}", label=f"(69), eps = {e} (on eps/gamma)")
        ax[1].plot(Ks, [T73[e][int(Kv)] for Kv in Ks], ":", color=f"C{j}", label=f"(73), eps = {e}")
    ax[1].set_yscale("log")
    ax[1].set_xlabel("K")
    ax[1].set_ylabel("smallest admissible T (log)")
    ax[1].set_title(f"smallest T for Lemma 4 (N = {N}, L = {L}): eq. (21) T > eps/gamma,\nequal to (69) "
                    "T > -eps/ln(1-K/N) (dots); (73) asks more", fontsize=9)
    ax[1].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return fig


def _theorem3_panel(a_, *, runs, v, r, T_, printed, eps_list, K69, N, K_paper, Theta):
    """One panel of :func:`fig_theorem3_bound_vs_K`: one (form, C reading, T)."""
    for jj, e in enumerate(eps_list):
        res = runs[v, r, e, T_]
        if res:
            a_.plot(list(res.values), np.array(list(res.values.values())) / Theta, "-", color=f"C{jj}",
                    label=f"eps = {e}")
            a_.plot([res.K_star], [res.bound / Theta], "o", color=f"C{jj}",
                    label=None if jj else "K* (minimum over K)")
        a_.axvline(K69[e, T_], color=f"C{jj}", ls=":", lw=1,
                   label=None if jj else "K_69 = N(1 - e^{-eps/T}), the (69) edge")
    y = np.concatenate([[1.0]] + [np.array(list(runs[v, r, e, T_].values.values())) / Theta
                                  for e in eps_list if runs[v, r, e, T_]])
    lo, hi = y.min(), (y.max() if y.min() >= 1 else min(y.max(), 1 + 2 * (1 - y.min())))  # linear: zoom near Theta
    if hi / lo > 10:
        a_.set_yscale("log")
    else:
        a_.set_ylim(lo - 0.1 * (hi - lo) - 1e-5, hi + 0.1 * (hi - lo) + 1e-5)
        a_.ticklabel_format(axis="y", useOffset=False)
    a_.axvline(K_paper, color="grey", ls="--", lw=0.6, label=f"K = {K_paper} (Fig. 4-5)")
    a_.axhline(1, color="k", ls="--", lw=0.8, label="Theta (vacuous above)")
    a_.set(xlim=(0, N + 1), xlabel="K")
    a_.set_title(f"T = {T_}, {v}" + ("" if v == printed else f", {r}"), fontsize=7)


def fig_theorem3_bound_vs_K(*, runs: dict, panels: list, printed: str, T_list, eps_list, K69: dict, N: int,
                            K_paper: int, Theta: float, d: int, mu3: float, mu03: float) -> Figure:
    """Theorem 3's bound / Theta against K, one row per (form, C reading) and one column per T, with
    the optimal K* of each eps, the (69) edge K_69 and the paper's K (Wei et al. 2020, eq. (23),
    Remark 5; ``notebooks/wei2020/04_krandom``, figure ``theorem3_bound_vs_K``).

    ``runs``: ``(form, C reading, eps, T)`` -> a :func:`fldp.papers.wei2020.theory.theorem3_optimal_K`
    result (``values``: K -> bound, ``K_star``, ``bound``) or ``None`` where the bound exists for no
    K; ``panels``: the rows' ``(form, C reading)``; ``printed``: the form whose titles omit the C
    reading; ``K69``: ``(eps, T)`` -> K_69; ``d``, ``mu3``, ``mu03`` go into the title.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(len(panels), len(T_list), figsize=(4 * len(T_list), 2.9 * len(panels)), squeeze=False)
    for (i, (v, r)), j in ((x, j) for x in enumerate(panels) for j in range(len(T_list))):
        _theorem3_panel(ax[i, j], runs=runs, v=v, r=r, T_=T_list[j], printed=printed, eps_list=eps_list, K69=K69, N=N,
                        K_paper=K_paper, Theta=Theta)
        ax[i, 0].set_ylabel("bound / Theta")
    h, l_ = ax[1, 0].get_legend_handles_labels()
    fig.legend(h, l_, loc="lower center", ncol=len(l_), fontsize=8)  # below the panels, off the data
    fig.suptitle(f"Theorem 3 vs K, N = {N}, d = {d:,} (mu3 = {mu3:.1f}, mu of 03 = {mu03:.1f}); "
                 "dotted: the (69) edge K_69", fontsize=10)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig
