"""The ``fldp`` command (also ``python -m fldp``).

    fldp reproduce [--quick] [--only PATTERN] [--jobs N] [-p NAME VALUE ...] [--timeout SECONDS]
    fldp report [--check] [--results-dir DIR] [--output FILE]

Exit status of ``reproduce``: 0 when every notebook ran, 1 when one failed, 2 for a request
that cannot run.  Of ``report``: 0 when REPORT.md was written (with ``--check``: is up to
date), 1 when ``--check`` finds it missing or out of date.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from fldp import __version__


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    from fldp.pipeline import DEFAULT_CELL_TIMEOUT_S
    from fldp.results import PROJECT_ROOT

    parser = argparse.ArgumentParser(
        prog="fldp", description="Companion to papers on differential privacy in federated "
                                 "learning.")
    parser.add_argument("--version", action="version", version=f"fldp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    rep = commands.add_parser(
        "reproduce", help="execute every notebook headlessly and write build/report.{md,html}",
        description="Execute the notebooks with papermill on the Jupyter kernel 'fldp' and "
                    "write executed copies and a report to the build folder.")
    rep.add_argument("--quick", action="store_true",
                     help="CI size: pass quick=True to every notebook; outputs go to "
                          "build/quick/ instead of figures/ and results/")
    rep.add_argument("--only", action="append", default=[], metavar="PATTERN",
                     help="run only notebooks whose relative path contains PATTERN or whose "
                          "path, name or stem matches it as a glob (repeatable)")
    rep.add_argument("--jobs", "-j", type=_positive_int, default=1, metavar="N",
                     help="notebooks run in parallel (default 1)")
    rep.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                     metavar=("NAME", "VALUE"),
                     help="set a notebook parameter (VALUE as a Python literal if it parses, "
                          "else a string); given only to notebooks that declare NAME")
    rep.add_argument("--timeout", type=_positive_float, metavar="SECONDS",
                     help=f"per-cell time limit (default {DEFAULT_CELL_TIMEOUT_S[False]:.0f} s, "
                          f"{DEFAULT_CELL_TIMEOUT_S[True]:.0f} s with --quick)")
    rep.add_argument("--notebooks-dir", type=Path, default=PROJECT_ROOT / "notebooks",
                     metavar="DIR", help="where the notebooks are (default: notebooks/)")
    rep.add_argument("--build-dir", type=Path, default=PROJECT_ROOT / "build", metavar="DIR",
                     help="where executed notebooks and the report go (default: build/)")
    reg = commands.add_parser(
        "report", help="render REPORT.md, the claims register, from the full-mode results/",
        description="Render REPORT.md, the register of every paper claim the notebooks check "
                    "(verdicts, numbers, figures), from the committed full-mode results "
                    "JSON files. Quick-mode files are skipped.")
    reg.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 when REPORT.md differs from what the results "
                          "render (run `fldp report` then), 0 when it is up to date")
    reg.add_argument("--results-dir", type=Path, default=PROJECT_ROOT / "results",
                     metavar="DIR", help="where the results JSON files are (default: results/)")
    reg.add_argument("--output", type=Path, default=PROJECT_ROOT / "REPORT.md", metavar="FILE",
                     help="the register to write or check (default: REPORT.md)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "report":
        from fldp import report

        return report.run(args.results_dir, args.output, check=args.check)
    if args.command != "reproduce":
        parser.print_help(sys.stderr)
        return 2
    from fldp.pipeline import Options, UsageError, parse_value, reproduce

    opts = Options(quick=args.quick, only=args.only, jobs=args.jobs, timeout=args.timeout,
                   params={name: parse_value(value) for name, value in args.parameter},
                   notebooks_dir=args.notebooks_dir, build_dir=args.build_dir)
    try:
        report = reproduce(opts)
    except UsageError as exc:
        print(f"fldp reproduce: error: {exc}", file=sys.stderr)
        return 2
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
