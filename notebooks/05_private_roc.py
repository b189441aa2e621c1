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
# # 05 · Private evaluation: ROC curves, AUC and feature selection
#
# Based on Stoddard, Chen & Machanavajjhala (2014), *Differentially Private Algorithms for Empirical
# Machine Learning*. Full references are in the [bibliography](../docs/bibliography.md), symbols as
# in the [glossary](../docs/glossary.md).
#
# This notebook is **two labs**: **Part A** (sections 1–6) releases ROC curves and AUCs of a private
# test set; **Part B** (sections 7–9) selects features privately and audits a published algorithm.
# Each part has its own exercises: an *exercise* cell where you type an answer, then a *self-check*
# cell that says whether it is right (it never shows the answer).
#
# ## What you will learn
#
# - why publishing an ordinary ROC curve of a **private test set** leaks, and how **PriROC**
#   releases one with ε-differential privacy in three steps: thresholds, noisy counts (Privelet),
#   isotonic regression;
# - how the choice of thresholds (a fixed grid vs noisy medians) and the number of bins trade
#   discretisation against noise, and how PriROC compares with the naive **LaplaceROC**;
# - how to select features privately (score perturbation, exponential mechanism, sparse vector) and
#   what it does to accuracy;
# - how a **privacy audit** tests the claim of an algorithm published as private (Private
#   Threshold Testing), and what its verdict can and cannot prove.

# %%
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import altair as alt
from tqdm.auto import tqdm
from sklearn.linear_model import LogisticRegression

from dpexplore import lab
from dpexplore.config import repetitions
from dpexplore.datasets import load_adult
from dpexplore.evaluate import roc
from dpexplore.select import stoddard
from dpexplore.plots import roc as roc_plots
from dpexplore.widgets.roc import PrivateROCExplorer, FeatureSelectionExplorer

warnings.simplefilter("ignore", roc.DegenerateCurveWarning)
RESULTS = Path("results")   # cached sweeps (see the cells that read them)

# %% [markdown]
# ## Part A · Private evaluation: ROC curves and AUC
#
# ### 1. Two classifiers and a private test set
#
# We train classifiers on 10,000 Adult records and keep **600 other records as the test set**:
# these test records are the private data whose ROC curve we want to publish (the paper's test
# folds have 558 and 684 records). A private curve protects the **test** people. The training
# people are protected only if the classifier itself was trained privately: its scores are part of
# every curve drawn from them. When it was (ε_train), the two sets are disjoint, so by parallel
# composition nobody pays ε_train + ε_ROC: a training person is protected at ε_train, a test person
# at ε_ROC. When it was not, the curve is no guarantee at all for the training people.
#
# - **logistic regression (not private)**: scikit-learn on one-hot encoded attributes, the
#   contrast case;
# - **PrivateLogisticRegression (ε = 1)**: the package's objective-perturbation logistic
#   regression (Chaudhuri et al.), trained on 0/1 indicators of each attribute's taxonomy leaves
#   (a public encoding, so the feature bounds (0, 1) are public too).

# %%
frame, schema = load_adult()
rng = np.random.default_rng(0)
order = rng.permutation(len(frame))
test, train = frame.iloc[order[:600]], frame.iloc[order[600:10_600]]
X_train, y_train = schema.split(train)
X_test, y_test = schema.split(test)
positive = schema.classes[-1]
y = (y_test == positive).to_numpy().astype(int)
CLASSES = [0, 1]   # public: the schema's classes as 0/1, negative first (never read from y)
print(f"test set: {len(y)} records, {y.sum()} with income {positive}")

# %%
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from dpexplore.models.logistic import PrivateLogisticRegression

public_lr = make_pipeline(
    ColumnTransformer([("num", StandardScaler(), schema.numeric),
                       ("cat", OneHotEncoder(handle_unknown="ignore"), schema.categorical)]),
    LogisticRegression(max_iter=1000)).fit(X_train, y_train)

B_train = stoddard.binarize_leaves(X_train, schema)     # 0/1 leaf indicators (public encoding)
B_test = stoddard.binarize_leaves(X_test, schema)
private_lr = PrivateLogisticRegression(epsilon=1.0, C=0.1, bounds=(0, 1), fit_intercept=True,
                                       classes=list(schema.classes), random_state=0).fit(B_train, y_train)

