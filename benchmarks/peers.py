"""What a user would pick instead, at the showdown's ε: diffprivlib and OpenDP on Adult (and MST on
the generated messy and customer tables).

Writes ``notebooks/results/peers.csv`` (one row per library × method × ε × metric: the mean test
``accuracy`` over ``n_runs`` splits, which notebook 07 draws as reference lines, and for MST the
shape of its synthetic table, ``tvd_1way`` and ``tvd_2way``; ``dataset`` names the table) and the
sidecar ``notebooks/results/peers.json`` (versions, settings, per-run values, timings).

The task is notebook 07's: Adult (``dpexplore.datasets.load_adult``, the bundled file), the
showdown's ε grid and repetitions, and the very train/test splits of ``sweep(..., random_state=
2026)`` (stratified 80/20; recomputed here with the sweep's own ``Splits``). The peers:

- diffprivlib ``GaussianNB``: the 6 numeric predictors (diffprivlib's GaussianNB models numbers),
  ``bounds`` = the schema's declared bounds, classes from the schema; ε-DP (δ = 0).
- diffprivlib ``LogisticRegression``: numeric predictors scaled into [0, 1] by their declared
  bounds, the 8 categoricals one-hot over their declared categories (the encoding of dpexplore's
  ``PrivateLRClassifier``), so every row has L2 norm ≤ √14 = ``data_norm`` (declared, not read
  from the data); ε-DP (δ = 0).
- OpenDP ``dp.mbi.MST()`` contingency table (McKenna, Miklau, Sheldon 2021) released through a
  ``dp.Context`` with every key and cut declared (categories from the schema; numeric cuts = the
  leaf intervals of the public Adult taxonomies), then ``synthesize()``; the classifier trained on
  the synthetic table is the showdown's non-private reference pipeline (one-hot → scikit-learn
  logistic regression) on the released domain: numbers as their public bin, the real test rows
  binned the same way. The synthetic rows are drawn with ``synthesize(method="sample")`` (i.i.d.
  from the fitted model; :data:`MST_SYNTHESIS`): mbi's default randomized rounding fills each
  column by rank within its parent's group and invents correlations the model does not hold,
  which would misstate the peer. Its fidelity: the mean total-variation distance between the
  synthetic table and the training part over the same public bins as ours
  (:func:`dpexplore.evaluate.fidelity.fidelity_summary`, computed here in the project's venv
  from the synthetic table the worker writes: one definition of the bins and of the distance),
  1-way over every column and 2-way over every pair, the target included. MST runs under ρ-zCDP; ρ is
  the largest with ρ + 2√(ρ ln(1/δ)) ≤ ε (Bun & Steinke 2016, Prop. 1.3), so the release is
  (ε, δ)-DP with δ = 1e-6 (``--delta``). Optional ``--mst-pure``: MST under pure ε-DP (Laplace
  noise; OpenDP allows δ = 0 because every key and cut is declared).

``--datasets messy`` (default: ``adult`` alone) runs MST, under both accountings (``--skip-zcdp``:
pure ε only), on the generated messy table of ``benchmarks/fidelity.py`` (its ``load_dataset``:
notebook 08's declarations, every key and cut declared), or ``customers`` on its generated customer
table (``make_customer_table``'s declared schema; each run also gains the shares of synthetic rows
breaking the table's rules, :data:`RULE_METRICS`), split as that benchmark splits it (:func:`dataset_splits`: ``bernoulli_split``
per record with the generator of its default run's seed 0, 1, 2), so MST and our publishers are
measured on the very same training parts, public bins and distance. diffprivlib is skipped there:
it releases no synthetic table and the question is the table's shape. The per-record split makes
the training size private, so the synthetic table has the model's total (estimated from the noisy
marginals), not the training part's size as on Adult. A run that is not Adult alone writes to
``benchmarks/results/peers_<datasets>.csv`` unless ``--out`` says otherwise.

The peers are NOT dependencies of dpexplore: they run in their own virtual environments
(diffprivlib 0.6.6 needs scikit-learn < 1.6), outside the repository::

    python3.11 -m venv /work/peers-env-dpl
    /work/peers-env-dpl/bin/pip install "diffprivlib==0.6.6" "scikit-learn<1.6" pandas
    python3.11 -m venv /work/peers-env-odp
    /work/peers-env-odp/bin/pip install "opendp[mbi]==0.16.*" scikit-learn pandas

Run (from the repository root, with the project's venv; it writes the data and the splits to a
temporary folder and runs each peer in its own interpreter, which never imports dpexplore)::

    .venv/bin/python benchmarks/peers.py --dpl-python /work/peers-env-dpl/bin/python \\
        --odp-python /work/peers-env-odp/bin/python [--repetitions 3] [--epsilons 0.03 0.1 0.3 1]

A peer whose interpreter is missing or fails gets rows with an empty ``value`` and the reason in
``notes`` (never a made-up number). ``--only dpl|odp`` reruns one peer and keeps the other's rows.

The stored files came from ``--only dpl`` (3 repetitions: 74 s wall) then ``--only odp
--repetitions 1`` (4 MST releases on the 36,177 training rows, one per ε, each synthesized with
``method="sample"``: 925 s of fitting, 991 s wall on the shared 2-core machine; the first
release carries JAX's compilation), so the MST rows average one run (``n_runs``). ``--only odp
--epsilons 1 --mst-pure --repetitions 3 --out benchmarks/results/peers_mst_pure.csv`` ran MST
under pure ε-DP at ε = 1 beside the ρ-zCDP one on the showdown's first 3 splits (118 s and 165 s
of fitting, 293 s wall): accuracy 0.794, TVD 0.006 / 0.042 (2-way 0.040–0.043 across the runs),
against 0.800, 0.005 / 0.039. opendp 0.16's MST refuses its own
selection plan by one ulp (opendp/opendp#2789); ``_patch_mst_selection_budget`` gives the
selection step a budget smaller by a factor 1 − 1e-9, so nothing spends more than stated.
(The ``dataset`` column was added to both files with ``--rebuild``: same values.) ``--only odp
--epsilons 0.1 --mst-pure --repetitions 3`` on the same splits (294 s of fitting, 305 s wall)
added ε = 0.1: its runs were appended to the sidecar's ``raw`` (each command under ``runs``) and
the CSV rewritten with ``--rebuild``. Mean over the 3 runs, TVD 1-way / 2-way and accuracy at
ε = 0.1: pure ε .032 / .093, .741 (the held-out majority class is .752, stratified splits); ρ-zCDP .025 / .075, .806.

``--datasets messy --only odp --epsilons 0.1 1 --repetitions 3 --mst-pure`` wrote
``benchmarks/results/peers_messy.csv`` (12 releases on ≈ 4,800 training rows: 484 s of fitting,
490 s wall). Mean over the 3 splits, TVD 1-way / 2-way and accuracy: ρ-zCDP .093 / .192, .660 at
ε = 0.1 and .016 / .052, .733 at ε = 1; pure ε .122 / .248, .677 and .018 / .063, .698 (held-out
majority class .687). OpenDP's extra bucket for undeclared values gets noisy counts: up to ≈ 14 %
of the synthetic rows hold a null at ε = 0.1, ≈ 2 % at ε = 1, charged by the distance as a value
off the domain and dropped before the classifier is fitted.

``--datasets customers --only odp --epsilons 0.1 1 --repetitions 10 --mst-pure --skip-zcdp`` wrote
``benchmarks/results/peers_customers.csv`` (20 releases under pure ε on ≈ 5,600 training rows:
706 s of fitting, 711 s wall, partly beside other jobs). Mean over the 10 splits (fidelity.py's
ten seeds of that table), TVD 1-way / 2-way, accuracy and the share of synthetic rows breaking
the worst add-on rule and the phone rule: .100 / .211, .708, .390, .154 at ε = 0.1 and .013 /
.053, .735, .141, .097 at ε = 1 (held-out majority class .742). A run measures a pair of columns
or it does not: at ε = 1 the phone rule breaks in 1.2–1.6 % of the rows in 2 runs of 10 and in
10–13 % in the others, the worst add-on rule in 1–10 % or in 34–36 % (3 runs of 10); three runs
(an earlier file) gave .064 and .040: two of them measured the phone pair, none missed an add-on. Nulls (OpenDP's bucket for undeclared
values) are frequent at ε = 0.1: only 1,934–3,895 synthetic rows per run hold none (5,144–5,383
at ε = 1); a null counts as neither "No" nor the rule's label. ``benchmarks/fidelity.py
--datasets customers --no-run --peers benchmarks/results/peers_customers.json`` shows them beside
our publishers.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

# Only the standard library at module level: the same file is the worker inside the peers' venvs.

ROOT = Path(__file__).resolve().parents[1]
OUT_CSV = ROOT / "notebooks" / "results" / "peers.csv"
COLUMNS = ["library", "library_version", "method", "epsilon", "delta", "metric", "value", "n_runs", "notes",
           "dataset"]
#: the tables the peers can run on (``--datasets``): Adult as notebook 07 splits it, and the generated messy
#: and customer tables of ``benchmarks/fidelity.py`` split as that benchmark splits them
DATASETS = ("adult", "messy", "customers")
#: the peers that run on a table (diffprivlib releases no synthetic table: nothing to compare off Adult)
DATASET_PEERS = {"adult": ("dpl", "odp"), "messy": ("odp",), "customers": ("odp",)}
TASKS = {"adult": "Adult (dpexplore.datasets.load_adult, bundled file), binary target 'income'",
         "messy": "the generated messy table as notebook 08 declares it (benchmarks/fidelity.py's load_dataset: "
                  "make_messy_table(6000, random_state=2026), rows with a missing value dropped), binary target "
                  "'readmitted'",
         "customers": "the generated customer table (benchmarks/fidelity.py's load_dataset: "
                      "make_customer_table(7000, random_state=2026), its declared schema), binary target 'Churn'"}
EPSILONS = (0.03, 0.1, 0.3, 1.0)        # notebook 07's grid (full mode)
REPETITIONS = 3                         # notebook 07's repetitions (full mode)
SEED = 2026                             # notebook 07's random_state: same splits
TEST_SIZE = 0.2
DELTA = 1e-6
#: how the MST worker draws its synthetic rows (mbi 1.1.0: "sample" = i.i.d. from the model)
MST_SYNTHESIS = "sample"
#: the shape metrics of a synthetic table (mean total-variation distance over public bins)
FIDELITY_METRICS = ("tvd_1way", "tvd_2way")
#: on the customer table: the share of synthetic rows breaking a rule every real row keeps
#: (``benchmarks/fidelity.py``'s ``known_rule_violations``)
RULE_METRICS = ("rules_addon_max", "rules_addon_mean", "rules_phone")
RULE_NOTES = ("share of synthetic rows breaking a rule every real row keeps: {what} "
              "(benchmarks/fidelity.py, known_rule_violations)")
RULE_WHAT = {"rules_addon_max": "the add-on service whose rule breaks most",
             "rules_addon_mean": "mean over the six add-on services",
             "rules_phone": "MultipleLines = 'No phone service' exactly when PhoneService = 'No'"}
FIDELITY_NOTES = ("mean total-variation distance over the schema's public bins between the synthetic table "
                  "(synthesize(method='sample'), numbers clipped to the declared bounds) and the training part; "
                  "{way} over every column{pairs}, target included")
METHODS = {  # key → (library, method label, notes)
    "dpl_gnb": ("diffprivlib", "GaussianNB",
                "6 numeric predictors, bounds declared from the schema; pure ε-DP"),
    "dpl_lr": ("diffprivlib", "LogisticRegression",
               "numbers scaled by declared bounds + one-hot categoricals, data_norm=√14 declared; pure ε-DP"),
    "odp_mst": ("opendp", "MST synthesizer + LR",
                "MST under ρ-zCDP converted to (ε, δ); all keys/cuts declared; sklearn LR on the synthetic "
                "table in the public bins (rows with a null, OpenDP's bucket for undeclared values, dropped)"),
    "odp_mst_pure": ("opendp", "MST synthesizer (pure ε) + LR",
                     "MST with Laplace noise, pure ε-DP (δ = 0, all keys/cuts declared); sklearn LR on the synthetic table"),
}
PEER = {"dpl_gnb": "dpl", "dpl_lr": "dpl", "odp_mst": "odp", "odp_mst_pure": "odp"}


# =========================================================================== shared (both sides)
def run_seed(method: str, e_idx: int, run: int) -> int:
    """Seed of one fit (keyed like the sweep's: method name, ε index, run)."""
    import numpy as np

    key = (zlib.crc32(method.encode()), e_idx, run)
    return int(np.random.SeedSequence(SEED, spawn_key=key).generate_state(1, np.uint32)[0])


def zcdp_rho(epsilon: float, delta: float) -> float:
    """Largest ρ with ρ + 2√(ρ ln(1/δ)) ≤ ε: ρ-zCDP ⇒ (ε, δ)-DP (Bun & Steinke 2016, Prop. 1.3)."""
    import math

    L = math.log(1.0 / delta)
    return (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2


def summarise(raw: list[dict], versions: dict[str, str], reasons: dict[str, str],
              epsilons: list[float], delta: float, methods: list[str], dataset: str = "adult") -> "pd.DataFrame":
    """One row per method × ε of ``dataset`` (mean accuracy over the runs that finished), plus one
    per shape metric (:data:`FIDELITY_METRICS`, :data:`RULE_METRICS`) for the methods whose runs
    carry it; methods that could not run get an empty accuracy and the reason in ``notes``. A run
    without a ``dataset`` (the sidecars written before ``--datasets``) is an Adult run."""
    import numpy as np
    import pandas as pd

    raw = [r for r in raw if r.get("dataset", "adult") == dataset]
    rows = []
    for key in methods:
        library, label, notes = METHODS[key]
        for eps in epsilons:
            values = [r["accuracy"] for r in raw if r["method"] == key and np.isclose(r["epsilon"], eps)]
            reason = reasons.get(key, "")
            rows.append({"library": library, "library_version": versions.get(library, ""), "method": label,
                         "epsilon": float(eps), "delta": delta if key == "odp_mst" else 0.0,
                         "metric": "accuracy", "value": float(np.mean(values)) if values else np.nan,
                         "n_runs": len(values),
                         "notes": notes if values else f"not run: {reason or 'no result'}",
                         "dataset": dataset})
            accuracy_row = rows[-1]
            for metric in FIDELITY_METRICS + RULE_METRICS:
                shape = [r[metric] for r in raw if r["method"] == key and np.isclose(r["epsilon"], eps)
                         and metric in r]
                if shape:
                    pairs = metric == "tvd_2way"
                    text = (RULE_NOTES.format(what=RULE_WHAT[metric]) if metric in RULE_METRICS else
                            FIDELITY_NOTES.format(way="2-way" if pairs else "1-way", pairs=" pair" if pairs else ""))
                    rows.append({**accuracy_row, "metric": metric, "value": float(np.mean(shape)),
                                 "n_runs": len(shape), "notes": text})
    return pd.DataFrame(rows, columns=COLUMNS)


# =========================================================================== worker side (peer venvs)
def _load_job(job: Path):
    import numpy as np
    import pandas as pd

    config = json.loads((job / "config.json").read_text())
    schema = config["schema"]
    numeric = [a["name"] for a in schema["attributes"] if a["kind"] == "numeric"]
    dtypes = {a["name"]: (float if a["kind"] == "numeric" else str) for a in schema["attributes"]}
    frame = pd.read_csv(job / config["data_file"], dtype={**dtypes, schema["target"]: str}, keep_default_na=False)
    splits = np.load(job / "splits.npz")
    runs = [(splits[f"train{r}"], splits[f"test{r}"]) for r in range(config["repetitions"])]
    return config, schema, numeric, frame, runs


def _public_design(schema: dict):
    """The public encoding of dpexplore's PrivateLRClassifier: numbers → [0, 1] by declared bounds
    (clipped), categoricals one-hot over declared categories (unknown → no indicator)."""
    import numpy as np

    attrs = schema["attributes"]

    def design(X):
        blocks = []
        for a in attrs:
            col = X[a["name"]]
            if a["kind"] == "numeric":
                u = (col.to_numpy(dtype=float) - a["lower"]) / (a["upper"] - a["lower"])
                blocks.append(np.clip(u, 0.0, 1.0)[:, None])
            else:
                cats = [str(c) for c in a["categories"]]
                blocks.append((col.astype(str).to_numpy()[:, None] == np.array(cats)[None, :]).astype(float))
        return np.hstack(blocks)

    n_numeric = sum(a["kind"] == "numeric" for a in attrs)
    return design, float(np.sqrt(len(attrs))), n_numeric  # each row: ≤ 1 per numeric, one 1 per categorical


def worker_diffprivlib(job: Path) -> dict:
    import warnings

    import diffprivlib
    import numpy as np
    import sklearn
    from diffprivlib import BudgetAccountant
    from diffprivlib.models import GaussianNB, LogisticRegression

    config, schema, numeric, frame, runs = _load_job(job)
    target, classes = schema["target"], list(schema["classes"])
    y_all = frame[target].to_numpy()
    bounds = ([a["lower"] for a in schema["attributes"] if a["kind"] == "numeric"],
              [a["upper"] for a in schema["attributes"] if a["kind"] == "numeric"])
    design, data_norm, _ = _public_design(schema)
    Z_all = design(frame)
    Xn_all = frame[numeric].to_numpy(dtype=float)
    raw, timing = [], {"dpl_gnb": 0.0, "dpl_lr": 0.0}
    for e_idx, eps in enumerate(config["epsilons"]):
        for run, (tr, te) in enumerate(runs):
            for key in ("dpl_gnb", "dpl_lr"):
                seed = run_seed(key, e_idx, run)
                acc = BudgetAccountant()
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("error", diffprivlib.utils.PrivacyLeakWarning)  # bounds are declared
                    if key == "dpl_gnb":
                        X_tr, X_te = Xn_all[tr], Xn_all[te]
                        model = GaussianNB(epsilon=eps, bounds=bounds, random_state=seed, accountant=acc)
                        model.fit(X_tr, y_all[tr])
                    else:
                        X_tr, X_te = Z_all[tr], Z_all[te]
                        model = LogisticRegression(epsilon=eps, data_norm=data_norm, random_state=seed,
                                                   accountant=acc, max_iter=1000)
                        model.fit(X_tr, y_all[tr])
                seconds = time.perf_counter() - t0
                spent = acc.total()[0]
                if spent > eps * (1 + 1e-9):
                    raise RuntimeError(f"{key} spent ε = {spent} > {eps}")
                if not set(map(str, model.classes_)) <= set(classes):
                    raise RuntimeError(f"{key} classes {model.classes_} not the schema's {classes}")
                accuracy = float(np.mean(model.predict(X_te) == y_all[te]))
                timing[key] += seconds
                raw.append({"dataset": config["dataset"], "method": key, "epsilon": eps, "run": run,
                            "accuracy": accuracy, "seconds": seconds, "epsilon_spent": float(spent)})
    return {"versions": {"diffprivlib": diffprivlib.__version__, "scikit-learn": sklearn.__version__,
                         "numpy": np.__version__, "python": platform.python_version()},
            "raw": raw, "seconds": timing}


def _reference_classifier():
    """notebook 07's non-private reference (``nonprivate_factory``), rebuilt without dpexplore."""
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    pre = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_exclude="number")),
        (StandardScaler(), make_column_selector(dtype_include="number")),
    )
    return make_pipeline(pre, LogisticRegression(max_iter=1000))


