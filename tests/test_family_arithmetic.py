"""The arithmetic declarations' own logic: exact integer powers and their stand-ins, Mod's floor
remainder and its special cases, integer division by zero, and the traits for expectations."""

from __future__ import annotations

import math

import numpy as np

from conformance.case import Example
from conformance.reference import arithmetic as ar
from conformance.reference.elementwise import SATURATED, WRAPPED, answer
from conformance.registry import versions


def example(op: str, since: int, types: dict, attributes: dict | None = None, **inputs) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    param = version.inputs[0].type_param
    return Example(version, "unit", dict(types), dict(inputs), dict(attributes or {}), "unit", param)


def by_label(expected) -> dict[str, list]:
    return {r.label: r.outputs[0].tolist() for r in expected.readings}


def test_huge_integer_power_keeps_sign_and_low_bits():
    stand_in = ar._integer_power(3, 1000)
    assert stand_in > 2 ** 64 and stand_in % 2 ** 64 == pow(3, 1000, 2 ** 64)
    negative = ar._integer_power(-3, 1001)
    assert negative < -(2 ** 64) and negative % 2 ** 64 == (-(3 ** 1001)) % 2 ** 64


def test_negative_integer_exponents():
    assert ar._integer_power(2, -1) == 0  # 0.5 truncated
    assert ar._integer_power(-1, -3) == -1
    assert ar._integer_power(1, -(2 ** 62)) == 1
    assert ar._integer_power(2, -(2 ** 62)) == 0
    assert ar._integer_power(0, -1) == ar.NOT_FINITE


def test_integer_pow_with_fractional_exponent_has_truncated_and_rounded_readings():
    found = answer(ar.POW, example("Pow", 15, {"T": "int32", "T1": "float"},
                                   X=np.array([2, 9], np.int32), Y=np.array([0.5, 0.5], np.float32)))
    assert list(by_label(found).values()) == [[1, 3]]  # 1.41 and 3.0: truncating and rounding agree
    rounded = answer(ar.POW, example("Pow", 15, {"T": "int32", "T1": "float"},
                                     X=np.array([3], np.int32), Y=np.array([0.5], np.float32)))
    assert by_label(rounded) == {ar.POW.label: [1], ar.ROUNDED: [2]}  # sqrt(3) = 1.73


def test_integer_pow_of_zero_to_minus_one_may_be_rejected_and_names_x86():
    found = answer(ar.POW, example("Pow", 15, {"T": "int32", "T1": "int32"},
                                   X=np.array([0], np.int32), Y=np.array([-1], np.int32)))
    assert found.may_reject
    assert by_label(found)[ar.INDEFINITE] == [-2 ** 31]


def test_floor_mod_special_cases():
    a = np.array([7.5, -7.5, 0.0, -0.0, 3.0, -3.0, np.inf, 3.0])
    b = np.array([-2.0, 2.0, -2.0, 2.0, -np.inf, np.inf, 2.0, 0.0])
    got = ar._floor_mod(a, b)
    assert got[:2].tolist() == [-0.5, 0.5]
    assert math.copysign(1, got[2]) == -1 and math.copysign(1, got[3]) == 1
    assert got[4] == -np.inf and got[5] == np.inf
    assert np.isnan(got[6]) and np.isnan(got[7])


def test_integer_mod_by_zero_names_dividend_and_zero_readings():
    found = answer(ar.MOD, example("Mod", 13, {"T": "int32"}, A=np.array([7, 8], np.int32), B=np.array([0, 3], np.int32)))
    assert found.may_reject
    assert sorted(by_label(found).values()) == [[0, 2], [7, 2]]


def test_integer_division_by_zero_readings_and_truncation():
    found = answer(ar.DIV, example("Div", 14, {"T": "int8"}, A=np.array([7, -7], np.int8), B=np.array([0, 2], np.int8)))
    assert found.may_reject
    assert sorted(by_label(found).values()) == [[-1, -3], [0, -3]]


def test_div_6_allows_floor_division_beside_truncation():
    found = answer(ar.DIV, example("Div", 6, {"T": "int32"}, A=np.array([-7], np.int32), B=np.array([2], np.int32)))
    assert sorted(by_label(found).values()) == [[-4], [-3]]


