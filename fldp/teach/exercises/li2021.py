"""Exercises on Li, Chang & Chi (secure FedAvg): notebooks/li2021/exercises.ipynb.

All five share one upload setting, Sec. 4.1's (Adult over N = 100 clients: n_k = 325 rows,
delta = 1e-4, gradient clip G = 2, eta_t = 0.2 / (1 + 0.01 t)) at b = 1, Q = 10 and a per-upload
target eps = 1; every answer and known wrong answer is computed with
:mod:`fldp.papers.li2021.theory` and :mod:`fldp.papers.li2021.algorithm`.
"""
from __future__ import annotations

import math

from fldp.teach.exercises.core import Choice, Exercise, Mistake, Number

__all__ = [
    "UPLOAD", "UPLOADS", "AUDIT_TRIALS", "sigma_eq9", "eq8_x", "amplified_eps", "whole_run",
    "audit_numbers", "audit", "EXERCISES"
]

UPLOAD = dict(n_k=325, delta=1e-4, G=2.0, eps=1.0, Q=10, b=1)
UPLOADS = 20          # exercise 4: uploads a client makes over the run
AUDIT_TRIALS = 200_000  # exercise 5: simulated uploads per side


def _th():
    from fldp.papers.li2021 import theory

    return theory


def _alg():
    from fldp.papers.li2021 import algorithm

    return algorithm


def _q(Q=None):
    u = UPLOAD
    return _th().sampling_ratio(b=u["b"], n_k=u["n_k"], Q=u["Q"] if Q is None else Q)


def _eta(t=None):
    return _th().paper_lr(t=UPLOAD["Q"] if t is None else t)  # eta_{t+1} at the first upload, t + 1 = Q


def _df(eta=None, Q=None):
    u = UPLOAD
    return _th().lemma1_sensitivity(Q=u["Q"] if Q is None else Q, G=u["G"], eta=_eta() if eta is None else eta)


def _sigma(q=None, df=None):
    u = UPLOAD
    return _th().sigma_eq9(eps=u["eps"], delta=u["delta"], q=_q() if q is None else q,
                           sensitivity_df=_df() if df is None else df)


def _x():
    return UPLOAD["eps"] / (2 * _q())


def _facts():
    return {"q": _q(), "x": _x(), "eq8_edge": 1.2564, "uploads": UPLOADS, **UPLOAD}


# ------------------------------------------------------------------ 1. eq. (9)'s noise
sigma_eq9 = Exercise(
    id="li2021.sigma_eq9",
    title="the noise of eq. (9) at the first upload",
    kind=Number(rel=0.005),
    solve=lambda: _sigma(),
    mistakes=(
        Mistake("no_amplification", "this is the classic sigma for (eps, delta) itself, with no amplification; "
                "eq. (9) calibrates the classic sigma for (eps/(2q), delta/q) with q = Q b / n_k",
                value=lambda: math.sqrt(2 * math.log(1.25 / UPLOAD["delta"])) * _df() / UPLOAD["eps"]),
        Mistake("one_step_sensitivity", "you used one step's sensitivity 2 G eta; Lemma 1 bounds the upload's, "
                "after Q = {Q} steps, by Df = 4 Q G eta_(t+1)", value=lambda: _sigma(df=2 * UPLOAD["G"] * _eta())),
        Mistake("log_without_q", "your logarithm is ln(1.25/delta); eq. (9) has ln(1.25 q/delta), the classic "
                "constant at delta/q", value=lambda: math.sqrt(8 * _q() ** 2 * _df() ** 2
                                                              * math.log(1.25 / UPLOAD["delta"])) / UPLOAD["eps"]),
        Mistake("eta_0", "you took eta_0 = 0.2; Lemma 1's Df uses the step size at the upload, eta_(t+1) with "
                "t + 1 = Q = {Q} at the first upload", value=lambda: _sigma(df=_df(eta=_eta(t=0)))),
        Mistake("q_without_Q", "your q = b/n_k leaves out Q: one upload touches Q mini-batches, q = Q b / n_k",
                value=lambda: _sigma(q=_q(Q=1))),
    ),
    hint="eq. (9): sigma^2 = 8 q^2 Df^2 ln(1.25 q/delta) / eps^2 with q = Q b / n_k and Lemma 1's "
         "Df = 4 Q G eta_(t+1) (fldp.papers.li2021.theory.sigma_eq9, sampling_ratio, lemma1_sensitivity, paper_lr)",
    facts=_facts,
)


