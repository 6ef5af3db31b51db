"""Verdicts a referee can trust: the claims register's vocabulary and the statistics behind it.
Every claim a notebook records (:meth:`fldp.repro.results.Recorder.claim`) carries a **kind**
(:data:`KINDS`: ``paper``, ``derived``, or ``diagnostic``, never counted as a paper claim), a
**setting** (:data:`SETTINGS`: ``paper``, ``reduced`` or ``reading``, naming what was reduced or
read), a **verdict** (``holds``; ``fails``, only where the measurement contradicts the claim
*with power to do so*; or ``inconclusive`` with one reason of :data:`REASONS`) and a
**falsifier**, the measurement that would have made the check fail.  The functions return a
:class:`Verdict` by rules stated once, each in its function's docstring: comparisons paired by
seed (:func:`paired_greater`, :func:`ordering`, :func:`trend`; at least :data:`MIN_SEEDS`
seeds), argmins that account for the spread (:func:`near_best`, :func:`best_setting`), one
claim over several settings (:func:`combine`), runs summarised over seeds (:func:`over_seeds`,
:func:`final_values`, :func:`last_finite`) and power first (:func:`first` with the gates
:func:`gate_diverged`, :func:`gate_untrained`, :func:`gate_power`, :func:`gate_resolution`).
The three-way answer and the one paired rule (both ways, beyond a minimum material effect that
each claim states) are written here in one place; scipy supplies the t and beta quantiles.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from fldp import validate

__all__ = [
    "KINDS", "SETTINGS", "VERDICTS", "REASONS", "REASON_ORDER", "MIN_SEEDS", "LEVEL", "Verdict", "Claim",
    "catalogue",
    "holds_if", "inconclusive", "first", "combine", "negate", "mean_interval", "paired_greater",
    "ordering", "trend", "near_best", "best_setting", "grid_neighbours", "over_seeds",
    "final_values", "best_of", "equivalent", "not_worse", "gate_diverged", "untrained_accuracy", "untrained", "last_finite",
    "settled_at",
    "gate_untrained", "clopper_pearson", "gate_power", "gate_resolution", "not_run"
]

#: A claim's kind: who states it (a diagnostic is never counted as a paper claim).
KINDS = {
    "paper": "the paper states it (cited)",
    "derived": "follows from the paper's own mathematics; checked by the project",
    "diagnostic": "the project's own finding; not a paper claim",
}
#: A claim's setting: the paper's, a reduced one, or a reading of one the paper leaves out.
SETTINGS = {
    "paper": "the paper's stated setting",
    "reduced": "smaller than the paper's (what was reduced is named)",
    "reading": "a setting the paper leaves out (the reading is named)",
}
#: The three verdicts a check can reach.
VERDICTS = ("holds", "fails", "inconclusive")
#: Why a check is inconclusive: one reason each, by key, saying what happened.
REASONS = {
    "not-run": "data or hardware absent",
    "diverged": "a compared run's numbers are not finite (it blew up), where the claim is not about stability",
    "untrained": "a compared run is finite but below the floor stated with the claim (chance plus a margin, "
                 "or the majority class), where a low value is neither what the claim predicts nor what refutes it",
    "no-power": "the measurement could not have shown the effect (e.g. an attack at chance on the unprotected model)",
    "resolution": "the instrument cannot resolve it (an audit bound capped by its trials, a grid coarser than "
                  "the effect)",
    "spread": "the interval of the paired difference reaches inside the minimum material effect (or fewer "
              "than 5 seeds)",
}
#: When parts of one claim are open for several reasons, the one reported (the most basic first).
REASON_ORDER = ("not-run", "diverged", "untrained", "no-power", "resolution", "spread")
#: Orderings are judged on at least this many paired seeds.
MIN_SEEDS = 5
LEVEL = 0.95


@dataclass(frozen=True)
class Verdict:
    """``verdict`` in :data:`VERDICTS`; ``reason`` (one of :data:`REASONS`) exactly when
    inconclusive; ``why``: one line saying what decided it; ``stats``: the numbers the rule used."""

    verdict: str
    reason: Optional[str] = None
    why: str = ""
    stats: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict={self.verdict!r} is out of range: verdict must be one of {list(VERDICTS)}")
        if self.verdict == "inconclusive":
            if self.reason not in REASONS:
                raise ValueError(f"reason={self.reason!r} is out of range: an inconclusive verdict needs a "
                                 f"reason in {list(REASONS)}")
        elif self.reason is not None:
            raise ValueError(f"reason={self.reason!r}: only an inconclusive verdict has a reason "
                             f"(verdict={self.verdict!r})")

    @property
    def label(self) -> str:
        """``holds``, ``fails`` or ``inconclusive: <reason>``."""
        return self.verdict if self.reason is None else f"{self.verdict}: {self.reason}"


@dataclass(frozen=True)
class Claim:
    """One claim's fixed text, as it lives in its paper's catalogue (``fldp/papers/<p>/claims.py``):
    ``id``; ``statement``; ``kind`` (:data:`KINDS`) with ``source`` (the paper's sentence or
    equation, required for a paper claim); ``setting`` (:data:`SETTINGS`) with ``setting_note``
    (what was reduced, or which reading; required unless the paper's own); ``falsifier`` (the
    measurement that would make the check fail; a check that cannot fail is a number, not a
    claim); ``min_effect`` (the smallest difference the claim counts as material, in
    ``units``; ``None`` where the check is not a comparison).  A notebook records it with its
    verdict and measurement: ``rec.claim(catalogue.fig7_practical, verdict=..., measured=...)``."""

    id: str
    statement: str
    kind: str
    setting: str
    falsifier: str
    source: str = ""
    setting_note: str = ""
    min_effect: Optional[float] = None
    units: str = ""

    def __post_init__(self):
        where = f"claim {self.id!r}"
        if not str(self.id).strip() or not str(self.statement).strip():
            raise ValueError(f"{where}: id and statement must not be empty")
        if self.kind not in KINDS:
            raise ValueError(f"{where}: kind={self.kind!r} is out of range: kind must be one of {list(KINDS)}")
        if self.setting not in SETTINGS:
            raise ValueError(f"{where}: setting={self.setting!r} is out of range: setting must be one of "
                             f"{list(SETTINGS)}")
        if self.kind == "paper" and not str(self.source).strip():
            raise ValueError(f"{where}: a paper claim needs source= (the sentence or equation it cites)")
        if self.setting != "paper" and not str(self.setting_note).strip():
            raise ValueError(f"{where}: setting={self.setting!r} needs setting_note= (what was reduced, or which "
                             "reading)")
        if not str(self.falsifier).strip():
            raise ValueError(f"{where}: falsifier= must say which measurement would make the check fail (a check "
                             "that cannot fail is not a claim: report the number instead)")
        if self.min_effect is not None:
            _nonneg(self.min_effect)
            if not str(self.units).strip():
                raise ValueError(f"{where}: min_effect={self.min_effect!r} needs units= (e.g. 'accuracy, as a "
                                 "fraction')")


def catalogue(namespace: Mapping[str, Any]) -> dict[str, Claim]:
    """The :class:`Claim` s of a catalogue module's ``namespace`` (``catalogue(globals())``) by
    id; two entries with one id are an error (one cause, one claim)."""
    out: dict[str, Claim] = {}
    for v in namespace.values():
        if isinstance(v, Claim):
            if v.id in out and out[v.id] is not v:
                raise ValueError(f"claim id {v.id!r} is in the catalogue twice: one cause is one claim")
            out[v.id] = v
    return out


def holds_if(condition: bool, *, why: str = "", stats: Optional[Mapping[str, Any]] = None) -> Verdict:
    """A deterministic check (a measurement against a threshold with no seed spread to
    speak of): ``holds`` when ``condition`` is true, else ``fails``."""
    return Verdict("holds" if bool(condition) else "fails", None, why, dict(stats or {}))


def inconclusive(reason: str, why: str, *, stats: Optional[Mapping[str, Any]] = None) -> Verdict:
    """An inconclusive verdict with its ``reason`` (one of :data:`REASONS`) and ``why``."""
    return Verdict("inconclusive", reason, why, dict(stats or {}))


def first(*verdicts: Optional[Verdict]) -> Verdict:
    """The first verdict that is not ``None``: gates first, then the comparison
    (``first(gate_diverged(...), paired_greater(...))``).  Power first: a gate returns an
    inconclusive verdict, or ``None`` when it lets the comparison through.  The last may be a callable
    returning a verdict, so that it is only computed when every gate lets it through."""
    for v in verdicts:
        if callable(v) and not isinstance(v, Verdict):
            v = v()
        if v is not None:
            return v
    raise ValueError("first() needs at least one verdict that is not None")


def combine(parts: Mapping[Any, Verdict], *, how: str = "all") -> Verdict:
    """One verdict for a claim made of several measurements ``{label: verdict}``:

    * ``how="all"`` (claimed at every setting): fails when any part fails, holds when every
      part holds;
    * ``how="any"`` (some setting shows it): holds when any part holds, fails when every part fails;
    * ``how="most"`` ("in most cases"): holds when more than half hold, fails when at least half fail.

    Otherwise inconclusive, with the open parts' first reason in :data:`REASON_ORDER`."""
    if how not in ("all", "any", "most"):
        raise ValueError(f"how={how!r} is out of range: how must be 'all', 'any' or 'most'")
    if not parts:
        raise ValueError("parts={} is out of range: combine needs at least one verdict")
    parts = {str(k): v for k, v in parts.items()}
    n = len(parts)
    stats = {"parts": {k: {"verdict": v.label, "why": v.why} for k, v in parts.items()}}
    held = [k for k, v in parts.items() if v.verdict == "holds"]
    failed = [k for k, v in parts.items() if v.verdict == "fails"]
    decided = {"all": (len(held) == n, bool(failed)), "any": (bool(held), len(failed) == n),
               "most": (2 * len(held) > n, 2 * len(failed) >= n)}[how]
    if decided[1] and not (how == "most" and decided[0]):
        return Verdict("fails", None, "; ".join(f"{k}: {parts[k].why or 'fails'}" for k in failed)
                       + f" ({len(failed)} of {n} fail)", stats)
    if decided[0]:
        return Verdict("holds", None, f"{len(held)} of {n} hold ({how}): " + ", ".join(held), stats)
    open_ = {k: v for k, v in parts.items() if v.verdict == "inconclusive"}
    reason = min((v.reason for v in open_.values()), key=REASON_ORDER.index)
    return inconclusive(reason, f"{len(held)} hold, {len(failed)} fail, {len(open_)} open of {n}: "
                        + "; ".join(f"{k}: {v.label}" + (f" ({v.why})" if v.why else "")
                                    for k, v in open_.items() if v.reason == reason), stats=stats)


