"""MaxPool (1, 8, 10, 11, 12, 22) and GlobalMaxPool (1, 22): the max of each window, and (MaxPool
from 8) the optional `Indices` of the values taken. Exact: a selection, judged bitwise.

Where the windows are is reference/window.py's (kernel_shape, strides, dilations from 10, pads,
auto_pad, ceil_mode from 10). The texts' own sentences:

- "The output of each pooling window is maximum number of elements exclude pad.": padding is no
  value, so it never wins (int8 and uint8, from 12, included). A window over padding alone (pads
  "can take any value greater than or equal to 0", so a pad of a kernel's length places one) has no
  element to take the maximum of: the text gives it no value, so any value is allowed there
  (`Reading.free`, its index too), and a runtime may reject such a case (`may_reject`).
- Indices (from 8): "The indices are computed as flatten 1-D tensor, and the indices do not
  consider padding. So the values in indices are in [0, N x C x D1 x ... x Dn)." and storage_order
  "The storage order of the tensor. 0 is row major, and 1 is column major." Row major is the flat
  index of (n, c, d1, ..., dn). Column major is open: of "the tensor" as a whole (n fastest, then
  c, d1, ...), or of the spatial axes inside each (n, c) plane, the planes in row-major order (what
  onnxruntime and onnx.reference compute): two readings where they differ.
- Ties: "the indices of the selected values": which of equal values a window selects the text does
  not say; any of them (`Reading.choices`), the first in the window's row-major order written.
  +0.0 and -0.0 are equal values: either is the maximum.
- NaN: "computing the max on all values" says nothing of NaN; a max that propagates it (a NaN in
  the window is the max) and one that skips it (comparisons with NaN are false: the max of the
  others, NaN only where every element is NaN) are both readings, per element (`choices`), the
  index following the value taken.
- ceil_mode (10 on): MaxPool-22 adds "Sliding windows that would start in the right padded region
  are ignored." Versions 10 to 12 give the ceil formula alone: the window it counts past the input
  (over padding alone, so with no value) is kept as a reading beside the one that drops it.
- auto_pad: the deprecated attribute's output shapes as each version writes them (window.py).
- A kernel longer than the padded input: the text's floor((input + pads - dilated kernel) / stride
  + 1) is 0 where it is longer by less than a stride (an empty output, which a runtime may also
  reject) and negative beyond (invalid, no-window): window.py's `empty_output_spatial`.
- GlobalMaxPool: "This is equivalent to MaxPool with kernel size equal to the spatial dimension of
  input tensor": one window per (n, c); an empty spatial axis leaves it nothing (no value, as above).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..case import Example
from ..dtypes import from_numpy
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics
from .window import (EMPTY_OUTPUT, Windows, attribute_ints, auto_pad_of, dilated, empty_output_spatial, int_list,
                     spatial_rank_3, windows_of, zero_windows)

X_SHAPE = ("X: Input data tensor from the previous operator; dimensions for image case are (N x C x H x W) ... For non "
           "image case, the dimensions are in the form of (N x C x D1 x D2 ... Dn) (N, C and at least one spatial axis)")
KERNEL_REQUIRED = "kernel_shape: The size of the kernel along each axis. (required: one size of at least 1 per spatial axis)"
STORAGE_ORDER = "storage_order: The storage order of the tensor. 0 is row major, and 1 is column major."
EXCLUDE_PAD = "The output of each pooling window is maximum number of elements exclude pad."
PAD_ONLY = ("a window over the padding alone: 'The output of each pooling window is maximum number of elements exclude "
            "pad' gives it no element to take the maximum of, so the text gives it no value")
TIES = "which of several equal values' index a window gives the text does not say ('the indices of the selected values')"
NAN_OPEN = ("the text's max says nothing of NaN: a NaN in the window is the max (propagated), or comparisons with NaN are "
            "false and the max is the others' (skipped)")
COLUMN_WHOLE = "column major over the whole tensor (n fastest, then c, d1, ...)"
COLUMN_PLANES = "column major over the spatial axes within each (n, c) plane, the planes in row-major order"
COLUMN_OPEN = ("storage_order 1: 'The storage order of the tensor. 0 is row major, and 1 is column major.': column major "
               "over the whole tensor, or over the spatial axes of each (n, c) plane")
EMPTY_PLANE = "an empty spatial axis leaves each (n, c) no element to take the maximum of: the text gives it no value"
CEIL_DROPPED = "ceil_mode: windows that would start in the right padding ignored (MaxPool-22's sentence)"
CEIL_KEPT = "ceil_mode as written: every window the ceil formula counts, one starting past the input holding no value"
CEIL_OPEN = ("ceil_mode before MaxPool-22: the ceil formula counts a window that starts past the input (over padding "
             "alone); MaxPool-22 says 'Sliding windows that would start in the right padded region are ignored'")


# --- the shared path: the max of each window ---

def _coordinates(windows: Windows) -> list[np.ndarray]:
    """Per spatial axis, the input coordinate each (window, tap) reads, shape (P, K): P windows and
    K taps in row-major order, as `Windows.gather` lays them out."""
    rank = windows.spatial_rank
    found = []
    for axis in range(rank):
        taps = windows.taps(axis)
        shape = [1] * (2 * rank)
        shape[axis], shape[rank + axis] = taps.shape
        found.append(np.broadcast_to(taps.reshape(shape), windows.output + windows.kernel)
                     .reshape(math.prod(windows.output), math.prod(windows.kernel)))
    return found


def _flat(coordinates: list[np.ndarray], sizes: tuple[int, ...], column: bool) -> np.ndarray:
    """The flat index of spatial coordinates in a plane of `sizes`: row major, or column major."""
    order = range(len(sizes) - 1, -1, -1) if column else range(len(sizes))
    index = np.zeros(coordinates[0].shape, dtype=np.int64) if coordinates else np.zeros((), dtype=np.int64)
    for axis in order:
        index = index * sizes[axis] + coordinates[axis]
    return index


def _tap_indices(n: int, c: int, spatial: tuple[int, ...], coordinates: list[np.ndarray], layout: str) -> np.ndarray:
    """Per (n, c, window, tap), shape (N·C·P, K), the tap's flat index in X under `layout`."""
    plane = math.prod(spatial)
    batch = np.arange(n).reshape(n, 1, 1, 1)
    channel = np.arange(c).reshape(1, c, 1, 1)
    if layout == "whole":
        inner = _flat(coordinates, spatial, column=True)[None, None]
        index = batch + n * channel + n * c * inner
    else:
        inner = _flat(coordinates, spatial, column=layout == "planes")[None, None]
        index = (batch * c + channel) * plane + inner
    return index.reshape(-1, index.shape[-1]).astype(np.int64)


