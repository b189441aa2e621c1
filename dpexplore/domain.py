"""The public description of a table: attributes, their domains and their taxonomy trees.

Everything here is *public*: it must be declared by the data holder, not read from the private
table. Functions that do derive a domain from the data (``Schema.from_frame``) say so with a
:class:`PrivacyLeakWarning`, because a min, a max or a category list can identify a person.

Taxonomy levels are numbered by depth: 0 is the root (one node, the whole domain) and
``height - 1`` the leaves. The PrivPfC paper numbers levels from 1 (its level ℓ is our depth
ℓ-1). Unbalanced trees are padded: a leaf above the deepest level is copied down unchanged, so
that every level is a partition of the domain (Su et al. 2018, §4, Defs. 2–3; the padding is ours).
"""
from __future__ import annotations

import json
import math
import numbers
import warnings
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ._validation import check_frame, check_same_length, check_target, format_number, rule_message
from .exceptions import PrivacyLeakWarning
from .limits import MARGINAL_BINS
from .mechanisms import check_lattice, lattice_resolution

__all__ = ["PrivacyLeakWarning", "Taxonomy", "Attribute", "Schema", "check_schema", "check_class_list", "marginal_taxonomy",
           "class_values", "declared_classes", "declared_dtype", "typed_labels", "match_labels", "observed_attribute",
           "long_tail_cuts", "equal_cuts", "cut_taxonomy"]


def class_values(classes: Sequence, like: Any) -> np.ndarray:
    """Declared class labels in the type of the caller's labels ``like``, for ``classes_``.

    A schema stores classes as strings, so integer labels 0/1 become "0"/"1"; predictions must
    come back as 0/1, or ``score`` and ``cross_val_score`` compare ints with strings. Decided by
    the *dtype* of ``like`` only, never by which labels occur in it (that would leak which
    classes are present): bool dtypes get True/False, numeric dtypes get numbers when every
    label round-trips to the same text, anything else keeps the strings.
    """
    out = np.asarray([str(c) for c in classes], dtype=object)
    dtype = getattr(like, "dtype", None)
    if dtype is None:
        dtype = np.asarray(like).dtype
    if isinstance(dtype, pd.CategoricalDtype):
        dtype = dtype.categories.dtype
    dtype = getattr(dtype, "numpy_dtype", dtype)   # pandas' nullable Int64/boolean: their NumPy type
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        names = {"False": False, "True": True}
        return np.asarray([names[c] for c in out]) if set(out) <= set(names) else out
    if isinstance(dtype, np.dtype) and dtype.kind in "iuf":
        try:
            conv = np.asarray([str(c) for c in classes]).astype(dtype)
        except (TypeError, ValueError):
            return out
        if [str(v) for v in conv.tolist()] == [str(c) for c in out]:
            return conv
    return out


_INT64 = (-2 ** 63, 2 ** 63 - 1)


def declared_dtype(labels: Sequence) -> np.dtype:
    """The type of a column whose values are the declared ``labels`` (its categories, or the
    target's classes), read from the declaration alone, never from the data: bool when every
    label is True or False, int64 when every label is a whole number written as Python writes it
    ("0", "17", "-3"; not "01", "1.0" or "+2"), else text (object). A category list typed
    ``[0, 1]`` therefore gives back 0 and 1, not "0" and "1"; ``"01, 02"`` stays text.

    >>> declared_dtype([0, 1]), declared_dtype(["False", "True"]), declared_dtype(["01", "02"])
    (dtype('int64'), dtype('bool'), dtype('O'))
    """
    text = [str(v) for v in labels]
    if not text:
        return np.dtype(object)
    if set(text) <= {"False", "True"}:
        return np.dtype(bool)
    try:
        if all(str(int(t)) == t and _INT64[0] <= int(t) <= _INT64[1] for t in text):
            return np.dtype(np.int64)
    except ValueError:
        pass
    return np.dtype(object)


def typed_labels(labels: Any, declared: Sequence) -> np.ndarray:
    """``labels`` (each the text, or a value, of one of the ``declared`` labels) in the declared
    labels' type (:func:`declared_dtype`).

    >>> typed_labels(["1", "0", "1"], ["0", "1"])
    array([1, 0, 1])
    >>> typed_labels(["yes"], ["no", "yes"])
    array(['yes'], dtype=object)
    """
    texts = [str(c) for c in declared]
    values = class_values(texts, np.empty(0, dtype=declared_dtype(texts)))
    lookup = dict(zip(texts, values.tolist()))
    return np.asarray([lookup[str(v)] for v in np.asarray(labels, dtype=object).ravel()], dtype=values.dtype)


