"""Random cases of MaxPool and GlobalMaxPool (reference/max_pool.py).

MaxPool's geometry: 1-, 2- and 3-D spatial ranks (mostly 1 and 2), batch and channels of 1 or 2,
kernels of 1 to 3 taps per axis (2 in 3-D), strides of 1 to 3, dilations of 1 or 2 (from 10),
explicit pads (asymmetric too, mostly shorter than the kernel, now and then as long: a window over
padding alone) or an auto_pad (SAME_UPPER, SAME_LOWER, VALID), ceil_mode (from 10), storage_order
0 or 1 (from 8), the optional Indices output asked for or left out (from 8), attributes given at
their defaults now and then. Spatial sizes of a few elements: the op's default run stays at a few
seconds.

Values: small integers from a pool of a few (ties, so the index chosen among equal values is
tested; -0.0 beside 0.0), distinct counting values (a wrong pad, stride or index order shows
bitwise), the boundary values of `common.array` (NaN, ±inf, the extremes), random normals; int8 and
uint8 over their whole range. A small share of what the text forbids: a kernel_shape of the wrong
rank, strides or dilations below 1, a negative pad, pads beside auto_pad, storage_order 2, a
window that never fits, an X without spatial axes.

GlobalMaxPool: ranks 3 to 5 of small dims, the same values; an X of rank 2 now and then.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick
from .movement import made
from .window import placed_padding, written_when_not_ones



def values(choices: Choices, dt: DType, dims: tuple[int, ...]) -> np.ndarray:
    """X's values (see the module's docstring)."""
    count = math.prod(dims)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    recipe = pick(choices, ("pool", "pool", "counting", "boundary", "random"))
    if recipe == "boundary":
        return array(choices, dt, dims)
    if dt.kind in ("int", "uint") and recipe == "random":
        return pack(rng.integers(int(dt.lowest), int(dt.max) + 1, size=count).tolist(), dt).reshape(dims)
    if recipe == "counting":
        flat = rng.permutation(count) - (count // 2 if dt.kind != "uint" else 0)
        return pack(flat.tolist(), dt).reshape(dims)
    if recipe == "pool":
        pool = [0, 1, -1, 2, -3, 5] if dt.kind != "uint" else [0, 1, 2, 5, 200]
        if dt.kind == "float":
            pool.append(-0.0)
        taken = rng.choice(len(pool), size=choices.integer(1, 3), replace=False)
        return pack([pool[int(k)] for k in rng.choice(taken, size=count)], dt).reshape(dims)
    return pack(rng.standard_normal(count).tolist(), dt).reshape(dims)


def _geometry(choices: Choices, version: OpVersion) -> tuple[dict, tuple[int, ...]]:
    since = version.since_version
    rank = pick(choices, (1, 1, 2, 2, 2, 3))
    n, c = choices.integer(1, 2), choices.integer(1, 2)
    side = 5 if rank < 3 else 3
    kernel = tuple(choices.integer(1, 3 if rank < 3 else 2) for _ in range(rank))
    spatial = [choices.integer(1, side) for _ in range(rank)]
    strides = tuple(pick(choices, (1, 1, 2, 3)) for _ in range(rank))
    dilations = tuple(1 if since < 10 or not one_in(choices, 3) else 2 for _ in range(rank))
    attributes: dict = {"kernel_shape": list(kernel)}
    padding = choices.integer(0, 3)

    def pads() -> list[int]:
        long_pads = one_in(choices, 12)  # a pad as long as the kernel: a window over padding alone
        return [choices.integer(0, (kernel[a % rank] if long_pads else kernel[a % rank] - 1)) if padding else 0
                for a in range(2 * rank)]

    spatial = placed_padding(choices, attributes, padding, kernel, spatial, dilations, pads)
    written_when_not_ones(choices, attributes, "strides", strides)
    if since >= 10:
        written_when_not_ones(choices, attributes, "dilations", dilations)
        if one_in(choices, 3):
            attributes["ceil_mode"] = choices.integer(0, 1)
    if since >= 8 and one_in(choices, 3):
        attributes["storage_order"] = choices.integer(0, 1)
    return attributes, (n, c) + tuple(spatial)


def _broken(choices: Choices, version: OpVersion, attributes: dict, x_shape: tuple[int, ...]):
    """One rule of the text broken (see the module's docstring)."""
    rank = len(x_shape) - 2
    kinds = ["kernel-rank", "strides", "pads", "pads-with-auto-pad", "no-window", "x-rank"]
    if version.since_version >= 10:
        kinds.append("dilations")
    if version.since_version >= 8:
        kinds.append("storage-order")
    kind = pick(choices, kinds)
    attributes = dict(attributes)
    axis = choices.integer(0, rank - 1)
    if kind == "kernel-rank":
        attributes["kernel_shape"] = list(attributes["kernel_shape"]) + [1]
    elif kind == "strides":
        strides = list(attributes.get("strides", [1] * rank))
        strides[axis] = pick(choices, (0, -1))
        attributes["strides"] = strides
    elif kind == "dilations":
        dilations = list(attributes.get("dilations", [1] * rank))
        dilations[axis] = pick(choices, (0, -1))
        attributes["dilations"] = dilations
    elif kind == "pads":
        attributes.pop("auto_pad", None)
        pads = list(attributes.get("pads", [0] * (2 * rank)))
        pads[axis + pick(choices, (0, rank))] = -1
        attributes["pads"] = pads
    elif kind == "pads-with-auto-pad":
        attributes["auto_pad"] = pick(choices, ("SAME_UPPER", "SAME_LOWER", "VALID"))
        attributes["pads"] = [1] * (2 * rank)
    elif kind == "no-window":
        for name in ("auto_pad", "pads", "ceil_mode", "dilations"):
            attributes.pop(name, None)
        kernel = list(attributes["kernel_shape"])
        stride = int(np.ravel(attributes.get("strides", [1] * rank))[axis])
        kernel[axis] = x_shape[2 + axis] + 1 + max(stride, 1)  # the formula's count below 0, not just 0
        attributes["kernel_shape"] = kernel
    elif kind == "storage-order":
        attributes["storage_order"] = pick(choices, (2, -1))
    else:
        x_shape = x_shape[:2]
        attributes["kernel_shape"] = []
    return attributes, x_shape


def max_pool(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    attributes, x_shape = _geometry(choices, version)
    if invalid_share(choices):
        attributes, x_shape = _broken(choices, version, attributes, x_shape)
        if not attributes["kernel_shape"]:
            attributes["kernel_shape"] = [1]  # an X of rank 2: kernel_shape must still be given
    x = values(choices, dt, x_shape)
    outputs: tuple[bool, ...] = ()
    if version.since_version >= 8 and one_in(choices, 3):
        outputs = (True, False)  # Y alone: Indices left out of the node
    return made(version, binding, {"X": x}, attributes, outputs=outputs)


def global_max_pool(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    rank = pick(choices, (3, 3, 4, 4, 5))
    dims = (choices.integer(1, 2), choices.integer(1, 3)) + tuple(choices.integer(1, 4 if rank < 5 else 2)
                                                                   for _ in range(rank - 2))
    if invalid_share(choices):
        dims = dims[:2]
    return made(version, binding, {"X": values(choices, dt, dims)})


STRATEGIES = {"MaxPool": max_pool, "GlobalMaxPool": global_max_pool}
