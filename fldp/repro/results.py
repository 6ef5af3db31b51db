"""A notebook's record: its numbers, figures and claim verdicts (:class:`Recorder`), and another
notebook's saved results (:func:`load`).

A notebook makes one :class:`Recorder`, adds the numbers behind each figure, records every claim it
tests with a verdict that can be false, saves its figures, and calls :meth:`Recorder.save` at the
end; where the files go in each mode, and how they are written, is :mod:`fldp.repro.paths`.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Optional

from fldp import counting
from fldp.repro import archive, cost, store
from fldp.repro.paths import (PROJECT_ROOT, PUBLISH_ENV, atomic_write_bytes, atomic_write_json, interactive,
                              output_root, results_path, strict)

__all__ = ["ResultsNotFound", "load", "SavedFigure", "Recorder"]

class ResultsNotFound(FileNotFoundError):
    """Another notebook's results are missing (or from the other mode): run that notebook first."""


def load(paper: str, notebook: str, *, quick: bool) -> dict:
    """The results another notebook saved with :meth:`Recorder.save`, in the same mode.

    Reads :func:`results_path` (same output root, so ``$FLDP_OUTPUT_DIR`` is honoured; an
    interactive run reads ``build/interactive`` first, then the committed ``results/``) and
    returns the saved dict: ``paper``, ``notebook``, ``quick``, ``params``, ``claims``,
    ``figures`` and ``data`` (what the notebook passed to ``rec.add``).  Raises
    :class:`ResultsNotFound` naming the notebook to run first when the file is missing or
    was written in the other mode (quick vs full).
    """
    path = results_path(paper, notebook, quick=quick)
    if interactive(quick) and not path.exists():
        path = PROJECT_ROOT / "results" / paper / f"{notebook}.json"
    mode = "quick" if quick else "full"
    run = f"fldp reproduce {'--quick ' if quick else ''}--only {paper}/{notebook}"
    if not path.exists():
        raise ResultsNotFound(f"no results of {paper}/{notebook} ({mode} mode) at {path}: "
                              f"run that notebook first (`{run}`)")
    saved = json.loads(path.read_text(encoding="utf-8"))
    if bool(saved.get("quick")) != bool(quick):
        raise ResultsNotFound(f"{path} holds {paper}/{notebook} results of the other mode "
                              f"(quick={saved.get('quick')}), not {mode} mode: run `{run}` first")
    return saved


class SavedFigure(type(Path())):
    """The path of a figure :meth:`Recorder.savefig` wrote.  In a notebook it shows as the
    figure itself (a Markdown image linked relative to the notebook's folder, the kernel's
    working directory) and never as a second display when it ends a cell (savefig already
    showed it, or the inline backend did)."""

    def _repr_markdown_(self) -> str:
        link = Path(os.path.relpath(self, os.getcwd())).as_posix()
        return f"![{self.stem}]({link})"

    def _ipython_display_(self) -> None:  # shown once, by savefig (or by the inline backend)
        pass


def _kernel_without_inline_figures() -> bool:
    """Whether this runs in a Jupyter kernel whose matplotlib backend shows no figure by itself
    (``Agg``, as under ``fldp reproduce``; not the inline or widget backends of JupyterLab)."""
    import sys

    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return False
    import matplotlib
    return matplotlib.get_backend().lower() == "agg"


