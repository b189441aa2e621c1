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
# # 06 · Projected histograms: select a few attributes, publish their noisy histogram, learn from it
#
# Based on Vinterbo (2012), *Differentially Private Projected Histograms: Construction and Use for
# Prediction* (ECML PKDD). Full references are in the [bibliography](../docs/bibliography.md),
# symbols as in the [glossary](../docs/glossary.md).
# The exercises have an *exercise* cell where you type an answer and a *self-check* cell that says
# whether it is right (it never shows the answer).
#
# ## What you will learn
#
# - why a noisy histogram of a whole table is useless (noise on *every* cell of a domain that grows
#   exponentially with the number of attributes), and why **projecting** onto a few attributes first
#   fixes it;
# - how the **greedy exponential mechanism** picks k attributes by their *discernibility* (how many
#   pairs of records with different labels they tell apart), and what each pick costs;
# - how the **threshold τ = A·ln(n)/ε_h** removes most noise-only cells, how likely an empty cell is
#   to survive it (and how that depends on ε: a surprise), and how the histogram is built without
#   ever enumerating its (huge) domain;
# - how a synthetic table made from the release trains an ordinary logistic regression, and how its
#   AUC depends on ε, k and the budget split γ, on Iris (3 classes) and Adult (2 classes), next to
#   non-private logistic regression and a DP logistic regression.

# %%
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import altair as alt
from tqdm.auto import tqdm

from dpexplore import lab
from dpexplore.config import repetitions
from dpexplore.datasets import load_iris, train_test_split
from dpexplore.publish import projected as ph
from dpexplore.publish import sparse_histogram
from dpexplore.publish.projected import ProjectedHistogram
from dpexplore.evaluate import projected as evaluation
from dpexplore.plots import projected as charts
from dpexplore.widgets import projected as explore

warnings.simplefilter("ignore", ph.EmptySyntheticWarning)
iris, iris_schema = load_iris()
X_train, X_test, y_train, y_test = train_test_split(iris, iris_schema, test_size=0.1, random_state=0)

# %% [markdown]
# ## 1 · The whole pipeline in one call
#
# `ProjectedHistogram(epsilon, k=None, gamma=None, A=0.5)` runs the paper's three steps on a training
# table and a **public** schema (the category lists and numeric bounds are not read from the data):
#
# 1. numeric columns are cut into *s* equal-width bins over their public range;
# 2. k predictors are chosen privately with ε_p = (1 − γ)·(ε − ε_size);
# 3. the histogram of (those k predictors × the label) over its **full** public domain gets Laplace
#    noise with ε_h = γ·(ε − ε_size), and cells at or below τ are dropped.
#
# ε_size comes first: the package counts neighbouring tables as differing by *adding or removing* one
# record, so the table size n, which the bins, the heuristics and the threshold need, is private too
# and is itself released, as a noisy count n̂, with a small share ε_size of ε (the ledger below shows
# how much); γ splits what is left. The histogram's noise is then Laplace(1/ε_h).
# `neighbours="substitution"` reproduces the paper's model (n public, so ε_size = 0, and
# Laplace(2/ε_h)), where the paper's ε_p = (1 − γ)·ε and ε_h = γ·ε hold as printed. With `k=None`
# and `gamma=None` the paper's heuristics choose k and γ from public numbers only (n̂, the number of
# predictors and classes).
#
# On Iris at ε = 1 we start with **one attribute** (k = 1) cut into bins chosen for that one dimension
# (`n_bins="projected"`, the bw(n, k) rule of §2): a small histogram, little noise per cell.

# %%
model = ProjectedHistogram(epsilon=1.0, k=1, n_bins="projected", random_state=0, schema=iris_schema).fit(X_train, y_train)
print(charts.summary_text(model))
print("test AUC (Hand–Till):", round(evaluation.auc(y_test, model.predict_proba(X_test), model.classes_), 3))
model.ledger_

# %% [markdown]
# The ledger lists every spend: the noisy record count, one entry per greedy step (each ε_p/k), and the
# histogram. The bar below shows the same split.

