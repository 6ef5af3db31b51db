"""fldp.repro.book: what the book stages from a project (a toy one here), the vendored packages' integrity
check, the executed copies fldp reproduce commits, and the figures savefig shows.

The built site itself is driven in a browser by tests/test_book_browser.py.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from fldp.repro import book, cli, execute, paths, report, results

ROOT = Path(__file__).resolve().parent.parent

CLAIMS = [
    {"id": "Lemma 1", "statement": "sensitivity <= 2C/m", "kind": "paper", "source": "Lemma 1", "setting": "paper",
     "setting_note": "", "verdict": "holds", "reason": None, "why": "", "falsifier": "a pair above 2C/m",
     "measured": 0.5, "expected": "<= 1", "note": ""},
    {"id": "Remark 2", "statement": "loss falls with eps", "kind": "paper", "source": "Remark 2", "setting": "reading",
     "setting_note": "C = 20", "verdict": "inconclusive", "reason": "spread", "why": "inside the spread",
     "falsifier": "a negative paired difference", "measured": 1.0, "expected": None, "note": ""},
]


RUNS = {"ran": 0, "reused": 12, "seconds": 4380.0, "first": "2026-11-20T10:00:00+0000",
        "last": "2026-11-21T09:00:00+0000"}


def _nb(cells, **metadata) -> dict:
    python = {"kernelspec": {"name": "fldp", "display_name": "Python (fldp)", "language": "python"},
              "language_info": {"name": "python"}}
    return {"cells": cells, "metadata": {**python, **metadata}, "nbformat": 4, "nbformat_minor": 5}


def _cell(kind: str, source: str, i: int, outputs=None) -> dict:
    cell = {"cell_type": kind, "id": f"c{i}", "metadata": {}, "source": source}
    if kind == "code":
        cell.update(outputs=outputs or [], execution_count=i)
    return cell


def _write(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A toy project: two wei2020 chapters, one with its executed copy committed, one without."""
    root = tmp_path / "proj"
    _write(root / "book" / "conf.py", "project = 'toy'\n")
    _write(root / "book" / "index.md", "# Toy\n")
    _write(root / "book" / "parts" / "wei2020.md",
           "# Wei et al. 2020 (NbAFL)\n\nIntro.\n\n## In plain words\n\nThe calibration fails,\nthe bounds are vacuous.\n\n"
           "## Sec. III\n\n<!-- findings of wei2020/02_global_dp, written by fldp report: "
           "do not edit -->\nstale\n<!-- end of findings -->\n")
    src = [_cell("markdown", "# Wei et al. 2020, Sec. III: global DP\n\n**What is checked.** sigma_D.", 0),
           _cell("code", "x = 1\nprint(x)", 1, [{"output_type": "stream", "name": "stdout", "text": "1\n"}]),
           _cell("markdown", "## Explore\n\nThe explorer.", 2), _cell("code", "widgets.wei2020_explorer()", 3)]
    _write(root / "notebooks" / "wei2020" / "02_global_dp.ipynb", _nb(src))
    _write(root / "notebooks" / "wei2020" / "03_convergence.ipynb",
           _nb([_cell("markdown", "# Wei et al. 2020, Section IV: the bound (T <= 50)", 0),
                _cell("code", "print(2)", 1, [{"output_type": "stream", "name": "stdout", "text": "2\n"}]),
                _cell("markdown", "## Explore", 2)]))
    executed = json.loads(json.dumps(src))
    executed[1]["outputs"].append({"output_type": "display_data", "metadata": {}, "data": {
        "text/markdown": "![sigma](../../figures/wei2020/sigma.png)", "text/plain": "figure figures/wei2020/sigma.png"}})
    _write(root / "results" / "executed" / "wei2020" / "02_global_dp.ipynb",
           _nb(executed, papermill={"end_time": "2026-11-20T10:00:00.5", "duration": 75.0}))
    for name, figure in (("02_global_dp", "sigma"), ("03_convergence", "bound")):
        _write(root / "results" / "wei2020" / f"{name}.json", {
            "paper": "wei2020", "notebook": name, "quick": False, "params": {}, "wall_time_s": 75.0,
            "figures": [f"figures/wei2020/{figure}.png"], "findings": [f"the finding of {name} is 0.935"],
            "claims": CLAIMS, **({"runs": RUNS} if name == "02_global_dp" else {})})
        _write(root / "figures" / "wei2020" / f"{figure}.png", "not really a png")
    return root


