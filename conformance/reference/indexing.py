"""Indexing: Gather, GatherElements, GatherND and Compress (data-movement family, movement.py).

Each output element is an element of `data` (Compress: `input`) that an index input names: the
map is the data's positions indexed the way the text indexes the data (numpy's take, an
element-wise take along an axis, index tuples, a boolean selection). Everything the text forbids is
checked before indexing: an index outside [-s, s-1] on an axis of size s, a negative index where the
version gives it no meaning (Gather-1), ranks and shapes the text rules out, GatherND's batch_dims.
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from .base import Invalid, OpReference
from .movement import MovementSemantics, Moved, axis_in, positions

GATHER_AXIS = "axis: Which axis to gather on. Negative value means counting dimensions from the back. Accepted range is [-r, r-1]"
GATHER_DATA_RANK = "data: Tensor of rank r >= 1."
GATHER_1_BOUNDS = ("indices: All index values are expected to be within bounds. It is an error if any of the index values "
                   "are out of bounds.")
GATHER_1_NEGATIVE = (f"{GATHER_1_BOUNDS} (Gather-1 gives a negative index no meaning: the bounds [-s, s-1], counting "
                     "from the back, come with Gather-11)")
BOUNDS = ("indices: All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if "
          "any of the index values are out of bounds.")
ELEMENTS_RANK = "indices: Tensor of int32/int64 indices, with the same rank r as the input."
ELEMENTS_EQUATIONS = ("out[i][j][k] = input[index[i][j][k]][j][k] if axis = 0, out[i][j][k] = input[i][index[i][j][k]][k] "
                      "if axis = 1: on every other axis, the output's index is the input's, so indices may be no larger "
                      "there than the input")
ND_BOUNDS = ("All values in `indices` are expected to be within bounds [-s, s-1] along axis of size `s` (i.e.) "
             "`-data_shape[i] <= indices[...,i] <= data_shape[i] - 1`. It is an error if any of the index values are out "
             "of bounds.")
ND_RANKS = "r >= 1 and q >= 1 are to be honored."
ND_TUPLE_LONG = ("The `indices_shape[-1]` should have a value between 1 (inclusive) and rank `r-b` (inclusive); "
                 "If `indices_shape[-1] > r-b` => error condition")
ND_TUPLE_EMPTY = ("The `indices_shape[-1]` should have a value between 1 (inclusive) and rank `r` (inclusive): a runtime "
                  "may reject index tuples of length 0; the only error condition the text lists is one longer than "
                  "r-b, and a tuple of length 0 selects the whole of data[0:b-1, :]")
ND_BATCH_RANGE = ("b < min(q, r) is to be honored; batch_dims: The number of batch dimensions (a count, not below 0)")
ND_BATCH_SHAPE = "The first `b` dimensions of the shape of `indices` tensor and `data` tensor must be equal."
ND_BATCH_LITERAL = ("`-data_shape[i] <= indices[...,i] <= data_shape[i] - 1`: with batch_dims, read literally, the bound "
                    "of indices[...,i] is data's dim i, not the dim b+i it indexes (the text's 'along axis of size s'); "
                    "a runtime may reject an index within the dim it indexes but outside data_shape[i]")
COMPRESS_AXIS_9 = "axis: (Optional) Axis along which to take slices. (Compress-9 gives no meaning to a negative axis)"
COMPRESS_AXIS_11 = ("axis: Negative value means counting dimensions from the back. Accepted range is [-r, r-1] where "
                    "r = rank(input).")
COMPRESS_RANK = "input: Tensor of rank r >= 1."
COMPRESS_CONDITION_1D = "condition: Rank 1 tensor of booleans to indicate which slices or data elements to be selected."
COMPRESS_LONGER = ("Compress behaves like numpy.compress; condition: Its length can be less than the input length along "
                   "the axis: numpy.compress rejects a condition that selects past the end")
COMPRESS_LONGER_FALSE = ("condition: Its length can be less than the input length along the axis or the flattened input "
                         "size: the text allows a shorter condition only; numpy.compress, which Compress behaves like, "
                         "accepts a longer one whose extra entries are false, and a runtime may reject it")


def in_bounds(values: np.ndarray, size: int) -> bool:
    """Every index within [-size, size-1] (none where the axis is empty)."""
    return not values.size or bool(((values >= -size) & (values <= size - 1)).all())


def from_back(values: np.ndarray, size: int) -> np.ndarray:
    """Indices in [-size, size-1] made non-negative: a negative one counts from the back."""
    values = values.astype(np.int64)
    return np.where(values < 0, values + size, values)


class Gather1(MovementSemantics):
    """Gather-1: entries of `data` along `axis` (negative counting from the back) picked by
    `indices`, of any rank q, into an output of rank q + (r - 1); indices within [0, s-1]."""

    since = 1
    data = ("data",)
    negative_indices = False
    bounds_sentence = GATHER_1_BOUNDS

    def moved(self, example: Example) -> Moved | Invalid:
        data, indices = example.inputs["data"], example.inputs["indices"]
        if data.ndim == 0:
            return Invalid("data-rank-zero", GATHER_DATA_RANK)
        axis = axis_in(int(example.attributes.get("axis", 0)), data.ndim, True, GATHER_AXIS)
        if isinstance(axis, Invalid):
            return axis
        size = data.shape[axis]
        if not in_bounds(indices, size):
            return Invalid("indices-out-of-range", self.bounds_sentence)
        if not self.negative_indices and (indices < 0).any():
            return Invalid("negative-index", GATHER_1_NEGATIVE)
        return Moved((np.take(positions([data.shape])[0], from_back(indices, size), axis=axis),))


class Gather11(Gather1):
    """Gather-11: indices within [-s, s-1], a negative one counting from the back."""

    since = 11
    negative_indices = True
    bounds_sentence = BOUNDS


def gather_output_elements(example: Example) -> int:
    """Gather's output size, indices' elements times data's other dims: without making it."""
    data, indices = example.inputs["data"], example.inputs["indices"]
    if data.ndim == 0:
        return 0
    axis = axis_in(int(example.attributes.get("axis", 0)), data.ndim, True, GATHER_AXIS)
    if isinstance(axis, Invalid):
        return 0
    return indices.size * math.prod(d for k, d in enumerate(data.shape) if k != axis)


