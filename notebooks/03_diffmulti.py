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
# # 03 · DiffMulti: cutting the data space where the records are
#
# **What you will learn**
#
# * how a **private split point** is drawn for a numeric attribute with the *continuous*
#   exponential mechanism, where each candidate piece is weighted by its length;
# * how DiffMulti grows a **partition tree**: each region chooses privately which attribute to cut,
#   and hands its remaining budget of cuts to its children in proportion to their noisy sizes;
# * where the privacy budget goes: ε_op = ε / (2(|A_num| + 3|g|)) is charged **per operation**, up
#   to three times per level of the tree (a split point, the choice of the attribute, the children's
#   noisy sizes) plus one split point per numeric attribute at the root, so that the longest path
#   costs ε/2; the other ε/2 pays for the published counts;
# * how the resulting **multidimensional** partition differs from DiffGen's **grid**
#   (single-dimensional generalization), seen on a plane of two attributes;
# * how accurate a decision tree trained on the release is, as h and ε change.
#
# Paper: K. Al-Hussaeni, B. C. M. Fung, F. Iqbal, J. Liu, P. C. K. Hung, *Differentially-private
# multidimensional data publishing* (Algorithm 1). Baseline: N. Mohammed, R. Chen, B. C. M. Fung,
# P. S. Yu, *Differentially private data release for data mining*, KDD 2011 (DiffGen).
# The paper calls the per-operation budget ε′; we write **ε_op**, because ε′ means other things in
# notebooks 04–06 (see the [glossary](../docs/glossary.md); DOIs in the
# [bibliography](../docs/bibliography.md)).

# %%
import altair as alt
import numpy as np
import pandas as pd
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.compose import make_column_transformer

from dpexplore import lab
from dpexplore.mechanisms import exponential_interval_probabilities
from dpexplore.datasets import load_adult, train_test_split
from dpexplore.publish.diffmulti import DiffMulti, c45_tree, split_utilities
from dpexplore.publish.diffgen import DiffGen
from dpexplore.plots.diffmulti import (accuracy_chart, partition_comparison, split_density_chart,
                                       tree_figure)
from dpexplore.widgets.diffmulti import DiffMultiExplorer

frame, schema = load_adult()
X_train, X_test, y_train, y_test = train_test_split(frame, schema, test_size=1 / 3, random_state=0)
print(f"{len(X_train):,} training and {len(X_test):,} test records, "
      f"{len(schema.numeric)} numeric and {len(schema.categorical)} categorical attributes")

# %% [markdown]
# ## 1. A private split point (the paper's Example 4.5)
#
# The toy table of the paper has six people with a year of birth (YoB) in the public range
# [1930, 1999) and a class Y/N. To cut YoB at a point *s* (records with YoB < s go left), DiffMulti
# cannot take a value from the data: that value might not exist in a neighbouring table. Instead
# it treats **every** point of the public range as a candidate. Between two consecutive data
# values every *s* sends the same records left and right, so the score is constant there: the
# six values cut the range into seven pieces. The score used for classification is **Max**: for
# each side, the count of its majority class, added up.

# %%
toy = pd.DataFrame({"yob": [1947, 1953, 1955, 1957, 1959, 1968]})
toy_y = np.array([0, 0, 1, 1, 1, 0])          # Y, Y, N, N, N, Y
edges, left, total = split_utilities(toy["yob"].to_numpy(), toy_y, 2, 1930, 1999, integer=False)
max_score = left.max(axis=1) + (total - left).max(axis=1)
pieces = pd.DataFrame({"piece": [f"[{a:.0f}, {b:.0f})" for a, b in zip(edges[:-1], edges[1:])],
                       "length": np.diff(edges), "Max score": max_score})
pieces.T

