"""Reference for OneHot (versions 9, 11, 28): a one-hot tensor of rank(indices) + 1, the new
dimension of size `depth` inserted at `axis`, `on_value` where an index points and `off_value`
elsewhere ("values, which is a two-element tensor of format [off_value, on_value]").

- Index range. OneHot-9: "Any entries in the 'indices' input tensor with values outside the range
  [0, depth) will result in one-hot representation with all 'off_value' values"; its indices "must
  be non-negative integers", so a negative (or fractional) index gives an all-off row, the reading,
  and a rejection is allowed beside it. OneHot-11 on: the range is [-depth, depth-1], a negative
  index counting from the back (-1 is depth - 1); outside it, an all-off row.
- Casts. "In case 'indices' is of non-integer type, the values will be casted to int64 before use",
  and so is a non-integer depth. Cast's text fixes no rounding for a float in int64's range, so
  truncation toward zero (C's), rounding half to even and half away from zero are the readings (one
  cast for indices and depth alike); a NaN, an infinity or a float beyond int64 is "undefined if
  OOR": its row may hold anything (`Reading.free`), and such a depth leaves the output's shape
  undefined, which conform takes as invalid (`depth-undefined`).
- depth: "Scalar or rank 1 tensor containing exactly one element"; a negative depth is no size of
  a dimension (invalid); depth 0 is an empty dimension (the reading; "the number of classes" 0, so
  a rejection is allowed).
- values: "Rank 1 tensor containing exactly two elements"; any other shape is invalid.
- axis: OneHot-11 on: "Accepted range is [-r-1, r] where r = rank(indices)", negative counted from
  the back. OneHot-9 gives a negative axis meaning only through its default -1 ("the innermost"):
  counting other negative axes from the back is the reading, and a rejection is allowed; an axis
  beyond [-r-1, r] has no place in the output, so it is invalid in every version.
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from ..dtypes import dtype
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings

ALL_OFF_9 = ("Any entries in the 'indices' input tensor with values outside the range [0, depth) will result in "
             "one-hot representation with all 'off_value' values in the output tensor.")
ALL_OFF_11 = ("Any entries in the 'indices' input tensor with values outside the range [-depth, depth-1] will result "
              "in one-hot representation with all 'off_value' values in the output tensor.")
MUST_BE_NON_NEGATIVE = ("indices: The values must be non-negative integers (OneHot-9): a negative or fractional index "
                        "gives an all-off row by the range sentence, and a rejection is allowed")
DEPTH_ONE_VALUE = "depth: Scalar or rank 1 tensor containing exactly one element"
DEPTH_NEGATIVE = ("depth: ... specifying the number of classes in one-hot tensor. This is also the size of the one-hot "
                  "dimension: a negative depth is no size")
DEPTH_ZERO = ("depth: ... specifying the number of classes in one-hot tensor: 0 classes give an empty one-hot "
              "dimension (the reading), and a rejection is allowed")
DEPTH_UNDEFINED = ("depth: In case 'depth' is of non-integer type, it will be casted to int64 before use: a NaN, an "
                   "infinity or a value beyond int64 casts to an undefined value (Cast: 'undefined if OOR'), which "
                   "leaves the output's shape undefined")
VALUES_TWO = "values: Rank 1 tensor containing exactly two elements, in the format [off_value, on_value]"
AXIS_RANGE_11 = "axis: Negative value means counting dimensions from the back. Accepted range is [-r-1, r] where r = rank(indices)."
AXIS_RANGE_9 = ("axis: Axis along which one-hot representation in added (the output has rank r+1 where r = "
                "rank(indices): an axis beyond [-r-1, r] has no place)")
NEGATIVE_AXIS_9 = ("axis: OneHot-9 gives a negative axis meaning only through its default -1 (the innermost); counting "
                   "other negative axes from the back is the reading, and a rejection is allowed")
CAST_ROUNDING = "the text casts float indices (and depth) to int64 and Cast fixes no rounding for them"
UNDEFINED_INDEX = "a NaN, infinite or out-of-int64 float index casts to an undefined int64 (Cast: 'undefined if OOR')"

TRUNCATE, HALF_EVEN, HALF_AWAY = "truncated toward zero", "rounded half to even", "rounded half away from zero"
ROUNDINGS = (TRUNCATE, HALF_EVEN, HALF_AWAY)
INT64_BOUND = 2.0**63  # a float at or beyond it (either sign, -2**63 aside) is outside int64


def rounded(value: float, rounding: str) -> int:
    """A finite float in int64's range as an integer, by one rounding."""
    if rounding == TRUNCATE:
        return math.trunc(value)
    if rounding == HALF_EVEN:
        return round(value)
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def cast_to_int64(array: np.ndarray, rounding: str) -> tuple[np.ndarray, np.ndarray]:
    """`array` as Python-int-valued int64 positions (an object array of ints, so uint64 beyond int64
    stays exact) and the mask of elements whose cast is undefined (NaN, inf, beyond int64)."""
    flat = array.reshape(-1)
    undefined = np.zeros(flat.shape, dtype=bool)
    found = np.empty(flat.shape, dtype=object)
    if flat.dtype.kind in "iub":
        found[:] = [int(v) for v in flat.tolist()]
        return found.reshape(array.shape), undefined.reshape(array.shape)
    with np.errstate(invalid="ignore"):
        wide = flat.astype(np.float64)
    for k, value in enumerate(wide.tolist()):
        if not math.isfinite(value) or not -INT64_BOUND <= value < INT64_BOUND:
            undefined[k] = True
            found[k] = 0
        else:
            found[k] = rounded(value, rounding)
    return found.reshape(array.shape), undefined.reshape(array.shape)


