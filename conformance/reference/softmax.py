"""Softmax and LogSoftmax (versions 1, 11, 13), from the schema text in onnx.defs.

What a row is changed at version 13, as for Hardmax (reference/hardmax.py):

- versions 1 and 11: the input "will be coerced into a 2-dimensional tensor with dimensions
  [a_0 * ... * a_{k-1}, a_k * ... * a_{n-1}]" (k the axis, default 1): a row is everything from
  axis k on. Version 1 gives no meaning to a negative axis and sets no range: k = n coerces to
  [a_0 * ... * a_{n-1}, 1] (a rank-0 input at axis 0 to [1, 1]), which a runtime may also reject as
  an axis the input does not have. Version 11 accepts [-r, r-1] (no axis at all for rank 0).
- version 13: "Softmax(input, axis) = Exp(input) / ReduceSum(Exp(input), axis=axis, keepdims=1)"
  along the one `axis` (default -1), "LogSoftmax(input, axis) = Log(Softmax(input, axis=axis))";
  both have a context-dependent function body (ReduceMax, Sub, Exp, ReduceSum, then Div, or Log and
  Sub), which conform evaluates by itself where the prose's readings are missed (its Exp nodes
  widened by Exp's budget, so it admits a few ULP where the prose is exact: 1 − ulp for a row of
  one element passes as "function body"). A rank-0 input has no axis in [-r, r-1] (r = 0).

The prose's formula is read as the real-valued function: its value is finite wherever the data
is, so a runtime whose Exp overflows (no shift by the row's max: x past 88.7 in float32, 11.1 in
float16) or whose Log(Softmax) underflows gives a wrong answer. The version-13 body itself shifts
by the max and takes the log of the sum, never of a quotient, so it overflows and underflows
nowhere.

Judging (one `ElementBound` per output, a tier per accumulator, bounds.accumulators): a correct
runtime computes y_i = exp(d_i) / Σ_j exp(d_j), d = x − max(row), with its exp within TOSA's EXP
bound, sums in any order, divides or multiplies by a rounded reciprocal. Each element's bound is
the interval those choices span, rounded outward to the output's grid:

- each exp(d_j) within a relative ε_j = (3 + 2|d_j|)·2u + |d_j|·u (TOSA's EXP rule, (3 + 2|x|)·2^-23
  in float32, generalised to the accumulator's u; the |d|·u of the rounded subtraction x − max),
  and an absolute smallest-normal where it falls out of the normal range (underflow, flush to
  zero); exp(0) = 1 and exp(-inf) = +0 exactly (C Annex F, F.10.3.1);
- the sum of n positive terms within [Σê·(1−u)^(n−1), Σê·(1+u)^(n−1)] in any order (never below
  the count K of exact ones, or 2^p where a p-digit sum of ones stops growing: 4096 ones summed in
  float16 give 2048, in bfloat16 256); exactly K where the rest sum below u (every partial sum
  holding a 1 absorbs them);
- one rounding of the quotient (or of the reciprocal and the product: two), in the accumulator,
  then the rounding to the output type.

For n terms that is about (n + 6 + 5|d_i|)·u relative: looser than WebNN's softmax tolerance
(3N + 3 ULP) for short rows, tighter for long ones (about 3000 against 12291 ULP at N = 4096 in
float32), so the loosest tier is widened to 3N + 3 ULP where it is tighter: no verdict is stricter
than WebNN's, while the tighter tiers still tell a float16 sum from a float32 one.

LogSoftmax is y_i = d_i − log S: the subtraction's |d_i|·u, the sum's interval through the log
(its own error LOG_ULPS from reference/reduction.py, which its ReduceLogSumExp shares), and, so
that log(softmax) computed as written is legal where the softmax is a normal number of the
accumulator, the exp's ε_i and the quotient's rounding. Single-element rows (1 and 0), rows
of equal values of power-of-two length (1/n and −log n rounded), and rows where one value
dominates so that the rest underflow, come out exact or all but exact from the same interval.

Where the text is silent (no version says what a row of −inf, or a row holding +inf, gives):

- a NaN in the row: NaN in every element of the row (every formula, shifted or not, sums it);
- a row holding +inf: the max-shifted computation (the version-13 body) gives NaN throughout
  (inf − inf); the formula as written gives NaN at the infinities (inf/inf) and 0 elsewhere; for
  1 and 11, whose text has no formula ("normalized exponential"), also the limit: 1/k at the k
  infinities, 0 elsewhere;
- a row of −inf only: the formula and the body give NaN (0/0, −inf − (−inf)); for 1 and 11 also a
  uniform 1/n (the softmax of equal values) and 0 (nothing to normalise).
LogSoftmax's readings are the log of Softmax's.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, unit_roundoff
from ..case import Example
from ..precision import FLOAT64_REFERENCE_SLACK, spacing
from .base import Expected, Invalid, OpReference, Reading, readings
from .function_body import step
from .hardmax import AXIS_11, COERCED, CoercedAxis
from .reduction import LOG_ULPS

AXIS_1 = (f"axis: Describes the axis of the inputs when coerced to 2D; {COERCED} (version 1 gives no meaning to a "
          "negative axis, nor to one past the rank)")
AXIS_IS_RANK = ("axis equal to the rank: version 1 sets no range for axis; its formula coerces the input to "
                "[a_0 * ... * a_{n-1}, 1], and a runtime may reject an axis the input does not have")
SOFTMAX_13 = "Softmax(input, axis) = Exp(input) / ReduceSum(Exp(input), axis=axis, keepdims=1)"
LOG_SOFTMAX_13 = "LogSoftmax(input, axis) = Log(Softmax(input, axis=axis))"
SPECIAL_OPEN = ("the text does not say what a row holding +inf, or a row of -inf only, gives: "
                "'computes the softmax (normalized exponential) values' (1, 11), '" + SOFTMAX_13 + "' (13)")
REASON = ("the interval a correct computation spans: exp within TOSA's EXP bound ((3 + 2|d|)·2u) after a rounded "
          "x − max, a sum of positive terms in any order (1 ± u)^(n−1), one or two roundings of the quotient, "
          "rounded outward to the output type; never tighter than a rigorous worst case (WebNN: 3N + 3 ULP)")


@dataclass(frozen=True)
class SoftmaxOp:
    """One of the two ops: whether it takes the log of the softmax."""

    op: str
    log: bool


# --- the versions ---

class Softmax1(CoercedAxis):
    """Version 1: rows of the input coerced to 2-D at axis k (default 1), k in [0, n]."""

    since = 1
    declaration: SoftmaxOp
    axis_sentence = AXIS_1
    limits = True  # whether the readings of a version without a formula (the limit, 0) are allowed

    def expected(self, example: Example) -> Expected:
        data = example.inputs["input"]
        axis = self.axis(example)
        if isinstance(axis, Invalid):
            return Expected(invalid=axis)
        rows = self.rows(data, axis)
        found = answer(rows, np.dtype(data.dtype), self.declaration.log, self.limits)
        restored = Expected(
            readings=tuple(Reading((self.restored(r.outputs[0], data, axis),), r.label,
                                   precise=(self.restored(r.precise[0], data, axis),)) for r in found.readings),
            ambiguity=found.ambiguity,
            budgets=(_reshaped(found.budgets[0], lambda a: self.restored(a, data, axis)),),
            may_reject=AXIS_IS_RANK if axis == data.ndim and self.axis_may_be_rank else None)
        return restored

    def rows(self, data: np.ndarray, axis: int) -> np.ndarray:
        """The rows, as float64."""
        return self.coerced(data.astype(np.float64), axis)


class Softmax11(Softmax1):
    """Version 11: as 1, the axis in [-r, r-1]."""

    since = 11
    negative_axes = True
    axis_sentence = AXIS_11
    axis_may_be_rank = False


class Softmax13(Softmax11):
    """Version 13: rows along the one axis (default -1), put back in place; the formula's readings only."""

    since = 13
    default_axis = -1
    along_one_axis = True
    limits = False


