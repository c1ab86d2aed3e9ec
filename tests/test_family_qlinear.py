"""QLinearMatMul and DynamicQuantizeLinear (reference/q_linear_mat_mul.py, dynamic_quantize_linear.py)
judged as a runtime's outputs would be: the texts' examples pass; planted wrong implementations fail
(zero point ignored, y_scale multiplied instead of divided by, truncation instead of half to even,
b transposed, the range not adjusted to include 0); legal float arithmetics of the requantization
(combined multiplier in float32, step by step, fixed point, float64, the scales' float16) pass on
every drawn case; ties are told where every step is exact; the undefined corners have their
readings. Expected values are computed here with Fractions and plain loops, not by the reference."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from conformance.case import Example
from conformance.dtypes import from_numpy
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(5)
F32 = np.float32


def qlinear(since: int, inputs: dict, scale_type: str = "float") -> Example:
    version = next(v for v in versions("QLinearMatMul") if v.since_version == since)
    types = {"T1": from_numpy(inputs["a"].dtype).name, "T2": from_numpy(inputs["b"].dtype).name,
             "T3": from_numpy(inputs["y_zero_point"].dtype).name}
    if since >= 21:
        types["TS"] = scale_type
    return Example(version, "unit", types, inputs, {}, "unit", "T1")


def dynamic(x) -> Example:
    version = next(v for v in versions("DynamicQuantizeLinear") if v.since_version == 11)
    return Example(version, "unit", {"T1": "float", "T2": "uint8"}, {"x": np.asarray(x, dtype=F32)}, {}, "unit", "T1")


def outcome(case: Example, *outputs) -> str:
    return judge(for_op(case.op).expected(case), RunOutput(outputs=tuple(np.asarray(o) for o in outputs))).outcome


def inputs(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, kind=np.uint8, out=None, scale=F32) -> dict:
    out = kind if out is None else out
    return {"a": np.asarray(a, dtype=kind), "a_scale": np.asarray(a_scale, dtype=scale), "a_zero_point": np.asarray(a_zp, dtype=kind),
            "b": np.asarray(b, dtype=kind), "b_scale": np.asarray(b_scale, dtype=scale), "b_zero_point": np.asarray(b_zp, dtype=kind),
            "y_scale": np.asarray(y_scale, dtype=scale), "y_zero_point": np.asarray(y_zp, dtype=out)}


SPEC = inputs([[208, 236, 0, 238], [3, 214, 255, 29]], 0.0066, 113, [[152, 51, 244], [60, 26, 255], [0, 127, 246], [127, 254, 247]],
              0.00705, 114, 0.0107, 118)
SPEC_Y = np.array([[168, 115, 255], [1, 66, 151]], dtype=np.uint8)


# --- an independent QLinearMatMul: plain loops, with the arithmetic as a parameter ---

def dot(a, azp, b, bzp, i, j) -> int:
    return sum((int(a[i][k]) - int(azp)) * (int(b[k][j]) - int(bzp)) for k in range(len(b)))


def requantized(case: dict, arithmetic) -> np.ndarray:
    """2-D operands, per-tensor parameters: y[i][j] = clip(arithmetic(S, sa, sb, ys) + zp)."""
    a, b = case["a"].tolist(), case["b"].tolist()
    azp, bzp, zp = (int(case[n]) for n in ("a_zero_point", "b_zero_point", "y_zero_point"))
    sa, sb, ys = (case[n] for n in ("a_scale", "b_scale", "y_scale"))
    info = np.iinfo(case["y_zero_point"].dtype)
    out = [[min(max(arithmetic(dot(a, azp, b, bzp, i, j), sa, sb, ys) + zp, info.min), info.max) for j in range(len(b[0]))]
           for i in range(len(a))]
    return np.array(out, dtype=case["y_zero_point"].dtype)


def exact_half_even(s, sa, sb, ys) -> int:
    return round(Fraction(s) * Fraction(float(sa)) * Fraction(float(sb)) / Fraction(float(ys)))


def float32_combined(s, sa, sb, ys) -> int:
    multiplier = F32(F32(sa) * F32(sb)) / F32(ys)
    return int(np.rint(F32(s) * F32(multiplier)))


def float32_steps(s, sa, sb, ys) -> int:
    return int(np.rint(((F32(s) * F32(sa)) * F32(sb)) / F32(ys)))


def float64_then_rounded(s, sa, sb, ys) -> int:
    return int(np.rint(np.float64(s) * np.float64(sa) * np.float64(sb) / np.float64(ys)))


def fixed_point(s, sa, sb, ys) -> int:
    """gemmlowp's: the multiplier as a Q31 integer and a shift, the product rounded to nearest."""
    multiplier = float(sa) * float(sb) / float(ys)
    shift = 0
    while multiplier < 0.5:
        multiplier, shift = multiplier * 2, shift + 1
    while multiplier >= 1:
        multiplier, shift = multiplier / 2, shift - 1
    q31 = round(multiplier * 2 ** 31)
    total = s * q31
    denominator = 2 ** (31 + shift)
    return int(Fraction(total, denominator).__round__())


