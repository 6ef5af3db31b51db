"""The Voila app as a person uses it: Debian's Chromium, driven by Playwright, moves the NbAFL
explorer's eps slider and checks that the shown sigmas become what ``fldp`` computes and that
the plot was redrawn.

Pitfalls handled (measured on 2-core machines): Voila sometimes never marks the last cell done
(about 1 page load in 70, 1 in 5 under load), so the page is loaded with ``wait_until="commit"``
and retried with a fresh page; readiness is probed on a static file, not ``/`` (which starts a
kernel); every non-loopback request is aborted and fails the test (Voila's own template asks a
CDN for a web font; scripts/explore.sh serves it with a template that does not); Voila gets
its own ``JUPYTER_RUNTIME_DIR`` / ``JUPYTER_DATA_DIR``; the server is always stopped.  Skips
when Chromium or Playwright is missing, except under ``CI=true``, where that is a failure.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest

from fldp.papers.wei2020 import theory as th
from fldp.teach.widgets import _base

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "notebooks" / "explore.ipynb"
BUILD = ROOT / "build"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TIMEOUT_MS = 60_000
pytestmark = pytest.mark.browser


def _require_browser() -> None:
    missing = []
    if CHROMIUM is None:
        missing.append("Debian's chromium (`make system` as root, or `sudo apt-get install chromium`)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package (`make env` installs it)")
    if missing:
        message = "browser test needs " + " and ".join(missing)
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message + " (CI=true: the browser test must run)")
        pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _loopback(url: str) -> bool:
    host = urlparse(url).hostname or ""
    return url.startswith(("data:", "blob:", "about:")) or host in ("127.0.0.1", "localhost", "::1")


def start_voila(app: Path, workdir: Path) -> tuple[subprocess.Popen, str, Path]:
    """Voila on a free loopback port with its own runtime and data dirs; waits for a static file."""
    port, log = _free_port(), workdir / "voila.log"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(workdir / "runtime"), "JUPYTER_DATA_DIR": str(workdir / "data"),
           "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    assert app == APP, "scripts/explore.sh serves notebooks/explore.ipynb"
    voila = ["bash", str(ROOT / "scripts" / "explore.sh"), sys.executable, str(port), "--ServerApp.port_retries=0"]
    proc = subprocess.Popen(voila, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, cwd=str(ROOT),
                            start_new_session=True)
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + TIMEOUT_MS / 1000
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"voila exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/voila/static/voila.js", timeout=2) as r:
                if r.status == 200:
                    return proc, url, log
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"voila did not serve its static files within 60 s:\n{log.read_text()[-3000:]}")
        time.sleep(0.25)


def stop(proc: subprocess.Popen) -> None:
    """Stop the server and its kernels (its process group)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture(scope="module")
def voila(tmp_path_factory):
    _require_browser()
    proc, url, log = start_voila(APP, tmp_path_factory.mktemp("voila"))
    try:
        yield url, log
    finally:
        stop(proc)


def open_app(context, url: str, ready: str, tries: int = 3):
    """A page with ``ready`` visible, retrying with a fresh page when Voila stalls."""
    last = None
    for _ in range(tries):
        page = context.new_page()
        try:
            page.goto(url + "/", wait_until="commit", timeout=TIMEOUT_MS)
            page.wait_for_selector(ready, state="visible", timeout=TIMEOUT_MS)
            return page
        except Exception as exc:  # playwright's TimeoutError: try a fresh page
            last = exc
            page.close()
    raise AssertionError(f"the app never showed {ready} in {tries} page loads: {last}")


def shown(page, key: str) -> str:
    return page.inner_text(f".fldp-wei2020-table .fldp-value[data-key='{key}']").strip()