def _reshaped(bound: ElementBound, shaped) -> ElementBound:
    return ElementBound(tuple(Tier(t.label, shaped(t.allowed), shaped(t.ksb)) for t in bound.tiers), bound.formula, bound.reason)


# --- the answer for rows ---

def answer(rows: np.ndarray, out: np.dtype, log: bool, limits: bool) -> Expected:
    """The readings and the per-element bound for `rows` (float64, (R, n)) of an output of type
    `out`: the softmax (or its log) of each row."""
    with np.errstate(all="ignore"):
        plain = _plain_rows(rows)
        precise = _precise(rows, plain, log, out)
        tiers = tuple(Tier(label, np.where(plain[:, None], _allowed(rows, plain, precise, out, acc, log), 0.0),
                           np.ones(rows.shape))
                      for label, acc in accumulators(out))
        if not log:
            tiers = _no_tighter_than_webnn(tiers, precise, out)
        options = _special_options(rows, plain, precise, log, limits)
        tiers = _with_special_rounding(tiers, options, plain, out)
    formula = ("y_i − log Σ within d_i·(1±u) − log[S_lo, S_hi] ± log's error" if log else
               "y_i within ê_i/Ŝ·(1±u)^k, ê within exp·(1±(3+2|d|)·2u), Ŝ within Σê·(1±u)^(n−1)")
    bound = ElementBound(tiers, formula, REASON)
    found = readings([Reading((values.astype(out),), label, precise=(values,)) for label, values in options], SPECIAL_OPEN)
    if len(found.readings) == 1:
        return Expected(readings=(Reading(found.readings[0].outputs, precise=found.readings[0].precise),), budgets=(bound,))
    return Expected(readings=found.readings, ambiguity=found.ambiguity, budgets=(bound,))


