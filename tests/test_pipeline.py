"""`fldp reproduce` on tiny notebooks: report, failing cells, parameters, exit status."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from fldp.repro import chapters, cli, execute, jobs, pipeline
from fldp.repro.chapters import Options
from fldp.repro.execute import UsageError

ROOT = Path(__file__).resolve().parent.parent

PARAMS = "quick = False\nscale = 1\n"
GOOD = [
    PARAMS,
    "import os\nimport matplotlib.pyplot as plt\nfrom fldp.repro.results import Recorder",
    "rec = Recorder('toy', 'good', quick=quick, params={'scale': scale})\n"
    "fig, ax = plt.subplots()\nax.plot([0, 1], [0, scale])\nrec.savefig(fig, 'line')\n"
    "from fldp import verdicts\n"
    "rec.claim('C1', 'scale was injected as 3', kind='diagnostic', setting='paper', verdict=verdicts.holds_if(scale == 3),\n"
    "          falsifier='a scale other than 3', measured=scale, expected=3)\n"
    "rec.claim('C2', 'a claim that does not hold', kind='paper', source='eq. (1)', setting='reading',\n"
    "          setting_note='toy', verdict='fails', falsifier='any', note='on purpose')\n"
    "rec.add('env', {k: os.environ.get(k) for k in ('MPLBACKEND', 'PYTHONHASHSEED')})\n"
    "rec.save()",
]
BAD = [
    "quick = False",
    "x = 1",
    "y = x + 1",
    "raise ValueError('boom in cell three')",
    "never = True",
]


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook whose first cell is tagged ``parameters``."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                 "display_name": "Python 3"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.cells[0].metadata["tags"] = ["parameters"]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


@pytest.fixture
def project(tmp_path: Path, output_dir: Path) -> Path:
    """tmp/notebooks with a good notebook (in a subfolder), a failing one and a checkpoint."""
    nbs = tmp_path / "notebooks"
    write_notebook(nbs / "toy" / "good.ipynb", GOOD)
    write_notebook(nbs / "bad.ipynb", BAD)
    write_notebook(nbs / "toy" / ".ipynb_checkpoints" / "good-checkpoint.ipynb", BAD)
    return nbs


@pytest.fixture
def run(project: Path, tmp_path: Path, capfd: pytest.CaptureFixture):
    """Run the CLI once on ``project`` (quick mode, two jobs, scale=3)."""
    build = tmp_path / "build"
    status = cli.main(["reproduce", "--quick", "--jobs", "2", "-p", "scale", "3",
                       "--notebooks-dir", str(project), "--build-dir", str(build)])
    out, err = capfd.readouterr()
    return status, build, out + err


def test_discover_is_sorted_recursive_and_skips_checkpoints(project: Path):
    found = [p.relative_to(project).as_posix() for p in chapters.discover(project)]
    assert found == ["bad.ipynb", "toy/good.ipynb"]
    assert [p.name for p in chapters.discover(project, ["good"])] == ["good.ipynb"]
    assert [p.name for p in chapters.discover(project, ["b*"])] == ["bad.ipynb"]
    with pytest.raises(UsageError, match="matches --only 'nope'.*available: bad.ipynb"):
        chapters.discover(project, ["nope"])


@pytest.mark.parametrize("text, value", [
    ("3", 3), ("0.5", 0.5), ("True", True), ("[1, 2]", [1, 2]), ("'a'", "a"),
    ("mnist", "mnist"), ("1e-5", 1e-5), ("None", None), ("a b", "a b"),
])
def test_parse_value(text, value):
    assert chapters.parse_value(text) == value


def test_parameter_cell_names(project: Path):
    names, injected_at = chapters.parameter_cell(project / "toy" / "good.ipynb")
    assert names == {"quick", "scale"} and injected_at == 1


@pytest.mark.slow
def test_pipeline_report_statuses_claims_and_figures(run, output_dir: Path):
    status, build, out = run
    assert status == 1  # one notebook failed
    report = (build / "report.md").read_text()
    html = (build / "report.html").read_text()

    # The good notebook: run with quick=True and the injected scale, claims and figure listed.
    saved = json.loads((output_dir / "results" / "toy" / "good.json").read_text())
    assert saved["quick"] is True and saved["params"] == {"scale": 3}
    assert saved["data"]["env"] == {"MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
    assert (output_dir / "figures" / "toy" / "line.png").is_file()
    assert "## toy/good.ipynb" in report and "- Status: ok" in report
    # the register's one renderer (fldp.repro.cards): the same claim cards as REPORT.md, and the quick warning first
    assert report.splitlines()[2].startswith("> **Warning:** quick mode: a smoke test at CI size")
    assert ('<details class="fldp-claim fldp-claim-holds"><summary>🟢 <b>holds</b> · <b>C1</b> · <i>diagnostic, '
            "the paper's setting</i><br>scale was injected as 3<br><span class=\"fldp-why\"><i>Why:</i> measured 3, "
            "expected 3</span></summary>") in report
    assert ('🔴 <b>fails</b> · <b>C2</b> · <i>paper claim, a reading: toy</i><br>a claim that does not hold<br>'
            '<span class="fldp-why"><i>Why:</i> on purpose</span>') in report
    assert "<dt>Falsifier</dt><dd>a scale other than 3</dd>" in report
    assert "<p class='warning'><b>Warning:</b> quick mode: a smoke test" in html
    assert '<span class="fldp-verdict fldp-fails">fails</span>' in html
    readme = (output_dir / "README.md").read_text()
    assert readme.startswith("# Quick-mode outputs") and "smoke test at CI size" in readme
    assert "| toy/good.ipynb | ok |" in report and "| 1 holds · 1 fails |" in report
    assert "figures/toy/line.png" in report
    assert "data:image/png;base64," in html
    assert (build / "notebooks" / "toy" / "good.ipynb").is_file()

    # The bad one: failing cell 3 (source index; In [5] counts the injected-parameters cell).
    assert "## bad.ipynb" in report
    assert "**FAILED** at cell 3 (In [5]): ValueError: boom in cell three" in report
    assert (build / "notebooks" / "bad.ipynb").is_file()
    assert "checkpoint" not in report

    assert "- **Mode:** quick (CI size)" in report and "Total time" in report
    assert "FAILED  bad.ipynb" in out and "FAILED: bad.ipynb" in out
    assert "start   toy/good.ipynb" in out and "ok      toy/good.ipynb" in out
    # kernels talk over IPC sockets: no "running over TCP without encryption" warning, no socket files left
    assert "without encryption" not in out and "eavesdropping" not in out
    assert not list(build.parent.rglob("kernel-*")) and not list((build.parent / "notebooks").rglob("kernel*"))


def test_unknown_parameter_is_rejected_before_running(project: Path, tmp_path: Path, capsys):
    status = cli.main(["reproduce", "-p", "nosuch", "1", "--notebooks-dir", str(project),
                       "--build-dir", str(tmp_path / "build")])
    assert status == 2
    assert "'nosuch'" in capsys.readouterr().err
    assert not (tmp_path / "build").exists()


def test_missing_kernel_fails_with_make_env_hint(project: Path):
    with pytest.raises(UsageError, match=r"kernel 'fldp-missing' is not installed.*make env"):
        pipeline.reproduce(Options(notebooks_dir=project, kernel_name="fldp-missing"))


def test_quick_mode_requires_a_quick_parameter(tmp_path: Path, output_dir: Path):
    nbs = tmp_path / "notebooks"
    write_notebook(nbs / "noquick.ipynb", ["n = 1", "print(n)"])
    report = pipeline.reproduce(Options(quick=True, notebooks_dir=nbs,
                                        build_dir=tmp_path / "build"))
    (result,) = report.notebooks
    assert not result.ok and "does not define `quick`" in result.error.evalue


def test_cell_timeout_names_the_hanging_cell(tmp_path: Path, output_dir: Path):
    nbs = tmp_path / "notebooks"
    write_notebook(nbs / "slow.ipynb", ["quick = False", "import time", "time.sleep(60)"])
    report = pipeline.reproduce(Options(notebooks_dir=nbs, build_dir=tmp_path / "build",
                                        timeout=3, params={"quick": True}))
    (result,) = report.notebooks
    assert result.error is not None and result.error.cell == 2
    assert "Timeout" in result.error.ename


def test_python_m_fldp_only_nonexistent(tmp_path: Path):
    proc = subprocess.run([sys.executable, "-m", "fldp", "reproduce", "--quick", "--only",
                           "nonexistent"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "FLDP_OUTPUT_DIR": str(tmp_path)})
    assert proc.returncode == 2
    assert "error:" in proc.stderr and ("nonexistent" in proc.stderr or "no notebooks" in proc.stderr)


def test_exact_relative_path_selects_one_notebook(tmp_path: Path):
    nbs = tmp_path / "notebooks"
    for rel in ("a/x.ipynb", "b/a/x.ipynb"):
        write_notebook(nbs / rel, ["quick = False"])
    assert [p.relative_to(nbs).as_posix() for p in chapters.discover(nbs, ["a/x.ipynb"])] \
        == ["a/x.ipynb"]
    assert len(chapters.discover(nbs, ["x"])) == 2


def test_dependencies_are_read_from_the_notebooks_results_loads():
    """A notebook that loads another's results (results.load("<paper>", "<notebook>", ...)) depends on it."""
    from types import SimpleNamespace

    root = ROOT / "notebooks"
    tasks = [SimpleNamespace(rel=p.relative_to(root).as_posix(), source=p) for p in chapters.discover(root)]
    deps = chapters.dependencies(tasks)
    assert deps["wei2020/07_effect_regime.ipynb"] == ["wei2020/06_settings_map.ipynb", "wei2020/05_simulations.ipynb"]
    assert deps["zhou/04_experiments.ipynb"] == ["zhou/02_laplace.ipynb"]
    assert deps["wei2020/03_convergence.ipynb"] == [] and deps["00_fedavg_baseline.ipynb"] == []
    alone = [t for t in tasks if t.rel == "zhou/04_experiments.ipynb"]  # its dependency not selected:
    assert chapters.dependencies(alone) == {"zhou/04_experiments.ipynb": []}  # it reads the committed results


