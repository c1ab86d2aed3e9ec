"""Reference for Unique (version 11): the unique elements of X (flattened), or its unique subtensors
along `axis`, with three optional outputs: the first occurrence of each in X (`indices`), each of
X's elements (or subtensors) as an index into Y (`inverse_indices`), and how often each occurs
(`counts`).

"Outputs are either sorted in ascending order or optionally in the order of the first occurrence of
the values in the input": `sorted` = 0 fixes the order (first occurrence), so it is judged exactly.
Subtensors sort lexicographically, their elements in row-major order (the text's Example 4); strings
by code point, False before True, complex numbers by real then imaginary part (numpy's order, which
the text points to: complex numbers have no ascending order, so a rejection is allowed for them).

Two elements (or subtensors) are one value where they are equal: -0.0 and 0.0 are one value; the
text does not say which occurrence's bits Y holds, so a zero's sign is left open (`Reading.choices`:
any occurrence's; the first occurrence's, which `indices` points to, is the value written). The
text is silent on NaN: all NaNs one value (numpy) and each NaN a value of its own (NaN != NaN) are
both readings, and sorted, NaN goes after every number (numpy) or before. Output shapes depend on
the values: the model declares them with unknown dims.
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from ..equality import arrays_identical
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings

AXIS_RANGE = ("axis: (Optional) The dimension to apply unique. Negative value means counting dimensions from the back. "
              "Accepted range is [-r, r-1] where r = rank(input).")
SORTED_VALUES = "sorted: (Optional) Whether to sort the unique elements in ascending order before returning as output. " \
                "Must be one of 0, or 1 (default)."
COMPLEX_ORDER = ("Outputs are either sorted in ascending order: complex numbers have no ascending order; numpy's (real "
                 "part, then imaginary part), which the text points to, is the reading, and a rejection is allowed")
NAN_VALUES = ("the text does not say whether NaNs are one value (numpy) or each its own (NaN != NaN), nor, sorted, "
              "whether NaN goes after every number (numpy) or before")
ZERO_SIGN = "Y's zeros of either sign (-0.0 and 0.0 are one value; the text does not say which occurrence Y holds)"

# (NaNs one value, NaN sorted after every number, label) for each NaN reading.
NAN_READINGS = ((True, True, "NaNs one value, sorted after every number (numpy)"),
                (True, False, "NaNs one value, sorted before every number"),
                (False, True, "each NaN its own value, sorted after every number"),
                (False, False, "each NaN its own value, sorted before every number"))


def items_of(data: np.ndarray, axis: int | None) -> tuple[np.ndarray, list[list]]:
    """The items Unique compares: X's elements (axis None) or its subtensors along `axis`, each as
    the list of its elements in row-major order, as Python values; and the array they come from
    (X flattened, or X)."""
    source = data.reshape(-1) if axis is None else data
    moved = source.reshape(-1, 1) if axis is None else np.moveaxis(data, axis, 0)
    count = moved.shape[0]
    flat = moved.reshape(count, -1) if count else moved.reshape(0, 0)
    return source, [_python_values(row) for row in flat]


def _python_values(row: np.ndarray) -> list:
    if row.dtype.kind in "OUSbiuc":
        return row.tolist()
    with np.errstate(invalid="ignore"):
        return row.astype(np.float64).tolist()  # bfloat16 and float16 exact in float64


def element_key(value, item: int, nan_one: bool, nan_last: bool) -> tuple:
    """A key that orders an element as the text's ascending order does and is equal exactly for
    elements that are one value (0.0 and -0.0 alike); NaN by the reading's convention."""
    if isinstance(value, complex):
        if math.isnan(value.real) or math.isnan(value.imag):
            return (1 if nan_last else -1, 0 if nan_one else item)
        return (0, (value.real, value.imag))
    if isinstance(value, float) and math.isnan(value):
        return (1 if nan_last else -1, 0 if nan_one else item)
    return (0, value)


