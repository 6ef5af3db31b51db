"""Shared test set-up: headless plotting, outputs in a temporary folder, Hypothesis profiles.

Hypothesis profiles: ``HYPOTHESIS_PROFILE=ci`` (the default: few examples, derandomized, no
deadline, so CI is reproducible) or ``HYPOTHESIS_PROFILE=thorough`` (many random examples, for
a longer local run), e.g. ``HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_properties_*.py``.
"""
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

# Hypothesis profiles (tests/test_properties_*.py).  HYPOTHESIS_PROFILE chooses one:
#   ci (the default): few examples per property, derandomized (the same examples on every run,
#       so CI is reproducible), no example database, no deadline;
#   thorough: many examples per property, random, for a longer local run:
#       HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_properties_*.py
# Properties whose examples are expensive ask for a multiple of the profile's count through
# property_examples.budget(), which scales with the same variable.
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - hypothesis is in the dev extra
    pass
else:
    _quiet = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
    settings.register_profile("ci", max_examples=10, deadline=None, derandomize=True, database=None,
                              suppress_health_check=_quiet, print_blob=True)
    settings.register_profile("thorough", max_examples=300, deadline=None, suppress_health_check=_quiet,
                              print_blob=True)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
