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
# # 09 · Big tables: ten million rows from Parquet, with DuckDB and Spark
#
# The earlier notebooks hand a pandas DataFrame of 45,222 people to each method. Real tables live in
# Parquet files, databases and Spark clusters, with millions to billions of rows, and do not fit in
# memory. This notebook releases a **10-million-row** table that never enters Python whole.
#
# ## What you will learn
#
# - why every histogram method of dpexplore (PrivPfC, DiffMulti, DiffGen, projected histograms,
#   naive Bayes, the count-based feature scores) needs only **one count table**: the exact counts
#   of the occupied (leaf cell × class) combinations, whose size is bounded by the public domain and
#   not by the number of rows;
# - how to point a method at the data **where it lives** — `dpexplore.sources.parquet(...)`,
#   `.csv(...)`, `.duckdb(...)`, `.spark(...)` — and call `PrivPfC(...).fit(source)`: the engine
#   builds the count table by one group-by, out of core;
# - where the time goes: reading and counting the rows against the fit once the table exists, and
#   how that compares with the in-memory pandas path `fit(X, y, schema)`;
# - whether the release depends on the engine: the same table, schema and seed through pandas,
#   DuckDB and Spark, and the ledger each charges;
# - why the count table's size (and the record count) are **private** on real data, and what
#   happens to the guarantee when one person appears many times (group privacy).
#
# The table is **generated on this machine** (Adult resampled with NumPy) the first time the
# notebook runs, into a cache folder; later runs reuse those files, and the first cell of section 1
# says which of the two happened. Nothing is downloaded and nothing is shipped. With
# `DPEXPLORE_QUICK=1` (CI) it has 1 million rows instead of 10 million. The exercises have an
# *exercise* cell where you type an answer and a *self-check* cell that says whether it is right (it
# never shows the answer).

# %%
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import altair as alt
from tqdm.auto import tqdm

import dpexplore.plots  # noqa: F401  (its offline renderer draws the charts, even before a run)
from dpexplore import lab, sources
from dpexplore.config import quick
from dpexplore.counts import CountTable
from dpexplore.datasets import load_adult
from dpexplore.publish.privpfc import PrivPfC, describe_grid

# The one warning these cells expect: PySpark's FutureWarning that it does not yet fully support
# the installed pandas (section 6 only reads Parquet and counts). Privacy warnings are never filtered.
warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)

ROWS = 1_000_000 if quick() else 10_000_000     # rows of the big table
CHUNK = 1_000_000                                # rows per Parquet file (what NumPy holds at once)
SPARK_ROWS = 100_000 if quick() else 200_000     # a smaller sample for the Spark cell (JVM start dominates)
SEED = 2026
FOLDER = Path(tempfile.gettempdir()) / "dpexplore-09-big-tables" / f"{ROWS}-rows-seed{SEED}"

adult, schema = load_adult()
print(f"{ROWS:,} rows live in {FOLDER} (a cache on this machine: written by the first run, reused by later runs)")


# %% [markdown]
# ## 1. A big table on disk
#
# We resample Adult: each row of the big table is a row of Adult drawn at random with replacement
# (NumPy's `Generator.integers`), one million rows at a time, and each million is written to its own
# Parquet file by DuckDB. Only one chunk is ever in memory. A later run finds the files in the cache
# and skips this step: the line under the next cell says whether the files were generated now or
# reused. A separate small file of `SPARK_ROWS` rows, drawn the same way, feeds the Spark section.
#
# Resampled rows are copies of Adult's people, so this is a table to measure *speed* on, not a new
# population: it has no more distinct records than Adult, and each person of Adult appears in it
# many times.

# %%
def write_parquet(frame, path, con):
    con.register("chunk", frame)
    con.execute(f"COPY (SELECT * FROM chunk) TO '{path}' (FORMAT parquet)")
    con.unregister("chunk")


