"""Reference for QuantizeLinear and DequantizeLinear (10, 13, 19, 21, 23, 24, 25, 28).

QuantizeLinear: `y = saturate((x / y_scale) + y_zero_point)`, "For (x / y_scale), it rounds to the
nearest even". DequantizeLinear: `y = (x - x_zero_point) * x_scale`. The output type is a type
parameter of the case's binding (T2, or T3 from version 23), and the case must say it as the text
lets it: QuantizeLinear through `y_zero_point`'s type, `output_dtype` (21+) or neither ("If neither
`output_dtype` nor `y_zero_point` are supplied, output data type is uint8"); DequantizeLinear
through `x_scale`'s type or `output_dtype` (23+). A case whose attributes name another type than its
binding is a mistake in the case (ValueError), as Cast's `to` is.

Granularity comes from the scale's shape: a scalar (rank 0) is per-tensor ("`y_scale` is a scalar");
a 1-D scale is per-axis, whatever its length ("The scale must be a 1-D tensor, with the length of
the quantization axis"): a scale of shape [1] on an axis longer than 1 is an invalid per-axis
scale, not a per-tensor one; a scale of the input's rank with `block_size` > 0 is blocked
(`ceil(Di/B)` scales along the axis, the last block shorter when B does not divide Di). Where an
axis attribute's text says "When the rank of the input is 1, per-tensor quantization is applied,
rendering the axis unnecessary", a rank-1 input takes a one-element scale per tensor, whatever
`block_size` says (the sentence wins over the blocked and per-axis shape rules, which a runtime
may apply instead and reject the scale by), and a longer 1-D scale along its only axis whatever
`axis` says; a runtime may reject an `axis` out of range there.

The division's precision. Versions 23 and later: "The type of `y_scale` determines the precision
of the division operation between `x` and `y_scale`, unless the `precision` attribute is
specified". conform reads "the precision of the division" as IEEE division in that type: `x` and
`y_scale` converted to it (each rounded to nearest even), their quotient rounded once to it, then
rounded half to even to an integer (or converted to the float target as Cast converts). Versions
before 23 name no precision: x and y_scale share one type (T1, or float for 10 and 13), which is
taken as the precision. The text leaves open whether a wider division also conforms (the precision
as a floor), so these readings are allowed beside conform's: the exact quotient, and the quotient
in float32 (what onnxruntime's MLAS does for every input type: it converts to float and divides,
`MlasDivideFloat32x4`). A multiplication by the reciprocal of the scale is not `x / y_scale` (it
rounds twice) and is no reading: a runtime that does it fails where the results differ. An int32
precision (an int32 scale) is integer precision: the exact quotient rounded half to even. A
float8e8m0 scale is a power of two: the division is exact.

DequantizeLinear's multiplication: "The output type also determines the precision of the
multiplication operation" (23+; before, the output type is the scale's). conform's reading: the
exact product `(x - x_zero_point) * x_scale` rounded once to the output type. The others allowed:
the scale converted to the output type first; the difference converted to the output type first
(an int32 or int16 `x` rounds there); everything in float32, rounded to the output type at the end.

What the text leaves undefined: NaN into an integer target (conform: the lowest value, MLAS's; the
zero point and the highest are readings, and a last one takes any value there: `base.freed`), NaN into float4e2m1/float6 (as Cast), a zero scale
(IEEE division). Drawn cases keep them out. DequantizeLinear of int32 with a zero point: "there's
no zero point (zero point is supposed to be 0)": a nonzero one is invalid, a zero one a runtime may
reject.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import NamedTuple

import ml_dtypes
import numpy as np

from ..case import Example
from ..dtypes import DType, dtype, from_elem_type, from_numpy
from . import conversion as cv
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, freed, readings

PER_TENSOR, PER_AXIS, BLOCKED = "per-tensor", "per-axis", "blocked"
FLOAT32 = "float"
RANK_ONE_SENTENCE = "When the rank of the input is 1"
# Readings of the division (QuantizeLinear) and the multiplication (DequantizeLinear).
IN_PRECISION, EXACT, IN_FLOAT32 = "in precision", "exact", "in float32"
SCALE_FIRST, DIFFERENCE_FIRST = "scale first", "difference first"
NAN_FILLS = ("lowest", "zero point", "highest")
THROUGH_INT32 = "non-finite"  # a reading: NaN and +-inf give the lowest value (converted through int32 first)


# --- granularity ---

@dataclass(frozen=True)
class Granularity:
    """How the scale's elements map onto x's: per tensor, along `axis`, or in blocks of `block`."""

    kind: str
    axis: int = 0
    block: int = 0


def _doc(example: Example, attribute: str) -> str:
    return _attribute_text(example.op, example.version.since_version, attribute)


@cache
def _attribute_text(op: str, since: int, attribute: str) -> str:
    """An attribute's description in onnx.defs (asked for every per-axis case: read once)."""
    import onnx.defs

    found = onnx.defs.get_schema(op, since).attributes.get(attribute)
    return found.description if found is not None else ""


def _invalid(example: Example, rule: str, sentence: str) -> Invalid:
    return Invalid(rule, f"{example.version.label}: {sentence}")


