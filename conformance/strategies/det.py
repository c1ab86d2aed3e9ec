"""Random cases of Det (reference/det.py): [*, M, M] inputs with 0 to 2 batch dims (a size-0 one
now and then), M mostly 1 to 5, now and then 0 (the empty matrix) or 8 and 12; matrices drawn to
separate bugs from legal rounding: small integers (an integer determinant), random normals at a
drawn scale, upper and lower triangular and diagonal ones (powers of two on the diagonal),
singular ones (a repeated or zero row or column, a rank-deficient product), nearly singular ones,
and the boundary values of `common.array` (NaN, ±inf, max, subnormals). A small share of shapes
the text forbids (rank below 2, non-square)."""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick
from .movement import made

RECIPES = ("integers", "integers", "random", "triangular", "diagonal", "singular", "near-singular", "boundary")


def _size(choices: Choices) -> int:
    if one_in(choices, 10):
        return pick(choices, (0, 8, 12))
    return choices.integer(1, 5)


def _batch(choices: Choices) -> tuple[int, ...]:
    dims = tuple(choices.integer(1, 3) for _ in range(choices.integer(0, 2)))
    if dims and one_in(choices, 12):
        dims = dims[:-1] + (0,)
    return dims


def matrices(rng: np.random.Generator, recipe: str, count: int, size: int) -> np.ndarray:
    """`count` float64 matrices [size, size] by `recipe` (see the module's docstring)."""
    shape = (count, size, size)
    if recipe == "integers":
        return rng.integers(-4, 5, size=shape).astype(np.float64)
    if recipe == "random":
        return rng.standard_normal(shape) * rng.choice(np.array([1.0, 3.0, 1e-2, 1e2]))
    if recipe in ("triangular", "diagonal"):
        drawn = rng.integers(-4, 5, size=shape).astype(np.float64)
        diagonal = rng.choice(np.array([1.0, -1.0, 2.0, 0.5, -4.0, 0.25]), size=(count, size))
        if recipe == "diagonal":
            drawn = np.zeros(shape)
        else:
            drawn = np.triu(drawn, 1) if rng.random() < 0.5 else np.tril(drawn, -1)
        drawn[:, np.arange(size), np.arange(size)] = diagonal
        return drawn
    if recipe == "singular":
        drawn = rng.integers(-4, 5, size=shape).astype(np.float64)
        if size >= 2:
            form = rng.integers(0, 4)
            if form == 0:
                drawn[:, -1] = drawn[:, 0]
            elif form == 1:
                drawn[:, :, -1] = 2 * drawn[:, :, 0]
            elif form == 2:
                drawn[:, rng.integers(0, size)] = 0
            else:
                left = rng.integers(-3, 4, size=(count, size, size - 1)).astype(np.float64)
                right = rng.integers(-3, 4, size=(count, size - 1, size)).astype(np.float64)
                drawn = left @ right
        else:
            drawn[:] = 0
        return drawn
    base = rng.standard_normal(shape)  # near-singular: a row almost the sum of two others
    if size >= 3:
        base[:, -1] = base[:, 0] + base[:, 1] + rng.standard_normal((count, size)) * 1e-3
    return base


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt: DType = dtype(binding["T"])
    size, batch = _size(choices), _batch(choices)
    recipe = pick(choices, RECIPES)
    if invalid_share(choices):
        dims = pick(choices, ((size,), (size, size + 1), batch + (size + 1, size), ()))
        return made(version, binding, {"X": array(choices, dt, dims)})
    dims = batch + (size, size)
    if recipe == "boundary":
        return made(version, binding, {"X": array(choices, dt, dims)})
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    drawn = matrices(rng, recipe, math.prod(batch), size)
    return made(version, binding, {"X": pack(drawn.reshape(-1).tolist(), dt).reshape(dims)})
