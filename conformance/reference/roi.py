"""RoiAlign (10, 16, 22) and MaxRoiPool (1, 22), from the schema text and the convention it names.

RoiAlign: each RoI [x1, y1, x2, y2] (scaled by spatial_scale; from version 16 shifted by −0.5
with coordinate_transformation_mode half_pixel, the default, not with output_half_pixel, which
is version 10's behaviour) is cut into output_height × output_width bins; each bin averages (avg)
or takes the max (max) of sampling_ratio² bilinearly interpolated samples at the centres of a
regular grid in the bin (sampling_ratio 0: ceil(roi_size / output_size) per axis, "adaptive").
The text says nothing of samples outside the feature map nor of RoIs shorter than a pixel: the
Mask R-CNN (Detectron) convention, which onnxruntime and onnx.reference follow, is the reading:
a sample beyond [-1, H] (or [-1, W]) is 0, one in [-1, 0) reads at 0, one past H − 1 at H − 1;
without the half-pixel shift a RoI is at least one pixel wide and high.

max mode: the text pools "the value of the sampled locations ... computed directly through
bilinear interpolation" by max: the max of the interpolated samples. Detectron's RoIAlign max
(onnxruntime, onnx.reference) takes the max of the four weighted corners of each sample instead,
which is not an interpolation: judged a deviation (trait max-mode), not a reading.

Judging: avg is a weighted sum divided by the count (the per-element bound; exact RoIs, weights and
sums bitwise); max is the max of weighted sums (the same bound without the division).

MaxRoiPool: no arithmetic beyond the bins' edges (Caffe's RoI pooling: RoI corners rounded to the
nearest pixel after scaling, bins of (size + 1) / pooled pixels, floor and ceil of their edges,
clipped to the map; an empty bin is 0): exact.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, exactly_summable, gamma, half_ulp, unit_roundoff
from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, text_attribute

MODE = "mode: The pooling method. Two modes are supported: 'avg' and 'max'. Default is 'avg'."
TRANSFORM = "coordinate_transformation_mode: Allowed values are 'half_pixel' and 'output_half_pixel'."
X_SHAPE = "X: Input data tensor from the previous operator; 4-D feature map of shape (N, C, H, W)"
ROIS = "rois: rois is 2-D input of shape (num_rois, 4) given as [[x1, y1, x2, y2], ...]."
INDICES = ("batch_indices: 1-D tensor of shape (num_rois,) with each element denoting the index of the "
           "corresponding image in the batch.")
OUTPUT_SIZE = "output_height: default 1; Pooled output Y's height. output_width: default 1; Pooled output Y's width."
SAMPLING = "sampling_ratio: Number of sampling points ... If > 0 ... If == 0, then an adaptive number of grid points are used"
POOLED = "pooled_shape: ROI pool output shape (height, width)."
MRP_ROIS = "rois: Should be a 2-D tensor of shape (num_rois, 5) given as [[batch_id, x1, y1, x2, y2], ...]."
REASON = ("Higham's bound for the bins' weighted sums in any order, and the samples' locations' rounding times "
          "the image's largest value; exact RoIs, weights and sums bitwise (PRECISION.md, 'Ops that accumulate')")


class RoiAlign10(VersionSemantics):
    """RoiAlign-10: no half-pixel shift."""

    since = 10
    has_transform = False

    def expected(self, example: Example) -> Expected:
        x, rois, indices = example.inputs["X"], example.inputs["rois"], example.inputs["batch_indices"]
        found = self.check(example, x, rois, indices)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        mode, half_pixel, height, width, ratio, scale = found
        shape = (rois.shape[0], x.shape[1], height, width)
        if not math.prod(shape):
            return Expected(readings=(Reading((np.zeros(shape, dtype=x.dtype),)),))
        y, allowed = roi_align(x.astype(np.float64), rois.astype(np.float64), indices.astype(np.int64), mode,
                               half_pixel, height, width, ratio, scale, x.dtype)
        labels = [label for label, _ in accumulators(x.dtype)]
        bound = ElementBound(tuple(Tier(label, allowed[k], np.ones(shape)) for k, label in enumerate(labels)),
                             "½ulp(y) + γ(4s+4)·Σ|w·v|/s + δ·2·max|X|", REASON)
        with np.errstate(over="ignore", invalid="ignore"):
            rounded = y.astype(x.dtype)
        return Expected(readings=(Reading((rounded,), precise=(y,)),), budgets=(bound,))

    def check(self, example: Example, x, rois, indices):
        mode = text_attribute(example, "mode", "avg")
        if mode not in ("avg", "max"):
            return Invalid("mode", MODE)
        half_pixel = False
        if self.has_transform:
            transform = text_attribute(example, "coordinate_transformation_mode", "half_pixel")
            if transform not in ("half_pixel", "output_half_pixel"):
                return Invalid("coordinate-transformation-mode", TRANSFORM)
            half_pixel = transform == "half_pixel"
        if x.ndim != 4:
            return Invalid("x-shape", X_SHAPE)
        if rois.ndim != 2 or rois.shape[1] != 4:
            return Invalid("rois-shape", ROIS)
        if indices.ndim != 1 or indices.shape[0] != rois.shape[0]:
            return Invalid("batch-indices", INDICES)
        if indices.size and (indices.min() < 0 or indices.max() >= x.shape[0]):
            return Invalid("batch-indices", INDICES)
        height = int(example.attributes.get("output_height", 1))
        width = int(example.attributes.get("output_width", 1))
        if height < 1 or width < 1:
            return Invalid("output-size", OUTPUT_SIZE)
        ratio = int(example.attributes.get("sampling_ratio", 0))
        if ratio < 0:
            return Invalid("sampling-ratio", SAMPLING)
        scale = float(np.float32(example.attributes.get("spatial_scale", 1.0)))
        return mode, half_pixel, height, width, ratio, scale


class RoiAlign16(RoiAlign10):
    """RoiAlign-16 (and -22, which adds bfloat16): coordinate_transformation_mode, half_pixel by default."""

    since = 16
    has_transform = True


def _bilinear(plane: np.ndarray, y: float, x: float) -> list[tuple[float, float]]:
    """(weight, value) of the four corners of one sample in Detectron's convention; none outside."""
    height, width = plane.shape
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return []
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= height - 1:
        y_low = y_high = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_low = x_high = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly, lx = y - y_low, x - x_low
    hy, hx = 1 - ly, 1 - lx
    return [(hy * hx, plane[y_low, x_low]), (hy * lx, plane[y_low, x_high]),
            (ly * hx, plane[y_high, x_low]), (ly * lx, plane[y_high, x_high])]


