"""Li, Chang & Chi (secure FedAvg): the claims the chapters judge, their fixed text in one place.

Each entry is a :class:`fldp.verdicts.Claim`; a chapter records it with its verdict and measurement.
Clipping and noise are read three ways (``literal``: the mini-batch gradient clipped, eq. (9) with
Lemma 1's Df; ``per-sample``: each sample's gradient clipped; ``accountant``: per-sample clipping
with the noise the accountant needs for one upload).  At b = 1 (Figs. 1-3) a batch is one sample,
so the literal and per-sample readings are the same runs: one claim each, judged once, not twice.
Minimum material effect, chosen before the runs were judged: half a point of test accuracy.
"""
from __future__ import annotations

from fldp.verdicts import Claim, catalogue

ACC = dict(min_effect=0.005, units="test accuracy, as a fraction")
READING = {
    "literal": "the literal reading (the mini-batch gradient clipped; eq. (9) with Lemma 1's Df = 4 Q G eta)",
    "per-sample": "the per-sample reading (each sample's gradient clipped; eq. (9) with Df = 4 G eta (Q - 1 + 1/b))",
    "accountant": "the practitioner's reading (per-sample clipping; the noise with which one upload is (eps, delta)-DP "
                  "by the RDP accountant)",
}
#: The readings of a b = 1 figure: literal and per-sample coincide there.
B1 = {"literal": READING["literal"] + ", which at b = 1 is also the per-sample reading (a batch of one is one sample)",
      "accountant": READING["accountant"]}
CONSTANTS = ("Theorem 1's constants estimated from Adult (mu the smallest Hessian eigenvalue at w*, L from the data's "
             "second moment, the bias unpenalised as the paper writes the model); the paper gives none")

# -- 01_mechanism -----------------------------------------------------------------------------------
eq9 = Claim(
    "eq. (9): each upload (eps, delta)-DP",
    "With eq. (9)'s noise one upload is (eps, delta)-DP at the paper's eps = 0.5, delta = 1e-4 (b = 1, Q in {1, 10})",
    kind="paper", source="Sec. 2.3, eq. (9): 'if one aims to achieve an (eps, delta)-DP for w_{t+1}^k, the required "
                         "noise level can be reduced to' eq. (9)",
    setting="paper",
    falsifier="a simulated audit of one upload (Lemma 1's Df as the canary's shift, eq. (7)'s inclusion probability, "
              "eq. (9)'s noise) certifying an eps above the claimed one at 95 % confidence")

# -- 02_convergence ---------------------------------------------------------------------------------
theorem1_lr = Claim(
    "Theorem 1 covers the experiments",
    "The experiments' step size 0.2/(1 + 0.01 t) is Theorem 1's 2/(mu(alpha + t)) for the problem's mu and kappa",
    kind="derived", setting="reading", setting_note=CONSTANTS,
    falsifier="the problem's mu or kappa more than 50 % away from the mu = 0.1, kappa = 12.5 at which the two schedules "
              "coincide")
theorem1_informative = Claim(
    "Theorem 1 informative",
    "Theorem 1's bound falls below the initial gap F(w0) - F* within the steps tried, at the paper's settings",
    kind="derived", setting="reading", setting_note=CONSTANTS + "; eps = 0.5, b = 1, K in {10, 50}, Q in {1, 10}; "
                                                                "the horizon T is ours",
    falsifier="the bound at the largest T still above the initial gap F(w0) - F* for some split, Q and K")
remark1_Q = Claim(
    "Remark 1: an interior optimal Q",
    "The rounds to accuracy (A + B + C)/Q of Theorem 1 (eq. (12)'s constants) have their minimum at some Q > 1 "
    "(increasing Q first helps, then hurts)",
    kind="paper", source="Remark 1 (Sec. 3): 'increasing Q may benefit the convergence speed, but an over-large Q may "
                         "slow down the algorithm convergence. So there exists an optimal Q'",
    setting="reading", setting_note=CONSTANTS + "; Fig. 3's setting eps = 0.5, K = 10, b = 1",
    falsifier="the minimum over Q of (A + B + C)/Q (eq. (12)) at Q = 1 for some split")

# -- 03_experiments ---------------------------------------------------------------------------------
FIG1 = "the eps grid is ours (Fig. 1 lists none); K = 50, b = 1, iid, the literal reading; rounds and seeds unstated"
fig1_rises = Claim(
    "Fig. 1: accuracy rises with eps",
    "Test accuracy rises with eps (to the non-private run) at Q = 1 and Q = 10",
    kind="paper", source="Sec. 4.2 (Fig. 1): 'the testing accuracy is better for lower protection level (i.e., larger "
                         "eps) and one for the case without DP is the best as expected'",
    setting="reading", setting_note=FIG1,
    falsifier="at Q = 1 or 10, a smaller eps (or a private run) materially more accurate than the next larger eps (or "
              "the non-private run) on paired seeds",
    **ACC)
