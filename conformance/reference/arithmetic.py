"""Element-wise arithmetic: Add, Sub, Mul, Div, Pow, Mod (declarations of the element-wise family).

IEEE 754 rounds +, -, *, / correctly, so a float result is judged exactly against the float64
result rounded once to the output type (exact for 16- and 32-bit types too: float64 holds more
than twice their precision plus two bits, so the double rounding is innocuous). C's fmod is exact
too. Pow is not correctly rounded anywhere, so it carries a budget.

What the texts leave open, each reading named:
- an integer divisor of zero (Div, Mod): no text gives a result; a runtime may reject the input,
  and a result is one that hardware gives (AArch64: x / 0 = 0, x % 0 = x; RISC-V: x / 0 = -1);
- Div-6 on integers: the text does not say how the quotient rounds (Div-7 says: truncating);
- Pow with an integer base: a result that is not an integer (a negative or fractional exponent)
  is converted to T without the text saying how (truncated or rounded), a result that is not
  finite (0 ** -1, NaN) has no integer value at all, and one beyond T may also be x86's integer
  indefinite (a power computed in double, converted by cvttsd2si); a negative integer exponent
  may be rejected (onnx.reference does);
- Pow on floats follows C99's pow (F.10.4.4), where the real power and IEEE 754 differ: (-inf) **
  0.5 is NaN as a real power, and a signalling NaN to the power 0 (or 1 to a signalling NaN
  power) is NaN by IEEE 754-2019, where C99 gives 1;
- Mod's zero sign: fmod=1 and a dividend of -0 (Mod-13/28 allow either sign); Mod-10: "In case
  of dividend being zero, the results will be platform dependent".
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..dtypes import DType
from ..precision import Budget
from .base import Invalid
from .elementwise import Attribute, Context, Elementwise

def _legacy_broadcast(example) -> bool:
    """Versions 1 and 6 with `broadcast` set: B placed by the legacy rule."""
    return example.version.since_version < 7 and bool(example.attributes.get("broadcast"))


def _legacy_axis(example) -> bool:
    """Legacy broadcasting with `axis` given: B placed at a run of A's dims, not at its end."""
    return _legacy_broadcast(example) and example.attributes.get("axis") is not None


LEGACY_TRAITS = {"legacy-broadcast": _legacy_broadcast, "legacy-broadcast-axis": _legacy_axis}

ADD = Elementwise(
    op="Add",
    real=lambda a, b: a + b,
    integer=lambda a, b: a + b,
    traits=LEGACY_TRAITS,
)

SUB = Elementwise(
    op="Sub",
    real=lambda a, b: a - b,
    integer=lambda a, b: a - b,
    traits={"lowest-subtrahend": lambda e: _lowest_subtrahend(e), **LEGACY_TRAITS},  # defined with Div's helpers
)

MUL = Elementwise(
    op="Mul",
    real=lambda a, b: a * b,
    integer=lambda a, b: a * b,
    traits={"integer-product-beyond-type": lambda e: _product_beyond_type(e), **LEGACY_TRAITS},  # defined with Div's helpers
)

# --- integer division by zero, shared by Div and Mod ---

ZERO_DIVISOR = "the text gives an integer division (or modulo) by zero no result"


def _zero_divisor(context: Context) -> str | None:
    """Integer division by zero: a runtime may reject it (x86 traps; onnxruntime checks first)."""
    if context.dt.kind in ("int", "uint") and (context.arrays[1] == 0).any():
        return ZERO_DIVISOR
    return None


def _nonzero_divisors(choices, dt: DType, dims: tuple[int, ...], position: int) -> np.ndarray | None:
    """Integer divisors with their zeros mostly replaced by 1, so that drawn cases test division
    and not the undefined zero divisor, which a case file states (one case in four keeps them)."""
    from ..strategies.common import array, one_in

    if position != 1 or dt.kind not in ("int", "uint"):
        return None
    values = array(choices, dt, dims)
    return values if one_in(choices, 4) else np.where(values == 0, 1, values).astype(values.dtype)


def _each(function, *arrays: np.ndarray) -> np.ndarray:
    """`function` applied to each element of object arrays of one shape (Python ints)."""
    shape = arrays[0].shape
    flat = [a.reshape(-1) for a in arrays]
    return np.array([function(*values) for values in zip(*flat)], dtype=object).reshape(shape)


