"""Padding: Pad and CenterCropPad (data-movement family, movement.py).

Both ops lay each axis out anew: every output coordinate along an axis copies one coordinate of
the input's, or is padding. Each axis's *sources* (one input coordinate per output coordinate, or
FILL) are worked out alone, and the index map is their outer combination: an output element is
FILL where any of its coordinates is, else the input element at its coordinates.

Pad's modes say what padding copies: `constant` a fill value, `edge` the nearest end, `reflect`
the vector mirrored on its first and last values, `wrap` (19+) the vector repeated as on a torus.
A reflect pad longer than the vector less one (past its mirror image) reflects again, as numpy.pad,
which the text names, does: the text's own Example 2 reflects 2 elements on an axis of 2 and gets
[1.0, 1.2, 1.0, 1.2]. Where the texts are silent, every reading they allow is given (see the
sentences below): the order of a crop at one end and a pad at the other, an axis of size 0 padded
from its own (absent) values, the default 0 of float8e8m0, which has none.

CenterCropPad crops or pads each chosen axis to its target length, centred: the crop starts at
floor(difference / 2), the pad puts floor(difference / 2) before and the rest (the extra element of
an odd difference) after, zeros. Its function body (pad to max(dim, target), then slice from
floor(difference / 2)) says the same; function_body.py checks each case against it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..case import Example
from .base import Expected, Invalid, OpReference, freed
from .movement import FILL, MovementSemantics, Moved, axes_in, ints, one_d

# --- the sentences of Pad's texts ---
PADDINGS_LENGTH_1 = "paddings: `paddings` rank should be double of the input's rank."
PADS_LENGTH_2 = "pads: `pads` rank should be double of the input's rank."
PADS_LENGTH_11 = "pads: `pads` should be a 1D tensor of shape [2 * input_rank]."
PADS_LENGTH_18 = ("pads: `pads` should be a 1D tensor of shape [2 * num_axes] where `num_axes` refers to the number of "
                  "elements in the `axes` input or the input rank if `axes` are not provided explicitly.")
MODES_1 = "mode: Three modes: constant(default), reflect, edge"
MODES_11 = "mode: Supported modes: `constant`(default), `reflect`, `edge`"
MODES_19 = "mode: Supported modes: `constant`(default), `reflect`, `edge`, `wrap`"
NEGATIVE_OUTPUT = ("pads: the number of padding elements to add or remove (if negative) at the beginning and end of each "
                   "axis: the output dim is dim + begin + end, which cannot be below 0")
CONSTANT_SCALAR = "constant_value: (Optional) A scalar value to be used if the mode chosen is `constant`"
AXES_RANGE = ("axes: Negative value means counting dimensions from the back. Accepted range is [-r, r-1] where "
              "r = rank(data).")
AXES_REPEATED = "axes: Behavior is undefined if an axis is repeated."
AXES_1D = "axes: 1-D tensor of axes that `pads` apply to."

# --- what the texts leave open ---
NEGATIVE_PADDINGS_1 = (
    "Pad-1's paddings are 'the padding element count at the beginning and end of each axis': a count, which Pad-1 "
    "does not say may be negative (Pad-2 adds 'or remove (if negative)'); removal as Pad-2 defines it is the reading, "
    "and a rejection is allowed")
PAD_ORDER = (
    "a negative pad at one end of an axis and a positive one at the other, in a mode that pads from the axis's own "
    "values: the text says what is added and what is removed, not in which order, so the padding may come from the "
    "whole axis (then the crop) or from what the crop leaves")
CROP_PAST_DIM = (
    "pads 'to add or remove (if negative)': one end removes all of the axis or more while the other end pads; padding "
    "from the whole axis gives the output (dim + begin + end long), but removing first leaves nothing to pad from or "
    "cannot be done, so a rejection is allowed")
EMPTY_AXIS = (
    "edge, reflect or wrap padding of an axis of size 0: there is no edge, no vector to mirror, no torus, and the "
    "text is silent; any values (of the output's shape) and a rejection are allowed")
PADDINGS_ORDER_1 = (
    "Pad-1's paddings: 'format should be as follow [x1_begin, x2_begin...x1_end, x2_end,...]', but its Example pads "
    "the beginning of the second dimension with paddings = [0, 0, 2, 0], reading them as [x1_begin, x1_end, x2_begin, "
    "x2_end]: both orders are readings")
NEGATIVE_OUTPUT_ONE_ORDER = (
    "Pad-1's paddings read in one of their two orders remove more than an axis holds (an output dim below 0), "
    "which the other order does not: a rejection is allowed")
E8M0_DEFAULT = (
    "constant_value 'defaults to 0, empty string, or False': float8e8m0 has no 0; its bits 0 (2**-127, what Cast's "
    "default saturate and round-up give for 0) and NaN (what a nearest, non-saturating cast gives) are both readings")

PAD_THEN_CROP = "padded from the whole axis, then cropped"
CROP_THEN_PAD = "cropped first, then padded from what remains"
COPYING_MODES = ("edge", "reflect", "wrap")


class Pad1(MovementSemantics):
    """Pad-1: `paddings` (an attribute, [x1_begin, x2_begin, ..., x1_end, x2_end, ...]), `mode`
    constant, reflect or edge, and `value` (a float attribute) to fill with."""

    since = 1
    data = ("data",)
    modes = ("constant", "reflect", "edge")
    modes_sentence = MODES_1
    pads_name = "paddings"
    length_sentence = PADDINGS_LENGTH_1
    negative_pads_defined = False

    def pads(self, example: Example) -> list[int] | Invalid:
        return ints(example.attributes.get(self.pads_name))

    def axes(self, example: Example, rank: int) -> list[int] | Invalid:
        return list(range(rank))

    def fills(self, example: Example) -> list[tuple[object, str]] | Invalid:
        """The constant mode's fill values, each with its reading's label (several where the text
        leaves the value open)."""
        value = np.float32(example.attributes.get("value", 0.0))  # an ONNX FLOAT attribute is a float32
        return [(value.astype(example.inputs["data"].dtype), "spec")]

    def moved(self, example: Example) -> list[Moved] | Invalid:
        plan = self.plan(example)
        if isinstance(plan, Invalid):
            return plan
        return plan.options

    def expected(self, example: Example) -> Expected:
        found = super().expected(example)
        if not found.is_valid:
            return found
        plan = self.plan(example)
        if not any(plan.undefined):
            return found
        made = []
        for reading, undefined in zip(found.readings, plan.undefined):
            if undefined:  # an empty axis padded from its own values: no element has a source
                every = np.ones(reading.outputs[0].shape, dtype=bool)
                reading = freed([reading], every)[0]
            made.append(reading)
        return Expected(readings=tuple(made), ambiguity=found.ambiguity, may_reject=found.may_reject)

    def layouts(self, pads: list[int], axes: list[int], rank: int) -> list[tuple[list[tuple[int, int]], str]]:
        """(begin, end) per data axis as the text orders `pads` ([x1_begin, x2_begin, ..., x1_end,
        x2_end, ...]), with the reading's label; several where the text orders them several ways."""
        return [(placed(pads, axes, rank, interleaved=False), "spec")]

    def plan(self, example: Example) -> "PadPlan | Invalid":
        """The readings of `example`, or the rule it breaks."""
        data = example.inputs["data"]
        mode = example.attributes.get("mode", "constant")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        if mode not in self.modes:
            return Invalid("unknown-mode", self.modes_sentence)
        pads = self.pads(example)
        if isinstance(pads, Invalid):
            return pads
        axes = self.axes(example, data.ndim)
        if isinstance(axes, Invalid):
            return axes
        if pads is None or len(pads) != 2 * len(axes):
            return Invalid("pads-length", self.length_sentence)
        fills = self.fills(example)
        if isinstance(fills, Invalid):
            return fills
        layouts = self.layouts(pads, axes, data.ndim)
        plans = [(padded(data.shape, per_axis, mode, fills, self.negative_pads_defined), label)
                 for per_axis, label in layouts if all(n + b + e >= 0 for n, (b, e) in zip(data.shape, per_axis))]
        if not plans:
            return Invalid("negative-output-dim", NEGATIVE_OUTPUT)
        if len(plans) == 1 and len(layouts) == 1:
            return plans[0][0]
        if len(plans) < len(layouts):  # an order of the paddings that removes more than an axis holds
            return rejectable(joined(plans, PADDINGS_ORDER_1), NEGATIVE_OUTPUT_ONE_ORDER)
        return joined(plans, PADDINGS_ORDER_1)


