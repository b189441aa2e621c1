"""Every method of dpexplore in one list, which everything else reads (as scikit-learn's
``sklearn.utils.all_estimators``).

Each method is one :class:`MethodSpec` in :data:`METHODS`: its name (the class name; a composite
has a name of its own), its kind, the ``"module:Class"`` path imported on demand (so
``import dpexplore`` stays cheap), the paper, what one ε buys, whether it is differentially
private, tags saying which workflows offer it, the parameters scikit-learn's checks use and the
node id of its privacy audit. The conformance suite (:mod:`dpexplore.conformance`), the showdown
(:func:`dpexplore.evaluate.showdown.candidate_methods`), :func:`dpexplore.tables.release`, the
README's table and ``docs/methods.md`` (written by ``python -m dpexplore.registry --write``) read
this list, and so do the tests (the publisher contract, label types, tables) and the golden releases
(``benchmarks/golden_releases.py``).

>>> from dpexplore.registry import all_methods, get_method
>>> "PrivPfC" in [s.name for s in all_methods("publisher", private=True)]
True
>>> get_method("ProjectedHistogram").display
'Projected histogram'

``python -m dpexplore.registry --markdown`` prints the table of methods; ``--write`` rewrites it in
README.md and docs/methods.md.
Adding a method: see CONTRIBUTING.md ("Adding a publishing method").
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from .exceptions import MethodUnavailableError

__all__ = ["MethodSpec", "Nested", "METHODS", "EXCLUDED", "KINDS", "all_methods", "get_method", "markdown_table",
           "thesis_pipeline", "naive_bayes_on_schema"]

#: The kinds of method, in the order the table lists them.
KINDS = ("publisher", "classifier", "selector", "transformer")


@dataclass(frozen=True)
class Nested:
    """A registered method as a parameter of another's check instance (e.g. the selector of
    ``SelectThenTrain``): built from its own spec with these parameters."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))


