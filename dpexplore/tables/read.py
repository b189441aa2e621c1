"""Reading the analyst's file: CSV, CSV.gz or Parquet → a DataFrame; picking columns.

Every refusal is an :class:`InputError` with one line saying what to do.
"""
from __future__ import annotations

import csv
import gzip
import io
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from ._common import InputError, show_list

__all__ = ["read_table", "select_columns", "repeated_names"]

TEXT_SUFFIXES = (".csv", ".txt", ".tsv")
PARQUET_SUFFIXES = (".parquet", ".pq")
_GZIP_MAGIC, _PARQUET_MAGIC, _ZIP_MAGIC = b"\x1f\x8b", b"PAR1", b"PK\x03\x04"


def _unwrap_upload(source: Any, name: str | None) -> tuple[Any, str | None]:
    """ipywidgets FileUpload values (7 and 8) → (bytes, file name)."""
    if isinstance(source, (tuple, list)) and source and isinstance(source[0], Mapping):
        source = source[0]  # ipywidgets 8: a tuple of dicts
    if isinstance(source, Mapping) and "content" not in source and len(source) == 1:
        (key, inner), = source.items()  # ipywidgets 7: {name: {"metadata", "content"}}
        if isinstance(inner, Mapping) and "content" in inner:
            source = {"name": key, **inner}
    if isinstance(source, Mapping):
        if "content" not in source:
            raise InputError("the upload has no content: choose the file again")
        return bytes(source["content"]), source.get("name", name)
    return source, name


def _read_parquet(content: bytes, path: Path | None, label: str) -> pd.DataFrame:
    import duckdb

    with tempfile.TemporaryDirectory() as tmp:
        if path is None:
            path = Path(tmp) / "upload.parquet"
            path.write_bytes(content)
        con = duckdb.connect()
        try:
            return con.execute("SELECT * FROM read_parquet(?)", [str(path)]).df()
        except duckdb.Error as exc:
            raise InputError(f"{label} could not be read as Parquet ({str(exc).splitlines()[0]}): "
                             "export it again, or save it as CSV") from None
        finally:
            con.close()


def _header(text: str, sep: str) -> list[str]:
    try:
        return [h.strip() for h in next(csv.reader(io.StringIO(text), delimiter=sep, skipinitialspace=True))]
    except (StopIteration, csv.Error):
        return []


def repeated_names(names: Sequence[Any], among: Sequence[Any] | None = None) -> str:
    """The names that occur more than once in ``names`` (only those in ``among`` when given),
    with their positions (1-based), for a message: "'age' at columns 2, 5"; "" when none."""
    names = list(names)
    dup = [n for n, c in Counter(names).items() if c > 1 and (among is None or n in among)]
    return "; ".join(f"{n!r} at columns {', '.join(str(i + 1) for i, m in enumerate(names) if m == n)}"
                     for n in dup[:3])


def _dedupe(names: list[str], duplicates: str, unused: Sequence[str] = ()) -> list[str]:
    """Refuse duplicate column names (pandas would silently rename them 'age.1') unless every
    repeated name is in ``unused`` (columns the caller leaves out), or number the repeats."""
    counts = Counter(names)
    dup = [n for n, c in counts.items() if c > 1]
    if not dup:
        return names
    if duplicates != "rename":
        where = repeated_names(names, [n for n in dup if n not in set(unused)])
        if where:
            raise InputError(f"the header names a column twice ({where}): rename one in the file, leave it "
                             "out with columns=[...] or drop=[...], or read with duplicates='rename' "
                             "(gives 'name_2')")
    seen: Counter = Counter()
    out = []
    for n in names:
        seen[n] += 1
        out.append(n if seen[n] == 1 else f"{n}_{seen[n]}")
    return out


