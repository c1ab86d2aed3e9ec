"""Reference for LpNormalization (versions 1 and 22), from the schema text in onnx.defs.

"Given a matrix, apply Lp-normalization along the provided axis. The output is computed as:
`output = input / Lp_norm(input, axis)`. When the Lp norm is zero (i.e., all elements along the
axis are zero), the output is defined to be zero to avoid division by zero." The two versions
differ only in the types they allow (bfloat16 from 22), which are read from the schema.

- p: "The order of the normalization, only 1 or 2 are supported": any other p is invalid.
- axis: "The axis on which to apply normalization, -1 mean last axis." The text sets no range: an
  axis the data does not have is invalid, and a negative axis counts from the back (as -1 does),
  so [-r, r-1]; a rank-0 input has no axis.
- "Given a matrix": the text writes its input as a matrix but its axis for any rank; an input of
  rank 1 or of rank 3 and more is valid, and a runtime may also reject it (a reading).

Judging, by what the text fixes:

- A row whose elements are all zero gives zeros (the text's sentence), exactly; a row holding a
  NaN gives NaN everywhere (x / NaN), one holding an infinity gives x / inf: ±0 for its finite
  elements, NaN for the infinite ones (inf / inf), as IEEE 754 divides.
- Elsewhere a per-element bound (PRECISION.md 'Ops that accumulate'): the norm is a sum of n
  terms (|x|, or x² under a square root), whose error in each accumulator a runtime may use is the
  reductions' (reference/reduction.py, ReduceL1 and ReduceL2, reused as they are); its terms are
  never negative, so no order takes the sum below S·(1−u)^(n−1) (squares: S·(1−u)^n less what
  underflows), the side a division is sensitive to. The quotient's relative error follows from
  the norm's, plus two roundings in the accumulator (a division, or a reciprocal and a product)
  and one of the result. Where the norm is exact in the accumulator (an exactly summable row, a
  perfect square for p = 2) and a power of two, the quotient is exact: judged bitwise.
- Where a partial sum may overflow (Σ|x| or Σx² past the type's max), the norm computed as written
  in the type is inf and x / inf is 0: allowed besides the bound, which holds the orders that do
  not overflow. Where squares may underflow so far that the norm may be 0, that tier sets no
  requirement (TOSA: 'no requirement').
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ..bounds import (ElementBound, Tier, accumulators, exactly_summable, half_ulp, last_bits, least_subnormal,
                      unit_roundoff)
from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics
from .movement import axis_in
from .reduction import sum_family

P_SENTENCE = "p: The order of the normalization, only 1 or 2 are supported."
AXIS_SENTENCE = ("axis: The axis on which to apply normalization, -1 mean last axis. (The text sets no range: an axis "
                 "the input does not have is not one it can normalize along)")
ZERO_NORM = ("When the Lp norm is zero (i.e., all elements along the axis are zero), the output is defined to be zero "
             "to avoid division by zero.")
MATRIX = ("Given a matrix, apply Lp-normalization along the provided axis: the text writes its input as a matrix "
          "but its axis for any rank; a runtime may reject another rank")
REASON = ("the norm's error in any order and accumulator (the reductions' bound for ReduceL1 / ReduceL2, one-sided "
          "below: its terms are never negative), carried through the division, plus two roundings in the "
          "accumulator and one of the result (PRECISION.md, 'Ops that accumulate')")
FORMULA = "½ulp(y) + |y|·(ρ/(1−ρ) and two roundings), ρ the norm's relative error"


class LpNormalization1(VersionSemantics):
    """LpNormalization-1 (and 22, which adds bfloat16): x / ‖x‖_p along `axis`, p in {1, 2}."""

    since = 1

    def expected(self, example: Example) -> Expected:
        data = example.inputs["input"]
        p = int(example.attributes.get("p", 2))
        if p not in (1, 2):
            return Expected(invalid=Invalid("p-not-supported", P_SENTENCE))
        axis = axis_in(int(example.attributes.get("axis", -1)), data.ndim, True, AXIS_SENTENCE)
        if isinstance(axis, Invalid):
            return Expected(invalid=axis)
        found = normalized(data, axis, p)
        return Expected(readings=found.readings, budgets=found.budgets, may_reject=MATRIX if data.ndim != 2 else None)


class LpNormalization22(LpNormalization1):
    """LpNormalization-22: as 1, with bfloat16 among its types."""

    since = 22


def rows_along(data: np.ndarray, axis: int) -> np.ndarray:
    """The data as float64 rows along `axis` (the axis moved last)."""
    with np.errstate(invalid="ignore"):
        moved = np.moveaxis(data, axis, -1).astype(np.float64)
    return moved.reshape(-1, data.shape[axis]) if data.size else moved.reshape(0, data.shape[axis])


def back_in_place(rows: np.ndarray, data: np.ndarray, axis: int) -> np.ndarray:
    """Rows along `axis` put back in the data's shape."""
    moved = (*data.shape[:axis], *data.shape[axis + 1:], data.shape[axis])
    return np.moveaxis(rows.reshape(moved), -1, axis)


