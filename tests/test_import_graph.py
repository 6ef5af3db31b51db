"""The package's import graph: shared code never depends on a paper, papers never on each other.

Every ``import`` statement of every module under ``fldp/`` (function-level imports included) is
read with ``ast`` and resolved to a module name.  Three layers:

* a **paper's home**: ``fldp.papers.<paper>`` and everything under it;
* the **cross-paper layer**, built over the papers: the equal-privacy comparison
  (``fldp.equal_privacy``), the explorers (``fldp.widgets``) and the exercises (``fldp.exercises``);
* **shared** modules: everything else (mechanisms, accounting, engine, models, data, ...),
  including ``fldp.papers`` itself, which only reads the papers' declarations by name.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import fldp
from fldp import papers

ROOT = Path(fldp.__file__).resolve().parent
CROSS_PAPER = ("fldp.equal_privacy", "fldp.widgets", "fldp.exercises")


def module_name(path: Path) -> str:
    parts = ("fldp",) + path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports (``from a import b`` counts as a and as a.b)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in out if m == "fldp" or m.startswith("fldp.")}


def paper_of(module: str):
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "papers" else None


def layer(module: str) -> str:
    if paper_of(module):
        return "paper"
    return "cross" if module.startswith(CROSS_PAPER) else "shared"


GRAPH = {module_name(p): imports(p) for p in sorted(ROOT.rglob("*.py"))}


def test_the_graph_sees_the_package():
    # a resolver that found nothing would pass every rule below
    assert {"fldp.engine", "fldp.papers.wei2020.algorithm", "fldp.widgets.wei2020"} <= set(GRAPH)
    assert "fldp.papers.wei2020.theory" in GRAPH["fldp.widgets.wei2020"]
    assert "fldp.engine" in GRAPH["fldp.papers.wei2020.algorithm"]  # relative `from ... import engine`
    assert {paper_of(m) for m in GRAPH} - {None} == set(papers.PAPERS)


@pytest.mark.parametrize("module", [m for m in GRAPH if layer(m) == "shared"])
def test_no_shared_module_imports_a_paper(module):
    bad = sorted(m for m in GRAPH[module] if paper_of(m))
    assert not bad, f"{module} (shared) imports a paper's home: {bad}"


@pytest.mark.parametrize("module", [m for m in GRAPH if layer(m) == "paper"])
def test_no_paper_imports_another_paper_or_the_cross_paper_layer(module):
    own = paper_of(module)
    bad = sorted(m for m in GRAPH[module] if (paper_of(m) or own) != own or layer(m) == "cross")
    assert not bad, f"{module} (paper {own}) imports {bad}"


@pytest.mark.parametrize("module", [m for m in GRAPH if m.startswith(("fldp.widgets.", "fldp.exercises."))
                                    and m.rsplit(".", 1)[1] in papers.PAPERS])
def test_a_papers_explorer_and_exercises_use_only_that_paper(module):
    own = module.rsplit(".", 1)[1]
    bad = sorted(m for m in GRAPH[module] if paper_of(m) not in (None, own))
    assert not bad, f"{module} imports another paper's home: {bad}"
