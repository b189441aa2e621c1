"""The registry is the one list of methods: complete, in sync with the docs, and honest when a
method cannot be loaded."""
from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dpexplore
from dpexplore import registry
from dpexplore.exceptions import MethodUnavailableError
from dpexplore.registry import (EXCLUDED, KINDS, METHODS, MethodSpec, all_methods, get_method, markdown_table)

ROOT = Path(__file__).resolve().parents[1]
TABLE = re.compile(r"<!-- methods-table -->\n(.*?)<!-- /methods-table -->", re.S)


# ----------------------------------------------------------------------------- the list itself
def test_names_are_unique_and_class_entries_are_named_after_their_class():
    names = [s.name for s in METHODS]
    assert len(names) == len(set(names))
    assert len({s.display for s in METHODS}) == len(METHODS)       # charts tell them apart
    for spec in METHODS:
        if not spec.composite:
            assert spec.load().__name__ == spec.name, spec.path
        assert spec.kind in KINDS and spec.paper and spec.buys


def test_filters_and_lookup(monkeypatch):
    # the filters on a made-up list (the real one is read, never restated, by the tests)
    made_up = (MethodSpec("A", "publisher", "m:A", "p", "b", tags={"showdown"}),
               MethodSpec("B", "classifier", "m:B", "p", "b", display="Bee", tags={"showdown", "tables"}),
               MethodSpec("C", "publisher", "m:C", "p", "b", private=False, tags={"tables"}))
    monkeypatch.setattr(registry, "METHODS", made_up)
    assert [s.name for s in all_methods("publisher")] == ["A", "C"]
    assert [s.name for s in all_methods("publisher", private=True)] == ["A"]
    assert [s.name for s in all_methods(private=False)] == ["C"]
    assert [s.display for s in all_methods(tag="showdown")] == ["A", "Bee"]
    assert all_methods(tag="no such tag") == []
    assert get_method("B").display == "Bee"
    with pytest.raises(KeyError, match="registered: A, B, C"):
        get_method("Bee")                                           # the display name is not a name
    monkeypatch.undo()
    assert dpexplore.all_methods is all_methods
    with pytest.raises(ValueError, match="kind"):
        all_methods("estimator")
    with pytest.raises(ValueError, match="kind"):
        MethodSpec("X", "model", "a:X", "p", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        METHODS[0].name = "other"
    with pytest.raises(TypeError):
        METHODS[0].params["epsilon"] = 2.0                          # read-only mappings


def test_every_private_method_names_an_audit_that_exists():
    for spec in METHODS:
        if spec.private and spec.kind != "transformer":
            assert spec.audit, f"{spec.name} names no audit test"
        if not spec.audit:
            continue
        path, _, func = spec.audit.partition("::")
        file = ROOT / path
        assert file.exists(), f"{spec.name}: {path} does not exist"
        defined = {n.name for n in ast.walk(ast.parse(file.read_text())) if isinstance(n, ast.FunctionDef)}
        assert func in defined, f"{spec.name}: {spec.audit} is not a test function"


def test_every_paper_has_an_entry_in_the_bibliography():
    bibliography = (ROOT / "docs" / "bibliography.md").read_text()
    cited = re.compile(r"([A-Z][A-Za-z-]+)(?: et al\.| & [A-Z][A-Za-z-]+)? (\d{4})")
    for spec in METHODS:
        refs = cited.findall(spec.paper)
        if "thesis" in spec.paper:
            assert "master's thesis" in bibliography
        else:
            assert refs, f"{spec.name}: {spec.paper!r} names no author and year"
        for author, year in refs:
            assert re.search(rf"\*\*{author}, [^*]*\*\* \({year}\)", bibliography), (
                f"{spec.name} cites {author} {year}, which docs/bibliography.md does not list")


# ----------------------------------------------------------------------------- complete (as all_estimators)
def _estimator_classes() -> dict[str, type]:
    from sklearn.base import BaseEstimator

    found = {}
    for info in pkgutil.walk_packages(dpexplore.__path__, "dpexplore."):
        module = importlib.import_module(info.name)   # a module that does not import fails the test
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseEstimator) and obj.__module__ == info.name
                    and not name.startswith("_")):
                found[f"{info.name}:{name}"] = obj
    return found


