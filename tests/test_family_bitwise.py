"""The bitwise declarations' own logic: BitShift at every width and sign (values worked out by
hand from BitShift-28's text), BitShift-11's readings of a shift by the width or more, and the
"Right" spelling of its example; BitwiseNot at the type's width."""

from __future__ import annotations

import numpy as np

from conformance.case import Example
from conformance.reference import bitwise as bw
from conformance.reference.elementwise import ATTRIBUTE_OUT_OF_RANGE, answer
from conformance.registry import versions


def example(op: str, since: int, dtype: str, attributes: dict | None = None, **inputs) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    param = version.inputs[0].type_param
    return Example(version, "unit", {param: dtype}, dict(inputs), dict(attributes or {}), "unit", param)


def shift(since: int, dtype: str, direction: str, x: list, y: list):
    np_dtype = np.dtype(dtype)
    return answer(bw.BIT_SHIFT, example("BitShift", since, dtype, {"direction": direction},
                                        X=np.array(x, np_dtype), Y=np.array(y, np_dtype)))


def test_signed_right_shift_fills_with_the_sign_bit():
    found = shift(28, "int8", "RIGHT", [-128, -1, -5, 5], [1, 3, 1, 1])
    assert found.readings[0].outputs[0].tolist() == [-64, -1, -3, 2]


def test_signed_left_shift_discards_bits_past_the_sign_bit():
    found = shift(28, "int8", "LEFT", [64, 127, -128, -3], [1, 1, 1, 2])
    assert found.readings[0].outputs[0].tolist() == [-128, -2, 0, -12]


def test_negative_or_wide_amounts_give_the_sign_fill_alone():
    found = shift(28, "int16", "RIGHT", [-5, 5, -5, 5], [-1, -1, 16, 100])
    assert found.readings[0].outputs[0].tolist() == [-1, 0, -1, 0]
    assert shift(28, "int64", "LEFT", [-5, 5], [-1, 64]).readings[0].outputs[0].tolist() == [0, 0]


def test_uint64_shifts_keep_the_top_bit():
    found = shift(28, "uint64", "LEFT", [1, 2**64 - 1], [63, 63])
    assert found.readings[0].outputs[0].tolist() == [2**63, 2**63]
    assert shift(11, "uint64", "RIGHT", [2**64 - 1], [63]).readings[0].outputs[0].tolist() == [1]


def test_bitshift_11_wide_amount_has_both_named_readings_and_28_has_one():
    old = shift(11, "uint8", "RIGHT", [100, 3], [9, 1])
    assert {r.label: r.outputs[0].tolist() for r in old.readings} == {
        bw.BITS_MOVED_OUT: [0, 1], bw.AMOUNT_MODULO_WIDTH: [50, 1]}
    assert old.ambiguity and bw.WIDE_SHIFT_AMBIGUITY in old.ambiguity
    assert len(shift(28, "uint8", "RIGHT", [100, 3], [9, 1]).readings) == 1


def test_the_example_spelling_right_is_a_right_shift_only_in_version_11():
    old = shift(11, "uint8", "Right", [1, 4], [1, 1])
    assert old.readings[0].outputs[0].tolist() == [0, 2] and old.may_reject
    assert shift(28, "uint8", "Right", [1, 4], [1, 1]).invalid.rule == ATTRIBUTE_OUT_OF_RANGE
    assert shift(11, "uint8", "right", [1], [1]).invalid.rule == ATTRIBUTE_OUT_OF_RANGE


def test_wide_shift_trait():
    version = next(v for v in versions("BitShift") if v.since_version == 28)
    def has(y):
        return bw._any_wide_shift(Example(version, "unit", {"T": "int8"}, {"X": np.zeros(2, np.int8), "Y": np.array(y, np.int8)},
                                          {"direction": "LEFT"}, "unit", "T"))
    assert has([1, 8]) and has([-1, 0]) and not has([0, 7])


def test_bitwise_not_at_the_types_width():
    found = answer(bw.BITWISE_NOT, example("BitwiseNot", 18, "uint16", X=np.array([0, 65535, 1], np.uint16)))
    assert found.readings[0].outputs[0].tolist() == [65535, 0, 65534]
