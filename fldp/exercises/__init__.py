"""Exercises for teaching: one check per exercise, with hints that name the common mistakes.

Each paper has an exercises notebook, ``notebooks/<paper>/exercises.ipynb``, whose code cells
read::

    answer = ...
    # BEGIN SOLUTION
    answer = th.sigma_uplink(C=C, m=m, eps=eps, L=L, delta=delta)
    # END SOLUTION
    exercises.check("wei2020.classic_sigma", answer)

:func:`check` prints and returns a :class:`Feedback` with one of three statuses:

* ``not answered yet``: the answer is still ``...`` (or None); nothing is raised;
* ``correct``: the answer is within the tolerance the exercise states (its markdown says it;
  :attr:`Exercise.tolerance` is the same text);
* ``not yet: <hint>``: when the answer is one of the exercise's known wrong answers, the hint
  names the mistake ("this sigma composes L = 1 release; the server sees T = 25 uploads").
  Each known wrong answer is *recomputed with fldp from the mistaken method* (the accountant
  asked for one release instead of T, the classic constant used at eps = 4, ...), so the
  diagnosis follows the package's formulas; any other wrong answer gets the exercise's
  general hint (which fldp functions solve it).

**Why a plain module and not otter-grader.**  otter's tests are static assertions that report
pass or fail (a hidden test can print a message, but it sees only the answer, not how it was
made); here the feedback has to *diagnose*: recompute every known mistaken method with fldp and
say which one produced the student's number, with the exercise's own numbers in the hint.  That
is code over the package, tested like the rest of it (``tests/test_exercises.py`` feeds every
known wrong answer and asserts its hint).  And the notebooks must run under papermill in CI on
the project's kernel with no extra build step or dependency: otter's ``assign`` would be a
second notebook format and a build before every test run.  From otter we borrow its convention
for solutions: the committed notebook is the instructor's master, solutions sit between the
lines ``# BEGIN SOLUTION`` and ``# END SOLUTION`` (markdown: ``<!-- BEGIN SOLUTION -->`` and
``<!-- END SOLUTION -->``), and :func:`fldp.exercises.build.student_version` strips them
(``fldp exercises`` builds every student notebook; ``fldp exercises --solutions`` executes the
masters and checks that every solution is correct, as ``otter assign`` does).

The exercises themselves (settings, solutions, known mistakes) live in one module per paper:
:mod:`.wei2020`, :mod:`.zhou`, :mod:`.li2021`, :mod:`.adaptive_noise`.
"""
from __future__ import annotations

import inspect
import math
import numbers
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

NOT_ANSWERED, CORRECT, NOT_YET = "not answered yet", "correct", "not yet"
#: The three statuses of a :class:`Feedback`, in order: not answered yet, correct, not yet.
STATUSES = (NOT_ANSWERED, CORRECT, NOT_YET)
#: The papers with an exercises notebook, in the order of the book.
PAPERS = ("wei2020", "zhou", "li2021", "adaptive_noise")


class BadAnswer(ValueError):
    """The answer has the wrong form (a string where a number is asked, ...)."""


# ----------------------------------------------------------------------------- answers
def _real(answer: Any) -> float:
    """A real number from an int, float, numpy scalar, 0-d array or 0-d tensor."""
    if isinstance(answer, (bool, str, bytes)) or answer is None:
        raise BadAnswer(f"give one number (got {answer!r})")
    if hasattr(answer, "item") and getattr(answer, "ndim", 0) == 0:  # numpy / torch scalars
        answer = answer.item()
    if isinstance(answer, numbers.Real) and not isinstance(answer, bool):
        value = float(answer)
        if not math.isfinite(value):
            raise BadAnswer(f"give a finite number (got {value!r})")
        return value
    shape = getattr(answer, "shape", None)
    size = len(answer) if hasattr(answer, "__len__") else None
    what = f"shape {tuple(shape)}" if shape is not None else (f"{size} items" if size is not None else type(answer).__name__)
    raise BadAnswer(f"give one number (got {type(answer).__name__} with {what})")


@dataclass(frozen=True)
class Number:
    """A real answer, correct within ``rel`` (relative) or ``abs`` (absolute), whichever is larger;
    ``text`` replaces the generated description of the tolerance."""

    rel: float = 0.0
    abs: float = 0.0
    text: str = ""

    def parse(self, answer: Any) -> float:
        return _real(answer)

    def close(self, answer: float, target: Any) -> bool:
        return math.isclose(answer, float(target), rel_tol=self.rel, abs_tol=self.abs)

    def describe(self) -> str:
        if self.text:
            return self.text
        parts = []
        if self.rel:
            parts.append(f"{self.rel * 100:g} % (relative)")
        if self.abs:
            parts.append(f"{self.abs:g} (absolute)")
        return "within " + " or ".join(parts) if parts else "exact"

    def show(self, value: Any) -> str:
        return f"{float(value):.6g}"


