"""Rearranging: DepthToSpace, SpaceToDepth and ReverseSequence (data-movement family, movement.py).

DepthToSpace's map is the text's own formula (reshape, transpose, reshape) applied to the input's
positions, in the mode the version gives (DCR, or CRD from version 11; version 1 names no order,
and DCR is the default every later version keeps). SpaceToDepth's text gives no formula before
version 28 names the modes, only that "This is the reverse transformation" (DepthToSpace's words):
its map is DepthToSpace's map in the same mode, inverted. ReverseSequence reverses the first
`sequence_lens[i]` elements along the time axis of each batch slice and copies the rest.

DepthToSpace-28 and SpaceToDepth-28 have context-dependent function bodies (reshape, transpose,
reshape): the core judges them as further readings (function_body.py); for every valid case here
the prose's map and the body's agree.
"""

from __future__ import annotations

import numpy as np

from ..case import Example
from .base import Invalid, OpReference
from .movement import MovementSemantics, Moved, positions

NCHW = "input: Input tensor of [N,C,H,W], where N is the batch axis, C is the channel or depth, H is the height and W is the width."
BLOCKSIZE = "blocksize: Blocks of [blocksize, blocksize] are moved (a block's side is a count of at least 1)"
DEPTH_OUTPUT = ("output: Output tensor of [N, C/(blocksize * blocksize), H * blocksize, W * blocksize] "
                "(C divides into blocks of blocksize * blocksize)")
SPACE_OUTPUT = ("output: Output tensor of [N, C * blocksize * blocksize, H/blocksize, W/blocksize] "
                "(H and W divide into blocks of blocksize)")
MODE = "mode: DCR (default) for depth-column-row order re-arrangement. Use CRD for column-row-depth order."
MODES = ("DCR", "CRD")

RANK_2 = "input: Tensor of rank r >= 2."
BATCH_AXIS = "batch_axis: (Optional) Specify which axis is batch axis. Must be one of 1 (default), or 0."
TIME_AXIS = "time_axis: (Optional) Specify which axis is time axis. Must be one of 0 (default), or 1."
TWO_AXES = ("For each slice i iterating on batch axis, the operator reverses the first sequence_lens[i] elements on "
            "time axis: the batch axis and the time axis are two axes (batch_axis 1 and time_axis 0, or 0 and 1)")
LENS_SHAPE = "sequence_lens: Tensor specifying lengths of the sequences in a batch. It has shape `[batch_size]`."
LENS_NEGATIVE = "sequence_lens: Tensor specifying lengths of the sequences in a batch: a length, not below 0"
LENS_BEYOND_TIME = ("the operator reverses the first sequence_lens[i] elements on time axis: a sequence_lens[i] beyond "
                    "the time axis's length names more elements than there are; reversing all of them is the reading "
                    "(the first n of fewer than n elements), and the text also leaves a runtime room to reject it")

