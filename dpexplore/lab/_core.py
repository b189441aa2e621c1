"""Self-checking exercises: a registry of checks and the message a student sees.

A notebook's answer cell (tagged ``exercise``) sets a variable; the next cell (tagged
``self-check``) calls ``lab.check("NN.k")``, which reads that variable from the notebook and
displays one short message:

- ``✓ Right: <why>``: the worked explanation, filled in with the values the check computes;
- ``✗ Not yet: <reason> <hint>``: the first hint, and one more for each different wrong answer;
- ``Not answered yet: <what to do>``: the variable is still ``None`` (or ``...``), or the
  exercise cell has not run yet.

The same answer always gets the same verdict. Nothing in the installed package hands out an
answer by reading an attribute or a string: checks compute their expected values when they run
(from the library, the stored results or the exercise's givens), an explanation that states the
answer is a template filled in only after a right answer, the right option of a question with
nothing to compute is kept as a salted fingerprint (:func:`fingerprint`), and the example answers the test
suite feeds through every check live in ``tests/lab_examples.py``. Checks are registered with
:func:`exercise` in one module per notebook (``nb00`` … ``nb14``). The convention and why it uses
nbgrader's solution markers are explained in ``notebooks/README.md``.
"""
from __future__ import annotations

import hashlib
import html
import math
import numbers
import re
import sys
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["CheckResult", "Exercise", "EXERCISES", "Verdict", "check", "evaluate", "exercise", "right_if",
           "not_yet"]

_ID = re.compile(r"^\d{2}\.\d{1,2}$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")
_FROM_NOTEBOOK = object()   # check() without an answer: read the exercise's variable from the caller

_registry: dict[str, "Exercise"] = {}
EXERCISES: Mapping[str, "Exercise"] = MappingProxyType(_registry)
"""Every registered exercise by id ("01.2"), read-only."""


@dataclass(frozen=True)
class Verdict:
    """What a check decides about one answer: right or not, the values that fill the exercise's
    ``why`` template (right answers only) and, when not right, a reason shown before the hints."""

    right: bool
    values: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""


def right_if(ok: bool, **values: Any) -> Verdict:
    """A verdict that is right when ``ok``; ``values`` fill the ``why`` template."""
    return Verdict(bool(ok), MappingProxyType(dict(values)) if ok else MappingProxyType({}))


def not_yet(reason: str) -> Verdict:
    """A "not yet" verdict with a reason (what is wrong with this answer), shown before the hints."""
    return Verdict(False, reason=reason.strip())


@dataclass(frozen=True)
class Exercise:
    """One registered check: ``verify(answer) -> Verdict | bool`` plus the texts a student may see."""

    exercise_id: str
    verify: Callable[[Any], "Verdict | bool"]
    answer: str
    hints: tuple[str, ...]
    why: str
    todo: str


@dataclass(frozen=True)
class CheckResult:
    """What :func:`check` decided: truthy iff the answer is right.

    ``status`` is ``"right"``, ``"not yet"`` or ``"not answered"``; ``message`` is the text shown.
    In Jupyter the object itself displays nothing (``check`` has already shown the message), so a
    self-check cell ending in ``lab.check(...)`` shows the message once.
    """

    exercise_id: str
    status: str
    message: str = field(repr=False)

    def __bool__(self) -> bool:
        return self.status == "right"

    def _ipython_display_(self) -> None:
        """Silent: :func:`check` displayed the message already."""

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return _mimebundle(self)


