"""What is known about execution providers' own semantics, to explain a failure in their terms.

DirectML's DML_ELEMENT_WISE_CLIP_OPERATOR_DESC takes FLOAT Min and Max: for an integer tensor they
are converted to the tensor type by truncation toward zero (for floats, by round-to-nearest-even).
An integer bound that float32 cannot hold exactly therefore changes before the clip runs.
"""

from __future__ import annotations

import math

import numpy as np

from .case import Example
from .dtypes import dtype

DML_PROVIDER = "DmlExecutionProvider"


def directml_clip_bound(bound: int, tensor_dtype: str) -> int | None:
    """The bound DirectML ends up using for an integer tensor, or None if float32 would overflow it."""
    as_float = float(np.float32(bound))
    truncated = math.trunc(as_float)
    dt = dtype(tensor_dtype)
    if not dt.lowest <= truncated <= dt.max:
        return None
    return truncated


def directml_clip_note(example: Example) -> str | None:
    """Why a DirectML-backed runtime may differ from ONNX on this Clip case, or None."""
    if example.op != "Clip" or not dtype(example.dtype).is_integer:
        return None
    notes = []
    for side in ("min", "max"):
        bound = example.inputs.get(side)
        if bound is None or bound.ndim != 0:
            continue
        value = int(bound)
        held = directml_clip_bound(value, example.dtype)
        if held != value:
            becomes = "overflows the tensor type" if held is None else f"becomes {held}"
            notes.append(f"{side} {value} is {float(np.float32(value)):.10g} as a FLOAT and {becomes} after truncation toward zero")
    if not notes:
        return None
    return ("DirectML's clip takes FLOAT Min/Max and converts them to the integer tensor type by truncation toward "
            "zero, so ONNX's exact integer bounds are not kept: " + "; ".join(notes))
