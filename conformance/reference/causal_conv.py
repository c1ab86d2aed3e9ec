"""CausalConvWithState (version 27), from the schema text in onnx.defs: "Stateful causal 1D
depthwise convolution", with a context-dependent function body (Concat, Conv, Slice, and for the
activation Sigmoid and Mul) that conform evaluates itself (reference/function_body.py) where the
prose's reading is missed.

The prose, written here from its own sentences (not through Conv): input (batch_size, channels,
length), weight "(channels, 1, k)", optional bias "(channels)", optional past_state "(batch_size,
channels, k - 1). If not provided, padding is zero." The effective sequence is past_state then
input along the causal axis; output[b, c, t] = Σ_j padded[b, c, t + j]·w[c, 0, j] + bias[c] (the
convolution "looks only at current and past positions", its output "with same shape as input"),
then the fused activation: 'silu' and 'swish' give y·sigmoid(y), 'none' y. present_state "Contains
the last (k - 1) values of the effective padded/concatenated sequence", exact.

Judging: output by the dot-product bound (matmul.py's `float_answer`, the bias its C); through the
activation, that bound times SiLU's largest slope (1.1: |d/dy y·σ(y)| ≤ 1.0998), SiLU's own error
(4 ULP of the accumulator, as Swish's budget in activation.py) and one rounding to the output
type. Exactly summable cases without activation are judged bitwise.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..bounds import ElementBound, Tier, accumulators, half_ulp
from ..case import Example
from ..precision import spacing
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, text_attribute
from .matmul import float_answer

INPUT = "input: Input tensor with shape (batch_size, channels, length). Channels-first layout."
WEIGHT = "weight: Depthwise convolution kernel with shape (channels, 1, k) where k is the kernel size."
BIAS = "bias: Optional per-channel bias with shape (channels)."
PAST = "past_state: Carry state from previous step with shape (batch_size, channels, k - 1). If not provided, padding is zero."
ACTIVATION = "activation: Fused activation function. One of: 'silu', 'swish', 'none'. Default is 'none'."
SILU_SLOPE = 1.1  # max |d/dy (y·σ(y))| ≈ 1.0998, at y ≈ 2.4
SILU_ULPS = 4.0
REASON = ("the dot product's bound (γ(k + [bias])·(Σ|x·w| + |b|), any order, each accumulator a runtime may use) carried "
          "through SiLU by its largest slope 1.1, SiLU's own 4 ULP in the accumulator and one rounding to the output type")


class CausalConvWithState27(VersionSemantics):
    """CausalConvWithState-27: past_state then input, a depthwise valid convolution, the activation."""

    since = 27

    def checked(self, example: Example):
        x, w = example.inputs["input"], example.inputs["weight"]
        bias, past = example.inputs.get("bias"), example.inputs.get("past_state")
        label = example.version.label
        if x.ndim != 3:
            return Invalid("input-rank", f"{label}: {INPUT}")
        batch, channels, _ = x.shape
        if w.ndim != 3 or w.shape[0] != channels or w.shape[1] != 1 or w.shape[2] < 1:
            return Invalid("weight-shape", f"{label}: {WEIGHT} (channels = {channels}, k at least 1)")
        k = w.shape[2]
        if bias is not None and tuple(bias.shape) != (channels,):
            return Invalid("bias-shape", f"{label}: {BIAS}")
        if past is not None and tuple(past.shape) != (batch, channels, k - 1):
            return Invalid("past-state-shape", f"{label}: {PAST}")
        activation = text_attribute(example, "activation", "none")
        if activation not in ("silu", "swish", "none"):
            return Invalid("activation", f"{label}: {ACTIVATION}")
        return x, w, bias, past, activation

    def expected(self, example: Example) -> Expected:
        found = self.checked(example)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        x, w, bias, past, activation = found
        batch, channels, length = x.shape
        k = w.shape[2]
        if past is None:
            past = np.zeros((batch, channels, k - 1), dtype=x.dtype)
        padded = np.concatenate([past, x], axis=2)
        present = padded[:, :, padded.shape[2] - (k - 1):]
        steps = np.arange(length)[:, None] + np.arange(k)[None, :]  # [length, k]: padded positions each output reads
        left = padded.astype(np.float64)[:, :, steps].reshape(-1, k)
        right = np.broadcast_to(w.astype(np.float64)[None, :, 0, None, :], (batch, channels, length, k)).reshape(-1, k)
        c = None
        if bias is not None:
            c = np.ascontiguousarray(np.broadcast_to(bias.astype(np.float64)[None, :, None], x.shape)).reshape(-1)
        out = np.dtype(x.dtype)
        dot = float_answer(left, right, x.shape, out, 1.0, 1.0, c)
        bound = replace(dot.budgets[0], formula="½ulp(y) + γ(k + [bias])·(Σ|x·w| + |b|)")
        reading = dot.readings[0]
        if activation != "none":
            precise, bound = silu(reading.precise[0], bound, out)
            with np.errstate(over="ignore", invalid="ignore"):
                reading = Reading((precise.astype(out),), precise=(precise,))
        return Expected(readings=(Reading(reading.outputs + (present,), reading.label, precise=(reading.precise[0], None)),),
                        budgets=(bound, None))


def silu(y: np.ndarray, bound: ElementBound, out: np.dtype) -> tuple[np.ndarray, ElementBound]:
    """y·σ(y) (as the body's Mul computes it: NaN at y = −inf) and the bound carried through it."""
    with np.errstate(over="ignore", invalid="ignore"):
        value = y / (1.0 + np.exp(-y))
        value = np.where(np.isposinf(y), np.inf, np.where(np.isneginf(y), np.nan, value))
    finite = np.where(np.isfinite(value), value, 0.0)
    tiers = []
    for tier, (label, accumulator) in zip(bound.tiers, accumulators(out)):
        allowed = SILU_SLOPE * tier.allowed + SILU_ULPS * spacing(finite, accumulator) + half_ulp(finite, out)
        tiers.append(Tier(label, allowed, tier.ksb, tier.non_finite))
    return value, ElementBound(tuple(tiers), "1.1·(½ulp(y) + γ(k + [bias])·(Σ|x·w| + |b|)) + 4ulp_acc(f) + ½ulp(f)", REASON)


# --- traits ---

def activation_fused(example: Example) -> bool:
    return text_attribute(example, "activation", "none") != "none"


def past_state_given(example: Example) -> bool:
    return example.inputs.get("past_state") is not None


def input_shorter_than_state(example: Example) -> bool:
    """An input shorter than k − 1: present_state holds values of past_state (or its zeros)."""
    x, w = example.inputs.get("input"), example.inputs.get("weight")
    return x is not None and w is not None and x.ndim == 3 and w.ndim == 3 and x.shape[2] < w.shape[2] - 1


def kernel_one(example: Example) -> bool:
    """k = 1: an empty state."""
    w = example.inputs.get("weight")
    return w is not None and w.ndim == 3 and w.shape[2] == 1


def non_finite_operand(example: Example) -> bool:
    return any(v is not None and v.size and not np.isfinite(v.astype(np.float64)).all() for v in example.inputs.values())


TRAITS = {"activation": activation_fused, "past-state": past_state_given, "input-shorter-than-state": input_shorter_than_state,
          "kernel-one": kernel_one, "non-finite-operand": non_finite_operand,
          "bias": lambda e: e.inputs.get("bias") is not None}

REFERENCE = OpReference(op="CausalConvWithState", dtype_param="T", semantics=(CausalConvWithState27,),
                        data_inputs=("input", "weight"), traits=TRAITS,
                        rules=("input-rank", "weight-shape", "bias-shape", "past-state-shape", "activation"))
