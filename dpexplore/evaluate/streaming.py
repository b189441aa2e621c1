"""Test-set evaluation of a table too big for memory: stream it through the engine that holds it.

Scores measured here read the test rows without noise: they are **non-private** evaluation, for
the data owner choosing a method, never a release (the same label as :func:`~dpexplore.evaluate.sweep`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..sources import Source

__all__ = ["score_source"]


def score_source(estimator: Any, source: Source, *, batch_rows: int = 200_000) -> float:
    """Accuracy of a fitted classifier on every row of ``source`` (NON-PRIVATE), streamed in
    batches of about ``batch_rows`` rows through ``source.iter_frames``; memory stays at one batch.

    A model fitted from a source on indicator columns (``binarizer_``: Naive Bayes, selectors,
    ``SelectThenTrain``) sees each batch through that binarizer first. Labels are compared as
    text, so a model fitted on labels of another type (e.g. text records scored on an int column)
    is scored all the same.
    """
    if not isinstance(source, Source):
        raise TypeError(f"source must be a dpexplore.sources Source, got {type(source).__name__}")
    if not hasattr(estimator, "predict"):
        raise TypeError(f"{type(estimator).__name__} has no predict method")
    schema = source.schema
    binarizer = getattr(estimator, "binarizer_", None)
    correct = total = 0
    for frame in source.iter_frames(batch_rows):
        X = frame[schema.predictors]
        pred = np.asarray(estimator.predict(X if binarizer is None else binarizer.transform(X)))
        truth = frame[schema.target].astype(str).to_numpy()
        correct += int(np.sum(pred.astype(str) == truth))
        total += len(frame)
    if total == 0:
        raise ValueError("the source has no rows to score")
    return correct / total
