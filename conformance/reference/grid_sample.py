"""GridSample (16, 20, 22) and AffineGrid (20), from the schema text.

GridSample: each output point reads the grid's normalized location, unnormalizes it per spatial
axis ("the coordinates in the length-r location vector are listed from the innermost tensor
dimension to the outermost"), and interpolates X there:

- align_corners=1: -1 and 1 are the corner pixels' centers, x = (g + 1) / 2 · (L − 1);
  align_corners=0: their outer edges, x = ((g + 1) · L − 1) / 2.
- nearest: one tap at the rounded location ("rounds to the nearest even index when the sampling
  point falls halfway", from version 20; version 16 is silent on ties: any neighbour); linear:
  two taps per axis with weights 1 − t, t; cubic: four taps per axis with Keys' kernel, a = −0.75
  (PyTorch's, which the text points to).
- padding_mode: zeros reads 0 outside the image; border reads the border value; reflection
  reflects the location by the borders (the corner centers with align_corners=1, the outer edges
  with 0) "until becoming in bound".

The text does not say whether the padding mode moves the location before the taps are placed, or
moves each tap: the two differ for cubic outside the image (onnxruntime and onnx.reference clamp
or reflect the location first; PyTorch, which the text cites, moves each of the four taps), and
for nearest at a tie. Both are readings. Version 16 names the modes bilinear/nearest/bicubic and
takes 4-D X only; version 20 names them linear/nearest/cubic and takes any spatial rank.

Judging: nearest selects (exact; where the location lies within its rounding error of a tie,
either neighbour). Linear and cubic are weighted sums: a per-element bound (bounds.py) of the
sum's rounding in any order, plus the location's own rounding times the largest slope of the
weights; where the location, the weights and every partial sum are exact, bitwise. Integer
outputs ("intermediate values are computed as floating point and cast to integer at the end") are
the sum truncated as Cast truncates, either integer where the bound straddles one.

AffineGrid: grid[n, ..., :] = theta[n] · [x_w, y_h, (z_d), 1]ᵀ over positions evenly spaced
from −1 to 1 (the pixels' centers with align_corners=0: (2j + 1) / L − 1; with 1: −1 + 2j/(L−1)).
A dot product of three (four) terms: the per-element bound; exact positions and exactly summable
terms bitwise. A size of 1 with align_corners=1 makes −1 and 1 the same pixel's centre: its one
position is −1 (PyTorch's linspace) or 1 (onnxruntime): readings.
"""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, exactly_summable, gamma, half_ulp, unit_roundoff
from ..case import Example
from ..dtypes import from_numpy
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, text_attribute
from .resize import integer_choices

KEYS_A = -0.75
MODES_16 = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
MODES_20 = {"linear": "linear", "nearest": "nearest", "cubic": "cubic"}
PADDINGS = ("zeros", "border", "reflection")
# The most a weight moves per unit of location: 1 for linear, Keys' kernel's steepest slope
# (1.35 at |s| = 0.6 for a = −0.75) rounded up for cubic.
SLOPE = {"nearest": 0.0, "linear": 1.0, "cubic": 1.5}
# The largest Σ|w| of one axis's taps: linear's two weights sum to 1; Keys' four (a = −0.75) to
# 1.375 at t = 1/2.
AXIS_GAIN = {"nearest": 1.0, "linear": 1.0, "cubic": 1.375}
# Roundings in computing one unnormalized location (an add, a multiply, a divide; a reflection's
# subtract, divide and multiply), each relative to the location's magnitude plus the axis length.
LOCATION_ROUNDINGS = 8

MODE_16 = "mode: Three interpolation modes: bilinear (default), nearest and bicubic."
MODE_20 = "mode: Three interpolation modes: linear (default), nearest and cubic."
PADDING = "padding_mode: Support padding modes for outside grid values: `zeros`(default), `border`, `reflection`."
RANK_16 = "Currently, only spatial (4-D) inputs are supported."
RANK_20 = "X: Input tensor of rank r+2 that has shape (N, C, D1, D2, ..., Dr)"
GRID_SHAPE_16 = "For input `X` with shape (N, C, H, W) and `grid` with shape (N, H_out, W_out, 2)"
GRID_SHAPE_20 = ("grid: Input offset of shape (N, D1_out, D2_out, ..., Dr_out, r), where ... r is the number of "
                 "spatial dimensions.")
