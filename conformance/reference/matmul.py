"""The dot-product ops: MatMul (1, 9, 13), Gemm (1, 6, 7, 9, 11, 13) and MatMulInteger (10).

Each output element is a dot product Σ_k a_k·b_k over the K terms of a row of A' and a column of
B' (Gemm: alpha·Σ + beta·c), answered by one shared path: the operands as stacks of matrices
(B, M, K) and (B, K, N), the products of each output element as a row of K terms.

Shapes, by the texts:

- MatMul and MatMulInteger "behave like numpy.matmul": a 1-D A is promoted to a row [1, K] and a
  1-D B to a column [K, 1], the promoted dim removed from the result; operands of rank above 2 are
  stacks of matrices whose batch dims broadcast (Numpy-style); a rank-0 operand is invalid
  (numpy: "Multiplication by scalars is not allowed"), as are inner dims that differ and batch dims
  that do not broadcast. K = 0 is an empty sum: zeros.
- Gemm: A (M, K) or (K, M) by transA, B (K, N) or (N, K) by transB, both of rank 2. From version 7
  C is unidirectionally broadcastable to (M, N); from 11 it is optional ("as if C is a scalar 0").
  Versions 1 and 6 have the `broadcast` attribute: without it C has dimension (M X N); with it C
  "will be broadcasted to match the dimension requirement", which the broadcasting of their time
  (the legacy rule: a suffix of (M, N), or one element) defines; a C that broadcasts only
  Numpy-style ([M, 1]) is valid by the later texts and may be rejected there.

Judging:

- Float outputs take a per-element bound (bounds.py): the exact value of the terms as given, and
  Higham's bound for a dot product in any order, γ(K)·Σ|a_k·b_k| (products may be rounded in the
  accumulator, so γ(K) rather than γ(K−1)), in each accumulator a runtime may use (float16 and
  bfloat16 in float32 or in their own type). Gemm adds one rounding for alpha· (unless alpha is ±1)
  and one for the addition of beta·C: γ(K + [alpha ≠ ±1] + [beta·C present])·(|alpha|·Σ|a_k·b_k| +
  |beta·c|): every term's path through any evaluation order (alpha applied to the sum or to A,
  C added last or as the accumulator's start) takes at most that many roundings. alpha and beta are
  float attributes: a 16-bit runtime may round them to its type first, which adds
  |alpha − alpha_T|·Σ|a_k·b_k| + |beta − beta_T|·|c|. Where every partial sum is exact in an
  accumulator (small integers, quarters) and alpha, beta are 0 or powers of two, that tier allows
  the correctly rounded value alone. Over 1,000 outputs, TOSA's statistical test.
- The exact value: float16, bfloat16 and float32 products are exact in float64 and their sums far
  within the bound; float64 inputs are summed exactly with Fractions (over 200,000 terms, in
  float64 with math.fsum, its own error K·2^-53·Σ|a_k·b_k| added to the bound).
- alpha = 0 or beta = 0 beside an infinite or NaN operand: as written, 0·inf is NaN; BLAS does not
  read C where beta = 0, nor A and B where alpha = 0. Both are readings.
- Integer outputs are exact where they fit; where they overflow the type the text says nothing:
  wrapped (two's complement) and saturated are readings. Integer Gemm with a fractional alpha or
  beta gives a fraction the text does not say how to round: truncated, floored and rounded to
  nearest are readings, and so are alpha and beta truncated to the type first.
- MatMulInteger: (A − a_zero_point)·(B − b_zero_point) in int32, exact; "The accumulation may
  overflow if and only if in 32 bits": wrapped and saturated readings. The zero points: a scalar
  (per tensor), per row of A ([M] for a 2-D A, A's shape with its last dim 1 for an N-D one), per
  column of B ([N] for a 2-D B, B's shape with its second-to-last dim 1); a 1-element 1-D tensor,
  neither a scalar nor such a vector, is read as per tensor and may be rejected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import ml_dtypes
import numpy as np

from ..bounds import (ElementBound, Tier, accumulators, as_float, exactly_summable, gamma, half_ulp, ksb, least_subnormal,
                      statistical_scale, unit_roundoff)
from ..case import Example
from ..dtypes import from_numpy
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings
from .broadcast import legacy_b_shape, multidirectional_shape
from .conversion import wrapped_and_saturated
from .expected import spec_if_one

NUMPY = "Matrix product that behaves like numpy.matmul"
RANK_0 = f"{NUMPY} (numpy.matmul: 'Multiplication by scalars is not allowed, use * instead.')"
INNER = (f"{NUMPY} (numpy.matmul: the last dim of A (its only one, for a 1-D A) must equal the second-to-last "
         "of B (its only one, for a 1-D B))")
BATCH = (f"{NUMPY} (numpy.matmul: 'If either argument is N-D, N > 2, it is treated as a stack of matrices residing "
         "in the last two indexes and broadcast accordingly.')")
GEMM_SHAPES = ("input tensor A has shape (M, K) or (K, M), input tensor B has shape (K, N) or (N, K), input tensor C "
               "is broadcastable to shape (M, N)")
GEMM_SHAPES_1 = "input tensor A has dimension (M X K), input tensor B has dimension (K X N), input tensor C and output tensor Y have dimension (M X N)."
GEMM_C = "C: The shape of C should be unidirectional broadcastable to (M, N)."
GEMM_C_LEGACY = ("If attribute broadcast is non-zero, input tensor C will be broadcasted to match the dimension "
                 "requirement (the broadcasting of its time: C's shape a suffix of (M, N), or one element)")
GEMM_C_NUMPY = ("Gemm before 7 broadcasts C by the rule of its time (a suffix of (M, N), or one element); a C that "
                "broadcasts only Numpy-style, as the later texts allow, may be rejected")
ZERO_POINT_A = ("a_zero_point: It could be a scalar or N-D tensor. Scalar refers to per tensor quantization whereas N-D "
                "refers to per row quantization. If the input is 2D of shape [M, K] then zero point tensor may be an M "
                "element vector [zp_1, zp_2, ..., zp_M]. If the input is N-D tensor with shape [D1, D2, M, K] then zero "
                "point tensor may have shape [D1, D2, M, 1].")
ZERO_POINT_B = ("b_zero_point: It could be a scalar or a N-D tensor, Scalar refers to per tensor quantization whereas N-D "
                "refers to per col quantization. If the input is 2D of shape [K, N] then zero point tensor may be an N "
                "element vector [zp_1, zp_2, ..., zp_N]. If the input is N-D tensor with shape [D1, D2, K, N] then zero "
                "point tensor may have shape [D1, D2, 1, N].")
ONE_ELEMENT = "a 1-element 1-D zero point is neither the scalar nor the vector the text names: read as per tensor, it may be rejected"
OVERFLOW_OPEN = "the text does not say what an integer matrix product that overflows its type gives"
ACCUMULATION_32 = "The production MUST never overflow. The accumulation may overflow if and only if in 32 bits."
FRACTION_OPEN = "the text does not say how alpha·A'·B' + beta·C is brought to an integer type where alpha or beta is fractional"
ZERO_SKIPS = ("the text computes alpha·A'·B' + beta·C as written, where 0·inf is NaN; BLAS does not read C where "
              "beta = 0, nor A and B where alpha = 0")
DOT_REASON = ("Higham's bound for a dot product in any order (γ(K)·Σ|a_k·b_k|, products rounded in the accumulator) in "
              "each accumulator a runtime may use, plus one rounding of the result; exactly summable rows judged bitwise "
              "(PRECISION.md, 'Ops that accumulate')")
GEMM_REASON = DOT_REASON.replace("plus one rounding", "the roundings of alpha·, beta·C and their addition, plus one rounding")
FRACTION_LIMIT = 200_000  # float64 terms summed exactly with Fractions; beyond, math.fsum and its error


@dataclass(frozen=True)
class Stacks:
    """Two operands as stacks of matrices, a (B, M, K) and b (B, K, N), and the output's shape."""

    a: np.ndarray
    b: np.ndarray
    shape: tuple[int, ...]

    @property
    def k(self) -> int:
        return self.a.shape[2]

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Per output element (in the output's order), the K values of A's row and B's column:
        two arrays (R, K)."""
        batch, m, k = self.a.shape
        n = self.b.shape[2]
        left = np.broadcast_to(self.a[:, :, None, :], (batch, m, n, k)).reshape(batch * m * n, k)
        right = np.broadcast_to(np.swapaxes(self.b, 1, 2)[:, None, :, :], (batch, m, n, k)).reshape(batch * m * n, k)
        return left, right


def numpy_stacks(a: np.ndarray, b: np.ndarray, label: str) -> Stacks | Invalid:
    """numpy.matmul's shapes: 1-D operands promoted (and the promoted dims removed from the
    output), batch dims broadcast; Invalid for a rank-0 operand, inner dims that differ, batch
    dims that do not broadcast."""
    if a.ndim == 0 or b.ndim == 0:
        return Invalid("rank-0", f"{label}: {RANK_0}")
    left = a[None, :] if a.ndim == 1 else a
    right = b[:, None] if b.ndim == 1 else b
    if left.shape[-1] != right.shape[-2]:
        return Invalid("inner-dims-mismatch", f"{label}: {INNER}")
    batch = multidirectional_shape([left.shape[:-2], right.shape[:-2]])
    if batch is None:
        return Invalid("batch-not-broadcastable", f"{label}: {BATCH}")
    m, k, n = left.shape[-2], left.shape[-1], right.shape[-1]
    count = math.prod(batch)
    stacked_a = np.broadcast_to(left, batch + (m, k)).reshape(count, m, k)
    stacked_b = np.broadcast_to(right, batch + (k, n)).reshape(count, k, n)
    shape = batch + ((m,) if a.ndim > 1 else ()) + ((n,) if b.ndim > 1 else ())
    return Stacks(stacked_a, stacked_b, shape)


# --- float outputs: the exact value and its bound ---

def _is_power_of_two_or_zero(value: float, out: np.dtype) -> bool:
    """Whether multiplying by `value` is exact (0 or ±2^j held exactly by the output type)."""
    if value == 0:
        return True
    mantissa, _ = math.frexp(abs(value))
    with np.errstate(over="ignore"):
        held = float(np.array(value, dtype=np.float64).astype(out).astype(np.float64)) == value
    return mantissa == 0.5 and held


def _products_exact(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Per row, whether every product a_k·b_k is exact in float64 (Dekker's TwoProduct: its
    rounding error is 0); always for operands of 24 significant bits or fewer."""
    with np.errstate(all="ignore"):
        product = left * right
        split = 134217729.0  # 2^27 + 1
        def halves(x):
            t = split * x
            high = t - (t - x)
            return high, x - high
        a_high, a_low = halves(left)
        b_high, b_low = halves(right)
        error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
        tiny = np.abs(product) < 2.0 ** -969  # where the split's parts may underflow: not known exact
        return ((error == 0) & ~tiny | (product == 0) & (left == 0) | (product == 0) & (right == 0)).all(axis=1)