@dataclass(frozen=True)
class MethodSpec:
    """One method: where it lives, what it releases, and how each workflow makes it.

    ``path`` is ``"module:Class"``, imported by :meth:`load` only when needed. ``factory`` (a
    ``"module:function"`` path, for composite entries and models that need an encoding) is what
    :meth:`build` calls instead of the class: ``factory(schema, **params)``. ``params`` are
    constructor parameters every workflow passes; ``synthetic_kwargs`` what
    :func:`dpexplore.tables.release` passes to ``synthetic()``; ``check_params`` the parameters of
    the instance scikit-learn's checks run on (:meth:`check_instance`). ``requires`` names optional
    packages: without them the method is unavailable (:meth:`missing`). ``audit`` is the pytest node
    id of the method's privacy audit. ``display`` is the label charts and the showdown use.
    ``test_params`` are small, fast parameters for the tests that run every method (the publisher
    contract, label types) and for the golden releases; ``coarsest_params`` (publishers) the
    parameters under which its release models the fewest predictors, so that the tests of
    ``marginal_share`` see the other columns filled.
    """

    name: str
    kind: str
    path: str
    paper: str
    buys: str
    display: str = ""
    private: bool = True
    tags: frozenset = frozenset()
    factory: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    synthetic_kwargs: Mapping[str, Any] = field(default_factory=dict, hash=False)
    check_params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    requires: tuple[str, ...] = ()
    audit: str = ""
    test_params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    coarsest_params: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"MethodSpec {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        for attr in ("path", "factory"):
            value = getattr(self, attr)
            if value is not None and value.count(":") != 1:
                raise ValueError(f"MethodSpec {self.name!r}: {attr} must be 'module:name', got {value!r}")
        if not self.display:
            object.__setattr__(self, "display", self.name)
        object.__setattr__(self, "tags", frozenset(self.tags))
        for attr in ("params", "synthetic_kwargs", "check_params", "test_params", "coarsest_params"):
            object.__setattr__(self, attr, MappingProxyType(dict(getattr(self, attr))))

    @property
    def composite(self) -> bool:
        """True for an entry made of other registered classes (its name is not a class name)."""
        return not self.path.endswith(":" + self.name)

    def missing(self) -> list[str]:
        """The optional packages in ``requires`` that are not installed."""
        return [pkg for pkg in self.requires if importlib.util.find_spec(pkg) is None]

    def _import(self, path: str) -> Any:
        absent = self.missing()
        if absent:
            raise MethodUnavailableError(f"{self.name} needs the optional package(s) {', '.join(absent)}: "
                                         f"pip install {' '.join(absent)}", name=absent[0])
        module_name, attr = path.split(":")
        try:
            return getattr(importlib.import_module(module_name), attr)
        except Exception as exc:   # an import error, a missing name, a broken module: all named
            raise MethodUnavailableError(f"{self.name} could not be loaded from {path}: "
                                         f"{type(exc).__name__}: {exc}") from exc

    def load(self) -> type:
        """The class, imported now; :class:`~dpexplore.exceptions.MethodUnavailableError` naming the
        method and the cause when it cannot be."""
        return self._import(self.path)

    def build(self, schema: Any = None, **params: Any) -> Any:
        """One unfitted instance with the public ``schema`` (given to the constructor) and
        ``params`` (e.g. ``epsilon``, ``random_state``, ``accountant``) over :attr:`params`."""
        kwargs = {**self.params, **params}
        if self.factory is not None:
            return self._import(self.factory)(schema, **kwargs)
        cls = self.load()
        return cls(**kwargs) if schema is None else cls(schema=schema, **kwargs)

    def check_instance(self, **params: Any) -> Any:
        """The instance scikit-learn's checks run on: the class with :attr:`check_params`
        (registered methods named by :class:`Nested` are built the same way)."""
        kwargs = {k: (get_method(v.name).check_instance(**v.params) if isinstance(v, Nested) else v)
                  for k, v in {**self.check_params, **params}.items()}
        return self.load()(**kwargs)


def _tags(*names: str) -> frozenset:
    return frozenset(names)


_SAMPLED = {"values": "sampled"}

