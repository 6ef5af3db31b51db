"""A tiny run function for the sweep tests, importable by worker processes (tests/ on PYTHONPATH)."""
from __future__ import annotations

import os
import time

import numpy as np


def toy(*, x: float, seed: int, sleep: float = 0.0, log: str = "", fail_at: float = float("nan"),
        interrupt_at: float = float("nan")) -> dict:
    """x^2 plus seeded noise and a short curve; logs each start to ``log`` (one line per start).

    Raises ValueError at x == fail_at, and KeyboardInterrupt at x == interrupt_at while the file
    ``log + '.interrupt'`` exists (it is removed, so the resumed sweep passes)."""
    if log:
        with open(log, "a") as fh:
            fh.write(f"start x={x} seed={seed} pid={os.getpid()}\n")
    if x == interrupt_at and os.path.exists(log + ".interrupt"):
        os.remove(log + ".interrupt")
        raise KeyboardInterrupt
    time.sleep(sleep)
    if x == fail_at:
        raise ValueError(f"toy failure at x={x}")
    rng = np.random.default_rng(seed)
    return {"y": float(x * x + rng.normal()), "curve": (x + rng.normal(size=3)).tolist()}


def toy_other(*, x: float, seed: int) -> dict:
    """Another run function with the same arguments (its runs must not share keys with toy's)."""
    return {"y": x + seed}


def toy_pair(*, x: float, seed: int, fail_at: float = float("nan")) -> dict:
    """A run function whose runs train together (``toy_pairs``) over ``seed``."""
    if x == fail_at:
        raise ValueError(f"toy failure at x={x}")
    return {"y": x * 10 + seed, "pid": 0}


def toy_pairs(configs) -> list:
    """The runs of ``toy_pair`` together: the same numbers; logs the group's size to $TOY_LOG."""
    if os.environ.get("TOY_LOG"):
        with open(os.environ["TOY_LOG"], "a") as fh:
            fh.write(f"group {len(configs)}\n")
    return [toy_pair(**c) for c in configs]


toy_pair.together = toy_pairs
toy_pair.together_over = ("seed",)
