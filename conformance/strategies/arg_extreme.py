"""Random ArgMax and ArgMin cases, and the tie-prone values Hardmax's strategy draws too.

Half the data comes from a small pool (0 to 3; for floats -0.0, NaN and +-inf besides), so rows
hold ties, signed zeros and NaN often; the other half is `array`'s boundary-weighted values. Axes
at their boundaries (negative where the text counts from the back), keepdims and
select_last_index present or left to their defaults, size-0 dims among the shapes; and a small
share of what the text forbids (an axis outside the rank, a rank-0 input).
"""

from __future__ import annotations

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick, shape
from .movement import axis_value, made, outside_axis

SMALL = (0, 1, 2, 3)
SPECIAL_FLOATS = (-0.0, float("nan"), float("inf"), float("-inf"))
ABSENT = None  # an attribute left to its default


def tie_prone(choices: Choices, dt: DType, dims: tuple[int, ...]) -> np.ndarray:
    """Values of `dt` from a small pool, so that equal values (and, for floats, -0.0 beside 0.0,
    NaN and the infinities) meet in a row: each of up to four elements its own choice, a larger
    array from a seeded generator. Shrinks toward all 0."""
    pool = SMALL + (SPECIAL_FLOATS if dt.kind == "float" else ())
    count = int(np.prod(dims))
    if count <= 4:
        return pack([pick(choices, pool) for _ in range(count)], dt).reshape(dims)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    width = pick(choices, (2, 4, len(pool)))  # fewer kinds of values: more ties
    return pack([pool[k] for k in rng.integers(0, width, size=count)], dt).reshape(dims)


def values(choices: Choices, dt: DType, dims: tuple[int, ...]) -> np.ndarray:
    """Tie-prone values half the time, boundary-weighted ones the other half."""
    return tie_prone(choices, dt, dims) if choices.integer(0, 1) else array(choices, dt, dims)


def arg_extreme(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    negative = version.since_version >= 11
    data = values(choices, dt, shape(choices, min_rank=1, max_rank=4))
    attributes: dict = {}
    axis = axis_value(choices, data.ndim, negative)
    if axis != 0 or not one_in(choices, 3):  # left out, the axis is 0
        attributes["axis"] = axis
    for name in ("keepdims", "select_last_index"):
        if version.attribute(name) is not None:
            setting = pick(choices, (ABSENT, 0, 1))
            if setting is not ABSENT:
                attributes[name] = setting
    if invalid_share(choices):
        if one_in(choices, 2):
            data = values(choices, dt, ())
        else:
            attributes["axis"] = outside_axis(choices, data.ndim, negative)
    return made(version, binding, {"data": data}, attributes)


STRATEGIES = {"ArgMax": arg_extreme, "ArgMin": arg_extreme}
