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
:func:`final_values`) and power first (:func:`first` with the gates :func:`gate_diverged`,
:func:`gate_power`, :func:`gate_resolution`).  The three-way answer and the pairing rule are
written here in one place; scipy supplies the t and beta quantiles.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from fldp import validate

__all__ = [
    "KINDS", "SETTINGS", "VERDICTS", "REASONS", "REASON_ORDER", "MIN_SEEDS", "LEVEL", "Verdict",
    "holds_if", "inconclusive", "first", "combine", "negate", "mean_interval", "paired_greater",
    "ordering", "trend", "near_best", "best_setting", "grid_neighbours", "over_seeds",
    "final_values", "best_of", "equivalent", "gate_diverged", "untrained_accuracy", "untrained",
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
#: Why a check is inconclusive: one reason each, by key.
REASONS = {
    "no-power": "the experiment cannot show the effect (e.g. an attack at chance on the unprotected model)",
    "diverged": "a compared run diverged",
    "resolution": "beyond what the audit or the grid can resolve",
    "spread": "the difference is inside the seed-to-seed spread (or too few seeds to tell)",
    "not-run": "data or hardware absent",
}
#: When parts of one claim are open for several reasons, the one reported (the most basic first).
REASON_ORDER = ("not-run", "diverged", "no-power", "resolution", "spread")
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


def _sign_test(d: np.ndarray, *, claim: str, min_seeds: int, level: float) -> Verdict:
    """The paired rule on differences ``d`` (claimed > 0)."""
    m, lo, hi = mean_interval(d, level=level) if np.all(np.isfinite(d)) else (math.nan, math.nan, math.nan)
    stats = {"n": int(d.size), "mean_diff": m, "ci": [lo, hi], "positive": int((d > 0).sum())}
    if not np.all(np.isfinite(d)):
        return inconclusive("diverged", f"{claim}: a paired difference is not finite", stats=stats)
    if d.size < min_seeds:
        return inconclusive("spread", f"{claim}: {d.size} paired seed(s) < {min_seeds}, the spread cannot be "
                                      f"judged (mean difference {m:.4g})", stats=stats)
    ci = f"mean difference {m:.4g}, {level:.0%} CI [{lo:.4g}, {hi:.4g}], {stats['positive']}/{d.size} seeds > 0"
    if lo > 0 and stats["positive"] == d.size:
        return Verdict("holds", None, f"{claim}: {ci}", stats)
    if hi < 0:
        return Verdict("fails", None, f"{claim} contradicted: {ci}", stats)
    return inconclusive("spread", f"{claim}: {ci}", stats=stats)


def paired_greater(a: Any, b: Any, *, labels: Sequence[str] = ("a", "b"), min_seeds: int = MIN_SEEDS,
                   level: float = LEVEL) -> Verdict:
    """Claim: ``a > b``, judged on the per-seed differences ``a_s - b_s`` (``a`` and ``b``
    hold one value per seed, in the same seed order).

    Paired by seed: runs that share a seed share their data split, initial model, selection,
    batches and noise streams (:mod:`fldp.seeding`), so two settings are compared through the
    per-seed differences d_s = a_s - b_s.  ``a > b`` **holds** when every d_s > 0 and the 95 %
    t-interval of mean(d) excludes 0; it **fails** when that interval lies entirely below 0;
    anything else is ``inconclusive: spread``.  Fewer than :data:`MIN_SEEDS` pairs is
    ``inconclusive: spread`` too (the spread cannot be estimated)."""
    x, y = _as_pairs(a, b, "paired_greater")
    return _sign_test(x - y, claim=f"{labels[0]} > {labels[1]}", min_seeds=min_seeds, level=level)


def ordering(groups: Sequence[Any], labels: Sequence[str], *, min_seeds: int = MIN_SEEDS,
             level: float = LEVEL) -> Verdict:
    """Claim: ``groups[0] > groups[1] > ...`` (each a per-seed sample, same seeds).  Holds
    when every consecutive pair holds (:func:`paired_greater`), fails when any pair fails
    (its interval lies on the wrong side), else ``inconclusive`` with the first pair's reason."""
    if len(groups) < 2 or len(groups) != len(labels):
        raise ValueError(f"ordering needs at least two groups and one label each, got {len(groups)} groups "
                         f"and {len(labels)} labels")
    pairs = [paired_greater(a, b, labels=(la, lb), min_seeds=min_seeds, level=level)
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
    reason = "diverged" if any(p.reason == "diverged" for p in open_) else "spread"
    return inconclusive(reason, f"{claim}: " + "; ".join(p.why for p in open_), stats=stats)


def trend(x: Sequence[float], runs: Any, *, direction: str, min_seeds: int = MIN_SEEDS,
          level: float = LEVEL) -> Verdict:
    """Claim: y rises (``direction="increasing"``) or falls (``"decreasing"``) with ``x``.
    ``runs[s, j]`` is seed s's value at ``x[j]``; each seed's least-squares slope is the paired
    statistic (holds when every slope has the claimed sign and the interval of their mean
    excludes 0; fails when it lies on the other side)."""
    if direction not in ("increasing", "decreasing"):
        raise ValueError(f"direction={direction!r} is out of range: direction must be 'increasing' or 'decreasing'")
    xs = np.asarray(x, dtype=float).ravel()
    r = np.atleast_2d(np.asarray(runs, dtype=float))
    if r.shape[1] != xs.size or xs.size < 2:
        raise ValueError(f"runs must have one column per x (got shape {r.shape} for {xs.size} x values, at least 2)")
    xc = xs - xs.mean()
    slopes = (r - r.mean(axis=1, keepdims=True)) @ xc / float(xc @ xc)
    sign = 1.0 if direction == "increasing" else -1.0
    v = _sign_test(sign * slopes, claim=f"y {direction} in x", min_seeds=min_seeds, level=level)
    return Verdict(v.verdict, v.reason, v.why, {**v.stats, "slopes": slopes.tolist()})


def near_best(runs: Any, labels: Sequence[Any], *, minimise: bool = True,
              level: float = LEVEL) -> tuple[Any, list]:
    """``(best, near)``: the label with the best mean, and every label whose paired
    difference to it is not significantly worse (its interval reaches 0), best included."""
    r = np.atleast_2d(np.asarray(runs, dtype=float))
    if r.shape[1] != len(labels):
        raise ValueError(f"runs must have one column per label (got shape {r.shape} for {len(labels)} labels)")
    y = r if minimise else -r
    best = int(np.argmin(y.mean(axis=0)))
    near = []
    for j in range(len(labels)):
        d = y[:, j] - y[:, best]
        lo = mean_interval(d, level=level)[1] if np.all(np.isfinite(d)) else -math.inf
        if j == best or not lo > 0:
            near.append(labels[j])
    return labels[best], near


def best_setting(runs: Any, labels: Sequence[Any], *, claimed: Union[Any, Iterable[Any]], minimise: bool = True,
                 min_seeds: int = MIN_SEEDS, level: float = LEVEL) -> Verdict:
    """Claim: the optimum (minimum, or maximum with ``minimise=False``) over ``labels`` lies
    in ``claimed`` (one label or a collection, e.g. the grid points next to a paper's T*).
    ``runs[s, j]``: seed s's value at ``labels[j]``.  Holds when the near-best set
    (:func:`near_best`) lies inside ``claimed``; fails when they are disjoint; otherwise
    ``inconclusive: spread``."""
    claimed_set = list(claimed) if isinstance(claimed, (list, tuple, set, frozenset)) else [claimed]
    unknown = [c for c in claimed_set if c not in list(labels)]
    if unknown:
        raise ValueError(f"claimed={unknown!r} is out of range: claimed settings must be among labels {list(labels)}")
    r = np.atleast_2d(np.asarray(runs, dtype=float))
    stats = {"n": int(r.shape[0]), "claimed": claimed_set,
             "means": {str(lab): float(m) for lab, m in zip(labels, r.mean(axis=0))}}
    if not np.all(np.isfinite(r)):
        return inconclusive("diverged", "a compared run is not finite", stats=stats)
    best, near = near_best(r, labels, minimise=minimise, level=level)
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
            minimise: bool, min_seeds: int = MIN_SEEDS) -> Verdict:
    """:func:`best_setting` over ``summaries`` (``{label: summary over the same seeds}``) on
    the final ``key``; an empty ``claimed`` (e.g. a grid without interior points) is
    ``inconclusive: resolution``."""
    if not list(claimed):
        return inconclusive("resolution", "no claimed setting on the grid (e.g. a grid without interior points)")
    labels = list(summaries)
    runs = np.stack([final_values(summaries[k], key) for k in labels], axis=1)
    return best_setting(runs, labels, claimed=list(claimed), minimise=minimise, min_seeds=min_seeds)


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


# --------------------------------------------------------------------------- power gates


def gate_diverged(diverged: Mapping[str, Any]) -> Optional[Verdict]:
    """``inconclusive: diverged`` when any compared run diverged (``{label: diverged}``; a
    run counts as diverged when its value is true: a bool, or the round it diverged at)."""
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


def gate_untrained(finals: Mapping[str, Any], *, limit: float, higher_is_better: bool) -> Optional[Verdict]:
    """``inconclusive: diverged`` when some seed of some compared setting (``{label: final
    values}``) ends not finite or on the wrong side of ``limit`` (e.g. a loss above the uniform
    predictor's ln(classes), an accuracy below :func:`untrained_accuracy`): a comparison with a
    model that did not train says nothing about the claim."""
    def bad(v):
        x = np.asarray(v, dtype=float)
        return not np.all(np.isfinite(x)) or bool(np.any(x < limit if higher_is_better else x > limit))
    return gate_diverged({k: bad(v) for k, v in finals.items()})


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


def gate_power(success_rate: float, *, trials: int, chance: float = 0.5, level: float = LEVEL,
               what: str = "the attack on the unprotected model") -> Optional[Verdict]:
    """``inconclusive: no-power`` unless ``what`` beats ``chance``: the lower end of its
    Clopper-Pearson interval (``success_rate`` over ``trials`` guesses) lies above chance.
    A defence can only be judged where there is something to defend."""
    k = int(round(float(success_rate) * int(trials)))
    lo, hi = clopper_pearson(k, int(trials), alpha=1 - level)
    if lo > chance:
        return None
    return inconclusive("no-power", f"{what} is not above chance: {success_rate:.4g} over {trials} guesses, "
                                    f"{level:.0%} CI [{lo:.4g}, {hi:.4g}] reaches chance {chance:g}",
                        stats={"success": float(success_rate), "trials": int(trials), "ci": [lo, hi],
                               "chance": float(chance)})


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