class Pad1Paddings(Pad1):
    """Pad-1 itself: its `paddings` ordered as its sentence says, or as its Example reads them."""

    since = 1

    def layouts(self, pads: list[int], axes: list[int], rank: int) -> list[tuple[list[tuple[int, int]], str]]:
        described = placed(pads, axes, rank, interleaved=False)
        example = placed(pads, axes, rank, interleaved=True)
        if described == example:
            return [(described, "spec")]
        return [(described, "all begins, then all ends (the paddings sentence)"),
                (example, "begin and end of each axis in turn (the text's Example)")]


class Pad2(Pad1):
    """Pad-2: the attribute is `pads`, and a negative pad removes elements."""

    since = 2
    pads_name = "pads"
    length_sentence = PADS_LENGTH_2
    negative_pads_defined = True


class Pad11(Pad2):
    """Pad-11: `pads` (int64) and `constant_value` (a scalar of T, 0 by default) are inputs."""

    since = 11
    modes_sentence = MODES_11
    length_sentence = PADS_LENGTH_11

    def pads(self, example: Example) -> list[int] | Invalid:
        return one_d(example, "pads", self.length_sentence)

    def fills(self, example: Example) -> list[tuple[object, str]] | Invalid:
        value = example.inputs.get("constant_value")
        if value is None:
            return default_fills(example.inputs["data"].dtype, example.dtype)
        if value.ndim != 0:
            return Invalid("constant-value-not-scalar", CONSTANT_SCALAR)
        return [(value.reshape(-1)[0], "spec")]


