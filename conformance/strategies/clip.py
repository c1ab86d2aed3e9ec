"""Random Clip cases: every bound present, absent or an empty input name, next to input values."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ..case import Example
from ..dtypes import dtype
from ..registry import OpVersion
from .common import arrays, invalid_share, neighbours, scalars, shapes

BOUND_MODES_INPUTS = ("present", "present", "absent", "empty")
BOUND_MODES_ATTRIBUTES = ("present", "present", "absent")


def _bound_value(draw, dt, x: np.ndarray):
    """A bound equal to an input value, just beside one, or any value of the dtype."""
    flat = x.reshape(-1)
    choices = [scalars(dt)]
    if flat.size:
        picked = flat[draw(st.integers(0, flat.size - 1))]
        choices.append(st.just(picked.item() if dt.kind != "float" else float(picked)))
        near = neighbours(dt, picked)
        if near:
            choices.append(st.sampled_from(near))
    return draw(st.one_of(choices))


@st.composite
def examples(draw, version: OpVersion, binding: dict[str, str]) -> Example:
    dt = dtype(binding["T"])
    x = draw(arrays(dt, draw(shapes())))
    as_inputs = version.input("min") is not None
    inputs: dict = {"input": x}
    attributes: dict = {}
    invalid = as_inputs and draw(invalid_share())
    for side in ("min", "max"):
        modes = BOUND_MODES_INPUTS if as_inputs and side == "min" else BOUND_MODES_INPUTS[:3] if as_inputs else BOUND_MODES_ATTRIBUTES
        mode = draw(st.sampled_from(modes))
        if mode == "absent":
            continue
        if mode == "empty":
            inputs[side] = None
            continue
        value = _bound_value(draw, dt, x)
        if as_inputs:
            bound = np.array(value).astype(dt.np_dtype) if dt.kind == "float" else np.array(value, dtype=dt.np_dtype)
            if invalid:
                bound = np.repeat(bound.reshape(1), draw(st.integers(1, 2)))
                invalid = False
            inputs[side] = bound
        else:
            with np.errstate(over="ignore"):  # a FLOAT attribute holds a huge double as +-inf
                attributes[side] = float(np.float32(value))
    if "min" in inputs and inputs["min"] is None and "max" not in inputs:
        del inputs["min"]  # an empty name with nothing after it is the same as leaving it out
    return Example(version, "hypothesis", dict(binding), inputs, attributes, "hypothesis", "T")
