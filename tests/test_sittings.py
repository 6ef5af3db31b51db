"""benchmarks/sittings.py: a notebook's fresh work counts every run it uses at the CPU time of the
sitting that computed it, also when its last execution read them back from the archive."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import load_script

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "sittings.py"


@pytest.fixture
def sittings(tmp_path, monkeypatch):
    mod = load_script(SCRIPT, "sittings_under_test")
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    monkeypatch.setattr(mod, "COSTS", tmp_path / "results" / "costs")
    return mod


def _run(seed, cpu, ran):
    return {"fn": "pkg.mod:run", "config": {"seed": seed}, "seconds": cpu * 1.5, "cpu_s": cpu, "ran": ran}


def _write(root, nb, rec):
    path = root / "results" / "costs" / f"{nb}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec))


def test_work_counts_archived_runs_at_their_computed_cost(sittings, tmp_path, monkeypatch, capsys):
    now = {
        # re-executed from the archive: no run computed, the runs keep their sitting's CPU seconds
        "p/a": {"runs": [_run(0, 100.0, False), _run(1, 50.0, False)], "kernel_cpu_s": 4.0, "wall_time_s": 6.0},
        # half computed in its last execution
        "p/b": {"runs": [_run(0, 10.0, True), _run(1, 20.0, False)], "kernel_cpu_s": 1.0, "wall_time_s": 25.0},
        # unchanged since REF: left out
        "p/c": {"runs": [_run(0, 7.0, True)], "kernel_cpu_s": 1.0, "wall_time_s": 8.0},
    }
    before = {
        "results/costs/p/a.json": {"runs": [_run(0, 80.0, True), _run(1, 40.0, True)], "kernel_cpu_s": 3.0},
        "results/costs/p/b.json": None,  # no record at REF: unknown to the plan
        "results/costs/p/c.json": now["p/c"],
    }
    for nb, rec in now.items():
        _write(tmp_path, nb, rec)
    monkeypatch.setattr(sittings, "_at", lambda ref, rel: before[rel])

    rows = sittings.rows("REF")
    assert rows == [("p/a", 2, 0, 154.0, 6.0, 123.0), ("p/b", 2, 1, 31.0, 25.0, None)]
    assert sittings.main(["--ref", "REF", "--markdown"]) == 0
    total = capsys.readouterr().out.strip().splitlines()[-1]
    assert total == "| total | 4 (1) | 3 min 05.0 s |  | 2 min 03.0 s for 1 of 2 |"


def test_a_run_missing_from_the_old_record_leaves_the_prediction_unknown(sittings, tmp_path, monkeypatch):
    _write(tmp_path, "p/a", {"runs": [_run(0, 1.0, True), _run(2, 2.0, True)], "kernel_cpu_s": 0.5, "wall_time_s": 3.0})
    monkeypatch.setattr(sittings, "_at", lambda ref, rel: {"runs": [_run(0, 1.0, True)], "kernel_cpu_s": 0.5})
    assert sittings.rows("REF") == [("p/a", 2, 2, 3.5, 3.0, None)]
