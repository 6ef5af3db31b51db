"""FedSGD-DPC explorer (Zhou et al., "Optimizing the Numbers of Queries and Replies in FL with
DP"): the bound U(T, b) of Sec. V-B (Laplace, Theorem 3) or Sec. VI-B (Gaussian, Theorem 4)
over T queries and b clients per query, its closed-form optimum (eq. (6), b* of Sec. V-B, the
K.K.T. solutions / Solutions 1-2 of Sec. VI-B), the grid's numerical optimum and ACS.

The problem constants default to the MNIST estimates of ``notebooks/zhou/02_laplace`` (read from
the committed ``results/zhou/02_laplace.json``; the values below if it is absent), with xi_1 = 300
and xi_2 = 10 (the clips of Sec. VII-A3) and c_2 = sqrt(2 ln(1.25/delta)) as in ``03_gaussian``.
"""
from __future__ import annotations

import functools
import json
import math

import numpy as np

from fldp import mechanisms as M
from fldp.papers.zhou import theory as th
from fldp.repro.paths import PROJECT_ROOT
from fldp.teach.widgets import _base as B

__all__ = ["CONSTANTS", "TABLE1_FIT", "T_LO", "T_CAP", "constants", "compute", "draw", "zhou"]

#: MNIST estimates of 02_laplace (full mode); Lambda is the rms of the ten clients' Lambda_i.
CONSTANTS = {"mu": 0.212471, "lam": 9.49956, "G": 9.69895, "Gamma": 0.107175, "Y0": 6.70840,
             "Lambda": 7.88964, "p": 7840, "d": 60000.0}
#: 02_laplace's fit that reproduces every MNIST cell of Table I (b* rounded up): not the paper's.
TABLE1_FIT = {"mu": 1.0, "lam": 1.5, "G": 17.95, "Gamma": 80.0, "Y0": 100.0}
T_LO, T_CAP = 0.01, 1e7  # the heat map's T axis: [0.01, max(1000, 3 T*)], at most 1e7


def constants() -> dict:
    """mu, lam, G, Gamma, Y0, rms Lambda, p, d from the committed 02_laplace results."""
    try:
        k = json.loads((PROJECT_ROOT / "results" / "zhou" / "02_laplace.json").read_text("utf-8"))["data"]["constants"]
        out = {n: float(k[n]) for n in ("mu", "lam", "G", "Gamma", "Y0", "d")}
        return {**out, "p": int(k["p"]), "Lambda": float(np.sqrt(np.mean(np.square(k["Lambda"]))))}
    except (OSError, ValueError, KeyError, TypeError):
        return dict(CONSTANTS)


