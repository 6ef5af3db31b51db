"""notebooks/explore.ipynb, the app `make explore` serves, runs headless and keeps its widgets.

(The browser test, tests/test_explore_browser.py, serves it with Voila and drives it.)
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "notebooks" / "explore.ipynb"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


@pytest.mark.notebooks
def test_explore_app_executes_headless_and_keeps_widget_state(tmp_path):
    import papermill

    from fldp.repro import execute

    execute.check_kernel()
    out = tmp_path / "explore.ipynb"
    papermill.execute_notebook(str(APP), str(out), kernel_name=execute.KERNEL_NAME, cwd=str(APP.parent),
                               progress_bar=False, execution_timeout=300)
    nb = json.loads(out.read_text())
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    models = nb["metadata"]["widgets"][WIDGET_STATE]["state"].values()
    tabs = [m for m in models if m["model_name"] == "TabModel"]
    assert len(tabs) == 1 and len(tabs[0]["state"]["children"]) == 5, "one tab per explorer"
    titles = tabs[0]["state"]["titles"]
    assert titles[0].startswith("NbAFL") and titles[-1] == "Results browser", titles
    images = [m for m in models if m["model_name"] == "ImageModel"]
    assert len(images) >= 5, "every explorer drew its figure"


@pytest.mark.slow
def test_jupyterlab_serves_the_notebooks_on_the_fldp_kernel(tmp_path):
    """What `make lab` starts: JupyterLab answers, and lists the project's kernel `fldp`."""
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    from test_explore_browser import _free_port

    port, token = _free_port(), "fldp-test"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"), "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
           f"--IdentityProvider.token={token}", f"--notebook-dir={ROOT / 'notebooks'}", "--ServerApp.port_retries=0"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = tmp_path / "lab.log"
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline, specs = time.monotonic() + 60, None
        while specs is None:
            assert proc.poll() is None, log.read_text()[-2000:]
            assert time.monotonic() < deadline, "JupyterLab did not answer in 60 s:\n" + log.read_text()[-2000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/kernelspecs?token={token}", timeout=2) as r:
                    specs = json.loads(r.read())
            except OSError:
                time.sleep(0.5)
        assert "fldp" in specs["kernelspecs"], specs["kernelspecs"].keys()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=10) as r:
            assert r.status == 200 and b"JupyterLab" in r.read()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(20)
