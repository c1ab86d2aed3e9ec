"""Random TopK cases: data with ties (values from a pool of a few, boundary values among them: NaN,
+-inf, -0.0 beside 0.0), an axis at its boundaries (negative as the default -1 is), k at 0, at the
axis's size and between, `largest` and `sorted` both ways (TopK-11 on); and a small share of what
the text forbids (k above the axis's size, a negative k, an axis out of range, K not one value).

`tied_array` is shared with Unique's and NonZero's strategies: ties and zeros are where they break.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .common import ARRAY_BYTES, WIDE, Choices, array, flags, invalid_share, one_in, pick, scalar, shape
from .movement import axis_value, int64s, made, outside_axis

POOL_SIZE = 4


def tied_array(choices: Choices, dt: DType, dims: tuple[int, ...], zero: bool = False) -> np.ndarray:
    """Half the time an array of values from a pool of one to four drawn scalars (boundary values
    half of them: NaN, +-inf, -0.0 among them), so equal values meet; `zero` puts the dtype's zero
    in the pool. Otherwise any `array`. Reads a section of ARRAY_BYTES."""
    section = choices.section(ARRAY_BYTES)
    if section.integer(0, 1) == 0:
        return array(section, dt, dims)
    pool = [scalar(section, dt) for _ in range(section.integer(1, POOL_SIZE))]
    if zero:
        pool.append("" if dt.kind == "string" else False if dt.kind == "bool" else 0)
    picks = np.random.default_rng(section.integer(0, WIDE - 1)).integers(0, len(pool), size=math.prod(dims))
    return pack(pool, dt)[picks].reshape(dims)


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    data = tied_array(choices, dt, shape(choices, min_rank=1, max_rank=4))
    rank = data.ndim
    named = version.since_version >= 11 or one_in(choices, 4)  # before 11 a negative axis other than -1 may be rejected
    axis = axis_value(choices, rank, negative=True) if named else -1
    size = data.shape[axis]
    k = pick(choices, (size, 0, 1, choices.integer(0, size)))
    k = min(k, size)
    if version.input("K") is None:
        k = max(k, 1)  # onnx.checker refuses TopK-1's k = 0 (its YAML case shows it): an empty axis makes it invalid
    attributes: dict = {} if axis == -1 and one_in(choices, 2) else {"axis": axis}
    if version.attribute("largest") is not None:
        largest, unsorted = flags(choices, 2)
        attributes |= {"largest": int(not largest), "sorted": int(not unsorted)}
    k_shape = (1,)
    if invalid_share(choices):
        kind = pick(choices, ("k-beyond-dim", "k-negative", "axis-out-of-range", "k-not-one-value", "rank-0"))
        if kind == "k-beyond-dim":
            k = size + pick(choices, (1, 2, 100))
        elif kind == "k-negative":
            k = -pick(choices, (1, 2))
        elif kind == "axis-out-of-range":
            attributes["axis"] = outside_axis(choices, rank, negative=True)
        elif kind == "k-not-one-value" and version.input("K") is not None:
            k_shape = pick(choices, ((), (2,), (1, 1)))
        else:
            data = array(choices, dt, ())  # no axis to sort along
    if version.input("K") is None:
        return made(version, binding, {"X": data}, attributes | {"k": k})
    given = int64s([k]) if k_shape == (1,) else np.full(k_shape, k, dtype=np.int64)
    return made(version, binding, {"X": data, "K": given}, attributes)


STRATEGIES = {"TopK": example}