def negate(verdict: Verdict, claim: str) -> Verdict:
    """The verdict of the opposite ``claim`` (e.g. "accuracy does not necessarily rise with K"
    from the verdict of "it rises"): holds and fails swap, an inconclusive verdict stays."""
    if verdict.verdict == "inconclusive":
        return inconclusive(verdict.reason, f"{claim}: open, as its opposite ({verdict.why})", stats=verdict.stats)
    other = "fails" if verdict.verdict == "holds" else "holds"
    return Verdict(other, None, f"{claim}: the opposite claim {verdict.verdict} ({verdict.why})", verdict.stats)


# --------------------------------------------------------------------------- paired statistics


def _as_pairs(a: Any, b: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if x.size != y.size or x.size == 0:
        raise ValueError(f"{what}: paired samples need one value per seed on both sides, "
                         f"got sizes {x.size} and {y.size}")
    return x, y


def mean_interval(values: Any, *, level: float = LEVEL) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values`` and its two-sided t-interval at ``level``
    (a zero-width interval when every value is equal; (-inf, inf) for a single value)."""
    from scipy import stats as sst

    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError(f"values must be a non-empty sample of finite numbers, got {v.tolist()}")
    m = float(v.mean())
    if v.size < 2:
        return m, -math.inf, math.inf
    half = float(sst.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return m, m - half, m + half


def _nonneg(min_effect: Any) -> float:
    try:
        x = float(min_effect)
    except (TypeError, ValueError):
        raise ValueError(f"min_effect={min_effect!r} is out of range: min_effect must be a number >= 0 (the "
                         "smallest difference the claim counts as material, in the measurement's units)") from None
    if not (math.isfinite(x) and x >= 0):
        raise ValueError(f"min_effect={min_effect!r} is out of range: min_effect must be a finite number >= 0")
    return x


def _log_scale(values: Any, relative: bool, what: str) -> np.ndarray:
    """``values`` as floats, or their natural log where the claim's effect is ``relative`` (a
    loss 1 % lower: the paired log ratio against ln 1.01).  Values that are not finite stay not
    finite (a diverged run); a finite value <= 0 cannot be compared relatively."""
    v = np.asarray(values, dtype=float)
    if not relative:
        return v
    finite = v[np.isfinite(v)]
    if np.any(finite <= 0):
        raise ValueError(f"{what}: relative=True compares ratios, so every finite value must be > 0, got "
                         f"{float(finite.min()):.4g}")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(v)


def _threshold(min_effect: Any, relative: bool) -> float:
    """The paired rule's threshold: ``min_effect`` itself, or ln(1 + min_effect) on the log scale."""
    delta = _nonneg(min_effect)
    return math.log1p(delta) if relative else delta


