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
    setting_note="C = 20 (the simulations'), d the MLP's parameters; three readings of lambda1 (D1); " + CONSTANTS
                 + "; the bound's mu = 2 rho B (1 + B/2) (unstated)",
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
