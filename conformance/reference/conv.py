"""The convolutions: Conv (1, 11, 22), ConvInteger (10), QLinearConv (10) and DeformConv (19, 22).

Each output element is a dot product over C/group input channels x the kernel's taps, answered by
one shared path: the windows (reference/window.py: kernel, strides, dilations, pads, auto_pad)
gathered from the input, and per output element (n, m, *out) the row of its K = C/group·Πk terms,
input value by weight, as reference/matmul.py's dot products take them.

Shapes, by the texts: X (N x C x D1 ... x Dn), n ≥ 1; W (M x C/group x k1 ... x kn) of X's rank;
"X.shape[1] == (W.shape[1] * group) == C" and (from Conv-11, and DeformConv's "C and oC must both be
divisible by group") "W.shape[0] mod G == 0"; versions that state the first alone say "number of
groups input channels and output channels are divided into", which M not divisible by group
contradicts as well. `kernel_shape`, where given, is W's spatial shape ("If not present, should be
inferred from input W"): another is invalid. B, "1D bias ..., has size of M". Output channel m reads
the input channels of its group, g = m // (M/group): g·C/group to (g+1)·C/group − 1.

Judging:

- Conv: the float output of the dot product, plus the bias, by matmul's per-element bound (Higham's
  γ(K + [B])·(Σ|x·w| + |b|) in each accumulator a runtime may use, bitwise where every partial sum
  is exact). A tap in the padding reads 0 ("pad the input"), so 0·w is a term: where w is infinite
  or NaN that is NaN as written; a runtime that skips the padding's taps does not form it. Both are
  readings there. A dilation's skipped positions are no taps: an infinite or NaN input there reaches
  no output (a runtime that dilates W with zeros forms 0·inf = NaN: trait dilated-non-finite).
  Conv-1 words SAME as "pad the input so that the output spatial size match the input": with a
  stride above 1 an output as long as the input (its own padding) beside the later versions'
  ceil(input / stride): two readings, of different shapes.
- ConvInteger: Σ (x − x_zero_point)(w − w_zero_point[m]) in int32, exact; "The accumulation may
  overflow if and only if in 32 bits": wrapped and saturated readings. x_zero_point "It's a scalar";
  w_zero_point "a scalar or a 1-D tensor ... its number of elements should be equal to the number of
  output channels (M)". What the padding holds the text does not say: the real zero (x_zero_point,
  a tap in the padding adds nothing: the padded tensor is x − x_zero_point) or the quantized value 0
  (a tap adds −x_zero_point·(w − w_zero_point)). Both are readings where they differ.
- QLinearConv: the same integer sum plus the bias B ("quantized using scale = x_scale * w_scale and
  zero_point = 0", so an int32 added to the accumulator), requantized as QLinearMatMul requantizes
  (reference/q_linear_mat_mul.py): y = saturate(round_half_even(S·x_scale·w_scale[m] / y_scale) +
  y_zero_point), both neighbours allowed only where the float arithmetic's error reaches a rounding
  boundary. Scale and zero point of a pair "must have same shape ... either scalars (per tensor) or
  1-D tensors (per output channel)": x's and y's have no output channel, so they are scalars; w's a
  scalar or [M]. A [1] tensor where a scalar is named (or for M > 1) is read as per tensor and may be
  rejected.
- DeformConv: each tap samples the input at its window position plus its offset ("Use linear
  interpolation for fractional offset values"): per axis the two neighbours floor(p) and floor(p)+1
  weighted 1 − f and f, f = p − floor(p); the sample is multiplied by the mask and the weight and
  summed as Conv's terms. The offset's channels are read (offset_group, k1..kn, n) with the axis
  innermost, in the order of the spatial axes (the text's "offset_group * kH * kW * 2"), the mask's
  (offset_group, k1..kn); input channel c belongs to offset group c // (C/offset_group). "Sampling
  locations outside of the padded input tensor gives zero": a neighbour outside the input reads 0
  (the padding is zeros, and so, as torchvision's implementation reads it, is everything beyond);
  a location outside the padded tensor reading 0 as a whole is a second reading, which differs
  where a side has no padding and a location lies less than one element outside the input. The
  bound: the dot product's over the 2^n·K terms w·mask·λ·x, plus n + 3 roundings per term for the
  interpolation weights and the products, plus the error of a location computed in the input's type
  (u·(|p| + 1) per axis, times the interpolant's slope, at most 2·max|x|); bitwise where every
  location, weight and partial sum is exact.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from ..bounds import Tier, accumulators, any_non_finite, exactly_summable, gamma, unit_roundoff
from ..case import Example
from ..dtypes import from_numpy
from . import conversion as cv
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings
from .expected import Bounds
from .matmul import ACCUMULATION_32, _products_exact, dot_bound, float_answer, integer_readings, integer_sums
from .q_linear_mat_mul import REQUANTIZE, U32, _exact_array, _multiplier
from .q_linear_mat_mul import _reading as requantized_reading
from .window import Windows, attribute_ints, auto_pad_of, dilated, spatial_rank_1, spatial_rank_3, windows_of

X_SHAPE = ("X: Input data tensor from previous layer; has size (N x C x H x W) ... Otherwise the size is (N x C x D1 x D2 "
           "... x Dn)")
W_SHAPE = ("W: The weight tensor that will be used in the convolutions; has size (M x C/group x kH x kW) ... For more "
           "than 2 dimensions, the kernel shape will be (M x C/group x k1 x k2 x ... x kn)")
CHANNELS = "X.shape[1] == (W.shape[1] * group) == C (assuming zero based indices for the shape array)"
FEATURE_MAPS = ("Assuming zero based indices for the shape array, X.shape[1] == (W.shape[1] * group) == C and W.shape[0] "
                "mod G == 0.")
FEATURE_MAPS_OLD = ("group: number of groups input channels and output channels are divided into (M output channels do "
                    "not divide into group groups)")
GROUP = "group: number of groups input channels and output channels are divided into (at least 1)"
KERNEL_SHAPE = "kernel_shape: The shape of the convolution kernel. If not present, should be inferred from input W."
BIAS = "B: Optional 1D bias to be added to the convolution, has size of M."
X_ZERO_POINT = "x_zero_point: It's a scalar, which means a per-tensor/layer quantization."
W_ZERO_POINT = ("w_zero_point: It could be a scalar or a 1-D tensor, which means a per-tensor/layer or per output channel "
                "quantization. If it's a 1-D tensor, its number of elements should be equal to the number of output "
                "channels (M)")
W_SCALE = ("w_scale: It could be a scalar or a 1-D tensor, which means a per-tensor/layer or per output channel "
           "quantization. If it's a 1-D tensor, its number of elements should be equal to the number of output channels (M).")
XY_SCALE = "x_scale / y_scale: It's a scalar, which means a per-tensor/layer quantization."
QLINEAR_PAIR = ("Each scale and zero-point pair must have same shape. It means they must be either scalars (per tensor) or "
                "1-D tensors (per output channel).")
QLINEAR_BIAS = "B: Optional 1D bias to be added to the convolution, has size of M."
ONE_ELEMENT = ("a [1] tensor where the text names a scalar (or, for M > 1 output channels, a scalar or an M-element "
               "vector): read as per tensor, it may be rejected")
PADDING_VALUE = ("the text says 'pad the input' without saying what a quantized input's padding holds: the real zero "
                 "(x_zero_point, so that a tap in the padding adds nothing) or the quantized value 0")
PADDING_NAN = ("a tap in the padding reads 0 ('pad the input'), and 0 times an infinite or NaN weight is NaN as written; "
               "a runtime that skips the padding's taps does not form that product")
CONV_REASON = ("Higham's bound for a dot product in any order over the C/group x kernel taps (γ(K)·Σ|x·w|, products "
               "rounded in the accumulator) plus the bias's addition, in each accumulator a runtime may use, and one "
               "rounding of the result; exactly summable windows judged bitwise (PRECISION.md, 'Ops that accumulate')")
SAME_CEIL = "SAME as the later versions word it: ceil(input / stride) windows"
SAME_LITERAL = "Conv-1's SAME as worded: as many windows as input elements (the output spatial size match the input)"
SAME_OPEN = ("Conv-1: 'SAME_UPPER or SAME_LOWER mean pad the input so that the output spatial size match the input': "
             "with a stride above 1, the output as long as the input (padding (n - 1)·s + kernel - n) or the later "
             "versions' ceil(input / stride)")
CONV_FORMULA = "½ulp(y) + γ(K + [B])·(Σ|x_k·w_k| + |b|)"
DEFORM_GROUP = "group: Number of groups the input and output channels, C and oC, are divided into. C and oC must both be divisible by group."
DEFORM_W = "W: It has shape (oC, C/group, kH, kW) ... For more than 2 dimensions, it has shape (oC, C/group, k1, k2, ... , kn)."
DEFORM_X = "X: In general, the shape is (N, C, D1, D2, ... , Dn) for n-dimensional data"
OFFSET_GROUP = "offset_group: Number of groups of offset. C must be divisible by offset_group."
OFFSET_SHAPE = ("offset: It has shape (N, offset_group * kH * kW * 2, oH, oW) for 2D data or (N, offset_group * k1 * k2 * "
                "... * kn * n, o1, o2, ... , on) for nD data.")
MASK_SHAPE = ("mask: It has shape (N, offset_group * kH * kW, oH, oW) for 2D data (the nD sentence's extra '* n' read as "
              "a slip: one mask value per position in the kernel)")
DEFORM_BIAS = "B: Optional 1D bias of length oC to be added to the convolution."
OUTSIDE = ("'Sampling locations outside of the padded input tensor gives zero': a neighbour outside the input reads 0 "
           "(the padding, and beyond it, zeros: torchvision's reading), or a location outside the padded tensor gives 0 "
           "as a whole; they differ where a side has no padding and a location lies less than one element outside")
DEFORM_REASON = ("the dot product's bound over the 2^n·K terms w·mask·λ·x (λ the interpolation weights), n + 3 further "
                 "roundings per term (the weights' products, the mask and the weight), and a location computed in the "
                 "input's type (u·(|p| + 1) per axis times the interpolant's slope); bitwise where every location, weight "
                 "and partial sum is exact")
DEFORM_FORMULA = ("½ulp(y) + γ(2^n·K + [B])·(Σ|w·mask·λ·x| + |b|) + γ(n + 3)·Σ|w·mask·λ·x| + Σ|w·mask|·Σ_axes "
                  "u·(|p| + 1)·2·max|x|")


# --- geometry ---

@dataclass(frozen=True)
class Geometry:
    """Where a convolution's windows are and how its channels divide: `windows` over the spatial
    axes, `group`, and the counts N, C (input channels), M (output channels)."""

    windows: Windows
    group: int
    n: int
    c: int
    m: int

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.n, self.m) + self.windows.output

    @property
    def positions(self) -> int:
        return math.prod(self.windows.output)

    @property
    def taps(self) -> int:
        return math.prod(self.windows.kernel)


def _label(example: Example, sentence: str) -> str:
    return f"{example.version.label}: {sentence}"


def geometry(example: Example, x: np.ndarray, w: np.ndarray, sentences: tuple[str, str, str, str]) -> Geometry | Invalid:
    """The windows and groups of a convolution of x by w, or the rule broken. `sentences`: the
    texts of X's shape, W's shape, the channels' rule and the feature maps' rule, as the op words them."""
    x_text, w_text, channels_text, maps_text = sentences
    if x.ndim < 3:
        return Invalid("x-rank", _label(example, f"{x_text} (N, C and at least one spatial axis)"))
    if w.ndim != x.ndim:
        return Invalid("w-rank", _label(example, f"{w_text} (of X's rank, {x.ndim})"))
    group = int(example.attributes.get("group", 1))
    if group < 1:
        return Invalid("group", _label(example, GROUP))
    if x.shape[1] != w.shape[1] * group:
        return Invalid("channels-group", _label(example, channels_text))
    if w.shape[0] % group:
        return Invalid("feature-maps-group", _label(example, maps_text))
    kernel = tuple(int(k) for k in w.shape[2:])
    given = example.attributes.get("kernel_shape")
    if given is not None and tuple(int(k) for k in np.ravel(given)) != kernel:
        return Invalid("kernel-shape", _label(example, f"{KERNEL_SHAPE} (W's spatial shape is {list(kernel)})"))
    windows = windows_of(example, tuple(int(d) for d in x.shape[2:]), kernel)
    if isinstance(windows, Invalid):
        return replace(windows, sentence=_label(example, windows.sentence))
    return Geometry(windows, group, int(x.shape[0]), int(x.shape[1]), int(w.shape[0]))


def _feature_maps_text(example: Example) -> str:
    return FEATURE_MAPS if example.version.since_version >= 11 else FEATURE_MAPS_OLD


def rows(per_channel: np.ndarray, w: np.ndarray, shape: Geometry, extra: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Per output element (n, m, *out, in the output's order), its terms' input values and weights,
    two arrays (R, K). `per_channel`: [N, C, P, T, extra] values per input channel, output position,
    kernel tap (and `extra`: DeformConv's neighbours, each weighted by the same w); w [M, C/group, *k]."""
    n, c, m, group = shape.n, shape.c, shape.m, shape.group
    p, t = shape.positions, shape.taps
    cg = c // group
    k = cg * t * extra
    by_group = per_channel.reshape(n, group, cg, p, t, extra).transpose(0, 1, 3, 2, 4, 5).reshape(n, group, p, k)
    groups = np.arange(m) // max(m // group, 1)
    left = by_group[:, groups] if m else np.zeros((n, 0, p, k), dtype=per_channel.dtype)
    weights = np.repeat(w.reshape(m, cg * t, 1), extra, axis=2).reshape(m, k)
    right = np.broadcast_to(weights[None, :, None, :], (n, m, p, k))
    return left.reshape(-1, k), np.ascontiguousarray(right).reshape(-1, k)


