"""dpexplore.publish: one DP data-publishing method per module.

* :class:`PrivPfC` (Su et al. 2018): a grid chosen by the exponential mechanism, then a noisy
  histogram (``privpfc.py``).
* :class:`DiffMulti` (Al-Hussaeni et al.): top-down multidimensional generalization
  (``diffmulti.py``), and :class:`DiffGen`, its single-dimensional baseline (``diffgen.py``).
* :class:`ProjectedHistogram` (Vinterbo 2012): k attributes chosen privately, a thresholded noisy
  histogram on them (``projected.py``).

Each takes ``epsilon``, ``random_state`` and ``accountant=``, records every spend in the ledger,
and exposes its release through trailing-underscore attributes, ``synthetic()`` and ``predict()``.
``synthetic()`` returns every declared column in schema order; its size is the release's DP total
clamped to [1, ``max_synthetic_rows``] (or ``n=``). Columns the release carries no information on
are drawn uniformly (the papers) or, with ``marginal_share`` > 0, from DP one-way marginals paid
with that share of ε (an extension beyond the papers); ``column_sources_`` says which.
"""
from .. import _lazy

__all__ = ["PrivPfC", "DiffMulti", "DiffGen", "ProjectedHistogram", "Release"]

# each method's module is imported on first use
__getattr__, __dir__ = _lazy.lazy_exports(__name__, {
    "Release": ".base", "DiffGen": ".diffgen", "DiffMulti": ".diffmulti", "PrivPfC": ".privpfc",
    "ProjectedHistogram": ".projected"}, globals())
