"""What the data-movement family's strategies share: axes drawn at their boundaries (-r, -1, 0,
r-1, and just outside where the text forbids them), the index lists the family's inputs carry, and
the Example they make."""

from __future__ import annotations

import numpy as np

from ..case import Example, bound_types
from ..reference import for_op
from ..registry import OpVersion
from .common import Choices, pick


def axis_value(choices: Choices, rank: int, negative: bool, high: int | None = None) -> int:
    """An axis in [0, high] (high: rank - 1 unless given), written negative half the time where the
    text counts from the back; the boundaries (first, last) weighted in. Shrinks to 0."""
    high = rank - 1 if high is None else high
    axis = pick(choices, (0, high, *range(high + 1))) if high >= 0 else 0
    if negative and choices.integer(0, 1):
        return axis - rank
    return axis


def outside_axis(choices: Choices, rank: int, negative: bool, high: int | None = None) -> int:
    """An axis just outside what the text allows: high + 1, or -rank - 1 where negatives count back."""
    high = rank - 1 if high is None else high
    return pick(choices, (high + 1, -rank - 1) if negative else (high + 1, -1))


def int64s(values: list[int]) -> np.ndarray:
    """An index-carrying input (`shape`, `axes`, `repeats`, `split`): a 1-D int64 tensor."""
    return np.array(values, dtype=np.int64).reshape(len(values))


def made(version: OpVersion, binding: dict[str, str], inputs: dict, attributes: dict | None = None,
         outputs: tuple[bool, ...] = ()) -> Example:
    """A drawn case of a family op."""
    dtype_param = for_op(version.op).dtype_param_of(version)
    return Example(version, "hypothesis", bound_types(version, dict(binding), inputs, dtype_param), inputs, attributes or {},
                   "hypothesis", dtype_param, outputs=outputs)
