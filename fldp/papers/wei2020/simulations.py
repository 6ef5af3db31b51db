"""Wei et al. 2020, Section VI (Figs. 2-7, 10, 11): the experiments at one reading of the
settings the paper leaves out, shared by ``notebooks/wei2020/05_simulations`` (our reading)
and ``07_effect_regime`` (the reading ``06_settings_map`` finds the paper's ordering in).

A :class:`Reading` fixes C, L, the local learning rate and the local solver; a
:class:`Runner` runs NbAFL (:func:`fldp.papers.wei2020.algorithm.run`) over seeds on MNIST
with the paper's MLP; :func:`curves` draws a group of runs with the seed band, and a panel of
the loss minus the non-private loss of the same seed when the group has a baseline.

The figure functions return, beside their runs, a :class:`Check` per paper claim: its entry of
the claims catalogue (:mod:`fldp.papers.wei2020.claims`) and its verdict from :mod:`fldp.verdicts`
(orderings on the per-seed final losses, paired by seed; argmins by
:func:`fldp.verdicts.best_setting`; K-random claims gated on the paper's mechanism being at
work).  A notebook records them with :func:`record`, giving the setting note (its reading is the
notebook's), or folds several that share one cause into one claim with :func:`collapse`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

import numpy as np

from fldp import accounting, data, models, plots, validate

from fldp.repro import sweep
from fldp import verdicts as V
from fldp.repro.store import RunStore
from fldp.verdicts import Claim
from fldp.papers.wei2020 import algorithm as nbafl, claims

__all__ = [
    "dataset", "nbafl_run", "run_record", "RULES", "CLIP", "clip_only", "seed_summary",
    "Reading", "Runner", "final", "NO_BASELINE", "curves", "UNIFORM_LOSS", "Check", "record",
    "order_check", "order_claim", "gate_noise_power", "broadcast_noise",
    "krandom_precondition", "at_reading", "eps_accuracy_check", "clients_noise_gap", "LOSS_EFFECT", "collapse", "clipping_note", "server_noise_note", "map_cell", "reading_note",
    "separation", "side_by_side", "eps_label", "fig_eps", "clipping_share",
    "fig_clients", "fig_T", "fig_K", "spend_table", "delta_warning", "gated", "krandom_map", "paper_runs_at_true_eps"
]


def dataset(N: int, seed: int, subsample: Optional[int] = None, max_test: Optional[int] = None) -> data.FederatedData:
    """MNIST split iid over N clients (cached per process, :func:`fldp.data.cached_federated`:
    each worker loads it once; read it, never change it)."""
    return data.cached_federated("mnist", N, "iid", seed=seed, subsample=subsample, max_test=max_test)


def nbafl_run(*, N: int, T: int, eps: Optional[float], delta: float, C: float, L: int, K: Optional[int] = None,
              mu: float = 0.01, lr: float = 0.05, local_epochs: int = 1, batch_size: int = 50, seed: int = 0,
              subsample: Optional[int] = None, max_test: Optional[int] = None, eval_every: int = 1,
              rule: str = "paper") -> dict:
    """One NbAFL run on MNIST with the paper's MLP, as the run store keeps it (every setting is an
    argument, so the store's key covers it).  ``eps=None``: non-private.  ``rule``: ``"paper"``
    (Sec. III / Theorem 1 / Lemma 4 at the per-exposure eps), the accountant's whole-run
    calibration to (eps, delta) with the noise on the ``"uplink"`` or on a trusted ``"server"``
    (:func:`fldp.papers.wei2020.algorithm.calibrate_accountant`), or ``"clip"`` (with
    ``eps=None``): the private pipeline's clipping at C with no noise, the baseline that separates
    clipping's share of a private run's loss from the noise's.  Returns the loss and accuracy
    curves (training loss, test loss, test accuracy), the rounds they were taken at, the final
    model norm, the calibration and, for a noisy run, the eps each client really spent (PLD, at
    ``delta``)."""
    validate.choice("rule", rule, RULES)
    if rule == "clip" and eps is not None:
        raise ValueError(f"eps={eps!r} is out of range: rule='clip' (clipping, no noise) takes eps=None")
    fed = dataset(N, seed, subsample, max_test)
    cal = None
    if rule == "clip":
        cal = clip_only(C=C, N=N, T=T, m=fed.m, K=K)
    elif eps is not None and rule != "paper":
        cal = nbafl.calibrate_accountant(eps=eps, delta=delta, C=C, N=N, T=T, m=fed.m, where=rule)
    private = eps is not None or rule == "clip"
    h, cal = nbafl.run(models.MLP(), fed, T=T, eps=eps or 1.0, private=private, delta=delta, C=C, L=L, K=K,
                       mu=mu, lr=lr, local_epochs=local_epochs, batch_size=batch_size, seed=seed,
                       eval_every=eval_every, calibration=cal)
    return run_record(h, cal, delta=delta)


def run_record(h, cal: Optional[nbafl.Calibration], *, delta: float) -> dict:
    """What the run store keeps of one NbAFL run (history ``h``, calibration ``cal``, None when
    non-private): the loss and accuracy curves, the rounds they were taken at, the final model
    norm, the calibration and, for a noisy run, the eps each client really spent (PLD, at ``delta``)."""
    noisy = cal is not None and (cal.sigma_U > 0 or cal.sigma_D > 0)
    spent = None if not noisy else accounting.spent(h, delta=delta, clients=None if cal.sigma_U > 0 else []).eps
    return {"train_loss": h.train_loss, "test_loss": h.test_loss, "test_acc": h.test_acc, "rounds": h.rounds,
            "w_norm": float(h.params.norm()), "calibration": None if cal is None else cal.as_dict(), "eps_spent": spent}


RULES = ("paper", "uplink", "server", "clip")
#: The key of the clipped, noiseless baseline in a group of runs (``Runner.runs(CLIP)``).
CLIP = "clip"


def clip_only(*, C: float, N: int, T: int, m: int, K: Optional[int] = None) -> nbafl.Calibration:
    """The calibration of NbAFL's pipeline without its noise: clipping at ``C`` (Algorithm 1,
    line 8), sigma_U = sigma_D = 0; eps is inf (nothing is protected)."""
    return nbafl.Calibration(math.inf, 0.0, validate.positive("C", C), T, N, K, T, m, 0.0, 0.0, 0.0,
                             "clipping only, no noise")


def seed_summary(store: Optional[RunStore], seeds: Sequence[int], *, last: bool = False,
                       fn: Optional[Callable] = None, **config) -> dict:
    """:func:`nbafl_run` (or ``fn``, a run function returning :func:`run_record`'s dict, e.g.
    :func:`fldp.papers.wei2020.experiments.calibrated_run`) at ``config`` for every seed through the
    run store (a plain call when ``store`` is None; :func:`fldp.repro.sweep.seed_summaries`), summarised
    as :func:`fldp.verdicts.over_seeds` does for the loss and accuracy curves (``last=True``: their
    final values only) and the final model norm; plus the rounds, the per-seed spends and the first
    seed's calibration (a dict)."""
    (summary,) = seed_summaries(store, seeds, {0: config}, last=last, fn=fn).values()
    return summary


