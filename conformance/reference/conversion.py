"""Exact conversions between ONNX element types, as Cast's text defines them (shared with
QuantizeLinear and DequantizeLinear).

Every number is converted from its exact value, rounded once: floats of every width are exact
in float64, integers and decimal strings are exact as Python ints and Fractions. A rounding is
named (`NEAREST_EVEN`, `TOWARD_ZERO`) so the readings the text leaves open can be computed side
by side. What happens beyond a type's range is decided per kind of target:

- float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ): the `saturate` tables of Cast-19 and later;
- float8e8m0: `round_mode` (up, down, nearest with ties up) and `saturate`;
- the other floats with an infinity (float16, bfloat16, float, double): +-inf;
- floats without infinity or NaN (float4e2m1, float6): the text names none; the largest finite
  value of the sign (as `saturate` does for float8) is what conform computes;
- integers: `wrap` discards the higher bits and reinterprets (two's complement).
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np

from ..dtypes import DType

NEAREST_EVEN = "nearest-even"
TOWARD_ZERO = "toward-zero"
FLOAT8 = frozenset({"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"})
E8M0 = "float8e8m0"
E8M0_MAX_EXPONENT = 127
E8M0_MIN_EXPONENT = -127
E8M0_NAN_BITS = 0xFF
ROUND_MODES = ("up", "down", "nearest")


def precision_of(target: DType) -> tuple[int, int]:
    """(significand bits including the implicit one, exponent of the smallest normal)."""
    found = _PRECISIONS.get(target.name)
    if found is None:
        info = ml_dtypes.finfo(target.np_dtype)
        found = _PRECISIONS[target.name] = (info.nmant + 1, info.minexp)
    return found


_PRECISIONS: dict[str, tuple[int, int]] = {}  # by type name: finfo costs ~2 us, asked per element


# --- rounding to a float type's precision (exponent unbounded above) ---

def round_float64(values: np.ndarray, target: DType, rounding: str = NEAREST_EVEN) -> np.ndarray:
    """float64 values rounded once to `target`'s precision and smallest exponent, as float64;
    values beyond the target's range are left for `finish_float` to decide."""
    if target.name == "double":
        return values.astype(np.float64)
    precision, min_exponent = precision_of(target)
    with np.errstate(all="ignore"):
        work = values.astype(np.float64)
        _, exponent = np.frexp(work)
        quantum = np.maximum(exponent - 1, min_exponent) - (precision - 1)
        finite = np.isfinite(work)
        scaled = np.ldexp(work, -quantum)
        steps = np.rint(scaled) if rounding == NEAREST_EVEN else np.trunc(scaled)
        return np.where(finite, np.ldexp(steps, quantum), work)


def round_fraction(value: Fraction, target: DType, rounding: str = NEAREST_EVEN) -> float:
    """An exact value (an integer, a decimal) rounded once to `target`'s precision, as float64
    (+-inf when even float64 cannot hold it)."""
    if value == 0:
        return 0.0
    # Integer steps on n / d: the arithmetic Fractions did, 0.6 us instead of 5 (half of QuantizeLinear's reference).
    numerator, denominator = value.numerator, value.denominator  # in lowest terms, d > 0
    negative = numerator < 0  # math.copysign would take float(value), which overflows past float64's range
    numerator = abs(numerator)
    precision, min_exponent = (53, -1022) if target.name == "double" else precision_of(target)
    exponent = numerator.bit_length() - denominator.bit_length()
    if (denominator << exponent > numerator) if exponent >= 0 else (denominator > numerator << -exponent):
        exponent -= 1  # now 2**exponent <= magnitude < 2**(exponent + 1)
    if exponent > 1100:
        return -math.inf if negative else math.inf
    quantum = max(exponent, min_exponent) - (precision - 1)
    if quantum >= 0:  # the magnitude / 2**quantum
        denominator <<= quantum
    else:
        numerator <<= -quantum
    steps, remainder = divmod(numerator, denominator)  # floor
    if rounding == NEAREST_EVEN and (2 * remainder > denominator or (2 * remainder == denominator and steps & 1)):
        steps += 1  # half to even, as round() of a Fraction
    try:
        result = math.ldexp(float(steps), quantum)
    except OverflowError:
        result = math.inf
    return -result if negative else result


# --- finishing: what each kind of float type does beyond its range ---

def finish_float(rounded: np.ndarray, target: DType, saturate: bool = True) -> np.ndarray:
    """Values already rounded to `target`'s precision (float64), put into `target`: overflow and
    infinities as its kind says (see the module's docstring)."""
    top = float(target.max)
    with np.errstate(all="ignore"):
        work = rounded.astype(np.float64)
        beyond = np.isfinite(work) & (np.abs(work) > top)
        infinite = np.isinf(work)
        sign = np.where(np.signbit(work), -1.0, 1.0)
        if target.name in FLOAT8:
            if saturate:
                work = np.where(beyond | infinite, sign * top, work)
            elif target.has_inf:  # E5M2: overflow and inf give inf
                work = np.where(beyond, sign * np.inf, work)
            else:
                work = np.where(beyond | infinite, np.nan, work)
        elif target.has_inf:
            work = np.where(beyond, sign * np.inf, work)
        else:  # float4e2m1, float6: no infinity to overflow into
            work = np.where(beyond | infinite, sign * top, work)
        if not target.has_negative_zero:
            work = np.where(work == 0, 0.0, work)  # FNUZ types: -0 and negative underflow are +0
        return work.astype(target.np_dtype)


