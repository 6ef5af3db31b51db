"""The adaptive CLT noise perturbation paper: the claims the chapters judge, their fixed text in one
place.  Each entry is a :class:`fldp.verdicts.Claim`; a chapter records it with its verdict and
measurement.  The run helpers are :mod:`fldp.papers.adaptive_noise.runs`.

No claim is gated on its own evidence: a run of the scheme that collapses is what refutes "ours
converges to regular FL's accuracy" or "ours is stable under dropout", and DP runs that collapse
at small eps are what "DP accuracy rises with eps" predicts; a run that diverged (its uploads not
finite, the engine stops it) is judged on its last finite evaluation, which the chapter says.
Minimum material effects, chosen before the runs were judged: half a point of test accuracy
(orderings), the paper's own tolerances where it states one ("the same accuracy": 1 point; "drops
around 1 %": 2 points), one round for "as fast as".
"""
from __future__ import annotations

from fldp.verdicts import Claim, catalogue

ACC = dict(min_effect=0.005, units="test accuracy, as a fraction")
SAME = dict(min_effect=0.01, units="test accuracy, as a fraction: the claim's tolerance ('the same value')")
REDUCED = ("5 seeds, 10 rounds (the paper: 50+), 5 local epochs, K = 15, 20,000 MNIST images over 100 clients, "
           "a narrowed CNN (8/16 channels, 64 hidden units)")
DP = {"local": "DP as the paper reads it (Sec. 6.2: clients add the noise, S the median update norm of the round)",
      "lagged": "DP with S the median of every update norm of the rounds before (our reading of 'over the course of "
                "training')"}
T1 = "Table 1 (98.26 / 98.08 / 97.1 / 96.92 %; DP eps = 15 / 20 / 30: 86.15 / 93.28 / 96.56 %)"

# -- 03_utility --------------------------------------------------------------------------------------
t1_order = Claim(
    "Table 1: ordering of ours",
    "Regular > ours c = 5 > ours c = 10 > ours c = 15 in final accuracy",
    kind="paper", source=T1, setting="reduced", setting_note=REDUCED,
    falsifier="a consecutive pair in the other order on paired seeds beyond half a point (a larger c more accurate)",
    **ACC)
t1_drop = Claim(
    "Table 1: about 1 % from c = 5 to 15",
    "The accuracy drops by about 1 % (at most 2 points) from c = 5 to c = 15",
    kind="paper", source="Sec. 7.1: 'the training accuracy only drops around 1% as we increase c from 5 to 15'; " + T1,
    setting="reduced", setting_note=REDUCED + "; 'around 1 %' read as at most 2 points",
    falsifier="ours at c = 15 more than 2 points below c = 5 on paired seeds beyond the spread",
    min_effect=0.02, units="test accuracy, as a fraction: the claim's tolerance")
t1_dp_below = {d: Claim(
    f"Table 1: DP eps = 30 below ours c = 15 ({d})",
    "DP at eps = 30 reaches a lower accuracy than ours at c = 15",
    kind="paper", source="Table 1: DP eps = 30 96.56 % against ours c = 15 96.92 %",
    setting="reduced" if d == "local" else "reading", setting_note=f"{REDUCED}; {DP[d]}",
    falsifier="DP more accurate than ours on paired seeds beyond half a point",
    **ACC) for d in DP}
t1_dp_rises = {d: Claim(
    f"Table 1: DP accuracy rises with eps ({d})",
    "DP's accuracy rises with eps (15 < 20 < 30)",
    kind="paper", source="Table 1: DP eps = 15 / 20 / 30: 86.15 / 93.28 / 96.56 %",
    setting="reduced" if d == "local" else "reading", setting_note=f"{REDUCED}; {DP[d]}",
    falsifier="each seed's fitted change of accuracy from eps = 15 to 30 negative beyond half a point",
    **ACC) for d in DP}
fig5_same = Claim(
    "Fig. 5: ours converges to regular FL's accuracy",
    "For every c the global model reaches the same accuracy as regular FL (within 1 point)",
    kind="paper", source="Sec. 7.1 (Fig. 5): 'For all chosen c, the global model converges to the same accuracy as the "
                         "regular FL', in line with Remark 3",
    setting="reduced", setting_note=REDUCED,
    falsifier="some c whose accuracy difference to regular FL has its 95 % interval entirely beyond 1 point on paired "
              "seeds",
    **SAME)