def seed_summaries(store: Optional[RunStore], seeds: Sequence[int], settings: Mapping[Any, Mapping[str, Any]], *,
                   last: bool = False, fn: Optional[Callable] = None) -> dict:
    """:func:`seed_summary` for every setting of ``settings`` (``{key: config}``), as ``{key:
    summary}``: every run of every setting in one batch, so that parallel workers stay busy (a grid
    asked setting by setting leaves a worker idle whenever a setting's seeds do not divide among
    the workers: 3 seeds on 2 workers use them three quarters of the time)."""
    pick = (lambda v: v[-1]) if last else (lambda v: v)
    row = lambda o: {"train_loss": pick(o["train_loss"]), "test_acc": pick(o["test_acc"]), "w_norm": o["w_norm"],
                     **({"test_loss": pick(o["test_loss"])} if "test_loss" in o else {})}  # older stored runs lack it
    extra = lambda k, outs, out: {"rounds": outs[0]["rounds"], "spent": [o["eps_spent"] for o in outs],
                                  "calibration": outs[0]["calibration"]}
    return sweep.seed_summaries(fn or nbafl_run, settings, seeds, store=store, row=row, extra=extra)


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

    def config(self, eps: Optional[float], *, n: Optional[int] = None, T: Optional[int] = None,
               K: Optional[int] = None, final_only: bool = False, sub: Union[int, None, str] = "default",
               lr: Optional[float] = None) -> dict:
        """The configuration of :func:`nbafl_run` that :meth:`runs` asks for (every seed's, seed aside)."""
        n, T, r = n or self.N, T or self.T, self.reading
        sub = self.subsample if sub == "default" else sub
        extra = {"rule": "clip"} if eps == CLIP else {}
        return dict(N=n, T=T, eps=None if eps == CLIP else eps, delta=self.delta, C=r.C, L=r.L_for(T), K=K, mu=r.mu,
                    lr=lr or r.lr, local_epochs=r.local_epochs, batch_size=r.batch_size, subsample=sub,
                    max_test=self.max_test, eval_every=T if final_only else 1, **extra)

    def runs(self, eps: Optional[float], **kw):
        """``(summary, calibration)``: :func:`seed_summary` of the training loss, test loss and
        accuracy and final model norm (plus ``"rounds"``); ``eps=None`` is the non-private
        baseline (calibration None), ``eps=CLIP`` the clipped, noiseless one.  ``kw``: ``n``,
        ``T``, ``K``, ``final_only``, ``sub``, ``lr`` (:meth:`config`)."""
        (out,) = self.runs_many({0: dict(kw, eps=eps)}).values()
        return out

    def runs_many(self, requests: Mapping[Any, Mapping[str, Any]]) -> dict:
        """``{key: runs(**request)}`` for every request of ``{key: request}``, every run of every
        request in one batch (:func:`seed_summaries`: parallel workers stay busy)."""
        outs = seed_summaries(self.store, self.seeds, {k: self.config(**req) for k, req in requests.items()})
        return {k: (o, None if o["calibration"] is None else nbafl.Calibration(**o["calibration"])) for k, o in outs.items()}

    def calibration(self, eps: float, *, T: Optional[int] = None, K: Optional[int] = None) -> nbafl.Calibration:
        """The paper's calibration (:func:`fldp.papers.wei2020.algorithm.calibrate`) of the runs
        at ``eps``, ``T`` and ``K`` (N clients), without running them."""
        T = T or self.T
        m = self.fed(self.N, self.seeds[0], self.subsample).m
        return nbafl.calibrate(eps=eps, delta=self.delta, C=self.reading.C, L=self.reading.L_for(T), N=self.N, T=T,
                               m=m, K=K)

    def final_losses(self, eps, values: Sequence[int], key: str, **kw) -> np.ndarray:
        """Final training loss (seeds x len(values)) of one run per value of ``key``
        ("T" or "K"), evaluated only at the end."""
        got = self.runs_many({v: dict(kw, eps=eps, final_only=True, **{key: v}) for v in values})
        return np.array([final(got[v][0]) for v in values]).T


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
    axes[0].set(xlabel="aggregation round t", ylabel="training loss F(w) (log scale)", yscale="log")
    plots.plain_log_ticks(axes[0].yaxis)
    axes[1].set(xlabel="aggregation round t", ylabel="test accuracy")
    if base is not None:
        axes[2].set(xlabel="aggregation round t", ylabel=f"loss minus {label(baseline)} (same seed)")
        axes[2].set_yscale("symlog", linthresh=1e-3)
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    return fig


# --------------------------------------------------------------------------- checks and claims

#: Cross-entropy of the uniform prediction over MNIST's 10 classes: a final training loss above
#: it means the run did not train at all (the noise destroyed the model), so a comparison
#: involving it is ``inconclusive: diverged``.
UNIFORM_LOSS = math.log(10)


