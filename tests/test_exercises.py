"""The exercises (fldp.teach.exercises, notebooks/<paper>/exercises.ipynb): checks, hints, builder, CLI.

The four masters run with their solutions (every check "correct") and as student versions
(every check "not answered yet", no exception) on the kernel ``fldp``, in background processes
started by the first test, while the in-process tests run.  The tests that execute notebooks carry
the ``notebooks`` marker (``-m 'not notebooks'`` deselects them, as it does the chapters).
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from fldp.repro import chapters, cli, execute

from fldp.teach import exercises as E
from fldp.teach.exercises import build

ROOT = Path(__file__).resolve().parent.parent
MASTERS = build.masters(ROOT / "notebooks")


# ----------------------------------------------------------------------------- background runs
@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Execute every master and every student version, 4 at a time in spawned processes; yields
    {("solutions" | "student", paper): Future of build.Built}."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    execute.check_kernel()
    out = tmp_path_factory.mktemp("exercises")
    jobs = []
    for src in MASTERS:
        paper = src.parent.name
        jobs.append((("solutions", paper), build.Job(paper, src, out / "solutions" / paper / build.NOTEBOOK, E.CORRECT)))
        student = build.student_version(src, out / "student" / paper / build.NOTEBOOK)
        jobs.append((("student", paper), build.Job(paper, student, student, E.NOT_ANSWERED)))
    pool = ProcessPoolExecutor(4, mp_context=multiprocessing.get_context("spawn"))
    yield {key: pool.submit(build.run_job, job) for key, job in jobs}
    pool.shutdown(cancel_futures=True)


@pytest.mark.notebooks
def test_every_paper_has_an_exercises_master():
    assert [p.parent.name for p in MASTERS] == list(E.PAPERS)


# ----------------------------------------------------------------------------- the catalogue
def test_catalogue():
    every = E.all_exercises()
    assert len(every) >= 16 and len({ex.id for ex in every}) == len(every)
    for paper in E.PAPERS:
        assert 4 <= len(E.all_exercises(paper)) <= 5, paper
    assert sum(isinstance(ex.kind, E.Choice) for ex in every) >= 4  # a judgement question per paper
    with pytest.raises(ValueError, match="no exercise 'nope'.*wei2020.classic_sigma"):
        E.check("nope", 1.0)


@pytest.mark.parametrize("ex", E.all_exercises(), ids=lambda ex: ex.id)
def test_every_known_mistake_is_recognised_and_distinct(ex, capsys):
    """Each known wrong answer gets its own hint: it is outside the tolerance of the correct answer,
    and the first mistake it matches is its own (so no hint hides another)."""
    assert E.check(ex.id, ...).status == E.NOT_ANSWERED
    assert E.check(ex.id, None).status == E.NOT_ANSWERED
    assert E.check(ex.id, ex.expected()).status == E.CORRECT
    assert ex.mistakes, f"{ex.id} knows no mistake"
    for m in ex.mistakes:
        wrong = m.wrong_answer()
        fb = E.check(ex.id, wrong)
        assert fb.status == E.NOT_YET and fb.mistake == m.key, (m.key, fb)
        assert fb.message.startswith(f"{ex.id}: not yet: ") and "{" not in fb.message
    out = capsys.readouterr().out
    assert f"{ex.id}: correct" in out and f"{ex.id}: not answered yet" in out


def _wei():
    from fldp.papers.wei2020 import algorithm, theory

    return algorithm, theory


# One known wrong answer per exercise, computed here (not by the module) from the mistaken method,
# and the words its hint must contain.
def _wrong_answers():
    import fldp.papers.adaptive_noise.theory as an
    import fldp.papers.li2021.algorithm as la
    import fldp.papers.li2021.theory as lt
    import fldp.papers.zhou.theory as zt
    from fldp import mechanisms

    nbafl, wt = _wei()
    q = lt.sampling_ratio(b=1, n_k=325, Q=10)
    z = lt.sigma_eq9(eps=1.0, delta=1e-4, q=q, sensitivity_df=1.0)
    return {
        "wei2020.classic_sigma": (wt.sigma_uplink(C=20.0, m=1200, eps=60.0, L=25, delta=0.01), ["L = T = 25"]),
        "wei2020.eps_really": (60.0, ["proof covers only eps < 1"]),
        "wei2020.whole_run_sigma": (nbafl.calibrate_accountant(eps=4.0, delta=1e-5, C=20.0, N=50, T=1, m=1200).sigma_U,
                                    ["composes L = 1 release", "T = 25 uploads"]),
        "wei2020.krandom_K": (5, ["b is undefined", "sigma_D = 0"]),
        "wei2020.server_noise": ("a", ["Theorem 1", "not the accountant's reason"]),
        "zhou.laplace_scale": (zt.laplace_scale(eps=1.0, b=10, T=50, N=10, d_i=6000, xi1=300.0),
                               ["composes T = 50 replies", "b T / N = 25"]),
        "zhou.T_star": (32, ["rounded"]),
        "zhou.b_star": (zt.b_star(T=50, eps=5.0, N=10, p=7840, d=60000, xi1=300.0, G=17.95), ["T held at 50"]),
        "zhou.why_b_star": ("(A)", ["not linear in b"]),
        "zhou.gaussian_b": (10.0, ["Laplace mechanism's ratio"]),
        "li2021.sigma_eq9": (mechanisms.classic_gaussian_sigma(eps=1.0, delta=1e-4, sensitivity=lt.lemma1_sensitivity(Q=10, G=2.0, eta=lt.paper_lr(t=10))),
                             ["no amplification"]),
        "li2021.eq8_x": (1.0 / q, ["dropped the 2"]),
        "li2021.amplified_eps": (lt.eq8_bound(eps=1.0 / (2 * q), q=q), ["eq. (8)'s bound", "x <= 1.2564"]),
        "li2021.whole_run": (la.run_eps(z=z, Q=10, b=1, n_k=325, uploads=1, delta=1e-4)["eps"], ["ONE upload", "20 times"]),
        "li2021.audit": ("b", ["contradicts nothing"]),
        "adaptive_noise.noise_std": (15.0 * 0.5, ["norm of the layer's whole noise vector"]),
        "adaptive_noise.aggregate": (an.noise_std(c=15.0, update_norm=0.5, dim=51_200) / 20, ["variances add"]),
        "adaptive_noise.max_c": (20.0, ["the paper's rule"]),
        "adaptive_noise.filter_tries": (an.expected_tries_normal(p=-1.0), ["1/Phi(p)", "not normal"]),
        "adaptive_noise.dp_guarantee": ("c", ["does not make a similar guarantee"]),
    }


def test_one_wrong_answer_per_exercise_gets_the_hint_that_names_its_mistake():
    table = _wrong_answers()
    assert set(table) == {ex.id for ex in E.all_exercises()}
    for exercise_id, (wrong, words) in table.items():
        fb = E.check(exercise_id, wrong, quiet=True)
        assert fb.status == E.NOT_YET and fb.mistake, (exercise_id, fb.message)
        for w in words:
            assert w in fb.message, (exercise_id, w, fb.message)


def test_answers_in_other_forms():
    import torch

    good = E.get("wei2020.classic_sigma").expected()
    for form in (np.float32(good), np.array(good), torch.tensor(good, dtype=torch.float64)):
        assert E.check("wei2020.classic_sigma", form, quiet=True).correct
    assert E.check("wei2020.krandom_K", np.int64(15), quiet=True).correct
    assert E.check("wei2020.krandom_K", 15.0, quiet=True).correct
    assert "whole number" in E.check("wei2020.krandom_K", 14.5, quiet=True).message
    assert E.check("zhou.why_b_star", " (B) ", quiet=True).correct
    for bad, words in (("0.0017", "give one number"), ([0.1, 0.2], "give one number"), (math.nan, "finite"),
                       (True, "give one number")):
        fb = E.check("wei2020.classic_sigma", bad, quiet=True)
        assert fb.status == E.NOT_YET and words in fb.message, fb.message
    assert 'one letter: "a", "b", "c", "d"' in E.check("li2021.audit", 3, quiet=True).message
    assert E.check("wei2020.classic_sigma", 123.0, quiet=True).message.endswith("(fldp.papers.wei2020.theory.sigma_uplink)")


def test_feedback_prints_once_and_shows_again_later(capsys):
    fb = E.check("zhou.why_b_star", "b")
    assert capsys.readouterr().out == "zhou.why_b_star: correct: (b)\n"
    fb._ipython_display_()  # outside IPython: nothing to de-duplicate against, so it prints
    assert capsys.readouterr().out == "zhou.why_b_star: correct: (b)\n"
    assert str(fb) == fb.message and fb.correct


# ----------------------------------------------------------------------------- notebook sources
def _cells(path):
    return nbformat.read(path, as_version=4).cells


@pytest.mark.parametrize("path", MASTERS, ids=lambda p: p.parent.name)
def test_master_conventions(path):
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.kernelspec == {"name": "fldp", "display_name": "Python (fldp)", "language": "python"}
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# Exercises: ")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), "strip outputs before committing"
    paper = path.parent.name
    assert build.check_ids(path) == [ex.id for ex in E.all_exercises(paper)], "one check per exercise, in order"
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        ids = build.CHECK_CALL.findall(cell.source)
        if not ids:
            assert build.BEGIN not in cell.source and "answer = ..." not in cell.source, f"cell {i}"
            continue
        lines = [ln.strip() for ln in cell.source.splitlines()]
        assert len(ids) == 1 and lines.count(build.BEGIN) == 1 and lines.count(build.END) == 1, f"cell {i}"
        at = {k: lines.index(k) for k in ("answer = ...", build.BEGIN, build.END)}
        check_at = next(j for j, ln in enumerate(lines) if build.CHECK_CALL.search(ln))
        assert at["answer = ..."] < at[build.BEGIN] < at[build.END] < check_at == len(lines) - 1, f"cell {i}"
        ex = E.get(ids[0])
        task = next(c for c in reversed(nb.cells[:i]) if c.cell_type == "markdown" and c.source.startswith("## Exercise"))
        assert f"**Tolerance:** {ex.tolerance}." in task.source, f"{ex.id}: the task must state its tolerance"
        if isinstance(ex.kind, E.Choice):
            assert all(f"* ({o})" in task.source for o in ex.kind.options), f"{ex.id}: every choice is listed"


def test_exercises_notebooks_are_not_chapters(tmp_path):
    found = chapters.discover(ROOT / "notebooks")
    assert not [p for p in found if p.name == build.NOTEBOOK]
    assert chapters.is_chapter(Path("wei2020/01_preliminaries.ipynb"))
    assert not chapters.is_chapter(Path("wei2020/exercises.ipynb"))
    assert not chapters.is_chapter(Path("explore.ipynb"))


# ----------------------------------------------------------------------------- the builder
def test_student_version_strips_solutions_and_keeps_the_task(tmp_path):
    src = ROOT / "notebooks" / "wei2020" / "exercises.ipynb"
    master = _cells(src)
    dst = build.student_version(src, tmp_path / "s" / "exercises.ipynb")
    cells = _cells(dst)
    text = "\n".join(c.source for c in cells)
    assert "SOLUTION" not in text and "**Solution.**" not in text
    assert "th.sigma_uplink(C=C" not in text and 'answer = "b"' not in text
    assert len(cells) == len(master) - sum("<!-- BEGIN SOLUTION -->" in c.source for c in master)
    for c in cells:
        if c.cell_type == "code" and build.CHECK_CALL.search(c.source):
            lines = c.source.splitlines()
            assert lines[-3:-1] == ["answer = ...", build.PLACEHOLDER] and lines[-1].startswith("exercises.check(")
    assert all(not c.get("outputs") for c in cells if c.cell_type == "code")
    assert build.check_ids(dst) == build.check_ids(src)
    links = re.findall(r"\]\(([^)]+\.ipynb)\)", cells[0].source)
    assert links and all((dst.parent / link).resolve().is_file() for link in links), links  # the chapters, from dst
    assert cells[2].source == master[2].source  # the first task, untouched


def test_strip_keeps_indentation_and_refuses_unbalanced_markers():
    src = "def f():\n    answer = ...\n    # BEGIN SOLUTION\n    answer = 2\n    # END SOLUTION\n    return answer"
    out, blocks = build._strip(src, build.BEGIN, build.END, "cell 3", build.PLACEHOLDER)
    assert blocks == 1 and out == "def f():\n    answer = ...\n    # your code here\n    return answer"
    for bad in ("# BEGIN SOLUTION\nx = 1", "x = 1\n# END SOLUTION", "# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION"):
        with pytest.raises(ValueError, match="cell 3"):
            build._strip(bad, build.BEGIN, build.END, "cell 3", build.PLACEHOLDER)
    md, _ = build._strip("task\n<!-- BEGIN SOLUTION -->\nsecret\n<!-- END SOLUTION -->\nend", build.MD_BEGIN,
                         build.MD_END, "cell 4", None)
    assert md == "task\nend"


# ----------------------------------------------------------------------------- the CLI
def _master(path: Path, exercise_id: str, solution: str) -> None:
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "fldp", "display_name": "Python (fldp)",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell("# Exercises: a test"),
                nbformat.v4.new_code_cell("from fldp.teach import exercises"),
                nbformat.v4.new_code_cell(f"answer = ...\n# BEGIN SOLUTION\nanswer = {solution}\n# END SOLUTION\n"
                                          f'exercises.check("{exercise_id}", answer)')]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def test_cli_builds_the_student_versions(tmp_path, capsys):
    assert cli.main(["exercises", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for paper in E.PAPERS:
        assert (tmp_path / paper / "exercises.ipynb").is_file() and f"student   {paper}" in out
    assert cli.main(["exercises", "--only", "nope", "--out", str(tmp_path)]) == 2
    assert "no exercises for 'nope'" in capsys.readouterr().err


@pytest.mark.notebooks
def test_cli_runs_solutions_and_fails_on_a_wrong_one(tmp_path, capsys):
    """--solutions executes the masters on the kernel and exits 1 when a check is not "correct"."""
    nbs = tmp_path / "notebooks"
    _master(nbs / "zhou" / "exercises.ipynb", "zhou.laplace_scale", "2 * 5 * 50 * 300.0 / (10 * 6000 * 1.0)")
    _master(nbs / "wei2020" / "exercises.ipynb", "wei2020.server_noise", '"a"')
    code = cli.main(["exercises", "--solutions", "--notebooks-dir", str(nbs), "--out", str(tmp_path / "out"),
                     "--jobs", "2"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert re.search(r"ok\s+zhou\s+1/1 correct", out) and re.search(r"FAILED\s+wei2020\s+0/1 correct", out), out
    assert "wei2020.server_noise: not yet, not correct" in out
    assert build.feedback_in(tmp_path / "out" / "zhou" / "exercises.ipynb") == {"zhou.laplace_scale": "correct"}


# ----------------------------------------------------------------------------- the executed notebooks
@pytest.mark.notebooks
@pytest.mark.parametrize("paper", E.PAPERS)
def test_solutions_run_and_every_check_is_correct(runs, paper):
    built = runs["solutions", paper].result(timeout=600)
    assert built.ok, built.problems
    assert built.statuses == {ex.id: E.CORRECT for ex in E.all_exercises(paper)}


@pytest.mark.notebooks
@pytest.mark.parametrize("paper", E.PAPERS)
def test_student_version_runs_and_every_check_is_not_answered_yet(runs, paper):
    built = runs["student", paper].result(timeout=600)
    assert built.ok, built.problems
    assert built.statuses == {ex.id: E.NOT_ANSWERED for ex in E.all_exercises(paper)}
    print(f"student version of {paper}: {built.seconds:.1f} s")


# ----------------------------------------------------------------------------- signatures and hints
def _notebook_namespace(path: Path) -> dict:
    """The names the notebook's import cell binds (th, nbafl, ...)."""
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "import" in c.source)
    ns: dict = {}
    exec(cell.source, ns)
    return ns


