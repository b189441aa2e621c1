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
# # 12 · The Gaussian mechanism and what (ε, δ) means
#
# The Laplace mechanism (notebook 01) gives **pure ε-DP**. Many libraries and methods, OpenDP's MST
# in notebook 07 among them, add **Gaussian** noise instead and promise **(ε, δ)-DP**. This
# notebook builds the Gaussian mechanism, calibrates it two ways, and reads δ correctly. (Dwork &
# Roth 2014, Appendix A; Balle & Wang 2018. References in the [bibliography](../docs/bibliography.md),
# symbols in the [glossary](../docs/glossary.md).)
#
# ## What you will learn
#
# - the **L2 sensitivity** Δ₂ that calibrates Gaussian noise, and why it is smaller than the L1
#   sensitivity Δ when one person touches many counts;
# - the **classical** calibration σ = Δ₂√(2 ln(1.25/δ))/ε (valid for ε < 1 only) and the
#   **analytic** one (Balle & Wang 2018), which finds the smallest σ for any ε;
# - what **δ** is, and what it is not: δ is **not** "the probability that the ε bound fails". The
#   **privacy-loss distribution** shows what it is instead;
# - how the **budget accountant** records δ where a mechanism spends it, while pure-ε methods stay
#   pure.
#
# Each section has a chart that reads without running anything, and exercises: an *exercise* cell
# where you type an answer, then a *self-check* cell that says whether it is right (it never shows the
# answer). The explorer at the end needs a running kernel (▶▶ "Restart the kernel and run all cells").

# %%
import numpy as np
import pandas as pd

from dpexplore import lab
from dpexplore.audit import privacy_loss
from dpexplore.budget import BudgetAccountant, BudgetExceededError
from dpexplore.datasets import load_adult
from dpexplore.mechanisms import (gaussian, gaussian_delta, gaussian_privacy_loss, gaussian_scale, laplace,
                                  laplace_variance)
from dpexplore.plots import gaussian as gplots   # charts drawn offline, even before the notebook runs
from dpexplore.widgets.gaussian import GaussianExplorer

frame, schema = load_adult()

# %% [markdown]
# ## 1. L2 sensitivity
#
# The Laplace mechanism adds noise of scale b = Δ/ε to each count, where Δ is the **L1
# sensitivity**: the largest change one person makes to the vector of answers, measured as the *sum*
# of the absolute changes. The Gaussian mechanism adds N(0, σ²) noise to each count, and σ grows with
# the **L2 sensitivity** Δ₂: the same change measured as a *length*, √(sum of squares) (Dwork & Roth
# 2014, Def. 3.8 and Thm A.1). A histogram of disjoint cells has Δ = Δ₂ = 1 (one person is in one
# cell). The two differ when one person appears in several answers released together.

# %% tags=["exercise"]
# Exercise 12.1 (compute, 2 min): a release gives four histograms of Adult at once: age group, sex,
# education and income. Each person adds 1 to one cell of each histogram. What is the L2 sensitivity
# Δ₂ of the whole release (all the counts of the four histograms as one vector)?
l2_sensitivity = None   # your answer
### BEGIN SOLUTION
l2_sensitivity = np.linalg.norm([1, 1, 1, 1])
### END SOLUTION

# %% tags=["self-check"]
lab.check("12.1")

# %% [markdown]
# Why it matters: for k histograms released together, Laplace noise scales with Δ = k and Gaussian
# noise with Δ₂ = √k. The table compares the standard deviation of the noise on **one count** at
# ε = 1 (δ = 10⁻⁶ for the Gaussian; the analytic σ of section 2). For a few histograms Laplace is better;
# from about ten on, Gaussian noise is smaller, and the gap grows like √k, at the price of δ.

# %%
rows = []
for k in (1, 2, 8, 32, 128):
    rows.append({"histograms released together": k, "L1 sensitivity Δ": k, "L2 sensitivity Δ₂": np.sqrt(k),
                 "Laplace sd (ε = 1)": np.sqrt(laplace_variance(epsilon=1.0, sensitivity=k)),
                 "Gaussian sd (ε = 1, δ = 1e-6)": gaussian_scale(epsilon=1.0, delta=1e-6, sensitivity=np.sqrt(k))})
pd.DataFrame(rows).round(2)

