"""Turning written values into typed arrays: literals, named special values, and fill generators.

A case file writes `[nan, -0.0, max]` or `INT_MAX` or `{shape: [2, 0], fill: 1}`; this module
resolves each against the dtype of the tensor it sits in, and refuses what does not fit (a value
out of range, a fraction for an integer type, a ragged list) with a message a person can act on.
Nothing here evaluates expressions: tokens are looked up by name.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

import numpy as np

from .dtypes import DType, from_numpy

GENERATOR_KEYS = ("shape", "fill", "values", "random")
MAX_GENERATED_ELEMENTS = 10**7
MAX_RANK = 32  # numpy's own limit is 64
# The most elements the dims of an empty shape (one with a 0 among its dims) may multiply to,
# zeros aside: an empty tensor passes every limit on elements, yet numpy cannot make [2**63-1, 0].
MAX_EMPTY_SHAPE_ELEMENTS = 2**31
INT_DIGITS = 20  # no integer dtype holds a number of more digits (UINT64_MAX has 20)
SENTINELS = {
    "INT32_MAX": 2**31 - 1,
    "INT32_MIN": -(2**31),
    "INT64_MAX": 2**63 - 1,
    "INT64_MIN": -(2**63),
    "UINT64_MAX": 2**64 - 1,
}


# YAML 1.1 (PyYAML) reads an exponent without a sign or a dot, as in 1e10 or 1.0e10, as text.
EXPONENT_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


class ValueProblem(ValueError):
    """A written value that cannot become an array of the requested dtype."""


def to_array(value: Any, dt: DType, rng_seed: int = 0) -> np.ndarray:
    """The array `value` denotes in dtype `dt`: a nested list, a scalar, or a generator mapping."""
    if isinstance(value, dict):
        return _generate(value, dt, rng_seed)
    shape = _shape_of(value)
    flat = [_scalar(v, dt) for v in _flatten(value)]
    return pack(flat, dt).reshape(shape)


def _shape_of(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list):
        return ()
    if not value:
        return (0,)
    shapes = {_shape_of(v) for v in value}
    if len(shapes) != 1:
        raise ValueProblem(f"ragged array: rows of different shapes {sorted(shapes)}")
    return (len(value), *shapes.pop())


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def pack(flat: list[Any], dt: DType) -> np.ndarray:
    if dt.kind == "string":
        array = np.empty(len(flat), dtype=object)
        array[:] = flat
        return array
    if dt.kind in ("int", "uint"):
        # Through Python ints so values beyond 2**53 never pass through a float.
        return np.array(flat, dtype=np.int64 if dt.kind == "int" else np.uint64).astype(dt.np_dtype) \
            if dt.bits < 64 else np.array(flat, dtype=dt.np_dtype)
    if dt.kind == "float":
        with np.errstate(all="ignore"):
            return np.array(flat, dtype=np.float64).astype(dt.np_dtype)
    return np.array(flat, dtype=dt.np_dtype)


def _scalar(value: Any, dt: DType) -> Any:
    return _SCALARS[dt.kind](value, dt)


def _bool_scalar(value: Any, dt: DType) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in dt.special_values():
        return bool(dt.special_values()[value])
    if value in (0, 1) and not isinstance(value, float):
        return bool(value)
    raise ValueProblem(f"{value!r} is not a bool (write true or false, or give the case 'dtypes' without bool)")


def _string_scalar(value: Any, dt: DType) -> str:
    if isinstance(value, str):
        return value
    raise ValueProblem(f"{value!r} is not a string (quote it for a string tensor, or give the case 'dtypes' without string)")


def _complex_scalar(value: Any, dt: DType) -> complex:
    if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
        return complex(value)
    if isinstance(value, str):
        try:
            return complex(value.replace(" ", ""))
        except ValueError:
            pass
    raise ValueProblem(f"{value!r} is not a complex number (write it as '1+2j')")


def _int_scalar(value: Any, dt: DType) -> int:
    if isinstance(value, str):
        value = _int_token(value, dt)
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueProblem(f"{value!r} is not an integer, as {dt.name} needs")
    if not dt.lowest <= value <= dt.max:
        raise ValueProblem(f"{value} does not fit {dt.name} (range {dt.lowest} to {dt.max})")
    return value


def _int_token(token: str, dt: DType) -> int | str:
    named = {"INT_MAX": dt.max, "INT_MIN": dt.lowest, "max": dt.max, "min": dt.lowest, "lowest": dt.lowest}
    named.update(SENTINELS)
    if token in named:
        return named[token]
    if token in ("-max", "-INT_MAX"):  # as the float names are negated (docs/case-files.md)
        return _int_scalar(-dt.max, dt)
    if EXPONENT_NUMBER.fullmatch(token):
        exact = Decimal(token)  # exactly: 1e19 is an integer a float would round
        if exact != 0 and exact.adjusted() >= INT_DIGITS:  # int() of 1e999999999 would write out a billion digits
            raise ValueProblem(f"{token} does not fit {dt.name} (range {dt.lowest} to {dt.max})")
        return int(exact) if exact == exact.to_integral_value() else token
    raise ValueProblem(f"unknown value name '{token}' for {dt.name} (known: {', '.join(named)})")


def _float_scalar(value: Any, dt: DType) -> float:
    if isinstance(value, str):
        return _float_token(value, dt)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueProblem(f"{value!r} is not a number, as {dt.name} needs")
    value = float(value)
    if math.isnan(value) and not dt.has_nan:
        raise ValueProblem(f"{dt.name} has no NaN")
    if math.isinf(value) and not dt.has_inf:
        raise ValueProblem(f"{dt.name} has no infinity")
    if math.isfinite(value) and abs(value) > float(dt.max) * (1 + 2**-20):
        raise ValueProblem(f"{value!r} does not fit {dt.name} (largest finite: {dt.max})")
    return value


def _float_token(token: str, dt: DType) -> float:
    special = dt.special_values()
    sign, name = (-1.0, token[1:]) if token.startswith("-") and token not in special else (1.0, token)
    if name in special:
        return sign * float(special[name])
    if EXPONENT_NUMBER.fullmatch(token):
        number = float(token)
        if math.isinf(number):  # a finite number written too large for a float64, as 1e5000
            raise ValueProblem(f"{token} does not fit {dt.name} (largest finite: {dt.max})")
        return _float_scalar(number, dt)
    raise ValueProblem(f"unknown value name '{token}' for {dt.name} (known: {', '.join(special)})")


_SCALARS = {"bool": _bool_scalar, "string": _string_scalar, "complex": _complex_scalar, "int": _int_scalar,
            "uint": _int_scalar, "float": _float_scalar}  # by DType.kind


def _generate(spec: dict, dt: DType, rng_seed: int) -> np.ndarray:
    unknown = set(spec) - set(GENERATOR_KEYS)
    if unknown:
        raise ValueProblem(f"unknown generator key(s) {sorted(unknown)} (allowed: {', '.join(GENERATOR_KEYS)})")
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(_is_dim(d) for d in shape):
        raise ValueProblem("a generator needs 'shape': a list of non-negative integers")
    check_shape(shape, "a generator's shape")
    makers = [k for k in ("fill", "values", "random") if k in spec]
    if len(makers) != 1:
        raise ValueProblem("a generator needs exactly one of 'fill', 'values: arange' or 'random: [low, high]'")
    count = math.prod(shape)
    if count > MAX_GENERATED_ELEMENTS:
        raise ValueProblem(f"a generator of {count:,} elements is larger than conform writes ({MAX_GENERATED_ELEMENTS:,})")
    maker = makers[0]
    return _MAKERS[maker](spec[maker], dt, count, rng_seed).reshape(shape)


def _is_dim(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0  # YAML's true is an int to Python


def check_shape(dims: list[int], what: str) -> None:
    """Refuse dims no tensor conform makes can have: more than MAX_RANK of them, or a 0 among dims
    whose others (negative ones aside) multiply past MAX_EMPTY_SHAPE_ELEMENTS. `what` names them."""
    if len(dims) > MAX_RANK:
        raise ValueProblem(f"{what} has {len(dims)} dims: conform makes tensors of at most {MAX_RANK}")
    if 0 in dims and math.prod(d for d in dims if d > 0) > MAX_EMPTY_SHAPE_ELEMENTS:
        raise ValueProblem(f"{what} {dims} has a 0 beside dims that multiply to more than {MAX_EMPTY_SHAPE_ELEMENTS:,}: "
                           "conform makes no tensor of that shape, empty or not")


def _filled(arg: Any, dt: DType, count: int, seed: int) -> np.ndarray:
    """`count` copies of one value, made and checked once (not at all where there are none)."""
    return np.repeat(pack([_scalar(arg, dt)], dt), count) if count else pack([], dt)


def _counted(arg: Any, dt: DType, count: int, seed: int) -> np.ndarray:
    if arg != "arange":
        raise ValueProblem(f"'values' takes 'arange', not {arg!r}")
    return arange_values(dt, count)


def _drawn(arg: Any, dt: DType, count: int, seed: int) -> np.ndarray:
    """Values drawn between low and high, which fit `dt`: so does every value drawn."""
    low, high = _random_range(arg, dt)
    rng = np.random.default_rng(seed)
    if dt.kind in ("int", "uint"):
        draw_dtype = dt.np_dtype if dt.is_numpy_native else np.int16
        return pack(rng.integers(low, high, size=count, endpoint=True, dtype=draw_dtype), dt)
    return pack(rng.uniform(float(low), float(high), size=count), dt)


_MAKERS = {"fill": _filled, "values": _counted, "random": _drawn}  # by generator key; each makes a flat array


def _random_range(arg: Any, dt: DType) -> tuple[Any, Any]:
    """The [low, high] of a 'random' generator, checked as numpy's draws need it."""
    if not (isinstance(arg, list) and len(arg) == 2):
        raise ValueProblem("'random' takes [low, high]")
    if dt.kind not in ("int", "uint", "float"):
        raise ValueProblem(f"'random' draws numbers, which {dt.name} does not hold: write 'fill' or 'values: arange', "
                           f"or give the case 'dtypes' without {dt.name}")
    low, high = (_scalar(a, dt) for a in arg)
    if not low <= high:  # also a NaN
        raise ValueProblem(f"'random' takes [low, high] with low <= high, not [{format_scalar(low)}, {format_scalar(high)}]")
    if dt.kind == "float" and not math.isfinite(float(high) - float(low)):
        raise ValueProblem(f"'random: [{format_scalar(low)}, {format_scalar(high)}]' is too wide a range to draw from: "
                           "high - low must be a finite double")
    return low, high


