"""Resize (10, 11, 13, 18, 19) and Upsample (1, 7, 9): the output's shape, each output
coordinate's place in the input, and the pick or weighted sum the text defines there.

Each version is read into a `Plan` per reading of the text (the output's shape and, per axis, the
scale and region the coordinate mapping uses), answered by one shared path:

- the output shape: floor(input_dimension * (roi_end - roi_start) * scale) (roi only with
  tf_crop_and_resize), or `sizes` (from 13 adjusted by `keep_aspect_ratio_policy`); where the
  exact product and the product rounded in float32 floor to different sizes, both are readings;
- the coordinate mapping of `coordinate_transformation_mode` (asymmetric for Resize-10 and
  Upsample, whose texts name no other), with `scale = length_resized / length_original` as the
  text defines it and, where the given (or aspect-kept) scale differs from that ratio, the given
  scale as a second reading (what runtimes and ONNX's own tests use);
- nearest: a pick by `nearest_mode` (Resize-10 and Upsample: floor, as Upsample-1's example
  shows, round half down, or rounding up when downsampling), the index clamped into the input;
  where the mapped coordinate lies within float32's rounding of a tie (or of an integer for
  floor and ceil), either neighbour is allowed per element;
- linear and cubic: Σ w_k·x_k over the taps around the coordinate, the weights the text defines
  (1 − r and r; Keys' cubic with `cubic_coeff_a`; stretched by 1/scale with `antialias` when
  downscaling, normalised to sum 1), samples outside the input taking the edge value unless
  `exclude_outside` zeroes their weights and renormalises. Judged by a per-element bound
  (bounds.py): ½ ULP + γ(taps + axes)·Σ|w·x| per accumulator, plus Σ|δw·x| for weights computed
  in float32 where they are not exact; where every weight is a short dyadic and the terms are
  exactly summable, bitwise;
- tf_crop_and_resize: `extrapolation_value` where the coordinate leaves [0, length_original − 1]
  (either where it lies within rounding of the edge).

Integer data interpolated linearly has no rounding in the text: any integer within the bound of
the exact value (truncated, rounded, floored), saturated where it leaves the type. Strings and
bools have no weighted average: any value, and a rejection is allowed (complex likewise: conform
judges its interpolation by type and shape only).
"""

from __future__ import annotations

import math
from functools import lru_cache
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import product

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, exact_sums, exactly_summable, gamma, half_ulp, ksb, statistical_scale
from ..case import Example
from ..dtypes import from_numpy
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, text_attribute

U32 = 2.0 ** -24
INTEGER_CHOICES = 4  # the integers an interpolated integer element may take, at most, before it is left free
SHORT_BITS = 20  # a dyadic value of at most this many significant bits stays exact through float32 steps
MODES = ("nearest", "linear", "cubic")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
CTM_11 = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize")
CTM_13 = tuple(m for m in CTM_11 if m != "tf_half_pixel_for_nn")
CTM_19 = CTM_13 + ("half_pixel_symmetric",)
POLICIES = ("stretch", "not_larger", "not_smaller")

SCALES_POSITIVE = "scales: The scale array along each dimension. It takes value greater than 0."
SCALES_AT_LEAST_1 = "scales: The scale array along each dimension. It takes value greater than or equal to 1."
SCALES_COUNT = "The number of elements of 'scales' should be the same as the rank of input 'X'."
SCALES_COUNT_18 = "The number of elements of 'scales' should be the same as the rank of input 'X' or the length of 'axes', if provided."
SIZES_COUNT = "sizes: The number of elements of 'sizes' should be the same as the rank of input 'X'."
SIZES_COUNT_18 = "sizes: The number of elements of 'sizes' should be the same as the rank of input 'X', or the length of 'axes', if provided."
BOTH_11 = "sizes: May only be set if 'scales' is set to an empty tensor."
BOTH_13 = "One of 'scales' and 'sizes' MUST be specified and it is an error if both are specified."
NEITHER_11 = "scales: If 'size' is needed, the user must set 'scales' to an empty tensor (and give 'sizes')."
ROI_COUNT = "roi: 1-D tensor given as [start1, ..., startN, end1, ..., endN], where N is the rank of X"
ROI_COUNT_18 = "roi: 1-D tensor given as [start1, ..., startN, end1, ..., endN], where N is the rank of X or the length of axes, if provided."
ROI_NEEDED = ("coordinate_transformation_mode tf_crop_and_resize: x_original = ... start_x * (length_original - 1) + ...: "
              "the mapping needs roi, which is not given")
NEGATIVE_SIZE = "sizes: The size of the output tensor (a size below 0 is none)"
UPSAMPLE_RANK_1 = "X: 4-D tensor, [N,C,H,W]"
AXES_RANGE = "axes: Accepted range is [-r, r-1], where r = rank(data)."
AXES_REPEATED = "axes: Behavior is undefined if an axis is repeated."
EMPTY_SOURCE = "the text gives no value to an output sampled from an input dim of size 0"
NO_AVERAGE = "the text defines no weighted average of this type (string, bool, complex): conform judges type and shape only"
SCALE_READING = ("the text defines scale = length_resized / length_original; where the given scale differs from that "
                 "ratio (floor(input * scale) truncated), runtimes map coordinates with the given scale")
SHAPE_READING = "floor(input_dimension * scale) of the exact product, or of the product rounded in float32"
NEAREST_10 = ("Resize-10 and Upsample name no nearest rounding: floor (Upsample-1's example), round half down, or "
              "rounding up when downsampling")


@dataclass(frozen=True)
class AxisPlan:
    """How one axis is resized: input length, output length, the scale the mapping divides by,
    the fractional output width (half_pixel_symmetric) and the region (tf_crop_and_resize)."""

    length: int
    out: int
    scale: Fraction
    width: Fraction
    roi: tuple[Fraction, Fraction] | None = None
    resized: bool = True


@dataclass(frozen=True)
class Plan:
    """One reading of a case: per axis its `AxisPlan`, and the label of the reading."""

    axes: tuple[AxisPlan, ...]
    label: str = "spec"

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.out for a in self.axes)


@dataclass(frozen=True)
class Settings:
    """The attributes that decide the values, as the version reads them."""

    mode: str
    ctm: str
    nearest: tuple[str, ...]  # the nearest roundings allowed (one from 11)
    a: Fraction = Fraction(-3, 4)
    exclude_outside: bool = False
    antialias: bool = False
    extrapolation: float = 0.0


@dataclass
class AxisTaps:
    """Per output coordinate of one axis: the taps' input indices (clamped), exact weights, the
    weights' float32 error, whether the weights are exact in float32 and their significant bits,
    and where tf_crop_and_resize extrapolates (surely, or within rounding)."""

    index: np.ndarray
    weight: np.ndarray
    error: np.ndarray
    exact: np.ndarray
    bits: np.ndarray
    outside: np.ndarray
    edge: np.ndarray
    picks: list = field(default_factory=list)  # per coordinate, the allowed nearest picks


# --- exact arithmetic helpers ---

