"""No spoilers in the stored student notebooks: nothing a student reads before answering gives
the answer away.

A student reads a stored notebook ahead of running it, so whatever is on the page after an
exercise's self-check (markdown and stored outputs, alt text included) is read before the answer is
typed. For every exercise this test scans

- the three cells after its self-check: markdown outside a collapsed ``<details>`` block, code
  comments, and every stored output (text, HTML with its alt texts, the charts' text descriptions);
- the markdown between the previous self-check and the exercise (the prompt and what leads to it,
  outside ``<details>``),

for the forms its answer takes in prose (``SPOILERS``: numbers as they would be printed, the
statement that settles a choice). It also checks the two mechanisms that keep answers off the page
(``notebooks/_versions.py``): a ``reveal`` cell (the run that answers a "predict, then run"
exercise) stores no output in the student version and does in the instructor version, and every
"predict, then run" exercise has one within three cells after its check; a collapsed block is closed
(``<details>`` without ``open``).

The patterns are an answer key: they live here, in the tests, never in the package or the student
notebooks.
"""
from __future__ import annotations

import html
import re

import pytest

from _notebooks import NOTEBOOKS, SOURCES, versions

nbformat = pytest.importorskip("nbformat")

AFTER = 3   # cells after a self-check in which no answer may show

# exercise id -> regular expressions (case-insensitive) for its answer as prose or output shows it
SPOILERS: dict[str, list[str]] = {
    "00.1": [r"16\.[45]\d*\s?%", r"(?<![\d.])0?\.16[45]\d*"],
    "00.2": [r"\b2\s?ε[^.\n]{0,40}substitution", r"substitution[^.]{0,80}\b2\s?ε(?!\w)"],
    "00.3": [r"(?<![\d.])1\.5(?![\d])"],
    "00.4": [r"75\.2\d*\s?%", r"(?<![\d.])0?\.752"],
    "00.5": [r"\b(4|four) (age )?intervals", r"depth 2[^.]{0,40}\b(4|four)\b"],
    "01.1": [r"\bb\s?=\s?10(?![\d.])", r"scale (of )?10(?![\d.])"],
    "01.2": [r"(true|real) (privacy loss|ε)[^.]{0,30}(is|=)\s?(1(?![\d.])|2\s?×\s?0\.5)"],
    "01.3": [r"classes\s?=\s?\(\s?[\"']a[\"']", r"schema\.classes"],
    "01.4": [r"(?<![\d.])0?\.73\d*", r"\b73(\.\d)?\s?%"],
    "01.5": [r"(?<![\d.])0\.9(?![\d])"],
    "02.1": [r"(?<![\d.])0?\.64\d*", r"\b64(\.\d)?\s?%"],
    "02.2": [r"(?<![\d,.])216(?![\d])"],
    "02.3": [r"drawn grid has", r"fewer cells", r"coarser grid"],
    "02.4": [r"(?<![\d.])1\.6[23]\d*"],
    "03.1": [r"np\.diff\(edges\)\s?\*\s?np\.exp"],
    "03.2": [r"(?<![\d.])0?\.38\d*", r"\b38\s?%"],
    "03.3": [r"ε_op[^.\n]{0,20}0\.0052\d*", r"2\s?/\s?384"],
    "03.4": [r"plateau", r"within the run-to-run spread"],
    "04.1": [r"mutual information[^.]{0,60}(nearly|almost) (flat|uniform)",
             r"(nearly|almost) (flat|uniform)[^.]{0,40}mutual information", r"flatness diagnosis"],
    "04.2": [r"(?<![\d.])333\.\d*", r"1000\s?/\s?3"],
    "04.3": [r"full model wins", r"all features (is|wins|are) (more accurate|better)"],
    "04.4": [r"(?<![\d.])2\.3[78]\d*"],
    "04.5": [r"at λ\s?=\s?5(?![\d.])", r"collapses"],
    "05.1": [r"(?<![\d.])0\.08(?![\d])"],
    "05.2": [r"(?<![\d.])27\.5"],
    "05.3": [r"LaplaceROC[^.]{0,80}(explodes|has the largest|is the worst)"],
    "05.4": [r"far above ε", r"Threshold Testing is not private",
             r"possible on one side and\s+impossible", r"PTT is (already )?caught"],
    "05.5": [r"laplace\(0(\.0)?,\s?2(\.0)?\s?/\s?epsilon"],
    "06.1": [r"(?<![\d.])0\.76(?![\d])", r"(?<![\d.])0\.095"],
    "06.2": [r"ε_p\s?=\s?0\.2(?![\d])"],
    "06.3": [r"np\.where\(noisy\s?>\s?tau"],
    "06.4": [r"not\** depend on ε", r"at every ε", r"whatever (the )?ε"],
    "06.5": [r"(?<![\d.,])100 (empty|fake|surviving)", r"about 100(?![\d,.])"],
    "07.1": [r"(?<![\d.])25\.7\d*"],
    "07.2": [r"projected histogram[^.]{0,60}below", r"below[^.]{0,40}DiffGen"],
    "07.3": [r"halfway between the lowest run and the median"],
    "07.4": [r"PrivPfC's and DiffMulti's tables", r"cannot (tell|rank) PrivPfC", r"(?<![\d.])0\.005 apart"],
    "08.1": [r"(?<![\d.])0\.25(?![\d])", r"ε\s?/\s?4(?![\d])"],
    "08.2": [r"(?<![\d])8\d\s?% of the (rows|stays)"],
    "08.3": [r"(?<![\d.])(0\.\d+|1(\.\d+)?) (expected )?records? per cell"],
    "09.1": [r"(?<![\d.,])221(?![\d,])"],
    "09.2": [r"identical[^\n]{0,80}\bTrue\b", r"\bIdentical:", r"does \**not depend on the engine"],
    "09.3": [r"fit[^.]{0,60}does not grow with the rows", r"time does not grow"],
    "10.1": [r"(standard deviation|\bsd\b)[^.\n]{0,40}(?<![\d.])4(\.0+)?(?![\d.])", r"variance[^.\n]{0,20}\b16\b"],
    "10.2": [r"np\.block\(\[\[A,\s?-np\.eye", r"b_ub\s?=\s?np\.r_\[a"],
    "10.3": [r"(?<![\w√])E\s?=\s?10(?![\d.])", r"below 75\s?%[^.\n]{0,40}\b10\b"],
    "10.4": [r"(?<![\d.])0?\.07[34]\d*", r"\b7\.[34]\d*\s?%"],
    "11.1": [r"(?<![\d.])1\.3[89]\d*", r"\bln\s?4\b"],
    "11.2": [r"(?<![\d.])0?\.30?(?![\d])[^\n]{0,20}(estimate|share)", r"estimate[^.\n]{0,20}(?<![\d.])0?\.30?(?![\d])"],
    "11.3": [r"np\.where\(truthful", r"rng\.random\([^)]*\)\s?<\s?p\b"],
    "11.4": [r"(?<![\d.,])21[45](\.\d+)?(?![\d,])", r"×\s?21[45]"],
    "12.1": [r"Δ₂\s?=\s?2(?![\d.])", r"L2 (sensitivity|norm)[^.\n]{0,30}\b(is|=|of)\s?2(?![\d.])", r"√4\s?=\s?2"],
    "12.2": [r"np\.sqrt\(2\s?\*\s?np\.log\(1\.25\s?/\s?delta\)\)"],
    "12.3": [r"(?<![\d.])1\.3[78]\d*", r"\b3[78](\.\d)?\s?%"],
    "12.4": [r"(more often|larger|more) than δ", r"times δ", r"P\[L > ε\]\s*=\s*0?\.000\d+"],
    "12.5": [r"(?<![\d.])(3|three) releases", r"δ only (three|3)", r"refuses the fourth"],
    "13.1": [r"(?<![\d.])18\.2\d*", r"(?<![\d.])18\.3(?![\d])"],
    "13.2": [r"k\s?\*\s?epsilon\s?\*\*\s?2\s?/\s?2"],
    "13.3": [r"\bk\s?[=>≥]\s?3[45](?![\d])", r"from k = 3[45]", r"(?<![\d.])34\.5"],
    "13.4": [r"Laplace[^.\n]{0,60}(larger|more noise)", r"zCDP's noise is the smaller", r"(?<![\d.])63\.6",
             r"(?<![\d.])35\.9"],
    "14.1": [r"Lap\(8\)", r"ν_i ~ Lap\(8", r"scale (of )?8(?![\d.])"],
    "14.2": [r"charged ε = 0\.5", r"(?<![\d.])0\.5 in all", r"pays? ε once[^.]{0,40}1,?000"],
    "14.3": [r"released value (is|needs)[^.]{0,40}(most|10,000)", r"refuted from 10,000"],
    "14.4": [r"laplace\(0(\.0)?,\s?4\s?/\s?epsilon"],
}