def pooled(x: np.ndarray, windows: Windows, layouts: tuple[str, ...]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                                     np.ndarray, np.ndarray, np.ndarray]]:
    """The max of each window of x [N, C, *spatial]: per index layout ("rows", "planes", "whole"),
    (Y, Y's choices, Indices, Indices' choices, the mask of windows over padding alone, the mask of
    windows whose readings differ). Y holds the first value the NaN-propagating reading takes; its
    choices every value either reading may take (ties, NaN propagated or skipped)."""
    n, c = int(x.shape[0]), int(x.shape[1])
    spatial = tuple(int(d) for d in x.shape[2:])
    out_shape = (n, c) + windows.output
    positions, taps = math.prod(windows.output), math.prod(windows.kernel)
    values, inside = windows.gather(x, 0)
    values = values.reshape(n * c * positions, taps)
    inside = np.broadcast_to(np.asarray(inside).reshape(1, positions, taps), (n * c, positions, taps)).reshape(-1, taps)
    with np.errstate(invalid="ignore"):
        wide = values.astype(np.float64)
    nan = np.isnan(wide) & inside
    number = inside & ~nan
    top = np.where(number, wide, -np.inf).max(axis=1, initial=-np.inf)
    tied = number & (wide == top[:, None])
    has_nan, has_number = nan.any(axis=1), number.any(axis=1)
    propagating = np.where(has_nan[:, None], nan, tied)
    skipping = np.where(has_number[:, None], tied, nan)
    either = propagating | skipping
    empty = ~inside.any(axis=1)
    first = np.argmax(propagating, axis=1)
    count = np.maximum(either.sum(axis=1), 1)
    order = np.argsort(~either, axis=1, kind="stable")
    layers = int(count.max(initial=1))
    picks = np.stack([order[np.arange(order.shape[0]), np.minimum(j, count - 1)] for j in range(layers)]) if order.size else \
        np.zeros((layers, 0), dtype=np.int64)
    rows = np.arange(values.shape[0])
    y = values[rows, first] if values.size else np.zeros(0, dtype=x.dtype)
    y_choices = np.stack([values[rows, p] for p in picks]) if values.size else np.zeros((layers, 0), dtype=x.dtype)
    open_rows = (either.sum(axis=1) > 1) & ~empty
    coordinates = _coordinates(windows)
    answers = []
    for layout in layouts:
        index = _tap_indices(n, c, spatial, coordinates, layout) if taps and positions else np.zeros((n * c * positions, max(taps, 1)), dtype=np.int64)
        indices = index[rows, first] if values.size else np.zeros(0, dtype=np.int64)
        index_choices = np.stack([index[rows, p] for p in picks]) if values.size else np.zeros((layers, 0), dtype=np.int64)
        answers.append((y.reshape(out_shape), y_choices.reshape((layers,) + out_shape), indices.reshape(out_shape),
                        index_choices.reshape((layers,) + out_shape), empty.reshape(out_shape), open_rows.reshape(out_shape)))
    return answers


