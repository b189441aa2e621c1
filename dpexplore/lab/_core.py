"""Self-checking exercises: a registry of checks and the message a student sees.

A notebook's answer cell (tagged ``exercise``) sets a variable; the next cell (tagged
``self-check``) calls ``lab.check("NN.k", answer)``, which displays one short message:

- ``✓ Right: <why>`` when the check accepts the answer,
- ``✗ Not yet: <hint>`` when it does not (or when the answer cannot be read),
- ``Not answered yet: <what to do>`` when the answer is still ``None`` or ``...``.

The message never contains the expected answer, and the same answer always gives the same text
(the instructor notebooks' self-check outputs are compared by nbval). Checks are registered with
:func:`exercise` in one module per notebook (``nb00`` … ``nb09``); each registration carries
``wrong`` and ``right`` example answers that the test suite feeds through the check. The
convention and why it uses nbgrader's solution markers are explained in ``notebooks/README.md``.
"""
from __future__ import annotations

import html
import math
import numbers
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["CheckResult", "Exercise", "EXERCISES", "check", "exercise"]

_ID = re.compile(r"^\d{2}\.\d{1,2}$")
_DEFAULT_UNANSWERED = "replace None with your answer in the exercise cell above, run it, then run this cell."

_registry: dict[str, "Exercise"] = {}
EXERCISES: Mapping[str, "Exercise"] = MappingProxyType(_registry)
"""Every registered exercise by id ("01.2"), read-only."""


@dataclass(frozen=True)
class Exercise:
    """One registered check: ``verify(answer) -> bool`` plus the texts a student may see."""

    exercise_id: str
    verify: Callable[[Any], bool]
    hint: str
    why: str
    wrong: tuple
    right: tuple
    todo: str = _DEFAULT_UNANSWERED


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


def exercise(exercise_id: str, *, hint: str, why: str, wrong: Sequence, right: Sequence,
             todo: str = _DEFAULT_UNANSWERED) -> Callable[[Callable[[Any], bool]], Callable[[Any], bool]]:
    """Register the decorated ``verify(answer) -> bool`` as the check of ``exercise_id``.

    ``hint`` is shown when the answer is not yet right, ``why`` (one sentence) when it is;
    ``wrong`` (at least two) and ``right`` (at least one) are example answers the tests feed
    through the check. ``todo`` says what to do while the answer is still ``None``.
    """
    if not isinstance(exercise_id, str) or not _ID.match(exercise_id):
        raise ValueError(f"exercise_id must look like 'NN.k' (notebook number, exercise number), "
                         f"got {exercise_id!r}")
    if exercise_id in _registry:
        raise ValueError(f"exercise {exercise_id!r} is registered twice: give each exercise its own id")
    for name, text in (("hint", hint), ("why", why), ("todo", todo)):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"exercise {exercise_id!r}: {name} must be a non-empty sentence")
    wrong, right = tuple(wrong), tuple(right)
    if len(wrong) < 2 or len(right) < 1:
        raise ValueError(f"exercise {exercise_id!r}: give at least two wrong and one right example "
                         f"answer (got {len(wrong)} wrong, {len(right)} right)")

    def register(verify: Callable[[Any], bool]) -> Callable[[Any], bool]:
        _registry[exercise_id] = Exercise(exercise_id, verify, hint.strip(), why.strip(), wrong, right,
                                          todo.strip())
        return verify

    return register


def is_unanswered(answer: Any) -> bool:
    """True for the placeholders an untouched exercise cell leaves: ``None`` and ``...``."""
    return answer is None or answer is Ellipsis


def evaluate(exercise_id: str, answer: Any) -> CheckResult:
    """Decide ``answer`` for ``exercise_id`` without displaying anything.

    A check that raises on an answer of the wrong kind (text where a number is expected, a
    function that fails) counts as "not yet": a student's mistake never stops the notebook.
    """
    ex = _lookup(exercise_id)
    if is_unanswered(answer):
        return CheckResult(ex.exercise_id, "not answered", f"Not answered yet: {ex.todo}")
    try:
        ok = bool(ex.verify(answer))
    except Exception:  # noqa: BLE001 -- any failure of the student's answer means "not yet"
        ok = False
    if ok:
        return CheckResult(ex.exercise_id, "right", f"✓ Right: {ex.why}")
    return CheckResult(ex.exercise_id, "not yet", f"✗ Not yet: {ex.hint}")


def check(exercise_id: str, answer: Any) -> CheckResult:
    """Check ``answer`` for exercise ``exercise_id``, display the verdict and return it.

    The verdict is "✓ Right: …", "✗ Not yet: <hint>" or "Not answered yet: …"; it never shows the
    expected answer. Returns a :class:`CheckResult`, truthy iff the answer is right.
    """
    result = evaluate(exercise_id, answer)
    _display(result)
    return result


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
    body = html.escape(result.message)
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

def as_number(answer: Any) -> float:
    """The answer as a float (a number, a numpy scalar or a numeric string); raise otherwise."""
    if isinstance(answer, bool):
        raise TypeError("a truth value is not a number")
    if isinstance(answer, str):
        return float(answer.strip().replace(",", "."))
    if isinstance(answer, numbers.Real):
        return float(answer)
    return float(answer)  # numpy 0-d arrays and the like; raises for anything else


def close(answer: Any, expected: float, *, rel: float = 0.01, abs_tol: float = 1e-9) -> bool:
    """True when ``answer`` is a finite number within ``rel`` (1 %) of ``expected``."""
    value = as_number(answer)
    return math.isfinite(value) and math.isclose(value, float(expected), rel_tol=rel, abs_tol=abs_tol)


def _normalise(text: Any) -> str:
    return re.sub(r"[\s_\-]+", " ", str(text)).strip().strip(".()").strip().lower()


def choice(answer: Any, *accepted: str) -> bool:
    """True when ``answer`` names one of ``accepted`` (a letter or a label), ignoring case, spaces,
    hyphens, underscores and a trailing period or brackets: ``"b"``, ``" B "``, ``"(b)"``."""
    if not isinstance(answer, str):
        return False
    given = _normalise(answer)
    return bool(given) and any(given == _normalise(a) for a in accepted)


def numbers_close(answer: Any, expected: Iterable[float], *, rel: float = 0.01) -> bool:
    """True when ``answer`` is a sequence of numbers matching ``expected`` element-wise."""
    got, want = list(answer), list(expected)
    return len(got) == len(want) and all(close(g, w, rel=rel) for g, w in zip(got, want))


# the private spellings some check modules use
_close, _choice, _as_number = close, choice, as_number
