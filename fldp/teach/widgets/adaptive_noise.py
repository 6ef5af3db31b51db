"""Adaptive CLT noise explorer (the "adaptive CLT noise perturbation" paper, Sec. 4-5): for any
noise scale c, clients per round K, dropout probability, filter multiple p, layer dimension d
and pairwise cosine rho of the updates, what Theorem 1 says of the aggregated noise, whether
the direction of descent is preserved (Sec. 4.2.1's ||sum r_k|| <= ||sum Delta w_k||, the rule
c <= K - d against the bound c <= sqrt(K' rho + 1 - rho) that Theorem 1 implies), and what the
direction filter of Sec. 4.2.2 costs (theta_thres = 90 + p sigma_theta, Table 4, Fig. 4).

All formulas are :mod:`fldp.papers.adaptive_noise.theory` (its docstring says how the OCR'd
text is read).  Updates have unit norm and equal weights n_k/n = 1/K' over the K' = K - d
clients that upload, d = round(dropout K) the expected number of dropouts (the paper's d; the
control named ``d`` is the layer's dimension, as in Fig. 4).
"""
from __future__ import annotations

import math

import numpy as np
from matplotlib.ticker import NullLocator
from scipy import stats

from fldp import validate
from fldp.papers.adaptive_noise import theory as th
from fldp.teach.widgets import _base as B

__all__ = [
    "CNN_DIMS", "MC_TRIALS", "MC_BUDGET", "descent_gaussian", "compute", "draw", "adaptive_noise"
]

#: the paper's 2-conv + 2-FC MNIST CNN, parameters per layer (``01_scheme``'s ``thresholds.dims``)
CNN_DIMS = (800, 32, 51200, 64, 524288, 512, 5120, 10)
MC_TRIALS, MC_BUDGET = 200, 1_000_000  # descent Monte Carlo: trials, and trials * K' * dim at most


def descent_gaussian(*, c, K: int, dim: int, rho: float):
    """P(||R|| <= ||Delta w||) when R is Theorem 1's Gaussian: ||sum r_k||^2 ~ (K' c^2 / dim)
    chi2_dim against ||sum Delta w_k||^2 = K'(K' rho + 1 - rho), so P = F_chi2(dim (K' rho + 1 - rho) / c^2)."""
    return stats.chi2.cdf(dim * (K * rho + 1.0 - rho) / np.square(c), dim)


