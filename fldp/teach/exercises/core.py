"""The exercises' parts: answers and their tolerances (:class:`Number`, :class:`Integer`,
:class:`Choice`), an exercise with its known mistakes (:class:`Exercise`, :class:`Mistake`) and
what a check says (:class:`Feedback`); :mod:`fldp.teach.exercises` holds the registry and
:func:`~fldp.teach.exercises.check`."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Tuple

__all__ = ["NOT_ANSWERED", "CORRECT", "NOT_YET", "STATUSES", "PAPERS", "BadAnswer", "Number", "Integer", "Choice",
           "Mistake", "Exercise", "cached", "execution_count", "Feedback"]

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
        return cached(self.id, "expected", self.solve)

    def known_facts(self) -> Dict[str, Any]:
        return cached(self.id, "facts", self.facts)

    def _format(self, text: str, answer: Any) -> str:
        return text.format(answer=answer, **self.known_facts())

    def diagnose(self, answer: Any) -> Optional[Mistake]:
        """The first known mistake the (parsed) answer matches, or None."""
        for m in self.mistakes:
            if m.when is not None:
                if m.when(answer):
                    return m
            elif self.kind.close(answer, cached(self.id, f"mistake:{m.key}", m.wrong_answer)):
                return m
        return None


_CACHE: Dict[Tuple[str, str], Any] = {}


def cached(exercise_id: str, what: str, fn: Callable[[], Any]) -> Any:
    key = (exercise_id, what)
    if key not in _CACHE:
        _CACHE[key] = fn()
    return _CACHE[key]


# ----------------------------------------------------------------------------- feedback
def execution_count() -> Optional[int]:
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
        count = execution_count()
        if count is None or count != self._printed_in[0]:
            print(self.message)