def normalized(data: np.ndarray, axis: int, p: int) -> Expected:
    """What the text allows for x / ‖x‖_p along `axis`: the exact quotient rounded to the data's
    type, judged by the per-element bound (see the module's docstring)."""
    out = np.dtype(data.dtype)
    if not data.size:
        return Expected(readings=(Reading((data.copy(),)),))
    rows = rows_along(data, axis)
    with np.errstate(all="ignore"):
        y, tiers = _quotients(rows, p, out)
    precise = back_in_place(y, data, axis)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = precise.astype(out)
    shaped = tuple(Tier(label, back_in_place(allowed, data, axis), np.ones(data.shape)) for label, allowed in tiers)
    # The norm computed as written in the type overflows where Σ|x| or Σx² passes its max: x / inf.
    as_written = np.where(overflows(np.abs(rows) if p == 1 else rows * rows, out)[:, None] & np.isfinite(rows), 0.0, np.nan)
    bound = ElementBound(shaped, FORMULA, REASON, also=(back_in_place(as_written, data, axis),))
    return Expected(readings=(Reading((rounded,), precise=(precise,)),), budgets=(bound,))


def _quotients(rows: np.ndarray, p: int, out: np.dtype) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """Per element, the exact quotient (float64) and per accumulator the error it allows."""
    n = np.full(rows.shape[0], rows.shape[1], dtype=np.float64)
    norm, bound = sum_family("l1" if p == 1 else "l2", rows, n, out)
    finite_rows = np.isfinite(rows).all(axis=1)
    # "When the Lp norm is zero (i.e., all elements along the axis are zero)": a row whose squares
    # underflow even float64 ([-5e-324]) is no zero row; its norm is taken of the row scaled.
    zero_rows = finite_rows & (rows == 0).all(axis=1)
    vanished = finite_rows & ~zero_rows & (norm == 0)  # computed in any type, that norm may be 0: no requirement
    norm = np.where(vanished, _scaled_norm(rows, p), norm)
    # x / inf is ±0 (NaN for an infinite x); a NaN norm gives NaN; the text's zero norm gives 0.
    y = np.where(zero_rows[:, None], 0.0, rows / np.where(zero_rows, 1.0, norm)[:, None])
    terms = np.abs(rows) if p == 1 else rows * rows
    found = []
    for (label, acc), tier in zip(accumulators(out), bound.tiers):
        exact = _exact_norm(terms, norm, acc, p)
        high = np.where(exact, np.abs(norm.astype(out).astype(np.float64) - norm), tier.allowed)
        # Σ|x| or Σx² past the accumulator's max: the norm no order overflows is within the
        # one-sided bound above; one that overflows is inf, and x / inf is 0 (`also`).
        high = np.where(overflows(terms, acc), _most_norm(norm, terms, n, acc, out, p) - norm, high)
        low = np.minimum(high, norm - _least_norm(norm, terms, n, acc, out, p))
        allowed = _quotient_error(y, norm, low, high, acc, out)
        power_of_two = np.frexp(norm)[0] == 0.5
        correct = np.abs(y.astype(out).astype(np.float64) - y)
        allowed = np.where((exact & power_of_two & (high == 0))[:, None], correct, allowed)
        allowed = np.where((~finite_rows | zero_rows)[:, None], 0.0, np.where(vanished[:, None], np.inf, allowed))
        found.append((label, allowed))
    return y, found