def generate(folder, rows, seed):
    """Adult resampled to `rows` rows, as Parquet files of CHUNK rows (cached)."""
    done = folder / "_complete"
    if done.exists():
        return "reused from the cache"
    if folder.exists():
        shutil.rmtree(folder)          # an interrupted earlier run
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    writer = duckdb.connect()
    for i, start in enumerate(tqdm(range(0, rows, CHUNK), desc="writing Parquet files", unit="file")):
        n = min(CHUNK, rows - start)
        write_parquet(adult.iloc[rng.integers(0, len(adult), n)].reset_index(drop=True),
                      folder / f"part-{i:03d}.parquet", writer)
    write_parquet(adult.iloc[rng.integers(0, len(adult), SPARK_ROWS)].reset_index(drop=True),
                  folder / "spark-sample.parquet", writer)
    done.write_text("ok")
    return "generated"


t0 = time.perf_counter()
status = generate(FOLDER, ROWS, SEED)
parts = sorted(FOLDER.glob("part-*.parquet"))
on_disk = sum(p.stat().st_size for p in parts)
took = (f"generated now in {time.perf_counter() - t0:.1f} s" if status == "generated"
        else "reused from the cache (generated by an earlier run of this notebook)")
print(f"the table: {took}; {len(parts)} Parquet files, {on_disk / 2**20:,.0f} MiB on disk")

# %% [markdown]
# **Exercise 09.1 (compute, 3 min).** Adult has 45,222 people. In the full **10-million-row** table,
# how many times does each of them appear, on average? If those were real people and the release
# below spent **ε = 1 per row**, at what ε would such an average person be protected? (Group
# privacy: k records of one person cost kε.) Type that ε.

# %% tags=["exercise"]
eps_per_person = None   # your answer: a number
### BEGIN SOLUTION
eps_per_person = 10_000_000 / len(adult) * 1.0
### END SOLUTION

# %% tags=["self-check"]
lab.check("09.1")

# %% [markdown]
# <details><summary>What that ε means (open it after the check)</summary>
#
# About 221 copies per person, so about **221ε**: a release at ε = 1 per row says almost nothing
# about a person copied that often.
# </details>
#
# Here it does not matter (the rows are public Adult data, copied to measure speed), but on a real
# table where one person has many rows — visits, transactions, log lines — cap each person's rows
# before counting and divide ε (notebook 08), or state that the guarantee is per row.

# %% [markdown]
# How big would this table be as a pandas DataFrame? Adult's own DataFrame tells us the memory per
# row; ten million rows would need several gigabytes, more than a laptop wants to hold just to count
# them.

# %%
per_row = adult.memory_usage(deep=True).sum() / len(adult)
print(f"as a pandas DataFrame: about {per_row:.0f} bytes per row, so about {per_row * ROWS / 2**30:.1f} GiB "
      f"for {ROWS:,} rows (against {on_disk / 2**20:,.0f} MiB of compressed Parquet)")

# %% [markdown]
# ## 2. Release it with DuckDB
#
# `sources.parquet(glob, schema)` describes the data where it lives; nothing is read yet. The schema
# is Adult's public schema: it names the target (`income`) and every attribute's domain and taxonomy.
# Its repr shows only public facts (the engine and the schema), never the number of records.
# The optional `connection` is a DuckDB database to run in (here an in-memory one whose own
# progress bar is switched off, since we draw ours).

# %%
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
source = sources.parquet(str(FOLDER / "part-*.parquet"), schema, connection=con)
source


# %% [markdown]
# The release has three steps; the progress bar moves from one to the next.
#
# 1. **Count table.** DuckDB checks every value against the public schema (a value outside its
#    domain, an unknown category or class, a missing value: the same error as `fit(X, y, schema)`,
#    raised before any ε is spent), computes each attribute's taxonomy leaf from the schema (numeric
#    bins, categories) *inside the database*, and runs **one group-by** over (leaf codes × class).
#    It streams the Parquet files on every core; Python receives only the grouped counts.
# 2. **PrivPfC fit** on the count table: a noisy record count, the exponential mechanism's choice of
#    a grid, Laplace noise on that grid's counts (notebook 02), ε = 1 in total.
# 3. **Post-processing:** the released noisy histogram as a table (free: it uses the release only).