# %% [markdown]
# The noise-free best cut lies in [1953, 1955): left {Y, Y}, right {N, N, N, Y}, score 2 + 3 = 5.
# (The paper *assumes* that [1959, 1968) wins, only to illustrate the next step.) The exponential
# mechanism picks a piece with probability ∝ **length** × exp(ε_op·score / 2), then a uniform point
# inside it. Weighting by length is what makes this the continuous mechanism, so the guarantee holds.
# (dpexplore draws the point on a fine public grid, so a piece's weight is its number of grid
# points: its length over the grid's spacing, up to one point.)

# %% tags=["exercise"]
# Exercise 03.1 (implement, 8 min): write piece_probabilities(edges, scores, epsilon) returning the
# probability of each piece: length × exp(epsilon·score/2), divided by the sum over the pieces
# (Δ = 1). `edges` has one more entry than `scores`. The self-check compares your function with the
# package's on Example 4.5 and on random pieces.
piece_probabilities = None   # your answer: a function of (edges, scores, epsilon)
### BEGIN SOLUTION
def piece_probabilities(edges, scores, epsilon):
    weights = np.diff(edges) * np.exp(epsilon * (scores - np.max(scores)) / 2)   # shift: no overflow
    return weights / weights.sum()
### END SOLUTION

# %% tags=["self-check"]
lab.check("03.1")

# %% [markdown]
# The package's version, `exponential_interval_probabilities`, draws the three densities below:
# probability per year of the split point, at three values of ε_op.

# %%
charts = [split_density_chart(edges, exponential_interval_probabilities(edges, max_score, epsilon=e, sensitivity=1),
                              title=f"ε_op = {e:g}", attribute="year of birth (split point)")
          for e in (4.0, 1.0, 0.003)]
alt.vconcat(*charts)

# %% tags=["exercise"]
# Exercise 03.2 (read the chart, 2 min): in the top panel (ε_op = 4), what probability does the best
# piece, [1953, 1955) with score 5, get in total? (0.25 or 25)
p_best_piece = None   # your answer
### BEGIN SOLUTION
p_best_piece = exponential_interval_probabilities(edges, max_score, epsilon=4.0, sensitivity=1)[2]
### END SOLUTION

# %% tags=["self-check"]
lab.check("03.2")

# %% [markdown]
# <details><summary>What the top panel shows (open it after the check)</summary>
#
# Even at ε_op = 4 the best piece gets only about 38 %: it is two years long, and each piece is
# weighted by its length, so the 9-year and the 6-year pieces of score 4 ([1959, 1968) and
# [1947, 1953)) get about 39 % together. At the ε_op DiffMulti actually uses on Adult (the bottom
# panel's 0.003, section 2 says why) the density is almost flat: with six records, the choice is
# nearly uniform.
# </details>

# %% [markdown]
# ## 2. The partition tree and its budget
#
# DiffMulti starts from one region, the whole domain, with a budget of **h** cuts. A region whose
# budget is positive
#
# 1. draws a split point for its *new* numeric interval (the root: one for every numeric
#    attribute) — ε_op each;
# 2. scores every attribute it could cut (a categorical attribute: one level down its taxonomy; a
#    numeric one: at its split point) and picks one with the exponential mechanism — ε_op;
# 3. creates **all** children (empty ones too: skipping them would reveal they are empty), measures
#    their sizes with Laplace noise — ε_op — and gives them its remaining h − 1 cuts in proportion
#    to those noisy sizes ("fair" allocation: dense regions get more cuts).
#
# Children hold disjoint records, so by parallel composition they cost the maximum, not the sum:
# the partitioning costs what the **longest path** costs. With at most |g| cuts on a path that is
# (|A_num| + 3|g|)·ε_op = ε/2. The other half pays for Laplace counts of every (leaf region, class).
# For Adult, |g| = Σ(taxonomy height − 1) over the categorical attributes + 7 per numeric one: 62,
# with |A_num| = 6 numeric attributes.

# %% tags=["exercise"]
# Exercise 03.3 (compute, 2 min): with |A_num| = 6 and |g| = 62 as on Adult, what is ε_op when the
# total budget is ε = 2?
eps_op = None   # your answer
### BEGIN SOLUTION
eps_op = 2 / (2 * (6 + 3 * 62))
### END SOLUTION