#: Every method, in the order tables list them. Tags: "showdown" (notebook 07's comparison),
#: "tables" (:func:`dpexplore.tables.release`), "fits_source" (``fit(source)``).
METHODS: tuple[MethodSpec, ...] = (
    # ---------------------------------------------------------------- publishers
    MethodSpec("PrivPfC", "publisher", "dpexplore.publish.privpfc:PrivPfC", "Su et al. 2018, Alg. 2",
               "noisy record count, one exponential-mechanism grid choice, Laplace counts of every (cell, class)",
               tags=_tags("showdown", "tables", "fits_source"), synthetic_kwargs=_SAMPLED, test_params={"theta": 40},
               coarsest_params={"theta": 1}, audit="tests/test_audit_publish.py::test_release_is_private"),
    MethodSpec("DiffMulti", "publisher", "dpexplore.publish.diffmulti:DiffMulti", "Al-Hussaeni et al. 2018, Alg. 1",
               "private splits (exponential mechanism), noisy partition sizes, Laplace leaf × class counts",
               tags=_tags("showdown", "tables", "fits_source"), synthetic_kwargs=_SAMPLED, test_params={"h": 12},
               coarsest_params={"h": 0},
               audit="tests/test_audit_diffmulti.py::test_release_is_private_at_its_claimed_epsilon"),
    MethodSpec("DiffGen", "publisher", "dpexplore.publish.diffgen:DiffGen", "Mohammed et al. 2011, Alg. 1",
               "private specializations (exponential mechanism), Laplace leaf × class counts",
               tags=_tags("showdown", "tables", "fits_source"), synthetic_kwargs=_SAMPLED, test_params={"steps": 3},
               coarsest_params={"steps": 0},
               audit="tests/test_audit_diffmulti.py::test_release_is_private_at_its_claimed_epsilon"),
    MethodSpec("ProjectedHistogram", "publisher", "dpexplore.publish.projected:ProjectedHistogram",
               "Vinterbo 2012, §2.3",
               "noisy record count, k attributes by the exponential mechanism, thresholded Laplace histogram",
               display="Projected histogram", tags=_tags("showdown", "tables", "fits_source"), test_params={"k": 2},
               coarsest_params={"k": 1},
               audit="tests/test_audit_lattice_projected.py::test_hardened_release_is_private"),
    MethodSpec("PrivPfCSelNF", "publisher", "dpexplore.publish.privpfc:PrivPfCSelNF", "Su et al. 2018, §5.5, Fig. 10",
               "not differentially private: the grid is chosen without noise (a diagnostic)", private=False,
               tags=_tags("fits_source"), test_params={"theta": 40}),
    # ---------------------------------------------------------------- classifiers
    MethodSpec("PrivateNaiveBayes", "classifier", "dpexplore.models.naive_bayes:PrivateNaiveBayes",
               "master's thesis, Alg. 1", "Laplace on/off counts per class and feature",
               tags=_tags("tables", "fits_source"),
               factory="dpexplore.registry:naive_bayes_on_schema", check_params={"binarize": 0.0},
               audit="tests/test_audit_models.py::test_audit_naive_bayes"),
    MethodSpec("PrivateGaussianNB", "classifier", "dpexplore.models.naive_bayes:PrivateGaussianNB",
               "master's thesis, Alg. 1 (Gaussian extension)", "Laplace counts and sums per class and feature",
               audit="tests/test_audit_models.py::test_audit_gaussian_naive_bayes"),
    MethodSpec("PrivateLogisticRegression", "classifier", "dpexplore.models.logistic:PrivateLogisticRegression",
               "Chaudhuri et al. 2011, Alg. 1 and 2", "the weights, by output or objective perturbation",
               audit="tests/test_audit_models.py::test_audit_logistic_regression"),
    MethodSpec("k-subset + NB", "classifier", "dpexplore.models.pipeline:SelectThenTrain",
               "master's thesis, Alg. 5 and Alg. 1",
               "k features by the exponential mechanism (half of ε), Naive Bayes counts on them (the other half)",
               tags=_tags("showdown"), factory="dpexplore.registry:thesis_pipeline",
               audit="tests/test_audit_models.py::test_audit_select_then_train"),
    MethodSpec("PrivateLRClassifier", "classifier", "dpexplore.models.logistic:PrivateLRClassifier",
               "Chaudhuri et al. 2011, Alg. 2", "one objective-perturbation model per class (one-vs-rest)",
               display="Private LR", tags=_tags("showdown"),
               audit="tests/test_audit_models.py::test_audit_private_lr_classifier"),
    MethodSpec("SelectThenTrain", "classifier", "dpexplore.models.pipeline:SelectThenTrain",
               "Dwork & Roth 2014, §3.5", "a private selector's and a private model's releases (ε split between them)",
               tags=_tags("fits_source"),
               check_params={"selector": Nested("PrivateKSubsetSelector", {"k": 1, "binarize": 0.0}),
                             "model": Nested("PrivateNaiveBayes", {"binarize": 0.0}), "epsilon": 1.0},
               audit="tests/test_audit_models.py::test_audit_select_then_train"),
    MethodSpec("HistogramClassifier", "classifier", "dpexplore.models.histogram:HistogramClassifier",
               "Su et al. 2018, §4", "nothing by itself: the argmax classifier of counts on a fixed grid",
               private=False, tags=_tags("fits_source")),
    # ---------------------------------------------------------------- selectors
    MethodSpec("PrivateKSubsetSelector", "selector", "dpexplore.select.thesis:PrivateKSubsetSelector",
               "master's thesis, Alg. 5", "the chosen set of k features (one exponential-mechanism draw)",
               tags=_tags("fits_source"), check_params={"k": 1, "binarize": 0.5},
               audit="tests/test_audit_selectors.py::test_audit_private_k_subset_selector"),
    MethodSpec("ScorePerturbationSelector", "selector", "dpexplore.select.stoddard:ScorePerturbationSelector",
               "Stoddard et al. 2014, §3.2", "the features whose Laplace-perturbed score passes",
               tags=_tags("fits_source"), check_params={"k": 1, "binarize": 0.5},
               audit="tests/test_audit_selectors.py::test_audit_score_perturbation_selector"),
    MethodSpec("ExponentialTopKSelector", "selector", "dpexplore.select.stoddard:ExponentialTopKSelector",
               "McSherry & Talwar 2007", "k features by the exponential mechanism (one shot or peeling)",
               tags=_tags("fits_source"), check_params={"k": 1, "binarize": 0.5},
               audit="tests/test_audit_selectors.py::test_audit_exponential_top_k_selector"),
    MethodSpec("SparseVectorSelector", "selector", "dpexplore.select.stoddard:SparseVectorSelector",
               "Dwork & Roth 2014, §3.6", "the first features whose noisy score passes a noisy threshold",
               tags=_tags("fits_source"), check_params={"binarize": 0.5},
               audit="tests/test_audit_selectors.py::test_audit_sparse_vector_selector"),
    MethodSpec("IterativeSelector", "selector", "dpexplore.select.thesis:IterativeSelector",
               "master's thesis, Alg. 4", "not differentially private: kept as a labelled example",
               private=False, check_params={"k": 1, "binarize": 0.5},
               audit="tests/test_audit_selectors.py::test_audit_iterative_selector_is_flagged_as_documented"),
    MethodSpec("PrivateThresholdTesting", "selector", "dpexplore.select.stoddard:PrivateThresholdTesting",
               "Stoddard et al. 2014, Alg. 2", "not differentially private as printed: kept for teaching",
               private=False, check_params={"binarize": 0.5},
               audit="tests/test_audit_selectors.py::test_audit_private_threshold_testing_is_flagged_as_documented"),
    MethodSpec("ClusterSelection", "selector", "dpexplore.select.stoddard:ClusterSelection",
               "Stoddard et al. 2014, Alg. 1", "not differentially private as described: kept for teaching",
               private=False, check_params={"binarize": 0.5},
               audit="tests/test_audit_selectors.py::test_audit_cluster_selection_is_flagged_as_documented"),
    # ---------------------------------------------------------------- transformers
    MethodSpec("Binarizer", "transformer", "dpexplore.encode:Binarizer",
               "master's thesis, App. A.8",
               "nothing: 0/1 indicators from the public schema alone (reads no value, spends no ε)"),
)

