"""Grading a student's mechanism: compare it with the reference mechanism, then audit it.

An "implement" exercise asks for a specified mechanism: Laplace noise of scale b = Δ/ε on class
counts (01.3), on TC scores before a threshold (05.5), on every cell of a histogram before a
threshold (06.3); Gaussian noise of the classical σ on a vector (12.2); AboveThreshold's answers
(14.4). Its check (:func:`grade_mechanism`) does three things, and refuses the answer at the
first that fails, saying why:

1. **The student's own code.** The student's function runs under :func:`guarded_call` (the first
   :data:`WATCHED_CALLS` calls on every input, then one call in ten), which refuses a function that
   calls into dpexplore (the package's own implementation of what was asked), apart from the
   building blocks the exercise allows.
2. **The reference comparison** (:func:`compare_with_reference`): the function runs many times on
   each input of a battery (:class:`Case`) that the check generates when it runs, with sizes
   from a handful of records to 10^5, counts from 0 to 10^4 and thresholds a full Δ from a
   count. Each released value (a count in tens, a selected feature, a kept cell's noisy count)
   is turned back into the noise it implies, in units of the reference scale (b, or σ), and falls
   into one of a few categories: intervals of the standardised noise Z, whose exact probabilities
   under the reference mechanism are known from its :class:`Reference` (:data:`LAPLACE`,
   :data:`GAUSSIAN`, or :func:`categorical_reference` for a release that is one of finitely many
   outcomes, such as the position of AboveThreshold's first ⊤). Three families of tests compare
   the observed counts with them:

   * *per input*: an exact two-sided binomial test for every category of every group of units
     with the same reference distribution, within each input and pooled across inputs. A
     release equal to the true count (its own category of width 2·10^-6 around Z = 0), a class
     never reported, a branch on the size or on the magnitude all show here;
   * *noise scale*: the score statistic for a common scale factor s (b → s·b), over all units
     and within buckets of magnitude (the true count) and of input size; it is the locally most
     powerful test of s = 1 and detects a scale 5 % off (the power is computed for the battery
     that runs and stated in the verdict);
   * *independence*: the products of the centred, standardised indicators Z > m of disjoint
     pairs of units of one release: noise shared between cells (noise on the threshold, PTT's
     leak) makes them positive.

   The false-refusal rate of a correct answer is bounded, not estimated: exact binomial tails,
   Bernstein's inequality for the sums of bounded scores (their variance is exact, computed from
   the reference), and a union bound over every test give P(refuse a correct answer) ≤
   :data:`FALSE_REFUSAL` = 10^-4, the audit below included.
3. **The privacy audit** (:func:`dpexplore.audit.privacy_loss`) on neighbouring pairs chosen at
   the worst places (a count crossing a rounding edge or τ): it gives the privacy verdict, and
   the same audit must flag a planted leak on the same pairs, or a pass would mean nothing.

A pass means: indistinguishable from the reference mechanism on this battery, and no leak found
on these pairs. That is evidence, not a proof; the proof is the student's sensitivity argument.
Every random draw comes from a fixed seed: the same answer always gets the same verdict.
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from scipy.special import ndtr

from ..audit import privacy_loss
from ..mechanisms import laplace_cdf, laplace_pdf
from ._core import Verdict, not_yet, right_if

__all__ = ["Refusal", "Reference", "GAUSSIAN", "categorical_reference", "Case", "AuditPlan", "guarded_call",
           "grade_mechanism", "event"]

FALSE_REFUSAL = 1e-4
"""Upper bound on the probability that a check refuses a correct answer (union bound below)."""
_ALPHA = {"binomial": 0.4e-4, "scale": 0.25e-4, "independence": 0.15e-4, "audit": 0.2e-4}
SCALE_OFF = 1.05
"""The noise-scale error whose detection probability a passing verdict states."""
WATCHED_CALLS = 50        # calls watched for package calls on every input (then one in ten)
SCORE_CLIP = 6.0          # scores beyond ±6 (categories of probability < e^-6) are clipped: bounded terms
ZERO_WIDTH = 1e-6         # half-width, in units of b, of the category "released the exact true value"
MAGNITUDES = ((0, 1, "counts 0–1"), (2, 99, "counts 2–99"), (100, 999, "counts 100–999"),
              (1000, math.inf, "counts of 1,000 or more"))
SIZES = ((0, 100, "inputs of at most 100 records"), (101, 9_999, "inputs of 101 to 9,999 records"),
         (10_000, math.inf, "inputs of 10,000 records or more"))


class Refusal(Exception):
    """A reason to refuse an answer, in words for the student."""


# ============================================================================ 1. the student's own code
_PACKAGE = os.path.join(str(Path(__file__).resolve().parents[1]), "")


def guarded_call(func: Callable, args: tuple, *, allowed: Iterable[Callable] = (), watch: bool = True) -> Any:
    """``func(*args)``, refused (:class:`Refusal`) when it raises or (``watch``) calls any function
    of dpexplore other than ``allowed`` (and what those call).

    The calls are watched with :func:`sys.setprofile` while ``func`` runs, so a function imported
    under another name, wrapped in ``functools.partial`` or copied with its code is seen too.

    >>> from dpexplore.mechanisms import laplace_scale
    >>> guarded_call(lambda eps: 1 / eps, (0.5,))
    2.0
    >>> guarded_call(lambda eps: laplace_scale(epsilon=eps), (0.5,))
    Traceback (most recent call last):
    ...
    dpexplore.lab._grading.Refusal: your function calls dpexplore.mechanisms.laplace_scale, the package's own code: ...
    """
    if not watch:
        try:
            return func(*args)
        except Exception as error:  # noqa: BLE001 -- the student's error becomes the reason shown
            raise _error_refusal(error) from None
    allowed_codes = {f.__code__ for f in allowed}
    inside: list = []            # frames of allowed functions being run
    offender: list[str] = []

    def watcher(frame, event, arg):
        if event == "call":
            if inside or offender:
                return
            code = frame.f_code
            if code in allowed_codes or code.co_name in ("<module>", "__getattr__"):   # imports are no calls
                inside.append(frame)
            elif code.co_filename.startswith(_PACKAGE):
                offender.append(f"{frame.f_globals.get('__name__', 'dpexplore')}.{code.co_qualname}")
        elif event == "return" and inside and frame is inside[-1]:
            inside.pop()

    previous = sys.getprofile()
    previous = previous if callable(previous) else None   # a profiler set from C (cProfile) is stopped
    sys.setprofile(watcher)
    try:
        out = func(*args)
    except Exception as error:  # noqa: BLE001 -- the student's error becomes the reason shown
        sys.setprofile(previous)
        if offender:
            raise _package_refusal(offender[0]) from None
        raise _error_refusal(error) from None
    sys.setprofile(previous)
    if offender:
        raise _package_refusal(offender[0])
    return out


def _error_refusal(error: Exception) -> Refusal:
    text = str(error).splitlines()[0][:160] if str(error) else ""
    return Refusal(f"your function raised {type(error).__name__}{': ' + text if text else ''}.")


def _package_refusal(name: str) -> Refusal:
    return Refusal(f"your function calls {name}, the package's own code: the exercise asks you to write it "
                   "yourself, with numpy and the arguments your function is given.")


# ============================================================================ 2. the reference comparison
@dataclass(frozen=True, eq=False)
class Reference:
    """The reference distribution of a unit's standardised release Z, as the tests need it.

    ``cdf(z)`` is P(Z ≤ z) (0 and 1 at ∓inf), and ``scale_derivative(z)`` is −∂/∂(log s) of
    P(Z ≤ z) when every noise scale of the reference is multiplied by s, at s = 1 (for a scale
    family, f(z)·z): the score of the noise-scale test. Units whose categories have the same edges
    and the same ``name`` share one distribution (they are pooled), so a reference that depends
    on the input (:func:`categorical_reference`) has a name of its own.
    """

    name: str
    cdf: Callable[[np.ndarray], np.ndarray]
    scale_derivative: Callable[[np.ndarray], np.ndarray]


def _times_z(density: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """z ↦ f(z)·z, 0 at ±inf: the scale derivative of a scale family with density f."""
    def derivative(z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        finite = np.isfinite(z)
        safe = np.where(finite, z, 0.0)
        return np.where(finite, density(safe) * safe, 0.0)
    return derivative


LAPLACE = Reference("the standard Laplace distribution",
                    lambda z: np.asarray(laplace_cdf(np.asarray(z, dtype=float), epsilon=1.0)),
                    _times_z(lambda z: np.asarray(laplace_pdf(z, epsilon=1.0))))
"""Z = noise / b for Laplace noise of scale b."""
GAUSSIAN = Reference("the standard normal distribution", lambda z: ndtr(np.asarray(z, dtype=float)),
                     _times_z(lambda z: np.exp(-z * z / 2) / math.sqrt(2 * math.pi)))
"""Z = noise / σ for Gaussian noise of standard deviation σ."""

_SCALE_STEP = 1e-4      # log-scale step of the central difference in categorical_reference


def categorical_reference(name: str, probabilities: Callable[[float], np.ndarray]) -> Reference:
    """The reference of a release that is one of finitely many outcomes 0, 1, …, K − 1 (decoded as
    that number): ``probabilities(s)`` gives their exact probabilities when every noise scale of the
    reference mechanism is multiplied by s. The categories' edges are then k + ½; the scale
    derivative is a central difference in log s.

    >>> coin = categorical_reference("a coin", lambda s: np.array([1 - s / 2, s / 2]))   # 1: likelier with noise
    >>> coin.cdf(np.array([-np.inf, 0.5, np.inf])).tolist(), coin.scale_derivative(np.array([0.5])).round(6).tolist()
    ([0.0, 0.5, 1.0], [0.5])
    """
    at_one = np.asarray(probabilities(1.0), dtype=float)
    up, down = (np.asarray(probabilities(math.exp(h)), dtype=float) for h in (_SCALE_STEP, -_SCALE_STEP))

    def cumulative(p: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        table = np.concatenate([[0.0], np.cumsum(p)])
        table[-1] = 1.0

        def cdf(z: np.ndarray) -> np.ndarray:
            z = np.asarray(z, dtype=float)
            k = np.floor(np.clip(z, -1.0, p.size - 1.0)).astype(int) + 1      # outcomes ≤ z: 0 … K
            return table[k]
        return cdf

    cdf_up, cdf_down = cumulative(up), cumulative(down)
    return Reference(name, cumulative(at_one), lambda z: -(cdf_up(z) - cdf_down(z)) / (2 * _SCALE_STEP))


@dataclass
class Case:
    """One input of the battery and how to read the student's releases on it.

    ``fresh()`` returns the arguments (before the rng) as new objects for every call (a function
    may change its input); ``decode(output)`` returns, for each unit of the release (a class, a
    feature, a cell), the standardised noise Z it implies (±inf for a one-sided category), or
    raises :class:`Refusal` for an output the reference can never give. ``edges`` holds each
    unit's categories (rows of increasing edges from -inf to +inf, padded with +inf);
    ``describe(unit, k)`` says in words what category k of a unit is. ``magnitude`` (the true
    value of each unit) and ``size`` (records in the input) place the units in buckets.
    ``reference`` is the distribution of Z under the reference mechanism.
    """

    label: str
    fresh: Callable[[], tuple]
    decode: Callable[[Any], np.ndarray]
    edges: np.ndarray
    magnitude: np.ndarray
    size: int
    draws: int
    describe: Callable[[int, int], str]
    unit_names: Sequence[str] = ()
    reference: Reference = LAPLACE


@dataclass
class _Tested:
    """One statistical test's outcome: ``excess`` = log(p-value bound / its threshold) (< 0: refuse)."""

    excess: float
    message: str


