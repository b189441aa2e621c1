"""Privacy-budget accounting: every release in dpexplore spends its ε through here.

Sequential composition adds the ε of analyses on the same data; parallel composition charges
only the largest ε among analyses on disjoint parts of the data (Dwork & Roth §3.5; McSherry
2009, PINQ). The accountant keeps a tree of *scopes*: the root and every ``branch`` add up the
cost of what they contain, every ``parallel`` scope costs the maximum of its branches. A spend
is checked against the total **before** it is recorded, and each ledger row says how much it
actually increased the total (``charged``), so the ledger always sums to ``spent``.

δ, for (ε, δ)-DP mechanisms (the Gaussian mechanism), is optional: an accountant made with
``delta=0`` (the default) is pure ε-DP and refuses any spend of δ; one made with a δ budget
records each spend's δ in a ``delta`` column of its ledger and adds the δ's up (basic
composition, Dwork & Roth 2014, Thm 3.16), inside ``parallel`` scopes too (conservative:
parallel composition would charge their maximum).
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np
import pandas as pd

from ._validation import check_epsilon, check_fraction, check_fraction_weights, check_random_state
from .exceptions import BudgetExceededError, DetachedAccountantError

__all__ = ["BudgetAccountant", "BudgetExceededError", "DetachedAccountantError", "RecordsSpends",
           "prepare_accountant"]

# Floating-point slack, relative to the total: 0.03 + 0.37 + 0.6 must exhaust 1.0 although the
# float sum may differ from 1.0 in the last bit. Rounding errors of a few hundred additions are
# ~1e-14 relative; 1e-9 is far above them and far below any spend that matters.
_REL_TOL = 1e-9


_DETACHED_MESSAGE = (
    "this BudgetAccountant was copied out of its process (pickled, or inherited by a forked or "
    "joblib worker, as with n_jobs > 1): a spend here would never reach the caller's accountant, "
    "so nothing was spent. Use n_jobs=1, so that every fit spends from the one shared accountant, "
    "or give this copy's owner an accountant of its own (set_params(accountant=None) or a new "
    "BudgetAccountant). The copy can still be read (ledger, spent).")


@dataclass
class _Scope:
    name: str
    parallel: bool
    parent: "_Scope | None" = None
    cost: float = 0.0
    branch_names: set = field(default_factory=set)  # parallel scopes: names of their branches

    def __copy__(self) -> "_Scope":
        return self  # a scope belongs to its accountant, which copies share (see BudgetAccountant)

    def __deepcopy__(self, memo: dict) -> "_Scope":
        return self

    def path(self) -> str:
        names = []
        node: _Scope | None = self
        while node is not None and node.parent is not None:
            names.append(node.name)
            node = node.parent
        return "/".join(reversed(names))


class BudgetAccountant:
    """Keeps track of a total privacy budget ε and of what has been spent, and on what.

    >>> acc = BudgetAccountant(1.0)
    >>> _ = acc.spend(0.03, "record count"); _ = acc.spend(0.37, "grid selection")
    >>> with acc.parallel("histogram"):          # disjoint cells: charged once
    ...     for cell in range(3):
    ...         _ = acc.spend(0.6, f"cell {cell}")
    >>> round(acc.remaining, 12)
    0.0

    **One budget, however the estimator is copied.** An accountant is shared, never duplicated:
    ``copy.copy`` and ``copy.deepcopy`` return the accountant itself, so ``sklearn.base.clone``
    (which deep-copies every parameter that is not an estimator), ``cross_val_score``,
    ``cross_validate``, ``GridSearchCV``, ``Pipeline``, ``set_params`` and a deep copy of a fitted
    estimator all spend from the caller's accountant. It shows every fit's spend and refuses,
    before anything is spent, the fit that would overdraw it:

    >>> import copy
    >>> shared = BudgetAccountant(1.0)
    >>> copy.deepcopy(shared) is shared
    True
    >>> from sklearn.model_selection import cross_val_score
    >>> from dpexplore.models import PrivateNaiveBayes
    >>> X, y = [[0, 1], [1, 0]] * 10, [0, 1] * 10
    >>> cross_val_score(PrivateNaiveBayes(1.0, classes=[0, 1], accountant=shared), X, y, cv=5,
    ...                 error_score="raise")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    BudgetExceededError: this step needs ε = 1 but only 0 of 1 remains (spent 1)
    >>> shared.spent, shared.n_spends      # the first fold's fit, and only it
    (1.0, 1)

    A copy that leaves the process (``pickle``, a forked or joblib worker with ``n_jobs > 1``)
    could only spend on itself, unseen by the original. It keeps what it knew (``ledger``,
    ``spent``; a pickled fitted estimator still loads and predicts) but refuses every
    ``spend``/``require`` with :class:`DetachedAccountantError`, before anything is spent:

    >>> import pickle
    >>> detached = pickle.loads(pickle.dumps(shared))
    >>> detached.detached, detached.spent
    (True, 1.0)
    >>> detached.require(0.1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    dpexplore.exceptions.DetachedAccountantError: this BudgetAccountant was copied out of its process ...

    **δ, where a mechanism spends it.** With ``delta=`` the accountant also holds a δ budget for
    (ε, δ)-DP mechanisms: ``spend(ε, label, delta=δ)`` adds δ up (basic composition, Dwork & Roth
    2014, Thm 3.16) and the ledger gains a ``delta`` column. A spend that would exceed ε or δ is
    refused before anything is recorded. Without ``delta=`` the accountant is pure ε-DP: its
    ledger has no ``delta`` column and it refuses every δ > 0.

    >>> approx = BudgetAccountant(1.0, delta=1e-5)
    >>> _ = approx.spend(0.5, "Gaussian mean", delta=4e-6); _ = approx.spend(0.25, "Laplace count")
    >>> approx.ledger[["label", "epsilon", "delta"]].values.tolist()
    [['Gaussian mean', 0.5, 4e-06], ['Laplace count', 0.25, 0.0]]
    >>> approx.spend(0.1, "Gaussian again", delta=8e-6)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    BudgetExceededError: spending δ = 8e-06 on 'Gaussian again' would exceed the δ budget: 6e-06 of 1e-05 remains
    >>> approx.spent, approx.spent_delta
    (0.75, 4e-06)
    >>> BudgetAccountant(1.0).require(0.1, delta=1e-6)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    BudgetExceededError: this accountant is pure ε-DP (delta=0): it cannot spend δ = 1e-06 ...
    """

    def __init__(self, epsilon: float, delta: float = 0.0):
        self._total = check_epsilon(epsilon)
        self._total_delta = _check_delta(delta)   # 0: pure ε-DP, no δ may be spent
        self._delta_spent = 0.0
        self._root = _Scope("", parallel=False)
        self._stack: list[_Scope] = [self._root]
        self._rows: list[dict] = []
        self._lock = threading.Lock()  # check-and-record of a spend is atomic across threads
        self._home_pid = os.getpid()   # a forked child's copy must not spend (see detached)
        self._unpickled = False

    # ------------------------------------------------------------------ copies
    def __copy__(self) -> "BudgetAccountant":
        return self  # shared, not duplicated: clone() must not hand each fit a fresh budget

    def __deepcopy__(self, memo: dict) -> "BudgetAccountant":
        return self

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_lock", None)  # a lock cannot be pickled; the copy gets its own
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._unpickled = True  # a copy: its spends could never reach the original

    @property
    def detached(self) -> bool:
        """True for a copy that left its process (unpickled, or in a forked child): it can be
        read but refuses to spend (:class:`DetachedAccountantError`)."""
        return self._unpickled or self._home_pid != os.getpid()

    def _check_attached(self) -> None:
        if self.detached:
            raise DetachedAccountantError(_DETACHED_MESSAGE)

    # ------------------------------------------------------------------ state
    @property
    def total(self) -> float:
        """The total budget ε (read-only: a budget is fixed when the accountant is made)."""
        return self._total

    @property
    def spent(self) -> float:
        """Total ε charged so far (sequential sums, parallel maxima)."""
        return self._root.cost

    @property
    def total_delta(self) -> float:
        """The total δ budget (0: a pure ε-DP accountant, which refuses every δ)."""
        return self._total_delta

    @property
    def spent_delta(self) -> float:
        """Total δ spent so far: the sum of every spend's δ (basic composition)."""
        return self._delta_spent

    @property
    def remaining_delta(self) -> float:
        """δ that one more spend could still use (never negative)."""
        return max(0.0, self._total_delta - self._delta_spent)

    @property
    def remaining(self) -> float:
        """ε that one more spend could still use *here* (never negative).

        At the top level this is ``total - spent``. Inside a :meth:`parallel` scope or one of its
        branches it is what that branch may still spend: a branch running beside a more expensive
        sibling can use up to the sibling's cost without raising the total.
        """
        ceiling = self.total  # the largest cost the current scope may reach
        for parent, child in zip(self._stack[:-1], self._stack[1:]):
            if not parent.parallel:  # sequential: the child's growth adds to the parent's cost
                ceiling = ceiling - parent.cost + child.cost
            # parallel: the child may grow up to the parent's own ceiling
        scope = self._stack[-1]
        available = ceiling if scope.parallel else ceiling - scope.cost
        return max(0.0, float(available))

    def __repr__(self) -> str:
        copy_note = ", detached copy: read-only" if self.detached else ""
        delta_note = (f", total_delta={self.total_delta:g}, spent_delta={self.spent_delta:g}"
                      if self.total_delta else "")
        return (f"BudgetAccountant(total={self.total:g}, spent={self.spent:g}, "
                f"remaining={self.remaining:g}{delta_note}{copy_note})")

    # ------------------------------------------------------------------ spending
    def _fits(self, new_total: float) -> bool:
        return new_total <= self.total * (1 + _REL_TOL)

    def _new_costs(self, epsilon: float) -> list[tuple[_Scope, float]]:
        """Costs each scope on the path to the root would have after spending ``epsilon``.

        A sequential scope (the root, a branch) adds up its children; a parallel scope costs the
        largest of its children. Costs only grow, so the new max is max(old, child's new cost).
        """
        scope = self._stack[-1]
        new = scope.cost + epsilon if not scope.parallel else max(scope.cost, epsilon)
        updates = [(scope, new)]
        child, child_old, child_new = scope, scope.cost, new
        while child.parent is not None:
            parent = child.parent
            if parent.parallel:
                parent_new = max(parent.cost, child_new)
            else:
                parent_new = parent.cost + (child_new - child_old)
            updates.append((parent, parent_new))
            child, child_old, child_new = parent, parent.cost, parent_new
        return updates

    def _check_delta_fits(self, delta: float, what: str) -> None:
        """Refuse ``delta`` (on ``what``) when it would exceed the δ budget: before any spend."""
        if delta == 0:
            return
        if not self._total_delta:
            raise BudgetExceededError(
                f"this accountant is pure ε-DP (delta=0): it cannot spend δ = {delta:g} on {what}. For an "
                "(ε, δ)-DP mechanism make it with a δ budget, BudgetAccountant(epsilon, delta=...)")
        if self._delta_spent + delta > self._total_delta * (1 + _REL_TOL):
            raise BudgetExceededError(
                f"spending δ = {delta:g} on {what} would exceed the δ budget: {self.remaining_delta:g} of "
                f"{self._total_delta:g} remains")

    def require(self, epsilon: float, delta: float = 0.0) -> None:
        """Raise :class:`BudgetExceededError` unless ``epsilon`` (and ``delta``) could still be spent
        here (:class:`DetachedAccountantError` on a copy that left its process)."""
        self._check_attached()
        epsilon = check_epsilon(epsilon)
        delta = _check_delta(delta)
        if not self._fits(self._new_costs(epsilon)[-1][1]):
            raise BudgetExceededError(
                f"this step needs ε = {epsilon:g} but only {self.remaining:g} of "
                f"{self.total:g} remains (spent {self.spent:g})"
            )
        self._check_delta_fits(delta, "this step")

    def spend(self, epsilon: float, label: str, *, delta: float = 0.0) -> float:
        """Record that ``epsilon`` (and ``delta``, for an (ε, δ)-DP mechanism) was spent on ``label``;
        refuse (before recording anything) if either budget would be exceeded.

        Returns ``epsilon`` so that it can be used inline: ``laplace(x, epsilon=acc.spend(e, "x"))``.
        """
        self._check_attached()
        epsilon = check_epsilon(epsilon)
        delta = _check_delta(delta)
        if not isinstance(label, str) or not label:
            raise ValueError("label must be a non-empty string saying what the ε pays for")
        with self._lock:
            before = self._root.cost
            updates = self._new_costs(epsilon)
            if not self._fits(updates[-1][1]):
                raise BudgetExceededError(
                    f"spending ε = {epsilon:g} on {label!r} would exceed the budget: "
                    f"{self.remaining:g} of {self.total:g} remains"
                )
            self._check_delta_fits(delta, repr(label))
            for scope, cost in updates:
                scope.cost = cost
            self._delta_spent += delta
            self._rows.append({
                "label": label,
                "scope": self._stack[-1].path(),
                "epsilon": epsilon,
                "charged": self._root.cost - before,
                "delta": delta,
            })
        return epsilon

    # ------------------------------------------------------------------ scopes
    @contextmanager
    def parallel(self, label: str) -> Iterator["BudgetAccountant"]:
        """Scope for analyses on disjoint parts of the data: it costs the max over its branches.

        Inside, open one :meth:`branch` per part (its spends add up), or spend directly (each
        spend is then a branch of its own). The accountant cannot check that the parts are
        disjoint: that is the caller's claim, and the reason to name each scope and branch.
        Leaving the scope and opening a new one composes sequentially (the two scopes add up).
        """
        if not isinstance(label, str) or not label:
            raise ValueError("label must be a non-empty string naming the partition")
        scope = _Scope(label, parallel=True, parent=self._stack[-1])
        self._stack.append(scope)
        try:
            yield self
        finally:
            self._stack.pop()

    @contextmanager
    def branch(self, name: str) -> Iterator["BudgetAccountant"]:
        """One part of the innermost :meth:`parallel` scope; spends inside it add up."""
        parent = self._stack[-1]
        if not parent.parallel:
            raise RuntimeError("branch() is only valid directly inside parallel()")
        name = str(name)
        if name in parent.branch_names:
            raise ValueError(f"branch {name!r} was already used in this parallel scope")
        parent.branch_names.add(name)
        scope = _Scope(name, parallel=False, parent=parent)
        self._stack.append(scope)
        try:
            yield self
        finally:
            self._stack.pop()

    # ------------------------------------------------------------------ planning and reports
    def split(self, weights: Sequence[float], total: float | None = None) -> list[float]:
        """Amounts of ε proportional to ``weights`` that add up to ``total`` (default: remaining).

        Nothing is spent. The last amount absorbs rounding so the parts sum to ``total`` exactly.
        """
        w = check_fraction_weights(weights, "weights")
        total = self.remaining if total is None else check_epsilon(total, "total")
        parts = [float(total * x) for x in w]
        parts[-1] = float(total - sum(parts[:-1]))
        return parts

    @property
    def n_spends(self) -> int:
        """Number of spends recorded so far (rows of :attr:`ledger`, without building it)."""
        return len(self._rows)

    @property
    def _columns(self) -> list[str]:
        return ["label", "scope", "epsilon", "charged"] + (["delta"] if self._total_delta else [])

    @property
    def ledger(self) -> pd.DataFrame:
        """One row per spend: label, scope path, ε requested, ε charged to the total, and, on an
        accountant with a δ budget, the δ spent (charged as requested)."""
        return pd.DataFrame(self._rows, columns=self._columns)

    def summary(self) -> pd.DataFrame:
        """ε (and δ, with a δ budget) charged per top-level item (a scope or a label): the "where
        did ε go" table."""
        ledger = self.ledger
        charged = self._columns[3:]
        if ledger.empty:
            return pd.DataFrame({"item": [], **{c: [] for c in charged}})
        item = np.where(ledger["scope"] == "", ledger["label"], ledger["scope"].str.split("/").str[0])
        out = ledger.assign(item=item).groupby("item", sort=False)[charged].sum().reset_index()
        return out


def _check_delta(delta: float) -> float:
    """δ as a float in [0, 1) (0: none)."""
    return check_fraction(delta, "delta", low_open=False, high_closed=False)


def prepare_accountant(epsilon: float, accountant: BudgetAccountant | None) -> BudgetAccountant:
    """Validate ``epsilon`` and return the accountant to spend it from.

    With no accountant a fresh ``BudgetAccountant(epsilon)`` is made. A given accountant must
    still hold ``epsilon``; otherwise :class:`~dpexplore.budget.BudgetExceededError` is raised
    here, before any data is touched (:class:`DetachedAccountantError` when it is a copy that
    left its process).
    """
    epsilon = check_epsilon(epsilon)
    if accountant is None:
        return BudgetAccountant(epsilon)
    if not isinstance(accountant, BudgetAccountant):
        raise TypeError(f"accountant must be a BudgetAccountant, got {type(accountant).__name__}")
    accountant.require(epsilon)
    return accountant


class RecordsSpends:
    """Mixin for fitted objects that spend from an accountant: their own slice of its ledger.

    ``fit`` calls ``self._open_ledger(accountant)`` before its first spend and
    ``self._close_ledger()`` after its last one. ``ledger_`` is then exactly this fit's spends,
    even when the accountant is shared and spent from later (say by the classifier after a
    selector in a ``Pipeline``).

    ``epsilon_spent_`` is what this fit *cost*: how much it raised the cost of the scope it ran
    in (the accountant's root, or the ``branch`` it was fitted inside), with any ``parallel``
    scopes inside the fit charged at their maximum. It is computed from this fit's own spends,
    never from the accountant's overall total: inside a ``parallel`` scope next to a sibling
    that spent more, the total does not move, yet the fit still cost its ε on its own part of
    the data. A fit cannot run *directly* inside ``parallel()`` (each of its spends would count
    as a disjoint part); open a ``branch`` for it.

    Copies of the fitted object (``clone``, ``copy.deepcopy``) keep the same ``accountant`` and
    ``accountant_`` (an accountant is never duplicated, see :class:`BudgetAccountant`); an
    unpickled one holds a read-only copy: ``ledger_``, ``epsilon_spent_`` and prediction work,
    a new ``fit`` with that accountant is refused before it spends.
    """

    def _start(self, epsilon: float) -> np.random.Generator:
        """Open this fit's slice on ``self.accountant`` (a fresh one holding ``epsilon`` when it
        is None; ``BudgetExceededError`` here when it cannot pay) and return the generator of
        ``self.random_state``."""
        self._open_ledger(prepare_accountant(epsilon, self.accountant))
        return check_random_state(self.random_state)

    def _open_ledger(self, accountant: BudgetAccountant) -> None:
        scope = accountant._stack[-1]
        if scope.parallel:
            raise RuntimeError(
                f"{type(self).__name__} was fitted directly inside parallel({scope.name!r}); its spends "
                "would each count as a disjoint part of the data. Fit it inside "
                "`with acc.branch(name):` for the part of the data it sees.")
        self.accountant_ = accountant
        self._ledger_start = accountant.n_spends
        self._ledger_end: int | None = None  # still spending: the slice runs to the end
        self._scope = scope
        self._scope_cost_start = scope.cost
        self._cost = 0.0

    def _close_ledger(self) -> None:
        self._ledger_end = self.accountant_.n_spends
        self._cost = float(self._scope.cost - self._scope_cost_start)

    def _spend(self, epsilon: float, label: str) -> float:
        """Spend from ``accountant_`` and extend this fit's slice of the ledger to cover it."""
        spent = self.accountant_.spend(epsilon, label)
        self._close_ledger()
        return spent

    @property
    def ledger_(self) -> pd.DataFrame:
        """The spends of the last ``fit`` (rows of the accountant's ledger), and only those."""
        if "accountant_" not in self.__dict__:
            raise AttributeError("ledger_ is available after fit()")
        rows = self.accountant_.ledger.iloc[self._ledger_start:self.__dict__.get("_ledger_end")]
        return rows.reset_index(drop=True)

    @property
    def epsilon_spent_(self) -> float:
        """ε this fit cost on its data (sequential sum of its spends, parallel parts at their max)."""
        if "accountant_" not in self.__dict__:
            raise AttributeError("epsilon_spent_ is available after fit()")
        if self.__dict__.get("_ledger_end") is None:  # still spending: read the live cost
            return float(self._scope.cost - self._scope_cost_start)
        return float(self._cost)
