"""End-to-end audit of the projected histogram's released lattice under hardened noise.

The projected histogram (Vinterbo 2012, PH eqs. 3-4) is released sparsely: only the occupied
cells are noised, and the kept empty cells are drawn from the tail of the noise. Under hardened
noise every released value must lie on ONE public lattice, the same for every input: a spacing
fixed by ε, the sensitivity and public caps, and empty kept cells drawn on that lattice with the
distribution the dense construction gives them. Two channels break that, and the output
summary below (:func:`lattice_signature`) exposes both:

* the spacing: a lattice whose spacing follows the private number of occupied cells shows, in
  the finest lattice the released values use, how many cells were occupied;
* the support: an empty kept cell drawn off the lattice (τ + a float exponential draw) shows
  which released cell was empty.

The neighbours: D holds four occupied (colour × class) cells of a 4 × 3 public domain, D' adds
ONE record in an empty cell ("d", "maybe"), a fifth occupied cell. Each audit runs the public
API many times on both (Clopper–Pearson lower bound on ε, events chosen on a pilot run:
:func:`dpexplore.audit.privacy_loss`): the fixed code must stay at or below the claimed ε, and
the same audit must flag the broken variants: the old sparse path (spacing from the occupied
count, empty cells τ + Exponential), the spacing alone, and the off-lattice empty cells alone.
Each audit prints one row: path, claimed ε, lower bound.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from dpexplore import mechanisms
from dpexplore.domain import Attribute, PrivacyLeakWarning, Schema
from dpexplore.publish import ProjectedHistogram, projected, sparse_histogram
from dpexplore.publish.projected import EmptySyntheticWarning
from dpexplore.tables import release
from privacy_audit import LONG, assert_flagged, assert_private, long_audit

EPS = 1.0
N_ESTIMATOR = 200 if not LONG else 2_000     # runs per side (plus a pilot of a quarter)
N_RELEASE = 200 if not LONG else 2_000

SCHEMA = Schema([Attribute.categorical("colour", ["a", "b", "c", "d"])], "y", ["no", "yes", "maybe"])
_CELLS = [("a", "no"), ("a", "yes"), ("b", "no"), ("b", "yes")]
D = pd.DataFrame([cell for cell in _CELLS for _ in range(10)], columns=["colour", "y"])
TARGET = ("d", "maybe")                       # the added record's cell: empty in D
D2 = pd.concat([D, pd.DataFrame([TARGET], columns=["colour", "y"])], ignore_index=True)
# one predictor (k = d = 1: nothing to select, γ = 1); A = 0.1 keeps about a third of the empty cells
PH = dict(k=1, A=0.1, count_share=0.02, C=1.0)
#: values are compared on the lattice of spacing 2**-FINEST; anything finer is "off the lattice"
FINEST = 40


def lattice_signature(values: np.ndarray, target: float | None) -> tuple[int, str]:
    """(j, target state): j = the finest lattice the released values use (the largest j such that
    some value on the 2**-FINEST lattice is an odd multiple of 2**-j; values off that lattice are
    left out), and the target cell's state: "dropped", "on lattice" or "off lattice"."""
    def exponent(x: float) -> int | None:
        scaled = x * 2.0 ** FINEST
        if scaled != math.floor(scaled):
            return None                                    # off the 2**-FINEST lattice
        j = FINEST
        while j > -FINEST and scaled != 0 and scaled % 2 == 0:
            scaled /= 2
            j -= 1
        return j
    js = [e for e in (exponent(float(v)) for v in values) if e is not None]
    state = "dropped" if target is None else ("off lattice" if exponent(target) is None else "on lattice")
    return (max(js) if js else -FINEST), state


def _quiet():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    for w in (EmptySyntheticWarning, PrivacyLeakWarning):
        warnings.simplefilter("ignore", w)
    return ctx


def estimator_run(data: pd.DataFrame, rng: np.random.Generator) -> tuple[int, str]:
    """The estimator's released ``histogram_`` (noisy counts of the kept cells), fitted under
    hardened noise, summarised by :func:`lattice_signature`."""
    with mechanisms.hardened_noise():
        model = ProjectedHistogram(epsilon=EPS, random_state=rng, **PH, schema=SCHEMA).fit(
            data[["colour"]], data["y"])
    h = model.histogram_
    hit = h[(h["colour"] == TARGET[0]) & (h["y"] == TARGET[1])]["noisy_count"]
    return lattice_signature(h["noisy_count"].to_numpy(), float(hit.iloc[0]) if len(hit) else None)


