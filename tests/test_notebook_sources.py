"""The committed notebooks follow notebooks/CONVENTIONS.md (checked without running them)."""
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def test_notebooks_exist():
    assert len(NOTEBOOKS) >= 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_notebook_source_conventions(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), "strip outputs before committing"
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, "exactly one cell tagged 'parameters'"
    first = [ln for ln in params[0].source.splitlines() if ln.strip() and not ln.startswith("#")][0]
    assert first.replace(" ", "") == "quick=False"
    assert all("=" not in ln.split("#", 1)[1] for ln in params[0].source.splitlines() if "#" in ln), \
        "'=' inside a comment of the parameters cell breaks papermill's parser"
    assert nb.metadata.kernelspec.name == "fldp"
    assert nb.cells[0].cell_type == "markdown"
    assert "rec.save()" in "".join(c.source for c in code)
