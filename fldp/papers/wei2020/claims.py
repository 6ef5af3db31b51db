"""Wei et al. 2020: how the chapters judge the paper's Remark 5 on Theorem 3's bound (the bound
itself is :func:`fldp.papers.wei2020.theory.theorem3_optimal_K`; this module turns its rows into
:class:`fldp.verdicts.Verdict` s)."""
from __future__ import annotations

from fldp import verdicts as V
from fldp.validate import integer, positive

__all__ = ["remark5_verdict", "remark5_verdict_nonvacuous"]


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
