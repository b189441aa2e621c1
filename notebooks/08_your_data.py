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
# # 08 · Your data: from a CSV file to a private synthetic table
#
# ## What you will learn
#
# - the analyst's path with a table dpexplore has never seen: **load** a CSV, **pick the target**,
#   **declare the public schema**, **choose a method and ε**, **release**, **download**;
# - why the schema must be *public*: bounds, category lists and class labels read from the private
#   table leak information that no ε pays for (dpexplore flags them with a `PrivacyLeakWarning`);
# - how numeric columns get their taxonomy: **equal-width nesting** over the declared bounds;
# - what dpexplore does with bad input: a readable message, and nothing released.
#
# This notebook runs unattended on a table it generates itself; with your own file, use the upload
# button (or type a path) in the app of section 2.

# %%
import tempfile
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from dpexplore.widgets.your_data import (METHODS, InputError, YourDataApp, build_schema, draft_schema,
                                         read_table, release, summary_markdown)
from dpexplore.plots.your_data import ledger_chart, marginal_chart, utility_chart
from dpexplore.plots.mechanisms import enable_jupyterlab_renderer

enable_jupyterlab_renderer()   # charts drawn offline by JupyterLab and Voilà, without a CDN

# %% [markdown]
# ## 1. A table nobody has seen
#
# A small "clinic" table: age (integer), a blood-pressure reading (float), smoker (yes/no), a region
# and the target `outcome`. The outcome depends on age, pressure and smoking; region is noise. We
# write it to a CSV file in a temporary folder, exactly as you would save yours.

# %%
rng = np.random.default_rng(2026)
n = 4000
age = rng.integers(18, 91, n)
pressure = np.round(rng.normal(120 + 0.4 * (age - 50), 15), 1)
smoker = np.where(rng.random(n) < 0.3, "yes", "no")
region = rng.choice(["north", "south", "east", "west"], n)
logit = -9 + 0.06 * age + 0.03 * pressure + 1.2 * (smoker == "yes")
outcome = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "ill", "healthy")
clinic = pd.DataFrame({"age": age, "pressure": pressure, "smoker": smoker, "region": region,
                       "outcome": outcome})

folder = Path(tempfile.mkdtemp())
csv_path = folder / "clinic.csv"
clinic.to_csv(csv_path, index=False)
clinic.head()

# %% [markdown]
# ## 2. The app
#
# Read it top to bottom:
#
# 1. **Upload CSV** (or type a **Path** and press **Load**): the file is read; anything that is not a
#    CSV is refused with a message.
# 2. **Target**: the column to predict (the last column by default). Below it, **one row per
#    column**: its *kind* (numeric, categorical, or drop), the *lower* and *upper* bounds of a
#    numeric column, whether it holds *integers*, the *categories* of a categorical column (for the
#    target: the classes), and a **public?** tick. The first draft is read from the data, so every row
#    starts with **⚠ from data**; type the domain you would know *without* looking at the data (or
#    tick *public?* if the drafted one is public knowledge, e.g. ages 0–120) and the flag goes away.
# 3. **Method**, the total budget **ε** (log slider, 0.01 to 10) and **Release**: the method runs on
#    80 % of the rows; the summary shows the budget ledger and the error of the release's classifier
#    on the other 20 % (next to the majority class and a non-private logistic regression: that
#    evaluation is for you, not for publication). Two links download the synthetic table (CSV) and
#    the one-page summary (Markdown).

# %%
app = YourDataApp(epsilon=1.0, method="PrivPfC")
app.load(csv_path)        # what typing the path and pressing Load does
display(app.widget)

# %% [markdown]
# The same steps without clicking (so that this notebook runs by itself): we declare public bounds
# for the two numeric columns (ages 0–120, pressure 60–220 mmHg) and confirm that the categories are
# public knowledge, but leave the target's classes flagged, to show how the warning travels into the
# summary. Then we press **Release**.

# %%
app._rows["age"]["lower"].value, app._rows["age"]["upper"].value = 0.0, 120.0
app._rows["pressure"]["lower"].value, app._rows["pressure"]["upper"].value = 60.0, 220.0
app._rows["smoker"]["public"].value = True
app._rows["region"]["public"].value = True
print("still read from the data:", app.leak_rows())
result = app.release()
print(len(result.synthetic), "synthetic rows released;", "leaks:", result.leaks)

