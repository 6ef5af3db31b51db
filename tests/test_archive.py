"""The run archive (fldp.repro.archive): written by a notebook's Recorder, read under the run store,
damaged lines reported and skipped, and verified by recomputation (fldp.repro.verify,
`fldp store verify`), which catches a run function whose output changed."""
from __future__ import annotations

import json
import warnings

import pytest

import sweep_toy
from fldp.repro import archive, cli, store as S, verify


def _archive_toy(tmp_path, xs=(1.0, 2.0, 3.0), notebook="toy/01_runs"):
    """Compute toy runs in a scratch store and write them as one notebook's archive file."""
    scratch = S.RunStore(tmp_path / "scratch")
    recs = []
    for x in xs:
        scratch.run(sweep_toy.toy, {"x": x, "seed": 0})
        recs.append(scratch.read(scratch.path(sweep_toy.toy, {"x": x, "seed": 0})))
    path = archive.write(tmp_path / "archive" / f"{notebook}.jsonl", reversed(recs))
    return path, recs


def test_an_archive_file_is_sorted_numbers_only_and_rewritten_identically(tmp_path):
    path, recs = _archive_toy(tmp_path)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["key"] for x in lines] == sorted(r.key for r in recs)
    assert set(lines[0]) == {"key", "fn", "version", "config", "result", "digest"}  # no timings
    before = path.read_bytes()
    recomputed = [S.RunStore(tmp_path / "again").run(sweep_toy.toy, {"x": x, "seed": 0}) for x in (3.0, 1.0, 2.0)]
    again = S.RunStore(tmp_path / "again")
    archive.write(path, [again.read(again.path(sweep_toy.toy, {"x": x, "seed": 0})) for x in (3.0, 1.0, 2.0)])
    assert path.read_bytes() == before and recomputed  # the same runs, other timings: the same bytes


def test_the_store_reads_the_archive_under_its_own_runs(tmp_path):
    path, recs = _archive_toy(tmp_path)
    log = tmp_path / "starts.log"
    st = S.RunStore(tmp_path / "runs", archive=archive.Archive(tmp_path / "archive"))
    assert st.holds(sweep_toy.toy, {"x": 2.0, "seed": 0}) and not st.holds(sweep_toy.toy, {"x": 9.0, "seed": 0})
    assert st.run(sweep_toy.toy, {"x": 2.0, "seed": 0}) == recs[1].result  # from the archive, not computed
    out = S.RunStore(tmp_path / "runs", archive=archive.Archive(tmp_path / "archive"))
    assert out.run(sweep_toy.toy, {"x": 9.0, "seed": 0, "log": str(log)})["y"] > 0  # computed ...
    assert log.read_text().count("start") == 1
    assert out.path(sweep_toy.toy, {"x": 9.0, "seed": 0, "log": str(log)}).is_file()  # ... into the local store
    assert path.read_text().count("\n") == 3  # the archive is never written by the store


def test_damaged_lines_are_named_and_skipped_the_rest_is_read(tmp_path):
    path, recs = _archive_toy(tmp_path, xs=(1.0, 2.0, 3.0, 4.0))
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    edited = json.dumps({**first, "result": {**first["result"], "y": 0.5}}, sort_keys=True, separators=(",", ":"))
    foreign = json.dumps({**json.loads(lines[1]), "key": json.loads(lines[2])["key"]}, sort_keys=True,
                         separators=(",", ":"))
    path.write_text("\n".join([edited, foreign, lines[2][:40], lines[3]]) + "\n")  # edited, foreign key, truncated
    arch = archive.Archive(tmp_path / "archive")
    with pytest.warns(RuntimeWarning, match="01_runs.jsonl:1"):
        runs = list(arch.runs())
    assert [d.lineno for d in arch.damaged] == [1, 2, 3]
    assert all(str(path) in str(d) for d in arch.damaged)
    assert "digest" in arch.damaged[0].why and "digest" in arch.damaged[1].why and "JSONDecodeError" in arch.damaged[2].why
    assert [r["key"] for _, r in runs] == [json.loads(lines[3])["key"]]  # the intact line is still a run


