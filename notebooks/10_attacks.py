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
# # 10 · Attacks first: why privacy needs noise
#
# Before any mechanism, three releases that look harmless: two counts, a few hundred counts, a
# trained model. Each one gives away a person, and each attack says what a private release must
# prevent. Full references are in the [bibliography](../docs/bibliography.md), symbols as in the
# [glossary](../docs/glossary.md).
#
# ## What you will learn
#
# - why an **aggregate is not private**: two exact counts that differ by one person reveal that
#   person (a *differencing attack*), and how noise on each count stops it;
# - the **reconstruction attack** of Dinur & Nissim (2003): from enough counts over random subsets,
#   each answered a little off the truth, a linear program rebuilds a whole secret column; how large
#   the errors must be to stop it (about √n for n people);
# - **membership inference**: telling from a released model alone whether a person was in its
#   training data, and the limit ε-DP puts on *every* such attack;
# - why the later notebooks put calibrated noise on everything they release.
#
# Every attack here runs on the public Adult data with the attacker's eyes; the "secret" columns
# are ordinary Adult columns that we pretend are private. Charts are stored with the notebook, the
# explorers come alive when it runs (▶▶ "Restart the kernel and run all cells").

# %%
import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier

from dpexplore import lab
from dpexplore.attacks import (membership_bound, membership_roc, membership_scores, noisy_subset_counts,
                               reconstruct, subset_queries)
from dpexplore.config import repetitions
from dpexplore.datasets import load_adult
from dpexplore.mechanisms import laplace
from dpexplore.models.naive_bayes import Binarizer
from dpexplore.plots import attacks as aplots   # charts drawn offline, even before the notebook runs
from dpexplore.widgets.attacks import MembershipExplorer, ReconstructionExplorer, dp_models

frame, schema = load_adult()

# %% [markdown]
# ## 1. Two exact counts: a differencing attack
#
# A statistics office publishes counts of Adult and nothing else: "only aggregates, no records".
# An attacker knows that their neighbour, born in the Netherlands, is in the table, and that she is
# the only person in it from there (a fact anyone who knows the town could know). Two questions,
# both about large groups, are enough:
#
# 1. how many people earn more than 50K?
# 2. how many people **not born in the Netherlands** earn more than 50K?
#
# The two groups differ by one person, so the difference of the two counts is her income bit.

# %%
rich = frame["income"] == ">50K"
not_her = frame["native-country"] != "Holand-Netherlands"
count_all = int(rich.sum())
count_without_her = int((rich & not_her).sum())
print(f"people earning >50K: {count_all:,}; of those not born in the Netherlands: {count_without_her:,}")
print(f"the attacker's difference: {count_all - count_without_her} → her income is "
      f"{'>50K' if count_all - count_without_her else '≤50K'}")

# %% [markdown]
# Refusing small groups does not help: both groups hold tens of thousands of people. What helps is
# **noise**. Suppose the office adds Laplace noise of scale b = Δ/ε to each count, with Δ = 1 (one
# person changes a count by at most 1) and ε = 0.5 per count, so b = 2 (notebook 01 explains the
# Laplace mechanism). The attacker still subtracts the two released counts and guesses ">50K"
# when the difference is above 1/2.

# %% tags=["exercise"]
# Exercise 10.1 (compute, 3 min): each of the two counts gets its own Laplace noise of scale b = 2
# (ε = 0.5, Δ = 1). What is the standard deviation of the attacker's difference of the two
# released counts?
difference_sd = None   # your answer
### BEGIN SOLUTION
b = 1 / 0.5
difference_sd = np.sqrt(2 * (2 * b**2))    # Var[Laplace(b)] = 2b², and independent variances add
### END SOLUTION

# %% tags=["self-check"]
lab.check("10.1")

# %% [markdown]
# Below, the office answers the two questions 20,000 times over, once in the real table (her
# income ≤50K) and once in its neighbour where she earns more (one person's bit changed). The
# attacker's difference is centred on her bit in each world, but the two histograms overlap so
# much that the attacker's guess is little better than a coin's.

# %%
rng = np.random.default_rng(0)
releases = repetitions(20_000, 4_000)
differences = {}
for bit, name in ((0, "her income ≤50K (the real table)"), (1, "her income >50K (the neighbour)")):
    first = laplace(np.full(releases, count_without_her + bit, dtype=float), epsilon=0.5, random_state=rng)
    second = laplace(np.full(releases, count_without_her, dtype=float), epsilon=0.5, random_state=rng)
    differences[name] = first - second
right = np.mean(np.r_[differences["her income ≤50K (the real table)"] <= 0.5,
                      differences["her income >50K (the neighbour)"] > 0.5])
