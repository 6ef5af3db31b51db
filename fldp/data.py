"""Datasets and federated partitions.

Data live in a data directory: ``data/`` at the project root by default, or the folder
named by ``$FLDP_DATA_DIR``.  Expected files (exactly the official releases)::

    <data>/mnist/{train,t10k}-images-idx3-ubyte.gz, {train,t10k}-labels-idx1-ubyte.gz
    <data>/fashion-mnist/  the same four names (Fashion-MNIST)
    <data>/adult/adult.data, adult.test                 (UCI Adult)

Image datasets are read by ``torchvision.datasets`` (MNIST / FashionMNIST): the ``.gz``
files are linked into a torchvision root under ``$FLDP_CACHE_DIR`` (default ``.cache/``),
where torchvision checks their md5 and decompresses them.  That root is keyed to its
sources: ``torchvision/<name>-<hash>``, the hash of each file's resolved path, size and
mtime (or its absence), so another data directory or a replaced file gets a fresh folder
and never the files decompressed from an earlier source; the same files reached through
another path share one.  When a file is missing and the network answers, torchvision
downloads it (into that folder); otherwise :class:`MissingDataError` names each missing
file and the exact path to put it at.

Partitions return one index tensor per client and are reproducible from ``seed``.
:class:`FederatedData` stores the client rows flat (concatenated, no padding to the largest
client).  Unequal client sizes are kept (``FederatedData.counts``); aggregation weights are
p_i = |D_i| / |D| (Wei et al. 2020, eq. (1)) and the privacy calibration of Wei et al.
uses m = the smallest local dataset (Sec. III-A).
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

from . import validate

PROJECT_ROOT = Path(__file__).resolve().parent.parent

IMAGE_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
               "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
ADULT_FILES = ("adult.data", "adult.test")
# dataset name -> (folder under the data dir, torchvision class name, normalisation mean/std)
IMAGE_DATASETS = {
    "mnist": ("mnist", "MNIST", 0.1307, 0.3081),
    "fashion-mnist": ("fashion-mnist", "FashionMNIST", 0.2860, 0.3530),
}
DATASETS = (*IMAGE_DATASETS, "adult")
PARTITIONS = ("iid", "dirichlet", "classes")


class MissingDataError(ValueError):
    """A data file is missing and cannot be downloaded; the message says where to put it."""


def data_dir() -> Path:
    return Path(os.environ.get("FLDP_DATA_DIR", PROJECT_ROOT / "data"))


def cache_dir() -> Path:
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
    """Features ``x`` (float32, flattened) and integer labels ``y`` for train and test."""

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor

    @property
    def num_features(self) -> int:
        return self.x_train.shape[1]

    @property
    def num_classes(self) -> int:
        return int(self.y_train.max()) + 1


def load(name: str, *, download: bool = True) -> Dataset:
    """Load ``mnist``, ``fashion-mnist`` or ``adult`` (cached in memory per process)."""
    validate.choice("dataset", name, DATASETS)
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
def _locked(path: Path):
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
    with _locked(root / ".lock"):
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


# -- partitions ------------------------------------------------------------------------
def partition(labels: torch.Tensor, num_clients: int, scheme: str = "iid", *, seed: int = 0,
              alpha: float = 0.5, classes_per_client: int = 2) -> list[torch.Tensor]:
    """Split sample indices among ``num_clients`` clients.

    * ``iid``: a random permutation cut into equal parts (the remainder of
      ``len(labels) % num_clients`` samples is dropped so all clients hold m samples).
    * ``dirichlet``: label skew; for each class, client shares ~ Dirichlet(alpha)
      (Hsu et al. 2019; the adaptive-noise paper uses alpha in {0.1, 1, 10}).
    * ``classes``: each client gets ``classes_per_client`` shards of the label-sorted data
      (McMahan et al. 2017): two digits per client as in Zhou et al., one class per client
      as in Li et al.  A shard can straddle a class boundary.
    """
    validate.choice("partition", scheme, PARTITIONS)
    n = len(labels)
    num_clients = validate.integer("num_clients", num_clients, 1, n)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5EED]))
    y = labels.cpu().numpy()
    if scheme == "iid":
        m = n // num_clients
        perm = rng.permutation(n)[: m * num_clients]
        parts = perm.reshape(num_clients, m)
    elif scheme == "dirichlet":
        validate.positive("alpha", alpha)
        parts = [[] for _ in range(num_clients)]
        for k in np.unique(y):
            idx = rng.permutation(np.flatnonzero(y == k))
            shares = rng.dirichlet(np.full(num_clients, alpha))
            cuts = (np.cumsum(shares)[:-1] * len(idx)).astype(int)
            for i, chunk in enumerate(np.split(idx, cuts)):
                parts[i].extend(chunk.tolist())
        parts = [rng.permutation(np.asarray(p, dtype=np.int64)) for p in parts]
    else:
        k = validate.integer("classes_per_client", classes_per_client, 1, n // num_clients)
        order = np.argsort(y, kind="stable")
        shards = np.array_split(order, num_clients * k)
        shard_ids = rng.permutation(num_clients * k).reshape(num_clients, k)
        parts = [rng.permutation(np.concatenate([shards[s] for s in ids])) for ids in shard_ids]
    out = [torch.as_tensor(np.asarray(p, dtype=np.int64)) for p in parts]
    if any(len(p) == 0 for p in out):
        raise ValueError(f"partition {scheme!r} left a client with no data; "
                         f"use fewer clients or a larger alpha (alpha={alpha})")
    return out


class FederatedData:
    """Client data stored flat, without padding.

    ``x_train[total, F]`` and ``y_train[total]`` are the rows of all clients concatenated
    (client ``i`` owns rows ``offsets[i] : offsets[i] + counts[i]``); they are also the global
    training set (the union of the client rows).  ``counts[N]`` and ``offsets[N]`` (int64)
    stay on the CPU.  Read client rows with :meth:`gather` (a batch of positions per client)
    or :meth:`padded` (all rows of some clients, padded to the largest of them).

    Construct as ``FederatedData(x_train, y_train, counts, x_test, y_test)``, or from one
    tensor per client with :meth:`from_clients`.
    """

    def __init__(self, x_train: torch.Tensor, y_train: torch.Tensor, counts: torch.Tensor,
                 x_test: torch.Tensor, y_test: torch.Tensor):
        counts = torch.as_tensor(counts).to(device="cpu", dtype=torch.int64).reshape(-1)
        if counts.numel() == 0 or int(counts.min()) < 1:
            raise ValueError(f"every client needs at least one row (counts={counts.tolist()})")
        total = int(counts.sum())
        if len(x_train) != total or len(y_train) != total:
            raise ValueError(f"x_train has {len(x_train)} rows and y_train {len(y_train)}; "
                             f"counts sum to {total}")
        self.x_train, self.y_train, self.x_test, self.y_test = x_train, y_train, x_test, y_test
        self.counts = counts
        self.offsets = torch.cumsum(counts, 0) - counts
        # gather()'s lookups [N, 1]: first row and last position of each client, on the
        # data's device (no host round trip when the indices live there)
        self._first = self.offsets[:, None].to(x_train.device)
        self._last = (counts - 1)[:, None].to(x_train.device)

    def __repr__(self) -> str:
        return (f"FederatedData(num_clients={self.num_clients}, rows={len(self.y_train)}, "
                f"features={tuple(self.x_train.shape[1:])}, test={len(self.y_test)}, "
                f"device={self.device})")

    @property
    def num_clients(self) -> int:
        return len(self.counts)

    @property
    def m(self) -> int:
        """Smallest local dataset size (Wei et al. 2020, Sec. III-A)."""
        return int(self.counts.min())

    @property
    def weights(self) -> torch.Tensor:
        """p_i = |D_i| / |D| (Wei et al. 2020, eq. (1))."""
        return self.counts.to(torch.float32) / self.counts.sum()

    @property
    def device(self) -> torch.device:
        return self.x_train.device

    def client(self, i: int):
        """Client ``i``'s rows ``(x[n_i, F], y[n_i])`` (views of the flat storage)."""
        a, n = int(self.offsets[i]), int(self.counts[i])
        return self.x_train[a:a + n], self.y_train[a:a + n]

    def gather(self, clients: torch.Tensor, idx: torch.Tensor):
        """Rows ``idx[K, B]`` (positions within each client's own data) of ``clients[K]``:
        ``(x[K, B, F], y[K, B])``.  Positions at or beyond a client's count return the
        client's last row; callers mask them.  One ``index_select`` on the flat rows."""
        view = self._contiguous_view(clients, idx)
        if view is not None:
            return view
        dev = self._first.device
        c = clients.reshape(-1).to(dev)
        rows = torch.minimum(idx.to(dev), self._last.index_select(0, c))
        rows = rows.add_(self._first.index_select(0, c)).reshape(-1)
        x = self.x_train.index_select(0, rows).view(*idx.shape, *self.x_train.shape[1:])
        return x, self.y_train.index_select(0, rows).view(idx.shape)

    def _contiguous_view(self, clients: torch.Tensor, idx: torch.Tensor):
        """Every row, in order, of consecutive clients of equal size (a full batch): a view
        of the flat storage instead of a copy; None otherwise."""
        if idx.dim() != 2 or idx.shape[1] == 0:
            return None
        c, n = clients.reshape(-1).cpu(), idx.shape[1]
        if bool((self.counts[c] != n).any()) or (len(c) > 1 and bool((c[1:] - c[:-1] != 1).any())):
            return None
        if not torch.equal(idx.cpu(), torch.arange(n).expand(len(c), n)):
            return None
        a = int(self.offsets[c[0]])
        x = self.x_train[a:a + len(c) * n]
        return x.view(len(c), n, *self.x_train.shape[1:]), self.y_train[a:a + len(c) * n].view(len(c), n)

    def padded(self, clients: torch.Tensor):
        """All rows of ``clients[K]``, padded to the largest of them:
        ``(x[K, n, F], y[K, n], mask[K, n])`` with ``mask`` 1 on valid rows (padding rows
        repeat the client's last row)."""
        clients = torch.as_tensor(clients).reshape(-1).cpu()
        if clients.numel() == 0:
            raise ValueError("padded() needs at least one client")
        counts = self.counts[clients]
        n = int(counts.max())
        pos = torch.arange(n).expand(len(clients), n)
        x, y = self.gather(clients, pos.to(self.device))
        return x, y, (pos < counts[:, None]).to(device=x.device, dtype=x.dtype)

    @classmethod
    def from_clients(cls, xs, ys, x_test: torch.Tensor, y_test: torch.Tensor) -> "FederatedData":
        """Build from one ``(x[n_i, F], y[n_i])`` per client (the training set is their union)."""
        counts = torch.tensor([len(y) for y in ys], dtype=torch.int64)
        return cls(torch.cat(list(xs)), torch.cat(list(ys)), counts, x_test, y_test)

    def to(self, device) -> "FederatedData":
        """A copy with every tensor on ``device`` (``counts`` and ``offsets`` stay on the CPU)."""
        dev = torch.device(device)
        return FederatedData(self.x_train.to(dev), self.y_train.to(dev), self.counts,
                             self.x_test.to(dev), self.y_test.to(dev))


