"""Random Pad and CenterCropPad cases.

Pad: every mode its version names (constant most often), pads at their boundaries per axis (0, a
crop down to the whole dim, one past the mirror image and beyond the dim, where reflect and wrap go
round again), size-0 dims and rank 0, the fill given or left out (Pad-11 on: `constant_value` an
input of T; Pad-1 and -2: the float attribute `value`), Pad-18's `axes` in any order, negative,
or left out; and a small share of what the text forbids (a `pads` of the wrong length, an output
dim below 0, an axis out of range or repeated, a mode it does not name, a `constant_value` that is
not a scalar).

CenterCropPad: targets below, at and above each dim (odd and even differences, 0), over every axis
or the `axes` attribute's subset, negative where allowed; and a small share of invalid ones (a
`shape` of the wrong length or with a negative dim, an axis out of range or repeated).
"""

from __future__ import annotations

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from .common import Choices, array, flags, invalid_share, one_in, permutation, pick, scalar, shape
from ..values import pack
from .movement import made, outside_axis

# Largest pad drawn at one end: with at most 64 input elements and four padded axes, an output
# stays within a few thousand elements.
MOST_PAD = 6
PAD_INVALID_KINDS = ("pads-length", "negative-output-dim", "axis-out-of-range", "repeated-axes", "unknown-mode",
                     "constant-value-not-scalar")
CROP_INVALID_KINDS = ("shape-length", "axis-out-of-range", "repeated-axes", "negative-dim")


