"""CumSum and CumProd (reference/cumulative.py) judged as a runtime's outputs would be: planted bugs
(an off-by-one prefix, exclusive or reverse ignored, a wrong axis) fail, correct computations in
another order or accumulator pass, exact prefixes are judged bitwise, empty prefixes are 0 and 1,
integer overflow has its readings, and the axes the text forbids are invalid."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.dtypes import from_numpy
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(11)


def example(op: str, since: int, x: np.ndarray, axis, axis_dtype=np.int64, **attributes) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    written = np.asarray(axis, dtype=axis_dtype)
    types = {"T": from_numpy(x.dtype).name, "T2": from_numpy(written.dtype).name}
    return Example(version, "unit", types, {"x": x, "axis": written}, attributes, "unit", "T")


def verdict(found: Example, output: np.ndarray):
    return judge(for_op(found.op).expected(found), RunOutput(outputs=(np.asarray(output),)))


def outcome(found: Example, output: np.ndarray) -> str:
    return verdict(found, output).outcome


def scan(x: np.ndarray, axis: int, combine, exclusive=False, reverse=False, dtype=None) -> np.ndarray:
    """A sequential scan along `axis` in `dtype` (x's own by default), each step rounded to it."""
    dtype = dtype or x.dtype
    moved = np.moveaxis(x, axis, -1).astype(dtype)
    if reverse:
        moved = moved[..., ::-1]
    out = np.empty_like(moved)
    total = np.full(moved.shape[:-1], 0 if combine is np.add else 1, dtype=dtype)
    for j in range(moved.shape[-1]):
        if exclusive:
            out[..., j] = total
        total = combine(total, moved[..., j]).astype(dtype)
        if not exclusive:
            out[..., j] = total
    if reverse:
        out = out[..., ::-1]
    return np.moveaxis(out, -1, axis).astype(x.dtype)


def pairwise_scan(x: np.ndarray) -> np.ndarray:
    """Hillis-Steele inclusive prefix sums along the last axis: log2(n) rounds of y[j] += y[j - d],
    every partial sum rounded to x's type: another order and grouping of each prefix."""
    y = x.copy()
    d = 1
    while d < y.shape[-1]:
        shifted = np.zeros_like(y)
        shifted[..., d:] = y[..., :-d]
        y = (y + shifted).astype(x.dtype)
        d *= 2
    return y


DATA = RNG.standard_normal((5, 40)).astype(np.float32)
SUMMABLE = (RNG.integers(-8, 9, size=(4, 30)) * 0.25).astype(np.float32)


@pytest.mark.parametrize("data", [DATA, SUMMABLE], ids=["random", "summable"])
def test_correct_sums_in_another_order_pass(data):
    case = example("CumSum", 14, data, 1)
    for name, computed in {"in order": scan(data, 1, np.add), "pairwise": pairwise_scan(data),
                           "in float64": np.cumsum(data.astype(np.float64), axis=1).astype(np.float32)}.items():
        found = verdict(case, computed)
        assert found.outcome == PASS, f"{name}: {found.message}"


@pytest.mark.parametrize("data", [DATA, SUMMABLE], ids=["random", "summable"])
def test_planted_bugs_fail(data):
    case = example("CumSum", 14, data, 1)
    off_by_one = scan(data, 1, np.add, exclusive=True)  # the inclusive sum without its own term
    one_too_many = np.cumsum(data, axis=1) + np.concatenate([data[:, 1:], np.zeros_like(data[:, :1])], axis=1)
    for name, planted in {"off by one (exclusive)": off_by_one, "the next term counted": one_too_many.astype(np.float32),
                          "reverse": scan(data, 1, np.add, reverse=True), "the other axis": scan(data, 0, np.add)}.items():
        assert outcome(case, planted) == FAIL, name


def test_exclusive_and_reverse_ignored_fail():
    data = DATA[:, :12]
    exclusive = example("CumSum", 14, data, -1, exclusive=1)
    assert outcome(exclusive, scan(data, 1, np.add, exclusive=True)) == PASS
    assert outcome(exclusive, scan(data, 1, np.add)) == FAIL
    both = example("CumSum", 14, data, 1, exclusive=1, reverse=1)
    assert outcome(both, scan(data, 1, np.add, exclusive=True, reverse=True)) == PASS
    assert outcome(both, scan(data, 1, np.add, exclusive=True)) == FAIL
    assert outcome(both, scan(data, 1, np.add, reverse=True)) == FAIL


def test_the_texts_examples():
    x = np.array([1, 2, 3], np.float32)
    for attributes, sums, products in [({}, [1, 3, 6], [1, 2, 6]), ({"exclusive": 1}, [0, 1, 3], [1, 1, 2]),
                                       ({"exclusive": 0, "reverse": 1}, [6, 5, 3], [6, 6, 3]),
                                       ({"exclusive": 1, "reverse": 1}, [5, 3, 0], [6, 3, 1])]:
        assert outcome(example("CumSum", 11, x, 0, np.int32, **attributes), np.float32(sums)) == PASS
        assert outcome(example("CumProd", 26, x, 0, **attributes), np.float32(products)) == PASS
        assert outcome(example("CumSum", 11, x, 0, **attributes), np.float32(products)) == FAIL


def test_an_empty_prefix_is_zero_or_one_exactly():
    x = np.array([[0.1, 0.7, 3.0]], np.float32)
    sums = example("CumSum", 14, x, 1, exclusive=1)
    assert outcome(sums, np.float32([[0.0, 0.1, 0.8]])) == PASS
    assert outcome(sums, np.float32([[1e-45, 0.1, 0.8]])) == FAIL
    products = example("CumProd", 26, x, 1, exclusive=1, reverse=1)
    assert outcome(products, np.float32([[2.1, 3.0, 1.0]])) == PASS
    assert outcome(products, np.float32([[2.1, 3.0, np.nextafter(np.float32(1), np.float32(0))]])) == FAIL
    assert outcome(example("CumProd", 26, x.astype(np.int64) + 2, 1, exclusive=1), np.int64([[1, 2, 4]])) == PASS


def test_an_exactly_summable_prefix_is_judged_bitwise():
    x = np.array([0.25, 1.0, -3.0, 8.0], np.float32)
    case = example("CumSum", 14, x, 0)
    assert outcome(case, np.float32([0.25, 1.25, -1.75, 6.25])) == PASS
    assert outcome(case, np.float32([0.25, 1.25, -1.75, np.nextafter(np.float32(6.25), np.float32(7))])) == FAIL


def test_float16_accumulated_in_float32_or_in_float16_both_pass_and_are_named():
    data = (1 + np.abs(RNG.standard_normal((2, 2048))) / 2).astype(np.float16)
    case = example("CumSum", 14, data, 1)
    wide = verdict(case, scan(data, 1, np.add, dtype=np.float32))
    assert wide.outcome == PASS and wide.reading == "accumulated in float32 or wider"
    narrow = verdict(case, scan(data, 1, np.add))
    assert narrow.outcome == PASS and narrow.reading == "accumulated in float16"
    assert outcome(case, scan(data, 1, np.add, exclusive=True, dtype=np.float32)) == FAIL


def test_a_long_float16_axis_of_ones_in_either_accumulator():
    case = example("CumSum", 14, np.ones(4096, np.float16), 0)
    exact = np.arange(1, 4097).astype(np.float16)  # rounded once: 2049 -> 2048, 2051 -> 2052
    assert verdict(case, exact).reading == "accumulated in float32 or wider"
    stalled = np.minimum(np.arange(1, 4097), 2048).astype(np.float16)  # a float16 sum stays at 2048
    assert verdict(case, stalled).reading == "accumulated in float16"


def test_nan_and_infinities_are_ieee_sums_of_the_prefix():
    x = np.array([1.0, np.inf, -np.inf, 2.0], np.float32)
    case = example("CumSum", 14, x, 0, reverse=1)  # from the back: 2, -inf, nan, nan
    assert outcome(case, np.float32([np.nan, np.nan, -np.inf, 2.0])) == PASS
    assert outcome(case, np.float32([np.nan, np.inf, -np.inf, 2.0])) == FAIL
    products = example("CumProd", 26, np.array([2.0, np.inf, 0.0, -1.0], np.float32), 0)
    assert outcome(products, np.float32([2.0, np.inf, np.nan, np.nan])) == PASS


def test_a_product_in_another_order_passes_and_planted_bugs_fail():
    data = (DATA / 2 + np.float32(0.75))
    case = example("CumProd", 26, data, 1)
    assert outcome(case, scan(data, 1, np.multiply)) == PASS
    assert outcome(case, np.cumprod(data.astype(np.float64), axis=1).astype(np.float32)) == PASS
    assert outcome(case, scan(data, 1, np.multiply, exclusive=True)) == FAIL
    assert outcome(case, scan(data, 1, np.multiply, reverse=True)) == FAIL


def test_a_partial_product_in_the_subnormal_range_may_lose_its_digits():
    # onnxruntime's order: -5.2e-8 · 3.1e-33 is a float32 subnormal (digits lost), then · 1e19 is normal.
    x = np.array([-5.2291198926468496e-08, 3.0814879110195774e-33, 1.0, -4.1861015711013405e+19], np.float32)
    case = example("CumProd", 26, x, 0)
    assert outcome(case, scan(x, 0, np.multiply)) == PASS
    assert outcome(case, scan(x, 0, np.multiply) * np.float32(2)) == FAIL


def test_a_product_overflowing_in_some_order_may_give_inf():
    x = np.array([1e38, 1e38, 1e-38], np.float32)  # the exact products: 1e38, 1e76 (past float32), 1e38
    exact = np.cumprod(x.astype(np.float64))
    forward = example("CumProd", 26, x, 0)
    with np.errstate(over="ignore"):
        assert outcome(forward, exact.astype(np.float32)) == PASS
        assert outcome(forward, scan(x, 0, np.multiply)) == PASS  # in float32, in order: inf at the end too
        assert outcome(forward, np.float32([exact[0], np.inf, -np.inf])) == FAIL
    backward = example("CumProd", 26, x, 0, reverse=1)  # from the back: 1e-38, ≈ 1, 1e38
    done = np.cumprod(x[::-1].astype(np.float64))[::-1].astype(np.float32)
    assert outcome(backward, done) == PASS
    assert outcome(backward, np.float32([np.inf, done[1], done[2]])) == PASS  # 1e38 · 1e38 first, in another order


def test_integer_sums_are_exact_and_overflow_has_two_readings():
    big = example("CumSum", 14, np.array([2 ** 62, 2 ** 62, -1], np.int64), 0)
    labels = {r.label: r.outputs[0].tolist() for r in for_op("CumSum").expected(big).readings}
    assert labels == {"wrapped (two's complement)": [2 ** 62, -(2 ** 63), 2 ** 63 - 1],
                      "saturated (the exact value clamped to the type)": [2 ** 62, 2 ** 63 - 1, 2 ** 63 - 1]}
    assert outcome(big, np.int64([2 ** 62, -(2 ** 63), 2 ** 63 - 1])) == AMBIGUOUS
    assert outcome(big, np.int64([2 ** 62, 2 ** 63 - 1, 2 ** 63 - 2])) == FAIL  # a running saturating sum: no reading
    product = example("CumProd", 26, np.array([2 ** 31 - 1, 2], np.int32), 0)
    assert {r.label for r in for_op("CumProd").expected(product).readings} == {
        "wrapped (two's complement)", "saturated (the exact value clamped to the type)"}
    assert outcome(product, np.int32([2 ** 31 - 1, -2])) == AMBIGUOUS


def test_an_integer_sum_through_double_fails():
    case = example("CumSum", 14, np.array([2 ** 53, 1], np.int64), 0)
    assert outcome(case, np.int64([2 ** 53, 2 ** 53 + 1])) == PASS
    assert outcome(case, np.int64([2 ** 53, 2 ** 53])) == FAIL


@pytest.mark.parametrize("op, since", [("CumSum", 11), ("CumSum", 14), ("CumProd", 26)])
def test_the_axes_the_text_forbids_are_invalid(op, since):
    reference = for_op(op)
    x = np.ones((2, 3), np.float32)
    assert reference.expected(example(op, since, x, 2)).invalid.rule == "axis-out-of-range"
    assert reference.expected(example(op, since, x, -3, np.int32)).invalid.rule == "axis-out-of-range"
    assert reference.expected(example(op, since, x, -2)).is_valid
    assert reference.expected(example(op, since, x, [1])).invalid.rule == "axis-not-scalar"
    assert reference.expected(example(op, since, np.float32(3.0).reshape(()), 0)).invalid.rule == "axis-out-of-range"
    assert reference.expected(example(op, since, np.zeros((0, 2), np.float32), 2)).invalid.rule == "axis-out-of-range"


def test_size_0_dims_give_an_empty_output():
    for shape, axis in [((2, 0), 1), ((0, 3), 1), ((2, 0, 3), -3)]:
        x = np.zeros(shape, np.float32)
        assert outcome(example("CumSum", 14, x, axis, exclusive=1), np.zeros(shape, np.float32)) == PASS
        assert outcome(example("CumProd", 26, x.astype(np.int64), axis), np.zeros(shape, np.int64)) == PASS