@dataclass(frozen=True)
class Check:
    """One paper claim of Sec. VI, judged on runs before it is recorded: ``claim`` (its fixed
    text, a :class:`fldp.verdicts.Claim` of :mod:`fldp.papers.wei2020.claims`), ``verdict`` (a
    :class:`fldp.verdicts.Verdict`) and the numbers behind it (``measured``, ``note``)."""

    claim: Claim
    verdict: V.Verdict
    measured: Dict[str, Any] = field(default_factory=dict)
    note: str = ""


def record(rec, check: Check, *, setting_note: str = "", note: str = "") -> str:
    """Record ``check`` as a claim of ``rec`` (:meth:`fldp.repro.results.Recorder.claim`) with
    its catalogue entry's fixed text; ``setting_note`` (the reading the runs used, known at
    execution, e.g. :func:`reading_note`) replaces the entry's; ``note`` is added to the
    check's own.  Returns the verdict's label."""
    claim = replace(check.claim, setting_note=setting_note) if setting_note else check.claim
    return rec.claim(claim, verdict=check.verdict, measured=check.measured,
                     note=" ".join(n for n in (check.note, note) if n))


#: The minimum material effect of the chapters' loss orderings (the catalogue's
#: ``claims.SIM_LOSS``): a final training loss 1 % lower, judged on paired log ratios
#: (:func:`fldp.verdicts.paired_greater` with ``relative=True``).
LOSS_EFFECT = dict(min_effect=claims.SIM_LOSS["min_effect"], relative=True)


def order_check(claim: Claim, groups: Sequence, labels: Sequence[str], *, gate: Optional[V.Verdict] = None,
                note: str = "") -> Check:
    """``claim`` (its statement: the per-seed values in ``groups``, one array per setting, every
    array in the same seed order, fall in the given decreasing order), judged on paired seeds
    (:func:`fldp.verdicts.ordering`, a loss 1 % apart: :data:`LOSS_EFFECT`) after ``gate``; the
    measurement is the mean per setting."""
    verdict = V.first(gate, lambda: V.ordering(groups, labels, **LOSS_EFFECT))
    return Check(claim, verdict, {"mean": {lab: round(float(np.mean(g)), 5) for lab, g in zip(labels, groups)}}, note)


def order_claim(rec, claim: Claim, groups: Sequence, labels: Sequence[str], *, setting_note: str = "",
                gate: Optional[V.Verdict] = None, note: str = "") -> Check:
    """:func:`order_check` recorded in ``rec`` (:func:`record`, ``setting_note`` replacing the
    catalogue entry's); returns the check."""
    check = order_check(claim, groups, labels, gate=gate)
    record(rec, check, setting_note=setting_note, note=note)
    return check


def gate_noise_power(pairs: Mapping[str, tuple]) -> Optional[V.Verdict]:
    """``inconclusive: no-power`` unless, in some of ``pairs`` ({label: (noisiest private
    run's per-seed final loss, the non-private run's, same seeds)}), the private run ends above
    the non-private one by more than the material effect (:data:`LOSS_EFFECT`: the 95 % interval
    of the mean per-seed log ratio lies above ln 1.01).  Where the strongest privacy setting does
    not move the loss, no eps, N, T or K can order it through the noise.  A loss that is not
    finite moves it (a blow-up is the noise at work).  A private run that ends *below* its
    noiseless baseline beyond the effect is no lack of power but evidence against "more privacy
    costs accuracy": the gate then steps aside (``None``) and the ordering's own rule decides."""
    stats = {}
    for label, (private, base) in pairs.items():
        if not np.all(np.isfinite(np.asarray(private, dtype=float))):
            return None
        v = V.paired_greater(private, base, labels=("private", "noiseless"), min_seeds=1, **LOSS_EFFECT)
        stats[label] = v.stats
        if v.verdict in ("holds", "fails"):
            return None
    return V.inconclusive("no-power", "the noisiest private run does not end above its noiseless baseline beyond the "
                          "paired spread (" + "; ".join(f"{k}: mean difference {v['mean_diff']:.3g}, 95 % CI "
                                                        f"[{v['ci'][0]:.3g}, {v['ci'][1]:.3g}]" for k, v in stats.items())
                          + "): the privacy noise does not move the loss, so no setting can be ordered by it", stats=stats)


def broadcast_noise(cal) -> float:
    """Std of the artificial noise on the broadcast model per coordinate:
    sqrt(sigma_D^2 + sigma_U^2 / n) with n the clients aggregated (K, or N for all clients),
    as in eq. (16)."""
    n = cal.K or cal.N
    return float(math.sqrt(cal.sigma_D ** 2 + cal.sigma_U ** 2 / n))


def krandom_precondition(cal_all, cal_k) -> Optional[str]:
    """None when K-random scheduling (calibration ``cal_k``) puts less artificial noise on the
    broadcast than all clients (``cal_all``), the paper's mechanism (a smaller sigma_D, Lemma 4
    against Theorem 1); otherwise the sentence naming the precondition this reading lacks (e.g.
    sigma_D = 0 for both, so K-random only averages fewer uploads).  The runs still train and
    differ: the claim gets its verdict at this reading, with the precondition named
    (:func:`at_reading`), never ``no-power``."""
    nk, na = broadcast_noise(cal_k), broadcast_noise(cal_all)
    if nk < na:
        return None
    return (f"at this reading the paper's precondition is absent: at K = {cal_k.K}, T = {cal_k.T}, L = {cal_k.L}, "
            f"sigma_D = {cal_k.sigma_D:.3g} (K-random) vs {cal_all.sigma_D:.3g} (all clients), so the broadcast noise is "
            f"{nk:.3g} vs {na:.3g}: K-random does not lower the noise")


def at_reading(verdict: V.Verdict, precondition: Optional[str]) -> V.Verdict:
    """``verdict`` with the precondition its reading lacks (:func:`krandom_precondition`) named."""
    if not precondition:
        return verdict
    return V.Verdict(verdict.verdict, verdict.reason, f"{verdict.why} ({precondition})",
                     {**verdict.stats, "precondition absent": precondition})