def _paired_rule(d: np.ndarray, *, claim: str, min_effect: float, min_seeds: int, level: float) -> Verdict:
    """The one paired rule, both ways, on differences ``d`` (claimed materially > 0).

    With the ``level`` t-interval [lo, hi] of mean(d) over at least ``min_seeds`` seeds and the
    claim's minimum material effect delta >= 0: **holds** when lo > delta (the difference is
    material beyond the spread), **fails** when hi < -delta (the opposite difference is), and
    otherwise ``inconclusive: spread``.  Swapping the compared groups negates d, so it swaps
    holds and fails.  The number of seeds with d > 0 is reported, not required.  A difference
    that is not finite is ``inconclusive: diverged``."""
    finite = bool(np.all(np.isfinite(d)))
    m, lo, hi = mean_interval(d, level=level) if finite else (math.nan, math.nan, math.nan)
    stats = {"n": int(d.size), "mean_diff": m, "ci": [lo, hi], "min_effect": min_effect,
             "positive": int((d > 0).sum()), "negative": int((d < 0).sum())}
    if not finite:
        return inconclusive("diverged", f"{claim}: a paired difference is not finite", stats=stats)
    if d.size < min_seeds:
        return inconclusive("spread", f"{claim}: {d.size} paired seed(s) < {min_seeds}, the spread cannot be "
                                      f"judged (mean difference {m:.4g})", stats=stats)
    ci = (f"mean difference {m:.4g}, {level:.0%} CI [{lo:.4g}, {hi:.4g}] against a material effect of "
          f"{min_effect:.4g}; {stats['positive']}/{d.size} seeds > 0")
    if lo > min_effect:
        return Verdict("holds", None, f"{claim}: {ci}", stats)
    if hi < -min_effect:
        return Verdict("fails", None, f"{claim} contradicted: {ci}", stats)
    return inconclusive("spread", f"{claim}: {ci}", stats=stats)


