"""Exercises on Wei et al. 2020 (NbAFL): notebooks/wei2020/exercises.ipynb.

Each setting below is the one the notebook's exercise cell gives; every answer and every known
wrong answer is computed with :mod:`fldp.papers.wei2020` and :mod:`fldp.accounting`.
"""
from __future__ import annotations

import math

from fldp.teach.exercises.core import Choice, Exercise, Integer, Mistake, Number

__all__ = [
    "SIGMA", "classic_sigma", "REALLY", "eps_really", "RUN", "whole_run_sigma", "KRANDOM",
    "krandom_K", "server_noise", "EXERCISES"
]


def _th():
    from fldp.papers.wei2020 import theory

    return theory


def _alg():
    from fldp.papers.wei2020 import algorithm

    return algorithm


# ------------------------------------------------------------------ 1. Sec. III-A's sigma_U
SIGMA = dict(C=20.0, m=1200, eps=60.0, delta=0.01, L=1)  # Sec. VI's setting, read with L = 1


def _sigma_u(**change):
    s = {**SIGMA, **change}
    return _th().sigma_uplink(C=s["C"], m=s["m"], eps=s["eps"], L=s["L"], delta=s["delta"])


def _classic_with_c(c):
    return c * SIGMA["L"] * 2 * SIGMA["C"] / SIGMA["m"] / SIGMA["eps"]


classic_sigma = Exercise(
    id="wei2020.classic_sigma",
    title="Sec. III-A's uplink noise sigma_U",
    kind=Number(rel=0.005),
    solve=lambda: _sigma_u(),
    mistakes=(
        Mistake("half_sensitivity", "you used the sensitivity C/m; replacing one of a client's m samples moves its "
                "clipped model by up to Ds_U = 2C/m (eq. (5)-(6))", value=lambda: _sigma_u() / 2),
        Mistake("no_1.25", "your c = sqrt(2 ln(1/delta)) drops the 1.25: Sec. II-C's constant is "
                "c = sqrt(2 ln(1.25/delta))", value=lambda: _classic_with_c(math.sqrt(2 * math.log(1 / SIGMA["delta"])))),
        Mistake("log10", "your c uses log10; the constant c = sqrt(2 ln(1.25/delta)) takes the natural logarithm",
                value=lambda: _classic_with_c(math.sqrt(2 * math.log10(1.25 / SIGMA["delta"])))),
        Mistake("L_is_T", "you took L = T = 25; L counts a client's uplink exposures, and this exercise reads "
                "Sec. VI with L = 1 (sigma_U = c L Ds_U / eps)", value=lambda: _sigma_u(L=25)),
        Mistake("variance", "that is the variance sigma_U^2; give the standard deviation sigma_U",
                value=lambda: _sigma_u() ** 2),
    ),
    hint="sigma_U = c L Ds_U / eps with c = sqrt(2 ln(1.25/delta)) and Ds_U = 2C/m "
         "(fldp.papers.wei2020.theory.sigma_uplink)",
)


# ------------------------------------------------------------------ 2. what that sigma really buys
REALLY = dict(eps=60.0, delta=0.01, L=1, T=25, N=50, C=20.0, m=1200)


def _really():
    return _th().uplink_exposures_privacy(eps=REALLY["eps"], delta=REALLY["delta"], L=REALLY["L"])


def _whole_run_eps():
    r = REALLY
    return _alg().calibrate(eps=r["eps"], delta=r["delta"], C=r["C"], L=r["L"], N=r["N"], T=r["T"], m=r["m"]).eps_run