TIE_16 = "version 16 does not say which index nearest takes when the location falls halfway between two"
ORDER = ("the text does not say whether the padding mode moves the sampling location before the taps are "
         "placed (onnxruntime, onnx.reference) or moves each tap (PyTorch, which the text cites)")
EMPTY_IMAGE = "an image with no pixels has no border value to pad with"
NO_MEANING = "the text gives interpolating strings or complex values no meaning"
CAST = ("Y: For integer input types, intermediate values are computed as floating point and cast to integer at "
        "the end.")
BOUND_REASON = ("Higham's bound for the weighted sum in any order plus the location's rounding times the weights' "
                "steepest slope; exact locations, weights and partial sums bitwise (PRECISION.md, 'Ops that accumulate')")


# --- where a location lies ---

def unnormalized(g: np.ndarray, length: int, align_corners: bool) -> np.ndarray:
    """A normalized coordinate as a pixel index (float64, exact for the grid types' values)."""
    if align_corners:
        return (g + 1) / 2 * (length - 1)
    return ((g + 1) * length - 1) / 2


def borders(length: int, align_corners: bool) -> tuple[float, float]:
    """Where reflection turns: the corner pixels' centers, or their outer edges."""
    return (0.0, length - 1.0) if align_corners else (-0.5, length - 0.5)


