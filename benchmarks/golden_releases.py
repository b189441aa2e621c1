"""Seed-for-seed guard: fingerprints of releases made through the public API.

    python benchmarks/golden_releases.py check tests/data/golden_releases.json   # every fingerprint equal?
    python benchmarks/golden_releases.py write tests/data/golden_releases.json   # after a change that must move them

A refactoring must not move any release: the same seed gives the same noisy counts, grids,
trees, ledgers, predictions and synthetic tables (``tests/test_golden_releases.py`` runs
``check``). A change that moves a release on purpose (a privacy fix) rewrites the file and names
the change in its commit message. The baseline was recorded before the package's layers were
redesigned (one publisher base, schema in ``__init__``, renamed ε shares).

The publishers are the registry's (:func:`dpexplore.registry.all_methods`): every private
publisher is fingerprinted, under its name with its ``test_params`` unless :data:`CASES` records
cases of it. A new publisher's fingerprints are reported as not recorded until ``write`` records
them. Warnings are silenced in this process only (small noisy releases warn by design)."""
import hashlib, json, sys, warnings
import numpy as np
import pandas as pd

warnings.simplefilter("ignore")
from dpexplore.datasets import load_adult, load_iris, train_test_split  # noqa: E402
from dpexplore import sources  # noqa: E402


def h(obj) -> str:
    m = hashlib.sha256()
    if isinstance(obj, pd.DataFrame):
        m.update(pd.util.hash_pandas_object(obj.reset_index(drop=True), index=False).values.tobytes())
        m.update(repr(list(obj.columns)).encode()); m.update(repr(list(map(str, obj.dtypes))).encode())
    elif isinstance(obj, np.ndarray):
        m.update(np.ascontiguousarray(obj).tobytes() if obj.dtype != object else repr(obj.tolist()).encode())
        m.update(str(obj.dtype).encode())
    else:
        m.update(repr(obj).encode())
    return m.hexdigest()[:16]


def ledger(est):
    led = est.ledger_
    return h(led[["label", "epsilon", "charged"]].round(15)) if len(led) else "empty"


#: The recorded cases of the registered publishers: case name → (method name, parameters).
CASES = {"PrivPfC": ("PrivPfC", dict(theta=300, shares=(0.03, 0.37, 0.60))),
         "PrivPfC-marginals": ("PrivPfC", dict(theta=300, marginal_share=0.2)),
         "DiffMulti": ("DiffMulti", dict(h=60)), "DiffMulti-ncp": ("DiffMulti", dict(h=30, utility="ncp")),
         "DiffGen": ("DiffGen", dict(steps=5)),
         "DiffGen-parents": ("DiffGen", dict(steps=5, marginal_share=0.9)),
         "ProjectedHistogram": ("ProjectedHistogram", dict(k=2)),
         "ProjectedHistogram-heuristic": ("ProjectedHistogram", dict()),
         "ProjectedHistogram-marginals": ("ProjectedHistogram", dict(k=1, marginal_share=0.3)),
         "ProjectedHistogram-substitution-marginals": ("ProjectedHistogram",
                                                       dict(k=2, neighbours="substitution", marginal_share=0.2))}


def publisher_cases() -> dict:
    """:data:`CASES`, and every other registered private publisher with its ``test_params``."""
    from dpexplore.registry import all_methods
    cases = dict(CASES)
    for spec in all_methods("publisher", private=True):
        if all(method != spec.name for method, _ in CASES.values()):
            cases[spec.name] = (spec.name, dict(spec.test_params))
    return cases


