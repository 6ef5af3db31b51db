"""``REPORT.md``: the claims register, rendered from the committed full-mode results.

Every notebook saves ``results/<paper>/<notebook>.json`` with its claim verdicts
(:class:`fldp.repro.results.Recorder`).  :func:`render` turns all of them into one Markdown page a
reader can open without re-running anything: a summary per paper, then per notebook its
parameters, wall time, claims (one card each, :mod:`fldp.repro.cards`) and figures.  ``fldp report`` writes it (atomically),
``fldp report --check`` tells whether the committed ``REPORT.md`` is up to date.

The rendering is deterministic: it depends only on the results files (and on which of the
figures and notebooks they name exist), never on the clock or the machine, so the same
``results/`` always gives byte-identical ``REPORT.md``.  Quick-mode files are skipped (they
belong under ``build/quick/``); ``results/runs/`` is not read.  A file that cannot be read is
listed as a problem in the report, naming the file; so is a figure that is missing.
"""
from __future__ import annotations

import base64
import difflib
import html
import json
import math
import os
import platform
import re
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping, Sequence, TextIO

from fldp import papers
from fldp.repro import cards
from fldp.repro.execute import NotebookResult, Report, one_line
from fldp.repro.paths import PROJECT_ROOT, atomic_write_bytes

__all__ = [
    "DEFAULT_RESULTS_DIR", "DEFAULT_OUTPUT", "PAPER_ORDER", "PAPER_NAMES", "SIGNIFICANT_DIGITS",
    "SKIPPED_DIRS", "SETTING_NAMES", "migrated", "verdict_label", "tally", "tally_text",
    "legend_lines", "Entry", "Register", "paper_name",
    "results_files", "collect", "round_floats", "compact", "cell", "duration", "TITLE",
    "summary_lines", "kinds_text", "time_text", "render", "README_BEGIN", "README_END", "FINDINGS_BLOCK", "findings_lines", "fill_findings",
    "readme_with_summary", "write", "is_up_to_date", "run", "render_markdown", "render_html", "write_report"
]

DEFAULT_RESULTS_DIR = PROJECT_ROOT / "results"
DEFAULT_OUTPUT = PROJECT_ROOT / "REPORT.md"

#: Papers in the order the register lists them; any other paper follows, alphabetically.
#: The papers (as :data:`fldp.papers.PAPERS` orders them), then the chapters that are not a paper's.
PAPER_ORDER = (*papers.PAPERS, "benchmark")
PAPER_NAMES = {**papers.titles(), "benchmark": "Benchmark", "baseline": "FedAvg baseline (no DP)"}
#: Floats in the Measured and Expected columns are rounded to this many significant digits.
SIGNIFICANT_DIGITS = 4
SKIPPED_DIRS = ("runs", "costs", "archive")  # the run store (not committed); fldp.repro.cost's records; the run archive
_CELL_LIMIT = 160
_PARAMS_LIMIT = 600
SETTING_NAMES = cards.SETTING_NAMES


def migrated(claim: Mapping[str, Any]) -> bool:
    """Whether a saved claim has the register's form (kind, setting, verdict, falsifier);
    claims saved before it (``passed`` only) are listed as not yet migrated, never judged."""
    return cards._migrated(claim)


def verdict_label(claim: Mapping[str, Any]) -> str:
    """``holds``, ``fails``, ``inconclusive: <reason>``, or ``not migrated``."""
    return cards.verdict_label(claim)


