"""benchmarks/profile_runs.py: the typical run is the median of the notebook's cost record, and the
profiling hook charges a function's time to the category of the nearest categorised caller."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import load_script

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "profile_runs.py"


@pytest.fixture
def profile_runs(tmp_path, monkeypatch):
    mod = load_script(SCRIPT, "profile_runs_under_test")
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    return mod


def test_the_typical_run_is_the_median_of_the_main_function(profile_runs, tmp_path):
    runs = [{"fn": "pkg:main", "config": {"seed": s}, "cpu_s": c} for s, c in enumerate([3.0, 1.0, 2.0])]
    runs.append({"fn": "pkg:side", "config": {}, "cpu_s": 0.5})
    path = tmp_path / "results" / "costs" / "p" / "nb.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"runs": runs}))
    run = profile_runs.typical_run("p/nb")
    assert (run["fn"], run["config"], run["recorded_cpu_s"], run["runs"]) == ("pkg:main", {"seed": 2}, 2.0, 3)
    assert profile_runs.typical_run("p/nb", "max")["config"] == {"seed": 0}


def test_the_hook_charges_the_accountant_for_what_it_calls(profile_runs):
    """An accountant query (fldp.accounting, calling dp_accounting) is charged to 'accountant' whole;
    the caller's own lines to no category of the run."""
    from fldp import accounting

    prof = profile_runs.StackProfile()
    eps = prof.run(accounting.epsilon, accounting.self_composed(accounting.gaussian(noise_multiplier=1.0), count=50),
                   delta=1e-5)
    assert eps > 0
    times = prof.corrected(profile_runs.hook_leak(20_000))
    by = {}
    for (cat, _), t in times.items():
        by[cat] = by.get(cat, 0.0) + t
    assert set(by) <= {"accountant", "outside", "other"}
    assert by["accountant"] > 0.9 * sum(by.values())
