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
# # 11 · Randomized response: local differential privacy
#
# Every mechanism of notebook 01 trusts a **curator**: someone who holds the true data and adds the
# noise. Randomized response needs no one to trust: each person adds the noise to their own answer
# before it leaves their hands. It is the oldest differentially private mechanism, older than the
# definition (Warner 1965), and the model behind local DP in browsers and phones. Full references
# are in the [bibliography](../docs/bibliography.md), symbols as in the [glossary](../docs/glossary.md).
#
# ## What you will learn
#
# - **Warner's randomized response**: tell the truth with probability p, else the opposite; why
#   that is ε-DP for each person with **ε = ln(p/(1 − p))**, in the **local model**;
# - the **unbiased estimator** of the share of yes answers from the randomised reports, and its error;
# - how to write randomized response yourself, and what the grader checks about it;
# - the price of not trusting anyone: at the same ε, the local estimate's error is about **√n times**
#   the central Laplace count's.

# %%
import math

import numpy as np
import pandas as pd

from dpexplore import lab
from dpexplore.audit import privacy_loss
from dpexplore.config import repetitions
from dpexplore.datasets import load_adult
from dpexplore.mechanisms import (randomized_response, randomized_response_epsilon, randomized_response_estimate,
                                  randomized_response_probability, randomized_response_variance)
from dpexplore.plots import local_dp as lplots   # charts drawn offline, even before the notebook runs
from dpexplore.widgets.local_dp import LocalCentralExplorer

frame, schema = load_adult()

# %% [markdown]
# ## 1. Warner's survey
#
# A survey must ask a question that people lie about: "have you ever cheated in an exam?", "do you
# earn more than 50K?". Warner (1965) gave each respondent a spinner that nobody else sees: with
# probability p it lands on "answer the question", otherwise on "answer its opposite". The
# interviewer hears "yes" or "no" and never learns which question was answered. In today's words,
# every person releases
#
# $$\text{report} = \begin{cases} \text{their true answer} & \text{with probability } p,\\
# \text{the opposite} & \text{with probability } 1 - p,\end{cases}$$
#
# with their own coin, independently of everyone else (Dwork & Roth 2014, §3.2, use two fair coins:
# p = 3/4).
#
# **Why it is private.** A "yes" has probability p when the true answer is yes and 1 − p when it is
# no; a "no" the other way round. The two likelihoods of any report differ by the factor
# p/(1 − p), so each person's report is ε-DP with
#
# $$\varepsilon = \ln\frac{p}{1 - p}, \qquad p = \frac{e^{\varepsilon}}{1 + e^{\varepsilon}}.$$
#
# The neighbouring inputs here are one person's two possible answers, and the guarantee holds
# whatever the other people do: this is **local** DP (Kasiviswanathan et al. 2011). No curator ever
# sees a true answer, so there is nothing to leak, subpoena or hack.

# %%
pd.DataFrame({"ε": [0.1, 0.5, 1.0, math.log(3), 2.0, 5.0],
              "p = P[report the truth]": [randomized_response_probability(epsilon=e) for e in
                                          (0.1, 0.5, 1.0, math.log(3), 2.0, 5.0)]}).round(3)

# %% tags=["exercise"]
# Exercise 11.1 (compute, 2 min): a survey's spinner tells the truth with probability p = 0.8.
# At what ε is each respondent protected?
survey_epsilon = None   # your answer
### BEGIN SOLUTION
survey_epsilon = math.log(0.8 / (1 - 0.8))
### END SOLUTION

# %% tags=["self-check"]
lab.check("11.1")

# %% [markdown]
# An audit agrees (notebook 01 explains it): one person's report, 20,000 times with the true
# answer yes and 20,000 times with no, at ε = 1. The estimated privacy loss sits at ε, and its
# lower confidence bound below it.

# %%
def one_report(answer, rng):
    return int(randomized_response([answer], epsilon=1.0, random_state=rng)[0])


audit = privacy_loss(one_report, 1, 0, n_samples=repetitions(20_000, 5_000), random_state=0)
print(f"audit at ε = 1: ε̂ = {audit.epsilon_hat:.3f}, 95% lower bound {audit.epsilon_lower:.3f}, "
      f"violates ε = 1? {audit.violates(1.0)}")

