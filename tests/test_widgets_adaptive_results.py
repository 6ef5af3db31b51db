"""The adaptive-noise explorer and the results browser, driven in plain Python (no browser):
every corner of the controls, values checked by hand against the theory (how fast an update
is: benchmarks/widget_bench.py, not a timed test)."""
from __future__ import annotations

import importlib
import itertools
import json
import math

import ipywidgets as W
import numpy as np
import pytest
from scipy import stats

from fldp.papers.adaptive_noise import theory as th
from fldp.teach.widgets._base import row_value
from fldp.repro.paths import PROJECT_ROOT

AN = importlib.import_module("fldp.teach.widgets.adaptive_noise")  # the module (fldp.teach.widgets exports the factory)
RB = importlib.import_module("fldp.teach.widgets.results_browser")


def bounds(w):
    """(min, max) of a slider's values (a log slider's min/max are exponents)."""
    if isinstance(w, W.FloatLogSlider):
        return w.base ** w.min, w.base ** w.max
    return w.min, w.max


# ------------------------------------------------------------------ adaptive noise
@pytest.fixture(scope="module")
def an():
    return AN.adaptive_noise()


@pytest.mark.slow
def test_adaptive_noise_corners(an):
    """All 2^6 min/max corners through the callback; only a range message (dropout) may appear."""
    draw, an.draw = an.draw, None  # the sweep checks compute; drawing is checked on a covering subset below
    try:
        corners = list(itertools.product(*(bounds(w) for w in an.controls.values())))
        assert len(corners) == 64
        for corner in corners:
            values = dict(zip(an.controls, corner))
            state = an.update(**values)
            assert an.error is None, (values, an.error)
            if "error" in state:  # round(0.9 K) = K leaves no client: K <= 5 at dropout 0.9
                assert "dropout" in state["error"] and "out of range" in state["error"], state["error"]
                assert values["dropout"] == 0.9 and values["K"] == 1
    finally:
        an.draw = draw
    # drawn: all-min, all-max, and each control at its max with the others at their min
    lo = {k: bounds(w)[0] for k, w in an.controls.items()}
    hi = {k: bounds(w)[1] for k, w in an.controls.items()}
    for values in [lo, hi] + [{**lo, k: hi[k]} for k in an.controls]:
        state = an.set(**values)
        assert an.error is None, (values, an.error)
        assert "error" in state or len(an.image.value) > 1000