# %%
def run_steps(steps, desc):
    """Run named steps under one progress bar; return {step: seconds}."""
    seconds, results = {}, {}
    with tqdm(total=len(steps), desc=desc, unit="step") as bar:
        for name, step in steps.items():
            bar.set_postfix_str(name)
            t = time.perf_counter()
            results[name] = step()
            seconds[name] = time.perf_counter() - t
            bar.update()
    return seconds, results


model = PrivPfC(epsilon=1.0, random_state=SEED)
duck_seconds, duck_results = run_steps({
    "count table (DuckDB)": source.count_table,
    "fit after table": lambda: model.fit(source),
    "noisy histogram": model.noisy_histogram,
}, desc=f"release of {ROWS:,} rows")
pd.Series(duck_seconds, name="seconds").round(2).to_frame()

# %% [markdown]
# The fit works on the cells of the count table, never on rows: once the table is counted, its cost
# no longer depends on the number of rows (section 4 compares it with a 1M-row fit). The chosen grid
# and the first cells of the released histogram:

# %%
print("grid:", describe_grid(list(model.grid_.values()), list(model.grid_)))
duck_results["noisy histogram"].head()

# %% [markdown]
# Is the release useful? Its classifier predicts from the noisy counts alone; scored on Adult's
# original rows (public teaching data, **not a private measurement**). This accuracy is
# **in-sample**: every row of the big table is a copy of one of these Adult rows, so the release is
# scored on the very people it was fitted on, and on new people it would be lower (notebook 07
# measures accuracy on held-out rows).

# %%
X_adult, y_adult = adult[schema.predictors], adult[schema.target]
print(f"accuracy on Adult's rows: {model.score(X_adult, y_adult):.3f} "
      f"(always answering '{schema.classes[0]}': {(y_adult == schema.classes[0]).mean():.3f})")

# %% [markdown]
# ## 3. How big is the count table?
#
# The count table holds one entry per **occupied** cell: a combination of taxonomy leaves (one per
# predictor) and a class that at least one record falls in. Its size is at most the number of rows
# *and* at most the number of cells of the public domain, whichever is smaller, so it stops growing
# once the rows outnumber the distinct records.
#
# > **Why this is printed here and never on real data.** The record count and the number of occupied
# > cells are computed from the private rows without noise. On a real table they reveal something
# > about the people in it (one more person in a rare combination adds a cell), so dpexplore never
# > prints them: the count table's repr shows only the schema, and the methods pay ε for the record
# > count they need (the ledger below). This table is generated from public data, so we may look.

# %%
table = duck_results["count table (DuckDB)"]
adult_table = CountTable.from_frame(X_adult, y_adult, schema)
domain_cells = float(np.prod(table.leaf_shape, dtype=float)) * schema.n_classes
sizes = pd.DataFrame({
    "table": ["Adult", f"resampled, {ROWS:,} rows"],
    "rows": [f"{adult_table.n_records:,}", f"{table.n_records:,}"],
    "occupied cells": [f"{adult_table.n_occupied:,}", f"{table.n_occupied:,}"],
    "count table MiB": [sum(a.nbytes for a in (*t.leaf_codes.values(), t.class_codes, t.counts)) / 2**20
                        for t in (adult_table, table)],
})
print(f"cells of the public domain (leaves of every taxonomy × classes): {domain_cells:.2e}")
sizes.round(2)

