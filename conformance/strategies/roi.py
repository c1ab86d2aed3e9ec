"""Random cases of RoiAlign and MaxRoiPool (reference/roi.py): small feature maps (sides 1 to 5),
one to three RoIs inside the map, reaching past it, or shorter than a pixel; output sizes 1 to 3,
sampling_ratio 0 (adaptive) and 1 to 3, spatial_scale 1, a power of two or 0.75, both modes and (from
RoiAlign-16) both coordinate transformation modes. RoIs on a grid of quarter pixels over small
integer maps make exact bins, judged bitwise; random RoIs over random values are judged by the
bound. A small share is what the text forbids.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick
from .movement import int64s, made


def _map(choices: Choices, dt, dims):
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    recipe = pick(choices, ("integers", "integers", "random", "boundary"))
    if recipe == "boundary":
        return array(choices, dt, dims)
    if recipe == "integers":
        return pack(rng.integers(-8, 9, size=int(np.prod(dims))).tolist(), dt).reshape(dims)
    return pack(rng.standard_normal(int(np.prod(dims))).tolist(), dt).reshape(dims)


def _boxes(choices: Choices, count: int, height: int, width: int, exact: bool) -> np.ndarray:
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    reach = pick(choices, (1.0, 1.0, 1.5))  # past the map now and then
    if exact:
        x = rng.integers(-2, int(4 * width * reach) + 1, size=(count, 2)) / 4.0
        y = rng.integers(-2, int(4 * height * reach) + 1, size=(count, 2)) / 4.0
    else:
        x = rng.uniform(-0.5, width * reach, size=(count, 2))
        y = rng.uniform(-0.5, height * reach, size=(count, 2))
    x.sort(axis=1)
    y.sort(axis=1)
    return np.stack([x[:, 0], y[:, 0], x[:, 1], y[:, 1]], axis=1)


def roi_align(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T1"])
    batch, channels = choices.integer(1, 2), choices.integer(1, 2)
    height, width = choices.integer(1, 5), choices.integer(1, 5)
    count = choices.integer(0, 3) if one_in(choices, 8) else choices.integer(1, 3)
    x = _map(choices, dt, (batch, channels, height, width))
    exact = choices.integer(0, 2) > 0
    rois = pack(_boxes(choices, count, height, width, exact).reshape(-1).tolist(), dt).reshape(count, 4)
    indices = np.random.default_rng(choices.integer(0, WIDE - 1)).integers(0, batch, size=count).astype(np.int64)
    attributes = {"output_height": choices.integer(1, 3), "output_width": choices.integer(1, 3)}
    if not one_in(choices, 3):
        attributes["sampling_ratio"] = pick(choices, (0, 1, 2, 3))
    if one_in(choices, 3):
        attributes["spatial_scale"] = pick(choices, (0.5, 2.0, 0.75))
    if one_in(choices, 2):
        attributes["mode"] = pick(choices, ("avg", "max"))
    if version.since_version >= 16 and one_in(choices, 2):
        attributes["coordinate_transformation_mode"] = pick(choices, ("half_pixel", "output_half_pixel"))
    if invalid_share(choices):
        kind = pick(choices, ("mode", "indices", "rois"))
        if kind == "mode":
            attributes["mode"] = "min"
        elif kind == "indices":
            indices = np.full(count or 1, batch, dtype=np.int64)
            rois = pack(_boxes(choices, count or 1, height, width, True).reshape(-1).tolist(), dt).reshape(-1, 4)
        else:
            rois = pack(np.zeros(count * 5).tolist(), dt).reshape(count, 5)
    return made(version, binding, {"X": x, "rois": rois, "batch_indices": int64s(indices.tolist())}, attributes)


def max_roi_pool(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    batch, channels = choices.integer(1, 2), choices.integer(1, 2)
    height, width = choices.integer(1, 5), choices.integer(1, 5)
    count = choices.integer(1, 3)
    x = _map(choices, dt, (batch, channels, height, width))
    boxes = _boxes(choices, count, height, width, True)
    ids = np.random.default_rng(choices.integer(0, WIDE - 1)).integers(0, batch, size=(count, 1))
    rois = pack(np.concatenate([ids, boxes], axis=1).reshape(-1).tolist(), dt).reshape(count, 5)
    attributes = {"pooled_shape": [choices.integer(1, 3), choices.integer(1, 3)]}
    if one_in(choices, 3):
        attributes["spatial_scale"] = pick(choices, (0.5, 2.0))
    if invalid_share(choices):
        attributes["pooled_shape"] = pick(choices, ([0, 1], [2]))
    return made(version, binding, {"X": x, "rois": rois}, attributes)


STRATEGIES = {"RoiAlign": roi_align, "MaxRoiPool": max_roi_pool}