# %%
charts.budget_chart(model.epsilon_split_, model.k_)

# %% [markdown]
# **Exercise 06.1 (compute, 4 min).** `ProjectedHistogram(epsilon=1.0, k=2, gamma=0.8)` under
# add/remove: the record count takes the same share of ε as in the ledger above, γ splits the rest
# between the histogram (γ) and the selection (1 − γ), and each of the k greedy steps spends
# ε_step = ε_p/k. What are ε_h and ε_step? Answer with the pair `(ε_h, ε_step)`.

# %% tags=["exercise"]
split_answer = None   # your answer: a pair (eps_h, eps_step)
### BEGIN SOLUTION
rest = 1.0 - 0.05                     # the record count's share, read in the ledger
split_answer = (0.8 * rest, (1 - 0.8) * rest / 2)
### END SOLUTION

# %% tags=["self-check"]
lab.check("06.1")

# %% [markdown]
# ### The weak case: the paper's heuristics on Iris
#
# Leave k and the bins to the paper's heuristics and the same ε gives a much less reliable model. The
# literal bin rule counts all four predictors, which gives **2 bins** per attribute over the public
# range [0, 8] cm: every measurement is cut at 4 cm. Petal width never reaches 4 cm (constant: it tells
# nothing), sepal length is almost always above, and only petal length at 4 cm separates setosa from the
# rest. The AUC then depends on which attributes the noisy greedy selection picks: over six seeds it
# swings between about 0.56 and 1. Sections 2 and 3 take this model apart.

# %%
heuristic = ProjectedHistogram(epsilon=1.0, random_state=0, schema=iris_schema).fit(X_train, y_train)
print(charts.summary_text(heuristic))
aucs = [evaluation.auc(y_test, ProjectedHistogram(epsilon=1.0, random_state=r, schema=iris_schema).fit(X_train, y_train)
                    .predict_proba(X_test), iris_schema.classes) for r in range(6)]
print("test AUC over seeds 0–5:", ", ".join(f"{a:.2f}" for a in aucs))

# %% [markdown]
# ## 2 · Step 1: bins from public bounds
#
# The paper's rule uses Lei's bandwidth bw(n, d) = (ln n / n)^(1/(d+1)) and s = ⌈1/bw − ½⌉ bins. Read
# literally, d counts *all* predictors, which gives very few bins; the alternative bw(n, k) uses the
# projected dimension. Both are clamped to at least 2 bins (one bin would make an attribute constant).
# The bins cover the **public** range of each attribute: for Iris the package declares [0, 8] cm for
# all four measurements, so 2 bins split every measurement at 4 cm.

# %%
rows = []
for name, n, d in [("Iris", 135, 4), ("Adult", 40_700, 14)]:
    row = {"data": name, "n": n, "predictors": d, "literal bw(n, d)": ph.bin_count(n, d)}
    row.update({f"bw(n, k={k})": ph.bin_count(n, k) for k in range(1, 5)})
    rows.append(row)
pd.DataFrame(rows)

# %% [markdown]
# ## 3 · Step 2: greedy private selection by discernibility
#
# A set S of attributes *discerns* a pair of records when they differ on some attribute of S. The score
# F(S) counts the ordered pairs that S discerns **and** that have different labels, divided by n.
# Changing one record moves F by less than 2, so each greedy step is an exponential mechanism with
# sensitivity Δ = 2: attribute a is picked with probability ∝ exp(ε_step·F(S ∪ {a})/(2Δ)), ε_step = ε_p/k
# (the paper writes the coefficient as ε′ = ε_p/(4k)), and the k steps together cost ε_p.
#
# The chart shows, for the heuristic model above, each step's candidates and their selection
# probabilities (computed from the private data, so a diagnostic, not part of the release). With only 2
# bins over [0, 8] cm, petal width never reaches 4 cm: it is constant and discerns nothing.

