"""The results of a reproduction against the committed ones: ``fldp compare [REF]``.

After ``make reproduce`` every ``results/**/*.json`` is rewritten; ``git status`` then shows them all
changed, because each records its wall time and the run-store usage behind it. This compares what
matters, every other field, exactly (a chapter that measures wall time names its timing keys,
``timing_keys``, and those are left aside too), with the file as committed at a git revision (default
``HEAD``), and names per file the verdicts that changed, how many values differ, the largest relative
difference and the first few places. Git is asked for the committed text (``git show REF:path``):
the comparison is of JSON values, not of lines, so a re-ordered or re-indented file is equal."""
from __future__ import annotations

import json
import math
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from fldp.repro import verify
from fldp.repro.paths import PROJECT_ROOT
from fldp.repro.report import results_files

__all__ = ["IGNORED", "Comparison", "differences", "verdict_changes", "compare"]

IGNORED = frozenset({"wall_time_s", "runs"})  # wall clock; the run-store usage (how many runs were stored)


def differences(a: Any, b: Any, where: str = "", *, ignore: frozenset = IGNORED) -> list[tuple[str, Any, Any]]:
    """Every place two results files differ (:func:`fldp.repro.verify.differences`), the wall-clock
    and run-usage keys (``ignore``) aside."""
    return list(verify.differences(a, b, where, ignore=ignore))


def _relative(a: Any, b: Any) -> Optional[float]:
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        scale = max(abs(a), abs(b))
        if math.isfinite(scale) and scale > 0:
            return abs(a - b) / scale
    return None


def verdict_changes(old: dict, new: dict) -> list[str]:
    """The claims whose verdict or reason differ between two results files, as lines."""
    def table(d):
        return {c.get("id"): (c.get("verdict"), c.get("reason")) for c in d.get("claims", []) if isinstance(c, dict)}

    before, after = table(old), table(new)
    lines = []
    for cid in sorted(set(before) | set(after), key=str):
        b, a = before.get(cid), after.get(cid)
        if b != a:
            def show(v):
                return "absent" if v is None else v[0] + (f" ({v[1]})" if v[1] else "")
            lines.append(f"{cid}: {show(b)} -> {show(a)}")
    return lines


@dataclass
class Comparison:
    """One results file against its committed version."""

    path: str                       # relative to the project root
    status: str                     # "equal", "differs", "new" (not in REF), "unreadable"
    verdicts: list[str] = field(default_factory=list)
    diffs: list[tuple[str, Any, Any]] = field(default_factory=list)
    timings: int = 0                # values under the file's declared timing keys that differ (left aside)

    @property
    def max_relative(self) -> Optional[float]:
        rel = [r for _, a, b in self.diffs if (r := _relative(a, b)) is not None]
        return max(rel) if rel else None

    def lines(self, first: int = 3) -> list[str]:
        aside = f" ({self.timings} timing value(s) aside)" if self.timings else ""
        if self.status != "differs":
            return [f"{self.status:<9} {self.path}{aside}"]
        rel = self.max_relative
        head = (f"differs   {self.path}: {len(self.diffs)} value(s)"
                + (f", largest relative difference {rel:.1e}" if rel is not None else "")
                + (f"; verdicts changed: {len(self.verdicts)}" if self.verdicts else "; verdicts unchanged") + aside)
        out = [head] + [f"    verdict {v}" for v in self.verdicts]
        for where, a, b in self.diffs[:first]:
            out.append(f"    {where or '(the file)'}: {_short(a)} -> {_short(b)}")
        if len(self.diffs) > first:
            out.append(f"    ... and {len(self.diffs) - first} more")
        return out


def _short(v: Any, width: int = 70) -> str:
    text = repr(v)
    return text if len(text) <= width else text[:width - 3] + "..."


def _committed(rel: str, ref: str, root: Path) -> Optional[str]:
    done = subprocess.run(["git", "show", f"{ref}:{rel}"], cwd=root, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def check_ref(ref: str, root: Path = PROJECT_ROOT) -> Optional[str]:
    """None when ``ref`` names a commit of the repository at ``root``, else why not (git's words)."""
    done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=root,
                          capture_output=True, text=True)
    if done.returncode == 0:
        return None
    return f"{ref!r} is not a commit of the repository at {root}"


def compare(results_dir: Path, *, ref: str = "HEAD", only: Sequence[str] = (),
            root: Path = PROJECT_ROOT) -> list[Comparison]:
    """Each results file under ``results_dir`` (the run store, cost records and archive aside) whose
    path contains one of ``only`` (all when empty), compared with its version at ``ref``."""
    out = []
    for path in results_files(results_dir):
        rel = path.resolve().relative_to(root.resolve()).as_posix()
        if only and not any(o in rel for o in only):
            continue
        text = _committed(rel, ref, root)
        if text is None:
            out.append(Comparison(rel, "new"))
            continue
        try:
            old, new = json.loads(text), json.loads(path.read_text())
        except (OSError, ValueError):
            out.append(Comparison(rel, "unreadable"))
            continue
        timing = frozenset(old.get("timing_keys", [])) | frozenset(new.get("timing_keys", []))
        diffs = differences(old, new, ignore=IGNORED | timing)
        aside = len(differences(old, new)) - len(diffs) if timing else 0
        out.append(Comparison(rel, "differs" if diffs else "equal", verdict_changes(old, new), diffs, aside))
    return out
