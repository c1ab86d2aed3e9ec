"""Slice reference against values computed by hand from the spec text (not from the code)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.case import Example
from conformance.reference import for_op
from conformance.reference.slice import effective_indices
from conformance.registry import version_in_force

DATA = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.float32)
I64_MAX, I64_MIN = 2**63 - 1, -(2**63)


def slice_example(opset, data=DATA, index=np.int64, **params):
    version = version_in_force("Slice", opset)
    inputs = {"data": data}
    attributes = {}
    for name, values in params.items():
        if opset < 10:
            attributes[name] = list(values)
        else:
            inputs[name] = None if values is None else np.array(values, dtype=index)
    types = {"T": "float"} if opset < 10 else {"T": "float", "Tind": np.dtype(index).name}
    return Example(version, "t", types, inputs, attributes, "test", "T")


def expected(example):
    return for_op("Slice").expected(example)


def output(example):
    result = expected(example)
    assert result.is_valid, result.invalid
    return result.readings[0].outputs[0]


@pytest.mark.parametrize("opset", [10, 11, 13])
def test_spec_example_1(opset):
    ex = slice_example(opset, axes=[0, 1], starts=[1, 0], ends=[2, 3], steps=[1, 2])
    np.testing.assert_array_equal(output(ex), [[5, 7]])


@pytest.mark.parametrize("opset", [1, 10, 11, 13])
def test_spec_example_2_clamps_end_1000_and_reads_minus_one_from_the_end(opset):
    ex = slice_example(opset, starts=[0, 1], ends=[-1, 1000])
    np.testing.assert_array_equal(output(ex), [[2, 3, 4]])


def test_slice1_example_1_without_steps():
    ex = slice_example(1, axes=[0, 1], starts=[1, 0], ends=[2, 3])
    np.testing.assert_array_equal(output(ex), [[5, 6, 7]])


@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_int_min_end_with_negative_step_reaches_index_zero(index):
    info = np.iinfo(index)
    ex = slice_example(13, index=index, starts=[info.max], ends=[info.min], axes=[1], steps=[-1])
    np.testing.assert_array_equal(output(ex), [[4, 3, 2, 1], [8, 7, 6, 5]])


def test_negative_step_start_clamps_to_dim_minus_one_and_end_to_minus_one():
    # start 100 -> dims-1 = 3; end -100 + 4 = -96 -> clamped to -1; step -2 keeps 3, 1.
    ex = slice_example(13, starts=[100], ends=[-100], axes=[1], steps=[-2])
    np.testing.assert_array_equal(output(ex), [[4, 2], [8, 6]])


def test_end_minus_one_with_negative_step_means_last_index_so_result_is_empty():
    ex = slice_example(13, starts=[3], ends=[-1], axes=[1], steps=[-1])
    assert output(ex).shape == (2, 0)


def test_positive_step_int_min_start_clamps_to_zero():
    ex = slice_example(13, starts=[I64_MIN], ends=[2], axes=[1])
    np.testing.assert_array_equal(output(ex), [[1, 2], [5, 6]])


def test_step_that_does_not_divide_range():
    ex = slice_example(13, starts=[0], ends=[4], axes=[1], steps=[3])
    np.testing.assert_array_equal(output(ex), [[1, 4], [5, 8]])


def test_negative_axis_counts_from_the_back_from_version_11():
    ex = slice_example(11, starts=[1], ends=[3], axes=[-1])
    np.testing.assert_array_equal(output(ex), [[2, 3], [6, 7]])


def test_zero_size_dim_with_negative_step_is_empty():
    data = np.zeros((3, 0), dtype=np.float32)
    ex = slice_example(13, data=data, starts=[-1], ends=[I64_MIN], axes=[1], steps=[-1])
    assert output(ex).shape == (3, 0)


def test_omitted_axes_with_fewer_starts_is_ambiguous_from_version_10_not_in_version_1():
    ex10 = slice_example(10, starts=[1], ends=[2])
    ex1 = slice_example(1, starts=[1], ends=[2])
    np.testing.assert_array_equal(output(ex10), [[5, 6, 7, 8]])
    assert expected(ex10).may_reject is not None
    assert expected(ex1).may_reject is None


@pytest.mark.parametrize(
    "opset, params, rule",
    [
        (13, dict(starts=[0], ends=[2], axes=[1], steps=[0]), "steps-zero"),
        (13, dict(starts=[0], ends=[2], axes=[2]), "axis-out-of-range"),
        (13, dict(starts=[0], ends=[2], axes=[-3]), "axis-out-of-range"),
        (10, dict(starts=[0], ends=[2], axes=[-1]), "negative-axis"),
        (1, dict(starts=[0], ends=[2], axes=[-1]), "negative-axis"),
        (13, dict(starts=[0, 1], ends=[2]), "length-mismatch"),
        (13, dict(starts=[0, 0], ends=[1, 1], axes=[1, 1]), "repeated-axes"),
    ],
)
def test_invalid_inputs_name_their_rule(opset, params, rule):
    result = expected(slice_example(opset, **params))
    assert not result.is_valid
    assert result.invalid.rule == rule
    assert result.invalid.sentence


def test_bfloat16_is_not_allowed_before_slice_13():
    version = version_in_force("Slice", 11)
    data = DATA.astype("bfloat16")
    ex = Example(version, "t", {"T": "bfloat16", "Tind": "int64"},
                 {"data": data, "starts": np.array([0]), "ends": np.array([1])}, {}, "test", "T")
    assert expected(ex).invalid.rule == "dtype-not-allowed"



ROWS = np.arange(8, dtype=np.float32).reshape(8, 1)
BEFORE_ZERO = {"starts": [-100], "ends": [-12], "axes": [0], "steps": [-3]}


@pytest.mark.parametrize("opset", [10, 11, 12])
def test_a_start_below_minus_dim_with_a_negative_step_has_two_readings_before_13(opset):
    # Slice-10/11: "negative means from the end", "similar to numpy"; -100 + 8 is still before index 0.
    # Clamped to 0 (as Slice-13 says) it keeps row 0; numpy selects nothing.
    found = expected(slice_example(opset, data=ROWS, **BEFORE_ZERO))
    assert sorted(r.outputs[0].tolist() for r in found.readings) == [[], [[0.0]]]
    assert "Slice-13 clamps it to 0" in found.ambiguity


def test_slice_13_clamps_a_start_below_minus_dim_to_0():
    found = expected(slice_example(13, data=ROWS, **BEFORE_ZERO))
    assert len(found.readings) == 1 and found.readings[0].outputs[0].tolist() == [[0.0]]


def test_the_int_max_end_trait_names_exactly_a_negative_step_toward_int32_or_int64_max():
    trait = for_op("Slice").traits["negative-step-int-max-end"]
    assert trait(slice_example(13, starts=[-1], ends=[I64_MAX], axes=[1], steps=[-1]))
    assert trait(slice_example(13, starts=[0, -1], ends=[2, 2**31 - 1], axes=[0, 1], steps=[1, -2]))
    assert trait(slice_example(10, index=np.int32, starts=[-1], ends=[2**31 - 1], axes=[1], steps=[-1]))
    assert not trait(slice_example(13, starts=[0], ends=[I64_MAX], axes=[1], steps=[1]))  # positive step
    assert not trait(slice_example(13, starts=[-1], ends=[2**31 - 2], axes=[1], steps=[-1]))
    assert not trait(slice_example(13, starts=[-1], ends=[I64_MAX], axes=[1]))  # no steps: all 1
    assert not trait(slice_example(1, starts=[0], ends=[I64_MAX], axes=[1]))  # Slice-1 has no steps


BOUNDS = st.integers(-(2**63), 2**63 - 1) | st.integers(-8, 8)


@settings(max_examples=400, deadline=None)
@given(start=BOUNDS, end=BOUNDS, step=st.integers(-3, 3).filter(bool) | st.sampled_from([I64_MIN, I64_MAX]),
       dim=st.integers(0, 6))
def test_the_indices_an_axis_keeps_are_python_slicing_but_for_a_start_below_minus_dim(start, end, step, dim):
    # Python's slicing clamps as the Slice-13 sentences do (negative indices count from the end,
    # out-of-range bounds are clamped), except for a start below -dim with a negative step, which
    # Slice-13 clamps to 0 (keeping the first element) and Python to "before 0" (keeping nothing).
    indices = list(range(dim))
    below = step < 0 and start < -dim
    assert list(effective_indices(start, end, step, dim)) == indices[slice(0 if below else start, end, step)]
    assert list(effective_indices(start, end, step, dim, numpy_start=True)) == indices[slice(start, end, step)]
