"""Stored runs of the adaptive CLT noise chapter's experiments (Secs. 7.1-7.3; notebooks
``adaptive_noise/03_utility`` and ``04_privacy``), for the run store and sweeps.

A run is one training of regular FL, the scheme ('ours',
:mod:`~fldp.papers.adaptive_noise.algorithm`) or the paper's DP baseline on MNIST split over N
clients (Dirichlet alpha; ``alpha=None``: iid) with the chapter's CNN; every setting is an
argument, so the store's key covers the whole run:

* :func:`utility_run` (Figs. 5-7, Table 1): the test-accuracy curve, the SNR per round and, for
  DP, what the baseline really spends;
* :func:`privacy_run` (Tables 2-3, Figs. 8 and 11): the same training, then Shokri et al.'s
  membership attack on the last round's released uploads (the attack needs the uploads, which
  are as large as the model, so it runs inside the stored run and only its scores are kept);
  ``keep_params=True`` also returns the final global model as a list (the label-composition
  attack of Figs. 9-10 starts from regular FL's model; that attack is one gradient step per
  client, seconds, and stays in the notebook).

:func:`sweep_runs` runs a table's or a figure's runs through :func:`fldp.repro.sweep.run_all` and
gives them back by name; ``sweep_runs(..., timed=True)`` adds the seconds each run took when it
ran (its store record keeps them, so a re-execution reports the same).
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from fldp import attacks, data, models, seeding

from fldp.repro import sweep
from fldp.repro import store as S
from fldp.data import FederatedData
from fldp.papers.adaptive_noise import algorithm as alg

__all__ = [
    "SCHEME_SETTINGS", "dataset", "utility_run", "membership", "privacy_run", "full_config",
    "sweep_runs", "descent_run", "descent_curves"
]

#: The settings of a scheme that the notebooks keep beside each run's numbers.
SCHEME_SETTINGS = ("c", "p", "eps", "dp", "dp_clip", "dropout")


def dataset(N: int, alpha: Optional[float], seed: int, subsample: Optional[int] = None,
            max_test: Optional[int] = None) -> FederatedData:
    """MNIST over N clients, label split Dirichlet(alpha) (``alpha=None``: iid), as the
    adaptive CLT noise paper's Sec. 6.3 sets it up (cached per process,
    :func:`fldp.data.cached_federated`: each worker loads it once; read it, never change it)."""
    return data.cached_federated("mnist", N, "iid" if alpha is None else "dirichlet", alpha=alpha, seed=seed,
                                 subsample=subsample, max_test=max_test)


def _train(*, scheme, N, alpha, seed, subsample, max_test, channels, hidden, padding, K, rounds, local_epochs,
           batch_size, lr, eval_every, device, c, p, eps, dp, dropout, dp_clip="round"):
    """(model, data, scheme settings, :class:`.algorithm.Run`) of one training."""
    if scheme == "ours" and c is None:
        raise ValueError("scheme='ours' needs the noise scale c")
    if scheme == "dp" and eps is None:
        raise ValueError("scheme='dp' needs eps")
    fd = dataset(N, alpha, seed, subsample, max_test)
    model = models.CNN(channels=tuple(channels), hidden=hidden, padding=padding)
    kw = {"ours": dict(c=c, p=p), "dp": dict(eps=eps, dp=dp)}.get(scheme, {})
    r = alg.run(model, fd, scheme=scheme, rounds=rounds, K=K, local_epochs=local_epochs, batch_size=batch_size,
                lr=lr, eval_every=eval_every, seed=seed, device=device, dropout=dropout, dp_clip=dp_clip, **kw)
    return model, fd, kw, r


def utility_run(*, scheme: str, N: int, alpha: Optional[float], K: int, rounds: int, seed: int = 0,
                subsample: Optional[int] = None, max_test: Optional[int] = None,
                channels: Sequence[int] = (32, 64), hidden: Optional[int] = 512, padding: str = "valid",
                local_epochs: int = alg.EPOCHS, batch_size: int = alg.BATCH, lr: float = alg.LR,
                eval_every: int = 1, device: str = "cpu", c: Optional[float] = None, p: Optional[float] = 0.0,
                eps: Optional[float] = None, dp: str = "local", dp_clip: str = "round",
                dropout: float = 0.0) -> dict:
    """One training of the adaptive CLT noise paper's Secs. 7.1-7.2 (Figs. 5-7, Table 1):
    ``scheme`` 'regular', 'ours' (noise scale ``c``, filter ``p``) or 'dp' (``eps``, noise on
    the uploads, ``dp="local"``, or on the aggregate, ``"central"``; clipping bound S the
    round's median update norm, ``dp_clip="round"``, or the lagged one, ``"lagged"``), with client ``dropout``,
    on :func:`dataset` with ``models.CNN(channels, hidden, padding=padding)``.  Returns the test
    accuracy ``acc`` at ``rounds``, the uploads' SNR per round (inf for regular FL), the round the
    run diverged in (or None) and, for DP, ``spent``: :func:`.algorithm.dp_spent`."""
    _, _, _, r = _train(scheme=scheme, N=N, alpha=alpha, seed=seed, subsample=subsample, max_test=max_test,
                        channels=channels, hidden=hidden, padding=padding, K=K, rounds=rounds,
                        local_epochs=local_epochs, batch_size=batch_size, lr=lr, eval_every=eval_every,
                        device=device, c=c, p=p, eps=eps, dp=dp, dropout=dropout, dp_clip=dp_clip)
    h = r.history
    out = {"acc": h.test_acc, "rounds": h.rounds, "snr": r.snr, "diverged_at": h.diverged_at}
    if scheme == "dp":
        out["spent"] = alg.dp_spent(h, eps=eps, dp=dp)
    return out


def membership(model, fd: FederatedData, r: alg.Run, *, scheme: str, kw: dict, settings: dict, seed: int,
               aux_size: int, num_shadows: int, targets: int, final=None) -> dict:
    """Shokri et al.'s membership attack on the last round's released uploads of run ``r``
    (adaptive CLT noise paper, Sec. 7.3.1): ``num_shadows`` shadows trained as one engine round
    from the same broadcast model through the same noise (a seed of its own, ``seeding.key(seed, "shadow_noise")``) on the first ``aux_size``
    test images; the ``targets`` largest uploaders attacked, members their own data against the
    other test images.  Mean accuracy, F1 and empirical eps; per-class accuracy and F1 (NaN-mean);
    ``attack_guesses``: the guesses the scores rest on (members and non-members over the targets),
    for :func:`fldp.verdicts.gate_power`.  With ``final`` (the final global model), the same
    attack also targets it, on the same members and non-members (``attack_acc_global``)."""
    aux, pool = (fd.x_test[:aux_size], fd.y_test[:aux_size]), (fd.x_test[aux_size:], fd.y_test[aux_size:])
    last = r.uploads
    cfg = alg.config(scheme=scheme, **settings, seed=seeding.key(seed, "shadow_noise"))
    att = attacks.train_attack(model, aux=aux, config=cfg, start=last["start"], uplink=alg.hooks(scheme=scheme, **kw).get("uplink"),
                               t=last["t"], num_shadows=num_shadows, seed=seed)
    order = fd.counts[last["clients"]].argsort(descending=True)[:targets].tolist()
    out = [attacks.evaluate_attack(model, att, last["start"] + last["noisy"][j], members=fd.client(int(last["clients"][j])),
                                   nonmembers=pool, seed=seed) for j in order]
    mean = lambda f: float(np.mean([f(o) for o in out]))
    glob = {}
    if final is not None:
        res = [attacks.evaluate_attack(model, att, final, members=fd.client(int(last["clients"][j])), nonmembers=pool,
                                       seed=seed) for j in order]
        glob = {"attack_acc_global": float(np.mean([o.accuracy for o in res]))}
    return {**glob, "attack_acc": mean(lambda o: o.accuracy), "attack_f1": mean(lambda o: o.f1), "emp_eps": mean(lambda o: o.empirical_eps),
            "attack_guesses": int(sum(o.num_members + o.num_nonmembers for o in out)),
            "per_class_acc": np.nanmean([o.per_class_accuracy for o in out], 0).tolist(),
            "per_class_f1": np.nanmean([o.per_class_f1 for o in out], 0).tolist()}


def privacy_run(*, scheme: str, N: int, alpha: Optional[float], K: int, rounds: int, seed: int = 0,
                subsample: Optional[int] = None, max_test: Optional[int] = None,
                channels: Sequence[int] = (32, 64), hidden: Optional[int] = 512, padding: str = "valid",
                local_epochs: int = alg.EPOCHS, batch_size: int = alg.BATCH, lr: float = alg.LR,
                eval_every: int = 1, device: str = "cpu", c: Optional[float] = None, p: Optional[float] = 0.0,
                eps: Optional[float] = None, dp: str = "local", aux_size: int = 3000, num_shadows: int = 10,
                targets: int = 3, keep_params: bool = False) -> dict:
    """One training of the adaptive CLT noise paper's Sec. 7.3 (Tables 2-3, Figs. 8 and 11),
    as :func:`utility_run` (no dropout), then the membership attack on it (:func:`membership`).
    Returns the final test accuracy ``acc``, the ``curve`` at ``rounds``, the SNR per round, the
    round the run diverged in (or None), for DP the whole run's ``eps_run`` (accountant), the
    attack's scores on the uploads and on the final global model (``attack_acc_global``; NaN,
    with 0 guesses, when the run diverged: its uploads are not finite) and,
    with ``keep_params``, the final global model ``params`` (a list)."""
    settings = dict(rounds=rounds, K=K, local_epochs=local_epochs, batch_size=batch_size, lr=lr, device=device)
    model, fd, kw, r = _train(scheme=scheme, N=N, alpha=alpha, seed=seed, subsample=subsample, max_test=max_test,
                              channels=channels, hidden=hidden, padding=padding, eval_every=eval_every, c=c, p=p,
                              eps=eps, dp=dp, dropout=0.0, **settings)
    h = r.history
    out = {"acc": float(h.test_acc[-1]), "curve": h.test_acc, "rounds": h.rounds, "snr": r.snr,
           "diverged_at": h.diverged_at}
    if scheme == "dp":
        out["eps_run"] = alg.dp_spent(h, eps=eps, dp=dp)["run_eps"]
    if h.diverged_at is None:
        out.update(membership(model, fd, r, scheme=scheme, kw=kw, settings=settings, seed=seed, aux_size=aux_size,
                              num_shadows=num_shadows, targets=targets, final=h.params))
    else:  # a diverged run is not attacked (its last uploads are not finite): no attack numbers, no guesses
        classes = int(fd.y_test.max()) + 1
        out.update({"attack_acc": math.nan, "attack_acc_global": math.nan, "attack_f1": math.nan, "emp_eps": math.nan, "attack_guesses": 0,
                    "per_class_acc": [math.nan] * classes, "per_class_f1": [math.nan] * classes})
    if keep_params:
        out["params"] = h.params.cpu().tolist()
    return out


def full_config(fn: Callable, **config) -> dict:
    """``config`` with every argument of ``fn`` written out (:func:`fldp.repro.store.full_config`)."""
    return S.full_config(fn, config)


def sweep_runs(fn: Callable, specs: Mapping[str, Mapping[str, Any]], *, store: Optional[S.RunStore],
               timed: bool = False, seeds: Optional[Sequence[int]] = None, **common) -> dict:
    """Runs of ``fn`` (:func:`utility_run` or :func:`privacy_run`) by name: ``specs`` maps each
    name to its own settings (scheme, c, p, eps, ...), ``common`` holds the rest; all of them go
    through ONE :func:`fldp.repro.sweep.run_all` call on ``store`` (so a parallel backend runs them side
    by side; ``store=None``: plain calls, nothing stored).  Each run's result gets its
    scheme settings beside it; ``timed=True`` adds ``wall_s``, the seconds the run took when it
    ran (read from its store record when it is read back, so a re-execution shows the same).
    ``seeds``: every spec runs once per seed (one sweep for all) and each name maps to the
    list of its runs, in seed order."""
    if seeds is not None:
        flat = {(name, s): {**spec, "seed": int(s)} for name, spec in specs.items() for s in seeds}
        out = sweep_runs(fn, flat, store=store, timed=timed, **common)
        return {name: [out[(name, s)] for s in seeds] for name in specs}
    configs = [full_config(fn, **{**common, **spec}) for spec in specs.values()]
    if store is None:
        results, seconds = [], []
        for cfg in configs:
            t0 = time.perf_counter()
            results.append(S.normalise(fn(**cfg)))  # as the store would give it back
            seconds.append(time.perf_counter() - t0)
    else:  # the seconds each run took when it ran (kept in its store record)
        out = sweep.run_all(fn, configs, store=store, progress=False)
        results, seconds = out.results, out.run_seconds
    runs = {}
    for (name, spec), res, sec in zip(specs.items(), results, seconds):
        runs[name] = {**res, **{k: spec[k] for k in SCHEME_SETTINGS if k in spec}}
        if timed:
            runs[name]["wall_s"] = sec
    return runs


def descent_run(*, c: Sequence[float], K: int, dim: int, rho: float = 1.0, dropouts: int = 0,
                trials: int = 2000, seed: int = 0) -> list:
    """Sec. 4.2.1's Monte Carlo (notebook ``adaptive_noise/02_theory``): P(the aggregated noise
    is no larger than the aggregated update), :func:`fldp.papers.adaptive_noise.theory.descent_probability`
    at every noise scale in ``c`` for ``K`` clients, as the run store keeps it (a list, one per c)."""
    from fldp.papers.adaptive_noise import theory

    return [theory.descent_probability(c=float(x), K=K, dim=dim, rho=rho, dropouts=dropouts, trials=trials,
                                       seed=seed) for x in c]


def descent_curves(store: Optional[S.RunStore], keys: Sequence, **common) -> dict:
    """:func:`descent_run` for every key's settings (``keys``: (key, dict) pairs) in ONE
    :func:`fldp.repro.sweep.run_all` call through ``store`` (plain calls when None), by key."""
    configs = [full_config(descent_run, **common, **spec) for _, spec in keys]
    out = ([descent_run(**cfg) for cfg in configs] if store is None
           else sweep.run_all(descent_run, configs, store=store, progress=False).results)
    return {k: r for (k, _), r in zip(keys, out)}
