"""Wei et al. 2020 (NbAFL), Sec. III-IV: the expensive computations of ``notebooks/wei2020/02``
and ``03``, as the run store keeps them (every setting is a keyword argument, so
:class:`fldp.repro.store.RunStore` keys each run completely).

* :func:`lemma1_pairs`: Lemma 1 by brute force (02): the local solver trained on neighbouring
  pairs (D, D') (:mod:`fldp.sensitivity`), reduced to the clipped distances the notebook uses.
* :func:`lemma1_descent`: the same with the local solver Sec. III-A states, full-batch gradient
  descent on the proximal objective run towards its argmin, read at checkpoints with the residual.
* :func:`eq16_noise`: eq. (16) by simulation (02): the noise path of Algorithm 1 on zero uploads.
* :func:`nbafl_constants`: the constants of Assumption 1 estimated from a non-private NbAFL run
  (03, :func:`fldp.papers.wei2020.constants.estimate_nbafl_constants`).
* :func:`calibrated_run` (08): NbAFL calibrated by the accountant to a whole-run target with the
  sensitivity a caller picks, 2C/m (the paper's) or 2C (what clipping guarantees), and
  :func:`calibrated_summary_over_seeds`, its runs over seeds summarised as
  :func:`fldp.papers.wei2020.simulations.seed_summary` summarises ``nbafl_run``'s (the runs of
  one seed share the data split, model, batches and noise streams with ``nbafl_run``'s).
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch

from fldp import data, engine, mechanisms as M, models, sensitivity
from fldp.papers.wei2020 import constants
from fldp.papers.wei2020 import algorithm as nbafl

__all__ = [
    "clipped_distance", "lemma1_pairs", "lemma1_descent", "eq16_noise", "nbafl_constants",
    "calibrated_run", "calibrated_summary_over_seeds"
]


def clipped_distance(wd: torch.Tensor, wp: torch.Tensor, C: float) -> torch.Tensor:
    """``||clip_C(w(D)) - clip_C(w(D'))||`` per pair, in float64 (no cancellation)."""
    return (M.clip_l2(wd, bound=C).double() - M.clip_l2(wp, bound=C).double()).norm(dim=1)


def lemma1_pairs(*, m: int, lr: float, local_epochs: int, batch_size: Optional[int], mu: float, num_pairs: int,
                 seed: int, replacement: str, Cs: Sequence[float], n_fed: int = 0) -> dict:
    """Lemma 1 by brute force: ``num_pairs`` neighbouring pairs of m MNIST training images
    (:func:`fldp.sensitivity.neighbouring_pairs`), both sides trained for one round of local
    training from the MLP's initial model (seed ``seed``).  Returns ``norms`` (``||w(D_k)||``,
    unclipped), ``distances`` (the clipped distance of each pair, one list per C of ``Cs``) and,
    when ``n_fed > 0``, ``aggregate``: the aggregated distances (eq. 8) of a federation of the
    first n_fed pairs with p_i = 1/n_fed, clipped at ``Cs[0]``."""
    ds, model = data.load("mnist"), models.MLP()
    start = model.init(engine.generator(seed, "init"))
    pairs = sensitivity.neighbouring_pairs(ds.y_train, m, num_pairs, seed=seed, replacement=replacement)
    cfg = engine.FLConfig(num_rounds=1, local_epochs=local_epochs, batch_size=batch_size, lr=lr, mu=mu, seed=seed)
    wd, wp = sensitivity.pair_uploads(model, start, ds.x_train, ds.y_train, pairs, cfg)
    out = {"norms": wd.norm(dim=1), "distances": [clipped_distance(wd, wp, C) for C in Cs]}
    if n_fed:
        p = torch.full((n_fed,), 1.0 / n_fed)
        out["aggregate"] = sensitivity.aggregated_distances(M.clip_l2(wd[:n_fed], bound=Cs[0]), M.clip_l2(wp[:n_fed], bound=Cs[0]), p)
    return out


def lemma1_descent(*, m: int, lr: float, steps: int, mu: float, num_pairs: int, seed: int, replacement: str,
                   Cs: Sequence[float], checkpoints: Sequence[int], chunk: int = 10) -> dict:
    """Lemma 1 with the local solver Sec. III-A states (eq. (4): full batch, the argmin of the
    local objective; Algorithm 1, line 6: with the proximal term mu): ``num_pairs`` neighbouring
    pairs of m MNIST training images (the pairs of :func:`lemma1_pairs` with the same seed), both
    sides trained by full-batch gradient descent (:func:`fldp.sensitivity.descend`, ``steps`` steps
    of ``lr``) from the MLP's initial model (seed ``seed``), ``chunk`` pairs at a time.

    Returns, for each step of ``checkpoints`` (and ``steps``, last): ``distances[k][j]``, the
    clipped distance of every pair at checkpoint k with ``Cs[j]``; ``residual[k]``, every pair's
    stationarity residual ||grad (F_i + mu/2 ||w - w0||^2)|| (the larger of its two sides);
    ``loss``: the final full-batch training loss of each D; ``norms``: the final ||w(D_k)||."""
    ds, model = data.load("mnist"), models.MLP()
    start = model.init(engine.generator(seed, "init"))
    pairs = sensitivity.neighbouring_pairs(ds.y_train, m, num_pairs, seed=seed, replacement=replacement)
    marks, dist, res, loss, norms = None, [], [], [], []
    for a in range(0, num_pairs, chunk):
        data_d, data_p = sensitivity.pair_data(ds.x_train, ds.y_train, pairs, slice(a, a + chunk))
        k = data_d.num_clients
        x = torch.cat([data_d.x_train, data_p.x_train]).view(2 * k, m, -1)
        y = torch.cat([data_d.y_train, data_p.y_train]).view(2 * k, m)
        snaps = list(sensitivity.descend(model, start, x, y, lr=lr, mu=mu, steps=steps, checkpoints=checkpoints))
        marks = [s for s, _, _ in snaps]
        dist.append([[clipped_distance(w[:k], w[k:], C) for C in Cs] for _, w, _ in snaps])
        res.append([torch.maximum(r[:k], r[k:]) for _, _, r in snaps])
        w_end = snaps[-1][1][:k]
        loss.append(model.loss(w_end, x[:k], y[:k]))
        norms.append(w_end.norm(dim=1))
    cat = lambda rows: torch.cat(rows)  # noqa: E731
    return {"steps": marks,
            "distances": [[cat([c[i][j] for c in dist]) for j in range(len(Cs))] for i in range(len(marks))],
            "residual": [cat([c[i] for c in res]) for i in range(len(marks))],
            "loss": cat(loss), "norms": cat(norms)}


def eq16_noise(*, sigma_U: float, sigma_D: float, N: int, dim: int, reps: int, seed: int, first_draw: int,
               keep: int = 20000) -> dict:
    """Eq. (16) by simulation: ``reps`` draws of the broadcast noise (N clients' uplink noise
    ``sigma_U`` averaged with p_i = 1/N, plus downlink noise ``sigma_D``; ``dim`` coordinates,
    the engine's mechanisms, draws ``first_draw``, ``first_draw + 1``, ...).  Returns the sum of
    squares over all draws and the first ``keep`` coordinates of the last draw."""
    sq, last = 0.0, None
    for r in range(first_draw, first_draw + reps):
        noisy = M.gaussian_noise((N, dim), sigma=sigma_U, generator=engine.generator(seed, "uplink", r), dtype=torch.float64)
        last = (noisy / N).sum(dim=0) + M.gaussian_noise(dim, sigma=sigma_D, generator=engine.generator(seed, "downlink", r), dtype=torch.float64)
        sq += float((last**2).sum())
    return {"sum_sq": sq, "sample": last[:keep]}


def nbafl_constants(*, N: int, seed: int, T_traj: int, T_star: int, mu_factor: float, hessian_sample: int,
                    hessian_iters: int, lr: float, batch_size: int, local_epochs: int, mu: float,
                    subsample: Optional[int] = None, max_test: Optional[int] = None) -> dict:
    """Theorem 2's constants (rho, beta, l, B, Theta, F*, the bound's mu) estimated from one
    non-private NbAFL run of the MLP on MNIST split iid over N clients
    (:func:`fldp.papers.wei2020.constants.estimate_nbafl_constants`).  Returns its result plus ``m_data``,
    the clients' local dataset size."""
    fed = data.federated_dataset("mnist", N, "iid", seed=seed, subsample=subsample, max_test=max_test)
    out = constants.estimate_nbafl_constants(
        models.MLP(), fed, T_traj=T_traj, T_star=T_star, mu_factor=mu_factor, hessian_sample=hessian_sample,
        hessian_iters=hessian_iters, seed=seed, lr=lr, batch_size=batch_size, local_epochs=local_epochs, mu=mu)
    return {**out, "m_data": fed.m}


def calibrated_run(*, N: int, T: int, eps: Optional[float], delta: float, C: float, where: str, sensitivity: str,
                   mu: float, lr: float, local_epochs: int, batch_size: int, seed: int, subsample: Optional[int] = None,
                   max_test: Optional[int] = None, eval_every: int = 1) -> dict:
    """One NbAFL run on MNIST with the paper's MLP (Algorithm 1: parameters clipped to C), its noise
    calibrated by the accountant so that the whole run is (eps, delta)-DP
    (:func:`fldp.papers.wei2020.algorithm.calibrate_accountant` with ``where`` and
    ``sensitivity``: ``"2C/m"``, eq. (5), or ``"2C"``, what clipping guarantees).  ``eps=None``:
    non-private.  Returns what :func:`fldp.papers.wei2020.simulations.nbafl_run` returns (loss and
    accuracy curves, rounds, final model norm, calibration, realised eps by PLD); with
    ``sensitivity="2C/m"`` it is that function's run with ``rule=where`` (tested)."""
    from fldp.papers.wei2020.simulations import dataset, run_record  # MNIST split iid over N clients, cached per process

    fed = dataset(N, seed, subsample, max_test)
    cal = None if eps is None else nbafl.calibrate_accountant(eps=eps, delta=delta, C=C, N=N, T=T, m=fed.m, where=where,
                                                              sensitivity=sensitivity)
    h, cal = nbafl.run(models.MLP(), fed, T=T, eps=eps or 1.0, private=eps is not None, delta=delta, C=C, L=T, mu=mu,
                       lr=lr, local_epochs=local_epochs, batch_size=batch_size, seed=seed, eval_every=eval_every,
                       calibration=cal)
    return run_record(h, cal, delta=delta)


def calibrated_summary_over_seeds(store, seeds: Sequence[int], **config) -> dict:
    """:func:`calibrated_run` for every seed through the run store (``store=None``: plain calls),
    summarised over seeds by their final values (``train_loss``, ``test_acc``, ``w_norm`` and,
    where every run kept it, ``test_loss``: each ``{"runs", "mean", "min", "max", "std"}``), plus
    the per-seed spends and the first seed's calibration: ``simulations.seed_summary(...,
    last=True)`` with this run function."""
    from fldp.papers.wei2020.simulations import seed_summary

    return seed_summary(store, seeds, last=True, fn=calibrated_run, **config)
