"""Reference for ArgMax and ArgMin (versions 1, 11, 12, 13), from the schema text in onnx.defs,
and the row picking that Hardmax shares (reference/hardmax.py).

One path serves both ops, the direction (`largest`) a parameter: the data is seen as rows along
`axis`, each row gives the index of its extreme, and the output keeps the axis as a dim of 1
(keepdims=1) or drops it (keepdims=0). Version 13 only adds bfloat16, which the registry reads from
the schema, so ArgMax-13 is judged by ArgMax-12's class. What the texts leave open is given as
several readings:

- Ties before version 12: "Computes the indices of the max elements" does not say which of equal
  maxima; the first, the last, and any of them are allowed (12 and 13 fix it: the first, or the
  last with select_last_index).
- NaN: no version says whether a NaN is a max, a min, or neither. The readings: NaN is the extreme
  (IEEE 754-2019 maximum/minimum propagate it; numpy's argmax picks the first NaN), NaN is ignored
  (IEEE 754 maxNum/minNum; numpy's nanargmax; a row of NaNs gives its first or last element), and a
  running extreme scanned from either end of the row, replaced only by a value that compares better
  (or equal, toward the side ties go to), which a NaN never does (std::max_element; a NaN where the
  scan starts is kept).
- An axis of size 0: there is no max element to give the index of. ArgMax-11 and ArgMin-11 say
  "The input tensor must not be empty" (invalid); the other versions are silent, so a rejection is
  allowed, and so is any value where the output has elements (an empty output where it has none).

-0.0 and +0.0 are equal values: a tie, as IEEE 754 compares them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..case import Example
from ..dtypes import from_numpy
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings
from .expected import spec_if_one
from .movement import axis_in

AXIS_1 = ("axis: The axis in which to compute the arg indices. (Versions 1 give no meaning to a negative axis, "
          "nor to an axis the data does not have)")
AXIS_11 = "axis: The axis in which to compute the arg indices. Accepted range is [-r, r-1] where r = rank(data)."
NOT_EMPTY = "The input tensor must not be empty. (ArgMax-11, ArgMin-11)"
LAST_INDEX = ("If select_last_index is True (default False), the index of the last occurrence of the max is selected "
              "if the max appears more than once in the input. Otherwise the index of the first occurrence is selected.")
TIES_OPEN = ("versions 1 and 11 say 'Computes the indices of the max elements' and not which of equal maxima "
             "(the first occurrence is fixed from version 12)")
NAN_OPEN = "the text does not say whether a NaN is a max (min), or is passed over"
EMPTY_AXIS = ("an axis of size 0 holds no max element to give the index of: the text of this version is silent "
              "(ArgMax-11 and ArgMin-11 said 'The input tensor must not be empty')")

FIRST, LAST = False, True  # which of tied extremes a reading picks


@dataclass(frozen=True)
class RowPick:
    """One reading's index per row of a (rows, n) array, and its label."""

    label: str
    indices: np.ndarray  # int64, one per row
    tied: np.ndarray | None = None  # (rows, n) mask of the extremes a tie may pick among, where the reading leaves it open


def comparable(data: np.ndarray) -> np.ndarray:
    """The values as compared: floats of any width in float64 (exactly), integers as they are."""
    return data.astype(np.float64) if from_numpy(data.dtype).kind == "float" else data


def rows_along(data: np.ndarray, axis: int) -> np.ndarray:
    """`data` as rows along `axis`: shape (elements elsewhere, dims[axis]), comparable values."""
    moved = np.moveaxis(comparable(data), axis, -1)
    return moved.reshape(math.prod(moved.shape[:-1]), data.shape[axis])  # not -1: a size-0 axis leaves it unknown


def nan_mask(rows: np.ndarray) -> np.ndarray:
    return np.isnan(rows) if rows.dtype.kind == "f" else np.zeros(rows.shape, dtype=bool)