def positive_scores(model, X):
    return model.predict_proba(X)[:, list(model.classes_).index(positive)]

score_sets = {"logistic regression (not private)": positive_scores(public_lr, X_test),
              "PrivateLogisticRegression (ε = 1)": positive_scores(private_lr, B_test)}
scores = score_sets["logistic regression (not private)"]
private_lr.ledger_

# %% [markdown]
# The exact ROC curve plots, for every threshold θ, the true positive rate against the false
# positive rate of the rule "predict positive when score > θ". Its area (AUC) summarises the
# classifier. **Publishing this curve is not private**: someone who knows every test record but
# one can try both labels for the missing record and see which one reproduces the curve.

# %%
true_curve = roc.roc_curve_exact(y, scores)
for name, sc in score_sets.items():
    print(f"true AUC (not private) of {name}: {roc.roc_curve_exact(y, sc).attrs['auc']:.3f}")
roc_plots.roc_chart(roc_plots.stack_curves({}, true_curve),
                    title="The exact ROC curve of the non-private model (leaks)")

# %% [markdown]
# From here on, sections 2–6 use the **non-private** model's scores: the steps below treat any
# classifier's scores the same way, so they show what happens to the test set. But a curve of this
# model is differentially private for the 600 test people only, not for the 10,000 people it was
# trained on: the model saw them without noise. To publish a curve that protects both, draw it from
# `PrivateLogisticRegression` (trained at ε = 1): the explorer in section 5 lets you switch to it.

# %% [markdown]
# ### 2. PriROC step 1: where to put the thresholds
#
# PriROC first fixes a set of thresholds; the curve will only have points there.
#
# - **FixedSpace** puts them on an equal-width grid of the public score range [0, 1]. It costs no
#   budget, but if the scores pile up near 0 (as here: most people earn ≤ 50K) many bins are empty.
# - **RecursiveMedians** spends ε1 = 20 % of ε on k levels of noisy medians: the median splits the
#   scores in two halves, then each half is split again, giving 2^k bins with roughly equal counts.
#   The medians of one level split disjoint parts of the test set, so a level costs ε_level = ε1/k
#   once (parallel composition). Each noisy median uses Cauchy noise scaled by the median's *smooth
#   sensitivity*; the alternative is an exponential-mechanism median.
#
# **Where the smooth sensitivity comes from, and how dpexplore adapts it.** Nissim, Raskhodnikova &
# Smith (2007) define the median's smooth sensitivity for *substitution* neighbours: n is fixed and
# one value changes. Stoddard et al. count neighbours by *adding or removing* a record — the model of
# dpexplore — and then the size of each part is itself private. So the package computes the bound
# for add/remove: after j records are added or removed, the median of the sorted scores
# x₁ ≤ … ≤ xₙ can only lie between x₍ₕ₋₁₎ and x₍ₕ₊₁₊ⱼ₎ with h = ⌊(n − j + 1)/2⌋ (positions beyond the
# data stand for the interval's ends), and it takes S = maxⱼ e^(−jβ)·(x₍ₕ₊₁₊ⱼ₎ − x₍ₕ₋₁₎). That is a
# β-smooth upper bound on the median's local sensitivity under add/remove, which is what the Cauchy
# noise of scale 8·S/ε_level (β = ε_level/2) needs. It never branches on the part's size: an empty
# part gets S = the interval's width.
#
# **Exercise 05.1 (compute, 3 min).** A PriROC release at total **ε = 2** with **32 bins**, using
# RecursiveMedians with the paper's 20 % for the thresholds: what is ε_level, the budget of one
# level of noisy medians?

# %% tags=["exercise"]
eps_level = None   # your answer: a number
### BEGIN SOLUTION
eps_level = 0.2 * 2 / np.log2(32)
### END SOLUTION

# %% tags=["self-check"]
lab.check("05.1")

# %% [markdown]
# The histogram below shows the scores (not private, for teaching) and where each strategy puts
# its 15 interior thresholds at ε = 1.

# %%
eps1 = 0.2 * 1.0
smooth, fell_back = roc.recursive_median_thresholds(scores, epsilon=eps1, depth=4, return_fallbacks=True,
                                                    random_state=1)
