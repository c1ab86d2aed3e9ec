"""Col2Im (version 18), from the schema text in onnx.defs: "The operator rearranges column blocks
back into a multidimensional image", as "PyTorch's fold" does.

input is [N, C * n-ary-product(block_shape), L], "L is number of blocks", enumerated "in increasing
lexicographic-order of their indices"; image_shape and block_shape are 1-D int64 tensors "of size
of at least 2"; strides, pads and dilations place the blocks as a convolution places its windows
(reference/window.py): L must be the number of windows a kernel of block_shape places over
image_shape. The output is [N, C, *image_shape]; element (n, c, p) is the sum of every column entry
input[n, c·prod(block) + k, l] whose block l's tap k lands on p (fold sums overlapping blocks;
taps in the padding are dropped; a position no tap reaches is 0).

Judging: float outputs by the per-element bound of a sum (reduction.py's `sum_family`), exactly
summable entries bitwise; integers exact, their overflow wrapped or saturated (readings). The
text does not say what a sum of strings or booleans is: where blocks do not overlap every type is
a rearrangement, told exactly; where they overlap, strings concatenated in block order and booleans
or-ed (numpy's sum of bools, nonzero) are readings a runtime may also reject. Complex sums: each
part's correctly rounded sum, exact for the exactly summable values conform draws.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..bounds import ElementBound, Tier
from ..case import Example
from ..dtypes import from_numpy
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics
from .conv_transpose import Placement
from .matmul import integer_readings
from .reduction import sum_family
from .window import Windows, windows_of

INPUT = ("input: This is a 3-dimensional tensor containing [N, C * n-ary-product(block_shape), L], where N is batch "
         "dimension, C is image channel dimension and L is number of blocks.")
IMAGE_SHAPE = ("image_shape: The shape of the spatial dimensions of the image after rearranging the column blocks.This "
               "is a 1-dimensional tensor with size of at least 2")
BLOCK_SHAPE = "block_shape: The shape of the block to apply on the input.This is a 1-dimensional tensor of size of at least 2"
BLOCK_COUNT = ("L is number of blocks ... The blocks are enumerated in increasing lexicographic-order of their indices "
               "(L the number of blocks the strides, pads and dilations place)")
OVERLAP_OPEN = ("the text ('rearranges column blocks back into a multidimensional image', as PyTorch's fold, which sums "
                "overlapping blocks) does not say what overlapping strings or booleans make; a runtime may reject them")


def shapes(example: Example) -> tuple[tuple[int, ...], tuple[int, ...]] | Invalid:
    """(image_shape, block_shape), or the rule broken."""
    label = example.version.label
    image, block = example.inputs["image_shape"], example.inputs["block_shape"]
    if image.ndim != 1 or image.size < 2 or np.any(image < 1):
        return Invalid("image-shape", f"{label}: {IMAGE_SHAPE} (each dim at least 1)")
    if block.ndim != 1 or block.size != image.size or np.any(block < 1):
        return Invalid("block-shape", f"{label}: {BLOCK_SHAPE} (one dim of at least 1 per image dim)")
    return tuple(int(v) for v in image), tuple(int(v) for v in block)


class Col2Im18(VersionSemantics):
    """Col2Im-18: column blocks summed back into the image."""

    since = 18

    def expected(self, example: Example) -> Expected:
        data = example.inputs["input"]
        label = example.version.label
        found = shapes(example)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        image, block = found
        if data.ndim != 3:
            return Expected(invalid=Invalid("input-rank", f"{label}: {INPUT}"))
        per_channel = math.prod(block)
        if data.shape[1] % per_channel:
            return Expected(invalid=Invalid("input-channels", f"{label}: {INPUT} (dim 1, {data.shape[1]}, a multiple of "
                                                                f"prod(block_shape) = {per_channel})"))
        windows = windows_of(example, image, block)
        if isinstance(windows, Invalid):
            return Expected(invalid=replace(windows, sentence=f"{label}: {windows.sentence}"))
        if math.prod(windows.output) != data.shape[2]:
            return Expected(invalid=Invalid("block-count", f"{label}: {BLOCK_COUNT}: {math.prod(windows.output)} blocks, "
                                                            f"L = {data.shape[2]}"))
        entries, lands = entries_of(data, windows, image)
        return answer(entries, lands, (data.shape[0], data.shape[1] // per_channel) + image, np.dtype(data.dtype))


def entries_of(data: np.ndarray, windows: Windows, image: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Per output element (in the output's order), the prod(block) column entries that may land on
    it, one per block tap (of the type; anything where none lands), and where one does: arrays
    (R, prod(block)) and a mask (R, prod(block))."""
    rank = len(image)
    kernel, blocks = windows.kernel, windows.output
    placement = Placement(kernel, windows.strides, windows.dilations, windows.pads_begin, image)
    indices, lands = [], np.ones((), dtype=bool)
    for axis in range(rank):
        found = placement.sources(axis, blocks[axis])
        shape = [1] * (2 * rank)
        shape[axis], shape[rank + axis] = found.shape
        found = found.reshape(shape)
        lands = lands & (found >= 0)
        indices.append(np.maximum(found, 0))
    n, columns, _ = data.shape
    channels = columns // math.prod(kernel)
    cube = data.reshape((n, channels) + kernel + blocks)
    if data.size:
        # each (image position, tap) reads the entry of tap k in the block that puts it there
        taps = [np.arange(k).reshape([1] * rank + [-1 if a == axis else 1 for a in range(rank)])
                for axis, k in enumerate(kernel)]
        taken = cube[(slice(None), slice(None), *taps, *indices)]  # [N, C, *image, *kernel]
    else:
        taken = np.zeros((n, channels) + image + kernel, dtype=data.dtype)
    lands = np.broadcast_to(lands, image + kernel)
    rows = n * channels * math.prod(image)
    entries = np.broadcast_to(taken, (n, channels) + image + kernel).reshape(rows, math.prod(kernel))
    mask = np.broadcast_to(lands, (n, channels) + image + kernel).reshape(rows, math.prod(kernel))
    return entries, mask


