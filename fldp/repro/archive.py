"""The run archive: the raw runs behind the committed full-mode results, committed beside them.

``results/archive/<paper>/<notebook>.jsonl`` holds one line per run the notebook used: its key,
function, code version, full configuration and result, with a digest of the result, as canonical
JSON, sorted by key.  Numbers only: what a run cost stays in ``results/costs/``, so re-running the
same code rewrites nothing here.  Plain JSON lines, not compressed files: a diff shows which runs
changed, and git compresses them in its packs (zlib, with deltas between versions), which a
compressed file would defeat.  A fresh clone's run store reads the archive under its local one
(:class:`Archive`, :func:`fldp.repro.store.default_store`); a damaged line (truncated, edited, a
key that does not match its content) is reported with its file and line and never read as a run.
"""
from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence

from fldp.repro.paths import PROJECT_ROOT, atomic_write_bytes, canonical

__all__ = ["ARCHIVE_DIR", "FIELDS", "LIBRARIES", "PENDING", "Archive", "Damaged", "checkpoint", "environment",
           "environment_differences", "recorded_environment", "environment_changes", "line", "write"]

#: Where the archive lives in a clone.
ARCHIVE_DIR = PROJECT_ROOT / "results" / "archive"


FIELDS = ("key", "fn", "version", "config", "result")

#: The folder of the archive that keeps computed runs no notebook has saved yet (:func:`checkpoint`).
PENDING = "_pending"

#: The libraries whose numerics decide a run's numbers (recorded with each notebook's cost record).
LIBRARIES = ("torch", "numpy", "scipy", "dp-accounting")


def environment() -> dict:
    """What a run's exact numbers depend on besides fldp's code: Python, the libraries of
    :data:`LIBRARIES` (installed versions), the processor architecture and the instruction set
    torch's kernels dispatch on (``cpu``: ``torch.backends.cpu.get_cpu_capability()``, e.g. AVX2 or
    AVX512; numpy, MKL and oneDNN choose their kernels by it too, so float sums round differently
    from one processor to another).  Kept in each notebook's
    cost record, not in the archive: a new library version must not rewrite the archive when the
    numbers stay the same, but when ``fldp store verify`` finds a difference it says whether the
    environment changed too."""
    import platform
    from importlib import metadata

    import torch

    env = {"python": platform.python_version(), "machine": platform.machine(),
           "cpu": torch.backends.cpu.get_cpu_capability()}
    for name in LIBRARIES:
        try:
            env[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            env[name] = None
    return env


def environment_differences(recorded: Optional[dict], here: Optional[dict] = None) -> list[str]:
    """The entries of ``here`` (default: this environment) that differ from ``recorded``, as
    "torch 2.2.0 -> 2.4.1", and the recorded ``partly`` note (runs computed in several
    environments); ["not recorded"] when ``recorded`` is None or empty."""
    if not recorded:
        return ["not recorded"]
    here = environment() if here is None else here
    out = [f"{k} {recorded.get(k)} -> {v}" for k, v in here.items() if recorded.get(k) != v]
    if recorded.get("partly"):  # a notebook whose runs were computed in more than one environment
        out.append(str(recorded["partly"]))
    return out


def recorded_environment(cost_record: Path) -> Optional[dict]:
    """The environment a notebook's cost record (``results/costs/<paper>/<notebook>.json``) keeps:
    the one its runs were computed in; None when there is no readable record."""
    try:
        return json.loads(Path(cost_record).read_text(encoding="utf-8")).get("environment")
    except (OSError, ValueError, AttributeError):
        return None


def environment_changes(costs: Path, notebook: str) -> list[str]:
    """:func:`environment_differences` between this environment and the one ``notebook``'s runs
    were computed in (its cost record under ``costs``, the ``results/costs/`` beside the archive):
    empty where they were computed here, so their numbers must be exact."""
    return environment_differences(recorded_environment(Path(costs) / f"{notebook}.json"))


def _digest(run: dict) -> str:
    """SHA-256 of a run's canonical JSON (key, function, version, configuration, result): any edit of
    a line, its key included, changes it."""
    return hashlib.sha256(canonical({k: run[k] for k in FIELDS}).encode()).hexdigest()


def line(run) -> str:
    """One archive line for a run (a dict or a :class:`fldp.repro.store.Record`: its key, fn,
    version, config and result; no timings), as canonical JSON with its digest."""
    body = {k: (run[k] if isinstance(run, dict) else getattr(run, k)) for k in FIELDS}
    return canonical({**body, "digest": _digest(body)})


def write(path: Path, runs: Iterable) -> Path:
    """Write ``runs`` (dicts or store Records) as an archive file, sorted by key, each run once; atomic."""
    lines = {}
    for run in runs:
        text = line(run)
        body = json.loads(text)
        lines[(body["key"], body["fn"])] = text
    body = "".join(lines[k] + "\n" for k in sorted(lines))
    atomic_write_bytes(Path(path), body.encode("utf-8"))
    return Path(path)


@dataclass(frozen=True)
class Damaged:
    """An archive line that is not a run: where it is and why."""

    path: Path
    lineno: int
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.lineno}: {self.why}"


