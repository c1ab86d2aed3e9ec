"""Random cases of ConvTranspose (reference/conv_transpose.py).

Shapes: 1-D and 2-D spatial ranks (3-D now and then), batch 1 or 2, groups of 1 to 3 (depthwise
now and then), 1 to 3 input channels and output maps per group, spatial sizes 1 to 4, kernels 1
to 3, strides 1 to 3, dilations 1 or 2. The output placed each way the text allows: explicit pads
(asymmetric ones included), SAME_UPPER, SAME_LOWER, VALID, an `output_shape` (pads it implies, odd
totals included), with output_padding below the stride (or, for version 1, any small one). A long
1-D channel sum (K = 384) for a 16-bit type now and then, where its own accumulator parts from
float32. Values by matmul's recipes: exactly summable for a large share (a wrong pad, stride or
group is told bitwise), random, cancelling, boundary. A small share the texts forbid: channels
not divisible by group, W whose first dim is not C, a bias of the wrong size, pads beside auto_pad,
output_padding at least the stride and the dilation.
"""

from __future__ import annotations

from ..dtypes import DType, dtype
from ..registry import OpVersion
from .common import WIDE, Choices, invalid_share, one_in, pick
from .matmul import values
from .movement import made

RECIPES = ("summable", "summable", "summable", "random", "cancelling", "boundary")


def _geometry(choices: Choices, dt: DType) -> dict:
    rank = pick(choices, (1, 2, 2, 1, 3)) if not one_in(choices, 4) else 1
    long_sum = dt.kind == "float" and dt.bits == 16 and one_in(choices, 10)
    if long_sum:
        rank = 1
    side = 3 if rank == 3 else 4
    groups = pick(choices, (1, 1, 2, 3))
    per_group = 128 if long_sum else choices.integer(1, 3)
    maps = 1 if long_sum else choices.integer(1, 3)
    if one_in(choices, 5):
        per_group, maps = 1, 1  # depthwise
        groups = choices.integer(2, 4)
    return {"rank": rank, "batch": choices.integer(1, 2), "groups": groups, "per_group": per_group, "maps": maps,
            "sizes": tuple(choices.integer(1, side) for _ in range(rank)),
            "kernel": tuple(choices.integer(1, 3) for _ in range(rank)),
            "strides": tuple(choices.integer(1, 3) for _ in range(rank)),
            "dilations": tuple(choices.integer(1, 2) if one_in(choices, 3) else 1 for _ in range(rank))}


def _placement(choices: Choices, version: OpVersion, g: dict) -> dict:
    """The attributes that place the output: pads, auto_pad, output_shape, output_padding."""
    attributes: dict = {}
    rank, kernel, strides, dilations = g["rank"], g["kernel"], g["strides"], g["dilations"]
    if any(s > 1 for s in strides) or one_in(choices, 3):
        attributes["strides"] = list(strides)
    if any(d > 1 for d in dilations) or one_in(choices, 4):
        attributes["dilations"] = list(dilations)
    limited = version.since_version >= 11
    padding = [choices.integer(0, max(s, d) - 1) if limited else choices.integer(0, 2) for s, d in zip(strides, dilations)]
    padding = [min(p, s - 1) if limited and one_in(choices, 2) else p for p, s in zip(padding, strides)]
    if any(padding) and one_in(choices, 2):
        attributes["output_padding"] = padding
    else:
        padding = [0] * rank
    full = [s * (n - 1) + p + (k - 1) * d + 1 for n, s, p, k, d in zip(g["sizes"], strides, padding, kernel, dilations)]
    form = pick(choices, ("pads", "pads", "none", "SAME_UPPER", "SAME_LOWER", "VALID", "output_shape"))
    if form == "pads":
        span = [(k - 1) * d for k, d in zip(kernel, dilations)]
        begin = [choices.integer(0, min(t, f - 1)) for t, f in zip(span, full)]
        end = [choices.integer(0, min(t, f - 1 - b)) for t, f, b in zip(span, full, begin)]
        attributes["pads"] = begin + end
    elif form in ("SAME_UPPER", "SAME_LOWER"):
        same = [n * s if limited else n for n, s in zip(g["sizes"], strides)]
        if min(f - o for f, o in zip(full, same)) < 0:  # a total the text makes negative: explicit pads instead
            attributes["pads"] = [0] * (2 * rank)
        else:
            attributes["auto_pad"] = form
    elif form == "VALID":
        attributes["auto_pad"] = "VALID"
    elif form == "output_shape":
        attributes["output_shape"] = [max(f - choices.integer(0, 3), 1) for f in full]
        if one_in(choices, 3):
            attributes["auto_pad"] = pick(choices, ("SAME_UPPER", "SAME_LOWER"))
    if one_in(choices, 4):
        attributes["kernel_shape"] = list(kernel)
    return attributes


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    g = _geometry(choices, dt)
    attributes = _placement(choices, version, g)
    channels = g["groups"] * g["per_group"]
    x_shape = (g["batch"], channels) + g["sizes"]
    w_shape = (channels, g["maps"]) + g["kernel"]
    b_shape = (g["maps"] * g["groups"],)
    if g["groups"] > 1 or one_in(choices, 4):
        attributes["group"] = g["groups"]
    with_bias = one_in(choices, 2)
    if invalid_share(choices):
        form = choices.integer(0, 4)
        if form == 0:
            attributes["group"] = channels + 1
        elif form == 1:
            w_shape = (channels + 1,) + w_shape[1:]
        elif form == 2:
            b_shape, with_bias = (b_shape[0] + 1,), True
        elif form == 3:
            attributes.pop("output_shape", None)
            attributes["auto_pad"], attributes["pads"] = "SAME_UPPER", [1] * (2 * g["rank"])
        else:
            attributes["output_padding"] = [max(s, d) for s, d in zip(g["strides"], g["dilations"])]
            attributes["strides"], attributes["dilations"] = list(g["strides"]), list(g["dilations"])
    recipe = pick(choices, RECIPES)
    seed = choices.integer(0, WIDE - 1)
    inputs = {"X": values(choices, dt, x_shape, recipe, seed),
              "W": values(choices, dt, w_shape, recipe if recipe != "boundary" else "random", seed + 1)}
    if with_bias:
        inputs["B"] = values(choices, dt, b_shape, "summable" if recipe == "boundary" else recipe, seed + 2)
    return made(version, binding, inputs, attributes)
