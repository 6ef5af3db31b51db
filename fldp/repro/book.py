"""The book: a static site of the whole companion, built from the committed full-mode results.
``fldp book`` (``make book``) stages a Sphinx source folder in ``build/book-src/``
(:func:`stage`) and builds it with Sphinx + MyST-NB + sphinx-book-theme into ``build/book/``
(:func:`build`, warnings as errors); it trains nothing and runs no notebook.  What it stages: the
committed ``book/`` sources (configuration, landing page, guide, one page per paper with its
findings filled from ``results/``), every chapter as the executed full-mode copy that ``fldp
reproduce`` committed (:func:`chapters`; a chapter not executed yet shows its code, its figures
and its verdicts), the figures and results the pages link to, the claims register and ``api/``
(one page per module of the package, generated from the docstrings), and the JavaScript the pages
run, vendored at pinned, checked versions (:data:`VENDORED`), so that a page loads nothing from a
CDN.  ``fldp book --serve`` serves the site on 127.0.0.1 (:func:`serve`).
"""
from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import json
import pkgutil
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from fldp.repro.paths import PROJECT_ROOT, atomic_write_bytes
from fldp.repro import cards

__all__ = ["BOOK_DIR", "STAGE_DIR", "OUTPUT_DIR", "VENDOR_CACHE", "Vendored", "VENDORED", "BookError",
           "Chapter", "chapters", "vendor", "stage", "build", "serve", "api_modules"]

BOOK_DIR = PROJECT_ROOT / "book"
STAGE_DIR = PROJECT_ROOT / "build" / "book-src"
OUTPUT_DIR = PROJECT_ROOT / "build" / "book"
VENDOR_CACHE = PROJECT_ROOT / "build" / "vendor"


class BookError(Exception):
    """The book cannot be built (npm missing, a vendored package altered, Sphinx failed)."""


@dataclass(frozen=True)
class Vendored:
    """An npm package whose files the site carries: ``files`` are globs inside the package."""

    name: str
    version: str
    integrity: str  # the registry's dist.integrity (sha512 of the tarball)
    dest: str  # folder under the site's _static/
    files: tuple[str, ...]


#: The JavaScript vendored into ``_static/vendor/`` (``npm view <name>@<version> dist.integrity``).
VENDORED = (
    Vendored("@jupyter-widgets/html-manager", "1.0.15",
             "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA==",
             "vendor/html-manager", ("dist/embed.js", "dist/embed.js.LICENSE.txt", "dist/*.woff2", "dist/*.woff",
                                     "LICENSE*")),
    Vendored("mathjax", "3.2.2",
             "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
             "vendor/mathjax", ("es5/tex-chtml.js", "es5/output/chtml/fonts/woff-v2/*.woff",
                                "es5/input/tex/extensions/*.js", "LICENSE")),
)


# --------------------------------------------------------------------------- vendoring


def _tarball(pkg: Vendored, cache: Path) -> Path:
    """The package's tarball from the npm registry (``npm pack``), cached, its sha512 checked."""
    name = f"{pkg.name.lstrip('@').replace('/', '-')}-{pkg.version}.tgz"
    path = Path(cache) / name
    if not path.is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise BookError(f"npm is needed once to fetch {pkg.name}@{pkg.version} for the book (`make system` "
                            f"installs Debian's npm), or put its tarball at {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([npm, "pack", f"{pkg.name}@{pkg.version}", "--pack-destination", str(path.parent)],
                              capture_output=True, text=True)
        if done.returncode != 0 or not path.is_file():
            raise BookError(f"`npm pack {pkg.name}@{pkg.version}` failed: {done.stderr.strip()[-500:]}")
    digest = "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()
    if digest != pkg.integrity:
        path.unlink()
        raise BookError(f"{path} does not match the pinned integrity of {pkg.name}@{pkg.version} "
                        f"({digest[:24]}... != {pkg.integrity[:24]}...): removed; run again")
    return path


