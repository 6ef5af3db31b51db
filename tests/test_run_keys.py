"""A stored run's key must not change when code moves: the key is the SHA-256 of the run function's
``"module:function"`` name, its full configuration and the code version (fldp's version and the
function's ``store_version``), so moving a run function, renaming a module it lives in, or a new
default argument would silently orphan every stored and archived run.  These keys were computed
before the package was split into its three wings; they pin one configuration per kind of run
(the configurations are those of committed runs, read from results/costs/)."""
from __future__ import annotations

import pytest

from fldp.repro import store

PINNED = [
    ("fldp.baseline:fedavg_run",
     {"N": 50, "T": 20, "alpha": 0.5, "batch_size": 50, "local_epochs": 1, "lr": 0.05, "max_test": None,
      "scheme": "iid", "seed": 0, "subsample": None},
     "12a35fcfe288015091f401ea236391b2"),
    ("fldp.equal_privacy:accuracy_run",
     {"K": 10, "N": 20, "c": 10.0, "delta": 1e-05, "eps": 1, "max_test": 2000, "rounds": 20, "scheme": "nbafl",
      "seed": 0, "subsample": 10000, "task": "mnist-mlp"},
     "00eab0bb4cc0ef957d78cc6ff4590187"),
    ("fldp.papers.zhou.experiments:fedsgd_dpc_run",
     {"N": 10, "T": 1, "b": 1, "c2": None, "data_seed": 0, "dataset": "mnist", "delta": 1e-05, "eps": 1.0,
      "eval_every": 1, "lr": 0.05, "lr_decay": 0.01, "max_test": None, "mechanism": "laplace", "model": "logreg",
      "pixels": "unit", "q": None, "rule": "paper", "sampler": "round_robin", "seed": 0, "split": "classes",
      "subsample": None, "xi": 300.0},
     "161ce40051f38ed5402b3c4718e08920"),
    ("fldp.papers.li2021.experiments:secure_fedavg_run",
     {"G": 2.0, "K": 50, "N": 100, "Q": 1, "b": 1, "clients_per_class": None, "clip": "batch", "data_seed": 0,
      "decay": 0.01, "delta": 0.0001, "eps": 0.1, "eta0": 0.2, "eval_every": 5, "eval_train": False, "l2": 0.0001,
      "max_test": None, "rounds": 200, "rule": "paper", "scheme": "iid", "seed": 0, "subsample": None,
      "uploads": None},
     "eca857b1ff2f89381212e71063d43497"),
    ("fldp.papers.adaptive_noise.experiments:utility_run",
     {"K": 15, "N": 100, "alpha": 1.0, "batch_size": 128, "c": None, "channels": [8, 16], "device": "cpu",
      "dp": "local", "dp_clip": "round", "dropout": 0.0, "eps": None, "eval_every": 1, "hidden": 64,
      "local_epochs": 5, "lr": 0.1, "max_test": None, "p": 0.0, "padding": "valid", "rounds": 10,
      "scheme": "regular", "seed": 0, "subsample": 20000},
     "192e975a6607f7926f91f4ee61a44135"),
    ("fldp.papers.wei2020.experiments:eq16_noise",
     {"N": 50, "dim": 100000, "first_draw": 0, "keep": 20000, "reps": 10, "seed": 0, "sigma_D": 0.0,
      "sigma_U": 0.0017263952556067995},
     "fe11f6782f931e8232ff14d8a07bc5e3"),
    ("fldp.papers.wei2020.simulations:nbafl_run",
     {"N": 50, "T": 25, "eps": 60.0, "delta": 0.01, "C": 20.0, "L": 1, "seed": 0},
     "02ba77c8889dfd825074bd46d87f5ab5"),
]


@pytest.mark.parametrize("fn, config, key", PINNED, ids=[p[0].split(":")[1] for p in PINNED])
def test_run_key_is_pinned(fn, config, key):
    assert store.run_key(fn, config) == key


def test_a_moved_function_would_change_its_key():
    """The pin can fail: the same configuration under another module name is another key."""
    fn, config, key = PINNED[-1]
    moved = "fldp.repro.simulations:nbafl_run"
    ident = {"fn": moved, "config": store._key_form(store.normalise(store.full_config(fn, config))),
             "version": store.code_version(fn).replace(fn, moved)}
    import hashlib

    assert hashlib.sha256(store.canonical(ident).encode()).hexdigest()[:32] != key
