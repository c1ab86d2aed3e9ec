"""The cumulative ops: CumSum (versions 11 and 14) and CumProd (26), from the schema text.

Each op is a `Cumulative` declaration (its terms are summed or multiplied), answered by one shared
path: the axis moved last, the data seen as lines along it (read backwards with `reverse`), each
output element the sum (product) of a prefix of its line:

- "By default, it will do the sum inclusively meaning the first element is copied as is": y[j]
  takes the first j + 1 elements of its line;
- exclusive=1: "the j-th output element would be the sum of the first (j-1) elements" (the
  text's example: [1, 2, 3] gives [0, 1, 3]): y[j] takes the first j, and y[0] none, the empty sum
  0 (the empty product 1, CumProd's example: [1, 1, 2]);
- reverse=1: the same from the other end ([1, 2, 3] gives [6, 5, 3], exclusive [5, 3, 0]);
- axis: "A 0-D tensor. Must be in the range [-rank(x), rank(x)-1]. Negative value means counting
  dimensions from the back": any other axis is invalid, a tensor of another rank too, and a rank-0
  x has no axis at all. Versions differ only in the types they allow (read from the schema).

The attributes: "If set to 1 will return exclusive sum ... Otherwise, it would be the sum of the
first j elements", "If set to 1 will perform the sums in reverse direction": a value other than 1
is read as the text's "otherwise" (not set), and a runtime may reject a value other than 0 and 1.

Judging, as the reductions are (reference/reduction.py, PRECISION.md 'Ops that accumulate'):

- Float sums: a per-element bound whose n is the element's own prefix length, ½ulp(y) +
  γ(m−1)·Σ|a| over the prefix, one tier per accumulator (float16 in float32 or in float16);
  exactly summable prefixes judged bitwise, an empty one (exclusive) is 0 exactly. NaN and ±inf
  are IEEE sums of the prefix, judged exactly. No statistical test: a line's prefixes share their
  rounding errors, so its outputs are not the independent samples TOSA's test assumes.
- Float products: TOSA's REDUCE_PRODUCT bound max(|y|, normal_min)·((1+u)^m − 1) per prefix, with
  the values a partial product overflowing (±inf) or underflowing (±0) in some order gives; a
  prefix of one factor ("copied as is"), none (1), or only powers of two that no order takes out
  of the type's range is exact.
- Integers: exact (Python ints); where a result overflows its type the text says nothing:
  wrapped (two's complement) and saturated are readings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, as_float, gamma, half_ulp, ksb, last_bits, sum_tiers, unit_roundoff
from ..case import Example
from ..dtypes import from_numpy
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings
from .expected import spec_if_one
from .conversion import wrapped_and_saturated
from .movement import axis_in

AXIS_RANGE = ("axis: A 0-D tensor. Must be in the range [-rank(x), rank(x)-1]. Negative value means counting "
              "dimensions from the back.")
AXIS_0D = "axis: A 0-D tensor."
FLAG_OPEN = ("exclusive, reverse: the text says what 1 does ('If set to 1 will ...'; exclusive: 'Otherwise, it "
             "would be the sum of the first j elements'), not that another value is allowed: a runtime may reject it")
OVERFLOW_OPEN = "the text does not say what an integer cumulative sum or product that overflows its type gives"
SUM_REASON = ("Higham's bound for a sum in any order (γ(m−1)·Σ|a| over the element's prefix of m terms) in each "
              "accumulator a runtime may use, plus one rounding of the result; exactly summable prefixes judged "
              "bitwise (PRECISION.md, 'Ops that accumulate')")
PROD_REASON = ("TOSA's REDUCE_PRODUCT bound max(|y|, normal_min)·((1+u)^m − 1) over the element's prefix of m "
               "factors, plus one rounding of the result (and m half subnormals scaled by the larger factors where a "
               "partial product may fall below the normal range); a prefix of one factor, none, or powers of two judged exactly")
# Beyond this many factors a float64 prefix product is taken in float64, not as an exact Fraction.
FRACTION_LIMIT = 256


@dataclass(frozen=True)
class Cumulative:
    """One cumulative op: its terms are summed (`kind` 'sum', the empty sum 0) or multiplied
    ('prod', the empty product 1)."""

    op: str
    kind: str

    @property
    def empty(self) -> int:
        return 0 if self.kind == "sum" else 1


CUMULATIVES = (Cumulative("CumSum", "sum"), Cumulative("CumProd", "prod"))


@dataclass(frozen=True)
class Lines:
    """The data as lines along the axis, in the order their prefixes are taken (backwards with
    `reverse`): `lines` (R, L) in the data's type; `moved` the data's shape with the axis last."""

    lines: np.ndarray
    axis: int
    moved: tuple[int, ...]
    reverse: bool

    def placed(self, values: np.ndarray) -> np.ndarray:
        """Per-line values (R, L) put back where their elements are in the data."""
        if self.reverse:
            values = values[:, ::-1]
        return np.moveaxis(values.reshape(self.moved), -1, self.axis)


class CumulativeSemantics(VersionSemantics):
    """A version of a cumulative op (the types it allows come from the schema)."""

    declaration: Cumulative

    def expected(self, example: Example) -> Expected:
        x = example.inputs["x"]
        axis = self.axis(example)
        if isinstance(axis, Invalid):
            return Expected(invalid=axis)
        grouped = lines_of(x, axis, flag(example, "reverse"))
        found = answer(self.declaration, grouped, np.dtype(x.dtype), flag(example, "exclusive"))
        if any(int(example.attributes.get(name, 0)) not in (0, 1) for name in ("exclusive", "reverse")):
            return replace(found, may_reject=FLAG_OPEN)
        return found

    def axis(self, example: Example) -> int | Invalid:
        """The axis, non-negative, or Invalid quoting the text."""
        value = example.inputs.get("axis")
        if value is None or value.ndim != 0:
            return Invalid("axis-not-scalar", AXIS_0D)
        return axis_in(int(value), example.inputs["x"].ndim, True, AXIS_RANGE)


def flag(example: Example, name: str) -> bool:
    """`exclusive` or `reverse`: set where it is 1 ("If set to 1 ..."; otherwise not)."""
    return int(example.attributes.get(name, 0)) == 1


def lines_of(data: np.ndarray, axis: int, reverse: bool) -> Lines:
    moved = np.moveaxis(data, axis, -1)
    length = data.shape[axis]
    lines = moved.reshape(math.prod(moved.shape[:-1]), length)
    return Lines(lines[:, ::-1] if reverse else lines, axis, moved.shape, reverse)


def answer(declaration: Cumulative, grouped: Lines, np_dtype: np.dtype, exclusive: bool) -> Expected:
    """What the text allows for every output element."""
    if from_numpy(np_dtype).kind == "float":
        return _float(declaration, grouped, np_dtype, exclusive)
    return _integer(declaration, grouped, np_dtype, exclusive)


def _shifted(values: np.ndarray, empty, exclusive: bool) -> np.ndarray:
    """Per-line prefix values of the inclusive scan (R, L), moved one along for `exclusive`: the
    j-th element takes the prefix of j elements, the first the empty one (`empty`)."""
    if not exclusive:
        return values
    first = np.full((values.shape[0], 1), empty, dtype=values.dtype)
    return np.concatenate([first, values[:, :-1]], axis=1)[:, : values.shape[1]]


def prefix_lengths(grouped: Lines, exclusive: bool) -> np.ndarray:
    """Per element (R, L), how many terms its prefix holds."""
    rows, length = grouped.lines.shape
    counts = np.arange(length, dtype=np.float64) + (0 if exclusive else 1)
    return np.broadcast_to(counts, (rows, length)).copy()


# --- integers: exact, overflow as readings ---

def _integer(declaration: Cumulative, grouped: Lines, np_dtype: np.dtype, exclusive: bool) -> Expected:
    rows = [[int(v) for v in row] for row in grouped.lines.tolist()] if grouped.lines.size else []
    found = []
    for row in rows:
        total, line = declaration.empty, []
        for value in row:
            if exclusive:
                line.append(total)
            total = total + value if declaration.kind == "sum" else total * value
            if not exclusive:
                line.append(total)
        found.append(line)
    shape = grouped.lines.shape

    def made(flat: list[int]) -> np.ndarray:
        array = np.array(flat, dtype=np_dtype) if flat else np.zeros(0, np_dtype)
        return grouped.placed(array.reshape(shape))

    exact = [v for line in found for v in line]
    fitted = wrapped_and_saturated(exact, np_dtype)
    if fitted is None:
        return Expected(readings=(Reading((made(exact),)),))
    wrapped, saturated = fitted
    options = [Reading((made(wrapped),), "wrapped (two's complement)"),
               Reading((made(saturated),), "saturated (the exact value clamped to the type)")]
    return spec_if_one(readings(options, OVERFLOW_OPEN))


# --- floats: a per-element bound ---

def _float(declaration: Cumulative, grouped: Lines, out: np.dtype, exclusive: bool) -> Expected:
    n = prefix_lengths(grouped, exclusive)
    with np.errstate(all="ignore"):
        rows = grouped.lines.astype(np.float64)
        if declaration.kind == "sum":
            y, bound = _sums(rows, n, out, exclusive)
        else:
            y, bound = prefix_products(rows, n, out, exclusive)
    precise = grouped.placed(y)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = precise.astype(out)
    shaped = ElementBound(tuple(Tier(t.label, grouped.placed(t.allowed), grouped.placed(t.ksb)) for t in bound.tiers),
                          bound.formula, bound.reason, None if bound.scale is None else grouped.placed(bound.scale),
                          tuple(grouped.placed(values) for values in bound.also))
    return Expected(readings=(Reading((rounded,), precise=(precise,)),), budgets=(shaped,))


def _any_so_far(mask: np.ndarray) -> np.ndarray:
    return np.logical_or.accumulate(mask, axis=1) if mask.shape[1] else mask


def _sums(rows: np.ndarray, n: np.ndarray, out: np.dtype, exclusive: bool) -> tuple[np.ndarray, ElementBound]:
    """Each prefix's exact sum (IEEE where an infinity or NaN decides it) and its bound."""
    finite = np.isfinite(rows)
    safe = np.where(finite, rows, 0.0)
    totals = _exact_prefix_sums(safe) if out == np.float64 else np.cumsum(safe, axis=1)
    nan, plus, minus = (_any_so_far(m) for m in (np.isnan(rows), np.isposinf(rows), np.isneginf(rows)))
    y = np.where(nan | (plus & minus), np.nan, np.where(plus, np.inf, np.where(minus, -np.inf, totals)))
    magnitude = np.cumsum(np.abs(safe), axis=1)
    y, magnitude = _shifted(y, 0.0, exclusive), _shifted(magnitude, 0.0, exclusive)
    exact = {label: _shifted(prefix_summable(rows, accumulator), True, exclusive) for label, accumulator in accumulators(out)}
    tiers = sum_tiers(y, magnitude, n, exact, out)
    tiers = tuple(Tier(t.label, np.where(magnitude > float(ml_dtypes.finfo(acc).max), np.inf, t.allowed), t.ksb)
                  for t, (_, acc) in zip(tiers, accumulators(out)))
    # No statistical test (scale None): TOSA's test takes the outputs as independent samples, and the
    # prefixes of one line share their rounding errors. An IEEE sum in order of a structured line
    # (0, 1, 2, ... past 2**24) drifts by the same rounding at every step, and its 2048 outputs
    # measured as one sample each failed the test in float32.
    return y, ElementBound(tiers, "½ulp(y) + γ(m−1)·Σ|a|, m the prefix's length", SUM_REASON, None)