def significant_bits(value: Fraction) -> int | None:
    """The significant bits of a dyadic value (None where it is not dyadic)."""
    if value == 0:
        return 0
    den = value.denominator
    if den & (den - 1):
        return None
    num = abs(value.numerator)
    return num.bit_length() - ((num & -num).bit_length() - 1)


def short(*values: Fraction) -> bool:
    """Whether every value is dyadic with few enough bits to stay exact through float32 steps."""
    for value in values:
        bits = significant_bits(value)
        if bits is None or bits > SHORT_BITS:
            return False
    return True


def f32(value: float) -> Fraction:
    return Fraction(float(np.float32(value)))


# --- the coordinate mapping ---

def resized_length(axis: AxisPlan) -> Fraction:
    """length_resized as the reading has it: the output's length (scale = length_resized /
    length_original), or length_original * scale where the given scale is read (ONNX's and
    onnxruntime's align_corners with a scale whose product is not an integer)."""
    return axis.scale * axis.length if axis.length else Fraction(axis.out)


def original(ctm: str, x: int, axis: AxisPlan) -> Fraction:
    """x_original of output coordinate x, exactly as the text writes it."""
    s, length, out = axis.scale, axis.length, axis.out
    if ctm in ("half_pixel", "pytorch_half_pixel"):
        if ctm == "pytorch_half_pixel" and out <= 1:
            return Fraction(0)
        return (x + Fraction(1, 2)) / s - Fraction(1, 2)
    if ctm == "half_pixel_symmetric":
        adjustment = out / axis.width if axis.width else Fraction(1)
        offset = Fraction(length, 2) * (1 - adjustment)
        return offset + (x + Fraction(1, 2)) / s - Fraction(1, 2)
    if ctm == "align_corners":
        resized = resized_length(axis)
        return Fraction(0) if resized <= 1 else x * (length - 1) / (resized - 1)
    if ctm == "asymmetric":
        return x / s
    if ctm == "tf_half_pixel_for_nn":
        return (x + Fraction(1, 2)) / s
    start, end = axis.roi
    if out <= 1:
        return (start + end) / 2 * (length - 1)
    return start * (length - 1) + Fraction(x) * (end - start) * (length - 1) / (out - 1)


def mapping_exact(ctm: str, x: int, axis: AxisPlan, found: Fraction) -> bool:
    """Whether every float32 way of computing the mapping gives `found` exactly: every constant
    it uses and every intermediate is a short dyadic."""
    s, length, out = axis.scale, axis.length, axis.out
    if ctm == "align_corners":
        resized = resized_length(axis)
        if resized <= 1:
            return True
        return length == 1 or short((length - 1) / (resized - 1), (resized - 1) / (length - 1), found)
    if ctm == "tf_crop_and_resize":
        start, end = axis.roi
        if out <= 1 or length == 1:
            return short(start, end, found)
        ratio = Fraction(length - 1, out - 1)
        return short(start, end, end - start, ratio, 1 / ratio, start * (length - 1), found)
    if ctm == "pytorch_half_pixel" and out <= 1:
        return True
    if ctm == "half_pixel_symmetric" and axis.width and not short(out / axis.width, Fraction(length, 2) * (1 - out / axis.width)):
        return False
    return short(s, 1 / s, found)


def mapping_error(ctm: str, x: int, axis: AxisPlan, found: Fraction) -> float:
    """The most a float32 computation of x_original may differ from its exact value (a few
    roundings of each step, generously)."""
    if mapping_exact(ctm, x, axis, found):
        return 0.0
    inverse = float(1 / axis.scale) if axis.scale else 1.0
    reach = (abs(x) + 1) * max(1.0, inverse) + abs(float(found)) + axis.length + axis.out + 2
    if axis.roi is not None:
        reach += (abs(float(axis.roi[0])) + abs(float(axis.roi[1]))) * (axis.length + 1) * (abs(x) + 1)
    return 8 * U32 * reach


# --- nearest ---

def rounded(x: Fraction, mode: str, downsampling: bool) -> int:
    if mode == "round_prefer_floor":
        return math.ceil(x - Fraction(1, 2))
    if mode == "round_prefer_ceil":
        return math.floor(x + Fraction(1, 2))
    if mode == "floor":
        return math.floor(x)
    if mode == "ceil":
        return math.ceil(x)
    return math.ceil(x) if downsampling else math.floor(x)  # "simple": ceil when downsampling


def nearest_picks(x: Fraction, delta: float, mode: str, axis: AxisPlan) -> list[int]:
    """The picks the text's rounding gives at x, and within float32's error of it, clamped."""
    downsampling = axis.scale < 1
    spread = Fraction(delta) if delta else Fraction(0)
    found = []
    for at in (x, x - spread, x + spread):
        k = min(max(rounded(at, mode, downsampling), 0), axis.length - 1)
        if k not in found:
            found.append(k)
    return found


# --- linear and cubic weights ---

def cubic(t: Fraction, a: Fraction) -> Fraction:
    """Keys' cubic convolution kernel (the text's Equation (4)) at t."""
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    if t < 2:
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return Fraction(0)


def kernel_slope(mode: str, a: Fraction) -> float:
    """max |k'(t)|: how far a weight moves per unit of coordinate error."""
    if mode == "linear":
        return 1.0
    af = float(a)
    grid = np.linspace(0.0, 2.0, 401)
    inner = np.abs(3 * (af + 2) * grid ** 2 - 2 * (af + 3) * grid)
    outer = np.abs(3 * af * grid ** 2 - 10 * af * grid + 8 * af)
    return float(np.max(np.where(grid <= 1, inner, outer)))


def taps_at(x: Fraction, settings: Settings, axis: AxisPlan) -> tuple[list[int], list[Fraction], bool]:
    """The taps' unclamped indices and exact weights at x, and whether they were normalised."""
    radius = 1 if settings.mode == "linear" else 2
    stretch = settings.antialias and axis.scale < 1
    if not stretch:
        base = math.floor(x)
        r = x - base
        if settings.mode == "linear":
            return [base, base + 1], [1 - r, r], False
        a = settings.a
        return [base - 1, base, base + 1, base + 2], [cubic(1 + r, a), cubic(r, a), cubic(1 - r, a), cubic(2 - r, a)], False
    reach = radius / axis.scale
    indices = list(range(math.ceil(x - reach), math.floor(x + reach) + 1))
    kernel = (lambda t: max(1 - abs(t), Fraction(0))) if settings.mode == "linear" else (lambda t: cubic(t, settings.a))
    weights = [kernel((i - x) * axis.scale) for i in indices]
    return indices, weights, True


