"""Federated data: the client rows stored flat, and the one loader every notebook and run uses.

:class:`FederatedData` stores the client rows flat (concatenated, no padding to the largest
client).  Unequal client sizes are kept (``FederatedData.counts``); aggregation weights are
``p_i = |D_i| / |D|`` (Wei et al. 2020, eq. (1)) and the privacy calibration of Wei et al.
uses m = the smallest local dataset (Sec. III-A).

:func:`federated_dataset` loads a data set, optionally subsamples it, and splits it among the
clients; :func:`cached_federated` is the same call cached per process (the stored run
functions of every paper load their split through it, so each worker loads a split once).
"""
from __future__ import annotations

import functools

import torch

from fldp import validate
from fldp.data import femnist
from fldp.data.partitions import partition
from fldp.data.loading import load
from fldp.data.sources import Dataset, subsample_rows, unit_pixels

__all__ = ["FederatedData", "federate", "federated_dataset", "cached_federated", "CACHED_SPLITS"]


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
        """``p_i = |D_i| / |D|`` (Wei et al. 2020, eq. (1))."""
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
        span = self._span(clients, idx)
        if span is not None:
            a, c, n = span
            x = self.x_train[a:a + c * n]
            return x.view(c, n, *self.x_train.shape[1:]), self.y_train[a:a + c * n].view(c, n)
        rows = self._rows(clients, idx)
        x = self.x_train.index_select(0, rows).view(*idx.shape, *self.x_train.shape[1:])
        return x, self.y_train.index_select(0, rows).view(idx.shape)

    def row_norms(self, ord: int = 2) -> torch.Tensor:
        """``||x_b||`` (``ord`` 1 or 2) of every training row, computed once per object: per-sample
        clipping needs each sample's norm at every step, and the rows never change (callers never
        change a split's tensors in place).  Bit for bit the norms of the gathered rows."""
        if ord not in (1, 2):
            raise ValueError(f"ord must be 1 or 2, got {ord!r}")
        if self.x_train.dim() != 2:
            raise ValueError(f"row norms need flat rows [n, F]; x_train is {tuple(self.x_train.shape)}")
        cache = self.__dict__.setdefault("_row_norms", {})
        if ord not in cache:
            cache[ord] = torch.linalg.vector_norm(self.x_train, ord=ord, dim=-1)
        return cache[ord]

    def gather_norms(self, clients: torch.Tensor, idx: torch.Tensor, ord: int = 2) -> torch.Tensor:
        """``||x_b||`` of the rows :meth:`gather` returns for the same arguments: ``[K, B]``."""
        norms = self.row_norms(ord)
        span = self._span(clients, idx)
        if span is not None:
            a, c, n = span
            return norms[a:a + c * n].view(c, n)
        return norms.index_select(0, self._rows(clients, idx)).view(idx.shape)

    def _rows(self, clients: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        """The flat row of each position of ``idx[K, B]`` (past a client's end: its last row)."""
        dev = self._first.device
        c = clients.reshape(-1).to(dev)
        rows = torch.minimum(idx.to(dev), self._last.index_select(0, c))
        return rows.add_(self._first.index_select(0, c)).reshape(-1)

    def _span(self, clients: torch.Tensor, idx: torch.Tensor):
        """``(first row, clients, rows each)`` when ``idx`` asks every row, in order, of consecutive
        clients of equal size (a full batch: a view of the flat storage instead of a copy); else None."""
        if idx.dim() != 2 or idx.shape[1] == 0:
            return None
        c, n = clients.reshape(-1).cpu(), idx.shape[1]
        if bool((self.counts[c] != n).any()) or (len(c) > 1 and bool((c[1:] - c[:-1] != 1).any())):
            return None
        if not torch.equal(idx.cpu(), torch.arange(n).expand(len(c), n)):
            return None
        return int(self.offsets[c[0]]), len(c), n

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
        """A copy with every tensor on ``device`` (``counts`` and ``offsets`` stay on the CPU); this
        object itself when its tensors are there already (``torch.Tensor.to`` would not copy them
        either), so what it caches (:meth:`row_norms`) serves every run on the split."""
        dev = torch.device(device)
        if all(t.device == dev or (dev.index is None and t.device.type == dev.type)
               for t in (self.x_train, self.y_train, self.x_test, self.y_test)):
            return self
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


def federated_dataset(name: str, num_clients: int, scheme: str | None = None, *, seed: int = 0,
                      subsample: int | None = None, max_test: int | None = None,
                      pixels: str = "standardized", **partition_kwargs) -> FederatedData:
    """Load ``name``, optionally keep a seeded random ``subsample`` of the training set
    (quick mode), and split it among ``num_clients`` clients.  ``pixels``: image features
    ``"standardized"`` (zero mean, unit variance over the training set) or ``"unit"``
    (in [0, 1]).  ``scheme``: a :func:`partition` scheme, ``"iid"`` by default.

    ``femnist`` (Zhou et al., Sec. VII-A; see :func:`fldp.data.femnist.load_femnist`): from LEAF's
    files when present, the default scheme ``"writers"`` groups the writers into ``num_clients``
    clients (:func:`fldp.data.femnist.group_writers`; ``grouping="balanced"`` or ``"round_robin"``); from
    EMNIST ByClass (no writer ids) the default is ``"dirichlet"`` label skew with
    ``alpha=FEMNIST_DIRICHLET_ALPHA`` (1.0) unless ``alpha`` is given.  The partition
    schemes apply to either source, ignoring the writers.  ``source="leaf"`` or
    ``"emnist"`` picks one (default ``"auto"``: LEAF if present, else EMNIST, else
    :class:`~fldp.data.sources.MissingDataError`).  Standardisation uses the pixel mean and std
    of the whole training set (before ``subsample``).  Zhou et al. use 70,037 samples:
    ``subsample`` reaches that size from a larger set.
    """
    validate.choice("pixels", pixels, ("standardized", "unit"))
    if name == "femnist":
        ds, parts = femnist.femnist_split(num_clients, scheme, seed=seed, subsample=subsample, pixels=pixels,
                                           **partition_kwargs)
        return federate(ds, parts, max_test=max_test)
    scheme = "iid" if scheme is None else scheme
    ds = load(name)
    if pixels == "unit":
        ds = unit_pixels(ds)
    ds, _ = subsample_rows(ds, None, subsample, num_clients, seed)
    parts = partition(ds.y_train, num_clients, scheme, seed=seed, **partition_kwargs)
    return federate(ds, parts, max_test=max_test)


def cached_federated(name: str, num_clients: int, scheme: str | None = None, *, seed: int = 0,
                     subsample: int | None = None, max_test: int | None = None,
                     pixels: str = "standardized", **partition_kwargs) -> FederatedData:
    """:func:`federated_dataset` with the same arguments, cached per process (the last
    :data:`CACHED_SPLITS` splits asked for): the stored run functions of every paper load their
    split through it, so a worker that runs many seeds of one split loads it once.

    The cache returns the SAME object to every caller: callers read it and never change its
    tensors in place.  It is keyed by the arguments, not by
    the files: after changing ``$FLDP_DATA_DIR`` or the files, call ``cached_federated.cache_clear()``.
    """
    return _cached(name, num_clients, scheme, seed, subsample, max_test, pixels,
                   tuple(sorted(partition_kwargs.items())))


#: How many splits :func:`cached_federated` keeps in memory (an MNIST split is about 190 MB).
CACHED_SPLITS = 8


@functools.lru_cache(maxsize=CACHED_SPLITS)
def _cached(name, num_clients, scheme, seed, subsample, max_test, pixels, partition_kwargs) -> FederatedData:
    return federated_dataset(name, num_clients, scheme, seed=seed, subsample=subsample, max_test=max_test,
                             pixels=pixels, **dict(partition_kwargs))


cached_federated.cache_clear = _cached.cache_clear
cached_federated.cache_info = _cached.cache_info
