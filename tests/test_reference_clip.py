"""Clip reference against values computed by hand from the spec text."""

import numpy as np
import pytest

from conformance.case import Example
from conformance.reference import for_op
from conformance.registry import version_in_force

FLT_MAX = float(np.finfo(np.float32).max)


def clip_example(opset, x, low=None, high=None, dtype=None):
    version = version_in_force("Clip", opset)
    x = np.asarray(x, dtype=dtype)
    name = {"float32": "float", "float64": "double"}.get(x.dtype.name, x.dtype.name)
    inputs, attributes = {"input": x}, {}
    for side, value in (("min", low), ("max", high)):
        if value is None:
            continue
        if opset < 11:
            attributes[side] = float(value)
        else:
            inputs[side] = np.asarray(value, dtype=x.dtype)
    return Example(version, "t", {"T": name}, inputs, attributes, "test", "T")


def readings(example):
    result = for_op("Clip").expected(example)
    assert result.is_valid, result.invalid
    return [r.outputs[0] for r in result.readings]


@pytest.mark.parametrize("opset", [1, 6, 11, 12, 13])
def test_both_bounds(opset):
    [out] = readings(clip_example(opset, [-2.0, 0.5, 3.0], -1.0, 1.0, np.float32))
    np.testing.assert_array_equal(out, [-1.0, 0.5, 1.0])


def test_clip13_min_greater_than_max_sets_everything_to_max():
    [out] = readings(clip_example(13, [-5, 0, 5, 10], 6, 2, np.int32))
    np.testing.assert_array_equal(out, [2, 2, 2, 2])
    assert for_op("Clip").expected(clip_example(13, [1], 6, 2, np.int32)).may_reject is None


def test_before_13_min_greater_than_max_expects_max_and_allows_rejection():
    example = clip_example(12, [-5, 0, 5], 6, 2, np.int32)
    result = for_op("Clip").expected(example)
    np.testing.assert_array_equal(result.readings[0].outputs[0], [2, 2, 2])
    assert result.may_reject


@pytest.mark.parametrize("opset", [1, 6, 11, 12, 13])
def test_nan_input_stays_nan(opset):
    for out in readings(clip_example(opset, [np.nan], -1.0, 1.0, np.float32)):
        assert np.isnan(out[0])


def test_absent_bounds_on_infinities_allow_the_finite_extremes_and_the_infinities():
    outs = readings(clip_example(13, [np.inf, -np.inf], dtype=np.float32))
    as_lists = sorted(tuple(o.tolist()) for o in outs)
    assert (FLT_MAX, -FLT_MAX) in as_lists
    assert (np.inf, -np.inf) in as_lists


def test_clip6_double_without_bounds_allows_numeric_limits_and_the_float_attribute_default():
    outs = readings(clip_example(6, [1e300], dtype=np.float64))
    values = {float(o[0]) for o in outs}
    assert 1e300 in values  # numeric_limits<double>::max() leaves it alone
    assert float(np.float32(3.402823e38)) in values  # the text's default, held by a FLOAT attribute


def test_nan_bound_allows_ignoring_it_or_nan_output():
    outs = readings(clip_example(13, [-3.0, 0.5], np.nan, 1.0, np.float32))
    assert any(o.tolist() == [-3.0, 0.5] for o in outs)
    assert any(np.isnan(o).all() for o in outs)


def test_int64_beyond_2_pow_53_is_exact():
    big = 2**53 + 1
    [out] = readings(clip_example(13, [big + 2, big, -big], -(2**53 - 1), big, np.int64))
    assert out.tolist() == [big, big, -(2**53 - 1)]


def test_uint64_beyond_2_pow_63_is_exact():
    [out] = readings(clip_example(13, [2**64 - 1, 2**63], 2**63 + 1, 2**64 - 2, np.uint64))
    assert out.tolist() == [2**64 - 2, 2**63 + 1]


def test_non_scalar_bound_is_invalid():
    example = clip_example(13, [1.0, 2.0], None, None, np.float32)
    example.inputs["min"] = np.array([0.0, 1.0], dtype=np.float32)
    assert for_op("Clip").expected(example).invalid.rule == "bound-not-scalar"


def test_integer_input_is_not_allowed_before_clip_12():
    assert for_op("Clip").expected(clip_example(11, [1, 2], 0, 1, np.int32)).invalid.rule == "dtype-not-allowed"


def test_the_traits_name_a_nan_bound_and_int64_elements_beyond_int32():
    shaped = clip_example(12, [1.0], dtype=np.float32)
    shaped.inputs["max"] = np.array([np.nan], dtype=np.float32)  # invalid: not a scalar; a NaN bound all the same
    assert for_op("Clip").traits["nan-bound"](shaped)
    shaped.inputs["max"] = np.array([1.0, 2.0], dtype=np.float32)
    assert not for_op("Clip").traits["nan-bound"](shaped)
    traits = for_op("Clip").traits
    assert traits["nan-bound"](clip_example(6, [1.0], low=float("nan")))
    assert traits["nan-bound"](clip_example(13, [1.0], high=float("nan"), dtype=np.float32))
    assert not traits["nan-bound"](clip_example(13, [float("nan")], low=0.0, dtype=np.float32))  # NaN input, not bound
    beyond = traits["int64-beyond-int32"]
    assert beyond(clip_example(13, [0, 2**31], high=10, dtype=np.int64))
    assert beyond(clip_example(12, [-(2**31) - 1], low=-1, dtype=np.int64))
    assert not beyond(clip_example(13, [2**31 - 1, -(2**31)], high=10, dtype=np.int64))
    assert not beyond(clip_example(13, [2**40], high=10, dtype=np.uint64))


@pytest.mark.parametrize("opset", [1, 6, 11, 12])
@pytest.mark.parametrize("low, high", [(np.nan, 1.0), (None, np.nan), (np.nan, np.nan)])
def test_before_13_a_nan_bound_may_be_rejected_as_min_greater_than_max_is(opset, low, high):
    # A kernel checking min <= max (onnxruntime's Clip-6) finds it false for a NaN bound too.
    result = for_op("Clip").expected(clip_example(opset, [-3.0, 0.5], low, high, np.float32))
    assert result.may_reject and "NaN" in result.may_reject
    assert len(result.readings) == 2  # the bound ignored, or NaN


def test_clip13_a_nan_bound_is_not_rejected():
    assert for_op("Clip").expected(clip_example(13, [-3.0, 0.5], np.nan, 1.0, np.float32)).may_reject is None


def test_a_given_min_beyond_the_default_max_is_still_min_greater_than_max():
    # float16 holds a FLOAT min of 1e5 as inf, above an absent max's numeric_limits default.
    result = for_op("Clip").expected(clip_example(6, [1.0], 1e5, None, np.float16))
    assert result.may_reject and "min > max" in result.may_reject
