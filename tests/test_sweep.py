"""The run store and sweeps as they are used: keys, damaged files, failures, an interrupted sweep
resumed, local processes, and a real Dask scheduler with two workers, one killed mid-sweep."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from fldp.repro import store as S
from fldp.repro import sweep

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
import sweep_toy  # noqa: E402  (tests/ is on the workers' PYTHONPATH too)

GRID = {"x": [1.0, 2.0, 3.0], "seed": [0, 1]}


def starts(log: Path) -> Counter:
    lines = log.read_text().splitlines() if log.exists() else []
    return Counter(" ".join(ln.split()[1:3]) for ln in lines)


def reference(tmp_path, configs):
    """The in-process results, in a store of their own."""
    return sweep.run_all(sweep_toy.toy, configs, store=S.RunStore(tmp_path / "reference"), progress=False).results


def test_expand_is_the_cartesian_product_over_a_base():
    cfgs = sweep.expand({"eps": [50, 60], "seed": [0, 1, 2]}, {"T": 25})
    assert len(cfgs) == 6 and cfgs[0] == {"T": 25, "eps": 50, "seed": 0} and cfgs[-1] == {"T": 25, "eps": 60, "seed": 2}
    with pytest.raises(ValueError, match="both a grid entry and a fixed setting"):
        sweep.expand({"T": [1]}, {"T": 2})
    with pytest.raises(ValueError, match=r"grid\['eps'\]"):
        sweep.expand({"eps": 5})


def test_the_key_is_a_content_hash_of_the_whole_configuration(monkeypatch):
    k = S.run_key(sweep_toy.toy, {"x": 1.0, "seed": 0})
    assert k == S.run_key(sweep_toy.toy, {"seed": 0, "x": 1.0})  # order does not matter
    assert k != S.run_key(sweep_toy.toy, {"x": 1.0, "seed": 1})  # every value does
    assert k == S.run_key(sweep_toy.toy, {"x": 1, "seed": 0.0})  # equal numbers are one value (CLI vs notebook)
    assert k != S.run_key(sweep_toy.toy, {"x": 1.5, "seed": 0}) and k != S.run_key(sweep_toy.toy, {"x": True, "seed": 0})
    assert k == S.run_key(sweep_toy.toy, {"x": 1.0, "seed": 0, "sleep": 0.0})  # a default spelled out: the same run
    assert k != S.run_key("sweep_toy:toy_other", {"x": 1.0, "seed": 0})  # another function
    with pytest.raises(TypeError, match=r"unknown setting\(s\) \['z'\], missing setting\(s\) \['seed'\]"):
        S.run_key(sweep_toy.toy, {"x": 1.0, "z": 2})
    monkeypatch.setattr(sweep_toy.toy, "store_version", 2, raising=False)  # a change of the numbers
    assert k != S.run_key(sweep_toy.toy, {"x": 1.0, "seed": 0})
    with pytest.raises(ValueError, match="top-level function"):
        S.run_key(lambda x: x, {"x": 1})


def test_rerun_skips_finished_runs_and_returns_the_same_numbers(tmp_path):
    log, st = tmp_path / "starts.log", S.RunStore(tmp_path / "runs")
    cfgs = sweep.expand(GRID, {"log": str(log)})
    first = sweep.run_all(sweep_toy.toy, cfgs, store=st, progress=False)
    again = sweep.run_all(sweep_toy.toy, cfgs, store=st, progress=False)
    assert (first.ran, first.reused, again.ran, again.reused) == (6, 0, 0, 6)
    assert again.results == first.results and set(starts(log).values()) == {1}
    assert first.results[0] == S.normalise(sweep_toy.toy(x=1.0, seed=0))  # what a plain call gives
    frame = st.frame()
    assert len(frame) == 6 and sorted(frame["config.x"].unique()) == [1.0, 2.0, 3.0]
    assert frame.set_index(["config.x", "config.seed"]).loc[(2.0, 1), "result.y"] == first.results[3]["y"]
    fresh = sweep.run_all(sweep_toy.toy, cfgs, store=st, progress=False, fresh=True)
    assert fresh.ran == 6 and fresh.results == first.results


@pytest.mark.parametrize("damage", ["truncate", "edit the result", "another key's file"])
def test_a_damaged_file_is_detected_and_rerun_never_read(tmp_path, damage):
    st = S.RunStore(tmp_path / "runs")
    cfgs = sweep.expand(GRID)
    good = sweep.run_all(sweep_toy.toy, cfgs, store=st, progress=False).results
    path = st.path(sweep_toy.toy, cfgs[0])
    if damage == "truncate":
        path.write_text(path.read_text()[:40])
    elif damage == "edit the result":
        saved = json.loads(path.read_text())
        saved["result"]["y"] = 123.0
        path.write_text(json.dumps(saved))
    else:
        path.write_text(st.path(sweep_toy.toy, cfgs[1]).read_text())
    with pytest.warns(RuntimeWarning, match="damaged"):
        assert st.load(sweep_toy.toy, cfgs[0]) is None
    with pytest.warns(RuntimeWarning):
        out = sweep.run_all(sweep_toy.toy, cfgs, store=st, progress=False)
    assert (out.ran, out.reused) == (1, 5) and out.results == good
    assert st.load(sweep_toy.toy, cfgs[0]).result == good[0]
    assert not list(st.root.rglob("*.tmp")), "a temporary file was left behind"


def test_a_failing_run_is_reported_with_its_configuration_and_the_others_finish(tmp_path):
    st = S.RunStore(tmp_path / "runs")
    cfgs = sweep.expand(GRID, {"fail_at": 2.0})
    with pytest.raises(sweep.SweepError) as info:
        sweep.run_all(sweep_toy.toy, cfgs, store=st, progress=False)
    assert len(info.value.failures) == 2 and "'x': 2.0" in str(info.value) and "toy failure at x=2.0" in str(info.value)
    assert len(list(st.records())) == 4
    out = sweep.run_all(sweep_toy.toy, cfgs, store=st, progress=False, raise_on_failure=False)
    assert (out.ran, out.reused, len(out.failures)) == (0, 4, 2) and out.results[2] is None


def test_an_interrupted_in_process_sweep_resumes_with_nothing_lost_or_run_twice(tmp_path):
    log, st = tmp_path / "starts.log", S.RunStore(tmp_path / "runs")
    cfgs = sweep.expand({"x": [1.0, 2.0, 3.0, 4.0, 5.0], "seed": [0]}, {"log": str(log), "interrupt_at": 3.0})
    Path(str(log) + ".interrupt").touch()  # x = 3 raises KeyboardInterrupt once (Ctrl-C)
    with pytest.raises(KeyboardInterrupt):
        sweep.run_all(sweep_toy.toy, cfgs, store=st, progress=False)
    assert len(list(st.records())) == 2  # x = 1, 2 finished and are kept
    out = sweep.run_all(sweep_toy.toy, cfgs, store=st, progress=False)
    assert (out.ran, out.reused) == (3, 2)
    assert starts(log) == Counter({"x=1.0 seed=0": 1, "x=2.0 seed=0": 1, "x=3.0 seed=0": 2,  # 3: interrupted, rerun
                                   "x=4.0 seed=0": 1, "x=5.0 seed=0": 1})
    assert out.results == reference(tmp_path, cfgs)


def test_local_processes_give_the_in_process_numbers(tmp_path):
    cfgs = sweep.expand(GRID)
    out = sweep.run_all(sweep_toy.toy, cfgs, store=S.RunStore(tmp_path / "runs"), backend="processes",
                        workers=2, progress=False)
    assert out.ran == 6 and out.results == reference(tmp_path, cfgs)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(cmd, log: Path, env) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(20)


@pytest.mark.slow
def test_dask_cluster_survives_a_killed_worker_and_runs_each_run_exactly_once(tmp_path):
    """A real `dask scheduler` and two `dask worker` processes on loopback; one worker is killed
    after the first result; every run still finishes, once, with the in-process numbers."""
    from distributed import Client

    dask = str(Path(sys.executable).with_name("dask"))
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1"}
    procs = [_start([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                    tmp_path / "scheduler.log", env)]
    try:
        for i in (1, 2):
            procs.append(_start([dask, "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                                 "--host", "127.0.0.1", "--name", f"w{i}", "--death-timeout", "60"],
                                tmp_path / f"worker{i}.log", env))
        with Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=60)
        log, st = tmp_path / "starts.log", S.RunStore(tmp_path / "runs")
        cfgs = sweep.expand({"x": [1.0, 2.0, 3.0, 4.0], "seed": [0, 1]}, {"log": str(log), "sleep": 0.6})
        finished = []

        def on_finish(config, result):
            finished.append(S.run_key(sweep_toy.toy, config))
            if len(finished) == 1:  # mid-sweep: kill a worker (its running run is rescheduled)
                _stop(procs[1])

        t0 = time.perf_counter()
        out = sweep.run_all(sweep_toy.toy, cfgs, store=st, backend="dask", scheduler=address, progress=False,
                            on_finish=on_finish)
        print(f"8 runs on 2 dask workers, one killed: {time.perf_counter() - t0:.1f} s")  # information, not asserted
        assert procs[1].poll() is not None, "the worker was not killed"
        assert out.failures == [] and out.ran == 8
        assert sorted(finished) == sorted(S.run_key(sweep_toy.toy, c) for c in cfgs)  # each once
        assert len(list(st.records())) == 8
        assert out.results == reference(tmp_path, cfgs)
    finally:
        for p in procs:
            _stop(p)


def test_fldp_sweep_command_resumes_and_reports(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    cmd = [sys.executable, "-m", "fldp", "sweep", "sweep_toy:toy", "-g", "x=1,2", "-g", "seed=0,1",
           "-p", "sleep", "0", "--store", str(tmp_path / "runs")]
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "4 run(s): 4 ran, 0 reused" in first.stdout
    cmd[6] = "x=1,2,3"
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0 and "6 run(s): 2 ran, 4 reused" in again.stdout, again.stdout
    failing = subprocess.run(cmd + ["-p", "fail_at", "2"], capture_output=True, text=True, env=env, timeout=120)
    assert failing.returncode == 1 and failing.stdout.count("FAILED") == 2 and "toy failure at x=2" in failing.stdout
    bad = subprocess.run(cmd + ["-g", "x=4"], capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2 and "given twice" in bad.stderr


def test_fresh_from_the_environment_reruns_what_the_store_holds(tmp_path, monkeypatch):
    """`fldp reproduce --fresh` sets FLDP_FRESH=1 for the kernels: RunStore.run then ignores the store."""
    log, st = tmp_path / "starts.log", S.RunStore(tmp_path / "runs")
    cfg = {"x": 2.0, "seed": 0, "log": str(log)}
    first = st.run(sweep_toy.toy, cfg)
    assert st.run(sweep_toy.toy, cfg) == first and starts(log)["x=2.0 seed=0"] == 1
    monkeypatch.setenv(S.FRESH_ENV, "1")
    assert st.run(sweep_toy.toy, cfg) == first and starts(log)["x=2.0 seed=0"] == 2


def test_reproduce_passes_fresh_and_the_backend_to_the_kernels(monkeypatch):
    from fldp.repro import cli

    seen: dict = {}
    monkeypatch.setattr("fldp.repro.pipeline.reproduce", lambda opts: seen.update(
        {k: os.environ.get(k) for k in (S.FRESH_ENV, sweep.BACKEND_ENV, sweep.WORKERS_ENV)}) or type("R", (), {"ok": True})())
    for k in (S.FRESH_ENV, sweep.BACKEND_ENV, sweep.WORKERS_ENV):
        monkeypatch.setenv(k, "")  # so that monkeypatch restores what cli.main sets
    assert cli.main(["reproduce", "--quick", "--fresh", "--backend", "dask", "--workers", "2"]) == 0
    assert seen == {S.FRESH_ENV: "1", sweep.BACKEND_ENV: "dask", sweep.WORKERS_ENV: "2"}


def test_seed_summaries_summarise_each_setting_over_the_seeds_in_one_sweep(tmp_path):
    """The paper modules' runs over seeds: one sweep, per setting verdicts.over_seeds of each run's row,
    the seeds in order, what extra adds; a metric missing from some runs (older stored runs) is left out."""
    import numpy as np

    from fldp import verdicts as V

    st = S.RunStore(tmp_path / "runs")
    settings = {"small": {"x": 1.0}, "large": {"x": 3.0}}
    row = lambda o: {"y": o["y"], "curve": o["curve"], **({"late": 1.0} if o["curve"][0] > 1.0 else {})}
    extra = lambda k, outs, out: {"first_y": outs[0]["y"], "x": settings[k]["x"]}
    out = sweep.seed_summaries(sweep_toy.toy, settings, [4, 2, 7], store=st, row=row, extra=extra)
    plain = sweep.seed_summaries(sweep_toy.toy, settings, [4, 2, 7], store=None, row=row, extra=extra)
    assert list(out) == ["small", "large"] and len(list(st.records())) == 6
    for k, x in (("small", 1.0), ("large", 3.0)):
        runs = [sweep_toy.toy(x=x, seed=s) for s in (4, 2, 7)]
        expect = V.over_seeds(lambda i: {"y": runs[i]["y"], "curve": runs[i]["curve"]}, range(3))
        for got in (out[k], plain[k]):
            assert got["seeds"].tolist() == [4, 2, 7] and got["first_y"] == runs[0]["y"] and got["x"] == x
            np.testing.assert_array_equal(got["y"]["runs"], expect["y"]["runs"])
            np.testing.assert_array_equal(got["curve"]["mean"], expect["curve"]["mean"])
    # seed 7 alone has curve[0] > 1 at x = 1 (0.83, 0.48, 1.30): "late" is left out; at x = 3 every run has it
    assert set(out["small"]) == set(plain["small"]) == {"seeds", "y", "curve", "first_y", "x"}
    assert out["large"]["late"]["runs"].tolist() == plain["large"]["late"]["runs"].tolist() == [1.0, 1.0, 1.0]
