"""Strategies every op shares: shapes, boundary-weighted values of any dtype, index values.

Half of all drawn scalars come from the dtype's boundaries (its extremes, the integers around
2**24, 2**31, 2**53, 2**63, NaN, +-inf, -0.0, subnormals), which is where runtimes break; the
rest spread over the dtype's whole range. Which boundaries exist is read from the dtype registry,
so a dtype added by a new op version is covered without a list to edit.
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


# hypothesis prefers the simplest choice (0, the first option); testing against a value in the
# middle of a range gives that choice its intended share instead.
ONE_IN_TEN = st.integers(0, 9).map(lambda n: n == 7)


@cache
def integers(low: int, high: int) -> st.SearchStrategy[int]:
    """`st.integers`, built once per range: hypothesis validates every new strategy object it meets."""
    return st.integers(low, high)


@st.composite
def _dims(draw, max_side: int) -> int:
    return 0 if draw(ONE_IN_TEN) else draw(integers(1, max(max_side, 1)))


@cache
def dims(max_side: int) -> st.SearchStrategy[int]:
    """A dimension: zero about one time in ten (an empty tensor), else 1..max_side."""
    return _dims(max_side)


@st.composite
def shapes(draw, min_rank: int = 0, max_rank: int = 6) -> tuple[int, ...]:
    """Shapes of rank min_rank..max_rank, zero-size dims included, at most 64 elements."""
    rank = draw(integers(min_rank, max_rank))
    return tuple(draw(dims(MAX_SIDE[rank])) for _ in range(rank))


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
    """Values spread over the whole range of `dt`."""
    if dt.kind == "bool":
        return st.booleans()
    if dt.kind == "string":
        return st.text(max_size=6)
    if dt.kind == "complex":
        return st.complex_numbers(max_magnitude=1e6, allow_nan=False, allow_infinity=False)
    if dt.kind in ("int", "uint"):
        return st.integers(dt.lowest, dt.max)
    top = float(dt.max)
    return st.floats(-top if dt.name != "float8e8m0" else float(dt.lowest), top, allow_nan=False).map(
        lambda v: float(np.array(v).astype(dt.np_dtype).astype(np.float64))
    )


@cache
def evenly(values: tuple) -> st.SearchStrategy:
    """One of `values`, each about equally likely (`sampled_from` favours the first ones),
    still shrinking toward the first."""
    return st.integers(0, 2**32 - 1).map(lambda i: values[i % len(values)])


@cache
def scalars(dt: DType) -> st.SearchStrategy:
    """Half boundaries, half ordinary values."""
    return st.one_of(evenly(boundary_values(dt)), ordinary_values(dt))


# Up to this many elements hypothesis draws each one (and can shrink each); beyond it hypothesis
# draws a seed and a few planted values, and a numpy Generator fills the rest.
ELEMENTWISE_LIMIT = 8
PLANTED = 4


@st.composite
def arrays(draw, dt: DType, shape: tuple[int, ...]) -> np.ndarray:
    """An array of `dt` and `shape`.

    Small arrays: each element drawn by `scalars`. Larger ones: about one time in four a sweep
    through the dtype's boundary values from a drawn offset; otherwise a bulk fill from a numpy
    Generator seeded by a drawn integer (half boundary values, half anything the dtype holds),
    with a few hypothesis-drawn values planted at drawn positions. Hypothesis stays in charge of
    everything it can shrink; the bulk costs numpy time, not hypothesis draws.
    """
    count = math.prod(shape)
    if count <= ELEMENTWISE_LIMIT:
        return pack(draw(_fixed_lists(dt, count)), dt).reshape(shape)
    boundaries = boundary_values(dt)
    if draw(ONE_IN_FOUR):
        offset = draw(integers(0, len(boundaries) - 1))
        return pack([boundaries[(offset + i) % len(boundaries)] for i in range(count)], dt).reshape(shape)
    flat = bulk_fill(dt, count, draw(integers(0, 2**32 - 1)))
    for _ in range(draw(integers(0, PLANTED))):
        flat[draw(integers(0, count - 1))] = pack([draw(scalars(dt))], dt)[0]
    return flat.reshape(shape)


ONE_IN_FOUR = st.integers(0, 3).map(lambda n: n == 2)


@cache
def _fixed_lists(dt: DType, count: int) -> st.SearchStrategy[list]:
    return st.lists(scalars(dt), min_size=count, max_size=count)


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


@cache
def index_values(dim: int, index_dtype: DType) -> st.SearchStrategy:
    """starts/ends for an axis of size `dim`: in range, negative, beyond +-dim, INT_MAX/INT_MIN."""
    options = [st.integers(0, dim), st.integers(dim + 1, dim + 10), st.integers(-dim - 10, -dim - 1),
               st.sampled_from((index_dtype.max, index_dtype.lowest))]
    if dim > 0:
        options.append(st.integers(-dim, -1))
    return st.one_of(options)


@cache
def step_values(dim: int, index_dtype: DType) -> st.SearchStrategy:
    """Steps of both signs, |step| beyond dim, and the extremes of the index type (never 0)."""
    return st.one_of(
        st.sampled_from((1, -1, 2, -2)),
        st.integers(1, dim + 3),
        st.integers(-dim - 3, -1),
        st.sampled_from((index_dtype.max, index_dtype.lowest)),
    )


ONE_IN_TWENTY = st.integers(0, 19).map(lambda n: n == 13)


def invalid_share() -> st.SearchStrategy:
    """True for about one draw in twenty: the share of deliberately invalid cases."""
    return ONE_IN_TWENTY
