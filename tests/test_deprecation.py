"""Renamed parameters, keywords and module paths keep working for one release, with a
DpexploreDeprecationWarning, and scikit-learn sees only the new names."""
import importlib
import inspect
import pickle
import sys
import types
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import estimator_checks

from dpexplore._deprecation import RenamedParams, moved, renamed_keyword
from dpexplore.exceptions import DpexploreDeprecationWarning

OLD_NAME = r"'split' was renamed 'shares'; the old name stops working in dpexplore 0\.4"


class Toy(RenamedParams, ClassifierMixin, BaseEstimator):
    """A classifier whose ``split`` became ``shares`` (and ``score`` became ``utility``)."""

    _renamed_params = {"split": "shares", "score": "utility"}

    def __init__(self, epsilon=1.0, shares=(0.03, 0.37, 0.6), *, utility="max", schema=None):
        self.epsilon = epsilon
        self.shares = shares
        self.utility = utility
        self.schema = schema

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.used_ = float(np.sum(self.shares))     # depends on the parameter: GridSearchCV sees it
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])

    def score(self, X, y):
        return -abs(self.used_ - 6.0)


class ToyChild(Toy):
    """A subclass with its own __init__ and one more renamed parameter."""

    _renamed_params = {"eps": "epsilon"}

    def __init__(self, epsilon=2.0, shares=(1, 1, 1), *, utility="dm", schema=None):
        super().__init__(epsilon, shares, utility=utility, schema=schema)


def test_the_signature_holds_only_the_new_names():
    params = inspect.signature(Toy.__init__).parameters
    assert "shares" in params and "split" not in params
    assert set(Toy().get_params()) == {"epsilon", "shares", "utility", "schema"}


def test_the_old_name_works_in_init_and_warns_at_the_callers_line():
    with pytest.warns(DpexploreDeprecationWarning, match="Toy: " + OLD_NAME) as record:
        est = Toy(1.0, split=(1, 2, 3))
    assert record[0].filename == __file__
    assert est.shares == (1, 2, 3) and "split" not in est.get_params()
    with pytest.raises(TypeError, match="give shares= only"), pytest.warns(DpexploreDeprecationWarning):
        Toy(split=(1, 1, 1), shares=(2, 2, 2))


def test_the_new_name_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = Toy(shares=(1, 1, 1), utility="dm").set_params(shares=(2, 2, 2))
        clone(est)
    assert est.shares == (2, 2, 2)


def test_clone_get_params_and_set_params():
    with pytest.warns(DpexploreDeprecationWarning):
        est = Toy(split=(1, 1, 1), score="ncp")
    copy = clone(est)
    assert copy.get_params() == est.get_params() and copy.utility == "ncp"
    with pytest.warns(DpexploreDeprecationWarning, match=OLD_NAME):
        assert Toy().set_params(split=(4, 4, 4)).shares == (4, 4, 4)


def test_reading_the_old_attribute_warns_and_gives_the_new_value():
    est = Toy(shares=(5, 5, 5))
    with pytest.warns(DpexploreDeprecationWarning, match=OLD_NAME):
        assert est.split == (5, 5, 5)
    with pytest.raises(AttributeError, match="classes_"):
        est.classes_                                   # an unfitted attribute is still missing


def test_grid_search_with_the_old_key_in_a_pipeline_and_alone():
    X = np.arange(40, dtype=float).reshape(20, 2)
    y = np.r_[np.zeros(10), np.ones(10)]
    with pytest.warns(DpexploreDeprecationWarning):
        search = GridSearchCV(Toy(), {"split": [(1, 1, 1), (2, 2, 2)]}, cv=2).fit(X, y)
    assert search.best_estimator_.shares == (2, 2, 2)   # sum 6 scores best
    with pytest.warns(DpexploreDeprecationWarning):
        pipe = GridSearchCV(make_pipeline(StandardScaler(), Toy()), {"toy__split": [(1, 1, 1), (2, 2, 2)]},
                            cv=2).fit(X, y)
    assert pipe.best_estimator_[-1].shares == (2, 2, 2)


def test_a_pickle_made_before_the_rename_loads():
    old = Toy(shares=(7, 7, 7)).fit(np.zeros((4, 1)), [0, 1, 0, 1])
    state = dict(old.__dict__)
    state["split"] = state.pop("shares")    # the state an older release pickled
    del state["schema"]                     # a parameter that release did not have
    old.__dict__.clear()
    old.__dict__.update(state)
    blob = pickle.dumps(old)
    with pytest.warns(DpexploreDeprecationWarning, match=OLD_NAME):
        back = pickle.loads(blob)
    assert back.shares == (7, 7, 7) and back.schema is None and "split" not in back.__dict__
    assert list(back.classes_) == [0, 1] and back.get_params()["shares"] == (7, 7, 7)