def roi_align(x, rois, indices, mode, half_pixel, height, width, ratio, scale, out):
    """The pooled output (float64) and its allowed error per tier (tiers first)."""
    count_rois, channels = rois.shape[0], x.shape[1]
    y = np.zeros((count_rois, channels, height, width))
    magnitude = np.zeros_like(y)
    exact = np.ones(y.shape, dtype=bool)
    location = np.zeros_like(y)
    samples = np.ones_like(y)
    finite = np.ones(y.shape, dtype=bool)
    u_in = unit_roundoff(out)
    offset = 0.5 if half_pixel else 0.0
    for r in range(count_rois):
        x1, y1, x2, y2 = rois[r] * scale - offset
        roi_w, roi_h = x2 - x1, y2 - y1
        if not half_pixel:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / height, roi_w / width
        grid_h = ratio if ratio > 0 else int(math.ceil(roi_h / height)) if np.isfinite(roi_h) else 0
        grid_w = ratio if ratio > 0 else int(math.ceil(roi_w / width)) if np.isfinite(roi_w) else 0
        grid_h, grid_w = max(grid_h, 0), max(grid_w, 0)
        n = max(grid_h * grid_w, 1)
        reach = float(np.max(np.abs(rois[r]))) * abs(scale) + 1
        exact_roi = _few_bits(np.array([x1, y1, x2, y2, bin_h / max(grid_h, 1), bin_w / max(grid_w, 1)]))
        for c in range(channels):
            plane = x[int(indices[r]), c]
            largest = float(np.max(np.abs(plane[np.isfinite(plane)]), initial=0.0))
            for ph in range(height):
                for pw in range(width):
                    values, weights = [], []
                    sample_values = []
                    for iy in range(grid_h):
                        sy = y1 + ph * bin_h + (iy + 0.5) * bin_h / grid_h
                        for ix in range(grid_w):
                            sx = x1 + pw * bin_w + (ix + 0.5) * bin_w / grid_w
                            corners = _bilinear(plane, sy, sx)
                            sample_values.append(sum(w * v for w, v in corners))
                            for w, v in corners:
                                weights.append(w)
                                values.append(v)
                    terms = np.array([w * v for w, v in zip(weights, values)] or [0.0])
                    # A non-finite value anywhere in the plane: a runtime may read it at a zero weight
                    # (0·inf is NaN) in samples the text's bins do not reach; no requirement.
                    finite[r, c, ph, pw] = bool(np.all(np.isfinite(plane))) and bool(np.isfinite(terms).all())
                    if mode == "avg":
                        y[r, c, ph, pw] = _fsum(terms) / n if finite[r, c, ph, pw] else 0.0
                        magnitude[r, c, ph, pw] = float(np.abs(terms).sum()) / n
                    else:
                        y[r, c, ph, pw] = max(sample_values) if sample_values and finite[r, c, ph, pw] else 0.0
                        magnitude[r, c, ph, pw] = float(np.abs(terms).sum())
                    samples[r, c, ph, pw] = n
                    exact[r, c, ph, pw] = exact_roi and bool(_few_bits(np.array(weights or [0.0])))
                    exact[r, c, ph, pw] &= bool(exactly_summable(terms.reshape(1, -1), np.dtype(np.float32))[0])
                    exact[r, c, ph, pw] &= mode == "max" or (n & (n - 1)) == 0
                    location[r, c, ph, pw] = 64 * u_in * (reach + height + width) * 2 * largest
    # What the bin's weighted samples add up to before an average divides by their count.
    undivided = magnitude * samples if mode == "avg" else magnitude
    tiers = []
    for _, acc in accumulators(out):
        u = unit_roundoff(acc)
        general = half_ulp(y, out) + gamma(4 * samples + 4, u) * magnitude + location
        with np.errstate(over="ignore", invalid="ignore"):
            correct = np.abs(y.astype(out).astype(np.float64) - y)
        fits = exact & (acc != np.float16 or True)
        # A partial sum may overflow the accumulator in some order: no requirement (TOSA).
        past = undivided * (4 * samples + 1) > float(ml_dtypes.finfo(acc).max)
        tiers.append(np.where(finite & ~past, np.where(fits, correct, general), np.inf))
    return y, np.stack(tiers)


