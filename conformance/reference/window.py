"""Sliding windows over the spatial axes, as the convolution and pooling texts define them: the
attributes that place them (`kernel_shape`, `strides`, `dilations`, `pads`, `auto_pad`), the
output's spatial shape, and the input elements each window reads.

The texts' shared sentences (Conv, ConvTranspose, ConvInteger, QLinearConv, DeformConv and the
pools write them alike):
- strides, dilations: "If not present, the stride [dilation] defaults to 1 along each spatial
  axis." A stride or dilation below 1 places no window (invalid).
- pads: "[x1_begin, x2_begin...x1_end, x2_end,...]", "it can take any value greater than or equal
  to 0", "If not present, the padding defaults to 0", and "cannot be used simultaneously with
  auto_pad attribute".
- auto_pad: "SAME_UPPER or SAME_LOWER mean pad the input so that `output_shape[i] =
  ceil(input_shape[i] / strides[i])` for each axis `i`. The padding is split between the two sides
  equally or almost equally (depending on whether it is even or odd). In case the padding is an
  odd number, the extra padding is added at the end for SAME_UPPER and at the beginning for
  SAME_LOWER." VALID pads nothing. The pools' text gives the total: "pad_shape[i] =
  (output_spatial_shape[i] - 1) * strides_spatial_shape[i] + ((kernel_spatial_shape[i] - 1) *
  dilations[i] + 1) - input_spatial_shape[i]"; where that is negative (a stride longer than the
  dilated kernel) the output's ceil(in / stride) windows fit without padding, so it pads 0.
- the output's spatial size with explicit pads: "floor((input_spatial_shape[i] + pad_shape[i] -
  dilation[i] * (kernel_shape[i] - 1) - 1) / strides_spatial_shape[i] + 1)", or ceil with the
  pools' ceil_mode, where "Sliding windows that would start in the right padded region are
  ignored."

An op's own rules (channels and groups, ceil_mode's versions, what a window over padding only
holds) stay in its module; this one owns where the windows are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..case import Example
from .base import Invalid, text_attribute

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
STRIDES_SENTENCE = "strides: Stride along each spatial axis. If not present, the stride defaults to 1 along each spatial axis."
DILATIONS_SENTENCE = ("dilations: dilation value along each spatial axis of the filter. If not present, the dilation "
                      "defaults to 1 along each spatial axis.")
PADS_SENTENCE = ("pads: Padding for the beginning and ending along each spatial axis, it can take any value greater "
                 "than or equal to 0 ... `pads` format should be as follow [x1_begin, x2_begin...x1_end, x2_end,...]")
PADS_WITH_AUTO_PAD = "pads: This attribute cannot be used simultaneously with auto_pad attribute."
AUTO_PAD_SENTENCE = "auto_pad must be either NOTSET, SAME_UPPER, SAME_LOWER or VALID."
KERNEL_SENTENCE = "kernel_shape: The shape of the convolution kernel [the size of the kernel along each axis]."
NO_WINDOW = ("output_spatial_shape[i] = floor((input_spatial_shape[i] + pad_shape[i] - dilation[i] * (kernel_shape[i] "
             "- 1) - 1) / strides_spatial_shape[i] + 1): an axis whose padded input is shorter than the dilated kernel "
             "has no window")


@dataclass(frozen=True)
class Windows:
    """Where the windows over each spatial axis are: the kernel's size, stride and dilation, the
    padding before and after, and how many windows (the output's size) on each axis."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads_begin: tuple[int, ...]
    pads_end: tuple[int, ...]
    output: tuple[int, ...]

    @property
    def spatial_rank(self) -> int:
        return len(self.kernel)

    def taps(self, axis: int) -> np.ndarray:
        """The input index each (output position, kernel tap) of `axis` reads, shape [out, kernel]:
        negative or past the input's end where it reads the padding."""
        starts = np.arange(self.output[axis]) * self.strides[axis] - self.pads_begin[axis]
        return starts[:, None] + np.arange(self.kernel[axis])[None, :] * self.dilations[axis]

    def gather(self, x: np.ndarray, fill: object = 0) -> tuple[np.ndarray, np.ndarray]:
        """Each window's elements of x [N, C, *spatial]: values [N, C, *output, *kernel] (`fill`
        where a tap reads padding) and a mask [*output, *kernel] of the taps that read the input."""
        rank = self.spatial_rank
        spatial = x.shape[2:]
        indices, inside = [], np.ones((), dtype=bool)
        for axis in range(rank):
            taps = self.taps(axis)
            shape = [1] * (2 * rank)
            shape[axis], shape[rank + axis] = taps.shape
            taps = taps.reshape(shape)
            valid = (taps >= 0) & (taps < spatial[axis])
            inside = inside & valid
            indices.append(np.clip(taps, 0, max(spatial[axis] - 1, 0)))
        values = x[(slice(None), slice(None), *indices)] if x.size else np.zeros(
            x.shape[:2] + self.output + self.kernel, dtype=x.dtype)
        values = np.where(inside, values, np.asarray(fill, dtype=x.dtype)) if values.size else values
        return values, np.broadcast_to(inside, self.output + self.kernel)


def attribute_ints(example: Example, name: str) -> list[int]:
    """An INTS attribute's values as ints (a scalar given counts as one); [] where it is left out."""
    value = example.attributes.get(name)
    return [] if value is None else [int(v) for v in np.ravel(value)]


def auto_pad_of(example: Example) -> str:
    """The auto_pad attribute, NOTSET where it is left out."""
    return text_attribute(example, "auto_pad", "NOTSET")


def int_list(example: Example, name: str, count: int, default: int) -> tuple[int, ...] | None:
    """An INTS attribute, `default` on each axis where it is left out; None when its length is not
    `count`."""
    if example.attributes.get(name) is None:
        return (default,) * count
    found = tuple(attribute_ints(example, name))
    return found if len(found) == count else None


def windows_of(example: Example, spatial: tuple[int, ...], kernel: tuple[int, ...],
               ceil_mode: bool = False) -> Windows | Invalid:
    """The windows the attributes place over an input of spatial shape `spatial` with a kernel
    of shape `kernel` (from `kernel_shape` or the weights, as the op says), or the rule broken."""
    rank = len(spatial)
    if len(kernel) != rank or any(k < 1 for k in kernel):
        return Invalid("kernel-shape", KERNEL_SENTENCE + f" (one size of at least 1 per spatial axis: {rank})")
    strides = int_list(example, "strides", rank, 1)
    if strides is None or min(strides, default=1) < 1:
        return Invalid("strides", STRIDES_SENTENCE + f" (one stride of at least 1 per spatial axis: {rank})")
    dilations = int_list(example, "dilations", rank, 1)
    if dilations is None or min(dilations, default=1) < 1:
        return Invalid("dilations", DILATIONS_SENTENCE + f" (one dilation of at least 1 per spatial axis: {rank})")
    auto_pad = auto_pad_of(example)
    if auto_pad not in AUTO_PADS:
        return Invalid("auto-pad", AUTO_PAD_SENTENCE)
    if auto_pad != "NOTSET":
        if "pads" in example.attributes and any(int(p) for p in np.ravel(example.attributes["pads"])):
            return Invalid("pads-with-auto-pad", PADS_WITH_AUTO_PAD)
        return _automatic(auto_pad, spatial, kernel, strides, dilations)
    pads = int_list(example, "pads", 2 * rank, 0)
    if pads is None or min(pads, default=0) < 0:
        return Invalid("pads", PADS_SENTENCE + f" (two pads of at least 0 per spatial axis: {2 * rank})")
    return _explicit(spatial, kernel, strides, dilations, pads[:rank], pads[rank:], ceil_mode)


EMPTY_OUTPUT = ("output_spatial_shape[i] = floor((input_spatial_shape[i] + pad_shape[i] - ((kernel_spatial_shape[i] - 1) * "
                "dilations[i] + 1)) / strides_spatial_shape[i] + 1) is 0 on an axis: an empty output, though a kernel that "
                "never fits the input may also be read as an error")


def empty_output_spatial(example: Example, spatial: tuple[int, ...], kernel: tuple[int, ...]) -> tuple[int, ...] | None:
    """Where `windows_of` finds no window (no-window), the pools' own formula, floor((input + pads
    - dilated kernel) / stride + 1) (VALID's ceil((input - dilated kernel + 1) / stride) is the same
    number), on each axis, when it is 0 on some axis and negative on none: an empty output, not an
    error (`EMPTY_OUTPUT`, which a runtime may also reject); None otherwise."""
    rank = len(spatial)
    strides = int_list(example, "strides", rank, 1)
    dilations = int_list(example, "dilations", rank, 1)
    auto_pad = auto_pad_of(example)
    pads = (0,) * (2 * rank) if auto_pad == "VALID" else int_list(example, "pads", 2 * rank, 0)
    if strides is None or dilations is None or pads is None or auto_pad not in ("NOTSET", "VALID"):
        return None
    if min(strides, default=1) < 1 or min(dilations, default=1) < 1 or min(pads, default=0) < 0:
        return None  # windows_of's other rules
    counts = tuple((n + pads[a] + pads[a + rank] - dilated(k, d)) // s + 1
                   for a, (n, k, s, d) in enumerate(zip(spatial, kernel, strides, dilations)))
    return counts if min(counts) >= 0 and 0 in counts else None


def zero_windows(example: Example) -> bool:
    """The pools' trait `empty-output`: the text's formula counts 0 windows on an axis (`empty_output_spatial`), where a
    runtime dividing with C++'s truncation toward zero counts 1."""
    x, kernel = example.inputs.get("X"), example.attributes.get("kernel_shape")
    if x is None or kernel is None or x.ndim != len(np.ravel(kernel)) + 2:
        return False
    return empty_output_spatial(example, tuple(int(d) for d in x.shape[2:]), tuple(int(k) for k in np.ravel(kernel))) is not None


def spatial_rank_1(example: Example) -> bool:
    """A data input (X, or ConvInteger's x) with one spatial axis."""
    x = example.inputs.get("X", example.inputs.get("x"))
    return x is not None and x.ndim == 3


def spatial_rank_3(example: Example) -> bool:
    """A data input (X, or ConvInteger's x) with three spatial axes or more."""
    x = example.inputs.get("X", example.inputs.get("x"))
    return x is not None and x.ndim >= 5


def dilated(kernel: int, dilation: int) -> int:
    """How many input elements one window spans."""
    return (kernel - 1) * dilation + 1


def _automatic(auto_pad: str, spatial, kernel, strides, dilations) -> Windows | Invalid:
    if auto_pad == "VALID":
        output = tuple((n - dilated(k, d)) // s + 1 for n, k, s, d in zip(spatial, kernel, strides, dilations))
        if min(output, default=1) < 1:
            return Invalid("no-window", NO_WINDOW)
        zeros = (0,) * len(spatial)
        return Windows(tuple(kernel), strides, dilations, zeros, zeros, output)
    output = tuple(math.ceil(n / s) for n, s in zip(spatial, strides))
    totals = [max(0, (o - 1) * s + dilated(k, d) - n) for o, s, k, d, n in zip(output, strides, kernel, dilations, spatial)]
    small = tuple(t // 2 for t in totals)
    large = tuple(t - t // 2 for t in totals)
    begin, end = (small, large) if auto_pad == "SAME_UPPER" else (large, small)
    return Windows(tuple(kernel), strides, dilations, begin, end, output)


def _explicit(spatial, kernel, strides, dilations, begin, end, ceil_mode: bool) -> Windows | Invalid:
    output = []
    for n, k, s, d, b, e in zip(spatial, kernel, strides, dilations, begin, end):
        span = n + b + e - dilated(k, d)
        if span < 0:
            return Invalid("no-window", NO_WINDOW)
        count = -(-span // s) + 1 if ceil_mode else span // s + 1
        if ceil_mode and (count - 1) * s >= n + b:
            count -= 1  # "Sliding windows that would start in the right padded region are ignored."
        output.append(count)
    return Windows(tuple(kernel), tuple(strides), tuple(dilations), tuple(begin), tuple(end), tuple(output))
