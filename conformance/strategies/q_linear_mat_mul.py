"""Random QLinearMatMul cases (reference/q_linear_mat_mul.py): every type binding the version allows
(covering: int8/uint8 and, from 21, float8 operands and output, float, float16 and bfloat16
scales), MatMul's shapes (small M, K, N, a size-0 dim now and then, batch dims that broadcast, 1-D
operands; `strategies/matmul.py`'s), scales and zero points per tensor, per row of a, per column of
b, and now and then of shape [1].

Values that tell the planted bugs: 8-bit values around the zero point (so a dropped zero point
moves every output), scales that are powers of two (every step exact in any arithmetic, so exact
ties are judged: half to even against truncation or half away from zero) beside scales that are
not, a y_scale sized so that most outputs fall inside the type and some saturate. A small share of
shapes the text forbids.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, invalid_share, one_in, pick
from .matmul import _bytes, operand_shapes
from .movement import made

POWERS = (0.5, 0.25, 1.0, 2.0, 0.125)
ODD_SCALES = (0.0066, 0.00705, 0.0107, 0.02, 0.1, 0.003)


def _type(binding: dict[str, str], param: str, default: str) -> DType:
    return dtype(binding.get(param, default))


def _values(rng: np.random.Generator, dt: DType, shape: tuple[int, ...]) -> np.ndarray:
    """8-bit integers (matmul's `_bytes`), or float8 values that are small multiples of a quarter."""
    if dt.kind != "float":
        return _bytes(rng, dt, shape)
    count = math.prod(shape)
    drawn = rng.integers(-8, 9, size=count) * 0.25
    if dt.name.endswith("fnuz") or not dt.has_negative_zero:
        drawn = np.where(drawn == 0, 0.0, drawn)
    return pack(drawn.tolist(), dt).reshape(shape)


def _zero_points(rng: np.random.Generator, dt: DType, shape: tuple[int, ...]) -> np.ndarray:
    if dt.kind == "float":
        return pack((rng.integers(-2, 3, size=math.prod(shape)) * 0.5 * (rng.random() < 0.3)).tolist(), dt).reshape(shape)
    return _bytes(rng, dt, shape)


def _scales(choices: Choices, rng: np.random.Generator, dt: DType, shape: tuple[int, ...], exact: bool) -> np.ndarray:
    count = math.prod(shape)
    if exact:
        drawn = [pick(choices, POWERS) for _ in range(count)] if count else []
    else:
        drawn = (rng.choice(ODD_SCALES, size=count) * (1 + rng.random(count))).tolist()
    return pack(drawn, dt).reshape(shape)


def _granular(choices: Choices, operand_shape: tuple[int, ...], rows: bool) -> tuple[int, ...]:
    """A scale's (and its zero point's) shape: per tensor, per row of a / per column of b, or [1]."""
    form = choices.integer(0, 5)
    if form <= 2 or len(operand_shape) < 2:
        return () if form != 5 else (1,)
    if form == 5:
        return (1,)
    if len(operand_shape) == 2 and form == 3:
        return (operand_shape[0],) if rows else (operand_shape[1],)
    return operand_shape[:-1] + (1,) if rows else operand_shape[:-2] + (1, operand_shape[-1])


def _y_scale(rng: np.random.Generator, a_scale: np.ndarray, b_scale: np.ndarray, k: int, exact: bool, saturating: bool) -> float:
    """A y_scale that puts typical outputs inside the 8-bit range (or past it, `saturating`)."""
    typical = float(np.max(a_scale.astype(np.float64), initial=1.0)) * float(np.max(b_scale.astype(np.float64), initial=1.0))
    spread = typical * 8 * max(1.0, math.sqrt(k)) * (0.05 if saturating else 1.0)
    if exact:
        return 2.0 ** round(math.log2(spread / 16)) if spread > 0 else 1.0
    return spread / 16 * (1 + rng.random())


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    a_type, b_type, y_type = _type(binding, "T1", "uint8"), _type(binding, "T2", "uint8"), _type(binding, "T3", "uint8")
    scale_type = _type(binding, "TS", "float")
    m, k, n = choices.integer(1, 4), choices.integer(1, 12), choices.integer(1, 4)
    if one_in(choices, 12):
        which = choices.integer(0, 2)
        m, k, n = (0 if which == 0 else m), (0 if which == 1 else k), (0 if which == 2 else n)
    a_shape, b_shape = operand_shapes(choices, m, k, n)
    seed = choices.integer(0, WIDE - 1)
    rng = np.random.default_rng(seed)
    exact = one_in(choices, 2)
    saturating = one_in(choices, 6)
    a_granular, b_granular = _granular(choices, a_shape, True), _granular(choices, b_shape, False)
    a_scale = _scales(choices, rng, scale_type, a_granular, exact)
    b_scale = _scales(choices, rng, scale_type, b_granular, exact)
    y_scale = pack([_y_scale(rng, a_scale, b_scale, k, exact, saturating)], scale_type).reshape(())
    inputs = {"a": _values(rng, a_type, a_shape), "a_scale": a_scale, "a_zero_point": _zero_points(rng, a_type, a_granular),
              "b": _values(rng, b_type, b_shape), "b_scale": b_scale, "b_zero_point": _zero_points(rng, b_type, b_granular),
              "y_scale": y_scale, "y_zero_point": _zero_points(rng, y_type, ())}
    if invalid_share(choices):
        _break(choices, rng, inputs, a_type, y_type, scale_type)
    return made(version, binding, inputs)


def _break(choices: Choices, rng: np.random.Generator, inputs: dict, a_type: DType, y_type: DType, scale_type: DType) -> None:
    """One rule the text states, broken: scale and zero point of different shapes, a per-row scale of
    the wrong length, a y_scale that is not a scalar, inner dims that differ."""
    form = choices.integer(0, 3)
    a = inputs["a"]
    if form == 0:
        inputs["a_zero_point"] = _zero_points(rng, a_type, (2,) if inputs["a_scale"].shape != (2,) else ())
    elif form == 1:
        length = (a.shape[-2] if a.ndim >= 2 else 1) + 2
        inputs["a_scale"] = pack([0.5] * length, scale_type)
        inputs["a_zero_point"] = _zero_points(rng, a_type, (length,))
    elif form == 2:
        inputs["y_scale"] = pack([0.5, 0.25], scale_type)
        inputs["y_zero_point"] = _zero_points(rng, y_type, (2,))
    else:
        shape = a.shape[:-1] + (a.shape[-1] + 1,)
        inputs["a"] = _values(rng, a_type, shape)
        if inputs["a_scale"].ndim > 1:  # keep the scale's shape the one that fits the new a
            inputs["a_scale"] = inputs["a_scale"].reshape(-1)[:1].reshape(())
            inputs["a_zero_point"] = inputs["a_zero_point"].reshape(-1)[:1].reshape(())