def one_hot(positions: np.ndarray, undefined: np.ndarray, depth: int, axis: int, values: np.ndarray,
            lowest: int) -> tuple[np.ndarray, np.ndarray]:
    """The output, and the mask of its elements the text leaves free (the rows of undefined
    indices): on_value at each index in [lowest, depth) (a negative one counted from the back),
    off_value elsewhere; the one-hot dimension last, then moved to `axis`."""
    shape = positions.shape
    flat = positions.reshape(-1)
    hot = np.zeros((flat.size, depth), dtype=bool)
    for k, index in enumerate(flat.tolist()):
        if lowest <= index < depth and depth > 0:
            hot[k, index + depth if index < 0 else index] = True
    hot = np.moveaxis(hot.reshape(*shape, depth), -1, axis)
    free = np.moveaxis(np.repeat(undefined.reshape(*shape, 1), depth, axis=-1), -1, axis)
    output = np.empty(hot.shape, dtype=values.dtype)
    output[...] = values[0]
    output[hot] = values[1]
    return output, free


class OneHot9(VersionSemantics):
    """OneHot-9: indices in [0, depth) are hot; the others (negative ones too) give all-off rows;
    `axis` given no range (beyond -1, negative axes have no stated meaning)."""

    since = 9
    negative_indices_count_back = False
    negative_axes_stated = False

    def axis_of(self, example: Example) -> int | Invalid:
        """The output axis of the one-hot dimension, in [0, r]."""
        rank = example.inputs["indices"].ndim
        axis = int(example.attributes.get("axis", -1))
        if not -rank - 1 <= axis <= rank:
            return Invalid("axis-out-of-range", AXIS_RANGE_11 if self.negative_axes_stated else AXIS_RANGE_9)
        return axis + rank + 1 if axis < 0 else axis

    def shapes_problem(self, example: Example) -> Invalid | None:
        depth, values = example.inputs["depth"], example.inputs["values"]
        if depth.shape not in ((), (1,)):
            return Invalid("depth-not-one-value", DEPTH_ONE_VALUE)
        if values.shape != (2,):
            return Invalid("values-not-two", VALUES_TWO)
        return None

    def expected(self, example: Example) -> Expected:
        problem = self.shapes_problem(example)
        if problem is not None:
            return Expected(invalid=problem)
        axis = self.axis_of(example)
        if isinstance(axis, Invalid):
            return Expected(invalid=axis)
        found: list[Reading] = []
        reasons: list[str] = []
        for rounding in roundings_of(example):
            depth = depth_of(example, rounding)
            if isinstance(depth, Invalid):
                return Expected(invalid=depth)
            positions, undefined = cast_to_int64(example.inputs["indices"], rounding)
            lowest = -depth if self.negative_indices_count_back else 0
            output, free = one_hot(positions, undefined, depth, axis, example.inputs["values"], lowest)
            label = "spec" if len(roundings_of(example)) == 1 else f"float indices and depth {rounding}"
            if free.any():
                label = f"{label}; any value in the rows of undefined indices"
            found.append(Reading((output,), label, free=(free,)))
            reasons += self.reasons(example, positions, depth)
        if any(r.free and r.free[0] is not None and r.free[0].any() for r in found):
            reasons.append(UNDEFINED_INDEX)
        may_reject = "; ".join(dict.fromkeys(reasons)) or None
        return readings(found, CAST_ROUNDING, may_reject=may_reject)

    def reasons(self, example: Example, positions: np.ndarray, depth: int) -> list[str]:
        """Why a runtime may also reject this valid case."""
        found = []
        if depth == 0:
            found.append(DEPTH_ZERO)
        axis = int(example.attributes.get("axis", -1))
        if axis < -1 and not self.negative_axes_stated:
            found.append(NEGATIVE_AXIS_9)
        if not self.negative_indices_count_back and (_any_negative(positions) or _fractional(example.inputs["indices"])):
            found.append(MUST_BE_NON_NEGATIVE)
        return found