def _staged(root: Path, tmp_path: Path) -> Path:
    return book.stage(root, tmp_path / "stage", packages=())


def _cells(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]


def test_an_executed_chapter_says_where_its_numbers_come_from(project: Path, tmp_path: Path):
    stage = _staged(project, tmp_path)
    cells = _cells(stage / "notebooks" / "wei2020" / "02_global_dp.ipynb")
    title, note = cells[0].split("\n\n", 1)
    assert title == "# Wei et al. 2020, Sec. III: global DP"
    assert note.startswith(":::{admonition} Where these numbers come from")
    assert "**full-mode** run, executed on 2026-11-20 in 1 min 15 s" in note
    assert "paper claims: 1 holds · 1 inconclusive" in note and "`results/wei2020/02_global_dp.json`" in note
    assert ("All 12 of its training runs were read from the run store, where they were computed between "
            "2026-11-20 and 2026-11-21 (1 h 13 min of compute in all).") in note
    assert "**What is checked.** sigma_D." in cells[0]
    explore = cells.index("## Explore\n\nThe explorer.")
    assert cells[explore + 1].startswith(":::{admonition} A static copy of the explorer") and "make explore" in \
        cells[explore + 1]
    verdicts = cells[-1]
    assert verdicts.startswith("## The verdicts of this chapter")
    assert "| Verdict |" not in verdicts and verdicts.count('\n<details class="fldp-claim ') == len(CLAIMS)  # one card each
    assert ('<details class="fldp-claim fldp-claim-holds"><summary><span class="fldp-verdict fldp-holds">holds</span> · '
            "<b>Lemma 1</b>") in verdicts  # coloured by the CSS
    assert '<span class="fldp-verdict fldp-inconclusive">inconclusive: spread</span> · <b>Remark 2</b>' in verdicts
    assert "- the finding of 02_global_dp is 0.935" in verdicts and "(../../register.md)" in verdicts
    assert "Figures (committed" not in verdicts  # the executed copy shows them where they were drawn
    outputs = json.loads((stage / "notebooks" / "wei2020" / "02_global_dp.ipynb").read_text())["cells"][1]["outputs"]
    assert outputs[-1]["data"]["text/markdown"] == "![sigma](../../figures/wei2020/sigma.png)"


def test_a_chapter_without_its_executed_copy_says_so_and_shows_its_figures(project: Path, tmp_path: Path):
    stage = _staged(project, tmp_path)
    nb = json.loads((stage / "notebooks" / "wei2020" / "03_convergence.ipynb").read_text())
    assert all(c["outputs"] == [] for c in nb["cells"] if c["cell_type"] == "code")  # no stale outputs
    cells = _cells(stage / "notebooks" / "wei2020" / "03_convergence.ipynb")
    assert ":::{admonition} Code without its printed outputs\n:class: warning" in cells[0]
    assert "not committed yet" in cells[0] and "`fldp reproduce --only wei2020/03_convergence`" in cells[0]
    assert cells[cells.index("## Explore") + 1].startswith(":::{admonition} The explorer is not shown here")
    assert "## Figures (committed full-mode run)" in cells[-1]
    assert "![bound](../../figures/wei2020/bound.png)" in cells[-1]


