"""Count once, release many: the count tables a source has built, kept by schema.

A source and its views (:meth:`~dpexplore.sources.Source.with_schema`) share one
:class:`CountCache`. A table asked for under a schema already counted is returned as it is; a
coarser or smaller schema is derived from a table already built, by aggregation, whenever that
is exact (:func:`leaf_maps`): the same predictors or a subset, the same target and classes, the
same public domains, and every leaf of the requested taxonomy a union of the built table's
leaves. Only otherwise is the data scanned again, once per schema, unless the view's schema
was named when the table was first counted (``Source.count_table(along=...)``, and the public
equal-width bins of :func:`dpexplore.sources.bins.default_bins`): that scan then counts at the
common refinement of the schemas (:func:`refinement`: per numeric predictor, every leaf edge of
each), one leaf code per predictor as in any scan, and every one of their tables is derived from
it (:meth:`CountCache.get_along`).

Why the derivation is exact: a record's leaf code under the coarser taxonomy is a function of its
leaf code under the finer one (the leaf map), so summing the finer table's counts per mapped
code gives the coarser table's counts; :class:`~dpexplore.counts.CountTable` puts them in its
canonical order, so a derived table equals a scanned one array for array. The schemas' public
domains being equal, the records the finer table accepted are exactly the ones the coarser
schema accepts: no check is skipped.
"""
from __future__ import annotations

import json
from typing import Callable, Sequence

import numpy as np

from ..counts import CountTable
from ..domain import Attribute, Schema, Taxonomy

__all__ = ["CountCache", "coarsen", "refinement"]


def schema_key(schema: Schema) -> str:
    """The schema as canonical text: equal texts count records identically."""
    return json.dumps(schema.to_dict(), sort_keys=True)


def same_domain(a: Attribute, b: Attribute) -> bool:
    """The same public domain: the same kind and the same bounds, or the same set of categories
    (the checks a record must pass do not depend on the taxonomy)."""
    if a.kind != b.kind:
        return False
    if a.kind == "categorical":
        return set(a.categories) == set(b.categories)
    return a.lower == b.lower and a.upper == b.upper


def same_domains(built: Schema, schema: Schema) -> bool:
    """Every record that ``built``'s checks accept is accepted by ``schema``'s and vice versa on
    ``schema``'s columns: the same target and classes, and ``schema``'s predictors are
    ``built``'s or a subset with the same public domains."""
    return (schema.target == built.target and schema.classes == built.classes
            and all(n in built.attributes and same_domain(built[n], a) for n, a in schema.attributes.items()))


def _numeric_leaf_map(built: Attribute, wanted: Attribute) -> np.ndarray | None:
    """Leaf of ``wanted`` for each leaf of ``built``, or None when some leaf of ``built`` holds
    values on both sides of an edge of ``wanted``.

    A value's leaf is the number of inner leaf edges below it (leaves (e_k, e_k+1], the first
    closed at the lower bound). Only the values inside the public range [lower, upper] occur,
    so an inner edge of ``wanted`` in [lower, upper) must be an inner edge of ``built``; then
    every value of a leaf of ``built`` has the ``wanted`` leaf of the leaf's upper edge clipped to
    the range (a value of that leaf).
    """
    fine, coarse = inner_edges(built), inner_edges(wanted)
    lower, upper = wanted.lower, wanted.upper
    splitting = coarse[(coarse >= lower) & (coarse < upper)]
    if not np.isin(splitting, fine).all():
        return None
    representative = np.clip(np.append(fine, np.inf), lower, upper)
    return np.searchsorted(coarse, representative, side="left").astype(np.int64)


def _categorical_leaf_map(built: Attribute, wanted: Attribute) -> np.ndarray | None:
    """Leaf of ``wanted`` for each leaf of ``built`` (leaves that are not categories never occur)."""
    wanted_leaves = {str(v): i for i, v in enumerate(wanted.taxonomy.leaves)}
    if any(str(c) not in wanted_leaves for c in wanted.categories):
        return None
    categories = set(map(str, wanted.categories))
    return np.asarray([wanted_leaves[str(v)] if str(v) in categories else 0 for v in built.taxonomy.leaves],
                      dtype=np.int64)


def leaf_map(built: Attribute, wanted: Attribute) -> np.ndarray | None:
    """The array mapping ``built``'s leaf codes to ``wanted``'s (the same public domain), or None
    when some leaf of ``built`` holds values of two leaves of ``wanted``."""
    mapper = _categorical_leaf_map if wanted.kind == "categorical" else _numeric_leaf_map
    return mapper(built, wanted)


def leaf_maps(built: Schema, schema: Schema) -> dict[str, np.ndarray] | None:
    """Per predictor of ``schema``, the array mapping ``built``'s leaf codes to ``schema``'s,
    or None when a table under ``schema`` cannot be derived exactly from one under ``built``."""
    if not same_domains(built, schema):
        return None
    maps = {}
    for name in schema.predictors:
        mapped = leaf_map(built[name], schema[name])
        if mapped is None:
            return None
        maps[name] = mapped
    return maps