def granularity(example: Example, x: np.ndarray, scale: np.ndarray) -> Granularity | Invalid:
    """The granularity the scale's shape says, or the rule its shape (with `axis`, `block_size`)
    breaks."""
    since = example.version.since_version
    if scale.ndim == 0:
        return Granularity(PER_TENSOR)
    if since < 13:
        return _invalid(example, "scale-rank", "'x_scale' and 'x_zero_point' are both scalars" if example.op == "DequantizeLinear"
                        else "y_scale: It's a scalar, which means a per-tensor/layer quantization.")
    block = int(example.attributes.get("block_size", 0) or 0)
    rank = x.ndim
    axis = int(example.attributes.get("axis", 1))
    if _rank_one(example, x):
        axis = 0  # "per-tensor quantization is applied, rendering the axis unnecessary"
        if scale.ndim == 1 and scale.size == 1:
            return Granularity(PER_TENSOR)  # the sentence wins over the blocked and per-axis shape rules
    if block > 0 and scale.ndim == rank:
        return _blocked(example, x, scale, axis, block)
    if scale.ndim != 1:
        return _invalid(example, "scale-rank", "The scale factor and zero point must have the same shape, determining the "
                        "quantization granularity: a scalar for per-tensor, a 1-D tensor for per-axis, or the input's rank "
                        "for blocked quantization (with `block_size`).")
    if not -rank <= axis < rank:
        return _invalid(example, "axis-out-of-range", "axis: Accepted range is [-r, r-1] where r = rank(input).")
    axis %= rank
    if scale.shape[0] != x.shape[axis]:
        return _invalid(example, "scale-shape", "Per-axis quantization: The scale must be a 1-D tensor, with the length of "
                        "the quantization axis. For an input shape (D0, ..., Di, ..., Dn) and axis=i, y_scale is a 1-D "
                        "tensor of length Di.")
    return Granularity(PER_AXIS, axis)


def _rank_one(example: Example, x: np.ndarray) -> bool:
    """A rank-1 x in a version whose `axis` text says "When the rank of the input is 1, per-tensor
    quantization is applied, rendering the axis unnecessary" (QuantizeLinear 21+, DequantizeLinear-19)."""
    return x.ndim == 1 and RANK_ONE_SENTENCE in _doc(example, "axis")


RANK_ONE_PER_TENSOR = ("a rank-1 x with a one-element scale is per-tensor by the axis text ('When the rank of the input "
                       "is 1, per-tensor quantization is applied'); the granularity list reads a 1-D scale as per-axis, "
                       "or with block_size as blocked, whose shape rule it breaks (or whose block_size goes unused)")


def _rank_one_per_tensor(example: Example, x: np.ndarray, scale: np.ndarray) -> str | None:
    """Why a runtime may reject a rank-1 x's one-element scale that the text makes per-tensor: the
    granularity list reads the same scale as per-axis or blocked, invalid there unless x has one
    element and no block_size is given."""
    if not _rank_one(example, x) or scale.ndim != 1 or scale.size != 1:
        return None
    block = int(example.attributes.get("block_size", 0) or 0)
    return RANK_ONE_PER_TENSOR if block > 0 or x.shape[0] != 1 else None


