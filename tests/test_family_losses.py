"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (reference/losses.py) judged as a runtime's
outputs would be: the doc's examples, planted wrong implementations fail (a mean divided by N
instead of the weights' sum, ignore_index not ignored, the weight not applied, a dropped term, the
log-softmax along the wrong axis), legal ones pass (any summation order, float16 in float32 or in
float16, a reciprocal multiply), the readings of the ambiguous mean are named, invalid targets are
rejected, and the strategies draw every version and dtype. Every candidate output is computed
here by plain loops or numpy from the formulas of the text, never taken from the reference."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.dtypes import from_numpy
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput
from conformance.strategies.common import Choices
from conformance.strategies.losses import STRATEGIES

NLL, SCE = "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"
RNG = np.random.default_rng(64)
DOC_INPUT = np.array([[[1.0, 2.0], [2.0, 2.0], [3.0, 2.0]], [[0.0, 1.0], [2.0, 2.0], [1.0, 2]]], np.float32)
DOC_TARGET = np.array([[2, 1], [0, 2]], np.int64)
DOC_WEIGHT = np.array([0.2, 0.3, 0.1], np.float32)


def example(op: str, since: int, scores: np.ndarray, target: np.ndarray, weight: np.ndarray | None = None,
            outputs: tuple[bool, ...] = (), **attributes) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    names = ("input", "target", "weight") if op == NLL else ("scores", "labels", "weights")
    inputs = {names[0]: scores, names[1]: target}
    if weight is not None:
        inputs[names[2]] = weight
    types = {"T": from_numpy(scores.dtype).name, "Tind": from_numpy(target.dtype).name}
    return Example(version, "unit", types, inputs, attributes, "unit", "T", outputs=outputs)


def verdict(found: Example, *outputs: np.ndarray):
    return judge(for_op(found.op).expected(found), RunOutput(outputs=tuple(np.asarray(o) for o in outputs)))


def outcome(found: Example, *outputs: np.ndarray) -> str:
    return verdict(found, *outputs).outcome


def prose_outcome(found: Example, *outputs: np.ndarray) -> str:
    """The verdict by the prose alone: the function body, whose ReduceSum node is widened by its
    bound's half spacing, admits an ULP either side of an exact sum."""
    expected = for_op(found.op).expected(found, bodies=False)
    return judge(expected, RunOutput(outputs=tuple(np.asarray(o) for o in outputs))).outcome


# --- the text's formulas, by plain loops over samples ---

def picked_losses(values: np.ndarray, target: np.ndarray, weight, ignore_index=None) -> tuple[list[float], list[float]]:
    """Per sample (in float64): the loss -values[n][c][d]·weight[c] (0 where ignored), and the weight applied."""
    losses, applied = [], []
    for index in np.ndindex(*target.shape):
        c = int(target[index])
        if ignore_index is not None and c == ignore_index:
            losses.append(0.0)
            applied.append(0.0)
            continue
        w = 1.0 if weight is None else float(weight[c])
        losses.append(-float(values[(index[0], c, *index[1:])]) * w)
        applied.append(w)
    return losses, applied


def log_softmax_axis_1(scores: np.ndarray) -> np.ndarray:
    """log(exp(x) / Σ exp(x)) along axis 1, in float64."""
    wide = scores.astype(np.float64)
    shifted = wide - wide.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def in_order(terms: list[float], dt, order: str) -> float:
    """The sum of `terms` rounded to `dt` at every addition, in a given order."""
    values = [dt(t) for t in terms]
    if order == "reversed":
        values = values[::-1]
    if order == "pairwise":
        while len(values) > 1:
            values = [dt(values[k] + values[k + 1]) if k + 1 < len(values) else values[k] for k in range(0, len(values), 2)]
        return values[0] if values else dt(0)
    if order == "blocked":
        blocks = [values[k:k + 8] for k in range(0, len(values), 8)]
        values = [in_order(block, dt, "forward") for block in blocks]
    total = dt(0)
    for v in values:
        total = dt(total + v)
    return total


# --- the doc's examples ---

def test_doc_example_1_none_is_exact():
    losses, _ = picked_losses(DOC_INPUT, DOC_TARGET, None)
    expected = np.array(losses, np.float32).reshape(2, 2)
    assert expected.tolist() == [[-3.0, -2.0], [-0.0, -2.0]]
    for since in (12, 13, 22):
        case = example(NLL, since, DOC_INPUT, DOC_TARGET, reduction="none")
        assert outcome(case, expected) == PASS
        assert outcome(case, np.nextafter(expected, np.float32(1))) == FAIL