def answer(entries: np.ndarray, lands: np.ndarray, shape: tuple[int, ...], out: np.dtype) -> Expected:
    kind = from_numpy(out).kind
    overlap = bool(np.any(lands.sum(axis=1) > 1))
    if kind == "float":
        return _float(entries, lands, shape, out)
    if kind in ("int", "uint"):
        totals = [sum(int(v) for v, m in zip(row, on) if m) for row, on in zip(entries.tolist(), lands.tolist())]
        return integer_readings({"": totals}, out, shape, "")
    if kind == "complex":
        wide = np.where(lands, entries.astype(np.complex128), 0)
        totals = [complex(math.fsum(row.real.tolist()), math.fsum(row.imag.tolist())) for row in wide]
        return Expected(readings=(Reading((np.array(totals, dtype=out).reshape(shape),)),))
    if kind == "bool":
        value = np.any(entries & lands, axis=1).reshape(shape)
        found = Expected(readings=(Reading((value,), "booleans or-ed" if overlap else "spec"),))
    else:
        # taps in reverse order are the blocks in increasing lexicographic order (l = (p + pad − k·d) / s)
        value = np.array(["".join(str(v) for v, m in zip(row[::-1], on[::-1]) if m)
                          for row, on in zip(entries.tolist(), lands.tolist())],
                         dtype=object).reshape(shape)
        found = Expected(readings=(Reading((value,), "strings concatenated in block order" if overlap else "spec"),))
    return replace(found, ambiguity=OVERLAP_OPEN, may_reject=OVERLAP_OPEN) if overlap else found


