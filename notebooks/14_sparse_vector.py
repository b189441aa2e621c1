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
# # 14 · The sparse vector technique: paying only for the answer above a threshold
#
# Many questions have a yes/no answer against a threshold: *is this count above τ?* Asked one by one
# with the Laplace mechanism, k questions cost kε (notebook 13). The **sparse vector technique**
# answers a whole stream of them and pays only for the first "yes". It is also the algorithm that
# published papers got wrong most often: Lyu, Su & Li (2017) catalogue variants printed as ε-DP that are
# not. This notebook runs the correct one, **AboveThreshold** (Dwork & Roth 2014, §3.6, Alg. 1), lets the
# package's privacy audit refute three broken variants, and asks you to repair one. (References in the
# [bibliography](../docs/bibliography.md), symbols in the [glossary](../docs/glossary.md).)
#
# ## What you will learn
#
# - how AboveThreshold adds noise to the threshold **and** to every query, and halts at the first ⊤
#   ("above"), so that the ⊥ ("below") answers before it cost nothing more than ε;
# - where its first ⊤ falls: an exact distribution you can compute;
# - three published variants that are **not** private (no noise on the queries; no halting, the threshold
#   noise reused after a ⊤; the noisy value released), and how the audit refutes each while it passes
#   AboveThreshold;
# - how to repair a broken variant, graded by comparing your releases with AboveThreshold's exact
#   distribution and by the audit.
#
# Each section has exercises: an *exercise* cell where you type an answer, then a *self-check* cell that
# says whether it is right (it never shows the answer). The explorer needs a running kernel.

# %%
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from dpexplore import lab
from dpexplore.budget import BudgetAccountant
from dpexplore.datasets import load_adult
from dpexplore.exceptions import NotDifferentiallyPrivateWarning
from dpexplore.svt import above_threshold, above_threshold_probabilities
from dpexplore.svt_audit import (SVT_NEIGHBOURS, audit_svt, svt_releasing_values, svt_without_halting,
                                 svt_without_query_noise)
from dpexplore.plots import svt as splots   # charts drawn offline, even before the notebook runs
from dpexplore.widgets.svt import SparseVectorExplorer

RESULTS = Path("results")             # the cached audit (see the cell that reads it)
frame, schema = load_adult()

# %% [markdown]
# ## 1. The question: the first age with more than τ high earners
#
# For each age from 22 to 37, in order, the query q_i counts the people of that age in Adult who earn
# more than 50K. One person has one age, so each query moves by at most **Δ = 1** when a person is added
# or removed. The question: *which is the first age with more than τ = 250 such people?* (The true
# counts are printed for teaching; a release would not show them.)

# %%
ages = np.arange(22, 38)
high = frame[frame[schema.target] == schema.classes[-1]]
queries = high["age"].value_counts().reindex(ages, fill_value=0).to_numpy(dtype=float)
names = [f"age {a}" for a in ages]
print("true counts (not private):", dict(zip(ages.tolist(), queries.astype(int).tolist())))
print("the true answer (not private): age", ages[np.argmax(queries > 250)])

# %% [markdown]
# ## 2. AboveThreshold
#
# Dwork & Roth's Algorithm 1, for queries of sensitivity Δ and a budget ε:
#
# 1. draw the **threshold noise** ν_τ ~ Lap(2Δ/ε) once;
# 2. for each query in order, draw fresh **query noise** ν_i ~ Lap(4Δ/ε); if q_i + ν_i ≥ τ + ν_τ, answer
#    ⊤ and **halt**; else answer ⊥ and go on.
#
# Half of ε pays for the threshold noise, half for the one ⊤ (Thm 3.23). (The paper writes ρ for ν_τ;
# here ρ is zCDP's parameter, notebook 13.) `dpexplore.svt.above_threshold` runs it and spends ε once
# through the accountant.

# %% tags=["exercise"]
# Exercise 14.1 (compute, 2 min): AboveThreshold runs at ε = 0.5 on counts (Δ = 1). What is the scale of
# the Laplace noise ν_i added to each query?
query_noise_scale = None   # your answer
### BEGIN SOLUTION
query_noise_scale = 4 * 1 / 0.5
### END SOLUTION

