"""Random OneHot cases: indices of any rank (0-d and size-0 among them) whose values sit at the
range's boundaries (-depth - 1, -depth, -1, 0, depth - 1, depth) or at T1's extremes, fractional
where T1 is a float type (x.5 ties among them); depth 1 to 8, a scalar or a 1-element tensor, a
fraction where T2 is a float type; [off_value, on_value] of T3 from its boundary values; `axis`
left out (-1), at the end, at the front, or negative; and a small share of what the text forbids
(an axis beyond [-r-1, r], depth not one value or negative, values not two elements)."""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .common import Choices, invalid_share, one_in, pick, scalar, shape
from .movement import axis_value, made, outside_axis

DEPTHS = (1, 2, 3, 4, 5, 8)
FRACTIONS = (0.5, 0.25, 0.75, -0.5)


def _fits(value, dt: DType) -> bool:
    if dt.kind in ("int", "uint"):
        return dt.lowest <= value <= dt.max
    return math.isnan(value) or math.isinf(value) or abs(value) <= float(dt.max)


def _index(choices: Choices, dt: DType, depth: int):
    """An index: at the range's boundaries, in it, a fraction (float T1), or a boundary of T1."""
    kind = pick(choices, ("boundary", "inside", "fraction", "extreme"))
    if kind == "extreme":
        return scalar(choices, dt)
    value = pick(choices, (0, depth - 1, -1, -depth, depth, -depth - 1)) if kind == "boundary" \
        else choices.integer(-depth - 2, depth + 2)
    if kind == "fraction" and dt.kind == "float":
        value = value + pick(choices, FRACTIONS)
    return value if _fits(value, dt) else 0


def _depth(choices: Choices, dt: DType):
    depth = pick(choices, DEPTHS) if not one_in(choices, 3) else choices.integer(1, 8)
    if dt.kind == "float" and one_in(choices, 3):
        return depth + pick(choices, (0.5, 0.25, 0.75))  # x.5: truncation and round-half-even agree, half-away does not
    return depth


def _values(choices: Choices, dt: DType) -> np.ndarray:
    """[off_value, on_value]: the dtype's usual 0 and 1 half the time, else two drawn scalars."""
    if one_in(choices, 2):
        pair = ["", "on"] if dt.kind == "string" else [False, True] if dt.kind == "bool" else [0, 1]
    else:
        pair = [scalar(choices, dt), scalar(choices, dt)]
    return pack(pair, dt).reshape(2)


def _axis(choices: Choices, version: OpVersion, rank: int) -> dict:
    if one_in(choices, 2):
        return {}
    stated = version.since_version >= 11
    negative = stated or one_in(choices, 4)  # OneHot-9 states no meaning for negatives other than -1
    return {"axis": axis_value(choices, rank + 1, negative=negative)}


def _broken(choices: Choices, inputs: dict, attributes: dict, rank: int, t2: DType, t3: DType) -> None:
    """One thing the text forbids."""
    kind = pick(choices, ("axis", "depth-shape", "values-shape", "depth-negative"))
    if kind == "axis":
        attributes["axis"] = outside_axis(choices, rank + 1, negative=True)
    elif kind == "depth-shape":
        inputs["depth"] = np.repeat(inputs["depth"].reshape(1), 2).reshape(pick(choices, ((2,), (1, 2))))
    elif kind == "values-shape":
        values = inputs["values"]
        inputs["values"] = pick(choices, (values[:1], np.concatenate([values, values[:1]]), values.reshape(2, 1)))
    elif t2.kind != "uint":
        inputs["depth"] = pack([-pick(choices, (1, 3))], t2).reshape(inputs["depth"].shape)


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    t1, t2, t3 = dtype(binding["T1"]), dtype(binding["T2"]), dtype(binding["T3"])
    depth = _depth(choices, t2)
    # Rank 0 one time in ten, not where shrinking ends: onnx's shape inference refuses 0-d indices
    # ("Indices tensor must have rank >= 1", which the text does not ask), so such a case is not run.
    dims = () if one_in(choices, 10) else shape(choices, min_rank=1, max_rank=3)
    count = math.prod(dims)
    indices = pack([_index(choices, t1, int(depth)) for _ in range(count)], t1).reshape(dims)
    depth_shape = pick(choices, ((), (1,)))
    inputs = {"indices": indices, "depth": pack([depth], t2).reshape(depth_shape), "values": _values(choices, t3)}
    attributes = _axis(choices, version, indices.ndim)
    if invalid_share(choices):
        _broken(choices, inputs, attributes, indices.ndim, t2, t3)
    return made(version, binding, inputs, attributes)


STRATEGIES = {"OneHot": example}
