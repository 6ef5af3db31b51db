"""Data sets as read from disk: where the files live, how they are loaded, and their pixel scales.
Data live in a data directory (:func:`data_dir`: ``data/`` at the project root by default, or the
folder named by ``$FLDP_DATA_DIR``), as exactly the official releases: :func:`load_official`
lists the files it expects and reads MNIST and Fashion-MNIST through ``torchvision.datasets``,
UCI Adult by :func:`load_adult` (FEMNIST: :mod:`fldp.data.femnist`).  The decompressed images are
cached under ``$FLDP_CACHE_DIR`` (:func:`cache_dir`) in a folder keyed to the source files, so
another data directory or a replaced file never reuses them.  A file that is missing is
downloaded when the network answers; otherwise :class:`MissingDataError` names each missing file
and the exact path to put it at.  A :class:`Dataset` holds flat float32 features and int64
labels for train and test; :func:`unit_pixels` and :func:`standardize` move image pixels between
[0, 1] and zero mean, unit variance.
"""
from __future__ import annotations

import contextlib
import csv
import functools
import hashlib
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from fldp import PROJECT_ROOT, seeding, validate

__all__ = ["PROJECT_ROOT", "IMAGE_FILES", "ADULT_FILES", "ADULT_ROWS", "IMAGE_DATASETS", "DATASETS",
           "ADULT_COLUMNS", "ADULT_CONTINUOUS", "MissingDataError", "data_dir", "cache_dir", "Dataset",
           "OFFICIAL_DATASETS", "load_official", "load_adult", "unit_pixels", "standardize"]


IMAGE_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
               "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
ADULT_FILES = ("adult.data", "adult.test")
ADULT_ROWS = (32561, 16281)  # the official files' records (Li, Chang, Chi 2020, Sec. 5)
# dataset name -> (folder under the data dir, torchvision class name, normalisation mean/std)
IMAGE_DATASETS = {
    "mnist": ("mnist", "MNIST", 0.1307, 0.3081),
    "fashion-mnist": ("fashion-mnist", "FashionMNIST", 0.2860, 0.3530),
}
OFFICIAL_DATASETS = (*IMAGE_DATASETS, "adult")
DATASETS = (*OFFICIAL_DATASETS, "femnist")


class MissingDataError(ValueError):
    """A data file is missing and cannot be downloaded; the message says where to put it."""


def data_dir() -> Path:
    """The data directory: ``$FLDP_DATA_DIR``, or ``data/`` at the project root."""
    return Path(os.environ.get("FLDP_DATA_DIR", PROJECT_ROOT / "data"))


def cache_dir() -> Path:
    """The cache directory: ``$FLDP_CACHE_DIR``, or ``.cache/`` at the project root."""
    return Path(os.environ.get("FLDP_CACHE_DIR", PROJECT_ROOT / ".cache"))


def _network_available(urls: list[str], timeout: float = 3.0) -> bool:
    """True when one of the dataset's download hosts accepts a connection."""
    from urllib.parse import urlparse

    for url in urls:
        u = urlparse(url)
        try:
            socket.create_connection((u.hostname, u.port or (443 if u.scheme == "https" else 80)),
                                     timeout=timeout).close()
            return True
        except OSError:
            continue
    return False


def _missing_message(name: str, folder: Path, missing: list[str]) -> str:
    lines = [f"dataset {name!r}: {len(missing)} file(s) missing and no network to download them."]
    lines += [f"  put {f} at {folder / f}" for f in missing]
    lines.append("(the official files; set FLDP_DATA_DIR to use another data directory; "
                 "see data/README.md)")
    return "\n".join(lines)


@dataclass(frozen=True)
class Dataset:
    """Features ``x`` (float32, flattened) and integer labels ``y`` for train and test.

    ``pixel_stats``: the (mean, std) the pixels were standardised with, when they were and
    the dataset is not one of ``IMAGE_DATASETS`` (whose constants are fixed); used by
    :func:`unit_pixels`."""

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    pixel_stats: tuple[float, float] | None = None

    @property
    def num_features(self) -> int:
        return self.x_train.shape[1]

    @property
    def num_classes(self) -> int:
        return int(self.y_train.max()) + 1


