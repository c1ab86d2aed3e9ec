"""Softmax and LogSoftmax (reference/softmax.py) judged as a runtime's outputs would be: planted wrong
implementations fail (no max shift, a wrong axis, one axis where versions 1 and 11 coerce to 2-D, a
dropped term, log(softmax) where the softmax underflows), legal ones pass (any summation order,
a reciprocal multiply, float16 in float32 or in float16, log(softmax) where it is a normal number),
the cases the text fixes exactly are judged bitwise, invalid axes are rejected, and the readings of
the rows the text gives no value for are named. Every candidate output is computed here from the
formula by plain numpy, never taken from the reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.dtypes import from_numpy
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(11)
VERSIONS = (1, 11, 13)


def example(op: str, since: int, data: np.ndarray, **attributes) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    return Example(version, "unit", {"T": from_numpy(data.dtype).name}, {"input": data}, attributes, "unit", "T")


def verdict(found: Example, output: np.ndarray):
    return judge(for_op(found.op).expected(found), RunOutput(outputs=(np.asarray(output),)))


def outcome(found: Example, output: np.ndarray) -> str:
    return verdict(found, output).outcome


def prose_outcome(found: Example, output: np.ndarray) -> str:
    """The verdict by the prose alone: the version-13 function body, evaluated node by node with
    each Exp widened by its budget, admits a few ULP more where the prose is exact."""
    expected = for_op(found.op).expected(found, bodies=False)
    return judge(expected, RunOutput(outputs=(np.asarray(output),))).outcome


# --- candidate implementations, over the last axis of a 2-D array, in the array's own type ---

def _reversed(terms: np.ndarray) -> np.ndarray:
    total = terms[:, -1].copy()
    for k in range(terms.shape[1] - 2, -1, -1):
        total = (total + terms[:, k]).astype(terms.dtype)
    return total


def _pairwise(terms: np.ndarray) -> np.ndarray:
    while terms.shape[1] > 1:
        half = terms.shape[1] // 2
        paired = (terms[:, :half] + terms[:, half:2 * half]).astype(terms.dtype)
        terms = np.concatenate([paired, terms[:, 2 * half:]], axis=1)
    return terms[:, 0]


def _blocked(terms: np.ndarray, block: int = 8) -> np.ndarray:
    partials = [_reversed(terms[:, k:k + block])[:, None] for k in range(0, terms.shape[1], block)]
    return _reversed(np.concatenate(partials, axis=1))


ORDERS = {"reversed": _reversed, "pairwise": _pairwise, "blocked": _blocked}


def softmax(x: np.ndarray, order=_reversed, reciprocal: bool = False, shift: bool = True) -> np.ndarray:
    """Softmax of each row of `x` computed in x's type: exp(x − max) (or exp(x)), summed in `order`,
    divided (or multiplied by the rounded reciprocal)."""
    with np.errstate(all="ignore"):
        e = np.exp(x - x.max(axis=1, keepdims=True)) if shift else np.exp(x)
        total = order(e)[:, None]
        if reciprocal:
            return (e * (np.ones_like(total) / total).astype(x.dtype)).astype(x.dtype)
        return (e / total).astype(x.dtype)


def log_softmax(x: np.ndarray, order=_reversed) -> np.ndarray:
    """x − max − log Σ exp(x − max), in x's type."""
    with np.errstate(all="ignore"):
        d = x - x.max(axis=1, keepdims=True)
        return (d - np.log(order(np.exp(d)))[:, None]).astype(x.dtype)


DATA = (RNG.standard_normal((6, 40)) * 3).astype(np.float32)


@pytest.mark.parametrize("since", VERSIONS)
@pytest.mark.parametrize("order", sorted(ORDERS))
def test_any_summation_order_passes(since, order):
    assert outcome(example("Softmax", since, DATA, axis=1), softmax(DATA, ORDERS[order])) == PASS
    assert outcome(example("LogSoftmax", since, DATA, axis=1), log_softmax(DATA, ORDERS[order])) == PASS


