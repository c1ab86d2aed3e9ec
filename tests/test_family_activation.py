"""The activation declarations' own logic: readings they add, traits for expectations, PRelu-1/6's
slope rule, and the framework's precise value for a budgeted op's alternative reading."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from conformance.case import Example
from conformance.precision import check
from conformance.reference import activation as act
from conformance.reference.elementwise import answer
from conformance.registry import versions


def example(op: str, since: int, dtype: str, attributes: dict | None = None, **inputs) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    param = version.inputs[0].type_param
    return Example(version, "unit", {param: dtype}, dict(inputs), dict(attributes or {}), "unit", param)


def labels_and_values(expected) -> dict[str, list]:
    return {r.label: r.outputs[0].tolist() for r in expected.readings}


def test_softsign_infinity_has_the_limit_and_ieee_nan_readings():
    found = answer(act.SOFTSIGN, example("Softsign", 22, "float", input=np.array([np.inf, -np.inf, 1.0], np.float32)))
    values = labels_and_values(found)
    assert values[act.LIMIT][:2] == [1.0, -1.0]
    assert all(math.isnan(v) for v in values[act.IEEE_NAN][:2])


def test_a_budgeted_alternative_is_judged_against_its_own_special_values():
    found = answer(act.SOFTSIGN, example("Softsign", 22, "float", input=np.array([np.inf, 3.0], np.float32)))
    nan_reading = next(r for r in found.readings if r.label == act.IEEE_NAN)
    actual = np.array([np.nan, 0.75], np.float32)
    assert check(nan_reading.precise[0], nan_reading.outputs[0], actual, found.budgets[0]).passed
    limit = next(r for r in found.readings if r.label == act.LIMIT)
    assert not check(limit.precise[0], limit.outputs[0], actual, found.budgets[0]).passed


def test_shrink_fractional_bias_on_integers_names_each_rounding():
    found = answer(act.SHRINK, example("Shrink", 9, "int32", {"lambd": 1.0, "bias": 0.5}, input=np.array([6, -6], np.int32)))
    outputs = sorted(tuple(v) for v in labels_and_values(found).values())
    # 6 - 0.5 = 5.5: toward zero 5; to nearest even 6; bias truncated to 0 first: 6.
    assert outputs == [(5, -5), (6, -6)]


def test_shrink_negative_lambd_takes_the_first_branch():
    found = answer(act.SHRINK, example("Shrink", 9, "float", {"lambd": -1.0, "bias": 1.0}, input=np.array([0.5], np.float32)))
    assert found.readings[0].outputs[0].tolist() == [1.5]  # 0.5 < 1 (x < -lambd): x + bias


def test_hard_sigmoid_has_the_two_roundings_reading_where_the_sum_cancels():
    x = np.array([-2.4999], np.float32)
    found = answer(act.HARD_SIGMOID, example("HardSigmoid", 22, "float", X=x))
    unfused = np.maximum(np.float32(0), np.float32(0.2) * x + np.float32(0.5))
    assert len(found.readings) == 2
    assert found.readings[1].outputs[0].tolist() == unfused.tolist()
    assert found.readings[0].outputs[0].tolist() != unfused.tolist()


def test_prelu_6_slope_is_the_shape_of_x_or_shared():
    x = np.full((2, 3), -1.0, np.float32)
    per_channel = answer(act.PRELU, example("PRelu", 6, "float", X=x, slope=np.array([1, 2, 3], np.float32)))
    shared = answer(act.PRELU, example("PRelu", 6, "float", X=x, slope=np.array([2], np.float32)))
    assert per_channel.invalid is not None and per_channel.invalid.rule == "shapes-not-broadcastable"
    assert shared.readings[0].outputs[0].tolist() == [[-2.0] * 3] * 2


def test_exp_minus_one_trait_follows_x_over_alpha():
    negative_alpha = example("Celu", 12, "float", {"alpha": -1.0}, X=np.array([-1e-20], np.float32))
    large = example("Elu", 22, "float", X=np.array([-3.0, 2.0], np.float32))
    small = example("Elu", 22, "float", X=np.array([-0.25], np.float32))
    assert act.exp_minus_one_cancels(negative_alpha)
    assert not act.exp_minus_one_cancels(large)
    assert act.exp_minus_one_cancels(small)


def test_shrink_beyond_float32_trait():
    assert act.shrink_beyond_float32(example("Shrink", 9, "int32", input=np.array([16777217], np.int32)))
    assert not act.shrink_beyond_float32(example("Shrink", 9, "int32", input=np.array([5, -7], np.int32)))
    assert not act.shrink_beyond_float32(example("Shrink", 9, "float", input=np.array([1e30], np.float32)))


def test_gelu_negative_tail_is_the_function_not_its_cancelling_form():
    found = answer(act.GELU, example("Gelu", 20, "double", X=np.array([-10.0])))
    # x * Phi(x) at -10: -10 * 7.619853024160526e-24
    assert math.isclose(found.readings[0].precise[0][0], -7.619853024160526e-23, rel_tol=1e-12)


# --- rounded once from the exact value ---

def _clamped01(value: Fraction) -> Fraction:
    return min(max(value, Fraction(0)), Fraction(1))


def _float32_nearest(value: Fraction) -> float:
    """The float nearest to an exact value, ties to even: the two floats around it, by bit pattern."""
    low = np.float32(float(value))
    below = low if Fraction(float(low)) <= value else np.nextafter(low, np.float32(-np.inf))
    above = np.nextafter(below, np.float32(np.inf))
    d_below, d_above = value - Fraction(float(below)), Fraction(float(above)) - value
    if d_below != d_above:
        return float(below if d_below < d_above else above)
    return float(below if int(np.array(below).view(np.uint32)) % 2 == 0 else above)


def test_hard_sigmoid_double_is_the_fused_value_rounded_once():
    # float64 rounds alpha * x, then the sum: 2.2e11 ULP off at x = -2.4999999627443743.
    x = np.concatenate([[-2.4999999627443743], np.random.default_rng(5).uniform(-3.0, 3.0, 300)])
    alpha, beta = Fraction(float(np.float32(0.2))), Fraction(float(np.float32(0.5)))
    exact = [float(_clamped01(alpha * Fraction(v) + beta)) for v in x]  # float(Fraction) rounds once
    found = answer(act.HARD_SIGMOID, example("HardSigmoid", 22, "double", X=x))
    assert found.readings[0].outputs[0].tolist() == exact
    assert exact[0] == 5.446532195349202e-13


def test_hard_swish_double_is_the_exact_value_rounded_once():
    x = np.random.default_rng(6).uniform(-3.5, 3.5, 300)
    exact = [float(Fraction(v) * _clamped01(Fraction(v) / 6 + Fraction(1, 2))) for v in x]
    assert answer(act.HARD_SWISH, example("HardSwish", 22, "double", X=x)).readings[0].outputs[0].tolist() == exact


def test_hard_swish_float_subnormals_leave_the_false_tie():
    # x/2 + x^2/6 for an odd multiple k of 2**-149 lies just beyond the tie k/2 (toward +inf).
    x = (np.array([5, -7, 1001, -1001, 3, 8388607]) * 2.0 ** -149).astype(np.float32)
    exact = [_float32_nearest(Fraction(float(v)) * _clamped01(Fraction(float(v)) / 6 + Fraction(1, 2))) for v in x]
    found = answer(act.HARD_SWISH, example("HardSwish", 22, "float", X=x))
    assert found.readings[0].outputs[0].astype(np.float64).tolist() == exact
    assert exact[:2] == [3 * 2.0 ** -149, -3 * 2.0 ** -149]


def test_hard_swish_fused_reading_rounds_the_multiply_add_once():
    x = -2.7541588563828316  # where fl(fl(s * x) + 0.5) and fma(s, x, 0.5) differ, s = float32(1/6)
    inner = float(Fraction(float(np.float32(1 / 6))) * Fraction(x) + Fraction(1, 2))
    found = labels_and_values(answer(act.HARD_SWISH, example("HardSwish", 22, "double", X=np.array([x]))))
    assert found["x * HardSigmoid<alpha=float32(1/6)>(x), fused multiply-add"] == [x * min(max(inner, 0.0), 1.0)]


def test_a_subnormal_double_precise_value_is_rounded_once():
    # gamma * x just above a tie of the subnormal grid: mpmath's float() rounded it to 53 bits
    # (onto the tie), and the subnormal range rounded it to even.
    x = 3.1249467960370603e-308
    exact = Fraction(float(np.float32(0.6))) * Fraction(x)
    nearest = round(exact / Fraction(2) ** -1074) * 2.0 ** -1074  # round(): half to even
    found = answer(act.SELU, example("Selu", 6, "double", {"gamma": 0.6}, X=np.array([x])))
    assert found.readings[0].precise[0].tolist() == [nearest] == [1.8749681521267734e-308]


def test_rounds_to_one_rounds_bfloat16_once():
    import ml_dtypes

    # 1 - 2**-9 - 2**-40 is below the bfloat16 tie 1 - 2**-9 (nearest: 1 - 2**-8); through float32 it is the tie, then 1.
    bfloat16 = example("Softsign", 22, "bfloat16", input=np.array([1.0], ml_dtypes.bfloat16))
    assert not act._rounds_to_one(np.array([1 - 2.0 ** -9 - 2.0 ** -40]), bfloat16)
    assert act._rounds_to_one(np.array([1 - 2.0 ** -9]), bfloat16)  # the tie itself goes to even: 1
