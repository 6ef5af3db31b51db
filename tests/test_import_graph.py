"""The package's import graph: three wings, one law, no cycles.

Every ``import`` statement of every module under ``fldp/`` (function-level imports included) is
read with ``ast`` and resolved to module names; ``from pkg import name`` is an edge to the
submodule ``pkg.name`` when there is one, else to ``pkg`` itself (its ``__init__``).

* **The science** (``fldp.*`` outside the two wings below: mechanisms, accounting, models, data,
  the engine, audit, attacks, verdicts, plots, ``fldp.papers``) never imports the reproduction
  toolkit (``fldp.repro``) or the teaching code (``fldp.teach``), with one exception: the
  **experiment layer** (``fldp.papers.<paper>.experiments``, ``fldp.papers.wei2020.simulations``,
  ``fldp.baseline``: the run functions and their seed summaries) may use the run store and the
  sweeps (``fldp.repro.store``, ``fldp.repro.sweep``), and nothing else of the toolkit.
* **The teaching code** never imports the toolkit's top (``fldp.repro.cli``, ``fldp.repro.book``),
  and the toolkit imports the teaching code only in its command line (``fldp exercises``).
* Within the science: shared modules never import a paper's home; a paper's home never imports
  another paper's, nor the cross-paper layer (``fldp.equal_privacy``, the teaching code).
* **No cycles**: no strongly connected component of more than one module.

``test_the_rules_catch_a_planted_*`` plant a cycle and a science -> toolkit import in a copy of
the graph and show that the checks fail on them.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import fldp
from fldp import papers

ROOT = Path(fldp.__file__).resolve().parent
CROSS_PAPER = ("fldp.equal_privacy", "fldp.teach")
REPRO, TEACH = "fldp.repro", "fldp.teach"
EXPERIMENT_LAYER = tuple(f"fldp.papers.{p}.experiments" for p in papers.PAPERS) + (
    "fldp.papers.wei2020.simulations", "fldp.baseline")
EXPERIMENT_MAY_USE = ("fldp.repro.store", "fldp.repro.sweep")
TOOLKIT_TOP = ("fldp.repro.cli", "fldp.repro.book")


def module_name(path: Path) -> str:
    parts = ("fldp",) + path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p) for p in ROOT.rglob("*.py")}


def imports(path: Path) -> set[str]:
    """Every fldp module ``path`` imports (see the module docstring)."""
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
            for a in node.names:
                out.add(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base)
    return {m for m in out if m in MODULES and m != name}


GRAPH = {module_name(p): imports(p) for p in sorted(ROOT.rglob("*.py"))}


def wing(module: str) -> str:
    if module == REPRO or module.startswith(REPRO + ".") or module == "fldp.__main__":  # `python -m fldp`: the CLI
        return "repro"
    if module == TEACH or module.startswith(TEACH + "."):
        return "teach"
    return "science"


def paper_of(module: str):
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "papers" else None


def is_cross(module: str) -> bool:
    return module.startswith(CROSS_PAPER)


def law_violations(graph: dict) -> list[str]:
    """Every import that breaks the wings' law (see the module docstring)."""
    bad = []
    for module, deps in graph.items():
        for dep in sorted(deps):
            w, d = wing(module), wing(dep)
            if w == "science" and d != "science":
                if not (module in EXPERIMENT_LAYER and dep in EXPERIMENT_MAY_USE):
                    bad.append(f"{module} (science) imports {dep}")
            elif w == "teach" and dep.startswith(TOOLKIT_TOP):
                bad.append(f"{module} (teaching) imports {dep} (the toolkit's top)")
            elif w == "repro" and d == "teach" and module != "fldp.repro.cli":
                bad.append(f"{module} (toolkit) imports {dep} (teaching)")
    return bad


def cycles(graph: dict) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_the_package():
    # a resolver that found nothing would pass every rule below
    assert {"fldp.engine", "fldp.papers.wei2020.algorithm", "fldp.teach.widgets.wei2020", "fldp.repro.store"} <= set(GRAPH)
    assert "fldp.papers.wei2020.theory" in GRAPH["fldp.teach.widgets.wei2020"]
    assert "fldp.engine" in GRAPH["fldp.papers.wei2020.algorithm"]
    assert "fldp.counting" in GRAPH["fldp.engine"]
    assert "fldp.repro.store" in GRAPH["fldp.repro.sweep"]
    assert {paper_of(m) for m in GRAPH} - {None} == set(papers.PAPERS)
    assert set(EXPERIMENT_LAYER) <= set(GRAPH)


def test_no_import_cycles():
    assert cycles(GRAPH) == []


def test_the_wings_law():
    assert law_violations(GRAPH) == []


def test_the_rules_catch_a_planted_cycle():
    planted = {m: set(d) for m, d in GRAPH.items()}
    planted["fldp.counting"].add("fldp.engine")  # engine -> counting already: a two-module cycle
    assert ["fldp.counting", "fldp.engine"] in cycles(planted)
    planted = {m: set(d) for m, d in GRAPH.items()}
    planted["fldp.repro.store"].add("fldp.repro.results")  # results -> store -> results
    assert any({"fldp.repro.results", "fldp.repro.store"} <= set(c) for c in cycles(planted))


def test_the_rules_catch_a_planted_science_to_toolkit_import():
    planted = {m: set(d) for m, d in GRAPH.items()}
    planted["fldp.engine"].add("fldp.repro.cost")
    assert law_violations(planted) == ["fldp.engine (science) imports fldp.repro.cost"]
    planted = {m: set(d) for m, d in GRAPH.items()}
    planted["fldp.papers.zhou.experiments"].add("fldp.repro.pipeline")  # the exception is no wider
    assert law_violations(planted) == ["fldp.papers.zhou.experiments (science) imports fldp.repro.pipeline"]
    planted = {m: set(d) for m, d in GRAPH.items()}
    planted["fldp.mechanisms"].add("fldp.repro.store")  # only the experiment layer has it
    assert law_violations(planted) == ["fldp.mechanisms (science) imports fldp.repro.store"]


@pytest.mark.parametrize("module", [m for m in GRAPH if wing(m) == "science" and not paper_of(m) and not is_cross(m)])
def test_no_shared_module_imports_a_paper(module):
    bad = sorted(m for m in GRAPH[module] if paper_of(m))
    assert not bad, f"{module} (shared) imports a paper's home: {bad}"


@pytest.mark.parametrize("module", [m for m in GRAPH if paper_of(m)])
def test_no_paper_imports_another_paper_or_the_cross_paper_layer(module):
    own = paper_of(module)
    bad = sorted(m for m in GRAPH[module] if (paper_of(m) or own) != own or is_cross(m))
    assert not bad, f"{module} (paper {own}) imports {bad}"


@pytest.mark.parametrize("module", [m for m in GRAPH if m.startswith(("fldp.teach.widgets.", "fldp.teach.exercises."))
                                    and m.rsplit(".", 1)[1] in papers.PAPERS])
def test_a_papers_explorer_and_exercises_use_only_that_paper(module):
    own = module.rsplit(".", 1)[1]
    bad = sorted(m for m in GRAPH[module] if paper_of(m) not in (None, own))
    assert not bad, f"{module} imports another paper's home: {bad}"
