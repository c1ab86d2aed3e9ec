"""Random Hardmax cases: tie-prone and boundary-weighted values (strategies/arg_extreme.py), size-0
dims among the shapes, the axis at its boundaries or left to its default (1 before 13, -1 from 13),
Hardmax-1's axis equal to the rank (a scalar at axis 0 among them), negative axes from 11; and a
small share of what the text forbids (an axis outside its range, a rank-0 input where no axis is
allowed)."""

from __future__ import annotations

from ..dtypes import dtype
from ..registry import OpVersion
from .arg_extreme import values
from .common import Choices, invalid_share, one_in, shape
from .movement import axis_value, made, outside_axis


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    return along_one_axis(choices, version, binding, values)


def along_one_axis(choices: Choices, version: OpVersion, binding: dict[str, str], values_of,
                   dims: tuple[int, ...] | None = None):
    """A case of an op along one `axis` whose versions before 13 coerce the input to 2-D there
    (Hardmax, Softmax, LogSoftmax): data from `values_of(choices, dt, dims)` (`dims` drawn unless
    given, a given shape reduced along its last axis), the axis at its boundaries or left to its
    default, and a share of axes the text forbids."""
    dt = dtype(binding["T"])
    negative = version.since_version >= 11
    # Version 1's formula takes a scalar at axis 0 (coerced to [1, 1]); from 11 a scalar has no axis.
    data = values_of(choices, dt, dims or shape(choices, min_rank=0 if not negative else 1, max_rank=4))
    rank = data.ndim
    high = rank - 1 if negative else rank  # version 1's formula allows the axis to equal the rank
    attributes = {"axis": axis_value(choices, rank, negative, high=high)}
    if dims is not None:
        attributes["axis"] = rank - 1
    if one_in(choices, 3) and (version.since_version >= 13 or rank >= 2):
        del attributes["axis"]  # the default: -1, or 1 (which a 1-D input does not have from 11)
    if invalid_share(choices):
        if one_in(choices, 2) and negative:
            data = values_of(choices, dt, ())  # rank 0: no axis in [-r, r-1]
        else:
            attributes["axis"] = outside_axis(choices, rank, negative, high=high)
    return made(version, binding, {"input": data}, attributes)
