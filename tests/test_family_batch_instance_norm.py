"""BatchNormalization and InstanceNormalization (reference/batch_normalization.py,
reference/instance_normalization.py) judged as a runtime's outputs would be: planted wrong
implementations fail (epsilon outside the root, statistics over the wrong axis, a variance over
n − 1, momentum applied the other way round), legal variants pass (the folded a·x + b inference
form, other summation orders, float16 computed in float32), exact data is judged bitwise, and what
the texts forbid is invalid with its sentence. Expected values come from plain numpy or Fraction
arithmetic here, not from the reference."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.dtypes import from_numpy
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(5)
F32 = np.float32


def bn_example(since: int, x, scale, bias, mean, var, outputs=(True, False, False), **attributes) -> Example:
    version = next(v for v in versions("BatchNormalization") if v.since_version == since)
    names = ("input_mean", "input_var") if since >= 14 else ("mean", "var")
    types = {"T": from_numpy(x.dtype).name}
    if since == 14:
        types["U"] = from_numpy(mean.dtype).name
    if since >= 15:
        types["T1"], types["T2"] = from_numpy(scale.dtype).name, from_numpy(mean.dtype).name
    inputs = {"X": x, "scale": scale, "B": bias, names[0]: mean, names[1]: var}
    if since < 14 and len(outputs) == 3:
        outputs = outputs + (False, False)
    return Example(version, "unit", types, inputs, attributes, "unit", "T", outputs=outputs)


def in_example(since: int, x, scale, bias, **attributes) -> Example:
    version = next(v for v in versions("InstanceNormalization") if v.since_version == since)
    inputs = {"input": x, "scale": scale, "B": bias}
    return Example(version, "unit", {"T": from_numpy(x.dtype).name}, inputs, attributes, "unit", "T")


def verdict(found: Example, *outputs):
    return judge(for_op(found.op).expected(found), RunOutput(outputs=tuple(np.asarray(o) for o in outputs)))


def outcome(found: Example, *outputs) -> str:
    return verdict(found, *outputs).outcome


def per_channel(p, rank):
    return p.reshape((1, -1) + (1,) * (rank - 2))


# --- inference: the text's order, the folded form, planted bugs ---

def bn_inference(x, scale, bias, mean, var, eps=1e-5, folded=False, epsilon_outside=False, axis=1):
    """Y in x's type, computed in float32 in the text's order or folded as a·x + c."""
    shape = [1] * x.ndim
    shape[axis] = -1
    s, b, m, v = (p.astype(F32).reshape(shape) for p in (scale, bias, mean, var))
    xf = x.astype(F32)
    if folded:
        a = (s / np.sqrt(v + F32(eps))).astype(F32)
        c = (b - m * a).astype(F32)
        return (a * xf + c).astype(x.dtype)
    root = (np.sqrt(v) + F32(eps)) if epsilon_outside else np.sqrt(v + F32(eps))
    return (((xf - m) / root) * s + b).astype(x.dtype)


def _inference_data(dtype=F32, c=3):
    x = (RNG.standard_normal((2, c, 4, 5)) * 3).astype(dtype)
    scale = RNG.uniform(0.5, 2.0, c).astype(dtype)
    bias = RNG.standard_normal(c).astype(dtype)
    mean = RNG.standard_normal(c).astype(dtype)
    var = RNG.uniform(0.001, 0.01, c).astype(dtype)
    return x, scale, bias, mean, var


@pytest.mark.parametrize("since", [7, 9, 14, 15])
@pytest.mark.parametrize("folded", [False, True])
def test_inference_in_the_texts_order_or_folded_passes(since, folded):
    x, scale, bias, mean, var = _inference_data()
    found = bn_example(since, x, scale, bias, mean, var, outputs=(True,) + (False,) * (2 if since >= 14 else 4))
    assert outcome(found, bn_inference(x, scale, bias, mean, var, folded=folded)) == PASS


def test_folded_form_near_a_large_mean_passes():
    """X close to a large mean: the folded form rounds at |X|, far beyond the text's |X − mean|."""
    x = (1000 + RNG.uniform(-1, 1, (2, 2, 6))).astype(F32)
    scale, bias = np.array([3.0, 0.5], F32), np.array([0.1, -0.2], F32)
    mean, var = np.array([1000.0, 1000.0], F32), np.array([0.01, 0.02], F32)
    found = bn_example(15, x, scale, bias, mean, var, outputs=(True, False, False))
    assert outcome(found, bn_inference(x, scale, bias, mean, var, folded=True)) == PASS
    assert outcome(found, bn_inference(x, scale, bias, mean, var)) == PASS


