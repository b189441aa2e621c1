"""The graders of the "implement" exercises (``dpexplore/lab/_grading.py``) and the stored results
the 04–09 checks read.

The regression set ``REFUSED`` of ``tests/lab_examples.py`` holds answers that leak or are not the
mechanism asked for — each of them used to pass — and every one must be refused; the reference
solutions and their fair variants (``REFERENCE``, ``FAIR``) must all be accepted. A refusal gives
its reason; a pass says what it means. The false-refusal rate of a correct answer is bounded by
``FALSE_REFUSAL`` (exact binomial tails, Bernstein bounds and a union bound, see the module); the
comparison is run here with several seeds of the student's generator (more with
``DPEXPLORE_LONG_AUDITS=1``). Seconds per check: ``benchmarks/lab_graders.py``.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

from lab_examples import FAIR, REFERENCE, REFUSED
from privacy_audit import LONG

from dpexplore import lab
from dpexplore.lab import _grading, _stored, nb01, nb05, nb06, nb10, nb11, nb12, nb14
from dpexplore.lab._grading import Refusal, event, guarded_call

GRADED = {"01.3": (nb01._class_count_battery, "class", nb01._allowed(), nb01.CLASS_COUNT_AUDIT),
          "05.5": (nb05._selector_battery, "feature", (), nb05.SELECTOR_AUDIT),
          "06.3": (nb06._histogram_battery, "cell", (), nb06.HISTOGRAM_AUDIT),
          "12.2": (nb12._gaussian_battery, "count", (), nb12.GAUSSIAN_AUDIT),
          "14.4": (nb14._svt_battery, "run", (), nb14.SVT_AUDIT),
          "11.3": (nb11._survey_battery, "respondent", (), nb11.SURVEY_AUDIT)}
MAGNITUDES = {"11.3": 1}     # the largest true value a battery must reach: bits for randomized response


def _accepted():
    return [pytest.param(i, f, id=f"{i}-reference") for i, f in REFERENCE.items()] + \
        [pytest.param(i, f, id=f"{i}-{name}") for i in FAIR for name, f in FAIR[i].items()]


def _refused():
    return [pytest.param(i, f, id=f"{i}-{name}") for i in REFUSED for name, f in REFUSED[i].items()]


@pytest.mark.parametrize("exercise_id, answer", _accepted())
def test_a_correct_answer_is_accepted_and_told_what_the_pass_means(exercise_id, answer):
    result = lab.evaluate(exercise_id, answer)
    assert result.status == "right", result.message
    if exercise_id in GRADED:
        assert "indistinguishable from" in result.message and "evidence, not a proof" in result.message
        assert "stays ε-DP" not in result.message


@pytest.mark.parametrize("exercise_id, answer", _refused())
def test_every_answer_of_the_regression_set_is_refused_with_a_reason(exercise_id, answer):
    ex = lab.EXERCISES[exercise_id]
    verdict = ex.verify(answer)
    assert not verdict.right
    assert verdict.reason, "a refusal says why"
    assert lab.evaluate(exercise_id, answer).message.startswith(f"✗ Not yet: {verdict.reason} {ex.hints[0]}")


def test_a_leak_is_shown_where_it_happens():
    from lab_examples import histogram_kept_exact, selector_ptt

    reason = lab.EXERCISES["06.3"].verify(histogram_kept_exact).reason
    assert "was released as exactly its true count" in reason and "cells holding" in reason
    reason = lab.EXERCISES["05.5"].verify(REFUSED["05.5"]["Lap(2/(1.1ε))"]).reason
    assert "less noise than" in reason and "that is a leak" in reason
    reason = lab.EXERCISES["05.5"].verify(REFUSED["05.5"]["Lap(2.1/ε) (too much noise)"]).reason
    assert "more noise than" in reason and "not the mechanism asked for" in reason
    assert not lab.EXERCISES["05.5"].verify(selector_ptt).right


@pytest.mark.parametrize("exercise_id", sorted(GRADED))
def test_the_audit_flags_its_planted_leak_and_passes_the_reference(exercise_id):
    battery, unit, allowed, plan = GRADED[exercise_id]
    assert _grading._flags_planted_leak(plan)
    loss, _ = _grading.audit_pairs(plan.mechanism(REFERENCE[exercise_id]), plan)
    assert loss <= plan.epsilon


@pytest.mark.parametrize("exercise_id", sorted(GRADED))
@pytest.mark.parametrize("seed", range(10 if LONG else 2))
def test_the_reference_is_not_refused_whatever_its_draws(exercise_id, seed):
    battery, unit, allowed, _ = GRADED[exercise_id]
    comparison = _grading.compare_with_reference(REFERENCE[exercise_id], battery(), seed=7_000 + seed,
                                                 mechanism="the reference", allowed=allowed, unit=unit)
    assert comparison.passed, comparison.reason
    assert comparison.power > 0.999          # a noise scale 5 % off is refused


def test_randomized_response_leaks_are_shown_where_they_happen():
    from lab_examples import rr_first_person_exact, rr_yes_kept

    ex = lab.EXERCISES["11.3"]
    reason = ex.verify(rr_yes_kept).reason               # only the all-yes surveys show it
    assert "true yes) at" in reason and "reported their true answer" in reason
    assert "1 person" in ex.verify(rr_first_person_exact).reason     # one person: many releases each
    reason = ex.verify(REFUSED["11.3"]["ε 5 % too small (too much noise)"]).reason
    assert "reported the opposite of their true answer" in reason or "more noise than" in reason


def test_randomized_response_battery_covers_both_answers_and_the_sizes_around_1000():
    cases = nb11._survey_battery()
    kinds = {c.reference.name.rsplit("(", 1)[1] for c in cases}
    assert kinds == {"all yes)", "all no)", "mixed answers)"}
    assert {999, 1_000, 1_001} <= {c.size for c in cases}
    assert sum(c.size * c.draws for c in cases) >= 1_000_000              # reports compared with the reference
    for c in cases:                                                        # P(truth) = e^ε/(1 + e^ε)
        epsilon = float(c.reference.name.split("= ")[1].split(" ")[0])
        assert np.isclose(c.reference.cdf(np.array([0.5]))[0], np.exp(epsilon) / (1 + np.exp(epsilon)))


def test_the_reconstruction_attack_is_run_on_hidden_tables_and_must_recover_them():
    from lab_examples import reconstruct_reference

    tables = nb10._hidden_tables()
    assert [t.secret.tolist() for t in tables] == [t.secret.tolist() for t in nb10._hidden_tables()]  # seeded
    assert min(t.secret.size for t in tables) <= 10 and max(t.secret.size for t in tables) >= 150
    assert {t.noise for t in tables} == {0.0, 1.0, 2.0}
    assert any(t.secret.sum() == 0 for t in tables) and any(t.secret.all() for t in tables)
    for t in tables:                       # the answers are the subset counts, within the noise
        assert np.all(np.abs(t.queries @ t.secret - t.answers) <= t.noise + 1e-9)
        assert t.queries.shape == (4 * t.secret.size, t.secret.size)
    seen = []

    def spy(queries, answers):
        seen.append(np.asarray(answers).copy())
        return reconstruct_reference(queries, answers)

    assert lab.EXERCISES["10.2"].verify(spy).right and len(seen) == len(tables)
    reason = lab.EXERCISES["10.2"].verify(REFUSED["10.2"]["calls dpexplore's reconstruct"]).reason
    assert "dpexplore.attacks.reconstruct" in reason
    reason = lab.EXERCISES["10.2"].verify(REFUSED["10.2"]["correlation of the answers (too weak)"]).reason
    assert "of the secret bits" in reason and "needed" in reason


def test_the_false_refusal_budget_adds_up():
    assert sum(_grading._ALPHA.values()) == pytest.approx(_grading.FALSE_REFUSAL)


@pytest.mark.parametrize("exercise_id", sorted(GRADED))
def test_the_battery_spans_the_sizes_and_counts_the_exercise_asks_for(exercise_id):
    cases = GRADED[exercise_id][0]()
    sizes = [c.size for c in cases]
    magnitudes = np.concatenate([c.magnitude for c in cases])
    assert min(sizes) <= 10 and max(sizes) >= 100_000
    assert magnitudes.min() == 0 and magnitudes.max() >= MAGNITUDES.get(exercise_id, 9_990)
    assert sum(c.draws for c in cases) >= 5_000


# --------------------------------------------------------------------------- the student's own code
def test_a_call_into_the_package_is_refused_with_its_name():
    from dpexplore.mechanisms import laplace

    def uses_laplace(x, rng):
        return laplace(x, epsilon=1.0, random_state=rng)

    with pytest.raises(Refusal, match="dpexplore.mechanisms.laplace, the package's own code"):
        guarded_call(uses_laplace, (1.0, np.random.default_rng(0)))
    assert isinstance(guarded_call(uses_laplace, (1.0, np.random.default_rng(0)), allowed=[laplace]), float)


def test_importing_the_package_or_using_numpy_is_not_a_call():
    def imports(x):
        import dpexplore.publish.projected  # noqa: F401
        from dpexplore import mechanisms  # noqa: F401
        return np.diff(np.asarray(x))

    assert guarded_call(imports, ([1.0, 3.0],)).tolist() == [2.0]


def test_the_guard_restores_the_profiler_and_reports_the_students_error():
    def profiler(frame, event, arg):
        return None

    sys.setprofile(profiler)
    try:
        with pytest.raises(Refusal, match="ZeroDivisionError"):
            guarded_call(lambda: 1 / 0, ())
        assert sys.getprofile() is profiler
    finally:
        sys.setprofile(None)


def test_a_value_instead_of_a_function_is_refused():
    for exercise_id in GRADED:
        verdict = lab.EXERCISES[exercise_id].verify("Laplace")
        assert not verdict.right and "give a function" in verdict.reason


def test_event_refuses_a_release_of_the_wrong_shape():
    with pytest.raises(ValueError):
        event(np.zeros((2, 2)))
    assert event([True, False, 1]) == "101"


# --------------------------------------------------------------------------- stored results
def test_stored_results_are_found_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)       # not notebooks/: the checkout's notebooks/results is used
    path = _stored.results_path("04_accuracy_epsilon.csv")
    assert path.parent.name == "results" and path.is_file()
    (tmp_path / "results").mkdir()    # a notebook's own results folder comes first
    (tmp_path / "results" / "04_accuracy_epsilon.csv").write_text("epsilon\n1\n")
    assert _stored.results_path("04_accuracy_epsilon.csv") == tmp_path / "results" / "04_accuracy_epsilon.csv"
    with pytest.raises(FileNotFoundError):
        _stored.results_path("no_such_result.csv")
