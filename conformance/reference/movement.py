"""The data-movement family's shared path: outputs that are the inputs' elements, moved.

Reshape, Transpose, Expand, Concat, Split and their kin compute nothing: each output element is
an element of a data input (or a fill value the text names). A version of such an op states, for
an example, each output's *index map*: an int64 array of the output's shape whose every element is
the position it copies in the data (the data inputs' elements, flattened in order and laid end
to end), or FILL where the text puts its fill value. One path (`gathered`) turns the maps into
outputs of any dtype by indexing, so strings, float8, int4 and every NaN payload or -0.0 move as
they are, and every output is judged bitwise.

A map is the op's own numpy counterpart applied to the positions themselves (`positions`: 0, 1,
2, ... in the data's shape): Transpose's map is `np.transpose(positions, perm)`. What each text
says about shapes, axes and invalid inputs is the version's to check (`axis_in`, `Invalid` with
the sentence); which readings the text leaves open, too (several `Moved`, each with its label).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..case import Example
from .base import Expected, Invalid, Reading, VersionSemantics

FILL = -1  # an index map's element where the text puts its fill value


@dataclass(frozen=True, eq=False)
class Moved:
    """One reading of a movement: per output, its index map; the fill value where a map holds FILL;
    what the text leaves ambiguous (with several readings) and why a runtime may also reject it."""

    maps: tuple[np.ndarray, ...]
    label: str = "spec"
    fill: object = None
    ambiguity: str | None = None
    may_reject: str | None = None


class MovementSemantics(VersionSemantics):
    """A version of a data-movement op: `moved` gives its index maps (a `Moved`, several where the
    text allows several orders or shapes) or the `Invalid` rule; the outputs come from one path."""

    data: tuple[str, ...] = ("input",)  # the formal inputs whose elements move, in order (a variadic one's every value)

    def moved(self, example: Example) -> Moved | list[Moved] | Invalid:  # pragma: no cover - abstract
        raise NotImplementedError

    def expected(self, example: Example) -> Expected:
        found = self.moved(example)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        options = [found] if isinstance(found, Moved) else found
        flat = data_elements(example, self.data)
        made = tuple(Reading(tuple(gathered(flat, index, o.fill) for index in o.maps), o.label) for o in options)
        first = options[0]
        return Expected(readings=made, ambiguity=first.ambiguity if len(made) > 1 else None, may_reject=first.may_reject)


def data_arrays(example: Example, names: tuple[str, ...]) -> list[np.ndarray]:
    """The data inputs' arrays in order: each named input, or every value of a variadic one."""
    found = []
    for name in names:
        formal = example.version.input(name)
        if formal is not None and formal.variadic:
            found += [example.inputs[n] for n in example.node_inputs if formal.instance_index(n) is not None]
        elif example.inputs.get(name) is not None:
            found.append(example.inputs[name])
    return found


def data_elements(example: Example, names: tuple[str, ...]) -> np.ndarray:
    """Every data element, flattened in order and laid end to end: what an index map indexes."""
    arrays = data_arrays(example, names)
    if len(arrays) == 1:
        return arrays[0].reshape(-1)
    return np.concatenate([a.reshape(-1) for a in arrays])


def positions(shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    """Each data input's positions in the data (see module docstring), in its own shape."""
    found, start = [], 0
    for shape in shapes:
        count = math.prod(shape)
        found.append(np.arange(start, start + count, dtype=np.int64).reshape(shape))
        start += count
    return found


def gathered(flat: np.ndarray, index: np.ndarray, fill: object = None) -> np.ndarray:
    """The output an index map describes: each element copied from `flat`, `fill` at FILL."""
    filled = index == FILL
    if not flat.size:
        out = np.empty(index.shape, dtype=flat.dtype)
    else:
        out = flat[np.where(filled, 0, index).reshape(-1)].reshape(index.shape)  # flat, so a 0-d map gives an array
    if filled.any():
        out[filled] = fill
    return out


def axis_in(axis: int, rank: int, negative: bool, sentence: str, high: int | None = None) -> int | Invalid:
    """`axis` made non-negative, or Invalid quoting `sentence`: allowed in [-rank, high] where the
    text counts negative axes from the back (`negative`), else [0, high] ("negative-axis" for one
    in [-rank, 0), which later versions count from the back; "axis-out-of-range" for the rest);
    `high` is rank - 1 unless the text says otherwise (Flatten's rank)."""
    high = rank - 1 if high is None else high
    if not negative and -rank <= axis < 0:
        return Invalid("negative-axis", sentence)
    if not (-rank if negative else 0) <= axis <= high:
        return Invalid("axis-out-of-range", sentence)
    return axis + rank if axis < 0 else axis


def axes_in(axes: list[int], rank: int, negative: bool, sentence: str) -> list[int] | Invalid:
    """Every axis made non-negative (see `axis_in`); the first out of range makes all Invalid."""
    found = []
    for axis in axes:
        made = axis_in(axis, rank, negative, sentence)
        if isinstance(made, Invalid):
            return made
        found.append(made)
    return found


def ints(value) -> list[int] | None:
    """An attribute's list or an input's 1-D array as Python ints; None when absent."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return [int(v) for v in value.reshape(-1)]
    return [int(v) for v in value]


def one_d(example: Example, name: str, sentence: str) -> list[int] | Invalid | None:
    """An index-carrying input (`shape`, `axes`, `repeats`, `split`) as Python ints: None when
    absent, Invalid("not-1d") when it is not the 1-D tensor the text asks for."""
    value = example.inputs.get(name)
    if value is None:
        return None
    if value.ndim != 1:
        return Invalid("not-1d", sentence)
    return [int(v) for v in value]
