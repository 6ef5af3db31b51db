"""Federated partitions: which training rows each client holds, reproducible from ``seed``.

:func:`partition` returns one index tensor per client (``iid``, Dirichlet label skew,
shards of the label-sorted data, or one class per client); :func:`fldp.data.federate` turns
them into a :class:`fldp.data.FederatedData`.  FEMNIST's writers are grouped into clients by
:func:`fldp.data.femnist.group_writers`.
"""
from __future__ import annotations

import numpy as np
import torch

from fldp import seeding, validate

__all__ = ["PARTITIONS", "CLIENTS_PER_CLASS", "partition"]

PARTITIONS = ("iid", "dirichlet", "classes", "one_class")
CLIENTS_PER_CLASS = ("proportional", "equal")


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
