"""Argument checks shared by every module: one error style everywhere.

Every public function that takes a privacy or FL parameter validates it here, so bad
input fails early with a ``ValueError`` that names the parameter, the value received
and the allowed range, e.g. ``eps=-1 is out of range: eps must be in (0, inf)``.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Iterable

import numpy as np

__all__ = [
    "positive", "nonnegative", "open_unit", "probability", "real", "array", "integer", "choice"
]


def _fail(name: str, value: Any, allowed: str, why: str | None = None) -> None:
    raise ValueError(f"{name}={value!r} is out of range: {name} must be {allowed}"
                     + (f" ({why})" if why else ""))


def positive(name: str, value: float) -> float:
    """Require a finite real number > 0."""
    if not _is_real(value) or not (value > 0) or math.isinf(value):
        _fail(name, value, "in (0, inf)")
    return float(value)


def nonnegative(name: str, value: float) -> float:
    """Require a finite real number >= 0."""
    if not _is_real(value) or not (value >= 0) or math.isinf(value):
        _fail(name, value, "in [0, inf)")
    return float(value)


def open_unit(name: str, value: float) -> float:
    """Require a real number in the open interval (0, 1), e.g. delta."""
    if not _is_real(value) or not (0 < value < 1):
        _fail(name, value, "in (0, 1)")
    return float(value)


def probability(name: str, value: float) -> float:
    """Require a real number in [0, 1]."""
    if not _is_real(value) or not (0 <= value <= 1):
        _fail(name, value, "in [0, 1]")
    return float(value)


def real(name: str, value: float, *, allow_inf: bool = False) -> float:
    """Require a real number of any sign: finite, or also +-inf with ``allow_inf``."""
    if not _is_real(value) or (math.isinf(value) and not allow_inf):
        _fail(name, value, "a real number" if allow_inf else "a finite real number")
    return float(value)


def array(name: str, value: Any, check: Callable[[str, Any], Any]) -> np.ndarray:
    """Require a number or a non-empty array of numbers, each passing ``check`` (one of the
    scalar helpers above, e.g. :func:`nonnegative`; an element is named ``name[i]``).
    Returns a float array (0-d for a number).

    ``check`` is an interval check, so a numeric numpy array (a grid of T, say) is checked
    through its NaN, smallest and largest elements only; anything else element by element."""
    if np.ndim(value) == 0:
        check(name, value)
        return np.asarray(value, dtype=float)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf" and value.size:
        flat = value.ravel()
        nan = np.flatnonzero(np.isnan(flat)) if value.dtype.kind == "f" else ()
        for i in (nan[0],) if len(nan) else (int(np.argmin(flat)), int(np.argmax(flat))):
            check(f"{name}[{', '.join(map(str, np.unravel_index(i, value.shape)))}]", flat[i].item())
        return np.asarray(value, dtype=float)
    try:
        items = np.asarray(value, dtype=object)
    except ValueError:  # ragged nesting
        _fail(name, value, "a number or a rectangular array of numbers")
    if items.size == 0:
        raise ValueError(f"{name} is empty: {name} must hold at least one value")
    for idx, x in np.ndenumerate(items):
        check(f"{name}[{', '.join(map(str, idx))}]", x)
    return np.asarray(value, dtype=float)


def integer(name: str, value: int, low: int, high: float = math.inf, *, why: str | None = None) -> int:
    """Require an integer in [low, high] (a Python or numpy integer, not a bool).  ``why`` names
    the other parameter a bound comes from, e.g. ``why="K <= N"``; it ends the message."""
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        value = operator.index(value)  # ints, numpy integers; not floats, not arrays
    except TypeError:
        _fail(name, value, f"an integer in [{low}, {_fmt(high)}]")
    if not (low <= value <= high):
        _fail(name, value, f"an integer in [{low}, {_fmt(high)}]", why)
    return value


def choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """Require one of a fixed set of values (e.g. a dataset or partition name)."""
    allowed = list(allowed)
    try:  # a bool is not the integer 1 (unless a bool is allowed); an array is no choice
        found = (not isinstance(value, (bool, np.bool_)) or any(isinstance(a, bool) for a in allowed)) \
            and any(value is a or (not isinstance(value, np.ndarray) and value == a) for a in allowed)
    except (TypeError, ValueError):
        found = False
    if not found:
        raise ValueError(
            f"{name}={value!r} is not supported: {name} must be one of "
            + ", ".join(repr(a) for a in allowed)
        )
    return value


def _is_real(value: Any) -> bool:
    try:
        f = float(value)
    except (TypeError, ValueError):
        return False
    return not math.isnan(f) and not isinstance(value, (bool, np.bool_, str, bytes))


def _fmt(x: float) -> str:
    return "inf" if x == math.inf else str(int(x))
