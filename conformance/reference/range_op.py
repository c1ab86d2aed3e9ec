"""Reference for Range (versions 11 and 27), from the text of onnx.defs and its function body.

(The module is not named range.py: importing conformance.strategies.range would set the attribute
`range` on the strategies package, hiding the builtin that strategies/__init__.py calls.)

The text gives a formula and a loop, and no precision for either:

    number_of_elements = max( ceil( (limit - start) / delta ) , 0 )
    for(int i=0; i<number_of_elements; ++i) { output[i] = start + (i * delta); }

Each precision the text allows is a reading, and the readings are every pairing of a count with
the values:

- the count: exactly (real numbers); in the working type W (T, or Range-27's `stash_type` type for
  float16 and bfloat16), as the formula reads when written in T; `limit - start` in W and the
  quotient in double, as onnx's own shape inference computes it; and as the function body computes
  it (Sub in T, then Cast to float32 of the difference and of delta, Div, Ceil, Relu in float32);
- the values: `start + i * delta` exact and rounded once to T; the loop's expression in W
  (`i * delta`, then `+ start`); and as the function body computes them, accumulated
  (`prev + delta` in W, a Loop carrying the previous value).

Integer values are exact (the text's values never leave T below the exact count: each lies between
start and limit); a count that a rounded reading makes larger reaches one value past limit, which
may leave T: wrapped and saturated are both given. `limit - start` beyond T is what the body's Sub
wraps (or saturates), a count the exact reading does not give.

Division by zero and non-finite bounds follow IEEE 754 (the body's float division): a quotient of
-inf or NaN is a count of 0 (max(NaN, 0) read as IEEE's maxNum), but as the text divides by zero or
by NaN, a runtime may also reject such a case; a quotient of +inf asks for more elements than any
output holds, which only a rejection answers (`delta-zero`, `count-infinite`).

The body cannot be evaluated by the core's function-body path (its Loop is a graph attribute), so
its readings are given here, labelled as the body's.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from onnx import TensorProto

from ..case import Example
from ..dtypes import DType, dtype, from_elem_type
from . import conversion as cv
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings

COUNT_FORMULA = "number_of_elements = max( ceil( (limit - start) / delta ) , 0 )"
SCALAR = "start, limit, delta: Scalar."
DELTA_ZERO = (f"{COUNT_FORMULA}: with delta 0 and limit beyond start, (limit - start) / delta is +infinity, "
              "and no output holds that many elements")
COUNT_INFINITE = (f"{COUNT_FORMULA}: with an infinite start or limit (or a difference that overflows), "
                  "(limit - start) / delta is +infinity, and no output holds that many elements")
DIVIDES_BY_ZERO = (f"{COUNT_FORMULA} divides by delta 0: the quotient is -infinity or NaN, a count of 0 as IEEE 754 "
                   "(and the function body's float division) reads it, but the text gives division by zero no value, "
                   "and a runtime may reject it")
NAN_COUNT = (f"{COUNT_FORMULA} is NaN here (a NaN input, or inf - inf): max(NaN, 0) is 0 as IEEE 754's maxNum "
             "reads it, but the function body's Relu keeps the NaN and casts it to int64, which is undefined; "
             "a runtime may reject it")
STASH_NOT_FLOAT = ("stash_type: the data type used for intermediate computation when T is float16 or bfloat16; "
                   "this one is no floating type, which the text gives no meaning")
BODY_DISAGREES = "the function body and the prose disagree"
PRECISION_OPEN = "the text gives the count and the values no precision"

EXACT, IN_TYPE, QUOTIENT_DOUBLE, BODY = ("count exact", "count in the working type",
                                         "count: difference in the working type, quotient in double (onnx's shape inference)",
                                         "function body's count (difference in T, quotient in float32)")
VALUES_EXACT, VALUES_IN_TYPE, VALUES_BODY = ("values start + i*delta rounded once", "values start + (i * delta) in the working type",
                                             "function body's values (accumulated: prev + delta)")
WRAPPED, SATURATED = "wrapped", "saturated"
BODY_LABELS = (BODY, VALUES_BODY)
FLOAT_STASHES = frozenset({"float", "double", "float16", "bfloat16"})
SIXTEEN_BIT = frozenset({"float16", "bfloat16"})
POSITIVE_INFINITY, NOT_A_NUMBER = "+inf", "nan"
UNBOUNDED = 2**62  # what largest_count answers for a reading with no finite count: more than any output holds


class Range11(VersionSemantics):
    """Range-11: scalar start, limit, delta of T; the output is 1-D, of T."""

    since = 11

    def working_types(self, example: Example) -> tuple[list[DType], str | None]:
        """The types the count and values are computed in, and why a runtime may reject the case."""
        return [dtype(example.dtype)], None

    def expected(self, example: Example) -> Expected:
        invalid = scalar_problem(example)
        if invalid is not None:
            return Expected(invalid=invalid)
        found: list[Reading] = []
        reasons: list[str] = []
        works, stash_reason = self.working_types(example)
        for work in works:
            answer = range_readings(example, work)
            if isinstance(answer, Invalid):
                return Expected(invalid=answer)
            options, reason = answer
            found += options
            reasons.append(reason)
        may_reject = "; ".join(dict.fromkeys(r for r in (*reasons, stash_reason) if r)) or None
        return readings(found, ambiguity=ambiguity_of(found), may_reject=may_reject)


class Range27(Range11):
    """Range-27: float16 and bfloat16 are computed in `stash_type`'s type (float by default), then
    cast back to T; for the other types the attribute has no effect."""

    since = 27

    def working_types(self, example: Example) -> tuple[list[DType], str | None]:
        t = dtype(example.dtype)
        if t.name not in SIXTEEN_BIT:
            return [t], None
        stash = stash_type_name(example)
        if stash in FLOAT_STASHES:
            return [dtype(stash)], None
        return [dtype("float"), t], STASH_NOT_FLOAT  # the default, and T itself, as the body then computes


def stash_type_name(example: Example) -> str | None:
    """The type `stash_type` names (1, float, where absent), or None where it names no type."""
    code = int(example.attributes.get("stash_type", TensorProto.FLOAT))
    try:
        return from_elem_type(code).name
    except Exception:  # not a DataType conform knows
        return None


def scalar_problem(example: Example) -> Invalid | None:
    for name in ("start", "limit", "delta"):
        if example.inputs[name].ndim != 0:
            return Invalid("input-not-scalar", f"{name}: {SCALAR}")
    return None


# --- the count ---

def _value(array: np.ndarray, t: DType):
    """An input scalar exactly: a Python int, or a float (exact in float64)."""
    if t.kind in ("int", "uint"):
        return int(array)
    with np.errstate(invalid="ignore"):
        return float(np.asarray(array).astype(np.float64))


def _ieee_quotient(numerator: float, denominator: float) -> float:
    """numerator / denominator as IEEE 754 divides (signed zeros and infinities), in float64."""
    with np.errstate(all="ignore"):
        return float(np.float64(numerator) / np.float64(denominator))


def _exact_quotient(diff, delta) -> Fraction | float:
    """(limit - start) / delta in real numbers where it is one; else IEEE 754's value (+-inf, NaN)."""
    if isinstance(diff, float) and not math.isfinite(diff) or isinstance(delta, float) and not math.isfinite(delta):
        return _ieee_quotient(float(diff), float(delta))
    if delta == 0:
        sign = -1.0 if isinstance(delta, float) and math.copysign(1.0, delta) < 0 else 1.0
        return _ieee_quotient(float(diff), sign * 0.0) if diff != 0 else math.nan
    return Fraction(diff) / Fraction(delta)


