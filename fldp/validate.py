"""Argument checks shared by every module: one error style everywhere.

Every public function that takes a privacy or FL parameter validates it here, so bad
input fails early with a ``ValueError`` that names the parameter, the value received
and the allowed range, e.g. ``eps=-1 is out of range: eps must be in (0, inf)``.
"""
from __future__ import annotations

import math
from typing import Any, Iterable


def _fail(name: str, value: Any, allowed: str) -> None:
    raise ValueError(f"{name}={value!r} is out of range: {name} must be {allowed}")


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


def integer(name: str, value: int, low: int, high: float = math.inf) -> int:
    """Require an integer in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int,)) and not (
        hasattr(value, "__index__")
    ):
        _fail(name, value, f"an integer in [{low}, {_fmt(high)}]")
    value = int(value)
    if not (low <= value <= high):
        _fail(name, value, f"an integer in [{low}, {_fmt(high)}]")
    return value


def choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """Require one of a fixed set of values (e.g. a dataset or partition name)."""
    allowed = list(allowed)
    if value not in allowed:
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
    return not math.isnan(f) and not isinstance(value, (bool, str))


def _fmt(x: float) -> str:
    return "inf" if x == math.inf else str(int(x))
