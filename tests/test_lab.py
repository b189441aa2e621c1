"""The lab kit: self-checking exercises (``dpexplore.lab``) and the student / instructor versions.

Every registered check tells each of its wrong examples "not yet" with its first hint, each right
example "right" with its explanation filled in, and ``None`` (or a variable that is not set yet)
"not answered yet"; the example answers come from ``tests/lab_examples.py``, the answer key the
installed package does not hold. Every notebook has at least three exercises, each followed by a
registered self-check; the stored student notebooks hold no solution and their self-checks say
"Not answered yet"; the stored instructor notebooks say "Right" in every self-check (nbval re-runs
them: their self-check cells carry ``nbval-check-output``).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from _notebooks import NOTEBOOKS, SOURCES, versions
from lab_examples import EXAMPLES

from dpexplore import lab
from dpexplore.lab import _core

nbformat = pytest.importorskip("nbformat")
jupytext = pytest.importorskip("jupytext")

EXERCISE_IDS = sorted(lab.EXERCISES)
GRADED = ("01.3", "05.5", "06.3", "11.3", "12.2", "14.4")   # long checks: tests/test_lab_graders.py runs their answers


def _label(answer) -> str:
    return getattr(answer, "__name__", repr(answer))[:40]


def _examples(kind: int) -> list:
    return [pytest.param(i, a, id=f"{i}-{_label(a)}") for i in EXERCISE_IDS for a in EXAMPLES[i][kind]
            if i not in GRADED]


# --------------------------------------------------------------------------- every registered check
def test_every_exercise_has_examples_in_the_tests():
    assert sorted(EXAMPLES) == EXERCISE_IDS
    for exercise_id, (wrong, right) in EXAMPLES.items():
        assert len(wrong) >= 2 and len(right) >= 1, exercise_id


@pytest.mark.parametrize("exercise_id, answer", _examples(0))
def test_wrong_examples_are_told_not_yet_with_the_first_hint(exercise_id, answer):
    ex = lab.EXERCISES[exercise_id]
    result = lab.evaluate(exercise_id, answer)
    assert not result and result.status == "not yet", f"{exercise_id}: wrong answer {_label(answer)} accepted"
    assert result.message.startswith("✗ Not yet: ") and ex.hints[0] in result.message.splitlines()[0]


@pytest.mark.parametrize("exercise_id, answer", _examples(1))
def test_right_examples_are_told_right_with_the_explanation(exercise_id, answer):
    ex = lab.EXERCISES[exercise_id]
    result = lab.evaluate(exercise_id, answer)
    assert result and result.status == "right", f"{exercise_id}: right answer {_label(answer)} refused"
    verdict = ex.verify(answer)
    values = verdict.values if isinstance(verdict, lab.Verdict) else {}
    assert result.message == f"✓ Right: {ex.why.format(**values)}"
    assert "{" not in result.message


@pytest.mark.parametrize("exercise_id", EXERCISE_IDS)
def test_an_unanswered_exercise_is_told_what_to_do(exercise_id):
    for placeholder in (None, ...):
        result = lab.evaluate(exercise_id, placeholder)
        assert not result and result.status == "not answered"
        assert result.message.startswith("Not answered yet: ")


def _shown(value) -> set[str]:
    """How a number may be written in a sentence (3 or more characters: "10" matches too much)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return set()
    return {s for s in (f"{value:.3g}", f"{value:.4g}") if len(s) >= 3}


@pytest.mark.parametrize("exercise_id", EXERCISE_IDS)
def test_no_text_of_the_package_gives_the_answer_away(exercise_id):
    # the hints, the todo and the explanation's template: an answer shows only after a right answer
    ex = lab.EXERCISES[exercise_id]
    wrong, right = EXAMPLES[exercise_id]
    texts = {"hints": " ".join(ex.hints), "why": ex.why, "todo": ex.todo}
    for name, text in texts.items():
        if name == "hints" and any(s in text for w in wrong for s in _shown(w)):
            continue    # the hints list the options to choose from, wrong ones included
        for answer in right:
            for shown in _shown(answer):
                assert shown not in text, f"{exercise_id}: the {name} show the answer {shown}"


def test_the_installed_package_holds_no_example_answers():
    for ex in lab.EXERCISES.values():
        assert not hasattr(ex, "right") and not hasattr(ex, "wrong")
    sources = "\n".join(p.read_text() for p in Path(lab.__file__).parent.glob("*.py"))
    assert "right=[" not in sources and "wrong=[" not in sources
    assert not re.search(r"def _every_cell|def _public_class_counts|_length_weighted", sources)


