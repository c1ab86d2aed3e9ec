"""Random LRN cases (reference/lrn.py): X of rank 4 (N x C x H x W) mostly, of rank 3 and 5 (the
text's non-image case) and 2 now and then, C from 1 to 9 (size-0 dims too); size odd and even, up
to beyond C (a window clipped at both ends); alpha, beta and bias left out (their defaults) or at
values that matter: alpha 0 and bias 1 (y = x exactly), beta 0 (y = x exactly), large alpha (the
square sum dominates the base), negative alpha or bias (a base of 0 or below); and values:

- small integers and quarters (exact squares, sums judged by the bound);
- the shared accumulating and boundary draws (NaN, ±inf, max, subnormals; strategies/accumulating.py);
- values near the square root of the type's max, whose squares overflow the type;
- a small share of what the text forbids: size 0 or negative, an X of rank 0 or 1.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .accumulating import values
from .common import WIDE, Choices, invalid_share, one_in, pick
from .movement import made

RANKS = (4, 4, 4, 3, 5, 2)
ALPHAS = (1e-4, 0.0, 0.5, 1.0, 2.0, 100.0, -0.5)
BETAS = (0.75, 0.0, 0.5, 1.0, 2.0, -0.5)
BIASES = (1.0, 2.0, 0.5, 0.0, -1.0)


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    dims = _dims(choices)
    channels = dims[1]
    size = 2 * choices.integer(0, (max(channels, 1) + 2) // 2) + 1  # odd, the common case (AlexNet's 5)
    if one_in(choices, 4):
        size += 1
    attributes: dict = {"size": size}
    for name, options in (("alpha", ALPHAS), ("beta", BETAS), ("bias", BIASES)):
        if not one_in(choices, 3):
            attributes[name] = pick(choices, options)
    x = _data(choices, dt, dims)
    if invalid_share(choices):
        if choices.integer(0, 1):
            attributes["size"] = pick(choices, (0, -1, -3))
        else:
            x = values(choices, dt, pick(choices, ((), (3,))), "sum")
    return made(version, binding, {"X": x}, attributes)


def _dims(choices: Choices) -> tuple[int, ...]:
    """N x C x D1 ... : N 1 or 2, C 1 to 9 (0 now and then), each D 1 to 3, at most 64 elements."""
    rank = pick(choices, RANKS)
    batch = choices.integer(1, 2)
    channels = 0 if one_in(choices, 16) else choices.integer(1, 9)
    spatial = tuple(choices.integer(1, 3) for _ in range(rank - 2))
    while batch * channels * math.prod(spatial) > 64:
        spatial = spatial[:-1] + (1,) if spatial and spatial[-1] > 1 else spatial[1:] + (1,)
        if all(d == 1 for d in spatial):
            break
    return (batch, channels, *spatial)


def _data(choices: Choices, dt: DType, dims: tuple[int, ...]) -> np.ndarray:
    recipe = pick(choices, ("small", "small", "accumulating", "accumulating", "near overflow"))
    count = math.prod(dims)
    if recipe == "accumulating" or not count:
        return values(choices, dt, dims, "sum")
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    if recipe == "small":
        drawn = rng.integers(-6, 7, size=count) * pick(choices, (1.0, 0.25, 4.0))
    else:
        root = math.sqrt(float(ml_dtypes.finfo(dt.np_dtype).max)) if dt.kind == "float" else 1.0
        drawn = rng.uniform(0.25, 2.0, size=count) * root * rng.choice(np.array([1.0, -1.0]), size=count)
    return pack(drawn.tolist(), dt).reshape(dims)
