"""What each notebook's fresh computation cost, beside what the plan predicted for it.

    python benchmarks/sittings.py [--ref REF] [--only PATTERN ...] [--markdown]

A full recomputation of the book is spread over sittings (``fldp reproduce --only ... --jobs 2``),
each rewriting the cost records (``results/costs/<paper>/<notebook>.json``) of the notebooks it ran.
For every notebook whose record changed since ``REF`` (it was executed since), this prints:

- **runs**: how many runs it uses, and of them how many its last execution computed (the others
  it read from the store or the archive);
- **work**: the CPU seconds (one thread each) of all its runs as they were measured when they were
  computed (an archived run keeps the timing of the sitting that computed it, so a notebook
  re-executed from the archive keeps its fresh cost), plus the notebook's own CPU time outside its
  runs: the single-thread work of a fresh computation, independent of the number of workers;
- **wall**: the notebook's wall time in its last execution (under ``--jobs 2`` its runs shared two
  workers with the other notebook running beside it; short when it read its runs back);
- **predicted**: what the plan predicted for the same runs before the sittings: the CPU (else wall)
  seconds of each run in the record at ``REF`` (default ``HEAD``, the record the plan read) plus that
  record's own kernel time. A notebook without a record at ``REF`` was "unknown" to the plan.

Only the records are read: nothing is timed here.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from fldp.repro.store import manifest_key

ROOT = Path(__file__).resolve().parent.parent
COSTS = ROOT / "results" / "costs"


def _fmt(s):
    if s is None:
        return "unknown"
    s = float(s)
    if s >= 3600:
        return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} min"
    return f"{int(s // 60)} min {s % 60:04.1f} s" if s >= 60 else f"{s:.1f} s"


def _run_s(r: dict) -> float:
    return float(r.get("cpu_s") or r.get("seconds") or 0.0)


def _at(ref: str, rel: str):
    done = subprocess.run(["git", "show", f"{ref}:{rel}"], cwd=ROOT, capture_output=True, text=True)
    return json.loads(done.stdout) if done.returncode == 0 else None


def rows(ref: str = "HEAD", only=()):
    out = []
    for path in sorted(COSTS.glob("*/*.json")):
        rel = path.relative_to(ROOT).as_posix()
        nb = path.relative_to(COSTS).with_suffix("").as_posix()
        if only and not any(o in nb for o in only):
            continue
        rec = json.loads(path.read_text())
        runs = rec.get("runs", [])
        ran = [r for r in runs if r.get("ran")]
        work = sum(_run_s(r) for r in runs) + float(rec.get("kernel_cpu_s") or rec.get("kernel_s") or 0.0)
        old = _at(ref, rel)
        if old == rec:  # not recomputed since REF
            continue
        predicted = None
        if old is not None:
            before = {manifest_key(r): _run_s(r) for r in old.get("runs", [])}
            known = [before.get(manifest_key(r)) for r in runs]
            if all(k is not None for k in known):
                predicted = sum(known) + float(old.get("kernel_cpu_s") or old.get("kernel_s") or 0.0)
        out.append((nb, len(runs), len(ran), work, float(rec["wall_time_s"]), predicted))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default="HEAD", help="the revision whose cost records the plan read (default HEAD)")
    ap.add_argument("--only", action="append", default=[], metavar="PATTERN")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = ap.parse_args(argv)
    table = rows(args.ref, args.only)
    if not table:
        print(f"no notebook's cost record changed since {args.ref}", file=sys.stderr)
        return 1
    head = ("notebook", "runs (computed)", "work (1 thread)", "wall", "predicted")
    lines = [(nb, f"{n} ({c})", _fmt(w), _fmt(wall), _fmt(p)) for nb, n, c, w, wall, p in table]
    total_w = sum(r[3] for r in table)
    known = [r for r in table if r[5] is not None]
    lines.append(("total", f"{sum(r[1] for r in table)} ({sum(r[2] for r in table)})", _fmt(total_w), "",
                  f"{_fmt(sum(r[5] for r in known))} for {len(known)} of {len(table)}"))
    if args.markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for ln in lines:
            print("| " + " | ".join(ln) + " |")
    else:
        widths = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head))]
        for ln in [head, *lines]:
            print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(ln, widths))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
