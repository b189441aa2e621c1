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
# # 00 · Start here: what differential privacy promises
#
# Welcome to **dpexplore**, a set of notebooks for learning how to publish data and train
# classifiers with *differential privacy* (DP). Every notebook is stored with its outputs, so you can
# read it first; run it (▶▶ "Restart the kernel and run all cells") to bring the sliders to life.
# (Opened as a Voilà app, a notebook has already run: just use its sliders.)
#
# ## What you will learn
#
# - what DP promises to the people in a dataset, first in plain words, then formally (ε and
#   neighbouring datasets), and what it does *not* promise;
# - two rules that make DP usable: **post-processing** and **composition** (the privacy *budget*);
# - the map of the notebooks: which one to open for which question;
# - the **Adult** census dataset that runs through all of them (45,222 people, who earns more than
#   50K a year), and the **taxonomy trees** that describe how each attribute can be coarsened.
#
# ## How the exercises work
#
# Every notebook has short exercises spread through it. An **exercise cell** sets a variable to
# `None`: replace `None` with your answer and run the cell. The **self-check cell** right below it
# answers "✓ Right" with the reason, or "✗ Not yet" with a hint (it never shows the answer).
# Numbers may be typed as `0.25` or `"25%"` where the exercise says so; choices as a letter such as
# `"b"`. Skipping an exercise never breaks a later cell. The symbols used across the notebooks
# are collected in the [notation glossary](../docs/glossary.md), the papers in the
# [bibliography](../docs/bibliography.md).

# %% [markdown]
# ## 1. The promise, in plain words
#
# You are asked to let your record be used in a statistical release: a table of counts, a trained
# classifier, a synthetic copy of the data. Differential privacy makes this promise:
#
# > **Whatever anyone sees in the release, they would have seen almost as likely without your
# > record.**
#
# So nobody — however much they already know, whatever they compute afterwards — can learn much
# more about *you* from the release than they could have learned had you stayed out. The release
# may still reveal facts about the *population* (smokers get cancer more often); DP protects
# individuals, not the general trends that a dataset is collected to discover.
#
# The only way to keep this promise is **randomness**: a DP release adds carefully calibrated noise
# or makes random choices, so that one person's presence cannot move the outcome much.
#
# ## 2. The promise, formally
#
# Two datasets $D$ and $D'$ are **neighbours** when they differ in one person's record (one added or
# removed). A randomised algorithm $M$ is **ε-differentially private** if for every pair of
# neighbours and every set $S$ of possible outputs
#
# $$\Pr[M(D) \in S] \;\le\; e^{\varepsilon}\,\Pr[M(D') \in S].$$
#
# (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, Def. 2.4.) The parameter ε ("epsilon")
# **bounds the privacy loss**, the log-ratio $\ln \Pr[M(D) = x] / \Pr[M(D') = x]$ of an output x
# (notebook 01 draws it): small ε means the two output distributions are nearly identical.
# $e^{\varepsilon}$ bounds how much more (or less) likely any outcome can become because of one person:

# %%
import numpy as np
import pandas as pd
import altair as alt

from dpexplore import lab                 # the exercises' self-checks
from dpexplore.datasets import load_adult
from dpexplore.plots.taxonomy import taxonomy_levels_chart, taxonomy_tree_chart  # charts drawn offline

eps = np.array([0.1, 0.5, 1.0, 2.0, 5.0])
pd.DataFrame({"ε": eps, "max likelihood ratio e^ε": np.exp(eps).round(2),
              "an event of probability 10% can rise to at most": [f"{min(1, 0.1 * r):.0%}" for r in np.exp(eps)]})

# %% [markdown]
# Read the table as an attacker's view: with ε = 0.1 nothing that happens in the release is more
# than 11% more likely because you are in the data; with ε = 5 an outcome can become 148 times more
# likely, which is a much weaker promise. Values between 0.1 and a few units are common in practice.

# %% tags=["exercise"]
# Exercise 00.1 (compute, 2 min): without you in the data, an event of the release has probability
# 10 %. The release is ε-DP with ε = 0.5. At most how likely can the event be with you in the data?
# Give a probability (0.25 means 25 %).
with_you = None   # your answer
### BEGIN SOLUTION
with_you = 0.10 * np.exp(0.5)
### END SOLUTION

