"""Triangular: Trilu (data-movement family, movement.py) and EyeLike (values of its own).

Trilu keeps the upper or lower triangle of each matrix in the last two dims, counted from the
diagonal k (its optional 0-D input), and sets the rest to zero: its map is the input's positions
with FILL off the triangle, the fill the dtype's zero. EyeLike moves no element: its output is
ones on diagonal k and zeros elsewhere, in the shape of its 2-D input and the type its `dtype`
attribute names (the input's where absent), so it answers `expected` directly.
"""

from __future__ import annotations

import numpy as np

from ..case import Example
from ..dtypes import dtype, from_elem_type
from .base import Expected, Invalid, OpReference, VersionSemantics, single
from .movement import FILL, MovementSemantics, Moved, positions

TRILU_RANK = "input: Input tensor of rank 2 or higher."
K_SCALAR = ("k: A 0-D tensor containing a single value corresponding to the number diagonals above or below the main "
            "diagonal to exclude or include.")
K_SHAPE_1 = ("k: A 0-D tensor containing a single value: a tensor of shape [1] holds a single value but is not 0-D; "
             "its value is the reading, and a runtime may also reject it")
STRING_ZERO = ("All other elements in the matrix are set to zero: a string tensor has no zero; the empty string (the "
               "string type's default) and the string '0' are both readings")
EYE_RANK = "Only 2D tensors are supported, i.e. input T1 must be of rank 2."


class Trilu14(MovementSemantics):
    """Trilu: upper (default) keeps j - i >= k of each matrix [*, N, M]; lower keeps j - i <= k;
    every other element is zero."""

    since = 14

    def moved(self, example: Example) -> Moved | list[Moved] | Invalid:
        data = example.inputs["input"]
        if data.ndim < 2:
            return Invalid("rank-below-2", TRILU_RANK)
        k = diagonal(example)
        if isinstance(k, Invalid):
            return k
        kept = triangle(data.shape[-2], data.shape[-1], k, bool(example.attributes.get("upper", 1)))
        index = np.where(kept, positions([data.shape])[0], FILL)
        may_reject = K_SHAPE_1 if example.inputs.get("k") is not None and example.inputs["k"].ndim else None
        if data.dtype.kind != "O":
            return Moved((index,), fill=np.zeros((), data.dtype), may_reject=may_reject)
        return [Moved((index,), "zero as the empty string", "", STRING_ZERO, may_reject),
                Moved((index,), "zero as the string '0'", "0", STRING_ZERO, may_reject)]


def diagonal(example: Example) -> int | Invalid:
    """k: 0 where the input is omitted, else its single value."""
    k = example.inputs.get("k")
    if k is None:
        return 0
    if k.size != 1:
        return Invalid("k-not-scalar", K_SCALAR)
    return int(k.reshape(-1)[0])


def triangle(rows: int, cols: int, k: int, upper: bool) -> np.ndarray:
    """Which elements of a rows x cols matrix the triangle keeps (Python ints: no k overflows)."""
    offset = np.arange(cols, dtype=object)[None, :] - np.arange(rows, dtype=object)[:, None]  # j - i
    return np.asarray(offset >= k if upper else offset <= k, dtype=bool).reshape(rows, cols)


class EyeLike9(VersionSemantics):
    """EyeLike: ones at [i, i + k], zeros elsewhere, in the input's 2-D shape and the output's type."""

    since = 9

    def expected(self, example: Example) -> Expected:
        data = example.inputs["input"]
        if data.ndim != 2:
            return Expected(invalid=Invalid("not-2d", EYE_RANK))
        rows, cols = data.shape
        k = int(example.attributes.get("k", 0))
        ones = np.zeros((rows, cols), dtype=np.int64)
        for i in range(max(0, -k), min(rows, cols - k)):  # the rows whose [i, i + k] lies inside
            ones[i, i + k] = 1
        return single(ones.astype(dtype(example.output_dtypes[0]).np_dtype))