def truncated(s, sa, sb, ys) -> int:
    return int(Fraction(s) * Fraction(float(sa)) * Fraction(float(sb)) / Fraction(float(ys)))


def multiplied_by_y_scale(s, sa, sb, ys) -> int:
    return round(Fraction(s) * Fraction(float(sa)) * Fraction(float(sb)) * Fraction(float(ys)))


def y_scale_ignored(s, sa, sb, ys) -> int:
    return round(Fraction(s) * Fraction(float(sa)) * Fraction(float(sb)))


def half_away(s, sa, sb, ys) -> int:
    value = Fraction(s) * Fraction(float(sa)) * Fraction(float(sb)) / Fraction(float(ys))
    return int(value + Fraction(1, 2)) if value >= 0 else -int(-value + Fraction(1, 2))


def test_spec_example_passes_in_every_version():
    assert np.array_equal(requantized(SPEC, exact_half_even), SPEC_Y)  # the onnx example, by the loop here
    for since in (10, 21):
        assert outcome(qlinear(since, SPEC), SPEC_Y) == PASS


def random_case(rng: np.random.Generator, kind=np.uint8, out=np.uint8) -> dict:
    m, k, n = (int(v) for v in rng.integers(1, 6, size=3))
    info = np.iinfo(kind)
    a = rng.integers(info.min, info.max, size=(m, k), endpoint=True)
    b = rng.integers(info.min, info.max, size=(k, n), endpoint=True)
    sa, sb = (F32(v) for v in rng.uniform(0.001, 0.05, size=2))
    azp, bzp = (int(v) for v in rng.integers(info.min, info.max, size=2, endpoint=True))
    typical = float(sa) * float(sb) * 128 * 128 * max(1.0, k ** 0.5)
    return inputs(a, sa, azp, b, sb, bzp, F32(typical / 100 * rng.uniform(0.5, 2)), int(rng.integers(0, 100)), kind, out)


@pytest.mark.parametrize("arithmetic", [exact_half_even, float32_combined, float32_steps, float64_then_rounded, fixed_point],
                         ids=["exact", "float32_multiplier", "float32_steps", "float64", "fixed_point"])
def test_legal_requantization_arithmetics_pass(arithmetic):
    rng = np.random.default_rng(17)
    for _ in range(150):
        case = random_case(rng, *(((np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8))[int(rng.integers(0, 3))]))
        for since in (10, 21):
            assert outcome(qlinear(since, case), requantized(case, arithmetic)) == PASS, case


@pytest.mark.parametrize("wrong", [truncated, multiplied_by_y_scale, y_scale_ignored],
                         ids=["truncated", "y_scale_multiplied", "y_scale_ignored"])
def test_planted_requantization_bugs_fail(wrong):
    rng = np.random.default_rng(3)
    differing = 0
    for _ in range(20):
        case = random_case(rng)
        if not np.array_equal(requantized(case, wrong), requantized(case, exact_half_even)):
            differing += 1
            assert outcome(qlinear(10, case), requantized(case, wrong)) == FAIL
    assert differing >= 15  # the draws tell the bug, not only allow it


def test_zero_point_ignored_fails():
    ignored = dict(SPEC, a_zero_point=np.array(0, np.uint8), b_zero_point=np.array(0, np.uint8))
    assert outcome(qlinear(10, SPEC), requantized(ignored, exact_half_even)) == FAIL
    y_ignored = dict(SPEC, y_zero_point=np.array(0, np.uint8))
    assert outcome(qlinear(10, SPEC), requantized(y_ignored, exact_half_even)) == FAIL