def count_of(quotient) -> int | str:
    """max(ceil(quotient), 0): an int, or '+inf' / 'nan' where the quotient is one."""
    if isinstance(quotient, float):
        if math.isnan(quotient):
            return NOT_A_NUMBER
        if math.isinf(quotient):
            return POSITIVE_INFINITY if quotient > 0 else 0
    return max(math.ceil(quotient), 0)


def _in(value, work: DType) -> float:
    """A value held in the float type `work` (rounded to nearest even, overflow to +-inf)."""
    with np.errstate(all="ignore"):
        return float(np.array(value, dtype=np.float64).astype(work.np_dtype).astype(np.float64))


def _sub_in(limit, start, work: DType, t: DType, overflow: str) -> int | float:
    """limit - start in `work` (a float type) or in the integer type T, wrapped or saturated."""
    if t.kind in ("int", "uint"):
        exact = limit - start
        if overflow == WRAPPED:
            return cv.wrap(exact, t)
        return min(max(exact, int(t.lowest)), int(t.max))
    with np.errstate(all="ignore"):
        return _in(np.array(limit, dtype=np.float64).astype(work.np_dtype) - np.array(start, dtype=np.float64).astype(work.np_dtype), work)


def _div_in(diff, delta, work: DType) -> float:
    """diff / delta, each held in `work` first, divided there (IEEE 754)."""
    with np.errstate(all="ignore"):
        held = _held_in(diff, work), _held_in(delta, work)
        return float((held[0] / held[1]).astype(np.float64))