def release_run(data: pd.DataFrame, rng: np.random.Generator) -> tuple[int, str]:
    """``tables.release(..., "ProjectedHistogram")`` (hardened by default): the released
    histogram of the estimator it returns (``counts_``), summarised by :func:`lattice_signature`."""
    est = release(data, SCHEMA, "ProjectedHistogram", EPS, random_state=rng, evaluate=False,
                  progress=False).estimator
    counts = est.counts_
    code = np.ravel_multi_index((SCHEMA["colour"].categories.index(TARGET[0]),
                                 list(SCHEMA.classes).index(TARGET[1])), counts.shape)
    hit = np.flatnonzero(counts.codes == code)
    return lattice_signature(counts.values, float(counts.values[hit[0]]) if hit.size else None)


# ----------------------------------------------------------------------------- broken variants
def _off_lattice_empty_cells(mp) -> None:
    """The kept empty cells drawn from the textbook law (τ + Exponential: off every lattice)
    whatever the noise, the occupied ones still on the public lattice: the support channel alone."""
    law = sparse_histogram._kept_empty_law
    mp.setattr(sparse_histogram, "_kept_empty_law",
               lambda tau, epsilon, sensitivity, exact: law(tau, epsilon, sensitivity, False))


def _spacing(mp) -> None:
    """The histogram's lattice from the number of entries noised (:class:`_OccupiedCountLattice`)."""
    proxy = _OccupiedCountLattice()
    for module in (projected, sparse_histogram):      # the estimator's checks and the histogram's draws
        mp.setattr(module, "mechanisms", proxy)


class _OccupiedCountLattice:
    """:mod:`dpexplore.mechanisms` as the projected histogram sees it, except that the histogram's
    lattice follows the number of entries noised (for the sparse path: the private number of
    occupied cells), with the kept empty cells drawn exactly on that same lattice: the spacing
    channel alone."""

    size = 1            # before the first draw (the estimator's parameter check before any spend)

    def __getattr__(self, name):
        return getattr(mechanisms, name)

    def laplace(self, value, **kwargs):
        self.size = np.size(value)
        return mechanisms.laplace(value, **dict(kwargs, integer=False))

    def hardened_laplace_parameters(self, **kwargs):
        return mechanisms.hardened_laplace_parameters(**dict(kwargs, integer=False, size=self.size))


# the old sparse path had both channels: the spacing from the occupied count, empty cells τ + Exponential
BROKEN = {"old sparse path": lambda mp: (_spacing(mp), _off_lattice_empty_cells(mp)),
          "spacing alone": _spacing,
          "off-lattice empty cells alone": _off_lattice_empty_cells}
RUNS = {"estimator histogram_": (estimator_run, N_ESTIMATOR), "tables.release counts_": (release_run, N_RELEASE)}


def _record(path: str, res) -> None:
    print(f"\n| {path:<62} | claimed ε {EPS:.1f} | lower bound {res.epsilon_lower:6.3f} "
          f"| point {res.epsilon_hat:6.3f} |")


def _audit(check, run, n: int, seed: int):
    ctx = _quiet()
    try:
        with threadpool_limits(1):
            return check(run, D, D2, EPS, n_samples=n, seed=seed)
    finally:
        ctx.__exit__(None, None, None)


# ----------------------------------------------------------------------------- tests
def test_signature_reads_the_lattice():
    assert lattice_signature(np.array([3.0, 2.5, 1.25]), None) == (2, "dropped")
    assert lattice_signature(np.array([4.0, 0.1]), 0.1) == (-2, "off lattice")
    assert lattice_signature(np.array([2.0 ** -13 * 7]), 2.0 ** -13 * 7) == (13, "on lattice")


@pytest.mark.parametrize("path", list(RUNS))
def test_hardened_release_is_private(path):
    run, n = RUNS[path]
    _record(f"ProjectedHistogram {path} (hardened): lattice", _audit(assert_private, run, n, seed=0))


@pytest.mark.parametrize("path", list(RUNS))
def test_old_sparse_path_is_flagged(monkeypatch, path):
    run, n = RUNS[path]
    BROKEN["old sparse path"](monkeypatch)
    _record(f"BROKEN old sparse path: {path}", _audit(assert_flagged, run, n, seed=1))


@pytest.mark.parametrize("variant", ["spacing alone", "off-lattice empty cells alone"])
def test_each_channel_alone_is_flagged(monkeypatch, variant):
    BROKEN[variant](monkeypatch)
    _record(f"BROKEN {variant}: estimator histogram_", _audit(assert_flagged, estimator_run, N_ESTIMATOR, seed=1))


@long_audit
@pytest.mark.parametrize("path", list(RUNS))
def test_hardened_release_is_private_long(path):
    _record(f"ProjectedHistogram {path} (hardened, long)", _audit(assert_private, RUNS[path][0], 2_000, seed=0))