@pytest.mark.parametrize("bug", ["epsilon_outside", "wrong_axis"])
def test_inference_planted_bugs_fail(bug):
    x, scale, bias, mean, var = _inference_data(c=4)
    x = x[:, :, :4, :4]  # a square tail, so statistics laid along the last axis still broadcast
    eps = 1e-3  # beside a variance of 0.001..0.01, outside the root it moves Y by far more than a rounding
    found = bn_example(15, x, scale, bias, mean, var, outputs=(True, False, False), epsilon=eps)
    wrong = (bn_inference(x, scale, bias, mean, var, eps=eps, epsilon_outside=True) if bug == "epsilon_outside"
             else bn_inference(x, scale, bias, mean, var, eps=eps, axis=3))
    assert outcome(found, wrong) == FAIL


def test_unit_statistics_give_x_plus_b_bitwise():
    """var + epsilon = 1, scale 1, mean 0: every step is exact but the last add, so Y is X + B
    correctly rounded, and one ULP off does not pass (twice the bound: imprecise)."""
    x = (RNG.standard_normal((2, 2, 3)) * 10).astype(F32)
    bias = np.array([0.1, -3.3], F32)
    ones, zeros = np.ones(2, F32), np.zeros(2, F32)
    found = bn_example(15, x, ones, bias, zeros, np.full(2, 0.75, F32), outputs=(True, False, False), epsilon=0.25)
    exact = np.array([[[float(Fraction(float(v)) + Fraction(float(bias[c]))) for v in x[n, c]] for c in range(2)] for n in range(2)])
    right = exact.astype(F32)
    assert outcome(found, right) == PASS
    off = right.copy()
    off[0, 0, 0] = np.nextafter(off[0, 0, 0], F32(np.inf))
    assert outcome(found, off) != PASS


def test_powers_of_two_inference_checked_against_fractions():
    x = np.array([[[4.0, 0.0], [1.0, -1.0]]], F32)
    scale, bias = np.array([2.0, -0.5], F32), np.array([1.0, 0.25], F32)
    mean, var = np.array([2.0, -1.0], F32), np.array([4.0, 0.25], F32)
    found = bn_example(14, x, scale, bias, mean, var, outputs=(True, False, False), epsilon=0.0)
    roots = {4.0: Fraction(2), 0.25: Fraction(1, 2)}
    wanted = [[[float((Fraction(float(v)) - Fraction(float(mean[c]))) / roots[float(var[c])] * Fraction(float(scale[c]))
                      + Fraction(float(bias[c]))) for v in x[0, c]] for c in range(2)]]
    assert outcome(found, np.array(wanted, F32)) == PASS
    assert outcome(found, np.array(wanted, F32) + F32(2 ** -20)) == FAIL


def test_float16_inference_computed_in_float32_passes():
    x, scale, bias, mean, var = _inference_data(np.float16)
    found = bn_example(15, x, scale, bias, mean, var, outputs=(True, False, False))
    assert outcome(found, bn_inference(x, scale, bias, mean, var)) == PASS
    assert outcome(found, bn_inference(x, scale, bias, mean, var, folded=True)) == PASS


# --- training mode ---

def _sum_reversed(rows):
    total = rows[:, -1].copy()
    for k in range(rows.shape[1] - 2, -1, -1):
        total = (total + rows[:, k]).astype(rows.dtype)
    return total