def _held_in(value, work: DType) -> np.ndarray:
    """`value` converted to the float type `work` once: an integer of T (which fits int64) straight
    from int64, not through a double first (a double rounding for int64 values beyond 2**53)."""
    if isinstance(value, int):
        return np.array(value, dtype=np.int64).astype(work.np_dtype)
    return np.array(float(value)).astype(work.np_dtype)


def counts(start, limit, delta, t: DType, work: DType) -> list[tuple[str, int | str]]:
    """Each reading of the count: (label, count), in order, the exact one first."""
    float32, double = dtype("float"), dtype("double")
    found = [(EXACT, count_of(_exact_quotient(limit - start if _finite(limit, start) else _diff_ieee(limit, start), delta)))]
    if t.kind == "float":
        diff_w = _sub_in(limit, start, work, t, WRAPPED)
        found.append((IN_TYPE, count_of(_div_in(diff_w, delta, work))))
        found.append((QUOTIENT_DOUBLE, count_of(_div_in(diff_w, delta, double))))
        body_work = work if t.name in SIXTEEN_BIT else t  # Range-27's body casts 16-bit floats to the stash type first
        body_diff = _sub_in(limit, start, body_work, t, WRAPPED)
        body_type = body_work if t.name in SIXTEEN_BIT else float32
        found.append((BODY, count_of(_div_in(body_diff, delta, body_type))))
        return found
    wrapped = _sub_in(limit, start, work, t, WRAPPED)
    found.append((QUOTIENT_DOUBLE, count_of(_div_in(wrapped, delta, double))))
    found.append((f"{BODY}, Sub {WRAPPED}", count_of(_div_in(wrapped, delta, float32))))
    saturated = _sub_in(limit, start, work, t, SATURATED)
    found.append((f"{BODY}, Sub {SATURATED}", count_of(_div_in(saturated, delta, float32))))
    return found


def _finite(*values) -> bool:
    return all(not isinstance(v, float) or math.isfinite(v) for v in values)


def _diff_ieee(limit: float, start: float) -> float:
    with np.errstate(all="ignore"):
        return float(np.float64(limit) - np.float64(start))


def inputs_of(example: Example) -> tuple[object, object, object, DType]:
    t = dtype(example.dtype)
    return (*(_value(example.inputs[name], t) for name in ("start", "limit", "delta")), t)


def largest_count(example: Example) -> int:
    """The most elements any reading gives (0 where the case is invalid or the count infinite)."""
    if any(example.inputs[name].ndim != 0 for name in ("start", "limit", "delta")):
        return 0
    start, limit, delta, t = inputs_of(example)
    works, _ = REFERENCE.semantics_for(example.version).working_types(example)
    found = [c for work in works for _, c in counts(start, limit, delta, t, work)]
    if POSITIVE_INFINITY == counts(start, limit, delta, t, works[0])[0][1]:
        return 0  # invalid: the exact count is endless (delta-zero, count-infinite)
    if POSITIVE_INFINITY in found:
        return UNBOUNDED  # a rounded reading (a quotient overflowing float32) gives no count at all
    return max((c for c in found if isinstance(c, int)), default=0)


