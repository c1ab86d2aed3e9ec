"""Random cases of any element-wise op, drawn from its declaration (reference/elementwise.py).

Shapes follow the version's broadcasting rule (rank 0, size-1 and size-0 dims included): one
shape for a unary op; for a broadcasting one, a full shape and each input a suffix of it with
some dims set to 1; for the legacy rule, B as a suffix, a run at `axis`, or one element. About
one case in twenty is invalid on purpose: shapes that do not broadcast, or an attribute value
the text forbids. Values are boundary-weighted as for every op (common.array); an op with a
`domain` gets half its float inputs drawn inside it, and an op with a `draw` hook draws the
inputs it knows better (shift amounts, exponents).
"""

from __future__ import annotations

import numpy as np

from ..case import Example
from ..dtypes import DType, dtype
from ..reference import broadcast as bc
from ..reference import for_op
from ..reference.elementwise import Elementwise
from ..registry import OpVersion
from .common import Choices, array, invalid_share, one_in, pick, shape

MAX_ELEMENTS = 64
ABSENT = object()


def example(choices: Choices, version: OpVersion, binding: dict[str, str], op: Elementwise) -> Example:
    invalid = invalid_share(choices)
    names = _input_names(choices, version, op)
    rule = op.broadcasting.get(max((s for s in op.broadcasting if s <= version.since_version), default=-1)) or bc.rule_of(version)
    attributes: dict = {}
    broken_attribute = invalid and one_in(choices, 2) and _has_invalid_draws(op, version)
    shapes = _shapes(choices.section(40), rule, len(names), invalid and not broken_attribute, attributes)
    inputs = {}
    for position, (name, dims) in enumerate(zip(names, shapes)):
        dt = dtype(binding[version.input(name).type_param])
        inputs[name] = _values(choices.section(40), op, dt, dims, position)
    _attributes(choices.section(16), version, op, broken_attribute, attributes)
    dtype_param = for_op(op.op).dtype_param
    return Example(version, "hypothesis", dict(binding), inputs, attributes, "hypothesis", dtype_param)


def _input_names(choices: Choices, version: OpVersion, op: Elementwise) -> list[str]:
    names = []
    for formal in version.inputs:
        if formal.variadic:
            count = choices.integer(max(formal.min_arity, 1), max(op.max_inputs, formal.min_arity, 1))
            names += [formal.instance(k) for k in range(count)]
        else:
            names.append(formal.name)
    return names


def _shapes(choices: Choices, rule: str, count: int, invalid: bool, attributes: dict) -> list[tuple[int, ...]]:
    full = shape(choices, max_rank=4)
    if rule == bc.NONE:
        return [full]
    if rule == bc.SAME_SHAPE:
        shapes = [full] * count
        return _broken(choices, shapes, full, rule) if invalid else shapes
    if rule == bc.LEGACY:
        return _legacy(choices, full, invalid, attributes)
    shapes = [full if k == 0 and rule == bc.UNIDIRECTIONAL else _suffix_with_ones(choices, full) for k in range(count)]
    if rule == bc.MULTIDIRECTIONAL and not invalid and not any(s == full for s in shapes):
        shapes[choices.integer(0, count - 1)] = full  # the output's shape comes from the inputs
    return _broken(choices, shapes, full, rule) if invalid else shapes


def _suffix_with_ones(choices: Choices, full: tuple[int, ...]) -> tuple[int, ...]:
    """`full`, or its last dims only, with some dims set to 1: a shape that broadcasts to `full`."""
    kept = full[choices.integer(0, len(full)):] if one_in(choices, 2) else full
    return tuple(1 if one_in(choices, 3) else d for d in kept)


def _broken(choices: Choices, shapes: list[tuple[int, ...]], full: tuple[int, ...], rule: str) -> list[tuple[int, ...]]:
    """The shapes with one input's changed so that it does not broadcast with the first."""
    if len(shapes) < 2:
        return shapes
    shapes = list(shapes)
    victim = choices.integer(1, len(shapes) - 1)
    axes = [k for k, d in enumerate(full) if d != 1]
    shapes[0] = full
    if axes:
        axis = pick(choices, axes)
        dims = list(full)
        dims[axis] = dims[axis] + 1 if dims[axis] else 2  # 0 against 1 would still broadcast
        shapes[victim] = tuple(dims)
    elif rule == bc.UNIDIRECTIONAL:
        shapes[victim] = (2,) + full  # a dim the target does not have
    else:
        shapes[0], shapes[victim] = (2,), (3,)
    return shapes


def _legacy(choices: Choices, full: tuple[int, ...], invalid: bool, attributes: dict) -> list[tuple[int, ...]]:
    kind = pick(choices, ("same", "suffix", "axis", "one"))
    if kind == "same":
        if invalid:
            return [full, tuple(d + 1 for d in full) or (2,)]
        return [full, full]
    attributes["broadcast"] = 1
    if kind == "one":
        return [full, () if one_in(choices, 2) else (1,)]
    length = choices.integer(1, max(len(full), 1)) if full else 0
    start = len(full) - length
    if kind == "axis" and full:
        start = choices.integer(0, len(full) - length)
        attributes["axis"] = start  # the legacy texts never say what a negative axis means: not drawn
    b = full[start:start + length]
    if invalid:
        b = tuple(d + 1 for d in b) or (2,)
    return [full, b]


def _values(choices: Choices, op: Elementwise, dt: DType, dims: tuple[int, ...], position: int) -> np.ndarray:
    if op.draw is not None:
        drawn = op.draw(choices, dt, dims, position)
        if drawn is not None:
            return drawn
    values = array(choices, dt, dims)
    if op.domain is not None and dt.kind == "float" and values.size and one_in(choices, 2):
        values = in_domain(choices, op.domain, dt, values)
    return values


def in_domain(choices: Choices, domain: tuple[float, float], dt: DType, values: np.ndarray) -> np.ndarray:
    """`values` with about three quarters of its elements moved inside `domain` (its ends included)."""
    low, high = domain
    rng = np.random.default_rng(choices.integer(0, 2**32 - 1))
    inside = low + (high - low) * rng.random(values.size)
    ends = rng.random(values.size)
    inside = np.where(ends < 0.1, low, np.where(ends > 0.9, high, inside))
    keep = rng.random(values.size) < 0.25
    from ..reference.elementwise import round_to

    with np.errstate(all="ignore"):
        moved = round_to(inside, dt).reshape(values.shape)
    return np.where(keep.reshape(values.shape), values, moved).astype(values.dtype)


def _has_invalid_draws(op: Elementwise, version: OpVersion) -> bool:
    return any(a.invalid_draws and version.attribute(a.name) is not None for a in op.attributes)


def _attributes(choices: Choices, version: OpVersion, op: Elementwise, broken: bool, attributes: dict) -> None:
    declared = [a for a in op.attributes if version.attribute(a.name) is not None]
    breakable = [a for a in declared if a.invalid_draws]
    victim = pick(choices, breakable) if broken and breakable else None
    for attribute in declared:
        if attribute is victim:
            attributes[attribute.name] = pick(choices, attribute.invalid_draws)
            continue
        # A required attribute is always given: leaving it out makes a model no text describes.
        required = version.attribute(attribute.name).required
        value = pick(choices, attribute.draws if required else (ABSENT, *attribute.draws))
        if value is not ABSENT:
            attributes[attribute.name] = value
