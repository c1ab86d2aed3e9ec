"""Reference for Clip (versions 1, 6, 11, 12, 13), from the spec text in shared/spec.

Every version computes `Min(max, Max(input, min))` (Clip-13's function body; for min > max it
gives max everywhere, which Clip-13 states and onnx's node test expects of earlier versions).
What differs is where the bounds come from and what an absent bound means:

- Clip-1: `min`/`max` FLOAT attributes, no schema default; the text says they default to
  numeric_limits lowest()/max().
- Clip-6: the same attributes with defaults of +-3.402823e+38 written in the text.
- Clip-11 and later: optional scalar inputs of type T.

Ambiguities are returned as several readings (see `_missing_bound_candidates` and `_nan_bound`).
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from ..dtypes import DType, dtype, from_numpy
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings
from .plumbing import holds_nan

LIMITS_SENTENCE = "They default to numeric_limits::lowest() and numeric_limits::max(), respectively."
SCALAR_SENTENCE = "min/max: It must be a scalar(tensor of empty shape)."
MIN_GT_MAX = (
    "the text of versions before 13 says nothing about min > max; onnx's node test "
    "test_clip_min_greater_than_max expects every element to be max, and a runtime may also reject it"
)
NAN_BOUND_REFUSED = (
    "the text of versions before 13 says nothing about a NaN min or max; a kernel that checks min <= max, as it may "
    "for min > max (onnxruntime's Clip-6 does), finds it false and may reject it too"
)
CLIP6_TEXT_DEFAULT = 3.402823e38  # the literal written in Clip-6's attribute defaults


def clip(x: np.ndarray, low: float | int | None, high: float | int | None) -> np.ndarray:
    """`Min(high, Max(x, low))` computed exactly: ints in their own type, floats in float64."""
    dt = dtype_of(x)
    with np.errstate(invalid="ignore"):  # widening a signalling NaN quiets it: still a NaN
        work = x.astype(np.float64) if dt.kind == "float" else x
        if low is not None:
            work = np.maximum(work, _as(work, low))
        if high is not None:
            work = np.minimum(work, _as(work, high))
    with np.errstate(all="ignore"):
        return work.astype(x.dtype).reshape(x.shape)


def _as(work: np.ndarray, bound: float | int) -> np.ndarray:
    return np.array(bound, dtype=work.dtype)


def dtype_of(array: np.ndarray) -> DType:
    return from_numpy(array.dtype)


def _in_type(value: float, dt: DType) -> float | int:
    """A float32 attribute value as the tensor type T would hold it."""
    with np.errstate(all="ignore"):
        held = np.array(np.float32(value)).astype(dt.np_dtype)
    return float(held) if dt.kind == "float" else int(held)


class _ClipSemantics(VersionSemantics):
    """Shared computation: gather bound candidates per side, then one reading per combination."""

    def bound(self, example: Example, side: str) -> object:  # pragma: no cover - abstract
        raise NotImplementedError

    def defaults(self, example: Example, dt: DType, side: str) -> list[tuple[str, float | int | None]]:
        limit = dt.lowest if side == "min" else dt.max
        candidates = [("numeric_limits default", float(limit) if dt.kind == "float" else int(limit))]
        if dt.has_inf:
            candidates.append(("absent bound leaves +-inf (Clip-13 function body)", None))
        return candidates

    def may_reject(self, low: object, high: object) -> str | None:
        return None

    def expected(self, example: Example) -> Expected:
        invalid = self.invalid(example)
        if invalid is not None:
            return Expected(invalid=invalid)
        x = example.inputs["input"]
        dt = dtype(example.dtype)
        low_candidates = self.candidates(example, "min", dt)
        high_candidates = self.candidates(example, "max", dt)
        options = [
            Reading((clip(x, low, high),), f"min: {low_label}; max: {high_label}")
            for low_label, low in low_candidates
            for high_label, high in high_candidates
        ]
        # Each bound as given (a NaN one too), an absent one at its first default.
        given = [self.bound(example, side) for side in ("min", "max")]
        low, high = (value if value is not None else found[0][1]
                     for value, found in zip(given, (low_candidates, high_candidates)))
        return readings(
            options,
            ambiguity="; ".join(sorted({o.label for o in options})),
            may_reject=self.may_reject(low, high),
        )

    def invalid(self, example: Example) -> Invalid | None:
        return None

    def candidates(self, example: Example, side: str, dt: DType) -> list[tuple[str, float | int | None]]:
        value = self.bound(example, side)
        if value is None:
            return self.defaults(example, dt, side)
        if dt.kind == "float" and np.isnan(value):
            return [("NaN bound ignored", None), ("NaN bound gives NaN", float("nan"))]
        return [("given", value)]


class Clip1(_ClipSemantics):
    """Clip-1: bounds are FLOAT attributes with no schema default; `consumed_inputs` is ignored."""

    since = 1

    def bound(self, example: Example, side: str) -> float | int | None:
        value = example.attributes.get(side)
        return None if value is None else _in_type(value, dtype(example.dtype))

    def may_reject(self, low: object, high: object) -> str | None:
        """min > max, or a NaN bound, which fails a min <= max check too (None: a bound left out)."""
        if any(bound is not None and np.isnan(bound) for bound in (low, high)):
            return NAN_BOUND_REFUSED
        if low is not None and high is not None and low > high:
            return MIN_GT_MAX
        return None


class Clip6(Clip1):
    """Clip-6: as Clip-1, but an absent bound may also be read as the attribute's default.

    The text writes the default as +-3.402823e+38, which a FLOAT attribute holds as 3.4028230e+38,
    not FLT_MAX; the schema onnx ships stores FLT_MAX. Each, held in T, is an allowed reading next
    to numeric_limits of T.
    """

    since = 6

    def defaults(self, example: Example, dt: DType, side: str) -> list[tuple[str, float | int | None]]:
        sign = -1.0 if side == "min" else 1.0
        schema_default = example.version.attribute(side).default
        extra = [("attribute default +-3.402823e+38 as written in the text", _in_type(sign * CLIP6_TEXT_DEFAULT, dt))]
        if schema_default is not None:
            extra.append(("attribute default as onnx's schema stores it", _in_type(schema_default, dt)))
        return super().defaults(example, dt, side) + extra


class Clip11(Clip1):
    """Clip-11 and Clip-12: bounds are optional scalar inputs of type T."""

    since = 11

    def bound(self, example: Example, side: str) -> float | int | None:
        value = example.inputs.get(side)
        if value is None:
            return None
        return float(value.astype(np.float64)) if dtype(example.dtype).kind == "float" else int(value)

    def invalid(self, example: Example) -> Invalid | None:
        for side in ("min", "max"):
            value = example.inputs.get(side)
            if value is not None and value.ndim != 0:
                return Invalid("bound-not-scalar", f"{example.version.label}: {SCALAR_SENTENCE}")
        return None


class Clip13(Clip11):
    """Clip-13: as Clip-11, and min > max is defined (every element is max)."""

    since = 13

    def may_reject(self, low: object, high: object) -> str | None:
        return None


def nan_bound(example: Example) -> bool:
    """A min or max holding NaN: an attribute before Clip-11, an input of any shape since (an
    invalid case's [1]-shaped bound too, which the version's `bound` does not read)."""
    bounds = (example.attributes.get(side, example.inputs.get(side)) for side in ("min", "max"))
    return any(bound is not None and bool(np.isnan(np.asarray(bound).astype(np.float64)).any()) for bound in bounds)


def nan_input(example: Example) -> bool:
    """A NaN in the data input (not a bound): the text clips only values below min or above max,
    and NaN is neither, so it stays NaN."""
    x = example.inputs.get("input")
    return x is not None and holds_nan(x)


# DirectML's DML_ELEMENT_WISE_CLIP_OPERATOR_DESC takes FLOAT Min and Max: for an integer tensor they
# are converted to the tensor type by truncation toward zero (for floats, by round-to-nearest-even).
# An integer bound that float32 cannot hold exactly therefore changes before the clip runs.
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


REFERENCE = OpReference(
    op="Clip",
    dtype_param="T",
    data_inputs=("input",),
    semantics=(Clip1, Clip6, Clip11, Clip13),
    traits={"nan-bound": nan_bound, "nan-input": nan_input},
    rules=("bound-not-scalar",),
    provider_notes={"DmlExecutionProvider": directml_clip_note},
)