thresholds = pd.concat([
    pd.DataFrame({"strategy": "FixedSpace", "threshold": roc.fixed_space_thresholds(16)[1:-1]}),
    pd.DataFrame({"strategy": "RecursiveMedians (smooth sensitivity)", "threshold": smooth}),
    pd.DataFrame({"strategy": "RecursiveMedians (exponential mechanism)",
                  "threshold": roc.recursive_median_thresholds(scores, epsilon=eps1, depth=4,
                                                               median="exponential", random_state=1)}),
])
print(f"smooth-sensitivity medians that fell outside their interval: {fell_back.sum()} of {fell_back.size}")
roc_plots.threshold_rug_chart(scores, thresholds)

# %% [markdown]
# With only ε_level = ε1/k = 0.05 per level, the Cauchy noise has scale 8·S/ε_level = 160·S. The
# weight e^(−jβ) with β = ε_level/2 = 0.025 makes S roughly the spread of the 1/β = 40 or so scores
# on each side of the median: unless they sit within about 1/160 of the interval, the noise is wider
# than the interval itself, the noisy median usually falls outside it, and the algorithm takes the
# midpoint instead (post-processing). Here that happens almost every time: the thresholds become a
# dyadic grid, much like FixedSpace, and the 20 % of ε spent on them buys little at this test-set
# size. The exponential-mechanism median (utility
# −|#below − #above|, exact under add/remove) follows the data at the same ε. Which one gives the
# better curve is measured in section 6.

# %% [markdown]
# ### 3. PriROC step 2: noisy counts with Privelet
#
# For each bin we count the positive and negative test records in it. The true positive count
# TP(θ_i) is a **prefix sum** of the positive bins (all bins above θ_i). Adding Laplace noise to
# each bin makes the prefix sums' noise grow with their length; adding it to each prefix sum would
# need a sensitivity equal to the number of thresholds. **Privelet** adds noise to the Haar wavelet
# coefficients instead (sensitivity 1 + log2 m for m bins), so every prefix sum gets noise that
# grows only like a power of log m.
#
# The chart shows the standard deviation of the noise on the prefix sum of length i for m = 256 bins
# and ε = 1 (simulated).
#
# **Exercise 05.2 (compute, 3 min).** The paper uses m = **1024** bins. The positive counts get
# ε2/2 = **0.4**. Privelet adds Laplace noise to the weighted Haar coefficients W(c)·c, whose L1
# sensitivity is 1 + log₂ m. What is the scale of that Laplace noise?

# %%
m, n_sim = 256, repetitions(400, 50)
sim_rng = np.random.default_rng(2)
zeros = np.zeros(m)
privelet = np.array([np.cumsum(roc.privelet(zeros, epsilon=1.0, random_state=sim_rng)) for _ in range(n_sim)])
bins = np.cumsum(sim_rng.laplace(0, 1.0, size=(n_sim, m)), axis=1)
prefix = pd.DataFrame({"prefix length": np.tile(np.arange(1, m + 1), 2),
                       "noise sd": np.r_[privelet.std(axis=0), bins.std(axis=0)],
                       "mechanism": ["Privelet"] * m + ["Laplace on each bin"] * m})
alt.Chart(prefix).mark_line().encode(x="prefix length:Q", y="noise sd:Q", color="mechanism:N").properties(
    width=420, height=220, title="Noise on a prefix sum (ε = 1, 256 bins)")

# %% tags=["exercise"]
privelet_scale = None   # your answer: a number
### BEGIN SOLUTION
privelet_scale = (1 + np.log2(1024)) / 0.4
### END SOLUTION

# %% tags=["self-check"]
lab.check("05.2")

# %% [markdown]
# ### 4. PriROC step 3: make the counts monotone
#
# Noisy prefix sums can go down, but TP(θ) can only grow as θ decreases. Isotonic regression (pool
# adjacent violators) returns the closest non-decreasing sequence; it is post-processing, so it
# costs no privacy. The last prefix sum is the number of positives, so dividing by it gives the
# true positive rate without releasing n1 separately.

# %%
interior = roc.fixed_space_thresholds(64)[1:-1]
tp_bins = np.bincount(64 - 1 - np.searchsorted(interior, scores[y == 1]), minlength=64)
noisy = np.cumsum(roc.privelet(tp_bins, epsilon=0.4, random_state=3))
sums = pd.DataFrame({"bin": np.tile(np.arange(1, 65), 3),
                     "value": np.r_[np.cumsum(tp_bins), noisy, roc.isotonic_increasing(noisy)],
                     "series": ["true"] * 64 + ["noisy (Privelet)"] * 64 + ["after isotonic regression"] * 64})