@pytest.mark.parametrize("exercise_id", EXERCISE_IDS)
def test_the_verdict_is_deterministic(exercise_id):
    wrong, right = EXAMPLES[exercise_id]
    for answer in (wrong[0], right[0]):
        if exercise_id in GRADED and callable(answer):
            continue        # tests/test_lab_graders.py
        assert lab.evaluate(exercise_id, answer) == lab.evaluate(exercise_id, answer)


def test_every_exercise_belongs_to_a_notebook_module():
    for exercise_id, ex in lab.EXERCISES.items():
        module = ex.verify.__module__.rsplit(".", 1)[-1]
        assert module == f"nb{exercise_id[:2]}", f"{exercise_id} is registered in {module}"


# --------------------------------------------------------------------------- hints, one more per wrong answer
def test_each_different_wrong_answer_shows_one_more_hint(scratch_registry, capsys):
    @lab.exercise("99.4", answer="x", hints=("think.", "think harder.", "add them."), why="2 + 2 = {v}.")
    def four(answer):
        return lab.right_if(_core.close(answer, 4), v=4)

    first = lab.check("99.4", 3)
    assert first.message == "✗ Not yet: think.\n(A different answer shows hint 2 of 3.)"
    assert lab.check("99.4", 3).message == first.message          # the same answer: no new hint
    second = lab.check("99.4", 5)
    assert second.message.splitlines() == ["✗ Not yet: think.", "Hint 2: think harder.",
                                           "(A different answer shows hint 3 of 3.)"]
    lab.check("99.4", 6)
    assert lab.check("99.4", 7).message.splitlines()[-1] == "Hint 3: add them."
    assert lab.check("99.4", 4).message == "✓ Right: 2 + 2 = 4."
    assert "<br>" in second._repr_mimebundle_()["text/html"]
    capsys.readouterr()


def test_a_reason_comes_before_the_hints(scratch_registry):
    @lab.exercise("99.5", answer="x", hints="look again.", why="fine.")
    def never(answer):
        return lab.not_yet("the output has the wrong length.")

    assert lab.evaluate("99.5", 1).message == "✗ Not yet: the output has the wrong length. look again."


# --------------------------------------------------------------------------- the answer read from the notebook
def test_a_check_reads_the_answer_variable_and_says_not_answered_before_its_cell_ran(capsys):
    # no variable b_visits here yet: what a self-check cell run before its exercise cell sees
    assert lab.check("01.1").status == "not answered"
    b_visits = None   # noqa: F841 -- read by lab.check from this frame
    assert lab.check("01.1").status == "not answered"
    b_visits = 10     # noqa: F841
    assert lab.check("01.1").status == "right"
    assert capsys.readouterr().out.splitlines()[0].startswith("Not answered yet: ")


def _exercise_variables(source: Path) -> dict[str, str]:
    """The variable each exercise cell of ``source`` sets (its first assignment or def)."""
    cells = jupytext.read(source).cells
    found = {}
    for i, cell in enumerate(cells):
        if versions.EXERCISE in versions.tags(cell):
            exercise_id = versions.CHECK_CALL.findall(cells[i + 1].source)[0]
            first = ast.parse(versions.strip_solutions(cell.source)).body[0]
            found[exercise_id] = first.targets[0].id if isinstance(first, ast.Assign) else first.name
    return found


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_self_checks_read_the_answer_from_the_notebook(source):
    # lab.check("NN.k") cannot fail with a NameError when the exercise cell has not run
    for cell in jupytext.read(source).cells:
        if versions.SELF_CHECK in versions.tags(cell):
            assert re.fullmatch(r'lab\.check\("\d{2}\.\d{1,2}"\)', cell.source.strip()), cell.source


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_each_check_reads_the_variable_its_exercise_cell_sets(source):
    for exercise_id, name in _exercise_variables(source).items():
        assert lab.EXERCISES[exercise_id].answer == name, f"{source.name}: {exercise_id} sets {name}"


# --------------------------------------------------------------------------- the API itself
@pytest.fixture
def scratch_registry():
    """Register test exercises under ids 99.x and remove them afterwards."""
    before = set(_core._registry)
    yield
    for key in set(_core._registry) - before:
        del _core._registry[key]
        _core._wrong_answers.pop(key, None)


def test_check_shows_one_message_and_returns_a_truthy_result(scratch_registry, capsys):
    @lab.exercise("99.1", answer="total", hints="add the two numbers.", why="2 + 2 = {total}.")
    def four(answer):
        return lab.right_if(_core.close(answer, 4), total=4)

    right = lab.check("99.1", 4)
    assert capsys.readouterr().out == "✓ Right: 2 + 2 = 4.\n"      # plain Python: printed once
    assert right and bool(right) is True
    wrong = lab.check("99.1", 5)
    assert capsys.readouterr().out == "✗ Not yet: add the two numbers.\n" and not wrong
    assert "4" not in wrong.message
    assert right._ipython_display_() is None                          # silent: check() showed it
    bundle = right._repr_mimebundle_()
    assert bundle["text/plain"] == right.message and 'role="status"' in bundle["text/html"]


