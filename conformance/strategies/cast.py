"""Random Cast and CastLike cases: boundary values of both types, ties and just-beyond values of
the target, `saturate` and `round_mode` drawn where the version has them.

Values whose result the text leaves undefined are kept out of drawn cases (the case files state
them with their readings): a float beyond an integer target's range, NaN and inf into an integer,
a negative value or -0 into float8e8m0, NaN into a type without NaN, and strings that name no
number of the target (a fraction into an integer type).
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

from ..case import Example
from ..dtypes import DType, dtype
from ..reference import conversion as cv
from ..reference.cast import target_attribute
from ..registry import OpVersion
from .common import Choices, array, invalid_share, one_in, pick, scalar, shape

ROUND_MODES = (None, "up", "down", "nearest")
INVALID_ROUND_MODE = "sideways"
PLANT_SHARE = 2  # one case in PLANT_SHARE gets target boundary values planted


def target_boundaries(target: DType) -> list[float]:
    """Values that test the conversion into `target`: its largest finite value and what lies just
    beyond (the tie with the next binade, one ulp on), the smallest subnormal and half of it (a tie
    with 0), ties between neighbours near 1 and near the largest value."""
    if target.kind != "float":
        if target.kind in ("int", "uint"):
            top, low = target.max, target.lowest
            return [float(v) for v in (top, low, top + 0.5, low - 0.5, top + 0.75, 0.5, -0.5, 1.5, 2.5, -2.5)]
        return [0.0, -0.0, 0.5, 2.0]
    top = float(target.max)
    precision, _ = cv.precision_of(target) if target.name != "double" else (53, -1022)
    ulp_top = math.ldexp(1.0, math.frexp(top)[1] - precision)
    tiny = float(target.smallest_subnormal)
    ulp_one = math.ldexp(1.0, 1 - precision)
    found = [top, top + ulp_top / 2, top + ulp_top, top + ulp_top * 1.5, top - ulp_top / 2, tiny, tiny / 2, tiny * 1.5,
             1.0 + ulp_one / 2, 1.0 + ulp_one * 1.5, 1.0 + ulp_one / 4, float(target.smallest_normal) * (1 - 2**-precision)]
    return found + [-v for v in found]


def _in_source(values: list[float], source: DType) -> list:
    """Values as the source type holds them (rounded into it; dropped where it cannot)."""
    held = []
    for value in values:
        if source.kind in ("int", "uint"):
            if not math.isfinite(value):
                continue
            whole = math.trunc(value)
            if source.lowest <= whole <= source.max:
                held.append(whole)
            continue
        with np.errstate(all="ignore"):
            as_source = float(np.array(value).astype(source.np_dtype).astype(np.float64))
        if math.isfinite(as_source) or math.isinf(value):
            held.append(as_source)
    return held


def _plant(choices: Choices, x: np.ndarray, values: list, source: DType) -> np.ndarray:
    if not values or not x.size:
        return x
    flat = x.reshape(-1).copy()
    for _ in range(choices.integer(1, min(3, flat.size))):
        picked = pick(choices, values)
        flat[choices.integer(0, flat.size - 1)] = np.array(picked).astype(source.np_dtype)
    return flat.reshape(x.shape)


def _inside(bound: int, source: DType) -> float:
    """The source value nearest `bound` on zero's side of it (float32 holds no int32 max)."""
    held = cv.round_fraction(Fraction(bound), source, cv.TOWARD_ZERO)
    return max(min(held, float(source.max)), float(source.lowest))


def _defined(x: np.ndarray, source: DType, target: DType) -> np.ndarray:
    """`x` with the elements whose conversion is undefined replaced by ones that are defined:
    NaN by 0, and beyond the integer target by the nearest value inside it."""
    if source.kind in ("int", "uint") and target.name == cv.E8M0:
        return np.where(x.astype(np.int64) < 0, np.ones_like(x), x).astype(source.np_dtype)  # negative: unspecified
    if source.kind != "float":
        return x
    with np.errstate(all="ignore"):
        wide = x.astype(np.float64)
        if target.kind in ("int", "uint"):
            truncated = np.trunc(np.nan_to_num(wide))
            high, low = _inside(target.max, source), _inside(target.lowest, source)
            wide = np.where(np.isnan(wide), _inside(0, source), wide)  # float8e8m0 has no 0: 2**-127
            # The value itself within [lowest, max]: then every rounding a reading allows stays in range.
            above = wide > float(target.max)
            above |= truncated >= float(target.max + 1)  # a power of two: exact, where float(max) may round up
            wide = np.where(above, high, np.where(wide < float(target.lowest), low, wide))
            return wide.astype(source.np_dtype)
        if target.name == cv.E8M0:
            return np.abs(wide).astype(source.np_dtype)
        if target.kind == "float" and not target.has_nan:
            return np.where(np.isnan(wide), 0.0, wide).astype(source.np_dtype)
    return x


