"""End-to-end audits: released split points and medians lie on a public lattice.

The continuous exponential mechanism used to return a + (b − a)·U with a, b data values; which
floats that formula can produce depends on a and b, so the output showed which data values bound
its interval (the floating-point channel of Mironov 2012, here in the base measure). The fixed
mechanism draws a point of a public lattice (the attribute's declared resolution; README,
"Floating-point noise": every released real number lies on a public grid).

Neighbours: D, and D′ = D plus one record inside D's widest gap. The event, the same
for every variant and every run: "the output is not in the neighbour's support", where the
neighbour's support is everything D′ can produce under either implementation: a float
e_i + (e_{i+1} − e_i)·U (U a 53-bit uniform, as numpy draws it) in one of D′'s intervals, or a
lattice point inside the region. Under D′ the event never happens; under D with the old code it
happens whenever the draw lands in the gap the new record splits. The fixed code must stay at or
below the claimed ε; the old code, copied here, is the broken variant the audit must flag.
Each test prints an ``AUDIT |`` row (``pytest -s``): the lower bound of every path before
(old code) and after (the package) on the same event and number of runs.
"""
from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import pandas as pd
import pytest
from privacy_audit import assert_flagged, assert_private
from scipy.special import logsumexp

from dpexplore import mechanisms
from dpexplore._validation import check_random_state
from dpexplore.domain import Attribute, Schema
from dpexplore.evaluate import roc
from dpexplore.mechanisms import exponential_interval, lattice_value
from dpexplore.publish import DiffGen, DiffMulti, diffgen, diffmulti, partition
from dpexplore.publish.diffmulti import split_utilities
from dpexplore.tables import release as tables_release

# the module itself (the package re-exports the function under the same name)
tables_release_module = importlib.import_module("dpexplore.tables.release")

EPS = 1.0
SCHEMA = Schema([Attribute.numeric("x", 0.0, 1.0)], "label", ["0", "1"])
LATTICE = SCHEMA["x"].lattice               # (resolution, origin) declared by the schema
# D: a cluster at the top of [0, 1], so most draws fall in the wide gap [0, 0.9); D′ adds one
# record near 0. a + (b − a)·U produces every float only where its step (b − a)·2**-53 is below
# the float spacing: below about 0.5 the two neighbours produce different sets of floats.
X_D = np.array([0.90, 0.92, 0.95, 0.98])
Y_D = np.array([0, 0, 1, 1])
X_N, Y_N = np.append(X_D, 0.0123), np.append(Y_D, 0)
# tables.release needs a table of at least 30 rows: the same cluster, repeated
X_T = np.repeat(X_D, 8)
Y_T = np.repeat(Y_D, 8)


# --------------------------------------------------------------------------- the neighbour's support
def _uniform_can_produce(x: float, lo: float, hi: float) -> bool:
    """True if lo + (hi − lo)·U equals x for some 53-bit U (numpy's ``uniform``)."""
    width = hi - lo
    if not lo <= x <= hi or width <= 0:
        return False
    k0 = int(round((x - lo) / width * 2.0 ** 53))
    return any(lo + width * (k * 2.0 ** -53) == x for k in range(max(k0 - 4, 0), min(k0 + 5, 2 ** 53)))


def _on_lattice(x: float, lo: float, hi: float, lattice: tuple[float, float]) -> bool:
    resolution, origin = lattice
    k = int(round((x - origin) / resolution))
    return lo < x < hi and float(lattice_value(k, resolution=resolution, origin=origin)) == x


def _not_in_support(x: float, edges: np.ndarray, lattice: tuple[float, float]) -> bool:
    """The event: neither implementation can produce x from the neighbour's intervals ``edges``."""
    if _on_lattice(x, edges[0], edges[-1], lattice):
        return False
    return not any(_uniform_can_produce(x, lo, hi) for lo, hi in zip(edges[:-1], edges[1:]))


def _neighbour_edges() -> np.ndarray:
    return split_utilities(X_N, Y_N, 2, 0.0, 1.0, integer=False)[0]


# --------------------------------------------------------------------------- the old code (broken variant)
def _old_exponential_interval(edges, utilities, *, epsilon, sensitivity, random_state=None,
                              return_probabilities=False, **lattice):
    """The former sampler: an interval ∝ length · exp(ε·u/(2Δu)), then a + (b − a)·U."""
    e = np.asarray(edges, dtype=float)
    u = np.asarray(utilities, dtype=float)
    with np.errstate(divide="ignore"):
        logw = np.log(np.diff(e)) + epsilon * u / (2.0 * sensitivity)
    probs = np.exp(logw - logsumexp(logw))
    rng = check_random_state(random_state)
    i = int(rng.choice(probs.size, p=probs))
    point = float(rng.uniform(e[i], e[i + 1]))
    return (point, probs) if return_probabilities else point


def _old_private_split_point(values, y, n_classes, a, b, *, integer, score, epsilon, sensitivity,
                             domain_width, random_state=None, return_probabilities=False, weights=None,
                             **lattice):
    """The former continuous split point (Max/DM utility): the old sampler over the data's pieces."""
    assert score != "ncp" and not integer, "the copy covers the paths these audits use"
    rng = check_random_state(random_state)
    edges, left, total = split_utilities(values, y, n_classes, a, b, integer=integer, weights=weights)
    util = partition.piece_utilities(left, total, score)
    point, probs = _old_exponential_interval(edges, util, epsilon=epsilon, sensitivity=sensitivity,
                                             random_state=rng, return_probabilities=True)
    s = float(min(max(point, a), b))
    return (s, probs) if return_probabilities else s


