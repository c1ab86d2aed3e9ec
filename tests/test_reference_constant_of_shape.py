"""ConstantOfShape reference against the spec text."""

import ml_dtypes
import numpy as np
import pytest

from conformance.case import Example
from conformance.reference import for_op
from conformance.registry import version_in_force


def cos_example(opset, shape, value=None, dtype_name="float"):
    version = version_in_force("ConstantOfShape", opset)
    attributes = {} if value is None else {"value": value}
    return Example(version, "t", {"T1": "int64", "T2": dtype_name},
                   {"input": np.array(shape, dtype=np.int64)}, attributes, "test", "T2")


def out(example):
    result = for_op("ConstantOfShape").expected(example)
    assert result.is_valid, result.invalid
    return result.readings[0].outputs[0]


def test_empty_shape_gives_a_scalar():
    result = out(cos_example(9, np.zeros(0, dtype=np.int64), np.array([7], dtype=np.int32), "int32"))
    assert result.shape == () and result.dtype == np.int32 and int(result) == 7


def test_no_value_gives_float32_zeros():
    result = out(cos_example(9, [2, 3]))
    assert result.dtype == np.float32 and result.shape == (2, 3) and not result.any()


def test_zero_dim_gives_an_empty_tensor():
    assert out(cos_example(20, [2, 0, 3], np.array([1], dtype=np.int8), "int8")).shape == (2, 0, 3)


@pytest.mark.parametrize("np_type, name, opset", [(ml_dtypes.int4, "int4", 21), (ml_dtypes.float8_e4m3fn, "float8e4m3fn", 20),
                                                  (ml_dtypes.float4_e2m1fn, "float4e2m1", 23), (ml_dtypes.int2, "int2", 25)])
def test_output_dtype_is_the_value_dtype(np_type, name, opset):
    result = out(cos_example(opset, [3], np.array([1], dtype=np_type), name))
    assert result.dtype == np.dtype(np_type) and result.shape == (3,)


def test_negative_dim_is_invalid():
    result = for_op("ConstantOfShape").expected(cos_example(9, [2, -1], np.array([1.0], dtype=np.float32)))
    assert result.invalid.rule == "negative-dim"


def test_value_with_two_elements_is_invalid():
    result = for_op("ConstantOfShape").expected(cos_example(9, [2], np.array([1.0, 2.0], dtype=np.float32)))
    assert result.invalid.rule == "value-not-one-element"
