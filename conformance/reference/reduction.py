"""The reductions: ReduceSum, ReduceMean, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum,
ReduceLogSumExp, ReduceSumSquare, ReduceMax, ReduceMin; every version, from the schema text.

Each op is a `Reduction` declaration (its terms, what follows the sum, what an empty reduction
yields), answered by one shared path: the reduced axes moved last, the data seen as rows of n
values, one output element per row. What changes between versions is only where the axes come
from and which types are allowed (read from the schema):

- version 1: `axes` an attribute, "A list of integers": a negative axis has no meaning in the
  text (invalid), nor one the data does not have;
- version 11 on: "Accepted range is [-r, r-1] where r = rank(data)";
- ReduceSum-13 and the others from 18: `axes` an optional input, and `noop_with_empty_axes`: with
  no axes (or an empty list), every axis is reduced, or none with noop_with_empty_axes=1, which
  still performs "the non-reduction steps" (ReduceLogSum gives the log of each element).

Judging, by what the text fixes:

- Float sums and their compositions (Sum, Mean, L1, L2, SumSquare, LogSum, LogSumExp) and
  products (Prod) are judged by a per-element bound (bounds.py): the exact value of the terms as
  given, and the error a correct implementation may show in any order and accumulator, one tier
  per accumulator (float16 in float32 or in float16). Exactly summable rows are judged bitwise.
- ReduceMax and ReduceMin select: exact. No version places a NaN: NaN propagates (IEEE 754-2019
  maximum), NaN is passed over (maxNum, fmax), or a running std::max from the first element keeps a
  NaN only where it starts. Bool (ReduceMax-20) orders False < True.
- Integer sums and products are exact where they fit; where they overflow the type the text says
  nothing: wrapped (two's complement) and saturated are readings. An integer mean, L2 or log has
  no rounding in the text: truncated and rounded (and for the mean, floored) are readings.
- Reducing an empty set: the value the version's text gives (0 for Sum, L1, L2, SumSquare; 1 for
  Prod; "minus infinity (if supported by the datatype) or the minimum value of the data type" for
  Max, plus infinity or the maximum for Min; minus infinity for LogSum and LogSumExp, "undefined
  otherwise"); "undefined" for Mean: any value. Versions whose text has no such sentence (the
  11 of most, ReduceMax/Min-12) leave it open: any value, and a rejection is allowed.
- Repeated axes are not forbidden by any version and not given a meaning: a runtime may reduce the
  axis once or reject the list.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from fractions import Fraction

import ml_dtypes
import numpy as np

from ..bounds import (ElementBound, Tier, accumulators, exact_sums, exactly_summable, gamma, half_ulp, ksb,
                      least_subnormal, statistical_scale, sum_tiers, unit_roundoff)
from ..case import Example
from ..dtypes import from_numpy
from ..precision import spacing
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings
from .expected import spec_if_one
from .conversion import wrapped_and_saturated
from .movement import axes_in, ints

AXES_1 = ("axes: A list of integers, along which to reduce. The default is to reduce over all the dimensions of the "
          "input tensor. (Version 1 gives no meaning to a negative axis, nor to one the data does not have)")
AXES_11 = "axes: ... Accepted range is [-r, r-1] where r = rank(data)."
AXES_INPUT = "axes: Optional input list of integers, along which to reduce. ... Accepted range is [-r, r-1] where r = rank(data)."
AXES_1D = "axes: Optional input list of integers (a 1-D tensor)"
NOOP = ("noop_with_empty_axes: ... If true, reduction happens over an empty set of axes ... composite-reduction "
        "operators will still perform the non-reduction steps as needed.")
REPEATED = "the text neither forbids an axis named twice nor gives it a meaning: a runtime may reduce it once or reject the list"
EMPTY_OPEN = ("this version's text does not say what reducing an empty set of values yields (the sentence "
              "'Reduction over an empty set of values yields ...' came with version 13)")
MEAN_EMPTY = "Reduction over an empty set of values yields undefined."
NAN_OPEN = "no version says whether a NaN is a maximum (minimum), or is passed over"
OVERFLOW_OPEN = "the text does not say what an integer reduction that overflows its type gives"
INT_ROUNDING_OPEN = "the text does not say how an integer result of a division, a square root or a log is rounded"
SUM_REASON = ("Higham's bound for a sum in any order (γ(n−1)·Σ|a|) in each accumulator a runtime may use, plus one "
              "rounding of the result; exactly summable rows judged bitwise (PRECISION.md, 'Ops that accumulate')")
PROD_REASON = "TOSA's REDUCE_PRODUCT bound max(|y|, normal_min)·((1+u)^n − 1), plus one rounding of the result"
# The elementary functions a composite reduction applies after its sum, in ULP of the accumulator:
# conform's own budgets for Exp and Log in float32 (math_unary.py: 3 and 4) and float64 (1.5 each).
LOG_ULPS = {np.dtype(np.float32): 4.0, np.dtype(np.float64): 1.5}
EXP_ULPS = {np.dtype(np.float32): 3.0, np.dtype(np.float64): 1.5}


@dataclass(frozen=True)
class Reduction:
    """One reduction op: its `kind` (the terms and what follows their sum), since which version
    `axes` is an input, and what reducing nothing yields where the text says ('zero', 'one',
    'undefined', 'lowest', 'highest', '-inf')."""

    op: str
    kind: str
    axes_input_since: int
    empty: str


REDUCTIONS = (
    Reduction("ReduceSum", "sum", 13, "zero"),
    Reduction("ReduceMean", "mean", 18, "undefined"),
    Reduction("ReduceProd", "prod", 18, "one"),
    Reduction("ReduceL1", "l1", 18, "zero"),
    Reduction("ReduceL2", "l2", 18, "zero"),
    Reduction("ReduceLogSum", "log_sum", 18, "-inf"),
    Reduction("ReduceLogSumExp", "log_sum_exp", 18, "-inf"),
    Reduction("ReduceSumSquare", "sum_square", 18, "zero"),
    Reduction("ReduceMax", "max", 18, "lowest"),
    Reduction("ReduceMin", "min", 18, "highest"),
)


@dataclass(frozen=True)
class Rows:
    """The data as rows of the values reduced into each output element: `rows` (R, n) in the
    data's type, and the output's shape."""

    rows: np.ndarray
    shape: tuple[int, ...]

    @property
    def n(self) -> int:
        return self.rows.shape[1]


class ReduceSemantics(VersionSemantics):
    """A reduction version: `axes` an attribute (negative axes from 11), or an input with
    `noop_with_empty_axes` from the declaration's `axes_input_since`."""

    declaration: Reduction
    negative_axes = True
    axes_sentence = AXES_11
    axes_input = False

    def expected(self, example: Example) -> Expected:
        data = example.inputs["data"]
        axes = self.axes(example, data.ndim)
        if isinstance(axes, Invalid):
            return axes if isinstance(axes, Expected) else Expected(invalid=axes)
        reduced = sorted(set(axes))
        grouped = rows_of(data, reduced, bool(int(example.attributes.get("keepdims", 1))))
        found = answer(self.declaration, grouped, data.dtype, doc_of(example.op, example.version.since_version))
        if len(reduced) != len(axes):
            return _with_may_reject(found, REPEATED)
        return found

    def axes(self, example: Example, rank: int) -> list[int] | Invalid:
        """The reduced axes, non-negative: every axis where none are given (or, from the input
        versions, an empty list without noop_with_empty_axes); none with it."""
        if self.axes_input:
            value = example.inputs.get("axes")
            if value is not None and value.ndim != 1:
                return Invalid("not-1d", AXES_1D)
            written = ints(value) if value is not None else []
            if not written:
                return [] if int(example.attributes.get("noop_with_empty_axes", 0)) else list(range(rank))
        else:
            written = ints(example.attributes.get("axes"))
            if written is None:
                return list(range(rank))
        return axes_in(written, rank, self.negative_axes, self.axes_sentence)