def _readings(x: np.ndarray, windows: Windows, layouts: tuple[tuple[str, str], ...], with_indices: bool,
              prefix: str = "") -> tuple[list[Reading], bool, bool]:
    """The readings of one placement of the windows: one per index layout (label, layout); and
    whether a window holds padding alone, and whether ties or NaN leave a choice."""
    found, pad_only, open_choice = [], False, False
    seen: list[np.ndarray] = []
    for (label, _), (y, y_choices, indices, index_choices, empty, open_rows) in zip(
            layouts, pooled(x, windows, tuple(layout for _, layout in layouts))):
        if any(np.array_equal(indices, other) for other in seen):
            continue  # the layouts agree here
        seen.append(indices)
        pad_only |= bool(empty.any())
        open_choice |= bool(open_rows.any())
        name = "; ".join(part for part in (prefix, label) if part) or "spec"
        free = empty if empty.any() else None
        y_open = y_choices if open_rows.any() else None
        if with_indices:
            i_open = index_choices if open_rows.any() else None
            found.append(Reading((y, indices), name, free=(free, free), choices=(y_open, i_open)))
        else:
            found.append(Reading((y,), name, free=(free,), choices=(y_open,)))
    return found, pad_only, open_choice


def _answer(candidates: list[Reading], pad_only: bool, open_choice: bool, extra_ambiguity: list[str]) -> Expected:
    ambiguity = [*extra_ambiguity]
    if open_choice:
        ambiguity += [TIES, NAN_OPEN]
    return Expected(readings=tuple(candidates), ambiguity="; ".join(ambiguity) if ambiguity else None,
                    may_reject=PAD_ONLY if pad_only else None)


def _x_problem(example: Example, x: np.ndarray) -> Invalid | None:
    if x.ndim < 3:
        return Invalid("x-rank", f"{example.version.label}: {X_SHAPE}")
    return None


def _labelled(found: Invalid, example: Example) -> Invalid:
    return replace(found, sentence=f"{example.version.label}: {found.sentence}")


