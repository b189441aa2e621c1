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

Scopes belong to the thread (or asyncio task) that opened them: each accountant keeps the
innermost open scope of every context in a :class:`contextvars.ContextVar`. A *reservation*
(:meth:`BudgetAccountant.reserve`) holds ε for a release that spends several times, so that
another thread cannot take it half-way; every fit makes one.
"""
from __future__ import annotations

import functools
import os
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pandas as pd

from ._validation import check_epsilon, check_fraction, check_fraction_weights, check_random_state
from .exceptions import BudgetExceededError, DetachedAccountantError

__all__ = ["BudgetAccountant", "BudgetExceededError", "DetachedAccountantError", "FIT_CALLER_STACKLEVEL",
           "RecordsSpends", "Reservation", "check_accountant", "prepare_accountant"]

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


@dataclass(eq=False)
class _Scope:
    """A node of the accountant's tree: the root, a ``parallel`` scope, a ``branch`` or a
    reservation (``held`` is not None while it is open; ``rows`` are its ledger rows).

    ``cost`` composes what was spent inside (sequential sums, parallel maxima): the root's is
    ``spent``. ``load`` composes the same with every open reservation counted at what it holds:
    every check runs on it, so that a reservation's ε cannot be spent by anyone else.
    """

    name: str
    parallel: bool
    parent: "_Scope | None" = None
    held: float | None = None
    rows: list | None = None
    cost: float = 0.0
    load: float = 0.0
    parts: list = field(default_factory=list)  # parallel scopes: each child's load, by its slot
    slot: int = -1                 # this scope's index in its parallel parent's parts
    branch_names: set = field(default_factory=set)  # parallel scopes: names of their branches
    open: bool = True
    token: Any = None              # the ContextVar token that made this scope current

    def __copy__(self) -> "_Scope":
        return self  # a scope belongs to its accountant, which copies share (see BudgetAccountant)

    def __deepcopy__(self, memo: dict) -> "_Scope":
        return self

    def __getstate__(self) -> dict:
        return {**self.__dict__, "token": None}  # a ContextVar token cannot be pickled

    @property
    def is_reservation(self) -> bool:
        return self.rows is not None

    @property
    def contribution(self) -> float:
        """The load this scope adds to its parent: an open reservation counts what it holds."""
        return self.load if self.held is None else max(self.load, self.held)

    def path(self) -> str:
        """Names of the enclosing parallel scopes and branches (reservations are not shown)."""
        names = []
        node: _Scope | None = self
        while node is not None and node.parent is not None:
            if not node.is_reservation:
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

    **Threads and asyncio tasks.** One accountant may be shared by threads (a thread pool of
    fits, joblib's threading backend): every spend is checked and recorded atomically, so the
    total is never exceeded. A scope belongs to the thread or asyncio task that opened it: a
    spend made in another thread lands in that thread's own innermost scope, or, outside any, at
    the top level, where it adds up (a new thread starts outside every scope; an asyncio task
    starts in the scopes open where it was created, a copy of its creator's context). A scope is
    closed by its opener; a task still inside a scope its creator has closed cannot spend there
    (``RuntimeError``, before anything is spent). A release that spends several times first
    *reserves* its ε (:meth:`reserve`; every fit does): the reservation is checked and held at
    once, the spends inside it draw on it alone, and what is left unspent returns to the budget
    when it closes. So another thread can neither take the ε a fit was promised nor make it
    refuse half-way: a fit is refused before its first spend, or it completes.

    >>> import threading
    >>> acc = BudgetAccountant(2.0)
    >>> other = threading.Thread(target=lambda: acc.spend(0.3, "another thread"))
    >>> with acc.parallel("halves"):
    ...     with acc.branch("left"):
    ...         _ = acc.spend(0.5, "left half")
    ...         other.start(); other.join()      # spends at the top level, not in "left"
    >>> acc.ledger[["label", "scope", "charged"]]
                label        scope  charged
    0       left half  halves/left      0.5
    1  another thread                   0.3
    >>> with acc.reserve(1.0, "a release in three steps") as held:
    ...     for step in range(3):
    ...         _ = acc.spend(0.25, f"step {step}")
    >>> held.spent, acc.spent, round(acc.remaining, 12)    # the unspent 0.25 returned
    (0.75, 1.55, 0.45)

    A copy that leaves the process (``pickle``, a forked or joblib worker with ``n_jobs > 1``)
    could only spend on itself, unseen by the original. It keeps what it knew (``ledger``,
    ``spent``; a pickled fitted estimator still loads and predicts) but refuses every
    ``spend``/``require``/``reserve`` with :class:`DetachedAccountantError`, before anything is
    spent:

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
        self._rows: list[dict] = []
        self._lock = threading.Lock()  # every check-and-update of the tree is atomic across threads
        self._current = self._new_context_var()
        self._home_pid = os.getpid()   # a forked child's copy must not spend (see detached)
        self._unpickled = False

    def _new_context_var(self) -> ContextVar:
        """This accountant's innermost open scope in each thread or task (unset: the root)."""
        return ContextVar(f"dpexplore.BudgetAccountant@{id(self):x}", default=None)

    # ------------------------------------------------------------------ copies
    def __copy__(self) -> "BudgetAccountant":
        return self  # shared, not duplicated: clone() must not hand each fit a fresh budget

    def __deepcopy__(self, memo: dict) -> "BudgetAccountant":
        return self

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_lock", None)     # a lock cannot be pickled; the copy gets its own
        state.pop("_current", None)  # nor can a ContextVar: the copy starts outside every scope
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._current = self._new_context_var()
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
    def reserved(self) -> float:
        """ε held by open reservations and not spent yet (:meth:`reserve`)."""
        return max(0.0, float(self._root.load - self._root.cost))

    @property
    def remaining(self) -> float:
        """ε that one more spend could still use *here*, in this thread's scope (never negative).

        At the top level this is ``total - spent - reserved``. Inside a :meth:`parallel` scope or
        one of its branches it is what that branch may still spend: a branch running beside a
        more expensive sibling can use up to the sibling's cost without raising the total. Inside
        a reservation it is what the reservation still holds.
        """
        with self._lock:
            return self._remaining(self._scope())

    def _remaining(self, scope: _Scope) -> float:
        chain = self._chain(scope)
        ceiling = self.total  # the largest load the current scope may reach
        for parent, child in zip(chain[:-1], chain[1:]):
            if not parent.parallel:  # sequential: the child's growth adds to the parent's load
                ceiling = ceiling - parent.load + child.contribution
            # parallel: the child may grow up to the parent's own ceiling
            if child.held is not None:
                ceiling = min(ceiling, child.held)
        available = ceiling if scope.parallel else ceiling - scope.load
        return max(0.0, float(available))

    def __repr__(self) -> str:
        copy_note = ", detached copy: read-only" if self.detached else ""
        held = f", reserved={self.reserved:g}" if self.reserved > 0 else ""
        with self._lock:
            remaining = self._remaining(self._root)   # at the top level, whatever this context's scope
        delta_note = (f", total_delta={self.total_delta:g}, spent_delta={self.spent_delta:g}"
                      if self.total_delta else "")
        return (f"BudgetAccountant(total={self.total:g}, spent={self.spent:g}{held}, "
                f"remaining={remaining:g}{delta_note}{copy_note})")

    # ------------------------------------------------------------------ this context's scope
    def _scope(self) -> _Scope:
        """The innermost scope this thread or task opened (the root when none is open)."""
        scope = self._current.get()
        return self._root if scope is None else scope

    def _chain(self, scope: _Scope) -> list[_Scope]:
        """The scopes from the root down to ``scope``, refusing a scope closed under this context."""
        chain = []
        node: _Scope | None = scope
        while node is not None:
            if not node.open:
                raise RuntimeError(
                    f"the scope {node.name!r} was closed by the thread or task that opened it while "
                    "this one still ran inside it: nothing was spent. Open the scope in the thread "
                    "or task that spends in it, or close it only after that one has finished.")
            chain.append(node)
            node = node.parent
        return chain[::-1]

    # ------------------------------------------------------------------ spending
    def _within(self, load: float, limit: float) -> bool:
        return load <= limit * (1 + _REL_TOL)

    def _plan(self, scope: _Scope, epsilon: float, spend: bool) -> tuple[list, _Scope | None]:
        """The new (scope, cost, load) of ``scope`` and each enclosing scope after adding
        ``epsilon`` in ``scope`` (a spend; or, with ``spend=False``, a new reservation: the loads
        grow, the costs do not), and the first reservation or the root that it would overdraw.

        A sequential scope (the root, a branch, a reservation) adds up its parts; a parallel
        scope costs the largest of its parts. Loads only grow here, so the new maximum is
        max(old, the part's new load).
        """
        self._chain(scope)  # refuse a scope closed under this context
        grow = max if scope.parallel else (lambda old, x: old + x)
        cost = grow(scope.cost, epsilon) if spend else scope.cost
        load = grow(scope.load, epsilon)
        plan = []
        node = scope
        while True:
            plan.append((node, cost, load))
            if node.held is not None and not self._within(load, node.held):
                return plan, node
            parent = node.parent
            if parent is None:
                return plan, (None if self._within(load, self.total) else node)
            new_part = load if node.held is None else max(load, node.held)
            if parent.parallel:
                cost, load = max(parent.cost, cost), max(parent.load, new_part)
            else:
                cost = parent.cost + (cost - node.cost)
                load = parent.load + (new_part - node.contribution)
            node = parent

    def _add(self, epsilon: float, spend: bool, what: str) -> _Scope:
        """Add ``epsilon`` in this context's scope, which it returns (a spend, or with
        ``spend=False`` a new reservation's hold), or refuse before changing anything. Under the
        lock."""
        scope = self._scope()
        plan, over = self._plan(scope, epsilon, spend)
        if over is not None:
            raise self._refusal(epsilon, what, over, scope)
        for node, cost, load in plan:
            node.cost, node.load = cost, load
            if node.parent is not None and node.parent.parallel:
                node.parent.parts[node.slot] = node.contribution
        return scope

    def _refusal(self, epsilon: float, what: str, limit: _Scope, scope: _Scope) -> BudgetExceededError:
        if limit.held is not None:
            return BudgetExceededError(
                f"{what} needs ε = {epsilon:g} but only {self._remaining(scope):g} of the ε = "
                f"{limit.held:g} reserved for {limit.name!r} remains")
        held = f", {self.reserved:g} reserved by releases in progress" if self.reserved > 0 else ""
        return BudgetExceededError(
            f"{what} needs ε = {epsilon:g} but only {self._remaining(scope):g} of {self.total:g} "
            f"remains (spent {self.spent:g}{held})")

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
        """Raise :class:`BudgetExceededError` unless ``epsilon`` (and ``delta``) could still be
        spent here (:class:`DetachedAccountantError` on a copy that left its process).

        A check, not a promise: another thread may spend before you do. To hold ε for several
        spends, :meth:`reserve` it.
        """
        self._check_attached()
        epsilon = check_epsilon(epsilon)
        delta = _check_delta(delta)
        with self._lock:
            scope = self._scope()
            _, over = self._plan(scope, epsilon, spend=True)
            if over is not None:
                raise self._refusal(epsilon, "this step", over, scope)
            self._check_delta_fits(delta, "this step")

    def spend(self, epsilon: float, label: str, *, delta: float = 0.0) -> float:
        """Record that ``epsilon`` (and ``delta``, for an (ε, δ)-DP mechanism) was spent on
        ``label``; refuse (before recording anything) if either budget would be exceeded.

        Returns ``epsilon`` so that it can be used inline: ``laplace(x, epsilon=acc.spend(e, "x"))``.
        """
        self._check_attached()
        epsilon = check_epsilon(epsilon)
        delta = _check_delta(delta)
        if not isinstance(label, str) or not label:
            raise ValueError("label must be a non-empty string saying what the ε pays for")
        with self._lock:
            self._check_delta_fits(delta, repr(label))   # before _add, which records the ε
            before = self._root.cost
            scope = self._add(epsilon, True, f"spending on {label!r}")
            self._delta_spent += delta
            row = len(self._rows)
            self._rows.append({
                "label": label,
                "scope": scope.path(),
                "epsilon": epsilon,
                "charged": self._root.cost - before,
                "delta": delta,
            })
            node: _Scope | None = scope
            while node is not None:  # the row belongs to every reservation it was spent in
                if node.is_reservation:
                    node.rows.append(row)
                node = node.parent
        return epsilon

    # ------------------------------------------------------------------ scopes
    def _open(self, scope: _Scope) -> _Scope:
        """Make ``scope`` (a child of this context's current scope) current. Under the lock."""
        parent = scope.parent
        if parent.parallel:
            scope.slot = len(parent.parts)
            parent.parts.append(scope.contribution)
        scope.token = self._current.set(scope)
        return scope

    def _close(self, scope: _Scope) -> None:
        """Close ``scope`` in the thread or task that opened it, with any scope it left open
        inside (a reservation returns what it did not spend)."""
        with self._lock:
            inside = []
            node = self._current.get()
            while node is not None and node is not scope:
                inside.append(node)
                node = node.parent
            if not scope.open:
                return  # closed already, with a scope it was opened in
            if node is None:
                raise RuntimeError(
                    f"the scope {scope.name!r} is not open in this thread or task: a scope is closed "
                    "by the thread or task that opened it")
            try:
                self._current.reset(scope.token)
            except ValueError:  # opened in another context (an asyncio task's creator)
                raise RuntimeError(
                    f"the scope {scope.name!r} was opened by another thread or task: a scope is "
                    "closed by the thread or task that opened it") from None
            for node in inside + [scope]:
                node.open, node.token = False, None
                if node.held is not None:
                    self._return_unspent(node)

    def _return_unspent(self, reservation: _Scope) -> None:
        """The reservation stops holding ε: the loads above it fall to what was spent."""
        old = reservation.contribution
        reservation.held = None
        node = reservation
        while node.parent is not None and node.contribution != old:
            parent = node.parent
            parent_old = parent.contribution
            if parent.parallel:  # the largest part; its direct spends are in its cost
                parent.parts[node.slot] = node.contribution
                load = max(parent.parts)
            else:
                load = parent.load + (node.contribution - old)
            parent.load = max(load, parent.cost)  # never below what was spent
            node, old = parent, parent_old

    @contextmanager
    def parallel(self, label: str) -> Iterator["BudgetAccountant"]:
        """Scope for analyses on disjoint parts of the data: it costs the max over its branches.

        Inside, open one :meth:`branch` per part (its spends add up), or spend directly (each
        spend is then a branch of its own). The accountant cannot check that the parts are
        disjoint: that is the caller's claim, and the reason to name each scope and branch.
        Leaving the scope and opening a new one composes sequentially (the two scopes add up).
        The scope is this thread's (or asyncio task's): other threads do not spend in it.
        """
        if not isinstance(label, str) or not label:
            raise ValueError("label must be a non-empty string naming the partition")
        with self._lock:
            parent = self._scope()
            self._chain(parent)
            scope = self._open(_Scope(label, parallel=True, parent=parent))
        try:
            yield self
        finally:
            self._close(scope)

    @contextmanager
    def branch(self, name: str) -> Iterator["BudgetAccountant"]:
        """One part of the innermost :meth:`parallel` scope; spends inside it add up."""
        name = str(name)
        with self._lock:
            parent = self._scope()
            if not parent.parallel:
                raise RuntimeError("branch() is only valid directly inside parallel()")
            self._chain(parent)
            if name in parent.branch_names:
                raise ValueError(f"branch {name!r} was already used in this parallel scope")
            parent.branch_names.add(name)
            scope = self._open(_Scope(name, parallel=False, parent=parent))
        try:
            yield self
        finally:
            self._close(scope)

    def reserve(self, epsilon: float, label: str) -> "Reservation":
        """Hold ``epsilon`` for a release that spends several times; refuse now if it cannot.

        The check and the hold are one atomic step, in this thread's current scope, so that
        other threads cannot spend this ε: :class:`BudgetExceededError` is raised here, before
        anything is spent, or never for want of budget (a spend inside that exceeds the
        reservation itself is refused). Spends of this thread inside it draw on it, and it shows
        in no scope path. Use it in a ``with`` block, which returns the unspent part when the
        block ends, also on an exception; fits reserve their ``epsilon`` (:class:`RecordsSpends`).
        """
        self._check_attached()
        epsilon = check_epsilon(epsilon)
        if not isinstance(label, str) or not label:
            raise ValueError("label must be a non-empty string saying what the ε is held for")
        with self._lock:
            scope = self._add(epsilon, False, f"reserving for {label!r}")
            held = self._open(_Scope(label, parallel=False, parent=scope, held=epsilon, rows=[]))
        return Reservation(self, held, epsilon)

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
        with self._lock:
            rows = list(self._rows)
        return pd.DataFrame(rows, columns=self._columns)

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