def exercise(exercise_id: str, *, answer: str, hints: Sequence[str], why: str,
             todo: str | None = None) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Register the decorated ``verify(answer) -> Verdict | bool`` as the check of ``exercise_id``.

    ``answer`` names the variable the exercise cell sets (``lab.check(id)`` reads it); ``hints``
    go from a general nudge to the method (one more is shown after each different wrong answer);
    ``why`` is shown after a right answer, a :meth:`str.format` template filled with the
    verdict's values (:func:`right_if`), so that no answer sits in the text; ``todo`` says what to
    do while the answer is missing (by default: replace None in the exercise cell and run it).
    """
    if not isinstance(exercise_id, str) or not _ID.match(exercise_id):
        raise ValueError(f"exercise_id must look like 'NN.k' (notebook number, exercise number), "
                         f"got {exercise_id!r}")
    if exercise_id in _registry:
        raise ValueError(f"exercise {exercise_id!r} is registered twice: give each exercise its own id")
    if not isinstance(answer, str) or not _NAME.match(answer):
        raise ValueError(f"exercise {exercise_id!r}: answer must name the variable the exercise cell sets")
    hints = (hints,) if isinstance(hints, str) else tuple(hints)
    if todo is None:
        todo = f"replace None with your answer in the exercise cell above ({answer} = …), run it, then run this cell."
    for name, text in [("why", why), ("todo", todo)] + [("hints", h) for h in hints]:
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"exercise {exercise_id!r}: {name} must be non-empty sentences")
    if not hints:
        raise ValueError(f"exercise {exercise_id!r}: give at least one hint")

    def register(verify: Callable[[Any], Any]) -> Callable[[Any], Any]:
        _registry[exercise_id] = Exercise(exercise_id, verify, answer, tuple(h.strip() for h in hints),
                                          why.strip(), todo.strip())
        return verify

    return register


def is_unanswered(answer: Any) -> bool:
    """True for the placeholders an untouched exercise cell leaves: ``None`` and ``...``."""
    return answer is None or answer is Ellipsis


def evaluate(exercise_id: str, answer: Any, *, attempt: int = 1) -> CheckResult:
    """Decide ``answer`` for ``exercise_id`` without displaying anything.

    ``attempt`` is how many different wrong answers the student has given, this one included: a
    "not yet" shows that many hints. A check that raises on an answer of the wrong kind (text
    where a number is expected, a function that fails) counts as "not yet": a student's mistake
    never stops the notebook.
    """
    ex = _lookup(exercise_id)
    if is_unanswered(answer):
        return CheckResult(ex.exercise_id, "not answered", f"Not answered yet: {ex.todo}")
    try:
        verdict = ex.verify(answer)
    except Exception:  # noqa: BLE001 -- any failure of the student's answer means "not yet"
        verdict = False
    if not isinstance(verdict, Verdict):
        verdict = Verdict(bool(verdict))
    if verdict.right:
        return CheckResult(ex.exercise_id, "right", f"✓ Right: {ex.why.format(**verdict.values)}")
    return CheckResult(ex.exercise_id, "not yet", _not_yet_message(ex, verdict.reason, attempt))


def _not_yet_message(ex: Exercise, reason: str, attempt: int) -> str:
    shown = max(1, min(int(attempt), len(ex.hints)))
    lines = [f"✗ Not yet: {reason + ' ' if reason else ''}{ex.hints[0]}"]
    lines += [f"Hint {i + 1}: {ex.hints[i]}" for i in range(1, shown)]
    if shown < len(ex.hints):
        lines.append(f"(A different answer shows hint {shown + 1} of {len(ex.hints)}.)")
    return "\n".join(lines)


_wrong_answers: dict[str, list] = {}
"""The different wrong answers given to each exercise in this session (their :func:`_answer_key`)."""


def check(exercise_id: str, answer: Any = _FROM_NOTEBOOK) -> CheckResult:
    """Check the answer to exercise ``exercise_id``, display the verdict and return it.

    Without ``answer``, the variable the exercise cell sets (its name is registered with the
    exercise) is read from the caller's namespace: a check run before its exercise cell says
    "Not answered yet". The verdict is "✓ Right: …", "✗ Not yet: <hints>" (one more hint for each
    different wrong answer) or "Not answered yet: …"; it never shows the expected answer.
    Returns a :class:`CheckResult`, truthy iff the answer is right.
    """
    ex = _lookup(exercise_id)
    if answer is _FROM_NOTEBOOK:
        caller = sys._getframe(1)
        answer = caller.f_locals.get(ex.answer, caller.f_globals.get(ex.answer))
    seen = _wrong_answers.setdefault(ex.exercise_id, [])
    key = _answer_key(answer)
    result = evaluate(exercise_id, answer, attempt=len(seen) + (key not in seen))
    if result.status == "not yet" and key not in seen:
        seen.append(key)
    _display(result)
    return result


def _answer_key(answer: Any) -> Any:
    """What makes two answers "the same attempt": a function's code, any other value's text."""
    code = getattr(answer, "__code__", None)
    if code is not None:
        return ("code", code.co_code, repr(code.co_consts), code.co_names)
    return ("value", type(answer).__name__, repr(answer)[:500])


def _lookup(exercise_id: str) -> Exercise:
    from . import load_all
    load_all()
    try:
        return _registry[exercise_id]
    except KeyError:
        raise ValueError(f"no exercise {exercise_id!r} is registered; registered ids: "
                         f"{', '.join(sorted(_registry)) or 'none'}") from None


_COLOURS = {"right": ("#0b6b2e", "#e6f4ea"), "not yet": ("#8a3c00", "#fdf0e6"),
            "not answered": ("#33415c", "#eef1f6")}


def _mimebundle(result: CheckResult) -> dict:
    # text first: the verdict is in the words (✓ / ✗ / "Not answered"), colour is a second cue
    fg, bg = _COLOURS[result.status]
    body = html.escape(result.message).replace("\n", "<br>")
    return {"text/plain": result.message,
            "text/html": (f'<div class="dpexplore-check" role="status" style="color:{fg};background:{bg};'
                          f'border-left:4px solid {fg};padding:4px 8px">{body}</div>')}


def _display(result: CheckResult) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # plain Python
        print(result.message)
        return
    if get_ipython() is None:
        print(result.message)
    else:
        display(_mimebundle(result), raw=True)


# --- helpers for writing checks -------------------------------------------------------------
_THOUSANDS = re.compile(r"^[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d+)?$")


def as_number(answer: Any) -> float:
    """The answer as a float: a number, a numpy scalar, or a text such as ``"0.25"``, ``"0,25"``,
    ``"10,000"`` or ``"25%"`` (a percentage, read as 0.25); raise otherwise."""
    if isinstance(answer, bool):
        raise TypeError("a truth value is not a number")
    if isinstance(answer, str):
        text = answer.strip().replace(" ", "")
        text = text.replace(",", "") if _THOUSANDS.match(text.rstrip("%")) else text.replace(",", ".")
        if text.endswith("%"):
            return float(text[:-1]) / 100
        return float(text)
    if isinstance(answer, numbers.Real):
        return float(answer)
    return float(answer)  # numpy 0-d arrays and the like; raises for anything else


def as_probability(answer: Any) -> float:
    """The answer as a probability: like :func:`as_number`, and a plain number above 1 (up to 100)
    is read as a percentage (``16.5`` is 16.5 %)."""
    value = as_number(answer)
    return value / 100 if 1 < value <= 100 else value


def close(answer: Any, expected: float, *, rel: float = 0.01, abs_tol: float = 1e-9) -> bool:
    """True when ``answer`` is a finite number within ``rel`` (1 %) of ``expected``, or
    ``expected`` rounded to two significant digits (0.16 for 0.1649): a fair written answer.

    >>> close(0.16, 0.1649), close("16.5%", 0.1649), close(0.17, 0.1649)
    (True, True, False)
    """
    value = as_number(answer)
    return math.isfinite(value) and (math.isclose(value, float(expected), rel_tol=rel, abs_tol=abs_tol)
                                     or _two_digits(value, float(expected)))


def _two_digits(value: float, expected: float) -> bool:
    if expected == 0 or not math.isfinite(expected):
        return False
    half_unit = 0.5 * 10 ** (math.floor(math.log10(abs(expected))) - 1)
    return abs(value - expected) <= half_unit * (1 + 1e-9)


def _normalise(text: Any) -> str:
    return re.sub(r"[\s_\-]+", " ", str(text)).strip().strip(".()").strip().lower()


def choice(answer: Any, *accepted: str) -> bool:
    """True when ``answer`` names one of ``accepted`` (a letter or a label), ignoring case, spaces,
    hyphens, underscores and a trailing period or brackets: ``"b"``, ``" B "``, ``"(b)"``."""
    if not isinstance(answer, str):
        return False
    given = _normalise(answer)
    return bool(given) and any(given == _normalise(a) for a in accepted)


def fingerprint(exercise_id: str, option: str) -> str:
    """A salted fingerprint of an option of exercise ``exercise_id``: how a question with nothing to
    compute keeps its right options without holding them as text (see :func:`right_option`).

    >>> right = [fingerprint("99.1", "b")]
    >>> right_option(" (B) ", "99.1", right, {"a": "ε", "b": "2ε"}), right_option("a", "99.1", right, {})
    ('2ε', None)
    """
    return hashlib.sha256(f"dpexplore lab {exercise_id}: {_normalise(option)}".encode()).hexdigest()[:24]


def right_option(answer: Any, exercise_id: str, fingerprints: Iterable[str],
                 options: Mapping[str, str]) -> str | None:
    """The option ``answer`` names (its text in ``options`` for a letter, else the answer itself)
    when its fingerprint is one of ``fingerprints``; None otherwise."""
    if not isinstance(answer, str) or not _normalise(answer):
        return None
    if fingerprint(exercise_id, answer) not in set(fingerprints):
        return None
    return options.get(_normalise(answer), answer.strip())


def write_function(signature: str) -> str:
    """The ``todo`` of an "implement" exercise whose cell defines ``signature``."""
    return f"write {signature} in the cell above (a def replacing the None), run it, then run this cell."


def numbers_close(answer: Any, expected: Iterable[float], *, rel: float = 0.01) -> bool:
    """True when ``answer`` is a sequence of numbers matching ``expected`` element-wise."""
    got, want = list(answer), list(expected)
    return len(got) == len(want) and all(close(g, w, rel=rel) for g, w in zip(got, want))
