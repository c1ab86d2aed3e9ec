"""Random Scatter, ScatterElements, ScatterND and TensorScatter cases.

Indices are drawn at their boundaries (0, s-1, -s, -1 where negatives count from the back), with
duplicates in three shares: none (each line's targets distinct), by chance (each value drawn on its
own, over small axes), and every entry of a line aimed at one element; at most four updates meet
at an element, so that every order of a float reduction is enumerated. Indices shorter than the
data off the axis, size-0 indices and updates, ScatterND's slices (k < r, k = 0), every reduction
a version allows, int32 and int64 indices. TensorScatter: linear and circular writes from write
indices at 0 and at the end (wrapping in circular mode), none given, a sequence axis anywhere
but the batch. A small share is what the texts forbid: an index just out of range, an axis out of
range, updates of the wrong shape, a reduction the version lacks, a write past the cache.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from .common import Choices, array, invalid_share, one_in, pick, shape
from .movement import axis_value, made, outside_axis

MOST_PER_LINE = 4  # entries along the axis: at most this many updates meet at one element
MOST_UPDATES = 48  # elements of ScatterND's updates


def index_in(choices: Choices, size: int, negative: bool) -> int:
    """An index of an axis of `size` (> 0): any, s-1, or the lowest allowed (-s, or 0), each
    written negative half the time where negatives count from the back. Shrinks to 0."""
    kind = choices.integer(0, 2)
    value = (choices.integer(0, size - 1), size - 1, 0)[kind]
    if negative and (kind == 2 or one_in(choices, 2)):
        value -= size
    return value


def just_outside(choices: Choices, size: int, negative: bool) -> int:
    """An index just outside what the text allows: s, or -s-1 (-1 where negatives have no meaning)."""
    return pick(choices, (size, -size - 1) if negative else (size, -1))


def reduction(choices: Choices, version: OpVersion) -> str | None:
    """A reduction the version allows (None: the attribute left out), or None where it has none."""
    if version.attribute("reduction") is None:
        return None
    allowed = ["none", "add", "mul"] + (["max", "min"] if version.since_version >= 18 else [])
    return pick(choices, [None, *allowed, *allowed[1:]])  # the reductions weighted above 'none'


def _attributes(**given) -> dict:
    return {name: value for name, value in given.items() if value is not None}


# --- Scatter and ScatterElements ---

def scatter_elements(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt, index_dt = dtype(binding["T"]), dtype(binding["Tind"]).np_dtype
    data = array(choices, dt, shape(choices, min_rank=1, max_rank=4))
    rank = data.ndim
    axis = axis_value(choices, rank, True)
    along = axis % rank
    size = data.shape[along]
    dims = [_off_axis_dim(choices, d) for d in data.shape]
    dims[along] = pick(choices, (size, 1, 2, 3, MOST_PER_LINE)) if size else 0
    if one_in(choices, 12):
        dims[choices.integer(0, rank - 1)] = 0  # no entries: the output is the data
    if math.prod(dims) > 64:
        dims = [min(d, 2) for d in dims]
    negative = version.since_version >= 11
    values = _element_indices(choices, tuple(dims), along, size, negative)
    updates = array(choices, dt, tuple(dims))
    attributes = _attributes(axis=axis, reduction=reduction(choices, version))
    if invalid_share(choices):
        values, updates, attributes = _broken_elements(choices, version, values, updates, attributes, size, negative, dt)
    inputs = {"data": data, "indices": values.astype(index_dt), "updates": updates}
    return made(version, binding, inputs, attributes)


def _off_axis_dim(choices: Choices, size: int) -> int:
    """indices' length off the axis: the data's (most often), or shorter."""
    return pick(choices, (size, size, max(size - 1, 0), 1 if size else 0))


def _element_indices(choices: Choices, dims: tuple[int, ...], along: int, size: int, negative: bool) -> np.ndarray:
    """Index values for each line along the axis: distinct, drawn each on its own, or all alike."""
    lines = np.zeros((math.prod(dims) // dims[along] if dims[along] else 0, dims[along]), dtype=np.int64)
    if lines.size:
        way = pick(choices, ("distinct", "drawn", "alike"))
        for line in lines:
            if way == "distinct" and len(line) <= size:
                order = sorted(range(size), key=lambda _: choices.integer(0, 255))[:len(line)]
                line[:] = [v - size if negative and one_in(choices, 2) else v for v in order]
            elif way == "alike":
                line[:] = index_in(choices, size, negative)
            else:
                line[:] = [index_in(choices, size, negative) for _ in line]
    moved = (*dims[:along], *dims[along + 1:], dims[along])
    return np.moveaxis(lines.reshape(moved), -1, along).copy()


def _broken_elements(choices: Choices, version: OpVersion, values: np.ndarray, updates: np.ndarray, attributes: dict,
                     size: int, negative: bool, dt):
    """One thing the text forbids: an index just out of range, an axis out of range, updates of
    another shape than indices, a reduction the version lacks."""
    ways = ["index", "axis", "updates"] + (["reduction"] if version.attribute("reduction") is not None else [])
    way = pick(choices, ways)
    if way == "index" and values.size:
        values = values.copy()
        values.reshape(-1)[choices.integer(0, values.size - 1)] = just_outside(choices, size, negative)
    elif way == "axis":
        attributes = {**attributes, "axis": outside_axis(choices, values.ndim, True)}
    elif way == "reduction":
        attributes = {**attributes, "reduction": "max" if version.since_version < 18 else "sum"}
    else:
        wrong = list(updates.shape)
        wrong[-1] += 1
        updates = array(choices, dt, tuple(wrong))
    return values, updates, attributes


# --- ScatterND ---

def scatter_nd(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    data = array(choices, dt, shape(choices, min_rank=1, max_rank=4))
    rank = data.ndim
    depth = pick(choices, (rank, 1, 0, *range(rank + 1)))
    batch = [pick(choices, (1, 2, 3)) for _ in range(choices.integer(0, 2))]
    if batch and one_in(choices, 12):
        batch[-1] = 0  # no entries: the output is the data
    slice_size = math.prod(data.shape[depth:])
    while batch and math.prod(batch) * slice_size > MOST_UPDATES:
        batch.pop()
    if math.prod(batch) * slice_size > MOST_UPDATES:
        batch = [1]
    if any(d == 0 for d in data.shape[:depth]):
        batch = [*batch[:-1], 0] if batch else [0]  # no valid tuple to draw
    entries = _nd_entries(choices, math.prod(batch), data.shape[:depth])
    indices = entries.reshape(*batch, depth)
    updates = array(choices, dt, (*batch, *data.shape[depth:]))
    attributes = _attributes(reduction=reduction(choices, version))
    if invalid_share(choices):
        indices, updates, attributes = _broken_nd(choices, version, indices, updates, attributes, data, dt)
    return made(version, binding, {"data": data, "indices": indices, "updates": updates}, attributes)


def _nd_entries(choices: Choices, count: int, sizes: tuple[int, ...]) -> np.ndarray:
    """`count` k-tuples into `sizes`: distinct (where there are enough), drawn on their own, or alike."""
    entries = np.zeros((count, len(sizes)), dtype=np.int64)
    if not count or not sizes:
        return entries
    way = pick(choices, ("distinct", "drawn", "alike"))
    grid = math.prod(sizes)
    if way == "distinct" and count <= grid:
        flat = sorted(range(grid), key=lambda _: choices.integer(0, 255))[:count]
        for row, place in zip(entries, flat):
            row[:] = [v - s if one_in(choices, 2) else v for v, s in zip(np.unravel_index(place, sizes), sizes)]
    elif way == "alike":
        entries[:] = [index_in(choices, s, True) for s in sizes]
    else:
        for row in entries:
            row[:] = [index_in(choices, s, True) for s in sizes]
    return entries


def _broken_nd(choices: Choices, version: OpVersion, indices: np.ndarray, updates: np.ndarray, attributes: dict,
               data: np.ndarray, dt):
    """One thing the text forbids: an index just out of range, k beyond the rank, updates of the
    wrong shape, a reduction the version lacks."""
    ways = ["index", "depth", "updates"] + (["reduction"] if version.attribute("reduction") is not None else [])
    way = pick(choices, ways)
    depth = indices.shape[-1]
    if way == "index" and indices.size:
        indices = indices.copy()
        at = choices.integer(0, indices.size - 1)
        indices.reshape(-1)[at] = just_outside(choices, data.shape[at % depth], True)
    elif way == "depth":
        indices = np.zeros((*indices.shape[:-1], data.ndim + 1), dtype=np.int64)
    elif way == "reduction":
        attributes = {**attributes, "reduction": "max" if version.since_version < 18 else "sum"}
    else:
        updates = array(choices, dt, (*updates.shape, 1))
    return indices, updates, attributes


# --- TensorScatter ---

def tensor_scatter(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding["T"])
    rank = choices.integer(2, 4)
    axis = axis_value(choices, rank, True)
    if axis % rank == 0:
        axis = rank - 2 if rank > 2 else 1  # the batch axis is the invalid share's
    along = axis % rank
    most = pick(choices, (4, 1, 2, 3, 5, 0))
    dims = [pick(choices, (2, 1, 3, 0))] + [pick(choices, (1, 2)) for _ in range(rank - 1)]
    dims[along] = most
    length = min(pick(choices, (1, most, 0, *range(most + 1))), most)
    mode = pick(choices, (None, "linear", "circular"))
    update_dims = list(dims)
    update_dims[along] = length
    starts = None if one_in(choices, 4) else \
        np.array([_write_index(choices, most, length, mode) for _ in range(dims[0])], dtype=np.int64)
    attributes = _attributes(axis=axis, mode=mode)
    if invalid_share(choices):
        way = pick(choices, ("beyond", "batch-axis", "longer", "write-shape"))
        if way == "beyond" and mode != "circular":
            starts = np.full(dims[0], most - length + 1, dtype=np.int64)
        elif way == "batch-axis":
            attributes["axis"] = pick(choices, (0, -rank))
        elif way == "longer":
            update_dims[along] = most + 1
        else:
            starts = np.zeros(dims[0] + 1, dtype=np.int64)
    inputs = {"past_cache": array(choices, dt, tuple(dims)), "update": array(choices, dt, tuple(update_dims))}
    if starts is not None:
        inputs["write_indices"] = starts
    return made(version, binding, inputs, attributes)


def _write_index(choices: Choices, most: int, length: int, mode: str | None) -> int:
    """A write index: linear, in [0, most - length] (its ends weighted); circular, anywhere up to
    twice round the cache; now and then below 0, which only the pseudocode's numpy gives a meaning."""
    room = most - length
    if mode == "circular":
        if one_in(choices, 10):
            return -choices.integer(1, max(most, 1))
        return pick(choices, (0, most - 1, most, choices.integer(0, 2 * most + 1)))
    if one_in(choices, 10) and length:
        return -choices.integer(1, max(most - length, 1)) if most > length else 0
    return pick(choices, (0, room, choices.integer(0, room)))


STRATEGIES = {"Scatter": scatter_elements, "ScatterElements": scatter_elements, "ScatterND": scatter_nd,
              "TensorScatter": tensor_scatter}