dp_baseline = Claim(
    "Sec. 6.2: the DP baseline is (eps, 1e-5)-DP",
    "The DP baseline (sigma = c_dp S / eps, c_dp = sqrt(2 ln(1.25/delta))) is (eps, 1e-5)-DP for the eps it names, "
    "already for one upload",
    kind="derived", setting="paper",
    falsifier="the accountant's eps of one release (noise multiplier c_dp / eps, sensitivity S) above the eps it is "
              "named after")
fig6_faster = Claim(
    "Fig. 6: smaller p converges faster",
    "A smaller p converges faster (the accuracy a third of the way into training falls as p grows)",
    kind="paper", source="Sec. 7.1 (Fig. 6): 'the FL model converges to the same value, but faster with a smaller p'",
    setting="reduced", setting_note=REDUCED + "; c = 15, p in {2, 0, -2}",
    falsifier="each seed's fitted change of the early accuracy from the smallest to the largest p positive beyond half "
              "a point",
    **ACC)
fig6_same = Claim(
    "Fig. 6: same final accuracy",
    "For every p the model converges to the same value (within 1 point)",
    kind="paper", source="Sec. 7.1 (Fig. 6): 'the FL model converges to the same value'",
    setting="reduced", setting_note=REDUCED + "; c = 15, p in {2, 0, -2}",
    falsifier="some p whose final-accuracy difference to p = 0 has its 95 % interval entirely beyond 1 point",
    **SAME)
fig7_stable = Claim(
    "Fig. 7: ours is stable under dropout",
    "Ours (c = 15) keeps its accuracy (within 1 point) with up to 40 % dropout",
    kind="paper", source="Sec. 7.2 (Fig. 7): 'as the dropout probability increases from 10% to 40%, the global model "
                         "convergence rate and the accuracy of our approach remain similar'",
    setting="reduced", setting_note=REDUCED + "; dropout 20 % and 40 %",
    falsifier="some dropout probability whose accuracy difference to no dropout has its 95 % interval entirely beyond 1 "
              "point",
    **SAME)
fig7_dp_more = Claim(
    "Fig. 7: DP is hurt more",
    "Dropout hurts DP (eps = 30, local) more than ours (c = 15)",
    kind="paper", source="Sec. 7.2 (Fig. 7): 'As for DP, both the global model convergence rate and the accuracy are "
                         "severely impacted'",
    setting="reduced", setting_note=REDUCED + "; " + DP["local"] + "; dropout 20 % and 40 %",
    falsifier="the accuracy lost to the worst dropout larger for ours than for DP on paired seeds beyond half a point",
    **ACC)
fig11_dp_above = Claim(
    "Fig. 11: DP's SNR above ours early",
    "In the first round the DP baseline's uploads have a higher signal-to-noise ratio than ours (c = 15)",
    kind="paper", source="Sec. 7.3.3 (Fig. 11): 'the SNR of DP is high at the beginning of the training and decreases "
                         "as the convergence occurs', drawn above ours at the start",
    setting="reading", setting_note=REDUCED + "; DP eps = 30 under both readings of its clip",
    falsifier="DP's first-round SNR below ours on paired seeds by more than 1 % (paired log ratios)",
    min_effect=0.01, units="SNR, relative (paired log ratio against ln 1.01)")
s74_dp_slower = Claim(
    "Sec. 7.4: DP slower than ours",
    "Ours (c = 15) reaches regular FL's accuracy in fewer rounds than DP (eps = 30, local)",
    kind="paper", source="Sec. 7.4: 'both the FL with our approach and the regular FL converge at epoch 5, but FL with "
                         "DP requires extra epochs to reach a similar global model accuracy'",
    setting="reduced", setting_note=REDUCED + "; 'reached': within 2 points of regular FL's mean final accuracy; a run "
                                              "that never does counts one round more than the run",
    falsifier="DP reaching the accuracy in fewer rounds than ours on paired seeds beyond one round",
    min_effect=1.0, units="rounds")
s74_as_fast = Claim(
    "Sec. 7.4: ours as fast as regular FL",
    "Ours (c = 15) reaches regular FL's accuracy at most one round after regular FL does",
    kind="paper", source="Sec. 7.4: 'both the FL with our approach and the regular FL converge at epoch 5'",
    setting="reduced", setting_note=REDUCED + "; 'reached' as in 'Sec. 7.4: DP slower than ours'",
    falsifier="ours needing more than one round more than regular FL on paired seeds beyond the spread",
    min_effect=1.0, units="rounds: the claim's tolerance")