def _int_min_by_minus_one(example) -> bool:
    """An integer quotient (or remainder) of the signed type's lowest by -1: its quotient
    overflows, and x86's idiv traps on it."""
    found = _operands(example)
    if found is None or found[0].kind != "int":
        return False
    dt, a, b = found
    return bool(((a == dt.lowest) & (b == -1)).any())


def _unused_zero_divisor(example) -> bool:
    """An integer divisor holding a zero that divides nothing (the broadcast output is empty)."""
    found = _operands(example)
    if found is None or found[0].kind not in ("int", "uint"):
        return False
    divisor = example.inputs[[n for n in example.node_inputs if n][1]]
    return found[1].size == 0 and bool((divisor == 0).any())


def _zero_divisor_used(example) -> bool:
    """An integer divisor holding a zero that divides something: the text leaves the quotient (or
    remainder) undefined, and a division instruction traps on it."""
    found = _operands(example)
    return found is not None and found[0].kind in ("int", "uint") and bool((found[2] == 0).any())


def _quotient_half_or_more(example) -> bool:
    """An integer quotient whose fraction is 1/2 or more (254 / 255): the text truncates it, a
    runtime dividing in floating point and rounding to nearest gives one more."""
    found = _operands(example)
    if found is None or found[0].kind not in ("int", "uint"):
        return False
    a, b = (np.asarray(x).astype(object) for x in found[1:])
    return any(d != 0 and 2 * (abs(n) % abs(d)) >= abs(d) for n, d in zip(a.reshape(-1), b.reshape(-1)))


def _product_beyond_type(example) -> bool:
    """An integer product beyond its type's range (uint8 255 * 255): the text's integer product
    wraps, a runtime may saturate it or compute it wider."""
    found = _operands(example)
    if found is None or found[0].kind not in ("int", "uint"):
        return False
    t, a, b = found
    products = np.asarray(np.asarray(a).astype(object) * np.asarray(b).astype(object))  # 0-d: a plain int
    return any(not t.lowest <= v <= t.max for v in products.reshape(-1))


def _lowest_subtrahend(example) -> bool:
    """A signed integer B holding its type's lowest value (int8 -128): the text's A - B is exact
    where it fits (-127 - -128 is 1); a runtime computing A + (-B) negates B first, and -(-128)
    does not fit int8 (saturated to 127 it gives 0)."""
    found = _operands(example)
    if found is None or found[0].kind != "int":
        return False
    t, _, b = found
    return bool((np.asarray(b) == t.lowest).any())


def _inexact_reciprocal(example) -> bool:
    """A float divisor whose reciprocal the type does not hold exactly (one not a power of two, or
    a subnormal whose reciprocal is beyond the type's largest value), dividing a finite element:
    IEEE division rounds the quotient once, a runtime multiplying by the reciprocal rounds twice
    (21 / 7 gives 3.0000002 in float) or overflows (0 / 1e-45 gives NaN)."""
    found = _operands(example)
    if found is None or found[0].kind != "float":
        return False
    a, b = (np.asarray(x).astype(np.float64).reshape(-1) for x in found[1:])
    divisors = {y for x, y in zip(a.tolist(), b.tolist()) if y != 0 and np.isfinite(x) and np.isfinite(y)}
    for y in divisors:
        with np.errstate(all="ignore"):
            reciprocal = float(np.asarray(1.0 / y).astype(found[1].dtype))  # exact in the type only if exact in float64
        if not np.isfinite(reciprocal) or Fraction(reciprocal) != 1 / Fraction(y):
            return True
    return False


def _quotient_inexact(example) -> bool:
    """A finite float quotient x / y (y nonzero) that the type does not hold exactly: where a runtime
    that truncates the quotient into the type, or computes fmod as x - trunc(x / y) * y from the
    rounded quotient, is one step off or loses the remainder (bfloat16 11170.9 gives 11136, not
    11200; 6.99e18 fmod 3 gives 0)."""
    found = _operands(example)
    if found is None or found[0].kind != "float":
        return False
    kind, a, b = found
    with np.errstate(all="ignore"):
        x, y = (np.asarray(v).astype(np.float64).reshape(-1) for v in (a, b))
        quotient = x / y
        usable = (y != 0) & np.isfinite(quotient)
        rounded = np.asarray(quotient[usable]).astype(a.dtype).astype(np.float64)
    return bool((rounded != quotient[usable]).any())


