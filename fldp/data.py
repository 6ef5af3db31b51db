"""Datasets and federated partitions.

Data live in a data directory: ``data/`` at the project root by default, or the folder
named by ``$FLDP_DATA_DIR``.  Expected files (exactly the official releases)::

    <data>/mnist/{train,t10k}-images-idx3-ubyte.gz, {train,t10k}-labels-idx1-ubyte.gz
    <data>/fashion-mnist/  the same four names (Fashion-MNIST)
    <data>/adult/adult.data, adult.test                 (UCI Adult)
    <data>/femnist/{train,test}/*.json                  (LEAF FEMNIST; or <data>/emnist/
                                                         emnist-byclass-*: see load_femnist)

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

FEMNIST (Zhou et al., Sec. VII-A) is never downloaded: :func:`load_femnist` reads LEAF's
JSON files, or EMNIST ByClass as a stand-in, when they are in the data directory, and
:func:`femnist_available` tells a notebook whether they are.
"""
from __future__ import annotations

import contextlib
import csv
import functools
import gzip
import hashlib
import heapq
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from . import seeding, validate

PROJECT_ROOT = Path(__file__).resolve().parent.parent

IMAGE_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
               "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
ADULT_FILES = ("adult.data", "adult.test")
ADULT_ROWS = (32561, 16281)  # the official files' records (Li, Chang, Chi 2020, Sec. 5)
# dataset name -> (folder under the data dir, torchvision class name, normalisation mean/std)
IMAGE_DATASETS = {
    "mnist": ("mnist", "MNIST", 0.1307, 0.3081),
    "fashion-mnist": ("fashion-mnist", "FashionMNIST", 0.2860, 0.3530),
}
DATASETS = (*IMAGE_DATASETS, "adult", "femnist")
PARTITIONS = ("iid", "dirichlet", "classes", "one_class")
CLIENTS_PER_CLASS = ("proportional", "equal")


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


def load(name: str, *, download: bool = True) -> Dataset:
    """Load ``mnist``, ``fashion-mnist``, ``adult`` or ``femnist`` (cached in memory per
    process).  ``femnist``: all training rows pooled, standardised with their own pixel
    mean and std (see :func:`load_femnist`; the writers are in ``load_femnist().writers``)."""
    validate.choice("dataset", name, DATASETS)
    if name == "femnist":  # load_femnist keeps its own cache, keyed to the files
        return standardize(load_femnist().dataset)
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


