"""fldp compare: results files against their committed version, wall clock and run usage aside."""
import json
import math
import subprocess

from fldp.repro import cli, compare


def test_differences_skip_timing_and_usage_and_name_every_place():
    old = {"wall_time_s": 1.0, "runs": {"stored": 3}, "data": {"x": [1.0, 2.0, math.nan], "y": 1}}
    new = {"wall_time_s": 9.0, "runs": {"stored": 0}, "data": {"x": [1.0, 2.5, math.nan], "y": 1.0}}
    assert compare.differences(old, new) == [("/data/x[1]", 2.0, 2.5), ("/data/y", 1, 1.0)]
    assert compare.differences({"a": [1, 2]}, {"a": [1]}) == [("/a (length)", 2, 1)]
    assert compare.differences({"a": 1}, {"b": 1}) == [("/a", 1, "<missing>"), ("/b", "<missing>", 1)]


def test_verdict_changes_name_the_claim_and_both_verdicts():
    old = {"claims": [{"id": "c1", "verdict": "holds", "reason": ""}, {"id": "c2", "verdict": "fails"}]}
    new = {"claims": [{"id": "c1", "verdict": "inconclusive", "reason": "spread"}, {"id": "c2", "verdict": "fails"}]}
    assert compare.verdict_changes(old, new) == ["c1: holds -> inconclusive (spread)"]


def _git(root, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def test_compare_against_a_commit(tmp_path):
    res = tmp_path / "results"
    (res / "p").mkdir(parents=True)
    (res / "costs" / "p").mkdir(parents=True)
    same, moved = res / "p" / "a.json", res / "p" / "b.json"
    same.write_text(json.dumps({"wall_time_s": 3.0, "claims": [], "data": {"v": 0.25}}))
    moved.write_text(json.dumps({"claims": [{"id": "k", "verdict": "holds"}], "data": {"v": [1.0, 2.0]}}))
    (res / "costs" / "p" / "a.json").write_text("{}")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "x")
    same.write_text(json.dumps({"data": {"v": 0.25}, "claims": [], "wall_time_s": 7.5}, indent=2))
    moved.write_text(json.dumps({"claims": [{"id": "k", "verdict": "fails"}], "data": {"v": [1.0, 2.2]}}))
    (res / "costs" / "p" / "a.json").write_text('{"changed": 1}')  # cost records are not results
    (res / "p" / "c.json").write_text("{}")
    found = {c.path: c for c in compare.compare(res, root=tmp_path)}
    assert set(found) == {"results/p/a.json", "results/p/b.json", "results/p/c.json"}
    assert found["results/p/a.json"].status == "equal"
    assert found["results/p/c.json"].status == "new"
    b = found["results/p/b.json"]
    assert b.status == "differs" and b.verdicts == ["k: holds -> fails"]
    assert b.diffs == [("/claims[0]/verdict", "holds", "fails"), ("/data/v[1]", 2.0, 2.2)]
    assert abs(b.max_relative - 0.2 / 2.2) < 1e-12
    assert b.lines()[0] == ("differs   results/p/b.json: 2 value(s), largest relative difference 9.1e-02; "
                            "verdicts changed: 1")
    assert [c.path for c in compare.compare(res, root=tmp_path, only=["p/a"])] == ["results/p/a.json"]


def test_the_cli_refuses_a_bad_revision_without_a_traceback(capsys):
    assert cli.main(["compare", "no-such-revision-xyz"]) == 2
    err = capsys.readouterr().err
    assert "fldp compare: error: 'no-such-revision-xyz' is not a commit" in err and "Traceback" not in err


def test_a_chapter_that_measures_wall_time_declares_its_timing_keys(tmp_path, monkeypatch):
    import pytest
    from fldp.repro import results, store

    monkeypatch.setattr(store, "_USAGE", {"ran": 0, "reused": 0, "seconds": 0.0, "first": None, "last": None,
                                          "waited": 0.0})
    rec = results.Recorder("toy", "05", quick=True)
    rec.root = tmp_path
    rec.timings("seconds", "wall time")
    with pytest.raises(ValueError, match="keys: each a non-empty string"):
        rec.timings("")
    rec.add("measured", {"p=1": {"seconds": 0.5, "tries": 3}, "wall time": 2.0})
    saved = json.loads(rec.save().read_text())
    assert saved["timing_keys"] == ["seconds", "wall time"]
    res = tmp_path / "results"
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "results/toy/05.json")
    _git(tmp_path, "commit", "-q", "-m", "x")
    saved["data"]["measured"]["p=1"]["seconds"], saved["data"]["measured"]["wall time"] = 0.7, 2.5
    (res / "toy" / "05.json").write_text(json.dumps(saved))
    [c] = compare.compare(res, root=tmp_path)
    assert c.status == "equal" and c.timings == 2
    assert c.lines() == ["equal     results/toy/05.json (2 timing value(s) aside)"]
    saved["data"]["measured"]["p=1"]["tries"] = 4  # a count is not a timing
    (res / "toy" / "05.json").write_text(json.dumps(saved))
    [c] = compare.compare(res, root=tmp_path)
    assert c.status == "differs" and c.diffs == [("/data/measured/p=1/tries", 3, 4)]
