"""The dot-product ops (reference/matmul.py) judged as a runtime's outputs would be: planted wrong
implementations fail (a transposed operand, a dropped term, transA ignored, beta ignored, C
broadcast wrong), correct computations in another order pass (reversed K, blocked sums, float16
accumulated in float32, float64 then one rounding), integer overflow has its readings, and
MatMulInteger subtracts its zero points."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.dtypes import from_numpy
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(11)


def example(op: str, since: int, inputs: dict, types: dict | None = None, **attributes) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    param = for_op(op).dtype_param
    if types is None:
        types = {param: from_numpy(inputs["A"].dtype).name}
    return Example(version, "unit", types, inputs, attributes, "unit", param)


def verdict(case: Example, output: np.ndarray):
    return judge(for_op(case.op).expected(case), RunOutput(outputs=(np.asarray(output),)))


def outcome(case: Example, output: np.ndarray) -> str:
    return verdict(case, output).outcome


A = RNG.standard_normal((5, 24)).astype(np.float32)
B = RNG.standard_normal((24, 6)).astype(np.float32)
SMALL_A = RNG.integers(-4, 5, size=(4, 8)).astype(np.float32) * np.float32(0.25)
SMALL_B = RNG.integers(-4, 5, size=(8, 4)).astype(np.float32)


def blocked(a: np.ndarray, b: np.ndarray, block: int) -> np.ndarray:
    """Σ over blocks of K, each block summed apart, in a's type."""
    total = np.zeros((a.shape[0], b.shape[1]), dtype=a.dtype)
    for start in range(0, a.shape[1], block):
        total = (total + a[:, start:start + block] @ b[start:start + block]).astype(a.dtype)
    return total


@pytest.mark.parametrize("correct", [
    lambda a, b: a @ b,
    lambda a, b: a[:, ::-1] @ b[::-1],
    lambda a, b: blocked(a, b, 5),
    lambda a, b: (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32),
], ids=["plain", "reversed", "blocked", "float64_then_rounded"])
def test_matmul_in_any_order_passes(correct):
    case = example("MatMul", 13, {"A": A, "B": B})
    found = verdict(case, correct(A, B))
    assert found.outcome == PASS, found.message


@pytest.mark.parametrize("planted", [
    lambda a, b: a[:, 1:] @ b[1:],  # a dropped term
    lambda a, b: (a @ b) * np.float32(1.0001),
], ids=["dropped_term", "scaled"])
def test_matmul_planted_bugs_fail(planted):
    case = example("MatMul", 13, {"A": A, "B": B})
    assert outcome(case, planted(A, B)) == FAIL


def test_a_transposed_operand_fails_bitwise_on_exactly_summable_values():
    square_a, square_b = SMALL_A[:, :4], SMALL_B[:4]
    case = example("MatMul", 13, {"A": square_a, "B": square_b})
    assert outcome(case, square_a @ square_b) == PASS
    assert outcome(case, square_a.T @ square_b) == FAIL
    assert outcome(case, square_a @ square_b.T) == FAIL
    one_off = (square_a @ square_b).copy()
    one_off[0, 0] = np.nextafter(one_off[0, 0], np.float32(np.inf))
    assert outcome(case, one_off) == FAIL  # one ULP: exactly summable rows are judged bitwise


def test_float16_accumulated_in_float32_or_in_float16_both_pass_and_are_named():
    a = (1 + np.abs(RNG.standard_normal((2, 1024))) / 2).astype(np.float16)
    b = np.ones((1024, 2), np.float16)
    case = example("MatMul", 13, {"A": a, "B": b})
    wide = verdict(case, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))
    assert wide.outcome == PASS and wide.reading == "accumulated in float32 or wider"
    narrow = np.zeros((2, 2), np.float16)
    for k in range(1024):
        narrow = (narrow + a[:, k:k + 1] * b[k:k + 1, :]).astype(np.float16)
    found = verdict(case, narrow)
    assert found.outcome == PASS and found.reading == "accumulated in float16"


def test_float64_computed_exactly_and_in_another_order():
    a, b = RNG.standard_normal((3, 16)), RNG.standard_normal((16, 2))
    case = example("MatMul", 13, {"A": a, "B": b})
    assert outcome(case, a @ b) == PASS
    assert outcome(case, a[:, ::-1] @ b[::-1]) == PASS
    assert outcome(case, a[:, 1:] @ b[1:]) == FAIL


