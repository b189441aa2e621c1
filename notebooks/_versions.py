"""The student and the instructor version of a notebook, both from one jupytext source.

The source ``notebooks/NN_name.py`` holds the solutions between nbgrader's markers::

    # %% tags=["exercise"]
    b = None   # your answer
    ### BEGIN SOLUTION
    b = 1 / 0.5
    ### END SOLUTION

    # %% tags=["self-check"]
    lab.check("01.2")          # reads the variable b that exercise 01.2 registers

- the **student** version ``notebooks/NN_name.ipynb`` drops the marked lines (markers included),
  so ``b`` stays ``None`` and the self-check says "Not answered yet";
- the **instructor** version ``notebooks/instructor/NN_name.ipynb`` keeps the solutions (markers
  included, so ``nbgrader generate_assignment`` can still clear them), carries nbgrader's cell
  metadata, and tags every self-check ``nbval-check-output`` so that nbval checks it still says
  "Right". Relative links out of ``notebooks/`` get one more ``../``.

Two more tags shape what a reader sees before running anything:

- ``reveal``: a code cell that shows the answer of a "predict, then run" exercise. The student
  version stores it **without output** (:func:`hide_reveals`, applied by ``build.py`` after the
  run), so the prediction is made before the answer is on the page; the instructor version keeps
  its output.
- ``lab-only``: a cell that belongs to the lab, not to the Voilà app (an exercise's prose, code the
  exercise asks to read); the app's template hides it, like the exercise and self-check cells.

Why this convention (nbgrader's markers, a light build instead of nbgrader's database workflow)
is explained in ``notebooks/README.md``.
"""
from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
EXERCISE, SELF_CHECK, NBVAL_CHECK = "exercise", "self-check", "nbval-check-output"
REVEAL, LAB_ONLY = "reveal", "lab-only"
INSTRUCTOR_DIR = "instructor"
CHECK_CALL = re.compile(r"""lab\.check\(\s*["'](\d{2}\.\d{1,2})["']""")
_OUT_OF_FOLDER_LINK = re.compile(r"\]\(\.\./")


def student_path(source: Path) -> Path:
    """``notebooks/NN_name.ipynb``: what students open."""
    return source.with_suffix(".ipynb")


def instructor_path(source: Path) -> Path:
    """``notebooks/instructor/NN_name.ipynb``: the solutions in place."""
    return source.parent / INSTRUCTOR_DIR / source.with_suffix(".ipynb").name


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def strip_solutions(text: str, where: str = "cell") -> str:
    """``text`` without the lines from ``### BEGIN SOLUTION`` to ``### END SOLUTION`` (inclusive)."""
    kept, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        marker = line.strip()
        if marker == BEGIN:
            if inside:
                raise ValueError(f"{where}, line {number}: {BEGIN} inside a solution (missing {END})")
            inside = True
        elif marker == END:
            if not inside:
                raise ValueError(f"{where}, line {number}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            kept.append(line)
    if inside:
        raise ValueError(f"{where}: {BEGIN} without {END}")
    return "\n".join(kept).rstrip("\n")


def has_solution(text: str) -> bool:
    return any(line.strip() in (BEGIN, END) for line in text.splitlines())


def check_structure(nb: nbformat.NotebookNode, name: str = "notebook") -> list[str]:
    """The exercise ids of ``nb``, in order, after checking the convention.

    Every ``exercise`` cell is a code cell with a solution and is followed by a ``self-check``
    code cell that calls ``lab.check("NN.k")``; solution markers appear in exercise cells
    only; no id is used twice. Raises ``ValueError`` naming the cell otherwise.
    """
    ids: list[str] = []
    for index, cell in enumerate(nb.cells):
        where = f"{name} cell {index}"
        if EXERCISE in tags(cell):
            if cell.cell_type != "code" or not has_solution(cell.source):
                raise ValueError(f"{where}: an exercise cell must be code with a {BEGIN} … {END} block")
            strip_solutions(cell.source, where)
            after = nb.cells[index + 1] if index + 1 < len(nb.cells) else None
            if after is None or SELF_CHECK not in tags(after) or after.cell_type != "code":
                raise ValueError(f"{where}: an exercise cell must be followed by a self-check cell")
        elif has_solution(cell.source):
            raise ValueError(f"{where}: solution markers outside an exercise cell")
        if REVEAL in tags(cell) and (cell.cell_type != "code" or {EXERCISE, SELF_CHECK} & set(tags(cell))):
            raise ValueError(f"{where}: a {REVEAL} cell is a code cell, neither an exercise nor a self-check")
        if SELF_CHECK in tags(cell):
            found = CHECK_CALL.findall(cell.source)
            if len(found) != 1:
                raise ValueError(f'{where}: a self-check cell calls lab.check("NN.k") once')
            if found[0] in ids:
                raise ValueError(f"{where}: exercise id {found[0]} is used twice")
            ids.append(found[0])
    return ids


def student_version(nb: nbformat.NotebookNode, name: str = "notebook") -> nbformat.NotebookNode:
    """A copy of ``nb`` with every solution removed (the ``None  # your answer`` line stays)."""
    check_structure(nb, name)
    out = copy.deepcopy(nb)
    for index, cell in enumerate(out.cells):
        if EXERCISE in tags(cell):
            cell.source = strip_solutions(cell.source, f"{name} cell {index}")
    return out


def hide_reveals(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` with no stored output in its ``reveal`` cells (the student version, after its run):
    such a cell shows as never run, and the student's own run shows the answer."""
    for cell in nb.cells:
        if REVEAL in tags(cell):
            cell.outputs, cell.execution_count = [], None
    return nb


def instructor_version(nb: nbformat.NotebookNode, name: str = "notebook") -> nbformat.NotebookNode:
    """A copy of ``nb`` with solutions in place, nbgrader metadata and nbval output checks."""
    ids = iter(check_structure(nb, name))
    out = copy.deepcopy(nb)
    current = None
    for cell in out.cells:
        cell_tags = tags(cell)
        if EXERCISE in cell_tags:
            current = next(ids)
            cell.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False,
                                         "grade_id": f"exercise-{current.replace('.', '_')}", "schema_version": 3}
        elif SELF_CHECK in cell_tags:
            cell.metadata["tags"] = cell_tags + [NBVAL_CHECK]
            cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": True,
                                         "grade_id": f"self-check-{current.replace('.', '_')}", "schema_version": 3}
        elif cell.cell_type == "markdown":   # one folder deeper: ../docs → ../../docs
            cell.source = _OUT_OF_FOLDER_LINK.sub("](../../", cell.source)
    return out


def versions(nb: nbformat.NotebookNode, source: Path) -> list[tuple[str, nbformat.NotebookNode, Path]]:
    """``[(label, notebook, path)]`` to build from ``source``: the student version, and the
    instructor version when the notebook has exercises."""
    built = [("student", student_version(nb, source.name), student_path(source))]
    if check_structure(nb, source.name):
        built.append(("instructor", instructor_version(nb, source.name), instructor_path(source)))
    return built


def link_results(folder: Path) -> None:
    """``instructor/results`` → ``../results``: the notebooks read cached sweeps from ``results/``
    relative to their own folder, and Jupyter and nbval run a notebook in its folder."""
    folder.mkdir(exist_ok=True)
    link = folder / "results"
    if not link.is_symlink() and not link.exists():
        link.symlink_to(Path("..") / "results", target_is_directory=True)