roc_plots.prefix_sum_chart(sums)

# %% [markdown]
# ### 5. Private ROC curves
#
# `roc.private_roc_curve(y, scores, epsilon=...)` runs the three steps and returns the curve as a
# table (threshold, fpr, tpr); `curve.attrs` holds the private AUC and the budget ledger. The score
# range (0, 1) is public: it is an argument, never read from the data. Here are five private draws
# at ε = 1 with the default settings (RecursiveMedians, 16 bins), next to the true curve:

# %%
draw_rng = np.random.default_rng(4)
draws = [roc.private_roc_curve(y, scores, epsilon=1.0, classes=CLASSES, random_state=draw_rng)
         for _ in range(5)]
print("private AUCs:", ", ".join(f"{c.attrs['auc']:.3f}" for c in draws))
roc_plots.roc_chart(roc_plots.stack_curves({"PriROC, ε = 1": draws}, true_curve))

# %% [markdown]
# Where did ε go? Each release records its spends: k levels of noisy medians (20 % of ε, each
# level on disjoint partitions so it is charged once), then the positive and the negative bin
# counts (40 % each, as in the paper).

# %%
draws[0].attrs["ledger"]

# %% [markdown]
# #### Explore it yourself
#
# The explorer below redraws the private curves each time you move a control:
#
# - **classifier**: whose scores are evaluated (the non-private or the private logistic regression);
# - **total ε**: the privacy budget of the whole release;
# - **threshold strategy**: RecursiveMedians, FixedSpace or the LaplaceROC baseline;
# - **k**: 2^k bins for PriROC (for LaplaceROC, k is the number t of thresholds);
# - **noisy median**: how RecursiveMedians finds its medians (smooth sensitivity as in the paper, or
#   the exponential mechanism);
# - **TP/FP budget**: the paper gives each label's histogram ε2/2. Since a record is in exactly one
#   of the two histograms, parallel composition lets each use all of ε2 at the same total cost;
# - **private draws**: how many independent releases to overlay.
#
# The black curve is the true one (for comparison only: it is not private).

# %%
explorer = PrivateROCExplorer(y, score_sets, classes=CLASSES, n_draws=3)
explorer.widget

# %% [markdown]
# ### 6. How much does privacy cost? AUC error against ε
#
# For each ε we repeat each method on the same scores and report the median |AUC error| and its
# interquartile range (the paper's Table 1 uses the median of 10 runs). LaplaceROC releases the
# counts at t = 10 thresholds with one Laplace mechanism, with the paper's sensitivity 2t + 1.

# %%
methods = {
    "LaplaceROC (t = 10)": lambda e, r: roc.laplace_roc_curve(y, scores, epsilon=e, classes=CLASSES,
                                                              random_state=r),
    "PriROC FixedSpace": lambda e, r: roc.private_roc_curve(y, scores, epsilon=e, thresholds="fixed_space",
                                                            classes=CLASSES, random_state=r),
    "PriROC RecursiveMedians": lambda e, r: roc.private_roc_curve(y, scores, epsilon=e, classes=CLASSES,
                                                                  random_state=r),
}
epsilons = [0.1, 0.25, 0.5, 1.0, 2.0]
n_rep = repetitions(30, 4)
rows = []
for (name, run), eps in tqdm([(m, e) for m in methods.items() for e in epsilons]):
    for r in range(n_rep):
        rows.append({"method": name, "epsilon": eps,
                     "error": abs(run(eps, r).attrs["auc"] - true_curve.attrs["auc"])})
errors = pd.DataFrame(rows)
roc_plots.auc_error_chart(errors)

# %%
errors.groupby(["method", "epsilon"])["error"].median().unstack().round(3)

# %% [markdown]
# **Exercise 05.3 (interpret the chart, 2 min).** At the smallest budget, ε = 0.1, which method has
# the largest median AUC error: (a) LaplaceROC (t = 10), (b) PriROC FixedSpace or (c) PriROC
# RecursiveMedians? Answer with a letter, and name to yourself the cause before you read on.

# %% tags=["exercise"]
worst_method = None   # your answer: "a", "b" or "c"
### BEGIN SOLUTION
worst_method = "a"
### END SOLUTION

