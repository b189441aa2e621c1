"""How fast is DiffMulti? (target: Adult at h = 1,000, and how time grows with |D|)

Prints the fit time (median of a few runs) of DiffMulti on Adult at h = 1,000 and h = 10,000,
on 1×, 4× and 16× Adult (rows resampled with replacement), DiffGen (10 steps) for comparison,
and the time of predict() on the whole table. The paper reports ~30 s at h = 100k and < 120 s
for 1M records in C++ (2015 hardware); the theory says O(|D| log² |D|). The explorer's slider
latency is measured with the other explorers: ``benchmarks/widget_latency.py --only DiffMultiExplorer``.

Run: python benchmarks/diffmulti_speed.py
"""
from __future__ import annotations

import os
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

from dpexplore.datasets import load_adult  # noqa: E402
from dpexplore.publish.diffgen import DiffGen  # noqa: E402
from dpexplore.publish.diffmulti import DiffMulti  # noqa: E402


def timed(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def main() -> None:
    frame, schema = load_adult()
    X, y = schema.split(frame)
    rng = np.random.default_rng(0)
    print(f"Adult: {len(X):,} records, {len(schema.numeric)} numeric + {len(schema.categorical)} categorical")
    print(f"{'method':<10} {'records':>10} {'h':>7} {'fit (s)':>9} {'regions':>8} {'s / 10k rec':>12}")
    for factor in (1, 4, 16):
        if factor == 1:
            Xf, yf = X, y
        else:
            rows = rng.integers(0, len(X), factor * len(X))
            Xf, yf = X.iloc[rows].reset_index(drop=True), y.iloc[rows].reset_index(drop=True)
        for h in ((1_000, 10_000) if factor == 1 else (1_000,)):
            t, m = timed(lambda: DiffMulti(1.0, h=h, random_state=1, schema=schema).fit(Xf, yf), 3 if factor == 1 else 1)
            print(f"{'DiffMulti':<10} {len(Xf):>10,} {h:>7,} {t:>9.2f} {m.n_regions_:>8,} {t / len(Xf) * 1e4:>12.3f}")
    t, m = timed(lambda: DiffGen(1.0, steps=10, random_state=1, schema=schema).fit(X, y), 3)
    print(f"{'DiffGen':<10} {len(X):>10,} {'10 st.':>7} {t:>9.2f} {m.n_regions_:>8,} {t / len(X) * 1e4:>12.3f}")
    m = DiffMulti(1.0, h=1_000, random_state=1, schema=schema).fit(X, y)
    t, _ = timed(lambda: m.predict(X), 3)
    print(f"predict() on {len(X):,} records through a {m.n_regions_:,}-region tree: {t:.3f} s")
    X2 = X[["age", "education-num"]]
    t, _ = timed(lambda: DiffMulti(1.0, h=1_000, random_state=1, schema=schema).fit(X2, y), 3)
    print(f"DiffMulti on 2 attributes (the notebook's plane), h = 1,000: {t:.3f} s")


if __name__ == "__main__":
    main()
