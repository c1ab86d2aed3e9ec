"""Random cases of Col2Im (reference/col2im.py): 2-D images (3-D now and then) of sides 1 to 5,
blocks of sides 1 to 3, strides 1 or 2 (blocks that overlap, tile, or leave gaps), dilations 2 now
and then, pads up to 1 on either side; batch and channels of 1 or 2; L the number of blocks those
place. Values by matmul's recipes for numbers (exactly summable for a large share, so a block
put in the wrong place is told bitwise), the shared boundary draws for every other type. A small
share the text forbids: L that is not the number of blocks, a channel dim that is not a multiple
of prod(block_shape), a 1-D image_shape.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from .common import WIDE, Choices, array, invalid_share, one_in, pick
from .matmul import values
from .movement import made

RECIPES = ("summable", "summable", "summable", "random", "cancelling", "boundary")


def _blocks(image, block, strides, dilations, pads) -> int:
    """How many blocks the attributes place (0 where an axis has none)."""
    count = 1
    for n, k, s, d, b, e in zip(image, block, strides, dilations, pads[:len(image)], pads[len(image):]):
        span = n + b + e - (k - 1) * d - 1
        count *= span // s + 1 if span >= 0 else 0
    return count


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    rank = 3 if one_in(choices, 6) else 2
    side = 3 if rank == 3 else 5
    image = [choices.integer(1, side) for _ in range(rank)]
    block = [choices.integer(1, min(3, n)) for n in image]
    strides = [choices.integer(1, 2) for _ in range(rank)]
    dilations = [2 if one_in(choices, 5) and (k - 1) * 2 < n else 1 for k, n in zip(block, image)]
    pads = [choices.integer(0, 1) if one_in(choices, 3) else 0 for _ in range(2 * rank)]
    attributes: dict = {}
    if any(s > 1 for s in strides) or one_in(choices, 4):
        attributes["strides"] = strides
    if any(d > 1 for d in dilations) or one_in(choices, 6):
        attributes["dilations"] = dilations
    if any(pads) or one_in(choices, 6):
        attributes["pads"] = pads
    count = _blocks(image, block, strides, dilations, pads)
    batch, channels = choices.integer(1, 2), choices.integer(1, 2)
    columns = channels * math.prod(block)
    if invalid_share(choices):
        form = choices.integer(0, 2)
        if form == 0:
            count += 1
        elif form == 1:
            columns += 1
        else:
            image, block = image[:1], block[:1]
    recipe = pick(choices, RECIPES)
    shape = (batch, columns, count)
    if dt.kind in ("float", "int", "uint"):
        data = values(choices, dt, shape, recipe, choices.integer(0, WIDE - 1))
    elif dt.kind == "complex":
        rng = np.random.default_rng(choices.integer(0, WIDE - 1))
        drawn = rng.integers(-4, 5, size=shape) + 1j * rng.integers(-4, 5, size=shape)
        data = drawn.astype(dt.np_dtype)
    else:
        data = array(choices, dt, shape)
    inputs = {"input": data, "image_shape": np.array(image, dtype=np.int64), "block_shape": np.array(block, dtype=np.int64)}
    return made(version, binding, inputs, attributes)
