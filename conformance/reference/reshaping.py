"""Reshaping: Identity, Reshape, Flatten, Squeeze, Unsqueeze (data-movement family, movement.py).

Each keeps its input's elements in their order and gives them another shape: the index map is the
positions reshaped. The versions differ in where the new shape comes from (an attribute before
Reshape-5, Squeeze-13 and Unsqueeze-13, an input after), in whether negative axes count from the
back (11+) and in Reshape's `allowzero` (14+).
"""

from __future__ import annotations

import math

from ..case import Example
from .base import Invalid, OpReference
from .movement import MovementSemantics, Moved, axes_in, axis_in, ints, one_d, positions

RESHAPE_ONE_MINUS_ONE = "At most one dimension of the new shape can be -1."
RESHAPE_SAME_COUNT = "The input tensor's shape and the output tensor's shape are required to have the same number of elements."
RESHAPE_ALLOWZERO = ("If the attribute 'allowzero' is set, it is invalid for the specified shape to contain both a zero "
                     "value and -1, as the value of the dimension corresponding to -1 cannot be determined uniquely.")
RESHAPE_ZERO_COPIES = ("A dimension could also be 0, in which case the actual dimension value is unchanged (i.e. taken "
                       "from the input tensor): a 0 at an index the input has no dimension for takes nothing")
RESHAPE_BELOW_MINUS_ONE = "shape: a dimension is a size, 0 (copy) or -1 (inferred); the text gives no meaning to one below -1"
RESHAPE_INFERRED_UNDETERMINED = ("At most one dimension of the new shape can be -1. In this case, the value is inferred from "
                                 "the size of the tensor and the remaining dimensions: with a remaining dimension of 0, "
                                 "no value is inferred")
SHAPE_1D = "shape: Specified shape for output (a 1-D tensor of int64)"
FLATTEN_AXIS_1 = "axis: The value for axis must be in the range [0, R], where R is the rank of the input tensor."
FLATTEN_AXIS_11 = "axis: The value for axis must be in the range [-r, r], where r is the rank of the input tensor."
SQUEEZE_NOT_ONE = "If an axis is selected with shape entry not equal to one, an error is raised."
SQUEEZE_AXES_1 = "axes: List of non-negative integers, indicate the dimensions to squeeze."
SQUEEZE_AXES_11 = "axes: Negative value means counting dimensions from the back. Accepted range is [-r, r-1] where r = rank(data)."
SQUEEZE_REPEATED = ("axes: the text does not say what an axis listed twice means; squeezing it once is the one reading "
                    "that gives a shape, and a rejection is allowed")
SQUEEZE_EMPTY_AXES = ("axes: an empty axes input is provided, so 'If axes is not provided, all the single dimensions will "
                      "be removed' does not apply in so many words; squeezing nothing and squeezing every single "
                      "dimension are both readings")
UNSQUEEZE_AXES_1 = ("axes: List of non-negative integers, indicate the dimensions to be inserted; Dimension indices in "
                    "`axes` are as seen in the output tensor.")
UNSQUEEZE_AXES_11 = ("Each value in `axes` should be within the (inclusive) range [-output_rank , output_rank - 1]. "
                     "(Unsqueeze-11+)")
UNSQUEEZE_REPEATED = "The input `axes` should not contain any duplicate entries. It is an error if it contains duplicates."
AXES_1D = "axes: List of integers (a 1-D tensor)"


class Identity1(MovementSemantics):
    """Identity: the input, unchanged."""

    since = 1

    def moved(self, example: Example) -> Moved:
        return Moved((positions([example.inputs["input"].shape])[0],))


class Reshape1(MovementSemantics):
    """Reshape-1: the new shape is the `shape` attribute; 0 copies a dim, -1 is inferred."""

    since = 1
    data = ("data",)
    allowzero_exists = False

    def new_shape(self, example: Example) -> list[int] | Invalid | None:
        return ints(example.attributes.get("shape"))

    def moved(self, example: Example) -> Moved | Invalid:
        data = example.inputs["data"]
        shape = self.new_shape(example)
        if isinstance(shape, Invalid):
            return shape
        shape = [] if shape is None else shape
        allowzero = self.allowzero_exists and bool(example.attributes.get("allowzero", 0))
        dims = reshaped(list(data.shape), shape, allowzero)
        if isinstance(dims, Invalid):
            return dims
        return Moved((positions([data.shape])[0].reshape(dims),))


class Reshape5(Reshape1):
    """Reshape-5: the new shape is the `shape` input."""

    since = 5

    def new_shape(self, example: Example) -> list[int] | Invalid | None:
        return one_d(example, "shape", SHAPE_1D)


