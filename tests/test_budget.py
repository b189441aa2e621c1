"""The budget accountant: composition rules, refusal before spending, ledger bookkeeping."""
import pytest
from hypothesis import given, settings, strategies as st

from dpexplore.budget import BudgetAccountant, BudgetExceededError


def test_paper_split_exhausts_budget_exactly():
    acc = BudgetAccountant(1.0)
    for eps, label in zip([0.03, 0.37, 0.6], ["record count", "grid selection", "histogram"]):
        acc.spend(eps, label)
    assert acc.remaining == 0.0
    with pytest.raises(BudgetExceededError):
        acc.spend(1e-6, "one more")
    assert len(acc.ledger) == 3 and acc.ledger["charged"].sum() == pytest.approx(1.0)


def test_refusal_happens_before_recording():
    acc = BudgetAccountant(0.5)
    acc.spend(0.4, "a")
    with pytest.raises(BudgetExceededError, match="0.2"):
        acc.spend(0.2, "b")
    assert acc.spent == pytest.approx(0.4) and list(acc.ledger["label"]) == ["a"]
    with pytest.raises(BudgetExceededError):
        acc.require(0.11)
    acc.require(0.1)  # fits exactly


def test_parallel_composition_charges_the_maximum():
    acc = BudgetAccountant(1.0)
    with acc.parallel("cells"):
        for i, e in enumerate([0.2, 0.5, 0.3]):
            acc.spend(e, f"cell {i}")
    assert acc.spent == pytest.approx(0.5)
    assert acc.ledger["charged"].tolist() == pytest.approx([0.2, 0.3, 0.0])
    assert acc.summary().set_index("item").loc["cells", "charged"] == pytest.approx(0.5)


def test_nested_branches_cost_the_longest_path():
    acc = BudgetAccountant(2.0)
    with acc.parallel("tree"):
        with acc.branch("left"):
            acc.spend(0.1, "split")
            with acc.parallel("children"):
                with acc.branch("ll"):
                    acc.spend(0.2, "split"); acc.spend(0.2, "counts")
                with acc.branch("lr"):
                    acc.spend(0.1, "split")
        with acc.branch("right"):
            acc.spend(0.3, "split"); acc.spend(0.3, "counts")
    assert acc.spent == pytest.approx(0.6)  # right path 0.6 > left path 0.1 + 0.4
    assert acc.ledger["charged"].sum() == pytest.approx(acc.spent)
    with pytest.raises(RuntimeError):
        with acc.branch("outside"):
            pass


def test_split_is_exact_and_spends_nothing():
    acc = BudgetAccountant(0.7)
    parts = acc.split([3, 37, 60])
    assert sum(parts) == 0.7 and acc.spent == 0
    for p, lab in zip(parts, "abc"):
        acc.spend(p, lab)
    assert acc.remaining == 0
    with pytest.raises(ValueError):
        acc.split([1, -1])


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_bad_epsilon(bad):
    with pytest.raises(ValueError, match="epsilon"):
        BudgetAccountant(bad)
    with pytest.raises(ValueError, match="epsilon"):
        BudgetAccountant(1.0).spend(bad, "x")


@settings(max_examples=200, deadline=None)
@given(total=st.floats(0.01, 10), weights=st.lists(st.floats(0.001, 1), min_size=1, max_size=8))
def test_property_split_spends_exactly_the_total(total, weights):
    acc = BudgetAccountant(total)
    for i, part in enumerate(acc.split(weights)):
        acc.spend(part, f"part {i}")
    assert acc.spent == pytest.approx(total, rel=1e-9)
    assert acc.ledger["charged"].sum() == pytest.approx(acc.spent, rel=1e-9)
    with pytest.raises(BudgetExceededError):
        acc.spend(total * 1e-6, "over")


@settings(max_examples=200, deadline=None)
@given(spends=st.lists(st.tuples(st.floats(0.001, 0.5), st.booleans()), min_size=1, max_size=20))
def test_property_never_exceeds_and_ledger_sums(spends):
    """Random sequential/parallel spends: the total never exceeds the budget, ledger adds up."""
    acc = BudgetAccountant(1.0)
    expected = 0.0
    for eps, in_parallel in spends:
        try:
            if in_parallel:
                with acc.parallel("p"):
                    acc.spend(eps, "a"); acc.spend(eps / 2, "b")
            else:
                acc.spend(eps, "s")
            expected += eps
        except BudgetExceededError:
            assert expected + eps > 1.0 - 1e-9
    assert acc.spent <= 1.0 * (1 + 1e-9)
    assert acc.spent == pytest.approx(expected)
    assert acc.ledger["charged"].sum() == pytest.approx(acc.spent)


