"""GridSample, AffineGrid, RoiAlign, MaxRoiPool and NonMaxSuppression's semantics
(reference/grid_sample.py, roi.py, non_max_suppression.py), judged as a runtime's outputs would be:
values computed here by plain loops from the text's formulas, planted bugs failing."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.reference import for_op
from conformance.reference.non_max_suppression import NonMaxSuppression10
from conformance.registry import versions
from conformance.runners.base import RunOutput


def example(op: str, since: int, inputs: dict, types: dict, **attributes) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    return Example(version, "unit", types, inputs, attributes, "unit", next(iter(types)))


def outcome(found: Example, output) -> str:
    """The verdict on `output` (a list is taken as float32, the tests' type)."""
    array = output if isinstance(output, np.ndarray) else np.asarray(output, dtype=np.float32)
    return judge(for_op(found.op).expected(found), RunOutput(outputs=(array,))).outcome


def bilinear_loop(x: np.ndarray, gx: float, gy: float) -> float:
    """align_corners=0, zeros padding, by hand."""
    h, w = x.shape
    px, py = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
    x0, y0 = int(np.floor(px)), int(np.floor(py))
    total = 0.0
    for yy, wy in ((y0, 1 - (py - y0)), (y0 + 1, py - y0)):
        for xx, wx in ((x0, 1 - (px - x0)), (x0 + 1, px - x0)):
            if 0 <= yy < h and 0 <= xx < w:
                total += wy * wx * x[yy, xx]
    return total


def test_grid_sample_linear_matches_a_plain_loop_and_a_half_pixel_shift_fails():
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    grid = np.array([[[[0.25, -0.5], [-0.875, 0.75], [1.125, 0.0]]]], dtype=np.float32)
    found = example("GridSample", 20, {"X": x, "grid": grid}, {"T1": "float", "T2": "float"})
    want = np.array([[[[bilinear_loop(x[0, 0], float(g[0]), float(g[1])) for g in grid[0, 0]]]]], dtype=np.float32)
    assert outcome(found, want) == PASS
    shifted = np.array([[[[bilinear_loop(x[0, 0], float(g[0]) + 0.5 / 4, float(g[1])) for g in grid[0, 0]]]]], dtype=np.float32)
    assert outcome(found, shifted) == FAIL


@pytest.mark.parametrize("big, allowed", [(100000, [-1, 0, 1]), (180000, list(range(-5, 6)))])
def test_grid_sample_integer_output_takes_every_integer_its_bound_reaches(big, allowed):
    # Only the two truncated ends of the bound were allowed, not the integers between them: a float32
    # sum within the bound failed (tract, int16 linear: -25591 where -25590 and -26341 were allowed).
    # Past four integers (resize.INTEGER_CHOICES) the element is free.
    x = np.array([[[[big + 11, -big + 27, int(big * 0.6) + 1, 7]]]], dtype=np.int32)
    found = example("GridSample", 20, {"X": x, "grid": np.array([[[[-0.3, 0.0]]]], dtype=np.float32)},
                    {"T1": "int32", "T2": "float"})
    exact = bilinear_loop(x[0, 0].astype(np.float64), -0.3, 0.0)  # 0.1·x[0] + 0.9·x[1]
    main = int(for_op("GridSample").expected(found).readings[0].outputs[0].ravel()[0])
    assert abs(main - exact) < 2
    passing = [d for d in range(-5, 6) if outcome(found, np.array([[[[main + d]]]], dtype=np.int32)) != FAIL]
    assert passing == allowed


@pytest.mark.parametrize("big, infinity_allowed", [(-3.4028235e38, True), (-3.4e30, False)])
def test_roi_align_average_whose_sum_overflows_before_its_division_may_be_infinite(big, infinity_allowed):
    # The bin's weighted samples add up past FLT_MAX before the average divides by their count:
    # onnx.reference's float32 sum gave -inf for the text's -7.1e37 and conform failed it.
    x = np.array([0, 1, 2, big, 4], np.float32).reshape(1, 1, 5, 1)
    found = example("RoiAlign", 22, {"X": x, "rois": np.array([[-0.5, 1, 0.75, 5.75]], np.float32),
                                     "batch_indices": np.array([0], np.int64)}, {"T1": "float", "T2": "int64"},
                    output_height=1, output_width=1)
    assert (outcome(found, np.array([[[[-np.inf]]]], np.float32)) != FAIL) == infinity_allowed


def test_resize_axis_by_axis_overflow_may_be_infinite_but_an_overflowing_product_must_be():
    # Seen with tract and onnx.reference: the first axis's pass gives column 2 -3.6e38, past FLT_MAX,
    # so an evaluation axis by axis gives inf at [0, 1], where the 2-D sum is finite (2.85e37).
    x = np.array([[-1.7718e34, -1.8995e18, -3.4028235e38], [-1.4e-45, 2.07e-26, -3.854e10]], np.float32)
    version = next(v for v in versions("Resize") if v.since_version == 19)
    given = Example(version, "unit", {"T1": "float", "T2": "float"},
                    {"X": x, "scales": np.array([1.5, 1.5], np.float32)},
                    {"mode": "cubic", "cubic_coeff_a": -0.6, "coordinate_transformation_mode": "half_pixel_symmetric",
                     "antialias": 1, "axes": [0, 1]}, "unit", "T1")
    found = for_op("Resize").expected(given)
    out = found.readings[0].outputs[0].copy()
    assert 1e37 < abs(float(out[0, 1])) < 1e38
    out[0, 1] = np.inf
    assert judge(found, RunOutput(outputs=(out,))).outcome != FAIL
    # A product past the max is inf in every order: clamping it to the max is wrong.
    overflowing = Example(versions("Resize")[-1], "unit", {"T1": "double", "T2": "float"},
                          {"X": np.array([0, 1.7976931348623157e308]), "scales": np.array([2.0], np.float32)},
                          {"mode": "cubic", "coordinate_transformation_mode": "asymmetric", "exclude_outside": 1},
                          "unit", "T1")
    clamped = np.array([0, 8.98846567431158e307, 1.7976931348623157e308, 1.7976931348623157e308])
    assert judge(for_op("Resize").expected(overflowing), RunOutput(outputs=(clamped,))).outcome == FAIL


def test_grid_sample_nearest_tie_goes_to_even_from_20_and_either_in_16():
    x = np.array([[[[1, 2, 3, 4]]]], dtype=np.float32)
    grid = np.array([[[[-0.5, 0.0]]]], dtype=np.float32)  # x = 0.5 exactly (align_corners=0, W=4)
    at_20 = example("GridSample", 20, {"X": x, "grid": grid}, {"T1": "float", "T2": "float"}, mode="nearest")
    assert outcome(at_20, [[[[1.0]]]]) == PASS
    assert outcome(at_20, [[[[2.0]]]]) == FAIL
    at_16 = example("GridSample", 16, {"X": x, "grid": grid}, {"T1": "float", "T2": "float"}, mode="nearest")
    assert outcome(at_16, [[[[2.0]]]]) != FAIL


def test_grid_sample_reflection_follows_the_texts_example():
    x = np.array([[[[10, 20, 30, 40]]]], dtype=np.float32)
    grid = np.array([[[[-3.5, 0.0]]]], dtype=np.float32)  # -3.5 -> 1.5 -> 0.5 (normalized), index 2 of 0..3 at 0.5
    found = example("GridSample", 20, {"X": x, "grid": grid}, {"T1": "float", "T2": "float"},
                    mode="nearest", padding_mode="reflection", align_corners=1)
    assert outcome(found, [[[[30.0]]]]) == PASS
    assert outcome(found, [[[[10.0]]]]) == FAIL


def test_grid_sample_rejects_the_old_mode_name_from_20():
    x = np.zeros((1, 1, 2, 2), dtype=np.float32)
    grid = np.zeros((1, 1, 1, 2), dtype=np.float32)
    found = example("GridSample", 20, {"X": x, "grid": grid}, {"T1": "float", "T2": "float"}, mode="bilinear")
    assert for_op("GridSample").expected(found).invalid.rule == "mode"


def test_affine_grid_is_theta_times_the_positions():
    theta = np.array([[[2.0, 0.5, 0.25], [-1.0, 1.0, 0.0]]], dtype=np.float32)
    size = np.array([1, 1, 2, 3], dtype=np.int64)
    found = example("AffineGrid", 20, {"theta": theta, "size": size}, {"T1": "float", "T2": "int64"})
    want = np.zeros((1, 2, 3, 2), dtype=np.float32)
    for h in range(2):
        for w in range(3):
            px, py = (2 * w + 1) / 3 - 1, (2 * h + 1) / 2 - 1
            want[0, h, w] = [2 * px + 0.5 * py + 0.25, -px + py]
    assert outcome(found, want) == PASS
    assert outcome(found, want[:, :, ::-1]) == FAIL


def test_roi_align_half_pixel_against_output_half_pixel():
    x = np.array([[[[1, 2], [3, 4]]]], dtype=np.float32)
    rois = np.array([[0, 0, 2, 2]], dtype=np.float32)
    inputs = {"X": x, "rois": rois, "batch_indices": np.array([0], dtype=np.int64)}
    found = example("RoiAlign", 16, inputs, {"T1": "float", "T2": "int64"}, sampling_ratio=1)
    assert outcome(found, [[[[2.5]]]]) == PASS  # the one sample at (0.5, 0.5): the mean of the four
    # Without the shift the sample is at (1, 1): pixel 4.
    assert outcome(found, [[[[4.0]]]]) == FAIL
    old = example("RoiAlign", 10, inputs, {"T1": "float", "T2": "int64"}, sampling_ratio=1)
    assert outcome(old, [[[[4.0]]]]) == PASS


def test_max_roi_pool_bins():
    x = np.array([[[[1, 5, 2], [3, 4, 9], [0, 7, 8]]]], dtype=np.float32)
    rois = np.array([[0, 0, 0, 1, 1]], dtype=np.float32)
    found = example("MaxRoiPool", 1, {"X": x, "rois": rois}, {"T": "float"}, pooled_shape=[1, 1])
    assert outcome(found, [[[[5.0]]]]) == PASS
    assert outcome(found, [[[[9.0]]]]) == FAIL


def nms(boxes, scores, **inputs):
    version = next(v for v in versions("NonMaxSuppression") if v.since_version == 11)
    given = {"boxes": np.asarray(boxes, dtype=np.float32), "scores": np.asarray(scores, dtype=np.float32)}
    given |= {k: np.asarray(v) for k, v in inputs.items()}
    found = Example(version, "unit", {}, given, {}, "unit", "boxes")
    return NonMaxSuppression10().expected(found)


def test_nms_iou_exactly_at_the_threshold_is_kept_and_ties_are_readings():
    # Two unit-lattice boxes of area 2 sharing 1: IoU 1/3.
    boxes = [[[0, 0, 1, 2], [0, 1, 1, 3]]]
    kept = nms(boxes, [[[0.9, 0.8]]], max_output_boxes_per_class=np.array([5], np.int64),
               iou_threshold=np.array([0.5], np.float32))
    assert [r.outputs[0].tolist() for r in kept.readings] == [[[0, 0, 0], [0, 0, 1]]]
    suppressed = nms(boxes, [[[0.9, 0.8]]], max_output_boxes_per_class=np.array([5], np.int64),
                     iou_threshold=np.array([0.25], np.float32))
    assert [r.outputs[0].tolist() for r in suppressed.readings] == [[[0, 0, 0]]]
    tied = nms(boxes, [[[0.9, 0.9]]], max_output_boxes_per_class=np.array([1], np.int64))
    assert sorted(r.outputs[0].tolist() for r in tied.readings) == [[[0, 0, 0]], [[0, 0, 1]]]


def test_nms_without_max_output_selects_nothing():
    found = nms([[[0, 0, 1, 1]]], [[[0.9]]])
    assert found.readings[0].outputs[0].shape == (0, 3)


def test_nms_traits_name_a_zero_or_absent_maximum_and_no_boxes():
    from conformance.reference.non_max_suppression import max_output_zero, no_boxes

    version = next(v for v in versions("NonMaxSuppression") if v.since_version == 11)

    def given(boxes, scores, **inputs):
        arrays = {"boxes": np.asarray(boxes, np.float32).reshape(1, -1, 4), "scores": np.asarray(scores, np.float32).reshape(1, 1, -1)}
        return Example(version, "unit", {}, arrays | {k: np.asarray(v) for k, v in inputs.items()}, {}, "unit", "boxes")

    assert max_output_zero(given([0, 0, 1, 1], [0.9])) and max_output_zero(given([0, 0, 1, 1], [0.9], max_output_boxes_per_class=[0]))
    assert not max_output_zero(given([0, 0, 1, 1], [0.9], max_output_boxes_per_class=[1]))
    assert no_boxes(given([], [])) and not no_boxes(given([0, 0, 1, 1], [0.9]))


def test_nms_keeps_a_score_equal_to_the_threshold_and_removes_one_below():
    # "Bounding boxes with score less than score_threshold are removed": equal stays.
    boxes = [[[0, 0, 1, 1], [5, 5, 6, 6]]]
    found = nms(boxes, [[[0.5, 0.25]]], max_output_boxes_per_class=np.array([5], np.int64),
                iou_threshold=np.array([0.5], np.float32), score_threshold=np.array([0.5], np.float32))
    assert [r.outputs[0].tolist() for r in found.readings] == [[[0, 0, 0]]]


def test_nms_is_registered_with_a_strategy_and_its_row_order_is_free():
    from conformance.strategies import strategy_of
    assert for_op("NonMaxSuppression").op == "NonMaxSuppression"
    assert callable(strategy_of("NonMaxSuppression"))
    version = next(v for v in versions("NonMaxSuppression") if v.since_version == 10)
    given = {"boxes": np.array([[[0, 0, 1, 1], [5, 5, 6, 6]]], np.float32),
             "scores": np.array([[[0.25, 0.75]]], np.float32),
             "max_output_boxes_per_class": np.array([5], np.int64)}
    found = Example(version, "unit", {}, given, {}, "unit", "boxes")
    assert found.dtype == "float"
    assert outcome(found, np.array([[0, 0, 0], [0, 0, 1]], np.int64)) == PASS
    # Rows in another order match once sorted: the order is a reading the text leaves open.
    assert outcome(found, np.array([[0, 0, 1], [0, 0, 0]], np.int64)) in (PASS, AMBIGUOUS)
    assert outcome(found, np.array([[0, 0, 1]], np.int64)) == FAIL


def test_nearest_within_the_grids_rounding_of_a_tie_takes_either_neighbour():
    # align_corners=1, H=4: y = (g + 1) / 2 * 3 is 2.50000003 exactly for the float32 g = 0.6666667, but
    # 2.5, a tie to even row 2, in float32 arithmetic (OpenVINO); the exact value rounds to row 3.
    x = np.array([[[[6.0], [6.0], [-2.0], [1.0]]]])
    grid = np.array([[[[-2.0, 0.6666667]]]], dtype=np.float32)
    found = example("GridSample", 22, {"X": x, "grid": grid}, {"T1": "double", "T2": "float"}, mode="nearest",
                    padding_mode="zeros", align_corners=1)
    assert outcome(found, np.array([[[[1.0]]]])) in (PASS, AMBIGUOUS)
    assert outcome(found, np.array([[[[-2.0]]]])) in (PASS, AMBIGUOUS)
    assert outcome(found, np.array([[[[6.0]]]])) == FAIL
