"""MaxUnpool (9, 11, 22): X's values written at the flat positions I names in an output of zeros.
Exact: a scatter, judged bitwise.

The texts' sentences:
- "'Partial' because all the non-maximal values from the original input to MaxPool are set to zero
  in the output of the MaxUnpool op.": every element no index names is 0.
- I: "Dimensions must be the same as input tensor X. The indices are linear, i.e. computed
  considering the tensor as flattened 1-D tensor, assuming row-major storage. Also, the linear
  indices should not consider padding. So the values in indices are in the range [0, N x C x D1 x
  ... x Dn)." The flat index is into the whole output (not one (n, c) plane), row major; an index
  outside [0, N x C x D1 x ... x Dn) of the output is invalid.
- The output's size without output_shape: the text says "The attributes typically have the same
  values as the corresponding pooling op that the unpooling op is trying to invert" and "MaxUnpool
  can produce the same output size for several input sizes ... The third input argument,
  output_size, is meant to disambiguate". The size MaxPool's formula inverts to, the smallest
  ("(input_spatial_shape[i] - 1) * strides[i] - pads[i, begin] - pads[i, end] + kernel_shape[i]",
  onnx's shape inference), is the one reading: the larger ones by up to stride − 1 are what
  output_shape is there to ask for.
- output_shape: "The shape of the output can be explicitly set which will cause pads values to be
  auto generated. If 'output_shape' is specified, 'pads' values are ignored." The shape of the
  output, so one dim per axis of X; MaxPool keeps N and C, so the unpooled tensor has X's; a
  spatial size below the default is what a larger auto-generated padding gives: valid.
- Two values written to one place (duplicate indices): the text does not say which stays; any of
  them (`Reading.choices`), the last in X's row-major order written.
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics
from .window import KERNEL_SENTENCE, PADS_SENTENCE, STRIDES_SENTENCE, int_list

X_SHAPE = ("X: Dimensions for image case are (N x C x H x W) ... For non-image case, the dimensions are in the form of "
           "(N x C x D1 x D2 ... Dn) (N, C and at least one spatial axis)")
I_SHAPE = "I: Dimensions must be the same as input tensor X."
I_RANGE = ("I: The indices are linear, i.e. computed considering the tensor as flattened 1-D tensor, assuming row-major "
           "storage ... So the values in indices are in the range [0, N x C x D1 x ... x Dn).")
OUTPUT_SHAPE = ("output_shape: The shape of the output can be explicitly set which will cause pads values to be auto "
                "generated (one non-negative dim per axis of X)")
OUTPUT_BATCH = ("MaxUnpool essentially computes the partial inverse of the MaxPool op: MaxPool keeps N and C, so "
                "output_shape's first two dims are X's")
DEFAULT_SIZE = ("the default output size (input_spatial_shape[i] - 1) * strides[i] - pads[i, begin] - pads[i, end] + "
                "kernel_shape[i] (the size MaxPool's formula inverts to) is below 0")
WHOLE_OUTPUT = "I's flat indices into the output of output_shape (the tensor MaxPool read)"
AT_THE_START = ("I's flat indices into the output of the default size, placed at the start of each axis of output_shape "
                "(onnx.reference, ONNX's node test test_maxunpool_export_with_output_shape)")
OUTPUT_SHAPE_OPEN = ("output_shape 'will cause pads values to be auto generated': I indexes the output of output_shape "
                     "as flattened, or the output of the default size, padded at the end to output_shape")
DUPLICATES = "two values written to one place (duplicate indices): the text does not say which stays"


def default_spatial(spatial: tuple[int, ...], kernel: tuple[int, ...], strides: tuple[int, ...],
                    pads: tuple[int, ...]) -> tuple[int, ...]:
    """The output's spatial shape without output_shape."""
    rank = len(spatial)
    return tuple((d - 1) * s - pads[a] - pads[a + rank] + k for a, (d, k, s) in enumerate(zip(spatial, kernel, strides)))


