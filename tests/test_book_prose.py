"""A part page of the book states no measured number by hand (notebooks/CONVENTIONS.md, item 7, as
``test_notebook_prose`` checks it for the chapters' markdown).

``book/parts/<paper>.md`` introduces a paper's chapters; its measured numbers are the chapters'
findings, which ``fldp report`` writes into its generated blocks (``<!-- findings of <paper>/<notebook>,
written by fldp report: do not edit -->`` ... ``<!-- end of findings -->``).  Outside those blocks
(and outside image lines, inline code, link targets and HTML comments) every number must be one the
part does not measure: the paper's own (its text; the baseline and the benchmark have none), a
setting (a literal of the code of the part's chapters), a small integer (at most 10) or a year, or one
the page lists with its reason in one HTML comment, ``<!-- prose_numbers: {"582,026": "the paper's
CNN's parameters"} -->`` (JSON; for settings and facts that are not measurements).  Anything else is
a measured number typed in, which goes stale the next time the runs move."""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import nbformat
import pytest

from fldp.repro import chapters
from fldp.repro.report import FINDINGS_BLOCK
from prose_numbers import PAPER_TEXT, PAPERS, ROOT, code_numbers, numbers, paper_numbers, unexplained

PAGES = sorted((ROOT / "book" / "parts").glob("*.md"))
LISTED = re.compile(r"<!--\s*prose_numbers:\s*(\{.*?\})\s*-->", re.S)
IMAGE = re.compile(r"^[ \t]*!\[[^\]]*\]\([^)]*\)[ \t]*$", re.M)


def part_chapters(part: str, notebooks: Path = ROOT / "notebooks") -> list[Path]:
    """The chapters of ``part`` (the book's grouping: ``notebooks/<part>/NN_*.ipynb``; the baseline's
    are the chapters at the top of ``notebooks/``)."""
    found = chapters.discover(notebooks)
    if part == "baseline":
        return [p for p in found if p.parent == notebooks]
    return [p for p in found if p.parent == notebooks / part]


@lru_cache(maxsize=None)
def _part_code_numbers(part: str) -> frozenset:
    out: set = set()
    for path in part_chapters(part):
        out |= code_numbers(nbformat.read(path, as_version=4))
    return frozenset(out)


def listed_numbers(text: str) -> dict[float, str]:
    """The page's ``<!-- prose_numbers: {...} -->`` comment as ``{value: reason}`` (none: empty);
    more than one such comment, a reason left empty or a key that is not one number is an error."""
    found = LISTED.findall(text)
    assert len(found) <= 1, "a part page lists its prose numbers in one <!-- prose_numbers: {...} --> comment"
    if not found:
        return {}
    listed = json.loads(found[0])
    out = {}
    for key, reason in listed.items():
        parsed = numbers(key)
        assert len(parsed) == 1 and parsed[0][0] == key.strip(), f"prose_numbers key {key!r} is not one number"
        assert isinstance(reason, str) and reason.strip(), f"prose_numbers {key!r} needs its reason"
        out[parsed[0][1]] = reason
    return out


def prose(text: str) -> str:
    """``text`` without its generated findings blocks and its image lines (the rest of what
    :func:`numbers` leaves out, it leaves out itself), its lines where they were."""
    def blank(m: re.Match) -> str:  # as many line breaks as it covered: the page's line numbers kept
        return "\n" * m.group(0).count("\n")
    return IMAGE.sub(blank, FINDINGS_BLOCK.sub(blank, text))


def hand_typed(text: str, part: str) -> list[str]:
    """The numbers of part page ``text`` (of ``part``) that are neither the paper's, a setting, a
    small integer or year, nor listed on the page: ``["line 12: 93.45", ...]``."""
    allowed = paper_numbers(part) | _part_code_numbers(part)
    listed = listed_numbers(text)
    bad = []
    for i, line in enumerate(prose(text).splitlines(), 1):
        bad += [f"line {i}: {written}" for written in unexplained(line, allowed, listed)]
    return bad


def test_the_check_catches_a_typed_measured_number():
    block = ("<!-- findings of baseline/00_fedavg_baseline, written by fldp report: do not edit -->\n"
             "- iid 93.45 % test accuracy\n<!-- end of findings -->")
    page = (f"# Baseline\n\nFedAvg on MNIST, N = 50 clients.\n\n{block}\n\n"
            "![fig 12.5](../figures/fig_77.png)\n\n`0.123` and [link](x/99.md)\n")
    assert hand_typed(page, "baseline") == []  # inside the block, an image, code, a link target
    typed = page + "\nIt reaches 93.45 % iid.\n"
    assert [b.split(": ")[1] for b in hand_typed(typed, "baseline")] == ["93.45"]
    listed = typed + '<!-- prose_numbers: {"93.45": "a reason"} -->\n'
    assert hand_typed(listed, "baseline") == []
    real = (ROOT / "book" / "parts" / "wei2020.md").read_text(encoding="utf-8")
    lines = real.splitlines()
    real_typed = "\n".join(lines[:5] + ["NbAFL ends at 93.17 % test accuracy."] + lines[5:])
    assert hand_typed(real_typed, "wei2020") == ["line 6: 93.17"]  # a real page, its line number kept
    with pytest.raises(AssertionError, match="needs its reason"):
        hand_typed(typed + '<!-- prose_numbers: {"93.45": ""} -->\n', "baseline")
    with pytest.raises(AssertionError, match="one <!-- prose_numbers"):
        hand_typed(listed + '<!-- prose_numbers: {"1": "x"} -->\n', "baseline")


def test_every_part_page_has_chapters():
    assert PAGES and all(part_chapters(p.stem) for p in PAGES), "a part page whose chapters are not found"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_part_page_states_no_measured_number_by_hand(page):
    if page.stem in PAPER_TEXT and not PAPERS.exists():
        pytest.skip("the papers' text (../shared/papers) is absent: cannot tell the paper's numbers")
    bad = hand_typed(page.read_text(encoding="utf-8"), page.stem)
    assert not bad, (f"book/parts/{page.name}: numbers outside its findings blocks that are not the paper's, "
                     f"a setting of its chapters' code or listed in its <!-- prose_numbers: {{...}} --> "
                     f"comment (a measured number belongs in the chapter's findings): {bad}")



@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_committed_findings_blocks_are_empty(page):
    """A part page's findings blocks are filled when the book is staged, from results/; numbers kept in
    the committed page would go stale with the next reproduction (as they once did)."""
    text = page.read_text(encoding="utf-8")
    filled = [m.group(2) for m in FINDINGS_BLOCK.finditer(text) if m.group(3).strip()]
    assert not filled, f"{page.name}: findings blocks with committed text: {filled}"