def test_wei2020_eps_slider_updates_sigmas_and_plot(voila):
    from playwright.sync_api import sync_playwright

    url, log = voila
    BUILD.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1300})
            external = []

            def route(r):
                if _loopback(r.request.url):
                    r.continue_()
                else:
                    external.append(r.request.url)
                    r.abort()
            context.route("**/*", route)
            page = open_app(context, url, ".fldp-wei2020-table .fldp-value[data-key='sigma_U']")
            plot = page.locator("img.fldp-wei2020-plot")
            page.wait_for_function("() => { const i = document.querySelector('img.fldp-wei2020-plot');"
                                   " return i && i.src && i.naturalWidth > 0; }", timeout=TIMEOUT_MS)
            before = {k: shown(page, k) for k in ("sigma_U", "sigma_D", "sigma_A")}
            src_before = plot.get_attribute("src")
            # the defaults: Sec. VI's setting (eps 60, delta 0.01, N 50, T 25, L 1, C 20, m 1200)
            assert before["sigma_U"] == _base.fmt(th.sigma_uplink(C=20.0, m=1200, eps=60.0, L=1, delta=0.01))

            # drag the eps slider's handle past the right end of its track: eps = its maximum, 200
            page.evaluate("""() => { window.__fldp = {src: document.querySelector('img.fldp-wei2020-plot').src};
                new MutationObserver(() => { window.__fldp.redrawn = performance.now(); })
                  .observe(document.querySelector('img.fldp-wei2020-plot'), {attributes: true, attributeFilter: ['src']});
                document.addEventListener('mouseup', () => { window.__fldp.released = performance.now(); }, true); }""")
            handle = page.locator(".fldp-wei2020-eps .noUi-handle")
            track = page.locator(".fldp-wei2020-eps .noUi-target").bounding_box()
            box = handle.bounding_box()
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.down()
            page.mouse.move(track["x"] + track["width"] + 50, box["y"] + box["height"] / 2, steps=8)
            page.mouse.up()
            page.wait_for_function("() => window.__fldp.redrawn !== undefined && "
                                   "document.querySelector('img.fldp-wei2020-plot').src !== window.__fldp.src",
                                   timeout=TIMEOUT_MS)
            latency_ms = page.evaluate("() => window.__fldp.redrawn - window.__fldp.released")
            c = th.gaussian_c(delta=0.01)
            want = {"sigma_U": th.sigma_uplink(C=20.0, m=1200, eps=200.0, L=1, c=c),
                    "sigma_D": th.sigma_downlink(C=20.0, m=1200, N=50, T=25, L=1, eps=200.0, c=c),
                    "sigma_A": th.sigma_aggregate(C=20.0, m=1200, N=50, T=25, L=1, eps=200.0, c=c)}
            page.wait_for_function(f"() => document.querySelector(\".fldp-wei2020-table .fldp-value[data-key='sigma_U']\")"
                                   f".innerText.trim() === '{_base.fmt(want['sigma_U'])}'", timeout=TIMEOUT_MS)
            after = {k: shown(page, k) for k in want}
            assert after == {k: _base.fmt(float(v)) for k, v in want.items()}, (before, after)
            assert after != before
            assert plot.get_attribute("src") != src_before
            page.screenshot(path=str(BUILD / "explore_wei2020.png"), full_page=True)
        finally:
            browser.close()
    # the page asks nothing outside the loopback address (no CDN font), and the server's log of the
    # page loads holds no traceback and none of the warnings scripts/explore.sh exists to prevent
    assert external == [], external
    text = log.read_text()
    for noise in ("Traceback", "is not trusted", "without encryption", "ERROR", "cannot be longer"):
        assert noise not in text, f"voila printed {noise!r}:\n{text[-3000:]}"
    seconds = time.perf_counter() - t0
    (BUILD / "explore_browser_timing.json").write_text(json.dumps(
        {"slider_to_redraw_ms": latency_ms, "browser_session_s": seconds}, indent=1))
    print(f"slider-to-redraw latency {latency_ms:.0f} ms; browser session {seconds:.1f} s")