def _exact_values(left: np.ndarray, right: np.ndarray, alpha: float, beta: float, c: np.ndarray | None,
                  out: np.dtype) -> tuple[np.ndarray, float]:
    """alpha·Σ_k a_k·b_k + beta·c per row, as written in IEEE arithmetic where an operand is not
    finite; and the reference's own error per unit of Σ|alpha·a_k·b_k| (0 where exact)."""
    with np.errstate(all="ignore"):
        products = left * right
        plus, minus = np.isposinf(products).any(axis=1), np.isneginf(products).any(axis=1)
        nan = np.isnan(products).any(axis=1) | (plus & minus)
        finite_rows = np.isfinite(products).all(axis=1)
        special = np.where(nan, np.nan, np.where(plus, np.inf, np.where(minus, -np.inf, 0.0)))
        sums = np.where(finite_rows, products.sum(axis=1), special) if products.shape[1] else np.zeros(products.shape[0])
        term = beta * c if c is not None else np.zeros(products.shape[0])
        y = alpha * sums + term
    if np.dtype(out) != np.float64:
        return y, 0.0
    exact_rows = finite_rows & np.isfinite(term)
    if left.size > FRACTION_LIMIT:
        for r in np.flatnonzero(exact_rows):
            y[r] = alpha * math.fsum(products[r].tolist()) + term[r]
        return y, (left.shape[1] + 2) * 2.0 ** -53
    fa, fb = Fraction(alpha), Fraction(beta)
    for r in np.flatnonzero(exact_rows):
        total = sum((Fraction(x) * Fraction(z) for x, z in zip(left[r].tolist(), right[r].tolist())), Fraction(0))
        if c is not None:
            total = fa * total + fb * Fraction(float(c[r]))
        else:
            total = fa * total
        y[r] = as_float(total)
    return y, 0.0


