"""Det (versions 11 and 22; 22 adds bfloat16, its text is the same), from the schema text.

"Det takes one input tensor of shape `[*, M, M]`, where `*` is zero or more batch dimensions, and
the inner-most 2 dimensions form square matrices. The output is a tensor of shape `[*]`": an input
of rank below 2, or whose last two dims differ, is invalid. M = 0: the text does not exclude it;
the determinant of the empty matrix is the empty product, 1 (numpy.linalg.det gives 1.0), and a
runtime may reject it.

Judging, per matrix, around the exact determinant of the inputs as given (integer Bareiss
elimination of the rows scaled to integers: every float is a dyadic rational):

- The text fixes no algorithm. A correct runtime computes an LU with partial pivoting (LAPACK,
  Eigen beyond 4x4), of A or of Aᵀ (a row-major matrix read column-major), and multiplies U's
  diagonal, or sums its logarithms and exponentiates (numpy.linalg.det: sign·exp(Σ log|u_ii|),
  which gives 3.0000000000000004 for [[3]]), or expands cofactors (Eigen up to 4x4). So no
  determinant is exact but 0 beside a zero row or column (every product of the expansion, every U
  diagonal then holds an exact 0), and a triangular matrix is not: the log-exp path rounds.
- LU: L̂Û = PA + ΔA, |ΔA| ≤ γ(M)·|L̂||Û| (Higham, Accuracy and Stability, Thm 9.3). The
  determinant is multilinear in the rows, so by Hadamard's inequality |det(A + ΔA) − det(A)| ≤
  Π(‖a_i‖ + γ‖w_i‖) − Π‖a_i‖ ≤ ((1 + 2γ(M))^M − 1)·Π‖w_i‖₂, w_i the rows of |L||U|; the product of
  the M pivots adds γ(M − 1): in all γ(2M² + M)·W. W is taken from conform's own float64 LU (of A
  and of Aᵀ, the larger): a runtime with the same pivoting has the same |L||U| to first order.
- Cofactor expansion (Eigen, up to 4x4): each of the M! products and their nested sums round at
  most M(M + 1)/2 − 1 times, so γ(M(M + 1)/2)·per(|A|) ≤ γ(2M² + M)·min(Π‖rows‖₁, Π‖cols‖₁).
- Log-exp: each log|u_ii| rounds relative to itself and their sum M − 1 times: the result is off
  by a factor exp(γ(M + 1)·Σ|log|u_ii||) at most (conform's pivots, plus M for the runtime's
  differing ones); relative to |det| plus the LU's perturbation.
So allowed = ½ulp(det) + γ(2M² + M)·E + (|det| + γ(2M² + M)·E)·(exp(γ(M + 1)·Λ) − 1) + underflow,
E the largest of W(A), W(Aᵀ) and, for M ≤ 4, Π‖rows‖₁ and Π‖cols‖₁. A singular matrix's det of 0 is then met by
the tiny nonzero value an LU gives. Tiers per arithmetic: float16 and bfloat16 computed in float32
(or wider) then rounded, or in their own type; float32 and float64 in their own. Where a product
of the pivots in some order leaves the arithmetic's range (or |L||U| does), there is no
requirement (TOSA's 'bnd overflow'). Never tighter than LAPACK's documented backward error.
- A matrix holding NaN or ±inf: the text (and mathematics: the determinant is a polynomial over
  the reals) gives no value; Leibniz's formula in IEEE arithmetic gives NaN or ±inf, an LU too, so
  any non-finite value is allowed there and a finite one is not.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, as_float, gamma, half_ulp, least_subnormal, unit_roundoff
from ..case import Example
from ..dtypes import from_numpy
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics

SHAPE = ("Det: Det takes one input tensor of shape `[*, M, M]`, where `*` is zero or more batch dimensions, and the "
         "inner-most 2 dimensions form square matrices.")
EMPTY_MATRIX = ("Det takes one input tensor of shape `[*, M, M]`: the text does not say whether M may be 0; the "
                "determinant of the empty matrix is the empty product, 1 (numpy.linalg.det), and a runtime may reject it")
REASON = ("LAPACK's backward error for an LU with partial pivoting (γ(M)·|L||U|, Higham Thm 9.3) carried to the "
          "determinant by Hadamard's inequality, the cofactor expansion's γ·per(|A|), and numpy's log-exp path; any "
          "non-finite value for a matrix holding NaN or ±inf")
COFACTOR_MAX = 4  # Eigen expands cofactors up to 4x4; beyond, every library factors (M! products are not computed)
FORMULA = ("½ulp(det) + γ(2M² + M)·E + (|det| + γ(2M² + M)·E)·(exp(γ(M + 1)·Λ) − 1), E = max(Π‖(|L||U|)_i‖₂ of A and "
           "Aᵀ, and for M ≤ 4 Π‖rows‖₁, Π‖cols‖₁), Λ = Σ|log|u_ii|| + M")


# --- the exact determinant ---

def exact_det(matrix: np.ndarray) -> Fraction:
    """The determinant of a finite float64 matrix, exactly: each row scaled to integers by its
    largest denominator (a power of two), Bareiss's fraction-free elimination, scaled back."""
    size = matrix.shape[0]
    if size == 0:
        return Fraction(1)
    rows, scale = [], 1
    for row in matrix.tolist():
        ratios = [float(v).as_integer_ratio() for v in row]
        denominator = max(d for _, d in ratios)
        rows.append([n * (denominator // d) for n, d in ratios])
        scale *= denominator
    return Fraction(_bareiss(rows), scale)


def _bareiss(rows: list[list[int]]) -> int:
    size, sign, previous = len(rows), 1, 1
    for k in range(size - 1):
        if rows[k][k] == 0:
            swap = next((i for i in range(k + 1, size) if rows[i][k] != 0), None)
            if swap is None:
                return 0
            rows[k], rows[swap] = rows[swap], rows[k]
            sign = -sign
        pivot = rows[k][k]
        for i in range(k + 1, size):
            for j in range(k + 1, size):
                rows[i][j] = (rows[i][j] * pivot - rows[i][k] * rows[k][j]) // previous
        previous = pivot
    return sign * rows[-1][-1]


# --- conform's own LU, for the bound's scale ---

def lu_growth(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A float64 LU with partial pivoting (LAPACK's choice of pivot): Pᵀ|L||U| (the scale of the
    backward error ΔA in A's own row order) and |U|'s diagonal."""
    size = matrix.shape[0]
    work = matrix.astype(np.float64).copy()
    order = np.arange(size)
    with np.errstate(all="ignore"):
        for k in range(size):
            pivot = k + int(np.argmax(np.abs(work[k:, k])))
            if pivot != k:
                work[[k, pivot]] = work[[pivot, k]]
                order[[k, pivot]] = order[[pivot, k]]
            if work[k, k] != 0:
                work[k + 1:, k] /= work[k, k]
                work[k + 1:, k + 1:] -= np.outer(work[k + 1:, k], work[k, k + 1:])
            else:
                work[k + 1:, k] = 0.0
        lower = np.tril(work, -1) + np.eye(size)
        upper = np.triu(work)
        product = np.abs(lower) @ np.abs(upper)
    scale = np.empty_like(product)
    scale[order] = product
    return scale, np.abs(np.diag(upper))


def adjugate(matrix: np.ndarray) -> np.ndarray:
    """adj(A) in float64 from its (M−1)x(M−1) minors (defined for a singular A too)."""
    size = matrix.shape[0]
    if size == 1:
        return np.ones((1, 1))
    minors = np.empty((size, size, size - 1, size - 1))
    for i in range(size):
        for j in range(size):
            minors[i, j] = np.delete(np.delete(matrix, i, axis=0), j, axis=1)
    with np.errstate(all="ignore"):
        cofactors = np.linalg.det(minors) * (-1.0) ** np.add.outer(np.arange(size), np.arange(size))
    return cofactors.T


def permanent(matrix: np.ndarray) -> float:
    """per(|A|) for a small matrix: Σ over permutations of Π|a_i,σ(i)|."""
    size = matrix.shape[0]
    absolute = np.abs(matrix)
    return float(sum(math.prod(absolute[i, p[i]] for i in range(size)) for p in itertools.permutations(range(size))))


def _lu_perturbation(matrix: np.ndarray, det: float, scale: np.ndarray, g: float) -> float:
    """The most |det(A + ΔA) − det(A)| for |ΔA| ≤ g·scale: the first-order term Σ|adj(A)_ji|·|ΔA_ij|
    (doubled, for the float64 adjugate's own error) and the rest by |det|·((1+η)^M − 1 − Mη),
    η ≥ ‖A⁻¹ΔA‖₂; where A is singular or η ≥ ½, Hadamard's Π(‖a_i‖ + ‖Δa_i‖) − Π‖a_i‖."""
    size = matrix.shape[0]
    rows = np.sqrt((matrix ** 2).sum(axis=1))
    perturbed = np.sqrt((scale ** 2).sum(axis=1)) * g
    with np.errstate(all="ignore"):
        hadamard = float(np.prod(rows + perturbed) - np.prod(rows))
        if det == 0:
            return hadamard
        try:
            first = 2.0 * float(np.sum(np.abs(adjugate(matrix)).T * scale)) * g
            eta = float(np.linalg.norm(np.linalg.inv(matrix), 2)) * g * float(np.linalg.norm(scale))
        except np.linalg.LinAlgError:  # singular in float64 though not exactly: Hadamard's bound alone
            return hadamard
    if not np.isfinite(eta) or eta >= 0.5 or not np.isfinite(first):
        return hadamard
    rest = abs(det) * (math.expm1(size * math.log1p(eta)) - size * eta)
    return min(first + rest, hadamard)


def matrix_bound(matrix: np.ndarray, det: float, out: np.dtype, accumulator: np.dtype) -> float:
    """The largest |computed − det| a correct runtime computing in `accumulator` shows for one
    finite matrix (see the module's docstring)."""
    size = matrix.shape[0]
    if size == 0 or np.any(np.abs(matrix).sum(axis=1) == 0) or np.any(np.abs(matrix).sum(axis=0) == 0):
        return 0.0  # the empty product 1, or a zero row or column: every algorithm's determinant holds an exact 0 factor
    info = ml_dtypes.finfo(accumulator)
    u = unit_roundoff(accumulator)
    floor = least_subnormal(accumulator)
    scales, logs = [], 0.0
    with np.errstate(all="ignore"):
        for transposed in (False, True):
            scale, diagonal = lu_growth(matrix.T if transposed else matrix)
            scales.append(scale.T if transposed else scale)
            logs = max(logs, float(np.sum(np.abs(np.log(np.where(diagonal > 0, diagonal, floor))))))
            if not np.all(np.isfinite(scale)) or float(scale.max()) > float(info.max):
                return math.inf  # |L||U| past the arithmetic's range: some step overflows
            large = float(np.prod(np.where(diagonal > 1, diagonal, 1.0)))
            small = float(np.prod(np.where((diagonal < 1) & (diagonal > 0), diagonal, 1.0)))
            if large > float(info.max) or small < float(info.smallest_normal):
                return math.inf  # a product of the pivots in some order overflows or underflows
    perturbation = _lu_perturbation(matrix, det, np.maximum(*scales), float(gamma(size, u)))
    if size <= COFACTOR_MAX:
        perturbation = max(perturbation, float(gamma(size * (size + 1) // 2, u)) * permanent(matrix))
    computed = abs(det) + perturbation
    pivots = computed * (float(gamma(max(size - 1, 0), u)) + math.expm1(float(gamma(size + 1, u)) * (logs + size)))
    underflow = 2 * size * size * floor * max(1.0, float(np.prod(np.maximum(np.sqrt((matrix ** 2).sum(axis=1)), 1.0))))
    total = perturbation + pivots + underflow
    return total if math.isfinite(total) else math.inf  # a bound past float64's range: no requirement


def _tiers(matrices: np.ndarray, dets: np.ndarray, finite: np.ndarray, out: np.dtype,
           shape: tuple[int, ...]) -> tuple[Tier, ...]:
    tiers = []
    for label, accumulator in accumulators(out):
        allowed = np.zeros(len(dets))
        for index in np.flatnonzero(finite):
            allowed[index] = matrix_bound(matrices[index], float(dets[index]), out, accumulator)
        allowed = allowed + np.where(finite, half_ulp(dets, out), 0.0)
        arithmetic = label.replace("accumulated", "computed")
        tiers.append(Tier(arithmetic, allowed.reshape(shape), np.ones(shape)))
    return tuple(tiers)


def determinants(x: np.ndarray) -> Expected:
    """The readings and bound for a valid input [*, M, M]."""
    out = np.dtype(x.dtype)
    size = x.shape[-1]
    shape = x.shape[:-2]
    matrices = x.astype(np.float64).reshape((math.prod(shape), size, size))
    finite = np.isfinite(matrices).all(axis=(1, 2)) if matrices.size else np.ones(len(matrices), dtype=bool)
    dets = np.array([as_float(exact_det(m)) if ok else math.nan for m, ok in zip(matrices, finite)], dtype=np.float64)
    bound = ElementBound(_tiers(matrices, dets, finite, out, shape), FORMULA, REASON, None,
                         also=(np.where(finite, np.nan, np.inf).reshape(shape), np.where(finite, np.nan, -np.inf).reshape(shape)))
    precise = dets.reshape(shape)
    with np.errstate(over="ignore", invalid="ignore"):
        reading = Reading((precise.astype(out),), precise=(precise,))
    return Expected(readings=(reading,), budgets=(bound,), may_reject=EMPTY_MATRIX if size == 0 and matrices.shape[0] else None)


class Det11(VersionSemantics):
    """Det-11: the determinant of each [M, M] matrix of a [*, M, M] input, float types."""

    since = 11

    def expected(self, example: Example) -> Expected:
        x = np.asarray(example.inputs["X"])
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            return Expected(invalid=Invalid("not-square-matrices", f"{example.version.label}: {SHAPE}"))
        return determinants(x)


class Det22(Det11):
    """Det-22: bfloat16 too (the same text)."""

    since = 22


# --- traits ---

def _x(example: Example) -> np.ndarray | None:
    x = example.inputs.get("X")
    return None if x is None else np.asarray(x)


def empty_matrix(example: Example) -> bool:
    """M = 0: the empty matrix, whose determinant is 1."""
    x = _x(example)
    return x is not None and x.ndim >= 2 and x.shape[-1] == 0 and x.shape[-2] == 0


def batched(example: Example) -> bool:
    x = _x(example)
    return x is not None and x.ndim > 2


def non_finite_input(example: Example) -> bool:
    x = _x(example)
    return x is not None and x.size > 0 and not np.isfinite(x.astype(np.float64)).all()


def large_matrix(example: Example) -> bool:
    """M of 8 or more."""
    x = _x(example)
    return x is not None and x.ndim >= 2 and x.shape[-1] >= 8


def empty_batch(example: Example) -> bool:
    x = _x(example)
    return x is not None and x.ndim > 2 and math.prod(x.shape[:-2]) == 0


def sixteen_bit(example: Example) -> bool:
    x = _x(example)
    return x is not None and from_numpy(x.dtype).kind == "float" and x.dtype.itemsize == 2


REFERENCE = OpReference(op="Det", dtype_param="T", semantics=(Det11, Det22), data_inputs=("X",),
                        traits={"empty-matrix": empty_matrix, "batched": batched, "non-finite-input": non_finite_input,
                                "large-matrix": large_matrix, "empty-batch": empty_batch, "sixteen-bit": sixteen_bit},
                        rules=("not-square-matrices",))
