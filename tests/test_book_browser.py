"""The book in a real browser: the built site (``make book``) served on a free loopback port and
driven in Debian's Chromium with Playwright.

One session opens the landing page, every part page, every chapter page and the claims register,
and asserts that every image loads, that each chapter shows its verdicts (one claim block per
committed claim, each with its verdict), that the Explore sections' widgets render from their
saved state, that the math is typeset, that the search page finds ``sigma_D``, that no page logs a console error, and that no
request leaves the loopback address (the widget manager and MathJax are vendored into the site).
At 1400x1000, on the register and two chapters, no claim block overflows the article's column
(closed or opened) and the reason of every inconclusive claim is in view without scrolling
sideways; the register's and li2021/03's screenshots are left in ``$FLDP_SCREENSHOTS``
(``build/screenshots``; the committed ones are in ``docs/screenshots/``).

The site: ``$FLDP_BOOK`` when it names a built one (``.ci/run`` builds it with ``make book`` first),
otherwise built here from the working tree into a temporary folder (about a minute).
"""
from __future__ import annotations

import functools
import http.server
import json
import os
import threading
from pathlib import Path

import pytest

from test_explore_browser import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, _loopback, _require_browser

from fldp.repro import book, cards

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.browser
#: Where the test leaves its screenshots of the register and a chapter's verdicts (docs/screenshots/ holds the committed ones).
SHOTS = Path(os.environ.get("FLDP_SCREENSHOTS", ROOT / "build" / "screenshots"))


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    _require_browser()
    given = os.environ.get("FLDP_BOOK")
    if given:
        out = Path(given)
        assert (out / "index.html").is_file(), f"FLDP_BOOK={given} holds no built book (run `make book`)"
    else:
        tmp = tmp_path_factory.mktemp("book")
        out = book.build(out=tmp / "book", stage_dir=tmp / "book-src")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", out
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser_session(site):
    """One browser context for the module: every request is logged, and one that is not to the
    loopback address is blocked and recorded; every console error and page error is recorded."""
    from playwright.sync_api import sync_playwright

    external, errors = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1300, "height": 1000})

        def route(r):
            if _loopback(r.request.url):
                r.continue_()
            else:
                external.append(r.request.url)
                r.abort()
        context.route("**/*", route)
        try:
            yield context, external, errors
        finally:
            browser.close()


def _open(context, errors: list, url: str):
    page = context.new_page()
    page.on("console", lambda m: errors.append(f"{url}: console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{url}: page error: {e}"))
    page.goto(url, wait_until="load", timeout=TIMEOUT_MS)
    return page


_BROKEN_IMAGES = """async () => {
  const imgs = Array.from(document.images);
  imgs.forEach(i => { i.loading = 'eager'; });
  await Promise.all(imgs.map(i => i.complete ? null : new Promise(ok => {
      i.addEventListener('load', ok); i.addEventListener('error', ok); setTimeout(ok, 20000); })));
  return imgs.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.getAttribute('src'));
}"""


def _pages(out: Path) -> list[str]:
    chapters = [f"notebooks/{Path(ch.rel).with_suffix('.html').as_posix()}" for ch in book.chapters()]
    parts = sorted(p.relative_to(out).as_posix() for p in (out / "notebooks").glob("*/index.html"))
    return ["index.html", *parts, "notebooks/baseline.html", *chapters, "register.html"]


def test_the_book_in_a_browser(site, browser_session):
    url, out = site
    context, external, errors = browser_session
    chapters = {f"notebooks/{Path(ch.rel).with_suffix('.html').as_posix()}": ch for ch in book.chapters()}
    assert len(chapters) >= 20, "the book lost chapters"
    widget_pages, math_pages = [], 0
    for rel in _pages(out):
        assert (out / rel).is_file(), f"the book has no page {rel}"
        page = _open(context, errors, f"{url}/{rel}")
        broken = page.evaluate(_BROKEN_IMAGES)
        assert not broken, f"{rel}: images that do not load: {broken}"
        if page.locator("span.math, div.math").count():  # the vendored MathJax typesets the page's math
            try:
                page.wait_for_selector("mjx-container", state="attached", timeout=TIMEOUT_MS)
            except Exception as exc:
                raise AssertionError(f"{rel}: its math was not typeset (MathJax did not load?)") from exc
            math_pages += 1
        ch = chapters.get(rel)
        if ch is not None and ch.entry is not None and ch.entry.claims:
            claims = page.locator("section#the-verdicts-of-this-chapter details.fldp-claim")
            assert claims.count() == len(ch.entry.claims), f"{rel}: {claims.count()} claim blocks"
            shown = claims.locator("summary .fldp-verdict").all_inner_texts()
            assert shown == [cards.verdict_label(c) for c in ch.entry.claims], f"{rel}: verdicts {shown[:5]}"
        if ch is not None and ch.executed is not None and "widget-view+json" in ch.executed.read_text():
            try:
                page.wait_for_selector(".jupyter-widgets.widget-container", state="attached", timeout=TIMEOUT_MS)
            except Exception as exc:  # playwright's TimeoutError, with the page's name
                raise AssertionError(f"{rel}: no widget rendered from the saved state within 60 s") from exc
            assert page.locator(".jupyter-widgets").count() >= 3, f"{rel}: the explorer did not render"
            widget_pages.append(rel)
        if rel == "register.html":
            n = sum(len(ch.entry.claims) for ch in chapters.values() if ch.entry is not None)
            assert page.locator("details.fldp-claim").count() == n, "the register lost claims"
        page.close()
    assert widget_pages, "no chapter page renders a static explorer (no executed copy with widget state?)"
    assert math_pages, "no page has math to typeset"

    page = _open(context, errors, f"{url}/search.html?q=sigma_D")
    page.wait_for_selector("#search-results ul.search li", timeout=TIMEOUT_MS)
    links = page.evaluate("() => Array.from(document.querySelectorAll('#search-results ul.search li a'))"
                          ".map(a => a.getAttribute('href'))")
    assert any("notebooks/wei2020/02_global_dp" in h for h in links), f"sigma_D's chapter not found: {links[:10]}"
    assert any("fldp.papers.wei2020.theory" in h for h in links), f"sigma_downlink's reference not found: {links[:10]}"
    page.close()

    assert not errors, "console errors:\n" + "\n".join(errors[:20])
    assert not external, f"requests that left the loopback address: {sorted(set(external))[:10]}"


