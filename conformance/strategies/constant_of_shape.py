"""Random ConstantOfShape cases: shapes with zero dims and the empty shape, and a `value` of the
dtype (its extremes and specials weighted in), or no `value` for float32; a few negative dims."""

from __future__ import annotations

import numpy as np

from ..case import Example
from ..dtypes import dtype
from ..registry import OpVersion
from ..values import pack
from .common import Choices, invalid_share, scalar, shape


def example(choices: Choices, version: OpVersion, binding: dict[str, str]) -> Example:
    dt = dtype(binding["T2"])
    dims = list(shape(choices))
    if dims and invalid_share(choices):
        dims[choices.integer(0, len(dims) - 1)] = -choices.integer(1, 2**62)
    attributes: dict = {}
    if not (dt.name == "float" and choices.integer(0, 1)):
        attributes["value"] = pack([scalar(choices, dt)], dt).reshape(1)
    inputs = {"input": np.array(dims, dtype=np.int64)}
    return Example(version, "hypothesis", dict(binding), inputs, attributes, "hypothesis", "T2")