# -- 04_privacy --------------------------------------------------------------------------------------
#: The membership attack must beat chance on regular FL by this much (per seed's run, a cluster of
#: guesses) before a defence is judged; attack accuracies differ materially by half a point.
POWER = 0.02
ATTACK = dict(min_effect=0.005, units="membership attack accuracy, as a fraction")
REDUCED4 = REDUCED.replace("5 seeds", "3 seeds").replace("a narrowed CNN", "3 attacked clients per run, 10 shadows on 3,000 "
                                                                          "auxiliary images, a narrowed CNN")
t2_leaks = Claim(
    "Table 2: regular FL leaks",
    "Regular FL leaks membership: the attack on its uploads is well above chance, above 60 % (87 % in the paper)",
    kind="paper", source="Sec. 7.3.1 and Table 2: 'regular FL leaks a considerable amount of information ... an attack "
                         "success rate as high as 87%' (87.36 %, F1 0.87)",
    setting="reduced", setting_note=REDUCED4 + "; 'considerable' read as above 60 %",
    falsifier="the attack's accuracy on regular FL's uploads below 60 % on the seeds' runs (95 % interval)",
    min_effect=0.0, units="membership attack accuracy, as a fraction (against 60 %)")
t2_falls = Claim(
    "Table 2: attacks fall from regular to protected",
    "Membership attack accuracy falls from regular FL to every protected run (DP and ours)",
    kind="paper", source="Sec. 7.3.1: 'Both DP and our approach can reduce attack accuracy and the F1 score'; Table 2",
    setting="reduced", setting_note=REDUCED4,
    falsifier="with the attack above chance on regular FL, a protected run whose attack accuracy exceeds regular FL's "
              "on paired seeds beyond half a point",
    **ATTACK)
t2_as_dp = Claim(
    "Table 2: ours c = 10, 15 as effective as DP eps = 20",
    "Ours with c = 10, 15 is as effective against the attack as DP with eps = 20 (within 2 points)",
    kind="paper", source="Sec. 7.3.1: 'Table 2 indicates that our approach with c = 10, 15 is as effective as DP with eps = "
                         "20'",
    setting="reduced", setting_note=REDUCED4 + "; 'as effective' read as within 2 points of attack accuracy",
    falsifier="with the attack above chance on regular FL, a paired attack-accuracy difference to DP eps = 20 with its "
              "95 % interval beyond 2 points",
    min_effect=0.02, units="membership attack accuracy, as a fraction: the claim's tolerance")
t3_acc = Claim(
    "Table 3: larger p, lower accuracy",
    "Increasing p slightly decreases the main accuracy",
    kind="paper", source="Sec. 7.3.1 and Table 3: 'increasing p results in slightly decreased accuracy of the FL model' "
                         "(98.10 % at p = -2 to 94.76 % at p = 2)",
    setting="reduced", setting_note=REDUCED4 + "; c = 15 (the text; Table 3's caption says 20, its numbers are c = 15's)",
    falsifier="each seed's fitted change of the main accuracy from the smallest to the largest p positive beyond half a "
              "point",
    **ACC)
t3_f1 = Claim(
    "Table 3: larger p, lower F1",
    "Increasing p gives greater privacy in terms of the attack's F1",
    kind="paper", source="Sec. 7.3.1 and Table 3: 'but greater privacy protection in terms of the F1 score'",
    setting="reduced", setting_note=REDUCED4 + "; c = 15",
    falsifier="with the attack above chance on regular FL, each seed's fitted change of the attack F1 from the smallest "
              "to the largest p positive beyond 0.01",
    min_effect=0.01, units="attack F1")
s73_matched = Claim(
    "Sec. 7.3: ours as private as DP at the same accuracy",
    "At the same global accuracy ours defends against membership inference as well as DP or better (its attack "
    "accuracy at most 1 point above DP's)",
    kind="paper", source="Abstract: 'DP-comparable or better effectiveness in defending against privacy attacks under "
                         "the same global model accuracy'; Sec. 7.3.1",
    setting="reading", setting_note=REDUCED4 + "; local DP matched by accuracy: the eps of our grid whose accuracy is "
                                               "closest to ours at c = 15 (the precondition, equal accuracy, is "
                                               "measured and named)",
    falsifier="with the attack above chance on regular FL, ours' attack accuracy more than 1 point above the matched "
              "DP's on paired seeds beyond the spread",
    min_effect=0.01, units="membership attack accuracy, as a fraction: the claim's tolerance")
