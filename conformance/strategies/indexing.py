"""Random Gather, GatherElements, GatherND and Compress cases: data of any dtype and shape (size-0
dims among them), indices of int32 and int64 weighted to the bounds the text names (0, s-1, -s
where negatives count from the back, rank-0 and empty index tensors), GatherND's batch_dims and
index tuples from length 1 to the whole rank, Compress's condition shorter, as long as and longer
than the axis; and a small share of what the text forbids (an index of s or -s-1, a negative one
in Gather-1, an axis out of range, ranks and shapes that do not fit, a condition that selects past
the end)."""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from .common import Choices, array, dim, invalid_share, one_in, pick, shape
from .movement import axis_value, made, outside_axis

INDEX_BYTES = 20  # one byte per index value: the first twenty shrink on their own
KINDS = 6  # how a byte reads (see `index_value`)


def index_value(choices: Choices, size: int, negative: bool) -> int:
    """An index into an axis of `size` (> 0) from one byte: 0, s-1, -s (where negatives count from
    the back), or any in range, negative half the time where allowed. Shrinks to 0."""
    n = choices.integer(0, 255)
    kind, spread = n % KINDS, n // KINDS
    if kind == 1:
        return size - 1
    if kind == 2 and negative:
        return -size
    if kind == 4 and negative:
        return -1 - spread % size
    return 0 if kind == 0 else spread % size


def index_array(choices: Choices, dims: tuple[int, ...], sizes: list[int], negative: bool, index_dtype) -> np.ndarray:
    """An index tensor of shape `dims`, element k into an axis of sizes[k % len(sizes)] (each > 0
    where the tensor has elements), read from a section of INDEX_BYTES."""
    part = choices.section(INDEX_BYTES)
    count = math.prod(dims)
    values = [index_value(part, sizes[k % len(sizes)], negative) for k in range(count)]
    return np.array(values, dtype=index_dtype.np_dtype).reshape(dims)


def out_of_range(choices: Choices, indices: np.ndarray, size: int, negative_allowed: bool) -> np.ndarray:
    """`indices` with one element just outside what the text allows: s, -s-1, or -1 where no
    negative index has a meaning (Gather-1)."""
    broken = indices.reshape(-1).copy()
    if broken.size:
        broken[choices.integer(0, broken.size - 1)] = pick(choices, (size, -size - 1) if negative_allowed else (size, -1))
    return broken.reshape(indices.shape)


def emptied(dims: tuple[int, ...]) -> tuple[int, ...]:
    """`dims` with a first dim of 0 (a rank-0 shape becomes [0]): index tensors for an empty axis."""
    return (0, *dims[1:]) if dims else (0,)


