# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 13 · Composition: many mechanisms without adding up ε
#
# A real analysis asks many questions of the same people: a dashboard refreshed every day, the
# dozens of marginals a synthetic-data method measures. The accountant of notebook 01 adds up their
# ε (**basic composition**). Two sharper theorems pay far less for many small steps, at the price of
# a small δ. This notebook compares the three on one chart and relates them to what OpenDP's **MST**
# spends in notebook 07. (Dwork & Roth 2014, §3.5; Dwork, Rothblum & Vadhan 2010; Bun & Steinke 2016.
# References in the [bibliography](../docs/bibliography.md), symbols in the
# [glossary](../docs/glossary.md).)
#
# ## What you will learn
#
# - **basic composition**: k steps of ε cost kε, and why that is too pessimistic for many small steps;
# - **advanced composition** (Dwork, Rothblum & Vadhan 2010): the total grows like √k, for an extra δ′;
# - **zero-concentrated DP (zCDP)** (Bun & Steinke 2016): each step costs ρ, ρ's add up, and ρ turns
#   into an (ε, δ) guarantee at the end; you will write that conversion yourself;
# - from how many steps the sharper theorems pay, and what that means for MST's releases in
#   notebook 07 (under (ε, δ) with zCDP, and under pure ε).
#
# Each section has exercises: an *exercise* cell where you type an answer, then a *self-check* cell that
# says whether it is right (it never shows the answer). The explorer at the end needs a running kernel.

# %%
import math
from pathlib import Path

import numpy as np
import pandas as pd

from dpexplore import lab
from dpexplore.composition import (advanced_composition, basic_composition, composed_epsilon, dp_to_zcdp,
                                   zcdp_to_dp)
from dpexplore.datasets import load_adult
from dpexplore.mechanisms import laplace_scale
from dpexplore.plots import composition as cplots   # charts drawn offline, even before the notebook runs
from dpexplore.widgets.composition import CompositionExplorer

RESULTS = Path("results")             # notebooks/results: the stored runs of notebook 07

# %% [markdown]
# ## 1. Basic composition
#
# Run k mechanisms on the same data, the i-th ε_i-DP (each may depend on the answers before it).
# Together they are (ε_1 + … + ε_k)-DP (Dwork & Roth 2014, Thm 3.16; with δ's, those add up too). This
# is what `BudgetAccountant` charges, and it is tight for a few large steps: no better bound holds for
# every mechanism.

# %% tags=["exercise"]
# Exercise 13.1 (compute, 2 min): a dashboard publishes a Laplace count of the same hospital's patients
# every day, at ε = 0.05 per day. Under basic composition, what ε protects a patient after a year of
# 365 releases?
year_of_counts = None   # your answer
### BEGIN SOLUTION
year_of_counts = 365 * 0.05
### END SOLUTION

# %% tags=["self-check"]
lab.check("13.1")

# %% [markdown]
# ## 2. Two sharper theorems
#
# **Advanced composition** (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20): for every
# δ′ > 0, k adaptively chosen ε-DP steps are (ε′, δ′)-DP with
#
# $$\varepsilon' = \sqrt{2k\ln(1/\delta')}\,\varepsilon + k\varepsilon(e^{\varepsilon} - 1).$$
#
# For small ε the second term is about kε², so ε′ grows like √k·ε instead of kε.
#
# **zCDP** (Bun & Steinke 2016) measures each step by a number ρ instead of ε:
#
# - an ε-DP step is ρ = ε²/2-zCDP (their Prop 1.4); the Gaussian mechanism with σ is Δ₂²/(2σ²)-zCDP
#   (Prop 1.6);
# - the ρ's of k steps **add up** (Lemma 1.7);
# - at the end, ρ-zCDP is (ρ + 2√(ρ ln(1/δ)), δ)-DP for every δ > 0 (Prop 1.3).
#
# The library has both in `dpexplore.composition`; write the zCDP total yourself.

