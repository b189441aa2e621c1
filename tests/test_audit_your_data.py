"""End-to-end privacy audit of the bring-your-own-data release (README, "Audited end to end").

``run`` calls the public :func:`dpexplore.tables.release` on neighbouring tables
(add/remove one record: a record of a rare class at a domain edge). The method is a minimal
registered publisher (:class:`CellCounts`: Laplace counts of every (colour, class) cell of the
public domain, built from :func:`dpexplore.mechanisms.laplace` and the accountant) so that a few
thousand releases run in seconds: what is audited here is the release path itself (the split,
the seeding, the hardened noise), the publishers have their own audits (test_audit_publish.py).
The broken variants: the OLD fixed-size stratified split (a substitution, 2ε) and
``weakened_noise(3)``. Each audit prints a row: path, claimed ε, measured lower bound.
"""
import warnings

import numpy as np
import pandas as pd
import pytest

from dpexplore import datasets, mechanisms
from dpexplore.budget import BudgetAccountant
from dpexplore.domain import Attribute, PrivacyLeakWarning, Schema
from dpexplore import tables
from dpexplore.tables import METHODS, release
from _stand_ins import SchemaParameter
from privacy_audit import assert_flagged, assert_private, long_audit, weakened_noise

EPS = 2.0  # the broken split costs 2ε = 4: a short audit has power at this claim
N = 1_500
SCHEMA = Schema([Attribute.categorical("colour", ["blue", "red"])], "outcome", ["no", "yes"])
D = pd.DataFrame({"colour": ["blue"] * 40, "outcome": ["yes"] * 38 + ["no"] * 2})
# the neighbour adds one record of the rare cell, at the edge of the domain: (red, yes)
D2 = pd.concat([D, pd.DataFrame({"colour": ["red"], "outcome": ["yes"]})], ignore_index=True)


class CellCounts(SchemaParameter):
    """Laplace(1/ε) count of every cell of the public domain (sensitivity 1 under add/remove);
    the synthetic table repeats each cell round(noisy count) times (post-processing)."""

    def __init__(self, epsilon, random_state=None, accountant=None):
        self.epsilon, self.random_state = epsilon, random_state
        self.accountant = accountant if accountant is not None else BudgetAccountant(epsilon)

    def fit(self, X, y):
        schema = self.schema
        colours, classes = list(schema["colour"].categories), list(schema.classes)
        self.cells_ = [(c, k) for c in colours for k in classes]
        code = (pd.Categorical(X["colour"], categories=colours).codes * len(classes)
                + pd.Categorical(y, categories=classes).codes)
        counts = np.bincount(code, minlength=len(self.cells_)).astype(float)
        eps = self.accountant.spend(self.epsilon, "cell counts")
        self.noisy_ = mechanisms.laplace(counts, epsilon=eps, sensitivity=1.0, random_state=self.random_state)
        self.ledger_ = self.accountant.ledger
        return self

    def predict(self, X):
        best = {}
        for (c, k), v in zip(self.cells_, self.noisy_):
            if c not in best or v > best[c][1]:
                best[c] = (k, v)
        return np.array([best[c][0] for c in X["colour"]], dtype=object)

    def synthetic(self, random_state=None):
        reps = np.clip(np.rint(self.noisy_), 0, None).astype(int)
        rows = [cell for cell, r in zip(self.cells_, reps) for _ in range(r)]
        return pd.DataFrame(rows, columns=["colour", "outcome"])


@pytest.fixture(autouse=True)
def cell_counts_method(monkeypatch):
    monkeypatch.setitem(METHODS, "cell counts",
                        lambda eps, rs, accountant=None: (CellCounts(eps, rs, accountant), {}))