def fingerprints() -> dict:
    from dpexplore.registry import get_method
    out = {}
    frame, schema = load_adult()
    X_tr, X_te, y_tr, y_te = train_test_split(frame, schema, test_size=0.25, random_state=7)
    X_tr, y_tr = X_tr.iloc[:3000], y_tr.iloc[:3000]
    X_te, y_te = X_te.iloc[:1000], y_te.iloc[:1000]
    iris, ischema = load_iris()
    Xi, yi = iris[ischema.predictors], iris[ischema.target]
    for name, (method, kw) in publisher_cases().items():
        spec = get_method(method)
        for seed in (0, 1):
            for eps in (0.3, 1.0):
                est = spec.build(schema, epsilon=eps, random_state=seed, **kw)
                key = f"{name}/eps={eps}/seed={seed}"
                try:
                    est.fit(X_tr, y_tr)
                except ValueError as exc:     # a method that refuses Adult's public domain: that is its release
                    out[f"{key}/fit"] = f"error {type(exc).__name__}"
                    continue
                for attr in ("counts_", "noisy_counts_", "n_hat_", "grid_", "selected_", "threshold_", "tree_",
                             "marginal_parents_", "classifier_data_"):
                    if hasattr(est, attr):
                        v = getattr(est, attr)
                        v = (v.codes, v.values) if hasattr(v, "codes") and hasattr(v, "values") else v
                        out[f"{key}/{attr}"] = h(v)
                out[f"{key}/ledger"] = ledger(est)
                out[f"{key}/predict"] = h(np.asarray(est.predict(X_te)))
                out[f"{key}/synthetic"] = h(est.synthetic(random_state=0))
                out[f"{key}/synthetic_n"] = h(est.synthetic(random_state=3, n=500))
        # fit(source): the same release from a Source
        est = spec.build(epsilon=1.0, random_state=5, **kw)
        src = sources.pandas(X_tr.assign(**{schema.target: y_tr}), schema)
        try:
            est.fit(src)
            out[f"{name}/source/predict"] = h(np.asarray(est.predict(X_te)))
            out[f"{name}/source/synthetic"] = h(est.synthetic(random_state=0))
        except (TypeError, ValueError) as exc:
            out[f"{name}/source"] = f"error {type(exc).__name__}"
    # models and selectors
    from dpexplore.models import (Binarizer, HistogramClassifier, PrivateGaussianNB, PrivateLogisticRegression,
                                  PrivateLRClassifier, PrivateNaiveBayes, SelectThenTrain)
    from dpexplore.select.thesis import PrivateKSubsetSelector
    from dpexplore.select.stoddard import ExponentialTopKSelector, ScorePerturbationSelector, SparseVectorSelector
    B = Binarizer(schema).fit()
    Btr, Bte = B.transform(X_tr), B.transform(X_te)
    classes = list(schema.classes)
    for seed in (0, 1):
        models = {
            "PrivateNaiveBayes": PrivateNaiveBayes(1.0, classes=classes, random_state=seed),
            "PrivateLogisticRegression": PrivateLogisticRegression(1.0, classes=classes, random_state=seed,
                                                                   bounds=(0.0, 1.0)),
            "SelectThenTrain": SelectThenTrain(selector=PrivateKSubsetSelector(k=5), model=PrivateNaiveBayes(),
                                               epsilon=1.0, classes=classes, random_state=seed,
                                               selection_share=0.5),
            "ScorePerturbation": ScorePerturbationSelector(epsilon=0.5, k=5, max_ones=20, classes=classes,
                                                           random_state=seed),
            "ExponentialTopK": ExponentialTopKSelector(epsilon=0.5, k=5, max_ones=20, classes=classes,
                                                      random_state=seed),
            "SparseVector": SparseVectorSelector(epsilon=0.5, threshold=500.0, cutoff=5, max_ones=20,
                                                classes=classes, random_state=seed),
        }
        for name, est in models.items():
            est.fit(Btr, y_tr)
            key = f"{name}/seed={seed}"
            out[f"{key}/ledger"] = ledger(est)
            if hasattr(est, "predict"):
                out[f"{key}/predict"] = h(np.asarray(est.predict(Bte)))
            else:
                out[f"{key}/support"] = h(est.get_support())
        gnb = PrivateGaussianNB(epsilon=1.0, classes=list(ischema.classes), random_state=seed, bounds=ischema)
        gnb.fit(Xi, yi)
        out[f"PrivateGaussianNB/seed={seed}/predict"] = h(np.asarray(gnb.predict(Xi)))
        lr = PrivateLRClassifier(ischema, 1.0, seed).fit(Xi, yi)
        out[f"PrivateLRClassifier/iris/seed={seed}/proba"] = h(np.round(lr.predict_proba(Xi), 12))
    hc = HistogramClassifier(schema=schema).fit(X_tr, y_tr)
    out["HistogramClassifier/predict"] = h(np.asarray(hc.predict(X_te)))
    return out


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    got = fingerprints()
    if mode == "write":
        json.dump(got, open(path, "w"), indent=1, sort_keys=True)
        print(f"wrote {len(got)} fingerprints to {path}")
    else:
        want = json.load(open(path))
        new = sorted(set(got) - set(want))
        bad = sorted(k for k in want if want[k] != got.get(k))
        for k in bad:
            print(f"DIFF {k}: {want[k]} -> {got.get(k)}")
        for k in new:
            print(f"NEW {k}: not recorded (a new method or case: record it with `write`)")
        print(f"{len(want)} fingerprints, {len(bad)} differ" + (f", {len(new)} not recorded" if new else ""))
        sys.exit(1 if bad or new else 0)
