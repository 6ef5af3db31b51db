"""Li, Chang & Chi (secure FedAvg), Sec. 4: the Adult experiment runs of
``notebooks/li2021/03_experiments``, as the run store keeps them.

:func:`secure_fedavg_run` is one secure FedAvg run (:func:`fldp.papers.li2021.algorithm.run`)
whose keyword arguments are its whole configuration (the split of Adult and its seed, the
model's lambda, eps, Q, b, K, rounds, clipping, noise rule, step size, run seed, evaluation), so
:class:`fldp.repro.store.RunStore` keys it completely and a sweep's workers can import it by name.
:func:`setting` builds one setting's configuration (every argument explicit, the seed left out);
:func:`seed_summaries` runs many settings over the seeds in ONE :func:`fldp.repro.sweep.run_all` call
(a parallel backend runs them side by side) and summarises each setting as
:func:`fldp.verdicts.over_seeds` does; :mod:`fldp.verdicts` turns the summaries into the
register's verdicts (``final_values``, ``best_of``, ``combine``).
"""
from __future__ import annotations

from typing import Any, Dict, Hashable, Mapping, Optional, Sequence

from fldp import data

from fldp.repro import sweep
from fldp.repro import store as S
from fldp.repro.store import RunStore
from fldp.papers.li2021 import algorithm as alg

__all__ = [
    "federated_data", "secure_fedavg_run", "setting", "seed_summaries", "constants_run",
    "READINGS"
]


def federated_data(N: int, scheme: str, clients_per_class: Optional[str], seed: int,
                   subsample: Optional[int] = None, max_test: Optional[int] = None) -> data.FederatedData:
    """Adult split over N clients (Li et al., Sec. 4.1): ``scheme="iid"``, or ``"one_class"``
    with ``clients_per_class`` (``"proportional"`` or ``"equal"``); cached per process
    (:func:`fldp.data.cached_federated`: each worker loads a split once; read it, never change it)."""
    extra = {} if clients_per_class is None else {"clients_per_class": clients_per_class}
    return data.cached_federated("adult", N, scheme, seed=seed, subsample=subsample, max_test=max_test, **extra)


def secure_fedavg_run(*, eps: Optional[float], Q: int, b: int, K: int, rounds: int, N: int = 100,
                      G: float = alg.G_CLIP, delta: float = alg.DELTA, clip: str = "batch", rule: str = "paper",
                      uploads: Optional[int] = None, eta0: float = alg.LR0, decay: float = alg.LR_DECAY,
                      l2: float = 1e-4, seed: int = 0, scheme: str = "iid", clients_per_class: Optional[str] = None,
                      data_seed: int = 0, subsample: Optional[int] = None, max_test: Optional[int] = None,
                      eval_every: int = 1, eval_train: bool = False) -> dict:
    """One secure FedAvg run (Li, Chang & Chi, Algorithm 1; Sec. 4's Adult setting), as the run
    store keeps it.

    The data: Adult split over ``N`` clients (``scheme``, ``clients_per_class``) with
    ``data_seed`` (fixed across the run seeds), ``subsample`` training rows (None: all),
    ``max_test`` test rows; the model: the paper's logistic regression with ``l2`` = lambda
    (:func:`fldp.papers.li2021.algorithm.logreg`); the algorithm: budget ``eps`` per upload (None:
    "without DP", the same clipping and no noise), ``Q`` local steps on mini-batches of ``b``,
    ``K`` clients per round, ``rounds`` = T/Q communication rounds, clip ``G`` (``clip``: the
    batch or every sample), ``delta``, noise ``rule`` and ``uploads``, step size ``eta0 / (1 +
    decay t)``; ``seed`` the run's seed (noise, batches, client sampling); evaluated every
    ``eval_every`` rounds (the training loss too when ``eval_train``).

    Returns ``{"acc", "test_loss", "train_loss", "rounds"}`` (the curves at those rounds),
    ``"eps_run"`` (the worst client's whole-run eps, :func:`fldp.papers.li2021.algorithm.spent`;
    NaN when not private) and ``"spent"`` (that function's whole answer, None when not private).
    """
    fed = federated_data(N, scheme, clients_per_class, data_seed, subsample, max_test)
    model = alg.logreg(fed.x_train.shape[1], l2=l2)
    h, cal = alg.run(model, fed, eps=1.0 if eps is None else eps, private=eps is not None, Q=Q, b=b, K=K,
                     rounds=rounds, G=G, delta=delta, clip=clip, rule=rule, uploads=uploads, eta0=eta0,
                     decay=decay, seed=seed, eval_every=eval_every, eval_train=eval_train)
    spent = alg.spent(h, cal) if cal else None
    return {"acc": h.test_acc, "test_loss": h.test_loss, "train_loss": h.train_loss, "rounds": h.rounds,
            "eps_run": spent["eps"] if spent else float("nan"), "spent": spent}


