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
# # 01 · Mechanisms: noise, privacy loss, selection and budgets
#
# Every private method in dpexplore is built from three small *mechanisms* and one bookkeeping
# rule. This notebook lets you move ε and watch each of them. (Dwork & Roth, *The Algorithmic
# Foundations of Differential Privacy*, 2014, chapter 3.)
#
# ## What you will learn
#
# - how the **Laplace mechanism** and its integer twin, the **geometric mechanism**, protect a count,
#   and how their noise grows with the **sensitivity** Δ and shrinks with ε (noise scale b = Δ/ε);
# - what the **privacy loss** is: the log-ratio of the outputs' probabilities on two neighbouring
#   datasets, which ε-DP keeps within ±ε, and how an **audit** estimates it from samples (and
#   catches a bug);
# - how the **exponential mechanism** picks the best of several candidates privately, and how its
#   choice sharpens as ε grows;
# - how a **budget accountant** splits a total ε over several questions, with sequential and
#   parallel composition: "where did ε go?".
#
# Each section has a static chart (visible without running anything) and an **explorer**: sliders
# that redraw the chart. The stored notebook shows each explorer as a picture; the sliders need a
# running kernel. In JupyterLab, run the notebook (▶▶ "Restart the kernel and run all cells"); in a
# Voilà app the page has already run it: just move the sliders.

# %%
import numpy as np
import pandas as pd

from dpexplore import lab
from dpexplore.audit import privacy_loss
from dpexplore.budget import BudgetAccountant
from dpexplore.datasets import load_adult
from dpexplore.mechanisms import (exponential, geometric, geometric_variance, laplace,
                                  laplace_variance)
from dpexplore.plots import mechanisms as mplots   # charts drawn offline, even before the notebook runs
from dpexplore.widgets.mechanisms import (BudgetExplorer, ExponentialExplorer, NoiseExplorer,
                                          PrivacyLossExplorer)
import altair as alt   # after dpexplore.plots, which loads altair quickly (dpexplore/plots/_render.py)

frame, schema = load_adult()

# %% [markdown]
# ## 1. Protecting a count: Laplace vs geometric noise
#
# Our running question: **how many people in Adult are 90 or older?** A count has sensitivity
# Δ = 1: adding or removing one person changes it by at most 1. (If each person could contribute
# up to 5 to the query, say visits to a clinic capped at 5, Δ would be 5.)
#
# - The **Laplace mechanism** releases count + Z with Z ~ Laplace(b), b = Δ/ε, density
#   $e^{-|z|/b}/2b$ (Dwork & Roth, Thm 3.6). Its outputs are real numbers.
# - The **geometric mechanism** releases count + Z with $\Pr[Z = k] \propto \alpha^{|k|}$,
#   $\alpha = e^{-\varepsilon/\Delta}$ (Ghosh, Roughgarden & Sundararajan 2009). Its outputs are
#   integers, so a noisy count is still a count; its variance is slightly smaller.

# %% tags=["exercise"]
# Exercise 01.1 (compute, 2 min): a clinic publishes the number of visits in a month; each patient
# can make up to 5 visits (the clinic caps them). What Laplace scale b makes the release ε = 0.5-DP?
b_visits = None   # your answer
### BEGIN SOLUTION
b_visits = 5 / 0.5
### END SOLUTION

# %% tags=["self-check"]
lab.check("01.1")

# %%
true_count = int((frame["age"] >= 90).sum())
print(f"true answer (not private): {true_count} people aged 90 or older")
print(f"one Laplace release at ε = 1:   {laplace(true_count, epsilon=1.0, random_state=1):.2f}")
print(f"one geometric release at ε = 1: {geometric(true_count, epsilon=1.0, random_state=1)}")

# %% [markdown]
# One release tells little; the shape of the noise shows up when we repeat the release many times.
# Below, 20,000 releases at a strict ε = 0.2 and at a loose ε = 2 (Δ = 1): the bars are the
# sampled histograms, the black line and dots the exact density and pmf. Ten times the ε gives a
# ten times narrower noise.