class GatherElements11(MovementSemantics):
    """GatherElements: `indices` of data's rank, each naming an element along `axis`; the output
    has the indices' shape, out[i][j][k] = input[i][index[i][j][k]][k] (axis 1)."""

    since = 11
    data = ("data",)

    def moved(self, example: Example) -> Moved | Invalid:
        data, indices = example.inputs["data"], example.inputs["indices"]
        if data.ndim == 0:
            return Invalid("data-rank-zero", GATHER_DATA_RANK)
        if indices.ndim != data.ndim:
            return Invalid("rank-mismatch", ELEMENTS_RANK)
        axis = axis_in(int(example.attributes.get("axis", 0)), data.ndim, True, GATHER_AXIS)
        if isinstance(axis, Invalid):
            return axis
        if any(i > d for k, (i, d) in enumerate(zip(indices.shape, data.shape)) if k != axis):
            return Invalid("indices-shape-exceeds-data", ELEMENTS_EQUATIONS)
        size = data.shape[axis]
        if not in_bounds(indices, size):
            return Invalid("indices-out-of-range", BOUNDS)
        where = list(np.indices(indices.shape, sparse=True))
        where[axis] = from_back(indices, size)
        return Moved((positions([data.shape])[0][tuple(where)].reshape(indices.shape),))


class GatherND11(MovementSemantics):
    """GatherND-11: `indices` of rank q >= 1 as a (q-1)-dimensional tensor of index tuples into
    `data`, each naming an element (a tuple of length r) or a slice (a shorter one)."""

    since = 11
    data = ("data",)

    def batch_dims(self, example: Example) -> int:
        return 0

    def moved(self, example: Example) -> Moved | Invalid:
        data, indices = example.inputs["data"], example.inputs["indices"]
        if data.ndim == 0 or indices.ndim == 0:
            return Invalid("data-rank-zero" if data.ndim == 0 else "indices-rank-zero", ND_RANKS)
        b = self.batch_dims(example)
        if not 0 <= b < min(indices.ndim, data.ndim):
            return Invalid("batch-dims-out-of-range", ND_BATCH_RANGE)
        if indices.shape[:b] != data.shape[:b]:
            return Invalid("batch-dims-mismatch", ND_BATCH_SHAPE)
        length = indices.shape[-1]
        if length > data.ndim - b:
            return Invalid("index-tuple-too-long", ND_TUPLE_LONG)
        sizes = data.shape[b:b + length]
        if not all(in_bounds(indices[..., i], s) for i, s in enumerate(sizes)):
            return Invalid("indices-out-of-range", ND_BOUNDS)
        may_reject = ND_TUPLE_EMPTY if length == 0 else None
        if b and not all(in_bounds(indices[..., i], data.shape[i]) for i in range(length)):
            may_reject = ND_BATCH_LITERAL
        return Moved((tuples_taken(positions([data.shape])[0], indices, b),), may_reject=may_reject)


class GatherND12(GatherND11):
    """GatherND-12: `batch_dims` b: the first b dims of data and indices are batches, the same in
    both, and each batch's tuples index its own data[batch]."""

    since = 12

    def batch_dims(self, example: Example) -> int:
        return int(example.attributes.get("batch_dims", 0))


