"""Random cases of GridSample and AffineGrid (reference/grid_sample.py).

GridSample: small images (sides 1 to 4; spatial rank 2 in version 16, 1 to 3 from 20), every
mode, padding mode and align_corners, in the version's own mode names; grids drawn so that the
rules show:

- dyadic locations (multiples of 1/8, inside and outside [-1, 1]) over images of small integers:
  exact locations, weights and sums, judged bitwise, so a half-pixel shift or a wrong padding is
  told from rounding;
- locations at exact ties and at integers (where nearest's rounding and the floor of linear meet);
- random locations over random values, judged by the bound; boundary values (NaN, ±inf).

AffineGrid: theta of small dyadic entries (exact) or random ones, sizes of 1 to 4 per axis in 2-D
and 3-D, align_corners both ways. A small share of each is what the text forbids.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick
from .movement import int64s, made

PADDINGS = ("zeros", "border", "reflection")


def _image(choices: Choices, dt: DType, dims: tuple[int, ...]) -> np.ndarray:
    """Small integers (exact sums), normal values, or the shared boundary draws."""
    recipe = pick(choices, ("integers", "integers", "random", "boundary"))
    count = math.prod(dims)
    if recipe == "boundary" or dt.kind not in ("float", "int", "uint") or not count:
        return array(choices, dt, dims)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    if recipe == "integers" or dt.kind != "float":
        low = 0 if dt.kind == "uint" else -8
        return pack(rng.integers(low, 9, size=count).tolist(), dt).reshape(dims)
    return pack((rng.standard_normal(count) * pick(choices, (1.0, 100.0, 0.01))).tolist(), dt).reshape(dims)


def _grid(choices: Choices, dt: DType, dims: tuple[int, ...], spatial: tuple[int, ...], align_corners: int) -> np.ndarray:
    """Normalized locations: dyadic, at ties, random, or boundary values."""
    recipe = pick(choices, ("dyadic", "dyadic", "ties", "random", "boundary"))
    count = math.prod(dims)
    if recipe == "boundary" or not count:
        return array(choices, dt, dims)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    if recipe == "dyadic":
        drawn = rng.integers(-12, 13, size=count) / 8.0
    elif recipe == "random":
        drawn = rng.uniform(-1.3, 1.3, size=count)
    else:
        # Locations at half-integers and integers of each axis: g from x = k/2.
        lengths = np.array(spatial[::-1], dtype=np.float64)  # the innermost axis first
        length = np.resize(lengths, count)
        half = rng.integers(-3, 2 * int(lengths.max()) + 2, size=count) / 2.0
        drawn = (2 * half / np.maximum(length - 1, 1) - 1) if align_corners else ((2 * half + 1) / length - 1)
    return pack(drawn.tolist(), dt).reshape(dims)


def grid_sample(choices: Choices, version: OpVersion, binding: dict[str, str]):
    x_type, grid_type = dtype(binding["T1"]), dtype(binding["T2"])
    rank = 2 if version.since_version < 20 else pick(choices, (2, 2, 1, 3))
    side = 4 if rank < 3 else 3
    spatial = tuple(choices.integer(1, side) for _ in range(rank))
    batch, channels = choices.integer(1, 2), choices.integer(1, 2)
    out = tuple(choices.integer(1, 3) for _ in range(rank))
    names = ("bilinear", "nearest", "bicubic") if version.since_version < 20 else ("linear", "nearest", "cubic")
    attributes = {}
    if not one_in(choices, 4):
        attributes["mode"] = pick(choices, names)
    if not one_in(choices, 4):
        attributes["padding_mode"] = pick(choices, PADDINGS)
    align_corners = choices.integer(0, 1)
    if align_corners or one_in(choices, 2):
        attributes["align_corners"] = align_corners
    x = _image(choices, x_type, (batch, channels) + spatial)
    grid = _grid(choices, grid_type, (batch,) + out + (rank,), spatial, align_corners)
    if invalid_share(choices):
        kind = pick(choices, ("mode", "padding", "grid-shape", "rank"))
        if kind == "mode":
            attributes["mode"] = pick(choices, ("area", "bilinear" if version.since_version >= 20 else "linear"))
        elif kind == "padding":
            attributes["padding_mode"] = pick(choices, ("constant", "edge"))
        elif kind == "grid-shape":
            grid = _grid(choices, grid_type, (batch,) + out + (rank + 1,), spatial, align_corners)
        else:
            x = _image(choices, x_type, (batch, channels) + spatial + (2,))
    return made(version, binding, {"X": x, "grid": grid}, attributes)


def affine_grid(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T1"])
    rank = pick(choices, (2, 2, 3))
    batch = choices.integer(1, 2)
    spatial = [choices.integer(1, 4 if rank == 2 else 3) for _ in range(rank)]
    count = batch * rank * (rank + 1)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    recipe = pick(choices, ("dyadic", "dyadic", "random", "boundary"))
    if recipe == "boundary":
        theta = array(choices, dt, (batch, rank, rank + 1))
    elif recipe == "dyadic":
        theta = pack((rng.integers(-8, 9, size=count) / 4.0).tolist(), dt).reshape(batch, rank, rank + 1)
    else:
        theta = pack(rng.uniform(-2, 2, size=count).tolist(), dt).reshape(batch, rank, rank + 1)
    size = [batch, choices.integer(1, 3), *spatial]
    attributes = {}
    align_corners = choices.integer(0, 1)
    if align_corners or one_in(choices, 2):
        attributes["align_corners"] = align_corners
    if invalid_share(choices):
        if choices.integer(0, 1):
            size = size[:3]
        else:
            theta = array(choices, dt, (batch, rank + 1, rank + 1))
    return made(version, binding, {"theta": theta, "size": int64s(size)}, attributes)


STRATEGIES = {"GridSample": grid_sample, "AffineGrid": affine_grid}