CONTROL = "our control: 50 images per client, 50 local epochs, 5 rounds, shadows on 100 auxiliary images, 5 seeds"
control_power = Claim(
    "Control: the attack has power",
    "In the control the membership attack beats chance on regular FL's uploads by more than 2 points",
    kind="diagnostic", setting="reading", setting_note=CONTROL,
    falsifier="the attack's accuracy on regular FL's uploads below 52 % on the seeds' runs (95 % interval)",
    min_effect=POWER, units="membership attack accuracy, as a fraction (against chance)")


def control_lowers_for(name: str) -> Claim:
    """The control's claim that the protected run ``name`` (e.g. ``"ours c=5"``) lowers the attack."""
    return Claim(f"Control: {name} lowers the attack",
                 f"In the control, {name} lowers the membership attack's accuracy below regular FL's",
                 kind="diagnostic", setting="reading", setting_note=CONTROL,
                 falsifier=f"{name}'s attack accuracy above regular FL's on paired seeds beyond half a point",
                 **ATTACK)


control_lowers = {k: control_lowers_for(k) for k in ("ours c=5", "ours c=15", "DP eps=30", "DP eps=300")}
L1 = dict(min_effect=0.05, units="l1 distance between label proportions")
FIG10 = "the label attack on one full-batch step of 10 clients (attack clients and model unstated), paired over the clients"
fig10_works = Claim(
    "Fig. 10: the attack works on regular FL",
    "The label-composition attack recovers regular FL's label proportions better than a uniform guess, at every alpha "
    "and from either model",
    kind="diagnostic", setting="reading", setting_note=FIG10 + "; from the final and the initial model",
    falsifier="at some alpha, the attack's l1 distance not below a uniform guess's by more than 0.05, paired over the "
              "attacked clients",
    **L1)
fig10_iid = {w: Claim(
    f"Fig. 10: ours beats DP when iid ({w} model)",
    "Ours (c = 15) defends better than DP (eps = 30) as the local data become iid (alpha = inf, 10)",
    kind="paper", source="Sec. 7.3.2 (Fig. 10): 'Our approach is more effective in defending the distribution inference "
                         "attack compared with DP as the local distribution becomes more i.i.d'",
    setting="reading", setting_note=f"{FIG10}; from the {w} model",
    falsifier="with the attack beating a uniform guess on regular FL, ours' l1 distance below DP's by more than 0.05, "
              "paired over the attacked clients",
    **L1) for w in ("final", "round 0")}
fig10_matched = {w: Claim(
    f"Fig. 10: ours vs DP at matched accuracy ({w} model)",
    "Ours defends against the label attack at least as well as DP matched by accuracy (its l1 distance at most 0.05 "
    "below DP's) at every alpha",
    kind="paper", source="Abstract: 'DP-comparable or better effectiveness in defending against privacy attacks under "
                         "the same global model accuracy'; Sec. 7.3.2",
    setting="reading", setting_note=f"{FIG10}; from the {w} model; DP matched by accuracy as in 'Sec. 7.3: ours as "
                                    "private as DP at the same accuracy' (the precondition is measured and named)",
    falsifier="with the attack beating a uniform guess on regular FL, ours' l1 distance more than 0.05 below DP's, "
              "paired over the attacked clients beyond the spread",
    min_effect=0.05, units="l1 distance between label proportions: the claim's tolerance") for w in ("final", "round 0")}

# -- 01_scheme, 02_theory, 05_efficiency ------------------------------------------------------------
fig4_gaussian = Claim(
    "Fig. 4: the angle is Gaussian",
    "The angle between two arbitrary vectors is Gaussian distributed",
    kind="paper", source="Sec. 4.2.2: 'the angular distance between two arbitrary vectors is Gaussian distributed' (Fig. "
                         "4: 2, 10 and 100 dimensions, 10,000 samples)",
    setting="paper",
    falsifier="a KS test against the normal with the exact mean and std rejecting (p < 0.01) in some dimension of Fig. 4")
theorem1_law = Claim(
    "Theorem 1: the aggregate's law",
    "For K > 30, each element of the aggregated noise R is N(0, sum_k (n_k/n)^2 sigma_k^2) (the scheme's noise, with its "
    "direction filter)",
    kind="paper", source="Theorem 1 (Sec. 5): 'For a sufficiently large K, each element in R follows the Gaussian "
                         "distribution N(0, sum_k (n_k/n)^2 sigma_k^2)'; Remark 1: K > 30",
    setting="reading", setting_note="the CNN's layer sizes (McMahan et al.'s widths; the paper gives the layer types "
                                    "only), K = 31 (Remark 1's K > 30; the paper's K is unstated), c = 15, p = 0, every "
                                    "client's update along one fixed direction, norms uniform in [0.5, 1.5], equal weights",
    falsifier="at some layer, the 95 % interval of the mean element along the update (in Theorem 1's std) outside "
              "(-0.1, 0.1), or D'Agostino rejecting an element's normality at 1 % (Bonferroni over the layers)",
    min_effect=0.1, units="Theorem 1's standard deviations: the tolerance on the mean")