def collapse(claim: Claim, checks: Sequence[Check], *, gate: Optional[V.Verdict] = None,
             measured: Optional[Mapping[str, Any]] = None, note: str = "") -> Check:
    """Several checks that share one cause as one claim (``claim``, its catalogue entry): ``gate``
    first (e.g. :func:`gate_noise_power`), then every check must hold (:func:`~fldp.verdicts.combine`);
    each check's statement, verdict and numbers are kept under its id in ``measured`` (beside
    ``measured``'s own entries, e.g. the noise levels)."""
    ids = [c.claim.id for c in checks]
    if len(set(ids)) != len(checks):
        raise ValueError(f"checks must have distinct ids, got {ids}")
    parts = {c.claim.id: c.verdict for c in checks}
    out = {c.claim.id: {"statement": c.claim.statement, "verdict": c.verdict.label, "why": c.verdict.why, **c.measured}
           for c in checks}
    return Check(claim, V.first(gate, lambda: V.combine(parts)), {**dict(measured or {}), **out}, note)


def clipping_note(C: float, w_norm: float) -> str:
    """What clipping does at bound ``C`` to a model of norm ``w_norm`` (the non-private
    model's), for the setting note of a private-vs-non-private claim (the non-private runs are
    not clipped; :func:`fig_eps`'s clipped, noiseless runs are)."""
    if C < w_norm:
        return (f"C = {C:g} clips a model of norm about {w_norm:.3g} and the non-private baseline is unclipped, so "
                "clipping, not only noise, separates the private runs from it: the ordering is judged down to the "
                "clipped, noiseless run, and the gap to non-private is split into clipping's share and the noise's")
    return f"C = {C:g} lies above the non-private model's norm (about {w_norm:.3g}): clipping rarely binds"


def server_noise_note(all_clients: Dict, krandom: Dict, K: int) -> str:
    """What the server noise sigma_D is in two groups of runs ({eps: (summary, calibration)},
    all clients and K-random), for the setting note of a K-random claim: where it is 0 for
    both, the paper's K-random mechanism (a smaller sigma_D than all clients') is off."""
    top = lambda g: max(cal.sigma_D for _, cal in g.values() if cal is not None)  # noqa: E731
    a, k = top(all_clients), top(krandom)
    if a == 0 and k == 0:
        return (f"sigma_D = 0 for all clients and for K-random (K = {K}) at these eps: the paper's K-random mechanism "
                "(less server noise than all clients) is off, K-random only averages fewer uploads")
    return f"sigma_D up to {a:.3g} (all clients) and {k:.3g} (K-random, K = {K}) at these eps"


def map_cell(groups: Sequence, eps_list: Sequence[float], *, start: float):
    """One cell of ``06_settings_map``: ``groups`` the per-seed final losses at each eps of
    ``eps_list`` and then non-private (same seeds), ``start`` the initial loss.  Returns
    ``(row, verdict)``: the mean loss per setting, ``progress`` (the share of the non-private
    loss drop that the least noisy private setting reaches), the descriptive separation of
    :func:`separation` (``min z``, ``all seeds apart``) and the verdict of Remark 2's ordering
    on paired seeds (:func:`fldp.verdicts.ordering`, a loss 1 % apart: :data:`LOSS_EFFECT`)."""
    labels = [eps_label(e) for e in eps_list] + ["non-private"]
    sep = separation(groups)
    verdict = V.ordering(groups, labels, **LOSS_EFFECT)
    means = [float(np.mean(g)) for g in groups]
    row = {**{f"loss eps={e}": v for e, v in zip(eps_list, means)}, "loss non-private": means[-1],
           "progress": (start - means[-2]) / (start - means[-1]), "min z": sep["min_z"],
           "in order": all(g > 0 for g in sep["gap"]), "all seeds apart": sep["all_apart"], "verdict": verdict.label}
    return row, verdict


def reading_note(runner: "Runner") -> str:
    """The setting note of a runner's claims: its reading of what Sec. VI leaves out, and the seeds."""
    r = runner.reading
    return (f"{r.label}, mu = {r.mu:g}, {r.local_epochs} local epoch(s) of SGD with batch {r.batch_size} "
            f"(Sec. VI states none of C, L, mu or the local solver; its lr is 0.002); {len(runner.seeds)} seed(s)")


def separation(groups: Sequence) -> dict:
    """A descriptive separation of per-seed samples meant to fall in decreasing order (not a
    verdict: it picks ``06_settings_map``'s effect regime): per consecutive pair, the gap of
    the means, ``z`` = gap / sqrt((std_a^2 + std_b^2) / 2) (population std; +-inf when both
    spreads are 0), and ``apart`` (every seed of a above every seed of b).  Returns
    ``{"gap", "z", "apart", "all_apart", "min_z"}``."""
    arrays = [np.asarray(g, dtype=float).ravel() for g in groups]
    if len(arrays) < 2 or any(a.size == 0 for a in arrays):
        raise ValueError(f"groups must hold at least two non-empty samples, got sizes {[a.size for a in arrays]}")
    gap, z, apart = [], [], []
    for a, b in zip(arrays, arrays[1:]):
        g, s = float(a.mean() - b.mean()), float(np.sqrt((a.std() ** 2 + b.std() ** 2) / 2))
        gap.append(g)
        z.append(g / s if s > 0 else (float(np.sign(g)) * math.inf if g else 0.0))
        apart.append(bool(a.min() > b.max()))
    return {"gap": gap, "z": z, "apart": apart, "all_apart": all(apart), "min_z": float(min(z))}


