"""NbAFL explorer (Wei et al. 2020): the noise of Sec. III / Theorem 1 / Lemma 4, what it
really buys, and the Theorem 2 / Theorem 3 bounds, for any (eps, delta, N, K, T, L, C, m).

Assumption 1's constants (rho, beta, l, B, Theta) and the proximal mu of each theorem are the
ones ``notebooks/wei2020/03_convergence`` and ``04_krandom`` estimated on MNIST (read from the
committed ``results/wei2020/04_krandom.json``; the values below if it is absent).
"""
from __future__ import annotations

import json
import math
from typing import Optional

import numpy as np

from fldp import mechanisms as M
from fldp.papers.wei2020 import algorithm as nbafl_alg
from fldp.papers.wei2020 import theory as th
from fldp.repro.paths import PROJECT_ROOT
from fldp.teach.widgets import _base as B

__all__ = ["CONSTANTS", "T_GRID_MAX", "constants", "compute", "draw", "wei2020"]

#: MNIST estimates of 03_convergence / 04_krandom (full mode), used if results/ is missing.
CONSTANTS = {"rho": 13.2415, "beta": 1.51346, "l": 0.0435436, "B": 3.79081, "Theta": 2.15491,
             "mu": 290.674, "mu3": 1503.51}
T_GRID_MAX = 3000  # Theorem 2 curve: T in [1, 3000], as in 03_convergence


def constants() -> dict:
    """Assumption 1's constants and each theorem's mu, from the committed 04_krandom results."""
    path = PROJECT_ROOT / "results" / "wei2020" / "04_krandom.json"
    try:
        k = json.loads(path.read_text(encoding="utf-8"))["data"]["constants"]
        return {n: float(k[n]) for n in CONSTANTS}
    except (OSError, ValueError, KeyError, TypeError):
        return dict(CONSTANTS)


_ZERO_EPS = ("; 0 is not a bug: the noise is so large that delta is met already at eps = 0, "
             "i.e. (0, delta)-DP, stronger than asked")