def patches(x: np.ndarray, shape: Geometry, fill: object = 0) -> tuple[np.ndarray, np.ndarray]:
    """Every window's input values [N, C, P, T, 1] (`fill` in the padding) and the mask [P, T] of the
    taps that read the input."""
    values, inside = shape.windows.gather(x, fill)
    n, c = x.shape[:2]
    return (values.reshape(n, c, shape.positions, shape.taps, 1),
            np.asarray(inside).reshape(shape.positions, shape.taps))


def per_row(values: np.ndarray, shape: Geometry) -> np.ndarray:
    """A per-output-channel vector [M] repeated for each output element, in the output's order."""
    return np.broadcast_to(values.reshape(1, shape.m, 1), (shape.n, shape.m, shape.positions)).reshape(-1)


def bias_of(example: Example, name: str, shape: Geometry, sentence: str) -> np.ndarray | None | Invalid:
    b = example.inputs.get(name)
    if b is None:
        return None
    if b.shape != (shape.m,):
        return Invalid("bias-shape", _label(example, f"{sentence} ({shape.m} elements)"))
    return b


# --- float outputs ---

def _relabelled(found: Expected, formula: str, reason: str) -> Expected:
    budgets = tuple(replace(b, formula=formula, reason=reason) if b is not None else None for b in found.budgets)
    return replace(found, budgets=budgets)


