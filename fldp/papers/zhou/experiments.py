"""Zhou et al. (FedSGD-DPC), Sec. VII: the experiment runs of ``notebooks/zhou/04_experiments``,
as the run store keeps them.

:func:`fedsgd_dpc_run` is one FedSGD-DPC run (:func:`fldp.papers.zhou.algorithm.run`) whose
keyword arguments are its whole configuration (data set, split, data seed, subsample, pixel
scale, model, mechanism, budget, b, T, clipping, sampling, learning rate, run seed, evaluation),
so :class:`fldp.repro.store.RunStore` keys it completely and a sweep's workers can import it by name.
:func:`setting` builds one setting's configuration (every argument explicit, the seed left out);
:func:`seed_summaries` runs many settings over the seeds in ONE :func:`fldp.repro.sweep.run_all` call
(a parallel backend runs them side by side) and summarises each setting as
:func:`fldp.verdicts.over_seeds` does; :mod:`fldp.verdicts` turns the summaries into the
register's verdicts (``final_values``, ``best_of``, ``combine``).
"""
from __future__ import annotations

from typing import Any, Dict, Hashable, Mapping, Optional, Sequence

import numpy as np

from fldp import data, models, validate

from fldp.repro import sweep
from fldp.repro import store as S
from fldp.repro.store import RunStore
from fldp.papers.zhou import algorithm as alg

__all__ = [
    "MODELS", "federated_data", "fedsgd_dpc_run", "fedsgd_dpc_runs", "TOGETHER_OVER", "setting", "seed_summaries",
    "constants_run", "calibration_run"
]

#: The models a run can train: the paper's multinomial logistic regression on MNIST
#: (784 x 10 weights, no bias) and its FEMNIST CNN (110,526 parameters).
MODELS = {"logreg": models.MultinomialLogReg, "cnn_femnist": alg.femnist_cnn}


def federated_data(name: str, N: int, split: Optional[str], seed: int, subsample: Optional[int] = None,
                   max_test: Optional[int] = None, pixels: str = "unit") -> data.FederatedData:
    """``name`` (``"mnist"`` or ``"femnist"``) split over N clients by ``split`` (Zhou et al.,
    Sec. VII: ``"classes"``, two digits per client; None: the data set's default), cached per
    process (:func:`fldp.data.cached_federated`: each worker loads a split once; read it, never change it)."""
    return data.cached_federated(name, N, split, seed=seed, subsample=subsample, max_test=max_test, pixels=pixels)


def fedsgd_dpc_run(*, mechanism: str, eps: Optional[float], b: int, T: int, N: int = 10, delta: float = 1e-5,
                   xi: Optional[float] = None, q: Optional[float] = None, rule: str = "paper",
                   c2: Optional[float] = None, lr: float = 0.05, lr_decay: float = 0.01,
                   sampler: str = "round_robin", seed: int = 0, dataset: str = "mnist",
                   split: Optional[str] = "classes", data_seed: int = 0, subsample: Optional[int] = None,
                   max_test: Optional[int] = None, pixels: str = "unit", model: str = "logreg",
                   eval_every: int = 1, clip_only: bool = False) -> dict:
    """One FedSGD-DPC run (Zhou et al., Algorithm 1; Sec. VII's setting), as the run store keeps it.

    The data: ``dataset`` split over ``N`` clients by ``split`` with ``data_seed`` (fixed across
    the run seeds), ``subsample`` training rows (None: all), ``max_test`` test rows, ``pixels``;
    the model ``model`` (a key of :data:`MODELS`); the algorithm: ``mechanism`` (``"laplace"``
    or ``"gaussian"``), budget ``eps`` (None: plain FedSGD, no clipping or noise; with
    ``clip_only=True``: clipped as the mechanism clips, no noise), ``b`` clients
    per round, ``T`` rounds, clip ``xi`` and sampling rate ``q`` (None: the paper's defaults),
    noise ``rule``, ``c2``, ``lr`` decaying by ``lr_decay``, ``sampler``; ``seed`` the run's
    seed (initial model, noise, batches); evaluated every ``eval_every`` rounds.

    Returns ``{"loss", "acc", "rounds"}`` (training loss and test accuracy at those rounds),
    ``"eps_run"`` (what the most-queried client really spends, from the accountant; None when
    not private) and ``"calibration"`` (:meth:`~fldp.papers.zhou.algorithm.Calibration.as_dict`).
    """
    validate.choice("model", model, tuple(MODELS))
    fed = federated_data(dataset, N, split, data_seed, subsample, max_test, pixels)
    h, cal = alg.run(MODELS[model](), fed, **_algorithm_args(mechanism=mechanism, eps=eps, b=b, T=T, delta=delta,
                                                             xi=xi, q=q, rule=rule, c2=c2, lr=lr, lr_decay=lr_decay,
                                                             sampler=sampler, seed=seed, eval_every=eval_every,
                                                             clip_only=clip_only))
    return _record(h, cal)


