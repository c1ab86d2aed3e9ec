"""Random DynamicQuantizeLinear cases (reference/dynamic_quantize_linear.py): float32 x of rank 0 to
4 (size 1 and a few longer rows too), values around 0 on both sides, all positive, all negative,
spanning very different magnitudes, with planted ties (a range of 255·2^j, so that the scale is a
power of two and x·255/R lands on k + 0.5), and now and then a NaN, ±inf or an all-zero x; the
empty x is left to the case files.
"""

from __future__ import annotations

import math

import numpy as np

from ..values import pack
from ..dtypes import dtype
from ..registry import OpVersion
from .common import WIDE, Choices, one_in, pick, shape
from .movement import made

F32 = dtype("float")
SPANS = (1.0, 1e-3, 1e2, 1e5, 1e-30)


def _tied(rng: np.random.Generator, count: int) -> np.ndarray:
    """Values whose quotient by the scale 2^j is an integer or k + 0.5, with a range of 255·2^j."""
    step = 2.0 ** int(rng.integers(-6, 4))
    low = -int(rng.integers(0, 256))
    halves = rng.integers(2 * low, 2 * (low + 255) + 1, size=count) / 2.0
    values = halves * step
    if count >= 2:
        values[0], values[1] = low * step, (low + 255) * step
    return values


def values(choices: Choices, rng: np.random.Generator, count: int) -> np.ndarray:
    form = pick(choices, ("both", "both", "tied", "positive", "negative", "zeros", "special"))
    span = pick(choices, SPANS)
    if form == "tied":
        return _tied(rng, count)
    if form == "zeros":
        return np.where(rng.random(count) < 0.5, 0.0, -0.0)
    drawn = rng.standard_normal(count) * span
    if form == "positive":
        drawn = np.abs(drawn) + span * 1e-3
    elif form == "negative":
        drawn = -np.abs(drawn) - span * 1e-3
    elif form == "special" and count:
        drawn[int(rng.integers(0, count))] = pick(choices, (math.nan, math.inf, -math.inf))
    return drawn


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dims = shape(choices, min_rank=0, max_rank=4)
    if math.prod(dims) == 0:
        dims = tuple(max(d, 1) for d in dims)  # empty x: the case files'
    if one_in(choices, 10):
        dims = (pick(choices, (1, 1000)),)
    seed = choices.integer(0, WIDE - 1)
    rng = np.random.default_rng(seed)
    x = pack(values(choices, rng, math.prod(dims)).tolist(), F32).reshape(dims)
    return made(version, binding, {"x": x})