# %% tags=["self-check"]
lab.check("14.1")

# %% [markdown]
# One run on the ages, at ε = 0.2, with an accountant. `above_threshold` returns one answer per query
# asked: ⊥ (False) up to the first ⊤ (True), which is the last.

# %%
acc = BudgetAccountant(1.0)
answers = above_threshold(queries, 250.0, epsilon=0.2, random_state=3, accountant=acc)
print(" ".join(f"{name}: {'⊤' if a else '⊥'}" for name, a in zip(names, answers)))
acc.ledger

# %% tags=["exercise"]
# Exercise 14.2 (predict, then run, 2 min): AboveThreshold at ε = 0.5 gets 1,000 queries far below the
# threshold, then one far above it. How much ε does the accountant charge for the whole run? Predict,
# then run the cell after the check.
charged_for_1001 = None   # your answer
### BEGIN SOLUTION
charged_for_1001 = 0.5
### END SOLUTION

# %% tags=["self-check"]
lab.check("14.2")

# %% tags=["reveal"]
acc = BudgetAccountant(1.0)
long_run = above_threshold(np.r_[np.zeros(1_000), 1_000.0], 500.0, epsilon=0.5, random_state=0, accountant=acc)
print(f"{long_run.size:,} answers, {int(long_run.sum())} of them ⊤; charged ε = {acc.spent:g}")
acc.ledger

# %% [markdown]
# <details><summary>Why so little (open it after you ran the cell)</summary>
#
# The ⊥ answers are paid by the threshold noise: on neighbouring data, shifting ν_τ by Δ keeps every ⊥ a
# ⊥ at a cost of ε/2 for all of them together; the single ⊤ costs the other ε/2. With Laplace counts,
# 1,001 answers would have cost 1,001 times their ε (notebook 13).
# </details>
#
# ## 3. Where the first ⊤ falls
#
# Given the threshold noise, the answers are independent, so the chance that the first ⊤ is query k is an
# integral over ν_τ: `above_threshold_probabilities` computes it exactly. Bars: that distribution for the
# ages at τ = 250, ε = 0.2; black ticks: the share of 2,000 runs that stopped there.

# %%
exact = above_threshold_probabilities(queries, 250.0, epsilon=0.2)
rng = np.random.default_rng(0)
runs = [above_threshold(queries, 250.0, epsilon=0.2, random_state=rng) for _ in range(2_000)]
first = [int(np.argmax(a)) if a[-1] else len(queries) for a in runs]
sampled = np.bincount(first, minlength=len(queries) + 1) / len(runs)
splots.first_above_chart(exact, queries=queries, threshold=250.0, epsilon=0.2, sampled=sampled, names=names)

# %% [markdown]
# The first ⊤ lands near the true answer (printed in section 1) but not always on it: a count just below
# τ can win, one just above can be passed over. That uncertainty is the privacy.
#
# ### Explorer: where the first ⊤ falls
#
# - **ε** (log scale, 0.1 to 10): the budget of the run; the noise scales are 2/ε and 4/ε.
# - **threshold τ**: the threshold the counts are compared with.
#
# Each move recomputes the exact distribution and draws 500 runs of `above_threshold` (black ticks).
# Move τ below the smallest count: the first query wins whatever ε. Raise ε to 5: the first ⊤ is the first
# true count above τ, nearly always.

# %%
svt_explorer = SparseVectorExplorer(queries, threshold=250.0, epsilon=0.2, names=names)
svt_explorer.widget