def federate(ds: Dataset, parts: list[torch.Tensor], *, max_test: int | None = None) -> FederatedData:
    """Client ``i`` gets the training rows ``parts[i]``; the rows are stored flat, in client order."""
    counts = torch.tensor([len(p) for p in parts], dtype=torch.int64)
    used = torch.cat(list(parts))
    x_test, y_test = ds.x_test, ds.y_test
    if max_test is not None:
        x_test, y_test = x_test[:max_test], y_test[:max_test]
    return FederatedData(ds.x_train[used], ds.y_train[used], counts, x_test, y_test)


def unit_pixels(ds: Dataset) -> Dataset:
    """An image dataset with pixels back in [0, 1] (``ToTensor`` without normalisation):
    the loaders standardise with the dataset's mean and std."""
    if ds.name not in IMAGE_DATASETS:
        raise ValueError(f"pixels='unit' is only for the image datasets {list(IMAGE_DATASETS)}, not {ds.name!r}")
    _, _, mean, std = IMAGE_DATASETS[ds.name]
    return Dataset(ds.name, ds.x_train * std + mean, ds.y_train, ds.x_test * std + mean, ds.y_test)


def federated_dataset(name: str, num_clients: int, scheme: str = "iid", *, seed: int = 0,
                      subsample: int | None = None, max_test: int | None = None,
                      pixels: str = "standardized", **partition_kwargs) -> FederatedData:
    """Load ``name``, optionally keep a seeded random ``subsample`` of the training set
    (quick mode), and split it among ``num_clients`` clients.  ``pixels``: image features
    ``"standardized"`` (zero mean, unit variance over the training set) or ``"unit"``
    (in [0, 1])."""
    validate.choice("pixels", pixels, ("standardized", "unit"))
    ds = load(name)
    if pixels == "unit":
        ds = unit_pixels(ds)
    if subsample is not None:
        validate.integer("subsample", subsample, num_clients, len(ds.y_train))
        g = torch.Generator().manual_seed(seed + 7919)
        keep = torch.randperm(len(ds.y_train), generator=g)[:subsample]
        ds = Dataset(ds.name, ds.x_train[keep], ds.y_train[keep], ds.x_test, ds.y_test)
    parts = partition(ds.y_train, num_clients, scheme, seed=seed, **partition_kwargs)
    return federate(ds, parts, max_test=max_test)
