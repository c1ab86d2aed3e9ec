"""LpNormalization, LRN and Swish judged as a runtime's outputs would be: implementations written here
from the texts (plain loops, other summation orders, float16 computed in float32) pass; planted bugs
(a wrong axis, p = 1 computed as p = 2, a window off by one or not clipped, alpha not divided by
size, alpha ignored) fail; exact rows are judged bitwise; what the texts forbid is invalid."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import FAIL, PASS, judge
from conformance.dtypes import from_numpy
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(11)


def example(op: str, since: int, name: str, data: np.ndarray, **attributes) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    return Example(version, "unit", {"T": from_numpy(data.dtype).name}, {name: data}, attributes, "unit", "T")


def lp(data: np.ndarray, since: int = 22, **attributes) -> Example:
    return example("LpNormalization", since, "input", data, **attributes)


def lrn(data: np.ndarray, since: int = 13, **attributes) -> Example:
    return example("LRN", since, "X", data, **attributes)


def swish(data: np.ndarray, **attributes) -> Example:
    return example("Swish", 24, "X", data, **attributes)


def verdict(case: Example, output: np.ndarray):
    return judge(for_op(case.op).expected(case), RunOutput(outputs=(np.asarray(output),)))


def outcome(case: Example, output: np.ndarray) -> str:
    return verdict(case, output).outcome


# --- LpNormalization ---------------------------------------------------------------------------

def _reversed(rows: np.ndarray) -> np.ndarray:
    total = rows[:, -1]
    for k in range(rows.shape[1] - 2, -1, -1):
        total = total + rows[:, k]
    return total


def _pairwise(rows: np.ndarray) -> np.ndarray:
    while rows.shape[1] > 1:
        half = rows.shape[1] // 2
        paired = rows[:, :half] + rows[:, half:2 * half]
        rows = np.concatenate([paired, rows[:, 2 * half:]], axis=1)
    return rows[:, 0]


def _blocked(rows: np.ndarray, block: int = 8) -> np.ndarray:
    partials = [_reversed(rows[:, k:k + block])[:, None] for k in range(0, rows.shape[1], block)]
    return _reversed(np.concatenate(partials, axis=1))


ORDERS = {"reversed": _reversed, "pairwise": _pairwise, "blocked": _blocked}


def normalized_in(data: np.ndarray, p: int, order, work=np.float32) -> np.ndarray:
    """x / ||x||_p along the last axis, the norm summed in `order` in `work`, the result in data's type."""
    rows = data.astype(work)
    terms = np.abs(rows) if p == 1 else rows * rows
    norm = order(terms)
    norm = norm if p == 1 else np.sqrt(norm)
    return (rows / norm[:, None]).astype(data.dtype)


def exact_quotients(data: np.ndarray, p: int) -> np.ndarray:
    """x / ||x||_p along the last axis with mpmath at 50 digits, per element: independent of the reference."""
    found = np.zeros(data.shape)
    with mpmath.workdps(50):
        for r, row in enumerate(data.astype(np.float64)):
            values = [mpmath.mpf(float(v)) for v in row]
            norm = mpmath.fsum(abs(v) for v in values) if p == 1 else mpmath.sqrt(mpmath.fsum(v * v for v in values))
            found[r] = [float(v / norm) if norm else 0.0 for v in values]
    return found


@pytest.mark.parametrize("p", [1, 2])
def test_the_precise_values_are_the_quotients_mpmath_computes(p):
    data = RNG.standard_normal((4, 9)).astype(np.float32)
    precise = for_op("LpNormalization").expected(lp(data, p=p)).readings[0].precise[0]
    assert np.allclose(precise, exact_quotients(data, p), rtol=1e-15, atol=0)


@pytest.mark.parametrize("order", sorted(ORDERS))
@pytest.mark.parametrize("p", [1, 2])
def test_any_summation_order_of_the_norm_passes(p, order):
    data = RNG.standard_normal((6, 40)).astype(np.float32)
    found = verdict(lp(data, p=p), normalized_in(data, p, ORDERS[order]))
    assert found.outcome == PASS, found.message


@pytest.mark.parametrize("p", [1, 2])
def test_a_reciprocal_times_x_and_a_float64_norm_pass(p):
    data = RNG.standard_normal((5, 17)).astype(np.float32)
    rows = data.astype(np.float64)
    norm = np.abs(rows).sum(axis=1) if p == 1 else np.sqrt((rows * rows).sum(axis=1))
    reciprocal = (np.float32(1) / norm.astype(np.float32))[:, None]
    assert outcome(lp(data, p=p), (data * reciprocal).astype(np.float32)) == PASS
    assert outcome(lp(data, p=p), (rows / norm[:, None]).astype(np.float32)) == PASS


