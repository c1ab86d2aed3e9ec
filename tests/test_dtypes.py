"""The dtype registry: every dtype any covered version allows, with its limits."""

import math

import numpy as np
import pytest

from conformance.dtypes import dtype
from conformance.errors import UsageError
from conformance.reference import covered_ops
from conformance.registry import versions


def all_allowed_dtypes():
    return sorted({name for op in covered_ops() for v in versions(op) for _, names in v.type_constraints for name in names})


@pytest.mark.parametrize("name", all_allowed_dtypes())
def test_every_allowed_dtype_maps_to_a_numpy_type(name):
    dt = dtype(name)
    assert dt.name == name
    np.zeros(2, dtype=dt.np_dtype)  # constructible


def test_the_issue_list_of_dtypes_is_covered():
    wanted = {"bool", "string", "complex64", "complex128", "int4", "uint4", "int2", "uint2", "float16", "bfloat16",
              "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "float8e8m0", "float4e2m1"}
    assert wanted <= set(all_allowed_dtypes())


@pytest.mark.parametrize(
    "name, lowest, highest",
    [("int4", -8, 7), ("uint4", 0, 15), ("int2", -2, 1), ("uint2", 0, 3), ("uint64", 0, 2**64 - 1), ("int8", -128, 127)],
)
def test_integer_limits(name, lowest, highest):
    assert (dtype(name).lowest, dtype(name).max) == (lowest, highest)


@pytest.mark.parametrize(
    "name, largest, has_inf, has_nan, has_negative_zero",
    [
        ("float8e4m3fn", 448.0, False, True, True),
        ("float8e4m3fnuz", 240.0, False, True, False),
        ("float8e5m2", 57344.0, True, True, True),
        ("float8e5m2fnuz", 57344.0, False, True, False),
        ("float4e2m1", 6.0, False, False, True),
        ("float16", 65504.0, True, True, True),
    ],
)
def test_float_limits_and_special_values(name, largest, has_inf, has_nan, has_negative_zero):
    dt = dtype(name)
    assert float(dt.max) == largest
    assert (dt.has_inf, dt.has_nan, dt.has_negative_zero) == (has_inf, has_nan, has_negative_zero)


def test_float8e8m0_is_unsigned_powers_of_two():
    dt = dtype("float8e8m0")
    assert float(dt.lowest) == 2.0**-127 and float(dt.max) == 2.0**127


def test_aliases_and_unknown_names():
    assert dtype("float32").name == "float" and dtype("tensor(double)").name == "double"
    with pytest.raises(UsageError, match="unknown dtype 'float33'"):
        dtype("float33")


def test_smallest_subnormal_of_float16():
    assert float(dtype("float16").smallest_subnormal) == math.ldexp(1, -24)
