"""FEMNIST (Zhou et al., Sec. VII-A): LEAF's writers or EMNIST ByClass, read from the data directory.

FEMNIST is never downloaded: :func:`load_femnist` reads LEAF's JSON files, or EMNIST ByClass
as a stand-in, when they are in the data directory, and :func:`femnist_available` tells a
notebook whether they are.  :func:`group_writers` groups LEAF's writers into clients (each
writer whole on one client); :func:`fldp.data.federated_dataset` (``name="femnist"``) splits
the data by writers or by a :func:`fldp.data.partition` scheme.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import heapq
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from fldp import seeding, validate
from fldp.data.partitions import PARTITIONS, partition
from fldp.data.sources import Dataset, MissingDataError, file_lock, subsample_rows, cache_dir, data_dir, standardize

__all__ = ["FEMNIST_CLASSES", "FEMNIST_SOURCES", "FEMNIST_SCHEMES", "FEMNIST_GROUPINGS",
           "FEMNIST_DIRICHLET_ALPHA", "LEAF_URL", "EMNIST_URL", "EMNIST_FILES", "FemnistData",
           "femnist_source", "femnist_available", "load_femnist", "group_writers"]

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
    with file_lock(folder / ".lock"):
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


def femnist_split(num_clients: int, scheme: str | None, *, seed: int, subsample: int | None, pixels: str,
                   source: str = "auto", grouping: str = "balanced",
                   **partition_kwargs) -> tuple[Dataset, list[torch.Tensor]]:
    """FEMNIST for :func:`fldp.data.federated_dataset`: the (subsampled) data set and the
    training rows of each client (its docstring says which scheme and source apply)."""
    fem = load_femnist(source)
    scheme = scheme if scheme is not None else ("writers" if fem.writers is not None else "dirichlet")
    validate.choice("scheme", scheme, FEMNIST_SCHEMES)
    ds = fem.dataset if pixels == "unit" else standardize(fem.dataset)
    ds, writers = subsample_rows(ds, fem.writers, subsample, num_clients, seed)
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
    return ds, parts
