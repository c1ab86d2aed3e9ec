"""Einsum and Det (reference/einsum.py, reference/det.py) judged as a runtime's outputs would be.

Einsum: the equation's forms give numpy.einsum's values on integers (numpy computes them, not
conform), the implicit output is sorted by ASCII, the equations the text forbids are invalid by
their rule, legal orders (reversed, blocked, float64 then rounded, pairwise contraction of three
operands either way) pass, planted bugs (a dropped term, a missing transpose, the anti-diagonal for
the trace, an unsorted implicit output) fail, a float16 sum of 4096 terms is told as accumulated in
float16 or in float32, integer overflow has its readings. Det: numpy.linalg.det in float32 and
float64 passes, and so do float16 computed in float32, an LU in float16, the cofactor expansion, the
LU of the transpose; planted bugs (the sign of the permutation dropped, another matrix of the batch,
|det|) fail; the exact value is Leibniz's formula over Fractions; singular, 1x1, 0x0, non-finite
and invalid inputs."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.dtypes import from_numpy
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput
from test_family_matmul import blocked

RNG = np.random.default_rng(12)


def einsum_case(equation: str, *operands: np.ndarray, since: int = 12) -> Example:
    version = next(v for v in versions("Einsum") if v.since_version == since)
    names = [version.inputs[0].instance(k) for k in range(len(operands))]
    types = {"T": from_numpy(operands[0].dtype).name}
    return Example(version, "unit", types, dict(zip(names, operands)), {"equation": equation}, "unit", "T")


def det_case(x: np.ndarray, since: int = 22) -> Example:
    version = next(v for v in versions("Det") if v.since_version == since)
    return Example(version, "unit", {"T": from_numpy(x.dtype).name}, {"X": x}, {}, "unit", "T")


def verdict(case: Example, output):
    return judge(for_op(case.op).expected(case), RunOutput(outputs=(np.asarray(output),)))


def outcome(case: Example, output) -> str:
    return verdict(case, output).outcome


def invalid_rule(case: Example) -> str | None:
    found = for_op(case.op).expected(case)
    return None if found.is_valid else found.invalid.rule


# --- Einsum ---

def ints(*shape: int) -> np.ndarray:
    return RNG.integers(-5, 6, size=shape).astype(np.int64)


NUMPY_FORMS = [
    ("ij,jk->ik", (ints(3, 4), ints(4, 2))),
    ("bij,bjk->bik", (ints(2, 3, 4), ints(2, 4, 5))),
    ("ij->ji", (ints(3, 4),)),
    ("ii", (ints(4, 4),)),
    ("ii->i", (ints(4, 4),)),
    ("bii->bi", (ints(2, 3, 3),)),
    ("iij->j", (ints(3, 3, 2),)),
    ("i,j->ij", (ints(3), ints(4))),
    ("ij->", (ints(3, 4),)),
    ("ij->j", (ints(3, 4),)),
    ("...ij,...jk->...ik", (ints(2, 3, 4), ints(2, 4, 2))),
    ("...ij,...jk->...ik", (ints(2, 1, 3, 4), ints(1, 5, 4, 2))),
    ("ij,jk", (ints(3, 4), ints(4, 2))),
    ("i,i", (ints(5), ints(5))),
    ("ij,jk,kl->il", (ints(2, 3), ints(3, 4), ints(4, 2))),
    ("ijk,jl->il", (ints(2, 3, 4), ints(3, 2))),
    (",ij->ij", (np.array(3, dtype=np.int64), ints(2, 3))),
    ("a...,...b->ab...", (ints(2, 3), ints(3, 4))),
    ("...ii->...i", (ints(2, 3, 3),)),
    ("ij,ij,ij->", (ints(2, 3), ints(2, 3), ints(2, 3))),
    ("Ab,bC->AC", (ints(2, 3), ints(3, 2))),
    ("ij,jk->ik", (ints(2, 0), ints(0, 3))),
]


@pytest.mark.parametrize("equation,operands", NUMPY_FORMS, ids=[f"{e}#{k}" for k, (e, _) in enumerate(NUMPY_FORMS)])
def test_einsum_forms_give_numpy_values_on_integers(equation, operands):
    found = for_op("Einsum").expected(einsum_case(equation, *operands))
    assert found.is_valid
    np.testing.assert_array_equal(found.readings[0].outputs[0], np.einsum(equation, *operands))
    assert found.readings[0].outputs[0].shape == np.einsum(equation, *operands).shape


def test_spaces_anywhere_are_ignored():
    a, b = ints(3, 4), ints(4, 2)
    assert outcome(einsum_case(" ij , jk -> ik ", a, b), a @ b) == PASS
    assert outcome(einsum_case("i j - > j i", a), a.T) == PASS


def test_implicit_output_sorted_by_ascii_upper_before_lower():
    a = ints(2, 3)
    assert outcome(einsum_case("ba", a), a.T) == PASS  # b, a sorted: a first
    assert outcome(einsum_case("ba", a), a) == FAIL  # the labels left in the order written
    assert outcome(einsum_case("aA", a), a.T) == PASS  # "A" < "a"
    assert outcome(einsum_case("Aa", a), a) == PASS
    # A label appearing twice anywhere is summed in implicit mode: ab,b sums b.
    v = ints(3)
    assert outcome(einsum_case("ab,b", a, v), a @ v) == PASS


def test_ellipsis_summed_away_is_a_reading_a_runtime_may_reject():
    x = ints(2, 3, 4)
    found = for_op("Einsum").expected(einsum_case("...ij->ij", x))
    assert found.may_reject is not None
    np.testing.assert_array_equal(found.readings[0].outputs[0], x.sum(axis=0))
    y = ints(2, 3)
    np.testing.assert_array_equal(for_op("Einsum").expected(einsum_case("ij->...ji", y)).readings[0].outputs[0], y.T)


@pytest.mark.parametrize("equation,shapes,rule", [
    ("i1", [(2,)], "bad-equation"),
    ("i\t->i", [(2,)], "bad-equation"),
    ("i->i->i", [(2,)], "bad-equation"),
    ("..i", [(2, 2)], "bad-equation"),
    ("i-j", [(2, 2)], "bad-equation"),
    ("ij,jk->ik", [(2, 3)], "operand-count"),
    ("i->i", [(2,), (2,)], "operand-count"),
    ("ijk", [(2, 3)], "term-rank-mismatch"),
    ("i", [(2, 3)], "term-rank-mismatch"),
    ("ij,jk", [(2, 3), (4, 2)], "label-dims-mismatch"),
    ("ii", [(2, 3)], "label-dims-mismatch"),
    ("ij,ij->ij", [(2, 1), (2, 3)], "label-dims-mismatch"),
    ("...i,...i", [(2, 2, 3), (2, 3)], "ellipsis-rank-differs"),
    ("...i,...i", [(2, 3), (3, 3)], "ellipsis-not-broadcastable"),
    ("...i...", [(2, 3, 4)], "ellipsis-twice"),
    ("...->......", [(2, 3)], "ellipsis-twice"),
    ("ij->k", [(2, 3)], "output-label-unknown"),
    ("ij->ii", [(2, 2)], "output-label-repeated"),
])
def test_equations_the_text_forbids_are_invalid(equation, shapes, rule):
    operands = [np.ones(s, dtype=np.float32) for s in shapes]
    assert invalid_rule(einsum_case(equation, *operands)) == rule


A32 = RNG.standard_normal((5, 24)).astype(np.float32)
B32 = RNG.standard_normal((24, 6)).astype(np.float32)
C32 = RNG.standard_normal((6, 3)).astype(np.float32)


@pytest.mark.parametrize("correct", [
    lambda a, b: np.einsum("ij,jk->ik", a, b),
    lambda a, b: a[:, ::-1] @ b[::-1],
    lambda a, b: blocked(a, b, 5),
    lambda a, b: (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32),
], ids=["numpy", "reversed", "blocked", "float64_then_rounded"])
def test_matrix_product_in_any_order_passes(correct):
    assert outcome(einsum_case("ij,jk->ik", A32, B32), correct(A32, B32)) == PASS


def test_three_operands_contracted_either_way_pass():
    case = einsum_case("ij,jk,kl->il", A32, B32, C32)
    assert outcome(case, (A32 @ B32) @ C32) == PASS
    assert outcome(case, A32 @ (B32 @ C32)) == PASS
    assert outcome(case, (A32 @ B32)[:, 1:] @ C32[1:]) == FAIL  # a dropped term


def test_matrix_product_planted_bugs_fail():
    case = einsum_case("ij,jk->ik", A32, B32)
    assert outcome(case, A32[:, 1:] @ B32[1:]) == FAIL
    assert outcome(case, (A32 @ B32) * np.float32(1.001)) == FAIL


def test_exactly_summable_values_are_judged_bitwise():
    a = (RNG.integers(-4, 5, size=(4, 4)) * 0.25).astype(np.float32)
    case = einsum_case("ij->ji", a)
    assert outcome(case, a.T) == PASS
    assert outcome(case, a) == FAIL  # the transpose forgotten
    trace = einsum_case("ii", a)
    assert outcome(trace, np.float32(np.trace(a))) == PASS
    assert outcome(trace, np.float32(np.trace(a[:, ::-1]))) == FAIL  # the anti-diagonal
    one_off = np.nextafter(np.float32(np.trace(a)), np.float32(np.inf))
    assert outcome(trace, one_off) == FAIL
    product = einsum_case("ij,jk->ik", a, a)
    assert outcome(product, a @ a) == PASS
    assert outcome(product, a.T @ a) == FAIL


def test_float16_long_sum_is_told_by_its_accumulator():
    x = (1 + np.abs(RNG.standard_normal(4096)) / 2).astype(np.float16)
    ones = np.ones(4096, np.float16)
    case = einsum_case("i,i->", x, ones)
    wide = verdict(case, np.float16(np.sum(x.astype(np.float32))))
    assert wide.outcome == PASS and wide.reading == "accumulated in float32 or wider"
    narrow = np.float16(0)
    for value in x:
        narrow = np.float16(narrow + value)
    found = verdict(case, narrow)
    assert found.outcome == PASS and found.reading == "accumulated in float16"


def test_non_finite_terms_are_ieee_products_and_sums():
    case = einsum_case("i,i->", np.array([0.0, 1.0], np.float32), np.array([np.inf, 1.0], np.float32))
    assert outcome(case, np.float32(np.nan)) == PASS
    assert outcome(case, np.float32(1.0)) == FAIL
    rows = einsum_case("ij->i", np.array([[np.inf, -np.inf], [np.inf, 1.0]], np.float32))
    assert outcome(rows, np.array([np.nan, np.inf], np.float32)) == PASS
    assert outcome(rows, np.array([np.nan, np.nan], np.float32)) == FAIL


def test_an_empty_sum_is_zero_and_an_empty_output_has_no_elements():
    case = einsum_case("ij,jk->ik", np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32))
    assert outcome(case, np.zeros((2, 3), np.float32)) == PASS
    assert outcome(case, np.ones((2, 3), np.float32)) == FAIL
    empty = einsum_case("i,j->ij", np.zeros(0, np.float32), np.ones(3, np.float32))
    assert outcome(empty, np.zeros((0, 3), np.float32)) == PASS


def test_integer_overflow_wrapped_or_saturated():
    case = einsum_case("i,i->", np.array([100, 100], np.int8), np.array([2, 2], np.int8))
    assert outcome(case, np.int8(-112)) == AMBIGUOUS  # 400 wrapped
    assert outcome(case, np.int8(127)) == AMBIGUOUS  # saturated
    assert outcome(case, np.int8(0)) == FAIL
    fits = einsum_case("i,i->", np.array([3, 4], np.uint8), np.array([5, 6], np.uint8))
    assert outcome(fits, np.uint8(39)) == PASS


def test_bfloat16_is_einsum_28s_only():
    from ml_dtypes import bfloat16

    b = np.ones(2, dtype=bfloat16)
    assert invalid_rule(einsum_case("i->i", b, since=12)) == "dtype-not-allowed"
    assert outcome(einsum_case("i->i", b, since=28), b) == PASS


# --- Det ---

def leibniz(matrix: np.ndarray) -> Fraction:
    """Σ over permutations of sign·Π a_i,σ(i), in Fractions: the determinant by its definition."""
    size = matrix.shape[0]
    total = Fraction(0)
    for permutation in itertools.permutations(range(size)):
        inversions = sum(1 for i in range(size) for j in range(i + 1, size) if permutation[i] > permutation[j])
        term = Fraction(-1 if inversions % 2 else 1)
        for i in range(size):
            term *= Fraction(float(matrix[i, permutation[i]]))
        total += term
    return total


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_det_exact_value_is_leibnizs_formula(size):
    x = RNG.standard_normal((3, size, size)).astype(np.float32)
    found = for_op("Det").expected(det_case(x))
    precise = found.readings[0].precise[0]
    for k in range(3):
        assert precise[k] == float(leibniz(x[k].astype(np.float64)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 8, 12, 16])
def test_numpy_det_passes(dtype, size):
    for scale in (1.0, 1e-3, 1e3):
        x = (RNG.standard_normal((4, size, size)) * scale).astype(dtype)
        found = verdict(det_case(x), np.linalg.det(x))
        assert found.outcome == PASS, found.message


def lu_det(matrix: np.ndarray, dtype) -> np.generic:
    """An LU with partial pivoting carried out in `dtype`, the product of U's diagonal in it."""
    work = matrix.astype(dtype).copy()
    size, sign = work.shape[0], 1
    for k in range(size):
        pivot = k + int(np.argmax(np.abs(work[k:, k])))
        if pivot != k:
            work[[k, pivot]] = work[[pivot, k]]
            sign = -sign
        if work[k, k] == 0:
            continue
        for i in range(k + 1, size):
            factor = dtype(work[i, k] / work[k, k])
            work[i, k:] = (work[i, k:] - factor * work[k, k:]).astype(dtype)
    product = dtype(sign)
    for k in range(size):
        product = dtype(product * work[k, k])
    return product


