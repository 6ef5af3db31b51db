"""Figures of the Li, Chang & Chi (secure FedAvg) chapters that take more than a notebook cell:
each function takes numbers a chapter computed and returns the matplotlib figure, which the
chapter saves, shows and records (``notebooks/li2021/``)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["fig_noise_eq9", "fig_per_upload_eps"]


def fig_noise_eq9(*, vs_b: dict, vs_Q: dict, vs_eps: dict, b_list: list, Q_list: list, eps_list: list,
                  eps: float, n_k: int) -> Figure:
    """The std of eq. (9)'s noise at the first upload against b, Q and eps, one panel each
    (Li, Chang & Chi 2020, eq. (9) with Lemma 1's Df; ``notebooks/li2021/01_mechanism``, figure
    ``noise_eq9``).

    ``vs_b``: ``{Q: [sigma at each b of b_list, None where Q b > n_k]}``; ``vs_Q``: ``{b: [sigma at
    each Q of Q_list, None where Q b > n_k]}``; ``vs_eps``: ``{Q: [sigma at each eps of eps_list]}``
    (at b = 1). The None points are left out.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for Q, v in vs_b.items():
        bs = [b for b, s in zip(b_list, v) if s is not None]
        axes[0].plot(bs, [s for s in v if s is not None], "o-", label=f"Q = {Q}")
    for b, v in vs_Q.items():
        Qs = [Q for Q, s in zip(Q_list, v) if s is not None]
        axes[1].plot(Qs, [s for s in v if s is not None], "o-", label=f"b = {b}")
    for Q, v in vs_eps.items():
        axes[2].plot(eps_list, v, "o-", label=f"Q = {Q}, b = 1")
    for ax, x, t in zip(axes, ("b", "Q", "eps"), (f"eps = {eps}", f"eps = {eps}", "")):
        ax.set(xlabel=x, ylabel="sigma at the first upload", xscale="log", yscale="log",
               title=f"eq. (9), n_k = {n_k}" + (f", {t}" if t else ""))
        ax.grid(alpha=0.3)
        ax.legend()
    return fig


def fig_per_upload_eps(*, rows: list[dict], audits: dict, eps: float, n_k: int, delta: float,
                       Q_values: tuple[int, ...] = (1, 10)) -> Figure:
    """The eps of one upload against b, one panel per Q: the paper's eps, eq. (8)'s 2 q x, the
    cited amplification theorem (base x = eps/(2q) and the exact Gaussian profile), the accountant,
    and the audit's lower bound at b = 1 (Li, Chang & Chi 2020, eq. (7)-(9);
    ``notebooks/li2021/01_mechanism``, figure ``per_upload_eps``).

    ``rows``: one dict per (Q, b) with keys ``Q``, ``b``, ``q``, ``x``, ``amplified``,
    ``exact_profile``, ``accountant``; ``audits``: ``{"Q=<Q>,b=1": {"eps_lower": ...}}``.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, len(Q_values), figsize=(13, 5), layout="constrained")
    for i, Q in enumerate(Q_values):
        rs = [r for r in rows if r["Q"] == Q]
        bs = [r["b"] for r in rs]
        ax[i].axhline(eps, color="k", ls="--", label=f"paper: eps = {eps} per upload")
        eq8 = np.array([2 * r["q"] * r["x"] for r in rs])
        same = "equals eps at every b: lies on the dashed line" if np.allclose(eq8, eps) else "2 q x"
        ax[i].plot(bs, eq8, ":", color="0.4", lw=3, marker="D", mfc="none", ms=8, zorder=3,
                   label=f"eq. (8): 2 q x, {same}")
        ax[i].plot(bs, [r["amplified"] for r in rs], "o-", label="cited theorem, base x = eps/(2q)")
        ax[i].plot(bs, [r["exact_profile"] for r in rs], "s-", label="cited theorem, exact Gaussian profile")
        ax[i].plot(bs, [r["accountant"] for r in rs], "^-", label="accountant (one upload)")
        ax[i].plot([1], [audits[f"Q={Q},b=1"]["eps_lower"]], "kv", ms=9, label="audit at b = 1 (lower bound)")
        ax[i].set(title=f"one upload, Q = {Q}, n_k = {n_k}, delta = {delta}", xlabel="b",
                  ylabel="eps of one upload", xscale="log", yscale="log")
        ax[i].grid(alpha=0.3)
    fig.legend(*ax[0].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize=8)
    return fig