def float_to_float(values: np.ndarray, target: DType, saturate: bool = True,
                   rounding: str = NEAREST_EVEN) -> np.ndarray:
    """Float values (any float type, exact in float64) converted to the float type `target`."""
    with np.errstate(invalid="ignore"):  # a signalling NaN widened is still a NaN
        exact = values.astype(np.float64)
    if target.name == E8M0:
        return to_e8m0([Fraction(v) if math.isfinite(v) else v for v in exact.reshape(-1).tolist()],
                       saturate, "up").reshape(values.shape)
    return finish_float(round_float64(exact, target, rounding), target, saturate)


def exact_to_float(values: list, target: DType, saturate: bool = True, rounding: str = NEAREST_EVEN,
                   round_mode: str = "up", beyond_before_rounding: bool = False) -> np.ndarray:
    """Exact values (ints, Fractions, or float inf/nan) converted to the float type `target`."""
    if target.name == E8M0:
        return to_e8m0(values, saturate, round_mode, beyond_before_rounding)
    rounded = [v if isinstance(v, float) else round_fraction(Fraction(v), target, rounding) for v in values]
    return finish_float(np.array(rounded, dtype=np.float64), target, saturate)


# --- float8e8m0: a power of two, 2**-127 to 2**127 ---

def e8m0_exponent(value: Fraction, round_mode: str) -> int:
    """The exponent of the power of two a positive value rounds to (unbounded)."""
    exponent = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** exponent > value:
        exponent -= 1
    fraction = value / Fraction(2) ** exponent  # in [1, 2)
    if round_mode == "down":
        return exponent
    if round_mode == "up":
        return exponent + (fraction > 1)
    return exponent + (fraction >= Fraction(3, 2))  # nearest, ties up (away from zero)


def to_e8m0(values: list, saturate: bool, round_mode: str, beyond_before_rounding: bool = False) -> np.ndarray:
    """Non-negative exact values (Fractions, ints, or float inf/nan) to float8e8m0.

    0 and values below 2**-127 saturate to 2**-127 (bits 0) or give NaN; +inf and values above
    2**127 saturate to 2**127 or give NaN. The text's table says `x > E8M0_MAX`, which leaves
    open whether a value is compared before or after it is rounded: `beyond_before_rounding` picks.
    A negative value's result is unspecified: the caller keeps them out.
    """
    bits = []
    for value in values:
        bits.append(_e8m0_bits(value, saturate, round_mode, beyond_before_rounding))
    return np.array(bits, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)


def _e8m0_bits(value, saturate: bool, round_mode: str, before: bool) -> int:
    lowest, highest = 0, E8M0_MAX_EXPONENT - E8M0_MIN_EXPONENT
    if isinstance(value, float) and math.isnan(value):
        return E8M0_NAN_BITS
    if isinstance(value, float) and math.isinf(value):
        return highest if saturate else E8M0_NAN_BITS
    exact = Fraction(value)
    if exact <= 0:
        return lowest if saturate else E8M0_NAN_BITS
    exponent = e8m0_exponent(exact, round_mode)
    if before and exact > Fraction(2) ** E8M0_MAX_EXPONENT:
        exponent = E8M0_MAX_EXPONENT + 1
    if before and exact < Fraction(2) ** E8M0_MIN_EXPONENT:
        exponent = E8M0_MIN_EXPONENT - 1
    if exponent > E8M0_MAX_EXPONENT:
        return highest if saturate else E8M0_NAN_BITS
    if exponent < E8M0_MIN_EXPONENT:
        return lowest if saturate else E8M0_NAN_BITS
    return exponent - E8M0_MIN_EXPONENT


# --- integers ---

def wrap(value: int, target: DType) -> int:
    """An integer with its bits above `target`'s width discarded, reinterpreted in `target`
    (two's complement for signed types): 200 into int8 is -56."""
    width = target.bits
    low = value % (1 << width)
    return low - (1 << width) if target.kind == "int" and low >= 1 << (width - 1) else low


def wrapped_and_saturated(values: list[int], np_dtype: np.dtype) -> tuple[list[int], list[int]] | None:
    """Exact integers put into an integer type where one does not fit: each wrapped (two's
    complement) and each saturated (clamped to the type); None where every one fits."""
    info = np.iinfo(np_dtype)
    if all(info.min <= v <= info.max for v in values):
        return None
    span = info.max - info.min + 1
    return [((v - info.min) % span) + info.min for v in values], [min(max(v, info.min), info.max) for v in values]


def pack_integers(values: list[int], target: DType) -> np.ndarray:
    """Python ints, each within `target`'s range, as an array of `target`."""
    wide = np.int64 if target.kind == "int" else np.uint64
    return np.array(values, dtype=wide).astype(target.np_dtype)


def exact_values(array: np.ndarray) -> list:
    """An array's elements as exact Python values: ints for integers and bools, Fractions for
    finite floats, float inf/nan as they are."""
    if array.dtype == np.bool_:
        return [int(v) for v in array.reshape(-1).tolist()]
    kind = array.dtype.kind
    if kind in "iu" or array.dtype in (ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2):
        wide = np.int64 if kind == "i" or array.dtype in (ml_dtypes.int4, ml_dtypes.int2) else np.uint64
        return [int(v) for v in array.astype(wide).reshape(-1).tolist()]
    return [Fraction(v) if math.isfinite(v) else v for v in array.astype(np.float64).reshape(-1).tolist()]


def float_to_integer(value: float, rounding: str) -> int:
    """A finite float's integer by the given rounding (truncation is C's)."""
    exact = Fraction(value)
    return math.trunc(exact) if rounding == TOWARD_ZERO else round(exact)


__all__ = [
    "NEAREST_EVEN", "TOWARD_ZERO", "FLOAT8", "E8M0", "ROUND_MODES", "round_float64", "round_fraction", "finish_float",
    "float_to_float", "exact_to_float", "to_e8m0", "wrap", "pack_integers", "exact_values", "float_to_integer",
]