def setting(eps: Optional[float], Q: int, b: int, K: int, **fixed) -> dict:
    """The configuration of :func:`secure_fedavg_run` for one setting (all arguments but the
    seed); ``fixed``: its other arguments."""
    return S.full_config(secure_fedavg_run, {**fixed, "eps": eps, "Q": Q, "b": b, "K": K}, omit=("seed",))


def seed_summaries(store: Optional[RunStore], seeds: Sequence[int],
                         settings: Mapping[Hashable, Mapping[str, Any]]) -> Dict[Hashable, dict]:
    """:func:`secure_fedavg_run` for every setting (a configuration without the seed, e.g. from
    :func:`setting`) and every seed, in one :func:`fldp.repro.sweep.run_all` call through ``store``
    (a plain call per run when ``store`` is None; :func:`fldp.repro.sweep.seed_summaries`).  Returns,
    per key of ``settings``, :func:`fldp.verdicts.over_seeds` of ``acc`` and ``eps_run`` plus
    ``rounds`` (the first seed's) and ``eps_claim`` (the setting's eps, None without DP)."""
    return sweep.seed_summaries(secure_fedavg_run, settings, seeds, store=store,
                                row=lambda o: {n: o[n] for n in ("acc", "rounds", "eps_run")},
                                extra=lambda k, outs, out: {"rounds": out["rounds"]["runs"][0],
                                                            "eps_claim": settings[k]["eps"]})


def constants_run(*, scheme: str, clients_per_class: Optional[str] = None, N: int = 100, l2: float = 1e-4,
                  data_seed: int = 0, iters: int = 50) -> dict:
    """Li, Chang & Chi's Theorem 1 constants (L, mu, Gamma, gamma_k^2, ...) of their logistic
    regression (lambda = ``l2``) on Adult split over ``N`` clients, the optima by Newton
    (:func:`fldp.papers.li2021.estimate.estimate_constants`), as the run store keeps them
    (``notebooks/li2021/02_convergence``); ``estimate.Constants(**result)`` gives them back."""
    from fldp.papers.li2021 import estimate

    fed = federated_data(N, scheme, clients_per_class, data_seed)
    return estimate.estimate_constants(alg.logreg(fed.x_train.shape[1], l2=l2), fed, iters=iters).as_dict()



#: The readings of Sec. 4's clipping and noise that ``03_experiments`` runs Figs. 2-4 under, as
#: arguments of :func:`secure_fedavg_run`: ``literal`` is the paper's wording (the mini-batch
#: gradient clipped, eq. (9) with Lemma 1's Df = 4 Q G eta); ``per-sample`` clips every sample's
#: gradient, so Df = 4 G eta (Q - 1 + 1/b) (:meth:`fldp.papers.li2021.algorithm.Calibration.df`:
#: Df / b at Q = 1) under the same eq. (9); ``accountant`` is what a practitioner would run: per-sample clipping and the
#: noise with which one upload truly is (eps, delta)-DP by the accountant (the paper's claim, met
#: soundly; eq. (9)'s amplification is not, ``01_mechanism``).
READINGS = {
    "literal": dict(clip="batch", rule="paper", uploads=None),
    "per-sample": dict(clip="sample", rule="paper", uploads=None),
    "accountant": dict(clip="sample", rule="accountant", uploads=1),
}
