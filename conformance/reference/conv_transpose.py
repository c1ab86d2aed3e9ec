"""ConvTranspose (versions 1, 11, 22), from the schema texts in onnx.defs.

X is (N x C x D1 ... x Dn), W is (C x M/group x k1 ... x kn), B an optional 1-D bias of size M;
"The number of channels in the output should be equal to W.shape[1] * group". Each output element
is the sum of the products x[n, c, i]·w[c, m, k] over the input channels c of m's group and every
(input position i, kernel tap k) that lands on it: i·stride + k·dilation = o + pads_begin (the
output is the full transposed convolution with pads_begin cut from its start and pads_end from its
end; where pads are negative or output_padding reaches past the full result, positions no tap lands
on hold the bias alone: "changing this attribute only adds or removes output elements").

The output's spatial shape, by the texts:

- explicit pads: "output_shape[i] = stride[i] * (input_size[i] - 1) + output_padding[i] +
  ((kernel_shape[i] - 1) * dilations[i] + 1) - pads[start_i] - pads[end_i]";
- `output_shape` given ("If output_shape is specified pads values are ignored"): "total_padding[i]
  = stride[i] * (input_size[i] - 1) + output_padding[i] + ((kernel_shape[i] - 1) * dilations[i] +
  1) - output_shape[i]", split by the version's rule: version 1 "If (auto_pads != SAME_UPPER):
  pads[start_i] = total_padding[i]/2; pads[end_i] = total_padding[i] - (total_padding[i]/2) Else:
  pads[start_i] = total_padding[i] - (total_padding[i]/2); pads[end_i] = (total_padding[i]/2)";
  from 11 the condition is the reverse ("If (auto_pads == SAME_UPPER)");
- auto_pad SAME_UPPER / SAME_LOWER: version 1 "pad the input so that the output spatial size
  match the input" (its auto_pad sentence puts an odd padding's extra "at the end for SAME_UPPER
  and at the beginning for SAME_LOWER", its formula the other way round: both are readings); from
  11 "`output_shape[i] = input_shape[i] * strides[i]`", the total split by the formula, which
  agrees with the auto_pad sentence;
- VALID: no padding.

A total padding below 0 (an `output_shape` past the full result, or SAME with a kernel shorter
than the stride) makes pads the text says are ">= 0" negative: the positions past the full result
hold the bias alone, "/2" floored (ONNX's test_convtranspose_output_shape, whose total is -1, puts
the extra element at the end), and a runtime may reject the case.

output_padding: from 11 "Each padding value in "output_padding" must be less than the
corresponding stride/dilation dimension": read as less than the stride or the dilation (PyTorch's
"smaller than either stride or dilation"); one at least the stride but below the dilation is valid
and may be rejected. Version 1 sets no limit.

Judging: float outputs by the per-element bound of a dot product (matmul.py's `float_answer`, the
bias its C): γ(K + [B])·(Σ|x·w| + |b|) + ½ulp(y) per element, K the products that land on it, each
accumulator a runtime may use its tier; exactly summable terms (small integers, quarters) judged
bitwise, so a wrong pad, stride, group or output_padding is told exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..bounds import Tier, any_non_finite
from ..case import Example
from .base import Expected, Invalid, OpReference, VersionSemantics
from .matmul import float_answer
from .window import (AUTO_PAD_SENTENCE, AUTO_PADS, DILATIONS_SENTENCE, PADS_SENTENCE, PADS_WITH_AUTO_PAD,
                     STRIDES_SENTENCE, auto_pad_of, dilated, int_list)

SHAPE_FORMULA = ("output_shape[i] = stride[i] * (input_size[i] - 1) + output_padding[i] + ((kernel_shape[i] - 1) * "
                 "dilations[i] + 1) - pads[start_i] - pads[end_i]")
TOTAL_PADDING = ("total_padding[i] = stride[i] * (input_size[i] - 1) + output_padding[i] + ((kernel_shape[i] - 1) * "
                 "dilations[i] + 1) - output_shape[i]")
X_SHAPE = ("X: Input data tensor from previous layer; has size (N x C x H x W) ... Otherwise the size is "
           "(N x C x D1 x D2 ... x Dn)")
W_SHAPE = ("W: The weight tensor that will be used in the convolutions; has size (C x M/group x kH x kW), where C is "
           "the number of channels")
GROUP = "group: number of groups input channels and output channels are divided into."
BIAS = "B: Optional 1D bias to be added to the convolution, has size of M."
KERNEL = "kernel_shape: The shape of the convolution kernel. If not present, should be inferred from input W."
OUTPUT_PADDING = ("output_padding: Each padding value in \"output_padding\" must be less than the corresponding "
                  "stride/dilation dimension.")
OUTPUT_PADDING_1 = "output_padding: The zero-padding added to one side of the output."
OUTPUT_PADDING_DILATION = (f"{OUTPUT_PADDING} (read as less than the stride or the dilation, as PyTorch's 'smaller "
                           "than either stride or dilation'): one at least the stride may be rejected")
OUTPUT_SHAPE = ("output_shape: The shape of the output can be explicitly set ... Note that the output_shape attribute "
                "value should not include dimensions for batch size and channels")
NEGATIVE_PADDING = ("pads: it can take any value greater than or equal to 0: the total_padding the text computes for "
                    "this output_shape or auto_pad is negative; a runtime may reject it")
EMPTY_OUTPUT = (f"{SHAPE_FORMULA}: the pads leave an axis of 0 elements, an empty output a runtime may refuse to "
                "compute")
SAME_1 = ("ConvTranspose-1: its auto_pad sentence adds an odd padding's extra 'at the end for SAME_UPPER and at the "
          "beginning for SAME_LOWER', its formula 'If (auto_pads != SAME_UPPER): pads[start_i] = total_padding[i]/2' "
          "the other way round")
REASON = ("Higham's bound for a dot product in any order (γ(K)·Σ|x·w|, K the products that land on the element), the "
          "bias's addition and one rounding of the result, in each accumulator a runtime may use; exactly summable "
          "terms judged bitwise (PRECISION.md, 'Ops that accumulate')")
FORMULA = "½ulp(y) + γ(K + [B])·(Σ|x·w| + |b|)"


@dataclass(frozen=True)
class Placement:
    """Where the output lies on the full transposed convolution, per spatial axis: the kernel,
    stride and dilation, the pads cut from the full result's start, and the output's size."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads_begin: tuple[int, ...]
    output: tuple[int, ...]

    def sources(self, axis: int, size: int) -> np.ndarray:
        """The input index each (output position, kernel tap) of `axis` takes, shape [out, kernel]:
        -1 where no input position lands there (i·stride + k·dilation = o + pads_begin)."""
        full = np.arange(self.output[axis])[:, None] + self.pads_begin[axis]
        reach = full - np.arange(self.kernel[axis])[None, :] * self.dilations[axis]
        index = reach // self.strides[axis]
        lands = (reach % self.strides[axis] == 0) & (index >= 0) & (index < size)
        return np.where(lands, index, -1)