def test_an_answer_that_breaks_the_check_is_not_yet(scratch_registry):
    @lab.exercise("99.2", answer="f", hints="give a function.", why="it runs.")
    def runs(answer):
        return answer([1, 2]) == 2

    assert lab.evaluate("99.2", lambda _: 1 / 0).status == "not yet"
    assert lab.evaluate("99.2", "not a function").status == "not yet"
    assert lab.evaluate("99.2", len).status == "right"


def test_registration_is_validated(scratch_registry):
    def ok(answer):
        return True

    with pytest.raises(ValueError, match="NN.k"):
        lab.exercise("1.2", answer="x", hints="h", why="w")(ok)
    with pytest.raises(ValueError, match="variable"):
        lab.exercise("99.3", answer="not a name", hints="h", why="w")(ok)
    with pytest.raises(ValueError, match="hint"):
        lab.exercise("99.3", answer="x", hints=(), why="w")(ok)
    with pytest.raises(ValueError, match="hints"):
        lab.exercise("99.3", answer="x", hints=" ", why="w")(ok)
    lab.exercise("99.3", answer="x", hints="h", why="w")(ok)
    with pytest.raises(ValueError, match="twice"):
        lab.exercise("99.3", answer="x", hints="h", why="w")(ok)


def test_an_unknown_exercise_id_is_a_clear_error():
    with pytest.raises(ValueError, match="no exercise '98.9'"):
        lab.check("98.9", 1)


@pytest.mark.parametrize("answer, expected", [("b", True), (" B ", True), ("(b)", True), ("b.", True),
                                              ("Fewer cells", True), ("a", False), ("", False), (2, False)])
def test_choices_accept_case_and_space_variants(answer, expected):
    assert _core.choice(answer, "b", "fewer cells") is expected
    fingerprints = [_core.fingerprint("99.9", "b"), _core.fingerprint("99.9", "fewer cells")]
    assert (_core.right_option(answer, "99.9", fingerprints, {}) is not None) is expected


def test_numbers_accept_strings_percentages_and_numpy_but_not_truth_values():
    assert _core.close("0.25", 0.25) and _core.close(np.float32(0.25), 0.25) and _core.close("0,25", 0.25)
    assert _core.close("25%", 0.25) and _core.close("10,000", 1e4) and _core.close(" 16.5 % ", 0.1649)
    assert not _core.close(0.3, 0.25)
    assert _core.as_probability(16.5) == pytest.approx(0.165) and _core.as_probability("0.4") == 0.4
    with pytest.raises(TypeError):
        _core.close(True, 1.0)


@pytest.mark.parametrize("answer, expected", [(0.16, True), (0.165, True), (0.1649, True), (0.17, False),
                                              (0.15, False), (0.163, True)])
def test_numbers_rounded_to_two_significant_digits_are_right(answer, expected):
    assert _core.close(answer, 0.1 * np.exp(0.5)) is expected


# --------------------------------------------------------------------------- the student and instructor versions
SOLVED = '''x = None   # your answer
### BEGIN SOLUTION
x = 2
### END SOLUTION'''


