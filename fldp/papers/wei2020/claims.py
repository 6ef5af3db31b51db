"""Wei et al. 2020: how the chapters judge the paper's Remark 5 on Theorem 3's bound (the bound
itself is :func:`fldp.papers.wei2020.theory.theorem3_optimal_K`; this module turns its rows into
:class:`fldp.verdicts.Verdict` s)."""
from __future__ import annotations

from fldp import verdicts as V
from fldp.verdicts import Claim
from fldp.validate import integer, positive

__all__ = ["remark5_verdict", "remark5_verdict_nonvacuous", "remark5_derived"]


def remark5_verdict(*, rows, N):
    """Wei et al. 2020, Remark 5 judged on Theorem 3's bound: "an optimal K in between 0 and N"
    beats K = N.  ``rows`` maps a label (e.g. ``"eps=60, T=200"``) to
    ``{"K_star", "bound", "bound_K_N", "K_min_valid"}`` from :func:`fldp.papers.wei2020.theory.theorem3_optimal_K`
    (``K_min_valid``: the smallest K where the bound exists; ``None`` entries where it exists
    for no K), optionally with ``"K_69"`` (:func:`fldp.papers.wei2020.theory.krandom_K_min`, the (69) edge).  Per row:
    **inconclusive (resolution)** when the bound exists for no K, or when K* is the smallest K
    where it exists (the optimum sits at the edge of Lemma 4's validity / of 0 < Q < 1, where the
    bound stops being defined: the instrument cannot tell a trade-off from the edge of its domain);
    **fails** when the minimum over K is at K = N or does not beat K = N; **holds** when
    K_min_valid < K* < N and bound(K*) < bound(K = N).  A K* within 1 of K_69 is decided like any
    other (the integer grid of K resolves it): it is the K where K-random's server noise sigma_D,K
    reaches 0, the paper's own mechanism, and the verdict says so (``stats["at_K69"]``).
    Overall: fails if a row fails, holds if every row holds, else inconclusive (resolution).
    Returns a :class:`fldp.verdicts.Verdict`.
    """
    N = integer("N", N, 2)
    if not rows:
        raise ValueError("rows is empty: give at least one (eps, T) row of theorem3_optimal_K")
    fails, edge, holds, at_k69 = [], [], [], []
    for label, r in rows.items():
        K, Kmin, b, bN = r.get("K_star"), r.get("K_min_valid"), r.get("bound"), r.get("bound_K_N")
        K69 = r.get("K_69")
        if K is None:
            edge.append(f"{label}: the bound exists for no K")
        elif K == Kmin:
            edge.append(f"{label}: K* = {K} is the smallest K where the bound exists")
        elif K >= N or bN is None or not b < bN:
            fails.append(f"{label}: K* = {K}, bound {b:.6g} vs {'undefined' if bN is None else f'{bN:.6g}'} at K = N")
        else:
            holds.append(label)
            if K69 is not None and abs(K - K69) <= 1:
                at_k69.append(f"{label}: K* = {K}, K_69 = {K69:.4g}")
    stats = {"fails": fails, "edge": edge, "holds": holds, "at_K69": at_k69}
    if fails:
        return V.Verdict("fails", None, "; ".join(fails), stats)
    if edge:
        return V.inconclusive("resolution", f"{len(edge)} of {len(rows)} rows at the edge of validity: " + edge[0],
                              stats=stats)
    kink = f"; in {len(at_k69)} of them K* is within 1 of K_69, where sigma_D,K reaches 0" if at_k69 else ""
    return V.holds_if(True, why=f"an interior K* < N beats K = N in all {len(rows)} rows{kink}", stats=stats)


