"""Reference for BitCast (version 26), from the spec text.

"Reinterprets the binary representation of a tensor as a different data type, specified by the
'to' attribute. Unlike Cast, BitCast preserves the exact bit pattern without any value
conversion. The target data type must have the same bit-width as the input data type. The output
tensor has the same shape as the input tensor. All types except string are supported.
Implementations must treat the underlying bytes as little endian."

So each element's bits become one element of T2: a pair of types of different widths is invalid
(the text changes no dim, unlike other frameworks' bitcasts). Widths are the types' own: 4 bits
for int4, uint4 and float4e2m1, 2 for int2 and uint2, 8 for bool (as ONNX stores one, a byte,
which onnx's node test test_bitcast_bool_to_uint8 also reads), 64 for complex64 and 128 for
complex128. A bool made of a byte other than 0 or 1 has no value the text names: any bool is
allowed there.
"""

from __future__ import annotations

import sys

import numpy as np

from ..case import Example
from ..dtypes import DType, dtype
from ..registry import OpVersion
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, single
from .cast import to_type_name

SAME_WIDTH = "The target data type must have the same bit-width as the input data type."


class BitCast26(VersionSemantics):
    """Each element's bits, read as T2: shape kept, every bit kept (NaN payloads included)."""

    since = 26

    def expected(self, example: Example) -> Expected:
        source, target = dtype(example.types["T1"]), dtype(example.types["T2"])
        if source.bits != target.bits:
            return Expected(invalid=Invalid("width-differs", f"{example.version.label}: {SAME_WIDTH} "
                                                             f"({source.name}: {source.bits} bits, {target.name}: {target.bits})"))
        output = reinterpret(example.inputs["input"], source, target)
        loose = bool_bytes_not_0_or_1(example.inputs["input"], source, target)
        if loose is None or not loose.any():
            return single(output)
        # Such a byte is no bool ONNX defines: any bool passes there.
        output = output.copy()
        output[loose] = True
        return Expected(readings=(Reading((output,), f"any bool where the byte is neither 0 nor 1 ({int(loose.sum())} of "
                                                     f"{loose.size} elements)", free=(loose,)),))


def bits_of(x: np.ndarray, source: DType) -> np.ndarray:
    """Each element's bits as bytes, little endian: shape (*x.shape, bytes per element); a 2- or
    4-bit element is one byte holding its bits in the low end (as ml_dtypes stores it)."""
    if source.bits < 8:
        return (np.ascontiguousarray(x).view(np.uint8) & ((1 << source.bits) - 1)).reshape(*x.shape, 1)
    little = np.ascontiguousarray(x)
    if sys.byteorder == "big":  # the text's bytes are little endian, whatever the machine's
        little = little.byteswap()
    return little.view(np.uint8).reshape(*x.shape, source.bits // 8)


def from_bits(raw: np.ndarray, target: DType) -> np.ndarray:
    """The elements of `target` whose bits `raw` holds (see `bits_of`)."""
    shape = raw.shape[:-1]
    flat = np.ascontiguousarray(raw).reshape(-1)
    out = flat.view(target.np_dtype)
    if sys.byteorder == "big" and target.bits >= 16:
        out = out.byteswap()
    return out.reshape(shape)


def reinterpret(x: np.ndarray, source: DType, target: DType) -> np.ndarray:
    """`x`'s bits as `target` (the same width)."""
    return from_bits(bits_of(x, source), target).copy()


def bool_bytes_not_0_or_1(x: np.ndarray, source: DType, target: DType) -> np.ndarray | None:
    """Where a bool target's byte is neither 0 nor 1 (None for another target)."""
    if target.name != "bool":
        return None
    raw = bits_of(x, source).reshape(x.shape)
    return raw > 1


# --- facts of a case ----------------------------------------------------------------------------


def _types(example: Example) -> tuple[DType, DType]:
    return dtype(example.types["T1"]), dtype(example.types["T2"])


def same_type(example: Example) -> bool:
    """T1 and T2 are one type: the output is the input."""
    source, target = _types(example)
    return source.name == target.name


def nan_in_input(example: Example) -> bool:
    """A float or complex input holds a NaN (its payload, any bits, must come through)."""
    x = example.inputs["input"]
    source, _ = _types(example)
    if source.kind not in ("float", "complex") or x.size == 0:
        return False
    with np.errstate(invalid="ignore"):
        wide = x if source.kind == "complex" else x.astype(np.float64)
        return bool(np.isnan(wide).any())


def to_float_nan(example: Example) -> bool:
    """The output is of a float type and holds a NaN bit pattern (made from an integer's bits)."""
    source, target = _types(example)
    if target.kind not in ("float", "complex") or source.bits != target.bits:
        return False
    out = reinterpret(example.inputs["input"], source, target)
    with np.errstate(invalid="ignore"):
        wide = out if target.kind == "complex" else out.astype(np.float64)
        return bool(np.isnan(wide).any())


def sub_byte(example: Example) -> bool:
    """A 2- or 4-bit type on either side (packed two or four to a byte where stored)."""
    source, target = _types(example)
    return source.bits < 8 or target.bits < 8


def bool_side(example: Example) -> bool:
    """bool on either side."""
    source, target = _types(example)
    return "bool" in (source.name, target.name)


def to_bool_not_0_or_1(example: Example) -> bool:
    """A bool output made of a byte other than 0 or 1 (any bool allowed there)."""
    source, target = _types(example)
    loose = bool_bytes_not_0_or_1(example.inputs["input"], source, target) if source.bits == target.bits else None
    return loose is not None and bool(loose.any())


def complex_side(example: Example) -> bool:
    """complex64 or complex128 on either side."""
    source, target = _types(example)
    return source.kind == "complex" or target.kind == "complex"


def to_problem(example: Example) -> str | None:
    """Where `to` names another type than the binding's T2 (a case file's or a stored model's mistake)."""
    named, bound = to_type_name(example.attributes["to"]), dtype(example.types["T2"]).name
    return None if named == bound else f"'to' names {named}, but the output's type (T2) is {bound}"


def target_attribute(version: OpVersion, binding: dict[str, str]) -> dict:
    """BitCast's `to`, which the type binding's T2 fixes (the DataType enum's number)."""
    return {"to": dtype(binding["T2"]).elem_type}


TRAITS = {
    "same-type": same_type,
    "nan-in-input": nan_in_input,
    "nan-made-from-bits": to_float_nan,
    "sub-byte-type": sub_byte,
    "bool-type": bool_side,
    "to-bool-not-0-or-1": to_bool_not_0_or_1,
    "complex-type": complex_side,
}


REFERENCE = OpReference(
    op="BitCast",
    dtype_param="T1",
    data_inputs=("input",),
    semantics=(BitCast26,),
    binding_attributes=target_attribute,
    binding_problem=to_problem,
    rules=("width-differs",),
    traits=TRAITS,
)
