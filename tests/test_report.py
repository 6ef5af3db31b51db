"""`fldp report`: REPORT.md, the claims register rendered from the committed results/."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fldp import cli, report

ROOT = Path(__file__).resolve().parent.parent

WEI = {
    "paper": "wei2020", "notebook": "02_global_dp", "quick": False,
    "params": {"seed": 0, "eps": 60.0, "T": 25}, "wall_time_s": 75.25,
    "figures": ["figures/wei2020/sigma.png", "figures/wei2020/gone.png"],
    "claims": [
        {"id": "Lemma 1", "statement": "sensitivity <= 2C/m | for every client", "passed": True,
         "measured": {"ratio": 0.123456789, "n": 3}, "expected": "<= 1", "note": ""},
        {"id": "Thm 2", "statement": "accuracy\nabove 95 %", "passed": False,
         "measured": 93.456789, "expected": 95, "note": "one local epoch"},
    ],
    "data": {"big": list(range(50))},
}
BASELINE = {
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
    assert "FAIL is a finding" in intro
    # summary: wei2020 before the other papers; the quick-mode paper zhou is absent
    table = lines[lines.index("| Paper | Notebooks | Claims holding |"):]
    assert table[2] == ("| [Wei et al. 2020 (NbAFL)](#wei-et-al-2020-nbafl) | "
                        "[02_global_dp](#wei202002_global_dp) | 1/2 |")
    assert table[3] == ("| [FedAvg baseline (no DP)](#fedavg-baseline-no-dp) | "
                        "[00_fedavg_baseline](#baseline00_fedavg_baseline) | 1/1 |")
    assert table[4] == "| **All** | 2 notebooks | 2/3 |"
    # problems: the broken file by name, the missing figure; not the quick file nor runs/
    problems = lines[lines.index("## Problems") + 2:]
    assert problems[0].startswith("- `results/zhou/broken.json` cannot be read: ")
    assert problems[1] == "- wei2020/02_global_dp: figure `figures/wei2020/gone.png` is missing"
    assert problems[2] == ""
    text = "\n".join(lines)
    assert "01_quick" not in text and "0001" not in text and "## Zhou" not in text
    # the wei2020 notebook section
    sec = lines[lines.index("### wei2020/02_global_dp"):]
    assert sec[1:9] == [
        "",
        "- Notebook: [notebooks/wei2020/02_global_dp.ipynb](notebooks/wei2020/02_global_dp.ipynb)",
        "- Results: [results/wei2020/02_global_dp.json](results/wei2020/02_global_dp.json)",
        "- Wall time: 1 min 15 s",
        '- Parameters: `{"T": 25, "eps": 60.0, "seed": 0}`',
        "- Claims holding: 1/2",
        "- Problem: figure `figures/wei2020/gone.png` is missing",
        "",
    ]
    assert sec[9:13] == [
        "| Verdict | Claim | Statement | Measured | Expected | Note |",
        "|---|---|---|---|---|---|",
        '| PASS | Lemma 1 | sensitivity <= 2C/m \\| for every client | {"n": 3, "ratio": 0.1235} '
        "| <= 1 |  |",
        "| **FAIL** | Thm 2 | accuracy above 95 % | 93.46 | 95 | one local epoch |",
    ]
    assert sec[13:15] == ["", "![wei2020/sigma](figures/wei2020/sigma.png)"]
    assert "](figures/wei2020/gone.png)" not in text  # a missing figure is not shown
    # the baseline notebook, found outside notebooks/<paper>/
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
