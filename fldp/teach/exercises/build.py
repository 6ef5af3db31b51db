"""Build the exercises notebooks: the student version (solutions stripped) and the executed solutions.

The committed ``notebooks/<paper>/exercises.ipynb`` is the instructor's master: it runs with its
solutions and every check reports "correct".  Solutions follow otter-grader's markers:

* in code cells, the lines from ``# BEGIN SOLUTION`` to ``# END SOLUTION`` (both included) are
  replaced by one line ``# your code here`` (same indentation), so a student's cell keeps
  ``answer = ...`` and the check call;
* in markdown cells, the lines from ``<!-- BEGIN SOLUTION -->`` to ``<!-- END SOLUTION -->``
  are removed, and a cell left empty is dropped; relative links to the chapters
  (``[02_laplace](02_laplace.ipynb)``) are rewritten to reach them from where the student version is.

:func:`student_version` writes one student notebook (outputs stripped); :func:`build` does it for
every paper (``fldp exercises``), or executes the masters on the kernel ``fldp`` and checks that
every check reports "correct" (``fldp exercises --solutions``); ``execute=True`` runs the student
versions too and checks that every check reports "not answered yet".
"""
from __future__ import annotations

import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

from fldp.repro.paths import PROJECT_ROOT

from fldp.teach.exercises.core import CORRECT, NOT_ANSWERED, PAPERS

__all__ = [
    "BEGIN", "END", "MD_BEGIN", "MD_END", "PLACEHOLDER", "NOTEBOOK", "DEFAULT_OUT",
    "CELL_TIMEOUT_S", "CHECK_CALL", "FEEDBACK_LINE", "LINK", "student_version", "masters",
    "check_ids", "feedback_in", "execute", "Built", "Job", "run_job", "run_jobs", "build", "main"
]

BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
MD_BEGIN, MD_END = "<!-- BEGIN SOLUTION -->", "<!-- END SOLUTION -->"
PLACEHOLDER = "# your code here"
NOTEBOOK = "exercises.ipynb"
DEFAULT_OUT = {False: PROJECT_ROOT / "build" / "exercises" / "student",
               True: PROJECT_ROOT / "build" / "exercises" / "solutions"}
CELL_TIMEOUT_S = 600.0
CHECK_CALL = re.compile(r"""exercises\.check\(\s*["']([\w.]+)["']""")
FEEDBACK_LINE = re.compile(r"^(?P<id>[\w.]+): (?P<status>not answered yet|correct|not yet)\b", re.M)


# ----------------------------------------------------------------------------- stripping
def _strip(source: str, begin: str, end: str, where: str, placeholder: Optional[str]) -> tuple[str, int]:
    """``source`` without its solution blocks (``placeholder`` in their place, if given) and how many
    blocks there were; ValueError naming ``where`` for an unbalanced marker."""
    out, inside, blocks = [], False, 0
    for line in source.splitlines():
        mark = line.strip()
        if mark == begin:
            if inside:
                raise ValueError(f"{where}: {begin!r} inside another solution block")
            inside, blocks = True, blocks + 1
            if placeholder is not None:
                out.append(line[: len(line) - len(line.lstrip())] + placeholder)
        elif mark == end:
            if not inside:
                raise ValueError(f"{where}: {end!r} without {begin!r}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{where}: {begin!r} without {end!r}")
    return "\n".join(out), blocks


LINK = re.compile(r"\]\((?![a-z]+:|#|/)([^)\s]+\.ipynb)\)")


def _relink(source: str, src_dir: Path, dst_dir: Path) -> str:
    """Relative links to notebooks (``[02_laplace](02_laplace.ipynb)``), rewritten to point from
    ``dst_dir`` at the same files next to the master in ``src_dir``."""
    import os

    if src_dir.resolve() == dst_dir.resolve():
        return source
    return LINK.sub(lambda m: "](" + Path(os.path.relpath(src_dir.resolve() / m[1], dst_dir.resolve())).as_posix() + ")",
                    source)