# --- the values ---

def float_values(start: float, delta: float, n: int, t: DType, work: DType) -> list[tuple[str, np.ndarray]]:
    """The first n values of T by each reading (n > 0 only where start and delta are finite)."""
    if n == 0:
        empty = np.zeros((0,), dtype=t.np_dtype)
        return [(VALUES_EXACT, empty)]
    exact = [Fraction(start) + i * Fraction(delta) for i in range(n)]
    once = cv.exact_to_float(exact, t).reshape(n)
    with np.errstate(all="ignore"):
        w_start, w_delta = np.array(start).astype(work.np_dtype), np.array(delta).astype(work.np_dtype)
        in_type = (np.arange(n).astype(work.np_dtype) * w_delta + w_start).astype(work.np_dtype)
        steps = np.full(n, w_delta, dtype=work.np_dtype)
        steps[0] = w_start
        accumulated = np.add.accumulate(steps, dtype=work.np_dtype)
        in_type, accumulated = in_type.astype(t.np_dtype), accumulated.astype(t.np_dtype)
    return [(VALUES_EXACT, once), (VALUES_IN_TYPE, in_type), (VALUES_BODY, accumulated)]


def int_values(start: int, delta: int, n: int, t: DType) -> list[tuple[str, np.ndarray]]:
    """The first n values of T: exact where they fit, wrapped and saturated where a count beyond the
    exact one reaches past T."""
    exact = [start + i * delta for i in range(n)]
    if all(t.lowest <= v <= t.max for v in exact):
        return [("values exact", cv.pack_integers(exact, t).reshape(n))]
    wrapped = cv.pack_integers([cv.wrap(v, t) for v in exact], t).reshape(n)
    saturated = cv.pack_integers([min(max(v, int(t.lowest)), int(t.max)) for v in exact], t).reshape(n)
    return [(f"values {WRAPPED}", wrapped), (f"values {SATURATED}", saturated)]


def range_readings(example: Example, work: DType) -> tuple[list[Reading], str | None] | Invalid:
    """Every (count, values) pairing in one working type, and why a runtime may reject the case;
    or the Invalid a count of +infinity is."""
    start, limit, delta, t = inputs_of(example)
    found = counts(start, limit, delta, t, work)
    if found[0][1] == POSITIVE_INFINITY:
        return Invalid("delta-zero", DELTA_ZERO) if delta == 0 and _finite(start, limit) else Invalid("count-infinite", COUNT_INFINITE)
    reason = None
    if delta == 0:
        reason = DIVIDES_BY_ZERO
    if any(c == NOT_A_NUMBER for _, c in found):
        reason = NAN_COUNT
    # A NaN quotient is a count of 0 (IEEE 754's maxNum); a reading whose rounded quotient is +inf
    # (float32 overflowing where the exact count is finite) gives no output at all, so it is dropped.
    numbers = [(label, 0 if c == NOT_A_NUMBER else c) for label, c in found if c != POSITIVE_INFINITY]
    most = max(c for _, c in numbers)
    if t.kind == "float":
        values = float_values(start, delta, most, t, work) if most else float_values(0.0, 0.0, 0, t, work)
    else:
        values = int_values(start, delta, most, t)
    options = [Reading((array[:n].copy(),), f"{count_label}; {values_label}" + _in_work(work, t))
               for count_label, n in numbers for values_label, array in values]
    return options, reason


def _in_work(work: DType, t: DType) -> str:
    return f" (computed in {work.name})" if work.name != t.name else ""


def ambiguity_of(found: list[Reading]) -> str:
    """What the readings leave open: the precision, and where only the body gives a value, that the
    body and the prose disagree."""
    distinct = readings(found, "").readings
    if len(distinct) < 2:
        return ""
    body_only = [r for r in distinct if all(label in r.label for label in BODY_LABELS[:1]) or VALUES_BODY in r.label]
    prose = [r for r in distinct if r not in body_only]
    note = PRECISION_OPEN
    if body_only and prose and not any(_same(b, p) for b in body_only for p in prose):
        note += f"; {BODY_DISAGREES}"
    return note