def cofactor_det(matrix: np.ndarray, dtype):
    """The cofactor expansion along the first row, every step rounded to `dtype`."""
    size = matrix.shape[0]
    if size == 1:
        return dtype(matrix[0, 0])
    total = dtype(0)
    for j in range(size):
        minor = np.delete(matrix[1:], j, axis=1)
        term = dtype(dtype(matrix[0, j]) * cofactor_det(minor, dtype))
        total = dtype(total - term) if j % 2 else dtype(total + term)
    return total


@pytest.mark.parametrize("size", [2, 3, 4, 6])
def test_other_correct_algorithms_pass(size):
    x = RNG.standard_normal((5, size, size)).astype(np.float32)
    case = det_case(x)
    assert outcome(case, np.array([lu_det(m, np.float32) for m in x])) == PASS
    assert outcome(case, np.array([lu_det(m.T, np.float32) for m in x])) == PASS
    if size <= 4:
        assert outcome(case, np.array([cofactor_det(m, np.float32) for m in x])) == PASS
    sign, logdet = np.linalg.slogdet(x)
    assert outcome(case, (sign * np.exp(logdet)).astype(np.float32)) == PASS


@pytest.mark.parametrize("size", [2, 3, 4, 5])
def test_float16_computed_in_float32_or_in_float16_passes(size):
    x = RNG.standard_normal((6, size, size)).astype(np.float16)
    case = det_case(x)
    wide = verdict(case, np.linalg.det(x.astype(np.float32)).astype(np.float16))
    assert wide.outcome == PASS and wide.reading.startswith("computed in float32")
    narrow = verdict(case, np.array([lu_det(m, np.float16) for m in x]))
    assert narrow.outcome == PASS, narrow.message


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_det_planted_bugs_fail(dtype):
    x = RNG.integers(-4, 5, size=(6, 4, 4)).astype(dtype)
    for m in x:  # no singular matrix: every bug must show
        m[np.arange(4), np.arange(4)] += dtype(9)
    right = np.linalg.det(x.astype(np.float64)).astype(dtype)
    case = det_case(x)
    assert outcome(case, right) == PASS
    assert outcome(case, -right) == FAIL  # the permutation's sign dropped or reversed
    assert outcome(case, np.roll(right, 1)) == FAIL  # another matrix of the batch
    negative = x.copy()
    negative[:, 0] *= -1
    assert outcome(det_case(negative), np.abs(np.linalg.det(negative.astype(np.float64))).astype(dtype)) == FAIL
    unpivoted_sign = np.array([[0, 1], [1, 0]], dtype)
    assert outcome(det_case(unpivoted_sign), dtype(1)) == FAIL
    assert outcome(det_case(unpivoted_sign), dtype(-1)) == PASS


