"""Execute one notebook headlessly: papermill on the project's Jupyter kernel ``fldp`` (never
another one), over IPC sockets, with the results files it saved collected; a failure names its cell.
In full mode the executed copy is committed to ``results/executed/`` (:func:`keep_executed`), which
the book renders."""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from fldp.repro.paths import PROJECT_ROOT, atomic_write_bytes

__all__ = ["KERNEL_NAME", "MANIFEST_ENV", "KERNEL_ENV", "DEFAULT_CELL_TIMEOUT_S", "EXECUTED", "UsageError",
           "CellError", "Task", "NotebookResult", "Report", "check_kernel", "run_task", "keep_executed",
           "ipc_kernel_manager", "one_line", "environ"]

KERNEL_NAME = "fldp"


#: Env var naming a file to which ``Recorder.save`` appends the path of each results JSON.
MANIFEST_ENV = "FLDP_RUN_MANIFEST"


#: Environment every kernel runs with (headless plotting, stable hashing).
KERNEL_ENV = {"MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}


DEFAULT_CELL_TIMEOUT_S = {False: 14400.0, True: 600.0}  # full mode: the settings map (wei2020/06) is one ~1.5 h cell


#: Where a full-mode ``fldp reproduce`` commits each executed notebook (under the output root,
#: mirroring ``notebooks/``): the book's chapters (:mod:`fldp.repro.book`).
EXECUTED = Path("results") / "executed"


class UsageError(Exception):
    """The request cannot be run (no notebook matched, unknown parameter, no kernel)."""


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
            with environ({**task.env, MANIFEST_ENV: str(manifest)}):
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
    (:mod:`fldp.repro.book`); their figures are links to ``figures/``, not embedded images."""
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
                         one_line(exc.evalue), exc.exec_count)
    except Exception as exc:  # cell timeout, dead kernel, unreadable notebook, ...
        index = _last_started_cell(task.output)
        return CellError(_source_index(index, task.injected_at), type(exc).__name__,
                         one_line(str(exc)))
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


def one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@contextlib.contextmanager
def environ(values: Mapping[str, str]) -> Iterator[None]:
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
