"""Archived runs recomputed and compared with the archive, exactly: ``fldp store verify``.

Every run is seeded and, as under ``fldp reproduce``, computed on one thread, so the same code gives
the same numbers; a run function whose output changed without a ``store_version`` bump is caught
here, with the run, its notebook and the first value that differs."""
from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

from fldp.repro import store
from fldp.repro.archive import Archive

__all__ = ["Mismatch", "differences", "first_difference", "verify"]


@dataclass(frozen=True)
class Mismatch:
    """An archived run that recomputed differently: where, and the first value that differs."""

    notebook: str
    fn: str
    key: str
    where: str
    archived: Any
    recomputed: Any

    def __str__(self) -> str:
        return (f"{self.notebook}: {self.fn} run {self.key}: at {self.where or '(the result)'} the archive has "
                f"{self.archived!r}, the code gives {self.recomputed!r}")


def differences(a: Any, b: Any, where: str = "", *, ignore: frozenset = frozenset()) -> Iterator[tuple[str, Any, Any]]:
    """Every place two JSON values differ, in key order, as (path, a, b): a key in ``ignore`` is
    skipped at any depth, a missing key is ``"<missing>"``, a list of another length is one
    difference, NaN equals NaN and 1 differs from 1.0 (another type is another value)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k in ignore:
                continue
            if k not in a or k not in b:
                yield f"{where}/{k}", a.get(k, "<missing>"), b.get(k, "<missing>")
            else:
                yield from differences(a[k], b[k], f"{where}/{k}", ignore=ignore)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{where} (length)", len(a), len(b)
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                yield from differences(x, y, f"{where}[{i}]", ignore=ignore)
    elif not ((a == b and type(a) is type(b)) or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)):
        yield where, a, b


def first_difference(a: Any, b: Any, where: str = "") -> Optional[tuple[str, Any, Any]]:
    """The first place two JSON values differ (:func:`differences`), or None when they are equal."""
    return next(differences(a, b, where), None)


def _can_run_here(run: dict) -> bool:
    """Whether this machine has the device the run was computed on (a run with ``device="cuda"``
    in its configuration, e.g. a paper-size run made on a lent GPU, needs CUDA)."""
    device = str(run.get("config", {}).get("device", "cpu"))
    if device.startswith("cuda"):
        import torch

        return torch.cuda.is_available()
    return True


def verify(archive: Archive, *, only: Sequence[str] = (), sample: Optional[int] = None,
           budget_s: Optional[float] = None, seed: int = 0, cost: Optional[Callable[[Any], float]] = None,
           progress: Optional[Callable[[str], None]] = None) -> tuple[int, list[Mismatch]]:
    """Recompute archived runs and compare them with the archive, exactly (every run is seeded and,
    under ``fldp reproduce``, single-threaded: the same code gives the same numbers).  ``sample``:
    that many runs drawn at random (``seed``); ``budget_s``: the cheapest first (``cost(run)``
    predicted seconds) until the budget is spent; neither: every run.  A run computed on a device
    this machine lacks (``device="cuda"`` without CUDA) is skipped, and ``progress`` says how many.
    Returns (runs checked, mismatches)."""
    from fldp import seeding  # torch is imported by the first call, not by the command line

    runs = list(archive.runs(only))
    elsewhere = [nr for nr in runs if not _can_run_here(nr[1])]
    if elsewhere and progress:
        progress(f"skipped  {len(elsewhere)} run(s) computed on a device this machine lacks "
                 f"({', '.join(sorted({str(r['config'].get('device')) for _, r in elsewhere}))})")
    runs = [nr for nr in runs if _can_run_here(nr[1])]
    if sample is not None:
        runs = random.Random(seed).sample(runs, min(int(sample), len(runs)))
    if budget_s is not None:
        runs.sort(key=lambda nr: cost(nr[1]) if cost else 0.0)
    mismatches, checked, t0 = [], 0, time.perf_counter()
    with seeding.one_thread():
        for nb, run in runs:
            if budget_s is not None and checked and time.perf_counter() - t0 >= budget_s:
                break
            fresh = store.normalise(store.resolve(run["fn"])(**run["config"]))
            checked += 1
            diff = first_difference(run["result"], fresh)
            if diff:
                mismatches.append(Mismatch(nb, run["fn"], run["key"], *diff))
            if progress:
                progress(f"{'MISMATCH' if diff else 'same    '} {nb}: {run['fn']} {run['key'][:12]}")
    return checked, mismatches