def test_doc_example_2_weighted_sum():
    losses, _ = picked_losses(DOC_INPUT, DOC_TARGET, DOC_WEIGHT)
    total = math.fsum(losses)
    assert abs(total - -1.1) < 1e-7
    case = example(NLL, 13, DOC_INPUT, DOC_TARGET, DOC_WEIGHT, reduction="sum")
    assert outcome(case, np.float32(in_order(losses, np.float32, "forward"))) == PASS
    assert outcome(case, np.float32(-1.2)) == FAIL


def test_doc_example_3_weighted_mean():
    losses, applied = picked_losses(DOC_INPUT, DOC_TARGET, DOC_WEIGHT)
    mean = math.fsum(losses) / math.fsum(applied)
    assert abs(mean - -1.5714285714) < 1e-7  # the doc prints -1.57
    case = example(NLL, 13, DOC_INPUT, DOC_TARGET, DOC_WEIGHT, reduction="mean")
    assert outcome(case, np.float32(mean)) == PASS
    reciprocal = np.float32(np.float32(math.fsum(losses)) * np.float32(1 / np.float32(math.fsum(applied))))
    assert outcome(case, reciprocal) == PASS


# --- planted bugs ---

EXACT_INPUT = RNG.integers(-8, 9, size=(6, 4, 3)).astype(np.float32)
EXACT_TARGET = RNG.integers(0, 4, size=(6, 3)).astype(np.int64)
POWER_WEIGHTS = np.array([0.5, 2.0, 1.0, 4.0], np.float32)


def test_a_mean_divided_by_n_instead_of_the_weights_fails():
    losses, applied = picked_losses(EXACT_INPUT, EXACT_TARGET, POWER_WEIGHTS)
    case = example(NLL, 13, EXACT_INPUT, EXACT_TARGET, POWER_WEIGHTS, reduction="mean")
    right = np.float32(math.fsum(losses) / math.fsum(applied))
    by_count = np.float32(math.fsum(losses) / len(losses))
    assert right != by_count
    assert outcome(case, right) == PASS
    assert outcome(case, by_count) == FAIL


def test_ignore_index_not_ignored_fails():
    target = EXACT_TARGET.copy()
    target[0, 0] = target[2, 1] = 1
    ignored, _ = picked_losses(EXACT_INPUT, target, None, ignore_index=1)
    not_ignored, _ = picked_losses(EXACT_INPUT, target, None)
    assert ignored != not_ignored
    none = example(NLL, 13, EXACT_INPUT, target, reduction="none", ignore_index=1)
    assert outcome(none, np.array(ignored, np.float32).reshape(6, 3)) == PASS
    assert outcome(none, np.array(not_ignored, np.float32).reshape(6, 3)) == FAIL
    total = example(NLL, 13, EXACT_INPUT, target, reduction="sum", ignore_index=1)
    assert outcome(total, np.float32(math.fsum(ignored))) == PASS
    assert outcome(total, np.float32(math.fsum(not_ignored))) == FAIL


def test_the_weight_not_applied_fails():
    weighted, _ = picked_losses(EXACT_INPUT, EXACT_TARGET, POWER_WEIGHTS)
    plain, _ = picked_losses(EXACT_INPUT, EXACT_TARGET, None)
    for reduction, value, wrong in (("sum", math.fsum(weighted), math.fsum(plain)),
                                    ("none", np.array(weighted).reshape(6, 3), np.array(plain).reshape(6, 3))):
        case = example(NLL, 13, EXACT_INPUT, EXACT_TARGET, POWER_WEIGHTS, reduction=reduction)
        assert outcome(case, np.float32(value)) == PASS
        assert outcome(case, np.float32(wrong)) == FAIL


def test_a_dropped_term_fails_even_where_random_data_allows_rounding():
    data = RNG.standard_normal((64, 5)).astype(np.float32)
    target = RNG.integers(0, 5, size=64).astype(np.int64)
    losses, _ = picked_losses(data, target, None)
    case = example(NLL, 13, data, target, reduction="sum")
    assert outcome(case, np.float32(in_order(losses, np.float32, "forward"))) == PASS
    assert outcome(case, np.float32(in_order(losses[1:], np.float32, "forward"))) == FAIL


