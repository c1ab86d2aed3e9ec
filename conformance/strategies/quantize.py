"""Random QuantizeLinear and DequantizeLinear cases: every type binding, each granularity the
version has (per-tensor; per-axis from 13, negative axes too; blocked from 21, often with a
shorter last block), the zero point absent or present, `saturate`, `output_dtype` and
`precision` where the version has them, and values weighted toward the boundaries: quotients at
ties (k + 0.5 times the scale), just beyond the output range, the types' extremes, subnormal
scales, powers of two and scales that are not.

The output type is the binding's, and the case says it as the text lets it: a zero point of that
type, or `output_dtype`, or (uint8 only) neither. What the text leaves undefined is kept out: NaN
into an integer, float4e2m1 or float6 target, a zero scale, DequantizeLinear of int32 with a zero
point.
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from ..dtypes import DType, dtype
from ..reference import conversion as cv
from ..reference.quantize import BLOCKED, PER_AXIS, PER_TENSOR, Granularity, dequantize_output_dtype, spread
from ..registry import OpVersion
from ..values import pack
from .common import Choices, array, invalid_share, one_in, pick, shape

PRECISIONS = ("float", "float16", "bfloat16")
INVALID_KINDS = ("zero-point-shape", "axis-out-of-range", "scale-shape")


def _type_of(version: OpVersion, name: str, binding: dict[str, str]) -> DType:
    param = version.input(name).type_param
    return dtype(binding[param] if param in binding else param[len("tensor("):-1])


def _granularities(version: OpVersion) -> tuple[str, ...]:
    if version.since_version < 13:
        return (PER_TENSOR,)
    if version.attribute("block_size") is None:
        return (PER_TENSOR, PER_AXIS)
    return (PER_TENSOR, PER_AXIS, BLOCKED)


def _layout(choices: Choices, version: OpVersion) -> tuple[tuple[int, ...], str, int, int, tuple[int, ...], dict]:
    """x's shape, the granularity, the axis (normalised), the block size, the scale's shape and the
    attributes that say them."""
    kind = pick(choices, _granularities(version))
    dims = shape(choices, 0 if kind == PER_TENSOR else 1, 4)
    attributes: dict = {}
    if kind == PER_TENSOR:
        return dims, kind, 0, 0, (), attributes
    rank = len(dims)
    axis = choices.integer(-rank, rank - 1)
    if axis != 1 or one_in(choices, 2):  # the default axis (1) is left unwritten half the time
        attributes["axis"] = axis
    normal = axis % rank
    if kind == PER_AXIS:
        return dims, kind, normal, 0, (dims[normal],), attributes
    dims = tuple(max(d, 1) if k == normal else d for k, d in enumerate(dims))
    length = dims[normal]
    block = choices.integer(1, length) if not one_in(choices, 4) else length + choices.integer(0, 2)
    if length % 2 and length > 1 and one_in(choices, 2):
        block = 2  # a shorter last block
    attributes["block_size"] = block
    scale_shape = tuple(-(-d // block) if k == normal else d for k, d in enumerate(dims))
    return dims, kind, normal, block, scale_shape, attributes


def _scales(choices: Choices, scale_type: DType, dims: tuple[int, ...]) -> np.ndarray:
    """Nonzero finite scales: powers of two (exact), drawn values, subnormals for float types."""
    count = math.prod(dims)
    draw = choices.integer(0, 7)
    style = 3 if draw == 7 else draw % 3  # 0 powers of two, 1 drawn, 2 everyday values, 3 subnormal
    if scale_type.kind == "int":
        values = [choices.integer(1, 9) * (-1 if one_in(choices, 8) else 1) for _ in range(count)]
        return pack(values, scale_type).reshape(dims)
    if scale_type.name == cv.E8M0 or style == 0:
        values = [math.ldexp(1.0, choices.integer(-8, 8)) for _ in range(count)]
    elif style == 1:
        with np.errstate(all="ignore"):  # a signalling NaN widened is still a NaN
            drawn = array(choices, scale_type, dims).astype(np.float64).reshape(-1)
        values = [abs(v) if math.isfinite(v) and v != 0 else 0.5 for v in drawn.tolist()]
    elif style == 2:
        values = [pick(choices, (0.1, 0.3, 0.007, 3.0, 1 / 3, 255 / 7, 0.0625, 1e-3)) for _ in range(count)]
    else:
        tiny = float(scale_type.smallest_subnormal)
        values = [tiny * choices.integer(1, 4) for _ in range(count)]
    if scale_type.name != cv.E8M0 and one_in(choices, 8):
        values = [-v for v in values]
    scales = np.array(values, dtype=np.float64).astype(scale_type.np_dtype)
    with np.errstate(all="ignore"):
        wide = scales.astype(np.float64)
    scales = np.where((wide == 0) | ~np.isfinite(wide), np.array(1.0).astype(scale_type.np_dtype), scales)
    return scales.astype(scale_type.np_dtype).reshape(dims)


def _targets(target: DType) -> list[float]:
    """Quotients worth hitting: ties, the range's ends and just beyond."""
    if target.kind == "float":
        top = float(target.max)
        return [0.5, 1.5, top, top * 1.0625, top * 2, -top * 1.0625, float(target.smallest_subnormal) / 2]
    top, low = target.max, target.lowest
    return [0.5, 1.5, 2.5, -0.5, -1.5, top + 0.5, low - 0.5, top + 1, low - 1, top, low]