def output_type(version, binding: dict[str, str]) -> dict:
    """EyeLike's `dtype`, where the binding's output type T2 differs from the input's T1 (the only
    way the node says so); left out where they agree, as the text's default."""
    if binding["T2"] == binding["T1"]:
        return {}
    return {"dtype": dtype(binding["T2"]).elem_type}


def output_type_problem(example: Example) -> str | None:
    """Where `dtype` (or, without it, the input's type) names another type than the binding's T2."""
    given = example.attributes.get("dtype")
    named = example.types["T1"] if given is None else from_elem_type(int(given)).name
    bound = example.types["T2"]
    if named == bound:
        return None
    what = f"'dtype' names {named}" if given is not None else f"without 'dtype' the output is the input's type, {named}"
    return f"{what}, but the output's type (T2) is {bound}"


def k_value(example: Example) -> int | None:
    """Trilu's k as the case gives it (0 omitted), or EyeLike's; None where unreadable."""
    if example.op == "EyeLike":
        return int(example.attributes.get("k", 0))
    k = diagonal(example)
    return None if isinstance(k, Invalid) else k


def k_beyond_dim(example: Example) -> bool:
    """A diagonal k outside the matrix: at or past its last column or its last row (Trilu keeps
    all or none of it; EyeLike has no one to set)."""
    data, k = example.inputs["input"], k_value(example)
    if k is None or data.ndim < 2:
        return False
    rows, cols = data.shape[-2:]
    return k >= cols or k <= -rows


def k_int64_min(example: Example) -> bool:
    """Trilu's k at int64's lowest value, the one whose negation (or k - 1) does not fit in int64."""
    return example.op == "Trilu" and k_value(example) == -(2**63)


def k_int64_max(example: Example) -> bool:
    """Trilu's k at int64's largest value, the one k + 1 (or a column index minus k's complement)
    overflows."""
    return example.op == "Trilu" and k_value(example) == 2**63 - 1


def k_negative(example: Example) -> bool:
    """A diagonal below the main one."""
    k = k_value(example)
    return k is not None and k < 0


def k_input(example: Example) -> bool:
    """Trilu's k given as its input (not left to its default, 0)."""
    return example.inputs.get("k") is not None


def lower(example: Example) -> bool:
    """Trilu with upper = 0: the lower triangle."""
    return not example.attributes.get("upper", 1)


def batched(example: Example) -> bool:
    """Trilu on matrices of rank above 2: a batch of them."""
    return example.inputs["input"].ndim > 2


def empty_input(example: Example) -> bool:
    """An input with a dim of 0."""
    return example.inputs["input"].size == 0


def eyelike_dtype(example: Example) -> bool:
    """EyeLike's `dtype` names another type than its input's: the output's type is the attribute's."""
    return example.types["T2"] != example.types["T1"]


def non_square(example: Example) -> bool:
    """EyeLike of a matrix with more rows than columns or more columns than rows."""
    data = example.inputs["input"]
    return data.ndim == 2 and data.shape[0] != data.shape[1]


REFERENCES = (
    OpReference(op="Trilu", dtype_param="T", semantics=(Trilu14,), data_inputs=("input",),
                traits={"k-beyond-dim": k_beyond_dim, "k-int64-min": k_int64_min,
                        "k-int64-max": k_int64_max, "k-negative": k_negative,
                        "k-input": k_input, "lower-triangle": lower, "batched-matrices": batched,
                        "empty-input": empty_input},
                rules=("rank-below-2", "k-not-scalar")),
    OpReference(op="EyeLike", dtype_param="T1", semantics=(EyeLike9,), data_inputs=("input",),
                binding_attributes=output_type, binding_problem=output_type_problem,
                traits={"eyelike-dtype": eyelike_dtype, "k-beyond-dim": k_beyond_dim, "k-negative": k_negative,
                        "non-square": non_square},
                rules=("not-2d",)),
)