class Pad18(Pad11):
    """Pad-18: an optional `axes` input (Tind) names the axes `pads` apply to, negative from the back."""

    since = 18
    length_sentence = PADS_LENGTH_18

    def axes(self, example: Example, rank: int) -> list[int] | Invalid:
        written = one_d(example, "axes", AXES_1D)
        if written is None:
            return list(range(rank))
        if isinstance(written, Invalid):
            return written
        chosen = axes_in(written, rank, True, AXES_RANGE)
        if isinstance(chosen, Invalid):
            return chosen
        if len(set(chosen)) != len(chosen):
            return Invalid("repeated-axes", AXES_REPEATED)
        return chosen


class Pad19(Pad18):
    """Pad-19: `wrap` mode, padding as if the data tensor forms a torus."""

    since = 19
    modes = ("constant", "reflect", "edge", "wrap")
    modes_sentence = MODES_19


def default_fills(np_dtype: np.dtype, name: str) -> list[tuple[object, str]]:
    """The default fill, "0, empty string, or False", in a dtype: both readings of float8e8m0's 0."""
    if name == "string":
        return [("", "spec")]
    if name == "float8e8m0":
        return [(np.zeros((), np_dtype)[()], "bits 0 (2**-127) for the 0 float8e8m0 lacks"),
                (np.array(np.nan, dtype=np.float32).astype(np_dtype)[()], "NaN for the 0 float8e8m0 lacks")]
    return [(np.zeros((), np_dtype)[()], "spec")]