def test_log_prob_along_the_wrong_axis_fails():
    scores = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    labels = RNG.integers(0, 3, size=(2, 4)).astype(np.int64)
    right = log_softmax_axis_1(scores)
    wide = scores.astype(np.float64)
    wrong = wide - wide.max(axis=2, keepdims=True)
    wrong = wrong - np.log(np.exp(wrong).sum(axis=2, keepdims=True))
    losses = np.array([-right[n, labels[n, d], d] for n in range(2) for d in range(4)]).reshape(2, 4)
    case = example(SCE, 13, scores, labels, reduction="none")
    assert outcome(case, losses.astype(np.float32), right.astype(np.float32)) == PASS
    assert outcome(case, losses.astype(np.float32), wrong.astype(np.float32)) == FAIL
    wrong_losses = np.array([-wrong[n, labels[n, d], d] for n in range(2) for d in range(4)]).reshape(2, 4)
    assert outcome(case, wrong_losses.astype(np.float32), right.astype(np.float32)) == FAIL


def test_softmax_cross_entropy_weighted_sum_and_mean_computed_in_float32_pass():
    scores = (RNG.standard_normal((8, 5, 2)) * 3).astype(np.float32)
    labels = RNG.integers(0, 5, size=(8, 2)).astype(np.int64)
    weights = RNG.uniform(0.1, 2, size=5).astype(np.float32)
    with np.errstate(all="ignore"):
        shifted = scores - scores.max(axis=1, keepdims=True)
        log_prob = (shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))).astype(np.float32)
    losses, applied = picked_losses(log_prob, labels, weights)
    total = in_order(losses, np.float32, "pairwise")
    assert outcome(example(SCE, 13, scores, labels, weights, reduction="sum"), total, log_prob) == PASS
    mean = np.float32(total / in_order(applied, np.float32, "forward"))
    assert outcome(example(SCE, 12, scores, labels, weights, reduction="mean"), mean, log_prob) == PASS
    assert outcome(example(SCE, 12, scores, labels, weights, reduction="mean"), np.float32(total / 16), log_prob) == FAIL
    only = example(SCE, 13, scores, labels, weights, outputs=(True, False), reduction="sum")
    assert outcome(only, total) == PASS


# --- legal reorderings and accumulators ---

@pytest.mark.parametrize("order", ["reversed", "pairwise", "blocked"])
@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_any_summation_order_passes(order, dt):
    data = RNG.standard_normal((300, 3)).astype(dt)
    target = RNG.integers(0, 3, size=300).astype(np.int32)
    weight = RNG.uniform(0.1, 2, size=3).astype(dt)
    losses = [float(dt(v)) for v in picked_losses(data, target, weight)[0]]  # each product rounded once
    _, applied = picked_losses(data, target, weight)
    assert outcome(example(NLL, 13, data, target, weight, reduction="sum"), dt(in_order(losses, dt, order))) == PASS
    mean = dt(in_order(losses, dt, order) / in_order(applied, dt, order))
    assert outcome(example(NLL, 13, data, target, weight, reduction="mean"), mean) == PASS


def test_a_float16_sum_over_4096_samples_is_told_by_its_accumulator():
    data = -(1 + np.abs(RNG.standard_normal((4096, 2))) / 2).astype(np.float16)
    target = np.zeros(4096, np.int64)
    losses, _ = picked_losses(data, target, None)
    case = example(NLL, 13, data, target, reduction="sum")
    wide = verdict(case, np.float16(math.fsum(losses)))
    assert wide.outcome == PASS and wide.reading == "accumulated in float32 or wider"
    narrow = verdict(case, in_order(losses, np.float16, "forward"))
    assert narrow.outcome == PASS and narrow.reading == "accumulated in float16"
    ones = example(NLL, 13, -np.ones((4096, 2), np.float16), target, reduction="sum")
    assert outcome(ones, np.float16(4096)) == PASS
    assert verdict(ones, np.float16(2048)).reading == "accumulated in float16"
    exact = example(NLL, 13, -np.ones((4096, 2), np.float32), target, reduction="sum")
    assert prose_outcome(exact, np.float32(4095)) == FAIL, "4096 ones are exactly summable in float32"
    assert prose_outcome(exact, np.float32(4097)) != PASS


def test_an_exact_sum_is_judged_bitwise():
    losses, _ = picked_losses(EXACT_INPUT, EXACT_TARGET, POWER_WEIGHTS)
    case = example(NLL, 13, EXACT_INPUT, EXACT_TARGET, POWER_WEIGHTS, reduction="sum")
    exact = np.float32(math.fsum(losses))
    assert outcome(case, exact) == PASS
    assert prose_outcome(case, np.nextafter(exact, np.float32(np.inf))) != PASS  # beyond its bound of ½ ULP


# --- the readings of what the text leaves open ---

