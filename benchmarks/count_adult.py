"""How long does counting Adult take? (issue: foundation, "milliseconds on a 14-attribute grid")

Prints: the one-off cost of encoding the table (leaf and level codes for every attribute), then
the per-grid cost of cell codes + counts on (a) the finest grid (every attribute at its leaves,
counted sparsely: ~10^13 cells) and (b) a PrivPfC-sized grid counted densely.

Run: python benchmarks/count_adult.py
"""
from __future__ import annotations

import time

import numpy as np

from dpexplore.datasets import load_adult
from dpexplore.histogram import LevelCodes, class_counts, sparse_class_counts


def best_of(fn, repeats: int = 20) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times))


def main() -> None:
    t0 = time.perf_counter()
    frame, schema = load_adult()
    X, y = schema.split(frame)
    load_s = time.perf_counter() - t0
    y_codes = schema.encode_target(y)
    t0 = time.perf_counter()
    codes = LevelCodes(X, schema)
    encode_s = time.perf_counter() - t0
    finest = [len(codes.level_sizes[a]) - 1 for a in codes.attributes]
    n_cells = int(np.prod([float(s) for s in codes.grid_shape(finest)]))

    def count_finest():
        return sparse_class_counts(codes.cell_codes(finest), y_codes, schema.n_classes)

    grid = {"capital-gain": 2, "education": 2, "relationship": 2}
    shape = codes.grid_shape(grid)

    def count_grid():
        return class_counts(codes.cell_codes(grid), y_codes, int(np.prod(shape)), schema.n_classes)

    occupied = count_finest()[0].size
    fmin, fmed = best_of(count_finest)
    gmin, gmed = best_of(count_grid, 200)
    print(f"Adult: {len(X):,} rows, {len(codes.attributes)} attributes")
    print(f"load_adult (first call in this process):     {load_s * 1e3:8.1f} ms")
    print(f"encode leaf/level codes once (LevelCodes):   {encode_s * 1e3:8.1f} ms")
    print(f"finest grid ({n_cells:.2e} cells, {occupied:,} occupied), sparse counts: "
          f"min {fmin * 1e3:.1f} ms, median {fmed * 1e3:.1f} ms")
    print(f"PrivPfC-size grid {shape} ({int(np.prod(shape))} cells), dense counts: "
          f"min {gmin * 1e3:.2f} ms, median {gmed * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