def test_the_part_page_the_register_and_the_landing_table(project: Path, tmp_path: Path):
    stage = _staged(project, tmp_path)
    part = (stage / "notebooks" / "wei2020" / "index.md").read_text()
    assert "stale" not in part and "- the finding of 02_global_dp is 0.935" in part
    assert "[the claims register](../../register.md)" in part or "(../../register.md)" in part
    assert "#" not in part.split("register.md")[1][:1]  # no anchor into the register
    toc = part.split("```{toctree}")[1]
    assert "Sec. III: global DP <02_global_dp>" in toc and "Section IV: the bound (T ≤ 50) <03_convergence>" in toc
    assert not (stage / "parts").exists()
    findings = (stage / "_generated" / "findings.md").read_text()
    assert "| [Wei et al. 2020 (NbAFL)](notebooks/wei2020/index.md) | the paper's setting | 2 | 0 | 0 |" in findings
    # the counts' legend beside them, and each paper's plain words quoted from its part page
    assert "*a reading*: a setting the paper leaves out" in findings and "*no-power*: the measurement could" in findings
    assert ("**[Wei et al. 2020 (NbAFL)](notebooks/wei2020/index.md)** (paper claims 2 hold · 2 inconclusive)\n\n"
            "> The calibration fails,\n> the bounds are vacuous.\n") in findings
    # the part page: its plain words, then its own counts and what they mean, then its sections
    plain, counts = part.index("## In plain words"), part.index("## The verdicts, counted")
    assert plain < counts < part.index("## Sec. III")
    assert "| Wei et al. 2020 (NbAFL) | the paper's setting | 2 | 0 | 0 |" in part[counts:]
    assert "*untrained*: a compared run is finite but below the floor" in part[counts:part.index("## Sec. III")]
    assert "notebooks/wei2020/index" in (stage / "_generated" / "parts.md").read_text()
    register = (stage / "register.md").read_text()
    assert "### wei2020/02_global_dp" in register and "(notebooks/wei2020/02_global_dp.ipynb)" in register
    assert (stage / "figures" / "wei2020" / "sigma.png").is_file()
    assert (stage / "results" / "wei2020" / "02_global_dp.json").is_file()
    assert not (stage / "results" / "executed").exists()
    assert ".. automodule:: fldp.mechanisms" in (stage / "api" / "fldp.mechanisms.rst").read_text()
    assert "   fldp.papers.wei2020.theory" in (stage / "api" / "index.rst").read_text()


def test_the_store_counts_the_runs_a_notebook_used(tmp_path: Path, monkeypatch):
    from fldp.repro import store

    monkeypatch.setattr(store, "_USAGE", {"ran": 0, "reused": 0, "seconds": 0.0, "first": None, "last": None,
                                          "waited": 0.0})
    monkeypatch.setattr(store, "_COUNTED", set())
    monkeypatch.setattr(store, "_RUNS", [])
    monkeypatch.setattr(store, "_USED", {})
    runs, again = store.RunStore(tmp_path / "runs"), store.RunStore(tmp_path / "runs2")
    assert runs.run(report.duration, {"seconds": 75.0}) == "1 min 15 s"  # computed
    assert again.run(report.duration, {"seconds": 75.0}) == "1 min 15 s"  # the same run computed in another store: once
    assert again.run(report.duration, {"seconds": 60.0}) == "1 min 00 s"  # computed
    assert again.run(report.duration, {"seconds": 60.0}) == "1 min 00 s"  # read back: the same run, once
    used = store.usage()
    assert (used["ran"], used["reused"]) == (2, 0) and used["first"] is not None
    assert [r["ran"] for r in store.manifest()] == [True, True]
    # waited: the seconds of the three computations (the same run in two stores is computed twice)
    secs = [st.read(st.path(report.duration, {"seconds": s})).seconds for st, s in ((runs, 75.0), (again, 75.0), (again, 60.0))]
    assert used["waited"] == pytest.approx(sum(secs)) and used["waited"] > 0
    rec = results.Recorder("toy", "01", quick=True)
    rec.root = tmp_path
    assert json.loads(rec.save().read_text())["runs"]["ran"] == 2
    costs = json.loads(rec.costs_path.read_text())
    assert len(costs["runs"]) == 2  # the cost record lists the same runs, and the environment that computed them
    from fldp.repro.archive import environment
    assert costs["environment"] == environment()
    # and the run archive the two runs themselves, numbers only, sorted by key
    lines = [json.loads(x) for x in rec.archive_path.read_text().splitlines()]
    assert sorted(x["result"] for x in lines) == ["1 min 00 s", "1 min 15 s"]
    assert [x["key"] for x in lines] == sorted(x["key"] for x in lines) and "seconds" not in lines[0]


def test_stage_needs_the_book_sources(tmp_path: Path):
    with pytest.raises(book.BookError, match="conf.py is missing"):
        book.stage(tmp_path, tmp_path / "stage", packages=())


