"""Which notebooks ``fldp reproduce`` runs and how: the chapters under ``notebooks/`` (not the
app, not the exercises), the parameters their ``parameters`` cell declares, the tasks a request
becomes, and which chapter loads another's results (so that it runs after it)."""
from __future__ import annotations

import ast
import os
import re
import tempfile
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Mapping, Sequence

from fldp.repro.execute import DEFAULT_CELL_TIMEOUT_S, EXECUTED, KERNEL_ENV, KERNEL_NAME, Task, UsageError, check_kernel
from fldp.repro.paths import PROJECT_ROOT

__all__ = ["Options", "parse_value", "APPS", "EXERCISES", "is_chapter", "discover", "parameter_cell", "plan",
           "dependencies"]

@dataclass
class Options:
    """What ``fldp reproduce`` was asked to do."""

    quick: bool = False
    only: Sequence[str] = ()
    jobs: int = 1
    params: Mapping[str, Any] = field(default_factory=dict)
    timeout: float | None = None  # per cell, seconds; None: the mode's default
    notebooks_dir: Path = PROJECT_ROOT / "notebooks"
    build_dir: Path = PROJECT_ROOT / "build"
    kernel_name: str = KERNEL_NAME
    plan_only: bool = False  # print the plan (runs, stored, predicted time) and stop
    recalibrate: bool = False  # measure the cost model again (fldp.repro.cost.calibrate)


