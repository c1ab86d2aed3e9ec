"""The averaging pools: AveragePool (1, 7, 10, 11, 19, 22), LpPool (1, 2, 11, 18, 22),
GlobalAveragePool (1, 22) and GlobalLpPool (1, 2, 22). MaxPool, GlobalMaxPool and MaxUnpool are
reference/max_pool.py's and reference/max_unpool.py's.

Where the windows are is reference/window.py's (kernel_shape, strides, dilations, pads, auto_pad,
ceil_mode's "Sliding windows that would start in the right padded region are ignored"); this module
owns what a window holds and what each version's text says about it:

- AveragePool: "average pooling consisting of computing the average on all values of a subset of the
  input tensor according to the kernel size". Version 1: "The output of each pooling window is divided
  by the number of elements exclude pad." From 7: "divided by the number of elements (exclude pad when
  attribute count_include_pad is zero)". ceil_mode from 10, dilations from 19.
- LpPool: "computing the Lp norm on all values of a subset of the input tensor": (Σ|x|^p)^(1/p) over
  the taps that read the input (a tap in the padding reads 0, which adds |0|^p = 0). LpPool-1's and
  GlobalLpPool-1's p is a FLOAT ("default is 2.0"), the later versions' an INT. ceil_mode and
  dilations from LpPool-18.
- GlobalAveragePool / GlobalLpPool: "equivalent to AveragePool [LpPool] with kernel size equal to
  the spatial dimension of input tensor": one window over every spatial axis, output N x C x 1 ... x 1.

X: "(N x C x H x W) ... (N x C x D1 x D2 ... Dn)": at least one spatial axis (x-rank).

Readings, where the texts are silent or differ:

- ceil-overhang: with ceil_mode a last window may reach past the right pad. count_include_pad=1
  divides by "the number of elements" including "pad pixels"; what lies past the pads is neither
  input nor pad. Counted are the elements inside the padded input (onnxruntime, PyTorch,
  onnx.reference), or the kernel's size as a whole: two readings where they differ.
- padding-only window: pads may be any value ≥ 0, so a window may read padding only (pads ≥ kernel);
  with count_include_pad=0 its average is 0/0, a value the text does not give: any value there
  (onnxruntime rejects such pads: "Pad should be smaller than kernel").
- right-pad start: only AveragePool-22 says that windows which would start in the right padded region
  are ignored; AveragePool-10/11/19 and LpPool-18/22 give the ceil formula alone. Both readings
  (ignored, first; kept, the formula as written) where they differ, of different shapes.
- AveragePool-11's auto_pad formulas "when ceil_mode is disabled" (VALID: floor((in − dk + 1) / s),
  SAME: floor(in / s)) contradict its own auto_pad sentence (ceil(in / s)) and the explicit-padding
  formula with no pads (floor((in − dk) / s) + 1), which 19 restored: both readings.
- LpPool-1/2 word SAME as "pad the input so that the output (spatial) size match the input" and give
  no formula: with a stride above 1, an output as long as the input beside the later versions'
  ceil(in / s), as Conv-1 (reference/conv.py).
- AveragePool-1/7/10's auto_pad sentence says SAME pads "so that the output spatial size match the
  input", but their own formulas give SAME's shape, ceil(in / s), and its pad_shape: the formulas are
  followed (no second reading), as the later versions word it.
- auto_pad with ceil_mode: from 11 the texts give VALID's and SAME's shapes "when ceil_mode is
  enabled" as ceil((in − dk + 1) / s) and ceil(in / s): the floor shapes, so ceil_mode changes nothing.
- A kernel longer than the padded input by less than a stride: the output-shape formula's floor gives
  0 windows, an empty output a runtime may also refuse (window.py's `empty_output_spatial`, as
  MaxPool's); longer by more, a negative count: invalid (no-window).
- p: "p value of the Lp norm": an Lp norm needs p > 0 (|0|^0 and 1/0 have no value): p ≤ 0 invalid.

Precision (bounds.py, as reference/reduction.py's ReduceMean and ReduceL2): an average is a sum of
the taps read, exact in float64 here, in any order and accumulator (Higham's γ(n−1)·Σ|x|), then one
division (or multiplication by 1/count) in the accumulator: ½ulp(y) + γ(n−1)·Σ|x|/count + 2u·|y|.
Exactly summable windows divided by a power of two whose quotient the types hold are judged bitwise.
LpPool: |x|^p per term (exact for p = 1, a product for p = 2, pow otherwise: 1 and 4 ULP), the sum,
then the root S^(1/p) (sqrt, or pow with 1/p rounded in the accumulator), carried as an interval
around S; p = 1 over exactly summable windows is bitwise. A 16-bit type may be computed in float32:
a tier each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, exact_sums, exactly_summable, gamma, half_ulp, ksb, \
    least_subnormal, statistical_scale, unit_roundoff
from ..case import Example
from ..dtypes import from_numpy
from .base import Bounds, Expected, Invalid, OpReference, Reading, VersionSemantics
from .window import (EMPTY_OUTPUT, Windows, attribute_ints, auto_pad_of, dilated, empty_output_spatial, spatial_rank_1,
                     spatial_rank_3, windows_of, zero_windows)

X_SHAPE = ("X: Input data tensor from the previous operator; dimensions for image case are (N x C x H x W) ... For non "
           "image case, the dimensions are in the form of (N x C x D1 x D2 ... Dn)")
KERNEL_REQUIRED = "kernel_shape: The size of the kernel along each axis. (required: the text gives it no default)"
P_SENTENCE = "p: p value of the Lp norm used to pool over the input data (an Lp norm needs p > 0: |0|^0 and 1/0 have no value)"
AVERAGE_1 = "The output of each pooling window is divided by the number of elements exclude pad."
AVERAGE_7 = ("The output of each pooling window is divided by the number of elements (exclude pad when attribute "
             "count_include_pad is zero).")
IGNORED = "Sliding windows that would start in the right padded region are ignored."
OVERHANG_OPEN = ("ceil-overhang: with ceil_mode a window reaches past the right pad; count_include_pad counts 'pad "
                 "pixels', and what lies past the pads is neither input nor pad: the elements inside the padded input "
                 "(onnxruntime, PyTorch) or the whole kernel")
ONLY_PADDING = ("a window that reads padding only (pads >= kernel), count_include_pad=0: its average is 0/0, which the "
                "text gives no value")
RIGHT_START_OPEN = ("right-pad start: this version gives the ceil formula alone ('Sliding windows that would start in the "
                    "right padded region are ignored' came with AveragePool-22): a last window starting in the right "
                    "padding ignored, or kept")
AVERAGE_11_OPEN = ("AveragePool-11's auto_pad shapes 'when ceil_mode is disabled' (VALID: floor((in - dk + 1) / s), SAME: "
                   "floor(in / s)) contradict its auto_pad sentence (ceil(in / s)) and the explicit formula with no pads "
                   "(floor((in - dk) / s) + 1), restored in 19")
SAME_OPEN = ("LpPool-1/2: 'SAME_UPPER or SAME_LOWER mean pad the input so that the output spatial size match the input', "
             "no formula: with a stride above 1 the output as long as the input, or the later versions' ceil(in / s)")
IGNORED_LABEL = "windows starting in the right padding ignored (AveragePool-22's sentence)"
KEPT_LABEL = "a window starting in the right padding kept (the ceil formula as written)"
FLOOR_11_LABEL = "AveragePool-11's auto_pad formula as written (ceil_mode disabled)"
LITERAL_SAME_LABEL = "SAME as worded: as many windows as input elements"
AVERAGE_REASON = ("Higham's bound for a sum in any order over the taps read (γ(n−1)·Σ|x|) in each accumulator a runtime "
                  "may use, one division by the count in it, and one rounding of the result; exactly summable windows "
                  "with a power-of-two count judged bitwise (PRECISION.md, 'Ops that accumulate')")
AVERAGE_FORMULA = "½ulp(y) + γ(n−1)·Σ|x|/count + 2u·|y|"
LP_REASON = ("|x|^p per tap (exact for p = 1, one rounding for p = 2, pow's 4 ULP otherwise), Higham's bound for their "
             "sum in any order, and the root S^(1/p) (sqrt, or pow with 1/p rounded) carried as an interval around S, "
             "in each accumulator a runtime may use; p = 1 over exactly summable windows judged bitwise")
LP_FORMULA = "½ulp(y) + |(S ± δ)^(1/p) − y| + root's own error, δ = (γ(n−1) + term error)·Σ|x|^p"


def _label(example: Example, sentence: str) -> str:
    return f"{example.version.label}: {sentence}"


def _has_attribute(example: Example, name: str) -> bool:
    import onnx.defs

    return name in onnx.defs.get_schema(example.op, example.version.since_version).attributes


# --- where the windows are, and the readings of it ---

@dataclass(frozen=True)
class Placement:
    """Windows placed by one reading of the text; `label` '' for the text's own."""

    windows: Windows
    label: str = ""
    ambiguity: str | None = None