print(f"the attacker guesses her bit right in {right:.1%} of the releases (a coin: 50 %)")
aplots.difference_chart(differences, edges=np.linspace(-16, 17, 67), threshold=0.5,
                        title="The attacker's difference of two noisy counts (ε = 0.5 each)")

# %% [markdown]
# <details><summary>How much can any attacker learn here? (open it after the check)</summary>
#
# Only the first count depends on her record; the second leaves her out. So the attacker faces
# one Laplace release at ε = 0.5: whatever they compute, the odds of "she earns >50K" can move by
# at most the factor e^0.5 ≈ 1.65 (notebook 00's promise). With even prior odds, no attacker can be
# right more than e^0.5/(1 + e^0.5) ≈ 62 % of the time; the simple threshold above is right about
# 56 % of the time. The office's accountant still charges ε = 0.5 + 0.5 = 1 for the two answers:
# it does not know who is in which group.
# </details>

# %% [markdown]
# ## 2. Many counts: reconstruction (Dinur & Nissim 2003)
#
# Noise must be large enough, and it must stay large when the attacker asks **many** questions.
# Dinur & Nissim's attack shows what "large enough" means. A curator holds a secret bit for each of
# n people and answers questions of the form "how many of *these* people have the bit?", for any
# subset of the n people. Every answer is within E of the truth. The attacker
#
# 1. asks k random subsets (each person in each subset with probability 1/2): a k × n 0/1 matrix A
#    of queries and the answers a;
# 2. looks for the 0/1 column x whose counts A·x come closest to the answers. Relaxed to numbers
#    in [0, 1], that is a **linear program**: minimise Σⱼ |Aⱼ·x − aⱼ| with 0 ≤ x ≤ 1 (one extra
#    variable eⱼ ≥ |Aⱼ·x − aⱼ| per answer), solved by `scipy.optimize.linprog`;
# 3. rounds x at 1/2.
#
# Dinur & Nissim (2003, §3) prove that when every answer is within E = o(√n) of the truth, this
# kind of attack recovers the secret of all but o(n) people from polynomially many queries; an
# attacker who may ask about every subset defeats even errors of size o(n). Minimising the total
# error, as here, is the linear-programming decoding of Dwork, McSherry & Talwar (2007).
#
# Our n = 100 people are a sample of Adult; the secret bit is **married** (marital-status
# Married-civ-spouse). The attacker knows who the 100 people are and can name any subset of them
# in a query (through attributes the office lets them filter on).

# %%
people = frame.sample(100, random_state=7)         # the same people as the cached sweep below
secret = (people["marital-status"] == "Married-civ-spouse").to_numpy().astype(int)
print(f"{secret.size} people, {secret.mean():.0%} of them married (not private: the secret)")
A = subset_queries(secret.size, 400, random_state=1)
for noise in (0, 2, 10):
    answers = noisy_subset_counts(secret, A, noise=noise, random_state=2)
    guess = reconstruct(A, answers)
    print(f"400 answers, each off by up to {noise:>2}: the attack recovers {np.mean(guess == secret):.0%} of the bits")

# %% [markdown]
# Exact answers give every bit back. Answers off by up to 2, less than a tenth of a typical answer
# (about 27 married people per subset), still give almost every bit back: "rounded" or "perturbed a
# little" statistics protect no one.

# %% tags=["exercise"]
# Exercise 10.2 (implement, 12 min): write my_reconstruct(queries, answers): queries is the k × n
# 0/1 matrix A (one row per subset), answers the k counts a. Return the n guessed bits (0/1).
# Use scipy.optimize.linprog as described above, not dpexplore. The check runs your attack on
# secret columns it generates (8 to 150 people, exact answers and answers off by up to 2) and
# needs it to recover them.
my_reconstruct = None   # your answer: a def of (queries, answers) returning the bits
### BEGIN SOLUTION
from scipy.optimize import linprog


def my_reconstruct(queries, answers):
    A, a = np.asarray(queries, dtype=float), np.asarray(answers, dtype=float)
    k, n = A.shape
    cost = np.r_[np.zeros(n), np.ones(k)]                     # minimise Σ e over (x, e)
    bounds_ub = np.block([[A, -np.eye(k)], [-A, -np.eye(k)]])  # A x − e ≤ a and −A x − e ≤ −a
    result = linprog(cost, A_ub=bounds_ub, b_ub=np.r_[a, -a],
                     bounds=[(0, 1)] * n + [(0, None)] * k, method="highs")
    return (result.x[:n] >= 0.5).astype(int)
### END SOLUTION

# %% tags=["self-check"]
lab.check("10.2")