def _blocked(example: Example, x: np.ndarray, scale: np.ndarray, axis: int, block: int) -> Granularity | Invalid:
    rank = x.ndim
    if not -rank <= axis < rank:
        return _invalid(example, "axis-out-of-range", "axis: Accepted range is [-r, r-1] where r = rank(input).")
    axis %= rank
    if any(s != d for k, (s, d) in enumerate(zip(scale.shape, x.shape)) if k != axis):
        return _invalid(example, "scale-shape", "Blocked quantization: The scale's shape is identical to the input's shape, "
                        "except for one dimension, in which blocking is performed.")
    if -(-x.shape[axis] // block) != scale.shape[axis]:
        return _invalid(example, "block-size-range", "block_size: Given x shape (D0, ..., Di, ..., Dn), y_scale shape "
                        "(S0, ... Si, ...Sn) and axis=i, the accepted range is [ceil(Di/Si), ceil(Di/(Si-1))-1]")
    return Granularity(BLOCKED, axis, block)


def spread(parameter: np.ndarray, x_shape: tuple[int, ...], found: Granularity) -> np.ndarray:
    """A scale or zero point repeated onto every element of x, as its granularity says."""
    if found.kind == PER_TENSOR:
        return np.broadcast_to(parameter.reshape(()), x_shape)
    if found.kind == PER_AXIS:
        shape = [1] * len(x_shape)
        shape[found.axis] = x_shape[found.axis]
        return np.broadcast_to(parameter.reshape(shape), x_shape)
    repeated = np.repeat(parameter, found.block, axis=found.axis)
    return np.take(repeated, np.arange(x_shape[found.axis]), axis=found.axis)


def check_shapes(example: Example, x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None) -> Granularity | Invalid:
    """The rules every version shares: block_size's sign, the zero point's shape, the granularity."""
    block = example.attributes.get("block_size")
    if block is not None and int(block) < 0:
        return _invalid(example, "block-size-range", "block_size: The block size is a positive integer.")
    if zero_point is not None and zero_point.shape != scale.shape:
        return _invalid(example, "zero-point-shape", "The scale factor and zero point must have the same shape "
                        "(y_zero_point: Shape must match y_scale).")
    return granularity(example, x, scale)


# --- exact arithmetic ---

def _exact(array: np.ndarray) -> list:
    with np.errstate(all="ignore"):  # a signalling NaN widened is still a NaN
        return cv.exact_values(np.ascontiguousarray(array))


def to_precision(values: list, precision: DType | None) -> list:
    """Exact values rounded once into a float type, back as exact values (None: left exact)."""
    if precision is None or precision.kind != "float" or precision.name == "double":
        return values
    return cv.exact_values(cv.exact_to_float(values, precision, saturate=False))


def _is_special(value) -> bool:
    return isinstance(value, float)


def divide(a, b, zero_sign: bool):
    """a / b exactly (Fractions), IEEE where either is special or the quotient is 0 (`zero_sign`
    carries the sign IEEE would give a zero quotient)."""
    if _is_special(a) or _is_special(b) or b == 0:
        with np.errstate(all="ignore"):
            return float(np.float64(float(a)) / np.float64(float(b)))
    if a == 0:
        return -0.0 if zero_sign else 0.0
    return Fraction(a) / Fraction(b)


def multiply(a, b, zero_sign: bool):
    if _is_special(a) or _is_special(b) or a == 0 or b == 0:
        with np.errstate(all="ignore"):
            product = float(np.float64(float(a)) * np.float64(float(b)))
        return -0.0 if product == 0 and zero_sign else product
    return Fraction(a) * Fraction(b)


def _negative(array: np.ndarray) -> list[bool]:
    with np.errstate(all="ignore"):
        wide = array.astype(np.float64) if array.dtype.kind not in "iu" else array.astype(np.int64)
    return [bool(v) for v in np.signbit(wide).reshape(-1).tolist()]


# --- QuantizeLinear ---

def output_dtype_attribute(example: Example) -> DType | None:
    value = example.attributes.get("output_dtype")
    if value is None or int(np.asarray(value).reshape(-1)[0]) == 0:
        return None
    return from_elem_type(int(np.asarray(value).reshape(-1)[0]))


def quantize_target(example: Example) -> DType | Invalid:
    """The output type the case's inputs and attributes say (or the rule they break)."""
    zero_point = example.inputs.get("y_zero_point")
    named = output_dtype_attribute(example)
    if zero_point is not None:
        own = from_numpy(zero_point.dtype)
        if named is not None and named.name != own.name:
            return _invalid(example, "output-dtype-mismatch", "output_dtype: If both `output_dtype` and `y_zero_point` "
                            "are specified, `output_dtype` must be `T2`.")
        return own
    return named if named is not None else dtype("uint8")


def division_precision(example: Example, scale_type: DType) -> DType | None:
    """The type whose precision the division has (None: exact)."""
    value = example.attributes.get("precision")
    if value is not None and int(value) != 0:
        return from_elem_type(int(value))
    if scale_type.name == cv.E8M0 or scale_type.kind != "float":
        return None  # a power of two divides exactly; an int32 precision is the integer rounding itself
    return scale_type


def quotients(x: np.ndarray, scale: np.ndarray, precision: DType | None, how: str) -> list:
    """x / scale per element as one reading computes it (exact values or IEEE specials)."""
    signs = [a != b for a, b in zip(_negative(x), _negative(scale))]
    xs, ss = _exact(x), _exact(scale)
    if how == IN_PRECISION and precision is not None:
        xs, ss = to_precision(xs, precision), to_precision(ss, precision)
    elif how == IN_FLOAT32:
        precision = dtype(FLOAT32)
        xs, ss = to_precision(xs, precision), to_precision(ss, precision)
    exact = [divide(a, b, s) for a, b, s in zip(xs, ss, signs)]
    return exact if how == EXACT or precision is None else to_precision(exact, precision)


def to_integers(values: list, zero_points: list, target: DType, nan_fill: str) -> list[int]:
    found = []
    for q, zp in zip(values, zero_points):
        if isinstance(q, float) and math.isnan(q):
            found.append({"lowest": target.lowest, "highest": target.max, "zero point": zp}.get(nan_fill, target.lowest))
            continue
        if isinstance(q, float) and math.isinf(q):
            found.append(target.max if q > 0 and nan_fill != THROUGH_INT32 else target.lowest)
            continue
        found.append(min(max(round(Fraction(q)) + zp, target.lowest), target.max))  # round(): half to even
    return found


def to_floats(values: list, zero_points: list, target: DType, saturate: bool, keep_negative_zero: bool) -> np.ndarray:
    summed = []
    for q, zp in zip(values, zero_points):
        if _is_special(q) or _is_special(zp):
            with np.errstate(all="ignore"):
                total = float(np.float64(float(q)) + np.float64(float(zp)))
            if keep_negative_zero and q == 0 and zp == 0 and math.copysign(1, float(q)) < 0:
                total = -0.0
            summed.append(total)
        else:
            summed.append(Fraction(q) + Fraction(zp))
    return cv.exact_to_float(summed, target, saturate)


@dataclass(frozen=True)
class QuantizeReading:
    label: str
    division: str = IN_PRECISION
    nan_fill: str = NAN_FILLS[0]
    keep_negative_zero: bool = False


def quantize_readings(target: DType, precision: DType | None, x: np.ndarray) -> list[QuantizeReading]:
    found = [QuantizeReading("spec: quotient rounded to the division's precision")]
    if precision is not None:
        found.append(QuantizeReading("exact quotient (a division wider than its precision)", EXACT))
    if precision is not None and precision.name != FLOAT32:
        found.append(QuantizeReading("quotient in float32 (x and scale converted to float)", IN_FLOAT32))
    if target.kind != "float":
        found += [QuantizeReading(f"NaN (undefined) gives the {fill}", nan_fill=fill) for fill in NAN_FILLS[1:]]
        with np.errstate(all="ignore"):
            undefined = x.dtype.kind not in "iu" and not np.isfinite(x.astype(np.float64)).all()
        if undefined:  # a NaN or inf x; an infinite quotient of finite values saturates
            found.append(QuantizeReading("NaN and +-inf (undefined) give the lowest value (through int32)",
                                         nan_fill=THROUGH_INT32))
    else:
        found.append(QuantizeReading("-0 quotient kept (zero point not added as +0)", keep_negative_zero=True))
    return found


def quantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, target: DType, saturate: bool,
             precision: DType | None, reading: QuantizeReading, shared: dict | None = None) -> np.ndarray:
    """y for elements already spread (scale and zero point of x's shape); `shared` keeps each
    division's quotients for the other readings of the same case."""
    q = shared.get(reading.division) if shared is not None else None
    if q is None:
        q = quotients(x, scale, precision, reading.division)
        if shared is not None:
            shared[reading.division] = q
    zps = _exact(zero_point) if zero_point is not None else [0] * len(q)
    if target.kind in ("int", "uint"):
        return cv.pack_integers(to_integers(q, zps, target, reading.nan_fill), target).reshape(x.shape)
    return to_floats(q, zps, target, saturate, reading.keep_negative_zero).reshape(x.shape)


