"""Wei et al. 2020, Section VI (Figs. 2-7, 10, 11): the experiments at one reading of the
settings the paper leaves out, shared by ``notebooks/wei2020/05_simulations`` (our reading)
and ``07_effect_regime`` (the reading ``06_settings_map`` finds the paper's ordering in).

A :class:`Reading` fixes C, L, the local learning rate and the local solver; a
:class:`Runner` runs NbAFL (:func:`fldp.papers.wei2020.algorithm.run`) over seeds on MNIST
with the paper's MLP; :func:`curves` draws a group of runs with the seed band, and a panel of
the loss minus the non-private loss of the same seed when the group has a baseline.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Dict, Optional, Sequence, Union

import numpy as np

from ... import accounting, data, models, plots, results, sweep, validate
from ...store import RunStore
from . import algorithm as nbafl


@lru_cache(maxsize=8)
def dataset(N: int, seed: int, subsample: Optional[int] = None, max_test: Optional[int] = None) -> data.FederatedData:
    """MNIST split iid over N clients (cached per process: each worker loads it once)."""
    return data.federated_dataset("mnist", N, "iid", seed=seed, subsample=subsample, max_test=max_test)


def nbafl_run(*, N: int, T: int, eps: Optional[float], delta: float, C: float, L: int, K: Optional[int] = None,
              mu: float = 0.01, lr: float = 0.05, local_epochs: int = 1, batch_size: int = 50, seed: int = 0,
              subsample: Optional[int] = None, max_test: Optional[int] = None, eval_every: int = 1,
              rule: str = "paper") -> dict:
    """One NbAFL run on MNIST with the paper's MLP, as the run store keeps it (every setting is an
    argument, so the store's key covers it).  ``eps=None``: non-private.  ``rule``: ``"paper"``
    (Sec. III / Theorem 1 / Lemma 4 at the per-exposure eps), or the accountant's whole-run
    calibration to (eps, delta) with the noise on the ``"uplink"`` or on a trusted ``"server"``
    (:func:`fldp.papers.wei2020.algorithm.calibrate_accountant`).  Returns the loss and accuracy
    curves, the rounds they were taken at, the final model norm, the calibration and, for a
    private run, the eps each client really spent (PLD, at ``delta``)."""
    validate.choice("rule", rule, ("paper", "uplink", "server"))
    fed = dataset(N, seed, subsample, max_test)
    cal = None
    if eps is not None and rule != "paper":
        cal = nbafl.calibrate_accountant(eps=eps, delta=delta, C=C, N=N, T=T, m=fed.m, where=rule)
    h, cal = nbafl.run(models.MLP(), fed, T=T, eps=eps or 1.0, private=eps is not None, delta=delta, C=C, L=L, K=K,
                       mu=mu, lr=lr, local_epochs=local_epochs, batch_size=batch_size, seed=seed,
                       eval_every=eval_every, calibration=cal)
    spent = None if cal is None else accounting.spent(h, delta=delta, clients=None if cal.sigma_U > 0 else []).eps
    return {"train_loss": h.train_loss, "test_acc": h.test_acc, "rounds": h.rounds, "w_norm": float(h.params.norm()),
            "calibration": None if cal is None else cal.as_dict(), "eps_spent": spent}


def over_seeds(store: Optional[RunStore], seeds: Sequence[int], *, last: bool = False, **config) -> dict:
    """:func:`nbafl_run` for every seed through the run store (a plain call when ``store`` is
    None), summarised as :func:`fldp.results.over_seeds` does for the loss and accuracy curves
    (``last=True``: their final values only); plus the rounds, the per-seed spends and the first
    seed's calibration (a dict)."""
    (outs,) = sweep.run_settings(nbafl_run, {0: config}, seeds, store=store).values()
    pick = (lambda v: v[-1]) if last else (lambda v: v)
    summary = results.over_seeds(lambda i: {"train_loss": pick(outs[i]["train_loss"]), "test_acc": pick(outs[i]["test_acc"]),
                                            "w_norm": outs[i]["w_norm"]}, range(len(outs)))
    return {**summary, "seeds": np.asarray(list(seeds)), "rounds": outs[0]["rounds"],
            "spent": [o["eps_spent"] for o in outs], "calibration": outs[0]["calibration"]}


