"""Same seed, same numbers, whatever the number of workers: two quick-mode chapters reproduced
with ``--jobs 1`` (runs in the kernel) and ``--jobs 2`` (one shared Dask cluster of two workers for
both notebooks' runs) give identical results files, timings aside."""
from __future__ import annotations

import pytest

import json
import os
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ("li2021/02_convergence", "zhou/02_laplace")  # both train through the run store


def _reproduce(out: Path, jobs: int) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "FLDP_BACKEND", "DASK_SCHEDULER_ADDRESS")}
    env["FLDP_OUTPUT_DIR"] = str(out)
    args = [sys.executable, "-m", "fldp", "reproduce", "--quick", "--jobs", str(jobs), "--build-dir", str(out / "build")]
    for c in CHAPTERS:
        args += ["--only", c]
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def _numbers(out: Path, chapter: str) -> dict:
    saved = json.loads((out / "results" / f"{chapter}.json").read_text())
    for timing in ("wall_time_s", "runs"):
        saved.pop(timing)
    return saved


@pytest.mark.slow
def test_one_and_two_workers_give_the_same_numbers(tmp_path):
    one, two = _reproduce(tmp_path / "one", 1), _reproduce(tmp_path / "two", 2)
    assert one.returncode == 0, one.stdout + one.stderr
    assert two.returncode == 0, two.stdout + two.stderr
    assert "one Dask cluster of 2 worker(s)" in two.stdout and "Dask cluster" not in one.stdout
    for chapter in CHAPTERS:
        a, b = _numbers(tmp_path / "one", chapter), _numbers(tmp_path / "two", chapter)
        assert a["claims"] and a == b, chapter
        # the runs really went through the store (and, with two workers, the shared cluster)
        costs = json.loads((tmp_path / "two" / "results" / "costs" / f"{chapter}.json").read_text())
        assert costs["runs"] and all(r["ran"] for r in costs["runs"])
    # the second reproduction's plan knows the runs now: all stored, the notebooks' own time left
    plan = subprocess.run([sys.executable, "-m", "fldp", "reproduce", "--quick", "--plan", *sum((["--only", c] for c in CHAPTERS), [])],
                          cwd=ROOT, env={**os.environ, "FLDP_OUTPUT_DIR": str(tmp_path / "two")},
                          capture_output=True, text=True, timeout=300)
    assert plan.returncode == 0, plan.stderr
    for chapter in CHAPTERS:
        row = next(line for line in plan.stdout.splitlines() if line.startswith(chapter))
        runs, stored, to_run = row.split()[1:4]
        assert int(runs) > 0 and stored == runs and to_run == "0", row
    assert "fldp reproduce:" not in plan.stdout  # --plan runs nothing