def test_numpy_shapes_one_d_and_batch_broadcasting():
    a, b = SMALL_A[0], SMALL_B
    assert outcome(example("MatMul", 13, {"A": a, "B": b}), a @ b) == PASS
    assert outcome(example("MatMul", 13, {"A": a, "B": b}), (a @ b)[None]) == FAIL  # the promoted dim is removed
    stack = np.stack([SMALL_A, -SMALL_A])[:, None]  # [2, 1, 4, 8]
    other = np.stack([SMALL_B, SMALL_B * 2, SMALL_B * 3])  # [3, 8, 4]
    case = example("MatMul", 13, {"A": stack, "B": other})
    assert outcome(case, np.matmul(stack, other)) == PASS
    assert for_op("MatMul").expected(example("MatMul", 13, {"A": np.float32(2.0).reshape(()), "B": SMALL_B})).invalid.rule == "rank-0"
    clash = example("MatMul", 13, {"A": np.ones((2, 1, 3), np.float32), "B": np.ones((3, 3, 1), np.float32)})
    assert for_op("MatMul").expected(clash).invalid.rule == "batch-not-broadcastable"


def test_an_empty_sum_is_zero():
    case = example("MatMul", 13, {"A": np.zeros((2, 0), np.float32), "B": np.zeros((0, 3), np.float32)})
    assert outcome(case, np.zeros((2, 3), np.float32)) == PASS
    assert outcome(case, np.ones((2, 3), np.float32)) == FAIL


C = RNG.integers(-4, 5, size=(4, 4)).astype(np.float32)


def gemm(a, b, c, alpha=1.0, beta=1.0):
    return (np.float32(alpha) * (a @ b) + np.float32(beta) * c).astype(np.float32)


def test_gemm_planted_bugs_fail_and_reorderings_pass():
    a_t = np.ascontiguousarray(SMALL_A.T)  # stored as (K, M), transA = 1
    case = example("Gemm", 13, {"A": a_t, "B": SMALL_B, "C": C}, transA=1, alpha=0.5, beta=-2.0)
    right = gemm(SMALL_A, SMALL_B, C, 0.5, -2.0)
    assert outcome(case, right) == PASS
    assert outcome(case, (np.float32(0.5) * (SMALL_A[:, ::-1] @ SMALL_B[::-1]) - 2 * C).astype(np.float32)) == PASS
    assert outcome(case, gemm(SMALL_A, SMALL_B, C, 0.5, 1.0)) == FAIL  # beta ignored
    assert outcome(case, gemm(SMALL_A, SMALL_B, C, 1.0, -2.0)) == FAIL  # alpha ignored
    square = example("Gemm", 13, {"A": SMALL_A[:, :4], "B": SMALL_B[:4], "C": C}, transA=1)
    assert outcome(square, gemm(SMALL_A[:, :4].T, SMALL_B[:4], C)) == PASS
    assert outcome(square, gemm(SMALL_A[:, :4], SMALL_B[:4], C)) == FAIL  # transA ignored


def test_gemm_c_broadcast_to_m_n_and_a_wrong_broadcast_fails():
    column = C[:, :1]
    case = example("Gemm", 13, {"A": SMALL_A, "B": SMALL_B, "C": column})
    assert outcome(case, gemm(SMALL_A, SMALL_B, column)) == PASS
    assert outcome(case, gemm(SMALL_A, SMALL_B, column.reshape(1, 4))) == FAIL  # C read as a row
    assert for_op("Gemm").expected(example("Gemm", 13, {"A": SMALL_A, "B": SMALL_B, "C": np.ones(3, np.float32)})).invalid.rule \
        == "c-not-broadcastable"
    absent = example("Gemm", 11, {"A": SMALL_A, "B": SMALL_B}, beta=3.0)
    assert outcome(absent, SMALL_A @ SMALL_B) == PASS


def test_gemm_before_7_broadcasts_c_only_with_broadcast_set():
    vector = C[0]
    assert for_op("Gemm").expected(example("Gemm", 6, {"A": SMALL_A, "B": SMALL_B, "C": vector})).invalid.rule == "c-not-broadcastable"
    case = example("Gemm", 6, {"A": SMALL_A, "B": SMALL_B, "C": vector}, broadcast=1)
    assert outcome(case, gemm(SMALL_A, SMALL_B, vector)) == PASS
    numpy_only = for_op("Gemm").expected(example("Gemm", 6, {"A": SMALL_A, "B": SMALL_B, "C": C[:, :1]}, broadcast=1))
    assert numpy_only.is_valid and numpy_only.may_reject


