"""The per-element bound of accumulating ops (conformance/bounds.py): which rows are exactly
summable, the bound's growth, and how an output is judged by it: within, imprecise, wrong, the
statistical test over many outputs, overflow and the values allowed besides the bound."""

from __future__ import annotations

import numpy as np

from conformance.bounds import (BOUND_LINE, ElementBound, Tier, accumulators, exactly_summable, gamma, judge,
                                statistical_scale, sum_tiers)
from conformance.precision import BEYOND_BUDGET, CORRECTLY_ROUNDED


def rows(*values) -> np.ndarray:
    return np.array(values, dtype=np.float64)


def test_small_integers_and_quarters_are_exactly_summable_in_float32():
    assert exactly_summable(rows([1.0, 2.0, 3.0], [0.25, -0.5, 8.0]), np.dtype(np.float32)).tolist() == [True, True]


def test_a_row_needing_more_bits_than_the_accumulator_is_not():
    row = rows([1.0, 2.0 ** -30])
    assert not exactly_summable(row, np.dtype(np.float32))[0]
    assert exactly_summable(row, np.dtype(np.float64))[0]


def test_float16_holds_2048_ones_exactly_and_not_2049():
    assert exactly_summable(np.ones((1, 2048)), np.dtype(np.float16))[0]
    assert not exactly_summable(np.ones((1, 2049)), np.dtype(np.float16))[0]


def test_rows_with_infinities_or_nans_are_not_exactly_summable():
    assert exactly_summable(rows([1.0, np.inf], [np.nan, 1.0], [1.0, 1.0]), np.dtype(np.float32)).tolist() == [False, False, True]


def test_the_bound_grows_with_n_and_stays_finite_past_n_u_of_one():
    u = 2.0 ** -11
    small, large = gamma(10, u), gamma(5000, u)
    assert 10 * u <= small <= 10 * u * 1.01  # n·u to first order
    assert np.isfinite(large) and large > 1  # (1 + u)^n − 1: no bound left to speak of, but a number


def _sum_bound(terms: np.ndarray, out: np.dtype) -> tuple[np.ndarray, ElementBound]:
    y = terms.sum(axis=1)
    magnitude = np.abs(terms).sum(axis=1)
    n = np.full(terms.shape[0], terms.shape[1], dtype=np.float64)
    exact = {label: exactly_summable(terms, acc) for label, acc in accumulators(out)}
    tiers = sum_tiers(y, magnitude, n, exact, out)
    return y, ElementBound(tiers, "test", "test", statistical_scale(magnitude, out))


def test_a_float32_sum_in_another_order_passes_and_a_dropped_term_is_wrong():
    terms = np.random.default_rng(1).standard_normal((50, 100))
    y, bound = _sum_bound(terms, np.dtype(np.float32))
    reversed_order = np.zeros(50, np.float32)
    for k in range(99, -1, -1):
        reversed_order = (reversed_order + terms[:, k].astype(np.float32)).astype(np.float32)
    assert judge(bound, y, y.astype(np.float32), reversed_order).passed
    dropped = terms[:, 1:].sum(axis=1).astype(np.float32)
    judged = judge(bound, y, y.astype(np.float32), dropped)
    assert judged.is_wrong and judged.worst_ulp > BOUND_LINE, "a dropped term lies far past the bound"


def test_an_exactly_summable_row_allows_the_correctly_rounded_sum_alone():
    terms = rows([1.0, 2.0, 3.0])
    y, bound = _sum_bound(terms, np.dtype(np.float32))
    assert judge(bound, y, y.astype(np.float32), np.float32([6.0])).grade == CORRECTLY_ROUNDED
    one_ulp_off = np.nextafter(np.float32(6.0), np.float32(7.0), dtype=np.float32)
    assert not judge(bound, y, y.astype(np.float32), np.array([one_ulp_off])).passed


def test_a_float16_sum_names_the_tightest_accumulator_it_met():
    terms = np.random.default_rng(2).standard_normal((8, 300)).astype(np.float16).astype(np.float64)
    y, bound = _sum_bound(terms, np.dtype(np.float16))
    in_float32 = terms.astype(np.float32).sum(axis=1).astype(np.float16)
    assert judge(bound, y, y.astype(np.float16), in_float32).tier == "accumulated in float32 or wider"
    in_float16 = np.zeros(8, np.float16)
    for k in range(300):
        in_float16 = (in_float16 + terms[:, k].astype(np.float16)).astype(np.float16)
    judged = judge(bound, y, y.astype(np.float16), in_float16)
    assert judged.passed and judged.tier == "accumulated in float16"