# %%
view = heuristic.diagnostics(X_train, y_train)   # NOT private: true scores, for teaching only
charts.selection_chart(view["selection"])

# %% [markdown]
# How random is the selection? Below: how often each Iris attribute is the **first** pick over 200
# runs, as the selection budget ε_p grows. At small ε_p the pick is nearly uniform; at large ε_p it
# becomes the non-private greedy choice.

# %%
codes, _ = heuristic._codes(X_train, iris_schema.predictors, heuristic.n_bins_)
y_codes = iris_schema.encode_target(y_train)
rows = []
for eps_p in tqdm([0.01, 0.05, 0.2, 1.0], desc="ε_p"):
    picks = [ph.private_kd(codes, y_codes, 1, eps_p, random_state=r)[0][0] for r in range(repetitions(200, 40))]
    for a, c in zip(iris_schema.predictors, np.bincount(picks, minlength=4)):
        rows.append({"ε_p": eps_p, "attribute": a, "share": c / len(picks)})
alt.Chart(pd.DataFrame(rows)).mark_bar().encode(
    x=alt.X("share:Q", title="share of first picks"), y=alt.Y("attribute:N", title=None),
    row=alt.Row("ε_p:O")).properties(width=320, height=70)

# %% [markdown]
# **Exercise 06.2 (interpret the chart, 3 min).** Read the chart above: what is the **smallest** ε_p
# of the chart at which one attribute is the first pick in **more than 80 %** of the runs? Then ask
# yourself why the two attributes with zero gain are still picked at small ε_p.

# %% tags=["exercise"]
eps_p_reliable = None   # your answer: one of the chart's ε_p values
### BEGIN SOLUTION
eps_p_reliable = 0.2
### END SOLUTION

# %% tags=["self-check"]
lab.check("06.2")

# %% [markdown]
# ## 4 · Step 3: the thresholded histogram
#
# Every cell of the projected domain, **including the empty ones**, gets Laplace noise; only cells above
# τ = A·ln(n)/ε_h are kept. Perturbing only the cells that occur in the data would reveal which
# combinations exist: not private. The release is built sparsely (the paper's §2.4): the occupied cells
# get noise, the number of empty cells that survive is drawn from Binomial(#empty, P(noise > τ)), their
# positions are uniform among the empty cells and their values are τ + Exponential. That has exactly
# the distribution of the dense construction, at a cost linear in the data plus the output.
#
# Below: black ticks are the true counts of every cell × class, bars the released noisy counts, the red
# dashed line τ. Red bars are cells that were **empty in truth**: their records are pure noise.

# %%
demo = ProjectedHistogram(1.0, k=2, n_bins="projected", random_state=3, schema=iris_schema).fit(X_train, y_train)
print(charts.summary_text(demo))
charts.histogram_chart(evaluation.histogram_table(demo, X_train, y_train), demo.threshold_)

# %% [markdown]
# The synthetic table repeats every kept cell ⌈h̃ − ½⌉ times (numeric bins become their midpoints). Its
# size is random, not n; the logistic regression behind `predict_proba` is fitted on it. By default
# `synthetic()` never returns fewer rows than a public floor (`dpexplore.limits.MIN_SYNTHETIC_ROWS`,
# 300) and warns when the noisy count is below it, as it is for this small Iris split; `n=` the sum of
# the rounded counts asks for the paper's own table.

# %%
demo.synthetic(n=int(demo.counts_.rounded().sum())).value_counts().rename("rows").reset_index()

# %% [markdown]
# **Exercise 06.3 (implement, graded by the privacy audit, 12 min).** Write the thresholded
# histogram over an explicit public domain: `my_histogram(counts, epsilon, tau, rng)` gets the true count of **every**
# cell of the domain (a NumPy array, zeros included), adds Laplace noise for add/remove neighbours
# (one record changes one cell by 1), and returns an array of the same length: the noisy count where
# it is above τ, 0 where the cell is dropped. Draw all randomness from `rng`, a NumPy `Generator`.
#
# `lab.check` grades your function in two ways, on inputs you never see: it compares what your
# release returns, over many runs on domains from a few cells to 100,000 records, with the
# thresholded Laplace mechanism's; and the package's privacy audit runs it at ε = 1 on ten pairs of
# neighbouring tables (counts (0, 40) and (1, 40) at τ = 0.5 among them) and passes it when the
# audit's lower bound stays at or below 1 on every pair. The same audit must catch a planted leak —
# this release with noise on the occupied cells only — so a pass means something.