def dot_bound(left: np.ndarray, right: np.ndarray, out: np.dtype, alpha: float = 1.0, beta: float = 0.0,
              c: np.ndarray | None = None, y_bound: np.ndarray | None = None) -> tuple[np.ndarray, ElementBound]:
    """The exact value of each row's alpha·Σ a_k·b_k (+ beta·c) and its bound (see the module's
    docstring); `y_bound` the values the bound is built around where they differ (a reading that
    skips an operand)."""
    out = np.dtype(out)
    k = left.shape[1]
    y, reference = _exact_values(left, right, alpha, beta, c, out)
    around = y if y_bound is None else np.where(np.isfinite(y), y, y_bound)
    with np.errstate(all="ignore"):
        products = left * right
        finite = np.where(np.isfinite(products), np.abs(products), 0.0).sum(axis=1)
        c_term = np.zeros(len(y)) if c is None else np.where(np.isfinite(beta * c), np.abs(beta * c), 0.0)
        magnitude = abs(alpha) * finite + c_term
        # A product of finite operands past float64's range: Σ|a_k·b_k| passes every accumulator's max.
        beyond = (~np.isfinite(products) & np.isfinite(left) & np.isfinite(right)).any(axis=1)
        magnitude = np.where(beyond, np.inf, magnitude)
    has_c = c is not None and beta != 0
    gemm = c is not None or alpha != 1.0
    rounds = k + (1 if abs(alpha) != 1.0 else 0) + (1 if has_c else 0)
    coefficients = 0.0
    if out.itemsize < 4:  # alpha and beta (float attributes) rounded to the type first
        held = lambda v: float(np.array(v, dtype=np.float32).astype(out).astype(np.float64))  # noqa: E731
        with np.errstate(over="ignore", invalid="ignore"):
            coefficients = abs(alpha - held(alpha)) * finite + (abs(beta - held(beta)) * np.abs(np.where(np.isfinite(c), c, 0.0))
                                                                if c is not None else 0.0)
    bitwise = _is_power_of_two_or_zero(alpha, out) and _is_power_of_two_or_zero(beta, out)
    with np.errstate(all="ignore"):
        terms = alpha * products
        if c is not None:
            terms = np.concatenate([terms, (beta * c)[:, None]], axis=1)
        rounded = np.where(np.isfinite(around), around.astype(out).astype(np.float64), around)
        correct = np.abs(rounded - around)
        products_exact = _products_exact(left, right) if out == np.float64 else True
        return y, _tiers(around, correct, products, terms, magnitude, coefficients, reference, rounds, k, has_c, alpha,
                         bitwise and np.any(products_exact), products_exact, out, gemm)


