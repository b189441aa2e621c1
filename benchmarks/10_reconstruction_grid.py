"""Cached reconstruction attacks for notebook 10 (Dinur & Nissim 2003 on 100 records of Adult).

    python benchmarks/10_reconstruction_grid.py        # full: writes notebooks/results/10_reconstruction.csv (~1 min)
    DPEXPLORE_QUICK=1 python benchmarks/10_reconstruction_grid.py --out /tmp/10   # 2 repetitions, for a look

The secret is one bit per record, "married" (marital-status Married-civ-spouse), of the
:data:`RECORDS` people drawn from Adult with seed :data:`SAMPLE_SEED` (the notebook draws the same
ones). For every number of random subset queries in :data:`QUERIES` and every error bound E in
:data:`NOISE` (each answer off by a uniform error in [−E, E]: Dinur & Nissim's bounded
perturbation), :func:`dpexplore.attacks.reconstruct` (a linear program) guesses the secret
column, repeated with fresh queries and errors. Rows: n_queries, noise, rep, rate (the share of
records guessed right); the first repetition of each setting also stores the guessed bits and the
secret (0/1 separated by spaces), so the notebook can show which records the attacker got right. Seeded
per setting: re-running gives the same file. ``tests/test_notebook_caches.py`` checks it.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpexplore.attacks import noisy_subset_counts, reconstruct, subset_queries  # noqa: E402
from dpexplore.config import repetitions  # noqa: E402
from dpexplore.datasets import load_adult  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "notebooks" / "results"
RECORDS, SAMPLE_SEED, SEED = 100, 7, 2003
QUERIES = [50, 100, 200, 400, 800]
NOISE = [0, 1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 100]


def secret_bits(frame: pd.DataFrame) -> np.ndarray:
    """The secret column of the attacked records: 1 for a married person (Married-civ-spouse)."""
    return (frame["marital-status"] == "Married-civ-spouse").to_numpy().astype(np.int64)


def attacked_records() -> np.ndarray:
    """The secret bits of the :data:`RECORDS` people of Adult that the notebook attacks."""
    frame, _ = load_adult()
    return secret_bits(frame.sample(RECORDS, random_state=SAMPLE_SEED))


def _bits(x: np.ndarray) -> str:
    """The bits as text, "0 1 1 0 …" (spaced, so that a CSV reader keeps them as text)."""
    return " ".join(map(str, np.asarray(x, dtype=int)))


def grid(secret: np.ndarray, queries=QUERIES, noise=NOISE, reps: int = 10) -> pd.DataFrame:
    """One row per (number of queries, error bound, repetition): the share of bits recovered."""
    rows = []
    for k in queries:
        for e in noise:
            for rep in range(reps):
                rng = np.random.default_rng([SEED, k, round(1000 * e), rep])   # per setting: any sub-grid agrees
                A = subset_queries(secret.size, k, random_state=rng)
                guess = reconstruct(A, noisy_subset_counts(secret, A, noise=float(e), random_state=rng))
                rows.append({"n_queries": k, "noise": e, "rep": rep, "rate": float(np.mean(guess == secret)),
                             "guess": _bits(guess) if rep == 0 else "",
                             "secret": _bits(secret) if rep == 0 else ""})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for the CSV")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    table = grid(attacked_records(), reps=repetitions(10))
    table.to_csv(args.out / "10_reconstruction.csv", index=False, float_format="%.6g")
    summary = table.groupby(["n_queries", "noise"])["rate"].mean().unstack("noise")
    print(summary.round(3).to_string())
    print(f"10_reconstruction.csv {len(table)} rows  {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
