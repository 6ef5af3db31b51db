"""Small plotting helpers shared by the notebooks (matplotlib only)."""
from __future__ import annotations

import math
import warnings

import numpy as np

__all__ = ["mean_band", "final_bars", "REFERENCE_STYLES", "reference_lines", "markdown_table", "plain_log_ticks",
           "symlog_limits"]


def mean_band(ax, x, runs, label=None, *, band_alpha: float = 0.2, skip_nan: bool = False, **kw):
    """Plot the mean of ``runs`` (seeds x points) against ``x`` with a min-max band.

    ``runs`` may also be a summary of :func:`fldp.verdicts.over_seeds` (its ``"runs"`` are
    used).  With a single run only the line is drawn.  A curve of one point (a run of one
    round, say) is drawn as a marker with a min-max error bar, since a line of one point is
    invisible.  A NaN point makes the mean NaN there (a gap), unless ``skip_nan``: then the seeds
    that have a value make the mean and the band (say in the label which seeds stopped).
    Returns the mean (the line drawn is ``ax.lines[-1]``).
    """
    if isinstance(runs, dict):
        runs = runs["runs"]
    runs = np.atleast_2d(np.asarray(runs, dtype=float))
    if skip_nan:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column: NaN, no warning
            mean, lo, hi = np.nanmean(runs, axis=0), np.nanmin(runs, axis=0), np.nanmax(runs, axis=0)
    else:
        mean, lo, hi = runs.mean(axis=0), runs.min(axis=0), runs.max(axis=0)
    if mean.size == 1:
        err = np.array([[mean[0] - lo[0]], [hi[0] - mean[0]]])
        ax.errorbar(np.atleast_1d(x), mean, yerr=err, fmt="o", capsize=3, label=label, **kw)
        return mean
    (line,) = ax.plot(x, mean, label=label, **kw)
    if runs.shape[0] > 1:
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=band_alpha, lw=0)
    return mean


def final_bars(ax, x, summaries, key, label=None, **kw):
    """Plot each summary's mean final ``key`` (one summary of :func:`fldp.verdicts.over_seeds`
    per point of ``x``) with a min-max error bar over the seeds, points joined by a line.
    Returns the means."""
    m = np.array([float(np.asarray(r[key]["mean"]).ravel()[-1]) for r in summaries])
    lo = np.array([float(np.asarray(r[key]["min"]).ravel()[-1]) for r in summaries])
    hi = np.array([float(np.asarray(r[key]["max"]).ravel()[-1]) for r in summaries])
    ax.errorbar(x, m, yerr=[m - lo, hi - m], capsize=3, marker="o", label=label, **kw)
    return m


#: How a private curve's references are drawn beside it, in its colour: the same runs without
#: noise and without clipping, and with the clipping but no noise (what clipping alone costs).
REFERENCE_STYLES = {"non-private": "--", "clipped, no noise": ":"}


def reference_lines(ax, x, refs, key, color=None):
    """Draw a private curve's references (``refs``: kind of :data:`REFERENCE_STYLES` -> one summary
    of :func:`fldp.verdicts.over_seeds` per point of ``x``) as the mean final ``key``, thin, in
    ``color`` (default: the colour of the last line drawn), dashed or dotted by kind.  Returns the
    means by kind."""
    color = color or ax.get_lines()[-1].get_color()
    out = {}
    for kind, summaries in refs.items():
        out[kind] = [float(np.asarray(r[key]["mean"]).ravel()[-1]) for r in summaries]
        ax.plot(x, out[kind], ls=REFERENCE_STYLES[kind], color=color, lw=1.2)
    return out


def markdown_table(rows, digits: int = 4) -> str:
    """A list of dicts (one per row, the first row's keys as columns) as a Markdown table;
    floats to ``digits`` significant digits.  Show it in a notebook with
    ``IPython.display.Markdown(markdown_table(rows))``."""
    rows = list(rows)
    if not rows:
        return "(no rows)"
    cols = list(rows[0])

    def fmt(v):
        if isinstance(v, (float, np.floating)):
            return f"{float(v):.{digits}g}"
        return str(v)

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def plain_log_ticks(axis) -> None:
    """Plain-number tick labels (0.3, 2, 10) on a log ``axis`` (e.g. ``ax.yaxis``) instead of
    matplotlib's 3x10^-1 form; minor ticks are labelled where the axis spans under two decades
    (matplotlib's ``LogFormatter`` thresholds), so a narrow range still reads."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):  # LogFormatter picks which ticks to label; the label is a plain number
        def _num_to_string(self, x, vmin, vmax):
            return f"{x:.3g}"

    axis.set_major_formatter(Plain(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    axis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def symlog_limits(ax, values, *, linthresh: float, factor: float = 3.0) -> None:
    """Set the y limits of a symlog axis so that ``values`` (everything drawn, bands included)
    lie inside the frame: each end moved ``factor`` times away from 0 beyond the linear
    region, or to +-``linthresh`` inside it (matplotlib's own margins leave a curve on the edge)."""
    parts = values if isinstance(values, (list, tuple)) else [values]
    v = np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in parts])
    v = v[np.isfinite(v)]
    if not v.size:
        return
    pad = lambda x: x * factor if abs(x) > linthresh else math.copysign(linthresh, x) if x else linthresh  # noqa: E731
    ax.set_ylim(min(pad(v.min()), -linthresh), max(pad(v.max()), linthresh))
