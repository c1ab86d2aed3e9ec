"""What every op's strategy shares: the choices of a case, shapes, boundary-weighted values of any
dtype, index values.

Hypothesis draws the bytes of a batch of cases in one choice, and each case reads its choices from
its own slice of them (`Choices`), as hypothesis's byte-stream engine used to do for every strategy.
Hypothesis still makes every choice and shrinks it: a choice reads as few bytes as its range
needs, and a byte shrunk toward 0 moves its choice toward the simplest value. One choice per
batch matters twice: hypothesis's time per case grows with the choices a case makes (drawing
tens of small integers per case gave a few hundred cases a second), and hypothesis mutates a test
call by copying one span onto another of the same kind, which made most of a large batch repeat
cases drawn before (400 cases of one group were 158 distinct ones).

Half of all drawn scalars come from the dtype's boundaries (its extremes, the integers around
2**24, 2**31, 2**53, 2**63, NaN, +-inf, -0.0, subnormals), which is where runtimes break; the
rest spread over the dtype's whole range. Which boundaries exist is read from the dtype registry,
so a dtype added by a new op version is covered without a list to edit. Every helper shrinks
toward its simplest value (a dim of 1, index 0, the value 0, no bound), so a shrunk failure reads well.
"""

from __future__ import annotations

import hashlib
import math
from functools import cache

import numpy as np

from ..dtypes import DType
from ..values import pack

# Side-length caps per rank keep every tensor at 64 elements or fewer.
MAX_SIDE = {0: 0, 1: 8, 2: 8, 3: 4, 4: 2, 5: 2, 6: 2}
INTEGER_LANDMARKS = [2**24, 2**31, 2**32, 2**53, 2**63, 2**64]
WIDE = 2**32  # the seeds of bulk fills
# The bytes hypothesis draws for one case: enough for the longest strategy (Slice reads about 90
# with its sections). Each byte costs hypothesis about half a microsecond to draw.
CASE_BYTES = 96
SHAPE_BYTES = 13  # a rank and six dims
ARRAY_BYTES = 32  # four elements or a fill and three planted values, most of the time


class Choices:
    """The choices of one case, read in order from the bytes hypothesis drew for it.

    A choice among `span` values reads the fewest bytes that hold span-1 (one more when span is not
    a power of two, so the modulo stays close to uniform), big-endian: shrinking any of its bytes
    toward 0 moves the choice toward `low`. A part of a case whose size varies (a shape, an
    array, a list of indices) reads from a `section` of fixed size, so when shrinking changes how
    much it reads, every later choice still reads the same bytes. Reading past the end goes on in
    a stream hashed from the bytes: still determined by what hypothesis drew, not shrunk byte by byte.
    """

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._at = 0

    def integer(self, low: int, high: int) -> int:
        """An integer in [low, high]; shrinks to `low`."""
        span = high - low + 1
        if span <= 1:
            return low
        width = ((span - 1).bit_length() + 7) // 8 + (span > 16 and span & (span - 1) != 0)
        return low + int.from_bytes(self._take(width), "big") % span

    @property
    def used(self) -> int:
        """How many bytes the case has read so far (sections count whole)."""
        return self._at

    def section(self, size: int) -> "Choices":
        """The next `size` bytes as choices of their own, however many of them get read."""
        return Choices(self._take(size))

    def _take(self, width: int) -> bytes:
        end = self._at + width
        while end > len(self._data):
            self._data += hashlib.blake2b(self._data, digest_size=64).digest()
        chunk = self._data[self._at:end]
        self._at = end
        return chunk


def one_in(choices: Choices, n: int) -> bool:
    """True about one time in `n`; shrinks to False."""
    return choices.integer(0, n - 1) == n - 1


def pick(choices: Choices, options: tuple | list):
    """One of `options`, each about equally likely; shrinks toward the first."""
    return options[choices.integer(0, len(options) - 1)]


def dim(choices: Choices, max_side: int) -> int:
    """A dimension: zero about one time in ten (an empty tensor), else 1..max_side."""
    side = max(max_side, 1)
    n = choices.integer(0, 10 * side - 1)
    return 0 if n >= 9 * side else 1 + n % side


def shape(choices: Choices, min_rank: int = 0, max_rank: int = 6) -> tuple[int, ...]:
    """A shape of rank min_rank..max_rank, zero-size dims included, at most 64 elements.

    Reads a section of SHAPE_BYTES: a lower rank keeps the first dims where they were.
    """
    choices = choices.section(SHAPE_BYTES)
    rank = choices.integer(min_rank, max_rank)
    return tuple(dim(choices, MAX_SIDE[rank]) for _ in range(rank))


