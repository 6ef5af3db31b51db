"""Datasets and federated partitions.

``from fldp import data`` gives the whole public API; it lives in five modules:

* :mod:`fldp.data.sources`: the data directory (``data/`` or ``$FLDP_DATA_DIR``), the
  official files each data set needs, loading MNIST / Fashion-MNIST (through torchvision,
  decompressed into a cache keyed to the files) and UCI Adult, :class:`Dataset`,
  :class:`MissingDataError` (names each missing file and where to put it), and the pixel
  scales (:func:`unit_pixels`, :func:`standardize`);
* :mod:`fldp.data.partitions`: :func:`partition`, which training rows each client holds,
  reproducible from ``seed``;
* :mod:`fldp.data.federated`: :class:`FederatedData` (the client rows stored flat, unequal
  sizes kept), :func:`federate`, :func:`federated_dataset` (load, subsample, split) and
  :func:`cached_federated` (the same, cached per process: the paper modules' one loader);
* :mod:`fldp.data.femnist`: FEMNIST (Zhou et al., Sec. VII-A), never downloaded: LEAF's JSON
  files or EMNIST ByClass when they are in the data directory (:func:`load_femnist`,
  :func:`femnist_available`), and LEAF's writers grouped into clients (:func:`group_writers`);
* :mod:`fldp.data.loading`: :func:`load`, a data set by name (the official ones or FEMNIST).
"""
from __future__ import annotations

from fldp.data.federated import CACHED_SPLITS, FederatedData, cached_federated, federate, federated_dataset
from fldp.data.femnist import (EMNIST_FILES, EMNIST_URL, FEMNIST_CLASSES, FEMNIST_DIRICHLET_ALPHA, FEMNIST_GROUPINGS,
                      FEMNIST_SCHEMES, FEMNIST_SOURCES, LEAF_URL, FemnistData, femnist_available, femnist_source,
                      group_writers, load_femnist)
from fldp.data.loading import load
from fldp.data.partitions import CLIENTS_PER_CLASS, PARTITIONS, partition
from fldp.data.sources import (ADULT_COLUMNS, ADULT_CONTINUOUS, ADULT_FILES, ADULT_ROWS, DATASETS, IMAGE_DATASETS,
                      IMAGE_FILES, OFFICIAL_DATASETS, PROJECT_ROOT, Dataset, MissingDataError, cache_dir, data_dir, load_adult, load_official,
                      standardize, unit_pixels)

__all__ = [
    # sources
    "PROJECT_ROOT", "IMAGE_FILES", "ADULT_FILES", "ADULT_ROWS", "IMAGE_DATASETS", "DATASETS", "ADULT_COLUMNS",
    "ADULT_CONTINUOUS", "MissingDataError", "data_dir", "cache_dir", "Dataset", "OFFICIAL_DATASETS", "load_official",
    "load_adult", "load",
    "unit_pixels", "standardize",
    # partitions
    "PARTITIONS", "CLIENTS_PER_CLASS", "partition",
    # federated
    "FederatedData", "federate", "federated_dataset", "cached_federated", "CACHED_SPLITS",
    # femnist
    "FEMNIST_CLASSES", "FEMNIST_SOURCES", "FEMNIST_SCHEMES", "FEMNIST_GROUPINGS", "FEMNIST_DIRICHLET_ALPHA",
    "LEAF_URL", "EMNIST_URL", "EMNIST_FILES", "FemnistData", "femnist_source", "femnist_available",
    "load_femnist", "group_writers",
]
