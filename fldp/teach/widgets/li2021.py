"""Secure FedAvg explorer (Li, Chang & Chi 2020): eq. (9)'s upload noise with Lemma 1's
sensitivity Df = 4 Q G eta_{t+1}, the amplification chain of Sec. 2.3 (eq. (7)-(8)), what one
upload and the whole run really spend, for any (eps, delta, b, Q, n_k, G, upload, rounds, K, N).

Every number comes from ``fldp.papers.li2021.theory`` / ``algorithm`` and ``fldp.accounting``, as
in ``notebooks/li2021/01_mechanism``: the exact eps of one upload is the amplification theorem the
paper cites applied to the exact Gaussian profile (``theory.amplified_gaussian_eps``; the
accountant is looser for a single upload), and the whole run is the accountant's
(``algorithm.run_eps``: the smaller of the amplified RDP and the plain Gaussian readings) over
the client's expected round(rounds K / N) uploads.
"""
from __future__ import annotations

import functools

import numpy as np

from fldp import accounting as A
from fldp import mechanisms as M
from fldp.papers.li2021 import algorithm as alg
from fldp.papers.li2021 import theory as th
from fldp.teach.widgets import _base as B

__all__ = ["ROUNDS_AXIS", "compute", "draw", "li2021"]

ROUNDS_AXIS = np.unique(np.geomspace(1, 1000, 40).astype(int))  # the whole-run panel's x axis


@functools.lru_cache(maxsize=256)
def _run_eps(z: float, Q: int, b: int, n_k: int, uploads: int, delta: float) -> dict:
    """``algorithm.run_eps`` (about 0.15 s: the RDP of sampling without replacement), cached so
    that moving G, the upload index, K or N does not recompute it."""
    return alg.run_eps(z=z, Q=Q, b=b, n_k=n_k, uploads=uploads, delta=delta)


def _plain_eps(z: float, uploads: int, delta: float) -> float:
    """The unamplified reading of ``algorithm.run_eps``: ``uploads`` plain Gaussians (PLD, exact)."""
    return A.epsilon(A.self_composed(A.gaussian(noise_multiplier=z), count=uploads), delta=delta)


