"""Shared helpers of the Sec. VI notebooks (05, 07): readings, the paired difference panel,
ordering claims and the spend table, on synthetic summaries (no training)."""
import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from fldp import results  # noqa: E402
from fldp.papers.wei2020 import algorithm as nbafl, simulations as sim  # noqa: E402


def summary(curves):
    runs = np.asarray(curves, dtype=float)
    return {"train_loss": {"runs": runs}, "test_acc": {"runs": 1 - runs}, "rounds": list(range(runs.shape[1]))}


def test_reading_L_is_T_and_range():
    assert sim.Reading(L="T").L_for(30) == 30 and sim.Reading(L=5).L_for(30) == 5
    with pytest.raises(ValueError, match="L"):
        sim.Reading(L=40).L_for(30)
    assert sim.Reading(C=5.0, L="T", lr=0.002, note="x").label == "C = 5, L = T, lr = 0.002 (x)"


def test_curves_difference_panel_is_paired_by_seed():
    base = summary([[2.0, 1.0], [2.0, 3.0]])
    noisy = summary([[2.0, 1.5], [2.0, 3.1]])  # per-seed differences at t=1: 0.5 and 0.1 -> mean 0.3
    fig = sim.curves({None: (base, None), 50: (noisy, None)}, "t", sim.eps_label, baseline=None)
    diff_lines = fig.axes[2].get_lines()
    assert len(fig.axes) == 3 and np.allclose(diff_lines[1].get_ydata(), [0.0, 0.3])
    assert len(sim.curves({50: (noisy, None)}, "t", sim.eps_label).axes) == 2  # no baseline: two panels


def test_order_claim_passes_only_beyond_the_spread():
    rec = results.Recorder("toy", "x", quick=True)
    sim.order_claim(rec, "a", "falls", [[3.0, 3.1], [2.0, 2.2]], ["hi", "lo"])
    sim.order_claim(rec, "b", "falls", [[3.0, 1.9], [2.0, 2.2]], ["hi", "lo"])  # means in order, seeds overlap
    a, b = rec.claims
    assert a["passed"] and not b["passed"] and b["measured"]["in order on the means"] is True
    assert a["measured"]["mean"] == {"hi": 3.05, "lo": 2.1}


def test_spend_table_matches_the_calibration():
    rows = sim.spend_table(sim.Reading(C=20.0, L="T"), delta=0.01, N=50, m=1200,
                           configs=[("Fig. 2", 60, 25, None), ("Fig. 4", 60, 25, 20)])
    cal = nbafl.calibrate(eps=60, delta=0.01, C=20.0, L=25, N=50, T=25, m=1200)
    assert rows[0]["L"] == 25 and rows[0]["true eps at delta=0.01"] == pytest.approx(cal.eps_run)
    c = math.sqrt(2 * math.log(125))
    assert rows[0]["multiplier z"] == pytest.approx(c * 25 / 60)
    assert rows[0]["true eps, K-random amplified"] is None
    assert rows[1]["K"] == 20 and rows[1]["true eps, K-random amplified"] < rows[1]["true eps at delta=0.01"]
