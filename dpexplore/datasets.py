"""Example tables with public schemas: UCI Adult, Adult-Multiclass, German credit, Iris, generated ones.

Every loader returns ``(frame, schema)``: a fresh copy of the table (predictors plus the target
as its last column) and a :class:`~dpexplore.domain.Schema` whose every attribute carries a
taxonomy. The data files ship with the package (``datasets/`` in the repository, reached as
``dpexplore/_datasets``); nothing is downloaded. Sources and licences: ``datasets/README.md``.

The domains (category lists, numeric bounds, class labels) are *declared* in the JSON specs next
to the data, never read from the rows, so they are public in the DP sense.
"""
from __future__ import annotations

import functools
import importlib.resources
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ._validation import RandomState, check_fraction, check_frame, check_int, check_random_state
from .domain import Attribute, Schema, Taxonomy, check_schema, cut_taxonomy, long_tail_cuts

__all__ = ["load_adult", "load_adult_multiclass", "load_german", "load_iris", "make_synthetic",
           "make_messy_table", "make_customer_table", "customer_schema", "train_test_split", "bernoulli_split",
           "data_path"]

ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
                 "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
                 "hours-per-week", "native-country", "income"]
ADULT_CLASSES = ("<=50K", ">50K")
IRIS_COLUMNS = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


# =========================================================================== files
def data_path(name: str) -> Any:
    """Path (or importlib Traversable) of a shipped data file, e.g. ``"adult.data.gz"``.

    Looks in the package data ``dpexplore/_datasets`` (a copy of the repository's ``datasets/``
    that ``setup.py`` puts in a built wheel), then in ``../datasets`` next to the package source
    (an editable install or a checkout).
    """
    resource = importlib.resources.files("dpexplore").joinpath("_datasets", name)
    if resource.is_file():
        return resource
    fallback = Path(__file__).resolve().parent.parent / "datasets" / name
    if fallback.is_file():
        return fallback
    raise FileNotFoundError(f"dpexplore data file {name!r} is missing: reinstall the package "
                            "(the wheel ships it under dpexplore/_datasets)")


@functools.lru_cache(maxsize=None)
def _spec(name: str) -> dict:
    """Parsed JSON spec (cached; treated as read-only)."""
    return json.loads(data_path(name).read_text(encoding="utf-8"))


def _read_gzip_csv(name: str, **kwargs: Any) -> pd.DataFrame:
    with data_path(name).open("rb") as fh:
        return pd.read_csv(fh, compression="gzip", header=None, **kwargs)


# =========================================================================== Adult
@functools.lru_cache(maxsize=None)
def _adult_frame() -> pd.DataFrame:
    """UCI Adult train + test, cleaned as in the literature (45,222 rows). Cached: copy before use."""
    read = functools.partial(_read_gzip_csv, names=ADULT_COLUMNS, skipinitialspace=True,
                             na_values=["?"])
    # adult.test starts with a "|1x3 Cross validator" line and ends its labels with "."
    frame = pd.concat([read("adult.data.gz"), read("adult.test.gz", skiprows=1)], ignore_index=True)
    frame = frame.dropna().reset_index(drop=True)  # rows with any "?" (missing value) removed
    frame["income"] = frame["income"].str.rstrip(".")
    numeric = _spec("adult_taxonomies.json")["numeric"]
    frame[numeric] = frame[numeric].astype(np.int64)
    return frame


def _adult_attribute(name: str) -> Attribute:
    spec = _spec("adult_taxonomies.json")
    taxonomy = Taxonomy.from_spec(name, spec["taxonomies"][name])
    if name in spec["numeric"]:
        lower, upper = taxonomy.bounds  # public range = the root interval of the taxonomy
        return Attribute.numeric(name, lower, upper, taxonomy, integer=True)
    return Attribute.categorical(name, taxonomy=taxonomy)


