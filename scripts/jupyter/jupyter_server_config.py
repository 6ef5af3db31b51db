"""Jupyter server configuration for `make lab` (JUPYTER_CONFIG_PATH=scripts/jupyter).

After JupyterLab saves a notebook that git routes through the nbstripout filter (.gitattributes:
notebooks/**), the clone's index entry is refreshed when the notebook's stripped content is what
git already holds: a chapter that was only run and saved then leaves `git status` clean.  (git
reports a file whose size changed as modified without running its clean filter, so without this
`git status` lists every executed chapter although `git diff` shows nothing.)  An edited cell
still shows: its stripped content differs, and nothing is staged.
"""
import subprocess
from pathlib import Path


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def refresh_stripped_notebook(model, os_path, contents_manager, **kwargs):
    if model.get("type") != "notebook":
        return
    path = Path(os_path)
    try:
        attr = _git(path.parent, "check-attr", "filter", "--", path.name)
        if not attr.stdout.strip().endswith(": nbstripout"):
            return
        if _git(path.parent, "ls-files", "--error-unmatch", "--", path.name).returncode != 0:
            return  # not tracked: nothing to refresh
        if _git(path.parent, "diff", "--quiet", "--no-ext-diff", "--", path.name).returncode == 0:
            _git(path.parent, "add", "--", path.name)  # the same blob: only the index's stat is renewed
    except (OSError, subprocess.SubprocessError) as exc:
        contents_manager.log.warning("fldp: could not refresh git's index for %s: %s", path, exc)


c.FileContentsManager.post_save_hook = refresh_stripped_notebook  # noqa: F821 (c: the config object)
