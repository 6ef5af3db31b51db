"""Exercises on Zhou et al. (FedSGD-DPC): notebooks/zhou/exercises.ipynb.

Each setting below is the one the notebook's exercise cell gives; every answer and every known
wrong answer is computed with :mod:`fldp.papers.zhou.theory`.  The problem constants of
exercises 2-4 are the set that reproduces all twelve MNIST cells of Table I
(``notebooks/zhou/02_laplace``: a fit, not the paper's values, which it does not publish).
"""
from __future__ import annotations

import math

from fldp.teach.exercises.core import Choice, Exercise, Mistake, Number

__all__ = [
    "LAPLACE", "laplace_scale", "FIT", "PROBLEM", "TSTAR", "T_star", "JOINT", "b_star",
    "why_b_star", "GAUSS", "gaussian_b", "EXERCISES"
]


def _th():
    from fldp.papers.zhou import theory

    return theory


# ------------------------------------------------------------------ 1. Theorem 1's Laplace scale
LAPLACE = dict(eps=1.0, b=5, T=50, N=10, d_i=6000, xi1=300.0)


def _scale(**change):
    s = {**LAPLACE, **change}
    return _th().laplace_scale(eps=s["eps"], b=s["b"], T=s["T"], N=s["N"], d_i=s["d_i"], xi1=s["xi1"])


