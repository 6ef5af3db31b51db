"""What a number in prose may be: shared by ``test_notebook_prose`` (the chapters' markdown) and
``test_book_prose`` (the book's part pages).

Imported by the tests as ``from prose_numbers import ...`` (pytest puts ``tests/`` on ``sys.path``,
as for ``helpers``).  A number a reader sees in prose must be one the project does not measure: a
number the paper states (:func:`paper_numbers`, from the paper's text under ``../shared/papers``),
a setting (:func:`code_numbers`, the literals of a chapter's code), a small integer (at most 10) or
a year (:func:`free`), or one listed with its reason; anything else is a measured number typed in,
which goes stale the next time the runs move and belongs in a ``rec.finding(f"...")``."""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAPERS = ROOT.parent / "shared" / "papers"
PAPER_TEXT = {"wei2020": "wei2020_nbafl_tifs.txt", "zhou": "zhou_queries_replies_fedsgd_dpc.txt",
              "li2021": "li_chang_chi_secure_fedavg.txt", "adaptive_noise": "adaptive_clt_noise_perturbation.txt"}

NUMBER = re.compile(r"(?<![\w.^_{}/\\])(?<![eE][-+])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?!\w)(?!\.\d)")


def numbers(text: str) -> list[tuple[str, float]]:
    """The numbers a reader sees in ``text``: ``[(as written, value)]``, thousands separators
    allowed; inline code, link targets and HTML comments left out (names and paths, not numbers)."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    out = []
    for m in NUMBER.finditer(text):
        written = m.group(0)
        out.append((written, float(written.replace(",", ""))))
    return out


def free(v: float) -> bool:
    """A number any prose may state: a small integer (at most 10) or a year."""
    return v.is_integer() and (v <= 10 or 1950 <= v <= 2030)


def unexplained(text: str, allowed, listed) -> list[str]:
    """The numbers of ``text`` (as written) that prose may not state: neither free (:func:`free`),
    nor ``allowed`` (the paper's, the settings), nor ``listed`` with a reason.  The one rule of the
    chapters' and the part pages' prose tests."""
    return [written for written, v in numbers(text) if not (free(v) or v in allowed or v in listed)]


@lru_cache(maxsize=None)
def paper_numbers(paper: str) -> frozenset:
    """The numbers of ``paper``'s text (empty for a part with no paper, or when the text is absent)."""
    name = PAPER_TEXT.get(paper)
    if not name or not (PAPERS / name).exists():
        return frozenset()
    return frozenset(v for _, v in numbers((PAPERS / name).read_text(errors="replace")))


def code_numbers(nb) -> set:
    """The literals of notebook ``nb``'s code cells: numeric constants, and the numbers of its strings."""
    out = set()
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        try:
            tree = ast.parse(c.source)
        except SyntaxError:
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
                out.add(float(n.value))
            elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                out.update(v for _, v in numbers(n.value))
    return out
