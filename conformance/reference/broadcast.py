"""Broadcasting, as the ONNX texts define it, once for every op that broadcasts.

Three rules, each deciding by the text whether a set of shapes is valid and what the output shape
is, and each giving the inputs as arrays of the output's shape:

- multidirectional (Numpy-style; docs/Broadcasting.md, "This operator supports multidirectional
  (i.e., Numpy-style) broadcasting"): shapes are aligned at their last dims; each pair of dims is
  equal or one of them is 1.
- unidirectional (PRelu from 7, Gemm's C): the second shape broadcasts to the first; the output
  has the first's shape.
- legacy (versions 1 and 6 of the arithmetic, logical and comparison ops, which carry the
  `broadcast` and `axis` attributes): without `broadcast`, both shapes must be equal; with it, B
  is a suffix of A's shape (or, given `axis`, a contiguous run of A's dims starting at `axis`), a
  size-1 tensor or a scalar; the output has A's shape.

Which rule a version follows is read from its text (`rule_of`), so an op declares nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from ..registry import OpVersion
from .base import Invalid

MULTIDIRECTIONAL, UNIDIRECTIONAL, LEGACY, SAME_SHAPE, NONE = "multidirectional", "unidirectional", "legacy", "same", "none"
NOT_BROADCASTABLE = "shapes-not-broadcastable"
MULTI_SENTENCE = ("Broadcasting.md: multidirectional broadcasting: for each dimension (aligned at the last), "
                  "the lengths are equal or one of them is 1")
UNI_SENTENCE = "Broadcasting.md: unidirectional broadcasting: tensor B is broadcastable to tensor A's shape"
LEGACY_SENTENCE = ("When broadcasting is specified, the second tensor can either be of element size 1 (including a "
                   "scalar tensor and any tensor with rank equal to or smaller than the first tensor), or having its "
                   "shape as a contiguous subset of the first tensor's shape.")
LEGACY_OFF_SENTENCE = "broadcast: Pass 1 to enable broadcasting (default 0): without it, A and B have the same shape"
SAME_SENTENCE = "All inputs and outputs must have the same shape and data type."


@dataclass(frozen=True)
class Broadcast:
    """The output shape of valid inputs, and the inputs viewed at that shape; or why they are invalid."""

    shape: tuple[int, ...] = ()
    arrays: tuple[np.ndarray, ...] = ()
    invalid: Invalid | None = None


@cache
def rule_of(version: OpVersion) -> str:
    """The broadcasting rule of a version, from its schema: `broadcast` attribute -> legacy; else
    what its text says; one input -> none."""
    if version.attribute("broadcast") is not None:
        return LEGACY
    text = _doc(version)
    if "unidirectional" in text:
        return UNIDIRECTIONAL
    if "multidirectional" in text or "Numpy-style" in text:
        return MULTIDIRECTIONAL
    if len(version.inputs) == 1 and not version.inputs[0].variadic:
        return NONE
    return SAME_SHAPE


def _doc(version: OpVersion) -> str:
    import onnx.defs

    return onnx.defs.get_schema(version.op, version.since_version, "").doc or ""


def multidirectional_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The broadcast shape of `shapes`, or None when two dims disagree and neither is 1."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(rank):
        sizes = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def legacy_b_shape(a_shape: tuple[int, ...], b_shape: tuple[int, ...], axis: int | None) -> tuple[int, ...] | None:
    """B's shape padded with 1s to A's rank, as legacy broadcasting places it; None when B does not
    fit. `axis` None means B is aligned with A's trailing dims."""
    if int(np.prod(b_shape, dtype=np.int64)) == 1 and len(b_shape) <= len(a_shape):
        return (1,) * len(a_shape)
    if len(b_shape) > len(a_shape):
        return None
    start = len(a_shape) - len(b_shape) if axis is None else axis + (len(a_shape) if axis < 0 else 0)
    if not 0 <= start <= len(a_shape) - len(b_shape) or tuple(a_shape[start:start + len(b_shape)]) != tuple(b_shape):
        return None
    return (1,) * start + tuple(b_shape) + (1,) * (len(a_shape) - start - len(b_shape))


def broadcast(version: OpVersion, arrays: list[np.ndarray], attributes: dict, rule: str | None = None) -> Broadcast:
    """Apply the version's rule (or `rule`, where an op's text misleads `rule_of`) to the inputs
    (in the node's order)."""
    rule = rule or rule_of(version)
    shapes = [a.shape for a in arrays]
    if rule == NONE:
        return Broadcast(shapes[0], tuple(arrays))
    if rule == SAME_SHAPE:
        if len(set(shapes)) > 1:
            return Broadcast(invalid=Invalid(NOT_BROADCASTABLE, f"{version.label}: {SAME_SENTENCE}"))
        return Broadcast(shapes[0], tuple(arrays))
    if rule == LEGACY:
        return _legacy(version, arrays, attributes)
    if rule == UNIDIRECTIONAL:
        target = shapes[0]
        if multidirectional_shape([target, *shapes[1:]]) != tuple(target):
            return Broadcast(invalid=Invalid(NOT_BROADCASTABLE, f"{version.label}: {UNI_SENTENCE}"))
        return Broadcast(tuple(target), tuple(np.broadcast_to(a, target) for a in arrays))
    out = multidirectional_shape(shapes)
    if out is None:
        return Broadcast(invalid=Invalid(NOT_BROADCASTABLE, f"{version.label}: {MULTI_SENTENCE}"))
    return Broadcast(out, tuple(np.broadcast_to(a, out) for a in arrays))


def _legacy(version: OpVersion, arrays: list[np.ndarray], attributes: dict) -> Broadcast:
    a, b = arrays
    if not attributes.get("broadcast"):
        if a.shape != b.shape:
            return Broadcast(invalid=Invalid(NOT_BROADCASTABLE, f"{version.label}: {LEGACY_OFF_SENTENCE}"))
        return Broadcast(a.shape, (a, b))
    placed = legacy_b_shape(a.shape, b.shape, attributes.get("axis"))
    if placed is None:
        return Broadcast(invalid=Invalid(NOT_BROADCASTABLE, f"{version.label}: {LEGACY_SENTENCE}"))
    return Broadcast(a.shape, (a, np.broadcast_to(b.reshape(placed), a.shape)))
