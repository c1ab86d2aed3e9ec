"""Random BitCast cases: inputs drawn as values of T1 (its boundaries weighted in) or as raw bit
patterns of its width (NaN payloads, signalling NaNs, all-ones, the sign bit alone), shapes from
scalars to empty tensors. Which T1 and T2 a case has is its type binding: a pair of different
widths is the invalid share, as the binding decides."""

from __future__ import annotations

import numpy as np

from ..case import Example
from ..dtypes import DType, dtype
from ..reference.bit_cast import from_bits, target_attribute
from ..registry import OpVersion
from .common import Choices, array, one_in, pick, shape

# Unsigned types that hold each width's bits, element by element.
CARRIER = {2: "uint2", 4: "uint4", 8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"}


def example(choices: Choices, version: OpVersion, binding: dict[str, str]) -> Example:
    source = dtype(binding["T1"])
    dims = shape(choices, 0, 4)
    x = _input(choices, source, dims)
    attributes = target_attribute(version, binding)
    return Example(version, "hypothesis", dict(binding), {"input": x}, attributes, "hypothesis", "T1")


def _input(choices: Choices, source: DType, dims: tuple[int, ...]) -> np.ndarray:
    """Values of T1, or (one case in two, for a type whose every bit pattern is an input) raw bits."""
    if source.name == "bool" or not one_in(choices, 2):
        return array(choices, source, dims)
    return raw_bits(choices, source, dims)


def raw_bits(choices: Choices, source: DType, dims: tuple[int, ...]) -> np.ndarray:
    """Elements of `source` made from drawn bit patterns of its width: the carrier's values (its
    boundaries, 0 and all ones among them), with NaN patterns planted in a float type."""
    if source.bits == 128:  # complex128: two 64-bit halves
        halves = array(choices, dtype("uint64"), (*dims, 2))
        return from_bits(np.ascontiguousarray(halves).view(np.uint8).reshape(*dims, 16), source).copy()
    carrier = dtype(CARRIER[source.bits])
    bits = array(choices, carrier, dims)
    if source.kind in ("float", "complex") and bits.size and one_in(choices, 2):
        flat = bits.reshape(-1)
        flat[choices.integer(0, flat.size - 1)] = pick(choices, nan_patterns(source))
    if source.bits < 8:
        raw = np.ascontiguousarray(bits).view(np.uint8).reshape(*dims, 1)
    else:
        raw = np.ascontiguousarray(bits).view(np.uint8).reshape(*dims, source.bits // 8)
    return from_bits(raw, source).copy()


def nan_patterns(source: DType) -> tuple[int, ...]:
    """Bit patterns of a float type's width worth planting: NaNs with payloads (quiet and
    signalling, either sign), the sign bit alone (-0.0), all ones."""
    width = source.bits
    ones = (1 << width) - 1
    sign = 1 << (width - 1)
    if source.kind == "complex" or source.name not in _EXPONENT_BITS:  # float8e8m0: no sign, no mantissa
        return (ones, sign, ones ^ sign)
    exponent_bits = _EXPONENT_BITS[source.name]
    mantissa_bits = width - 1 - exponent_bits
    exponent = ((1 << exponent_bits) - 1) << mantissa_bits
    quiet = 1 << (mantissa_bits - 1) if mantissa_bits else 0
    return tuple(dict.fromkeys((exponent | quiet | 1, exponent | 1, sign | exponent | quiet | 5, ones, sign, ones ^ sign)))


# The exponent's width in the IEEE-like float types (the rest below the sign is the mantissa).
_EXPONENT_BITS = {"double": 11, "float": 8, "float16": 5, "bfloat16": 8, "float8e4m3fn": 4, "float8e4m3fnuz": 4,
                  "float8e5m2": 5, "float8e5m2fnuz": 5, "float4e2m1": 2}