def _no_tighter_than_webnn(tiers: tuple[Tier, ...], y: np.ndarray, out: np.dtype) -> tuple[Tier, ...]:
    """The loosest tier widened to WebNN's softmax tolerance, 3N + 3 ULP of the output, wherever it
    allows any error at all: the verdict is never stricter than WebNN's, and the tighter tiers
    (float32 for a 16-bit output, where 3N + 3 of its ULP would admit anything) still name the
    accumulator. Elements the computation gives exactly stay exact."""
    n = y.shape[1]
    webnn = (3 * n + 3) * spacing(np.where(np.isfinite(y), y, 0.0), out)
    last = tiers[-1]
    widened = np.where(last.allowed > 0, np.maximum(last.allowed, webnn), last.allowed)
    return (*tiers[:-1], Tier(last.label, widened, last.ksb))


def _plain_rows(rows: np.ndarray) -> np.ndarray:
    """The rows the text gives a finite value for: no NaN, no +inf, some value above −inf."""
    if not rows.shape[1]:
        return np.ones(rows.shape[0], dtype=bool)
    return ~np.isnan(rows).any(axis=1) & ~np.isposinf(rows).any(axis=1) & ~np.isneginf(rows).all(axis=1)


def _shifted(rows: np.ndarray, plain: np.ndarray) -> np.ndarray:
    """d = x − max(row) for the plain rows (0 elsewhere, replaced by the special readings)."""
    if not rows.shape[1]:
        return rows.copy()
    safe = np.where(plain[:, None], rows, 0.0)
    return safe - safe.max(axis=1)[:, None]


def _precise(rows: np.ndarray, plain: np.ndarray, log: bool, out: np.dtype) -> np.ndarray:
    """The exact value (float64) of the plain rows; NaN in the others."""
    d = _shifted(rows, plain)
    e = np.exp(d)
    if np.dtype(out) == np.float64:  # a correctly rounded sum, so that the reference is off by its exp alone
        total = np.array([math.fsum(row) for row in e.tolist()]) if e.shape[1] else np.zeros(e.shape[0])
    else:
        total = e.sum(axis=1) if e.shape[1] else np.zeros(e.shape[0])
    values = d - np.log(total)[:, None] if log else e / total[:, None]
    return np.where(plain[:, None], values, np.nan)


