"""Random cases of CausalConvWithState (reference/causal_conv.py): batch 1 or 2, channels 1 to 4,
lengths 1 to 6 (shorter than the state now and then, and 1 for a decode step), kernels 1 to 4,
past_state given or not, bias given or not, each activation ('none', 'silu', 'swish'). Values by
matmul's recipes (exactly summable for a large share). A small share the text forbids: a weight
whose middle dim is not 1, a past_state of the wrong length, an unknown activation.
"""

from __future__ import annotations

from ..dtypes import dtype
from ..registry import OpVersion
from .common import WIDE, Choices, invalid_share, one_in, pick
from .matmul import values
from .movement import made

RECIPES = ("summable", "summable", "summable", "random", "cancelling", "boundary")


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    batch, channels = choices.integer(1, 2), choices.integer(1, 4)
    length = 1 if one_in(choices, 4) else choices.integer(1, 6)
    k = choices.integer(1, 4)
    attributes: dict = {}
    activation = pick(choices, ("none", "none", "silu", "swish", None))
    if activation is not None:
        attributes["activation"] = activation
    w_shape, past_shape = (channels, 1, k), (batch, channels, k - 1)
    with_past, with_bias = one_in(choices, 2) or not one_in(choices, 3), one_in(choices, 2)
    if invalid_share(choices):
        form = choices.integer(0, 2)
        if form == 0:
            w_shape = (channels, 2, k)
        elif form == 1:
            past_shape, with_past = (batch, channels, k), True
        else:
            attributes["activation"] = "relu"
    recipe = pick(choices, RECIPES)
    seed = choices.integer(0, WIDE - 1)
    inputs = {"input": values(choices, dt, (batch, channels, length), recipe, seed),
              "weight": values(choices, dt, w_shape, recipe if recipe != "boundary" else "random", seed + 1)}
    if with_bias:
        inputs["bias"] = values(choices, dt, (channels,), "summable" if recipe == "boundary" else recipe, seed + 2)
    if with_past:
        if not with_bias:
            inputs["bias"] = None
        inputs["past_state"] = values(choices, dt, past_shape, "summable" if recipe == "boundary" else recipe, seed + 3)
    return made(version, binding, inputs, attributes)