def compute(*, mechanism: str, eps: float, delta: float, N: int, b: int, T: int, mu: float, lam: float,
            G: float, Gamma: float, Y0: float, xi1: float, xi2: float, q: float, Lambda: float, p: int,
            d: float, preset: str = "") -> dict:
    """U(T, b) on a (T, b) grid and its optima (ValueError outside the paper's ranges)."""
    if not 1 <= b <= N:
        raise ValueError(f"b={b} is out of range: the PS queries 1 <= b <= N={N} clients per iteration")
    if not mu <= lam:
        raise ValueError(f"mu={mu:.4g} is out of range: Assumptions 3-4 need 0 < mu <= lam={lam:.4g}")
    if d < N:
        raise ValueError(f"d={d:.4g} is out of range: the N={N} clients need d >= N samples")
    gamma, c2, d_i = th.gamma_of(mu=mu, lam=lam), M.classic_gaussian_c(delta=delta), max(1, round(d / N))
    prob = dict(N=N, p=p, d=d, eps=eps, G=G, lam=lam, mu=mu, Gamma=Gamma, Y0=Y0)
    notes, rows = [], [B.Row("gamma = 2 lam / mu", "gamma", gamma, "Theorem 3")]
    if mechanism == "laplace":
        K = th.laplace_C(xi1=xi1, **prob)
        U = functools.partial(th.U_laplace, **K._asdict(), gamma=gamma)
        best = th.laplace_optimum(**K._asdict(), gamma=gamma, N=N)
        rows += [B.Row(f"{n} (Sec. V-B)", n, v) for n, v in K._asdict().items()]
        rows += [B.Row(f"eq. (6): T* at b = {b}", "T_star_at_b", th.T_star(b=b, xi1=xi1, **prob)),
                 B.Row(f"b* at T = {T} (Sec. V-B)", "b_star_at_T",
                       th.b_star(T=T, N=N, p=p, d=d, eps=eps, xi1=xi1, G=G), "clamped to [1, N]")]
        notes.append(f"Joint optimum at b* = {best.b:g} (the paper expects b* = 1 'in most cases'); b* = 1 iff "
                     f"C3 = {K.C3:.3g} > 2 gamma sqrt(C1 C2) = {2 * gamma * math.sqrt(K.C1 * K.C2):.3g}.")
    else:
        K = th.gaussian_E(q=q, Lambda=Lambda, delta=delta, xi2=xi2, c2=c2, **prob)
        U = functools.partial(th.U_gaussian, **K._asdict(), gamma=gamma)
        best = th.gaussian_optimum(**K._asdict(), gamma=gamma, N=N)
        rows += [B.Row(f"{n} (Sec. VI-B)", n, v) for n, v in K._asdict().items()]
        sign = "> 0: train as long as possible" if K.E1 / N + K.E2 > 0 else "<= 0: do not train"
        notes.append(f"E1/N + E2 = {K.E1 / N + K.E2:.3g} {sign} (Sec. VI-B; c2 = sqrt(2 ln(1.25/delta)) = {c2:.3g}).")
    T_hi = min(max(1e3, 3 * best.T if math.isfinite(best.T) else 0.0, 2.0 * T), T_CAP)
    Ts, bs = np.geomspace(T_LO, T_hi, 220), np.arange(1, N + 1, max(1, N // 100), dtype=float)
    Z = U(T=Ts[None, :], b=bs[:, None])
    i, j = np.unravel_index(np.argmin(Z), Z.shape)
    acs = th.acs_multistart(U=U, N=N, T_max=T_hi)
    if not T_LO <= best.T <= T_hi:
        notes.append(f"The closed-form T* = {best.T:.4g} lies outside the grid's [{T_LO}, {T_hi:.4g}]: "
                     "drawn at its edge.")
    rows += [
        B.Row("replies per client b T / N", "replies", b * T / N),
        B.Row("Laplace scale per reply", "laplace_scale", th.laplace_scale(eps=eps, b=b, T=T, N=N, d_i=d_i, xi1=xi1),
              f"Theorem 1, d_i = d/N = {d_i}"),
        B.Row("Gaussian sigma per reply", "gaussian_sigma",
              th.gaussian_sigma(eps=eps, delta=delta, b=b, T=T, N=N, d_i=d_i, xi2=xi2, c2=c2), "Theorem 2, eq. (5)"),
        B.Row(f"U(T = {T}, b = {b})", "U_at_current", U(T=float(T), b=float(b)), "Theorem 3/4 bound at t = T"),
        B.Row("closed-form optimum T*", "T_star", best.T, best.solution),
        B.Row("closed-form optimum b*", "b_star", best.b), B.Row("U(T*, b*)", "U_star", best.U),
        B.Row("grid optimum T", "numerical_T", float(Ts[j]), f"log grid [{T_LO}, {T_hi:.4g}]"),
        B.Row("grid optimum b", "numerical_b", int(bs[i])), B.Row("grid optimum U", "numerical_U", float(Z[i, j])),
        B.Row("ACS (Proposition 3): T, b", "acs_T", acs.T, f"b = {acs.b:.3g}, U = {acs.U:.4g}"),
    ]
    T_star_b = (lambda bb: th.T_star(b=bb, xi1=xi1, **prob)) if mechanism == "laplace" else None
    return {"rows": rows, "notes": notes, "Ts": Ts, "bs": bs, "Z": Z, "U": U, "best": best, "T": T, "b": b, "N": N,
            "num": (float(Ts[j]), float(bs[i])), "mechanism": mechanism, "eps": eps, "T_star_b": T_star_b}


def draw(fig, s: dict) -> None:
    fig.set_layout_engine(None)  # fixed margins: constrained layout costs ~0.4 s with this colorbar
    ax, ax2 = fig.subplots(1, 2, width_ratios=[1.25, 1])
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.2, top=0.93, wspace=0.22)
    Ts, bs, best, edge = s["Ts"], s["bs"], s["best"], lambda t: min(max(t, s["Ts"][0]), s["Ts"][-1])
    pc = ax.pcolormesh(Ts, bs, np.log10(s["Z"]), shading="nearest", cmap="viridis")
    fig.colorbar(pc, ax=ax, label="log10 U(T, b)", pad=0.02)
    ax.plot(edge(best.T), best.b, "w*", ms=14, mec="k", clip_on=False,
            label=f"closed form: T* = {best.T:.3g}, b* = {best.b:g}")
    ax.plot(*s["num"], "rx", ms=10, mew=2, label=f"grid min: T = {s['num'][0]:.3g}, b = {s['num'][1]:g}")
    ax.plot(s["T"], s["b"], "o", mfc="none", mec="m", mew=2, ms=9, label=f"sliders: T = {s['T']}, b = {s['b']}")
    ax.set(xscale="log", xlabel="T (queries, relaxed to reals)", ylabel="b (clients per query)",
           title=f"U(T, b), {s['mechanism']}, eps = {s['eps']:.3g}")
    fig.legend(handles=ax.lines, loc="lower left", bbox_to_anchor=(0.03, 0.0), ncol=3, fontsize=8, frameon=False)
    for bb, c in zip(dict.fromkeys([1, s["b"], s["N"]]), ("C0", "C1", "C2")):
        ax2.plot(Ts, s["U"](T=Ts, b=float(bb)), color=c, label=f"b = {bb}")
        if s["T_star_b"] is not None:
            t = s["T_star_b"](bb)
            ax2.plot(edge(t), s["U"](T=t, b=float(bb)), "o", color=c)
    ax2.axvline(s["T"], color="k", ls=":", lw=0.8, label=f"T = {s['T']}")
    ax2.set(xscale="log", yscale="log", xlabel="T", ylabel="U(T, b)",
            title="slices" + (" (dots: eq. (6) T*)" if s["T_star_b"] else ""))
    ax2.legend(fontsize=7)
    B.lean_log_axes(ax, ax2)


def zhou(*, mechanism: str = "laplace", eps: float = 5.0, delta: float = 1e-5, N: int = 10, b: int = 5,
         T: int = 50, xi1: float = 300.0, xi2: float = 10.0, q: float = 0.01, **const) -> B.Explorer:
    """The FedSGD-DPC explorer; defaults: Sec. VII-A3 (N = 10, clips, q, delta) and the MNIST constants
    of 02_laplace (override any of mu, lam, G, Gamma, Y0, Lambda, p, d by keyword)."""
    if set(const) - set(CONSTANTS):
        raise TypeError(f"zhou() got unknown constants {sorted(set(const) - set(CONSTANTS))}; "
                        f"it takes {sorted(CONSTANTS)}")
    k = {**constants(), **const}
    controls = {
        "mechanism": B.dropdown("mechanism", [("Laplace (Sec. V)", "laplace"), ("Gaussian (Sec. VI)", "gaussian")],
                                mechanism),
        "preset": B.dropdown("load constants", [("(keep sliders)", ""), ("MNIST estimate (02_laplace)", "mnist"),
                                                ("Table I fit (02_laplace)", "table1")], ""),
        "eps": B.log_slider("eps (per client)", eps, 0.01, 100), "delta": B.log_slider("delta", delta, 1e-10, 0.1, 0.25),
        "N": B.int_slider("N (clients)", N, 2, 100), "b": B.int_slider("b (clients per query)", b, 1, 100),
        "T": B.int_slider("T (queries)", T, 1, 1000), "mu": B.log_slider("mu (strong convexity)", k["mu"], 1e-3, 100),
        "lam": B.log_slider("lambda (smoothness)", k["lam"], 1e-3, 1e3), "G": B.log_slider("G", k["G"], 0.1, 100),
        "Gamma": B.log_slider("Gamma (non-iid)", k["Gamma"], 1e-4, 1e3), "Y0": B.log_slider("Y0", k["Y0"], 1e-2, 1e4),
        "xi1": B.log_slider("xi1 (l1 clip)", xi1, 1, 1e4), "xi2": B.log_slider("xi2 (l2 clip)", xi2, 0.1, 1e3),
        "q": B.log_slider("q (Gaussian batch)", q, 1e-4, 1),
        "Lambda": B.log_slider("Lambda (Assn. 6)", k["Lambda"], 0.01, 100),
        "p": B.int_slider("p (model dim.)", int(k["p"]), 10, 100000, step=10),
        "d": B.log_slider("d (samples)", k["d"], 100, 1e7),
    }
    intro = ("U(T, b) is Theorem 3's (Laplace) or Theorem 4's (Gaussian) bound on E||theta_T - theta*||^2 after "
             "T queries to b of N clients. Star: the closed-form optimum; cross: the grid's minimum; circle: the sliders. "
             "Constants: MNIST estimates (softmax regression is badly conditioned, gamma ~ 90, so T* is near 0 and "
             "b* = N); 'Table I fit' loads constants that reproduce the paper's Table I (gamma = 3).")
    ex = B.Explorer("zhou", "FedSGD-DPC (Zhou et al.): optimal numbers of queries T and replies b",
                    controls, compute, draw, intro=intro, figsize=(10, 4.2), columns=3)

    def load(change):
        mnist = {n: v for n, v in constants().items() if n in TABLE1_FIT}
        values = {"mnist": mnist, "table1": TABLE1_FIT}.get(change["new"])
        if values:
            ex.set(preset="", **values)  # back to "(keep sliders)", so the same preset can be reloaded
    controls["preset"].observe(load, names="value")
    return ex