def _kernel(example: Example) -> tuple[int, ...] | None:
    value = example.attributes.get("kernel_shape")
    return None if value is None else tuple(int(k) for k in np.ravel(value))


def placements(example: Example, x: np.ndarray, states_ignored: bool) -> list[Placement] | Invalid:
    """The windows of AveragePool or LpPool over x: the reading runtimes follow first, then those
    another reading of this version's text gives (see the module's docstring)."""
    if x.ndim < 3:
        return Invalid("x-rank", _label(example, f"{X_SHAPE} (N, C and at least one spatial axis)"))
    kernel = _kernel(example)
    if kernel is None:
        return Invalid("kernel-shape", _label(example, KERNEL_REQUIRED))
    spatial = tuple(int(d) for d in x.shape[2:])
    ceil_mode = _has_attribute(example, "ceil_mode") and bool(int(example.attributes.get("ceil_mode", 0)))
    base = windows_of(example, spatial, kernel, ceil_mode)
    if isinstance(base, Invalid):
        return replace(base, sentence=_label(example, base.sentence))
    auto_pad = auto_pad_of(example)
    found = [Placement(base)]
    if ceil_mode and auto_pad == "NOTSET" and not states_ignored:
        kept = _kept(base, spatial)
        if kept != base:
            found = [Placement(base, IGNORED_LABEL, RIGHT_START_OPEN), Placement(kept, KEPT_LABEL, RIGHT_START_OPEN)]
    if example.op == "AveragePool" and example.version.since_version == 11 and not ceil_mode and auto_pad != "NOTSET":
        floor = _floor_11(base, spatial, auto_pad)
        if floor is not None and floor != base:
            found.append(Placement(floor, FLOOR_11_LABEL, AVERAGE_11_OPEN))
    if example.op == "LpPool" and example.version.since_version < 11 and auto_pad.startswith("SAME"):
        literal = _literal_same(base, spatial, auto_pad)
        if literal != base:
            found.append(Placement(literal, LITERAL_SAME_LABEL, SAME_OPEN))
    return found