def vendor(static_dir: Path, cache: Path = VENDOR_CACHE, packages: Sequence[Vendored] = VENDORED) -> list[Path]:
    """Copy the files of ``packages`` (:data:`VENDORED`) into ``static_dir`` (the site's ``_static``),
    each from its npm tarball at a pinned version whose sha512 is checked against its pinned
    integrity, so that a page loads nothing from a CDN; returns the files copied."""
    from fnmatch import fnmatchcase

    copied = []
    for pkg in packages:
        with tarfile.open(_tarball(pkg, cache)) as tar:
            for member in tar.getmembers():
                rel = member.name.removeprefix("package/")
                if member.isfile() and any(fnmatchcase(rel, pattern) for pattern in pkg.files):
                    dest = Path(static_dir) / pkg.dest / rel
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(tar.extractfile(member).read())
                    copied.append(dest)
    return copied


# --------------------------------------------------------------------------- staging


@dataclass
class Chapter:
    """One chapter of the book: a notebook, its committed executed copy and its results."""

    rel: str  # relative to notebooks/, e.g. "zhou/03_gaussian.ipynb"
    source: Path
    executed: Path | None  # results/executed/<rel>, when committed
    entry: Any = None  # its fldp.repro.report.Entry, when it saved full-mode results

    @property
    def key(self) -> str | None:
        """``paper/notebook`` of its results JSON."""
        return f"{self.entry.paper}/{self.entry.notebook}" if self.entry else None

    @property
    def part(self) -> str:
        return Path(self.rel).parent.as_posix() if "/" in self.rel else "baseline"

    @property
    def up(self) -> str:
        """From its staged page (``notebooks/<rel>``) to the book's root."""
        return "../" * (self.rel.count("/") + 1)


def chapters(root: Path = PROJECT_ROOT, register=None) -> list[Chapter]:
    """Every chapter under ``<root>/notebooks`` (as ``fldp reproduce`` runs them), with its
    executed copy and its entry in the claims register (``register``: ``<root>/results``'s,
    read here when not given)."""
    from fldp.repro import report
    from fldp.repro.execute import EXECUTED
    from fldp.repro.chapters import discover

    notebooks = Path(root) / "notebooks"
    register = register if register is not None else report.collect(Path(root) / "results")
    by_notebook = {}
    for entry in register.entries:
        found = report.find_notebook(notebooks, entry.paper, entry.notebook)
        if found is not None:
            by_notebook[found.resolve()] = entry
    out = []
    for path in discover(notebooks):
        rel = path.relative_to(notebooks).as_posix()
        executed = Path(root) / EXECUTED / rel
        out.append(Chapter(rel, path, executed if executed.is_file() else None, by_notebook.get(path.resolve())))
    return out


_PAPER_PREFIX = re.compile(r"^(.*?(et al\.(\s*\d{4})?(\s*\([^)]*\))?|Chi\s*\([^)]*\)|perturbation)),\s*")


def _nav_title(ch: Chapter) -> str:
    """The chapter's title for its part's table of contents: its first heading without the
    paper's name, which the part already says ("Section VI — the Gaussian mechanism: ...")."""
    cells = json.loads(ch.source.read_text(encoding="utf-8"))["cells"]
    first = "".join(cells[0]["source"]).splitlines()[0] if cells else ""
    title = first.removeprefix("# ").strip() if first.startswith("# ") else Path(ch.rel).stem
    title = _PAPER_PREFIX.sub("", title).replace("\\*", "*").replace("<=", "≤").replace(">=", "≥")
    return title[:1].upper() + title[1:]


def _md_cell(text: str, cell_id: str) -> dict:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": text}


def _executed_at(nb: dict) -> tuple[str, float | None]:
    meta = nb.get("metadata", {}).get("papermill", {})
    end, seconds = meta.get("end_time"), meta.get("duration")
    day = str(end)[:10] if end else "an unrecorded date"
    return day, seconds


