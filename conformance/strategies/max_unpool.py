"""Random cases of MaxUnpool (reference/max_unpool.py).

Mostly the inverse of a MaxPool: a random input X0 pooled (kernel 1 to 3, stride 1 to 3, pads
shorter than the kernel, 1- to 3-D, batch and channels of 1 or 2) by reference/max_pool.py's
`pooled`, its values and row-major indices unpooled with the same attributes; X0's shape is the
default output size, or (now and then) larger by up to stride − 1 and given as output_shape, as
the text means output_shape to be used. Otherwise other legal indices: distinct positions anywhere
in the output (across (n, c) planes too), or with duplicates (two values to one place). Values:
small integers (exact), now and then random normals. A small share of what the text forbids: an
index past the end or negative, I of another shape than X, output_shape of another rank or other
N and C, a stride below 1, a negative pad, a kernel_shape of the wrong rank.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import dtype
from ..reference.max_pool import pooled
from ..reference.max_unpool import default_spatial
from ..reference.window import Windows
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, invalid_share, one_in, pick
from .movement import int64s, made


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T1"])
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    rank = pick(choices, (1, 1, 2, 2, 3))
    n, c = choices.integer(1, 2), choices.integer(1, 2)
    kernel = tuple(choices.integer(1, 3 if rank < 3 else 2) for _ in range(rank))
    strides = tuple(pick(choices, (1, 2, 2, 3)) for _ in range(rank))
    pads = tuple(choices.integer(0, kernel[a % rank] - 1) if one_in(choices, 3) else 0 for a in range(2 * rank))
    pooled_side = tuple(choices.integer(1, 3 if rank < 3 else 2) for _ in range(rank))
    default = default_spatial(pooled_side, kernel, strides, pads)
    if min(default) < 1:
        pads = (0,) * (2 * rank)
        default = default_spatial(pooled_side, kernel, strides, pads)
    given_shape = one_in(choices, 3)
    larger = tuple(choices.integer(0, s - 1) if given_shape else 0 for s in strides)
    spatial = tuple(d + e for d, e in zip(default, larger))
    out_shape = (n, c) + spatial
    total = math.prod(out_shape)
    recipe = pick(choices, ("pooled", "pooled", "pooled", "distinct", "duplicates"))
    integers = not one_in(choices, 4)
    if recipe == "pooled":
        x0 = rng.integers(-9, 10, size=out_shape) if integers else rng.standard_normal(out_shape)
        x0 = pack(x0.reshape(-1).tolist(), dt).reshape(out_shape)
        windows = Windows(kernel, strides, (1,) * rank, pads[:rank], pads[rank:], pooled_side)
        y, _, indices, _, _, _ = pooled(x0, windows, ("rows",))[0]
        x, i = y, indices.astype(np.int64)
    else:
        count = n * c * math.prod(pooled_side)
        x = pack((rng.integers(-9, 10, size=count) if integers else rng.standard_normal(count)).tolist(), dt)
        x = x.reshape((n, c) + pooled_side)
        if recipe == "distinct" and count <= total:
            flat = rng.permutation(total)[:count]
        else:
            flat = rng.integers(0, total, size=count)
        i = flat.astype(np.int64).reshape(x.shape)
    inputs = {"X": x, "I": i}
    attributes: dict = {"kernel_shape": list(kernel)}
    if any(s > 1 for s in strides) or one_in(choices, 4):
        attributes["strides"] = list(strides)
    if any(pads) or one_in(choices, 4):
        attributes["pads"] = list(pads)
    if given_shape:
        inputs["output_shape"] = int64s(list(out_shape))
    if invalid_share(choices):
        kind = pick(choices, ("past-end", "negative", "i-shape", "shape-rank", "shape-batch", "strides", "pads", "kernel"))
        if kind in ("past-end", "negative"):
            flat = i.reshape(-1).copy()
            flat[choices.integer(0, flat.size - 1)] = total if kind == "past-end" else -1
            inputs["I"] = flat.reshape(i.shape)
        elif kind == "i-shape":
            inputs["I"] = i.reshape(-1)[:-1].reshape(1, 1, -1) if i.size > 1 else i.reshape(1, 1, 1, 1)
        elif kind == "shape-rank":
            inputs["output_shape"] = int64s(list(out_shape[2:]))
        elif kind == "shape-batch":
            inputs["output_shape"] = int64s([n + 1, c] + list(spatial))
        elif kind == "strides":
            attributes["strides"] = [0] + list(strides[1:])
        elif kind == "pads":
            attributes["pads"] = [-1] + list(pads[1:])
        else:
            attributes["kernel_shape"] = list(kernel) + [1]
    return made(version, binding, inputs, attributes)


STRATEGIES = {"MaxUnpool": example}