def run(data, rng):
    """The released synthetic table, coarsened to two indicators: does the rare cell (red, yes)
    have a row, and does the big cell (blue, yes) have fewer rows than its stratified share (30)?
    A substitution moves both (2ε); an added record moves only the first."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        syn = release(data, SCHEMA, "cell counts", EPS, random_state=rng, evaluate=False, progress=False).synthetic
    red = int(((syn["colour"] == "red") & (syn["outcome"] == "yes")).sum())
    blue = int(((syn["colour"] == "blue") & (syn["outcome"] == "yes")).sum())
    return red >= 1, blue <= 29


def old_split(frame, schema, test_fraction=0.2, random_state=None):
    """The split the release used before: fixed-size and stratified (a substitution: 2ε)."""
    return datasets.train_test_split(frame, schema, test_size=test_fraction, random_state=random_state)


def _row(path, res):
    print(f"\n| your-data release: {path} | ε = {EPS:g} | lower bound {res.epsilon_lower:.3f} "
          f"| point {res.epsilon_hat:.3f} |")


def test_release_is_private_for_add_remove_neighbours():
    res = assert_private(run, D, D2, EPS, n_samples=N)
    _row("Bernoulli split, hardened noise", res)


def test_audit_flags_the_old_fixed_size_split(monkeypatch):
    monkeypatch.setattr(datasets, "bernoulli_split", old_split)
    res = assert_flagged(run, D, D2, EPS, n_samples=N)
    _row("BROKEN: old stratified fixed-size split", res)


def test_audit_flags_weakened_noise():
    with weakened_noise(3):
        res = assert_flagged(run, D, D2, EPS, n_samples=N)
    _row("BROKEN: weakened_noise(3)", res)


def test_the_release_draws_hardened_noise():
    """The released counts are exactly on the hardened sampler's grid (g = 2**-11 for 4 cells)."""
    est = []
    METHODS["spy"] = lambda eps, rs, accountant=None: (est.append(CellCounts(eps, rs, accountant)) or est[-1], {})
    try:
        release(D2, SCHEMA, "spy", EPS, random_state=0)
    finally:
        del METHODS["spy"]
    g = mechanisms.hardened_laplace_parameters(epsilon=EPS, size=4)[0]
    values = est[0].noisy_
    assert np.all(values / g == np.round(values / g)) and g == 2.0 ** -12


@long_audit
def test_long_audit_with_privpfc():
    def run_pfc(data, rng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            syn = release(data, SCHEMA, "PrivPfC", EPS, random_state=rng).synthetic
        return min(int(((syn["colour"] == "red") & (syn["outcome"] == "yes")).sum()), 3)
    _row("PrivPfC (long)", assert_private(run_pfc, D, D2, EPS, n_samples=3_000))


# --------------------------------------------------------------------------- missing values
# build_schema(missing="drop-rows") drops each row with a missing value on its own (a stable,
# per-record rule): a neighbour with one more complete record moves one cell by one. The broken
# variant fills missing values with the column's mode, a rule that reads the other rows: one
# added record flips the mode and moves all ten incomplete records into another cell.
DRAFT = pd.DataFrame([["colour", "categorical", np.nan, np.nan, False, "blue, red", False],
                      ["outcome", "target", np.nan, np.nan, False, "no, yes", False]],
                     columns=tables.DRAFT_COLUMNS)
DM = pd.DataFrame({"colour": ["blue"] * 15 + ["red"] * 15 + [None] * 10,
                   "outcome": ["no"] * 2 + ["yes"] * 38})
DM2 = pd.concat([DM, pd.DataFrame({"colour": ["red"], "outcome": ["yes"]})], ignore_index=True)


def run_missing(data, rng):
    """(red, yes) rows in the synthetic table reach 17: impossible from 16 complete red records
    in training (plus Laplace noise of scale 1/2), likely when imputed rows join them."""
    schema, encoded, _ = tables.build_schema(data, DRAFT, missing="drop-rows")
    syn = release(encoded, schema, "cell counts", EPS, random_state=rng, evaluate=False, progress=False).synthetic
    return bool(((syn["colour"] == "red") & (syn["outcome"] == "yes")).sum() >= 17)


def test_dropping_incomplete_rows_is_private():
    res = assert_private(run_missing, DM, DM2, EPS, n_samples=N)
    _row("missing='drop-rows' (per record)", res)


def test_audit_flags_mode_imputation(monkeypatch):
    build = tables.build_schema

    def imputing(frame, draft, *args, missing="error", **kw):
        filled = frame.fillna({"colour": frame["colour"].mode().iloc[0]})  # reads the other rows
        return build(filled, draft, *args, **kw)

    monkeypatch.setattr(tables, "build_schema", imputing)
    res = assert_flagged(run_missing, DM, DM2, EPS, n_samples=N)
    _row("BROKEN: mode imputation of missing values", res)
