"""benchmarks/gpu_bench.py runs end to end (on the CPU here, --quick) and prints its three lines."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import load_script


@pytest.mark.slow
def test_gpu_bench_prints_a_line_per_measurement(capsys):
    gb = load_script(Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_bench.py", "gpu_bench")
    gb.main(["--device", "cpu", "--quick", "--rounds", "1", "--filter-p", "0"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("# paper-size rounds on cpu") and "smoke test" in out[0]
    assert re.fullmatch(r"adaptive: \d+\.\d{3} s a round on cpu \(every client in one program\), "
                        r"\d+\.\d{3} s one client at a time", out[1])
    assert re.match(r"nbafl: \d+\.\d{3} s a round on cpu", out[2])
    assert re.match(r"filter: one CNN noise vector at p=0 on cpu: \d+ tries; .* identical: True \(same draws", out[3])