def _fsum(terms: np.ndarray) -> float:
    """The correctly rounded sum, or float64's own where a partial sum passes its range."""
    try:
        return math.fsum(terms.tolist())
    except OverflowError:
        with np.errstate(over="ignore"):
            return float(np.sum(terms))


def _few_bits(values: np.ndarray) -> bool:
    """Whether every value is a multiple of 2**-12 below 2**12 (exact in float16's sums' reach)."""
    if not np.all(np.isfinite(values)):
        return False
    scaled = values * 2.0 ** 12
    return bool(np.all(scaled == np.round(scaled)) and np.all(np.abs(values) < 2.0 ** 11))


# --- MaxRoiPool ---

class MaxRoiPool1(VersionSemantics):
    """MaxRoiPool-1 (and -22, which adds bfloat16): Caffe's RoI max pooling, exact."""

    since = 1

    def expected(self, example: Example) -> Expected:
        x, rois = example.inputs["X"], example.inputs["rois"]
        pooled = example.attributes.get("pooled_shape")
        pooled = [int(v) for v in np.ravel(pooled)] if pooled is not None else []
        if len(pooled) != 2 or min(pooled) < 1:
            return Expected(invalid=Invalid("pooled-shape", POOLED))
        if x.ndim != 4:
            return Expected(invalid=Invalid("x-shape", X_SHAPE))
        if rois.ndim != 2 or rois.shape[1] != 5:
            return Expected(invalid=Invalid("rois-shape", MRP_ROIS))
        wide = rois.astype(np.float64)
        if rois.shape[0] and (not np.all(np.isfinite(wide))
                              or np.any((np.trunc(wide[:, 0]) < 0) | (np.trunc(wide[:, 0]) >= x.shape[0]))):
            return Expected(invalid=Invalid("rois-batch", MRP_ROIS + " (batch_id indexes the batch)"))
        scale = float(np.float32(example.attributes.get("spatial_scale", 1.0)))
        return Expected(readings=(Reading((max_roi_pool(x, wide, pooled, scale),)),))