def side_by_side(here: Sequence[dict], there: Sequence[dict]) -> Dict[str, str]:
    """For each claim recorded ``here`` (a list of claim entries), the verdict of the claim with
    the same id ``there`` (another notebook's claims), or, where ``there`` folded it into a
    collapsed claim (:func:`collapse`), that claim's verdict with the part's own in brackets;
    ``--`` where ``there`` has no such claim."""
    label = lambda c: c["verdict"] + (f": {c['reason']}" if c.get("reason") else "")  # noqa: E731
    by_id = {c["id"]: c for c in there}
    out = {}
    for c in here:
        if c["id"] in by_id:
            out[c["id"]] = label(by_id[c["id"]])
            continue
        host = next((h for h in there if isinstance(h.get("measured"), dict)
                     and isinstance(h["measured"].get(c["id"]), dict)), None)
        out[c["id"]] = "--" if host is None else f"{label(host)} [{host['measured'][c['id']]['verdict']}]"
    return out


def eps_label(eps) -> str:
    return "non-private" if eps is None else "clipped, no noise" if eps == CLIP else f"eps = {eps}"


def _record_curves(rec, name: str, groups: Dict, label: Callable) -> None:
    rec.add(name, {label(k): {"rounds": r["rounds"], "train_loss": r["train_loss"]["runs"],
                              "test_acc": r["test_acc"]["runs"]} for k, (r, _) in groups.items()})


def _calibrations(groups: Dict, label: Callable) -> Dict[str, dict]:
    return {label(k): cal.as_dict() for k, (_, cal) in groups.items() if cal is not None}




def fig_eps(runner: Runner, rec, *, eps_list: Sequence[float], K: Optional[int], name: str, figure: str,
            clip_baseline: bool = True):
    """Figs. 2-3 (``K=None``) or 4-5 (K-random): loss and accuracy per round for each eps,
    non-private and (``clip_baseline``) the clipped, noiseless pipeline; returns ``(groups,
    check)``, the check being that the final loss falls as eps grows (Remark 2; the catalogue's
    ``claims.sim_eps_order``), on paired seeds, down to the clipped baseline (the noise's effect
    alone) when there is one.  The check's
    numbers split each eps's gap to the non-private loss into clipping's share (clipped minus
    non-private) and the noise's (eps minus clipped), per seed."""
    base = [None, CLIP] if clip_baseline else [None]
    groups = runner.runs_many({eps: dict(eps=eps, K=K) for eps in [*base, *eps_list]})
    sched = "all clients" if K is None else f"K-random, K = {K}"
    fig = curves(groups, f"{figure}: NbAFL, N = {runner.N}, T = {runner.T}, {sched}, delta = {runner.delta}\n"
                         f"reading: {runner.reading.label}", eps_label, baseline=None)
    _record_curves(rec, name, groups, eps_label)
    rec.add(f"{name}/calibration", _calibrations(groups, eps_label))
    rec.savefig(fig, name)
    keys = [*eps_list, CLIP if clip_baseline else None]
    check = order_check(claims.sim_eps_order(K=K, order=[eps_label(k) for k in keys]),
                        [final(groups[k][0]) for k in keys], [eps_label(k) for k in keys])
    if clip_baseline:
        split = clipping_share(groups, eps_list)
        rec.add(f"{name}/clipping_vs_noise", split)
        check = replace(check, measured={**check.measured, "gap to non-private, clipping vs noise": split})
    return groups, check


def clipping_share(groups: Dict, eps_list: Sequence[float]) -> Dict[str, dict]:
    """Per eps, the mean over seeds of the final-loss gap to the non-private run of the same seed,
    split into clipping's part (clipped, noiseless minus non-private) and the noise's (eps minus
    clipped), and clipping's share of the gap."""
    np_, cl = final(groups[None][0]), final(groups[CLIP][0])
    out = {}
    for eps in eps_list:
        gap, clip = float(np.mean(final(groups[eps][0]) - np_)), float(np.mean(cl - np_))
        out[eps_label(eps)] = {"gap": gap, "clipping": clip, "noise": gap - clip,
                               "clipping share": clip / gap if gap else math.nan}
    return out


def eps_accuracy_check(groups: Dict, *, eps_list: Sequence[float], K: Optional[int], clip_baseline: bool = True) -> Check:
    """Fig. 3 (``K=None``) or Fig. 5 (K-random) on the runs of :func:`fig_eps`: the final test
    accuracy rises as eps grows, down from the noiseless baseline (the clipped one when there is
    one, else the non-private), on paired seeds half a point apart (``claims.SIM_ACC``)."""
    keys = [CLIP if clip_baseline else None, *sorted(eps_list, reverse=True)]
    labels = [eps_label(k) for k in keys]
    accs = [np.asarray(groups[k][0]["test_acc"]["runs"])[:, -1] for k in keys]
    verdict = V.ordering(accs, labels, min_effect=claims.SIM_ACC["min_effect"])
    return Check(claims.sim_eps_acc_order(K=K, order=labels), verdict,
                 {"mean final accuracy": {lab: round(float(np.mean(a)), 5) for lab, a in zip(labels, accs)}})


def fig_clients(runner: Runner, rec, *, eps: float, N_list: Sequence[int], m: int, name: str):
    """Figs. 6-7: loss and test accuracy per round for several N, each client holding ``m``
    samples (so larger N means more data, as Remark 3 reads); returns ``(groups, check)``,
    the check being that the final loss falls as N grows."""
    groups = runner.runs_many({n: dict(eps=eps, n=n, sub=n * m) for n in N_list})
    label = lambda n: f"N = {n}"  # noqa: E731
    fig = curves(groups, f"Figs. 6-7: NbAFL, eps = {eps}, T = {runner.T}, {m} samples per client\n"
                         f"reading: {runner.reading.label}", label, baseline=N_list[0])
    _record_curves(rec, name, groups, label)
    rec.savefig(fig, name)
    on_test = all("test_loss" in groups[n][0] for n in N_list)
    metric = "test_loss" if on_test else "train_loss"
    check = order_check(claims.sim_clients_order(metric=metric.replace('_', ' '), eps=eps),
                        [np.asarray(groups[n][0][metric]["runs"])[:, -1] for n in N_list], [label(n) for n in N_list],
                        note="judged on the test loss (one test set for every N): each N's training loss is "
                             f"averaged over its own {m} N samples, which a larger N dilutes" if on_test else
                             f"judged on the training loss (runs stored before the test loss was kept): each N's "
                             f"training loss is averaged over its own {m} N samples, which a larger N dilutes")
    check.measured["mean final training loss"] = {label(n): round(float(final(groups[n][0]).mean()), 5) for n in N_list}
    return groups, check