def unique(data: np.ndarray, axis: int | None, in_order: bool, nan_one: bool = True,
           nan_last: bool = True) -> tuple[tuple[np.ndarray, ...], list[list[int]]]:
    """Y, indices, inverse_indices and counts under one NaN reading; and each unique value's
    occurrences (item positions, first first), in Y's order."""
    source, items = items_of(data, axis)
    groups: dict[tuple, list[int]] = {}
    for position, item in enumerate(items):
        key = tuple(element_key(value, position, nan_one, nan_last) for value in item)
        groups.setdefault(key, []).append(position)
    keys = sorted(groups) if in_order else list(groups)  # dicts keep first-occurrence order
    members = [groups[key] for key in keys]
    first = np.array([m[0] for m in members], dtype=np.int64)
    slot = {key: n for n, key in enumerate(keys)}
    inverse = np.empty(len(items), dtype=np.int64)
    for key, positions in groups.items():
        inverse[positions] = slot[key]
    y = source[first] if axis is None else np.take(source, first, axis=axis)
    counts = np.array([len(m) for m in members], dtype=np.int64)
    return (y, first, inverse, counts), members


def any_occurrence(y: np.ndarray, source: np.ndarray, axis: int | None, members: list[list[int]]) -> np.ndarray | None:
    """Y's values as any occurrence of each unique value may hold them (zeros of either sign, NaNs
    of any payload): a layer per occurrence (`Reading.choices`); None where every occurrence holds
    the same bits."""
    depth = max((len(m) for m in members), default=0)
    layers = []
    for layer in range(depth):
        chosen = np.array([m[min(layer, len(m) - 1)] for m in members], dtype=np.int64)
        layers.append(source[chosen] if axis is None else np.take(source, chosen, axis=axis))
    if len(layers) < 2 or y.dtype.kind in "OUSbiu":
        return None
    if all(arrays_identical(y, layer, strict_zero=True) for layer in layers):
        return None  # NaN payloads aside (any NaN matches any NaN), every occurrence is the same
    return np.stack(layers)


class Unique11(VersionSemantics):
    """Unique-11: the unique values (or subtensors along `axis`), sorted ascending or in order of
    first occurrence, with their first occurrences, X's indices into Y, and their counts."""

    since = 11

    def axis_of(self, example: Example) -> int | None | Invalid:
        axis = example.attributes.get("axis")
        if axis is None:
            return None
        rank = example.inputs["X"].ndim
        axis = int(axis)
        if not -rank <= axis < rank:
            return Invalid("axis-out-of-range", AXIS_RANGE if rank else f"{AXIS_RANGE}; X has rank 0")
        return axis + rank if axis < 0 else axis

    def expected(self, example: Example) -> Expected:
        data = example.inputs["X"]
        axis = self.axis_of(example)
        if isinstance(axis, Invalid):
            return Expected(invalid=axis)
        in_order = example.attributes.get("sorted", 1)
        if in_order not in (0, 1):
            return Expected(invalid=Invalid("sorted-not-0-or-1", SORTED_VALUES))
        conventions = NAN_READINGS if _holds_nan(data) else NAN_READINGS[:1]
        if not in_order:  # in order of first occurrence, where NaN sorts does not matter
            conventions = tuple(c for c in conventions if c[1])
        found = []
        for nan_one, nan_last, label in conventions:
            outputs, members = unique(data, axis, bool(in_order), nan_one, nan_last)
            label = label if len(conventions) > 1 else "spec"
            layers = any_occurrence(outputs[0], data.reshape(-1) if axis is None else data, axis, members)
            if layers is None:
                found.append(Reading(outputs, label))
            else:  # one reading, its zeros' signs open: a runtime keeping either occurrence passes
                found.append(Reading(outputs, ZERO_SIGN if label == "spec" else f"{label}; {ZERO_SIGN}",
                                     choices=(layers, None, None, None)))
        may_reject = COMPLEX_ORDER if in_order and data.dtype.kind == "c" else None
        return readings(found, NAN_VALUES, may_reject=may_reject)