class _QuantizeSemantics(VersionSemantics):
    """QuantizeLinear: every version shares one computation; what differs is read from the case and
    onnx.defs (types, `axis`, `saturate`, `block_size`, `output_dtype`, `precision`)."""

    since = 10

    def expected(self, example: Example) -> Expected:
        x, scale, zero_point = example.inputs["x"], example.inputs["y_scale"], example.inputs.get("y_zero_point")
        target = quantize_target(example)
        if isinstance(target, Invalid):
            return Expected(invalid=target)
        _check_binding(example)
        found = check_shapes(example, x, scale, zero_point)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        scale_type = from_numpy(scale.dtype)
        precision = division_precision(example, scale_type)
        spread_scale = spread(scale, x.shape, found)
        spread_zero = None if zero_point is None else spread(zero_point, x.shape, found)
        saturate = bool(example.attributes.get("saturate", 1))
        shared: dict = {}  # readings differing only after the division share its quotients (the reference: 8.4 -> 6.2 CPU s)
        options = [Reading((quantize(x, spread_scale, spread_zero, target, saturate, precision, r, shared),), r.label)
                   for r in quantize_readings(target, precision, x)]
        if target.kind != "float" and x.dtype.kind not in "iu":
            undefined = np.isnan(x.astype(np.float64))  # the text says nothing of NaN into an integer
            if undefined.any():
                options += freed(options, undefined)
        return readings(options, "readings the text leaves open: " + "; ".join(o.label for o in options),
                        may_reject=_rank_one_axis(example, x, scale))


def _rank_one_axis(example: Example, x: np.ndarray, scale: np.ndarray) -> str | None:
    """Why a runtime may reject a rank-1 x the text makes valid: an `axis` out of its range, a
    one-element scale (`_rank_one_per_tensor`)."""
    reasons = [_rank_one_per_tensor(example, x, scale)]
    axis = int(example.attributes.get("axis", 1))
    if x.ndim == 1 and scale.ndim == 1 and not -1 <= axis < 1:
        reasons.append("axis is out of range for a rank-1 input, where the text says the axis is unnecessary")
    return "; ".join(filter(None, reasons)) or None


class QuantizeLinear10(_QuantizeSemantics):
    since = 10


# --- DequantizeLinear ---

def dequantize_target(example: Example, scale_type: DType) -> DType:
    named = output_dtype_attribute(example)
    return named if named is not None else scale_type


@dataclass(frozen=True)
class DequantizeReading:
    label: str
    how: str = "spec"


def dequantize_readings(target: DType) -> list[DequantizeReading]:
    found = [DequantizeReading("spec: exact product rounded once to the output type"),
             DequantizeReading("scale converted to the output type first", SCALE_FIRST),
             DequantizeReading("difference and scale converted to the output type first", DIFFERENCE_FIRST)]
    if target.name != FLOAT32:
        found.append(DequantizeReading("computed in float32, rounded to the output type", IN_FLOAT32))
    return found


