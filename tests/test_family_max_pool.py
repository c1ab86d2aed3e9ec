"""MaxPool, GlobalMaxPool (reference/max_pool.py) and MaxUnpool (reference/max_unpool.py) judged as a
runtime's outputs would be: expected values computed here by plain loops over the text's windows,
not by the reference; planted wrong implementations (pads on the wrong side, the padding read as 0,
indices of the padded input or of one (n, c) plane, a non-maximal index, -FLT_MAX for a window of
NaN, SAME_UPPER's padding for SAME_LOWER, unpooling per plane) fail; the readings the texts leave
open pass; the texts' invalid inputs are found by their rule."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(7)


def example(op: str, since: int, inputs: dict, attributes: dict | None = None, types: dict | None = None,
            outputs: tuple[bool, ...] = ()) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    types = types or ({"T1": "float", "T2": "int64"} if op == "MaxUnpool" else {"T": "float"})
    return Example(version, "unit", types, inputs, attributes or {}, "unit", next(iter(types)), outputs=outputs)


def outcome(case: Example, *outputs) -> str:
    """The verdict on `outputs` (lists taken as float32 for Y, int64 for Indices)."""
    arrays = tuple(o if isinstance(o, np.ndarray) else np.asarray(o, dtype=np.float32 if k == 0 else np.int64)
                   for k, o in enumerate(outputs))
    return judge(for_op(case.op).expected(case), RunOutput(outputs=arrays)).outcome


def loop_pool(x, kernel, strides, pads, dilations=None, fill=None, order="rows"):
    """Max pooling by loops over x [N, C, *spatial]: Y and the row-major (or `order`) flat index of
    each window's first maximum; `fill` (None: the padding is no value) what the padding holds."""
    n, c, *spatial = x.shape
    rank = len(spatial)
    dilations = dilations or [1] * rank
    out = [(spatial[a] + pads[a] + pads[a + rank] - dilations[a] * (kernel[a] - 1) - 1) // strides[a] + 1
           for a in range(rank)]
    y = np.zeros([n, c] + out, dtype=x.dtype)
    index = np.zeros([n, c] + out, dtype=np.int64)
    for b, ch in itertools.product(range(n), range(c)):
        for position in itertools.product(*[range(o) for o in out]):
            best, where = None, -1
            for tap in itertools.product(*[range(k) for k in kernel]):
                at = [position[a] * strides[a] - pads[a] + tap[a] * dilations[a] for a in range(rank)]
                if all(0 <= at[a] < spatial[a] for a in range(rank)):
                    value = x[(b, ch, *at)]
                    if order == "padded":
                        flat = _flat([p + pads[a] for a, p in enumerate(at)],
                                     [s + pads[a] + pads[a + rank] for a, s in enumerate(spatial)])
                    elif order == "plane":
                        flat = _flat(at, spatial)
                    elif order == "columns":
                        flat = (b * c + ch) * math.prod(spatial) + _flat(at[::-1], spatial[::-1])
                    else:
                        flat = (b * c + ch) * math.prod(spatial) + _flat(at, spatial)
                elif fill is not None:
                    value, flat = fill, -1
                else:
                    continue
                if best is None or value > best:
                    best, where = value, flat
            y[(b, ch, *position)] = best
            index[(b, ch, *position)] = where
    return y, index


def _flat(at, sizes):
    flat = 0
    for a, s in zip(at, sizes):
        flat = flat * s + a
    return flat


@pytest.mark.parametrize("since", [10, 12, 22])
def test_max_pool_matches_loops_and_tells_misplaced_pads(since):
    x = RNG.permutation(2 * 2 * 5 * 4).reshape(2, 2, 5, 4).astype(np.float32) - 40
    attributes = {"kernel_shape": [3, 2], "pads": [2, 0, 1, 1], "strides": [2, 1], "dilations": [1, 2]}
    case = example("MaxPool", since, {"X": x}, attributes)
    y, index = loop_pool(x, [3, 2], [2, 1], [2, 0, 1, 1], [1, 2])
    assert outcome(case, y, index) == PASS
    swapped_y, swapped_index = loop_pool(x, [3, 2], [2, 1], [1, 1, 2, 0], [1, 2])
    assert swapped_y.shape == y.shape
    assert outcome(case, swapped_y, swapped_index) == FAIL
    zero_y, _ = loop_pool(x, [3, 2], [2, 1], [2, 0, 1, 1], [1, 2], fill=np.float32(0))
    assert outcome(case, zero_y, index) == FAIL  # the padding is no value: 0 never wins