# %% [markdown]
# ## 2. Two calibrations of σ
#
# - **Classical** (Dwork & Roth 2014, Thm A.1): σ = Δ₂·√(2 ln(1.25/δ))/ε gives (ε, δ)-DP, but the
#   proof needs **ε < 1**: for larger ε it promises nothing.
# - **Analytic** (Balle & Wang 2018, Thm 8): the Gaussian mechanism is (ε, δ)-DP exactly when
#   δ ≥ δ(ε) = Φ(Δ₂/(2σ) − εσ/Δ₂) − e^ε·Φ(−Δ₂/(2σ) − εσ/Δ₂), Φ the standard normal distribution
#   function. `gaussian_scale` finds the smallest σ with δ(σ) ≤ δ by bisection; it works for every ε.
#
# `dpexplore.mechanisms.gaussian(value, epsilon=, delta=, sensitivity=, calibration=)` uses the
# analytic σ by default. The chart draws both against ε at δ = 10⁻⁵, Δ₂ = 1; the dashed rule marks
# ε = 0.5.

# %%
epsilons = np.union1d(np.logspace(-1.3, 0.7, 33), [0.5])
calibrations = gplots.calibration_frame(epsilons, delta=1e-5)
gplots.calibration_chart(calibrations, delta=1e-5, epsilon=0.5)

# %% tags=["exercise"]
# Exercise 12.3 (read the chart, 2 min): at ε = 0.5 and δ = 10⁻⁵ (Δ₂ = 1), how many times larger is the
# classical σ than the analytic σ? (Read both curves at the dashed rule; hover over a point for its value,
# or call gaussian_scale.)
sigma_ratio = None   # your answer
### BEGIN SOLUTION
sigma_ratio = (gaussian_scale(epsilon=0.5, delta=1e-5, calibration="classical")
               / gaussian_scale(epsilon=0.5, delta=1e-5))
### END SOLUTION

# %% tags=["self-check"]
lab.check("12.3")

# %% [markdown]
# <details><summary>Where the classical bound loses (open it after the check)</summary>
#
# The classical proof bounds the privacy loss by ε except on an event of probability δ, with a few
# loose inequalities on the way; the analytic calibration computes the exact δ(ε) instead. The gap
# grows at small δ and large ε, and past ε = 1 only the analytic σ is valid at all.
# </details>
#
# A release with the package's Gaussian mechanism: the mean age of Adult, with the ages clipped to the
# schema's public bounds. The sum of clipped ages has sensitivity (upper bound) and the count 1; here
# the count is treated as public to keep the example short (notebook 01 shows how to pay for it).

# %%
low, high = schema["age"].lower, schema["age"].upper
ages = frame["age"].clip(low, high)
noisy_sum = gaussian(float(ages.sum()), epsilon=0.5, delta=1e-6, sensitivity=high, random_state=1)
print(f"true mean age (not private) {ages.mean():.3f}; released {noisy_sum / len(ages):.3f} "
      f"(σ = {gaussian_scale(epsilon=0.5, delta=1e-6, sensitivity=high):.1f} on the sum of {len(ages):,} ages)")

# %% [markdown]
# ## 3. Write the classical Gaussian release
#
# **Exercise 12.2 (implement, graded, 10 min).** Write `my_gaussian(values, epsilon, delta, sensitivity,
# rng)`: the classical Gaussian mechanism on a vector of counts. `values` is a NumPy array of counts,
# `sensitivity` the L2 sensitivity Δ₂ of the whole vector, and ε < 1. Return the released vector (one
# value per count), drawing all randomness from `rng`, a NumPy `Generator`; do not call dpexplore.
#
# `lab.check` grades it twice. It compares the distribution of your releases with the classical
# Gaussian mechanism on count vectors it generates when it runs (a handful of records to 10⁵, counts from
# 0 to 10⁴, several ε, δ and Δ₂): a σ 5 % too small, noise shared between counts, or an exact count
# anywhere are refused, with the reason. Then it runs the privacy audit on neighbouring vectors (one
# more record in one count); the same audit must catch a planted leak, or a pass would mean nothing.

# %% tags=["exercise"]
my_gaussian = None   # your answer: a function (values, epsilon, delta, sensitivity, rng) -> array
### BEGIN SOLUTION
def my_gaussian(values, epsilon, delta, sensitivity, rng):
    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon      # Dwork & Roth Thm A.1
    return np.asarray(values, dtype=float) + rng.normal(0.0, sigma, size=len(values))