#: The arguments of :func:`fedsgd_dpc_run` in which runs may differ and still train side by side
#: (:func:`fedsgd_dpc_runs`): the data, the model and the training settings are shared.
TOGETHER_OVER = ("seed", "eps", "rule", "c2", "delta", "eval_every")
_DATA = ("dataset", "N", "split", "data_seed", "subsample", "max_test", "pixels", "model")


def fedsgd_dpc_runs(configs: Sequence[Mapping[str, Any]]) -> list:
    """:func:`fedsgd_dpc_run` for several configurations that differ only in
    :data:`TOGETHER_OVER`, trained side by side (:func:`fldp.papers.zhou.algorithm.run_many`:
    full-batch runs of every seed and budget read each client's rows once a round for all of
    them); returns each run's result, the one :func:`fedsgd_dpc_run` returns for it alone (bit
    for bit, ``tests/test_engine_runs.py``, ``tests/test_sweep_together.py``).  The run store
    keeps each under its own key; :func:`fldp.repro.sweep.run_all` groups a sweep's runs so."""
    full = [S.full_config(fedsgd_dpc_run, c) for c in configs]
    for c in full[1:]:
        moved = sorted(k for k in c if k not in TOGETHER_OVER and c[k] != full[0][k])
        if moved:
            raise ValueError(f"configs must differ only in {TOGETHER_OVER}: they also differ in {moved}")
    first = full[0]
    validate.choice("model", first["model"], tuple(MODELS))
    fed = federated_data(*(first[k] for k in _DATA[:-1]))
    args = [_algorithm_args(**{k: v for k, v in c.items() if k not in _DATA}) for c in full]
    return [_record(h, cal) for h, cal in alg.run_many(MODELS[first["model"]](), fed, args)]


fedsgd_dpc_run.together = fedsgd_dpc_runs
fedsgd_dpc_run.together_over = TOGETHER_OVER
fedsgd_dpc_run.added_later = ("clip_only",)  # the key leaves it out at its default: earlier runs keep their keys


def _algorithm_args(*, mechanism, eps, b, T, delta, xi, q, rule, c2, lr, lr_decay, sampler, seed, eval_every,
                    clip_only=False) -> dict:
    if clip_only and eps is not None:
        raise ValueError(f"clip_only=True is the mechanism's clipping without its noise: it needs eps=None, got eps={eps}")
    return dict(mechanism=mechanism, eps=1.0 if eps is None else eps, b=b, T=T, delta=delta, q=q, xi=xi, rule=rule,
                c2=c2, lr=lr, lr_decay=lr_decay, sampler=sampler, private=eps is not None, seed=seed,
                eval_every=eval_every, clip_only=clip_only)


def _record(h, cal) -> dict:
    return {"loss": h.train_loss, "acc": h.test_acc, "rounds": h.rounds,
            "eps_run": None if cal is None else cal.eps_run, "calibration": None if cal is None else cal.as_dict()}


