"""SwiGLU (version 28), from the schema text in onnx.defs: "Y = Swish_alpha(A) * B", where
"Swish_alpha(a) = a * Sigmoid(alpha * a)", and "Inputs `A` and `B` must have identical shapes;
broadcasting is not applied". Its function body is Swish then Mul, which conform evaluates itself
(reference/function_body.py) where the prose's reading is missed.

Judging: per element, Swish within its own budget (reference/activation.py: 4 ULP for float and
double, 2 ULP for 16-bit types computed node by node) in the accumulator a runtime computes in,
times |b|, then the product's rounding there and the rounding to the output type:

    |ŷ − y| ≤ swish_ulps·ulp_acc(s)·|b|·(1 + u_acc) + u_acc·|y| + ½·ulp_out(y)

with a tier for a 16-bit type computed in float32 (one rounding at the end) and one in its own type.

Where the text's formula meets inf·0 (A = −inf with alpha > 0, or +inf with alpha < 0: Swish's
limit 0 against IEEE's NaN; a zero Swish times an infinite B): Swish's two readings (its limit, as
Swish's reference names it, and IEEE NaN) carried through the product, which IEEE fixes.
"""

from __future__ import annotations

import numpy as np

from ..bounds import ElementBound, Tier, accumulators, unit_roundoff
from ..case import Example
from ..precision import FLOAT64_REFERENCE_SLACK, spacing
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings

SHAPES = "Inputs `A` and `B` must have identical shapes; broadcasting is not applied"
FORMULA = "Y = Swish_alpha(A) * B, Swish_alpha(a) = a * Sigmoid(alpha * a)"
SWISH_ULPS = {"float32": 4.0, "float64": 4.0, "own16": 2.0}
REASON = ("Swish within its own budget (4 ULP; 2 for a 16-bit type node by node) times |b|, the product rounded in "
          "the accumulator and then to the output type")
LIMIT = "Swish at an infinite gate is its limit (0 where sigmoid(alpha·a) tends to 0)"
IEEE_NAN = "inf · 0 is NaN (IEEE 754), as the formula computes it"
AMBIGUITY = "the text does not say what a·Sigmoid(alpha·a) is where a is infinite and the sigmoid is 0"


def alpha_of(example: Example) -> float:
    """The float attribute alpha (default 1.0), as float32 holds it."""
    return float(np.float32(example.attributes.get("alpha", 1.0)))


def swish(a: np.ndarray, alpha: float, limit: bool) -> np.ndarray:
    """a·sigmoid(alpha·a) in float64; at inf·0 the limit 0 (`limit`) or NaN."""
    with np.errstate(all="ignore"):
        z = alpha * a
        sigmoid = np.where(z >= 0, 1.0 / (1.0 + np.exp(-z)), np.exp(z) / (1.0 + np.exp(z)))
        sigmoid = np.where(np.isneginf(z), 0.0, np.where(np.isposinf(z), 1.0, sigmoid))
        value = a * sigmoid
    meets = np.isinf(a) & (sigmoid == 0)
    return np.where(meets, 0.0 if limit else np.nan, value)


class SwiGLU28(VersionSemantics):
    """Version 28: the gate's Swish times B, element by element, shapes identical."""

    since = 28

    def expected(self, example: Example) -> Expected:
        a, b = example.inputs["A"], example.inputs["B"]
        if a.shape != b.shape:
            return Expected(invalid=Invalid("shape-mismatch", SHAPES))
        out = np.dtype(a.dtype)
        alpha = alpha_of(example)
        with np.errstate(all="ignore"):
            wa, wb = a.astype(np.float64), b.astype(np.float64)
            options = [(label, swish(wa, alpha, limit) * wb) for label, limit in ((LIMIT, True), (IEEE_NAN, False))]
        bound = _bound(swish(wa, alpha, True), wb, options[0][1], out)
        with np.errstate(all="ignore"):  # a product past the type's max rounds to inf
            found = readings([Reading((values.astype(out),), label, precise=(values,)) for label, values in options], AMBIGUITY)
        if len(found.readings) == 1:
            return Expected(readings=(Reading(found.readings[0].outputs, precise=found.readings[0].precise),), budgets=(bound,))
        return Expected(readings=found.readings, ambiguity=found.ambiguity, budgets=(bound,))


def _bound(s: np.ndarray, b: np.ndarray, y: np.ndarray, out: np.dtype) -> ElementBound:
    """The per-element bound of the module's docstring, a tier per accumulator."""
    tiers = []
    with np.errstate(all="ignore"):
        finite_s = np.where(np.isfinite(s), s, 0.0)
        finite_y = np.where(np.isfinite(y), y, 0.0)
        finite_b = np.where(np.isfinite(b), np.abs(b), 0.0)
        half = 0.5 * spacing(finite_y, out)
        if out == np.float64:
            half = half + FLOAT64_REFERENCE_SLACK * spacing(finite_y, out)
        for label, acc in accumulators(out):
            u = unit_roundoff(acc)
            ulps = SWISH_ULPS["own16"] if acc.itemsize == 2 else SWISH_ULPS["float64" if acc == np.float64 else "float32"]
            gate = ulps * spacing(finite_s, acc) * finite_b * (1 + u)
            product = u * np.abs(finite_y) if acc != out else 0.0  # a wider accumulator rounds once more at the end
            allowed = np.where(np.isfinite(y), gate + product + half, 0.0)
            tiers.append(Tier(label, allowed, np.ones(y.shape)))
    return ElementBound(tuple(tiers), "swish_ulps·ulp(s)·|b| + u·|y| + ½ ulp(y)", REASON)


def gate_infinite(example: Example) -> bool:
    """An infinite gate value where the text's inf·0 question arises."""
    a = example.inputs.get("A")
    return a is not None and bool(np.isinf(a.astype(np.float64)).any())


def nan_in_data(example: Example) -> bool:
    return any(x is not None and bool(np.isnan(x.astype(np.float64)).any()) for x in example.inputs.values())


def alpha_not_one(example: Example) -> bool:
    return alpha_of(example) != 1.0


REFERENCE = OpReference(
    op="SwiGLU", dtype_param="T", data_inputs=("A", "B"), semantics=(SwiGLU28,),
    traits={"gate-infinite": gate_infinite, "nan-in-data": nan_in_data, "alpha-not-one": alpha_not_one},
    rules=("shape-mismatch",))