# DepthToSpace's formula (the text of version 11 on): the shape each mode reshapes the input to,
# from (b, c, h, w, blocksize), and the transpose that follows it.
DEPTH_TO_SPACE = {
    "DCR": (lambda b, c, h, w, s: (b, s, s, c // (s * s), h, w), (0, 3, 4, 1, 5, 2)),
    "CRD": (lambda b, c, h, w, s: (b, c // (s * s), s, s, h, w), (0, 1, 4, 2, 5, 3)),
}


class BlockSemantics(MovementSemantics):
    """What DepthToSpace and SpaceToDepth share: a 4-D input, a blocksize of at least 1, the mode
    (DCR, the only order before the version that names CRD), dims the blocks divide, and a map of
    the input's positions."""

    def mode(self, example: Example) -> str | Invalid:
        return "DCR"

    def moved(self, example: Example) -> Moved | Invalid:
        data = example.inputs["input"]
        found = _checked(data, example, self.mode(example))
        if isinstance(found, Invalid):
            return found
        mode, size = found
        undivided = self.undivided(data.shape, size)
        if undivided is not None:
            return undivided
        return Moved((self.mapped(positions([data.shape])[0], size, mode),))

    def undivided(self, shape: tuple[int, ...], size: int) -> Invalid | None:
        """The sentence that forbids dims the blocks do not divide, or None."""
        raise NotImplementedError

    def mapped(self, index: np.ndarray, size: int, mode: str) -> np.ndarray:
        """The input's positions moved as the op moves its elements."""
        raise NotImplementedError


class DepthToSpace1(BlockSemantics):
    """DepthToSpace-1: depth moved into blocks of height and width, in DCR order (the only one)."""

    since = 1

    def undivided(self, shape: tuple[int, ...], size: int) -> Invalid | None:
        return Invalid("channels-not-divisible", DEPTH_OUTPUT) if shape[1] % (size * size) else None

    def mapped(self, index: np.ndarray, size: int, mode: str) -> np.ndarray:
        return depth_to_space(index, size, mode)


class DepthToSpace11(DepthToSpace1):
    """DepthToSpace-11: `mode` DCR (default) or CRD, each with the text's formula."""

    since = 11

    def mode(self, example: Example) -> str | Invalid:
        return mode_of(example)


class SpaceToDepth1(BlockSemantics):
    """SpaceToDepth-1: blocks of height and width moved into depth, the reverse of DepthToSpace
    (in DCR order, DepthToSpace's only order when this text was written)."""

    since = 1

    def undivided(self, shape: tuple[int, ...], size: int) -> Invalid | None:
        return Invalid("spatial-not-divisible", SPACE_OUTPUT) if shape[2] % size or shape[3] % size else None

    def mapped(self, index: np.ndarray, size: int, mode: str) -> np.ndarray:
        return space_to_depth(index, size, mode)


class SpaceToDepth28(SpaceToDepth1):
    """SpaceToDepth-28: `mode` DCR (default) or CRD, the reverse of DepthToSpace in that mode."""

    since = 28

    def mode(self, example: Example) -> str | Invalid:
        return mode_of(example)


def mode_of(example: Example) -> str | Invalid:
    mode = example.attributes.get("mode", "DCR")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    return mode if mode in MODES else Invalid("mode-unknown", MODE)


def _checked(data: np.ndarray, example: Example, mode: str | Invalid) -> tuple[str, int] | Invalid:
    """The mode and blocksize, or the sentence that forbids the input's rank, blocksize or mode."""
    if data.ndim != 4:
        return Invalid("not-4d", NCHW)
    size = int(example.attributes["blocksize"])
    if size < 1:
        return Invalid("blocksize-not-positive", BLOCKSIZE)
    if isinstance(mode, Invalid):
        return mode
    return mode, size


def depth_to_space(x: np.ndarray, size: int, mode: str) -> np.ndarray:
    """The text's formula: y from x of shape [b, c, h, w] (c divisible by size * size)."""
    b, c, h, w = x.shape
    shape_of, perm = DEPTH_TO_SPACE[mode]
    tmp = np.transpose(np.reshape(x, shape_of(b, c, h, w, size)), perm)
    return np.reshape(tmp, (b, c // (size * size), h * size, w * size))


def space_to_depth(x: np.ndarray, size: int, mode: str) -> np.ndarray:
    """The y whose DepthToSpace (in `mode`) is x: DepthToSpace's map on y's shape, inverted."""
    b, c, h, w = x.shape
    shape = (b, c * size * size, h // size, w // size)
    source = depth_to_space(np.arange(x.size, dtype=np.int64).reshape(shape), size, mode)
    y = np.empty(x.size, dtype=np.int64)
    y[source.reshape(-1)] = x.reshape(-1)  # x's element k is y's element source[k]
    return y.reshape(shape)


class ReverseSequence10(MovementSemantics):
    """ReverseSequence: in each slice i along batch_axis, the first sequence_lens[i] elements along
    time_axis reversed, the others copied."""

    since = 10

    def moved(self, example: Example) -> Moved | Invalid:
        data = example.inputs["input"]
        axes = _batch_and_time(example, data.ndim)
        if isinstance(axes, Invalid):
            return axes
        batch, time = axes
        lens = example.inputs["sequence_lens"]
        if lens.ndim != 1 or lens.shape[0] != data.shape[batch]:
            return Invalid("sequence-lens-shape", LENS_SHAPE)
        if (lens < 0).any():
            return Invalid("negative-sequence-length", LENS_NEGATIVE)
        steps = data.shape[time]
        index = np.moveaxis(positions([data.shape])[0], (batch, time), (0, 1)).copy()
        for i, length in enumerate(int(n) for n in lens):
            first = min(length, steps)
            index[i, :first] = index[i, :first][::-1].copy()
        made = np.moveaxis(index, (0, 1), (batch, time)).copy()
        beyond = int(lens.max(initial=0)) > steps
        return Moved((made,), may_reject=LENS_BEYOND_TIME if beyond else None)


def _batch_and_time(example: Example, rank: int) -> tuple[int, int] | Invalid:
    if rank < 2:
        return Invalid("rank-below-2", RANK_2)
    batch = int(example.attributes.get("batch_axis", 1))
    time = int(example.attributes.get("time_axis", 0))
    for axis, sentence in ((batch, BATCH_AXIS), (time, TIME_AXIS)):
        if axis not in (0, 1):
            # A negative axis has its own rule: a runtime that counts it from the back (or checks only
            # axis < 2) accepts it, which is told apart from accepting axis 2.
            return Invalid("negative-axis" if axis < 0 else "axis-not-0-or-1", sentence)
    if batch == time:
        return Invalid("same-axis", TWO_AXES)
    return batch, time


def crd_mode(example: Example) -> bool:
    """`mode` CRD: column-row-depth order."""
    mode = example.attributes.get("mode")
    return (mode.decode() if isinstance(mode, bytes) else mode) == "CRD"


def empty_input(example: Example) -> bool:
    """An input with a dim of 0."""
    return example.inputs["input"].size == 0


def divided_dim_zero(example: Example) -> bool:
    """A 4-D input whose dim the op divides by the block is 0 (DepthToSpace's C, SpaceToDepth's H or
    W): 0 divides into blocks of any size, into 0 blocks, which a runtime checking for a non-zero
    quotient refuses."""
    data = example.inputs["input"]
    if data.ndim != 4:
        return False
    divided = data.shape[1:2] if example.op == "DepthToSpace" else data.shape[2:]
    return 0 in divided


def _lens(example: Example) -> tuple[list[int], int] | None:
    """sequence_lens as Python ints and the time axis's length, where both are readable."""
    data, lens = example.inputs["input"], example.inputs["sequence_lens"]
    time = int(example.attributes.get("time_axis", 0))
    if data.ndim < 2 or time not in (0, 1) or lens.ndim != 1:
        return None
    return [int(n) for n in lens], data.shape[time]


def seq_len_zero(example: Example) -> bool:
    """A sequence length of 0: nothing of that slice reversed."""
    found = _lens(example)
    return found is not None and 0 in found[0]


def seq_len_beyond_time(example: Example) -> bool:
    """A sequence length beyond the time axis's length (see LENS_BEYOND_TIME)."""
    found = _lens(example)
    return found is not None and any(n > found[1] for n in found[0])


def no_sequences(example: Example) -> bool:
    """sequence_lens with no element (a batch of 0): an empty int64 tensor, which a runtime folding
    an initializer or Constant node into the graph may not convert."""
    return example.inputs["sequence_lens"].size == 0


def axes_swapped(example: Example) -> bool:
    """batch_axis 0 and time_axis 1: the other way round from the defaults."""
    return example.attributes.get("batch_axis", 1) == 0 and example.attributes.get("time_axis", 0) == 1


_BLOCK_RULES = ("not-4d", "blocksize-not-positive", "mode-unknown")
REFERENCES = (
    OpReference(op="DepthToSpace", dtype_param="T", semantics=(DepthToSpace1, DepthToSpace11), data_inputs=("input",),
                traits={"crd-mode": crd_mode, "empty-input": empty_input, "divided-dim-zero": divided_dim_zero},
                rules=(*_BLOCK_RULES, "channels-not-divisible")),
    OpReference(op="SpaceToDepth", dtype_param="T", semantics=(SpaceToDepth1, SpaceToDepth28), data_inputs=("input",),
                traits={"crd-mode": crd_mode, "empty-input": empty_input, "divided-dim-zero": divided_dim_zero},
                rules=(*_BLOCK_RULES, "spatial-not-divisible")),
    OpReference(op="ReverseSequence", dtype_param="T", semantics=(ReverseSequence10,), data_inputs=("input",),
                traits={"seq-len-zero": seq_len_zero, "seq-len-beyond-time": seq_len_beyond_time,
                        "axes-swapped": axes_swapped, "no-sequences": no_sequences},
                rules=("rank-below-2", "axis-not-0-or-1", "negative-axis", "same-axis", "sequence-lens-shape",
                       "negative-sequence-length")),
)