# %% tags=["self-check"]
lab.check("05.3")

# %% [markdown]
# <details><summary>Why the errors differ (open it after the check)</summary>
#
# Read the table against the paper's Table 1 (median AUC errors at ε = 1 of about 0.02–0.07 for
# PriROC and 0.07–0.22 for LaplaceROC). LaplaceROC puts noise of scale (2t + 1)/ε on every count,
# so its error explodes at small ε, and part of it is discretisation: with t = 10 thresholds its
# curve has only 11 points. PriROC's Privelet noise grows with log m rather than with the number
# of thresholds, and isotonic regression removes much of what remains. On this test set the
# smooth-sensitivity RecursiveMedians is no better than FixedSpace (section 2 showed why).
# </details>
#
# The benchmark `benchmarks/private_roc_adult.py` measures more settings, including the paper's
# 1024 bins.

# %% [markdown]
# ## Part B · Private feature selection, and an audit
#
# ### 7. Scores and their sensitivities
#
# Stoddard et al. also select features privately before training. Features are binary: the 0/1
# leaf indicators `B_train` built in section 1, so every record has exactly s = 14 ones, a public
# bound that the sensitivities rely on (the selectors also *enforce* a bound `max_ones`, cutting
# longer rows at random before any score is computed).
#
# The score here is the total count TC(F) (records with the feature on). One added or removed
# record changes each score by at most 1 and at most s scores, so **score perturbation** adds
# Laplace noise of scale s/ε to every score.

# %%
yb_train = (y_train == positive).astype(int).to_numpy()
yb_test = y
s = len(schema.predictors)
tc = stoddard.total_count(B_train)
print(f"{B_train.shape[1]} binary features; at most s = {s} ones per record")
for name in ("TC", "DC", "PI"):
    S, delta = stoddard.score_sensitivity(name, n_features=B_train.shape[1], max_ones=s)
    print(f"{name}: one score moves by ≤ {S:g}, one record moves ≤ {delta} scores -> "
          f"score perturbation at ε = 0.1 adds Laplace noise of scale {S * delta / 0.1:g}")

# %% [markdown]
# ### 8. Accuracy with and without private selection
#
# We compare three sound selectors, each given ε for the selection only (the classifier trained
# afterwards is non-private logistic regression, so that the chart isolates the selection):
#
# - **score perturbation**: noisy TC scores, keep the top k;
# - **exponential top-k**: one draw over all k-subsets, P(S) ∝ exp(ε·ΣTC/(2·min(k, s)));
# - **sparse vector**: the first k features whose noisy TC passes a noisy threshold τ.
#
# The dashed lines are the references: all features, the exact top k by TC (the same selection
# without privacy), and the majority class.

# %%
# Cached: 75 selections and classifier fits. Recompute with
#   python benchmarks/05_private_roc_cache.py        (writes notebooks/results/05_*.csv)
sel_rows = pd.read_csv(RESULTS / "05_selection_accuracy.csv")
references = pd.read_csv(RESULTS / "05_selection_references.csv")
roc_plots.selection_accuracy_chart(sel_rows, references)

# %% [markdown]
# With a non-private classifier, a handful of features chosen privately does about as well as all
# 171: at these ε the noisy counts still find the frequent indicators, and the accuracy barely
# moves. Selection matters more when the classifier itself is private.
#
# #### A fully private pipeline
#
# The paper's point is that selection helps a *private* classifier: with fewer features, the
# noise of the private model is spread over fewer coefficients. Here the total budget is ε = 1 on
# the training data, spent either entirely on `PrivateLogisticRegression` with all features, or
# half on score perturbation (top k by TC) and half on the classifier (the paper's 0.5/0.5 split
# for score perturbation). One `BudgetAccountant` per run checks that the two steps add up to 1.

# %%
# Cached (30 private pipelines, each with its own BudgetAccountant(1.0) checking that the steps
# add up to 1): benchmarks/05_private_roc_cache.py, function private_pipelines
pipeline_rows = pd.read_csv(RESULTS / "05_private_pipelines.csv")
pipeline_rows.groupby("pipeline", sort=False)["accuracy"].describe()[["mean", "min", "max"]].round(3)