class Reshape14(Reshape5):
    """Reshape-14: `allowzero=1` makes a 0 in the shape a dimension of 0."""

    since = 14
    allowzero_exists = True


def reshaped(input_dims: list[int], shape: list[int], allowzero: bool) -> list[int] | Invalid:
    """The output's dims by the Reshape text, or the sentence that forbids `shape`."""
    if any(d < -1 for d in shape):
        return Invalid("negative-dim", RESHAPE_BELOW_MINUS_ONE)
    if shape.count(-1) > 1:
        return Invalid("two-minus-one", RESHAPE_ONE_MINUS_ONE)
    if allowzero and -1 in shape and 0 in shape:
        return Invalid("allowzero-zero-and-minus-one", RESHAPE_ALLOWZERO)
    dims = []
    for index, d in enumerate(shape):
        if d == 0 and not allowzero:
            if index >= len(input_dims):
                return Invalid("zero-beyond-rank", RESHAPE_ZERO_COPIES)
            d = input_dims[index]
        dims.append(d)
    count = math.prod(input_dims)
    if -1 in dims:
        rest = math.prod(d for d in dims if d != -1)
        if rest == 0:
            return Invalid("inferred-undetermined", RESHAPE_INFERRED_UNDETERMINED)
        if count % rest:
            return Invalid("size-mismatch", RESHAPE_SAME_COUNT)
        dims[dims.index(-1)] = count // rest
    if math.prod(dims) != count:
        return Invalid("size-mismatch", RESHAPE_SAME_COUNT)
    return dims


class Flatten1(MovementSemantics):
    """Flatten-1: a 2-D matrix of (d_0 X ... d_(axis-1), d_axis X ... d_n); axis in [0, R]."""

    since = 1
    negative_axes = False
    axis_sentence = FLATTEN_AXIS_1

    def moved(self, example: Example) -> Moved | Invalid:
        data = example.inputs["input"]
        axis = axis_in(int(example.attributes.get("axis", 1)), data.ndim, self.negative_axes, self.axis_sentence, high=data.ndim)
        if isinstance(axis, Invalid):
            return axis
        dims = (math.prod(data.shape[:axis]), math.prod(data.shape[axis:]))
        return Moved((positions([data.shape])[0].reshape(dims),))


class Flatten11(Flatten1):
    """Flatten-11: a negative axis counts from the back (range [-r, r])."""

    since = 11
    negative_axes = True
    axis_sentence = FLATTEN_AXIS_11


class Squeeze1(MovementSemantics):
    """Squeeze-1: `axes` (an attribute) names dims of 1 to remove; without it every dim of 1 goes."""

    since = 1
    data = ("data",)
    negative_axes = False
    axes_sentence = SQUEEZE_AXES_1

    def axes(self, example: Example) -> list[int] | Invalid | None:
        return ints(example.attributes.get("axes"))

    def moved(self, example: Example) -> Moved | list[Moved] | Invalid:
        data = example.inputs["data"]
        axes = self.axes(example)
        if isinstance(axes, Invalid):
            return axes
        every_one = [k for k, d in enumerate(data.shape) if d == 1]
        if axes is None:
            return _squeezed(data.shape, every_one)
        chosen = axes_in(axes, data.ndim, self.negative_axes, self.axes_sentence)
        if isinstance(chosen, Invalid):
            return chosen
        if any(data.shape[k] != 1 for k in chosen):
            return Invalid("not-one", SQUEEZE_NOT_ONE)
        if not axes:
            # The first reading's rank is the one the model declares: onnx's shape inference, which
            # the checker runs where the axes are a constant, squeezes nothing.
            options = [_squeezed(data.shape, [], "nothing squeezed (the axes given are none)"),
                       _squeezed(data.shape, every_one, "every single dimension squeezed (as without axes)")]
            return [Moved(o.maps, o.label, ambiguity=SQUEEZE_EMPTY_AXES) for o in options]
        if len(set(chosen)) != len(chosen):
            found = _squeezed(data.shape, chosen)
            return Moved(found.maps, may_reject=SQUEEZE_REPEATED)
        return _squeezed(data.shape, chosen)


class Squeeze11(Squeeze1):
    """Squeeze-11: negative axes count from the back (range [-r, r-1])."""

    since = 11
    negative_axes = True
    axes_sentence = SQUEEZE_AXES_11


class Squeeze13(Squeeze11):
    """Squeeze-13: `axes` is an optional input."""

    since = 13

    def axes(self, example: Example) -> list[int] | Invalid | None:
        return one_d(example, "axes", AXES_1D)


def _squeezed(shape: tuple[int, ...], axes: list[int], label: str = "spec") -> Moved:
    dims = [d for k, d in enumerate(shape) if k not in set(axes)]
    return Moved((positions([shape])[0].reshape(dims),), label)


