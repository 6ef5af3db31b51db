"""Every notebook under notebooks/ runs in quick mode and saves figures and claim checks.

Each notebook is executed through ``fldp reproduce``'s pipeline on the ``fldp`` kernel with
``quick=True`` and ``FLDP_OUTPUT_DIR`` in a temporary folder.  Deselect with
``-m 'not notebooks'``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fldp.repro import chapters, pipeline
from fldp.repro.chapters import Options
from fldp.repro.execute import UsageError

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _notebooks() -> list[str]:
    try:
        return [p.relative_to(NOTEBOOKS_DIR).as_posix() for p in chapters.discover(NOTEBOOKS_DIR)]
    except UsageError:
        return []


NOTEBOOKS = _notebooks()
pytestmark = pytest.mark.notebooks


def test_there_are_notebooks():
    assert NOTEBOOKS, f"no notebooks under {NOTEBOOKS_DIR}: nothing would be checked"


@pytest.fixture(scope="module")
def output_dir(tmp_path_factory: pytest.TempPathFactory):
    """One FLDP_OUTPUT_DIR for all notebooks of this module, as in a real `fldp reproduce`
    run: later notebooks can read earlier ones' results (wei2020/04 and 05 reuse the
    constants estimated by 03 instead of estimating them again)."""
    out = tmp_path_factory.mktemp("notebook-outputs")
    mp = pytest.MonkeyPatch()
    mp.setenv("FLDP_OUTPUT_DIR", str(out))
    yield out
    mp.undo()


@pytest.mark.parametrize("rel", NOTEBOOKS)
def test_notebook_runs_in_quick_mode(rel: str, tmp_path: Path, output_dir: Path):
    build = tmp_path / "build"
    report = pipeline.reproduce(Options(quick=True, only=[rel], notebooks_dir=NOTEBOOKS_DIR,
                                        build_dir=build))
    (result,) = report.notebooks
    assert result.rel == rel
    assert result.ok, (f"{rel} failed at {result.error.describe()}; "
                       f"executed copy: {result.output}")
    assert result.results_files, f"{rel} saved no results JSON (Recorder.save() not called?)"
    executed = json.loads(Path(result.output).read_text())
    if any(c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## Explore") for c in executed["cells"]):
        state = executed["metadata"].get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
        assert len(state) >= 5, f"{rel}: the Explore section's widgets left no state in the executed notebook"

    pngs, claims = [], 0
    for path in result.results_files:
        assert path.is_relative_to(output_dir), f"{path} written outside FLDP_OUTPUT_DIR"
        saved = json.loads(path.read_text())
        assert saved["quick"] is True, f"{path}: Recorder was not told quick=True"
        from fldp import verdicts
        for claim in saved["claims"]:
            where = f"{path}: claim {claim.get('id')}"
            assert "passed" not in claim, f"{where} is in the old form"
            assert claim["kind"] in verdicts.KINDS and claim["setting"] in verdicts.SETTINGS, where
            assert claim["verdict"] in verdicts.VERDICTS and claim["falsifier"].strip(), where
            assert (claim["reason"] in verdicts.REASONS) == (claim["verdict"] == "inconclusive"), where
        pngs += [path.parents[2] / f for f in saved["figures"] if f.endswith(".png")]
        claims += sum(c["reason"] != "not-run" for c in saved["claims"])
    # a notebook that measured nothing (no claim, or only claims it could not run, e.g.
    # adaptive_noise/06_cifar without its data) draws no figure: a table of the paper's own numbers
    # is printed, not saved among the results' figures
    assert pngs or not claims, f"{rel} saved no PNG figure"
    for png in pngs:
        assert png.is_file() and png.stat().st_size > 0, f"missing figure {png}"
