"""dpexplore.select: feature scores and private feature selection.

* ``scores.py``: TC, DC, PI and IG (Stoddard et al. 2014 §3) and the thesis's MI sensitivity.
* ``thesis.py``: :class:`PrivateKSubsetSelector`, the one-shot exponential mechanism over
  k-subsets; :class:`IterativeSelector`, the thesis's greedy selector, kept as a labelled
  non-DP example.
* ``stoddard.py``: score perturbation, exponential top-k, the sparse vector technique, and
  Cluster Selection / Private Threshold Testing kept as labelled non-DP demonstrations.
"""
from .. import _lazy

__all__ = ["PrivateKSubsetSelector", "IterativeSelector", "scores", "stoddard", "thesis"]

# the submodules are imported on first use
__getattr__, __dir__ = _lazy.lazy_exports(__name__, {
    "scores": ".scores", "stoddard": ".stoddard", "thesis": ".thesis",
    "IterativeSelector": ".thesis", "PrivateKSubsetSelector": ".thesis"}, globals())