def differences(x: np.ndarray, zero_point: np.ndarray | None) -> tuple[list, list[bool]]:
    """x - zero point per element, exactly, with the sign IEEE gives a zero difference."""
    source = from_numpy(x.dtype)
    if source.kind == "float":
        with np.errstate(all="ignore"):
            wide = x.astype(np.float64) - (0.0 if zero_point is None else zero_point.astype(np.float64))
        return cv.exact_values(wide), [bool(v) for v in np.signbit(wide).reshape(-1).tolist()]
    xs = _exact(x)
    zps = _exact(zero_point) if zero_point is not None else [0] * len(xs)
    return [a - b for a, b in zip(xs, zps)], [False] * len(xs)


def dequantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, target: DType,
               reading: DequantizeReading) -> np.ndarray:
    diffs, diff_negative = differences(x, zero_point)
    scales = _exact(scale)
    signs = [a != b for a, b in zip(diff_negative, _negative(scale))]
    work = target
    if reading.how == IN_FLOAT32:
        work = dtype(FLOAT32)
    if reading.how in (SCALE_FIRST, DIFFERENCE_FIRST, IN_FLOAT32):
        scales = to_precision(scales, work)
    if reading.how in (DIFFERENCE_FIRST, IN_FLOAT32):
        diffs = to_precision(diffs, work)
    products = [multiply(a, b, s) for a, b, s in zip(diffs, scales, signs)]
    if reading.how == IN_FLOAT32:
        products = to_precision(products, work)
    return cv.exact_to_float(products, target).reshape(x.shape)


class _DequantizeSemantics(VersionSemantics):
    """DequantizeLinear: every version shares one computation; the output type is float (10, 13),
    the scale's (19, 21), or `output_dtype`'s, else the scale's (23+)."""

    since = 10

    def expected(self, example: Example) -> Expected:
        x, scale, zero_point = example.inputs["x"], example.inputs["x_scale"], example.inputs.get("x_zero_point")
        scale_type = from_numpy(scale.dtype)
        target = dequantize_target(example, scale_type)
        _check_binding(example)
        found = check_shapes(example, x, scale, zero_point)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        may_reject = _rank_one_axis(example, x, scale)
        if zero_point is not None and from_numpy(x.dtype).name == "int32":
            if np.any(zero_point != 0):
                return _invalid_expected(example, "int32-zero-point", "In the case of dequantizing `int32`, there's no "
                                         "zero point (zero point is supposed to be 0).")
            may_reject = "an int32 input with a zero point: \"In the case of dequantizing int32, there's no zero point\""
        spread_scale = spread(scale, x.shape, found)
        spread_zero = None if zero_point is None else spread(zero_point, x.shape, found)
        options = [Reading((dequantize(x, spread_scale, spread_zero, target, r),), r.label) for r in dequantize_readings(target)]
        return readings(options, "readings of the multiplication's precision: " + "; ".join(o.label for o in options),
                        may_reject=may_reject)


def _invalid_expected(example: Example, rule: str, sentence: str) -> Expected:
    return Expected(invalid=_invalid(example, rule, sentence))


class DequantizeLinear10(_DequantizeSemantics):
    since = 10


# --- named causes, for expectations ---

def _is_quantize(example: Example) -> bool:
    return example.op == "QuantizeLinear"


def _parts(example: Example) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    if _is_quantize(example):
        return example.inputs["x"], example.inputs["y_scale"], example.inputs.get("y_zero_point")
    return example.inputs["x"], example.inputs["x_scale"], example.inputs.get("x_zero_point")


def _granularity(example: Example) -> Granularity | None:
    x, scale, zero_point = _parts(example)
    found = check_shapes(example, x, scale, zero_point)
    return None if isinstance(found, Invalid) else found


def per_axis(example: Example) -> bool:
    found = _granularity(example)
    return found is not None and found.kind == PER_AXIS


def blocked(example: Example) -> bool:
    found = _granularity(example)
    return found is not None and found.kind == BLOCKED


def last_block_shorter(example: Example) -> bool:
    """Blocked, with B not dividing the axis: the last block has fewer than B elements."""
    found = _granularity(example)
    return found is not None and found.kind == BLOCKED and example.inputs["x"].shape[found.axis] % found.block != 0


def zero_point_absent(example: Example) -> bool:
    return _parts(example)[2] is None


def negative_axis(example: Example) -> bool:
    """A negative `axis` on a per-axis or blocked scale."""
    return int(example.attributes.get("axis", 1)) < 0 and _parts(example)[1].ndim > 0


def output_dtype_given(example: Example) -> bool:
    return output_dtype_attribute(example) is not None


def output_type_from_attribute(example: Example) -> bool:
    """QuantizeLinear with no y_zero_point and an output_dtype other than uint8: only the
    attribute says the output type (else uint8)."""
    given = output_dtype_attribute(example)
    return _is_quantize(example) and _parts(example)[2] is None and given is not None and given.name != "uint8"


def scale_float8e8m0(example: Example) -> bool:
    return from_numpy(_parts(example)[1].dtype).name == cv.E8M0