def remark5_verdict_nonvacuous(*, rows, N, Theta):
    """Wei et al. 2020, Remark 5 judged as :func:`remark5_verdict`, with a power gate: a row (``{"K_star", "bound", "bound_K_N",
    "K_min_valid"}``) whose bound at its best K is already ``>= Theta`` (the optimality gap at
    the start, Wei et al. 2020 eq. (17)/(23) at T = 0) is vacuous: both bounds promise no
    progress, so their ordering says nothing about Remark 5.  Vacuous rows are set aside;
    when every row is vacuous the verdict is ``inconclusive: no-power``, otherwise
    :func:`remark5_verdict` on the rest.  Returns a :class:`fldp.verdicts.Verdict`.
    """
    positive("Theta", Theta)
    if not rows:
        raise ValueError("rows is empty: give at least one (eps, T) row of theorem3_optimal_K")
    vacuous = [k for k, r in rows.items() if r.get("bound") is not None and r["bound"] >= Theta]
    rest = {k: r for k, r in rows.items() if k not in vacuous}
    if not rest:
        lo = min(rows[k]["bound"] for k in vacuous)
        return V.inconclusive("no-power", f"all {len(rows)} rows vacuous: the smallest bound over K is {lo:.6g} "
                                          f">= Theta = {Theta:.6g}, at K* and at K = N alike", stats={"vacuous": vacuous})
    v = remark5_verdict(rows=rest, N=N)
    why = v.why + (f" ({len(vacuous)} vacuous rows, bound >= Theta, set aside)" if vacuous else "")
    return V.Verdict(v.verdict, v.reason, why, {**v.stats, "vacuous": vacuous})


# -- the claims of the theory chapters (notebooks/wei2020/01-04): their fixed text -----------------

SRC_SIGMA = ("Sec. III-A: sigma_U = c Ds_U/eps ensures (eps, delta)-DP for each client in one exposure, sigma_U = c L "
             "Ds_U/eps for L exposures; eps = 50, 60, 100, delta = 0.01 in Sec. VI-A")
CONSTANTS = ("constants estimated from the project's non-private run (lr 0.05, batch 50, 1 local epoch, N = 50; the paper "
             "gives no values); L = 1")
#: The reading of the Theorem 2 bound's claims: the constants and the bound's proximal mu.
CONSTANTS_MU = CONSTANTS + "; the bound's mu = 2 rho B (1 + B/2) (unstated)"
classic_at_paper_eps = Claim(
    "classic_at_paper_eps",
    "classic calibration gives (eps, delta)-DP to one upload (L = 1) at the paper's eps = 50, 60, 100 with delta = 0.01",
    kind="paper", source=SRC_SIGMA, setting="reading",
    setting_note="L = 1 (unstated in Sec. VI); L decides this verdict: at L = T it holds (classic_at_paper_eps_L_T)",
    falsifier="an exact delta at or below 0.01 for the classic sigma at eps = 50, 60 or 100 (equivalently, an eps really "
              "bought at delta = 0.01 no larger than the target)")
classic_at_paper_eps_L_T = Claim(
    "classic_at_paper_eps_L_T",
    "a client's whole run is (eps, delta)-DP at the paper's eps = 50, 60, 100 with delta = 0.01 when its noise multiplier "
    "is cT/eps: its L = T = 25 uploads (sigma_U = c L Ds_U/eps) and the T broadcasts (sigma_A of eq. (16)) alike",
    kind="paper", source=SRC_SIGMA + "; Theorem 1, eq. (10) and (16): (eps, delta)-DP in the downlink with T aggregations",
    setting="reading", setting_note="L = T = 25, the largest L the paper allows (L <= T, Sec. II-B; L unstated in Sec. "
                                    "VI); Ds_D = 2C/(mN) taken as given (notebook 02 tests it)",
    falsifier="an exact delta above 0.01, or an exact eps above the target, of the T composed releases")
lemma1_gd = Claim(
    "lemma1_gd",
    "eq. (5)-(6): with the local solver Sec. III-A states (full batch, run to the argmin of the proximal local objective) "
    "the clipped local model moves by <= 2C/m between neighbouring datasets",
    kind="paper", source="Sec. III-A: 'We assume that the batch size in the local training is equal to the number of "
                         "training samples', eq. (4)-(6) (Ds_U = 2C/m); Algorithm 1, line 6 (argmin of F_i + mu/2 ||w - "
                         "w^(t-1)||^2)",
    setting="reading", setting_note="full-batch gradient descent from w0 until the residual gradient is below a tolerance "
                                    "of the initial one; mu and the step size are unstated; C unstated",
    falsifier="a sampled neighbouring pair whose clipped full-batch-GD models, at a residual below the tolerance, differ by "
              "more than 2C/m")