def _scaled_norm(rows: np.ndarray, p: int) -> np.ndarray:
    """Per row, its Lp norm computed from the row divided by its largest |x| (what float64 squares
    of subnormals lose, kept), then scaled back."""
    with np.errstate(all="ignore"):
        scale = np.abs(rows).max(axis=1) if rows.shape[1] else np.zeros(rows.shape[0])
        scaled = np.abs(rows) / np.where(scale > 0, scale, 1.0)[:, None]
        return scale * (scaled.sum(axis=1) if p == 1 else np.sqrt((scaled * scaled).sum(axis=1)))


def _exact_norm(terms: np.ndarray, norm: np.ndarray, acc: np.dtype, p: int) -> np.ndarray:
    """Per row, whether every order computes the norm exactly in `acc`: every partial sum of the
    terms exact, and for p = 2 the sum a perfect square whose root `acc` holds."""
    summable = exactly_summable(terms, acc)
    if p == 1:
        return summable
    if np.dtype(acc) == np.float64:
        # a float64 square is exact only for a value of at most 26 significant bits
        finite = np.where(np.isfinite(terms), np.sqrt(terms), 0.0)
        bits = np.where(finite != 0, np.frexp(finite)[1] - last_bits(finite), 0)
        summable = summable & (bits <= 26).all(axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        return summable & np.isfinite(norm) & (norm * norm == terms.sum(axis=1)) & (norm.astype(acc).astype(np.float64) == norm)


def overflows(terms: np.ndarray, acc: np.dtype) -> np.ndarray:
    """Per row, whether the terms' sum passes the type's max: in some order a partial sum overflows."""
    return np.where(np.isfinite(terms), terms, 0.0).sum(axis=1) > float(ml_dtypes.finfo(acc).max)


def _most_norm(norm: np.ndarray, terms: np.ndarray, n: np.ndarray, acc: np.dtype, out: np.dtype, p: int) -> np.ndarray:
    """The largest norm any order computes in `acc` (without overflowing) and rounds to `out`."""
    u, rounding = unit_roundoff(acc), 1 + unit_roundoff(out)
    if p == 1:
        return norm * (1 + u) ** np.maximum(n - 1, 0) * rounding
    most = norm * norm * (1 + u) ** n + n * least_subnormal(out)
    return np.sqrt(most) * (1 + u) * rounding


def _least_norm(norm: np.ndarray, terms: np.ndarray, n: np.ndarray, acc: np.dtype, out: np.dtype, p: int) -> np.ndarray:
    """The least norm any order computes in `acc` and rounds to `out`: terms never negative, each
    partial sum rounded down by at most a factor (1 − u); squares also lose what underflows."""
    u, rounding = unit_roundoff(acc), 1 - unit_roundoff(out)
    if p == 1:
        return norm * (1 - u) ** np.maximum(n - 1, 0) * rounding
    total = norm * norm
    least = np.maximum(total * (1 - u) ** n - n * least_subnormal(out), 0.0)
    return np.sqrt(least) * (1 - u) * rounding


def _quotient_error(y: np.ndarray, norm: np.ndarray, low: np.ndarray, high: np.ndarray, acc: np.dtype,
                    out: np.dtype) -> np.ndarray:
    """|ŷ − y| allowed where the norm lies in [N − low, N + high]: the quotient moves by N/(N − low)
    up and N/(N + high) down, two roundings in the accumulator, one of the result. No bound where
    the norm may be 0 (squares that underflow)."""
    u = unit_roundoff(acc)
    up = np.where(norm - low > 0, norm / np.where(norm - low > 0, norm - low, 1.0), np.inf)
    down = norm / (norm + high)
    relative = np.maximum(up * (1 + u) ** 2 - 1, 1 - down * (1 - u) ** 2)
    magnitude = np.abs(np.where(np.isfinite(y), y, 0.0))
    slack = 4 * 2.0 ** -53 * magnitude if out == np.float64 else 0.0  # the float64 reference's own roundings
    allowed = half_ulp(y, out) + relative[:, None] * magnitude + slack
    return np.where(np.isinf(relative)[:, None], np.inf, allowed)


# Traits: the causes a runtime may deviate by.

def _input(example: Example) -> np.ndarray | None:
    return example.inputs.get("input")


def _rows(example: Example) -> np.ndarray | None:
    """The case's rows along its axis, or None where the text finds it invalid."""
    data = _input(example)
    if data is None or data.dtype.kind != "f" and data.dtype != ml_dtypes.bfloat16:
        return None
    axis = axis_in(int(example.attributes.get("axis", -1)), data.ndim, True, AXIS_SENTENCE)
    return None if isinstance(axis, Invalid) else rows_along(data, axis)


def zero_row(example: Example) -> bool:
    """A row of zeros: the text's output 0, where x / 0 gives NaN."""
    rows = _rows(example)
    return rows is not None and rows.shape[1] > 0 and bool((rows == 0).all(axis=1).any())


def empty_axis(example: Example) -> bool:
    """An axis of size 0 (X [3, 0] at axis -1): nothing to normalize, an empty output, where a
    runtime that divides by the row's length divides by zero; or an axis out of range over data
    that holds no element, which such a runtime meets before it checks the axis."""
    rows = _rows(example)
    if rows is not None:
        return rows.shape[1] == 0
    data = _input(example)
    return data is not None and data.size == 0


def nan_in_data(example: Example) -> bool:
    rows = _rows(example)
    return rows is not None and bool(np.isnan(rows).any())


def infinity_in_row(example: Example) -> bool:
    """A row holding ±inf (and no NaN): its norm is inf, x / inf is 0, inf / inf NaN."""
    rows = _rows(example)
    return rows is not None and bool((np.isinf(rows).any(axis=1) & ~np.isnan(rows).any(axis=1)).any())


def norm_past_type(example: Example) -> bool:
    """A row whose Σ|x| (p = 1) or Σx² (p = 2) is finite and past the type's max: the norm computed
    as written in the type overflows (x / inf = 0), though the quotient is in range."""
    rows = _rows(example)
    if rows is None or not rows.size:
        return False
    p = int(example.attributes.get("p", 2))
    with np.errstate(over="ignore", invalid="ignore"):
        total = (np.abs(rows) if p == 1 else rows * rows).sum(axis=1)
    return bool((np.isfinite(total) & (total > float(ml_dtypes.finfo(_input(example).dtype).max))).any())


def tiny_squares(example: Example) -> bool:
    """p = 2 and a nonzero row whose Σx² is below the type's smallest normal: the squares underflow
    in the type, and the norm computed from them is off by a factor, or 0."""
    rows = _rows(example)
    if rows is None or not rows.size or int(example.attributes.get("p", 2)) != 2:
        return False
    total = (rows * rows).sum(axis=1)
    return bool(((total > 0) & (total < float(ml_dtypes.finfo(_input(example).dtype).smallest_normal))).any()
                | (((rows != 0).any(axis=1)) & (total == 0)).any())


def rank_not_2(example: Example) -> bool:
    """An input of rank other than 2: the text says 'Given a matrix'."""
    data = _input(example)
    return data is not None and data.ndim != 2


def long_row(example: Example) -> bool:
    """A row of 1024 elements or more: where an accumulator of the type and a wider one part."""
    rows = _rows(example)
    return rows is not None and rows.shape[1] >= 1024


REFERENCE = OpReference(
    op="LpNormalization",
    dtype_param="T",
    data_inputs=("input",),
    semantics=(LpNormalization1, LpNormalization22),
    traits={"zero-row": zero_row, "nan-in-data": nan_in_data, "infinity-in-row": infinity_in_row,
            "norm-past-type": norm_past_type, "tiny-squares": tiny_squares, "rank-not-2": rank_not_2,
            "long-row": long_row, "empty-axis": empty_axis},
    rules=("p-not-supported", "axis-out-of-range"),
)