# -- partitions ------------------------------------------------------------------------
def partition(labels: torch.Tensor, num_clients: int, scheme: str = "iid", *, seed: int = 0,
              alpha: float = 0.5, classes_per_client: int = 2,
              clients_per_class: str = "proportional") -> list[torch.Tensor]:
    """Split sample indices among ``num_clients`` clients.

    * ``iid``: a random permutation cut into equal parts (the remainder of
      ``len(labels) % num_clients`` samples is dropped so all clients hold m samples).
    * ``dirichlet``: label skew; for each class, client shares ~ Dirichlet(alpha)
      (Hsu et al. 2019; the adaptive-noise paper uses alpha in {0.1, 1, 10}).
    * ``classes``: each client gets ``classes_per_client`` shards of the label-sorted data
      (McMahan et al. 2017): two digits per client as in Zhou et al., one class per client
      as in Li et al.  A shard can straddle a class boundary.
    * ``one_class``: every client holds rows of one class only (Li et al., Sec. 4.1, read
      strictly); class c gets ``clients_per_class="proportional"`` round(N n_c / n)
      clients (near-equal client sizes: Adult's 76 + 24 clients of 325-327 rows) or
      ``"equal"`` N / C clients (unequal sizes: Adult's 50 clients of 494 rows and 50 of
      156-157), and splits its rows evenly among them.
    """
    validate.choice("partition", scheme, PARTITIONS)
    n = len(labels)
    num_clients = validate.integer("num_clients", num_clients, 1, n)
    rng = seeding.numpy_rng(seed, "partition")
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
    elif scheme == "one_class":
        validate.choice("clients_per_class", clients_per_class, CLIENTS_PER_CLASS)
        classes, sizes = np.unique(y, return_counts=True)
        if num_clients < len(classes):
            raise ValueError(f"num_clients={num_clients} is out of range for partition 'one_class': "
                             f"it needs at least one client per class ({len(classes)})")
        if clients_per_class == "equal":
            share = np.full(len(classes), num_clients // len(classes))
            share[: num_clients % len(classes)] += 1
        else:  # largest remainder, at least one client per class
            raw = num_clients * sizes / n
            share = np.maximum(np.floor(raw).astype(int), 1)
            for c in np.argsort(-(raw - np.floor(raw)), kind="stable")[: num_clients - share.sum()]:
                share[c] += 1
            while share.sum() > num_clients:
                share[np.argmax(share)] -= 1
        parts = []
        for c, m in zip(classes, share):
            idx = rng.permutation(np.flatnonzero(y == c))
            parts.extend(np.array_split(idx, m))
        parts = [parts[i] for i in rng.permutation(len(parts))]
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


def federated_dataset(name: str, num_clients: int, scheme: str | None = None, *, seed: int = 0,
                      subsample: int | None = None, max_test: int | None = None,
                      pixels: str = "standardized", **partition_kwargs) -> FederatedData:
    """Load ``name``, optionally keep a seeded random ``subsample`` of the training set
    (quick mode), and split it among ``num_clients`` clients.  ``pixels``: image features
    ``"standardized"`` (zero mean, unit variance over the training set) or ``"unit"``
    (in [0, 1]).  ``scheme``: a :func:`partition` scheme, ``"iid"`` by default.

    ``femnist`` (Zhou et al., Sec. VII-A; see :func:`load_femnist`): from LEAF's files when
    present, the default scheme ``"writers"`` groups the writers into ``num_clients``
    clients (:func:`group_writers`; ``grouping="balanced"`` or ``"round_robin"``); from
    EMNIST ByClass (no writer ids) the default is ``"dirichlet"`` label skew with
    ``alpha=FEMNIST_DIRICHLET_ALPHA`` (1.0) unless ``alpha`` is given.  The partition
    schemes apply to either source, ignoring the writers.  ``source="leaf"`` or
    ``"emnist"`` picks one (default ``"auto"``: LEAF if present, else EMNIST, else
    :class:`MissingDataError`).  Standardisation uses the pixel mean and std of the whole
    training set (before ``subsample``).  Zhou et al. use 70,037 samples: ``subsample``
    reaches that size from a larger set.
    """
    validate.choice("pixels", pixels, ("standardized", "unit"))
    if name == "femnist":
        return _federated_femnist(num_clients, scheme, seed=seed, subsample=subsample,
                                  max_test=max_test, pixels=pixels, **partition_kwargs)
    scheme = "iid" if scheme is None else scheme
    ds = load(name)
    if pixels == "unit":
        ds = unit_pixels(ds)
    ds, _ = _subsample(ds, None, subsample, num_clients, seed)
    parts = partition(ds.y_train, num_clients, scheme, seed=seed, **partition_kwargs)
    return federate(ds, parts, max_test=max_test)


def _subsample(ds: Dataset, writers: torch.Tensor | None, subsample: int | None, num_clients: int,
               seed: int) -> tuple[Dataset, torch.Tensor | None]:
    """A seeded random ``subsample`` of the training rows (and their writers)."""
    if subsample is None:
        return ds, writers
    validate.integer("subsample", subsample, num_clients, len(ds.y_train))
    g = seeding.torch_generator(seed, "subsample")
    keep = torch.randperm(len(ds.y_train), generator=g)[:subsample]
    out = Dataset(ds.name, ds.x_train[keep], ds.y_train[keep], ds.x_test, ds.y_test, ds.pixel_stats)
    return out, None if writers is None else writers[keep]


# -- FEMNIST (Zhou et al., Sec. VII-A) -------------------------------------------------
FEMNIST_CLASSES = 62  # 0-9 digits, 10-35 upper case, 36-61 lower case (LEAF and EMNIST ByClass)
FEMNIST_SOURCES = ("auto", "leaf", "emnist")
FEMNIST_SCHEMES = ("writers", *PARTITIONS)
FEMNIST_GROUPINGS = ("balanced", "round_robin")
FEMNIST_DIRICHLET_ALPHA = 1.0  # EMNIST stand-in for the writers: moderate label skew
LEAF_URL = "https://github.com/TalwalkarLab/leaf"
EMNIST_URL = "https://www.nist.gov/itl/products-and-services/emnist-dataset"
EMNIST_FILES = ("emnist-byclass-train-images-idx3-ubyte.gz", "emnist-byclass-train-labels-idx1-ubyte.gz",
                "emnist-byclass-test-images-idx3-ubyte.gz", "emnist-byclass-test-labels-idx1-ubyte.gz")


@dataclass(frozen=True)
class FemnistData:
    """FEMNIST as read from disk: ``dataset`` with pixels in [0, 1] (not standardised);
    ``writers[n_train]`` (int64) the writer of each training row, an index into
    ``writer_names`` (LEAF), or None (EMNIST has no writer ids); ``source`` is ``"leaf"``
    or ``"emnist"``."""

    dataset: Dataset
    writers: torch.Tensor | None
    writer_names: tuple[str, ...]
    source: str


def _leaf_dir() -> Path | None:
    """The folder holding LEAF's ``train/`` and ``test/`` JSON files: ``<data>/femnist``, or
    ``<data>/femnist/data`` (LEAF's own layout, ``leaf/data/femnist/data``); None if neither
    has ``*.json`` files in both."""
    for folder in (data_dir() / "femnist", data_dir() / "femnist" / "data"):
        if all(any((folder / split).glob("*.json")) for split in ("train", "test")):
            return folder
    return None


def _emnist_paths() -> dict[str, Path] | None:
    """Each EMNIST ByClass file, ``.gz`` or uncompressed, under ``<data>/emnist``; None
    unless all four are there."""
    folder, out = data_dir() / "emnist", {}
    for f in EMNIST_FILES:
        found = [p for p in (folder / f, folder / f[:-3]) if p.is_file()]
        if not found:
            return None
        out[f] = found[0]
    return out


def femnist_source() -> str | None:
    """``"leaf"`` or ``"emnist"``: which FEMNIST files :func:`load_femnist` would read
    (LEAF first); None when neither is complete."""
    if _leaf_dir() is not None:
        return "leaf"
    return "emnist" if _emnist_paths() is not None else None


def femnist_available() -> bool:
    """True when LEAF FEMNIST or EMNIST ByClass files are in the data directory (a notebook
    runs its FEMNIST part only then; nothing is ever downloaded)."""
    return femnist_source() is not None


def _femnist_missing_message(source: str) -> str:
    data = data_dir()
    leaf, emnist = data / "femnist", data / "emnist"
    lines = [f"dataset 'femnist' (source={source!r}): no complete set of files found, and FEMNIST "
             "is never downloaded.  Put either"]
    if source in ("auto", "leaf"):
        lines += [f"  LEAF FEMNIST (writers as clients; {LEAF_URL}, data/femnist/preprocess.sh, e.g.",
                  "  `./preprocess.sh -s niid --sf 0.1 -k 0 -t sample`): its JSON files in",
                  f"    {leaf / 'train'}/*.json",
                  f"    {leaf / 'test'}/*.json",
                  f"  (or LEAF's own layout {leaf / 'data' / 'train'}/*.json and .../test/*.json)"]
    if source in ("auto", "emnist"):
        lines.append(("  or " if source == "auto" else "  ")
                     + f"EMNIST ByClass (62 classes, no writer ids; {EMNIST_URL}, gzip.zip), in {emnist}:")
        for f in EMNIST_FILES:
            there = any((emnist / n).is_file() for n in (f, f[:-3]))
            lines.append(f"    put {f} at {emnist / f}" + ("  (found)" if there else "  (missing)")
                         + f"  (or uncompressed, {f[:-3]})")
    lines.append("(set FLDP_DATA_DIR to use another data directory; see data/README.md)")
    return "\n".join(lines)


def _stamp(paths: list[Path]) -> str:
    """Hash of each file's resolved path, size and mtime: the key of a cache built from them."""
    stamp = []
    for src in paths:
        st = src.stat()
        stamp.append([str(src.resolve()), st.st_size, st.st_mtime_ns])
    return hashlib.sha256(json.dumps(stamp).encode()).hexdigest()[:16]


def load_femnist(source: str = "auto") -> FemnistData:
    """FEMNIST's 62 classes from the data directory, pixels in [0, 1] (flat rows of 784).

    * ``leaf``: LEAF's FEMNIST (Caldas et al. 2018), the JSON files its ``preprocess.sh``
      writes, ``<data>/femnist/train/*.json`` and ``<data>/femnist/test/*.json`` (or under
      ``<data>/femnist/data/``), each ``{"users", "num_samples", "user_data": {user: {"x":
      [[784 floats]], "y": [int]}}}``.  The pixel values are kept as LEAF writes them
      (grey level / 255 of the NIST scans: dark strokes on a light background).  Every
      training row keeps its writer (``writers``); the test files are pooled.
    * ``emnist``: EMNIST ByClass (Cohen et al. 2017), the same 62 classes without writer
      ids, from the official idx files in ``<data>/emnist/`` (``.gz`` or uncompressed).
      EMNIST stores each 28x28 image transposed relative to MNIST; it is transposed back
      here, so rows read like MNIST rows (upright, light strokes on a dark background).
    * ``auto``: LEAF if its files are present, else EMNIST.

    Parsed arrays are cached under ``$FLDP_CACHE_DIR/femnist/<source>-<hash>`` (the hash of
    the source files' resolved paths, sizes and mtimes: other or changed files get a new
    folder), and in memory for the last source read.  Missing files raise
    :class:`MissingDataError` naming both folders and every file expected.
    """
    validate.choice("source", source, FEMNIST_SOURCES)
    kind = femnist_source() if source == "auto" else source
    if kind == "leaf" and (folder := _leaf_dir()) is not None:
        files = sorted((folder / "train").glob("*.json")) + sorted((folder / "test").glob("*.json"))
        return _femnist_cached("leaf", tuple(str(f) for f in files), _stamp(files))
    if kind == "emnist" and (paths := _emnist_paths()) is not None:
        files = [paths[f] for f in EMNIST_FILES]
        return _femnist_cached("emnist", tuple(str(f) for f in files), _stamp(files))
    raise MissingDataError(_femnist_missing_message(source))


@functools.lru_cache(maxsize=1)
def _femnist_cached(kind: str, files: tuple[str, ...], key: str) -> FemnistData:
    folder = cache_dir() / "femnist" / f"{kind}-{key}"
    target = folder / "arrays.npz"
    with _locked(folder / ".lock"):
        if not target.exists():
            arrays = _read_leaf([Path(f) for f in files]) if kind == "leaf" else \
                _read_emnist([Path(f) for f in files])
            tmp = folder / "arrays.tmp.npz"
            np.savez(tmp, **arrays)
            os.replace(tmp, target)
        with np.load(target) as z:
            arrays = {k: z[k] for k in z.files}

    def pixels(a):
        x = torch.from_numpy(a)
        return x.to(torch.float32).div_(255.0) if a.dtype == np.uint8 else x.to(torch.float32)

    ds = Dataset("femnist", pixels(arrays["x_train"]), torch.from_numpy(arrays["y_train"]).to(torch.int64),
                 pixels(arrays["x_test"]), torch.from_numpy(arrays["y_test"]).to(torch.int64))
    if kind == "leaf":
        names = tuple(json.loads(bytes(arrays["writer_names"]).decode()))
        return FemnistData(ds, torch.from_numpy(arrays["writers"]).to(torch.int64), names, "leaf")
    return FemnistData(ds, None, (), "emnist")


def _read_leaf(files: list[Path]) -> dict[str, np.ndarray]:
    """LEAF JSON files -> arrays; the writers of the training files are indexed in sorted
    order of their names (a writer spread over several files is one writer)."""
    splits = {"train": ([], [], []), "test": ([], [], [])}  # images, labels, (writer, rows)
    for path in files:
        xs, ys, ws = splits[path.parent.name]
        with open(path) as fh:
            blob = json.load(fh)
        users, user_data = blob.get("users"), blob.get("user_data")
        if not isinstance(users, list) or not isinstance(user_data, dict):
            raise ValueError(f"{path}: not a LEAF file (needs 'users' and 'user_data')")
        for user in users:
            x = np.asarray(user_data[user]["x"], dtype=np.float32).reshape(-1, 784)
            y = np.asarray(user_data[user]["y"], dtype=np.int64).reshape(-1)
            if len(x) != len(y):
                raise ValueError(f"{path}: writer {user!r} has {len(x)} images and {len(y)} labels")
            if len(y) and (y.min() < 0 or y.max() >= FEMNIST_CLASSES):
                raise ValueError(f"{path}: writer {user!r} has labels outside [0, {FEMNIST_CLASSES - 1}]")
            xs.append(x), ys.append(y), ws.append((str(user), len(y)))
    out = {}
    for split, (xs, ys, _) in splits.items():
        if not xs:
            raise ValueError(f"LEAF FEMNIST: no writers in the {split} files")
        out[f"x_{split}"] = np.concatenate(xs)
        out[f"y_{split}"] = np.concatenate(ys)
    train = splits["train"][2]
    names = sorted({u for u, _ in train})
    index = {u: i for i, u in enumerate(names)}
    out["writers"] = np.repeat(np.asarray([index[u] for u, _ in train], dtype=np.int64),
                               [n for _, n in train])
    out["writer_names"] = np.frombuffer(json.dumps(names).encode(), dtype=np.uint8)
    return out


def _read_idx(path: Path) -> np.ndarray:
    """An idx file (uint8 data, ``.gz`` or not) -> array of its shape."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        buf = fh.read()
    if len(buf) < 4 or buf[0] != 0 or buf[1] != 0 or buf[2] != 0x08:
        raise ValueError(f"{path}: not an idx file of unsigned bytes (magic {buf[:4].hex()})")
    ndim = buf[3]
    dims = [int.from_bytes(buf[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    data = np.frombuffer(buf, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: header says {dims}, file holds {data.size} values")
    return data.reshape(dims)


def _read_emnist(files: list[Path]) -> dict[str, np.ndarray]:
    """EMNIST idx files (train images, train labels, test images, test labels) -> arrays,
    each image transposed back to MNIST's orientation."""
    out = {}
    for split, (images, labels) in (("train", files[:2]), ("test", files[2:])):
        x, y = _read_idx(images), _read_idx(labels)
        if x.ndim != 3 or y.ndim != 1 or len(x) != len(y) or x.shape[1:] != (28, 28):
            raise ValueError(f"EMNIST {split}: images {x.shape} and labels {y.shape} do not match")
        if len(y) and int(y.max()) >= FEMNIST_CLASSES:
            raise ValueError(f"EMNIST {split}: labels beyond {FEMNIST_CLASSES - 1}; expected the ByClass files")
        out[f"x_{split}"] = np.ascontiguousarray(x.transpose(0, 2, 1)).reshape(len(x), 784)
        out[f"y_{split}"] = y.astype(np.int64)
    return out


def group_writers(writers: torch.Tensor, num_clients: int, grouping: str = "balanced", *,
                  seed: int = 0) -> list[torch.Tensor]:
    """Group the writers of the training rows into ``num_clients`` clients, each writer
    whole on one client; returns the row indices of each client (seeded order).

    The writers are first put in a seeded random order; then

    * ``balanced``: largest writer first (ties in that random order), each to the client
      holding the fewest rows so far (ties: the lowest client index): clients of nearly
      equal size (greedy longest-processing-time scheduling);
    * ``round_robin``: writer j of the random order goes to client j mod ``num_clients``
      (equal numbers of writers, unequal numbers of rows).

    With as many clients as writers, each client is one writer (LEAF's natural clients).
    """
    validate.choice("grouping", grouping, FEMNIST_GROUPINGS)
    w = writers.cpu().numpy()
    ids, counts = np.unique(w, return_counts=True)
    num_clients = validate.integer("num_clients", num_clients, 1, len(ids))
    rng = seeding.numpy_rng(seed, "writers")
    order = rng.permutation(len(ids))
    owner = np.empty(len(ids), dtype=np.int64)
    if grouping == "round_robin":
        owner[order] = np.arange(len(ids)) % num_clients
    else:
        order = order[np.argsort(-counts[order], kind="stable")]
        heap = [(0, c) for c in range(num_clients)]
        for j in order:
            load, c = heapq.heappop(heap)
            owner[j] = c
            heapq.heappush(heap, (load + int(counts[j]), c))
    client_of_row = owner[np.searchsorted(ids, w)]
    rows = np.argsort(client_of_row, kind="stable")
    cuts = np.cumsum(np.bincount(client_of_row, minlength=num_clients))[:-1]
    return [torch.as_tensor(rng.permutation(p).astype(np.int64)) for p in np.split(rows, cuts)]


def _federated_femnist(num_clients: int, scheme: str | None, *, seed: int, subsample: int | None,
                       max_test: int | None, pixels: str, source: str = "auto",
                       grouping: str = "balanced", **partition_kwargs) -> FederatedData:
    fem = load_femnist(source)
    scheme = scheme if scheme is not None else ("writers" if fem.writers is not None else "dirichlet")
    validate.choice("scheme", scheme, FEMNIST_SCHEMES)
    ds = fem.dataset if pixels == "unit" else standardize(fem.dataset)
    ds, writers = _subsample(ds, fem.writers, subsample, num_clients, seed)
    if scheme == "writers":
        if writers is None:
            raise ValueError(f"scheme='writers' needs LEAF's FEMNIST files (writer ids); the "
                             f"{fem.source!r} files have none: use scheme='dirichlet'")
        if partition_kwargs:
            raise TypeError(f"scheme='writers' takes no partition arguments {sorted(partition_kwargs)}")
        parts = group_writers(writers, num_clients, grouping, seed=seed)
    else:
        if scheme == "dirichlet":
            partition_kwargs.setdefault("alpha", FEMNIST_DIRICHLET_ALPHA)
        parts = partition(ds.y_train, num_clients, scheme, seed=seed, **partition_kwargs)
    return federate(ds, parts, max_test=max_test)