def _allowed(rows: np.ndarray, plain: np.ndarray, y: np.ndarray, out: np.dtype, acc: np.dtype, log: bool) -> np.ndarray:
    """Per element, the largest |ŷ − y| a correct runtime computing in `acc` may show (see the
    module's docstring): the interval it spans, rounded outward to `out`."""
    n = rows.shape[1]
    if not n:
        return np.zeros(rows.shape)
    u = unit_roundoff(acc)
    digits = int(ml_dtypes.finfo(acc).nmant) + 1
    tiny = float(ml_dtypes.finfo(acc).smallest_normal)
    d = _shifted(rows, plain)
    e = np.exp(d)
    magnitude = np.where(np.isfinite(d), np.abs(d), 0.0)
    exact_term = (d == 0) | np.isneginf(d)
    eps = np.where(exact_term, 0.0, (3 + 2 * magnitude) * 2 * u + magnitude * u)
    underflows = ~exact_term & (e * (1 + eps) < 2 * tiny)
    e_lo = np.where(underflows, 0.0, e * (1 - eps))
    e_hi = e * (1 + eps) + np.where(underflows, tiny, 0.0)
    ones = (d == 0).sum(axis=1).astype(np.float64)
    grow, shrink = _power(1 + u, n - 1), _power(1 - u, n - 1)
    # A sum of non-negative terms never falls below its exact ones, up to where 1 is lost (2^p).
    s_lo = np.maximum(e_lo.sum(axis=1) * shrink, np.minimum(ones, 2.0 ** digits))
    s_hi = e_hi.sum(axis=1) * grow
    rest = np.where(d == 0, 0.0, e_hi).sum(axis=1) * _power(1 + u, n)
    known = (rest < u) & (ones <= 2.0 ** digits) & (ones >= 1)
    s_lo, s_hi = np.where(known, ones, s_lo), np.where(known, ones, s_hi)
    s_lo, s_hi = s_lo[:, None], s_hi[:, None]
    roundings = 1 if np.dtype(acc) == np.dtype(out) else 2
    # 1/K exact in the accumulator (K a power of two) with the sum known: an exact one's quotient is exact.
    exact_quotient = exact_term & known[:, None] & _power_of_two(s_lo)
    if log:
        low, high = _log_interval(d, eps, s_lo, s_hi, known, exact_quotient, u, roundings, acc, e, tiny)
    else:
        low = np.where(exact_quotient, e / s_lo, e_lo / s_hi * _power(1 - u, roundings))
        high = np.where(exact_quotient, e / s_lo, e_hi / s_lo * _power(1 + u, roundings))
        # A known sum and an exact one: the quotient rounded once in the accumulator, the same by
        # division or by a reciprocal (1·RN(1/K)).
        once = exact_term & known[:, None] & ~exact_quotient & (d == 0)
        single = (1.0 / s_lo).astype(acc).astype(np.float64)
        low, high = np.where(once, single, low), np.where(once, single, high)
    allowed = np.maximum(y - _rounded(low, out, down=True), _rounded(high, out, down=False) - y)
    # Where the computation's one value is not y itself, half an ULP at least: its error is then
    # measured against a rounding, not against itself (1 of the bound for the correctly rounded 1/3).
    allowed = np.where((low == high) & (low == y), allowed, np.maximum(allowed, 0.5 * spacing(np.where(np.isfinite(y), y, 0.0), out)))
    if np.dtype(out) == np.float64:  # numpy's float64 exp and log are themselves off by about an ULP
        allowed = np.where(low == high, allowed, allowed + 4 * FLOAT64_REFERENCE_SLACK * spacing(np.where(np.isfinite(y), y, 0.0), out))
    return np.where(np.isfinite(y), np.maximum(allowed, 0.0), 0.0)


def _log_interval(d, eps, s_lo, s_hi, known, exact_quotient, u, roundings, acc, e, tiny):
    """The interval of d_i − log(Ŝ) (and of log(ê_i/Ŝ) where the softmax is a normal number of
    the accumulator), before the rounding to the output."""
    log_lo, log_hi = np.log(s_lo), np.log(s_hi)
    log_error = LOG_ULPS.get(np.dtype(acc), LOG_ULPS[np.dtype(np.float32)]) * spacing(log_hi, acc)
    log_error = np.where(known[:, None] & (s_lo == 1), 0.0, log_error)  # log(1) = +0 exactly (C Annex F)
    magnitude = np.where(np.isfinite(d), np.abs(d), 0.0)
    # log(softmax) as written: the exp's and the quotient's errors, where the quotient is normal.
    normal = e / s_hi >= tiny
    quotient = np.where(exact_quotient, 0.0, roundings * u)
    extra = np.where(normal, eps + quotient, 0.0)
    low = d - magnitude * u - log_hi - log_error - extra
    high = d + magnitude * u - log_lo + log_error + extra
    if roundings == 2:  # the difference rounded in the accumulator before the output's rounding
        low, high = low - np.abs(low) * u, high + np.abs(high) * u
    return low, high