def _plant_ties(choices: Choices, x: np.ndarray, scale: np.ndarray, found: Granularity, target: DType,
                source: DType) -> np.ndarray:
    """Some elements set to quotient * scale for boundary quotients (x's type permitting)."""
    if not x.size:
        return x
    flat = x.reshape(-1).copy()
    spread_scale = spread(scale.astype(np.float64), x.shape, found).reshape(-1)
    for _ in range(choices.integer(1, 3)):
        at = choices.integer(0, flat.size - 1)
        wanted = pick(choices, _targets(target)) * float(spread_scale[at])
        if source.kind == "int":
            wanted = min(max(round(wanted), source.lowest), source.max)
        with np.errstate(all="ignore"):
            flat[at] = np.array(wanted).astype(source.np_dtype)
    return flat.reshape(x.shape)


def _in_range(choices: Choices, dims: tuple[int, ...], scale: np.ndarray, found: Granularity, target: DType,
              source: DType) -> np.ndarray:
    """x whose quotients are mostly inside the target's range (halves included: ties), as `source`
    holds them."""
    choices = choices.section(16)
    count = math.prod(dims)
    spread_scale = spread(scale.astype(np.float64), dims, found).reshape(-1)
    if target.kind == "float":
        quotients = array(choices, target, (count,)).astype(np.float64)
    else:
        halves = [choices.integer(2 * target.lowest - 4, 2 * target.max + 4) / 2 for _ in range(min(count, 4))]
        quotients = np.resize(np.array(halves or [0.0]), count) + np.arange(count) % 3
    with np.errstate(all="ignore"):
        wanted = quotients * spread_scale
        if source.kind == "int":
            wanted = np.clip(np.rint(np.nan_to_num(wanted)), source.lowest, source.max)
        return wanted.astype(source.np_dtype).reshape(dims)


def _defined(x: np.ndarray, source: DType, target: DType) -> np.ndarray:
    """x without NaN where the target has none to give (float4e2m1, float6), and without NaN and
    infinities into an integer target (undefined there: the case files state conform's answer)."""
    if source.kind != "float" or (target.kind == "float" and target.has_nan):
        return x
    with np.errstate(all="ignore"):
        wide = x.astype(np.float64)
    undefined = np.isnan(wide) | (np.isinf(wide) if target.kind != "float" else False)
    return np.where(undefined, np.zeros_like(x), x).astype(source.np_dtype)


def _zero_point(choices: Choices, target: DType, dims: tuple[int, ...]) -> np.ndarray:
    if target.kind == "float":
        values = [pick(choices, (0.0, 0.0, 0.0, -0.0, 1.0, -0.5)) for _ in range(math.prod(dims))]
        return np.array(values, dtype=np.float64).astype(target.np_dtype).reshape(dims)
    zero = array(choices, target, dims)
    return zero


