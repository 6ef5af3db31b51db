"""Small plotting helpers shared by the notebooks (matplotlib only)."""
from __future__ import annotations

import numpy as np


def mean_band(ax, x, runs, label=None, **kw):
    """Plot the mean of ``runs`` (seeds x points) against ``x`` with a min-max band.

    ``runs`` may also be a summary of :func:`fldp.results.over_seeds` (its ``"runs"`` are
    used).  With a single run only the line is drawn.  Returns the mean.
    """
    if isinstance(runs, dict):
        runs = runs["runs"]
    runs = np.atleast_2d(np.asarray(runs, dtype=float))
    mean = runs.mean(axis=0)
    (line,) = ax.plot(x, mean, label=label, **kw)
    if runs.shape[0] > 1:
        ax.fill_between(x, runs.min(axis=0), runs.max(axis=0), color=line.get_color(), alpha=0.2, lw=0)
    return mean