class MaxUnpool9(VersionSemantics):
    """MaxUnpool-9 (-11 states strides' default; -22 adds bfloat16): the scatter of X at I."""

    since = 9

    def expected(self, example: Example) -> Expected:
        x, indices, shape = example.inputs["X"], example.inputs["I"], example.inputs.get("output_shape")
        found = self.output_shape(example, x, indices, shape)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        flat = indices.reshape(-1).astype(np.int64)
        default = self.default_shape(example, x)
        placements = [(found, found, WHOLE_OUTPUT)]
        if shape is not None and default != found and all(d <= f for d, f in zip(default, found)):
            placements.append((default, found, AT_THE_START))
        candidates = []
        for scattered, output, label in placements:
            total = math.prod(scattered)
            if flat.size and (flat.min() < 0 or flat.max() >= total):
                continue
            candidates.append(_scattered(x, flat, scattered, output, label if len(placements) > 1 else ""))
        if not candidates:
            total = math.prod(found)
            return Expected(invalid=Invalid("indices-range", f"{example.version.label}: {I_RANGE} (the output has {total} elements)"))
        ambiguity = [OUTPUT_SHAPE_OPEN] if len(placements) > 1 else []
        if any(reading.choices and reading.choices[0] is not None for reading in candidates):
            ambiguity.append(DUPLICATES)
        return Expected(readings=tuple(candidates), ambiguity="; ".join(ambiguity) or None)

    @staticmethod
    def default_shape(example: Example, x: np.ndarray) -> tuple[int, ...]:
        rank = x.ndim - 2
        kernel = tuple(int(k) for k in np.ravel(example.attributes["kernel_shape"]))
        strides = int_list(example, "strides", rank, 1)
        pads = int_list(example, "pads", 2 * rank, 0)
        return tuple(int(d) for d in x.shape[:2]) + default_spatial(tuple(int(d) for d in x.shape[2:]), kernel, strides, pads)

    def output_shape(self, example: Example, x: np.ndarray, indices: np.ndarray,
                     shape: np.ndarray | None) -> tuple[int, ...] | Invalid:
        label = example.version.label
        if x.ndim < 3:
            return Invalid("x-rank", f"{label}: {X_SHAPE}")
        if indices.shape != x.shape:
            return Invalid("indices-shape", f"{label}: {I_SHAPE}")
        rank = x.ndim - 2
        kernel = example.attributes.get("kernel_shape")
        kernel = None if kernel is None else tuple(int(k) for k in np.ravel(kernel))
        if kernel is None or len(kernel) != rank or min(kernel) < 1:
            return Invalid("kernel-shape", f"{label}: {KERNEL_SENTENCE} (required: one size of at least 1 per spatial axis: {rank})")
        strides = int_list(example, "strides", rank, 1)
        if strides is None or min(strides) < 1:
            return Invalid("strides", f"{label}: {STRIDES_SENTENCE} (one stride of at least 1 per spatial axis: {rank})")
        pads = int_list(example, "pads", 2 * rank, 0)
        if pads is None or min(pads) < 0:
            return Invalid("pads", f"{label}: {PADS_SENTENCE} (two pads of at least 0 per spatial axis: {2 * rank})")
        if shape is not None:
            dims = tuple(int(d) for d in np.ravel(shape))
            if shape.ndim != 1 or len(dims) != x.ndim or min(dims) < 0:
                return Invalid("output-shape", f"{label}: {OUTPUT_SHAPE}")
            if dims[:2] != tuple(x.shape[:2]):
                return Invalid("output-shape-batch-channels", f"{label}: {OUTPUT_BATCH}")
            return dims
        spatial = default_spatial(tuple(int(d) for d in x.shape[2:]), kernel, strides, pads)
        if min(spatial) < 0:
            return Invalid("output-size", f"{label}: {DEFAULT_SIZE}")
        return tuple(int(d) for d in x.shape[:2]) + spatial