# %%
footprint = pd.DataFrame({
    "form": ["pandas DataFrame (estimated)", "Parquet files on disk", "count table in memory"],
    "MiB": [per_row * ROWS / 2**20, on_disk / 2**20, sizes["count table MiB"].iloc[1]],
    "from": 0.1,                              # a log axis has no 0: bars start at 0.1 MiB
})
decades = [10.0 ** k for k in range(-1, int(np.ceil(np.log10(footprint["MiB"].max()))) + 1)]
log_x = alt.Scale(type="log", domain=[decades[0], decades[-1]])
bars = alt.Chart(footprint).mark_bar().encode(
    x=alt.X("from:Q", scale=log_x, title="MiB (log scale)", axis=alt.Axis(values=decades, format=",~g")),
    x2=alt.X2("MiB:Q"),
    y=alt.Y("form:N", sort=None, title=None),
    color=alt.Color("form:N", legend=None),
    tooltip=[alt.Tooltip("form:N"), alt.Tooltip("MiB:Q", format=",.1f")])
labels = alt.Chart(footprint).mark_text(align="left", dx=4).encode(
    x=alt.X("MiB:Q", scale=log_x), y=alt.Y("form:N", sort=None),
    text=alt.Text("MiB:Q", format=",.1f"))
(bars + labels).properties(title=f"{ROWS:,} rows in three forms (NOT private: generated data)", width=420, height=110)

# %% [markdown]
# Millions of rows become a few tens of thousands of cells: the methods work on those, in memory.
# On a real table with more distinct records the count table is larger, but it can never exceed the
# rows or the domain. A method that needs other bins than the taxonomies' leaves asks the same engine
# for one more group-by (the projected histogram's equal-width bins). DiffMulti instead works at the
# leaves' resolution: on a count table each numeric value becomes one representative value of its
# taxonomy leaf, so its private split points can differ from a fit on the raw rows — a fixed, public
# coarsening of every record, so the release stays ε-DP. (Logistic regression and the private ROC over
# model scores truly need the records; they keep their record path.)

# %% [markdown]
# ## 4. Against the pandas path
#
# The pandas path reads the rows into a DataFrame first, then `fit(X, y, schema)` computes the leaf
# codes and counts with NumPy and fits. We time it on the first Parquet file (1 million rows; a
# 10-million-row DataFrame would need the gigabytes estimated above), and time DuckDB on the same
# file. (The file is read into pandas with DuckDB too: `pandas.read_parquet` would need pyarrow.)

# %%
first = str(parts[0])
loaded = {}                                  # the DataFrame, kept between the two steps
pandas_model = PrivPfC(epsilon=1.0, random_state=SEED, schema=schema)
pandas_seconds, _ = run_steps({
    "read into pandas": lambda: loaded.update(frame=con.read_parquet(first).df()),
    "fit(X, y, schema): count + fit": lambda: pandas_model.fit(loaded["frame"][schema.predictors],
                                                               loaded["frame"][schema.target]),
}, desc="pandas path, 1M rows")

one_file = sources.parquet(first, schema, connection=con)
small_model = PrivPfC(epsilon=1.0, random_state=SEED)
small_seconds, small_results = run_steps({
    "count table (DuckDB)": one_file.count_table,
    "fit after table": lambda: small_model.fit(one_file),
}, desc="DuckDB path, 1M rows")
loaded.clear()                               # free the DataFrame

# %% [markdown]
# **Exercise 09.2 (predict, then run, 2 min).** Same 1M rows, same schema, same seed: will the pandas
# release and the DuckDB release be identical — the same grid and the same noisy counts? Answer
# "yes" or "no", then run the next cell.

# %% tags=["exercise"]
engines_identical = None   # your answer: "yes" or "no"
### BEGIN SOLUTION
engines_identical = "yes"
### END SOLUTION

# %% tags=["self-check"]
lab.check("09.2")

# %% tags=["reveal"]
same = (small_model.grid_ == pandas_model.grid_ and np.array_equal(small_model.counts_, pandas_model.counts_)
        and small_model.n_hat_ == pandas_model.n_hat_)
print(f"pandas and DuckDB releases of the same 1M rows identical (grid, noisy count, noisy histogram): {same}")

