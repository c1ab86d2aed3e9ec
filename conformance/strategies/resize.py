"""Random cases of Resize and Upsample (reference/resize.py): small inputs of rank 1 to 4, scales
that are powers of two or simple fractions (exact mapping in float32 for a large share, so a wrong
coordinate is told bitwise) or sizes, every mode, coordinate mode and nearest mode the version
names, exclude_outside, antialias, axes and keep_aspect_ratio_policy from 18, tf_crop_and_resize
with an roi of quarters and an extrapolation value; summable values for most float draws."""

from __future__ import annotations

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from .accumulating import values
from .common import Choices, invalid_share, one_in, pick
from .movement import int64s, made

SCALES = (2.0, 0.5, 1.0, 3.0, 1.5, 0.75, 0.25)
CTMS = ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_crop_and_resize")


def _shape(choices: Choices) -> tuple[int, ...]:
    rank = choices.integer(1, 4)
    # small: a 4-D cubic output element reads 4**4 taps; three elements per axis show every mapping
    return tuple(choices.integer(1, 3 if k >= rank - 2 else 2) for k in range(rank))


def _x(choices: Choices, binding: dict[str, str], param: str, dims: tuple[int, ...]) -> np.ndarray:
    return values(choices, dtype(binding[param]), dims, "sum")


def resize(choices: Choices, version: OpVersion, binding: dict[str, str]):
    v = version.since_version
    dims = _shape(choices)
    x = _x(choices, binding, "T1" if v >= 11 else "T", dims)
    rank = len(dims)
    modes = ("nearest", "linear") if v == 10 else ("nearest", "linear", "cubic")
    attributes: dict = {"mode": pick(choices, modes)}
    scales = [1.0 if k < rank - 2 and not one_in(choices, 4) else pick(choices, SCALES) for k in range(rank)]
    wrong = invalid_share(choices)
    if v == 10:
        if wrong:
            scales = scales[:-1] if rank > 1 else [0.0]
        return made(version, binding, {"X": x, "scales": np.array(scales, dtype=np.float32)}, attributes)
    ctms = CTMS + (("half_pixel_symmetric",) if v >= 19 else ())
    ctm = pick(choices, ctms)
    attributes["coordinate_transformation_mode"] = ctm
    attributes["nearest_mode"] = pick(choices, ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"))
    if attributes["mode"] == "cubic":
        attributes["cubic_coeff_a"] = pick(choices, (-0.75, -0.5, -0.6))
        attributes["exclude_outside"] = pick(choices, (0, 1))
    axes = list(range(rank))
    if v >= 18:
        if attributes["mode"] != "nearest" and one_in(choices, 3):
            attributes["antialias"] = 1
        if rank > 1 and one_in(choices, 3):
            axes = [rank - 2, rank - 1] if rank > 2 or one_in(choices, 2) else [-1]
            attributes["axes"] = axes
            axes = [a % rank for a in axes]
    roi_type = np.dtype(dtype(binding.get("T2", "float")).np_dtype)
    roi = None
    if ctm == "tf_crop_and_resize":
        starts = [pick(choices, (0.0, 0.25, -0.25)) for _ in axes]
        ends = [pick(choices, (1.0, 0.75, 1.25)) for _ in axes]
        roi = np.array(starts + ends, dtype=roi_type)
        attributes["extrapolation_value"] = pick(choices, (0.0, 10.0, -2.5))
    elif v == 11:
        roi = np.zeros(0, dtype=roi_type)
    inputs = {"X": x, "roi": roi}
    chosen = [scales[a] for a in axes]
    if one_in(choices, 3):
        sizes = [max(0, int(dims[a] * s) + pick(choices, (0, 1))) for a, s in zip(axes, chosen)]
        inputs["scales"] = np.zeros(0, dtype=np.float32) if v == 11 else None
        inputs["sizes"] = int64s(sizes)
        if v >= 18 and len(axes) > 1 and one_in(choices, 3):
            attributes["keep_aspect_ratio_policy"] = pick(choices, ("not_larger", "not_smaller"))
    else:
        inputs["scales"] = np.array(chosen[:-1] if wrong and len(chosen) > 1 else chosen, dtype=np.float32)
    return made(version, binding, inputs, attributes)


def upsample(choices: Choices, version: OpVersion, binding: dict[str, str]):
    v = version.since_version
    dims = _shape(choices) if v > 1 else tuple(choices.integer(1, 2 if k < 2 else 3) for k in range(4))
    x = _x(choices, binding, "T", dims)
    attributes: dict = {"mode": pick(choices, ("nearest", "bilinear" if v == 1 else "linear"))}
    up = (1.0, 2.0, 3.0, 1.5, 4.0)
    scales = [1.0 if k < len(dims) - 2 else pick(choices, up) for k in range(len(dims))]
    if invalid_share(choices):
        scales[-1] = 0.5
    if v == 1:
        attributes.update(height_scale=scales[2], width_scale=scales[3])
        return made(version, binding, {"X": x}, attributes)
    if v == 7:
        attributes["scales"] = scales
        return made(version, binding, {"X": x}, attributes)
    return made(version, binding, {"X": x, "scales": np.array(scales, dtype=np.float32)}, attributes)


STRATEGIES = {"Resize": resize, "Upsample": upsample}