lemma1_sgd = Claim(
    "lemma1_sgd",
    "eq. (5)-(6) used outside their derivation: with mini-batch SGD as the local solver the clipped local model moves by "
    "<= 2C/m between neighbouring datasets (every SGD regime)",
    kind="derived", setting="reading",
    setting_note="local solver: mini-batch SGD where Sec. III-A states full-batch training to the argmin; C unstated",
    falsifier="a sampled neighbouring pair whose clipped SGD models differ by more than 2C/m")
theorem2_sim_mu = Claim(
    "Theorem 2 at the simulations' mu",
    "the bound exists (0 < P < 1) at the simulations' proximal mu = 0.01",
    kind="diagnostic", setting="reading", setting_note="mu = 0.01 (the simulations' reading; mu unstated); " + CONSTANTS,
    falsifier="estimated constants with rho B (1 + B/2) below the simulations' mu, so that 0 < P < 1 there")
remark4_derived = Claim(
    "Remark 4 [re-derived bound]",
    "the re-derived Theorem 2 bound (d noise coordinates, sigma_A with both branches of (16)) has an informative optimal T "
    "at the simulations' C = 20: S0 < Theta, so that h falls below Theta to an optimum T* >= L sqrt N (eps = 50, 60, 100)",
    kind="derived", setting="reading",
    setting_note="C = 20 (the simulations'), d the MLP's parameters; three readings of lambda1 (D1); " + CONSTANTS_MU,
    falsifier="S0 < Theta, i.e. remark4_C_max above C = 20, for the eps and lambda1 readings")
fig45_setting = Claim(
    "Fig. 4-5 setting",
    "Lemma 4's b exists at the paper's K-random point (N = 50, K = 20, T = 25, eps in {50, 60, 100}), so its sigma_D, its "
    "c (72) and Theorem 3's bound as printed (23) are defined there",
    kind="derived", setting="paper",
    falsifier="(69), eps < -T ln(1 - K/N), holding at K = 20, T = 25 for one of the paper's eps")
theorem3_K_range = Claim(
    "Theorem 3, K range",
    "Theorem 3's bound as printed can exist (alpha_2 of (94) < 0 for some mu) at every K in 1 < K < N = 50",
    kind="derived", setting="reading", setting_note="B the maximum of B(w) over the trajectory (estimated; the paper gives "
                                                    "no value); this reading decides",
    falsifier="an estimated B with B^2 < 2, so that some mu makes alpha_2 < 0 at every K in 1 < K < N")
remark5_printed = Claim(
    "Remark 5 [(23) as printed]",
    "an optimal K < N exists, inside the range where Theorem 3's bound (23) exists, away from its edges, and beats K = N",
    kind="paper", source="Remark 5 (Sec. V): there is an optimal K in between 0 and N; K-random beats all N clients",
    setting="reading", setting_note="(23) as printed (2C = 1, alphas of (95)); T >= 120 (at the paper's T = 25 Lemma 4 "
                                    "admits only K near N); constants of 03; mu unstated; L = 1, m = 1200",
    falsifier="a non-vacuous bound whose minimum over K is at K = N, or a K* < N that does not beat K = N")


#: The readings of the re-derived Theorem 3 bound's alphas (notebooks/wei2020/04_krandom).
REMARK5_VARIANTS = ("re-derived, independence alphas", "re-derived, alphas of (93)")


