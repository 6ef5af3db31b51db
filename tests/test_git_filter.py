"""notebooks/ stays free of outputs in git: the nbstripout filter that `make env` sets up
(scripts/git_filter.sh, routed by .gitattributes).

A chapter run and saved in JupyterLab gains outputs, execution counts, the kernel's language_info
and widget state; with the filter, `git status` and `git diff` stay clean, while an edit of a cell's
source still shows.  Every committed notebook is already what the filter writes (else the first
save of an unchanged chapter would show as a change).
"""
from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = Path("notebooks/wei2020/01_preliminaries.ipynb")
GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="needs git")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run([GIT, *args], cwd=repo, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytest.fixture()
def repo(tmp_path):
    """A clone-like repo holding .gitattributes, .gitignore and one chapter, committed; the filter not yet set."""
    r = tmp_path / "repo"
    (r / CHAPTER.parent).mkdir(parents=True)
    git(r, "init", "-q")
    git(r, "config", "user.email", "t@example.org")
    git(r, "config", "user.name", "t")
    shutil.copy(ROOT / ".gitattributes", r / ".gitattributes")
    shutil.copy(ROOT / ".gitignore", r / ".gitignore")
    shutil.copy(ROOT / CHAPTER, r / CHAPTER)
    git(r, "add", ".")
    git(r, "commit", "-q", "-m", "chapter")
    return r


def set_up_filter(repo: Path) -> None:
    subprocess.run(["bash", str(ROOT / "scripts" / "git_filter.sh"), sys.executable], cwd=repo, check=True,
                   capture_output=True, timeout=60)


def save_as_jupyterlab_would(path: Path) -> None:
    """The chapter with what a run and a save in JupyterLab add to it."""
    nb = nbformat.read(path, as_version=4)
    nb = copy.deepcopy(nb)
    nb.metadata["language_info"] = {"codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py",
                                    "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
                                    "pygments_lexer": "ipython3", "version": "3.11.7"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                                            "version_minor": 0}}
    count = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        count += 1
        cell.execution_count = count
        cell.metadata["execution"] = {"iopub.execute_input": "2026-11-27T10:00:00.000Z"}
        cell.metadata["scrolled"] = True
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"cell {count}\n"),
                        nbformat.v4.new_output("execute_result", data={"text/plain": "42", "image/png": "iVBORw0KGgo="},
                                               execution_count=count)]
    nbformat.write(nb, path)


def test_committed_notebooks_are_what_the_filter_writes(tmp_path):
    """In-process with nbstripout's own strip_output and the options the filter is given (one
    python per notebook would take ~3 s each); the git tests below run the real filter."""
    import io
    import shlex

    from nbstripout import strip_output

    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q")
    set_up_filter(r)
    args = shlex.split(git(r, "config", "filter.nbstripout.clean"))
    assert args[1:4] == ["-m", "nbstripout", "--keep-id"] and args[4] == "--extra-keys", args
    not_clean = []
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        out = io.StringIO()
        nbformat.write(strip_output(nb, keep_output=False, keep_count=False, keep_id=True,
                                    extra_keys=args[5].split()), out)
        if out.getvalue() != path.read_text():
            not_clean.append(str(path.relative_to(ROOT)))
    assert not_clean == [], f"not in the filter's form (run the filter over them): {not_clean}"


@pytest.mark.slow
def test_a_chapter_run_and_saved_in_jupyterlab_leaves_git_clean(repo):
    set_up_filter(repo)
    save_as_jupyterlab_would(repo / CHAPTER)
    assert "image/png" in (repo / CHAPTER).read_text()  # the file on disk has outputs
    assert git(repo, "diff") == ""
    # git lists a file whose size changed without running the filter (the server hook of
    # scripts/jupyter refreshes it; see the test below); adding it stages nothing
    git(repo, "add", str(CHAPTER))
    assert git(repo, "diff", "--cached") == ""  # the outputs never reach a commit
    assert git(repo, "status", "--porcelain") == ""


def test_without_the_filter_the_same_save_shows(repo):
    save_as_jupyterlab_would(repo / CHAPTER)
    assert git(repo, "status", "--porcelain").strip() == f"M {CHAPTER.as_posix()}"


@pytest.mark.slow
def test_a_source_edit_still_shows(repo):
    set_up_filter(repo)
    nb = nbformat.read(repo / CHAPTER, as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.source += "\nx = 1"
    nbformat.write(nb, repo / CHAPTER)
    save_as_jupyterlab_would(repo / CHAPTER)
    assert git(repo, "status", "--porcelain").strip() == f"M {CHAPTER.as_posix()}"
    diff = git(repo, "diff")
    assert "x = 1" in diff and "image/png" not in diff and "execution_count\": 1" not in diff


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_a_save_through_jupyter_servers_api_leaves_git_status_clean(repo, tmp_path):
    """`make lab`'s server (scripts/jupyter) saves the chapter as JupyterLab does (PUT of the
    contents API); git status is then clean, although the file on disk has its outputs."""
    import json
    import os
    import signal
    import time
    import urllib.request

    set_up_filter(repo)
    saved = tmp_path / "saved.ipynb"
    shutil.copy(repo / CHAPTER, saved)
    save_as_jupyterlab_would(saved)
    port, token = _free_port(), "fldp-test"
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(ROOT / "scripts" / "jupyter"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"), "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    cmd = [sys.executable, "-m", "jupyter_server", f"--ServerApp.root_dir={repo}", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
           "--ServerApp.open_browser=False", "--allow-root"]
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/api/contents/{CHAPTER.as_posix()}"
    headers = {"Authorization": f"token {token}", "Content-Type": "application/json"}
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/api/status", headers=headers),
                                       timeout=2)
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "server.log").read_text()
                time.sleep(0.3)
        body = json.dumps({"type": "notebook", "format": "json", "content": json.loads(saved.read_text())})
        req = urllib.request.Request(url, data=body.encode(), headers=headers, method="PUT")
        assert urllib.request.urlopen(req, timeout=60).status == 200
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(20)
    assert "image/png" in (repo / CHAPTER).read_text()
    assert git(repo, "status", "--porcelain") == ""
