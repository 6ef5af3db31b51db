"""A resumable store of finished runs: one JSON file per run, keyed by a content hash of the run.
A *run* is a call ``fn(**config)`` of a top-level function that returns JSON-able numbers, named
``"module:function"`` (:func:`fn_name`) so that a worker process on any machine can import and
call it; its key (:func:`run_key`) is the SHA-256 of the function's name, its whole configuration
(the data split, the model, every setting and the seed are all arguments of ``fn``) and the code
version that matters (:func:`code_version`).  :class:`RunStore` writes each finished run
atomically with a digest of its result, so that a reader never sees a half-written file and a
damaged or foreign file is reported and rerun, never read as a result; :meth:`RunStore.frame`
gives the store as a pandas table.  :func:`default_store` says where the store lives (not
committed), and ``$FLDP_FRESH=1`` (``fldp reproduce --fresh``) makes :meth:`RunStore.run` ignore
what is stored and run again.
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Union

from fldp import __version__, counting
from fldp.repro.paths import PROJECT_ROOT, atomic_write_bytes, canonical, interactive, output_root

__all__ = [
    "FORMAT", "FRESH_ENV", "fn_name", "resolve", "canonical", "normalise", "code_version",
    "full_config", "run_key", "Record", "usage", "used_runs", "manifest_key", "manifest", "RunStore", "fresh_default", "default_store"
]

FORMAT = 1
FRESH_ENV = "FLDP_FRESH"


def fn_name(fn: Union[Callable, str]) -> str:
    """``"module:qualname"`` of a top-level function (ValueError for lambdas and local functions)."""
    if isinstance(fn, str):
        resolve(fn)
        return fn
    name = f"{fn.__module__}:{fn.__qualname__}"
    if "<" in fn.__qualname__ or fn.__module__ == "__main__":
        raise ValueError(f"fn={name} cannot be stored: a run function must be a top-level function of an "
                         "importable module (worker processes import it by name)")
    return name


def resolve(name: str) -> Callable:
    """The function named ``"module:qualname"``."""
    module, _, qual = name.partition(":")
    if not module or not qual:
        raise ValueError(f"fn={name!r} is not of the form 'module:function'")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def normalise(obj: Any) -> Any:
    """``obj`` as it reads back from the store (arrays become lists), so that a fresh result and a
    stored one are the same value."""
    return json.loads(canonical(obj))


def code_version(fn: Union[Callable, str]) -> str:
    """The code version a run's key includes: fldp's version and the function's ``store_version``
    attribute (default 1; bump it when a change alters the numbers a run returns)."""
    f = resolve(fn) if isinstance(fn, str) else fn
    return f"fldp {__version__}; {fn_name(fn)} v{getattr(f, 'store_version', 1)}"


def _key_form(obj: Any) -> Any:
    """Equal numbers hash alike: 20.0 (a notebook's float) and 20 (typed on the command line)."""
    if isinstance(obj, float) and obj.is_integer() and abs(obj) < 2**53:
        return int(obj)
    if isinstance(obj, dict):
        return {k: _key_form(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_key_form(v) for v in obj]
    return obj


def full_config(fn: Union[Callable, str], config: Mapping[str, Any], *, omit=()) -> dict:
    """``config`` with every other argument of ``fn`` at its default (``omit``: names left out,
    e.g. the seed a caller adds per run); TypeError naming unknown or missing arguments."""
    f = resolve(fn) if isinstance(fn, str) else fn
    params = inspect.signature(f).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return dict(config)
    unknown = sorted(set(config) - set(params))
    missing = [n for n, p in params.items() if p.default is p.empty and n not in config and n not in omit]
    if unknown or missing:
        raise TypeError(f"{fn_name(fn)}: unknown setting(s) {unknown}, missing setting(s) {missing}")
    return {n: config.get(n, p.default) for n, p in params.items() if n not in omit}


def _keyed(fn: Union[Callable, str], config: dict) -> dict:
    """``config`` as its key reads it: an argument the run function gained after runs were stored
    (listed in the function's ``added_later``) is left out while at its default, so the runs
    stored before it keep their keys and stay valid (they ran at that default)."""
    f = resolve(fn) if isinstance(fn, str) else fn
    later = getattr(f, "added_later", ())
    if not later:
        return config
    params = inspect.signature(f).parameters
    return {k: v for k, v in config.items() if not (k in later and v == params[k].default)}


def run_key(fn: Union[Callable, str], config: Mapping[str, Any]) -> str:
    """The content hash that names a run (32 hex digits of SHA-256): the function, its whole
    configuration with the defaults filled in (so spelling a default out changes nothing), and
    the code version; 20 and 20.0 are one value."""
    ident = {"fn": fn_name(fn), "config": _key_form(normalise(_keyed(fn, full_config(fn, config)))),
             "version": code_version(fn)}
    return hashlib.sha256(canonical(ident).encode()).hexdigest()[:32]


def _digest(result_json: str) -> str:
    return hashlib.sha256(result_json.encode()).hexdigest()


@dataclass(frozen=True)
class Record:
    """One finished run as stored."""

    key: str
    fn: str
    config: dict
    result: Any
    seconds: float
    finished: str
    version: str
    work: Optional[dict] = None  # the engine's work (fldp.repro.cost; {} when the run trains nothing); None: stored before counting
    cpu_s: Optional[float] = None  # CPU seconds of the run (None: stored before they were kept)
    archived: bool = False  # read from the run archive, which keeps no timings (seconds 0, finished None)


_USAGE: dict[str, Any] = {"ran": 0, "reused": 0, "seconds": 0.0, "first": None, "last": None, "waited": 0.0}
_COUNTED: set = set()  # (fn, key) of the runs in _USAGE: a run read back twice counts once
_RUNS: list = []  # the runs of _USAGE, for manifest()
_USED: dict = {}  # (fn, key) -> Record of the runs of _USAGE, for used_runs() (the run archive)


def _count(rec: "Record", *, reused: bool) -> None:
    if (rec.fn, rec.key) in _COUNTED:
        return
    _COUNTED.add((rec.fn, rec.key))
    _USED[(rec.fn, rec.key)] = rec
    _RUNS.append({"fn": rec.fn, "config": rec.config, "seconds": round(float(rec.seconds), 3),
                  "cpu_s": rec.cpu_s, "work": rec.work, "ran": not reused, **({"archived": True} if rec.archived else {})})
    _USAGE["reused" if reused else "ran"] += 1
    _USAGE["seconds"] += float(rec.seconds)
    if rec.finished:  # an archived run has no time (fldp.repro.archive keeps numbers only)
        _USAGE["first"] = min(filter(None, (_USAGE["first"], rec.finished)))
        _USAGE["last"] = max(filter(None, (_USAGE["last"], rec.finished)))


def usage() -> dict[str, Any]:
    """The distinct runs this process took from run stores: ``ran`` (computed and saved here),
    ``reused`` (read back; a run read twice counts once), ``seconds`` (what they took when computed, all of them) and the ``first`` and
    ``last`` times one of them finished, and ``waited``, the seconds this process spent computing
    runs or waiting for them (:func:`waited`).  :meth:`fldp.repro.results.Recorder.save` keeps it with a
    notebook's results, so that a chapter says when its numbers were computed, not only when the
    notebook last ran."""
    return dict(_USAGE)


def waited(seconds: float) -> None:
    """Count ``seconds`` this process spent computing runs or waiting for workers to (see :func:`usage`)."""
    _USAGE["waited"] += float(seconds)


def used_runs() -> list[Record]:
    """The distinct runs of :func:`usage` with their results, in the order they were first taken:
    what :meth:`fldp.repro.results.Recorder.save` writes to the notebook's run archive."""
    return list(_USED.values())


def manifest_key(run: Mapping[str, Any]) -> tuple[str, str]:
    """A :func:`manifest` entry's identity (a cost record's run): its function and canonical
    configuration, to find the same run in another record without resolving the function."""
    return run["fn"], canonical(run["config"])


def manifest() -> list[dict]:
    """The distinct runs of :func:`usage`, each ``{"fn", "config", "seconds", "cpu_s", "work", "ran"}``: what
    a notebook needs from the store, which the reproduction's plan reads (:mod:`fldp.repro.cost`)."""
    return [dict(r) for r in _RUNS]


class RunStore:
    """Finished runs under ``root``, one file per run, ``<root>/<module.function>/<key>.json``.

    Each finished run is written atomically (temporary file + rename; a writer killed mid-write
    leaves only a temporary file, never read and removed by a later sweep once it is an hour
    old, :meth:`remove_stale_temporaries`; a run that cannot be written, e.g. on a full disk, is
    reported as failed) with a digest of its result, so a reader never sees a half-written file,
    and a damaged or foreign file (truncated, edited, or holding another key) is detected,
    reported and rerun, never read as a result (:meth:`read`).  ``archive``: a read-only
    :class:`fldp.repro.archive.Archive` under this store (a fresh clone's committed runs): a run not
    in ``root`` is looked up there; what is computed is written to ``root`` only."""

    def __init__(self, root: Union[str, Path], archive=None):
        self.root = Path(root)
        self.archive = archive

    def __repr__(self) -> str:
        return f"RunStore({str(self.root)!r}" + (f", archive={str(self.archive.root)!r})" if self.archive else ")")

    def _path(self, name: str, key: str) -> Path:
        return self.root / name.replace(":", ".") / f"{key}.json"

    def path(self, fn: Union[Callable, str], config: Mapping[str, Any]) -> Path:
        return self._path(fn_name(fn), run_key(fn, config))

    def read(self, path: Path) -> Optional[Record]:
        """The record at ``path``, or None when it is missing or damaged (then a warning names it).
        A file holds the run its name (the key) says, or it is damaged."""
        try:
            saved = json.loads(Path(path).read_text(encoding="utf-8"))
            ok = (saved.get("format") == FORMAT and _digest(canonical(saved["result"])) == saved["digest"]
                  and saved["key"] == Path(path).stem)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            ok, saved = False, exc
        if not ok:
            warnings.warn(f"run store: {path} is damaged or not a run of this key ({saved if isinstance(saved, Exception) else 'digest or key mismatch'}); it will be run again",
                          RuntimeWarning, stacklevel=2)
            return None
        return Record(saved["key"], saved["fn"], saved["config"], saved["result"], saved["seconds"],
                      saved["finished"], saved["version"], saved.get("work"), saved.get("cpu_s"))

    def find(self, fn: Union[Callable, str], config: Mapping[str, Any]) -> Optional[Record]:
        """The finished run ``fn(**config)`` from this store or, when it is not there, from its
        archive; None when neither holds it.  Not counted in :func:`usage` (see :meth:`load`)."""
        name, key = fn_name(fn), run_key(fn, config)
        rec = self.read(self._path(name, key))
        if rec is None and self.archive is not None:
            run = self.archive.get(name, key)
            if run is not None:
                rec = Record(run["key"], run["fn"], run["config"], run["result"], 0.0, None, run["version"], None, None,
                             archived=True)
        return rec

    def holds(self, fn: Union[Callable, str], config: Mapping[str, Any]) -> bool:
        """Whether :meth:`find` would find the run (without reading a local file's result)."""
        name, key = fn_name(fn), run_key(fn, config)
        if self._path(name, key).exists():
            return True
        return self.archive is not None and self.archive.get(name, key) is not None

    def load(self, fn: Union[Callable, str], config: Mapping[str, Any]) -> Optional[Record]:
        """The finished run ``fn(**config)`` (:meth:`find`), or None (a run found counts in
        :func:`usage` as reused)."""
        rec = self.find(fn, config)
        if rec is not None:
            _count(rec, reused=True)
        return rec

    def save(self, fn: Union[Callable, str], config: Mapping[str, Any], result: Any, seconds: float,
             work: Optional[dict] = None, cpu_s: Optional[float] = None) -> Record:
        """Write a finished run atomically (``work``, ``cpu_s``: what it cost, :mod:`fldp.counting`);
        returns it as it reads back."""
        text = canonical(result)
        rec = Record(run_key(fn, config), fn_name(fn), normalise(dict(config)), json.loads(text), float(seconds),
                     time.strftime("%Y-%m-%dT%H:%M:%S%z"), code_version(fn), None if work is None else dict(work),
                     None if cpu_s is None else round(float(cpu_s), 3))
        body = {"format": FORMAT, "key": rec.key, "fn": rec.fn, "version": rec.version, "config": rec.config,
                "seconds": rec.seconds, "finished": rec.finished, "work": rec.work, "cpu_s": rec.cpu_s,
                "digest": _digest(text), "result": rec.result}
        atomic_write_bytes(self._path(rec.fn, rec.key), (json.dumps(body, allow_nan=True) + "\n").encode())
        _count(rec, reused=False)
        return rec

    def run(self, fn: Callable, config: Mapping[str, Any], *, fresh: Optional[bool] = None) -> Any:
        """``fn(**config)`` from the store, or computed in this process, stored and returned (with
        its counted work and CPU seconds, :mod:`fldp.counting`).  Where a run should go to a
        cluster instead, :func:`fldp.repro.sweep.run_one` chooses."""
        fresh = fresh_default() if fresh is None else fresh
        rec = None if fresh else self.load(fn, config)
        if rec is None:
            t0 = time.perf_counter()
            with counting.measure() as m:
                result = fn(**config)
            rec = self.save(fn, config, result, time.perf_counter() - t0, m.work, m.cpu_s)
            waited(rec.seconds)
        return rec.result

    def remove_stale_temporaries(self, older_than_s: float = 3600.0) -> list:
        """Delete the temporary files a writer killed mid-write left behind (``.<key>.json.*.tmp``,
        older than ``older_than_s``, so that a concurrent writer's file in progress is never
        touched); returns their paths.  They are never read as runs in any case."""
        removed, now = [], time.time()
        for tmp in self.root.glob("*/.*.tmp"):
            try:
                if now - tmp.stat().st_mtime > older_than_s:
                    tmp.unlink()
                    removed.append(tmp)
            except OSError:  # gone already (another process), or not ours to remove
                pass
        return removed

    def records(self) -> Iterator[Record]:
        """Every readable run in the store (damaged files are warned about and skipped)."""
        for path in sorted(self.root.glob("*/*.json")):
            rec = self.read(path)
            if rec is not None:
                yield rec

    def frame(self):
        """The store as a pandas DataFrame: fn, key, seconds, finished, ``config.*`` and the
        scalar ``result.*`` fields (lists, e.g. loss curves, stay in ``result``)."""
        import pandas as pd

        rows = []
        for r in self.records():
            scalars = {f"result.{k}": v for k, v in (r.result.items() if isinstance(r.result, dict) else [])
                       if isinstance(v, (int, float, str, bool)) or v is None}
            rows.append({"fn": r.fn, "key": r.key, "seconds": r.seconds, "finished": r.finished,
                         **{f"config.{k}": v for k, v in r.config.items()}, **scalars, "result": r.result})
        return pd.DataFrame(rows)


def fresh_default() -> bool:
    """Whether ``$FLDP_FRESH`` (``fldp reproduce --fresh``) asks to ignore what is stored."""
    return os.environ.get(FRESH_ENV, "").lower() in ("1", "true", "yes")


def default_store(quick: bool) -> RunStore:
    """``results/runs/`` in full mode (an interactive run shares it: runs are keyed by their whole
    configuration, and the store is not committed), ``build/quick/results/runs/`` in quick mode,
    ``$FLDP_OUTPUT_DIR/results/runs`` when that is set.  In full mode the committed run archive
    (``results/archive/``, :mod:`fldp.repro.archive`) lies under it, read-only."""
    from fldp.repro import archive

    root = output_root(quick)
    return RunStore((PROJECT_ROOT if interactive(quick) else root) / "results" / "runs",
                    archive=None if quick else _shared_archive(archive.ARCHIVE_DIR))


_ARCHIVES: dict = {}


def _shared_archive(root: Path):
    """One :class:`fldp.repro.archive.Archive` per folder and process (its index is built once)."""
    from fldp.repro import archive

    if root not in _ARCHIVES:
        _ARCHIVES[root] = archive.Archive(root)
    return _ARCHIVES[root]