# %%
rng = np.random.default_rng(0)
static = []
for eps in (0.2, 2.0):
    truth = np.full(20_000, true_count)
    samples = {"Laplace": laplace(truth, epsilon=eps, random_state=rng),
               "geometric": geometric(truth, epsilon=eps, random_state=rng)}
    hist, theory = mplots.noise_frames(samples, epsilon=eps, sensitivity=1, true_value=true_count)
    static.append(mplots.noise_chart(hist, theory, true_value=true_count, width=260, height=170,
                                     title=f"ε = {eps:.3g}, Δ = 1"))
alt.vconcat(*static)

# %% [markdown]
# The samples agree with the theory. The standard deviations, exact and sampled:

# %%
rows = []
for eps in (0.1, 0.5, 1.0, 2.0):
    lap = laplace(np.zeros(50_000), epsilon=eps, random_state=rng)
    geo = geometric(np.zeros(50_000, dtype=int), epsilon=eps, random_state=rng)
    rows.append({"ε": eps, "Laplace sd (exact)": np.sqrt(laplace_variance(epsilon=eps)), "Laplace sd (samples)": lap.std(),
                 "geometric sd (exact)": np.sqrt(geometric_variance(epsilon=eps)), "geometric sd (samples)": geo.std()})
pd.DataFrame(rows).round(3)

# %% [markdown]
# ### Explorer: noise on a count
#
# - **ε**: the privacy parameter (log scale, 0.05 to 5). Smaller ε = stronger privacy = wider noise.
# - **sensitivity Δ**: how much one person can change the query (1 for a count). The noise scale is
#   b = Δ/ε, so doubling Δ costs as much accuracy as halving ε.
#
# Each move draws 20,000 new releases of the count with `laplace` and `geometric` and redraws the
# histograms against the theory; the line above the chart gives the scale b and the standard
# deviations (exact and sampled). Watch the geometric panel at large ε: its outputs are integers, so
# almost all the mass sits on the true count.

# %%
noise_explorer = NoiseExplorer(true_count, epsilon=1.0, sensitivity=1)
noise_explorer.widget

# %% [markdown]
# ### Accuracy before release
#
# Before a noisy count is published, the analyst can already say how far off it may be, without
# looking at the data. Laplace noise of scale $b = \Delta/\varepsilon$ is at least $t$ in absolute
# value with probability $e^{-t/b}$ (Dwork & Roth 2014, Fact 3.7). Setting that probability to
# $\alpha$ gives the **$(1-\alpha)$ error bound**
#
# $$a \;=\; b\,\ln\frac{1}{\alpha} \;=\; \frac{\Delta}{\varepsilon}\,\ln\frac{1}{\alpha}:$$
#
# with probability $1-\alpha$ the release is within $\pm a$ of the true count (Dwork & Roth 2014,
# Theorem 3.8, with one query). Read backwards, it prices an accuracy target:
# $\varepsilon = \Delta \ln(1/\alpha)/a$. OpenDP's accuracy utilities teach the same two directions;
# here they are `laplace_accuracy` and `epsilon_for_accuracy` in `dpexplore.accuracy`.

# %%
from dpexplore.accuracy import epsilon_for_accuracy, laplace_accuracy
from dpexplore.widgets.mechanisms import AccuracyExplorer

bound = laplace_accuracy(epsilon=0.5, sensitivity=1, alpha=0.05)
print(f"ε = 0.5, Δ = 1: with probability 95% the noisy count is within ±{bound:.2f} of the truth")
print(f"to be within ±2 with probability 95%, spend ε = {epsilon_for_accuracy(accuracy=2, sensitivity=1, alpha=0.05):.2f}")
releases = laplace(np.full(100_000, true_count), epsilon=0.5, random_state=np.random.default_rng(11))
print(f"check on 100,000 releases: {np.mean(np.abs(releases - true_count) >= bound):.2%} missed by ±{bound:.2f} "
      "or more (α = 5%)")