def _power(base: float, exponent) -> np.ndarray:
    return np.exp(np.asarray(exponent, dtype=np.float64) * math.log(base))


def _power_of_two(values: np.ndarray) -> np.ndarray:
    mantissa, _ = np.frexp(values)
    return (values > 0) & (mantissa == 0.5)


def _rounded(values: np.ndarray, out: np.dtype, down: bool) -> np.ndarray:
    """`values` rounded to `out`'s grid toward −inf (`down`) or +inf, as float64."""
    finite = np.isfinite(values)
    largest = float(ml_dtypes.finfo(out).max)  # past the type's range the judge allows the overflow itself
    safe = np.clip(np.where(finite, values, 0.0), -largest, largest)
    near = safe.astype(out)
    back = near.astype(np.float64)
    inward = back > safe if down else back < safe
    moved = np.where(inward, step(near, -1 if down else 1), near).astype(np.float64)
    return np.where(finite, moved, values)


# --- what the text leaves open ---

def _special_options(rows: np.ndarray, plain: np.ndarray, precise: np.ndarray, log: bool,
                     limits: bool) -> list[tuple[str, np.ndarray]]:
    """The readings: `precise` with each row the text gives no finite value filled by a convention
    (see the module's docstring), one reading per combination of conventions."""
    n = rows.shape[1]
    nan_rows = np.isnan(rows).any(axis=1) if n else np.zeros(rows.shape[0], dtype=bool)
    inf_rows = ~plain & ~nan_rows & np.isposinf(rows).any(axis=1)
    void_rows = ~plain & ~nan_rows & ~inf_rows
    base = np.where(nan_rows[:, None], np.nan, precise)
    infs = np.isposinf(rows)
    count = np.maximum(infs.sum(axis=1), 1)[:, None]
    inf_options = [("max-shifted, inf − inf is NaN (the version-13 body)", np.full(rows.shape, np.nan)),
                   ("the formula as written: inf/inf is NaN at the infinities, x/inf is 0 elsewhere", np.where(infs, np.nan, 0.0))]
    void_options = [("0/0 is NaN", np.full(rows.shape, np.nan))]
    if limits:
        inf_options.append(("the limit: the infinities share the row", np.where(infs, 1.0 / count, 0.0)))
        void_options += [("equal values share the row: 1/n", np.full(rows.shape, 1.0 / max(n, 1))),
                         ("nothing to normalise: 0", np.zeros(rows.shape))]
    if not inf_rows.any():
        inf_options = inf_options[:1]
    if not void_rows.any():
        void_options = void_options[:1]
    found = []
    for (inf_label, inf_values), (void_label, void_values) in itertools.product(inf_options, void_options):
        filled = np.where(inf_rows[:, None], inf_values, void_values)
        values = np.where((inf_rows | void_rows)[:, None], np.log(filled) if log else filled, base)
        labels = [label for label, present in ((f"a row with +inf: {inf_label}", inf_rows.any()),
                                               (f"a row of -inf: {void_label}", void_rows.any())) if present]
        found.append(("; ".join(labels) or "spec", values))
    return found


def _with_special_rounding(tiers: tuple[Tier, ...], options, plain: np.ndarray, out: np.dtype) -> tuple[Tier, ...]:
    """The tiers with, in the rows a convention fills with finite values (1/n, log 1/k), the
    rounding of those values to the output allowed."""
    rounding = np.zeros(tiers[0].allowed.shape)
    for _, values in options:
        finite = np.isfinite(values) & ~plain[:, None]
        safe = np.where(finite, values, 0.0)
        rounding = np.maximum(rounding, np.where(finite, np.abs(safe.astype(out).astype(np.float64) - safe), 0.0))
    return tuple(Tier(t.label, np.where(plain[:, None], t.allowed, rounding), t.ksb) for t in tiers)


# --- traits: the causes a runtime may deviate by ---