_DETAILS = re.compile(r"<details\b.*?</details>", re.S | re.I)
_ALT = re.compile(r"""\balt\s*=\s*("[^"]*"|'[^']*')""", re.I)
_TAG = re.compile(r"<[^>]+>")
_PREDICT = re.compile(r"predict,? then run", re.I)
_OPEN = re.compile(r"<details\b[^>]*\bopen\b", re.I)
_COMMENT = re.compile(r"#(.*)$", re.M)


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def visible_markdown(source: str) -> str:
    """A markdown cell as a reader sees it before opening anything: collapsed blocks left out."""
    return _DETAILS.sub(" ", source)


def _html_text(markup: str) -> str:
    alts = " ".join(m.group(1)[1:-1] for m in _ALT.finditer(markup))
    return html.unescape(_TAG.sub(" ", markup) + " " + alts)


def visible_outputs(cell) -> str:
    """What a code cell's stored outputs show: text, HTML (with alt texts), markdown; not the raw
    data of a chart or an image (its text description is in its markdown output)."""
    parts = []
    for out in cell.get("outputs", []):
        parts.append(_text(out.get("text", "")))
        data = out.get("data", {})
        for mime in ("text/plain", "text/markdown", "text/html"):
            if mime in data:
                body = _text(data[mime])
                parts.append(_html_text(body) if mime != "text/plain" else body)
    return "\n".join(parts)