def _tiers(around, correct, products, terms, magnitude, coefficients, reference, rounds, k, has_c, alpha, bitwise,
           products_exact, out, gemm) -> ElementBound:
    """The bound's tiers, one per accumulator (see `dot_bound`)."""
    tiers = []
    for label, accumulator in accumulators(out):
        u = unit_roundoff(accumulator)
        allowed = (half_ulp(around, out) + gamma(rounds, u) * magnitude + coefficients + reference * magnitude
                   + (rounds + 1) * max(abs(alpha), 1.0) * least_subnormal(accumulator))
        if bitwise and reference == 0.0:
            exact = exactly_summable(terms, accumulator) & exactly_summable(products, accumulator) & products_exact
            allowed = np.where(exact, correct, allowed)
        # Where Σ|terms| passes the accumulator's max some order overflows (TOSA: "bnd overflow"): any
        # infinity or NaN, a finite answer still within the bound (no requirement where the
        # reference's own sum overflowed).
        past = magnitude > float(ml_dtypes.finfo(accumulator).max)
        allowed = np.where(past & ~np.isfinite(around), np.inf, allowed)
        tiers.append(Tier(label, allowed, ksb(np.full(len(around), k + (1 if has_c else 0), dtype=np.float64), accumulator, out),
                          non_finite=past))
    if gemm:
        formula = ("½ulp(y) + γ(K + [α ≠ ±1] + [β·C])·(|α|·Σ|a_k·b_k| + |β·c|)"
                   + (" + |α − α_T|·Σ|a_k·b_k| + |β − β_T|·|c|" if out.itemsize < 4 else ""))
    else:
        formula = "½ulp(y) + γ(K)·Σ|a_k·b_k|"
    if reference:
        formula += " + (K + 2)·2^-53·Σ|a_k·b_k| (the reference's float64 sum)"
    return ElementBound(tuple(tiers), formula, GEMM_REASON if gemm else DOT_REASON, statistical_scale(magnitude, out))


def _shaped(bound: ElementBound, shape: tuple[int, ...]) -> ElementBound:
    return replace(bound, tiers=tuple(t.reshaped(shape) for t in bound.tiers),
                   scale=None if bound.scale is None else bound.scale.reshape(shape))


def float_answer(left: np.ndarray, right: np.ndarray, shape: tuple[int, ...], out: np.dtype, alpha: float = 1.0,
                 beta: float = 0.0, c: np.ndarray | None = None) -> Expected:
    """What the text allows for a float output: one reading within the bound, and where a zero
    alpha or beta meets a non-finite operand, the reading that skips that operand too."""
    out = np.dtype(out)
    with np.errstate(all="ignore"):
        operands_finite = np.isfinite(left).all(axis=1) & np.isfinite(right).all(axis=1)
    skip_c = c is not None and beta == 0 and not np.isfinite(c).all()
    skip_ab = alpha == 0 and not operands_finite.all()
    if not (skip_c or skip_ab):
        y, bound = dot_bound(left, right, out, alpha, beta, c)
        return Expected(readings=(_reading(y, shape, out),), budgets=(_shaped(bound, shape),))
    # The reading that skips: zero operands where they are not read (their products' sum 0).
    skipped_left = np.zeros_like(left) if skip_ab else left
    skipped_right = np.zeros_like(right) if skip_ab else right
    skipped_c = None if skip_c else c
    y_skip, _ = dot_bound(skipped_left, skipped_right, out, alpha, beta, skipped_c)
    y, bound = dot_bound(left, right, out, alpha, beta, c, y_bound=y_skip)
    _, skip_bound = dot_bound(skipped_left, skipped_right, out, alpha, beta, skipped_c)
    # One bound for both readings: the skipping reading's where the written one is not finite.
    merged = tuple(replace(t, allowed=np.where(np.isfinite(y), t.allowed, s.allowed))
                   for t, s in zip(bound.tiers, skip_bound.tiers))
    bound = replace(bound, tiers=merged)
    options = [_reading(y, shape, out, "as written (0·inf is NaN)"),
               _reading(y_skip, shape, out, "a zero alpha or beta skips its operands (BLAS)")]
    found = readings(options, ZERO_SKIPS)
    return replace(found, budgets=(_shaped(bound, shape),))


