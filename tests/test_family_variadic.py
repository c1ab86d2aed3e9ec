"""The variadic declarations' own logic: Sum and Mean exact or left to right, Max and Min with NaN
and signed zeros, and their traits for expectations."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from conformance.case import Example
from conformance.reference import variadic as va
from conformance.reference.elementwise import answer
from conformance.registry import versions


def example(op: str, since: int, dtype: str, *arrays: np.ndarray) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    formal = version.inputs[0]
    inputs = {formal.instance(k): a for k, a in enumerate(arrays)}
    return Example(version, "unit", {formal.type_param: dtype}, inputs, {}, "unit", formal.type_param)


def by_label(expected) -> dict[str, list]:
    return {r.label: r.outputs[0].tolist() for r in expected.readings}


def f32(*values) -> np.ndarray:
    return np.array(values, np.float32)


def test_sum_exact_once_and_left_to_right_differ_on_cancellation():
    big = float(np.finfo(np.float32).max)
    found = by_label(answer(va.SUM, example("Sum", 13, "float", f32(big), f32(big), f32(-big))))
    assert found[va.SUM.label] == [big]
    assert found[va.LEFT_TO_RIGHT] == [math.inf]


def test_sum_is_exact_beyond_float64():
    # 1 + 2**-60 - 1 in float64 steps is 0; exactly it is 2**-60.
    found = answer(va.SUM, example("Sum", 13, "double", np.array([1.0]), np.array([2.0 ** -60]), np.array([-1.0])))
    assert by_label(found)[va.SUM.label] == [2.0 ** -60]


def test_mean_rounds_once():
    found = by_label(answer(va.MEAN, example("Mean", 13, "float", f32(7.0), f32(0.0), f32(0.0))))
    assert found[va.MEAN.label] == [float(np.float32(7 / 3))]


def test_max_nan_readings():
    found = by_label(answer(va.MAX, example("Max", 13, "float", f32(np.nan, 1.0), f32(2.0, np.nan))))
    assert all(math.isnan(v) for v in found[va.MAX.label])
    assert found[va.NAN_IGNORED] == [2.0, 1.0]


def test_signed_zeros():
    first = answer(va.MAX, example("Max", 13, "float", f32(-0.0), f32(0.0)))
    assert math.copysign(1, first.readings[0].outputs[0][0]) == 1  # +0 above -0
    assert len(first.readings) == 2  # and either zero, as a named reading
    lowest = answer(va.MIN, example("Min", 13, "float", f32(0.0), f32(-0.0)))
    assert math.copysign(1, lowest.readings[0].outputs[0][0]) == -1


def test_traits():
    assert va.MEAN.traits["mean-count-not-power-of-two"](example("Mean", 13, "float", f32(1), f32(2), f32(3)))
    assert not va.MEAN.traits["mean-count-not-power-of-two"](example("Mean", 13, "float", f32(1), f32(2)))
    wide = example("Max", 13, "int64", np.array([2 ** 32], np.int64), np.array([1], np.int64))
    assert va.MAX.traits["int64-beyond-int32"](wide)
    assert not va.MIN.traits["int64-beyond-int32"](example("Min", 13, "int64", np.array([5], np.int64)))


def test_a_signalling_nan_is_ignored_too_where_nan_is_ignored():
    # tract's Min(-9.1796875, float16 0x7c56) gives -9.1796875 (IEEE 754-2019 minimumNumber); numpy's
    # fmin, like 754-2008 minNum, gives NaN for a signalling NaN, which left tract's answer no reading.
    signalling = np.array([0x7C56], np.uint16).view(np.float16)
    found = by_label(answer(va.MIN, example("Min", 13, "float16", np.array([-9.1796875], np.float16), signalling)))
    assert found[va.NAN_IGNORED] == [-9.1796875]


def _nearest(value: Fraction, np_dtype) -> float:
    """The value of `np_dtype` nearest to an exact one, ties to the even bit pattern: found among
    the neighbours of a close guess by their bit patterns (16- and 32-bit types)."""
    bits_type = np.uint16 if np.dtype(np_dtype).itemsize == 2 else np.uint32
    guess = int(np.array(float(value)).astype(np_dtype).view(bits_type))  # any nearby value
    neighbours = [np.array(guess + step, bits_type).view(np_dtype) for step in (-1, 0, 1)]  # positive values only
    best = min(neighbours, key=lambda c: (abs(Fraction(float(c)) - value), int(c.view(bits_type)) & 1))
    return float(best)


def test_sum_of_three_rounds_the_exact_sum_once():
    # 1 + 2**-24 + 2**-80 is just above the tie 1 + 2**-24: float64 first lands on the tie, then 1.0.
    exact = Fraction(1) + Fraction(2) ** -24 + Fraction(2) ** -80
    found = by_label(answer(va.SUM, example("Sum", 13, "float", f32(1.0), f32(2.0 ** -24), f32(2.0 ** -80))))
    assert found[va.SUM.label] == [_nearest(exact, np.float32)] == [1.0000001192092896]
    assert found[va.LEFT_TO_RIGHT] == [1.0]


def test_sum_of_three_bfloat16_rounds_the_exact_sum_once():
    import ml_dtypes

    exact = Fraction(1) + Fraction(2) ** -8 + Fraction(2) ** -80
    values = [np.array([v], ml_dtypes.bfloat16) for v in (1.0, 2.0 ** -8, 2.0 ** -80)]
    found = by_label(answer(va.SUM, example("Sum", 13, "bfloat16", *values)))
    assert found[va.SUM.label] == [_nearest(exact, ml_dtypes.bfloat16)] == [1.0078125]


def test_mean_rounds_the_exact_mean_once():
    exact = (Fraction(4) + Fraction(2) ** -22 + Fraction(2) ** -78) / 4
    found = by_label(answer(va.MEAN, example("Mean", 13, "float", f32(4.0), f32(2.0 ** -22), f32(2.0 ** -78), f32(0.0))))
    assert found[va.MEAN.label] == [_nearest(exact, np.float32)] == [1.0000001192092896]
    assert 1.0 in {v[0] for v in found.values()}  # 4 + 2**-22 in float is the tie 4, left to right