def _unregistered(methods, excluded_paths) -> list[str]:
    registered = {spec.load() for spec in methods if not spec.composite}
    excluded = {importlib.import_module(p.split(":")[0]).__dict__[p.split(":")[1]] for p in excluded_paths}
    assert excluded.isdisjoint(registered)
    return sorted(path for path, cls in _estimator_classes().items() if cls not in registered | excluded)


def test_every_estimator_class_is_registered_or_excluded():
    missing = _unregistered(METHODS, EXCLUDED)
    assert not missing, f"estimator classes neither in registry.METHODS nor in registry.EXCLUDED: {missing}"
    # the walk finds a class left out of the list
    assert _unregistered([s for s in METHODS if s.name != "HistogramClassifier"], EXCLUDED) == [
        "dpexplore.models.histogram:HistogramClassifier"]


def test_every_registered_class_is_public_where_it_lives():
    for spec in METHODS:
        if spec.composite:
            continue
        module_name, name = spec.path.split(":")
        assert not any(part.startswith("_") for part in module_name.split(".")), spec.path
        assert name in importlib.import_module(module_name).__all__, f"{spec.path} is not in its module's __all__"


# ----------------------------------------------------------------------------- loading and building
def test_load_failures_name_the_method_and_chain_the_cause():
    broken = MethodSpec("Broken", "classifier", "dpexplore.no_such_module:Broken", "p", "b")
    with pytest.raises(MethodUnavailableError, match="Broken could not be loaded") as info:
        broken.load()
    assert isinstance(info.value.__cause__, ModuleNotFoundError) and info.value.name is None
    with pytest.raises(MethodUnavailableError, match="Missing.*AttributeError"):
        MethodSpec("Missing", "classifier", "dpexplore.registry:Missing", "p", "b").build(epsilon=1.0)
    optional = MethodSpec("Optional", "classifier", "dpexplore.registry:MethodSpec", "p", "b",
                          requires=("no_such_package_xyz",))
    assert optional.missing() == ["no_such_package_xyz"]
    with pytest.raises(MethodUnavailableError, match="needs the optional package") as info:
        optional.load()
    assert info.value.name == "no_such_package_xyz"             # how the showdown tells it apart
    assert isinstance(info.value, ImportError)


def test_build_passes_schema_and_params_and_check_instance_uses_check_params():
    from sklearn.pipeline import Pipeline

    from dpexplore.datasets import make_synthetic
    from dpexplore.models import PrivateNaiveBayes, SelectThenTrain

    frame, schema = make_synthetic(n_samples=200, n_numeric=1, n_categorical=1, random_state=0)
    lr = get_method("PrivateLRClassifier").build(schema, epsilon=0.5, random_state=3)
    assert lr.get_params()["schema"] is schema and lr.epsilon == 0.5 and lr.random_state == 3
    nb = get_method("PrivateNaiveBayes")
    assert isinstance(nb.build(epsilon=0.5), PrivateNaiveBayes)                  # no schema: the class
    pipe = nb.build(schema, epsilon=0.5, random_state=0)                          # a schema: its encoding
    assert isinstance(pipe, Pipeline) and list(pipe[-1].classes) == list(schema.classes)
    assert nb.check_instance().binarize == 0.0
    stt = get_method("SelectThenTrain").check_instance()
    assert isinstance(stt, SelectThenTrain) and stt.selector.k == 1 and stt.selector.binarize == 0.0
    assert stt.model.binarize == 0.0
    thesis = get_method("k-subset + NB").build(schema, epsilon=0.4, random_state=1)
    assert thesis[-1].epsilon == 0.4 and thesis[-1].selector.k == 10
    X, y = frame[schema.predictors], frame[schema.target]
    assert set(map(str, pipe.fit(X, y).predict(X))) <= set(schema.classes)