def _sum_pairwise(rows):
    while rows.shape[1] > 1:
        half = rows.shape[1] // 2
        paired = (rows[:, :half] + rows[:, half:2 * half]).astype(rows.dtype)
        rows = np.concatenate([paired, rows[:, 2 * half:]], axis=1)
    return rows[:, 0]


def _sum_blocked(rows, block=8):
    partials = [_sum_reversed(rows[:, k:k + block])[:, None] for k in range(0, rows.shape[1], block)]
    return _sum_reversed(np.concatenate(partials, axis=1))


ORDERS = {"reversed": _sum_reversed, "pairwise": _sum_pairwise, "blocked": _sum_blocked}


def bn_training(x, scale, bias, mean, var, eps=1e-5, momentum=0.9, order=_sum_pairwise, acc=F32, unbiased=False,
                momentum_reversed=False, axis=1, folded=False):
    """Y, running_mean, running_var with statistics over every axis but `axis`, in `acc`."""
    moved = np.moveaxis(x.astype(acc), axis, 0)
    rows = moved.reshape(moved.shape[0], -1)
    n = rows.shape[1]
    m = (order(rows) / acc(n)).astype(acc)
    d = (rows - m[:, None]).astype(acc)
    v = (order((d * d).astype(acc)) / acc(n - 1 if unbiased else n)).astype(acc)
    inv = (acc(1) / np.sqrt(v + acc(eps))).astype(acc)
    s, b = scale.astype(acc)[:, None], bias.astype(acc)[:, None]
    if folded:
        a = (s * inv[:, None]).astype(acc)
        y_rows = (a * rows + (b - m[:, None] * a)).astype(acc)
    else:
        y_rows = (d * inv[:, None] * s + b).astype(acc)
    y = np.moveaxis(y_rows.reshape(moved.shape), 0, axis).astype(x.dtype)
    keep, take = (acc(1 - momentum), acc(momentum)) if momentum_reversed else (acc(momentum), acc(1 - momentum))
    running_mean = (mean.astype(acc) * keep + m * take).astype(mean.dtype)
    running_var = (var.astype(acc) * keep + v * take).astype(var.dtype)
    return y, running_mean, running_var


def _training_data(dtype=F32, c=3, n=4, tail=(3, 5)):
    x = (RNG.standard_normal((n, c) + tail) * 2 + RNG.standard_normal((1, c) + (1,) * len(tail))).astype(dtype)
    scale = RNG.uniform(0.5, 2.0, c).astype(dtype)
    bias = RNG.standard_normal(c).astype(dtype)
    mean = RNG.standard_normal(c).astype(dtype)
    var = RNG.uniform(0.5, 2.0, c).astype(dtype)
    return x, scale, bias, mean, var


@pytest.mark.parametrize("order", sorted(ORDERS))
@pytest.mark.parametrize("folded", [False, True])
def test_training_in_any_order_or_folded_passes(order, folded):
    x, scale, bias, mean, var = _training_data()
    found = bn_example(15, x, scale, bias, mean, var, outputs=(True, True, True), training_mode=1, momentum=0.8)
    assert outcome(found, *bn_training(x, scale, bias, mean, var, momentum=0.8, order=ORDERS[order], folded=folded)) == PASS