def compute(*, eps: float, delta: float, N: int, K: int, T: int, L: int, C: float, m: int,
            const: Optional[dict] = None) -> dict:
    """Everything the explorer shows, as plain numbers (ValueError outside the ranges)."""
    if not 1 <= K <= N:
        raise ValueError(f"K={K} is out of range: K-random scheduling picks 1 <= K <= N={N} clients")
    if not 1 <= L <= T:
        raise ValueError(f"L={L} is out of range: a client is exposed at most once per round, 1 <= L <= T={T}")
    k = const or constants()
    c = th.gaussian_c(delta=delta)
    cal = nbafl_alg.calibrate(eps=eps, delta=delta, C=C, L=L, N=N, T=T, m=m, K=None if K == N else K)
    ds_u = th.uplink_sensitivity(C=C, m=m)
    sig_d_all = float(th.sigma_downlink(C=C, m=m, N=N, T=T, L=L, eps=eps, c=c))
    sig_a = float(th.sigma_aggregate(C=C, m=m, N=N, T=T, L=L, eps=eps, c=c))
    exposure = math.sqrt(L) * ds_u  # L uploads of sensitivity Ds_U each = one of sqrt(L) Ds_U
    true_delta = float(M.gaussian_delta(eps=eps, sigma=cal.sigma_U, sensitivity=exposure))
    eps_bought = M.gaussian_eps(sigma=cal.sigma_U, delta=delta, sensitivity=exposure)
    notes = []
    if eps >= 1:
        notes.append(f"eps={eps:.3g} >= 1: the classic constant c = sqrt(2 ln(1.25/delta)) is proven only for eps < 1.")
    if true_delta > delta:
        notes.append(f"The classic sigma_U does NOT give ({eps:.3g}, {delta:.2g})-DP per client over L={L}: its exact "
                     f"delta is {true_delta:.3g}; it buys eps = {eps_bought:.4g} at delta = {delta:.2g}.")
    rows = [
        B.Row("c = sqrt(2 ln(1.25/delta))", "c", c),
        B.Row("sigma_U (client noise)", "sigma_U", cal.sigma_U, "c L (2C/m) / eps, Sec. III-A"),
        B.Row("sigma_D (server, all clients)", "sigma_D", sig_d_all, "Theorem 1, eq. (10)"),
        B.Row("sigma_A (total per coordinate)", "sigma_A", sig_a, "eq. (16)"),
        B.Row("L sqrt(N)", "threshold", L * math.sqrt(N), "server adds noise only when T exceeds it"),
        B.Row("T > L sqrt(N)?", "server_noise", T > L * math.sqrt(N)),
        B.Row("exact delta of classic sigma_U", "true_delta", true_delta, f"target {delta:.2g} (Balle & Wang 2018)"),
        B.Row("eps it really gives per client", "eps_bought", eps_bought,
              f"over L={L} exposures, at delta={delta:.2g}" + _ZERO_EPS if eps_bought == 0 else
              f"over L={L} exposures, at delta={delta:.2g}"),
        B.Row("sigma_U that really gives (eps, delta)", "sigma_U_exact", M.analytic_gaussian_sigma(eps=eps, delta=delta, sensitivity=exposure),
              "analytic Gaussian mechanism (Balle & Wang 2018)"),
        B.Row("whole-run eps (accountant, T uploads)", "eps_run", cal.eps_run, f"PLD at delta={delta:.2g}"),
    ]
    if K < N:
        cond = th.krandom_conditions(eps=eps, T=T, N=N, K=K, L=L)
        t69, t73 = (th.krandom_T_min(eps=eps, N=N, K=K, condition=cd) for cd in ("eq69", "eq73"))
        rows += [B.Row(f"sigma_D, K-random (K={K})", "sigma_D_K", cal.sigma_D, cal.rule),
                 B.Row("Lemma 4: b", "b", th.krandom_b(eps=eps, T=T, N=N, K=K) if cond["eq69"] else float("nan"),
                       "eq. (22)"),
                 B.Row("Lemma 4: gamma", "gamma", th.krandom_gamma(eps=eps, L=L, N=N, K=K), "eq. (22)"),
                 B.Row("(69) b defined?", "eq69", cond["eq69"], f"needs T > {t69:.4g}"),
                 B.Row("(73) c proven?", "eq73", cond["eq73"], f"needs T > {t73:.4g}"),
                 B.Row("whole-run eps, K-random (secret sample)", "eps_run_sampled", cal.eps_run_sampled, "RDP")]
        if not cond["eq69"]:
            notes.append(f"Lemma 4: b is undefined (eq. (69) needs eps < -T ln(1-K/N) = {-T * math.log1p(-K / N):.3g}).")
    state = {"rows": rows, "notes": notes, "eps": eps, "T": T, "K": K, "N": N, "L": L, "C": C, "Theta": k["Theta"]}
    state.update(_theorem2(k, eps=eps, c=c, m=m, N=N, C=C, notes=notes))
    state.update(_theorem3(k, eps=eps, c=c, m=m, N=N, T=T, notes=notes))
    if "T_star" in state:
        rows.append(B.Row("Theorem 2: optimal T (2C = 1)", "T_star", state["T_star"], f"T in [1, {T_GRID_MAX}]"))
    if "K_star" in state:
        rows.append(B.Row(f"Theorem 3: optimal K at T={T}", "K_star", state["K_star"], f"mu = {k['mu3']:.4g}"))
    return state


def _theorem2(k: dict, *, eps, c, m, N, C, notes) -> dict:
    try:
        Ts = np.arange(1, T_GRID_MAX + 1, dtype=float)
        out = {"T_grid": Ts}
        for label, scale in (("as printed (2C = 1)", 1.0), (f"2C = {2 * C:.3g} restored", 2 * C)):
            kap = th.theorem2_constants(rho=k["rho"], beta=k["beta"], l=k["l"], B=k["B"], mu=k["mu"], c=c, m=m,
                                        N=N, scale=scale)._asdict()
            out.setdefault("bound2", {})[label] = th.theorem2_bound(T=Ts, eps=eps, Theta=k["Theta"], **kap)
            if scale == 1.0:
                out["T_star"], out["bound_T_star"] = th.theorem2_optimal_T(eps=eps, Theta=k["Theta"], T_max=T_GRID_MAX, **kap)
        return out
    except ValueError as exc:
        notes.append(f"Theorem 2 not drawn: {exc}")
        return {}


def _theorem3(k: dict, *, eps, c, m, N, T, notes) -> dict:
    kw = dict(T=T, eps=eps, N=N, m=m, Theta=k["Theta"], rho=k["rho"], beta=k["beta"], B=k["B"], mu=k["mu3"], l=k["l"], c=c)
    try:
        K_star, b_star, vals, _ = th.theorem3_optimal_K(**kw)
        return {"K_star": K_star, "bound_K_star": b_star, "bound3": vals}
    except ValueError as exc:
        notes.append(f"Theorem 3 not drawn at T={T}: {exc}")
        return {}


