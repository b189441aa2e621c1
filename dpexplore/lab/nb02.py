"""Checks of notebook 02 (PrivPfC: a private choice of grid, then a noisy histogram)."""
from __future__ import annotations

import inspect
import math

from ._core import as_probability, choice, close, exercise, right_if

N_HAT = 36_000          # 02.2's noisy count of records


def _paper_split() -> tuple[float, float, float]:
    """PrivPfC's default budget split (record count, grid selection, counts), Alg. 2 line 2."""
    from ..publish.privpfc import run_privpfc
    return tuple(inspect.signature(run_privpfc).parameters["shares"].default)


@exercise("02.2", answer="tau_small",
          hints=("τ = 0.2·N̂·ε_pert (Eq. 6): which ε is ε_pert?",
                 "ε_pert is the counts' share of ε (60 %), not ε itself."),
          why="ε_pert = {share:g} × 0.05 = {eps_pert:g}, so τ = 0.2 × 36,000 × {eps_pert:g} = {tau:,.0f} cells: at "
              "small ε only coarse grids are allowed.")
def cell_cap(answer):
    # Su et al. 2018, Eq. 6 and Alg. 2: τ = r·N̂·ε_pert, r = 0.2
    from ..publish.privpfc import grid_threshold
    share = _paper_split()[2]
    eps_pert = share * 0.05
    tau = grid_threshold(N_HAT, eps_pert)
    return right_if(close(answer, tau, rel=0.01), share=share, eps_pert=eps_pert, tau=tau)


@exercise("02.1", answer="p_majority",
          hints=("Find the curve of ε_pert = 0.06 and read it at a lead of G = 10.",
                 "Or compute Eq. 10: 1 − ½·e^(−ε_pert·G)·(1 + ε_pert·G/2)."),
          why="1 − ½·e^(−{x:g})·(1 + {half:g}) ≈ {p:.2f}: with ε_pert = 0.06 a lead of 10 records still loses about "
              "one time in {odds:.0f}.")
def win_probability_read(answer):
    from ..publish.privpfc import win_probability
    p = win_probability(10, 0.06)
    return right_if(abs(as_probability(answer) - p) <= 0.02,     # read off a chart: ± 2 points
                    x=0.6, half=0.3, p=p, odds=1 / (1 - p))


GRID_OPTIONS = {"a": "more", "b": "fewer", "c": "about the same"}    # as in the notebook


@exercise("02.3", answer="grid_at_small_epsilon",
          hints=("Which grids may PrivPfC draw at all? Recall the cell cap τ from Eq. 6.",
                 "Compare the cell cap τ = 0.2·N̂·ε_pert at ε = 0.05 and at ε = 1, against the number of cells of "
                 "the grid drawn at ε = 1."),
          why="the cap τ shrinks with ε_pert (about 0.2 × 36,000 × {eps_pert:g} ≈ {tau:,.0f} cells at ε = 0.05, "
              "{ratio:.0f} times less than at ε = 1), so every grid in the pool, the drawn one included, is "
              "coarser: {option} cells.")
def smaller_grid(answer):
    from ..publish.privpfc import grid_threshold
    share = _paper_split()[2]
    small, large = grid_threshold(N_HAT, share * 0.05), grid_threshold(N_HAT, share * 1.0)
    letter = "b" if small < large / 2 else ("a" if small > 2 * large else "c")
    return right_if(choice(answer, letter, GRID_OPTIONS[letter], f"{GRID_OPTIONS[letter]} cells"),
                    eps_pert=share * 0.05, tau=small, ratio=large / small, option=GRID_OPTIONS[letter])


PRESET_EPS_PERT = 0.87      # 02.4's preset share of the counts, at ε = 1


@exercise("02.4", answer="noise_sd",
          hints=("First the Laplace scale b of the counts' noise, then its standard deviation.",
                 "b = 1/ε_pert with ε_pert = 87 % of ε, and Laplace(b) noise has standard deviation √2·b."),
          why="ε_pert = {eps_pert:g}, b = 1/{eps_pert:g} ≈ {b:.2f} and the standard deviation √2·b ≈ {sd:.2f} "
              "records: less noise on the counts, a less careful choice of grid.")
def preset_noise_sd(answer):
    from ..mechanisms import laplace_scale, laplace_variance
    sd = math.sqrt(laplace_variance(epsilon=PRESET_EPS_PERT))
    return right_if(close(answer, sd, rel=0.01), eps_pert=PRESET_EPS_PERT, b=laplace_scale(epsilon=PRESET_EPS_PERT),
                    sd=sd)
