"""Random Clip cases: every bound present, absent or an empty input name, next to input values."""

from __future__ import annotations

import numpy as np

from ..case import Example
from ..dtypes import DType, dtype
from ..registry import OpVersion
from .common import Choices, array, invalid_share, neighbours, pick, scalar, shape

# How a bound is given; the first is where shrinking ends (no bound at all).
ABSENT, ANY_VALUE, AN_INPUT_VALUE, BESIDE_AN_INPUT_VALUE, EMPTY_NAME = "absent", "any", "input", "beside", "empty"
BOUND_KINDS = (ABSENT, ANY_VALUE, AN_INPUT_VALUE, BESIDE_AN_INPUT_VALUE)
BOUND_BYTES = 14


def _bound_value(choices: Choices, kind: str, dt: DType, x: np.ndarray):
    """A bound of `dt`: any value, equal to an input value, or just beside one."""
    flat = x.reshape(-1)
    if kind == ANY_VALUE or not flat.size:
        return scalar(choices, dt)
    picked = flat[choices.integer(0, flat.size - 1)]
    near = neighbours(dt, picked) if kind == BESIDE_AN_INPUT_VALUE else []
    if near:
        return pick(choices, near)
    return picked.item() if dt.kind != "float" else float(picked)


def example(choices: Choices, version: OpVersion, binding: dict[str, str]) -> Example:
    dt = dtype(binding["T"])
    x = array(choices, dt, shape(choices))
    as_inputs = version.input("min") is not None
    inputs: dict = {"input": x}
    attributes: dict = {}
    invalid = as_inputs and invalid_share(choices)
    for side in ("min", "max"):
        # Each bound reads its own section: shrinking `min` away leaves `max` as it was.
        part = choices.section(BOUND_BYTES)
        # An empty name is only meaningful before another input, so only `min` can be one.
        kind = pick(part, BOUND_KINDS + ((EMPTY_NAME,) if as_inputs and side == "min" else ()))
        if kind == ABSENT:
            continue
        if kind == EMPTY_NAME:
            inputs[side] = None
            continue
        value = _bound_value(part, kind, dt, x)
        if as_inputs:
            bound = np.array(value).astype(dt.np_dtype) if dt.kind == "float" else np.array(value, dtype=dt.np_dtype)
            if invalid:
                bound = np.repeat(bound.reshape(1), part.integer(1, 2))
                invalid = False
            inputs[side] = bound
        else:
            with np.errstate(over="ignore"):  # a FLOAT attribute holds a huge double as +-inf
                attributes[side] = float(np.float32(value))
    if "min" in inputs and inputs["min"] is None and "max" not in inputs:
        del inputs["min"]  # an empty name with nothing after it is the same as leaving it out
    return Example(version, "hypothesis", dict(binding), inputs, attributes, "hypothesis", "T")