def _number(value: Any) -> float | None:
    """``value`` as a finite float when it is a number or the text of one (not a boolean)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        x = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def match_labels(values: Any, declared: Sequence) -> np.ndarray:
    """The declared label (text) each value stands for, or None where none does (or the value is
    missing), whatever type the column was given by the values around it.

    A value matches a label when its text (stripped) is the label; True/False (and the texts
    "true"/"TRUE", which pandas reads as booleans) match "True"/"False"; a number, or the text
    of one, matches the label that reads as the same number. So 1, 1.0 and "1" all match a
    declared "1", as one missing value (which makes pandas type an int column as float) or one
    text value (which makes it text) would otherwise decide.

    >>> match_labels([1, 1.0, " 1", "x", None, 2.5], ["0", "1", "x"]).tolist()
    ['1', '1', '1', 'x', None, None]
    """
    texts = [str(c) for c in declared]
    known = set(texts)
    numbers: dict[float, str] = {}
    for t in texts:
        x = _number(t)
        if x is not None:
            numbers.setdefault(x, t)
    booleans = {"true": "True", "false": "False"} if known & {"True", "False"} else {}
    arr = values.to_numpy(dtype=object) if isinstance(values, pd.Series) else np.asarray(values, dtype=object)
    flat = arr.ravel()
    out = np.empty(len(flat), dtype=object)
    if len(flat) == 0:
        return out

    def one(v: Any) -> str | None:
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            return None
        if isinstance(v, (bool, np.bool_)):
            text = str(bool(v))
            return text if text in known else None
        text = v.strip() if isinstance(v, str) else str(v).strip()
        if text in known:
            return text
        if text.lower() in booleans and booleans[text.lower()] in known:
            return booleans[text.lower()]
        x = _number(v)
        return numbers.get(x) if x is not None else None

    cache: dict[tuple[type, Any], str | None] = {}   # by type too: True == 1 == 1.0 in Python
    for i, v in enumerate(flat):
        try:
            key = (type(v), v)
            hit = cache.get(key, cache)
        except TypeError:                              # an unhashable value
            key, hit = None, cache
        if hit is cache:
            hit = one(v)
            if key is not None:
                cache[key] = hit
        out[i] = hit
    return out.reshape(arr.shape)


def check_class_list(classes: Any) -> list:
    """``classes`` as a list, after the one check of a declared class list: a list of at least
    two labels, distinct as text (TypeError for a string or a non-iterable, else ValueError)."""
    if isinstance(classes, (str, bytes)) or not isinstance(classes, Iterable):
        raise TypeError(f"classes must be a list of labels, got {type(classes).__name__}")
    declared = list(classes)
    text = [str(c) for c in declared]
    if len(text) < 2 or len(set(text)) != len(text):
        raise ValueError(f"classes must hold at least two distinct labels, got {declared!r}")
    return declared


def declared_classes(y: Any, classes: Sequence | None, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """The public class list and each label's index in it, for estimators without a schema.

    ``classes`` is the caller's declaration (public: it must not come from ``y``); the labels of
    ``y`` must all be among them. With ``classes=None`` the observed labels of ``y`` are used and a
    :class:`PrivacyLeakWarning` says so: which classes occur is a fact about the private records
    (one record of a rare class changes the model's shape, an unbounded privacy loss).
    Returns ``(classes_, codes)``: the classes in the type of ``y`` (see :func:`class_values`)
    in the declared order, and an int array of class indices.
    """
    arr = np.asarray(y.to_numpy() if isinstance(y, pd.Series) else y)
    if classes is None:
        warnings.warn(
            f"{owner} read its class labels from the private y: which classes occur is not covered by "
            "any ε (one record of a rare class changes the released model). Pass classes=[...] "
            "(or a Schema) with the labels you know without looking at the data.",
            PrivacyLeakWarning, stacklevel=3)
        labels = [str(c) for c in np.unique(arr)]
        order = np.unique(arr)
        values = order if order.dtype != object else np.asarray(labels, dtype=object)
        text = np.asarray(labels, dtype=object)
    else:
        declared = check_class_list(classes)
        text = np.asarray([str(c) for c in declared], dtype=object)
        values = class_values(text, arr)
    codes = pd.Index(list(text), dtype=object).get_indexer(arr.astype(str).astype(object))
    if np.any(codes < 0):
        raise ValueError(rule_message("class", "y", classes=list(text)))
    return values, codes.astype(np.int64)


# =========================================================================== Taxonomy
class Taxonomy:
    """A generalisation hierarchy over one attribute's domain, stored level by level.

    Build one with :meth:`from_spec`, :meth:`flat` or :meth:`equal_width`. Internally each depth
    keeps ``leaf_to_node(depth)``, the node index of every leaf, so generalising a column of
    leaf codes to any depth is one array lookup.
    """

    def __init__(self, name: str, kind: str, leaves: Sequence, labels: Sequence[Sequence[str]],
                 leaf_to_node: Sequence[np.ndarray], edges: Sequence[np.ndarray] | None = None):
        if kind not in ("categorical", "numeric"):
            raise ValueError(f"kind must be 'categorical' or 'numeric', got {kind!r}")
        self.name = str(name)
        self.kind = kind
        self.leaves = tuple(leaves)
        self._labels = [list(level) for level in labels]
        self._leaf_to_node = [np.asarray(m, dtype=np.int32) for m in leaf_to_node]
        self._edges = None if edges is None else [np.asarray(e, dtype=float) for e in edges]
        self._leaf_index = {v: i for i, v in enumerate(self.leaves)} if kind == "categorical" else None
        self._check()

    def _check(self) -> None:
        if len(self._labels) != len(self._leaf_to_node) or not self._labels:
            raise ValueError(f"taxonomy {self.name!r}: inconsistent levels")
        if len(self._labels[0]) != 1:
            raise ValueError(f"taxonomy {self.name!r}: the root level must have exactly one node")
        if len(set(self.leaves)) != len(self.leaves):
            raise ValueError(f"taxonomy {self.name!r}: duplicate leaves")
        for depth, (labels, mapping) in enumerate(zip(self._labels, self._leaf_to_node)):
            if len(set(labels)) != len(labels):
                dup = sorted({str(x) for x in labels if labels.count(x) > 1})[:5]
                raise ValueError(f"taxonomy {self.name!r}: depth {depth} has several nodes labelled {dup}; "
                                 "labels must be unique within a level so that generalised values are unambiguous")
            if mapping.shape != (len(self.leaves),) or set(np.unique(mapping)) != set(range(len(labels))):
                raise ValueError(f"taxonomy {self.name!r}: depth {depth} is not a partition of the leaves")
        for depth in range(1, self.height):  # each node has exactly one parent (nested partitions)
            pairs = np.unique(np.stack([self._leaf_to_node[depth], self._leaf_to_node[depth - 1]]), axis=1)
            if pairs.shape[1] != len(self._labels[depth]):
                raise ValueError(f"taxonomy {self.name!r}: depth {depth} does not refine depth {depth - 1}")

    # ------------------------------------------------------------------ shape
    @property
    def height(self) -> int:
        """Number of levels, root included."""
        return len(self._labels)

    @property
    def level_sizes(self) -> tuple[int, ...]:
        """Number of nodes at each depth, root first."""
        return tuple(len(level) for level in self._labels)

    @property
    def n_leaves(self) -> int:
        return len(self.leaves)

    @property
    def root_label(self) -> str:
        return self._labels[0][0]

    def __repr__(self) -> str:
        return f"Taxonomy({self.name!r}, {self.kind}, level_sizes={self.level_sizes})"

    def _check_depth(self, depth: int) -> int:
        if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or not 0 <= depth < self.height:
            raise ValueError(f"depth for {self.name!r} must be an integer in 0..{self.height - 1}, got {depth!r}")
        return int(depth)

    def labels(self, depth: int) -> list[str]:
        """Node labels at ``depth`` (numeric: interval strings such as "(20, 25]")."""
        return list(self._labels[self._check_depth(depth)])

    def leaf_to_node(self, depth: int) -> np.ndarray:
        """Index, at ``depth``, of the node that contains each leaf."""
        return self._leaf_to_node[self._check_depth(depth)].copy()

    def parents(self, depth: int) -> np.ndarray:
        """Index at ``depth - 1`` of the parent of every node at ``depth`` (depth ≥ 1)."""
        depth = self._check_depth(depth)
        if depth == 0:
            raise ValueError("the root has no parent")
        out = np.empty(len(self._labels[depth]), dtype=np.int32)
        out[self._leaf_to_node[depth]] = self._leaf_to_node[depth - 1]
        return out

    def children(self, depth: int, node: int) -> list[int]:
        """Indices at ``depth + 1`` of the children of ``node`` (a padded leaf has one child)."""
        depth = self._check_depth(depth)
        if depth == self.height - 1:
            return []
        return [int(i) for i in np.flatnonzero(self.parents(depth + 1) == node)]

    def leaves_of(self, depth: int, node: int) -> np.ndarray:
        """Leaf indices under ``node`` at ``depth``."""
        return np.flatnonzero(self._leaf_to_node[self._check_depth(depth)] == node)

    def intervals(self, depth: int) -> np.ndarray:
        """Numeric taxonomies: (low, high) of each node at ``depth``, shape (n_nodes, 2)."""
        if self._edges is None:
            raise TypeError(f"taxonomy {self.name!r} is categorical: it has no intervals")
        e = self._edges[self._check_depth(depth)]
        return np.column_stack([e[:-1], e[1:]])

    def edges(self, depth: int) -> np.ndarray:
        """Numeric taxonomies: the cut points of ``depth`` (first node closed on both sides)."""
        if self._edges is None:
            raise TypeError(f"taxonomy {self.name!r} is categorical: it has no edges")
        return self._edges[self._check_depth(depth)].copy()

    @property
    def bounds(self) -> tuple[float, float]:
        """Numeric taxonomies: the closed interval covered by the root."""
        if self._edges is None:
            raise TypeError(f"taxonomy {self.name!r} is categorical: it has no bounds")
        return float(self._edges[0][0]), float(self._edges[0][-1])

    # ------------------------------------------------------------------ generalisation
    def leaf_codes(self, values: Any) -> np.ndarray:
        """Leaf index of each value; ValueError naming the column and the rule a value breaks."""
        if self.kind == "categorical":
            arr = values.to_numpy(dtype=object) if isinstance(values, pd.Series) else np.asarray(values, dtype=object)
            flat = arr.ravel()
            index = pd.Index(list(self.leaves), dtype=object)
            codes = index.get_indexer(flat).astype(np.int32)  # -1: not a leaf
            bad = codes < 0
            if bad.any():  # leaves are strings: match other values (1, True, ...) by their text
                if pd.isna(flat[bad]).any():
                    raise ValueError(rule_message("missing", self.name))
                codes[bad] = index.get_indexer(flat[bad].astype(str))
                bad = codes < 0
            if bad.any():
                raise ValueError(rule_message("category", self.name))
            return codes.reshape(np.shape(arr))
        try:
            v = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(rule_message("non_numeric", self.name)) from None
        lo, hi = self.bounds
        if np.isnan(v).any():
            raise ValueError(rule_message("missing", self.name))
        if np.any(v < lo) or np.any(v > hi):
            raise ValueError(rule_message("range", self.name, lower=lo, upper=hi))
        leaf_edges = self._edges[-1]
        return np.clip(np.searchsorted(leaf_edges, v, side="left") - 1, 0, len(leaf_edges) - 2).astype(np.int32)

    def node_codes(self, leaf_codes: Any, depth: int) -> np.ndarray:
        """Generalise leaf codes to node codes at ``depth`` (vectorised lookup)."""
        codes = np.asarray(leaf_codes)
        if codes.size == 0:
            codes = codes.astype(np.intp)
        elif codes.dtype.kind not in "iu" or codes.min() < 0 or codes.max() >= self.n_leaves:
            raise ValueError(f"leaf_codes for {self.name!r} must be integers in 0..{self.n_leaves - 1}")
        return self._leaf_to_node[self._check_depth(depth)][codes]

    def generalize(self, values: Any, depth: int) -> np.ndarray:
        """Replace each value by the label of the node containing it at ``depth``."""
        labels = np.asarray(self._labels[self._check_depth(depth)], dtype=object)
        return labels[self.node_codes(self.leaf_codes(values), depth)]

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_spec(cls, name: str, spec: Mapping[str, Any]) -> "Taxonomy":
        """Build from a JSON-style spec.

        categorical: ``{"type": "categorical", "tree": {"Any": {"A": null, "B": ["b1", "b2"]}}}``
        (a list is shorthand for leaves); numeric: ``{"type": "numeric", "levels": [[0, 100],
        [0, 50, 100], ...]}``, each level's edges a superset of the previous one.
        """
        if not isinstance(spec, Mapping):
            raise TypeError(f"taxonomy spec for {name!r} must be a mapping (parsed JSON), got {type(spec).__name__}")
        kind = spec.get("type")
        key = {"categorical": "tree", "numeric": "levels"}.get(kind)
        if key is not None and key not in spec:
            raise ValueError(f"{kind} taxonomy spec for {name!r} needs a {key!r} entry")
        if kind == "categorical":
            return cls._from_tree(name, spec["tree"])
        if kind == "numeric":
            return cls._from_edges(name, spec["levels"])
        raise ValueError(f"taxonomy spec for {name!r} needs type 'categorical' or 'numeric', got {kind!r}")

    @classmethod
    def _from_tree(cls, name: str, tree: Mapping[str, Any]) -> "Taxonomy":
        if not isinstance(tree, Mapping) or len(tree) != 1:
            raise ValueError(f"taxonomy tree for {name!r} must have exactly one root")
        paths: list[list[str]] = []

        def walk(label: str, sub: Any, path: list[str]) -> None:
            path = path + [str(label)]
            if sub is None or (isinstance(sub, (list, tuple, Mapping)) and len(sub) == 0):
                paths.append(path)
            elif isinstance(sub, Mapping):
                for child, grand in sub.items():
                    walk(child, grand, path)
            elif isinstance(sub, (list, tuple)):
                for leaf in sub:
                    paths.append(path + [str(leaf)])
            else:
                raise ValueError(f"taxonomy tree for {name!r}: node {label!r} has an invalid subtree")

        (root, sub), = tree.items()
        walk(root, sub, [])
        height = max(len(p) for p in paths)
        padded = [p + [p[-1]] * (height - len(p)) for p in paths]  # copy short leaves down
        labels, maps = [], []
        for depth in range(height):
            ids: dict[tuple, int] = {}
            level_labels, mapping = [], []
            for p in padded:
                key = tuple(p[: depth + 1])
                if key not in ids:
                    ids[key] = len(ids)
                    level_labels.append(p[depth])
                mapping.append(ids[key])
            labels.append(level_labels)
            maps.append(np.array(mapping))
        leaves = [p[-1] for p in paths]
        return cls(name, "categorical", leaves, labels, maps)

    @classmethod
    def _from_edges(cls, name: str, levels: Sequence[Sequence[float]]) -> "Taxonomy":
        try:
            edges = [np.asarray(level, dtype=float) for level in levels]
        except (TypeError, ValueError):
            raise ValueError(f"numeric taxonomy {name!r}: levels must be lists of numbers") from None
        if not edges or edges[0].ndim != 1 or len(edges[0]) != 2:
            raise ValueError(f"numeric taxonomy {name!r}: the first level must be [low, high]")
        for depth, e in enumerate(edges):
            if e.ndim != 1 or len(e) < 2 or not np.all(np.isfinite(e)) or np.any(np.diff(e) <= 0):
                raise ValueError(f"numeric taxonomy {name!r}: level {depth} edges must be finite and increasing")
            if e[0] != edges[0][0] or e[-1] != edges[0][-1]:
                raise ValueError(f"numeric taxonomy {name!r}: every level must span the root interval")
            if depth and not np.all(np.isin(edges[depth - 1], e)):
                raise ValueError(f"numeric taxonomy {name!r}: level {depth} must keep every edge of level {depth - 1}")
        leaf_edges = edges[-1]
        leaf_high = leaf_edges[1:]
        labels, maps = [], []
        for e in edges:
            labels.append([("[" if i == 0 else "(") + f"{format_number(a)}, {format_number(b)}]"
                           for i, (a, b) in enumerate(zip(e[:-1], e[1:]))])
            maps.append(np.searchsorted(e, leaf_high, side="left") - 1)
        return cls(name, "numeric", labels[-1], labels, maps, edges=edges)

    @classmethod
    def flat(cls, name: str, categories: Iterable, root: str = "Any") -> "Taxonomy":
        """Root plus one leaf per category (height 2): no semantic grouping."""
        return cls._from_tree(name, {root: [str(c) for c in categories]})

    @classmethod
    def equal_width(cls, name: str, lower: float, upper: float,
                    fanouts: Sequence[int] = (2, 2, 2)) -> "Taxonomy":
        """Nested equal-width intervals over the public range [lower, upper].

        ``fanouts[i]`` is how many children each node at depth i gets; (2, 2, 2) gives level
        sizes 1/2/4/8.
        """
        lower, upper = float(lower), float(upper)
        if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
            raise ValueError(f"equal_width({name!r}): need finite lower < upper, got {lower}, {upper}")
        if not fanouts or any(isinstance(f, bool) or not isinstance(f, numbers.Integral) or f < 2 for f in fanouts):
            raise ValueError(f"fanouts must be a non-empty list of integers ≥ 2, got {fanouts!r}")
        levels = [np.array([lower, upper])]
        for f in fanouts:  # subdivide each parent interval: parent edges stay exactly (nesting)
            prev = levels[-1]
            steps = np.arange(int(f)) / int(f)
            inner = (prev[:-1, None] + np.diff(prev)[:, None] * steps[None, :]).ravel()
            levels.append(np.append(inner, upper))
        return cls._from_edges(name, [lv.tolist() for lv in levels])

    def to_spec(self) -> dict:
        """The JSON-style spec this taxonomy can be rebuilt from."""
        if self.kind == "numeric":
            return {"type": "numeric", "levels": [e.tolist() for e in self._edges]}

        def subtree(depth: int, node: int) -> Any:
            kids = self.children(depth, node)
            if not kids or (len(kids) == 1 and self._labels[depth + 1][kids[0]] == self._labels[depth][node]
                            and len(self.leaves_of(depth, node)) == 1 and not self._has_real_children(depth + 1, kids[0])):
                return None
            return {self._labels[depth + 1][k]: subtree(depth + 1, k) for k in kids}

        return {"type": "categorical", "tree": {self.root_label: subtree(0, 0)}}

    def _has_real_children(self, depth: int, node: int) -> bool:
        kids = self.children(depth, node)
        return len(kids) > 1 or (len(kids) == 1 and self._has_real_children(depth + 1, kids[0]))


# =========================================================================== Attribute
class Attribute:
    """One predictor and its public domain: a category list, or numeric bounds [lower, upper].

    A numeric attribute also has a public ``resolution``: released values of it (split points,
    medians) are points of the lattice ``lattice`` = (resolution, origin), origin + k·resolution
    (README, "Floating-point noise"). Declared, or by default 1 for integer attributes and the largest power
    of two ≤ (upper − lower)/2**20 otherwise (:func:`dpexplore.mechanisms.lattice_resolution`):
    a function of the declared bounds only.
    """

    source: str | None = None       # a derived column (:meth:`derived`): the column it is computed from

    def __init__(self, name: str, kind: str, *, categories: Sequence | None = None,
                 lower: float | None = None, upper: float | None = None,
                 taxonomy: Taxonomy | None = None, integer: bool = False, resolution: float | None = None):
        self.name, self.kind = str(name), kind
        self.categories = None if categories is None else tuple(categories)
        self.lower = None if lower is None else float(lower)
        self.upper = None if upper is None else float(upper)
        self.taxonomy, self.integer = taxonomy, bool(integer)
        self.resolution = (_numeric_resolution(self.name, self.lower, self.upper, self.integer, resolution)
                           if kind == "numeric" and self.lower is not None and self.upper is not None else None)
        self.source = None
        self.rule: dict[str, Any] = {}        # derived: {"edges": [...], "labels": [...]} or {"mapping": {...}}

    @property
    def dtype(self) -> np.dtype:
        """The type of this column's values as the schema declares them: int64 for an integer
        attribute, float64 for another numeric one, and for categories (a derived column's
        labels too) :func:`declared_dtype` of the declared list (``[0, 1]`` gives int64,
        ``["False", "True"]`` bool, anything else text)."""
        if self.kind == "numeric":
            return np.dtype(np.int64 if self.integer else np.float64)
        return declared_dtype(self.categories or ())

    @property
    def lattice(self) -> tuple[float, float] | None:
        """``(resolution, origin)`` of the public lattice origin + k·resolution of a numeric
        attribute: origin = lower (rounded up to a whole number for integer attributes)."""
        if self.resolution is None:
            return None
        return self.resolution, float(math.ceil(self.lower)) if self.integer else self.lower

    @classmethod
    def categorical(cls, name: str, categories: Sequence | None = None,
                    taxonomy: Taxonomy | None = None) -> "Attribute":
        """A categorical attribute; categories default to the taxonomy's leaves."""
        if categories is None and taxonomy is None:
            raise ValueError(f"attribute {name!r}: give its public categories or a taxonomy")
        if taxonomy is not None and taxonomy.kind != "categorical":
            raise ValueError(f"attribute {name!r}: a categorical attribute needs a categorical taxonomy")
        categories = list(taxonomy.leaves if categories is None else categories)
        if len(categories) == 0 or len(set(categories)) != len(categories):
            raise ValueError(f"attribute {name!r}: categories must be non-empty and distinct")
        if taxonomy is None:
            taxonomy = Taxonomy.flat(name, categories)
        missing = set(map(str, categories)) - set(taxonomy.leaves)
        if missing:
            raise ValueError(f"attribute {name!r}: categories {sorted(missing)[:5]} are not leaves of its taxonomy")
        return cls(name, "categorical", categories=[str(c) for c in categories], taxonomy=taxonomy)

    @classmethod
    def numeric(cls, name: str, lower: float, upper: float, taxonomy: Taxonomy | None = None,
                integer: bool = False, resolution: float | None = None) -> "Attribute":
        """A numeric attribute with public bounds; its taxonomy (if any) must cover them.
        ``resolution``: the public spacing of its released values (see :class:`Attribute`)."""
        try:
            lower, upper = float(lower), float(upper)
        except (TypeError, ValueError):
            raise ValueError(f"attribute {name!r}: public bounds must be numbers, got [{lower!r}, {upper!r}]") from None
        if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
            raise ValueError(f"attribute {name!r}: public bounds need finite lower < upper, got [{lower}, {upper}]")
        if taxonomy is not None:
            if taxonomy.kind != "numeric":
                raise ValueError(f"attribute {name!r}: a numeric attribute needs a numeric taxonomy")
            lo, hi = taxonomy.bounds
            if lower < lo or upper > hi:
                raise ValueError(f"attribute {name!r}: bounds [{lower}, {upper}] are outside its taxonomy [{lo}, {hi}]")
        return cls(name, "numeric", lower=lower, upper=upper, taxonomy=taxonomy, integer=integer,
                   resolution=resolution)

    @classmethod
    def derived(cls, name: str, source: str, *, edges: Sequence[float] | None = None,
                labels: Sequence | None = None, mapping: Mapping[Any, Any] | None = None,
                otherwise: Sequence | None = None) -> "Attribute":
        """A categorical column fixed by a PUBLIC rule on another column ``source``.

        Without ``otherwise`` the column is a function of its source: bands of a numeric source
        (``edges`` e0 < e1 < … < ek and one label per band: a value v gets the label of the band
        e_i ≤ v < e_(i+1), the last band closed at e_k) or a ``mapping`` of every declared
        category of the source to a label. It is neither modelled nor paid for: a synthetic table
        computes it from its source column (see :class:`Schema`).

        With ``otherwise`` (a list of labels) the rule is partial: where ``mapping`` gives the
        source's value a label the column holds that label, and for every other source value it
        is free among ``otherwise`` and never holds a mapped label (structural zeros both ways,
        e.g. "No internet service" exactly when the internet service is "No"). Its categories
        are ``otherwise`` then the mapped labels. Such a column is a predictor: modelled, and
        paid for only where it is free (:attr:`Schema.rules`).

        >>> security = Attribute.derived("OnlineSecurity", "InternetService",
        ...                              mapping={"No": "No internet service"}, otherwise=["No", "Yes"])
        >>> security.categories, security.free_labels
        (('No', 'Yes', 'No internet service'), ('No', 'Yes'))
        >>> security.rule_breaks(["No", "DSL", "DSL", "No"], ["No internet service", "Yes", "No internet service", "No"]).tolist()
        [False, False, True, True]
        """
        if (edges is None) == (mapping is None) or (mapping is not None and labels is not None):
            raise ValueError(f"derived column {name!r}: give edges= and labels= (bands of a number) "
                             "or mapping= (categories to labels), not both")
        if otherwise is not None and mapping is None:
            raise ValueError(f"derived column {name!r}: otherwise= (the labels where the rule leaves it free) "
                             "goes with mapping= (the source categories that fix it)")
        if mapping is not None:
            if not isinstance(mapping, Mapping) or not mapping:
                raise TypeError(f"derived column {name!r}: mapping must be a non-empty dict "
                                "{source category: label}")
            rule: dict[str, Any] = {"mapping": {str(k): str(v) for k, v in mapping.items()}}
            categories = list(dict.fromkeys(rule["mapping"].values()))
            if otherwise is not None:
                free = _free_labels(name, otherwise, categories)
                rule["otherwise"] = free
                categories = free + categories
        else:
            try:
                cuts = [float(e) for e in edges]
            except (TypeError, ValueError):
                raise ValueError(f"derived column {name!r}: edges must be numbers") from None
            if len(cuts) < 2 or not all(math.isfinite(e) for e in cuts) or any(b <= a for a, b in zip(cuts, cuts[1:])):
                raise ValueError(f"derived column {name!r}: edges must be at least two increasing finite numbers")
            if labels is None or len(labels) != len(cuts) - 1:
                raise ValueError(f"derived column {name!r}: give one label per band ({len(cuts) - 1})")
            rule = {"edges": cuts, "labels": [str(v) for v in labels]}
            categories = rule["labels"]
        if len(set(categories)) != len(categories):
            raise ValueError(f"derived column {name!r}: band labels must be distinct")
        attr = cls.categorical(name, categories)
        attr.source, attr.rule = str(source), rule
        return attr

    @property
    def partial(self) -> bool:
        """True for a column fixed by its source only where the rule maps it
        (:meth:`derived` with ``otherwise``): a predictor with a rule."""
        return "otherwise" in self.rule

    @property
    def free_labels(self) -> tuple[str, ...]:
        """A partial rule's ``otherwise`` labels: the values the column may take where it is free."""
        return tuple(self.rule.get("otherwise", ()))

    @property
    def fixing_values(self) -> dict[str, list[str]]:
        """A mapping rule by label: {mapped label: the source values that fix the column to it}."""
        by_label: dict[str, list[str]] = {}
        for key, label in self.rule.get("mapping", {}).items():
            by_label.setdefault(label, []).append(key)
        return by_label

    def rule_text(self) -> str:
        """The declared rule in words (public: names and declared labels only)."""
        fixed = "; ".join(f"{self.name!r} is {label!r} exactly when {self.source!r} is "
                          + (repr(keys[0]) if len(keys) == 1 else f"one of {keys}") for label, keys in self.fixing_values.items())
        if self.partial:
            return f"{fixed}; otherwise it is one of {list(self.free_labels)}"
        return fixed or f"{self.name!r} is the band of {self.source!r}"

    def rule_breaks(self, source_values: Any, values: Any) -> np.ndarray:
        """True for each row (a source value and this column's value, matched by their text as
        :meth:`validate` matches categories) that breaks the rule: for a partial rule, the source
        maps to a label and the column holds another, or the source is free and the column holds
        a mapped label (a row whose values are outside the declared domains is left to
        :meth:`validate`); for a full one, the column is not :meth:`derive` of the source."""
        if self.source is None:
            raise TypeError(f"{self.name!r} has no rule (Attribute.derived)")
        column = pd.Series(np.asarray(values, dtype=object).ravel()).astype(str).to_numpy(dtype=object)
        if not self.partial:
            return column != pd.Series(self.derive(np.asarray(source_values, dtype=object).ravel())).astype(str).to_numpy()
        source = pd.Series(np.asarray(source_values, dtype=object).ravel()).astype(str)
        fixed = source.map(self.rule["mapping"]).to_numpy(dtype=object)
        is_fixed = ~pd.isna(fixed)
        mapped = np.isin(column, list(self.fixing_values))
        return np.where(is_fixed, column != fixed, mapped)

    def declaration(self) -> str:
        """Python that declares this rule column (ready to paste), e.g.
        ``Attribute.derived('planned', 'kind', mapping={'a': 'yes', 'b': 'no'})``."""
        if self.source is None:
            raise TypeError(f"{self.name!r} has no rule (Attribute.derived)")
        rule = ", ".join(f"{key}={value!r}" for key, value in self.rule.items())
        return f"Attribute.derived({self.name!r}, {self.source!r}, {rule})"

    def without_rule(self) -> "Attribute":
        """The same categorical column with no rule (a schema that drops the rule's source)."""
        return Attribute.categorical(self.name, list(self.categories), self.taxonomy)

    def check_source(self, source: "Attribute") -> None:
        """Refuse a rule that does not fit the source's public domain (named column and rule
        only): a full rule must give a label to every value the source may hold; a partial one
        may map only declared categories of a categorical source."""
        if "mapping" in self.rule:
            if self.partial:
                unknown = [k for k in self.rule["mapping"] if k not in (source.categories or ())]
                if source.kind != "categorical" or unknown:
                    raise ValueError(f"derived column {self.name!r}: its rule maps {unknown[:5] or 'values'} that are "
                                     f"not declared categories of {source.name!r}; map declared categories only")
                return
            missing = [c for c in (source.categories or ()) if c not in self.rule["mapping"]]
            if source.kind != "categorical" or missing:
                raise ValueError(f"derived column {self.name!r}: its mapping must give a label to every declared "
                                 f"category of {source.name!r}{f' (missing {missing[:5]})' if missing else ''}"
                                 "; or give otherwise=[...], the labels it takes where the mapping leaves it free")
            return
        edges = self.rule["edges"]
        if source.kind != "numeric" or edges[0] > source.lower or edges[-1] < source.upper:
            raise ValueError(f"derived column {self.name!r}: its bands must cover the public bounds of the numeric "
                             f"column {source.name!r}, got edges from {format_number(edges[0])} to "
                             f"{format_number(edges[-1])}")

    def derive(self, values: Any) -> np.ndarray:
        """The label of each source value (a derived column; see :meth:`derived`), in the labels'
        declared type (:attr:`dtype`: text, or int/bool for labels such as "0, 1")."""
        if self.source is None or self.partial:
            raise TypeError(f"{self.name!r} is not a function of another column")
        if "mapping" in self.rule:
            text = pd.Series(np.asarray(values, dtype=object)).map(str)
            labels = text.map(self.rule["mapping"]).to_numpy(dtype=object)
        else:
            edges, names = np.asarray(self.rule["edges"]), np.asarray(self.rule["labels"], dtype=object)
            band = np.clip(np.searchsorted(edges, np.asarray(values, dtype=float), side="right") - 1, 0, len(names) - 1)
            labels = names[band]
        return labels if self.dtype == object else typed_labels(labels, self.categories)

    def __repr__(self) -> str:
        dom = f"{len(self.categories)} categories" if self.kind == "categorical" else f"[{format_number(self.lower)}, {format_number(self.upper)}]"
        return f"Attribute({self.name!r}, {self.kind}, {dom})"

    def validate(self, values: Any) -> None:
        """Raise a ValueError naming this column and the rule if a value is missing or outside
        the domain; the message never shows the value (:func:`~dpexplore._validation.rule_message`)."""
        s = values if isinstance(values, pd.Series) else pd.Series(np.asarray(values))
        if s.isna().any():
            raise ValueError(rule_message("missing", self.name))
        if self.kind == "categorical":
            if (~s.astype(str).isin(self.categories)).any():
                raise ValueError(rule_message("category", self.name))
            return
        if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            raise ValueError(rule_message("non_numeric", self.name))
        v = s.to_numpy(dtype=float)
        if not np.all(np.isfinite(v)):
            raise ValueError(rule_message("infinite", self.name))
        if np.any(v < self.lower) or np.any(v > self.upper):
            raise ValueError(rule_message("range", self.name, lower=self.lower, upper=self.upper))

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind == "categorical":
            d["categories"] = list(self.categories)
        else:
            d.update(lower=self.lower, upper=self.upper, integer=self.integer)
            if self.resolution != _numeric_resolution(self.name, self.lower, self.upper, self.integer, None):
                d["resolution"] = self.resolution
        if self.source is not None:
            return {"name": self.name, "kind": "derived", "source": self.source, **self.rule}
        if self.taxonomy is not None:
            d["taxonomy"] = self.taxonomy.to_spec()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Attribute":
        if d["kind"] == "derived":
            return cls.derived(d["name"], d["source"], edges=d.get("edges"), labels=d.get("labels"),
                               mapping=d.get("mapping"), otherwise=d.get("otherwise"))
        tax = Taxonomy.from_spec(d["name"], d["taxonomy"]) if d.get("taxonomy") else None
        if d["kind"] == "categorical":
            return cls.categorical(d["name"], d.get("categories"), tax)
        return cls.numeric(d["name"], d["lower"], d["upper"], tax, integer=d.get("integer", False),
                           resolution=d.get("resolution"))


def _free_labels(name: str, otherwise: Any, mapped: list[str]) -> list[str]:
    """A partial rule's ``otherwise`` labels, checked: a non-empty list of distinct labels, none
    of them a mapped label (a mapped label is taken only where the rule fixes it)."""
    if isinstance(otherwise, (str, bytes)) or not isinstance(otherwise, Iterable):
        raise TypeError(f"derived column {name!r}: otherwise must be a list of labels, got {type(otherwise).__name__}")
    free = [str(v) for v in otherwise]
    if not free or len(set(free)) != len(free):
        raise ValueError(f"derived column {name!r}: otherwise must hold at least one label, each once")
    both = [v for v in free if v in mapped]
    if both:
        raise ValueError(f"derived column {name!r}: the labels {both} are both mapped and in otherwise; a mapped "
                         "label is taken exactly where the rule fixes it, so keep it out of otherwise")
    return free


def _numeric_resolution(name: str, lower: float, upper: float, integer: bool, resolution: Any) -> float:
    """The public resolution of a numeric attribute: the declared one, checked (a whole number
    for integer attributes), or the default (1 for integers, else the lattice_resolution)."""
    if resolution is None:
        return 1.0 if integer else lattice_resolution(lower, upper)
    try:
        res, _ = check_lattice(resolution, math.ceil(lower) if integer else lower, lower=lower, upper=upper)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"attribute {name!r}: {exc}") from None
    if integer and not res.is_integer():
        raise ValueError(f"attribute {name!r}: an integer attribute needs a whole-number resolution, "
                         f"got {resolution!r}")
    if not integer and res > upper - lower:
        raise ValueError(f"attribute {name!r}: resolution {resolution!r} is wider than its range "
                         f"[{lower}, {upper}]")
    return res


