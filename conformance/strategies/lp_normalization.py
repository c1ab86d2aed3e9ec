"""Random LpNormalization cases (reference/lp_normalization.py): shapes of rank 1 to 4 with size-0
dims, p left out (2), 1 or 2, the axis left out (-1) or at its boundaries (negative too); and
values that separate bugs from legal reordering:

- exact rows (a large share): small integers whose norm is exact in every accumulator (Σ|x| for
  p = 1; for p = 2 rows built from 3-4-5, 1-2-2, 2-3-6 and runs of four equal values, whose Σx² is
  a perfect square), often a power of two, so the quotient is exact and a wrong axis, p = 1
  computed as 2 or a dropped term is told bitwise;
- the shared accumulating draws (strategies/accumulating.py): summable, random, cancelling and
  boundary values (NaN, ±inf, max, subnormals), judged by the per-element bound;
- rows near overflow (Σx² or Σ|x| past the type's max, the quotient in range) and rows of zeros
  (the text's zero output);
- now and then long rows (4096 elements) in a float type, where a float16 accumulator and a
  float32 one part;
- a small share of what the text forbids: p other than 1 and 2, an axis outside [-r, r-1], a
  rank-0 input.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .accumulating import values
from .common import WIDE, Choices, invalid_share, one_in, pick, shape
from .movement import axis_value, made, outside_axis

LONG_ROW = 4096
# Rows whose Σx² is a perfect square (norm in brackets), placed among zeros with drawn signs.
SQUARE_ROWS = ((3, 4), (1, 2, 2), (2, 3, 6), (1, 4, 8), (1, 1, 1, 1), (2, 2, 2, 2), (1,), (2, 6, 9))
RECIPES = ("exact", "exact", "exact", "accumulating", "accumulating", "near overflow", "zero rows")


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    if one_in(choices, 12):
        dims = (2, LONG_ROW) if one_in(choices, 2) else (LONG_ROW,)
        axis = pick(choices, (len(dims) - 1, -1))
    else:
        dims = shape(choices, min_rank=1, max_rank=4)
        axis = axis_value(choices, len(dims), negative=True)
    attributes: dict = {}
    if not one_in(choices, 3):
        attributes["axis"] = axis
    p = pick(choices, (1, 2))
    if not one_in(choices, 3) or p == 1:
        attributes["p"] = p
    data = _data(choices, dt, dims, axis, p)
    if invalid_share(choices):
        wrong = choices.integer(0, 2)
        if wrong == 0:
            attributes["p"] = pick(choices, (3, 0, -1, -2))
        elif wrong == 1:
            attributes["axis"] = outside_axis(choices, len(dims), negative=True)
        else:
            data = _data(choices, dt, (), 0, p)
    return made(version, binding, {"input": data}, attributes)


def _data(choices: Choices, dt: DType, dims: tuple[int, ...], axis: int, p: int) -> np.ndarray:
    recipe = pick(choices, RECIPES)
    count = math.prod(dims)
    if recipe == "accumulating" or not dims or not count:
        return values(choices, dt, dims, "sum")
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    along = dims[axis]
    rows = count // along
    if recipe == "exact":
        drawn = _exact_rows(rng, rows, along, p)
    elif recipe == "near overflow":
        drawn = _near_overflow(rng, rows, along, p, dt)
    else:
        drawn = rng.integers(-4, 5, size=(rows, along)).astype(np.float64)
        drawn[rng.random(rows) < 0.5] = 0.0
    axis %= len(dims)
    placed = np.moveaxis(drawn.reshape((*dims[:axis], *dims[axis + 1:], along)), -1, axis)
    return pack(placed.reshape(-1).tolist(), dt).reshape(dims)


def _exact_rows(rng: np.random.Generator, rows: int, along: int, p: int) -> np.ndarray:
    """Rows whose norm every accumulator computes exactly: small integers for p = 1 (a power of
    two now and then, every element ±1 or 0); for p = 2 a perfect-square row among zeros."""
    if p == 1:
        if rng.random() < 0.5:
            return rng.integers(-6, 7, size=(rows, along)).astype(np.float64)
        return rng.choice(np.array([1.0, -1.0, 0.0]), size=(rows, along))
    drawn = np.zeros((rows, along))
    for row in drawn:
        fitting = [values for values in SQUARE_ROWS if len(values) <= along]
        values = fitting[rng.integers(len(fitting))]
        places = rng.permutation(along)[:len(values)]
        row[places] = np.array(values) * rng.choice(np.array([1.0, -1.0]), size=len(values)) * 2.0 ** int(rng.integers(-2, 3))
    return drawn


def _near_overflow(rng: np.random.Generator, rows: int, along: int, p: int, dt: DType) -> np.ndarray:
    """Rows whose Σx² (p = 2) or Σ|x| (p = 1) is near or past the type's max, each value in range."""
    largest = float(ml_dtypes.finfo(dt.np_dtype).max) if dt.kind == "float" else 1.0
    scale = math.sqrt(largest) if p == 2 else largest / max(along, 1)
    magnitudes = np.minimum(rng.uniform(0.25, 2.0, size=(rows, along)) * scale, largest / 2)
    return magnitudes * rng.choice(np.array([1.0, -1.0]), size=(rows, along))
