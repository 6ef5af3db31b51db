"""`fldp report`: REPORT.md, the claims register rendered from the committed results/."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fldp.repro import cli, report

ROOT = Path(__file__).resolve().parent.parent

WEI = {
    "paper": "wei2020", "notebook": "02_global_dp", "quick": False,
    "params": {"seed": 0, "eps": 60.0, "T": 25}, "wall_time_s": 75.25,
    "figures": ["figures/wei2020/sigma.png", "figures/wei2020/gone.png"],
    "claims": [
        {"id": "Lemma 1", "statement": "sensitivity <= 2C/m | for every client", "kind": "paper",
         "source": "Lemma 1, eq. (8)", "setting": "paper", "setting_note": "", "verdict": "holds", "reason": None,
         "why": "", "falsifier": "a pair above 2C/m", "measured": {"ratio": 0.123456789, "n": 3},
         "expected": "<= 1", "note": ""},
        {"id": "Remark 2", "statement": "loss\nfalls with eps", "kind": "paper", "source": "Remark 2",
         "setting": "reading", "setting_note": "C = 20, L = 1", "verdict": "inconclusive", "reason": "spread",
         "why": "mean difference 0.001", "falsifier": "a negative paired difference", "measured": 93.456789,
         "expected": None, "note": "one local epoch"},
        {"id": "Thm 2", "statement": "accuracy above 95 %", "kind": "paper", "source": "Thm 2",
         "setting": "reduced", "setting_note": "3 seeds", "verdict": "fails", "reason": None, "why": "",
         "falsifier": "accuracy below 95 %", "measured": 93.456789, "expected": 95, "note": ""},
        {"id": "spend", "statement": "whole-run eps", "kind": "diagnostic", "source": "", "setting": "paper",
         "setting_note": "", "verdict": "holds", "reason": None, "why": "", "falsifier": "eps above 60",
         "measured": 4884, "expected": None, "note": ""},
    ],
    "data": {"big": list(range(50))},
}
BASELINE = {  # saved before the register had kinds and verdicts: listed, never judged
    "paper": "baseline", "notebook": "00_fedavg_baseline", "quick": False, "params": {},
    "wall_time_s": 4.0, "figures": [], "data": {},
    "claims": [{"id": "B1", "statement": "accuracy >= 90 %", "passed": True,
                "measured": 0.9351, "expected": 0.9, "note": ""}],
}


def _dump(path: Path, payload) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """tmp/{results,figures,notebooks}: two full-mode files, a quick one, a broken one."""
    _dump(tmp_path / "results" / "wei2020" / "02_global_dp.json", WEI)
    _dump(tmp_path / "results" / "baseline" / "00_fedavg_baseline.json", BASELINE)
    _dump(tmp_path / "results" / "zhou" / "01_quick.json",
          {**WEI, "paper": "zhou", "notebook": "01_quick", "quick": True})
    _dump(tmp_path / "results" / "zhou" / "broken.json", '{"paper": "zhou", ')
    _dump(tmp_path / "results" / "runs" / "sweep" / "0001.json", {"not": "a results file"})
    _dump(tmp_path / "figures" / "wei2020" / "sigma.png", "png")
    _dump(tmp_path / "notebooks" / "wei2020" / "02_global_dp.ipynb", "{}")
    _dump(tmp_path / "notebooks" / "00_fedavg_baseline.ipynb", "{}")
    return tmp_path


def _render(project: Path) -> str:
    return report.render(project / "results", project / "REPORT.md")


def test_rendered_register_exact_lines(project: Path):
    lines = _render(project).splitlines()
    assert lines[0] == "# Claims register"
    intro = lines[2]
    assert "`fldp report`" in intro and "`results/`" in intro and "`make reproduce`" in intro
    text = "\n".join(lines)
    assert "*inconclusive*: neither, with one reason: *not-run*" in text and "fewer than 5 seeds" in text
    assert "*untrained*: a compared run is finite but below the floor" in text and "one rule both ways" in text
    # summary: paper claims by setting x verdict; wei2020 before the other papers; no quick-mode zhou
    table = lines[lines.index("| Paper | Setting | Holds | Fails | Inconclusive (reasons) |"):]
    assert table[2:5] == [
        "| [Wei et al. 2020 (NbAFL)](#wei-et-al-2020-nbafl) | the paper's setting | 1 | 0 | 0 |",
        "|  | reduced | 0 | 1 | 0 |",
        "|  | a reading | 0 | 0 | 1 (spread 1) |",
    ]
    assert table[5] == ""  # the baseline has no paper claims (its one claim is not migrated): no row
    diag = lines[lines.index("**Diagnostics** (the project's own findings, not paper claims):") + 4]
    assert diag == "| [Wei et al. 2020 (NbAFL)](#wei-et-al-2020-nbafl) | 1 | 0 | 0 |"
    assert "- baseline/00_fedavg_baseline: 1 claims" in lines  # not yet migrated: listed, not counted
    nbs = lines[lines.index("| Notebook | Paper claims | Derived checks | Diagnostics | Wall time |") + 2:]
    assert nbs[0] == ("| [wei2020/02_global_dp](#wei202002_global_dp) | 1 holds · 1 fails · 1 inconclusive | "
                      "none | 1 holds | 1 min 15 s |")
    assert nbs[1] == ("| [baseline/00_fedavg_baseline](#baseline00_fedavg_baseline) | none (1 not migrated) | "
                      "none | none | 4.0 s |")
    # problems: the broken file by name, the missing figure; not the quick file nor runs/
    problems = lines[lines.index("## Problems") + 2:]
    assert problems[0].startswith("- `results/zhou/broken.json` cannot be read: ")
    assert problems[1] == "- wei2020/02_global_dp: figure `figures/wei2020/gone.png` is missing"
    assert problems[2] == ""
    assert "01_quick" not in text and "0001" not in text and "## Zhou" not in text
    # the wei2020 notebook section
    sec = lines[lines.index("### wei2020/02_global_dp"):]
    assert sec[1:9] == [
        "",
        "- Notebook: [notebooks/wei2020/02_global_dp.ipynb](notebooks/wei2020/02_global_dp.ipynb)",
        "- Results: [results/wei2020/02_global_dp.json](results/wei2020/02_global_dp.json)",
        "- Wall time: 1 min 15 s",
        '- Parameters: `{"T": 25, "eps": 60.0, "seed": 0}`',
        "- Claims: paper 1 holds · 1 fails · 1 inconclusive; derived none; diagnostics 1 holds",
        "- Problem: figure `figures/wei2020/gone.png` is missing",
        "",
    ]
    # each claim one card: verdict, name, kind and setting, the claim and the reason in its summary
    cards_ = [line for line in sec[9:17] if line]
    assert len(cards_) == 4 and all(c.startswith('<details class="fldp-claim') and c.endswith("</details>")
                                    for c in cards_)
    assert cards_[0].startswith('<details class="fldp-claim fldp-claim-holds"><summary>🟢 <b>holds</b> · '
                                "<b>Lemma 1</b> · <i>paper claim, the paper's setting</i><br>sensitivity &lt;= "
                                "2C/m | for every client</summary>")
    assert "<dt>Measured</dt><dd><ul><li><b>ratio</b>: 0.1235</li><li><b>n</b>: 3</li></ul></dd>" in cards_[0]
    assert "<dt>Kind</dt><dd>the paper states it: Lemma 1, eq. (8)</dd>" in cards_[0]
    assert ('🟡 <b>inconclusive: spread</b> · <b>Remark 2</b> · <i>paper claim, a reading: C = 20, L = 1</i>'
            '<br>loss falls with eps<br><span class="fldp-why"><i>Why:</i> mean difference 0.001</span></summary>'
            in cards_[1])
    assert "<dt>Note</dt><dd>one local epoch</dd>" in cards_[1]
    assert ('🔴 <b>fails</b> · <b>Thm 2</b> · <i>paper claim, reduced: 3 seeds</i><br>accuracy above 95 %<br>'
            '<span class="fldp-why"><i>Why:</i> measured 93.46, expected 95</span>' in cards_[2])
    assert "<b>spend</b> · <i>diagnostic, the paper's setting</i>" in cards_[3]
    assert sec[16:18] == ["", "![wei2020/sigma](figures/wei2020/sigma.png)"]
    assert "](figures/wei2020/gone.png)" not in text  # a missing figure is not shown
    # the old-form notebook: its claim listed without a verdict
    base = lines[lines.index("### baseline/00_fedavg_baseline"):]
    assert any(line.startswith('<details class="fldp-claim fldp-claim-old"><summary>⚪ <b>not migrated</b> · '
                                '<b>B1</b><br>accuracy &gt;= 90 %</summary>') for line in base)
    assert not any("PASS" in line or "FAIL" in line for line in lines)
    assert ("- Notebook: [notebooks/00_fedavg_baseline.ipynb](notebooks/00_fedavg_baseline.ipynb)"
            in lines)
    assert lines.index("## Wei et al. 2020 (NbAFL)") < lines.index("## FedAvg baseline (no DP)")
    # nothing the JSON does not hold (the data payload is not rendered)
    assert '"big"' not in text


def test_render_is_deterministic(project: Path):
    first = _render(project)
    # the same results with other key orders and indentation render the same
    _dump(project / "results" / "wei2020" / "02_global_dp.json",
          json.dumps(dict(reversed(list(WEI.items()))), indent=4))
    assert _render(project) == first == _render(project)


def test_no_results_yet(tmp_path: Path):
    text = report.render(tmp_path / "results", tmp_path / "REPORT.md")
    assert "No results yet: `results/` holds no full-mode results." in text
    assert "| Paper |" not in text and "## Problems" not in text


def test_quick_only_counts_as_no_results(tmp_path: Path, capsys):
    _dump(tmp_path / "results" / "wei2020" / "02_global_dp.json", {**WEI, "quick": True})
    assert cli.main(["report", "--results-dir", str(tmp_path / "results"),
                     "--output", str(tmp_path / "REPORT.md")]) == 0
    assert "No results yet" in (tmp_path / "REPORT.md").read_text()
    assert "skipped" in capsys.readouterr().err


def test_round_floats_and_compact():
    assert report.round_floats([0.000123456, 123456.7, 2, True, None, "x"]) == \
        [0.0001235, 123500.0, 2, True, None, "x"]
    assert report.compact({"b": 1.23456789, "a": [1e-7 / 3]}) == '{"a": [3.333e-08], "b": 1.235}'
    assert report.cell("a | b\nc") == "a \\| b c"
    assert [report.duration(s) for s in (0.04, 59.9, 60.0, 3599.4, 3600, None)] == \
        ["0.0 s", "59.9 s", "1 min 00 s", "59 min 59 s", "1 h 00 min", "unknown"]


def test_check_stale_then_written(project: Path, capsys):
    args = ["report", "--results-dir", str(project / "results"),
            "--output", str(project / "REPORT.md")]
    assert cli.main([*args, "--check"]) == 1  # missing
    assert "run `fldp report`" in capsys.readouterr().err
    assert not (project / "REPORT.md").exists()

    assert cli.main(args) == 0
    out = capsys.readouterr()
    assert "skipped" in out.err and "01_quick.json" in out.err  # quick file, said on stderr
    assert "broken.json" in out.err
    written = (project / "REPORT.md").read_text()
    assert written == _render(project)
    assert cli.main([*args, "--check"]) == 0

    # new results make the committed register stale
    _dump(project / "results" / "wei2020" / "02_global_dp.json",
          {**WEI, "claims": WEI["claims"][:1]})
    assert cli.main([*args, "--check"]) == 1
    err = capsys.readouterr().err
    assert "out of date" in err and "make report" in err
    assert (project / "REPORT.md").read_text() == written  # --check writes nothing
    assert cli.main(args) == 0 and cli.main([*args, "--check"]) == 0
    assert not list(project.glob(".REPORT.md.*"))  # atomic write left no temporary file


def test_committed_report_is_up_to_date():
    """REPORT.md at the project root is what `fldp report` renders from results/."""
    results_dir, output = ROOT / "results", ROOT / "REPORT.md"
    rendered = report.render(results_dir, output)
    if not any(p.is_file() for p in report.results_files(results_dir)):
        assert "No results yet" in rendered
    assert output.is_file(), "REPORT.md is missing: run `fldp report` (or `make report`)"
    assert output.read_text(encoding="utf-8") == rendered, \
        "REPORT.md is out of date with results/: run `fldp report` (or `make report`) and commit it"


def test_readme_summary_block_is_written_and_checked(project: Path, capsys):
    readme = project / "README.md"
    readme.write_text(f"# toy\n\nintro\n\n{report.README_BEGIN}\nstale 79/172\n{report.README_END}\n\nrest\n")
    args = ["report", "--results-dir", str(project / "results"), "--output", str(project / "REPORT.md")]
    assert cli.main(args) == 0
    text = readme.read_text()
    assert "stale 79/172" not in text and text.startswith("# toy\n\nintro\n\n") and text.endswith("\n\nrest\n")
    assert "| [Wei et al. 2020 (NbAFL)](REPORT.md#wei-et-al-2020-nbafl) | the paper's setting | 1 | 0 | 0 |" in text
    assert cli.main([*args, "--check"]) == 0
    readme.write_text(text.replace("| 1 | 0 | 0 |", "| 9 | 0 | 0 |"))  # a hand edit of the counts
    capsys.readouterr()
    assert cli.main([*args, "--check"]) == 1
    assert "register summary in" in capsys.readouterr().err


def test_committed_readme_summary_is_up_to_date():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert report.README_BEGIN in readme, "README.md lost its register summary markers"
    assert report.readme_with_summary(readme, report.collect(ROOT / "results")) == readme, \
        "README.md's register summary is out of date: run `fldp report` (or `make report`) and commit it"


def test_every_committed_claim_is_in_the_register_form():
    """Every claim of the committed full-mode results has a kind, a setting (with its note where
    it is not the paper's), a verdict (with a reason exactly when inconclusive) and a falsifier;
    a paper claim cites its source."""
    from fldp import verdicts as V

    register = report.collect(ROOT / "results")
    assert register.entries and not register.unreadable
    for e in register.entries:
        ids = [c.get("id") for c in e.claims]
        assert len(ids) == len(set(ids)), f"{e.path}: a claim id twice"
        old = [c for c in e.claims if not report.migrated(c)]
        # A notebook whose full-mode results predate the register form is listed as a whole as
        # "not yet migrated" (REPORT.md withholds its old verdicts); never half of one.
        assert not old or len(old) == len(e.claims), f"{e.path}: old-form and register-form claims mixed"
        for c in e.claims if not old else []:
            where = f"{e.path.relative_to(ROOT)}: {c.get('id')}"
            assert report.migrated(c) and "passed" not in c, f"{where} is not in the register form"
            assert c["kind"] in V.KINDS and c["setting"] in V.SETTINGS and c["verdict"] in V.VERDICTS, where
            assert (c["reason"] in V.REASONS) == (c["verdict"] == "inconclusive"), where
            assert c["falsifier"].strip() and (c["setting"] == "paper" or c["setting_note"].strip()), where
            assert c["kind"] != "paper" or c["source"].strip(), where


def test_findings_fill_readme_blocks_and_a_hand_edit_is_caught(project: Path, capsys):
    """A notebook's findings (Recorder.finding) appear in REPORT.md under its section and in
    README.md's findings block for it; a hand-edited number there makes --check fail; a block
    naming a notebook without results says so."""
    _dump(project / "results" / "wei2020" / "02_global_dp.json",
          {**WEI, "findings": ["the sensitivity ratio is 0.935 at C = 20"]})
    begin = "<!-- findings of {}, written by fldp report: do not edit -->\n"
    readme = project / "README.md"
    readme.write_text("# toy\n\n" + begin.format("wei2020/02_global_dp") + "old 0.975\n<!-- end of findings -->\n\n"
                      + begin.format("zhou/99_missing") + "<!-- end of findings -->\nrest\n")
    args = ["report", "--results-dir", str(project / "results"), "--output", str(project / "REPORT.md")]
    assert cli.main(args) == 0
    text = readme.read_text()
    assert "old 0.975" not in text and "- the sensitivity ratio is 0.935 at C = 20\n" in text
    assert "(REPORT.md#wei202002_global_dp)" in text and "wall time 1 min 15 s" in text
    assert "No full-mode results of `zhou/99_missing` yet" in text and text.endswith("<!-- end of findings -->\nrest\n")
    rep = (project / "REPORT.md").read_text()
    assert "\n### wei2020/02_global_dp\n" in rep
    assert "- the sensitivity ratio is 0.935 at C = 20" in rep
    assert cli.main([*args, "--check"]) == 0
    readme.write_text(text.replace("0.935", "0.975"))
    capsys.readouterr()
    assert cli.main([*args, "--check"]) == 1
    assert "findings block" in capsys.readouterr().err


def test_recorder_finding_is_saved_and_refuses_an_empty_sentence(tmp_path: Path, capsys):
    from fldp.repro import results

    rec = results.Recorder("toy", "01", quick=False)
    rec.root = tmp_path
    assert rec.finding("  b = 1 wins\n at 5 of 6 settings ") == "b = 1 wins at 5 of 6 settings"
    assert "[FINDING] b = 1 wins at 5 of 6 settings" in capsys.readouterr().out
    with pytest.raises(ValueError, match="text="):
        rec.finding("  ")
    saved = json.loads(rec.save().read_text())
    assert saved["findings"] == ["b = 1 wins at 5 of 6 settings"]


def test_wall_time_says_what_stored_runs_took():
    """A notebook that read its runs back from the store ran in seconds; the register says what the
    runs took when computed, so that the wall time does not pass for the cost of the numbers."""
    e = report.Entry(Path("r.json"), "adaptive_noise", "03_utility", 4.2, {}, [], [],
                     runs={"ran": 2, "reused": 78, "seconds": 8700.0, "first": None, "last": None})
    assert report.time_text(e) == "4.2 s (78 of 80 runs read from the store; 2 h 25 min of compute)"
    assert report.time_text(report.Entry(Path("r.json"), "zhou", "01", 75.25, {}, [], [])) == "1 min 15 s"
    fresh = report.Entry(Path("r.json"), "zhou", "04", 75.25, {}, [], [], runs={"ran": 3, "reused": 0, "seconds": 70.0})
    assert report.time_text(fresh) == "1 min 15 s"


def test_committed_report_reads_within_a_page_on_githubs_renderer():
    """REPORT.md as GitHub renders it: its tables are the short counts (at most 6 columns, no cell
    longer than a column holds), every claim is one HTML block GitHub keeps (details, summary,
    dl, ul, b, i, br, span), and no claim's fields sit in a table."""
    import re

    from markdown_it import MarkdownIt

    text = (ROOT / "REPORT.md").read_text(encoding="utf-8")
    size = len(text.encode("utf-8"))  # GitHub stops rendering a Markdown file at 512,000 bytes
    assert size < 500_000, f"REPORT.md is {size} bytes: split the register before GitHub cuts it off"
    rows = [line for line in text.splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]
    assert max(len(r) for r in cells) <= 6
    assert max(len(c) for r in cells for c in r) <= 90, max((c for r in cells for c in r), key=len)
    blocks = [t.content for t in MarkdownIt("commonmark").parse(text) if t.type == "html_block"]
    claims = sum(len(e.claims) for e in report.collect(ROOT / "results").entries)
    assert sum(b.startswith("<details") for b in blocks) == claims
    kept = {"details", "summary", "dl", "dt", "dd", "ul", "ol", "li", "b", "i", "br", "span", "p"}
    tags = {t.lower() for b in blocks for t in re.findall(r"</?([a-zA-Z]+)", b)}
    assert tags <= kept, tags - kept
