"""Traits every op has: causes any op may deviate by because of how a runtime carries a dtype.

An op's reference names the causes of deviations that are its own (`OpReference.traits`); these are
the causes that cut across every op, because a runtime stores or computes a whole dtype in a
narrower one: int64 kept in 32 bits, uint32/uint64 carried as int32, double computed as float32
(infinities saturated to FLT_MAX), int32 (and 64-bit integers) through float32, subnormals flushed, a NaN lost on the
way, a string tensor's storage, a conversion into float8 that does not saturate or into bfloat16
that truncates, a rank-0 case built as shape [1]. Each is a function of an `Example` saying
whether the case holds a value that such plumbing changes: in an input, an attribute, or the output the text gives (the op's reference's
first reading; an input the text finds invalid has none). `OpReference` merges `TRAITS` under an
op's own traits, so an op's trait of the same name keeps its meaning.

Each trait is sound (it holds wherever the value is there) and cheap: it returns at once unless an
input or output has the dtype it is about, and computes the text's output only then.
"""

from __future__ import annotations

from typing import Callable, Iterator

import ml_dtypes
import numpy as np

from ..case import Example

INT32_LOW, INT32_HIGH = -(2**31), 2**31  # [low, high): what a 32-bit signed integer holds
UNSIGNED_WIDE = (np.dtype(np.uint32), np.dtype(np.uint64))
DOUBLE = np.dtype(np.float64)
INT64 = np.dtype(np.int64)
INT32 = np.dtype(np.int32)
FLOAT8_MAX = {"float8e4m3fn": 448.0, "float8e5m2": 57344.0}  # largest finite values
SUBNORMAL_TYPES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), DOUBLE)
ONNX_NAMES = {INT64: "int64", DOUBLE: "double", UNSIGNED_WIDE[0]: "uint32", UNSIGNED_WIDE[1]: "uint64", INT32: "int32",
              SUBNORMAL_TYPES[0]: "float16", SUBNORMAL_TYPES[1]: "bfloat16", SUBNORMAL_TYPES[2]: "float"}


def holds_nan(value) -> bool:
    """Whether a value holds a NaN (any float type, ml_dtypes' included; never an integer or bool)."""
    array = np.asarray(value)
    if array.dtype.kind in "biuSUO":
        return False
    if array.dtype.kind == "c":
        return bool(np.isnan(array).any())
    try:
        with np.errstate(invalid="ignore"):  # float8e8m0's NaN warns on the way
            return bool(np.isnan(array.astype(np.float64)).any())
    except (TypeError, ValueError):
        return False


def nan_input(example: Example) -> bool:
    """Any input holding a NaN: the text's functions give NaN for NaN, which a runtime computing
    through clamps, min/max or approximations may not."""
    return any(value is not None and holds_nan(value) for value in example.inputs.values())


def infinite_input(example: Example) -> bool:
    """Any input holding +-inf: the text's sums and products carry an infinity where a runtime
    multiplying it by a weight of 0, or subtracting it from itself, makes NaN."""
    return any(value is not None and _float_infinity(value) for value in example.inputs.values())


def _float_infinity(value: np.ndarray) -> bool:
    try:
        return _holds_infinity(value)
    except TypeError:  # strings and other values that hold no infinity
        return False


def int64_beyond_int32(example: Example) -> bool:
    """An int64 value outside int32's range in an input, an integer attribute, or the text's
    output: what a runtime computing int64 in 32 bits changes."""
    if any(_beyond_int32(array) for array in _arrays(example, INT64)):
        return True
    if any(_attribute_beyond_int32(value) for value in example.attributes.values()):
        return True
    return any(_beyond_int32(array) for array in _text_outputs(example, INT64))


def unsigned_beyond_int32(example: Example) -> bool:
    """A uint32 or uint64 value of 2**31 or more (uint32's top bit set), in an input or the text's
    output: what a runtime carrying these types as int32 takes for a negative number, or cuts."""
    return any(_at_least_2_31(array) for array in (*_arrays(example, *UNSIGNED_WIDE), *_text_outputs(example, *UNSIGNED_WIDE)))


def empty_unsigned_wide(example: Example) -> bool:
    """A uint32 or uint64 input (or tensor attribute) with no elements: what a runtime reading an
    empty initializer of these types as int32/int64 (tract 0.23) types wrongly."""
    return any(array.size == 0 for array in _arrays(example, *UNSIGNED_WIDE))


def string_input(example: Example) -> bool:
    """A string tensor among the inputs: what a runtime whose string storage is not a plain buffer
    of elements may mishandle whatever the op."""
    return any(value is not None and value.dtype.kind in "OSU" for value in example.inputs.values())