def _reading(y: np.ndarray, shape: tuple[int, ...], out: np.dtype, label: str = "spec") -> Reading:
    precise = y.reshape(shape)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = precise.astype(out)
    return Reading((rounded,), label, precise=(precise,))


# --- integer outputs: exact, overflow as readings ---

def integer_sums(left: np.ndarray, right: np.ndarray) -> list[int]:
    """Σ_k a_k·b_k per row, as Python ints."""
    lefts, rights = left.astype(object), right.astype(object)
    return [int(sum(x * z for x, z in zip(lefts[r], rights[r]))) for r in range(left.shape[0])]


def integer_readings(candidates: dict[str, list[int]], np_dtype: np.dtype, shape: tuple[int, ...], ambiguity: str,
                     overflow: str = OVERFLOW_OPEN) -> Expected:
    """Each candidate's values in the type: as they are where they fit, else wrapped and saturated."""
    found = []
    for label, values in candidates.items():
        prefix = f"{label}; " if label else ""
        fitted = wrapped_and_saturated(values, np_dtype)
        if fitted is None:
            found.append(Reading((np.array(values, dtype=np_dtype).reshape(shape),), label or "spec"))
            continue
        wrapped, saturated = fitted
        found.append(Reading((np.array(wrapped, dtype=np_dtype).reshape(shape),), f"{prefix}wrapped (two's complement)"))
        found.append(Reading((np.array(saturated, dtype=np_dtype).reshape(shape),), f"{prefix}saturated"))
    return spec_if_one(readings(found, ambiguity if len(candidates) > 1 else overflow))


def _integer_gemm(left: np.ndarray, right: np.ndarray, shape: tuple[int, ...], np_dtype: np.dtype, alpha: float,
                  beta: float, c: np.ndarray | None) -> Expected:
    sums = integer_sums(left, right)
    cs = [int(v) for v in c.tolist()] if c is not None else [0] * len(sums)
    fa, fb = Fraction(alpha), Fraction(beta)
    exact = [fa * s + fb * v for s, v in zip(sums, cs)]
    if all(value.denominator == 1 for value in exact):
        return integer_readings({"": [int(value) for value in exact]}, np_dtype, shape, OVERFLOW_OPEN)
    candidates = {"truncated toward zero": [math.trunc(value) for value in exact],
                  "floored": [math.floor(value) for value in exact],
                  "rounded to nearest, ties to even": [round(value) for value in exact],
                  "alpha and beta truncated to the type first": [math.trunc(alpha) * s + math.trunc(beta) * v
                                                                for s, v in zip(sums, cs)]}
    return integer_readings(candidates, np_dtype, shape, FRACTION_OPEN)


# --- the versions ---

class MatMul1(VersionSemantics):
    """MatMul: numpy.matmul's shapes; float outputs by the dot-product bound, integers exact."""

    since = 1

    def expected(self, example: Example) -> Expected:
        a, b = example.inputs["A"], example.inputs["B"]
        stacks = numpy_stacks(a, b, example.version.label)
        if isinstance(stacks, Invalid):
            return Expected(invalid=stacks)
        left, right = stacks.rows()
        out = np.dtype(a.dtype)
        if from_numpy(out).kind == "float":
            return float_answer(left.astype(np.float64), right.astype(np.float64), stacks.shape, out)
        return integer_readings({"": integer_sums(left, right)}, out, stacks.shape, OVERFLOW_OPEN)


class MatMul9(MatMul1):
    """MatMul-9: integer types too."""

    since = 9


class MatMul13(MatMul9):
    """MatMul-13: bfloat16 too."""

    since = 13