@dataclass(frozen=True)
class Reading:
    """One reading of what Sec. VI does not state.  ``L`` is an int or ``"T"``: every
    upload is an exposure (L = T, whatever the run's T)."""

    C: float = 20.0
    L: Union[int, str] = 1
    lr: float = 0.05
    mu: float = 0.01
    local_epochs: int = 1
    batch_size: int = 50
    note: str = ""  # shown in figure titles, e.g. that the private runs do not train

    def L_for(self, T: int) -> int:
        if self.L == "T":
            return T
        return validate.integer("L", self.L, 1, T)

    @property
    def label(self) -> str:
        return f"C = {self.C:g}, L = {self.L}, lr = {self.lr:g}" + (f" ({self.note})" if self.note else "")


class Runner:
    """NbAFL runs over ``seeds`` for one reading, through the run store ``store`` (None: run
    each time); MNIST split iid over N clients."""

    def __init__(self, reading: Reading, *, N: int, T: int, delta: float, seeds: Sequence[int],
                 subsample: Optional[int] = None, max_test: Optional[int] = None,
                 store: Optional[RunStore] = None):
        self.reading, self.N, self.T, self.delta = reading, N, T, delta
        self.seeds, self.subsample, self.max_test, self.store = list(seeds), subsample, max_test, store

    def fed(self, n: int, seed: int, sub: Optional[int]) -> data.FederatedData:
        return dataset(n, seed, sub, self.max_test)

    def runs(self, eps: Optional[float], *, n: Optional[int] = None, T: Optional[int] = None,
             K: Optional[int] = None, final_only: bool = False, sub: Union[int, None, str] = "default",
             lr: Optional[float] = None):
        """``(summary, calibration)``: :func:`over_seeds` of the training loss, test accuracy
        and final model norm (plus ``"rounds"``); ``eps=None`` is the non-private baseline
        (calibration None)."""
        n, T, r = n or self.N, T or self.T, self.reading
        sub = self.subsample if sub == "default" else sub
        out = over_seeds(self.store, self.seeds, N=n, T=T, eps=eps, delta=self.delta, C=r.C, L=r.L_for(T), K=K,
                         mu=r.mu, lr=lr or r.lr, local_epochs=r.local_epochs, batch_size=r.batch_size,
                         subsample=sub, max_test=self.max_test, eval_every=T if final_only else 1)
        return out, None if out["calibration"] is None else nbafl.Calibration(**out["calibration"])

    def final_losses(self, eps, values: Sequence[int], key: str, **kw) -> np.ndarray:
        """Final training loss (seeds x len(values)) of one run per value of ``key``
        ("T" or "K"), evaluated only at the end."""
        return np.array([self.runs(eps, final_only=True, **{key: v}, **kw)[0]["train_loss"]["runs"][:, -1]
                         for v in values]).T


def final(summary) -> np.ndarray:
    """Per-seed final training loss of a :meth:`Runner.runs` summary."""
    return np.asarray(summary["train_loss"]["runs"])[:, -1]


NO_BASELINE = object()


def curves(groups: Dict, title: str, label: Callable, baseline=NO_BASELINE):
    """Loss and accuracy per round for ``groups`` ({key: (summary, calibration)}), mean with
    the min-max seed band; with ``baseline`` (a key of ``groups``, e.g. None for the
    non-private runs) a third panel draws each
    setting's loss minus the baseline's loss of the same seed (paired), on a symlog axis,
    so that curves which coincide on the first panel can be told apart."""
    import matplotlib.pyplot as plt

    ncol = 2 if baseline is NO_BASELINE else 3
    fig, axes = plt.subplots(1, ncol, figsize=(5.2 * ncol, 3.8), layout="constrained")
    base = None if baseline is NO_BASELINE else np.asarray(groups[baseline][0]["train_loss"]["runs"])
    for key, (r, _) in groups.items():
        plots.mean_band(axes[0], r["rounds"], r["train_loss"], label=label(key))
        plots.mean_band(axes[1], r["rounds"], r["test_acc"], label=label(key))
        if base is not None:
            plots.mean_band(axes[2], r["rounds"], np.asarray(r["train_loss"]["runs"]) - base, label=label(key))
    axes[0].set(xlabel="aggregation round t", ylabel="training loss F(w)", yscale="log")
    axes[1].set(xlabel="aggregation round t", ylabel="test accuracy")
    if base is not None:
        axes[2].set(xlabel="aggregation round t", ylabel=f"loss minus {label(baseline)} (same seed)")
        axes[2].set_yscale("symlog", linthresh=1e-3)
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    return fig


