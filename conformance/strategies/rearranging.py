"""Random DepthToSpace, SpaceToDepth and ReverseSequence cases: blocksizes 1 to 3 on [N, C, H, W]
inputs whose dims divide (size-0 dims among them), both modes where the version has them (and the
attribute left out); sequences reversed along either axis order with lengths of 0, 1, the whole
time axis and beyond it; and a small share of what the text forbids (another rank, a dim the
blocksize does not divide, blocksize 0, an unknown mode, axes other than 0 and 1 (the same axes
counted from the back among them), lengths of the wrong count or negative)."""

from __future__ import annotations

from ..dtypes import dtype
from ..registry import OpVersion
from .common import Choices, array, dim, invalid_share, pick, shape
from .movement import int64s, made

BLOCK_INVALID = ("rank", "indivisible", "blocksize", "mode")


def depth_to_space(choices: Choices, version: OpVersion, binding: dict[str, str]):
    size = pick(choices, (2, 1, 3))
    n, h, w = dim(choices, 2), dim(choices, 3), dim(choices, 3)
    dims = [n, dim(choices, 2) * size * size, h, w]
    return _blocks(choices, version, binding, dims, size, channels=True)


def space_to_depth(choices: Choices, version: OpVersion, binding: dict[str, str]):
    size = pick(choices, (2, 1, 3))
    dims = [dim(choices, 2), dim(choices, 2), dim(choices, 2) * size, dim(choices, 2) * size]
    return _blocks(choices, version, binding, dims, size, channels=False)


def _blocks(choices: Choices, version: OpVersion, binding: dict[str, str], dims: list[int], size: int, channels: bool):
    """The case of either op: `dims` valid for `size`, or (a small share) broken one way."""
    attributes: dict = {}
    has_mode = version.attribute("mode") is not None
    if has_mode:
        mode = pick(choices, (None, "DCR", "CRD"))
        if mode is not None:
            attributes["mode"] = mode
    if invalid_share(choices):
        kinds = BLOCK_INVALID if has_mode else BLOCK_INVALID[:-1]
        dims, size = _broken(choices, pick(choices, kinds), dims, size, channels, attributes)
    attributes["blocksize"] = size
    data = array(choices, dtype(binding["T"]), tuple(dims))
    return made(version, binding, {"input": data}, attributes)


def _broken(choices: Choices, kind: str, dims: list[int], size: int, channels: bool, attributes: dict):
    if kind == "rank":
        return (dims[:3] if choices.integer(0, 1) else [*dims, 1]), size
    if kind == "indivisible":
        size = max(size, 2)
        dims = [dims[0], size * size + 1, 1, 1] if channels else [dims[0], dims[1], size + 1, size]
        return dims, size
    if kind == "blocksize":
        return dims, pick(choices, (0, -1))
    attributes["mode"] = "RCD"
    return dims, size


def reverse_sequence(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dims = list(shape(choices, min_rank=2, max_rank=4))
    batch, time = pick(choices, ((1, 0), (0, 1)))
    steps = dims[time]
    lens = [_length(choices, steps) for _ in range(dims[batch])]
    if invalid_share(choices):
        batch, time, lens, dims = _broken_sequences(choices, batch, time, lens, dims)
    attributes = {} if (batch, time) == (1, 0) and choices.integer(0, 1) else {"batch_axis": batch, "time_axis": time}
    data = array(choices, dtype(binding["T"]), tuple(dims))
    return made(version, binding, {"input": data, "sequence_lens": int64s(lens)}, attributes)


def _length(choices: Choices, steps: int) -> int:
    """A sequence length: the whole time axis, 0, 1, any in between, or one beyond it."""
    way = choices.integer(0, 4)
    return (steps, 0, min(1, steps), choices.integer(0, steps), steps + 1)[way]


def _broken_sequences(choices: Choices, batch: int, time: int, lens: list[int], dims: list[int]):
    kind = pick(choices, ("same-axis", "axis-2", "negative-axis", "count", "negative", "rank"))
    if kind == "same-axis":
        return batch, batch, lens, dims
    if kind == "axis-2":
        return (2, time, lens, dims) if choices.integer(0, 1) else (batch, 2, lens, dims)
    if kind == "negative-axis":  # the same axis counted from the back: still not 0 or 1
        return (batch - len(dims), time, lens, dims) if choices.integer(0, 1) else (batch, time - len(dims), lens, dims)
    if kind == "count":
        return batch, time, [*lens, 1], dims
    if kind == "negative":
        lens = [-1, *lens[1:]] if lens else [-1]
        return batch, time, lens, dims[:batch] + [len(lens)] + dims[batch + 1:]
    return batch, time, lens, dims[:1]


STRATEGIES = {"DepthToSpace": depth_to_space, "SpaceToDepth": space_to_depth, "ReverseSequence": reverse_sequence}