@dataclass(frozen=True)
class PadPlan:
    """Pad's readings for one example: their maps (`options`), and per option whether every output
    element is one the text leaves undefined (`undefined`: an axis of size 0 padded from its own values)."""

    options: list[Moved]
    undefined: tuple[bool, ...]


def rejectable(plan: PadPlan, reason: str) -> PadPlan:
    """`plan` with `reason` added to why a runtime may reject it, on every option."""
    options = [Moved(o.maps, o.label, o.fill, o.ambiguity, "; ".join(filter(None, (o.may_reject, reason))))
               for o in plan.options]
    return PadPlan(options, plan.undefined)


def placed(pads: list[int], axes: list[int], rank: int, interleaved: bool) -> list[tuple[int, int]]:
    """(begin, end) per data axis: pads as [begins..., ends...], or `interleaved` as [b1, e1, b2, e2, ...]."""
    per_axis = [(0, 0)] * rank
    count = len(axes)
    for k, axis in enumerate(axes):
        per_axis[axis] = (pads[2 * k], pads[2 * k + 1]) if interleaved else (pads[k], pads[count + k])
    return per_axis


def joined(plans: list[tuple[PadPlan, str]], ambiguity: str) -> PadPlan:
    """One plan of several readings' plans, each option labelled with its reading's label first."""
    options, undefined = [], []
    for plan, label in plans:
        for option, free in zip(plan.options, plan.undefined):
            inner = "" if option.label == "spec" else f"; {option.label}"
            reasons = "; ".join(filter(None, (ambiguity, option.ambiguity)))
            options.append(Moved(option.maps, label + inner, option.fill, reasons, option.may_reject))
            undefined.append(free)
    may_reject = "; ".join(dict.fromkeys(o.may_reject for o in options if o.may_reject)) or None
    return PadPlan([Moved(o.maps, o.label, o.fill, o.ambiguity, may_reject) for o in options], tuple(undefined))


def padded(shape: tuple[int, ...], per_axis: list[tuple[int, int]], mode: str, fills: list[tuple[object, str]],
           negative_defined: bool) -> PadPlan:
    """The readings of padding an input of `shape` by (begin, end) per axis in `mode`."""
    whole = [axis_sources(n, b, e, mode, crop_first=False) for n, (b, e) in zip(shape, per_axis)]
    cropped = [axis_sources(n, b, e, mode, crop_first=True) for n, (b, e) in zip(shape, per_axis)]
    undefined = any(s is None for s in whole)
    whole = [s if s is not None else np.full(n + b + e, FILL, np.int64) for s, n, (b, e) in zip(whole, shape, per_axis)]
    reasons = []
    if not negative_defined and any(p < 0 for pair in per_axis for p in pair):
        reasons.append(NEGATIVE_PADDINGS_1)
    if undefined:
        reasons.append(EMPTY_AXIS)
    variants = [(whole, "spec")]
    if any(c is None for c, w in zip(cropped, whole)) and not undefined:
        reasons.append(CROP_PAST_DIM)
    elif not undefined and any(not np.array_equal(c, w) for c, w in zip(cropped, whole)):
        variants = [(whole, PAD_THEN_CROP), (cropped, CROP_THEN_PAD)]
    may_reject = "; ".join(reasons) or None
    if len(variants) > 1:  # only edge, reflect and wrap depend on the order, and they fill nothing
        return PadPlan([Moved((combined(shape, s),), label, ambiguity=PAD_ORDER, may_reject=may_reject)
                        for s, label in variants], (undefined,) * len(variants))
    index = combined(shape, whole)
    if mode != "constant" or not (index == FILL).any():
        return PadPlan([Moved((index,), fill=fills[0][0], may_reject=may_reject)], (undefined,))
    ambiguity = E8M0_DEFAULT if len(fills) > 1 else None
    return PadPlan([Moved((index,), label, fill=fill, ambiguity=ambiguity, may_reject=may_reject) for fill, label in fills],
                   (undefined,) * len(fills))