@lru_cache(maxsize=None)
def doc_of(op: str, since: int) -> str:
    """The doc of an op version's schema (the empty-set sentence differs between versions)."""
    import onnx.defs

    return onnx.defs.get_schema(op, since).doc


def _with_may_reject(found: Expected, why: str) -> Expected:
    return replace(found, may_reject=found.may_reject or why) if found.is_valid else found


def rows_of(data: np.ndarray, reduced: list[int], keepdims: bool) -> Rows:
    """The data as rows along the reduced axes, and the output's shape."""
    kept = [k for k in range(data.ndim) if k not in reduced]
    moved = np.transpose(data, kept + reduced)
    count = math.prod(data.shape[k] for k in reduced)
    rows = moved.reshape(math.prod(data.shape[k] for k in kept), count)
    if keepdims:
        shape = tuple(1 if k in reduced else d for k, d in enumerate(data.shape))
    else:
        shape = tuple(data.shape[k] for k in kept)
    return Rows(rows, shape)


def answer(declaration: Reduction, grouped: Rows, np_dtype: np.dtype, doc: str) -> Expected:
    """What the text allows for every output element of `grouped`."""
    kind = from_numpy(np_dtype).kind
    if declaration.kind in ("max", "min"):
        found = _selection(declaration, grouped, np_dtype)
    elif kind == "float":
        found = _float(declaration, grouped, np.dtype(np_dtype))
    else:
        found = _integer(declaration, grouped, np.dtype(np_dtype))
    if grouped.n == 0 and grouped.rows.shape[0] > 0:
        return _empty(declaration, grouped, np.dtype(np_dtype), doc, found)
    return found


