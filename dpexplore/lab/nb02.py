"""Checks of notebook 02 (PrivPfC: a private choice of grid, then a noisy histogram)."""
from __future__ import annotations

import inspect
import math

from ._core import as_number, choice, close, exercise


def _paper_split() -> tuple[float, float, float]:
    """PrivPfC's default budget split (record count, grid selection, counts), Alg. 2 line 2."""
    from ..publish.privpfc import run_privpfc
    return tuple(inspect.signature(run_privpfc).parameters["shares"].default)


@exercise("02.2", hint="τ = 0.2·N̂·ε_pert, and ε_pert is the counts' share of ε (60 %), not ε itself.",
          why="ε_pert = 0.6 × 0.05 = 0.03, so τ = 0.2 × 36,000 × 0.03 = 216 cells: at small ε only coarse "
              "grids are allowed.",
          wrong=[360, 7200, 133.2, 4320], right=[216, 216.0, "216"])
def cell_cap(answer) -> bool:
    # Su et al. 2018, Eq. 6 and Alg. 2: τ = r·N̂·ε_pert, r = 0.2
    from ..publish.privpfc import grid_threshold
    eps_pert = _paper_split()[2] * 0.05
    return close(answer, grid_threshold(36_000, eps_pert), rel=0.01)


@exercise("02.1", hint="Find the curve of ε_pert = 0.06 and read it at a lead of G = 10 (or compute Eq. 10: "
                       "1 − ½·e^(−ε_pert·G)·(1 + ε_pert·G/2)).",
          why="1 − ½·e^(−0.6)·(1 + 0.3) ≈ 0.64: with ε_pert = 0.06 a lead of 10 records still loses about "
              "one time in three.",
          wrong=[1.0, 0.5, 0.9, 0.45], right=[0.643, 0.65, "0.64", 64.3])
def win_probability_read(answer) -> bool:
    from ..publish.privpfc import win_probability
    value = as_number(answer)
    value = value / 100 if value > 1 else value
    return abs(value - win_probability(10, 0.06)) <= 0.02      # read off a chart: ± 2 points


@exercise("02.3", hint="At ε = 0.05 the cell cap τ = 0.2·N̂·ε_pert is about 20 times smaller than at "
                       "ε = 1: compare it with the number of cells of the grid drawn at ε = 1.",
          why="the cap τ shrinks with ε_pert (about 0.2 × 36,000 × 0.03 ≈ 216 cells at ε = 0.05), below the "
              "size of the grid drawn at ε = 1, so every grid in the pool, the drawn one included, is coarser.",
          wrong=["a", "c", "more", "same"], right=["b", "B", "fewer", "(b)"])
def smaller_grid(answer) -> bool:
    return choice(answer, "b", "fewer", "fewer cells")


@exercise("02.4", hint="The counts get ε_pert = 87 % of ε here, and Laplace(b) noise with b = 1/ε_pert "
                       "has standard deviation √2·b.",
          why="ε_pert = 0.87, b = 1/0.87 ≈ 1.15 and the standard deviation √2·b ≈ 1.63 records: "
              "less noise on the counts, a less careful choice of grid.",
          wrong=[1.15, 2.36, 1 / 0.87 ** 2, math.sqrt(2) / 0.6], right=[1.6255, "1.63", math.sqrt(2) / 0.87])
def preset_noise_sd(answer) -> bool:
    from ..mechanisms import laplace_variance
    return close(answer, math.sqrt(laplace_variance(epsilon=0.87)), rel=0.01)