def axis_sources(n: int, begin: int, end: int, mode: str, crop_first: bool) -> np.ndarray | None:
    """Per output coordinate along one axis, the input coordinate it copies, or FILL (constant
    padding); None where the text gives no value (copying padding of an empty vector, or, cropping
    first, more removed than the axis holds).

    Padding from the whole axis, output coordinate j is the axis's coordinate j - begin, extended
    past its ends as `mode` says; cropping first, the negative ends are removed, and the positive
    ones padded from what remains."""
    if not crop_first:
        return extended(np.arange(n, dtype=np.int64), np.arange(-begin, n + end, dtype=np.int64) if n + begin + end > 0
                        else np.arange(0, dtype=np.int64), mode)
    low, high = max(0, -begin), n - max(0, -end)
    if low > n or high < 0 or (low > high and n + begin + end > 0):
        return None
    kept = np.arange(low, max(low, high), dtype=np.int64)
    b, e = max(0, begin), max(0, end)
    return extended(kept, np.arange(-b, kept.size + e, dtype=np.int64), mode)


def extended(vector: np.ndarray, at: np.ndarray, mode: str) -> np.ndarray | None:
    """`vector` (input coordinates) read at coordinates `at`, those outside it padded per `mode`."""
    n = vector.size
    inside = (at >= 0) & (at < n)
    if inside.all():
        return vector[at]
    if mode == "constant":
        return np.where(inside, vector[np.where(inside, at, 0)] if n else FILL, FILL).astype(np.int64)
    if n == 0:
        return None
    if mode == "edge":
        return vector[np.clip(at, 0, n - 1)]
    if mode == "wrap":
        return vector[at % n]
    return vector[mirrored(at, n)]


def mirrored(at: np.ndarray, n: int) -> np.ndarray:
    """Coordinates reflected on the first and last of `n`, again and again past the mirror image,
    as numpy.pad does and the text's Example 2 shows (a triangle wave of period 2(n-1)); a vector
    of one is its own reflection."""
    if n == 1:
        return np.zeros_like(at)
    period = 2 * (n - 1)
    folded = at % period
    return np.where(folded < n, folded, period - folded)


def reflects_past_edge(n: int, begin: int, end: int) -> bool:
    """Whether a reflect pad at either end is longer than the vector less one (its mirror image),
    on the axis as given or on what a crop at the other end leaves."""
    kept = n - max(0, -begin) - max(0, -end)
    return any(p > 0 and (p > n - 1 or p > kept - 1) for p in (begin, end)) and n > 0


def combined(shape: tuple[int, ...], sources: list[np.ndarray]) -> np.ndarray:
    """The index map of per-axis sources: the input element at the sources' coordinates (C order),
    FILL where any of them is FILL."""
    out_shape = tuple(s.size for s in sources)
    index = np.zeros(out_shape, dtype=np.int64)
    filled = np.zeros(out_shape, dtype=bool)
    stride = 1
    for axis in range(len(shape) - 1, -1, -1):
        along = [1] * len(shape)
        along[axis] = out_shape[axis]
        source = sources[axis].reshape(along)
        index = index + np.where(source == FILL, 0, source) * stride
        filled = filled | (source == FILL)
        stride *= shape[axis]
    return np.where(filled, FILL, index)


# --- CenterCropPad ---
SHAPE_1D = "shape: 1-D tensor representing the cropping window dimensions."
SHAPE_LENGTH = ("axes: If provided, it specifies a subset of axes that 'shape' refer to. If not provided, all axes are "
                "assumed [0, 1, ..., r-1], where r = rank(data): one dimension in 'shape' per axis")
SHAPE_NEGATIVE = "shape: 1-D tensor representing the cropping window dimensions: a dimension, not below 0"
CROP_AXES_RANGE = "axes: Negative value means counting dimensions from the back. Accepted range is [-r, r-1], where r = rank(data)."
CROP_AXES_REPEATED = "axes: Behavior is undefined if an axis is repeated."


