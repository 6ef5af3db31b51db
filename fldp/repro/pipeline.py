"""``fldp reproduce``: plan, execute every chapter headlessly, report.

The jobs live in their own modules: :mod:`.chapters` (which notebooks, their parameters, their
order of dependence), :mod:`.execute` (papermill on the kernel ``fldp``), :mod:`.jobs` (one at a
time or side by side), :mod:`.cluster` (one Dask cluster for every notebook's runs), :mod:`.plan`
(the predicted cost and the progress line) and :mod:`.report` (``build/report.md`` and ``.html``).
A failing notebook is reported with its failing cell; the others still run.  Claims that do not
hold are findings, not errors.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import time
from pathlib import Path

from fldp.data.sources import MissingDataError
from fldp.repro import cost, store
from fldp.repro.chapters import Options, plan
from fldp.repro.cluster import pool_size, shared_cluster
from fldp.repro.execute import Report, UsageError
from fldp.repro.jobs import run_tasks
from fldp.repro.plan import Progress, estimate, render_plan
from fldp.repro.report import write_report

__all__ = ["reproduce"]

def reproduce(opts: Options) -> Report | None:
    """Plan (print what will run, what the store holds and the predicted time), execute and
    report; raises :class:`UsageError` before running anything.  ``opts.plan_only``: print the
    plan and return None."""
    quick, params, tasks = plan(opts)
    if opts.recalibrate or cost.cached_calibration() is None:
        print("fldp reproduce: measuring the cost model on this machine (once; about 15 s)", flush=True)
    try:
        cal = cost.calibrate(refresh=opts.recalibrate)
    except MissingDataError as exc:  # the calibration trains on MNIST, as the notebooks do
        raise UsageError(f"the cost model is measured on MNIST, which is missing here: {exc}") from None
    estimates = estimate(tasks, quick, cal, fresh=store.fresh_default())
    print(render_plan(estimates, opts.jobs, cal), flush=True)
    if opts.plan_only:
        return None
    started, t0 = dt.datetime.now().astimezone(), time.perf_counter()
    print(f"fldp reproduce: {len(tasks)} notebook(s), {'quick' if quick else 'full'} mode, "
          f"kernel {opts.kernel_name!r}, {opts.jobs} job(s)", flush=True)
    workers = pool_size(opts.jobs)
    progress = Progress(estimates, store_root=store.default_store(quick).root)
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