def test_a_mean_with_ignored_samples_has_two_named_readings():
    target = np.array([[2, 1], [0, 2]], np.int64)
    weight = np.array([1.0, 2.0, 4.0], np.float32)
    losses, applied = picked_losses(DOC_INPUT, target, weight, ignore_index=2)
    every = [float(weight[c]) for c in target.reshape(-1)]
    case = example(NLL, 13, DOC_INPUT, target, weight, reduction="mean", ignore_index=2)
    by_applied = verdict(case, np.float32(math.fsum(losses) / math.fsum(applied)))
    by_every = verdict(case, np.float32(math.fsum(losses) / math.fsum(every)))
    assert by_applied.outcome == AMBIGUOUS and "applied weights" in by_applied.reading
    assert by_every.outcome == AMBIGUOUS and "every sample" in by_every.reading
    assert outcome(case, np.float32(math.fsum(losses) / 4)) == FAIL
    outside = example(NLL, 13, DOC_INPUT, np.array([[-1, 1], [0, -1]], np.int64), weight, reduction="mean", ignore_index=-1)
    assert len(for_op(NLL).expected(outside).readings) == 1, "an ignore_index outside [0, C) has no weight to count"


def test_a_mean_over_nothing_is_nan_or_zero():
    data = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    case = example(NLL, 22, data, np.array([-1, -1], np.int64), reduction="mean", ignore_index=-1)
    assert "0/0 is NaN" in verdict(case, np.float32(np.nan)).reading
    assert outcome(case, np.float32(0)) in (PASS, AMBIGUOUS)
    # By the prose: the function body's ReduceSum nodes are widened to an interval about 0 there,
    # through which its Div allows anything (see the report on function_body.py).
    assert prose_outcome(case, np.float32(1)) == FAIL
    assert outcome(example(NLL, 22, data, np.array([-1, -1], np.int64), reduction="sum", ignore_index=-1), np.float32(0)) == PASS


def test_one_class_gives_log_prob_zero():
    scores = np.array([[3.0], [-7.5]], np.float32)
    case = example(SCE, 12, scores, np.zeros(2, np.int64), reduction="none")
    assert outcome(case, np.zeros(2, np.float32), np.zeros((2, 1), np.float32)) == PASS
    assert outcome(case, np.full(2, 1e-7, np.float32), np.zeros((2, 1), np.float32)) == FAIL


# --- what the text forbids ---

def test_targets_outside_the_classes_are_invalid_unless_ignored():
    data = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    for op in (NLL, SCE):
        assert for_op(op).expected(example(op, 13, data, np.array([0, 2], np.int64))).invalid.rule == "target-out-of-range"
        assert for_op(op).expected(example(op, 13, data, np.array([0, -1], np.int64))).invalid.rule == "target-out-of-range"
        assert for_op(op).expected(example(op, 13, data, np.array([0, -1], np.int64), ignore_index=-1)).is_valid
        assert for_op(op).expected(example(op, 13, data, np.array([0, 1], np.int64), reduction="avg")).invalid.rule == "unknown-reduction"
        wrong_size = example(op, 13, data, np.array([0, 1], np.int64), np.ones(3, np.float32))
        assert for_op(op).expected(wrong_size).invalid.rule == "weight-shape"


def test_bfloat16_comes_with_nll_22_and_sce_13():
    data = np.array([[1.0, 2.0]], ml_dtypes.bfloat16)
    target = np.array([0], np.int64)
    assert for_op(NLL).expected(example(NLL, 13, data, target)).invalid.rule == "dtype-not-allowed"
    assert for_op(NLL).expected(example(NLL, 22, data, target)).is_valid
    assert for_op(SCE).expected(example(SCE, 12, data, target)).invalid.rule == "dtype-not-allowed"
    assert for_op(SCE).expected(example(SCE, 13, data, target)).is_valid


# --- the strategies ---

@pytest.mark.parametrize("op", [NLL, SCE])
def test_the_strategy_draws_every_version_and_dtype_and_the_reference_answers(op):
    seen = set()
    rng = np.random.default_rng(5)
    for version in versions(op):
        for t in version.allowed("T"):
            for tind in version.allowed("Tind"):
                for _ in range(20):
                    data = rng.bytes(256)
                    drawn = STRATEGIES[op](Choices(data), version, {"T": t, "Tind": tind})
                    found = for_op(op).expected(drawn)
                    seen.add((version.since_version, t, found.is_valid))
    assert {(v.since_version, t) for v in versions(op) for t in v.allowed("T")} == {(v, t) for v, t, _ in seen}
    assert any(not valid for _, _, valid in seen)