def load_official(name: str, *, download: bool = True) -> Dataset:
    """Load ``mnist``, ``fashion-mnist`` or ``adult`` from their official files (cached in memory
    per process); :func:`fldp.data.load` also knows ``femnist``.  Expected files, in the data
    directory (:func:`data_dir`), exactly the official releases::

        <data>/mnist/{train,t10k}-images-idx3-ubyte.gz, {train,t10k}-labels-idx1-ubyte.gz
        <data>/fashion-mnist/  the same four names (Fashion-MNIST)
        <data>/adult/adult.data, adult.test                 (UCI Adult)
        <data>/femnist/{train,test}/*.json                  (LEAF FEMNIST; or <data>/emnist/
                                                             emnist-byclass-*: see fldp.data.femnist)

    Images are read by ``torchvision.datasets`` (MNIST / FashionMNIST): the ``.gz`` files are
    linked into a torchvision root under ``$FLDP_CACHE_DIR`` (default ``.cache/``), where
    torchvision checks their md5 and decompresses them.  That root is keyed to its sources
    (``torchvision/<name>-<hash>``, the hash of each file's resolved path, size and mtime, or
    its absence), so another data directory or a replaced file gets a fresh folder and never
    the files decompressed from an earlier source; the same files reached through another path
    share one.  When a file is missing and the network answers (and ``download``), torchvision
    downloads it into that folder; otherwise :class:`MissingDataError` names each missing file
    and the exact path to put it at."""
    validate.choice("dataset", name, OFFICIAL_DATASETS)
    return _load_cached(name, download)


@functools.lru_cache(maxsize=4)
def _load_cached(name: str, download: bool) -> Dataset:
    return load_adult() if name == "adult" else _load_images(name, download)


def _source_stamp(folder: Path) -> list:
    """What the decompressed cache of an image dataset depends on: for each official file,
    its resolved path, size and mtime in ``folder`` (or None when it is not there)."""
    stamp = []
    for f in IMAGE_FILES:
        src = folder / f
        try:
            st = src.stat()
        except OSError:
            stamp.append([f, None])
            continue
        stamp.append([f, str(src.resolve()), st.st_size, st.st_mtime_ns])
    return stamp


def _torchvision_root(name: str, folder: Path) -> Path:
    """The torchvision root for ``name`` read from ``folder``: one folder per source stamp,
    ``$FLDP_CACHE_DIR/torchvision/<name>-<hash of the stamp>``.  Other source files (another
    data directory, files replaced or touched) get another folder, never the old files;
    the same files reached through another path (a link) share it."""
    key = hashlib.sha256(json.dumps(_source_stamp(folder)).encode()).hexdigest()[:16]
    return cache_dir() / "torchvision" / f"{name}-{key}"