def empty_or_invalid(example: Example, x: np.ndarray, found: Invalid) -> Expected:
    """An empty output where the text's formula counts 0 windows on an axis (window.py's
    `empty_output_spatial`); else the rule broken."""
    kernel = _kernel(example)
    counts = empty_output_spatial(example, tuple(int(d) for d in x.shape[2:]), kernel) \
        if found.rule == "no-window" and kernel is not None else None
    if counts is None:
        return Expected(invalid=found)
    return Expected(readings=(Reading((np.zeros(tuple(x.shape[:2]) + counts, dtype=x.dtype),)),), may_reject=EMPTY_OUTPUT)


def _kept(base: Windows, spatial: tuple[int, ...]) -> Windows:
    """ceil_mode's windows with none ignored: ceil((in + pads − dk) / s) + 1 on each axis."""
    output = []
    for n, k, s, d, b, e in zip(spatial, base.kernel, base.strides, base.dilations, base.pads_begin, base.pads_end):
        span = n + b + e - dilated(k, d)
        output.append(-(-span // s) + 1)
    return replace(base, output=tuple(output))


def _split(totals: list[int], auto_pad: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    small = tuple(t // 2 for t in totals)
    large = tuple(t - t // 2 for t in totals)
    return (small, large) if auto_pad == "SAME_UPPER" else (large, small)


def _floor_11(base: Windows, spatial: tuple[int, ...], auto_pad: str) -> Windows | None:
    """AveragePool-11's floor formulas for auto_pad; None where they place no window."""
    if auto_pad == "VALID":
        output = tuple((n - dilated(k, d) + 1) // s for n, k, s, d in zip(spatial, base.kernel, base.strides, base.dilations))
        return replace(base, output=output) if min(output) >= 1 else None
    output = tuple(n // s for n, s in zip(spatial, base.strides))
    if min(output) < 1:
        return None
    totals = [max(0, (o - 1) * s + dilated(k, d) - n)
              for o, s, k, d, n in zip(output, base.strides, base.kernel, base.dilations, spatial)]
    begin, end = _split(totals, auto_pad)
    return Windows(base.kernel, base.strides, base.dilations, begin, end, output)


def _literal_same(base: Windows, spatial: tuple[int, ...], auto_pad: str) -> Windows:
    """SAME as LpPool-1/2 word it: an output as long as the input, padded (n − 1)·s + dk − n."""
    totals = [max(0, (n - 1) * s + dilated(k, d) - n)
              for n, s, k, d in zip(spatial, base.strides, base.kernel, base.dilations)]
    begin, end = _split(totals, auto_pad)
    return Windows(base.kernel, base.strides, base.dilations, begin, end, spatial)


def global_taps(example: Example, x: np.ndarray) -> Taps | Invalid:
    """The taps of one window over every spatial axis, a row per (n, c)."""
    if x.ndim < 3:
        return Invalid("x-rank", _label(example, f"{X_SHAPE} (N, C and at least one spatial axis)"))
    spatial = tuple(int(d) for d in x.shape[2:])
    ones, zeros = (1,) * len(spatial), (0,) * len(spatial)
    return taps_of(x, Windows(spatial, ones, ones, zeros, zeros, ones))


# --- what the windows hold ---

@dataclass(frozen=True)
class Taps:
    """Every window's taps as rows (N·C·P, T), in the output's order: `values` (float64, 0 in the
    padding), `read` (the taps that read the input) and `padded` (those inside the padded input)."""

    values: np.ndarray
    read: np.ndarray
    padded: np.ndarray
    shape: tuple[int, ...]


def taps_of(x: np.ndarray, windows: Windows) -> Taps:
    n, c = x.shape[:2]
    shape = (n, c) + windows.output
    if 0 in windows.kernel:  # a global window over an empty axis reads nothing
        rows = n * c * math.prod(windows.output)
        empty = np.zeros((rows, 0))
        return Taps(empty, empty.astype(bool), empty.astype(bool), shape)
    with np.errstate(invalid="ignore", over="ignore"):
        values, inside = windows.gather(x.astype(np.float64), 0)
    rank = windows.spatial_rank
    padded = np.ones((), dtype=bool)
    for axis in range(rank):
        taps = windows.taps(axis)
        size = x.shape[2 + axis]
        within = (taps >= -windows.pads_begin[axis]) & (taps < size + windows.pads_end[axis])
        form = [1] * (2 * rank)
        form[axis], form[rank + axis] = taps.shape
        padded = padded & within.reshape(form)
    positions, kernel = math.prod(windows.output), math.prod(windows.kernel)
    rows = values.reshape(n * c * positions, kernel)
    read = np.broadcast_to(np.asarray(inside).reshape(1, positions, kernel), (n * c, positions, kernel))
    within = np.broadcast_to(np.broadcast_to(padded, windows.output + windows.kernel).reshape(1, positions, kernel),
                             (n * c, positions, kernel))
    return Taps(rows, read.reshape(-1, kernel), within.reshape(-1, kernel), shape)


@dataclass(frozen=True)
class Answer:
    """One reading's output: the rounded value, the exact one, its bound, the elements left free."""

    rounded: np.ndarray
    precise: np.ndarray
    bound: ElementBound
    free: np.ndarray
    label: str = ""


def _shaped(tiers: list[Tier], shape: tuple[int, ...], formula: str, reason: str, scale: np.ndarray | None) -> ElementBound:
    return ElementBound(tuple(Tier(t.label, t.allowed.reshape(shape), t.ksb.reshape(shape)) for t in tiers), formula,
                        reason, None if scale is None else scale.reshape(shape))


def _rounded(y: np.ndarray, out: np.dtype) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return y.astype(out)


def _held(y: np.ndarray, dt: np.dtype) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return y.astype(dt).astype(np.float64) == y


def average(taps: Taps, divisor: np.ndarray, out: np.dtype, label: str = "") -> Answer:
    """The sum of the taps read divided by `divisor` (per row); a row with divisor 0 left free."""
    terms = np.where(taps.read, taps.values, 0.0)
    n = taps.read.sum(axis=1).astype(np.float64)
    total = exact_sums(terms, out) if terms.shape[1] else np.zeros(terms.shape[0])
    with np.errstate(over="ignore"):
        magnitude = np.where(np.isfinite(terms), np.abs(terms), 0.0).sum(axis=1)
    free = divisor == 0
    with np.errstate(all="ignore"):
        y = np.where(free, np.nan, total / np.where(free, 1, divisor))
    rounded = _rounded(y, out)
    power_of_two = (divisor > 0) & (np.bitwise_and(divisor.astype(np.int64), divisor.astype(np.int64) - 1) == 0)
    tiers = []
    for name, acc in accumulators(out):
        u = unit_roundoff(acc)
        exact = exactly_summable(terms, acc) if terms.shape[1] else np.ones(len(y), dtype=bool)
        with np.errstate(all="ignore"):
            summed = np.where(exact, 0.0, gamma(np.maximum(n - 1, 0), u) * magnitude)
            allowed = half_ulp(y, out) + summed / np.maximum(divisor, 1) + 2 * u * np.abs(np.where(np.isfinite(y), y, 0.0))
            # an exact sum divided by a power of two that the accumulator holds: one rounding, to the output
            bitwise = exact & power_of_two & _held(y, acc)
            allowed = np.where(bitwise, np.abs(rounded.astype(np.float64) - y), allowed)
            allowed = np.where(free | (magnitude > float(ml_dtypes.finfo(acc).max)), np.inf, allowed)
        tiers.append(Tier(name, allowed, ksb(n, acc, out) * np.ones_like(y)))
    # TOSA's statistical test needs a value per element: none where the text gives none (0/0)
    scale = None if free.any() else statistical_scale(magnitude / np.maximum(divisor, 1), out)
    bound = _shaped(tiers, taps.shape, AVERAGE_FORMULA, AVERAGE_REASON, scale)
    return Answer(rounded.reshape(taps.shape), y.reshape(taps.shape), bound, free.reshape(taps.shape), label)


def lp_norm(taps: Taps, p: float, out: np.dtype) -> Answer:
    """(Σ|x|^p)^(1/p) over the taps read (the padding adds |0|^p = 0)."""
    with np.errstate(all="ignore"):
        terms = np.where(taps.read, np.abs(taps.values) ** p, 0.0)
    n = taps.read.sum(axis=1).astype(np.float64)
    with np.errstate(all="ignore"):
        total = exact_sums(terms, out) if terms.shape[1] else np.zeros(terms.shape[0])
        magnitude = np.where(np.isfinite(terms), np.abs(terms), 0.0).sum(axis=1)
        y = total ** (1.0 / p)
    rounded = _rounded(y, out)
    term_ulps = 0.0 if p == 1 else 1.0 if p == 2 else 4.0
    root_ulps = 0.0 if p == 1 else 1.0 if p == 2 else 4.0
    tiers = []
    for name, acc in accumulators(out):
        u = unit_roundoff(acc)
        exact = (exactly_summable(terms, acc) if terms.shape[1] else np.ones(len(y), dtype=bool)) & (p == 1)
        with np.errstate(all="ignore"):
            delta = (gamma(np.maximum(n - 1, 0), u) + 2 * term_ulps * u * (1 + gamma(n, u))) * magnitude \
                + n * least_subnormal(acc)
            high = (total + delta) ** (1.0 / p)
            low = np.maximum(total - delta, 0.0) ** (1.0 / p)
            root = np.maximum(high - y, y - low)
            finite = np.where(np.isfinite(y), np.abs(y), 0.0)
            # pow(S, 1/p) with 1/p rounded in the accumulator: S^(1/p·(1 + u)) = y·S^(u/p)
            exponent = 0.0 if p in (1, 2) else np.expm1(np.abs(np.log(np.where(total > 0, total, 1.0))) * u / p)
            allowed = half_ulp(y, out) + np.where(np.isfinite(root), root, 0.0) + 2 * root_ulps * u * finite \
                + exponent * finite
            # p = 1 over an exact sum: |x| is exact, the sum too, and the result rounds once
            allowed = np.where(exact, np.abs(rounded.astype(np.float64) - y), allowed)
            allowed = np.where(magnitude > float(ml_dtypes.finfo(acc).max), np.inf, allowed)
        tiers.append(Tier(name, allowed, ksb(n, acc, out) * np.ones_like(y)))
    bound = _shaped(tiers, taps.shape, LP_FORMULA, LP_REASON, None)
    return Answer(rounded.reshape(taps.shape), y.reshape(taps.shape), bound, np.zeros(taps.shape, dtype=bool))


# --- answers as Expected ---

def _reading(answer: Answer) -> Reading:
    free = (answer.free,) if answer.free.any() else ()
    return Reading((answer.rounded,), answer.label or "spec", precise=(answer.precise,), free=free)


def _as_bounds(answer: Answer) -> Reading:
    """An answer of another shape than the first reading's, judged by its bound as an interval."""
    rounded = answer.rounded
    low, high = answer.bound.widened(rounded)
    loose = np.isinf(answer.bound.allowed)
    nan = np.isnan(answer.precise) | loose
    low = np.where(loose, -np.inf, low).astype(rounded.dtype)
    high = np.where(loose, np.inf, high).astype(rounded.dtype)
    return Reading((rounded,), answer.label, bounds=(Bounds(low, high, nan),))


def expected_of(answers: list[Answer], ambiguities: list[str]) -> Expected:
    """One Expected from the readings' answers: those of the first's shape judged by the loosest of
    their bounds per element, others by their own bound as an interval."""
    first = answers[0]
    ambiguity = "; ".join(dict.fromkeys(a for a in ambiguities if a)) or None
    if len(answers) == 1:
        return Expected(readings=(replace(_reading(first), label="spec"),), budgets=(first.bound,), ambiguity=ambiguity)
    same = [a for a in answers if a.rounded.shape == first.rounded.shape]
    other = [a for a in answers if a.rounded.shape != first.rounded.shape]
    distinct: list[Answer] = []
    for answer in same:
        if not any(np.array_equal(answer.precise, seen.precise, equal_nan=True)
                   and np.array_equal(answer.free, seen.free) for seen in distinct):
            distinct.append(answer)
    tiers = tuple(Tier(t.label, np.maximum.reduce([a.bound.tiers[i].allowed for a in distinct]), t.ksb)
                  for i, t in enumerate(first.bound.tiers))
    bound = replace(first.bound, tiers=tiers)
    options = tuple(_reading(a) for a in distinct) + tuple(_as_bounds(a) for a in other)
    if len(options) == 1:
        return Expected(readings=(replace(options[0], label="spec"),), budgets=(bound,), ambiguity=ambiguity)
    return Expected(readings=options, budgets=(bound,), ambiguity=ambiguity)


def _p(example: Example) -> float | Invalid:
    p = float(np.ravel(example.attributes.get("p", 2))[0])
    if not p > 0 or not math.isfinite(p):
        return Invalid("p-value", _label(example, P_SENTENCE))
    return p


# --- the versions ---

class AveragePool1(VersionSemantics):
    """AveragePool-1: the average of the taps that read the input ("divided by the number of elements
    exclude pad"); kernel_shape, strides, pads, auto_pad."""

    since = 1
    states_ignored = False

    def expected(self, example: Example) -> Expected:
        x = example.inputs["X"]
        found = placements(example, x, self.states_ignored)
        if isinstance(found, Invalid):
            return empty_or_invalid(example, x, found)
        out = np.dtype(x.dtype)
        include = _has_attribute(example, "count_include_pad") and bool(int(example.attributes.get("count_include_pad", 0)))
        answers, ambiguities = [], []
        for placement in found:
            taps = taps_of(x, placement.windows)
            prefix = f"{placement.label}; " if placement.label else ""
            ambiguities.append(placement.ambiguity)
            if not include:
                answer = average(taps, taps.read.sum(axis=1), out, placement.label)
                if answer.free.any():
                    ambiguities.append(ONLY_PADDING)
                answers.append(answer)
                continue
            inside = taps.padded.sum(axis=1)
            whole = np.full(inside.shape, taps.padded.shape[1])
            answers.append(average(taps, inside, out, f"{prefix}the elements inside the padded input counted"
                                   if not np.array_equal(inside, whole) else placement.label))
            if not np.array_equal(inside, whole):
                answers.append(average(taps, whole, out, f"{prefix}the whole kernel counted"))
                ambiguities.append(OVERHANG_OPEN)
        return expected_of(answers, ambiguities)


class AveragePool7(AveragePool1):
    """AveragePool-7: count_include_pad ("Whether include pad pixels when calculating values for the edges")."""

    since = 7


class AveragePool10(AveragePool7):
    """AveragePool-10: ceil_mode ("Whether to use ceil or floor (default) to compute the output shape")."""

    since = 10


class AveragePool11(AveragePool10):
    """AveragePool-11: the dilated kernel in its formulas (no dilations attribute yet); SAME's sentence
    `output_shape[i] = ceil(input_shape[i] / strides[i])`, and floor formulas for auto_pad without
    ceil_mode that contradict it (a reading)."""

    since = 11


class AveragePool19(AveragePool11):
    """AveragePool-19: dilations; the auto_pad formulas restored."""

    since = 19


class AveragePool22(AveragePool19):
    """AveragePool-22: bfloat16; "Sliding windows that would start in the right padded region are ignored"."""

    since = 22
    states_ignored = True


class LpPool1(VersionSemantics):
    """LpPool-1: (Σ|x|^p)^(1/p) over each window, p a FLOAT (default 2.0)."""

    since = 1

    def expected(self, example: Example) -> Expected:
        x = example.inputs["X"]
        p = _p(example)
        if isinstance(p, Invalid):
            return Expected(invalid=p)
        found = placements(example, x, False)
        if isinstance(found, Invalid):
            return empty_or_invalid(example, x, found)
        out = np.dtype(x.dtype)
        answers = [replace(lp_norm(taps_of(x, placement.windows), p, out), label=placement.label) for placement in found]
        return expected_of(answers, [placement.ambiguity for placement in found])


class LpPool2(LpPool1):
    """LpPool-2: p an INT (default 2)."""

    since = 2


class LpPool11(LpPool2):
    """LpPool-11: SAME's `output_shape[i] = ceil(input_shape[i] / strides[i])`, strides' default stated."""

    since = 11


class LpPool18(LpPool11):
    """LpPool-18: ceil_mode and dilations."""

    since = 18


class LpPool22(LpPool18):
    """LpPool-22: bfloat16."""

    since = 22


class GlobalAveragePool1(VersionSemantics):
    """GlobalAveragePool: the average over every spatial axis, output N x C x 1 ... x 1."""

    since = 1

    def expected(self, example: Example) -> Expected:
        x = example.inputs["X"]
        taps = global_taps(example, x)
        if isinstance(taps, Invalid):
            return Expected(invalid=taps)
        answer = average(taps, np.full(taps.values.shape[0], taps.values.shape[1]), np.dtype(x.dtype))
        return expected_of([answer], [ONLY_PADDING if answer.free.any() else None])


class GlobalAveragePool22(GlobalAveragePool1):
    """GlobalAveragePool-22: bfloat16."""

    since = 22


class GlobalLpPool1(VersionSemantics):
    """GlobalLpPool: (Σ|x|^p)^(1/p) over every spatial axis; p a FLOAT in version 1, an INT from 2."""

    since = 1

    def expected(self, example: Example) -> Expected:
        x = example.inputs["X"]
        p = _p(example)
        if isinstance(p, Invalid):
            return Expected(invalid=p)
        taps = global_taps(example, x)
        if isinstance(taps, Invalid):
            return Expected(invalid=taps)
        return expected_of([lp_norm(taps, p, np.dtype(x.dtype))], [])


class GlobalLpPool2(GlobalLpPool1):
    """GlobalLpPool-2: p an INT (default 2)."""

    since = 2


class GlobalLpPool22(GlobalLpPool2):
    """GlobalLpPool-22: bfloat16."""

    since = 22


# --- traits: the causes a runtime may deviate by ---

def _x(example: Example) -> np.ndarray | None:
    return example.inputs.get("X")


def ceil_mode(example: Example) -> bool:
    return bool(int(example.attributes.get("ceil_mode", 0)))


def count_include_pad(example: Example) -> bool:
    return bool(int(example.attributes.get("count_include_pad", 0))) and padded(example)


def padded(example: Example) -> bool:
    return any(attribute_ints(example, "pads")) or auto_pad_of(example).startswith("SAME")


def same_padding(example: Example) -> bool:
    return auto_pad_of(example).startswith("SAME")


def dilated_same_padding(example: Example) -> bool:
    """SAME_UPPER or SAME_LOWER with a dilation above 1."""
    return same_padding(example) and dilated_kernel(example)


def negative_same_pad(example: Example) -> bool:
    """SAME_UPPER or SAME_LOWER where the text's pad_shape formula, (out − 1)·s + dk − in, is negative (a
    stride longer than the dilated kernel): the windows fit unpadded and the text pads 0."""
    x, kernel = _x(example), attribute_ints(example, "kernel_shape")
    if not same_padding(example) or x is None or x.ndim != len(kernel) + 2:
        return False
    rank = len(kernel)
    strides = attribute_ints(example, "strides") or [1] * rank
    dilations = attribute_ints(example, "dilations") or [1] * rank
    if len(strides) != rank or len(dilations) != rank:
        return False
    return any((-(-n // s) - 1) * s + dilated(k, d) - n < 0
               for n, s, k, d in zip(x.shape[2:], strides, kernel, dilations) if s > 0)


def valid_ceil_mode(example: Example) -> bool:
    """VALID with ceil_mode where a ceil shape would add a window: the texts give VALID's shape "when
    ceil_mode is enabled" as ceil((in − dk + 1) / s), the floor shape, which ceil_mode leaves alone."""
    x, kernel = _x(example), attribute_ints(example, "kernel_shape")
    if auto_pad_of(example) != "VALID" or not ceil_mode(example) or x is None or x.ndim != len(kernel) + 2:
        return False
    rank = len(kernel)
    strides = attribute_ints(example, "strides") or [1] * rank
    dilations = attribute_ints(example, "dilations") or [1] * rank
    if len(strides) != rank or len(dilations) != rank:
        return False
    return any(s > 0 and (n - dilated(k, d)) % s != 0 for n, s, k, d in zip(x.shape[2:], strides, kernel, dilations))


def asymmetric_pads(example: Example) -> bool:
    pads = attribute_ints(example, "pads")
    half = len(pads) // 2
    return bool(pads) and pads[:half] != pads[half:]


def strided(example: Example) -> bool:
    return any(s > 1 for s in attribute_ints(example, "strides"))


def dilated_kernel(example: Example) -> bool:
    return any(d > 1 for d in attribute_ints(example, "dilations"))


def pads_beyond_kernel(example: Example) -> bool:
    """A pad as long as the kernel or longer (onnxruntime: "Pad should be smaller than kernel")."""
    pads, kernel = attribute_ints(example, "pads"), attribute_ints(example, "kernel_shape")
    rank = len(kernel)
    return len(pads) == 2 * rank and any(pads[a] >= kernel[a] or pads[a + rank] >= kernel[a] for a in range(rank))


def kernel_beyond_input(example: Example) -> bool:
    x, kernel = _x(example), attribute_ints(example, "kernel_shape")
    return x is not None and x.ndim == len(kernel) + 2 and any(k > d for k, d in zip(kernel, x.shape[2:]))


def non_finite_input(example: Example) -> bool:
    x = _x(example)
    return x is not None and from_numpy(x.dtype).kind == "float" and not np.isfinite(x.astype(np.float64)).all()


def _ambiguity(example: Example) -> str:
    found = REFERENCES_BY_OP[example.op].expected(example)
    return (found.ambiguity or "") if found.is_valid else ""


def ceil_overhang(example: Example) -> bool:
    """count_include_pad with a window past the right pad: the readings of its count differ."""
    return "ceil-overhang" in _ambiguity(example)


def padding_only_window(example: Example) -> bool:
    """A window over padding only with count_include_pad=0: 0/0, no value given."""
    return "0/0" in _ambiguity(example)


def right_pad_start(example: Example) -> bool:
    """A version without the 'ignored' sentence whose ceil formula places a window starting in the right padding."""
    return "right-pad start" in _ambiguity(example)


def lp_p(example: Example) -> float:
    return float(np.ravel(example.attributes.get("p", 2))[0])


def large_p(example: Example) -> bool:
    """p of 3 or more: |x|^p by pow, and its root."""
    return lp_p(example) >= 3


def fractional_p(example: Example) -> bool:
    p = lp_p(example)
    return p != math.floor(p)


def empty_input(example: Example) -> bool:
    x = _x(example)
    return x is not None and x.size == 0


WINDOW_TRAITS = {"empty-output": zero_windows, "ceil-mode": ceil_mode, "padded": padded, "same-padding": same_padding, "valid-ceil-mode": valid_ceil_mode,
                 "dilated-same-padding": dilated_same_padding, "negative-same-pad": negative_same_pad,
                 "asymmetric-pads": asymmetric_pads, "strided": strided, "dilated": dilated_kernel,
                 "pads-beyond-kernel": pads_beyond_kernel, "kernel-beyond-input": kernel_beyond_input,
                 "spatial-rank-1": spatial_rank_1, "spatial-rank-3": spatial_rank_3, "non-finite-input": non_finite_input,
                 "right-pad-start": right_pad_start, "empty-input": empty_input}
AVERAGE_TRAITS = {**WINDOW_TRAITS, "count-include-pad": count_include_pad, "ceil-overhang": ceil_overhang,
                  "padding-only-window": padding_only_window}
LP_TRAITS = {**WINDOW_TRAITS, "large-p": large_p, "fractional-p": fractional_p}
GLOBAL_TRAITS = {"spatial-rank-1": spatial_rank_1, "spatial-rank-3": spatial_rank_3, "non-finite-input": non_finite_input,
                 "empty-input": empty_input}
def output_elements(example: Example) -> int:
    """The output's elements from the shapes, bounded by the padded input's positions (pads let it outgrow X)."""
    x = _x(example)
    if x is None or x.ndim < 3:
        return 0 if x is None else x.size
    rank = x.ndim - 2
    pads = attribute_ints(example, "pads")
    pads = pads if len(pads) == 2 * rank else [0] * (2 * rank)
    kernel = attribute_ints(example, "kernel_shape")
    extra = kernel if len(kernel) == rank and same_padding(example) else [0] * rank
    return max(x.size, x.shape[0] * x.shape[1] * math.prod(
        max(d + pads[a] + pads[a + rank] + extra[a] + 1, 1) for a, d in enumerate(x.shape[2:])))


WINDOW_RULES = ("x-rank", "kernel-shape", "strides", "dilations", "pads", "auto-pad", "pads-with-auto-pad", "no-window")

REFERENCES = (
    OpReference(op="AveragePool", dtype_param="T",
                semantics=(AveragePool1, AveragePool7, AveragePool10, AveragePool11, AveragePool19, AveragePool22),
                data_inputs=("X",), output_elements_from=output_elements, traits=AVERAGE_TRAITS, rules=WINDOW_RULES),
    OpReference(op="LpPool", dtype_param="T", semantics=(LpPool1, LpPool2, LpPool11, LpPool18, LpPool22),
                data_inputs=("X",), output_elements_from=output_elements, traits=LP_TRAITS,
                rules=WINDOW_RULES + ("p-value",)),
    OpReference(op="GlobalAveragePool", dtype_param="T", semantics=(GlobalAveragePool1, GlobalAveragePool22),
                data_inputs=("X",), traits=GLOBAL_TRAITS, rules=("x-rank",)),
    OpReference(op="GlobalLpPool", dtype_param="T", semantics=(GlobalLpPool1, GlobalLpPool2, GlobalLpPool22),
                data_inputs=("X",), traits={**GLOBAL_TRAITS, "large-p": large_p, "fractional-p": fractional_p},
                rules=("x-rank", "p-value")),
)
REFERENCES_BY_OP = {reference.op: reference for reference in REFERENCES}
