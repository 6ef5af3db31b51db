"""Shared test set-up: headless plotting, outputs in a temporary folder."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.pop("FLDP_RUN_MANIFEST", None)  # only `fldp reproduce` sets it, per notebook

# Under pytest-xdist, share the cores between workers instead of oversubscribing them.
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _workers > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // _workers)))

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def output_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``FLDP_OUTPUT_DIR`` at a fresh folder so no test writes into the project."""
    out = tmp_path / "out"
    monkeypatch.setenv("FLDP_OUTPUT_DIR", str(out))
    return out