@pytest.mark.parametrize("bug", ["unbiased", "momentum_reversed", "wrong_axis", "epsilon_outside"])
def test_training_planted_bugs_fail(bug):
    # Small integers over n = 16 per channel: exactly summable, so the statistics are exact in any order.
    c = 4
    x = RNG.integers(-8, 9, (4, c, 2, 2)).astype(F32)
    scale, bias = np.array([1.0, 0.5, 2.0, -1.0], F32), np.array([0.0, 1.0, -1.0, 0.5], F32)
    mean, var = np.array([0.5, -1.0, 2.0, 0.0], F32), np.array([1.0, 2.0, 0.5, 4.0], F32)
    eps = 0.5
    found = bn_example(15, x, scale, bias, mean, var, outputs=(True, True, True), training_mode=1, momentum=0.75, epsilon=eps)
    assert outcome(found, *bn_training(x, scale, bias, mean, var, eps=eps, momentum=0.75)) == PASS
    if bug == "epsilon_outside":
        y, rm, rv = bn_training(x, scale, bias, mean, var, eps=0.0, momentum=0.75)
        moved = np.moveaxis(x, 1, 0).reshape(c, -1).astype(np.float64)
        mu, sd = moved.mean(axis=1), moved.std(axis=1)
        wrong_y = ((x - per_channel(mu, 4)) / (per_channel(sd, 4) + eps) * per_channel(scale, 4) + per_channel(bias, 4)).astype(F32)
        outputs = (wrong_y, rm, rv)
    elif bug == "wrong_axis":
        outputs = bn_training(x, scale, bias, mean, var, eps=eps, momentum=0.75, axis=0)
    else:
        outputs = bn_training(x, scale, bias, mean, var, eps=eps, momentum=0.75, **{bug: True})
    assert outcome(found, *outputs) == FAIL


def test_running_statistics_checked_against_fractions():
    x = np.array([[[1.0, 3.0], [0.0, 4.0]], [[1.0, 3.0], [4.0, 0.0]]], F32)
    scale, bias = np.array([1.0, 0.5], F32), np.array([0.0, 1.0], F32)
    mean, var = np.array([0.0, 1.0], F32), np.array([1.0, 2.0], F32)
    found = bn_example(14, x, scale, bias, mean, var, outputs=(True, True, True), training_mode=1, epsilon=0.0, momentum=0.5)
    values = [[Fraction(int(v)) for v in np.moveaxis(x, 1, 0)[c].ravel()] for c in range(2)]
    current_mean = [sum(row) / len(row) for row in values]
    current_var = [sum((v - m) ** 2 for v in row) / len(row) for row, m in zip(values, current_mean)]
    half = Fraction(1, 2)
    running_mean = [float(Fraction(float(mean[c])) * half + current_mean[c] * half) for c in range(2)]
    running_var = [float(Fraction(float(var[c])) * half + current_var[c] * half) for c in range(2)]
    roots = {Fraction(1): 1, Fraction(4): 2}  # the current variances here are 1 and 4
    y = np.array([[[float((Fraction(float(v)) - current_mean[c]) / roots[current_var[c]] * Fraction(float(scale[c]))
                          + Fraction(float(bias[c])))
                    for v in x[k, c]] for c in range(2)] for k in range(2)], F32)
    assert outcome(found, y, np.array(running_mean, F32), np.array(running_var, F32)) == PASS
    assert outcome(found, y, np.array(running_mean, F32), np.array(running_var, F32) + F32(0.25)) == FAIL


def test_float16_training_with_float32_statistics_passes():
    x, scale, bias, mean, var = _training_data(np.float16, tail=(64,))
    for since in (14, 15):
        found = bn_example(since, x, scale, bias, mean, var, outputs=(True, True, True), training_mode=1)
        assert outcome(found, *bn_training(x, scale, bias, mean, var, acc=F32)) == PASS


def test_version_9_running_variance_of_either_estimator_passes_saved_outputs_any():
    x, scale, bias, mean, var = _training_data()
    found = bn_example(9, x, scale, bias, mean, var, outputs=(True, True, True, True, True), momentum=0.75)
    anything = np.full(3, 123.0, F32)
    for unbiased in (False, True):
        y, _, _ = bn_training(x, scale, bias, mean, var, momentum=0.75)
        _, rm, rv = bn_training(x, scale, bias, mean, var, momentum=0.75, unbiased=unbiased)
        assert outcome(found, y, rm, rv, anything, anything) in (PASS, AMBIGUOUS)
    _, rm, rv = bn_training(x, scale, bias, mean, var, momentum=0.75, momentum_reversed=True)
    assert outcome(found, y, rm, rv, anything, anything) == FAIL