@dataclass
class Archive:
    """The archive files under ``root`` (``<paper>/<notebook>.jsonl``), indexed on first use.

    :meth:`get` gives a run by function and key (a dict: key, fn, version, config, result);
    :attr:`damaged` lists the lines that are not runs."""

    root: Path
    _index: Optional[dict] = field(default=None, repr=False)
    damaged: list = field(default_factory=list, repr=False)

    def files(self) -> list[Path]:
        """The archive files, those of ``_pending/`` first: where a notebook's file holds the same
        run, the index keeps the notebook's."""
        return sorted(Path(self.root).glob("*/*.jsonl"), key=lambda p: (p.parent.name != PENDING, p))

    def _build(self) -> dict:
        index: dict = {}
        self.damaged = []
        for path in self.files():
            with open(path, encoding="utf-8") as fh:
                for lineno, text in enumerate(fh, 1):
                    if not text.strip():
                        continue
                    try:
                        run = json.loads(text)
                        if _digest(run) != run["digest"]:
                            raise ValueError("its content does not match its digest (edited, or another run's key)")
                    except (ValueError, KeyError, TypeError, AttributeError) as exc:
                        self.damaged.append(Damaged(path, lineno, f"{type(exc).__name__}: {exc}"))
                        continue
                    run = {k: run[k] for k in FIELDS}
                    index[(run["fn"], run["key"])] = (run, path.relative_to(self.root).with_suffix("").as_posix())
        for d in self.damaged:
            warnings.warn(f"run archive: {d} (not read as a run)", RuntimeWarning, stacklevel=3)
        return index

    @property
    def index(self) -> dict:
        if self._index is None:
            self._index = self._build()
        return self._index

    def get(self, fn_name: str, key: str):
        hit = self.index.get((fn_name, key))
        return None if hit is None else hit[0]

    def notebook_of(self, fn_name: str, key: str) -> Optional[str]:
        hit = self.index.get((fn_name, key))
        return None if hit is None else hit[1]

    def runs(self, only: Sequence[str] = ()) -> Iterator[tuple[str, dict]]:
        """``(notebook, run)`` of every archived run (of the notebooks whose ``<paper>/<notebook>``
        contains one of ``only``)."""
        for run, nb in self.index.values():
            if not only or any(pat in nb for pat in only):
                yield nb, run


def checkpoint(records: Iterable, root: Path = ARCHIVE_DIR) -> dict:
    """Keep the computed runs that no notebook's archive file holds yet, so that a notebook whose
    runs take longer than one sitting can be committed part by part (``fldp store checkpoint``).

    ``records`` (the local run store's :class:`fldp.repro.store.Record` s) that no
    ``<paper>/<notebook>.jsonl`` under ``root`` holds are added to ``<root>/_pending/<fn>.jsonl``
    (one file per run function, the same line form, sorted by key); pending runs that a notebook's
    file now holds are dropped, and a file left empty is removed.  The store reads pending runs like
    any archived run (the folder is one more ``*/*.jsonl``; a notebook's own line wins), so the next
    sitting re-executes the notebook from them and computes only the rest; when the notebook saves,
    its runs move into its own file.  Returns the counts: added, dropped, pending, files."""
    root = Path(root)
    arch = Archive(root)
    mine = f"{PENDING}/"
    held = {k for k, (_, nb) in arch.index.items() if not nb.startswith(mine)}
    pending = {k: run for k, (run, nb) in arch.index.items() if nb.startswith(mine)}
    shadowed = 0  # pending lines whose run a notebook's file holds now (the index kept the notebook's)
    for path in sorted((root / PENDING).glob("*.jsonl")):
        for text in path.read_text(encoding="utf-8").splitlines():
            try:
                body = json.loads(text)
                shadowed += (body["fn"], body["key"]) in held
            except (ValueError, KeyError, TypeError):
                continue  # a damaged line: the index named it; it is not carried over
    added = 0
    for rec in records:
        k = (rec.fn, rec.key)
        if k not in held and k not in pending:
            pending[k] = rec
            added += 1
    by_fn: dict = {}
    for (fn, _), run in pending.items():
        by_fn.setdefault(fn, []).append(run)
    wanted = {root / PENDING / f"{fn.replace(':', '.')}.jsonl": runs for fn, runs in by_fn.items()}
    for path in sorted((root / PENDING).glob("*.jsonl")):
        if path not in wanted:
            path.unlink()
    for path, runs in wanted.items():
        write(path, runs)
    if (root / PENDING).is_dir() and not any((root / PENDING).iterdir()):
        (root / PENDING).rmdir()
    return {"added": added, "dropped": shadowed, "pending": len(pending), "files": len(wanted)}
