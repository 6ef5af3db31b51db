"""Zhou et al. (FedSGD-DPC): the claims the chapters judge, their fixed text in one place.

Each entry is a :class:`fldp.verdicts.Claim` (id, statement, kind, the paper's sentence, setting,
falsifier, minimum material effect); a chapter records it with its verdict and measurement,
``rec.claim(claims.fig7_practical["paper"], verdict=..., measured=...)``.  One cause, one claim:
everything that follows from mu = 0 (Assumption 4 fails for the paper's model) is measured under
:data:`assumption4` and :data:`table1_T`; the Laplace noise of the paper and of the accountant differ
only where N does not divide bT (ceil(bT/N) replies), so the Laplace claims judge both readings as
one claim, while the Gaussian readings (eq. (5)'s classic c_2 against the accountant) are two.

Minimum material effects, chosen before the runs were judged: a final training loss 1 % lower
(judged on paired log ratios), half a point of test accuracy (0.005).
"""
from __future__ import annotations

from fldp.verdicts import Claim, catalogue

LOSS = dict(min_effect=0.01, units="final training loss, relative (paired log ratio against ln 1.01)")
ACC = dict(min_effect=0.005, units="test accuracy, as a fraction")
NOISE = {"paper": "the paper's noise (Theorem 1 for Laplace; eq. (5) with c_2 = sqrt(2 ln(1.25/delta)), unstated, "
                  "for Gaussian)",
         "accountant": "noise calibrated by the PLD accountant for the most-queried client's ceil(bT/N) replies, "
                       "not Theorems 1-2"}
MU_READINGS = ("mu = 0 for the paper's model (claim 'Assumption 4 on the paper's model'), so every formula with "
               "gamma = 2 lambda/mu needs a reading of mu: the smallest secant curvature along a non-private FedSGD "
               "trajectory, and, most favourably, its first step alone; lambda, G, Gamma, Y_0 estimated as the "
               "paper's Discussion of Implementation describes (the paper publishes none); unit pixels")

# -- 02_laplace -------------------------------------------------------------------------------------
assumption4 = Claim(
    "Assumption 4 on the paper's model",
    "Assumption 4 holds for the paper's MNIST model (softmax regression with 784 x 10 weights and no bias, "
    "Sec. VII-A1): every client's loss F_i is mu-strongly convex with mu > 0",
    kind="derived", setting="paper",
    falsifier="a direction along which some F_i does not change at all (a strongly convex function changes along "
              "every line), while a comparable direction changes it (the measurement's power)")
table1_T = Claim(
    "Table I (MNIST): T* columns",
    "Table I's T* columns (b = 5, b = 10, b* = 1) follow from eq. (6) at the constants of the paper's model, cell "
    "by cell within 25 % (or within 1 where the paper's value is below 4)",
    kind="paper", source="Table I (Sec. VII-B2): T* and b* for the Laplace mechanism on MNIST, computed by eq. (6) "
                         "and Sec. V-B",
    setting="reading", setting_note=MU_READINGS,
    falsifier="under each reading of mu, a recomputed T* cell off the paper's by more than 25 % (or by more than 1)")
table1_b = Claim(
    "Table I (MNIST): b* column",
    "Table I's b*(T = 50) column follows from the closed-form b* = sqrt(B1/B2) at the data's G, within 25 % (or "
    "within 1); b* does not depend on mu, lambda, Gamma or Y_0",
    kind="paper", source="Table I (Sec. VII-B2), b* of Sec. V-B",
    setting="reading", setting_note="G estimated from the data (the largest client gradient norm along the "
                                    "trajectory, unit pixels; the paper publishes none); b* rounded up, the only "
                                    "rounding with which any constants reproduce the table",
    falsifier="a recomputed b* cell off the paper's by more than 25 % (or by more than 1)")
theorem3_coverage = Claim(
    "Theorem 3 covers the experiments",
    "The experiments' step size lr/(1 + decay t) meets the condition under which Appendix E proves Theorem 3's "
    "rate: written as alpha/(t + gamma'), alpha > 1/mu and eta_0 <= 1/lambda",
    kind="derived", setting="reading",
    setting_note="the decay 0.01 is our reading of 'decays gradually' (Sec. VII-A3); judged at the paper's model "
                 "(mu = 0) and at the two readings of mu of the Table I claim, every one required",
    falsifier="alpha mu <= 1 or eta_0 lambda > 1 at some of the constants")

# -- 03_gaussian ------------------------------------------------------------------------------------
eq5_c2 = Claim(
    "eq. (5) with the classic c_2",
    "eq. (5) with the classic c_2 gives at least the noise the accountant needs for (eps, delta) at the paper's "
    "settings",
    kind="derived", setting="reading",
    setting_note="c_2 = sqrt(2 ln(1.25/delta)) (unstated); Poisson sampling at rate q, add/remove neighbours, PLD "
                 "accountant, judged at the paper's Gaussian T = 100 and eps, b, q, delta, d_i",
    falsifier="a setting where eq. (5)'s sigma is below the accountant's (ratio < 1): the paper's noise then "
              "spends more than its eps")
