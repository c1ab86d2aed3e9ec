"""ConvTranspose, Col2Im and CausalConvWithState (reference/conv_transpose.py, col2im.py,
causal_conv.py) against plain loops written from the texts, and judged as a runtime's outputs
would be: planted wrong implementations fail (pads swapped, groups crossed, the bias dropped, a
block misplaced, the state ignored), correct computations in another order pass, and the versions'
rules differ where their texts do."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.dtypes import from_numpy
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(5)


def example(op: str, since: int, inputs: dict, **attributes) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    first = next(v for v in inputs.values() if v is not None)
    return Example(version, "unit", {"T": from_numpy(first.dtype).name}, inputs, attributes, "unit", "T")


def outcome(case: Example, *outputs: np.ndarray) -> str:
    return judge(for_op(case.op).expected(case), RunOutput(outputs=tuple(np.asarray(o) for o in outputs))).outcome


# --- ConvTranspose: a plain loop over the text's sum ---

def scatter(x, w, bias=None, strides=None, dilations=None, pads_begin=None, output=None, group=1, dtype=np.float64):
    """Y as the text defines it: each x[n, c, i]·w[c, m, k] added at i·stride + k·dilation − pads_begin
    (where that is inside the output), summed in `dtype` in the order of the loops."""
    rank = x.ndim - 2
    strides, dilations = strides or [1] * rank, dilations or [1] * rank
    pads_begin = pads_begin or [0] * rank
    n, channels = x.shape[:2]
    maps = w.shape[1]
    per_group = channels // group
    y = np.zeros((n, maps * group) + tuple(output), dtype=dtype)
    for b, c in itertools.product(range(n), range(channels)):
        g = c // per_group
        for i in itertools.product(*(range(s) for s in x.shape[2:])):
            for m in range(maps):
                for k in itertools.product(*(range(s) for s in w.shape[2:])):
                    o = tuple(i[a] * strides[a] + k[a] * dilations[a] - pads_begin[a] for a in range(rank))
                    if all(0 <= o[a] < output[a] for a in range(rank)):
                        at = (b, g * maps + m) + o
                        y[at] = dtype(y[at] + dtype(x[(b, c) + i]) * dtype(w[(c, m) + k]))
    if bias is not None:
        y = (y + bias.reshape((1, -1) + (1,) * rank).astype(dtype)).astype(dtype)
    return y


def quarters(shape):
    return (RNG.integers(-8, 9, size=shape) * 0.25).astype(np.float32)


GEOMETRIES = [  # (x shape, w shape, group, attributes, pads_begin, output)
    ((1, 1, 3), (1, 1, 3), 1, {}, [0], [5]),
    ((2, 2, 3), (2, 3, 2), 1, {"strides": [2], "pads": [1, 0]}, [1], [5]),
    ((1, 4, 3), (4, 1, 3), 4, {"dilations": [2], "pads": [0, 2]}, [0], [5]),
    ((1, 4, 2, 3), (4, 2, 2, 2), 2, {"strides": [2, 3], "output_padding": [1, 2], "pads": [1, 0, 0, 1]}, [1, 0], [4, 9]),
    ((1, 2, 2, 2, 2), (2, 1, 2, 1, 2), 1, {"strides": [1, 2, 1]}, [0, 0, 0], [3, 3, 3]),
]


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_conv_transpose_is_the_texts_sum_bitwise_for_exact_values(geometry, with_bias):
    x_shape, w_shape, group, attributes, begin, output = geometry
    x, w = quarters(x_shape), quarters(w_shape)
    bias = quarters((w_shape[1] * group,)) if with_bias else None
    case = example("ConvTranspose", 11, {"X": x, "W": w, "B": bias}, group=group, **attributes)
    found = for_op("ConvTranspose").expected(case)
    wanted = scatter(x, w, bias, attributes.get("strides"), attributes.get("dilations"), begin, output, group)
    assert np.array_equal(found.readings[0].outputs[0], wanted.astype(np.float32))
    assert outcome(case, wanted.astype(np.float32)) == PASS


def test_conv_transpose_planted_bugs_fail():
    x, w, bias = quarters((1, 4, 3)), quarters((4, 2, 3)), quarters((4,))
    case = example("ConvTranspose", 22, {"X": x, "W": w, "B": bias}, group=2, strides=[2], pads=[1, 2])
    right = scatter(x, w, bias, [2], None, [1], [4], group=2).astype(np.float32)
    assert outcome(case, right) == PASS
    pads_swapped = scatter(x, w, bias, [2], None, [2], [4], group=2).astype(np.float32)
    no_bias = scatter(x, w, None, [2], None, [1], [4], group=2).astype(np.float32)
    crossed = scatter(x[:, ::-1].copy(), w[::-1].copy(), bias, [2], None, [1], [4], group=2).astype(np.float32)
    for wrong in (pads_swapped, no_bias, crossed):
        assert not np.array_equal(wrong, right)
        assert outcome(case, wrong) == FAIL


def test_conv_transpose_float32_sums_in_another_order_pass():
    x = RNG.standard_normal((2, 6, 5)).astype(np.float32)
    w = RNG.standard_normal((6, 3, 3)).astype(np.float32)
    case = example("ConvTranspose", 11, {"X": x, "W": w}, strides=[2])
    forward = scatter(x, w, None, [2], None, None, [11], dtype=np.float32)
    backward = scatter(x[:, ::-1].copy(), w[::-1].copy(), None, [2], None, None, [11], dtype=np.float32)
    assert outcome(case, forward) == PASS
    assert outcome(case, backward) == PASS


def test_output_shape_odd_total_goes_to_opposite_ends_in_versions_1_and_11():
    x, w = np.array([[[1, 2]]], np.float32), np.ones((1, 1, 3), np.float32)
    first = for_op("ConvTranspose").expected(example("ConvTranspose", 1, {"X": x, "W": w}, strides=[2], output_shape=[4]))
    later = for_op("ConvTranspose").expected(example("ConvTranspose", 11, {"X": x, "W": w}, strides=[2], output_shape=[4]))
    # full result [1, 1, 3, 2, 2], total padding 1
    assert first.readings[0].outputs[0].ravel().tolist() == [1, 1, 3, 2]
    assert later.readings[0].outputs[0].ravel().tolist() == [1, 3, 2, 2]


def test_same_keeps_the_input_size_in_version_1_and_multiplies_it_by_the_stride_from_11():
    x, w = np.array([[[1, 2, 3]]], np.float32), np.ones((1, 1, 4), np.float32)
    first = for_op("ConvTranspose").expected(example("ConvTranspose", 1, {"X": x, "W": w}, strides=[2], auto_pad="SAME_UPPER"))
    later = for_op("ConvTranspose").expected(example("ConvTranspose", 11, {"X": x, "W": w}, strides=[2], auto_pad="SAME_UPPER"))
    assert first.readings[0].outputs[0].shape == (1, 1, 3)
    assert later.readings[0].outputs[0].shape == (1, 1, 6)


def test_version_1_same_with_an_odd_total_has_both_sides_as_readings():
    x, w = np.array([[[1, 2, 3]]], np.float32), np.ones((1, 1, 2), np.float32)
    case = example("ConvTranspose", 1, {"X": x, "W": w}, auto_pad="SAME_UPPER")
    found = for_op("ConvTranspose").expected(case)
    values = sorted(r.outputs[0].ravel().tolist() for r in found.readings)
    assert values == [[1, 3, 5], [3, 5, 3]]  # full [1, 3, 5, 3]
    assert outcome(case, np.array([[[1, 3, 5]]], np.float32)) == AMBIGUOUS


def test_output_padding_limit_is_version_11s():
    x, w = np.ones((1, 1, 2), np.float32), np.ones((1, 1, 2), np.float32)
    assert for_op("ConvTranspose").expected(example("ConvTranspose", 1, {"X": x, "W": w}, strides=[2], output_padding=[2])).is_valid
    later = for_op("ConvTranspose").expected(example("ConvTranspose", 11, {"X": x, "W": w}, strides=[2], output_padding=[2]))
    assert later.invalid.rule == "output-padding"
    below_dilation = for_op("ConvTranspose").expected(
        example("ConvTranspose", 11, {"X": x, "W": w}, strides=[1], dilations=[3], output_padding=[2]))
    assert below_dilation.is_valid and below_dilation.may_reject


@pytest.mark.parametrize("inputs, attributes, rule", [
    ({"X": np.ones((1, 3, 2), np.float32), "W": np.ones((3, 1, 2), np.float32)}, {"group": 2}, "group"),
    ({"X": np.ones((1, 2, 2), np.float32), "W": np.ones((3, 1, 2), np.float32)}, {}, "weight-shape"),
    ({"X": np.ones((1, 1, 2), np.float32), "W": np.ones((1, 2, 2), np.float32), "B": np.ones(3, np.float32)}, {}, "bias-shape"),
    ({"X": np.ones((1, 1, 2), np.float32), "W": np.ones((1, 1, 2), np.float32)}, {"auto_pad": "VALID", "pads": [1, 0]},
     "pads-with-auto-pad"),
    ({"X": np.ones((1, 1, 2), np.float32), "W": np.ones((1, 1, 2), np.float32)}, {"pads": [2, 2]}, "no-output"),
])
def test_conv_transpose_invalid_inputs_name_their_rule(inputs, attributes, rule):
    found = for_op("ConvTranspose").expected(example("ConvTranspose", 22, inputs, **attributes))
    assert found.invalid is not None and found.invalid.rule == rule


def test_an_output_shape_past_the_full_result_holds_the_bias_there_and_may_be_rejected():
    x, w, bias = np.array([[[1, 2]]], np.float32), np.ones((1, 1, 3), np.float32), np.array([0.5], np.float32)
    found = for_op("ConvTranspose").expected(example("ConvTranspose", 11, {"X": x, "W": w, "B": bias}, output_shape=[6]))
    # full [1, 3, 3, 2], total -2: one position past each end
    assert found.readings[0].outputs[0].ravel().tolist() == [0.5, 1.5, 3.5, 3.5, 2.5, 0.5]
    assert found.may_reject


# --- Col2Im: a plain fold ---

def fold(data, image, block, strides=None, dilations=None, pads=None):
    """PyTorch's fold as a loop: entry (c·prod(block) + k, l) added at block l's tap k."""
    rank = len(image)
    strides, dilations, pads = strides or [1] * rank, dilations or [1] * rank, pads or [0] * (2 * rank)
    counts = [(n + pads[a] + pads[rank + a] - (b - 1) * dilations[a] - 1) // strides[a] + 1
              for a, (n, b) in enumerate(zip(image, block))]
    n, columns, _ = data.shape
    channels = columns // math.prod(block)
    out = np.zeros((n, channels) + tuple(image), dtype=np.float64)
    for b, c in itertools.product(range(n), range(channels)):
        for flat_l, l in enumerate(itertools.product(*(range(v) for v in counts))):
            for flat_k, k in enumerate(itertools.product(*(range(v) for v in block))):
                p = tuple(l[a] * strides[a] + k[a] * dilations[a] - pads[a] for a in range(rank))
                if all(0 <= p[a] < image[a] for a in range(rank)):
                    out[(b, c) + p] += float(data[b, c * math.prod(block) + flat_k, flat_l])
    return out


FOLDS = [([3, 3], [2, 2], {}), ([4, 5], [2, 3], {"strides": [2, 1], "pads": [1, 0, 0, 1]}),
         ([5, 4], [2, 2], {"dilations": [2, 1], "strides": [1, 3]}), ([2, 3, 3], [1, 2, 2], {"dilations": [1, 1, 2]})]


@pytest.mark.parametrize("image, block, attributes", FOLDS)
def test_col2im_is_the_fold_bitwise_for_exact_values(image, block, attributes):
    rank = len(image)
    strides = attributes.get("strides", [1] * rank)
    dilations = attributes.get("dilations", [1] * rank)
    pads = attributes.get("pads", [0] * (2 * rank))
    count = math.prod((n + pads[a] + pads[rank + a] - (b - 1) * dilations[a] - 1) // strides[a] + 1
                      for a, (n, b) in enumerate(zip(image, block)))
    data = quarters((2, 2 * math.prod(block), count))
    case = example("Col2Im", 18, {"input": data, "image_shape": np.array(image, np.int64),
                                  "block_shape": np.array(block, np.int64)}, **attributes)
    wanted = fold(data, image, block, strides, dilations, pads).astype(np.float32)
    assert np.array_equal(for_op("Col2Im").expected(case).readings[0].outputs[0], wanted)
    assert outcome(case, wanted) == PASS
    moved = np.roll(wanted, 1, axis=-1)
    if not np.array_equal(moved, wanted):
        assert outcome(case, moved) == FAIL


def test_col2im_block_count_must_match():
    data = np.ones((1, 4, 3), np.float32)
    case = example("Col2Im", 18, {"input": data, "image_shape": np.array([3, 3]), "block_shape": np.array([2, 2])})
    assert for_op("Col2Im").expected(case).invalid.rule == "block-count"


def test_col2im_integer_overlap_overflows_to_readings():
    data = np.full((1, 4, 4), 100, np.int8)  # the centre of a 3 x 3 image sums 4 entries: 400
    case = example("Col2Im", 18, {"input": data, "image_shape": np.array([3, 3]), "block_shape": np.array([2, 2])})
    found = for_op("Col2Im").expected(case)
    centres = sorted(int(r.outputs[0][0, 0, 1, 1]) for r in found.readings)
    assert centres == sorted([127, (400 + 128) % 256 - 128])  # saturated, wrapped


def test_col2im_strings_rearrange_where_blocks_do_not_overlap_and_are_readings_where_they_do():
    tiles = np.array([[["a", "b", "c", "d"]]], dtype=object)
    case = example("Col2Im", 18, {"input": tiles, "image_shape": np.array([2, 2]), "block_shape": np.array([1, 1])})
    found = for_op("Col2Im").expected(case)
    assert found.readings[0].outputs[0].ravel().tolist() == ["a", "b", "c", "d"] and found.may_reject is None
    overlapping = example("Col2Im", 18, {"input": np.array([[["a", "b"], ["c", "d"]]], dtype=object),
                                         "image_shape": np.array([1, 3]), "block_shape": np.array([1, 2])})
    found = for_op("Col2Im").expected(overlapping)
    assert found.readings[0].outputs[0].ravel().tolist() == ["a", "cb", "d"] and found.may_reject


# --- CausalConvWithState: a plain loop over the effective sequence ---

def causal(x, w, bias=None, past=None, activation="none"):
    batch, channels, length = x.shape
    k = w.shape[2]
    past = np.zeros((batch, channels, k - 1)) if past is None else past.astype(np.float64)
    sequence = np.concatenate([past, x.astype(np.float64)], axis=2)
    y = np.zeros(x.shape)
    for b, c, t in itertools.product(range(batch), range(channels), range(length)):
        y[b, c, t] = sum(sequence[b, c, t + j] * float(w[c, 0, j]) for j in range(k)) + (float(bias[c]) if bias is not None else 0.0)
    if activation != "none":
        y = y / (1 + np.exp(-y))
    return y, sequence[:, :, sequence.shape[2] - (k - 1):]


def test_causal_conv_is_the_texts_sum_with_its_state():
    x, w, bias, past = quarters((2, 3, 4)), quarters((3, 1, 3)), quarters((3,)), quarters((2, 3, 2))
    case = example("CausalConvWithState", 27, {"input": x, "weight": w, "bias": bias, "past_state": past})
    y, present = causal(x, w, bias, past)
    found = for_op("CausalConvWithState").expected(case)
    assert np.array_equal(found.readings[0].outputs[0], y.astype(np.float32))
    assert np.array_equal(found.readings[0].outputs[1], present.astype(np.float32))
    assert outcome(case, y.astype(np.float32), present.astype(np.float32)) == PASS
    no_state, _ = causal(x, w, bias, None)
    assert outcome(case, no_state.astype(np.float32), present.astype(np.float32)) == FAIL
    assert outcome(case, y.astype(np.float32), np.zeros_like(present, dtype=np.float32)) == FAIL


def test_causal_conv_state_keeps_past_values_when_the_input_is_short():
    x, w, past = np.array([[[4]]], np.float32), np.ones((1, 1, 4), np.float32), np.array([[[1, 2, 3]]], np.float32)
    found = for_op("CausalConvWithState").expected(example("CausalConvWithState", 27, {"input": x, "weight": w,
                                                                                      "bias": None, "past_state": past}))
    assert found.readings[0].outputs[0].ravel().tolist() == [10]
    assert found.readings[0].outputs[1].ravel().tolist() == [2, 3, 4]


def test_causal_conv_silu_computed_in_float32_passes_and_without_it_fails():
    x, w = RNG.standard_normal((1, 2, 6)).astype(np.float32), RNG.standard_normal((2, 1, 3)).astype(np.float32)
    case = example("CausalConvWithState", 27, {"input": x, "weight": w}, activation="silu")
    y, present = causal(x, w)
    y32 = y.astype(np.float32)
    silu32 = (y32 * (np.float32(1) / (np.float32(1) + np.exp(-y32)))).astype(np.float32)
    assert outcome(case, silu32, present.astype(np.float32)) == PASS
    assert outcome(case, y32, present.astype(np.float32)) == FAIL