class Gemm1(VersionSemantics):
    """Gemm before 7: C required; without `broadcast` C is (M, N), with it the legacy rule."""

    since = 1
    legacy = True

    def operands(self, example: Example) -> tuple[np.ndarray, np.ndarray, Invalid | None]:
        a, b = example.inputs["A"], example.inputs["B"]
        label = example.version.label
        if a.ndim != 2 or b.ndim != 2:
            sentence = GEMM_SHAPES_1 if self.legacy else f"Compute Y = alpha * A' * B' + beta * C, where {GEMM_SHAPES}"
            return a, b, Invalid("not-2d", f"{label}: {sentence}")
        left = a.T if int(example.attributes.get("transA", 0)) else a
        right = b.T if int(example.attributes.get("transB", 0)) else b
        if left.shape[1] != right.shape[0]:
            sentence = GEMM_SHAPES_1 if self.legacy else f"{GEMM_SHAPES}: A' is (M, K) and B' is (K, N)"
            return left, right, Invalid("inner-dims-mismatch", f"{label}: {sentence}")
        return left, right, None

    def c_at(self, example: Example, shape: tuple[int, int]) -> tuple[np.ndarray | None, Invalid | None, str | None]:
        """C broadcast to (M, N) (None where absent), or why it cannot be; and why a runtime may reject it."""
        c = example.inputs.get("C")
        label = example.version.label
        if c is None:
            return None, None, None
        if self.legacy:
            if not int(example.attributes.get("broadcast", 0)):
                if tuple(c.shape) != shape:
                    return None, Invalid("c-not-broadcastable", f"{label}: {GEMM_SHAPES_1} (broadcast is 0)"), None
                return c, None, None
            placed = legacy_b_shape(shape, tuple(c.shape), None)
            if placed is not None:
                return np.broadcast_to(c.reshape(placed), shape), None, None
            if c.ndim <= 2 and multidirectional_shape([shape, c.shape]) == shape:
                return np.broadcast_to(c, shape), None, GEMM_C_NUMPY
            return None, Invalid("c-not-broadcastable", f"{label}: {GEMM_C_LEGACY}"), None
        if c.ndim > 2 or multidirectional_shape([shape, c.shape]) != shape:
            return None, Invalid("c-not-broadcastable", f"{label}: {GEMM_C}"), None
        return np.broadcast_to(c, shape), None, None

    def expected(self, example: Example) -> Expected:
        left, right, invalid = self.operands(example)
        if invalid is not None:
            return Expected(invalid=invalid)
        shape = (left.shape[0], right.shape[1])
        c, invalid, may_reject = self.c_at(example, shape)
        if invalid is not None:
            return Expected(invalid=invalid)
        alpha = float(np.float32(example.attributes.get("alpha", 1.0)))
        beta = float(np.float32(example.attributes.get("beta", 1.0)))
        stacks = Stacks(left[None], right[None], shape)
        rows_a, rows_b = stacks.rows()
        flat_c = None if c is None else np.ascontiguousarray(c).reshape(-1)
        out = np.dtype(left.dtype)
        if from_numpy(out).kind == "float":
            found = float_answer(rows_a.astype(np.float64), rows_b.astype(np.float64), shape, out, alpha, beta,
                                 None if flat_c is None else flat_c.astype(np.float64))
        else:
            found = _integer_gemm(rows_a, rows_b, shape, out, alpha, beta, flat_c)
        return replace(found, may_reject=may_reject) if may_reject else found


class Gemm7(Gemm1):
    """Gemm-7: C unidirectionally broadcastable to (M, N)."""

    since = 7
    legacy = False


class Gemm9(Gemm7):
    """Gemm-9: integer types too."""

    since = 9


class Gemm11(Gemm9):
    """Gemm-11: C optional ("as if C is a scalar 0")."""

    since = 11


class Gemm13(Gemm11):
    """Gemm-13: bfloat16 too."""

    since = 13


def zero_point_shift(x: np.ndarray, zero_point: np.ndarray | None, rows: bool, label: str) -> np.ndarray | Invalid:
    """x − zero point (int64), the zero point per tensor, per row of A (`rows`) or per column of B,
    as the text allows it; Invalid for any other shape."""
    wide = x.astype(np.int64)
    if zero_point is None:
        return wide
    point = zero_point.astype(np.int64)
    if point.ndim == 0 or point.shape == (1,):
        return wide - point.reshape(())
    sentence = f"{label}: {ZERO_POINT_A if rows else ZERO_POINT_B}"
    if x.ndim < 2:
        return Invalid("zero-point-shape", sentence)
    if rows:
        allowed = [x.shape[:-1] + (1,)] + ([(x.shape[0],)] if x.ndim == 2 else [])
        shaped = x.shape[:-1] + (1,)
    else:
        allowed = [x.shape[:-2] + (1, x.shape[-1])] + ([(x.shape[1],)] if x.ndim == 2 else [])
        shaped = x.shape[:-2] + (1, x.shape[-1])
    if tuple(point.shape) not in allowed:
        return Invalid("zero-point-shape", sentence)
    return wide - point.reshape(shaped)


class MatMulInteger10(VersionSemantics):
    """MatMulInteger: (A − a_zero_point)·(B − b_zero_point), numpy.matmul's shapes, int32."""

    since = 10

    def expected(self, example: Example) -> Expected:
        a, b = example.inputs["A"], example.inputs["B"]
        label = example.version.label
        left = zero_point_shift(a, example.inputs.get("a_zero_point"), True, label)
        if isinstance(left, Invalid):
            return Expected(invalid=left)
        right = zero_point_shift(b, example.inputs.get("b_zero_point"), False, label)
        if isinstance(right, Invalid):
            return Expected(invalid=right)
        stacks = numpy_stacks(left, right, label)
        if isinstance(stacks, Invalid):
            return Expected(invalid=stacks)
        rows_a, rows_b = stacks.rows()
        found = integer_readings({"": integer_sums(rows_a, rows_b)}, np.dtype(np.int32), stacks.shape, ACCUMULATION_32,
                                 overflow=ACCUMULATION_32)
        return replace(found, may_reject=ONE_ELEMENT) if one_element_zero_point(example) else found