def _exact_prefix_sums(rows: np.ndarray) -> np.ndarray:
    """Per line, every prefix's sum correctly rounded to float64 (math.fsum; a prefix whose
    partial sums pass float64's max, its float64 sum)."""
    found = np.zeros(rows.shape, dtype=np.float64)
    for r, row in enumerate(rows.tolist()):
        for j in range(len(row)):
            try:
                found[r, j] = math.fsum(row[: j + 1])
            except OverflowError:
                with np.errstate(over="ignore"):
                    found[r, j] = np.sum(rows[r, : j + 1])
    return found


def prefix_summable(rows: np.ndarray, accumulator: np.dtype) -> np.ndarray:
    """Per element of `rows` (float64, (R, L)), whether every partial sum of its inclusive prefix,
    in any order, is exact in `accumulator`: `bounds.exactly_summable` along each prefix (every
    term a multiple of 2**q, q the least last bit so far, and Σ|a| / 2**q within the significand)."""
    if not rows.shape[1]:
        return np.zeros(rows.shape, dtype=bool)
    finite = np.logical_and.accumulate(np.isfinite(rows), axis=1)
    safe = np.where(np.isfinite(rows), rows, 0.0)
    lowest = np.minimum.accumulate(last_bits(safe), axis=1)
    unset = lowest == np.iinfo(np.int64).max
    lowest = np.where(unset, 0, lowest)
    total = np.cumsum(np.abs(safe), axis=1)
    info = ml_dtypes.finfo(accumulator)
    digits = int(info.nmant) + 1
    smallest_subnormal = float(info.smallest_normal) * 2.0 ** -(digits - 1)
    with np.errstate(over="ignore", invalid="ignore"):
        units = np.ldexp(total, -lowest)
        fits = (units <= 2.0 ** digits) & (np.ldexp(1.0, lowest) >= smallest_subnormal) & (total <= float(info.max))
    return finite & (fits | (total == 0))