#: Estimator classes of dpexplore that are not methods, with the reason (the completeness test in
#: ``tests/test_registry.py`` fails on any estimator class neither here nor in :data:`METHODS`).
EXCLUDED: Mapping[str, str] = MappingProxyType({
    "dpexplore.publish.base:Publisher": "the base class of every publisher",
    "dpexplore.publish.partition:RegionRelease": "the base class DiffMulti and DiffGen share",
    "dpexplore.select.base:SelectorBase": "the base class of every selector",
})


def all_methods(kind: str | None = None, *, tag: str | None = None, private: bool | None = None) -> list[MethodSpec]:
    """The registered methods, in :data:`METHODS` order, optionally of one ``kind``, with one
    ``tag``, or only the differentially private ones (``private=True``) or only the others."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
    return [s for s in METHODS if (kind is None or s.kind == kind) and (tag is None or tag in s.tags)
            and (private is None or s.private == private)]


def get_method(name: str) -> MethodSpec:
    """The spec registered as ``name`` (the class name, or a composite's own name)."""
    for spec in METHODS:
        if spec.name == name:
            return spec
    raise KeyError(f"no method named {name!r}; registered: {', '.join(s.name for s in METHODS)}")


def markdown_table(kind: str | None = None) -> str:
    """The methods as a Markdown table: method, kind, what one ε buys, paper (README, docs)."""
    rows = ["| method | kind | what one ε buys | paper |", "|---|---|---|---|"]
    for s in sorted(all_methods(kind), key=lambda s: KINDS.index(s.kind)):
        label = s.name if s.composite else f"`{s.name}`"
        kind_text = s.kind if s.private else f"{s.kind}, **not DP**"
        rows.append(f"| {label} | {kind_text} | {s.buys} | {s.paper} |")
    return "\n".join(rows) + "\n"


# ------------------------------------------------------------------------ factories
def thesis_pipeline(schema: Any, *, epsilon: float = 1.0, random_state: Any = None,
                    accountant: Any = None) -> Any:
    """The thesis pipeline on a table with a public ``schema``: one-hot encoding from the schema
    (App. A.8) → DP k-subset selection (k = 10, Alg. 5, half of ε) → DP Bernoulli Naive Bayes
    (Alg. 1, the other half), both with the schema's declared classes (with more than two, the
    selection scores the last class against the rest)."""
    from sklearn.pipeline import make_pipeline

    from .encode import Binarizer
    from .models.naive_bayes import PrivateNaiveBayes
    from .models.pipeline import SelectThenTrain
    from .select.thesis import PrivateKSubsetSelector

    return make_pipeline(Binarizer(schema), SelectThenTrain(PrivateKSubsetSelector(k=10), PrivateNaiveBayes(),
                                                            classes=list(schema.classes), epsilon=epsilon,
                                                            random_state=random_state, accountant=accountant))


def naive_bayes_on_schema(schema: Any = None, **params: Any) -> Any:
    """Private Bernoulli Naive Bayes (thesis Alg. 1); with a public ``schema``, on its one-hot
    encoding (App. A.8) with the schema's classes, as a pipeline that takes the raw table."""
    from .encode import Binarizer
    from .models.naive_bayes import PrivateNaiveBayes

    if schema is None:
        return PrivateNaiveBayes(**params)
    from sklearn.pipeline import make_pipeline

    return make_pipeline(Binarizer(schema), PrivateNaiveBayes(classes=list(schema.classes), **params))


#: The files holding the table of methods between ``<!-- methods-table -->`` markers (``--write``).
TABLE_FILES = ("README.md", "docs/methods.md")
_TABLE_BLOCK = r"(<!-- methods-table -->\n)(.*?)(<!-- /methods-table -->)"


def write_tables(root: Any) -> list[str]:
    """Rewrite the table of methods in each of :data:`TABLE_FILES` under ``root`` (a checkout);
    returns the files that changed. A file without the markers is an error."""
    import re
    from pathlib import Path

    changed = []
    for name in TABLE_FILES:
        path = Path(root) / name
        text = path.read_text(encoding="utf-8")
        if not re.search(_TABLE_BLOCK, text, re.S):
            raise ValueError(f"{name} lacks the <!-- methods-table --> ... <!-- /methods-table --> block")
        new = re.sub(_TABLE_BLOCK, lambda m: m.group(1) + markdown_table() + m.group(3), text, flags=re.S)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(name)
    return changed


def _main(argv: list[str] | None = None) -> int:
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m dpexplore.registry", description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print the table of methods (README, docs)")
    parser.add_argument("--write", action="store_true",
                        help=f"rewrite the table in {' and '.join(TABLE_FILES)} (run from the checkout)")
    args = parser.parse_args(argv)
    if args.write:
        changed = write_tables(Path.cwd())
        print(f"rewrote {', '.join(changed)}" if changed else "the tables are current")
    elif args.markdown:
        print(markdown_table(), end="")
    else:
        for spec in METHODS:
            print(f"{spec.name:<28} {spec.kind:<12} {spec.path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