theorem2_range = Claim(
    "Theorem 2's range",
    "Theorem 2's validity range eps < c_1 q^2 T is the range of the mechanism that eq. (5) calibrates, which "
    "Abadi et al.'s Theorem 1 states for the number of times the mechanism touches one client's data",
    kind="derived", setting="paper",
    falsifier="the c_1 the printed range (T) needs equal to the one the client's bT/N replies need at the paper's "
              "Gaussian settings")

# -- 04_experiments ---------------------------------------------------------------------------------
table1_best = Claim(
    "Fig. 1 / Table I: the paper's T* best",
    "Under Laplace, the paper's (b* = 1, T* of Table I) reaches the lowest final loss among the settings tried "
    "(Fig. 1's baselines and the T grid at b = 1 and 5); Table I's T* may share the optimum with the grid "
    "points on either side of it, which the grid cannot tell apart",
    kind="paper", source="Sec. VII-B1: 'By properly setting b* and T* in FL with DP using our solution, we can "
                         "guarantee that the final loss function is minimized in this experiment for all cases'; "
                         "Table I",
    setting="reduced", setting_note="5 seeds (the paper: 10 repeats); learning-rate decay and unit pixels are "
                                    "readings",
    falsifier="at some eps, a setting whose final loss is lower on paired seeds by more than the material effect, "
              "leaving (1, T*) and its grid neighbours outside the near-best set",
    **LOSS)
falls_then_rises = Claim(
    "Remark I-III: falls then rises",
    "Under Laplace the final loss first falls then rises with T: its minimum lies inside the grid",
    kind="paper", source="Remarks II-III (Sec. V-A): Y_T diverges like O(1/T + T); there exist optimal b and T",
    setting="reduced", setting_note="5 seeds (the paper: 10 repeats); the paper's T grid plus Table I's T*(b* = 1), "
                                    "b in {1, 5}; posed where Table I's T* lies inside the grid",
    falsifier="at some posed (eps, b), the best T at an end of the grid with every interior T materially worse on "
              "paired seeds",
    **LOSS)
footnote5 = Claim(
    "footnote 5: b* = 1 (T grid)",
    "Under Laplace b = 1 gives a lower final loss than a larger b in most settings",
    kind="paper", source="footnote 5 (Sec. V-B): 'According to our experiments results, solution 1 with b* = 1 is "
                         "the optimal solution in most cases'",
    setting="reduced", setting_note="5 seeds (the paper: 10 repeats); b = 1 against b = 5 at every (eps, T) of the "
                                    "grid (b = N = 10 is not on the grid)",
    falsifier="b = 5 reaching a materially lower final loss than b = 1 on paired seeds at half of the (eps, T) "
              "settings or more",
    **LOSS)
fig3_laplace = Claim(
    "Fig. 3 Laplace, Table I T*",
    "Under Laplace the final loss is higher for larger b (lowest at b = 1), each b at Table I's T*(b)",
    kind="paper", source="Sec. VII-B2 (Fig. 3): 'For the Laplace mechanism, the loss function is higher and the "
                         "model accuracy is lower if b is bigger'",
    setting="reading", setting_note="each b at Table I's T*(b); both noises (the paper's Theorem 1 and the "
                                    "accountant's, which differ only where N does not divide bT), every one required; "
                                    "5 seeds, the paper 10",
    falsifier="at some eps and noise, a pair of b in the wrong order on paired seeds beyond the material effect",
    **LOSS)
fig3_laplace_ours = Claim(
    "Fig. 3 Laplace, ours T*",
    "Under Laplace the final loss is higher for larger b (lowest at b = 1), each b at the T*(b) eq. (6) gives at "
    "the estimated constants",
    kind="paper", source="Sec. VII-B2 (Fig. 3): 'For the Laplace mechanism, the loss function is higher and the "
                         "model accuracy is lower if b is bigger'",
    setting="reading", setting_note="T*(b) from 02_laplace's constants (secant mu), not Table I's: one or two rounds "
                                    "for b = 5 and 10; both noises",
    falsifier="at some eps, a pair of b in the wrong order on paired seeds beyond the material effect, with every "
              "compared run trained for more than two rounds (shorter runs cannot show an effect of b on training)",
    **LOSS)
fig3_gaussian = {rule: Claim(
    f"Fig. 3 Gaussian, {rule} noise",
    "Under Gaussian the final loss is lower for larger b (lowest at b = 10)",
    kind="paper", source="Sec. VII-B2 (Fig. 3): 'the loss function is smaller and the model accuracy is higher if we "
                         "set a larger b under the Gaussian mechanism'",
    setting="reading", setting_note=f"T = 100 (the paper's); {NOISE[rule]}; 10 seeds, the paper 10",
    falsifier="at some eps, a pair of b in the wrong order on paired seeds beyond the material effect",
    **LOSS) for rule in NOISE}
