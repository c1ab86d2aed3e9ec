"""Random cases of the dot-product ops (reference/matmul.py): MatMul, Gemm, MatMulInteger.

Shapes: small matrices (M, N up to 4, K up to 16, a size-0 dim now and then), K = 1024 for
float16 and bfloat16 now and then (where a 16-bit accumulator parts from a float32 one); for
MatMul and MatMulInteger batch dims that broadcast and 1-D operands; for Gemm transA/transB, alpha
and beta (0, 1, 0.5, -2.0 and random), a C of a shape that broadcasts (scalar, [N], [M, 1],
[1, N], [M, N]) or absent where the version allows it; for MatMulInteger zero points per tensor,
per row, per column, absent. Values that separate bugs from legal reordering: exactly summable
values (small integers, quarters) for a large share, random normals, cancelling values, and the
boundary values of `common.array`. A small share of shapes the texts forbid.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick
from .movement import made

RECIPES = ("summable", "summable", "summable", "random", "cancelling", "boundary")
LONG_K = 1024
COEFFICIENTS = (1.0, 0.0, 0.5, -2.0, 1.0, "random")


def _sides(choices: Choices, dt: DType) -> tuple[int, int, int]:
    """(M, K, N): small, a 0 now and then, K = LONG_K for a 16-bit float now and then."""
    m, n = choices.integer(1, 4), choices.integer(1, 4)
    k = choices.integer(1, 16)
    if one_in(choices, 12):
        which = choices.integer(0, 2)
        m, k, n = (0 if which == 0 else m), (0 if which == 1 else k), (0 if which == 2 else n)
    if dt.kind == "float" and dt.bits == 16 and one_in(choices, 8):
        m, k, n = min(m, 2), LONG_K, min(n, 2)
    return m, k, n


def values(choices: Choices, dt: DType, dims: tuple[int, ...], recipe: str, seed: int) -> np.ndarray:
    """Values of `dt` by `recipe` (see the module's docstring)."""
    count = math.prod(dims)
    if recipe == "boundary" or not count:
        return array(choices, dt, dims)
    rng = np.random.default_rng(seed)
    if dt.kind in ("int", "uint"):
        low = 0 if dt.kind == "uint" else -4
        return pack(rng.integers(low, 9, size=count).tolist(), dt).reshape(dims)
    if recipe == "summable":
        drawn = rng.integers(-4, 5, size=count) * pick(choices, (1.0, 0.25, 0.5))
    elif recipe == "cancelling":
        large = rng.standard_normal(count) * 1e2
        drawn = np.where(rng.random(count) < 0.5, large, -large) + rng.standard_normal(count) * 1e-2
    else:
        drawn = rng.standard_normal(count) * pick(choices, (1.0, 1e2, 1e-2, 3.0))
    return pack(drawn.tolist(), dt).reshape(dims)


def _batch(choices: Choices) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Batch dims of A and B: none, equal, or broadcasting (1s, fewer dims)."""
    form = choices.integer(0, 5)
    if form <= 2:
        return (), ()
    dims = tuple(choices.integer(1, 3) for _ in range(choices.integer(1, 2)))
    if form == 3:
        return dims, dims
    if form == 4:
        return dims, tuple(1 if choices.integer(0, 1) else d for d in dims)
    return dims, dims[1:] if len(dims) > 1 else ()


def matmul_example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    m, k, n = _sides(choices, dt)
    batch_a, batch_b = _batch(choices) if k != LONG_K else ((), ())
    if one_in(choices, 2):
        batch_a, batch_b = batch_b, batch_a
    a_shape, b_shape = batch_a + (m, k), batch_b + (k, n)
    ones = choices.integer(0, 7)
    if ones == 5:
        a_shape = (k,)
    elif ones == 6:
        b_shape = (k,)
    elif ones == 7:
        a_shape, b_shape = (k,), (k,)
    if invalid_share(choices):
        a_shape, b_shape = _invalid_shapes(choices, a_shape, b_shape)
    recipe = pick(choices, RECIPES)
    seed = choices.integer(0, WIDE - 1)
    a = values(choices, dt, a_shape, recipe, seed)
    b = values(choices, dt, b_shape, recipe if recipe != "boundary" else "random", seed + 1)
    return made(version, binding, {"A": a, "B": b})


def _invalid_shapes(choices: Choices, a_shape: tuple[int, ...], b_shape: tuple[int, ...]):
    """Shapes numpy.matmul refuses: inner dims that differ, a rank-0 operand, batch dims that clash."""
    form = choices.integer(0, 2)
    if form == 0:
        return a_shape[:-1] + (a_shape[-1] + 1,), b_shape
    if form == 1:
        return ((), b_shape) if choices.integer(0, 1) else (a_shape, ())
    return (2,) + a_shape[-2:] if len(a_shape) > 1 else (2, 1, a_shape[-1]), (3,) + b_shape[-2:] if len(b_shape) > 1 else (3, b_shape[0], 1)


def _coefficient(choices: Choices, rng: np.random.Generator) -> float:
    chosen = pick(choices, COEFFICIENTS)
    return float(np.float32(rng.standard_normal() * 2)) if chosen == "random" else chosen


def gemm_example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    m, k, n = _sides(choices, dt)
    trans_a, trans_b = choices.integer(0, 1), choices.integer(0, 1)
    recipe = pick(choices, RECIPES)
    seed = choices.integer(0, WIDE - 1)
    rng = np.random.default_rng(seed + 2)
    attributes = {}
    if trans_a or one_in(choices, 3):
        attributes["transA"] = trans_a
    if trans_b or one_in(choices, 3):
        attributes["transB"] = trans_b
    alpha, beta = _coefficient(choices, rng), _coefficient(choices, rng)
    if alpha != 1.0 or one_in(choices, 3):
        attributes["alpha"] = alpha
    if beta != 1.0 or one_in(choices, 3):
        attributes["beta"] = beta
    legacy = version.attribute("broadcast") is not None
    c_forms = ((m, n), (n,), (m, 1), (1, n), (), (1,))
    c_shape = pick(choices, c_forms)
    if legacy:
        broadcast = 0 if c_shape == (m, n) and choices.integer(0, 1) else 1
        attributes["broadcast"] = broadcast
    optional = version.input("C") is not None and version.input("C").optional
    absent = optional and one_in(choices, 4)
    a_shape, b_shape = ((k, m) if trans_a else (m, k)), ((n, k) if trans_b else (k, n))
    if invalid_share(choices):
        form = choices.integer(0, 2)
        if form == 0:
            a_shape = (a_shape[0] + 1, a_shape[1]) if trans_a else (a_shape[0], a_shape[1] + 1)
        elif form == 1:
            a_shape = a_shape + (1,)
        else:
            c_shape, absent = (m + 1, n + 2), False
    a = values(choices, dt, a_shape, recipe, seed)
    b = values(choices, dt, b_shape, recipe if recipe != "boundary" else "random", seed + 1)
    inputs = {"A": a, "B": b}
    if absent:
        if one_in(choices, 2):
            inputs["C"] = None
    else:
        inputs["C"] = values(choices, dt, c_shape, "summable" if recipe == "boundary" else recipe, seed + 3)
    return made(version, binding, inputs, attributes)


def operand_shapes(choices: Choices, m: int, k: int, n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A and B of an [m, k] by [k, n] product with drawn batch dims, now and then A or B 1-D."""
    batch_a, batch_b = _batch(choices)
    a_shape, b_shape = batch_a + (m, k), batch_b + (k, n)
    ones = choices.integer(0, 7)
    if ones == 6:
        a_shape = (k,)
    elif ones == 7:
        b_shape = (k,)
    return a_shape, b_shape


def matmul_integer_example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt_a, dt_b = dtype(binding["T1"]), dtype(binding["T2"])
    m, k, n = _sides(choices, dt_a)
    a_shape, b_shape = operand_shapes(choices, m, k, n)
    if invalid_share(choices):
        a_shape, b_shape = _invalid_shapes(choices, a_shape, b_shape)
    seed = choices.integer(0, WIDE - 1)
    rng = np.random.default_rng(seed)
    boundary = one_in(choices, 4)
    a = array(choices, dt_a, a_shape) if boundary else _bytes(rng, dt_a, a_shape)
    b = _bytes(rng, dt_b, b_shape)
    inputs = {"A": a, "B": b}
    for name, dt, shape, rows in (("a_zero_point", dt_a, a_shape, True), ("b_zero_point", dt_b, b_shape, False)):
        form = choices.integer(0, 5)
        if form == 0:
            continue
        if form == 1:
            inputs[name] = None if name == "a_zero_point" and "b_zero_point" not in inputs else _bytes(rng, dt, ())
            continue
        if form in (2, 3) or len(shape) < 2:
            inputs[name] = _bytes(rng, dt, ())
        elif form == 4:
            inputs[name] = _bytes(rng, dt, (shape[-2],) if rows and len(shape) == 2 else (shape[-1],) if len(shape) == 2
                                  else shape[:-1] + (1,) if rows else shape[:-2] + (1, shape[-1]))
        else:
            inputs[name] = _bytes(rng, dt, (1,))
    if invalid_share(choices):
        inputs["a_zero_point"] = _bytes(rng, dt_a, (a_shape[-1] + 2,))
    return made(version, binding, inputs)


def _bytes(rng: np.random.Generator, dt: DType, shape: tuple[int, ...]) -> np.ndarray:
    """8-bit values: mostly small ones around 0 (or 128 for uint8), now and then anywhere."""
    count = math.prod(shape)
    if rng.random() < 0.25:
        drawn = rng.integers(dt.lowest, dt.max, size=count, endpoint=True)
    else:
        centre = 0 if dt.kind == "int" else 8
        drawn = rng.integers(centre - 8, centre + 9, size=count)
    return pack(drawn.tolist(), dt).reshape(shape)


STRATEGIES = {"MatMul": matmul_example, "Gemm": gemm_example, "MatMulInteger": matmul_integer_example}