# ----------------------------------------------------------------------------- what reads it
def test_docs_methods_page_holds_the_generated_table():
    # the README's copy: tests/test_readme.py
    found = TABLE.search((ROOT / "docs" / "methods.md").read_text())
    assert found, "docs/methods.md lacks the <!-- methods-table --> block"
    assert found.group(1) == markdown_table(), "docs/methods.md is out of date: run " \
        "`python -m dpexplore.registry --write`"
    assert len(markdown_table().splitlines()) == len(METHODS) + 2
    for spec in METHODS:
        assert spec.name in found.group(1)


def test_write_rewrites_the_tables_between_their_markers(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("intro\n<!-- methods-table -->\n| stale |\n<!-- /methods-table -->\nend\n")
    (tmp_path / "docs" / "methods.md").write_text(f"<!-- methods-table -->\n{markdown_table()}<!-- /methods-table -->\n")
    assert registry.write_tables(tmp_path) == ["README.md"]                 # the current one is left alone
    assert (tmp_path / "README.md").read_text() == f"intro\n<!-- methods-table -->\n{markdown_table()}" \
                                                   "<!-- /methods-table -->\nend\n"
    assert registry.write_tables(tmp_path) == []
    (tmp_path / "docs" / "methods.md").write_text("no table here\n")
    with pytest.raises(ValueError, match="docs/methods.md lacks"):
        registry.write_tables(tmp_path)


def test_command_line_prints_the_table_without_loading_any_method():
    out = subprocess.run([sys.executable, "-m", "dpexplore.registry", "--markdown"], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    assert out == markdown_table()
    probe = ("import sys, dpexplore, dpexplore.registry as r; r.all_methods(); "
             "print(sorted(m for m in sys.modules if m.startswith(('sklearn', 'dpexplore.publish', "
             "'dpexplore.models', 'pandas'))))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                            cwd=ROOT).stdout.strip()
    assert loaded == "[]"


def test_conformance_tables_and_showdown_read_the_registry():
    from dpexplore import conformance, tables
    from dpexplore.evaluate.showdown import candidate_methods
    from dpexplore.datasets import make_synthetic

    assert conformance.ESTIMATORS == [s.name for s in METHODS if not s.composite]
    assert list(tables.METHODS) == [s.name for s in all_methods(tag="tables")]
    _, schema = make_synthetic(n_samples=50, n_numeric=1, n_categorical=1, random_state=0)
    assert list(candidate_methods(schema)) == [s.display for s in all_methods(tag="showdown")]


def test_the_fits_source_tag_is_true():
    import warnings

    from dpexplore import sources
    from dpexplore.datasets import make_synthetic

    frame, schema = make_synthetic(n_samples=300, n_numeric=2, n_categorical=2, random_state=0)
    source = sources.pandas(frame, schema)
    tagged = all_methods(tag="fits_source")
    assert {"publisher", "classifier", "selector"} <= {s.kind for s in tagged}
    for spec in tagged:
        if spec.name == "SelectThenTrain":
            est = spec.build(selector=get_method("PrivateKSubsetSelector").build(k=2),
                             model=get_method("PrivateNaiveBayes").build(), epsilon=1.0, random_state=0)
        elif spec.name == "HistogramClassifier":
            est = spec.build(schema)
        else:   # the checks' small parameters (k = 1), on the source's own 0/1 encoding
            est = spec.build(random_state=0, **{k: v for k, v in spec.check_params.items() if k != "binarize"},
                             **spec.test_params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # PrivPfCSelNF warns that it is not private
            assert est.fit(source) is est, spec.name