class MaxPool1(VersionSemantics):
    """MaxPool-1: Y alone; kernel_shape, strides, pads, auto_pad (SAME: ceil(input / stride)
    windows). Later versions add what their texts add (see the subclasses)."""

    since = 1
    has_indices = False
    has_ceil = False
    ceil_sentence = False  # whether the text drops windows that start in the right padding

    def expected(self, example: Example) -> Expected:
        x = example.inputs["X"]
        problem = _x_problem(example, x)
        if problem is not None:
            return Expected(invalid=problem)
        kernel = example.attributes.get("kernel_shape")
        if kernel is None:
            return Expected(invalid=Invalid("kernel-shape", f"{example.version.label}: {KERNEL_REQUIRED}"))
        kernel = tuple(int(k) for k in np.ravel(kernel))
        ceil = self.has_ceil and int(example.attributes.get("ceil_mode", 0)) != 0
        spatial = tuple(int(d) for d in x.shape[2:])
        windows = windows_of(example, spatial, kernel, ceil_mode=ceil)
        if isinstance(windows, Invalid):
            empty = self.no_window(example, x, spatial, kernel) if windows.rule == "no-window" else None
            return empty if empty is not None else Expected(invalid=_labelled(windows, example))
        layouts: tuple[tuple[str, str], ...] = (("", "rows"),)
        ambiguity: list[str] = []
        if self.has_indices:
            order = int(example.attributes.get("storage_order", 0))
            if order not in (0, 1):
                return Expected(invalid=Invalid("storage-order", f"{example.version.label}: {STORAGE_ORDER}"))
            if order == 1:
                layouts = ((COLUMN_PLANES, "planes"), (COLUMN_WHOLE, "whole"))
        placements = [("", windows)]
        literal = self.literal_ceil(example, windows, spatial) if ceil and not self.ceil_sentence else None
        if literal is not None:
            placements = [(CEIL_DROPPED, windows), (CEIL_KEPT, literal)]
            ambiguity.append(CEIL_OPEN)
        candidates, pad_only, open_choice = [], False, False
        for prefix, placed in placements:
            found, empty, choice = _readings(x, placed, layouts, self.has_indices, prefix)
            candidates += found
            pad_only |= empty
            open_choice |= choice
        if len(candidates) > len(placements):
            ambiguity.append(COLUMN_OPEN)
        return _answer(candidates, pad_only, open_choice, ambiguity)

    def no_window(self, example: Example, x: np.ndarray, spatial: tuple[int, ...], kernel: tuple[int, ...]) -> Expected | None:
        """An empty output where the text's formula counts 0 windows on an axis (window.py's
        `empty_output_spatial`); None where the kernel never fits (invalid)."""
        counts = empty_output_spatial(example, spatial, kernel)
        if counts is None:
            return None
        shape = tuple(int(d) for d in x.shape[:2]) + counts
        outputs = (np.zeros(shape, dtype=x.dtype),) + ((np.zeros(shape, dtype=np.int64),) if self.has_indices else ())
        return Expected(readings=(Reading(outputs),), may_reject=EMPTY_OUTPUT)

    @staticmethod
    def literal_ceil(example: Example, windows: Windows, spatial: tuple[int, ...]) -> Windows | None:
        """The windows the ceil formula counts without dropping those that start past the input
        and its left padding; None where that is what `windows` holds."""
        output = tuple(-(-(n + b + e - dilated(k, d)) // s) + 1 for n, b, e, k, d, s in
                       zip(spatial, windows.pads_begin, windows.pads_end, windows.kernel, windows.dilations, windows.strides))
        if auto_pad_of(example) != "NOTSET" or output == windows.output:
            return None
        return replace(windows, output=output)


class MaxPool8(MaxPool1):
    """MaxPool-8: the optional output Indices and storage_order."""

    since = 8
    has_indices = True


class MaxPool10(MaxPool8):
    """MaxPool-10: dilations and ceil_mode (the ceil formula alone: a window starting past the
    input is a reading beside the one that drops it)."""

    since = 10
    has_ceil = True


class MaxPool11(MaxPool10):
    """MaxPool-11: the defaults of strides and dilations stated; semantics as 10."""

    since = 11


class MaxPool12(MaxPool11):
    """MaxPool-12: int8 and uint8 (padding never wins: it is no value), SAME worded as
    `output_shape[i] = ceil(input_shape[i] / strides[i])`."""

    since = 12


class MaxPool22(MaxPool12):
    """MaxPool-22: bfloat16; "Sliding windows that would start in the right padded region are
    ignored." ends ceil_mode's open reading."""

    since = 22
    ceil_sentence = True


class GlobalMaxPool1(VersionSemantics):
    """GlobalMaxPool-1 (and -22, which adds bfloat16): "equivalent to MaxPool with kernel size equal
    to the spatial dimension of input tensor"; "The first two dimensions of output shape are the
    same as the input (N x C), while the other dimensions are all 1." """

    since = 1

    def expected(self, example: Example) -> Expected:
        x = example.inputs["X"]
        problem = _x_problem(example, x)
        if problem is not None:
            return Expected(invalid=problem)
        spatial = tuple(int(d) for d in x.shape[2:])
        rank = len(spatial)
        if 0 in spatial:
            shape = tuple(int(d) for d in x.shape[:2]) + (1,) * rank
            nothing = Reading((np.zeros(shape, dtype=x.dtype),), "spec", free=(np.ones(shape, dtype=bool),))
            return Expected(readings=(nothing,), may_reject=EMPTY_PLANE)
        windows = Windows(spatial, (1,) * rank, (1,) * rank, (0,) * rank, (0,) * rank, (1,) * rank)
        found, pad_only, open_choice = _readings(x, windows, (("", "rows"),), False)
        return _answer(found, False, open_choice, [])


# --- traits: the causes a runtime may deviate by ---

def _x(example: Example) -> np.ndarray | None:
    return example.inputs.get("X")


def _windows(example: Example) -> Windows | None:
    x = _x(example)
    if x is None or x.ndim < 3:
        return None
    if example.op == "GlobalMaxPool":
        spatial = tuple(int(d) for d in x.shape[2:])
        rank = len(spatial)
        return Windows(spatial, (1,) * rank, (1,) * rank, (0,) * rank, (0,) * rank, (1,) * rank)
    kernel = example.attributes.get("kernel_shape")
    if kernel is None:
        return None
    ceil = example.version.since_version >= 10 and int(example.attributes.get("ceil_mode", 0)) != 0
    found = windows_of(example, tuple(int(d) for d in x.shape[2:]), tuple(int(k) for k in np.ravel(kernel)), ceil)
    return None if isinstance(found, Invalid) else found


def window_of_nan_or_neg_inf(example: Example) -> bool:
    """A window whose elements (padding aside) are all NaN or -inf: a max that starts from the type's
    lowest finite value and skips NaN (onnxruntime's MLAS pooling) gives that lowest value, which
    is no element of the window."""
    x, windows = _x(example), _windows(example)
    if windows is None or from_numpy(x.dtype).kind != "float" or not x.size:
        return False
    values, inside = windows.gather(x, 0)
    with np.errstate(invalid="ignore"):
        wide = values.astype(np.float64)
    low = (np.isnan(wide) | np.isneginf(wide)) | ~np.asarray(inside)
    rank = windows.spatial_rank
    taps = tuple(range(values.ndim - rank, values.ndim))
    return bool((low.all(axis=taps) & np.asarray(inside).any(axis=tuple(range(rank, 2 * rank)))).any())


def pads_not_below_kernel(example: Example) -> bool:
    """An explicit pad at least as long as the kernel on its axis (onnxruntime rejects 'Pad should
    be smaller than kernel'); the text allows any pad of at least 0."""
    kernel = example.attributes.get("kernel_shape")
    pads = example.attributes.get("pads")
    if kernel is None or pads is None:
        return False
    kernel = [int(k) for k in np.ravel(kernel)]
    pads = [int(p) for p in np.ravel(pads)]
    rank = len(kernel)
    return len(pads) == 2 * rank and any(pads[a] >= kernel[a] or pads[a + rank] >= kernel[a] for a in range(rank))


def pad_only_window(example: Example) -> bool:
    x, windows = _x(example), _windows(example)
    if windows is None:
        return False
    _, inside = windows.gather(x[:1, :1] if x.shape[0] and x.shape[1] else x, 0)
    rank = windows.spatial_rank
    inside = np.asarray(inside)
    return bool(inside.size and (~inside.any(axis=tuple(range(rank, 2 * rank)))).any()) or (x.size == 0 and x.shape[0] * x.shape[1] > 0)


def ceil_mode(example: Example) -> bool:
    return int(example.attributes.get("ceil_mode", 0)) != 0


def column_major(example: Example) -> bool:
    return int(example.attributes.get("storage_order", 0)) == 1


def indices_asked(example: Example) -> bool:
    return example.version.since_version >= 8 and (not example.outputs or len(example.outputs) > 1 and example.outputs[1])


def nan_in_data(example: Example) -> bool:
    x = _x(example)
    return x is not None and from_numpy(x.dtype).kind == "float" and bool(np.isnan(x.astype(np.float64)).any())


def dilated_kernel(example: Example) -> bool:
    return any(d > 1 for d in attribute_ints(example, "dilations"))


def same_padding(example: Example) -> bool:
    return auto_pad_of(example) in ("SAME_UPPER", "SAME_LOWER")


def same_lower(example: Example) -> bool:
    return auto_pad_of(example) == "SAME_LOWER"


def strided(example: Example) -> bool:
    return any(s > 1 for s in attribute_ints(example, "strides"))


def dilated_same_padding(example: Example) -> bool:
    """SAME_UPPER or SAME_LOWER with a dilation above 1: onnxruntime pads for the undilated kernel."""
    return same_padding(example) and dilated_kernel(example)


def same_negative_pad(example: Example) -> bool:
    """SAME_UPPER or SAME_LOWER where the text's pad_shape formula is negative (a stride longer than the
    dilated kernel): the ceil(input / stride) windows fit without padding (window.py pads 0); onnxruntime's
    MaxPool-1 and -8 reject 'padding values must be non-negative'."""
    x, kernel = _x(example), example.attributes.get("kernel_shape")
    if not same_padding(example) or x is None or kernel is None or x.ndim < 3:
        return False
    kernel = [int(k) for k in np.ravel(kernel)]
    rank = x.ndim - 2
    strides = int_list(example, "strides", rank, 1)
    dilations = int_list(example, "dilations", rank, 1)
    if len(kernel) != rank or strides is None or dilations is None:
        return False
    return any((-(-n // s) - 1) * s + dilated(k, d) - n < 0
               for n, k, s, d in zip(x.shape[2:], kernel, strides, dilations) if s > 0)


POOL_RULES = ("x-rank", "kernel-shape", "strides", "dilations", "pads", "auto-pad", "pads-with-auto-pad", "no-window",
              "storage-order")
POOL_TRAITS = {"window-of-nan-or-neg-inf": window_of_nan_or_neg_inf, "pads-not-below-kernel": pads_not_below_kernel,
               "pad-only-window": pad_only_window, "ceil-mode": ceil_mode, "column-major": column_major,
               "indices-asked": indices_asked, "nan-in-data": nan_in_data, "dilated": dilated_kernel,
               "same-padding": same_padding, "same-lower": same_lower, "spatial-rank-3": spatial_rank_3,
               "strided": strided, "dilated-same-padding": dilated_same_padding, "same-negative-pad": same_negative_pad,
               "empty-output": zero_windows}


def _pool_elements(example: Example) -> int:
    """The output's elements from the shapes: with pads, more windows than input elements."""
    x = _x(example)
    if x is None or x.ndim < 3:
        return max((v.size for v in example.inputs.values() if v is not None), default=0)
    pads = attribute_ints(example, "pads")
    rank = x.ndim - 2
    extra = [pads[a] + pads[a + rank] if len(pads) == 2 * rank else 0 for a in range(rank)]
    return int(x.shape[0] * x.shape[1] * math.prod(d + e + 1 for d, e in zip(x.shape[2:], extra)))


REFERENCES = (
    OpReference(op="MaxPool", dtype_param="T", semantics=(MaxPool1, MaxPool8, MaxPool10, MaxPool11, MaxPool12, MaxPool22),
                data_inputs=("X",), output_elements_from=_pool_elements, traits=POOL_TRAITS, rules=POOL_RULES),
    OpReference(op="GlobalMaxPool", dtype_param="T", semantics=(GlobalMaxPool1,), data_inputs=("X",),
                traits={"window-of-nan-or-neg-inf": window_of_nan_or_neg_inf, "nan-in-data": nan_in_data,
                        "pad-only-window": pad_only_window, "spatial-rank-3": spatial_rank_3},
                rules=("x-rank",)),
)
