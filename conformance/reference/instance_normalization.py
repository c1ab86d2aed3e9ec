"""InstanceNormalization, versions 1, 6 and 22, from the schema text: `y = scale * (x - mean) /
sqrt(variance + epsilon) + B, where mean and variance are computed per instance per channel`.

No version has a function body; the prose names the mean and the variance of each instance's
channel (the values over D1 ... Dn), nothing of how they are computed. Judged by
reference/normalization.py's shared path: stage one (the two-pass variance, in any summation
order, in X's type or float32 for a 16-bit X: a tier each) and stage two (scale and B per
channel), plus the term of the folded form a·x + (B − mean·a) a runtime may use
(batch_normalization.folded_term). The one-pass E[X²] − E[X]² computes no variance where it
cancels (rows of large mean): a runtime that uses it fails there (trait `large-mean`).

Shapes: version 1's input is "The input 4-dimensional tensor of shape NCHW" (another rank may be
rejected); 6 and 22: "(N x C x D1 x D2 ... Dn)". A rank-2 input (N x C) has no spatial dim: each
instance's channel is one value, its variance 0 and y = B (with epsilon > 0); the form names at
least one D, so a runtime may reject it. Rank below 2 has no channel (rule `rank-below-2`); scale
and B are "1-dimensional ... of size C" (rule `parameter-shape`).
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics
from .batch_normalization import _compute_types, loosest, rounded, training_y

RANK = ("input: ... dimensions for image case are (N x C x H x W) ... For non image case, the dimensions are in the form "
        "of (N x C x D1 x D2 ... Dn), where N is the batch size. (a rank below 2 has no channel axis)")
SHAPE = "scale: The input 1-dimensional scale tensor of size C. B: The input 1-dimensional bias tensor of size C."
NO_SPATIAL = ("input: ... the dimensions are in the form of (N x C x D1 x D2 ... Dn): a rank-2 input has no D, and a "
              "runtime may reject it (each instance's channel is then one value: y = B)")
V1_RANK = "input: The input 4-dimensional tensor of shape NCHW. (another rank may be rejected)"
EMPTY = "an instance's channel of no values: its mean is undefined, and a runtime may reject the input"
FORMULA = "stage one's bound (two-pass variance, any order) through stage two, plus the folded form's u·|a|(|x| + |mean|)"
REASON = ("the error a correct implementation may show: a mean and a two-pass variance in any order per instance and "
          "channel (normalization.py), the root, the scale and B per channel, the text's order or the folded a·x + c")


class InstanceNormalization1(VersionSemantics):
    """InstanceNormalization-1 (6 and 22 differ only in the rank written and the types allowed)."""

    since = 1

    def expected(self, example: Example) -> Expected:
        x, scale, bias = example.inputs["input"], example.inputs["scale"], example.inputs["B"]
        if x.ndim < 2:
            return Expected(invalid=Invalid("rank-below-2", RANK))
        channels = x.shape[1]
        if scale.shape != (channels,) or bias.shape != (channels,):
            return Expected(invalid=Invalid("parameter-shape", f"{SHAPE} (shapes {list(scale.shape)}, {list(bias.shape)}, C = {channels})"))
        eps = float(np.float32(example.attributes.get("epsilon", 1e-5)))
        n = math.prod(x.shape[2:])
        with np.errstate(invalid="ignore"):
            rows = x.astype(np.longdouble).reshape(x.shape[0] * channels, n)
        per_channel = (1, channels) + (1,) * (x.ndim - 2)
        scale_rows, bias_rows = (np.broadcast_to(p.astype(np.float64).reshape(per_channel), x.shape).reshape(rows.shape)
                                 for p in (scale, bias))
        y, tiers, _ = training_y(rows, scale_rows, bias_rows, eps, x.dtype, _compute_types(x.dtype))
        y = y.reshape(x.shape)
        tiers = [type(t)(t.label, t.allowed.reshape(x.shape), t.ksb.reshape(x.shape)) for t in tiers]
        return Expected(readings=(Reading((rounded(y, x.dtype),), precise=(y,)),),
                        budgets=(loosest(tiers, FORMULA, REASON),), may_reject=self.may_reject(x, n))

    def may_reject(self, x: np.ndarray, n: int) -> str | None:
        if n == 0 and x.size == 0 and x.shape[0] * x.shape[1]:
            return EMPTY
        if x.ndim == 2:
            return NO_SPATIAL
        if type(self).since == 1 and x.ndim != 4:
            return V1_RANK
        return None


class InstanceNormalization6(InstanceNormalization1):
    """InstanceNormalization-6: any rank (N x C x D1 ... Dn); `consumed_inputs` gone."""

    since = 6


class InstanceNormalization22(InstanceNormalization6):
    """InstanceNormalization-22: bfloat16 allowed."""

    since = 22


def instance_rows(example: Example) -> np.ndarray | None:
    x = example.inputs.get("input")
    if x is None or x.ndim < 2 or not x.size:
        return None
    return x.astype(np.float64).reshape(x.shape[0] * x.shape[1], -1)


def large_mean(example: Example) -> bool:
    """An instance's channel whose mean is over 100 times its spread: E[X²] − E[X]² cancels there."""
    rows = instance_rows(example)
    if rows is None or rows.shape[1] < 2:
        return False
    with np.errstate(all="ignore"):
        mean, spread = rows.mean(axis=1), rows.std(axis=1)
    return bool(np.any(np.isfinite(mean) & (np.abs(mean) > 100 * spread) & (mean != 0)))


def constant_channel(example: Example) -> bool:
    """An instance's channel of equal values (variance 0: y is B)."""
    rows = instance_rows(example)
    return rows is not None and bool(np.any(np.isfinite(rows).all(axis=1) & (rows == rows[:, :1]).all(axis=1)))


def rank_two(example: Example) -> bool:
    x = example.inputs.get("input")
    return x is not None and x.ndim == 2


def half_data(example: Example) -> bool:
    x = example.inputs.get("input")
    return x is not None and x.dtype.itemsize == 2


def non_finite_input(example: Example) -> bool:
    x = example.inputs.get("input")
    return x is not None and bool((~np.isfinite(x.astype(np.float64))).any())


REFERENCES = (
    OpReference(op="InstanceNormalization", dtype_param="T",
                semantics=(InstanceNormalization1, InstanceNormalization6, InstanceNormalization22), data_inputs=("input",),
                traits={"large-mean": large_mean, "constant-channel": constant_channel, "rank-two": rank_two,
                        "half-data": half_data, "non-finite": non_finite_input},
                rules=("rank-below-2", "parameter-shape")),
)