class Reservation:
    """ε held by :meth:`BudgetAccountant.reserve` for one release, and what it spent of it.

    A context manager: leaving the ``with`` block (or :meth:`close`) returns the unspent part to
    the budget. ``spent`` is the release's own cost (its spends, any ``parallel`` scope inside at
    its maximum) and ``ledger`` its own rows of the accountant's ledger, whatever other threads
    spend meanwhile.
    """

    def __init__(self, accountant: BudgetAccountant, scope: _Scope, epsilon: float):
        self.accountant = accountant
        self.epsilon = epsilon
        self._scope = scope

    def __enter__(self) -> "Reservation":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def open(self) -> bool:
        """True until the reservation is closed."""
        return self._scope.open

    @property
    def spent(self) -> float:
        """ε this release has cost so far."""
        return float(self._scope.cost)

    @property
    def ledger(self) -> pd.DataFrame:
        """The accountant's ledger rows of the spends made inside this reservation."""
        return self.accountant.ledger.iloc[list(self._scope.rows)].reset_index(drop=True)

    def close(self) -> None:
        """Return the unspent ε to the budget (once; in the thread or task that reserved)."""
        if self._scope.open:
            self.accountant._close(self._scope)

    def __repr__(self) -> str:
        state = "open" if self.open else "closed"
        return f"Reservation({self._scope.name!r}, spent={self.spent:g}, {state})"