@contextlib.contextmanager
def file_lock(path: Path):
    """An exclusive lock on ``path`` (processes that share a cache folder take turns)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            yield
            return
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _load_images(name: str, download: bool) -> Dataset:
    import torchvision

    folder_name, cls_name, mean, std = IMAGE_DATASETS[name]
    folder = data_dir() / folder_name
    root = _torchvision_root(folder_name, folder)
    cls = getattr(torchvision.datasets, cls_name)
    raw = root / cls_name / "raw"
    with file_lock(root / ".lock"):
        raw.mkdir(parents=True, exist_ok=True)
        done = root / ".complete"
        if not done.exists():  # a new folder, or an earlier decompression did not finish
            for f in IMAGE_FILES:
                out = raw / Path(f).stem
                if out.exists():
                    out.unlink()
        missing = []
        for f in IMAGE_FILES:
            src, dst = folder / f, raw / f
            if src.exists():
                if not (dst.is_symlink() and dst.resolve() == src.resolve()):
                    if dst.is_symlink() or dst.exists():
                        dst.unlink()
                    dst.symlink_to(src.resolve())
            elif not dst.exists():  # only a file downloaded into this folder stands in for it
                missing.append(f)
        if missing and not (download and _network_available(list(cls.mirrors))):
            raise MissingDataError(_missing_message(name, folder, missing))
        splits = []
        for train in (True, False):
            try:  # download=True also decompresses the .gz files already in place, offline
                ds = cls(str(root), train=train, download=True)
            except (RuntimeError, OSError) as err:  # download failed or a file is corrupt
                raise MissingDataError(_missing_message(name, folder, missing or list(IMAGE_FILES))
                                       + f"\n(torchvision: {err})") from err
            x = (ds.data.reshape(len(ds.data), -1).to(torch.float32) / 255.0 - mean) / std
            splits += [x, ds.targets.to(torch.int64)]
        done.touch()
    return Dataset(name, *splits)


# -- UCI Adult -------------------------------------------------------------------------
ADULT_COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
                 "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
                 "hours-per-week", "native-country", "income")
ADULT_CONTINUOUS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")


def _read_adult(path: Path) -> list[list[str]]:
    rows = []
    with open(path, newline="") as fh:
        for row in csv.reader(fh, skipinitialspace=True):
            if len(row) == len(ADULT_COLUMNS):  # skips blank lines and the test file's '|1x3' line
                rows.append([v.strip() for v in row])
    return rows


def load_adult() -> Dataset:
    """UCI Adult as in Li, Chang, Chi 2020, Sec. 5: 32,561 train / 16,281 test rows.

    Missing values ('?') are replaced by the most frequent value of that column in the
    training file; categorical columns are one-hot encoded over the categories seen in
    training; continuous columns are min-max scaled to [0, 1] with training statistics
    (the paper says only "normalised"). Label 1 is income >50K.
    """
    folder = data_dir() / "adult"
    missing = [f for f in ADULT_FILES if not (folder / f).exists()]
    if missing:  # torchvision has no Adult loader and the UCI host is not a package registry
        raise MissingDataError(_missing_message("adult", folder, missing))
    train, test = _read_adult(folder / "adult.data"), _read_adult(folder / "adult.test")
    for f, rows, expected in (("adult.data", train, ADULT_ROWS[0]), ("adult.test", test, ADULT_ROWS[1])):
        if len(rows) != expected:  # a truncated or foreign file would silently change every result
            raise MissingDataError(f"dataset 'adult': {folder / f} holds {len(rows)} rows, not the official "
                                   f"{expected} (truncated or another file): put the official file there "
                                   "(see data/README.md)")
    cols = list(zip(*train))
    mode = {}
    for j, name in enumerate(ADULT_COLUMNS[:-1]):
        values, counts = np.unique([v for v in cols[j] if v != "?"], return_counts=True)
        mode[j] = values[counts.argmax()]
    features = []  # (column index, encoder)
    for j, name in enumerate(ADULT_COLUMNS[:-1]):
        col = [mode[j] if v == "?" else v for v in cols[j]]
        if name in ADULT_CONTINUOUS:
            arr = np.asarray(col, dtype=np.float64)
            features.append((j, ("cont", arr.min(), arr.max())))
        else:
            features.append((j, ("cat", sorted(set(col)))))

    def encode(rows):
        out = []
        for j, enc in features:
            col = [mode[j] if r[j] == "?" else r[j] for r in rows]
            if enc[0] == "cont":
                lo, hi = enc[1], enc[2]
                out.append(((np.asarray(col, dtype=np.float64) - lo) / (hi - lo))[:, None])
            else:
                index = {c: k for k, c in enumerate(enc[1])}
                onehot = np.zeros((len(rows), len(enc[1])))
                for i, v in enumerate(col):
                    if v in index:  # a category unseen in training stays all-zero
                        onehot[i, index[v]] = 1.0
                out.append(onehot)
        x = torch.tensor(np.concatenate(out, axis=1), dtype=torch.float32)
        y = torch.tensor([r[-1].rstrip(".") == ">50K" for r in rows], dtype=torch.int64)
        return x, y

    return Dataset("adult", *encode(train), *encode(test))



# -- pixel scales ----------------------------------------------------------------------
def unit_pixels(ds: Dataset) -> Dataset:
    """An image dataset with pixels back in [0, 1] (``ToTensor`` without normalisation):
    the loaders standardise with the dataset's mean and std."""
    if ds.pixel_stats is not None:
        mean, std = ds.pixel_stats
    elif ds.name in IMAGE_DATASETS:
        _, _, mean, std = IMAGE_DATASETS[ds.name]
    else:
        raise ValueError(f"pixels='unit' is only for the image datasets {list(IMAGE_DATASETS)} "
                         f"and standardised FEMNIST, not {ds.name!r}")
    return Dataset(ds.name, ds.x_train * std + mean, ds.y_train, ds.x_test * std + mean, ds.y_test)


def standardize(ds: Dataset) -> Dataset:
    """Pixels in [0, 1] -> zero mean and unit variance over the training set (one mean and
    one std for all pixels, like the MNIST constants); ``pixel_stats`` records them."""
    std, mean = torch.std_mean(ds.x_train)
    mean, std = float(mean), float(std)
    std = std if std > 0 else 1.0
    return Dataset(ds.name, (ds.x_train - mean) / std, ds.y_train, (ds.x_test - mean) / std,
                   ds.y_test, pixel_stats=(mean, std))



def subsample_rows(ds: Dataset, writers: torch.Tensor | None, subsample: int | None, num_clients: int,
               seed: int) -> tuple[Dataset, torch.Tensor | None]:
    """A seeded random ``subsample`` of the training rows (and their writers)."""
    if subsample is None:
        return ds, writers
    validate.integer("subsample", subsample, num_clients, len(ds.y_train))
    g = seeding.torch_generator(seed, "subsample")
    keep = torch.randperm(len(ds.y_train), generator=g)[:subsample]
    out = Dataset(ds.name, ds.x_train[keep], ds.y_train[keep], ds.x_test, ds.y_test, ds.pixel_stats)
    return out, None if writers is None else writers[keep]