# %% tags=["self-check"]
lab.check("00.1")

# %% [markdown]
# > **Definitions: the words of the promise**
# >
# > - **Neighbouring datasets.** In dpexplore (and in the papers of notebooks 02–09 unless they say
# >   otherwise) D and D′ are neighbours when D′ is D with **one record added or removed**
# >   (*add/remove*, or *unbounded* DP). Some papers use **substitution** instead (*bounded* DP):
# >   D and D′ have the same size and differ in one record's values. A substitution is one removal
# >   plus one addition, so an add/remove guarantee also covers substitutions (at what ε is
# >   exercise 00.2). The converse does not hold: a substitution guarantee says nothing about adding
# >   or removing a record. Publishing the exact number of records, for instance, is 0-DP under
# >   substitution (the size never changes) and not private at all under add/remove (the size tells
# >   whether your record is in).
# > - **The unit of privacy** is what one record is: a person, a household, a hospital stay, a
# >   click. DP protects one *unit*. If one person owns k records (k stays, k copies), the promise
# >   for that person is **kε** (group privacy, Dwork & Roth 2014 §2.3), so choose the unit before
# >   choosing ε.
# > - **ε bounds the loss.** The *privacy loss* of an output x is $\ln \Pr[M(D) = x]/\Pr[M(D') = x]$;
# >   it is a random quantity, different for every output. ε-DP says it never exceeds ε, for any
# >   neighbours and any output. ε is the budget; the loss is what a given output actually reveals.
# > - **(ε, δ)-DP** relaxes the promise: $\Pr[M(D) \in S] \le e^{\varepsilon} \Pr[M(D') \in S] + \delta$
# >   for every set S: an additive slack δ on the probability of every set of outcomes. It is not
# >   "the ε bound holds except with probability δ", a claim about the privacy loss of each output
# >   that the definition does not make. What the slack allows shows in an example: a mechanism that
# >   publishes each record in the clear with probability δ is (0, δ)-DP, and it publishes about nδ
# >   records of a table of n people. That is why δ must be much smaller than 1/n (Dwork & Roth
# >   2014, §2.3). Pure ε-DP is δ = 0; dpexplore's own methods are all pure ε-DP, and notebook 07
# >   compares them with a library that uses δ > 0.

# %% tags=["exercise"]
# Exercise 00.2 (choose, 2 min): a mechanism is ε-DP for add/remove neighbours. Someone changes
# the values of one record (a substitution). What does the mechanism guarantee for that change?
#   (a) ε   (b) 2ε   (c) no guarantee at all   (d) ε/2
# Answer with a letter, e.g. "a".
substitution = None   # your answer
### BEGIN SOLUTION
substitution = "b"
### END SOLUTION

# %% tags=["self-check"]
lab.check("00.2")

# %% tags=["exercise"]
# Exercise 00.3 (compute, 2 min): a hospital publishes an ε = 0.5 release of a table with one row
# per hospital *stay*. A patient had three stays. At what ε is that patient protected?
patient_epsilon = None   # your answer
### BEGIN SOLUTION
patient_epsilon = 3 * 0.5
### END SOLUTION

# %% tags=["self-check"]
lab.check("00.3")

# %% [markdown]
# Two properties make DP practical:
#
# - **Post-processing.** Anything computed from a DP release alone (a rounded table, a classifier
#   trained on synthetic rows, a plot) is still ε-DP: you cannot "undo" the noise without the data.
# - **Composition.** Answering several questions on the same data adds up their ε (sequential
#   composition); questions on *disjoint* groups of people cost only the largest of their ε
#   (parallel composition). So ε is a **budget**: you decide the total up front and split it over
#   the steps of an analysis. In dpexplore every step spends through a `BudgetAccountant`, whose
#   ledger says "where did ε go".