# --- traits: the causes a runtime may deviate by ---

def _float_operands(example: Example) -> list[np.ndarray]:
    return [v for name, v in example.inputs.items() if name in ("A", "B", "C") and v is not None
            and from_numpy(v.dtype).kind == "float"]


def non_finite_operand(example: Example) -> bool:
    """An infinite or NaN value in A, B or C."""
    return any(not np.isfinite(v.astype(np.float64)).all() for v in _float_operands(example))


def _inner(example: Example) -> int | None:
    a = example.inputs.get("A")
    if a is None or a.ndim == 0:
        return None
    if example.op == "Gemm":
        return a.shape[0] if a.ndim == 2 and int(example.attributes.get("transA", 0)) else a.shape[-1]
    return a.shape[-1]


def k_zero(example: Example) -> bool:
    """An empty inner dim: every output an empty sum (plus beta·C)."""
    return _inner(example) == 0


def long_sum(example: Example) -> bool:
    """K of 256 or more: where a 16-bit accumulator parts from a float32 one."""
    k = _inner(example)
    return k is not None and k >= 256


def one_d_operand(example: Example) -> bool:
    """A 1-D A or B, which numpy.matmul promotes and whose promoted dim it removes."""
    return any(example.inputs.get(name) is not None and example.inputs[name].ndim == 1 for name in ("A", "B"))


def batch_broadcast(example: Example) -> bool:
    """Operands of rank above 2 whose batch dims differ (broadcast, or of different ranks)."""
    a, b = example.inputs.get("A"), example.inputs.get("B")
    if a is None or b is None or max(a.ndim, b.ndim) < 3:
        return False
    return a.shape[:-2] != b.shape[:-2]


def empty_output(example: Example) -> bool:
    """An operand with a size-0 dim other than K: an output with no elements."""
    a, b = example.inputs.get("A"), example.inputs.get("B")
    return any(v is not None and v.size == 0 for v in (a, b)) and not k_zero(example)


def integers_beyond_float(example: Example) -> bool:
    """32- or 64-bit integer operands with a value a float32 does not hold (|v| > 2**24)."""
    for name in ("A", "B", "C"):
        v = example.inputs.get(name)
        if v is not None and v.dtype.kind in "iu" and v.dtype.itemsize >= 4 and v.size and np.any(np.abs(v.astype(np.float64)) > 2 ** 24):
            return True
    return False


def integer_overflow(example: Example) -> bool:
    """An integer result whose exact value does not fit its type."""
    a = example.inputs.get("A")
    if a is None or a.dtype.kind not in "iu":
        return False
    found = REFERENCES_BY_OP[example.op].expected(example)
    return found.is_valid and found.ambiguity in (OVERFLOW_OPEN, ACCUMULATION_32)


def fractional_integer_result(example: Example) -> bool:
    """Integer Gemm whose alpha·A'·B' + beta·C is not an integer."""
    a = example.inputs.get("A")
    if example.op != "Gemm" or a is None or a.dtype.kind not in "iu":
        return False
    found = REFERENCES_BY_OP[example.op].expected(example)
    return found.is_valid and found.ambiguity == FRACTION_OPEN


def c_absent(example: Example) -> bool:
    return example.op == "Gemm" and example.inputs.get("C") is None


def c_broadcast(example: Example) -> bool:
    """A C of another shape than (M, N), broadcast to it."""
    c, a, b = example.inputs.get("C"), example.inputs.get("A"), example.inputs.get("B")
    if c is None or a is None or b is None or a.ndim != 2 or b.ndim != 2:
        return False
    m = a.shape[1] if int(example.attributes.get("transA", 0)) else a.shape[0]
    n = b.shape[0] if int(example.attributes.get("transB", 0)) else b.shape[1]
    return tuple(c.shape) != (m, n)


def transposed(example: Example) -> bool:
    return bool(int(example.attributes.get("transA", 0)) or int(example.attributes.get("transB", 0)))


def scaled(example: Example) -> bool:
    """alpha or beta other than 1."""
    return float(example.attributes.get("alpha", 1.0)) != 1.0 or float(example.attributes.get("beta", 1.0)) != 1.0


def zero_coefficient_non_finite(example: Example) -> bool:
    """alpha = 0 beside a non-finite A or B, or beta = 0 beside a non-finite C: 0·inf."""
    def bad(name):
        v = example.inputs.get(name)
        return v is not None and from_numpy(v.dtype).kind == "float" and not np.isfinite(v.astype(np.float64)).all()
    return ((float(example.attributes.get("alpha", 1.0)) == 0 and (bad("A") or bad("B")))
            or (float(example.attributes.get("beta", 1.0)) == 0 and bad("C")))