def observed_attribute(name: Any, values: pd.Series, *, categorical: bool = False,
                       fanouts: Sequence[int] | None = None) -> Attribute:
    """An attribute whose domain is READ FROM THE DATA (not private; callers warn
    :class:`PrivacyLeakWarning`): observed categories, or observed [min, max] (widened by 1 when
    constant) with an equal-width taxonomy of ``fanouts`` (none when ``fanouts`` is None)."""
    name = str(name)
    if categorical or not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return Attribute.categorical(name, sorted(map(str, values.astype(str).unique())))
    lo, hi = float(values.min()), float(values.max())
    if lo == hi:
        hi = lo + 1.0
    taxonomy = None if fanouts is None else Taxonomy.equal_width(name, lo, hi, fanouts)
    return Attribute.numeric(name, lo, hi, taxonomy, bool(pd.api.types.is_integer_dtype(values)))


def _is_predictor(a: Any) -> bool:
    """A schema's predictor: an attribute with no rule, or one with a partial rule."""
    return getattr(a, "source", None) is None or getattr(a, "partial", False)


# =========================================================================== Schema
class Schema:
    """The public schema of a classification table: predictors, target column, class labels.

    A column may be declared as a public function of another (:meth:`Attribute.derived`: an
    age band from age, a grouping of categories). It is not a predictor: no method models it or
    spends ε on it, fitting data may hold it or not (it is dropped), and a synthetic table
    computes it from its source column, so the two always agree. ``derived`` holds those
    columns; ``columns`` lists every declared column in the order given. A column fixed by its
    source only where a partial rule maps it (:meth:`Attribute.derived` with ``otherwise``) is a
    predictor: :attr:`rules` lists those (column → source); records that break a rule are refused
    before anything is spent, and every synthetic table keeps the rules.

    >>> age = Attribute.numeric("age", 17, 90, integer=True)
    >>> band = Attribute.derived("age band", "age", edges=[17, 30, 50, 90], labels=["young", "middle", "old"])
    >>> schema = Schema([age, band], "income", ["<=50K", ">50K"])
    >>> schema.predictors, schema.columns
    (['age'], ['age', 'age band'])
    >>> list(schema["age band"].derive([17, 29, 30, 90]))
    ['young', 'young', 'middle', 'old']
    """

    def __init__(self, attributes: Sequence[Attribute] | Mapping[str, Attribute], target: str,
                 classes: Sequence):
        attrs = list(attributes.values()) if isinstance(attributes, Mapping) else list(attributes)
        if not [a for a in attrs if _is_predictor(a)]:
            raise ValueError("a schema needs at least one predictor attribute")
        self.attributes: dict[str, Attribute] = {}
        self.derived: dict[str, Attribute] = {}
        self.columns: list[str] = []
        for a in attrs:
            if not isinstance(a, Attribute):
                raise TypeError(f"attributes must be Attribute objects, got {type(a).__name__}")
            if a.name in self.columns or a.name == target:
                raise ValueError(f"attribute name {a.name!r} is used twice (or is the target)")
            (self.attributes if _is_predictor(a) else self.derived)[a.name] = a
            self.columns.append(a.name)
        for a in [*self.derived.values(), *(a for a in self.attributes.values() if a.partial)]:
            if a.source not in self.attributes or self.attributes[a.source].source is not None:
                raise ValueError(f"derived column {a.name!r}: its source {a.source!r} is not a predictor of "
                                 "the schema (a derived column is computed from a declared column that has no "
                                 "rule of its own)")
            a.check_source(self.attributes[a.source])
        self.target = str(target)
        self.classes = tuple(str(c) for c in check_class_list(classes))

    def __repr__(self) -> str:
        return (f"Schema({len(self.attributes)} predictors: {len(self.numeric)} numeric, "
                f"{len(self.categorical)} categorical; target {self.target!r} with classes {self.classes})")

    def __getitem__(self, name: str) -> Attribute:
        try:
            return self.attributes[name] if name in self.attributes else self.derived[name]
        except KeyError:
            raise KeyError(f"unknown column {name!r}; the schema knows {self.predictors}") from None

    def taxonomy_of(self, name: str) -> Taxonomy:
        """The taxonomy of attribute ``name``; the one error for an attribute declared without one
        (the grid methods generalise every attribute through its taxonomy)."""
        taxonomy = self[name].taxonomy
        if taxonomy is None:
            raise ValueError(f"attribute {name!r} has no taxonomy; declare one (Attribute(..., taxonomy=...) "
                             "or a Schema built with taxonomies) to generalise it")
        return taxonomy

    @property
    def predictors(self) -> list[str]:
        return list(self.attributes)

    @property
    def rules(self) -> dict[str, str]:
        """The predictors with a partial rule (:meth:`Attribute.derived` with ``otherwise``):
        column → the column whose value fixes it where the rule maps that value. (Columns that
        are a function of another are :attr:`derived`.)

        >>> net = Attribute.categorical("net", ["DSL", "No"])
        >>> schema = Schema([net, Attribute.categorical("security", ["No", "Yes", "none"])], "y", ["0", "1"])
        >>> rule = Attribute.derived("security", "net", mapping={"No": "none"}, otherwise=["No", "Yes"])
        >>> schema.replace(rule).rules
        {'security': 'net'}
        >>> schema.replace(rule).validate(pd.DataFrame({"net": ["No"], "security": ["Yes"]}))
        Traceback (most recent call last):
        ...
        ValueError: column 'security' has row(s) that break its declared rule ('security' is 'none' exactly when 'net' is 'No'; otherwise it is one of ['No', 'Yes']): ...
        """
        return {n: a.source for n, a in self.attributes.items() if a.partial}

    def rule_breaks(self, X: Any) -> dict[str, np.ndarray]:
        """Per column of :attr:`rules`, True for each row of ``X`` (a DataFrame, or a mapping of
        column → values) that breaks its rule (:meth:`Attribute.rule_breaks`)."""
        return {n: self.attributes[n].rule_breaks(X[src], X[n]) for n, src in self.rules.items()}

    def check_rules(self, X: Any) -> None:
        """Raise the rule's ValueError (:func:`~dpexplore._validation.rule_message`: the columns
        and the rule, never a value) when a row of ``X`` breaks a rule of :attr:`rules`."""
        for name, broken in self.rule_breaks(X).items():
            if broken.any():
                raise ValueError(rule_message("rule", name, statement=self.attributes[name].rule_text()))

    @property
    def numeric(self) -> list[str]:
        return [n for n, a in self.attributes.items() if a.kind == "numeric"]

    @property
    def categorical(self) -> list[str]:
        return [n for n, a in self.attributes.items() if a.kind == "categorical"]

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    # ------------------------------------------------------------------ checks
    def check_columns(self, names: Iterable[str], argument: str = "attributes") -> list[str]:
        """Raise naming any column the schema does not know; return the names as a list."""
        names = list(names)
        unknown = [n for n in names if n not in self.attributes]
        if unknown:
            raise ValueError(f"{argument}: unknown column(s) {unknown}; the schema knows {self.predictors}")
        return names

    def validate(self, X: pd.DataFrame, y: Any = None, *, name: str = "X") -> None:
        """Check columns, missing values, domains and class labels; raise a clear error naming
        the column and the rule, never a private value."""
        check_frame(X, name)
        twice = list(dict.fromkeys(X.columns[X.columns.duplicated()]))
        if twice:
            raise ValueError(f"{name} names the column(s) {twice} more than once: keep one of each "
                             f"({name}.loc[:, ~{name}.columns.duplicated()]) or rename the repeats")
        extra = [c for c in X.columns if c not in self.attributes and c not in self.derived]
        if extra:
            hint = f" ({self.target!r} is the target: pass it as y)" if self.target in extra else ""
            raise ValueError(f"{name} has column(s) the schema does not know: {extra}{hint}")
        missing = [c for c in self.attributes if c not in X.columns]
        if missing:
            raise ValueError(f"{name} lacks the schema's column(s) {missing}")
        for col in self.attributes:
            self.attributes[col].validate(X[col])
        self.check_rules(X)
        if y is not None:  # classes are declared: y may hold any of them, even a single one
            y = check_target(y, "y", min_classes=1)
            check_same_length(X, y, (name, "y"))
            if not y.astype(str).isin(self.classes).all():
                raise ValueError(rule_message("class", self.target, classes=self.classes))

    def encode_target(self, y: Any) -> np.ndarray:
        """Class index (position in ``classes``) of each label."""
        arr = np.asarray(y.to_numpy() if isinstance(y, pd.Series) else y).astype(str)
        codes = pd.Index(list(self.classes), dtype=object).get_indexer(arr)
        if np.any(codes < 0):
            raise ValueError(rule_message("class", self.target, classes=self.classes))
        return codes.astype(np.int64)

    def leaf_codes(self, X: pd.DataFrame, attributes: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Taxonomy leaf code of every value, per predictor."""
        names = self.predictors if attributes is None else self.check_columns(attributes)
        out = {}
        for n in names:
            out[n] = self.taxonomy_of(n).leaf_codes(X[n])
        return out

    def split(self, frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
        """Split a full table into copies of (predictors, target)."""
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
        if self.target not in frame.columns:
            raise ValueError(f"the frame has no target column {self.target!r}")
        missing = [c for c in self.predictors if c not in frame.columns]
        if missing:
            raise ValueError(f"the frame lacks the schema's column(s) {missing}")
        return frame[self.predictors].copy(), frame[self.target].copy()

    # ------------------------------------------------------------------ derived schemas
    def subset(self, names: Sequence[str]) -> "Schema":
        """The same schema restricted to the given predictors (in that order), with the derived
        columns whose source is among them (a partial rule whose source is left out is dropped)."""
        names = self.check_columns(names)
        kept = [self.attributes[n] for n in names]
        kept = [a.without_rule() if a.partial and a.source not in names else a for a in kept]
        return Schema(kept + [a for a in self.derived.values() if a.source in names], self.target, self.classes)

    def replace(self, *attributes: Attribute) -> "Schema":
        """The same schema with each of ``attributes`` in place of the declared column of its name
        (e.g. a rule found by :func:`dpexplore.evaluate.fidelity.table_rules` and checked by you)."""
        new = {a.name: a for a in attributes}
        unknown = [n for n in new if n not in self.columns]
        if unknown:
            raise ValueError(f"replace: unknown column(s) {unknown}; the schema knows {self.columns}")
        return Schema([new.get(n, self[n]) for n in self.columns], self.target, self.classes)

    def with_target(self, target: str, classes: Sequence) -> "Schema":
        """The same predictors with another target column and class list (a column computed from
        the new target is dropped; a partial rule on it is dropped)."""
        kept = [self[n] for n in self.columns if n != target and (self[n].partial or self[n].source != target)]
        return Schema([a.without_rule() if a.partial and a.source == target else a for a in kept], target, classes)

    # ------------------------------------------------------------------ from data (leaks)
    @classmethod
    def from_frame(cls, frame: pd.DataFrame, target: str, *, categorical: Sequence[str] | None = None,
                   fanouts: Sequence[int] = (2, 2, 2)) -> "Schema":
        """Infer a schema from the data itself, with a :class:`PrivacyLeakWarning`.

        Bounds become the observed min/max, categories the observed values and classes the
        observed labels: all of these are read from the private table and are not covered by any
        ε. Use it to explore, then declare the domain you would have known without the data.
        """
        check_frame(frame, "frame")
        if target not in frame.columns:
            raise ValueError(f"target {target!r} is not a column of the frame")
        categorical = set(categorical or [])
        attrs = [observed_attribute(col, frame[col], categorical=col in categorical, fanouts=fanouts)
                 for col in frame.columns if col != target]
        classes = sorted(map(str, frame[target].astype(str).unique()))
        warnings.warn(
            "Schema.from_frame read the domain from the private data: numeric bounds "
            f"({', '.join(a.name for a in attrs if a.kind == 'numeric') or 'none'}), category lists "
            f"({', '.join(a.name for a in attrs if a.kind == 'categorical') or 'none'}) and the class labels "
            "of the target leak information that no ε pays for. Declare public domains instead.",
            PrivacyLeakWarning, stacklevel=2)
        return cls(attrs, target, classes)

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict:
        return {"target": self.target, "classes": list(self.classes),
                "attributes": [self[n].to_dict() for n in self.columns]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Schema":
        return cls([Attribute.from_dict(a) for a in d["attributes"]], d["target"], d["classes"])

    def to_json(self, path: str | Path | None = None) -> str | None:
        """The schema as JSON text (:meth:`to_dict`): written to the file ``path``, or returned
        when no path is given. :meth:`from_json` reads either back."""
        text = json.dumps(self.to_dict(), indent=1)
        if path is None:
            return text
        Path(path).write_text(text)
        return None

    @classmethod
    def from_json(cls, path_or_text: str | Path) -> "Schema":
        """A schema from JSON (as :meth:`to_json` writes it): a path to a file, or the JSON text
        itself (text that starts with ``{``).

        >>> schema = Schema([Attribute.categorical("colour", ["blue", "red"])], "outcome", ["no", "yes"])
        >>> Schema.from_json(schema.to_json()).to_dict() == schema.to_dict()
        True
        >>> Schema.from_json('{"target": "y", "classes": [0, 1], '
        ...                  '"attributes": [{"name": "x", "kind": "categorical", "categories": ["a", "b"]}]}')
        Schema(1 predictors: 0 numeric, 1 categorical; target 'y' with classes ('0', '1'))
        """
        if isinstance(path_or_text, str) and path_or_text.lstrip().startswith("{"):
            text, where = path_or_text, "the JSON text"
        else:
            if not isinstance(path_or_text, (str, Path)):
                raise TypeError(f"from_json takes a path or JSON text, got {type(path_or_text).__name__}")
            path = Path(path_or_text)
            if not path.is_file():
                raise FileNotFoundError(f"no schema file at {str(path_or_text)!r}: give the path of a JSON file "
                                        "(Schema.to_json(path) writes one) or the JSON text itself")
            text, where = path.read_text(), f"the file {str(path_or_text)!r}"
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
        return cls.from_dict(spec)


def check_schema(schema: Any, *, taxonomies: bool = True, name: str = "schema") -> Schema:
    """Return ``schema`` after checking that it is a dpexplore :class:`~dpexplore.domain.Schema`
    and, with ``taxonomies=True``, that every attribute declares a taxonomy (the methods that
    count on a grid generalise each attribute through its taxonomy)."""
    if not isinstance(schema, Schema):
        raise TypeError(f"{name} must be a dpexplore Schema, got {type(schema).__name__}")
    if taxonomies:
        for attribute in schema.attributes:
            schema.taxonomy_of(attribute)
    return schema


# =========================================================================== cut points
def long_tail_cuts(lower: float, upper: float) -> list[float]:
    """Public, data-independent cut points for a long-tailed count column on [lower, upper].

    Bins double in width from ``lower``: {l}, {l+1}, {l+2, l+3}, {l+4 … l+7}, … up to ``upper``
    (for counts from 0: 0 | 1 | 2–3 | 4–7 | 8–15 | …). A cut point ``c`` separates values < c
    from values ≥ c. Reads only the declared bounds, never the data.
    """
    lower, upper = float(lower), float(upper)
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError(f"long_tail_cuts: need finite lower < upper, got [{lower:g}, {upper:g}]")
    cuts, width = [], 1.0
    while lower + width <= upper:
        cuts.append(lower + width)
        width *= 2
    return cuts


def equal_cuts(lower: float, upper: float, bins: int = 8, integer: bool = False) -> list[float]:
    """``bins`` equal-width bins over [lower, upper] as cut points (rounded up to integers for
    integer columns, duplicates removed). Reads only the declared bounds."""
    lower, upper = float(lower), float(upper)
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError(f"equal_cuts: need finite lower < upper, got [{lower:g}, {upper:g}]")
    cuts = [lower + (upper - lower) * i / bins for i in range(1, bins)]
    if integer:
        cuts = sorted({float(math.ceil(c)) for c in cuts if lower < math.ceil(c) <= upper})
    return cuts


def cut_taxonomy(name: str, lower: float, upper: float, cuts: Sequence[float], *,
                 integer: bool = False) -> Taxonomy:
    """A numeric taxonomy whose leaves are the bins between typed cut points.

    A cut point ``c`` separates values < c from values ≥ c (for integer columns: the bin edge is
    c − ½, so "1, 2, 4" gives 0 | 1 | 2–3 | 4+; for decimal columns a value equal to c falls in
    the bin below, the taxonomy's (a, b] convention). Upper levels merge neighbouring bins two by
    two up to the root [lower, upper], so generalisation (PrivPfC §3, DiffGen's specialisation)
    still has a hierarchy. Leaves are labelled "0", "1", "2–3", "16–40" for integers.
    """
    lower, upper = float(lower), float(upper)
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError(f"column {name!r}: the public bounds need finite lower < upper, got [{lower:g}, {upper:g}]")
    try:
        cut_list = sorted({float(c) for c in cuts})
    except (TypeError, ValueError):
        raise ValueError(f"column {name!r}: cut points must be numbers, got {list(cuts)!r}") from None
    outside = [c for c in cut_list if not (lower < c <= upper)]
    if outside:
        raise ValueError(f"column {name!r}: cut points {[format_number(c) for c in outside][:5]} are outside "
                         f"({format_number(lower)}, {format_number(upper)}]: type cut points inside the declared bounds")
    if integer:
        lo, hi = math.ceil(lower), math.floor(upper)
        if any(not float(c).is_integer() for c in cut_list):
            raise ValueError(f"column {name!r} holds integers: type whole-number cut points")
        inner = [c - 0.5 for c in cut_list if lo < c <= hi]
        root = [lower, upper]
        if inner and (inner[0] <= lower or inner[-1] >= upper):
            inner = [e for e in inner if lower < e < upper]
    else:
        inner = [c for c in cut_list if c < upper]
        root = [lower, upper]
    levels = [list(inner)]
    while levels[-1]:
        levels.append(levels[-1][1::2])  # merge neighbouring bins two by two
    edge_levels = [[root[0], *lv, root[1]] for lv in reversed(levels)]
    tax = Taxonomy._from_edges(name, edge_levels)
    if not integer:
        return tax
    def label(a: float, b: float, first: bool) -> str:
        start = math.ceil(a) if first else math.floor(a) + 1
        stop = math.floor(b)
        return str(start) if start >= stop else f"{start}–{stop}"
    labels = [[label(a, b, i == 0) for i, (a, b) in enumerate(zip(e[:-1], e[1:]))] for e in edge_levels]
    maps = [tax.leaf_to_node(d) for d in range(tax.height)]
    return Taxonomy(name, "numeric", labels[-1], labels, maps, edges=edge_levels)


def marginal_taxonomy(attr: "Attribute") -> "Taxonomy":
    """The taxonomy whose leaves are the domain of a column's one-way marginal: its own, or
    :data:`~dpexplore.limits.MARGINAL_BINS` equal-width bins over the public bounds (numeric without one)."""
    if attr.taxonomy is not None:
        return attr.taxonomy
    if attr.kind == "numeric":
        return Taxonomy.equal_width(attr.name, attr.lower, attr.upper, (MARGINAL_BINS,))
    return Taxonomy.flat(attr.name, attr.categories)
