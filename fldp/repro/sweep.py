"""Sweeps: a parameter grid expanded into runs, each run once, resumable, on any backend.
:func:`expand` turns a grid ``{"eps": [50, 60], "seed": [0, 1, 2]}`` (plus fixed settings) into
configurations; :func:`run_all` runs ``fn(**config)`` for each through a
:class:`fldp.repro.store.RunStore`: finished runs are read back, the others run on a backend
(``"inprocess"``, ``"processes"`` or ``"dask"``, local or on an existing cluster: its docstring
says how) and are stored as each finishes, so an interrupted sweep resumes with nothing lost and
nothing run twice.  Only this process writes the store: results travel back from the workers, so
a remote cluster needs no shared file system.  :func:`run_one` runs one configuration (on the
reproduction's cluster when there is one), :func:`run_settings` and :func:`seed_summaries` a
set of settings over seeds; ``fldp sweep`` is the command line.  The environment variables
``FLDP_BACKEND``, ``FLDP_WORKERS`` and ``DASK_SCHEDULER_ADDRESS`` set the defaults, so notebooks
executed by ``fldp reproduce --backend dask --workers 2`` distribute their runs unchanged.  Runs
of a function with ``fn.together`` go to the workers in groups (:func:`together_jobs`), trained
side by side and stored each under its own key, with the numbers each returns alone.
"""
from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, List, Mapping, Optional, Sequence, Union

from fldp import counting, validate
from fldp.repro import store as S

__all__ = [
    "BACKENDS", "BACKEND_ENV", "WORKERS_ENV", "SCHEDULER_ENV", "expand", "Failure",
    "SchedulerUnreachable", "SweepError", "Outcome", "TOGETHER_MAX", "together_jobs", "run_all", "run_one", "run_settings", "seed_summaries"
]

BACKENDS = ("inprocess", "processes", "dask")
BACKEND_ENV, WORKERS_ENV, SCHEDULER_ENV = "FLDP_BACKEND", "FLDP_WORKERS", "DASK_SCHEDULER_ADDRESS"


def expand(grid: Mapping[str, Sequence[Any]], base: Optional[Mapping[str, Any]] = None) -> List[dict]:
    """Every combination of the grid's values (last key varies fastest), each merged into ``base``."""
    base = dict(base or {})
    for name, values in grid.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise ValueError(f"grid[{name!r}]={values!r} is out of range: a grid entry is a list of values")
        if name in base:
            raise ValueError(f"{name!r} is both a grid entry and a fixed setting; give it once")
    names = list(grid)
    return [{**base, **dict(zip(names, combo))} for combo in itertools.product(*(list(grid[n]) for n in names))]


@dataclass(frozen=True)
class Failure:
    config: dict
    error: str

    def __str__(self) -> str:
        return f"{self.config}: {self.error}"


class SchedulerUnreachable(ConnectionError):
    """The Dask scheduler given (``--scheduler`` or ``$DASK_SCHEDULER_ADDRESS``) does not answer."""


class SweepError(RuntimeError):
    """Some runs failed (the others finished and are stored)."""

    def __init__(self, failures: Sequence[Failure]):
        self.failures = list(failures)
        super().__init__(f"{len(self.failures)} run(s) failed:\n" + "\n".join(f"  {f}" for f in self.failures))


@dataclass
class Outcome:
    """Results in the order of the configurations (None where a run failed), and the seconds each
    run took when it ran (also for runs read back from the store: its record keeps them)."""

    results: List[Any]
    run_seconds: List[Optional[float]] = field(default_factory=list)
    ran: int = 0
    reused: int = 0
    failures: List[Failure] = field(default_factory=list)
    seconds: float = 0.0
    backend: str = "inprocess"


def _execute(name: str, config: dict, threads: int = 0):
    """Run ``name(**config)`` in a worker; returns (normalised result, seconds, its cost: the
    engine's ``work`` and ``cpu_s``, :func:`fldp.counting.measure`)."""
    if threads:
        import torch

        torch.set_num_threads(threads)
    t0 = time.perf_counter()
    with counting.measure() as m:
        result = S.resolve(name)(**config)
    return S.normalise(result), time.perf_counter() - t0, {"work": m.work, "cpu_s": m.cpu_s}


