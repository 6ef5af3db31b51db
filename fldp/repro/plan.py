"""What a reproduction will cost before it runs, and how far it is while it runs: per notebook the
runs it needed last time (its cost record, ``results/costs/``), how many the run store holds, the
predicted time of the rest (:mod:`fldp.repro.cost`), and one progress line with an ETA."""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from fldp import counting
from fldp.repro import cost, store as S
from fldp.repro.execute import Task
from fldp.repro.paths import PROJECT_ROOT
from fldp.repro.report import duration

__all__ = ["Estimate", "costs_path", "estimate", "render_plan", "Progress"]

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
    stale: int = 0  # archived runs of this notebook whose key no longer matches the code (recomputed)

    @property
    def seconds(self) -> float:
        return self.runs_s + self.kernel_s


#: The quick-mode cost records a fresh clone plans with (a quick run writes its own under build/quick/;
#: refresh these from there: ``cp -r build/quick/results/costs/* results/costs/quick/``).
QUICK_COSTS = PROJECT_ROOT / "results" / "costs" / "quick"


def costs_path(rel: str, quick: bool) -> Path:
    """Where a notebook's cost record is (:attr:`fldp.repro.results.Recorder.costs_path`); in quick
    mode, when no quick run has written one here yet, the committed one (:data:`QUICK_COSTS`)."""
    root = os.environ.get("FLDP_OUTPUT_DIR") or (PROJECT_ROOT / "build" / "quick" if quick else PROJECT_ROOT)
    p = Path(rel)  # the notebook at the top of notebooks/ is the baseline's
    paper = p.parent.name or "baseline"
    path = Path(root) / "results" / "costs" / paper / f"{p.stem}.json"
    if quick and not path.exists() and not os.environ.get("FLDP_OUTPUT_DIR"):
        committed = QUICK_COSTS / paper / f"{p.stem}.json"
        return committed if committed.exists() else path
    return path


def estimate(tasks: Sequence[Task], quick: bool, cal=None, fresh: bool = False) -> list[Estimate]:
    """Per task, the runs it needs (its last cost record), how many the run store holds, and the
    predicted time of the rest (:mod:`fldp.repro.cost`; ``cal`` from :func:`fldp.repro.cost.calibrate`)."""
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
                held = st.holds(run["fn"], run["config"])  # in the local store or the run archive
            except (ImportError, AttributeError, TypeError, ValueError):  # the run function changed
                path, held = None, False
            if held and not fresh:
                e.held += 1
                continue
            seconds, how = cost.run_seconds(run, cal, there)
            e.runs_s += seconds
            e.how[how] = e.how.get(how, 0) + 1
            e.flops += counting.total_flops(run.get("work"))
            if path is not None:
                e.pending[str(path)] = seconds
        e.stale = stale_archived(st, t.rel)
        out.append(e)
    return out


def stale_archived(st, rel: str) -> int:
    """How many of the notebook's archived runs the code would no longer find: their function is
    gone or its key (configuration with today's defaults, ``store_version``) changed."""
    if st.archive is None:
        return 0
    p = Path(rel)
    nb = f"{p.parent.name or 'baseline'}/{p.stem}"
    stale = 0
    for _, run in st.archive.runs([nb]):
        try:
            stale += S.run_key(run["fn"], run["config"]) != run["key"]
        except (ImportError, AttributeError, TypeError, ValueError):
            stale += 1
    return stale


def render_plan(estimates: Sequence[Estimate], jobs: int, cal) -> str:
    """The plan as a table: per notebook runs, held, to compute and the predicted time; the total."""
    rows = [f"{'notebook':<38} {'runs':>5} {'stored':>6} {'to run':>6} {'GFLOP':>8} {'predicted':>12}  how"]
    for e in estimates:
        if not e.known:
            rows.append(f"{e.rel:<38} {'?':>5} {'?':>6} {'?':>6} {'?':>8} {'unknown':>12}  "
                        "no cost record (results/costs/): it has not run with run counting yet")
            continue
        todo = e.runs - e.held
        words = {"measured": "by their CPU time", "model": "by the cost model", "last": "by their last wall time"}
        how = [f"{e.how[k]} {w}" for k, w in words.items() if e.how.get(k)] + [f"own {duration(e.kernel_s)}"]
        if e.stale:
            how.append(f"{e.stale} archived run(s) no longer match the code")
        rows.append(f"{e.rel:<38} {e.runs:>5} {e.held:>6} {todo:>6} {e.flops / 1e9:>8.0f} "
                    f"{duration(e.seconds):>12}  {'; '.join(h for h in how if h)}")
    known = [e for e in estimates if e.known]
    total = sum(e.seconds for e in known)
    unknown = len(estimates) - len(known)
    rates = ", ".join(f"{k} {v:.3g} GFLOP/s" for k, v in cal.rate.items())
    busy = cal.load > 0.5 * (cal.machine.get("cores") or 1)
    rows += ["", "runs: the runs it used last time (its cost record); stored: of them, in the run store or the run "
             "archive; GFLOP: the engine's counted work of the runs to compute; how: how their time is predicted "
             "(their CPU time when they last ran, moved to this machine; the cost model from their counted work; "
             "their last wall time) and the notebook's own time outside its runs",
             f"predicted: {duration(total)} of work" + (f" for {len(known)} notebook(s); {unknown} unknown" if unknown else "")
             + (f"; on {jobs} workers about {duration(total / jobs)}" if jobs > 1 else ""),
             f"cost model ({cal.machine.get('host')}, {cal.machine.get('threads')} thread(s)): {rates}; "
             f"a run's set-up {cal.run_s:.2f} s" + (f"; measured on a busy machine (load {cal.load:.1f}), so the "
                                                     "prediction is pessimistic: --recalibrate measures again" if busy else "")]
    return "\n".join(rows)