# %% tags=["exercise"]
my_histogram = None   # your answer: a function (counts, epsilon, tau, rng) -> array of released counts
### BEGIN SOLUTION
def my_histogram(counts, epsilon, tau, rng):
    noisy = np.asarray(counts, dtype=float) + rng.laplace(0.0, 1.0 / epsilon, size=len(counts))
    return np.where(noisy > tau, noisy, 0.0)   # every cell gets noise, the empty ones too
### END SOLUTION

# %% tags=["self-check"]
lab.check("06.3")

# %% [markdown]
# ## 5 · Which cells survive?
#
# A cell with true count z survives with probability P(Laplace > τ − z) (the paper's eq. 5), where the
# noise is Laplace(Δ/ε_h) and τ = A·ln(n)/ε_h.
#
# **Exercise 06.4 (predict, then run, 2 min).** Divide ε_h by ten. What happens to the probability
# that an **empty** cell (z = 0) survives the threshold? (a) it grows, (b) it stays the same, (c) it
# shrinks. Answer with a letter, then run the chart.

# %% tags=["exercise"]
empty_cell_change = None   # your answer: "a", "b" or "c"
### BEGIN SOLUTION
empty_cell_change = "b"
### END SOLUTION

# %% tags=["self-check"]
lab.check("06.4")

# %% [markdown]
# The chart below draws the survival probability of a cell against its true count z, for
# ε_h = 0.1, 0.3 and 1 on the Iris training table. The grey line is the empty-cell level at z = 0,
# the dashed verticals are τ.

# %% tags=["reveal"]
n_iris = len(X_train)
charts.survival_chart(evaluation.survival_table(n_iris, [0.1, 0.3, 1.0], A=0.5, sensitivity=1.0, z_max=60),
                      floor=0.5 / np.sqrt(n_iris))

# %% [markdown]
# <details><summary>Why the empty cells behave so (open it after you ran the chart)</summary>
#
# For an empty cell the survival probability is P(Laplace(Δ/ε_h) > A·ln(n)/ε_h) = ½·n^(−A/Δ) (Δ = 1
# here, 2 in the paper): it does **not** depend on ε, because τ grows like 1/ε exactly as fast as the
# noise does. Smaller ε only moves the curve for the real cells to the right: a cell needs more
# records to survive.
# </details>

# %% [markdown]
# A Monte-Carlo check of the formula at ε_h = 0.3: the share of 20,000 noisy draws above τ for a few
# true counts, next to eq. 5.

# %%
rng = np.random.default_rng(0)
tau = sparse_histogram.threshold(n_iris, 0.3)
noise = rng.laplace(0, 1 / 0.3, size=repetitions(20_000, 5_000))
pd.DataFrame({"z": [0, 5, 10, 20], "formula": sparse_histogram.survival_probability(np.array([0, 5, 10, 20]), n_iris, 0.3, 0.5, 1.0),
              "simulated": [np.mean(z + noise > tau) for z in (0, 5, 10, 20)]}).round(3)

# %% [markdown]
# **Exercise 06.5 (compute, 4 min).** A projection has **20,000 empty cells** (cell × class) for a
# table of **n = 10,000** records, with A = 0.5 under add/remove (Δ = 1). How many of those empty cells
# survive the threshold, on average — each one a block of fake records in the synthetic table?

# %% tags=["exercise"]
fake_cells = None   # your answer: a number
### BEGIN SOLUTION
fake_cells = 20_000 * 0.5 * 10_000 ** (-0.5 / 1)
### END SOLUTION