class OneHot11(OneHot9):
    """OneHot-11: indices in [-depth, depth-1] are hot, a negative one counted from the back; `axis`
    in [-r-1, r], negative counted from the back. OneHot-28 only widens T3 (bfloat16)."""

    since = 11
    negative_indices_count_back = True
    negative_axes_stated = True


def _any_negative(positions: np.ndarray) -> bool:
    return any(v < 0 for v in positions.reshape(-1).tolist())


def _fractional(indices: np.ndarray) -> bool:
    if indices.dtype.kind in "iub" or not indices.size:
        return False
    with np.errstate(invalid="ignore"):
        wide = indices.astype(np.float64)
    finite = wide[np.isfinite(wide)]
    return bool((finite != np.trunc(finite)).any())


def roundings_of(example: Example) -> tuple[str, ...]:
    """The casts that differ for this case: one where no float index or depth is fractional."""
    depth = example.inputs["depth"]
    if _fractional(example.inputs["indices"]) or _fractional(depth):
        return ROUNDINGS
    return (TRUNCATE,)


def depth_of(example: Example, rounding: str) -> int | Invalid:
    """depth as an int64 by one cast; the Invalid of a negative or undefined one."""
    depth = example.inputs["depth"].reshape(-1)
    positions, undefined = cast_to_int64(depth, rounding)
    if undefined.any():
        return Invalid("depth-undefined", DEPTH_UNDEFINED)
    value = int(positions[0])
    return Invalid("depth-negative", DEPTH_NEGATIVE) if value < 0 else value


# --- how many elements, for --max-elements ---

def largest_output(example: Example) -> int:
    """indices' size times the largest depth any cast gives (0 where the case is invalid)."""
    depth = example.inputs.get("depth")
    indices = example.inputs.get("indices")
    if depth is None or indices is None or depth.size != 1:
        return 0
    found = [depth_of(example, r) for r in ROUNDINGS]
    return max((indices.size * d for d in found if isinstance(d, int)), default=0)


# --- traits ---

def _valid_indices(example: Example) -> np.ndarray | None:
    indices = example.inputs.get("indices")
    return indices if isinstance(indices, np.ndarray) else None


def _depths(example: Example) -> list[int]:
    depth = example.inputs.get("depth")
    if not isinstance(depth, np.ndarray) or depth.size != 1:
        return []
    return [d for d in (depth_of(example, r) for r in roundings_of(example)) if isinstance(d, int)]


def negative_index(example: Example) -> bool:
    """An index below 0 (after the cast): OneHot-11 counts it from the back, OneHot-9 gives an all-off row."""
    indices = _valid_indices(example)
    if indices is None or not indices.size:
        return False
    positions, undefined = cast_to_int64(indices, TRUNCATE)
    return any(v < 0 for v, u in zip(positions.reshape(-1).tolist(), undefined.reshape(-1).tolist()) if not u)


def index_out_of_range(example: Example) -> bool:
    """An index outside the version's range ([0, depth) or [-depth, depth-1]): an all-off row."""
    indices = _valid_indices(example)
    depths = _depths(example)
    if indices is None or not indices.size or not depths:
        return False
    lowest_counts = REFERENCE.semantics_for(example.version).negative_indices_count_back
    positions, undefined = cast_to_int64(indices, TRUNCATE)
    for depth in depths:
        low = -depth if lowest_counts else 0
        if any(not low <= v < depth for v, u in zip(positions.reshape(-1).tolist(), undefined.reshape(-1).tolist()) if not u):
            return True
    return False