def split(total: int, extra_at_end: bool) -> tuple[int, int]:
    """(pads_begin, pads_end) of a total padding: "total_padding[i]/2" (floored, as ONNX's own
    reference and node tests divide a negative total) on the side that takes the smaller half."""
    half = total // 2
    return (half, total - half) if extra_at_end else (total - half, half)


@dataclass(frozen=True)
class Request:
    """What the attributes ask, per spatial axis, before the pads are placed."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    output_padding: tuple[int, ...]

    def full(self, sizes: tuple[int, ...]) -> tuple[int, ...]:
        """stride·(in − 1) + output_padding + the dilated kernel: the output with no pads."""
        return tuple(s * (n - 1) + p + dilated(k, d)
                     for n, k, s, d, p in zip(sizes, self.kernel, self.strides, self.dilations, self.output_padding))


class ConvTranspose1(VersionSemantics):
    """ConvTranspose-1: output_padding without a limit; SAME_* keeps the input's size, its odd
    padding split two ways (the formula, `auto_pads != SAME_UPPER`, and the auto_pad sentence)."""

    since = 1

    def expected(self, example: Example) -> Expected:
        found = self.checked(example)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        x, w, bias, request, groups = found
        options = self.placements(example, x.shape[2:], request)
        if isinstance(options, Invalid):
            return Expected(invalid=options)
        placements, ambiguity, may_reject = options
        return answer(x, w, bias, groups, placements, ambiguity, may_reject)

    # --- the inputs and attributes, checked ---

    def checked(self, example: Example):
        x, w, bias = example.inputs["X"], example.inputs["W"], example.inputs.get("B")
        label = example.version.label
        if x.ndim < 3:
            return Invalid("x-rank", f"{label}: {X_SHAPE} (at least one spatial axis)")
        if w.ndim != x.ndim or w.shape[0] != x.shape[1]:
            return Invalid("weight-shape", f"{label}: {W_SHAPE} (W's rank that of X, W.shape[0] X's channels)")
        groups = int(example.attributes.get("group", 1))
        if groups < 1 or x.shape[1] % groups:
            return Invalid("group", f"{label}: {GROUP} (a group count of at least 1 dividing C = {x.shape[1]})")
        if bias is not None and tuple(bias.shape) != (w.shape[1] * groups,):
            return Invalid("bias-shape", f"{label}: {BIAS} (M = W.shape[1] * group = {w.shape[1] * groups})")
        rank = x.ndim - 2
        kernel = tuple(w.shape[2:])
        if "kernel_shape" in example.attributes and int_list(example, "kernel_shape", rank, 0) != kernel:
            return Invalid("kernel-shape", f"{label}: {KERNEL} (it must match W's spatial dims {list(kernel)})")
        strides = int_list(example, "strides", rank, 1)
        if strides is None or min(strides) < 1:
            return Invalid("strides", f"{label}: {STRIDES_SENTENCE} (one stride of at least 1 per spatial axis: {rank})")
        dilations = int_list(example, "dilations", rank, 1)
        if dilations is None or min(dilations) < 1:
            return Invalid("dilations", f"{label}: {DILATIONS_SENTENCE} (one dilation of at least 1 per spatial axis: {rank})")
        output_padding = int_list(example, "output_padding", rank, 0)
        if output_padding is None or min(output_padding) < 0:
            return Invalid("output-padding", f"{label}: {self.output_padding_sentence} (one value of at least 0 per spatial axis: {rank})")
        beyond = self.output_padding_beyond(output_padding, strides, dilations)
        if beyond:
            return Invalid("output-padding", f"{label}: {OUTPUT_PADDING} (read as less than the stride or the dilation)")
        return x, w, bias, Request(kernel, strides, dilations, output_padding), groups

    output_padding_sentence = OUTPUT_PADDING_1

    def output_padding_beyond(self, output_padding, strides, dilations) -> bool:
        return False

    def output_padding_may_reject(self, request: Request) -> bool:
        return False

    # --- where the output lies ---

    def placements(self, example: Example, sizes: tuple[int, ...], request: Request):
        """The placements the text allows (one, or several where it is ambiguous), what is
        ambiguous and why a runtime may reject; or the rule broken."""
        label = example.version.label
        rank = len(sizes)
        auto_pad = auto_pad_of(example)
        if auto_pad not in AUTO_PADS:
            return Invalid("auto-pad", f"{label}: {AUTO_PAD_SENTENCE}")
        full = request.full(sizes)
        may_reject = OUTPUT_PADDING_DILATION if self.output_padding_may_reject(request) else None
        if "output_shape" in example.attributes:
            wanted = int_list(example, "output_shape", rank, 0)
            if wanted is None or min(wanted) < 0:
                return Invalid("output-shape", f"{label}: {OUTPUT_SHAPE} (one size of at least 0 per spatial axis: {rank})")
            return self.from_totals(request, full, wanted, self.output_shape_splits(auto_pad), may_reject)
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            if "pads" in example.attributes and any(int(p) for p in np.ravel(example.attributes["pads"])):
                return Invalid("pads-with-auto-pad", f"{label}: {PADS_WITH_AUTO_PAD}")
            wanted = self.same_output(sizes, request)
            splits, ambiguity = self.same_splits(auto_pad, [f - o for f, o in zip(full, wanted)])
            return self.from_totals(request, full, wanted, splits, may_reject, ambiguity)
        if auto_pad == "VALID":
            if "pads" in example.attributes and any(int(p) for p in np.ravel(example.attributes["pads"])):
                return Invalid("pads-with-auto-pad", f"{label}: {PADS_WITH_AUTO_PAD}")
            return [self.placed(request, (0,) * rank, full)], None, may_reject
        pads = int_list(example, "pads", 2 * rank, 0)
        if pads is None or min(pads) < 0:
            return Invalid("pads", f"{label}: {PADS_SENTENCE} (two pads of at least 0 per spatial axis: {2 * rank})")
        output = tuple(f - b - e for f, b, e in zip(full, pads[:rank], pads[rank:]))
        if min(output) < 0:
            return Invalid("no-output", f"{label}: {SHAPE_FORMULA} (the pads leave fewer than 0 elements)")
        if min(output) == 0:
            may_reject = EMPTY_OUTPUT
        return [self.placed(request, pads[:rank], output)], None, may_reject

    def placed(self, request: Request, begin, output) -> Placement:
        return Placement(request.kernel, request.strides, request.dilations, tuple(begin), tuple(output))

    def output_shape_splits(self, auto_pad: str) -> tuple[bool, ...]:
        """Whether an odd total's extra goes at the end, per reading, for an explicit output_shape."""
        return ((auto_pad != "SAME_UPPER"),)

    def same_output(self, sizes, request: Request) -> tuple[int, ...]:
        return tuple(sizes)  # "pad the input so that the output spatial size match the input"

    def same_splits(self, auto_pad: str, totals) -> tuple[tuple[bool, ...], str | None]:
        formula = auto_pad != "SAME_UPPER"
        sentence = auto_pad == "SAME_UPPER"
        if formula != sentence and any(t % 2 for t in totals):
            return (formula, sentence), SAME_1
        return (formula,), None

    def from_totals(self, request: Request, full, wanted, splits, may_reject, ambiguity=None):
        totals = [f - o for f, o in zip(full, wanted)]
        if min(totals) < 0:
            may_reject = NEGATIVE_PADDING
        found, labels = [], []
        for at_end in splits:
            placement = self.placed(request, tuple(split(t, at_end)[0] for t in totals), wanted)
            if placement not in found:
                found.append(placement)
                labels.append(_label(at_end))
        return list(zip(found, labels)) if len(found) > 1 else [found[0]], ambiguity if len(found) > 1 else None, may_reject


