"""The command line never shows a traceback for a user's mistake: one line naming the problem and
what to do; exit status 2 for a request that cannot run, 1 for runs that failed."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LI = ["li2021.secure_fedavg", "-p", "Q", "1", "-p", "b", "1", "-p", "K", "2", "-p", "rounds", "1", "-p", "N", "4",
      "-p", "subsample", "200", "-p", "max_test", "100"]


def fldp(*args, env=None, timeout=180):
    """Run ``python -m fldp ARGS`` as a user would; returns (status, stdout, stderr)."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("FLDP_OUTPUT_DIR", None)
    p = subprocess.run([sys.executable, "-m", "fldp", *map(str, args)], capture_output=True, text=True,
                       env=full_env, timeout=timeout, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def one_line_error(err: str, *words: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip() and "run failed" not in ln and "it/s]" not in ln]  # no bar
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("args, words", [
    (["sweep", "wei2020.nbafl", "-g", "eps=-1", "-p", "N", "5", "-p", "T", "2"],
     ["needs the setting(s) delta, C, L", "-p NAME VALUE"]),
    (["sweep", "wei2020.nbafl", "-g", "eps=1", "-p", "Nx", "5"], ["has no setting(s) Nx", "its settings are N, T"]),
    (["sweep", "wei2020.nbafls", "-g", "eps=1"], ["unknown run function 'wei2020.nbafls'", "wei2020.nbafl"]),
    (["sweep", "wei2020.nbafl", "-g", "eps=1,,2"], ["an empty value"]),
    (["sweep", "wei2020.nbafl", "-g", "eps=[1,2"], ["unbalanced brackets"]),
    (["sweep", "wei2020.nbafl", "-g", "eps"], ["write NAME=V1,V2"]),
    (["sweep", "wei2020.nbafl", "-g", "eps=1", "-g", "eps=2"], ["given twice"]),
    (["sweep", "wei2020.nbafl", "-g", "eps=1", "--backend", "mpi"], ["invalid choice: 'mpi'"]),
    (["sweep", "wei2020.nbafl", "--workers", "0"], ["must be >= 1"]),
    (["reproduce", "--only", "no_such_notebook"], ["no notebook under", "matches --only"]),
    (["reproduce", "--quick", "--only", "wei2020/01", "-p", "no_such_parameter", "1"], ["no_such_parameter"]),
])
@pytest.mark.slow
def test_an_invalid_request_is_one_line_and_status_2(args, words):
    status, out, err = fldp(*args)
    assert status == 2
    line = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("usage:") and not ln.startswith(" ")]
    assert "Traceback" not in err + out and len(line) == 1, err
    assert all(w in line[0] for w in words), line[0]


def test_a_store_that_is_not_writable(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    status, out, err = fldp("sweep", *LI, "-g", "eps=1", "--store", blocker / "runs")
    assert status == 2
    one_line_error(err, "the run store", "is not writable", "--store DIR")


def test_a_build_folder_that_is_not_writable(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    status, out, err = fldp("reproduce", "--quick", "--only", "wei2020/01", "--build-dir", blocker / "build")
    assert status == 2
    one_line_error(err, "the build folder", "is not writable", "--build-dir DIR")


@pytest.mark.slow
def test_an_unreachable_dask_scheduler():
    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    status, out, err = fldp("sweep", *LI, "-g", "eps=1", "--scheduler", f"tcp://127.0.0.1:{port}",
                            "--store", ROOT / "build" / "test-cli-runs", env={"FLDP_DASK_TIMEOUT": "2s"})
    assert status == 2
    one_line_error(err, f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}", "dask scheduler")


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_a_missing_or_truncated_data_file_fails_the_runs_in_one_line(tmp_path, damage):
    data = tmp_path / "data" / "adult"
    data.mkdir(parents=True)
    src = ROOT / "data" / "adult"
    if not (src / "adult.test").exists():
        pytest.skip("the Adult data set is not in data/adult (see data/README.md)")
    shutil.copy(src / "adult.test", data / "adult.test")
    if damage == "truncated":
        lines = (src / "adult.data").read_text().splitlines(keepends=True)
        (data / "adult.data").write_text("".join(lines[:1000]))
    status, out, err = fldp("sweep", *LI, "-g", "eps=1", "--store", tmp_path / "runs",
                            env={"FLDP_DATA_DIR": str(tmp_path / "data"), "FLDP_CACHE_DIR": str(tmp_path / "cache")})
    assert status == 1 and "Traceback" not in out + err
    failed = [ln for ln in out.splitlines() if ln.startswith("FAILED")]
    assert len(failed) == 1
    expected = "adult.data at" if damage == "missing" else "holds 1000 rows, not the official 32561"
    assert "MissingDataError: dataset 'adult'" in failed[0] and expected in failed[0]
    assert "1 run(s): 0 ran, 0 reused" in out and "1 failed" in out


@pytest.mark.slow
def test_a_failing_run_is_one_line_and_status_1(tmp_path):
    status, out, err = fldp("sweep", *LI, "-g", "eps=-1", "--store", tmp_path / "runs")
    assert status == 1 and "Traceback" not in out + err
    failed = [ln for ln in out.splitlines() if ln.startswith("FAILED")]
    assert len(failed) == 1 and "eps=-1" in failed[0] and "out of range" in failed[0]
