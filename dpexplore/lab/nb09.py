"""Checks of notebook 09, big tables: group privacy (Dwork & Roth 2014, §2.3) for a resampled
table, and the engine-independence of a release built from a count table (PrivPfC, Su et al. 2018).
"""
from __future__ import annotations

from functools import lru_cache

from ._core import choice, close, exercise

BIG_TABLE_ROWS = 10_000_000    # notebook 09's full-size table (1M in quick mode; the exercise asks about 10M)


@exercise("09.1",
          hint="Divide the rows of the big table by Adult's number of people to get the copies k of an "
               "average person; k records of one person cost kε.",
          why="10,000,000 / 45,222 ≈ 221 copies, so ε = 1 per row protects such a person only at about "
              "221: group privacy.",
          wrong=[1, 45_222, 0.0045, 22.1], right=[221.1, "221", 10_000_000 / 45_222])
def epsilon_per_person(answer) -> bool:
    from ..datasets import load_adult

    people = len(load_adult()[0])
    return close(answer, BIG_TABLE_ROWS / people * 1.0)


@lru_cache(maxsize=1)
def _engines_agree() -> bool:
    """PrivPfC on 1,000 Adult rows (a pool of Θ = 200 grids, for speed): fit(X, y) in pandas and
    fit(source) through DuckDB."""
    import duckdb
    import numpy as np

    from .. import sources
    from ..datasets import load_adult
    from ..publish.privpfc import PrivPfC

    adult, schema = load_adult()
    rows = adult.iloc[:1000]
    in_pandas = PrivPfC(epsilon=1.0, theta=200, random_state=9, schema=schema).fit(rows[schema.predictors],
                                                                                   rows[schema.target])
    connection = duckdb.connect()
    connection.register("adult_rows", rows)
    in_duckdb = PrivPfC(epsilon=1.0, theta=200, random_state=9).fit(
        sources.duckdb("SELECT * FROM adult_rows", schema, connection=connection))
    connection.close()
    return bool(in_pandas.grid_ == in_duckdb.grid_ and np.array_equal(in_pandas.counts_, in_duckdb.counts_)
                and in_pandas.n_hat_ == in_duckdb.n_hat_)


@exercise("09.2",
          hint="Ask what the fit actually sees: rows, or a count table? And where its randomness comes from.",
          why="both engines build the same count table and the fit draws its noise from the same seed, so "
              "the grid, the noisy record count and the noisy counts are identical.",
          wrong=["no", "No.", "maybe"], right=["yes", " Yes", "identical"])
def engines_identical(answer) -> bool:
    return choice(answer, *(("yes", "identical") if _engines_agree() else ("no", "different")))


@exercise("09.3",
          hint="Which stage works on the count table's cells rather than on the rows? Compare the 1M and "
               "10M DuckDB bars stage by stage.",
          why="after the count table exists the fit only sees cells, and there are no more cells in 10M "
              "resampled rows than in 1M: its time does not grow with the rows.",
          wrong=["a", "b", "count table"], right=["c", "(c)", "fit after table"])
def flat_stage(answer) -> bool:
    return choice(answer, "c", "fit after table", "fit after the table")