class _Quotients(NamedTuple):
    """QuantizeLinear's quotients x / y_scale, one an element (computed `how`), the zero point
    spread to each, the output type, and the granularity that spread them."""

    quotients: list
    zero_points: list
    target: DType
    granularity: Granularity


def _spread_quotients(example: Example, how: str) -> _Quotients | None:
    x, scale, zero_point = _parts(example)
    found = _granularity(example)
    target = quantize_target(example)
    if found is None or isinstance(target, Invalid):
        return None
    precision = division_precision(example, from_numpy(scale.dtype))
    q = quotients(x, spread(scale, x.shape, found), precision, how)
    zps = _exact(spread(zero_point, x.shape, found)) if zero_point is not None else [0] * len(q)
    return _Quotients(q, zps, target, found)


def ties(example: Example) -> bool:
    """QuantizeLinear: a quotient exactly halfway between two integers, for an integer target, as
    one of the readings computes it (in the division's precision, exactly, or in float32)."""
    if not _is_quantize(example):
        return False
    for how in (IN_PRECISION, EXACT, IN_FLOAT32):
        found = _spread_quotients(example, how)
        if found is None or found.target.kind == "float":
            return False
        if any(isinstance(q, Fraction) and q.denominator == 2 for q in found.quotients):
            return True
    return False


def saturates(example: Example) -> bool:
    """An element beyond the output type's range: QuantizeLinear's quotient plus zero point, or
    DequantizeLinear's product."""
    if not _is_quantize(example):
        return _dequantize_overflows(example)
    found = _spread_quotients(example, IN_PRECISION)
    if found is None:
        return False
    q, zps, target, _ = found
    for value, zp in zip(q, zps):
        if isinstance(value, float):
            if math.isinf(value):
                return True
            continue
        total = (round(value) + zp) if target.kind != "float" else value + Fraction(zp)
        if not target.lowest <= total <= target.max:
            return True
    return False


def _dequantize_overflows(example: Example) -> bool:
    x, scale, zero_point = _parts(example)
    found = _granularity(example)
    if found is None:
        return False
    target = dequantize_target(example, from_numpy(scale.dtype))
    diffs, _ = differences(x, None if zero_point is None else spread(zero_point, x.shape, found))
    scales = _exact(spread(scale, x.shape, found))
    return any(not _is_special(a) and not _is_special(b) and abs(Fraction(a) * Fraction(b)) > Fraction(float(target.max))
               for a, b in zip(diffs, scales))


def reciprocal_differs(example: Example) -> bool:
    """QuantizeLinear: x * (1 / y_scale), each rounded to float32, gives another result than
    conform's division (a runtime that multiplies by the reciprocal fails there)."""
    if not _is_quantize(example):
        return False
    found = _spread_quotients(example, IN_FLOAT32)
    if found is None or found.target.kind == "float":
        return False
    q, zps, target, granular = found
    x, scale, _ = _parts(example)
    f32 = dtype(FLOAT32)
    xs = to_precision(_exact(x), f32)
    inverse = to_precision([divide(1, s, False) for s in to_precision(_exact(spread(scale, x.shape, granular)), f32)], f32)
    products = to_precision([multiply(a, b, False) for a, b in zip(xs, inverse)], f32)
    return to_integers(products, zps, target, NAN_FILLS[0]) != to_integers(q, zps, target, NAN_FILLS[0])


def range_quotient_differs(example: Example) -> bool:
    """QuantizeLinear to an integer type, computed as a FakeQuantize whose range the scale and zero
    point give, each step in float32: low = (lowest - zp) * s, high = (max - zp) * s, y = lowest +
    round((x - low) / (high - low) * (max - lowest)). Where that y is another than the text's (the
    quotient rounded in the division's precision), a runtime that builds the range fails there."""
    if not _is_quantize(example):
        return False
    found = _spread_quotients(example, IN_PRECISION)
    if found is None or found.target.kind == "float":
        return False
    q, zps, target, granular = found
    x, scale, _ = _parts(example)
    f32 = np.float32
    with np.errstate(all="ignore"):
        xs = x.astype(f32).reshape(-1)
        scales = spread(scale, x.shape, granular).astype(f32).reshape(-1)
        points = np.asarray(zps, dtype=np.float64).astype(f32)
        low = (f32(target.lowest) - points) * scales
        high = (f32(target.max) - points) * scales
        levels = (xs - low) / (high - low) * f32(target.max - target.lowest)
        ranged = np.clip(np.rint(levels), 0, target.max - target.lowest)
    text = to_integers(q, zps, target, NAN_FILLS[0])
    return any(np.isfinite(v) and int(v) + target.lowest != t for v, t in zip(ranged, text))


def quotient_beyond_int32(example: Example) -> bool:
    """QuantizeLinear to an integer type: a quotient (in float32) of magnitude 2**31 or more, or
    infinite, which a runtime converting it to int32 before saturating gets wrong."""
    if not _is_quantize(example):
        return False
    found = _spread_quotients(example, IN_FLOAT32)
    if found is None or found.target.kind == "float":
        return False
    return any(not (isinstance(q, float) and math.isnan(q)) and abs(q) >= 2**31 for q in found.quotients)