def gather(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = array(choices, dtype(binding["T"]), shape(choices, min_rank=1, max_rank=4))
    index = dtype(binding.get("Tind", "int64"))
    axis = axis_value(choices, data.ndim, True)
    size = data.shape[axis]
    negative = version.since_version >= 11
    dims = shape(choices, min_rank=0, max_rank=3)
    broken = invalid_share(choices)
    if not size and not broken:
        dims = emptied(dims)
    indices = index_array(choices, dims, [max(size, 1)], negative, index)
    if broken:
        if one_in(choices, 4):
            axis = outside_axis(choices, data.ndim, True)
        else:
            indices = out_of_range(choices, indices, size, negative)
    return made(version, binding, {"data": data, "indices": indices}, {"axis": axis})


def gather_elements(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = array(choices, dtype(binding["T"]), shape(choices, min_rank=1, max_rank=4))
    index = dtype(binding.get("Tind", "int64"))
    axis = axis_value(choices, data.ndim, True)
    size = data.shape[axis]
    part = choices.section(12)
    # Along `axis` any count of indices; elsewhere the data's dim most of the time, or fewer.
    dims = [dim(part, 4) if k == axis else (d if part.integer(0, 3) else part.integer(0, d))
            for k, d in enumerate(data.shape)]
    broken = invalid_share(choices)
    if not size and not broken:
        dims[axis] = 0
    indices = index_array(choices, tuple(dims), [max(size, 1)], True, index)
    if broken:
        indices, axis = _broken_elements(choices, data, indices, axis, size, index)
    return made(version, binding, {"data": data, "indices": indices}, {"axis": axis})


def _broken_elements(choices: Choices, data: np.ndarray, indices: np.ndarray, axis: int, size: int, index):
    """GatherElements' indices or axis made what the text forbids."""
    kind = pick(choices, ("index", "axis", "rank", "larger"))
    if kind == "axis":
        return indices, outside_axis(choices, data.ndim, True)
    if kind == "rank":
        return indices.reshape(*indices.shape, 1), axis
    others = [k for k in range(data.ndim) if k != axis]
    if kind == "larger" and others:
        grown = list(indices.shape)
        grown[others[0]] = data.shape[others[0]] + 1
        return np.zeros(grown, dtype=index.np_dtype), axis
    return out_of_range(choices, indices, size, True), axis


def gather_nd(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = array(choices, dtype(binding["T"]), shape(choices, min_rank=1, max_rank=4))
    rank = data.ndim
    part = choices.section(6)
    b = part.integer(0, rank - 1) if version.attribute("batch_dims") is not None and one_in(part, 2) else 0
    # Tuples as long as the rest of the rank (elements) or shorter (slices), and a few of length 0.
    length = 0 if one_in(part, 16) else pick(part, (rank - b, 1, *range(1, rank - b + 1)))
    middle = [dim(part, 3) for _ in range(part.integer(0, 2))]
    sizes = list(data.shape[b:b + length])
    broken = invalid_share(choices)
    if 0 in sizes and not broken:
        middle = [0, *middle[1:]] if middle else [0]
    dims = (*data.shape[:b], *middle, length)
    indices = index_array(choices, dims, [max(s, 1) for s in sizes] or [1], True, dtype("int64"))
    attributes = {"batch_dims": b} if version.attribute("batch_dims") is not None else {}
    if broken:
        indices, attributes = _broken_nd(choices, data, indices, attributes, sizes)
    return made(version, binding, {"data": data, "indices": indices}, attributes)


def _broken_nd(choices: Choices, data: np.ndarray, indices: np.ndarray, attributes: dict, sizes: list[int]):
    """GatherND's indices or batch_dims made what the text forbids."""
    b = attributes.get("batch_dims", 0)
    kind = pick(choices, ("index", "long", "batch") if "batch_dims" in attributes else ("index", "long"))
    if kind == "long":
        return np.zeros((*indices.shape[:-1], data.ndim - b + 1), dtype=np.int64), attributes
    if kind == "batch":
        return indices, {"batch_dims": pick(choices, (min(indices.ndim, data.ndim), -1))}
    if not sizes or not indices.size:
        return np.zeros((*indices.shape[:-1], data.ndim - b + 1), dtype=np.int64), attributes
    flat = indices.reshape(-1, indices.shape[-1]).copy()
    at = choices.integer(0, len(sizes) - 1)
    flat[choices.integer(0, flat.shape[0] - 1), at] = pick(choices, (sizes[at], -sizes[at] - 1))
    return flat.reshape(indices.shape), attributes


def compress(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = array(choices, dtype(binding["T"]), shape(choices, min_rank=1, max_rank=4))
    negative = version.since_version >= 11
    with_axis = choices.integer(0, 1) == 1
    axis = axis_value(choices, data.ndim, negative) if with_axis else None
    length = data.shape[axis] if with_axis else data.size
    how = pick(choices, ("same", "shorter", "longer", "same", "all false", "all true"))
    count = {"shorter": choices.integer(0, max(length - 1, 0)), "longer": length + choices.integer(1, 3)}.get(how, length)
    condition = _condition(choices, count, how)
    if how == "longer":
        condition[length:] = False  # allowed by numpy.compress, which the text points to
    if invalid_share(choices):
        condition, axis = _broken_compress(choices, condition, axis, data.ndim, length, negative)
    return made(version, binding, {"input": data, "condition": condition}, {} if axis is None else {"axis": axis})


def _condition(choices: Choices, count: int, how: str) -> np.ndarray:
    if how in ("all false", "all true"):
        return np.full(count, how == "all true", dtype=bool)
    part = choices.section(8)
    return np.array([part.integer(0, 1) == 1 for _ in range(count)], dtype=bool).reshape(count)


def _broken_compress(choices: Choices, condition: np.ndarray, axis: int | None, rank: int, length: int, negative: bool):
    """Compress's condition or axis made what the text forbids."""
    kind = pick(choices, ("past the end", "not 1-d", "axis"))
    if kind == "axis":
        return condition, outside_axis(choices, rank, negative)
    if kind == "not 1-d":
        return condition.reshape(1, -1), axis
    return np.concatenate([condition[:length], np.zeros(max(length - condition.size, 0), dtype=bool), [True]]), axis


STRATEGIES = {"Gather": gather, "GatherElements": gather_elements, "GatherND": gather_nd, "Compress": compress}
