"""Random cases of the normalizations (reference/normalization.py): LayerNormalization,
RMSNormalization, MeanVarianceNormalization and GroupNormalization.

Shapes of rank 1 to 4 (MeanVarianceNormalization's default axes [0, 2, 3] need rank 4), `axis` at
its boundaries and negative half the time, `axes` subsets; Scale and B of the normalized shape, a
suffix of it, one element, or X's own shape (each "unidirectional broadcastable to tensor X"), B
left out now and then; Mean and InvStdDev asked for or left out; epsilon at its default, 0, tiny,
large; stash_type from LayerNormalization's U binding, any float type for RMSNormalization. Values
that separate bugs from legal reordering:

- exactly summable rows (small integers, quarters): the mean and the variance are exact in any
  order, so a wrong axis, a variance divided by n − 1 or a dropped bias lies far past the bound;
- constant rows (variance 0: Normalized is 0, Y is B);
- rows of large mean and small spread (1e4 + noise): E[X²] − E[X]² cancels there (onnxruntime
  issue #21935), which the two-pass prose does not;
- random rows at a drawn scale, the shared boundary draws (NaN, ±inf, max, subnormals);
- long rows (4096) now and then, where a 16-bit accumulator and a float32 one part;
- and a small share of what the text forbids (an axis out of range, a Scale that does not
  broadcast, a stash_type U does not allow).
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType, dtype
from ..reference.normalization import from_rows
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick
from .movement import axis_value, made, outside_axis

LONG_ROW = 4096
RECIPES = ("summable", "summable", "random", "constant", "large-mean", "boundary")
EPSILONS = (None, None, 1e-5, 0.0, 1e-3, 1.0, 1e-12)


def _shape(choices: Choices, min_rank: int) -> tuple[int, ...]:
    """A shape of rank min_rank..4, sides 1..5 (a leading 0 now and then: an empty X)."""
    rank = choices.integer(min_rank, 4)
    dims = [choices.integer(1, 5) for _ in range(rank)]
    if dims and one_in(choices, 30):
        dims[0] = 0
    return tuple(dims)


def _rows(choices: Choices, dt: DType, count: int, n: int) -> np.ndarray:
    """`count` values (rows of n) by a drawn recipe."""
    recipe = pick(choices, RECIPES)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    if recipe == "boundary" or not count:
        return array(choices, dt, (count,))
    if recipe == "summable":
        drawn = rng.integers(-8, 9, size=count) * pick(choices, (1.0, 0.25, 0.5))
    elif recipe == "constant":
        drawn = np.repeat(rng.integers(-8, 9, size=max(count // max(n, 1), 1)) * 0.5, max(n, 1))[:count]
        if one_in(choices, 2):
            drawn = drawn * 0.1  # a value not exact in binary: its mean may round
    elif recipe == "large-mean":
        centre = 100.0 if dt.name in ("float16", "bfloat16") else pick(choices, (1e4, 1e5, -3e3))
        drawn = centre + rng.standard_normal(count) * pick(choices, (1.0, 1e-2, 0.1))
    else:
        drawn = rng.standard_normal(count) * pick(choices, (1.0, 1e3, 1e-3, 3.0)) + pick(choices, (0.0, 0.0, 5.0))
    return pack(drawn.tolist(), dt)


def _data(choices: Choices, dt: DType, dims: tuple[int, ...], n: int) -> np.ndarray:
    return _rows(choices, dt, math.prod(dims), n).reshape(dims)


def _affine(choices: Choices, dt: DType, x_shape: tuple[int, ...], axis: int, exact: bool) -> np.ndarray:
    """A Scale or B: of the normalized shape (mostly), a suffix of it, one element, the normalized
    shape with leading 1s, or X's own shape; small dyadic values where `exact`, else random."""
    normalized = x_shape[axis:]
    form = pick(choices, ("normalized", "normalized", "suffix", "one", "leading-ones", "full"))
    if form == "suffix" and normalized:
        shape = normalized[choices.integer(0, len(normalized) - 1):]
    elif form == "one":
        shape = (1,) * choices.integer(0, max(len(normalized), 1))
    elif form == "leading-ones":
        shape = (1,) * choices.integer(1, max(axis, 1)) + tuple(normalized)
    elif form == "full":
        shape = x_shape
    else:
        shape = tuple(normalized)
    count = math.prod(shape)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    values = rng.integers(-4, 5, size=count) * 0.5 if exact else rng.standard_normal(count)
    return pack(values.tolist(), dt).reshape(shape)