def tuples_taken(whole: np.ndarray, indices: np.ndarray, b: int) -> np.ndarray:
    """`whole` (data's positions) at each index tuple of `indices` (the last dim), batch by batch
    over the first b dims: shape indices.shape[:-1] + data.shape[b + length:]."""
    length = indices.shape[-1]
    batches = math.prod(whole.shape[:b])
    tuples = math.prod(indices.shape[b:-1])
    rest = whole.shape[b + length:]
    batched = whole.reshape(batches, *whole.shape[b:])
    listed = indices.reshape(batches, tuples, length)
    where = [np.arange(batches).reshape(batches, 1)]
    where += [from_back(listed[:, :, i], whole.shape[b + i]) for i in range(length)]
    taken = batched[tuple(where)]  # (batches, tuples, *rest); a tuple of length 0 takes the whole batch
    taken = np.broadcast_to(taken, (batches, tuples, *rest)) if length == 0 else taken
    return taken.reshape((*indices.shape[:-1], *rest))


def gather_nd_elements(example: Example) -> int:
    """GatherND's output size, the tuples' count times the dims they leave: without making it."""
    data, indices = example.inputs["data"], example.inputs["indices"]
    if data.ndim == 0 or indices.ndim == 0:
        return 0
    b = max(0, int(example.attributes.get("batch_dims", 0)))
    return math.prod(indices.shape[:-1]) * math.prod(data.shape[b + indices.shape[-1]:])


class Compress9(MovementSemantics):
    """Compress-9: the slices along `axis` (or, without it, the flattened input's elements) where
    `condition` is true, as numpy.compress: a shorter condition drops the rest."""

    since = 9
    negative_axes = False
    axis_sentence = COMPRESS_AXIS_9

    def moved(self, example: Example) -> Moved | Invalid:
        data, condition = example.inputs["input"], example.inputs["condition"]
        if data.ndim == 0:
            return Invalid("data-rank-zero", COMPRESS_RANK)
        if condition.ndim != 1:
            return Invalid("condition-not-1d", COMPRESS_CONDITION_1D)
        whole = positions([data.shape])[0]
        axis = example.attributes.get("axis")
        if axis is None:
            whole, axis = whole.reshape(-1), 0
        else:
            axis = axis_in(int(axis), data.ndim, self.negative_axes, self.axis_sentence)
            if isinstance(axis, Invalid):
                return axis
        size = whole.shape[axis]
        if condition[size:].any():
            return Invalid("condition-longer", COMPRESS_LONGER)
        may_reject = COMPRESS_LONGER_FALSE if condition.size > size else None
        return Moved((np.compress(condition[:size], whole, axis=axis),), may_reject=may_reject)


class Compress11(Compress9):
    """Compress-11: a negative axis counts from the back."""

    since = 11
    negative_axes = True
    axis_sentence = COMPRESS_AXIS_11


def any_negative_index(example: Example) -> bool:
    """An index below 0: counted from the back (Gather-11+, GatherElements, GatherND)."""
    indices = example.inputs.get("indices")
    return indices is not None and bool((indices < 0).any())


def indices_int32(example: Example) -> bool:
    """Indices of int32 (Tind), beside the int64 most runtimes index with."""
    indices = example.inputs.get("indices")
    return indices is not None and indices.dtype == np.int32


def empty_indices(example: Example) -> bool:
    """Indices with no elements (a dim of 0): an output with none."""
    indices = example.inputs.get("indices")
    return indices is not None and indices.size == 0


def scalar_indices(example: Example) -> bool:
    """Indices of rank 0: the gathered axis leaves the output."""
    indices = example.inputs.get("indices")
    return indices is not None and indices.ndim == 0


def negative_axis(example: Example) -> bool:
    """`axis` written negative: counted from the back."""
    axis = example.attributes.get("axis")
    return axis is not None and int(axis) < 0


def string_slices(example: Example) -> bool:
    """Gather on strings where each gathered entry is a slice of more than one element (the dims
    after `axis`), not a single string."""
    data = example.inputs.get("data")
    if data is None or data.dtype.kind not in "OUS" or not data.ndim:
        return False
    axis = int(example.attributes.get("axis", 0))
    axis = axis + data.ndim if axis < 0 else axis
    return 0 <= axis < data.ndim and math.prod(data.shape[axis + 1:]) > 1


def empty_data_axis(example: Example) -> bool:
    """Data with no elements: only empty indices can be in range."""
    data = example.inputs.get("data")
    return data is not None and data.size == 0