# %% [markdown]
# ### How much noise stops it?
#
# The cached sweep below repeats the attack on the same 100 people for 50 to 800 queries and error
# bounds E from 0 to 100, ten times each with fresh queries and errors (`benchmarks/10_reconstruction_grid.py`,
# about half a minute; a linear program per run is too slow for a slider). The x-axis is a
# symlog scale: linear near 0, logarithmic further out.

# %%
runs = pd.read_csv("results/10_reconstruction.csv")   # python benchmarks/10_reconstruction_grid.py
summary = aplots.reconstruction_summary(runs)
aplots.reconstruction_chart(summary, n_records=secret.size, n_queries=400)

# %% [markdown]
# ### Explorer: reconstruction
#
# - **queries**: how many random subset counts the attacker gets (50 to 800). Its line is drawn
#   thick, with a band from its worst to its best run.
# - **error bound E**: how far each answer may be from the truth (a uniform error in [−E, E]); the
#   black diamond marks the chosen setting.
#
# Below the curves, the 100 people of the chosen setting's first run: a blue square where the
# attacker's bit is right, a vermillion cross where it is wrong. Each move only reads the cached
# runs: nothing is recomputed.

# %%
reconstruction_explorer = ReconstructionExplorer(runs, n_queries=400, noise=2)
reconstruction_explorer.widget

# %% tags=["exercise"]
# Exercise 10.3 (read the chart, 2 min): follow the line of 400 queries. What is the smallest error
# bound E of the chart at which the attack recovers less than 75 % of the secret bits on average?
noise_to_stop_it = None   # your answer: a value of E from the chart's axis
### BEGIN SOLUTION
line = summary[summary["n_queries"] == 400]
noise_to_stop_it = line[line["rate"] < 0.75]["noise"].min()
### END SOLUTION

# %% tags=["self-check"]
lab.check("10.3")

# %% [markdown]
# <details><summary>What this means for a private release (open it after the check)</summary>
#
# The fall is gradual: more queries push the attack further, and well below √n = 10 nearly every
# bit comes back. The lesson for a curator who must answer many questions: each answer needs noise
# whose size grows with the number of questions. With Laplace noise and a total budget ε, k subset
# counts (each of sensitivity 1) cost ε/k each, so each gets noise of scale k/ε: 400 answers at
# ε = 1 carry noise of scale 400, far past √n, and the attack fails. Accurate answers to many
# questions about the same people are impossible: ε-DP turns this "fundamental law of information
# recovery" into a budget (Dwork & Roth 2014, §8.1).
# </details>

# %% [markdown]
# ## 3. A released model: membership inference
#
# A model trained on people's records is a release too. The **loss-threshold attack** (Yeom et al.
# 2018, §3) asks the model how confident it is in a person's true label: a model that has seen the
# person tends to be more confident. The attacker flags a person as a member of the training set
# when the confidence log p̂(true label) is above a threshold; every threshold gives a point of an
# ROC curve (members flagged against non-members flagged), and its area (AUC) says how much the
# model leaks: 0.5 is guessing.
#
# We train on 500 people of Adult (the members) and keep 500 others (non-members), all with the
# binary features of the public schema (`Binarizer`, as in notebook 04). The first model is a
# random forest of deep trees, **not private**: it fits its training data almost perfectly.

# %%
binarizer = Binarizer(schema).fit()
order = np.random.default_rng(0).permutation(len(frame))
members, non_members = frame.iloc[order[:500]], frame.iloc[order[500:1000]]
X_in, X_out = (binarizer.transform(part.drop(columns=schema.target)) for part in (members, non_members))
y_in, y_out = ((part[schema.target] == ">50K").to_numpy().astype(int) for part in (members, non_members))
forest = RandomForestClassifier(n_estimators=200, random_state=0).fit(X_in, y_in)
forest_roc, forest_auc = membership_roc(membership_scores(forest, X_in, y_in), membership_scores(forest, X_out, y_out))
print(f"random forest: accuracy {forest.score(X_in, y_in):.3f} on its members, {forest.score(X_out, y_out):.3f} "
      f"on non-members; the attack's AUC {forest_auc:.2f}")

# %% [markdown]
# ### What ε-DP allows an attacker
#
# Deciding "this person was in the training set" is a test between two neighbouring datasets:
# with the person and without. If training is ε-DP, every event, "flagged" included, is at most
# e^ε times likelier on one than on the other. So for **every** attack and every threshold
#
# $$\text{TPR} \le e^{\varepsilon}\,\text{FPR} \quad\text{and}\quad 1 - \text{FPR} \le e^{\varepsilon}\,(1 - \text{TPR})$$
#
# (the hypothesis-testing view of DP: Wasserman & Zhou 2010, Thm 2.4; Kairouz, Oh & Viswanath
# 2015, Thm 2.1; `membership_bound`). Its ROC curve stays under the dashed limit of the charts
# below, up to sampling noise: the grey region is out of reach.