def test_jobs_never_start_a_notebook_before_the_one_it_loads():
    """With two workers, an independent notebook runs beside a slow one, and the notebook that
    loads the slow one's results starts only after it finished; results keep the task order."""
    import threading
    import time as _time
    from concurrent.futures import ThreadPoolExecutor
    from types import SimpleNamespace

    events, lock = [], threading.Lock()

    def runner(task):
        with lock:
            events.append(("start", task.rel))
        _time.sleep(0.3 if task.rel == "slow" else 0.05)
        with lock:
            events.append(("end", task.rel))
        return task.rel

    tasks = [SimpleNamespace(rel=r) for r in ("dependent", "slow", "free")]
    deps = {"dependent": ["slow"], "slow": [], "free": []}
    out = jobs.run_tasks(tasks, 2, deps, runner=runner, executor=ThreadPoolExecutor(2))
    assert out == ["dependent", "slow", "free"]
    assert events.index(("start", "dependent")) > events.index(("end", "slow"))
    assert events.index(("start", "free")) < events.index(("end", "slow"))  # both workers busy
    serial = jobs.run_tasks(tasks, 1, deps, runner=lambda t: t.rel)
    assert serial == ["dependent", "slow", "free"]  # in task order, though run after "slow"
    # a dependency outside the selection was run before (its committed results are read): no wait
    assert jobs.run_tasks(tasks[1:], 2, {"slow": ["gone"], "free": []}, runner=runner,
                              executor=ThreadPoolExecutor(2)) == ["slow", "free"]
    with pytest.raises(execute.UsageError, match="cycle"):
        jobs.run_tasks(tasks, 2, {"dependent": ["slow"], "slow": ["dependent"]}, runner=runner,
                           executor=ThreadPoolExecutor(2))


