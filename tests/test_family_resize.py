"""Resize and Upsample (reference/resize.py) judged as a runtime's outputs would be: expected values
computed here with plain loops over Fractions, not by the reference; planted wrong implementations
(a wrong coordinate mode, nearest rounding or cubic coefficient, extrapolation ignored) fail; legal
evaluations (lerp form, underflowing products) pass; the texts' invalid inputs are found; the
traits that name onnxruntime's deviations hold where they should."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput


def example(op: str, since: int, types: dict, inputs: dict, attributes: dict | None = None) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    return Example(version, "unit", types, inputs, attributes or {}, "unit", next(iter(types)))


def resize(since: int, x, scales=None, sizes=None, roi=None, **attributes) -> Example:
    x = np.asarray(x, dtype=np.float32)
    inputs = {"X": x, "roi": None if roi is None else np.asarray(roi, dtype=np.float32),
              "scales": None if scales is None else np.asarray(scales, dtype=np.float32)}
    if sizes is not None:
        inputs["sizes"] = np.asarray(sizes, dtype=np.int64)
    types = {"T1": "float", "T2": "float"} if roi is not None else {"T1": "float"}
    return example("Resize", since, types, inputs, attributes)


def outcome(case: Example, output) -> str:
    return judge(for_op(case.op).expected(case), RunOutput(outputs=(np.asarray(output),))).outcome


def keys(t: Fraction, a: Fraction) -> Fraction:
    t = abs(t)
    if t <= 1:
        return (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1
    if t < 2:
        return a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a
    return Fraction(0)


def loop_resize_1d(values, out: int, mode: str, mapping, a=Fraction(-3, 4)) -> list[Fraction]:
    """One axis resized by loops: `mapping(x)` gives x_original; taps outside take the edge value."""
    n = len(values)
    at = lambda i: Fraction(values[min(max(i, 0), n - 1)])  # noqa: E731
    result = []
    for x in range(out):
        xo = mapping(x)
        base = math.floor(xo)
        r = xo - base
        if mode == "linear":
            result.append((1 - r) * at(base) + r * at(base + 1))
        else:
            result.append(sum(keys(r - k, a) * at(base + k) for k in (-1, 0, 1, 2)))
    return result


def as_row(values) -> np.ndarray:
    return np.array([[float(v) for v in values]], dtype=np.float32)


def test_linear_half_pixel_matches_a_loop_and_a_wrong_mapping_fails():
    data = [1, 2, 4, 8, 16]
    case = resize(13, [data], scales=[1, 2], mode="linear")
    half_pixel = loop_resize_1d(data, 10, "linear", lambda x: (x + Fraction(1, 2)) / 2 - Fraction(1, 2))
    asymmetric = loop_resize_1d(data, 10, "linear", lambda x: Fraction(x, 2))
    assert outcome(case, as_row(half_pixel)) == PASS
    assert outcome(case, as_row(asymmetric)) == FAIL


def test_cubic_matches_keys_kernel_and_the_wrong_coefficient_fails():
    data = [1, 3, 2, 7, 5]
    mapping = lambda x: (x + Fraction(1, 2)) / 2 - Fraction(1, 2)  # noqa: E731
    case = resize(13, [data], scales=[1, 2], mode="cubic")
    assert outcome(case, as_row(loop_resize_1d(data, 10, "cubic", mapping))) == PASS
    assert outcome(case, as_row(loop_resize_1d(data, 10, "cubic", mapping, Fraction(-1, 2)))) == FAIL


@pytest.mark.parametrize("mode, picks", [("round_prefer_floor", [0, 1, 1, 2, 3, 3]), ("floor", [0, 0, 1, 2, 2, 3]),
                                         ("ceil", [0, 1, 2, 2, 3, 3]), ("round_prefer_ceil", [0, 1, 1, 2, 3, 3])])
def test_nearest_modes_pick_by_their_rounding(mode, picks):
    data = [10, 20, 30, 40]
    # asymmetric, scale 1.5: x_original = 0, 2/3, 4/3, 2, 8/3, 10/3 (no tie: every mode told apart)
    case = resize(13, [data], scales=[1, 1.5], mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode=mode)
    expected = [data[min(p, 3)] for p in picks]
    assert outcome(case, as_row(expected)) == PASS
    other = [data[min(p, 3)] for p in ([0, 0, 1, 2, 2, 3] if mode != "floor" else [0, 1, 1, 2, 3, 3])]
    assert outcome(case, as_row(other)) == FAIL


def test_tf_crop_and_resize_extrapolates_outside_the_input():
    case = resize(13, [[1, 2, 3, 4, 5]], sizes=[1, 5], roi=[0, 0.5, 1, 1.5], mode="linear",
                  coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=10.0)
    # x_original = 0.5 * 4 + x * 1 * 4 / 4 = 2 + x: 2, 3, 4 inside; 5, 6 beyond length_original - 1 = 4
    assert outcome(case, as_row([3, 4, 5, 10, 10])) == PASS
    assert outcome(case, as_row([1, 2, 3, 4, 5])) == FAIL  # onnxruntime's copy, roi ignored
    assert for_op("Resize").traits["crop-kept-axis"](case)


def test_tf_crop_and_resize_shape_uses_the_roi():
    case = resize(13, [[1, 2, 3, 4, 5]], scales=[1, 2], roi=[0, 0, 1, 0.5], mode="linear",
                  coordinate_transformation_mode="tf_crop_and_resize")
    found = for_op("Resize").expected(case)
    assert found.readings[0].outputs[0].shape == (1, 5)  # floor(5 * 0.5 * 2)
    assert for_op("Resize").traits["crop-scales-shape"](case)


def test_lerp_form_and_underflowing_products_pass():
    a, b = np.float32(-1023.117), np.float32(3.1e-7)
    case = example("Upsample", 9, {"T": "float"}, {"X": np.array([a, b], dtype=np.float32),
                                                   "scales": np.array([2.0], dtype=np.float32)}, {"mode": "linear"})
    lerp = np.float32(a + np.float32(np.float32(0.5) * np.float32(b - a)))
    assert outcome(case, np.array([a, lerp, b, b], dtype=np.float32)) == PASS
    tiny = np.float32(-1.401298464324817e-45)
    case = resize(18, [[-3.0, -1.0, tiny]], sizes=[7], mode="linear", coordinate_transformation_mode="pytorch_half_pixel", axes=[-1])
    exact = for_op("Resize").expected(case).readings[0].outputs[0].astype(np.float32)
    underflowed = exact.copy()
    underflowed[0, -1] = -0.0
    assert outcome(case, underflowed) == PASS


def test_antialias_stretches_the_triangle_when_downscaling():
    case = resize(18, [[1, 2, 3, 4]], scales=[1, 0.5], mode="linear", antialias=1)
    # half_pixel: x_original 0.5 and 2.5; weights 1 - |i - x| / 2 normalised, taps beyond the edge clamped
    def at(xo):
        taps = [(i, 1 - abs(Fraction(i) - xo) / 2) for i in range(-2, 6) if abs(Fraction(i) - xo) < 2]
        total = sum(w for _, w in taps)
        return sum(w / total * (min(max(i, 0), 3) + 1) for i, w in taps)
    expected = [at(Fraction(1, 2)), at(Fraction(5, 2))]
    assert expected == [Fraction(13, 8), Fraction(27, 8)]
    assert outcome(case, as_row(expected)) == PASS
    assert outcome(case, as_row([1.5, 3.5])) == FAIL  # plain linear, no antialias


def test_keep_aspect_ratio_not_larger_sizes_the_output():
    case = resize(18, np.arange(8).reshape(2, 4), sizes=[4, 4], mode="nearest", keep_aspect_ratio_policy="not_larger")
    # scale = min(4/2, 4/4) = 1: the input's shape
    assert for_op("Resize").expected(case).readings[0].outputs[0].shape == (2, 4)


def test_an_extrapolation_value_outside_the_integer_type_is_any_value():
    case = example("Resize", 13, {"T1": "uint8", "T2": "float"},
                   {"X": np.array([5, 4, 4], dtype=np.uint8), "roi": np.array([-0.25, 0.75], dtype=np.float32),
                    "scales": np.array([2.0], dtype=np.float32)},
                   {"mode": "nearest", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": -2.5})
    # x_original = -0.25 * 2 + x * 2 / 5: -0.5, -0.1 outside; 0.3, 0.7, 1.1, 1.5 pick 0, 1, 1, 1
    for outside in (0, 254):
        assert outcome(case, np.array([outside, outside, 5, 4, 4, 4], dtype=np.uint8)) == PASS
    assert outcome(case, np.array([0, 0, 4, 4, 4, 4], dtype=np.uint8)) == FAIL


@pytest.mark.parametrize("case, rule", [
    (lambda: resize(13, [[1, 2]], scales=[1, 2], sizes=[1, 4]), "scales-and-sizes"),
    (lambda: resize(13, [[1, 2]], scales=[2]), "scales-length"),
    (lambda: resize(13, [[1, 2]], scales=[1, 0]), "scale-not-positive"),
    (lambda: resize(13, [[1, 2]], scales=[1, 2], coordinate_transformation_mode="tf_half_pixel_for_nn"), "unknown-coordinate-mode"),
    (lambda: resize(13, [[1, 2]], scales=[1, 2], coordinate_transformation_mode="tf_crop_and_resize"), "roi-missing"),
    (lambda: resize(18, [[1, 2]], scales=[2], axes=[2]), "axis-out-of-range"),
    (lambda: example("Upsample", 9, {"T": "float"}, {"X": np.ones((1, 2), np.float32),
                                                     "scales": np.array([1, 0.5], np.float32)}), "scale-below-one"),
])
def test_invalid_inputs_name_their_rule(case, rule):
    found = for_op(case().op).expected(case())
    assert found.invalid is not None and found.invalid.rule == rule


def test_interpolation_layout_trait():
    trait = for_op("Resize").traits["interpolation-layout"]
    assert trait(resize(13, [1, 2, 3], scales=[2], mode="linear"))
    assert not trait(resize(13, [[1, 2, 3]], scales=[1, 2], mode="linear"))
    assert trait(resize(13, np.ones((1, 2, 2, 2)), scales=[1, 2, 2, 2], mode="cubic"))
    assert not trait(resize(13, np.ones((1, 1, 2, 2)), scales=[1, 1, 2, 2], mode="cubic"))
    assert not trait(resize(13, [1, 2, 3], scales=[2], mode="nearest"))


def test_align_corners_with_a_scale_reads_length_resized_as_given_or_as_the_output():
    # ONNX's test_resize_downsample_scales_linear_align_corners: width 4 * 0.6 = 2.4 -> 2 outputs; x = 1 maps
    # to 1 * 3 / (2 - 1) = 3 (the text's length_resized) or 1 * 3 / (2.4 - 1) (the scale as given, ONNX's)
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 1, 2, 4)
    case = resize(13, x, scales=[1, 1, 0.6, 0.6], mode="linear", coordinate_transformation_mode="align_corners")
    given = 1 + Fraction(3) / Fraction(7, 5)  # x_original = 15/7 between 3 (index 2) and 4 (index 3)
    assert outcome(case, np.array([[[[1, 4]]]], dtype=np.float32)) == AMBIGUOUS
    assert outcome(case, np.array([[[[1, float(given)]]]], dtype=np.float32)) == AMBIGUOUS
    assert outcome(case, np.array([[[[1, 3]]]], dtype=np.float32)) == FAIL