def paired_greater(a: Any, b: Any, *, min_effect: float, labels: Sequence[str] = ("a", "b"),
                   relative: bool = False, min_seeds: int = MIN_SEEDS, level: float = LEVEL) -> Verdict:
    """Claim: ``a > b`` by at least ``min_effect`` (in the measurement's units: 0.005 for half an
    accuracy point), judged on the per-seed differences ``a_s - b_s`` (``a`` and ``b`` hold one
    value per seed, in the same seed order).

    Paired by seed: runs that share a seed share their data split, initial model, selection,
    batches and noise streams (:mod:`fldp.seeding`), so two settings are compared through the
    per-seed differences d_s = a_s - b_s.  One rule both ways (:func:`_paired_rule`): **holds**
    when the 95 % t-interval of mean(d) lies above ``min_effect``, **fails** when it lies below
    ``-min_effect``, anything else is ``inconclusive: spread`` (so is fewer than
    :data:`MIN_SEEDS` pairs).  ``paired_greater(b, a)`` swaps holds and fails.
    ``relative=True``: the effect is a ratio (``min_effect=0.01``: 1 % larger), judged on the
    paired log ratios ln a_s - ln b_s against ln(1 + min_effect)."""
    x, y = _as_pairs(a, b, "paired_greater")
    x, y = _log_scale(x, relative, "paired_greater"), _log_scale(y, relative, "paired_greater")
    claim = f"{labels[0]} > {labels[1]}" + (" (log ratio)" if relative else "")
    v = _paired_rule(x - y, claim=claim, min_effect=_threshold(min_effect, relative), min_seeds=min_seeds,
                     level=level)
    return Verdict(v.verdict, v.reason, v.why, {**v.stats, "relative": bool(relative)}) if relative else v


def ordering(groups: Sequence[Any], labels: Sequence[str], *, min_effect: float, relative: bool = False,
             min_seeds: int = MIN_SEEDS, level: float = LEVEL) -> Verdict:
    """Claim: ``groups[0] > groups[1] > ...`` (each a per-seed sample, same seeds), every step
    by at least ``min_effect``.  Holds when every consecutive pair holds
    (:func:`paired_greater`), fails when any pair fails (its interval lies below
    ``-min_effect``), else ``inconclusive`` with the open pairs' first reason in
    :data:`REASON_ORDER`."""
    if len(groups) < 2 or len(groups) != len(labels):
        raise ValueError(f"ordering needs at least two groups and one label each, got {len(groups)} groups "
                         f"and {len(labels)} labels")
    pairs = [paired_greater(a, b, labels=(la, lb), min_effect=min_effect, relative=relative, min_seeds=min_seeds,
                            level=level)
             for a, b, la, lb in zip(groups, groups[1:], labels, labels[1:])]
    stats = {"pairs": {f"{la} > {lb}": {"verdict": p.label, **p.stats}
                       for p, la, lb in zip(pairs, labels, labels[1:])},
             "means": {lab: float(np.mean(g)) for lab, g in zip(labels, groups)}}
    claim = " > ".join(labels)
    failed = [p for p in pairs if p.verdict == "fails"]
    if failed:
        return Verdict("fails", None, f"{claim}: " + "; ".join(p.why for p in failed), stats)
    if all(p.verdict == "holds" for p in pairs):
        return Verdict("holds", None, f"{claim}: every consecutive pair holds on paired seeds", stats)
    open_ = [p for p in pairs if p.verdict == "inconclusive"]
    reason = min((p.reason for p in open_), key=REASON_ORDER.index)
    return inconclusive(reason, f"{claim}: " + "; ".join(p.why for p in open_ if p.reason == reason), stats=stats)