def clients_noise_gap(runner: Runner, rec, groups: Dict, *, eps: float, N_list: Sequence[int], m: int,
                      name: str) -> Check:
    """Remark 3 with the data separated from the noise: the non-private runs of every N of
    :func:`fig_clients` (``m`` samples per client, so the data grow with N in both), and each
    private run's final test-loss gap to the non-private run of the same N and seed (the noise's
    share); the check is that this gap falls as N grows (``claims.sim_clients_noise``).  Draws
    both against N and returns the check."""
    import matplotlib.pyplot as plt

    ref = runner.runs_many({n: dict(eps=None, n=n, sub=n * m) for n in N_list})
    metric = "test_loss" if all("test_loss" in groups[n][0] and "test_loss" in ref[n][0] for n in N_list) else "train_loss"
    last = lambda r: np.asarray(r[metric]["runs"])[:, -1]  # noqa: E731
    private, plain = np.array([last(groups[n][0]) for n in N_list]).T, np.array([last(ref[n][0]) for n in N_list]).T
    gap = private - plain
    fig, (ax, dx) = plt.subplots(1, 2, figsize=(11, 4.0), layout="constrained")
    plots.mean_band(ax, N_list, private, label=f"eps = {eps}", marker="o")
    plots.mean_band(ax, N_list, plain, label="non-private", marker="s", ls="--")
    plots.mean_band(dx, N_list, gap, label=f"eps = {eps} minus non-private (same N, seed)", marker="o")
    ax.set(xlabel="number of clients N", ylabel=f"final {metric.replace('_', ' ')}",
           title=f"Remark 3: {m} samples per client, so the data grow with N\nreading: {runner.reading.label}")
    dx.axhline(0, color="0.3", lw=1)
    dx.set(xlabel="number of clients N", ylabel="gap to non-private (the noise's share)",
           title="the noise's share of the loss against N")
    for a in (ax, dx):
        a.grid(alpha=0.3); a.legend(fontsize=8)
    rec.savefig(fig, name)
    rec.add(name, {"N": list(N_list), "metric": metric, "private": private, "nonprivate": plain, "gap": gap})
    labels, claim = [f"N = {n}" for n in N_list], claims.sim_clients_noise(eps=eps)
    verdict = V.ordering(list(gap.T), labels, min_effect=claim.min_effect)
    return Check(claim, verdict,
                 {"mean gap": {lab: round(float(g.mean()), 5) for lab, g in zip(labels, gap.T)},
                  "mean non-private": {lab: round(float(p.mean()), 5) for lab, p in zip(labels, plain.T)}},
                 note=f"judged on the {metric.replace('_', ' ')}; the non-private runs of each N hold the same data as "
                      "the private ones, so the gap is the noise's share alone")


def fig_T(runner: Runner, rec, *, eps_T: Sequence[float], T_list: Sequence[int], K: int,
          K_eps: Sequence[float], name: str):
    """Fig. 10: final loss against T (each T its own run, as sigma_D depends on T), NbAFL with
    all clients for every eps in ``eps_T`` and K-random for those in ``K_eps``.  Returns
    ``(final_T, checks)``: an optimal T inside the grid for every eps and schedule (Remark 4,
    :func:`fldp.verdicts.best_setting` with the interior grid points claimed) and, if
    ``K_eps``, K-random below all clients at the largest T (its verdict naming the precondition
    :func:`krandom_precondition` where this reading lacks it)."""
    import matplotlib.pyplot as plt

    schedules = [(eps, k) for eps in eps_T for k in [None, K] if k is None or eps in K_eps]
    got = runner.runs_many({(eps, k, t): dict(eps=eps, K=k, T=t, final_only=True) for eps, k in schedules for t in T_list})
    final_T = {(eps, k): np.array([final(got[eps, k, t][0]) for t in T_list]).T for eps, k in schedules}
    fig, (ax, dx) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    for (eps, k), arr in final_T.items():
        if eps in K_eps or k is None:
            plots.mean_band(ax, T_list, arr, label=f"eps = {eps}, " + ("all N clients" if k is None else f"K-random, K = {k}"),
                            marker="o", ls="-" if k is None else "--")
        if k is not None:
            plots.mean_band(dx, T_list, arr - final_T[eps, None], label=f"eps = {eps}: K = {k} minus all clients",
                            marker="o", ls="--")
        rec.add(f"{name}/eps={eps}/K={k}", {"T": list(T_list), "final_loss": arr})
    ax.set(xlabel="number of aggregations T", ylabel="final training loss (log scale)", yscale="log",
           title=f"Fig. 10: final loss vs T, N = {runner.N}\nreading: {runner.reading.label}")
    plots.plain_log_ticks(ax.yaxis)
    dx.axhline(0, color="0.3", lw=1)
    dx.set(xlabel="number of aggregations T", ylabel="final loss difference (same seed)",
           title="K-random minus all clients (below 0: K-random better)")
    for a in (ax, dx):
        a.grid(alpha=0.3); a.legend(fontsize=8)
    rec.savefig(fig, name)
    part = lambda eps, k: f"eps = {eps}, K = {k or runner.N}"  # noqa: E731
    interior = list(T_list[1:-1])
    # Remark 4's optimum is a trade-off against artificial noise that grows with T: a schedule whose
    # broadcast noise is the same at every T of the grid (K-random at L = 1 below its switch:
    # sigma_D = 0) cannot show it, so it is reported, not judged (decided from the calibration, before the runs)
    noise = {(e, k): [broadcast_noise(runner.calibration(e, T=t, K=k)) for t in T_list] for (e, k) in final_T}
    grows = {key: v[-1] > v[0] * (1 + 1e-9) for key, v in noise.items()}
    best = {(e, k): V.best_setting(arr, list(T_list), claimed=interior, **LOSS_EFFECT) for (e, k), arr in final_T.items()}
    judged = {part(e, k): v for (e, k), v in best.items() if grows[e, k]}
    flat = {part(e, k): f"not judged: the broadcast noise is {noise[e, k][0]:.3g} at every T of the grid (its server "
                        f"noise sigma_D is 0 there), so Remark 4's trade-off cannot show; its near-best T: {v.label}"
            for (e, k), v in best.items() if not grows[e, k]}
    verdict = V.combine(judged) if judged else V.inconclusive(
        "no-power", "the broadcast noise is the same at every T of the grid for every schedule: Remark 4's trade-off cannot show")
    checks = [Check(claims.sim_optimal_T(T_first=T_list[0], T_last=T_list[-1]), verdict,
                    {part(e, k): {"mean_final_loss": arr.mean(axis=0).round(5), "argmin_T": T_list[int(arr.mean(axis=0).argmin())],
                                  "broadcast noise over T": [float(f"{v:.4g}") for v in noise[e, k]]}
                     for (e, k), arr in final_T.items()} | {"T": list(T_list)} | ({"reported, not judged": flat} if flat else {}))]
    if K_eps:
        T_max, kept = T_list[-1], {}
        for eps in K_eps:
            cals = [runner.calibration(eps, T=T_max, K=k) for k in (None, K)]
            kept[part(eps, K)] = at_reading(V.paired_greater(final_T[eps, None][:, -1], final_T[eps, K][:, -1],
                                                             labels=("all clients", f"K = {K}"), **LOSS_EFFECT),
                                            krandom_precondition(*cals))
        checks.append(Check(claims.sim_krandom_T(K=K, T=T_max),
                            V.combine(kept), {eps_label(e): {"mean all clients": round(float(final_T[e, None][:, -1].mean()), 5),
                                                f"mean K = {K}": round(float(final_T[e, K][:, -1].mean()), 5)}
                                            for e in K_eps}))
    return final_T, checks