def _float(entries: np.ndarray, lands: np.ndarray, shape: tuple[int, ...], out: np.dtype) -> Expected:
    with np.errstate(all="ignore"):
        rows = np.where(lands, entries.astype(np.float64), 0.0)
    n = lands.sum(axis=1).astype(np.float64)
    with np.errstate(all="ignore"):
        y, bound = sum_family("sum", rows, np.maximum(n, 1), out)
    precise = y.reshape(shape)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = precise.astype(out)
    shaped = ElementBound(tuple(Tier(t.label, t.allowed.reshape(shape), t.ksb.reshape(shape)) for t in bound.tiers),
                          bound.formula, bound.reason, None if bound.scale is None else bound.scale.reshape(shape))
    return Expected(readings=(Reading((rounded,), precise=(precise,)),), budgets=(shaped,))


# --- traits ---

def _geometry(example: Example) -> tuple[tuple[int, ...], Windows] | None:
    found = shapes(example)
    if isinstance(found, Invalid):
        return None
    windows = windows_of(example, found[0], found[1])
    return None if isinstance(windows, Invalid) else (found[0], windows)


def overlapping(example: Example) -> bool:
    """Blocks that overlap: an image position two or more column entries land on."""
    found = _geometry(example)
    return found is not None and any(s < (k - 1) * d + 1 for s, k, d in zip(found[1].strides, found[1].kernel, found[1].dilations))


def padded(example: Example) -> bool:
    return any(int(p) for p in np.ravel(example.attributes.get("pads", [])))


def uncovered(example: Example) -> bool:
    """Image positions no block reaches (0 in the output)."""
    found = _geometry(example)
    if found is None:
        return False
    image, windows = found
    return any(s > (k - 1) * d + 1 or (o - 1) * s + (k - 1) * d + 1 - b < n
               for n, s, k, d, o, b in zip(image, windows.strides, windows.kernel, windows.dilations, windows.output,
                                           windows.pads_begin))


def non_finite_input(example: Example) -> bool:
    data = example.inputs.get("input")
    return data is not None and from_numpy(data.dtype).kind == "float" and data.size > 0 and \
        not np.isfinite(data.astype(np.float64)).all()


def spatial_rank_above_2(example: Example) -> bool:
    image = example.inputs.get("image_shape")
    return image is not None and image.size > 2


def nd_dilated(example: Example) -> bool:
    """An image of 3 or more dims with a dilation above 1."""
    return spatial_rank_above_2(example) and any(int(d) > 1 for d in np.ravel(example.attributes.get("dilations", [])))


def empty_input(example: Example) -> bool:
    data = example.inputs.get("input")
    return data is not None and data.size == 0


def output_elements(example: Example) -> int:
    data, image = example.inputs.get("input"), example.inputs.get("image_shape")
    largest = max((v.size for v in example.inputs.values() if v is not None), default=0)
    if data is None or image is None or data.ndim != 3 or image.ndim != 1 or np.any(image < 0):
        return largest
    block = example.inputs.get("block_shape")
    per_channel = math.prod(int(v) for v in np.ravel(block)) if block is not None and block.size else 1
    return max(largest, data.shape[0] * (data.shape[1] // max(per_channel, 1)) * math.prod(int(v) for v in image))


TRAITS = {"overlapping": overlapping, "padded": padded, "uncovered": uncovered, "non-finite-input": non_finite_input,
          "spatial-3d": spatial_rank_above_2, "empty-input": empty_input, "nd-dilated": nd_dilated,
          "dilated": lambda e: any(int(d) > 1 for d in np.ravel(e.attributes.get("dilations", [])))}

REFERENCE = OpReference(op="Col2Im", dtype_param="T", semantics=(Col2Im18,), data_inputs=("input",),
                        shape_inputs=("image_shape", "block_shape"), output_elements_from=output_elements, traits=TRAITS,
                        rules=("image-shape", "block-shape", "input-rank", "input-channels", "block-count", "strides",
                               "dilations", "pads", "no-window", "kernel-shape"))
