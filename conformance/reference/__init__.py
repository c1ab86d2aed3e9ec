"""Built-in references, one module per op, registered here explicitly.

Adding an op: an element-wise op is an `Elementwise` declaration in the family module of its
kind (arithmetic, activation, ...; see elementwise.py); any other op gets `reference/<op>.py`
ending in a `REFERENCE = OpReference(...)`, added to `_REFERENCES` below. The registry then knows
the op, and `conform list` shows it.
"""

from __future__ import annotations

from ..errors import UsageError
from . import (activation, arithmetic, bitwise, cast, clip, comparison, constant_of_shape, elementwise, logical, math_unary,
               quantize, selection, slice, trigonometry, variadic)
from .base import Expected, Invalid, OpReference, Reading

# The element-wise family's modules: each declares its ops in DECLARED (see elementwise.py).
FAMILY_MODULES = (arithmetic, activation, math_unary, comparison, logical, bitwise, selection, variadic, trigonometry)

_REFERENCES: tuple[OpReference, ...] = (
    clip.REFERENCE, constant_of_shape.REFERENCE, slice.REFERENCE,
    cast.REFERENCE, cast.LIKE_REFERENCE,
    quantize.QUANTIZE_REFERENCE, quantize.DEQUANTIZE_REFERENCE,
    *(elementwise.reference(op) for module in FAMILY_MODULES for op in module.DECLARED),
)


_BY_NAME = {r.op.lower(): r for r in _REFERENCES}
_BY_EXACT_NAME = {r.op: r for r in _REFERENCES}  # a case's op, asked several times per case


def covered_ops() -> list[str]:
    return [r.op for r in _REFERENCES]


def for_op(op: str) -> OpReference:
    """The reference for an op name (case-insensitive); UsageError listing the covered ops."""
    found = _BY_EXACT_NAME.get(op)
    if found is not None:
        return found
    if op.lower() in _BY_NAME:
        return _BY_NAME[op.lower()]
    raise UsageError(f"unknown op '{op}' (covered: {', '.join(covered_ops())})")


__all__ = ["Expected", "Invalid", "OpReference", "Reading", "covered_ops", "for_op"]