def _patch_mst_selection_budget() -> None:
    """Work around opendp 0.16's MST refusing its own plan (opendp/opendp#2789).

    ``MST.make_marginals`` gives the selection step d_select and ``_make_mst_select`` composes
    n − 1 noisy-max rounds of prior(d_select / (n − 1)) each; OpenDP's rounded-up sum of those
    exceeds d_select by one ulp, so every release fails with "insufficient budget for query". We
    hand the selection step d_select·(1 − 1e-9): each round gets slightly *less* budget than
    MST would, the composition fits, and the release never spends more than stated.
    """
    import opendp.extras.mbi._mst as mst_module

    original = mst_module._make_mst_select
    if getattr(original, "_dpexplore_patched", False):
        return

    def make_select(*args, d_out, **kwargs):
        return original(*args, d_out=d_out * (1 - 1e-9), **kwargs)

    make_select._dpexplore_patched = True
    mst_module._make_mst_select = make_select


def worker_opendp(job: Path) -> dict:
    import importlib.metadata as md
    import warnings

    import numpy as np
    import opendp.prelude as dp
    import polars as pl
    import sklearn

    dp.enable_features("contrib")
    _patch_mst_selection_budget()
    config, schema, numeric, frame, runs = _load_job(job)
    target = schema["target"]
    delta, methods = config["delta"], [m for m in config["methods"] if PEER[m] == "odp"]
    keys = {a["name"]: [str(c) for c in a["categories"]] for a in schema["attributes"] if a["kind"] != "numeric"}
    keys[target] = [str(c) for c in schema["classes"]]
    # public cuts: the interior edges of the deepest level of each declared numeric taxonomy
    cuts = {a["name"]: [float(e) for e in a["taxonomy"]["levels"][-1][1:-1]]
            for a in schema["attributes"] if a["kind"] == "numeric"}
    columns = [a["name"] for a in schema["attributes"]] + [target]
    predictors = columns[:-1]

    def binned(X):
        """Numbers → their public bin (polars' ``cut``: right-closed, as OpenDP bins the rows),
        as categories. ``synthesize()`` draws a number uniformly in its bin, with the outer bins
        [first cut − 1, first cut] and [last cut, last cut + 1]: compared as numbers with the real
        test rows, that is a shift (capital-gain 0 becomes ≈ 4,999), not MST's error."""
        X = X[predictors].copy()
        for c, edges in cuts.items():
            X[c] = np.digitize(X[c].to_numpy(dtype=float), edges, right=True).astype(str)
        return X

    raw, timing = [], {m: 0.0 for m in methods}
    for e_idx, eps in enumerate(config["epsilons"]):
        for run, (tr, te) in enumerate(runs):
            train = pl.from_pandas(frame.iloc[tr][columns].reset_index(drop=True))
            for key in methods:
                t0 = time.perf_counter()
                if key == "odp_mst":
                    rho = zcdp_rho(eps, delta)
                    loss, query = dp.loss_of(rho=rho), {"rho": rho}
                else:
                    loss, query = dp.loss_of(epsilon=eps), {"epsilon": eps}
                ctx = dp.Context.compositor(data=train.lazy(), privacy_unit=dp.unit_of(contributions=1),
                                            privacy_loss=loss)
                with warnings.catch_warnings():
                    # no filter: loss_of's "unusual range" notices are opendp log records, not warnings,
                    # and a small MST release (opendp 0.16) raises no Python warning; one that appears is shown
                    table = (ctx.query(**query)
                             .contingency_table(keys=keys, cuts=cuts, algorithm=dp.mbi.MST())
                             .release())
                # synthetic size: the number of training rows where the split sizes are public (Adult's
                # fixed-size split), else the model's total, estimated from the noisy marginals;
                # mbi and OpenDP draw the rows with NumPy's global generator: seeded per fit
                rows = len(tr) if config["synthetic_rows"] == "training size" else None
                np.random.seed(run_seed(key, e_idx, run))
                synthetic = table.synthesize(rows=rows, method=MST_SYNTHESIS).to_pandas()
                seconds = time.perf_counter() - t0
                synthetic_file = f"synthetic-{key}-{e_idx}-{run}.csv"   # for the parent's fidelity figures
                synthetic.to_csv(job / synthetic_file, index=False)
                model = _reference_classifier()
                missing = {c: int(n) for c, n in synthetic.isna().sum().items() if n}
                synthetic = synthetic.dropna()      # rows MST left without a value: not used (counted)
                y_syn = synthetic.pop(target).astype(str)
                X_syn = binned(synthetic)
                if y_syn.nunique() < 2:   # a synthetic table with one class: predict it
                    pred = np.full(len(te), y_syn.iloc[0])
                else:
                    model.fit(X_syn, y_syn)
                    pred = model.predict(binned(frame.iloc[te]))
                accuracy = float(np.mean(pred == frame.iloc[te][target].to_numpy()))
                timing[key] += seconds
                raw.append({"dataset": config["dataset"], "method": key, "epsilon": eps, "run": run,
                            "accuracy": accuracy, "seconds": seconds,
                            "synthetic_rows": int(len(y_syn)), "missing_values": missing,
                            "synthesis": MST_SYNTHESIS, "synthetic_file": synthetic_file})
                with open(job / "progress-odp.jsonl", "a") as fh:   # kept if a later fit fails
                    fh.write(json.dumps(raw[-1]) + "\n")
                print(f"  {config['dataset']} {key} ε={eps:g} run {run}: accuracy {accuracy:.4f} "
                      f"({seconds:.0f} s)", flush=True)
    versions = {"opendp": md.version("opendp"), "mbi": md.version("mbi"), "jax": md.version("jax"),
                "polars": pl.__version__, "scikit-learn": sklearn.__version__, "numpy": np.__version__,
                "python": platform.python_version()}
    return {"versions": versions, "raw": raw, "seconds": timing,
            "workaround": "selection budget × (1 − 1e-9) for opendp/opendp#2789 (see _patch_mst_selection_budget)"}