@dataclass
class Comparison:
    """The outcome of :func:`compare_with_reference`."""

    passed: bool
    reason: str
    inputs: int
    releases: int
    smallest: int
    largest: int
    power: float


def _bernstein_threshold(variance: float, bound: float, alpha: float) -> float:
    """t with 2·exp(-t² / (2(V + B·t/3))) = alpha: |sum| ≥ t has probability ≤ alpha under the reference."""
    L = math.log(2 / alpha)
    a = 2 * L * bound / 3
    return (a + math.sqrt(a * a + 8 * L * variance)) / 2


def _bernstein_excess(total: float, variance: float, bound: float, alpha: float) -> float:
    """log(p-value bound / alpha) for an observed centred sum ``total``."""
    if variance <= 0:
        return math.inf
    log_p = math.log(2) - total * total / (2 * (variance + bound * abs(total) / 3))
    return min(log_p, 0.0) - math.log(alpha)


def _binomial_log_p(observed: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Log of the exact two-sided binomial p-value min(1, 2·min(P[X ≤ o], P[X ≥ o])). Where it
    underflows (below e^-745, far beyond any threshold) the Chernoff bound -n·KL(o/n ‖ p) stands
    in, so that the most extreme deviations still rank first."""
    from scipy.stats import binom

    with np.errstate(divide="ignore"):
        low = binom.logcdf(observed, n, p)
        high = binom.logsf(observed - 1, n, p)
    log_p = np.minimum(0.0, math.log(2) + np.minimum(low, high))
    q = observed / n
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = (np.where(q > 0, q * np.log(q / p), 0.0)
              + np.where(q < 1, (1 - q) * np.log((1 - q) / (1 - p)), 0.0))
    return np.where(np.isneginf(log_p), -n * np.nan_to_num(kl, nan=np.inf, posinf=np.inf), log_p)


def compare_with_reference(func: Callable, cases: Sequence[Case], *, seed: int, mechanism: str,
                           allowed: Iterable[Callable] = (), unit: str = "unit") -> Comparison:
    """Run ``func`` ``case.draws`` times on every case (arguments ``case.fresh() + (rng,)``) and
    compare its releases with the reference's exact distribution (module docstring, step 2).

    ``mechanism`` names the reference in messages ("the Laplace mechanism with b = Δ/ε");
    ``unit`` names one unit of a release ("class", "feature", "cell"). Raises :class:`Refusal`
    from :func:`guarded_call` or a case's ``decode``. The per-input tests of a case run as soon as
    its releases are in (with the thresholds of the whole battery), so a leak stops the run early.
    """
    allowed = tuple(allowed)
    rng = np.random.default_rng(seed)
    threshold = math.log(_ALPHA["binomial"] / _binomial_test_count(cases))
    collected = []
    for ci, case in enumerate(cases):
        z = np.empty((case.draws, case.edges.shape[0]))
        for d in range(case.draws):
            out = guarded_call(func, case.fresh() + (rng,), allowed=allowed,
                               watch=d < WATCHED_CALLS or d % 10 == 0)
            try:
                z[d] = case.decode(out)
            except Refusal as refusal:
                raise Refusal(f"on {case.label}: {refusal}") from None
        collected.append(_categorise(case, z))
        failed = _binomial_check(_case_groups(ci, case, collected[-1]), cases, threshold, unit)
        if failed[0].excess < 0:
            return _summary(cases[:ci + 1], failed[0].message, power=math.nan)
    return _decide(cases, collected, threshold, mechanism=mechanism, unit=unit)


@dataclass
class _Observed:
    counts: np.ndarray        # (units, K) how often each category came out
    probs: np.ndarray         # (units, K) its reference probability
    slope: np.ndarray         # (units, K) dP/d(log s) at s = 1
    index: np.ndarray         # (draws, units) the category of each draw


def _categorise(case: Case, z: np.ndarray) -> _Observed:
    edges = case.edges
    units, width = edges.shape[0], edges.shape[1] - 1
    index = np.clip((edges[None, :, :] < z[:, :, None]).sum(axis=2) - 1, 0, width - 1)
    counts = np.zeros((units, width), dtype=np.int64)
    np.add.at(counts, (np.broadcast_to(np.arange(units), index.shape), index), 1)
    cdf, slope_at = case.reference.cdf(edges), case.reference.scale_derivative(edges)
    return _Observed(counts, np.clip(np.diff(cdf, axis=1), 0.0, 1.0), slope_at[:, :-1] - slope_at[:, 1:], index)


def _summary(cases: Sequence[Case], reason: str, power: float) -> Comparison:
    sizes = [c.size for c in cases]
    return Comparison(not reason, reason, len(cases), sum(c.draws for c in cases), min(sizes), max(sizes), power)


def _decide(cases: Sequence[Case], observed: Sequence[_Observed], threshold: float, *, mechanism: str,
            unit: str) -> Comparison:
    groups = [g for ci, (case, obs) in enumerate(zip(cases, observed)) for g in _case_groups(ci, case, obs)]
    tested = _binomial_check(groups + _pooled_groups(groups), cases, threshold, unit)
    scale, power = _scale_tests(cases, observed, mechanism)
    tested += scale + _independence_tests(cases, observed, unit)
    worst = min(tested, key=lambda t: t.excess)
    return _summary(cases, worst.message if worst.excess < 0 else "", power)


# ---------------------------------------------------------------------------- per input: exact binomial tests
@dataclass
class _Group:
    """Units with one reference distribution: within case ``case`` (``pooled`` False) or, pooled,
    across the cases (``case`` is one of them, ``unit`` its representative)."""

    case: int
    unit: int
    key: bytes
    probs: np.ndarray
    counts: np.ndarray
    n: int
    units: int = 1
    pooled: bool = False


def _key(case: Case, row: np.ndarray) -> bytes:
    """What units with one reference distribution share: the reference and the category edges."""
    return case.reference.name.encode() + b"|" + row.tobytes()


def _case_groups(ci: int, case: Case, obs: _Observed) -> list[_Group]:
    keys, first, inverse = np.unique(case.edges, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    return [_Group(ci, int(first[g]), _key(case, keys[g]), obs.probs[first[g]], obs.counts[inverse == g].sum(axis=0),
                   case.draws * int((inverse == g).sum()), int((inverse == g).sum())) for g in range(keys.shape[0])]


def _pooled_groups(groups: Sequence[_Group]) -> list[_Group]:
    """The groups of several cases with identical categories, pooled (more releases: more power)."""
    by_key: dict[bytes, list[_Group]] = {}
    for g in groups:
        by_key.setdefault(g.key, []).append(g)
    return [_Group(same[0].case, same[0].unit, key, same[0].probs, sum(g.counts for g in same),
                   sum(g.n for g in same), sum(g.units for g in same), pooled=True)
            for key, same in by_key.items() if len(same) > 1]


def _binomial_test_count(cases: Sequence[Case]) -> int:
    """How many binomial tests the battery makes (per case and pooled groups, every category)."""
    keys = [np.unique(case.edges, axis=0) for case in cases]
    rows: dict[bytes, int] = {}
    for case, k in zip(cases, keys):
        for row in k:
            rows[_key(case, row)] = rows.get(_key(case, row), 0) + 1
    width = max(case.edges.shape[1] - 1 for case in cases)
    return width * (sum(k.shape[0] for k in keys) + sum(1 for n in rows.values() if n > 1))


def _percent(p: float) -> str:
    """A probability as a percentage with enough digits to tell it from 0 (``"0.0012 %"``)."""
    if p == 0:
        return "0 %"
    digits = max(1, min(12, 1 - math.floor(math.log10(100 * p)))) if p < 0.1 else 1
    return f"{100 * p:.{digits}f} %"


def _plural(unit: str) -> str:
    return unit + ("es" if unit.endswith("s") else "s")


def _binomial_check(groups: Sequence[_Group], cases: Sequence[Case], threshold: float, unit: str) -> list[_Tested]:
    """An exact two-sided binomial test of every category of every group, at the Bonferroni
    threshold of the battery."""
    out = []
    for g in groups:
        log_p = _binomial_log_p(g.counts, g.n, g.probs)
        excess = np.where(g.counts > g.n * g.probs, log_p, np.inf)    # say what came out too often, if
        k = int(np.argmin(excess)) if excess.min() < threshold else int(np.argmin(log_p))   # that fails
        if log_p[k] < threshold:
            case = cases[g.case]
            where = (f"on the {g.n:,} releases of {_plural(unit)} like this one across the inputs (e.g. {case.label})"
                     if g.pooled else f"on {case.label}")
            name = case.unit_names[g.unit] if len(case.unit_names) else f"{unit} {g.unit}"
            others = g.units - 1
            alike = "" if others == 0 or g.pooled else \
                f" (and {others} other {unit if others == 1 else _plural(unit)} like it)"
            out.append(_Tested(float(log_p[k] - threshold),
                               f"{where}, {name}{alike} {case.describe(g.unit, k)} in {int(g.counts[k]):,} of "
                               f"{g.n:,} releases ({_percent(g.counts[k] / g.n)}), where the reference mechanism "
                               f"does so in {_percent(g.probs[k])} of them."))
    return sorted(out, key=lambda t: t.excess) or [_Tested(math.inf, "")]


# ---------------------------------------------------------------------------- noise scale: score tests
def _scale_tests(cases: Sequence[Case], observed: Sequence[_Observed], mechanism: str) -> tuple[list[_Tested], float]:
    """The clipped score statistic for a common scale factor, overall and by bucket; returns the
    tests and the power to detect a scale :data:`SCALE_OFF` times too small or too large."""
    parts = []   # per unit: centred sum, variance, information, magnitude, size
    for case, obs in zip(cases, observed):
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(obs.probs > 0, obs.slope / np.where(obs.probs > 0, obs.probs, 1.0), 0.0)
        clipped = np.clip(score, -SCORE_CLIP, SCORE_CLIP)
        mean = (obs.probs * clipped).sum(axis=1)
        total = (obs.counts * clipped).sum(axis=1) - case.draws * mean
        variance = case.draws * ((obs.probs * clipped ** 2).sum(axis=1) - mean ** 2)
        information = case.draws * (obs.slope * clipped).sum(axis=1)
        parts.append((total, variance, information, case.magnitude.astype(float), np.full(total.size, case.size)))
    total, variance, information, magnitude, size = (np.concatenate(x) for x in zip(*parts))
    groups = [("", np.ones(total.size, dtype=bool))]
    groups += [(f" on {label}", (magnitude >= lo) & (magnitude <= hi)) for lo, hi, label in MAGNITUDES]
    groups += [(f" on {label}", (size >= lo) & (size <= hi)) for lo, hi, label in SIZES]
    alpha = _ALPHA["scale"] / len(groups)
    bound = 2 * SCORE_CLIP
    out = []
    for where, members in groups:
        t, v = float(total[members].sum()), float(variance[members].sum())
        excess = _bernstein_excess(t, v, bound, alpha)
        if excess < 0:
            how = ("less noise than" if t < 0 else "more noise than")
            verdict = "that is a leak" if t < 0 else "private, but not the mechanism asked for"
            out.append(_Tested(excess, f"your releases carry {how} {mechanism}{where} (the grader's scale test: "
                                       f"{t / math.sqrt(v):+.1f} standard deviations): {verdict}."))
    if not out:
        out.append(_Tested(math.inf, ""))
    v, info = float(variance.sum()), float(information.sum())
    threshold = _bernstein_threshold(v, bound, alpha)
    shift = math.log(SCALE_OFF) * info
    power = _normal_cdf((shift - threshold) / math.sqrt(v)) if v > 0 else 0.0
    return out, power


def _normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


# ---------------------------------------------------------------------------- independence of the units
_SPLIT_RANGE = (0.1, 0.9)


def _independence_tests(cases: Sequence[Case], observed: Sequence[_Observed], unit: str) -> list[_Tested]:
    """Σ (E1 − p1)(E2 − p2)/sd over disjoint pairs of units of each release, E = 1[Z > m] with m
    the category edge nearest 0: independent terms of mean 0 and variance 1 under the reference,
    bounded by 9 (p within [0.1, 0.9])."""
    sums, counts, labels = [], [], []
    for case, obs in zip(cases, observed):
        edges = case.edges
        inner = np.where(np.isfinite(edges[:, 1:-1]), edges[:, 1:-1], np.inf)
        if inner.shape[1] == 0:
            continue
        split = np.argmin(np.abs(inner), axis=1) + 1                    # category index of the lower edge m
        p = 1.0 - case.reference.cdf(edges[np.arange(edges.shape[0]), split])
        eligible = np.flatnonzero((p >= _SPLIT_RANGE[0]) & (p <= _SPLIT_RANGE[1]))
        if eligible.size < 2:
            continue
        above = obs.index[:, eligible] >= split[eligible]
        centred = (above - p[eligible]) / np.sqrt(p[eligible] * (1 - p[eligible]))
        half = eligible.size // 2
        total = 0.0
        for d in range(case.draws):       # a different pairing in every release
            order = np.roll(np.arange(eligible.size), d)
            row = centred[d, order]
            total += float((row[:2 * half:2] * row[1:2 * half:2]).sum())
        sums.append(total)
        counts.append(half * case.draws)
        labels.append(case.label)
    if not sums:
        return [_Tested(math.inf, "")]
    alpha = _ALPHA["independence"] / (len(sums) + 1)
    out = [_Tested(_bernstein_excess(s, n, 9.0, alpha),
                   f"on {label}, the noise of different {_plural(unit)} moves together "
                   f"({s / math.sqrt(n):+.1f} standard deviations): each {unit} needs its own independent draw.")
           for s, n, label in zip(sums, counts, labels)]
    total, n = float(sum(sums)), float(sum(counts))
    out.append(_Tested(_bernstein_excess(total, n, 9.0, alpha),
                       f"the noise of different {_plural(unit)} of one release moves together "
                       f"({total / math.sqrt(n):+.1f} standard deviations): each {unit} needs its own independent "
                       "draw."))
    return out


# ============================================================================ 3. the privacy audit
def event(mask: Any) -> str:
    """A selected-or-kept mask as one hashable audit event, e.g. ``"10"`` (first kept, second not)."""
    flags = np.asarray(mask)
    if flags.ndim != 1 or flags.size == 0:
        raise ValueError("the release must be a 1-D array with one entry per feature or cell")
    return "".join("1" if bool(f) else "0" for f in flags)


@dataclass(frozen=True, eq=False)
class AuditPlan:
    """The privacy audit of an exercise: ``mechanism(answer)`` turns the student's function into an
    audit mechanism ``(data, rng) -> event``; ``pairs`` are (label, D, D') neighbours; the audit
    must flag ``planted_leak`` (a function like the student's) on at least one of them."""

    mechanism: Callable[[Callable], Callable[[Any, np.random.Generator], Any]]
    pairs: tuple
    epsilon: float
    planted_leak: Callable
    n_samples: int = 2_000
    seed: int = 0


def audit_pairs(release: Callable[[Any, np.random.Generator], Any], plan: AuditPlan) -> tuple[float, str]:
    """The largest lower bound on ε over the plan's pairs (the audit stops at the first pair above
    the plan's ε), and the pair where it is reached. Each pair's audit has confidence
    1 − α/(number of pairs): a correct answer is flagged with probability at most α = 2·10^-5
    (:data:`FALSE_REFUSAL`'s share)."""
    confidence = 1.0 - _ALPHA["audit"] / len(plan.pairs)
    worst, where = -math.inf, ""
    for i, (label, data, neighbour) in enumerate(plan.pairs):
        bound = privacy_loss(release, data, neighbour, n_samples=plan.n_samples, confidence=confidence,
                             random_state=plan.seed + i).epsilon_lower
        if bound > worst:
            worst, where = bound, label
        if worst > plan.epsilon:
            break
    return worst, where


@lru_cache(maxsize=None)
def _flags_planted_leak(plan: AuditPlan) -> bool:
    bound, _ = audit_pairs(plan.mechanism(plan.planted_leak), plan)
    return bound > plan.epsilon


def grade_mechanism(answer: Any, *, cases: Callable[[], Sequence[Case]], mechanism: str, unit: str,
                    audit: AuditPlan, seed: int, allowed: Iterable[Callable] = (),
                    not_callable: str = "give a function (a def), not its result.") -> Verdict:
    """The verdict on a student's mechanism: :func:`compare_with_reference` on ``cases()`` (built
    when the check runs), then the privacy audit, whose planted leak must be flagged.

    A right verdict fills the exercise's ``why`` with ``evidence`` (what the pass means) and the
    figures behind it; a refusal gives the first reason found.
    """
    if not callable(answer):
        return not_yet(not_callable)
    if not _flags_planted_leak(audit):
        raise RuntimeError("the audit missed the planted leak: the check itself is broken")
    try:
        comparison = compare_with_reference(answer, cases(), seed=seed, mechanism=mechanism,
                                            allowed=allowed, unit=unit)
    except Refusal as refusal:
        return not_yet(str(refusal))
    if not comparison.passed:
        return not_yet(comparison.reason)
    try:
        loss, where = audit_pairs(audit.mechanism(answer), audit)
    except Refusal as refusal:
        return not_yet(str(refusal))
    if loss > audit.epsilon:
        return not_yet(f"the privacy audit finds a loss of at least {loss:.2f} > ε = {audit.epsilon:g} on {where}: "
                       "a leak.")
    evidence = (f"your releases are indistinguishable from {mechanism} on {comparison.inputs} inputs of "
                f"{comparison.smallest:,} to {comparison.largest:,} records ({comparison.releases:,} releases; "
                f"a noise scale {round((SCALE_OFF - 1) * 100)} % off would be refused with probability "
                f"{comparison.power:.3f}), and the privacy audit finds no loss above ε = {audit.epsilon:g} on "
                f"{len(audit.pairs)} neighbouring pairs (the same audit flags the planted leak). This is "
                "evidence, not a proof: now argue the sensitivity.")
    return right_if(True, evidence=evidence, inputs=comparison.inputs, releases=comparison.releases,
                    power=comparison.power, pairs=len(audit.pairs))


def zero_one_release(output: Any, n: int, *, unit: str, hint: str) -> np.ndarray:
    """A release of one 0/1 value per ``unit`` (n of them: True/False count too) as int64, or a
    :class:`Refusal` saying what is wrong with it; ``hint`` tells how to make the values 0/1.

    >>> zero_one_release([True, False], 2, unit="person", hint="").tolist()
    [1, 0]
    """
    from .._validation import is_zero_one

    x = np.asarray(output)
    if x.shape != (n,):
        raise Refusal(f"return one value per {unit} ({n:,} here), got {str(output)[:60]}.")
    if x.dtype != bool and (x.dtype.kind not in "iuf" or not is_zero_one(x)):
        raise Refusal(f"return 0/1 values (or True/False), one per {unit}: {hint}".rstrip(": ") + ".")
    return x.astype(np.int64)
