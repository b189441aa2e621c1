"""The student bundle (``notebooks/bundle.py``): what a teacher publishes holds no answer, and its
notebooks run with nothing but the bundle and the package's wheel.

One bundle is built for the module (the wheel too: pip builds it in an isolated environment, so it
needs setuptools from the package index or pip's cache; the tests skip, saying so, when that is out
of reach). Its notebooks are then executed in quick mode from the bundle's ``notebooks/`` folder,
with the wheel installed into a folder of its own that comes first on the kernel's path: not the
checkout's package, results or datasets.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from _benchmarks import load_script
from _notebooks import NOTEBOOKS, SOURCES, versions

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("jupytext")

bundle = load_script(NOTEBOOKS / "bundle.py", "notebooks_bundle")

_OFFLINE = ("No matching distribution", "Could not find a version", "NewConnectionError",
            "Temporary failure in name resolution", "Network is unreachable")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "dpexplore-class"
    wheels = tmp_path_factory.mktemp("wheel")
    try:
        wheel = bundle.build_wheel(wheels)
    except RuntimeError as err:
        if any(s in str(err) for s in _OFFLINE):
            pytest.skip("building the package's wheel needs setuptools from the package index, out of reach here")
        raise
    return bundle.write_bundle(out, wheel=wheel)


def _files(out: Path) -> list[Path]:
    return sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())


def test_bundle_holds_the_student_notebooks_and_what_they_need(built):
    files = {str(p) for p in _files(built)}
    stored = {p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}
    assert {f"notebooks/{n}" for n in stored} <= files
    assert {f"notebooks/results/{p.name}" for p in (NOTEBOOKS / "results").iterdir()} <= files
    assert {"docs/glossary.md", "docs/bibliography.md", "requirements.txt", "postBuild", "voila.json",
            "README.md"} <= files
    (wheel,) = built.glob("wheels/dpexplore-*.whl")
    assert f"./wheels/{wheel.name}" in (built / "requirements.txt").read_text().splitlines()
    assert os.access(built / "postBuild", os.X_OK)
    with zipfile.ZipFile(wheel) as whl:
        members = whl.namelist()
    assert "dpexplore/_datasets/adult.data.gz" in members                   # the data ship in the wheel
    assert any(m.endswith("voila/templates/dpexplore/index.html.j2") for m in members)
    assert json.loads((built / "voila.json").read_text())["VoilaConfiguration"]["template"] == "dpexplore"


def test_bundle_holds_no_answer(built):
    files = _files(built)
    assert not [f for f in files if {"instructor", "tests"} & set(f.parts)]
    assert not [f for f in files if f.name == "instructor_guide.md"]
    assert not [f for f in files if f.suffix == ".py"]                       # no notebook source, no test
    for path in (built / f for f in files):
        for name, text in bundle._texts(path):
            assert versions.BEGIN not in text and versions.END not in text, f"{name} holds a solution marker"
    import jupytext
    for source in SOURCES:
        nb = nbformat.read(built / "notebooks" / versions.student_path(source).name, as_version=4)
        expected = versions.student_version(jupytext.read(source), source.name)
        assert [c.source for c in nb.cells] == [c.source for c in expected.cells], source.name
        for cell in nb.cells:
            if versions.REVEAL in versions.tags(cell):
                assert not cell.outputs, f"{source.name}: a prediction's answer is stored"
    assert bundle.check_bundle(built) == []


def test_check_bundle_finds_every_kind_of_leak(built, tmp_path):
    """The bundle's own check is not blind: each planted problem is reported."""
    copy = shutil.copytree(built, tmp_path / "copy")
    (copy / "notebooks" / "instructor").mkdir()
    shutil.copy2(versions.instructor_path(SOURCES[0]), copy / "notebooks" / "instructor" / "00.ipynb")
    shutil.copy2(SOURCES[1], copy / "notebooks" / SOURCES[1].name)
    (copy / "docs" / "instructor_guide.md").write_text("# key\n")
    (copy / "docs" / "notes.md").write_text(f"x = 1\n{versions.BEGIN}\nx = 2\n{versions.END}\n")
    (copy / "docs" / "glossary.md").write_text("See the [guide](instructor_guide_elsewhere.md).\n")
    with_reveal = next(s for s in SOURCES if 'tags=["reveal"]' in s.read_text())
    target = copy / "notebooks" / versions.student_path(with_reveal).name
    nb = nbformat.read(versions.instructor_path(with_reveal), as_version=4)
    nbformat.write(nb, target)                                            # outputs under a prediction
    problems = "\n".join(bundle.check_bundle(copy))
    for expected in ("notebooks/instructor/00.ipynb", SOURCES[1].name, "docs/instructor_guide.md",
                     "docs/notes.md: holds a solution marker", "instructor_guide_elsewhere.md",
                     "stores the output that answers a prediction"):
        assert expected in problems, (expected, problems)


def test_refuses_to_write_over_a_folder_that_is_not_a_bundle(tmp_path):
    (tmp_path / "thesis.tex").write_text("mine")
    with pytest.raises(SystemExit, match="not empty"):
        bundle.write_bundle(tmp_path, wheel=tmp_path / "unused.whl")
    assert (tmp_path / "thesis.tex").read_text() == "mine"


@pytest.fixture(scope="module")
def wheel_site(built, tmp_path_factory) -> Path:
    """The bundle's wheel installed on its own (no dependencies: the test's environment has them)."""
    site = tmp_path_factory.mktemp("site")
    (wheel,) = built.glob("wheels/dpexplore-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
                    str(wheel)], check=True)
    return site


@pytest.mark.parametrize("name", [versions.student_path(s).name for s in SOURCES])
def test_bundle_notebook_runs_from_the_bundle_alone(built, wheel_site, monkeypatch, name):
    from nbclient import NotebookClient

    monkeypatch.setenv("PYTHONPATH", str(wheel_site))    # the wheel's package, before the checkout's
    monkeypatch.setenv("DPEXPLORE_QUICK", "1")
    folder = built / "notebooks"
    nb = nbformat.read(folder / name, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell("import dpexplore; print(dpexplore.__file__)"))
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    where = Path(nb.cells[0].outputs[0]["text"].strip())
    assert where.is_relative_to(wheel_site), f"the kernel imported {where}, not the bundle's wheel"
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{name} failed in the bundle: {errors[0].get('ename')}: {errors[0].get('evalue')}"