def test_singular_matrices_allow_an_lus_tiny_value_but_a_zero_row_is_exactly_zero():
    singular = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], np.float32)
    assert outcome(det_case(singular), np.linalg.det(singular)) == PASS
    assert outcome(det_case(singular), np.float32(0)) == PASS
    assert outcome(det_case(singular), np.float32(1e-2)) == FAIL
    rank_one = np.outer([1.0, 2.0, 3.0], [0.5, 1.5, -2.0]).astype(np.float64)
    assert outcome(det_case(rank_one), np.linalg.det(rank_one)) == PASS
    zero_row = np.array([[1, 2], [0, 0]], np.float32)
    assert outcome(det_case(zero_row), np.float32(0)) == PASS
    assert outcome(det_case(zero_row), np.float32(1e-30)) == FAIL


def test_one_by_one_zero_by_zero_and_batches():
    assert outcome(det_case(np.array([[3.0]])), np.float64(3.0000000000000004)) == PASS  # numpy's exp(log 3)
    assert outcome(det_case(np.array([[3.0]])), np.float64(-3.0)) == FAIL
    empty = for_op("Det").expected(det_case(np.zeros((0, 0), np.float32)))
    assert empty.may_reject is not None and empty.readings[0].outputs[0] == 1
    assert outcome(det_case(np.zeros((2, 0, 0), np.float32)), np.ones(2, np.float32)) == PASS
    assert outcome(det_case(np.zeros((0, 3, 3), np.float32)), np.zeros(0, np.float32)) == PASS
    batch = np.stack([np.eye(2), 2 * np.eye(2)]).astype(np.float32)[None]
    assert outcome(det_case(batch), np.array([[1.0, 4.0]], np.float32)) == PASS
    assert outcome(det_case(batch), np.array([1.0, 4.0], np.float32)) == FAIL  # the batch shape lost