def _same(a: Reading, b: Reading) -> bool:
    from ..equality import arrays_identical

    return all(arrays_identical(x, y) for x, y in zip(a.outputs, b.outputs))


# --- traits ---

def _valid_scalars(example: Example) -> bool:
    return all(example.inputs[name].ndim == 0 for name in ("start", "limit", "delta"))


def delta_zero(example: Example) -> bool:
    """delta is 0: the count divides by it."""
    delta = example.inputs["delta"]
    return delta.size > 0 and bool((delta.astype(np.float64) == 0).any())


def one_element_not_scalar(example: Example) -> bool:
    """An input of one element but rank 1 or more: the text wants a scalar (runtimes often take [1])."""
    return any(a.size == 1 and a.ndim > 0 for a in (example.inputs[n] for n in ("start", "limit", "delta")))


def count_depends_on_precision(example: Example) -> bool:
    """The count's readings differ: a float step whose count rounds one way exactly and another in
    T or float32 (the body), or a difference limit - start beyond T."""
    if not _valid_scalars(example):
        return False
    start, limit, delta, t = inputs_of(example)
    works, _ = REFERENCE.semantics_for(example.version).working_types(example)
    return len({c for work in works for _, c in counts(start, limit, delta, t, work)}) > 1


def difference_beyond_type(example: Example) -> bool:
    """limit - start is beyond T (an integer type) or overflows it (a float type): the body's Sub in
    T wraps or saturates it."""
    if not _valid_scalars(example):
        return False
    start, limit, _, t = inputs_of(example)
    if t.kind in ("int", "uint"):
        return not t.lowest <= limit - start <= t.max
    return _finite(start, limit) and not math.isfinite(_in(limit - start, t))


def values_depend_on_precision(example: Example) -> bool:
    """Float values whose readings differ: start + i*delta rounded once, in T, or accumulated."""
    if not _valid_scalars(example) or dtype(example.dtype).kind != "float":
        return False
    found = REFERENCE.expected(example, bodies=False)
    return found.is_valid and any(r.label.endswith(VALUES_BODY) for r in found.readings) and len(found.readings) > 1


def non_finite_input(example: Example) -> bool:
    """A NaN or an infinity among start, limit, delta."""
    if dtype(example.dtype).kind != "float":
        return False
    with np.errstate(invalid="ignore"):
        return any(not np.isfinite(example.inputs[n].astype(np.float64)).all() for n in ("start", "limit", "delta"))


def empty_range(example: Example) -> bool:
    """The exact count is 0 (limit not beyond start in delta's direction)."""
    if not _valid_scalars(example):
        return False
    start, limit, delta, t = inputs_of(example)
    return counts(start, limit, delta, t, t)[0][1] == 0


def quotient_not_integer(example: Example) -> bool:
    """(limit - start) / delta is a positive number that is no integer (the exact real quotient):
    the count is its ceiling, which a runtime that truncates (or floors) gives one less."""
    if not _valid_scalars(example):
        return False
    start, limit, delta, _ = inputs_of(example)
    if not _finite(start, limit):
        return False
    quotient = _exact_quotient(Fraction(limit) - Fraction(start), delta)  # IEEE's float where delta is 0 or not finite
    return isinstance(quotient, Fraction) and quotient > 0 and quotient.denominator != 1


def negative_delta(example: Example) -> bool:
    delta = example.inputs["delta"]
    with np.errstate(invalid="ignore"):
        return bool((delta.astype(np.float64) < 0).any())


def count_from_doubles_differs(example: Example) -> bool:
    """Integer bounds whose count, computed from start, limit and delta each cast to double first
    ((double)limit - (double)start) / (double)delta, differs from the exact count: int64 values
    beyond 2**53 that a double rounds (a runtime counting in double loses or gains elements)."""
    if not _valid_scalars(example) or dtype(example.dtype).kind not in ("int", "uint"):
        return False
    start, limit, delta, _ = inputs_of(example)
    if delta == 0:
        return False
    with np.errstate(all="ignore"):
        quotient = (np.float64(limit) - np.float64(start)) / np.float64(delta)
    return count_of(float(quotient)) != count_of(Fraction(limit - start, delta))


