"""Build the student bundle: what a teacher publishes for a class, with no answer in it.

The repository holds the answers: the instructor notebooks, the jupytext sources (solutions
between nbgrader's markers), the tests (example answers) and ``docs/instructor_guide.md`` (the
answer key). A class gets this folder instead (``docs/teaching_a_class.md`` says how to publish and
serve it)::

    .venv/bin/python notebooks/build.py            # first, if a source changed: the stored notebooks
    .venv/bin/python notebooks/bundle.py ../dpexplore-class

It writes::

    README.md                  for the students: how to open it (generated)
    requirements.txt           the pinned stack of binder/requirements.txt, then the package's wheel
    postBuild                  Binder: loads the Voilà apps' server extension (dpexplore.apps)
    voila.json                 the Voilà apps' configuration (template, kernel pools, culling)
    wheels/dpexplore-*.whl     the package with its datasets and Voilà template, built from this checkout
    notebooks/NN_name.ipynb    the student notebooks, as stored (outputs of a full run)
    notebooks/results/         the cached sweeps the notebooks and their checks read
    docs/glossary.md, ...      the documents the notebooks link to, and those they link to

and checks what it wrote (:func:`check_bundle`): every notebook is the student version of its source
(:mod:`_versions`: solutions stripped, no stored output under a prediction), no file holds a solution
marker or an instructor file, every relative link resolves inside the bundle. It refuses to write
into a folder that is neither empty nor an earlier bundle.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import _versions  # noqa: E402 (next to this script: the student and instructor versions)

MARKER = ".dpexplore-student-bundle"           # marks a folder this script wrote (and may rewrite)
PACKAGE_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "dpexplore", "datasets", "share")
LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)#\s]+)")
# what must never reach a student: instructor files, sources with solutions, tests with answers,
# the answer key
FORBIDDEN_PARTS = {"instructor", "tests"}
FORBIDDEN_NAMES = {"instructor_guide.md"}
NOTEBOOK_SOURCE = re.compile(r"^\d\d_\w+\.py$")


def build_wheel(out: Path) -> Path:
    """The package's wheel (``setup.py`` puts the datasets in it, ``pyproject.toml`` the Voilà
    template), built by pip from a clean copy of the package's files (the checkout stays as it is)."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "dpexplore"
        src.mkdir()
        for name in PACKAGE_FILES:
            path = ROOT / name
            if path.is_dir():
                shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            elif path.exists():
                shutil.copy2(path, src / name)
        run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
                              str(out), str(src)], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"pip could not build the package's wheel:\n{run.stdout}{run.stderr}")
    (wheel,) = sorted(out.glob("dpexplore-*.whl"))
    return wheel


def _linked_docs(markdown: str, folder: Path) -> set[Path]:
    """The local files that ``markdown`` (in ``folder``) links to."""
    return {(folder / target).resolve() for target in LINK.findall(markdown)}


