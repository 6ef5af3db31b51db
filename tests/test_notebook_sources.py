"""The committed notebooks follow notebooks/CONVENTIONS.md (checked without running them)."""
from pathlib import Path

import nbformat
import pytest

from fldp.repro import chapters

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = chapters.discover(ROOT / "notebooks")  # the chapters (explore.ipynb is an app)
CHAPTERS = [p for p in NOTEBOOKS if p.parent != ROOT / "notebooks"]  # notebooks/<paper>/*.ipynb


def test_notebooks_exist():
    assert len(NOTEBOOKS) >= 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_notebook_source_conventions(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), "strip outputs before committing"
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, "exactly one cell tagged 'parameters'"
    assert nb.cells[1] is params[0], "the parameters cell is the second cell (CONVENTIONS item 2)"
    first = [ln for ln in params[0].source.splitlines() if ln.strip() and not ln.startswith("#")][0]
    assert first.replace(" ", "") == "quick=False"
    assert all("=" not in ln.split("#", 1)[1] for ln in params[0].source.splitlines() if "#" in ln), \
        "'=' inside a comment of the parameters cell breaks papermill's parser"
    assert nb.metadata.kernelspec.name == "fldp"
    assert nb.cells[0].cell_type == "markdown"
    assert "rec.save()" in "".join(c.source for c in code)


MAX_CELL_LINES = 15  # CONVENTIONS item 4


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_code_cells_are_short(path):
    """Notebooks stay thin: a code cell holds at most 15 lines (its trailing blank lines aside);
    logic that needs more is a tested function in fldp/. The `parameters` cell is exempt: papermill
    injects its overrides after that one cell, so every knob must be a plain assignment there."""
    nb = nbformat.read(path, as_version=4)
    long = [(i, n) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            and "parameters" not in c.metadata.get("tags", [])
            and (n := len(c.source.rstrip().splitlines())) > MAX_CELL_LINES]
    assert not long, f"code cells longer than {MAX_CELL_LINES} lines (cell index, lines): {long}"


def _code_trees(path):
    import ast

    nb = nbformat.read(path, as_version=4)
    return [ast.parse(c.source) for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_paper_formulas_are_called_by_keyword(path):
    """fldp/papers/<paper>/theory.py is keyword-only: a positional call would fail only when the
    notebook runs, so it is caught here without running it."""
    import ast

    trees = _code_trees(path)
    aliases = {a.asname or a.name for t in trees for n in ast.walk(t) if isinstance(n, ast.ImportFrom)
               and (n.module or "").startswith("fldp.papers") for a in n.names if a.name == "theory"}
    bad = [ast.unparse(n)[:80] for t in trees for n in ast.walk(t)
           if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
           and isinstance(n.func.value, ast.Name) and n.func.value.id in aliases and n.args]
    assert not bad, f"positional arguments to theory functions: {bad}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_other_notebooks_results_are_read_with_results_load(path):
    code = "".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    assert "output_root(" not in code, "read another notebook's results with fldp.repro.results.load"


def test_explore_app_is_not_a_chapter():
    assert (ROOT / "notebooks" / "explore.ipynb").is_file()
    assert all(p.name != "explore.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_chapter_notebook_ends_with_an_explore_section(path):
    """Each chapter notebook ends with "## Explore": a markdown cell, then code using fldp.teach.widgets."""
    cells = nbformat.read(path, as_version=4).cells
    at = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.lstrip().startswith("## Explore")]
    assert at, "no '## Explore' section"
    tail = cells[at[-1] + 1:]
    assert tail and all(c.cell_type == "code" for c in tail), "the Explore section is the last one"
    assert all("widgets." in c.source for c in tail), "the Explore section shows an fldp.teach.widgets explorer"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_stored_runs_go_through_the_sweep_layer(path):
    """A chapter computes a stored run with fldp.repro.sweep (run_one, run_all, seed_summaries),
    which sends it to the reproduction's shared Dask cluster when there is one; RunStore.run
    computes in the kernel, beside the cluster's workers on the same cores."""
    import ast

    calls = [ast.unparse(n)[:80] for t in _code_trees(path) for n in ast.walk(t)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "run"
             and "store" in ast.unparse(n.func.value)]
    assert not calls, f"RunStore.run called directly: {calls} (use sweep.run_one)"