# =========================================================================== driver side (project venv)
def fidelity_benchmark():
    """``benchmarks/fidelity.py`` as a module: its tables, loading and split (imports dpexplore)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fidelity_benchmark", Path(__file__).with_name("fidelity.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dataset_splits(dataset: str, repetitions: int):
    """(frame, schema, [(train positions, test positions)] per repetition, split description):
    Adult with the showdown's splits (sweep's ``Splits``, stratified, so that the peers meet
    notebook 07's methods on the same rows); another table as ``benchmarks/fidelity.py`` loads and
    splits it (``bernoulli_split`` per record with the generator its default run gives the table's
    seed-th repetition), so MST meets our publishers on the same training part."""
    import numpy as np

    if dataset == "adult":
        from dpexplore.datasets import load_adult
        from dpexplore.evaluate.sweeps import Splits, root_entropy

        frame, schema = load_adult()
        splits = Splits(frame, schema, None, TEST_SIZE, root_entropy(SEED))
        runs = []
        for r in range(repetitions):
            (tr, te), = splits.folds(r)
            runs.append((tr, te))
        return frame, schema, runs, (f"sweep's stratified holdout, test_size={TEST_SIZE}, random_state={SEED} "
                                     "(notebook 07)")
    from dpexplore.datasets import bernoulli_split

    bench = fidelity_benchmark()
    frame, schema, leaks = bench.load_dataset(dataset)
    if leaks:   # MST's keys and cuts come from the schema: it must be declared, not read from the rows
        raise ValueError(f"the {dataset} table's schema reads the data ({leaks}); declare it before running MST")
    frame = frame.reset_index(drop=True)
    d_idx = bench.DATASETS.index(dataset)
    runs = []
    for r in range(repetitions):
        rng = np.random.default_rng([bench.SEED, d_idx, r])
        X_tr, X_te, _, _ = bernoulli_split(frame, schema, bench.TEST_FRACTION, random_state=rng)
        runs.append((frame.index.get_indexer(X_tr.index), frame.index.get_indexer(X_te.index)))
    return frame, schema, runs, (f"per-record bernoulli_split, test fraction {bench.TEST_FRACTION}, generator "
                                 f"default_rng([{bench.SEED}, {d_idx}, run]) (benchmarks/fidelity.py, its seeds)")


def write_job(job: Path, epsilons: list[float], repetitions: int, delta: float, methods: list[str],
              dataset: str = "adult") -> dict:
    """The table, its public schema and its splits (:func:`dataset_splits`) into ``job``."""
    import numpy as np

    frame, schema, runs, split_text = dataset_splits(dataset, repetitions)
    frame.to_csv(job / f"{dataset}.csv", index=False)
    arrays = {}
    for r, (tr, te) in enumerate(runs):
        arrays[f"train{r}"], arrays[f"test{r}"] = tr, te
    np.savez(job / "splits.npz", **arrays)
    config = {"dataset": dataset, "data_file": f"{dataset}.csv", "splits": split_text,
              # Adult's fixed-size split: the sizes are public; a per-record split's are not
              "synthetic_rows": "training size" if dataset == "adult" else "model total",
              "schema": schema.to_dict(), "epsilons": epsilons, "repetitions": repetitions, "delta": delta,
              "methods": methods, "n_rows": len(frame), "n_train": int(len(arrays["train0"])),
              "n_test": int(len(arrays["test0"])),
              "n_train_runs": [int(len(tr)) for tr, _ in runs], "n_test_runs": [int(len(te)) for _, te in runs]}
    (job / "config.json").write_text(json.dumps(config))
    return config


def add_fidelity(raw: list[dict], job: Path) -> None:
    """Each run that wrote a synthetic table gains ``tvd_1way``/``tvd_2way``: its distance to the
    training part it was made from, over the schema's public bins
    (:func:`~dpexplore.evaluate.fidelity.fidelity_summary`; NOT private, an evaluation), and on the
    customer table its rule breaks (:data:`RULE_METRICS`). Numbers
    are first clipped to their declared bounds: OpenDP draws a number of the outer bins uniformly
    in [first cut − 1, first cut] or [last cut, last cut + 1], which can step past a bound while
    the bin itself is inside it."""
    import pandas as pd

    from dpexplore.domain import Schema
    from dpexplore.evaluate.fidelity import fidelity_summary

    config, _, _, frame, runs = _load_job(job)
    schema = Schema.from_dict(config["schema"])
    rules = fidelity_benchmark().known_rule_violations if config["dataset"] == "customers" else None
    for row in raw:
        path = job / row.get("synthetic_file", "")
        if "synthetic_file" not in row or not path.exists():
            continue
        synthetic = pd.read_csv(path, dtype={c: str for c in schema.categorical + [schema.target]},
                                keep_default_na=True)
        for name in schema.numeric:
            synthetic[name] = synthetic[name].clip(schema[name].lower, schema[name].upper)
        train, _ = runs[row["run"]]
        real = frame.iloc[train].reset_index(drop=True)
        real[schema.numeric] = real[schema.numeric].astype(float)
        shape = fidelity_summary(real, synthetic, schema)
        row.update(tvd_1way=shape["tvd_1way"], tvd_2way=shape["tvd_2way"])
        if rules is not None:
            row.update(rules(synthetic))
        print(f"  {row['method']} ε={row['epsilon']:g} run {row['run']}: TVD 1-way {shape['tvd_1way']:.3f}, "
              f"2-way {shape['tvd_2way']:.3f}", flush=True)


def run_peer(python: str | None, peer: str, job: Path) -> tuple[dict | None, str]:
    """Run this file as a worker in the peer's interpreter; (its result, or None and why)."""
    if not python or not Path(python).exists():
        return None, f"interpreter {python!r} not found (create the peer venv: see benchmarks/peers.py)"
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    env.pop("PYTHONPATH", None)
    t0 = time.perf_counter()
    proc = subprocess.run([python, str(Path(__file__).resolve()), "--worker", peer, "--job", str(job)],
                          env=env, cwd=job, stdout=None, stderr=subprocess.PIPE, text=True)  # progress shown live
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no message"]
        sys.stderr.write(proc.stderr[-3000:])
        partial = job / f"progress-{peer}.jsonl"
        if partial.exists():     # the fits that finished before the failure
            return {"raw": [json.loads(line) for line in partial.read_text().splitlines()], "versions": {},
                    "error": tail[0][:200], "wall_seconds": wall}, ""
        return None, f"worker failed: {tail[0][:200]}"
    result = json.loads((job / f"result-{peer}.json").read_text())
    result["wall_seconds"] = wall
    return result, ""


