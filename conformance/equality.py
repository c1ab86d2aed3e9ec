"""Equality of arrays under conform's rules: a leaf that references and comparison both use.

Bitwise, except that any NaN matches any NaN and +0.0 matches -0.0 unless `strict_zero`; a
string tensor's objects compare as strings.
"""

from __future__ import annotations

import numpy as np

from .dtypes import from_numpy


def same_bits(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Elementwise: are the stored bytes identical (any width, complex128 included); for a string
    tensor's objects, are the strings equal. Same dtype and shape assumed."""
    if expected.dtype.kind == "O":
        return np.array([e == a for e, a in zip(expected.reshape(-1), actual.reshape(-1))], dtype=bool).reshape(expected.shape)
    size = expected.dtype.itemsize
    as_bytes = lambda a: np.ascontiguousarray(a).view(np.uint8).reshape(*a.shape, size)
    return (as_bytes(expected) == as_bytes(actual)).all(axis=-1)


def equal_mask(expected: np.ndarray, actual: np.ndarray, strict_zero: bool = False) -> np.ndarray:
    """Elementwise agreement under conform's rules (same dtype and shape assumed)."""
    same = same_bits(expected, actual)
    if expected.dtype.kind == "O":
        return same
    if from_numpy(expected.dtype).kind in ("float", "complex"):
        wide_e, wide_a = _wide(expected), _wide(actual)
        both_nan = _isnan(wide_e) & _isnan(wide_a)
        same |= both_nan
        if not strict_zero:
            same |= (wide_e == 0) & (wide_a == 0)
    return same


def _wide(array: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # widening a signalling NaN quiets it: still a NaN
        return array if array.dtype.kind == "c" else array.astype(np.float64)


def _isnan(array: np.ndarray) -> np.ndarray:
    return np.isnan(array) if array.dtype.kind != "c" else np.isnan(array.real) | np.isnan(array.imag)


def arrays_identical(expected: np.ndarray, actual: np.ndarray, strict_zero: bool = True) -> bool:
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        return False
    return bool(equal_mask(expected, actual, strict_zero).all())


