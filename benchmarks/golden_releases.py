"""Seed-for-seed guard: fingerprints of releases made through the public API.

    python benchmarks/golden_releases.py check tests/data/golden_releases.json   # every fingerprint equal?
    python benchmarks/golden_releases.py write tests/data/golden_releases.json   # after a change that must move them

A refactoring must not move any release: the same seed gives the same noisy counts, grids,
trees, ledgers, predictions and synthetic tables (``tests/test_golden_releases.py`` runs
``check``). A change that moves a release on purpose (a privacy fix) rewrites the file and names
the change in its commit message. The baseline was recorded before the package's layers were
redesigned (one publisher base, schema in ``__init__``, renamed ε shares); the script probes the
constructor so that both spellings fingerprint the same release. Warnings are silenced in this
process only (deprecated spellings warn by design)."""
import hashlib, inspect, json, sys, warnings
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


def params(cls):
    return inspect.signature(cls.__init__).parameters


def make(cls, schema, **kw):
    """Construct with the schema in __init__ when the class takes it (new API)."""
    p = params(cls)
    if "split" in kw and "split" not in p and "shares" in p:
        kw["shares"] = kw.pop("split")
    if "selection_fraction" in kw and "selection_fraction" not in p and "selection_share" in p:
        kw["selection_share"] = kw.pop("selection_fraction")
    if schema is not None and "schema" in p and cls.__name__ in PUBLISHERS:
        return cls(schema=schema, **kw), True
    return cls(**kw), False


def fit(est, in_init, X, y, schema):
    return est.fit(X, y) if in_init else est.fit(X, y, schema)


def ledger(est):
    led = est.ledger_
    return h(led[["label", "epsilon", "charged"]].round(15)) if len(led) else "empty"


PUBLISHERS = {"PrivPfC", "DiffMulti", "DiffGen", "ProjectedHistogram"}


def fingerprints() -> dict:
    from dpexplore.publish import DiffGen, DiffMulti, PrivPfC, ProjectedHistogram
    out = {}
    frame, schema = load_adult()
    X_tr, X_te, y_tr, y_te = train_test_split(frame, schema, test_size=0.25, random_state=7)
    X_tr, y_tr = X_tr.iloc[:3000], y_tr.iloc[:3000]
    X_te, y_te = X_te.iloc[:1000], y_te.iloc[:1000]
    iris, ischema = load_iris()
    Xi, yi = iris[ischema.predictors], iris[ischema.target]
    cases = {"PrivPfC": (PrivPfC, dict(theta=300, split=(0.03, 0.37, 0.60))),
             "PrivPfC-marginals": (PrivPfC, dict(theta=300, marginal_share=0.2)),
             "DiffMulti": (DiffMulti, dict(h=60)), "DiffMulti-ncp": (DiffMulti, dict(h=30, utility="ncp")),
             "DiffGen": (DiffGen, dict(steps=5)),
             "ProjectedHistogram": (ProjectedHistogram, dict(k=2)),
             "ProjectedHistogram-heuristic": (ProjectedHistogram, dict()),
             "ProjectedHistogram-substitution-marginals": (ProjectedHistogram,
                                                           dict(k=2, neighbours="substitution", marginal_share=0.2))}
    for name, (cls, kw) in cases.items():
        for seed in (0, 1):
            for eps in (0.3, 1.0):
                est, in_init = make(cls, schema, epsilon=eps, random_state=seed, **kw)
                fit(est, in_init, X_tr, y_tr, schema)
                key = f"{name}/eps={eps}/seed={seed}"
                for attr in ("counts_", "noisy_counts_", "n_hat_", "grid_", "selected_", "threshold_", "tree_"):
                    if hasattr(est, attr):
                        v = getattr(est, attr)
                        v = (v.codes, v.values) if hasattr(v, "codes") and hasattr(v, "values") else v
                        out[f"{key}/{attr}"] = h(v)
                out[f"{key}/ledger"] = ledger(est)
                out[f"{key}/predict"] = h(np.asarray(est.predict(X_te)))
                out[f"{key}/synthetic"] = h(est.synthetic(random_state=0))
                out[f"{key}/synthetic_n"] = h(est.synthetic(random_state=3, n=500))
        # fit(source): the same release from a Source
        est, _ = make(cls, None, epsilon=1.0, random_state=5, **kw)
        src = sources.pandas(X_tr.assign(**{schema.target: y_tr}), schema)
        try:
            est.fit(src)
            out[f"{name}/source/predict"] = h(np.asarray(est.predict(X_te)))
            out[f"{name}/source/synthetic"] = h(est.synthetic(random_state=0))
        except (TypeError, ValueError) as exc:
            out[f"{name}/source"] = f"error {type(exc).__name__}"
    # models and selectors
    from dpexplore.models import (Binarizer, HistogramClassifier, PrivateGaussianNB, PrivateLogisticRegression,
                                  PrivateNaiveBayes, SelectThenTrain)
    from dpexplore.select.thesis import PrivateKSubsetSelector
    from dpexplore.select.stoddard import ExponentialTopKSelector, ScorePerturbationSelector, SparseVectorSelector
    try:
        from dpexplore.models import PrivateLRClassifier
    except ImportError:
        from dpexplore.evaluate.showdown import PrivateLRClassifier
    B = Binarizer(schema).fit()
    Btr, Bte = B.transform(X_tr), B.transform(X_te)
    classes = list(schema.classes)
    for seed in (0, 1):
        models = {
            "PrivateNaiveBayes": PrivateNaiveBayes(1.0, classes=classes, random_state=seed),
            "PrivateLogisticRegression": PrivateLogisticRegression(1.0, classes=classes, random_state=seed,
                                                                   bounds=(0.0, 1.0)),
            "SelectThenTrain": make(SelectThenTrain, None, selector=PrivateKSubsetSelector(k=5),
                                    model=PrivateNaiveBayes(), epsilon=1.0, classes=classes,
                                    random_state=seed, selection_fraction=0.5)[0],
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
        gnb, _ = make(PrivateGaussianNB, None, epsilon=1.0, classes=list(ischema.classes), random_state=seed,
                      bounds=ischema)
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
        bad = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
        for k in bad:
            print(f"DIFF {k}: {want.get(k)} -> {got.get(k)}")
        print(f"{len(want)} fingerprints, {len(bad)} differ")
        sys.exit(1 if bad else 0)