# %% tags=["self-check"]
lab.check("03.3")

# %% [markdown]
# The release of this section uses ε = 1 (`epsilon_prime_` is the code's name for ε_op):

# %%
release = DiffMulti(1.0, h=1000, random_state=0, schema=schema).fit(X_train, y_train)
print(f"|g| = {release.max_depth_}, ε_op = ε/{1 / release.epsilon_prime_:.0f} = {release.epsilon_prime_:.5f}")
print(f"{release.n_regions_} leaf regions; partitioning charged {release.partitioning_epsilon_:.4f}, "
      f"counts {release.leaf_epsilon_:.4f} (total {release.epsilon_spent_:.4f})")
ledger = release.ledger_
(ledger.groupby("label")
       .agg(spends=("epsilon", "size"), epsilon_each=("epsilon", "first"), charged=("charged", "sum"))
       .sort_values("charged", ascending=False).round(5))

# %% [markdown]
# The ledger records every spend where it happened: thousands of ε_op spends, but their **charged**
# column adds up only along the most expensive path. The realized tree is shallower than |g|, so
# what the partitioning did not use goes to the counts (the paper's optional Line 20), and the
# whole release spends exactly ε.
#
# The first levels of the tree: each box is a region, labelled by the value it was cut to, with
# its noisy size (as its parent measured it) and the number of cuts h' it received. The noisy
# sizes are measured with ε_op, so their noise has scale 1/ε_op (about 384 records here): small
# regions can even show a negative size, and then receive no cuts.

# %%
fig = tree_figure(release.tree_, max_depth=3)

# %% [markdown]
# ## 3. A picture: the partition of a plane
#
# To see the regions, fit both methods on **two** attributes only, here age and years of
# education, with the same ε. DiffMulti (left) cuts each region separately, so cuts are fine where
# records are dense and coarse elsewhere. DiffGen (right) applies every cut to **all** records,
# which gives a grid. Colour = the class with the larger noisy count (orange: >50K).

# %%
pair = ["age", "education-num"]
multi = DiffMulti(1.0, h=300, random_state=0, schema=schema).fit(X_train[pair], y_train)
grid = DiffGen(1.0, steps=6, random_state=0, schema=schema).fit(X_train[pair], y_train)
partition_comparison(multi.rectangles(*pair), grid.rectangles(*pair), *pair)

# %% [markdown]
# ### Explore it yourself
#
# The explorer below redraws both pictures for your settings:
#
# * **x axis / y axis**: the two attributes (categorical ones are laid out in taxonomy order);
# * **ε**: the total budget, in steps from 0.05 to 4;
# * **h (Multi)**: DiffMulti's total number of cuts (0 = one region);
# * **steps (Gen)**: DiffGen's number of specializations.
#
# It opens on the picture above (ε = 1, h = 300, 6 steps), where both releases beat the majority
# class on these two columns (the read-out under the sliders). Each setting is fitted once and
# kept; while you look, the settings one step away are fitted in the background, so a key press
# usually only redraws. **Then break it**, one step at a time:
#
# 1. ε down to 0.1: the cuts become almost random because ε_op is tiny, and many regions flip
#    colour because their counts are noise.
# 2. Back at ε = 1, h up to 3,000: the regions get so small that their noisy counts (scale 2/ε)
#    exceed their true counts, and the accuracy falls back towards the majority class.

# %%
explorer = DiffMultiExplorer(X_train, y_train, schema, x="age", y_attribute="education-num", h=300)
explorer.widget

# %% [markdown]
# ## 4. Accuracy of a classifier trained on the release
#
# The paper's protocol: build the regions from the training records only; train a decision tree
# (entropy criterion and pruning, like C4.5) on the released *generalized* records, each weighted by its noisy
# count; generalize the test records through the same regions; measure accuracy. Reference lines:
# the **majority class** (what you get with no information) and the same tree trained on the raw
# training data (**non-private**). Each point averages five seeded releases.

