"""Time every explorer's redraw (``fldp.teach.widgets``): one update = compute + table + figure.

    .venv/bin/python benchmarks/widget_bench.py [--repeats 5] [--only TITLE] [--out build/bench/widget_bench.json]

Each explorer of :func:`fldp.teach.widgets.all_explorers` (the tabs of ``notebooks/explore.ipynb``) is
moved to a few settings: its defaults, every slider at its minimum, every slider at its maximum
(dropdowns as they are), and settings named below (the adaptive-noise explorer's costliest and
cheapest corners; every experiment of the results browser).  For each setting the first update
(cold: caches of the theory functions empty for new values) and then ``--repeats`` further
updates are timed by the explorer's own clock (``Explorer.seconds``: ``compute`` + table +
``draw`` to PNG, the wall time a user waits after moving a slider, without the browser's
round trip, which ``tests/test_explore_browser.py`` records in
``build/explore_browser_timing.json``).  Printed: one line per (explorer, setting) with the
cold time, the best and the median of the repeats, and what the update showed ("figure", or
"range message" when the inputs are outside a formula's range and only a message is shown).

The tests assert what the explorers show, never how fast (a shared machine makes timed tests
flaky); this script is where speed is measured.  The machine's load is printed with the table.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import ipywidgets as W
import matplotlib

from engine_bench import load  # the machine's load line, shared by the bench scripts
from fldp.teach import widgets

#: settings beyond defaults / all-min / all-max, by tab title
NAMED = {
    "Adaptive noise": {
        "costliest corner": dict(c=100.0, K=100, dropout=0.45, p=-3.0, d=1e6, rho=0.0),
        "cheapest corner": dict(c=0.1, K=2, dropout=0.0, p=3.0, d=2, rho=1.0),
    },
}


def slider_ends(ex) -> tuple:
    """(every slider at its min, every slider at its max); a log slider's bounds are exponents."""
    lo, hi = {}, {}
    for key, w in ex.controls.items():
        if isinstance(w, W.FloatLogSlider):
            lo[key], hi[key] = w.base ** w.min, w.base ** w.max
        elif isinstance(w, (W.IntSlider, W.FloatSlider)):
            lo[key], hi[key] = w.min, w.max
    return lo, hi


def settings(title: str, ex) -> dict:
    out = {"defaults": {}}
    lo, hi = slider_ends(ex)
    if lo:
        out["all sliders at min"], out["all sliders at max"] = lo, hi
    out.update(NAMED.get(title, {}))
    if title == "Results browser":
        out.update({f"experiment {e}": {"experiment": e} for e in ex.controls["experiment"].options})
    return out


def time_setting(ex, values: dict, repeats: int) -> dict:
    if values:
        ex.set(**values)
    else:
        ex.update()
    cold = ex.seconds
    shown = "internal error" if ex.error else ("range message" if "error" in ex.state else "figure")
    warm = []
    for _ in range(repeats):
        ex.update()
        warm.append(ex.seconds)
    return {"cold_s": cold, "best_s": min(warm) if warm else cold,
            "median_s": statistics.median(warm) if warm else cold, "shown": shown}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="warm updates per setting (best and median kept)")
    ap.add_argument("--only", default=None, help="one explorer, by tab title (e.g. 'Adaptive noise')")
    ap.add_argument("--out", type=Path, default=Path("build/bench/widget_bench.json"))
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    print(f"# fldp widget benchmark  {time.strftime('%Y-%m-%d %H:%M')}  {platform.node()}  "
          f"matplotlib {matplotlib.__version__} ({matplotlib.get_backend()}), repeats {args.repeats}, {load()}")
    t0 = time.perf_counter()
    explorers = widgets.all_explorers()
    print(f"# building all explorers at their defaults (first draw included): {time.perf_counter() - t0:.2f} s")
    if args.only is not None:
        if args.only not in explorers:
            ap.error(f"--only {args.only!r}: the explorers are {list(explorers)}")
        explorers = {args.only: explorers[args.only]}
    rows = []
    head = f"{'explorer':<16} {'setting':<46} {'cold s':>7} {'best s':>7} {'median s':>8}  shown"
    print(head)
    print("-" * len(head))
    for title, ex in explorers.items():
        for name, values in settings(title, ex).items():
            r = time_setting(ex, values, args.repeats)
            rows.append({"explorer": title, "setting": name, **r})
            print(f"{title:<16} {name[:46]:<46} {r['cold_s']:>7.3f} {r['best_s']:>7.3f} {r['median_s']:>8.3f}  "
                  f"{r['shown']}", flush=True)
    worst = max(rows, key=lambda r: r["median_s"])
    print(f"# slowest (median): {worst['explorer']}, {worst['setting']}: {worst['median_s']:.3f} s; "
          f"{load()} at the end; total {time.perf_counter() - t_start:.0f} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M"), "repeats": args.repeats,
                                    "load": load(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