def test_ctrl_c_stops_notebooks_running_side_by_side_at_once(tmp_path: Path):
    """SIGINT (Ctrl-C on a terminal) stops `--jobs N` at once: the running notebooks' worker
    processes are ended, instead of the pool waiting for them to finish (hours for a long one)."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    (tmp_path / "slow_runner.py").write_text("import time\ndef run(task):\n    time.sleep(120)\n")
    # A terminal's foreground job takes SIGINT; a child inherits an ignored SIGINT from its parent
    # (under pytest-xdist a worker can hold one), so the script restores Python's handler first.
    script = textwrap.dedent(f"""
        import signal, sys, types
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.path.insert(0, {str(tmp_path)!r})
        import slow_runner
        from fldp.repro.jobs import run_tasks
        tasks = [types.SimpleNamespace(rel=f"p/{{i}}.ipynb") for i in range(3)]
        print("started", flush=True)
        try:
            run_tasks(tasks, jobs=2, deps={{}}, runner=slow_runner.run)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)  # its own process group, as a terminal's job
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(3)  # the two workers have started their tasks
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
        out, _ = proc.communicate(timeout=60)
        assert "interrupted" in out and time.monotonic() - t0 < 30, out
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_clone_without_the_data_gets_an_error_not_a_traceback(monkeypatch, capsys):
    """The cost model trains on MNIST: a fresh clone without data/ is told what to put where."""
    from fldp.data.sources import MissingDataError
    from fldp.repro import cli, cost

    def missing(**kw):
        raise MissingDataError("dataset 'mnist': 4 file(s) missing and no network to download them.")

    monkeypatch.setattr(cost, "calibrate", missing)
    monkeypatch.setattr(cost, "cached_calibration", lambda *a, **k: None)
    assert cli.main(["reproduce", "--plan", "--only", "wei2020/01"]) == 2
    err = capsys.readouterr().err
    assert ("fldp reproduce: error: the cost model is measured on MNIST, which is missing here: dataset 'mnist'"
            in err) and "Traceback" not in err