def test_gemm_beta_zero_beside_an_infinite_c_has_both_readings():
    c = np.array([[np.inf]], np.float32)
    case = example("Gemm", 13, {"A": np.float32([[1, 2]]), "B": np.float32([[1], [1]]), "C": c}, beta=0.0)
    assert outcome(case, np.float32([[np.nan]])) == AMBIGUOUS
    assert outcome(case, np.float32([[3]])) == AMBIGUOUS
    assert outcome(case, np.float32([[4]])) == FAIL


def test_integer_products_are_exact_and_overflow_has_two_readings():
    big = example("MatMul", 13, {"A": np.array([[2 ** 62, 2 ** 62]], np.int64), "B": np.array([[1], [1]], np.int64)})
    labels = {r.label: int(r.outputs[0].reshape(-1)[0]) for r in for_op("MatMul").expected(big).readings}
    assert labels == {"wrapped (two's complement)": -(2 ** 63), "saturated": 2 ** 63 - 1}
    assert outcome(big, np.int64([[-(2 ** 63)]])) == AMBIGUOUS
    through_double = example("MatMul", 13, {"A": np.array([[2 ** 53, 1]], np.int64), "B": np.array([[1], [1]], np.int64)})
    assert outcome(through_double, np.int64([[2 ** 53]])) == FAIL
    assert outcome(through_double, np.int64([[2 ** 53 + 1]])) == PASS


def test_integer_gemm_with_a_fractional_alpha_has_rounding_readings():
    case = example("Gemm", 13, {"A": np.int32([[1]]), "B": np.int32([[3]]), "C": np.int32([[0]])}, alpha=0.5)
    values = {int(r.outputs[0].reshape(-1)[0]) for r in for_op("Gemm").expected(case).readings}
    assert values == {1, 2, 0}  # 1.5 truncated or floored, rounded to even, alpha truncated to 0 first
    assert outcome(case, np.int32([[5]])) == FAIL


def test_matmul_integer_subtracts_zero_points_per_tensor_row_and_column():
    types = {"T1": "uint8", "T2": "int8", "T3": "int32"}
    a = np.array([[130, 131], [10, 12]], np.uint8)
    b = np.array([[1, 2], [3, 4]], np.int8)
    per_row = example("MatMulInteger", 10, {"A": a, "B": b, "a_zero_point": np.array([128, 10], np.uint8)}, types)
    assert outcome(per_row, np.int32([[2 + 9, 4 + 12], [0 + 6, 0 + 8]])) == PASS
    assert outcome(per_row, (a.astype(np.int32) @ b.astype(np.int32))) == FAIL  # zero point ignored
    per_column = example("MatMulInteger", 10, {"A": a, "B": b, "b_zero_point": np.array([1, 2], np.int8)}, types)
    shifted = a.astype(np.int32) @ (b.astype(np.int32) - np.int32([1, 2]))
    assert outcome(per_column, shifted) == PASS
    wrong = example("MatMulInteger", 10, {"A": a, "B": b, "a_zero_point": np.array([1, 2, 3], np.uint8)}, types)
    assert for_op("MatMulInteger").expected(wrong).invalid.rule == "zero-point-shape"


def test_matmul_integer_accumulation_overflow_in_32_bits():
    types = {"T1": "uint8", "T2": "uint8", "T3": "int32"}
    k = 33100
    case = example("MatMulInteger", 10, {"A": np.full((1, k), 255, np.uint8), "B": np.full((k, 1), 255, np.uint8)}, types)
    exact = 255 * 255 * k
    labels = {r.label: int(r.outputs[0].reshape(-1)[0]) for r in for_op("MatMulInteger").expected(case).readings}
    assert labels == {"wrapped (two's complement)": exact - 2 ** 32, "saturated": 2 ** 31 - 1}


def test_products_past_the_max_may_give_any_infinity_or_nan_and_a_finite_answer_is_still_bound():
    # Σ|a·b| = 1.2e39 passes float's max: in float the products are +inf and -inf, their sum NaN
    # (another order: inf), where the exact value is 0; the bound γ(2)·1.2e39 holds a finite answer.
    a = np.float32([[3e38, 3e38]])
    b = np.float32([[2.0], [-2.0]])
    case = example("MatMul", 13, {"A": a, "B": b})
    for overflowed in (np.nan, np.inf, -np.inf):
        assert outcome(case, np.float32([[overflowed]])) == PASS, overflowed
    assert outcome(case, np.float32([[0.0]])) == PASS
    assert outcome(case, np.float32([[1e36]])) == FAIL  # far past 4 times the bound