def float_zero_point_not_plus_zero(example: Example) -> bool:
    """A zero point of a float type (float8, float4, float6) with an element other than +0 (a
    nonzero one, or -0): "usually not used ... but the quantization formula remains the same"."""
    zero_point = _parts(example)[2]
    if zero_point is None or from_numpy(zero_point.dtype).kind != "float":
        return False
    with np.errstate(all="ignore"):
        wide = zero_point.astype(np.float64)
    return bool(np.any((wide != 0) | np.signbit(wide)))


def output_float16(example: Example) -> bool:
    """DequantizeLinear with a float16 output."""
    return not _is_quantize(example) and example.version.output_dtype(0, example.types) == "float16"


def x_type_differs_from_scale(example: Example) -> bool:
    """QuantizeLinear-23 and later: x and y_scale of different types ("`x` and `y_scale` are
    allowed to have different types")."""
    x, scale, _ = _parts(example)
    return _is_quantize(example) and x.dtype != scale.dtype


def one_element_scale(example: Example) -> bool:
    """A scale that is not a scalar but holds one element (shape [1], [1, 1]...): per-axis or
    blocked by the text, per-tensor in runtimes that test the element count."""
    scale = _parts(example)[1]
    return scale.ndim > 0 and scale.size == 1


def e5m2_overflow(example: Example) -> bool:
    """QuantizeLinear to float8e5m2 with saturate=0: a finite quotient plus zero point at or beyond
    61440, which rounds past FLT_MAX (the table: +-Inf), as Cast's trait of that name."""
    if not _is_quantize(example) or bool(example.attributes.get("saturate", 1)):
        return False
    found = _spread_quotients(example, IN_PRECISION)
    if found is None or found.target.name != "float8e5m2":
        return False
    return any(not _is_special(q) and abs(Fraction(q) + Fraction(zp)) >= 61440 for q, zp in zip(found.quotients, found.zero_points))


def blocked_empty(example: Example) -> bool:
    """Blocked quantization of an input with no elements (a zero-size dim beside the blocked axis)."""
    found = _granularity(example)
    return found is not None and found.kind == BLOCKED and example.inputs["x"].size == 0


def per_axis_empty(example: Example) -> bool:
    """Per-axis (de)quantization along an axis of size 0: a scale with no elements."""
    found = _granularity(example)
    return found is not None and found.kind == PER_AXIS and _parts(example)[1].size == 0


def not_float32(example: Example) -> bool:
    """A scale that is not float32, or a QuantizeLinear x that is not: a runtime implementing the
    float32 arithmetic of versions 10 and 13 only refuses the others."""
    x, scale, _ = _parts(example)
    return scale.dtype != np.float32 or (_is_quantize(example) and x.dtype != np.float32)


def float8_zero_point(example: Example) -> bool:
    """QuantizeLinear to a float8 type with a y_zero_point given (the text keeps the formula; a
    runtime that drops the zero point of float8 targets may lose the input too)."""
    _, _, zero_point = _parts(example)
    return _is_quantize(example) and zero_point is not None and from_numpy(zero_point.dtype).name in cv.FLOAT8


def to_float4(example: Example) -> bool:
    """QuantizeLinear to float4e2m1 (23 and later)."""
    return _is_quantize(example) and example.version.output_dtype(0, example.types) == "float4e2m1"


def per_axis_not_last(example: Example) -> bool:
    """Per-axis along an axis other than x's last (a runtime that broadcasts the scale from the
    right, as numpy does, cannot place it)."""
    found = _granularity(example)
    return found is not None and found.kind == PER_AXIS and found.axis != example.inputs["x"].ndim - 1


def negative_float4(example: Example) -> bool:
    """A float4e2m1 x or zero point holding a negative value (its sign bit set)."""
    x, _, zero_point = _parts(example)
    return any(a is not None and a.dtype == ml_dtypes.float4_e2m1fn and bool(np.signbit(a.astype(np.float32)).any())
               for a in (x, zero_point))


def negative_scale(example: Example) -> bool:
    """A scale with a negative element (the text does not ask for a positive scale)."""
    scale = _parts(example)[1]
    with np.errstate(invalid="ignore"):
        return bool((scale.astype(np.float64) < 0).any())


def product_not_bfloat16(example: Example) -> bool:
    """DequantizeLinear to bfloat16 where an exact (x - zero point) * scale is not a bfloat16
    value: what a runtime rounding into bfloat16 by truncation gets one step off."""
    if _is_quantize(example) or example.version.output_dtype(0, example.types) != "bfloat16":
        return False
    x, scale, zero_point = _parts(example)
    found = _granularity(example)
    if found is None:
        return False
    with np.errstate(all="ignore"):
        wide = x.astype(np.float64) - (0.0 if zero_point is None else spread(zero_point, x.shape, found).astype(np.float64))
        product = wide * spread(scale, x.shape, found).astype(np.float64)  # exact wherever it is a bfloat16 value
        narrowed = product.astype(ml_dtypes.bfloat16).astype(np.float64)
    return bool(((narrowed != product) & np.isfinite(product)).any())