def load_adult() -> tuple[pd.DataFrame, Schema]:
    """UCI Adult (census income): 45,222 rows, 14 predictors, target ``"income"``.

    Train and test files are joined, rows with a missing value ("?") dropped and the test labels'
    trailing "." removed. Classes: "<=50K" 34,014 (75.22%) and ">50K" 11,208 (24.78%). The
    taxonomies are the PrivPfC/DiffGen Adult hierarchies (Su et al. 2018, Fig. 1 and §5.1; shapes such as
    age 1/2/4/8/16, native-country 1/6/19/41); numeric bounds are their root intervals.
    """
    frame = _adult_frame().copy()
    attributes = [_adult_attribute(c) for c in ADULT_COLUMNS[:-1]]
    return frame, Schema(attributes, "income", ADULT_CLASSES)


def load_adult_multiclass() -> tuple[pd.DataFrame, Schema]:
    """Adult-Multiclass (Su et al. 2018, §5.1, Table 1): target = 3-valued ``"marital-status"``.

    The classes are the depth-2 nodes of the marital-status taxonomy: "Never-married" (14,598),
    "Married-Partner-present" (Married-civ-spouse + Married-AF-spouse, 21,087) and
    "Married-Partner-absent" (Divorced, Separated, Widowed, Married-spouse-absent, 9,537).
    ``income`` becomes a predictor (taxonomy Any → {<=50K, >50K}) in place of marital-status.
    """
    frame = _adult_frame().copy()
    marital = Taxonomy.from_spec("marital-status", _spec("adult_taxonomies.json")["taxonomies"]["marital-status"])
    predictors = [c for c in ADULT_COLUMNS if c != "marital-status"]  # income last among them
    frame = frame[predictors].assign(**{"marital-status": marital.generalize(frame["marital-status"], 2)})
    frame["marital-status"] = frame["marital-status"].astype(str)
    attributes = [_adult_attribute(c) for c in predictors]
    return frame, Schema(attributes, "marital-status", marital.labels(2))


# =========================================================================== German credit
@functools.lru_cache(maxsize=None)
def _german_frame() -> pd.DataFrame:
    spec = _spec("german_taxonomies.json")
    raw = _read_gzip_csv("german.data.gz", sep=" ", names=spec["columns"], dtype=str)
    frame = pd.DataFrame(index=raw.index)
    for col in spec["columns"]:
        if col == spec["target"]["name"]:
            frame[col] = raw[col].map(spec["target"]["codes"]).astype(str)
        elif spec["attributes"][col]["type"] == "categorical":
            codes = spec["attributes"][col]["codes"]
            unknown = set(raw[col]) - set(codes)
            if unknown:  # the shipped file is fixed: this guards against a corrupted copy
                raise ValueError(f"german.data: column {col!r} has unknown codes {sorted(unknown)}")
            frame[col] = raw[col].map(codes).astype(str)
        else:
            frame[col] = raw[col].astype(np.int64)
    return frame


def load_german() -> tuple[pd.DataFrame, Schema]:
    """Statlog German credit: 1,000 applicants, 20 predictors, target ``"credit"`` (good 700 / bad 300).

    Codes such as "A11" are decoded to readable labels; categorical attributes get a semantic
    grouping where one is obvious (e.g. purpose: car / home / education and training / business /
    other), numeric ones declared public bounds (duration 0-72 months, credit_amount 0-20,000 DM,
    age 16-80 years, ordinal counts 0-4) with equal-width nested taxonomies. All of it is in
    ``datasets/german_taxonomies.json``.
    """
    spec = _spec("german_taxonomies.json")
    attributes = []
    for name, a in spec["attributes"].items():
        if a["type"] == "categorical":
            attributes.append(Attribute.categorical(name, taxonomy=Taxonomy.from_spec(name, a)))
        else:
            taxonomy = Taxonomy.equal_width(name, a["lower"], a["upper"], a["fanouts"])
            attributes.append(Attribute.numeric(name, a["lower"], a["upper"], taxonomy, integer=True))
    target = spec["target"]
    schema = Schema(attributes, target["name"], list(target["codes"].values()))
    frame = _german_frame().copy()
    return frame[schema.predictors + [schema.target]], schema