def read_table(source: Any, name: str | None = None, *, columns: Sequence[str] | None = None,
               drop: Sequence[str] | None = None, duplicates: str = "error") -> pd.DataFrame:
    """Read the analyst's table from a path, from bytes (with the file ``name``) or from a
    FileUpload value: CSV (comma, semicolon, tab or bar), CSV compressed with gzip (``.csv.gz``,
    recognised by its content too) or Parquet (read by DuckDB).

    ``columns`` keeps only those columns (in that order), ``drop`` removes some: columns you do
    not need may hold anything, missing values included. A header that names a column twice is
    refused (``duplicates="rename"`` numbers the repeats ``name_2``) unless ``columns`` leaves
    that name out or ``drop`` names it (then every column of that name is dropped). Raises
    :class:`InputError` for a missing file, a format that is not a table, no rows or fewer than
    two columns.
    """
    if duplicates not in ("error", "rename"):
        raise InputError(f"duplicates must be 'error' or 'rename', got {duplicates!r}")
    source, name = _unwrap_upload(source, name)
    path = None
    if isinstance(source, (str, Path)):
        path = Path(source).expanduser()
        if not path.is_file():
            raise InputError(f"no file at {str(source)!r}: check the path (relative paths start at the "
                             f"notebook's folder)")
        name = name or path.name
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read {str(source)!r}: {exc.strerror or exc}") from None
    elif isinstance(source, (bytes, bytearray, memoryview)):
        content = bytes(source)
    else:
        raise InputError(f"cannot read a table from a {type(source).__name__}: give a path or upload a file")
    label = name or "the file"
    lower = str(name or "").lower()
    wanted = None if columns is None or isinstance(columns, str) else set(columns)
    dropped = set() if drop is None or isinstance(drop, str) else set(drop)

    def unused(names: list[str]) -> list[str]:
        """Header names the caller leaves out (not in ``columns``, or in ``drop``)."""
        return [n for n in names if (wanted is not None and n not in wanted) or n in dropped]

    if not content.strip():
        raise InputError(f"{label} is empty: choose the file that holds your table")
    if content[:4] == _PARQUET_MAGIC or lower.endswith(PARQUET_SUFFIXES):
        frame = _read_parquet(content, path if content[:4] == _PARQUET_MAGIC else None, label)
        names = [str(c).strip() for c in frame.columns]
        frame.columns = _dedupe(names, duplicates, unused(names))
        repeats = [new for old, new in zip(names, frame.columns) if old != new and old in dropped]
    else:
        if content[:2] == _GZIP_MAGIC or lower.endswith(".gz"):
            try:
                content = gzip.decompress(content)
            except (OSError, EOFError) as exc:
                raise InputError(f"{label} is not a valid gzip file ({exc}): compress it again or give the CSV") from None
            lower = lower[:-3] if lower.endswith(".gz") else lower
        if content[:4] == _ZIP_MAGIC:
            raise InputError(f"{label} is a zip archive or a spreadsheet (.xlsx), not a table file: "
                             "save it as CSV (or .csv.gz, or Parquet)")
        if name is not None and not lower.endswith(TEXT_SUFFIXES):
            raise InputError(f"{name!r} is not a CSV, CSV.gz or Parquet file: export your table as "
                             "comma-separated values (.csv) first")
        try:
            text = content.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InputError(f"{label} is not a text CSV (it looks binary: a spreadsheet or an archive?): "
                             "save it as CSV, UTF-8") from None
        if "\x00" in text:
            raise InputError(f"{label} is not a text CSV (it contains binary data): save it as CSV, UTF-8")
        try:  # comma, semicolon, tab or bar
            sep = csv.Sniffer().sniff(text[:20_000], delimiters=",;\t|").delimiter
        except csv.Error:
            sep = ","
        header = _header(text, sep)
        names = _dedupe(header, duplicates, unused(header))
        repeats = [new for old, new in zip(header, names) if old != new and old in dropped]
        try:
            frame = pd.read_csv(io.StringIO(text), sep=sep, skipinitialspace=True, low_memory=False)
        except (ValueError, csv.Error) as exc:  # ParserError and EmptyDataError are ValueErrors
            raise InputError(f"{label} could not be read as CSV ({str(exc).strip()}): check the separator "
                             "and quoting") from None
        frame.columns = names if len(names) == frame.shape[1] else [str(c).strip() for c in frame.columns]
    if frame.shape[1] < 2:
        raise InputError(f"{label} has {frame.shape[1]} column: a table needs a target and at least one "
                         "predictor (is the separator a comma?)")
    if len(frame) == 0:
        raise InputError(f"{label} has a header but no rows")
    if len(set(frame.columns)) != frame.shape[1]:
        raise InputError("column names must be distinct: rename the repeats in the file, or read with "
                         "duplicates='rename'")
    repeats = [c for c in repeats if c in frame.columns]
    if repeats and duplicates == "error":   # the numbered repeats of a dropped name go with it
        drop = [*drop, *repeats]
    return select_columns(frame, columns, drop)


def select_columns(frame: pd.DataFrame, keep: Sequence[str] | None = None,
                   drop: Sequence[str] | None = None) -> pd.DataFrame:
    """A copy with only the ``keep`` columns (in that order), minus the ``drop`` columns."""
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"the table must be a DataFrame, got {type(frame).__name__}")
    for arg, names in (("columns", keep), ("drop", drop)):
        if names is None:
            continue
        if isinstance(names, str):
            raise InputError(f"{arg} must be a list of column names, got the text {names!r}: write [{names!r}]")
        unknown = [n for n in names if n not in frame.columns]
        if unknown:
            raise InputError(f"{arg}: no column named {show_list(unknown)}; the table has "
                             f"{show_list(list(frame.columns), 8)}")
    out = frame if keep is None else frame[list(keep)]
    if drop:
        out = out.drop(columns=list(drop))
    if out.shape[1] < 2:
        raise InputError(f"{out.shape[1]} column left: keep the target and at least one predictor")
    return out.copy()
