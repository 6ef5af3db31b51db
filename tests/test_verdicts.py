"""fldp.verdicts: each helper holds, fails on a constructed counter-example, and is
inconclusive on a constructed tie; hand-computed intervals."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fldp import verdicts as V

SEEDS5 = np.array([1.0, 2.0, 3.0, 4.0, 5.0])


def test_mean_interval_hand_values():
    m, lo, hi = V.mean_interval(SEEDS5)
    # mean 3, sd 1.5811, se 0.70711, t(0.975, 4) = 2.77645 -> half width 1.96324
    assert m == 3.0 and lo == pytest.approx(1.03676, abs=1e-4) and hi == pytest.approx(4.96324, abs=1e-4)
    assert V.mean_interval([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    assert V.mean_interval([1.5])[1:] == (-math.inf, math.inf)
    with pytest.raises(ValueError, match="finite"):
        V.mean_interval([1.0, float("nan")])


def test_paired_greater_one_rule_both_ways_hand_values():
    base = np.array([0.30, 0.25, 0.41, 0.36, 0.28])
    d = np.array([0.010, 0.012, 0.008, 0.011, 0.009])
    # mean 0.010, sd 0.0015811, se 0.00070711, t(0.975, 4) 2.77645: CI [0.0080368, 0.0119632]
    v = V.paired_greater(base + d, base, min_effect=0.005, labels=("eps 100", "eps 50"))
    assert v.verdict == "holds" and v.stats["n"] == 5 and v.stats["positive"] == 5
    assert v.stats["ci"] == pytest.approx([0.0080368, 0.0119632], abs=1e-6)
    assert v.stats["min_effect"] == 0.005 and "eps 100 > eps 50" in v.why
    # the same interval is not material beyond 0.009: open both ways
    assert V.paired_greater(base + d, base, min_effect=0.009).label == "inconclusive: spread"
    # swapped: the same criterion refutes the claim
    assert V.paired_greater(base, base + d, min_effect=0.005).verdict == "fails"
    assert V.paired_greater(base, base + d, min_effect=0.0085).label == "inconclusive: spread"
    # seeds that disagree are reported, not required: 4 of 5 agree, mean 0.023, CI [0.003565, 0.042435]
    some = np.array([0.03, 0.03, 0.03, 0.03, -0.005])
    h = V.paired_greater(base + some, base, min_effect=0.0)
    assert h.verdict == "holds" and (h.stats["positive"], h.stats["negative"]) == (4, 1)
    assert h.stats["ci"][0] == pytest.approx(0.003565, abs=1e-5)
    assert V.paired_greater(base + some, base, min_effect=0.005).label == "inconclusive: spread"
    assert V.paired_greater(base, base + some, min_effect=0.0).verdict == "fails"  # 9 of 10 can refute and confirm
    # a tiny but consistent difference is not material: a 0.0023 gap cannot decide a claim at 0.005
    assert V.paired_greater(base + 0.0023 + d / 100, base, min_effect=0.005).label == "inconclusive: spread"
    # tie, too few seeds, not finite
    tie = V.paired_greater(base + np.array([0.01, -0.01, 0.02, -0.02, 0.0]), base, min_effect=0.0)
    assert tie.label == "inconclusive: spread"
    few = V.paired_greater(base[:3] + 1.0, base[:3], min_effect=0.0)
    assert few.label == "inconclusive: spread" and "3 paired seed(s) < 5" in few.why
    assert V.paired_greater(base + [np.inf, 0, 0, 0, 0], base, min_effect=0.0).label == "inconclusive: diverged"
    with pytest.raises(ValueError, match="min_effect=-0.1 is out of range"):
        V.paired_greater(base, base, min_effect=-0.1)
    with pytest.raises(TypeError, match="min_effect"):
        V.paired_greater(base, base)  # every claim states its material effect


def test_a_relative_effect_is_judged_on_paired_log_ratios():
    base = np.array([0.40, 0.25, 0.61, 0.36, 0.28])
    up = base * np.exp([0.030, 0.032, 0.028, 0.031, 0.029])     # 3 % larger on every seed
    # log ratios: mean 0.030, CI [0.0280368, 0.0319632] against ln 1.01 = 0.00995 and ln 1.03 = 0.02956
    v = V.paired_greater(up, base, min_effect=0.01, relative=True)
    assert v.verdict == "holds" and v.stats["ci"] == pytest.approx([0.0280368, 0.0319632], abs=1e-6)
    assert V.paired_greater(up, base, min_effect=0.03, relative=True).label == "inconclusive: spread"
    assert V.paired_greater(base, up, min_effect=0.01, relative=True).verdict == "fails"
    # the same absolute gap is material for a small loss and not for a large one
    assert V.paired_greater(base + 0.01 + d5(), base, min_effect=0.01, relative=True).verdict == "holds"
    assert V.paired_greater(base + 100 + 0.01 + d5(), base + 100, min_effect=0.01, relative=True).label == \
        "inconclusive: spread"
    lossy = V.ordering([up, base], ["up", "base"], min_effect=0.01, relative=True)
    assert lossy.verdict == "holds"
    blown = V.paired_greater(np.where(np.arange(5) == 0, np.inf, up), base, min_effect=0.01, relative=True)
    assert blown.label == "inconclusive: diverged"
    with pytest.raises(ValueError, match="every finite value must be > 0"):
        V.paired_greater(base - 0.3, base, min_effect=0.01, relative=True)
    runs = np.stack([base * 1.2, base, base * 1.5], axis=1)
    assert V.best_setting(runs, ["a", "b", "c"], claimed="b", min_effect=0.1, relative=True).verdict == "holds"
    assert V.best_setting(runs, ["a", "b", "c"], claimed="b", min_effect=0.25, relative=True).stats["near_best"] == \
        ["a", "b"]


def d5():
    return np.array([0.0, 0.001, -0.001, 0.0005, -0.0005])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=5, max_size=12), st.floats(0.0, 0.3))
def test_swapping_the_compared_groups_swaps_holds_and_fails(diffs, min_effect):
    a = np.asarray(diffs)
    b = np.zeros_like(a)
    one, other = V.paired_greater(a, b, min_effect=min_effect), V.paired_greater(b, a, min_effect=min_effect)
    swap = {"holds": "fails", "fails": "holds", "inconclusive": "inconclusive"}
    assert other.verdict == swap[one.verdict] and other.reason == one.reason


def test_ordering_needs_every_pair():
    a = np.array([3.0, 3.1, 2.9, 3.2, 3.0])
    b, c = a - 0.5 - SEEDS5 / 100, a - 1.0 - SEEDS5 / 50
    assert V.ordering([a, b, c], ["a", "b", "c"], min_effect=0.1).verdict == "holds"
    assert V.ordering([a, b, c], ["a", "b", "c"], min_effect=0.6).label == "inconclusive: spread"
    failed = V.ordering([a, c, b], ["a", "c", "b"], min_effect=0.1)  # c < b on every seed
    assert failed.verdict == "fails" and "c > b contradicted" in failed.why
    tie = V.ordering([a, b, b + np.array([0.01, -0.01, 0.0, 0.02, -0.02])], ["a", "b", "b'"], min_effect=0.0)
    assert tie.label == "inconclusive: spread" and tie.stats["pairs"]["a > b"]["verdict"] == "holds"
    nan = V.ordering([a, b, c + [np.nan, 0, 0, 0, 0]], ["a", "b", "c"], min_effect=0.0)
    assert nan.label == "inconclusive: diverged"


def test_trend_on_each_seeds_fitted_change():
    x = [10, 20, 50, 100]
    rng = np.random.default_rng(0)
    level = rng.normal(0, 0.3, size=(5, 1))          # each seed its own level: the spread
    falling = level + np.array([0.50, 0.45, 0.40, 0.30]) + rng.normal(0, 0.005, size=(5, 4))
    v = V.trend(x, falling, direction="decreasing", min_effect=0.1)
    assert v.verdict == "holds"
    # the statistic is the slope times the range of x: about 0.2 over x in [10, 100]
    assert v.stats["mean_diff"] == pytest.approx(-np.mean(v.stats["slopes"]) * 90)
    assert 0.18 < v.stats["mean_diff"] < 0.23
    assert V.trend(x, falling, direction="decreasing", min_effect=0.3).label == "inconclusive: spread"
    assert V.trend(x, falling, direction="increasing", min_effect=0.1).verdict == "fails"
    # hand values: two x, seed changes 1, 2, 3, 4, 5 -> mean 3, CI [1.03676, 4.96324]
    two = np.stack([np.zeros(5), SEEDS5], axis=1)
    h = V.trend([0, 1], two, direction="increasing", min_effect=1.0)
    assert h.verdict == "holds" and h.stats["ci"] == pytest.approx([1.03676, 4.96324], abs=1e-4)
    assert V.trend([0, 1], two, direction="increasing", min_effect=1.1).label == "inconclusive: spread"
    tie = level + np.array([[0.1, 0.0, 0.0, 0.1], [0.0, 0.1, 0.1, 0.0], [0.1, 0.0, 0.0, 0.1],
                            [0.0, 0.1, 0.1, 0.0], [0.05, 0.05, 0.05, 0.05]])
    assert V.trend([1, 2, 3, 4], tie, direction="decreasing", min_effect=0.0).label == "inconclusive: spread"
    with pytest.raises(ValueError, match="direction='down'"):
        V.trend(x, falling, direction="down", min_effect=0.0)


def test_best_setting_accounts_for_the_spread():
    T = [5, 10, 20, 50]
    level = np.array([[0.0], [0.2], [-0.1], [0.1], [0.3]])
    clear = level + np.array([0.50, 0.30, 0.40, 0.60]) + SEEDS5[:, None] / 1000
    v = V.best_setting(clear, T, claimed=10, min_effect=0.01)
    assert v.verdict == "holds" and v.stats["near_best"] == [10]
    assert V.best_setting(clear, T, claimed=[20, 50], min_effect=0.01).verdict == "fails"     # counter-example
    # a material effect larger than the gap (0.1 to T = 20) makes 20 near-best
    wide = V.best_setting(clear, T, claimed=10, min_effect=0.15)
    assert wide.label == "inconclusive: spread" and wide.stats["near_best"] == [10, 20]
    # tie: 10 and 20 indistinguishable (paired differences of both signs)
    tied = level + np.array([0.50, 0.30, 0.30, 0.60]) + np.array([[0, 0.01, -0.01, 0]] * 2 + [[0, -0.01, 0.01, 0]] * 2
                                                              + [[0, 0.0, 0.0, 0]])
    t = V.best_setting(tied, T, claimed=10, min_effect=0.0)
    assert t.label == "inconclusive: spread" and sorted(t.stats["near_best"]) == [10, 20]
    assert V.best_setting(tied, T, claimed=[10, 20], min_effect=0.0).verdict == "holds"  # either neighbour of T* = 15
    assert V.best_setting(clear, T, claimed=[10, 20], min_effect=0.0).verdict == "holds"
    ends = level + np.array([0.30, 0.40, 0.50, 0.60])
    assert V.best_setting(ends, T, claimed=[10, 20], min_effect=0.0).verdict == "fails"
    assert V.best_setting(clear[:3], T, claimed=10, min_effect=0.0).label == "inconclusive: spread"
    assert V.best_setting(-clear, T, claimed=10, minimise=False, min_effect=0.0).verdict == "holds"
    blown = clear.copy()
    blown[2, 3] = np.inf
    assert V.best_setting(blown, T, claimed=10, min_effect=0.0).label == "inconclusive: diverged"
    with pytest.raises(ValueError, match="claimed"):
        V.best_setting(clear, T, claimed=7, min_effect=0.0)


def test_equivalent_within_a_margin():
    base = np.array([0.90, 0.88, 0.93, 0.91, 0.89])
    assert V.equivalent(base + 0.001 * SEEDS5 / 5, base, margin=0.01).verdict == "holds"
    assert V.equivalent(base - 0.05 - 0.001 * SEEDS5, base, margin=0.01).verdict == "fails"
    assert V.equivalent(base + np.array([0.02, -0.02, 0.015, -0.015, 0.0]), base, margin=0.01).label == \
        "inconclusive: spread"


def test_not_worse_within_the_claims_margin():
    full = np.array([0.90, 0.88, 0.93, 0.91, 0.89])
    d = np.array([-0.05, -0.06, -0.04, -0.05, -0.05])   # mean -0.05, sd 0.0070711: CI [-0.0587799, -0.0412201]
    v = V.not_worse(full + d, full, margin=0.1, labels=("10 % of the data", "all"))
    assert v.verdict == "holds" and v.stats["ci"] == pytest.approx([-0.0587799, -0.0412201], abs=1e-6)
    assert V.not_worse(full + d, full, margin=0.05).label == "inconclusive: spread"
    assert V.not_worse(full + d, full, margin=0.03).verdict == "fails"
    assert V.not_worse(full + d, full, margin=0.1).stats["mean_diff"] == pytest.approx(-0.05)


def test_power_gates():
    # per-seed attack rates 0.60 .. 0.64 (mean 0.62, sd 0.015811, t 2.77645): CI [0.60037, 0.63963]
    rates = [0.60, 0.61, 0.62, 0.63, 0.64]
    assert V.gate_power(rates, min_effect=0.05) is None                 # above 0.55
    g = V.gate_power(rates, min_effect=0.11)                             # not above 0.61
    assert g.label == "inconclusive: no-power" and g.stats["ci"] == pytest.approx([0.60037, 0.63963], abs=1e-4)
    # an attack at 51 % on average cannot be told from chance: no power to judge a defence
    assert V.gate_power([0.49, 0.53, 0.50, 0.52], min_effect=0.0).reason == "no-power"
    assert V.gate_power([0.9], min_effect=0.0).reason == "no-power"      # one cluster shows nothing
    lo, hi = V.clopper_pearson(620, 1000)
    assert lo == pytest.approx(0.5893, abs=1e-3) and hi == pytest.approx(0.6500, abs=1e-3)
    assert V.gate_diverged({"eps 50": None, "eps 100": False}) is None
    d = V.gate_diverged({"eps 50": 7, "eps 100": None})
    assert d.label == "inconclusive: diverged" and d.stats["diverged"] == ["eps 50"]
    assert V.gate_resolution(60, limit=10.2, what="claimed eps").label == "inconclusive: resolution"
    assert V.gate_resolution(4, limit=10.2, what="claimed eps") is None
    # power first: the comparison is only computed when every gate lets it through
    called = []
    v = V.first(V.gate_diverged({"x": 3}), lambda: called.append(1) or V.holds_if(True))
    assert v.reason == "diverged" and called == []
    assert V.first(None, lambda: V.holds_if(False)).verdict == "fails"
    assert V.not_run("FEMNIST is not on this machine").label == "inconclusive: not-run"


def test_verdict_vocabulary_is_closed():
    with pytest.raises(ValueError, match="verdict='PASS'"):
        V.Verdict("PASS")
    with pytest.raises(ValueError, match="needs a reason"):
        V.Verdict("inconclusive")
    with pytest.raises(ValueError, match="reason='maybe'"):
        V.Verdict("inconclusive", "maybe")
    with pytest.raises(ValueError, match="only an inconclusive verdict"):
        V.Verdict("holds", "spread")


# ------------------------------------------------------------------ one claim over several settings
H, F, S = V.holds_if(True), V.holds_if(False), V.inconclusive("spread", "tie")


def test_grid_neighbours():
    grid = [10, 50, 100, 150, 200, 250, 500]
    assert V.grid_neighbours(grid, 22) == [10, 50]
    assert V.grid_neighbours(grid, 121) == [100, 150]
    assert V.grid_neighbours(grid, 100) == [100]
    assert V.grid_neighbours(grid, 0.7) == [10]
    assert V.grid_neighbours(grid, 100, adjacent=True) == [50, 100, 150]
    assert V.grid_neighbours(grid, 10, adjacent=True) == [10, 50]
    assert V.grid_neighbours(grid, 22, adjacent=True) == [10, 50]
    assert V.grid_neighbours(grid, 900) == [500]
    with pytest.raises(ValueError, match="at least one point"):
        V.grid_neighbours([], 3)


def test_combine_all():
    assert V.combine({"a": H, "b": H}).verdict == "holds"
    assert V.combine({"a": H, "b": F, "c": S}).verdict == "fails"  # a counter-example decides
    tie = V.combine({"a": H, "b": S})
    assert (tie.verdict, tie.reason) == ("inconclusive", "spread")
    assert V.combine({"a": S, "b": V.inconclusive("diverged", "nan")}).reason == "diverged"
    with pytest.raises(ValueError, match="at least one"):
        V.combine({})


def test_combine_most():
    assert V.combine({"a": H, "b": H, "c": F}, how="most").verdict == "holds"
    assert V.combine({"a": F, "b": F, "c": H}, how="most").verdict == "fails"
    assert V.combine({"a": H, "b": F}, how="most").verdict == "fails"  # half fail: not "most cases"
    tie = V.combine({"a": H, "b": S, "c": S}, how="most")
    assert (tie.verdict, tie.reason) == ("inconclusive", "spread")


def test_final_values_keeps_the_seed_order():
    summary = {"loss": {"runs": np.array([[3.0, 2.0], [3.0, 1.0], [3.0, 4.0]])}}
    assert V.final_values(summary, "loss").tolist() == [2.0, 1.0, 4.0]
    assert V.final_values({"acc": {"runs": np.array([0.5, 0.7])}}, "acc").tolist() == [0.5, 0.7]


def _summary(finals):
    return {"loss": {"runs": np.array([[2.3, f] for f in finals])}}


def test_best_of_accounts_for_the_spread():
    rng = np.random.default_rng(0)
    clear = {T: _summary(base + rng.normal(0, 0.01, 6)) for T, base in ((10, 2.0), (50, 1.0), (100, 1.5))}
    assert V.best_of(clear, [50], key="loss", minimise=True, min_effect=0.005).verdict == "holds"
    assert V.best_of(clear, [10, 100], key="loss", minimise=True, min_effect=0.005).verdict == "fails"  # a counter-example
    tie = {10: _summary([1.00, 1.02, 0.98, 1.01, 0.99, 1.00]), 50: _summary([1.01, 0.99, 1.00, 0.98, 1.02, 1.00])}
    assert V.best_of(tie, [50], key="loss", minimise=True, min_effect=0.005).verdict == "inconclusive"  # a constructed tie
    few = {T: _summary([1.0, 1.1, 0.9]) for T in (10, 50)}
    assert V.best_of(few, [50], key="loss", minimise=True, min_effect=0.005).reason == "spread"  # 3 seeds cannot be judged
    assert V.best_of(clear, [], key="loss", minimise=True, min_effect=0.005).reason == "resolution"  # no interior point to claim


def test_negate():
    assert V.negate(H, "not monotone").verdict == "fails"
    assert V.negate(F, "not monotone").verdict == "holds"
    tie = V.negate(S, "not monotone")
    assert (tie.verdict, tie.reason) == ("inconclusive", "spread")




def _acc_summary(finals):
    return {"acc": {"runs": np.array([[0.76, f] for f in finals])}}


def test_best_of_maximises_accuracy_and_accounts_for_the_spread():
    rng = np.random.default_rng(1)
    clear = {Q: _acc_summary(base + rng.normal(0, 0.002, 6)) for Q, base in ((1, 0.80), (5, 0.84), (20, 0.70))}
    assert V.best_of(clear, [5], key="acc", minimise=False, min_effect=0.005).verdict == "holds"
    assert V.best_of(clear, [1, 20], key="acc", minimise=False, min_effect=0.005).verdict == "fails"  # a counter-example
    tie = {1: _acc_summary([0.80, 0.82, 0.78, 0.81, 0.79, 0.80]), 5: _acc_summary([0.81, 0.79, 0.80, 0.78, 0.82, 0.80])}
    assert V.best_of(tie, [5], key="acc", minimise=False, min_effect=0.005).verdict == "inconclusive"  # a constructed tie
    assert V.best_of(clear, [], key="acc", minimise=False, min_effect=0.005).reason == "resolution"  # no interior point to claim
    assert V.final_values(clear[1], "acc").shape == (6,)


def test_combine_any_and_untrained_gate():
    assert V.combine({"a": F, "b": H}, how="any").verdict == "holds"
    assert V.combine({"a": F, "b": F}, how="any").verdict == "fails"
    assert V.combine({"a": F, "b": S}, how="any").label == "inconclusive: spread"
    with pytest.raises(ValueError, match="how='some'"):
        V.combine({"a": H}, how="some")
    # a loss above ln 10 (the uniform predictor's) or an accuracy below 19 % did not train: "untrained"
    u = V.gate_untrained({"eps 1": [2.1, 2.5], "eps 10": [0.3, 0.4]}, floor=np.log(10), higher_is_better=False)
    assert u.label == "inconclusive: untrained" and u.stats["untrained"] == {"eps 1": 2.5}
    assert V.gate_untrained({"a": [0.9, 0.91]}, floor=V.untrained_accuracy(0.1), higher_is_better=True) is None
    assert V.untrained_accuracy(0.1) == pytest.approx(0.19)
    # Adult's majority class (0.764) as the floor: a run at 0.776 trained
    assert V.gate_untrained({"Fig. 1": [0.795, 0.776]}, floor=0.764, higher_is_better=True) is None
    # only numbers that are not finite are "diverged"
    assert V.gate_untrained({"a": [0.9, float("nan")]}, floor=0.19, higher_is_better=True).reason == "diverged"


def test_last_finite_takes_each_seeds_last_good_evaluation():
    curves = [[0.2, 0.5, 0.7], [0.2, 0.6, np.nan], [np.nan, np.nan, np.nan], [0.1, np.inf, np.nan]]
    vals, idx = V.last_finite(curves)
    assert idx.tolist() == [2, 1, -1, 0]
    assert vals[:2].tolist() == [0.7, 0.6] and math.isnan(vals[2]) and vals[3] == 0.1


# -- over_seeds: a run repeated over seeds, summarised (moved here from fldp.repro.results) --------------
def test_over_seeds_curves_hand_values():
    calls = []

    def fn(s):
        calls.append(s)
        return [s, 2 * s, 10]

    r = V.over_seeds(fn, [1, 2, 3])
    assert calls == [1, 2, 3]
    assert set(r) == {"seeds", "runs", "mean", "min", "max", "std"}
    assert all(isinstance(v, np.ndarray) for v in r.values())
    assert r["seeds"].tolist() == [1, 2, 3]
    assert r["runs"].tolist() == [[1, 2, 10], [2, 4, 10], [3, 6, 10]]
    assert r["mean"].tolist() == [2, 4, 10]
    assert r["min"].tolist() == [1, 2, 10] and r["max"].tolist() == [3, 6, 10]
    # population std (ddof=0): [1, 2, 3] -> sqrt(2/3) = 0.8164966; [2, 4, 6] -> sqrt(8/3) = 1.6329932
    assert r["std"] == pytest.approx([0.8164966, 1.6329932, 0.0], abs=1e-7)


def test_over_seeds_scalars_and_single_seed():
    r = V.over_seeds(lambda s: s**2, range(4))  # 0, 1, 4, 9
    assert r["runs"].tolist() == [0, 1, 4, 9]
    assert float(r["mean"]) == 3.5 and float(r["min"]) == 0 and float(r["max"]) == 9
    # deviations from 3.5: 12.25 + 6.25 + 0.25 + 30.25 = 49, / 4 = 12.25, sqrt = 3.5
    assert float(r["std"]) == pytest.approx(3.5, rel=1e-15)
    one = V.over_seeds(lambda s: [1.0, 0.5], [7])
    assert one["runs"].shape == (1, 2) and one["std"].tolist() == [0.0, 0.0]
    assert one["mean"].tolist() == [1.0, 0.5]


def test_over_seeds_dict_of_metrics():
    r = V.over_seeds(lambda s: {"loss": [1.0 / (s + 1), 0.5], "acc": s / 10}, [0, 1])
    assert set(r) == {"seeds", "loss", "acc"}
    assert r["loss"]["runs"].tolist() == [[1.0, 0.5], [0.5, 0.5]]
    assert r["loss"]["mean"].tolist() == [0.75, 0.5]
    assert r["acc"]["runs"].tolist() == [0.0, 0.1]
    assert float(r["acc"]["mean"]) == pytest.approx(0.05) and float(r["acc"]["std"]) == pytest.approx(0.05)


def test_over_seeds_bad_input():
    with pytest.raises(ValueError, match=r"^seeds="):
        V.over_seeds(lambda s: 1.0, [])
    with pytest.raises(ValueError, match="same shape for every seed"):
        V.over_seeds(lambda s: [0.0] * (s + 1), [0, 1])
    with pytest.raises(ValueError, match="same keys"):
        V.over_seeds(lambda s: {"a": 1.0} if s else {"b": 1.0}, [0, 1])
    with pytest.raises(ValueError, match="1-D sequence"):
        V.over_seeds(lambda s: np.zeros((2, 2)), [0, 1])


def test_settled_at_is_the_first_point_from_which_the_curve_stays_near_its_end():
    x = [0, 10, 20, 30, 40]
    assert V.settled_at(x, [0.5, 0.80, 0.812, 0.809, 0.81], tol=0.005) == 20  # 0.80 is 0.01 off
    assert V.settled_at(x, [0.5, 0.80, 0.812, 0.809, 0.81], tol=0.02) == 10
    assert V.settled_at(x, [0.5, 0.6, 0.7, 0.8, 0.9], tol=0.005) is None    # still rising at the end
    assert V.settled_at(x, [0.8, 0.8, 0.8, 0.8, 0.8], tol=0.0) == 0
    assert V.settled_at(x, [0.8, float("nan"), 0.8, 0.8, 0.8], tol=0.01) == 20  # a NaN is never settled
    with pytest.raises(ValueError, match="one value each"):
        V.settled_at(x, [1.0, 2.0], tol=0.1)