# %% [markdown]
# <details><summary>Why (open it after you ran the cell)</summary>
#
# Identical: both engines build the same count table, and the fit draws its noise from the same seed
# in the same order — the engine only changes where the counting happens, not what is released.
# </details>


# %%
def stage_rows(path, seconds):
    return pd.DataFrame({"path": path, "stage": list(seconds), "seconds": list(seconds.values())})


stages = ["read into pandas", "fit(X, y, schema): count + fit", "count table (DuckDB)", "fit after table"]
timing = [stage_rows("pandas, 1M rows", pandas_seconds), stage_rows("DuckDB, 1M rows", small_seconds)]
if ROWS != CHUNK:   # in quick mode the big table is one 1M-row file: already measured
    timing.append(stage_rows(f"DuckDB, {ROWS // 1_000_000}M rows",
                             {k: v for k, v in duck_seconds.items() if k in stages}))
timing = pd.concat(timing, ignore_index=True)
timing["stage_order"] = timing["stage"].map(stages.index)
alt.Chart(timing).mark_bar().encode(
    x=alt.X("sum(seconds):Q", title="seconds (this machine)"),
    y=alt.Y("path:N", sort=None, title=None),
    color=alt.Color("stage:N", sort=stages, scale=alt.Scale(domain=stages), title="stage"),
    order=alt.Order("stage_order:Q"),
    tooltip=["path", "stage", alt.Tooltip("seconds:Q", format=".2f")],
).properties(
    title="Time to release with PrivPfC (ε = 1)", width=420, height=110)

# %%
rows_of = {"pandas, 1M rows": CHUNK, "DuckDB, 1M rows": CHUNK, f"DuckDB, {ROWS // 1_000_000}M rows": ROWS}
summary = timing.groupby("path", sort=False)["seconds"].sum().rename("total s").to_frame()
summary["million rows per second"] = [rows_of[p] / 1e6 / s for p, s in summary["total s"].items()]
fits = timing[timing.stage.isin(["fit after table"])].set_index("path")["seconds"]
print(f"on the same 1M rows, DuckDB released {summary.loc['pandas, 1M rows', 'total s'] / summary.loc['DuckDB, 1M rows', 'total s']:.1f}× "
      f"faster than the pandas path; the fit after the table took "
      + ", ".join(f"{s:.2f} s ({p})" for p, s in fits.items()))
summary.round(2)

# %% [markdown]
# Read the chart stage by stage: **reading** the rows into a pandas DataFrame, **counting** them into
# the count table, and the **fit** once the table exists.
#
# **Exercise 09.3 (interpret the chart, 2 min).** In the time chart, which stage takes about the same
# time for 1M and for 10M rows? (a) read into pandas, (b) count table (DuckDB), (c) fit after table.
# Answer with a letter.

# %% tags=["exercise"]
flat_stage = None   # your answer: "a", "b" or "c"
### BEGIN SOLUTION
flat_stage = "c"
### END SOLUTION

# %% tags=["self-check"]
lab.check("09.3")

# %% [markdown]
# <details><summary>The three stages (open it after the check)</summary>
#
# - **Reading** the rows into a pandas DataFrame is a cost of its own, and it needs the memory of
#   the whole DataFrame; DuckDB reads the columnar files in parallel and keeps only the groups.
# - **Counting** grows with the rows for every engine (each row is seen once), but DuckDB streams the
#   files, so its memory does not grow with them (`benchmarks/scale.py` measures peak memory up to
#   100M rows).
# - The **fit after the table** only sees cells: its time does not grow with the rows.
# </details>

# %% [markdown]
# ## 5. The ledger
#
# Which engine counted makes no difference to the privacy accounting: the fit spends its ε on the
# count table exactly as on records. The ledger of the 10-million-row release: 3% of ε on a noisy
# record count (it sets how fine a grid the noise can afford), 37% on the grid selection, 60% on the
# histogram counts (PrivPfC's default split, notebook 02).

# %%
model.ledger_