@pytest.mark.parametrize("since", VERSIONS)
def test_a_reciprocal_multiply_passes(since):
    assert outcome(example("Softmax", since, DATA, axis=1), softmax(DATA, reciprocal=True)) == PASS


@pytest.mark.parametrize("since", VERSIONS)
def test_a_dropped_term_fails(since):
    with np.errstate(all="ignore"):
        e = np.exp(DATA - DATA.max(axis=1, keepdims=True))
        dropped = (e / e[:, :-1].sum(axis=1, keepdims=True)).astype(np.float32)
        d = DATA - DATA.max(axis=1, keepdims=True)
        log_dropped = (d - np.log(np.exp(d)[:, 1:].sum(axis=1, keepdims=True))).astype(np.float32)
    assert outcome(example("Softmax", since, DATA, axis=1), dropped) == FAIL
    assert outcome(example("LogSoftmax", since, DATA, axis=1), log_dropped) == FAIL


def test_a_wrong_axis_fails():
    data = (RNG.standard_normal((5, 5)) * 2).astype(np.float32)
    along_rows = softmax(data.T).T  # along axis 0
    assert outcome(example("Softmax", 13, data, axis=1), along_rows) == FAIL
    assert outcome(example("Softmax", 13, data, axis=0), along_rows) == PASS
    assert outcome(example("LogSoftmax", 13, data), log_softmax(data.T).T) == FAIL


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("since", [1, 11])
def test_versions_1_and_11_coerce_to_2d_not_one_axis(op, since):
    data = (RNG.standard_normal((3, 4, 5)) * 2).astype(np.float32)
    compute = softmax if op == "Softmax" else log_softmax
    coerced = compute(data.reshape(3, 20)).reshape(3, 4, 5)
    one_axis = np.moveaxis(compute(np.moveaxis(data, 1, -1).reshape(15, 4)).reshape(3, 5, 4), -1, 1)
    assert outcome(example(op, since, data, axis=1), coerced) == PASS
    assert outcome(example(op, since, data, axis=1), one_axis) == FAIL
    # Version 13 is the other way round.
    assert outcome(example(op, 13, data, axis=1), one_axis) == PASS
    assert outcome(example(op, 13, data, axis=1), coerced) == FAIL


def test_the_default_axis_is_1_before_13_and_minus_1_from_13():
    data = np.zeros((2, 2, 2), np.float32)  # every value equal: 1/4 in rows from axis 1 on, 1/2 along the last
    assert outcome(example("Softmax", 11, data), np.full((2, 2, 2), 0.25, np.float32)) == PASS
    assert outcome(example("Softmax", 11, data), np.full((2, 2, 2), 0.5, np.float32)) == FAIL
    assert outcome(example("Softmax", 13, data), np.full((2, 2, 2), 0.5, np.float32)) == PASS


@pytest.mark.parametrize("since", VERSIONS)
def test_no_max_shift_overflows_and_fails(since):
    data = np.array([[88.0, 89.0, 90.0, 60.0], [1.0, 2.0, 3.0, 4.0]], np.float32)  # exp(89) overflows float32
    case = example("Softmax", since, data, axis=1)
    assert outcome(case, softmax(data)) == PASS
    unshifted = softmax(data, shift=False)
    assert np.isnan(unshifted[0]).any() or not np.isfinite(unshifted[0]).all()
    assert outcome(case, unshifted) == FAIL


@pytest.mark.parametrize("since", VERSIONS)
def test_no_max_shift_in_float16_fails(since):
    data = np.array([[11.5, 10.0, 9.0]], np.float16)  # exp(11.5) is 98715, past float16's 65504
    case = example("Softmax", since, data, axis=1)
    assert outcome(case, softmax(data.astype(np.float32)).astype(np.float16)) == PASS
    assert outcome(case, softmax(data, shift=False)) == FAIL


