"""What each notebook of the last full reproduction cost, and what the cost model predicted.

    python benchmarks/cost_table.py [--quick] [--write]

Reads the cost records that a full-mode ``fldp reproduce`` writes (``results/costs/<paper>/
<notebook>.json``: the runs each notebook needed, each with the seconds it took when it was
computed and the engine's work in FLOPs, and the notebook's own time outside its runs) and prints
per notebook: runs, FLOPs, measured seconds (the runs' CPU time, one thread each, or their wall
time where it was not kept, plus the notebook's own time), achieved GFLOP/s and % of the one-thread float32 roofline, and the cost
model's prediction (``fldp.repro.cost``, calibrated on this machine) beside the measured time of the
same runs.  Runs that train nothing (accountants, Monte Carlo) or were stored before work was
counted have no FLOPs and are predicted by their own last time, so they are left out of the
predicted-vs-measured column.  ``--write`` also puts the table into ``book/guide/performance.md``
between its ``cost table`` markers.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
import engine_bench as eb  # noqa: E402

from fldp import counting  # noqa: E402
from fldp.repro import cost  # noqa: E402
from fldp.repro.report import duration  # noqa: E402

BEGIN, END = "<!-- cost table: benchmarks/cost_table.py --write -->", "<!-- end of cost table -->"


def _spent(run: dict) -> float:
    """A run's measured cost: its CPU seconds (one thread; not inflated by other processes on the
    cores), else its wall seconds (runs stored before CPU time was kept)."""
    return float(run.get("cpu_s") or run.get("seconds") or 0.0)


def rows(costs_dir: Path, cal: cost.Calibration, roof1: float) -> tuple[list[dict], dict]:
    out, total = [], {"runs": 0, "flops": 0, "seconds": 0.0, "kernel": 0.0, "pred": 0.0, "meas": 0.0}
    for path in sorted(costs_dir.glob("*/*.json")):
        rec = json.loads(path.read_text(encoding="utf-8"))
        runs = rec.get("runs", [])
        counted = [r for r in runs if r.get("work")]
        flops = sum(counting.total_flops(r["work"]) for r in counted)
        run_s = sum(_spent(r) for r in runs)
        counted_s = sum(_spent(r) for r in counted)
        pred = sum(cal.seconds(r["work"]) for r in counted)
        row = {"notebook": f"{path.parent.name}/{path.stem}", "runs": len(runs), "counted": len(counted),
               "flops": flops, "run_s": run_s, "kernel_s": float(rec.get("kernel_cpu_s", rec.get("kernel_s")) or 0),
               "gflops": flops / counted_s / 1e9 if counted_s else math.nan,
               "pred": pred, "meas": counted_s}
        row["roof"] = 100 * row["gflops"] / roof1 if counted_s else math.nan
        out.append(row)
        total["runs"] += len(runs)
        total["flops"] += flops
        total["seconds"] += run_s + row["kernel_s"]
        total["kernel"] += row["kernel_s"]
        total["pred"] += pred
        total["meas"] += counted_s
    return out, total


def table(out: list[dict], total: dict, roof1: float, cal: cost.Calibration) -> str:
    lines = ["| notebook | runs (with FLOPs) | GFLOP | runs' time | own time | GFLOP/s | % of roofline | "
             "predicted / measured (runs with FLOPs) |", "|---|---|---|---|---|---|---|---|"]
    for r in out:
        ratio = f"{duration(r['pred'])} / {duration(r['meas'])} ({r['pred'] / r['meas']:.2f})" if r["meas"] else "-"
        lines.append(f"| {r['notebook']} | {r['runs']} ({r['counted']}) | {r['flops'] / 1e9:,.0f} | "
                     f"{duration(r['run_s'])} | {duration(r['kernel_s'])} | "
                     + (f"{r['gflops']:.1f} | {r['roof']:.0f} % | " if r["meas"] else "- | - | ") + ratio + " |")
    t = total
    lines.append(f"| **all** | {t['runs']} | {t['flops'] / 1e9:,.0f} | | {duration(t['kernel'])} | "
                 + (f"{t['flops'] / t['meas'] / 1e9:.1f} | {100 * t['flops'] / t['meas'] / 1e9 / roof1:.0f} % | "
                    f"{duration(t['pred'])} / {duration(t['meas'])} ({t['pred'] / t['meas']:.2f}) |" if t["meas"] else "- | - | - |"))
    rates = ", ".join(f"{k} {v:.3g}" for k, v in cal.rate.items())
    lines += ["", f"One-thread float32 roofline {roof1:.1f} GFLOP/s (2048 x 2048 matmul); every run computes on one "
              f"thread under `fldp reproduce`. Total compute {duration(t['seconds'])} (runs + notebooks' own time): "
              f"on 2 workers at best about {duration(t['seconds'] / 2)}. Cost model ({cal.machine.get('host')}, "
              f"calibrated at load {cal.load:.1f}): GFLOP/s {rates}; step s "
              + ", ".join(f"{k} {v * 1e3:.2g} ms" for k, v in cal.step_s.items()) + "; per parameter element "
              + ", ".join(f"{k} {v * 1e9:.2g} ns" for k, v in cal.elem_s.items()) + f"; run set-up {cal.run_s:.2f} s."]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the quick-mode records (build/quick/results/costs)")
    ap.add_argument("--write", action="store_true", help="also write the table into book/guide/performance.md")
    args = ap.parse_args(argv)
    costs_dir = (ROOT / "build" / "quick" if args.quick else ROOT) / "results" / "costs"
    if not costs_dir.is_dir():
        print(f"cost_table: no cost records in {costs_dir}: run `fldp reproduce` first", file=sys.stderr)
        return 2
    cal = cost.calibrate()
    torch.set_num_threads(1)
    roof1 = eb.roofline_gflops(5)
    out, total = rows(costs_dir, cal, roof1)
    text = (f"Cost of the last full reproduction's runs, from `results/costs/` "
            f"({time.strftime('%Y-%m-%d')}, {eb.load()}):\n\n" + table(out, total, roof1, cal))
    print(text)
    if args.write:
        page = ROOT / "book" / "guide" / "performance.md"
        body = page.read_text(encoding="utf-8")
        block = f"{BEGIN}\n{text}\n{END}"
        body = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda m: block, body, flags=re.S) \
            if BEGIN in body else body.rstrip("\n") + "\n\n## What the reproduction costs\n\n" + block + "\n"
        page.write_text(body, encoding="utf-8")
        print(f"written into {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