# %% [markdown]
# #### Explorer: accuracy before release
#
# - **ε** and **sensitivity Δ**: as above; the bound grows with b = Δ/ε.
# - **α (miss chance)**: how often the release may fall outside the bound (log scale, 0.001 to 0.5).
#   A smaller α buys confidence with a wider bound, but only logarithmically: going from 5% to 0.5%
#   adds ln 10 ≈ 2.3 scales b to the bound.
#
# The chart shows the noise (released minus true value): its density, a histogram of 20,000 draws,
# the bound ±a as dashed lines and the two tails beyond it filled; together the tails hold α of the
# mass. The line above the chart gives a and the share of the draws at or beyond ±a. That share
# stays close to α whatever ε and Δ: both stretch the noise and the bound by the same factor.

# %%
accuracy_explorer = AccuracyExplorer(epsilon=0.5, sensitivity=1, alpha=0.05)
accuracy_explorer.widget

# %% [markdown]
# ## 2. The privacy loss on two neighbouring datasets
#
# Let $D$ be Adult and $D'$ its neighbour with one more person aged 90+ (worst case: the query moves
# by the full sensitivity Δ). An observer sees one released value x. How much does x tell them about
# which of the two datasets was used? The **privacy loss** at x is
#
# $$L(x) = \ln \frac{p_D(x)}{p_{D'}(x)} = \frac{|x - f(D')| - |x - f(D)|}{b},$$
#
# and since $|x - f(D')| - |x - f(D)| \le |f(D) - f(D')| \le Δ$, it is at most Δ/b = ε in absolute
# value: the Laplace mechanism is ε-DP. Top: the two output densities; bottom: the loss (black)
# inside the green band ±ε. Far on either side the loss is exactly ±ε: those outputs are the most
# revealing, but they are rare.
#
# The purple dots are an **audit** (`dpexplore.audit.privacy_loss`): it draws 100,000 outputs on
# each dataset, bins them, and estimates the log-ratio in every bin from the counts alone, without
# knowing the formula. It returns a point estimate ε̂ and a 95% lower confidence bound; the
# mechanism fails the audit when the lower bound exceeds the claimed ε.

# %%
eps, delta = 1.0, 1
densities, loss = mplots.privacy_loss_frames(true_count, true_count + delta, epsilon=eps, sensitivity=delta)

def laplace_release(data, rng, n):
    return laplace(np.full(n, data), epsilon=eps, sensitivity=delta, random_state=rng)

audit = privacy_loss(laplace_release, true_count, true_count + delta, n_samples=100_000,
                     bins=np.linspace(true_count - 3, true_count + 4, 25), batched=True, random_state=0)
print(f"audit: ε̂ = {audit.epsilon_hat:.3f}, 95% lower bound {audit.epsilon_lower:.3f}, "
      f"violates ε = {eps:.3g}? {audit.violates(eps)}")
mplots.privacy_loss_chart(densities, loss, epsilon=eps, audit=mplots.audit_points(audit))


# %% [markdown]
# The audit works on any mechanism. Below: the Laplace and the geometric mechanism calibrated
# correctly, and a **buggy** Laplace release of a query with Δ = 3 whose noise was calibrated for
# Δ = 1 (a classic mistake: forgetting that one person can change the answer by more than 1). Its
# true privacy loss is 3ε, and the audit's lower bound proves that the claim ε = 1 is false.

# %%
def audited(name, mechanism, neighbour_shift, claimed):
    result = privacy_loss(mechanism, true_count, true_count + neighbour_shift, n_samples=100_000,
                          batched=True, random_state=1)
    return {"mechanism": name, "claimed ε": claimed, "audit ε̂": round(result.epsilon_hat, 3),
            "95% lower bound": round(result.epsilon_lower, 3), "violates the claim": result.violates(claimed)}

