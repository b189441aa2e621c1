"""One accountant shared by threads: every scope belongs to the thread that opened it, the budget
is never exceeded, and a refusal comes before any spend.

When the accountant kept one scope stack for all threads, a spend in thread B landed in thread
A's open ``parallel()`` branch (where only the largest branch counts), so fits released more
than the budget; a fit that spends several times could spend part of its ε and then be refused
because another thread took the rest; and DiffMulti, whose partitioning cost is read from its
own scope, raised ``RuntimeError`` after it had spent. Threads here wait on ``Event``/``Barrier``
with timeouts, so a deadlock fails the test instead of hanging it.
"""
from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from _event_loop import run_coroutine
from dpexplore import mechanisms
from dpexplore.budget import BudgetAccountant, BudgetExceededError
from dpexplore.datasets import make_synthetic
from dpexplore.models import PrivateNaiveBayes
from dpexplore.publish import DiffMulti, PrivPfC
from dpexplore.registry import all_methods, get_method

WAIT = 60.0  # seconds any thread waits for another before the test fails (a deadlock, not a hang)
TOL = 1e-9


def _run_threads(*targets) -> list[BaseException | None]:
    """Run each target in its own thread; the exception each raised (None when it returned)."""
    errors: list[BaseException | None] = [None] * len(targets)

    def runner(i, target):
        try:
            target()
        except BaseException as err:  # noqa: BLE001 - reported to the test below
            errors[i] = err

    threads = [threading.Thread(target=runner, args=(i, t), daemon=True) for i, t in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert not any(t.is_alive() for t in threads), "a thread is still waiting: deadlock"
    return errors


def _wait(event: threading.Event) -> None:
    if not event.wait(WAIT):
        raise TimeoutError("the other thread never got there")


@pytest.fixture
def frequent_switches():
    """Let the interpreter switch threads far more often than every 5 ms (real interleavings)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


@pytest.fixture(scope="module")
def table():
    frame, schema = make_synthetic(n_samples=2000, random_state=0)
    X, y = schema.split(frame)
    return X, y, schema


@pytest.fixture(scope="module")
def binary():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    X = np.where(rng.random((200, 4)) < 0.8, y[:, None], 1 - y[:, None])
    return X, y


# --------------------------------------------------------------------------- deterministic interleaving
def _interleave(total: float):
    """T1 opens parallel() with two branches of 0.5 each; T2 spends 0.3 inside each of them
    (in time). Returns the accountant and each thread's exception."""
    acc = BudgetAccountant(total)
    in_a, t2_first, in_b, t2_second = (threading.Event() for _ in range(4))

    def t1():
        try:
            with acc.parallel("halves"):
                with acc.branch("a"):
                    acc.spend(0.5, "T1 left")
                    in_a.set()
                    _wait(t2_first)
                with acc.branch("b"):
                    acc.spend(0.5, "T1 right")
                    in_b.set()
                    _wait(t2_second)
        finally:
            in_a.set()
            in_b.set()

    def t2():
        try:
            _wait(in_a)
            acc.spend(0.3, "T2 first")
            t2_first.set()
            _wait(in_b)
            acc.spend(0.3, "T2 second")
        finally:
            t2_first.set()
            t2_second.set()

    return acc, _run_threads(t1, t2)


def test_a_spend_in_another_thread_is_charged_at_the_top_level():
    """Before: ``spent`` 0.8 for 1.1 of spends (T2's spends each sat in one of T1's branches)."""
    acc, (err1, err2) = _interleave(total=2.0)
    assert err1 is None and err2 is None
    ledger = acc.ledger.set_index("label")
    assert list(ledger.loc[["T2 first", "T2 second"], "scope"]) == ["", ""]
    assert list(ledger.loc[["T1 left", "T1 right"], "scope"]) == ["halves/a", "halves/b"]
    assert acc.spent == pytest.approx(0.5 + 0.3 + 0.3)  # parallel at its max, then T2's two spends
    assert acc.ledger["charged"].sum() == pytest.approx(acc.spent)


def test_the_interleaving_that_would_overdraw_is_refused():
    """Budget 1: 0.5 (T1's parallel scope) + 0.3 + 0.3 does not fit; before, nothing was refused."""
    acc, (err1, err2) = _interleave(total=1.0)
    assert err1 is None                             # T1's scope: 0.5, then T2's first 0.3
    assert isinstance(err2, BudgetExceededError)    # T2's second 0.3 would make 1.1
    assert list(acc.ledger["label"]) == ["T1 left", "T2 first", "T1 right"]
    assert acc.spent == pytest.approx(0.8) and acc.spent <= acc.total * (1 + TOL)


# --------------------------------------------------------------------------- a fit reserves its ε
def test_a_fit_that_spends_several_times_is_not_refused_half_way(table, monkeypatch):
    """PrivPfC spends three times (record count, grid selection, histogram). Thread B takes
    what remains right after A's first spend: A must still finish on the ε it was promised
    (before: A spent its record count, then was refused at the grid selection)."""
    X, y, schema = table
    acc = BudgetAccountant(1.0)
    first_draw, b_done = threading.Event(), threading.Event()
    laplace = mechanisms.laplace

    def paused_laplace(*args, **kwargs):       # A's first draw comes right after its first spend
        if threading.get_ident() == a_thread[0] and not first_draw.is_set():
            first_draw.set()
            _wait(b_done)
        return laplace(*args, **kwargs)

    monkeypatch.setattr(mechanisms, "laplace", paused_laplace)
    a_thread: list[int] = []
    fitted: list[PrivPfC] = []

    def a():
        a_thread.append(threading.get_ident())
        try:
            fitted.append(PrivPfC(epsilon=0.6, schema=schema, accountant=acc, random_state=0).fit(X, y))
        finally:
            first_draw.set()

    def b():
        try:
            _wait(first_draw)
            acc.spend(acc.remaining, "B takes the rest")
        finally:
            b_done.set()

    err_a, err_b = _run_threads(a, b)
    assert err_a is None and err_b is None
    assert fitted[0].epsilon_spent_ == pytest.approx(0.6)
    assert acc.spent == pytest.approx(1.0) and acc.spent <= acc.total * (1 + TOL)
    b_row = acc.ledger[acc.ledger["label"] == "B takes the rest"]
    assert b_row["epsilon"].iloc[0] == pytest.approx(0.4)   # B could only have what A had not reserved


# --------------------------------------------------------------------------- thread pools of fits
def _outcomes(futures) -> tuple[list, list]:
    """(fitted estimators, exceptions) of the futures, each waited for with a timeout."""
    fitted, errors = [], []
    for future in futures:
        err = future.exception(timeout=WAIT)
        (errors if err is not None else fitted).append(err if err is not None else future.result())
    return fitted, errors


def _assert_exact_ledger(acc: BudgetAccountant, fitted: list) -> None:
    """Every row of the accountant belongs to exactly one released fit, which is charged its ε:
    the refused fits spent nothing."""
    assert acc.spent <= acc.total * (1 + TOL)
    assert sum(len(est.ledger_) for est in fitted) == acc.n_spends
    for est in fitted:
        assert est.epsilon_spent_ == pytest.approx(est.epsilon, rel=1e-9)
        assert est.ledger_["charged"].sum() == pytest.approx(est.epsilon, rel=1e-9)
    assert acc.spent == pytest.approx(sum(est.epsilon for est in fitted), rel=1e-9)
    assert acc.ledger["charged"].sum() == pytest.approx(acc.spent, rel=1e-9)


def test_naive_bayes_fits_beside_diffmulti_in_a_thread_pool(table, binary, frequent_switches):
    """The audit's case: Naive Bayes fits of ε 0.05 from a thread pool while DiffMulti (ε 0.4)
    partitions, on one accountant of 1.0. Before: 19 to 21 of 24 Naive Bayes fits released (their
    spends sat in DiffMulti's branch), DiffMulti refused half-way or RuntimeError after spending."""
    X, y, schema = table
    Xb, yb = binary
    acc = BudgetAccountant(1.0)
    partitioning = threading.Event()

    def diffmulti():
        return DiffMulti(epsilon=0.4, schema=schema, accountant=acc, random_state=0).fit(X, y)

    def watch():                        # the Naive Bayes fits start once DiffMulti has spent
        deadline = time.monotonic() + WAIT
        while acc.n_spends == 0 and time.monotonic() < deadline:
            time.sleep(0.0005)
        partitioning.set()

    def naive_bayes(i):
        _wait(partitioning)
        return PrivateNaiveBayes(0.05, classes=[0, 1], accountant=acc, random_state=i).fit(Xb, yb)

    with ThreadPoolExecutor(6) as pool:
        dm = pool.submit(diffmulti)
        pool.submit(watch)
        nbs = [pool.submit(naive_bayes, i) for i in range(24)]
        (released_dm,), dm_errors = _outcomes([dm])
        fitted, errors = _outcomes(nbs)
    assert not dm_errors
    assert all(isinstance(err, BudgetExceededError) for err in errors), errors
    assert len(fitted) == 12                       # (1.0 - 0.4) / 0.05
    _assert_exact_ledger(acc, [released_dm] + fitted)
    nb_rows = acc.ledger[acc.ledger["label"].str.startswith("naive Bayes")]
    assert (nb_rows["scope"] == "").all()          # none inside DiffMulti's partitioning
    assert released_dm.partitioning_epsilon_ <= 0.4 / 2 * (1 + TOL)


# ProjectedHistogram at ε 0.3 on 1,600 training rows may find one class in its synthetic table
@pytest.mark.filterwarnings("ignore::dpexplore.exceptions.EmptySyntheticWarning")
@pytest.mark.parametrize("name", [spec.name for spec in all_methods("publisher", private=True)])
def test_fits_racing_for_the_last_of_the_budget_are_refused_before_spending(table, name, frequent_switches):
    """Eight fits of ε 0.3 (each of every registered publisher, paying marginals too) start together
    on a budget of 1: three are released, each with its own ledger, and the five refused ones spent
    nothing."""
    X, y, schema = table
    acc = BudgetAccountant(1.0)
    start = threading.Barrier(8, timeout=WAIT)
    spec = get_method(name)

    def fit(i):
        start.wait()
        return spec.build(schema, **spec.test_params, epsilon=0.3, accountant=acc, random_state=i,
                          marginal_share=0.25).fit(X, y)

    with ThreadPoolExecutor(8) as pool:
        fitted, errors = _outcomes([pool.submit(fit, i) for i in range(8)])
    assert all(isinstance(err, BudgetExceededError) for err in errors), errors
    assert len(fitted) == 3
    _assert_exact_ledger(acc, fitted)
    rows = pd.concat([est.ledger_ for est in fitted], ignore_index=True)
    assert sorted(map(tuple, rows.to_numpy())) == sorted(map(tuple, acc.ledger.to_numpy()))


def test_concurrent_diffmulti_fits_release_what_they_release_alone(table, frequent_switches):
    """DiffMulti grows its tree in nested parallel()/branch() scopes and reads its partitioning
    cost from its own spends. Sharing one scope stack, concurrent fits opened branches in each
    other's scopes ("branch() is only valid directly inside parallel()", "branch 'node 88' was
    already used") and counted each other's spends ("partitioning spent 0.46 > ε/2"): RuntimeError
    after spending. Each fit now sees its own scopes: four concurrent fits release exactly what
    each releases alone, seed for seed, with the same ledger."""
    X, y, schema = table

    def fit(seed, acc):
        return DiffMulti(epsilon=0.5, schema=schema, accountant=acc, random_state=seed).fit(X, y)

    alone = [fit(seed, None) for seed in range(4)]
    shared = BudgetAccountant(2.0)
    start = threading.Barrier(4, timeout=WAIT)

    def together(seed):
        start.wait()
        return fit(seed, shared)

    with ThreadPoolExecutor(4) as pool:
        fitted, errors = _outcomes([pool.submit(together, seed) for seed in range(4)])
    assert not errors
    _assert_exact_ledger(shared, fitted)
    for one, other in zip(alone, fitted):
        np.testing.assert_array_equal(one.noisy_counts_, other.noisy_counts_)
        assert one.partitioning_epsilon_ == other.partitioning_epsilon_ <= 0.25 * (1 + TOL)
        pd.testing.assert_frame_equal(one.ledger_, other.ledger_)


# --------------------------------------------------------------------------- asyncio tasks
def test_asyncio_tasks_spend_in_the_scopes_they_were_created_in():
    """A task starts with a copy of its creator's context: created outside any scope it spends at
    the top level, created inside a branch it spends in that branch; once the branch is closed
    by its creator it can spend there no more (RuntimeError before anything is recorded)."""
    import asyncio

    async def main():
        acc = BudgetAccountant(3.0)
        in_branch, spent_outside, branch_closed = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def outsider():
            await in_branch.wait()
            acc.spend(0.3, "outsider")
            spent_outside.set()

        async def inside():
            acc.spend(0.2, "created inside a")

        async def late():
            await branch_closed.wait()
            acc.spend(0.1, "after its branch closed")

        first = asyncio.create_task(outsider())
        with acc.parallel("halves"):
            with acc.branch("a"):
                acc.spend(0.5, "left")
                in_branch.set()
                await spent_outside.wait()
                await asyncio.create_task(inside())
                straggler = asyncio.create_task(late())
            branch_closed.set()
            with acc.branch("b"):
                acc.spend(0.5, "right")
        await first
        with pytest.raises(RuntimeError, match="closed by the thread or task that opened it"):
            await straggler
        return acc

    acc = run_coroutine(asyncio.wait_for(main(), WAIT))
    scopes = acc.ledger.set_index("label")["scope"].to_dict()
    assert scopes == {"left": "halves/a", "outsider": "", "created inside a": "halves/a", "right": "halves/b"}
    assert acc.spent == pytest.approx(0.3 + max(0.5 + 0.2, 0.5))
    assert acc.ledger["charged"].sum() == pytest.approx(acc.spent)


# --------------------------------------------------------------------------- failures and nested fits
def test_a_fit_that_fails_after_reserving_returns_the_rest_and_leaves_no_scope_open(table, monkeypatch):
    """PrivPfC spends its record count, then its grid selection fails: what it spent stays spent,
    what it held returns, and this thread is back at the top level."""
    X, y, schema = table
    acc = BudgetAccountant(1.0)

    def failing(*args, **kwargs):
        raise FloatingPointError("the draw failed")

    monkeypatch.setattr(mechanisms, "exponential", failing)
    fit = PrivPfC(epsilon=0.6, schema=schema, accountant=acc, random_state=0)
    with pytest.raises(FloatingPointError):
        fit.fit(X, y)
    assert acc.n_spends == 2 and acc.reserved == 0            # record count, grid selection
    assert fit.epsilon_spent_ == pytest.approx(acc.spent) and acc.remaining == pytest.approx(1.0 - acc.spent)
    acc.spend(0.1, "next")
    assert acc.ledger["scope"].tolist() == ["", "", ""]


def test_select_then_train_fits_in_a_thread_pool_keep_nested_ledgers(binary, frequent_switches):
    """SelectThenTrain reserves its ε, and its selector and model reserve their shares inside it:
    with eight of them racing on a budget of 1, five are released, each ledger is its own."""
    from dpexplore.models import SelectThenTrain
    from dpexplore.select.thesis import PrivateKSubsetSelector

    Xb, yb = binary
    acc = BudgetAccountant(1.0)
    start = threading.Barrier(8, timeout=WAIT)

    def fit(i):
        start.wait()
        return SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(), epsilon=0.2, classes=[0, 1],
                               accountant=acc, random_state=i).fit(Xb, yb)

    with ThreadPoolExecutor(8) as pool:
        fitted, errors = _outcomes([pool.submit(fit, i) for i in range(8)])
    assert all(isinstance(err, BudgetExceededError) for err in errors), errors
    assert len(fitted) == 5
    _assert_exact_ledger(acc, fitted)
    for est in fitted:
        parts = pd.concat([est.selector_.ledger_, est.model_.ledger_], ignore_index=True)
        pd.testing.assert_frame_equal(parts, est.ledger_)
        assert est.selector_.epsilon_spent_ + est.model_.epsilon_spent_ == pytest.approx(0.2)