def compute(*, c: float, K: int, dropout: float, p: float, d: float, rho: float,
            trials: int = MC_TRIALS, seed: int = 0) -> dict:
    """Everything the explorer shows (ValueError naming the parameter outside its range)."""
    c, rho = validate.positive("c", c), validate.probability("rho", rho)
    K, dim = validate.integer("K", K, 1), validate.integer("d", int(round(d)), 2)
    if not (isinstance(p, (int, float)) and math.isfinite(p) and -6 <= p <= 6):
        raise ValueError(f"p={p!r} is out of range: p must be in [-6, 6] (multiples of the angle's std)")
    q = validate.probability("dropout", dropout)
    drops = int(math.floor(q * K + 0.5))
    if drops > K - 1:
        raise ValueError(f"dropout={q:g} is out of range for K={K}: round(dropout K) = {drops} dropouts leave "
                         f"no client; dropout must be < {(K - 0.5) / K:.3g}")
    k = K - drops
    sig_k = th.noise_std(c=c, update_norm=1.0, dim=dim)
    sig_r = math.sqrt(th.aggregate_noise_variance(weights=[1.0 / k] * k, sigmas=[sig_k] * k))
    upd = math.sqrt((k * rho + 1.0 - rho) / k)  # ||(1/K') sum Delta w_k||, unit updates of cosine rho
    ratio = sig_r * math.sqrt(dim) / upd  # typical ||R|| / ||Delta w|| = c / sqrt(K' rho + 1 - rho)
    c_paper, c_thm = th.paper_max_noise_scale(K=K, dropouts=drops), th.max_noise_scale(K=K, rho=rho, dropouts=drops)
    dim_mc = max(2, min(dim, MC_BUDGET // (trials * k)))
    p_mc = th.descent_probability(c=c, K=K, dim=dim_mc, rho=rho, dropouts=drops, trials=trials, seed=seed)
    p_gauss = float(descent_gaussian(c=c, K=k, dim=dim, rho=rho))
    mean, std = th.angle_moments(dim=dim)
    acc, drift = th.acceptance_probability(dim=dim, p=p), th.filter_drift(dim=dim, p=p, c=c)
    notes = [f"Dropout: d = round(dropout K) = {drops} (the expected count); in a real round the dropouts are "
             f"Binomial(K={K}, {q:g}), all K drop with probability {q ** K:.3g}."] if q > 0 else []
    if dim_mc < dim:
        notes.append(f"The descent Monte Carlo runs at dim = {dim_mc} (not {dim}) to stay fast; Theorem 1's "
                     f"Gaussian reading gives the value at dim = {dim}.")
    if acc <= 0:
        notes.append(f"theta_thres = {th.threshold(dim=dim, p=p):.3g} deg: no draw ever passes the filter.")
    rows = [
        B.Row("uploading clients K' = K - d", "uploading", k, f"d = round(dropout K) = {drops} dropouts"),
        B.Row("client noise std per coordinate", "sigma_client", sig_k, "c ||Delta w_k|| / sqrt(dim), unit updates"),
        B.Row("aggregated noise std per coordinate", "sigma_agg", sig_r, "Theorem 1: sqrt(sum (n_k/n)^2 sigma_k^2)"),
        B.Row("||R|| / ||Delta w|| (Theorem 1)", "noise_to_update", ratio, "c / sqrt(K' rho + 1 - rho)"),
        B.Row("paper's rule: c <= K - d", "c_max_paper", c_paper, "Sec. 4.2.1"),
        B.Row("Theorem 1's bound: c <=", "c_max_theorem1", c_thm, "sqrt(K' rho + 1 - rho)"),
        B.Row("c within the paper's rule?", "ok_paper", c <= c_paper),
        B.Row("c within Theorem 1's bound?", "ok_theorem1", c <= c_thm),
        B.Row("P(descent preserved), Monte Carlo", "descent_mc", p_mc, f"{trials} trials, seed {seed}, dim {dim_mc}"),
        B.Row("P(descent preserved), Theorem 1 Gaussian", "descent_theorem1", p_gauss, f"chi2 law, dim {dim}"),
        B.Row("std of the angle between random vectors", "angle_std", std, f"deg, mean {mean:g} (Fig. 4)"),
        B.Row("theta_thres = mean + p std", "theta_thres", th.threshold(dim=dim, p=p), "deg, Sec. 4.2.2"),
        B.Row("filter acceptance probability", "acceptance", acc, "angle(Delta w, r) < theta_thres"),
        B.Row("expected tries (this layer)", "tries", th.expected_tries(dim=dim, p=p), "1 / acceptance"),
        B.Row("cost multiple, the paper's CNN", "cost_multiple", th.cost_multiple(dims=CNN_DIMS, p=p),
              f"Table 4 (normal reading 1/Phi(p) = {th.expected_tries_normal(p=p):.3g})"),
        B.Row("filter drift along the update", "drift", drift, "c E[cos phi | accepted], x the layer's update"),
    ]
    return {"rows": rows, "notes": notes, "c": c, "K": K, "k": k, "dim": dim, "dim_mc": dim_mc, "rho": rho,
            "ratio": ratio, "c_paper": c_paper, "c_thm": c_thm, "p_mc": p_mc, "p": p, "mean": mean, "std": std,
            "theta": th.threshold(dim=dim, p=p), "acc": acc, "ratio_full": c / math.sqrt(K * rho + 1 - rho)}


def _norm_panel(ax, s):
    lo = min(s["ratio"], 1.0) / 10
    hi = max(s["ratio"], 1.0, s["ratio_full"]) * 10
    sd = 1 / math.sqrt(2 * s["dim"])  # relative spread of chi_dim / sqrt(dim)
    for r, ls, lab in ((s["ratio"], "-", f"K' = {s['k']}"), (s["ratio_full"], ":", f"no dropout (K = {s['K']})")):
        if ls == ":" and s["k"] == s["K"]:
            continue
        x = np.sort(np.concatenate([np.geomspace(lo, hi, 400), r * (1 + np.linspace(-8, 8, 400) * sd)]))
        x = x[x > 0]
        y = stats.chi.pdf(x, s["dim"], scale=r / math.sqrt(s["dim"]))
        ax.plot(x, y / y.max(), ls, color="C0", lw=1.3, label=lab)
    ax.axvspan(lo, 1.0, color="C2", alpha=0.12, label="descent preserved")
    ax.axvline(s["c_paper"] / s["c_thm"], color="C3", ls="--", lw=1, label=f"if c = K - d = {s['c_paper']}")
    ax.set(xscale="log", xlim=(lo, hi), ylim=(0, 1.45), yticks=[0, 0.5, 1], xlabel="||R|| / ||Delta w||",
           ylabel="density (peak = 1)")
    ax.set_title(f"Theorem 1: aggregated noise norm (c = {s['c']:.3g}, dim = {s['dim']})", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", ncol=2)


def draw(fig, s: dict) -> None:
    a1, a2, a3 = fig.subplots(1, 3)
    _norm_panel(a1, s)
    for ax in (a1, a2):  # no minor ticks on the log axes: each tick costs time to draw
        ax.xaxis.set_minor_locator(NullLocator())
    cs = np.geomspace(0.1, 100, 300)
    a2.plot(cs, descent_gaussian(c=cs, K=s["k"], dim=s["dim"], rho=s["rho"]), "-", lw=1.3,
            label=f"Theorem 1, dim {s['dim']}")
    if s["dim_mc"] < s["dim"]:
        a2.plot(cs, descent_gaussian(c=cs, K=s["k"], dim=s["dim_mc"], rho=s["rho"]), ":", lw=1.2,
                label=f"Theorem 1, dim {s['dim_mc']}")
    a2.plot([s["c"]], [s["p_mc"]], "o", color="k", label=f"Monte Carlo, dim {s['dim_mc']}")
    a2.axvline(s["c_thm"], color="C2", ls=":", lw=1.2, label=f"sqrt(K' rho + 1 - rho) = {s['c_thm']:.3g}")
    a2.axvline(s["c_paper"], color="C3", ls="--", lw=1, label=f"K - d = {s['c_paper']}")
    a2.set(xscale="log", ylim=(-0.03, 1.45), yticks=[0, 0.25, 0.5, 0.75, 1], xlabel="noise scale c",
           ylabel="P(||sum r_k|| <= ||sum Delta w_k||)")
    a2.set_title(f"Descent preserved? (K' = {s['k']}, rho = {s['rho']:g})", fontsize=9)
    a2.legend(fontsize=6.5, loc="upper center", ncol=2)
    x = np.linspace(max(0.0, s["mean"] - 6 * s["std"]), min(180.0, s["mean"] + 6 * s["std"]), 600)
    y = th.angle_pdf(theta=x, dim=s["dim"])
    a3.plot(x, y, "k-", lw=1.2, label="angle density (Fig. 4)")
    a3.fill_between(x, 0, y, where=x <= s["theta"], color="C2", alpha=0.3, label=f"accepted: P = {s['acc']:.3g}")
    a3.axvline(s["theta"], color="C3", lw=1, label=f"theta_thres = {s['theta']:.4g} deg")
    a3.set(xlabel="angle between Delta w and r (deg)", ylabel="density per degree", ylim=(0, 1.45 * y.max()))
    a3.set_title(f"Direction filter (p = {s['p']:g}, dim = {s['dim']})", fontsize=9)
    a3.legend(fontsize=7, loc="upper left")


def adaptive_noise(*, c: float = 15.0, K: int = 20, dropout: float = 0.0, p: float = 0.0, d: float = 1000.0,
                   rho: float = 1.0) -> B.Explorer:
    """The adaptive-noise explorer; defaults are ``01_scheme``'s setting (c = 15 of Sec. 7.2, K = 20, dim = 1000)."""
    controls = {
        "c": B.log_slider("c (noise scale)", c, 0.1, 100),
        "K": B.int_slider("K (clients per round)", K, 1, 100),
        "dropout": B.float_slider("dropout probability", dropout, 0.0, 0.9, 0.05),
        "p": B.float_slider("p (threshold, x angle std)", p, -3.0, 3.0, 0.25),
        "d": B.log_slider("d (layer dimension)", d, 2, 1e6, step=0.1),
        "rho": B.float_slider("rho (updates' cosine)", rho, 0.0, 1.0, 0.05),
    }
    intro = ("Each client adds noise of norm c ||Delta w_k|| (per layer), redrawn until its angle to the update is "
             "below theta_thres = 90 + p sigma_theta. Left: Theorem 1's aggregated noise against the aggregated "
             "update; middle: the chance that the noise does not exceed the update (Sec. 4.2.1), with the paper's "
             "rule c &lt;= K - d (d dropouts) and the bound sqrt(K' rho + 1 - rho) that Theorem 1 implies; right: "
             "the filter (Sec. 4.2.2, Table 4). Updates have unit norm and pairwise cosine rho (1: same direction).")
    return B.Explorer("adaptive_noise", "Adaptive CLT noise: aggregated noise, descent, filter cost",
                      controls, compute, draw, intro=intro, figsize=(13, 3.8), columns=3)