def _strings(choices: Choices, dims: tuple[int, ...], target: DType) -> np.ndarray:
    """Strings that name values of `target` exactly, in several spellings."""
    count = math.prod(dims)
    texts = [_one_string(choices, target) for _ in range(count)]
    out = np.empty(count, dtype=object)
    out[:] = texts
    return out.reshape(dims)


SPECIAL_SPELLINGS = ("INF", "+INF", "-INF", "NaN", "inf", "+Inf", "-inf", "nan", "NAN", "iNf")


def _one_string(choices: Choices, target: DType) -> str:
    if target.kind == "string":
        return str(scalar(choices, target))
    if target.kind == "bool":
        return pick(choices, ("0", "1", "-1", "2", "0.0", "1e3"))
    if target.kind in ("int", "uint"):
        return str(int(scalar(choices, target)))
    if target.has_nan and one_in(choices, 6):
        spelling = pick(choices, SPECIAL_SPELLINGS)
        return spelling.lstrip("-") if target.name == cv.E8M0 else spelling  # negative into E8M0: unspecified
    value = float(scalar(choices, target))
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("INF" if value > 0 else "-INF")
    if target.name == cv.E8M0:  # round_mode reads every digit: a power of two, written out exactly
        return str(Decimal(value))
    form = choices.integer(0, 3)
    if form == 0:
        return repr(value)
    if form == 1:
        return f"{value:.17g}"
    if form == 2:
        return f"{value:.17E}"
    return f"{value:.17e}".replace("e+0", "e").replace("e-0", "e-")


def _source_values(choices: Choices, source: DType, target: DType, dims: tuple[int, ...]) -> np.ndarray:
    if source.kind == "string":
        return _strings(choices, dims, target)
    x = array(choices, source, dims)
    if source.kind != "bool" and one_in(choices, PLANT_SHARE):
        x = _plant(choices, x, _in_source(target_boundaries(target), source), source)
    return _defined(x, source, target)


def _target_values(choices: Choices, target: DType) -> np.ndarray:
    return array(choices, target, shape(choices, 0, 2))


def _attributes(choices: Choices, version: OpVersion, target: DType) -> tuple[dict, bool]:
    """`saturate` and `round_mode`, absent or drawn; for a target they do not apply to, one case in
    eight has them (onnxruntime rejects them there, which would hide the rest)."""
    attributes: dict = {}
    invalid = False
    applies = target.name in cv.FLOAT8 or target.name == cv.E8M0
    if version.attribute("saturate") is not None and (applies or one_in(choices, 8)):
        picked = pick(choices, (None, 1, 0))
        if picked is not None:
            attributes["saturate"] = picked
    if version.attribute("round_mode") is not None and (target.name == cv.E8M0 or one_in(choices, 8)):
        mode = pick(choices, ROUND_MODES)
        if invalid_share(choices):
            mode, invalid = INVALID_ROUND_MODE, True
        if mode is not None:
            attributes["round_mode"] = mode
    return attributes, invalid


def example(choices: Choices, version: OpVersion, binding: dict[str, str]) -> Example:
    """One Cast case: `to` names T2."""
    source, target = dtype(binding["T1"]), dtype(binding["T2"])
    attributes, _ = _attributes(choices.section(8), version, target)
    attributes.update(target_attribute(version, binding))
    x = _source_values(choices, source, target, shape(choices))
    return Example(version, "hypothesis", dict(binding), {"input": x}, attributes, "hypothesis", "T1")


def like_example(choices: Choices, version: OpVersion, binding: dict[str, str]) -> Example:
    """One CastLike case: `target_type` holds values of T2, which are not read."""
    source, target = dtype(binding["T1"]), dtype(binding["T2"])
    attributes, _ = _attributes(choices.section(8), version, target)
    x = _source_values(choices, source, target, shape(choices))
    inputs = {"input": x, "target_type": _target_values(choices, target)}
    return Example(version, "hypothesis", dict(binding), inputs, attributes, "hypothesis", "T1")


STRATEGIES = {"Cast": example, "CastLike": like_example}
