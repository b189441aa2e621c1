"""An analyst's own table, scripted without widgets: read → draft → declare → build → release → export.

>>> from dpexplore import tables
>>> frame = tables.read_table("my_table.csv.gz", drop=["notes"])          # doctest: +SKIP
>>> draft, notes = tables.draft_schema(frame, "readmitted")               # doctest: +SKIP
>>> draft = tables.declare(draft, "n_visits", lower=0, upper=40, cuts="long-tail")  # doctest: +SKIP
>>> schema, encoded, leaks = tables.build_schema(frame, draft)            # doctest: +SKIP
>>> result = tables.release(encoded, schema, "PrivPfC", 1.0, leaks=leaks) # doctest: +SKIP
>>> tables.export_release(result, ".")                                    # doctest: +SKIP

One module per job: :mod:`.read` (CSV, CSV.gz, Parquet; columns), :mod:`.draft` (the public
schema), :mod:`.release` (the release and how each column was produced), :mod:`.export` (summary
and files). :class:`dpexplore.widgets.your_data.YourDataApp` is a thin widget over these.
"""
from ._common import (EPSILON_RANGE, HIGH_CARDINALITY, HighCardinalityWarning, InputError, check_epsilon_range,
                      show)
from .draft import DRAFT_COLUMNS, build_schema, check_table, declare, draft_schema, parse_cuts, parse_groups
from .export import export_release, ledger_table, summary_markdown, synthetic_csv
from .read import read_table, select_columns
from .release import (DEFAULT_MARGINAL_SHARE, MAX_SYNTHETIC_ROWS, METHODS, MIN_ROWS, ReleaseResult, column_sources,
                      grid_occupancy, release)

__all__ = ["InputError", "HighCardinalityWarning", "EPSILON_RANGE", "HIGH_CARDINALITY", "check_epsilon_range", "show",
           "read_table", "select_columns", "DRAFT_COLUMNS", "check_table", "draft_schema", "declare",
           "build_schema", "parse_cuts", "parse_groups", "METHODS", "MIN_ROWS", "MAX_SYNTHETIC_ROWS",
           "DEFAULT_MARGINAL_SHARE", "ReleaseResult", "release", "column_sources", "grid_occupancy",
           "ledger_table", "summary_markdown", "synthetic_csv", "export_release"]
