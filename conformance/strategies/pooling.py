"""Random cases of the averaging pools (reference/pooling.py): AveragePool, LpPool,
GlobalAveragePool, GlobalLpPool.

Geometry: 1-, 2- and 3-D spatial ranks (mostly 1 and 2), batch 1 or 2, 1 to 3 channels, kernels of
1 to 3 taps per axis (2 twice as often: a count of 2 or 4 divides exactly), now and then longer than
the input with pads that let it fit; strides of 1 to 3, dilations of 1 or 2 (where the version has
them), explicit pads (asymmetric too, now and then as long as the kernel: a window over padding
only) or an `auto_pad` (SAME_UPPER, SAME_LOWER, VALID), `ceil_mode` and `count_include_pad` where
the version has them, attributes given at their defaults now and then. LpPool's p: 1, 2 or 3 (an
INT), LpPool-1's and GlobalLpPool-1's a FLOAT (1.5 too). Spatial sizes of a few elements: each op's
default run stays at a few seconds.

Values: exactly summable ones (small integers, halves, quarters: matmul's recipes) for a large
share, so that a wrong pad, stride or divisor is told bitwise; random normals, cancelling values,
and the boundary values of `common.array`. A small share of inputs the texts forbid: X without a
spatial axis, kernel_shape missing or of the wrong rank, strides or dilations of the wrong length or
below 1, negative pads, pads of the wrong length or beside auto_pad, a window that never fits, p ≤ 0.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from .common import WIDE, Choices, invalid_share, one_in, pick
from .matmul import RECIPES, values
from .movement import made
from .window import placed_padding, written_when_not_ones



def _has(version: OpVersion, name: str) -> bool:
    import onnx.defs

    return name in onnx.defs.get_schema(version.op, version.since_version).attributes


def _geometry(choices: Choices, version: OpVersion) -> tuple[dict, tuple[int, ...]]:
    """Attributes and X's shape of a valid windowed pool (see the module's docstring)."""
    rank = pick(choices, (1, 1, 1, 2, 2, 2, 2, 3))
    side = 5 if rank < 3 else 3
    kernel = tuple(pick(choices, (1, 2, 2, 3)) for _ in range(rank))
    spatial = tuple(choices.integer(1, side) for _ in range(rank))
    strides = tuple(pick(choices, (1, 1, 2, 3)) for _ in range(rank))
    dilated = _has(version, "dilations")
    dilations = tuple(2 if dilated and one_in(choices, 4) else 1 for _ in range(rank))
    attributes: dict = {"kernel_shape": list(kernel)}
    padding = choices.integer(0, 3)

    def pads() -> list[int]:
        longest = 1 if not one_in(choices, 10) else 3  # now and then a pad as long as the kernel
        return [min(choices.integer(0, 2), kernel[a % rank] - 1 if longest == 1 else longest) if padding else 0
                for a in range(2 * rank)]

    spatial = placed_padding(choices, attributes, padding, kernel, spatial, dilations, pads)
    written_when_not_ones(choices, attributes, "strides", strides)
    if dilated:
        written_when_not_ones(choices, attributes, "dilations", dilations)
    if _has(version, "ceil_mode") and one_in(choices, 2):
        attributes["ceil_mode"] = choices.integer(0, 1)
    if _has(version, "count_include_pad") and one_in(choices, 2):
        attributes["count_include_pad"] = choices.integer(0, 1)
    return attributes, (choices.integer(1, 2), choices.integer(1, 3)) + spatial


def _broken(choices: Choices, attributes: dict, shape: tuple[int, ...], version: OpVersion) -> tuple[dict, tuple[int, ...]]:
    """One rule broken (see the module's docstring)."""
    rank = len(shape) - 2
    form = choices.integer(0, 8)
    bare = {k: v for k, v in attributes.items() if k not in ("pads", "auto_pad")}
    if form == 0:
        return attributes, shape[:2]
    if form == 1:
        return {k: v for k, v in attributes.items() if k != "kernel_shape"}, shape
    if form == 2:
        return {**attributes, "kernel_shape": list(attributes["kernel_shape"]) + [1]}, shape
    if form == 3:
        strides = list(attributes.get("strides", [1] * rank))
        strides[choices.integer(0, rank - 1)] = pick(choices, (0, -1))
        return {**attributes, "strides": strides + [1] if one_in(choices, 3) else strides}, shape
    if form == 4 and _has(version, "dilations"):
        dilations = list(attributes.get("dilations", [1] * rank))
        dilations[choices.integer(0, rank - 1)] = 0
        return {**attributes, "dilations": dilations}, shape
    if form == 5:
        pads = [0] * (2 * rank)
        pads[choices.integer(0, 2 * rank - 1)] = -1
        return {**bare, "pads": pads}, shape
    if form == 6:
        return {**bare, "auto_pad": pick(choices, ("SAME_UPPER", "VALID")), "pads": [1] * (2 * rank)}, shape
    if form == 7:
        return {**bare, "pads": [0] * (2 * rank + 1)}, shape
    kernel = [d + 2 for d in shape[2:]]  # no window: a kernel longer than the (unpadded) input
    return {**bare, "kernel_shape": kernel, "ceil_mode": 0} if _has(version, "ceil_mode") else \
        {**bare, "kernel_shape": kernel}, shape


def _p(choices: Choices, version: OpVersion, broken: bool):
    floating = version.since_version == 1
    if broken:
        return pick(choices, (0.0, -1.0)) if floating else pick(choices, (0, -2))
    if floating:
        return pick(choices, (2.0, 1.0, 3.0, 1.5))
    return pick(choices, (2, 1, 3))


def _x(choices: Choices, binding: dict[str, str], shape: tuple[int, ...]) -> np.ndarray:
    recipe = pick(choices, RECIPES)
    return values(choices, dtype(binding["T"]), shape, recipe, choices.integer(0, WIDE - 1))


def _windowed(choices: Choices, version: OpVersion, binding: dict[str, str], lp: bool):
    attributes, shape = _geometry(choices, version)
    broken = invalid_share(choices)
    if broken and not (lp and one_in(choices, 3)):
        attributes, shape = _broken(choices, attributes, shape, version)
        broken = False
    if lp and (broken or not one_in(choices, 3)):  # p left at its default one time in three
        attributes["p"] = _p(choices, version, broken)
    return made(version, binding, {"X": _x(choices, binding, shape)}, attributes)


def average_pool_example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    return _windowed(choices, version, binding, lp=False)


def lp_pool_example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    return _windowed(choices, version, binding, lp=True)


def _global_shape(choices: Choices) -> tuple[int, ...]:
    rank = pick(choices, (1, 2, 2, 3))
    side = 5 if rank < 3 else 3
    return (choices.integer(1, 2), choices.integer(1, 3)) + tuple(choices.integer(1, side) for _ in range(rank))


def global_average_pool_example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    shape = _global_shape(choices)
    if invalid_share(choices):
        shape = shape[:2]
    return made(version, binding, {"X": _x(choices, binding, shape)})


def global_lp_pool_example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    shape = _global_shape(choices)
    broken = invalid_share(choices)
    if broken and one_in(choices, 2):
        shape, broken = shape[:2], False
    attributes = {"p": _p(choices, version, broken)} if broken or not one_in(choices, 3) else {}
    return made(version, binding, {"X": _x(choices, binding, shape)}, attributes)


STRATEGIES = {"AveragePool": average_pool_example, "LpPool": lp_pool_example,
              "GlobalAveragePool": global_average_pool_example, "GlobalLpPool": global_lp_pool_example}