# --- an empty set of values ---

def _empty(declaration: Reduction, grouped: Rows, np_dtype: np.dtype, doc: str, found: Expected) -> Expected:
    """Every output element reduces nothing: the version's stated value, or any value where it
    states none (and a rejection allowed too)."""
    shape = grouped.shape
    stated = "empty set of values" in doc
    value = _empty_value(declaration, np_dtype)
    if not stated or value is None:
        anything = np.ones(shape, dtype=bool)
        output = np.zeros(shape, dtype=np_dtype)
        why = EMPTY_OPEN if not stated else MEAN_EMPTY if declaration.empty == "undefined" else \
            "Reduction over an empty set of values yields minus infinity (if supported by the datatype) or undefined otherwise."
        return Expected(readings=(Reading((output,), "any value (the text leaves it undefined)", free=(anything,)),),
                        may_reject=why if not stated else None)
    return Expected(readings=(Reading((np.full(shape, value, dtype=np_dtype),)),))


def _empty_value(declaration: Reduction, np_dtype: np.dtype):
    kind = from_numpy(np_dtype)
    if declaration.empty == "zero":
        return 0
    if declaration.empty == "one":
        return 1
    if declaration.empty == "-inf":
        return -np.inf if kind.kind == "float" and kind.has_inf else None
    if declaration.empty in ("lowest", "highest"):
        if np_dtype == np.bool_:
            return declaration.empty == "highest"
        if kind.kind == "float" and kind.has_inf:
            return -np.inf if declaration.empty == "lowest" else np.inf
        return kind.lowest if declaration.empty == "lowest" else kind.max
    return None


# --- ReduceMax, ReduceMin: a selection, exact ---

def _selection(declaration: Reduction, grouped: Rows, np_dtype: np.dtype) -> Expected:
    rows, shape = grouped.rows, grouped.shape
    largest = declaration.kind == "max"
    if not grouped.n:
        return Expected(readings=(Reading((np.zeros(shape, dtype=np_dtype),)),))
    if np_dtype == np.bool_:
        picked = rows.any(axis=1) if largest else rows.all(axis=1)
        return Expected(readings=(Reading((picked.reshape(shape),)),))
    if from_numpy(np_dtype).kind != "float":
        picked = rows.max(axis=1) if largest else rows.min(axis=1)
        return Expected(readings=(Reading((picked.reshape(shape).astype(np_dtype),)),))
    wide = rows.astype(np.float64)
    nan = np.isnan(wide)
    with np.errstate(invalid="ignore"):
        ignored = (np.fmax if largest else np.fmin).reduce(wide, axis=1)
    propagated = np.where(nan.any(axis=1), np.nan, ignored)
    running = np.where(nan[:, 0], np.nan, ignored)
    word = "max" if largest else "min"
    options = [
        Reading((propagated.astype(np_dtype).reshape(shape),), f"NaN propagates (IEEE 754-2019 {word}imum)"),
        Reading((ignored.astype(np_dtype).reshape(shape),), f"NaN passed over (IEEE 754 {word}Num, f{word})"),
        Reading((running.astype(np_dtype).reshape(shape),), f"a running std::{word} from the first element, which keeps a NaN only where it starts"),
    ]
    return spec_if_one(readings(options, NAN_OPEN))