def student_version(src: Union[str, Path], dst: Union[str, Path]) -> Path:
    """Write the student version of the master notebook ``src`` to ``dst``: solution blocks
    stripped (see the module docstring), outputs and execution counts removed, relative links to
    the chapters rewritten to reach them from ``dst``.  Returns ``dst``."""
    import nbformat

    src, dst = Path(src), Path(dst)
    nb = nbformat.read(src, as_version=4)
    cells = []
    for i, cell in enumerate(nb.cells):
        where = f"{src} cell {i}"
        if cell.cell_type == "code":
            cell.source, _ = _strip(cell.source, BEGIN, END, where, PLACEHOLDER)
            cell.outputs, cell.execution_count = [], None
        elif cell.cell_type == "markdown":
            cell.source, _ = _strip(cell.source, MD_BEGIN, MD_END, where, None)
            if not cell.source.strip():
                continue
            cell.source = _relink(cell.source, src.parent, dst.parent)
        for key in ("papermill", "execution", "ExecuteTime"):
            cell.metadata.pop(key, None)
        cells.append(cell)
    nb.cells = cells
    for key in ("papermill", "widgets"):
        nb.metadata.pop(key, None)
    nbformat.validate(nb)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    nbformat.write(nb, tmp)
    tmp.replace(dst)
    return dst


# ----------------------------------------------------------------------------- reading notebooks
def masters(notebooks_dir: Union[str, Path] = PROJECT_ROOT / "notebooks", only: Sequence[str] = ()) -> List[Path]:
    """The master notebooks ``<notebooks_dir>/<paper>/exercises.ipynb``, in :data:`~fldp.teach.exercises.PAPERS` order,
    those whose paper is in ``only`` when given (ValueError for a paper with none)."""
    root = Path(notebooks_dir)
    unknown = [p for p in only if p not in PAPERS]
    if unknown:
        raise ValueError(f"no exercises for {', '.join(map(repr, unknown))}; the papers are: {', '.join(PAPERS)}")
    found = [root / p / NOTEBOOK for p in PAPERS if (not only or p in only) and (root / p / NOTEBOOK).is_file()]
    if not found:
        raise ValueError(f"no {NOTEBOOK} under {root}/<paper>/ for {', '.join(only or PAPERS)}")
    return found


def check_ids(path: Union[str, Path]) -> List[str]:
    """The exercise ids the notebook's code cells check, in order."""
    import nbformat

    nb = nbformat.read(Path(path), as_version=4)
    return [m for c in nb.cells if c.cell_type == "code" for m in CHECK_CALL.findall(c.source)]


def feedback_in(path: Union[str, Path]) -> Dict[str, str]:
    """What the checks of an executed notebook printed: {exercise id: status}."""
    import nbformat

    nb = nbformat.read(Path(path), as_version=4)
    found: Dict[str, str] = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            text = out.get("text", "") if out.get("output_type") == "stream" else ""
            for m in FEEDBACK_LINE.finditer(text if isinstance(text, str) else "".join(text)):
                found[m["id"]] = m["status"]
    return found


