"""Random cases of the convolutions (reference/conv.py): Conv, ConvInteger, QLinearConv, DeformConv.

Geometry (shared): 1-, 2- and 3-D spatial ranks (mostly 1 and 2), batch 1 or 2, `group` 1, 2 or
depthwise (group = C), C/group and M/group of 1 to 3, kernels of 1 to 3 taps per axis (now and then
longer than the input, with pads that let it fit), strides and dilations of 1 or 2, explicit pads
(asymmetric too) or an `auto_pad` (SAME_UPPER, SAME_LOWER, VALID; DeformConv has none), attributes
given at their defaults now and then, `kernel_shape` given now and then. Spatial sizes of a few
elements: the family's default run stays at a few seconds.

Values that separate bugs from legal reordering: exactly summable values (small integers, quarters:
matmul's recipes) for a large share, so that a wrong pad, stride or group is told bitwise; random
normals, cancelling values, and the boundary values of `common.array` in X. ConvInteger and
QLinearConv: 8-bit values around the zero point (matmul's `_bytes`), zero points per tensor, per
output channel, of shape [1], absent (ConvInteger); QLinearConv's scales powers of two (exact ties
judged) or not, a y_scale that keeps most outputs inside the type, an int32 bias now and then.
DeformConv: offsets on a quarter grid (exact locations, judged bitwise) or random, masks absent, on
a grid or random, offset groups dividing C. A small share of inputs the texts forbid: shapes, and
strides or dilations below 1, negative pads (`_broken_attribute`).
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick
from .matmul import RECIPES, _bytes, values
from .movement import made
from .window import placed_padding, written_when_not_ones

POWERS = (0.5, 0.25, 1.0, 2.0, 0.125)
ODD_SCALES = (0.0066, 0.00705, 0.0107, 0.02, 0.1, 0.003)


def _geometry(choices: Choices, auto_pad: bool, dt: DType | None = None) -> tuple[dict, tuple[int, ...], tuple[int, ...]]:
    """Attributes, X's shape and W's shape of a valid convolution (see the module's docstring)."""
    rank = pick(choices, (1, 1, 1, 2, 2, 2, 2, 3))
    n = choices.integer(1, 2)
    form = choices.integer(0, 3)
    per_group = choices.integer(1, 3)
    group = 1 if form <= 1 else (2 if form == 2 else choices.integer(2, 4))
    if form == 3:
        per_group = 1  # depthwise: one input channel per group
    c = group * per_group
    m = group * choices.integer(1, 2)
    side = 5 if rank < 3 else 3
    kernel = tuple(choices.integer(1, 3) for _ in range(rank))
    spatial = tuple(choices.integer(1, side) for _ in range(rank))
    strides = tuple(choices.integer(1, 2) for _ in range(rank))
    dilations = tuple(1 if not one_in(choices, 3) else 2 for _ in range(rank))
    if dt is not None and dt.kind == "float" and dt.bits == 16 and one_in(choices, 10):
        rank, kernel, spatial, strides, dilations = 1, (4,), (4,), (1,), (1,)
        c, group, m = 64, 1, 1  # K = 256: where a 16-bit accumulator parts from a float32 one
    attributes: dict = {}
    padding = choices.integer(0, 3) if auto_pad else choices.integer(0, 2)
    spatial = placed_padding(choices, attributes, padding, kernel, spatial, dilations,
                             lambda: [choices.integer(0, 2) if padding else 0 for _ in range(2 * rank)])
    written_when_not_ones(choices, attributes, "strides", strides)
    written_when_not_ones(choices, attributes, "dilations", dilations)
    if group > 1 or one_in(choices, 4):
        attributes["group"] = group
    if one_in(choices, 4):
        attributes["kernel_shape"] = list(kernel)
    return attributes, (n, c) + spatial, (m, c // group) + kernel


def _broken_attribute(choices: Choices, attributes: dict, rank: int) -> dict:
    """One attribute the text forbids: a stride or a dilation below 1 ("Stride along each spatial
    axis", "dilation value": at least 1), a negative pad ("any value greater than or equal to 0")."""
    axis = choices.integer(0, rank - 1)
    form = choices.integer(0, 2)
    if form == 0:
        strides = list(attributes.get("strides", [1] * rank))
        strides[axis] = pick(choices, (0, -1))
        return {**attributes, "strides": strides}
    if form == 1:
        dilations = list(attributes.get("dilations", [1] * rank))
        dilations[axis] = pick(choices, (0, -1))
        return {**attributes, "dilations": dilations}
    pads = list(attributes.get("pads", [0] * (2 * rank)))
    pads[axis + pick(choices, (0, rank))] = -1
    return {**{k: v for k, v in attributes.items() if k != "auto_pad"}, "pads": pads}


def _broken(choices: Choices, attributes: dict, x_shape: tuple[int, ...], w_shape: tuple[int, ...], auto_pad: bool):
    """One rule broken: channels not divisible by group, a kernel_shape that is not W's, pads of the
    wrong length, pads beside auto_pad, a W of another rank, a stride, dilation or pad out of range."""
    form = choices.integer(0, 6)
    rank = len(x_shape) - 2
    if form >= 5:
        return _broken_attribute(choices, attributes, rank), x_shape, w_shape
    if form == 0:
        return attributes, (x_shape[0], x_shape[1] + 1) + x_shape[2:], w_shape
    if form == 1:
        return {**attributes, "kernel_shape": [k + 1 for k in w_shape[2:]]}, x_shape, w_shape
    if form == 2:
        return {**attributes, "pads": [1] * (2 * rank + 1)} if "auto_pad" not in attributes else attributes, x_shape, w_shape[:-1]
    if form == 3 and auto_pad:
        return {**{k: v for k, v in attributes.items() if k != "pads"}, "auto_pad": "SAME_UPPER", "pads": [1] * (2 * rank)}, x_shape, w_shape
    return attributes, x_shape, w_shape[:2] + w_shape[2:] + (1,)


def conv_example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    attributes, x_shape, w_shape = _geometry(choices, True, dt)
    if invalid_share(choices):
        attributes, x_shape, w_shape = _broken(choices, attributes, x_shape, w_shape, True)
    recipe = pick(choices, RECIPES)
    seed = choices.integer(0, WIDE - 1)
    inputs = {"X": values(choices, dt, x_shape, recipe, seed),
              "W": values(choices, dt, w_shape, recipe if recipe != "boundary" else "random", seed + 1)}
    if one_in(choices, 2):
        length = w_shape[0] if not invalid_share(choices) else w_shape[0] + 1
        inputs["B"] = values(choices, dt, (length,), "summable" if recipe == "boundary" else recipe, seed + 2)
    return made(version, binding, inputs, attributes)


def _zero_point(choices: Choices, rng: np.random.Generator, dt: DType, m: int, per_channel: bool):
    form = choices.integer(0, 4)
    if form == 0:
        return None
    if form == 4:
        return _bytes(rng, dt, (1,))
    if per_channel and form == 3:
        return _bytes(rng, dt, (m,))
    return _bytes(rng, dt, ())


def conv_integer_example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    x_type, w_type = dtype(binding["T1"]), dtype(binding.get("T2", binding["T1"]))
    attributes, x_shape, w_shape = _geometry(choices, True)
    if invalid_share(choices):
        attributes, x_shape, w_shape = _broken(choices, attributes, x_shape, w_shape, True)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    x = array(choices, x_type, x_shape) if one_in(choices, 5) else _bytes(rng, x_type, x_shape)
    inputs = {"x": x, "w": _bytes(rng, w_type, w_shape)}
    x_point = _zero_point(choices, rng, x_type, w_shape[0], False)
    w_point = _zero_point(choices, rng, w_type, w_shape[0], True)
    if x_point is not None or w_point is not None:
        inputs["x_zero_point"] = x_point
    if w_point is not None:
        inputs["w_zero_point"] = w_point
    if invalid_share(choices):
        inputs["w_zero_point"] = _bytes(rng, w_type, (w_shape[0] + 1,))
    return made(version, binding, inputs, attributes)


def _scales(choices: Choices, rng: np.random.Generator, count: int | None, exact: bool) -> np.ndarray:
    size = 1 if count is None else count
    drawn = ([pick(choices, POWERS) for _ in range(size)] if exact
             else (rng.choice(ODD_SCALES, size=size) * (1 + rng.random(size))).tolist())
    found = np.array(drawn, dtype=np.float32)
    return found.reshape(()) if count is None else found


def _y_scale(rng: np.random.Generator, x_scale: np.ndarray, w_scale: np.ndarray, k: int, exact: bool) -> np.ndarray:
    """A y_scale that puts typical outputs inside the 8-bit range (past it one time in six)."""
    typical = float(x_scale.reshape(-1)[0]) * float(np.max(w_scale, initial=1.0))
    spread = typical * 8 * max(1.0, math.sqrt(k)) * (0.05 if rng.random() < 1 / 6 else 1.0)
    value = 2.0 ** round(math.log2(spread / 16)) if exact else spread / 16 * (1 + rng.random())
    return np.array(value, dtype=np.float32)


def q_linear_conv_example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    x_type, w_type, y_type = dtype(binding["T1"]), dtype(binding.get("T2", "uint8")), dtype(binding.get("T3", "uint8"))
    attributes, x_shape, w_shape = _geometry(choices, True)
    if invalid_share(choices):
        attributes, x_shape, w_shape = _broken(choices, attributes, x_shape, w_shape, True)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    exact = one_in(choices, 2)
    m = w_shape[0]
    per_channel = one_in(choices, 2)
    one = one_in(choices, 8)
    x_scale = _scales(choices, rng, 1 if one else None, exact)
    w_scale = _scales(choices, rng, m if per_channel else None, exact)
    k = math.prod(w_shape[1:])
    inputs = {"x": _bytes(rng, x_type, x_shape), "x_scale": x_scale, "x_zero_point": _bytes(rng, x_type, x_scale.shape),
              "w": _bytes(rng, w_type, w_shape), "w_scale": w_scale, "w_zero_point": _bytes(rng, w_type, w_scale.shape),
              "y_scale": _y_scale(rng, x_scale, w_scale, k, exact), "y_zero_point": _bytes(rng, y_type, ())}
    if one_in(choices, 2):
        inputs["B"] = pack(rng.integers(-200, 201, size=m).tolist(), dtype("int32"))
    if invalid_share(choices):
        form = choices.integer(0, 2)
        if form == 0:
            inputs["w_zero_point"] = _bytes(rng, w_type, (2,) if w_scale.shape != (2,) else ())
        elif form == 1:
            inputs["w_scale"] = np.full(m + 1, 0.5, dtype=np.float32)
            inputs["w_zero_point"] = _bytes(rng, w_type, (m + 1,))
        else:
            inputs["y_scale"] = np.array([0.5, 0.25], dtype=np.float32)
            inputs["y_zero_point"] = _bytes(rng, y_type, (2,))
    return made(version, binding, inputs, attributes)


def _offsets(choices: Choices, rng: np.random.Generator, dt: DType, shape: tuple[int, ...]) -> np.ndarray:
    count = math.prod(shape)
    form = choices.integer(0, 3)
    if form == 0:
        drawn = np.zeros(count)
    elif form == 3:
        drawn = rng.standard_normal(count) * 0.7
    else:
        drawn = rng.integers(-6, 7, size=count) * 0.25
    return pack(drawn.tolist(), dt).reshape(shape)


def _mask(choices: Choices, rng: np.random.Generator, dt: DType, shape: tuple[int, ...]):
    form = choices.integer(0, 3)
    if form == 0:
        return None
    count = math.prod(shape)
    drawn = rng.random(count) if form == 3 else rng.choice((0.0, 0.25, 0.5, 1.0, 1.0), size=count)
    return pack(drawn.tolist(), dt).reshape(shape)


def _output(attributes: dict, x_shape: tuple[int, ...], w_shape: tuple[int, ...]) -> tuple[int, ...]:
    rank = len(x_shape) - 2
    pads = attributes.get("pads", [0] * (2 * rank))
    strides = attributes.get("strides", [1] * rank)
    dilations = attributes.get("dilations", [1] * rank)
    found = []
    for a in range(rank):
        span = x_shape[2 + a] + pads[a] + pads[a + rank] - (w_shape[2 + a] - 1) * dilations[a] - 1
        found.append(max(span // strides[a] + 1, 0))
    return tuple(found)


def deform_conv_example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    attributes, x_shape, w_shape = _geometry(choices, False, dt)
    if x_shape[1] == 64:  # the long-sum shape: keep DeformConv's 2^n·K terms few
        x_shape, w_shape = (1, 8) + x_shape[2:], (1, 8) + w_shape[2:]
    c = x_shape[1]
    offset_group = pick(choices, [g for g in (1, 2, 3) if c % g == 0])
    if offset_group > 1 or one_in(choices, 4):
        attributes["offset_group"] = offset_group
    rank = len(x_shape) - 2
    taps = math.prod(w_shape[2:])
    out = _output(attributes, x_shape, w_shape)
    recipe = pick(choices, RECIPES)
    seed = choices.integer(0, WIDE - 1)
    rng = np.random.default_rng(seed + 3)
    offset_shape = (x_shape[0], offset_group * taps * rank) + out
    mask_shape = (x_shape[0], offset_group * taps) + out
    if invalid_share(choices):
        form = choices.integer(0, 3)
        if form == 0:
            offset_shape = (x_shape[0], offset_group * taps * rank + 1) + out
        elif form == 1:
            attributes["offset_group"] = c + 1
        elif form == 2:
            x_shape = (x_shape[0], x_shape[1] + 1) + x_shape[2:]
        else:
            attributes = _broken_attribute(choices, attributes, rank)
    inputs = {"X": values(choices, dt, x_shape, recipe if recipe != "boundary" else "summable", seed),
              "W": values(choices, dt, w_shape, recipe if recipe != "boundary" else "random", seed + 1),
              "offset": _offsets(choices, rng, dt, offset_shape)}
    mask = _mask(choices, rng, dt, mask_shape)
    bias = values(choices, dt, (w_shape[0],), "summable", seed + 2) if one_in(choices, 2) else None
    if mask is not None:
        inputs["B"] = bias
        inputs["mask"] = mask
    elif bias is not None:
        inputs["B"] = bias
    return made(version, binding, inputs, attributes)


STRATEGIES = {"Conv": conv_example, "ConvInteger": conv_integer_example, "QLinearConv": q_linear_conv_example,
              "DeformConv": deform_conv_example}