# %% [markdown]
# ## 4. Three variants that are not private, and the audit
#
# Lyu, Su & Li (2017) collected sparse vector algorithms published as ε-DP. Three of them, each with one
# change from AboveThreshold (all answer ⊥/⊤ for a list of queries):
#
# | variant | threshold noise | query noise | after a ⊤ | what it releases |
# |---|---|---|---|---|
# | **AboveThreshold** (Dwork & Roth Alg. 1) | Lap(2Δ/ε) | Lap(4Δ/ε) | halts | ⊥ … ⊥ ⊤ |
# | **no query noise** (Lyu et al. Alg. 5, from Stoddard et al. 2014) | Lap(2Δ/ε) | none | goes on | ⊥/⊤ for every query |
# | **no halting** (Lyu et al. Alg. 6, from Chen et al. 2015) | Lap(2Δ/ε), reused after each ⊤ | Lap(2Δ/ε) | goes on | ⊥/⊤ for every query |
# | **released value** (Lyu et al. Alg. 3, from Roth 2011) | Lap(2Δ/ε) | Lap(2Δ/ε) | halts | the ⊤'s noisy value q_k + ν_k |
#
# They are in `dpexplore.svt_audit` (teaching code, outside every release path; each warns
# `NotDifferentiallyPrivateWarning`). `audit_svt` runs a variant thousands of times on neighbouring query
# lists (each query moves by at most Δ = 1, τ = 0), built against the variants as in Lyu et al.:
#
# - **threshold ± 1**: answers (−1, 1) on D and (0, 0) on D′: ⊥⊤ needs the noisy threshold in (−1, 1] on
#   D but in (0, 0] on D′, impossible without query noise;
# - **below then above**: five queries just below τ, then one just above, each likelier on D;
# - **opposite blocks**: 20 queries just above τ then 20 just below, swapped on D′: every ⊤ after the first
#   adds privacy loss;
# - **released value**: a low released value caps the threshold noise, and then the ⊥ answers before it
#   tell more.
#
# The audit returns a lower confidence bound on each variant's true ε (95 % confidence): a bound above the
# claimed ε = 1 refutes the claim. A small audit, live (1,000 draws per side, a few seconds):

# %%
with warnings.catch_warnings():
    # the variants warn that they are not private; the audit silences its own runs, this cell only
    # names them
    warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
    live = pd.concat([
        audit_svt(above_threshold, pairs=["threshold ± 1", "opposite blocks"], n_samples=1_000,
                  random_state=1).assign(variant="AboveThreshold"),
        audit_svt(svt_without_query_noise, pairs=["threshold ± 1"], n_samples=1_000,
                  random_state=2).assign(variant="no query noise"),
        audit_svt(svt_without_halting, pairs=["opposite blocks"], n_samples=1_000,
                  random_state=3).assign(variant="no halting"),
    ], ignore_index=True)
live[["variant", "pair", "claimed_epsilon", "epsilon_lower", "violates"]].round(3)

# %% [markdown]
# The released-value variant needs far more draws. The cached audit runs every variant on every pair
# with 250 to 40,000 draws per side (about a minute; recompute with
# `python benchmarks/14_svt_audit.py`). First the verdict at 40,000 draws, each variant on the pair where
# its bound is largest:

# %%
cached = pd.read_csv(RESULTS / "14_svt_audit.csv")
splots.audit_verdicts_chart(cached)

# %% [markdown]
# Then how the bound grows with the number of draws (filled points: the claim refuted):

# %%
splots.audit_draws_chart(cached)

# %% tags=["exercise"]
# Exercise 14.3 (read the chart, 2 min): which broken variant does the audit need the most draws to
# refute: (a) no query noise, (b) no halting, or (c) released value?
hardest_to_refute = None   # your answer: "a", "b" or "c"
### BEGIN SOLUTION
hardest_to_refute = "c"
### END SOLUTION

# %% tags=["self-check"]
lab.check("14.3")

# %% [markdown]
# <details><summary>What a pass and a refutation mean (open it after the check)</summary>
#
# A refutation is a proof, with the audit's confidence, that the claim ε = 1 is false: some output is
# more than e^1 times likelier on one side. A variant whose leak lives in a rare output (a low released
# value) needs many draws before its counts show it. AboveThreshold's bound stays below ε however many
# draws: that is evidence, not a proof; the proof is Dwork & Roth's Thm 3.23.
# </details>
#
# ## 5. Repair a variant
#
# Here is Lyu et al.'s Algorithm 6 (Chen et al. 2015) as code you can read, with the signature the
# exercise uses: `queries` a NumPy array of counts (Δ = 1), `threshold`, `epsilon` and `rng`, a NumPy
# `Generator`. It answers every query, reusing its threshold noise after a ⊤.