def extreme_mask(rows: np.ndarray, largest: bool, nan_wins: bool) -> np.ndarray:
    """Per row, the elements equal to its extreme: a NaN is the extreme (`nan_wins`) or is passed
    over (a row of NaNs then has every element as its extreme)."""
    nan = nan_mask(rows)
    # NaNs set aside by hand, not by np.nanmax: its fmax returns NaN beside a signaling NaN (IEEE
    # 754-2008 maxNum), so a row of a number and a signaling NaN would have no extreme at all.
    # A row of NaNs only gets an infinity that no element equals, and is decided below.
    numbers = np.where(nan, -np.inf if largest else np.inf, rows) if nan.any() else rows
    extreme = (np.max if largest else np.min)(numbers, axis=1, keepdims=True)
    mask = rows == extreme
    if not nan.any():
        return mask
    return np.where(nan.any(axis=1, keepdims=True) if nan_wins else nan.all(axis=1, keepdims=True), nan, mask)


def first_or_last(mask: np.ndarray, side: bool) -> np.ndarray:
    """Per row, the index of the first (or last) True of `mask`."""
    if side == FIRST:
        return mask.argmax(axis=1).astype(np.int64)
    return (mask.shape[1] - 1 - mask[:, ::-1].argmax(axis=1)).astype(np.int64)


def scanned(rows: np.ndarray, largest: bool, side: bool, from_front: bool) -> np.ndarray:
    """Per row, the index a running extreme ends at: started at one end, replaced by each value
    that compares better, or equal where that moves toward `side` (a NaN compares neither)."""
    take_equal = side == (LAST if from_front else FIRST)
    found = first_or_last(extreme_mask(rows, largest, nan_wins=False), side)
    for r in np.flatnonzero(nan_mask(rows).any(axis=1)):  # rows without NaN: the tie side decides
        row = rows[r].tolist()
        order = range(len(row)) if from_front else range(len(row) - 1, -1, -1)
        best = order[0]
        for k in order[1:]:
            value, held = row[k], row[best]
            if (value > held if largest else value < held) or (take_equal and value == held):
                best = k
        found[r] = best
    return found


def row_picks(rows: np.ndarray, largest: bool, side: bool) -> list[RowPick]:
    """The readings of each row's extreme with ties going to `side`: one without NaN, four with."""
    word = "max" if largest else "min"
    end = "last" if side == LAST else "first"
    if not rows.shape[1]:  # rows of nothing: an empty output (Hardmax's; ArgMax's are decided before)
        return [RowPick("spec", np.zeros(rows.shape[0], dtype=np.int64))]
    if not nan_mask(rows).any():
        mask = extreme_mask(rows, largest, nan_wins=True)
        return [RowPick(f"the {end} {word}", first_or_last(mask, side), mask)]
    spread = extreme_mask(rows, largest, nan_wins=True), extreme_mask(rows, largest, nan_wins=False)
    return [
        RowPick(f"NaN is the {word} (IEEE 754-2019 {word}imum; numpy's arg{word}): the {end} NaN",
                first_or_last(spread[0], side), spread[0]),
        RowPick(f"NaN passed over (IEEE 754 {word}Num; numpy's nanarg{word}; a row of NaNs: its {end}): the {end} {word}",
                first_or_last(spread[1], side), spread[1]),
        RowPick(f"a running {word} from the first element, which a NaN never replaces (std::{word}_element); ties: the {end}",
                scanned(rows, largest, side, from_front=True)),
        RowPick(f"a running {word} from the last element, which a NaN never replaces; ties: the {end}",
                scanned(rows, largest, side, from_front=False)),
    ]


def tied(mask: np.ndarray) -> bool:
    """Whether some row has its extreme more than once."""
    return bool((mask.sum(axis=1) > 1).any()) if mask.size else False


