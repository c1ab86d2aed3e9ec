"""Random Softmax and LogSoftmax cases (reference/softmax.py): shapes of rank 0 (version 1, whose
formula coerces a scalar at axis 0 to [1, 1]) or 1 to 4 with size-0 dims, the axis at its
boundaries, negative from 11, left to its default (1 before 13, -1 from 13), version 1's axis equal
to the rank; long rows of 4096 now and then for float16 and float32 (where a float16 sum and a
float32 one part); and values that separate bugs from legal rounding:

- equal values (exact 1/n and −log n, told bitwise where n is a power of two);
- one value far above the others, whose exps underflow (1 and 0, exact);
- random values of both signs at a drawn scale, judged by the per-element bound;
- values near the type's exp overflow (88.7 in float32, 11.1 in float16, 709 in double), which a
  runtime that does not shift by the row's max overflows;
- −inf among the values, rows of −inf only, and the shared boundary draws (NaN, ±inf, max);

and a small share of what the text forbids (an axis outside its range, a rank-0 input from 11).
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, one_in, pick
from .hardmax import along_one_axis

LONG_ROW = 4096
RECIPES = ("equal", "dominant", "random", "random", "large", "negative-infinity", "boundary")
# Where exp(x) leaves each type's range: values around it overflow an unshifted exp.
OVERFLOW_AT = {"float16": 11.0, "bfloat16": 88.0, "float": 88.0, "double": 709.0}


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    long_row = one_in(choices, 12) and binding["T"] in ("float", "float16")
    return along_one_axis(choices, version, binding, values, (2, LONG_ROW) if long_row else None)


def values(choices: Choices, dt: DType, dims: tuple[int, ...]) -> np.ndarray:
    """Data of `dt` and shape `dims` by a drawn recipe (see the module's docstring)."""
    recipe = pick(choices, RECIPES)
    count = math.prod(dims)
    if recipe == "boundary" or not count:
        return array(choices, dt, dims)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    if recipe == "equal":
        drawn = np.full(count, float(rng.integers(-8, 9)) * pick(choices, (1.0, 0.25, 100.0)))
    elif recipe == "dominant":
        drawn = rng.integers(-8, 1, size=count) * 50.0 - 200.0
        drawn[rng.integers(0, count, size=max(count // 8, 1))] = float(rng.integers(-4, 5))
    elif recipe == "large":
        top = OVERFLOW_AT.get(dt.name, 88.0)
        drawn = top + rng.uniform(-0.5, 0.5, size=count) * pick(choices, (1.0, 4.0, 0.1))
    else:
        drawn = rng.standard_normal(count) * pick(choices, (1.0, 3.0, 10.0, 0.01))
    if recipe == "negative-infinity" or (recipe != "equal" and one_in(choices, 6)):
        drawn[rng.random(count) < pick(choices, (0.25, 1.0))] = -np.inf
    return pack(drawn.tolist(), dt).reshape(dims)


STRATEGIES = {"Softmax": example, "LogSoftmax": example}
