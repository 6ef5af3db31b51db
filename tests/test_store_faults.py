"""The run store under concurrency and faults: two sweeps at once, a writer killed mid-write, a
full disk.  Afterwards every completed run is readable, nothing half-written is read, no run is
lost, and a re-run completes the rest."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path


from fldp.repro import results, store as S, sweep

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_toy  # noqa: E402

TESTS = Path(__file__).resolve().parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}


def _sweep(store: Path, xs, *, sleep=0.2) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "fldp", "sweep", "sweep_toy:toy", "-g", "x=" + ",".join(map(str, xs)),
                             "-p", "seed", "0", "-p", "sleep", str(sleep), "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)


def _expected(x):
    return S.normalise(sweep_toy.toy(x=float(x), seed=0))


def test_two_sweeps_on_overlapping_grids_into_one_store_at_once(tmp_path):
    a, b = _sweep(tmp_path, [1, 2, 3, 4, 5, 6]), _sweep(tmp_path, [4, 5, 6, 7, 8, 9])
    outs = [p.communicate(timeout=120) for p in (a, b)]
    assert a.returncode == b.returncode == 0, outs
    st = S.RunStore(tmp_path)
    recs = {r.config["x"]: r for r in st.records()}
    assert sorted(recs) == list(range(1, 10))  # no run lost, none twice
    for x, r in recs.items():
        assert r.result == json.loads(json.dumps(_expected(x)))  # each file holds its own run, whole
    assert not list(tmp_path.rglob("*.tmp"))  # no temporary file left behind
    again = _sweep(tmp_path, range(1, 10))
    out, _ = again.communicate(timeout=60)
    assert again.returncode == 0 and "0 ran, 9 reused" in out


KILLER = r"""
import os, signal, sys
from fldp.repro import results, store as S
import sweep_toy
st = S.RunStore(sys.argv[1])
real = os.fdopen
def half_then_die(fd, mode="r", *a, **k):
    fh = real(fd, mode, *a, **k)
    write = fh.write
    def w(data):
        write(data[: len(data) // 2]); fh.flush(); os.fsync(fh.fileno())
        os.kill(os.getpid(), signal.SIGKILL)  # killed in the middle of writing the run
    fh.write = w
    return fh
st.save(sweep_toy.toy, {"x": 1.0, "seed": 0}, sweep_toy.toy(x=1.0, seed=0), 0.1)   # a whole run first
os.fdopen = half_then_die
st.save(sweep_toy.toy, {"x": 2.0, "seed": 0}, sweep_toy.toy(x=2.0, seed=0), 0.1)
"""


def test_a_writer_killed_mid_write_leaves_nothing_that_is_read(tmp_path):
    p = subprocess.run([sys.executable, "-c", KILLER, str(tmp_path)], env=ENV, capture_output=True, text=True)
    assert p.returncode == -9, p.stderr  # SIGKILL
    st = S.RunStore(tmp_path)
    tmps = list(tmp_path.rglob(".*.tmp"))
    assert len(tmps) == 1 and tmps[0].stat().st_size > 0  # the half-written file is there ...
    assert [r.config["x"] for r in st.records()] == [1.0]  # ... and never read as a run
    assert st.load(sweep_toy.toy, {"x": 2.0, "seed": 0}) is None
    out = sweep.run_all(sweep_toy.toy, [{"x": x, "seed": 0} for x in (1.0, 2.0, 3.0)], store=st, progress=False)
    assert (out.ran, out.reused) == (2, 1)  # the completed run kept, the rest completed
    assert out.results[1] == json.loads(json.dumps(_expected(2.0)))
    assert tmps[0].exists()  # a fresh temporary file may be another writer's: left alone ...
    os.utime(tmps[0], (time.time() - 7200, time.time() - 7200))
    assert st.remove_stale_temporaries() == tmps and not tmps[0].exists()  # ... an hour later it goes


def test_a_full_disk_fails_the_runs_it_cannot_store_and_a_rerun_completes(tmp_path, monkeypatch, capsys):
    st = S.RunStore(tmp_path)
    cfgs = [{"x": float(x), "seed": 0} for x in (1, 2, 3)]
    sweep.run_all(sweep_toy.toy, cfgs[:1], store=st, progress=False)
    real = results.os.fdopen

    def full(fd, mode="r", *a, **k):
        fh = real(fd, mode, *a, **k)
        write = fh.write

        def w(data):
            write(data[:10])
            raise OSError(errno.ENOSPC, "No space left on device")
        fh.write = w
        return fh

    monkeypatch.setattr(results.os, "fdopen", full)
    out = sweep.run_all(sweep_toy.toy, cfgs, store=st, progress=False, raise_on_failure=False)
    assert (out.ran, out.reused, len(out.failures)) == (0, 1, 2)
    assert all("could not be stored" in f.error and "No space left on device" in f.error for f in out.failures)
    assert not list(tmp_path.rglob("*.tmp"))  # the partial file was removed
    assert [r.config["x"] for r in st.records()] == [1.0]  # the stored run is intact
    monkeypatch.setattr(results.os, "fdopen", real)  # space again
    again = sweep.run_all(sweep_toy.toy, cfgs, store=st, progress=False)
    assert (again.ran, again.reused) == (2, 1) and again.results[2] == json.loads(json.dumps(_expected(3.0)))


def test_the_cli_reports_a_full_disk_in_one_line_per_run(tmp_path):
    code = ("import errno, os, sys\nfrom fldp.repro import cli, paths\nreal = paths.os.fdopen\n"
            "def full(fd, mode='r', *a, **k):\n    os.close(fd)\n    raise OSError(errno.ENOSPC, 'No space left on device')\n"
            "paths.os.fdopen = full\n"
            f"sys.exit(cli.main(['sweep', 'sweep_toy:toy', '-g', 'x=1,2', '-p', 'seed', '0', '--store', {str(tmp_path)!r}]))")
    p = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "Traceback" not in p.stdout + p.stderr
    failed = [ln for ln in p.stdout.splitlines() if ln.startswith("FAILED")]
    assert len(failed) == 2 and all("No space left on device" in ln for ln in failed)