def _scattered(x: np.ndarray, flat: np.ndarray, scattered: tuple[int, ...], output: tuple[int, ...], label: str) -> Reading:
    """X's values at the flat positions `flat` of a tensor of shape `scattered`, zeros elsewhere,
    placed at the start of each axis of an output of shape `output`; the last of duplicates
    written, any of them allowed."""
    total = math.prod(scattered)
    values = x.reshape(-1)
    out = np.zeros(total, dtype=x.dtype)
    out[flat] = values  # numpy writes in order: the last of duplicates stays
    places, counts = np.unique(flat, return_counts=True)
    shared = places[counts > 1]
    layers = int(counts.max(initial=1))
    choices = None
    if shared.size:
        choices = np.broadcast_to(out, (layers, total)).copy()
        for place in shared:
            written = values[flat == place]
            for j in range(layers):
                choices[j, place] = written[min(j, written.size - 1)]
    placed = np.zeros(output, dtype=x.dtype)
    corner = tuple(slice(0, d) for d in scattered)
    placed[corner] = out.reshape(scattered)
    if choices is not None:
        wide = np.zeros((layers,) + output, dtype=x.dtype)
        wide[(slice(None),) + corner] = choices.reshape((layers,) + scattered)
        choices = wide
    name = "; ".join(part for part in (label, "the last value written stays; any of them allowed" if shared.size else "")
                     if part) or "spec"
    return Reading((placed,), name, choices=(choices,))


# --- traits ---

def duplicate_indices(example: Example) -> bool:
    indices = example.inputs.get("I")
    return indices is not None and indices.size > np.unique(indices).size


def output_shape_given(example: Example) -> bool:
    return example.inputs.get("output_shape") is not None


def output_shape_below_default(example: Example) -> bool:
    """An output_shape with a spatial size below the default (onnxruntime rejects 'output_shape is
    smaller than minimum required'): the text auto-generates the pads that give it."""
    x, shape = example.inputs.get("X"), example.inputs.get("output_shape")
    if x is None or shape is None or x.ndim < 3 or shape.size != x.ndim:
        return False
    rank = x.ndim - 2
    kernel = example.attributes.get("kernel_shape")
    strides = int_list(example, "strides", rank, 1)
    pads = int_list(example, "pads", 2 * rank, 0)
    if kernel is None or strides is None or pads is None or len(np.ravel(kernel)) != rank:
        return False
    default = default_spatial(tuple(int(d) for d in x.shape[2:]), tuple(int(k) for k in np.ravel(kernel)), strides,
                              (0,) * (2 * rank))  # pads are ignored beside output_shape
    return any(int(d) < m for d, m in zip(np.ravel(shape)[2:], default))


def cross_plane_indices(example: Example) -> bool:
    """An index that leaves its value's (n, c) plane: where a runtime that indexes each plane on its
    own parts from the text's flat index into the whole output."""
    x, indices = example.inputs.get("X"), example.inputs.get("I")
    if x is None or indices is None or x.ndim < 3 or indices.shape != x.shape or not x.size:
        return False
    found = MaxUnpool9().output_shape(example, x, indices, example.inputs.get("output_shape"))
    if isinstance(found, Invalid):
        return False
    plane = math.prod(found[2:])
    owner = np.arange(x.size).reshape(x.shape[0] * x.shape[1], -1) // max(math.prod(x.shape[2:]), 1)
    return bool(np.any(indices.reshape(owner.shape) // max(plane, 1) != np.arange(owner.shape[0])[:, None]))


def _elements(example: Example) -> int:
    x, shape = example.inputs.get("X"), example.inputs.get("output_shape")
    largest = max((v.size for v in example.inputs.values() if v is not None), default=0)
    if shape is not None:
        dims = [max(int(d), 0) for d in np.ravel(shape)]
        return max(largest, math.prod(dims) if len(dims) < 8 else largest)
    if x is None or x.ndim < 3:
        return largest
    rank = x.ndim - 2
    kernel = [int(k) for k in np.ravel(example.attributes.get("kernel_shape", [1] * rank))]
    strides = int_list(example, "strides", rank, 1) or (1,) * rank
    if len(kernel) != rank:
        return largest
    return max(largest, int(x.shape[0] * x.shape[1] * math.prod(max(d * abs(s) + k, 1) for d, s, k in
                                                                  zip(x.shape[2:], strides, kernel))))


REFERENCE = OpReference(
    op="MaxUnpool", dtype_param="T1", semantics=(MaxUnpool9,), data_inputs=("X", "I"), shape_inputs=("output_shape",),
    output_elements_from=_elements,
    traits={"duplicate-indices": duplicate_indices, "output-shape-given": output_shape_given,
            "output-shape-below-default": output_shape_below_default, "cross-plane-indices": cross_plane_indices},
    rules=("x-rank", "indices-shape", "kernel-shape", "strides", "pads", "output-shape", "output-shape-batch-channels",
           "output-size", "indices-range"),
)
