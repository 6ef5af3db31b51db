"""The engine's work, counted as it trains, and the CPU seconds of a block of code.

:func:`fldp.engine.local_train`, :func:`fldp.engine.round_step` and :func:`fldp.engine.evaluate`
add the work they do to this process's :data:`COUNTER`: per model (``"MLP/203530"``: class and
parameter count) the FLOPs (samples x :meth:`fldp.models.Model.flops_per_sample`, padding included),
the local steps, the parameter elements the steps and rounds work through, and the evaluated
samples.  :func:`measure` takes the difference around a block (a run), with its CPU seconds.  Why
count rather than profile (torch.profiler, fvcore's FLOP counter): a profiler traces every operator
and slows the run it measures; the count is a multiplication per step, cheap enough to be always on.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Optional

__all__ = ["Counter", "COUNTER", "Measured", "measure", "cpu_mark", "own_cpu_s", "total_flops"]


@dataclass
class Counter:
    """Work done in this process, per model: ``{"MLP/203530": {"flops", "steps", "elems", "eval"}}``
    (``elems``: parameter elements that steps and rounds work through, memory-bound)."""

    work: dict = field(default_factory=dict)

    def _of(self, model) -> dict:
        return self.work.setdefault(f"{type(model).__name__}/{model.dim}",
                                    {"flops": 0, "steps": 0, "elems": 0, "eval": 0})

    def add(self, model, samples: int, *, train: bool, rows: int = 0) -> None:
        """``samples`` forward (+ backward when ``train``) passes of ``model``; a train call is a
        step, on ``rows`` parameter rows (clients) of ``model.dim`` elements each."""
        w = self._of(model)
        w["flops"] += int(samples) * model.flops_per_sample(train=train)
        if train:
            w["steps"] += 1
            w["elems"] += int(rows) * model.dim
        else:
            w["eval"] += int(samples)

    def add_elems(self, model, rows: int) -> None:
        """Element-wise work of a round on ``rows`` parameter rows: uploads, clipping, noise, aggregation."""
        self._of(model)["elems"] += int(rows) * model.dim

    def snapshot(self) -> dict:
        return {k: dict(v) for k, v in self.work.items()}

    def since(self, before: Mapping[str, Mapping[str, int]]) -> dict:
        """The work done since ``before`` (a :meth:`snapshot`), models without any left out."""
        out = {}
        for k, v in self.work.items():
            d = {m: v[m] - before.get(k, {}).get(m, 0) for m in v}
            if any(d.values()):
                out[k] = d
        return out


#: This process's counter (the engine adds to it).
COUNTER = Counter()


@dataclass
class Measured:
    """What :func:`measure` saw: the engine's ``work`` and this process's CPU seconds (``cpu_s``: a
    single-threaded run's cost, which other processes on the same cores do not inflate as they
    do its wall time)."""

    work: dict = field(default_factory=dict)
    cpu_s: float = 0.0


_MEASURED_CPU = [0.0]  # CPU seconds of all measure() blocks of this process (own_cpu_s leaves them out)


@contextlib.contextmanager
def measure() -> Iterator[Measured]:
    """``with measure() as m: ...``: ``m.work`` and ``m.cpu_s`` hold what the block did."""
    before, cpu0, m = COUNTER.snapshot(), time.process_time(), Measured()
    try:
        yield m
    finally:
        m.work.update(COUNTER.since(before))
        m.cpu_s = time.process_time() - cpu0
        _MEASURED_CPU[0] += m.cpu_s


def own_cpu_s(since: tuple[float, float]) -> float:
    """CPU seconds this process spent since ``since`` (a :func:`cpu_mark`) outside the runs it
    computed itself: a notebook's own cost, its runs aside."""
    return max(0.0, (time.process_time() - since[0]) - (_MEASURED_CPU[0] - since[1]))


def cpu_mark() -> tuple[float, float]:
    return time.process_time(), _MEASURED_CPU[0]


def total_flops(work: Optional[Mapping[str, Mapping[str, int]]]) -> int:
    return sum(int(v.get("flops", 0)) for v in (work or {}).values())