def remark5_derived(*, variant: str) -> Claim:
    """Remark 5 on the re-derived Theorem 3 bound, one claim per reading of its alphas (``variant``,
    one of :data:`REMARK5_VARIANTS`)."""
    if variant not in REMARK5_VARIANTS:
        raise ValueError(f"variant={variant!r} is out of range: variant must be one of {list(REMARK5_VARIANTS)}")
    return Claim(f"Remark 5 [{variant}]",
                 "on the re-derived Theorem 3 bound (D4: d noise coordinates, sigma_AK with sigma_D,K = 0 where (69) fails) "
                 "an optimal K < N beats K = N",
                 kind="derived", setting="reading",
                 setting_note=f"{variant}; C = 20 (the simulations') and a fraction of the largest C with some K's bound "
                              "below Theta (the informative reading); the alphas reading decides; constants of 03; L = 1, "
                              "m = 1200",
                 falsifier="a non-vacuous row whose minimum over K is at K = N, or whose K* < N does not beat K = N")


# -- the claims of the simulation chapters (notebooks/wei2020/05-08): their fixed text -------------

#: The minimum material effect of the simulation chapters' loss orderings and argmins
#: (``simulations.LOSS_EFFECT``): a final training loss 1 % lower, judged on paired log ratios.
SIM_LOSS = dict(min_effect=0.01, units="final training loss, relative (paired log ratio against ln 1.01)")
SIM_ACC = dict(min_effect=0.005, units="final test accuracy, as a fraction (half a point)")
#: The sentences of the paper (the Remarks and Sec. VI) that the simulation claims cite.
SIM_SOURCES = {
    "eps": "Remark 2 (Sec. IV); Sec. VI-A, Figs. 2-3: 'values of the loss function in NbAFL are decreasing as we "
           "relax the privacy guarantees (increasing eps)'",
    "eps_K": "Sec. VI-A, Figs. 4-5: 'the convergence performance under the K-client random scheduling is improved "
             "with an increasing eps'",
    "N": "Remark 3 (Sec. IV); Sec. VI-B, Figs. 6-7: 'a larger N would achieve a better convergence performance'",
    "T": "Remark 4 (Sec. IV); Sec. VI-C, Fig. 10: 'the value of loss function is a convex function of maximum "
         "aggregation times for a given protection level'",
    "T_K": "Sec. VI-C, Fig. 10: 'K-random scheduling based NbAFL algorithm has a better convergence performance than "
           "the normalized NbAFL algorithm for a larger T'",
    "K": "Remark 5 (Sec. V); Sec. VI-D, Fig. 11: 'an optimal K which further improves the convergence performance "
         "exists for various protection levels'",
    "acc": "Sec. VI-A, Fig. 3: 'in Fig. 3, testing accuracies are also increasing as the privacy parameter reduces'",
    "acc_K": "Sec. VI-A, Fig. 5 (accuracy under K-random scheduling): 'the convergence performance under the K-client "
             "random scheduling is improved with an increasing eps'",
}
#: The falsifier of an ordering judged on paired seeds (``simulations.order_check``).
SIM_ORDER_FALSIFIER = ("a consecutive pair in the wrong order: the setting claimed higher ending more than 1 % "
                       "below the next on paired seeds (the 95 % interval of the mean log ratio)")
#: The setting note of a simulation claim until its chapter records it: ``simulations.record`` replaces
#: it with the reading the runs used (``simulations.reading_note`` and what the chapter adds).
SIM_READING = ("a reading of what Sec. VI leaves out (C, L, mu, the local solver; its lr is 0.002), named with the "
               "seeds when the chapter records the claim")


def _sim_claim(claim_id: str, statement: str, *, source: str, falsifier: str = SIM_ORDER_FALSIFIER) -> Claim:
    return Claim(claim_id, statement, kind="paper", source=source, setting="reading", setting_note=SIM_READING,
                 falsifier=falsifier, **SIM_LOSS)


def sim_eps_order(*, K, order) -> Claim:
    """Remark 2 on Figs. 2-3 (``K=None``: all clients) or Figs. 4-5 (K-random, ``K`` clients a
    round): the final loss falls as eps grows, through ``order`` (the settings' labels, the
    noisiest first, down to the baseline), on paired seeds."""
    sched = "all clients" if K is None else f"K-random, K = {K}"
    return _sim_claim("Remark 2 / Fig. 2" if K is None else "Fig. 4 (K-random)",
                      f"final loss falls as eps grows ({' > '.join(order)}, {sched}) (on paired seeds)",
                      source=SIM_SOURCES["eps" if K is None else "eps_K"])


