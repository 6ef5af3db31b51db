"""A notebook run by hand never touches what REPORT.md is rendered from.

Only a full-mode ``fldp reproduce`` (which sets ``FLDP_PUBLISH=1`` for its kernels) writes the
committed ``results/`` and ``figures/``; a notebook run in JupyterLab writes under
``build/interactive/`` and says so.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from fldp.repro import paths, results, store

ROOT = Path(__file__).resolve().parent.parent


def _record(quick: bool = False):
    import matplotlib.pyplot as plt

    rec = results.Recorder("toy", "interactive", quick=quick, params={"N": 3})
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    rec.savefig(fig, "line")
    plt.close(fig)
    return rec.save()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A stand-in project root, with no FLDP_OUTPUT_DIR and no FLDP_PUBLISH: a user's lab."""
    monkeypatch.setattr(paths, "PROJECT_ROOT", tmp_path)  # where output_root() puts build/ and results/
    monkeypatch.setattr(results, "PROJECT_ROOT", tmp_path)  # load() falls back to the committed results/
    monkeypatch.setattr(store, "PROJECT_ROOT", tmp_path)
    monkeypatch.delenv("FLDP_OUTPUT_DIR", raising=False)
    monkeypatch.delenv(paths.PUBLISH_ENV, raising=False)
    return tmp_path


def test_a_full_mode_run_by_hand_writes_to_build_interactive(project, capsys):
    path = _record()
    assert path == project / "build/interactive/results/toy/interactive.json"
    assert (project / "build/interactive/figures/toy/line.png").is_file()
    assert not (project / "results").exists() and not (project / "figures").exists()
    assert "interactive run: results and figures go to" in capsys.readouterr().out
    # the run store stays the shared one (a cache keyed by the whole configuration)
    assert store.default_store(False).root == project / "results" / "runs"


def test_only_publishing_writes_the_committed_results(project, monkeypatch, capsys):
    monkeypatch.setenv(paths.PUBLISH_ENV, "1")
    assert _record() == project / "results/toy/interactive.json"
    assert "interactive run" not in capsys.readouterr().out
    # quick mode never publishes
    assert _record(quick=True) == project / "build/quick/results/toy/interactive.json"


def test_an_interactive_run_reads_other_notebooks_results_from_the_committed_ones(project, monkeypatch):
    monkeypatch.setenv(paths.PUBLISH_ENV, "1")
    _record()
    monkeypatch.delenv(paths.PUBLISH_ENV)
    assert results.load("toy", "interactive", quick=False)["params"] == {"N": 3}  # committed, read only
    _record()  # an interactive re-run: its own copy wins
    assert (project / "build/interactive/results/toy/interactive.json").is_file()
    assert results.load("toy", "interactive", quick=False)["params"] == {"N": 3}


@pytest.mark.slow
def test_a_notebook_executed_like_jupyterlab_leaves_results_and_figures_alone(tmp_path, monkeypatch):
    """Executed with nbclient and no fldp environment, as JupyterLab's 'Run all' would."""
    from nbclient import NotebookClient

    for name in ("FLDP_OUTPUT_DIR", paths.PUBLISH_ENV, "FLDP_RUN_MANIFEST"):
        monkeypatch.delenv(name, raising=False)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nfrom fldp.repro import results\n"
        "rec = results.Recorder('toy_lab_test', 'nb', quick=False)\n"
        "fig, ax = plt.subplots(); ax.plot([1, 2]); rec.savefig(fig, 'lab_line')\nprint(rec.save())")]
    committed = [ROOT / "results" / "toy_lab_test", ROOT / "figures" / "toy_lab_test"]
    scratch = ROOT / "build" / "interactive"
    try:
        out = NotebookClient(nb, kernel_name="fldp", timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
        text = "".join(o.get("text", "") for o in out.cells[0].outputs)
        assert "interactive run: results and figures go to" in text
        assert str(scratch / "results" / "toy_lab_test" / "nb.json") in text
        saved = json.loads((scratch / "results" / "toy_lab_test" / "nb.json").read_text())
        assert saved["figures"] == ["figures/toy_lab_test/lab_line.png"] and saved["quick"] is False
        assert not any(p.exists() for p in committed)
    finally:
        for p in committed + [scratch / "results" / "toy_lab_test", scratch / "figures" / "toy_lab_test"]:
            shutil.rmtree(p, ignore_errors=True)