def _tarball(path: Path, files: dict[str, bytes]) -> str:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def test_vendor_copies_the_pinned_files_and_refuses_an_altered_tarball(tmp_path: Path):
    cache = tmp_path / "cache"
    cache.mkdir()
    integrity = _tarball(cache / "toy-widgets-1.0.0.tgz", {"dist/embed.js": b"js", "dist/a.woff2": b"font",
                                                           "dist/embed.js.map": b"map", "LICENSE": b"BSD"})
    pkg = book.Vendored("@toy/widgets", "1.0.0", integrity, "vendor/w", ("dist/embed.js", "dist/*.woff2", "LICENSE"))
    copied = book.vendor(tmp_path / "static", cache, packages=(pkg,))
    assert sorted(p.relative_to(tmp_path / "static").as_posix() for p in copied) == [
        "vendor/w/LICENSE", "vendor/w/dist/a.woff2", "vendor/w/dist/embed.js"]
    assert (tmp_path / "static" / "vendor" / "w" / "dist" / "embed.js").read_bytes() == b"js"
    altered = book.Vendored("@toy/widgets", "1.0.0", "sha512-" + "A" * 86 + "==", "vendor/w", ("dist/embed.js",))
    with pytest.raises(book.BookError, match="does not match the pinned integrity"):
        book.vendor(tmp_path / "static2", cache, packages=(altered,))
    assert not (cache / "toy-widgets-1.0.0.tgz").exists()  # removed: the next run fetches it again


def test_the_pins_are_the_registry_integrity_strings():
    for pkg in book.VENDORED:
        assert pkg.integrity.startswith("sha512-") and len(base64.b64decode(pkg.integrity[7:])) == 64, pkg.name
    assert any(p.name == "@jupyter-widgets/html-manager" for p in book.VENDORED)


def test_keep_executed_cuts_the_project_path(tmp_path: Path):
    executed = tmp_path / "run.ipynb"
    root = json.dumps(str(paths.PROJECT_ROOT) + "/")[1:-1]
    executed.write_text(json.dumps(_nb([_cell("code", "rec.save()", 1, [
        {"output_type": "stream", "name": "stdout", "text": f"saved {paths.PROJECT_ROOT}/results/zhou/03.json\n"}])],
        papermill={"input_path": f"{paths.PROJECT_ROOT}/notebooks/zhou/03.ipynb"})))
    kept = execute.keep_executed(executed, tmp_path / "kept" / "zhou" / "03.ipynb")
    text = kept.read_text()
    assert root not in text and "saved results/zhou/03.json" in text and '"notebooks/zhou/03.ipynb"' in text
    assert [p.name for p in kept.parent.iterdir()] == ["03.ipynb"]  # no temporary file left


def test_a_saved_figure_links_itself_relative_to_the_notebook(tmp_path: Path, monkeypatch):
    rec = results.Recorder("toy", "01", quick=True)
    rec.root = tmp_path / "out"
    import matplotlib.pyplot as plt

    fig, _ = plt.subplots()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notebooks" / "toy").mkdir(parents=True)
    path = rec.savefig(fig, "curve")
    plt.close(fig)
    assert isinstance(path, Path) and path.read_bytes()[:4] == b"\x89PNG"
    monkeypatch.chdir(tmp_path / "notebooks" / "toy")
    assert path._repr_markdown_() == "![curve](../../out/figures/toy/curve.png)"
    assert rec.figures == ["figures/toy/curve.png"]
    assert not results._kernel_without_inline_figures()  # pytest is no kernel: savefig displayed nothing