def test_non_finite_matrices_allow_any_non_finite_value():
    x = np.array([[[1, np.nan], [3, 4]], [[np.inf, 1], [1, 1]], [[1, 2], [3, 4]]], np.float32)
    case = det_case(x)
    assert outcome(case, np.array([np.nan, np.inf, -2], np.float32)) == PASS
    assert outcome(case, np.array([-np.inf, np.nan, -2], np.float32)) == PASS
    assert outcome(case, np.array([0.0, np.inf, -2], np.float32)) == FAIL


@pytest.mark.parametrize("shape", [(3,), (), (2, 3), (2, 3, 2)])
def test_det_shapes_the_text_forbids(shape):
    assert invalid_rule(det_case(np.ones(shape, np.float32))) == "not-square-matrices"


def test_bfloat16_is_det_22s_only():
    from ml_dtypes import bfloat16

    x = np.array([[1, 2], [3, 4]], dtype=bfloat16)
    assert invalid_rule(det_case(x, since=11)) == "dtype-not-allowed"
    assert outcome(det_case(x, since=22), np.array(-2, dtype=bfloat16)) == PASS


@pytest.mark.parametrize("op", ["Einsum", "Det"])
def test_random_cases_cover_every_dtype_and_the_reference_answers_each(op):
    from conformance import strategies

    drawn = strategies.generate(list(versions(op)), 12, seed=3)
    wanted = {(v.since_version, d) for v in versions(op) for d in v.allowed("T")}
    assert {(e.version.since_version, e.dtype) for e in drawn} == wanted
    answers = [for_op(op).expected(e) for e in drawn]
    assert any(a.is_valid for a in answers) and all(a.is_valid or a.invalid.rule for a in answers)