def _merged(answers: list[tuple[Expected, str]], ambiguity: str) -> Expected:
    """One Expected from single-reading answers (each with one bound): their readings, labelled,
    judged by the loosest of their bounds per element."""
    first = answers[0][0]
    if len(answers) == 1:
        return first
    candidates = [replace(found.readings[0], label=label) for found, label in answers]
    bounds = [found.budgets[0] for found, _ in answers]
    tiers = tuple(Tier(t.label, np.maximum.reduce([np.where(np.isfinite(b.tiers[i].allowed), b.tiers[i].allowed, 0.0)
                                                    for b in bounds]), t.ksb, any_non_finite(b.tiers[i] for b in bounds))
                  for i, t in enumerate(bounds[0].tiers))
    result = readings(candidates, ambiguity)
    return replace(result, budgets=(replace(bounds[0], tiers=tiers),))


def conv_float(left: np.ndarray, right: np.ndarray, inside: np.ndarray, bias: np.ndarray | None, shape: Geometry,
               out: np.dtype) -> Expected:
    """Conv's float answer: the dot product plus the bias by matmul's bound; where a weight that is
    not finite meets the padding, also the reading that skips the padding's taps."""
    c = None if bias is None else per_row(bias.astype(np.float64), shape)
    beta = 0.0 if bias is None else 1.0
    written = _relabelled(float_answer(left, right, shape.shape, out, 1.0, beta, c), CONV_FORMULA, CONV_REASON)
    padded = ~inside
    if not padded.any() or np.isfinite(right).all():
        return written
    skipping = np.where(padded, 0.0, right)
    skipped = _relabelled(float_answer(left, skipping, shape.shape, out, 1.0, beta, c), CONV_FORMULA, CONV_REASON)
    return _merged([(written, "as written (0·w in the padding)"), (skipped, "the padding's taps skipped")], PADDING_NAN)


def _inside_rows(inside: np.ndarray, shape: Geometry, extra: int = 1) -> np.ndarray:
    """The padding mask [P, T] as rows (R, K) matching `rows`."""
    cg = shape.c // shape.group
    per_channel = np.broadcast_to(inside[None, None, :, :, None], (shape.n, shape.c, shape.positions, shape.taps, extra))
    one = np.ones((shape.m,) + (cg,) + shape.windows.kernel, dtype=bool)
    left, _ = rows(per_channel, one, shape, extra)
    return left.astype(bool)


def _conv_answer(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, shape: Geometry) -> Expected:
    values, inside = patches(x.astype(np.float64), shape)
    left, right = rows(values, w.astype(np.float64), shape)
    return conv_float(left, right, _inside_rows(inside, shape), bias, shape, np.dtype(x.dtype))


