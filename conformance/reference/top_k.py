"""Reference for TopK (versions 1, 10, 11, 24): the k largest (or smallest) elements along an axis,
their values and their indices, computed from the text.

The order is a stable sort: "Given two equivalent values, this operator uses the indices along the
axis as a tiebreaker. That is, the element with the lower index will appear first." -0.0 and 0.0
are equivalent values, so the lower index wins between them too, and each keeps its own sign in
`Values`. The text is silent on NaN: NaN ranked above every number (numpy's sort order) and NaN
ranked below every number are both readings, NaNs among themselves by index. With `sorted` = 0
(TopK-11 on) the order of the k elements is free: a runtime's outputs are put in index order along
the axis (`Expected.order`) and compared with the readings written in that order; which elements
are the top k is what `sorted` = 1 gives (the tiebreaker picks among equivalent values at the
k-th place).

TopK-1 takes k as an attribute, TopK-10 as a 1-D input "containing a single positive value"; k = 0
is no positive value, but the output shape the text gives is well defined for it (empty): its
reading is the empty outputs, and a rejection is allowed beside it. A k above the axis's size has
no k elements to return: invalid, as is a negative k. TopK-24 only widens T (bfloat16).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings

TIE_RULE = ("Given two equivalent values, this operator uses the indices along the axis as a tiebreaker. That is, the "
            "element with the lower index will appear first.")
UNSORTED = "If \"sorted\" is 0, order of returned 'Values' and 'Indices' are undefined."
K_INPUT = "K: A 1-D tensor containing a single positive value corresponding to the number of top elements to retrieve"
K_ATTRIBUTE = "k: Number of top elements to retrieve (a count: not below 0)"
K_ZERO = ("K: A 1-D tensor containing a single positive value: k = 0 is no positive value, so a rejection is allowed; "
          "the output shape [a_0, ..., k, ..., a_{n-1}] the text gives is empty for it, the reading conform gives")
K_BEYOND = ("Value tensor of shape [a_0, a_1, ..., a_{axis-1}, k, a_{axis+1}, ... a_{n-1}] which contains the values of "
            "the top k elements along the specified axis: an axis of fewer than k elements has no k top elements")
AXIS_RANGE = ("axis: Dimension on which to do the sort. Negative value means counting dimensions from the back. "
              "Accepted range is [-r, r-1] where r = rank(input).")
AXIS_BEFORE_11 = "axis: Dimension on which to do the sort (default -1: the last; TopK-1 and -10 give no range)"
NEGATIVE_AXIS_BEFORE_11 = ("axis: the TopK-1 and -10 texts give a negative axis meaning only through its default, -1 "
                           "(the last dimension); counting other negative axes from the back is the reading, and a "
                           "rejection is allowed")
NAN_ORDER = ("the text does not say where NaN ranks among the values: above every number (numpy's sort order) and "
             "below every number are both readings")
NAN_LARGEST = "NaN ranked above every number (numpy's sort order)"
NAN_SMALLEST = "NaN ranked below every number"


def ranks(data: np.ndarray, nan_largest: bool) -> np.ndarray:
    """Each element's dense rank among the values of `data` (equal values one rank, -0.0 and 0.0
    included), NaN above or below every number: int64 keys a stable sort orders as the values."""
    flat = data.reshape(-1)
    if flat.dtype.kind not in "iub":
        with np.errstate(invalid="ignore"):
            flat = flat.astype(np.float64)  # every float type TopK takes is exact in float64
    nan = np.isnan(flat) if flat.dtype.kind == "f" else np.zeros(flat.shape, dtype=bool)
    found = np.empty(flat.shape, dtype=np.int64)
    distinct, inverse = np.unique(flat[~nan], return_inverse=True)
    found[~nan] = inverse.reshape(-1)
    found[nan] = len(distinct) if nan_largest else -1
    return found.reshape(data.shape)


def top_k(data: np.ndarray, k: int, axis: int, largest: bool, nan_largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """The text's Values and Indices, sorted: a stable sort along `axis`, so the lower index comes
    first among equivalent values."""
    keys = ranks(data, nan_largest)
    order = np.argsort(-keys if largest else keys, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis).astype(np.int64)
    return np.take_along_axis(data, indices, axis=axis), indices


def in_index_order(outputs: tuple[np.ndarray, ...], axis: int) -> tuple[np.ndarray, np.ndarray]:
    """A runtime's Values and Indices with each slice along `axis` put in ascending index order (the
    order `sorted` = 0 readings are written in); ValueError where they are no such pair."""
    if len(outputs) != 2:
        raise ValueError(f"TopK has 2 outputs, got {len(outputs)}")
    values, indices = outputs
    if values.shape != indices.shape or indices.dtype != np.int64 or not -values.ndim <= axis < values.ndim:
        raise ValueError("Values and Indices of different shapes, or Indices not int64")
    order = np.argsort(indices, axis=axis, kind="stable")
    return np.take_along_axis(values, order, axis=axis), np.take_along_axis(indices, order, axis=axis)


class TopK1(VersionSemantics):
    """TopK-1: the k largest elements along `axis` (default -1), k an attribute, sorted descending."""

    since = 1
    k_sentence = K_ATTRIBUTE
    axis_sentence = AXIS_BEFORE_11
    negative_axes_stated = False

    def k_of(self, example: Example) -> int | Invalid:
        k = int(example.attributes["k"])
        return Invalid("k-negative", self.k_sentence) if k < 0 else k

    def k_zero_may_reject(self) -> str | None:
        return None

    def expected(self, example: Example) -> Expected:
        data = example.inputs["X"]
        axis = self.axis_of(example, data.ndim)
        if isinstance(axis, Invalid):
            return Expected(invalid=axis)
        k = self.k_of(example)
        if isinstance(k, Invalid):
            return Expected(invalid=k)
        if k > data.shape[axis]:
            return Expected(invalid=Invalid("k-beyond-dim", K_BEYOND))
        largest = bool(example.attributes.get("largest", 1))
        in_order = bool(example.attributes.get("sorted", 1))
        may_reject = self.may_reject(example, k)
        return self.answers(data, k, axis, largest, in_order, may_reject)

    def axis_of(self, example: Example, rank: int) -> int | Invalid:
        axis = int(example.attributes.get("axis", -1))
        if not -rank <= axis < rank:
            return Invalid("axis-out-of-range", self.axis_sentence if rank else f"{self.axis_sentence}; X has rank 0")
        return axis + rank if axis < 0 else axis

    def may_reject(self, example: Example, k: int) -> str | None:
        axis = int(example.attributes.get("axis", -1))
        reasons = [self.k_zero_may_reject() if k == 0 else None,
                   NEGATIVE_AXIS_BEFORE_11 if axis < -1 and not self.negative_axes_stated else None]
        return "; ".join(filter(None, reasons)) or None

    def answers(self, data: np.ndarray, k: int, axis: int, largest: bool, in_order: bool,
                may_reject: str | None) -> Expected:
        options = [(NAN_LARGEST, True), (NAN_SMALLEST, False)] if _holds_nan(data) else [("spec", True)]
        found = []
        for label, nan_largest in options:
            outputs = top_k(data, k, axis, largest, nan_largest)
            if not in_order:
                outputs = in_index_order(outputs, axis)
                label = "any order (sorted=0)" if label == "spec" else f"{label}; any order (sorted=0)"
            found.append(Reading(outputs, label))
        expected = readings(found, NAN_ORDER, may_reject=may_reject)
        if in_order:
            return expected
        return Expected(readings=expected.readings, ambiguity=expected.ambiguity, may_reject=may_reject,
                        order=partial(in_index_order, axis=axis), order_note=UNSORTED)


class TopK10(TopK1):
    """TopK-10: k is the input K, "a 1-D tensor containing a single positive value"."""

    since = 10
    k_sentence = K_INPUT

    def k_of(self, example: Example) -> int | Invalid:
        given = example.inputs["K"]
        if given.shape != (1,):
            return Invalid("k-not-one-value", K_INPUT)
        k = int(given[0])
        return Invalid("k-negative", K_INPUT) if k < 0 else k

    def k_zero_may_reject(self) -> str | None:
        return K_ZERO


class TopK11(TopK10):
    """TopK-11: `largest` (1: the k largest; 0: the k smallest), `sorted` (0: any order), negative
    axes counted from the back, integer T."""

    since = 11
    axis_sentence = AXIS_RANGE
    negative_axes_stated = True


def _holds_nan(data: np.ndarray) -> bool:
    if data.dtype.kind in "iub" or not data.size:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.isnan(data.astype(np.float64)).any())


def _data(example: Example) -> np.ndarray | None:
    data = example.inputs.get("X")
    return data if isinstance(data, np.ndarray) else None


def _axis_and_k(example: Example) -> tuple[int, int] | None:
    """The case's axis (non-negative) and k where both are in range; None otherwise."""
    data = _data(example)
    if data is None or not data.ndim:
        return None
    semantics = REFERENCE.semantics_for(example.version)
    axis = semantics.axis_of(example, data.ndim)
    k = semantics.k_of(example)
    if isinstance(axis, Invalid) or isinstance(k, Invalid) or k > data.shape[axis]:
        return None
    return axis, k