def indices_smaller_than_data(example: Example) -> bool:
    """GatherElements' indices smaller than data on an axis other than `axis` (numpy's
    take_along_axis wants them equal or 1 there; the text's equations do not)."""
    data, indices = example.inputs.get("data"), example.inputs.get("indices")
    if data is None or indices is None or data.ndim != indices.ndim or not data.ndim:
        return False
    axis = int(example.attributes.get("axis", 0))
    axis = axis + data.ndim if axis < 0 else axis
    return any(i < d for k, (i, d) in enumerate(zip(indices.shape, data.shape)) if k != axis)


def batch_dims(example: Example) -> bool:
    """GatherND with batch_dims above 0."""
    return int(example.attributes.get("batch_dims", 0)) != 0


def empty_batch(example: Example) -> bool:
    """GatherND with batch_dims above 0 over batch dims holding no batch (a batch dim of 0)."""
    indices = example.inputs.get("indices")
    b = int(example.attributes.get("batch_dims", 0))
    return indices is not None and 0 < b <= indices.ndim and math.prod(indices.shape[:b]) == 0


def index_tuple_empty(example: Example) -> bool:
    """GatherND's index tuples of length 0 (indices of shape [..., 0]): each the whole data."""
    indices = example.inputs.get("indices")
    return indices is not None and indices.ndim >= 1 and indices.shape[-1] == 0


def index_tuple_full(example: Example) -> bool:
    """GatherND's index tuples as long as data's rank less batch_dims: each names one element."""
    data, indices = example.inputs.get("data"), example.inputs.get("indices")
    if data is None or indices is None or not indices.ndim:
        return False
    return indices.shape[-1] == data.ndim - int(example.attributes.get("batch_dims", 0))


def _compress_length(example: Example) -> int | None:
    """The length the condition is compared with: the input's dim at `axis`, or its size."""
    data = example.inputs.get("input")
    if data is None or not data.ndim:
        return None
    axis = example.attributes.get("axis")
    if axis is None:
        return data.size
    axis = int(axis) + data.ndim if int(axis) < 0 else int(axis)
    return data.shape[axis] if 0 <= axis < data.ndim else None


def condition_shorter(example: Example) -> bool:
    """Compress's condition shorter than the input along the axis: the rest is dropped."""
    length, condition = _compress_length(example), example.inputs.get("condition")
    return length is not None and condition is not None and condition.size < length


def condition_longer(example: Example) -> bool:
    """Compress's condition longer than the input along the axis (false past the end, or not)."""
    length, condition = _compress_length(example), example.inputs.get("condition")
    return length is not None and condition is not None and condition.size > length


def no_axis(example: Example) -> bool:
    """Compress without `axis`: the input flattened."""
    return example.attributes.get("axis") is None


def nothing_selected(example: Example) -> bool:
    """Compress's condition true nowhere: an output with a dim of 0."""
    condition = example.inputs.get("condition")
    return condition is not None and not condition.any()


INDICES_TRAITS = {"negative-indices": any_negative_index, "indices-int32": indices_int32, "empty-indices": empty_indices}

REFERENCES = (
    OpReference(op="Gather", dtype_param="T", semantics=(Gather1, Gather11), data_inputs=("data",),
                output_elements_from=gather_output_elements,
                traits={**INDICES_TRAITS, "scalar-indices": scalar_indices, "negative-axis": negative_axis,
                        "empty-data": empty_data_axis, "string-slices": string_slices},
                rules=("data-rank-zero", "axis-out-of-range", "indices-out-of-range", "negative-index")),
    OpReference(op="GatherElements", dtype_param="T", semantics=(GatherElements11,), data_inputs=("data",),
                traits={**INDICES_TRAITS, "negative-axis": negative_axis, "indices-smaller-than-data": indices_smaller_than_data,
                        "empty-data": empty_data_axis},
                rules=("data-rank-zero", "rank-mismatch", "axis-out-of-range", "indices-shape-exceeds-data",
                       "indices-out-of-range")),
    OpReference(op="GatherND", dtype_param="T", semantics=(GatherND11, GatherND12), data_inputs=("data",),
                output_elements_from=gather_nd_elements,
                traits={**INDICES_TRAITS, "batch-dims": batch_dims, "empty-batch": empty_batch,
                        "index-tuple-empty": index_tuple_empty,
                        "index-tuple-full": index_tuple_full, "empty-data": empty_data_axis},
                rules=("data-rank-zero", "indices-rank-zero", "batch-dims-out-of-range", "batch-dims-mismatch",
                       "index-tuple-too-long", "indices-out-of-range")),
    OpReference(op="Compress", dtype_param="T", semantics=(Compress9, Compress11), data_inputs=("input",),
                traits={"condition-shorter": condition_shorter, "condition-longer": condition_longer, "no-axis": no_axis,
                        "nothing-selected": nothing_selected, "negative-axis": negative_axis},
                rules=("data-rank-zero", "condition-not-1d", "negative-axis", "axis-out-of-range", "condition-longer")),
)
