"""Random Unique cases: data of any shape (size-0 dims and rank 0 among them) with repeated values
(a pool of a few: NaN, -0.0 beside 0.0, "" among them), with and without `axis` (negative half
the time), `sorted` omitted, 0 or 1, optional outputs left out; and a small share of what the text
forbids (an axis out of range, `sorted` of 2)."""

from __future__ import annotations

from ..dtypes import dtype
from ..registry import OpVersion
from .common import Choices, flags, invalid_share, one_in, pick, shape
from .movement import axis_value, made, outside_axis
from .top_k import tied_array


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = tied_array(choices, dtype(binding["T"]), shape(choices, max_rank=4))
    attributes: dict = {}
    if data.ndim and not one_in(choices, 2):
        attributes["axis"] = axis_value(choices, data.ndim, negative=True)
    chosen = pick(choices, (None, 0, 1))
    if chosen is not None:
        attributes["sorted"] = chosen
    left_out = flags(choices, 3) if one_in(choices, 3) else [False] * 3
    outputs = () if not any(left_out) else (True, *(not out for out in left_out))
    if invalid_share(choices):
        if one_in(choices, 2):
            attributes["sorted"] = 2
        else:
            attributes["axis"] = outside_axis(choices, data.ndim, negative=True)
    return made(version, binding, {"X": data}, attributes, outputs=outputs)


STRATEGIES = {"Unique": example}
