"""Joining and splitting: Concat and Split (data-movement family, movement.py).

Concat lays its inputs end to end along an axis; Split cuts its input along one into the node's
outputs, as many as it has (a variadic output: `Example.outputs` says how many). The map of a
Concat is the inputs' positions concatenated; a Split's outputs are slices of its input's.
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from .base import Invalid, OpReference
from .movement import MovementSemantics, Moved, axis_in, data_arrays, ints, positions

CONCAT_AXIS_1 = "axis: Which axis to concat on. Default value is 1. (Concat-1 and -4 give no meaning to a negative axis)"
CONCAT_AXIS_11 = "axis: A negative value means counting dimensions from the back. Accepted range is [-r, r-1] where r = rank(inputs)."
CONCAT_SAME_SHAPE = ("All input tensors must have the same shape, except for the dimension size of the axis to "
                     "concatenate on.")
SPLIT_AXIS_1 = "axis: Which axis to split on (Split-1 and -2 give no meaning to a negative axis)"
SPLIT_AXIS_11 = "axis: A negative value means counting dimensions from the back. Accepted range is [-rank, rank-1]."
SPLIT_SUM = "split: Values should be >= 0. Sum of the values must be equal to the dim value at 'axis' specified."
SPLIT_COUNT = "split: Optional length of each output: one length for each of the node's outputs"
SPLIT_EQUAL = "Otherwise, the tensor is split to equal sized parts: the dim at 'axis' must divide into the node's outputs"
SPLIT_EITHER = "Either input 'split' or the attribute 'num_outputs' should be specified, but not both."
SPLIT_NUM_OUTPUTS = "num_outputs: Number of outputs to split parts of the tensor into: the node's outputs"
SPLIT_LAST_SMALLER = ("If the tensor is not evenly splittable into `num_outputs`, the last chunk will be smaller: with "
                      "chunks of ceil(dim / num_outputs), fewer than num_outputs of them hold the dim, and no last "
                      "chunk is smaller")
SPLIT_NEITHER = ("Either input 'split' or the attribute 'num_outputs' should be specified (Split-18): with neither, "
                 "splitting into equal parts as the earlier versions do is the reading, and a rejection is allowed")
SPLIT_INTEGRAL = "split: length of each output (Split-1's input of type T: whole numbers)"


class Concat1(MovementSemantics):
    """Concat-1: the inputs end to end along `axis` (default 1), every other dim equal."""

    since = 1
    data = ("inputs",)
    negative_axes = False
    axis_sentence = CONCAT_AXIS_1
    default_axis: int | None = 1

    def moved(self, example: Example) -> Moved | Invalid:
        arrays = data_arrays(example, self.data)
        rank = arrays[0].ndim
        axis = axis_in(int(example.attributes.get("axis", self.default_axis)), rank, self.negative_axes, self.axis_sentence)
        if isinstance(axis, Invalid):
            return axis
        for array in arrays[1:]:
            if array.ndim != rank or any(a != b for k, (a, b) in enumerate(zip(array.shape, arrays[0].shape)) if k != axis):
                return Invalid("shape-mismatch", CONCAT_SAME_SHAPE)
        return Moved((np.concatenate(positions([a.shape for a in arrays]), axis=axis),))


class Concat4(Concat1):
    """Concat-4: `axis` is required."""

    since = 4
    default_axis = None


class Concat11(Concat4):
    """Concat-11: a negative axis counts from the back (range [-r, r-1])."""

    since = 11
    negative_axes = True
    axis_sentence = CONCAT_AXIS_11


class Split1(MovementSemantics):
    """Split-1: `input` cut along `axis` into the node's outputs: lengths from the `split` input
    (of type T) or attribute, else equal parts."""

    since = 1
    negative_axes = False
    axis_sentence = SPLIT_AXIS_1

    def lengths(self, example: Example, dim: int, count: int) -> list[int] | Invalid | Moved | None:
        """The parts' lengths as the case gives them (None: equal parts), or why the text forbids them."""
        given = example.inputs.get("split")
        if given is not None:
            if not np.all(np.isfinite(given.astype(np.float64))) or np.any(given.astype(np.float64) % 1):
                return Invalid("split-not-integral", SPLIT_INTEGRAL)
            return [int(v) for v in given.astype(np.float64).reshape(-1)]
        return ints(example.attributes.get("split"))

    def moved(self, example: Example) -> Moved | Invalid:
        data = example.inputs["input"]
        count = len(example.output_positions)
        axis = axis_in(int(example.attributes.get("axis", 0)), data.ndim, self.negative_axes, self.axis_sentence)
        if isinstance(axis, Invalid):
            return axis
        dim = data.shape[axis]
        lengths = self.lengths(example, dim, count)
        if isinstance(lengths, Invalid):
            return lengths
        may_reject = None
        if isinstance(lengths, Moved):  # a reading with a reason to reject beside it
            may_reject, lengths = lengths.may_reject, None
        if lengths is None:
            if dim % count:
                return Invalid("uneven-split", SPLIT_EQUAL)
            lengths = [dim // count] * count
        if len(lengths) != count:
            return Invalid("split-count-mismatch", SPLIT_COUNT)
        if any(n < 0 for n in lengths) or sum(lengths) != dim:
            return Invalid("split-sum-mismatch", SPLIT_SUM)
        whole = positions([data.shape])[0]
        cuts = np.cumsum([0, *lengths])
        parts = tuple(np.take(whole, np.arange(cuts[k], cuts[k + 1]), axis=axis) for k in range(count))
        return Moved(parts, may_reject=may_reject)


class Split2(Split1):
    """Split-2: `split` is an attribute only."""

    since = 2

    def lengths(self, example: Example, dim: int, count: int) -> list[int] | Invalid | Moved | None:
        return ints(example.attributes.get("split"))


class Split11(Split2):
    """Split-11: a negative axis counts from the back."""

    since = 11
    negative_axes = True
    axis_sentence = SPLIT_AXIS_11


class Split13(Split11):
    """Split-13: `split` is an optional int64 input."""

    since = 13

    def lengths(self, example: Example, dim: int, count: int) -> list[int] | Invalid | Moved | None:
        given = example.inputs.get("split")
        return None if given is None else [int(v) for v in given.reshape(-1)]


class Split18(Split13):
    """Split-18: `split` or `num_outputs`, not both; num_outputs parts of ceil(dim / n), the last smaller."""

    since = 18

    def lengths(self, example: Example, dim: int, count: int) -> list[int] | Invalid | Moved | None:
        split = super().lengths(example, dim, count)
        parts = example.attributes.get("num_outputs")
        if split is not None and parts is not None:
            return Invalid("split-and-num-outputs", SPLIT_EITHER)
        if split is not None:
            return split
        if parts is None:
            return Moved((), may_reject=SPLIT_NEITHER)
        if parts != count:
            return Invalid("num-outputs-mismatch", SPLIT_NUM_OUTPUTS)
        chunk = math.ceil(dim / parts) if parts > 0 else 0
        last = dim - chunk * (parts - 1)
        if parts < 1 or last < 0:
            return Invalid("num-outputs-too-many", SPLIT_LAST_SMALLER)
        return [chunk] * (parts - 1) + [last]


def empty_input_differs(example: Example) -> bool:
    """Concat's inputs agree but for ones with no elements, whose other dims (or rank) differ."""
    arrays = data_arrays(example, ("inputs",))
    full = [a for a in arrays if a.size]
    empty = [a for a in arrays if not a.size]
    axis = int(example.attributes.get("axis", 1))  # required from Concat-4; 1 by default in Concat-1
    reference = (full or arrays)[0]
    axis = axis + reference.ndim if axis < 0 else axis

    def others(a: np.ndarray) -> tuple:
        return a.ndim, tuple(d for k, d in enumerate(a.shape) if k != axis)

    return bool(empty) and len({others(a) for a in full}) <= 1 and any(others(a) != others(reference) for a in empty)


def axis_omitted(example: Example) -> bool:
    """Concat-1 without `axis`: its default, 1."""
    return example.attributes.get("axis") is None


def split_input(example: Example) -> bool:
    """Split's lengths given as the node's `split` input (Split-1, and Split-13 on)."""
    return example.inputs.get("split") is not None


def split_uneven(example: Example) -> bool:
    """Split-18's num_outputs on a dim it does not divide: the last chunk smaller."""
    parts = example.attributes.get("num_outputs")
    data = example.inputs.get("input")
    if not parts or data is None or not data.ndim:
        return False
    axis = int(example.attributes.get("axis", 0))
    axis = axis + data.ndim if axis < 0 else axis
    return 0 <= axis < data.ndim and data.shape[axis] % parts != 0


def split_empty_part(example: Example) -> bool:
    """Split-18's num_outputs with a part of length 0: the last chunk, or every part of an empty dim."""
    parts = example.attributes.get("num_outputs")
    data = example.inputs.get("input")
    if not parts or parts < 1 or data is None or not data.ndim:
        return False
    axis = int(example.attributes.get("axis", 0))
    axis = axis + data.ndim if axis < 0 else axis
    if not 0 <= axis < data.ndim:
        return False
    dim = data.shape[axis]
    return dim - math.ceil(dim / parts) * (parts - 1) == 0


REFERENCES = (
    OpReference(op="Concat", dtype_param="T", semantics=(Concat1, Concat4, Concat11), data_inputs=("inputs",),
                traits={"empty-input-differs": empty_input_differs, "axis-omitted": axis_omitted},
                rules=("axis-out-of-range", "negative-axis", "shape-mismatch")),
    OpReference(op="Split", dtype_param="T", semantics=(Split1, Split2, Split11, Split13, Split18), data_inputs=("input",),
                traits={"split-uneven": split_uneven, "num-outputs-empty-part": split_empty_part,
                        "split-input": split_input},
                rules=("axis-out-of-range", "negative-axis", "split-not-integral", "uneven-split", "split-count-mismatch",
                       "split-sum-mismatch", "split-and-num-outputs", "num-outputs-mismatch", "num-outputs-too-many")),
)
