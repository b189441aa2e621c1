"""The pandas/NumPy engine: a DataFrame in memory (the default path, as every method's fit)."""
from __future__ import annotations

from typing import Iterator

import numpy as np
import pandas as pd

from ..counts import CountTable
from ..domain import Schema
from ._base import Source, check_columns


class PandasSource(Source):
    """A pandas DataFrame holding the predictors and the target column ``schema.target``."""

    engine = "pandas"

    def __init__(self, frame: pd.DataFrame, schema: Schema):
        super().__init__(schema)
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}"
                            " (for files use dpexplore.sources.csv/parquet, for Spark sources.spark)")
        check_columns([str(c) for c in frame.columns], self.schema, "frame")
        self._frame = frame  # never mutated; split into copies on use

    def _target_dtype(self) -> np.dtype:
        dtype = self._frame[self.schema.target].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            dtype = dtype.categories.dtype
        dtype = getattr(dtype, "numpy_dtype", dtype)   # nullable Int64/boolean: their NumPy type
        return dtype if isinstance(dtype, np.dtype) else np.dtype(object)

    def _xy(self) -> tuple[pd.DataFrame, pd.Series]:
        return self._frame[self.schema.predictors], self._frame[self.schema.target]

    def _validate(self) -> None:
        X, y = self._xy()
        self.schema.validate(X, y)   # the fit path's checks and messages (column and rule, no value)

    def _build(self) -> CountTable:
        self._validate()
        X, y = self._xy()
        return CountTable.from_codes(self.schema, self.schema.leaf_codes(X), self.schema.encode_target(y))

    def _iter_frames(self, batch_rows: int) -> Iterator[pd.DataFrame]:
        cols = self.columns
        for start in range(0, len(self._frame), batch_rows):
            yield self._frame.iloc[start:start + batch_rows][cols].copy()
