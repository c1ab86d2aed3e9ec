"""Bitwise ops on integers: BitShift, BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot
(declarations of the element-wise family).

And, Or and Xor of two integers of one type never leave that type, so they are computed on Python
ints (two's complement at infinite width, which agrees with every width). Not and BitShift depend
on the width, so they are computed from the inputs' own dtype (`raw`).

BitShift-11 (unsigned types only) describes bits moving left or right; bits moved out of the type
are gone, so a left shift keeps the low bits. It does not say what a shift by the type's width or
more gives: bits moved out give 0 (the reading BitShift-28 writes down), or the amount is taken
modulo the width (C and C++ leave such a shift undefined; x86 masks the amount), both named.
BitShift-28 adds signed types and settles every case: arithmetic right shift, left shift
discarding the bits past the sign bit, and sign fill for a negative amount or one of the width
or more.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..case import Example
from ..dtypes import DType
from .base import Invalid
from .elementwise import ATTRIBUTE_OUT_OF_RANGE, Attribute, Context, Elementwise

if TYPE_CHECKING:  # the strategies import the references: a runtime import would be circular
    from ..strategies.common import Choices

RIGHT, LEFT = "RIGHT", "LEFT"
# BitShift-11's example: 'if "direction" is "Right", X is [1, 4], and S is [1, 1], ... Z would be [0, 2]'.
EXAMPLE_SPELLING = "Right"
DIRECTION_SENTENCE = 'direction: It can be either "RIGHT" (for right shift) or "LEFT" (for left shift).'
WIDE_SHIFT_AMBIGUITY = "BitShift-11 does not say what a shift by the type's bit width or more gives"
BITS_MOVED_OUT = "bits moved out give 0"
AMOUNT_MODULO_WIDTH = "the shift amount is taken modulo the bit width (x86; undefined in C and C++)"


def _shifted(x: int, amount: int, right: bool, bits: int, signed: bool) -> int:
    """One element as BitShift-28 defines it (and BitShift-11, for unsigned amounts below the width)."""
    if amount < 0 or amount >= bits:
        return -1 if right and x < 0 else 0  # "whatever the sign bit extension alone produces"
    if right:
        return x >> amount  # Python's >> is arithmetic: the sign bit fills the vacated high bits
    kept = (x << amount) & ((1 << bits) - 1)  # bits moved past the top (or the sign bit) are discarded
    return kept - (1 << bits) if signed and kept >> (bits - 1) else kept


def _bit_shift(x: np.ndarray, y: np.ndarray, direction: str, modulo: bool = False) -> np.ndarray:
    bits, signed = x.dtype.itemsize * 8, x.dtype.kind == "i"
    right = direction.upper() == RIGHT
    flat = [
        _shifted(int(a), int(s) % bits if modulo else int(s), right, bits, signed)
        for a, s in zip(x.reshape(-1), y.reshape(-1))
    ]
    return np.array(flat, dtype=x.dtype).reshape(x.shape)


def _wide_shift_readings(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    x, y = context.arrays
    if context.since >= 28 or not y.size or int(y.max()) < x.dtype.itemsize * 8:
        return []
    return [(AMOUNT_MODULO_WIDTH, _bit_shift(x, y, context.attributes["direction"], modulo=True))]


def _example_spelling_invalid(context: Context) -> Invalid | None:
    """"Right" is valid only where the text itself writes it (BitShift-11's example)."""
    if context.attributes.get("direction") == EXAMPLE_SPELLING and context.since >= 28:
        return Invalid(ATTRIBUTE_OUT_OF_RANGE, f"{context.example.version.label}: {DIRECTION_SENTENCE}")
    return None


def _example_spelling_may_reject(context: Context) -> str | None:
    if context.attributes.get("direction") == EXAMPLE_SPELLING:
        return ('BitShift-11 spells the direction "Right" in its example but "RIGHT" in the attribute\'s '
                'description: a runtime may take it as a right shift or reject it')
    return None


def _draw_shift_amounts(choices: Choices, dt: DType, dims: tuple[int, ...], position: int) -> np.ndarray | None:
    """Y: amounts around the type's width (negative ones for a signed type) three times in four;
    the family's boundary values otherwise."""
    from ..strategies.common import one_in

    if position != 1 or dt.kind not in ("int", "uint") or one_in(choices, 4):
        return None
    rng = np.random.default_rng(choices.integer(0, 2**32 - 1))
    low = -2 if dt.kind == "int" else 0
    return rng.integers(low, dt.bits + 3, size=math.prod(dims)).astype(dt.np_dtype).reshape(dims)


def _any_wide_shift(example: Example) -> bool:
    """Some amount is negative or at least the type's width (the text's sign-fill sentence)."""
    y = example.inputs.get("Y")
    if y is None or not y.size:
        return False
    bits = y.dtype.itemsize * 8
    return bool((y.astype(object) < 0).any() or (y.astype(object) >= bits).any())


def _shifts(example: Example, direction: str) -> list[tuple[int, int, object]] | None:
    """(x, amount, dtype) per element of a shift in `direction` by amounts within the type's width;
    None for a case in the other direction or whose operands do not broadcast."""
    from ..dtypes import from_numpy

    x, y = example.inputs.get("X"), example.inputs.get("Y")
    if x is None or y is None or example.attributes.get("direction") != direction:
        return None
    try:
        xs, ys = np.broadcast_arrays(x.astype(object), y.astype(object))
    except ValueError:
        return None
    dt = from_numpy(x.dtype)
    return [(int(a), int(b), dt) for a, b in zip(xs.reshape(-1), ys.reshape(-1)) if 0 <= b < dt.bits]


def _left_shift_beyond_type(example: Example) -> bool:
    """A left shift whose exact product x * 2**y is beyond the type's range: the text drops the
    bits moved out; a runtime multiplying in a wider type and saturating gives the type's bound."""
    found = _shifts(example, LEFT)
    return bool(found) and any(not dt.lowest <= x * 2**y <= dt.max for x, y, dt in found)


def _right_shift_rounds(example: Example) -> bool:
    """A right shift whose dropped bits are half of 2**y or more: the text's shift floors x / 2**y
    (255 >> 7 is 1), a runtime dividing and rounding to nearest gives one more (2)."""
    found = _shifts(example, RIGHT)
    return bool(found) and any(y > 0 and 2 * (x % 2**y) >= 2**y for x, y, _ in found)


BIT_SHIFT = Elementwise(
    op="BitShift",
    raw=_bit_shift,
    attributes=(Attribute("direction", (RIGHT, LEFT), valid=lambda d: d in (RIGHT, LEFT, EXAMPLE_SPELLING),
                          sentence=DIRECTION_SENTENCE, invalid_draws=("UP", "right", "")),),
    alternatives=_wide_shift_readings,
    ambiguity=WIDE_SHIFT_AMBIGUITY,
    label=BITS_MOVED_OUT,
    invalid=_example_spelling_invalid,
    may_reject=_example_spelling_may_reject,
    draw=_draw_shift_amounts,
    traits={"shift-by-width-or-more": _any_wide_shift, "left-shift-beyond-type": _left_shift_beyond_type,
            "right-shift-rounds": _right_shift_rounds},
)


BITWISE_AND = Elementwise(op="BitwiseAnd", integer=lambda a, b: a & b)
BITWISE_OR = Elementwise(op="BitwiseOr", integer=lambda a, b: a | b)
BITWISE_XOR = Elementwise(op="BitwiseXor", integer=lambda a, b: a ^ b)
BITWISE_NOT = Elementwise(op="BitwiseNot", raw=np.invert)  # ~x at the type's width (Python's ~ is not, for unsigned)

DECLARED = (BIT_SHIFT, BITWISE_AND, BITWISE_OR, BITWISE_XOR, BITWISE_NOT)