def legacy_broadcast(example: Example) -> bool:
    """Gemm before 7 with `broadcast` set."""
    return example.version.since_version < 7 and bool(int(example.attributes.get("broadcast", 0)))


def _zero_point(example: Example, name: str) -> np.ndarray | None:
    return example.inputs.get(name)


def zero_point_per_row(example: Example) -> bool:
    point = _zero_point(example, "a_zero_point")
    return point is not None and point.ndim >= 1 and point.shape != (1,)


def zero_point_per_column(example: Example) -> bool:
    point = _zero_point(example, "b_zero_point")
    return point is not None and point.ndim >= 1 and point.shape != (1,)


def one_element_zero_point(example: Example) -> bool:
    """A zero point of shape [1], where the operand has more than one row (A) or column (B)."""
    a, b = example.inputs.get("A"), example.inputs.get("B")
    za, zb = _zero_point(example, "a_zero_point"), _zero_point(example, "b_zero_point")
    rows = a.shape[-2] if a is not None and a.ndim >= 2 else 1
    columns = b.shape[-1] if b is not None and b.ndim >= 2 else 1
    return bool((za is not None and za.shape == (1,) and rows != 1) or (zb is not None and zb.shape == (1,) and columns != 1))


def zero_point_nonzero(example: Example) -> bool:
    return any(p is not None and p.size and bool(np.any(p != 0)) for p in (_zero_point(example, "a_zero_point"),
                                                                           _zero_point(example, "b_zero_point")))


def output_elements(example: Example) -> int:
    """The output's elements (a matrix product can outgrow its operands), computed from the shapes
    alone; the largest input's where the shapes are invalid."""
    largest = max((v.size for v in example.inputs.values() if v is not None), default=0)
    a, b = example.inputs.get("A"), example.inputs.get("B")
    if a is None or b is None or a.ndim == 0 or b.ndim == 0:
        return largest
    if example.op == "Gemm":
        if a.ndim != 2 or b.ndim != 2:
            return largest
        m = a.shape[1] if int(example.attributes.get("transA", 0)) else a.shape[0]
        n = b.shape[0] if int(example.attributes.get("transB", 0)) else b.shape[1]
        return max(largest, m * n)
    left = a.shape if a.ndim > 1 else (1,) + a.shape
    right = b.shape if b.ndim > 1 else b.shape + (1,)
    batch = multidirectional_shape([left[:-2], right[:-2]])
    if batch is None:
        return largest
    return max(largest, math.prod(batch) * left[-2] * right[-1])


SHARED_TRAITS = {"non-finite-operand": non_finite_operand, "k-zero": k_zero, "long-sum": long_sum,
                 "empty-output": empty_output, "integer-overflow": integer_overflow,
                 "integers-beyond-float": integers_beyond_float}
MATMUL_TRAITS = {**SHARED_TRAITS, "one-d-operand": one_d_operand, "batch-broadcast": batch_broadcast}
GEMM_TRAITS = {**SHARED_TRAITS, "c-absent": c_absent, "c-broadcast": c_broadcast, "transposed": transposed,
               "scaled": scaled, "zero-coefficient-non-finite": zero_coefficient_non_finite,
               "legacy-broadcast": legacy_broadcast, "fractional-integer-result": fractional_integer_result}
MATMUL_INTEGER_TRAITS = {"k-zero": k_zero, "empty-output": empty_output, "one-d-operand": one_d_operand,
                         "batch-broadcast": batch_broadcast, "integer-overflow": integer_overflow,
                         "zero-point-per-row": zero_point_per_row, "zero-point-per-column": zero_point_per_column,
                         "zero-point-one-element": one_element_zero_point, "zero-point-nonzero": zero_point_nonzero}

REFERENCES = (
    OpReference(op="MatMul", dtype_param="T", semantics=(MatMul1, MatMul9, MatMul13), data_inputs=("A", "B"),
                output_elements_from=output_elements, traits=MATMUL_TRAITS, rules=("rank-0", "inner-dims-mismatch", "batch-not-broadcastable")),
    OpReference(op="Gemm", dtype_param="T", semantics=(Gemm1, Gemm7, Gemm9, Gemm11, Gemm13), data_inputs=("A", "B"),
                output_elements_from=output_elements, traits=GEMM_TRAITS, rules=("not-2d", "inner-dims-mismatch", "c-not-broadcastable")),
    OpReference(op="MatMulInteger", dtype_param="T1", semantics=(MatMulInteger10,), data_inputs=("A", "B"),
                output_elements_from=output_elements, traits=MATMUL_INTEGER_TRAITS,
                rules=("rank-0", "inner-dims-mismatch", "batch-not-broadcastable", "zero-point-shape")),
)
REFERENCES_BY_OP = {reference.op: reference for reference in REFERENCES}