def test_no_max_shift_passes_where_nothing_overflows():
    # The version-13 formula as written, Exp(input) / ReduceSum(Exp(input)), is exact enough there.
    data = (RNG.standard_normal((4, 16)) * 2).astype(np.float64)
    assert outcome(example("Softmax", 13, data), softmax(data, shift=False)) == PASS


def test_float16_computed_in_float32_and_rounded_passes():
    data = (RNG.standard_normal((4, 64)) * 3).astype(np.float16)
    found = verdict(example("Softmax", 13, data), softmax(data.astype(np.float32)).astype(np.float16))
    assert found.outcome == PASS and found.reading == "accumulated in float32 or wider"
    logs = verdict(example("LogSoftmax", 13, data), log_softmax(data.astype(np.float32)).astype(np.float16))
    assert logs.outcome == PASS and logs.reading == "accumulated in float32 or wider"


def test_a_float16_accumulator_over_4096_is_told_as_its_reading():
    data = RNG.uniform(-4, 4, (2, 4096)).astype(np.float16)
    narrow = softmax(data)  # exp, sum and division all in float16
    wide = softmax(data.astype(np.float32)).astype(np.float16)
    assert not np.array_equal(narrow, wide)
    found = verdict(example("Softmax", 13, data), narrow)
    assert found.outcome == PASS and found.reading == "accumulated in float16", found.message
    assert verdict(example("Softmax", 13, data), wide).reading == "accumulated in float32 or wider"
    logs = verdict(example("LogSoftmax", 13, data), log_softmax(data))
    assert logs.outcome == PASS and logs.reading == "accumulated in float16", logs.message


def test_log_of_softmax_is_legal_where_the_softmax_is_a_normal_number():
    data = np.array([[0.0, -1.0, -3.0, -20.0]], np.float32)
    assert outcome(example("LogSoftmax", 13, data), np.log(softmax(data))) == PASS


def test_log_of_softmax_fails_where_the_softmax_underflows():
    data = np.array([[0.0, -120.0, -1.0]], np.float32)  # exp(-120) is below float32's least subnormal
    with np.errstate(divide="ignore"):
        written = np.log(softmax(data))
    assert np.isneginf(written[0, 1])
    assert outcome(example("LogSoftmax", 13, data), written) == FAIL
    assert outcome(example("LogSoftmax", 13, data), log_softmax(data)) == PASS


# --- what the text fixes exactly ---

@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("since", VERSIONS)
def test_one_element_rows_are_exactly_1_and_0(dtype, since):
    data = np.array([[3.0], [-70.0], [0.5]], dtype)
    one_below = np.nextafter(np.ones((3, 1), dtype), dtype(0))
    assert prose_outcome(example("Softmax", since, data, axis=1), np.ones((3, 1), dtype)) == PASS
    assert prose_outcome(example("Softmax", since, data, axis=1), one_below) == FAIL
    assert prose_outcome(example("LogSoftmax", since, data, axis=1), np.zeros((3, 1), dtype)) == PASS
    assert prose_outcome(example("LogSoftmax", since, data, axis=1), np.full((3, 1), -np.finfo(dtype).smallest_subnormal, dtype)) == FAIL


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_equal_values_in_a_power_of_two_row_are_exact(dtype):
    data = np.full((2, 8), 2.5, dtype)
    case = example("Softmax", 13, data)
    assert prose_outcome(case, np.full((2, 8), 0.125, dtype)) == PASS
    assert prose_outcome(case, np.nextafter(np.full((2, 8), 0.125, dtype), dtype(1))) == FAIL


def test_a_dominant_value_makes_the_others_underflow_exactly():
    data = np.array([[0.0, -200.0, -300.0]], np.float32)
    case = example("Softmax", 13, data)
    assert prose_outcome(case, np.float32([[1.0, 0.0, 0.0]])) == PASS
    assert prose_outcome(case, np.float32([[np.nextafter(np.float32(1), np.float32(0)), 0.0, 0.0]])) == FAIL
    assert prose_outcome(example("LogSoftmax", 13, data), np.float32([[0.0, -200.0, -300.0]])) == PASS