class Progress:
    """One progress line over the whole reproduction, in seconds of predicted work, with an ETA: a
    run counts when its file appears in the run store, a notebook when it finishes.  On a terminal
    a tqdm bar (refreshed every few seconds by a thread); otherwise a line after each notebook and,
    inside a long one, every ``line_interval`` seconds in which its runs made progress (a log
    shows that zhou/04 is computing, not stuck).  With ``store_root`` (the run store's folder) the
    line also counts the runs written there since the start, and a reproduction of notebooks
    without a cost record (no prediction, no ETA) still prints a line whenever that count grows."""

    def __init__(self, estimates: Sequence[Estimate], *, interval: float = 3.0, line_interval: float = 60.0,
                 stream=None, store_root: Optional[Path] = None):
        import sys
        import threading

        self.by_rel = {e.rel: e for e in estimates}
        self.total = sum(e.seconds for e in estimates if e.known)
        self.finished: set[str] = set()
        self.store_root = None if store_root is None else Path(store_root)
        self._counted = 0
        # lines without a terminal: a prediction to count against, or the runs of unknown notebooks
        self._lines = self.total > 0 or (self.store_root is not None and bool(self._unknown()))
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
        elif self._lines:
            self._shown = 0.0
            self._thread = threading.Thread(target=self._poll_lines, args=(line_interval,), daemon=True)
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

    def computed(self) -> int:
        """Runs written to the run store since the start (0 without ``store_root``)."""
        if self.store_root is None:
            return 0
        return sum(1 for path in self.store_root.glob("*/*.json") if _mtime(path) >= self.started)

    def _unknown(self) -> list[str]:
        return [rel.removesuffix(".ipynb") for rel, e in self.by_rel.items() if not e.known and rel not in self.finished]

    def _poll_lines(self, interval: float) -> None:
        while not self._stop.wait(interval):
            counted = self.computed() if self.total == 0 else None
            if self.done_seconds() > self._shown or (counted is not None and counted > self._counted):
                self._line(counted)

    def _line(self, counted: Optional[int] = None) -> None:
        """Print the line; ``counted``: :meth:`computed`, when the caller has just counted."""
        done, spent, unknown = self.done_seconds(), time.perf_counter() - self.t0, self._unknown()
        self._shown = done
        if self.store_root is not None:
            self._counted = self.computed() if counted is None else counted
        runs = f"{self._counted} run(s) computed" if self.store_root is not None else ""
        if self.total == 0:  # nothing has a prediction: count the runs
            print(f"progress: {runs} after {duration(spent)}" + (f"; no ETA: {len(unknown)} notebook(s) without a "
                  f"cost record ({', '.join(unknown)})" if unknown else ""), flush=True)
            return
        eta = spent * (self.total - done) / done if done > 0 else float("nan")
        print(f"progress: {100 * done / self.total:.0f}% of the predicted work after {duration(spent)}; "
              f"ETA {duration(eta)}" + (f" for it, besides {len(unknown)} notebook(s) of unknown cost "
                                        f"({', '.join(unknown)})" if unknown else "")
              + (f"; {runs}" if runs else ""), flush=True)

    def finish(self, rel: str) -> None:
        self.finished.add(rel)
        if self.bar is not None:
            self.bar.n = round(self.done_seconds())
            self.bar.refresh()
        elif self._lines:
            self._line()

    def close(self) -> None:
        self._stop.set()
        if self.bar is not None:
            self.bar.close()


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return float("-inf")
