"""Checks of notebook 09, big tables: group privacy (Dwork & Roth 2014, §2.3) for a resampled
table, and the engine-independence of a release built from a count table (PrivPfC, Su et al. 2018).
"""
from __future__ import annotations

from functools import lru_cache

from ._core import choice, close, exercise, right_if, right_option

BIG_TABLE_ROWS = 10_000_000    # notebook 09's full-size table (1M in quick mode; the exercise asks about 10M)


@exercise("09.1", answer="eps_per_person",
          hints=("In the big table one person appears many times: how many copies of an average person are there?",
                 "Divide the rows of the big table by Adult's number of people to get the copies k; k records of "
                 "one person cost kε."),
          why="{rows:,} / {people:,} ≈ {copies:.0f} copies, so ε = 1 per row protects such a person only at about "
              "{copies:.0f}: group privacy.")
def epsilon_per_person(answer):
    from ..datasets import load_adult

    people = len(load_adult()[0])
    copies = BIG_TABLE_ROWS / people
    return right_if(close(answer, copies * 1.0), rows=BIG_TABLE_ROWS, people=people, copies=copies)


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


@exercise("09.2", answer="engines_identical",
          hints=("Ask what the fit actually sees: rows, or a count table?",
                 "And where does its randomness come from?"),
          why="both engines build the same count table and the fit draws its noise from the same seed, so the grid, "
              "the noisy record count and the noisy counts are {outcome}.")
def engines_identical(answer):
    agree = _engines_agree()
    return right_if(choice(answer, *(("yes", "identical") if agree else ("no", "different"))),
                    outcome="identical" if agree else "different")


STAGES = {"a": "read into pandas", "b": "count table (DuckDB)", "c": "fit after table"}   # as in the notebook
_FLAT_STAGE = ("1f5c2a0e92ec91cafd4b0fff", "6a7669291bf6ee751f4171e3", "56827a204101dacbc52f7d2c")


@exercise("09.3", answer="flat_stage",
          hints=("Which stage works on the count table's cells rather than on the rows?",
                 "Compare the 1M and 10M DuckDB bars stage by stage."),
          why="{stage}: after the count table exists the fit only sees cells, and there are no more cells in 10M "
              "resampled rows than in 1M: its time does not grow with the rows.")
def flat_stage(answer):
    stage = right_option(answer, "09.3", _FLAT_STAGE, STAGES)
    return right_if(stage is not None, stage=stage)