def fig_K(runner: Runner, rec, *, eps_K: Sequence[float], K_list: Sequence[int], name: str):
    """Fig. 11: final loss against the number K of chosen clients, non-private and each eps.
    Returns ``(sweep, check)``: for every eps an optimal K < N (the near-best set of
    :func:`fldp.verdicts.best_setting` inside K < N, so it beats K = N), gated by
    the precondition named (:func:`at_reading`) where no K < N carries less noise than K = N."""
    import matplotlib.pyplot as plt

    below = [k for k in K_list if k < runner.N]
    if not below:
        raise ValueError(f"K_list={list(K_list)} is out of range: Remark 5 needs some K < N = {runner.N}")
    got = runner.runs_many({(eps, k): dict(eps=eps, K=k, final_only=True) for eps in [None, *eps_K] for k in K_list})
    sweep = {eps: np.array([final(got[eps, k][0]) for k in K_list]).T for eps in [None, *eps_K]}
    fig, (ax, dx) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    for eps, arr in sweep.items():
        plots.mean_band(ax, K_list, arr, label=eps_label(eps), marker="o")
        plots.mean_band(dx, K_list, arr - arr[:, [-1]], label=eps_label(eps), marker="o")
        rec.add(f"{name}/{eps_label(eps)}", {"K": list(K_list), "final_loss": arr})
    ax.set(xlabel="number of chosen clients K", ylabel="final training loss",
           title=f"Fig. 11: final loss vs K, N = {runner.N}, T = {runner.T}\nreading: {runner.reading.label}")
    dx.axhline(0, color="0.3", lw=1)
    dx.set(xlabel="number of chosen clients K", ylabel=f"final loss minus K = {K_list[-1]} (same seed)",
           title="below 0: that K beats the largest")
    for a in (ax, dx):
        a.grid(alpha=0.3); a.legend(fontsize=8)
    rec.savefig(fig, name)
    parts = {}
    for eps in eps_K:
        pre = [krandom_precondition(runner.calibration(eps), runner.calibration(eps, K=k)) for k in below]
        absent = None if not all(pre) else f"no K < N lowers the noise (at the largest: {pre[-1]})"
        parts[eps_label(eps)] = at_reading(V.best_setting(sweep[eps], list(K_list), claimed=below, **LOSS_EFFECT), absent)
    check = Check(claims.sim_optimal_K(N=runner.N), V.combine(parts),
                  {eps_label(e): {"mean_final_loss": sweep[e].mean(axis=0).round(5),
                                  "argmin_K": K_list[int(sweep[e].mean(axis=0).argmin())]} for e in eps_K}
                  | {"K": list(K_list)})
    return sweep, check


def spend_table(reading: Reading, *, delta: float, N: int, m: int, configs, accountant: str = "rdp") -> list:
    """What each run really spends: for each (figure, eps, T, K) in ``configs``, the paper's
    calibration (:func:`fldp.papers.wei2020.algorithm.calibrate`) and each client's whole-run
    eps at ``delta``, by one ``accountant`` for the whole table: in every round, and under
    K-random scheduling with each client in a round with probability K/N, kept secret
    (amplification by Poisson sampling).  RDP by default: PLD of a sampled Gaussian at the
    paper's multipliers (~0.06) takes ~40 s a row, and mixing the two made the amplified figure
    come out above the unamplified one."""
    rows = []
    for fig, eps, T, K in configs:
        cal = nbafl.calibrate(eps=eps, delta=delta, C=reading.C, L=reading.L_for(T), N=N, T=T, m=m, K=K)
        z = cal.sigma_U / cal.sensitivity_U
        one = accounting.gaussian(noise_multiplier=z)
        spend = lambda q: accounting.planned_epsilon(event=one, rounds=T, client_sampling_prob=q,  # noqa: E731
                                                     delta=delta, accountant=accountant)
        rows.append({"figure": fig, "paper eps": eps, "L": cal.L, "T": T, "K": K or N, "sigma_U": cal.sigma_U,
                     "sigma_D": cal.sigma_D, "multiplier z": z,
                     f"true eps ({accountant.upper()}, delta={delta})": spend(None),
                     "true eps, K-random amplified": None if not K or K == N else spend(K / N)})
    return rows


