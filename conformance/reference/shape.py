"""Shape and Size: what an input's shape is, as int64 (exact: counts, not values).

Shape-15 adds `start` and `end`, a slice of the dims clamped to [0, r] after a negative one has r
added, as the text says in so many words; start > end gives an empty shape.
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from .base import Expected, OpReference, VersionSemantics, single


class Shape1(VersionSemantics):
    """Shape: the input's dims as a 1-D int64 tensor."""

    since = 1

    def dims(self, example: Example) -> list[int]:
        return list(example.inputs["data"].shape)

    def expected(self, example: Example) -> Expected:
        return single(np.array(self.dims(example), dtype=np.int64))


class Shape15(Shape1):
    """Shape-15: the dims from `start` (default 0) to `end` (exclusive, default r), each clamped
    to [0, r] after a negative one has r added."""

    since = 15

    def dims(self, example: Example) -> list[int]:
        dims = super().dims(example)
        rank = len(dims)
        start, end = (_clamped(example.attributes.get(name), default, rank) for name, default in (("start", 0), ("end", rank)))
        return dims[start:end] if start < end else []


def _clamped(value, default: int, rank: int) -> int:
    axis = default if value is None else int(value)
    axis = axis + rank if axis < 0 else axis
    return min(max(axis, 0), rank)


class Size1(VersionSemantics):
    """Size: the input's element count as an int64 scalar."""

    since = 1

    def expected(self, example: Example) -> Expected:
        return single(np.array(math.prod(example.inputs["data"].shape), dtype=np.int64))


def shape_sliced_out_of_range(example: Example) -> bool:
    """Shape-15's start or end outside [-r, r]: the text clamps it."""
    rank = example.inputs["data"].ndim
    return any(value is not None and not -rank <= int(value) <= rank
               for value in (example.attributes.get("start"), example.attributes.get("end")))


REFERENCES = (
    OpReference(op="Shape", dtype_param="T", semantics=(Shape1, Shape15), data_inputs=("data",),
                traits={"start-or-end-clamped": shape_sliced_out_of_range}),
    OpReference(op="Size", dtype_param="T", semantics=(Size1,), data_inputs=("data",)),
)
