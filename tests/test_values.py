"""Written values -> typed arrays: tokens, fit checks, ragged lists, generators."""

import math

import numpy as np
import pytest

from conformance.dtypes import dtype
from conformance.values import ValueProblem, to_array


def test_tokens_resolve_against_the_dtype():
    array = to_array(["nan", "-0.0", "max", "-inf", "tiny"], dtype("float16"))
    assert math.isnan(array[0]) and math.copysign(1, array[1]) < 0
    assert float(array[2]) == 65504.0 and array[3] == -np.inf and float(array[4]) == 2.0**-14


@pytest.mark.parametrize("name, top", [("int32", 2**31 - 1), ("int64", 2**63 - 1)])
def test_int_max_sentinel_follows_the_index_dtype(name, top):
    assert to_array(["INT_MAX", "INT_MIN"], dtype(name)).tolist() == [top, -top - 1]


@pytest.mark.parametrize("written, name, value", [
    ("1.0e10", "double", 1e10), ("1e-3", "float", np.float32(1e-3)), ("-2E3", "float16", -2000.0),
    (".5e1", "double", 5.0), ("1e3", "int32", 1000), ("9e18", "int64", 9 * 10**18), ("1.5e1", "uint8", 15),
])
def test_an_exponent_yaml_reads_as_text_is_the_number(written, name, value):
    # PyYAML reads 1e10 and 1.0e10 (no sign after the e) as strings: they were "unknown value name".
    assert to_array([written], dtype(name)).tolist() == [value]


def test_wide_integers_are_exact():
    assert to_array([2**64 - 1, 2**53 + 1], dtype("uint64")).tolist() == [2**64 - 1, 2**53 + 1]


@pytest.mark.parametrize(
    "value, name, message",
    [
        (300, "uint8", "does not fit uint8"),
        (-1, "uint4", "does not fit uint4"),
        (1.5, "int32", "not an integer"),
        ("1.5e0", "int32", "not an integer"),
        ("1e20", "uint64", "does not fit uint64"),
        ("1.0e10", "float16", "does not fit float16"),
        ("nan", "float4e2m1", "unknown value name 'nan'"),
        ("inf", "float8e4m3fn", "unknown value name 'inf'"),
        (1e6, "float16", "does not fit float16"),
        ([[1], [1, 2]], "float", "ragged"),
        (3, "string", "not a string"),
        ("yes", "bool", "not a bool"),
    ],
)
def test_values_that_do_not_fit_are_refused(value, name, message):
    with pytest.raises(ValueProblem, match=message):
        to_array(value, dtype(name))


def test_generators_give_the_shape_and_are_seeded():
    a = to_array({"shape": [2, 3], "random": [-5, 5]}, dtype("int32"), rng_seed=7)
    b = to_array({"shape": [2, 3], "random": [-5, 5]}, dtype("int32"), rng_seed=7)
    assert a.shape == (2, 3) and (a == b).all() and a.min() >= -5 and a.max() <= 5
    assert to_array({"shape": [2, 0], "fill": 1}, dtype("bfloat16")).shape == (2, 0)
    assert to_array({"shape": [4], "values": "arange"}, dtype("string")).tolist() == ["s0", "s1", "s2", "s3"]


def test_generator_with_unknown_key_is_refused():
    with pytest.raises(ValueProblem, match="unknown generator key"):
        to_array({"shape": [2], "fil": 1}, dtype("float"))


def test_minus_max_names_the_negated_max_of_a_signed_integer_type_and_fits_no_unsigned_one():
    from conformance.dtypes import dtype
    from conformance.values import ValueProblem, _int_token

    assert _int_token("-max", dtype("int32")) == -(2 ** 31 - 1)
    assert _int_token("-max", dtype("int8")) == -127
    with pytest.raises(ValueProblem, match="does not fit uint8"):
        _int_token("-max", dtype("uint8"))