class CenterCropPad18(MovementSemantics):
    """CenterCropPad-18: each axis in `axes` (all by default) cropped or padded with zeros to its
    length in `shape`, centred; the extra element of an odd difference falls right (the crop's
    start is rounded down, the pad's extra element goes after)."""

    since = 18
    data = ("input_data",)

    def moved(self, example: Example) -> list[Moved] | Invalid:
        data = example.inputs["input_data"]
        targets = crop_targets(example)
        if isinstance(targets, Invalid):
            return targets
        sources = [np.arange(n, dtype=np.int64) for n in data.shape]
        for axis, length in targets.items():
            sources[axis] = centred(data.shape[axis], length)
        index = combined(data.shape, sources)
        if not (index == FILL).any():
            return [Moved((index,))]
        fills = default_fills(data.dtype, example.dtype)
        ambiguity = E8M0_DEFAULT if len(fills) > 1 else None
        return [Moved((index,), label, fill=fill, ambiguity=ambiguity) for fill, label in fills]


def crop_targets(example: Example) -> dict[int, int] | Invalid:
    """Each chosen axis (non-negative) with its target length, or the rule the case breaks."""
    data = example.inputs["input_data"]
    shape = one_d(example, "shape", SHAPE_1D)
    if isinstance(shape, Invalid):
        return shape
    written = ints(example.attributes.get("axes"))
    if written is None:
        axes = list(range(data.ndim))
    else:
        axes = axes_in(written, data.ndim, True, CROP_AXES_RANGE)
        if isinstance(axes, Invalid):
            return axes
        if len(set(axes)) != len(axes):
            return Invalid("repeated-axes", CROP_AXES_REPEATED)
    if len(shape) != len(axes):
        return Invalid("shape-length", SHAPE_LENGTH)
    if any(s < 0 for s in shape):
        return Invalid("negative-dim", SHAPE_NEGATIVE)
    return dict(zip(axes, shape))


def centred(n: int, length: int) -> np.ndarray:
    """The sources of one axis of `n` cropped or padded to `length`: a crop starts at
    floor((n - length) / 2); a pad puts floor((length - n) / 2) before and the rest after."""
    if length <= n:
        start = (n - length) // 2
        return np.arange(start, start + length, dtype=np.int64)
    before = (length - n) // 2
    after = length - n - before
    return np.concatenate([np.full(before, FILL, np.int64), np.arange(n, dtype=np.int64), np.full(after, FILL, np.int64)])


# --- sizes and traits ---
def pad_extents(example: Example) -> list[tuple[int, int, int]] | None:
    """(dim, begin, end) per data axis as the case writes them, or None where they cannot be read
    (a case the text rejects for its pads or axes)."""
    data = example.inputs.get("data")
    if data is None:
        return None
    semantics = PAD.semantics_for(example.version)
    pads = semantics.pads(example)
    axes = semantics.axes(example, data.ndim)
    if pads is None or isinstance(pads, Invalid) or isinstance(axes, Invalid) or len(pads) != 2 * len(axes):
        return None
    per_axis = [(n, 0, 0) for n in data.shape]
    for k, axis in enumerate(axes):
        per_axis[axis] = (data.shape[axis], pads[k], pads[len(axes) + k])
    return per_axis


def pad_elements(example: Example) -> int:
    extents = pad_extents(example)
    return 0 if extents is None else math.prod(max(0, n + b + e) for n, b, e in extents)


def crop_elements(example: Example) -> int:
    targets = crop_targets(example)
    if isinstance(targets, Invalid):
        return 0
    return math.prod(targets.get(k, n) for k, n in enumerate(example.inputs["input_data"].shape))