@lru_cache(maxsize=512)
def axis_taps(settings: Settings, axis: AxisPlan) -> AxisTaps:
    """The taps of every output coordinate of one axis."""
    rows = []
    slope = kernel_slope(settings.mode, settings.a) if settings.mode != "nearest" else 0.0
    a_short = short(settings.a) and (significant_bits(settings.a) or 0) <= 8
    for x in range(axis.out):
        if not axis.resized:
            rows.append(([x], [Fraction(1)], 0.0, True, False, False, [x]))
            continue
        at = original(settings.ctm, x, axis)
        delta = mapping_error(settings.ctm, x, axis, at)
        outside = edge = False
        if settings.ctm == "tf_crop_and_resize":
            outside = at < 0 or at > axis.length - 1
            edge = not outside and delta > 0 and (float(at) - delta < 0 or float(at) + delta > axis.length - 1)
            edge = edge or (outside and delta > 0 and (float(at) + delta >= 0 and float(at) - delta <= axis.length - 1))
        if settings.mode == "nearest":
            picks = sorted({p for mode in settings.nearest for p in nearest_picks(at, delta, mode, axis)})
            rows.append(([picks[0]], [Fraction(1)], 0.0, True, outside, edge, picks))
            continue
        indices, weights, normalised = taps_at(at, settings, axis)
        if settings.exclude_outside:
            weights = [w if 0 <= i < axis.length else Fraction(0) for i, w in zip(indices, weights)]
            normalised = True
        total = sum(weights)
        if normalised:
            weights = [w / total for w in weights] if total else weights
        raw_short = delta == 0 and (settings.mode == "linear" or a_short) and short(at - math.floor(at))
        exact = raw_short and (not normalised or (total > 0 and short(total) and significant_bits(total) == 1))
        exact = exact and short(*weights)
        stretch = float(axis.scale) if settings.antialias and axis.scale < 1 else 1.0
        error = 0.0 if exact else _weight_error(slope * stretch * delta, settings, weights, normalised, total)
        rows.append((indices, weights, error, exact, outside, edge, None))
    return _pack(rows, axis)


def _weight_error(moved: float, settings: Settings, weights: list[Fraction], normalised: bool, total: Fraction) -> float:
    """A bound on each weight's error computed in float32: the coordinate's error through the
    kernel's slope, the kernel's own evaluation, and a normalisation's division."""
    evaluation = 16 * U32 * (3 + abs(float(settings.a))) if settings.mode == "cubic" else 2 * U32
    error = moved + evaluation
    if normalised and total:
        n = len(weights)
        error = 2 * (error + n * error) / float(abs(total)) + 2 * (n + 2) * U32
    return error


def _pack(rows: list, axis: AxisPlan) -> AxisTaps:
    width = max((len(r[0]) for r in rows), default=1)
    out = len(rows)
    index = np.zeros((out, width), dtype=np.int64)
    weight = np.zeros((out, width), dtype=np.float64)
    error = np.zeros((out, width), dtype=np.float64)
    exact = np.ones(out, dtype=bool)
    bits = np.zeros(out, dtype=np.int64)
    outside = np.zeros(out, dtype=bool)
    edge = np.zeros(out, dtype=bool)
    picks = []
    for o, (indices, weights, err, is_exact, is_outside, is_edge, pick) in enumerate(rows):
        n = len(indices)
        index[o, :n] = np.clip(indices, 0, max(axis.length - 1, 0))
        weight[o, :n] = [float(w) for w in weights]
        error[o, :n] = err
        exact[o] = bool(is_exact)
        bits[o] = max((64 if significant_bits(w) is None else significant_bits(w) for w in weights), default=0)
        outside[o], edge[o] = is_outside, is_edge
        picks.append(pick)
    return AxisTaps(index, weight, error, exact, bits, outside, edge, picks)


# --- the output: picks ---

def _extrapolation_cast(value: float, np_dtype: np.dtype) -> list:
    """extrapolation_value in the output's type: the float rounded, or for an integer type the
    integers around it (the text does not say how it converts); none (any value) where it lies
    outside the integer type, whose conversion neither the text nor C's cast defines."""
    kind = from_numpy(np_dtype)
    if kind.kind == "float":
        return [np.array(value).astype(np_dtype)]
    if kind.kind in ("int", "uint"):
        low, high = int(kind.lowest), int(kind.max)
        if not low <= value <= high:
            return []
        return [np.array(v).astype(np_dtype) for v in sorted({math.floor(value), math.ceil(value)})]
    return []