# --------------------------------------------------------------------------- added
def test_tolerance_is_relative_and_small():
    acc = BudgetAccountant(1.0)
    for _ in range(10):
        acc.spend(0.1, "tenth")          # the float sum is 0.9999999999999999
    assert acc.remaining == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(BudgetExceededError):
        acc.spend(1e-6, "over")
    tiny = BudgetAccountant(1e-12)       # no absolute slack: a tiny budget is not inflated
    with pytest.raises(BudgetExceededError):
        tiny.spend(2e-12, "double")
    with pytest.raises(BudgetExceededError):
        tiny.spend(1e-12 * (1 + 1e-7), "just over")
    tiny.spend(1e-12, "all")
    big = BudgetAccountant(1e6)
    with pytest.raises(BudgetExceededError):
        big.spend(1e6 + 1.0, "one over")


def test_parallel_cannot_be_used_to_overspend():
    acc = BudgetAccountant(1.0)
    with acc.parallel("halves"):
        with acc.branch("left"):
            acc.spend(0.7, "a")
            assert acc.remaining == pytest.approx(0.3)
            with pytest.raises(BudgetExceededError):
                acc.spend(0.31, "b")      # a branch adds up its own spends
        with acc.branch("right"):
            assert acc.remaining == pytest.approx(1.0)  # beside a 0.7 sibling, up to the total
            acc.spend(0.9, "a")
        with pytest.raises(ValueError, match="already used"):
            with acc.branch("left"):      # re-entering a branch would hide a sequential spend
                pass
        with pytest.raises(BudgetExceededError):
            acc.spend(1.01, "direct")     # a direct spend is a branch of its own, still ≤ total
    assert acc.spent == pytest.approx(0.9) and acc.remaining == pytest.approx(0.1)
    with acc.parallel("again"):           # a second parallel scope adds to the first
        with pytest.raises(BudgetExceededError):
            acc.spend(0.2, "x")
        acc.spend(0.1, "x")
    assert acc.spent == pytest.approx(1.0)
    assert acc.ledger["charged"].sum() == pytest.approx(1.0)


def test_total_is_read_only_and_labels_are_checked():
    acc = BudgetAccountant(1.0)
    with pytest.raises(AttributeError):
        acc.total = 100.0
    with pytest.raises(ValueError, match="label"):
        acc.spend(0.1, "")
    with pytest.raises(ValueError, match="label"):
        with acc.parallel(""):
            pass
    assert acc.spent == 0 and acc.ledger.empty


def test_split_inside_a_branch_uses_what_the_branch_may_spend():
    acc = BudgetAccountant(1.0)
    acc.spend(0.2, "first")
    with acc.parallel("p"):
        with acc.branch("a"):
            acc.spend(0.5, "x")
        with acc.branch("b"):
            parts = acc.split([1, 1])
            assert sum(parts) == pytest.approx(0.8)
            for i, part in enumerate(parts):
                acc.spend(part, f"y{i}")
    assert acc.spent == pytest.approx(1.0)


# A random program: a list of ops; ("spend", ε) or ("parallel", [branch, ...]), a branch a program.
_eps = st.floats(0.001, 0.6)
_program = st.recursive(
    st.lists(st.tuples(st.just("spend"), _eps), min_size=1, max_size=3),
    lambda inner: st.lists(st.one_of(st.tuples(st.just("spend"), _eps),
                                     st.tuples(st.just("parallel"), st.lists(inner, min_size=1, max_size=3))),
                           min_size=1, max_size=4),
    max_leaves=12)


def _cost(node) -> float:
    """Reference semantics: a sequence adds up, a parallel scope costs its largest branch."""
    kind, items = node
    costs = [_cost(c) if isinstance(c, tuple) and c[0] in ("seq", "par") else c for c in items]
    if kind == "seq":
        return float(sum(costs))
    return float(max(costs, default=0.0))


