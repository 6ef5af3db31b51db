"""fldp.verdicts: each helper holds, fails on a constructed counter-example, and is
inconclusive on a constructed tie; hand-computed intervals."""
from __future__ import annotations

import math

import numpy as np
import pytest

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


def test_paired_greater_holds_fails_and_ties():
    base = np.array([0.30, 0.25, 0.41, 0.36, 0.28])
    v = V.paired_greater(base + SEEDS5 / 100, base, labels=("eps 50", "eps 100"))
    assert v.verdict == "holds" and v.stats["n"] == 5 and v.stats["positive"] == 5
    assert v.stats["ci"][0] == pytest.approx(0.0103676, abs=1e-6)
    # counter-example: the claimed larger side is smaller on every seed
    assert V.paired_greater(base, base + SEEDS5 / 100).verdict == "fails"
    # tie: differences of both signs, interval across 0
    tie = V.paired_greater(base + np.array([0.01, -0.01, 0.02, -0.02, 0.0]), base)
    assert tie.verdict == "inconclusive" and tie.reason == "spread"
    # a large, consistent difference on too few seeds stays inconclusive
    few = V.paired_greater(base[:3] + 1.0, base[:3])
    assert few.label == "inconclusive: spread" and "3 paired seed(s) < 5" in few.why
    # pairing matters: the seed-to-seed spread (0.25-0.41) dwarfs the gap, the paired difference does not
    assert V.paired_greater(base + 0.002 + SEEDS5 / 10000, base).verdict == "holds"
    # all positive but the interval reaches 0 (one seed barely positive, large spread): not enough
    assert V.paired_greater(base + np.array([1e-6, 1e-6, 1e-6, 1e-6, 3.0]), base).label == "inconclusive: spread"
    # a diverged run
    assert V.paired_greater(base + [np.inf, 0, 0, 0, 0], base).label == "inconclusive: diverged"


def test_ordering_needs_every_pair():
    a = np.array([3.0, 3.1, 2.9, 3.2, 3.0])
    b, c = a - 0.5 - SEEDS5 / 100, a - 1.0 - SEEDS5 / 50
    assert V.ordering([a, b, c], ["a", "b", "c"]).verdict == "holds"
    failed = V.ordering([a, c, b], ["a", "c", "b"])  # c < b on every seed
    assert failed.verdict == "fails" and "c > b contradicted" in failed.why
    tie = V.ordering([a, b, b + np.array([0.01, -0.01, 0.0, 0.02, -0.02])], ["a", "b", "b'"])
    assert tie.label == "inconclusive: spread" and tie.stats["pairs"]["a > b"]["verdict"] == "holds"


def test_trend_on_per_seed_slopes():
    x = [10, 20, 50, 100]
    rng = np.random.default_rng(0)
    level = rng.normal(0, 0.3, size=(5, 1))          # each seed its own level: the spread
    falling = level + np.array([0.50, 0.45, 0.40, 0.30]) + rng.normal(0, 0.005, size=(5, 4))
    assert V.trend(x, falling, direction="decreasing").verdict == "holds"
    assert V.trend(x, falling, direction="increasing").verdict == "fails"
    tie = level + np.array([[0.1, 0.0, 0.0, 0.1], [0.0, 0.1, 0.1, 0.0], [0.1, 0.0, 0.0, 0.1],
                            [0.0, 0.1, 0.1, 0.0], [0.05, 0.05, 0.05, 0.05]])
    assert V.trend([1, 2, 3, 4], tie, direction="decreasing").label == "inconclusive: spread"
    with pytest.raises(ValueError, match="direction='down'"):
        V.trend(x, falling, direction="down")


def test_best_setting_accounts_for_the_spread():
    T = [5, 10, 20, 50]
    level = np.array([[0.0], [0.2], [-0.1], [0.1], [0.3]])
    clear = level + np.array([0.50, 0.30, 0.40, 0.60]) + SEEDS5[:, None] / 1000
    v = V.best_setting(clear, T, claimed=10)
    assert v.verdict == "holds" and v.stats["near_best"] == [10]
    assert V.best_setting(clear, T, claimed=[20, 50]).verdict == "fails"     # counter-example
    # tie: 10 and 20 indistinguishable (paired differences of both signs)
    tied = level + np.array([0.50, 0.30, 0.30, 0.60]) + np.array([[0, 0.01, -0.01, 0]] * 2 + [[0, -0.01, 0.01, 0]] * 2
                                                              + [[0, 0.0, 0.0, 0]])
    t = V.best_setting(tied, T, claimed=10)
    assert t.label == "inconclusive: spread" and sorted(t.stats["near_best"]) == [10, 20]
    assert V.best_setting(tied, T, claimed=[10, 20]).verdict == "holds"      # "near T* = 15": either neighbour
    # an interior optimum claimed (loss falls then rises): the near-best set must avoid the ends
    assert V.best_setting(clear, T, claimed=[10, 20]).verdict == "holds"
    ends = level + np.array([0.30, 0.40, 0.50, 0.60])
    assert V.best_setting(ends, T, claimed=[10, 20]).verdict == "fails"
    assert V.best_setting(clear[:3], T, claimed=10).label == "inconclusive: spread"
    assert V.best_setting(-clear, T, claimed=10, minimise=False).verdict == "holds"
    with pytest.raises(ValueError, match="claimed"):
        V.best_setting(clear, T, claimed=7)


def test_equivalent_within_a_margin():
    base = np.array([0.90, 0.88, 0.93, 0.91, 0.89])
    assert V.equivalent(base + 0.001 * SEEDS5 / 5, base, margin=0.01).verdict == "holds"
    assert V.equivalent(base - 0.05 - 0.001 * SEEDS5, base, margin=0.01).verdict == "fails"
    assert V.equivalent(base + np.array([0.02, -0.02, 0.015, -0.015, 0.0]), base, margin=0.01).label == \
        "inconclusive: spread"


def test_power_gates():
    # an attack at 51 % over 200 guesses cannot be told from chance: no power to judge a defence
    g = V.gate_power(0.51, trials=200)
    assert g.label == "inconclusive: no-power" and g.stats["ci"][0] < 0.5
    assert V.gate_power(0.62, trials=1000) is None                 # CI [0.589, 0.650] above chance
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