def prefix_products(rows: np.ndarray, n: np.ndarray, out: np.dtype, exclusive: bool) -> tuple[np.ndarray, ElementBound]:
    """Each prefix's product (exact where float64 holds it, Fractions for a float64 output; IEEE
    where an infinity or NaN decides it) with TOSA's bound, the values a partial product
    overflowing or underflowing in some order gives, and the prefixes judged exactly."""
    finite = np.isfinite(rows)
    safe = np.where(finite, rows, 1.0)
    products = np.cumprod(safe, axis=1)
    nonzero_factors = ~_any_so_far(safe == 0)
    left_range = ~np.isfinite(products) | ((products == 0) & nonzero_factors)
    for r in range(rows.shape[0]):
        if (out == np.float64 and rows.shape[1] <= FRACTION_LIMIT) or left_range[r].any():
            total, line = Fraction(1), []
            for value in safe[r].tolist():
                total *= Fraction(value)
                line.append(as_float(total))
            products[r] = line
    zero, nan, infinite = _any_so_far(rows == 0), _any_so_far(np.isnan(rows)), _any_so_far(np.isinf(rows))
    negative = np.cumsum(np.signbit(rows) & ~np.isnan(rows), axis=1) % 2 == 1 if rows.shape[1] else zero
    y = np.where(nan | (infinite & zero), np.nan, np.where(infinite, np.where(negative, -np.inf, np.inf), products))
    magnitudes = np.abs(safe)
    logs = np.log2(np.where(magnitudes > 0, magnitudes, 1.0))
    up = np.cumsum(np.where(logs > 0, logs, 0.0), axis=1)
    down = np.cumsum(np.where(logs < 0, logs, 0.0), axis=1)
    powers = np.logical_and.accumulate((np.frexp(safe)[0] == 0.5) | (np.frexp(safe)[0] == -0.5) | (safe == 0), axis=1) \
        if rows.shape[1] else zero
    y, up, down = _shifted(y, 1.0, exclusive), _shifted(up, 0.0, exclusive), _shifted(down, 0.0, exclusive)
    zero, powers = _shifted(zero, False, exclusive), _shifted(powers & finite.cumprod(axis=1).astype(bool), True, exclusive)
    info = ml_dtypes.finfo(out)  # the narrowest accumulator a runtime may use is the output's own type
    least = float(info.smallest_normal) * 2.0 ** -int(info.nmant)
    in_range = (up <= math.log2(float(info.max))) & (down >= math.log2(least))
    exact = (n <= 1) | (powers & in_range)
    normal = float(info.smallest_normal)
    with np.errstate(over="ignore", invalid="ignore"):
        correct = np.where(np.isfinite(y), np.abs(y.astype(out).astype(np.float64) - y), 0.0)
    overflow = np.where(np.isfinite(y) & (up > math.log2(float(info.max))), np.copysign(np.inf, y), np.nan)
    underflow = np.where(np.isfinite(y) & (y != 0) & (down < math.log2(least)), np.copysign(0.0, y), np.nan)
    # A zero (or a product that underflows) met by a partial product that overflows is inf · 0: NaN
    # in that order, whatever the exact product: no requirement there.
    both = np.isinf(overflow) & (zero | (underflow == 0))
    tiers = []
    for label, acc in accumulators(out):
        u = unit_roundoff(acc)
        reference = 2.0 ** -52 * np.abs(y) if out != np.float64 else 0.0
        allowed = half_ulp(y, out) + np.maximum(np.abs(y), normal) * gamma(n, u) + reference
        # A partial product below the accumulator's normal range rounds by up to half its least
        # subnormal, not by a relative u, and the factors after it may scale that by up to 2**up.
        acc_info = ml_dtypes.finfo(acc)
        acc_least = float(acc_info.smallest_normal) * 2.0 ** -int(acc_info.nmant)
        gradual = down < math.log2(float(acc_info.smallest_normal))
        allowed = allowed + np.where(gradual, n * 0.5 * acc_least * np.exp2(up) * (1 + gamma(n, u)), 0.0)
        allowed = np.where(exact, correct, allowed)
        tiers.append(Tier(label, np.where(both, np.inf, allowed), ksb(n, acc, out)))
    found = ElementBound(tuple(tiers), "½ulp(y) + max(|y|, normal_min)·((1+u)^m − 1), m the prefix's length",
                         PROD_REASON, None, also=(overflow, underflow))
    return y, found