@settings(max_examples=300, deadline=None)
@given(program=_program, total=st.floats(0.05, 2.0))
def test_property_random_scopes_match_the_reference_and_never_overspend(program, total):
    acc = BudgetAccountant(total)
    root = ("seq", [])

    def run(ops, node):
        for op, arg in ops:
            if op == "spend":
                target = node[1]
                before_spent, before_rows = acc.spent, len(acc.ledger)
                remaining = acc.remaining
                target.append(arg)
                wanted = _cost(root)
                try:
                    acc.spend(arg, "s")
                except BudgetExceededError:
                    target.pop()
                    assert wanted > total * (1 + 1e-9) - 1e-12       # refused only when over
                    assert arg > remaining - 1e-12                    # remaining told the truth
                    assert acc.spent == before_spent and len(acc.ledger) == before_rows  # nothing recorded
                else:
                    assert wanted <= total * (1 + 1e-9) + 1e-12
                    assert arg <= remaining * (1 + 1e-9) + 1e-12
            else:
                par = ("par", [])
                node[1].append(par)
                with acc.parallel("p"):
                    for i, branch in enumerate(arg):
                        seq = ("seq", [])
                        par[1].append(seq)
                        with acc.branch(str(i)):
                            run(branch, seq)

    run(program, root)
    assert acc.spent == pytest.approx(_cost(root), rel=1e-9, abs=1e-12)
    assert acc.spent <= total * (1 + 1e-9)
    assert acc.ledger["charged"].sum() == pytest.approx(acc.spent, rel=1e-9, abs=1e-12)
    assert (acc.ledger["charged"] >= 0).all()


# --------------------------------------------------------------------------- each fit's own ledger
def test_fitted_objects_sharing_an_accountant_each_report_only_their_own_spends():
    """A model fitted after another on the same accountant must not show up in the first's
    ledger_ (it did, when ledger_ was 'every row since my fit started')."""
    import numpy as np
    import pandas as pd

    from dpexplore.models import PrivateLogisticRegression, PrivateNaiveBayes
    from dpexplore.publish import ProjectedHistogram
    from dpexplore.datasets import make_synthetic

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(400, 4))
    y = (X[:, 0] ^ (rng.random(400) < 0.1)).astype(int)
    acc = BudgetAccountant(3.0)
    nb = PrivateNaiveBayes(epsilon=0.5, classes=[0, 1], accountant=acc, random_state=1).fit(X, y)
    lr = PrivateLogisticRegression(epsilon=1.0, classes=[0, 1], accountant=acc, bounds=(0, 1),
                                   random_state=2).fit(X, y)
    frame, schema = make_synthetic(n_samples=300, random_state=3)
    X2, y2 = schema.split(frame)
    ph = ProjectedHistogram(epsilon=1.0, accountant=acc, random_state=4, schema=schema).fit(X2, y2)
    assert abs(nb.epsilon_spent_ - 0.5) < 1e-12 and abs(lr.epsilon_spent_ - 1.0) < 1e-12
    assert abs(ph.epsilon_spent_ - 1.0) < 1e-12
    # the three slices partition the shared ledger, in order
    together = pd.concat([nb.ledger_, lr.ledger_, ph.ledger_], ignore_index=True)
    pd.testing.assert_frame_equal(together, acc.ledger.reset_index(drop=True))
    assert abs(acc.spent - 2.5) < 1e-12


# --------------------------------------------------------------------------- copies share, pickles detach
def test_copies_of_an_accountant_are_the_accountant():
    import copy

    acc = BudgetAccountant(1.0)
    acc.spend(0.25, "a")
    for duplicate in (copy.copy(acc), copy.deepcopy(acc), copy.deepcopy({"nested": [acc]})["nested"][0]):
        assert duplicate is acc
    copy.deepcopy(acc).spend(0.25, "through a copy")
    assert acc.spent == 0.5 and acc.n_spends == 2