def trend(x: Sequence[float], runs: Any, *, direction: str, min_effect: float, relative: bool = False,
          min_seeds: int = MIN_SEEDS, level: float = LEVEL) -> Verdict:
    """Claim: y rises (``direction="increasing"``) or falls (``"decreasing"``) with ``x`` by at
    least ``min_effect`` across the measured range.  ``runs[s, j]`` is seed s's value at
    ``x[j]``; the paired statistic is each seed's least-squares slope times the range of x (the
    fitted change from the smallest to the largest x, in y's units), judged by the one paired
    rule (:func:`paired_greater`'s): holds when its interval lies beyond ``min_effect`` in the
    claimed direction, fails when beyond it in the other.  ``relative=True``: on ln y, against
    ln(1 + min_effect)."""
    if direction not in ("increasing", "decreasing"):
        raise ValueError(f"direction={direction!r} is out of range: direction must be 'increasing' or 'decreasing'")
    xs = np.asarray(x, dtype=float).ravel()
    r = np.atleast_2d(_log_scale(runs, relative, "trend"))
    if r.shape[1] != xs.size or xs.size < 2:
        raise ValueError(f"runs must have one column per x (got shape {r.shape} for {xs.size} x values, at least 2)")
    xc = xs - xs.mean()
    slopes = (r - r.mean(axis=1, keepdims=True)) @ xc / float(xc @ xc)
    sign = 1.0 if direction == "increasing" else -1.0
    change = sign * slopes * float(xs.max() - xs.min())
    v = _paired_rule(change, claim=f"y {direction} in x (fitted change over x in [{xs.min():g}, {xs.max():g}])",
                     min_effect=_threshold(min_effect, relative), min_seeds=min_seeds, level=level)
    return Verdict(v.verdict, v.reason, v.why, {**v.stats, "slopes": slopes.tolist(), "relative": bool(relative)})


def near_best(runs: Any, labels: Sequence[Any], *, min_effect: float, minimise: bool = True,
              relative: bool = False, level: float = LEVEL) -> tuple[Any, list]:
    """``(best, near)``: the label with the best mean, and every label that is not materially
    worse than it: the interval of its paired difference to the best does not lie beyond
    ``min_effect`` (best included; ``relative=True``: on the log scale, against
    ln(1 + min_effect)).  A column with a value that is not finite is never near."""
    delta = _threshold(min_effect, relative)
    r = np.atleast_2d(_log_scale(runs, relative, "near_best"))
    if r.shape[1] != len(labels):
        raise ValueError(f"runs must have one column per label (got shape {r.shape} for {len(labels)} labels)")
    y = r if minimise else -r
    means = np.where(np.all(np.isfinite(y), axis=0), y.mean(axis=0), np.inf)
    best = int(np.argmin(means))
    near = []
    for j in range(len(labels)):
        d = y[:, j] - y[:, best]
        lo = mean_interval(d, level=level)[1] if np.all(np.isfinite(d)) else math.inf
        if j == best or not lo > delta:
            near.append(labels[j])
    return labels[best], near


def best_setting(runs: Any, labels: Sequence[Any], *, claimed: Union[Any, Iterable[Any]], min_effect: float,
                 minimise: bool = True, relative: bool = False, min_seeds: int = MIN_SEEDS,
                 level: float = LEVEL) -> Verdict:
    """Claim: the optimum (minimum, or maximum with ``minimise=False``) over ``labels`` lies
    in ``claimed`` (one label or a collection, e.g. the grid points next to a paper's T*).
    ``runs[s, j]``: seed s's value at ``labels[j]``.  The argmin accounts for the spread: the
    near-best set (:func:`near_best`: not materially worse than the best mean, beyond the
    spread) decides.  Holds when it lies inside ``claimed``; fails when they are disjoint;
    otherwise ``inconclusive: spread``."""
    claimed_set = list(claimed) if isinstance(claimed, (list, tuple, set, frozenset)) else [claimed]
    unknown = [c for c in claimed_set if c not in list(labels)]
    if unknown:
        raise ValueError(f"claimed={unknown!r} is out of range: claimed settings must be among labels {list(labels)}")
    r = np.atleast_2d(np.asarray(runs, dtype=float))
    stats = {"n": int(r.shape[0]), "claimed": claimed_set, "min_effect": _nonneg(min_effect), "relative": bool(relative),
             "means": {str(lab): float(m) for lab, m in zip(labels, r.mean(axis=0))}}
    if not np.all(np.isfinite(r)):
        bad = [str(lab) for lab, ok in zip(labels, np.all(np.isfinite(r), axis=0)) if not ok]
        return inconclusive("diverged", f"runs at {bad} are not finite", stats=stats)
    best, near = near_best(r, labels, minimise=minimise, min_effect=min_effect, relative=relative, level=level)
    stats.update(best=best, near_best=near)
    what = "minimum" if minimise else "maximum"
    if r.shape[0] < min_seeds:
        return inconclusive("spread", f"{r.shape[0]} seed(s) < {min_seeds}: best mean at {best}, the spread "
                                      "cannot be judged", stats=stats)
    if all(n in claimed_set for n in near):
        return Verdict("holds", None, f"the {what} is at {best}; the near-best set {near} lies in the claimed "
                                      f"{claimed_set}", stats)
    if not any(n in claimed_set for n in near):
        return Verdict("fails", None, f"the {what} is at {best}; the near-best set {near} excludes the claimed "
                                      f"{claimed_set}", stats)
    return inconclusive("spread", f"the {what} is at {best}, but the near-best set {near} reaches beyond the "
                                  f"claimed {claimed_set}", stats=stats)