# %% [markdown]
# Spending half of the budget on selection leaves the classifier only ε = 0.5, yet the pipelines
# with selection are more accurate here: the private model's noise is spread over 15 or 30
# coefficients instead of 171 (the paper's Fig. 1 makes the same point on text data).
#
# #### How close is the private selection to F_τ?
#
# Stoddard et al. judge a selector by how well its output matches F_τ = {F : TC(F) > τ} (their
# Fig. 3). Below, at ε = 0.01 for the selection, the F1 score of each selector's output against
# F_τ as τ varies. Score perturbation keeps the noisy scores above τ; the sparse vector has to fix
# its cutoff c in advance (here c = 40), and pays for it with noise of scale c/(the queries' share of
# ε) on every query. **PTT** (dashed) looks best by far: it compares the *exact* scores with one
# noisy threshold. Section 9 audits its privacy.

# %%
quality = pd.read_csv(RESULTS / "05_selection_quality.csv")   # cached: benchmarks/05_private_roc_cache.py
roc_plots.selection_quality_chart(quality)

# %% [markdown]
# #### Explore it yourself
#
# - **ε for selection**: the budget of the selection step alone (it starts at 0.01, where the noise
#   of score perturbation, scale s/ε = 1,400 records, is comparable with the gaps between the counts);
# - **method**: the three sound selectors, plus PTT, the paper's Algorithm 2 (audited in
#   section 9);
# - **SP keeps**: score perturbation keeps the features whose noisy TC exceeds τ, or the k highest;
# - **τ**: the threshold in count units (score perturbation with "τ", the sparse vector, PTT);
# - **k**: how many features to keep (top-k), or the sparse vector's cutoff.
#
# Each setting runs four private draws. The left chart compares the accuracy (non-private logistic
# regression on the kept features; bar: mean of the draws, ticks: each draw) with the exact selection
# by the same rule (not private), all features and the majority class; the right one shows how many
# features the draws kept. Lower ε to 0.001: score perturbation keeps four to five times too many
# features. Raise it to 0.1: every draw is the exact selection.

# %%
fs_explorer = FeatureSelectionExplorer(B_train, yb_train, B_test, yb_test, max_ones=s, classes=CLASSES)
fs_explorer.widget

# %% [markdown]
# ### 9. An audit of Private Threshold Testing
#
# PTT adds noise to the threshold only and compares it with the **exact** scores:
# τ̃ = τ + Lap(1/ε), select F when TC(F) ≥ τ̃. The paper proves it ε-DP. Take two neighbouring
# datasets: D has two features with TC = (5, 5); D' adds one record with only F1 on, so
# TC = (6, 5). The threshold is τ = 5.5 and the claim ε = 1.
#
# **Exercise 05.4 (predict, then run, 3 min).** The audit below runs PTT thousands of times on D and
# on D' and bounds its privacy loss from below. What will it say? (a) the lower bound stays at or
# below 1: no evidence against the claim; (b) the lower bound is above 1: the claim is refuted.
# Think about the output "F1 selected, F2 not" on each side before you answer with a letter.

# %% tags=["exercise"]
ptt_verdict = None   # your answer: "a" or "b"
### BEGIN SOLUTION
ptt_verdict = "b"
### END SOLUTION

# %% tags=["self-check"]
lab.check("05.4")

# %% [markdown]
# The cell below computes the probability of the output "F1 selected, F2 not" on D and on D', and
# draws how often each output comes out of 2,000 runs of PTT on each side.

# %% tags=["reveal"]
ex = stoddard.ptt_counterexample()
print(f"P[F1 selected, F2 not] on D = {ex['p']:.3f}, on D' = {ex['p_neighbour']:.3f}")
freq = []
for name, data in [("D", ex["X"]), ("D'", ex["X_neighbour"])]:
    q = stoddard.total_count(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stoddard.NotDifferentiallyPrivateWarning)
        runs = np.array([stoddard.private_threshold_testing(q, ex["threshold"], epsilon=1.0, random_state=i)
                         for i in range(2000)])
    for pattern, label in [((1, 1), "both"), ((1, 0), "F1 only"), ((0, 0), "none")]:
        freq.append({"output": label, "dataset": name,
                     "frequency": np.mean(np.all(runs == np.array(pattern, bool), axis=1))})
roc_plots.ptt_split_chart(pd.DataFrame(freq))