def parse_value(text: str) -> Any:
    """A ``-p`` value: a Python literal when it parses as one (``3``, ``True``, ``[1, 2]``),
    otherwise the string itself."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


#: Notebooks that are apps (served by ``make explore``, tested in ``tests/test_explore*.py``), not
#: chapters: they reproduce nothing, so ``fldp reproduce`` does not run them.
APPS = frozenset({"explore.ipynb"})


#: File name of the exercises notebooks (notebooks/<paper>/exercises.ipynb, anywhere under the
#: notebooks folder): tasks for students, not chapters; ``fldp exercises`` builds and runs them
#: (:mod:`fldp.teach.exercises.build`), so ``fldp reproduce`` does not.
EXERCISES = "exercises.ipynb"


def is_chapter(rel: Path) -> bool:
    """Whether the notebook at ``rel`` (relative to the notebooks folder) is a chapter that
    ``fldp reproduce`` runs: not a checkpoint, not an app (:data:`APPS`), not an exercises notebook."""
    rel = Path(rel)
    return (".ipynb_checkpoints" not in rel.parts and rel.as_posix() not in APPS and rel.name != EXERCISES)


def discover(notebooks_dir: Path, only: Sequence[str] = ()) -> list[Path]:
    """Notebooks under ``notebooks_dir`` (recursive, sorted) that are chapters (:func:`is_chapter`:
    no checkpoints, no :data:`APPS`, no exercises notebooks), filtered by ``only``: a pattern matches
    a notebook's relative path, file name or stem as a glob, or as a substring of its relative
    path; an exact relative path selects just that one."""
    root = Path(notebooks_dir)
    if not root.is_dir():
        raise UsageError(f"notebook folder {root} does not exist")
    found = sorted(
        (p for p in root.rglob("*.ipynb") if is_chapter(p.relative_to(root))),
        key=lambda p: p.relative_to(root).as_posix(),
    )
    if not found:
        raise UsageError(f"no notebooks under {root}")
    if not only:
        return found
    rels = {p.relative_to(root).as_posix() for p in found}
    chosen = [p for p in found if any(_matches(p.relative_to(root), pat, rels) for pat in only)]
    if not chosen:
        names = ", ".join(p.relative_to(root).as_posix() for p in found)
        raise UsageError(f"no notebook under {root} matches --only "
                         f"{' '.join(map(repr, only))}; available: {names}")
    return chosen


def _matches(rel: Path, pattern: str, all_rels: set[str]) -> bool:
    text = rel.as_posix()
    if pattern in all_rels:  # an exact relative path selects that notebook only
        return text == pattern
    return (pattern in text or fnmatchcase(text, pattern)
            or fnmatchcase(rel.name, pattern) or fnmatchcase(rel.stem, pattern))


def parameter_cell(path: Path) -> tuple[set[str], int | None]:
    """Names defined in the notebook's ``parameters`` cell, and where papermill will put
    its injected-parameters cell (``None`` when it replaces an existing one in place)."""
    import nbformat
    from papermill.translators import PythonTranslator

    nb = nbformat.read(str(path), as_version=4)
    tags = [cell.get("metadata", {}).get("tags", []) for cell in nb.cells]
    at = next((i for i, t in enumerate(tags) if "parameters" in t), -1)
    names = {p.name for p in PythonTranslator.inspect(nb.cells[at])} if at >= 0 else set()
    has_injected = any("injected-parameters" in t for t in tags)
    return names, None if has_injected else at + 1


def plan(opts: Options) -> tuple[bool, dict[str, Any], list[Task]]:
    """Check the request and turn it into tasks; raises :class:`UsageError` when invalid."""
    params = dict(opts.params)
    quick = bool(params.pop("quick", False)) or opts.quick  # `-p quick True` == --quick
    notebooks = discover(opts.notebooks_dir, opts.only)
    check_kernel(opts.kernel_name)
    declared = {nb: parameter_cell(nb) for nb in notebooks}
    unknown = [n for n in params if not any(n in names for names, _ in declared.values())]
    if unknown:
        raise UsageError(f"no selected notebook has a parameter named "
                         f"{', '.join(map(repr, unknown))} in its `parameters` cell")
    try:
        Path(opts.build_dir).mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=opts.build_dir, prefix=".fldp-write-check-"):
            pass
    except OSError as exc:
        raise UsageError(f"the build folder {opts.build_dir} is not writable ({exc.strerror or exc}): "
                         "choose another with --build-dir DIR") from None
    timeout = opts.timeout if opts.timeout is not None else DEFAULT_CELL_TIMEOUT_S[quick]
    env = dict(KERNEL_ENV)
    if os.environ.get("FLDP_OUTPUT_DIR"):  # kernels run in the notebook's folder
        env["FLDP_OUTPUT_DIR"] = os.path.abspath(os.environ["FLDP_OUTPUT_DIR"])
    if not quick:  # only a full-mode reproduction writes the committed results/ and figures/
        from fldp.repro.paths import PUBLISH_ENV
        env[PUBLISH_ENV] = "1"
    # Every computation single-threaded, whatever --jobs: float32 sums come out in the last digits
    # differently with 1 and 2 threads, so the numbers would depend on the number of workers (the
    # cores are used by running notebooks and runs side by side; an OMP_NUM_THREADS set by hand wins)
    if "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = "1"
    root, out = Path(opts.notebooks_dir), Path(opts.build_dir) / "notebooks"
    kept = None if quick else Path(env.get("FLDP_OUTPUT_DIR", PROJECT_ROOT)) / EXECUTED
    tasks = []
    for i, nb in enumerate(notebooks, 1):
        names, injected_at = declared[nb]
        chosen = {k: v for k, v in params.items() if k in names}
        problem = None
        if quick:
            if "quick" in names:
                chosen["quick"] = True
            else:
                problem = "its `parameters` cell does not define `quick`, so it cannot run at CI size"
        rel = nb.relative_to(root)
        tasks.append(Task(i, len(notebooks), rel.as_posix(), nb, out / rel, chosen, timeout,
                          opts.kernel_name, env, injected_at if chosen else None, problem,
                          kept / rel if kept else None))
    return quick, params, tasks


_LOADS = re.compile(r"""results\.load\(\s*["']([\w.-]+)["']\s*,\s*["']([\w.-]+)["']""")


def dependencies(tasks: Sequence[Task]) -> dict[str, list[str]]:
    """For each task, the other selected tasks whose results it loads (a ``results.load("<paper>",
    "<notebook>", ...)`` in its code cells): they run first.  A notebook that loads results of one
    not selected reads the committed ones, so that is no dependency here."""
    import nbformat

    by_key = {(Path(t.rel).parent.name, Path(t.rel).stem): t.rel for t in tasks}
    deps = {}
    for t in tasks:
        nb = nbformat.read(str(t.source), as_version=4)
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        found = (by_key.get(key) for key in _LOADS.findall(code))
        deps[t.rel] = list(dict.fromkeys(rel for rel in found if rel and rel != t.rel))
    return deps
