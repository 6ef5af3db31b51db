"""The ``fldp`` command (also ``python -m fldp``)::

    fldp reproduce [--quick] [--only PATTERN] [--jobs N] [--plan] [-p NAME VALUE ...] [--timeout SECONDS]
    fldp report [--check] [--results-dir DIR] [--output FILE]
    fldp exercises [--out DIR] [--solutions | --execute] [--only PAPER] [--jobs N] [--timeout SECONDS]
                   [--notebooks-dir DIR]
    fldp sweep FN [-g NAME=V1,V2,...] [-p NAME VALUE] [--backend B] [--workers N] [--scheduler ADDR]
               [--store DIR] [--fresh]
    fldp book [--out DIR] [--serve] [--no-build] [--port N]
    fldp store verify [--only NOTEBOOK] [--sample N | --budget SECONDS] [--seed S] [--archive DIR]

Exit status of ``reproduce``: 0 when every notebook ran, 1 when one failed, 2 for a request
that cannot run.  Of ``sweep``: 0 when every run finished, 1 when one failed (the others are
stored), 2 for a request that cannot run.  Of ``report``: 0 when REPORT.md was written (with ``--check``: is up to
date), 1 when ``--check`` finds it missing or out of date.  Of ``exercises``: 0 when the notebooks were
written (and, executed, every check reported what it should), 1 when one did not, 2 for a request that
cannot run.  Of ``book``: 0 when the site was built (and served until Ctrl-C), 1 when the build
failed (Sphinx's warnings are errors), 2 when the port cannot be served.  Of ``store verify``: 0 when
every checked run recomputes to its archived numbers, 1 when one differs or a line is damaged, 2 for a
request that cannot run.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from fldp import __version__

__all__ = ["build_parser", "main"]


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
    from fldp.repro.execute import DEFAULT_CELL_TIMEOUT_S
    from fldp.repro.paths import PROJECT_ROOT

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
                     help="N workers: notebooks run N at a time and their training runs share one "
                          "pool of N single-threaded Dask workers (default 1: one after another)")
    rep.add_argument("--plan", action="store_true",
                     help="print the plan (per notebook: runs, how many the run store holds, "
                          "predicted time) and stop")
    rep.add_argument("--recalibrate", action="store_true",
                     help="measure the cost model's constants again (a few seconds; they are "
                          "cached in build/cost/ per machine)")
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
    rep.add_argument("--fresh", action="store_true",
                     help="ignore the run store (results/runs/): run every experiment again")
    _backend_args(rep)
    swp = commands.add_parser(
        "sweep", help="run a parameter grid through the resumable run store, on any backend",
        description="Expand a grid into runs FN(**config), skip the ones the store holds, run the "
                    "others (in this process, local processes or Dask) and store each as it finishes.")
    swp.add_argument("fn", metavar="FN",
                     help="the run function, 'module:function' or a name of fldp.papers.experiments() "
                          "(e.g. wei2020.nbafl)")
    swp.add_argument("-g", "--grid", action="append", default=[], metavar="NAME=V1,V2,...",
                     help="a swept setting and its values (repeatable; values as Python literals)")
    swp.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                     help="a fixed setting (repeatable)")
    swp.add_argument("--store", type=Path, default=PROJECT_ROOT / "results" / "runs", metavar="DIR",
                     help="the run store (default: results/runs/)")
    swp.add_argument("--fresh", action="store_true", help="run again even what the store holds")
    _backend_args(swp)
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
    cmp_ = commands.add_parser(
        "compare", help="compare results/**/*.json with their committed version (wall clock and run usage aside)",
        description="After a reproduction: compare every results JSON file (not the run store, cost records or "
                    "archive) with the file as committed at REF, exactly, leaving out the wall-clock and "
                    "run-usage fields (wall_time_s, runs). Names the changed verdicts, the number of values "
                    "that differ, the largest relative difference and the first places. Exit 0 when all "
                    "are equal, 1 when one differs.")
    cmp_.add_argument("ref", nargs="?", default="HEAD", metavar="REF",
                      help="the git revision to compare with (default: HEAD)")
    cmp_.add_argument("--only", action="append", default=[], metavar="PATTERN",
                      help="only files whose path contains PATTERN (repeatable)")
    cmp_.add_argument("--results-dir", type=Path, default=PROJECT_ROOT / "results", metavar="DIR",
                      help="where the results JSON files are (default: results/)")
    exe = commands.add_parser(
        "exercises", help="build the exercises notebooks: the student versions, or the executed solutions",
        description="Write notebooks/<paper>/exercises.ipynb without its solutions (between '# BEGIN SOLUTION' "
                    "and '# END SOLUTION') to OUT/<paper>/exercises.ipynb, outputs stripped; with --solutions, "
                    "execute the masters instead and check that every exercise reports 'correct'.")
    exe.add_argument("--out", type=Path, metavar="DIR",
                     help="where the notebooks go (default: build/exercises/student, or build/exercises/solutions "
                          "with --solutions)")
    mode = exe.add_mutually_exclusive_group()
    mode.add_argument("--solutions", action="store_true",
                      help="execute the masters (with their solutions) on the kernel 'fldp'; exit 1 unless every "
                           "check reports 'correct'")
    mode.add_argument("--execute", action="store_true",
                      help="also execute the student versions; exit 1 unless every check reports 'not answered yet'")
    exe.add_argument("--only", action="append", default=[], metavar="PAPER",
                     help="one paper's exercises (wei2020, zhou, li2021, adaptive_noise; repeatable)")
    exe.add_argument("--jobs", "-j", type=_positive_int, default=1, metavar="N",
                     help="notebooks executed at a time (default 1)")
    exe.add_argument("--timeout", type=_positive_float, metavar="SECONDS", help="per-cell time limit (default 600 s)")
    exe.add_argument("--notebooks-dir", type=Path, default=PROJECT_ROOT / "notebooks", metavar="DIR",
                     help="where the masters are, DIR/<paper>/exercises.ipynb (default: notebooks/)")
    bk = commands.add_parser(
        "book", help="build the static book from the committed results into build/book/ (and serve it)",
        description="Stage book/, the committed executed notebooks (results/executed/), figures/, results/ and "
                    "REPORT.md into build/book-src/ and build the site with Sphinx + MyST-NB (warnings are "
                    "errors) into build/book/; no notebook is executed. The widget JavaScript and MathJax are "
                    "fetched once from npm (pinned, sha512-checked) into build/vendor/.")
    bk.add_argument("--out", type=Path, default=PROJECT_ROOT / "build" / "book", metavar="DIR",
                    help="where the site goes (default: build/book/)")
    bk.add_argument("--serve", action="store_true", help="then serve it on http://127.0.0.1:PORT/ until Ctrl-C")
    bk.add_argument("--no-build", action="store_true", help="serve the site already built in --out")
    bk.add_argument("--port", type=_port, default=8000, metavar="N", help="port for --serve (default 8000)")
    sto = commands.add_parser(
        "store", help="the run archive (results/archive/): verify it by recomputing its runs; checkpoint a sitting",
        description="fldp store verify: recompute archived runs (one thread, seeded) and compare them with the "
                    "archive exactly; a mismatch names the run, its notebook and the first differing value. "
                    "fldp store checkpoint: keep the runs of an unfinished recomputation in the archive's "
                    "_pending/ folder, to commit and resume in the next sitting.")
    sto_cmd = sto.add_subparsers(dest="store_command", metavar="SUBCOMMAND")
    ver = sto_cmd.add_parser("verify", help="recompute archived runs and compare them with the archive")
    ver.add_argument("--only", action="append", default=[], metavar="NOTEBOOK",
                     help="the runs of the notebooks whose <paper>/<notebook> contains this (repeatable)")
    amount = ver.add_mutually_exclusive_group()
    amount.add_argument("--sample", type=_positive_int, metavar="N", help="N runs drawn at random (--seed)")
    amount.add_argument("--budget", type=_positive_float, metavar="SECONDS",
                        help="the cheapest runs first (by their cost records) until SECONDS are spent")
    ver.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    chk = sto_cmd.add_parser(
        "checkpoint", help="keep the local store's runs that no notebook has archived yet in results/archive/_pending/",
        description="For a recomputation longer than one sitting: write every run of the local run store "
                    "(results/runs/) that no notebook's archive file holds into results/archive/_pending/<fn>.jsonl "
                    "(commit it); the next sitting's store reads them, so `fldp reproduce --only NB` (without "
                    "--fresh) computes only the rest. Pending runs that a notebook has archived since are dropped.")
    chk.add_argument("--store", type=Path, default=PROJECT_ROOT / "results" / "runs", metavar="DIR",
                     help="the local run store (default: results/runs/)")
    for sub in (ver, chk):
        sub.add_argument("--archive", type=Path, default=PROJECT_ROOT / "results" / "archive", metavar="DIR",
                         help="the archive (default: results/archive/)")
    return parser


def _store(args: argparse.Namespace, parser) -> int:
    """``fldp store verify``: 0 when every checked run recomputes to its archived numbers, 1 when one
    does not (or a line of the archive is damaged), 2 for a bad request."""
    import warnings

    from fldp.repro import archive, verify

    if args.store_command == "checkpoint":
        return _checkpoint(args)
    if args.store_command != "verify":
        parser.parse_args(["store", "--help"])
        return 2
    if not args.archive.is_dir():
        print(f"fldp store verify: error: no run archive at {args.archive}", file=sys.stderr)
        return 2
    arch = archive.Archive(args.archive)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # damaged lines are listed below instead
        runs = list(arch.runs(args.only))
    for d in arch.damaged:
        print(f"DAMAGED  {d}")
    if not runs:
        print(f"fldp store verify: error: no archived run matches {args.only or 'anything'} in {args.archive}",
              file=sys.stderr)
        return 2
    cost_of = _archived_cost(args.archive.parent / "costs") if args.budget else None
    checked, mismatches = verify.verify(arch, only=args.only, sample=args.sample, budget_s=args.budget,
                                        seed=args.seed, cost=cost_of)
    changed = {nb: archive.environment_changes(args.archive.parent / "costs", nb) for nb in {m.notebook for m in mismatches}}
    failing = verify.failing(mismatches, changed)
    for m in mismatches:
        print(f"{'MISMATCH' if m in failing else 'ROUNDING'} {m}")
    for nb in sorted(changed):  # a library's numerics, another processor, or the code?
        print(f"         {nb}: " + ("its runs were archived in this environment, so the code changed"
                                    if not changed[nb] else
                                    "the environment its runs were archived in: " + ", ".join(changed[nb])
                                    + " (a library's numerics or the processor's kernels may differ, not only the code)"))
    rounding = len(mismatches) - len(failing)
    print(f"fldp store verify: {checked} of {len(runs)} archived run(s) recomputed, {len(mismatches)} differ"
          + (f" ({rounding} of them only by float rounding, within {verify.ROUNDING_TOL:g}, in another environment: "
             "the same code on another processor)" if rounding else "")
          + (f"; {len(arch.damaged)} damaged line(s)" if arch.damaged else ""))
    return 1 if failing or arch.damaged else 0


def _checkpoint(args: argparse.Namespace) -> int:
    """``fldp store checkpoint``: 0 when the pending runs are written, 2 for a bad request."""
    import warnings

    from fldp.repro import archive, store

    if not args.store.is_dir():
        print(f"fldp store checkpoint: error: no run store at {args.store}", file=sys.stderr)
        return 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        counts = archive.checkpoint(store.RunStore(args.store).records(), args.archive)
    for w in caught:
        print(f"warning: {w.message}")
    print(f"fldp store checkpoint: {counts['added']} run(s) added, {counts['dropped']} dropped (archived by their "
          f"notebooks since); {counts['pending']} pending in {counts['files']} file(s) under "
          f"{args.archive / archive.PENDING}")
    return 0


def _archived_cost(costs: Path | None = None):
    """Predicted seconds of an archived run: its CPU (else wall) seconds in the cost records under
    ``costs`` (the ``results/costs/`` beside the archive, by default the project's); infinite for a
    run none of them lists."""
    import json

    from fldp.repro import store
    from fldp.repro.paths import PROJECT_ROOT

    costs = costs or PROJECT_ROOT / "results" / "costs"
    seconds = {}
    for path in costs.glob("*/*.json"):
        try:
            for r in json.loads(path.read_text()).get("runs", []):
                seconds[store.manifest_key(r)] = r.get("cpu_s") or r.get("seconds") or 0.0
        except (OSError, ValueError, KeyError):
            continue
    return lambda run: seconds.get(store.manifest_key(run), float("inf"))


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}: give a whole number from 1 to 65535") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is out of range: give a number from 1 to 65535")
    return value


def _book(args: argparse.Namespace) -> int:
    import time

    from fldp.repro import book

    try:
        if not args.no_build:
            t0 = time.perf_counter()
            out = book.build(out=args.out)
            print(f"fldp book: built {out / 'index.html'} in {time.perf_counter() - t0:.0f} s")
        if args.serve or args.no_build:
            book.serve(args.out, args.port)
    except book.BookError as exc:
        print(f"fldp book: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # the port is taken, or not ours to open
        print(f"fldp book: error: cannot serve on 127.0.0.1:{args.port}: {exc.strerror or exc} "
              "(choose another with --port N)", file=sys.stderr)
        return 2
    return 0


def _backend_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=("inprocess", "processes", "dask"),
                        help="where runs execute (default: in this process; dask when a scheduler is given)")
    parser.add_argument("--workers", type=_positive_int, metavar="N",
                        help="local processes or Dask workers (default 2)")
    parser.add_argument("--scheduler", metavar="ADDR",
                        help="an existing Dask scheduler, e.g. tcp://host:8786 (default: "
                             "$DASK_SCHEDULER_ADDRESS, else a local cluster)")


def _backend_env(args) -> None:
    """Pass the backend choice to notebooks' kernels and to fldp.repro.sweep through the environment."""
    import os

    from fldp.repro import store, sweep

    for value, name in ((args.backend, sweep.BACKEND_ENV), (args.workers, sweep.WORKERS_ENV),
                        (args.scheduler, sweep.SCHEDULER_ENV), ("1" if args.fresh else None, store.FRESH_ENV)):
        if value:
            os.environ[name] = str(value)


def _split_values(name: str, text: str) -> list[str]:
    """``-g NAME=V1,V2,...``'s values, split at the commas outside brackets and quotes (so
    ``channels=(32,64),(16,32)`` is two values); ValueError for an empty or unbalanced value."""
    parts, depth, quote, cur = [], 0, "", ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                break
        elif ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    if depth != 0 or quote:
        raise ValueError(f"-g {name}={text}: unbalanced brackets or quotes")
    parts.append(cur)
    if any(not p.strip() for p in parts):
        raise ValueError(f"-g {name}={text}: an empty value (write NAME=V1,V2,... without empty entries)")
    return parts


def _settings_problem(label: str, fn, configs) -> str | None:
    """What is wrong with the settings of ``configs`` for the run function ``fn`` (None when fine)."""
    import inspect

    from fldp.repro import store

    params = inspect.signature(store.resolve(fn) if isinstance(fn, str) else fn).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None
    given = set().union(*(set(c) for c in configs)) if configs else set()
    unknown = sorted(given - set(params))
    missing = [n for n, p in params.items() if p.default is p.empty and n not in given]
    if unknown:
        return (f"{label} has no setting(s) {', '.join(unknown)}; its settings are "
                f"{', '.join(params)}")
    if missing:
        return (f"{label} needs the setting(s) {', '.join(missing)}: give each with -p NAME VALUE "
                "or -g NAME=V1,V2,...")
    return None


def _writable(folder: Path) -> None:
    """OSError unless a file can be created in ``folder`` (created when missing)."""
    import tempfile

    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".fldp-write-check-")
    os.close(fd)
    os.unlink(tmp)


