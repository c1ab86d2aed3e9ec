"""The reductions (reference/reduction.py) judged as a runtime's outputs would be: planted wrong
implementations fail, legal reorderings and accumulators pass, exactly summable rows are judged
bitwise, and what the texts leave open (NaN, integer overflow and rounding, empty sets in the
versions that say nothing) is given as readings."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, IMPRECISE, PASS, judge
from conformance.reference import for_op
from conformance.reference.reduction import REFERENCES
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(7)


def example(op: str, since: int, data: np.ndarray, axes=None, **attributes) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    inputs = {"data": data}
    if axes is not None:
        if version.input("axes") is not None:
            inputs["axes"] = np.array(axes, dtype=np.int64)
        else:
            attributes["axes"] = list(axes)
    from conformance.dtypes import from_numpy

    return Example(version, "unit", {"T": from_numpy(data.dtype).name}, inputs, attributes, "unit", "T")


def verdict(found: Example, output: np.ndarray):
    expected = for_op(found.op).expected(found)
    return judge(expected, RunOutput(outputs=(np.asarray(output),)))


def outcome(found: Example, output: np.ndarray) -> str:
    return verdict(found, output).outcome


DATA = RNG.standard_normal((6, 40)).astype(np.float32)

def _reversed(rows: np.ndarray, combine=np.add) -> np.ndarray:
    total = rows[:, -1]
    for k in range(rows.shape[1] - 2, -1, -1):
        total = combine(total, rows[:, k])
    return total


def _pairwise(rows: np.ndarray, combine=np.add) -> np.ndarray:
    while rows.shape[1] > 1:
        half = rows.shape[1] // 2
        paired = combine(rows[:, :half], rows[:, half:2 * half])
        rows = np.concatenate([paired, rows[:, 2 * half:]], axis=1)
    return rows[:, 0]


def _blocked(rows: np.ndarray, combine=np.add, block: int = 8) -> np.ndarray:
    partials = [_reversed(rows[:, k:k + block], combine)[:, None] for k in range(0, rows.shape[1], block)]
    return _reversed(np.concatenate(partials, axis=1), combine)


ORDERS = {"reversed": _reversed, "pairwise": _pairwise, "blocked": _blocked}


def _log_sum_exp(x: np.ndarray, order) -> np.ndarray:
    shift = x.max(axis=1)
    return shift + np.log(order(np.exp(x - shift[:, None])))


# Per op: its value along axis 1 from a float32 summation order (or product order), and a planted bug.
CORRECT_AND_PLANTED = {
    "ReduceSum": (lambda x, order: order(x), lambda x: x[:, 1:].sum(axis=1)),
    "ReduceMean": (lambda x, order: order(x) / np.float32(x.shape[1]), lambda x: x.sum(axis=1) / (x.shape[1] - 1)),
    "ReduceL1": (lambda x, order: order(np.abs(x)), lambda x: np.abs(x.sum(axis=1))),
    "ReduceL2": (lambda x, order: np.sqrt(order(x * x)), lambda x: np.einsum("ij,ij->i", x, x)),
    "ReduceSumSquare": (lambda x, order: order(x * x), lambda x: (x * x)[:, :-1].sum(axis=1)),
    "ReduceLogSumExp": (_log_sum_exp, lambda x: np.log(np.exp(x[:, :-1]).sum(axis=1))),
    "ReduceLogSum": (lambda x, order: np.log(order(x)), lambda x: np.log(x[:, 1:].sum(axis=1))),
    "ReduceProd": (lambda x, order: order(x, np.multiply), lambda x: x[:, 1:].prod(axis=1)),
}


def _data_for(op: str) -> np.ndarray:
    if op == "ReduceLogSum":
        return np.abs(DATA) + np.float32(1 / 40)
    if op == "ReduceProd":
        return DATA / 2 + np.float32(0.75)
    return DATA


@pytest.mark.parametrize("order", sorted(ORDERS))
@pytest.mark.parametrize("op", sorted(CORRECT_AND_PLANTED))
def test_a_legal_reordering_passes_and_a_planted_bug_fails(op, order):
    data = _data_for(op)
    correct, planted = CORRECT_AND_PLANTED[op]
    case = example(op, 18 if op != "ReduceSum" else 13, data, axes=[1], keepdims=0)
    good = verdict(case, correct(data, ORDERS[order]).astype(np.float32))
    assert good.outcome == PASS, f"{op} summed {order} in float32 failed: {good.message}"
    assert outcome(case, planted(data).astype(np.float32)) == FAIL, f"{op}: a planted bug passed"


def test_log_sum_exp_without_the_max_shift_fails_where_exp_overflows():
    data = np.array([[90.0, 89.0, 1.0]], np.float32)
    case = example("ReduceLogSumExp", 13, data, axes=[1], keepdims=0)
    assert outcome(case, _log_sum_exp(data, _reversed).astype(np.float32)) == PASS
    assert outcome(case, np.log(np.exp(data).sum(axis=1))) == FAIL  # inf


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceL1", "ReduceSumSquare"])
def test_a_wrong_axis_fails(op):
    data = RNG.standard_normal((5, 5)).astype(np.float32)
    case = example(op, 18 if op != "ReduceSum" else 13, data, axes=[0], keepdims=0)
    along_the_other = for_op(op).expected(example(op, 18 if op != "ReduceSum" else 13, data, axes=[1], keepdims=0))
    assert outcome(case, along_the_other.readings[0].outputs[0]) == FAIL


def test_an_exactly_summable_row_is_judged_bitwise():
    case = example("ReduceSum", 13, np.array([[0.25, 1.0, -3.0, 8.0]], np.float32), axes=[1])
    assert verdict(case, np.float32([[6.25]])).outcome == PASS
    assert outcome(case, np.nextafter(np.float32([[6.25]]), np.float32(7))) == FAIL


def test_float16_accumulated_in_float32_or_in_float16_both_pass_and_are_named():
    # Values of one sign near 1.5: a float16 sum stagnates once its spacing passes them.
    data = (1 + np.abs(RNG.standard_normal((3, 4096))) / 2).astype(np.float16)
    case = example("ReduceSum", 13, data, axes=[1], keepdims=0)
    wide = verdict(case, data.astype(np.float32).sum(axis=1).astype(np.float16))
    assert wide.outcome == PASS and wide.reading == "accumulated in float32 or wider"
    narrow = np.zeros(3, np.float16)
    for k in range(4096):
        narrow = (narrow + data[:, k]).astype(np.float16)
    assert verdict(case, narrow).reading == "accumulated in float16"


def test_a_long_float16_row_of_ones_in_either_accumulator():
    case = example("ReduceSum", 13, np.ones((1, 4096), np.float16), axes=[1], keepdims=0)
    assert outcome(case, np.float16([4096])) == PASS
    assert verdict(case, np.float16([2048])).reading == "accumulated in float16"  # stagnation at 2048 + 1


def test_log_sum_exp_without_the_max_shift_fails_unless_the_function_body_overflows_too():
    data = np.array([[100.0, 2.0]], np.float32)  # exp(100) overflows float32; the value is 100 + tiny
    case = example("ReduceLogSumExp", 13, data, axes=[1])
    assert outcome(case, np.float32([[100.0]])) == PASS
    assert outcome(case, np.float32([[np.inf]])) == FAIL, "log(Σ exp(x)) unshifted in float32 is a wrong answer"
    assert outcome(case, np.float32([[101.0]])) == FAIL
    # From 18 the body computes exp in float64: past 709 it overflows, and a runtime that follows it conforms.
    large = example("ReduceLogSumExp", 18, np.array([[1770.0, 2.0]], np.float16), axes=[1])
    found = verdict(large, np.float16([[np.inf]]))
    # The body and the prose disagree for this case (inf against 1770): both are readings.
    assert found.outcome == AMBIGUOUS and found.reading.startswith("function body")
    assert outcome(example("ReduceLogSumExp", 18, data, axes=[1]), np.float32([[np.inf]])) == FAIL


def test_a_product_overflowing_in_some_order_may_give_inf():
    data = np.array([[3e38, 3e38, 1e-38]], np.float32)  # exact 9e37, but 3e38 · 3e38 overflows first
    case = example("ReduceProd", 18, data, axes=[1])
    assert outcome(case, np.float32([[np.inf]])) == PASS
    assert outcome(case, np.float32([[-np.inf]])) == FAIL


def test_integer_sums_are_exact_and_overflow_has_two_readings():
    assert outcome(example("ReduceSum", 13, np.array([2 ** 62, 2 ** 62 - 1, 1], np.int64)), np.int64([2 ** 63 - 1 + 1 - 1])) != PASS
    big = example("ReduceSum", 13, np.array([2 ** 62, 2 ** 62], np.int64))
    expected = for_op("ReduceSum").expected(big)
    labels = {r.label: int(r.outputs[0].reshape(-1)[0]) for r in expected.readings}
    assert labels == {"wrapped (two's complement)": -(2 ** 63), "saturated": 2 ** 63 - 1}
    assert outcome(big, np.int64([-(2 ** 63)])) == AMBIGUOUS


def test_an_integer_sum_through_double_fails():
    case = example("ReduceSum", 13, np.array([2 ** 53 + 1, 0], np.int64))
    assert outcome(case, np.int64([2 ** 53])) == FAIL


def test_an_integer_mean_rounds_by_one_of_the_readings():
    case = example("ReduceMean", 18, np.array([-3, 0], np.int32))  # -1.5
    labels = {r.label: int(r.outputs[0].reshape(-1)[0]) for r in for_op("ReduceMean").expected(case).readings}
    assert labels == {"mean truncated toward zero": -1, "mean floored": -2}
    assert outcome(case, np.int32([0])) == FAIL


def test_reducing_an_empty_set_gives_the_versions_stated_value():
    empty = np.zeros((2, 0), np.float32)
    assert outcome(example("ReduceSum", 13, empty, axes=[1]), np.zeros((2, 1), np.float32)) == PASS
    assert outcome(example("ReduceProd", 18, empty, axes=[1]), np.ones((2, 1), np.float32)) == PASS
    assert outcome(example("ReduceMax", 18, empty, axes=[1]), np.full((2, 1), -np.inf, np.float32)) == PASS
    assert outcome(example("ReduceMax", 20, np.zeros((2, 0), np.int8), axes=[1]), np.full((2, 1), -128, np.int8)) == PASS
    assert outcome(example("ReduceLogSum", 18, empty, axes=[1]), np.full((2, 1), -np.inf, np.float32)) == PASS
    assert outcome(example("ReduceSum", 13, empty, axes=[1]), np.zeros((0, 1), np.float32)) == FAIL  # the dim kept is 1


def test_a_version_silent_on_the_empty_set_allows_any_value_and_a_rejection():
    expected = for_op("ReduceSum").expected(example("ReduceSum", 11, np.zeros((2, 0), np.float32), axes=[1]))
    assert expected.may_reject and "empty set" in expected.may_reject
    assert outcome(example("ReduceSum", 11, np.zeros((2, 0), np.float32), axes=[1]), np.float32([[7], [8]])) == PASS


def test_noop_with_empty_axes_still_performs_the_non_reduction_steps():
    data = np.array([1.0, 4.0], np.float32)
    case = example("ReduceLogSum", 18, data, axes=[], noop_with_empty_axes=1)
    assert outcome(case, np.log(data)) == PASS
    assert outcome(case, data) == FAIL
    square = example("ReduceSumSquare", 18, data, axes=[], noop_with_empty_axes=1)
    assert outcome(square, np.float32([1.0, 16.0])) == PASS


def test_no_axes_reduces_every_axis_without_noop():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert outcome(example("ReduceSum", 13, data, axes=[]), np.float32([[15.0]])) == PASS


def test_max_with_nan_has_the_readings_the_text_leaves_open():
    case = example("ReduceMax", 18, np.array([1.0, np.nan, 3.0], np.float32), axes=[0], keepdims=0)
    assert outcome(case, np.float32(np.nan)) == AMBIGUOUS
    assert outcome(case, np.float32(3.0)) == AMBIGUOUS
    assert outcome(case, np.float32(1.0)) == FAIL  # no reading of NaN gives a value that is not the max


def test_bool_max_and_min_order_false_before_true():
    data = np.array([[True, False], [False, False]])
    assert outcome(example("ReduceMax", 20, data, axes=[1], keepdims=0), np.array([True, False])) == PASS
    assert outcome(example("ReduceMin", 20, data, axes=[1], keepdims=0), np.array([False, False])) == PASS


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda r: r.op)
def test_version_one_has_no_negative_axes_and_every_version_checks_the_range(reference):
    data = np.ones((2, 3), np.float32)
    assert reference.expected(example(reference.op, 1, data, axes=[-1])).invalid.rule == "negative-axis"
    assert reference.expected(example(reference.op, 11, data, axes=[2])).invalid.rule == "axis-out-of-range"
    assert reference.expected(example(reference.op, 11, data, axes=[-2])).is_valid


def test_a_repeated_axis_may_be_rejected():
    expected = for_op("ReduceSum").expected(example("ReduceSum", 13, np.ones((2, 3), np.float32), axes=[1, -1]))
    assert expected.is_valid and expected.may_reject


def test_the_statistical_test_reports_a_biased_accumulator_as_imprecise():
    data = np.abs(RNG.standard_normal((1500, 32))).astype(np.float16)
    case = example("ReduceSum", 13, data, axes=[1], keepdims=0)
    chopped = np.zeros(1500, np.float64)
    for k in range(32):
        exact = chopped + data[:, k].astype(np.float64)
        near = exact.astype(np.float16)
        chopped = np.where(near.astype(np.float64) > exact, np.nextafter(near, np.float16(0)), near).astype(np.float64)
    assert outcome(case, chopped.astype(np.float16)) == IMPRECISE