def test_default_store_has_the_archive_in_full_mode_only():
    assert S.default_store(False).archive.root == archive.ARCHIVE_DIR
    assert S.default_store(True).archive is None


def test_verify_passes_on_the_same_code_and_names_the_first_difference(tmp_path, monkeypatch):
    _archive_toy(tmp_path)
    arch = archive.Archive(tmp_path / "archive")
    checked, bad = verify.verify(arch)
    assert (checked, bad) == (3, [])
    # a run function whose output changed without a store_version bump: same key, other numbers
    real = sweep_toy.toy
    monkeypatch.setattr(sweep_toy, "toy", lambda **kw: {**real(**kw), "curve": [0.0, 0.0, 0.0]})
    checked, bad = verify.verify(archive.Archive(tmp_path / "archive"), sample=2, seed=1)
    assert checked == 2 and len(bad) == 2
    assert bad[0].notebook == "toy/01_runs" and bad[0].where == "/curve[0]" and bad[0].recomputed == 0.0
    assert "toy/01_runs: sweep_toy:toy run" in str(bad[0]) and "/curve[0]" in str(bad[0])


def test_the_environment_names_the_libraries_that_decide_the_numbers():
    import numpy, scipy, torch

    env = archive.environment()
    assert env["torch"] == torch.__version__.split("+")[0] or env["torch"] == torch.__version__
    assert env["numpy"] == numpy.__version__ and env["scipy"] == scipy.__version__
    assert set(env) == {"python", "machine", "cpu", "torch", "numpy", "scipy", "dp-accounting"}
    assert env["cpu"] == torch.backends.cpu.get_cpu_capability() and env["cpu"] in ("DEFAULT", "AVX2", "AVX512", "ZVECTOR", "VSX", "NEON", "SVE256")
    assert archive.environment_differences({k: v for k, v in env.items() if k != "cpu"}) == [f"cpu None -> {env['cpu']}"]
    assert archive.environment_differences(env) == []
    assert archive.environment_differences({**env, "numpy": "1.26.4"}) == [f"numpy 1.26.4 -> {numpy.__version__}"]
    assert archive.environment_differences(None) == ["not recorded"]


def test_rounding_is_told_from_a_changed_code_and_accepted_only_in_another_environment():
    small = [("/acc[3]", 0.9386, 0.9385), ("/loss", 0.2074744384765625, 0.2074745361328125),
             ("/eps", 0.10051905752764458, 0.10051905752985409)]
    assert verify.rounding_only(small)
    assert not verify.rounding_only(small + [("/acc[4]", 0.93, 0.91)])        # a point of accuracy
    assert not verify.rounding_only([("/diverged_at", None, 12)])            # a run that now blows up
    assert not verify.rounding_only([("/loss", 0.5, float("nan"))])
    m = verify.Mismatch("a/01", "f", "k", *small[0], rounding=True)
    n = verify.Mismatch("a/01", "f", "k2", "/x", 1.0, 2.0, rounding=False)
    assert verify.failing([m, n], {"a/01": ["cpu AVX2 -> AVX512"]}) == [n]
    assert verify.failing([m, n], {"a/01": []}) == [m, n]                     # same environment: exact


def test_first_difference():
    assert verify.first_difference({"a": [1, 2.0, float("nan")]}, {"a": [1, 2.0, float("nan")]}) is None
    assert verify.first_difference({"a": [1, 2]}, {"a": [1, 3]}) == ("/a[1]", 2, 3)
    assert verify.first_difference({"a": [1]}, {"a": [1, 2]}) == ("/a (length)", 1, 2)
    assert verify.first_difference({"a": 1}, {"b": 1}) == ("/a", 1, "<missing>")