def test_float16_computed_in_float32_passes_in_the_tightest_tier():
    data = RNG.standard_normal((3, 50)).astype(np.float16)
    found = verdict(lp(data), normalized_in(data, 2, _pairwise, np.float32))
    assert found.outcome == PASS and found.reading == "accumulated in float32 or wider", found.message


def test_a_float16_accumulator_over_4096_elements_is_told_as_its_reading():
    # Values of one sign near 1.5: a float16 running sum stagnates once its spacing passes them.
    data = (1 + np.abs(RNG.standard_normal((2, 4096))) / 2).astype(np.float16)
    case = lp(data, p=1)
    wide = verdict(case, normalized_in(data, 1, _pairwise, np.float32))
    assert wide.outcome == PASS and wide.reading == "accumulated in float32 or wider"
    running = np.zeros(2, np.float16)
    for k in range(4096):
        running = (running + data[:, k]).astype(np.float16)
    assert abs(float(running[0]) - float(data[0].astype(np.float64).sum())) > 100  # it did stagnate
    narrow = verdict(case, (data / running[:, None]).astype(np.float16))
    assert narrow.outcome == PASS and narrow.reading == "accumulated in float16", narrow.message


def test_a_wrong_axis_fails():
    data = RNG.standard_normal((5, 5)).astype(np.float32)
    along_rows = normalized_in(data, 2, _pairwise)
    along_columns = normalized_in(data.T.copy(), 2, _pairwise).T
    assert outcome(lp(data, axis=1), along_rows) == PASS
    assert outcome(lp(data, axis=1), along_columns) == FAIL
    assert outcome(lp(data, axis=0), along_columns) == PASS
    assert outcome(lp(data, axis=-2), along_rows) == FAIL


def test_p_1_computed_as_p_2_fails_and_the_other_way_round():
    data = RNG.standard_normal((4, 6)).astype(np.float32)
    assert outcome(lp(data, p=1), normalized_in(data, 2, _pairwise)) == FAIL
    assert outcome(lp(data, p=2), normalized_in(data, 1, _pairwise)) == FAIL
    assert outcome(lp(data), normalized_in(data, 1, _pairwise)) == FAIL  # p left out is 2


def test_a_dropped_term_fails():
    data = np.ones((1, 64), np.float16)  # norm 8 in any order and accumulator
    assert outcome(lp(data), np.full((1, 64), 0.125, np.float16)) == PASS
    assert outcome(lp(data), (data / np.float16(math.sqrt(63))).astype(np.float16)) == FAIL
    random = RNG.standard_normal((4, 30)).astype(np.float32)
    dropped = (random / np.sqrt((random[:, 1:] ** 2).sum(axis=1, keepdims=True))).astype(np.float32)
    assert outcome(lp(random), dropped) == FAIL


def test_rows_with_a_power_of_two_norm_are_judged_bitwise():
    data = np.array([[1, -1, 1, 1], [2, 6, 9, 0], [3, 4, 0, 0]], np.float32)  # norms 2, 11, 5
    right = np.array([[0.5, -0.5, 0.5, 0.5], [2 / 11, 6 / 11, 9 / 11, 0], [0.6, 0.8, 0, 0]], np.float32)
    assert outcome(lp(data), right) == PASS
    off = right.copy()
    off[0, 0] = np.nextafter(np.float32(0.5), np.float32(1))
    assert outcome(lp(data), off) == FAIL


def test_a_zero_row_is_zero_not_nan_and_a_nan_row_is_nan():
    data = np.array([[0, 0, 0], [1, 0, 0], [np.nan, 1, 0]], np.float32)
    assert outcome(lp(data), np.array([[0, 0, 0], [1, 0, 0], [np.nan] * 3], np.float32)) == PASS
    assert outcome(lp(data), np.array([[np.nan] * 3, [1, 0, 0], [np.nan] * 3], np.float32)) == FAIL


def test_an_infinite_row_is_x_over_inf():
    data = np.array([[np.inf, 2.0, -3.0]], np.float32)
    assert outcome(lp(data, p=1), np.array([[np.nan, 0.0, -0.0]], np.float32)) == PASS
    assert outcome(lp(data, p=1), np.array([[1.0, 0.0, 0.0]], np.float32)) == FAIL