def order_claim(rec, claim_id: str, statement: str, groups: Sequence, labels: Sequence[str], **extra):
    """Record that the per-seed values in ``groups`` fall in the given (decreasing) order
    beyond the seed spread (:func:`fldp.results.ordering`); the means and the smallest
    separation in seed-spread units are the measurement.  Returns the ordering."""
    o = results.ordering(groups)
    rec.claim(claim_id, statement + " (for every seed)", passed=o["beyond_spread"],
              measured={"mean": {lab: round(float(np.mean(g)), 5) for lab, g in zip(labels, groups)},
                        "in order on the means": o["in_order"], "min z": round(o["min_z"], 2)}, **extra)
    return o


def eps_label(eps) -> str:
    return "non-private" if eps is None else f"eps = {eps}"


def _record_curves(rec, name: str, groups: Dict, label: Callable) -> None:
    rec.add(name, {label(k): {"rounds": r["rounds"], "train_loss": r["train_loss"]["runs"],
                              "test_acc": r["test_acc"]["runs"]} for k, (r, _) in groups.items()})


def _calibrations(groups: Dict, label: Callable) -> Dict[str, dict]:
    return {label(k): cal.as_dict() for k, (_, cal) in groups.items() if cal is not None}


def fig_eps(runner: Runner, rec, *, eps_list: Sequence[float], K: Optional[int], name: str, figure: str,
            claim_id: str):
    """Figs. 2-3 (``K=None``) or 4-5 (K-random): loss and accuracy per round for each eps
    and non-private; the claim that the final loss falls as eps grows (Remark 2)."""
    groups = {eps: runner.runs(eps, K=K) for eps in [None, *eps_list]}
    sched = "all clients" if K is None else f"K-random, K = {K}"
    fig = curves(groups, f"{figure}: NbAFL, N = {runner.N}, T = {runner.T}, {sched}, delta = {runner.delta}\n"
                         f"reading: {runner.reading.label}", eps_label, baseline=None)
    _record_curves(rec, name, groups, eps_label)
    rec.add(f"{name}/calibration", _calibrations(groups, eps_label))
    rec.savefig(fig, name)
    keys = [*eps_list, None]
    order_claim(rec, claim_id,
                f"final loss falls as eps grows ({' > '.join(eps_label(k) for k in keys)}, {sched})",
                [final(groups[k][0]) for k in keys], [eps_label(k) for k in keys])
    return groups


def fig_clients(runner: Runner, rec, *, eps: float, N_list: Sequence[int], m: int, name: str):
    """Figs. 6-7: loss and test accuracy per round for several N, each client holding ``m``
    samples (so larger N means more data, as Remark 3 reads); the claim that the final loss
    falls as N grows."""
    groups = {n: runner.runs(eps, n=n, sub=n * m) for n in N_list}
    label = lambda n: f"N = {n}"  # noqa: E731
    fig = curves(groups, f"Figs. 6-7: NbAFL, eps = {eps}, T = {runner.T}, {m} samples per client\n"
                         f"reading: {runner.reading.label}", label)
    _record_curves(rec, name, groups, label)
    rec.savefig(fig, name)
    order_claim(rec, "Remark 3 / Fig. 6", f"final loss falls as N grows (eps = {eps})",
                [final(groups[n][0]) for n in N_list], [label(n) for n in N_list])
    return groups


