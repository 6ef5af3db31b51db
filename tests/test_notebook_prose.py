"""A chapter's prose states no measured number by hand (notebooks/CONVENTIONS.md, item 7).

Every number of a markdown cell (inline maths included) must be one the chapter does not measure:
a number the paper states (it is in the paper's text), a setting (a literal of the chapter's own
code), a small integer (at most 10) or a year, or one the notebook's metadata lists with its reason
(``metadata.fldp.prose_numbers``: ``{"784": "28 x 28 MNIST pixels"}``).  Anything else is a measured
number typed in, which goes stale the next time the runs move (T* = 88 beside a result of 87): it
belongs in a ``rec.finding(f"...")`` formatted from the computed values, which the executed notebook,
REPORT.md and the book all show.  Checked without running the notebooks."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from fldp.repro import chapters
from prose_numbers import PAPERS, ROOT, numbers, unexplained
from prose_numbers import code_numbers as _code_numbers, paper_numbers as _paper_numbers

CHAPTERS = [p for p in chapters.discover(ROOT / "notebooks") if p.parent != ROOT / "notebooks"]
#: Chapters whose prose still states measured numbers by hand (issue 40 moved them all into findings:
#: empty; the test fails on a listed chapter that is clean, so the list can only shrink).
NOT_YET: set = set()


def hand_typed(path: Path) -> list[str]:
    """The numbers of ``path``'s markdown that are neither the paper's, a setting, a small integer
    or year, nor listed in its metadata: ``["cell 30: 88", ...]``."""
    nb = nbformat.read(path, as_version=4)
    paper = path.parent.name
    allowed = _paper_numbers(paper) | _code_numbers(nb)
    listed = {float(k.replace(",", "")) for k in nb.metadata.get("fldp", {}).get("prose_numbers", {})}
    bad = []
    for i, c in enumerate(nb.cells):
        if c.cell_type != "markdown":
            continue
        bad += [f"cell {i}: {written}" for written in unexplained(c.source, allowed, listed)]
    return bad


def test_the_number_scanner_reads_prose_and_maths():
    text = ("T* = 88 and $\\rho = 13.7$, 60,000 images at eps 0.5; `05_simulations` and [fig](figures/fig_3.png) "
            "and 1e-5 <!-- 123 -->")
    assert [w for w, _ in numbers(text)] == ["88", "13.7", "60,000", "0.5"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_chapter_prose_states_no_measured_number_by_hand(path):
    if not PAPERS.exists():
        pytest.skip("the papers' text (../shared/papers) is absent: cannot tell the paper's numbers")
    key = f"{path.parent.name}/{path.stem}"
    bad = hand_typed(path)
    if key in NOT_YET:
        assert bad, f"{key} states no measured number by hand any more: take it off NOT_YET"
        pytest.xfail(f"{key}: {len(bad)} hand-typed number(s) still to move into findings (issue 40)")
    assert not bad, (f"{key}: numbers in its markdown that are not the paper's, a setting or listed in "
                     f"metadata.fldp.prose_numbers (a measured number belongs in rec.finding): {bad}")