def _committed_on(path: Path, root: Path) -> str:
    """The date of the last commit of ``path`` (or "an unrecorded date" outside git)."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%cs", "--", str(path)], cwd=root,
                             capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out or "an unrecorded date"


def _runs_text(runs: Any) -> str:
    """What a results file's ``runs`` (:func:`fldp.repro.store.usage`) says of the training runs behind it."""
    from fldp.repro import report

    if not isinstance(runs, dict) or not (runs.get("ran", 0) + runs.get("reused", 0)):
        return ""
    n, reused = runs["ran"] + runs["reused"], runs["reused"]
    days = sorted({str(runs.get(k) or "")[:10] for k in ("first", "last")} - {""})
    when = f" on {days[0]}" if len(days) == 1 else f" between {days[0]} and {days[-1]}" if days else ""
    compute = f"{report.duration(runs.get('seconds', 0.0))} of compute"
    if not reused:
        return f" Its {n} training runs were computed in that execution ({compute})."
    how = f"All {n} of its training runs were" if reused == n else f"{reused} of its {n} training runs were"
    return f" {how} read from the run store, where they were computed{when} ({compute} in all)."


def _provenance(ch: Chapter, nb: dict | None, root: Path) -> str:
    from fldp.repro import report

    e, run = ch.entry, f"`fldp reproduce --only {ch.rel.removesuffix('.ipynb')}`"
    if e is None:
        return (":::{admonition} No results\n:class: warning\nThis chapter has no committed full-mode results yet: "
                f"{run} produces them.\n:::\n")
    tallies = report.kinds_text(e.claims, sep=": ")
    results = f"`results/{ch.key}.json`"
    if nb is not None:
        day, seconds = _executed_at(nb)
        took = f" in {report.duration(seconds)}" if seconds is not None else ""
        return (":::{admonition} Where these numbers come from\n:class: note\n"
                f"Everything on this page is the committed **full-mode** run, executed on {day}{took} by "
                f"`fldp reproduce`: its printed outputs, its figures (`figures/{e.paper}/`) and its verdicts "
                f"({results}: {tallies}).{_runs_text(e.runs)} Nothing was re-run to build this page; {run} "
                "re-runs it.\n:::\n")
    day = _committed_on(Path(root) / "results" / f"{ch.key}.json", root)
    return (":::{admonition} Code without its printed outputs\n:class: warning\n"
            "The executed copy of this chapter is not committed yet, so its code is shown without the "
            f"outputs it prints. The figures and verdicts at the end of the page are its committed **full-mode** "
            f"results ({results}, committed on {day}: {tallies}). {run} runs it and commits the executed copy.\n:::\n")


def _results_section(ch: Chapter, with_figures: bool) -> str:
    from fldp.repro import report

    e = ch.entry
    if e is None:
        return ""
    lines = ["## The verdicts of this chapter", "",
             f"From `results/{ch.key}.json` (full mode); the whole register: [the claims register]"
             f"({ch.up}register.md).", ""]
    if e.findings:
        lines += ["**Findings** (written by the notebook from its measurements):", ""]
        lines += [f"- {f}" for f in e.findings] + [""]
    lines += cards.claim_cards(e.claims, style="html") if e.claims else ["No claims recorded."]
    if with_figures and e.figures:
        lines += ["", "## Figures (committed full-mode run)", ""]
        lines += [f"![{Path(f).stem}]({ch.up}{f})\n" for f in e.figures]
    return "\n".join(lines) + "\n"


_LIVE_VERSION = ("The live version: `make explore` (every explorer, served by Voila on 127.0.0.1) or `make lab` "
                 "(this notebook in JupyterLab).")
_LIVE = {True: (":::{admonition} A static copy of the explorer\n:class: tip\n"
                "The widgets below are rendered in the page from the state saved when the notebook ran: the "
                f"controls move, but nothing recomputes here. {_LIVE_VERSION}\n:::\n"),
         False: (":::{admonition} The explorer is not shown here\n:class: tip\n"
                 "Its widgets are saved with the executed copy of this chapter, which is not committed yet. "
                 f"{_LIVE_VERSION}\n:::\n")}