def inner_edges(attr: Attribute) -> np.ndarray:
    """The inner leaf edges of a numeric attribute's taxonomy (a value's leaf code is the number of
    them below it)."""
    tax = attr.taxonomy
    return np.asarray(tax.edges(tax.height - 1)[1:-1], dtype=float)


def refinement(schema: Schema, others: Sequence[Schema]) -> Schema:
    """The schema whose table every table under ``schema`` and under each of ``others`` with
    its public domains (:func:`same_domains`) derives from exactly (:func:`leaf_maps`): per
    numeric predictor, the leaves cut at every leaf edge of each inside the public range; the
    other predictors as ``schema`` has them. ``schema`` itself when no edge is added or the
    result would not derive ``schema`` (an edge at the lower bound). Public: schemas only."""
    others = [o for o in others if same_domains(schema, o)]
    attrs, finer = [], False
    for name in schema.predictors:
        attr = schema[name]
        if attr.kind != "numeric":
            attrs.append(attr)
            continue
        own = {float(e) for e in inner_edges(attr)}
        edges = own.union(*({float(e) for e in inner_edges(o[name])} for o in others if name in o.attributes))
        cuts = sorted(e for e in edges if attr.lower < e < attr.upper)
        if set(cuts) <= own:
            attrs.append(attr)
            continue
        finer = True
        tax = Taxonomy.from_spec(name, {"type": "numeric", "levels": [[attr.lower, attr.upper],
                                                                      [attr.lower, *cuts, attr.upper]]})
        attrs.append(Attribute.numeric(name, attr.lower, attr.upper, tax, integer=attr.integer,
                                       resolution=attr.resolution))
    if not finer:
        return schema
    fine = Schema(attrs, schema.target, schema.classes)
    return fine if leaf_maps(fine, schema) is not None else schema


def coarsen(table: CountTable, schema: Schema, maps: dict[str, np.ndarray]) -> CountTable:
    """The count table of ``table``'s records under ``schema`` (``maps`` from :func:`leaf_maps`):
    leaf codes mapped, counts summed per cell, in canonical order."""
    codes = {n: maps[n][table.leaf_codes[n]] for n in schema.predictors}
    return CountTable(schema, codes, table.class_codes, table.counts)


def _frozen(table: CountTable) -> CountTable:
    """The table with read-only arrays: every later fit reads it, none may change it."""
    for array in [*table.leaf_codes.values(), table.class_codes, table.counts]:
        array.flags.writeable = False
    return table


def _under(table: CountTable, schema: Schema) -> CountTable:
    """The same arrays with ``schema`` (an equal schema object) attached."""
    if table.schema is schema:
        return table
    view = object.__new__(CountTable)
    view.__dict__.update(table.__dict__)
    view.schema = schema
    return view


class CountCache:
    """The count tables built from one source's records, by schema (shared with its views).

    Holds private counts, like the tables themselves; it prints nothing about them.
    """

    def __init__(self) -> None:
        self._tables: dict[str, CountTable] = {}

    def __repr__(self) -> str:
        return f"CountCache({len(self._tables)} schema(s))"

    def get(self, schema: Schema, build: Callable[[], CountTable]) -> CountTable:
        """The table under ``schema``: cached, else derived from a cached one, else ``build()``
        (a scan of the data) once. A build that raises caches nothing."""
        key = schema_key(schema)
        table = self._tables.get(key)
        if table is None:
            table = self._derive(schema)
        if table is None:
            table = build()
        self._tables[key] = _frozen(table)
        return _under(table, schema)

    def get_along(self, schema: Schema, along: Sequence[Schema], scan: Callable[[Schema], CountTable]) -> CountTable:
        """:meth:`get`; when ``schema`` must be scanned, ``scan`` counts at the common refinement
        (:func:`refinement`) of ``schema`` and the schemas of ``along`` neither cached nor
        derivable yet: that table is kept, and ``schema``'s and theirs are derived from it (one
        scan, one leaf code per predictor; a finer table, more cells)."""
        def build() -> CountTable:
            wanted = [s for s in along if schema_key(s) not in self._tables and self._derive(s) is None]
            fine = refinement(schema, wanted)
            if fine is schema:
                return scan(schema)
            table = _frozen(scan(fine))
            self._tables[schema_key(fine)] = table
            return coarsen(table, schema, leaf_maps(fine, schema))
        return self.get(schema, build)

    def _derive(self, schema: Schema) -> CountTable | None:
        for table in self._tables.values():
            maps = leaf_maps(table.schema, schema)
            if maps is not None:
                return coarsen(table, schema, maps)
        return None

    def checks_hold(self, schema: Schema) -> bool:
        """True when a cached table already checked every record against the same public domains
        on ``schema``'s columns (its build passed them): a new count under ``schema`` needs none."""
        return any(same_domains(t.schema, schema) for t in self._tables.values())
