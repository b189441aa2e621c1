"""One module of warnings and errors, one module of limits: the old import paths give the same
objects, and every limit says what it caps."""
import ast
import importlib
import inspect
import warnings
from pathlib import Path

import pytest

import dpexplore
from dpexplore import exceptions, limits

# (old module, name): every class keeps working from where it was first defined
OLD_HOMES = [
    ("dpexplore.domain", "PrivacyLeakWarning"),
    ("dpexplore.budget", "BudgetExceededError"),
    ("dpexplore.budget", "DetachedAccountantError"),
    ("dpexplore.evaluate.roc", "DegenerateCurveWarning"),
    ("dpexplore.publish.projected", "EmptySyntheticWarning"),
    ("dpexplore.select.stoddard", "NotDifferentiallyPrivateWarning"),
    ("dpexplore.tables", "InputError"),
    ("dpexplore.tables", "HighCardinalityWarning"),
    ("dpexplore.tables", "FewRecordsWarning"),
    ("dpexplore.tables._common", "InputError"),
    ("dpexplore", "PrivacyLeakWarning"),
    ("dpexplore", "BudgetExceededError"),
    ("dpexplore", "DetachedAccountantError"),
]


@pytest.mark.parametrize("module, name", OLD_HOMES)
def test_old_homes_give_the_same_class(module, name):
    assert getattr(importlib.import_module(module), name) is getattr(exceptions, name)


def test_every_class_is_defined_in_exceptions_with_its_base():
    bases = {"PrivacyLeakWarning": UserWarning, "BudgetExceededError": RuntimeError,
             "DetachedAccountantError": exceptions.BudgetExceededError, "DegenerateCurveWarning": UserWarning,
             "EmptySyntheticWarning": UserWarning, "NotDifferentiallyPrivateWarning": UserWarning,
             "InputError": ValueError, "HighCardinalityWarning": UserWarning, "FewRecordsWarning": UserWarning,
             "SyntheticSizeWarning": UserWarning, "MethodUnavailableError": ImportError}
    assert set(exceptions.__all__) == set(bases)
    for name, base in bases.items():
        cls = getattr(exceptions, name)
        assert cls.__module__ == "dpexplore.exceptions" and cls.__bases__ == (base,), name
        assert cls.__doc__ and cls.__doc__.strip(), name


def test_a_filter_on_the_new_class_catches_a_warning_raised_through_the_old_path():
    from dpexplore.domain import PrivacyLeakWarning
    with pytest.warns(exceptions.PrivacyLeakWarning):
        warnings.warn("leak", PrivacyLeakWarning)


def _documented_constants() -> dict[str, str]:
    """{NAME: docstring} for every upper-case assignment of limits.py followed by a string."""
    tree = ast.parse(Path(limits.__file__).read_text())
    out, body = {}, tree.body
    for node, after in zip(body, body[1:] + [None]):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.isupper():
                doc = after.value.value if (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                                            and isinstance(after.value.value, str)) else ""
                out[name] = doc
    return out


def test_every_limit_is_exported_and_documented():
    documented = _documented_constants()
    assert set(documented) == set(limits.__all__)
    for name, doc in documented.items():
        assert len(doc.split()) >= 10, f"limits.{name} needs a docstring saying what it caps and who checks it"


def test_limit_values():
    # the publishers' default cap and the own-table workflow's cap are two different limits
    assert limits.MAX_SYNTHETIC_ROWS == 1_000_000 and limits.OWN_TABLE_SYNTHETIC_ROWS == 200_000
    assert limits.EPSILON_RANGE == (0.01, 10.0) and limits.FEW_RECORDS == 30
    assert limits.MAX_DOMAIN == 2 ** 63 - 1 and limits.MAX_LATTICE_STEPS == 2 ** 52
    for name in limits.__all__:
        value = getattr(limits, name)
        values = value if isinstance(value, tuple) else (value,)
        assert all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in values), name


@pytest.mark.parametrize("module, name", [("dpexplore.histogram", "MAX_SYNTHETIC_ROWS"),
                                          ("dpexplore.histogram", "MAX_DENSE_ENTRIES"),
                                          ("dpexplore.counts", "MAX_DENSE_ENTRIES"),
                                          ("dpexplore.mechanisms", "MAX_LATTICE_STEPS"),
                                          ("dpexplore.tables", "EPSILON_RANGE"),
                                          ("dpexplore.tables", "FEW_RECORDS")])
def test_core_modules_read_the_limits_module(module, name):
    assert getattr(importlib.import_module(module), name) is getattr(limits, name)


def test_synthetic_from_counts_defaults_to_the_publishers_cap():
    from dpexplore.histogram import synthetic_from_counts
    assert inspect.signature(synthetic_from_counts).parameters["max_rows"].default is None
    from dpexplore.domain import Attribute, Schema, Taxonomy
    schema = Schema([Attribute.categorical("a", ["u", "v"], Taxonomy.flat("a", ["u", "v"]))], "y", ["n", "p"])
    counts = [[limits.MAX_SYNTHETIC_ROWS, 1.0]]       # one row over the cap: refused before any row is made
    with pytest.raises(ValueError, match="max_rows = 1,000,000"):
        synthetic_from_counts(counts, (0,), schema)


def test_version_has_one_home():
    from dpexplore import _version
    assert dpexplore.__version__ == _version.__version__
    pyproject = (Path(dpexplore.__file__).parents[1] / "pyproject.toml").read_text()
    assert f'version = "{_version.__version__}"' in pyproject


def test_the_leaf_modules_are_reachable_from_the_package():
    from dpexplore import config
    assert dpexplore.limits is limits and dpexplore.exceptions is exceptions and dpexplore.config is config