def _execute_together(name: str, configs: List[dict], threads: int = 0, alone: str = "") -> list:
    """Run the group ``name(configs)`` in a worker (``fn.together`` of the sweep's function
    ``alone``); returns per run ``(normalised result, seconds, cost)`` as :func:`_execute`, the
    group's seconds, CPU time and counted work shared equally among its runs (they have one
    shape).  If the group raises, each run is run alone, so that one bad configuration fails
    alone: an entry is then an exception."""
    if threads:
        import torch

        torch.set_num_threads(threads)
    t0 = time.perf_counter()
    try:
        with counting.measure() as m:
            results = S.resolve(name)(configs)
    except Exception:
        out = []
        for c in configs:
            try:
                out.append(_execute(alone, c))
            except Exception as exc:
                out.append(exc)
        return out
    n = len(configs)
    share = {model: {k: v / n for k, v in counts.items()} for model, counts in m.work.items()}
    seconds = (time.perf_counter() - t0) / n
    return [(S.normalise(r), seconds, {"work": share, "cpu_s": m.cpu_s / n}) for r in results]


#: The most runs one group of :func:`together_jobs` holds (memory grows with it, the gain does not).
TOGETHER_MAX = 16


def together_jobs(fn: Callable, configs: Sequence[Mapping[str, Any]], todo: Sequence[int], workers: int) -> List[List[int]]:
    """The sweep's runs ``todo`` (indices into ``configs``) as jobs for the workers: one run per
    job, or, when ``fn`` says how its runs train together (``fn.together``, a function of a list
    of configurations, and ``fn.together_over``, the arguments they may differ in), groups of
    runs equal in every other argument, ordered by seed (runs of a seed share sampled batches),
    at most :data:`TOGETHER_MAX` runs and at most an equal share of the runs per worker, so that
    every worker has work."""
    if getattr(fn, "together", None) is None or len(todo) < 2:
        return [[i] for i in todo]
    over = set(fn.together_over)
    groups: dict = {}
    for i in todo:
        full = S.full_config(fn, configs[i])
        groups.setdefault(S.canonical({k: v for k, v in full.items() if k not in over}), []).append(i)
    size = max(1, min(TOGETHER_MAX, -(-len(todo) // workers)))
    jobs = []
    for ids in groups.values():
        ids = sorted(ids, key=lambda i: (str(configs[i].get("seed")), i))
        jobs += [ids[a:a + size] for a in range(0, len(ids), size)]
    return jobs


def backend_settings(backend, workers, scheduler):
    """``(backend, workers, scheduler)`` with the environment's defaults filled in: a scheduler
    address (``$DASK_SCHEDULER_ADDRESS``) implies ``"dask"``, else ``$FLDP_BACKEND`` or
    ``"inprocess"``; ``$FLDP_WORKERS`` or 2 workers."""
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    backend = backend or os.environ.get(BACKEND_ENV) or ("dask" if scheduler else "inprocess")
    validate.choice("backend", backend, BACKENDS)
    workers = workers or int(os.environ.get(WORKERS_ENV) or 2)
    return backend, validate.integer("workers", workers, 1), scheduler


def run_all(fn: Union[Callable, str], configs: Sequence[Mapping[str, Any]], *, store: S.RunStore,
            backend: Optional[str] = None, workers: Optional[int] = None, scheduler: Optional[str] = None,
            fresh: Optional[bool] = None, progress: bool = True, raise_on_failure: bool = True,
            on_finish: Optional[Callable[[dict, Any], None]] = None) -> Outcome:
    """``fn(**config)`` for every configuration, through ``store``: finished runs are read back,
    the others run on ``backend`` and are stored as each finishes (by this process only: results
    travel back from the workers).

    Backends (what ``fldp sweep --backend`` takes too):

    - ``"inprocess"`` (default): one after another in this process;
    - ``"processes"``: ``workers`` local processes (``concurrent.futures``, spawned);
    - ``"dask"``: Dask distributed, on a new local cluster of ``workers`` single-threaded worker
      processes, or on an existing cluster by address (``scheduler="tcp://host:8786"``, or the
      ``DASK_SCHEDULER_ADDRESS`` environment variable); a worker that dies has its runs
      rescheduled on the others.  (dask-jobqueue users start a SLURMCluster and pass its
      scheduler address.)

    ``backend``, ``workers`` and ``scheduler`` default to ``$FLDP_BACKEND``, ``$FLDP_WORKERS``
    (2) and ``$DASK_SCHEDULER_ADDRESS`` (:func:`backend_settings`).  A run that raises is
    reported with its configuration and the others go on; :class:`SweepError` lists the
    failures at the end (unless ``raise_on_failure=False``).  ``fresh=True`` (default
    ``$FLDP_FRESH``) ignores stored runs and overwrites them.  ``on_finish(config, result)`` is
    called in this process as each run is stored.
    """
    from tqdm.auto import tqdm

    name = S.fn_name(fn)
    backend, workers, scheduler = backend_settings(backend, workers, scheduler)
    fresh = S.fresh_default() if fresh is None else fresh
    configs = [dict(c) for c in configs]
    store.remove_stale_temporaries()
    t0 = time.perf_counter()
    out = Outcome([None] * len(configs), [None] * len(configs), backend=backend)
    todo = []
    for i, cfg in enumerate(configs):
        rec = None if fresh else store.load(name, cfg)
        if rec is None:
            todo.append(i)
        else:
            out.results[i], out.run_seconds[i], out.reused = rec.result, rec.seconds, out.reused + 1
    keys = {i: S.run_key(name, configs[i]) for i in todo}
    seen: dict = {}
    for i in todo:  # the same configuration twice in one sweep runs once
        seen.setdefault(keys[i], []).append(i)
    unique = [ids[0] for ids in seen.values()]
    bar = tqdm(total=len(unique), desc=f"runs ({backend})", disable=not progress or not unique, leave=False)

    def done(i, result=None, seconds=0.0, spent=None, error=None):
        ids = seen[keys[i]]
        if error is not None:
            out.failures.append(Failure(configs[i], error))
            print(f"run failed: {configs[i]}: {' '.join(str(error).split())}", flush=True)
        else:
            try:
                rec = store.save(name, configs[i], result, seconds, **(spent or {}))
            except OSError as exc:  # a full disk, a store that went away: reported like a failed run
                done(i, error=f"the run finished but could not be stored in {store.root}: {exc}")
                return
            for j in ids:
                out.results[j], out.run_seconds[j] = rec.result, rec.seconds
            out.ran += 1
            if on_finish:
                on_finish(configs[i], rec.result)
        bar.update(1)

    f = S.resolve(name)
    jobs = together_jobs(f, configs, unique, 1 if backend == "inprocess" else workers)
    together = S.fn_name(f.together) if any(len(j) > 1 for j in jobs) else ""

    def finish(job, outcome):  # outcome: an exception, or what _execute(_together) returned
        if isinstance(outcome, Exception):
            outcome = [outcome] * len(job)
        elif len(job) == 1 and not isinstance(outcome, list):
            outcome = [outcome]
        for i, each in zip(job, outcome):
            if isinstance(each, Exception):  # reported with its configuration; the others go on
                done(i, error=f"{type(each).__name__}: {each}")
            else:
                done(i, *each)

    t_run = time.perf_counter()
    try:
        if backend == "inprocess" or not unique:
            for job in jobs:
                try:
                    outcome = _job(name, together, configs, job)
                except Exception as exc:
                    outcome = exc
                finish(job, outcome)
        elif backend == "processes":
            _run_processes(name, together, configs, jobs, workers, finish)
        else:
            _run_dask(name, together, configs, jobs, workers, scheduler, finish, keys)
    finally:
        bar.close()
        S.waited(time.perf_counter() - t_run if unique else 0.0)
    out.seconds = time.perf_counter() - t0
    if out.failures and raise_on_failure:
        raise SweepError(out.failures)
    return out


def run_one(fn: Callable, config: Mapping[str, Any], *, store: S.RunStore, fresh: Optional[bool] = None) -> Any:
    """``fn(**config)`` through ``store``: on the shared Dask cluster of ``fldp reproduce --jobs N``
    when its address is set (``$DASK_SCHEDULER_ADDRESS`` with ``$FLDP_BACKEND=dask``), so that a
    notebook's kernel does not compute beside the cluster's workers on the same cores; otherwise in
    this process (:meth:`fldp.repro.store.RunStore.run`)."""
    if os.environ.get(BACKEND_ENV) == "dask" and os.environ.get(SCHEDULER_ENV):
        return run_all(fn, [dict(config)], store=store, fresh=fresh, progress=False).results[0]
    return store.run(fn, config, fresh=fresh)


def run_settings(fn: Callable, settings: Mapping[Any, Mapping[str, Any]], seeds: Sequence[int], *,
                 store: Optional[S.RunStore]) -> dict:
    """``fn(**setting, seed=s)`` for every setting and seed, in ONE :func:`run_all` call (so a
    parallel backend runs them side by side; plain calls when ``store`` is None), as
    ``{key: [result for each seed]}``, the results as the store gives them back."""
    seeds = [int(s) for s in seeds]
    configs = [dict(settings[k], seed=s) for k in settings for s in seeds]
    if store is None:
        outs = [S.normalise(fn(**c)) for c in configs]
    else:
        outs = run_all(fn, configs, store=store, progress=False).results
    return {k: outs[i * len(seeds):(i + 1) * len(seeds)] for i, k in enumerate(settings)}


def seed_summaries(fn: Callable, settings: Mapping[Any, Mapping[str, Any]], seeds: Sequence[int], *,
                   store: Optional[S.RunStore], row: Callable[[dict], Mapping[str, Any]],
                   extra: Optional[Callable[[Any, list, dict], Mapping[str, Any]]] = None) -> dict:
    """The paper modules' runs over seeds, in one shape: :func:`run_settings` (every setting at
    every seed in ONE :func:`run_all` call), then per setting :func:`fldp.verdicts.over_seeds` of
    ``row(result)`` (the metrics to summarise, a dict per run; a metric missing from some runs,
    e.g. runs stored before it was kept, is left out), ``"seeds"`` (the seeds, in order) and
    ``extra(key, results, summary)`` (what else the setting's summary keeps, e.g. the first seed's
    calibration).  Returns ``{key: summary}``."""
    import numpy as np

    from fldp import verdicts

    seeds, summaries = list(seeds), {}
    for k, outs in run_settings(fn, settings, seeds, store=store).items():
        rows = [row(o) for o in outs]
        keys = [m for m in rows[0] if all(m in r for r in rows)]
        out = verdicts.over_seeds(lambda i: {m: rows[i][m] for m in keys}, range(len(outs)))
        summaries[k] = {**out, "seeds": np.asarray(list(seeds)), **(extra(k, outs, out) if extra else {})}
    return summaries


def _job(name: str, together: str, configs: Sequence[dict], job: List[int], threads: int = 0):
    """Run one job of :func:`together_jobs` here: one run (:func:`_execute`) or a group
    (:func:`_execute_together`)."""
    if len(job) == 1:
        return _execute(name, configs[job[0]], threads)
    return _execute_together(together, [configs[i] for i in job], threads, name)


def _run_processes(name, together, configs, jobs, workers, finish) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_job, name, together, [configs[i] for i in job], list(range(len(job))), 1): job
                   for job in jobs}
        for fut in as_completed(futures):
            try:
                outcome = fut.result()
            except Exception as exc:
                outcome = exc
            finish(futures[fut], outcome)


def _run_dask(name, together, configs, jobs, workers, scheduler, finish, keys) -> None:
    from distributed import Client, LocalCluster, as_completed

    cluster = None if scheduler else LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                  host="127.0.0.1", dashboard_address=None)
    try:  # how long to wait for a scheduler to answer: $FLDP_DASK_TIMEOUT (default 30 s)
        client = Client(scheduler or cluster, timeout=os.environ.get("FLDP_DASK_TIMEOUT", "30s"))
    except (OSError, TimeoutError) as exc:
        if cluster is not None:
            cluster.close()
        raise SchedulerUnreachable(f"cannot reach the Dask scheduler at {scheduler or 'the local cluster'}: "
                                   f"{' '.join(str(exc).split()) or type(exc).__name__}") from exc
    try:
        futures = {client.submit(_job, name, together, [configs[i] for i in job], list(range(len(job))), 1,
                                 key=f"fldp-run-{keys[job[0]]}" + (f"-{len(job)}" if len(job) > 1 else ""),
                                 pure=False): job for job in jobs}
        for fut in as_completed(futures):
            try:
                outcome = fut.result()
            except Exception as exc:  # the run raised, or its workers kept dying (KilledWorker)
                outcome = exc
            finish(futures[fut], outcome)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