@dataclass(frozen=True)
class Integer:
    """An integer answer (a whole float such as 15.0 counts), correct only if equal."""

    def parse(self, answer: Any) -> float:
        value = _real(answer)
        if value != int(value):
            raise BadAnswer(f"give a whole number (got {value!r})")
        return float(int(value))

    def close(self, answer: float, target: Any) -> bool:
        return answer == float(target)

    def describe(self) -> str:
        return "exact (a whole number)"

    def show(self, value: Any) -> str:
        return f"{int(value)}"


@dataclass(frozen=True)
class Choice:
    """One letter of ``options`` ("b", "(b)", "B)" all read as "b")."""

    options: Tuple[str, ...]

    def parse(self, answer: Any) -> str:
        text = answer.strip().strip("().").strip().lower() if isinstance(answer, str) else None
        if text not in self.options:
            listed = ", ".join(f'"{o}"' for o in self.options)
            raise BadAnswer(f"answer with one letter: {listed} (got {answer!r})")
        return text

    def close(self, answer: str, target: Any) -> bool:
        return answer == target

    def describe(self) -> str:
        return "one letter"

    def show(self, value: Any) -> str:
        return f"({value})"


Kind = Any  # Number | Integer | Choice


# ----------------------------------------------------------------------------- exercises
@dataclass(frozen=True)
class Mistake:
    """A known wrong answer and the hint that names it.

    ``value``: the wrong answer (a zero-argument callable computing it with fldp from the
    mistaken method, or a constant; a letter for multiple choice), matched with the exercise's
    tolerance; or ``when``: a predicate on the parsed answer (e.g. a range of K), with
    ``example`` one answer it matches (a constant or a zero-argument callable).  ``hint`` may use ``{answer}`` and the exercise's facts.
    """

    key: str
    hint: str
    value: Any = None
    when: Optional[Callable[[Any], bool]] = None
    example: Any = None

    def wrong_answer(self) -> Any:
        """The answer this mistake produces (what the tests feed to :func:`check`)."""
        made = self.example if self.when is not None else self.value
        return made() if callable(made) else made


