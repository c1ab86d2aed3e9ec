"""The unary math declarations' own logic: their draw hook, Sign's and Erf's readings, and the
onnxruntime trait Sign declares (values computed by hand from the texts)."""

import math

import numpy as np
import pytest

from conformance.case import Example
from conformance.dtypes import dtype
from conformance.reference import for_op
from conformance.reference.math_unary import ROUNDING_DOMAINS, drawn_within, int64_low_word_sign_bit
from conformance.registry import version_in_force
from conformance.strategies.common import Choices


def example(op, opset, values, type_name, input_name="input"):
    version = version_in_force(op, opset)
    array = np.asarray(values, dtype=dtype(type_name).np_dtype)
    return Example(version, "t", {"T": type_name}, {input_name: array}, {}, "test", "T")


def labelled(example_):
    result = for_op(example_.op).expected(example_)
    assert result.is_valid, result.invalid
    return {r.label: r.outputs[0] for r in result.readings}


def test_sign_nan_and_negative_zero_have_both_readings():
    found = labelled(example("Sign", 13, [math.nan, -0.0, 2.0], "float"))
    assert len(found) == 3
    values = list(found.values())
    assert np.isnan(values[0][0]) and not np.signbit(values[0][1])  # NaN propagates, +0
    assert any(v[0] == 0 for v in values)  # NaN gives 0
    assert any(np.signbit(v[1]) for v in values)  # -0.0 kept
    assert all(v[2] == 1 for v in values)


def test_sign_integers_have_one_reading():
    found = labelled(example("Sign", 13, [-5, 0, 2**40], "int64"))
    assert len(found) == 1
    np.testing.assert_array_equal(next(iter(found.values())), [-1, 0, 1])


def test_erf9_integers_name_every_conversion():
    found = labelled(example("Erf", 9, [0, 1, -4, 6], "int32"))
    outputs = sorted(tuple(int(v) for v in out) for out in found.values())
    # truncated: all 0; nearest: sign; float32 erf truncated: |x| >= 4; float64: |x| >= 6
    assert outputs == sorted([(0, 0, 0, 0), (0, 1, -1, 1), (0, 0, -1, 1), (0, 0, 0, 1)])


def test_erf_floats_have_one_reading_and_a_budget():
    result = for_op("Erf").expected(example("Erf", 13, [0.5, -0.0], "float"))
    assert len(result.readings) == 1 and result.budgets[0].ulps == 2.5  # CUDA's erff: 2 ULP from the rounded value
    assert result.readings[0].outputs[0][0] == np.float32(math.erf(0.5))


@pytest.mark.parametrize("values, expected", [
    ([0, 2**31], True), ([2**32 - 1, 5], True), ([2**31], False), ([2**32, -(2**31) - 1], False), ([1, 2], False),
])
def test_int64_low_word_sign_bit(values, expected):
    assert int64_low_word_sign_bit(example("Sign", 13, values, "int64")) is expected


def test_low_word_trait_is_int64_only():
    assert not int64_low_word_sign_bit(example("Sign", 13, [0, 2**31], "uint64"))


def test_drawn_within_leaves_other_dtypes_to_the_family():
    draw = drawn_within({"float": (-1.0, 1.0)})
    assert draw(Choices(bytes(range(64))), dtype("int32"), (4,), 0) is None
    assert draw(Choices(bytes(range(64))), dtype("double"), (4,), 0) is None


def test_drawn_within_puts_most_values_inside_the_domain():
    draw = drawn_within({"float": (-1.0, 1.0)})
    inside = total = 0
    for seed in range(200):
        drawn = draw(Choices(np.random.default_rng(seed).bytes(256)), dtype("float"), (16,), 0)
        if drawn is None:
            continue
        assert drawn.dtype == np.float32 and drawn.shape == (16,)
        total += drawn.size
        inside += int(((drawn >= -1) & (drawn <= 1)).sum())
    assert total > 0 and inside / total > 0.6


def test_rounding_draws_give_halves():
    draw = drawn_within(ROUNDING_DOMAINS, lambda rng, size: np.full(size, 2.5))
    halves = 0
    for seed in range(200):
        drawn = draw(Choices(np.random.default_rng(seed).bytes(256)), dtype("float16"), (8,), 0)
        if drawn is not None:
            halves += int((drawn == 2.5).sum())
    assert halves > 0