def quotient_beyond_int64(example: Example) -> bool:
    """(limit - start) / delta, in double, is NaN, infinite or of magnitude 2**63 or more (a huge span
    over a tiny delta, an infinite bound): the count is 0 or the case invalid, but a runtime that
    converts the quotient to an integer before taking max(.., 0) overflows, or refuses it."""
    if not _valid_scalars(example):
        return False
    start, limit, delta, _ = inputs_of(example)
    with np.errstate(all="ignore"):
        quotient = float((np.float64(limit) - np.float64(start)) / np.float64(delta))
    return not math.isfinite(quotient) or abs(quotient) >= 2.0**63


def stash_type_16_bit(example: Example) -> bool:
    """Range-27's stash_type naming float16 or bfloat16 (10 or 16): a data type for the intermediate
    computation, though not the default float or double, which a runtime may not take."""
    return stash_type_given(example) and stash_type_name(example) in SIXTEEN_BIT


def fractional_delta(example: Example) -> bool:
    """A float delta that is no integer (0.25, -0.5): a runtime that takes the steps as integers
    (for a symbolic length) divides by 0 or miscounts."""
    delta = example.inputs["delta"]
    if dtype(example.dtype).kind != "float" or not delta.size:
        return False
    with np.errstate(invalid="ignore"):
        wide = delta.astype(np.float64).reshape(-1)
    finite = wide[np.isfinite(wide)]
    return bool((finite != np.trunc(finite)).any())


def sixteen_bit_accumulation_differs(example: Example) -> bool:
    """Range-27 with float16 or bfloat16 T whose values, computed in T itself (no stash type), match
    none of the readings in the stash type: `x + 1 == x` for large x, what the stash type avoids."""
    t = dtype(example.dtype)
    if t.name not in SIXTEEN_BIT or example.version.since_version < 27 or not _valid_scalars(example):
        return False
    expected = REFERENCE.expected(example, bodies=False)
    if not expected.is_valid:
        return False
    in_t = range_readings(example, t)
    if isinstance(in_t, Invalid):
        return False
    return any(not any(_same(reading, allowed) for allowed in expected.readings) for reading in in_t[0])


def bounds_beyond_int32(example: Example) -> bool:
    """A finite start, limit or delta of magnitude 2**31 or more (any T): a runtime that computes the
    output's length with 32-bit integer dims wraps it."""
    for name in ("start", "limit", "delta"):
        array = example.inputs[name]
        if not array.size:
            continue
        if array.dtype.kind in "iu":
            if any(abs(int(v)) >= 2**31 for v in array.reshape(-1).tolist()):
                return True
            continue
        with np.errstate(invalid="ignore"):
            wide = array.astype(np.float64).reshape(-1)
        if bool((np.isfinite(wide) & (np.abs(wide) >= 2.0**31)).any()):
            return True
    return False


def stash_type_given(example: Example) -> bool:
    """Range-27's stash_type written on the node (any value, for any T)."""
    return "stash_type" in example.attributes


REFERENCE = OpReference(
    op="Range",
    dtype_param="T",
    data_inputs=(),
    semantics=(Range11, Range27),
    output_elements_from=largest_count,
    rules=("input-not-scalar", "delta-zero", "count-infinite"),
    body_in_readings=True,
    traits={"delta-zero": delta_zero, "one-element-not-scalar": one_element_not_scalar,
            "count-depends-on-precision": count_depends_on_precision, "difference-beyond-type": difference_beyond_type,
            "values-depend-on-precision": values_depend_on_precision, "non-finite-input": non_finite_input,
            "empty-range": empty_range, "negative-delta": negative_delta, "stash-type-given": stash_type_given,
            "count-from-doubles-differs": count_from_doubles_differs, "quotient-beyond-int64": quotient_beyond_int64,
            "stash-type-16-bit": stash_type_16_bit, "fractional-delta": fractional_delta,
            "quotient-not-integer": quotient_not_integer,
            "sixteen-bit-accumulation-differs": sixteen_bit_accumulation_differs, "bounds-beyond-int32": bounds_beyond_int32},
)