def string_trailing_nul(example: Example) -> bool:
    """A string ending in NUL ('a\\x00'), in an input or a tensor attribute: what a runtime that
    keeps strings as C strings gives back shortened."""
    return any(isinstance(item, str) and item.endswith("\x00")
               for value in _arrays(example, np.dtype(object)) for item in value.reshape(-1))


def double_not_float32(example: Example) -> bool:
    """A double value, in an input or the text's output, that float32 does not hold exactly (it
    rounds to another value, or is beyond float32's range; infinities and NaN are held): what a
    runtime computing double as float32 changes."""
    return any(_not_float32(array) for array in (*_arrays(example, DOUBLE), *_text_outputs(example, DOUBLE)))


def double_infinity(example: Example) -> bool:
    """A double +-inf, in an input or the text's output: what a runtime converting double to
    float32 with saturation gives as +-FLT_MAX."""
    return any(_holds_infinity(array) for array in (*_arrays(example, DOUBLE), *_text_outputs(example, DOUBLE)))


def int32_not_float32(example: Example) -> bool:
    """An int32 or uint32 value, in an input or the text's output, that float32 does not hold
    exactly (beyond 2**24 and not a multiple of its spacing): what a runtime computing the type
    through float32 rounds."""
    dtypes = (INT32, UNSIGNED_WIDE[0])
    return any(_integer_not_float32(array) for array in (*_arrays(example, *dtypes), *_text_outputs(example, *dtypes)))


def wide_integer_not_float32(example: Example) -> bool:
    """An int64 or uint64 value, in an input or the text's output, that float32 does not hold
    exactly (beyond 2**24 and not a multiple of its spacing): what a runtime computing the type
    through float32 (after narrowing it to 32 bits) rounds, where int64-beyond-int32 need not hold."""
    dtypes = (INT64, UNSIGNED_WIDE[1])
    return any(_wide_not_float32(array) for array in (*_arrays(example, *dtypes), *_text_outputs(example, *dtypes)))


def subnormal(example: Example) -> bool:
    """A subnormal float value (float16, bfloat16, float or double), in an input or the text's
    output: what a runtime flushing denormals to zero gives as 0."""
    return any(_holds_subnormal(array) for array in (*_arrays(example, *SUBNORMAL_TYPES), *_text_outputs(example, *SUBNORMAL_TYPES)))


def beyond_float8_output(example: Example) -> bool:
    """A number (or an infinity) in an input beyond the largest finite value of a float8 output
    type (float8e4m3fn, float8e5m2): what a runtime converting into float8 without saturating
    gives as NaN or inf."""
    largest = [FLOAT8_MAX[name] for name in _output_types(example) if name in FLOAT8_MAX]
    if not largest:
        return False
    return any(_beyond(value, min(largest)) for value in example.inputs.values() if value is not None)


def inexact_into_bfloat16(example: Example) -> bool:
    """A bfloat16 output and a value of another type in an input that bfloat16 does not hold
    exactly: what a runtime converting into bfloat16 by truncation, not to nearest even, gets
    one step off."""
    if "bfloat16" not in _output_types(example):
        return False
    return any(_not_bfloat16(value) for value in example.inputs.values() if value is not None)


def rank_0(example: Example) -> bool:
    """Every input given is 0-d: a runtime that builds scalars as shape [1] answers [1], or does
    not convert the model."""
    given = [value for value in example.inputs.values() if value is not None]
    return bool(given) and all(np.ndim(value) == 0 for value in given)


def bfloat16_result_rounded(example: Example) -> bool:
    """A bfloat16 output whose exact value (the text's, before rounding: `Reading.precise`) bfloat16
    does not hold: what a runtime rounding into bfloat16 by truncation gets one step off."""
    if "bfloat16" not in _output_types(example):
        return False
    reading = _text_reading(example)
    return reading is not None and any(precise is not None and _not_bfloat16(precise) for precise in reading.precise)


def _arrays(example: Example, *dtypes: np.dtype) -> Iterator[np.ndarray]:
    """The example's inputs, and its tensor attributes, of one of `dtypes`."""
    for value in (*example.inputs.values(), *example.attributes.values()):
        if isinstance(value, np.ndarray) and value.dtype in dtypes:
            yield value


def _output_types(example: Example) -> set[str]:
    """The ONNX names of the example's output types, from its version and type binding."""
    return set(example.output_dtypes)


