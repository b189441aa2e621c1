"""The privacy audit of AboveThreshold and of three broken sparse vector variants, for notebook 14.

    python benchmarks/14_svt_audit.py                  # full: writes notebooks/results/14_svt_audit.csv
    python benchmarks/14_svt_audit.py --out /tmp/14    # elsewhere, for a look

For every variant (AboveThreshold, Dwork & Roth 2014 Alg. 1, and Lyu, Su & Li 2017's Alg. 5, 6 and 3:
no query noise, no halting, a released value) and every neighbouring pair of
``dpexplore.svt_audit.SVT_NEIGHBOURS``, ``audit_svt`` runs at ε = 1 with 250 to 40,000 draws per side
and records the audit's lower confidence bound on the variant's true ε. Each (variant, pair, draws)
has its own seed, so a row is recomputed exactly by ``audit_row`` (``tests/test_notebook_caches.py``
recomputes a few). Prints the seconds per variant and the smallest number of draws at which each
variant is refuted.
"""
from __future__ import annotations

import argparse
import time
import zlib
from pathlib import Path

import pandas as pd

from dpexplore.svt import above_threshold
from dpexplore.svt_audit import (SVT_NEIGHBOURS, audit_svt, svt_releasing_values, svt_without_halting,
                                 svt_without_query_noise)

RESULTS = Path(__file__).resolve().parents[1] / "notebooks" / "results"
EPSILON = 1.0
DRAWS = (250, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 40_000)
#: the variants as notebook 14 names them
VARIANTS = {"AboveThreshold": above_threshold, "no query noise": svt_without_query_noise,
            "no halting": svt_without_halting, "released value": svt_releasing_values}


def audit_row(variant: str, pair: str, n_samples: int) -> dict:
    """One audit: ``variant`` on the neighbouring ``pair`` with ``n_samples`` draws per side, seeded by
    the three (the same row every time)."""
    seed = zlib.crc32(f"{variant}|{pair}|{n_samples}".encode())
    row = audit_svt(VARIANTS[variant], epsilon=EPSILON, pairs=[pair], n_samples=n_samples,
                    random_state=seed).iloc[0].to_dict()
    return {"variant": variant, "pair": pair, "n_samples": n_samples, "claimed_epsilon": EPSILON,
            "epsilon_lower": row["epsilon_lower"], "epsilon_hat": row["epsilon_hat"], "violates": row["violates"]}


def audit_table(variants=tuple(VARIANTS), pairs=tuple(SVT_NEIGHBOURS), draws=DRAWS) -> pd.DataFrame:
    rows = []
    for variant in variants:
        start = time.perf_counter()
        rows += [audit_row(variant, pair, n) for pair in pairs for n in draws]
        print(f"{variant:16s} {time.perf_counter() - start:6.1f} s")
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    out = parser.parse_args().out
    table = audit_table()
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "14_svt_audit.csv", index=False, float_format="%.6g")
    refuted = table[table["violates"]].groupby("variant")["n_samples"].min()
    for variant in VARIANTS:
        print(f"{variant:16s} refuted from {refuted[variant]:,} draws per side" if variant in refuted
              else f"{variant:16s} never refuted (largest lower bound "
                   f"{table.loc[table['variant'] == variant, 'epsilon_lower'].max():.3f})")


if __name__ == "__main__":
    main()