# =========================================================================== Iris
IRIS_BOUNDS = (0.0, 8.0)  # centimetres: declared, wider than any iris flower part in the data


@functools.lru_cache(maxsize=None)
def _iris_frame() -> pd.DataFrame:
    from sklearn.datasets import load_iris as _sk_load_iris  # bundled with scikit-learn, no download

    bunch = _sk_load_iris()
    frame = pd.DataFrame(bunch.data, columns=IRIS_COLUMNS)
    frame["species"] = np.asarray(bunch.target_names)[bunch.target].astype(str)
    return frame


def load_iris() -> tuple[pd.DataFrame, Schema]:
    """Fisher's iris (150 flowers, scikit-learn's bundled copy): 4 lengths in cm + ``"species"``.

    Public bounds [0, 8] cm for every measurement, each with an equal-width taxonomy of
    0.5 cm leaves (level sizes 1/2/4/8/16).
    """
    lower, upper = IRIS_BOUNDS
    attributes = [Attribute.numeric(c, lower, upper, Taxonomy.equal_width(c, lower, upper, (2, 2, 2, 2)))
                  for c in IRIS_COLUMNS]
    return _iris_frame().copy(), Schema(attributes, "species", ("setosa", "versicolor", "virginica"))


# =========================================================================== synthetic
SYNTHETIC_CATEGORIES = ("a", "b", "c", "d")


def make_synthetic(n_samples: int = 10_000, n_numeric: int = 4, n_categorical: int = 4,
                   n_classes: int = 2, random_state: RandomState = None) -> tuple[pd.DataFrame, Schema]:
    """A seeded table with a known signal, for experiments where the truth must be known.

    Columns ``num_0 … num_{n_numeric-1}`` (floats in the public range [0, 1], taxonomy 1/2/4/8),
    ``cat_0 … cat_{n_categorical-1}`` (categories a, b, c, d; taxonomy Any → {a-b, c-d} → leaves)
    and the target ``"label"`` with classes "0" … "k-1" (k = ``n_classes``, equally frequent).

    The signal: only ``num_0`` and ``cat_0`` depend on the label y.

    * ``num_0`` ~ Normal(mean (y+1)/(k+1), sd 0.5/(k+1)), clipped to [0, 1];
    * ``cat_0`` is category ``y mod 4`` with probability 0.7, else uniform over a-d;
    * every other column is independent uniform noise (U[0, 1], or uniform over a-d).

    A classifier should therefore beat the majority rate (1/k) clearly using num_0 and cat_0,
    and a good feature selector should pick those two.
    """
    n = check_int(n_samples, "n_samples", minimum=2)
    n_num = check_int(n_numeric, "n_numeric", minimum=0)
    n_cat = check_int(n_categorical, "n_categorical", minimum=0)
    k = check_int(n_classes, "n_classes", minimum=2)
    if n_num + n_cat == 0:
        raise ValueError("n_numeric + n_categorical must be >= 1: the table needs a predictor")
    if n < k:
        raise ValueError(f"n_samples ({n}) must be >= n_classes ({k}) so that every class occurs")
    rng = check_random_state(random_state)
    y = rng.permutation(np.arange(n) % k)  # balanced classes, every class present
    cats = np.asarray(SYNTHETIC_CATEGORIES, dtype=object)
    columns: dict[str, np.ndarray] = {}
    attributes = []
    for j in range(n_num):
        name = f"num_{j}"
        if j == 0:
            x = rng.normal((y + 1) / (k + 1), 0.5 / (k + 1))
            columns[name] = np.clip(x, 0.0, 1.0)
        else:
            columns[name] = rng.uniform(0.0, 1.0, n)
        attributes.append(Attribute.numeric(name, 0.0, 1.0, Taxonomy.equal_width(name, 0.0, 1.0, (2, 2, 2))))
    tree = {"Any": {"a-b": ["a", "b"], "c-d": ["c", "d"]}}
    for j in range(n_cat):
        name = f"cat_{j}"
        codes = rng.integers(0, len(cats), n)
        if j == 0:
            informative = rng.random(n) < 0.7
            codes = np.where(informative, y % len(cats), codes)
        columns[name] = cats[codes]
        attributes.append(Attribute.categorical(name, taxonomy=Taxonomy.from_spec(name, {"type": "categorical", "tree": tree})))
    classes = [str(c) for c in range(k)]
    frame = pd.DataFrame(columns)
    frame["label"] = np.asarray(classes, dtype=object)[y]
    for col in frame.columns:  # one string dtype for every categorical column
        if col.startswith("cat_") or col == "label":
            frame[col] = frame[col].astype(str)
    return frame, Schema(attributes, "label", classes)