def draw(fig, s: dict) -> None:
    a2, a3 = fig.subplots(1, 2)
    if "bound2" in s:
        for (label, curve), ls in zip(s["bound2"].items(), ("-", "--")):
            a2.plot(s["T_grid"], curve, ls, lw=1.2, label=label)
        a2.plot([s["T_star"]], [s["bound_T_star"]], "o", color="C3", label=f"optimal T = {s['T_star']}")
        a2.axvline(s["T"], color="k", lw=0.8, ls=":", label=f"T = {s['T']}")
        a2.axvspan(1, s["L"] * math.sqrt(s["N"]), color="grey", alpha=0.2, label="T <= L sqrt(N)")
        a2.axhline(s["Theta"], color="0.4", lw=0.6, ls="-.", label="Theta (vacuous above)")
        a2.set(xscale="log", yscale="log", xlabel="T (aggregations)", ylabel="bound on E F(w_T) - F*")
        a2.legend(fontsize=7)
    a2.set_title(f"Theorem 2 at eps = {s['eps']:.3g}, N = {s['N']}", fontsize=9)
    if "bound3" in s:
        Ks, vals = zip(*sorted(s["bound3"].items()))
        a3.plot(Ks, vals, "o-", ms=3, lw=1.2, label="eq. (23)")
        a3.plot([s["K_star"]], [s["bound_K_star"]], "o", color="C3", ms=8, label=f"optimal K = {s['K_star']}")
        if s["K"] in s["bound3"]:
            a3.plot([s["K"]], [s["bound3"][s["K"]]], "s", color="k", mfc="none", ms=9, label=f"K = {s['K']}")
        if min(Ks) > 1:
            a3.axvspan(0.5, min(Ks) - 0.5, color="grey", alpha=0.2, label="undefined: (69) or 0 < Q < 1 fails")
        a3.axhline(s["Theta"], color="0.4", lw=0.6, ls="-.", label="Theta (vacuous above)")
        a3.set(xlim=(0, s["N"] + 1), xlabel="K (clients per round)", ylabel="Theorem 3 bound")
        a3.ticklabel_format(axis="y", useOffset=False)
        a3.legend(fontsize=7)
    a3.set_title(f"Theorem 3 at T = {s['T']} (K-random)", fontsize=9)


def wei2020(*, eps: float = 60.0, delta: float = 0.01, N: int = 50, K: int = 20, T: int = 25, L: int = 1,
          C: float = 20.0, m: int = 1200) -> B.Explorer:
    """The NbAFL explorer; defaults are Sec. VI's setting (C = 20, L = 1 as in 05_simulations)."""
    controls = {
        "eps": B.log_slider("eps (per exposure)", eps, 0.1, 200),
        "delta": B.log_slider("delta", delta, 1e-8, 0.1, step=0.25),
        "N": B.int_slider("N (clients)", N, 2, 200),
        "K": B.int_slider("K (per round)", K, 1, 200),
        "T": B.int_slider("T (aggregations)", T, 1, 500),
        "L": B.int_slider("L (exposures)", L, 1, 500),
        "C": B.log_slider("C (clipping)", C, 0.1, 50),
        "m": B.int_slider("m (smallest |D_i|)", m, 10, 6000, step=10),
    }
    k = constants()
    intro = ("Move a slider: the noise of Sec. III and Theorem 1 (and Lemma 4 when K &lt; N), whether the "
             "classic calibration really gives the (eps, delta) it claims, what each client spends over the "
             "whole run by the accountant, and the bounds of Theorems 2 and 3 with their optima. Constants "
             f"estimated on MNIST: rho = {k['rho']:.3g}, beta = {k['beta']:.3g}, l = {k['l']:.3g}, "
             f"B = {k['B']:.3g}, Theta = {k['Theta']:.3g}; mu = {k['mu']:.4g} (Thm 2), {k['mu3']:.4g} (Thm 3).")
    return B.Explorer("wei2020", "NbAFL (Wei et al. 2020): noise, true privacy, convergence bounds",
                      controls, lambda **v: compute(**v, const=k), draw, intro=intro, figsize=(10, 3.8))