def test_unpickled_accountant_reads_but_refuses_to_spend_before_recording():
    import pickle

    from dpexplore.budget import DetachedAccountantError, prepare_accountant

    acc = BudgetAccountant(1.0)
    with acc.parallel("p"):
        acc.spend(0.3, "a")
    copy_ = pickle.loads(pickle.dumps(acc))
    assert copy_ is not acc and copy_.detached and not acc.detached
    assert copy_.spent == 0.3 and copy_.ledger.equals(acc.ledger) and "detached" in repr(copy_)
    for attempt in (lambda: copy_.spend(0.1, "b"), lambda: copy_.require(0.1),
                    lambda: prepare_accountant(0.1, copy_)):
        with pytest.raises(DetachedAccountantError, match="copied out of its process.*n_jobs=1"):
            attempt()
    assert copy_.spent == 0.3 and copy_.n_spends == 1          # nothing recorded on the copy
    assert issubclass(DetachedAccountantError, BudgetExceededError)  # callers that catch it still do
    acc.spend(0.7, "the original still spends")
    assert acc.spent == pytest.approx(1.0)


def test_accountant_inherited_by_a_forked_process_refuses_to_spend():
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    acc = BudgetAccountant(1.0)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def child():
        try:
            acc.spend(0.5, "in the child")
            queue.put("spent")
        except BudgetExceededError as err:
            queue.put(type(err).__name__)

    proc = ctx.Process(target=child)
    proc.start()
    outcome = queue.get(timeout=60)
    proc.join(60)
    assert outcome == "DetachedAccountantError"
    assert acc.spent == 0 and not acc.detached