def test_book_command_line_errors_name_the_problem(tmp_path: Path, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["book", "--port", "70000"])
    assert exit_.value.code == 2 and "port 70000 is out of range" in capsys.readouterr().err
    assert cli.main(["book", "--no-build", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "holds no built book" in err and "Traceback" not in err


def test_book_serve_on_a_taken_port_says_so(tmp_path: Path, capsys):
    import socket

    (tmp_path / "index.html").write_text("<p>built</p>")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli.main(["book", "--no-build", "--out", str(tmp_path), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"cannot serve on 127.0.0.1:{port}" in err and "--port N" in err and "Traceback" not in err


@pytest.mark.slow
def test_a_missing_figure_fails_the_build(project: Path, tmp_path: Path, capfd):
    """Sphinx runs with warnings as errors: the executed chapter's figure link with no file behind
    it stops the build (BookError), and the same project with the figure builds."""
    (project / "book" / "conf.py").write_text('extensions = ["myst_nb", "sphinx.ext.autodoc"]\n'
                                               'myst_enable_extensions = ["colon_fence"]\nnb_execution_mode = "off"\n'
                                               'myst_heading_anchors = 4\n'
                                               'exclude_patterns = ["_generated/**"]\n')
    (project / "book" / "index.md").write_text("# Toy\n\n```{include} _generated/parts.md\n```\n\n"
                                               "```{toctree}\n:hidden:\n\nregister\napi/index\n```\n")
    png = (ROOT / "docs" / "book_landing.png").read_bytes()
    (project / "figures" / "wei2020" / "bound.png").write_bytes(png)
    (project / "figures" / "wei2020" / "sigma.png").unlink()  # the executed chapter links it
    with pytest.raises(book.BookError, match="Sphinx failed"):
        book.build(project, tmp_path / "out", tmp_path / "stage", packages=())
    assert "image file not readable: figures/wei2020/sigma.png" in capfd.readouterr().err
    (project / "figures" / "wei2020" / "sigma.png").write_bytes(png)
    out = book.build(project, tmp_path / "out", tmp_path / "stage", packages=())
    assert (out / "notebooks" / "wei2020" / "02_global_dp.html").is_file()


def test_the_book_server_is_quiet_when_a_browser_drops_a_connection(tmp_path, capfd):
    """A browser that resets a connection mid-transfer (a reload, a cancelled prefetch) printed a
    ConnectionResetError traceback per request; now nothing, and any other error is one line."""
    import functools
    import socket
    import struct
    import threading
    import time

    (tmp_path / "index.html").write_text("<p>book</p>")
    (tmp_path / "big.bin").write_bytes(b"x" * 20_000_000)
    handler = functools.partial(book._Quiet, directory=str(tmp_path))
    server = book._Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for _ in range(3):  # ask for a large file, then reset the connection (RST) before reading it
            s = socket.create_connection(server.server_address)
            s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            s.recv(100)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        time.sleep(1.0)
        try:
            raise ValueError("something real")
        except ValueError:
            server.handle_error(None, ("127.0.0.1", 5))
    finally:
        server.shutdown()
        server.server_close()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ConnectionResetError" not in err and "BrokenPipe" not in err, err
    assert err.strip() == "fldp book: error serving 127.0.0.1: ValueError: something real"


def test_the_package_page_lists_every_module_by_wing():
    """book/guide/package.md names every module of the package (as the API reference lists them)
    under its wing's table: the science, the toolkit (fldp.repro), the teaching code (fldp.teach)."""
    import re

    text = (paths.PROJECT_ROOT / "book" / "guide" / "package.md").read_text()
    named = set(re.findall(r"\bfldp(?:\.\w+)*", text))
    missing = [m for m in book.api_modules() if m != "fldp" and m not in named
               and not any(n.startswith(m + ".") for n in named)]  # a paper's package, by its modules
    assert missing == [], f"book/guide/package.md does not name: {missing}"
    science, repro, teach = text.split("**The reproduction toolkit**")[0], *text.split("**The reproduction toolkit**")[1].split("**The teaching code**")
    assert "fldp.repro." not in science.split("## The modules")[1] and "{py:mod}`fldp.teach" not in science
    assert all(m.startswith("fldp.repro") for m in re.findall(r"\{py:mod\}`(fldp[\w.]*)", repro))
    assert all(m.startswith("fldp.teach") for m in re.findall(r"\{py:mod\}`(fldp[\w.]*)", teach))


def test_a_part_page_without_plain_words_gets_its_counts_before_its_first_section(tmp_path: Path):
    empty = report.Register(tmp_path)
    assert book.plain_words("# P\n\nIntro.\n\n## A\n") == ""
    assert book._with_counts("# P\n\nIntro.\n\n## A\ntext\n", empty, "zhou") == (
        "# P\n\nIntro.\n\n## The verdicts, counted\n\nNo full-mode results yet.\n\n## A\ntext\n")
    assert book._with_counts("# P\n\nIntro.\n", empty, "zhou").endswith(
        "Intro.\n\n## The verdicts, counted\n\nNo full-mode results yet.\n\n")
    assert book.plain_words("# P\n\n## In plain words\n\nOne.\nTwo.\n\n## A\n") == "One.\nTwo."