def _truncating_float16_sum(terms: np.ndarray) -> np.ndarray:
    """Each partial sum chopped toward zero to float16: a biased accumulator."""
    total = np.zeros(terms.shape[0])
    for k in range(terms.shape[1]):
        exact = total + terms[:, k]
        near = exact.astype(np.float16).astype(np.float64)
        too_far = np.abs(near) > np.abs(exact)
        total = np.where(too_far, np.nextafter(near.astype(np.float16), np.float16(0)).astype(np.float64), near)
    return total.astype(np.float16)


def test_a_truncating_accumulator_passes_each_element_and_fails_the_statistical_test():
    rng = np.random.default_rng(3)
    terms = np.abs(rng.standard_normal((1200, 64))).astype(np.float16).astype(np.float64)
    y, bound = _sum_bound(terms, np.dtype(np.float16))
    judged = judge(bound, y, y.astype(np.float16), _truncating_float16_sum(terms))
    assert judged.ok.all(), "every element is within the worst case of float16 accumulation"
    assert judged.statistic is not None and "biased" in judged.statistic
    assert not judged.passed and not judged.is_wrong and judged.grade == BEYOND_BUDGET


def test_the_statistical_test_passes_round_to_nearest_accumulation_and_needs_many_outputs():
    rng = np.random.default_rng(4)
    terms = np.abs(rng.standard_normal((1200, 64))).astype(np.float16).astype(np.float64)
    y, bound = _sum_bound(terms, np.dtype(np.float16))
    nearest = np.zeros(1200, np.float16)
    for k in range(64):
        nearest = (nearest + terms[:, k].astype(np.float16)).astype(np.float16)
    assert judge(bound, y, y.astype(np.float16), nearest).passed
    few, few_bound = _sum_bound(terms[:100], np.dtype(np.float16))
    assert judge(few_bound, few, few.astype(np.float16), _truncating_float16_sum(terms[:100])).passed


def test_special_values_are_judged_exactly_and_overflow_is_allowed_where_the_bound_reaches_max():
    tier = Tier("accumulated in float16", np.array([0.0, 0.0, 100.0]), np.ones(3))
    bound = ElementBound((tier,), "test", "test")
    precise = np.array([np.nan, np.inf, 65500.0])
    assert judge(bound, precise, precise.astype(np.float16), np.float16([np.nan, np.inf, np.inf])).passed
    assert not judge(bound, precise, precise.astype(np.float16), np.float16([np.nan, 65504.0, 65500.0])).passed


def test_an_also_value_passes_where_the_bound_alone_would_not():
    tier = Tier("accumulated in float32", np.array([1e-3]), np.ones(1))
    precise = np.array([1770.0])
    plain = ElementBound((tier,), "test", "test")
    assert not judge(plain, precise, precise.astype(np.float32), np.float32([np.inf])).passed
    allowed = ElementBound((tier,), "test", "test", also=(np.array([np.inf]),))
    assert judge(allowed, precise, precise.astype(np.float32), np.float32([np.inf])).passed


def test_where_a_tier_may_overflow_any_infinity_or_nan_meets_it_and_a_finite_value_is_still_judged():
    # float16 accumulated in float32 cannot overflow here; in float16 a partial sum may (TOSA's "bnd overflow")
    precise = np.array([-70000.0, 3.0])
    rounded = np.float16([-np.inf, 3.0])
    wide = Tier("accumulated in float32 or wider", np.array([4.0, 1e-3]), np.ones(2))
    narrow = Tier("accumulated in float16", np.array([64.0, 1e-3]), np.ones(2), non_finite=np.array([True, False]))
    bound = ElementBound((wide, narrow), "test", "test")
    for overflowed in (np.inf, np.nan):  # the wrong sign of infinity, or inf - inf
        verdict = judge(bound, precise, rounded, np.float16([overflowed, 3.0]))
        assert verdict.passed and verdict.tier == "accumulated in float16", verdict.tier
    # a finite value far off is still wrong there, and where nothing may overflow an infinity is wrong
    assert not judge(bound, precise, rounded, np.float16([-60000.0, 3.0])).passed
    assert not judge(bound, precise, rounded, np.float16([np.inf, np.inf])).passed
