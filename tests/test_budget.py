"""The budget accountant: composition rules, refusal before spending, ledger bookkeeping."""
import numpy as np
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
