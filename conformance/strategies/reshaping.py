"""Random Identity, Reshape, Flatten, Squeeze and Unsqueeze cases: any shape and dtype, new shapes
with 0 (copied, or literal under allowzero) and -1, axes negative and unsorted where the text
allows, and a small share of what the text forbids (two -1, a count that differs, an axis out of
range, a squeezed dim that is not 1, a repeated unsqueeze axis)."""

from __future__ import annotations

import math

from ..dtypes import dtype
from ..registry import OpVersion
from .common import Choices, array, flags, invalid_share, one_in, permutation, pick, shape
from .movement import axis_value, int64s, made, outside_axis


def identity(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dt = dtype(binding[next(iter(binding))])
    return made(version, binding, {"input": array(choices, dt, shape(choices))})


def reshape(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = array(choices, dtype(binding["T"]), shape(choices))
    allowzero = version.attribute("allowzero") is not None and one_in(choices, 3)
    target = _regrouped(choices, list(data.shape))
    target = _written(choices, target, list(data.shape), allowzero)
    if invalid_share(choices):
        target = _broken(choices, target, data.size)
    attributes = {"allowzero": 1} if allowzero else {}
    if version.input("shape") is None:
        return made(version, binding, {"data": data}, {"shape": target, **attributes})
    return made(version, binding, {"data": data, "shape": int64s(target)}, attributes)


def _regrouped(choices: Choices, dims: list[int]) -> list[int]:
    """Dims of the same count: adjacent dims merged, dims of 1 put in or taken out, or the whole
    flattened (shrinks to the dims unchanged)."""
    how = pick(choices, ("same", "merge", "ones", "flat", "reversed"))
    if how == "merge" and len(dims) >= 2:
        at = choices.integer(0, len(dims) - 2)
        return dims[:at] + [dims[at] * dims[at + 1]] + dims[at + 2:]
    if how == "ones":
        kept = [d for d in dims if d != 1]
        at = choices.integer(0, len(kept))
        return kept[:at] + [1] + kept[at:] if len(kept) < 6 else kept
    if how == "flat":
        return [math.prod(dims)]
    if how == "reversed":
        return dims[::-1]
    return dims


def _written(choices: Choices, target: list[int], dims: list[int], allowzero: bool) -> list[int]:
    """The target as a case writes it: a dim copied from the input as 0 where it may be, one dim as -1."""
    written = list(target)
    if not allowzero:
        for k, copy in enumerate(flags(choices, min(len(written), 6))):
            if copy and k < len(dims) and written[k] == dims[k]:
                written[k] = 0
    if written and one_in(choices, 2):
        at = choices.integer(0, len(written) - 1)
        rest = math.prod(d for j, d in enumerate(target) if j != at)
        if rest and not (allowzero and 0 in written):
            written[at] = -1
    return written


def _broken(choices: Choices, target: list[int], count: int) -> list[int]:
    kind = pick(choices, ("two-minus-one", "count", "below-minus-one"))
    if kind == "two-minus-one":
        return [-1, -1, *target]
    if kind == "count":
        return [count + 1]
    return [-2, *target]


def flatten(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = array(choices, dtype(binding["T"]), shape(choices))
    negative = version.since_version >= 11
    rank = data.ndim
    axis = axis_value(choices, rank, negative, high=rank)
    if invalid_share(choices):
        axis = outside_axis(choices, rank, negative, high=rank)
    return made(version, binding, {"input": data}, {"axis": axis})


def squeeze(choices: Choices, version: OpVersion, binding: dict[str, str]):
    dims = list(shape(choices, min_rank=1))
    for k, one in enumerate(flags(choices, len(dims))):
        if one:
            dims[k] = 1
    data = array(choices, dtype(binding["T"]), tuple(dims))
    negative = version.since_version >= 11
    ones = [k for k, d in enumerate(dims) if d == 1]
    axes = None
    if ones and not one_in(choices, 4):
        chosen = [ones[k] for k in permutation(choices, len(ones))][: choices.integer(1, len(ones))]
        if not negative:
            # onnx's shape inference of Squeeze-1 reads its axes as sorted (axes [1, 0] keep dim 0),
            # so onnx.checker refuses the model of unsorted ones: a case conform cannot run.
            chosen.sort()
        axes = [k - len(dims) if negative and flip else k for k, flip in zip(chosen, flags(choices, len(chosen)))]
    if invalid_share(choices):
        wrong = [k for k, d in enumerate(dims) if d != 1]
        axes = [pick(choices, wrong)] if wrong and one_in(choices, 2) else [outside_axis(choices, len(dims), negative)]
    return _with_axes(version, binding, data, axes)


def unsqueeze(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = array(choices, dtype(binding["T"]), shape(choices, max_rank=4))
    negative = version.since_version >= 11
    count = choices.integer(1, 2)
    rank = data.ndim + count
    chosen = permutation(choices, rank)[:count]
    axes = [k - rank if negative and flip else k for k, flip in zip(chosen, flags(choices, count))]
    if invalid_share(choices):
        axes = [axes[0], axes[0]] if one_in(choices, 2) else [outside_axis(choices, data.ndim + 1, negative)]
    return _with_axes(version, binding, data, axes)


def _with_axes(version: OpVersion, binding: dict[str, str], data, axes: list[int] | None):
    if version.input("axes") is None:
        return made(version, binding, {"data": data}, {} if axes is None else {"axes": axes})
    return made(version, binding, {"data": data, **({} if axes is None else {"axes": int64s(axes)})})


STRATEGIES = {"Identity": identity, "Reshape": reshape, "Flatten": flatten, "Squeeze": squeeze, "Unsqueeze": unsqueeze}