eps_really = Exercise(
    id="wei2020.eps_really",
    title="the eps that sigma_U really buys",
    kind=Number(rel=0.01),
    solve=lambda: _really()[1],
    mistakes=(
        Mistake("the_claim", "{answer} is the eps the classic formula was asked for, and its proof covers only "
                "eps < 1; compute the eps that sigma_U really gives at delta = 0.01 from the Gaussian mechanism's "
                "exact privacy profile", value=REALLY["eps"]),
        Mistake("true_delta", "that is the true delta of one upload at eps = 60 (almost 1: no guarantee at all); "
                "the question asks for the eps at delta = 0.01", value=lambda: _really()[0]),
        Mistake("whole_run", "that is what the whole run of T = 25 uploads spends (the accountant's composition); "
                "the question asks for ONE upload", value=_whole_run_eps),
    ),
    hint="the exact profile of the Gaussian mechanism (Balle & Wang 2018): "
         "fldp.mechanisms.gaussian_eps(sigma=sigma_U, delta=delta, sensitivity=Ds_U), or "
         "fldp.papers.wei2020.theory.uplink_exposures_privacy",
)


# ------------------------------------------------------------------ 3. the whole run's sigma_U
RUN = dict(eps=4.0, delta=1e-5, T=25, C=20.0, m=1200, N=50)


def _accountant(T):
    r = RUN
    return _alg().calibrate_accountant(eps=r["eps"], delta=r["delta"], C=r["C"], N=r["N"], T=T, m=r["m"]).sigma_U


def _classic(L, sensitivity_factor=1.0):
    r = RUN
    return _th().sigma_uplink(C=r["C"], m=r["m"], eps=r["eps"], L=L, delta=r["delta"]) * sensitivity_factor


def _run_facts():
    return {"T": RUN["T"], "ratio_LT": _classic(RUN["T"]) / _accountant(RUN["T"]),
            "excess_sqrtT": _classic(1, math.sqrt(RUN["T"])) / _accountant(RUN["T"]) - 1,
            "delta_LT": RUN["T"] * RUN["delta"]}


whole_run_sigma = Exercise(
    id="wei2020.whole_run_sigma",
    title="sigma_U for a whole run of T = 25 uploads at (4, 1e-5)",
    kind=Number(rel=0.01),
    solve=lambda: _accountant(RUN["T"]),
    mistakes=(
        Mistake("one_release", "this sigma composes L = 1 release: it makes ONE upload (4, 1e-5)-DP; the server "
                "sees T = {T} uploads of every client, so compose T releases", value=lambda: _accountant(1)),
        Mistake("classic_one_release", "this is the classic constant at eps = 4, outside its proof (eps < 1), "
                "and for one release; the server sees T = {T} uploads: compose T releases with the accountant",
                value=lambda: _classic(1)),
        Mistake("classic_L_is_T", "this is Sec. III-A's sigma_U with L = T: T releases of eps/T each composed "
                "linearly, which also spends T delta = {delta_LT:g} in all (not 1e-5) and adds {ratio_LT:.1f} times "
                "the noise the accountant needs", value=lambda: _classic(RUN["T"])),
        Mistake("classic_sqrtT", "the T releases are composed right (one Gaussian of sensitivity sqrt(T) Ds_U), but "
                "with the classic constant at eps = 4, outside its proof (eps < 1): here it adds "
                "{excess_sqrtT:.0%} more noise than needed; use the exact profile or the accountant",
                value=lambda: _classic(1, math.sqrt(RUN["T"]))),
    ),
    hint="calibrate the whole run by the accountant: fldp.papers.wei2020.algorithm.calibrate_accountant "
         "(or fldp.accounting.calibrate_gaussian_run for the noise multiplier, times Ds_U = 2C/m)",
    facts=_run_facts,
)


# ------------------------------------------------------------------ 4. Lemma 4: the K of K-random
KRANDOM = dict(N=50, T=300, eps=60.0, L=1, C=20.0, m=1200, delta=0.01)