def _holds_nan(data: np.ndarray) -> bool:
    if data.dtype.kind in "OUSbiu" or not data.size:
        return False
    with np.errstate(invalid="ignore"):
        wide = data if data.dtype.kind == "c" else data.astype(np.float64)
    return bool(np.isnan(wide).any())


def _data(example: Example) -> np.ndarray | None:
    data = example.inputs.get("X")
    return data if isinstance(data, np.ndarray) else None


def nan_in_data(example: Example) -> bool:
    """A NaN in X: the text does not say whether NaNs are one value, nor where they sort."""
    data = _data(example)
    return data is not None and _holds_nan(data)


def negative_zero(example: Example) -> bool:
    """-0.0 and 0.0 both in X (in one complex part too): one value, whose first occurrence Y holds."""
    data = _data(example)
    if data is None or data.dtype.kind in "OUSbiu" or not data.size:
        return False
    parts = (data.real, data.imag) if data.dtype.kind == "c" else (data.astype(np.float64),)
    zeros = [p[p == 0] for p in parts]
    signs = {bool(s) for z in zeros for s in np.signbit(z).reshape(-1)}
    return len(signs) == 2


def with_axis(example: Example) -> bool:
    """Unique subtensors along `axis`, not unique elements."""
    return example.attributes.get("axis") is not None


def negative_axis(example: Example) -> bool:
    """`axis` written negative."""
    axis = example.attributes.get("axis")
    return axis is not None and int(axis) < 0


def unsorted(example: Example) -> bool:
    """sorted = 0: Y in order of first occurrence."""
    return example.attributes.get("sorted", 1) == 0


def outputs_left_out(example: Example) -> bool:
    """Some optional output left out of the node."""
    return bool(example.outputs) and not all(example.outputs)


def optional_outputs(example: Example) -> bool:
    """Some optional output (indices, inverse_indices, counts) asked for beside Y: a runtime whose
    Unique has Y alone cannot build the node."""
    return not example.outputs or any(example.outputs[1:])


def empty_data(example: Example) -> bool:
    """X with no elements (a dim of 0)."""
    data = _data(example)
    return data is not None and data.size == 0


def empty_subtensors(example: Example) -> bool:
    """With `axis`, subtensors along it that have no elements (another dim 0) while the axis has
    some: every subtensor equal, one unique (Y of dim 1 on the axis)."""
    data = _data(example)
    axis = example.attributes.get("axis")
    if data is None or axis is None or not -data.ndim <= int(axis) < data.ndim:
        return False
    return data.size == 0 and data.shape[int(axis)] > 0


def duplicates(example: Example) -> bool:
    """Some value (or subtensor) occurs more than once: counts above 1, inverse_indices repeating."""
    data = _data(example)
    if data is None:
        return False
    semantics = REFERENCE.semantics_for(example.version)
    axis = semantics.axis_of(example)
    if isinstance(axis, Invalid) or example.attributes.get("sorted", 1) not in (0, 1):
        return False
    _, items = items_of(data, axis)
    return len({tuple(element_key(v, 0, True, True) for v in item) for item in items}) < len(items)


def complex_sorted(example: Example) -> bool:
    """Complex X sorted: the text's ascending order does not exist for complex numbers."""
    data = _data(example)
    return data is not None and data.dtype.kind == "c" and example.attributes.get("sorted", 1) == 1


REFERENCE = OpReference(
    op="Unique",
    dtype_param="T",
    semantics=(Unique11,),
    data_inputs=("X",),
    traits={"nan-in-data": nan_in_data, "negative-zero": negative_zero, "with-axis": with_axis,
            "negative-axis": negative_axis, "unsorted": unsorted, "outputs-left-out": outputs_left_out,
            "optional-outputs": optional_outputs,
            "empty-data": empty_data, "empty-subtensors": empty_subtensors, "duplicates": duplicates,
            "complex-sorted": complex_sorted},
    rules=("axis-out-of-range", "sorted-not-0-or-1"),
)
