"""One Dask cluster for a whole reproduction: every notebook's runs share its single-threaded
workers (``fldp reproduce --jobs N``)."""
from __future__ import annotations

import contextlib
import os

from fldp.repro import sweep

__all__ = ["pool_size", "shared_cluster"]

def pool_size(jobs: int) -> int:
    """How many workers the reproduction's one shared Dask cluster gets (0: none, runs stay in the
    kernels): ``jobs`` when ``--jobs N`` > 1 and no other backend was asked for; with ``--backend
    dask`` always (``--workers``, else ``jobs``, at least 2), so that the notebooks' sweeps share one
    cluster instead of each starting its own."""
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
    if os.environ.get(sweep.SCHEDULER_ENV):
        yield {sweep.BACKEND_ENV: "dask", sweep.SCHEDULER_ENV: os.environ[sweep.SCHEDULER_ENV]}
        return
    from distributed import LocalCluster

    with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        print(f"fldp reproduce: one Dask cluster of {jobs} worker(s) for every notebook's runs at "
              f"{cluster.scheduler_address}", flush=True)
        yield {sweep.BACKEND_ENV: "dask", sweep.SCHEDULER_ENV: cluster.scheduler_address}