# %%
def chen_svt(queries, threshold, epsilon, rng):
    noisy_threshold = threshold + rng.laplace(0.0, 2 / epsilon)
    answers = []
    for q in queries:
        answers.append(bool(q + rng.laplace(0.0, 2 / epsilon) >= noisy_threshold))
    return answers


def audited(fn):
    """The audit calls mechanism(queries, threshold, *, epsilon, random_state)."""
    return lambda q, t, *, epsilon, random_state: fn(q, t, epsilon, random_state)


audit_svt(audited(chen_svt), pairs=["opposite blocks"], n_samples=1_000, random_state=4)

# %% [markdown]
# **Exercise 14.4 (implement, graded, 12 min).** Write `my_above_threshold(queries, threshold, epsilon,
# rng)`: `chen_svt` repaired into an ε-DP algorithm, AboveThreshold itself. Return the answers as
# True (⊤) / False (⊥), one per query asked; draw all randomness from `rng`; do not call dpexplore.
#
# `lab.check` grades it twice. It compares where your first ⊤ falls with AboveThreshold's exact
# distribution on query lists it generates when it runs (1 to 45 queries, tables of a handful of records
# to 10⁵, counts from 0 to 10⁴, τ a full Δ from a count, ε from 0.5 to 2): noise 5 % too small, a reused
# or missing noise, answers after the first ⊤, or an exact comparison anywhere are refused, with the
# reason. Then it runs the privacy audit on the four neighbouring pairs above; the same audit must refute
# `chen_svt`, or a pass would mean nothing. Try `audit_svt(audited(my_above_threshold), n_samples=1_000)`
# yourself first.

# %% tags=["exercise"]
my_above_threshold = None   # your answer: a function (queries, threshold, epsilon, rng) -> answers
### BEGIN SOLUTION
def my_above_threshold(queries, threshold, epsilon, rng):
    noisy_threshold = threshold + rng.laplace(0.0, 2 / epsilon)       # Dwork & Roth Alg. 1, line 1
    answers = []
    for q in queries:
        above = q + rng.laplace(0.0, 4 / epsilon) >= noisy_threshold  # line 3: Lap(4Δ/ε), Δ = 1
        answers.append(bool(above))
        if above:
            break                                                      # halt at the first ⊤
    return answers
### END SOLUTION

# %% tags=["self-check"]
lab.check("14.4")

# %% [markdown]
# <details><summary>The two repairs (open it after the check)</summary>
#
# Halting at the first ⊤ bounds what the answers can tell: without it, each further ⊤ is compared with
# the same noisy threshold and adds privacy loss, with no limit on how many there are. The query noise
# must be Lap(4Δ/ε), not Lap(2Δ/ε): a comparison q_i + ν_i ≥ τ + ν_τ can move by 2Δ between neighbours
# (the query by Δ, the shifted threshold noise by Δ), paid with half of ε. To answer c ⊤'s, run it c
# times or use the sparse vector with a cutoff, paying for each (Lyu et al. 2017, Alg. 1).
# </details>
#
# ## Summary
#
# - AboveThreshold answers a stream of threshold queries and pays ε once: half for the threshold noise,
#   half for its single ⊤. The ⊥ answers before the ⊤ are free.
# - Its first ⊤ falls near the true one, with an exact distribution the package computes; the grader
#   compares a student's repair with it.
# - Three published variants are not private: no query noise, no halting, a released value. The audit
#   refutes each with enough draws (the rarer the leaking output, the more draws), and passes the correct
#   algorithm. A pass is evidence; the proof is the theorem.
#
# Then: the method notebooks, from **[02_privpfc](02_privpfc.ipynb)** on, build on the mechanisms and the
# accounting of 01 and 12–14.
