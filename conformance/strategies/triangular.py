"""Random Trilu and EyeLike cases: matrices (batches of them for Trilu) with size-0 dims, a diagonal
k inside the matrix, at its edges, just beyond them and at int64's ends, upper and lower (and
the attribute or the input left out; now and then k of shape [1]); EyeLike in every type pair its
binding names (its `dtype` written where the output's type differs, and sometimes where it does
not); and a small share of what the text forbids (a rank below 2, or other than 2 for EyeLike, a k
of two values)."""

from __future__ import annotations

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from .common import Choices, array, invalid_share, one_in, pick, shape
from .movement import int64s, made

INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)


def diagonal_value(choices: Choices, rows: int, cols: int) -> int:
    """A diagonal from one choice: 0, the edges (cols - 1, -(rows - 1)), just beyond them, anywhere
    in between, or int64's ends. Shrinks to 0."""
    way = choices.integer(0, 7)
    inside = choices.integer(-rows, cols)
    return (0, cols - 1, 1 - rows, cols, -rows, inside, INT64_MAX, INT64_MIN)[way]


def trilu(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dims = shape(choices, min_rank=2, max_rank=4)
    attributes = {} if one_in(choices, 3) else {"upper": pick(choices, (1, 0))}
    k = None if one_in(choices, 4) else np.array(diagonal_value(choices, dims[-2], dims[-1]), dtype=np.int64)
    if k is not None and one_in(choices, 8):
        k = k.reshape(1)  # one value, but not the 0-D tensor the text asks for: a reading, or a rejection
    if invalid_share(choices):
        if choices.integer(0, 1):
            dims = dims[:choices.integer(0, 1)]
        else:
            k = int64s([0, 1])
    inputs = {"input": array(choices, dtype(binding["T"]), dims)}
    if k is not None:
        inputs["k"] = k
    return made(version, binding, inputs, attributes)


def eye_like(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dims = shape(choices, min_rank=2, max_rank=2)
    attributes: dict = {}
    if binding["T2"] != binding["T1"] or one_in(choices, 3):
        attributes["dtype"] = dtype(binding["T2"]).elem_type
    if not one_in(choices, 4):
        attributes["k"] = diagonal_value(choices, *dims)
    if invalid_share(choices):
        dims = pick(choices, ((), (3,), (2, 2, 1)))
    return made(version, binding, {"input": array(choices, dtype(binding["T1"]), dims)}, attributes)


STRATEGIES = {"Trilu": trilu, "EyeLike": eye_like}