def _wide(data: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return data.astype(np.float64) if data.dtype.kind not in "iub" else data


def nan_in_data(example: Example) -> bool:
    """A NaN in X: the text does not rank it (see NAN_ORDER)."""
    data = _data(example)
    return data is not None and _holds_nan(data)


def infinity_in_data(example: Example) -> bool:
    """+inf or -inf in X: a kernel that starts its search from +-FLT_MAX, or pads with an infinity,
    mistakes them."""
    data = _data(example)
    if data is None or data.dtype.kind in "iub" or not data.size:
        return False
    return bool(np.isinf(_wide(data)).any())


def ties(example: Example) -> bool:
    """Two equivalent values (not NaN) in one slice along the axis: the tiebreaker decides their
    order, and at the k-th place which one is returned."""
    found = _axis_and_k(example)
    data = _data(example)
    if found is None or not data.size:
        return False
    keys = np.moveaxis(ranks(data, True), found[0], -1).reshape(-1, data.shape[found[0]])
    nan = np.moveaxis(np.isnan(_wide(data)) if data.dtype.kind not in "iub" else np.zeros(data.shape, bool),
                      found[0], -1).reshape(keys.shape)
    return any(len(set(row[~mask].tolist())) < int((~mask).sum()) for row, mask in zip(keys, nan))


def negative_zero(example: Example) -> bool:
    """A -0.0 in X: equivalent to 0.0, so the tiebreaker orders them and each keeps its sign."""
    data = _data(example)
    if data is None or data.dtype.kind in "iub" or not data.size:
        return False
    wide = _wide(data)
    return bool(((wide == 0) & np.signbit(wide)).any())


def k_zero(example: Example) -> bool:
    """k = 0: empty outputs (TopK-10 on: no positive value, a rejection allowed)."""
    found = _axis_and_k(example)
    return found is not None and found[1] == 0


def k_is_dim(example: Example) -> bool:
    """k equal to the axis's size (every element returned, sorted), the axis not empty."""
    found = _axis_and_k(example)
    return found is not None and found[1] == _data(example).shape[found[0]] > 0


def unsorted(example: Example) -> bool:
    """sorted = 0: any order of the k elements."""
    return not example.attributes.get("sorted", 1)


def smallest(example: Example) -> bool:
    """largest = 0: the k smallest elements, ascending."""
    return not example.attributes.get("largest", 1)


def negative_axis(example: Example) -> bool:
    """An axis written negative, other than the default -1."""
    return int(example.attributes.get("axis", -1)) < -1


def k_scalar(example: Example) -> bool:
    """K given as a 0-d tensor (the text wants a 1-D tensor of one value)."""
    given = example.inputs.get("K")
    return isinstance(given, np.ndarray) and given.ndim == 0


def k_input(example: Example) -> bool:
    """k given as the input K (TopK-10 on): with symbolic dims in the model, K's shape is not known
    before it is fed, which an engine that reads k while it builds the graph cannot take."""
    return isinstance(example.inputs.get("K"), np.ndarray)


def empty_data(example: Example) -> bool:
    """X with no elements (a dim of 0)."""
    data = _data(example)
    return data is not None and data.ndim > 0 and data.size == 0


REFERENCE = OpReference(
    op="TopK",
    dtype_param="T",
    semantics=(TopK1, TopK10, TopK11),
    data_inputs=("X",),
    traits={"nan-in-data": nan_in_data, "infinity-in-data": infinity_in_data, "ties": ties,
            "negative-zero": negative_zero, "k-zero": k_zero, "k-is-dim": k_is_dim, "unsorted": unsorted,
            "smallest": smallest, "negative-axis": negative_axis, "k-scalar": k_scalar, "k-input": k_input,
            "empty-data": empty_data},
    rules=("axis-out-of-range", "k-negative", "k-not-one-value", "k-beyond-dim"),
)