pd.DataFrame([
    audited("Laplace, Δ = 1", lambda d, r, n: laplace(np.full(n, d), epsilon=1.0, random_state=r), 1, 1.0),
    audited("geometric, Δ = 1", lambda d, r, n: geometric(np.full(n, d), epsilon=1.0, random_state=r), 1, 1.0),
    audited("Laplace, Δ = 3 but noise for Δ = 1 (bug)",
            lambda d, r, n: laplace(np.full(n, d), epsilon=1.0, sensitivity=1, random_state=r), 3, 1.0),
])

# %% [markdown]
# (ε̂ is a noisy point estimate and can land a little above the true ε; only the lower bound is
# evidence of a violation. Passing an audit is evidence, not a proof.)
#
# ### Explorer: privacy loss
#
# - **claimed ε**: the ε the mechanism is calibrated for (and claims).
# - **sensitivity Δ**: how far the answer moves between D and D′.
# - **bug: noise for Δ = 1**: tick it to calibrate the noise for Δ = 1 whatever Δ is. With Δ > 1 the
#   loss leaves the green band and the audit verdict turns red.
#
# Each move redraws both densities and the exact loss, and reruns the audit (2 × 100,000 draws).

# %% tags=["exercise"]
# Exercise 01.2 (predict, then check with the explorer, 3 min): a query with sensitivity Δ = 2 is
# released with Laplace noise calibrated for Δ = 1 at ε = 0.5 (the bug above). What is the largest
# privacy loss |L(x)| of this release, i.e. its true ε? Then set the explorer to claimed ε = 0.5,
# Δ = 2, tick the bug, and compare the loss curve with your answer.
true_epsilon = None   # your answer
### BEGIN SOLUTION
true_epsilon = 2 / (1 / 0.5)     # Δ / b with b = 1/ε
### END SOLUTION

# %% tags=["self-check"]
lab.check("01.2")

# %%
loss_explorer = PrivacyLossExplorer(true_count, epsilon=1.0, sensitivity=2)
loss_explorer.widget

# %% [markdown]
# ### Why floating-point noise leaks
#
# The Laplace mechanism is proved private for *real* numbers. A computer adds a *floating-point*
# sample, and Mironov (2012) showed that the last bits of `value + noise` betray `value`. Take the
# true counts 0 and 1. From 0 the textbook sampler returns the noise Z itself: in [0.25, 0.5) the
# spacing of doubles is 2⁻⁵⁴, and about half of those outputs are *odd* multiples of 2⁻⁵⁴. From 1
# the output is the rounded sum 1 + Z, a multiple of 2⁻⁵³ there: an odd multiple of 2⁻⁵⁴ is
# **impossible**. Seeing one such output proves the count was 0 — an infinite privacy loss, whatever ε.
#
# dpexplore's **hardened** sampler (`laplace(..., hardened=True)`, or every call inside
# `with hardened_noise():`) rounds the value to a power-of-two grid and adds *exact* discrete-Laplace
# noise drawn with integer arithmetic (Canonne, Kamath & Steinke 2020), paying for the rounding by
# a slightly larger sensitivity. Every output is a grid point reachable from both neighbours. The
# your-data release (notebook 08) uses it by default; the charts of this notebook keep the textbook
# sampler, whose density is the one drawn.

# %%
from dpexplore.mechanisms import hardened_laplace_parameters, hardened_noise


def low_bits(z):
    """Mironov's event: is the output in [0.25, 0.5) an odd multiple of 2**-54?"""
    inside = (z >= 0.25) & (z < 0.5)
    odd = np.mod(z / 2.0**-54, 2.0) == 1.0
    return np.where(inside & odd, "in [0.25, 0.5), odd last bit",
                    np.where(inside, "in [0.25, 0.5), even last bit", "elsewhere"))


def sampler(hardened):
    return lambda d, r, n: low_bits(laplace(np.full(n, float(d)), epsilon=1.0, random_state=r,
                                            hardened=hardened))


