"""Where outputs go and how they are written: the output root of each mode, atomic writes, and
the one conversion of results to JSON values.

Layout (``root`` is the project root, or ``$FLDP_OUTPUT_DIR`` when set)::

    full mode (fldp reproduce):   root/figures/<paper>/<name>.png    root/results/<paper>/<notebook>.json
    full mode (anywhere else):    root/build/interactive/figures/... root/build/interactive/results/...
    quick mode:                   root/build/quick/figures/...       root/build/quick/results/...

Every file is written to a temporary name beside it and moved into place (``os.replace``), so an
interrupted run never leaves a half-written file.  :func:`plain` turns numpy and torch values into
plain ones and keeps non-finite floats (the run store writes them as JSON's NaN/Infinity tokens,
which read back exactly); :func:`strict` spells them out (NaN as null, infinities as "inf" /
"-inf") for the results files, which the book and other readers parse as strict JSON.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from fldp import PROJECT_ROOT

__all__ = ["PROJECT_ROOT", "PUBLISH_ENV", "publishing", "output_root", "interactive", "results_path",
           "atomic_write_bytes", "atomic_write_json", "plain", "strict", "canonical"]

_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read the process umask (there is no getter) and restore it

#: Set to 1 by a full-mode ``fldp reproduce``: only then are the committed ``results/`` and
#: ``figures/`` written (or by hand, to say so explicitly: ``FLDP_PUBLISH=1``).
PUBLISH_ENV = "FLDP_PUBLISH"


def publishing() -> bool:
    """Whether a full-mode run may write the committed ``results/`` and ``figures/``."""
    return os.environ.get(PUBLISH_ENV, "").lower() in ("1", "true", "yes")


def output_root(quick: bool) -> Path:
    """Root under which ``figures/`` and ``results/`` are written: ``$FLDP_OUTPUT_DIR`` when set;
    ``build/quick`` in quick mode; the project root in a full-mode ``fldp reproduce``
    (:func:`publishing`); otherwise ``build/interactive``, so that a notebook run in JupyterLab
    never rewrites what REPORT.md is rendered from."""
    env = os.environ.get("FLDP_OUTPUT_DIR")
    if env:
        return Path(env)
    if quick:
        return PROJECT_ROOT / "build" / "quick"
    return PROJECT_ROOT if publishing() else PROJECT_ROOT / "build" / "interactive"


def interactive(quick: bool) -> bool:
    """A full-mode run outside ``fldp reproduce`` (its outputs go to ``build/interactive``)."""
    return not quick and not os.environ.get("FLDP_OUTPUT_DIR") and not publishing()


def results_path(paper: str, notebook: str, *, quick: bool) -> Path:
    """``<output_root(quick)>/results/<paper>/<notebook>.json``: where a notebook's results go."""
    return output_root(quick) / "results" / paper / f"{notebook}.json"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder + rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(fd, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the mode open() would
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def plain(obj: Any) -> Any:
    """``obj`` as plain JSON values: dicts (keys as strings), lists, numbers, strings, None; numpy
    and torch values through ``tolist``; a Path as its text, anything else as its repr.
    Non-finite floats stay floats (see :func:`strict`)."""
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if hasattr(obj, "tolist"):  # numpy arrays and scalars, torch tensors
        return plain(obj.tolist())
    if isinstance(obj, (bool, int, float, str)) or obj is None:
        return obj
    if isinstance(obj, Path):
        return str(obj)
    return repr(obj)


def strict(obj: Any) -> Any:
    """:func:`plain` values with NaN as None and the infinities as ``"inf"`` / ``"-inf"``."""
    obj = plain(obj)
    if isinstance(obj, dict):
        return {k: strict(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [strict(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    return obj


def canonical(obj: Any) -> str:
    """Canonical JSON of :func:`plain` values (sorted keys, no spaces, non-finite floats as JSON's
    NaN/Infinity tokens): what the run store and the run archive hash and write."""
    return json.dumps(plain(obj), sort_keys=True, separators=(",", ":"), allow_nan=True)


def atomic_write_json(path: Path, obj: Any) -> None:
    """``obj`` as strict JSON (:func:`strict`), written atomically."""
    text = json.dumps(strict(obj), indent=2, sort_keys=False, allow_nan=False)
    atomic_write_bytes(Path(path), (text + "\n").encode())