# %% [markdown]
# ## 3. What was released
#
# The synthetic table has the schema's columns; compare its marginals with the original's (a
# private release can only approximate them, and a method that did not refine a column releases it
# as uniform within its public range).

# %%
result.synthetic.head()

# %%
schema = result.schema
charts = [marginal_chart(clinic, result.synthetic, c, lower=schema[c].lower, upper=schema[c].upper)
          if c in schema.numeric else marginal_chart(clinic, result.synthetic, c)
          for c in schema.predictors + [schema.target] if c in result.synthetic.columns]
alt.vconcat(alt.hconcat(*charts[:3]), alt.hconcat(*charts[3:]))

# %%
alt.vconcat(utility_chart(result.utility), ledger_chart(result.ledger))

# %% [markdown]
# The one-page summary (the file behind the second download link):

# %%
display(Markdown(summary_markdown(result, title="Clinic")))

# %% [markdown]
# ## 4. Every method on the same declared schema
#
# The same pure functions the app calls, without widgets: each method at ε = 1, one release each.

# %%
draft, leaks = draft_schema(clinic, "outcome")
draft.loc[draft.column == "age", ["lower", "upper"]] = [0, 120]
draft.loc[draft.column == "pressure", ["lower", "upper"]] = [60, 220]
draft["from_data"] = False          # we declare every domain public
schema, encoded, leaks = build_schema(clinic, draft)
rows = []
for name in METHODS:
    r = release(encoded, schema, name, 1.0, random_state=0)
    u = r.utility.set_index("model")["error"]
    rows.append({"method": name, "synthetic rows": len(r.synthetic), "test error": u.iloc[0],
                 "majority": u["majority class"], "non-private LR": u["non-private logistic regression"],
                 "ε spent": r.ledger["charged"].sum()})
comparison = pd.DataFrame(rows)
comparison.round(3)

# %%
alt.Chart(comparison).mark_bar().encode(
    y=alt.Y("method:N", title=None), x=alt.X("test error:Q", title="test error at ε = 1"),
    tooltip=["method", alt.Tooltip("test error:Q", format=".3f")],
).properties(width=360, height=120) + alt.Chart(comparison.head(1)).mark_rule(color="grey", strokeDash=[4, 3]).encode(
    x="majority:Q") + alt.Chart(comparison.head(1)).mark_rule(color="black").encode(x="non-private LR:Q")


# %% [markdown]
# Grey dashes: majority class; black line: non-private logistic regression.
#
# ## 5. Bad input gets a message, not a traceback
#
# Four mistakes an analyst makes. For each, the app shows its message and **releases nothing**
# (`app.result` stays `None`, no download link).

# %%
def attempt(content: bytes, name: str, tweak=None) -> None:
    trial = YourDataApp()
    trial.load(content, name)
    if tweak:
        tweak(trial)
    trial.release()
    print(f"{name:<18} released: {trial.result is not None!s:<5} message: {trial.last_error}")

with_missing = clinic.astype({"pressure": float}).copy()
with_missing.loc[[3, 10], "pressure"] = np.nan
attempt(with_missing.to_csv(index=False).encode(), "missing.csv")
attempt(clinic.to_csv(index=False).encode(), "declared.csv",
        tweak=lambda t: setattr(t._rows["region"]["kind"], "value", "numeric"))
attempt(clinic.assign(outcome="healthy").to_csv(index=False).encode(), "one_class.csv")
attempt(b"PK\x03\x04\x14\x00\x00\x00\x08\x00 not a table", "clinic.xlsx")

# %% [markdown]
# ## Take-aways
#
# - The guarantee covers the rows, not the schema: declare bounds, categories and classes you would
#   know without the data; whatever is still read from it is listed as a `PrivacyLeakWarning` in the
#   app and in the summary.
# - Numeric columns are clipped to the declared bounds and nested into equal-width intervals: a
#   bound far too wide wastes resolution, one too narrow piles values onto the edges.
# - Utility depends on method and ε; notebook 07 compares every method systematically.