def _sweep(args) -> int:
    from fldp.repro import store, sweep
    from fldp.repro.chapters import parse_value

    from fldp import papers

    experiments = papers.experiments()
    fn = experiments.get(args.fn, args.fn)
    try:
        try:
            store.resolve(fn)
        except (ValueError, ImportError, AttributeError):
            raise ValueError(f"unknown run function {args.fn!r}: give 'module:function' or one of "
                             f"{', '.join(sorted(experiments))}") from None
        grid = {}
        for item in args.grid:
            name, sep, values = item.partition("=")
            if not sep or not name or not values:
                raise ValueError(f"-g {item!r}: write NAME=V1,V2,...")
            if name in grid:
                raise ValueError(f"-g {name}: given twice; list all its values in one -g {name}=V1,V2,...")
            grid[name] = [parse_value(v) for v in _split_values(name, values)]
        configs = sweep.expand(grid, {name: parse_value(value) for name, value in args.parameter})
        problem = _settings_problem(args.fn, fn, configs)
        if problem:
            raise ValueError(problem)
        _backend_env(args)
        sweep.backend_settings(args.backend, args.workers, args.scheduler)  # a bad $FLDP_BACKEND fails here
    except ValueError as exc:
        print(f"fldp sweep: error: {exc}", file=sys.stderr)
        return 2
    try:
        _writable(args.store)
    except OSError as exc:
        print(f"fldp sweep: error: the run store {args.store} is not writable ({exc.strerror or exc}): "
              "choose another folder with --store DIR", file=sys.stderr)
        return 2
    runs = store.RunStore(args.store)
    try:
        out = sweep.run_all(fn, configs, store=runs, fresh=args.fresh, raise_on_failure=False)
    except sweep.SchedulerUnreachable as exc:
        print(f"fldp sweep: error: {exc} (start one with `dask scheduler`, or leave --scheduler and "
              "$DASK_SCHEDULER_ADDRESS out for a local cluster)", file=sys.stderr)
        return 2
    failed = {store.run_key(fn, f.config): f.error for f in out.failures}
    for cfg in configs:
        key = store.run_key(fn, cfg)
        why = f": {' '.join(str(failed[key]).split())}" if key in failed else ""
        print(f"{'FAILED' if key in failed else 'ok    '} {key[:12]}  {cfg}{why}")
    print(f"{len(configs)} run(s): {out.ran} ran, {out.reused} reused from {runs.root}, {len(out.failures)} failed "
          f"({out.backend}, {out.seconds:.1f} s)")
    return 1 if out.failures else 0


