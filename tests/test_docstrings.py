"""Module docstrings are a paragraph: what the module is for and what it holds.  The long
critiques of the papers live in the chapters (notebooks/), the design notes in the book's package
page, the detail of a function in that function's docstring.  A ``.. code-block::`` (the engine's
round diagram) and a ``::`` literal block (the command line's synopsis) are not counted."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import fldp

ROOT = Path(fldp.__file__).resolve().parent
LIMIT = 1400  # characters of prose


def prose(doc: str) -> str:
    out, skipping = [], False
    for line in doc.splitlines():
        if line.startswith(".. code-block::") or line.rstrip().endswith("::"):
            skipping = True  # a literal block (a diagram, a command synopsis) is not prose
            if line.rstrip().endswith("::") and not line.startswith(".."):
                out.append(line)
            continue
        if skipping and (line.startswith(" ") or not line.strip()):
            continue
        skipping = False
        out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_docstring_is_a_paragraph(path):
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert len(prose(doc)) <= LIMIT, f"{path.relative_to(ROOT)}: module docstring of {len(prose(doc))} characters"


def test_the_limit_can_fail():
    assert len(prose("x" * (LIMIT + 1))) > LIMIT
    assert len(prose("intro\n\n.. code-block:: text\n\n    " + "y" * 5000 + "\n\nend")) < 20
    assert len(prose("usage::\n\n    " + "y" * 5000 + "\n\nend")) < 20