def _krandom():
    """Per K < N: the conditions of Lemma 4 and whether its sigma_D is below Theorem 1's."""
    th, k = _th(), KRANDOM
    c = th.gaussian_c(delta=k["delta"])
    all_clients = th.sigma_downlink(C=k["C"], m=k["m"], N=k["N"], T=k["T"], L=k["L"], eps=k["eps"], c=c)
    rows = {}
    for K in range(1, k["N"]):
        cond = th.krandom_conditions(eps=k["eps"], T=k["T"], N=k["N"], K=K, L=k["L"])
        sigma = th.sigma_downlink_krandom(C=k["C"], m=k["m"], N=k["N"], K=K, T=k["T"], L=k["L"], eps=k["eps"], c=c,
                                          on_undefined_b="zero")
        rows[K] = dict(b_defined=cond["eq69"], c_proven=cond["eq73"], less=sigma < all_clients)
    return rows


def _krandom_facts():
    rows = _krandom()
    first_b = min(K for K, r in rows.items() if r["b_defined"])
    answer = min(K for K, r in rows.items() if r["b_defined"] and r["c_proven"] and r["less"])
    return {"first_b": first_b, "K_star": answer, "N": KRANDOM["N"]}


krandom_K = Exercise(
    id="wei2020.krandom_K",
    title="Lemma 4 and the smallest K at which K-random scheduling needs less server noise",
    kind=Integer(),
    solve=lambda: _krandom_facts()["K_star"],
    mistakes=(
        Mistake("b_undefined", "at K = {answer} Lemma 4's b is undefined (eq. (69) needs K >= {first_b} here): "
                "eq. (21) then selects sigma_D = 0, which is the lemma breaking down, not less noise",
                when=lambda a: 1 <= a < _krandom_facts()["first_b"], example=2),
        Mistake("c_unproven", "b is defined at K = {answer}, but the constant c of eq. (72) is proven only where "
                "(73) holds (0 < b eps/T < 1): check theory.krandom_conditions",
                when=lambda a: _krandom_facts()["first_b"] <= a < _krandom_facts()["K_star"],
                example=lambda: _krandom_facts()["first_b"]),
        Mistake("all_clients", "K = N = {N} is all clients, Theorem 1 itself; the question asks for K < N",
                when=lambda a: a == KRANDOM["N"], example=KRANDOM["N"]),
        Mistake("not_smallest", "at K = {answer} Lemma 4 applies and gives less noise, but it already does at a "
                "smaller K: where do (69) and (73) both start to hold?",
                when=lambda a: _krandom_facts()["K_star"] < a < KRANDOM["N"], example=lambda: KRANDOM["N"] - 1),
        Mistake("out_of_range", "K counts the clients chosen per round: 1 <= K <= N = {N}",
                when=lambda a: a < 1 or a > KRANDOM["N"], example=0),
    ),
    hint="for each K < N, theory.krandom_conditions (eq. (69) and (73)) and theory.sigma_downlink_krandom "
         "against theory.sigma_downlink (Theorem 1)",
    facts=_krandom_facts,
)


# ------------------------------------------------------------------ 5. why no server noise
server_noise = Exercise(
    id="wei2020.server_noise",
    title="why calibrate_accountant(where='uplink') adds no server noise",
    kind=Choice(("a", "b", "c", "d")),
    solve=lambda: "b",
    mistakes=(
        Mistake("theorem1_switch", "it is true that Theorem 1 with L = T gives sigma_D = 0 (T > L sqrt(N) never "
                "holds), but that is the paper's composition rule, not the accountant's reason: the accountant "
                "charges nothing for the broadcasts whatever their noise, zero included", value="a"),
        Mistake("ignores_downlink", "fldp's accountant can charge a downlink (accounting.planned_epsilon(downlink=...)); "
                "it does not here because the broadcasts reveal nothing beyond the noisy uploads", value="c"),
        Mistake("accuracy_trade", "no trade-off is made: the uploads alone already meet the whole-run (eps, delta), "
                "and computing from them cannot weaken that (post-processing)", value="d"),
    ),
    hint="what does the server compute the broadcast from?",
)


EXERCISES = (classic_sigma, eps_really, whole_run_sigma, krandom_K, server_noise)