def test_traits():
    lowest = example("Div", 14, {"T": "int32"}, A=np.array([-2 ** 31], np.int32), B=np.array([-1], np.int32))
    assert ar.DIV.traits["integer-int-min-by-minus-one"](lowest)
    unused = example("Div", 14, {"T": "int32"}, A=np.zeros((2, 0), np.int32), B=np.array(0, np.int32))
    assert ar.DIV.traits["integer-zero-divisor-unused"](unused)
    big = example("Mod", 10, {"T": "int64"}, {"fmod": 1}, A=np.array([2 ** 53 + 1], np.int64), B=np.array([10], np.int64))
    assert ar.MOD.traits["int64-fmod-beyond-2**53"](big)
    overflow = example("Pow", 15, {"T": "int32", "T1": "int32"}, X=np.array([3], np.int32), Y=np.array([30], np.int32))
    assert ar.POW.traits["integer-power-beyond-type"](overflow)
    assert not ar.POW.traits["int64-power-beyond-2**53"](overflow)


# --- Pow: C99 and IEEE 754 special values, and what numpy's code path must not decide ---

def _float16_bits(*bits: int) -> np.ndarray:
    return np.array(bits, np.uint16).view(np.float16)


def test_pow_of_a_signalling_nan_to_the_power_zero_is_one():
    # C99 F.10.4.4: pow(x, +-0) is 1 for any x, even a NaN (numpy's widened float16 sNaN gave NaN);
    # IEEE 754-2019 9.2.1 says so of a quiet NaN only: NaN for a signalling one is a named reading.
    found = answer(ar.POW, example("Pow", 12, {"T": "float16", "T1": "int32"},
                                   X=_float16_bits(0x7CDC), Y=np.array([0], np.int32)))
    assert found.readings[0].outputs[0].tolist() == [1.0]
    assert math.isnan(by_label(found)[ar.SIGNALLING_NAN][0])


def test_pow_of_one_to_any_power_is_one_a_signalling_nan_too():
    exponents = np.concatenate([_float16_bits(0x7CDC), np.array([np.nan, -np.inf], np.float16)])
    found = answer(ar.POW, example("Pow", 15, {"T": "float16", "T1": "float16"},
                                   X=np.ones(3, np.float16), Y=exponents))
    assert found.readings[0].outputs[0].tolist() == [1.0, 1.0, 1.0]
    signalling = by_label(found)[ar.SIGNALLING_NAN]
    assert math.isnan(signalling[0]) and signalling[1:] == [1.0, 1.0]  # a quiet NaN gives 1 in every reading


def test_minus_infinity_to_a_non_integer_power_is_c99s_or_nan():
    found = answer(ar.POW, example("Pow", 15, {"T": "float", "T1": "float"},
                                   X=np.full(3, -np.inf, np.float32), Y=np.array([0.5, -1.5, 2.0], np.float32)))
    assert found.readings[0].outputs[0].tolist() == [math.inf, 0.0, math.inf]  # C99 F.10.4.4
    real = by_label(found)[ar.NEGATIVE_INFINITY_REAL]
    assert math.isnan(real[0]) and math.isnan(real[1]) and real[2] == math.inf  # 2 is an integer: +inf in both


def test_an_integer_power_beyond_the_type_may_be_x86s_integer_indefinite():
    found = answer(ar.POW, example("Pow", 15, {"T": "int32", "T1": "int32"},
                                   X=np.array([3, 2], np.int32), Y=np.array([30, 3], np.int32)))
    exact = 3 ** 30
    wrapped = (exact + 2 ** 31) % 2 ** 32 - 2 ** 31
    assert by_label(found) == {WRAPPED: [wrapped, 8], SATURATED: [2 ** 31 - 1, 8], ar.INDEFINITE: [-2 ** 31, 8]}


def test_an_integer_base_to_a_negative_integer_power_may_be_rejected():
    found = answer(ar.POW, example("Pow", 15, {"T": "int32", "T1": "int64"},
                                   X=np.array([2, 3], np.int32), Y=np.array([-1, 2], np.int64)))
    assert found.may_reject == ar.NEGATIVE_INTEGER_EXPONENT
    assert by_label(found) == {"spec": [0, 9]}  # 1/2 truncates (and rounds half to even) to 0
    as_float = answer(ar.POW, example("Pow", 15, {"T": "int32", "T1": "float"},
                                      X=np.array([2], np.int32), Y=np.array([-1.0], np.float32)))
    assert as_float.may_reject is None  # numpy takes a float exponent: onnx.reference answers it


def test_an_integral_float_exponent_of_an_integer_base_is_exact():
    found = answer(ar.POW, example("Pow", 15, {"T": "int64", "T1": "double"},
                                   X=np.array([2 ** 53 + 1], np.int64), Y=np.array([1.0])))
    assert found.readings[0].outputs[0].tolist() == [2 ** 53 + 1]  # float64's pow gives 2**53