def test_transposed_b_fails():
    case = inputs([[1, 2], [3, 4]], 1.0, 0, [[1, 2], [3, 4]], 1.0, 0, 1.0, 0, np.int8)
    assert outcome(qlinear(10, case), np.array([[7, 10], [15, 22]], np.int8)) == PASS
    assert outcome(qlinear(10, case), np.array([[5, 11], [11, 25]], np.int8)) == FAIL  # a @ b.T


def test_exact_ties_round_half_to_even_where_every_step_is_exact():
    # S = 1, 3, 5, -1, -3, -5 times 0.5: exactly halfway; powers of two make every arithmetic exact.
    case = inputs([[1], [3], [5], [-1], [-3], [-5]], 0.5, 0, [[1]], 1.0, 0, 1.0, 0, np.int8)
    assert outcome(qlinear(10, case), np.array([[0], [2], [2], [0], [-2], [-2]], np.int8)) == PASS
    assert outcome(qlinear(10, case), requantized(case, half_away)) == FAIL
    assert outcome(qlinear(10, case), requantized(case, truncated)) == FAIL


def test_near_a_boundary_both_neighbours_are_allowed_and_no_third():
    # S·m = 2.5 in real arithmetic with a multiplier that no float holds: both 2 and 3 pass, 1 and 4 fail.
    sa, sb, ys = F32(0.1), F32(0.1), F32(0.1)
    s_real = Fraction(5, 2) / (Fraction(float(sa)) * Fraction(float(sb)) / Fraction(float(ys)))
    assert s_real != int(s_real)  # no integer S gives an exact tie: probe the values next to it
    m = Fraction(float(sa)) * Fraction(float(sb)) / Fraction(float(ys))
    s = 25  # 25 · 0.1-ish ≈ 2.5000000x
    real = s * m
    assert abs(real - Fraction(5, 2)) < Fraction(1, 10 ** 6)
    case = inputs([[s]], sa, 0, [[1]], sb, 0, ys, 0, np.int8)
    assert outcome(qlinear(10, case), np.array([[2]], np.int8)) == PASS
    assert outcome(qlinear(10, case), np.array([[3]], np.int8)) == PASS
    assert outcome(qlinear(10, case), np.array([[1]], np.int8)) == FAIL
    assert outcome(qlinear(10, case), np.array([[4]], np.int8)) == FAIL


def test_saturation_to_the_output_type():
    case = inputs([[150], [10], [0]], 1.0, 0, [[2]], 1.0, 0, 1.0, 0, np.uint8)
    assert outcome(qlinear(10, case), np.array([[255], [20], [0]], np.uint8)) == PASS
    assert outcome(qlinear(10, case), np.array([[44], [20], [0]], np.uint8)) == FAIL  # 300 wrapped


def test_per_row_and_per_column_scales_and_zero_points():
    case = inputs([[3, 1], [5, 3]], [1.0, 0.5], [1, 1], [[2, 5], [3, 6]], [1.0, 0.25], [1, 2], 1.0, 0, np.int8)
    expected = [[0, 0], [0, 0]]
    rows, cols = [1.0, 0.5], [1.0, 0.25]
    for i in range(2):
        for j in range(2):
            s = sum((case["a"][i][k] - 1) * (case["b"][k][j] - [1, 2][j]) for k in range(2))
            expected[i][j] = round(Fraction(int(s)) * Fraction(rows[i]) * Fraction(cols[j]))
    assert outcome(qlinear(10, case), np.array(expected, np.int8)) == PASS
    swapped = np.array(expected, np.int8).T.copy()
    assert not np.array_equal(swapped, np.array(expected, np.int8))
    assert outcome(qlinear(10, case), swapped) == FAIL


def test_float16_scales_allow_a_multiplier_in_float16():
    rng = np.random.default_rng(29)
    for _ in range(60):
        case = random_case(rng)
        for name in ("a_scale", "b_scale", "y_scale"):
            case[name] = case[name].astype(np.float16)

        def in_float16(s, sa, sb, ys):
            multiplier = np.float16(np.float16(sa) * np.float16(sb)) / np.float16(ys)
            return int(np.rint(F32(s) * F32(multiplier)))
        assert outcome(qlinear(21, case, "float16"), requantized(case, in_float16)) == PASS


