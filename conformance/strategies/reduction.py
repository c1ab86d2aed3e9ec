"""Random cases of the reductions (reference/reduction.py): shapes of rank 0 to 4 with size-0 dims,
axes at their boundaries (negative from 11, as an input from ReduceSum-13 and the others' 18, empty
with and without noop_with_empty_axes, repeated), keepdims both ways; and values that separate bugs
from legal reordering:

- exactly summable rows (small integers, quarters) for a large share: every order gives the same
  bits, so a dropped term or a wrong axis is told bitwise;
- random values of one sign or both, and cancellation-heavy rows (pairs x, -x beside small values),
  judged by the per-element bound;
- long rows (4096 elements) now and then, where a float16 accumulator and a float32 one part;
- boundary values (NaN, ±inf, max, subnormals) from the shared `array` draws.

Products draw factors near 1 (a product of many large factors overflows in some orders and not in
others), logarithms mostly positive sums; and a small share of axes the text forbids.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .accumulating import values
from .common import Choices, invalid_share, one_in, pick, shape
from .movement import int64s, made, outside_axis

LONG_ROW = 4096


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    from ..reference.reduction import REFERENCES_BY_OP

    declaration = REFERENCES_BY_OP[version.op].family
    dt = dtype(binding["T"])
    dims = (2, LONG_ROW) if one_in(choices, 12) and dt.kind == "float" else shape(choices, min_rank=0, max_rank=4)
    data = _data(choices, dt, dims, declaration.kind)
    axes_input = version.since_version >= declaration.axes_input_since
    negative = version.since_version >= 11
    inputs, attributes = {"data": data}, {}
    axes = _axes(choices, data.ndim, negative)
    if axes_input:
        if axes is not None or one_in(choices, 3):
            inputs["axes"] = int64s(axes or [])
        if one_in(choices, 3):
            attributes["noop_with_empty_axes"] = pick(choices, (0, 1))
    elif axes is not None:
        attributes["axes"] = axes
    if one_in(choices, 2):
        attributes["keepdims"] = pick(choices, (0, 1))
    if invalid_share(choices) and data.ndim:
        wrong = [outside_axis(choices, data.ndim, negative)]
        if axes_input:
            inputs["axes"] = int64s(wrong)
        else:
            attributes["axes"] = wrong
    return made(version, binding, inputs, attributes)


def _axes(choices: Choices, rank: int, negative: bool) -> list[int] | None:
    """None (every axis) a quarter of the time; else a subset of the axes in a drawn order, each
    written negative half the time where the text allows it, now and then one named twice."""
    if not rank or one_in(choices, 4):
        return None
    chosen = [k for k in range(rank) if choices.integer(0, 1)] or [pick(choices, (0, rank - 1))]
    if len(chosen) > 1 and choices.integer(0, 1):
        chosen.reverse()
    written = [k - rank if negative and choices.integer(0, 1) else k for k in chosen]
    if one_in(choices, 16):
        written.append(written[0])
    return written


def _data(choices: Choices, dt: DType, dims: tuple[int, ...], kind: str) -> np.ndarray:
    """The shared accumulating draws (strategies/accumulating.py), a log's sums mostly positive."""
    data = values(choices, dt, dims, "prod" if kind == "prod" else "exp" if kind == "log_sum_exp" else "sum")
    if kind == "log_sum" and dt.kind == "float" and data.size and not one_in(choices, 4):
        with np.errstate(invalid="ignore"):
            data = pack((np.abs(data.astype(np.float64)) + 0.25).reshape(-1).tolist(), dt).reshape(dims)
    return data