# =========================================================================== messy table
def _long_tailed_counts(rng: np.random.Generator, mean: np.ndarray, shape: float, tail: float) -> np.ndarray:
    """Counts with a long tail: negative binomial with the given per-row ``mean`` and ``shape``,
    plus, for a share ``tail`` of the rows, a geometric excess (mean 20)."""
    base = rng.negative_binomial(shape, shape / (shape + mean))
    heavy = rng.random(len(mean)) < tail                    # a few very large counts
    return np.where(heavy, base + rng.geometric(0.05, len(mean)), base).astype(np.int64)


def make_messy_table(n_rows: int = 6000, random_state: RandomState = None, *,
                     duplicate_names: bool = False, n_codes: int = 5000) -> pd.DataFrame:
    """A generated hospital-style table with the problems of a real export (no download).

    Modelled on an analyst's own CSV (README, 'Your own table, scripted'): about fifty raw columns of which
    many have missing values; the integer 0/1 target ``readmitted`` (about 30 % ones);
    long-tailed count columns (``n_visits``, ``n_meds``, ``n_labs``, ``n_emergency``,
    ``n_inpatient``, ``n_outpatient``, ``n_procedures``, ``n_diagnoses``: negative-binomial
    mixtures with a tail, a few of them depending on the target); skewed categoricals
    (``admission_type``, ``discharge``, ``gender``, ``age_band``, ``payer`` with missing values);
    the high-cardinality ``diag_code`` (``n_codes`` values, Zipf-like); ``weight_kg``, numeric
    except for a few stray strings ("?", "unknown"); filler ``lab_01``…``lab_30`` and ``note_1``…
    ``note_4`` with 20–95 % missing. ``duplicate_names=True`` adds a second column named
    ``n_visits`` (its CSV then has a duplicated header, as some exports do).
    """
    n = check_int(n_rows, "n_rows", minimum=10)
    k_codes = check_int(n_codes, "n_codes", minimum=2)
    rng = check_random_state(random_state)
    frailty = rng.gamma(2.0, 0.5, n)                      # a hidden severity behind the signal
    p = 1 / (1 + np.exp(-(-2.0 + 0.9 * np.log1p(frailty * 3))))
    y = (rng.random(n) < p).astype(np.int64)

    def counts(mean: float, shape: float, tail: float, lift: float) -> np.ndarray:
        return _long_tailed_counts(rng, mean * (1 + lift * y) * frailty, shape, tail)

    cols: dict[str, Any] = {}
    cols["n_visits"] = counts(3.5, 1.2, 0.02, 0.8)
    cols["n_meds"] = counts(8.0, 2.0, 0.03, 0.3)
    cols["n_labs"] = counts(20.0, 3.0, 0.02, 0.1)
    cols["n_emergency"] = counts(0.4, 0.5, 0.01, 1.5)
    cols["n_inpatient"] = counts(0.6, 0.6, 0.01, 1.8)
    cols["n_outpatient"] = counts(0.5, 0.4, 0.01, 0.5)
    cols["n_procedures"] = counts(1.2, 1.0, 0.01, 0.0)
    cols["n_diagnoses"] = np.clip(counts(6.0, 4.0, 0.0, 0.2), 1, 16)

    def skewed(values: list[str], weights: list[float], shift: float = 0.0) -> np.ndarray:
        w = np.asarray(weights, float)
        probs0, probs1 = w / w.sum(), np.roll(w, 1) / w.sum()
        pick0 = rng.choice(len(values), n, p=probs0)
        pick1 = rng.choice(len(values), n, p=(1 - shift) * probs0 + shift * probs1)
        return np.asarray(values, dtype=object)[np.where(y == 1, pick1, pick0)]

    cols["admission_type"] = skewed(["emergency", "urgent", "elective", "newborn", "trauma", "other"],
                                    [50, 20, 20, 4, 4, 2], shift=0.3)
    cols["discharge"] = skewed(["home", "home care", "transfer", "rehab", "hospice", "left", "other", "unknown"],
                               [55, 15, 10, 8, 3, 2, 4, 3], shift=0.4)
    cols["gender"] = skewed(["Female", "Male"], [54, 46])
    bands = [f"[{10 * i}-{10 * (i + 1)})" for i in range(10)]
    cols["age_band"] = skewed(bands, [1, 1, 2, 4, 8, 14, 20, 24, 18, 8], shift=0.2)
    payer = skewed([f"P{i:02d}" for i in range(12)], [30, 15, 10, 8, 7, 6, 6, 5, 5, 4, 2, 2]).astype(object)
    payer[rng.random(n) < 0.35] = np.nan
    cols["payer"] = payer
    zipf = np.where(rng.random(n) < 0.5, np.minimum(rng.zipf(1.3, n), k_codes) - 1, rng.integers(0, k_codes, n))
    cols["diag_code"] = np.asarray([f"D{c:04d}" for c in rng.permutation(k_codes)], dtype=object)[zipf]
    weight = np.round(rng.normal(80, 15, n).clip(35, 200), 1).astype(object)
    stray = rng.choice(n, size=max(3, n // 1000), replace=False)
    weight[stray] = np.asarray(["?", "unknown", "?"] * len(stray), dtype=object)[: len(stray)]
    cols["weight_kg"] = weight
    for i in range(1, 31):                                  # lab values: mostly missing filler
        v = np.round(rng.lognormal(1 + i % 5, 0.4, n), 2)
        v[rng.random(n) < rng.uniform(0.2, 0.95)] = np.nan
        cols[f"lab_{i:02d}"] = v
    for i in range(1, 5):
        v = rng.choice(["none", "see chart", "follow-up", "n/a"], n).astype(object)
        v[rng.random(n) < 0.6] = np.nan
        cols[f"note_{i}"] = v
    frame = pd.DataFrame(cols)
    frame.insert(0, "encounter_id", np.arange(100_000, 100_000 + n))
    frame["readmitted"] = y
    if duplicate_names:
        extra = frame["n_visits"].to_numpy() + rng.integers(0, 2, n)
        frame.insert(frame.columns.get_loc("n_meds"), "n_visits", extra, allow_duplicates=True)
    return frame


# =========================================================================== customer table
#: the add-on services: "No internet service" exactly when ``InternetService`` is "No"
CUSTOMER_ADDONS = ("OnlineSecurity", "OnlineBackup", "DeviceProtection", "TechSupport", "StreamingTV",
                   "StreamingMovies")
#: the customer table's declared categories (telco-style columns; ``CUSTOMER_TREES`` groups some)
CUSTOMER_CATEGORIES: dict[str, tuple[str, ...]] = {
    "gender": ("Female", "Male"), "SeniorCitizen": ("No", "Yes"), "Partner": ("No", "Yes"),
    "Dependents": ("No", "Yes"), "PhoneService": ("No", "Yes"),
    "MultipleLines": ("No phone service", "No", "Yes"), "InternetService": ("No", "DSL", "Fiber optic"),
    **{addon: ("No internet service", "No", "Yes") for addon in CUSTOMER_ADDONS},
    "Contract": ("Month-to-month", "One year", "Two year"), "PaperlessBilling": ("No", "Yes"),
    "PaymentMethod": ("Electronic check", "Mailed check", "Bank transfer (automatic)", "Credit card (automatic)"),
}
#: the rules of the customer table, {column: (source column, source value, the column's value then)}:
#: every row has column == value exactly when source == source value
CUSTOMER_RULES = {**{addon: ("InternetService", "No", "No internet service") for addon in CUSTOMER_ADDONS},
                  "MultipleLines": ("PhoneService", "No", "No phone service")}
#: declared numeric columns: (lower, upper, integer, cut points of the public bins)
CUSTOMER_NUMERIC = {"tenure": (0, 72, True, (6, 12, 24, 36, 48, 60)),
                    "MonthlyCharges": (18.0, 120.0, False, (30.0, 45.0, 60.0, 75.0, 90.0, 105.0)),
                    "SupportCalls": (0, 60, True, tuple(long_tail_cuts(0, 60)))}
#: public groupings of categories (the other categorical columns are flat)
CUSTOMER_TREES = {"Contract": {"Month-to-month": None, "yearly": ["One year", "Two year"]},
                  "InternetService": {"No": None, "with internet": ["DSL", "Fiber optic"]},
                  "PaymentMethod": {"automatic": ["Bank transfer (automatic)", "Credit card (automatic)"],
                                    "manual": ["Electronic check", "Mailed check"]},
                  **{column: {value: None, "with service": ["No", "Yes"]}
                     for column, (_, _, value) in CUSTOMER_RULES.items()}}
CUSTOMER_COLUMNS = ["gender", "SeniorCitizen", "Partner", "Dependents", "tenure", "PhoneService", "MultipleLines",
                    "InternetService", *CUSTOMER_ADDONS, "Contract", "PaperlessBilling", "PaymentMethod",
                    "MonthlyCharges", "SupportCalls"]
CUSTOMER_CLASSES = ("No", "Yes")


def customer_schema(rules: bool = False) -> Schema:
    """The declared schema of :func:`make_customer_table` (every domain from the constants above,
    none from the rows). ``rules=True`` declares the rules :data:`CUSTOMER_RULES` instead of
    plain categories: the add-ons and ``MultipleLines`` become columns fixed by their source
    where it is "No" and free ("No" or "Yes") elsewhere (``Attribute.derived(..., otherwise=...)``)."""
    attributes = []
    for name in CUSTOMER_COLUMNS:
        if name in CUSTOMER_NUMERIC:
            lower, upper, integer, cuts = CUSTOMER_NUMERIC[name]
            taxonomy = cut_taxonomy(name, lower, upper, cuts, integer=integer)
            attributes.append(Attribute.numeric(name, lower, upper, taxonomy, integer=integer))
        elif rules and name in CUSTOMER_RULES:
            source, when, value = CUSTOMER_RULES[name]
            attributes.append(Attribute.derived(name, source, mapping={when: value}, otherwise=["No", "Yes"]))
        else:
            tree = {"Any": CUSTOMER_TREES.get(name, list(CUSTOMER_CATEGORIES[name]))}
            taxonomy = Taxonomy.from_spec(name, {"type": "categorical", "tree": tree})
            attributes.append(Attribute.categorical(name, CUSTOMER_CATEGORIES[name], taxonomy))
    return Schema(attributes, "Churn", CUSTOMER_CLASSES)


def make_customer_table(n_rows: int = 7000, random_state: RandomState = None, *,
                        rules: bool = False) -> tuple[pd.DataFrame, Schema]:
    """A generated telecom customer table with a table's logic (no download), and its declared schema.

    Modelled on the public telco churn tables: 19 predictors and the target ``"Churn"``
    ("No" about 73 %). Its structure is what synthetic tables tend to lose:

    * columns fixed by another (:data:`CUSTOMER_RULES`): the six add-on services are "No internet
      service" exactly when ``InternetService`` is "No", ``MultipleLines`` is "No phone service"
      exactly when ``PhoneService`` is "No";
    * strongly dependent pairs: ``Contract`` and ``tenure`` (month-to-month customers are recent),
      ``MonthlyCharges`` and the services (a price per service plus noise), ``InternetService``
      and the streaming add-ons, ``Partner`` and ``Dependents``;
    * the long-tailed count ``SupportCalls``; churn depends on contract, tenure, fibre, payment
      by electronic check, missing security or support, age and support calls.

    ``rules=True`` returns the schema with the rules declared (:func:`customer_schema`).

    >>> frame, schema = make_customer_table(500, random_state=0)
    >>> frame.shape, schema.target, len(schema.predictors)
    ((500, 20), 'Churn', 19)
    >>> bool(((frame["InternetService"] == "No") == (frame["TechSupport"] == "No internet service")).all())
    True
    """
    n = check_int(n_rows, "n_rows", minimum=2)
    rng = check_random_state(random_state)

    def yes(p: Any) -> np.ndarray:
        return rng.random(n) < p

    def pick(values: Sequence[str], probs: Any) -> np.ndarray:
        """One of ``values`` per row, with probabilities ``probs`` (one list, or one list per row)."""
        cumulative = np.cumsum(np.atleast_2d(probs), axis=1)[:, :-1]
        return np.asarray(values, dtype=object)[(rng.random(n)[:, None] > cumulative).sum(axis=1)]

    contract = pick(CUSTOMER_CATEGORIES["Contract"], (0.55, 0.21, 0.24))
    m2m = contract == "Month-to-month"
    months = np.select([m2m, contract == "One year"], [rng.exponential(16.0, n), rng.normal(42.0, 16.0, n)],
                       rng.normal(57.0, 14.0, n))
    tenure = np.clip(np.round(months), 0, 72).astype(np.int64)
    internet = pick(CUSTOMER_CATEGORIES["InternetService"], (0.22, 0.34, 0.44))
    online, fibre = internet != "No", internet == "Fiber optic"
    phone = yes(0.9) | ~online                             # everyone has phone or internet
    cols: dict[str, Any] = {"gender": np.where(yes(0.5), "Male", "Female"),
                            "SeniorCitizen": yes(0.16)}
    cols["Partner"] = yes(np.where(m2m, 0.35, 0.62))
    cols["Dependents"] = yes(np.where(cols["Partner"], 0.5, 0.12))
    cols["tenure"], cols["PhoneService"] = tenure, phone
    cols["MultipleLines"] = np.where(phone, np.where(yes(0.25 + 0.4 * tenure / 72), "Yes", "No"),
                                     "No phone service")
    cols["InternetService"] = internet
    loyal = 0.3 * tenure / 72
    for addon, dsl, fib in zip(CUSTOMER_ADDONS, (0.5, 0.4, 0.4, 0.5, 0.3, 0.3), (0.2, 0.4, 0.4, 0.2, 0.55, 0.55)):
        cols[addon] = np.where(online, np.where(yes(np.where(fibre, fib, dsl) + loyal), "Yes", "No"),
                               "No internet service")
    cols["Contract"] = contract
    cols["PaperlessBilling"] = yes(0.45 + 0.25 * fibre)
    cols["PaymentMethod"] = pick(CUSTOMER_CATEGORIES["PaymentMethod"],
                                 np.where(m2m[:, None], [0.50, 0.22, 0.14, 0.14], [0.12, 0.24, 0.32, 0.32]))
    price = (20.0 * phone + 5.0 * (cols["MultipleLines"] == "Yes") + np.where(fibre, 50.0, 25.0 * online)
             + sum((10.0 if a.startswith("Streaming") else 5.0) * (cols[a] == "Yes") for a in CUSTOMER_ADDONS))
    cols["MonthlyCharges"] = np.round(np.clip(price + rng.normal(0.0, 2.5, n), 18.0, 120.0), 2)
    calls = _long_tailed_counts(rng, 0.8 * (1 + 0.8 * fibre) * (1 + 0.5 * m2m), 0.8, 0.02)
    cols["SupportCalls"] = np.minimum(calls, CUSTOMER_NUMERIC["SupportCalls"][1])
    logit = (-2.85 + 1.5 * m2m - 0.03 * tenure + 0.9 * fibre + 0.6 * (cols["PaymentMethod"] == "Electronic check")
             + 0.4 * (cols["OnlineSecurity"] == "No") + 0.4 * (cols["TechSupport"] == "No")
             + 0.4 * cols["SeniorCitizen"] + 0.3 * cols["PaperlessBilling"] + 0.3 * np.log1p(cols["SupportCalls"]))
    churn = yes(1 / (1 + np.exp(-logit)))
    frame = pd.DataFrame(cols)
    for name in ("SeniorCitizen", "Partner", "Dependents", "PhoneService", "PaperlessBilling"):
        frame[name] = np.where(frame[name], "Yes", "No")
    frame["Churn"] = np.where(churn, "Yes", "No")
    for name in frame.columns:          # one string dtype for every categorical column
        if name not in CUSTOMER_NUMERIC:
            frame[name] = frame[name].astype(str)
    return frame, customer_schema(rules)


# =========================================================================== splitting
def _check_frame_and_schema(frame: Any, schema: Any) -> None:
    """The checks both splitters run first: a DataFrame and a Schema whose columns it holds."""
    check_frame(frame, "frame")
    check_schema(schema, taxonomies=False)
    missing = [c for c in schema.predictors + [schema.target] if c not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks the schema's column(s) {missing}")


def train_test_split(frame: pd.DataFrame, schema: Schema, test_size: float | int = 0.2,
                     random_state: RandomState = None
                     ) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series, pd.Series]:
    """Stratified, seeded split of a full table into ``X_train, X_test, y_train, y_test`` (copies).

    ``test_size`` is a fraction in (0, 1) or a number of rows, as in scikit-learn.
    """
    from sklearn.model_selection import train_test_split as _sk_split

    _check_frame_and_schema(frame, schema)
    if isinstance(test_size, bool) or not isinstance(test_size, (int, float, np.integer, np.floating)):
        raise TypeError(f"test_size must be a fraction or a row count, got {type(test_size).__name__}")
    if isinstance(test_size, (float, np.floating)) and not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must be a fraction in (0, 1) or a row count, got {test_size}")
    rng = check_random_state(random_state)
    seed = int(rng.integers(0, 2**32 - 1))  # scikit-learn takes an int seed, not a Generator
    X, y = frame[schema.predictors], frame[schema.target]
    X_train, X_test, y_train, y_test = _sk_split(X, y, test_size=test_size, random_state=seed, stratify=y)
    return X_train.copy(), X_test.copy(), y_train.copy(), y_test.copy()


def bernoulli_split(frame: pd.DataFrame, schema: Schema, test_fraction: float = 0.2,
                    random_state: RandomState = None
                    ) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series, pd.Series]:
    """Split with membership decided per record: each row goes to the test part independently
    with probability ``test_fraction`` (a public number), else to the training part.

    Use it before a private fit: with this split, adding or removing one record changes the
    training part by at most that record (add/remove neighbours), so an ε-DP fit on the training
    part is ε-DP for the whole table (Poisson subsampling only helps). A fixed-size or stratified
    split is not: adding a record can push another one out of the training part, a substitution,
    which costs 2ε. Neither part is guaranteed to be non-empty or to hold every class.
    ``test_fraction`` = 0 puts every row in training. Returns copies: X_train, X_test, y_train, y_test.
    """
    _check_frame_and_schema(frame, schema)
    fraction = check_fraction(test_fraction, "test_fraction", low_open=False, high_closed=False)
    rng = check_random_state(random_state)
    test = rng.random(len(frame)) < fraction
    X, y = frame[schema.predictors], frame[schema.target]
    return X[~test].copy(), X[test].copy(), y[~test].copy(), y[test].copy()