def sim_eps_acc_order(*, K, order) -> Claim:
    """Fig. 3 (``K=None``: all clients) or Fig. 5 (K-random): the final test accuracy rises as
    eps grows, through ``order`` (the settings' labels, the most accurate first: the noiseless
    baseline, then the largest eps), on paired seeds, half a point apart."""
    sched = "all clients" if K is None else f"K-random, K = {K}"
    return Claim("Fig. 3 (accuracy)" if K is None else "Fig. 5 (K-random, accuracy)",
                 f"final test accuracy rises as eps grows ({' > '.join(order)}, {sched}) (on paired seeds)",
                 kind="paper", source=SIM_SOURCES["acc" if K is None else "acc_K"], setting="reading",
                 setting_note=SIM_READING,
                 falsifier="a consecutive pair in the wrong order: the setting claimed more accurate ending more than "
                           "half a point below the next on paired seeds (the 95 % interval of the mean difference)",
                 **SIM_ACC)


def sim_clients_noise(*, eps) -> Claim:
    """Remark 3's cause, separated from the data: with m samples per client, a larger N adds
    data as well as lowering the noise; the gap to the non-private run of the same N and seed is
    the noise's share, and it must shrink as N grows (eq. (16): the broadcast noise falls with N)."""
    return Claim("Remark 3 (the noise's share)",
                 f"the final test-loss gap to the non-private run of the same N (eps = {eps}) falls as N grows "
                 "(on paired seeds)",
                 kind="derived", source="Remark 3 (Sec. IV) credits a larger N with less noise: eq. (16)'s broadcast "
                                        "noise sqrt(sigma_D^2 + sigma_U^2/N) falls with N at a fixed m",
                 setting="reading", setting_note=SIM_READING,
                 falsifier="a consecutive pair of N in the wrong order of the gap: the larger N's gap more than 0.003 "
                           "above the smaller's on paired seeds (the 95 % interval of the mean difference)",
                 min_effect=0.003, units="test-loss gap to non-private (absolute; about 1 % of a test loss of 0.3)")


def sim_clients_order(*, metric: str, eps) -> Claim:
    """Remark 3 on Figs. 6-7: the final ``metric`` (``"test loss"``; ``"train loss"`` for runs
    stored before the test loss was kept) falls as N grows at ``eps``, on paired seeds."""
    return _sim_claim("Remark 3 / Fig. 6", f"final {metric} falls as N grows (eps = {eps}) (on paired seeds)",
                      source=SIM_SOURCES["N"])


def sim_optimal_T(*, T_first: int, T_last: int) -> Claim:
    """Remark 4 on Fig. 10: an optimal T inside the grid ``T_first`` .. ``T_last`` for every eps
    and schedule (the near-best set of ``fldp.verdicts.best_setting``)."""
    return _sim_claim("Remark 4 / Fig. 10", "final loss vs T has an interior minimum (an optimal T exists) for every "
                      "eps and schedule whose artificial noise grows with T on the grid (Remark 4's trade-off; a "
                      "schedule whose broadcast noise is the same at every T of the grid is reported, not judged)",
                      source=SIM_SOURCES["T"],
                      falsifier="the near-best set of T (the grid points not materially worse than the best on paired "
                                f"seeds) lying only at the grid's ends T = {T_first} or T = {T_last}")


def sim_krandom_T(*, K: int, T: int) -> Claim:
    """Fig. 10: K-random scheduling with ``K`` clients a round beats all clients at the largest
    T of the grid, ``T``."""
    return _sim_claim("Fig. 10 (K-random)", f"K-random (K = {K}) beats NbAFL with all clients at T = {T}",
                      source=SIM_SOURCES["T_K"],
                      falsifier="K-random's final loss at the largest T more than 1 % above all clients' on paired seeds; "
                                "where K-random's calibrated noise is not below all clients', the verdict names that "
                                "precondition")