@dataclass(frozen=True)
class Exercise:
    """One exercise: its answer's form, its solution with fldp, its known mistakes.

    ``solve()`` computes the correct answer with fldp (the notebook's solution cell does the
    same through the package's public functions); ``facts()`` the numbers the hints quote.
    """

    id: str
    title: str
    kind: Kind
    solve: Callable[[], Any]
    mistakes: Tuple[Mistake, ...]
    hint: str
    facts: Callable[[], Dict[str, Any]] = field(default=lambda: {})

    @property
    def paper(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def tolerance(self) -> str:
        """The tolerance as the exercise's text states it, e.g. "within 1 % (relative)"."""
        return self.kind.describe()

    def expected(self) -> Any:
        """The correct answer (computed once)."""
        return _cached(self.id, "expected", self.solve)

    def known_facts(self) -> Dict[str, Any]:
        return _cached(self.id, "facts", self.facts)

    def _format(self, text: str, answer: Any) -> str:
        return text.format(answer=answer, **self.known_facts())

    def diagnose(self, answer: Any) -> Optional[Mistake]:
        """The first known mistake the (parsed) answer matches, or None."""
        for m in self.mistakes:
            if m.when is not None:
                if m.when(answer):
                    return m
            elif self.kind.close(answer, _cached(self.id, f"mistake:{m.key}", m.wrong_answer)):
                return m
        return None


_CACHE: Dict[Tuple[str, str], Any] = {}


def _cached(exercise_id: str, what: str, fn: Callable[[], Any]) -> Any:
    key = (exercise_id, what)
    if key not in _CACHE:
        _CACHE[key] = fn()
    return _CACHE[key]


# ----------------------------------------------------------------------------- feedback
def _execution_count() -> Optional[int]:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency (ipykernel)
        return None
    shell = get_ipython()
    return None if shell is None else getattr(shell, "execution_count", None)


@dataclass(frozen=True)
class Feedback:
    """What :func:`check` said: ``status`` is one of :data:`STATUSES`, ``mistake`` the key of
    the known mistake the answer matched (None otherwise), ``message`` the line printed."""

    exercise: str
    status: str
    message: str
    mistake: Optional[str] = None
    _printed_in: list = field(default_factory=lambda: [None], repr=False, compare=False)

    @property
    def correct(self) -> bool:
        return self.status == CORRECT

    def __str__(self) -> str:
        return self.message

    def _ipython_display_(self) -> None:
        # check() has printed the message already; as the last expression of that same cell
        # the returned Feedback is not shown twice (shown in a later cell, it prints again).
        count = _execution_count()
        if count is None or count != self._printed_in[0]:
            print(self.message)


def _registry() -> Dict[str, Exercise]:
    if not _REGISTRY:
        from . import adaptive_noise, li2021, wei2020, zhou

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
    return it as a :class:`Feedback` ("not answered yet", "correct", or "not yet: <hint>")."""
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
        fb._printed_in[0] = _execution_count()
    return fb


# ----------------------------------------------------------------------------- signatures
def signature(func: Callable) -> str:
    """``name(*, a, b=1)``: how to call ``func``, without annotations (the "Helps" lines show it).

    fldp's formulas take keyword arguments only, so a student's first try ``th.gaussian_c(delta)``
    raises a TypeError; the signature beside the name says how to call it."""
    params = []
    star = False
    for p in inspect.signature(func).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        elif p.kind is p.VAR_POSITIONAL:
            star = True
        text = ("*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else "") + p.name
        if p.default is not p.empty:
            text += f"={p.default!r}" if not callable(p.default) else f"={getattr(p.default, '__name__', '...')}"
        params.append(text)
    return f"{func.__name__}({', '.join(params)})"


HELPS = "**Helps:**"
_REFERENCE = re.compile(r"`(\w+)\.(\w+)(?:\([^`]*\))?`(?!'s)")


def helps_with_signatures(text: str, namespace: Dict[str, Any]) -> str:
    """``text`` with each reference to a function after "**Helps:**", such as `` `th.sigma_uplink` ``,
    written with its signature (`` `th.sigma_uplink(*, C, m, eps, L=1, ...)` ``); ``namespace`` maps
    the notebook's import names (``th``, ``nbafl``, ...) to modules.  A reference followed by 's
    (its docstring) is left as it is.  tests/test_exercises.py checks that every notebook's "Helps"
    lines are what this returns, so a signature that changes is caught."""
    out = []
    for line in text.split("\n"):
        if HELPS in line:
            head, _, tail = line.partition(HELPS)

            def sub(m: re.Match) -> str:
                module = namespace.get(m.group(1))
                func = getattr(module, m.group(2), None) if module is not None else None
                return f"`{m.group(1)}.{signature(func)}`" if inspect.isfunction(func) else m.group(0)
            line = head + HELPS + _REFERENCE.sub(sub, tail)
        out.append(line)
    return "\n".join(out)


_POSITIONAL = re.compile(r"^(\w+)\(\) takes (\d+) positional arguments? but (\d+).* given")
_MISSING_KW = re.compile(r"^(\w+)\(\) missing \d+ required keyword-only arguments?: (.+)$")


def _fldp_function(name: str) -> Optional[Callable]:
    """The fldp function called ``name`` (searched in the imported fldp modules), or None."""
    for modname, module in sorted(sys.modules.items()):
        if modname == "fldp" or modname.startswith("fldp."):
            obj = getattr(module, name, None)
            if inspect.isfunction(obj) and (obj.__module__ or "").startswith("fldp"):
                return obj
    return None


def keyword_hint(exc: BaseException) -> Optional[str]:
    """A hint for a TypeError from calling a keyword-only fldp function positionally (or without
    a required keyword), naming the keywords; None for any other exception."""
    if not isinstance(exc, TypeError):
        return None
    text = str(exc)
    found = _POSITIONAL.match(text) or _MISSING_KW.match(text)
    func = _fldp_function(found.group(1)) if found else None
    if func is None:
        return None
    keywords = [p.name for p in inspect.signature(func).parameters.values()
                if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    example = ", ".join(f"{k}=..." for k in keywords) or "name=value"
    if found.re is _POSITIONAL:
        return (f"hint: {func.__name__} takes its arguments by name only: {signature(func)}. "
                f"Call it as {func.__name__}({example}).")
    return f"hint: {func.__name__} needs {found.group(2)} by name: {signature(func)}."


def _show_with_hint(shell, etype, value, tb, tb_offset=None):
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    hint = keyword_hint(value)
    if hint:
        print(hint)


def install_keyword_hints() -> bool:
    """In an IPython kernel, print :func:`keyword_hint` under the traceback of such a TypeError
    (``import fldp.exercises`` does it).  False outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    shell.set_custom_exc((TypeError,), _show_with_hint)
    return True


install_keyword_hints()

from .build import student_version  # noqa: E402  (the builder, re-exported: fldp.exercises.student_version)

__all__ = ["BadAnswer", "Choice", "Exercise", "Feedback", "Integer", "Mistake", "Number", "PAPERS",
           "NOT_ANSWERED", "CORRECT", "NOT_YET", "STATUSES", "all_exercises", "check", "get", "HELPS", "helps_with_signatures", "install_keyword_hints",
           "keyword_hint", "signature", "student_version"]
