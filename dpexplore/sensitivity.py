"""The L1 sensitivity of every measurement, from the declared neighbour relation: the one place.

Every Laplace, geometric and exponential-mechanism call of a publisher, model or selector takes
its ``sensitivity`` from a function here, so that the ε a release states holds for the relation
it declares. Two tables are neighbours (Dwork & Roth 2014, §2.3; Stoddard et al. 2014, §2) under

* ``"add/remove"`` (unbounded DP): one holds one record more than the other. **dpexplore's
  relation**: a method without a ``neighbours`` parameter states its ε for it, and it is the
  default of every function here. The record count n is private.
* ``"substitution"`` (bounded DP): both hold n records and differ in one (a record replaced); n
  is public. ``ProjectedHistogram(neighbours="substitution")`` offers it, Vinterbo 2012's model
  (§2.1: the histogram noise is Laplace(2/ε)).

A replaced record is one removed and one added, so a substitution moves any measurement by at
most twice its add/remove sensitivity (triangle inequality through D minus the record; a bound
that assumes at least ``n_min`` records must then hold for n − 1). Three kinds of measurement:

* the record count n (:func:`count_sensitivity`): 1 under add/remove; under substitution n is
  public, so there is nothing to measure (0);
* a sum over the records of a per-record contribution whose L1 norm is at most ``per_record``
  (:func:`sum_sensitivity`): a histogram or marginal over a partition of the records (every
  record in one cell: the (cell × class) counts, a one-way or two-way marginal, the class
  counts, a partition's child sizes) has ``per_record`` 1; D per-feature on/off counts per
  class, D; sums of values in [−1, 1] over D features, D. Under substitution the old record's
  contribution leaves and the new one's arrives, possibly in other cells: 2·``per_record``;
* a score or utility with a proven add/remove sensitivity Δ (:func:`utility_sensitivity`): the
  exponential mechanism's qualities, noisy feature scores. Under substitution 2Δ (e.g. a
  difference of two counts, which a replaced record moves one down and one up), unless the score
  is monotone, i.e. every record raises it by between 0 and Δ (a count, a sum of per-cell
  maxima): the removal then lowers it and the addition raises it, by at most Δ each, so Δ; or
  unless the paper proves a tighter bound for it (``substitution=``: Vinterbo 2012's
  discernibility, Thm 1).

Logistic regression's L2 bound on its minimiser (2/λ, Chaudhuri et al. 2011, Cor. 8) is not an
L1 count: it lives with the model (:mod:`dpexplore.models.logistic`), stated for add/remove.

>>> sum_sensitivity(), sum_sensitivity("substitution")          # a histogram over a partition
(1.0, 2.0)
>>> sum_sensitivity(per_record=14)                             # 14 per-feature on/off counts
14.0
>>> count_sensitivity(), count_sensitivity("substitution")     # n: private, or public
(1.0, 0.0)
>>> utility_sensitivity(1.1), utility_sensitivity(1.1, "substitution")
(1.1, 2.2)
>>> utility_sensitivity(1.0, "substitution", monotone=True)    # Σ_cells max_class count
1.0
"""
from __future__ import annotations

from typing import Any

from ._validation import check_flag, check_positive

__all__ = ["NEIGHBOURS", "ADD_REMOVE", "SUBSTITUTION", "check_neighbours", "count_sensitivity", "sum_sensitivity",
           "utility_sensitivity"]

ADD_REMOVE = "add/remove"
SUBSTITUTION = "substitution"
NEIGHBOURS = (ADD_REMOVE, SUBSTITUTION)
"""The neighbour relations a method may declare; the first is dpexplore's."""


def check_neighbours(neighbours: Any) -> str:
    """``neighbours`` when it is one of :data:`NEIGHBOURS`, else a ValueError naming the choices."""
    if not isinstance(neighbours, str) or neighbours not in NEIGHBOURS:
        raise ValueError(f"neighbours must be one of {NEIGHBOURS}, got {neighbours!r}")
    return neighbours


def count_sensitivity(neighbours: str = ADD_REMOVE) -> float:
    """Sensitivity of the record count n: 1 (add/remove), 0 under substitution, where n is public
    and is used as it is, not measured."""
    return 1.0 if check_neighbours(neighbours) == ADD_REMOVE else 0.0


def sum_sensitivity(neighbours: str = ADD_REMOVE, per_record: float = 1.0) -> float:
    """L1 sensitivity of Σ_records φ(record) with ‖φ‖₁ ≤ ``per_record``: ``per_record`` (add/remove:
    one φ comes or goes), 2·``per_record`` (substitution: φ(old) leaves, φ(new) arrives). A
    histogram or marginal over a partition of the records has ``per_record`` 1."""
    b = check_positive(per_record, "per_record")
    return b if check_neighbours(neighbours) == ADD_REMOVE else 2.0 * b


def utility_sensitivity(add_remove: float, neighbours: str = ADD_REMOVE, *, monotone: bool = False,
                        substitution: float | None = None) -> float:
    """Sensitivity of a score whose add/remove sensitivity is ``add_remove``: that bound, or under
    substitution ``add_remove`` again for a ``monotone`` score (every record raises it by between 0
    and ``add_remove``), the tighter bound ``substitution`` a paper proves, else 2·``add_remove``
    (a removal then an addition)."""
    delta = check_positive(add_remove, "add_remove")
    check_flag(monotone, "monotone")
    if check_neighbours(neighbours) == ADD_REMOVE or monotone:
        return delta
    return 2.0 * delta if substitution is None else check_positive(substitution, "substitution")
