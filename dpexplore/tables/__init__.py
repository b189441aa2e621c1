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

What is private and what is not: :func:`build_schema` and :func:`release` never refuse a table
for its number of rows or classes, and their messages name a column and a rule, never a value;
the shareable summary holds released values only. :func:`draft_schema` (domains read from the
data, flagged), :func:`check_table` (offending values and rows) and the utility file written by
:func:`export_release` are NOT private: for the data owner, on their own machine.
"""
from ._common import (EPSILON_RANGE, FEW_RECORDS, HIGH_CARDINALITY, FewRecordsWarning, HighCardinalityWarning,
                      InputError, check_epsilon_range, show)
from .draft import (CHECK_COLUMNS, DRAFT_COLUMNS, build_schema, check_table, declare, draft_schema, parse_cuts,
                    parse_groups)
from .export import UTILITY_DECIMALS, export_release, ledger_table, summary_markdown, synthetic_csv, utility_markdown
from .read import read_table, select_columns
from .release import (DEFAULT_MARGINAL_SHARE, MAX_SYNTHETIC_ROWS, METHODS, ReleaseResult, column_sources,
                      grid_occupancy, method_name, release)

__all__ = ["InputError", "HighCardinalityWarning", "FewRecordsWarning", "EPSILON_RANGE", "HIGH_CARDINALITY",
           "FEW_RECORDS", "check_epsilon_range", "show", "read_table", "select_columns", "DRAFT_COLUMNS",
           "CHECK_COLUMNS", "check_table", "draft_schema", "declare", "build_schema", "parse_cuts", "parse_groups",
           "METHODS", "method_name", "MAX_SYNTHETIC_ROWS", "DEFAULT_MARGINAL_SHARE",
           "ReleaseResult", "release", "column_sources", "grid_occupancy", "ledger_table", "summary_markdown", "utility_markdown", "UTILITY_DECIMALS",
           "synthetic_csv", "export_release"]