def _not_broadcastable(x_shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that does not broadcast to X: its last side plus one (or a rank above X's)."""
    if not x_shape:
        return (2,)
    return tuple(x_shape[:-1]) + (x_shape[-1] + 1,)


def _epsilon(choices: Choices, attributes: dict) -> None:
    chosen = pick(choices, EPSILONS)
    if chosen is not None:
        attributes["epsilon"] = chosen


def _long(choices: Choices, dt: DType) -> bool:
    return one_in(choices, 12) and dt.kind == "float"


def layer_normalization(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    dims = (2, LONG_ROW) if _long(choices, dt) else _shape(choices, 1)
    axis = axis_value(choices, len(dims), negative=True)
    first = axis + len(dims) if axis < 0 else axis
    n = math.prod(dims[first:])
    data = _data(choices, dt, dims, n)
    exact = not one_in(choices, 3)
    inputs = {"X": data, "Scale": _affine(choices, dt, dims, first, exact)}
    if not one_in(choices, 4):
        inputs["B"] = _affine(choices, dt, dims, first, exact)
    attributes: dict = {}
    if not one_in(choices, 3):
        attributes["axis"] = axis
    elif axis not in (-1, len(dims) - 1):
        attributes["axis"] = axis
    _epsilon(choices, attributes)
    if binding.get("U") == "bfloat16":
        attributes["stash_type"] = 16
    elif one_in(choices, 4):
        attributes["stash_type"] = 1
    outputs = pick(choices, ((), (True, False, False), (True, True, False), (True, False, True)))
    if invalid_share(choices):
        wrong = pick(choices, ("axis", "scale", "stash"))
        if wrong == "axis":
            attributes["axis"] = outside_axis(choices, len(dims), negative=True)
        elif wrong == "scale":
            inputs["Scale"] = pack([1.0] * math.prod(_not_broadcastable(dims)), dt).reshape(_not_broadcastable(dims))
        else:
            attributes["stash_type"] = 11
    return made(version, binding, inputs, attributes, outputs=outputs)


def rms_normalization(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt, scale_dt = dtype(binding["T"]), dtype(binding["V"])
    dims = (2, LONG_ROW) if _long(choices, dt) else _shape(choices, 1)
    axis = axis_value(choices, len(dims), negative=True)
    first = axis + len(dims) if axis < 0 else axis
    n = math.prod(dims[first:])
    data = _data(choices, dt, dims, n)
    inputs = {"X": data, "scale": _affine(choices, scale_dt, dims, first, not one_in(choices, 3))}
    attributes: dict = {"axis": axis} if not one_in(choices, 3) or axis not in (-1, len(dims) - 1) else {}
    _epsilon(choices, attributes)
    if one_in(choices, 3):
        attributes["stash_type"] = pick(choices, (1, 10, 11, 16))
    if invalid_share(choices):
        if one_in(choices, 2):
            attributes["axis"] = outside_axis(choices, len(dims), negative=True)
        else:
            inputs["scale"] = pack([1.0] * math.prod(_not_broadcastable(dims)), scale_dt).reshape(_not_broadcastable(dims))
    return made(version, binding, inputs, attributes)


def mean_variance_normalization(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    negative = version.since_version >= 13
    attributes: dict = {}
    if one_in(choices, 3):
        dims = tuple(choices.integer(1, 4) for _ in range(4))
    else:
        dims = (2, LONG_ROW) if _long(choices, dt) else _shape(choices, 1)
        rank = len(dims)
        chosen = [k for k in range(rank) if choices.integer(0, 1)] or [pick(choices, (0, rank - 1))]
        attributes["axes"] = [k - rank if negative and choices.integer(0, 1) else k for k in chosen]
    reduced = sorted({k % len(dims) for k in attributes.get("axes", [0, 2, 3])})
    n = math.prod(dims[k] for k in reduced)
    # Drawn as rows along the reduced axes, so that a constant or large-mean row is one the op reduces.
    rows = _rows(choices, dt, math.prod(dims), n).reshape(-1, n) if n else np.zeros((0,), dtype=dt.np_dtype)
    data = from_rows(rows, dims, reduced) if n else rows.reshape(dims)
    if invalid_share(choices):
        attributes["axes"] = [outside_axis(choices, len(dims), negative=negative)]
    return made(version, binding, {"X": data}, attributes)


def group_normalization(choices: Choices, version: OpVersion, binding: dict[str, str]):
    """X of shape (N, C, D1...) of rank 2 to 4, C a multiple of num_groups; scale and bias per channel."""
    dt = dtype(binding["T"])
    groups = choices.integer(1, 3)
    rank = choices.integer(2, 4)
    dims = (choices.integer(1, 3), groups * choices.integer(1, 3)) + tuple(choices.integer(1, 4) for _ in range(rank - 2))
    if _long(choices, dt):
        dims = (1, 2, 2048)
        groups = pick(choices, (1, 2))
    n = dims[1] // groups * math.prod(dims[2:])
    inputs = {"X": _data(choices, dt, dims, n)}
    exact = not one_in(choices, 3)
    for name in ("scale", "bias"):
        rng = np.random.default_rng(choices.integer(0, WIDE - 1))
        drawn = rng.integers(-4, 5, size=dims[1]) * 0.5 if exact else rng.standard_normal(dims[1])
        inputs[name] = pack(drawn.tolist(), dt)
    attributes: dict = {"num_groups": groups}
    _epsilon(choices, attributes)
    if one_in(choices, 3):
        attributes["stash_type"] = pick(choices, (1, 10, 11, 16))
    if invalid_share(choices):
        wrong = pick(choices, ("groups", "scale", "stash"))
        if wrong == "groups":
            attributes["num_groups"] = dims[1] + 1
        elif wrong == "scale":
            inputs["scale"] = pack([1.0] * (dims[1] + 1), dt)
        else:
            attributes["stash_type"] = 7
    return made(version, binding, inputs, attributes)


STRATEGIES = {"GroupNormalization": group_normalization, "LayerNormalization": layer_normalization, "RMSNormalization": rms_normalization,
              "MeanVarianceNormalization": mean_variance_normalization}