def _replies():
    return {"replies": LAPLACE["b"] * LAPLACE["T"] // LAPLACE["N"], **LAPLACE}


laplace_scale = Exercise(
    id="zhou.laplace_scale",
    title="Theorem 1's Laplace scale for one client's replies",
    kind=Number(rel=0.005),
    solve=lambda: _scale(),
    mistakes=(
        Mistake("T_replies", "this scale composes T = {T} replies; client i is queried only in b T / N = {replies} "
                "of the T iterations", value=lambda: _scale() * LAPLACE["N"] / LAPLACE["b"]),
        Mistake("one_reply", "this is the scale of ONE reply (eps for a single release); client i replies "
                "b T / N = {replies} times over the run, and its eps must cover them all",
                value=lambda: _scale() / (LAPLACE["b"] * LAPLACE["T"] / LAPLACE["N"])),
        Mistake("b_replies", "this composes b = {b} replies (the clients queried per iteration); client i itself "
                "replies b T / N = {replies} times", value=lambda: _scale() / LAPLACE["T"] * LAPLACE["N"]),
        Mistake("half_sensitivity", "you used the l1 sensitivity xi1/d_i; replacing one of client i's d_i samples "
                "moves its average gradient by up to 2 xi1/d_i (both per-sample gradients bounded by xi1)",
                value=lambda: _scale() / 2),
    ),
    hint="Theorem 1: scale 2 b T xi1 / (N d_i eps_i), i.e. the l1 sensitivity 2 xi1/d_i times the b T / N "
         "replies over eps_i (fldp.papers.zhou.theory.laplace_scale)",
    facts=_replies,
)


# ------------------------------------------------------------------ 2. eq. (6): T* for fixed b
FIT = dict(mu=1.0, lam=1.5, G=17.95, Gamma=80.0, Y0=100.0)  # reproduces Table I (02_laplace's fit)
PROBLEM = dict(N=10, p=7840, d=60000, xi1=300.0)
TSTAR = dict(b=5, eps=5.0)


def _T_star(**change):
    s = {**TSTAR, **change}
    return _th().T_star(b=s["b"], eps=s["eps"], **PROBLEM, **FIT)


def _A():
    A1, A2 = _th().laplace_A(b=TSTAR["b"], eps=TSTAR["eps"], G=FIT["G"], lam=FIT["lam"], mu=FIT["mu"],
                             Gamma=FIT["Gamma"], **PROBLEM)
    return A1, A2, _th().gamma_of(mu=FIT["mu"], lam=FIT["lam"])


def _no_y0():
    A1, A2, g = _A()
    return math.sqrt(g * g + A1 / A2) - g


def _no_minus_gamma():
    A1, A2, g = _A()
    return math.sqrt(g * g + (A1 + g * FIT["Y0"]) / A2)


def _rounded(a):
    t = _T_star()
    return a in (math.floor(t), math.ceil(t))


T_star = Exercise(
    id="zhou.T_star",
    title="the number of iterations T* of eq. (6) at b = 5",
    kind=Number(rel=0.001),
    solve=lambda: _T_star(),
    mistakes=(
        Mistake("rounded", "that is T* rounded to a whole number, as Table I prints it; give eq. (6)'s real value",
                when=_rounded, example=lambda: float(round(_T_star()))),
        Mistake("no_gamma_Y0", "you left gamma Y0 out: eq. (6) reads T* = sqrt(gamma^2 + (A1 + gamma Y0)/A2) - gamma",
                value=_no_y0),
        Mistake("no_minus_gamma", "you forgot the final - gamma: T* = sqrt(gamma^2 + (A1 + gamma Y0)/A2) - gamma",
                value=_no_minus_gamma),
        Mistake("b_10", "that is T* at b = 10; the question fixes b = 5", value=lambda: _T_star(b=10)),
        Mistake("b_1", "that is T* at b = 1; the question fixes b = 5", value=lambda: _T_star(b=1)),
    ),
    hint="eq. (6): T* = sqrt(gamma^2 + (A1 + gamma Y0)/A2) - gamma with A1, A2 of Sec. V-B and gamma = 2 lambda/mu "
         "(fldp.papers.zhou.theory.T_star, theory.laplace_A)",
)


# ------------------------------------------------------------------ 3. the joint optimum's b*
JOINT = dict(eps=5.0)


def _C():
    return _th().laplace_C(eps=JOINT["eps"], **PROBLEM, **FIT)


def _optimum():
    return _th().laplace_optimum(**_C()._asdict(), gamma=_th().gamma_of(mu=FIT["mu"], lam=FIT["lam"]), N=PROBLEM["N"])


def _joint_facts():
    C, g = _C(), _th().gamma_of(mu=FIT["mu"], lam=FIT["lam"])
    b50 = _th().b_star(T=50, eps=JOINT["eps"], clamp=False, **PROBLEM, G=FIT["G"])
    return {"C3": C.C3, "threshold": 2 * g * math.sqrt(C.C1 * C.C2), "b50": b50, "N": PROBLEM["N"]}


def _fixed_T(a):
    b50 = _joint_facts()["b50"]
    return a != _optimum().b and (math.isclose(a, b50, rel_tol=0.01) or a in (math.floor(b50), math.ceil(b50)))


b_star = Exercise(
    id="zhou.b_star",
    title="the b* of the joint optimum of U(T, b)",
    kind=Number(abs=1e-9, text="exact (b* is 1, N, or a real number between them)"),
    solve=lambda: _optimum().b,
    mistakes=(
        Mistake("fixed_T", "that is b* = sqrt(B1/B2) = {b50:.3g} for T held at 50 (Table I's b*(T = 50) column, "
                "rounded or not); the joint optimum lets T move too, and min over T of U(T, b) is monotone in b",
                when=_fixed_T, example=lambda: _joint_facts()["b50"]),
        Mistake("b_N", "b* = N (Solution 2) wins only when C3 <= 2 gamma sqrt(C1 C2); here C3 = {C3:.0f} > "
                "{threshold:.0f}", value=lambda: float(PROBLEM["N"])),
        Mistake("interior", "b* is not interior: min over T of U(T, b) is monotone in b, so the joint optimum "
                "is at b = 1 or b = N = {N}", when=lambda a: 1 < a < PROBLEM["N"], example=7.0),
    ),
    hint="compare Sec. V-B's K.K.T. solutions: theory.laplace_C, then theory.laplace_optimum (or "
         "theory.laplace_kkt_solutions)",
    facts=_joint_facts,
)


# ------------------------------------------------------------------ 4. why b* = 1 or N
why_b_star = Exercise(
    id="zhou.why_b_star",
    title="why the joint optimum sits at b = 1 or b = N",
    kind=Choice(("a", "b", "c", "d")),
    solve=lambda: "b",
    mistakes=(
        Mistake("linear", "U is not linear in b: C1/b + C2 b T^2 is convex in b, and for every fixed T its "
                "minimiser sqrt(B1/B2) can be interior", value="a"),
        Mistake("kkt", "b is relaxed to a real number in [1, N] and, for a fixed T, the K.K.T. point in b is "
                "interior (sqrt(B1/B2)); what forces an end point is the monotonicity of min over T of U(T, b)",
                value="c"),
        Mistake("fewer_is_better", "then b* would always be 1; yet b* = N whenever C3 < 2 gamma sqrt(C1 C2) "
                "(e.g. a large G^2/(N-1) makes C3 negative)", value="d"),
    ),
    hint="fix b, minimise over T, and ask how the result depends on b",
)


# ------------------------------------------------------------------ 5. Proposition 2: b does not matter
GAUSS = dict(eps=1.0, delta=1e-5, T=100, N=10, d_i=6000, d=60000, xi2=10.0, c2=1.0, eta=0.05, p=7840)


def _aggregated_variance(b, *, sigma_grows=True, rescale=True):
    """E||w_t^b||^2 of b equal clients, each with Theorem 2's sigma: (N/b)^2 b (d_i/d)^2 eta^2 p sigma^2."""
    g = GAUSS
    sigma = _th().gaussian_sigma(eps=g["eps"], delta=g["delta"], b=b if sigma_grows else 1, T=g["T"], N=g["N"],
                                 d_i=g["d_i"], xi2=g["xi2"], c2=g["c2"])
    weight = (g["N"] / b if rescale else 1.0) * g["d_i"] / g["d"]
    return b * weight**2 * g["eta"] ** 2 * g["p"] * sigma**2


def _ratio(**kw):
    return _aggregated_variance(GAUSS["N"], **kw) / _aggregated_variance(1, **kw)


gaussian_b = Exercise(
    id="zhou.gaussian_b",
    title="how Proposition 2's aggregated Gaussian noise depends on b",
    kind=Number(rel=0.005),
    solve=lambda: _ratio(),
    mistakes=(
        Mistake("laplace", "that is the Laplace mechanism's ratio (Proposition 1: variance proportional to b); under "
                "Theorem 2 the b replies' noise, each of variance sigma_i^2 proportional to b, rescaled by (N/b)^2, "
                "adds up to the same variance whatever b is",
                value=lambda: float(GAUSS["N"])),
        Mistake("sigma_fixed", "you kept sigma_i fixed: Theorem 2's sigma_i^2 grows like b (client i replies "
                "b T / N times)", value=lambda: _ratio(sigma_grows=False)),
        Mistake("no_rescaling", "you left out the server's N/b rescaling of the b replies, w_t^b = (N/b) sum (d_i/d) "
                "eta w_t^i (Proposition 1's aggregate)", value=lambda: _ratio(rescale=False)),
    ),
    hint="E||w_t^b||^2 = (N/b)^2 sum over the b queried clients of (d_i/d)^2 eta^2 p sigma_i^2, with sigma_i "
         "from theory.gaussian_sigma at each b; compare theory.aggregated_gaussian_variance",
)


EXERCISES = (laplace_scale, T_star, b_star, why_b_star, gaussian_b)
