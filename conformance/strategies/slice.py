"""Random Slice cases: starts/ends in range, negative, beyond +-dim and at INT_MAX/INT_MIN of the
index dtype; steps of both signs and extreme sizes; axes in any order, negative where allowed,
omitted; and a small share of invalid ones (zero step, axis out of range, repeated axis,
mismatched lengths)."""

from __future__ import annotations

import numpy as np

from ..case import Example
from ..dtypes import dtype
from ..registry import OpVersion
from .common import INDEX_VALUE_BYTES, Choices, array, flags, index_value, invalid_share, permutation, pick, shape, step_value

INVALID_KINDS = ("steps-zero", "axis-out-of-range", "repeated-axes", "length-mismatch")


def example(choices: Choices, version: OpVersion, binding: dict[str, str]) -> Example:
    dt = dtype(binding["T"])
    index = dtype(binding.get("Tind", "int64"))
    has_steps = version.input("steps") is not None
    negative_axes = version.since_version >= 11
    dims = shape(choices, min_rank=1)
    data = array(choices, dt, dims)
    rank = len(dims)
    chosen = choices.section(4)
    count = chosen.integer(1, rank)
    axes = permutation(chosen, rank)[:count]
    starts = _per_axis(choices, index_value, dims, axes, index)
    ends = _per_axis(choices, index_value, dims, axes, index)
    with_steps = has_steps and choices.integer(0, 1) == 1
    steps = _per_axis(choices, step_value, dims, axes, index)
    steps = steps if with_steps else None
    negative = flags(choices, count) if negative_axes else [False] * count
    written_axes = [a - rank if flip else a for a, flip in zip(axes, negative)]
    omit_axes = choices.integer(0, 1) == 1 and axes == list(range(count))
    if invalid_share(choices):
        written_axes, starts, ends, steps = _make_invalid(choices, version, rank, written_axes, starts, ends, steps)
        omit_axes = False
    params = {"starts": starts, "ends": ends, "axes": None if omit_axes else written_axes, "steps": steps}
    inputs, attributes = _place(version, data, params, index)
    return Example(version, "hypothesis", dict(binding), inputs, attributes, "hypothesis", "T")


def _per_axis(choices: Choices, value, dims, axes, index) -> list[int]:
    """One value per chosen axis, from a section with room for six: fewer axes leave the
    choices after it where they were."""
    part = choices.section(6 * INDEX_VALUE_BYTES)
    return [value(part, dims[a], index) for a in axes]


def _make_invalid(choices: Choices, version, rank, axes, starts, ends, steps):
    kinds = [k for k in INVALID_KINDS if k != "steps-zero" or version.input("steps") is not None]
    kind = pick(choices, kinds)
    if kind == "steps-zero":
        steps = list(steps or [1] * len(starts))
        steps[choices.integer(0, len(steps) - 1)] = 0
    elif kind == "axis-out-of-range":
        axes = list(axes)
        axes[0] = pick(choices, (rank, rank + 3, -rank - 1) if version.since_version >= 11 else (rank, rank + 3))
    elif kind == "repeated-axes":
        axes, starts, ends = list(axes) + [axes[0]], starts + [starts[0]], ends + [ends[0]]
        steps = steps + [steps[0]] if steps else None
    else:
        ends = ends + [0]
    return axes, starts, ends, steps


def _place(version: OpVersion, data: np.ndarray, params: dict, index) -> tuple[dict, dict]:
    inputs: dict = {"data": data}
    attributes: dict = {}
    if version.input("starts") is None:  # Slice-1: attributes, no steps
        attributes = {k: list(v) for k, v in params.items() if v is not None and k != "steps"}
        return inputs, attributes
    for name in ("starts", "ends", "axes", "steps"):
        value = params[name]
        inputs[name] = None if value is None else np.array(value, dtype=index.np_dtype)
    if inputs["steps"] is None:
        del inputs["steps"]
        if inputs["axes"] is None:
            del inputs["axes"]
    return inputs, attributes