def _old_exponential_median(part, left, right, epsilon, rng):
    """The former EM median: the old sampler over the pieces between consecutive scores."""
    inside = part[(part > left) & (part < right)]
    edges = np.concatenate([[left], inside, [right]])
    below = np.arange(edges.size - 1) + np.count_nonzero(part <= left)
    utilities = -np.abs(2.0 * below - part.size)
    return _old_exponential_interval(edges, utilities, epsilon=epsilon, sensitivity=1.0, random_state=rng)


@pytest.fixture
def old_code(monkeypatch):
    monkeypatch.setattr(diffmulti, "private_split_point", _old_private_split_point)
    monkeypatch.setattr(diffgen, "private_split_point", _old_private_split_point)
    monkeypatch.setattr(roc, "_exponential_median", _old_exponential_median)


# --------------------------------------------------------------------------- release paths
def _primitive(sampler):
    def run(data, rng):
        values, labels = data
        edges, left, total = split_utilities(values, labels, 2, 0.0, 1.0, integer=False)
        util = partition.piece_utilities(left, total, "max")
        x = sampler(edges, util, epsilon=EPS, sensitivity=1.0, resolution=LATTICE[0], origin=LATTICE[1],
                    random_state=rng)
        return _not_in_support(x, _neighbour_edges(), LATTICE)
    return run


def _frame(values, labels):
    return pd.DataFrame({"x": values}), pd.Series(labels.astype(str), name="label")


def _diffmulti(data, rng):
    m = DiffMulti(EPS, h=1, max_depth=1, random_state=rng, schema=SCHEMA).fit(*_frame(*data))
    return _not_in_support(float(m.tree_.loc[0, "split"]), _neighbour_edges(), LATTICE)


def _diffgen(data, rng):
    m = DiffGen(EPS, steps=1, random_state=rng, schema=SCHEMA).fit(*_frame(*data))
    return _not_in_support(float(m.history_.loc[0, "split"]), _neighbour_edges(), LATTICE)


@pytest.fixture
def one_level_diffmulti(monkeypatch):
    """The registry's DiffMulti with max_depth=1, so a release takes milliseconds: the root split
    point (the audited output) is drawn exactly as with the default depth, only at a larger ε'."""
    spec = tables_release_module.METHODS["DiffMulti"]
    monkeypatch.setitem(tables_release_module.METHODS, "DiffMulti",
                        dataclasses.replace(spec, params={**spec.params, "max_depth": 1}))


def _tables_release(data, rng):
    values, labels = data
    frame = pd.DataFrame({"x": values, "label": labels.astype(str)})
    result = tables_release(frame, SCHEMA, "DiffMulti", EPS, test_size=0.0, random_state=rng,
                             evaluate=False, progress=False)
    assert result.hardened                  # the default release draws hardened noise
    return _not_in_support(float(result.estimator.tree_.loc[0, "split"]), _neighbour_edges(), LATTICE)


def _roc_neighbour_edges() -> np.ndarray:
    return np.concatenate([[0.0], np.sort(X_N), [1.0]])


def _roc(data, rng):
    scores, labels = data
    curve = roc.private_roc_curve(labels, scores, epsilon=EPS, n_thresholds=2, median="exponential",
                                  classes=[0, 1], random_state=rng)
    median = float(curve["threshold"].iloc[1])      # the one interior threshold: the released median
    return _not_in_support(median, _roc_neighbour_edges(), (roc.THRESHOLD_RESOLUTION, 0.0))


# name: (run, D, D′, number of runs)
PATHS = {
    "exponential_interval": (_primitive(exponential_interval), (X_D, Y_D), (X_N, Y_N), 1500),
    "DiffMulti.tree_": (_diffmulti, (X_D, Y_D), (X_N, Y_N), 500),
    "DiffGen.history_": (_diffgen, (X_D, Y_D), (X_N, Y_N), 500),
    "tables.release('DiffMulti')": (_tables_release, (X_T, Y_T), (np.append(X_T, 0.0123), np.append(Y_T, 0)), 200),
    "private_roc_curve(median='exponential')": (_roc, (X_D, Y_D), (X_N, Y_N), 800),
}


def _row(path: str, variant: str, res) -> None:
    print(f"\nAUDIT | {path:<42} | {variant:<16} | claimed ε = {EPS} | lower bound {res.epsilon_lower:.2f} "
          f"| point {res.epsilon_hat:.2f}")


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.usefixtures("one_level_diffmulti")
def test_released_value_is_private_at_its_claimed_epsilon(path):
    run, data, neighbour, n = PATHS[path]
    res = assert_private(run, data, neighbour, EPS, n_samples=n, seed=0)
    _row(path, "package", res)


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.usefixtures("one_level_diffmulti")
def test_audit_flags_the_old_uniform_point(path, old_code):
    run, data, neighbour, n = PATHS[path]
    if path == "exponential_interval":
        run = _primitive(_old_exponential_interval)
    res = assert_flagged(run, data, neighbour, EPS, n_samples=n, seed=0)
    _row(path, "old a + (b−a)·U", res)
