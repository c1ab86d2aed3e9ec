"""Repeating: Expand and Tile (data-movement family, movement.py).

Expand broadcasts its input to a shape by the multidirectional rule; Tile lays copies of its input
side by side along each axis. Their maps are numpy's broadcast and tile of the input's positions;
the output can hold far more elements than the input, so each states its output's size before any
array is made (`output_elements_from`).
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from .base import Invalid, OpReference
from .movement import MovementSemantics, Moved, one_d, positions

EXPAND_RULE = ("Dimensions are right alignment; Two corresponding dimensions must have the same value, or one of them "
               "is equal to 1.")
EXPAND_NEGATIVE = "shape: A 1-D tensor indicates the shape you want to expand to: a dimension is a size, not below 0"
SHAPE_1D = "shape: A 1-D tensor indicates the shape you want to expand to"
TILE_REPEATS_LENGTH = "repeats: 1D int64 tensor of the same length as input's dimension number"
TILE_REPEATS_NEGATIVE = "repeats: numbers of repeated copies along input's dimensions: a count, not below 0"
TILE_1_SCALARS = "tiles, axis: Number of repeated copies to make of the input tensor; Axis along which to repeat (whole numbers)"
TILE_1_AXIS = "axis: Axis along which to repeat (an axis of the input)"


class Expand8(MovementSemantics):
    """Expand: `input` broadcast with `shape` (right-aligned; equal dims, or one of them 1)."""

    since = 8

    def moved(self, example: Example) -> Moved | Invalid:
        data = example.inputs["input"]
        dims = expanded_dims(example)
        if isinstance(dims, Invalid):
            return dims
        return Moved((np.broadcast_to(positions([data.shape])[0], dims).copy(),))


def expanded_dims(example: Example) -> tuple[int, ...] | Invalid:
    """Expand's output dims by the text's rule, or the sentence that forbids the shape."""
    shape = one_d(example, "shape", SHAPE_1D)
    if isinstance(shape, Invalid):
        return shape
    if any(d < 0 for d in shape):
        return Invalid("negative-dim", EXPAND_NEGATIVE)
    data_dims = list(example.inputs["input"].shape)
    rank = max(len(data_dims), len(shape))
    a = [1] * (rank - len(data_dims)) + data_dims
    b = [1] * (rank - len(shape)) + shape
    dims = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            return Invalid("not-broadcastable", EXPAND_RULE)
        dims.append(y if x == 1 else x)
    return tuple(dims)


def expand_elements(example: Example) -> int:
    dims = expanded_dims(example)
    return 0 if isinstance(dims, Invalid) else math.prod(dims)


class Tile1(MovementSemantics):
    """Tile-1: `tiles` copies of the input laid along `axis` (both scalars of the input's type T)."""

    since = 1

    def repeats(self, example: Example) -> list[int] | Invalid:
        data = example.inputs["input"]
        written = []
        for name in ("tiles", "axis"):
            value = example.inputs[name].astype(np.float64).reshape(-1)
            if value.size != 1 or not np.isfinite(value[0]) or value[0] % 1:
                return Invalid("not-whole-scalar", TILE_1_SCALARS)
            written.append(int(value[0]))
        tiles, axis = written
        if not 0 <= axis < data.ndim:
            return Invalid("axis-out-of-range", TILE_1_AXIS)
        if tiles < 0:
            return Invalid("negative-repeats", TILE_REPEATS_NEGATIVE)
        return [tiles if k == axis else 1 for k in range(data.ndim)]

    def moved(self, example: Example) -> Moved | Invalid:
        repeats = self.repeats(example)
        if isinstance(repeats, Invalid):
            return repeats
        data = example.inputs["input"]
        return Moved((np.tile(positions([data.shape])[0], repeats).reshape(tiled_dims(data.shape, repeats)),))


class Tile6(Tile1):
    """Tile-6: `repeats`, one count per input dim (numpy's tile without broadcasting)."""

    since = 6

    def repeats(self, example: Example) -> list[int] | Invalid:
        repeats = one_d(example, "repeats", TILE_REPEATS_LENGTH)
        if isinstance(repeats, Invalid):
            return repeats
        if len(repeats) != example.inputs["input"].ndim:
            return Invalid("repeats-length", TILE_REPEATS_LENGTH)
        if any(r < 0 for r in repeats):
            return Invalid("negative-repeats", TILE_REPEATS_NEGATIVE)
        return repeats


def tiled_dims(shape: tuple[int, ...], repeats: list[int]) -> tuple[int, ...]:
    return tuple(d * r for d, r in zip(shape, repeats))


def tile_elements(example: Example) -> int:
    semantics = TILE.semantics_for(example.version)
    repeats = semantics.repeats(example)
    return 0 if isinstance(repeats, Invalid) else math.prod(tiled_dims(example.inputs["input"].shape, repeats))


def expand_to_zero(example: Example) -> bool:
    """Expand to a shape with a dim of 0: a size-0 output."""
    shape = example.inputs.get("shape")
    return shape is not None and shape.ndim == 1 and 0 in shape.tolist()


def tiles_input(example: Example) -> bool:
    """Tile-1's form: the copies and the axis as the inputs `tiles` and `axis`."""
    return example.inputs.get("tiles") is not None


EXPAND = OpReference(op="Expand", dtype_param="T", semantics=(Expand8,), data_inputs=("input",), shape_inputs=("shape",),
                     output_elements_from=expand_elements, traits={"expand-to-zero": expand_to_zero},
                     rules=("negative-dim", "not-broadcastable", "not-1d"))
TILE = OpReference(op="Tile", dtype_param="T", semantics=(Tile1, Tile6), data_inputs=("input",),
                   output_elements_from=tile_elements, traits={"tiles-input": tiles_input},
                   rules=("not-whole-scalar", "axis-out-of-range", "negative-repeats", "repeats-length", "not-1d"))
REFERENCES = (EXPAND, TILE)