# %% tags=["exercise"]
# Exercise 13.2 (implement, 6 min): write zcdp_total(epsilon, k, delta): the total ε, at the given δ,
# of k steps that are each epsilon-DP, accounted with zCDP as above. Use math or numpy only (the check
# refuses a call to dpexplore). The check compares your function with Bun & Steinke's conversion on
# inputs it generates (one step to 100,000, ε from 0.001 to 2, δ from 10⁻¹² to 0.1).
zcdp_total = None   # your answer: a function (epsilon, k, delta) -> the total ε
### BEGIN SOLUTION
def zcdp_total(epsilon, k, delta):
    rho = k * epsilon ** 2 / 2                         # Prop 1.4, then Lemma 1.7
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))   # Prop 1.3
### END SOLUTION

# %% tags=["self-check"]
lab.check("13.2")

# %% [markdown]
# ## 3. One chart, three totals
#
# The total ε after k steps of ε = 0.1 each, for k from 1 to 1,000: basic composition kε (δ = 0), and the
# two sharper totals at δ = 10⁻⁶ (`composed_epsilon`). Every curve is a valid bound on the same
# mechanisms, so the smallest one applies; the curved two cost the extra δ.

# %%
ks = np.unique(np.round(np.logspace(0, 3, 61)).astype(int))
totals = composed_epsilon(0.1, ks, delta=1e-6)
cplots.composition_chart(cplots.composition_frame(totals), epsilon=0.1, delta=1e-6)

# %% [markdown]
# Read the chart from the left. For one step, advanced composition and zCDP report far more than
# ε = 0.1: their √(ln(1/δ)) term is a fixed cost. For many steps that fixed cost is spread over them, and
# kε grows faster than √k. The curves cross.

# %% tags=["exercise"]
# Exercise 13.3 (compute, 4 min): with ε = 0.1 per step and δ′ = 10⁻⁶, from how many steps k on does
# advanced composition give a smaller total than basic composition? Read it off the chart roughly, then
# compute it exactly (the smallest whole k).
crossover_k = None   # your answer
### BEGIN SOLUTION
crossover_k = math.ceil(2 * math.log(1 / 1e-6) / (2 - math.exp(0.1)) ** 2)
### END SOLUTION

# %% tags=["self-check"]
lab.check("13.3")

# %% [markdown]
# <details><summary>How to solve it (open it after the check)</summary>
#
# √(2k ln(1/δ′))·ε + kε(e^ε − 1) < kε ⟺ √(2 ln(1/δ′)/k) < 2 − e^ε ⟺ k > 2 ln(1/δ′)/(2 − e^ε)². With
# ε = 0.1 the right side is 27.63/0.80 ≈ 34.5. zCDP crosses kε a little earlier: it is the sharper of the
# two for pure steps (its line is the lowest for large k).
# </details>
#
# A table of the same totals at a few k, with the one that applies:

# %%
table = composed_epsilon(0.1, [1, 10, 30, 100, 300, 1000], delta=1e-6)
table.assign(smallest=table[["basic", "advanced", "zcdp"]].idxmin(axis=1)).round(3)

# %% [markdown]
# ## 4. What MST spends in notebook 07
#
# Notebook 07 compares the package's publishers with OpenDP's **MST** synthesizer (McKenna, Miklau &
# Sheldon 2021). `benchmarks/peers.py` runs MST two ways at each ε:
#
# - under **ρ-zCDP converted to (ε, δ = 10⁻⁶)**: ρ is the largest with ρ + 2√(ρ ln(1/δ)) ≤ ε
#   (`dp_to_zcdp`, Bun & Steinke Prop 1.3 solved for ρ), and MST adds **Gaussian** noise;
# - under **pure ε-DP**, with **Laplace** noise, the guarantee of every dpexplore method.
#
# MST spends a third of its budget on the **one-way marginals** of all d columns, a third on choosing
# d − 1 pairs of columns (exponential mechanism), a third on those **two-way marginals** (McKenna et
# al. 2021). So it makes about 3d measurements: many small steps, where section 3 says zCDP pays.
# The ρ of each ε of notebook 07's sweep (the stored run records the same values):

# %%
frame, schema = load_adult()
d = len(schema.predictors) + 1            # Adult's columns, the target included
rho = pd.DataFrame({"ε": [0.03, 0.1, 0.3, 1.0]})
rho["ρ (δ = 1e-6)"] = [dp_to_zcdp(e, delta=1e-6) for e in rho["ε"]]
rho["check: back to ε"] = [zcdp_to_dp(r, delta=1e-6) for r in rho["ρ (δ = 1e-6)"]]
print(f"Adult has d = {d} columns: {d} one-way marginals, {d - 1} selections, {d - 1} two-way marginals")
rho

