"""Reference for Hardmax (versions 1, 11, 13), from the schema text in onnx.defs.

The output has the input's shape and type: 1 at the first maximum of each row, 0 elsewhere. What
a row is changed at version 13:

- Hardmax-1 and -11: the input "will be coerced into a 2-dimensional tensor with dimensions
  [a_0 * ... * a_{k-1}, a_k * ... * a_{n-1}]" (k the axis, default 1): a row is everything from
  axis k on. Hardmax-1 gives no meaning to a negative axis and sets no range; k = n coerces to
  [a_0 * ... * a_{n-1}, 1] (every element its own row), which a runtime may also reject as an axis
  the input does not have. Hardmax-11 accepts [-r, r-1].
- Hardmax-13: "1 if the element is the first maximum value along the specified axis" (default -1):
  a row is the elements along that one axis.

Ties go to the first maximum in every version ("1 for the first maximum value"). A NaN is not
placed by any version: the readings are reference/arg_extreme.py's (NaN the maximum, NaN passed
over, a running maximum from either end). Hardmax-13 has no function body in onnx.defs. A size-0
dim leaves an empty output, whatever the axis.
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from .arg_extreme import FIRST, NAN_OPEN, comparable, extreme_mask, has_infinity, nan_mask, row_picks, tied
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings
from .expected import spec_if_one
from .movement import axis_in

COERCED = ("input \\in [a_0, a_1, ..., a_{k-1}, a_k, ..., a_{n-1}] and k is the axis provided, then input will be "
           "coerced into a 2-dimensional tensor with dimensions [a_0 * ... * a_{k-1}, a_k * ... * a_{n-1}]")
AXIS_1 = f"axis: Describes the axis of the inputs when coerced to 2D; {COERCED} (Hardmax-1 gives no meaning to a negative axis)"
AXIS_11 = "axis: Negative value means counting dimensions from the back. Accepted range is [-r, r-1] where r = rank(input)."
AXIS_IS_RANK = ("axis equal to the rank: Hardmax-1 sets no range for axis; its formula coerces the input to "
                "[a_0 * ... * a_{n-1}, 1], and a runtime may reject an axis the input does not have")


def one_hot(rows: np.ndarray, indices: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Rows of `like`'s type: 1 at each row's index, 0 elsewhere."""
    out = np.zeros(rows.shape, dtype=like.dtype)
    if rows.size:
        out[np.arange(rows.shape[0]), indices] = 1
    return out


class CoercedAxis(VersionSemantics):
    """An op along one axis whose versions before 13 coerce the input to 2-D there (Hardmax,
    Softmax, LogSoftmax): the axis by the version's rules, the input as rows (`coerced`), and the
    rows put back in the input's shape (`restored`); from 13 (`along_one_axis`) a row lies along
    that axis alone."""

    default_axis = 1
    negative_axes = False
    axis_sentence: str
    axis_may_be_rank = True  # version 1's formula holds for k = n
    along_one_axis = False

    def axis(self, example: Example) -> int | Invalid:
        data = example.inputs["input"]
        return axis_in(int(example.attributes.get("axis", self.default_axis)), data.ndim, self.negative_axes,
                       self.axis_sentence, high=data.ndim if self.axis_may_be_rank else data.ndim - 1)

    def coerced(self, values: np.ndarray, axis: int) -> np.ndarray:
        """`values` as rows: [a_0 * ... * a_{k-1}, a_k * ... * a_{n-1}], or along the axis alone."""
        if self.along_one_axis:
            moved = np.moveaxis(values, axis, -1)
            return moved.reshape(math.prod(moved.shape[:-1]), values.shape[axis])  # not -1: a size-0 axis
        return values.reshape(math.prod(values.shape[:axis]), math.prod(values.shape[axis:]))

    def restored(self, out: np.ndarray, data: np.ndarray, axis: int) -> np.ndarray:
        if self.along_one_axis:
            moved = (*data.shape[:axis], *data.shape[axis + 1:], data.shape[axis])
            return np.moveaxis(out.reshape(moved), -1, axis)
        return out.reshape(data.shape)