# --- the versions and the ops ---

def _semantics(declaration: Cumulative, sinces: tuple[int, ...]) -> tuple[type[CumulativeSemantics], ...]:
    return tuple(type(f"{declaration.op}{since}", (CumulativeSemantics,),
                      {"declaration": declaration, "since": since,
                       "__doc__": f"{declaration.op}-{since}: the text's semantics; the types it allows come from the schema."})
                 for since in sinces)


# Traits: the causes a runtime may deviate by.

def _x(example: Example) -> np.ndarray | None:
    return example.inputs.get("x")


def _axis_of(example: Example) -> int | None:
    """The case's axis made non-negative, None where it is invalid."""
    x, value = _x(example), example.inputs.get("axis")
    if x is None or value is None or value.ndim != 0:
        return None
    made = axis_in(int(value), x.ndim, True, AXIS_RANGE)
    return None if isinstance(made, Invalid) else made


def empty_input(example: Example) -> bool:
    """x has no elements (a size-0 dim)."""
    x = _x(example)
    return x is not None and x.size == 0


def exclusive_empty_prefix(example: Example) -> bool:
    """exclusive=1 on data with elements: an output element (the first along the axis, the last
    with reverse) is the empty sum 0 (the empty product 1)."""
    x, axis = _x(example), _axis_of(example)
    return axis is not None and x.size > 0 and flag(example, "exclusive")


