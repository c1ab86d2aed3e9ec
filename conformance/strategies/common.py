"""What every op's strategy shares: shapes, boundary-weighted values of any dtype, index values.

Half of all drawn scalars come from the dtype's boundaries (its extremes, the integers around
2**24, 2**31, 2**53, 2**63, NaN, +-inf, -0.0, subnormals), which is where runtimes break; the
rest spread over the dtype's whole range. Which boundaries exist is read from the dtype registry,
so a dtype added by a new op version is covered without a list to edit.

The helpers are plain functions of hypothesis's `draw`, each costing as few choices as it can
(one for a dim or an index, one or two for a scalar), and every strategy they draw from is built once:
hypothesis's time per case grows with the choices and the new strategy objects a case needs, and
a conformance run draws tens of thousands of cases. Every helper shrinks toward its simplest
value (a dim of 1, index 0, the value 0, no bound), so a shrunk failure reads well.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from hypothesis import strategies as st

from ..dtypes import DType
from ..values import pack

# Side-length caps per rank keep every tensor at 64 elements or fewer.
MAX_SIDE = {0: 0, 1: 8, 2: 8, 3: 4, 4: 2, 5: 2, 6: 2}
INTEGER_LANDMARKS = [2**24, 2**31, 2**32, 2**53, 2**63, 2**64]
WIDE = 2**32  # draws "from a wide range" are taken modulo what they choose among


@cache
def integers(low: int, high: int) -> st.SearchStrategy[int]:
    """`st.integers`, built once per range: hypothesis validates every new strategy object it meets."""
    return st.integers(low, high)


def one_in(draw, n: int) -> bool:
    """True about one draw in `n`; shrinks to False. (The middle value, not 0: 0 is where
    hypothesis starts and shrinks to, and would be drawn more often than its share.)"""
    return draw(integers(0, n - 1)) == n // 2


def pick(draw, options: tuple | list):
    """One of `options`, each about equally likely; shrinks toward the first."""
    return options[draw(integers(0, len(options) - 1))]


def dim(draw, max_side: int) -> int:
    """A dimension from one draw: zero about one time in ten (an empty tensor), else 1..max_side."""
    side = max(max_side, 1)
    n = draw(integers(0, 10 * side - 1))
    return 0 if n >= 9 * side else 1 + n % side


def shape(draw, min_rank: int = 0, max_rank: int = 6) -> tuple[int, ...]:
    """A shape of rank min_rank..max_rank, zero-size dims included, at most 64 elements."""
    rank = draw(integers(min_rank, max_rank))
    return tuple(dim(draw, MAX_SIDE[rank]) for _ in range(rank))


def flags(draw, count: int) -> list[bool]:
    """`count` independent yes/no choices from one draw; shrinks to all False."""
    mask = draw(integers(0, 2**count - 1))
    return [bool(mask >> k & 1) for k in range(count)]


def permutation(draw, size: int) -> list[int]:
    """A permutation of range(size) from one draw (a Lehmer code); shrinks to the identity."""
    code = draw(integers(0, math.factorial(size) - 1))
    remaining, chosen = list(range(size)), []
    for position in range(size, 0, -1):
        index, code = divmod(code, math.factorial(position - 1))
        chosen.append(remaining.pop(index))
    return chosen


@cache
def boundary_values(dt: DType) -> tuple:
    """The values of `dt` most likely to break a runtime, each representable in `dt`."""
    if dt.kind == "bool":
        return (False, True)
    if dt.kind == "string":
        return ("", "a", "\u00fc\u00df", "long string " * 4)
    if dt.kind == "complex":
        return (0j, complex(1, -1), complex(math.inf, 0), complex(math.nan, 0))
    if dt.kind in ("int", "uint"):
        return _integer_boundaries(dt)
    return _float_boundaries(dt)


def _integer_boundaries(dt: DType) -> tuple[int, ...]:
    low, high = dt.lowest, dt.max
    candidates = {low, low + 1, high, high - 1, 0, 1, -1}
    for landmark in INTEGER_LANDMARKS:
        candidates |= {landmark - 1, landmark, landmark + 1, -landmark - 1, -landmark, -landmark + 1}
    # Simplest first: shrinking moves toward the start of the list.
    return tuple(sorted((v for v in candidates if low <= v <= high), key=lambda v: (abs(v), v < 0)))


def _float_boundaries(dt: DType) -> tuple[float, ...]:
    special = dt.special_values()
    wanted = [0.0, 1.0, -1.0, 0.5, float(2**24 + 1), float(2**53 + 1)]
    for name in ("max", "lowest", "tiny", "subnormal", "nan", "inf", "-inf", "-0.0"):
        if name in special:
            wanted.append(float(special[name]))
    if "tiny" in special:
        wanted += [-float(special["tiny"]), -float(special["subnormal"])]
    held = []
    for value in wanted:
        if math.isfinite(value) and abs(value) > float(dt.max):
            continue
        cast = float(np.array(value).astype(dt.np_dtype).astype(np.float64))
        if not any(_same_float(cast, h) for h in held):
            held.append(cast)
    return tuple(held)


def _same_float(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


@cache
def ordinary_values(dt: DType) -> st.SearchStrategy:
    """Values spread over the whole range of `dt` (floats as doubles, rounded by `scalar`)."""
    if dt.kind == "bool":
        return st.booleans()
    if dt.kind == "string":
        return st.text(max_size=6)
    if dt.kind == "complex":
        return st.complex_numbers(max_magnitude=1e6, allow_nan=False, allow_infinity=False)
    if dt.kind in ("int", "uint"):
        return st.integers(dt.lowest, dt.max)
    top = float(dt.max)
    return st.floats(-top if dt.name != "float8e8m0" else float(dt.lowest), top, allow_nan=False)


def scalar(draw, dt: DType):
    """Half boundaries, half ordinary values, as a Python value `dt` holds exactly.

    A boundary value costs one draw (its parity says "boundary"), an ordinary value two.
    """
    n = draw(integers(0, WIDE - 1))
    if n % 2 == 0:
        boundaries = boundary_values(dt)
        return boundaries[(n // 2) % len(boundaries)]
    value = draw(ordinary_values(dt))
    if dt.kind == "float":
        return float(np.array(value).astype(dt.np_dtype).astype(np.float64))
    return value


# Up to this many elements each one is drawn (and shrunk) on its own; a larger array is a fill
# recipe, a seed and a few planted values.
ELEMENTWISE_LIMIT = 4
PLANTED = 3
FILLS = ("counting", "boundary sweep", "seeded bulk")


def array(draw, dt: DType, dims: tuple[int, ...]) -> np.ndarray:
    """An array of `dt` and shape `dims`.

    Small arrays: each element a `scalar`. Larger ones: a fill, then up to PLANTED drawn scalars
    at drawn positions. The fills: counting 0, 1, 2... (distinct values, so a wrong index shows;
    the simplest, where shrinking ends), a sweep through the dtype's boundary values from a drawn
    offset, or a bulk fill from a numpy Generator seeded by a drawn integer (half boundary values,
    half anything the dtype holds). Hypothesis keeps everything it can shrink; the bulk costs
    numpy time, not hypothesis draws.
    """
    count = math.prod(dims)
    if count <= ELEMENTWISE_LIMIT:
        return pack([scalar(draw, dt) for _ in range(count)], dt).reshape(dims)
    recipe = draw(integers(0, len(FILLS) * (PLANTED + 1) - 1))
    fill, planted = FILLS[recipe % len(FILLS)], recipe // len(FILLS)
    flat = _filled(dt, count, fill, draw(integers(0, WIDE - 1)) if fill != "counting" else 0)
    for _ in range(planted):
        flat[draw(integers(0, count - 1))] = pack([scalar(draw, dt)], dt)[0]
    return flat.reshape(dims)


def _filled(dt: DType, count: int, fill: str, seed: int) -> np.ndarray:
    if fill == "counting":
        return counting(dt, count)
    if fill == "boundary sweep":
        boundaries = boundary_values(dt)
        return pack([boundaries[(seed + i) % len(boundaries)] for i in range(count)], dt)
    return bulk_fill(dt, count, seed)


def counting(dt: DType, count: int) -> np.ndarray:
    """0, 1, 2, ... in `dt` (wrapping where the dtype is narrow; "0", "1"... for strings)."""
    if dt.kind == "string":
        return pack([str(i) for i in range(count)], dt)
    if dt.kind == "bool":
        return (np.arange(count) % 2).astype(bool)
    if dt.kind in ("int", "uint"):
        span = dt.max - max(dt.lowest, 0) + 1
        return pack([max(dt.lowest, 0) + i % span for i in range(count)], dt)
    values = np.arange(count, dtype=np.float64)
    return values.astype(dt.np_dtype) if dt.is_numpy_native else pack(values.tolist(), dt)


def bulk_fill(dt: DType, count: int, seed: int) -> np.ndarray:
    """`count` values of `dt` from a seeded numpy Generator: half boundaries, half any value."""
    rng = np.random.default_rng(seed)
    boundaries = pack(list(boundary_values(dt)), dt)
    picked = boundaries[rng.integers(0, len(boundaries), size=count)]
    anything = _any_values(dt, count, rng)
    return np.where(rng.random(count) < 0.5, picked, anything)


def _any_values(dt: DType, count: int, rng: np.random.Generator) -> np.ndarray:
    if dt.kind == "bool":
        return rng.integers(0, 2, size=count).astype(bool)
    if dt.kind == "string":
        return pack([f"v{n}" for n in rng.integers(0, 1000, size=count)], dt)
    if dt.kind == "complex":
        return (rng.standard_normal(count) + 1j * rng.standard_normal(count)).astype(dt.np_dtype)
    if dt.kind in ("int", "uint"):
        if dt.is_numpy_native:
            return rng.integers(dt.lowest, dt.max, size=count, endpoint=True, dtype=dt.np_dtype)
        return rng.integers(dt.lowest, dt.max, size=count, endpoint=True).astype(dt.np_dtype)
    # Random bit patterns cover every value a float type holds: subnormals, NaNs and infinities too.
    width = max(dt.np_dtype.itemsize, 1)
    bits = rng.integers(0, 256, size=count * width, dtype=np.uint8)
    return bits.view(dt.np_dtype)[:count].copy()


def neighbours(dt: DType, value) -> list:
    """The values just below and just above `value` in `dt` (for bounds next to input values)."""
    if dt.kind in ("int", "uint"):
        return [v for v in (int(value) - 1, int(value) + 1) if dt.lowest <= v <= dt.max]
    if dt.kind != "float" or not math.isfinite(float(value)):
        return []
    as_dt = np.array(value).astype(dt.np_dtype)
    step = np.array(1, dtype=np.uint8 if dt.np_dtype.itemsize == 1 else f"u{dt.np_dtype.itemsize}")
    bits = as_dt.view(step.dtype)
    found = []
    for delta in (-1, 1):
        with np.errstate(all="ignore"):
            moved = (bits + np.array(delta).astype(step.dtype)).view(dt.np_dtype)
        number = float(moved.astype(np.float64))
        if math.isfinite(number) and number != float(value):
            found.append(number)
    return found


def _ranges(*ranges: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    return tuple((low, high) for low, high in ranges if low <= high)


def _from_ranges(draw, ranges: tuple[tuple[int, int], ...]) -> int:
    """One draw: a range (about equally likely), then a value in it; shrinks to the first range's low."""
    n = draw(integers(0, WIDE - 1))
    low, high = ranges[n % len(ranges)]
    return low + (n // len(ranges)) % (high - low + 1)


def index_value(draw, dim_size: int, index_dtype: DType) -> int:
    """A start or end for an axis of `dim_size`, from one draw: in range, negative, beyond +-dim,
    or INT_MAX/INT_MIN of the index dtype."""
    return _from_ranges(draw, _ranges((0, dim_size), (-dim_size, -1), (dim_size + 1, dim_size + 10),
                                      (-dim_size - 10, -dim_size - 1), (index_dtype.max, index_dtype.max),
                                      (index_dtype.lowest, index_dtype.lowest)))


def step_value(draw, dim_size: int, index_dtype: DType) -> int:
    """A step from one draw: both signs, |step| beyond dim, the extremes of the index type; never 0."""
    return _from_ranges(draw, _ranges((1, 2), (-2, -1), (1, dim_size + 3), (-dim_size - 3, -1),
                                      (index_dtype.max, index_dtype.max), (index_dtype.lowest, index_dtype.lowest)))


def invalid_share(draw) -> bool:
    """True for about one draw in twenty: the share of deliberately invalid cases."""
    return one_in(draw, 20)