def test_negative_infinity_terms_give_exactly_0_and_minus_infinity():
    data = np.array([[-np.inf, 3.0, 3.0, -np.inf]], np.float32)
    assert prose_outcome(example("Softmax", 13, data), np.float32([[0.0, 0.5, 0.5, 0.0]])) == PASS
    assert prose_outcome(example("Softmax", 13, data), np.float32([[1e-45, 0.5, 0.5, 0.0]])) == FAIL
    logs = np.float32([[-np.inf, -math.log(2), -math.log(2), -np.inf]])
    assert prose_outcome(example("LogSoftmax", 13, data), logs) == PASS
    assert prose_outcome(example("LogSoftmax", 13, data), np.where(np.isinf(logs), -1e30, logs).astype(np.float32)) == FAIL


def test_a_long_row_within_the_bound_and_a_bound_that_is_not_loose():
    data = RNG.uniform(-4, 4, (2, 4096)).astype(np.float32)
    exact = np.exp(data.astype(np.float64) - data.max(axis=1, keepdims=True))
    exact /= np.array([math.fsum(row) for row in exact])[:, None]
    assert prose_outcome(example("Softmax", 13, data), exact.astype(np.float32)) == PASS
    off = (exact * (1 + 1e-2)).astype(np.float32)  # 84000 ULP or more: more than any order in float32 allows
    assert prose_outcome(example("Softmax", 13, data), off) == FAIL
    # Within WebNN's 3N + 3 = 12291 ULP (about 7e-4 relative at the least): no verdict is stricter than that.
    assert prose_outcome(example("Softmax", 13, data), (exact * (1 + 7e-4)).astype(np.float32)) == PASS


def test_the_version_13_body_admits_what_its_budgeted_exp_gives_and_says_so():
    data = np.array([[3.0], [0.5]], np.float32)
    found = verdict(example("Softmax", 13, data), np.nextafter(np.ones((2, 1), np.float32), np.float32(0)))
    assert found.outcome == PASS and found.reading == "function body"
    assert outcome(example("Softmax", 11, data, axis=1), np.nextafter(np.ones((2, 1), np.float32), np.float32(0))) == FAIL


# --- invalid axes ---

@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_axes_outside_the_range_are_invalid(op):
    data = np.zeros((2, 3), np.float32)
    for since, axis, rule in [(11, 2, "axis-out-of-range"), (13, -3, "axis-out-of-range"), (1, -1, "negative-axis"),
                              (1, 3, "axis-out-of-range")]:
        found = for_op(op).expected(example(op, since, data, axis=axis))
        assert found.invalid is not None and found.invalid.rule == rule, (since, axis)
        assert "Accepted range is [-r, r-1]" in found.invalid.sentence or since == 1
    scalar = np.zeros((), np.float32)
    assert for_op(op).expected(example(op, 13, scalar)).invalid.rule == "axis-out-of-range"
    assert for_op(op).expected(example(op, 1, scalar, axis=0)).is_valid  # coerced to [1, 1]


def test_version_1_axis_equal_to_rank_may_be_rejected():
    found = for_op("Softmax").expected(example("Softmax", 1, np.zeros((2, 3), np.float32), axis=2))
    assert found.is_valid and found.may_reject


# --- what the text leaves open ---

def test_an_all_minus_infinity_row_is_nan_from_13():
    data = np.array([[-np.inf, -np.inf], [0.0, 0.0]], np.float32)
    case = example("Softmax", 13, data)
    assert outcome(case, np.float32([[np.nan, np.nan], [0.5, 0.5]])) == PASS
    assert outcome(case, np.float32([[0.5, 0.5], [0.5, 0.5]])) == FAIL
    assert outcome(case, np.float32([[0.0, 0.0], [0.5, 0.5]])) == FAIL