class Hardmax1(CoercedAxis):
    """Hardmax-1: rows of the input coerced to 2-D at axis k (default 1), k in [0, n]."""

    since = 1
    axis_sentence = AXIS_1

    def expected(self, example: Example) -> Expected:
        data = example.inputs["input"]
        axis = self.axis(example)
        if isinstance(axis, Invalid):
            return Expected(invalid=axis)
        found = self.hardmax(data, axis)
        return Expected(readings=found.readings, ambiguity=found.ambiguity,
                        may_reject=AXIS_IS_RANK if axis == data.ndim else None)

    def rows(self, data: np.ndarray, axis: int) -> np.ndarray:
        """The rows, comparable values."""
        return self.coerced(comparable(data), axis)

    def hardmax(self, data: np.ndarray, axis: int) -> Expected:
        rows = self.rows(data, axis)
        candidates = [Reading((self.restored(one_hot(rows, pick.indices, data), data, axis),), pick.label)
                      for pick in row_picks(rows, True, FIRST)]
        return spec_if_one(readings(candidates, NAN_OPEN))


class Hardmax11(Hardmax1):
    """Hardmax-11: as Hardmax-1, the axis in [-r, r-1]."""

    since = 11
    negative_axes = True
    axis_sentence = AXIS_11
    axis_may_be_rank = False


class Hardmax13(Hardmax11):
    """Hardmax-13: rows along the one axis (default -1), put back in place."""

    since = 13
    default_axis = -1
    along_one_axis = True


# Traits: the causes a runtime may deviate by.

def _rows(example: Example) -> np.ndarray | None:
    """The case's rows, or None where the text finds it invalid."""
    data = example.inputs.get("input")
    semantics = REFERENCE.semantics_for(example.version)
    if data is None or not isinstance(semantics, Hardmax1):
        return None
    axis = semantics.axis(example)
    return None if isinstance(axis, Invalid) else semantics.rows(data, axis)


def nan_in_data(example: Example) -> bool:
    data = example.inputs.get("input")
    return data is not None and bool(nan_mask(comparable(data)).any())


def infinity(example: Example) -> bool:
    """An infinity in the data: a row whose maximum is -inf (or the type's lowest beside -inf) is what a
    runtime starting its search from a finite sentinel misses (as ArgMax's trait of the same name)."""
    return has_infinity(example.inputs.get("input"))


def ties(example: Example) -> bool:
    """Some row's maximum appears more than once (NaNs counted as equal): the text marks the first."""
    rows = _rows(example)
    if rows is None or not rows.size:
        return False
    return tied(extreme_mask(rows, True, nan_wins=True)) or tied(extreme_mask(rows, True, nan_wins=False))


def empty_axis(example: Example) -> bool:
    """A row of length 0 (an empty output): a runtime may still refuse it."""
    rows = _rows(example)
    return rows is not None and rows.shape[1] == 0 and rows.shape[0] > 0


def empty_data(example: Example) -> bool:
    """An input with a size-0 dim, whatever the axis (a runtime that returns early on an empty input
    may check nothing of the axis first)."""
    data = example.inputs.get("input")
    return data is not None and data.size == 0 and data.ndim > 0


def coerced_2d(example: Example) -> bool:
    """Before 13, a row spanning more than the axis (dims of size > 1 after it): what a runtime
    computing Hardmax-13's along-axis rows for every version gets wrong."""
    data = example.inputs.get("input")
    if data is None or example.version.since_version >= 13 or _rows(example) is None:
        return False
    axis = int(example.attributes.get("axis", 1))
    axis = axis + data.ndim if axis < 0 else axis
    return any(d > 1 for d in data.shape[axis + 1:]) and data.size > 0


def default_axis_1(example: Example) -> bool:
    """Before 13, no axis given: the text's default is 1, where Hardmax-13's is -1 (what a runtime
    reading every version as 13 takes), on an input where the two differ (rank other than 2)."""
    data = example.inputs.get("input")
    return (data is not None and example.version.since_version < 13 and "axis" not in example.attributes
            and data.ndim != 2)


def axis_is_rank(example: Example) -> bool:
    """Hardmax-1 with axis = rank (its default on a 1-D input): the coerced rows have one element."""
    data = example.inputs.get("input")
    return (data is not None and example.version.since_version < 11
            and int(example.attributes.get("axis", 1)) == data.ndim)


def negative_axis(example: Example) -> bool:
    """A negative axis, given or Hardmax-13's default -1."""
    return int(example.attributes.get("axis", REFERENCE.semantics_for(example.version).default_axis)) < 0


REFERENCE = OpReference(
    op="Hardmax",
    dtype_param="T",
    data_inputs=("input",),
    semantics=(Hardmax1, Hardmax11, Hardmax13),
    traits={"nan-in-data": nan_in_data, "ties": ties, "empty-axis": empty_axis, "empty-data": empty_data,
            "coerced-2d": coerced_2d, "default-axis-1": default_axis_1, "axis-is-rank": axis_is_rank,
            "negative-axis": negative_axis, "inf-in-data": infinity},
    rules=("axis-out-of-range", "negative-axis"),
)