def test_squares_past_the_type_may_overflow_the_norm():
    data = np.array([[3e19, 4e19]], np.float32)  # Σx² passes float32's max; the quotients do not
    assert outcome(lp(data), np.array([[0.6, 0.8]], np.float32)) == PASS
    assert outcome(lp(data), np.array([[0.0, 0.0]], np.float32)) == PASS  # x / inf, the norm as written
    assert outcome(lp(data), np.array([[0.8, 0.6]], np.float32)) == FAIL


@pytest.mark.parametrize(("attributes", "shape", "rule"), [
    ({"p": 3}, (2, 2), "p-not-supported"), ({"p": 0}, (2, 2), "p-not-supported"),
    ({"axis": 2}, (2, 2), "axis-out-of-range"), ({"axis": -3}, (2, 2), "axis-out-of-range"),
    ({}, (), "axis-out-of-range"),
])
def test_what_the_text_forbids_is_invalid(attributes, shape, rule):
    found = for_op("LpNormalization").expected(lp(np.ones(shape, np.float32), **attributes))
    assert not found.is_valid and found.invalid.rule == rule


def test_bfloat16_comes_with_version_22():
    import ml_dtypes

    data = np.ones((2, 2), ml_dtypes.bfloat16)
    assert not for_op("LpNormalization").expected(lp(data, since=1)).is_valid
    assert for_op("LpNormalization").expected(lp(data, since=22)).is_valid


# --- LRN ---------------------------------------------------------------------------------------