def test_indices_count_the_whole_tensor_and_not_the_padding():
    x = RNG.permutation(2 * 3 * 4).reshape(2, 3, 4).astype(np.float32)
    attributes = {"kernel_shape": [2], "pads": [1, 1]}
    case = example("MaxPool", 12, {"X": x}, attributes)
    y, index = loop_pool(x, [2], [1], [1, 1])
    assert outcome(case, y, index) == PASS
    _, plane = loop_pool(x, [2], [1], [1, 1], order="plane")
    assert outcome(case, y, plane) == FAIL
    _, padded = loop_pool(x, [2], [1], [1, 1], order="padded")
    assert outcome(case, y, padded) == FAIL


def test_int8_padding_never_wins():
    x = np.array([[[-3, -1, -2]]], dtype=np.int8)
    case = example("MaxPool", 12, {"X": x}, {"kernel_shape": [2], "pads": [1, 1]}, types={"T": "int8"})
    assert outcome(case, np.array([[[-3, -1, -1, -2]]], np.int8), np.array([[[0, 1, 1, 2]]])) == PASS
    assert outcome(case, np.array([[[0, -1, -1, 0]]], np.int8), np.array([[[0, 1, 1, 2]]])) == FAIL


def test_column_major_storage_order_has_two_readings():
    x = RNG.permutation(2 * 2 * 2 * 3).reshape(2, 2, 2, 3).astype(np.float32)
    case = example("MaxPool", 12, {"X": x}, {"kernel_shape": [1, 1], "storage_order": 1})
    planes = np.array([[[[(b * 2 + ch) * 6 + h + 2 * w for w in range(3)] for h in range(2)] for ch in range(2)]
                       for b in range(2)])
    whole = np.array([[[[b + 2 * ch + 4 * (h + 2 * w) for w in range(3)] for h in range(2)] for ch in range(2)]
                      for b in range(2)])
    rows = np.arange(24).reshape(2, 2, 2, 3)
    assert outcome(case, x, planes) in (PASS, AMBIGUOUS)
    assert outcome(case, x, whole) in (PASS, AMBIGUOUS)
    assert outcome(case, x, rows) == FAIL
    _, columns = loop_pool(x, [1, 1], [1, 1], [0, 0, 0, 0], order="columns")
    assert np.array_equal(columns, planes)


def test_ties_allow_any_tied_index_and_no_other():
    x = np.array([[[2, 1, 2, 0]]], dtype=np.float32)
    case = example("MaxPool", 22, {"X": x}, {"kernel_shape": [3]})
    assert outcome(case, [[[2, 2]]], [[[0, 2]]]) != FAIL
    assert outcome(case, [[[2, 2]]], [[[2, 2]]]) != FAIL
    assert outcome(case, [[[2, 2]]], [[[1, 2]]]) == FAIL


def test_nan_propagated_or_skipped_but_never_the_lowest_value():
    x = np.array([[[1, np.nan, np.nan, np.nan]]], dtype=np.float32)
    case = example("MaxPool", 12, {"X": x}, {"kernel_shape": [2], "strides": [2]}, outputs=(True, False))
    assert outcome(case, np.array([[[np.nan, np.nan]]], np.float32)) != FAIL
    assert outcome(case, np.array([[[1, np.nan]]], np.float32)) != FAIL
    lowest = np.finfo(np.float32).min
    assert outcome(case, np.array([[[1, lowest]]], np.float32)) == FAIL
    assert outcome(case, np.array([[[-np.inf, np.nan]]], np.float32)) == FAIL


def test_window_over_padding_alone_has_no_value():
    x = np.array([[[5]]], dtype=np.float32)
    case = example("MaxPool", 12, {"X": x}, {"kernel_shape": [1], "pads": [1, 1]})
    found = for_op("MaxPool").expected(case)
    assert found.may_reject is not None
    assert outcome(case, [[[123, 5, -7]]], [[[9, 0, -1]]]) != FAIL
    assert outcome(case, [[[0, 4, 0]]], [[[0, 0, 0]]]) == FAIL


def test_same_lower_puts_the_odd_pad_first():
    x = np.array([[[1, 2, 3, 4]]], dtype=np.float32)
    lower = example("MaxPool", 12, {"X": x}, {"kernel_shape": [2], "auto_pad": "SAME_LOWER"}, outputs=(True, False))
    assert outcome(lower, np.array([[[1, 2, 3, 4]]], np.float32)) == PASS
    assert outcome(lower, np.array([[[2, 3, 4, 4]]], np.float32)) == FAIL  # SAME_UPPER's


