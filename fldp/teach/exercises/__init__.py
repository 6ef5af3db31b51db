"""Exercises for teaching: one check per exercise, with hints that name the common mistakes.  Each
paper has an exercises notebook, ``notebooks/<paper>/exercises.ipynb``, whose code cells set
``answer`` (the solution between the lines ``# BEGIN SOLUTION`` and ``# END SOLUTION``) and call
``exercises.check("<paper>.<name>", answer)``.  :func:`check` prints and returns a
:class:`Feedback`: ``not answered yet``, ``correct`` (within the tolerance the exercise states),
or ``not yet: <hint>``, the hint naming the mistake when the answer is one of the exercise's
known wrong answers, each recomputed with fldp from the mistaken method.  Why a plain module and
not otter-grader: the feedback has to *diagnose* (recompute every known mistaken method with fldp
and say which one produced the student's number), and the notebooks must run under papermill on
the project's kernel with no extra build step or dependency; from otter it borrows the solution
markers, which :func:`fldp.teach.exercises.build.student_version` strips.  The exercises
themselves (settings, solutions, known mistakes) live in one module per paper: :mod:`.wei2020`,
:mod:`.zhou`, :mod:`.li2021`, :mod:`.adaptive_noise`.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

from fldp.teach.exercises.core import (CORRECT, NOT_ANSWERED, NOT_YET, PAPERS, STATUSES, BadAnswer, Choice, Exercise,
                                       Feedback, Integer, Mistake, Number, execution_count)
from fldp.teach.exercises.hints import HELPS, helps_with_signatures, install_keyword_hints, keyword_hint, signature

__all__ = ["BadAnswer", "Choice", "Exercise", "Feedback", "Integer", "Mistake", "Number", "PAPERS",
           "NOT_ANSWERED", "CORRECT", "NOT_YET", "STATUSES", "all_exercises", "check", "get", "HELPS",
           "helps_with_signatures", "install_keyword_hints", "keyword_hint", "signature"]


def _registry() -> Dict[str, Exercise]:
    if not _REGISTRY:
        from fldp.teach.exercises import adaptive_noise, li2021, wei2020, zhou

        for module in (wei2020, zhou, li2021, adaptive_noise):
            for ex in module.EXERCISES:
                if ex.id in _REGISTRY:
                    raise RuntimeError(f"exercise id {ex.id!r} is defined twice")
                _REGISTRY[ex.id] = ex
    return _REGISTRY


_REGISTRY: Dict[str, Exercise] = {}


def all_exercises(paper: Optional[str] = None) -> Sequence[Exercise]:
    """Every exercise (of one paper), in the order of the notebooks."""
    found = list(_registry().values())
    return found if paper is None else [ex for ex in found if ex.paper == paper]


def get(exercise_id: str) -> Exercise:
    """The exercise with this id; ValueError listing the ids when there is none."""
    reg = _registry()
    if exercise_id not in reg:
        raise ValueError(f"no exercise {exercise_id!r}; the exercises are: {', '.join(reg)}")
    return reg[exercise_id]


def check(exercise_id: str, answer: Any, *, quiet: bool = False) -> Feedback:
    """Check ``answer`` to exercise ``exercise_id``: print the verdict (unless ``quiet``) and
    return it as a :class:`Feedback` ("not answered yet", "correct", or "not yet: <hint>").

    An exercises notebook's code cell reads::

        answer = ...
        # BEGIN SOLUTION
        answer = th.sigma_uplink(C=C, m=m, eps=eps, L=L, delta=delta)
        # END SOLUTION
        exercises.check("wei2020.classic_sigma", answer)

    The three statuses:

    * ``not answered yet``: the answer is still ``...`` (or None); nothing is raised;
    * ``correct``: the answer is within the tolerance the exercise states (its markdown says it;
      :attr:`Exercise.tolerance` is the same text);
    * ``not yet: <hint>``: when the answer is one of the exercise's known wrong answers, the hint
      names the mistake ("this sigma composes L = 1 release; the server sees T = 25 uploads").
      Each known wrong answer is *recomputed with fldp from the mistaken method* (the accountant
      asked for one release instead of T, the classic constant used at eps = 4, ...), so the
      diagnosis follows the package's formulas; any other wrong answer gets the exercise's
      general hint (which fldp functions solve it).
    """
    ex = get(exercise_id)
    if answer is ... or answer is None:
        fb = Feedback(ex.id, NOT_ANSWERED, f"{ex.id}: {NOT_ANSWERED} (replace ... with your answer)")
    else:
        try:
            parsed = ex.kind.parse(answer)
        except BadAnswer as err:
            fb = Feedback(ex.id, NOT_YET, f"{ex.id}: {NOT_YET}: {err}")
        else:
            if ex.kind.close(parsed, ex.expected()):
                within = f" (tolerance: {ex.tolerance})" if isinstance(ex.kind, Number) else ""
                fb = Feedback(ex.id, CORRECT, f"{ex.id}: {CORRECT}: {ex.kind.show(parsed)}{within}")
            else:
                mistake = ex.diagnose(parsed)
                hint = ex._format(mistake.hint if mistake else ex.hint, ex.kind.show(parsed))
                fb = Feedback(ex.id, NOT_YET, f"{ex.id}: {NOT_YET}: {hint}", mistake.key if mistake else None)
    if not quiet:
        print(fb.message)
        fb._printed_in[0] = execution_count()
    return fb




install_keyword_hints()