# %% tags=["exercise"]
# Exercise 13.4 (predict, then run, 4 min): at ε = 1, compare the noise on one count of a one-way
# marginal of Adult. Under zCDP (δ = 10⁻⁶) each of the d one-way marginals gets Gaussian noise from ρ/(3d);
# under pure ε each gets Laplace noise from ε/(3d). The Laplace noise's standard deviation is (a) smaller
# than, (b) about the same as, or (c) larger than the Gaussian one? Answer with a letter, then run the
# cell after the check.
laplace_noise_is = None   # your answer: "a", "b" or "c"
### BEGIN SOLUTION
laplace_noise_is = "c"
### END SOLUTION

# %% tags=["self-check"]
lab.check("13.4")

# %% tags=["reveal"]
rho_1 = dp_to_zcdp(1.0, delta=1e-6)
gaussian_sd = math.sqrt(3 * d / (2 * rho_1))                  # ρ_i = ρ/(3d) = Δ₂²/(2σ²), Δ₂ = 1
laplace_sd = math.sqrt(2) * laplace_scale(epsilon=1.0 / (3 * d))
print(f"zCDP, δ = 1e-6: ρ = {rho_1:.4f}, Gaussian σ on each one-way count = {gaussian_sd:.1f}")
print(f"pure ε:          ε/(3d) = {1 / (3 * d):.4f}, Laplace standard deviation = {laplace_sd:.1f}")

# %% [markdown]
# <details><summary>Why (open it after you ran the cell)</summary>
#
# Split over m measurements, zCDP gives each ρ/m and its σ grows like √m; basic composition gives each
# ε/m and the Laplace noise grows like m. With MST's dozens of measurements, zCDP's noise is the smaller
# one, and it costs δ = 10⁻⁶: a weaker guarantee than pure ε-DP (notebook 12).
# </details>
#
# Does the noise show in MST's released tables? The stored runs of notebook 07 on its generated table
# (three runs of MST per accounting, from `benchmarks/peers.py`): the total-variation distance between
# the synthetic and the real table, lower is closer.

# %%
peers = pd.read_csv(RESULTS / "peers_messy.csv")
mst = peers[peers["method"].str.startswith("MST") & peers["metric"].isin(["tvd_1way", "tvd_2way"])]
mst.pivot_table(index=["epsilon", "method", "delta"], columns="metric", values="value").round(3)

# %% [markdown]
# At both ε the tables under (ε, δ) with zCDP are closer than under pure ε: the noise computed above shows
# in the release. So "MST at ε = 1" in notebook 07 means two different guarantees: (1, 10⁻⁶)-DP through
# zCDP, with less noise, or pure 1-DP, with more. Compare methods at the same ε **and** the same δ.
#
# ## 5. Explorer: three ways to add up
#
# - **ε per step** (log scale, 0.001 to 1): the ε of each of the k steps.
# - **δ** (log scale, 10⁻¹⁰ to 10⁻²): the δ of the advanced and zCDP totals (basic composition of pure
#   steps has δ = 0).
# - **k to read off** (1 to 10,000): a number of steps marked on the chart; the line above it gives the
#   three totals there and names the smallest.
#
# Try ε = 1 per step: advanced composition never beats kε over this range, zCDP only late. Then ε = 0.01:
# the sharper theorems win from a few hundred steps on.

# %%
composition_explorer = CompositionExplorer(epsilon=0.1, delta=1e-6, k=3 * d)
composition_explorer.widget

# %% [markdown]
# ## Summary
#
# - Basic composition adds the ε's: right for a few large steps, pessimistic for many small ones.
# - Advanced composition and zCDP grow like √k at the price of a δ; zCDP is the sharper of the two for
#   pure steps, and the natural accounting of Gaussian noise (ρ = Δ₂²/(2σ²) per step).
# - Every bound is valid, so report the smallest, and say which δ it carries.
# - MST in notebook 07 runs under ρ-zCDP converted to (ε, δ = 10⁻⁶): its many measurements get less
#   noise than pure ε would give them, and its guarantee is weaker. Compare like with like.
#
# Next: **[14_sparse_vector](14_sparse_vector.ipynb)** answers many threshold queries and pays only for
# the ones above the threshold.