def test_ceil_mode_window_past_the_input_is_a_reading_before_22():
    x = np.array([[[1, 2, 3, 4, 5]]], dtype=np.float32)
    attributes = {"kernel_shape": [1], "strides": [3], "ceil_mode": 1}
    at_22 = example("MaxPool", 22, {"X": x}, attributes, outputs=(True, False))
    assert outcome(at_22, np.array([[[1, 4]]], np.float32)) == PASS
    assert outcome(at_22, np.array([[[1, 4, 0]]], np.float32)) == FAIL
    at_10 = example("MaxPool", 10, {"X": x}, attributes, outputs=(True, False))
    assert outcome(at_10, np.array([[[1, 4]]], np.float32)) != FAIL
    assert outcome(at_10, np.array([[[1, 4, 0]]], np.float32)) != FAIL
    assert outcome(at_10, np.array([[[1, 3]]], np.float32)) == FAIL


def test_kernel_longer_than_the_input():
    x = np.array([[[1, 2, 3]]], dtype=np.float32)
    empty = example("MaxPool", 12, {"X": x}, {"kernel_shape": [4]})  # floor((3 - 4) / 1 + 1) = 0
    found = for_op("MaxPool").expected(empty)
    assert found.is_valid and found.readings[0].outputs[0].shape == (1, 1, 0)
    negative = example("MaxPool", 12, {"X": x}, {"kernel_shape": [5]})  # floor(-2 + 1) = -1
    assert for_op("MaxPool").expected(negative).invalid.rule == "no-window"


@pytest.mark.parametrize("attributes, rule", [
    ({"kernel_shape": [2], "storage_order": 2}, "storage-order"),
    ({"kernel_shape": [2], "auto_pad": "VALID", "pads": [1, 0]}, "pads-with-auto-pad"),
    ({"kernel_shape": [2], "strides": [0]}, "strides"),
    ({"kernel_shape": [2], "dilations": [-1]}, "dilations"),
    ({"kernel_shape": [2], "pads": [0, -1]}, "pads"),
    ({"kernel_shape": [2, 2]}, "kernel-shape"),
])
def test_max_pool_invalid_inputs(attributes, rule):
    case = example("MaxPool", 12, {"X": np.zeros((1, 1, 3), np.float32)}, attributes)
    assert for_op("MaxPool").expected(case).invalid.rule == rule


def test_max_pool_without_spatial_axes_and_wrong_dtype():
    case = example("MaxPool", 12, {"X": np.zeros((1, 3), np.float32)}, {"kernel_shape": [1]})
    assert for_op("MaxPool").expected(case).invalid.rule == "x-rank"
    case = example("MaxPool", 11, {"X": np.zeros((1, 1, 3), np.int8)}, {"kernel_shape": [1]}, types={"T": "int8"})
    assert for_op("MaxPool").expected(case).invalid.rule == "dtype-not-allowed"


def test_global_max_pool_is_a_max_per_channel():
    x = RNG.standard_normal((2, 3, 2, 3)).astype(np.float32)
    case = example("GlobalMaxPool", 22, {"X": x})
    want = np.array([[[[max(x[b, ch].ravel().tolist())]] for ch in range(3)] for b in range(2)], np.float32)
    assert outcome(case, want) == PASS
    assert outcome(case, want[:, ::-1]) == FAIL
    assert outcome(case, want.reshape(2, 3)) == FAIL  # the spatial dims stay, of size 1


def loop_unpool(x, indices, shape):
    out = np.zeros(math.prod(shape), dtype=x.dtype)
    for value, where in zip(x.ravel().tolist(), indices.ravel().tolist()):
        out[where] = value
    return out.reshape(shape)


def test_max_unpool_writes_at_flat_indices_of_the_whole_output():
    x = np.array([[[1, 2]], [[3, 4]]], dtype=np.float32)
    indices = np.array([[[0, 5]], [[1, 6]]], dtype=np.int64)
    case = example("MaxUnpool", 11, {"X": x, "I": indices}, {"kernel_shape": [2], "strides": [2]})
    assert outcome(case, loop_unpool(x, indices, (2, 1, 4))) == PASS
    per_plane = np.zeros((2, 1, 4), np.float32)
    for b in range(2):
        for value, where in zip(x[b, 0].tolist(), indices[b, 0].tolist()):
            per_plane[b, 0, where % 4] = value
    assert outcome(case, per_plane) == FAIL


def test_max_unpool_inverts_a_pooling_with_pads():
    x0 = RNG.permutation(2 * 7).reshape(1, 2, 7).astype(np.float32)
    y, index = loop_pool(x0, [3], [2], [1, 1])
    attributes = {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}
    case = example("MaxUnpool", 22, {"X": y, "I": index}, attributes)
    assert (y.shape[2] - 1) * 2 - 2 + 3 == 7  # the default size is X0's
    assert outcome(case, loop_unpool(y, index, x0.shape)) == PASS
    assert outcome(case, loop_unpool(y, index, x0.shape)[:, ::-1]) == FAIL