def test_int32_accumulation_overflow_has_wrapped_and_saturated_readings():
    k = 33100  # 33100 · 65025 > 2^31 - 1
    case = inputs(np.zeros((1, k)), 1.0, 255, np.zeros((k, 1)), 1.0, 255, 2.0 ** 24, 0)
    total = k * 65025
    wrapped = (total + 2 ** 31) % 2 ** 32 - 2 ** 31
    found = for_op("QLinearMatMul").expected(qlinear(10, case))
    assert len(found.readings) == 2
    for value in (wrapped, 2 ** 31 - 1):
        y = min(max(round(Fraction(value, 2 ** 24)), 0), 255)
        assert outcome(qlinear(10, case), np.array([[y]], np.uint8)) == AMBIGUOUS  # one of the text's readings
    assert outcome(qlinear(10, case), np.array([[min(round(Fraction(total, 2 ** 24)), 255) - 1]], np.uint8)) == FAIL


def test_float8_operands_and_output_in_version_21():
    import ml_dtypes

    f8 = ml_dtypes.float8_e4m3fn
    case = {"a": np.array([[1.5, 0.25]], f8), "a_scale": np.array(1.0, F32), "a_zero_point": np.array(0.5, f8),
            "b": np.array([[2.0], [4.0]], f8), "b_scale": np.array(1.0, F32), "b_zero_point": np.array(0.0, f8),
            "y_scale": np.array(1.0, F32), "y_zero_point": np.array(0.5, f8)}
    # (1.5 - 0.5)·2 + (0.25 - 0.5)·4 = 1, plus 0.5
    assert outcome(qlinear(21, case), np.array([[1.5]], f8)) == PASS
    assert outcome(qlinear(21, case), np.array([[1.0]], f8)) == FAIL


@pytest.mark.parametrize("changed, rule", [
    ({"a_zero_point": np.array([0, 0], np.int8)}, "scale-zero-point-shape"),
    ({"a_scale": np.array([1.0, 1.0, 1.0], F32), "a_zero_point": np.array([0, 0, 0], np.int8)}, "scale-shape"),
    ({"y_scale": np.array([1.0, 1.0], F32), "y_zero_point": np.array([0, 0], np.int8)}, "y-scale-shape"),
    ({"a": np.zeros((2, 3), np.int8)}, "inner-dims-mismatch"),
])
def test_shapes_the_text_forbids_are_invalid(changed, rule):
    case = dict(inputs([[1, 2], [3, 4]], 1.0, 0, [[1], [1]], 1.0, 0, 1.0, 0, np.int8), **changed)
    found = for_op("QLinearMatMul").expected(qlinear(10, case))
    assert found.invalid is not None and found.invalid.rule == rule


def test_empty_sum_is_the_zero_point():
    case = inputs(np.zeros((2, 0)), 1.0, 0, np.zeros((0, 2)), 1.0, 0, 1.0, 7)
    assert outcome(qlinear(10, case), np.full((2, 2), 7, np.uint8)) == PASS
    assert outcome(qlinear(10, case), np.full((2, 2), 255, np.uint8)) == FAIL


# --- DynamicQuantizeLinear ---

def dynamic_by_loop(x, scale_of=None, adjust=True, rounding=round):
    """The text's formulas with Fractions and float32 for the scale, element by element."""
    values = [float(v) for v in np.asarray(x, F32).reshape(-1)]
    low = min([0.0] + values) if adjust else min(values)
    high = max([0.0] + values) if adjust else max(values)
    scale = F32(F32(high) - F32(low)) / F32(255) if scale_of is None else scale_of(high, low)
    s = Fraction(float(scale))
    zp = min(max(rounding(-Fraction(low) / s), 0), 255)
    y = [min(max(rounding(Fraction(v) / s) + zp, 0), 255) for v in values]
    return np.array(y, np.uint8).reshape(np.shape(x)), np.array(scale, F32), np.array(zp, np.uint8)


DYNAMIC_EXAMPLES = [
    ([0, 2, -3, -2.5, 1.34, 0.5], [153, 255, 0, 26, 221, 179], 153),
    ([-1.0, -2.1, -1.3, -2.5, -3.34, -4.0], [191, 121, 172, 96, 42, 0], 255),
    ([1, 2.1, 1.3, 2.5, 3.34, 4.0, 1.5, 2.6, 3.9, 4.0, 3.0, 2.345], [64, 134, 83, 159, 213, 255, 96, 166, 249, 255, 191, 149], 0),
]


@pytest.mark.parametrize("x, y, zp", DYNAMIC_EXAMPLES, ids=["mixed", "negative", "positive"])
def test_dynamic_spec_examples_pass(x, y, zp):
    low, high = min([0.0] + x), max([0.0] + x)
    scale = F32(F32(high) - F32(low)) / F32(255)
    assert outcome(dynamic(x), np.array(y, np.uint8), np.array(scale, F32), np.array(zp, np.uint8)) == PASS