def _label(at_end: bool) -> str:
    return "an odd padding's extra pad at the end" if at_end else "an odd padding's extra pad at the beginning"


class ConvTranspose11(ConvTranspose1):
    """ConvTranspose-11: SAME_* makes the output input·stride; the split's condition reversed
    (`auto_pads == SAME_UPPER`); output_padding below the stride or the dilation."""

    since = 11
    output_padding_sentence = OUTPUT_PADDING

    def output_padding_beyond(self, output_padding, strides, dilations) -> bool:
        return any(p >= max(s, d) for p, s, d in zip(output_padding, strides, dilations))

    def output_padding_may_reject(self, request: Request) -> bool:
        return any(p >= s for p, s in zip(request.output_padding, request.strides))

    def output_shape_splits(self, auto_pad: str) -> tuple[bool, ...]:
        return ((auto_pad == "SAME_UPPER"),)

    def same_output(self, sizes, request: Request) -> tuple[int, ...]:
        return tuple(n * s for n, s in zip(sizes, request.strides))  # "output_shape[i] = input_shape[i] * strides[i]"

    def same_splits(self, auto_pad: str, totals) -> tuple[tuple[bool, ...], str | None]:
        return ((auto_pad == "SAME_UPPER"),), None


class ConvTranspose22(ConvTranspose11):
    """ConvTranspose-22: bfloat16 too."""

    since = 22