def fig_T(runner: Runner, rec, *, eps_T: Sequence[float], T_list: Sequence[int], K: int,
          K_eps: Sequence[float], name: str):
    """Fig. 10: final loss against T (each T its own run, as sigma_D depends on T), NbAFL with
    all clients for every eps in ``eps_T`` and K-random for those in ``K_eps``; claims: an
    interior minimum in T (Remark 4) and K-random below all-clients at the largest T."""
    import matplotlib.pyplot as plt

    final_T = {(eps, k): runner.final_losses(eps, T_list, "T", K=k)
               for eps in eps_T for k in [None, K] if k is None or eps in K_eps}
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    for (eps, k), arr in final_T.items():
        if eps in K_eps:
            plots.mean_band(ax, T_list, arr, label=f"eps = {eps}, " + ("all N clients" if k is None else f"K-random, K = {k}"),
                            marker="o", ls="-" if k is None else "--")
        rec.add(f"{name}/eps={eps}/K={k}", {"T": list(T_list), "final_loss": arr})
    ax.set(xlabel="number of aggregations T", ylabel="final training loss", yscale="log",
           title=f"Fig. 10: final loss vs T, N = {runner.N}\nreading: {runner.reading.label}")
    ax.grid(alpha=0.3); ax.legend(fontsize=8); rec.savefig(fig, name)
    for (eps, k), arr in final_T.items():
        mean = arr.mean(axis=0)
        i = int(mean.argmin())
        rec.claim(f"Remark 4 / Fig. 10, eps = {eps}, K = {k or runner.N}",
                  "final loss vs T has an interior minimum (an optimal T exists)", passed=0 < i < len(T_list) - 1,
                  measured={"T": list(T_list), "mean_final_loss": mean.round(5), "argmin_T": T_list[i]})
    for eps in K_eps:
        order_claim(rec, f"Fig. 10, eps = {eps}", f"K-random beats NbAFL with all clients at T = {T_list[-1]}",
                    [final_T[eps, None][:, -1], final_T[eps, K][:, -1]], ["all clients", f"K = {K}"])
    return final_T


def fig_K(runner: Runner, rec, *, eps_K: Sequence[float], K_list: Sequence[int], name: str):
    """Fig. 11: final loss against the number K of chosen clients, non-private and each eps;
    claim (Remark 5): an optimal K < N exists and beats K = N."""
    import matplotlib.pyplot as plt

    sweep = {eps: runner.final_losses(eps, K_list, "K") for eps in [None, *eps_K]}
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    for eps, arr in sweep.items():
        plots.mean_band(ax, K_list, arr, label=eps_label(eps), marker="o")
        rec.add(f"{name}/{eps_label(eps)}", {"K": list(K_list), "final_loss": arr})
    ax.set(xlabel="number of chosen clients K", ylabel="final training loss", yscale="log",
           title=f"Fig. 11: final loss vs K, N = {runner.N}, T = {runner.T}\nreading: {runner.reading.label}")
    ax.grid(alpha=0.3); ax.legend(fontsize=8); rec.savefig(fig, name)
    for eps in eps_K:
        mean = sweep[eps].mean(axis=0)
        i = int(mean.argmin())
        rec.claim(f"Remark 5 / Fig. 11, eps = {eps}", "an optimal K < N exists and beats K = N",
                  passed=K_list[i] < runner.N and mean[i] < mean[-1],
                  measured={"K": list(K_list), "mean_final_loss": mean.round(5), "argmin_K": K_list[i]})
    return sweep


def spend_table(reading: Reading, *, delta: float, N: int, m: int, configs) -> list:
    """What each run really spends: for each (figure, eps, T, K) in ``configs``, the paper's
    calibration (:func:`fldp.papers.wei2020.algorithm.calibrate`) and each client's
    whole-run eps from the accountant: every round (``eps_run``) and, under K-random
    scheduling, with each client in a round with probability K/N, kept secret (RDP)."""
    rows = []
    for fig, eps, T, K in configs:
        cal = nbafl.calibrate(eps=eps, delta=delta, C=reading.C, L=reading.L_for(T), N=N, T=T, m=m, K=K)
        rows.append({"figure": fig, "paper eps": eps, "L": cal.L, "T": T, "K": K or N, "sigma_U": cal.sigma_U,
                     "sigma_D": cal.sigma_D, "multiplier z": cal.sigma_U / cal.sensitivity_U,
                     f"true eps at delta={delta}": cal.eps_run,
                     "true eps, K-random amplified": cal.eps_run_sampled})
    return rows