def test_dynamic_loop_and_float_arithmetic_pass_on_random_x():
    rng = np.random.default_rng(41)
    for _ in range(200):
        x = (rng.standard_normal(int(rng.integers(1, 40))) * 10 ** rng.uniform(-3, 3)).astype(F32)
        if rng.random() < 0.3:
            x = np.abs(x) * (1 if rng.random() < 0.5 else -1)
        assert outcome(dynamic(x), *dynamic_by_loop(x)) == PASS
        # the same in float32 all along: the zero point and the quotients each one float32 division
        low, high = min(0.0, float(x.min())), max(0.0, float(x.max()))
        scale = F32(F32(high) - F32(low)) / F32(255)
        zp = np.uint8(np.clip(np.rint(F32(0) - F32(low) / scale), 0, 255))
        y = np.clip(np.rint(x / scale) + int(zp), 0, 255).astype(np.uint8)
        assert outcome(dynamic(x), y, np.array(scale, F32), np.array(zp, np.uint8)) == PASS


def test_dynamic_planted_bugs_fail():
    x = [0.3, 2.0, -3.0, 1.1]
    assert outcome(dynamic(x), *dynamic_by_loop(x)) == PASS
    truncated = dynamic_by_loop(x, rounding=lambda v: int(v))
    assert outcome(dynamic(x), *truncated) == FAIL
    by_256 = dynamic_by_loop(x, scale_of=lambda high, low: F32((high - low) / 256))
    assert outcome(dynamic(x), *by_256) == FAIL
    positive = [1.0, 2.0, 4.0]
    unadjusted = dynamic_by_loop(positive, adjust=False)  # the range not widened to include 0
    assert outcome(dynamic(positive), *unadjusted) == FAIL


def test_dynamic_ties_to_even():
    x = [0, 2.5, 3.5, 4.5, 255]  # a range of 255: y_scale exactly 1
    assert outcome(dynamic(x), np.array([0, 2, 4, 4, 255], np.uint8), np.array(1.0, F32), np.array(0, np.uint8)) == PASS
    assert outcome(dynamic(x), np.array([0, 3, 4, 5, 255], np.uint8), np.array(1.0, F32), np.array(0, np.uint8)) == FAIL


def test_dynamic_all_zero_x_has_scale_zero_and_any_zero_point():
    zero = np.zeros(3, F32)
    for zp in (0, 17):
        assert outcome(dynamic(zero), np.full(3, zp, np.uint8), np.array(0.0, F32), np.array(zp, np.uint8)) == PASS
    # y_scale = 0 / 255 = 0 by the text: onnxruntime's 1 is told
    assert outcome(dynamic(zero), np.zeros(3, np.uint8), np.array(1.0, F32), np.array(0, np.uint8)) == FAIL


def test_dynamic_nan_has_both_readings():
    x = [np.nan, 1.0, -1.0]
    skipped = dynamic_by_loop([1.0, -1.0])
    y = np.concatenate([[7], skipped[0]]).astype(np.uint8)
    assert outcome(dynamic(x), y, skipped[1], skipped[2]) != FAIL
    assert outcome(dynamic(x), np.zeros(3, np.uint8), np.array(np.nan, F32), np.array(3, np.uint8)) != FAIL
    assert outcome(dynamic(x), y, np.array(0.5, F32), skipped[2]) == FAIL


def test_dynamic_empty_and_size_one():
    assert outcome(dynamic(np.zeros(0)), np.zeros(0, np.uint8), np.array(1.0, F32), np.array(0, np.uint8)) == PASS
    assert outcome(dynamic([5.0]), np.array([255], np.uint8), np.array(F32(5) / F32(255), F32), np.array(0, np.uint8)) == PASS
    assert outcome(dynamic([-5.0]), np.array([0], np.uint8), np.array(F32(5) / F32(255), F32), np.array(255, np.uint8)) == PASS


def test_dynamic_infinity_follows_the_body_arithmetic():
    x = [np.inf, 1.0, -1.0]
    assert outcome(dynamic(x), np.array([9, 0, 0], np.uint8), np.array(np.inf, F32), np.array(0, np.uint8)) == PASS
    assert outcome(dynamic(x), np.array([9, 1, 0], np.uint8), np.array(np.inf, F32), np.array(0, np.uint8)) == FAIL