def test_a_static_widget_shows_its_saved_values(site, browser_session):
    """An explorer on a chapter page is rendered from the state papermill saved: each slider of the
    saved state shows its label and its saved value (the readout) in the page."""
    url, out = site
    context, external, errors = browser_session
    executed = [ch for ch in book.chapters()
                if ch.executed is not None and "SliderModel" in ch.executed.read_text(encoding="utf-8")]
    if not executed:
        pytest.fail("no committed executed chapter holds an explorer's widget state")
    ch = executed[0]
    state = json.loads(ch.executed.read_text(encoding="utf-8"))["metadata"]["widgets"][
        "application/vnd.jupyter.widget-state+json"]["state"]
    saved = {m["state"]["description"]: float(m["state"]["value"]) for m in state.values()
             if m.get("model_name") in ("FloatSliderModel", "IntSliderModel") and m["state"].get("description")}
    assert len(saved) >= 2, f"{ch.rel}: fewer than two labelled sliders in the saved widget state"
    page = _open(context, errors, f"{url}/notebooks/{Path(ch.rel).with_suffix('.html').as_posix()}")
    page.wait_for_selector(".widget-slider .widget-readout", state="attached", timeout=TIMEOUT_MS)
    shown = page.evaluate("""() => Object.fromEntries(Array.from(document.querySelectorAll('.widget-slider')).map(
        s => [s.querySelector('.widget-label').textContent.trim(), s.querySelector('.widget-readout').textContent.trim()]))""")
    for label, value in saved.items():
        assert label in shown, f"{ch.rel}: slider {label!r} is not on the page ({sorted(shown)})"
        assert float(shown[label]) == pytest.approx(value, rel=0.01, abs=1e-12), (label, shown[label], value)
    page.close()
    assert not errors and not external, (errors, external)


_LAYOUT = """(sel) => {
  const col = document.querySelector('.bd-article').getBoundingClientRect();
  const out = {page: [document.documentElement.scrollWidth, window.innerWidth], over: [], hidden: [], n: 0, open: 0};
  const blocks = Array.from(document.querySelectorAll(sel + ' details.fldp-claim'));
  out.n = blocks.length;
  for (const d of blocks) {
    const r = d.getBoundingClientRect(), name = d.querySelector('summary b:not(.fldp-verdict)')?.textContent;
    if (r.right > col.right + 1 || r.left < col.left - 1 || d.scrollWidth > d.clientWidth + 1) out.over.push(name);
    const why = d.querySelector('summary .fldp-why');
    if (d.classList.contains('fldp-claim-inconclusive')) {
      const w = why && why.getBoundingClientRect();
      if (!w || w.width === 0 || w.left < 0 || w.right > window.innerWidth || w.right > col.right + 1) out.hidden.push(name);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("rel, sel, shot", [
    ("register.html", ".bd-article", "register"),
    ("notebooks/li2021/03_experiments.html", "section#the-verdicts-of-this-chapter", "li2021_03_verdicts"),
    ("notebooks/zhou/04_experiments.html", "section#the-verdicts-of-this-chapter", None),
])
def test_every_verdict_and_its_reason_fit_the_column(site, browser_session, rel, sel, shot):
    """At 1400x1000 no claim block overflows the article's column, closed or opened, the page does not
    scroll sideways, and the reason of every inconclusive claim is in view without scrolling sideways."""
    url, out = site
    context, external, errors = browser_session
    page = _open(context, errors, f"{url}/{rel}")
    page.set_viewport_size({"width": 1400, "height": 1000})
    closed = page.evaluate(_LAYOUT, sel)
    assert closed["n"] >= 5, f"{rel}: only {closed['n']} claim blocks"
    assert closed["page"][0] <= closed["page"][1], f"{rel}: the page scrolls sideways ({closed['page']})"
    assert not closed["over"], f"{rel}: claim blocks wider than the column: {closed['over'][:5]}"
    assert not closed["hidden"], f"{rel}: inconclusive claims whose reason is out of view: {closed['hidden'][:5]}"
    if shot:
        SHOTS.mkdir(parents=True, exist_ok=True)
        first = page.locator(f"{sel} details.fldp-claim").first  # the first block opened, at the top of the view
        first.evaluate("d => { d.open = true; d.scrollIntoView({block: 'start'}); window.scrollBy(0, -90); }")
        page.wait_for_timeout(300)
        page.screenshot(path=str(SHOTS / f"{shot}.png"))
        first.evaluate("d => { d.open = false; }")
    page.evaluate(f"() => document.querySelectorAll('{sel} details.fldp-claim').forEach(d => d.open = true)")
    opened = page.evaluate(_LAYOUT, sel)
    assert opened["page"][0] <= opened["page"][1], f"{rel}: opened, the page scrolls sideways ({opened['page']})"
    assert not opened["over"], f"{rel}: opened claim blocks wider than the column: {opened['over'][:5]}"
    page.close()
    assert not errors and not external, (errors, external)