# %%
print(f"ε spent: {model.epsilon_spent_:g}; noisy record count N̂ = {model.n_hat_:,.0f} "
      f"(true {table.n_records:,}: printed only because the data are generated)")

# %% [markdown]
# ## 6. Spark
#
# On a cluster, `sources.spark(spark_dataframe, schema)` runs the same checks and group-by on the
# executors; the driver receives the grouped counts. Here Spark runs in **local mode** on this
# machine (`sources.local_spark_session()`), on the small sample file, because starting the Java
# virtual machine alone takes several seconds. It needs PySpark and Java: the cell below says how to
# install them when they are missing. (`local_spark_session` keeps Spark's start-up log quiet: only
# errors reach the notebook.)

# %%
try:
    spark = sources.local_spark_session("dpexplore-09", "local[*]")
    spark.sparkContext.setLogLevel("ERROR")
except (ImportError, RuntimeError) as err:
    spark = None
    print(f"Spark is not available here: {err}")
    print("To run this section: pip install 'dpexplore[spark]' and a Java runtime (JDK 17, e.g. "
          "apt-get install openjdk-17-jre-headless, or set JAVA_HOME), then restart the kernel.")

# %%
if spark is not None:
    sample = str(FOLDER / "spark-sample.parquet")
    spark_model, check_model = PrivPfC(epsilon=1.0, random_state=SEED), PrivPfC(epsilon=1.0, random_state=SEED)
    spark_seconds, _ = run_steps({
        "Spark: read + count table + fit": lambda: spark_model.fit(sources.spark(spark.read.parquet(sample), schema)),
        "DuckDB: count table + fit": lambda: check_model.fit(sources.parquet(sample, schema, connection=con)),
    }, desc=f"{SPARK_ROWS:,} rows")
    same = spark_model.grid_ == check_model.grid_ and np.array_equal(spark_model.counts_, check_model.counts_)
    print(pd.Series(spark_seconds, name="seconds").round(2).to_string())
    print(f"Spark and DuckDB releases of the same {SPARK_ROWS:,} rows identical: {same}")
    spark.stop()

# %% [markdown]
# Spark pays for its start-up and its scheduling on a table this small; it earns its keep on tables
# spread over many machines, where DuckDB on one machine cannot reach. Either way the release and
# the ledger are the same.
#
# ## Other places data can live
#
# The same `fit(source)` works for every source, and for DiffMulti (at the leaves' resolution for
# numeric values, section 3), DiffGen, ProjectedHistogram, PrivateNaiveBayes and the count-based
# feature selectors:
#
# ```python
# sources.csv("exports/people-*.csv.gz", schema)                     # CSV, compressed, globs (DuckDB)
# sources.duckdb("SELECT * FROM people WHERE year = 2024", schema,   # any SQL query or relation
#                connection=duckdb.connect("warehouse.duckdb"))
# sources.pandas(frame, schema)                                      # a DataFrame in memory (NumPy)
# sources.spark(spark.table("people"), schema)                       # a Spark table
# ```
#
# ## Take-aways
#
# - Histogram methods need counts, not rows: the **count table** is their sufficient statistic, and
#   its size is bounded by the public domain.
# - `dpexplore.sources` computes it **where the data lives** (DuckDB out of core, Spark on a
#   cluster); after that, the fit's cost does not depend on the number of rows.
# - The engine changes the speed, **not the release**: same table, schema and seed give the same
#   grid, the same noisy counts and the same ledger.
# - The record count and the count table's size are **private** on real data: this notebook prints
#   them only because its table is generated.
# - ε protects one **row**: a person with k rows is protected at kε. Resampling Adult copies each
#   person about 221 times, and its accuracy on Adult's rows is in-sample.
#
# ## Clean up
#
# The generated files stay in the cache folder for the next run; delete them with the cell below.

# %%
# shutil.rmtree(FOLDER.parent)   # uncomment to delete the generated Parquet files
print(f"cache: {FOLDER.parent}")
