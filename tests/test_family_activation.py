"""The activation declarations' own logic: readings they add, traits for expectations, PRelu-1/6's
slope rule, and the framework's precise value for a budgeted op's alternative reading."""

from __future__ import annotations

import math

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