def flags(choices: Choices, count: int) -> list[bool]:
    """`count` independent yes/no choices from one choice; shrinks to all False."""
    mask = choices.integer(0, 2**count - 1)
    return [bool(mask >> k & 1) for k in range(count)]


def permutation(choices: Choices, size: int) -> list[int]:
    """A permutation of range(size) from one choice (a Lehmer code); shrinks to the identity."""
    code = choices.integer(0, math.factorial(size) - 1)
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


STRING_ALPHABET = ("a", "b", "z", "A", "Z", "0", "9", " ", "_", "\u00e9", "\u00fc", "\u00df", "\u4e2d", "\U0001f600", "\t", "\x00")
MANTISSA_BITS = {64: 52, 32: 23}  # narrower floats: 10 bits, rounded to what the type keeps


def ordinary_value(choices: Choices, dt: DType):
    """A value spread over the whole range of `dt` (floats as doubles, rounded by `scalar`).

    Shrinks toward 0 for integers and booleans, 1.0 for floats, "" for strings.
    """
    if dt.kind == "bool":
        return bool(choices.integer(0, 1))
    if dt.kind == "string":
        return "".join(pick(choices, STRING_ALPHABET) for _ in range(choices.integer(0, 6)))
    if dt.kind == "complex":
        return complex(_spread_float(choices, _exponents(-20, 20), True, 52, 2.0**21),
                       _spread_float(choices, _exponents(-20, 20), True, 52, 2.0**21))
    if dt.kind in ("int", "uint"):
        k = choices.integer(0, dt.max - dt.lowest)
        # Zigzag for signed types (0, -1, 1, -2, ...): the simplest values come first.
        return dt.lowest + k if dt.lowest >= 0 else (k // 2 if k % 2 == 0 else -(k + 1) // 2)
    top = float(dt.max)
    low = float(dt.lowest)
    exponents = _exponents(_binade(float(dt.smallest_normal) if low < 0 else low), _binade(top))
    return _spread_float(choices, exponents, low < 0, MANTISSA_BITS.get(dt.bits, 10), top)


def _binade(magnitude: float) -> int:
    """floor(log2(magnitude)), exactly (math.log2 rounds the largest double up to 1024)."""
    return math.frexp(magnitude)[1] - 1


@cache
def _exponents(low: int, high: int) -> tuple[int, ...]:
    """Binary exponents low..high, simplest (nearest 0, positive first) first."""
    return tuple(sorted(range(low, high + 1), key=lambda e: (abs(e), e < 0)))


def _spread_float(choices: Choices, exponents: tuple[int, ...], signed: bool, mantissa_bits: int, top: float) -> float:
    """(1 + a drawn fraction) * 2**(a drawn exponent), of a drawn sign, at most `top` in size: every
    binade equally likely, so tiny and huge magnitudes come up as often as those near 1."""
    negative = signed and choices.integer(0, 1) == 1
    fraction = choices.integer(0, 2**mantissa_bits - 1) / 2**mantissa_bits
    magnitude = min(math.ldexp(1.0 + fraction, pick(choices, exponents)), top)
    return -magnitude if negative else magnitude


def scalar(choices: Choices, dt: DType):
    """Half boundaries, half ordinary values, as a Python value `dt` holds exactly.

    The first choice's parity says which; an even one also says which boundary value.
    """
    n = choices.integer(0, 2**16 - 1)
    if n % 2 == 0:
        boundaries = boundary_values(dt)
        return boundaries[(n // 2) % len(boundaries)]
    value = ordinary_value(choices, dt)
    if dt.kind == "float":
        return float(np.array(value).astype(dt.np_dtype).astype(np.float64))
    return value


# Up to this many elements each one is drawn (and shrunk) on its own; a larger array is a fill
# recipe, a seed and a few planted values.
ELEMENTWISE_LIMIT = 4
PLANTED = 3
FILLS = ("counting", "boundary sweep", "seeded bulk")


def array(choices: Choices, dt: DType, dims: tuple[int, ...]) -> np.ndarray:
    """An array of `dt` and shape `dims`.

    Small arrays: each element a `scalar`. Larger ones: a fill, then up to PLANTED drawn scalars
    at drawn positions. The fills: counting 0, 1, 2... (distinct values, so a wrong index shows;
    the simplest, where shrinking ends), a sweep through the dtype's boundary values from a drawn
    offset, or a bulk fill from a numpy Generator seeded by a drawn integer (half boundary values,
    half anything the dtype holds). Hypothesis keeps everything it can shrink; the bulk costs
    numpy time, not hypothesis choices. Reads a section of ARRAY_BYTES.
    """
    choices = choices.section(ARRAY_BYTES)
    count = math.prod(dims)
    if count <= ELEMENTWISE_LIMIT:
        return pack([scalar(choices, dt) for _ in range(count)], dt).reshape(dims)
    recipe = choices.integer(0, len(FILLS) * (PLANTED + 1) - 1)
    fill, planted = FILLS[recipe % len(FILLS)], recipe // len(FILLS)
    flat = _filled(dt, count, fill, choices.integer(0, WIDE - 1) if fill != "counting" else 0)
    for _ in range(planted):
        flat[choices.integer(0, count - 1)] = pack([scalar(choices, dt)], dt)[0]
    return flat.reshape(dims)


def _filled(dt: DType, count: int, fill: str, seed: int) -> np.ndarray:
    if fill == "counting":
        return counting(dt, count)
    if fill == "boundary sweep":
        boundaries = packed_boundaries(dt)
        return boundaries[(seed + np.arange(count)) % len(boundaries)]
    return bulk_fill(dt, count, seed)


@cache
def packed_boundaries(dt: DType) -> np.ndarray:
    """`boundary_values` as an array of `dt` (read-only: it is shared)."""
    packed = pack(list(boundary_values(dt)), dt)
    packed.flags.writeable = False
    return packed


def counting(dt: DType, count: int) -> np.ndarray:
    """0, 1, 2, ... in `dt` (wrapping where the dtype is narrow; "0", "1"... for strings)."""
    if dt.kind == "string":
        return pack([str(i) for i in range(count)], dt)
    if dt.kind == "bool":
        return (np.arange(count) % 2).astype(bool)
    if dt.kind in ("int", "uint"):
        first, span = max(dt.lowest, 0), dt.max - max(dt.lowest, 0) + 1
        if dt.is_numpy_native and span > count:
            return (first + np.arange(count)).astype(dt.np_dtype)
        return pack([first + i % span for i in range(count)], dt)
    values = np.arange(count, dtype=np.float64)
    return values.astype(dt.np_dtype) if dt.is_numpy_native else pack(values.tolist(), dt)


def bulk_fill(dt: DType, count: int, seed: int) -> np.ndarray:
    """`count` values of `dt` from a seeded numpy Generator: half boundaries, half any value."""
    rng = np.random.default_rng(seed)
    boundaries = packed_boundaries(dt)
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
    values = bits.view(dt.np_dtype)[:count].copy()
    if dt.bits < 8 * width:
        # A 4-bit float in a byte: ml_dtypes reads the unused high bits as it likes (0xb1 as -0.5)
        # while onnx packs only the low four, so the byte is made the value's own (0x09).
        with np.errstate(all="ignore"):
            values = values.astype(np.float32).astype(dt.np_dtype)
    return values


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


INDEX_VALUE_BYTES = 2


def _from_ranges(choices: Choices, ranges: tuple[tuple[int, int], ...]) -> int:
    """One choice: a range (about equally likely), then a value in it; shrinks to the first range's low."""
    n = choices.integer(0, 2 ** (8 * INDEX_VALUE_BYTES) - 1)
    low, high = ranges[n % len(ranges)]
    return low + (n // len(ranges)) % (high - low + 1)


def index_value(choices: Choices, dim_size: int, index_dtype: DType) -> int:
    """A start or end for an axis of `dim_size`, from one choice: in range, negative, beyond +-dim,
    or INT_MAX/INT_MIN of the index dtype."""
    return _from_ranges(choices, _ranges((0, dim_size), (-dim_size, -1), (dim_size + 1, dim_size + 10),
                                      (-dim_size - 10, -dim_size - 1), (index_dtype.max, index_dtype.max),
                                      (index_dtype.lowest, index_dtype.lowest)))


def step_value(choices: Choices, dim_size: int, index_dtype: DType) -> int:
    """A step from one choice: both signs, |step| beyond dim, the extremes of the index type; never 0."""
    return _from_ranges(choices, _ranges((1, 2), (-2, -1), (1, dim_size + 3), (-dim_size - 3, -1),
                                      (index_dtype.max, index_dtype.max), (index_dtype.lowest, index_dtype.lowest)))


def invalid_share(choices: Choices) -> bool:
    """True about one time in twenty: the share of deliberately invalid cases."""
    return one_in(choices, 20)