def test_the_cli_verifies_and_fails_on_a_planted_change(tmp_path, monkeypatch, capsys):
    _archive_toy(tmp_path)
    assert cli.main(["store", "verify", "--archive", str(tmp_path / "archive"), "--sample", "2"]) == 0
    assert "2 of 3 archived run(s) recomputed, 0 differ" in capsys.readouterr().out
    real = sweep_toy.toy
    monkeypatch.setattr(sweep_toy, "toy", lambda **kw: {**real(**kw), "y": -1.0})
    assert cli.main(["store", "verify", "--archive", str(tmp_path / "archive"), "--only", "toy/01"]) == 1
    out = capsys.readouterr().out
    assert out.count("MISMATCH") == 3 and "at /y" in out
    assert "toy/01_runs: the environment its runs were archived in: not recorded" in out
    (tmp_path / "costs" / "toy").mkdir(parents=True)  # its cost record names this environment: the code changed
    (tmp_path / "costs" / "toy" / "01_runs.json").write_text(json.dumps({"environment": archive.environment()}))
    assert cli.main(["store", "verify", "--archive", str(tmp_path / "archive"), "--only", "toy/01"]) == 1
    assert "toy/01_runs: its runs were archived in this environment, so the code changed" in capsys.readouterr().out
    # the same code on another processor: every number within rounding, accepted where the environment differs
    monkeypatch.setattr(sweep_toy, "toy", lambda **kw: {**real(**kw), "y": real(**kw)["y"] * (1 + 1e-7)})
    assert cli.main(["store", "verify", "--archive", str(tmp_path / "archive"), "--only", "toy/01"]) == 1
    assert capsys.readouterr().out.count("MISMATCH") == 3      # ... but not in the environment they were archived in
    (tmp_path / "costs" / "toy" / "01_runs.json").write_text(json.dumps({"environment": {**archive.environment(), "cpu": "AVX2"}}))
    assert cli.main(["store", "verify", "--archive", str(tmp_path / "archive"), "--only", "toy/01"]) == 0
    out = capsys.readouterr().out
    assert out.count("ROUNDING") == 3 and "MISMATCH" not in out and "cpu AVX2 -> " in out
    assert "3 differ (3 of them only by float rounding" in out
    assert cli.main(["store", "verify", "--archive", str(tmp_path / "nowhere")]) == 2
    assert "no run archive" in capsys.readouterr().err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cli.main(["store", "verify", "--archive", str(tmp_path / "archive"), "--only", "nope"]) == 2


def test_the_plan_counts_archived_runs_as_stored_and_lists_stale_ones(tmp_path):
    from fldp.repro import plan

    path, recs = _archive_toy(tmp_path, notebook="toy/01_runs")
    old = {"key": "0" * 32, "fn": recs[0].fn, "version": "fldp 0.1.0; sweep_toy:toy v1", "config": recs[0].config,
           "result": recs[0].result}  # a run archived under code that has changed since
    path.write_text(path.read_text() + archive.line(old) + "\n")
    st = S.RunStore(tmp_path / "runs", archive=archive.Archive(tmp_path / "archive"))
    assert st.holds(sweep_toy.toy, {"x": 1.0, "seed": 0})
    assert plan.stale_archived(st, "toy/01_runs.ipynb") == 1
    assert plan.stale_archived(S.RunStore(tmp_path / "runs"), "toy/01_runs.ipynb") == 0


@pytest.mark.slow
def test_the_committed_archive_recomputes_to_its_numbers():
    """A real sample of the committed run archive, recomputed (the cheapest runs first, about a
    minute): the same code gives the same numbers, and no line is damaged."""
    if not any(archive.ARCHIVE_DIR.glob("*/*.jsonl")):
        pytest.skip("no run archive committed yet (results/archive/)")
    arch = archive.Archive(archive.ARCHIVE_DIR)
    checked, bad = verify.verify(arch, budget_s=60, cost=cli._archived_cost())
    # exact where the runs were archived in this environment; elsewhere (another processor) within rounding
    changed = {m.notebook: archive.environment_changes(archive.ARCHIVE_DIR.parent / "costs", m.notebook) for m in bad}
    failing = verify.failing(bad, changed)
    assert arch.damaged == [] and checked >= 1 and failing == [], [str(m) for m in failing]