def float8_unsaturated_beyond(example: Example) -> bool:
    """QuantizeLinear to a float8 type with saturate=0 and a quotient plus zero point beyond the
    type's largest value (the table: NaN, or +-inf for float8e5m2)."""
    if not _is_quantize(example) or bool(example.attributes.get("saturate", 1)):
        return False
    found = _spread_quotients(example, IN_PRECISION)
    if found is None or found.target.name not in cv.FLOAT8:
        return False
    top = Fraction(float(found.target.max))
    return any(_is_special(q) or abs(Fraction(q) + Fraction(zp)) > top for q, zp in zip(found.quotients, found.zero_points))


def scale_range_overflows(example: Example) -> bool:
    """QuantizeLinear with a scale whose product with the output type's span is beyond float32's
    range: a runtime that turns the quantization into float32 input and output ranges (FakeQuantize)
    overflows where the text divides."""
    x, scale, _ = _parts(example)
    target = quantize_target(example)
    if not _is_quantize(example) or isinstance(target, Invalid):
        return False
    span = float(target.max) - float(target.lowest)
    with np.errstate(all="ignore"):
        return bool((np.abs(scale.astype(np.float64)) * span > float(np.finfo(np.float32).max)).any())


TRAITS = {
    "scale-range-overflows": scale_range_overflows,
    "float8-unsaturated-beyond": float8_unsaturated_beyond,
    "per-axis-not-last": per_axis_not_last,
    "negative-float4": negative_float4,
    "negative-scale": negative_scale,
    "product-not-bfloat16": product_not_bfloat16,
    "not-float32": not_float32,
    "float8-zero-point": float8_zero_point,
    "to-float4": to_float4,
    "blocked-empty": blocked_empty,
    "e5m2-overflow": e5m2_overflow,
    "quotient-beyond-int32": quotient_beyond_int32,
    "float-zero-point-not-plus-zero": float_zero_point_not_plus_zero,
    "output-float16": output_float16,
    "x-type-differs-from-scale": x_type_differs_from_scale,
    "one-element-scale": one_element_scale,
    "per-axis": per_axis,
    "per-axis-empty": per_axis_empty,
    "output-type-from-attribute": output_type_from_attribute,
    "blocked": blocked,
    "last-block-shorter": last_block_shorter,
    "zero-point-absent": zero_point_absent,
    "negative-axis": negative_axis,
    "output-dtype-given": output_dtype_given,
    "scale-float8e8m0": scale_float8e8m0,
    "ties": ties,
    "saturates": saturates,
    "reciprocal-differs": reciprocal_differs,
    "range-quotient-differs": range_quotient_differs,
}

RULES = ("zero-point-shape", "output-dtype-mismatch", "axis-out-of-range", "scale-shape", "scale-rank", "block-size-range",
         "int32-zero-point")


def output_type_problem(example: Example) -> str | None:
    """Where a case's zero point (QuantizeLinear), scale (DequantizeLinear) or `output_dtype` say
    another output type than its binding: a case file's mistake, told at its line."""
    if _is_quantize(example):
        target, what = quantize_target(example), "zero point and output_dtype say"
        if isinstance(target, Invalid):  # output_dtype against the zero point: a rule of the text
            return None
    else:
        target, what = dequantize_target(example, from_numpy(example.inputs["x_scale"].dtype)), "scale and output_dtype say"
    bound = example.version.output_dtype(0, example.types)
    if target.name == bound:
        return None
    return f"the case's {what} {target.name}, but its types bind y to {bound}: write the types that agree"


def _check_binding(example: Example) -> None:
    """Drawn cases and case files (which `output_type_problem` checks as they load) always agree."""
    problem = output_type_problem(example)
    if problem is not None:
        raise ValueError(f"{example.id}: {problem}")


def dequantize_output_dtype(version, binding: dict[str, str]) -> dict:
    """DequantizeLinear-23 and later: `output_dtype` where the binding's y type differs from the
    scale's (the only way the attributes express it)."""
    if version.attribute("output_dtype") is None or binding.get("T3") in (None, binding.get("T2")):
        return {}
    return {"output_dtype": dtype(binding["T3"]).elem_type}


# The zero points stay graph inputs too: onnx's checker refuses a float6 Constant.
QUANTIZE_REFERENCE = OpReference(op="QuantizeLinear", dtype_param="T1", data_inputs=("x", "y_zero_point"),
                                 semantics=(QuantizeLinear10,), traits=TRAITS, rules=RULES,
                                 binding_problem=output_type_problem)
DEQUANTIZE_REFERENCE = OpReference(op="DequantizeLinear", dtype_param="T1", data_inputs=("x", "x_zero_point"),
                                   semantics=(DequantizeLinear10,), traits=TRAITS, rules=RULES,
                                   binding_problem=output_type_problem,
                                   binding_attributes=dequantize_output_dtype)
# What the registry (reference/__init__.py) finds here: the two ops of this module, in this order.
REFERENCES = (QUANTIZE_REFERENCE, DEQUANTIZE_REFERENCE)