### END SOLUTION

# %% tags=["self-check"]
lab.check("12.2")

# %% [markdown]
# <details><summary>What the audit can and cannot see (open it after the check)</summary>
#
# The audit bounds the loss of events that hold in at least about 1 % of its draws. An (ε, δ)
# guarantee allows events of probability around δ = 10⁻⁵ to go beyond e^ε: no audit of a few thousand
# draws sees them. So the audit checks the ε part of the claim; the δ part rests on the calibration,
# which is why the grader also compares your noise with the exact Gaussian distribution.
# </details>
#
# ## 4. What δ is, and what it is not
#
# (ε, δ)-DP asks, for every pair of neighbours D, D′ and every set S of outputs,
#
# $$\Pr[M(D) \in S] \;\le\; e^{\varepsilon}\,\Pr[M(D') \in S] + \delta .$$
#
# A common reading is "M is ε-DP except with probability δ": the privacy loss L = ln p_D(Y)/p_D′(Y)
# of the output Y stays within ε, except on a bad event of probability δ. For the Gaussian mechanism,
# L is itself a random variable, **normal with mean μ = Δ₂²/(2σ²) and variance 2μ** (Balle & Wang
# 2018, §3), so that reading can be checked: compute P[L > ε] and compare it with δ.

# %% tags=["exercise"]
# Exercise 12.4 (predict, then run, 3 min): take the analytic σ for ε = 1, δ = 10⁻⁵ (Δ₂ = 1). The
# probability P[L > ε] that the privacy loss exceeds ε is (a) smaller than δ, (b) equal to δ, or
# (c) larger than δ? Answer with a letter, then run the cell after the check.
tail_versus_delta = None   # your answer: "a", "b" or "c"
### BEGIN SOLUTION
tail_versus_delta = "c"
### END SOLUTION

# %% tags=["self-check"]
lab.check("12.4")

# %% tags=["reveal"]
sigma = gaussian_scale(epsilon=1.0, delta=1e-5)
loss = gaussian_privacy_loss(sigma=sigma)
print(f"analytic σ = {sigma:.3f}; the loss L ~ N({loss.mean():.4f}, {loss.var():.4f})")
print(f"P[L > ε]  = {loss.sf(1.0):.3g}")
print(f"δ(ε)      = {gaussian_delta(sigma=sigma, epsilon=1.0):.3g}  (the δ the calibration promised: 1e-05)")

# %% [markdown]
# <details><summary>Why (open it after you ran the cell)</summary>
#
# δ(ε) = P[L > ε] − e^ε·P[L′ < −ε], where L′ is the loss seen from D′: the exact δ always stays below
# the probability that the loss exceeds ε. An output whose loss is L > ε does not use up all its
# probability: only the part 1 − e^(ε − L) of it exceeds what e^ε allows. The chart below shows it.
# </details>
#
# The over-reading errs the other way too. The slack δ may be spent on outputs that expose a person
# completely: a mechanism that publishes each record **in the clear** with probability δ, and nothing
# otherwise, is (0, δ)-DP (Dwork & Roth 2014, §2.3). On Adult:

# %%
n = len(frame)
for delta in (1e-5, 1e-3):
    print(f"δ = {delta:g}: {n * delta:.2f} of the {n:,} people published in the clear on average, "
          f"and still (0, δ)-DP")
print(f"hence the rule of thumb δ ≪ 1/n = {1 / n:.1e}")

# %% [markdown]
# ### The privacy-loss distribution
#
# The chart: the density of L for σ = 1 (a small σ, so that the areas are visible). The pale area is
# P[L > ε]; the dark area inside it, under (1 − e^(ε − L)) times the density, is exactly δ(ε)
# (Balle & Wang 2018, §3). The dark area is what the definition charges; the pale one is what the
# over-reading claims.

# %%
loss_frame, areas = gplots.loss_distribution_frame(sigma=1.0, epsilon=1.0)
gplots.loss_distribution_chart(loss_frame, areas)