def test_concurrent_spends_never_overdraw(monkeypatch):
    """Threads sharing an accountant (joblib's threading backend): check-and-record is atomic.
    A pause between computing the new costs and recording them lets every thread pass the check
    at once unless the spend holds a lock (then 16 spends were granted on a budget of 2)."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    plan = BudgetAccountant._plan

    def slow_plan(self, *args, **kwargs):
        out = plan(self, *args, **kwargs)
        time.sleep(0.002)   # hands the interpreter to the other threads mid-spend
        return out

    monkeypatch.setattr(BudgetAccountant, "_plan", slow_plan)
    acc = BudgetAccountant(0.1)

    def try_spend(i):
        try:
            acc.spend(0.05, f"s{i}")
            return True
        except BudgetExceededError:
            return False

    with ThreadPoolExecutor(8) as pool:
        granted = sum(pool.map(try_spend, range(16)))
    assert granted == 2 == acc.n_spends
    assert acc.spent == pytest.approx(0.1) and acc.ledger["charged"].sum() == pytest.approx(acc.spent)


def test_budget_docstring_examples_run():
    import doctest

    import dpexplore.budget

    result = doctest.testmod(dpexplore.budget, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0


def test_fitted_estimator_copies_share_and_pickles_detach():
    import copy
    import pickle

    import numpy as np
    from sklearn.base import clone

    from dpexplore.budget import DetachedAccountantError
    from dpexplore.models import PrivateNaiveBayes

    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 2, (120, 3)), rng.integers(0, 2, 120)
    acc = BudgetAccountant(3.0)
    est = PrivateNaiveBayes(1.0, classes=[0, 1], accountant=acc, random_state=1).fit(X, y)
    twin = copy.deepcopy(est)
    assert twin.accountant is acc and twin.accountant_ is acc and clone(est).accountant is acc
    twin.fit(X, y)
    assert acc.spent == pytest.approx(2.0) and twin.epsilon_spent_ == pytest.approx(1.0)
    assert len(est.ledger_) == 1 and len(twin.ledger_) == 1  # each its own slice of the shared ledger
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    assert loaded.epsilon_spent_ == pytest.approx(1.0) and loaded.ledger_.equals(est.ledger_)
    with pytest.raises(DetachedAccountantError):
        loaded.fit(X, y)                               # would spend unseen by acc: refused
    loaded.set_params(accountant=None).fit(X, y)        # its own fresh budget: fine
    assert acc.spent == pytest.approx(2.0)


# --------------------------------------------------------------------------- δ, where a mechanism spends it
def test_a_pure_accountant_stays_pure_and_refuses_delta_before_spending():
    acc = BudgetAccountant(1.0)
    acc.spend(0.25, "count")
    assert acc.total_delta == 0.0 and list(acc.ledger.columns) == ["label", "scope", "epsilon", "charged"]
    assert list(acc.summary().columns) == ["item", "charged"] and "delta" not in repr(acc)
    with pytest.raises(BudgetExceededError, match="pure ε-DP"):
        acc.spend(0.25, "Gaussian", delta=1e-6)
    with pytest.raises(BudgetExceededError, match="pure ε-DP"):
        acc.require(0.25, delta=1e-6)
    assert acc.spent == 0.25 and acc.n_spends == 1 and acc.spent_delta == 0.0
    acc.spend(0.25, "explicit zero", delta=0.0)          # δ = 0 is what a pure mechanism spends
    assert acc.n_spends == 2


def test_delta_adds_up_and_shows_in_the_ledger_and_summary():
    acc = BudgetAccountant(2.0, delta=1e-5)
    acc.spend(0.5, "Gaussian a", delta=2e-6)
    acc.spend(0.5, "Laplace b")
    with acc.parallel("cells"):                          # δ adds up here too (conservative)
        acc.spend(0.5, "cell 0", delta=3e-6)
        acc.spend(0.5, "cell 1", delta=3e-6)
    assert acc.spent == pytest.approx(1.5) and acc.spent_delta == pytest.approx(8e-6)
    assert acc.remaining_delta == pytest.approx(2e-6)
    ledger = acc.ledger
    assert list(ledger.columns) == ["label", "scope", "epsilon", "charged", "delta"]
    assert ledger["delta"].tolist() == [2e-6, 0.0, 3e-6, 3e-6]
    assert ledger["delta"].sum() == pytest.approx(acc.spent_delta)
    summary = acc.summary().set_index("item")
    assert summary.loc["cells", "charged"] == pytest.approx(0.5)
    assert summary.loc["cells", "delta"] == pytest.approx(6e-6) and summary.loc["Laplace b", "delta"] == 0.0
    assert "total_delta=1e-05" in repr(acc) and "spent_delta=8e-06" in repr(acc)


def test_a_spend_over_either_budget_is_refused_before_anything_is_recorded():
    acc = BudgetAccountant(1.0, delta=1e-5)
    acc.spend(0.5, "first", delta=6e-6)
    before = acc.ledger.copy()
    with pytest.raises(BudgetExceededError, match="δ budget"):
        acc.spend(0.1, "too much δ", delta=5e-6)          # ε fits, δ does not
    with pytest.raises(BudgetExceededError, match="only 0.5 of 1 remains"):
        acc.spend(0.6, "too much ε", delta=1e-6)          # δ fits, ε does not
    with pytest.raises(BudgetExceededError):
        acc.require(0.1, delta=5e-6)
    assert acc.ledger.equals(before) and acc.spent == 0.5 and acc.spent_delta == 6e-6
    acc.spend(0.5, "exactly the rest", delta=4e-6)        # both budgets used up, within the tolerance
    assert acc.remaining == 0.0 and acc.remaining_delta == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("delta, error", [(-1e-6, ValueError), (1.0, ValueError), (float("nan"), ValueError),
                                          ("1e-6", TypeError), (True, TypeError)])
def test_a_bad_delta_is_a_clear_error(delta, error):
    with pytest.raises(error, match="delta"):
        BudgetAccountant(1.0, delta=delta)
    acc = BudgetAccountant(1.0, delta=1e-5)
    with pytest.raises(error, match="delta"):
        acc.spend(0.1, "x", delta=delta)
    assert acc.n_spends == 0


def test_the_gaussian_mechanism_spends_epsilon_and_delta_through_the_accountant():
    import numpy as np

    from dpexplore.mechanisms import gaussian, gaussian_scale

    acc = BudgetAccountant(1.0, delta=1e-5)
    out = gaussian(np.zeros(4), epsilon=0.5, delta=4e-6, sensitivity=2.0, accountant=acc, random_state=0)
    expected = np.random.default_rng(0).normal(0.0, gaussian_scale(epsilon=0.5, delta=4e-6, sensitivity=2.0), 4)
    np.testing.assert_allclose(out, expected)            # the same release as without an accountant
    assert acc.ledger[["label", "epsilon", "delta"]].values.tolist() == [["Gaussian mechanism", 0.5, 4e-6]]
    with pytest.raises(BudgetExceededError, match="δ budget"):
        gaussian(np.zeros(4), epsilon=0.5, delta=8e-6, accountant=acc, random_state=0)
    with pytest.raises(BudgetExceededError, match="pure ε-DP"):
        gaussian(1.0, epsilon=0.5, delta=1e-6, accountant=BudgetAccountant(1.0), random_state=0)
    with pytest.raises(ValueError, match="classical"):    # a bad argument: refused before the spend
        gaussian(1.0, epsilon=0.5, delta=1e-6, calibration="classical?", accountant=acc)
    with pytest.raises(TypeError, match="BudgetAccountant"):
        gaussian(1.0, epsilon=0.5, delta=1e-6, accountant="acc")
    assert acc.n_spends == 1 and acc.spent_delta == 4e-6


def test_warnings_raised_by_a_fit_point_at_the_line_that_called_it():
    """RecordsSpends wraps every fit (to return its unspent reservation when it ends): a warning
    aimed at the caller of ``fit`` must still name the caller's line, not the wrapper's (which
    would also show each warning only once, whatever line called the fit)."""
    import warnings

    import numpy as np
    import pandas as pd

    from dpexplore.datasets import make_synthetic
    from dpexplore.exceptions import EmptySyntheticWarning, NotDifferentiallyPrivateWarning, PrivacyLeakWarning
    from dpexplore.models import PrivateGaussianNB, PrivateLogisticRegression, PrivateLRClassifier
    from dpexplore.publish import ProjectedHistogram
    from dpexplore.select.stoddard import ClusterSelection
    from dpexplore.select.thesis import IterativeSelector

    rng = np.random.default_rng(0)
    X, y = rng.random((80, 3)), rng.integers(0, 2, 80)
    Xb = (X > 0.5).astype(int)
    frame, schema = make_synthetic(n_samples=300, random_state=0)
    Xs, ys = schema.split(frame)
    fits = {
        "bounds": (PrivacyLeakWarning, lambda: PrivateGaussianNB(1.0, classes=[0, 1], random_state=0).fit(X, y)),
        "unit ball": (PrivacyLeakWarning,
                      lambda: PrivateLogisticRegression(1.0, classes=[0, 1], random_state=0).fit(X, y)),
        "without a schema": (PrivacyLeakWarning, lambda: PrivateLRClassifier(epsilon=1.0, random_state=0).fit(X, y)),
        "Algorithm 4": (NotDifferentiallyPrivateWarning,
                        lambda: IterativeSelector(k=1, epsilon=1.0, classes=[0, 1], random_state=0).fit(Xb, y)),
        "ClusterSelection": (NotDifferentiallyPrivateWarning,
                             lambda: ClusterSelection(classes=[0, 1], random_state=0).fit(Xb, y)),
        "predicting the class shares": (EmptySyntheticWarning,   # a publisher's, after its ledger closed
                                        lambda: ProjectedHistogram(epsilon=1e-3, k=1, random_state=0,
                                                                   schema=schema).fit(Xs, ys)),
    }
    for match, (category, fit) in fits.items():
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            fit()
        hits = [w for w in record if issubclass(w.category, category) and match in str(w.message)]
        assert hits, (match, [str(w.message) for w in record])
        assert {w.filename for w in hits} == {__file__}, (match, [(w.filename, w.lineno) for w in hits])


# --------------------------------------------------------------------------- reservations
def test_a_reservation_holds_its_epsilon_and_returns_what_it_did_not_spend():
    acc = BudgetAccountant(1.0)
    with acc.reserve(0.6, "release") as held:
        assert acc.remaining == pytest.approx(0.6)           # inside: what the reservation holds
        acc.spend(0.2, "a")
        assert acc.remaining == pytest.approx(0.4) and acc.split([1, 1]) == pytest.approx([0.2, 0.2])
        with pytest.raises(BudgetExceededError, match="reserved for 'release'"):
            acc.spend(0.41, "too much for the reservation")   # although the budget holds 0.8
        assert acc.spent == pytest.approx(0.2) and acc.reserved == pytest.approx(0.4)
        assert "reserved=0.4" in repr(acc)
        acc.spend(0.3, "b")
    assert held.spent == pytest.approx(0.5) and not held.open
    assert list(held.ledger["label"]) == ["a", "b"] and (held.ledger["scope"] == "").all()
    assert acc.reserved == 0 and acc.remaining == pytest.approx(0.5)
    with pytest.raises(BudgetExceededError):
        acc.reserve(0.51, "more than remains")                 # refused at once, nothing held
    assert acc.remaining == pytest.approx(0.5) and acc.n_spends == 2


def test_a_reservation_is_returned_on_an_exception_and_nests():
    acc = BudgetAccountant(2.0)
    with pytest.raises(ZeroDivisionError):
        with acc.reserve(1.0, "outer"):
            acc.spend(0.25, "outer spend")
            with acc.reserve(0.5, "inner") as inner:
                with pytest.raises(BudgetExceededError):
                    acc.reserve(0.51, "more than inner holds")
                acc.spend(0.125, "inner spend")
            assert acc.remaining == pytest.approx(1.0 - 0.25 - 0.125)   # inner's rest came back
            1 / 0
    assert inner.spent == 0.125 and acc.spent == pytest.approx(0.375) and acc.reserved == 0
    acc.spend(0.1, "after")                                  # back at the top level
    assert acc.ledger["scope"].tolist() == ["", "", ""]
    assert acc.ledger["charged"].sum() == pytest.approx(acc.spent)


def test_a_reservation_in_a_parallel_branch_is_one_part():
    acc = BudgetAccountant(1.0)
    with acc.parallel("halves"):
        with acc.branch("left"):
            with acc.reserve(0.7, "fit on the left"):
                acc.spend(0.25, "count")
        with acc.branch("right"):
            assert acc.remaining == pytest.approx(1.0)          # beside a 0.25 sibling
            with acc.reserve(0.5, "fit on the right") as right:
                assert acc.spent == pytest.approx(0.25) and acc.reserved == pytest.approx(0.25)
                acc.spend(0.5, "count")
    assert right.spent == 0.5 and acc.spent == pytest.approx(0.5) and acc.reserved == 0
    assert acc.ledger["scope"].tolist() == ["halves/left", "halves/right"]   # reservations not shown
    assert acc.ledger["charged"].sum() == pytest.approx(acc.spent)


def test_a_reservation_is_closed_by_the_thread_that_made_it():
    import threading

    acc = BudgetAccountant(1.0)
    held = acc.reserve(0.5, "release")
    errors = []

    def close_elsewhere():
        try:
            held.close()
        except RuntimeError as err:
            errors.append(err)

    thread = threading.Thread(target=close_elsewhere)
    thread.start()
    thread.join(60)
    assert not thread.is_alive() and len(errors) == 1 and "not open in this thread" in str(errors[0])
    assert held.open and acc.reserved == pytest.approx(0.5)
    held.close()
    assert not held.open and acc.reserved == 0 and acc.remaining == 1.0


def test_a_pickled_accountant_with_open_scopes_is_read_only_and_outside_them():
    import pickle

    from dpexplore.budget import DetachedAccountantError

    acc = BudgetAccountant(1.0)
    with acc.parallel("p"):
        with acc.branch("a"):
            with acc.reserve(0.5, "release"):
                acc.spend(0.25, "x")
                copy_ = pickle.loads(pickle.dumps(acc))
    assert copy_.spent == 0.25 and copy_.ledger.equals(acc.ledger)
    assert copy_.remaining == pytest.approx(0.5)                # at its top level; the hold is kept
    with pytest.raises(DetachedAccountantError):
        copy_.reserve(0.1, "x")
    assert acc.remaining == pytest.approx(0.75)


# A random program with reservations: ("spend", ε), ("reserve", h, program) or ("parallel", parts),
# a part being a branch (a program) or a spend or reservation made directly in the parallel scope.
def _with_reservations(inner):
    spend, reserve = st.tuples(st.just("spend"), _eps), st.tuples(st.just("reserve"), _eps, inner)
    parts = st.lists(st.one_of(inner, spend, reserve), min_size=1, max_size=3)
    return st.lists(st.one_of(spend, reserve, st.tuples(st.just("parallel"), parts)), min_size=1, max_size=4)


_program_with_reservations = st.recursive(
    st.lists(st.tuples(st.just("spend"), _eps), min_size=1, max_size=3), _with_reservations, max_leaves=12)


def _costs(node) -> tuple[float, float]:
    """Reference (cost, load): a sequence and a reservation add up, a parallel scope takes the
    maximum; an open reservation counts at least what it holds in the load."""
    if not isinstance(node, list):
        return node, node                                   # a spend
    kind, items = node[0], node[-1]
    parts = [_costs(item) for item in items]
    costs, loads = [c for c, _ in parts], [ld for _, ld in parts]
    if kind == "par":
        return max(costs, default=0.0), max(loads, default=0.0)
    cost, load = float(sum(costs)), float(sum(loads))
    if kind == "res" and node[2]:                          # open: it holds its ε
        load = max(load, node[1])
    return cost, load


def _within_holds(node) -> bool:
    """Every open reservation's load is within what it holds."""
    if not isinstance(node, list):
        return True
    if node[0] == "res" and node[2] and sum(_costs(i)[1] for i in node[-1]) > node[1] * (1 + 1e-9) + 1e-12:
        return False
    return all(_within_holds(item) for item in node[-1])