def _operands(example):
    """(the data dtype, A, B broadcast together) of a binary case, or None where they do not broadcast."""
    from ..dtypes import dtype

    arrays = [example.inputs[n] for n in example.node_inputs if n]
    if len(arrays) != 2:
        return None
    try:
        a, b = np.broadcast_arrays(*arrays)
    except ValueError:
        return None
    return dtype(example.types[example.dtype_param]), a, b


# --- Div ---

def _truncating_quotient(a: int, b: int) -> int:
    if b == 0:
        return 0  # AArch64 sdiv/udiv; the readings below name the others
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


DIV_READINGS = ("Div-6 does not say how an integer quotient rounds (Div-7: truncating); " + ZERO_DIVISOR)
FLOORED = "the quotient rounds toward -inf (floor), as Python's //"
ALL_ONES = "a zero divisor gives all ones (-1, or the unsigned max: RISC-V div/divu)"


def _div_alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    if context.dt.kind not in ("int", "uint"):
        return []
    a, b = context.arrays
    found = []
    zero = b == 0
    if zero.any():
        ones = first.copy()
        ones[zero] = -1 if context.out.kind == "int" else context.out.max
        found.append((ALL_ONES, ones))
    if context.since < 7 and context.dt.kind == "int":
        floored = _each(lambda x, y: x // y if y else 0, *(_ints(x) for x in (a, b)))
        if (floored != _each(_truncating_quotient, _ints(a), _ints(b))).any():
            floored_out = first.copy()
            differs = floored != _each(_truncating_quotient, _ints(a), _ints(b))
            floored_out[differs] = floored[differs].astype(first.dtype)
            found.append((FLOORED, floored_out))
    return found


def _ints(array: np.ndarray) -> np.ndarray:
    return np.array([int(v) for v in array.reshape(-1)], dtype=object).reshape(array.shape)


DIV = Elementwise(
    op="Div",
    real=lambda a, b: a / b,
    integer=lambda a, b: _each(_truncating_quotient, a, b),
    may_reject=_zero_divisor,
    alternatives=_div_alternatives,
    ambiguity=DIV_READINGS,
    label="truncating division; a zero divisor gives 0 (AArch64)",
    draw=_nonzero_divisors,
    traits={"integer-int-min-by-minus-one": _int_min_by_minus_one, "integer-zero-divisor-unused": _unused_zero_divisor,
            "integer-zero-divisor": _zero_divisor_used, "divisor-reciprocal-inexact": _inexact_reciprocal,
            "integer-quotient-half-or-more": _quotient_half_or_more, "quotient-inexact": _quotient_inexact,
            **LEGACY_TRAITS},
)


# --- Pow ---

POW_READINGS = ("Pow's text, f(x) = x^exponent with an integer output, does not say how a non-integer result "
                "becomes an integer, nor what a result beyond T or not finite (0 ** -1, NaN) gives; for floats, "
                "neither what (-inf) ** y gives for a non-integer y (C99: +inf or +0; as a real power: NaN), nor "
                "what a signalling NaN gives where a quiet one gives 1 (NaN ** 0, 1 ** NaN)")
ROUNDED = "a non-integer result rounds to nearest (ties to even)"
INDEFINITE = ("x86 integer indefinite (the type's lowest): a result beyond T or not finite, as cvttsd2si converts a "
              "power computed in double")
SIGNALLING_NAN = ("a signalling NaN base to the power 0, or 1 to a signalling NaN power, gives NaN: IEEE 754-2019 "
                  "9.2.1 gives 1 for a quiet NaN only (glibc's pow signals invalid and returns NaN)")
NEGATIVE_INFINITY_REAL = ("(-inf) ** y for a finite non-integer y is NaN, as a negative base's real power is "
                          "(C99 F.10.4.4 gives +inf, or +0 for y < 0)")
NEGATIVE_INTEGER_EXPONENT = ("the text is silent on an integer base to a negative integer power; onnx.reference rejects "
                             "it (numpy: 'Integers to negative integer powers are not allowed')")
NOT_FINITE = 2 ** 64  # beyond every integer type: the family's overflow readings saturate (AArch64) or wrap it to 0


def _real_power(x: int, y) -> float:
    """x ** y in double, for a non-integer y: Pow is correctly rounded nowhere, and the readings
    convert the power a runtime computes (float64's; its exact value's truncation differs only
    within an ULP below an integer: 2147483646 ** -1.6e-24 is 1 in double, 1 - 3.4e-23 exactly)."""
    with np.errstate(all="ignore"):
        return float(np.power(np.float64(x), np.float64(y)))


def _integer_power(x: int, y, rounding=math.trunc) -> int:
    """x ** y for an integer x: exact for an integer y >= 0; otherwise the real power converted by
    `rounding`; a result that is not finite marked as +-NOT_FINITE (NaN as 0, as AArch64 gives). A
    float exponent with an integer value is an integer exponent: float64's pow would round a power
    (or a base) beyond 2**53, where the text's power is an integer, exactly."""
    if isinstance(y, float) and y.is_integer():
        y = int(y)
    if isinstance(y, int) and y >= 0:
        return x ** y if abs(x) < 2 or y <= 128 else _huge_power(x, y)
    if isinstance(y, int):
        if x == 0:
            return NOT_FINITE
        if abs(x) == 1:
            return -1 if x == -1 and y % 2 else 1
        # |x ** y| <= 1/2: a huge -y changes nothing but the time a Fraction would take.
        return rounding(Fraction(1, x ** -y) if -y <= 128 else Fraction(0))
    value = _real_power(x, y)
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return NOT_FINITE if value > 0 else -NOT_FINITE
    return rounding(Fraction(value))


def _huge_power(x: int, y: int) -> int:
    """x ** y for |x| >= 2 and y > 128, beyond every integer type: a stand-in with its sign and its
    residue modulo 2**64 (all that the wrapped and saturated readings need), computed in no time."""
    residue = pow(x, y, 2 ** 64)
    return residue - 2 ** 128 if x < 0 and y % 2 else residue + 2 ** 128


def _not_finite(x: int, y) -> bool:
    if isinstance(y, int) or (isinstance(y, float) and y.is_integer()):
        return x == 0 and y < 0
    return not math.isfinite(_real_power(x, y))


def _pow_alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    if context.dt.kind == "float":
        return _float_pow_alternatives(context, first)
    if context.dt.kind != "int":
        return []
    x, y = (_python_values(a) for a in context.arrays)
    found = []
    rounded = _each(lambda a, b: _integer_power(a, b, _round_half_even), x, y)
    truncated = _each(_integer_power, x, y)
    if (rounded != truncated).any():
        out = first.copy()
        differs = rounded != truncated
        out[differs] = [_clamped(v, context.out) for v in rounded[differs]]
        found.append((ROUNDED, out))
    low, high = int(context.out.lowest), int(context.out.max)
    beyond = np.array([not low <= v <= high for v in truncated.reshape(-1)], dtype=bool).reshape(truncated.shape)
    indefinite = _each(_not_finite, x, y).astype(bool) | beyond
    if indefinite.any():
        out = first.copy()
        out[indefinite] = context.out.lowest
        found.append((INDEFINITE, out))
    return found


def _float_pow_alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """NaN where the C99 reading gives a number the other readings do not: a signalling NaN met by
    the exponent 0 or the base 1, and -inf to a non-integer power."""
    x, y = context.arrays
    with np.errstate(invalid="ignore"):
        wide_x, wide_y = x.astype(np.float64), y.astype(np.float64)
        non_integer = np.isfinite(wide_y) & (wide_y != np.trunc(wide_y))
    found = []
    for label, where in ((SIGNALLING_NAN, ((wide_y == 0) & _signalling(x)) | ((wide_x == 1) & _signalling(y))),
                         (NEGATIVE_INFINITY_REAL, np.isneginf(wide_x) & non_integer)):
        if where.any():
            out = first.copy()
            out[where] = np.nan
            found.append((label, out))
    return found


def _signalling(array: np.ndarray) -> np.ndarray:
    """Where a float array holds a signalling NaN: a NaN whose quiet bit (the significand's
    highest) is clear. numpy widens one unchanged, and libm's pow answers it as IEEE 754 says."""
    import ml_dtypes

    if array.dtype.kind in "iub":
        return np.zeros(array.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(array.astype(np.float64))
    bits = array.view(f"u{array.dtype.itemsize}").astype(np.uint64)
    quiet = np.uint64(1) << np.uint64(ml_dtypes.finfo(array.dtype).nmant - 1)
    return nan & ((bits & quiet) == 0)


def _round_half_even(value: Fraction) -> int:
    return round(value)


def _clamped(value: int, out: DType) -> int:
    return min(max(value, int(out.lowest)), int(out.max))


def _python_values(array: np.ndarray) -> np.ndarray:
    """Integers as Python ints, floats as Python floats."""
    as_float = array.dtype.kind not in "iub"
    return np.array([float(v) if as_float else int(v) for v in array.reshape(-1)], dtype=object).reshape(array.shape)


def _pow_may_reject(context: Context) -> str | None:
    if context.dt.kind not in ("int", "uint"):
        return None
    reasons = []
    x, y = (_python_values(a) for a in context.arrays)
    if _each(_not_finite, x, y).astype(bool).any():
        reasons.append("the text gives no integer for a power that is not finite (0 ** -1, NaN)")
    exponent = context.arrays[1]
    if exponent.dtype.kind == "i" and bool((exponent < 0).any()):
        reasons.append(NEGATIVE_INTEGER_EXPONENT)
    return "; ".join(reasons) or None


SMALL_EXPONENTS = (0, 1, 2, 3, -1, -2, 0.5, -0.5, 1.5, 2.5, 0.25, 10, 0.0)


def _pow_draw(choices, dt: DType, dims: tuple[int, ...], position: int) -> np.ndarray | None:
    """Half the exponents small (integers, halves), so that results are neither 0 nor inf; half
    an integer base's values small, so that its powers do not overflow."""
    from ..strategies.common import one_in
    from ..values import pack

    if not one_in(choices, 2):
        return None
    count = int(np.prod(dims, dtype=np.int64))
    if position == 1:
        options = [v for v in SMALL_EXPONENTS if dt.kind == "float" or float(v).is_integer()]
        options = [v for v in options if dt.kind != "uint" or v >= 0]
        values = [options[choices.integer(0, len(options) - 1)] for _ in range(count)]
    elif dt.kind == "int":
        values = [choices.integer(-6, 6) for _ in range(count)]
    else:
        return None
    return pack([int(v) if dt.kind != "float" else float(v) for v in values], dt).reshape(dims)


def _mp_power(x, y):
    import mpmath

    if x < 0 and not mpmath.isint(y):
        raise ValueError("a negative base with a fractional exponent has no real power")
    return mpmath.power(x, y)


def _power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """C's pow (C99 F.10.4.4), element by element: numpy's power of 0-d arrays takes a scalar path
    that gives NaN for (-inf) ** 0.5, where C99 gives +inf; and pow(x, +-0) and pow(1, y) are 1 for
    every x and y, NaN included, where libm's pow given a signalling NaN (which numpy widens from
    float16 unchanged) returns NaN (the readings name that)."""
    shape = np.broadcast_shapes(x.shape, y.shape)
    with np.errstate(all="ignore"):
        found = np.power(np.reshape(x, -1) if x.ndim == 0 else x, np.reshape(y, -1) if y.ndim == 0 else y).reshape(shape)
    return np.where((y == 0) | (x == 1), 1.0, found)


POW = Elementwise(
    op="Pow",
    real=_power,
    integer=lambda x, y: _each(_integer_power, x, y),
    precise64=_mp_power,
    budget=Budget(1.5, "float16/bfloat16: computed in float32 and rounded once, measured 0.5 ULP (onnxruntime CPU, "
                       "~100k values, all binades); a native half-precision kernel within 1 ULP of the correctly rounded "
                       "result is 1.5 from the exact value (WebNN allows 2 ULP float16)"),
    budgets={"float": Budget(4.5, "documented (PRECISION.md), from the correctly rounded result: glibc powf 1, libmvec 3, "
                                  "CUDA powf 4, + 0.5 to the exact value; measured onnxruntime CPU 0.501 ULP, numpy 0.99 "
                                  "(~100k values, all binades, integer exponents of negative bases); WebNN allows 32"),
             "double": Budget(2.5, "documented (PRECISION.md): glibc pow 1, libmvec 1, CUDA pow 2, + 0.5 to the exact "
                                   "value (and + 0.5 for the float64 reference); measured onnxruntime CPU 1.0 ULP from "
                                   "mpmath's correctly rounded value")},
    alternatives=_pow_alternatives,
    ambiguity=POW_READINGS,
    label="floats: C99 pow; integers: a non-integer result truncates toward zero, NaN gives 0, +-inf saturates "
          "(AArch64 fcvtzs)",
    may_reject=_pow_may_reject,
    draw=_pow_draw,
    traits={"integer-power-beyond-type": lambda e: _integer_power_trait(e, beyond_type=True),
            "int64-power-beyond-2**53": lambda e: _integer_power_trait(e, beyond_type=False),
            "integer-negative-exponent": lambda e: _integer_negative_exponent(e),
            "mixed-types": lambda e: _mixed_types(e), **LEGACY_TRAITS},
)


def _mixed_types(example) -> bool:
    """A base and an exponent of different element types (Pow-12+ types them apart: T and T1)."""
    arrays = [example.inputs[n] for n in example.node_inputs if n]
    return len(arrays) == 2 and np.asarray(arrays[0]).dtype != np.asarray(arrays[1]).dtype


def _integer_negative_exponent(example) -> bool:
    """An integer base with a negative integer exponent (numpy refuses such powers)."""
    found = _operands(example)
    return found is not None and found[0].kind == "int" and found[2].dtype.kind in "iu" and bool((found[2] < 0).any())


def _integer_power_trait(example, beyond_type: bool) -> bool:
    """An integer Pow whose result lies beyond T (`beyond_type`), or, in int64, whose base,
    exponent or in-range result lies beyond 2**53, where a float64 computation is no longer exact
    (an odd exponent beyond 2**53 is even as a double: (-1)**-8675171181561471759 gives 1)."""
    found = _operands(example)
    if found is None or found[0].kind != "int":
        return False
    dt, x, y = found
    low, high = int(dt.lowest), int(dt.max)
    for base, exponent in zip(_python_values(x).reshape(-1), _python_values(y).reshape(-1)):
        if _not_finite(base, exponent):
            continue
        value = _integer_power(base, exponent)
        if beyond_type and not low <= value <= high:
            return True
        if not beyond_type and dt.name == "int64" and low <= value <= high and exponent != 0 \
                and max(abs(base), abs(value), abs(exponent)) > 2 ** 53:
            return True
    return False


# --- Mod ---

FMOD_SENTENCE = "fmod: its value must be 0 (default) or 1"
FLOAT_NEEDS_FMOD = "mod-float-needs-fmod"
INTEGER_NEEDS_NO_FMOD = "mod-integer-without-fmod"
MOD_ZERO_SIGN = ("Mod-13/28: if x is -0 and y is greater than zero, either +0 or -0 may be returned; Mod-10: in "
                 "case of dividend being zero, the results will be platform dependent")
OTHER_ZERO = "the zero result has the other sign"
ZERO_DIVISOR_ZERO = "an integer zero divisor gives 0 (numpy's % and fmod)"


def _floor_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A - floor(A / B) * B, exactly (Mod-28, fmod=0): C's fmod (exact), moved by B where its sign
    is not B's; a zero result takes B's sign; the special cases as Mod-28 lists them."""
    r = np.fmod(a, b)
    moved = np.where((r != 0) & (np.signbit(r) != np.signbit(b)), r + b, r)
    return np.where(moved == 0, np.copysign(0.0, b), moved)


def _mod_real(a: np.ndarray, b: np.ndarray, fmod: int = 0) -> np.ndarray:
    return np.fmod(a, b) if fmod == 1 else _floor_mod(a, b)


def _mod_integer(a: np.ndarray, b: np.ndarray, fmod: int = 0) -> np.ndarray:
    def one(x: int, y: int) -> int:
        if y == 0:
            return x  # AArch64 (msub with a zero quotient) and RISC-V rem give the dividend
        if fmod == 1:
            return x - y * _truncating_quotient(x, y)
        return x % y  # Python's %: the sign of the divisor

    return _each(one, a, b)


def _mod_invalid(context: Context) -> Invalid | None:
    fmod = context.attributes.get("fmod", 0)
    floating = context.dt.kind == "float"
    label = context.example.version.label
    if context.since < 28 and floating and fmod == 0:
        sentence = ("If the input type is floating point, then `fmod` attribute must be set to 1." if context.since < 13
                    else "If the `fmod` attribute is set to `0`, `T` is constrained to integer data types")
        return Invalid(FLOAT_NEEDS_FMOD, f"{label}: {sentence}")
    if context.since == 13 and not floating and fmod == 1:
        return Invalid(INTEGER_NEEDS_NO_FMOD, f"{label}: If `fmod` is set to `1`, ... `T` is constrained to floating "
                                              "point data types")
    return None


def _mod_alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The zero sign the texts leave open: fmod=1 with a dividend of -0 and a positive divisor
    (13, 28); any zero dividend in Mod-10. For integers, the result of a zero divisor."""
    if context.dt.kind != "float":
        zero = context.arrays[1] == 0
        if not zero.any():
            return []
        zeroed = first.copy()
        zeroed[zero] = 0
        return [(ZERO_DIVISOR_ZERO, zeroed)]
    a, b = (x.astype(np.float64) for x in context.arrays)
    if context.since < 13:
        open_ = (a == 0) & (first.astype(np.float64) == 0)
    else:
        open_ = (context.attributes.get("fmod", 0) == 1) & (a == 0) & np.signbit(a) & (b > 0)
    if not np.any(open_):
        return []
    other = first.copy()
    other[open_] = -first[open_]
    return [(OTHER_ZERO, other)]


MOD = Elementwise(
    op="Mod",
    real=_mod_real,
    integer=_mod_integer,
    attributes=(Attribute("fmod", (0, 1), lambda v: v in (0, 1), FMOD_SENTENCE, (2, -1)),),
    invalid=_mod_invalid,
    rules=(FLOAT_NEEDS_FMOD, INTEGER_NEEDS_NO_FMOD),
    may_reject=_zero_divisor,
    alternatives=_mod_alternatives,
    ambiguity=f"{MOD_ZERO_SIGN}; {ZERO_DIVISOR}",
    label="the zero keeps the sign C's fmod gives; an integer zero divisor gives the dividend (AArch64, RISC-V)",
    draw=_nonzero_divisors,
    traits={"integer-int-min-by-minus-one": _int_min_by_minus_one, "integer-zero-divisor-unused": _unused_zero_divisor,
            "integer-zero-divisor": _zero_divisor_used, "int64-fmod-beyond-2**53": lambda e: _fmod_beyond_float64(e),
            "float-floor-mod": lambda e: _float_floor_mod(e), "float-quotient-overflows": lambda e: _float_quotient_overflows(e),
            "quotient-inexact": _quotient_inexact, "wide-integer-scalars": lambda e: _wide_integer_scalars(e)},
)


def _float_quotient_overflows(example) -> bool:
    """A float remainder whose quotient a / b is beyond the type's largest value (-7.7e30 / 1.2e-38
    in float): the text's remainder is exact, a runtime computing a - b * trunc(a / b) gets inf or NaN."""
    found = _operands(example)
    if found is None or found[0].kind != "float":
        return False
    with np.errstate(all="ignore"):
        a, b = (np.asarray(x).astype(np.float64) for x in found[1:])
        quotient = np.abs(a / b)
    return bool((np.isfinite(a) & (b != 0) & (quotient > float(found[0].max))).any())


def _float_floor_mod(example) -> bool:
    """A float Mod with fmod=0: Mod-28's floor remainder (the sign of the divisor), which earlier
    versions refuse for floats."""
    return example.attributes.get("fmod", 0) == 0 and example.inputs[example.node_inputs[0]].dtype.kind not in "iub"


def _wide_integer_scalars(example) -> bool:
    """int64 or uint64 operands of one element each (0-d or of shape [1]): what a runtime may fold,
    given as constants, in the type it keeps shapes in rather than the op's (tract's TDim)."""
    found = _operands(example)
    if found is None or found[0].name not in ("int64", "uint64"):
        return False
    return all(np.size(example.inputs[n]) == 1 for n in example.node_inputs if n)


def _fmod_beyond_float64(example) -> bool:
    """fmod=1 on a 64-bit integer type with an operand beyond 2**53, where a float64 fmod is no
    longer exact."""
    found = _operands(example)
    if found is None or found[0].name not in ("int64", "uint64") or example.attributes.get("fmod") != 1:
        return False
    return any(abs(int(v)) > 2 ** 53 for array in found[1:] for v in array.reshape(-1))

DECLARED = (ADD, SUB, MUL, DIV, POW, MOD)