def test_signature_reads_as_the_call():
    from fldp.papers.wei2020 import theory as th

    assert E.signature(th.gaussian_c) == "gaussian_c(*, delta)"
    assert E.signature(th.sigma_uplink) == "sigma_uplink(*, C, m, eps, L=1, c=None, delta=None)"

    def mixed(a, b=2, *rest, key, flag=False, **more):
        pass
    assert E.signature(mixed) == "mixed(a, b=2, *rest, key, flag=False, **more)"


@pytest.mark.parametrize("path", MASTERS, ids=lambda p: p.parent.name)
def test_helps_lines_show_current_signatures(path):
    """Every function a "Helps" line names is written with its signature, as it is today."""
    nb = nbformat.read(path, as_version=4)
    ns = _notebook_namespace(path)
    helps = [c.source for c in nb.cells if c.cell_type == "markdown" and E.HELPS in c.source]
    assert helps, "no Helps line"
    for text in helps:
        assert E.helps_with_signatures(text, ns) == text, "run E.helps_with_signatures over this notebook"
    assert any("`th.gaussian_c(*, delta)`" in t for t in helps) or path.parent.name != "wei2020"


def test_helps_with_signatures_rewrites_a_stale_line():
    from fldp.papers.wei2020 import theory as th

    text = "**Answer:** x. **Helps:** `th.gaussian_c`, `th.gaussian_c(delta)`, `th.gaussian_c`'s docstring, `th.nope`."
    assert E.helps_with_signatures(text, {"th": th}) == (
        "**Answer:** x. **Helps:** `th.gaussian_c(*, delta)`, `th.gaussian_c(*, delta)`, `th.gaussian_c`'s docstring, "
        "`th.nope`.")