@settings(max_examples=300, deadline=None)
@given(program=_program_with_reservations, total=st.floats(0.05, 2.0))
def test_property_random_reservations_match_the_reference_and_never_overspend(program, total):
    acc = BudgetAccountant(total)
    root = ["seq", []]

    def allowed() -> bool:
        return _within_holds(root) and _costs(root)[1] <= total * (1 + 1e-9) + 1e-12

    def run(ops, node):
        for op in ops:
            if op[0] == "spend":
                node[-1].append(op[1])
                ok, before = allowed(), (acc.spent, acc.n_spends)
                try:
                    acc.spend(op[1], "s")
                except BudgetExceededError:
                    node[-1].pop()
                    assert not ok and (acc.spent, acc.n_spends) == before   # refused only when over
                else:
                    assert ok
            elif op[0] == "parallel":
                par = ["par", []]
                node[-1].append(par)
                with acc.parallel("p"):
                    for i, part in enumerate(op[1]):
                        if isinstance(part, tuple):      # directly in the parallel scope
                            run([part], par)
                            continue
                        seq = ["seq", []]
                        par[-1].append(seq)
                        with acc.branch(str(i)):
                            run(part, seq)
            else:
                res = ["res", op[1], True, []]
                node[-1].append(res)
                ok = allowed()
                try:
                    held = acc.reserve(op[1], "r")
                except BudgetExceededError:
                    node[-1].pop()
                    assert not ok
                    continue
                assert ok
                with held:
                    run(op[2], res)
                res[2] = False
                assert held.spent == pytest.approx(_costs(res)[0], rel=1e-9, abs=1e-12)

    run(program, root)
    cost, load = _costs(root)
    assert acc.spent == pytest.approx(cost, rel=1e-9, abs=1e-12) and acc.reserved == pytest.approx(0, abs=1e-12)
    assert acc.remaining == pytest.approx(max(0.0, total - load), rel=1e-9, abs=1e-12)
    assert acc.spent <= total * (1 + 1e-9)
    assert acc.ledger["charged"].sum() == pytest.approx(acc.spent, rel=1e-9, abs=1e-12)


