"""Random cases of CumSum and CumProd (reference/cumulative.py): shapes of rank 1 to 4 with size-0
dims, the axis at its boundaries (first, last, negative too) as an int32 or int64 0-D tensor,
exclusive and reverse both ways (left out, 0 or 1); and values that separate bugs from legal
reordering:

- exactly summable lines (small integers, quarters) for a large share: every order gives the same
  bits for every prefix, so an off-by-one prefix, an ignored exclusive or reverse, or a wrong axis
  is told bitwise;
- random normal values and cancelling lines (pairs x, -x beside small values), judged by the
  per-element bound;
- now and then a long axis (2048 elements) in a float type, where a 16-bit accumulator and a
  float32 one part;
- boundary values (NaN, ±inf, max, subnormals) from the shared `array` draws.

Products draw factors near 1 (powers of two and ±1, judged exactly, or uniform in [0.5, 2]);
a small share of axes the text forbids (just outside the range, or a 1-D tensor of one element).
"""

from __future__ import annotations

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from .accumulating import values
from .common import Choices, invalid_share, one_in, pick, shape
from .movement import axis_value, made, outside_axis

LONG_AXIS = 2048


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    from ..reference.cumulative import REFERENCES_BY_OP

    declaration = REFERENCES_BY_OP[version.op].family
    dt, index = dtype(binding["T"]), dtype(binding["T2"])
    long = dt.kind == "float" and dt.name != "double" and one_in(choices, 12)
    if long:
        dims = (2, LONG_AXIS) if one_in(choices, 2) else (LONG_AXIS,)
        axis = pick(choices, (len(dims) - 1, -1))
    else:
        dims = shape(choices, min_rank=1, max_rank=4)
        axis = axis_value(choices, len(dims), negative=True)
    data = values(choices, dt, dims, declaration.kind)
    attributes = {}
    for name in ("exclusive", "reverse"):
        if choices.integer(0, 2):
            attributes[name] = pick(choices, (0, 1))
    written = np.array(axis, dtype=index.np_dtype)
    if invalid_share(choices):
        if choices.integer(0, 1):
            written = np.array(outside_axis(choices, len(dims), negative=True), dtype=index.np_dtype)
        else:
            written = written.reshape(1)
    return made(version, binding, {"x": data, "axis": written}, attributes)


STRATEGIES = {"CumSum": example, "CumProd": example}