# %% tags=["self-check"]
lab.check("06.5")

# %% [markdown]
# **Try it.** `ε_h` is the histogram's budget, `A` the threshold constant and `n` the table size. Watch
# the floor at z = 0 move with A and n but not with ε_h.

# %%
explore.survival_explorer(n_iris)

# %% [markdown]
# ## 6 · Explore the whole pipeline
#
# Sliders: **ε** (total budget, log scale), **k** (number of attributes; 0 = the paper's heuristic),
# **γ** (share of ε for the histogram; 0 = heuristic), **A** (threshold constant), and the **bin rule**
# (bw(n, d−1) over all predictors, or bw(n, k): fewer attributes, more bins). You see the summary, each
# greedy step's selection probabilities, and the released histogram with τ and the cells that were
# empty in truth. The noise seed is fixed, so changes come only from the sliders.

# %%
explore.selection_explorer(X_train, y_train, iris_schema, n_bins="projected")

# %% [markdown]
# ## 7 · AUC against ε, k and γ
#
# The paper's protocol: stratified cross-validation, every private step re-run inside each training
# fold, AUC on the held-out fold (Hand–Till's multiclass AUC for Iris). One parameter moves at a time;
# the others stay at ε = 1 and the heuristic k and γ. References: logistic regression on the real data
# (**not private**, the ceiling) and `PrivateLogisticRegression` (objective perturbation; for Iris one
# model per class at ε/3 each). DP-LR is slow on the 45,222 Adult rows, so for Adult it is run at ε = 1
# only (a single point in the ε panel). A third reference, **projection only**, runs the same pipeline
# with ε = 10⁴, i.e. practically without noise (not a private setting): the gap between it and
# non-private LR is the price of projecting and discretising, the gap below it the price of privacy.

# %%
# Cached: about 700 cross-validated fits (minutes on two cores). Recompute with
#   python benchmarks/06_projected_sweeps.py        (writes notebooks/results/06_auc_sweeps.csv)
sweeps = pd.read_csv(Path("results") / "06_auc_sweeps.csv")
sweeps.groupby(["dataset", "method"])["fold"].nunique().rename("folds").reset_index()

# %% [markdown]
# Median AUC (line) and interquartile range (band) as ε grows:

# %%
charts.auc_chart(sweeps[sweeps.parameter == "epsilon"])

# %% [markdown]
# As k grows (the bins follow the literal rule, so they do not change with k), and as γ moves budget
# from the selection to the histogram:

# %%
alt.vconcat(charts.auc_chart(sweeps[sweeps.parameter == "k"]), charts.auc_chart(sweeps[sweeps.parameter == "gamma"]))

# %% [markdown]
# The same results, interactively: pick the parameter.

# %%
explore.auc_explorer(sweeps)

# %%
table = (sweeps[sweeps.method == "projected histogram"].groupby(["dataset", "parameter", "value"])["auc"]
         .median().unstack("value").round(3))
table

# %% [markdown]
# ## What to take away
#
# - The release is a histogram of **k + 1 dimensions only**: its domain, and therefore the number of
#   noise-only cells that survive τ, stays manageable. An empty cell survives with probability
#   ½·n^(−A/Δ) at every ε, and each one brings about τ + noise-scale fake records.
# - The greedy selection with the exponential mechanism spends ε_p/k per step; the discernibility
#   score's sensitivity stays 2 because it is divided by n.
# - Two losses add up: projecting and discretising (non-private LR vs "projection only") and privacy
#   ("projection only" vs the projected histogram). On Iris the first one is large: with the public
#   range [0, 8] cm and 2 bins, petal width is constant and only petal length at 4 cm is informative.
#   Try k = 1 with the bw(n, k) rule in the explorer: one attribute, five bins.
# - Discernibility prefers attributes with many evenly filled levels (on Adult: occupation, education),
#   whether or not they predict the label; once they are chosen, the remaining gains are close and the
#   later picks are nearly random.
# - The synthetic table is ordinary data: any learner can use it, and the ε is spent once.