def visible(cell) -> str:
    """A cell as read: markdown outside collapsed blocks; a code cell's comments and stored outputs
    (its code is what the student runs, not what the page tells)."""
    if cell.cell_type == "markdown":
        return visible_markdown(cell.source)
    return "\n".join(_COMMENT.findall(cell.source)) + "\n" + visible_outputs(cell)


def exercises(nb):
    """(exercise id, index of its exercise cell, index of its self-check cell) in order."""
    found = []
    for i, cell in enumerate(nb.cells):
        if versions.SELF_CHECK in versions.tags(cell):
            (exercise_id,) = versions.CHECK_CALL.findall(cell.source)
            found.append((exercise_id, i - 1, i))
    return found


def spoilers(nb, name: str = "notebook") -> list[str]:
    """Every place where an exercise's answer shows before the student answers it."""
    problems, previous_check = [], -1
    for exercise_id, exercise_cell, check_cell in exercises(nb):
        patterns = [re.compile(p, re.I) for p in SPOILERS[exercise_id]]
        before = [(i, visible_markdown(nb.cells[i].source)) for i in range(previous_check + 1, exercise_cell)
                  if nb.cells[i].cell_type == "markdown"]
        after = [(i, visible(nb.cells[i])) for i in range(check_cell + 1, min(check_cell + 1 + AFTER, len(nb.cells)))]
        for where, cells in (("before the exercise", before), ("after the check", after)):
            for i, text in cells:
                for pattern in patterns:
                    hit = pattern.search(text)
                    if hit:
                        problems.append(f"{name} cell {i} ({where}): {exercise_id}'s answer shows as "
                                        f"{hit.group(0)!r}")
        previous_check = check_cell
    return problems


