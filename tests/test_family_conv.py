"""Conv, ConvInteger, QLinearConv and DeformConv (reference/conv.py) judged as a runtime's outputs
would be: expected values computed here with plain loops (and Fractions), not by the reference;
planted wrong implementations (pads on the wrong side, the group's channels swapped, the padding
of a quantized input read as 0, truncation instead of half to even, offsets read with the axis
outermost) fail; legal reorderings pass; the texts' invalid inputs are found."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import FAIL, PASS, judge
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(11)


def example(op: str, since: int, types: dict, inputs: dict, attributes: dict | None = None) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    return Example(version, "unit", types, inputs, attributes or {}, "unit", next(iter(types)))


def outcome(case: Example, output) -> str:
    return judge(for_op(case.op).expected(case), RunOutput(outputs=(np.asarray(output),))).outcome


def loop_conv(x, w, pads, strides, dilations, group, fill=0.0, shift=0):
    """A 1-D convolution by loops: x [N, C, L], w [M, C/group, K]; `fill` what the padding holds."""
    n, c, length = x.shape
    m, cg, k = w.shape
    padded = np.concatenate([np.full((n, c, pads[0]), fill, dtype=object), x.astype(object),
                             np.full((n, c, pads[1]), fill, dtype=object)], axis=2)
    out = (length + pads[0] + pads[1] - dilations * (k - 1) - 1) // strides + 1
    y = np.zeros((n, m, out), dtype=object)
    for b, o, i in itertools.product(range(n), range(m), range(out)):
        g = o // (m // group)
        y[b, o, i] = sum((padded[b, g * cg + ci, i * strides + t * dilations] - shift) * w[o, ci, t]
                         for ci in range(cg) for t in range(k))
    return y


@pytest.mark.parametrize("since", [1, 11, 22])
def test_conv_matches_loops_and_tells_misplaced_pads(since):
    x = RNG.integers(-4, 5, size=(2, 4, 6)).astype(np.float32)
    w = RNG.integers(-3, 4, size=(4, 2, 3)).astype(np.float32)
    attributes = {"pads": [2, 1], "strides": [2], "dilations": [2], "group": 2}
    case = example("Conv", since, {"T": "float"}, {"X": x, "W": w}, attributes)
    right = loop_conv(x, w, (2, 1), 2, 2, 2).astype(np.float32)
    assert outcome(case, right) == PASS
    swapped = loop_conv(x, w, (1, 2), 2, 2, 2).astype(np.float32)
    assert outcome(case, swapped) == FAIL
    other_group = loop_conv(x[:, ::-1].copy(), w, (2, 1), 2, 2, 2).astype(np.float32)
    assert outcome(case, other_group) == FAIL


def test_conv_same_lower_puts_the_odd_pad_first():
    x = np.array([[[1, 2, 3, 4]]], dtype=np.float32)
    w = np.array([[[1, 1]]], dtype=np.float32)
    case = example("Conv", 11, {"T": "float"}, {"X": x, "W": w}, {"auto_pad": "SAME_LOWER"})
    assert outcome(case, loop_conv(x, w, (1, 0), 1, 1, 1).astype(np.float32)) == PASS
    assert outcome(case, loop_conv(x, w, (0, 1), 1, 1, 1).astype(np.float32)) == FAIL


def test_conv_float_reorderings_pass_and_a_dropped_term_fails():
    x = RNG.standard_normal((1, 8, 5)).astype(np.float32)
    w = RNG.standard_normal((2, 8, 3)).astype(np.float32)
    b = RNG.standard_normal(2).astype(np.float32)
    case = example("Conv", 22, {"T": "float"}, {"X": x, "W": w, "B": b}, {"pads": [1, 1]})
    exact = loop_conv(x.astype(np.float64), w.astype(np.float64), (1, 1), 1, 1, 1).astype(np.float64) + b[None, :, None]
    assert outcome(case, exact.astype(np.float32)) == PASS
    # float32 accumulation, taps in reverse order
    reversed_sum = np.zeros(exact.shape, dtype=np.float32)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    for o, i in itertools.product(range(2), range(5)):
        total = np.float32(b[o])
        for ci, t in reversed(list(itertools.product(range(8), range(3)))):
            total = np.float32(total + np.float32(padded[0, ci, i + t] * w[o, ci, t]))
        reversed_sum[0, o, i] = total
    assert outcome(case, reversed_sum) == PASS
    assert outcome(case, (exact - x[0, 7, 0] * w[0, 7, 1] * (np.arange(5) == 0)).astype(np.float32)) == FAIL


@pytest.mark.parametrize("op,inputs,attributes,rule", [
    ("Conv", {"X": np.ones((1, 3, 2), np.float32), "W": np.ones((2, 1, 1), np.float32)}, {"group": 2}, "channels-group"),
    ("Conv", {"X": np.ones((1, 2, 2), np.float32), "W": np.ones((3, 1, 1), np.float32)}, {"group": 2}, "feature-maps-group"),
    ("Conv", {"X": np.ones((1, 1, 1), np.float32), "W": np.ones((1, 1, 3), np.float32)}, {}, "no-window"),
    ("Conv", {"X": np.ones((1, 1, 3), np.float32), "W": np.ones((1, 1, 2), np.float32)}, {"kernel_shape": [3]}, "kernel-shape"),
    ("Conv", {"X": np.ones((1, 1, 3), np.float32), "W": np.ones((1, 1, 2), np.float32), "B": np.ones(2, np.float32)}, {}, "bias-shape"),
])
def test_invalid_inputs_name_their_rule(op, inputs, attributes, rule):
    found = for_op(op).expected(example(op, 11, {"T": "float"}, inputs, attributes))
    assert not found.is_valid and found.invalid.rule == rule


def integer_case(x, w, x_zp=None, w_zp=None, attributes=None):
    inputs = {"x": x, "w": w}
    if x_zp is not None or w_zp is not None:
        inputs["x_zero_point"] = x_zp
    if w_zp is not None:
        inputs["w_zero_point"] = w_zp
    return example("ConvInteger", 10, {"T1": "uint8", "T2": "uint8", "T3": "int32"}, inputs, attributes)


def test_conv_integer_per_channel_zero_points_exact():
    x = RNG.integers(0, 256, size=(1, 2, 5)).astype(np.uint8)
    w = RNG.integers(0, 256, size=(3, 2, 2)).astype(np.uint8)
    w_zp = np.array([1, 128, 255], dtype=np.uint8)
    case = integer_case(x, w, np.array(7, np.uint8), w_zp, {"strides": [2]})
    shifted_w = w.astype(np.int64) - w_zp.astype(np.int64)[:, None, None]
    right = loop_conv(x.astype(np.int64), shifted_w, (0, 0), 2, 1, 1, shift=7).astype(np.int32)
    assert outcome(case, right) == PASS
    wrong = right.copy()
    wrong[0, 1, 0] += 1
    assert outcome(case, wrong) == FAIL


def test_conv_integer_padding_readings():
    x, w = np.array([[[5, 6]]], np.uint8), np.array([[[1, 1]]], np.uint8)
    case = integer_case(x, w, np.array(5, np.uint8), None, {"pads": [1, 0]})
    real_zero = loop_conv(x.astype(np.int64), w.astype(np.int64), (1, 0), 1, 1, 1, fill=5, shift=5)
    quantized_zero = loop_conv(x.astype(np.int64), w.astype(np.int64), (1, 0), 1, 1, 1, fill=0, shift=5)
    assert list(real_zero.ravel()) == [0, 1] and list(quantized_zero.ravel()) == [-5, 1]
    found = for_op("ConvInteger").expected(case)
    assert found.ambiguity is not None and len(found.readings) == 2
    for values in (real_zero, quantized_zero):
        assert outcome(case, values.astype(np.int32)) != FAIL
    assert outcome(case, np.array([[[-4, 1]]], np.int32)) == FAIL


def qlinear(x, w, x_scale, w_scale, y_scale, y_zp=0, bias=None, attributes=None):
    inputs = {"x": x, "x_scale": np.asarray(x_scale, np.float32), "x_zero_point": np.array(0, x.dtype), "w": w,
              "w_scale": np.asarray(w_scale, np.float32), "w_zero_point": np.zeros(np.shape(w_scale), w.dtype),
              "y_scale": np.asarray(y_scale, np.float32), "y_zero_point": np.array(y_zp, np.int8)}
    types = {"T1": "int8", "T2": "int8", "T3": "int8"}
    if bias is not None:
        inputs["B"] = np.asarray(bias, np.int32)
        types["T4"] = "int32"
    return example("QLinearConv", 10, types, inputs, attributes)


def test_q_linear_conv_rounds_half_to_even_with_bias():
    x = np.array([[[1, 3, 5, -1, -3]]], np.int8)
    w = np.array([[[1]], [[2]]], np.int8)
    case = qlinear(x, w, 0.5, [1.0, 0.5], 1.0, bias=[0, 1])
    # S·0.5·w_scale: channel 0: 0.5, 1.5, 2.5, -0.5, -1.5; channel 1: (2s + 1)·0.25
    from fractions import Fraction
    def q(v):
        return round(Fraction(v))  # Python's round: half to even
    channel0 = [q(Fraction(s, 2)) for s in (1, 3, 5, -1, -3)]
    channel1 = [q(Fraction(2 * s + 1, 4)) for s in (1, 3, 5, -1, -3)]
    right = np.array([[channel0, channel1]], np.int8)
    assert outcome(case, right) == PASS
    truncated = np.array([[[int(Fraction(s, 2)) for s in (1, 3, 5, -1, -3)], channel1]], np.int8)
    assert outcome(case, truncated) == FAIL


def bilinear(image, h, w):
    """One sample of a 2-D image at (h, w), neighbours outside the image reading 0."""
    total = 0.0
    h0, w0 = int(np.floor(h)), int(np.floor(w))
    for dh, dw in itertools.product((0, 1), repeat=2):
        i, j = h0 + dh, w0 + dw
        weight = (h - h0 if dh else 1 - (h - h0)) * (w - w0 if dw else 1 - (w - w0))
        if 0 <= i < image.shape[0] and 0 <= j < image.shape[1]:
            total += weight * float(image[i, j])
    return total


def test_deform_conv_matches_loops_and_tells_the_offset_layout():
    x = RNG.integers(-4, 5, size=(1, 2, 4, 4)).astype(np.float32)
    w = RNG.integers(-2, 3, size=(1, 2, 2, 2)).astype(np.float32)
    offset = (RNG.integers(-4, 5, size=(1, 8, 3, 3)) * 0.25).astype(np.float32)
    case = example("DeformConv", 19, {"T": "float"}, {"X": x, "W": w, "offset": offset})
    per_tap = offset.reshape(1, 1, 2, 2, 2, 3, 3)  # (N, offset_group, kh, kw, axis, oh, ow)

    def run(layout):
        y = np.zeros((1, 1, 3, 3))
        for i, j, c, a, b in itertools.product(range(3), range(3), range(2), range(2), range(2)):
            dh, dw = layout(a, b, i, j)
            y[0, 0, i, j] += w[0, c, a, b] * bilinear(x[0, c], i + a + dh, j + b + dw)
        return y.astype(np.float32)

    right = run(lambda a, b, i, j: (per_tap[0, 0, a, b, 0, i, j], per_tap[0, 0, a, b, 1, i, j]))
    assert outcome(case, right) != FAIL  # ambiguous where a location lies just outside an unpadded side
    axis_outer = offset.reshape(1, 1, 2, 2, 2, 3, 3)  # read as (axis, kh, kw): a planted wrong layout
    wrong = run(lambda a, b, i, j: (axis_outer[0, 0, 0, a, b, i, j], axis_outer[0, 0, 1, a, b, i, j]))
    if not np.array_equal(wrong, right):
        assert outcome(case, wrong) == FAIL


def test_deform_conv_outside_location_has_both_readings():
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    offset = np.zeros((1, 2, 2, 2), np.float32)
    offset[0, 0] = -0.5
    case = example("DeformConv", 19, {"T": "float"}, {"X": x, "W": np.ones((1, 1, 1, 1), np.float32), "offset": offset})
    spread = np.array([[[[0.5, 1], [2, 3]]]], np.float32)
    whole = np.array([[[[0, 0], [2, 3]]]], np.float32)
    assert outcome(case, spread) != FAIL and outcome(case, whole) != FAIL
    assert outcome(case, np.array([[[[1, 2], [2, 3]]]], np.float32)) == FAIL


# --- Conv-1's SAME, non-finite values beside padding and dilation, attributes out of range ---

def test_conv1_same_strided_allows_the_worded_output_as_long_as_the_input():
    x = np.array([[[1, 2, 3, 4]]], dtype=np.float32)
    w = np.array([[[1, 1]]], dtype=np.float32)
    attributes = {"auto_pad": "SAME_UPPER", "strides": [2]}
    worded = loop_conv(x, w, (2, 2), 2, 1, 1).astype(np.float32)  # (4 − 1)·2 + 2 − 4 = 4 pads: 4 windows
    ceil = loop_conv(x, w, (0, 0), 2, 1, 1).astype(np.float32)  # ceil(4 / 2) = 2 windows, no pad needed
    assert worded.shape == (1, 1, 4) and ceil.shape == (1, 1, 2)
    old = example("Conv", 1, {"T": "float"}, {"X": x, "W": w}, attributes)
    assert outcome(old, worded) != FAIL and outcome(old, ceil) != FAIL
    assert outcome(old, loop_conv(x, w, (1, 3), 2, 1, 1).astype(np.float32)) == FAIL  # the odd split on the other side
    new = example("Conv", 11, {"T": "float"}, {"X": x, "W": w}, attributes)
    assert outcome(new, ceil) == PASS and outcome(new, worded) == FAIL


def test_conv1_same_with_stride_one_is_one_reading():
    x = np.array([[[1, 2, 3]]], dtype=np.float32)
    w = np.array([[[1, 10]]], dtype=np.float32)
    found = for_op("Conv").expected(example("Conv", 1, {"T": "float"}, {"X": x, "W": w}, {"auto_pad": "SAME_LOWER"}))
    assert len(found.readings) == 1
    assert outcome(example("Conv", 1, {"T": "float"}, {"X": x, "W": w}, {"auto_pad": "SAME_LOWER"}),
                   loop_conv(x, w, (1, 0), 1, 1, 1).astype(np.float32)) == PASS


def test_non_finite_values_between_dilated_taps_reach_no_output():
    x = np.array([[[1, np.nan, 2, np.inf, 3]]], dtype=np.float32)
    w = np.array([[[1, 10]]], dtype=np.float32)
    case = example("Conv", 22, {"T": "float"}, {"X": x, "W": w}, {"dilations": [2], "strides": [2]})
    assert outcome(case, np.array([[[1 + 20, 2 + 30]]], np.float32)) == PASS
    assert outcome(case, np.array([[[np.nan, np.nan]]], np.float32)) == FAIL  # W dilated with zeros: 0·inf


def test_non_finite_values_beside_the_padding():
    x = np.array([[[-np.inf, 2, 3, np.nan, np.inf]]], dtype=np.float32)
    w = np.array([[[1, 1]]], dtype=np.float32)
    case = example("Conv", 11, {"T": "float"}, {"X": x, "W": w}, {"pads": [1, 1]})
    assert outcome(case, np.array([[[-np.inf, -np.inf, 5, np.nan, np.nan, np.inf]]], np.float32)) == PASS
    assert outcome(case, np.array([[[np.nan, -np.inf, 5, np.nan, np.nan, np.nan]]], np.float32)) == FAIL


@pytest.mark.parametrize("attributes,rule", [
    ({"strides": [0]}, "strides"), ({"strides": [-1]}, "strides"), ({"strides": [1, 1]}, "strides"),
    ({"dilations": [0]}, "dilations"), ({"pads": [-1, 0]}, "pads"), ({"auto_pad": "SAME"}, "auto-pad"),
])
def test_attributes_out_of_range_are_invalid(attributes, rule):
    inputs = {"X": np.ones((1, 1, 3), np.float32), "W": np.ones((1, 1, 1), np.float32)}
    found = for_op("Conv").expected(example("Conv", 22, {"T": "float"}, inputs, attributes))
    assert not found.is_valid and found.invalid.rule == rule


def test_the_strategies_break_strides_dilations_and_pads():
    from conformance.strategies.common import Choices
    from conformance.strategies.conv import _broken_attribute

    rng = np.random.default_rng(7)
    rules = set()
    for _ in range(40):
        attributes = _broken_attribute(Choices(rng.bytes(64)), {"strides": [1, 2]}, 2)
        inputs = {"X": np.ones((1, 1, 4, 4), np.float32), "W": np.ones((1, 1, 1, 1), np.float32)}
        found = for_op("Conv").expected(example("Conv", 22, {"T": "float"}, inputs, attributes))
        assert not found.is_valid
        rules.add(found.invalid.rule)
    assert rules == {"strides", "dilations", "pads"}


def trilinear(volume, point):
    """One sample of a 3-D volume at `point`, neighbours outside reading 0."""
    base = [int(np.floor(p)) for p in point]
    total = 0.0
    for corner in itertools.product((0, 1), repeat=3):
        index = tuple(b + c for b, c in zip(base, corner))
        weight = np.prod([(p - b) if c else 1 - (p - b) for p, b, c in zip(point, base, corner)])
        if all(0 <= i < s for i, s in zip(index, volume.shape)):
            total += weight * float(volume[index])
    return total


def test_deform_conv_3d_matches_loops_and_tells_the_axis_order():
    x = RNG.integers(-4, 5, size=(1, 1, 3, 3, 3)).astype(np.float32)
    w = RNG.integers(-2, 3, size=(1, 1, 2, 1, 2)).astype(np.float32)
    out = (2, 3, 2)
    offset = (RNG.integers(-2, 3, size=(1, 4 * 3) + out) * 0.25).astype(np.float32)
    case = example("DeformConv", 19, {"T": "float"}, {"X": x, "W": w, "offset": offset})
    per_tap = offset.reshape(1, 2, 1, 2, 3, *out)  # (N, k1, k2, k3, axis, o1, o2, o3)

    def run(order):
        y = np.zeros((1, 1) + out)
        for o in itertools.product(*(range(s) for s in out)):
            for tap in itertools.product(range(2), range(1), range(2)):
                moved = [per_tap[(0,) + tap + (order[a],) + o] for a in range(3)]
                point = [o[a] + tap[a] + moved[a] for a in range(3)]
                y[(0, 0) + o] += w[(0, 0) + tap] * trilinear(x[0, 0], point)
        return y.astype(np.float32)

    right = run((0, 1, 2))
    assert outcome(case, right) != FAIL  # ambiguous where a location lies just outside the input
    reversed_axes = run((2, 1, 0))
    if not np.array_equal(reversed_axes, right):
        assert outcome(case, reversed_axes) == FAIL
