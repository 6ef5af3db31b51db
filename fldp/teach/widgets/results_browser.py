"""Results browser: overlay the curves of any experiment ``make reproduce`` saved under
``results/<paper>/<notebook>.json`` (mean over seeds, min-max band), without re-training.

A *curve* is a dict node of a notebook's ``data`` holding one 1-D numeric list x (a key of
:data:`X_KEYS`, else the first numeric list; a child node inherits its parent's named x) and
y entries that are a numeric list of x's length or a list of such lists (one per seed).  A node
whose only lists are per-seed ones with no matching x is plotted against the index.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

import ipywidgets as W
import numpy as np
from matplotlib.ticker import NullLocator

from fldp.repro.paths import PROJECT_ROOT
from fldp.teach.widgets import _base as B

__all__ = [
    "X_KEYS", "ALL", "MAX_LEGEND", "DEFAULT", "PRESETS", "Curve", "find_curves", "load",
    "experiments", "metrics", "curve_options", "defaults", "compute", "draw", "results_browser"
]

#: The keys a curve's x may have, in order of preference.
X_KEYS = ("rounds", "T", "K", "N", "eps", "t", "c", "mu")
ALL = "(all metrics)"
MAX_LEGEND = 20
DEFAULT = "wei2020/07_effect_regime"  # where eps visibly matters (05's curves lie on top of each other)
#: hand-picked overlays: Figs. 2-3 of Wei et al. (eps = 50 / 100 against the non-private run), and
#: Figs. 4-5 (K-random) beside them in the effect regime
PRESETS = {
    "wei2020/05_simulations": ("train_loss", ("fig02_03_eps / non-private", "fig02_03_eps / eps = 50",
                                              "fig02_03_eps / eps = 100")),
    DEFAULT: ("train_loss", ("fig02_03_eps_effect / non-private", "fig02_03_eps_effect / eps = 50",
                             "fig02_03_eps_effect / eps = 100", "fig04_05_krandom_effect / eps = 50")),
}


@dataclass(frozen=True, eq=False)
class Curve:
    """One curve: ``label`` = ``path / metric``; ``y`` is (seeds, len(x))."""
    label: str
    path: str
    metric: str
    x_key: str
    x: np.ndarray
    y: np.ndarray


def _vector(v) -> Optional[np.ndarray]:
    ok = isinstance(v, list) and v and all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in v)
    return np.asarray(v, dtype=float) if ok else None


def _matrix(v) -> Optional[np.ndarray]:
    rows = [_vector(r) for r in v] if isinstance(v, list) and v else [None]
    ok = all(r is not None for r in rows) and len({r.size for r in rows}) == 1
    return np.vstack(rows) if ok else None


def find_curves(data, _path: tuple = (), _parent_x: Optional[tuple] = None) -> dict:
    """Every curve in a nested results dict, by label (see the module docstring)."""
    out: dict = {}
    if not isinstance(data, dict):
        return out
    vecs = {k: a for k, v in data.items() if (a := _vector(v)) is not None}
    mats = {k: a for k, v in data.items() if (a := _matrix(v)) is not None}
    named = next(((k, vecs[k]) for k in X_KEYS if k in vecs), None)
    candidates = [c for c in (named, _parent_x, next(iter(vecs.items()), None)) if c is not None]
    for x_key, x in candidates:
        ys = {k: a[None, :] for k, a in vecs.items() if k != x_key and a.size == x.size}
        ys.update({k: a for k, a in mats.items() if a.shape[1] == x.size})
        if ys:
            break
    else:  # per-seed lists with no x of their length: plot against the index
        x_key, ys = "index", mats
    for k, y in sorted(ys.items(), key=lambda kv: list(data).index(kv[0])):  # in the node's key order
        path = " / ".join(_path)
        xx = np.arange(y.shape[1], dtype=float) if x_key == "index" else x
        out[f"{path} / {k}" if path else k] = Curve(f"{path} / {k}" if path else k, path, k, x_key, xx, y)
    for k, v in data.items():
        out.update(find_curves(v, _path + (str(k),), named or _parent_x))
    return out


@lru_cache(maxsize=64)
def _load(path: str, _mtime: int) -> tuple:
    saved = json.loads(Path(path).read_text(encoding="utf-8"))
    saved = saved if isinstance(saved, dict) else {}
    return saved, find_curves(saved.get("data", {}))


def load(root: Path, experiment: str) -> tuple:
    """(saved JSON, its curves) of ``root/<experiment>.json``, cached while the file is unchanged."""
    path = Path(root) / f"{experiment}.json"
    return _load(str(path), path.stat().st_mtime_ns)


def _safe_curves(root, name) -> dict:
    try:
        return load(root, name)[1]
    except (OSError, ValueError):  # missing or not JSON: no curves
        return {}


def experiments(root: Path) -> list:
    """``paper/notebook`` of every results file under ``root`` that has at least one curve."""
    names = sorted(f"{p.parent.name}/{p.stem}" for p in Path(root).glob("*/*.json"))
    return [n for n in names if _safe_curves(root, n)]


def metrics(found: dict) -> list:
    return list(dict.fromkeys(c.metric for c in found.values())) + [ALL]


def curve_options(found: dict, metric: str) -> list:
    return [(c.label if metric == ALL else c.path or "(top level)", c.label)
            for c in found.values() if metric in (ALL, c.metric)]


def defaults(experiment: str, found: dict) -> tuple:
    """A sensible first overlay: a preset, else the curves beside the first curve with a named x
    (same metric and top-level key, or the other y keys of its node if they are more)."""
    if experiment in PRESETS and all(f"{p} / {PRESETS[experiment][0]}" in found for p in PRESETS[experiment][1]):
        metric, paths = PRESETS[experiment]
        return metric, tuple(f"{p} / {metric}" for p in paths)
    if not found:
        return ALL, ()
    c0 = next((c for c in found.values() if c.x_key in X_KEYS), next(iter(found.values())))
    same = [c.label for c in found.values() if c.metric == c0.metric and c.path.split(" / ")[0] == c0.path.split(" / ")[0]]
    node = [c.label for c in found.values() if c.path == c0.path]
    if len(node) > len(same):  # the node's y keys are the variants (e.g. one key per K): overlay them
        return ALL, tuple(node[:10])
    return c0.metric, tuple(same[:6])


def compute(*, experiment: Optional[str], metric: str, curves, root: Path) -> dict:
    """The selected curves of ``root/<experiment>.json`` and their final values (mean over seeds at
    the last x); a metric or curves left over from another experiment become notes, not errors."""
    if not experiment:
        raise ValueError(f"experiment: no results with curves under {root}; run `make reproduce` first")
    try:
        saved, found = load(root, experiment)
    except (OSError, ValueError) as exc:  # missing, or not JSON
        raise ValueError(f"experiment={experiment!r}: cannot read {Path(root) / experiment}.json ({exc})") from None
    notes = [f"{experiment} was run in quick (CI) mode."] if saved.get("quick") else []
    if metric not in metrics(found):
        notes.append(f"metric {metric!r} is not in {experiment}; showing {defaults(experiment, found)[0]!r}.")
        metric = defaults(experiment, found)[0]
    curves = tuple(curves or ())
    chosen = [found[c] for c in curves if c in found and metric in (ALL, found[c].metric)]
    if len(chosen) < len(curves):
        notes.append(f"{len(curves) - len(chosen)} selected curve(s) not in {experiment} / {metric} ignored.")
    if not chosen:
        notes.append("Select one or more curves.")
    if len(chosen) > MAX_LEGEND:
        notes.append(f"{len(chosen)} curves: the legend is left out above {MAX_LEGEND} (the table names them).")
    rows = []
    for c in chosen:
        last = c.y[:, -1]
        spread = f", seeds from {last.min():.4g} to {last.max():.4g}" if last.size > 1 else ""
        rows.append(B.Row(c.label if metric == ALL else c.path or c.label, f"final:{c.label}", float(last.mean()),
                          f"at {c.x_key} = {c.x[-1]:g}, mean of {last.size} seed(s){spread}"))
    return {"rows": rows, "notes": notes, "curves": chosen, "metric": metric, "experiment": experiment}


def draw(fig, s: dict) -> None:
    ax = fig.subplots()
    for i, c in enumerate(s["curves"]):
        mean = c.y.mean(axis=0)
        ax.plot(c.x, mean, "-", color=f"C{i % 10}", lw=1.4, marker="." if c.x.size < 30 else None,
                label=c.label if s["metric"] == ALL else c.path or c.label)
        if c.y.shape[0] > 1:
            ax.fill_between(c.x, c.y.min(axis=0), c.y.max(axis=0), color=f"C{i % 10}", alpha=0.2, lw=0)
    if not s["curves"]:
        ax.text(0.5, 0.5, "select one or more curves", ha="center", va="center", transform=ax.transAxes)
        return
    xs, ys = np.concatenate([c.x for c in s["curves"]]), np.concatenate([c.y.ravel() for c in s["curves"]])
    for values, set_scale, axis in ((xs, ax.set_xscale, ax.xaxis), (ys, ax.set_yscale, ax.yaxis)):
        fin = values[np.isfinite(values)]
        if fin.size and fin.min() > 0 and fin.max() / fin.min() > 100:  # spans two decades: log scale
            set_scale("log")
            axis.set_minor_locator(NullLocator())  # minor log ticks cost more time than they help
    x_keys = " / ".join(dict.fromkeys("index (x not saved)" if c.x_key == "index" else c.x_key for c in s["curves"]))
    ax.set(xlabel=x_keys, ylabel="value" if s["metric"] == ALL else s["metric"],
           title=f"{s['experiment']}: mean over seeds, min-max band")
    ax.grid(alpha=0.3)
    if len(s["curves"]) <= MAX_LEGEND:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def results_browser(root=None, experiment: Optional[str] = None) -> B.Explorer:
    """The results browser over ``root`` (default ``results/`` of the project: the full-mode runs),
    opened on ``experiment`` ("<paper>/<notebook>", e.g. "wei2020/05_simulations") when it has curves."""
    root = Path(root) if root is not None else PROJECT_ROOT / "results"
    names = experiments(root)
    missing = experiment is not None and experiment not in names
    exp0 = experiment if experiment in names else DEFAULT if DEFAULT in names else (names[0] if names else None)
    found0 = _safe_curves(root, exp0) if exp0 else {}
    metric0, sel0 = defaults(exp0, found0)
    controls = {
        "experiment": B.dropdown("experiment", names, exp0),
        "metric": B.dropdown("metric", metrics(found0), metric0),
        "curves": W.SelectMultiple(options=curve_options(found0, metric0), value=sel0, rows=8, description="curves",
                                   style=B.STYLE, layout=W.Layout(width="620px")),
    }

    applying = []  # non-empty while apply() sets the controls: on_metric must not answer that

    def apply(updates):  # set options and values with one recomputation, by the explorer's own observer
        applying.append(True)
        try:
            with ex.quiet():
                for w, options, value in updates:
                    w.options, w.value = options, value
        finally:
            applying.pop()

    def on_experiment(change):  # new experiment: its metrics, and its default overlay
        found = _safe_curves(root, change["new"]) if change["new"] else {}
        metric, sel = defaults(change["new"], found)
        m, c = controls["metric"], controls["curves"]
        apply([(m, metrics(found), metric), (c, curve_options(found, metric), sel)])

    def on_metric(change):  # new metric: keep the selected paths that have it
        if applying:
            return
        exp, c = controls["experiment"].value, controls["curves"]
        found = _safe_curves(root, exp) if exp else {}
        kept = {found[v].path for v in c.value if v in found}
        opts = curve_options(found, change["new"])
        sel = [v for _, v in opts if found[v].path in kept] or defaults(exp, found)[1]
        apply([(c, opts, tuple(v for v in sel if v in dict(opts).values()))])

    controls["experiment"].observe(on_experiment, names="value")  # runs before the explorer's observer
    controls["metric"].observe(on_metric, names="value")
    intro = ("Curves saved by <code>make reproduce</code> (no re-training): pick an experiment, a metric and "
             "curves (ctrl/shift-click for several); lines are the mean over seeds, bands the min-max."
             + (f" <b>{experiment} has no saved curves under {root}</b> (run <code>fldp reproduce --only "
                f"{experiment}</code>); showing {exp0}." if missing else ""))
    ex = B.Explorer("results", "Results browser", controls,
                    lambda **v: compute(**v, root=root), draw, intro=intro, figsize=(10, 4.0), columns=1)
    return ex
