"""The NbAFL explorer and the explorer framework, driven in plain Python (no browser).

Values are checked against hand-computed numbers (Wei et al. 2020, Sec. III and Theorem 1 at
Sec. VI's setting) and against the package's own functions; every corner of the controls'
ranges must give either a result or a range message, never an internal error.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from fldp.papers.wei2020 import theory as th
from fldp.teach.widgets import _base, wei2020 as nb
from fldp.teach.widgets import wei2020_explorer, row_value


@pytest.fixture(scope="module")
def ex():
    return wei2020_explorer()


def test_defaults_are_sec_vi_and_match_hand_computed_noise(ex):
    s = ex.update()
    assert ex.error is None and "error" not in s
    c = math.sqrt(2 * math.log(1.25 / 0.01))  # 3.10751
    assert row_value(s, "c") == pytest.approx(3.107511, rel=1e-6)
    # sigma_U = 2 c L C / (m eps) = 2 * 3.10751 * 20 / (1200 * 60)
    assert row_value(s, "sigma_U") == pytest.approx(2 * c * 20 / (1200 * 60), rel=1e-12)
    assert row_value(s, "sigma_U") == pytest.approx(1.72640e-3, rel=1e-5)
    # sigma_D = 2 c C sqrt(T^2 - L^2 N) / (m N eps) = 2 c 20 sqrt(575) / (1200 * 50 * 60)
    assert row_value(s, "sigma_D") == pytest.approx(8.27950e-4, rel=1e-5)
    assert row_value(s, "sigma_A") == pytest.approx(math.hypot(8.27950e-4, 1.72640e-3 / math.sqrt(50)), rel=1e-5)
    assert row_value(s, "threshold") == pytest.approx(math.sqrt(50))
    assert row_value(s, "server_noise") is True
    # the classic sigma at eps = 60 is no guarantee: exact delta ~ 1, it buys eps 230.4 (01_preliminaries)
    assert row_value(s, "true_delta") > 0.99
    assert row_value(s, "eps_bought") == pytest.approx(230.4, abs=0.05)
    assert row_value(s, "sigma_U_exact") / row_value(s, "sigma_U") == pytest.approx(2.157, abs=0.002)
    # K = 20 < N: Lemma 4's b is undefined at T = 25 (eq. (69) needs T > 117.5), so sigma_D = 0
    assert row_value(s, "eq69") is False and row_value(s, "sigma_D_K") == 0.0
    assert any("eq. (69)" in n for n in s["notes"])
    assert row_value(s, "eps_run") == pytest.approx(4883.6, rel=1e-3)  # 05's spend table


def test_moving_eps_rescales_the_noise_as_one_over_eps(ex):
    s60 = ex.set(eps=60.0)
    u60, d60 = row_value(s60, "sigma_U"), row_value(s60, "sigma_D")
    s10 = ex.set(eps=10.0)
    assert row_value(s10, "sigma_U") == pytest.approx(6 * u60, rel=1e-9)
    assert row_value(s10, "sigma_D") == pytest.approx(6 * d60, rel=1e-9)
    assert row_value(s10, "eps_run") < row_value(s60, "eps_run")
    ex.set(eps=60.0)


def test_below_the_switch_the_server_adds_nothing(ex):
    s = ex.set(T=7)  # 7 < sqrt(50) = 7.07
    assert row_value(s, "server_noise") is False and row_value(s, "sigma_D") == 0.0
    assert row_value(s, "sigma_A") == pytest.approx(row_value(s, "sigma_U") / math.sqrt(50))
    ex.set(T=25)


def test_krandom_rows_follow_lemma4(ex):
    s = ex.set(T=300)
    c = th.gaussian_c(delta=0.01)
    assert row_value(s, "eq69") is True
    assert row_value(s, "b") == pytest.approx(th.krandom_b(eps=60.0, T=300, N=50, K=20))
    assert row_value(s, "sigma_D_K") == pytest.approx(
        th.sigma_downlink_krandom(C=20.0, m=1200, N=50, K=20, T=300, L=1, eps=60.0, c=c))
    s = ex.set(K=50)  # K = N: no K-random rows
    with pytest.raises(KeyError):
        row_value(s, "sigma_D_K")
    ex.set(T=25, K=20)


@pytest.mark.parametrize("bad, words", [({"K": 60}, ("K=60", "N=50")), ({"L": 30}, ("L=30", "T=25"))])
def test_out_of_range_combinations_show_a_message(ex, bad, words):
    s = ex.set(**bad)
    assert ex.error is None
    assert all(w in s["error"] for w in words), s["error"]
    assert all(w in ex.message.value for w in words)
    ex.set(K=20, L=1)
    assert "error" not in ex.state


@pytest.mark.slow
def test_every_corner_of_the_ranges_gives_a_result_or_a_message():
    """Corners of eps, N, K, T, L (the others at both ends one at a time), computed as the
    callback does; no internal error anywhere, and every in-range corner draws."""
    const = nb.constants()
    lo_hi = {"eps": (0.1, 200.0), "delta": (1e-8, 0.1), "N": (2, 200), "K": (1, 200), "T": (1, 500),
             "L": (1, 500), "C": (0.1, 50.0), "m": (10, 6000)}
    base = dict(eps=60.0, delta=0.01, N=50, K=20, T=25, L=1, C=20.0, m=1200)
    cases = [dict(base, **dict(zip(("eps", "N", "K", "T", "L"), v)))
             for v in itertools.product(*(lo_hi[k] for k in ("eps", "N", "K", "T", "L")))]
    cases += [dict(base, **{k: v}) for k, pair in lo_hi.items() for v in pair]
    drawn = 0
    for case in cases:
        try:
            state = nb.compute(**case, const=const)
        except ValueError as exc:
            assert ("K=" in str(exc) and case["K"] > case["N"]) or ("L=" in str(exc) and case["L"] > case["T"]), (case, exc)
            continue
        assert np.isfinite(row_value(state, "sigma_U")) and row_value(state, "sigma_U") > 0, case
        if drawn < 6:  # drawing is the slow part: a few corners suffice to catch a drawing bug
            assert _base.figure_png(nb.draw, state)[:4] == b"\x89PNG"
            drawn += 1


def test_an_update_redraws(ex):
    before = ex.image.value
    ex.set(eps=30.0)
    assert ex.image.value != before and ex.image.value[:4] == b"\x89PNG"
    assert ex.seconds > 0  # recorded for the explorer's status line (how fast: benchmarks, not a timed test)
    ex.set(eps=60.0)


def test_table_cells_carry_machine_keys_for_the_browser():
    html = _base.table_html([_base.Row("sigma", "sigma_U", 1.72640e-3, "note <b>")])
    assert 'data-key="sigma_U"' in html and ">0.001726<" in html and _base.fmt(5.17923e-4) == "5.1792e-04" and "&lt;b&gt;" in html
    assert _base.fmt(0.5) == "0.5" and _base.fmt(12345.678) == "1.235e+04" and _base.fmt(float("nan")) == "undefined"
    assert _base.fmt(True) == "yes" and _base.fmt(None) == "--" and _base.fmt(1234) == "1,234"


def test_a_bug_in_compute_is_shown_and_kept_not_raised():
    import ipywidgets as W

    def compute(*, x):
        if x > 1:
            raise ZeroDivisionError("boom")
        if x < 0:
            raise ValueError("x must be >= 0")
        return {"rows": [_base.Row("x", "x", x)]}

    e = _base.Explorer("t", "test", {"x": W.FloatSlider(value=0.5, min=-1, max=2)}, compute)
    assert e.error is None and row_value(e.state, "x") == 0.5
    e.set(x=-0.5)
    assert e.error is None and e.state["error"] == "x must be >= 0"
    e.set(x=1.5)
    assert e.error == "ZeroDivisionError: boom" and "internal error" in e.message.value
    with pytest.raises(KeyError, match="no control"):
        e.set(y=1)


def test_a_zero_eps_bought_says_what_it_means():
    """Under very large noise the classic sigma_U meets delta already at eps = 0: the readout is 0,
    and its note says that this is (0, delta)-DP, not a bug; at Sec. VI's eps there is no such note."""
    def row(state, key):
        return next(r for r in state["rows"] if r.key == key)

    # eps = 0.01: sigma_U = c (2C/m) / eps, so Ds/sigma = eps / c = 0.0032 and delta(0) ~ 0.0013 < 0.01
    s = nb.compute(eps=0.01, delta=0.01, N=50, K=50, T=25, L=1, C=20.0, m=1200)
    assert row(s, "eps_bought").value == 0.0
    assert "not a bug" in row(s, "eps_bought").note and "(0, delta)-DP" in row(s, "eps_bought").note
    s = nb.compute(eps=60.0, delta=0.01, N=50, K=50, T=25, L=1, C=20.0, m=1200)
    assert row(s, "eps_bought").value > 0 and "not a bug" not in row(s, "eps_bought").note


def test_controls_leave_the_slider_room():
    """A control is the label (170 px) plus a track of ~200 px plus the readout (the 80 px track made
    one drag jump eps from 60 to 0.14)."""
    ex = wei2020_explorer()
    eps = ex.controls["eps"]
    assert eps.layout.width == f"{_base.CONTROL_WIDTH}px" and _base.CONTROL_WIDTH >= 450
    assert eps.style.description_width == "170px"
