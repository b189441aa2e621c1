"""dpexplore.publish: one DP data-publishing method per module.

* :class:`PrivPfC` (Su et al. 2018): a grid chosen by the exponential mechanism, then a noisy
  histogram (``privpfc.py``; its grid quality, candidate pool and scorers in ``privpfc_scoring.py``).
* :class:`DiffMulti` (Al-Hussaeni et al.): top-down multidimensional generalization
  (``diffmulti.py``), and :class:`DiffGen`, its single-dimensional baseline (``diffgen.py``).
* :class:`ProjectedHistogram` (Vinterbo 2012): k attributes chosen privately, a thresholded noisy
  histogram on them (``projected.py``).

Each is a :class:`Publisher` (``publish/base.py``): it takes ``epsilon``, ``random_state``,
``accountant=`` and the public ``schema=`` in its constructor, fits with ``fit(X, y)`` or
``fit(source)``, records every spend in the ledger, and exposes its release through
trailing-underscore attributes, ``synthetic(*, n, random_state, values)`` and ``predict()``.
:mod:`~dpexplore.publish.partition` holds what DiffMulti and DiffGen share.
``synthetic()`` returns every declared column in schema order; its size is the release's DP total
raised to a public floor and capped at ``max_synthetic_rows`` (or ``n=``). Columns the release
carries no information on are drawn uniformly (the papers) or, with ``marginal_share`` > 0, from DP
marginals paid with that share of ε (an extension beyond the papers): two-way tables with a
privately chosen parent, drawn given each row's parent value; ``column_sources_`` says which. One-way marginals also shape the modelled columns inside their released cells
(:mod:`~dpexplore.publish.shape`); derived columns are computed from their source.
"""
from .. import _lazy

__all__ = ["PrivPfC", "DiffMulti", "DiffGen", "ProjectedHistogram", "Publisher", "Release"]

# each method's module is imported on first use
__getattr__, __dir__ = _lazy.lazy_exports(__name__, {
    "Publisher": ".base", "Release": ".base", "DiffGen": ".diffgen", "DiffMulti": ".diffmulti", "PrivPfC": ".privpfc",
    "ProjectedHistogram": ".projected"}, globals())