def grid_neighbours(grid: Sequence[float], x: float, *, adjacent: bool = False) -> list:
    """The points of ``grid`` next to ``x``: ``x`` itself on the grid, the two around it inside
    the grid, the nearest end outside it (e.g. the grid points next to a paper's T*, as the
    ``claimed`` set of :func:`best_setting`).  ``adjacent=True``: with ``x`` on the grid, ``x``
    and the grid points on either side of it ("at or next to x")."""
    g = sorted(grid)
    if not g:
        raise ValueError("grid=[] is out of range: grid must hold at least one point")
    if x in g:
        i = g.index(x)
        return g[max(0, i - 1):i + 2] if adjacent else [x]
    if x < g[0] or x > g[-1]:
        return [g[0] if x < g[0] else g[-1]]
    return [max(v for v in g if v < x), min(v for v in g if v > x)]


def _seed_stats(runs) -> dict:
    return {"runs": runs, "mean": runs.mean(axis=0), "min": runs.min(axis=0),
            "max": runs.max(axis=0), "std": runs.std(axis=0)}


def over_seeds(fn: Callable[[int], Any], seeds: Iterable[int]) -> dict:
    """Run ``fn(seed)`` for every seed and summarise across seeds.

    ``fn`` returns a number or a 1-D sequence (e.g. a loss curve), the same length for every
    seed.  Returns numpy arrays ``{"seeds", "runs", "mean", "min", "max", "std"}``: ``runs``
    has one row per seed (shape ``(num_seeds,)`` for numbers), the others reduce over seeds
    (``std`` is the population std, ``ddof=0``: 0 for a single seed); the rows are the pairing
    :func:`paired_greater` and the other paired rules use (:func:`final_values` reads them).  If ``fn`` returns a
    dict of such values, the result has one such summary per key (and ``"seeds"``).
    ``fldp.plots.mean_band(ax, x, summary)`` draws the mean with the min-max band.
    """
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds=[] is out of range: seeds must hold at least one seed")
    outs = [fn(s) for s in seeds]

    def stack(values, what):
        try:
            runs = np.asarray([np.asarray(v, dtype=float) for v in values], dtype=float)
        except ValueError as err:
            shapes = [np.shape(v) for v in values]
            raise ValueError(f"{what} must have the same shape for every seed, got {shapes}") from err
        if runs.ndim > 2:
            raise ValueError(f"{what} must be a number or a 1-D sequence per seed, got shape {runs.shape[1:]}")
        return _seed_stats(runs)

    if isinstance(outs[0], dict):
        keys = list(outs[0])
        if any(not isinstance(o, dict) or list(o) != keys for o in outs):
            raise ValueError(f"fn must return the same keys for every seed, got {[list(o) for o in outs]}")
        return {"seeds": np.asarray(seeds), **{k: stack([o[k] for o in outs], f"fn(seed)[{k!r}]") for k in keys}}
    return {"seeds": np.asarray(seeds), **stack(outs, "fn(seed)")}


def final_values(summary: Mapping[str, Any], key: str) -> np.ndarray:
    """Each seed's last value of ``key`` in a summary over seeds (``summary[key]["runs"]``:
    ``[seeds, rounds]`` or one number per seed), in seed order, so that two settings' arrays
    pair by seed."""
    runs = np.asarray(summary[key]["runs"], dtype=float)
    return runs[:, -1] if runs.ndim == 2 else runs


def best_of(summaries: Mapping[Any, Mapping[str, Any]], claimed: Sequence[Any], *, key: str,
            minimise: bool, min_effect: float, relative: bool = False, min_seeds: int = MIN_SEEDS) -> Verdict:
    """:func:`best_setting` over ``summaries`` (``{label: summary over the same seeds}``) on
    the final ``key``; an empty ``claimed`` (e.g. a grid without interior points) is
    ``inconclusive: resolution``."""
    if not list(claimed):
        return inconclusive("resolution", "no claimed setting on the grid (e.g. a grid without interior points)")
    labels = list(summaries)
    runs = np.stack([final_values(summaries[k], key) for k in labels], axis=1)
    return best_setting(runs, labels, claimed=list(claimed), minimise=minimise, min_effect=min_effect,
                        relative=relative, min_seeds=min_seeds)