def _notebook_links(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _student_notebooks() -> list[tuple[Path, nbformat.NotebookNode]]:
    """Every stored student notebook, checked against its source, with no output under a prediction."""
    import jupytext

    found = []
    for source in sorted(HERE.glob("[0-9][0-9]_*.py")):
        stored_path = _versions.student_path(source)
        if not stored_path.exists():
            raise SystemExit(f"{stored_path.name} is missing: build it with "
                             f"`python notebooks/build.py {source.name[:2]}`")
        stored = nbformat.read(stored_path, as_version=4)
        student = _versions.student_version(jupytext.read(source), source.name)
        expected = [(c.cell_type, c.source) for c in student.cells]
        if [(c.cell_type, c.source) for c in stored.cells] != expected:
            raise SystemExit(f"{stored_path.name} differs from {source.name}: rebuild it with "
                             f"`python notebooks/build.py {source.name[:2]}` before bundling")
        found.append((stored_path, _versions.hide_reveals(stored)))
    return found


def _requirements(wheel: Path) -> str:
    pinned = [line for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines()
              if line.strip() and line.strip() != "." and not line.startswith("#")]
    return ("# The stack the notebooks were built with (binder/requirements.txt of dpexplore), then the\n"
            "# package itself. Install from this folder: pip install -r requirements.txt\n"
            + "\n".join(pinned) + f"\n./wheels/{wheel.name}\n")


POSTBUILD = """#!/bin/bash
# Binder: the Voilà apps inside JupyterLab (/voila/render/...) need the fix for pages that never
# finish loading (dpexplore/apps.py), loaded as a Jupyter server extension. The wheel already put
# the apps' template where Voilà finds it (share/jupyter/voila/templates/dpexplore).
set -euo pipefail
jupyter server extension enable --sys-prefix dpexplore.apps
"""

README = """# dpexplore: the notebooks of the class

Notebooks for learning differentially private data publishing and classification, with the
`dpexplore` package. Start with `notebooks/00_start_here.ipynb`.

Every notebook is stored with the outputs of a full run, so it reads before it runs. The
exercises have a self-check cell under them; a prediction's answer appears when you run the cell
after its check, and the explanations after a check are folded: open them once you have answered.

**Open it**

- in JupyterLab on Binder or your class's JupyterHub: the address your teacher gives you;
- on your own computer (Python 3.11): `python3.11 -m venv .venv && .venv/bin/pip install -r
  requirements.txt && .venv/bin/jupyter lab notebooks/`;
- the apps (01 and 07) in Voilà: `.venv/bin/python -m dpexplore.apps notebooks/07_showdown.ipynb`.

The notation of all notebooks is in `docs/glossary.md`, the papers in `docs/bibliography.md`. The
datasets (UCI Adult, German credit; CC BY 4.0) ship inside the package, with their licence.
"""


def write_bundle(out: Path, wheel: Path | None = None) -> Path:
    """Write the student bundle into ``out`` (empty, new, or an earlier bundle) and check it.

    ``wheel``: a wheel of the package to ship instead of building one. Returns ``out``.
    """
    out = Path(out).resolve()
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).exists():
            raise SystemExit(f"{out} is not empty and holds no earlier bundle ({MARKER}): choose another folder")
        for child in out.iterdir():
            if child.name == ".git":      # a published bundle is a repository: keep its history
                continue
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("written by dpexplore's notebooks/bundle.py: rebuilding it replaces everything "
                              "but .git\n")

    notebooks = out / "notebooks"
    notebooks.mkdir()
    docs: set[Path] = set()
    for path, nb in _student_notebooks():
        nbformat.write(nb, notebooks / path.name)
        docs |= {d for d in _linked_docs(_notebook_links(nb), HERE) if d.suffix == ".md"}
    shutil.copytree(HERE / "results", notebooks / "results", ignore=shutil.ignore_patterns(".*"))
    while docs:                                           # the documents linked, and theirs
        doc = docs.pop()
        target = out / doc.relative_to(ROOT)
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(doc, target)
        docs |= {d for d in _linked_docs(doc.read_text(encoding="utf-8"), doc.parent)
                 if d.suffix == ".md" and not (out / d.relative_to(ROOT)).exists()}

    wheels = out / "wheels"
    if wheel is None:
        wheel = build_wheel(wheels)
    else:
        wheels.mkdir()
        wheel = Path(shutil.copy2(wheel, wheels / Path(wheel).name))
    (out / "requirements.txt").write_text(_requirements(wheel))
    (out / "postBuild").write_text(POSTBUILD)
    (out / "postBuild").chmod(0o755)
    shutil.copy2(ROOT / "voila.json", out / "voila.json")
    (out / "README.md").write_text(README)
    problems = check_bundle(out)
    if problems:
        raise SystemExit("the bundle is not fit for students:\n" + "\n".join(problems))
    return out


def _texts(path: Path):
    """(name, text) of a bundle file, and of every member of a wheel."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as whl:
            for member in whl.namelist():
                yield f"{path.name}:{member}", whl.read(member).decode("utf-8", errors="replace")
    else:
        yield str(path), path.read_bytes().decode("utf-8", errors="replace")


def check_bundle(out: Path) -> list[str]:
    """What in the bundle ``out`` a student must not get, or what would not work: solution markers,
    instructor files, notebook sources, tests, the answer key, stored outputs under a prediction,
    relative links that lead outside the bundle or nowhere."""
    out = Path(out)
    problems = []
    for path in sorted(p for p in out.rglob("*") if p.is_file() and ".git" not in p.relative_to(out).parts):
        rel = path.relative_to(out)
        names = set(rel.parts)
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as whl:
                names |= {part for member in whl.namelist() for part in Path(member).parts}
        if names & FORBIDDEN_PARTS or names & FORBIDDEN_NAMES or (rel.parts[0] == "notebooks"
                                                                   and NOTEBOOK_SOURCE.match(path.name)):
            problems.append(f"{rel}: an instructor file, a notebook source, a test or the answer key")
        for name, text in _texts(path):
            if _versions.BEGIN in text or _versions.END in text:
                problems.append(f"{name}: holds a solution marker")
        if path.suffix == ".ipynb":
            nb = nbformat.read(path, as_version=4)
            for i, cell in enumerate(nb.cells):
                if _versions.REVEAL in _versions.tags(cell) and cell.get("outputs"):
                    problems.append(f"{rel} cell {i}: stores the output that answers a prediction")
            links = _linked_docs(_notebook_links(nb), path.parent)
        elif path.suffix == ".md":
            links = _linked_docs(path.read_text(encoding="utf-8"), path.parent)
        else:
            links = set()
        for link in links:
            if not link.is_relative_to(out.resolve()) or not link.exists():
                problems.append(f"{rel}: links to {link}, which the bundle does not hold")
    return problems


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder to write (empty, new, or an earlier bundle)")
    parser.add_argument("--wheel", type=Path, help="ship this wheel of the package instead of building one")
    args = parser.parse_args(argv)
    out = write_bundle(args.out, args.wheel)
    files = [p for p in out.rglob("*") if p.is_file() and ".git" not in p.relative_to(out).parts]
    print(f"student bundle in {out}: {len(files)} files, {sum(f.stat().st_size for f in files) / 2**20:.1f} MiB; "
          "checked: no solution, no answer key")


if __name__ == "__main__":
    sys.exit(main())
