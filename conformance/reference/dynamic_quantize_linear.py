"""Reference for DynamicQuantizeLinear (11): a float32 tensor quantized to uint8 with the scale and
zero point its own range gives.

The text (and its function body, node by node):

    y_scale = (maximum(0, max(x)) - minimum(0, min(x))) / (qmax - qmin)        Sub, Div (float32)
    intermediate_zero_point = qmin - min(x)/y_scale                             Div, Sub
    y_zero_point = cast(round(saturate(intermediate_zero_point)))               Clip, Round, Cast
    y = saturate (round (x / y_scale) + y_zero_point)                           QuantizeLinear

with qmin = 0, qmax = 255 (uint8, "Right now only uint8 is supported"), "rounding to nearest ties to
even". The body divides the adjusted minimum (min(0, min(x))); the prose writes min(x): after the
saturation to [0, 255] both give the same zero point (a positive min(x) gives a negative
intermediate, saturated to 0).

Judging, per output:

- y_scale: the body's Sub and Div are IEEE float32 operations, each correctly rounded, so the text
  fixes it: fl(fl(max − min) / 255). conform also allows the range divided exactly and rounded once
  (a runtime computing in double), the reading QuantizeLinear gives a wider division. A division
  by 255 done as a multiplication by fl(1/255) rounds twice and is no reading (as QuantizeLinear's
  reciprocal is not `x / y_scale`).
- y_zero_point and y: their real values, zp = −min·255/R and x/s = x·255/R (R = max − min of the
  adjusted range, s = R/255), are computed by a runtime through its rounded scale and a float
  division. Where both are exact (R and R/255 float32 values, the quotient a float32 value) the
  result is fixed, ties to even. Elsewhere the computed quotient q̂ satisfies |q̂ − q| ≤ e =
  ((1 + u)^5 − 1)·|q| + 2λ·|q|/s (u = 2^-24: the range, the scale and the quotient, and one
  rounding more for either scale reading; λ = 2^-149 where the scale is subnormal): the judge
  allows every integer that rounds from [q − e, q + e], so both neighbours only where a half-integer
  lies within e. y = saturate(round(x/s) + zp) takes every sum of an allowed quotient and an
  allowed zero point.

What the text leaves undefined, as readings:

- x with no elements: "max(x)" and "min(x)" of no values are not defined (ReduceMin-11 in the body
  gives no value for an empty set): y is empty, y_scale and y_zero_point any value; a runtime may
  reject.
- x all zeros: y_scale = 0 / 255 = 0 exactly; then min(x)/y_scale and x/y_scale are 0/0 = NaN,
  whose cast to uint8 the text does not define: y_zero_point and y any value.
- NaN in x: min and max propagate it (numpy's, the body's Min and Max) and every output is NaN or
  undefined (y_scale NaN); or they skip it (fmin/fmax) and the scale and zero point are those of the
  other elements, the NaN elements of y any value.
- ±inf in x: the body's float32 arithmetic as written: y_scale inf, x/inf = 0, inf/inf = NaN
  (undefined: any value).
- A finite range past float32's max (max(x) − min(x) > 3.4e38): the body's Sub overflows to inf
  (y_scale inf, y and the zero point 0 for finite x); a wider computation gives the finite scale.
  Both are readings.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..case import Example
from ..dtypes import dtype
from . import conversion as cv
from .base import Expected, OpReference, Reading, VersionSemantics, readings

QMIN, QMAX = 0, 255
U = 2.0 ** -24
TINY = Fraction(2) ** -149
F32 = dtype("float")
EMPTY = ("max(x) and min(x) of no values: the text (and ReduceMin-11, ReduceMax-11 in the body) gives them no value, so "
         "y_scale and y_zero_point may be anything (y is empty)")
ALL_ZERO = ("x all zeros: y_scale = 0 / 255 = 0, then min(x)/y_scale and x/y_scale are 0/0 = NaN, which the text does "
            "not say how to cast to uint8: y_zero_point and y may be anything")
NAN_READINGS = "NaN in x: max(x) and min(x) propagate it, or skip it (fmin/fmax); the text says neither"
OVERFLOW = "a range max(x) - min(x) past float32's max: the body's Sub overflows to inf, a wider computation does not"
ONCE_ROUNDED = "y_scale = (max - min) / 255 computed exactly, rounded once to float32"
BODY_STEPS = "y_scale by the body's float32 Sub and Div"


def _f32(value) -> np.float32:
    """An exact value (int, Fraction) rounded once to float32."""
    return np.float32(cv.exact_to_float([value], F32, saturate=False)[0])


def _round_interval(low: Fraction, high: Fraction) -> tuple[int, int]:
    return round(low), round(high)


def _clip(value: int) -> int:
    return min(max(value, QMIN), QMAX)


def _is_f32(value: Fraction) -> bool:
    rounded = _f32(value)
    return bool(np.isfinite(rounded)) and Fraction(float(rounded)) == value


def _quotient_error(q: Fraction, exact_scale: bool, s: Fraction) -> Fraction:
    """How far a runtime's float quotient may lie from q (see the module's docstring)."""
    if exact_scale:
        return Fraction(0) if _is_f32(q) else abs(q) * Fraction(U)
    relative = Fraction((1 + U) ** 5 - 1)
    return relative * abs(q) + 2 * TINY * abs(q) / s


def _choices_array(options: list[list], np_dtype, shape: tuple[int, ...]) -> np.ndarray | None:
    layers = max((len(o) for o in options), default=1)
    if layers <= 1:
        return None
    return np.stack([np.array([o[min(j, len(o) - 1)] for o in options], dtype=np_dtype).reshape(shape) for j in range(layers)])


def finite_answer(x: np.ndarray, low: Fraction, high: Fraction, scales: list[np.float32], label: str,
                  undefined: np.ndarray | None = None) -> Reading:
    """The reading for a finite, nonzero range [low, high] (low ≤ 0 ≤ high): y_scale one of
    `scales` (the first the text's), the zero point and y each within its interval; `undefined`
    elements of y any value."""
    r = high - low
    s = r / (QMAX - QMIN)
    exact_scale = _is_f32(r) and _is_f32(s)
    zp_real = QMIN - low / s
    e_zp = _quotient_error(low / s, exact_scale, s)
    z_low, z_high = (_clip(v) for v in _round_interval(zp_real - e_zp, zp_real + e_zp))
    zp = _clip(round(zp_real))
    primary, options = [], []
    values = cv.exact_values(np.ascontiguousarray(x))
    for value in values:
        if not isinstance(value, Fraction) and not isinstance(value, int):
            primary.append(0)
            options.append([0])
            continue
        q = Fraction(value) / s
        e = _quotient_error(q, exact_scale, s)
        q_low, q_high = _round_interval(q - e, q + e)
        primary.append(_clip(round(q) + zp))
        options.append(list(range(_clip(q_low + z_low), _clip(q_high + z_high) + 1)))
    y = np.array(primary, dtype=np.uint8).reshape(x.shape)
    scale = np.array(scales[0], dtype=np.float32)
    scale_options = [[float(v) for v in dict.fromkeys(float(s_) for s_ in scales)]]
    zp_options = [list(range(z_low, z_high + 1))]
    free = undefined if undefined is not None and undefined.any() else None
    return Reading((y, scale, np.array(zp, dtype=np.uint8)), label, free=(free, None, None),
                   choices=(_choices_array(options, np.uint8, x.shape), _choices_array(scale_options, np.float32, ()),
                            _choices_array(zp_options, np.uint8, ())))


def ieee_answer(x: np.ndarray, low: float, high: float, label: str) -> Reading:
    """The body's float32 arithmetic as written, for a range with an infinity (or overflowing):
    NaN quotients (undefined casts) leave their elements any value."""
    with np.errstate(all="ignore"):
        scale = (np.float32(high) - np.float32(low)) / np.float32(QMAX - QMIN)
        intermediate = np.float32(QMIN) - np.float32(low) / scale
        zp_free = bool(np.isnan(intermediate))
        zp = 0 if zp_free else int(np.rint(np.clip(intermediate, QMIN, QMAX)))
        q = x.astype(np.float32) / scale
        y_free = np.asarray(np.isnan(q) | zp_free).reshape(x.shape)
        y = np.asarray(np.clip(np.where(y_free, 0, np.rint(np.where(y_free, 0, q))) + zp, QMIN, QMAX)).astype(np.uint8).reshape(x.shape)
    return Reading((y, np.array(scale, dtype=np.float32), np.array(zp, dtype=np.uint8)), label,
                   free=(y_free if y_free.any() else None, None, np.array(zp_free) if zp_free else None))


def _anything(x: np.ndarray, scale: float, label: str) -> Reading:
    """y_scale `scale` (NaN allowed as itself) and every other output any value."""
    every = np.ones(x.shape, dtype=bool)
    return Reading((np.zeros(x.shape, dtype=np.uint8), np.array(scale, dtype=np.float32), np.array(0, dtype=np.uint8)),
                   label, free=(every if every.any() else None, None, np.array(True)))


def answer(x: np.ndarray, label: str, undefined: np.ndarray | None = None) -> list[Reading]:
    """The readings for x whose NaNs (if any) are already set aside: `x` holds only the values the
    range is taken over, `undefined` where y may be anything."""
    with np.errstate(all="ignore"):
        low = min(0.0, float(x.min())) if x.size else 0.0
        high = max(0.0, float(x.max())) if x.size else 0.0
    if not (math.isfinite(low) and math.isfinite(high)):
        return [ieee_answer(x, low, high, f"{label}the body's float32 arithmetic with an infinite x")]
    if low == 0 and high == 0:
        return [_anything(x, 0.0, f"{label}{ALL_ZERO}")]
    low_e, high_e = Fraction(low), Fraction(high)
    with np.errstate(over="ignore"):
        body_scale = (np.float32(high) - np.float32(low)) / np.float32(QMAX - QMIN)
    once = _f32((high_e - low_e) / (QMAX - QMIN))
    if not np.isfinite(body_scale):
        return [ieee_answer(x, low, high, f"{label}{OVERFLOW}: the body's Sub overflows"),
                finite_answer(x, low_e, high_e, [once], f"{label}{OVERFLOW}: {ONCE_ROUNDED}", undefined)]
    return [finite_answer(x, low_e, high_e, [body_scale, once], f"{label}spec", undefined)]


class DynamicQuantizeLinear11(VersionSemantics):
    """DynamicQuantizeLinear-11: uint8 only; the readings of the module's docstring."""

    since = 11

    def expected(self, example: Example) -> Expected:
        x = example.inputs["x"]
        if x.size == 0:
            empty = Reading((np.zeros(x.shape, dtype=np.uint8), np.array(0.0, dtype=np.float32), np.array(0, dtype=np.uint8)),
                            "no values: y_scale and y_zero_point any value", free=(None, np.array(True), np.array(True)))
            return Expected(readings=(empty,), ambiguity=EMPTY, may_reject=EMPTY)
        nan = np.isnan(x)
        if not nan.any():
            found = answer(x, "")
            return readings(found, OVERFLOW)
        options = [_anything(x, math.nan, "NaN propagates through max(x) and min(x): y_scale NaN, the rest undefined")]
        kept = x[~nan]
        if kept.size:
            skipped = answer(np.where(nan, np.float32(0), x), "NaN skipped by max(x) and min(x); ", undefined=nan)
            # the range of the other elements: 0 put in the NaNs' places changes neither max(0, .) nor min(0, .)
            options += [_with_free(r, nan) for r in skipped]
        else:
            options.append(_anything(x, 0.0, f"NaN skipped by max(x) and min(x): no values left; {ALL_ZERO}"))
        return readings(options, NAN_READINGS)


def _with_free(reading: Reading, undefined: np.ndarray) -> Reading:
    """`reading` with y any value where `undefined` too."""
    first = reading.free[0] if reading.free else None
    mask = undefined if first is None else (first | undefined)
    return Reading(reading.outputs, reading.label, free=(mask, *reading.free[1:]), choices=reading.choices)


# --- traits ---

def _x(example: Example) -> np.ndarray:
    return example.inputs["x"]


def all_zero(example: Example) -> bool:
    """x not empty, with every element ±0 (a zero range: y_scale 0 by the text)."""
    x = _x(example)
    return x.size > 0 and bool(np.all(x == 0))


def zero_range(example: Example) -> bool:
    """x not empty, with every element that is not NaN ±0 (or none such): a zero range, by the text
    or once the NaNs are skipped, where y_scale is 0 / 255 = 0."""
    x = _x(example)
    return x.size > 0 and bool(np.all((x == 0) | np.isnan(x)))


def has_nan(example: Example) -> bool:
    return bool(np.isnan(_x(example)).any())


def has_inf(example: Example) -> bool:
    return bool(np.isinf(_x(example)).any())


def empty(example: Example) -> bool:
    return _x(example).size == 0


def near_boundary(example: Example) -> bool:
    """A quotient or zero point within the float error of a rounding boundary (both allowed)."""
    found = REFERENCE.semantics_for(example.version).expected(example)
    return any(c is not None for r in found.readings for c in r.choices[:1] + r.choices[2:])


def exact_tie(example: Example) -> bool:
    """An element whose x·255/R is exactly halfway between two integers (R the adjusted range)."""
    x = _x(example)
    if not x.size or not np.isfinite(x).all():
        return False
    low, high = Fraction(min(0.0, float(x.min()))), Fraction(max(0.0, float(x.max())))
    if low == high:
        return False
    s = (high - low) / (QMAX - QMIN)
    return any((Fraction(float(v)) / s).denominator == 2 for v in x.reshape(-1).tolist()) or (low / s).denominator == 2


def one_sided(example: Example) -> bool:
    """x all positive or all negative (the range adjusted to include 0)."""
    x = _x(example)
    return x.size > 0 and bool(np.all(x > 0) or np.all(x < 0))


def range_overflows(example: Example) -> bool:
    x = _x(example)
    if not x.size or not np.isfinite(x).all():
        return False
    return float(max(0.0, float(x.max()))) - float(min(0.0, float(x.min()))) > float(np.finfo(np.float32).max)


TRAITS = {"all-zero": all_zero, "zero-range": zero_range, "has-nan": has_nan, "has-inf": has_inf, "empty": empty, "near-boundary": near_boundary,
          "exact-tie": exact_tie, "one-sided": one_sided, "range-overflows": range_overflows}

REFERENCE = OpReference(op="DynamicQuantizeLinear", dtype_param="T1", semantics=(DynamicQuantizeLinear11,),
                        data_inputs=("x",), traits=TRAITS)