def test_adaptive_noise_values_by_hand(an):
    c, K, q, p, dim, rho = 6.0, 20, 0.2, -1.0, 500, 0.5
    s = an.set(c=c, K=K, dropout=q, p=p, d=dim, rho=rho)
    assert an.error is None and "error" not in s
    k = K - round(q * K)  # 4 expected dropouts
    assert row_value(s, "uploading") == k == 16
    sig_k = c / math.sqrt(dim)
    assert row_value(s, "sigma_client") == pytest.approx(sig_k)
    want = math.sqrt(th.aggregate_noise_variance(weights=[1 / k] * k, sigmas=[sig_k] * k))
    assert row_value(s, "sigma_agg") == pytest.approx(want) == pytest.approx(c / math.sqrt(k * dim))
    assert row_value(s, "noise_to_update") == pytest.approx(c / math.sqrt(k * rho + 1 - rho))
    assert row_value(s, "c_max_paper") == th.paper_max_noise_scale(K=K, dropouts=4) == 16
    assert row_value(s, "c_max_theorem1") == pytest.approx(math.sqrt(16 * 0.5 + 0.5))
    assert row_value(s, "ok_paper") is True and row_value(s, "ok_theorem1") is False
    dim_mc = min(dim, AN.MC_BUDGET // (AN.MC_TRIALS * k))
    assert row_value(s, "descent_mc") == th.descent_probability(c=c, K=K, dim=dim_mc, rho=rho, dropouts=4,
                                                                 trials=AN.MC_TRIALS, seed=0)
    assert row_value(s, "descent_theorem1") == pytest.approx(stats.chi2.cdf(dim * (k * rho + 1 - rho) / c ** 2, dim))
    assert row_value(s, "acceptance") == pytest.approx(th.acceptance_probability(dim=dim, p=p))
    assert row_value(s, "tries") == pytest.approx(1 / row_value(s, "acceptance"))
    assert row_value(s, "theta_thres") == pytest.approx(90 + p * th.angle_moments(dim=dim)[1])
    assert row_value(s, "cost_multiple") == pytest.approx(th.cost_multiple(dims=AN.CNN_DIMS, p=p))
    assert row_value(s, "drift") == pytest.approx(th.filter_drift(dim=dim, p=p, c=c))
    # deterministic Monte Carlo; doubling c doubles every noise std and the noise/update ratio
    again = an.update()
    assert row_value(again, "descent_mc") == row_value(s, "descent_mc")
    s2 = an.set(c=2 * c)
    for key in ("sigma_client", "sigma_agg", "noise_to_update", "drift"):
        assert row_value(s2, key) == pytest.approx(2 * row_value(s, key)), key
    assert row_value(s2, "acceptance") == row_value(s, "acceptance")  # the filter ignores c ("noise" reading)
    # Table 4 at p = 0: twice the plain draw; at c = sqrt(K) (rho = 1) Theorem 1 gives about 1/2
    s3 = an.set(c=math.sqrt(20), K=20, dropout=0.0, p=0.0, d=1000, rho=1.0)
    assert row_value(s3, "cost_multiple") == pytest.approx(2.0, rel=1e-6)
    assert row_value(s3, "descent_theorem1") == pytest.approx(0.5, abs=0.02)


def test_adaptive_noise_range_messages():
    base = dict(c=1.0, K=10, dropout=0.0, p=0.0, d=100, rho=1.0)
    for bad, name in ((dict(d=1), "d"), (dict(p=9.0), "p"), (dict(K=0), "K"), (dict(rho=1.5), "rho"),
                      (dict(c=0.0), "c"), (dict(K=3, dropout=0.9), "dropout")):
        with pytest.raises(ValueError, match=rf"^{name}="):
            AN.compute(**{**base, **bad})


def test_adaptive_noise_redraws_at_its_extremes(an):
    """The defaults, the costliest corner (d = 1e6, p = -3) and the cheapest (d = 2, p = 3): each
    update redraws the figure, and the table shows the values worked out here by hand.  How long
    a redraw takes is measured by benchmarks/widget_bench.py, not asserted here."""
    shown = []
    # 01_scheme's setting: K' = 20, c = 15 > sqrt(20); p = 0 accepts half the draws (Table 4: 2x)
    s = an.set(c=15.0, K=20, dropout=0.0, p=0.0, d=1000, rho=1.0)
    assert an.error is None and "error" not in s
    assert row_value(s, "uploading") == 20
    assert row_value(s, "sigma_client") == pytest.approx(15 / math.sqrt(1000))
    assert row_value(s, "sigma_agg") == pytest.approx(15 / math.sqrt(20 * 1000))
    assert row_value(s, "noise_to_update") == pytest.approx(15 / math.sqrt(20))
    assert (row_value(s, "c_max_paper"), row_value(s, "c_max_theorem1")) == (20, pytest.approx(math.sqrt(20)))
    assert row_value(s, "ok_paper") is True and row_value(s, "ok_theorem1") is False
    assert row_value(s, "descent_theorem1") == pytest.approx(stats.chi2.cdf(1000 * 20 / 15 ** 2, 1000))
    assert row_value(s, "descent_theorem1") < 1e-100
    assert row_value(s, "descent_mc") == 0.0
    assert (row_value(s, "theta_thres"), row_value(s, "acceptance"), row_value(s, "tries")) == (90.0, 0.5, 2.0)
    assert row_value(s, "cost_multiple") == pytest.approx(2.0, rel=1e-12)
    assert any("dim = 250 (not 1000)" in n for n in s["notes"])  # 1e6 / (200 trials x 20 clients)
    shown.append(an.image.value)
    # the costliest corner: 45 of 100 drop, rho = 0, the filter at p = -3 in a 1e6-dim layer
    s = an.set(c=100.0, K=100, dropout=0.45, p=-3.0, d=1e6, rho=0.0)
    assert an.error is None and "error" not in s
    assert row_value(s, "uploading") == 55  # round(45.0) dropouts
    assert row_value(s, "sigma_client") == pytest.approx(0.1)  # 100 / sqrt(1e6)
    assert row_value(s, "sigma_agg") == pytest.approx(0.1 / math.sqrt(55))
    assert row_value(s, "noise_to_update") == pytest.approx(100.0)  # c / sqrt(0 + 1 - 0)
    assert (row_value(s, "c_max_paper"), row_value(s, "c_max_theorem1")) == (55, pytest.approx(1.0))
    assert row_value(s, "ok_paper") is False and row_value(s, "ok_theorem1") is False
    assert row_value(s, "descent_mc") == 0.0 and row_value(s, "descent_theorem1") < 1e-100
    assert row_value(s, "angle_std") == pytest.approx(180 / math.pi / math.sqrt(1e6), rel=1e-5)
    assert row_value(s, "theta_thres") == pytest.approx(90 - 3 * row_value(s, "angle_std"))
    assert row_value(s, "acceptance") == pytest.approx(stats.norm.cdf(-3), rel=1e-3)  # the angle is ~normal
    assert row_value(s, "acceptance") == th.acceptance_probability(dim=1_000_000, p=-3.0)
    assert row_value(s, "tries") == pytest.approx(740.8, abs=0.1)
    assert row_value(s, "cost_multiple") == pytest.approx(th.cost_multiple(dims=AN.CNN_DIMS, p=-3.0))
    assert any("dim = 90 (not 1000000)" in n for n in s["notes"])  # 1e6 / (200 x 55)
    assert any("Binomial(K=100, 0.45)" in n for n in s["notes"])
    shown.append(an.image.value)
    # the cheapest: two clients, c = 0.1, d = 2 (the angle is uniform on [0, 180]), p = 3 accepts all
    s = an.set(c=0.1, K=2, dropout=0.0, p=3.0, d=2, rho=1.0)
    assert an.error is None and "error" not in s and s["notes"] == []
    assert row_value(s, "uploading") == 2
    assert row_value(s, "sigma_client") == pytest.approx(0.1 / math.sqrt(2))
    assert row_value(s, "sigma_agg") == pytest.approx(0.05)
    assert row_value(s, "noise_to_update") == pytest.approx(0.1 / math.sqrt(2))
    assert (row_value(s, "c_max_paper"), row_value(s, "c_max_theorem1")) == (2, pytest.approx(math.sqrt(2)))
    assert row_value(s, "ok_paper") is True and row_value(s, "ok_theorem1") is True
    assert row_value(s, "descent_mc") == 1.0
    assert row_value(s, "descent_theorem1") == pytest.approx(1 - math.exp(-2 * 2 / 0.1 ** 2 / 2))  # chi2_2: 1 - e^(-x/2)
    assert row_value(s, "angle_std") == pytest.approx(180 / math.sqrt(12))
    assert (row_value(s, "theta_thres"), row_value(s, "acceptance"), row_value(s, "tries")) == (180.0, 1.0, 1.0)
    assert row_value(s, "drift") == 0.0  # every direction accepted: no drift along the update
    assert row_value(s, "cost_multiple") == pytest.approx(1 / stats.norm.cdf(3), rel=1e-4)  # the CNN's big layers
    shown.append(an.image.value)
    assert all(img[:4] == b"\x89PNG" and len(img) > 1000 for img in shown)
    assert len(set(shown)) == 3  # every update drew a new figure


# ------------------------------------------------------------------ results browser
DATA = {
    "fig": {"eps = 1": {"rounds": [0, 1, 2], "loss": [[3.0, 2.0, 1.0], [5.0, 4.0, 3.0]], "acc": [0.1, 0.2, 0.3],
                        "eps_run": [1.0, 2.0], "note": "text"},
            "eps = 2": {"rounds": [0, 1, 2], "loss": [[1.0, 1.0, 1.0], [2.0, 2.0, 4.0]]}},
    "sweep": {"T": [10, 20], "bound": [0.5, 0.25], "nested": {"a": [1, 2]}},
    "ragged": {"x": [1, 2, 3], "y": [[1, 2], [1, 2, 3]]},
    "flags": {"rounds": [0, 1], "ok": [True, False]},
    "seeds_only": {"acc": [[1.0, 2.0], [3.0, 5.0]]},
    "scalar": 3.0,
}


def test_find_curves_by_hand():
    found = RB.find_curves(DATA)
    assert list(found) == ["fig / eps = 1 / loss", "fig / eps = 1 / acc", "fig / eps = 2 / loss",
                           "sweep / bound", "sweep / nested / a", "seeds_only / acc"]
    c = found["fig / eps = 1 / loss"]
    assert (c.path, c.metric, c.x_key) == ("fig / eps = 1", "loss", "rounds")
    np.testing.assert_array_equal(c.x, [0, 1, 2])
    np.testing.assert_array_equal(c.y, [[3, 2, 1], [5, 4, 3]])
    np.testing.assert_array_equal(found["fig / eps = 1 / acc"].y, [[0.1, 0.2, 0.3]])
    a = found["sweep / nested / a"]  # inherits the parent's named x
    assert a.x_key == "T"
    np.testing.assert_array_equal(a.x, [10, 20])
    s = found["seeds_only / acc"]  # no x saved: against the index
    assert s.x_key == "index"
    np.testing.assert_array_equal(s.x, [0, 1])
    assert RB.find_curves({}) == {} and RB.find_curves([1, 2]) == {}


@pytest.fixture
def root(tmp_path):
    def write(name, obj):
        path = tmp_path / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    write("paperA/01_run", {"paper": "paperA", "quick": False, "data": DATA})
    write("paperB/02_other", {"paper": "paperB", "quick": True,
                              "data": {"curve": {"K": [1, 2, 4], "err": [[0.3, 0.2, 0.1], [0.5, 0.4, 0.3]]}}})
    write("paperC/03_scalars", {"data": {"a": 1.0}})
    write("paperD/04_broken", "{not json")
    return tmp_path


def test_results_browser_final_values(root):
    ex = RB.results_browser(root)
    assert ex.error is None
    assert ex.controls["experiment"].options == ("paperA/01_run", "paperB/02_other")
    assert ex.values() == {"experiment": "paperA/01_run", "metric": "loss",
                           "curves": ("fig / eps = 1 / loss", "fig / eps = 2 / loss")}
    s = ex.state
    assert row_value(s, "final:fig / eps = 1 / loss") == pytest.approx((1.0 + 3.0) / 2)
    assert row_value(s, "final:fig / eps = 2 / loss") == pytest.approx((1.0 + 4.0) / 2)
    assert len(ex.image.value) > 1000
    s = ex.set(metric=RB.ALL, curves=("sweep / bound", "seeds_only / acc", "fig / eps = 1 / acc"))
    assert row_value(s, "final:sweep / bound") == 0.25
    assert row_value(s, "final:seeds_only / acc") == pytest.approx((2.0 + 5.0) / 2)
    assert row_value(s, "final:fig / eps = 1 / acc") == pytest.approx(0.3)


@pytest.mark.slow
def test_results_browser_switching_never_raises(root):
    ex = RB.results_browser(root)
    ex.controls["experiment"].value = "paperB/02_other"  # as a user would
    assert ex.error is None and "error" not in ex.state
    assert ex.controls["metric"].options == ("err", RB.ALL) and ex.values()["curves"] == ("curve / err",)
    assert row_value(ex.state, "final:curve / err") == pytest.approx(0.2)
    assert any("quick" in n for n in ex.state["notes"])
    ex.controls["experiment"].value = "paperA/01_run"
    assert ex.error is None and ex.values()["metric"] == "loss"
    ex.controls["metric"].value = "acc"  # keeps the selected path that has the new metric
    assert ex.values()["curves"] == ("fig / eps = 1 / acc",) and ex.error is None
    # stale values from another experiment: notes, never an exception
    s = ex.update(experiment="paperB/02_other")
    assert ex.error is None and "error" not in s and s["rows"] == []
    assert any("metric 'acc'" in n for n in s["notes"]) and any("ignored" in n for n in s["notes"])
    for bad in ("paperZ/missing", "paperD/04_broken"):
        s = ex.update(experiment=bad)
        assert ex.error is None and f"experiment={bad!r}" in s["error"]
    s = ex.update(curves=None)
    assert ex.error is None and any("Select" in n for n in s["notes"])
    # corners of each control: every experiment x every metric x (no curve, every curve)
    for exp in ex.controls["experiment"].options:
        ex.set(experiment=exp)
        for metric in ex.controls["metric"].options:
            ex.set(metric=metric)
            for sel in ((), tuple(v for _, v in ex.controls["curves"].options)):
                ex.set(curves=sel)
                assert ex.error is None and "error" not in ex.state, (exp, metric, sel)
                assert len(ex.state["rows"]) == len(sel)


def test_results_browser_empty_root(tmp_path):
    ex = RB.results_browser(tmp_path / "nothing")
    assert ex.error is None and "make reproduce" in ex.state["error"]


@pytest.mark.skipif(not (PROJECT_ROOT / "results" / "wei2020" / "05_simulations.json").exists(),
                    reason="committed results absent")
@pytest.mark.slow
def test_results_browser_committed_results():
    default = RB.results_browser()  # opens where eps visibly matters: the effect regime of 07
    assert default.error is None and default.values()["experiment"] == "wei2020/07_effect_regime"
    assert "fig02_03_eps_effect / eps = 50 / train_loss" in default.values()["curves"]
    ex = RB.results_browser(experiment="wei2020/05_simulations")
    assert ex.error is None
    assert ex.values()["experiment"] == "wei2020/05_simulations" and ex.values()["metric"] == "train_loss"
    assert ex.values()["curves"] == tuple(f"fig02_03_eps / {p} / train_loss" for p in ("non-private", "eps = 50", "eps = 100"))
    raw = json.loads((PROJECT_ROOT / "results/wei2020/05_simulations.json").read_text())["data"]
    want = np.mean([seed[-1] for seed in raw["fig02_03_eps"]["eps = 50"]["train_loss"]])
    assert row_value(ex.state, "final:fig02_03_eps / eps = 50 / train_loss") == pytest.approx(want)
    for exp in ex.controls["experiment"].options:  # every experiment through the dropdown (speed: benchmarks)
        ex.controls["experiment"].value = exp
        assert ex.error is None and "error" not in ex.state, exp
        assert ex.state["rows"], exp