def setting(mechanism: str, eps: Optional[float], b: int, T: int, *, xi1: float, xi2: float, q: float,
            curve: bool = False, **fixed) -> dict:
    """The configuration of :func:`fedsgd_dpc_run` for one setting (all arguments but the seed):
    the Laplace mechanism clips to ``xi1`` in l1 with every row (q = 1), the Gaussian one to
    ``xi2`` in l2 at sampling rate ``q``; ``curve=True`` evaluates about 50 times along the run,
    else at the end only; ``fixed``: the other arguments of :func:`fedsgd_dpc_run`."""
    extra = dict(xi=xi1, q=None) if mechanism == "laplace" else dict(xi=xi2, q=q)
    eval_every = max(1, T // 50) if curve else T
    return S.full_config(fedsgd_dpc_run, {**fixed, "mechanism": mechanism, "eps": eps, "b": b, "T": T,
                                          "eval_every": eval_every, **extra}, omit=("seed",))


def seed_summaries(store: Optional[RunStore], seeds: Sequence[int],
                         settings: Mapping[Hashable, Mapping[str, Any]]) -> Dict[Hashable, dict]:
    """:func:`fedsgd_dpc_run` for every setting (a configuration without the seed, e.g. from
    :func:`setting`) and every seed, in one :func:`fldp.repro.sweep.run_all` call through ``store``
    (a plain call per run when ``store`` is None; :func:`fldp.repro.sweep.seed_summaries`).  Returns,
    per key of ``settings``, :func:`fldp.verdicts.over_seeds` of ``loss``, ``acc`` and ``eps_run``
    (NaN when not private) plus ``rounds`` (the first seed's) and ``calibration`` (the first
    seed's, a dict or None)."""
    row = lambda o: {"loss": o["loss"], "acc": o["acc"], "eps_run": np.nan if o["eps_run"] is None else o["eps_run"],
                     "rounds": o["rounds"]}
    return sweep.seed_summaries(fedsgd_dpc_run, settings, seeds, store=store, row=row,
                                extra=lambda k, outs, out: {"rounds": out["rounds"]["runs"][0],
                                                            "calibration": outs[0]["calibration"]})


def constants_run(*, N: int = 10, split: Optional[str] = "classes", data_seed: int = 0,
                  subsample: Optional[int] = None, max_test: Optional[int] = 2000, pixels: str = "unit",
                  T_traj: int = 50, lr: float = 0.05, lr_decay: float = 0.01, local_steps: int = 200,
                  stat_points: int = 4, hessian_points: int = 2, seed: int = 0) -> dict:
    """Zhou et al.'s constants (mu, lambda, G, Gamma, Y_0, xi, Lambda_i; Theorems 3-4) of the
    logistic regression on MNIST split over ``N`` clients, estimated along a non-private FedSGD
    trajectory (:func:`fldp.papers.zhou.estimate.estimate_constants`, its keyword arguments
    here), as the run store keeps them (``notebooks/zhou/02_laplace``)."""
    from fldp.papers.zhou import estimate

    fed = federated_data("mnist", N, split, data_seed, subsample, max_test, pixels)
    return estimate.estimate_constants(MODELS["logreg"](), fed, T_traj=T_traj, lr=lr, lr_decay=lr_decay,
                                       local_steps=local_steps, stat_points=stat_points,
                                       hessian_points=hessian_points, seed=seed)


def calibration_run(*, mechanism: str, eps: float, b: int, T: int, N: int, d_i: int, delta: float = 1e-5,
                    q: Optional[float] = None, xi: Optional[float] = None, rule: str = "paper",
                    c2: Optional[float] = None, sampler: str = "round_robin") -> dict:
    """The noise of FedSGD-DPC (Zhou et al., eq. (4)-(5) or the PLD accountant by ``rule``) and
    what it spends, :func:`fldp.papers.zhou.algorithm.calibrate` (seconds with the accountant),
    as the run store keeps it (``notebooks/zhou/03_gaussian``): its ``as_dict()``."""
    return alg.calibrate(mechanism=mechanism, eps=eps, b=b, T=T, N=N, d_i=d_i, delta=delta, q=q, xi=xi,
                         rule=rule, c2=c2, sampler=sampler).as_dict()
