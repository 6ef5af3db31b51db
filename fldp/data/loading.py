"""A data set by name: the official files (:mod:`fldp.data.sources`) or FEMNIST's writers
(:mod:`fldp.data.femnist`, which builds on the sources)."""
from __future__ import annotations

from fldp import validate
from fldp.data.femnist import load_femnist
from fldp.data.sources import DATASETS, Dataset, load_official, standardize

__all__ = ["load"]


def load(name: str, *, download: bool = True) -> Dataset:
    """Load ``mnist``, ``fashion-mnist``, ``adult`` or ``femnist`` (cached in memory per process).
    ``femnist``: all training rows pooled, standardised with their own pixel mean and std (see
    :func:`fldp.data.femnist.load_femnist`; the writers are in ``load_femnist().writers``)."""
    validate.choice("dataset", name, DATASETS)
    if name == "femnist":  # load_femnist keeps its own cache, keyed to the files
        return standardize(load_femnist().dataset)
    return load_official(name, download=download)
