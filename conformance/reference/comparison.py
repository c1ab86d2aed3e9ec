"""Comparisons: Equal, Greater, Less, GreaterOrEqual, LessOrEqual, IsNaN, IsInf (declarations of
the element-wise family).

A comparison of two floats is exact in float64 (widening loses nothing), so every dtype is
judged bit for bit: IEEE 754's comparisons, where NaN is unordered (every comparison with it is
false) and -0.0 equals 0.0. Integers compare as Python ints, exactly at any width. Equal-19 adds
strings, which compare in their own dtype (`raw`), as do all of Equal's dtypes: `==` in the
inputs' own dtype is exact too.
"""

from __future__ import annotations

import numpy as np

from ..case import Example
from . import broadcast as bc
from .elementwise import Attribute, Elementwise

LEGACY_AXIS_TRAIT = "legacy-axis-moves-b"


def legacy_axis_moves_b(example: Example) -> bool:
    """Version 1's `axis` places B elsewhere than at A's trailing dims (where Numpy-style
    broadcasting would put it): the cause of onnx.reference's version-1 deviations."""
    attributes = example.attributes
    if example.version.attribute("broadcast") is None or not attributes.get("broadcast") or attributes.get("axis") is None:
        return False
    a, b = (example.inputs.get(name) for name in ("A", "B"))
    if a is None or b is None:
        return False
    placed = bc.legacy_b_shape(a.shape, b.shape, attributes["axis"])
    return placed is not None and placed != bc.legacy_b_shape(a.shape, b.shape, None)


def _equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a == b in the inputs' own dtype: IEEE equality for floats (bfloat16's too), exact for
    integers, and for Equal-19's strings equality of the text."""
    return np.asarray(a == b, dtype=bool)


def _elementwise_bool(values) -> np.ndarray:
    return np.asarray(values, dtype=bool)


EQUAL = Elementwise(op="Equal", raw=_equal, traits={LEGACY_AXIS_TRAIT: legacy_axis_moves_b})

GREATER = Elementwise(
    op="Greater",
    traits={LEGACY_AXIS_TRAIT: legacy_axis_moves_b},
    real=lambda a, b: a > b,
    integer=lambda a, b: _elementwise_bool(a > b),
)

LESS = Elementwise(
    op="Less",
    traits={LEGACY_AXIS_TRAIT: legacy_axis_moves_b},
    real=lambda a, b: a < b,
    integer=lambda a, b: _elementwise_bool(a < b),
)

GREATER_OR_EQUAL = Elementwise(
    op="GreaterOrEqual",
    real=lambda a, b: a >= b,
    integer=lambda a, b: _elementwise_bool(a >= b),
)

LESS_OR_EQUAL = Elementwise(
    op="LessOrEqual",
    real=lambda a, b: a <= b,
    integer=lambda a, b: _elementwise_bool(a <= b),
)

IS_NAN = Elementwise(op="IsNaN", real=np.isnan)

_DETECT = "(Optional) Whether map {sign} infinity to true. ... Set this attribute to 0 if {sign} infinity should be mapped to false."


def _is_inf(x: np.ndarray, detect_negative: int = 1, detect_positive: int = 1) -> np.ndarray:
    """The text's two switches: a nonzero value detects that infinity (default 1), 0 does not."""
    return (np.isposinf(x) & bool(detect_positive)) | (np.isneginf(x) & bool(detect_negative))


IS_INF = Elementwise(
    op="IsInf",
    real=_is_inf,
    attributes=(
        Attribute("detect_negative", (0, 1), sentence=_DETECT.format(sign="negative")),
        Attribute("detect_positive", (0, 1), sentence=_DETECT.format(sign="positive")),
    ),
)

DECLARED = (EQUAL, GREATER, LESS, GREATER_OR_EQUAL, LESS_OR_EQUAL, IS_NAN, IS_INF)