def test_max_unpool_duplicates_allow_any_written_value():
    x = np.array([[[5, 6, 7]]], dtype=np.float32)
    indices = np.array([[[1, 1, 3]]], dtype=np.int64)
    case = example("MaxUnpool", 11, {"X": x, "I": indices}, {"kernel_shape": [2], "strides": [2]})  # (3 - 1) * 2 + 2
    assert outcome(case, [[[0, 6, 0, 7, 0, 0]]]) != FAIL
    assert outcome(case, [[[0, 5, 0, 7, 0, 0]]]) != FAIL
    assert outcome(case, [[[0, 11, 0, 7, 0, 0]]]) == FAIL


def test_max_unpool_output_shape_readings():
    x = np.array([[[[5, 6], [7, 8]]]], dtype=np.float32)
    indices = np.array([[[[5, 7], [13, 15]]]], dtype=np.int64)
    case = example("MaxUnpool", 11, {"X": x, "I": indices, "output_shape": np.array([1, 1, 5, 5])},
                   {"kernel_shape": [2, 2], "strides": [2, 2]})
    whole = loop_unpool(x, indices, (1, 1, 5, 5))
    corner = np.zeros((1, 1, 5, 5), np.float32)
    corner[:, :, :4, :4] = loop_unpool(x, indices, (1, 1, 4, 4))
    assert outcome(case, whole) != FAIL
    assert outcome(case, corner) != FAIL
    assert outcome(case, np.zeros((1, 1, 5, 5), np.float32)) == FAIL


@pytest.mark.parametrize("inputs, attributes, rule", [
    ({"I": np.array([[[0, 4]]])}, {}, "indices-range"),
    ({"I": np.array([[[-1, 0]]])}, {}, "indices-range"),
    ({"I": np.array([[[0]]])}, {}, "indices-shape"),
    ({"I": np.array([[[0, 1]]]), "output_shape": np.array([4])}, {}, "output-shape"),
    ({"I": np.array([[[0, 1]]]), "output_shape": np.array([1, 2, 4])}, {}, "output-shape-batch-channels"),
    ({"I": np.array([[[0, 1]]])}, {"strides": [0]}, "strides"),
    ({"I": np.array([[[0, 1]]])}, {"pads": [0, -1]}, "pads"),
])
def test_max_unpool_invalid_inputs(inputs, attributes, rule):
    x = np.array([[[5, 6]]], dtype=np.float32)
    case = example("MaxUnpool", 22, {"X": x, **inputs}, {"kernel_shape": [2], "strides": [2], **attributes})
    assert for_op("MaxUnpool").expected(case).invalid.rule == rule


def test_traits_name_the_causes_onnxruntime_deviates_by():
    traits = for_op("MaxPool").traits
    neg_inf = example("MaxPool", 12, {"X": np.array([[[-np.inf, np.nan, 1]]], np.float32)}, {"kernel_shape": [2]})
    finite = example("MaxPool", 12, {"X": np.array([[[-np.inf, 0, 1]]], np.float32)}, {"kernel_shape": [2]})
    assert traits["window-of-nan-or-neg-inf"](neg_inf) and not traits["window-of-nan-or-neg-inf"](finite)
    long_pad = example("MaxPool", 12, {"X": np.zeros((1, 1, 3), np.float32)}, {"kernel_shape": [2], "pads": [0, 2]})
    assert traits["pads-not-below-kernel"](long_pad) and not traits["pads-not-below-kernel"](finite)
    same = {"kernel_shape": [2], "auto_pad": "SAME_UPPER"}
    dilated = example("MaxPool", 12, {"X": np.zeros((1, 1, 4), np.float32)}, {**same, "dilations": [2]})
    assert traits["dilated-same-padding"](dilated)
    assert not traits["dilated-same-padding"](example("MaxPool", 12, {"X": np.zeros((1, 1, 4), np.float32)}, same))
    wide_stride = example("MaxPool", 12, {"X": np.zeros((1, 1, 5), np.float32)}, {**same, "kernel_shape": [1], "strides": [3]})
    assert traits["same-negative-pad"](wide_stride) and not traits["same-negative-pad"](dilated)
    unpool = for_op("MaxUnpool").traits
    small = example("MaxUnpool", 11, {"X": np.array([[[5, 6]]], np.float32), "I": np.array([[[0, 1]]]),
                                      "output_shape": np.array([1, 1, 2])}, {"kernel_shape": [2], "strides": [2]})
    large = example("MaxUnpool", 11, {"X": np.array([[[5, 6]]], np.float32), "I": np.array([[[0, 1]]]),
                                      "output_shape": np.array([1, 1, 5])}, {"kernel_shape": [2], "strides": [2]})
    assert unpool["output-shape-below-default"](small) and not unpool["output-shape-below-default"](large)