def arange_values(dt: DType, count: int) -> np.ndarray:
    """Distinct-as-possible values 0, 1, 2, ... that every dtype can hold, for data worth slicing."""
    counting = np.arange(count)
    if dt.kind == "bool":
        return pack(counting % 2 == 1, dt)
    if dt.kind == "string":
        return pack([f"s{i}" for i in range(count)], dt)
    if dt.kind == "complex":
        values = np.empty(count, np.complex128)
        values.real, values.imag = counting, -counting
        return pack(values, dt)
    period = count if dt.bits >= 16 else (int(dt.max) + 1 if dt.kind in ("int", "uint") else 4)
    values = counting % max(period, 1)
    if count:
        _scalar(int(values.max()), dt)  # refused if the largest does not fit (int16 counting to 70,000)
    return pack(values, dt)


def describe(array: np.ndarray, limit: int = 12) -> str:
    """A short text for an array: its dtype, shape and first values."""
    flat = array.reshape(-1)
    shown = ", ".join(format_scalar(v) for v in flat[:limit])
    more = f", ... ({flat.size} values)" if flat.size > limit else ""
    return f"{dtype_name(array)}{list(array.shape)} [{shown}{more}]"


def format_scalar(value: Any) -> str:
    if isinstance(value, (str, bytes)):
        return repr(value)
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (complex, np.complexfloating)):
        return str(complex(value))
    if isinstance(value, (int, np.integer)) or type(value).__module__ == "ml_dtypes" and "int" in type(value).__name__:
        return str(int(value))
    number = float(value)
    if math.isnan(number):
        return "nan"
    if number == 0 and math.copysign(1, number) < 0:
        return "-0.0"
    return repr(number)


def dtype_name(array: np.ndarray) -> str:
    return from_numpy(array.dtype).name