# --- the values ---

def product_rows(x: np.ndarray, w: np.ndarray, groups: int, placement: Placement) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Per output element (in Y's order), the K = C/group · prod(kernel) factors x and w whose
    products sum to it (both 0 where no input lands on a tap), float64 arrays (R, K); and Y's shape."""
    n, channels = x.shape[:2]
    rank = x.ndim - 2
    per_group, maps = channels // groups, w.shape[1]
    sources = [placement.sources(axis, x.shape[2 + axis]) for axis in range(rank)]
    indices, lands = [], np.ones((), dtype=bool)
    for axis, found in enumerate(sources):
        shape = [1] * (2 * rank)
        shape[axis], shape[rank + axis] = found.shape
        found = found.reshape(shape)
        lands = lands & (found >= 0)
        indices.append(np.maximum(found, 0))
    spatial_out, kernel = placement.output, placement.kernel
    wide = x.astype(np.float64).reshape((n, groups, per_group) + x.shape[2:])
    if x.size and math.prod(spatial_out):
        taken = wide[(slice(None), slice(None), slice(None), *indices)]  # [N, G, Cg, *out, *kernel]
    else:
        taken = np.zeros((n, groups, per_group) + spatial_out + kernel)
    lands = np.broadcast_to(lands, spatial_out + kernel)
    taken = np.where(lands, taken, 0.0)
    # [N, G, *out, Cg, *kernel] with an axis for the group's maps
    taken = np.moveaxis(taken, 2, 2 + rank)[:, :, None]
    weights = w.astype(np.float64).reshape((groups, per_group, maps) + kernel)
    weights = np.moveaxis(weights, 2, 1)  # [G, Mg, Cg, *kernel]
    weights = weights.reshape((1, groups, maps) + (1,) * rank + (per_group,) + kernel)
    mask = lands.reshape((1, 1, 1) + spatial_out + (1,) + kernel)
    weights = np.where(mask, weights, 0.0)
    full = (n, groups, maps) + spatial_out + (per_group,) + kernel
    k = per_group * math.prod(kernel)
    rows = n * groups * maps * math.prod(spatial_out)
    left = np.broadcast_to(taken, full).reshape(rows, k)
    right = np.broadcast_to(weights, full).reshape(rows, k)
    return left, right, (n, groups * maps) + spatial_out


def answer(x, w, bias, groups, placements, ambiguity, may_reject) -> Expected:
    """Each placement's output as a reading, judged by the dot-product bound (merged over readings)."""
    found, budgets = [], []
    for entry in placements:
        placement, label = entry if isinstance(entry, tuple) else (entry, "spec")
        left, right, shape = product_rows(x, w, groups, placement)
        c = None
        if bias is not None:
            per_row = np.broadcast_to(bias.astype(np.float64).reshape((1, -1) + (1,) * len(placement.output)), shape)
            c = np.ascontiguousarray(per_row).reshape(-1)
        answered = float_answer(left, right, shape, np.dtype(x.dtype), 1.0, 1.0, c)
        for reading in answered.readings:
            found.append(replace(reading, label=label if len(placements) > 1 else reading.label))
        budgets.append(answered.budgets[0])
        if answered.ambiguity and not ambiguity:
            ambiguity = answered.ambiguity
    bound = budgets[0]
    if len(budgets) > 1:
        tiers = tuple(Tier(t.label, np.maximum.reduce([b.tiers[i].allowed for b in budgets]), t.ksb,
                           any_non_finite(b.tiers[i] for b in budgets))
                      for i, t in enumerate(bound.tiers))
        bound = replace(bound, tiers=tiers)
    bound = replace(bound, formula=FORMULA, reason=REASON)
    return Expected(readings=tuple(found), ambiguity=ambiguity if len(found) > 1 else None, may_reject=may_reject,
                    budgets=(bound,))


# --- traits: the causes a runtime may deviate by ---

def _attribute_ints(example: Example, name: str) -> tuple[int, ...]:
    value = example.attributes.get(name)
    return () if value is None else tuple(int(v) for v in np.ravel(value))


def output_shape_given(example: Example) -> bool:
    return "output_shape" in example.attributes


def output_padding_given(example: Example) -> bool:
    return any(_attribute_ints(example, "output_padding"))


def auto_pad_same(example: Example) -> bool:
    return auto_pad_of(example) in ("SAME_UPPER", "SAME_LOWER")


def auto_pad_valid(example: Example) -> bool:
    return auto_pad_of(example) == "VALID"


def grouped(example: Example) -> bool:
    return int(example.attributes.get("group", 1)) > 1


def strided(example: Example) -> bool:
    return any(s > 1 for s in _attribute_ints(example, "strides"))


def dilated_kernel(example: Example) -> bool:
    return any(d > 1 for d in _attribute_ints(example, "dilations"))


def bias_given(example: Example) -> bool:
    return example.inputs.get("B") is not None


def non_finite_operand(example: Example) -> bool:
    return any(v is not None and v.size and not np.isfinite(v.astype(np.float64)).all()
               for name, v in example.inputs.items() if name in ("X", "W", "B"))


def negative_total_padding(example: Example) -> bool:
    """An output_shape or SAME_* whose total padding the text computes below 0."""
    found = REFERENCES[0].expected(example, bodies=False) if REFERENCES else None
    return found is not None and found.may_reject == NEGATIVE_PADDING


def output_padding_past_stride(example: Example) -> bool:
    """An output_padding at least the stride (version 11 on allows it below the dilation; version 1
    sets no limit)."""
    padding = _attribute_ints(example, "output_padding")
    strides = _attribute_ints(example, "strides") or (1,) * len(padding)
    return any(p >= s for p, s in zip(padding, strides))


def output_padding_past_both(example: Example) -> bool:
    """An output_padding at least both the stride and the dilation: what version 11 on forbids."""
    padding = _attribute_ints(example, "output_padding")
    strides = _attribute_ints(example, "strides") or (1,) * len(padding)
    dilations = _attribute_ints(example, "dilations") or (1,) * len(padding)
    return any(p >= max(s, d) for p, s, d in zip(padding, strides, dilations))


def same_strided(example: Example) -> bool:
    """SAME_UPPER or SAME_LOWER with a stride above 1: version 1 keeps the input's size, 11 on
    multiplies it by the stride."""
    return auto_pad_same(example) and strided(example) and "output_shape" not in example.attributes


def odd_total_padding(example: Example) -> bool:
    """An output_shape or SAME_* whose total padding is odd on some axis: which side takes the
    extra pad is what the versions' formulas differ on."""
    x, w = example.inputs.get("X"), example.inputs.get("W")
    if x is None or w is None or x.ndim < 3 or w.ndim != x.ndim or not (output_shape_given(example) or auto_pad_same(example)):
        return False
    rank = x.ndim - 2
    strides = int_list(example, "strides", rank, 1) or (1,) * rank
    dilations = int_list(example, "dilations", rank, 1) or (1,) * rank
    padding = int_list(example, "output_padding", rank, 0) or (0,) * rank
    request = Request(tuple(w.shape[2:]), strides, dilations, padding)
    if output_shape_given(example):
        wanted = int_list(example, "output_shape", rank, 0) or request.full(x.shape[2:])
    else:
        wanted = REFERENCES[0].semantics_for(example.version).same_output(x.shape[2:], request)
    return any((f - o) % 2 for f, o in zip(request.full(x.shape[2:]), wanted))


def empty_output(example: Example) -> bool:
    found = REFERENCES[0].expected(example, bodies=False)
    return found.is_valid and found.may_reject == EMPTY_OUTPUT


def spatial_rank(example: Example) -> int:
    x = example.inputs.get("X")
    return -1 if x is None else x.ndim - 2


def empty_input(example: Example) -> bool:
    return any(v is not None and v.size == 0 for v in example.inputs.values())


def output_elements(example: Example) -> int:
    """The output's elements, from the shapes alone (the largest input's where they are invalid)."""
    largest = max((v.size for v in example.inputs.values() if v is not None), default=0)
    x, w = example.inputs.get("X"), example.inputs.get("W")
    if x is None or w is None or x.ndim < 3 or w.ndim != x.ndim:
        return largest
    semantics = REFERENCES[0].semantics_for(example.version)
    found = semantics.checked(example)
    if isinstance(found, Invalid):
        return largest
    options = semantics.placements(example, x.shape[2:], found[3])
    if isinstance(options, Invalid):
        return largest
    first = options[0][0]
    placement = first[0] if isinstance(first, tuple) else first
    return max(largest, x.shape[0] * w.shape[1] * found[4] * math.prod(placement.output))


TRAITS = {"output-shape": output_shape_given, "output-padding": output_padding_given, "auto-pad-same": auto_pad_same,
          "auto-pad-valid": auto_pad_valid, "grouped": grouped, "strided": strided, "dilated": dilated_kernel,
          "bias": bias_given, "non-finite-operand": non_finite_operand, "negative-total-padding": negative_total_padding,
          "output-padding-past-stride": output_padding_past_stride, "empty-input": empty_input,
          "output-padding-past-stride-and-dilation": output_padding_past_both, "same-strided": same_strided, "odd-total-padding": odd_total_padding, "empty-output": empty_output,
          "spatial-1d": lambda e: spatial_rank(e) == 1, "spatial-3d": lambda e: spatial_rank(e) == 3}

REFERENCES = (
    OpReference(op="ConvTranspose", dtype_param="T", semantics=(ConvTranspose1, ConvTranspose11, ConvTranspose22),
                data_inputs=("X", "W"), output_elements_from=output_elements, traits=TRAITS,
                rules=("x-rank", "weight-shape", "group", "bias-shape", "kernel-shape", "strides", "dilations",
                       "output-padding", "output-shape", "auto-pad", "pads-with-auto-pad", "pads", "no-output")),
)
