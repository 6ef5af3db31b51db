"""The cost model (fldp.repro.cost): FLOPs per sample by hand, the engine's counter, the run store
keeping each run's work, the calibrated prediction, and the reproduction's plan and progress."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import torch

from fldp import engine, models

from fldp.repro import cluster, cost, execute, plan, store as S
from fldp.data import FederatedData

sys.path.insert(0, str(Path(__file__).parent))
import sweep_toy  # noqa: E402


@pytest.mark.parametrize("model, train, expected", [
    # forward 2(784*256 + 256) + 2(256*10 + 10) = 407,060; train 3x that less the first layer's 401,920
    (models.MLP(), False, 407_060), (models.MLP(), True, 819_260),
    # conv1 2(25+1)*8*24^2 = 239,616; conv2 2(25*8+1)*16*8^2 = 411,648; fc 2(256*64+64) = 32,896, 2(64*10+10) = 1,300
    (models.CNN((8, 16), 64), False, 685_460), (models.CNN((8, 16), 64), True, 3 * 685_460 - 239_616),
    (models.MultinomialLogReg(), True, 4 * 7840),          # one layer: forward + weight gradient
    (models.BinaryLogReg(105), True, 4 * 106),
])
def test_flops_per_sample_by_hand(model, train, expected):
    assert model.flops_per_sample(train=train) == expected


def _tiny_data(clients=3, rows=8, features=4):
    g = torch.Generator().manual_seed(0)
    xs = [torch.rand(rows, features, generator=g) for _ in range(clients)]
    ys = [torch.randint(0, 3, (rows,), generator=g) for _ in range(clients)]
    return FederatedData.from_clients(xs, ys, xs[0][:5], ys[0][:5])


def test_the_engine_counts_steps_flops_and_evaluated_samples():
    model, data = models.MLP(4, 5, 3), _tiny_data()
    cfg = engine.FLConfig(num_rounds=1, local_steps=2, batch_size=4, sampling="fixed", lr=0.1)
    w = model.init(torch.Generator().manual_seed(1))
    with cost.measure() as m:
        engine.local_train(model, w, data, torch.arange(3), cfg)
        engine.evaluate(model, w, data, train=True)
    work = m.work
    assert m.cpu_s > 0
    key = f"MLP/{model.dim}"
    fps, fwd = model.flops_per_sample(train=True), model.flops_per_sample(train=False)
    # 2 steps of 3 clients x 4 samples on 3 parameter rows; then 24 training rows + 5 test rows forward
    assert work == {key: {"steps": 2, "elems": 2 * 3 * model.dim, "eval": 29, "flops": 2 * 12 * fps + 29 * fwd}}


def _trains(*, seed: int) -> dict:
    model, data = models.MLP(4, 5, 3), _tiny_data()
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, batch_size=2, sampling="fixed", seed=seed, eval_train=False)
    return {"acc": engine.run(model, data, cfg).test_acc[-1]}


def test_the_store_keeps_each_runs_work(tmp_path):
    st = S.RunStore(tmp_path / "runs")
    st.run(sweep_toy.toy, {"x": 1.0, "seed": 0})
    toy = st.load(sweep_toy.toy, {"x": 1.0, "seed": 0})
    assert toy.work == {}  # a run that trains nothing: no work, not "unknown"
    st.run(_trains, {"seed": 0})
    rec = st.load(_trains, {"seed": 0})
    (key, w), = rec.work.items()
    assert 0 < rec.cpu_s <= rec.seconds + 0.05 and toy.cpu_s is not None
    # one step of 3 clients x 2 samples; the round's uploads (3 rows); evaluations before and after
    # the round on the 5 test rows
    assert key.startswith("MLP/") and w["steps"] == 1 and w["eval"] == 10 and w["elems"] == 2 * 3 * int(key[4:])
    # what was stored is what the manifest of this process lists
    listed = [r for r in S.manifest() if r["fn"].endswith(":_trains")]
    assert listed and listed[-1]["work"] == rec.work and listed[-1]["config"] == {"seed": 0}


def test_the_calibrated_prediction_by_hand():
    cal = cost.Calibration(rate={"MLP": 10.0}, step_s={"MLP": 0.01}, elem_s={"MLP": 1e-9}, run_s=0.5, machine={})
    work = {"MLP/100": {"flops": 2e10, "steps": 100, "elems": 3e9, "eval": 0}}
    assert cal.seconds(work) == pytest.approx(0.5 + 2.0 + 1.0 + 3.0)
    work = {"MLP/100": {"flops": 2e10, "steps": 100, "eval": 0}}  # recorded before elements were counted
    # a run that trains nothing, or was stored before counting: the seconds it took
    assert cost.run_seconds({"work": {}, "seconds": 7.0}, cal) == (7.0, "last")
    assert cost.run_seconds({"work": None, "seconds": 3.0}, cal) == (3.0, "last")
    assert cost.run_seconds({"work": {}, "seconds": 3.0, "cpu_s": 2.5}, cal) == (2.5, "measured")  # CPU time first
    assert cost.run_seconds({"work": work, "seconds": 9.0}, cal) == (pytest.approx(3.5), "model")
    # measured elsewhere: its CPU time moved by the two machines' models (there 7 s, here 3.5 s)
    there = cost.Calibration(rate={"MLP": 5.0}, step_s={"MLP": 0.02}, elem_s={}, run_s=1.0, machine={})
    assert there.seconds(work) == pytest.approx(1.0 + 4.0 + 2.0)
    assert cost.run_seconds({"work": work, "cpu_s": 14.0}, cal, there) == (pytest.approx(7.0), "measured")
    assert cal.seconds(work) == pytest.approx(3.5)
    assert cost.predict([{"work": work, "seconds": 99.0}, {"work": {}, "seconds": 7.0}], cal) == pytest.approx(10.5)


@pytest.mark.slow
def test_calibration_measures_every_model_and_is_cached(tmp_path):
    cache = tmp_path / "cal.json"
    cal = cost.calibrate(cache=cache)
    assert set(cal.rate) == set(cost.CALIBRATION_SHAPES) and all(r > 0 for r in cal.rate.values())
    assert all(s > 0 for s in cal.step_s.values()) and cal.run_s > 0 and all(s >= 0 for s in cal.elem_s.values())
    # the model predicts a run's time from its counted work with exactly these constants
    work = {"MLP/203530": {"flops": 3_000_000_000, "steps": 40, "elems": 5_000_000, "eval": 0}}
    assert cal.seconds(work) == pytest.approx(3.0 / cal.rate["MLP"] + 40 * cal.step_s["MLP"]
                                              + 5_000_000 * cal.elem_s["MLP"] + cal.run_s)
    again = cost.calibrate(cache=cache)
    assert again.rate == cal.rate  # read back, not measured again
    saved = json.loads(cache.read_text())
    cache.write_text(json.dumps({**saved, "machine": {**saved["machine"], "host": "elsewhere"}}))
    assert cost.calibrate(cache=cache).machine["host"] != "elsewhere"  # another machine's: measured again


def _task(rel, tmp):
    return execute.Task(1, 1, rel, Path(tmp) / rel, Path(tmp) / "out" / rel, {}, 10.0, "fldp", {}, None)


def test_the_plan_counts_stored_runs_and_predicts_the_rest(tmp_path, monkeypatch):
    monkeypatch.setenv("FLDP_OUTPUT_DIR", str(tmp_path))
    st = S.default_store(quick=True)
    assert st.root == tmp_path / "results" / "runs"
    st.save(sweep_toy.toy, {"x": 1.0, "seed": 0}, {"y": 1.0}, 4.0, {})
    record = {"wall_time_s": 20.0, "kernel_s": 3.0, "runs": [
        {"fn": "sweep_toy:toy", "config": {"x": 1.0, "seed": 0}, "seconds": 4.0, "work": {}},
        {"fn": "sweep_toy:toy", "config": {"x": 2.0, "seed": 0}, "seconds": 5.0, "work": {}},
        {"fn": "sweep_toy:toy", "config": {"x": 3.0, "seed": 0}, "seconds": 9.0,
         "work": {"MLP/10": {"flops": 4e9, "steps": 10, "eval": 0}}}]}
    path = plan.costs_path("zhou/02_x.ipynb", quick=True)
    assert path == tmp_path / "results" / "costs" / "zhou" / "02_x.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    assert plan.costs_path("00_base.ipynb", quick=True).parent.name == "baseline"
    cal = cost.Calibration(rate={"MLP": 2.0}, step_s={"MLP": 0.1}, elem_s={}, run_s=0.0, machine={"host": "h", "cores": 2})
    known, unknown = plan.estimate([_task("zhou/02_x.ipynb", tmp_path), _task("zhou/03_y.ipynb", tmp_path)],
                                       True, cal)
    # 3 runs, 1 stored; to run: 5 s (its last time) + 4e9 / 2e9 + 10 x 0.1 = 3 s (the model); own 3 s
    assert (known.runs, known.held, known.how) == (3, 1, {"last": 1, "model": 1})
    assert known.runs_s == pytest.approx(8.0) and known.seconds == pytest.approx(11.0) and known.flops == 4e9
    assert not unknown.known
    fresh = plan.estimate([_task("zhou/02_x.ipynb", tmp_path)], True, cal, fresh=True)[0]
    assert fresh.held == 0 and fresh.runs_s == pytest.approx(12.0)
    text = plan.render_plan([known, unknown], 2, cal)
    assert "zhou/02_x.ipynb" in text and "11.0 s" in text and "no cost record" in text
    assert "predicted: 11.0 s of work for 1 notebook(s); 1 unknown; on 2 workers about 5.5 s" in text
    # progress: a run counts when its file is written in the store, a notebook when it finishes;
    # a file from before the start (an old run that --fresh will replace) does not count
    old = st.save(sweep_toy.toy, {"x": 2.0, "seed": 0}, {"y": 4.0}, 5.0, {})
    fresh_est = plan.estimate([_task("zhou/02_x.ipynb", tmp_path)], True, cal, fresh=True)[0]
    for x in (1.0, 2.0):  # both written before this reproduction started
        p = st.path(sweep_toy.toy, {"x": x, "seed": 0})
        os.utime(p, (p.stat().st_mtime - 60, p.stat().st_mtime - 60))
    past = st.path(sweep_toy.toy, {"x": 2.0, "seed": 0})
    prog = plan.Progress([fresh_est], stream=open(os.devnull, "w"))
    assert prog.done_seconds() == 0
    prog.close()
    past.unlink()
    assert old.key == past.stem
    prog = plan.Progress([known, unknown], stream=open(os.devnull, "w"))
    assert prog.total == pytest.approx(11.0) and prog.done_seconds() == 0
    st.save(sweep_toy.toy, {"x": 2.0, "seed": 0}, {"y": 4.0}, 5.0, {})
    assert prog.done_seconds() == pytest.approx(5.0)
    prog.finish("zhou/02_x.ipynb")
    assert prog.done_seconds() == pytest.approx(11.0)
    prog.close()


def test_a_notebooks_cost_record_lists_its_runs_and_its_own_time(tmp_path, monkeypatch):
    from fldp.repro import results

    import time

    monkeypatch.setenv("FLDP_OUTPUT_DIR", str(tmp_path))
    cpu0 = time.process_time()
    rec = results.Recorder("zhou", "99_costs", quick=True)
    S.default_store(quick=True).run(_trains, {"seed": 5})
    sum(i * i for i in range(3_000_000))  # the notebook's own work
    rec.save()
    spent = time.process_time() - cpu0
    saved = json.loads(rec.costs_path.read_text())
    assert rec.costs_path == tmp_path / "results" / "costs" / "zhou" / "99_costs.json"
    run = [r for r in saved["runs"] if r["fn"].endswith(":_trains") and r["config"] == {"seed": 5}]
    assert run and run[0]["ran"] and run[0]["cpu_s"] > 0 and run[0]["work"]
    # its own CPU time leaves out the run it computed: less than everything it spent
    assert 0 < saved["kernel_cpu_s"] <= spent - run[0]["cpu_s"] + 0.01
    assert saved["kernel_s"] <= saved["wall_time_s"]
    assert not (tmp_path / "results" / "zhou" / "99_costs.json").read_text().count('"kernel_cpu_s"')


@pytest.mark.parametrize("env, jobs, workers", [
    ({}, 1, 0),                                        # one job: runs stay in the kernel
    ({}, 2, 2),                                        # --jobs 2: one shared cluster of 2
    ({"FLDP_BACKEND": "processes"}, 2, 0),             # another backend asked for: left alone
    ({"FLDP_BACKEND": "dask"}, 1, 2),                  # --backend dask: one cluster for all notebooks
    ({"FLDP_BACKEND": "dask", "FLDP_WORKERS": "3"}, 1, 3),
])
def test_the_reproduction_shares_one_pool(monkeypatch, env, jobs, workers):
    for name in ("FLDP_BACKEND", "FLDP_WORKERS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert cluster.pool_size(jobs) == workers


def test_progress_prints_lines_inside_a_long_notebook(tmp_path, capsys):
    """Without a terminal, a line also appears while a notebook's runs are being written (every
    line_interval seconds in which something was done), not only when a notebook finishes."""
    import time

    from fldp.repro import plan

    st = S.RunStore(tmp_path / "runs")
    paths = [st.path(sweep_toy.toy, {"x": float(x), "seed": 0}) for x in range(3)]
    est = plan.Estimate("zhou/04_long.ipynb", True, runs=3, runs_s=30.0, pending={str(p): 10.0 for p in paths})
    prog = plan.Progress([est], line_interval=0.05, stream=open(os.devnull, "w"))
    try:
        time.sleep(0.2)
        assert "progress:" not in capsys.readouterr().out  # nothing done: silent
        st.save(sweep_toy.toy, {"x": 0.0, "seed": 0}, {"y": 0.0}, 1.0, {})
        time.sleep(0.3)
        out = capsys.readouterr().out
        assert out.count("progress: 33% of the predicted work") == 1  # once, not every interval
    finally:
        prog.close()
    # a notebook without a cost record is not in the ETA, and the line says so
    unknown = plan.Estimate("wei2020/05_sims.ipynb", False)
    prog = plan.Progress([est, unknown], line_interval=60, stream=open(os.devnull, "w"))
    try:
        prog.finish("zhou/04_long.ipynb")
        assert capsys.readouterr().out.strip().endswith(
            "ETA 0.0 s for it, besides 1 notebook(s) of unknown cost (wei2020/05_sims)")
    finally:
        prog.close()


def test_progress_counts_runs_where_no_notebook_has_a_prediction(tmp_path, capsys):
    """A sitting of notebooks without a cost record (wei2020/05-08's first) has no ETA, but still
    prints a line whenever runs were written to the store, counting them; a known notebook's line
    counts them too."""
    import time

    from fldp.repro import plan

    st = S.RunStore(tmp_path / "runs")
    st.save(sweep_toy.toy, {"x": 9.0, "seed": 0}, {"y": 0.0}, 1.0, {})  # written before the start: not counted
    os.utime(st.path(sweep_toy.toy, {"x": 9.0, "seed": 0}), (0, 0))
    unknown = plan.Estimate("wei2020/06_map.ipynb", False)
    prog = plan.Progress([unknown], line_interval=0.05, stream=open(os.devnull, "w"), store_root=st.root)
    try:
        time.sleep(0.2)
        assert "progress:" not in capsys.readouterr().out  # nothing computed yet: silent
        for x in (0.0, 1.0):
            st.save(sweep_toy.toy, {"x": x, "seed": 0}, {"y": x}, 1.0, {})
        time.sleep(0.3)
        out = capsys.readouterr().out.strip().splitlines()
        assert len(out) == 1 and out[0].startswith("progress: 2 run(s) computed after ")
        assert out[0].endswith("; no ETA: 1 notebook(s) without a cost record (wei2020/06_map)")
        prog.finish("wei2020/06_map.ipynb")
        last = capsys.readouterr().out.strip()
        assert last.startswith("progress: 2 run(s) computed after ") and "no ETA" not in last
    finally:
        prog.close()
    # without store_root (and without a prediction) it stays silent, as before
    prog = plan.Progress([plan.Estimate("wei2020/07.ipynb", False)], line_interval=0.05, stream=open(os.devnull, "w"))
    try:
        st.save(sweep_toy.toy, {"x": 5.0, "seed": 0}, {"y": 5.0}, 1.0, {})
        time.sleep(0.2)
        prog.finish("wei2020/07.ipynb")
        assert "progress:" not in capsys.readouterr().out
    finally:
        prog.close()
    # a notebook with a prediction: the percentage line also counts the runs written
    st = S.RunStore(tmp_path / "runs2")  # the runs above are within the start's 1 s of slack
    path = st.path(sweep_toy.toy, {"x": 7.0, "seed": 0})
    est = plan.Estimate("zhou/04_long.ipynb", True, runs=1, runs_s=10.0, pending={str(path): 10.0})
    prog = plan.Progress([est], line_interval=60, stream=open(os.devnull, "w"), store_root=st.root)
    try:
        st.save(sweep_toy.toy, {"x": 7.0, "seed": 0}, {"y": 7.0}, 1.0, {})
        prog.finish("zhou/04_long.ipynb")
        assert capsys.readouterr().out.strip().endswith("ETA 0.0 s; 1 run(s) computed")
    finally:
        prog.close()


def test_a_fresh_clone_plans_quick_mode_from_the_committed_quick_records(tmp_path, monkeypatch):
    from fldp.repro import plan

    monkeypatch.delenv("FLDP_OUTPUT_DIR", raising=False)
    monkeypatch.setattr(plan, "PROJECT_ROOT", tmp_path / "clone")  # no build/quick/ there
    monkeypatch.setattr(plan, "QUICK_COSTS", tmp_path / "committed")
    (tmp_path / "committed" / "zhou").mkdir(parents=True)
    (tmp_path / "committed" / "zhou" / "04_experiments.json").write_text("{}")
    assert plan.costs_path("zhou/04_experiments.ipynb", True) == tmp_path / "committed" / "zhou" / "04_experiments.json"
    assert plan.costs_path("zhou/04_experiments.ipynb", False) == tmp_path / "clone/results/costs/zhou/04_experiments.json"
    local = tmp_path / "clone/build/quick/results/costs/zhou/04_experiments.json"
    local.parent.mkdir(parents=True)
    local.write_text("{}")
    assert plan.costs_path("zhou/04_experiments.ipynb", True) == local  # a quick run's own record wins
    # the committed quick records cover every chapter
    from fldp.repro import chapters

    rels = [p.relative_to(chapters.PROJECT_ROOT / "notebooks").as_posix()
            for p in chapters.discover(chapters.PROJECT_ROOT / "notebooks")]
    monkeypatch.undo()
    missing = [r for r in rels if not (plan.QUICK_COSTS / (Path(r).parent.name or "baseline") / f"{Path(r).stem}.json").is_file()]
    assert missing == []