@pytest.mark.parametrize("since", [1, 11])
def test_an_all_minus_infinity_row_has_three_readings_before_13(since):
    data = np.array([[-np.inf, -np.inf], [0.0, 0.0]], np.float32)
    case = example("Softmax", since, data, axis=1)
    for output in ([[np.nan, np.nan], [0.5, 0.5]], [[0.5, 0.5], [0.5, 0.5]], [[0.0, 0.0], [0.5, 0.5]]):
        assert outcome(case, np.float32(output)) in (PASS, AMBIGUOUS)
    assert outcome(case, np.float32([[1.0, 0.0], [0.5, 0.5]])) == FAIL
    logs = example("LogSoftmax", since, data, axis=1)
    assert outcome(logs, np.float32([[-math.log(2)] * 2, [-math.log(2)] * 2])) in (PASS, AMBIGUOUS)
    assert outcome(logs, np.float32([[-np.inf, -np.inf], [-math.log(2)] * 2])) in (PASS, AMBIGUOUS)


@pytest.mark.parametrize("since", VERSIONS)
def test_a_row_holding_plus_infinity(since):
    data = np.array([[np.inf, 1.0, 2.0]], np.float32)
    case = example("Softmax", since, data, axis=1)
    assert outcome(case, np.float32([[np.nan] * 3])) in (PASS, AMBIGUOUS)  # max-shifted: inf − inf
    assert outcome(case, np.float32([[np.nan, 0.0, 0.0]])) in (PASS, AMBIGUOUS)  # as written: inf/inf
    limit = outcome(case, np.float32([[1.0, 0.0, 0.0]]))
    assert limit == (FAIL if since == 13 else AMBIGUOUS) or (since < 13 and limit == PASS)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_a_nan_makes_its_row_nan(op):
    data = np.array([[1.0, np.nan, 2.0], [0.0, 0.0, 0.0]], np.float32)
    compute = softmax if op == "Softmax" else log_softmax
    right = compute(data)
    assert np.isnan(right[0]).all()
    assert outcome(example(op, 13, data), right) == PASS
    wrong = right.copy()
    wrong[0] = [0.5, np.nan, 0.5]
    assert outcome(example(op, 13, data), wrong) == FAIL


@pytest.mark.parametrize("dtype, stops_at, label", [(np.float16, 2048, "float16"), ("bfloat16", 256, "bfloat16")])
def test_a_long_row_of_ones_summed_in_16_bits_is_its_reading(dtype, stops_at, label):
    import ml_dtypes

    dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    data = np.ones((1, 4096), dtype)
    narrow = np.ones(1, dtype)
    for _ in range(4095):  # a running sum in the type: 1 is lost once the sum reaches 2^p
        narrow = (narrow + np.ones(1, dtype)).astype(dtype)
    assert float(narrow[0]) == stops_at
    case = example("Softmax", 13, data)
    assert verdict(case, np.full((1, 4096), 1 / 4096, dtype)).reading == "accumulated in float32 or wider"
    found = verdict(case, np.full((1, 4096), 1 / float(narrow[0]), dtype))
    assert found.outcome == PASS and found.reading == f"accumulated in {label}"


@pytest.mark.parametrize("data, underflows", [
    (np.float32([[0.0, -120.0, -1.0]]), True),    # exp(-120) is below float's least subnormal (e^-103.3)
    (np.float32([[0.0, -100.0, -1.0]]), False),
    (np.float16([[0.0, -20.0]]), True),            # float16's least subnormal is e^-16.6
    (np.float16([[0.0, -10.0]]), False),
    (np.float32([[-np.inf, 0.0]]), False),         # exp(-inf) is 0 exactly: the log is -inf in the text too
])
def test_the_softmax_underflows_trait_names_an_element_whose_softmax_rounds_to_zero(data, underflows):
    trait = for_op("LogSoftmax").traits["softmax-underflows"]
    assert trait(example("LogSoftmax", 13, data)) is underflows