def equivalent(a: Any, b: Any, *, margin: float, labels: Sequence[str] = ("a", "b"),
               min_seeds: int = MIN_SEEDS, level: float = LEVEL) -> Verdict:
    """Claim: ``a`` and ``b`` agree within ``margin`` (e.g. "loses nothing"), on the paired
    differences: holds when the interval of their mean lies inside (-margin, margin), fails
    when it lies entirely outside, otherwise ``inconclusive: spread``."""
    x, y = _as_pairs(a, b, "equivalent")
    d = x - y
    claim = f"|{labels[0]} - {labels[1]}| < {margin:g}"
    if not np.all(np.isfinite(d)):
        return inconclusive("diverged", f"{claim}: a paired difference is not finite")
    m, lo, hi = mean_interval(d, level=level)
    stats = {"n": int(d.size), "mean_diff": m, "ci": [lo, hi], "margin": float(margin)}
    if d.size < min_seeds:
        return inconclusive("spread", f"{claim}: {d.size} paired seed(s) < {min_seeds} (mean difference {m:.4g})",
                            stats=stats)
    ci = f"mean difference {m:.4g}, {level:.0%} CI [{lo:.4g}, {hi:.4g}]"
    if -margin < lo and hi < margin:
        return Verdict("holds", None, f"{claim}: {ci}", stats)
    if lo >= margin or hi <= -margin:
        return Verdict("fails", None, f"{claim} contradicted: {ci}", stats)
    return inconclusive("spread", f"{claim}: {ci}", stats=stats)


def not_worse(a: Any, b: Any, *, margin: float, labels: Sequence[str] = ("a", "b"), min_seeds: int = MIN_SEEDS,
              level: float = LEVEL) -> Verdict:
    """Claim: ``a`` is at most ``margin`` below ``b`` ("within 0.1 of its full-data accuracy"),
    on the paired differences d_s = a_s - b_s: **holds** when the interval of mean(d) lies above
    ``-margin``, **fails** when it lies below it, otherwise ``inconclusive: spread`` (the one paired
    rule, :func:`_paired_rule`, on d + margin: the margin is the claim's own tolerance, so no
    further material effect is added)."""
    x, y = _as_pairs(a, b, "not_worse")
    m = _nonneg(margin)
    claim = f"{labels[0]} >= {labels[1]} - {m:g}"
    v = _paired_rule(x - y + m, claim=claim, min_effect=0.0, min_seeds=min_seeds, level=level)
    if v.reason == "diverged":
        return Verdict(v.verdict, v.reason, v.why, {**v.stats, "margin": m, "min_effect": m})
    mean, lo, hi = v.stats["mean_diff"] - m, v.stats["ci"][0] - m, v.stats["ci"][1] - m  # back to a - b
    stats = {**v.stats, "mean_diff": mean, "ci": [lo, hi], "margin": m, "min_effect": m}
    if x.size < min_seeds:
        why = f"{claim}: {x.size} paired seed(s) < {min_seeds}, the spread cannot be judged (mean difference {mean:.4g})"
    else:
        why = (f"{claim}{' contradicted' if v.verdict == 'fails' else ''}: mean difference {mean:.4g}, {level:.0%} CI "
               f"[{lo:.4g}, {hi:.4g}] against -{m:g}")
    return Verdict(v.verdict, v.reason, why, stats)


# --------------------------------------------------------------------------- power gates


def gate_diverged(diverged: Mapping[str, Any]) -> Optional[Verdict]:
    """``inconclusive: diverged`` when any compared run diverged (``{label: diverged}``; a
    run counts as diverged when its value is true: a bool, or the round it diverged at, which
    the engine records when a round's uploads are not finite).  Only for claims about something
    else than stability, and only when :func:`last_finite` cannot stand in for the final model:
    where the claim is about stability the blow-up is its evidence."""
    bad = [str(k) for k, v in diverged.items() if v is not None and v is not False]
    if bad:
        return inconclusive("diverged", f"compared run(s) diverged: {', '.join(bad)}",
                            stats={"diverged": bad})
    return None


def untrained_accuracy(chance: float) -> float:
    """The accuracy below which a run counts as untrained: it closes less than a tenth of the
    gap from ``chance`` (a constant guess) to 1 (19 % on ten balanced classes)."""
    return float(chance) + (1.0 - float(chance)) / 10.0


def untrained(acc: float, *, chance: float) -> bool:
    """Whether a final accuracy is below :func:`untrained_accuracy` (NaN counts as untrained)."""
    acc = float(acc)
    return not math.isfinite(acc) or acc < untrained_accuracy(chance)