class Unsqueeze1(MovementSemantics):
    """Unsqueeze-1: `axes` (an attribute) are the output's indices of new dims of 1."""

    since = 1
    data = ("data",)
    negative_axes = False
    axes_sentence = UNSQUEEZE_AXES_1

    def axes(self, example: Example) -> list[int] | Invalid | None:
        return ints(example.attributes.get("axes"))

    def moved(self, example: Example) -> Moved | Invalid:
        data = example.inputs["data"]
        axes = self.axes(example)
        if isinstance(axes, Invalid):
            return axes
        axes = axes or []
        rank = data.ndim + len(axes)
        chosen = axes_in(axes, rank, self.negative_axes, self.axes_sentence)
        if isinstance(chosen, Invalid):
            return chosen
        if len(set(chosen)) != len(chosen):
            return Invalid("repeated-axes", UNSQUEEZE_REPEATED)
        rest = iter(data.shape)
        dims = [1 if k in set(chosen) else next(rest) for k in range(rank)]
        return Moved((positions([data.shape])[0].reshape(dims),))


class Unsqueeze11(Unsqueeze1):
    """Unsqueeze-11: negative axes count from the back of the output (range [-output_rank, output_rank-1])."""

    since = 11
    negative_axes = True
    axes_sentence = UNSQUEEZE_AXES_11


class Unsqueeze13(Unsqueeze11):
    """Unsqueeze-13: `axes` is a required input."""

    since = 13

    def axes(self, example: Example) -> list[int] | Invalid | None:
        return one_d(example, "axes", AXES_1D)


def written_axes(example: Example) -> list[int] | None:
    """Squeeze's or Unsqueeze's axes as the case gives them: the input (13+) or the attribute."""
    axes = example.inputs.get("axes") if example.version.input("axes") is not None else example.attributes.get("axes")
    return ints(axes)


def squeezes_every_one(example: Example) -> bool:
    """Squeeze without axes (or with an empty list): which dims go depends on their sizes."""
    return not written_axes(example)


def axes_unsorted(example: Example) -> bool:
    """Squeeze's or Unsqueeze's axes not in increasing order once a negative one has the rank
    added (the input's for Squeeze, the output's for Unsqueeze): [-1, 1] of rank 4 is [3, 1]."""
    written = written_axes(example)
    if not written:
        return False
    rank = example.inputs["data"].ndim + (len(written) if example.op == "Unsqueeze" else 0)
    made = [axis + rank if axis < 0 else axis for axis in written]
    return made != sorted(made)


def no_elements(example: Example) -> bool:
    """The data input holds no elements (a dim of 0)."""
    data = example.inputs.get("input", example.inputs.get("data"))
    return data is not None and data.size == 0


def shape_attribute(example: Example) -> bool:
    """Reshape-1's form: the new shape as the attribute `shape`."""
    return example.attributes.get("shape") is not None


def reshape_has_zero(example: Example) -> bool:
    """A 0 in Reshape's shape (a copied dim, or with allowzero a dim of 0)."""
    shape = example.inputs.get("shape")
    written = ints(shape) if shape is not None else ints(example.attributes.get("shape"))
    return bool(written) and 0 in written


REFERENCES = (
    OpReference(op="Identity", dtype_param="T", semantics=(Identity1,), data_inputs=("input",)),
    OpReference(op="Reshape", dtype_param="T", semantics=(Reshape1, Reshape5, Reshape14), data_inputs=("data",),
                shape_inputs=(), traits={"shape-has-zero": reshape_has_zero, "shape-attribute": shape_attribute},
                rules=("negative-dim", "two-minus-one", "allowzero-zero-and-minus-one", "zero-beyond-rank",
                       "inferred-undetermined", "size-mismatch", "not-1d")),
    OpReference(op="Flatten", dtype_param="T", semantics=(Flatten1, Flatten11), data_inputs=("input",),
                traits={"no-elements": no_elements},
                rules=("axis-out-of-range", "negative-axis")),
    OpReference(op="Squeeze", dtype_param="T", semantics=(Squeeze1, Squeeze11, Squeeze13), data_inputs=("data",),
                rank_from_sizes=squeezes_every_one,
                traits={"axes-unsorted": axes_unsorted, "squeezes-every-one": squeezes_every_one},
                rules=("axis-out-of-range", "negative-axis", "not-one", "not-1d")),
    OpReference(op="Unsqueeze", dtype_param="T", semantics=(Unsqueeze1, Unsqueeze11, Unsqueeze13), data_inputs=("data",),
                traits={"axes-unsorted": axes_unsorted},
                rules=("axis-out-of-range", "negative-axis", "repeated-axes", "not-1d")),
)