def _stage_chapter(ch: Chapter, dest: Path, root: Path) -> None:
    nb = json.loads((ch.executed or ch.source).read_text(encoding="utf-8"))
    cells = nb["cells"]
    if ch.executed is None:
        for cell in cells:
            if cell["cell_type"] == "code":
                cell["outputs"], cell["execution_count"] = [], None
    note = _provenance(ch, nb if ch.executed else None, root)
    first = "".join(cells[0]["source"]) if cells and cells[0]["cell_type"] == "markdown" else ""
    if first.startswith("# "):  # the note goes right under the chapter's title
        title, _, rest = first.partition("\n")
        cells[0]["source"] = f"{title}\n\n{note}\n{rest.lstrip(chr(10))}"
    else:
        cells.insert(0, _md_cell(note, "fldp-book-provenance"))
    for i, cell in enumerate(list(cells)):
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown" and src.lstrip().startswith("## Explore"):
            cells.insert(cells.index(cell) + 1, _md_cell(_LIVE[ch.executed is not None], f"fldp-book-static-{i}"))
    section = _results_section(ch, with_figures=ch.executed is None)
    if section:
        cells.append(_md_cell(section, "fldp-book-verdicts"))
    atomic_write_bytes(dest, (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))


def _strip_anchors(text: str, link: str) -> str:
    """Links into the register without their ``#anchor`` (its slugs are GitHub's, not Sphinx's)."""
    return re.sub(re.escape(link) + r"#[\w.-]+", link, text)


def _part_page(part: str) -> str:
    """A part's introduction page in the staged book (the baseline's one chapter sits beside it)."""
    return "notebooks/baseline.md" if part == "baseline" else f"notebooks/{part}/index.md"


_PART_ORDER = ("wei2020", "zhou", "li2021", "adaptive_noise", "benchmark", "baseline")
PLAIN_WORDS = "## In plain words"
COUNTS_HEADING = "## The verdicts, counted"


