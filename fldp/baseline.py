"""Non-private FedAvg baseline (``notebooks/00_fedavg_baseline``): the MLP 784-256-10 of Wei et
al. (2020, Sec. VI) on MNIST, trained by :func:`fldp.engine.run`, as the run store keeps it.

:func:`fedavg_run` is one training run whose keyword arguments are its whole configuration
(partition, clients, rounds, local training, data seed = run seed), so
:class:`fldp.repro.store.RunStore` keys it completely.
"""
from __future__ import annotations

from typing import Optional

from fldp import data, engine, models
from fldp.verdicts import Claim

__all__ = ["fedavg_run"]


def fedavg_run(*, N: int, T: int, scheme: str, seed: int, alpha: float = 0.5, local_epochs: int = 1,
               batch_size: int = 50, lr: float = 0.05, subsample: Optional[int] = None,
               max_test: Optional[int] = None) -> dict:
    """One non-private FedAvg run: MNIST split over N clients by ``scheme`` ("iid" or
    "dirichlet" with ``alpha``, drawn with ``seed``), T rounds, the MLP trained from ``seed``.
    Returns the per-round curves (``rounds``, ``train_loss``, ``test_acc``), the run's
    ``wall_time_s`` and the smallest and largest client sizes."""
    fd = data.federated_dataset("mnist", N, scheme, seed=seed, alpha=alpha, subsample=subsample, max_test=max_test)
    cfg = engine.FLConfig(num_rounds=T, local_epochs=local_epochs, batch_size=batch_size, lr=lr)
    h = engine.run(models.MLP(), fd, engine.with_config(cfg, seed=seed))
    return {"rounds": h.rounds, "train_loss": h.train_loss, "test_acc": h.test_acc, "wall_time_s": h.wall_time_s,
            "counts_min": int(fd.counts.min()), "counts_max": int(fd.counts.max())}


def claims() -> dict:
    """The baseline chapter's fixed claims (:class:`fldp.verdicts.Claim`), by name: the project's
    own diagnostics at its own setting (no paper states it)."""
    note = "the project's baseline: N = 50, T = 20, 1 local epoch of SGD (batch 50, lr 0.05), 5 seeds; no paper states it"
    return {
        "iid": Claim("baseline-iid", "non-private FedAvg reaches at least 95 % mean test accuracy on iid MNIST in 20 rounds",
                     kind="diagnostic", setting="reading", setting_note=note,
                     falsifier="a mean final test accuracy over the seeds below 95 %"),
        "skew": Claim("baseline-skew", "label skew (Dirichlet, alpha = 0.5) costs accuracy: iid ends more accurate than "
                                       "Dirichlet at the last round",
                      kind="diagnostic", setting="reading", setting_note=note,
                      falsifier="Dirichlet's final accuracy above iid's on paired seeds beyond half a point",
                      min_effect=0.005, units="test accuracy, as a fraction"),
    }