# ------------------------------------------------------------------ 2. where eq. (8) is applied
eq8_x = Exercise(
    id="li2021.eq8_x",
    title="the eps at which eq. (9) uses eq. (8)'s step",
    kind=Number(rel=0.005),
    solve=_x,
    mistakes=(
        Mistake("upside_down", "upside down: eq. (9) asks the classic mechanism for eps/(2q), a LARGER eps than "
                "the target, and counts on amplification to bring it down", value=lambda: 2 * _q() * UPLOAD["eps"]),
        Mistake("no_2", "you dropped the 2: eq. (8) bounds the amplified eps by 2 q x, so eq. (9) takes "
                "x = eps/(2q)", value=lambda: UPLOAD["eps"] / _q()),
        Mistake("the_target", "{answer} is the target after amplification; eq. (9)'s classic sigma is calibrated "
                "for x = eps/(2q)", value=lambda: UPLOAD["eps"]),
        Mistake("the_edge", "that is the edge of eq. (8)'s range (e^x - 1 <= 2x up to x = 1.2564); the question "
                "asks for the x eq. (9) uses", value=1.2564),
    ),
    hint="eq. (9) is the classic sigma for (eps/(2q), delta/q), q = Q b / n_k: x = eps/(2q) "
         "(fldp.papers.li2021.theory.sampling_ratio, eq8_valid)",
    facts=_facts,
)


# ------------------------------------------------------------------ 3. the amplified eps, exactly
def _amplified(p=None):
    u = UPLOAD
    if p is None:
        return _th().amplified_eps(eps=_x(), b=u["b"], n_k=u["n_k"], Q=u["Q"])
    return math.log1p(p * math.expm1(_x()))


amplified_eps = Exercise(
    id="li2021.amplified_eps",
    title="what the cited amplification theorem gives at that x",
    kind=Number(rel=0.0005),
    solve=_amplified,
    mistakes=(
        Mistake("eq8_bound", "that is eq. (8)'s bound 2 q x = eps, whose step e^x - 1 <= 2x holds only for "
                "x <= 1.2564; here x = {x:.4g}: evaluate the theorem's log(1 + p(e^x - 1)) itself",
                value=lambda: UPLOAD["eps"]),
        Mistake("no_amplification", "that is x itself, the eps before amplification; the theorem gives "
                "log(1 + p(e^x - 1)) with p = 1 - (1 - b/n_k)^Q", value=_x),
        Mistake("q_for_p", "you used q = Q b / n_k for the inclusion probability; the theorem has "
                "p = 1 - (1 - b/n_k)^Q (eq. (7) bounds it by q)", value=lambda: _amplified(p=_q())),
        Mistake("no_log", "that is eq. (8)'s middle term q (e^x - 1), without the logarithm: the amplified eps "
                "is log(1 + p(e^x - 1))", value=lambda: _q() * math.expm1(_x())),
    ),
    hint="Sec. 2.3's amplification statement: log(1 + (1 - (1 - b/n_k)^Q)(e^x - 1)) at x = eps/(2q) "
         "(fldp.papers.li2021.theory.amplified_eps)",
    facts=_facts,
)


# ------------------------------------------------------------------ 4. the whole run
def _z():
    return _sigma() / _df()  # the noise multiplier, the same at every upload


def _run(uploads):
    u = UPLOAD
    return _alg().run_eps(z=_z(), Q=u["Q"], b=u["b"], n_k=u["n_k"], uploads=uploads, delta=u["delta"])


