"""Random Concat and Split cases: one to four inputs that differ only along the axis (size-0 parts
among them), axes negative where the text allows; Split into equal parts, given lengths (zeros
among them) or num_outputs that leave the last chunk smaller; and a small share of what the text
forbids (a dim that differs, lengths that do not sum to the dim)."""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from .common import Choices, array, dim, invalid_share, pick, shape
from .movement import axis_value, int64s, made, outside_axis


def concat(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    dims = list(shape(choices, min_rank=1, max_rank=4))
    negative = version.since_version >= 11
    axis = axis_value(choices, len(dims), negative)
    count = choices.integer(1, 4)
    inputs = {}
    broken = invalid_share(choices) and len(dims) >= 2 and count >= 2
    for k in range(count):
        part = list(dims)
        part[axis] = dim(choices, 3)
        if broken and k == count - 1:
            other = (axis + 1) % len(dims)
            part[other] += 1
        inputs[version.inputs[0].instance(k)] = array(choices, dt, tuple(part))
    if invalid_share(choices):
        axis = outside_axis(choices, len(dims), negative)
    return made(version, binding, inputs, {"axis": axis})


def split(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    data = array(choices, dt, shape(choices, min_rank=1))
    negative = version.since_version >= 11
    axis = axis_value(choices, data.ndim, negative)
    size = data.shape[axis]
    ways = ["equal", "lengths"] + (["num_outputs"] if version.attribute("num_outputs") is not None else [])
    way = pick(choices, ways)
    attributes: dict = {"axis": axis}
    inputs: dict = {"input": data}
    if way == "num_outputs":
        count = choices.integer(1, max(1, min(size, 4)))
        if math.ceil(size / count) * (count - 1) > size:
            count = 1
        attributes["num_outputs"] = count
    elif way == "equal":
        divisors = [n for n in range(1, 5) if size % n == 0]
        count = pick(choices, divisors)
    else:
        count = choices.integer(1, 4)
        lengths = _lengths(choices, size, count)
        if invalid_share(choices):
            lengths[-1] += 1
        _place_lengths(version, inputs, attributes, lengths, dt)
    if way == "equal" and version.attribute("num_outputs") is not None:
        count = len(lengths := [size // count] * count)  # Split-18 asks for split or num_outputs
        _place_lengths(version, inputs, attributes, lengths, dt)
    return made(version, binding, inputs, attributes, outputs=(True,) * count)


def _lengths(choices: Choices, size: int, count: int) -> list[int]:
    """`count` lengths >= 0 summing to `size` (cuts drawn anywhere in it, so some may be 0)."""
    cuts = sorted(choices.integer(0, size) for _ in range(count - 1))
    bounds = [0, *cuts, size]
    return [bounds[k + 1] - bounds[k] for k in range(count)]


def _place_lengths(version: OpVersion, inputs: dict, attributes: dict, lengths: list[int], dt) -> None:
    formal = version.input("split")
    if formal is None:  # Split-2 and -11: an attribute
        attributes["split"] = lengths
    elif formal.type_param == "T":  # Split-1: an input of the data's type
        inputs["split"] = np.array(lengths, dtype=dt.np_dtype)
    else:
        inputs["split"] = int64s(lengths)


STRATEGIES = {"Concat": concat, "Split": split}