# ----------------------------------------------------------------------------- execution
def execute(src: Union[str, Path], dst: Union[str, Path], *, timeout: float = CELL_TIMEOUT_S,
            kernel_name: Optional[str] = None) -> Optional[str]:
    """Execute ``src`` on the kernel ``fldp`` (papermill, in the notebook's folder, with the
    pipeline's kernel environment) into ``dst``; returns None, or the error in one line."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from fldp.repro import execute as nbexec

    src, dst = Path(src), Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:  # IPC sockets, as fldp reproduce: kernels started in parallel do not race for TCP ports
        with nbexec.environ(nbexec.KERNEL_ENV), tempfile.TemporaryDirectory(prefix="fldp-ex-") as sockets:
            papermill.execute_notebook(str(src), str(dst), kernel_name=kernel_name or nbexec.KERNEL_NAME,
                                       cwd=str(src.parent), execution_timeout=timeout, progress_bar=False,
                                       log_output=False,
                                       kernel_manager_class=nbexec.ipc_kernel_manager(Path(sockets)))
    except PapermillExecutionError as exc:
        return f"cell {exc.exec_count}: {exc.ename}: {nbexec.one_line(exc.evalue)}"
    except Exception as exc:  # cell timeout, dead kernel, ...
        return f"{type(exc).__name__}: {nbexec.one_line(str(exc))}"
    return None


@dataclass
class Built:
    """One notebook written by :func:`build`: where, and, when executed, what its checks said."""

    paper: str
    path: Path
    executed: bool = False
    seconds: float = 0.0
    error: Optional[str] = None
    statuses: Dict[str, str] = field(default_factory=dict)
    expected: str = ""  # the status every check should report when executed

    @property
    def problems(self) -> List[str]:
        """Why this notebook is not as it should be (empty when it is)."""
        if not self.executed:
            return []
        if self.error:
            return [self.error]
        ids = check_ids(self.path)
        return ([f"{i}: no check output" for i in ids if i not in self.statuses]
                + [f"{i}: {s}, not {self.expected}" for i, s in self.statuses.items() if s != self.expected])

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class Job:
    """One notebook to execute: ``src`` into ``dst``; every check should report ``expected``."""

    paper: str
    src: Path
    dst: Path
    expected: str
    timeout: float = CELL_TIMEOUT_S


def run_job(job: Job) -> Built:
    """Execute one :class:`Job` and read back what its checks printed."""
    t0 = time.perf_counter()
    error = execute(job.src, job.dst, timeout=job.timeout)
    statuses = feedback_in(job.dst) if job.dst.is_file() else {}
    return Built(job.paper, job.dst, True, time.perf_counter() - t0, error, statuses, job.expected)


def run_jobs(jobs: Sequence[Job], workers: int = 1) -> List[Built]:
    """:func:`run_job` for each job, ``workers`` at a time (separate processes), results in order."""
    if workers <= 1 or len(jobs) <= 1:
        return [run_job(j) for j in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(run_job, jobs))


def build(out_dir: Union[str, Path, None] = None, *, solutions: bool = False, execute: bool = False,
          only: Sequence[str] = (), notebooks_dir: Union[str, Path] = PROJECT_ROOT / "notebooks",
          jobs: int = 1, timeout: float = CELL_TIMEOUT_S) -> List[Built]:
    """Write ``<out_dir>/<paper>/exercises.ipynb`` for every paper (or those in ``only``).

    ``solutions=False``: the student versions (default ``out_dir`` build/exercises/student); with
    ``execute=True`` each is then executed and should report "not answered yet" everywhere.
    ``solutions=True``: the masters executed (default build/exercises/solutions); every check
    should report "correct".  ``jobs`` notebooks run at a time (separate processes).
    """
    from fldp.repro.execute import check_kernel

    out = Path(out_dir) if out_dir is not None else DEFAULT_OUT[solutions]
    sources = masters(notebooks_dir, only)
    if solutions or execute:
        check_kernel()
    todo, built = [], []
    for src in sources:
        paper, dst = src.parent.name, out / src.parent.name / NOTEBOOK
        if solutions:
            todo.append(Job(paper, src, dst, CORRECT, timeout))
        else:
            student_version(src, dst)
            if execute:
                todo.append(Job(paper, dst, dst, NOT_ANSWERED, timeout))
            else:
                built.append(Built(paper, dst))
    return built + run_jobs(todo, jobs)


def main(args) -> int:
    """``fldp exercises``: build, print one line per notebook; 0 when all are as they should be,
    1 when an executed notebook failed or a check reported the wrong status, 2 for a bad request."""
    try:
        built = build(args.out, solutions=args.solutions, execute=args.execute, only=args.only,
                      notebooks_dir=args.notebooks_dir, jobs=args.jobs, timeout=args.timeout or CELL_TIMEOUT_S)
    except Exception as exc:  # no such paper or notebook, the kernel is missing (execute.UsageError), ...
        print(f"fldp exercises: error: {exc}", file=sys.stderr)
        return 2
    for b in built:
        if not b.executed:
            print(f"student   {b.paper:15s} -> {b.path}")
            continue
        counts = f"{sum(s == b.expected for s in b.statuses.values())}/{len(check_ids(b.path))} {b.expected}"
        print(f"{'ok    ' if b.ok else 'FAILED'}    {b.paper:15s} {counts:28s} {b.seconds:6.1f} s -> {b.path}")
        for problem in b.problems:
            print(f"          {problem}")
    return 0 if all(b.ok for b in built) else 1