def test_version_6_is_test_zero_with_y_alone_is_ambiguous_between_modes():
    x, scale, bias, mean, var = _training_data()
    found = bn_example(6, x, scale, bias, mean, var, outputs=(True, False, False, False, False))
    expected = for_op("BatchNormalization").expected(found)
    assert len(expected.readings) == 2 and "is_test" in expected.ambiguity
    assert outcome(found, bn_training(x, scale, bias, mean, var)[0]) != FAIL
    assert outcome(found, bn_inference(x, scale, bias, mean, var)) != FAIL


@pytest.mark.parametrize("since, x_shape, scale_shape, outputs, attributes, rule", [
    (15, (2, 3), (4,), (True, False, False), {}, "parameter-shape"),
    (14, (2, 3), (3,), (True, True, True), {}, "outputs-in-inference"),
    (14, (2, 3), (3,), (True, False, False), {"training_mode": 1}, "training-outputs"),
    (15, (), (1,), (True, False, False), {}, "rank-below-2"),
    (7, (3,), (1,), (True, False, False, False, False), {}, "rank-below-2"),
    (6, (2, 3), (3,), (True, True, True, False, False), {}, "training-outputs"),
    (7, (2, 3, 2), (3,), (True, False, False, False, False), {"spatial": 0}, "parameter-shape"),
])
def test_batch_norm_invalid(since, x_shape, scale_shape, outputs, attributes, rule):
    x = np.ones(x_shape, F32)
    c = scale_shape[0]
    found = bn_example(since, x, np.ones(scale_shape, F32), np.zeros(c, F32), np.zeros(c, F32), np.ones(c, F32),
                       outputs=outputs, **attributes)
    expected = for_op("BatchNormalization").expected(found)
    assert expected.invalid is not None and expected.invalid.rule == rule and expected.invalid.sentence


# --- InstanceNormalization ---

def instance_norm(x, scale, bias, eps=1e-5, order=_sum_pairwise, acc=F32, unbiased=False, epsilon_outside=False,
                  over_channels=False, folded=False, one_pass=False):
    """Per instance and channel over the spatial dims (or, planted, over the channels), in `acc`."""
    n_, c = x.shape[:2]
    if over_channels:
        moved = np.moveaxis(x.astype(acc), 1, -1)
        rows = moved.reshape(-1, c)
    else:
        rows = x.astype(acc).reshape(n_ * c, -1)
    n = rows.shape[1]
    m = (order(rows) / acc(n)).astype(acc)[:, None]
    d = (rows - m).astype(acc)
    if one_pass:
        v = ((order((rows * rows).astype(acc)) / acc(n)).astype(acc)[:, None] - (m * m).astype(acc)).astype(acc)
    else:
        v = (order((d * d).astype(acc)) / acc(n - 1 if unbiased else n)).astype(acc)[:, None]
    root = (np.sqrt(v) + acc(eps)) if epsilon_outside else np.sqrt(v + acc(eps))
    inv = (acc(1) / root).astype(acc)
    z = (d * inv).astype(acc)
    if over_channels:
        y = np.moveaxis(z.reshape(moved.shape), -1, 1)
    else:
        y = z.reshape(x.shape)
    s, b = per_channel(scale.astype(acc), x.ndim), per_channel(bias.astype(acc), x.ndim)
    if folded and not over_channels:
        a = (s.reshape(1, c, 1) * inv.reshape(n_, c, 1)).astype(acc)
        flat = x.astype(acc).reshape(n_, c, -1)
        return (a * flat + (b.reshape(1, c, 1) - m.reshape(n_, c, 1) * a)).astype(x.dtype).reshape(x.shape)
    return (y * s + b).astype(x.dtype)


def _instance_data(dtype=F32, shape=(2, 3, 4, 4)):
    x = (RNG.standard_normal(shape) * 2 + 1).astype(dtype)
    return x, RNG.uniform(0.5, 2, shape[1]).astype(dtype), RNG.standard_normal(shape[1]).astype(dtype)


@pytest.mark.parametrize("since", [1, 6, 22])
@pytest.mark.parametrize("order", sorted(ORDERS))
def test_instance_norm_in_any_order_passes(since, order):
    x, scale, bias = _instance_data()
    assert outcome(in_example(since, x, scale, bias), instance_norm(x, scale, bias, order=ORDERS[order])) == PASS