def _round_half_away(value: float) -> int:
    return int(math.floor(value + 0.5)) if value >= 0 else int(math.ceil(value - 0.5))


def max_roi_pool(x: np.ndarray, rois: np.ndarray, pooled: list[int], scale: float) -> np.ndarray:
    """Caffe's RoI pooling: bins from the rounded, scaled corners; the max of each, 0 for none."""
    count, channels, height, width = rois.shape[0], x.shape[1], x.shape[2], x.shape[3]
    out = np.zeros((count, channels, *pooled), dtype=x.dtype)
    for r in range(count):
        batch = int(rois[r, 0])
        x1, y1, x2, y2 = (_round_half_away(float(np.float32(v * scale))) for v in rois[r, 1:])
        roi_h, roi_w = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        bin_h, bin_w = roi_h / pooled[0], roi_w / pooled[1]
        for ph in range(pooled[0]):
            h0 = min(max(int(math.floor(ph * bin_h)) + y1, 0), height)
            h1 = min(max(int(math.ceil((ph + 1) * bin_h)) + y1, 0), height)
            for pw in range(pooled[1]):
                w0 = min(max(int(math.floor(pw * bin_w)) + x1, 0), width)
                w1 = min(max(int(math.ceil((pw + 1) * bin_w)) + x1, 0), width)
                if h1 <= h0 or w1 <= w0:
                    continue
                window = x[batch, :, h0:h1, w0:w1].reshape(channels, -1)
                out[r, :, ph, pw] = window.max(axis=1) if window.size else 0
    return out


# --- traits ---

def max_mode(example: Example) -> bool:
    return text_attribute(example, "mode", "avg") == "max"


def roi_outside_map(example: Example) -> bool:
    """A RoI reaching past the feature map (scaled)."""
    x, rois = example.inputs.get("X"), example.inputs.get("rois")
    if x is None or rois is None or x.ndim != 4 or rois.ndim != 2 or not rois.size:
        return False
    scale = float(example.attributes.get("spatial_scale", 1.0))
    wide = rois[:, -4:].astype(np.float64) * scale
    return bool(np.any(wide < 0) or np.any(wide[:, [0, 2]] > x.shape[3] - 1) or np.any(wide[:, [1, 3]] > x.shape[2] - 1))


def nonfinite_in_data(example: Example) -> bool:
    """A NaN or -inf in X: Caffe's max starts from -FLT_MAX and compares with >."""
    x = example.inputs.get("X")
    return x is not None and bool((np.isnan(x.astype(np.float64)) | np.isneginf(x.astype(np.float64))).any())


REFERENCES = (
    OpReference(op="RoiAlign", dtype_param="T1", semantics=(RoiAlign10, RoiAlign16), data_inputs=("X", "rois"),
                output_elements_from=lambda e: (e.inputs["rois"].shape[0] * (e.inputs["X"].shape[1] if e.inputs["X"].ndim > 1 else 1)
                                                * max(int(e.attributes.get("output_height", 1)), 0)
                                                * max(int(e.attributes.get("output_width", 1)), 0)),
                traits={"max-mode": max_mode, "roi-outside-map": roi_outside_map},
                rules=("mode", "coordinate-transformation-mode", "x-shape", "rois-shape", "batch-indices", "output-size",
                       "sampling-ratio")),
    OpReference(op="MaxRoiPool", dtype_param="T", semantics=(MaxRoiPool1,), data_inputs=("X", "rois"),
                traits={"nonfinite-in-data": nonfinite_in_data, "roi-outside-map": roi_outside_map},
                rules=("pooled-shape", "x-shape", "rois-shape", "rois-batch")),
)