fig3_laplace_acc = Claim(
    "Fig. 3 Laplace accuracy, Table I T*",
    "Under Laplace the test accuracy is lower for larger b (highest at b = 1), each b at Table I's T*(b)",
    kind="paper", source="Sec. VII-B2 (Fig. 3): 'For the Laplace mechanism, the loss function is higher and the "
                         "model accuracy is lower if b is bigger'",
    setting="reading", setting_note="each b at Table I's T*(b); both noises, every one required; 5 seeds, the paper 10; "
                                    "the same runs as the loss claim, judged on their final test accuracy",
    falsifier="at some eps and noise, a pair of b in the wrong order of accuracy on paired seeds beyond the material "
              "effect",
    **ACC)
fig3_gaussian_acc = {rule: Claim(
    f"Fig. 3 Gaussian accuracy, {rule} noise",
    "Under Gaussian the test accuracy is higher for larger b (highest at b = 10)",
    kind="paper", source="Sec. VII-B2 (Fig. 3): 'the loss function is smaller and the model accuracy is higher if we "
                         "set a larger b under the Gaussian mechanism'",
    setting="reading", setting_note=f"T = 100 (the paper's); {NOISE[rule]}; 10 seeds, the paper 10; the same runs as "
                                    "the loss claim, judged on their final test accuracy",
    falsifier="at some eps, a pair of b in the wrong order of accuracy on paired seeds beyond the material effect",
    **ACC) for rule in NOISE}
theorem4_T = {rule: Claim(
    f"Theorem 4: T large, {rule} noise",
    "Under Gaussian (b = N) the final loss keeps falling as T grows: the largest T is best",
    kind="paper", source="Sec. VI-B, Solution 1: 'we should set T as large as possible for FL with the Gaussian "
                         "mechanism'",
    setting="reading", setting_note=f"T in {{10, 50, 100, 200}} (our grid); {NOISE[rule]}; 10 seeds, the paper 10",
    falsifier="at some eps, a smaller T reaching a materially lower final loss on paired seeds, leaving the largest T "
              "outside the near-best set",
    **LOSS) for rule in NOISE}
FIG7_SOURCE = ("Sec. VII-B4 (Fig. 7): 'the model accuracy of FL with the Gaussian mechanism is very high even when the "
               "privacy budget is very small and only a small fraction of samples are used'")
fig7_practical = {rule: Claim(
    f"Fig. 7: Gaussian practical, {rule} noise",
    "At the smallest budget and data fraction (eps 0.1 against Laplace's eps 1, 10 % of the data) the Gaussian "
    "mechanism is more accurate than Laplace",
    kind="paper", source=FIG7_SOURCE,
    setting="reading", setting_note=f"Laplace at (b = 1, Table I's T*(b* = 1)), Gaussian at (b = N, T = 100); "
                                    f"{NOISE[rule]}; paired on the first 5 of the Gaussian runs' 10 seeds",
    falsifier="Laplace's accuracy above the Gaussian one on paired seeds beyond the material effect",
    **ACC) for rule in NOISE}
fig7_high = {rule: Claim(
    f"Fig. 7: Gaussian high with little data, {rule} noise",
    "At eps = 0.1 the Gaussian mechanism's accuracy with 10 % of the data is within 0.1 of its accuracy with all "
    "of it ('very high even when ... only a small fraction of samples are used')",
    kind="paper", source=FIG7_SOURCE,
    setting="reading", setting_note=f"b = N, T = 100; {NOISE[rule]}; 10 seeds; the margin 0.1 is our reading of "
                                    "'very high' against the full-data run",
    falsifier="the accuracy with 10 % of the data more than 0.1 below the full-data accuracy on paired seeds, "
              "beyond the spread",
    min_effect=0.1, units="test accuracy, as a fraction: the claim's own tolerance") for rule in NOISE}
fig7_monotone = Claim(
    "Fig. 7: monotone",
    "Accuracy is lower with a smaller budget and a smaller fraction of data (Laplace, largest against smallest)",
    kind="paper", source="Sec. VII-B4 (Fig. 7): 'The model accuracy is lower if the privacy budget is smaller or the "
                         "portion of used data samples is smaller'",
    setting="reduced", setting_note="both noises, every one required; 5 seeds (the paper: 10 repeats); the largest "
                                    "(eps, fraction) against the smallest only",
    falsifier="the Laplace accuracy at the largest budget and fraction not above the one at the smallest on paired "
              "seeds beyond the material effect",
    **ACC)

#: Every claim of the catalogue by id.
CLAIMS = catalogue({**globals(), **{f"fig3_gaussian_{k}": v for k, v in fig3_gaussian.items()},
                    **{f"fig3_gaussian_acc_{k}": v for k, v in fig3_gaussian_acc.items()},
                    **{f"theorem4_T_{k}": v for k, v in theorem4_T.items()},
                    **{f"fig7_practical_{k}": v for k, v in fig7_practical.items()},
                    **{f"fig7_high_{k}": v for k, v in fig7_high.items()}})
