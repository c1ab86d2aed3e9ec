"""Outputs that match none of several allowed readings are told against the nearest one, named."""

from __future__ import annotations

import numpy as np
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.precision import Budget
from conformance.reference.base import Expected, Reading
from conformance.runners.base import RunOutput


def several(*readings: tuple[str, list], dtype=np.float32, budget: Budget | None = None) -> Expected:
    """An Expected of one output per reading, labelled; judged by `budget` where given (the
    reading's values are then its precise values too)."""
    made = []
    for label, values in readings:
        array = np.asarray(values, dtype=dtype)
        made.append(Reading((array,), label, (array.astype(np.float64),) if budget else ()))
    return Expected(readings=tuple(made), ambiguity="the text allows these", budgets=(budget,) if budget else ())


def answered(values, dtype=np.float32) -> RunOutput:
    return RunOutput(outputs=(np.asarray(values, dtype=dtype),))


def test_the_mismatch_is_told_against_the_reading_with_fewest_differing_values():
    expected = several(("far", [9, 9, 9, 4]), ("near", [1, 2, 3, 5]), ("farther", [0, 0, 0, 0]))
    verdict = judge(expected, answered([1, 2, 3, 4]))
    assert verdict.outcome == FAIL
    assert verdict.message.endswith("(none of 3 allowed readings match; nearest: 'near')")
    [mismatch] = verdict.mismatches
    assert mismatch.count == 1 and mismatch.indices == (((3,), "5.0", "4.0"),)
    assert "1 of 4 values differ" in verdict.message


def test_equal_counts_are_told_apart_by_the_largest_difference_and_ties_keep_the_first():
    expected = several(("a", [1, 2, 100]), ("b", [1, 2, 4]), ("c", [1, 2, 4.5]))
    assert "nearest: 'b'" in judge(expected, answered([1, 2, 3])).message
    tied = several(("first", [1, 2, 4]), ("second", [1, 2, 2]))
    assert "nearest: 'first'" in judge(tied, answered([1, 2, 3])).message


def test_a_reading_of_another_shape_is_farther_than_any_that_differs_in_values():
    expected = several(("shape", [[1, 2, 3, 4]]), ("values", [0, 0, 0, 0]))
    verdict = judge(expected, answered([1, 2, 3, 4]))
    assert "nearest: 'values'" in verdict.message and verdict.mismatches[0].count == 4


def test_a_budgeted_output_is_told_against_the_reading_with_the_smallest_ulp_error():
    budget = Budget(1, "a test's own")
    expected = several(("two", [1, 2]), ("one and a half", [1, 1.5]), budget=budget)
    verdict = judge(expected, answered([1, 1.25]))
    assert verdict.outcome == FAIL and "nearest: 'one and a half'" in verdict.message
    assert verdict.mismatches[0].budget is not None and verdict.ulp == verdict.mismatches[0].worst_ulp


def test_one_reading_names_none_and_a_match_of_a_later_reading_is_ambiguous():
    single = several(("spec", [1, 2]))
    verdict = judge(single, answered([1, 3]))
    assert verdict.outcome == FAIL and "nearest" not in verdict.message and "allowed readings" not in verdict.message
    expected = several(("a", [0, 0]), ("b", [1, 2]))
    assert judge(expected, answered([1, 2])).outcome == AMBIGUOUS
    assert judge(expected, answered([1, 2])).reading == "b"


def test_a_value_that_is_nan_against_a_number_is_farther_than_any_finite_difference():
    expected = several(("nan", [1, 2, np.nan]), ("finite", [1, 2, 1000]))
    assert "nearest: 'finite'" in judge(expected, answered([1, 2, 3])).message