def gate_untrained(finals: Mapping[str, Any], *, floor: float, higher_is_better: bool,
                   what: str = "the stated floor") -> Optional[Verdict]:
    """``inconclusive: untrained`` when some seed of some compared setting (``{label: final
    values}``) ends finite but on the wrong side of ``floor`` (an accuracy below
    :func:`untrained_accuracy` or the majority class, a loss above the uniform predictor's
    ln(classes)); ``inconclusive: diverged`` when a value is not finite.  Use it only where a
    low value is neither what the claim predicts nor what would refute it ("smaller eps is
    worse", "Laplace is very poor", "stable under dropout" need no gate: the low value *is* the
    evidence).  ``what`` names the floor in the verdict."""
    floor = float(floor)
    nonfinite, below = [], {}
    for k, v in finals.items():
        x = np.asarray(v, dtype=float).ravel()
        if not np.all(np.isfinite(x)):
            nonfinite.append(str(k))
        elif np.any(x < floor if higher_is_better else x > floor):
            below[str(k)] = float(x.min() if higher_is_better else x.max())
    if nonfinite:
        return inconclusive("diverged", f"compared run(s) not finite: {', '.join(nonfinite)}",
                            stats={"diverged": nonfinite})
    if below:
        side = "below" if higher_is_better else "above"
        return inconclusive("untrained", f"compared run(s) end {side} {what} {floor:.4g}: "
                            + ", ".join(f"{k} (worst seed {v:.4g})" for k, v in below.items()),
                            stats={"untrained": below, "floor": floor})
    return None


def last_finite(curves: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(values, rounds)``: each seed's last finite value of its curve (``curves[s, t]``; a run
    that diverged has NaN or inf after its last good evaluation) and the index it was taken at
    (-1 and NaN where a seed has no finite value).  Judge a claim about the final model of a run
    that blew up on its last finite evaluation, and say so in the verdict."""
    c = np.atleast_2d(np.asarray(curves, dtype=float))
    ok = np.isfinite(c)
    idx = np.where(ok.any(axis=1), c.shape[1] - 1 - np.argmax(ok[:, ::-1], axis=1), -1)
    vals = np.array([c[s, i] if i >= 0 else np.nan for s, i in enumerate(idx)], dtype=float)
    return vals, idx


def settled_at(x: Sequence[float], y: Any, *, tol: float) -> Optional[float]:
    """The first ``x`` from which the curve ``y`` (one value per ``x``; a mean over seeds, say)
    stays within ``tol`` of its last value up to the end, or None when only the last point
    does (the curve is still moving at the end of the run: it has not levelled off within it).
    A reference run is "converged" at the cap only if this is well before the cap."""
    y = np.asarray(y, dtype=float).ravel()
    if len(y) != len(x) or len(y) == 0:
        raise ValueError(f"x and y must have one value each and at least one, got {len(x)} and {len(y)}")
    off = ~(np.abs(y - y[-1]) <= tol)  # NaN counts as off
    i = int(np.nonzero(off)[0].max()) + 1 if off.any() else 0
    return None if i >= len(y) - 1 else float(x[i])


def clopper_pearson(successes: int, trials: int, *, alpha: float = 1 - LEVEL) -> tuple[float, float]:
    """The exact binomial interval of a success rate (Clopper & Pearson 1934): ``(lower, upper)``,
    each one-sided at ``alpha / 2`` (so a two-sided level of ``1 - alpha``)."""
    from scipy import stats as sst

    n = validate.integer("trials", trials, 1)
    k = validate.integer("successes", successes, 0, n, why="successes <= trials")
    alpha = validate.open_unit("alpha", alpha)
    lo = 0.0 if k == 0 else float(sst.beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(sst.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def gate_power(rates: Any, *, min_effect: float, chance: float = 0.5, level: float = LEVEL,
               what: str = "the attack on the unprotected model") -> Optional[Verdict]:
    """``inconclusive: no-power`` unless ``what`` beats ``chance`` by more than ``min_effect``:
    ``rates`` are its success rates per cluster (per target, or per seed's run: the guesses on
    one target's data share its model and are not independent), and the t-interval of their
    mean must lie above ``chance + min_effect``.  A defence can only be judged where there is
    something to defend.  Fewer than 2 clusters cannot show power."""
    r = np.asarray(rates, dtype=float).ravel()
    delta = _nonneg(min_effect)
    if r.size < 2 or not np.all(np.isfinite(r)):
        return inconclusive("no-power", f"{what}: {r.size} finite cluster rate(s), at least 2 are needed to show "
                                        "power", stats={"rates": r.tolist()})
    m, lo, hi = mean_interval(r, level=level)
    stats = {"rates": r.tolist(), "mean": m, "ci": [lo, hi], "chance": float(chance), "min_effect": delta}
    if lo > chance + delta:
        return None
    return inconclusive("no-power", f"{what} does not beat chance {chance:g} by {delta:g}: mean {m:.4g} over "
                                    f"{r.size} clusters, {level:.0%} CI [{lo:.4g}, {hi:.4g}]", stats=stats)


def gate_resolution(value: float, *, limit: float, what: str) -> Optional[Verdict]:
    """``inconclusive: resolution`` when ``value`` (e.g. a claimed eps) lies beyond ``limit``
    (e.g. the largest eps the audit's trials could certify)."""
    if float(value) > float(limit):
        return inconclusive("resolution", f"{what} = {value:.4g} is beyond the resolution {limit:.4g}",
                            stats={"value": float(value), "limit": float(limit)})
    return None


def not_run(why: str) -> Verdict:
    """``inconclusive: not-run`` (the data set or the hardware is absent)."""
    return inconclusive("not-run", why)
