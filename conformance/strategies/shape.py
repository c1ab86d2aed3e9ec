"""Random Shape and Size cases: inputs of any shape and dtype (size-0 dims and rank 0 among them);
Shape-15's start and end in and beyond [-r, r], or omitted."""

from __future__ import annotations

from ..dtypes import dtype
from ..registry import OpVersion
from .common import Choices, array, one_in, shape
from .movement import made


def shape_of(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = array(choices, dtype(binding["T"]), shape(choices))
    attributes = {}
    if version.attribute("start") is not None:
        rank = data.ndim
        for name in ("start", "end"):
            if not one_in(choices, 3):
                attributes[name] = choices.integer(-rank - 2, rank + 2)
    return made(version, binding, {"data": data}, attributes)


def size(choices: Choices, version: OpVersion, binding: dict[str, str]):
    return made(version, binding, {"data": array(choices, dtype(binding["T"]), shape(choices))})


STRATEGIES = {"Shape": shape_of, "Size": size}
