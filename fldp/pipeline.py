"""Execute every notebook headlessly on the project's Jupyter kernel and write a report.

:func:`reproduce` finds the notebooks under ``notebooks/``, checks the requested parameters
against each notebook's ``parameters`` cell, runs each one with papermill on the kernel named
``fldp`` (never another one), collects the results JSON that the notebook's
:class:`fldp.results.Recorder` saved, and writes ``build/report.md`` and ``build/report.html``.
In full mode it also commits each executed notebook to ``results/executed/`` (:func:`keep_executed`),
which the book renders (:mod:`fldp.book`).

A failing notebook is reported with its failing cell; the others still run.  Claims that do
not hold are findings, shown as FAIL in the report, not errors.
"""
from __future__ import annotations

import ast
import base64
import re
import contextlib
import dataclasses
import datetime as dt
import html
import json
import multiprocessing
import os
import platform
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from fldp.results import PROJECT_ROOT, atomic_write_bytes

__all__ = [
    "KERNEL_NAME", "MANIFEST_ENV", "EXECUTED", "KERNEL_ENV", "DEFAULT_CELL_TIMEOUT_S", "UsageError", "Options",
    "CellError", "Task", "NotebookResult", "Report", "parse_value", "APPS", "EXERCISES",
    "is_chapter", "discover", "parameter_cell", "check_kernel", "plan", "run_task", "keep_executed",
    "ipc_kernel_manager", "dependencies", "run_tasks", "Estimate", "costs_path", "estimate", "render_plan",
    "Progress", "pool_size", "shared_cluster", "reproduce", "render_markdown", "render_html", "write_report"
]