def test_fits_in_parallel_branches_are_charged_at_the_largest():
    import numpy as np

    from dpexplore.models import PrivateNaiveBayes

    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 2, (200, 3)), rng.integers(0, 2, 200)
    acc = BudgetAccountant(1.0)
    with acc.parallel("halves"):
        with pytest.raises(RuntimeError, match="branch"):
            PrivateNaiveBayes(0.5, classes=[0, 1], accountant=acc).fit(X, y)
        assert acc.n_spends == 0 and acc.reserved == 0
        fits = []
        for name, rows, eps in [("first", slice(0, 100), 0.6), ("second", slice(100, 200), 0.9)]:
            with acc.branch(name):
                fits.append(PrivateNaiveBayes(eps, classes=[0, 1], accountant=acc, random_state=0)
                            .fit(X[rows], y[rows]))
    assert [f.epsilon_spent_ for f in fits] == [0.6, 0.9] and acc.spent == pytest.approx(0.9)
    assert acc.ledger["scope"].tolist() == ["halves/first", "halves/second"]
    assert [len(f.ledger_) for f in fits] == [1, 1]


def test_a_refusal_says_how_much_open_reservations_hold():
    import threading

    acc = BudgetAccountant(1.0)
    acc.spend(0.25, "a")
    held, done = threading.Event(), threading.Event()

    def fit_elsewhere():
        with acc.reserve(0.5, "a fit in another thread"):
            held.set()
            done.wait(60)

    thread = threading.Thread(target=fit_elsewhere)
    thread.start()
    try:
        assert held.wait(60)
        with pytest.raises(BudgetExceededError, match=r"only 0.25 of 1 remains \(spent 0.25, 0.5 reserved"):
            acc.spend(0.5, "b")
    finally:
        done.set()
        thread.join(60)
    assert acc.remaining == 0.75