def test_keyword_hint_names_the_keywords():
    from fldp.papers.wei2020 import theory as th

    with pytest.raises(TypeError) as err:
        th.gaussian_c(0.01)
    assert E.keyword_hint(err.value) == ("hint: gaussian_c takes its arguments by name only: gaussian_c(*, delta). "
                                         "Call it as gaussian_c(delta=...).")
    with pytest.raises(TypeError) as err:
        th.uplink_sensitivity(C=20.0)
    assert E.keyword_hint(err.value) == "hint: uplink_sensitivity needs 'm' by name: uplink_sensitivity(*, C, m)."
    assert E.keyword_hint(TypeError("unsupported operand type(s) for +: 'int' and 'str'")) is None
    assert E.keyword_hint(ValueError("gaussian_c() takes 0 positional arguments but 1 was given")) is None


def test_ipython_shows_the_hint_under_the_traceback(capsys):
    """In a kernel (IPython's shell), a student's positional call prints the traceback and the hint."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        assert E.install_keyword_hints()
        shell.run_cell("from fldp.papers.wei2020 import theory as th\nth.gaussian_c(0.01)")
        out = capsys.readouterr()
        text = out.out + out.err
        assert "TypeError" in text
        assert "hint: gaussian_c takes its arguments by name only: gaussian_c(*, delta)" in text
    finally:
        InteractiveShell.clear_instance()