def pad_mode(example: Example) -> str:
    mode = example.attributes.get("mode", "constant")
    return mode.decode() if isinstance(mode, bytes) else str(mode)


def negative_pads(example: Example) -> bool:
    """A negative pad: elements removed (Pad-2 on; Pad-1 speaks of counts)."""
    extents = pad_extents(example)
    return extents is not None and any(b < 0 or e < 0 for _, b, e in extents)


def reflect_past_edge(example: Example) -> bool:
    """Reflect padding longer than the vector less one: past its mirror image (a vector of one
    has none), on the axis or on what a crop at its other end leaves."""
    extents = pad_extents(example)
    return pad_mode(example) == "reflect" and extents is not None and any(reflects_past_edge(*x) for x in extents)


def pad_and_crop_one_axis(example: Example) -> bool:
    """A crop at one end of an axis and a pad at the other in edge, reflect or wrap mode: whether
    the padding comes from the whole axis or from what the crop leaves."""
    extents = pad_extents(example)
    return (pad_mode(example) in COPYING_MODES and extents is not None
            and any(min(b, e) < 0 < max(b, e) for _, b, e in extents))


def crop_past_dim(example: Example) -> bool:
    """One end removes all of an axis or more while the other pads it back: removing first leaves
    nothing to pad from (in constant mode, only a removal of more than the axis holds counts)."""
    extents = pad_extents(example)
    mode = pad_mode(example)
    return extents is not None and any(
        axis_sources(n, b, e, mode, crop_first=True) is None and axis_sources(n, b, e, mode, crop_first=False) is not None
        for n, b, e in extents if n + b + e >= 0)


def wrap_mode(example: Example) -> bool:
    return pad_mode(example) == "wrap"


def wrap_past_dim(example: Example) -> bool:
    """Wrap padding longer than the axis: the torus goes round more than once."""
    extents = pad_extents(example)
    return wrap_mode(example) and extents is not None and any(max(b, e) > n for n, b, e in extents)


def scalar_data(example: Example) -> bool:
    """A 0-d data tensor (no axes, so `pads` is empty): the text pads nothing and returns it."""
    data = example.inputs.get("data", example.inputs.get("input_data"))
    return data is not None and data.ndim == 0


def wrap_of_empty(example: Example) -> bool:
    """Wrap mode on a data tensor with no elements (a dim of 0 anywhere)."""
    data = example.inputs.get("data")
    return wrap_mode(example) and data is not None and data.size == 0


def copying_crop_to_nothing(example: Example) -> bool:
    """Edge, reflect or wrap mode where negative pads remove the whole of some non-empty axis:
    the output is empty along it, or padded from nothing (see crop-past-dim)."""
    extents = pad_extents(example)
    return (pad_mode(example) in COPYING_MODES and extents is not None
            and any(n > 0 and n + min(b, 0) + min(e, 0) <= 0 for n, b, e in extents))


def edge_mode(example: Example) -> bool:
    return pad_mode(example) == "edge"


def reflect_mode(example: Example) -> bool:
    return pad_mode(example) == "reflect"


def empty_axis_padded(example: Example) -> bool:
    """An axis of size 0 given a positive pad (in any mode; in edge, reflect or wrap there is
    nothing to copy)."""
    extents = pad_extents(example)
    return extents is not None and any(n == 0 and max(b, e) > 0 for n, b, e in extents)


def axes_input(example: Example) -> bool:
    """Pad-18's `axes` input given."""
    return example.inputs.get("axes") is not None


def axes_int32(example: Example) -> bool:
    """Pad-18's `axes` given as int32 (Tind allows it; onnx's shape inference reads a constant
    `axes` as int64 only)."""
    axes = example.inputs.get("axes")
    return axes is not None and axes.dtype == np.int32


def negative_axes(example: Example) -> bool:
    """An axis written from the back (Pad's `axes` input, CenterCropPad's `axes` attribute)."""
    written = ints(example.inputs.get("axes")) if example.version.input("axes") is not None else ints(example.attributes.get("axes"))
    return bool(written) and min(written) < 0