# %%
# NON-PRIVATE baselines: the majority class, and the same C4.5-like tree on the raw training data
# (numbers stay numbers, categories one-hot)
majority = float(np.mean(y_test == y_train.mode()[0]))
raw_tree = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), schema.categorical),
                                                 remainder="passthrough"), c45_tree(0))
non_private = float(raw_tree.fit(X_train, y_train).score(X_test, y_test))
baselines = pd.DataFrame({"name": ["majority class", "non-private tree"], "accuracy": [majority, non_private]})

# %% [markdown]
# One release of the protocol: the ε = 1, h = 1,000 release of section 2.

# %%
tree = release.train_classifier(random_state=0)   # weighted by the noisy counts: post-processing
print(f"DiffMulti h=1000, ε = 1, seed 0: test accuracy {tree.score(X_test, y_test):.4f} "
      f"(majority {majority:.4f}, non-private tree {non_private:.4f})")

# %% [markdown]
# The sweeps repeat that for five seeds at many settings: a few minutes, so the notebook reads
# their stored result (`notebooks/results/03_diffmulti_accuracy.csv`, one row per release). To
# recompute it: `python benchmarks/03_diffmulti_sweeps.py` (the same split, protocol and seeds).

# %% tags=["exercise"]
# Exercise 03.4 (predict, then run, 2 min): the next chart shows the accuracy against h at ε = 1.
# From h = 1,000 to h = 10,000, will the accuracy
#   (a) rise clearly   (b) stay on a plateau, within the run-to-run spread   (c) fall towards the
#   majority class?
# Answer with a letter, then run the next cell.
more_cuts = None   # your answer
### BEGIN SOLUTION
more_cuts = "b"
### END SOLUTION

# %% tags=["self-check"]
lab.check("03.4")

# %% tags=["reveal"]
runs = pd.read_csv("results/03_diffmulti_accuracy.csv")


def aggregate(rows, by):
    # mean and std of the test accuracy over the seeds, and the mean discernibility penalty
    # Σ (released records per region)² (lower = finer regions)
    return (rows.groupby(["method", by])
                .agg(mean=("accuracy", "mean"), std=("accuracy", "std"), discernibility=("discernibility", "mean"),
                     runs=("seed", "nunique"))
                .reset_index())


by_h = aggregate(runs[runs["sweep"] == "h"], "h")
print(f"{by_h['runs'].max()} seeded releases per point")
accuracy_chart(by_h, x="h", baselines=baselines, title="DiffMulti, ε = 1: accuracy against h")

# %% [markdown]
# <details><summary>How the accuracy moves with h, and why (open it after you ran the chart)</summary>
#
# Accuracy rises from h = 10 to h = 100 (more cuts separate the classes better), then stays on a
# plateau: the differences between h = 100 and h = 10,000 are within the run-to-run spread. Two
# forces cancel there: each cut deeper in the tree is chosen with the same tiny ε_op, on fewer
# records, so late cuts are close to random; and more leaves means smaller counts, drowned by the
# Laplace noise of the leaf counts. The fair allocation gives most cuts to the dense regions, which
# is why the plateau does not collapse even at h = 10,000.
# </details>

# %% [markdown]
# Now ε, at a fixed h, for both methods (DiffGen with its 10 steps, the PrivPfC paper's setting):

# %%
by_eps = aggregate(runs[runs["sweep"] == "epsilon"], "epsilon")
accuracy_chart(by_eps, x="epsilon", baselines=baselines, title="Accuracy against ε")

