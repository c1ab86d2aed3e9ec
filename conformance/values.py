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
    if EXPONENT_NUMBER.fullmatch(token):
        exact = Decimal(token)  # exactly: 1e19 is an integer a float would round
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
        return _float_scalar(float(token), dt)
    raise ValueProblem(f"unknown value name '{token}' for {dt.name} (known: {', '.join(special)})")


_SCALARS = {"bool": _bool_scalar, "string": _string_scalar, "complex": _complex_scalar, "int": _int_scalar,
            "uint": _int_scalar, "float": _float_scalar}  # by DType.kind


def _generate(spec: dict, dt: DType, rng_seed: int) -> np.ndarray:
    unknown = set(spec) - set(GENERATOR_KEYS)
    if unknown:
        raise ValueProblem(f"unknown generator key(s) {sorted(unknown)} (allowed: {', '.join(GENERATOR_KEYS)})")
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ValueProblem("a generator needs 'shape': a list of non-negative integers")
    makers = [k for k in ("fill", "values", "random") if k in spec]
    if len(makers) != 1:
        raise ValueProblem("a generator needs exactly one of 'fill', 'values: arange' or 'random: [low, high]'")
    count = math.prod(shape)
    if count > MAX_GENERATED_ELEMENTS:
        raise ValueProblem(f"a generator of {count:,} elements is larger than conform writes ({MAX_GENERATED_ELEMENTS:,})")
    flat = _generated_values(makers[0], spec[makers[0]], dt, count, rng_seed)
    return pack([_scalar(v, dt) for v in flat], dt).reshape(shape)


def _generated_values(maker: str, arg: Any, dt: DType, count: int, seed: int) -> list[Any]:
    if maker == "fill":
        return [arg] * count
    if maker == "values":
        if arg != "arange":
            raise ValueProblem(f"'values' takes 'arange', not {arg!r}")
        return arange_values(dt, count)
    if not (isinstance(arg, list) and len(arg) == 2):
        raise ValueProblem("'random' takes [low, high]")
    low, high = (_scalar(a, dt) for a in arg)
    rng = np.random.default_rng(seed)
    if dt.kind in ("int", "uint"):
        draw_dtype = dt.np_dtype if dt.is_numpy_native else np.int16
        return [int(v) for v in rng.integers(low, high, size=count, endpoint=True, dtype=draw_dtype)]
    return [float(v) for v in rng.uniform(float(low), float(high), size=count)]


def arange_values(dt: DType, count: int) -> list[Any]:
    """Distinct-as-possible values 0, 1, 2, ... that every dtype can hold, for data worth slicing."""
    if dt.kind == "bool":
        return [i % 2 == 1 for i in range(count)]
    if dt.kind == "string":
        return [f"s{i}" for i in range(count)]
    if dt.kind == "complex":
        return [complex(i, -i) for i in range(count)]
    period = count if dt.bits >= 16 else (int(dt.max) + 1 if dt.kind in ("int", "uint") else 4)
    return [i % max(period, 1) for i in range(count)]


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
