"""Reference for NonZero (versions 9, 13): the indices of X's non-zero elements, int64 of shape
[rank, count], "in row-major order - by dimension".

An element is zero where it equals zero: -0.0 is zero and NaN is not (NaN != 0), a complex number
is zero where both parts are, False is zero. A string has no zero; the text points to numpy, whose
nonzero takes the empty string as zero, the one reading. "For scalar input, NonZero produces output
shape (0, N) instead of (1, N)": N is the count numpy gives a scalar (1 where it is non-zero, else
0), and the output holds no values. NonZero-13 only widens T (bfloat16).
"""

from __future__ import annotations

import numpy as np

from ..case import Example
from .base import Expected, OpReference, VersionSemantics, single

STRING_ZERO = "numpy.nonzero (which the text points to): the empty string is zero"


def non_zero_mask(data: np.ndarray) -> np.ndarray:
    """Per element, whether it is non-zero."""
    if data.dtype.kind == "O":
        return np.array([len(s) > 0 for s in data.reshape(-1)], dtype=bool).reshape(data.shape)
    if data.dtype.kind in "biuc":
        return data != 0
    with np.errstate(invalid="ignore"):
        return data.astype(np.float64) != 0  # NaN != 0; -0.0 == 0


class NonZero9(VersionSemantics):
    """NonZero: the indices of the non-zero elements, one row per dimension, row-major; a scalar
    gives shape (0, N)."""

    since = 9

    def expected(self, example: Example) -> Expected:
        data = example.inputs["X"]
        mask = non_zero_mask(data)
        label = STRING_ZERO if data.dtype.kind == "O" else "spec"
        if data.ndim == 0:
            return single(np.zeros((0, int(mask)), dtype=np.int64), label)
        return single(np.array(np.nonzero(mask), dtype=np.int64).reshape(data.ndim, -1), label)


def _data(example: Example) -> np.ndarray | None:
    data = example.inputs.get("X")
    return data if isinstance(data, np.ndarray) else None


def _floats(data: np.ndarray) -> np.ndarray | None:
    """X's float values (both parts of a complex one) as float64; None for other types."""
    if data.dtype.kind in "OUSbiu" or not data.size:
        return None
    if data.dtype.kind == "c":
        return np.concatenate([data.real.reshape(-1), data.imag.reshape(-1)]).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return data.astype(np.float64).reshape(-1)


def negative_zero(example: Example) -> bool:
    """A -0.0 in X (a part of a complex one too): zero, though its bits are not all 0."""
    data = _data(example)
    wide = None if data is None else _floats(data)
    return wide is not None and bool(((wide == 0) & np.signbit(wide)).any())


def nan_in_data(example: Example) -> bool:
    """A NaN in X: non-zero (NaN != 0), which a kernel testing `x > 0 || x < 0` misses."""
    data = _data(example)
    wide = None if data is None else _floats(data)
    return wide is not None and bool(np.isnan(wide).any())


def empty_data(example: Example) -> bool:
    """X with no elements (a dim of 0): an output of shape [rank, 0]."""
    data = _data(example)
    return data is not None and data.ndim > 0 and data.size == 0


def all_zero(example: Example) -> bool:
    """X with elements, none non-zero: an output of shape [rank, 0]."""
    data = _data(example)
    return data is not None and data.size > 0 and not non_zero_mask(data).any()


REFERENCE = OpReference(
    op="NonZero",
    dtype_param="T",
    semantics=(NonZero9,),
    data_inputs=("X",),
    traits={"negative-zero": negative_zero, "nan-in-data": nan_in_data, "empty-data": empty_data, "all-zero": all_zero},
)
