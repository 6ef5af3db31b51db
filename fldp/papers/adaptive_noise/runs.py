"""The adaptive CLT noise chapters' run helpers (notebooks ``adaptive_noise/01``, ``03``-``05`` and
the benchmark): the few lines :mod:`fldp.verdicts` leaves to a chapter.  The claims themselves are in
:mod:`fldp.papers.adaptive_noise.claims`.

* :func:`diverged`: the round a run's numbers stopped being finite (the engine stops it there), else
  None; :func:`untrained`: whether its last finite accuracy is near chance.  Neither gates a claim
  whose evidence is the collapse ("ours is stable", "DP accuracy rises with eps"): a diverged run
  is judged on its last finite evaluation (:func:`finals`), and the chapter says so;
* :func:`gate_guess`: the label-composition attack's power gate (Sec. 7.3.2): the attack must
  beat a uniform guess of the label proportions on the unprotected uploads by a stated margin;
* :func:`theorem1_normal`, :func:`theorem1_at_layer`, :func:`remark1_clt`: Theorem 1 and Remark 1
  judged at the CNN's layers (``01_scheme``);
* :func:`finals`, :func:`diverged_seeds`, :func:`curves`, :func:`band`: a setting run over
  seeds (its last finite values, which seeds diverged or ended untrained, its curves drawn with
  both marked).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

from fldp import plots, verdicts as V

__all__ = [
    "CHANCE", "diverged", "untrained", "gate_guess", "theorem1_law", "theorem1_normal", "theorem1_at_layer",
    "remark1_clt", "finals", "diverged_seeds", "curves", "band"
]

#: The accuracy of a constant guess over MNIST's 10 classes.
CHANCE = 0.1


def diverged(run: Mapping[str, Any]) -> Optional[int]:
    """The round in which a stored run of the chapter (``utility_run`` or ``privacy_run``) stopped
    because its uploads were not finite (``diverged_at``), else None."""
    return run.get("diverged_at")


def untrained(run: Mapping[str, Any], *, chance: float = CHANCE) -> bool:
    """Whether a run's last finite accuracy (``acc``: a curve or a number) is below
    :func:`fldp.verdicts.untrained_accuracy` of ``chance`` (19 % on MNIST's ten classes)."""
    acc = run["acc"]
    final = acc[-1] if isinstance(acc, (list, tuple, np.ndarray)) else acc
    return V.untrained(final, chance=chance)


def gate_guess(attack_l1: Sequence[float], guess_l1: Sequence[float], *, min_effect: float,
               what: str = "the label attack on regular FL") -> Optional[V.Verdict]:
    """The label-composition attack's power gate: None when the attack's l1 distance to the
    true label proportions is below a uniform guess's by more than ``min_effect``, paired over the
    attacked clients (:func:`fldp.verdicts.paired_greater` of guess over attack holds), else
    ``inconclusive: no-power`` (a defence is only judged where the attack beats a guess on the
    unprotected uploads)."""
    v = V.paired_greater(guess_l1, attack_l1, labels=("uniform guess l1", "attack l1"), min_effect=min_effect)
    if v.verdict == "holds":
        return None
    return V.inconclusive("no-power", f"{what} does not beat a uniform guess: {v.why}", stats=dict(v.stats))


def theorem1_law(checks: Mapping[Any, Mapping[str, float]], *, tol: float = 0.03, level: float = 0.01) -> V.Verdict:
    """Theorem 1's law at several simulated settings (``{setting: {"var_ratio", "normal_p"}}``:
    the variance of the standardised aggregate, Theorem 1's being 1, and a normality test's
    p-value): holds when every variance ratio is within ``tol`` of 1 and every p-value above
    ``level``, else fails."""
    if not checks:
        raise ValueError("theorem1_law needs at least one simulated setting")
    worst = max(abs(float(v["var_ratio"]) - 1.0) for v in checks.values())
    low = min(float(v["normal_p"]) for v in checks.values())
    return V.holds_if(worst < tol and low > level, why=f"largest variance error {worst:.2%} (tolerance {tol:.0%}), "
                                                      f"smallest normality p-value {low:.3g} (level {level:g})",
                      stats={"worst_var_error": worst, "min_normal_p": low})



def theorem1_normal(elements: Mapping[str, float], *, level: float) -> V.Verdict:
    """Theorem 1's normality at one simulated layer (the adaptive CLT noise paper, Theorem 1 and
    Remark 1; ``notebooks/adaptive_noise/01_scheme``): holds when D'Agostino's test keeps the
    normality of both the element along the update and one across it (``normal_p_along`` and
    ``normal_p_across`` of :func:`.theory.theorem1_elements` above ``level``), else fails."""
    return V.holds_if(min(elements["normal_p_along"], elements["normal_p_across"]) > level,
                      why=f"D'Agostino p {elements['normal_p_along']:.3g} (along), "
                          f"{elements['normal_p_across']:.3g} (across)")


def theorem1_at_layer(*, along, elements: Mapping[str, float], level: float, margin: float) -> V.Verdict:
    """Theorem 1's law N(0, sum_k (n_k/n)^2 sigma_k^2) at one layer of the CNN (the adaptive CLT
    noise paper, Theorem 1; ``notebooks/adaptive_noise/01_scheme``, claim ``theorem1_law``): zero
    mean, the standardised element along the update (``along``, one per simulated round, of
    :func:`.theory.fixed_direction_aggregate`) equivalent to 0 within ``margin`` of Theorem 1's
    std (:func:`fldp.verdicts.equivalent`), and normal (:func:`theorem1_normal` at ``level``)."""
    return V.combine({"zero mean": V.equivalent(along, np.zeros_like(along), margin=margin,
                                                labels=("element along the update", "0")),
                      "normal": theorem1_normal(elements, level=level)})


def remark1_clt(layers: Mapping[str, Mapping[str, float]], *, expected_kurtosis: float, se: float, level: float,
                K: int, dim: int, trials: int) -> V.Verdict:
    """Remark 1's "K > 30 suffices for the CLT" (the adaptive CLT noise paper, Remark 1 (2), Sec. 5;
    ``notebooks/adaptive_noise/01_scheme``, claim ``remark1_clt``): ``inconclusive: no-power`` when
    the departure from the normal that the CLT leaves at K clients (``expected_kurtosis``, the
    aggregate's excess kurtosis at the ``dim``-parameter layer) is below twice the standard error
    ``se`` of a sample's excess kurtosis over ``trials`` rounds; else :func:`theorem1_normal` at
    every layer (``layers``: name -> :func:`.theory.theorem1_elements`), combined."""
    if expected_kurtosis < 2 * se:
        return V.inconclusive("no-power", f"the departure the CLT leaves at K = {K} (excess kurtosis "
                                          f"{expected_kurtosis:.3g} at the {dim}-parameter layer) is below twice "
                                          f"the test's standard error {se:.3g}: no test on {trials:,} rounds could "
                                          "show it")
    return V.combine({name: theorem1_normal(e, level=level) for name, e in layers.items()})

# -- runs over seeds (notebooks 03 and 04: ``sweep_runs(..., seeds=...)`` gives a list per name) --
def finals(runs: Sequence[Mapping[str, Any]], key: str = "acc") -> list:
    """The final value of ``key`` (the last point of a curve, or the number) of each seed's run."""
    last = lambda v: float(v[-1]) if isinstance(v, (list, tuple, np.ndarray)) else float(v)
    return [last(r[key]) for r in runs]


def diverged_seeds(runs: Sequence[Mapping[str, Any]], *, chance: float = CHANCE) -> Optional[str]:
    """Which seeds of a setting diverged (``"seed 2: diverged in round 3"``) or ended untrained
    (``"seed 0: untrained"``), for the record; None when every seed trained."""
    bad = []
    for i, r in enumerate(runs):
        if diverged(r) is not None:
            bad.append(f"seed {i}: diverged in round {diverged(r)}")
        elif untrained(r, chance=chance):
            bad.append(f"seed {i}: untrained")
    return "; ".join(bad) or None


def curves(runs: Sequence[Mapping[str, Any]], key: str = "acc") -> tuple[np.ndarray, np.ndarray]:
    """(rounds, values[seeds, rounds]) of a setting's curves; a run that stopped early (it
    diverged) is padded with NaN after its last point."""
    longest = max(runs, key=lambda r: len(r["rounds"]))["rounds"]
    out = np.full((len(runs), len(longest)), np.nan)
    for i, r in enumerate(runs):
        out[i, :len(r[key])] = r[key]
    return np.asarray(longest), out


def band(ax, runs: Sequence[Mapping[str, Any]], label: str, key: str = "acc", **kw):
    """Draw a setting's mean curve over seeds with its min-max band; seeds that diverged or
    ended untrained are said in the label ("2/5 seeds diverged or untrained") and marked with an x
    at their last finite point, so a collapsed curve is never read as a trained one."""
    x, y = curves(runs, key)
    bad = [i for i, r in enumerate(runs) if diverged(r) is not None or untrained(r)]
    if bad:
        label = f"{label} ({len(bad)}/{len(runs)} seeds diverged or untrained)"
    plots.mean_band(ax, x, y, label, band_alpha=0.15, skip_nan=True, **kw)
    line = ax.lines[-1]
    for i in bad:
        j = int(np.flatnonzero(np.isfinite(y[i]))[-1])
        ax.plot(x[j], y[i, j], "x", color=line.get_color(), ms=8, mew=2)
    return line
