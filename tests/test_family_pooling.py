"""AveragePool, LpPool, GlobalAveragePool and GlobalLpPool (reference/pooling.py) judged as a runtime's
outputs would be: expected values computed here with plain loops over windows and taps (Fractions for
the exact sums), not by the reference; planted wrong implementations (pads on the wrong side, the pad
counted where it is excluded or the other way, a window dropped or added, p misread, the average over
the wrong axis) fail; legal reorderings and the readings the texts leave open pass; the texts' invalid
inputs are found with their rule."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(65)
AVERAGE_VERSIONS = (1, 7, 10, 11, 19, 22)
LP_VERSIONS = (1, 2, 11, 18, 22)


def example(op: str, since: int, x: np.ndarray, attributes: dict | None = None, dtype: str = "float") -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    return Example(version, "unit", {"T": dtype}, {"X": x}, attributes or {}, "unit", "T")


def outcome(case: Example, output) -> str:
    return judge(for_op(case.op).expected(case), RunOutput(outputs=(np.asarray(output),))).outcome


def loop_pool(x, kernel, strides=None, pads=None, dilations=None, ceil=False, ignore=True, kind="avg",
              count="read", p=2):
    """A pool by loops over every window and tap of x [N, C, *spatial]: `count` 'read' (taps in the
    input), 'padded' (taps in the padded input) or 'kernel'; `ignore` drops a ceil window starting in
    the right padding. Exact values (Fractions) where x holds dyadic numbers; None for a 0/0."""
    rank = x.ndim - 2
    strides = strides or [1] * rank
    dilations = dilations or [1] * rank
    pads = pads or [0] * (2 * rank)
    sizes = []
    for a in range(rank):
        n, k, s, d, b, e = x.shape[2 + a], kernel[a], strides[a], dilations[a], pads[a], pads[a + rank]
        span = n + b + e - ((k - 1) * d + 1)
        count_a = (math.ceil(span / s) if ceil else span // s) + 1
        if ceil and ignore and (count_a - 1) * s >= n + b:
            count_a -= 1
        sizes.append(count_a)
    out = np.empty(x.shape[:2] + tuple(sizes), dtype=object)
    for index in itertools.product(*[range(v) for v in out.shape]):
        nb, c, where = index[0], index[1], index[2:]
        total, read, padded = Fraction(0), 0, 0
        for tap in itertools.product(*[range(k) for k in kernel]):
            pos = [where[a] * strides[a] - pads[a] + tap[a] * dilations[a] for a in range(rank)]
            if all(-pads[a] <= pos[a] < x.shape[2 + a] + pads[a + rank] for a in range(rank)):
                padded += 1
            if all(0 <= pos[a] < x.shape[2 + a] for a in range(rank)):
                read += 1
                value = Fraction(float(x[(nb, c, *pos)]))
                total += abs(value) ** p if kind == "lp" else value
        if kind == "lp":
            out[index] = float(total) ** (1.0 / p)
            continue
        divisor = {"read": read, "padded": padded, "kernel": math.prod(kernel)}[count]
        out[index] = None if divisor == 0 else total / divisor
    return out


def as_output(values: np.ndarray, dtype=np.float32, free=0.0) -> np.ndarray:
    return np.array([free if v is None else float(v) for v in values.ravel()], dtype=np.float64).astype(dtype).reshape(values.shape)


def small_ints(shape, dtype=np.float32) -> np.ndarray:
    return RNG.integers(-4, 5, size=shape).astype(dtype)


# --- AveragePool ---

@pytest.mark.parametrize("since", AVERAGE_VERSIONS)
def test_average_pool_excludes_pads_and_tells_misplaced_ones(since):
    x = small_ints((2, 3, 6))
    attributes = {"kernel_shape": [4], "pads": [2, 1], "strides": [2]}
    case = example("AveragePool", since, x, attributes)
    right = as_output(loop_pool(x, [4], [2], [2, 1]))
    assert outcome(case, right) == PASS
    assert outcome(case, as_output(loop_pool(x, [4], [2], [1, 2]))[..., :right.shape[2]]) == FAIL
    # the pad counted although count_include_pad is 0 (or absent: AveragePool-1 always excludes it)
    assert outcome(case, as_output(loop_pool(x, [4], [2], [2, 1], count="padded"))) == FAIL


@pytest.mark.parametrize("since", [7, 10, 11, 19, 22])
def test_count_include_pad_divides_by_the_kernel(since):
    x = small_ints((1, 2, 5))
    attributes = {"kernel_shape": [4], "pads": [1, 2], "count_include_pad": 1}
    case = example("AveragePool", since, x, attributes)
    assert outcome(case, as_output(loop_pool(x, [4], pads=[1, 2], count="padded"))) == PASS
    assert outcome(case, as_output(loop_pool(x, [4], pads=[1, 2]))) == FAIL


def test_two_dimensional_asymmetric_pads_and_transposed_output():
    x = small_ints((1, 2, 4, 5))
    attributes = {"kernel_shape": [2, 2], "pads": [1, 0, 0, 1], "strides": [1, 2]}
    case = example("AveragePool", 19, x, attributes)
    right = as_output(loop_pool(x, [2, 2], [1, 2], [1, 0, 0, 1]))
    assert outcome(case, right) == PASS
    swapped_pads = as_output(loop_pool(x, [2, 2], [1, 2], [0, 1, 1, 0]))
    assert swapped_pads.shape != right.shape or outcome(case, swapped_pads) == FAIL
    assert outcome(case, right[:, ::-1].copy()) == FAIL


@pytest.mark.parametrize("auto_pad,pads", [("SAME_UPPER", [0, 1]), ("SAME_LOWER", [1, 0])])
def test_same_puts_the_odd_pad_where_the_text_says(auto_pad, pads):
    x = np.array([[[1, 2, 3, 4]]], dtype=np.float32)
    case = example("AveragePool", 11, x, {"kernel_shape": [2], "auto_pad": auto_pad})
    assert outcome(case, as_output(loop_pool(x, [2], pads=pads))) == PASS
    assert outcome(case, as_output(loop_pool(x, [2], pads=pads[::-1]))) == FAIL


def test_dilations_skip_taps():
    x = small_ints((1, 1, 7))
    case = example("AveragePool", 22, x, {"kernel_shape": [2], "dilations": [3]})
    assert outcome(case, as_output(loop_pool(x, [2], dilations=[3]))) == PASS
    assert outcome(case, as_output(loop_pool(x, [2], dilations=[2]))[..., :4]) == FAIL


def test_ceil_overhang_counts_are_both_readings():
    x = np.array([[[2, 4, 6, 8]]], dtype=np.float32)
    attributes = {"kernel_shape": [2], "strides": [2], "pads": [1, 0], "ceil_mode": 1, "count_include_pad": 1}
    case = example("AveragePool", 22, x, attributes)
    found = for_op("AveragePool").expected(case)
    assert len(found.readings) == 2 and "ceil-overhang" in found.ambiguity
    padded = as_output(loop_pool(x, [2], [2], [1, 0], ceil=True, count="padded"))
    whole = as_output(loop_pool(x, [2], [2], [1, 0], ceil=True, count="kernel"))
    assert padded.ravel().tolist() == [1, 5, 8] and whole.ravel().tolist() == [1, 5, 4]
    assert outcome(case, padded) in (PASS, AMBIGUOUS)
    assert outcome(case, whole) in (PASS, AMBIGUOUS)
    assert outcome(case, as_output(loop_pool(x, [2], [2], [1, 0], ceil=True))) == FAIL  # the pad excluded
    assert for_op("AveragePool").traits["ceil-overhang"](case)


@pytest.mark.parametrize("since,kept_allowed", [(10, True), (19, True), (22, False)])
def test_a_window_starting_in_the_right_pad(since, kept_allowed):
    x = np.array([[[1, 2, 3, 4]]], dtype=np.float32)
    attributes = {"kernel_shape": [2], "strides": [2], "pads": [0, 1], "ceil_mode": 1, "count_include_pad": 1}
    case = example("AveragePool", since, x, attributes)
    ignored = as_output(loop_pool(x, [2], [2], [0, 1], ceil=True, count="padded"))
    kept = as_output(loop_pool(x, [2], [2], [0, 1], ceil=True, ignore=False, count="padded"))
    assert ignored.shape == (1, 1, 2) and kept.shape == (1, 1, 3)
    assert outcome(case, ignored) in (PASS, AMBIGUOUS)
    assert (outcome(case, kept) != FAIL) == kept_allowed
    assert outcome(case, kept + 1) == FAIL
    assert for_op("AveragePool").traits["right-pad-start"](case) == kept_allowed


def test_a_window_over_padding_only_may_hold_any_value():
    x = np.array([[[4, 8]]], dtype=np.float32)
    case = example("AveragePool", 7, x, {"kernel_shape": [1], "pads": [1, 0]})
    found = for_op("AveragePool").expected(case)
    assert found.is_valid and "0/0" in found.ambiguity
    assert outcome(case, np.array([[[np.nan, 4, 8]]], np.float32)) == PASS
    assert outcome(case, np.array([[[0, 4, 8]]], np.float32)) == PASS
    assert outcome(case, np.array([[[0, 4, 9]]], np.float32)) == FAIL
    assert for_op("AveragePool").traits["padding-only-window"](case)
    assert for_op("AveragePool").traits["pads-beyond-kernel"](case)


def test_float_sums_in_any_order_pass_and_a_dropped_tap_fails():
    x = RNG.standard_normal((1, 2, 9)).astype(np.float32)
    case = example("AveragePool", 19, x, {"kernel_shape": [3], "pads": [1, 1]})
    exact = loop_pool(x, [3], pads=[1, 1])
    assert outcome(case, as_output(exact)) == PASS
    reversed_order = np.zeros(exact.shape, dtype=np.float32)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    for c, i in itertools.product(range(2), range(9)):
        taps = [padded[0, c, i + t] for t in (2, 1, 0)]
        count = sum(1 for t in range(3) if 0 <= i + t - 1 < 9)
        reversed_order[0, c, i] = np.float32(np.float32(np.float32(taps[0] + taps[1]) + taps[2]) / np.float32(count))
    assert outcome(case, reversed_order) == PASS
    dropped = reversed_order.copy()
    dropped[0, 0, 4] = np.float32((padded[0, 0, 4] + padded[0, 0, 5]) / 3)
    assert outcome(case, dropped) == FAIL


def test_float16_may_accumulate_in_float16():
    x = (RNG.standard_normal((1, 1, 8)) * 30).astype(np.float16)
    case = example("AveragePool", 22, x, {"kernel_shape": [8]}, dtype="float16")
    total = np.float16(0)
    for value in x.ravel():
        total = np.float16(total + value)
    assert outcome(case, np.array([[[np.float16(total / np.float16(8))]]])) == PASS
    assert outcome(case, np.array([[[np.float16(float(total) / 7)]]], dtype=np.float16)) == FAIL


def test_three_spatial_axes_with_strides():
    x = small_ints((1, 1, 3, 4, 3))
    attributes = {"kernel_shape": [2, 2, 2], "strides": [1, 2, 1], "pads": [0, 1, 0, 1, 0, 1]}
    case = example("AveragePool", 11, x, attributes)
    assert outcome(case, as_output(loop_pool(x, [2, 2, 2], [1, 2, 1], [0, 1, 0, 1, 0, 1]))) == PASS
    assert outcome(case, as_output(loop_pool(x, [2, 2, 2], [1, 2, 1], [0, 1, 0, 1, 0, 1], count="padded"))) == FAIL


def test_average_pool_11_floor_formula_for_valid_is_a_reading():
    x = np.array([[[1, 2, 3, 4]]], dtype=np.float32)
    case = example("AveragePool", 11, x, {"kernel_shape": [2], "strides": [2], "auto_pad": "VALID"})
    found = for_op("AveragePool").expected(case)
    assert len(found.readings) == 2 and "AveragePool-11" in found.ambiguity
    assert outcome(case, np.array([[[1.5, 3.5]]], np.float32)) in (PASS, AMBIGUOUS)
    assert outcome(case, np.array([[[1.5]]], np.float32)) == AMBIGUOUS  # floor((4 - 2 + 1) / 2) = 1
    assert outcome(case, np.array([[[3.5]]], np.float32)) == FAIL
    later = example("AveragePool", 19, x, {"kernel_shape": [2], "strides": [2], "auto_pad": "VALID"})
    assert outcome(later, np.array([[[1.5]]], np.float32)) == FAIL


def test_valid_with_ceil_mode_keeps_the_floor_shape():
    x = np.array([[[1, 2, 3, 4]]], dtype=np.float32)
    case = example("AveragePool", 22, x, {"kernel_shape": [2], "strides": [3], "auto_pad": "VALID", "ceil_mode": 1})
    assert outcome(case, np.array([[[1.5]]], np.float32)) == PASS
    assert outcome(case, np.array([[[1.5, 4]]], np.float32)) == FAIL
    assert for_op("AveragePool").traits["valid-ceil-mode"](case)


def test_negative_same_pad_pads_nothing():
    x = np.array([[[1, 2, 3]]], dtype=np.float32)
    case = example("AveragePool", 22, x, {"kernel_shape": [1], "strides": [3], "auto_pad": "SAME_UPPER"})
    assert outcome(case, np.array([[[1]]], np.float32)) == PASS
    assert outcome(case, np.array([[[2]]], np.float32)) == FAIL
    assert for_op("AveragePool").traits["negative-same-pad"](case)
    dilated = example("AveragePool", 22, x, {"kernel_shape": [2], "dilations": [2], "auto_pad": "SAME_UPPER"})
    assert outcome(dilated, np.array([[[2, 2, 2]]], np.float32)) == PASS  # pads 1, 1: [p, 1, 2, 3, p]
    assert outcome(dilated, np.array([[[2, 2]]], np.float32)) == FAIL
    assert for_op("AveragePool").traits["dilated-same-padding"](dilated)


# --- LpPool ---

@pytest.mark.parametrize("since", LP_VERSIONS)
@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_pool_matches_loops_and_tells_a_misread_p(since, p):
    x = small_ints((2, 2, 6))
    attributes = {"kernel_shape": [3], "pads": [1, 2], "strides": [2], "p": float(p) if since == 1 else p}
    case = example("LpPool", since, x, attributes)
    assert outcome(case, as_output(loop_pool(x, [3], [2], [1, 2], kind="lp", p=p))) == PASS
    other = 2 if p != 2 else 3
    assert outcome(case, as_output(loop_pool(x, [3], [2], [1, 2], kind="lp", p=other))) == FAIL
    assert outcome(case, as_output(loop_pool(x, [3], [2], [2, 1], kind="lp", p=p))) == FAIL


def test_lp_pool_1_takes_a_fractional_p():
    x = np.abs(small_ints((1, 1, 5))) + 1
    case = example("LpPool", 1, x, {"kernel_shape": [2], "p": 1.5})
    assert outcome(case, as_output(loop_pool(x, [2], kind="lp", p=1.5))) == PASS
    assert outcome(case, as_output(loop_pool(x, [2], kind="lp", p=2))) == FAIL


def test_lp_pool_p_1_is_exact_and_the_padding_adds_nothing():
    x = np.array([[[1, -2, 3]]], dtype=np.float32)
    case = example("LpPool", 18, x, {"kernel_shape": [2], "pads": [1, 1], "p": 1})
    assert outcome(case, np.array([[[1, 3, 5, 3]]], np.float32)) == PASS
    assert outcome(case, np.array([[[2, 3, 5, 4]]], np.float32)) == FAIL  # the padding read as 1
    assert outcome(case, np.array([[[1, 3, 5, np.nextafter(np.float32(3), np.float32(4))]]], np.float32)) == FAIL


def test_lp_pool_2_same_as_worded_is_a_reading():
    x = np.array([[[3, 4, 0, 5, 12]]], dtype=np.float32)
    case = example("LpPool", 2, x, {"kernel_shape": [2], "strides": [2], "auto_pad": "SAME_UPPER"})
    found = for_op("LpPool").expected(case)
    assert len(found.readings) == 2
    assert outcome(case, np.array([[[5, 5, 12]]], np.float32)) in (PASS, AMBIGUOUS)  # ceil(5 / 2) windows
    literal = as_output(loop_pool(x, [2], [2], [2, 3], kind="lp"))  # padding (5 - 1)·2 + 2 - 5 = 5
    assert literal.shape == (1, 1, 5)
    assert outcome(case, literal) == AMBIGUOUS
    later = example("LpPool", 11, x, {"kernel_shape": [2], "strides": [2], "auto_pad": "SAME_UPPER"})
    assert outcome(later, literal) == FAIL


# --- the global pools ---

@pytest.mark.parametrize("since", [1, 22])
def test_global_average_pool_averages_each_channel(since):
    x = small_ints((2, 3, 2, 4))
    case = example("GlobalAveragePool", since, x)
    assert outcome(case, as_output(loop_pool(x, [2, 4]))) == PASS
    across_channels = np.broadcast_to(x.mean(axis=(1, 2, 3), keepdims=True), (2, 3, 1, 1)).astype(np.float32)
    assert outcome(case, across_channels) == FAIL
    assert outcome(case, x.mean(axis=3, keepdims=True)[:, :, :1]) == FAIL


@pytest.mark.parametrize("since,p", [(1, 2.0), (2, 1), (2, 3), (22, 2)])
def test_global_lp_pool_over_every_spatial_axis(since, p):
    x = small_ints((1, 2, 3, 3))
    case = example("GlobalLpPool", since, x, {"p": p})
    assert outcome(case, as_output(loop_pool(x, [3, 3], kind="lp", p=p))) == PASS
    assert outcome(case, as_output(loop_pool(x[..., :2], [3, 2], kind="lp", p=p))) == FAIL


# --- invalid inputs ---

@pytest.mark.parametrize("op,since,shape,attributes,rule", [
    ("AveragePool", 22, (1, 2), {"kernel_shape": [1]}, "x-rank"),
    ("AveragePool", 22, (1, 1, 3), {}, "kernel-shape"),
    ("AveragePool", 22, (1, 1, 3), {"kernel_shape": [1, 1]}, "kernel-shape"),
    ("AveragePool", 22, (1, 1, 3), {"kernel_shape": [1], "strides": [0]}, "strides"),
    ("AveragePool", 22, (1, 1, 3), {"kernel_shape": [1], "strides": [1, 1]}, "strides"),
    ("AveragePool", 22, (1, 1, 3), {"kernel_shape": [1], "dilations": [0]}, "dilations"),
    ("AveragePool", 22, (1, 1, 3), {"kernel_shape": [1], "pads": [0, -1]}, "pads"),
    ("AveragePool", 22, (1, 1, 3), {"kernel_shape": [1], "pads": [0, 0, 0]}, "pads"),
    ("AveragePool", 22, (1, 1, 3), {"kernel_shape": [1], "pads": [1, 1], "auto_pad": "VALID"}, "pads-with-auto-pad"),
    ("AveragePool", 7, (1, 1, 1), {"kernel_shape": [3]}, "no-window"),
    ("LpPool", 18, (1, 1, 3), {"kernel_shape": [1], "p": 0}, "p-value"),
    ("LpPool", 1, (1, 1, 3), {"kernel_shape": [1], "p": -1.0}, "p-value"),
    ("LpPool", 2, (1, 1, 3), {"kernel_shape": [5]}, "no-window"),
    ("GlobalAveragePool", 1, (1, 2), {}, "x-rank"),
    ("GlobalLpPool", 2, (1, 1, 2), {"p": 0}, "p-value"),
])
def test_invalid_inputs_name_their_rule(op, since, shape, attributes, rule):
    found = for_op(op).expected(example(op, since, np.ones(shape, np.float32), attributes))
    assert not found.is_valid and found.invalid.rule == rule
    assert rule in for_op(op).all_rules


@pytest.mark.parametrize("op", ["AveragePool", "LpPool"])
def test_a_kernel_longer_than_the_input_by_less_than_a_stride_gives_an_empty_output(op):
    # floor((3 + 0 - 4) / 2 + 1) = floor(0.5) = 0 windows: an empty output, as MaxPool's; by 3, -1: invalid.
    x = np.ones((1, 2, 3), np.float32)
    found = for_op(op).expected(example(op, 22, x, {"kernel_shape": [4], "strides": [2]}))
    assert found.is_valid and found.may_reject
    assert found.readings[0].outputs[0].shape == (1, 2, 0)
    assert for_op("MaxPool").expected(example("MaxPool", 22, x, {"kernel_shape": [4], "strides": [2]})).is_valid
    longer = for_op(op).expected(example(op, 22, x, {"kernel_shape": [6], "strides": [2]}))
    assert not longer.is_valid and longer.invalid.rule == "no-window"
    zero_stride = example(op, 22, x, {"kernel_shape": [4], "strides": [0]})
    assert for_op(op).expected(zero_stride).invalid.rule == "strides"
    assert not for_op(op).traits["empty-output"](zero_stride)


def test_the_strategies_draw_every_op_and_some_invalid_cases():
    from conformance.strategies.common import Choices
    from conformance.strategies.pooling import STRATEGIES

    rng = np.random.default_rng(3)
    for op, draw in STRATEGIES.items():
        rules, valid = set(), 0
        for version in versions(op):
            for _ in range(30):
                case = draw(Choices(rng.bytes(256)), version, {"T": "float"})
                found = for_op(op).expected(case)
                if found.is_valid:
                    valid += 1
                else:
                    rules.add(found.invalid.rule)
        assert valid > 0 and rules, op


def test_exact_windows_over_a_power_of_two_are_judged_bitwise():
    x = np.array([[[1, 2, 3, 7, 5, 6]]], dtype=np.float32)
    by_four = example("AveragePool", 22, x, {"kernel_shape": [4]})
    right = as_output(loop_pool(x, [4]))
    assert right.ravel().tolist() == [3.25, 4.25, 5.25]
    one_ulp = right.copy()
    one_ulp[0, 0, 1] = np.nextafter(one_ulp[0, 0, 1], np.float32(10))
    assert outcome(by_four, right) == PASS and outcome(by_four, one_ulp) == FAIL
    # a count of 3: the quotient rounds (sum / 3, or sum · (1/3)): a few ULP allowed, no more
    by_three = example("AveragePool", 22, x, {"kernel_shape": [3]})
    right = as_output(loop_pool(x, [3]))
    near = right.copy()
    near[0, 0, 0] = np.nextafter(near[0, 0, 0], np.float32(10))
    far = right.copy()
    far[0, 0, 0] = far[0, 0, 0] * np.float32(1.001)
    assert outcome(by_three, near) == PASS and outcome(by_three, far) == FAIL