fig1_close = Claim(
    "Fig. 1: close at Q = 1",
    "The curves for the eps values are closer to each other and to the non-private run at Q = 1 than at Q = 10",
    kind="paper", source="Sec. 4.2 (Fig. 1): 'these results are quite close for Q = 1, while they are quite different "
                         "for Q = 10'",
    setting="reading", setting_note=FIG1,
    falsifier="the largest accuracy gap to the non-private run materially larger at Q = 1 than at Q = 10 on paired "
              "seeds",
    **ACC)
SRC2 = ("Sec. 4.2 (Fig. 2): 'the testing accuracy is better for larger K for the i.i.d. data case, however, it is not "
        "necessarily true for the non-i.i.d. data case'")
fig2_K = {rd: Claim(
    f"Fig. 2: larger K better (iid), {rd}",
    "In the iid case test accuracy rises with K",
    kind="paper", source=SRC2, setting="reading",
    setting_note=f"the K grid is ours (Fig. 2 lists none); eps = 0.5, Q = 10, b = 1; {B1[rd]}",
    falsifier="in the iid case, a smaller K materially more accurate than the next larger K on paired seeds",
    **ACC) for rd in B1}
SRC3 = ("Sec. 4.2 (Fig. 3): 'the testing accuracy is better for smaller Q for the i.i.d. data case, but this does not "
        "apply to the case for the non-i.i.d. data case, implying that there may exist an optimal Q'")
FIG3 = "the Q grid is ours (Fig. 3 lists none); eps = 0.5, K = 10, b = 1"
fig3_iid = {rd: Claim(
    f"Fig. 3: smaller Q better (iid), {rd}",
    "In the iid case test accuracy falls as Q grows",
    kind="paper", source=SRC3, setting="reading", setting_note=f"{FIG3}; {B1[rd]}",
    falsifier="in the iid case, a larger Q materially more accurate than the next smaller Q on paired seeds",
    **ACC) for rd in B1}
fig3_noniid = {rd: Claim(
    f"Fig. 3: intermediate Q (non-iid), {rd}",
    "In the non-iid case the best Q is neither the smallest nor the largest tried",
    kind="paper", source=SRC3, setting="reading",
    setting_note=f"{FIG3}; non-iid: one class per client, clients assigned to classes in proportion; {B1[rd]}",
    falsifier="in the non-iid case, the Q not materially worse than the best all at the ends of the grid",
    **ACC) for rd in B1}
SRC4 = ("Sec. 4.2 (Fig. 4): 'its testing accuracy is better for larger b for the case of Q = 1, but this is reverse for "
        "Q = 10'")
fig4_Q1 = {rd: Claim(
    f"Fig. 4: larger b helps at Q = 1, {rd}",
    "At Q = 1 test accuracy rises with b",
    kind="paper", source=SRC4, setting="reading", setting_note=f"the b grid is ours; eps = 0.5, K = 50, iid; {READING[rd]}",
    falsifier="at Q = 1, a smaller b materially more accurate than the next larger b on paired seeds",
    **ACC) for rd in READING}
fig4_Q10 = {rd: Claim(
    f"Fig. 4: larger b hurts at Q = 10, {rd}",
    "At Q = 10 test accuracy falls as b grows",
    kind="paper", source=SRC4, setting="reading", setting_note=f"the b grid is ours; eps = 0.5, K = 50, iid; {READING[rd]}",
    falsifier="at Q = 10, a larger b materially more accurate than the next smaller b on paired seeds",
    **ACC) for rd in READING}
learns = {rd: Claim(
    f"Figs. 2-4: private runs learn, {rd}",
    "Every private run of Figs. 2-4 at the paper's eps = 0.5 ends more accurate than predicting the majority class, "
    "as the figures' testing-accuracy curves show",
    kind="paper", source="Figs. 2-4 (Sec. 4.2): testing accuracy of Algorithm 1 at eps = 0.5; abstract: 'Experiment "
                         "results are presented to justify the obtained analytical results on the performance of the "
                         "proposed algorithm in terms of testing accuracy'",
    setting="reading", setting_note="each distinct setting once (a setting shared by two figures counted once); " + {
        "literal": B1["literal"] + "; Figs. 2-4",
        "per-sample": READING["per-sample"] + "; Fig. 4's runs with b > 1 only (at b = 1 they are the literal runs)",
        "accountant": READING["accountant"] + "; Figs. 2-4"}[rd],
    falsifier="some run's final accuracy below the majority class's on paired seeds beyond the material effect",
    **ACC) for rd in READING}

#: Every claim of the catalogue by id.
CLAIMS = catalogue({**globals(), **{f"{name}_{rd}": c for name, d in (("fig2_K", fig2_K), ("fig3_iid", fig3_iid),
                                                                      ("fig3_noniid", fig3_noniid), ("fig4_Q1", fig4_Q1),
                                                                      ("fig4_Q10", fig4_Q10), ("learns", learns))
                                   for rd, c in d.items()}})