class Recorder:
    """Collects one notebook's numbers, figures and claim verdicts.

    >>> rec = Recorder("wei2020", "02_global_dp", quick=True, params={"seed": 0})
    >>> rec.add("sigma_D", {"T": [10, 20], "sigma": [0.0, 0.01]})
    >>> rec.claim("Lemma 1", "measured sensitivity <= 2C/m", kind="paper", source="Lemma 1, eq. (8)",
    ...           setting="paper", verdict=verdicts.holds_if(0.93 <= 1), measured={"max_ratio": 0.93},
    ...           falsifier="a measured sensitivity above 2C/m")
    """

    def __init__(self, paper: str, notebook: str, *, quick: bool, params: dict | None = None):
        self.paper, self.notebook, self.quick = paper, notebook, bool(quick)
        self.params = dict(params or {})
        self.root = output_root(self.quick)
        if interactive(self.quick):
            print(f"interactive run: results and figures go to {self.root} (the committed results/ and "
                  f"figures/ are written only by a full-mode `fldp reproduce`, or with {PUBLISH_ENV}=1)")
        self.data: dict[str, Any] = {}
        self.claims: list[dict[str, Any]] = []
        self.figures: list[str] = []
        self.findings: list[str] = []
        self.timing_keys: set[str] = set()
        self._t0 = time.time()
        self._cpu = counting.cpu_mark()

    @property
    def figure_dir(self) -> Path:
        return self.root / "figures" / self.paper

    @property
    def results_path(self) -> Path:
        return self.root / "results" / self.paper / f"{self.notebook}.json"

    @property
    def costs_path(self) -> Path:
        """``results/costs/<paper>/<notebook>.json``: the runs this notebook needs and what each cost
        (:func:`fldp.repro.store.manifest`), and its own time outside them; the plan of ``fldp reproduce``."""
        return self.root / "results" / "costs" / self.paper / f"{self.notebook}.json"

    @property
    def archive_path(self) -> Path:
        """``results/archive/<paper>/<notebook>.jsonl``: the runs behind this notebook's numbers,
        numbers only (:mod:`fldp.repro.archive`)."""
        return self.root / "results" / "archive" / self.paper / f"{self.notebook}.jsonl"

    def add(self, key: str, value: Any) -> None:
        """Store the numbers behind a figure or table under ``key``.  Returns nothing, so that a
        cell ending with it shows nothing (the numbers are often long; the figure shows them)."""
        self.data[key] = value

    def finding(self, text: str) -> str:
        """Record one sentence of what this notebook found, its numbers formatted from the
        computed values (never typed in by hand); prints it; returns it.  ``fldp report`` shows
        the findings in REPORT.md, and the book under the chapter's verdicts and in its part
        page's findings blocks (:mod:`fldp.repro.book`), so that no result number of the book can go
        stale against ``results/``."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"finding: text={text!r} must be a non-empty sentence")
        text = " ".join(text.split())
        self.findings.append(text)
        print(f"[FINDING] {text}")
        return text

    def claim(self, claim: Any, statement: str = "", *, kind: str = "", setting: str = "", verdict: Any = None,
              falsifier: str = "", source: str = "", setting_note: str = "", reason: str | None = None,
              measured: Any = None, expected: Any = None, note: str = "", detail: str = "", **old: Any) -> str:
        """Record one claim of the register with its verdict; prints it; returns the verdict's
        label (``holds``, ``fails`` or ``inconclusive: <reason>``).

        ``claim``: a :class:`fldp.verdicts.Claim` from its paper's catalogue
        (``fldp/papers/<p>/claims.py``), which carries the fixed text (statement, kind, source,
        setting, setting note, falsifier, minimum material effect); ``detail`` adds what is known
        only at execution to its setting note (e.g. the number of seeds).  The older form gives
        an id and the fixed text here: ``kind`` ``paper`` (with ``source``), ``derived`` or
        ``diagnostic``; ``setting`` ``paper``, ``reduced`` or ``reading`` (with
        ``setting_note``); ``falsifier``.  ``verdict``: a :class:`fldp.verdicts.Verdict`, or
        ``"holds"`` / ``"fails"`` / ``"inconclusive"`` (with ``reason``).  The verdict must be
        computed from the measurement: a ``fails`` is a finding, not an error, so this never
        raises for it.  The oldest form (``passed=``) raises, so that no claim is left untagged.
        """
        from fldp import verdicts as V

        if isinstance(claim, V.Claim):
            fixed = (statement, kind, setting, falsifier, source, setting_note)
            if any(str(f).strip() for f in fixed):
                raise TypeError(f"Recorder.claim({claim.id!r}): the catalogue entry carries the fixed text; give "
                                "only verdict=, measured=, expected=, note= and detail=")
            entry_claim = claim
        else:
            entry_claim = None
        claim_id = claim.id if entry_claim else str(claim)
        if old:
            raise TypeError(f"Recorder.claim({claim_id!r}) got {sorted(old)}: the old form (passed=) is gone; "
                            "give kind=, setting=, verdict= and falsifier= (see fldp.verdicts)")
        if verdict is None:
            raise TypeError(f"Recorder.claim({claim_id!r}) needs verdict= (a fldp.verdicts.Verdict, or 'holds', "
                            "'fails', 'inconclusive' with reason=)")
        if entry_claim is None:
            entry_claim = V.Claim(claim_id, statement, kind=kind, setting=setting, falsifier=falsifier,
                                  source=source, setting_note=setting_note)
        cat = entry_claim
        statement, kind, setting, falsifier, source = cat.statement, cat.kind, cat.setting, cat.falsifier, cat.source
        repeated = [part.strip() for part in str(cat.setting_note).split(";")
                    if len(part.strip()) >= 20 and part.strip() in str(detail)]
        if repeated:
            raise ValueError(f"claim {claim_id!r}: detail= repeats the catalogue's setting note ({repeated[0]!r}); "
                             "give detail= only what is known at execution")
        setting_note = "; ".join(x for x in (cat.setting_note, detail) if str(x).strip())
        if not isinstance(verdict, V.Verdict):
            verdict = V.Verdict(str(verdict), reason)
        elif reason is not None and reason != verdict.reason:
            raise ValueError(f"claim {claim_id!r}: reason={reason!r} contradicts the verdict's {verdict.reason!r}")
        entry = {"id": claim_id, "statement": statement, "kind": kind, "source": source,
                 "setting": setting, "setting_note": setting_note, **({"min_effect": cat.min_effect, "units": cat.units}
                                                                      if cat.min_effect is not None else {}),
                 "verdict": verdict.verdict,
                 "reason": verdict.reason, "why": verdict.why, "falsifier": falsifier,
                 "measured": strict(measured), "expected": strict(expected), "note": note,
                 "stats": strict(dict(verdict.stats))}
        if any(c["id"] == claim_id for c in self.claims):
            raise ValueError(f"claim {claim_id!r} is recorded twice in {self.paper}/{self.notebook}: one cause is "
                             "one claim (give it several measurements)")
        self.claims.append(entry)
        print(f"[{verdict.label.upper()}] {claim_id} ({kind}, setting: {setting}): {statement}")
        for key in ("source", "setting_note", "why", "falsifier"):
            if entry[key]:
                print(f"        {key}: {entry[key]}")
        if measured is not None:
            print(f"        measured: {entry['measured']}")
        if expected is not None:
            print(f"        expected: {entry['expected']}")
        if note:
            print(f"        note: {note}")
        return verdict.label

    def savefig(self, fig, name: str, dpi: int = 130) -> Path:
        """Save a matplotlib figure as ``<figure_dir>/<name>.png`` atomically; returns its path.

        In a kernel whose matplotlib backend draws nothing into the notebook (``fldp reproduce``
        runs with ``MPLBACKEND=Agg``), the cell also shows the saved PNG, as a Markdown image
        linked relative to the notebook (:class:`SavedFigure`): the executed notebook then shows
        every figure without holding a second copy of it, and the book renders the file."""
        import io

        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
        path = SavedFigure(self.figure_dir / f"{name}.png")
        atomic_write_bytes(path, buf.getvalue())
        rel = str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path)
        if rel not in self.figures:
            self.figures.append(rel)
        if _kernel_without_inline_figures():
            from IPython.display import display
            display({"text/markdown": path._repr_markdown_(), "text/plain": f"figure {rel}"}, raw=True)
        return path

    def _cost_record(self) -> dict:
        """This notebook's cost record as its last execution wrote it (``{}`` when there is none)."""
        try:
            record = json.loads(self.costs_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return record if isinstance(record, dict) else {}

    def _manifest(self, before: dict) -> list[dict]:
        """The runs this notebook used (:func:`fldp.repro.store.manifest`), where a run was read from
        the run archive, which keeps no timings, with the seconds, CPU seconds and work that this
        notebook's cost record kept for the same run: re-executing from the archive rewrites neither
        the archive nor the costs of the runs.  Sorted by function and configuration, as the archive
        is by key: the order runs finish in (which varies with the workers) does not reorder the record.
        ``before``: the cost record as the last execution wrote it."""
        runs = sorted(store.manifest(), key=store.manifest_key)
        if not any(r.get("archived") for r in runs):
            return runs
        known = {store.manifest_key(r): r for r in before.get("runs", []) if isinstance(r, dict) and "fn" in r and "config" in r}
        for r in runs:
            if r.pop("archived", False):
                old = known.get(store.manifest_key(r))
                if old is not None:
                    r.update(seconds=old.get("seconds", 0.0), cpu_s=old.get("cpu_s"), work=old.get("work"))
        return runs

    def timings(self, *keys: str) -> None:
        """Declare that the values under these keys (at any depth of ``data`` and the claims) are
        wall-clock measurements of this machine, which a re-execution changes: saved as
        ``timing_keys``, and ``fldp compare`` leaves them aside as it does ``wall_time_s``."""
        bad = [k for k in keys if not isinstance(k, str) or not k]
        if bad:
            raise ValueError(f"keys: each a non-empty string, got {bad!r}")
        self.timing_keys.update(keys)

    def _runs_environment(self, runs: dict, before: Optional[dict]) -> dict:
        """The environment the notebook's runs were computed in (:func:`fldp.repro.archive.environment`),
        which ``fldp store verify`` holds them to: this one where this execution computed them all;
        the recorded one where it computed none (read back from the store or the archive, they
        keep the environment they were computed in); this one marked ``partly`` where it computed
        some and read the rest back from another environment.  ``before``: the environment the
        cost record kept (None: none)."""
        here = archive.environment()
        if not runs.get("ran") and before:
            return before
        if runs.get("ran") and runs.get("reused") and before != here:
            return {**here, "partly": "some runs were computed in another environment"}
        return here

    def save(self) -> Path:
        """Write ``results/<paper>/<notebook>.json`` atomically and print a summary."""
        payload = {
            "paper": self.paper, "notebook": self.notebook, "quick": self.quick,
            "params": self.params, "wall_time_s": round(time.time() - self._t0, 3),
            "figures": self.figures, "findings": self.findings, "claims": self.claims, "data": self.data,
        }
        if self.timing_keys:
            payload["timing_keys"] = sorted(self.timing_keys)
        before = self._cost_record()  # read once: the runs' costs and environment it kept
        runs, manifest = store.usage(), self._manifest(before)
        if runs["ran"] or runs["reused"]:  # the runs behind the numbers: computed here or read back
            seconds = sum(r["seconds"] for r in manifest)  # archived runs' from the cost record
            payload["runs"] = {**runs, "seconds": round(seconds, 3), "waited": round(runs["waited"], 3)}
        atomic_write_json(self.results_path, payload)
        wall = payload["wall_time_s"]
        atomic_write_json(self.costs_path, {  # the notebook's own time, runs aside: wall and CPU seconds
            "paper": self.paper, "notebook": self.notebook, "quick": self.quick, "wall_time_s": wall,
            "kernel_s": round(max(0.0, wall - runs.get("waited", 0.0)), 3),
            "kernel_cpu_s": round(counting.own_cpu_s(self._cpu), 3), "runs": manifest,
            "calibration": (lambda c: c.as_dict() if c else None)(cost.cached_calibration()),
            "environment": self._runs_environment(runs, before.get("environment"))})
        used = store.used_runs()
        if used:  # the raw runs behind the numbers, without timings (fldp.repro.archive)
            archive.write(self.archive_path, used)
        manifest = os.environ.get("FLDP_RUN_MANIFEST")  # set by `fldp reproduce`
        if manifest:
            with open(manifest, "a", encoding="utf-8") as fh:
                fh.write(f"{self.results_path.resolve()}\n")
        tally = {v: sum(c["verdict"] == v for c in self.claims) for v in ("holds", "fails", "inconclusive")}
        print(f"saved {self.results_path} ({len(self.claims)} claims: " + ", ".join(f"{n} {v}" for v, n in tally.items())
              + f"; {len(self.figures)} figures)")
        return self.results_path