def exclusive_reverse(example: Example) -> bool:
    """Both exclusive=1 and reverse=1."""
    return _axis_of(example) is not None and flag(example, "exclusive") and flag(example, "reverse")


def axis_int32(example: Example) -> bool:
    """The axis given as an int32 tensor."""
    value = example.inputs.get("axis")
    return value is not None and value.dtype == np.int32


def negative_axis(example: Example) -> bool:
    """A negative axis, counted from the back."""
    value = example.inputs.get("axis")
    return value is not None and value.size == 1 and int(value.reshape(-1)[0]) < 0


def axis_of_one_element(example: Example) -> bool:
    """The axis given as a tensor of one element and rank 1 or more (the text asks for 0-D)."""
    value = example.inputs.get("axis")
    return value is not None and value.ndim > 0 and value.size == 1


def long_axis(example: Example) -> bool:
    """A float sum along an axis of 1024 elements or more, where a 16-bit accumulator and a float32
    one part."""
    x, axis = _x(example), _axis_of(example)
    return axis is not None and from_numpy(x.dtype).kind == "float" and x.shape[axis] >= 1024


def integer_overflow(example: Example) -> bool:
    """An integer result the type does not hold."""
    x = _x(example)
    if x is None or from_numpy(x.dtype).kind == "float":
        return False
    found = REFERENCES_BY_OP[example.op].expected(example)
    return found.is_valid and found.ambiguity == OVERFLOW_OPEN


def integers_beyond_float(example: Example) -> bool:
    """32- or 64-bit integers whose data or results a float32 does not hold (|v| > 2**24): what a
    runtime accumulating integers through a float type rounds."""
    x = _x(example)
    if x is None or x.dtype.kind not in "iu" or not x.size:
        return False
    if np.any(np.abs(x.astype(np.float64)) > 2 ** 24):
        return True
    found = REFERENCES_BY_OP[example.op].expected(example)
    return found.is_valid and any(np.any(np.abs(r.outputs[0].astype(np.float64)) > 2 ** 24) for r in found.readings)


def _reference(declaration: Cumulative, sinces: tuple[int, ...]) -> OpReference:
    return OpReference(op=declaration.op, dtype_param="T", semantics=_semantics(declaration, sinces), data_inputs=("x",),
                       family=declaration,
                       traits={"empty-input": empty_input, "exclusive-empty-prefix": exclusive_empty_prefix,
                               "exclusive-reverse": exclusive_reverse, "axis-int32": axis_int32,
                               "negative-axis": negative_axis, "axis-of-one-element": axis_of_one_element,
                               "long-axis": long_axis, "integer-overflow": integer_overflow,
                               "integers-beyond-float": integers_beyond_float},
                       rules=("axis-out-of-range", "axis-not-scalar"))


REFERENCES = (_reference(CUMULATIVES[0], (11, 14)), _reference(CUMULATIVES[1], (26,)))
REFERENCES_BY_OP = {reference.op: reference for reference in REFERENCES}