def _text_reading(example: Example):
    """The text's first reading of the example; None where the text finds it invalid, or its
    reference cannot answer it."""
    try:
        from . import for_op  # here: the registry imports this module

        expected = for_op(example.op).expected(example)
    except Exception:  # noqa: BLE001 - a case the reference cannot answer has no text output to look at
        return None
    return expected.readings[0] if expected.is_valid and expected.readings else None


def _text_outputs(example: Example, *dtypes: np.dtype) -> tuple[np.ndarray, ...]:
    """The outputs the text gives (its first reading) that have one of `dtypes`; none where no
    output has, or the text finds the input invalid. Computed only when some output has one."""
    try:
        if not _output_types(example) & {ONNX_NAMES[dtype] for dtype in dtypes}:
            return ()
    except Exception:  # noqa: BLE001 - a binding without the output's type parameter: no output to look at
        return ()
    reading = _text_reading(example)
    return () if reading is None else tuple(np.asarray(o) for o in reading.outputs if np.asarray(o).dtype in dtypes)


def _holds_infinity(array: np.ndarray) -> bool:
    return array.size > 0 and bool(np.isinf(array).any())


def _integer_not_float32(array: np.ndarray) -> bool:
    if array.size == 0:
        return False
    wide = array.astype(np.int64)
    return bool((wide.astype(np.float32).astype(np.int64) != wide).any())


def _wide_not_float32(array: np.ndarray) -> bool:
    if array.size == 0:
        return False
    values = [int(v) for v in array.reshape(-1)]
    return any(int(np.float32(v)) != v for v in values)


def _holds_subnormal(array: np.ndarray) -> bool:
    if array.size == 0:
        return False
    tiny = ml_dtypes.finfo(array.dtype).smallest_normal
    with np.errstate(invalid="ignore"):
        magnitude = np.abs(array.astype(np.float64))
    return bool(((magnitude > 0) & (magnitude < float(tiny))).any())


def _beyond(array: np.ndarray, largest: float) -> bool:
    """Whether a numeric array holds a magnitude above `largest` (NaN aside)."""
    if array.size == 0 or array.dtype.kind in "bOSU":
        return False
    with np.errstate(invalid="ignore", over="ignore"):
        magnitude = np.abs(array.astype(np.float64))
    return bool((magnitude > largest).any())


def _not_bfloat16(array: np.ndarray) -> bool:
    """Whether a numeric array of a type other than bfloat16 holds a finite value bfloat16 does not."""
    if array.size == 0 or array.dtype.kind in "bOSU" or array.dtype == SUBNORMAL_TYPES[1]:
        return False
    with np.errstate(invalid="ignore", over="ignore"):
        wide = array.astype(np.float64)
        narrowed = wide.astype(ml_dtypes.bfloat16).astype(np.float64)
    return bool(((narrowed != wide) & np.isfinite(wide)).any())


def _beyond_int32(array: np.ndarray) -> bool:
    return array.size > 0 and bool(((array < INT32_LOW) | (array >= INT32_HIGH)).any())


def _attribute_beyond_int32(value) -> bool:
    """An integer attribute (one, or a list) outside int32's range; a bool is no integer here."""
    values = value if isinstance(value, (list, tuple)) else [value]
    return any(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
               and not INT32_LOW <= int(v) < INT32_HIGH for v in values)


def _at_least_2_31(array: np.ndarray) -> bool:
    return array.size > 0 and bool((array >= INT32_HIGH).any())


def _not_float32(array: np.ndarray) -> bool:
    if array.size == 0:
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        narrowed = array.astype(np.float32).astype(np.float64)
    differs = (narrowed != array) & ~np.isnan(array)
    return bool(differs.any())


# Every op has these (OpReference merges them under its own traits).
TRAITS: dict[str, Callable[[Example], bool]] = {
    "nan-input": nan_input,
    "infinite-input": infinite_input,
    "int64-beyond-int32": int64_beyond_int32,
    "unsigned-beyond-int32": unsigned_beyond_int32,
    "empty-unsigned-wide": empty_unsigned_wide,
    "double-infinity": double_infinity,
    "int32-not-float32": int32_not_float32,
    "wide-integer-not-float32": wide_integer_not_float32,
    "subnormal": subnormal,
    "string-input": string_input,
    "string-trailing-nul": string_trailing_nul,
    "beyond-float8-output": beyond_float8_output,
    "inexact-into-bfloat16": inexact_into_bfloat16,
    "double-not-float32": double_not_float32,
    "rank-0": rank_0,
    "bfloat16-result-rounded": bfloat16_result_rounded,
}