def _student(source):
    path = versions.student_path(source)
    if not path.exists():
        pytest.fail(f"{path} is missing: build it with `python notebooks/build.py {source.name[:2]}`")
    return nbformat.read(path, as_version=4)


STUDENT = [pytest.param(s, id=s.stem) for s in SOURCES]


def test_every_exercise_has_spoiler_patterns():
    ids = [e for s in SOURCES for e, _, _ in exercises(_student(s))]
    assert sorted(ids) == sorted(SPOILERS), (f"exercises without spoiler patterns: {sorted(set(ids) - set(SPOILERS))}"
                                             f"; patterns of no exercise: {sorted(set(SPOILERS) - set(ids))}")


@pytest.mark.parametrize("source", STUDENT)
def test_no_answer_shows_near_its_exercise(source):
    problems = spoilers(_student(source), source.with_suffix(".ipynb").name)
    assert not problems, "answers on the page before the student gives them:\n" + "\n".join(problems)


@pytest.mark.parametrize("source", STUDENT)
def test_predictions_are_revealed_only_by_running(source):
    student = _student(source)
    instructor_path = versions.instructor_path(source)
    instructor = nbformat.read(instructor_path, as_version=4) if instructor_path.exists() else None
    for exercise_id, exercise_cell, check_cell in exercises(student):
        prompt = student.cells[exercise_cell].source + "".join(
            c.source for c in student.cells[max(0, exercise_cell - 1):exercise_cell] if c.cell_type == "markdown")
        following = student.cells[check_cell + 1:check_cell + 1 + AFTER]
        if _PREDICT.search(prompt):
            assert any(versions.REVEAL in versions.tags(c) for c in following), \
                f"{source.stem}: exercise {exercise_id} asks for a prediction but no reveal cell follows its check"
    for i, cell in enumerate(student.cells):
        if versions.REVEAL in versions.tags(cell):
            assert not cell.outputs and cell.execution_count is None, \
                f"{source.stem} cell {i}: a reveal cell stores output in the student version"
            assert instructor is not None and instructor.cells[i].outputs, \
                f"{source.stem} cell {i}: the instructor version must keep the reveal cell's output"
        if cell.cell_type == "markdown":
            assert not _OPEN.search(cell.source), f"{source.stem} cell {i}: a <details> block stored open"


def test_the_scan_finds_what_it_must():
    """The scan is not blind: an answer in an output, in visible markdown or in an alt text is
    found; the same answer inside a collapsed block, or in a cell too far away, is not."""
    check = nbformat.v4.new_code_cell('lab.check("00.4", always_poor)', metadata={"tags": [versions.SELF_CHECK]})
    exercise = nbformat.v4.new_code_cell("always_poor = None", metadata={"tags": [versions.EXERCISE]})

    def notebook(*after):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_markdown_cell("Read the chart."), exercise, check, *after]
        return nb

    said = nbformat.v4.new_markdown_cell("That share, 75.2 %, is the baseline.")
    printed = nbformat.v4.new_code_cell("share", outputs=[nbformat.v4.new_output(
        "execute_result", data={"text/plain": "0.752"}, execution_count=1)])
    pictured = nbformat.v4.new_code_cell("chart", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/markdown": '<img src="x.png" alt="three in four, 75.2 %, earn ≤50K">'})])
    hidden = nbformat.v4.new_markdown_cell("<details><summary>Open</summary>\n\nThat share, 75.2 %.\n</details>")
    filler = nbformat.v4.new_markdown_cell("Something else.")
    for cell in (said, printed, pictured):
        assert spoilers(notebook(cell)), cell
    assert not spoilers(notebook(hidden))
    assert not spoilers(notebook(filler, filler, filler, said))
    before = notebook()
    before.cells[0] = nbformat.v4.new_markdown_cell("About 75.2 % earn at most 50K. Read the chart.")
    assert spoilers(before)