def float_indices(example: Example) -> bool:
    """indices of a float type: cast to int64 before use."""
    return dtype(example.types.get("T1", "int64")).kind == "float"


def fractional_index(example: Example) -> bool:
    """A float index that is no integer: which int64 the cast gives depends on its rounding."""
    indices = _valid_indices(example)
    return indices is not None and _fractional(indices)


def undefined_index(example: Example) -> bool:
    """A NaN, infinite or beyond-int64 float index: its cast is undefined, its row free."""
    indices = _valid_indices(example)
    if indices is None or indices.dtype.kind in "iub" or not indices.size:
        return False
    return bool(cast_to_int64(indices, TRUNCATE)[1].any())


def unsigned_index_beyond_int64(example: Example) -> bool:
    """A uint64 index of 2**63 or more: out of range (all off), -1 or less where a runtime reads it as int64."""
    indices = _valid_indices(example)
    return indices is not None and indices.dtype == np.uint64 and bool((indices >= np.uint64(2**63)).any())


def float_depth(example: Example) -> bool:
    """depth of a float type: cast to int64 before use."""
    return dtype(example.types.get("T2", "int64")).kind == "float"


def fractional_depth(example: Example) -> bool:
    """A float depth that is no integer: its size depends on the cast's rounding."""
    depth = example.inputs.get("depth")
    return isinstance(depth, np.ndarray) and _fractional(depth)


def depth_one_element_tensor(example: Example) -> bool:
    """depth given as a rank-1 tensor of one element (the text allows it beside a scalar)."""
    depth = example.inputs.get("depth")
    return isinstance(depth, np.ndarray) and depth.shape == (1,)


def depth_zero(example: Example) -> bool:
    """depth 0 (after the cast): an empty one-hot dimension."""
    return 0 in _depths(example)


def axis_not_last(example: Example) -> bool:
    """The one-hot dimension inserted before the last place (axis other than -1 and r)."""
    indices = _valid_indices(example)
    axis = int(example.attributes.get("axis", -1))
    return indices is not None and axis not in (-1, indices.ndim)


def negative_axis(example: Example) -> bool:
    """`axis` written negative, other than the default -1."""
    return int(example.attributes.get("axis", -1)) < -1


def empty_indices(example: Example) -> bool:
    """indices with no elements."""
    indices = _valid_indices(example)
    return indices is not None and indices.size == 0


def rank_0_indices(example: Example) -> bool:
    """A 0-d indices: the output is 1-D, of depth elements."""
    indices = _valid_indices(example)
    return indices is not None and indices.ndim == 0


def nan_values(example: Example) -> bool:
    """A NaN among [off_value, on_value]."""
    values = example.inputs.get("values")
    if not isinstance(values, np.ndarray) or values.dtype.kind in "OUSbiu":
        return False
    with np.errstate(invalid="ignore"):
        wide = values if values.dtype.kind == "c" else values.astype(np.float64)
    return bool(np.isnan(wide).any())


REFERENCE = OpReference(
    op="OneHot",
    dtype_param="T3",
    semantics=(OneHot9, OneHot11),
    data_inputs=("indices",),
    output_elements_from=largest_output,
    covering_bindings=True,  # indices x depth x values types: 1,815 bindings (1,936 in OneHot-28)
    rules=("axis-out-of-range", "depth-not-one-value", "values-not-two", "depth-negative", "depth-undefined"),
    traits={"negative-index": negative_index, "index-out-of-range": index_out_of_range,
            "float-indices": float_indices, "fractional-index": fractional_index, "undefined-index": undefined_index,
            "unsigned-index-beyond-int64": unsigned_index_beyond_int64, "float-depth": float_depth,
            "fractional-depth": fractional_depth, "depth-one-element-tensor": depth_one_element_tensor,
            "depth-zero": depth_zero, "axis-not-last": axis_not_last, "negative-axis": negative_axis,
            "empty-indices": empty_indices, "rank-0-indices": rank_0_indices, "nan-values": nan_values},
)
