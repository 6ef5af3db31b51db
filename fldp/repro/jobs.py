"""The order of a reproduction's notebooks: one at a time or ``jobs`` side by side in worker
processes, never one before a notebook whose results it loads."""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Mapping, Sequence

from fldp.repro.chapters import dependencies
from fldp.repro.execute import NotebookResult, Task, UsageError, run_task

__all__ = ["run_tasks"]

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
    try:
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
    except BaseException:  # Ctrl-C (or a failure here): stop the notebooks now, not when they end
        _stop(pool)
        raise
    pool.shutdown(wait=True)
    return [done[t.rel] for t in tasks]


def _stop(pool) -> None:
    """Cancel the queued notebooks and end the running ones' worker processes (their kernels shut
    down when their parent goes; finished runs are in the store).  A ``with`` block would instead
    wait for every running notebook to finish, hours for a long one."""
    terminate = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        terminate()
        return
    # Before 3.14, concurrent.futures has no public way to end a running task: its processes
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