def test_a_subclass_inherits_the_renames_and_adds_its_own():
    assert ToyChild._renamed_params == {"split": "shares", "score": "utility", "eps": "epsilon"}
    with pytest.warns(DpexploreDeprecationWarning) as record:
        est = ToyChild(eps=3.0, split=(1, 2, 3))
    assert est.epsilon == 3.0 and est.shares == (1, 2, 3)
    assert all("ToyChild" in str(w.message) for w in record)
    assert "eps" not in inspect.signature(ToyChild.__init__).parameters
    assert Toy._renamed_params == {"split": "shares", "score": "utility"}


def test_a_rename_to_a_missing_parameter_is_refused_when_the_class_is_made():
    with pytest.raises(TypeError, match="'theta' must be an __init__ parameter"):
        class Broken(RenamedParams, BaseEstimator):
            _renamed_params = {"max_candidates": "theta"}

            def __init__(self, epsilon=1.0):
                self.epsilon = epsilon


CHECKS = ["check_parameters_default_constructible", "check_get_params_invariance", "check_set_params",
          "check_no_attributes_set_in_init", "check_do_not_raise_errors_in_init_or_set_params",
          "check_estimator_repr", "check_estimator_cloneable"]


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("cls", [Toy, ToyChild])
def test_scikit_learn_estimator_checks_pass(cls, check):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DpexploreDeprecationWarning)   # the checks use only new names
        getattr(estimator_checks, check)(cls.__name__, cls())


# ------------------------------------------------------------------ renamed_keyword
@renamed_keyword(split="shares")
def share_of(epsilon, *, shares=(0.5, 0.5)):
    """A function whose keyword ``split`` became ``shares``."""
    return [epsilon * s for s in shares]


class Kw(ClassifierMixin, BaseEstimator):
    @renamed_keyword(score="utility")
    def __init__(self, epsilon=1.0, *, utility="max"):
        self.epsilon = epsilon
        self.utility = utility

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def test_renamed_keyword_on_a_function():
    assert list(inspect.signature(share_of).parameters) == ["epsilon", "shares"]
    assert share_of.__doc__.startswith("A function")
    with pytest.warns(DpexploreDeprecationWarning, match=r"share_of: 'split' was renamed 'shares'") as record:
        assert share_of(2.0, split=(0.25, 0.75)) == [0.5, 1.5]
    assert record[0].filename == __file__
    with pytest.raises(TypeError, match="not both"), pytest.warns(DpexploreDeprecationWarning):
        share_of(1.0, split=(1,), shares=(2,))
    with pytest.raises(TypeError, match="must be a parameter"):
        renamed_keyword(old="missing")(share_of.__wrapped__)


def test_renamed_keyword_on_an_estimators_init():
    with pytest.warns(DpexploreDeprecationWarning, match=r"Kw: 'score' was renamed 'utility'"):
        est = Kw(2.0, score="ncp")
    assert est.get_params() == {"epsilon": 2.0, "utility": "ncp"} and clone(est).utility == "ncp"


@pytest.mark.parametrize("check", CHECKS)
def test_renamed_keyword_passes_scikit_learns_checks(check):
    getattr(estimator_checks, check)("Kw", Kw())


# ------------------------------------------------------------------ moved
@pytest.fixture
def old_module(monkeypatch):
    """A module two of whose names moved to dpexplore.histogram."""
    module = types.ModuleType("dpexplore_old_home")
    module.kept = 1
    module.__getattr__ = moved(module.__name__, {"OldGrid": "dpexplore.histogram:resolve_grid",
                                                 "resolve_grid": "dpexplore.histogram"})
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return module


def test_moved_forwards_with_a_warning(old_module):
    from dpexplore.histogram import resolve_grid
    with pytest.warns(DpexploreDeprecationWarning,
                      match=r"dpexplore_old_home\.OldGrid moved to dpexplore\.histogram\.resolve_grid; "
                            r"the old path stops working in dpexplore 0\.4") as record:
        from dpexplore_old_home import OldGrid
    assert OldGrid is resolve_grid and record[0].filename == __file__
    with pytest.warns(DpexploreDeprecationWarning):
        assert importlib.import_module("dpexplore_old_home").resolve_grid is resolve_grid
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert old_module.kept == 1                    # names that did not move: no warning
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        old_module.nothing


def test_moved_falls_back_to_another_getattr():
    getattr_ = moved("pkg", {"Old": "dpexplore.limits:MAX_SYNTHETIC_ROWS"}, fallback=lambda name: f"lazy {name}")
    assert getattr_("Other") == "lazy Other"
    with pytest.warns(DpexploreDeprecationWarning):
        assert getattr_("Old") == 1_000_000