def constant_value_omitted(example: Example) -> bool:
    """Constant mode filling with the default: no `constant_value` input (11+), no `value` (1, 2)."""
    if pad_mode(example) != "constant":
        return False
    if example.version.input("constant_value") is not None:
        return example.inputs.get("constant_value") is None
    return example.attributes.get("value") is None


def constant_value_unused(example: Example) -> bool:
    """A fill given (`constant_value`, or Pad-1/2's `value`) in edge, reflect or wrap mode, where the
    text uses it for nothing."""
    given = example.inputs.get("constant_value") is not None or example.attributes.get("value") is not None
    return given and pad_mode(example) in COPYING_MODES


def pads_attribute(example: Example) -> bool:
    """Pad-1 and -2: the pads as an attribute (`paddings`, `pads`) and `value` as a float attribute."""
    return example.version.input("pads") is None


def crop_odd_difference(example: Example) -> bool:
    """CenterCropPad with an odd difference between a dim and its target: the extra element's side."""
    targets = crop_targets(example)
    if isinstance(targets, Invalid):
        return False
    shape = example.inputs["input_data"].shape
    return any((shape[k] - length) % 2 for k, length in targets.items())


def crop_grows(example: Example) -> bool:
    """CenterCropPad padding some axis (a target above its dim): zeros laid around the input."""
    targets = crop_targets(example)
    return not isinstance(targets, Invalid) and any(length > example.inputs["input_data"].shape[k]
                                                    for k, length in targets.items())


def shape_int32(example: Example) -> bool:
    """CenterCropPad's `shape` as int32 (Tind allows it; the function body's Max(Shape(input_data),
    shape) then binds int64 and int32 to one type parameter: the body is ill-typed for it)."""
    shape = example.inputs.get("shape")
    return shape is not None and shape.dtype == np.int32


def crop_axes_attribute(example: Example) -> bool:
    """CenterCropPad's `axes` attribute given."""
    return example.attributes.get("axes") is not None


PAD = OpReference(
    op="Pad", dtype_param="T", semantics=(Pad1Paddings, Pad2, Pad11, Pad18, Pad19), data_inputs=("data",),
    output_elements_from=pad_elements,
    traits={"negative-pads": negative_pads, "reflect-past-edge": reflect_past_edge,
            "pad-and-crop-one-axis": pad_and_crop_one_axis, "crop-past-dim": crop_past_dim,
            "wrap-mode": wrap_mode, "wrap-past-dim": wrap_past_dim, "edge-mode": edge_mode, "reflect-mode": reflect_mode,
            "empty-axis-padded": empty_axis_padded, "axes-input": axes_input, "axes-int32": axes_int32,
            "negative-axes": negative_axes, "scalar-data": scalar_data, "wrap-of-empty": wrap_of_empty,
            "copying-crop-to-nothing": copying_crop_to_nothing, "constant-value-unused": constant_value_unused,
            "constant-value-omitted": constant_value_omitted, "pads-attribute": pads_attribute},
    rules=("unknown-mode", "pads-length", "not-1d", "negative-output-dim", "constant-value-not-scalar",
           "axis-out-of-range", "repeated-axes"))
CENTER_CROP_PAD = OpReference(
    op="CenterCropPad", dtype_param="T", semantics=(CenterCropPad18,), data_inputs=("input_data",),
    shape_inputs=("shape",), output_elements_from=crop_elements,
    traits={"scalar-data": scalar_data, "odd-difference": crop_odd_difference, "grows": crop_grows,
            "axes-attribute": crop_axes_attribute, "shape-int32": shape_int32, "negative-axes": negative_axes},
    rules=("not-1d", "axis-out-of-range", "repeated-axes", "shape-length", "negative-dim"))
REFERENCES = (PAD, CENTER_CROP_PAD)