def literal_same(example: Example, shape: Geometry) -> Geometry | None:
    """Conv-1's SAME as worded, "pad the input so that the output spatial size match the input": the
    padding that gives as many windows as input elements on each axis ((n − 1)·s + dilated kernel − n,
    split as SAME_UPPER / SAME_LOWER split it); None where it is the ceil(input / stride) padding
    (every stride 1) or SAME is not asked for."""
    windows = shape.windows
    auto_pad = auto_pad_of(example)
    if not auto_pad.startswith("SAME") or all(s == 1 for s in windows.strides):
        return None
    spatial = tuple(int(d) for d in example.inputs["X"].shape[2:])
    totals = [max(0, (n - 1) * s + dilated(k, d) - n)
              for n, k, s, d in zip(spatial, windows.kernel, windows.strides, windows.dilations)]
    small, large = tuple(t // 2 for t in totals), tuple(t - t // 2 for t in totals)
    begin, end = (small, large) if auto_pad == "SAME_UPPER" else (large, small)
    placed = Windows(windows.kernel, windows.strides, windows.dilations, begin, end, spatial)
    return replace(shape, windows=placed) if placed != windows else None


def _bounded(found: Expected, label: str) -> list[Reading]:
    """`found`'s readings judged by their own bound as an interval (`Bounds`): readings of another
    shape than the first answer's, whose budget judges only its own shape."""
    bound = found.budgets[0]
    options = []
    for reading in found.readings:
        rounded = reading.outputs[0]
        low, high = bound.widened(rounded)
        loose = np.isinf(bound.allowed)
        nan = np.isnan(reading.precise[0]) | loose
        low = np.where(loose, -np.inf, low).astype(rounded.dtype)
        high = np.where(loose, np.inf, high).astype(rounded.dtype)
        name = label if reading.label == "spec" else f"{label}; {reading.label}"
        options.append(Reading((rounded,), name, bounds=(Bounds(low, high, nan),)))
    return options


class Conv1(VersionSemantics):
    """Conv: the windows of reference/window.py, groups, a bias; float outputs by the dot product's
    bound. Version 1 words SAME as "pad the input so that the output spatial size match the input":
    with a stride above 1 that is a padding of its own ((n − 1)·s + kernel − n, an output as long as
    the input), beside the later texts' ceil(input / stride) that runtimes give: two readings, of
    different shapes."""

    since = 1

    def expected(self, example: Example) -> Expected:
        x, w = example.inputs["X"], example.inputs["W"]
        shape = geometry(example, x, w, (X_SHAPE, W_SHAPE, CHANNELS, _feature_maps_text(example)))
        if isinstance(shape, Invalid):
            return Expected(invalid=shape)
        bias = bias_of(example, "B", shape, BIAS)
        if isinstance(bias, Invalid):
            return Expected(invalid=bias)
        found = _conv_answer(x, w, bias, shape)
        literal = literal_same(example, shape) if example.version.since_version < 11 else None
        if literal is None:
            return found
        first = tuple(replace(r, label=SAME_CEIL if r.label == "spec" else f"{SAME_CEIL}; {r.label}")
                      for r in found.readings)
        options = list(first) + _bounded(_conv_answer(x, w, bias, literal), SAME_LITERAL)
        ambiguity = "; ".join(part for part in (SAME_OPEN, found.ambiguity) if part)
        return replace(found, readings=tuple(options), ambiguity=ambiguity)


class Conv11(Conv1):
    """Conv-11: states "W.shape[0] mod G == 0" and SAME's ceil(input / stride)."""

    since = 11


class Conv22(Conv11):
    """Conv-22: bfloat16 too."""

    since = 22


# --- integer outputs ---

def _scalar_or_one(array: np.ndarray) -> bool:
    return array.ndim == 0 or array.shape == (1,)


def per_channel_vector(example: Example, array: np.ndarray | None, shape: Geometry, rule: str, sentence: str
                       ) -> np.ndarray | Invalid:
    """A per-tensor or per-output-channel parameter as a vector [M] (exact values, object), or the rule."""
    if array is None:
        return np.zeros(shape.m, dtype=object)
    if array.ndim == 0 or array.shape == (1,) or array.shape == (shape.m,):
        exact = _exact_array(array).reshape(-1)
        return np.full(shape.m, exact[0], dtype=object) if exact.size == 1 and shape.m != 1 else exact.reshape(shape.m)
    return Invalid(rule, _label(example, sentence))


def shifted_rows(example: Example, x: np.ndarray, w: np.ndarray, x_point, w_points: np.ndarray, shape: Geometry
                 ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The integer terms' rows (object arrays) for each reading of the padding: x − x_zero_point
    (the padding 0, the real zero) and x padded with the quantized 0 first."""
    wide = x.astype(np.int64)
    point = int(x_point)
    w_shifted = (w.astype(np.int64) - np.array(w_points, dtype=np.int64).reshape((shape.m,) + (1,) * (w.ndim - 1)))
    real_zero, inside = patches(wide - point, shape, 0)
    written = rows(real_zero.astype(object), w_shifted.astype(object), shape)
    if not point or inside.all():
        return {"": written}
    quantized_zero, _ = patches(wide, shape, 0)
    return {"the padding holds x_zero_point (the real zero)": written,
            "the padding holds the quantized value 0": rows((quantized_zero - point).astype(object),
                                                            w_shifted.astype(object), shape)}


def _one_element(example: Example, names: tuple[str, ...], m: int) -> bool:
    for name in names:
        array = example.inputs.get(name)
        if array is not None and array.shape == (1,) and (m != 1 or not name.startswith("w")):
            return True
    return False


class ConvInteger10(VersionSemantics):
    """ConvInteger: (x − x_zero_point)·(w − w_zero_point) summed exactly in int32 over Conv's windows."""

    since = 10

    def expected(self, example: Example) -> Expected:
        x, w = example.inputs["x"], example.inputs["w"]
        shape = geometry(example, x, w, (X_SHAPE, W_SHAPE.replace("W:", "w:"), CHANNELS, FEATURE_MAPS_OLD))
        if isinstance(shape, Invalid):
            return Expected(invalid=shape)
        x_point = example.inputs.get("x_zero_point")
        if x_point is not None and not _scalar_or_one(x_point):
            return Expected(invalid=Invalid("zero-point-shape", _label(example, X_ZERO_POINT)))
        w_points = per_channel_vector(example, example.inputs.get("w_zero_point"), shape, "zero-point-shape", W_ZERO_POINT)
        if isinstance(w_points, Invalid):
            return Expected(invalid=w_points)
        point = 0 if x_point is None else int(x_point.reshape(-1)[0])
        candidates = {label: integer_sums(left, right) for label, (left, right)
                      in shifted_rows(example, x, w, point, w_points, shape).items()}
        found = integer_readings(candidates, np.dtype(np.int32), shape.shape, PADDING_VALUE, overflow=ACCUMULATION_32)
        if _one_element(example, ("x_zero_point", "w_zero_point"), shape.m):
            found = replace(found, may_reject=ONE_ELEMENT)
        return found


class QLinearConv10(VersionSemantics):
    """QLinearConv: ConvInteger's exact sum plus the int32 bias, requantized as QLinearMatMul."""

    since = 10

    def expected(self, example: Example) -> Expected:
        inputs = example.inputs
        x, w = inputs["x"], inputs["w"]
        shape = geometry(example, x, w, (X_SHAPE, W_SHAPE.replace("W:", "w:"), CHANNELS, FEATURE_MAPS_OLD))
        if isinstance(shape, Invalid):
            return Expected(invalid=shape)
        for scale, point in (("x_scale", "x_zero_point"), ("w_scale", "w_zero_point"), ("y_scale", "y_zero_point")):
            if inputs[scale].shape != inputs[point].shape:
                return Expected(invalid=Invalid("scale-zero-point-shape", _label(example, f"{QLINEAR_PAIR} ({scale}, {point})")))
        if not _scalar_or_one(inputs["x_scale"]) or not _scalar_or_one(inputs["y_scale"]):
            return Expected(invalid=Invalid("scale-shape", _label(example, XY_SCALE)))
        w_scales = per_channel_vector(example, inputs["w_scale"], shape, "scale-shape", W_SCALE)
        if isinstance(w_scales, Invalid):
            return Expected(invalid=w_scales)
        w_points = per_channel_vector(example, inputs["w_zero_point"], shape, "scale-shape", W_SCALE)
        bias = bias_of(example, "B", shape, QLINEAR_BIAS)
        if isinstance(bias, Invalid):
            return Expected(invalid=bias)
        x_point = int(inputs["x_zero_point"].reshape(-1)[0])
        x_scale = _exact_array(inputs["x_scale"]).reshape(-1)[0]
        y_scale = _exact_array(inputs["y_scale"]).reshape(-1)[0]
        zero_point = _exact_array(inputs["y_zero_point"]).reshape(-1)[0]
        target = from_numpy(inputs["y_zero_point"].dtype)
        bias_rows = per_row(np.zeros(shape.m, dtype=np.int64) if bias is None else bias.astype(np.int64), shape)
        pairs = [(x_scale, s) for s in per_row(w_scales, shape).tolist()]
        multipliers = [_multiplier(p, q, y_scale) for p, q in pairs]
        k = (shape.c // shape.group) * shape.taps + (bias is not None)
        found = []
        for label, (left, right) in shifted_rows(example, x, w, x_point, w_points, shape).items():
            sums = [s + int(b) for s, b in zip(integer_sums(left, right), bias_rows.tolist())]
            fitted = cv.wrapped_and_saturated(sums, np.dtype(np.int32))
            variants = {"": sums} if fitted is None else {"int32 accumulation wrapped (two's complement)": fitted[0],
                                                          "int32 accumulation saturated": fitted[1]}
            for name, values in variants.items():
                joined = "; ".join(part for part in (label, name) if part) or "spec"
                found.append(requantized_reading(joined, values, [Fraction(0)] * len(values), multipliers,
                                                 (pairs, None, y_scale), zero_point, target, shape.shape, U32,
                                                 _tiny(), False, k))
        ambiguity = PADDING_VALUE if any("padding" in r.label for r in found) else ACCUMULATION_32
        result = readings(found, ambiguity)
        if result.ambiguity is None and any(c is not None for r in result.readings for c in r.choices):
            result = replace(result, ambiguity=REQUANTIZE)
        if _one_element(example, ("x_scale", "y_scale", "w_scale"), shape.m):
            result = replace(result, may_reject=ONE_ELEMENT)
        return result


def _tiny() -> float:
    return float(np.finfo(np.float32).smallest_subnormal)


# --- DeformConv ---

@dataclass(frozen=True)
class Samples:
    """DeformConv's bilinear (n-linear) samples: per (N, C, P, T, corner) the neighbour's input value
    (0 outside the input) and per (N, C, P, T, corner) its weight λ·mask; per (N, C, P, T) the
    location's error allowance factor, and whether every location and weight is exact in the type."""

    values: np.ndarray
    weights: np.ndarray
    slope: np.ndarray
    exact: np.ndarray


def _locations(shape: Geometry, offset: np.ndarray, offset_group: int) -> np.ndarray:
    """Each tap's sampling location [N, G_off, P, T, n] (float64): window position plus offset."""
    windows, rank = shape.windows, shape.windows.spatial_rank
    grids = [windows.taps(a) for a in range(rank)]  # [out_a, k_a]
    base = np.zeros(windows.output + windows.kernel + (rank,), dtype=np.float64)
    for a, taps in enumerate(grids):
        index = [1] * (2 * rank)
        index[a], index[rank + a] = taps.shape
        base[..., a] = taps.reshape(index)
    base = base.reshape(shape.positions, shape.taps, rank)
    moved = offset.astype(np.float64).reshape((shape.n, offset_group) + windows.kernel + (rank,) + windows.output)
    # to [N, G_off, *out, *k, n]
    order = [0, 1] + [2 + rank + 1 + a for a in range(rank)] + [2 + a for a in range(rank)] + [2 + rank]
    moved = moved.transpose(order).reshape(shape.n, offset_group, shape.positions, shape.taps, rank)
    return base[None, None] + moved


def _samples(x: np.ndarray, shape: Geometry, offset: np.ndarray, mask: np.ndarray, offset_group: int, whole: bool,
             out: np.dtype, accumulator_u: float) -> Samples:
    """The neighbours of every sampling location and their weights (see the module's docstring);
    `whole`: a location outside the padded input reads 0 as a whole."""
    windows, rank = shape.windows, shape.windows.spatial_rank
    spatial = x.shape[2:]
    loc = _locations(shape, offset, offset_group)
    low = np.floor(loc)
    frac = loc - low
    corners = list(itertools.product((0, 1), repeat=rank))
    n, c, p, t = shape.n, shape.c, shape.positions, shape.taps
    per_group = c // offset_group
    groups = np.arange(c) // per_group
    values = np.zeros((n, c, p, t, len(corners)), dtype=np.float64)
    lam = np.ones((n, offset_group, p, t, len(corners)), dtype=np.float64)
    wide = x.astype(np.float64)
    batch = np.arange(n).reshape(n, 1, 1, 1)
    for j, bits in enumerate(corners):
        valid = np.ones(loc.shape[:-1], dtype=bool)
        index = []
        for a, bit in enumerate(bits):
            where = low[..., a] + bit
            valid &= (where >= 0) & (where < spatial[a])
            index.append(np.clip(where, 0, max(spatial[a] - 1, 0)).astype(np.int64))
            lam[..., j] *= frac[..., a] if bit else 1.0 - frac[..., a]
        if whole:
            for a in range(rank):
                valid &= (loc[..., a] >= -windows.pads_begin[a]) & (loc[..., a] <= spatial[a] - 1 + windows.pads_end[a])
        for g in range(offset_group):
            channels = np.flatnonzero(groups == g)
            picked = wide[(batch, channels.reshape(1, -1, 1, 1)) + tuple(i[:, g][:, None] for i in index)] if wide.size else 0.0
            corner = values[..., j]  # a view: its channels set through it
            corner[:, channels] = np.where(valid[:, g][:, None], picked, 0.0)
    mask_values = mask.astype(np.float64).reshape(n, offset_group, t, p).transpose(0, 1, 3, 2)
    weights = lam * mask_values[..., None]
    u = max(unit_roundoff(out), accumulator_u)
    drift = (u * (np.abs(loc) + 1.0)).sum(axis=-1)  # [N, G, P, T]
    with np.errstate(invalid="ignore"):
        largest = np.abs(values).max(axis=-1) if values.size else np.zeros((n, c, p, t))
    slope = 2.0 * largest * np.abs(mask_values)[:, groups] * drift[:, groups]
    held = lambda v: v.astype(out).astype(np.float64)  # noqa: E731
    with np.errstate(over="ignore", invalid="ignore"):
        # fractions on a grid of 2^-16 keep every λ (≤ 16·n bits) exact in float64 for n ≤ 3
        coarse = (np.floor(frac * 2.0 ** 16) == frac * 2.0 ** 16).all(axis=-1) & (np.abs(loc) < 2.0 ** 20).all(axis=-1)
        exact_loc = (held(loc) == loc).all(axis=-1) & (held(frac) == frac).all(axis=-1) & (held(1.0 - frac) == 1.0 - frac).all(axis=-1)
        masked = np.broadcast_to(mask_values[..., None], lam.shape)
        exact_product = _products_exact(lam.reshape(-1, 1), masked.reshape(-1, 1)).reshape(lam.shape).all(axis=-1)
        exact_lam = (held(weights) == weights).all(axis=-1) & (held(lam) == lam).all(axis=-1) & exact_product
    return Samples(values, weights[:, groups], slope, (coarse & exact_loc & exact_lam)[:, groups])


def _deform_answer(x, w, shape, offset, mask, offset_group, bias, out, whole) -> Expected:
    rank = shape.windows.spatial_rank
    corners = 2 ** rank
    samples = _samples(x, shape, offset, mask, offset_group, whole, out, unit_roundoff(out))
    left, weights_rows = rows(samples.values, w.astype(np.float64), shape, corners)
    coefficient, _ = rows(samples.weights, np.ones_like(w, dtype=np.float64), shape, corners)
    right = weights_rows * coefficient  # w·mask·λ per term
    slope_rows, _ = rows(samples.slope[..., None], np.ones_like(w, dtype=np.float64), shape, 1)
    _, w_rows = rows(np.ones_like(samples.slope[..., None]), np.abs(w.astype(np.float64)), shape, 1)
    exact_rows, _ = rows(samples.exact[..., None].astype(np.float64), np.ones_like(w, dtype=np.float64), shape, 1)
    c = None if bias is None else per_row(bias.astype(np.float64), shape)
    y, bound = dot_bound(left, right, out, 1.0, 0.0 if bias is None else 1.0, c)
    with np.errstate(all="ignore"):
        products = left * right
        magnitude = np.where(np.isfinite(products), np.abs(products), 0.0).sum(axis=1)
        drift = (slope_rows * w_rows).sum(axis=1)
        right_exact = _right_exact(w, right, out) & _products_exact(weights_rows, coefficient)
    geometry_exact = (exact_rows.min(axis=1) if exact_rows.shape[1] else np.ones(len(y))) > 0
    tiers = []
    for tier, (_, accumulator) in zip(bound.tiers, accumulators(out)):
        u = unit_roundoff(accumulator)
        bitwise = geometry_exact & right_exact & exactly_summable(products, accumulator)
        extra = gamma(rank + 3, u) * magnitude + drift + (rank + 3) * 2.0 ** -52 * magnitude
        flat = tier.reshaped((-1,))
        tiers.append(replace(flat, allowed=np.where(bitwise, flat.allowed, flat.allowed + extra)).reshaped(shape.shape))
    bound = replace(bound, tiers=tuple(tiers), formula=DEFORM_FORMULA, reason=DEFORM_REASON,
                    scale=None if bound.scale is None else bound.scale.reshape(shape.shape))
    precise = y.reshape(shape.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = precise.astype(out)
    return Expected(readings=(Reading((rounded,), precise=(precise,)),), budgets=(bound,))


def _right_exact(w: np.ndarray, right: np.ndarray, out: np.dtype) -> np.ndarray:
    """Per row, whether every w·mask·λ is held exactly by float64 and by the input's type (then no
    step of forming it rounds, in any order: a factor of an exact dyadic product has no more bits)."""
    with np.errstate(over="ignore", invalid="ignore"):
        held = right.astype(out).astype(np.float64)
    fits = (held == right) | ~np.isfinite(right)
    return fits.all(axis=1) if right.shape[1] else np.ones(right.shape[0], dtype=bool)


class DeformConv19(VersionSemantics):
    """DeformConv: Conv's windows (no auto_pad) sampled at offset locations by linear interpolation,
    times the mask, dotted with the weights (see the module's docstring)."""

    since = 19

    def expected(self, example: Example) -> Expected:
        inputs = example.inputs
        x, w, offset = inputs["X"], inputs["W"], inputs["offset"]
        shape = geometry(example, x, w, (DEFORM_X, DEFORM_W, DEFORM_GROUP, DEFORM_GROUP))
        if isinstance(shape, Invalid):
            return Expected(invalid=shape)
        offset_group = int(example.attributes.get("offset_group", 1))
        if offset_group < 1 or shape.c % offset_group:
            return Expected(invalid=Invalid("offset-group", _label(example, OFFSET_GROUP)))
        rank = shape.windows.spatial_rank
        if offset.shape != (shape.n, offset_group * shape.taps * rank) + shape.windows.output:
            return Expected(invalid=Invalid("offset-shape", _label(example, OFFSET_SHAPE)))
        mask = inputs.get("mask")
        if mask is None:
            mask = np.ones((shape.n, offset_group * shape.taps) + shape.windows.output, dtype=x.dtype)
        elif mask.shape != (shape.n, offset_group * shape.taps) + shape.windows.output:
            return Expected(invalid=Invalid("mask-shape", _label(example, MASK_SHAPE)))
        bias = bias_of(example, "B", shape, DEFORM_BIAS)
        if isinstance(bias, Invalid):
            return Expected(invalid=bias)
        out = np.dtype(x.dtype)
        spread = _deform_answer(x, w, shape, offset, mask, offset_group, bias, out, whole=False)
        whole = _deform_answer(x, w, shape, offset, mask, offset_group, bias, out, whole=True)
        same = np.array_equal(spread.readings[0].precise[0], whole.readings[0].precise[0], equal_nan=True)
        if same:
            return spread
        return _merged([(spread, "a neighbour outside the input reads 0"),
                        (whole, "a location outside the padded input gives 0")], OUTSIDE)


class DeformConv22(DeformConv19):
    """DeformConv-22: bfloat16 too."""

    since = 22


# --- traits: the causes a runtime may deviate by ---

def _data(example: Example) -> np.ndarray:
    return example.inputs.get("X", example.inputs.get("x"))


def _weights(example: Example) -> np.ndarray:
    return example.inputs.get("W", example.inputs.get("w"))


def same_padding(example: Example) -> bool:
    return auto_pad_of(example) in ("SAME_UPPER", "SAME_LOWER")


def same_lower(example: Example) -> bool:
    return auto_pad_of(example) == "SAME_LOWER"


def dilated_same_padding(example: Example) -> bool:
    """SAME_UPPER or SAME_LOWER with a dilation above 1."""
    return same_padding(example) and dilated_kernel(example)


def asymmetric_pads(example: Example) -> bool:
    pads = attribute_ints(example, "pads")
    half = len(pads) // 2
    return bool(pads) and pads[:half] != pads[half:]


def padded(example: Example) -> bool:
    return any(attribute_ints(example, "pads")) or auto_pad_of(example) in ("SAME_UPPER", "SAME_LOWER")


def grouped(example: Example) -> bool:
    return int(example.attributes.get("group", 1)) > 1


def depthwise(example: Example) -> bool:
    x = _data(example)
    group = int(example.attributes.get("group", 1))
    return x is not None and x.ndim >= 2 and group > 1 and x.shape[1] == group


def dilated_kernel(example: Example) -> bool:
    return any(d > 1 for d in attribute_ints(example, "dilations"))


def strided(example: Example) -> bool:
    return any(s > 1 for s in attribute_ints(example, "strides"))


def dilated_non_finite(example: Example) -> bool:
    """A dilation above 1 and an infinite or NaN input value: where it lies between the kernel's taps
    a runtime that dilates W with zeros (onnx.reference) forms 0·inf = NaN, which the text's sum has not."""
    x = _data(example)
    if not dilated_kernel(example) or x is None or from_numpy(x.dtype).kind != "float":
        return False
    return not np.isfinite(x.astype(np.float64)).all()


def kernel_beyond_input(example: Example) -> bool:
    """A kernel longer than the input on some axis (only the padding lets it fit)."""
    x, w = _data(example), _weights(example)
    return (x is not None and w is not None and x.ndim == w.ndim and x.ndim >= 3
            and any(k > d for k, d in zip(w.shape[2:], x.shape[2:])))


def _float_inputs(example: Example) -> list[np.ndarray]:
    return [v for v in example.inputs.values() if v is not None and from_numpy(v.dtype).kind == "float"]


def non_finite_input(example: Example) -> bool:
    return any(not np.isfinite(v.astype(np.float64)).all() for v in _float_inputs(example))


def empty_output(example: Example) -> bool:
    x, w = _data(example), _weights(example)
    return (x is not None and x.size == 0) or (w is not None and w.size == 0)


def _expected(example: Example) -> Expected:
    return REFERENCES_BY_OP[example.op].expected(example)


def padding_value_open(example: Example) -> bool:
    """A quantized input with a nonzero x_zero_point and windows over the padding: the readings of
    what the padding holds differ."""
    found = _expected(example)
    return found.is_valid and found.ambiguity == PADDING_VALUE


def integer_overflow(example: Example) -> bool:
    found = _expected(example)
    return found.is_valid and any("int32" in r.label or "wrapped" in r.label for r in found.readings)


def zero_point_per_channel(example: Example) -> bool:
    point = example.inputs.get("w_zero_point")
    return point is not None and point.ndim == 1 and point.shape != (1,)


def scale_per_channel(example: Example) -> bool:
    scale = example.inputs.get("w_scale")
    return scale is not None and scale.ndim == 1 and scale.shape != (1,)


def zero_point_nonzero(example: Example) -> bool:
    return any(example.inputs.get(n) is not None and example.inputs[n].size and bool(np.any(example.inputs[n] != 0))
               for n in ("x_zero_point", "w_zero_point", "y_zero_point"))


def mixed_signedness(example: Example) -> bool:
    kinds = {example.inputs[n].dtype for n in ("x", "w", "y_zero_point") if example.inputs.get(n) is not None}
    return len(kinds) > 1


def one_element(example: Example) -> bool:
    w = _weights(example)
    m = w.shape[0] if w is not None and w.ndim else 1
    return _one_element(example, ("x_zero_point", "w_zero_point", "x_scale", "w_scale", "y_scale"), m)


def near_boundary(example: Example) -> bool:
    found = _expected(example)
    return found.is_valid and any(c is not None for r in found.readings for c in r.choices)


def bias_given(example: Example) -> bool:
    return example.inputs.get("B") is not None


def mask_given(example: Example) -> bool:
    return example.inputs.get("mask") is not None


def offset_groups(example: Example) -> bool:
    return int(example.attributes.get("offset_group", 1)) > 1


def fractional_offsets(example: Example) -> bool:
    offset = example.inputs.get("offset")
    return offset is not None and bool(np.any(offset.astype(np.float64) != np.floor(offset.astype(np.float64))))


def outside_reading(example: Example) -> bool:
    """Locations less than one element outside an unpadded side: the two readings of 'outside of the
    padded input tensor' differ."""
    found = _expected(example)
    return found.is_valid and found.ambiguity == OUTSIDE


def long_sum(example: Example) -> bool:
    """K = C/group·Πk of 256 or more: where a 16-bit accumulator parts from a float32 one."""
    w = _weights(example)
    return w is not None and w.ndim >= 2 and math.prod(w.shape[1:]) >= 256


def output_elements(example: Example) -> int:
    """The output's elements from the shapes (a convolution's output can outgrow its input: a wide W)."""
    largest = max((v.size for v in example.inputs.values() if v is not None), default=0)
    x, w = _data(example), _weights(example)
    if x is None or w is None or x.ndim < 3 or w.ndim != x.ndim:
        return largest
    # each output element reads at least one window position; bound by positions of the padded input
    pads = attribute_ints(example, "pads")
    spatial = [d + (pads[a] + pads[a + x.ndim - 2] if len(pads) == 2 * (x.ndim - 2) else 0) + (max(w.shape[2 + a], 1) if same_padding(example) else 0)
               for a, d in enumerate(x.shape[2:])]
    return max(largest, x.shape[0] * w.shape[0] * math.prod(max(s, 1) for s in spatial))


SHARED_TRAITS = {"dilated-same-padding": dilated_same_padding, "same-padding": same_padding, "same-lower": same_lower, "asymmetric-pads": asymmetric_pads,
                 "padded": padded, "grouped": grouped, "depthwise": depthwise, "dilated": dilated_kernel,
                 "strided": strided, "spatial-rank-1": spatial_rank_1, "spatial-rank-3": spatial_rank_3,
                 "kernel-beyond-input": kernel_beyond_input, "empty-output": empty_output}
FLOAT_TRAITS = {**SHARED_TRAITS, "non-finite-input": non_finite_input, "dilated-non-finite": dilated_non_finite, "bias": bias_given, "long-sum": long_sum}
INTEGER_TRAITS = {**SHARED_TRAITS, "padding-value-open": padding_value_open, "integer-overflow": integer_overflow,
                  "zero-point-per-channel": zero_point_per_channel, "zero-point-nonzero": zero_point_nonzero,
                  "mixed-signedness": mixed_signedness, "one-element": one_element}
QLINEAR_TRAITS = {**INTEGER_TRAITS, "scale-per-channel": scale_per_channel, "near-boundary": near_boundary,
                  "bias": bias_given}
DEFORM_TRAITS = {**FLOAT_TRAITS, "mask": mask_given, "offset-groups": offset_groups,
                 "fractional-offsets": fractional_offsets, "outside-reading": outside_reading}
GEOMETRY_RULES = ("x-rank", "w-rank", "group", "channels-group", "feature-maps-group", "kernel-shape", "strides",
                  "dilations", "pads", "auto-pad", "pads-with-auto-pad", "no-window")

REFERENCES = (
    OpReference(op="Conv", dtype_param="T", semantics=(Conv1, Conv11, Conv22), data_inputs=("X", "W", "B"),
                output_elements_from=output_elements, traits=FLOAT_TRAITS, rules=GEOMETRY_RULES + ("bias-shape",)),
    OpReference(op="ConvInteger", dtype_param="T1", semantics=(ConvInteger10,), data_inputs=("x", "w"),
                output_elements_from=output_elements, traits=INTEGER_TRAITS,
                rules=GEOMETRY_RULES + ("zero-point-shape",), covering_bindings=True),
    OpReference(op="QLinearConv", dtype_param="T1", semantics=(QLinearConv10,), data_inputs=("x", "w", "B"),
                output_elements_from=output_elements, traits=QLINEAR_TRAITS,
                rules=GEOMETRY_RULES + ("scale-zero-point-shape", "scale-shape", "bias-shape"), covering_bindings=True),
    OpReference(op="DeformConv", dtype_param="T", semantics=(DeformConv19, DeformConv22),
                data_inputs=("X", "W", "offset", "B", "mask"), output_elements_from=output_elements, traits=DEFORM_TRAITS,
                rules=GEOMETRY_RULES + ("offset-group", "offset-shape", "mask-shape", "bias-shape")),
)
REFERENCES_BY_OP = {reference.op: reference for reference in REFERENCES}