def _rows_of(example: Example) -> np.ndarray | None:
    data = example.inputs.get("input")
    if data is None:
        return None
    semantics = REFERENCES_BY_OP[example.op].semantics_for(example.version)
    axis = semantics.axis(example)
    return None if isinstance(axis, Invalid) else semantics.rows(data, axis)


def nan_in_data(example: Example) -> bool:
    data = example.inputs.get("input")
    return data is not None and bool(np.isnan(data.astype(np.float64)).any())


def inf_in_row(example: Example) -> bool:
    """A row holding +inf (no NaN): the text gives no value."""
    rows = _rows_of(example)
    return rows is not None and rows.size > 0 and bool((np.isposinf(rows).any(axis=1) & ~np.isnan(rows).any(axis=1)).any())


def negative_infinity_row(example: Example) -> bool:
    """A row of -inf only: the text gives no value (0/0)."""
    rows = _rows_of(example)
    return rows is not None and rows.shape[1] > 0 and bool(np.isneginf(rows).all(axis=1).any())


def softmax_underflows(example: Example) -> bool:
    """A finite element whose softmax underflows to 0 in the input's type (x − max below the log of
    its least subnormal), where the log of the softmax is finite: what Log(Softmax(x)) computed in
    two steps turns into −inf."""
    rows = _rows_of(example)
    if rows is None or rows.size == 0:
        return False
    wide = rows.astype(np.float64)
    floor = math.log(float(ml_dtypes.finfo(example.inputs["input"].dtype).smallest_subnormal))
    with np.errstate(invalid="ignore"):
        top = np.where(np.isfinite(wide), wide, -np.inf).max(axis=1, keepdims=True)
        return bool((np.isfinite(wide) & np.isfinite(top) & (wide - top < floor)).any())


def empty_data(example: Example) -> bool:
    """An input with a size-0 dim, whatever the axis."""
    data = example.inputs.get("input")
    return data is not None and data.size == 0


def coerced_2d(example: Example) -> bool:
    """Before 13, a row spanning more than the axis: where a runtime computing along one axis for
    every version is wrong."""
    data = example.inputs.get("input")
    if data is None or example.version.since_version >= 13 or _rows_of(example) is None:
        return False
    axis = int(example.attributes.get("axis", 1))
    axis = axis + data.ndim if axis < 0 else axis
    return data.size > 0 and any(d > 1 for d in data.shape[axis + 1:])


def axis_is_rank(example: Example) -> bool:
    """Version 1 with axis = rank (its default on a 1-D input): rows of one element."""
    data = example.inputs.get("input")
    return (data is not None and example.version.since_version < 11
            and int(example.attributes.get("axis", 1)) == data.ndim)


def default_axis_1(example: Example) -> bool:
    """Before 13, no axis given on an input of rank other than 2: the text's default 1 differs from 13's -1."""
    data = example.inputs.get("input")
    return data is not None and example.version.since_version < 13 and "axis" not in example.attributes and data.ndim != 2


def _reference(declaration: SoftmaxOp) -> OpReference:
    attrs = {"declaration": declaration}
    first = type(f"{declaration.op}1", (Softmax1,), {**attrs, "__doc__": f"{declaration.op}-1: " + Softmax1.__doc__})
    eleven = type(f"{declaration.op}11", (Softmax11, first), {**attrs, "__doc__": f"{declaration.op}-11: " + Softmax11.__doc__})
    thirteen = type(f"{declaration.op}13", (Softmax13, eleven), {**attrs, "__doc__": f"{declaration.op}-13: " + Softmax13.__doc__})
    return OpReference(op=declaration.op, dtype_param="T", data_inputs=("input",), semantics=(first, eleven, thirteen),
                       family=declaration,
                       traits={"nan-in-data": nan_in_data, "inf-in-row": inf_in_row,
                               "negative-infinity-row": negative_infinity_row, "empty-data": empty_data,
                               "softmax-underflows": softmax_underflows,
                               "coerced-2d": coerced_2d, "axis-is-rank": axis_is_rank, "default-axis-1": default_axis_1},
                       rules=("axis-out-of-range", "negative-axis"))


REFERENCES = (_reference(SoftmaxOp("Softmax", log=False)), _reference(SoftmaxOp("LogSoftmax", log=True)))
REFERENCES_BY_OP = {reference.op: reference for reference in REFERENCES}
