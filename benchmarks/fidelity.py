"""How much of the data's shape each publisher's synthetic table keeps, with its accuracy beside it.

    python benchmarks/fidelity.py [--seeds 3] [--epsilons 0.1 1] [--datasets adult messy] \\
        [--marginal-share S] [--out benchmarks/results/fidelity.csv]

For Adult (``dpexplore.datasets.load_adult``) and the generated messy table as notebook 08
declares it (``benchmarks/08_your_data_sweep.py``: ``declared_messy``), every publishing method
of ``dpexplore.tables.release`` with its documented defaults (``marginal_share``: 0.5 for PrivPfC,
0.25 for the others) at each ε and seed: the rows are split per record (``bernoulli_split``, 20 %
held out with that public probability), the release is made from the training part
(``test_size=0``: all of it), then

- ``tvd_1way`` / ``tvd_2way``: the mean total-variation distance between the synthetic table and
  the training part over the schema's public bins, over every column / every pair of columns,
  the target included (:func:`dpexplore.evaluate.fidelity.fidelity_summary`; ``max_*``: the
  largest);
- ``accuracy``: the release's classifier on the held-out rows, and ``majority`` the held-out
  share of the training part's majority class (the floor a classifier should beat).

All of it is NOT private evaluation (it reads the real table). One row per (dataset, method, ε,
seed) in the CSV; the printed table holds the means over the seeds. The goal for the shape work
is tvd_1way ≤ 0.05 and tvd_2way ≤ 0.12 at ε = 1, accuracy where it is.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import time
import warnings
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpexplore import tables  # noqa: E402
from dpexplore.datasets import bernoulli_split, load_adult  # noqa: E402
from dpexplore.evaluate.fidelity import fidelity_summary  # noqa: E402
from dpexplore.exceptions import FewRecordsWarning, PrivacyLeakWarning  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "fidelity.csv"
EPSILONS = (0.1, 1.0)
SEEDS = 3
SEED = 2026
TEST_FRACTION = 0.2
DATASETS = ("adult", "messy")
COLUMNS = ["dataset", "method", "epsilon", "seed", "tvd_1way", "tvd_2way", "max_1way", "max_2way", "accuracy",
           "majority", "synthetic_rows", "seconds"]


def load_dataset(name: str):
    """(frame, schema, leaks) of a benchmark table: Adult's declared schema, or the messy table
    with notebook 08's declarations."""
    if name == "adult":
        frame, schema = load_adult()
        return frame, schema, []
    spec = importlib.util.spec_from_file_location("your_data_sweep", ROOT / "benchmarks" / "08_your_data_sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    schema, encoded, leaks = module.declared_messy()
    return encoded, schema, leaks


def publishers() -> list[str]:
    """The methods of ``tables.release`` that publish a synthetic table (registry kind "publisher")."""
    return [name for name, spec in tables.METHODS.items() if getattr(spec, "kind", "publisher") == "publisher"]


def run(datasets=DATASETS, epsilons=EPSILONS, seeds: int = SEEDS, methods=None,
        marginal_share: float | None = None) -> pd.DataFrame:
    """One row per (dataset, method, ε, seed) with the columns :data:`COLUMNS`; ``marginal_share``
    None: each method's default (:func:`dpexplore.tables.default_marginal_share`)."""
    out = []
    for d_idx, dataset in enumerate(datasets):
        frame, schema, leaks = load_dataset(dataset)
        for seed in range(seeds):
            # the same per-record split for every method and ε of this seed
            split_rng = np.random.default_rng([SEED, d_idx, seed])
            X_tr, X_te, y_tr, y_te = bernoulli_split(frame, schema, TEST_FRACTION, random_state=split_rng)
            train = X_tr.assign(**{schema.target: y_tr})
            majority = float(np.mean(y_te.astype(str) == y_tr.astype(str).mode().iloc[0]))
            for m_idx, method in enumerate(methods or publishers()):
                for e_idx, eps in enumerate(epsilons):
                    release_seed = int(np.random.SeedSequence([SEED, d_idx, seed, m_idx, e_idx])
                                       .generate_state(1)[0] >> 1)
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", FewRecordsWarning)   # the size is in the table
                        result = tables.release(train, schema, method, eps, leaks=leaks, test_size=0.0,
                                                random_state=release_seed, evaluate=False, progress=False,
                                                marginal_share=marginal_share)
                    seconds = time.perf_counter() - t0
                    shape = fidelity_summary(train, result.synthetic, schema)
                    predicted = np.asarray(result.estimator.predict(X_te)).astype(str)
                    out.append({"dataset": dataset, "method": method, "epsilon": eps, "seed": seed, **shape,
                                "accuracy": float(np.mean(predicted == y_te.astype(str).to_numpy())),
                                "majority": majority, "synthetic_rows": len(result.synthetic),
                                "seconds": seconds})
                    print(f"{dataset} {method} ε={eps:g} seed {seed}: TVD {shape['tvd_1way']:.3f} / "
                          f"{shape['tvd_2way']:.3f}, accuracy {out[-1]['accuracy']:.3f} ({seconds:.1f} s)",
                          flush=True)
    return pd.DataFrame(out, columns=COLUMNS)


def means(results: pd.DataFrame) -> pd.DataFrame:
    """Mean over the seeds per (dataset, method, ε)."""
    keys = ["dataset", "method", "epsilon"]
    return (results.groupby(keys, sort=False)[["tvd_1way", "tvd_2way", "accuracy", "majority", "synthetic_rows"]]
            .mean().reset_index())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    ap.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--methods", nargs="+", choices=list(tables.METHODS), default=None)
    ap.add_argument("--marginal-share", type=float, default=None,
                    help="share of ε for the marginals (default: each method's, as in tables.release)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)   # the messy table's draft: said in its docstring
        results = run(args.datasets, args.epsilons, args.seeds, args.methods, args.marginal_share)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    results.to_csv(args.out, index=False, float_format="%.6g")
    with pd.option_context("display.width", 160):
        print(means(results).round(3).to_string(index=False))
    print(f"{len(results)} rows -> {args.out} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