def test_private_roc_curves_racing_for_a_budget_each_keep_their_own_ledger(frequent_switches):
    """PriROC spends per median level and per label histogram: eight curves of ε 0.3 on a budget
    of 1 give three curves, each ledger its own and summing to 0.3, and five refusals that spent
    nothing (before: attrs["ledger"] was every row since the call began, other threads' too)."""
    from dpexplore.evaluate.roc import private_roc_curve

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 400)
    scores = np.clip(0.3 * labels + rng.random(400) * 0.7, 0, 1)
    acc = BudgetAccountant(1.0)
    start = threading.Barrier(8, timeout=WAIT)

    def curve(i):
        start.wait()
        return private_roc_curve(labels, scores, epsilon=0.3, classes=[0, 1], accountant=acc, random_state=i)

    with ThreadPoolExecutor(8) as pool:
        curves, errors = _outcomes([pool.submit(curve, i) for i in range(8)])
    assert all(isinstance(err, BudgetExceededError) for err in errors), errors
    assert len(curves) == 3
    assert sum(len(c.attrs["ledger"]) for c in curves) == acc.n_spends
    for c in curves:
        assert c.attrs["ledger"]["charged"].sum() == pytest.approx(0.3)
    assert acc.spent == pytest.approx(0.9)


def test_cross_validation_on_joblibs_threading_backend_shares_the_budget(binary):
    """GridSearchCV/cross_val_score with n_jobs > 1 on joblib's threading backend fit in threads
    that share the caller's accountant: five folds of ε 0.3 on a budget of 1 give three fits and
    two refusals (BudgetExceededError before spending; scored NaN by scikit-learn)."""
    import joblib
    from sklearn.exceptions import FitFailedWarning
    from sklearn.model_selection import cross_val_score

    Xb, yb = binary
    acc = BudgetAccountant(1.0)
    model = PrivateNaiveBayes(0.3, classes=[0, 1], accountant=acc, random_state=0)
    with joblib.parallel_backend("threading", n_jobs=2), pytest.warns(FitFailedWarning, match="BudgetExceeded"):
        scores = cross_val_score(model, Xb, yb, cv=5, n_jobs=2, error_score=np.nan)
    assert np.isnan(scores).sum() == 2
    assert acc.n_spends == 3 and acc.spent == pytest.approx(0.9) and (acc.ledger["scope"] == "").all()