# %% [markdown]
# ## 2. What the reports tell: the unbiased estimator
#
# The reports are noisy on purpose, yet the **share** of yes answers can be recovered. If a
# share π of the people would answer yes, each report is yes with probability
#
# $$\lambda = p\,\pi + (1 - p)(1 - \pi) = (2p - 1)\,\pi + 1 - p,$$
#
# so from the observed share λ̂ of yes reports Warner's estimator is
#
# $$\hat\pi = \frac{\hat\lambda - (1 - p)}{2p - 1}, \qquad
# \operatorname{Var}[\hat\pi] = \frac{p(1 - p)}{n\,(2p - 1)^2}$$
#
# around the n respondents' own share (a random sample of a population adds the sampling variance
# π(1 − π)/n). It is unbiased, and it can fall outside [0, 1]: clipping it would bias it
# (`randomized_response_estimate`, `randomized_response_variance`).

# %% tags=["exercise"]
# Exercise 11.2 (compute, 3 min): 1,000 people answer with two fair coins (p = 3/4, ε = ln 3) and
# 400 of the reports say yes. Estimate the share of people whose true answer is yes.
estimated_share = None   # your answer
### BEGIN SOLUTION
p = 3 / 4
estimated_share = (400 / 1000 - (1 - p)) / (2 * p - 1)
### END SOLUTION

# %% tags=["self-check"]
lab.check("11.2")

# %% [markdown]
# On Adult: every one of the 45,222 people is asked "do you earn more than 50K?" and answers by
# randomized response at ε = 1. The true share is printed for comparison only (not private).

# %%
answers = (frame["income"] == ">50K").to_numpy().astype(int)
reports = randomized_response(answers, epsilon=1.0, random_state=1)
estimate = randomized_response_estimate(reports, epsilon=1.0)
sd = math.sqrt(randomized_response_variance(answers.size, epsilon=1.0))
print(f"true share (not private) {answers.mean():.4f} · share of yes reports {reports.mean():.4f} · "
      f"estimate {estimate:.4f} ± {2 * sd:.4f} (two standard deviations)")
print(f"{np.mean(reports != answers):.1%} of the people reported the opposite of their answer "
      f"(1 − p = {1 - randomized_response_probability(epsilon=1.0):.1%})")

# %% [markdown]
# More than a quarter of the reports are lies, every person can deny their report, and the share is
# still estimated to within a few tenths of a percentage point: the noise averages out over many
# people.
#
# ## 3. Write it yourself: the grader checks the distribution and the privacy
#
# Randomized response is three lines of numpy. The check of the next exercise does not just run
# your function once: it
#
# - compares **whether each person's report is the truth** with the reference (the truth with
#   probability p = e^ε/(1 + e^ε), independently for each person) on surveys it generates when it
#   runs: one person to 100,000, all-yes and all-no surveys, sizes around 1,000, ε from 0.25 to 3,
#   with enough releases to refuse an ε 5 % off;
# - runs the **privacy audit** on pairs of surveys where one person's answer changes, and checks
#   that the same audit flags a planted leak (a "yes" always reported as yes);
# - refuses a function that calls dpexplore's own `randomized_response`.
#
# A pass is evidence, not a proof: the proof is the likelihood ratio p/(1 − p) above.

# %% tags=["exercise"]
# Exercise 11.3 (implement, 10 min): write my_randomized_response(answers, epsilon, rng): answers is
# an array of 0/1 true answers, one per person; return one 0/1 report per person, each the truth
# with probability p = e^ε/(1 + e^ε) and the opposite otherwise. Draw every coin from rng (a numpy
# Generator); use numpy, not dpexplore.
my_randomized_response = None   # your answer: a def of (answers, epsilon, rng) returning the reports
### BEGIN SOLUTION
def my_randomized_response(answers, epsilon, rng):
    answers = np.asarray(answers)
    p = np.exp(epsilon) / (1 + np.exp(epsilon))
    truthful = rng.random(answers.size) < p          # each person's own coin
    return np.where(truthful, answers, 1 - answers)
### END SOLUTION

# %% tags=["self-check"]
lab.check("11.3")

