"""Taxonomy trees drawn as trees (notebook 00), with altair.

A :class:`~dpexplore.domain.Taxonomy` is stored level by level (root = depth 0). The tree is
laid out left to right: depth on the x axis, leaves spread evenly on the y axis, each inner node
centred on its children. Nodes that only exist because a short branch was *padded* (copied down
so that every level is a partition of the domain) are drawn in grey.
"""
from __future__ import annotations

from typing import Sequence

import altair as alt
import numpy as np
import pandas as pd

from ..domain import Taxonomy
from ._accessible import describe

__all__ = ["taxonomy_frames", "taxonomy_tree_chart", "taxonomy_levels_chart"]


def taxonomy_frames(taxonomy: Taxonomy) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Node and edge tables of a taxonomy's tree layout.

    nodes: depth, index, label, y (position), n_leaves, padded (True for a copy of its parent
    that only pads a short branch). edges: depth (of the child), x, y, x2, y2.
    """
    height = taxonomy.height
    y_levels: list[np.ndarray] = [np.empty(0)] * height
    last = height - 1
    y_levels[last] = np.arange(taxonomy.level_sizes[last], dtype=float)[::-1]  # first leaf on top
    for depth in range(last - 1, -1, -1):  # a parent sits at the mean of its children
        parents = taxonomy.parents(depth + 1)
        n = taxonomy.level_sizes[depth]
        sums = np.bincount(parents, weights=y_levels[depth + 1], minlength=n)
        y_levels[depth] = sums / np.bincount(parents, minlength=n)
    rows, edges = [], []
    for depth in range(height):
        labels = taxonomy.labels(depth)
        parents = taxonomy.parents(depth) if depth else None
        fan = np.bincount(parents, minlength=taxonomy.level_sizes[depth - 1]) if depth else None
        leaf_counts = np.bincount(taxonomy.leaf_to_node(depth), minlength=len(labels))
        prev_labels = taxonomy.labels(depth - 1) if depth else None
        for i, label in enumerate(labels):
            padded = bool(depth and fan[parents[i]] == 1 and prev_labels[parents[i]] == label)
            rows.append({"depth": depth, "index": i, "label": label, "y": float(y_levels[depth][i]),
                         "n_leaves": int(leaf_counts[i]), "padded": padded})
            if depth:
                edges.append({"depth": depth, "x": depth - 1, "y": float(y_levels[depth - 1][parents[i]]),
                              "x2": depth, "y2": float(y_levels[depth][i]), "padded": padded})
    nodes = pd.DataFrame(rows)
    nodes["x"] = nodes["depth"]
    return nodes, pd.DataFrame(edges, columns=["depth", "x", "y", "x2", "y2", "padded"])


def taxonomy_tree_chart(taxonomy: Taxonomy, *, title: str | None = None, width: int | None = None,
                        row_height: int = 15) -> alt.LayerChart:
    """Draw ``taxonomy`` as a left-to-right tree: root on the left, leaves on the right."""
    nodes, edges = taxonomy_frames(taxonomy)
    n_rows = taxonomy.level_sizes[-1]
    width = width or 150 * taxonomy.height
    height = max(80, row_height * n_rows)
    x_scale = alt.Scale(domain=[-0.1, taxonomy.height - 0.1 + 0.9], nice=False)
    y_scale = alt.Scale(domain=[-0.7, n_rows - 0.3], nice=False)
    x = alt.X("x:Q", scale=x_scale, axis=alt.Axis(title="depth (0 = root)", tickMinStep=1,
                                                  values=list(range(taxonomy.height)), grid=False))
    y = alt.Y("y:Q", scale=y_scale, axis=None)
    shade = alt.ColorValue(**alt.condition(alt.datum.padded, alt.value("#bbbbbb"), alt.value("#333333")))
    links = alt.Chart(edges).mark_rule(strokeWidth=1).encode(x=x, y=y, x2=alt.X2("x2:Q"), y2=alt.Y2("y2:Q"),
                                                              color=shade)
    dots = alt.Chart(nodes).mark_circle(size=45, opacity=1).encode(
        x=x, y=y, color=alt.ColorValue(**alt.condition(alt.datum.padded, alt.value("#bbbbbb"), alt.value("#4c78a8"))),
        tooltip=[alt.Tooltip("label"), alt.Tooltip("depth"), alt.Tooltip("n_leaves:Q", title="leaves below"),
                 alt.Tooltip("padded")])
    # labels: leaves to the right of the dot, inner nodes just above it
    leaf_text = alt.Chart(nodes[nodes["depth"] == taxonomy.height - 1]).mark_text(
        align="left", dx=6, fontSize=10).encode(x=x, y=y, text=alt.Text("label:N"), color=shade)
    inner_text = alt.Chart(nodes[(nodes["depth"] < taxonomy.height - 1) & ~nodes["padded"]]).mark_text(
        align="center", dy=-8, fontSize=10, fontWeight="bold").encode(x=x, y=y, text=alt.Text("label:N"))
    sizes = " / ".join(map(str, taxonomy.level_sizes))
    title = title or f"{taxonomy.name}: {taxonomy.kind} taxonomy, nodes per level {sizes}"
    padded = int(nodes["padded"].sum())
    return describe(
        (links + dots + leaf_text + inner_text).properties(title=title, width=width, height=height),
        f"{title}. A tree drawn from left to right: the root {taxonomy.labels(0)[0]!s} at depth 0, "
        f"{taxonomy.level_sizes[-1]} leaves at depth {taxonomy.height - 1}, each inner node joined to its children"
        + (f"; {padded} grey nodes only copy their parent to pad a short branch." if padded else "."),
        f"Take-away: each depth is a partition of the domain, from 1 node to {taxonomy.level_sizes[-1]}: "
        "a generalisation picks one depth per attribute.")


def taxonomy_levels_chart(taxonomies: Sequence[Taxonomy], *, title: str = "Nodes per taxonomy level",
                          width: int = 420) -> alt.Chart:
    """Heat table: one row per attribute, one column per depth, the number of nodes there."""
    rows = [{"attribute": t.name, "kind": t.kind, "depth": d, "nodes": n}
            for t in taxonomies for d, n in enumerate(t.level_sizes)]
    data = pd.DataFrame(rows)
    order = [t.name for t in taxonomies]
    base = alt.Chart(data).encode(x=alt.X("depth:O", title="depth d (0 = root; paper level d + 1)",
                                                  axis=alt.Axis(labelAngle=0)),
                                  y=alt.Y("attribute:N", sort=order, title=None))
    cells = base.mark_rect().encode(color=alt.Color("nodes:Q", scale=alt.Scale(type="log", scheme="blues"),
                                                    legend=None),
                                    tooltip=[alt.Tooltip("attribute"), alt.Tooltip("kind"), alt.Tooltip("depth"),
                                             alt.Tooltip("nodes")])
    text = base.mark_text(fontSize=11).encode(
        text=alt.Text("nodes:Q"),
        color=alt.ColorValue(**alt.condition(alt.datum.nodes > 15, alt.value("white"), alt.value("black"))))
    return describe(
        (cells + text).properties(title=title, width=width),
        f"{title}: a table of shaded boxes, one row per attribute, one column per depth, with the number "
        "of nodes written in each box.",
        "Take-away: " + "; ".join(f"{t.name} grows from 1 to {t.level_sizes[-1]} nodes over {t.height} levels"
                                  for t in taxonomies) + ".")