rows = []
for name, hardened in (("textbook float sampler", False), ("hardened (exact, on a grid)", True)):
    a = privacy_loss(sampler(hardened), 0, 1, n_samples=40_000, batched=True, random_state=0)
    t = a.table.set_index("event")
    rows.append({"sampler": name, "claimed ε": 1.0,
                 "odd last bit, count 0": int(t["count"].get("in [0.25, 0.5), odd last bit", 0)),
                 "odd last bit, count 1": int(t["count_neighbour"].get("in [0.25, 0.5), odd last bit", 0)),
                 "audit lower bound": round(a.epsilon_lower, 2)})
grid = hardened_laplace_parameters(epsilon=1.0)[0]
print(f"hardened grid: g = 2^{int(np.log2(grid))}; every hardened output is a multiple of g")
pd.DataFrame(rows)


# %% [markdown]
# The textbook sampler fails the audit at any claimed ε (its lower bound is limited only by the
# number of draws); the hardened one passes: both neighbours produce every grid point.

# %% [markdown] tags=["lab-only"]
# ### Spot the bug, then fix it: the audit grades your mechanism
#
# The function below publishes noisy class counts of a label column "at ε = 1": one Laplace count
# per class, sensitivity 1 (a record is in one class). Read it and find the leak before running
# the audit. The neighbours: 60 records of classes "a" and "b", and the same table plus **one**
# record of a rare class "c". The public schema declares the classes "a", "b" and "c".

# %% tags=["lab-only"]
def noisy_class_counts(labels, rng):
    classes = sorted(set(labels))                               # the classes of the table
    counts = np.array([labels.count(c) for c in classes], dtype=float)
    noisy = laplace(counts, epsilon=1.0, random_state=rng)
    # released, coarsened to tens: e.g. "a:3 b:3"
    return " ".join(f"{c}:{v}" for c, v in zip(classes, np.round(noisy / 10).astype(int)))


table = ["a"] * 30 + ["b"] * 30
neighbour = table + ["c"]
bug = privacy_loss(noisy_class_counts, table, neighbour, n_samples=2_000, random_state=1)
print(f"claimed ε = 1; audit lower bound {bug.epsilon_lower:.2f} → violates: {bug.violates(1.0)}")


# %% [markdown] tags=["lab-only"]
# **Exercise 01.3 (implement, 10 min).** Write `my_class_counts(labels, rng)`: the same release —
# Laplace noise at ε = 1 on the count of every class, shown in tens as `"a:3 b:3 c:0"` — without
# the leak. The self-check grades it in two ways, on inputs you never see: it compares what your
# function releases, over many runs on tables from a handful to 100,000 labels, with what the
# Laplace mechanism releases; and the package's privacy audit runs it on ten pairs of neighbouring
# tables (the pair above among them) and passes it only if no loss above ε = 1 is found. It also
# checks that the same audit flags the function above (so passing means something). Try the audit
# yourself first:
# `privacy_loss(my_class_counts, table, neighbour, n_samples=2_000, random_state=1)`.

# %% tags=["exercise"]
my_class_counts = None   # your answer: def my_class_counts(labels, rng): ...
### BEGIN SOLUTION
def my_class_counts(labels, rng, classes=("a", "b", "c")):   # declared, public classes
    counts = np.array([labels.count(c) for c in classes], dtype=float)
    noisy = laplace(counts, epsilon=1.0, random_state=rng)
    return " ".join(f"{c}:{v}" for c, v in zip(classes, np.round(noisy / 10).astype(int)))
### END SOLUTION

# %% tags=["self-check"]
lab.check("01.3")

# %% [markdown] tags=["lab-only"]
# <details><summary>The bug (open it after you tried)</summary>
#
# `sorted(set(labels))` reads the class list from the private data: with the record of class "c"
# the release has three entries, without it two. That difference is certain, so the privacy loss
# is unbounded — no noise on the counts can hide it. The fix: the classes are part of the public
# schema (`schema.classes`, or `classes=` on the estimators; dpexplore warns with
# `PrivacyLeakWarning` when they are read from the data). Removing the noise, or claiming ε = 1
# with the noise of a larger ε, fails too: the second pair of neighbours catches both.
# </details>