def tally(claims: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """``{"holds", "fails", "inconclusive", "not migrated"}`` counts of ``claims``."""
    out = {"holds": 0, "fails": 0, "inconclusive": 0, "not migrated": 0}
    for c in claims:
        out[c["verdict"] if migrated(c) else "not migrated"] += 1
    return out


def tally_text(claims: Sequence[Mapping[str, Any]]) -> str:
    """``3 hold · 1 fails · 2 inconclusive`` (zero counts left out; ``none`` when empty)."""
    t = tally(claims)
    words = {"holds": ("holds", "hold"), "fails": ("fails", "fail"), "inconclusive": ("inconclusive",) * 2,
             "not migrated": ("not migrated",) * 2}
    parts = [f"{n} {words[k][n != 1]}" for k, n in t.items() if n]
    return " · ".join(parts) if parts else "none"


@dataclass
class Entry:
    """One full-mode results file, as the register shows it."""

    path: Path
    paper: str
    notebook: str
    wall_time_s: Any
    params: Any
    claims: list[dict[str, Any]]
    figures: list[str]
    findings: list[str] = field(default_factory=list)
    runs: Any = None  # the run store's usage (fldp.repro.store.usage) when the notebook used one


@dataclass
class Register:
    """What :func:`collect` found under a results folder."""

    results_dir: Path
    entries: list[Entry] = field(default_factory=list)
    unreadable: list[tuple[Path, str]] = field(default_factory=list)  # (file, why)
    skipped_quick: list[Path] = field(default_factory=list)

    def papers(self) -> list[str]:
        """The papers present, in register order."""
        present = {e.paper for e in self.entries}
        known = [p for p in PAPER_ORDER if p in present]
        return known + sorted(present - set(PAPER_ORDER))

    def entries_of(self, paper: str) -> list[Entry]:
        return sorted((e for e in self.entries if e.paper == paper),
                      key=lambda e: (e.notebook, e.path.as_posix()))


def paper_name(paper: str) -> str:
    """The readable name of a paper key (the key itself when it has none)."""
    return PAPER_NAMES.get(paper, paper)


# --------------------------------------------------------------------------- reading


def results_files(results_dir: Path) -> list[Path]:
    """Every ``*.json`` under ``results_dir`` (sorted), except ``runs/`` and hidden files."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        return []
    found = []
    for path in results_dir.rglob("*.json"):
        rel = path.relative_to(results_dir)
        if rel.parts[0] in SKIPPED_DIRS and len(rel.parts) > 1:
            continue
        if any(part.startswith(".") for part in rel.parts):
            continue
        found.append(path)
    return sorted(found, key=lambda p: p.relative_to(results_dir).as_posix())


def _read(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The results dict of ``path``, or ``None`` and why it cannot be used."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or type(exc).__name__}"
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        return None, f"cannot be read: {one_line(str(exc), 200)}"
    if not isinstance(payload, dict):
        return None, "is not a results file (not a JSON object)"
    if payload.get("quick") is True:
        return payload, None
    missing = [k for k in ("paper", "notebook") if not isinstance(payload.get(k), str)
               or not payload.get(k)]
    if missing:
        return None, f"is not a results file (no {' or '.join(missing)})"
    if not isinstance(payload.get("claims", []), list) or not all(
            isinstance(c, dict) for c in payload.get("claims", [])):
        return None, "is not a results file (claims is not a list of objects)"
    if not isinstance(payload.get("figures", []), list):
        return None, "is not a results file (figures is not a list)"
    if not all(isinstance(f, str) for f in payload.get("findings", [])):
        return None, "is not a results file (findings is not a list of sentences)"
    return payload, None


def collect(results_dir: Path = DEFAULT_RESULTS_DIR) -> Register:
    """Read every full-mode results file under ``results_dir``."""
    register = Register(Path(results_dir))
    for path in results_files(results_dir):
        payload, why = _read(path)
        if payload is None:
            register.unreadable.append((path, why or "cannot be read"))
        elif payload.get("quick") is True:
            register.skipped_quick.append(path)
        else:
            register.entries.append(Entry(
                path=path, paper=payload["paper"], notebook=payload["notebook"],
                wall_time_s=payload.get("wall_time_s"), params=payload.get("params"),
                claims=list(payload.get("claims", [])),
                figures=[str(f) for f in payload.get("figures", [])],
                findings=list(payload.get("findings", [])), runs=payload.get("runs")))
    return register


# --------------------------------------------------------------------------- formatting


def round_floats(value: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """``value`` with every finite float rounded to ``digits`` significant digits."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else value
    if isinstance(value, Mapping):
        return {str(k): round_floats(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [round_floats(v, digits) for v in value]
    return value


def compact(value: Any, *, digits: int | None = SIGNIFICANT_DIGITS,
            limit: int = _CELL_LIMIT) -> str:
    """One line of JSON (keys sorted, floats to ``digits`` significant digits); strings as is."""
    if value is None:
        return ""
    if isinstance(value, str):
        return one_line(value, limit)
    if digits is not None:
        value = round_floats(value, digits)
    text = json.dumps(value, sort_keys=True, separators=(", ", ": "), ensure_ascii=False)
    return one_line(text, limit)


def cell(text: Any) -> str:
    """Text safe in a Markdown table cell: one line, ``|`` escaped."""
    return one_line(str(text), 10**6).replace("|", "\\|")


def duration(seconds: Any) -> str:
    """``12.3 s``, ``4 min 05 s``, ``1 h 02 min``; ``unknown`` when not a number."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
            or not math.isfinite(seconds):
        return "unknown"
    if seconds < 59.95:
        return f"{seconds:.1f} s"
    total = int(round(seconds))
    if total < 3600:
        return f"{total // 60} min {total % 60:02d} s"
    total = int(round(seconds / 60))
    return f"{total // 60} h {total % 60:02d} min"


def time_text(e: Entry) -> str:
    """The notebook's wall time, and, when it read runs back from the run store, what its runs took
    when they were computed (the wall time alone would hide it)."""
    runs = e.runs if isinstance(e.runs, dict) else {}
    if not runs.get("reused"):
        return duration(e.wall_time_s)
    n = runs["reused"] + runs.get("ran", 0)
    return f"{duration(e.wall_time_s)} ({runs['reused']} of {n} runs read from the store; {duration(runs.get('seconds'))} of compute)"


def _code(text: str) -> str:
    """``text`` as an inline code span (a longer fence when it holds backticks)."""
    fence = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _rel(path: Path, base: Path) -> str:
    try:
        return Path(os.path.relpath(path, base)).as_posix()
    except ValueError:  # another drive (Windows)
        return Path(path).as_posix()


def _target(link: str) -> str:
    return f"<{link}>" if re.search(r"[\s()<>]", link) else link


def _slugs(headings: Sequence[str]) -> list[str]:
    """GitHub's anchors for ``headings`` in document order (``-1``, ``-2`` for repeats)."""
    seen: dict[str, int] = {}
    out = []
    for text in headings:
        base = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.append(base if n == 0 else f"{base}-{n}")
    return out


def find_notebook(notebooks_dir: Path, paper: str, notebook: str) -> Path | None:
    preferred = notebooks_dir / paper / f"{notebook}.ipynb"
    if preferred.is_file():
        return preferred
    if not notebooks_dir.is_dir():
        return None
    found = sorted((p for p in notebooks_dir.rglob(f"{notebook}.ipynb")
                    if ".ipynb_checkpoints" not in p.parts and p.is_file()),
                   key=lambda p: p.relative_to(notebooks_dir).as_posix())
    return found[0] if found else None


# --------------------------------------------------------------------------- rendering

TITLE = "Claims register"


def _intro(results_label: str) -> list[str]:
    return [
        f"# {TITLE}", "",
        "Every claim the notebooks of this project check, as a reproduction report: what kind of "
        "claim it is, at which setting it was tested, the verdict, and the measurement that would "
        "have made it fail. This file is generated: `fldp report` (`make report`) renders it from "
        f"the full-mode results in `{results_label}/`, which `make reproduce` (`fldp reproduce`) "
        "writes; do not edit it by hand (`fldp report --check` and the test suite fail when it is "
        "out of date).",
        "",
        "Each claim is one block: its first lines show the verdict, the claim's name, its kind and "
        "setting in a few words, the claim and the reason for the verdict; open it (▸) for the paper's "
        "sentence, the whole setting, the falsifier, the minimum material effect and the measured and "
        f"expected numbers (floats to {cards.DIGITS} significant digits). "
        + ", ".join(f"{m} {v}" for v, m in cards.MARKS.items() if v != "not migrated") + ".",
        "",
        "How to read a verdict:",
        "",
        "- **Kind.** *paper claim*: the paper states it (the detail quotes where); *derived check*: a "
        "consequence of the paper's own mathematics that the project checks (e.g. a formula used "
        "outside its proven range); *diagnostic*: the project's own finding (e.g. what a run really "
        "spends), never counted as a paper claim. The three are counted apart.",
        *legend_lines()[2:],
        "- **Orderings** are judged on paired-by-seed differences (runs with one seed share data, "
        "batches and noise streams) by one rule both ways: each claim states a minimum material effect "
        "(e.g. half a point of accuracy, a loss 1 % lower on paired log ratios); "
        "it holds when the 95 % interval of the mean difference lies beyond that effect on the claimed "
        "side, fails when it lies beyond it on the other side, and is otherwise *inconclusive: spread*; "
        "how many seeds agree is reported, not required; fewer than "
        f"{_min_seeds()} seeds is *inconclusive: spread* (`fldp.verdicts`).",
        "- **Falsifier**: the measurement that would have made the check fail. A check that cannot "
        "fail is not listed as a claim.",
    ]


def legend_lines() -> list[str]:
    """What the counts mean, one sentence each: the settings (*the paper's*, *reduced*, *a reading*),
    the verdicts and every reason of an inconclusive one (:data:`fldp.verdicts.REASONS`).  The
    register opens with them; the book's landing page and each paper's page show them beside the
    counts."""
    return [
        "What the counts mean:", "",
        "- **Setting.** *the paper's setting*: as the paper states it; *reduced*: smaller than the "
        "paper's (fewer seeds, rounds or samples; each claim says what was reduced); *a reading*: a "
        "setting the paper leaves out (e.g. a clipping bound or a learning rate it does not give), "
        "which the project had to choose and names with the claim (where two readings are plausible, "
        "both are run).",
        "- **Verdict.** *holds*: the measurement agrees with the claim and could have contradicted it; "
        "*fails*: the measurement contradicts the claim with the power to do so (a finding, not an error); "
        "*inconclusive*: neither, with one reason: "
        + "; ".join(f"*{k}*: {v}" for k, v in _reasons().items()) + ".",
    ]


def _reasons() -> dict:
    from fldp.verdicts import REASONS
    return REASONS


def _min_seeds() -> int:
    from fldp.verdicts import MIN_SEEDS
    return MIN_SEEDS


@dataclass
class _Found:
    notebooks: dict[int, Path | None]  # by id(entry)
    of_entry: dict[int, list[str]]
    problems: list[str]                # all of them, in document order


def _inspect(register: Register, base: Path, root: Path) -> _Found:
    """Each entry's notebook file and problems (misplaced or duplicate file, missing figure)."""
    results_dir, notebooks_dir = register.results_dir, root / "notebooks"
    label = _rel(results_dir, base)
    by_key: dict[tuple[str, str], list[Entry]] = {}
    for e in register.entries:
        by_key.setdefault((e.paper, e.notebook), []).append(e)
    found = _Found({}, {}, [f"{_code(_rel(p, base))} {why}" for p, why in register.unreadable])
    for paper in register.papers():
        for e in register.entries_of(paper):
            mine = []
            rel = e.path.relative_to(results_dir)
            if rel.parts[:-1] != (e.paper,) or rel.stem != e.notebook:
                mine.append(f"{_code(_rel(e.path, base))} holds {e.paper}/{e.notebook} but is "
                            f"not at {_code(f'{label}/{e.paper}/{e.notebook}.json')}")
            twins = len(by_key[(e.paper, e.notebook)])
            if twins > 1:
                mine.append(f"{twins} results files hold {e.paper}/{e.notebook}; this is "
                            f"{_code(_rel(e.path, base))}")
            nb = find_notebook(notebooks_dir, e.paper, e.notebook)
            if nb is None:
                mine.append(f"no notebook {_code(e.notebook + '.ipynb')} under "
                            f"{_code(_rel(notebooks_dir, base) + '/')}")
            mine += [f"figure {_code(_rel(root / f, base))} is missing"
                     for f in e.figures if not (root / f).is_file()]
            found.notebooks[id(e)], found.of_entry[id(e)] = nb, mine
            found.problems.extend(f"{e.paper}/{e.notebook}: {p}" for p in mine)
    return found


def _reason_text(claims: Sequence[Mapping[str, Any]]) -> str:
    """``3 (spread 2, no-power 1)``: the inconclusive count with its reasons."""
    reasons: dict[str, int] = {}
    for c in claims:
        if migrated(c) and c["verdict"] == "inconclusive":
            reasons[str(c.get("reason"))] = reasons.get(str(c.get("reason")), 0) + 1
    n = sum(reasons.values())
    return f"{n} ({', '.join(f'{k} {v}' for k, v in sorted(reasons.items()))})" if n else "0"


def claims_of(claims, kind: str, setting: str | None = None) -> list:
    return [c for c in claims if migrated(c) and c["kind"] == kind and (setting is None or c["setting"] == setting)]


def kinds_text(claims, names: Sequence[str] = ("paper claims", "derived checks", "diagnostics"), *,
               sep: str = " ", skip_empty: bool = False) -> str:
    """``paper claims 2 hold; derived checks none; diagnostics 1 fails``: :func:`tally_text` per kind
    (paper, derived, diagnostic), each after its name in ``names``; ``skip_empty``: kinds without
    claims left out."""
    parts = [(name, claims_of(claims, kind)) for kind, name in zip(("paper", "derived", "diagnostic"), names)]
    return "; ".join(f"{name}{sep}{tally_text(cs)}" for name, cs in parts if cs or not skip_empty)


def summary_lines(register: Register, link=lambda paper: None) -> list[str]:
    """The register's summary: paper claims by setting x verdict per paper, then derived
    checks and diagnostics apart, and what is not yet migrated.  ``link(paper)`` gives the
    anchor of a paper's section (or ``None``).  README.md and the book show the same lines."""
    papers = register.papers()
    by_paper = {p: [c for e in register.entries_of(p) for c in e.claims] for p in papers}

    def name(p):
        target = link(p)
        return f"[{cell(paper_name(p))}]({target})" if target else cell(paper_name(p))

    table = []
    for p in papers:
        rows = [(s, claims_of(by_paper[p], "paper", s)) for s in ("paper", "reduced", "reading")]
        rows = [(s, cs) for s, cs in rows if cs]
        for i, (s, cs) in enumerate(rows):
            t = tally(cs)
            table.append(f"| {name(p) if i == 0 else ''} | {SETTING_NAMES[s]} | {t['holds']} | {t['fails']} | "
                         f"{_reason_text(cs)} |")
    head = ["| Paper | Setting | Holds | Fails | Inconclusive (reasons) |", "|---|---|---|---|---|"]
    lines = ["**Paper claims** (the paper states them), by the setting they were tested at"
             + (" (papers without any are left out):" if len(papers) > 1 else ":"), "", *(head + table if table else ["None."])]
    for kind, title in (("derived", "**Derived checks** (consequences of a paper's own mathematics):"),
                        ("diagnostic", "**Diagnostics** (the project's own findings, not paper claims):")):
        rows = []
        for p in papers:
            cs = claims_of(by_paper[p], kind)
            if cs:
                t = tally(cs)
                rows.append(f"| {name(p)} | {t['holds']} | {t['fails']} | {_reason_text(cs)} |")
        head = ["| Paper | Holds | Fails | Inconclusive (reasons) |", "|---|---|---|---|"]
        lines += ["", title, "", *(head + rows if rows else ["None."])]
    old = [(p, e) for p in papers for e in register.entries_of(p) if any(not migrated(c) for c in e.claims)]
    if old:
        lines += ["", "**Not yet migrated** (results saved before claims had kinds, settings and verdicts; "
                  "their old verdicts are withheld until the notebook is re-run in full mode):", ""]
        lines += [f"- {e.paper}/{e.notebook}: {sum(not migrated(c) for c in e.claims)} claims" for _, e in old]
    return lines


def render(results_dir: Path = DEFAULT_RESULTS_DIR, output: Path = DEFAULT_OUTPUT,
           register: Register | None = None, *, style: str = "github") -> str:
    """The register as Markdown, with links relative to ``output``'s folder; each claim a card
    (:func:`fldp.repro.cards.claim_card`; ``style="github"`` for REPORT.md, ``"html"`` for the book).

    Figures and notebooks are looked up under ``results_dir``'s parent (the project root):
    ``<root>/figures/...`` and ``<root>/notebooks/**/<notebook>.ipynb``.
    """
    results_dir, output = Path(results_dir), Path(output)
    register = register if register is not None else collect(results_dir)
    base, root = output.parent, results_dir.parent
    results_label = _rel(results_dir, base)
    lines = _intro(results_label)

    papers = register.papers()
    found = _inspect(register, base, root)
    problems = list(found.problems)

    # Headings in document order, for the links of the summary tables (first one wins).
    headings = [TITLE, "Summary", "Notebooks"] + (["Problems"] if problems else [])
    for paper in papers:
        headings.append(paper_name(paper))
        headings += [f"{e.paper}/{e.notebook}" for e in register.entries_of(paper)]
    anchor_of: dict[str, str] = {}
    for heading, slug in zip(headings, _slugs(headings)):
        anchor_of.setdefault(heading, slug)

    lines.append("")
    if not register.entries:
        lines.append(f"No results yet: `{results_label}/` holds no full-mode results. Run "
                     "`make reproduce` (or `fldp reproduce`) to produce them, then `make report`.")
    else:
        lines += ["## Summary", ""]
        lines += summary_lines(register, lambda p: f"#{anchor_of[paper_name(p)]}")
        lines += ["", "## Notebooks", "",
                  "| Notebook | Paper claims | Derived checks | Diagnostics | Wall time |", "|---|---|---|---|---|"]
        for paper in papers:
            for e in register.entries_of(paper):
                key = f"{e.paper}/{e.notebook}"
                cols = [tally_text(claims_of(e.claims, k)) for k in ("paper", "derived", "diagnostic")]
                if any(not migrated(c) for c in e.claims):
                    cols[0] += f" ({sum(not migrated(c) for c in e.claims)} not migrated)"
                lines.append(f"| [{cell(key)}](#{anchor_of[key]}) | " + " | ".join(cols)
                             + f" | {time_text(e)} |")

    if problems:
        lines += ["", "## Problems", ""]
        lines += [f"- {p}" for p in problems]

    for paper in papers:
        entries = register.entries_of(paper)
        claims = [c for e in entries for c in e.claims]
        lines += ["", f"## {paper_name(paper)}", "",
                  f"Paper key {_code(paper)}, {len(entries)} notebook{'s' if len(entries) != 1 else ''}: "
                  f"{kinds_text(claims)}."]
        for e in entries:
            lines += ["", f"### {e.paper}/{e.notebook}", ""]
            lines += _entry_lines(e, found.notebooks[id(e)], found.of_entry[id(e)], base, root, style)
    return "\n".join(lines) + "\n"


def _entry_lines(e: Entry, notebook: Path | None, problems: list[str], base: Path,
                 root: Path, style: str) -> list[str]:
    lines = []
    if notebook is not None:
        link = _rel(notebook, base)
        lines.append(f"- Notebook: [{link}]({_target(link)})")
    else:
        lines.append(f"- Notebook: {_code(e.notebook + '.ipynb')} (not found)")
    link = _rel(e.path, base)
    lines.append(f"- Results: [{link}]({_target(link)})")
    lines.append(f"- Wall time: {time_text(e)}")
    params = compact(e.params, digits=None, limit=_PARAMS_LIMIT) if e.params else ""
    lines.append(f"- Parameters: {_code(params) if params else 'none'}")
    lines.append(f"- Claims: {kinds_text(e.claims, ('paper', 'derived', 'diagnostics'))}")
    old = [c for c in e.claims if not migrated(c)]
    if old:
        lines.append(f"- Not yet migrated: {len(old)} claims saved in the old form; their verdicts are "
                     "withheld until this notebook is re-run in full mode")
    lines += [f"- Problem: {p}" for p in problems]
    if e.findings:
        lines += ["", "Findings (written by the notebook from its measurements):", ""]
        lines += [f"- {f}" for f in e.findings]
    lines.append("")
    lines += cards.claim_cards(e.claims, style=style) if e.claims else ["No claims recorded."]
    for f in e.figures:
        path = root / f
        if path.is_file():
            link = _rel(path, base)
            alt = Path(link).with_suffix("").as_posix().removeprefix("figures/")
            lines += ["", f"![{cell(alt).replace(']', '')}]({_target(link)})"]
    return lines


# --------------------------------------------------------------------------- writing


#: The line that opens the register summary in README.md (:func:`readme_with_summary`).
README_BEGIN = "<!-- register summary: written by `fldp report` from results/; do not edit -->"
#: The line that closes it.
README_END = "<!-- end of register summary -->"


#: A findings block (the book's part pages, ``book/parts/<paper>.md``, filled by :mod:`fldp.repro.book`;
#: README.md's, where it has one, by ``fldp report``): ``<!-- findings of zhou/04_experiments, written by fldp
#: report: do not edit -->`` ... ``<!-- end of findings -->``, filled with that notebook's findings.
FINDINGS_BLOCK = re.compile(r"(<!-- findings of ([\w.-]+/[\w.-]+), written by fldp report: do not edit -->\n)"
                            r"(.*?)(<!-- end of findings -->)", re.S)


def findings_lines(register: Register, key: str, report_link: str = "REPORT.md") -> list[str]:
    """The findings of notebook ``key`` (``paper/notebook``) as README.md shows them: one bullet
    per :meth:`fldp.repro.results.Recorder.finding`, then where they come from."""
    entry = next((e for e in register.entries if f"{e.paper}/{e.notebook}" == key), None)
    if entry is None:
        return [f"No full-mode results of {_code(key)} yet: run `fldp reproduce --only {key}`."]
    if not entry.findings:
        return [f"{_code(key)} records no findings yet: see its claims in [{report_link}]"
                f"({report_link}#{_report_anchor(register, key)})."]
    return [f"- {f}" for f in entry.findings] + [
        "", f"<sub>Written by `fldp report` from `results/{key}.json` (full mode, wall time "
        f"{duration(entry.wall_time_s)}); every verdict: [{report_link}]({report_link}#{_report_anchor(register, key)}).</sub>"]


def _report_anchor(register: Register, key: str) -> str:
    """The anchor of notebook ``key``'s section in REPORT.md (headings in :func:`render`'s order)."""
    headings = [TITLE, "Summary", "Notebooks"]
    for paper in register.papers():
        headings.append(paper_name(paper))
        headings += [f"{e.paper}/{e.notebook}" for e in register.entries_of(paper)]
    return dict(reversed(list(zip(headings, _slugs(headings))))).get(key, _slugs([key])[0])


def fill_findings(text: str, register: Register, report_link: str = "REPORT.md") -> str:
    """``text`` with every findings block (:data:`FINDINGS_BLOCK`) filled with its notebook's
    findings (:func:`findings_lines`, linking into ``report_link``): README.md's and the book's
    part pages' (:mod:`fldp.repro.book`)."""
    return FINDINGS_BLOCK.sub(lambda m: m.group(1) + "\n".join(findings_lines(register, m.group(2), report_link))
                              + "\n" + m.group(4), text)


def readme_with_summary(readme: str, register: Register, report_link: str = "REPORT.md") -> str:
    """``readme`` with the text between :data:`README_BEGIN` and :data:`README_END` replaced by
    the register's summary (:func:`summary_lines`, linking into ``report_link``), and every
    findings block (:data:`FINDINGS_BLOCK`) filled with its notebook's findings
    (:func:`findings_lines`), so README.md shows the same counts and numbers as REPORT.md.
    Unchanged where the markers are absent."""
    readme = fill_findings(readme, register, report_link)
    a, b = readme.find(README_BEGIN), readme.find(README_END)
    if a < 0 or b < a:
        return readme
    anchors = lambda p: f"{report_link}#{_slugs([paper_name(p)])[0]}"  # noqa: E731
    block = summary_lines(register, anchors) if register.entries else ["No full-mode results yet."]
    return readme[:a + len(README_BEGIN)] + "\n" + "\n".join(block) + "\n" + readme[b:]


def _readme(output: Path) -> Path:
    return Path(output).parent / "README.md"


def write(results_dir: Path = DEFAULT_RESULTS_DIR, output: Path = DEFAULT_OUTPUT,
          register: Register | None = None) -> Path:
    """Render the register and write it to ``output`` atomically."""
    register = register if register is not None else collect(results_dir)
    text = render(results_dir, output, register)
    atomic_write_bytes(Path(output), text.encode("utf-8"))
    readme = _readme(output)
    if readme.is_file():
        old = readme.read_text(encoding="utf-8")
        new = readme_with_summary(old, register, Path(output).name)
        if new != old:
            atomic_write_bytes(readme, new.encode("utf-8"))
    return Path(output)


def is_up_to_date(results_dir: Path = DEFAULT_RESULTS_DIR, output: Path = DEFAULT_OUTPUT,
                  register: Register | None = None) -> bool:
    """Whether ``output`` holds exactly what ``results_dir`` renders."""
    output = Path(output)
    try:
        current = output.read_bytes()
    except OSError:
        return False
    return current == render(results_dir, output, register).encode("utf-8")


def run(results_dir: Path = DEFAULT_RESULTS_DIR, output: Path = DEFAULT_OUTPUT, *,
        check: bool = False, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``fldp report [--check]``: 0 when written (or up to date), 1 when ``--check`` finds it stale."""
    out, err = out or sys.stdout, err or sys.stderr
    results_dir, output = Path(results_dir), Path(output)
    register = collect(results_dir)
    for path in register.skipped_quick:
        print(f"fldp report: skipped {path} (quick mode; only full-mode results are reported)",
              file=err)
    for path, why in register.unreadable:
        print(f"fldp report: problem: {path} {why}", file=err)
    if check:
        text = render(results_dir, output, register)
        try:
            current = output.read_text(encoding="utf-8")
        except OSError:
            current = None
        readme = _readme(output)
        readme_text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
        readme_stale = readme_with_summary(readme_text, register, output.name) != readme_text
        if readme_stale:
            print(f"fldp report: the register summary in {readme} or one of its findings blocks is out of "
                  "date: run `fldp report` (or `make report`) and commit it", file=err)
        if current == text and not readme_stale:
            print(f"{output} is up to date with {results_dir}", file=out)
            return 0
        if current == text:
            return 1
        why = "is missing" if current is None else "is out of date"
        print(f"fldp report: {output} {why} with {results_dir}: run `fldp report` "
              "(or `make report`) and commit it", file=err)
        if current is not None:
            diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(),
                                             str(output), "rendered", lineterm="", n=1))
            for line in diff[:40]:
                print(line, file=err)
            if len(diff) > 40:
                print(f"... ({len(diff) - 40} more diff lines)", file=err)
        return 1
    write(results_dir, output, register)
    claims = [c for e in register.entries for c in e.claims]
    n_problems = len(_inspect(register, output.parent, results_dir.parent).problems)
    print(f"wrote {output}: {len(register.entries)} notebook(s); "
          f"{kinds_text(claims, ('paper claims', 'derived', 'diagnostics'))}; {n_problems} problem(s)", file=out)
    return 0


# --------------------------------------------------------------------------- the run's report

#: The first words of a quick-mode report (``build/report.{md,html}``, ``build/quick/README.md``).
QUICK_WARNING = ("quick mode: a smoke test at CI size (a few rounds, clients and seeds). Its verdicts "
                 "show that every notebook runs and judges its claims end to end; they are not findings "
                 "and differ from the claims register (REPORT.md, computed in full mode), often as "
                 "inconclusive: spread or untrained where the full run decides.")
_VERSIONS_SHOWN = ("torch", "torchvision", "numpy", "dp-accounting", "papermill")


@dataclass
class _Saved:
    """What one results JSON holds, resolved for the report."""

    path: Path
    figures: list[Path]
    claims: list[dict[str, Any]]
    problem: str | None = None


def _load_saved(path: Path) -> _Saved:
    try:
        payload = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        return _Saved(path, [], [], f"cannot read {path}: {exc}")
    root = Path(path).parents[2]  # <root>/results/<paper>/<notebook>.json
    figures = [root / f for f in payload.get("figures", [])]
    return _Saved(path, figures, list(payload.get("claims", [])))


def _link(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


def _claim_counts(saved: Sequence[_Saved]) -> str:
    return tally_text([c for s in saved for c in s.claims])


def _versions() -> str:
    found = []
    for name in _VERSIONS_SHOWN:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return f"Python {platform.python_version()}, " + ", ".join(found)


def _header(report: Report) -> list[tuple[str, str]]:
    n_ok = sum(r.ok for r in report.notebooks)
    return [
        ("Mode", "quick (CI size)" if report.quick else "full"),
        ("Date", report.started.isoformat(timespec="seconds")),
        ("Total time", f"{report.seconds:.1f} s"),
        ("Notebooks", f"{n_ok}/{len(report.notebooks)} ok"),
        ("Parameters", ", ".join(f"{k}={v!r}" for k, v in report.params.items()) or "none"),
        ("Environment", f"{_versions()}; {platform.platform()}"),
    ]


def render_markdown(report: Report, saved: Mapping[str, list[_Saved]]) -> str:
    """The report as Markdown, links relative to the build folder."""
    base, cell = report.build_dir, (lambda s: str(s).replace("|", "\\|"))
    lines = ["# Reproduction report", ""]
    if report.quick:
        lines += [f"> **Warning:** {QUICK_WARNING}", ""]
    lines += [f"- **{k}:** {v}" for k, v in _header(report)]
    lines += ["", "| Notebook | Status | Time | Claims |", "|---|---|---|---|"]
    for nb in report.notebooks:
        lines.append(f"| {cell(nb.rel)} | {'ok' if nb.ok else '**FAILED**'} | "
                     f"{nb.seconds:.1f} s | {_claim_counts(saved[nb.rel])} |")
    for nb in report.notebooks:
        lines += ["", f"## {nb.rel}", "",
                  f"- Status: {'ok' if nb.ok else '**FAILED** at ' + nb.error.describe()}",
                  f"- Run time: {nb.seconds:.1f} s",
                  f"- Executed notebook: [{_link(nb.output, base)}](<{_link(nb.output, base)}>)"]
        lines += [f"- Problem: {p}" for p in _problems(nb, saved[nb.rel])]
        claims = [c for s in saved[nb.rel] for c in s.claims]
        if claims:
            lines += ["", *cards.claim_cards(claims, style="github")]
        figures = [f for s in saved[nb.rel] for f in s.figures]
        if figures:
            lines += ["", "Figures:", ""]
            lines += [f"- [{_link(f, base)}](<{_link(f, base)}>)" for f in figures]
    return "\n".join(lines) + "\n"


def _problems(nb: NotebookResult, saved: Sequence[_Saved]) -> list[str]:
    problems = [s.problem for s in saved if s.problem]
    problems += [f"figure {f} is missing" for s in saved for f in s.figures if not f.exists()]
    if nb.ok and not saved:
        problems.append("no results file was saved (does the notebook call Recorder.save()?)")
    return problems


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .5em;
vertical-align:top;text-align:left}.holds,.ok{color:#176317;font-weight:bold}
.fails,.FAILED{color:#b00020;font-weight:bold}.inconclusive{color:#8a5a00}img{max-width:100%;border:1px solid #eee}
.warning{border:2px solid #c28a00;background:#fff6dd;padding:.6em .9em}"""


def render_html(report: Report, saved: Mapping[str, list[_Saved]]) -> str:
    """The same report as one self-contained HTML page (figures embedded as data URIs)."""
    esc, base = html.escape, report.build_dir
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>fldp reproduction "
           f"report</title><style>{_CSS}{cards.CSS}</style></head><body><h1>Reproduction report</h1>"]
    if report.quick:
        out.append(f"<p class='warning'><b>Warning:</b> {esc(QUICK_WARNING)}</p>")
    out.append("<ul>")
    out += [f"<li><b>{esc(k)}:</b> {esc(v)}</li>" for k, v in _header(report)]
    out.append("</ul><table><tr><th>Notebook</th><th>Status</th><th>Time</th>"
               "<th>Claims</th></tr>")
    for nb in report.notebooks:
        status = "ok" if nb.ok else "FAILED"
        out.append(f"<tr><td><a href='#{esc(nb.rel)}'>{esc(nb.rel)}</a></td>"
                   f"<td class='{status}'>{status}</td><td>{nb.seconds:.1f} s</td>"
                   f"<td>{esc(_claim_counts(saved[nb.rel]))}</td></tr>")
    out.append("</table>")
    for nb in report.notebooks:
        status = "ok" if nb.ok else f"FAILED at {nb.error.describe()}"
        out.append(f"<h2 id='{esc(nb.rel)}'>{esc(nb.rel)}</h2><ul>"
                   f"<li>Status: <span class='{'ok' if nb.ok else 'FAILED'}'>{esc(status)}"
                   f"</span></li><li>Run time: {nb.seconds:.1f} s</li><li>Executed notebook: "
                   f"<a href='{esc(_link(nb.output, base))}'>{esc(_link(nb.output, base))}</a>"
                   "</li>")
        out += [f"<li>Problem: {esc(p)}</li>" for p in _problems(nb, saved[nb.rel])]
        out.append("</ul>")
        claims = [c for s in saved[nb.rel] for c in s.claims]
        if claims:
            out += [cards.claim_card(c, style="html") for c in claims]
        out += [_figure_html(f, base) for s in saved[nb.rel] for f in s.figures]
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _figure_html(path: Path, base: Path) -> str:
    link = html.escape(_link(path, base))
    if not path.exists():
        return f"<p>missing figure: {link}</p>"
    data = base64.b64encode(path.read_bytes()).decode()
    return (f"<figure><img src='data:image/png;base64,{data}' alt='{link}'>"
            f"<figcaption><a href='{link}'>{link}</a></figcaption></figure>")


def write_report(report: Report) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into the build folder, atomically; in quick mode also
    a ``README.md`` beside the quick-mode ``results/`` and ``figures/`` (``build/quick/``) saying
    that they are a smoke test, not the register's numbers."""
    saved = {nb.rel: [_load_saved(p) for p in nb.results_files] for nb in report.notebooks}
    md, page = report.build_dir / "report.md", report.build_dir / "report.html"
    atomic_write_bytes(md, render_markdown(report, saved).encode())
    atomic_write_bytes(page, render_html(report, saved).encode())
    if report.quick:
        roots = {Path(p).parents[2] for nb in report.notebooks for p in nb.results_files}
        for root in sorted(roots - {PROJECT_ROOT}):
            text = (f"# Quick-mode outputs\n\n**Warning:** {QUICK_WARNING}\n\n`results/` and `figures/` here were "
                    f"written by `fldp reproduce --quick` on {report.started.date().isoformat()}; its report: "
                    f"`{_link(md, root)}`. The findings are in REPORT.md and the book.\n")
            atomic_write_bytes(root / "README.md", text.encode())
    return md, page