def pad(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    data = array(choices, dt, shape(choices, max_rank=4))
    rank = data.ndim
    mode = _mode(choices, version)
    axes = _pad_axes(choices, version, rank)
    chosen = list(range(rank)) if axes is None else [a % rank for a in axes]
    part = choices.section(2 * 4)  # room for four axes: fewer leave the later choices where they were
    begins = [_pad_value(part, data.shape[a], mode) for a in chosen]
    ends = [_pad_value(part, data.shape[a], mode) for a in chosen]
    ends = [max(e, -data.shape[a] - b) for a, b, e in zip(chosen, begins, ends)]  # no output dim below 0
    pads = begins + ends
    fill = _fill(choices, version, dt)
    fill_shape: tuple[int, ...] = ()
    if invalid_share(choices):
        kinds = [k for k in PAD_INVALID_KINDS if _can_break(k, version, rank, pads)]
        kind = pick(choices, kinds)
        if kind == "pads-length":
            pads = pads + [pick(choices, (0, 1))] * pick(choices, (1, 2))
        elif kind == "negative-output-dim":
            at = choices.integer(0, len(begins) - 1)
            pads[at] = -data.shape[chosen[at]] - max(0, pads[len(begins) + at]) - 1
        elif kind == "axis-out-of-range":
            axes = list(axes or range(rank))
            axes[choices.integer(0, len(axes) - 1)] = outside_axis(choices, rank, negative=True)
        elif kind == "repeated-axes":
            axes = list(axes or range(rank))
            axes, pads = axes + [axes[0]], pads[:len(axes)] + [0] + pads[len(axes):] + [0]
        elif kind == "unknown-mode":
            mode = pick(choices, ("symmetric", "CONSTANT", "wrap" if version.since_version < 19 else "mirror"))
        else:
            fill, fill_shape = scalar(choices, dt) if fill is None else fill, (1,)
    return _pad_example(version, binding, data, mode, pads, axes, fill, fill_shape, dt)


def _mode(choices: Choices, version: OpVersion) -> str | None:
    """A mode the version names, constant (written or left to its default) half the time."""
    modes = ("reflect", "edge", "wrap") if version.since_version >= 19 else ("reflect", "edge")
    if one_in(choices, 2):
        return pick(choices, (None, "constant"))
    return pick(choices, modes)


def _pad_axes(choices: Choices, version: OpVersion, rank: int) -> list[int] | None:
    """Pad-18's `axes`: left out half the time, else some axes in any order, some counted from the back."""
    if version.input("axes") is None or rank == 0 or one_in(choices, 2):
        return None
    order = permutation(choices, rank)[: choices.integer(1, rank)]
    return [a - rank if back else a for a, back in zip(order, flags(choices, len(order)))]


def _pad_value(choices: Choices, n: int, mode: str | None) -> int:
    """One end's pad for an axis of `n`: 0, small, a crop down to the whole axis, or (mostly where
    reflect and wrap go round again) one past the mirror image and beyond the dim. Shrinks to 0."""
    options = (0, 1, -1, n, -n, n - 1, n + 1, 2, 2 * n + 1, -(n - 1) if n > 1 else -1, MOST_PAD)
    if mode in ("reflect", "wrap"):
        options = (0, n, n - 1, n + 1, 2 * n + 1, -1, 1, -n, MOST_PAD)
    return max(-n, min(pick(choices, options), MOST_PAD))


def _fill(choices: Choices, version: OpVersion, dt: DType):
    """The constant fill as the version takes it, or None (left out: the default) half the time."""
    if one_in(choices, 2):
        return None
    if version.input("constant_value") is None:
        return float(scalar(choices, dtype("float")))  # Pad-1 and -2: a float attribute
    return scalar(choices, dt)


def _can_break(kind: str, version: OpVersion, rank: int, pads: list[int]) -> bool:
    if kind in ("axis-out-of-range", "repeated-axes"):
        return version.input("axes") is not None and rank > 0
    if kind == "negative-output-dim":
        return rank > 0
    if kind == "constant-value-not-scalar":
        return version.input("constant_value") is not None
    return True


def _pad_example(version: OpVersion, binding: dict[str, str], data: np.ndarray, mode: str | None, pads: list[int],
                 axes: list[int] | None, fill, fill_shape: tuple[int, ...], dt: DType):
    attributes: dict = {} if mode is None else {"mode": mode}
    if version.input("pads") is None:  # Pad-1 and -2: pads and the fill as attributes
        name = "paddings" if version.attribute("paddings") is not None else "pads"
        attributes[name] = pads
        if fill is not None:
            attributes["value"] = fill
        return made(version, binding, {"data": data}, attributes)
    inputs: dict = {"data": data, "pads": np.array(pads, dtype=np.int64).reshape(len(pads))}
    if fill is not None:
        inputs["constant_value"] = pack([fill], dt).reshape(fill_shape)
    if axes is not None:
        index = dtype(binding.get("Tind", "int64"))
        if "constant_value" not in inputs:
            inputs["constant_value"] = None  # left out, with an empty name, before `axes`
        inputs["axes"] = np.array(axes, dtype=index.np_dtype).reshape(len(axes))
    return made(version, binding, inputs, attributes)


def center_crop_pad(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    data = array(choices, dt, shape(choices, max_rank=4))
    rank = data.ndim
    axes = None
    if rank and one_in(choices, 2):
        order = permutation(choices, rank)[: choices.integer(1, rank)]
        axes = [a - rank if back else a for a, back in zip(order, flags(choices, len(order)))]
    chosen = list(range(rank)) if axes is None else [a % rank for a in axes]
    part = choices.section(4)
    targets = [_target(part, data.shape[a]) for a in chosen]
    if invalid_share(choices):
        kinds = CROP_INVALID_KINDS if rank else ("shape-length",)
        kind = pick(choices, kinds)
        if kind == "shape-length":
            targets = targets + [1]
        elif kind == "negative-dim" and targets:
            targets[choices.integer(0, len(targets) - 1)] = -pick(choices, (1, 2))
        elif kind == "axis-out-of-range":
            axes = list(axes or range(rank))
            axes[choices.integer(0, len(axes) - 1)] = outside_axis(choices, rank, negative=True)
        elif kind == "repeated-axes":
            axes = list(axes or range(rank))
            axes, targets = axes + [axes[0]], targets + [targets[0]]
    index = dtype(binding.get("Tind", "int64"))
    inputs = {"input_data": data, "shape": np.array(targets, dtype=index.np_dtype).reshape(len(targets))}
    return made(version, binding, inputs, {} if axes is None else {"axes": axes})


def _target(choices: Choices, n: int) -> int:
    """A target length for an axis of `n`: the same, one or two off either way (odd and even
    differences), 0, or well above. Shrinks to `n` (nothing changes)."""
    return max(0, pick(choices, (n, n + 1, n - 1, n + 2, n - 2, 0, 1, 2 * n + 3)))


STRATEGIES = {"Pad": pad, "CenterCropPad": center_crop_pad}