# %% [markdown]
# ## 3. Choosing privately: the exponential mechanism
#
# Some answers are not numbers: *which* occupation is the most common? Adding noise to a category
# makes no sense. The **exponential mechanism** (McSherry & Talwar 2007; Dwork & Roth Def. 3.9)
# scores every candidate c with a utility u(D, c) and picks c with probability
#
# $$\Pr[c] \propto \exp\!\Big(\frac{\varepsilon\, u(D, c)}{2\,Δu}\Big),$$
#
# where Δu is the utility's sensitivity. Here u(D, c) = number of people with occupation c (Δu = 1).
# The candidates are the **public** list of occupations from the schema, not the values seen in the
# data. To make the choice hard we use a sample of 1,000 people (a small town), where the top
# occupations are close.

# %%
town = frame.sample(1000, random_state=0)
u = town["occupation"].value_counts().reindex(schema["occupation"].categories, fill_value=0)
curves = mplots.exponential_frame(list(u.index), u.to_numpy(), np.logspace(-2, 1, 41))
current = mplots.exponential_frame(list(u.index), u.to_numpy(), [0.5])
print("top counts (not private):", u.sort_values(ascending=False).head(3).to_dict())
print("one private choice at ε = 0.5:", u.index[exponential(u.to_numpy(), epsilon=0.5, sensitivity=1, random_state=0)])
mplots.exponential_chart(current, curves, title="Most common occupation in a town of 1,000")

# %% [markdown]
# At tiny ε every occupation is almost equally likely (the mechanism ignores the data); as ε
# grows, the probability concentrates on the true winner. Between, close runners-up keep a real
# chance: the mechanism is deliberately unsure when the data are.
#
# ### Explorer: exponential mechanism
#
# - **attribute**: which categorical attribute's most common value to select.
# - **ε (selection)**: the ε spent on the choice (log scale, 0.01 to 10).
#
# The utilities and the curves on the right are computed once when the explorer is built; a move
# only recomputes the bars (exact probabilities) and makes one private draw.

# %% tags=["exercise"]
# Exercise 01.4 (compute, 3 min): two candidates have utilities 10 and 8 (Δu = 1). With ε = 1, what
# is the probability that the exponential mechanism picks the better one?
p_better = None   # your answer
### BEGIN SOLUTION
w_better, w_worse = np.exp(1.0 * 10 / 2), np.exp(1.0 * 8 / 2)
p_better = w_better / (w_better + w_worse)
### END SOLUTION

# %% tags=["self-check"]
lab.check("01.4")

# %%
em_explorer = ExponentialExplorer(town, schema, ["occupation", "education", "marital-status", "workclass"],
                                  epsilon=0.5)
em_explorer.widget

# %% [markdown]
# ## 4. The budget: where did ε go?
#
# A real release asks several questions. With **sequential composition** their ε add up; questions
# on **disjoint** groups of people (the bins of a histogram) cost only the largest ε among them
# (**parallel composition**). A `BudgetAccountant` holds the total, refuses any spend that would
# exceed it (before anything is released), and keeps a ledger. Here ε = 1 is split 1 : 3 : 5, plus
# a reserve kept for later.

# %% tags=["exercise"]
# Exercise 01.5 (predict, then run, 3 min): the cell below splits 0.9 of ε = 1 in the ratio 1 : 3 : 5
# (0.1, 0.3 and 0.5), spends 0.1 on a noisy record count, 0.3 on the most common education, and 0.5 on
# *each* of the four bins of an age histogram, inside a `parallel` scope. How much ε does the
# accountant charge in total? Predict it, then run the two cells below and read `print(acc)`.
charged = None   # your answer
### BEGIN SOLUTION
charged = 0.1 + 0.3 + 0.5
### END SOLUTION