def sim_optimal_K(*, N: int) -> Claim:
    """Remark 5 on Fig. 11: an optimal K < N (``N`` clients) beats K = N at every eps."""
    return _sim_claim("Remark 5 / Fig. 11", f"an optimal K < N exists and beats K = N = {N} (every eps)",
                      source=SIM_SOURCES["K"],
                      falsifier=f"the near-best set of K on paired seeds holding only K = N = {N} (the verdict names it "
                                "where no K < N carries less calibrated noise than K = N)")


sim_krandom_map = _sim_claim(
    "Remark 5 / Fig. 10-11 (K-random where it acts)",
    "K-random scheduling beats all clients wherever Lemma 4's server noise is on and below all clients' (the mechanism "
    "the paper credits)", source=SIM_SOURCES["T_K"] + "; " + SIM_SOURCES["K"],
    falsifier="in an active cell (sigma_D > 0 under K-random, its broadcast noise below all clients'), K-random's final "
              "loss more than 1 % above all clients' on paired seeds")


def fig9_theorem2(*, constants: str, reading: str, T: int) -> Claim:
    """Theorem 2's bound beside Fig. 9's experiment, informative at the largest T (``T``) for the
    best mu; ``constants`` says where rho, beta, l, B, Theta come from (``"from 03_convergence"``),
    ``reading`` is the runs' reading (``simulations.Reading.label``)."""
    return Claim("Fig. 9 / Theorem 2", "the Theorem 2 bound is informative (below half the initial gap Theta) at the "
                 "largest T for the best mu",
                 kind="derived", source="Theorem 2, eq. (17)-(19), drawn beside the experiment in Fig. 9",
                 setting="reading",
                 setting_note=f"constants rho, beta, l, B, Theta {constants} at {reading}; eps = 60, clipping bound "
                              f"restored (2C), mu* the proximal constant that minimises P, T = {T}",
                 falsifier="the bound at mu* and the largest T at or above half the initial gap Theta, or no bound at "
                           "mu*")


#: What decides Fig. 9's claim (the note it is recorded with).
FIG9_NOTE = "the cause is the constants (P* = 1 - l / (2 rho B (1 + B/2)) close to 1), not the noise"

#: 08_calibrated's variants ("where sensitivity") and what their eps rest on (each claim's note).
HONEST_EPS_NOTE = {
    "uplink 2C/m": "the eps are conditional on the sensitivity 2C/m of eq. (5), which 02_global_dp refutes for "
                   "mini-batch SGD",
    "server 2C/m": "the eps are conditional on the sensitivity 2C/(mN) of Lemma 1, eq. (8), which 02_global_dp refutes "
                   "for mini-batch SGD",
    "uplink 2C": "the eps rest on the sensitivity 2C of uploads clipped to C, which holds for any local solver",
}


def remark2_honest_eps(*, variant: str, target_eps) -> Claim:
    """Remark 2 at whole-run eps the accountant calibrates (08_calibrated), one claim per
    ``variant`` (a key of :data:`HONEST_EPS_NOTE`): the final loss falls as the target eps grows
    through ``target_eps``, down to non-private, on paired seeds.  Its setting note names the
    variant; the chapter adds the run's targets and reading."""
    if variant not in HONEST_EPS_NOTE:
        raise ValueError(f"variant={variant!r} is out of range: variant must be one of {list(HONEST_EPS_NOTE)}")
    where, sens = variant.split()
    return Claim(f"Remark 2 at honest eps ({where} noise" + (", sensitivity 2C)" if sens == "2C" else ")"),
                 f"the final loss falls as the whole-run eps grows ({', '.join(map(str, target_eps))}, non-private) "
                 "(on paired seeds)",
                 kind="paper", source="Remark 2 (Sec. IV): 'By increasing eps, i.e., relaxing the privacy protection "
                                      "level, the performance of NbAFL algorithm will improve'",
                 setting="reading", setting_note=f"the accountant's (PLD) whole-run calibration with the noise on the "
                                                 f"{where} at sensitivity {sens} (not the paper's per-exposure one)",
                 falsifier=SIM_ORDER_FALSIFIER, **SIM_LOSS)