def delta_warning(*, delta: float, m: int) -> str:
    """A warning when ``delta`` is at least 1/m (m a client's sample count): then (eps, delta)-DP
    allows a mechanism that publishes one of the client's records outright with probability
    delta, i.e. about one record per client; '' otherwise."""
    if validate.open_unit("delta", delta) * validate.integer("m", m, 1) < 1:
        return ""
    return (f"delta = {delta:g} is at least 1/m = 1/{m} = {1 / m:.2g}: an (eps, delta)-DP guarantee at this delta "
            "permits publishing one of a client's records outright with probability delta (about one record per "
            "client), so no eps in this table protects individual records")


def gated(check: Check, gate: Optional[V.Verdict]) -> Check:
    """``check`` with ``gate`` (e.g. :func:`gate_noise_power`) judged first."""
    return replace(check, verdict=V.first(gate, check.verdict))


def krandom_map(runners: Mapping[int, Runner], rec, *, eps_list: Sequence[float], K_list: Sequence[int], name: str):
    """Remark 5 and Fig. 10-11 where the paper's K-random mechanism is at work: for each L (one
    runner per L, same C, N, T and seeds) and eps, the per-seed final loss of K-random
    scheduling with each K of ``K_list`` minus that of all clients (paired by seed; < 0: K-random
    is better), with each cell's regime from the paper's calibration: sigma_D of K-random > 0
    (Lemma 4's b defined, eq. (69)) and its broadcast noise below all clients'.  Returns
    ``(rows, check)``: the claim that K-random beats all clients in every *active* cell (a
    cell where the server noise is on and K-random's is lower), on paired seeds."""
    import matplotlib.pyplot as plt

    rows, parts = [], {}
    fig, axes = plt.subplots(1, len(runners), figsize=(5.2 * len(runners), 3.8), layout="constrained", squeeze=False)
    for ax, (L, runner) in zip(axes[0], runners.items()):
        got = runner.runs_many({(eps, K): dict(eps=eps, K=K, final_only=True) for eps in eps_list for K in [None, *K_list]})
        for i, eps in enumerate(eps_list):
            base = final(got[eps, None][0])
            cal_all, diffs = runner.calibration(eps), []
            for K in K_list:
                cal_k = runner.calibration(eps, K=K)
                d = final(got[eps, K][0]) - base
                active = cal_k.sigma_D > 0 and broadcast_noise(cal_k) < broadcast_noise(cal_all)
                m, lo, hi = V.mean_interval(d)
                rows.append({"L": L, "eps": eps, "K": K, "sigma_D all": cal_all.sigma_D, "sigma_D K-random": cal_k.sigma_D,
                             "noise ratio K/all": broadcast_noise(cal_k) / broadcast_noise(cal_all), "active": active,
                             "loss K minus all (mean)": m, "95 % CI": [lo, hi]})
                if active:
                    parts[f"L = {L}, eps = {eps}, K = {K}"] = V.paired_greater(
                        base, base + d, labels=("all clients", f"K = {K}"), **LOSS_EFFECT)
                diffs.append(d)
            arr = np.array(diffs).T
            plots.mean_band(ax, K_list, arr, label=f"eps = {eps}", marker="o", color=f"C{i}")
            for K, d, row in zip(K_list, arr.T, rows[-len(K_list):]):
                if row["active"]:
                    ax.plot([K], [d.mean()], "o", ms=11, mfc="none", color=f"C{i}")
        ax.axhline(0, color="0.3", lw=1)
        ax.set(xlabel="K chosen clients (circled: sigma_D > 0 and less noise than all clients)",
               ylabel="final loss, K-random minus all clients (same seed)", title=runner.reading.label)
        ax.grid(alpha=0.3); ax.legend(fontsize=8)
    fig.suptitle(f"K-random vs all clients where Lemma 4 holds, N = {runner.N}, T = {runner.T}, "
                 f"{len(runner.seeds)} seeds (below 0: K-random better)", fontsize=10)
    rec.add(name, rows); rec.savefig(fig, name)
    verdict = V.combine(parts) if parts else V.inconclusive(
        "no-power", "no cell of the map has sigma_D > 0 with less K-random noise than all clients'")
    check = Check(claims.sim_krandom_map, verdict, {"cells": len(rows), "active cells": len(parts)})
    return rows, check


def paper_runs_at_true_eps(m06: Mapping[str, Any], *, C: float, lr: float) -> list:
    """Wei et al. 2020's own runs (its Sec. VI calibration) as ``08_calibrated`` places them on
    its plot of accuracy against the true whole-run eps: from ``06_settings_map``'s results
    (``m06``, its ``data`` with the ``spend`` and ``map`` tables), for every L of the spend
    table in increasing order, the whole-run eps its true-spend column gives at the smallest paper
    eps, and the final test accuracy of 06's cell (``C``, L, ``lr``) at that eps.  Returns
    ``[{"L", "paper eps", "true eps", "acc"}]``, ``true eps`` and ``acc`` None where 06 has no
    such cell or spend row."""
    key = next(k for k in m06["spend"][0] if k.startswith("true whole-run eps"))
    e0 = min(r["paper eps"] for r in m06["spend"])
    out = []
    for L in sorted({r["L"] for r in m06["spend"]}):
        cell = [r for r in m06["map"] if (r["C"], r["L"], r["lr"]) == (C, L, lr)]
        sp = [r for r in m06["spend"] if (r["L"], r["paper eps"]) == (L, e0)]
        found = bool(cell and sp)
        out.append({"L": L, "paper eps": e0, "true eps": sp[0][key] if found else None,
                    "acc": cell[0][f"acc eps={e0}"] if found else None})
    return out