# --- integer reductions: exact, overflow and rounding as readings ---

def _integer(declaration: Reduction, grouped: Rows, np_dtype: np.dtype) -> Expected:
    rows, shape = grouped.rows, grouped.shape
    values = [[int(v) for v in row] for row in rows.tolist()] if rows.size else [[] for _ in range(rows.shape[0])]
    kind = declaration.kind
    if kind in ("sum", "l1", "sum_square", "prod", "mean"):
        totals = [_exact_integer(kind, row) for row in values]
        if kind == "mean":
            if not grouped.n:
                return Expected(readings=(Reading((np.zeros(shape, dtype=np_dtype),)),))
            candidates = {"mean truncated toward zero": [_div_trunc(t, grouped.n) for t in totals],
                          "mean floored": [t // grouped.n for t in totals],
                          "mean rounded to nearest, ties to even": [_round_half_even(Fraction(t, grouped.n)) for t in totals]}
            return _integer_readings(candidates, np_dtype, shape, INT_ROUNDING_OPEN)
        return _integer_readings({"": totals}, np_dtype, shape, OVERFLOW_OPEN)
    squares = [sum(v * v for v in row) for row in values]
    if kind == "l2":
        candidates = {"square root truncated": [math.isqrt(s) for s in squares],
                      "square root rounded to nearest": [_isqrt_nearest(s) for s in squares]}
        return _integer_readings(candidates, np_dtype, shape, INT_ROUNDING_OPEN)
    logs = [_log_of_sum(row) if kind == "log_sum" else _log_sum_exp_of(row) for row in values]
    candidates = {"log truncated toward zero": [None if v is None else math.trunc(v) for v in logs],
                  "log rounded to nearest": [None if v is None else round(v) for v in logs]}
    return _integer_readings(candidates, np_dtype, shape, INT_ROUNDING_OPEN)


def _exact_integer(kind: str, row: list[int]) -> int:
    if kind == "prod":
        return math.prod(row)
    if kind == "l1":
        return sum(abs(v) for v in row)
    if kind == "sum_square":
        return sum(v * v for v in row)
    return sum(row)


def _div_trunc(total: int, n: int) -> int:
    quotient = abs(total) // n
    return quotient if total >= 0 else -quotient


def _round_half_even(value: Fraction) -> int:
    return round(value)  # Python rounds a Fraction's ties to even


def _isqrt_nearest(total: int) -> int:
    """The integer nearest √total (never a tie for an integer total)."""
    root = math.isqrt(total)
    return root + 1 if total - root * root > root else root


def _log_of_sum(row: list[int]) -> float | None:
    """log(Σ row); None where it has no value (a sum of 0 or less)."""
    total = sum(row)
    return math.log(total) if total > 0 else None


def _log_sum_exp_of(row: list[int]) -> float | None:
    """log(Σ exp(v)), shifted by the row's max; None for an empty row (minus infinity)."""
    if not row:
        return None
    top = max(row)
    return top + math.log(sum(math.exp(v - top) for v in row))


def _integer_readings(candidates: dict[str, list], np_dtype: np.dtype, shape: tuple[int, ...], ambiguity: str) -> Expected:
    """Each candidate's values fitted into the type: as they are where they fit; else wrapped and
    saturated, two readings; an element with no integer value (an integer log of 0) left free."""
    found = []
    for label, values in candidates.items():
        free = np.array([v is None for v in values], dtype=bool).reshape(shape)
        plain = [0 if v is None else v for v in values]
        prefix = f"{label}; " if label else ""
        fitted = wrapped_and_saturated(plain, np_dtype)
        if fitted is None:
            found.append(Reading((np.array(plain, dtype=np_dtype).reshape(shape),), label or "spec", free=(free,) if free.any() else ()))
            continue
        wrapped, saturated = fitted
        found.append(Reading((np.array(wrapped, dtype=np_dtype).reshape(shape),), f"{prefix}wrapped (two's complement)",
                             free=(free,) if free.any() else ()))
        found.append(Reading((np.array(saturated, dtype=np_dtype).reshape(shape),), f"{prefix}saturated",
                             free=(free,) if free.any() else ()))
    ambiguity = ambiguity if len(candidates) > 1 else OVERFLOW_OPEN
    return spec_if_one(readings(found, ambiguity))


# --- float reductions: a per-element bound ---

def _float(declaration: Reduction, grouped: Rows, out: np.dtype) -> Expected:
    rows, shape = grouped.rows.astype(np.float64), grouped.shape
    n = np.full(rows.shape[0], grouped.n, dtype=np.float64)
    kind = declaration.kind
    with np.errstate(all="ignore"):
        if kind == "prod":
            y, bound = _product(rows, n, out)
        elif kind == "log_sum_exp":
            y, bound = _log_sum_exp(rows, n, out)
        else:
            y, bound = sum_family(kind, rows, n, out)
    precise = y.reshape(shape)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = precise.astype(out)
    shaped = ElementBound(tuple(Tier(t.label, t.allowed.reshape(shape), t.ksb.reshape(shape)) for t in bound.tiers),
                          bound.formula, bound.reason, None if bound.scale is None else bound.scale.reshape(shape),
                          tuple(values.reshape(shape) for values in bound.also))
    return Expected(readings=(Reading((rounded,), precise=(precise,)),), budgets=(shaped,))


def _terms(kind: str, rows: np.ndarray) -> np.ndarray:
    if kind == "l1":
        return np.abs(rows)
    if kind in ("sum_square", "l2"):
        return rows * rows
    return rows


def sum_family(kind: str, rows: np.ndarray, n: np.ndarray, out: np.dtype) -> tuple[np.ndarray, ElementBound]:
    """Sum, Mean, L1, SumSquare, L2, LogSum: the terms' sum, then the step after it."""
    terms = _terms(kind, rows)
    total = exact_sums(terms, out)
    # Σ|a| of the finite terms: an infinite term makes the sum special (judged exactly), not unbounded.
    magnitude = np.where(np.isfinite(terms), np.abs(terms), 0.0).sum(axis=1)
    exact = {label: exactly_summable(terms, accumulator) for label, accumulator in accumulators(out)}
    rounded_terms = 0.0 if out != np.float64 or kind not in ("sum_square", "l2") else 2.0 ** -53 * magnitude
    if kind in ("sum_square", "l2"):
        # A square below the accumulator's normal range rounds by up to half its least subnormal,
        # not by a relative u: tiny² underflows to 0 in float32, as the body's Mul does.
        rounded_terms = rounded_terms + n * least_subnormal(out)
    if kind in ("sum", "l1", "sum_square"):
        # Squares are products a runtime may round: a dot product's γ(n), and the reference's own
        # float64 squares of float64 data off by half an ULP each.
        steps = n if kind == "sum_square" else n - 1
        tiers = _tiers(total, magnitude, steps, exact, out, lambda u: rounded_terms)
        return total, _bound(tiers, "½ulp(y) + γ(n−1)·Σ|a|" if kind != "sum_square" else "½ulp(y) + γ(n)·Σx²",
                             magnitude, out)
    pairs = list(zip(accumulators(out), _tiers(total, magnitude, n if kind == "l2" else n - 1, exact, out,
                                                    lambda u: rounded_terms, rounding=False)))
    if kind == "mean":
        # The division (or a multiplication by 1/n) rounds once or twice in the accumulator.
        y = total / np.maximum(n, 1)
        tiers = tuple(Tier(label, half_ulp(y, out) + tier.allowed / np.maximum(n, 1) + 2 * unit_roundoff(acc) * np.abs(y), tier.ksb)
                      for (label, acc), tier in pairs)
        return y, _bound(tiers, "½ulp(y) + (γ(n−1)·Σ|a|)/n + 2u·|y|", magnitude / np.maximum(n, 1), out)
    if kind == "l2":
        # A sum of squares has a relative error; the square root halves it and rounds once more,
        # which an exact sum in the output's own type leaves correctly rounded (IEEE 754 sqrt).
        y = np.sqrt(total)
        tiers = []
        for (label, acc), tier in pairs:
            # √ moves a sum known within δ by at most √S − √(S − δ) (√δ where δ passes S).
            root_error = y - np.sqrt(np.maximum(total - tier.allowed, 0.0))
            allowed = half_ulp(y, out) + root_error + unit_roundoff(acc) * y
            allowed = np.where(exact[label] & (acc == out), np.abs(y.astype(out).astype(np.float64) - y), allowed)
            tiers.append(Tier(label, allowed, tier.ksb))
        found = _bound(tuple(tiers), "½ulp(y) + √S − √(S − δ) + u·y, δ = γ(n)·Σx² + n·η", None, out)
        # √(Σx²) as written overflows where the squares pass the type's max (the body's Mul does).
        overflows = np.isfinite(y) & (total > float(ml_dtypes.finfo(out).max))
        return y, replace(found, also=(np.where(overflows, np.inf, np.nan),))
    # log_sum: the log of the sum
    y = np.log(total)
    tiers = []
    for (label, acc), tier in pairs:
        tiers.append(Tier(label, _after_log(y, total, tier.allowed, acc, out), tier.ksb))
    return y, _bound(tuple(tiers), "½ulp(y) + δ/(|S| − δ) + log's error, δ = γ(n−1)·Σ|a|", None, out)


def _after_log(y: np.ndarray, total: np.ndarray, delta: np.ndarray, acc: np.dtype, out: np.dtype) -> np.ndarray:
    """The error of log(S) where S is known to within `delta`: no bound where delta reaches |S|/2
    (the sum's sign, or whether it is 0, is then not known), else delta/(|S| − delta), the log's own
    error in the accumulator and one rounding of the result."""
    magnitude = np.abs(total)
    relative = delta / np.where(magnitude > delta, magnitude - delta, 1.0)
    log_error = LOG_ULPS.get(np.dtype(acc), LOG_ULPS[np.dtype(np.float32)]) * spacing(np.where(np.isfinite(y), y, 0.0), acc)
    allowed = half_ulp(y, out) + relative + log_error
    return np.where(2 * delta >= magnitude, np.where(delta > 0, np.inf, allowed), allowed)


def _tiers(total, magnitude, steps, exact, out, extra, rounding: bool = True) -> tuple[Tier, ...]:
    """`bounds.sum_tiers`, the result's own rounding left out (`rounding=False`) where a step follows."""
    tiers = sum_tiers(total, magnitude, steps + 1, exact, out, extra)
    if rounding:
        return _no_bound_past_accumulator(tiers, magnitude, out)
    unrounded = tuple(Tier(t.label, np.where(e, 0.0, t.allowed - half_ulp(total, out)), t.ksb)
                      for t, e in zip(tiers, (exact[label] for label, _ in accumulators(out))))
    return _no_bound_past_accumulator(unrounded, magnitude, out)


def _no_bound_past_accumulator(tiers: tuple[Tier, ...], magnitude: np.ndarray, out: np.dtype) -> tuple[Tier, ...]:
    """Where Σ|a| passes an accumulator's max a partial sum may overflow in some order: that tier
    sets no requirement there (TOSA: 'bnd overflow: no requirement')."""
    found = []
    for tier, (_, acc) in zip(tiers, accumulators(out)):
        past = magnitude > float(ml_dtypes.finfo(acc).max)
        found.append(Tier(tier.label, np.where(past, np.inf, tier.allowed), tier.ksb))
    return tuple(found)


def _bound(tiers: tuple[Tier, ...], formula: str, magnitude: np.ndarray | None, out: np.dtype,
           reason: str = SUM_REASON) -> ElementBound:
    """The bound of a reduction's output; `magnitude` (Σ|a| at the output's scale) for an output
    that is a sum, which TOSA's statistical test judges; None for one that is not (a root, a log,
    a product), whose error does not scale with Σ|a|."""
    return ElementBound(tiers, formula, reason, None if magnitude is None else statistical_scale(magnitude, out))


def _log_sum_exp(rows: np.ndarray, n: np.ndarray, out: np.dtype) -> tuple[np.ndarray, ElementBound]:
    """log(Σ exp(x)), computed shifted by the row's max; the bound carries the exps' errors, the
    sum's, the log's and the final addition's."""
    finite_max = np.where(np.isfinite(rows), rows, -np.inf).max(axis=1) if rows.shape[1] else np.full(rows.shape[0], -np.inf)
    shift = np.where(np.isfinite(finite_max), finite_max, 0.0)
    scaled = np.exp(rows - shift[:, None])
    total = scaled.sum(axis=1)
    y = shift + np.log(total)
    y = np.where(np.isnan(rows).any(axis=1), np.nan, np.where(np.isposinf(rows).any(axis=1), np.inf, y))
    tiers = []
    for label, acc in accumulators(out):
        u = unit_roundoff(acc)
        exp_ulps = EXP_ULPS.get(np.dtype(acc), 3.0)
        relative = gamma(np.maximum(n - 1, 0), u) + 2 * exp_ulps * u + 0.37 * n * u
        log_part = np.log(np.where(total > 0, total, 1.0))
        log_error = LOG_ULPS.get(np.dtype(acc), 4.0) * spacing(log_part, acc)
        reference = 4 * 2.0 ** -53 * (np.abs(y) + 1) if out == np.float64 else 0.0  # numpy's own exp and log
        allowed = half_ulp(y, out) + relative / np.maximum(1 - relative, 1e-300) + log_error + u * np.abs(np.where(np.isfinite(y), y, 0)) + reference
        tiers.append(Tier(label, np.where(relative < 0.5, allowed, np.inf), ksb(n, acc, out)))
    # No allowance for log(Σ exp(x)) computed unshifted in the type, which overflows past x ≈ 88.7
    # in float32 where the value is finite: that is a wrong answer. From version 18 the function body
    # computes exp in float64 (overflowing past 709), and a runtime that follows it passes as the body.
    return y, _bound(tuple(tiers), "½ulp(y) + ρ/(1−ρ) + log's error + u·|y|, ρ = γ(n−1) + 2·exp's ULP·u + 0.37·n·u",
                     None, out, reason=SUM_REASON.replace("a sum", "a sum of exponentials"))


def _product(rows: np.ndarray, n: np.ndarray, out: np.dtype) -> tuple[np.ndarray, ElementBound]:
    """Π x: the last of each row's prefix products (reference/cumulative.py, which CumProd shares):
    exact where float64 holds it, with TOSA's bound, the values a partial product overflowing or
    underflowing in some order gives, and rows of powers of two in range judged exactly."""
    from .cumulative import prefix_products

    if not rows.shape[1]:  # an empty product: 1 (answer() states it where the text does)
        ones = np.ones(rows.shape[0])
        return ones, ElementBound((Tier("exact", np.zeros(rows.shape[0]), np.ones(rows.shape[0])),), "exact", PROD_REASON)
    lengths = np.broadcast_to(np.arange(1, rows.shape[1] + 1, dtype=np.float64), rows.shape)
    y, bound = prefix_products(rows, lengths, out, exclusive=False)
    last = (slice(None), -1)
    return y[last], replace(bound, tiers=tuple(Tier(t.label, t.allowed[last], t.ksb[last]) for t in bound.tiers),
                            formula="½ulp(y) + max(|y|, normal_min)·((1+u)^n − 1)",
                            also=tuple(values[last] for values in bound.also))


# --- the versions and the ops ---

def _semantics(declaration: Reduction) -> tuple[type[ReduceSemantics], ...]:
    attrs = {"declaration": declaration}
    first = type(f"{declaration.op}1", (ReduceSemantics,),
                 {**attrs, "since": 1, "negative_axes": False, "axes_sentence": AXES_1,
                  "__doc__": f"{declaration.op}-1: axes an attribute, no negative axes."})
    eleven = type(f"{declaration.op}11", (first,),
                  {"since": 11, "negative_axes": True, "axes_sentence": AXES_11,
                   "__doc__": f"{declaration.op}-11: negative axes count from the back."})
    with_input = type(f"{declaration.op}{declaration.axes_input_since}", (eleven,),
                      {"since": declaration.axes_input_since, "axes_input": True, "axes_sentence": AXES_INPUT,
                       "__doc__": f"{declaration.op}-{declaration.axes_input_since}: axes an optional input, noop_with_empty_axes."})
    return first, eleven, with_input


# Traits: the causes a runtime may deviate by.

def _data(example: Example) -> np.ndarray | None:
    return example.inputs.get("data")


def nan_in_data(example: Example) -> bool:
    data = _data(example)
    return data is not None and from_numpy(data.dtype).kind == "float" and bool(np.isnan(data.astype(np.float64)).any())


def empty_reduction(example: Example) -> bool:
    """The data has no elements (a size-0 dim), whatever is reduced."""
    data = _data(example)
    return data is not None and data.size == 0


def empty_set(example: Example) -> bool:
    """Some output element reduces an empty set of values (a size-0 dim among those reduced, and
    an output that has elements)."""
    data = _data(example)
    if data is None or data.size:
        return False
    semantics = REFERENCES_BY_OP[example.op].semantics_for(example.version)
    axes = semantics.axes(example, data.ndim)
    if isinstance(axes, Invalid):
        return False
    kept = [d for k, d in enumerate(data.shape) if k not in set(axes)]
    return any(data.shape[k] == 0 for k in axes) and 0 not in kept


def rank_0_or_empty(example: Example) -> bool:
    """Data of rank 0 or with a size-0 dim: where a runtime may check no axis."""
    data = _data(example)
    return data is not None and (data.ndim == 0 or data.size == 0)


def negative_axis_size_0(example: Example) -> bool:
    """A negative axis written for data with a size-0 dim."""
    data = _data(example)
    axes = example.inputs.get("axes")
    written = ints(axes) if axes is not None else ints(example.attributes.get("axes"))
    return data is not None and data.size == 0 and bool(written) and any(a < 0 for a in written)


def noop_empty_axes(example: Example) -> bool:
    """noop_with_empty_axes=1 and no axes: an identity, with a composite's other steps."""
    axes = example.inputs.get("axes")
    return bool(int(example.attributes.get("noop_with_empty_axes", 0))) and (axes is None or axes.size == 0)


def empty_axes_input(example: Example) -> bool:
    """An axes input given as an empty list."""
    axes = example.inputs.get("axes")
    return axes is not None and axes.size == 0


def repeated_axes(example: Example) -> bool:
    axes = example.inputs.get("axes")
    written = ints(axes) if axes is not None else ints(example.attributes.get("axes"))
    data = _data(example)
    if not written or data is None:
        return False
    made = [a + data.ndim if a < 0 else a for a in written]
    return len(set(made)) != len(made)


def integers_beyond_float(example: Example) -> bool:
    """32- or 64-bit integer data with a value a float32 does not hold (|v| > 2**24): what a
    runtime reducing integers through a float type rounds."""
    data = _data(example)
    if data is None or data.dtype.kind not in "iu" or data.dtype.itemsize < 4 or not data.size:
        return False
    return bool(np.any(np.abs(data.astype(np.float64)) > 2 ** 24))


def integer_log(example: Example) -> bool:
    """An integer ReduceLogSum, ReduceLogSumExp or ReduceL2: a logarithm or root the text does not
    say how to round to an integer, which a runtime computing it in floats may land below."""
    data = _data(example)
    kind = REFERENCES_BY_OP[example.op].family.kind
    return data is not None and data.dtype.kind in "iu" and kind in ("log_sum", "log_sum_exp", "l2")


def integer_overflow(example: Example) -> bool:
    """An integer reduction whose exact value does not fit the type."""
    data = _data(example)
    if data is None or from_numpy(data.dtype).kind == "float" or data.dtype == np.bool_:
        return False
    found = REFERENCES_BY_OP[example.op].expected(example)
    return found.is_valid and found.ambiguity == OVERFLOW_OPEN


def _reference(declaration: Reduction) -> OpReference:
    return OpReference(op=declaration.op, dtype_param="T", semantics=_semantics(declaration), data_inputs=("data",),
                       family=declaration,
                       traits={"nan-in-data": nan_in_data, "empty-reduction": empty_reduction, "empty-set": empty_set,
                               "negative-axis-size-0": negative_axis_size_0, "rank-0-or-empty": rank_0_or_empty,
                               "noop-empty-axes": noop_empty_axes, "empty-axes-input": empty_axes_input,
                               "repeated-axes": repeated_axes, "integer-overflow": integer_overflow,
                               "integers-beyond-float": integers_beyond_float, "integer-log": integer_log},
                       rules=("axis-out-of-range", "negative-axis", "not-1d"))


REFERENCES = tuple(_reference(declaration) for declaration in REDUCTIONS)
REFERENCES_BY_OP = {reference.op: reference for reference in REFERENCES}