def _outside_masks(taps: list[AxisTaps], shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    outside = np.zeros(shape, dtype=bool)
    edge = np.zeros(shape, dtype=bool)
    for d, t in enumerate(taps):
        view = [1] * len(shape)
        view[d] = -1
        outside |= t.outside.reshape(view)
        edge |= t.edge.reshape(view)
    return outside & ~edge, edge


def nearest_output(x: np.ndarray, taps: list[AxisTaps], settings: Settings, label: str) -> Reading:
    """Per element the text's pick; the other picks within rounding, and the extrapolation value
    where it may or must apply, as choices."""
    shape = tuple(len(t.picks) for t in taps)
    layers = []
    for corner in product((0, -1), repeat=len(taps)):
        grids = np.ix_(*[np.array([p[c] for p in t.picks], dtype=np.int64) for t, c in zip(taps, corner)])
        layers.append(x[grids] if x.size else np.zeros(shape, dtype=x.dtype))
    first = layers[0]
    surely, maybe = _outside_masks(taps, shape)
    values = _extrapolation_cast(settings.extrapolation, x.dtype)
    free = None
    if values:
        first = np.where(surely, values[0], first).astype(x.dtype)
        layers = [np.where(surely, values[-1], layer).astype(x.dtype) for layer in layers]
        layers += [np.where(maybe, v, layers[0]).astype(x.dtype) for v in values]
    elif surely.any() or maybe.any():
        free = surely | maybe
    stacked = np.stack(layers) if len(layers) > 1 else None
    return Reading((first,), label, free=(free,) if free is not None else (), choices=(stacked,) if stacked is not None else ())


# --- the output: weighted sums ---

@dataclass
class Sums:
    """The weighted sum of every output element: exact value, Σ|w·x|, the weights' error term
    Σ δw·|x|, tap count, whether the weights are exact, terms (rows, taps) and loose elements
    (a zero-weight tap holding a non-finite value)."""

    magnitude: np.ndarray
    weight_error: np.ndarray
    taps: int
    exact: np.ndarray
    terms: np.ndarray
    loose: np.ndarray
    spans: np.ndarray  # 2·|x| of every tap (rows, taps): what a lerp's intermediates may reach
    # The largest |x| of an element's taps times each axis's Σ|w|: what the partial sums of an
    # evaluation axis by axis (onnx.reference's) may reach.
    reach: np.ndarray


def underflow(accumulator: np.dtype, taps: int) -> float:
    """What each product w·x may lose below the accumulator's least subnormal (Higham's η / 2 per
    product), every tap."""
    finfo = ml_dtypes.finfo(accumulator)
    return taps * float(finfo.smallest_normal) * 2.0 ** -int(finfo.nmant)


def lerp_error(sums: Sums, settings: Settings, shape: tuple[int, ...], u: float) -> np.ndarray | float:
    """What linear interpolation evaluated as nested lerps, a + r·(b − a) per axis (TensorFlow's
    form), may add beyond Σ w·x's error: each axis rounds b − a, of magnitude up to |a| + |b|."""
    if settings.mode != "linear" or not sums.spans.size:
        return 0.0
    axes = int(np.log2(max(sums.taps, 1))) or 1
    with np.errstate(over="ignore", invalid="ignore"):
        return u * axes * sums.spans.sum(axis=1).reshape(shape)


def summable(sums: Sums, accumulator: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """Whether every way of evaluating the weighted sum (Σ w·x in any order, or nested lerps) is
    exact in `accumulator`."""
    if not sums.terms.size:
        return np.ones(shape, dtype=bool)
    return exactly_summable(np.concatenate([sums.terms, sums.spans], axis=1), accumulator).reshape(shape)


def weighted_sums(x: np.ndarray, taps: list[AxisTaps]) -> Sums:
    """Every output element's terms w·x over the taps of every axis, at once: the input gathered
    as [out_0, taps_0, out_1, taps_1, ...], the weights as the outer product of each axis's."""
    shape = tuple(t.index.shape[0] for t in taps)
    rank = len(taps)
    wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    grid, weight, upper = [], np.ones([1] * 2 * rank), np.ones([1] * 2 * rank)
    for d, t in enumerate(taps):
        view = [1] * 2 * rank
        view[2 * d], view[2 * d + 1] = t.index.shape
        grid.append(t.index.reshape(view))
        weight = weight * t.weight.reshape(view)
        upper = upper * (np.abs(t.weight) + t.error).reshape(view)
    values = wide[tuple(grid)] if rank else wide.reshape(())
    values, weight, upper = np.broadcast_arrays(values, weight, upper)
    order = [2 * d for d in range(rank)] + [2 * d + 1 for d in range(rank)]
    count = int(np.prod([t.index.shape[1] for t in taps])) if rank else 1
    flat = lambda a: np.transpose(a, order).reshape(shape + (count,))  # noqa: E731
    values, weight, upper = flat(values), flat(weight), flat(upper)
    finite = np.isfinite(values)
    with np.errstate(invalid="ignore", over="ignore"):
        term = np.where(weight == 0, 0.0, weight * values)
        werr = np.where(finite, (upper - np.abs(weight)) + rank * U32 * np.abs(weight) * (upper > np.abs(weight)), 0.0)
        weight_error = np.sum(werr * np.where(finite, np.abs(values), 0.0), axis=-1)
        magnitude = np.sum(np.where(np.isfinite(term), np.abs(term), 0.0), axis=-1)
    loose = np.any((weight == 0) & ~finite, axis=-1)
    stacked = term.reshape(-1, count)
    # A runtime may interpolate as a + r·(b − a) (lerp) rather than Σ w·x: its intermediates reach
    # the taps' own magnitudes, so exactness also asks that the raw values fit the same grid.
    spans = np.where(finite, 2 * np.abs(values), 0.0).reshape(-1, count)
    exact = np.ones(shape, dtype=bool)
    bits = np.zeros(shape, dtype=np.int64)
    gain = np.ones(shape)
    for d, t in enumerate(taps):
        view = [1] * len(shape)
        view[d] = -1
        exact &= t.exact.reshape(view)
        bits = bits + t.bits.reshape(view)
        gain = gain * np.abs(t.weight).sum(axis=1).reshape(view)
    largest = np.max(np.where(finite, np.abs(values), 0.0), axis=-1, initial=0.0)
    with np.errstate(over="ignore"):  # past float64's max: inf, past every accumulator's too
        reach = largest * gain
    return Sums(magnitude, weight_error, count, exact & (bits <= 24), stacked, loose, spans, reach)


def float_output(x: np.ndarray, taps: list[AxisTaps], settings: Settings, label: str) -> tuple[Reading, ElementBound]:
    """The weighted sums judged by their per-element bound, extrapolated elements exactly."""
    out = x.dtype
    shape = tuple(t.index.shape[0] for t in taps)
    sums = weighted_sums(x, taps)
    y = exact_sums(sums.terms, out).reshape(shape) if sums.terms.size else np.zeros(shape)
    surely, maybe = _outside_masks(taps, shape)
    extrapolated = float(np.array(settings.extrapolation).astype(out).astype(np.float64))
    y = np.where(surely, extrapolated, y)
    n = np.full(shape, sums.taps + len(taps), dtype=np.float64)
    tiers = []
    for label_acc, acc in accumulators(out):
        u = 2.0 ** -(int(ml_dtypes.finfo(acc).nmant) + 1)
        with np.errstate(over="ignore", invalid="ignore"):
            allowed = (half_ulp(y, out) + gamma(n, u) * sums.magnitude + max(1.0, u / U32) * sums.weight_error
                       + lerp_error(sums, settings, shape, u) + underflow(acc, sums.taps))
        exact_here = summable(sums, acc, shape)
        correct = np.abs(np.where(np.isfinite(y), y, 0.0).astype(out).astype(np.float64) - np.where(np.isfinite(y), y, 0.0))
        allowed = np.where(sums.exact & exact_here, correct, allowed)
        allowed = np.where(surely, half_ulp(y, out), allowed)
        allowed = np.where(sums.loose & ~surely, np.inf, allowed)
        # A partial sum may overflow the accumulator in some order, or axis by axis: no requirement
        # (TOSA); but where a product itself overflows (y infinite), every order gives that infinity.
        past = (sums.magnitude > float(ml_dtypes.finfo(acc).max)) | (np.isfinite(y) & (sums.reach > float(ml_dtypes.finfo(acc).max)))
        allowed = np.where(past, np.inf, allowed)
        tiers.append(Tier(label_acc, allowed, ksb(n, acc, out)))
    also = (np.where(maybe, extrapolated, np.nan),) if maybe.any() else ()
    bound = ElementBound(tuple(tiers), "½ulp(y) + γ(taps + axes)·Σ|w·x| + Σ|δw·x|",
                         "a weighted sum in any order and accumulator (Higham), with weights computed in float32; "
                         "exact weights and exactly summable terms judged bitwise",
                         statistical_scale(sums.magnitude, out), also)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = y.astype(out)
    return Reading((rounded,), label, precise=(y,)), bound


def integer_output(x: np.ndarray, taps: list[AxisTaps], settings: Settings, label: str) -> Reading:
    """Integers within the float32 bound of the exact weighted sum (choices), saturated; any value
    where the sum may leave the type (the text says nothing of it) or the bound spans more than
    INTEGER_CHOICES integers."""
    kind = from_numpy(x.dtype)
    shape = tuple(t.index.shape[0] for t in taps)
    sums = weighted_sums(x, taps)
    y = sums.terms.sum(axis=1).reshape(shape) if sums.terms.size else np.zeros(shape)
    n = sums.taps + len(taps)
    # a runtime sums integers in float32 or wider: exact only where the weights and partial sums are
    slack = np.where(sums.exact & summable(sums, np.dtype(np.float32), shape), 0.0,
                     float(gamma(n, U32)) * sums.magnitude + sums.weight_error + lerp_error(sums, settings, shape, U32))
    low, high = np.floor(y - slack), np.ceil(y + slack)
    surely, maybe = _outside_masks(taps, shape)
    v = settings.extrapolation
    low = np.where(surely, math.floor(v), np.where(maybe, np.minimum(low, math.floor(v)), low))
    high = np.where(surely, math.ceil(v), np.where(maybe, np.maximum(high, math.ceil(v)), high))
    lo_t, hi_t = int(kind.lowest), int(kind.max)
    beyond = (y - slack < lo_t) | (y + slack > hi_t)
    if not lo_t <= v <= hi_t:  # an extrapolation_value the type cannot hold: any value there
        beyond = beyond | surely | maybe
    layers, many = integer_choices(low, high, x.dtype)
    wide = beyond | many
    return Reading((layers[0],), label, free=(wide,) if wide.any() else (), choices=(layers,))


def integer_choices(low: np.ndarray, high: np.ndarray, np_dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """The integers from `low` to `high` (float arrays of integers, clipped into the type) as
    INTEGER_CHOICES layers of `np_dtype`, the last repeated, and where more lie between them (those
    elements are left free)."""
    info = np.iinfo(np_dtype)
    lo_t, hi_t = int(info.min), int(info.max)
    low, high = np.clip(low, lo_t, hi_t), np.clip(high, lo_t, hi_t)
    many = high - low > INTEGER_CHOICES - 1
    # low and high are clipped into the type: exact in float64 but for 64-bit extremes, so clip as Python ints there
    wide64 = max(abs(lo_t), abs(hi_t)) > 2 ** 53
    as_type = ((lambda v: np.array([min(max(int(e), lo_t), hi_t) for e in v.reshape(-1)], dtype=np_dtype).reshape(v.shape))
               if wide64 else (lambda v: np.clip(v, lo_t, hi_t).astype(np_dtype)))
    return np.stack([as_type(np.minimum(low + k, high)) for k in range(INTEGER_CHOICES)]), many


def answer(x: np.ndarray, plans: list[Plan], settings: Settings) -> Expected:
    """The readings of every plan (each a shape and a scale reading)."""
    kind = from_numpy(x.dtype).kind
    found, budgets = [], []
    for plan in plans:
        if any(a.length == 0 and a.out > 0 for a in plan.axes):
            anything = np.ones(plan.shape, dtype=bool)
            found.append(Reading((np.zeros(plan.shape, dtype=x.dtype),), plan.label, free=(anything,)))
            budgets.append(None)
            continue
        taps = [axis_taps(settings, a) for a in plan.axes]
        if settings.mode == "nearest":
            found.append(nearest_output(x, taps, settings, plan.label))
            budgets.append(None)
        elif kind == "float":
            reading, bound = float_output(x, taps, settings, plan.label)
            found.append(reading)
            budgets.append(bound)
        elif kind in ("int", "uint"):
            found.append(integer_output(x, taps, settings, plan.label))
            budgets.append(None)
        else:
            anything = np.ones(plan.shape, dtype=bool)
            return Expected(readings=(Reading((np.zeros(plan.shape, dtype=x.dtype),), "any value", free=(anything,)),),
                            may_reject=NO_AVERAGE)
    empty_source = any(a.length == 0 and a.out > 0 for p in plans for a in p.axes)
    return _combined(found, budgets, EMPTY_SOURCE if empty_source else None)


def _combined(found: list[Reading], budgets: list, may_reject: str | None) -> Expected:
    """One Expected from readings that may be judged by different bounds: the comparison takes one
    budget per output, so bounded readings keep the loosest bound per element, and only those of
    the first reading's shape are kept (a bound has one shape)."""
    bounded = [b for b in budgets if b is not None]
    if not bounded:
        return Expected(readings=tuple(found), may_reject=may_reject, ambiguity=_ambiguity(found))
    shape = bounded[0].allowed.shape
    kept = [(r, b) for r, b in zip(found, budgets) if b is not None and b.allowed.shape == shape]
    tiers = tuple(Tier(t.label, np.maximum.reduce([b.tiers[k].allowed for _, b in kept]), t.ksb)
                  for k, t in enumerate(bounded[0].tiers))
    merged = replace(bounded[0], tiers=tiers, also=tuple(v for _, b in kept for v in b.also))
    readings = [r for r, _ in kept]
    return Expected(readings=tuple(readings), budgets=(merged,), may_reject=may_reject, ambiguity=_ambiguity(readings))


def _ambiguity(found: list[Reading]) -> str | None:
    labels = {r.label for r in found}
    if len(labels) <= 1:
        return None
    return "; ".join(sorted(labels))


# --- reading a version's inputs into plans ---

def floats(value) -> list[Fraction]:
    return [Fraction(float(v)) for v in np.asarray(value).reshape(-1).astype(np.float64)]


def shape_sizes(length: int, factor: Fraction, scale32: float, span: float) -> list[int]:
    """floor(length * span * scale) exactly, and as float32 would give it."""
    exact = math.floor(length * factor)
    with np.errstate(over="ignore", invalid="ignore"):
        single = np.float32(length) * np.float32(span) * np.float32(scale32)
    sizes = [exact]
    if np.isfinite(single) and math.floor(float(single)) not in sizes and math.floor(float(single)) >= 0:
        sizes.append(math.floor(float(single)))
    return sizes


def scale_plans(x: np.ndarray, axes: list[int], scales: list[Fraction], rois: dict[int, tuple[Fraction, Fraction]],
                ctm: str, length_ratio_only: bool = False) -> list[Plan]:
    """The plans of a resize by scales: each axis's size readings, and both scale readings."""
    per_axis: list[list[tuple[int, Fraction]]] = []
    for d, length in enumerate(x.shape):
        if d not in axes:
            per_axis.append([(length, Fraction(1))])
            continue
        s = scales[axes.index(d)]
        start, end = rois.get(d, (Fraction(0), Fraction(1)))
        span = end - start if ctm == "tf_crop_and_resize" else Fraction(1)
        sizes = shape_sizes(length, span * s, float(s), float(span))
        per_axis.append([(size, s) for size in sizes])
    plans = []
    for combo in product(*per_axis):
        for given in ((False, True) if not length_ratio_only else (False,)):
            axis_plans = []
            for d, (size, s) in enumerate(combo):
                length = x.shape[d]
                ratio = Fraction(size, length) if length else s
                scale = s if given else ratio
                if scale == 0:
                    scale = s if s else Fraction(1)
                axis_plans.append(AxisPlan(length, size, scale, s * length, rois.get(d), d in axes))
            label = "given scale" if given else "spec"
            if given and all(p.scale == q.scale for p, q in zip(axis_plans, plans[-1].axes)) and plans[-1].shape == tuple(c[0] for c in combo):
                continue
            plans.append(Plan(tuple(axis_plans), label if len(per_axis) else "spec"))
    return _relabel(plans)


def _relabel(plans: list[Plan]) -> list[Plan]:
    shapes = {p.shape for p in plans}
    found = []
    for p in plans:
        parts = []
        if len(shapes) > 1:
            parts.append(f"output shape {list(p.shape)}")
        parts.append("scale as given (not length_resized / length_original)" if p.label == "given scale" else "scale = length_resized / length_original")
        found.append(replace(p, label=("; ".join(parts)) if len(plans) > 1 else "spec"))
    return found


def size_plans(x: np.ndarray, axes: list[int], sizes: list[int], rois: dict, policy: str) -> list[Plan]:
    """The plans of a resize to sizes, with keep_aspect_ratio_policy."""
    outs = {}
    scales = {}
    if policy == "stretch":
        for d, size in zip(axes, sizes):
            outs[d] = [size]
            scales[d] = Fraction(size, x.shape[d]) if x.shape[d] else Fraction(1)
    else:
        ratios = [Fraction(size, x.shape[d]) for d, size in zip(axes, sizes)]
        common = min(ratios) if policy == "not_larger" else max(ratios)
        singles = [np.float32(size) / np.float32(x.shape[d]) for d, size in zip(axes, sizes)]
        single = min(singles) if policy == "not_larger" else max(singles)
        for d in axes:
            exact = math.floor(common * x.shape[d] + Fraction(1, 2))
            approx = math.floor(float(np.float32(single) * np.float32(x.shape[d])) + 0.5)
            outs[d] = sorted({exact, approx})
            scales[d] = common
    per_axis = [[(size, scales[d]) for size in outs[d]] if d in axes else [(length, Fraction(1))] for d, length in enumerate(x.shape)]
    plans = []
    for combo in product(*per_axis):
        for given in (False, True):
            axis_plans = []
            for d, (size, s) in enumerate(combo):
                length = x.shape[d]
                ratio = Fraction(size, length) if length and size else (s or Fraction(1))
                axis_plans.append(AxisPlan(length, size, s if given else ratio, s * length, rois.get(d), d in axes))
            if given and [a.scale for a in axis_plans] == [a.scale for a in plans[-1].axes]:
                continue
            plans.append(Plan(tuple(axis_plans), "given scale" if given else "spec"))
    return _relabel(plans)


class ResizeBase(VersionSemantics):
    """What every version shares: reading the plans, then `answer`."""

    modes = MODES
    ctms = CTM_13
    has_axes = False
    optional_scales = True

    def expected(self, example: Example) -> Expected:
        x = example.inputs["X"]
        found = self.settings(example)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        plans = self.plans(example, x, found)
        if isinstance(plans, Invalid):
            return Expected(invalid=plans)
        if isinstance(plans, Expected):
            return plans
        return answer(x, plans, found)

    def settings(self, example: Example) -> Settings | Invalid:
        attrs = example.attributes
        mode = text_attribute(example, "mode", "nearest")
        if mode not in self.modes:
            return Invalid("unknown-mode", f"mode: {' '.join(self.modes)} (not {mode!r})")
        ctm = text_attribute(example, "coordinate_transformation_mode", "half_pixel")
        if ctm not in self.ctms:
            return Invalid("unknown-coordinate-mode", f"coordinate_transformation_mode: one of {', '.join(self.ctms)} (not {ctm!r})")
        nearest = text_attribute(example, "nearest_mode", "round_prefer_floor")
        if nearest not in NEAREST_MODES:
            return Invalid("unknown-nearest-mode", f"nearest_mode: Four modes: {', '.join(NEAREST_MODES)} (not {nearest!r})")
        policy = text_attribute(example, "keep_aspect_ratio_policy", "stretch")
        if policy not in POLICIES:
            return Invalid("unknown-policy", f"keep_aspect_ratio_policy: stretch, not_larger or not_smaller (not {policy!r})")
        return Settings(mode, ctm, (nearest,), f32(attrs.get("cubic_coeff_a", -0.75)),
                        bool(int(attrs.get("exclude_outside", 0))), bool(int(attrs.get("antialias", 0))),
                        float(np.float32(attrs.get("extrapolation_value", 0.0))))

    def axes(self, example: Example, rank: int) -> list[int] | Invalid | Expected:
        written = example.attributes.get("axes") if self.has_axes else None
        if written is None:
            return list(range(rank))
        found = []
        for axis in [int(a) for a in written]:
            if not -rank <= axis < rank:
                return Invalid("axis-out-of-range", AXES_RANGE)
            found.append(axis + rank if axis < 0 else axis)
        if len(set(found)) != len(found):
            dtype = example.inputs["X"].dtype
            from .expected import OutputSpec
            return Expected(specs=(OutputSpec(dtype, None),), may_reject=AXES_REPEATED)
        return found

    def plans(self, example: Example, x: np.ndarray, settings: Settings) -> list[Plan] | Invalid | Expected:
        axes = self.axes(example, x.ndim)
        if not isinstance(axes, list):
            return axes
        count = len(axes)
        scales_in, sizes_in, roi_in = example.inputs.get("scales"), example.inputs.get("sizes"), example.inputs.get("roi")
        for name, value in (("scales", scales_in), ("sizes", sizes_in), ("roi", roi_in)):
            if value is not None and value.ndim != 1:
                return Invalid("not-1d", f"{name}: a 1-D tensor")
        has_scales = scales_in is not None and scales_in.size > 0
        has_sizes = sizes_in is not None
        if has_scales and has_sizes:
            return Invalid("scales-and-sizes", BOTH_13 if self.optional_scales else BOTH_11)
        if not has_scales and not has_sizes:
            return Invalid("no-scales-or-sizes", BOTH_13 if self.optional_scales else NEITHER_11)
        rois = {}
        if settings.ctm == "tf_crop_and_resize":
            if roi_in is None:
                return Invalid("roi-missing", ROI_NEEDED)
            if roi_in.size != 2 * count:
                return Invalid("roi-length", ROI_COUNT_18 if self.has_axes else ROI_COUNT)
            values = floats(roi_in)
            rois = {d: (values[k], values[k + count]) for k, d in enumerate(axes)}
        if has_scales:
            scales = floats(scales_in)
            if len(scales) != count:
                return Invalid("scales-length", SCALES_COUNT_18 if self.has_axes else SCALES_COUNT)
            if any(s <= 0 for s in scales) or any(not math.isfinite(float(s)) for s in scales):
                return Invalid("scale-not-positive", SCALES_POSITIVE)
            return scale_plans(x, axes, scales, rois, settings.ctm)
        sizes = [int(v) for v in sizes_in.reshape(-1)]
        if len(sizes) != count:
            return Invalid("sizes-length", SIZES_COUNT_18 if self.has_axes else SIZES_COUNT)
        if any(s < 0 for s in sizes):
            return Invalid("negative-size", NEGATIVE_SIZE)
        policy = text_attribute(example, "keep_aspect_ratio_policy", "stretch") if self.has_axes else "stretch"
        if policy != "stretch" and any(x.shape[d] == 0 for d in axes):
            policy = "stretch"
        return size_plans(x, axes, sizes, rois, policy)


class Resize10(ResizeBase):
    """Resize-10: scales an input, nearest or linear; the text names no coordinate mapping
    (asymmetric, x_resized / scale, as Upsample) nor nearest rounding (readings)."""

    since = 10
    modes = ("nearest", "linear")
    optional_scales = False

    def settings(self, example: Example) -> Settings | Invalid:
        mode = text_attribute(example, "mode", "nearest")
        if mode not in self.modes:
            return Invalid("unknown-mode", f"mode: Two interpolation modes: nearest (default), and linear (not {mode!r})")
        return Settings(mode, "asymmetric", ("floor", "round_prefer_floor", "simple"))

    def plans(self, example: Example, x: np.ndarray, settings: Settings):
        scales_in = example.inputs["scales"]
        scales = floats(scales_in)
        if len(scales) != x.ndim:
            return Invalid("scales-length", SCALES_COUNT)
        if any(s <= 0 for s in scales) or any(not math.isfinite(float(s)) for s in scales):
            return Invalid("scale-not-positive", SCALES_POSITIVE)
        return scale_plans(x, list(range(x.ndim)), scales, {}, "asymmetric")


class Resize11(ResizeBase):
    """Resize-11: roi, scales (empty when sizes are given), the coordinate modes, nearest_mode,
    cubic, exclude_outside, extrapolation_value."""

    since = 11
    ctms = CTM_11
    optional_scales = False


class Resize13(Resize11):
    """Resize-13: roi and scales optional; exactly one of scales and sizes; no tf_half_pixel_for_nn."""

    since = 13
    ctms = CTM_13
    optional_scales = True


class Resize18(Resize13):
    """Resize-18: antialias, axes, keep_aspect_ratio_policy."""

    since = 18
    has_axes = True


class Resize19(Resize18):
    """Resize-19: half_pixel_symmetric."""

    since = 19
    ctms = CTM_19


class UpsampleBase(ResizeBase):
    """Upsample: nearest or linear (bilinear in 1) by scales of at least 1, coordinates mapped
    asymmetrically (the texts name no mapping)."""

    modes = ("nearest", "linear")

    def settings(self, example: Example) -> Settings | Invalid:
        mode = text_attribute(example, "mode", "nearest")
        if mode not in self.modes:
            return Invalid("unknown-mode", f"mode: Two interpolation modes: {', '.join(self.modes)} (not {mode!r})")
        return Settings("linear" if mode == "bilinear" else mode, "asymmetric", ("floor", "round_prefer_floor"))

    def scales(self, example: Example, x: np.ndarray) -> list[Fraction] | Invalid:  # pragma: no cover - abstract
        raise NotImplementedError

    def plans(self, example: Example, x: np.ndarray, settings: Settings):
        scales = self.scales(example, x)
        if isinstance(scales, Invalid):
            return scales
        if len(scales) != x.ndim:
            return Invalid("scales-length", SCALES_COUNT)
        if any(not math.isfinite(float(s)) or s < 1 for s in scales):
            return Invalid("scale-below-one", SCALES_AT_LEAST_1)
        return scale_plans(x, list(range(x.ndim)), scales, {}, "asymmetric")


class Upsample1(UpsampleBase):
    """Upsample-1: a 4-D input, height_scale and width_scale attributes, nearest or bilinear."""

    since = 1
    modes = ("nearest", "bilinear")

    def scales(self, example: Example, x: np.ndarray):
        if x.ndim != 4:
            return Invalid("not-4d", UPSAMPLE_RANK_1)
        attrs = example.attributes
        return [Fraction(1), Fraction(1), f32(attrs["height_scale"]), f32(attrs["width_scale"])]


class Upsample7(UpsampleBase):
    """Upsample-7: scales an attribute over every dim."""

    since = 7

    def scales(self, example: Example, x: np.ndarray):
        return [f32(v) for v in example.attributes["scales"]]


class Upsample9(UpsampleBase):
    """Upsample-9: scales an input."""

    since = 9

    def scales(self, example: Example, x: np.ndarray):
        value = example.inputs["scales"]
        if value.ndim != 1:
            return Invalid("not-1d", "scales: a 1-D tensor")
        return floats(value)


# --- traits: the causes a runtime may deviate by ---

def _is_resize(example: Example) -> bool:
    return example.op == "Resize"


def _attr(example: Example, name: str, default):
    return text_attribute(example, name, default) if isinstance(default, str) else example.attributes.get(name, default)


def nearest_tie(example: Example) -> bool:
    """A nearest pick the text leaves to float32's rounding of the coordinate (choices)."""
    if _attr(example, "mode", "nearest") != "nearest":
        return False
    found = _reference(example.op).expected(example)
    return found.is_valid and any(any(c is not None for c in r.choices) for r in found.readings)


def given_scale(example: Example) -> bool:
    """The given scale differs from length_resized / length_original (two readings)."""
    found = _reference(example.op).expected(example)
    return found.is_valid and found.ambiguity is not None and "scale as given" in found.ambiguity


def _named(name: str, value):
    def trait(example: Example) -> bool:
        if not _is_resize(example) or example.version.since_version < 11:
            return False
        default = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel", "keep_aspect_ratio_policy": "stretch"}.get(name, 0)
        written = _attr(example, name, default)
        return written == value if not isinstance(value, int) else int(written) == value
    trait.__doc__ = f"{name} is {value!r}"
    return trait


def integer_interpolation(example: Example) -> bool:
    """Integer data interpolated (linear or cubic): the text gives no rounding."""
    x = example.inputs.get("X")
    mode = _attr(example, "mode", "nearest")
    return x is not None and x.dtype.kind in "iu" and mode != "nearest"


def axes_subset(example: Example) -> bool:
    """axes given (Resize-18 on)."""
    return example.attributes.get("axes") is not None


def length_one(example: Example) -> bool:
    """An output axis of length 1 resized (the modes' special cases)."""
    found = _reference(example.op).expected(example)
    return found.is_valid and bool(found.readings) and any(d == 1 for d in found.readings[0].outputs[0].shape)


def downsampling(example: Example) -> bool:
    """A scale below 1 (or a size below the input's)."""
    scales = example.inputs.get("scales")
    if scales is None:
        scales = example.attributes.get("scales")
    if scales is not None and np.size(scales):
        return bool(np.any(np.asarray(scales, dtype=np.float64) < 1))
    sizes, x = example.inputs.get("sizes"), example.inputs.get("X")
    return sizes is not None and x is not None and sizes.size <= x.ndim and bool(np.any(sizes < np.array(x.shape[-sizes.size:] if sizes.size else ())))


def sizes_given(example: Example) -> bool:
    """A Resize with `sizes`: onnx's shape inference misreads a `sizes` input of symbolic length
    (it counts 0 elements and rejects the model), so such models declare their dims as numbers."""
    return example.inputs.get("sizes") is not None


def _given_scales(example: Example) -> list[float] | None:
    """The scales over every dim as a runtime derives them: the scales given (1 off `axes`), or
    sizes / input dims; None where neither is usable."""
    x = example.inputs.get("X")
    if x is None:
        return None
    rank = x.ndim
    axes = [int(a) % rank for a in example.attributes.get("axes", range(rank))] if rank else []
    scales = example.inputs.get("scales")
    if scales is None:
        scales = example.attributes.get("scales")
    if example.op == "Upsample" and example.version.since_version == 1:
        scales = [1.0, 1.0, example.attributes.get("height_scale", 1.0), example.attributes.get("width_scale", 1.0)]
    full = [1.0] * rank
    if scales is not None and np.size(scales):
        given = [float(v) for v in np.asarray(scales, dtype=np.float64).reshape(-1)]
    else:
        sizes = example.inputs.get("sizes")
        if sizes is None or len(axes) != sizes.size or any(x.shape[d] == 0 for d in axes):
            return None
        given = [int(v) / x.shape[d] for v, d in zip(sizes.reshape(-1), axes)]
    if len(given) != len(axes):
        return None
    for d, v in zip(axes, given):
        full[d] = v
    return full


def interpolation_layout(example: Example) -> bool:
    """Linear or cubic on a layout outside the 2-D (and, for linear, 3-D) cases and the 4-D/5-D
    ones whose outer dims keep their size: the layouts onnxruntime's kernels take."""
    mode = _attr(example, "mode", "nearest")
    if mode == "nearest":
        return False
    scales = _given_scales(example)
    if scales is None:
        return False
    rank = len(scales)
    outer_kept = rank >= 4 and scales[0] == 1 and (scales[1] == 1 or (rank == 4 and scales[3] == 1))
    if mode == "cubic":
        return not (rank == 2 or (rank == 4 and outer_kept))
    return not (rank in (2, 3) or (rank in (4, 5) and outer_kept))


def integer_cubic(example: Example) -> bool:
    """Integer data in cubic mode."""
    x = example.inputs.get("X")
    return x is not None and x.dtype.kind in "iu" and _attr(example, "mode", "nearest") == "cubic"


def signed_antialias(example: Example) -> bool:
    """Signed integer data interpolated with antialias (Resize-18 on)."""
    x = example.inputs.get("X")
    return (x is not None and x.dtype.kind == "i" and int(example.attributes.get("antialias", 0)) == 1
            and _attr(example, "mode", "nearest") != "nearest")


def empty_output(example: Example) -> bool:
    """An output dim of size 0 (a size of 0, or a scale that floors to 0)."""
    found = _reference(example.op).expected(example)
    return found.is_valid and bool(found.readings) and any(d == 0 for d in found.readings[0].outputs[0].shape)


def roi_not_float(example: Example) -> bool:
    """An roi input of float16 or double (T2 allows them)."""
    roi = example.inputs.get("roi")
    return roi is not None and roi.dtype != np.float32


def _crop(example: Example) -> bool:
    return _is_resize(example) and _attr(example, "coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize"


def crop_scales_shape(example: Example) -> bool:
    """tf_crop_and_resize with scales and an roi that is not the whole extent on some resized axis:
    the text's shape, floor(input_dimension * (roi_end - roi_start) * scale), differs from
    floor(input_dimension * scale)."""
    x, roi, scales = example.inputs.get("X"), example.inputs.get("roi"), example.inputs.get("scales")
    if not _crop(example) or x is None or roi is None or scales is None or not scales.size:
        return False
    full = _given_scales(example)
    axes = [int(a) % x.ndim for a in example.attributes.get("axes", range(x.ndim))]
    if full is None or roi.size != 2 * len(axes):
        return False
    r = [float(v) for v in roi.reshape(-1)]
    return any(math.floor(x.shape[d] * (r[k + len(axes)] - r[k]) * full[d]) != math.floor(x.shape[d] * full[d])
               for k, d in enumerate(axes))


def crop_kept_axis(example: Example) -> bool:
    """tf_crop_and_resize with an roi other than [0, 1] on an axis whose length the resize keeps
    (its output length, or its given scale, the input's)."""
    x, roi = example.inputs.get("X"), example.inputs.get("roi")
    if not _crop(example) or x is None or roi is None or not roi.size or roi.size % 2:
        return False
    count = roi.size // 2
    axes = [int(a) % x.ndim for a in example.attributes.get("axes", range(x.ndim))] if x.ndim else []
    if len(axes) != count:
        return False
    r = [float(v) for v in roi.reshape(-1)]
    cropped = [d for k, d in enumerate(axes) if not (r[k] == 0 and r[k + count] == 1)]
    if not cropped:
        return False
    scales = _given_scales(example) or []
    found = _reference(example.op).expected(example)
    shape = tuple(found.readings[0].outputs[0].shape) if found.is_valid and found.readings else ()
    return any((d < len(shape) and shape[d] == x.shape[d]) or (d < len(scales) and scales[d] == 1) for d in cropped)


def _reference(op: str) -> OpReference:
    return REFERENCES[0] if op == "Resize" else REFERENCES[1]


def _output_elements(example: Example) -> int:
    """The output's size without computing it: its first reading's shape."""
    x = example.inputs.get("X")
    if x is None:
        return 0
    semantics = _reference(example.op).semantics_for(example.version)
    settings = semantics.settings(example)
    if isinstance(settings, Invalid):
        return x.size
    try:
        plans = semantics.plans(example, x, settings)
    except (ValueError, OverflowError, ZeroDivisionError):
        return x.size
    if not isinstance(plans, list) or not plans:
        return x.size
    return max(math.prod(p.shape) for p in plans)


RULES = ("unknown-mode", "unknown-coordinate-mode", "unknown-nearest-mode", "unknown-policy", "axis-out-of-range",
         "not-1d", "scales-and-sizes", "no-scales-or-sizes", "roi-missing", "roi-length", "scales-length",
         "scale-not-positive", "sizes-length", "negative-size")
TRAITS = {
    "nearest-tie": nearest_tie, "given-scale": given_scale, "integer-interpolation": integer_interpolation,
    "antialias": _named("antialias", 1), "exclude-outside": _named("exclude_outside", 1),
    "cubic": _named("mode", "cubic"), "tf-crop-and-resize": _named("coordinate_transformation_mode", "tf_crop_and_resize"),
    "pytorch-half-pixel": _named("coordinate_transformation_mode", "pytorch_half_pixel"),
    "align-corners": _named("coordinate_transformation_mode", "align_corners"),
    "half-pixel-symmetric": _named("coordinate_transformation_mode", "half_pixel_symmetric"),
    "tf-half-pixel-for-nn": _named("coordinate_transformation_mode", "tf_half_pixel_for_nn"),
    "keep-aspect-not-larger": _named("keep_aspect_ratio_policy", "not_larger"),
    "keep-aspect-not-smaller": _named("keep_aspect_ratio_policy", "not_smaller"),
    "axes-subset": axes_subset, "length-one": length_one, "downsampling": downsampling,
    "interpolation-layout": interpolation_layout, "integer-cubic": integer_cubic, "signed-antialias": signed_antialias,
    "empty-output": empty_output, "roi-not-float": roi_not_float, "crop-scales-shape": crop_scales_shape,
    "crop-kept-axis": crop_kept_axis, "sizes-given": sizes_given,
}

REFERENCES = (
    OpReference(op="Resize", dtype_param="T1", semantics=(Resize10, Resize11, Resize13, Resize18, Resize19),
                data_inputs=("X",), output_elements_from=_output_elements, rank_from_sizes=sizes_given,
                traits=dict(TRAITS), rules=RULES),
    OpReference(op="Upsample", dtype_param="T", semantics=(Upsample1, Upsample7, Upsample9), data_inputs=("X",),
                output_elements_from=_output_elements,
                traits={k: TRAITS[k] for k in ("nearest-tie", "given-scale", "integer-interpolation", "downsampling",
                                               "interpolation-layout", "empty-output")},
                rules=("unknown-mode", "not-1d", "scales-length", "scale-below-one", "not-4d")),
)