# %% [markdown]
# ## 3. The map of the notebooks
#
# | notebook | the question it answers |
# |---|---|
# | **00_start_here** (this one) | what does DP promise; what are the data and their taxonomies? |
# | [10_attacks](10_attacks.ipynb) | why does privacy need noise? Two counts that reveal a person, a secret column rebuilt from many counts, a model that gives away its training set |
# | [01_mechanisms](01_mechanisms.ipynb) | how do the Laplace, geometric and exponential mechanisms work; what is the privacy loss; how is a budget split? |
# | [11_randomized_response](11_randomized_response.ipynb) | local DP: how can people randomise their own answers, and what does not trusting anyone cost? |
# | [12_gaussian](12_gaussian.ipynb) | the Gaussian mechanism: what does (ε, δ) mean? |
# | [13_composition](13_composition.ipynb) | composition beyond adding up ε: advanced composition, zCDP, and what MST spends in 07 |
# | [14_sparse_vector](14_sparse_vector.ipynb) | the sparse vector technique: AboveThreshold, and broken variants the audit refutes |
# | [02_privpfc](02_privpfc.ipynb) | PrivPfC: let the exponential mechanism choose a coarse grid, then publish a noisy histogram for classification |
# | [03_diffmulti](03_diffmulti.ipynb) | DiffMulti and DiffGen: split the data top-down along taxonomies, privately |
# | [04_feature_selection_nb_lr](04_feature_selection_nb_lr.ipynb) | private feature selection, then DP Naive Bayes and DP logistic regression |
# | [05_private_roc](05_private_roc.ipynb) | evaluating privately: ROC curves and AUC of a private test set |
# | [06_projected_histograms](06_projected_histograms.ipynb) | Vinterbo's projected histograms: a few attributes, a thresholded noisy histogram |
# | [07_showdown](07_showdown.ipynb) | every method on Adult at several ε: which one when? |
# | [08_your_data](08_your_data.ipynb) | bring your own table: declare its public schema, release, download |
# | [09_big_tables](09_big_tables.ipynb) | tables past memory: release 10M rows from Parquet with DuckDB (and Spark) from one count table |
#
# The table is the course order. Start with **10** (the attacks show why noise is needed), then
# **01**: the later notebooks all build on its three mechanisms and on the budget; 11–14 add local
# DP, (ε, δ), composition and the sparse vector technique before the methods of 02–09.

# %% [markdown]
# ## 4. The Adult dataset
#
# The UCI *Adult* census extract (Kohavi & Becker 1996; CC BY 4.0) is the standard benchmark of the
# papers behind these notebooks. `load_adult()` joins the training and test files and drops the rows
# with missing values: **45,222 people, 14 predictors, and the class `income`** (≤50K or >50K).
# It returns the table and its **public schema**: the attribute domains and taxonomies, which are
# declared in advance (not read from the data, which would leak).
#
# The table itself is public teaching data. In the later notebooks we pretend it is private: only
# the DP methods touch it, and anything printed from it directly is marked *not private*.

# %%
frame, schema = load_adult()
print(f"{len(frame):,} rows, {len(schema.predictors)} predictors")
print(f"target {schema.target!r}, classes {list(schema.classes)}")
frame.head(3).T   # one row per attribute, so the table fits the page

# %% [markdown]
# The classes are unbalanced, as the chart shows.

# %%
balance = frame[schema.target].value_counts().rename_axis("income").reset_index(name="people")
balance["share"] = balance["people"] / balance["people"].sum()
bars = alt.Chart(balance).mark_bar().encode(
    x=alt.X("people:Q", title="people"), y=alt.Y("income:N", title=None),
    color=alt.Color("income:N", legend=None),
    tooltip=["income", "people", alt.Tooltip("share:Q", format=".2%")])
labels = bars.mark_text(align="left", dx=4).encode(text=alt.Text("share:Q", format=".2%"), color=alt.value("black"))
(bars + labels).properties(title="Class balance in Adult (not private: the raw data)", width=420, height=80)

# %% tags=["exercise"]
# Exercise 00.4 (read the chart, 1 min): a "classifier" that ignores the data and always answers
# "≤50K": what share of the people does it classify correctly? (0.25 or "25%")
always_poor = None   # your answer
### BEGIN SOLUTION
always_poor = 0.752
### END SOLUTION

# %% tags=["self-check"]
lab.check("00.4")

# %% [markdown]
# That share is the **majority baseline**: every private classifier in the later notebooks must beat
# it to be worth anything.
#
# <details><summary>The baseline on Adult (open it after the check)</summary>
#
# 75.2 % of the people earn at most 50K, so the constant answer "≤50K" is right 75.2 % of the
# time. An accuracy of 0.75 on Adult is therefore no accuracy at all.
# </details>