def _break(choices: Choices, inputs: dict, attributes: dict, zero_name: str, scale_name: str, rank: int,
           target: DType) -> None:
    """One invalid change: a zero point of another shape, an axis out of range, a wrong scale length."""
    kind = pick(choices, INVALID_KINDS)
    scale = inputs[scale_name]
    if kind == "zero-point-shape":
        wrong = (scale.size + 1,) if scale.ndim <= 1 else scale.shape[:-1]
        inputs[zero_name] = np.zeros(wrong, dtype=np.float64).astype(target.np_dtype)
    elif kind == "axis-out-of-range" and scale.ndim == 1 and rank > 1:
        attributes["axis"] = rank + choices.integer(0, 2)
    elif scale.ndim == 1 and rank > 1:
        inputs[scale_name] = np.concatenate([scale, scale[:1] if scale.size else np.ones(1, scale.dtype)])
        if inputs.get(zero_name) is not None:
            zero = inputs[zero_name]
            inputs[zero_name] = np.concatenate([zero, np.zeros(1, dtype=zero.dtype)])
    else:
        inputs[zero_name] = np.zeros((scale.size + 2,), dtype=np.float64).astype(target.np_dtype)


def quantize_example(choices: Choices, version: OpVersion, binding: dict[str, str]) -> Example:
    """One QuantizeLinear case."""
    source = dtype(binding["T1"])
    scale_type = _type_of(version, "y_scale", binding)
    target = dtype(version.output_dtype(0, binding))
    invalid = version.since_version >= 13 and invalid_share(choices)  # first: the simplest case is valid
    dims, kind, axis, block, scale_shape, attributes = _layout(choices.section(16), version)
    scale = _scales(choices.section(12), scale_type, scale_shape)
    found = Granularity(kind, axis, block)
    x = _in_range(choices, dims, scale, found, target, source) if not one_in(choices, 3) else array(choices, source, dims)
    if one_in(choices, 2):
        x = _plant_ties(choices, x, scale, found, target, source)
    x = _defined(x, source, target)
    has_output_dtype = version.attribute("output_dtype") is not None
    absent_allowed = target.name == "uint8" or has_output_dtype
    inputs: dict = {"x": x, "y_scale": scale}
    if absent_allowed and one_in(choices, 3):
        if target.name != "uint8" or (has_output_dtype and one_in(choices, 2)):
            attributes["output_dtype"] = target.elem_type
    else:
        inputs["y_zero_point"] = _zero_point(choices, target, scale_shape)
        if has_output_dtype and one_in(choices, 4):
            attributes["output_dtype"] = target.elem_type
    if version.attribute("saturate") is not None and (target.name in cv.FLOAT8 or one_in(choices, 8)):
        picked = pick(choices, (None, 1, 0))
        if picked is not None:
            attributes["saturate"] = picked
    if version.attribute("precision") is not None and one_in(choices, 4):
        attributes["precision"] = dtype(pick(choices, PRECISIONS)).elem_type
    if invalid:
        _break(choices, inputs, attributes, "y_zero_point", "y_scale", len(dims), target)
    return Example(version, "hypothesis", dict(binding), inputs, attributes, "hypothesis", "T1")


def dequantize_example(choices: Choices, version: OpVersion, binding: dict[str, str]) -> Example:
    """One DequantizeLinear case."""
    x_param = version.inputs[0].type_param
    source = dtype(binding[x_param])
    scale_type = _type_of(version, "x_scale", binding)
    invalid = version.since_version >= 13 and invalid_share(choices)  # first: the simplest case is valid
    dims, kind, axis, block, scale_shape, attributes = _layout(choices.section(16), version)
    scale = _scales(choices.section(12), scale_type, scale_shape)
    x = array(choices, source, dims)
    if source.kind == "float" and not source.has_nan:
        x = _defined(x, source, source)
    inputs: dict = {"x": x, "x_scale": scale}
    if source.name != "int32" and not one_in(choices, 3):
        zero = array(choices, source, scale_shape)
        inputs["x_zero_point"] = _defined(zero, source, dtype("int8")) if source.kind == "float" else zero
    attributes.update(dequantize_output_dtype(version, binding))
    if version.attribute("output_dtype") is not None and "output_dtype" not in attributes and one_in(choices, 4):
        attributes["output_dtype"] = dtype(version.output_dtype(0, binding)).elem_type
    if invalid:
        _break(choices, inputs, attributes, "x_zero_point", "x_scale", len(dims), source)
    return Example(version, "hypothesis", dict(binding), inputs, attributes, "hypothesis", x_param)


STRATEGIES = {"QuantizeLinear": quantize_example, "DequantizeLinear": dequantize_example}