def test_a_checkpoint_keeps_unarchived_runs_pending_and_the_store_reads_them(tmp_path):
    """A recomputation longer than a sitting: its computed runs go to _pending/<fn>.jsonl, a fresh
    clone's store reads them (nothing recomputed), and once the notebook archives them they are dropped."""
    path, recs = _archive_toy(tmp_path, xs=(1.0,))  # toy/01_runs holds x = 1
    local = S.RunStore(tmp_path / "runs")
    for x in (1.0, 2.0, 3.0):
        local.run(sweep_toy.toy, {"x": x, "seed": 0})
    counts = archive.checkpoint(local.records(), tmp_path / "archive")
    assert counts == {"added": 2, "dropped": 0, "pending": 2, "files": 1}
    [pending] = sorted((tmp_path / "archive" / archive.PENDING).glob("*.jsonl"))
    assert pending.name == "sweep_toy.toy.jsonl" and len(pending.read_text().splitlines()) == 2
    before = pending.read_bytes()
    assert archive.checkpoint(local.records(), tmp_path / "archive")["added"] == 0
    assert pending.read_bytes() == before  # the same runs: the same bytes
    # a fresh clone: an empty local store over the archive holds all three runs
    clone = S.RunStore(tmp_path / "clone-runs", archive=archive.Archive(tmp_path / "archive"))
    assert all(clone.holds(sweep_toy.toy, {"x": x, "seed": 0}) for x in (1.0, 2.0, 3.0))
    assert archive.Archive(tmp_path / "archive").notebook_of(recs[0].fn, recs[0].key) == "toy/01_runs"
    # the notebook finishes and archives x = 2 too: the checkpoint drops it from _pending
    archive.write(path, [recs[0], local.read(local.path(sweep_toy.toy, {"x": 2.0, "seed": 0}))])
    counts = archive.checkpoint(S.RunStore(tmp_path / "empty").records(), tmp_path / "archive")
    assert counts == {"added": 0, "dropped": 1, "pending": 1, "files": 1}
    archive.write(path, [local.read(local.path(sweep_toy.toy, {"x": x, "seed": 0})) for x in (1.0, 2.0, 3.0)])
    assert archive.checkpoint([], tmp_path / "archive") == {"added": 0, "dropped": 1, "pending": 0, "files": 0}
    assert not (tmp_path / "archive" / archive.PENDING).exists()