KERNEL_NAME = "fldp"
#: Env var naming a file to which ``Recorder.save`` appends the path of each results JSON.
MANIFEST_ENV = "FLDP_RUN_MANIFEST"
#: Environment every kernel runs with (headless plotting, stable hashing).
KERNEL_ENV = {"MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
DEFAULT_CELL_TIMEOUT_S = {False: 14400.0, True: 600.0}  # full mode: the settings map (wei2020/06) is one ~1.5 h cell
#: Where a full-mode ``fldp reproduce`` commits each executed notebook (under the output root,
#: mirroring ``notebooks/``): the book's chapters (:mod:`fldp.book`).
EXECUTED = Path("results") / "executed"
_VERSIONS_SHOWN = ("torch", "torchvision", "numpy", "dp-accounting", "papermill")


class UsageError(Exception):
    """The request cannot be run (no notebook matched, unknown parameter, no kernel)."""


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
    recalibrate: bool = False  # measure the cost model again (fldp.cost.calibrate)


@dataclass
class CellError:
    """Why a notebook failed: the cell (index in the source notebook) and the error."""

    cell: int | None
    ename: str
    evalue: str
    execution_count: int | None = None

    def describe(self) -> str:
        where = "before execution" if self.cell is None and self.ename == "ParameterError" \
            else f"cell {self.cell if self.cell is not None else '?'}"
        if self.execution_count is not None:
            where += f" (In [{self.execution_count}])"
        return ": ".join(part for part in (where, self.ename, self.evalue) if part)


@dataclass
class Task:
    """One notebook to execute; plain data so it can be sent to a worker process."""

    index: int
    total: int
    rel: str
    source: Path
    output: Path
    parameters: dict[str, Any]
    timeout: float
    kernel_name: str
    env: dict[str, str]
    injected_at: int | None  # index papermill gives its injected cell (None: no shift)
    problem: str | None = None  # set when the notebook cannot be run as asked
    keep: Path | None = None  # full mode: where the executed copy is committed (the book's source)


@dataclass
class NotebookResult:
    """Outcome of one notebook: status, time, executed copy and the results it saved."""

    rel: str
    output: Path
    seconds: float
    error: CellError | None
    results_files: list[Path]

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class Report:
    quick: bool
    started: dt.datetime
    seconds: float
    build_dir: Path
    params: dict[str, Any]
    notebooks: list[NotebookResult]

    @property
    def ok(self) -> bool:
        return all(nb.ok for nb in self.notebooks)


# --------------------------------------------------------------------------- planning


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
#: (:mod:`fldp.exercises.build`), so ``fldp reproduce`` does not.
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


def check_kernel(name: str = KERNEL_NAME) -> None:
    """Fail clearly when the kernelspec ``name`` is missing or broken (no fallback)."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    manager = KernelSpecManager()
    try:
        spec = manager.get_kernel_spec(name)
    except NoSuchKernel:
        raise UsageError(
            f"Jupyter kernel {name!r} is not installed (searched: "
            f"{', '.join(manager.kernel_dirs)}). Run `make env` to create the environment "
            f"and register the kernel.") from None
    if not shutil.which(spec.argv[0]):
        raise UsageError(f"Jupyter kernel {name!r} points at {spec.argv[0]}, which does not "
                         f"exist. Run `make env` to register it again.")


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
        from fldp.results import PUBLISH_ENV
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


# --------------------------------------------------------------------------- execution


def run_task(task: Task) -> NotebookResult:
    """Execute one notebook (in this process) and collect the results files it saved."""
    print(f"[{task.index}/{task.total}] start   {task.rel}", flush=True)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fldp-run-") as tmp:
        manifest = Path(tmp) / "results-files.txt"
        manifest.touch()
        if task.problem:
            error: CellError | None = CellError(None, "ParameterError", task.problem)
        else:
            with _environ({**task.env, MANIFEST_ENV: str(manifest)}):
                error = _execute(task, Path(tmp))
        results_files = _read_manifest(manifest)
    if error is None and task.keep is not None:
        keep_executed(task.output, task.keep)
    result = NotebookResult(task.rel, task.output, time.perf_counter() - t0, error,
                            results_files)
    status = "ok    " if result.ok else "FAILED"
    detail = f"  -- {error.describe()}" if error else ""
    print(f"[{task.index}/{task.total}] {status}  {task.rel}  {result.seconds:.1f} s{detail}",
          flush=True)
    return result


def keep_executed(executed: Path, dest: Path) -> Path:
    """Commit a full-mode executed notebook: copy it to ``dest`` (atomically) with this machine's
    project folder cut from every path in it (outputs, papermill's metadata), so that the copy
    says ``results/zhou/03_gaussian.json``, not where it ran.  The book renders these copies
    (:mod:`fldp.book`); their figures are links to ``figures/``, not embedded images."""
    text = Path(executed).read_text(encoding="utf-8")
    for root in {str(PROJECT_ROOT), os.environ.get("FLDP_OUTPUT_DIR", "")} - {""}:
        text = text.replace(json.dumps(os.path.abspath(root) + "/")[1:-1], "")
    atomic_write_bytes(Path(dest), text.encode("utf-8"))
    return Path(dest)


def ipc_kernel_manager(folder: Path):
    """A kernel manager class whose kernels talk over local IPC sockets in ``folder`` instead of
    TCP on the loopback: the kernel then has no reason to warn that its traffic is unencrypted
    (which it does, once per notebook, over TCP), and no port is opened."""
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.transport, self.ip = "ipc", str(Path(folder) / "kernel")

    return IPCKernelManager


def _execute(task: Task, sockets: Path) -> CellError | None:
    import papermill
    from papermill.exceptions import PapermillExecutionError

    task.output.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(
            str(task.source), str(task.output), parameters=task.parameters,
            kernel_name=task.kernel_name, cwd=str(task.source.parent),
            execution_timeout=task.timeout, progress_bar=False, log_output=False,
            kernel_manager_class=ipc_kernel_manager(sockets))
    except PapermillExecutionError as exc:
        return CellError(_source_index(exc.cell_index, task.injected_at), exc.ename,
                         _one_line(exc.evalue), exc.exec_count)
    except Exception as exc:  # cell timeout, dead kernel, unreadable notebook, ...
        index = _last_started_cell(task.output)
        return CellError(_source_index(index, task.injected_at), type(exc).__name__,
                         _one_line(str(exc)))
    return None


def _source_index(executed: int | None, injected_at: int | None) -> int | None:
    """Map a cell index in the executed notebook back to the source notebook's."""
    if executed is None or injected_at is None or executed < injected_at:
        return executed
    return None if executed == injected_at else executed - 1


def _last_started_cell(output: Path) -> int | None:
    """Index of the last cell papermill started (the one that hung or killed the kernel)."""
    try:
        cells = json.loads(output.read_text())["cells"]
    except (OSError, ValueError, KeyError):
        return None
    started = [i for i, c in enumerate(cells)
               if c.get("metadata", {}).get("papermill", {}).get("start_time")]
    return started[-1] if started else None


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@contextlib.contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    """Set environment variables (inherited by the kernel) and restore them afterwards."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


def _read_manifest(manifest: Path) -> list[Path]:
    lines = manifest.read_text().splitlines()
    return list(dict.fromkeys(Path(line) for line in lines if line.strip()))


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


def _ordered(tasks: Sequence[Task], deps: Mapping[str, Sequence[str]]) -> list[Task]:
    """The tasks in their order, each moved after what it depends on (a stable topological order);
    :class:`UsageError` for a cycle."""
    out, placed, visiting = [], set(), set()
    by_rel = {t.rel: t for t in tasks}

    def visit(t: Task) -> None:
        if t.rel in placed:
            return
        if t.rel in visiting:
            raise UsageError(f"notebooks load each other's results in a cycle through {t.rel}")
        visiting.add(t.rel)
        for d in deps.get(t.rel, ()):
            if d in by_rel:
                visit(by_rel[d])
        visiting.discard(t.rel)
        placed.add(t.rel)
        out.append(t)
    for t in tasks:
        visit(t)
    return out


def run_tasks(tasks: Sequence[Task], jobs: int = 1, deps: Mapping[str, Sequence[str]] | None = None, *,
              runner=None, executor=None, on_done=None) -> list[NotebookResult]:
    """Run tasks, one at a time or in ``jobs`` worker processes, never one before a task whose
    results it loads (:func:`dependencies`, read from the notebooks when ``deps`` is None);
    results keep the task order.  ``runner`` and ``executor`` replace :func:`run_task` and the
    process pool (tests); ``on_done(rel)`` is called as each task finishes."""
    from concurrent.futures import FIRST_COMPLETED, wait

    runner = runner or run_task
    deps = dependencies(tasks) if deps is None else deps
    order = _ordered(tasks, deps)  # raises for a cycle, so the loop below always finds a ready task
    selected = {t.rel for t in tasks}
    needs = {t.rel: [d for d in deps.get(t.rel, ()) if d in selected] for t in tasks}
    on_done = on_done or (lambda rel: None)
    if jobs <= 1 or len(tasks) <= 1:
        done = {}
        for t in order:
            done[t.rel] = runner(t)
            on_done(t.rel)
        return [done[t.rel] for t in tasks]
    pool = executor or ProcessPoolExecutor(max_workers=min(jobs, len(tasks)),
                                           mp_context=multiprocessing.get_context("spawn"))
    done: dict[str, NotebookResult] = {}
    pending, running = list(order), {}
    with pool:
        while pending or running:
            for t in [t for t in pending if all(d in done for d in needs[t.rel])]:
                if len(running) >= jobs:
                    break
                running[pool.submit(runner, t)] = t
                pending.remove(t)
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                rel = running.pop(future).rel
                done[rel] = future.result()
                on_done(rel)
    return [done[t.rel] for t in tasks]


# --------------------------------------------------------------------------- plan and progress


@dataclass
class Estimate:
    """What one notebook will cost, from the runs it needed last time (``results/costs/``)."""

    rel: str
    known: bool  # a cost record exists (the notebook ran once with run counting)
    runs: int = 0
    held: int = 0  # of them, already in the run store
    how: dict = field(default_factory=dict)  # of the runs to compute, how many were predicted how (cost.run_seconds)
    runs_s: float = 0.0  # predicted seconds of the runs to compute
    kernel_s: float = 0.0  # the notebook's own time, runs aside (measured last time, CPU seconds where kept)
    flops: int = 0  # of the runs to compute
    pending: dict = field(default_factory=dict)  # store path -> predicted seconds, of the runs to compute

    @property
    def seconds(self) -> float:
        return self.runs_s + self.kernel_s


def costs_path(rel: str, quick: bool) -> Path:
    """Where a notebook's cost record is (:attr:`fldp.results.Recorder.costs_path`)."""
    root = os.environ.get("FLDP_OUTPUT_DIR") or (PROJECT_ROOT / "build" / "quick" if quick else PROJECT_ROOT)
    p = Path(rel)  # the notebook at the top of notebooks/ is the baseline's
    return Path(root) / "results" / "costs" / (p.parent.name or "baseline") / f"{p.stem}.json"


def estimate(tasks: Sequence[Task], quick: bool, cal=None, fresh: bool = False) -> list[Estimate]:
    """Per task, the runs it needs (its last cost record), how many the run store holds, and the
    predicted time of the rest (:mod:`fldp.cost`; ``cal`` from :func:`fldp.cost.calibrate`)."""
    from fldp import cost, store as S

    cal = cal or cost.calibrate()
    st = S.default_store(quick)
    out = []
    for t in tasks:
        try:
            record = json.loads(costs_path(t.rel, quick).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            out.append(Estimate(t.rel, False))
            continue
        own = record.get("kernel_cpu_s", record.get("kernel_s"))  # CPU seconds where kept (one thread)
        e = Estimate(t.rel, True, runs=len(record.get("runs", [])), kernel_s=float(own or 0.0))
        there = cost.Calibration.from_dict(record["calibration"]) if record.get("calibration") else None
        if there is not None and own:  # its own time too, moved by the machines' speeds (the MLP rate)
            e.kernel_s *= there.rate.get("MLP", 1.0) / cal.rate.get("MLP", 1.0)
        for run in record.get("runs", []):
            try:
                path = st.path(run["fn"], run["config"])
            except (ImportError, AttributeError, TypeError, ValueError):  # the run function changed
                path = None
            if path is not None and path.exists() and not fresh:
                e.held += 1
                continue
            seconds, how = cost.run_seconds(run, cal, there)
            e.runs_s += seconds
            e.how[how] = e.how.get(how, 0) + 1
            e.flops += cost.total_flops(run.get("work"))
            if path is not None:
                e.pending[str(path)] = seconds
        out.append(e)
    return out


def render_plan(estimates: Sequence[Estimate], jobs: int, cal) -> str:
    """The plan as a table: per notebook runs, held, to compute and the predicted time; the total."""
    from fldp.report import duration

    rows = [f"{'notebook':<38} {'runs':>5} {'stored':>6} {'to run':>6} {'GFLOP':>8} {'predicted':>12}  how"]
    for e in estimates:
        if not e.known:
            rows.append(f"{e.rel:<38} {'?':>5} {'?':>6} {'?':>6} {'?':>8} {'unknown':>12}  "
                        "no cost record (results/costs/): it has not run with run counting yet")
            continue
        todo = e.runs - e.held
        words = {"measured": "by their CPU time", "model": "by the cost model", "last": "by their last wall time"}
        how = [f"{e.how[k]} {w}" for k, w in words.items() if e.how.get(k)] + [f"own {duration(e.kernel_s)}"]
        rows.append(f"{e.rel:<38} {e.runs:>5} {e.held:>6} {todo:>6} {e.flops / 1e9:>8.0f} "
                    f"{duration(e.seconds):>12}  {'; '.join(h for h in how if h)}")
    known = [e for e in estimates if e.known]
    total = sum(e.seconds for e in known)
    unknown = len(estimates) - len(known)
    rates = ", ".join(f"{k} {v:.3g} GFLOP/s" for k, v in cal.rate.items())
    busy = cal.load > 0.5 * (cal.machine.get("cores") or 1)
    rows += ["", f"predicted: {duration(total)} of work" + (f" for {len(known)} notebook(s); {unknown} unknown" if unknown else "")
             + (f"; on {jobs} workers about {duration(total / jobs)}" if jobs > 1 else ""),
             f"cost model ({cal.machine.get('host')}, {cal.machine.get('threads')} thread(s)): {rates}; "
             f"a run's set-up {cal.run_s:.2f} s" + (f"; measured on a busy machine (load {cal.load:.1f}), so the "
                                                     "prediction is pessimistic: --recalibrate measures again" if busy else "")]
    return "\n".join(rows)


class Progress:
    """One progress line over the whole reproduction, in seconds of predicted work, with an ETA: a
    run counts when its file appears in the run store, a notebook when it finishes.  On a terminal
    a tqdm bar (refreshed every few seconds by a thread); otherwise a line after each notebook."""

    def __init__(self, estimates: Sequence[Estimate], *, interval: float = 3.0, stream=None):
        import sys
        import threading

        self.by_rel = {e.rel: e for e in estimates}
        self.total = sum(e.seconds for e in estimates if e.known)
        self.finished: set[str] = set()
        self.stream = stream or sys.stderr
        self.t0, self.started = time.perf_counter(), time.time() - 1.0  # file times: 1 s of slack
        self._stop = threading.Event()
        self.bar = None
        if self.total > 0 and getattr(self.stream, "isatty", lambda: False)():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=round(self.total), unit="s", desc="reproduction (predicted work)",
                            file=self.stream, dynamic_ncols=True)
            self._thread = threading.Thread(target=self._poll, args=(interval,), daemon=True)
            self._thread.start()

    def done_seconds(self) -> float:
        done = 0.0
        for rel, e in self.by_rel.items():
            if not e.known:
                continue
            if rel in self.finished:
                done += e.seconds
            else:  # written since the start (with --fresh the old file is there until it is replaced)
                done += sum(s for path, s in e.pending.items() if _mtime(path) >= self.started)
        return min(done, self.total)

    def _poll(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self.bar.n = round(self.done_seconds())
            self.bar.refresh()

    def finish(self, rel: str) -> None:
        self.finished.add(rel)
        if self.bar is not None:
            self.bar.n = round(self.done_seconds())
            self.bar.refresh()
        elif self.total > 0:
            from fldp.report import duration

            done, spent = self.done_seconds(), time.perf_counter() - self.t0
            eta = spent * (self.total - done) / done if done > 0 else float("nan")
            print(f"progress: {100 * done / self.total:.0f}% of the predicted work after {duration(spent)}; "
                  f"ETA {duration(eta)}", flush=True)

    def close(self) -> None:
        self._stop.set()
        if self.bar is not None:
            self.bar.close()


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return float("-inf")


def pool_size(jobs: int) -> int:
    """How many workers the reproduction's one shared Dask cluster gets (0: none, runs stay in the
    kernels): ``jobs`` when ``--jobs N`` > 1 and no other backend was asked for; with ``--backend
    dask`` always (``--workers``, else ``jobs``, at least 2), so that the notebooks' sweeps share one
    cluster instead of each starting its own."""
    from fldp import sweep

    backend = os.environ.get(sweep.BACKEND_ENV, "")
    if backend == "dask":
        return int(os.environ.get(sweep.WORKERS_ENV) or 0) or max(jobs, 2)
    return jobs if jobs > 1 and backend == "" else 0


@contextlib.contextmanager
def shared_cluster(jobs: int):
    """One Dask cluster of ``jobs`` single-threaded workers for every notebook of a reproduction:
    its address goes to the kernels (``DASK_SCHEDULER_ADDRESS``, ``FLDP_BACKEND=dask``), so that the
    runs of all notebooks share the workers and a run two notebooks need runs once.  An address
    already in ``$DASK_SCHEDULER_ADDRESS`` (``--scheduler``) is used as it is."""
    from fldp import sweep

    if os.environ.get(sweep.SCHEDULER_ENV):
        yield {sweep.BACKEND_ENV: "dask", sweep.SCHEDULER_ENV: os.environ[sweep.SCHEDULER_ENV]}
        return
    from distributed import LocalCluster

    with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        print(f"fldp reproduce: one Dask cluster of {jobs} worker(s) for every notebook's runs at "
              f"{cluster.scheduler_address}", flush=True)
        yield {sweep.BACKEND_ENV: "dask", sweep.SCHEDULER_ENV: cluster.scheduler_address}


def reproduce(opts: Options) -> Report | None:
    """Plan (print what will run, what the store holds and the predicted time), execute and
    report; raises :class:`UsageError` before running anything.  ``opts.plan_only``: print the
    plan and return None."""
    from fldp import cost, store, sweep

    quick, params, tasks = plan(opts)
    if opts.recalibrate or cost.cached_calibration() is None:
        print("fldp reproduce: measuring the cost model on this machine (once; about 15 s)", flush=True)
    cal = cost.calibrate(refresh=opts.recalibrate)
    estimates = estimate(tasks, quick, cal, fresh=store.fresh_default())
    print(render_plan(estimates, opts.jobs, cal), flush=True)
    if opts.plan_only:
        return None
    started, t0 = dt.datetime.now().astimezone(), time.perf_counter()
    print(f"fldp reproduce: {len(tasks)} notebook(s), {'quick' if quick else 'full'} mode, "
          f"kernel {opts.kernel_name!r}, {opts.jobs} job(s)", flush=True)
    workers = pool_size(opts.jobs)
    progress = Progress(estimates)
    try:
        with (shared_cluster(workers) if workers else contextlib.nullcontext({})) as env:
            tasks = [dataclasses.replace(t, env={**t.env, **env}) for t in tasks]
            results = run_tasks(tasks, opts.jobs, on_done=progress.finish)
    finally:
        progress.close()
    report = Report(quick, started, time.perf_counter() - t0, Path(opts.build_dir), params,
                    results)
    md, page = write_report(report)
    failed = [r.rel for r in results if not r.ok]
    print(f"{len(results) - len(failed)}/{len(results)} notebook(s) ok in "
          f"{report.seconds:.1f} s; report: {md} and {page}", flush=True)
    if failed:
        print("FAILED: " + ", ".join(failed), flush=True)
    return report


# --------------------------------------------------------------------------- report


@dataclass
class _Saved:
    """What one results JSON holds, resolved for the report."""

    path: Path
    figures: list[Path]
    claims: list[dict[str, Any]]
    problem: str | None = None


def _load_saved(path: Path) -> _Saved:
    try:
        payload = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        return _Saved(path, [], [], f"cannot read {path}: {exc}")
    root = Path(path).parents[2]  # <root>/results/<paper>/<notebook>.json
    figures = [root / f for f in payload.get("figures", [])]
    return _Saved(path, figures, list(payload.get("claims", [])))


def _link(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


def _claim_counts(saved: Sequence[_Saved]) -> str:
    from fldp.report import tally_text
    return tally_text([c for s in saved for c in s.claims])


def _versions() -> str:
    found = []
    for name in _VERSIONS_SHOWN:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return f"Python {platform.python_version()}, " + ", ".join(found)


def _header(report: Report) -> list[tuple[str, str]]:
    n_ok = sum(r.ok for r in report.notebooks)
    return [
        ("Mode", "quick (CI size)" if report.quick else "full"),
        ("Date", report.started.isoformat(timespec="seconds")),
        ("Total time", f"{report.seconds:.1f} s"),
        ("Notebooks", f"{n_ok}/{len(report.notebooks)} ok"),
        ("Parameters", ", ".join(f"{k}={v!r}" for k, v in report.params.items()) or "none"),
        ("Environment", f"{_versions()}; {platform.platform()}"),
    ]


def render_markdown(report: Report, saved: Mapping[str, list[_Saved]]) -> str:
    """The report as Markdown, links relative to the build folder."""
    base, cell = report.build_dir, (lambda s: str(s).replace("|", "\\|"))
    lines = ["# Reproduction report", ""]
    lines += [f"- **{k}:** {v}" for k, v in _header(report)]
    lines += ["", "| Notebook | Status | Time | Claims |", "|---|---|---|---|"]
    for nb in report.notebooks:
        lines.append(f"| {cell(nb.rel)} | {'ok' if nb.ok else '**FAILED**'} | "
                     f"{nb.seconds:.1f} s | {_claim_counts(saved[nb.rel])} |")
    for nb in report.notebooks:
        lines += ["", f"## {nb.rel}", "",
                  f"- Status: {'ok' if nb.ok else '**FAILED** at ' + nb.error.describe()}",
                  f"- Run time: {nb.seconds:.1f} s",
                  f"- Executed notebook: [{_link(nb.output, base)}](<{_link(nb.output, base)}>)"]
        lines += [f"- Problem: {p}" for p in _problems(nb, saved[nb.rel])]
        claims = [c for s in saved[nb.rel] for c in s.claims]
        if claims:
            from fldp.report import claims_table
            lines += ["", *claims_table(claims)]
        figures = [f for s in saved[nb.rel] for f in s.figures]
        if figures:
            lines += ["", "Figures:", ""]
            lines += [f"- [{_link(f, base)}](<{_link(f, base)}>)" for f in figures]
    return "\n".join(lines) + "\n"


def _problems(nb: NotebookResult, saved: Sequence[_Saved]) -> list[str]:
    problems = [s.problem for s in saved if s.problem]
    problems += [f"figure {f} is missing" for s in saved for f in s.figures if not f.exists()]
    if nb.ok and not saved:
        problems.append("no results file was saved (does the notebook call Recorder.save()?)")
    return problems


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .5em;
vertical-align:top;text-align:left}.holds,.ok{color:#176317;font-weight:bold}
.fails,.FAILED{color:#b00020;font-weight:bold}.inconclusive{color:#8a5a00}img{max-width:100%;border:1px solid #eee}"""


def render_html(report: Report, saved: Mapping[str, list[_Saved]]) -> str:
    """The same report as one self-contained HTML page (figures embedded as data URIs)."""
    esc, base = html.escape, report.build_dir
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>fldp reproduction "
           f"report</title><style>{_CSS}</style></head><body><h1>Reproduction report</h1><ul>"]
    out += [f"<li><b>{esc(k)}:</b> {esc(v)}</li>" for k, v in _header(report)]
    out.append("</ul><table><tr><th>Notebook</th><th>Status</th><th>Time</th>"
               "<th>Claims</th></tr>")
    for nb in report.notebooks:
        status = "ok" if nb.ok else "FAILED"
        out.append(f"<tr><td><a href='#{esc(nb.rel)}'>{esc(nb.rel)}</a></td>"
                   f"<td class='{status}'>{status}</td><td>{nb.seconds:.1f} s</td>"
                   f"<td>{esc(_claim_counts(saved[nb.rel]))}</td></tr>")
    out.append("</table>")
    for nb in report.notebooks:
        status = "ok" if nb.ok else f"FAILED at {nb.error.describe()}"
        out.append(f"<h2 id='{esc(nb.rel)}'>{esc(nb.rel)}</h2><ul>"
                   f"<li>Status: <span class='{'ok' if nb.ok else 'FAILED'}'>{esc(status)}"
                   f"</span></li><li>Run time: {nb.seconds:.1f} s</li><li>Executed notebook: "
                   f"<a href='{esc(_link(nb.output, base))}'>{esc(_link(nb.output, base))}</a>"
                   "</li>")
        out += [f"<li>Problem: {esc(p)}</li>" for p in _problems(nb, saved[nb.rel])]
        out.append("</ul>")
        claims = [c for s in saved[nb.rel] for c in s.claims]
        if claims:
            from fldp.report import CLAIM_COLUMNS, claim_cells
            out.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in CLAIM_COLUMNS) + "</tr>")
            for claim in claims:
                row = claim_cells(claim)
                out.append(f"<tr><td class='{row[0].split(':')[0]}'>{esc(row[0])}</td>"
                           + "".join(f"<td>{esc(x)}</td>" for x in row[1:]) + "</tr>")
            out.append("</table>")
        out += [_figure_html(f, base) for s in saved[nb.rel] for f in s.figures]
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _figure_html(path: Path, base: Path) -> str:
    link = html.escape(_link(path, base))
    if not path.exists():
        return f"<p>missing figure: {link}</p>"
    data = base64.b64encode(path.read_bytes()).decode()
    return (f"<figure><img src='data:image/png;base64,{data}' alt='{link}'>"
            f"<figcaption><a href='{link}'>{link}</a></figcaption></figure>")


def write_report(report: Report) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into the build folder, atomically."""
    saved = {nb.rel: [_load_saved(p) for p in nb.results_files] for nb in report.notebooks}
    md, page = report.build_dir / "report.md", report.build_dir / "report.html"
    atomic_write_bytes(md, render_markdown(report, saved).encode())
    atomic_write_bytes(page, render_html(report, saved).encode())
    return md, page
