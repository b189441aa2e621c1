"""Every public cap and size constant dpexplore applies, in one module.

Each constant is a fixed public number (never derived from the private data), so comparing a
size with it leaks nothing. A cap on something the release will build (rows, cells, tree depth)
is checked before the first ε is spent, or on sizes that are already differentially private
(post-processing), so a refusal never wastes budget half-way through a release. The docstring
under each constant says what it caps and which code checks it.

This module imports nothing from dpexplore: every other module may import it.
"""
from __future__ import annotations

__all__ = ["MAX_SYNTHETIC_ROWS", "OWN_TABLE_SYNTHETIC_ROWS", "MARGINAL_BINS", "MAX_TREE_DEPTH", "MAX_GRID_CELLS",
           "DEFAULT_GRID_CELLS", "MAX_DENSE_ENTRIES", "MAX_DOMAIN", "MAX_SPURIOUS", "MAX_RECORDS", "MAX_SIMULATED",
           "DIFFGEN_MAX_CELLS", "MAX_LATTICE_STEPS", "FEW_RECORDS", "EPSILON_RANGE", "DEFAULT_BATCH_ROWS",
           "MIN_SYNTHETIC_ROWS", "MAX_FILLED_CELLS", "SIZE_ERROR_RATIO", "TABLE_CLASSIFIER_ROWS"]

# ------------------------------------------------------------------------------ synthetic tables
MAX_SYNTHETIC_ROWS = 1_000_000
"""Rows a synthetic table may have: the default of every publisher's ``max_synthetic_rows`` and
of :func:`dpexplore.publish.complete.synthetic_size`, and the default ``max_rows`` of
:func:`dpexplore.histogram.synthetic_from_counts`. The size is a DP total (a noisy count) clamped
to this cap before any row is drawn: at a tiny ε the noisy counts can be astronomically large."""

OWN_TABLE_SYNTHETIC_ROWS = 200_000
"""Rows of the synthetic table the own-table workflow (:func:`dpexplore.tables.release`) makes;
published there as ``dpexplore.tables.MAX_SYNTHETIC_ROWS``. Passed to the publisher as its
``max_synthetic_rows`` before the release spends anything."""

TABLE_CLASSIFIER_ROWS = 50_000
"""Rows of the synthetic table a release's regression is fitted on
(:meth:`dpexplore.publish.histogram_release.HistogramRelease._fit_table_classifier`): the size
rule's, capped here (rows drawn from the released model add no information past a point, and the
fit's time stays bounded however many records a source holds)."""

MIN_SYNTHETIC_ROWS = 300
"""The public floor of a synthetic table's default size (:func:`dpexplore.publish.complete.synthetic_size`):
a DP total below it is raised to it, with a :class:`~dpexplore.exceptions.FewRecordsWarning`
naming the reason; a caller's ``n`` replaces the rule. Post-processing of a DP value."""

SIZE_ERROR_RATIO = 0.5
"""The widest error bar a synthetic table's default size may carry without a warning: when two
standard deviations of the noise in the release's DP total (about a 95% error bar, from ε and
the public or released number of noisy counts summed) exceed this fraction of the total,
:func:`dpexplore.publish.complete.synthetic_size` warns :class:`~dpexplore.exceptions.SyntheticSizeWarning`
(the size could as well be half or one and a half times what it is). A rule on released values
and public parameters only."""

MARGINAL_BINS = 16
"""Equal-width bins of the DP one-way marginal that fills a numeric column without a taxonomy
(``marginal_share > 0`` in the publishers' complete synthetic tables); a public number of cells,
fixed before the marginal is spent."""

# ------------------------------------------------------------------------------ grids and trees
MAX_TREE_DEPTH = 2_000
"""Depth of the DiffMulti / DiffGen partition tree (min(max_depth, h)): root-to-leaf paths are
grown recursively. ``DiffMulti.fit`` refuses larger public depths before the first split is
spent."""

MAX_GRID_CELLS = 1_000_000
"""Cap on PrivPfC's candidate threshold τ = r·N̂·ε_pert (Su et al. 2018, Eq. 6), so on the cells
of a candidate grid. Applied by :func:`dpexplore.publish.privpfc.grid_threshold` to a DP estimate
N̂ (post-processing), before the grid selection spends."""

DEFAULT_GRID_CELLS = 1_000_000
"""Cells of the grid :class:`~dpexplore.models.HistogramClassifier` picks when ``grid=None``
(:func:`dpexplore.models.histogram.default_grid`: the deepest common depth under this cap), a
function of the public taxonomies chosen before the counts are noised."""

MAX_DENSE_ENTRIES = 200_000_000
"""(cell, class) entries a dense count array may hold (memory):
:func:`dpexplore.histogram.class_counts` and :meth:`dpexplore.counts.CountTable.grid_counts`
refuse larger public grid sizes before counting; larger grids take the sparse path."""

DIFFGEN_MAX_CELLS = 2_000_000
"""Default ``max_cells`` of :class:`~dpexplore.publish.DiffGen`: grid cells × classes. A
specialization that would exceed it is skipped, decided from the public sizes before the choice
is spent."""

# ------------------------------------------------------------------------------ projected histograms
MAX_DOMAIN = 2 ** 63 - 1
"""Cells of a projected histogram (k largest domains × classes): mixed-radix codes must fit an
int64. :class:`~dpexplore.publish.ProjectedHistogram` checks every choice of
k predictors before the selection spends."""

MAX_SPURIOUS = 10_000_000
"""Expected empty cells that survive the threshold of a sparse projected release (Vinterbo 2012,
Eq. 5–7): checked with the public domain sizes, before the selection spends."""

MAX_RECORDS = 10_000_000
"""Clip of the noisy record count n̂ of :class:`~dpexplore.publish.ProjectedHistogram`
(post-processing of a DP value), so of the count noise the release may carry."""

MAX_SIMULATED = 1_000_000
"""Records the k heuristic of :func:`dpexplore.publish.projected.estimate_k` simulates (memory);
the simulation uses public sizes only and costs no privacy."""

MAX_FILLED_CELLS = 500_000
"""Largest projection whose thresholded cells a shaped synthetic table of
:class:`~dpexplore.publish.ProjectedHistogram` refills (a public bound on the work of its
``synthetic``; beyond it only the kept cells are used)."""

# ------------------------------------------------------------------------------ mechanisms
MAX_LATTICE_STEPS = 2 ** 52
"""Steps of a public lattice across one declared range, so lattice indices stay exact integers
in float64 (README, "Floating-point noise": every released real number lies on a public grid;
Mironov 2012). Checked by
:func:`dpexplore.mechanisms.check_lattice` when the schema is declared, before any release."""

# ------------------------------------------------------------------------------ own-table workflow
EPSILON_RANGE = (0.01, 10.0)
"""The ε an analyst may ask for in the own-table workflow (:mod:`dpexplore.tables`): outside it
is an error, never a clamp, raised before anything is spent. Below 0.01 a release is noise;
above 10 the guarantee means little."""

FEW_RECORDS = 30
"""A release whose synthetic table has fewer rows than this (a released, noisy size) gets a
:class:`~dpexplore.exceptions.FewRecordsWarning` (mostly noise); the private row count is never
compared with anything."""

# ------------------------------------------------------------------------------ engines
DEFAULT_BATCH_ROWS = 100_000
"""Rows per DataFrame when a :class:`~dpexplore.sources.Source` streams its records
(``iter_frames``): a memory bound, public and independent of the data."""