def prepare_accountant(epsilon: float, accountant: BudgetAccountant | None) -> BudgetAccountant:
    """Validate ``epsilon`` and return the accountant to spend it from.

    With no accountant a fresh ``BudgetAccountant(epsilon)`` is made. A given accountant must
    still hold ``epsilon``; otherwise :class:`~dpexplore.budget.BudgetExceededError` is raised
    here, before any data is touched (:class:`DetachedAccountantError` when it is a copy that
    left its process). A check only: the fit then reserves its ε (``_open_ledger``).
    """
    epsilon = check_epsilon(epsilon)
    if accountant is None:
        return BudgetAccountant(epsilon)
    check_accountant(accountant).require(epsilon)
    return accountant


def check_accountant(accountant: Any, error: type[Exception] = TypeError) -> BudgetAccountant:
    """``accountant`` if it is a :class:`BudgetAccountant`, else ``error`` (the one wording)."""
    if not isinstance(accountant, BudgetAccountant):
        raise error(f"accountant must be a BudgetAccountant, got {type(accountant).__name__}")
    return accountant


FIT_CALLER_STACKLEVEL = 3
"""``stacklevel`` of a warning raised in the body of a fit (``fit``, ``fit_scores``) that must point
at the line that called the fit: :class:`RecordsSpends` wraps each fit in one more frame (which
closes its reservation when it ends). One more for each helper in between."""