def plain_words(text: str) -> str:
    """The ``## In plain words`` section of a part page (``book/parts/<paper>.md``): the paper's
    main findings in a few sentences, which the landing page quotes; empty when it has none."""
    m = re.search(rf"^{re.escape(PLAIN_WORDS)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1).strip() if m else ""


def _paper_register(register, part: str):
    from fldp.repro import report

    return report.Register(register.results_dir, [e for e in register.entries if e.paper == part])


def _counts_lines(register, part: str) -> list[str]:
    """A paper's verdicts counted (the register's summary, this paper's rows), then what the counts mean."""
    from fldp.repro import report

    mine = _paper_register(register, part)
    if not mine.entries:
        return ["No full-mode results yet."]
    return [*report.summary_lines(mine), "", *report.legend_lines()]


def _with_counts(text: str, register, part: str) -> str:
    """A part page with its counts and their legend (:func:`_counts_lines`) after its plain words (or,
    without them, before its first section)."""
    block = "\n".join([COUNTS_HEADING, "", *_counts_lines(register, part), "", ""])
    at = text.find(PLAIN_WORDS)
    nxt = re.search(r"^## ", text[at + 1:] if at >= 0 else text, re.M)
    if nxt is None:
        return text.rstrip("\n") + "\n\n" + block
    cut = (at + 1 if at >= 0 else 0) + nxt.start()
    return text[:cut] + block + text[cut:]


def _landing_findings(register, plain: dict, parts: Sequence[str]) -> list[str]:
    """The landing page's findings: every paper's counts (the register's summary), what the counts
    mean, then each paper in plain words (quoted from its part page) with its counts in one line."""
    from fldp.repro import report

    if not register.entries:
        return ["No full-mode results yet."]
    lines = [*report.summary_lines(register, _part_page), "", *report.legend_lines(), "",
             "### Each paper in plain words", ""]
    for part in parts:
        claims = [c for e in register.entries if e.paper == part for c in e.claims]
        counts = report.kinds_text(claims, skip_empty=True)
        lines += [f"**[{report.paper_name(part)}]({_part_page(part)})** ({counts or 'no verdicts yet'})", ""]
        if plain.get(part):
            lines += ["> " + line if line else ">" for line in plain[part].splitlines()] + [""]
    return lines


def api_modules() -> list[str]:
    """Every public module of the package, as the API reference lists them (``fldp.__main__``
    runs the command line when imported, so it is left out)."""
    import fldp

    names = ["fldp"] + [m.name for m in pkgutil.walk_packages(fldp.__path__, "fldp.")]
    return sorted(n for n in names if not n.endswith("__main__"))


def _api_pages() -> dict[str, str]:
    """The API reference: an index page and one page per module (``api/<module>.rst``)."""
    import importlib

    pages, entries = {}, []
    for name in api_modules():
        module = importlib.import_module(name)
        lines = [name, "=" * len(name), "", f".. automodule:: {name}"]
        exported = [n for n in getattr(module, "__all__", [])
                    if getattr(getattr(module, n, None), "__module__", None) not in (None, name)]
        if exported:  # re-exports are described where they are defined
            lines.append(f"   :exclude-members: {', '.join(exported)}")
        pages[f"api/{name}.rst"] = "\n".join(lines) + "\n"
        entries.append(f"   {name}")
    pages["api/index.rst"] = "\n".join([
        "API reference", "=============", "",
        "Generated from the package's docstrings: each formula's docstring names its paper and equation.", "",
        ".. toctree::", "   :maxdepth: 1", "", *entries, ""])
    return pages


def stage(root: Path = PROJECT_ROOT, dest: Path = STAGE_DIR, cache: Path = VENDOR_CACHE,
          packages: Sequence[Vendored] = VENDORED) -> Path:
    """Assemble the book's Sphinx source folder in ``dest`` (emptied first) from the project at
    ``root``, with the ``packages`` vendored into its ``_static``; returns it.  What it stages:

    * ``book/`` (committed): the configuration, the landing page, the guide pages and one
      introduction page per paper (``book/parts/<paper>.md``), whose findings blocks are filled
      from ``results/`` as README.md's were (:data:`fldp.repro.report.FINDINGS_BLOCK`), with the
      paper's verdicts counted and what the counts mean after its ``## In plain words`` section,
      which the landing page quotes beside every paper's counts (``_generated/findings.md``);
    * every chapter (``notebooks/**/NN_*.ipynb``): the executed full-mode copy that ``fldp
      reproduce`` committed to ``results/executed/`` (:data:`fldp.repro.execute.EXECUTED`), with
      a note saying which mode and date its numbers come from and its claims appended (one card each,
      :mod:`fldp.repro.cards`).  A
      chapter whose executed copy is not committed yet shows its code without outputs, with its
      committed full-mode figures and verdicts, and says so;
    * ``figures/`` and ``results/<paper>/*.json`` (the pages link to them), ``register.md`` (the
      claims register, :func:`fldp.repro.report.render` for the book) and ``api/`` (one page per
      module of the package, its ``automodule``: the reference generated from the docstrings);
    * the JavaScript the pages run (:func:`vendor`): ``@jupyter-widgets/html-manager``, which
      renders the Explore sections' widgets from the state papermill saved, and MathJax.
    """
    from fldp import papers
    from fldp.repro import report

    root, dest = Path(root), Path(dest)
    book = root / "book"
    if not (book / "conf.py").is_file():
        raise BookError(f"{book / 'conf.py'} is missing: the book's sources live in book/")
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(book, dest, ignore=shutil.ignore_patterns("parts", "__pycache__", ".*"))
    register = report.collect(root / "results")
    chs = chapters(root, register)
    for ch in chs:
        _stage_chapter(ch, dest / "notebooks" / ch.rel, root)
    plain = {}
    for part in dict.fromkeys(ch.part for ch in chs):
        intro, page = book / "parts" / f"{part}.md", _part_page(part)
        text = intro.read_text(encoding="utf-8") if intro.is_file() else f"# {report.paper_name(part)}\n"
        plain[part] = plain_words(text)
        link = "../" * page.count("/") + "register.md"
        text = _with_counts(report.fill_findings(text, register, link), register, part)
        text = _strip_anchors(text, link)
        entries = [f"{_nav_title(ch)} <{Path(ch.rel).stem}>" for ch in chs if ch.part == part]
        text += "\n```{toctree}\n:maxdepth: 1\n\n" + "\n".join(entries) + "\n```\n"
        atomic_write_bytes(dest / page, text.encode("utf-8"))
    shutil.copytree(root / "figures", dest / "figures")
    for path in report.results_files(root / "results"):
        target = dest / "results" / path.relative_to(root / "results")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    staged = report.collect(dest / "results")  # links to the staged chapters, figures and results
    text = report.render(dest / "results", dest / "register.md", staged, style="html")
    atomic_write_bytes(dest / "register.md", text.encode("utf-8"))
    summary = _landing_findings(register, plain, parts=[p for p in dict.fromkeys((*_PART_ORDER, *plain)) if p in plain])
    generated = dest / "_generated"
    atomic_write_bytes(generated / "findings.md", ("\n".join(summary) + "\n").encode("utf-8"))
    parts = [p for p in ("baseline", *papers.PAPERS, "benchmark") if any(ch.part == p for ch in chs)]
    toc = ["```{toctree}", ":caption: The chapters", ":maxdepth: 1", ""]
    toc += [_part_page(p).removesuffix(".md") for p in parts] + ["```", ""]
    atomic_write_bytes(generated / "parts.md", "\n".join(toc).encode("utf-8"))
    for rel, text in _api_pages().items():
        atomic_write_bytes(dest / rel, text.encode("utf-8"))
    vendor(dest / "_static", cache, packages)
    return dest


# --------------------------------------------------------------------------- building, serving


def build(root: Path = PROJECT_ROOT, out: Path = OUTPUT_DIR, stage_dir: Path = STAGE_DIR, *,
          quiet: bool = True, packages: Sequence[Vendored] = VENDORED) -> Path:
    """Stage the sources and run Sphinx (HTML, warnings as errors) into ``out``; returns it.
    MyST-NB's execution is off (the chapters come executed), and ``-W`` makes a broken
    cross-reference or a missing image fail the build."""
    src = stage(root, stage_dir, packages=packages)
    doctrees = Path(stage_dir).parent / "book-doctrees"
    for stale in (Path(out), doctrees):  # a fresh build each time: nothing of an older one lingers
        if stale.exists():
            shutil.rmtree(stale)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-d", str(doctrees),
           *(["-q"] if quiet else []), str(src), str(out)]
    done = subprocess.run(cmd, cwd=src)
    if done.returncode != 0:
        raise BookError(f"Sphinx failed (exit {done.returncode}); its warnings are above")
    return Path(out)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # one line per request is noise for a reader
        pass


class _Server(http.server.ThreadingHTTPServer):
    """A browser that drops a connection (a reload, a cancelled prefetch) is not an error: the
    standard server prints a ConnectionResetError traceback for each; any other error is one line."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, TimeoutError)):
            return
        print(f"fldp book: error serving {client_address[0]}: {type(exc).__name__}: {exc}", file=sys.stderr)


def serve(directory: Path = OUTPUT_DIR, port: int = 8000, host: str = "127.0.0.1") -> None:
    """Serve the built book on ``http://host:port/`` until interrupted (loopback only)."""
    if not (Path(directory) / "index.html").is_file():
        raise BookError(f"{directory} holds no built book: run `make book` (or `fldp book`) first")
    handler = functools.partial(_Quiet, directory=str(directory))
    with _Server((host, port), handler) as server:
        print(f"the book: http://{host}:{server.server_address[1]}/ (Ctrl-C stops the server)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