def lrn_loop(x: np.ndarray, size: int, alpha=1e-4, beta=0.75, bias=1.0, work=np.float32, window=None,
             divide_by_size=True) -> np.ndarray:
    """The text's formula as a plain loop in `work`; `window(c, size, C)` may be replaced by a
    planted one, and alpha left undivided."""
    window = window or (lambda c, s, channels: (max(0, c - (s - 1) // 2), min(channels - 1, c + math.ceil((s - 1) / 2))))
    wide = x.astype(work)
    out = np.zeros_like(wide)
    alpha = work(np.float32(alpha))  # a FLOAT attribute holds alpha, beta and bias as float32
    beta, bias = work(np.float32(beta)), work(np.float32(bias))
    scale = alpha / work(size) if divide_by_size else alpha
    for c in range(x.shape[1]):
        low, high = window(c, size, x.shape[1])
        square_sum = np.zeros_like(wide[:, 0])
        for i in range(low, high + 1):
            square_sum = square_sum + wide[:, i] * wide[:, i]
        out[:, c] = wide[:, c] / np.power(work(bias) + scale * square_sum, work(beta))
    return out.astype(x.dtype)


def lrn_exact(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """LRN of a (N, C) array with Fractions for the sum and mpmath for the power: independent of the reference."""
    alpha, beta, bias = (Fraction(float(np.float32(v))) for v in (alpha, beta, bias))
    found = np.zeros(x.shape)
    channels = x.shape[1]
    with mpmath.workdps(50):
        for n in range(x.shape[0]):
            for c in range(channels):
                low, high = max(0, c - (size - 1) // 2), min(channels - 1, c + -(-(size - 1) // 2))
                square_sum = sum(Fraction(float(x[n, i])) ** 2 for i in range(low, high + 1))
                base = bias + alpha / size * square_sum
                power = mpmath.power(mpmath.mpf(base.numerator) / base.denominator, mpmath.mpf(beta.numerator) / beta.denominator)
                found[n, c] = float(mpmath.mpf(float(x[n, c])) / power)
    return found


def test_lrn_precise_values_are_the_formula_mpmath_computes():
    x = RNG.standard_normal((3, 7)).astype(np.float32) * 4
    precise = for_op("LRN").expected(lrn(x[:, :, None, None], size=5, alpha=0.5, beta=0.75, bias=2.0)).readings[0].precise[0]
    assert np.allclose(precise[:, :, 0, 0], lrn_exact(x, 5, 0.5, 0.75, 2.0), rtol=1e-14, atol=0)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 9])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_the_formula_as_a_plain_loop_passes(size, dtype):
    x = (RNG.standard_normal((2, 6, 2, 3)) * 3).astype(dtype)
    for alpha, beta, bias in ((1e-4, 0.75, 1.0), (2.0, 0.5, 1.0), (0.5, 2.0, 0.25)):
        work = np.float64 if dtype == np.float64 else np.float32
        found = verdict(lrn(x, size=size, alpha=alpha, beta=beta, bias=bias), lrn_loop(x, size, alpha, beta, bias, work))
        assert found.outcome == PASS, (size, alpha, beta, bias, found.message)


def test_float16_computed_in_float16_passes_in_its_own_tier():
    x = (RNG.standard_normal((1, 5, 3, 3)) * 3).astype(np.float16)
    found = verdict(lrn(x, size=3, alpha=1.0, beta=0.75), lrn_loop(x, 3, 1.0, 0.75, 1.0, np.float16))
    assert found.outcome == PASS, found.message


def _shifted(c: int, size: int, channels: int) -> tuple[int, int]:
    return max(0, c - (size - 1) // 2 + 1), min(channels - 1, c + math.ceil((size - 1) / 2) + 1)


def _floor_ceil_swapped(c: int, size: int, channels: int) -> tuple[int, int]:
    return max(0, c - math.ceil((size - 1) / 2)), min(channels - 1, c + (size - 1) // 2)


def _one_short(c: int, size: int, channels: int) -> tuple[int, int]:
    return max(0, c - (size - 1) // 2), min(channels - 1, c + math.ceil((size - 1) / 2) - 1)


def lrn_wrapped(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """The window not clipped at the ends but wrapped around the channels."""
    wide = x.astype(np.float32)
    square_sum = sum(np.roll(wide * wide, -offset, axis=1) for offset in range(-((size - 1) // 2), math.ceil((size - 1) / 2) + 1))
    return (wide / np.power(np.float32(bias) + np.float32(alpha / size) * square_sum, np.float32(beta))).astype(x.dtype)


PLANTED_WINDOWS = {"shifted by one": (_shifted, 3), "floor and ceil swapped": (_floor_ceil_swapped, 4),
                   "one channel short": (_one_short, 3)}


@pytest.mark.parametrize("bug", sorted(PLANTED_WINDOWS))
def test_a_window_off_by_one_fails(bug):
    window, size = PLANTED_WINDOWS[bug]
    x = (RNG.standard_normal((1, 6, 2, 2)) * 3).astype(np.float32)
    case = lrn(x, size=size, alpha=1.0, beta=0.75, bias=1.0)
    assert outcome(case, lrn_loop(x, size, 1.0, 0.75, 1.0)) == PASS
    assert outcome(case, lrn_loop(x, size, 1.0, 0.75, 1.0, window=window)) == FAIL


def test_a_window_not_clipped_fails():
    x = (RNG.standard_normal((1, 5, 2, 2)) * 3).astype(np.float32)
    case = lrn(x, size=3, alpha=1.0, beta=0.75, bias=1.0)
    assert outcome(case, lrn_wrapped(x, 3, 1.0, 0.75, 1.0)) == FAIL


def test_alpha_not_divided_by_size_fails():
    x = (RNG.standard_normal((1, 6, 2, 2)) * 3).astype(np.float32)
    case = lrn(x, size=5, alpha=0.5, beta=0.75, bias=1.0)
    assert outcome(case, lrn_loop(x, 5, 0.5, 0.75, 1.0, divide_by_size=False)) == FAIL


def test_beta_zero_and_a_base_of_one_are_the_identity_bitwise():
    x = (RNG.standard_normal((1, 4, 2, 2)) * 3).astype(np.float32)
    for attributes in ({"beta": 0.0, "alpha": 2.0}, {"alpha": 0.0, "bias": 1.0}):
        case = lrn(x, size=3, **attributes)
        assert outcome(case, x) == PASS
        assert outcome(case, np.nextafter(x, np.float32(np.inf))) == FAIL


@pytest.mark.parametrize(("shape", "size", "rule"), [((1, 3, 2, 2), 0, "size-not-positive"),
                                                      ((1, 3, 2, 2), -1, "size-not-positive"),
                                                      ((3,), 1, "rank-below-2"), ((), 1, "rank-below-2")])
def test_lrn_forbids_a_size_below_1_and_no_channel_axis(shape, size, rule):
    found = for_op("LRN").expected(lrn(np.ones(shape, np.float32), size=size))
    assert not found.is_valid and found.invalid.rule == rule


def test_other_ranks_are_valid_and_rank_2_may_be_rejected():
    for shape in ((2, 3, 4), (1, 3, 2, 2, 2)):
        found = for_op("LRN").expected(lrn(np.ones(shape, np.float32), size=3))
        assert found.is_valid and found.may_reject is None
    assert for_op("LRN").expected(lrn(np.ones((2, 3), np.float32), size=3)).may_reject


# --- Swish -------------------------------------------------------------------------------------

def swish_exact(x: np.ndarray, alpha: float) -> np.ndarray:
    with mpmath.workdps(40):
        a = mpmath.mpf(float(np.float32(alpha)))
        return np.array([float(mpmath.mpf(float(v)) / (1 + mpmath.exp(-a * float(v)))) for v in x.reshape(-1)]).reshape(x.shape)


def test_swish_is_declared_in_the_activation_family():
    from conformance.reference.activation import DECLARED

    assert for_op("Swish").family in DECLARED


@pytest.mark.parametrize("alpha", [1.0, 0.5, 1.702])
def test_swish_precise_values_are_what_mpmath_computes(alpha):
    x = np.array([-3.0, -0.5, 0.25, 1.0, 4.0], np.float64)
    found = for_op("Swish").expected(swish(x, alpha=alpha))
    assert np.allclose(found.readings[0].precise[0], swish_exact(x, alpha), rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_swish_computed_in_float32_passes(dtype):
    x = np.linspace(-6, 6, 61).astype(dtype)
    wide = x.astype(np.float32)
    for alpha in (1.0, 2.0, -1.0):
        computed = (wide / (np.float32(1) + np.exp(-np.float32(alpha) * wide))).astype(dtype)
        assert outcome(swish(x, alpha=alpha), computed) == PASS


def test_swish_with_alpha_ignored_fails():
    x = np.linspace(-6, 6, 25).astype(np.float32)
    ignored = (x / (np.float32(1) + np.exp(-x))).astype(np.float32)
    assert outcome(swish(x, alpha=2.0), ignored) == FAIL
    assert outcome(swish(x), ignored) == PASS


def test_swish_at_minus_infinity_is_its_limit_or_ieee_nan():
    x = np.array([-np.inf, np.inf, 1.0], np.float32)
    one = np.float32(1 / (1 + math.exp(-1)))
    assert outcome(swish(x), np.array([0.0, np.inf, one], np.float32)) in (PASS, "ambiguous")
    assert outcome(swish(x), np.array([np.nan, np.inf, one], np.float32)) in (PASS, "ambiguous")
    # The prose's readings at -inf are the limit 0 and IEEE's -inf * 0 = NaN, nothing else (the
    # function body's own readings, carried through Sigmoid's budget around 0, are wider).
    prose = {float(r.outputs[0][0]) if not np.isnan(r.outputs[0][0]) else "nan"
             for r in for_op("Swish").expected(swish(x), bodies=False).readings}
    assert prose == {0.0, "nan"}
    mirrored = {float(r.outputs[0][1]) if not np.isnan(r.outputs[0][1]) else "nan"
                for r in for_op("Swish").expected(swish(x, alpha=-1.0), bodies=False).readings}
    assert mirrored == {0.0, "nan"}  # +inf with a negative alpha: inf * sigmoid(-inf)


def test_a_row_whose_squares_underflow_is_no_zero_row_and_sets_no_requirement():
    # "When the Lp norm is zero (i.e., all elements along the axis are zero)": [-5e-324] is not
    # such a row (its norm is 5e-324, the quotient -1), but its square is 0 even in double, so a
    # norm computed in the type may be 0: any answer stands, the zero row's 0 and x itself too.
    tiny = lp(np.array([[-5e-324]]), p=2, axis=-1)
    assert verdict(tiny, np.array([[-1.0]])).outcome == PASS
    for other in (np.array([[0.0]]), np.array([[-5e-324]]), np.array([[np.nan]])):
        assert outcome(tiny, other) == PASS
    zero = lp(np.array([[0.0, 0.0]]), p=2, axis=-1)  # the text's zero row: zeros, exactly
    assert outcome(zero, np.array([[0.0, 0.0]])) == PASS and outcome(zero, np.array([[1.0, 0.0]])) == FAIL


@pytest.mark.parametrize("shape, axis, empty", [((3, 0), -1, True), ((3, 2), -1, False), ((0, 3), -1, False),
                                                 ((3, 3, 0), -4, True), ((3, 2), -4, False)])
def test_the_empty_axis_trait_names_an_axis_of_no_element_or_a_bad_axis_over_empty_data(shape, axis, empty):
    trait = for_op("LpNormalization").traits["empty-axis"]
    assert trait(lp(np.zeros(shape, dtype=np.float32), axis=axis)) is empty
