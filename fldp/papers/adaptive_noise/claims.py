"""The adaptive CLT noise chapter's verdict helpers (notebooks ``adaptive_noise/03``-``05`` and
the benchmark): the few lines :mod:`fldp.verdicts` leaves to a chapter.

* :func:`diverged`: a run that diverged, or whose final accuracy is near chance
  (:func:`fldp.verdicts.untrained`), is not a trained model, so a comparison involving it is
  ``inconclusive: diverged`` (:func:`fldp.verdicts.gate_diverged` takes what it returns);
* :func:`gate_guess`: the label-composition attack's power gate (Sec. 7.3.2): the attack must
  beat a uniform guess of the label proportions on the unprotected uploads.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ... import verdicts as V

#: The accuracy of a constant guess over MNIST's 10 classes.
CHANCE = 0.1


def diverged(run: Mapping[str, Any], *, chance: float = CHANCE) -> Any:
    """What :func:`fldp.verdicts.gate_diverged` takes for one stored run of the chapter
    (``utility_run`` or ``privacy_run``): the round it diverged in, else ``"untrained"`` when its
    final accuracy (``acc``: a curve or a number) is near chance (:func:`untrained`), else None."""
    if run.get("diverged_at") is not None:
        return run["diverged_at"]
    acc = run["acc"]
    final = acc[-1] if isinstance(acc, (list, tuple, np.ndarray)) else acc
    return "untrained" if V.untrained(final, chance=chance) else None


def gate_guess(attack_l1: Sequence[float], guess_l1: Sequence[float], *,
               what: str = "the label attack on regular FL") -> Optional[V.Verdict]:
    """The label-composition attack's power gate: None when the attack's l1 distance to the
    true label proportions is below a uniform guess's, paired over the attacked clients
    (:func:`fldp.verdicts.paired_greater` of guess over attack holds), else ``inconclusive:
    no-power`` (a defence is only judged where the attack beats a guess on the unprotected
    uploads)."""
    v = V.paired_greater(guess_l1, attack_l1, labels=("uniform guess l1", "attack l1"))
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
