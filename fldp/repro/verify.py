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

__all__ = ["ROUNDING_TOL", "Mismatch", "differences", "rounding_only", "failing", "first_difference", "verify"]


#: Two results that differ only by float rounding (another processor's kernels, :func:`rounding_only`):
#: every differing number within this relative or absolute distance.  A float32 loss moves in its
#: 7th digit, a PLD accountant's float64 eps in its 11th, and an accuracy on 10,000 test images by
#: 1e-4 a flipped image; a change of the code moves them by more.
ROUNDING_TOL = 1e-3


@dataclass(frozen=True)
class Mismatch:
    """An archived run that recomputed differently: where, and the first value that differs;
    ``rounding``: every difference is within :data:`ROUNDING_TOL` (:func:`rounding_only`)."""

    notebook: str
    fn: str
    key: str
    where: str
    archived: Any
    recomputed: Any
    rounding: bool = False

    def __str__(self) -> str:
        return (f"{self.notebook}: {self.fn} run {self.key}: at {self.where or '(the result)'} the archive has "
                f"{self.archived!r}, the code gives {self.recomputed!r}"
                + (" (every difference within float rounding)" if self.rounding else ""))


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


def rounding_only(diffs) -> bool:
    """Whether every difference ``(where, a, b)`` is two numbers within :data:`ROUNDING_TOL`
    (relative or absolute): what the same code gives on a processor whose kernels round otherwise."""
    import math

    def close(a, b) -> bool:
        return (isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)
                and not isinstance(b, bool) and math.isfinite(a) and math.isfinite(b)
                and math.isclose(a, b, rel_tol=ROUNDING_TOL, abs_tol=ROUNDING_TOL))
    return all(close(a, b) for _, a, b in diffs)


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


def failing(mismatches: Sequence[Mismatch], changed: dict) -> list:
    """The mismatches that say the code changed: all of them where the notebook's runs were
    archived in this very environment (``changed[notebook]`` empty: there the numbers must be
    exact), and those beyond float rounding elsewhere (another processor's kernels, another
    library version: :data:`ROUNDING_TOL`)."""
    return [m for m in mismatches if not (m.rounding and changed.get(m.notebook))]


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

    runs, elsewhere = [], []
    for nr in archive.runs(only):
        (runs if _can_run_here(nr[1]) else elsewhere).append(nr)
    if elsewhere and progress:
        progress(f"skipped  {len(elsewhere)} run(s) computed on a device this machine lacks "
                 f"({', '.join(sorted({str(r['config'].get('device')) for _, r in elsewhere}))})")
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
            diffs = list(differences(run["result"], fresh))
            if diffs:
                mismatches.append(Mismatch(nb, run["fn"], run["key"], *diffs[0], rounding=rounding_only(diffs)))
            if progress:
                said = ("ROUNDING" if mismatches[-1].rounding else "MISMATCH") if diffs else "same    "
                progress(f"{said} {nb}: {run['fn']} {run['key'][:12]}")
    return checked, mismatches