def reflected(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """x reflected by the borders until in [low, high] ("it will keep being reflected")."""
    span = high - low
    if span <= 0:
        return np.full_like(x, low)
    with np.errstate(invalid="ignore"):
        folded = np.mod(x - low, 2 * span)
        return np.where(folded <= span, low + folded, low + 2 * span - folded)


def rounded(x: np.ndarray, how: str) -> np.ndarray:
    if how == "even":
        return np.rint(x)
    if how == "up":
        return np.floor(x + 0.5)
    return np.ceil(x - 0.5)


# --- reading the image ---

class Image:
    """X seen as planes to read at integer indices per spatial axis, with a padding mode."""

    def __init__(self, x: np.ndarray, padding: str, align_corners: bool):
        self.x = x
        self.padding = padding
        self.align_corners = align_corners
        self.spatial = x.shape[2:]
        self.zero = np.zeros((), dtype=x.dtype) if x.dtype.kind != "O" else ""

    def read(self, indices: list[np.ndarray], tap_padding: bool = True) -> np.ndarray:
        """X[n, :, i1, ..., ir] for index arrays of shape (N, *out): (N, C, *out); each index moved
        into the image by the padding mode (`tap_padding`), or only checked for zeros."""
        inside = np.ones(indices[0].shape, dtype=bool)
        placed = []
        for axis, index in enumerate(indices):
            length = self.spatial[axis]
            index = index.astype(np.int64)
            if self.padding == "border" and tap_padding:
                index = np.clip(index, 0, length - 1)
            elif self.padding == "reflection" and tap_padding:
                low, high = borders(length, self.align_corners)
                index = np.clip(np.trunc(reflected(index.astype(np.float64), low, high)), 0, length - 1).astype(np.int64)
            inside &= (index >= 0) & (index < length)
            placed.append(np.clip(index, 0, max(length - 1, 0)))
        n = np.arange(self.x.shape[0]).reshape((-1,) + (1,) * (indices[0].ndim - 1))
        n = np.broadcast_to(n, indices[0].shape)
        if not self.x.size:
            return np.zeros((indices[0].shape[0], self.x.shape[1]) + indices[0].shape[1:], dtype=self.x.dtype)
        gathered = _gather(self.x, n, placed)
        return np.where(np.expand_dims(inside, 1), gathered, self.zero)


def _gather(x: np.ndarray, n: np.ndarray, placed: list[np.ndarray]) -> np.ndarray:
    """x[n, c, i1, ...] for every c: (N, C, *out)."""
    moved = np.moveaxis(x, 1, -1)  # (N, *spatial, C)
    picked = moved[(n, *placed)]  # (N, *out, C)
    return np.moveaxis(picked, -1, 1)


def keys(t: np.ndarray) -> list[np.ndarray]:
    """Keys' cubic weights of the taps at offsets −1, 0, 1, 2 from floor(x), t = x − floor(x)."""
    a = KEYS_A

    def near(s):
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s):
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def taps(x: np.ndarray, mode: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(index, weight) pairs of one axis for locations x."""
    if mode == "nearest":
        return [(x, np.ones_like(x))]
    base = np.floor(x)
    t = x - base
    if mode == "linear":
        return [(base, 1 - t), (base + 1, t)]
    return [(base + k - 1, w) for k, w in enumerate(keys(t))]


def weighted(image: Image, xs: list[np.ndarray], mode: str, tap_padding: bool = True):
    """Σ w·v over the taps of every axis: (terms (N, C, *out, m), weights (N, 1, *out, m)) as float
    (or the type's own values for nearest)."""
    per_axis = [taps(x, mode) for x in xs]
    values, weights = [], []
    for combination in itertools.product(*per_axis):
        indices = [np.nan_to_num(index, nan=-1, posinf=-1, neginf=-1) for index, _ in combination]
        weight = np.prod([w for _, w in combination], axis=0)
        values.append(image.read(indices, tap_padding))
        weights.append(np.expand_dims(weight, 1))
    return np.stack(values, axis=-1), np.stack(weights, axis=-1)


def locations(image: Image, xs: list[np.ndarray], moved: bool, mode: str, order: str, how: str) -> list[np.ndarray]:
    """The locations per axis as a reading places them: `order` "location" (the padding moves the
    location, then the taps: onnxruntime's order, rounding first for nearest) or "tap" (PyTorch:
    the location moved, clipped, then rounded; cubic moves each tap instead)."""
    spatial = image.spatial
    if mode == "nearest" and order == "location":
        xs = [rounded(x, how) for x in xs]
    if image.padding != "zeros" and not (order == "tap" and mode == "cubic"):
        placed = []
        for x, length in zip(xs, spatial):
            low, high = borders(length, image.align_corners)
            if image.padding == "border":
                x = np.clip(x, 0, length - 1)
            else:
                x = reflected(x, low, high)
                if order == "tap":
                    x = np.clip(x, 0, length - 1)
            placed.append(x)
        if order == "location":
            # onnx.reference moves an axis's location only where it leaves the borders on that axis
            # (a location in [-0.5, 0) with align_corners=0 keeps its place, and its taps are padded).
            outside = [(x < low) | (x > high) for x, (low, high) in
                       zip(xs, (borders(length, image.align_corners) for length in spatial))]
            placed = [np.where(o, p, x) for o, p, x in zip(outside, placed, xs)]
        xs = placed
    if mode == "nearest" and order == "tap":
        xs = [rounded(x, how) for x in xs]
    return xs


# --- GridSample ---

class GridSample16(VersionSemantics):
    """GridSample-16: 4-D X, modes bilinear, nearest and bicubic, ties of nearest unsaid."""

    since = 16
    modes = MODES_16
    mode_sentence = MODE_16
    any_rank = False
    ties_to_even = False

    def expected(self, example: Example) -> Expected:
        x, grid = example.inputs["X"], example.inputs["grid"]
        checked = self.check(example, x, grid)
        if isinstance(checked, Invalid):
            return Expected(invalid=checked)
        mode, padding, align_corners = checked
        r = x.ndim - 2
        out_shape = (x.shape[0], x.shape[1]) + grid.shape[1:-1]
        if math.prod(out_shape) == 0:
            return Expected(readings=(Reading((np.zeros(out_shape, dtype=x.dtype),)),))
        if 0 in x.shape[2:]:
            return _empty_image(x, out_shape, padding)
        g = grid.astype(np.float64)
        xs = [unnormalized(g[..., r - 1 - axis], x.shape[2 + axis], align_corners) for axis in range(r)]
        image = Image(_widened(x), padding, align_corners)
        if mode == "nearest":
            return self.nearest(example, image, xs, grid.dtype)
        kind = from_numpy(x.dtype).kind
        if kind in ("string", "complex"):
            return _anything(x, out_shape, NO_MEANING)
        return interpolated(example, image, xs, mode, grid.dtype)

    def check(self, example: Example, x: np.ndarray, grid: np.ndarray):
        mode = text_attribute(example, "mode", next(iter(self.modes)))
        if mode not in self.modes:
            return Invalid("mode", self.mode_sentence)
        padding = text_attribute(example, "padding_mode", "zeros")
        if padding not in PADDINGS:
            return Invalid("padding-mode", PADDING)
        if (x.ndim != 4) if not self.any_rank else (x.ndim < 3):
            return Invalid("rank", RANK_16 if not self.any_rank else RANK_20)
        sentence = GRID_SHAPE_20 if self.any_rank else GRID_SHAPE_16
        if grid.ndim != x.ndim or grid.shape[-1] != x.ndim - 2 or grid.shape[0] != x.shape[0]:
            return Invalid("grid-shape", sentence)
        return self.modes[mode], padding, bool(int(example.attributes.get("align_corners", 0)))

    def nearest(self, example: Example, image: Image, xs: list[np.ndarray], grid_dtype: np.dtype) -> Expected:
        """The value at the rounded location; near a tie (or at one, where the version leaves ties
        open, or the orders differ) any of the candidates' values."""
        errors = [location_error(x, length, grid_dtype, image.padding) for x, length in zip(xs, image.spatial)]
        near = np.zeros(xs[0].shape, dtype=bool)
        at = np.zeros(xs[0].shape, dtype=bool)
        tied = []  # each location moved onto the tie it lies within its rounding error of
        for x, error in zip(xs, errors):
            distance = np.abs(x - np.floor(x) - 0.5)
            close = (distance <= error) & (error > 0)
            near |= close
            at |= distance == 0
            tied.append(np.where(close, np.floor(x) + 0.5, x))
        variants = {}
        for order in ("location", "tap"):
            for how in ("even", "up", "down"):
                located = locations(image, tied, False, "nearest", order, how)
                values, _ = weighted(image, located, "nearest")
                variants[(order, how)] = values[..., 0]
        # the exact locations' pick; where none lies near a tie, `tied` holds them unmoved
        main = variants[("location", "even")] if not near.any() else \
            weighted(image, locations(image, xs, False, "nearest", "location", "even"), "nearest")[0][..., 0]
        near, at = np.expand_dims(near, 1), np.expand_dims(at, 1)
        layers = []
        for (order, how), values in variants.items():
            open_here = near | (at & (not self.ties_to_even or how == "even"))
            layers.append(np.where(open_here, values, main))
        out_dtype = example.inputs["X"].dtype
        output = _narrowed(main, out_dtype)
        choices = np.stack([_narrowed(layer, out_dtype) for layer in layers])
        lost = np.expand_dims(lost_locations(xs, errors, image.padding), 1) & np.ones(output.shape, dtype=bool)
        return Expected(readings=(Reading((output,), free=(lost,) if lost.any() else (), choices=(choices,)),),
                        ambiguity=None if not (near | at).any() else TIE_16)


class GridSample20(GridSample16):
    """GridSample-20 (and -22, which adds bfloat16): any spatial rank, modes linear, nearest and
    cubic, nearest's ties to the even index."""

    since = 20
    modes = MODES_20
    mode_sentence = MODE_20
    any_rank = True
    ties_to_even = True


def _widened(x: np.ndarray) -> np.ndarray:
    """X's values as the sums take them: float64 for real numbers, as they are otherwise."""
    kind = from_numpy(x.dtype).kind
    if kind in ("float", "int", "uint", "bool"):
        return x.astype(np.float64)
    return x


def _narrowed(values: np.ndarray, out: np.dtype) -> np.ndarray:
    if values.dtype == out:
        return values
    return np.asarray(values).astype(out)


def _anything(x: np.ndarray, shape: tuple[int, ...], why: str) -> Expected:
    output = np.zeros(shape, dtype=x.dtype) if x.dtype.kind != "O" else np.full(shape, "", dtype=object)
    return Expected(readings=(Reading((output,), "any value", free=(np.ones(shape, dtype=bool),)),), may_reject=why)


def _empty_image(x: np.ndarray, shape: tuple[int, ...], padding: str) -> Expected:
    if padding == "zeros":
        zero = "" if x.dtype.kind == "O" else 0
        return Expected(readings=(Reading((np.full(shape, zero, dtype=x.dtype),)),))
    return _anything(x, shape, EMPTY_IMAGE)


def location_error(x: np.ndarray, length: int, grid_dtype: np.dtype, padding: str) -> np.ndarray:
    """How far a runtime's unnormalized location may lie from the exact one: 0 where the grid value
    makes every step exact in the grid's type, else a few roundings of |x| + L."""
    u = unit_roundoff(grid_dtype if from_numpy(grid_dtype).kind == "float" else np.float32)
    error = LOCATION_ROUNDINGS * u * (np.abs(np.where(np.isfinite(x), x, 0.0)) + length + 1)
    return np.where(_exact_location(x, length, grid_dtype), 0.0, error)


def _exact_location(x: np.ndarray, length: int, grid_dtype: np.dtype) -> np.ndarray:
    """Where x and every intermediate of either formula hold few enough bits to be exact in the
    grid's type: x a multiple of 2**-8 below 2**10, with L below 2**10."""
    digits = int(ml_dtypes.finfo(grid_dtype).nmant) + 1
    finite = np.isfinite(x)
    safe = np.where(finite, x, 0.0)
    scaled = safe * 2.0 ** 9  # the (g + 1) · L and /2 steps: x twice over, in units of 2**-9
    whole = scaled == np.round(scaled)
    return finite & whole & (np.abs(scaled) * 4 * max(length, 1) < 2.0 ** digits) & (length < 2 ** 10)


def interpolated(example: Example, image: Image, xs: list[np.ndarray], mode: str, grid_dtype: np.dtype) -> Expected:
    """Linear and cubic: both orders' readings, judged by one per-element bound."""
    out = example.inputs["X"].dtype
    found = []
    for order in ("location", "tap"):
        located = locations(image, xs, False, mode, order, "even")
        values, weights = weighted(image, located, mode)
        found.append((order, located, values, weights))
    errors = [location_error(x, length, grid_dtype, image.padding) for x, length in zip(xs, image.spatial)]
    lost = np.expand_dims(lost_locations(xs, errors, image.padding), 1)
    kind = from_numpy(out).kind
    readings_found = []
    allowed = None
    for order, located, values, weights in found:
        y, bound = _sum_bound(values, weights, located, errors, mode, out if kind == "float" else np.dtype(np.float32))
        bound = np.where(lost, np.inf, bound)
        y = np.where(lost, 0.0, y)
        allowed = bound if allowed is None else np.maximum(allowed, bound)
        readings_found.append((order, y))
    if _same_values(readings_found[0][1], readings_found[1][1]):
        readings_found = readings_found[:1]
    labels = {"location": "the padding moves the location, then the taps (onnxruntime, onnx.reference)",
              "tap": "the padding moves each tap (PyTorch)"}
    ambiguity = ORDER if len(readings_found) > 1 else None
    if kind != "float":
        return _cast_readings(readings_found, allowed, out, labels, ambiguity)
    shaped = _element_bound(allowed, out, readings_found[0][1], weights_magnitude=None)
    readings = []
    for order, y in readings_found:
        with np.errstate(over="ignore", invalid="ignore"):
            rounded_y = y.astype(out)
        label = labels[order] if len(readings_found) > 1 else "spec"
        readings.append(Reading((rounded_y,), label, precise=(y,)))
    return Expected(readings=tuple(readings), budgets=(shaped,), ambiguity=ambiguity)


def lost_locations(xs: list[np.ndarray], errors: list[np.ndarray], padding: str) -> np.ndarray:
    """Where the text leaves no value to check: a location that is not a number (NaN, ±inf), or
    one reflected back from so far that its rounding spans a quarter pixel or more (a runtime's
    reflection of 5e9 in float32 lands anywhere in the image)."""
    lost = ~np.all([np.isfinite(x) for x in xs], axis=0)
    if padding == "reflection":
        lost |= np.any([e >= 0.25 for e in errors], axis=0)
    return lost


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two readings' exact sums agree to float64's own rounding (one sum in another order)."""
    with np.errstate(invalid="ignore"):
        close = np.abs(a - b) <= 2.0 ** -40 * (np.abs(a) + np.abs(b))
    return bool(np.all(close | (np.isnan(a) & np.isnan(b))))


def _sum_bound(values: np.ndarray, weights: np.ndarray, located: list[np.ndarray], errors: list[np.ndarray],
               mode: str, out: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """The exact weighted sum per element and its allowed error (tiers stacked on axis 0)."""
    with np.errstate(invalid="ignore", over="ignore"):
        terms = values * weights
        # A NaN or infinite location, or a tap reading a non-finite value, leaves the element to the
        # runtime (0·inf at a zero weight is NaN in some orders and not in others): no requirement.
        finite_taps = np.isfinite(values).all(axis=-1) & np.isfinite(weights).all(axis=-1)
        y = np.sum(terms, axis=-1)
        magnitude = np.sum(np.abs(np.where(np.isfinite(terms), terms, 0.0)), axis=-1)
    m = terms.shape[-1]
    r = len(located)
    plane = np.where(np.isfinite(values), np.abs(values), 0.0).max(axis=-1)
    largest = _plane_max(plane)
    location_part = np.zeros(y.shape)
    for error in errors:
        location_part = location_part + np.expand_dims(error, 1) * SLOPE[mode] * 1.5 ** (r - 1) * 2 * largest
    exact_location = np.all([np.expand_dims(e == 0, 1) for e in errors], axis=0)
    few_bits = _few_bit_weights(weights)
    rows = terms.reshape(-1, m)
    tiers = []
    for _, acc in accumulators(out):
        u = unit_roundoff(acc)
        general = half_ulp(y, out) + gamma(m + 2 * r, u) * magnitude + location_part
        exact = exactly_summable(np.where(np.isfinite(rows), rows, 0.0), acc).reshape(y.shape) & exact_location & few_bits
        with np.errstate(over="ignore", invalid="ignore"):
            correct = np.abs(y.astype(out).astype(np.float64) - y)
        allowed = np.where(exact, np.where(np.isfinite(correct), correct, 0.0), general)
        # A partial sum may overflow the accumulator in some order: no requirement (TOSA). An
        # order is also one axis at a time (onnx.reference: each row, then the column), whose
        # partial sums miss the other axes' weights: up to the largest tap times Σ|w| of an axis.
        past = (magnitude * (m + 1) > float(ml_dtypes.finfo(acc).max)) | (
            np.isfinite(y) & (plane * AXIS_GAIN[mode] ** r * (m + 1) > float(ml_dtypes.finfo(acc).max)))
        tiers.append(np.where(finite_taps & ~past, allowed, np.inf))
    return np.where(finite_taps, y, 0.0), np.stack(tiers)


def _plane_max(plane_taps: np.ndarray) -> np.ndarray:
    """The largest |value| a tap of each element's (n, c) reads, broadcast over the element's
    positions: a moved location reaches the neighbours' values, which the image's max covers."""
    axes = tuple(range(2, plane_taps.ndim))
    return np.max(plane_taps, axis=axes, keepdims=True) * np.ones_like(plane_taps) if axes else plane_taps


def _few_bit_weights(weights: np.ndarray) -> np.ndarray:
    """Per element, whether every weight is a multiple of 2**-16 (exact products with any value of
    a 32-bit or narrower float in float64)."""
    scaled = weights * 2.0 ** 16
    return np.all(scaled == np.round(scaled), axis=-1)


def _element_bound(allowed: np.ndarray, out: np.dtype, y: np.ndarray, weights_magnitude) -> ElementBound:
    labels = [label for label, _ in accumulators(out)]
    tiers = tuple(Tier(label, allowed[k], np.ones(y.shape)) for k, label in enumerate(labels))
    return ElementBound(tiers, "½ulp(y) + γ(m+2r)·Σ|w·v| + δx·slope·2·max|X|", BOUND_REASON)


def _cast_readings(found, allowed, out: np.dtype, labels, ambiguity) -> Expected:
    """An integer or bool output: the float sum cast at the end (truncated toward zero; nonzero is
    true), either value where the bound straddles the cut; undefined where it does not fit."""
    loosest = allowed[-1]
    readings = []
    for order, y in found:
        low, high = y - loosest, y + loosest
        if out == np.bool_:
            main = y != 0
            other = (low <= 0) & (high >= 0)
            choices = np.stack([main, np.where(other, ~main, main)])
            readings.append(Reading((main,), labels[order] if len(found) > 1 else "spec", choices=(choices,)))
            continue
        info = np.iinfo(out)
        with np.errstate(invalid="ignore"):
            cut = np.trunc(y)
            fits = (np.isfinite(y) & np.isfinite(loosest) & (np.trunc(low) >= info.min) & (np.trunc(high) <= info.max))
            main = np.where(fits, cut, 0).astype(out)
            # every integer a value within the bound truncates to, from trunc(low) to trunc(high)
            choices, many = integer_choices(np.where(fits, np.trunc(low), 0), np.where(fits, np.trunc(high), 0), out)
        readings.append(Reading((main,), (labels[order] + "; " if len(found) > 1 else "") + "cast truncates",
                                free=(~fits | many,), choices=(choices,)))
    return Expected(readings=tuple(readings), ambiguity=ambiguity or "the cast of a sum near an integer")


# --- AffineGrid ---

THETA = "theta: input batch of affine matrices with shape (N, 2, 3) for 2D or (N, 3, 4) for 3D"
SIZE = "size: the target output image size (N, C, H, W) for 2D or (N, C, D, H, W) for 3D"
ONE_PIXEL = ("with align_corners=1 and a size of 1, -1 and 1 both refer to the center of the one pixel: its "
             "position is -1 (PyTorch's linspace) or 1 (onnxruntime)")


def positions(length: int, align_corners: bool, single: float) -> np.ndarray:
    """The evenly spaced positions of one axis."""
    j = np.arange(length, dtype=np.float64)
    if not align_corners:
        return (2 * j + 1) / length - 1
    if length == 1:
        return np.array([single])
    return -1 + 2 * j / (length - 1)


class AffineGrid20(VersionSemantics):
    """AffineGrid-20: theta applied to the evenly spaced positions; its function body is the text too."""

    since = 20

    def expected(self, example: Example) -> Expected:
        theta, size = example.inputs["theta"], example.inputs["size"]
        if size.ndim != 1 or size.shape[0] not in (4, 5) or np.any(size < 0):
            return Expected(invalid=Invalid("size", SIZE))
        dims = [int(v) for v in size]
        r = len(dims) - 2
        if theta.ndim != 3 or theta.shape != (dims[0], r, r + 1):
            return Expected(invalid=Invalid("theta-shape", THETA))
        align_corners = bool(int(example.attributes.get("align_corners", 0)))
        out = theta.dtype
        spatial = dims[2:]
        found = []
        singles = (-1.0, 1.0) if align_corners and 1 in spatial else (-1.0,)
        for single in singles:
            y, allowed = _affine(theta, spatial, align_corners, single, out)
            found.append((single, y, allowed))
        allowed = np.maximum.reduce([a for _, _, a in found])
        labels = [label for label, _ in accumulators(out)]
        bound = ElementBound(tuple(Tier(label, allowed[k], np.ones(found[0][1].shape)) for k, label in enumerate(labels)),
                             "½ulp(y) + γ(r+1)·Σ|θ·p| + Σ|θ|·δp", BOUND_REASON.replace("weighted sum", "dot product"))
        readings = []
        for single, y, _ in found:
            with np.errstate(over="ignore", invalid="ignore"):
                rounded_y = y.astype(out)
            label = "spec" if len(found) == 1 else f"one position at {single:g}"
            readings.append(Reading((rounded_y,), label, precise=(y,)))
        return Expected(readings=tuple(readings), budgets=(bound,), ambiguity=ONE_PIXEL if len(found) > 1 else None)


def _affine(theta: np.ndarray, spatial: list[int], align_corners: bool, single: float, out: np.dtype):
    """The grid (N, *spatial, r) and its allowed error per tier (tiers on axis 0)."""
    r = len(spatial)
    n = theta.shape[0]
    axes = [positions(length, align_corners, single) for length in spatial]  # outermost first
    mesh = np.meshgrid(*axes, indexing="ij") if r else []
    # The homogeneous position lists the innermost axis first: (x_w, y_h, z_d, 1).
    point = np.stack([mesh[r - 1 - k] for k in range(r)] + [np.ones(tuple(spatial))], axis=-1) if r else np.ones((1,))
    wide = theta.astype(np.float64)
    terms = wide[:, None, :, :].reshape((n,) + (1,) * r + (r, r + 1)) * point[None, ..., None, :]
    with np.errstate(invalid="ignore", over="ignore"):
        y = terms.sum(axis=-1)
        magnitude = np.abs(terms).sum(axis=-1)
    rows = terms.reshape(-1, r + 1)
    # No exact tier: onnxruntime's positions (a start plus j steps) round even where (2j + 1)/L − 1
    # is exact (-0.2500000000000001 for L = 4), so every position carries its rounding.
    positions_exact = False
    tiers = []
    for _, acc in accumulators(out):
        u = unit_roundoff(acc)
        position_error = 4 * unit_roundoff(out) * (np.abs(wide[..., :r]).sum(axis=-1) * 2)
        position_error = position_error.reshape((n,) + (1,) * r + (r,))
        general = half_ulp(y, out) + gamma(r + 2, u) * magnitude + (0.0 if positions_exact else position_error)
        with np.errstate(over="ignore", invalid="ignore"):
            correct = np.abs(y.astype(out).astype(np.float64) - y)
        exact = exactly_summable(np.where(np.isfinite(rows), rows, 0.0), acc).reshape(y.shape) & positions_exact
        allowed = np.where(exact, np.where(np.isfinite(correct), correct, 0.0), general)
        tiers.append(np.where(np.isfinite(y), allowed, 0.0))
    return y, np.stack(tiers)


def _grid_elements(example: Example) -> int:
    """How many elements AffineGrid's output has: N·D·H·W·r."""
    size = example.inputs["size"]
    if size.ndim != 1 or size.shape[0] not in (4, 5):
        return 0
    dims = [max(int(v), 0) for v in size]
    return dims[0] * math.prod(dims[2:]) * (len(dims) - 2)


# --- traits ---

def _mode(example: Example) -> str:
    return text_attribute(example, "mode", "bilinear" if example.version.since_version < 20 else "linear")


def cubic_mode(example: Example) -> bool:
    return _mode(example) in ("cubic", "bicubic")


def spatial_rank_not_2(example: Example) -> bool:
    x = example.inputs.get("X")
    return x is not None and x.ndim != 4


def volumetric_cubic_or_1d(example: Example) -> bool:
    """One spatial axis (X of rank 3), more than three, or cubic over other than two."""
    x = example.inputs.get("X")
    if x is None:
        return False
    return x.ndim not in (4, 5) or (cubic_mode(example) and x.ndim != 4)


def far_location(example: Example) -> bool:
    """A grid value far outside [-1, 1] (|g| > 2**20), or not a number: beyond where a float32
    location converts to an index."""
    grid = example.inputs.get("grid")
    if grid is None:
        return False
    wide = grid.astype(np.float64)
    return bool(np.any(~np.isfinite(wide) | (np.abs(np.where(np.isfinite(wide), wide, 0)) > 2.0 ** 20)))


def not_float(example: Example) -> bool:
    x = example.inputs.get("X")
    return x is not None and from_numpy(x.dtype).kind != "float"


def outside_grid(example: Example) -> bool:
    grid = example.inputs.get("grid")
    return grid is not None and bool(np.any(np.abs(grid.astype(np.float64)) > 1))


def nonfinite_grid(example: Example) -> bool:
    grid = example.inputs.get("grid")
    return grid is not None and not bool(np.all(np.isfinite(grid.astype(np.float64))))


def empty_image(example: Example) -> bool:
    x = example.inputs.get("X")
    return x is not None and x.ndim > 2 and 0 in x.shape[2:]


def old_mode_name(example: Example) -> bool:
    """A version-16 name (bilinear, bicubic) given to version 20 or later, or the reverse."""
    mode = _mode(example)
    names = MODES_20 if example.version.since_version >= 20 else MODES_16
    return mode not in names and mode in {**MODES_16, **MODES_20}


def sixteen_bit_theta(example: Example) -> bool:
    """theta of float16 or bfloat16 (a runtime without such a kernel runs the function body)."""
    theta = example.inputs.get("theta")
    return theta is not None and theta.dtype.itemsize == 2


def one_pixel_align_corners(example: Example) -> bool:
    size = example.inputs.get("size")
    return size is not None and bool(int(example.attributes.get("align_corners", 0))) and 1 in [int(v) for v in size[2:]]


REFERENCES = (
    OpReference(op="GridSample", dtype_param="T1", semantics=(GridSample16, GridSample20), data_inputs=("X", "grid"),
                traits={"cubic-mode": cubic_mode, "spatial-rank-not-2": spatial_rank_not_2, "not-float": not_float,
                        "volumetric-cubic-or-1d": volumetric_cubic_or_1d, "far-location": far_location,
                        "outside-grid": outside_grid, "nonfinite-grid": nonfinite_grid, "empty-image": empty_image,
                        "old-mode-name": old_mode_name},
                rules=("mode", "padding-mode", "rank", "grid-shape")),
    OpReference(op="AffineGrid", dtype_param="T1", semantics=(AffineGrid20,), data_inputs=("theta",),
                shape_inputs=("size",),
                output_elements_from=lambda e: _grid_elements(e),
                traits={"one-pixel-align-corners": one_pixel_align_corners, "sixteen-bit-theta": sixteen_bit_theta},
                rules=("size", "theta-shape")),
)
