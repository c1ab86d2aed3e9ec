"""Random Expand and Tile cases: shapes that broadcast both ways (a dim of 1 against any, a lower
or higher rank, size-0 dims), repeats of 0 to 3, and a small share of what the text forbids (dims
that do not broadcast, negative repeats, a repeats list of the wrong length)."""

from __future__ import annotations

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from .common import Choices, array, flags, invalid_share, one_in, pick, shape
from .movement import int64s, made


def expand(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = array(choices, dtype(binding["T"]), shape(choices, max_rank=4))
    dims = list(data.shape)
    ones = flags(choices, len(dims))
    target = [pick(choices, (1, 2, 3, 0)) if d == 1 else (1 if one else d) for d, one in zip(dims, ones)]
    extra = choices.integer(0, 2)
    target = [pick(choices, (1, 2, 3)) for _ in range(extra)] + target
    if one_in(choices, 4) and target:
        target = target[choices.integer(1, len(target)):]  # a shape of lower rank than the input's
    if invalid_share(choices):
        wrong = [k for k, d in enumerate(dims) if d > 1]
        if wrong:
            target = list(dims)
            target[wrong[0]] = dims[wrong[0]] + 1
        else:
            target = [*target, -1] if target else [-2]
    return made(version, binding, {"input": data, "shape": int64s(target)})


def tile(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    if version.input("repeats") is None:
        return _tile_1(choices, version, binding, dt)
    data = array(choices, dt, shape(choices, max_rank=4))
    repeats = [pick(choices, (1, 2, 0, 3)) for _ in range(data.ndim)]
    if invalid_share(choices):
        repeats = repeats + [1] if one_in(choices, 2) else ([-1] + repeats[1:] if repeats else [1])
    return made(version, binding, {"input": data, "repeats": int64s(repeats)})


def _tile_1(choices: Choices, version: OpVersion, binding: dict[str, str], dt):
    data = array(choices, dt, shape(choices, min_rank=1, max_rank=4))
    tiles = pick(choices, (1, 2, 0, 3))
    axis = choices.integer(0, data.ndim - 1)
    if invalid_share(choices):
        axis = data.ndim
    scalar = lambda value: np.array(value, dtype=dt.np_dtype)  # noqa: E731 - Tile-1's tiles and axis are of type T
    return made(version, binding, {"input": data, "tiles": scalar(tiles), "axis": scalar(axis)})


STRATEGIES = {"Expand": expand, "Tile": tile}