# %% [markdown]
# The schema lists each predictor's public domain: categories for categorical attributes, a range
# `[lower, upper]` for numeric ones.

# %%
pd.DataFrame([{"attribute": a, "kind": schema[a].kind,
               "public domain": (f"{len(schema[a].categories)} categories" if schema[a].kind == "categorical"
                                 else f"[{schema[a].lower:g}, {schema[a].upper:g}]"),
               "taxonomy levels (root first)": " / ".join(map(str, schema[a].taxonomy.level_sizes))}
              for a in schema.predictors])

# %% [markdown]
# ## 5. Taxonomies: how an attribute can be coarsened
#
# A **taxonomy** (generalisation hierarchy) is a tree over an attribute's domain. Its root lumps
# everything together ("Any", or the whole age range); each deeper level splits the nodes above into
# finer groups; the leaves are the original values (or, for numeric attributes, the finest
# intervals).
#
# **Numbering.** dpexplore counts **depth d from 0 at the root** (the charts' "depth (0 = root)").
# The papers count **levels from 1 at the root**, so our depth d is the paper's level d + 1: the
# root is depth 0 here and level 1 in the papers (notebook 02 uses the same rule).
#
# Publishing methods such as PrivPfC and DiffMulti choose *how deep* to go for
# each attribute: coarse cells hold many people, so noise of the same size hurts them less, but
# they say less about the data.
#
# Every level must be a partition of the domain, so a branch that stops early is **padded**: its
# node is copied down to the deepest level (grey in the drawings below). The heat table gives the
# number of nodes at every depth for all 14 predictors:

# %%
taxonomy_levels_chart([schema[a].taxonomy for a in schema.predictors],
                      title="Adult: number of taxonomy nodes at each depth")

# %% [markdown]
# ### Education
#
# Sixteen school levels grouped into seven stages, then into three: without post-secondary
# education, secondary, post-secondary. (The tree has 17 leaves: "Post-grad" is a public category
# that no Adult record uses — a declared category can be empty.) Hover over a node to see how many
# leaves it covers.

# %%
taxonomy_tree_chart(schema["education"].taxonomy)

# %% [markdown]
# ### Age
#
# Numeric attributes get nested intervals: every level halves the intervals of the level above, from
# the public range [14, 95] down to 5-year bins.

# %%
taxonomy_tree_chart(schema["age"].taxonomy)

# %% tags=["exercise"]
# Exercise 00.5 (read the chart, 1 min): how many age intervals are there at depth 2 (the papers'
# level 3)?
age_intervals = None   # your answer
### BEGIN SOLUTION
age_intervals = schema["age"].taxonomy.level_sizes[2]
### END SOLUTION

# %% tags=["self-check"]
lab.check("00.5")

# %% [markdown]
# ### Workclass
#
# An unbalanced tree: "Never-worked" and "Without-pay" stop early and are padded down (grey),
# while those with pay split into government, private and self-employed work.

# %%
taxonomy_tree_chart(schema["workclass"].taxonomy)

# %% [markdown]
# A taxonomy generalises a whole column at once: here are the first five people's ages and
# education at depth 2 of their trees (level 3 in the papers' numbering).

# %%
first = frame.head()
pd.DataFrame({"age": first["age"].to_numpy(),
              "age at depth 2": schema["age"].taxonomy.generalize(first["age"], 2),
              "education": first["education"].to_numpy(),
              "education at depth 2": schema["education"].taxonomy.generalize(first["education"], 2)})

# %% [markdown]
# ## Where next
#
# Open **[10_attacks](10_attacks.ipynb)**: three releases that look harmless, and the attacks that
# show why each needs noise. Then **[01_mechanisms](01_mechanisms.ipynb)**: move the ε slider and
# watch the noise of the Laplace and geometric mechanisms, the privacy loss between two
# neighbouring datasets, the exponential mechanism's choices, and a budget being split.
#
# Keep the [notation glossary](../docs/glossary.md) open while you read: the papers reuse some
# symbols (ε′ means four different things in notebooks 03–06), the glossary gives each its own
# name. Every paper, dataset and library the notebooks cite, with its DOI, is in the
# [bibliography](../docs/bibliography.md).