# %% [markdown]
# ## 5. δ in the budget accountant
#
# The accountant of notebook 01 adds up ε. For (ε, δ) mechanisms it holds a **δ budget** too:
# `BudgetAccountant(epsilon, delta=...)`. Each spend records its δ in a `delta` column of the ledger,
# and the δ's add up (basic composition, Dwork & Roth 2014, Thm 3.16). A spend that would exceed
# either budget is refused **before** any noise is drawn. `gaussian(..., accountant=acc)` spends
# (ε, δ); a Laplace release spends δ = 0. An accountant made without `delta` is pure ε-DP: its ledger
# has no δ column, and it refuses every δ > 0. Every method of the package except this mechanism is
# pure ε-DP and spends no δ.

# %%
acc = BudgetAccountant(1.0, delta=1e-5)
released = gaussian(frame["sex"].value_counts().reindex(schema["sex"].categories, fill_value=0).to_numpy(),
                    epsilon=0.4, delta=4e-6, sensitivity=1.0, accountant=acc, random_state=2)
count = laplace(len(frame), epsilon=acc.spend(0.1, "record count"), random_state=2)
print(acc)
acc.ledger

# %%
pure = BudgetAccountant(1.0)
try:
    gaussian(10.0, epsilon=0.4, delta=4e-6, accountant=pure, random_state=0)
except BudgetExceededError as refused:
    print("refused:", refused)
print("ledger columns of a pure accountant:", list(pure.ledger.columns), "· spends:", pure.n_spends)

# %% tags=["exercise"]
# Exercise 12.5 (predict, then run, 3 min): an accountant holds ε = 1 and δ = 10⁻⁵. How many Gaussian
# releases at ε = 0.1 and δ = 3·10⁻⁶ each can it pay for before it refuses one? Predict, then run the
# cell after the check.
gaussian_releases = None   # your answer
### BEGIN SOLUTION
gaussian_releases = 3
### END SOLUTION

# %% tags=["self-check"]
lab.check("12.5")

# %% tags=["reveal"]
acc = BudgetAccountant(1.0, delta=1e-5)
for i in range(1, 11):
    try:
        gaussian(0.0, epsilon=0.1, delta=3e-6, accountant=acc, random_state=i)
    except BudgetExceededError as refused:
        print(f"release {i} refused: {refused}")
        break
acc.ledger

# %% [markdown]
# <details><summary>Which budget ran out (open it after you ran the cell)</summary>
#
# ε would allow ten releases, δ only three: 3 × 3·10⁻⁶ = 9·10⁻⁶ fits in 10⁻⁵, a fourth would make
# 1.2·10⁻⁵. The accountant refuses the fourth before drawing its noise, and the ledger shows both the
# ε and the δ of each release. A tighter accounting of many Gaussian releases (zCDP) is notebook 13's
# subject.
# </details>
#
# ## 6. Explorer: the Gaussian mechanism
#
# - **ε** (log scale, 0.05 to 5): the ε of the guarantee. The classical curve stops at ε = 1.
# - **δ** (log scale, 10⁻¹⁰ to 10⁻¹): the δ of the guarantee; σ grows slowly as δ shrinks.
# - **L2 sensitivity Δ₂** (0.5 to 5): every σ is proportional to it.
#
# Top: σ of both calibrations against ε, the current ε marked. Bottom: the privacy-loss density of the
# analytic σ at the current settings, with P[L > ε] (pale) and δ(ε) (dark). The line above the charts
# gives both numbers. Set δ = 10⁻¹ and ε = 0.5 to see the two areas clearly; at δ = 10⁻⁵ both are thin
# slivers in the tail, and P[L > ε] is still many times δ.

# %%
gaussian_explorer = GaussianExplorer(epsilon=1.0, delta=1e-5, sensitivity=1.0)
gaussian_explorer.widget

# %% [markdown]
# ## Summary
#
# - Gaussian noise is calibrated to the L2 sensitivity Δ₂ ≤ Δ: it wins when one person touches many
#   answers released together, and pays with δ > 0.
# - The classical σ = Δ₂√(2 ln(1.25/δ))/ε holds for ε < 1 only; the analytic σ (Balle & Wang 2018) is
#   exact, smaller, and valid for every ε.
# - δ is not "the probability that the ε bound fails": the loss exceeds ε more often than δ, and δ
#   counts each such output only by its excess 1 − e^(ε − L). Conversely δ may hide a total exposure
#   of a few people, so δ ≪ 1/n.
# - The accountant records δ where a mechanism spends it and refuses a spend over either budget;
#   pure-ε accountants and methods stay pure.
#
# Next: **[13_composition](13_composition.ipynb)** adds up many mechanisms without adding up their ε.