# %% [markdown]
# <details><summary>Why this output decides (open it after you ran the cell)</summary>
#
# The output "F1 selected, F2 not" needs 5 < τ̃ ≤ 5 on D, which never happens, and 5 < τ̃ ≤ 6 on D',
# which happens with probability 1 − e^(−1/2) ≈ 0.39. An output that is possible on one side and
# impossible on the other breaks ε-DP for every ε.
# </details>
#
# `dpexplore.audit` runs a mechanism many times on both datasets and computes a lower confidence
# bound on its privacy loss. When the bound exceeds the claimed ε, the claim is refuted. Each
# selector below is the package's own function, run on the pair above with TC scores and τ = 5.5:
# PTT, **Cluster Selection** (the paper's Algorithm 1) and the three sound selectors (score
# perturbation, sparse vector, exponential mechanism).

# %% tags=["reveal"]
# Stored audit: 20,000 runs per side and per selector (a few minutes). Recompute with
#   python benchmarks/05_private_roc_cache.py
audit = pd.read_csv(RESULTS / "05_audit.csv")
display(audit[["selector", "claimed_epsilon", "sound", "epsilon_lower", "violates"]].round(3))
roc_plots.audit_chart(audit, title=f"Measured privacy loss vs the claimed ε ({audit['n_samples'][0]:,} runs per side)")

# %% [markdown]
# <details><summary>What the audit found (open it after you ran the cell)</summary>
#
# PTT's bound is far above ε = 1. Cluster Selection fails too: in D the two features are the same
# point (0, 5) in count space, so exact nearest-centre membership always keeps them together, while
# in D' they are (1, 5) and (0, 5) and a cluster boundary can fall between them. The sound
# selectors stay below ε on the same pair (passing an audit is evidence, not a proof).
# </details>
#
# The same audit, live and small: 500 runs per side, without Cluster Selection (its k-means per run is
# the slow part). With fewer runs the lower bounds are looser.

# %% tags=["reveal"]
live = stoddard.audit_selectors(epsilon=1.0, n_samples=500, cluster=False, random_state=6)
roc_plots.audit_chart(live, title="The same audit, live: 500 runs per side")

# %% [markdown]
# **Exercise 05.5 (implement, graded by the privacy audit, 12 min).** Repair PTT. Write
# `my_selector(tc, threshold, epsilon, rng)`: given the exact TC scores (a NumPy array), return one
# True/False per feature (True = selected), ε-differentially private when one record is added or
# removed and every record has at most **s = 2** ones, as in D and D' (one record moves each score by
# at most 1, and at most two scores). Draw all randomness from `rng`, a NumPy `Generator`.
#
# `lab.check` grades your function in two ways, on inputs you never see: it compares the features
# your selector keeps, over many runs on scores from 0 to 10,000, with what score perturbation keeps;
# and the package's privacy audit runs it at ε = 1 on ten neighbouring pairs (D and D' above among
# them) and passes it when the audit's lower bound stays at or below 1 on every pair. It also makes
# sure the same audit catches PTT (so a pass means something).

# %% tags=["exercise"]
my_selector = None   # your answer: a function (tc, threshold, epsilon, rng) -> array of True/False
### BEGIN SOLUTION
def my_selector(tc, threshold, epsilon, rng):
    # score perturbation: the TC vector has L1 sensitivity s = 2, so Laplace(2/ε) on every score
    noisy = np.asarray(tc, dtype=float) + rng.laplace(0.0, 2.0 / epsilon, size=len(tc))
    return noisy > threshold
### END SOLUTION

# %% tags=["self-check"]
lab.check("05.5")

# %% [markdown]
# ## Summary
#
# - A ROC curve of a private test set must itself be released privately. PriROC spends a little ε
#   on thresholds, releases the two label histograms with Privelet, and cleans the prefix sums with
#   isotonic regression; its AUC error is a fraction of LaplaceROC's.
# - The number of bins matters less than one might expect once the counts are made monotone, but
#   with a few hundred test records fewer bins (16–64) beat the paper's 1024.
# - The smooth-sensitivity medians need far more than a few hundred records at ε1 = 0.2: here they
#   fall back to midpoints, so RecursiveMedians behaves like a fixed grid.
# - Private feature selection is cheap when the score has low sensitivity (TC) and s is enforced.
# - A privacy proof can be wrong: an audit on two neighbouring datasets showed PTT and Cluster
#   Selection leaking, while the sound selectors stayed within their ε.