whole_run = Exercise(
    id="li2021.whole_run",
    title="what a client's 20 uploads really spend",
    kind=Number(rel=0.01),
    solve=lambda: _run(UPLOADS)["eps"],
    mistakes=(
        Mistake("linear_claim", "you added the paper's per-upload eps = 1 over {uploads} uploads; but eq. (9) does "
                "not make one upload (1, 1e-4)-DP in the first place: ask the accountant",
                value=lambda: UPLOADS * UPLOAD["eps"]),
        Mistake("one_upload", "that is what ONE upload spends; the client uploads {uploads} times and the server "
                "sees every upload", value=lambda: _run(1)["eps"]),
        Mistake("the_claim", "that is the paper's per-upload claim; the question asks what the whole run spends "
                "by the accountant", value=lambda: UPLOAD["eps"]),
        Mistake("amplified_only", "that is the amplified (subsampled, RDP) reading alone; the plain Gaussian "
                "reading is also sound and smaller here: take the smaller of the two (algorithm.run_eps's 'eps')",
                value=lambda: _run(UPLOADS)["amplified"]),
        Mistake("linear_accountant", "you multiplied one upload's eps by {uploads} (linear composition): sound, "
                "but the accountant composes the uploads far more tightly", value=lambda: UPLOADS * _run(1)["eps"]),
    ),
    hint="compose the uploads with the accountant: fldp.papers.li2021.algorithm.run_eps with the noise "
         "multiplier z = sigma / Df (eq. (9) with sensitivity_df = 1)",
    facts=_facts,
)


# ------------------------------------------------------------------ 5. reading an audit
def audit_numbers() -> dict:
    """The numbers exercise 5 shows: a simulated audit's certified lower bound on one upload's eps
    (95 % confidence), the cited theorem's and the accountant's upper bounds, the paper's claim."""
    def compute():
        u, th = UPLOAD, _th()
        audit = _alg().audit_upload(eps=u["eps"], delta=u["delta"], Q=u["Q"], b=u["b"], n_k=u["n_k"],
                                    trials=AUDIT_TRIALS, seed=0)
        theorem = th.amplified_gaussian_eps(sigma=_z(), sensitivity_df=1.0, delta=u["delta"], b=u["b"],
                                            n_k=u["n_k"], Q=u["Q"])
        return {"claim": u["eps"], "audit_lower": audit["eps_lower"], "confidence": 1 - audit["alpha"],
                "resolution": audit["resolution"], "theorem_upper": theorem, "accountant_upper": _run(1)["eps"]}
    from fldp.teach.exercises.core import cached

    return cached("li2021.audit", "numbers", compute)


def _audit_answer():
    n = audit_numbers()
    if not n["claim"] < n["audit_lower"] <= min(n["theorem_upper"], n["accountant_upper"]):
        raise RuntimeError(f"the audit exercise's premise does not hold any more: {n}")
    return "c"


audit = Exercise(
    id="li2021.audit",
    title="an audit's lower bound against the upper bounds",
    kind=Choice(("a", "b", "c", "d")),
    solve=_audit_answer,
    mistakes=(
        Mistake("lower_is_value", "an audit certifies a LOWER bound: the upload's true eps lies somewhere between "
                "{audit_lower:.3g} and the accountant's {accountant_upper:.3g}", value="a"),
        Mistake("contradiction", "an upper bound above a lower bound contradicts nothing: both can be right, and "
                "the true eps lies between them", value="b"),
        Mistake("upper_only", "that argument holds for the upper bounds, which refute only the paper's proof; "
                "but the audit's {audit_lower:.3g} is a lower bound above the claimed eps = 1: it refutes the "
                "guarantee itself", value="d"),
    ),
    hint="which of these numbers is a lower bound, which are upper bounds, and which one is the claim?",
    facts=audit_numbers,
)


EXERCISES = (sigma_eq9, eq8_x, amplified_eps, whole_run, audit)