def _returns_unspent(method: Callable) -> Callable:
    """``method`` (a fit), closing the reservation it opened when it ends, also on an exception."""
    @functools.wraps(method)
    def fit_then_return_unspent(self, *args, **kwargs):
        depth = self.__dict__.get("_fit_depth", 0)   # a fit calling another fit of the same object
        before = self.__dict__.get("_reservation")
        self.__dict__["_fit_depth"] = depth + 1
        try:
            return method(self, *args, **kwargs)
        finally:
            if depth:
                self.__dict__["_fit_depth"] = depth
            else:
                del self.__dict__["_fit_depth"]
                held = self.__dict__.get("_reservation")
                if held is not None and held is not before:
                    held.close()

    fit_then_return_unspent.returns_unspent = True
    return fit_then_return_unspent


class RecordsSpends:
    """Mixin for fitted objects that spend from an accountant: their own reservation and ledger.

    ``fit`` calls ``self._open_ledger(accountant)`` (or ``self._start(epsilon)``) before its first
    spend: that reserves the fit's whole ``epsilon`` at once (:meth:`BudgetAccountant.reserve`),
    so a fit is refused before it spends anything (``BudgetExceededError``) or completes, however
    other threads spend from the same accountant. ``self._close_ledger()`` after its last spend
    returns what it left unspent. The methods named in ``_spending_methods`` (``fit``,
    ``fit_scores``) are wrapped when a subclass is defined, so that their reservation is also
    returned when they end otherwise (an exception, a fit that never calls ``_close_ledger``).

    ``ledger_`` is then exactly this fit's spends, even when the accountant is shared and spent
    from meanwhile or later (by other threads, or by the classifier after a selector in a
    ``Pipeline``). ``epsilon_spent_`` is what this fit *cost*, sequential sum of its spends with
    any ``parallel`` scopes inside the fit charged at their maximum, computed from this fit's
    own spends, never from the accountant's overall total: inside a ``parallel`` scope next to a
    sibling that spent more, the total does not move, yet the fit still cost its ε on its own
    part of the data. A fit does not run *directly* inside ``parallel()``: open a ``branch``
    naming the part of the data it sees.

    Copies of the fitted object (``clone``, ``copy.deepcopy``) keep the same ``accountant`` and
    ``accountant_`` (an accountant is never duplicated, see :class:`BudgetAccountant`); an
    unpickled one holds a read-only copy: ``ledger_``, ``epsilon_spent_`` and prediction work,
    a new ``fit`` with that accountant is refused before it spends.
    """

    _spending_methods = ("fit", "fit_scores")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in RecordsSpends._spending_methods:
            method = cls.__dict__.get(name)
            if callable(method) and not getattr(method, "returns_unspent", False):
                setattr(cls, name, _returns_unspent(method))

    def _start(self, epsilon: float) -> np.random.Generator:
        """Open this fit's ledger on ``self.accountant`` (a fresh one holding ``epsilon`` when it
        is None), reserving ``epsilon`` (``BudgetExceededError`` here when it cannot pay), and
        return the generator of ``self.random_state``."""
        self._open_ledger(prepare_accountant(epsilon, self.accountant), epsilon)
        return check_random_state(self.random_state)

    def _open_ledger(self, accountant: BudgetAccountant, epsilon: float | None = None) -> None:
        """Reserve this fit's ε (``self.epsilon`` unless given) on ``accountant``; from now on
        its spends are this fit's ledger."""
        scope = accountant._scope()
        if scope.parallel:
            raise RuntimeError(
                f"{type(self).__name__} was fitted directly inside parallel({scope.name!r}): fit it inside "
                "`with acc.branch(name):`, naming the disjoint part of the data it sees, so that the "
                "ledger says which part each fit was charged for.")
        self._close_ledger()  # a ledger left open by an earlier call of this fit
        epsilon = check_epsilon(self.epsilon if epsilon is None else epsilon)
        self._reservation = accountant.reserve(epsilon, type(self).__name__)
        self.accountant_ = accountant

    def _close_ledger(self) -> None:
        """After the fit's last spend: return the ε it reserved and did not spend."""
        held = self.__dict__.get("_reservation")
        if held is not None:
            held.close()

    def _spend(self, epsilon: float, label: str) -> float:
        """Spend from ``accountant_``, inside this fit's reservation."""
        return self.accountant_.spend(epsilon, label)

    @property
    def ledger_(self) -> pd.DataFrame:
        """The spends of the last ``fit`` (rows of the accountant's ledger), and only those."""
        if "_reservation" not in self.__dict__:
            raise AttributeError("ledger_ is available after fit()")
        return self._reservation.ledger

    @property
    def epsilon_spent_(self) -> float:
        """ε this fit cost on its data (sequential sum of its spends, parallel parts at their max)."""
        if "_reservation" not in self.__dict__:
            raise AttributeError("epsilon_spent_ is available after fit()")
        return self._reservation.spent
