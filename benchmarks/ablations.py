"""What each part of the synthetic tables' joint fit, of the marginals' parent choice and of the table's classifier buys.

    python benchmarks/ablations.py [--variants none no-band ...] [--datasets adult messy customers] \\
        [--epsilons 0.1 1] [--seeds N] [--out benchmarks/results/ablations.csv]

Runs ``benchmarks/fidelity.py`` (the same tables, splits, seeds and ε, so each variant's runs
pair with the stored ones; other ``--epsilons`` or ``--seeds`` give fidelity.py's runs with those
options) with one part of the release changed (``dpexplore.publish.complete``, or the classifier
in ``dpexplore.publish.histogram_release``):

- ``none``: the release as shipped;
- ``no-band``: the cells raked without each count's noise band (``noise_ceiling``);
- ``no-prior``: no tree-model prior where the counts are mostly noise (``MODEL_PRIOR_SHARE`` 0);
- ``no-pairs``: the cells raked to the one-way marginals only, not to the two-way tables;
- ``class-totals-from-table``: the class totals from the release's table only;
- ``total-from-table``: the record total (and the synthetic size) from the release's own total only;
- ``selection-share=S``: ``PARENT_SELECTION_SHARE`` = S (0.2 shipped) for every column;
- ``exponential-parent``: each column's parent chosen by the exponential mechanism (private, the
  same ε) instead of permute-and-flip;
- ``best-parent``: each column's parent chosen as the best score, not by permute-and-flip
  (NOT PRIVATE: a measuring stick for what a better private choice could reach);
- ``own-classifier``: every release classifies with its own counts, never with the regression on
  its completed table (``HistogramRelease._fit_table_classifier``; only ``accuracy`` can move).

Measurements only (NOT private evaluation, and ``best-parent`` is not a private release). The
CSV holds fidelity.py's columns and ``variant``; the printed table the means over the seeds.
"""
from __future__ import annotations

import argparse
import contextlib
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import fidelity
from dpexplore import mechanisms
from dpexplore.exceptions import PrivacyLeakWarning
from dpexplore.publish import complete
from dpexplore.publish.histogram_release import HistogramRelease

OUT = fidelity.ROOT / "benchmarks" / "results" / "ablations.csv"
VARIANTS = ("none", "no-band", "no-prior", "no-pairs", "class-totals-from-table", "total-from-table",
            "selection-share=0.35", "selection-share=0.5", "exponential-parent", "best-parent",
            "own-classifier")


def _parent_choice(choose) -> types.SimpleNamespace:
    """``complete``'s view of :mod:`dpexplore.mechanisms` with ``permute_and_flip`` (the parent
    choice) replaced by ``choose``."""
    view = types.SimpleNamespace(**{k: getattr(mechanisms, k) for k in dir(mechanisms) if not k.startswith("__")})
    view.permute_and_flip = choose
    return view


def _best(scores, **kwargs) -> int:
    """The argmax of the scores, after drawing permute-and-flip anyway (so the rest of the release
    sees the same random stream). NOT PRIVATE."""
    mechanisms.permute_and_flip(scores, **kwargs)
    return int(np.argmax(scores))


@contextlib.contextmanager
def variant(name: str):
    """``complete`` with the part ``name`` changed, restored on exit."""
    cls = complete.CompleteSynthetic
    changes = {
        "none": [],
        "no-band": [(complete, "noise_ceiling", lambda scale, m: np.inf)],
        "no-prior": [(complete, "MODEL_PRIOR_SHARE", 0.0)],
        "no-pairs": [(cls, "_pair_margins", lambda self, *args, **kwargs: [])],
        "class-totals-from-table": [(cls, "_class_totals",
                                     lambda self, table: None if table is None else table.sum(axis=0))],
        "total-from-table": [(cls, "_record_total", lambda self: self._size_total())],
        "exponential-parent": [(complete, "mechanisms", _parent_choice(mechanisms.exponential))],
        "best-parent": [(complete, "mechanisms", _parent_choice(_best))],
        "own-classifier": [(HistogramRelease, "_uses_table_classifier", lambda self: False)],
    }
    if name.startswith("selection-share="):
        changes[name] = [(complete, "PARENT_SELECTION_SHARE", float(name.split("=", 1)[1]))]
    if name not in changes:
        raise ValueError(f"unknown variant {name!r}: one of {', '.join(VARIANTS)} (any selection-share=S)")
    saved = [(owner, attr, owner.__dict__[attr]) for owner, attr, _ in changes[name]]
    try:
        for owner, attr, value in changes[name]:
            setattr(owner, attr, value)
        yield
    finally:
        for owner, attr, value in saved:
            setattr(owner, attr, value)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS))
    ap.add_argument("--datasets", nargs="+", choices=fidelity.DATASETS, default=list(fidelity.DATASETS))
    ap.add_argument("--epsilons", type=float, nargs="+", default=list(fidelity.EPSILONS))
    ap.add_argument("--seeds", type=int, default=None, help="default: fidelity.py's per table")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    frames = []
    for name in args.variants:
        with variant(name), warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)   # the messy table's draft (fidelity.py)
            frames.append(fidelity.run(args.datasets, args.epsilons, args.seeds).assign(variant=name))
        print(f"{name}: done", flush=True)
    results = pd.concat(frames, ignore_index=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    results.to_csv(args.out, index=False, float_format="%.6g")
    keys = ["variant", "dataset", "method", "epsilon"]
    measures = ["tvd_1way", "tvd_2way", "accuracy", "rules_addon_max", "rules_phone", "synthetic_rows"]
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(results.groupby(keys, sort=False)[[m for m in measures if m in results]].mean().round(3).to_string())
    print(f"{len(results)} rows -> {args.out}")


if __name__ == "__main__":
    main()