# %% [markdown]
# ## 5. Where DiffMulti beats DiffGen, and where it does not
#
# Two yardsticks, both computed from the runs above:
#
# * **accuracy** of the tree trained on the release (the classification workload, paper Fig. 8);
# * the **discernibility penalty** Σ (records released in a region)², the paper's general-purpose
#   distortion metric (Fig. 5): a release that lumps many records into one region pays the square
#   of its size, so lower means finer, more useful regions.
#
# What to expect, and why:
#
# * DiffMulti cuts each region on its own, so with a few thousand cuts it can be fine where the
#   records are dense. DiffGen's grid multiplies every cut across all attributes; it can afford only
#   a few dozen cuts before the cells explode, and its cells stay big where the data are dense. On
#   the discernibility penalty DiffMulti should therefore win once ε is large enough for its noisy
#   size measurements to steer the cuts to the dense regions. (The paper reports at least a factor
#   of ten, with the DM score itself as the utility; here the utility is Max, tuned for
#   classification.) At a very small ε the fair allocation follows noise and the advantage can
#   vanish or reverse.
# * On accuracy the race is close. DiffMulti spends ε/2 over a path of up to |g| steps, so each
#   choice gets ε/(2(|A_num| + 3|g|)): ε/384 with our Adult taxonomies (the paper's, one level
#   taller, give ε/390), while DiffGen's ten steps get ε/52
#   each. At small ε DiffMulti's cuts are nearly random and many of its regions carry noisy counts;
#   DiffGen's few, better-chosen large cells can then do as well or better. Adult is also an easy
#   target: a handful of attributes (marital status, education, capital gain) carry most of the
#   signal, and a small grid captures it. Differences of a few tenths of a percent are within the
#   run-to-run spread (the ± std bands above).

# %%
acc = by_eps.pivot(index="epsilon", columns="method", values="mean")
pen = by_eps.pivot(index="epsilon", columns="method", values="discernibility")
table = pd.DataFrame({
    "accuracy DiffMulti h=1000": acc["DiffMulti h=1000"], "accuracy DiffGen": acc["DiffGen 10 steps"],
    "accuracy gap": acc["DiffMulti h=1000"] - acc["DiffGen 10 steps"],
    "discernibility DiffMulti h=1000 (millions)": pen["DiffMulti h=1000"] / 1e6,
    "discernibility DiffGen (millions)": pen["DiffGen 10 steps"] / 1e6,
    "discernibility ratio DiffGen / DiffMulti": pen["DiffGen 10 steps"] / pen["DiffMulti h=1000"],
})
table.round(4)

# %%
spread = by_eps.groupby("epsilon")["std"].max()          # the larger run-to-run std at each ε
ahead = [f"{e:g}" for e in acc.index if table.loc[e, "accuracy gap"] > spread[e]]
behind = [f"{e:g}" for e in acc.index if table.loc[e, "accuracy gap"] < -spread[e]]
tied = [f"{e:g}" for e in acc.index if f"{e:g}" not in ahead + behind]
print("accuracy: DiffMulti (h=1000) ahead of DiffGen by more than one std at ε =", ", ".join(ahead) or "none")
print("          DiffGen ahead by more than one std at ε =", ", ".join(behind) or "none")
print("          within one std (a tie) at ε =", ", ".join(tied) or "none")
finer = [f"{e:g}" for e in acc.index if table.loc[e, "discernibility ratio DiffGen / DiffMulti"] > 1]
print("discernibility: DiffMulti's regions finer (lower penalty) at ε =", ", ".join(finer) or "none")
print(f"baselines: majority class {majority:.4f}, non-private tree {non_private:.4f}")

# %% [markdown]
# ## Summary
#
# * A numeric split point is drawn with the **continuous** exponential mechanism: pieces between
#   data values, weighted by their **length**, never a raw data value.
# * DiffMulti cuts each region on its own (multidimensional generalization); siblings compose in
#   parallel, so ε/2 covers the longest path and the other half the leaf counts.
# * h trades detail against noise: too few cuts cannot separate the classes, too many produce
#   near-random cuts and regions whose counts are mostly noise.
# * The released regions are a picture you can draw, and the noisy counts a training set.