def compute(*, eps: float, delta: float, b: int, Q: int, n_k: int, G: float, upload: int, rounds: int,
            K: int, N: int) -> dict:
    """Everything the explorer shows (ValueError outside the paper's ranges)."""
    if not 1 <= K <= N:
        raise ValueError(f"K={K} is out of range: the server samples 1 <= K <= N={N} clients per round")
    if Q * b > n_k:
        raise ValueError(f"b={b} is out of range: one upload touches Q b rows, so 1 <= b <= n_k/Q = {n_k // Q} "
                         f"(Q={Q}, n_k={n_k})")
    if upload > rounds:
        raise ValueError(f"upload={upload} is out of range: the client uploads at most once per round, "
                         f"1 <= upload <= rounds={rounds}")
    q = th.sampling_ratio(b=b, n_k=n_k, Q=Q)
    eta = th.paper_lr(t=upload * Q)  # the r-th upload is global step t + 1 = r Q (Sec. 4.1's schedule)
    Df = th.lemma1_sensitivity(Q=Q, G=G, eta=eta)
    sigma = th.sigma_eq9(eps=eps, delta=delta, q=q, sensitivity_df=Df)  # ValueError if delta >= 1.25 q
    z, x = th.sigma_eq9(eps=eps, delta=delta, q=q, sensitivity_df=1.0), eps / (2 * q)
    claimed = th.amplified_eps(eps=x, b=b, n_k=n_k, Q=Q)
    exact = th.amplified_gaussian_eps(sigma=z, sensitivity_df=1.0, delta=delta, b=b, n_k=n_k, Q=Q)
    uploads = max(1, round(rounds * K / N))
    run = _run_eps(z, Q, b, n_k, uploads, delta)
    z_plain = A.calibrate_noise_multiplier(lambda v: A.self_composed(A.gaussian(noise_multiplier=v), count=uploads),
                                           target_eps=eps, target_delta=delta)
    notes = []
    eq8 = th.eq8_valid(eps=x)
    if not eq8:
        notes.append(f"eq. (8) used outside its range: eq. (9) applies log(1 + q(e^x - 1)) <= 2 q x at x = eps/(2q) "
                     f"= {x:.3g}, but it holds only for x <= 1.256; the cited theorem at that x gives {claimed:.4g}, "
                     f"not {eps:.3g}.")
    if not M.classic_gaussian_valid(eps=x):
        notes.append(f"The classic sigma behind eq. (9) is proven only for eps/(2q) < 1 (here {x:.3g}).")
    if th.lemma1_lr_ratio(Q=Q) > 2:
        notes.append(f"Lemma 1 assumes eta_(t+1-Q+tau) <= 2 eta_(t+1): false for Q={Q} > 100 with Sec. 4.1's schedule.")
    if exact > 1.01 * eps:
        notes.append(f"One upload really spends eps = {exact:.4g} > the claimed {eps:.3g} (the cited theorem on the "
                     "exact Gaussian profile).")
    rows = [
        B.Row("q = Q b / n_k", "q", q, "Sec. 2.3"),
        B.Row("1 - (1 - b/n_k)^Q", "p_incl", th.inclusion_prob(b=b, n_k=n_k, Q=Q), "eq. (7): <= q"),
        B.Row(f"eta at upload {upload} (t = {upload * Q})", "eta", eta, "0.2 / (1 + 0.01 t), Sec. 4.1"),
        B.Row("Df = 4 Q G eta", "Df", Df, "Lemma 1"),
        B.Row("sigma per coordinate", "sigma", sigma, "eq. (9)"),
        B.Row("noise multiplier z = sigma / Df", "z", z, "the same every round"),
        B.Row("x = eps / (2q)", "eps_base", x, "the eps eq. (9)'s classic sigma is set for"),
        B.Row("eq. (8) valid at x?", "eq8_valid", eq8, "needs x <= 1.256"),
        B.Row("eps per upload, claimed", "eps_claimed", eps, "eq. (7)-(9)"),
        B.Row("cited theorem at base x", "amplified_eps", claimed, "log(1 + p(e^x - 1)), Sec. 2.3"),
        B.Row("cited theorem, exact Gaussian", "eps_upload_exact", exact, "theory.amplified_gaussian_eps"),
        B.Row(f"uploads in {rounds} rounds (K/N = {K}/{N})", "uploads", uploads, f"T = {rounds * Q} local steps"),
        B.Row("whole run, accountant", "eps_run", run["eps"], f"delta = {delta:.2g}, min of the two readings"),
        B.Row("  amplified (RDP, replace-one)", "eps_run_amplified", run["amplified"]),
        B.Row("  no amplification (PLD)", "eps_run_unamplified", run["unamplified"]),
        B.Row("z enough for the run, no amplification", "z_run_plain", z_plain,
              f"{z_plain / z:.3g} x eq. (9)'s z; an upper bound on the honest z"),
    ]
    qs_all = {int(v): th.sampling_ratio(b=int(v), n_k=n_k, Q=Q) for v in np.geomspace(1, n_k // Q, 40).astype(int)}
    b_axis = np.array([v for v, w in qs_all.items() if delta < 1.25 * w])  # eq. (9)'s domain (theory.sigma_eq9)
    qs = [qs_all[v] for v in b_axis]
    per_b = {"b": b_axis,
             "claimed": [th.amplified_eps(eps=eps / (2 * w), b=int(v), n_k=n_k, Q=Q) for w, v in zip(qs, b_axis)],
             "exact": [th.amplified_gaussian_eps(sigma=th.sigma_eq9(eps=eps, delta=delta, q=w, sensitivity_df=1.0),
                                                 sensitivity_df=1.0, delta=delta, b=int(v), n_k=n_k, Q=Q)
                       for w, v in zip(qs, b_axis)]}
    up_axis = np.maximum(1, np.round(ROUNDS_AXIS * K / N)).astype(int)
    return {"rows": rows, "notes": notes, "eps": eps, "b": b, "Q": Q, "n_k": n_k, "delta": delta, "rounds": rounds,
            "per_b": per_b, "exact": exact, "run": run, "K": K, "N": N,
            "plain_curve": [_plain_eps(z, int(u), delta) for u in up_axis]}


def draw(fig, s: dict) -> None:
    fig.set_layout_engine(None)  # fixed margins: cheaper than constrained layout (~0.1 s)
    a1, a2 = fig.subplots(1, 2)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.13, top=0.92, wspace=0.25)
    pb = s["per_b"]
    a1.axhline(s["eps"], color="k", ls="--", lw=1, label=f"claimed: eps = {s['eps']:.3g}")
    a1.plot(pb["b"], pb["claimed"], "-", color="C1", label="cited theorem at base eps/(2q)")
    a1.plot(pb["b"], pb["exact"], "-", color="C0", label="cited theorem, exact Gaussian")
    a1.plot([s["b"]], [s["exact"]], "o", color="C3", ms=8, label=f"b = {s['b']}: eps = {s['exact']:.3g}")
    a1.set(xscale="log", yscale="log", xlabel="b (mini-batch)", ylabel="eps of one upload")
    a1.set_title(f"one upload: Q = {s['Q']}, n_k = {s['n_k']}, delta = {s['delta']:.2g}", fontsize=9)
    a1.legend(fontsize=7, loc="upper right")
    a2.axhline(s["eps"], color="k", ls="--", lw=1, label="claimed per upload")
    a2.plot(ROUNDS_AXIS, s["plain_curve"], "-", color="C2", label="no amplification (PLD, exact)")
    run = s["run"]
    a2.plot([s["rounds"]], [run["amplified"]], "s", color="C1", mfc="none", ms=11, mew=1.5, label="amplified (RDP)")
    a2.plot([s["rounds"]], [run["eps"]], "*", color="C3", ms=12, label=f"accountant: eps = {run['eps']:.3g}")
    a2.axvline(s["rounds"], color="0.5", ls=":", lw=0.8)
    a2.set(xscale="log", yscale="log", xlabel="communication rounds T/Q", ylabel=f"eps spent at delta = {s['delta']:.2g}")
    a2.set_title(f"whole run: uploads in K/N = {s['K']}/{s['N']} of the rounds", fontsize=9)
    a2.legend(fontsize=7, loc="upper left")
    B.lean_log_axes(a1, a2)


def li2021(*, eps: float = 0.5, delta: float = alg.DELTA, b: int = 1, Q: int = 10, n_k: int = 325,
           G: float = alg.G_CLIP, upload: int = 1, rounds: int = 200, K: int = 50, N: int = 100) -> B.Explorer:
    """The secure-FedAvg explorer; defaults: Sec. 4 (Adult over N = 100 clients, delta = 1e-4, G = 2,
    eps = 0.5, K = 50, Q = 10, b = 1) and 200 rounds as in 01_mechanism."""
    controls = {
        "eps": B.log_slider("eps (per upload)", eps, 0.01, 100), "delta": B.log_slider("delta", delta, 1e-8, 0.1, 0.25),
        "b": B.int_slider("b (mini-batch)", b, 1, 1000), "Q": B.int_slider("Q (local steps)", Q, 1, 200),
        "n_k": B.int_slider("n_k (client samples)", n_k, 10, 10000), "G": B.log_slider("G (gradient clip)", G, 0.01, 100),
        "upload": B.int_slider("upload r (t = r Q)", upload, 1, 1000),
        "rounds": B.int_slider("rounds T/Q", rounds, 1, 1000),
        "K": B.int_slider("K (clients per round)", K, 1, 1000), "N": B.int_slider("N (clients)", N, 1, 1000),
    }
    intro = ("Eq. (9) sets the upload noise for (eps/(2q), delta/q) and claims that amplification by the Q mini-batches "
             "makes each upload (eps, delta)-DP. Left: what one upload really spends against b. Right: what the client "
             "spends over the whole run (the server sees every upload). G and the upload index only scale sigma: the "
             "privacy depends on z = sigma/Df alone.")
    return B.Explorer("li2021", "Secure FedAvg (Li, Chang & Chi 2020): eq. (9)'s noise and what it really buys",
                      controls, compute, draw, intro=intro, figsize=(10, 3.8))