# %% [markdown]
# <details><summary>Common ways to get it wrong (open it after the check)</summary>
#
# - **A random answer instead of the opposite** ("with probability p the truth, otherwise flip a fair
#   coin") tells the truth with probability p + (1 − p)/2: less noise than ε asks for. Fine if p is
#   chosen for it (the *forced response* design: the truth with probability γ = (e^ε − 1)/(e^ε + 1),
#   else a fair coin), a leak if not.
# - **One coin for everybody** makes every report true or every report false together: the
#   reports of the others then reveal whether yours is a lie.
# - **Branches on the data**: exact answers for large surveys, or a yes never randomised, each
#   make some reports certain. The privacy loss of a certain report is infinite, whatever ε says.
# </details>

# %% [markdown]
# ## 4. The price of no curator: local against central
#
# With a trusted curator, the same question costs far less accuracy. The curator counts the yes
# answers and releases the count with Laplace noise of scale 1/ε (one person changes the count by
# at most 1; the number of respondents n is public here, as in the survey). Its estimate of the
# share has standard deviation √2/(εn). Randomized response's is √(p(1 − p))/((2p − 1)√n). The ratio
#
# $$\frac{\text{sd}_\text{local}}{\text{sd}_\text{central}} = \frac{\varepsilon\sqrt{p(1-p)}}{\sqrt2\,(2p - 1)}\,\sqrt n$$
#
# grows like √n: local DP pays for every person's own noise, the curator for one draw. (Any
# local-DP estimate of a share has error of order 1/(ε√n) for small ε, so no cleverer local
# mechanism closes the gap: Duchi, Jordan & Wainwright 2018.)

# %%
ns = np.unique(np.round(np.logspace(2, math.log10(answers.size), 40)).astype(int))
lplots.error_chart(lplots.error_frame(ns, epsilon=1.0), n=1_000, epsilon=1.0)

# %% [markdown]
# ### Explorer: local against central
#
# - **ε**: the privacy budget of each person (log scale, 0.05 to 5), the same for both models.
# - **people n**: how many people of Adult are asked (log scale, 100 to all 45,222).
#
# Each move releases the share of the first n (shuffled) people 100 times with randomized response
# and 100 times with the Laplace count, draws the exact errors against n with the simulated ones
# as points (a square for local, a circle for central), and, below, the histograms of the 100
# estimates of each model around the true share. The line above the chart gives both errors and
# their ratio.

# %%
local_central_explorer = LocalCentralExplorer(answers, epsilon=1.0, n=1_000)
local_central_explorer.widget

# %% tags=["exercise"]
# Exercise 11.4 (compute, 3 min): at ε = 1 and n = 1,000 the explorer shows randomized response's
# error about 21 times the Laplace count's. How many times larger is it with n = 100,000 people
# (more than Adult holds), at the same ε?
error_ratio = None   # your answer
### BEGIN SOLUTION
n = 100_000
error_ratio = math.sqrt(randomized_response_variance(n, epsilon=1.0)) / (math.sqrt(2) / (1.0 * n))
### END SOLUTION

# %% tags=["self-check"]
lab.check("11.4")

# %% [markdown]
# <details><summary>When is local DP worth its price? (open it after the check)</summary>
#
# When there is no one to trust with the raw answers, and n is large enough that an error of order
# 1/(ε√n) is acceptable: usage statistics of millions of browsers or phones (Google's RAPPOR,
# Erlingsson, Pihur & Korolova 2014) rather than a survey of a thousand people. With a curator one
# can trust (a statistics office, a hospital, or cryptography that simulates one), central DP gives
# the same ε with √n times less error; the rest of these notebooks are central.
# </details>

# %% [markdown]
# ## Summary
#
# - Randomized response reports the truth with probability p = e^ε/(1 + e^ε), else its opposite: each
#   person's report is ε-DP on its own (local DP), with no one to trust.
# - The share of yes answers is estimated without bias by (λ̂ − (1 − p))/(2p − 1), with variance
#   p(1 − p)/(n(2p − 1)²).
# - At the same ε, the local estimate's error is about √n times the central Laplace count's: local
#   DP needs many people.
#
# Next: **[12_gaussian](12_gaussian.ipynb)**, the Gaussian mechanism and what (ε, δ) means; or the methods, starting
# with **[02_privpfc](02_privpfc.ipynb)**.