# %% tags=["exercise"]
# Exercise 10.4 (compute, 2 min): a model is trained with ε = 2. An attacker tunes the threshold so
# that it wrongly flags 1 % of the non-members (FPR = 0.01). At most what share of the members can
# it flag (TPR)? Give a share (0.25 means 25 %).
max_members_flagged = None   # your answer
### BEGIN SOLUTION
max_members_flagged = np.exp(2.0) * 0.01
### END SOLUTION

# %% tags=["self-check"]
lab.check("10.4")

# %% [markdown]
# The same attack against DP Naive Bayes (the thesis's Algorithm 1, notebook 04) trained on the same
# 500 members at ε = 1, four times with fresh noise, beside the random forest and the ε = 1 limit:

# %%
models = dp_models(classes=[0, 1])
curves = {"random forest (not private)": [forest_roc]}
nb_aucs = []
for seed in range(4):
    model = models["DP Naive Bayes"](1.0, seed).fit(X_in, y_in)
    roc, auc = membership_roc(membership_scores(model, X_in, y_in), membership_scores(model, X_out, y_out))
    curves.setdefault("DP Naive Bayes, ε = 1", []).append(roc)
    nb_aucs.append(auc)
aplots.membership_chart(aplots.roc_frame(curves), epsilon=1.0,
                        aucs={"random forest": forest_auc, "DP Naive Bayes (median)": float(np.median(nb_aucs))},
                        title="Membership inference against a random forest and DP Naive Bayes")

# %% [markdown]
# The forest's curve rises steeply at the left (its most confident members are flagged almost
# without false alarms) and, in the upper right, leaves the region an ε = 1 model must stay in, by
# more than the sampling noise of 500 people: no 1-DP training would produce it. DP Naive Bayes
# stays close to the diagonal.
#
# How the attack's AUC moves with ε, for DP Naive Bayes and DP logistic regression (objective
# perturbation, Chaudhuri et al. 2011): the median of ten models per ε, each trained afresh.

# %%
rows = []
for name, make in models.items():
    for epsilon in (0.1, 0.5, 1.0, 5.0, 10.0, 50.0):
        aucs = []
        for seed in range(repetitions(10, 3)):
            model = make(epsilon, seed).fit(X_in, y_in)
            aucs.append(membership_roc(membership_scores(model, X_in, y_in),
                                       membership_scores(model, X_out, y_out))[1])
        rows.append({"model": name, "ε": epsilon, "median AUC": np.median(aucs)})
table = pd.DataFrame(rows).pivot(index="ε", columns="model", values="median AUC")
table["TPR allowed at FPR 5 %"] = [membership_bound([0.05], epsilon=e)[0] for e in table.index]
table.round(3)

# %% [markdown]
# Two lessons. First, DP caps the attack: the limit is tight at small ε and says nothing at
# ε = 10 or 50 (e^10 ≈ 22,000: every rate is allowed). Second, a cap is a guarantee, not a
# measurement: these simple models leak little even at ε = 50, because they do not memorise; the
# forest leaks because it does. The guarantee holds for every attack, including ones not yet
# invented; an AUC only measures the one attack tried.
#
# ### Explorer: membership inference
#
# - **ε**: the DP model's budget (log scale, 0.05 to 50); the dashed line is the ε-DP limit at that ε.
# - **DP model**: DP Naive Bayes or DP logistic regression (objective perturbation).
#
# Each move trains four DP models on the 500 members (milliseconds each) and redraws their ROC curves
# beside the random forest's, which is scored once. The line above the chart compares the members
# flagged at 5 % false alarms with what the limit allows.

# %%
membership_explorer = MembershipExplorer((X_in, y_in), (X_out, y_out), {"random forest (not private)": forest},
                                         models=models, epsilon=1.0)
membership_explorer.widget

# %% [markdown]
# ## Summary
#
# - An exact aggregate is not private: two counts that differ by one person reveal that person.
#   Restricting queries to large groups does not help; noise on every answer does.
# - Many accurate answers reveal everything: from k random subset counts with errors well below √n,
#   a linear program rebuilds the secret column (Dinur & Nissim 2003). Noise must grow with the
#   number of questions, which is what a privacy budget enforces.
# - A trained model leaks its training set to a membership attack when it memorises; ε-DP
#   training confines every attack's ROC curve to TPR ≤ e^ε·FPR (and its mirror image).
#
# Next: **[01_mechanisms](01_mechanisms.ipynb)**, the noise itself: the Laplace, geometric and
# exponential mechanisms, the privacy loss, and budgets.