remark1_clt = Claim(
    "Remark 1: K > 30 suffices for the CLT",
    "For K > 30 a single client's noise contributes so little that the aggregate of the clients' noises is Gaussian",
    kind="paper", source="Remark 1 (2), Sec. 5: 'For sufficiently large K, that is, K > 30, the contribution of noise on "
                         "a single client to the variance of aggregation of noise is arbitrarily small' (the CLT of "
                         "Theorem 1's proof, Appendix A)",
    setting="reading", setting_note="the proof's noise (no direction filter), the CNN's layer sizes, K = 31, c = 15, one "
                                    "fixed update direction, norms uniform in [0.5, 1.5]",
    falsifier="D'Agostino rejecting normality (1 %, Bonferroni over the layers' tests) of an element of the unfiltered "
              "aggregate at K = 31 in some layer, where the simulation has the power to see the departure the CLT "
              "leaves (its expected excess kurtosis at least twice the test's standard error)")
c_le_K = Claim(
    "Sec. 4.2.1: c <= K",
    "With c <= K (c slightly above K - d with d dropouts) the aggregated noise does not exceed the aggregated update",
    kind="paper", source="Sec. 4.2.1: ||sum_k r_k|| <= ||sum_k Delta w_k||, 'K is a conservative upper bound for c, i.e. "
                         "c <= K'; with d dropouts c slightly above K - d",
    setting="reading", setting_note="one layer, identical update directions (rho = 1, the most favourable), equal norms "
                                    "and weights",
    falsifier="P(||sum r_k|| <= ||sum Delta w_k||) at or below 0.5 at c = K for some K, or at c = K - d + 1 with d "
              "dropouts")
t4_normal_tail = Claim(
    "Table 4: the paper's multiples are the normal tail",
    "Table 4's multiples equal the expected tries 1/Phi(p) of a normally distributed angle at every p",
    kind="diagnostic", setting="paper",
    falsifier="a printed multiple more than 10 % away from 1/Phi(p) at some p")

t5_minor = Claim(
    "Table 5: noise generation is minor",
    "Even at p = -3 noise generation is minor beside local training (0.52 s against 3 s in the paper)",
    kind="paper", source="Sec. 7.4 and Table 5: 'Even for a small p (e.g., p = -3), the time spent generating the noise "
                         "vector is 0.52 s, which is minor compared with the local training time, which is 3 seconds'",
    setting="reading", setting_note="measured on 2 CPU cores, not the paper's Colab GPU machine (the ratio depends on the "
                                    "hardware); the median client, 5 local epochs",
    falsifier="on the paper's GPU hardware, one noise vector at the smallest p taking at least half the local "
              "training's time")

# -- 06_cifar --------------------------------------------------------------------------------------
t6_cifar = Claim(
    "Table 6: CIFAR-10",
    "On CIFAR-10 with ResNet-18 (K = 10) the scheme at c = 10 keeps the model's accuracy near the non-private one "
    "(81.16 % against 82.54 %) while defending against membership and label attacks as well as DP at eps = 100",
    kind="paper", source="Sec. 7.5 and Table 6 (CIFAR-10, ResNet-18): model accuracy 82.54 / 81.16 / 74.30 %, membership "
                         "attack 76.77 / 63.06 / 62.36 %, F1 0.871 / 0.527 / 0.526, label l1 0.023 / 0.101 / 0.099 "
                         "(non-private / ours c = 10 / DP eps = 100)",
    setting="paper",
    falsifier="on CIFAR-10 at the paper's setting, ours more than 2 points below the non-private accuracy, or its attack "
              "accuracy more than 2 points above DP eps = 100's")

#: Every claim of the catalogue by id.
CLAIMS = catalogue({**globals(), **{f"{n}_{d}": c for n, dd in (("t1_dp_below", t1_dp_below), ("t1_dp_rises", t1_dp_rises),
                                                                 ("control_lowers", control_lowers), ("fig10_iid", fig10_iid),
                                                                 ("fig10_matched", fig10_matched))
                                    for d, c in dd.items()}})
