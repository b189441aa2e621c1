"""Equal-width public bins (Vinterbo 2012, §2.1, 'Numeric data') as a schema a source can count.

s equal-width bins over each numeric attribute's PUBLIC bounds, s = ⌈1/bw(n, d) - ½⌉ from Lei's
bandwidth, and the schema whose taxonomy leaves are exactly those bins
(:func:`binned_schema`), so a source's engine counts them as it counts any schema. When s is the
same for every noisy record count n̂ in its public range, it is public before anything is read
(:func:`public_bin_count`): a source's first scan then counts these bins too
(:func:`default_bins`), so the projected histogram
(:class:`dpexplore.publish.projected.ProjectedHistogram`) fitted after any other method scans
nothing. Everything here reads public quantities only: bounds, categories, d, s.
"""
from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from ..domain import Attribute, Schema, Taxonomy
from ..limits import MAX_RECORDS

__all__ = ["bandwidth", "bin_count", "discretise", "bin_starts", "binned_schema", "public_bin_count",
           "bins_to_count", "default_bins"]


def bandwidth(n: float, d: int) -> float:
    """Lei's bandwidth bw(n, d) = (ln n / n)^(1/(d+1)) (Vinterbo 2012, §2.1, after Lei 2011)."""
    if n <= 1:
        raise ValueError(f"n must be > 1, got {n}")
    return (math.log(n) / n) ** (1.0 / (d + 1))


def bin_count(n: float, d: int, minimum: int = 2) -> int:
    """s = ⌈1/bw(n, d) - ½⌉ equal-width bins, clamped to ≥ ``minimum`` (Vinterbo 2012, §2.1; the clamp is ours)."""
    return max(int(minimum), int(math.ceil(1.0 / bandwidth(n, d) - 0.5)))


def discretise(values: Any, lower: float, upper: float, n_bins: int) -> np.ndarray:
    """Bin index min(⌊u·s⌋, s-1) of u = (x - lo)/(hi - lo) clipped to [0, 1]; lo, hi PUBLIC."""
    u = np.clip((np.asarray(values, dtype=float) - lower) / (upper - lower), 0.0, 1.0)
    return np.minimum(np.floor(u * n_bins), n_bins - 1).astype(np.int64)


def bin_starts(lower: float, upper: float, n_bins: int) -> list[float]:
    """t_b = the smallest double x in [lower, upper] with :func:`discretise` (x) ≥ b, b = 1..s-1.

    Found by bisection over the doubles in order (discretise is monotone: it is built from
    correctly rounded operations), so bins [t_b, t_{b+1}) reproduce discretise bit for bit.
    """
    def order(x: float) -> int:
        i = int(np.float64(x).view(np.int64))
        return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)

    def value(i: int) -> float:
        bits = i if i >= 0 else (-i) | -0x8000000000000000
        return float(np.int64(bits).view(np.float64))

    out = []
    for b in range(1, n_bins):
        lo, hi = order(lower), order(upper)         # discretise(lower) = 0 < b ≤ s-1 = discretise(upper)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if discretise(value(mid), lower, upper, n_bins)[()] >= b:
                hi = mid
            else:
                lo = mid
        out.append(value(hi))
    return out


def binned_schema(schema: Schema, n_bins: int) -> Schema:
    """The same attributes with taxonomies whose leaves ARE the bin codes: s equal-width bins
    for numeric attributes (leaf b = [t_b, t_{b+1}), written as the taxonomy's (e, e'] with
    e = the double before t_b) and one leaf per declared category. Public: bounds, categories, s."""
    attrs = []
    for name in schema.predictors:
        attr = schema[name]
        if attr.kind == "numeric":
            inner = [float(np.nextafter(t, -np.inf)) for t in bin_starts(attr.lower, attr.upper, n_bins)]
            edges = [attr.lower] + inner + [attr.upper]
            if np.any(np.diff(edges) <= 0):
                raise ValueError(f"attribute {name!r}: {n_bins} bins over [{attr.lower}, {attr.upper}] are "
                                 "narrower than the floating-point resolution; widen the bounds or use fewer bins")
            tax = Taxonomy.from_spec(name, {"type": "numeric", "levels": [[attr.lower, attr.upper], edges]})
            attrs.append(Attribute.numeric(name, attr.lower, attr.upper, tax, integer=attr.integer))
        else:
            attrs.append(Attribute.categorical(name, list(attr.categories), Taxonomy.flat(name, attr.categories)))
    return Schema(attrs, schema.target, schema.classes)


def public_bin_count(dims: Iterable[int]) -> int | None:
    """s = :func:`bin_count` (n̂, d') when it is the same at both ends of n̂'s public range
    [2, MAX_RECORDS] for every d' in ``dims`` (1/bw grows with n̂ beyond e, its minimum), else
    None: then s depends on the noisy count and is known only after it is drawn."""
    counts = {bin_count(n, d) for d in dims for n in (math.e, float(MAX_RECORDS))}
    return counts.pop() if len(counts) == 1 else None


def bins_to_count(schema: Schema, n_bins: int | None) -> list[Schema]:
    """The binned schema with ``n_bins`` bins as a list of schemas to count along (a source's
    ``count_table(along=...)``): none when s is not public yet (None) or when the bins are below
    the floating-point resolution (a fit with them says so itself, before any spend)."""
    if n_bins is None:
        return []
    try:
        return [binned_schema(schema, n_bins)]
    except ValueError:
        return []


def default_bins(schema: Schema) -> list[Schema]:
    """The bins of the paper's rule read literally, s from bw(n̂, d) over all d predictors (the
    projected histogram's default), when s is public (:func:`public_bin_count`), else none."""
    return bins_to_count(schema, public_bin_count([len(schema.predictors)]))