def rebuild(out: Path) -> None:
    """The CSV again from the sidecar (e.g. after a change of the ``notes`` texts)."""
    import pandas as pd

    sidecar = json.loads(out.with_suffix(".json").read_text())
    raw = [row for info in sidecar["peers"].values() for row in info.get("raw", [])]
    versions = {k: v for info in sidecar["peers"].values() for k, v in info.get("versions", {}).items()
                if k in ("diffprivlib", "opendp")}
    tables = []
    for dataset in dict.fromkeys(row.get("dataset", "adult") for row in raw):
        mine = [row for row in raw if row.get("dataset", "adult") == dataset]
        methods = [m for m in METHODS if any(row["method"] == m for row in mine)]
        tables.append(summarise(raw, versions, {}, sidecar["epsilons"], sidecar["mst_delta"], methods, dataset))
    pd.concat(tables, ignore_index=True).to_csv(out, index=False)
    print(f"rewrote {out} from {out.with_suffix('.json')}")


def default_out(datasets: list[str]) -> Path:
    """Where a run writes by default: notebook 07's file for Adult alone, else one of benchmarks/results."""
    if list(datasets) == ["adult"]:
        return OUT_CSV
    return ROOT / "benchmarks" / "results" / f"peers_{'_'.join(datasets)}.csv"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", choices=["dpl", "odp"], help=argparse.SUPPRESS)
    parser.add_argument("--job", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--dpl-python", default="/work/peers-env-dpl/bin/python")
    parser.add_argument("--odp-python", default="/work/peers-env-odp/bin/python")
    parser.add_argument("--datasets", nargs="+", choices=list(DATASETS), default=["adult"],
                        help="tables to run on (default: adult; diffprivlib runs on Adult only)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--repetitions", type=int, default=REPETITIONS)
    parser.add_argument("--delta", type=float, default=DELTA)
    parser.add_argument("--mst-pure", action="store_true", help="also run MST under pure ε-DP")
    parser.add_argument("--skip-zcdp", action="store_true",
                        help="with --mst-pure: MST under pure ε-DP only (the ρ-zCDP one not run)")
    parser.add_argument("--only", choices=["dpl", "odp"], help="run one peer, keep the other's stored rows")
    parser.add_argument("--rebuild", action="store_true",
                        help="rewrite the CSV from the sidecar's per-run values (no fitting)")
    parser.add_argument("--out", type=Path, default=None,
                        help="default: notebooks/results/peers.csv for Adult alone, "
                             "else benchmarks/results/peers_<datasets>.csv")
    args = parser.parse_args(argv)
    out = args.out or default_out(args.datasets)
    if args.rebuild:
        rebuild(out)
        return

    if args.worker:   # inside a peer's venv: never imports dpexplore
        result = worker_diffprivlib(args.job) if args.worker == "dpl" else worker_opendp(args.job)
        (args.job / f"result-{args.worker}.json").write_text(json.dumps(result))
        return

    import pandas as pd

    methods = ["dpl_gnb", "dpl_lr"] + ([] if args.skip_zcdp and args.mst_pure else ["odp_mst"]) \
        + (["odp_mst_pure"] if args.mst_pure else [])
    peers = [p for p in ("dpl", "odp") if args.only in (None, p)]
    pythons = {"dpl": args.dpl_python, "odp": args.odp_python}
    sidecar_path = out.with_suffix(".json")
    old_sidecar = json.loads(sidecar_path.read_text()) if args.only and sidecar_path.exists() else {}
    raw, versions, runs_info, described, plans = [], {}, {}, {}, []
    for dataset in args.datasets:
        ran = [p for p in peers if p in DATASET_PEERS[dataset]]
        for peer in set(peers) - set(ran):
            tables = ", ".join(d for d, ps in DATASET_PEERS.items() if peer in ps)
            print(f"{dataset}: {peer} skipped (it runs on {tables} only: no synthetic table to compare)", flush=True)
        mine = [m for m in methods if PEER[m] in ran]
        reasons = {}
        with tempfile.TemporaryDirectory(prefix="dpexplore-peers-") as tmp:
            job = Path(tmp)
            config = write_job(job, args.epsilons, args.repetitions, args.delta, mine, dataset)
            described[dataset] = {"task": TASKS[dataset]} | {
                k: config[k] for k in ("splits", "synthetic_rows", "n_rows", "n_train", "n_test",
                                       "n_train_runs", "n_test_runs")}
            for peer in ran:
                print(f"{dataset} {peer}: running in {pythons[peer]}", flush=True)
                result, why = run_peer(pythons[peer], peer, job)
                key = peer if dataset == "adult" else f"{peer}:{dataset}"   # Adult's keys as before --datasets
                if result is None:
                    print(f"{dataset} {peer}: {why}", flush=True)
                    reasons.update({m: why for m in mine if PEER[m] == peer})
                    runs_info[key] = {"error": why}
                    continue
                add_fidelity(result["raw"], job)
                raw += result["raw"]
                versions.update({k: v for k, v in result["versions"].items() if k in ("diffprivlib", "opendp")})
                runs_info[key] = ({k: v for k, v in result.items() if k != "raw"}
                                  | {"dataset": dataset, "epsilons": args.epsilons, "repetitions": args.repetitions,
                                     "raw": result["raw"]})
        plans.append((dataset, mine, reasons))
    table = pd.concat([summarise(raw, versions, reasons, args.epsilons, args.delta, mine, dataset)
                       for dataset, mine, reasons in plans], ignore_index=True)
    if args.only and out.exists():
        kept = pd.read_csv(out)
        if "dataset" not in kept.columns:      # a CSV written before --datasets: Adult rows
            kept["dataset"] = "adult"
        library = {"dpl": "diffprivlib", "odp": "opendp"}[args.only]
        rerun = (kept["library"] == library) & kept["dataset"].isin(args.datasets)
        table = pd.concat([kept.loc[~rerun, COLUMNS], table], ignore_index=True)
        runs_info = {**old_sidecar.get("peers", {}), **runs_info}
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    # one table: its description at the top level, as before --datasets; always per table in "datasets"
    single = described[args.datasets[0]] if len(args.datasets) == 1 else {}
    sidecar = {**{k: single[k] for k in ("task", "splits", "n_rows", "n_train", "n_test") if k in single},
               "datasets": described,
               "epsilons": args.epsilons, "repetitions": args.repetitions,
               "mst_delta": args.delta,
               "mst_rho": {str(e): zcdp_rho(e, args.delta) for e in args.epsilons},
               "mst_rho_conversion": "rho + 2*sqrt(rho*ln(1/delta)) = epsilon (Bun & Steinke 2016, Prop. 1.3)",
               "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                           "note": "timings measured on a shared 2-core machine, inflated by other jobs"},
               "command": "python benchmarks/peers.py " + " ".join(argv if argv is not None else sys.argv[1:]),
               "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "peers": runs_info}
    sidecar_path.write_text(json.dumps(sidecar, indent=1, ensure_ascii=False) + "\n")
    with pd.option_context("display.width", 160, "display.max_colwidth", 40):
        print(table.drop(columns="notes").to_string(index=False))
    for key, info in runs_info.items():
        if "seconds" in info:
            print(f"{key}: fit seconds per method {json.dumps({k: round(v, 1) for k, v in info['seconds'].items()})}, "
                  f"wall {info.get('wall_seconds', 0):.0f} s")
    print(f"wrote {out} and {sidecar_path}")


if __name__ == "__main__":
    main()
