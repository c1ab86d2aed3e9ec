"""The trigonometric declarations' own logic: the float32-near-half trait Asin and Acos declare,
float64's precise values from mpmath, and the IEEE 754 values at the domains' edges (values
computed by hand, or known to more digits than float64 holds)."""

import math

import numpy as np
import pytest

from conformance.case import Example
from conformance.dtypes import dtype
from conformance.reference import for_op
from conformance.registry import version_in_force


def example(op, opset, values, type_name):
    version = version_in_force(op, opset)
    array = np.asarray(values, dtype=dtype(type_name).np_dtype)
    return Example(version, "t", {"T": type_name}, {"input": array}, {}, "test", "T")


def expected(example_):
    result = for_op(example_.op).expected(example_)
    assert result.is_valid, result.invalid
    assert len(result.readings) == 1
    return result


@pytest.mark.parametrize("values, type_name, near", [
    ([0.5], "float", True), ([-0.6, 0.9], "float", True), ([0.46], "float", True), ([0.44, 0.66], "float", False),
    ([0.5], "float16", False), ([0.5], "double", False),
])
def test_float32_near_half_trait(values, type_name, near):
    for op in ("Asin", "Acos"):
        assert for_op(op).traits["float32-near-half"](example(op, 13, values, type_name)) is near


@pytest.mark.parametrize("values, type_name, beyond", [
    ([3.0], "double", True), ([0.0, 2.0 ** -27, math.nan, math.inf], "double", False), ([2.0 ** -26], "double", True),
    ([3.0], "float", False),
])
def test_float64_beyond_tiny_trait(values, type_name, beyond):
    for op in ("Sin", "Cos"):
        assert for_op(op).traits["float64-beyond-tiny"](example(op, 7, values, type_name)) is beyond


def test_float64_sine_of_pi_is_mpmath_precise():
    # sin(fl(pi)) = pi - fl(pi) (to float64: 1.2246467991473532e-16); sin(2.5) = 0.59847214410395649...
    result = expected(example("Sin", 7, [math.pi, 2.5], "double"))
    precise = result.readings[0].precise[0]
    assert precise[0] == 1.2246467991473532e-16
    assert precise[1] == 0.5984721441039565
    assert result.budgets[0].ulps == 2.5  # libmvec's and CUDA's sin: 2 ULP from the rounded value


@pytest.mark.parametrize("op, values, output", [
    ("Atanh", [1.0, -1.0], [math.inf, -math.inf]),
    ("Acos", [1.0], [0.0]),
    ("Acosh", [1.0, 0.5], [0.0, math.nan]),
    ("Asin", [1.5, -2.0], [math.nan, math.nan]),
    ("Sin", [math.inf, -0.0], [math.nan, -0.0]),
])
def test_domain_edges(op, values, output):
    got = expected(example(op, 22, values, "float")).readings[0].outputs[0]
    np.testing.assert_array_equal(got, np.asarray(output, dtype=np.float32))
    numbers = ~np.isnan(got)  # a NaN's sign bit is free
    assert list(np.signbit(got[numbers])) == list(np.signbit(np.asarray(output)[numbers]))


def test_sixteen_bit_types_admit_a_native_kernel_one_ulp_from_the_rounded_value():
    assert expected(example("Cosh", 22, [1.0], "bfloat16")).budgets[0].ulps == 1.5
    assert expected(example("Cosh", 22, [1.0], "float16")).budgets[0].ulps == 1.5
    assert expected(example("Cosh", 22, [1.0], "float")).budgets[0].ulps == 3