def test_instance_norm_folded_passes():
    x, scale, bias = _instance_data(shape=(2, 3, 5, 3))
    assert outcome(in_example(22, x, scale, bias), instance_norm(x, scale, bias, folded=True)) == PASS


@pytest.mark.parametrize("bug", ["unbiased", "epsilon_outside", "over_channels"])
def test_instance_norm_planted_bugs_fail(bug):
    # Exactly summable channels (small integers, 16 per channel), C = 16 so the wrong axis still broadcasts.
    x = RNG.integers(-8, 9, (2, 16, 4, 4)).astype(F32)
    scale, bias = np.ones(16, F32), np.zeros(16, F32)
    found = in_example(6, x, scale, bias, epsilon=0.5)
    assert outcome(found, instance_norm(x, scale, bias, eps=0.5)) == PASS
    assert outcome(found, instance_norm(x, scale, bias, eps=0.5, **{bug: True})) == FAIL


def test_instance_norm_float16_in_float32_passes_and_float16_accumulation_is_its_tier():
    x = RNG.uniform(-4, 4, (1, 2, 4096)).astype(np.float16)
    scale, bias = np.ones(2, np.float16), np.zeros(2, np.float16)
    found = in_example(22, x, scale, bias)
    wide = verdict(found, instance_norm(x, scale, bias, acc=F32))
    assert wide.outcome == PASS and "float32" in wide.reading
    narrow = verdict(found, instance_norm(x, scale, bias, acc=np.float16, order=_sum_reversed))
    assert narrow.outcome == PASS and "computed in float16" in narrow.reading


def test_instance_norm_one_pass_variance_on_large_mean_fails():
    """Channels of 1e4 + noise: E[X²] − E[X]² in float32 cancels (onnxruntime issue #21935's class);
    the text's variance is the mean of squared deviations, which the two-pass form keeps."""
    x = (1e4 + RNG.standard_normal((1, 2, 64))).astype(F32)
    scale, bias = np.ones(2, F32), np.zeros(2, F32)
    found = in_example(22, x, scale, bias)
    assert outcome(found, instance_norm(x, scale, bias)) == PASS
    assert outcome(found, instance_norm(x, scale, bias, one_pass=True)) == FAIL


def test_instance_norm_constant_channels_give_b_exactly():
    x = np.broadcast_to(np.array([3.0, -2.0], F32).reshape(1, 2, 1), (2, 2, 4)).copy()
    scale, bias = np.array([2.0, -1.0], F32), np.array([0.5, -0.25], F32)
    found = in_example(6, x, scale, bias)
    right = np.broadcast_to(bias.reshape(1, 2, 1), x.shape).copy()
    assert outcome(found, right) == PASS
    off = right.copy()
    off[0, 0, 0] = F32(0.6)
    assert outcome(found, off) == FAIL


@pytest.mark.parametrize("x_shape, scale_shape, bias_shape, rule", [
    ((2, 3, 4), (2,), (3,), "parameter-shape"),
    ((2, 3, 4), (3,), (1, 3), "parameter-shape"),
    ((4,), (4,), (4,), "rank-below-2"),
])
def test_instance_norm_invalid(x_shape, scale_shape, bias_shape, rule):
    found = in_example(22, np.ones(x_shape, F32), np.ones(scale_shape, F32), np.zeros(bias_shape, F32))
    expected = for_op("InstanceNormalization").expected(found)
    assert expected.invalid is not None and expected.invalid.rule == rule and expected.invalid.sentence


def test_instance_norm_rank_2_gives_b_and_may_be_rejected():
    x = np.array([[1.0, 2.0], [3.0, -4.0]], F32)
    scale, bias = np.array([2.0, 3.0], F32), np.array([0.5, -1.0], F32)
    found = in_example(22, x, scale, bias)
    expected = for_op("InstanceNormalization").expected(found)
    assert expected.may_reject
    assert outcome(found, np.array([[0.5, -1.0], [0.5, -1.0]], F32)) == PASS
