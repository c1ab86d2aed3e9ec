"""The value draws the accumulating ops share (reductions, CumSum and CumProd): recipes that
separate bugs from legal reordering.

- "summable": small integers or quarters, every partial sum exact in every accumulator a test draws
  them for, so a dropped term, a wrong axis or an off-by-one prefix is told bitwise;
- "random": normal values at a drawn scale; "cancelling": pairs x, -x beside small values, sums far
  below Σ|a|, judged relative to it; both judged by the per-element bound;
- "boundary": the shared `array` draws (NaN, ±inf, max, subnormals);
- products draw factors near 1 (powers of two and ±1, exact; or uniform in [0.5, 2], within 3% of
  1 along a long axis, whose products would leave a 16-bit type's range); integers stay small.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType
from ..values import pack
from .common import WIDE, Choices, array, pick

RECIPES = ("summable", "summable", "random", "cancelling", "boundary")
LONG = 2048  # from this many elements along a line, products draw factors within 3% of 1


def values(choices: Choices, dt: DType, dims: tuple[int, ...], kind: str) -> np.ndarray:
    """Data of `dt` and shape `dims` by a drawn recipe; `kind` "prod" draws factors, "exp" small
    integers (an integer log-sum-exp), anything else terms to sum."""
    recipe = pick(choices, RECIPES)
    count = math.prod(dims)
    if recipe == "boundary" or dt.kind not in ("float", "int", "uint") or not count:
        return array(choices, dt, dims)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    if dt.kind != "float":
        low = 0 if dt.kind == "uint" else (-2 if kind == "prod" else -4)
        high = 3 if kind in ("prod", "exp") else 9
        return pack(rng.integers(low, high + 1, size=count).tolist(), dt).reshape(dims)
    if kind == "prod":
        drawn = factors(rng, count, exact=recipe == "summable", long=count >= LONG)
    elif recipe == "summable":
        drawn = rng.integers(-8, 9, size=count) * pick(choices, (1.0, 0.25, 0.5))
    elif recipe == "cancelling":
        drawn = cancelling(rng, count)
    else:
        drawn = rng.standard_normal(count) * pick(choices, (1.0, 1e3, 1e-3, 3.0))
    return pack(drawn.tolist(), dt).reshape(dims)


def factors(rng: np.random.Generator, count: int, exact: bool, long: bool) -> np.ndarray:
    """Factors near 1: powers of two and ±1 (exact products), or uniform in [0.5, 2] with a sign
    (within 3% of 1 along a long axis)."""
    if exact:
        return rng.choice(np.array([1.0, -1.0, 2.0, 0.5, -2.0, 1.0, -0.5, 1.0]), size=count)
    if long:
        return rng.uniform(0.97, 1.03, size=count) * rng.choice(np.array([1.0, -1.0]), size=count)
    return rng.uniform(0.5, 2.0, size=count) * rng.choice(np.array([1.0, -1.0]), size=count)


def cancelling(rng: np.random.Generator, count: int) -> np.ndarray:
    """Pairs of opposite large values beside small ones, shuffled: sums far smaller than Σ|a|."""
    large = rng.standard_normal(count // 2) * 1e3
    drawn = np.concatenate([large, -large, rng.standard_normal(count - 2 * (count // 2))])
    drawn[: count // 4] += rng.standard_normal(count // 4) * 1e-2
    return rng.permutation(drawn)