def tie_choices(mask: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Every index a row's tie may pick, as layers of the output's shape (see `Reading.choices`):
    layer k holds each row's k-th tied index, or its first where it has fewer."""
    counts = mask.sum(axis=1)
    layers = np.zeros((int(counts.max()), mask.shape[0]), dtype=np.int64)
    for r in range(mask.shape[0]):
        where = np.flatnonzero(mask[r])
        layers[:, r] = where[0]
        layers[: len(where), r] = where
    return layers.reshape((-1, *shape))


class ArgExtreme1(VersionSemantics):
    """ArgMax-1 and ArgMin-1: axis in [0, r-1] (no negative axis), ties unspecified."""

    since = 1
    largest = True
    negative_axes = False
    axis_sentence = AXIS_1
    input_not_empty = False  # ArgMax-11's "The input tensor must not be empty."

    def expected(self, example: Example) -> Expected:
        data = example.inputs["data"]
        axis = axis_in(int(example.attributes.get("axis", 0)), data.ndim, self.negative_axes, self.axis_sentence)
        if isinstance(axis, Invalid):
            return Expected(invalid=axis)
        if self.input_not_empty and data.size == 0:
            return Expected(invalid=Invalid("empty-input", NOT_EMPTY))
        rows = rows_along(data, axis)
        shape = output_shape(data.shape, axis, int(example.attributes.get("keepdims", 1)) != 0)
        if rows.shape[1] == 0:
            return self.empty_axis(shape)
        return self.readings_of(rows, shape, example)

    def empty_axis(self, shape: tuple[int, ...]) -> Expected:
        """An axis of size 0: any value where the output has elements, an empty output where it has
        none; a rejection either way, as the text gives no max element along it."""
        output = np.zeros(shape, dtype=np.int64)
        if not output.size:
            return Expected(readings=(Reading((output,)),), may_reject=EMPTY_AXIS)
        free = np.ones(shape, dtype=bool)
        return Expected(readings=(Reading((output,), "any value: no max element along an axis of size 0", free=(free,)),),
                        may_reject=EMPTY_AXIS)

    def sides(self, example: Example) -> tuple[bool, ...]:
        """Where ties go: versions before 12 say nothing, so either end."""
        return (FIRST, LAST)

    def readings_of(self, rows: np.ndarray, shape: tuple[int, ...], example: Example) -> Expected:
        sides = self.sides(example)
        picks = [pick for side in sides for pick in row_picks(rows, self.largest, side)]
        candidates = [Reading((pick.indices.reshape(shape),), pick.label) for pick in picks]
        # Ties left open: any tied index, beside the first and the last (a row's tied set is the
        # same whichever end a reading picks from, so the first side's picks say it).
        open_ties = [pick for pick in picks[: len(picks) // len(sides)] if len(sides) > 1 and pick.tied is not None
                     and tied(pick.tied)]
        candidates += [Reading((pick.indices.reshape(shape),), f"{pick.label}, or any other tied index",
                               choices=(tie_choices(pick.tied, shape),)) for pick in open_ties]
        why = ([TIES_OPEN] if open_ties else []) + ([NAN_OPEN] if nan_mask(rows).any() else [])
        return spec_if_one(readings(candidates, "; ".join(why)))


class ArgExtreme11(ArgExtreme1):
    """Versions 11: a negative axis counts from the back; the input must not be empty."""

    since = 11
    negative_axes = True
    axis_sentence = AXIS_11
    input_not_empty = True


class ArgExtreme12(ArgExtreme11):
    """Versions 12 and 13: ties go to the first index, or the last with select_last_index; the
    sentence about an empty input is gone."""

    since = 12
    input_not_empty = False

    def sides(self, example: Example) -> tuple[bool, ...]:
        return (LAST if int(example.attributes.get("select_last_index", 0)) else FIRST,)


class ArgMax1(ArgExtreme1):
    """ArgMax-1: the indices of the max elements."""


class ArgMax11(ArgExtreme11):
    """ArgMax-11: the indices of the max elements."""


class ArgMax12(ArgExtreme12):
    """ArgMax-12 and -13: the indices of the max elements."""


class ArgMin1(ArgExtreme1):
    """ArgMin-1: the indices of the min elements."""

    largest = False


class ArgMin11(ArgExtreme11):
    """ArgMin-11: the indices of the min elements."""

    largest = False


class ArgMin12(ArgExtreme12):
    """ArgMin-12 and -13: the indices of the min elements."""

    largest = False


def output_shape(dims: tuple[int, ...], axis: int, keepdims: bool) -> tuple[int, ...]:
    kept = (1,) if keepdims else ()
    return (*dims[:axis], *kept, *dims[axis + 1:])


# Traits: the causes a runtime may deviate by.

def _rows(example: Example) -> tuple[np.ndarray, bool] | None:
    """The case's rows and direction, or None where the text finds it invalid."""
    data = example.inputs.get("data")
    semantics = REFERENCES[0 if example.op == "ArgMax" else 1].semantics_for(example.version)
    if data is None or not isinstance(semantics, ArgExtreme1):
        return None
    axis = axis_in(int(example.attributes.get("axis", 0)), data.ndim, semantics.negative_axes, semantics.axis_sentence)
    return None if isinstance(axis, Invalid) else (rows_along(data, axis), semantics.largest)


def nan_in_data(example: Example) -> bool:
    """A NaN in the data: the text does not say where it stands against numbers."""
    data = example.inputs.get("data")
    return data is not None and bool(nan_mask(comparable(data)).any())


def ties(example: Example) -> bool:
    """Some row's extreme appears more than once (NaNs counted as equal): which index the text gives
    depends on select_last_index from version 12, and is open before."""
    found = _rows(example)
    if found is None or not found[0].size:
        return False
    rows, largest = found
    return tied(extreme_mask(rows, largest, nan_wins=True)) or tied(extreme_mask(rows, largest, nan_wins=False))


def signed_zero_tie(example: Example) -> bool:
    """A row whose extreme is zero held as both -0.0 and +0.0: equal values, a tie, which a runtime
    comparing bit patterns, or ordering -0.0 below +0.0, breaks."""
    found = _rows(example)
    if found is None or not found[0].size or found[0].dtype.kind != "f":
        return False
    rows, largest = found
    extreme = extreme_mask(rows, largest, nan_wins=False) & (rows == 0)
    negative = np.signbit(rows)
    both = (extreme & negative).any(axis=1) & (extreme & ~negative).any(axis=1)
    return bool(both.any())


def select_last_index(example: Example) -> bool:
    return bool(int(example.attributes.get("select_last_index", 0)))


def keepdims_0(example: Example) -> bool:
    return int(example.attributes.get("keepdims", 1)) == 0


def empty_axis(example: Example) -> bool:
    """The reduced axis has size 0 (the text gives no index; ArgMax-11 forbids an empty input)."""
    found = _rows(example)
    return found is not None and found[0].shape[1] == 0


def negative_axis(example: Example) -> bool:
    return int(example.attributes.get("axis", 0)) < 0


def negative_axis_size_0(example: Example) -> bool:
    """A negative axis on data with a size-0 dim: a runtime that normalizes the axis only on its
    path for non-empty data keeps the input's shape."""
    data = example.inputs.get("data")
    return data is not None and negative_axis(example) and 0 in data.shape


def empty_data(example: Example) -> bool:
    """Data with a size-0 dim, whatever the axis (a runtime that returns early on an empty input may
    check nothing of the axis first)."""
    data = example.inputs.get("data")
    return data is not None and data.size == 0 and data.ndim > 0


def has_infinity(data: np.ndarray | None) -> bool:
    """Whether float `data` holds an infinity: the max (min) a runtime starting from a finite
    sentinel misses (ArgMax's and Hardmax's `inf-in-data`)."""
    return data is not None and from_numpy(data.dtype).kind == "float" and bool(np.isinf(comparable(data)).any())


def infinity(example: Example) -> bool:
    """An infinity in the data (see `has_infinity`)."""
    return has_infinity(example.inputs.get("data"))


TRAITS = {"nan-in-data": nan_in_data, "ties": ties, "signed-zero-tie": signed_zero_tie,
          "select-last-index": select_last_index, "keepdims-0": keepdims_0, "empty-axis": empty_axis,
          "negative-axis": negative_axis, "negative-axis-size-0": negative_axis_size_0, "empty-data": empty_data,
          "inf-in-data": infinity}
RULES = ("axis-out-of-range", "negative-axis", "empty-input")

REFERENCES = (
    OpReference(op="ArgMax", dtype_param="T", data_inputs=("data",), semantics=(ArgMax1, ArgMax11, ArgMax12),
                traits=TRAITS, rules=RULES),
    OpReference(op="ArgMin", dtype_param="T", data_inputs=("data",), semantics=(ArgMin1, ArgMin11, ArgMin12),
                traits=TRAITS, rules=RULES),
)