def _exercise_notebook(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def _cell(source, *tags, kind="code"):
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    cell = make(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def test_student_version_drops_the_solution_and_keeps_the_placeholder():
    nb = _exercise_notebook(_cell("[glossary](../docs/glossary.md)", kind="markdown"),
                            _cell(SOLVED, "exercise"), _cell('lab.check("01.2", x)', "self-check"))
    student = versions.student_version(nb)
    assert student.cells[1].source == "x = None   # your answer"
    assert "SOLUTION" not in student.cells[1].source and nb.cells[1].source == SOLVED   # input untouched
    teacher = versions.instructor_version(nb)
    assert teacher.cells[1].source == SOLVED
    assert teacher.cells[1].metadata["nbgrader"]["solution"] is True
    for cell in teacher.cells[1:]:      # nbgrader's schema: grade ids of letters, digits, _ and -
        assert re.fullmatch(r"[A-Za-z0-9_\-]+", cell.metadata["nbgrader"]["grade_id"])
    assert teacher.cells[2].metadata["tags"] == ["self-check", "nbval-check-output"]
    assert teacher.cells[0].source == "[glossary](../../docs/glossary.md)"   # one folder deeper
    assert student.cells[0].source == "[glossary](../docs/glossary.md)"


@pytest.mark.parametrize("cells, message", [
    ([_cell(SOLVED, "exercise")], "followed by a self-check"),
    ([_cell("x = None", "exercise"), _cell('lab.check("01.1", x)', "self-check")], "BEGIN SOLUTION"),
    ([_cell(SOLVED), _cell('lab.check("01.1", x)', "self-check")], "outside an exercise"),
    ([_cell("x = 1\n### BEGIN SOLUTION\nx = 2", "exercise"), _cell('lab.check("01.1", x)', "self-check")],
     "without"),
    ([_cell(SOLVED, "exercise"), _cell("print(x)", "self-check")], "once"),
    ([_cell(SOLVED, "exercise"), _cell('lab.check("01.1", x)', "self-check"),
      _cell(SOLVED, "exercise"), _cell('lab.check("01.1", x)', "self-check")], "used twice"),
])
def test_a_broken_exercise_layout_is_refused(cells, message):
    with pytest.raises(ValueError, match=message):
        versions.check_structure(_exercise_notebook(*cells))


def _ids(source: Path) -> list[str]:
    return versions.check_structure(jupytext.read(source), source.name)


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_every_notebook_has_three_registered_exercises(source):
    ids = _ids(source)
    assert len(ids) >= 3, f"{source.name} has {len(ids)} exercises, at least 3 are needed"
    assert all(i.startswith(source.name[:2] + ".") for i in ids), f"{source.name}: ids {ids}"
    missing = [i for i in ids if i not in lab.EXERCISES]
    assert not missing, f"{source.name}: self-checks {missing} are not registered in dpexplore.lab"


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_exercises_are_spread_through_the_notebook(source):
    cells = jupytext.read(source).cells
    where = [i for i, c in enumerate(cells) if versions.EXERCISE in versions.tags(c)]
    assert len(where) >= 3
    # not all piled at the end: the first exercise sits in the first half of the notebook
    assert where[0] < len(cells) / 2, f"{source.name}: the first exercise is cell {where[0]} of {len(cells)}"


def _solution_lines(source: Path) -> list[str]:
    lines = []
    for cell in jupytext.read(source).cells:
        if versions.EXERCISE in versions.tags(cell):
            inside = False
            for line in cell.source.splitlines():
                if line.strip() in (versions.BEGIN, versions.END):
                    inside = line.strip() == versions.BEGIN
                elif inside and line.strip() and not line.strip().startswith("#"):
                    lines.append(line.strip())
    return lines


def _stored(path: Path):
    if not path.exists():
        pytest.fail(f"{path} is missing: build it with `python notebooks/build.py {path.name[:2]}`")
    return nbformat.read(path, as_version=4)


def _self_check_texts(nb) -> list[str]:
    texts = []
    for cell in nb.cells:
        if versions.SELF_CHECK in versions.tags(cell):
            shown = [o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", [])
                     if o.get("output_type") == "display_data"]
            texts.append("".join("".join(t) if isinstance(t, list) else t for t in shown))
    return texts


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_student_version_holds_no_solution(source):
    nb = _stored(versions.student_path(source))
    text = "\n".join(c.source for c in nb.cells)
    assert versions.BEGIN not in text and versions.END not in text
    solutions = [line for line in _solution_lines(source) if len(line) > 12]
    exercise_text = "\n".join(c.source for c in nb.cells if versions.EXERCISE in versions.tags(c))
    leaked = [line for line in solutions if line in exercise_text]
    assert not leaked, f"{source.name}: solution lines in the student version: {leaked}"
    texts = _self_check_texts(nb)
    assert texts and all(t.startswith("Not answered yet") for t in texts), texts


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_instructor_version_says_right_in_every_self_check(source):
    nb = _stored(versions.instructor_path(source))
    texts = _self_check_texts(nb)
    assert len(texts) == len(_ids(source))
    wrong = [t for t in texts if not t.startswith("✓ Right")]
    assert not wrong, f"{source.name}: instructor self-checks not right: {wrong}"
    for cell in nb.cells:
        if versions.SELF_CHECK in versions.tags(cell):
            assert versions.NBVAL_CHECK in versions.tags(cell)


def test_the_instructor_folder_reads_the_same_results():
    link = NOTEBOOKS / versions.INSTRUCTOR_DIR / "results"
    assert link.is_dir() and link.resolve() == (NOTEBOOKS / "results").resolve()


def test_notebooks_are_not_paired_with_their_sources():
    # a paired student notebook, opened and saved in JupyterLab, would overwrite its source
    # (solutions included) with the solutions stripped
    config = (NOTEBOOKS / "jupytext.toml").read_text()
    assert not re.search(r"^\s*formats\s*=", config, re.M)