def test_the_cli_checkpoints_and_refuses_a_missing_store(tmp_path, capsys):
    _archive_toy(tmp_path, xs=(1.0,))
    local = S.RunStore(tmp_path / "runs")
    local.run(sweep_toy.toy, {"x": 5.0, "seed": 0})
    assert cli.main(["store", "checkpoint", "--store", str(tmp_path / "runs"),
                     "--archive", str(tmp_path / "archive")]) == 0
    assert "1 run(s) added, 0 dropped" in capsys.readouterr().out
    assert cli.main(["store", "checkpoint", "--store", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "fldp store checkpoint: error: no run store at" in err and "Traceback" not in err


def _fresh_process(monkeypatch):
    """The run store's per-process usage, emptied, as in a new notebook kernel."""
    monkeypatch.setattr(S, "_USAGE", {"ran": 0, "reused": 0, "seconds": 0.0, "first": None, "last": None,
                                      "waited": 0.0})
    monkeypatch.setattr(S, "_COUNTED", set())
    monkeypatch.setattr(S, "_RUNS", [])
    monkeypatch.setattr(S, "_USED", {})


def test_a_fresh_clone_re_executes_from_the_archive_and_rewrites_nothing(tmp_path, monkeypatch):
    """A notebook that computed its runs, then the same notebook in a fresh clone whose store holds
    nothing but the archive: no run is computed, the archive is rewritten byte for byte, the cost
    record keeps the runs' seconds and work, and the results' run usage keeps their compute seconds
    (a run read from the archive has no time: it used to crash the usage count), in the same order
    although the runs were taken in another (as workers finish them)."""
    from fldp.repro import results

    def notebook(local: S.RunStore, root, xs=(1.0, 2.0)):
        rec = results.Recorder("toy", "01_runs", quick=True)
        rec.root = root
        ys = [local.load(sweep_toy.toy, {"x": x, "seed": 0}) or None for x in xs]
        ys = [y.result if y else local.run(sweep_toy.toy, {"x": x, "seed": 0}) for y, x in zip(ys, xs)]
        ys = [ys[xs.index(x)] for x in (1.0, 2.0)]
        rec.add("ys", ys)
        rec.save()
        return rec

    _fresh_process(monkeypatch)
    first = notebook(S.RunStore(tmp_path / "runs"), tmp_path)
    archived, costs = first.archive_path.read_bytes(), json.loads(first.costs_path.read_text())
    saved = json.loads(first.results_path.read_text())
    assert [r["ran"] for r in costs["runs"]] == [True, True]
    for r, secs in zip(costs["runs"], (12.5, 7.25)):  # as if measured (the toy takes microseconds)
        r.update(seconds=secs, cpu_s=secs - 1, work={"MLP/10": {"flops": 100, "steps": 2}})
    first.costs_path.write_text(json.dumps(costs))

    _fresh_process(monkeypatch)  # the clone: a new kernel, an empty local store over the archive
    clone = S.RunStore(tmp_path / "clone-runs", archive=archive.Archive(first.archive_path.parents[1]))
    again = notebook(clone, tmp_path, xs=(2.0, 1.0))
    assert not (tmp_path / "clone-runs").exists()  # nothing computed
    assert again.archive_path.read_bytes() == archived
    resaved, recosts = json.loads(again.results_path.read_text()), json.loads(again.costs_path.read_text())
    assert resaved["data"] == saved["data"]
    assert resaved["runs"]["reused"] == 2 and resaved["runs"]["seconds"] == 19.75
    assert resaved["runs"]["first"] is None  # when they were computed is not archived
    assert [r["config"] for r in recosts["runs"]] == [r["config"] for r in costs["runs"]]
    for old, new in zip(costs["runs"], recosts["runs"]):
        assert (new["seconds"], new["cpu_s"], new["work"], new["ran"]) == (old["seconds"], old["cpu_s"], old["work"], False)
        assert "archived" not in new


def test_verify_skips_runs_made_on_a_device_this_machine_lacks(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: a cuda run is recomputed here")
    path, _ = _archive_toy(tmp_path)
    runs = [json.loads(line) for line in path.read_text().splitlines()]
    runs[0]["config"]["device"] = "cuda"      # a paper-size run made on a lent GPU
    archive.write(path, [{k: r[k] for k in archive.FIELDS} for r in runs])
    said = []
    checked, bad = verify.verify(archive.Archive(tmp_path / "archive"), progress=said.append)
    assert (checked, bad) == (2, [])
    assert said[0] == "skipped  1 run(s) computed on a device this machine lacks (cuda)"


def test_a_cost_record_keeps_the_environment_its_runs_were_computed_in():
    from fldp.repro import results

    env = lambda runs, before: results.Recorder._runs_environment(None, runs, before)
    here = archive.environment()
    assert env({"ran": 3, "reused": 0}, None) == here              # no record yet: computed here
    elsewhere = {**here, "cpu": "AVX2"}
    assert env({"ran": 0, "reused": 5}, elsewhere) == elsewhere    # re-executed from the archive: theirs
    assert env({"ran": 5, "reused": 0}, elsewhere) == here         # all computed again here
    mixed = env({"ran": 2, "reused": 3}, elsewhere)
    assert mixed["partly"] and archive.environment_differences(mixed) == [mixed["partly"]]


def test_the_recorded_environment_is_read_from_a_cost_record(tmp_path):
    env = {**archive.environment(), "cpu": "AVX2"}
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "01_runs.json").write_text(json.dumps({"environment": env}))
    assert archive.recorded_environment(tmp_path / "toy" / "01_runs.json") == env
    assert archive.environment_changes(tmp_path, "toy/01_runs") == [f"cpu AVX2 -> {archive.environment()['cpu']}"]
    assert archive.recorded_environment(tmp_path / "none.json") is None
    assert archive.environment_changes(tmp_path, "toy/none") == ["not recorded"]