# %% tags=["self-check"]
lab.check("01.5")

# %% tags=["reveal"]
acc = BudgetAccountant(1.0)
e_count, e_select, e_hist = acc.split([1, 3, 5], total=0.9)   # keep 0.1 in reserve
rng = np.random.default_rng(0)
n_noisy = laplace(len(frame), epsilon=acc.spend(e_count, "record count"), random_state=rng)
edu = frame["education"].value_counts().reindex(schema["education"].categories, fill_value=0)
top = edu.index[exponential(edu.to_numpy(), epsilon=acc.spend(e_select, "most common education"),
                            sensitivity=1, random_state=rng)]
age_tax = schema["age"].taxonomy
age_bins = np.bincount(age_tax.node_codes(age_tax.leaf_codes(frame["age"]), 2), minlength=4)
with acc.parallel("age histogram"):     # four disjoint age groups: charged once
    noisy_bins = [laplace(int(c), epsilon=acc.spend(e_hist, f"bin {lab}"), random_state=rng)
                  for lab, c in zip(age_tax.labels(2), age_bins)]
print(f"noisy record count {n_noisy:,.1f}; most common education: {top}; "
      f"noisy age bins {np.round(noisy_bins).astype(int).tolist()}")
acc.ledger

# %% [markdown]
# The ledger has one row per spend, with the ε asked for and the ε charged. The summary groups it by
# top-level item, and the bar shows it against the total:

# %% tags=["reveal"]
print(acc)
display(acc.summary())
mplots.budget_chart(acc.summary(), acc.total)

# %% [markdown]
# <details><summary>What the accountant charged, and why (open it after you ran the two cells)</summary>
#
# The ledger has six spends, but the four histogram bins were charged once (`charged` column): they
# hold disjoint people, so the `parallel` scope costs the largest of its spends, 0.5. In all
# 0.1 + 0.3 + 0.5 = 0.9 is charged, and the 0.1 kept in reserve is still there for a later question.
# </details>

# %% [markdown]
# ### Explorer: splitting a budget
#
# - **total ε**: the whole budget (0.1 to 10).
# - **share: count / education / age hist.**: relative weights of the three questions above (the
#   accountant's `split` turns them into ε amounts). A share of 0 skips that question.
# - **share: keep**: a part of the budget kept for later (it stays grey, "unspent").
#
# Each move reruns the three private questions through a fresh accountant, redraws the bar from its
# summary, and lists the private answers next to the true ones (shown only for teaching). Give the
# histogram a tiny share and watch its bins get noisy; note that its four bins never cost more than
# one share, thanks to parallel composition.

# %%
budget_explorer = BudgetExplorer(frame, schema, category="education", numeric="age", total=1.0)
budget_explorer.widget

# %% [markdown]
# ## Summary
#
# - Laplace and geometric noise have scale b = Δ/ε: privacy is paid in accuracy, and the
#   sensitivity Δ matters as much as ε. The geometric mechanism keeps counts integral.
# - ε-DP means the privacy loss ln p_D(x)/p_D′(x) stays within ±ε for every output; an audit can
#   estimate it from samples and expose a wrongly calibrated mechanism, floating-point noise, or a
#   domain (here: the class list) read from the private data.
# - The exponential mechanism chooses among candidates with probabilities ∝ exp(εu/2Δu); its
#   candidates must come from the public domain.
# - ε is a budget: sequential questions add up, disjoint ones cost their maximum, and the ledger says
#   where it went.
#
# Next: **[11_randomized_response](11_randomized_response.ipynb)**, DP without a trusted curator; then
# the Gaussian mechanism, composition and the sparse vector technique (12–14). Or go straight to
# **[02_privpfc](02_privpfc.ipynb)**, which uses all four at once — an exponential-mechanism choice
# of a grid over the taxonomies, then a noisy histogram on it.