def _compare(args: argparse.Namespace) -> int:
    """``fldp compare``: 0 when every results file equals its committed version (wall clock and run
    usage aside), 1 when one differs or is new, 2 for a bad request."""
    from fldp.repro import compare

    why = compare.check_ref(args.ref)
    if why:
        print(f"fldp compare: error: {why}", file=sys.stderr)
        return 2
    if not args.results_dir.is_dir():
        print(f"fldp compare: error: no results folder at {args.results_dir}", file=sys.stderr)
        return 2
    try:
        found = compare.compare(args.results_dir, ref=args.ref, only=args.only)
    except ValueError:
        print(f"fldp compare: error: --results-dir {args.results_dir} is not inside the project", file=sys.stderr)
        return 2
    if not found:
        print(f"fldp compare: error: no results file matches {args.only or 'anything'} in {args.results_dir}",
              file=sys.stderr)
        return 2
    for c in found:
        print("\n".join(c.lines()))
    counts = {s: sum(c.status == s for c in found) for s in ("equal", "differs", "new", "unreadable")}
    print(f"fldp compare: {len(found)} results file(s) against {args.ref} (wall_time_s and runs aside): "
          + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    return 0 if counts["equal"] == len(found) else 1


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("fldp: interrupted (finished runs are stored; run the same command again to go on)", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "report":
        from fldp.repro import report

        return report.run(args.results_dir, args.output, check=args.check)
    if args.command == "sweep":
        return _sweep(args)
    if args.command == "exercises":
        from fldp.teach.exercises import build

        return build.main(args)
    if args.command == "book":
        return _book(args)
    if args.command == "store":
        return _store(args, parser)
    if args.command == "compare":
        return _compare(args)
    if args.command != "reproduce":
        parser.print_help(sys.stderr)
        return 2
    from fldp.repro.chapters import Options, parse_value
    from fldp.repro.execute import UsageError
    from fldp.repro.pipeline import reproduce

    _backend_env(args)

    opts = Options(quick=args.quick, only=args.only, jobs=args.jobs, timeout=args.timeout,
                   params={name: parse_value(value) for name, value in args.parameter},
                   notebooks_dir=args.notebooks_dir, build_dir=args.build_dir, plan_only=args.plan,
                   recalibrate=args.recalibrate)
    try:
        report = reproduce(opts)
    except UsageError as exc:
        print(f"fldp reproduce: error: {exc}", file=sys.stderr)
        return 2
    return 0 if report is None or report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
