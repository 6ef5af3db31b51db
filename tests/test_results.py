"""fldp.repro.results helpers that notebooks share: load (another notebook's saved results); and the
plots of fldp.verdicts.over_seeds summaries (fldp.plots.mean_band, final_bars)."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pytest

from fldp import plots, verdicts as V

from fldp.repro import paths, results

matplotlib.use("Agg")


# ------------------------------------------------------------------ plots of summaries over seeds
def test_mean_band_draws_an_over_seeds_summary():
    import matplotlib.pyplot as plt

    r = V.over_seeds(lambda s: [s, 2 * s, 10], [1, 2, 3])
    fig, ax = plt.subplots()
    mean = plots.mean_band(ax, [0, 1, 2], r, label="x")
    assert mean.tolist() == [2, 4, 10]
    assert ax.lines[0].get_ydata().tolist() == [2, 4, 10]
    assert len(ax.collections) == 1  # the min-max band
    plt.close(fig)



def test_mean_band_draws_a_one_point_curve_as_a_marker_with_its_range():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    mean = plots.mean_band(ax, [1], [[2.0], [3.0], [7.0]], label="T = 1")
    assert mean.tolist() == [4.0]
    marker = ax.lines[0]
    assert marker.get_marker() == "o" and marker.get_ydata().tolist() == [4.0]
    bar = ax.collections[0].get_segments()[0]  # the min-max error bar
    assert bar[:, 1].tolist() == [2.0, 7.0]
    assert ax.get_legend_handles_labels()[1] == ["T = 1"]
    plt.close(fig)


def test_reference_lines_draw_the_final_means_in_the_curves_colour_by_kind():
    import matplotlib.pyplot as plt

    a = V.over_seeds(lambda s: {"acc": [0.1, s / 10]}, [1, 2, 6])  # finals 0.1, 0.2, 0.6: mean 0.3
    b = V.over_seeds(lambda s: {"acc": 0.5 + s / 10}, [1, 2, 6])   # 0.6, 0.7, 1.1: mean 0.8
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 0], color="tab:red")
    out = plots.reference_lines(ax, [1, 5], {"non-private": [a, b], "clipped, no noise": [b, a]}, "acc")
    assert out == {"non-private": pytest.approx([0.3, 0.8]), "clipped, no noise": pytest.approx([0.8, 0.3])}
    dashed, dotted = ax.lines[1], ax.lines[2]
    assert dashed.get_linestyle() == "--" and dotted.get_linestyle() == ":"
    assert dashed.get_color() == dotted.get_color() == "tab:red"
    assert dashed.get_ydata() == pytest.approx([0.3, 0.8])
    plt.close(fig)


def test_final_bars_draws_each_settings_final_mean_with_its_range():
    import matplotlib.pyplot as plt

    a = V.over_seeds(lambda s: {"loss": [9.0, s]}, [1, 2, 6])  # final values 1, 2, 6: mean 3
    b = V.over_seeds(lambda s: {"loss": 10.0 + s}, [1, 2, 6])  # 11, 12, 16: mean 13
    fig, ax = plt.subplots()
    m = plots.final_bars(ax, [1, 5], [a, b], "loss", label="x")
    assert m.tolist() == [3.0, 13.0]
    assert ax.lines[0].get_ydata().tolist() == [3.0, 13.0] and ax.lines[0].get_marker() == "o"
    assert [seg[:, 1].tolist() for seg in ax.collections[0].get_segments()] == [[1.0, 6.0], [11.0, 16.0]]
    plt.close(fig)

# ------------------------------------------------------------------ load
def test_load_reads_what_the_recorder_saved(output_dir: Path):
    rec = results.Recorder("toy", "03_source", quick=True, params={"N": 5})
    rec.add("constants", {"rho": 2.0, "B": 1.5})
    rec.claim("c1", "a claim", kind="derived", setting="reduced", setting_note="2 seeds", verdict="holds",
              falsifier="x below 1")
    path = rec.save()
    assert path == paths.results_path("toy", "03_source", quick=True) == output_dir / "results/toy/03_source.json"
    got = results.load("toy", "03_source", quick=True)
    assert got["data"]["constants"] == {"rho": 2.0, "B": 1.5}
    assert got["params"] == {"N": 5} and got["quick"] is True
    assert [c["id"] for c in got["claims"]] == ["c1"]


def test_load_missing_names_the_notebook_to_run(output_dir: Path):
    with pytest.raises(results.ResultsNotFound, match=r"toy/04_missing \(quick mode\).*"
                                                      r"fldp reproduce --quick --only toy/04_missing"):
        results.load("toy", "04_missing", quick=True)
    with pytest.raises(FileNotFoundError, match=r"full mode.*`fldp reproduce --only toy/04_missing`"):
        results.load("toy", "04_missing", quick=False)


def test_load_refuses_results_of_the_other_mode(output_dir: Path):
    # with FLDP_OUTPUT_DIR set, both modes share one root: the mode recorded in the file decides
    results.Recorder("toy", "03_source", quick=False).save()
    assert results.load("toy", "03_source", quick=False)["quick"] is False
    with pytest.raises(results.ResultsNotFound, match=r"other mode.*--quick --only toy/03_source"):
        results.load("toy", "03_source", quick=True)


def test_load_quick_and_full_roots_differ(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("FLDP_OUTPUT_DIR", raising=False)
    monkeypatch.setenv(paths.PUBLISH_ENV, "1")  # as a full-mode `fldp reproduce` does
    quick, full = (paths.results_path("toy", "x", quick=q) for q in (True, False))
    assert quick == paths.PROJECT_ROOT / "build/quick/results/toy/x.json"
    assert full == paths.PROJECT_ROOT / "results/toy/x.json"
    monkeypatch.delenv(paths.PUBLISH_ENV)  # by hand: a scratch folder (tests/test_interactive.py)
    assert paths.results_path("toy", "x", quick=False) == paths.PROJECT_ROOT / "build/interactive/results/toy/x.json"


def test_markdown_table_hand_values():
    text = plots.markdown_table([{"C": 1.0, "eps": 50, "z": 2.345678}, {"C": 20.0, "eps": 60, "z": np.float64(-0.5)}], digits=3)
    assert text.splitlines() == ["| C | eps | z |", "|---|---|---|", "| 1 | 50 | 2.35 |", "| 20 | 60 | -0.5 |"]
    assert plots.markdown_table([]) == "(no rows)"


def test_atomic_write_gives_the_mode_a_plain_open_would(tmp_path):
    import os
    import stat

    from fldp.repro.paths import atomic_write_bytes

    plain = tmp_path / "plain.bin"
    plain.write_bytes(b"x")
    atomic_write_bytes(tmp_path / "atomic.bin", b"x")
    assert stat.S_IMODE((tmp_path / "atomic.bin").stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


# ------------------------------------------------------------------ claims
def test_claim_records_kind_setting_verdict_and_falsifier(output_dir: Path, capsys):
    from fldp import verdicts as V
    rec = results.Recorder("toy", "claims", quick=True)
    label = rec.claim("Remark 2", "loss falls as eps grows", kind="paper", source="Remark 2, Sec. V-A",
                      setting="reading", setting_note="C = 200, L = 1",
                      verdict=V.paired_greater([2, 3, 4, 5, 6], [1, 1, 1, 1, 1], min_effect=0.5),
                      falsifier="a paired loss difference below 0", measured={"n": 5})
    assert label == "holds"
    assert rec.claim("x", "tie", kind="diagnostic", setting="paper", verdict="inconclusive", reason="spread",
                     falsifier="y") == "inconclusive: spread"
    c = rec.claims[0]
    assert (c["kind"], c["source"], c["setting"], c["setting_note"], c["verdict"], c["reason"]) == \
        ("paper", "Remark 2, Sec. V-A", "reading", "C = 200, L = 1", "holds", None)
    assert c["falsifier"] == "a paired loss difference below 0" and "mean difference 3" in c["why"]
    assert c["stats"]["n"] == 5 and "passed" not in c
    out = capsys.readouterr().out
    assert "[HOLDS] Remark 2 (paper, setting: reading)" in out and "[INCONCLUSIVE: SPREAD] x" in out
    rec.save()
    assert "1 holds, 0 fails, 1 inconclusive" in capsys.readouterr().out


def test_a_catalogue_claim_carries_its_fixed_text(output_dir: Path, capsys):
    from fldp import verdicts as V
    entry = V.Claim("Fig. 7: Gaussian practical", "Gaussian beats Laplace in accuracy", kind="paper",
                    source="Sec. VII: 'the Gaussian mechanism is practical'", setting="reduced",
                    setting_note="5 seeds (the paper: 10)", falsifier="Laplace more accurate on paired seeds",
                    min_effect=0.005, units="test accuracy, as a fraction")
    rec = results.Recorder("toy", "claims", quick=True)
    label = rec.claim(entry, verdict=V.paired_greater([0.108] * 5, [0.182] * 5, min_effect=entry.min_effect),
                      measured={"gaussian": 0.108, "laplace": 0.182}, detail="eps = 0.1")
    c = rec.claims[0]
    assert label == "fails" and c["id"] == "Fig. 7: Gaussian practical" and c["kind"] == "paper"
    assert c["setting_note"] == "5 seeds (the paper: 10); eps = 0.1"
    assert (c["min_effect"], c["units"]) == (0.005, "test accuracy, as a fraction")
    assert c["falsifier"] == "Laplace more accurate on paired seeds"
    with pytest.raises(TypeError, match="the catalogue entry carries the fixed text"):
        rec.claim(entry, "another statement", verdict="holds")
    with pytest.raises(ValueError, match="recorded twice"):
        rec.claim(entry, verdict="holds")
    with pytest.raises(ValueError, match="detail= repeats the catalogue's setting note"):
        results.Recorder("toy", "again", quick=True).claim(entry, verdict="holds", detail="5 seeds (the paper: 10), C = 2")
    with pytest.raises(ValueError, match="needs units="):
        V.Claim("x", "s", kind="derived", setting="paper", falsifier="f", min_effect=0.1)
    with pytest.raises(ValueError, match="min_effect=-1 is out of range"):
        V.Claim("x", "s", kind="derived", setting="paper", falsifier="f", min_effect=-1, units="u")
    one = V.Claim("x", "s", kind="derived", setting="paper", falsifier="f")
    two = V.Claim("x", "t", kind="derived", setting="paper", falsifier="f")
    assert V.catalogue({"a": one, "n": 3}) == {"x": one}
    with pytest.raises(ValueError, match="in the catalogue twice"):
        V.catalogue({"a": one, "b": two})


@pytest.mark.parametrize("kw, match", [
    (dict(passed=True), r"the old form \(passed=\) is gone"),
    (dict(kind="claim", setting="paper", verdict="holds", falsifier="f"), "kind='claim' is out of range"),
    (dict(kind="paper", setting="paper", verdict="holds", falsifier="f"), "needs source="),
    (dict(kind="derived", setting="reduced", verdict="holds", falsifier="f"), "needs setting_note="),
    (dict(kind="derived", setting="other", verdict="holds", falsifier="f"), "setting='other' is out of range"),
    (dict(kind="derived", setting="paper", verdict="holds", falsifier=" "), "falsifier= must say"),
    (dict(kind="derived", setting="paper", verdict="PASS", falsifier="f"), "verdict='PASS' is out of range"),
    (dict(kind="derived", setting="paper", verdict="inconclusive", falsifier="f"), "needs a reason"),
])
def test_claim_refuses_an_untagged_or_malformed_claim(kw, match):
    rec = results.Recorder("toy", "claims", quick=True)
    with pytest.raises((TypeError, ValueError), match=match):
        rec.claim("c", "s", **kw)
    assert rec.claims == []


def test_one_cause_is_one_claim():
    rec = results.Recorder("toy", "claims", quick=True)
    rec.claim("c", "s", kind="diagnostic", setting="paper", verdict="holds", falsifier="f")
    with pytest.raises(ValueError, match="recorded twice"):
        rec.claim("c", "s again", kind="diagnostic", setting="paper", verdict="fails", falsifier="f")


def test_mean_band_skips_a_stopped_seed_only_when_asked():
    import math

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    runs = [[1.0, 2.0, float("nan")], [3.0, 4.0, 5.0]]
    gap = plots.mean_band(ax, [1, 2, 3], runs)
    assert gap[:2].tolist() == [2.0, 3.0] and math.isnan(gap[2])  # default: a gap where a seed stopped
    kept = plots.mean_band(ax, [1, 2, 3], runs, skip_nan=True, band_alpha=0.15)
    assert kept.tolist() == [2.0, 3.0, 5.0]
    band = ax.collections[-1]
    assert band.get_alpha() == 0.15
    ys = band.get_paths()[0].vertices[:, 1]
    assert {1.0, 2.0, 3.0, 4.0, 5.0} <= set(ys.round(12).tolist())  # min-max over the seeds that ran
    plt.close(fig)
