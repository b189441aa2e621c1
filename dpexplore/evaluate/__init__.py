"""dpexplore.evaluate: private evaluation and method comparison.

* ``roc.py``: :func:`private_roc_curve` and :func:`private_auc` (PriROC, Stoddard et al. 2014),
  with the LaplaceROC baseline :func:`laplace_roc_curve`.
* ``sweeps.py``: :func:`sweep` over methods × ε × repetitions into a tidy DataFrame.
* ``streaming.py``: :func:`score_source`, non-private accuracy of a big test table streamed
  through its engine.
* ``showdown.py``: the methods of the package as sweep candidates, and "which one when".
* ``privpfc.py``: test errors of PrivPfC releases, the error-against-ε sweep and the paper's
  figure tables; ``projected.py``: the cross-validated AUC protocol of projected histograms
  (Vinterbo 2012, §3.1) and its chart tables. Import from the modules.
* ``fidelity.py``: ``fidelity`` and ``fidelity_summary`` (import them from
  ``dpexplore.evaluate.fidelity``), how much of the real table's shape a synthetic table keeps
  (total-variation distance over public bins; not private).
"""
from .. import _lazy

__all__ = ["private_roc_curve", "private_auc", "laplace_roc_curve", "sweep", "summarise", "score_source"]

# imported on first use: a page that reads a stored sweep loads neither SciPy nor scikit-learn
__getattr__, __dir__ = _lazy.lazy_exports(__name__, {
    "private_roc_curve": ".roc", "private_auc": ".roc", "laplace_roc_curve": ".roc",
    "score_source": ".streaming", "sweep": ".sweeps", "summarise": ".sweeps"}, globals())
