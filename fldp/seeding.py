"""One key function for every random stream of fldp: common random numbers across settings.

A run has one integer seed.  Every random choice in the package (the data split, the
initial model, each round's selection, **each client's** batches and noise, an attack's
shadow split, an audit's trials ...) draws from its own generator, derived from the seed and
a path that names the choice: ``(seed, purpose, round, client)``.  Nothing offsets seeds by
hand, and no draw depends on which *other* clients were selected, how many there are or how
the noise is set.  So two runs that differ in one setting (eps, K, the clipping bound) and
share a seed see the same data, the same initial model and the same batches for every
client in every round in which it trains: their difference is paired, and the register
judges orderings on those paired differences (:mod:`fldp.verdicts`).

The derivation is numpy's ``SeedSequence`` (entropy ``[seed, purpose id, *path]``), the
field's standard for independent streams; purposes are registered in :data:`PURPOSES` so a
typo fails instead of silently opening a new stream.
"""
from __future__ import annotations

import contextlib
import functools
from typing import Iterator, Union

import numpy as np
import torch

__all__ = ["PURPOSES", "key", "torch_generator", "numpy_rng", "one_thread"]

#: Every stream of the package, with a fixed id (never renumber: it would change every result).
PURPOSES = {
    # the engine (fldp.engine)
    "init": 1, "select": 2, "batch": 3, "uplink": 4, "downlink": 5, "dropout": 6,
    # data (fldp.data)
    "partition": 20, "subsample": 21, "writers": 22,
    # attacks (fldp.attacks)
    "attack_split": 30, "attack_fit": 31, "attack_balance": 32, "shadow_noise": 33,
    # audit and the equal-privacy comparison (fldp.audit, fldp.equal_privacy)
    "audit_split": 40, "audit_releases": 41, "audit_client": 42,
    # estimates and measurements (fldp.curvature, fldp.papers.*.constants/estimate, fldp.sensitivity)
    "hessian_start": 50, "hessian_rows": 51, "sensitivity": 52,
    # paper-specific simulations (fldp.papers.*)
    "trials": 60, "descent": 61,
}


def key(seed: int, purpose: str, *path: int) -> int:
    """The 63-bit seed of the stream ``purpose`` at ``path`` (e.g. round, client) of run ``seed``."""
    if purpose not in PURPOSES:
        raise ValueError(f"purpose={purpose!r} is out of range: purpose must be one of {sorted(PURPOSES)}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise ValueError(f"seed={seed!r} is out of range: seed must be an integer >= 0")
    return _key((int(seed), PURPOSES[purpose]) + tuple(int(p) for p in path))


@functools.lru_cache(maxsize=1 << 16)
def _key(entropy: tuple) -> int:
    """numpy's SeedSequence hash of ``entropy`` (about 25 us a call): kept for the runs of a
    group (:func:`fldp.engine.run_many`), whose noise streams of one seed are the same keys."""
    state = np.random.SeedSequence(list(entropy)).generate_state(1, np.uint64)[0]
    return int(state & 0x7FFF_FFFF_FFFF_FFFF)


def torch_generator(seed: int, purpose: str, *path: int,
                    device: Union[str, torch.device] = "cpu") -> torch.Generator:
    """A :class:`torch.Generator` on ``device`` seeded with :func:`key`."""
    return torch.Generator(device=device).manual_seed(key(seed, purpose, *path))


def numpy_rng(seed: int, purpose: str, *path: int) -> np.random.Generator:
    """A numpy :class:`~numpy.random.Generator` seeded with :func:`key`."""
    return np.random.default_rng(key(seed, purpose, *path))


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Compute on one torch thread, as every run computes under ``fldp reproduce`` (one and two
    threads differ in the 7th digit), and restore the thread count after: what recomputing or
    timing a run against its archived numbers needs."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
