"""Activations: Relu, LeakyRelu, PRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid, HardSwish,
Softplus, Softsign, Tanh, ThresholdedRelu, Gelu, Mish, Shrink, Swish (declarations of the element-wise family).

The formulas are the texts' own, evaluated where cancellation would spoil float64 in the
mathematically equal form that does not cancel (exp(x) - 1 as expm1, 1 + erf(-u) as erfc(u)):
the precise value is the function's, not one evaluation order's. Where an IEEE evaluation of the
text's formula and the function's value part (inf * 0 at -inf, inf / inf), both are readings.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

import ml_dtypes
import numpy as np

from ..case import Example
from ..precision import COMPOSITE, Budget
from . import broadcast as bc
from .base import Invalid
from .elementwise import Attribute, Context, Elementwise

NAN_IN_RELU = "Relu's text, y = max(0, x), does not say what a NaN input gives"
NAN_IN_CLAMP = "HardSigmoid's text, y = max(0, min(1, alpha * x + beta)), does not say what a NaN input gives"
NAN_OTHERWISE = ("the text's 'otherwise' branch covers NaN literally (NaN compares false), "
                 "but a NaN input may also propagate")
INF_TIMES_ZERO = ("at an infinite input the text's formula evaluated in IEEE arithmetic meets inf * 0 or inf / inf (NaN), "
                  "while the function's limit there is finite")
NAN_PROPAGATES = "NaN propagates"
LIMIT = "the function's limit at +-inf"
IEEE_NAN = "NaN (the formula evaluated in IEEE arithmetic: inf * 0 or inf / inf)"

# Budgets: measured with a throw-away script feeding numpy's float32/float16 functions and
# onnxruntime 1.31 (CPU) ~100k inputs over all binades, against the float64 value; each reason
# gives the figure a correct evaluation met and the sources (../shared/PRECISION.md) behind it.
# No library documents a bound for these composite functions; each is judged by the composite
# wrong-answer line (precision.py), Tanh, one library call, by the elementary one.


def _budget(ulps: float, reason: str) -> Budget:
    return Budget(ulps, reason, kind=COMPOSITE)


SIXTEEN_BITS = _budget(2, "a 16-bit T computed in float32 and rounded once is within 0.5 ULP + 2^-13 ULP per float32 "
                          "ULP (measured: numpy and onnxruntime float16 <= 0.7); computed per operation in T, as "
                          "numpy's float16 arithmetic does, several roundings add up (measured: Sigmoid 1.76, "
                          "Softsign 1.42); WebNN allows fp16 sigmoid 3 ULP, exp 1 ULP: 2 ULP")


def _accuracy(ulps: float, measured: str, source: str) -> dict:
    """The budgets of a function an IEEE implementation cannot round correctly: `ulps` for float
    and double (a double's precise value from mpmath), SIXTEEN_BITS for 16-bit types."""
    reason = (f"{ulps:g} ULP: a correct float32 evaluation (numpy's float32 functions in a form that does not "
              f"cancel) measured {measured} over 100k values in all binades; {source}")
    return {"budget": _budget(ulps, reason), "budgets": {"float16": SIXTEEN_BITS, "bfloat16": SIXTEEN_BITS}}


def _wide(context: Context) -> np.ndarray:
    """The first input as float64 (a NaN of any float type cast quietly)."""
    with np.errstate(invalid="ignore"):
        return context.arrays[0].astype(np.float64)


def _nan_mask(context: Context) -> np.ndarray:
    x = context.arrays[0]
    return np.isnan(_wide(context)) if context.dt.kind == "float" else np.zeros(x.shape, dtype=bool)


def _nan_replaced(context: Context, first: np.ndarray, value: float, label: str) -> list[tuple[str, np.ndarray]]:
    """The reading `label`: `first` with `value` where the input is NaN; none when no input is."""
    nan = _nan_mask(context)
    if not nan.any():
        return []
    replaced = first.copy()
    replaced[nan] = value
    return [(label, replaced)]


def _nan_becomes(*values: float) -> Callable[[Context, np.ndarray], list[tuple[str, np.ndarray]]]:
    """Readings where a NaN input gives one of `values` (a max/min that picks its other operand)."""

    def alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
        return [reading for value in values for reading in _nan_replaced(
            context, first, value, f"NaN gives {value:g} (max/min pick the other operand when the comparison with NaN is false)")]

    return alternatives


def _nan_propagates(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """A NaN input giving NaN, beside the 'otherwise' branch's value the spec reading gives it."""
    return _nan_replaced(context, first, np.nan, NAN_PROPAGATES)


def _ieee_nan_at_infinity(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """NaN where an infinite input meets inf * 0 or inf / inf in the formula (see `_limit_points`)."""
    points = _limit_points(context)
    if not points.any():
        return []
    nan = first.copy()
    nan[points] = np.nan
    return [(IEEE_NAN, nan)]


def _limit_points(context: Context) -> np.ndarray:
    """The elements whose formula meets inf * 0 or inf / inf: -inf for HardSwish, Gelu and Mish,
    +-inf for Softsign."""
    x = _wide(context)
    if context.example.op == "Softsign":
        return np.isinf(x)
    return np.isneginf(x)


def _piecewise(condition: np.ndarray, then: np.ndarray, otherwise: np.ndarray) -> np.ndarray:
    return np.where(condition, then, otherwise)


def _ints(values: list[Any], like: np.ndarray) -> np.ndarray:
    return np.array(values, dtype=object).reshape(like.shape)


# --- traits: causes of known deviations, for expectations files (functions of the Example) -------


def _first_input(example: Example) -> np.ndarray:
    """The data input as float64 (NaN of any float type cast quietly)."""
    name = example.node_inputs[0]
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(example.inputs[name]).astype(np.float64)


def _attribute(example: Example, name: str) -> float:
    found = example.attributes.get(name)
    if found is None:
        found = next((a.default for a in example.version.attributes if a.name == name), None)
    return float(np.float32(found))


def _any_in(example: Example, low: float, high: float, scale: str | None = None) -> bool:
    """Whether a float input holds an element in the open interval (low, high), after dividing by
    attribute `scale` (Celu's x / alpha)."""
    if example.dtype not in ("float", "double", "float16", "bfloat16"):
        return False
    x = _first_input(example)
    if scale is not None:
        with np.errstate(all="ignore"):
            x = x / _attribute(example, scale)
    return bool(((x > low) & (x < high)).any())


def exp_minus_one_cancels(example: Example) -> bool:
    """An element x in (-1, 0) (Celu: x / alpha in (-1, 0) or (0, 1), either sign of alpha): exp(x) - 1
    evaluated as written cancels."""
    if example.op == "Celu":
        return _any_in(example, -1.0, 0.0, "alpha") or _any_in(example, 0.0, 1.0, "alpha")
    return _any_in(example, -1.0, 0.0)


def negative_input_below(limit: float) -> Callable[[Example], bool]:
    """A float element below `limit` (finite or -inf)."""
    return lambda example: _any_in(example, -np.inf, limit) or bool(np.isneginf(_first_input(example)).any())


def positive_input_above(limit: float) -> Callable[[Example], bool]:
    """A float element above `limit` (finite or +inf): a clamped approximation's upper tail."""
    return lambda example: _any_in(example, limit, np.inf) or bool(np.isposinf(_first_input(example)).any())


def finite_nonzero_input(example: Example) -> bool:
    """A finite, nonzero float element (where an approximation's error shows)."""
    return _any_in(example, -np.inf, 0.0) or _any_in(example, 0.0, np.inf)


def _finite_input(example: Example) -> np.ndarray:
    """The data input's finite elements as float64; none for a type that is not float."""
    if example.dtype not in ("float", "double", "float16", "bfloat16"):
        return np.zeros(0)
    x = _first_input(example).reshape(-1)
    return x[np.isfinite(x)]


def _rounds_to_one(values: np.ndarray, example: Example) -> bool:
    """Whether any of these float64 values in (0, 1] is 1 once rounded to the example's type."""
    from ..dtypes import dtype
    from .elementwise import round_to

    # round_to, not astype: ml_dtypes rounds float64 to bfloat16 through float32, twice.
    rounded = round_to(np.asarray(values, dtype=np.float64), dtype(example.dtype)).astype(np.float64)
    return bool((rounded == 1.0).any())


def exp_overflows(example: Example) -> bool:
    """A finite element whose exp is beyond the type's largest value: ln(exp(x) + 1) evaluated as
    written gives inf where the text's value is x."""
    import ml_dtypes

    from ..dtypes import dtype

    x = _finite_input(example)
    return x.size > 0 and bool((x > math.log(float(ml_dtypes.finfo(dtype(example.dtype).np_dtype).max))).any())


def tanh_saturates(example: Example) -> bool:
    """A finite element x whose tanh(softplus(x)) rounds to 1 in the type (x above 9 in float): a
    clamped tanh approximation falls a few ULP short of 1 there, and so Mish(x) short of x."""
    x = _finite_input(example)
    with np.errstate(all="ignore"):
        return _rounds_to_one(np.tanh(np.logaddexp(0.0, x[x > 0])), example)


def quotient_rounds_to_one(example: Example) -> bool:
    """A finite element whose |x| / (1 + |x|) rounds to 1 in the type (|x| of 2048 and more in
    float16): computed through a reciprocal, the quotient may land above 1."""
    x = np.abs(_finite_input(example))
    return _rounds_to_one(x / (1.0 + x), example)


def unsigned_negative_bias(example: Example) -> bool:
    """Shrink on an unsigned type with a negative bias: x - bias adds |bias| to x."""
    return example.dtype.startswith("uint") and _attribute(example, "bias") < 0


def default_constant(example: Example) -> bool:
    """Selu with alpha or gamma left out: the text's defaults (1.67326319..., 1.05070102...) are
    what a runtime holding them to fewer digits misses."""
    return example.attributes.get("alpha") is None or example.attributes.get("gamma") is None


def outer_alpha_counts(example: Example) -> bool:
    """Celu with alpha other than 1 and an element where min(0, alpha * (exp(x / alpha) - 1)) is
    not min(0, exp(x / alpha) - 1): x / alpha below 0, or with a negative alpha any nonzero x (NaN
    aside). A runtime that drops the outer alpha deviates there."""
    alpha = _attribute(example, "alpha")
    if alpha in (0.0, 1.0) or example.dtype not in ("float", "double", "float16", "bfloat16"):
        return False
    x = _first_input(example)
    with np.errstate(all="ignore"):
        return bool((x / alpha < 0).any() or (alpha < 0 and ((x != 0) & ~np.isnan(x)).any()))


def gelu_tanh_form(example: Example) -> bool:
    """Gelu with approximate = "tanh" on a finite, nonzero element."""
    return _approximation(example.attributes.get("approximate") or "none") == "tanh" and finite_nonzero_input(example)


def shrink_beyond_float32(example: Example) -> bool:
    """Shrink on a double or integer tensor where computing in float32 changes the result: an
    element, or x +- bias, that float32 does not hold exactly."""
    if example.dtype in ("float", "float16"):
        return False
    name = example.node_inputs[0]
    values = [int(v) if example.dtype != "double" else float(v) for v in np.asarray(example.inputs[name]).reshape(-1)]
    lambd, bias = _attribute(example, "lambd"), _attribute(example, "bias")
    for v in values:
        if not math.isfinite(v):
            continue
        if float(np.float32(v)) != v:
            return True
        shifted = v + bias if v < -lambd else v - bias if v > lambd else 0
        if math.isfinite(shifted) and float(np.float32(shifted)) != shifted:
            return True
    return False


# --- Relu ---------------------------------------------------------------------------------------


def _relu_nan(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """max(0, NaN): NaN propagates (the spec reading above) or the comparison picks 0."""
    return _nan_replaced(context, first, 0, "NaN gives 0 (max picks 0 when the comparison with NaN is false)")


RELU = Elementwise(
    op="Relu",
    real=lambda x: np.where(np.isnan(x), x, np.maximum(x, 0.0)),
    integer=lambda x: np.array([max(v, 0) for v in x.reshape(-1)], dtype=object).reshape(x.shape),
    alternatives=_relu_nan,
    ambiguity=NAN_IN_RELU,
    label="NaN propagates",
)

# --- LeakyRelu, PRelu, ThresholdedRelu, Shrink: selections and one rounded operation ------------

# alpha is a FLOAT attribute and x may be float16/bfloat16: alpha * x computed in float32 and then
# rounded to T rounds twice, and alpha converted to T first is off by up to half an ULP of alpha,
# which is up to one ULP of the product (x's mantissa near 2, the product's below 2).
ATTRIBUTE_IN_16_BITS = _budget(1.5, "alpha * x with alpha a FLOAT attribute: float32 and float64 outputs are one IEEE "
                                    "multiply, correctly rounded (judged exactly); a 16-bit output computed in float32 "
                                    "then rounded rounds twice (<= 0.5 ULP + 2^-13 ULP); a native kernel with alpha "
                                    "rounded to T first is off by < 1 ULP before the product's rounding (measured: "
                                    "onnxruntime float16 0.5, numpy float16 with alpha in float16 1.05): 1.5 ULP")

LEAKY_RELU = Elementwise(
    op="LeakyRelu",
    real=lambda x, alpha: _piecewise(x < 0, np.float64(np.float32(alpha)) * x, x),
    attributes=(Attribute("alpha", (0.1, 0.5, 2.0, -0.25, 1.0)),),
    budgets={"float16": ATTRIBUTE_IN_16_BITS, "bfloat16": ATTRIBUTE_IN_16_BITS},
)

PRELU_SHARED = "PRelu-1/6: slope: If `Slope` is of size 1, the value is shared across different channels (else: X's shape)"


def _prelu_old_slope(context: Context) -> Invalid | None:
    """PRelu-1/6 give no broadcasting: slope is X's shape, or of size 1 and shared."""
    if context.since >= 7:
        return None
    x, slope = (context.example.inputs[name] for name in context.example.node_inputs[:2])
    if slope.shape == x.shape or slope.size == 1:
        return None
    return Invalid(bc.NOT_BROADCASTABLE, PRELU_SHARED)


def slope_on_channel_axis(example: Example) -> bool:
    """PRelu with a 1-D slope of a size other than 1 and an X of rank 3 or more: the text broadcasts
    it against X's trailing dim; a runtime that takes a 1-D slope as per-channel places it on axis 1
    (and refuses it where that dim differs)."""
    x, slope = (np.asarray(example.inputs[name]) for name in example.node_inputs[:2])
    return slope.ndim == 1 and slope.size != 1 and x.ndim >= 3


def integer_product_beyond_type(example: Example) -> bool:
    """PRelu on integers with a negative x whose product with its slope is beyond the type's range:
    the text is silent on the overflow (its readings wrap or saturate); a runtime computing through
    float and converting back gives the x86 integer indefinite (int32 -2**31)."""
    x, slope = (np.asarray(example.inputs[name]) for name in example.node_inputs[:2])
    if x.dtype.kind not in "iu":
        return False
    try:
        x, slope = np.broadcast_arrays(x, slope)
    except ValueError:
        return False
    info = np.iinfo(x.dtype)
    products = [int(v) * int(s) for v, s in zip(x.reshape(-1).tolist(), slope.reshape(-1).tolist()) if v < 0]
    return any(not info.min <= p <= info.max for p in products)


PRELU = Elementwise(
    op="PRelu",
    real=lambda x, slope: _piecewise(x < 0, slope * x, x),
    integer=lambda x, slope: _ints([s * v if v < 0 else v for v, s in zip(x.reshape(-1), slope.reshape(-1))], x),
    broadcasting={1: bc.UNIDIRECTIONAL},  # 1 and 6: X's shape or size 1, which `invalid` decides
    invalid=_prelu_old_slope,
    traits={"slope-on-channel-axis": slope_on_channel_axis, "integer-product-beyond-type": integer_product_beyond_type},
)

def minus_infinity_input(example: Example) -> bool:
    """A -inf input: below any alpha, so the text gives 0; a runtime computing x * (x > alpha)
    gives -inf * 0, NaN."""
    return bool(np.isneginf(example.inputs[example.node_inputs[0]].astype(np.float64)).any())


def alpha_beyond_type(example: Example) -> bool:
    """ThresholdedRelu with an `alpha` beyond the largest finite value of X's type (1e30 for
    float16): the text compares x > alpha; a runtime building alpha as a constant of X's type
    refuses it (or the body's CastLike makes it inf)."""
    try:
        largest = float(ml_dtypes.finfo(np.dtype(example.inputs[example.node_inputs[0]].dtype)).max)
    except ValueError:  # an integer X (a case of a dtype the version does not allow): no such alpha
        return False
    alpha = abs(_attribute(example, "alpha"))
    return math.isfinite(alpha) and alpha > largest


def infinite_input(example: Example) -> bool:
    """A +-inf element (Shrink, Gelu): the text gives an infinity (Shrink's x + bias, Gelu's x); a
    runtime computing through a product with a 0/1 mask, or an approximation of erf, gives
    inf * 0, NaN."""
    x = np.asarray(example.inputs[example.node_inputs[0]])
    if x.dtype.kind in "biu":
        return False
    return bool(np.isinf(x.astype(np.float64)).any())


def alpha_inexact_in_type(example: Example) -> bool:
    """A 16-bit float X and an `alpha` (as its FLOAT attribute holds it) that X's type does not hold
    exactly (HardSigmoid's default 0.2 in float16): a runtime that rounds alpha to X's type before
    multiplying computes with another alpha than the text's."""
    x = example.inputs[example.node_inputs[0]]
    if example.dtype not in ("float16", "bfloat16"):
        return False
    alpha = _attribute(example, "alpha")
    return bool(np.isfinite(alpha)) and float(np.asarray(alpha).astype(x.dtype)) != alpha


def zero_beta(example: Example) -> bool:
    """HardSigmoid with `beta` given as 0 (its default is 0.5): a runtime that takes an attribute of
    0 for one left out computes with 0.5."""
    return float(example.attributes.get("beta", 0.5)) == 0.0


THRESHOLDED_RELU = Elementwise(
    op="ThresholdedRelu",
    real=lambda x, alpha: _piecewise(x > np.float64(np.float32(alpha)), x, 0.0),
    attributes=(Attribute("alpha", (0.0, -1.0, 0.5, 2.0, 1e30)),),
    alternatives=_nan_propagates,
    ambiguity=NAN_OTHERWISE,
    label="NaN gives 0 (otherwise)",
    traits={"minus-infinity-input": minus_infinity_input, "alpha-beyond-type": alpha_beyond_type},
)


def _shrink_real(x: np.ndarray, lambd: float, bias: float) -> np.ndarray:
    lambd, bias = float(np.float32(lambd)), float(np.float32(bias))
    return np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0.0))


def _shrink_integer(x: np.ndarray, lambd: float, bias: float) -> np.ndarray:
    """Exact: x compared with the float lambd as rationals; x +- bias truncated toward zero where
    bias is fractional (the other roundings are `_shrink_roundings`)."""
    lambd, bias = Fraction(float(np.float32(lambd))), Fraction(float(np.float32(bias)))
    out = []
    for v in x.reshape(-1):
        if v < -lambd:
            out.append(math.trunc(v + bias))
        elif v > lambd:
            out.append(math.trunc(v - bias))
        else:
            out.append(0)
    return _ints(out, x)


SHRINK_ROUNDING = "Shrink's text does not say how x +- bias is made an integer of T where bias is fractional"


def _shrink_alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """NaN propagating for floats; for integers with a fractional bias, x +- bias rounded to
    nearest (even) or bias truncated into T first."""
    if context.dt.kind == "float":
        return _nan_propagates(context, first)
    lambd = Fraction(float(np.float32(context.attributes.get("lambd", 0.5))))
    bias = Fraction(float(np.float32(context.attributes.get("bias", 0.0))))
    if bias.denominator == 1:
        return []
    x = [int(v) for v in context.arrays[0].reshape(-1)]
    low, high = int(context.out.lowest), int(context.out.max)
    found = []
    for label, shift in (("x +- bias rounded to nearest even", lambda v, b: round(v + b)),
                         ("bias truncated into T first", lambda v, b: v + math.trunc(b))):
        values = [shift(v, bias) if v < -lambd else shift(v, -bias) if v > lambd else 0 for v in x]
        if all(low <= v <= high for v in values):
            found.append((label, np.array(values, dtype=first.dtype).reshape(first.shape)))
    return found


SHRINK = Elementwise(
    op="Shrink",
    real=_shrink_real,
    integer=_shrink_integer,
    attributes=(Attribute("lambd", (0.0, 1.0, 2.5, 100.0)), Attribute("bias", (0.5, 1.0, -2.0, 3.0))),
    alternatives=_shrink_alternatives,
    ambiguity=f"{NAN_OTHERWISE}; {SHRINK_ROUNDING}",
    label="spec",
    traits={"beyond-float32": shrink_beyond_float32, "unsigned-negative-bias": unsigned_negative_bias,
            "infinite-input": infinite_input},
)

# --- HardSigmoid, HardSwish: a clamped affine function ------------------------------------------
# The text writes alpha * x + beta as one real expression: rounded once it is what a fused
# multiply-add gives (the spec reading); as two IEEE operations (multiply, round, add, round) it
# differs where the sum cancels near the clamp at 0, by thousands of ULP of the small result. Both
# are readings, each judged exactly for float and double; a 16-bit T gets SIXTEEN_BITS.

EVALUATION_ORDER = ("the text writes alpha * x + beta as one real expression: rounded once (fused multiply-add) or as "
                    "two rounded IEEE operations, which differ where the sum cancels near the clamp at 0")


def _working(context: Context) -> type:
    """The arithmetic an implementation computes T in: T itself, float32 for 16-bit types."""
    return np.float64 if context.out.name == "double" else np.float32


def _clamp01(values: np.ndarray) -> np.ndarray:
    zero, one = values.dtype.type(0), values.dtype.type(1)
    return np.where(np.isnan(values), values, np.maximum(zero, np.minimum(one, values)))


def _in_t(context: Context, values: np.ndarray) -> np.ndarray:
    from .elementwise import round_to

    return round_to(values.astype(np.float64), context.out)


def _hard_sigmoid(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    alpha, beta = float(np.float32(alpha)), float(np.float32(beta))
    return np.maximum(0.0, np.minimum(1.0, alpha * x + beta))


def _clamped01(value: Fraction) -> Fraction:
    return min(max(value, Fraction(0)), Fraction(1))


def _hard_sigmoid_exact(x: Fraction, alpha: float, beta: float) -> Fraction:
    """max(0, min(1, alpha * x + beta)) exactly, alpha and beta as their FLOAT attributes hold them:
    rounded once, it is what a fused multiply-add gives (float64 rounds the product, then the sum)."""
    return _clamped01(Fraction(float(np.float32(alpha))) * x + Fraction(float(np.float32(beta))))


def _fused_in(work: type, a: np.ndarray, x: np.ndarray, b: float) -> np.ndarray:
    """a * x + b rounded once to the working type (a fused multiply-add), element by element,
    exactly; a special operand gives the IEEE result."""
    from ..dtypes import from_numpy
    from .conversion import exact_to_float

    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    exact = [Fraction(p) * Fraction(q) + Fraction(b) if math.isfinite(p) and math.isfinite(q) else p * q + b
             for p, q in zip(a.reshape(-1).tolist(), x.reshape(-1).tolist())]
    return exact_to_float(exact, from_numpy(np.dtype(work))).reshape(x.shape)


def _hard_sigmoid_alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """NaN readings (max/min picking the other operand), and alpha * x + beta as two rounded operations."""
    found = _nan_becomes(0.0, 1.0)(context, first)
    work = _working(context)
    alpha, beta = work(np.float32(context.attributes["alpha"])), work(np.float32(context.attributes["beta"]))
    with np.errstate(all="ignore"):
        x = context.arrays[0].astype(work)
        found.append(("alpha * x + beta as two rounded operations", _in_t(context, _clamp01(alpha * x + beta))))
    return found


HARD_SIGMOID = Elementwise(
    op="HardSigmoid",
    real=_hard_sigmoid,
    exact=_hard_sigmoid_exact,
    attributes=(Attribute("alpha", (0.5, 1.0, -0.2, 2.0)), Attribute("beta", (0.0, 0.25, 1.0, -0.5))),
    alternatives=_hard_sigmoid_alternatives,
    ambiguity=f"{NAN_IN_CLAMP}; {EVALUATION_ORDER}",
    label="rounded once (fused), NaN propagates",
    budgets={"float16": SIXTEEN_BITS, "bfloat16": SIXTEEN_BITS},
    traits={"zero-beta": zero_beta, "alpha-inexact-in-type": alpha_inexact_in_type},
)


def _hard_swish(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(np.isneginf(x), 0.0, x * np.maximum(0.0, np.minimum(1.0, x / 6.0 + 0.5)))


def _hard_swish_exact(x: Fraction) -> Fraction:
    """x * max(0, min(1, x / 6 + 1/2)) exactly: float64 rounds x / 6, the sum and the product,
    which puts a float subnormal's x/2 + x^2/6 on a false tie."""
    return x * _clamped01(x / 6 + Fraction(1, 2))


def _hard_swish_alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """Evaluation orders of x * max(0, min(1, x/6 + 0.5)) in T's arithmetic (float32 for 16-bit
    types), and NaN at -inf (-inf * 0)."""
    found = _ieee_nan_at_infinity(context, first)
    work = _working(context)
    with np.errstate(invalid="ignore"):
        x = context.arrays[0].astype(work)
    sixth, half, three, six = work(1 / 6), work(0.5), work(3), work(6)
    sixth32 = work(np.float32(1 / 6))  # HardSigmoid<alpha=1/6> with alpha a FLOAT attribute
    with np.errstate(all="ignore"):
        fused = _fused_in(work, np.float32(1 / 6), x, 0.5)
        orders = (
            ("x * HardSigmoid(x): x / 6 + 0.5 rounded per operation", x * _clamp01(x / six + half)),
            ("x * HardSigmoid(x): x * (1/6) + 0.5 rounded per operation", x * _clamp01(x * sixth + half)),
            ("x * HardSigmoid<alpha=float32(1/6)>(x), rounded per operation", x * _clamp01(x * sixth32 + half)),
            ("x * HardSigmoid<alpha=float32(1/6)>(x), fused multiply-add", x * _clamp01(fused.astype(work))),
            ("x * relu6(x + 3) / 6", x * np.minimum(np.maximum(x + three, work(0)), six) / six),
        )
        for label, values in orders:
            at_limit = _in_t(context, np.where(np.isneginf(x), first.astype(work), values))
            found.append((label, at_limit))
            found += [(f"{label}; {nan_label}", nan) for nan_label, nan in _ieee_nan_at_infinity(context, at_limit)]
    return found


HARD_SWISH = Elementwise(
    op="HardSwish",
    real=_hard_swish,
    exact=_hard_swish_exact,
    alternatives=_hard_swish_alternatives,
    ambiguity=f"{INF_TIMES_ZERO}; the text gives the real function, whose evaluation orders in IEEE arithmetic differ "
              "where x/6 + 0.5 cancels near x = -3",
    label=f"{LIMIT}, rounded once",
    budgets={"float16": SIXTEEN_BITS, "bfloat16": SIXTEEN_BITS},
    traits={"finite-nonzero-input": finite_nonzero_input},
)

# --- exponential family -------------------------------------------------------------------------


def _elu(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x < 0, float(np.float32(alpha)) * np.expm1(x), x)


def _elu_mp(x, alpha):
    import mpmath

    return float(np.float32(alpha)) * mpmath.expm1(x) if x < 0 else x


ELU = Elementwise(
    op="Elu",
    real=_elu,
    precise64=_elu_mp,
    attributes=(Attribute("alpha", (0.5, 2.0, 0.0, -1.0)),),
    **_accuracy(2, "1.99 ULP (alpha * expm1(x), two roundings)",
                "TOSA exp: 3 ULP-equivalent ABS_ERROR, WebNN exp 32 ULP; expm1 and one multiply support 2"),
    traits={"exp-minus-one-cancels": exp_minus_one_cancels},
)


def _selu(x: np.ndarray, alpha: float, gamma: float) -> np.ndarray:
    alpha, gamma = float(np.float32(alpha)), float(np.float32(gamma))
    return np.where(x <= 0, gamma * (alpha * np.expm1(x)), gamma * x)


def _selu_mp(x, alpha, gamma):
    import mpmath

    alpha, gamma = mpmath.mpf(float(np.float32(alpha))), mpmath.mpf(float(np.float32(gamma)))
    return gamma * alpha * mpmath.expm1(x) if x <= 0 else gamma * x


SELU = Elementwise(
    op="Selu",
    real=_selu,
    precise64=_selu_mp,
    attributes=(Attribute("alpha", (1.0, 2.0, 0.5)), Attribute("gamma", (1.0, 2.0, 0.5))),
    **_accuracy(3, "2.59 ULP (gamma * (alpha * expm1(x)), three roundings)",
                "TOSA exp 3 ULP-equivalent, WebNN exp 32 ULP; expm1 and two multiplies support 3"),
    traits={"exp-minus-one-cancels": exp_minus_one_cancels, "default-constant": default_constant},
)


def _celu(x: np.ndarray, alpha: float) -> np.ndarray:
    alpha = float(np.float32(alpha))
    with np.errstate(all="ignore"):
        return np.maximum(0.0, x) + np.minimum(0.0, alpha * np.expm1(x / alpha))


def _celu_mp(x, alpha):
    import mpmath

    alpha = mpmath.mpf(float(np.float32(alpha)))
    return max(mpmath.mpf(0), x) + min(mpmath.mpf(0), alpha * mpmath.expm1(x / alpha))


CELU_ALPHA_ZERO = ("Celu's formula divides by alpha: with alpha 0, x / alpha is +-inf or NaN (0 / 0), so the text "
                   "gives no value; a runtime may also reject the attribute")


def _celu_alpha_zero(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """alpha 0: the formula in IEEE arithmetic (the first reading: NaN for x >= 0) or its limit as
    alpha -> 0+, max(0, x)."""
    if float(np.float32(context.attributes["alpha"])) != 0:
        return []
    from .elementwise import round_to

    return [("the limit as alpha -> 0: max(0, x)", round_to(np.maximum(0.0, _wide(context)), context.out))]


CELU = Elementwise(
    op="Celu",
    real=_celu,
    precise64=_celu_mp,
    attributes=(Attribute("alpha", (0.5, 2.0, 3.0, -1.0)),),
    alternatives=_celu_alpha_zero,
    ambiguity=CELU_ALPHA_ZERO,
    label="the formula evaluated in IEEE arithmetic",
    may_reject=lambda context: CELU_ALPHA_ZERO if float(np.float32(context.attributes["alpha"])) == 0 else None,
    **_accuracy(2, "1.96 ULP (alpha * expm1(x / alpha))", "TOSA exp 3 ULP-equivalent, WebNN exp 32 ULP"),
    traits={"exp-minus-one-cancels": exp_minus_one_cancels, "outer-alpha-counts": outer_alpha_counts},
)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _sigmoid_mp(x):
    import mpmath

    return 1 / (1 + mpmath.exp(-x))


SIGMOID = Elementwise(
    op="Sigmoid",
    real=_sigmoid,
    precise64=_sigmoid_mp,
    traits={"negative-below-minus-one": negative_input_below(-1.0), "positive-above-one": positive_input_above(1.0)},
    **_accuracy(4, "3.35 ULP (1 / (1 + exp(-x)), exp(x) / (1 + exp(x)) for x < 0)",
                "WebNN sigmoid 34 ULP float32, 3 ULP float16; TOSA ABS_ERROR"),
)


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _softplus_mp(x):
    import mpmath

    return mpmath.log1p(mpmath.exp(x))


SOFTPLUS = Elementwise(
    op="Softplus",
    real=_softplus,
    precise64=_softplus_mp,
    traits={"negative-input": negative_input_below(0.0), "exp-overflows": exp_overflows},
    **_accuracy(2, "1.41 ULP (logaddexp(0, x))", "TOSA log lower bound 0.5 and exp 3 ULP-equivalent"),
)


def _softsign(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(x), np.sign(x), x / (1.0 + np.abs(x)))


def _softsign_mp(x):
    return x / (1 + abs(x))


SOFTSIGN = Elementwise(
    op="Softsign",
    real=_softsign,
    precise64=_softsign_mp,
    alternatives=_ieee_nan_at_infinity,
    ambiguity=INF_TIMES_ZERO,
    label=LIMIT,
    **_accuracy(2, "1.45 ULP (x / (1 + |x|), two roundings)", "WebNN div 2 ULP"),
    traits={"quotient-rounds-to-one": quotient_rounds_to_one},
)


def _tanh_mp(x):
    import mpmath

    return mpmath.tanh(x)


# Tanh is one library call: an elementary function, by the elementary wrong-answer line.
TANH_BUDGET = Budget(2.5, "documented (PRECISION.md), from the correctly rounded result: glibc tanhf and tanh 2 (2.36's "
                          "tanhf(0.23307041823863983) is 2.05 ULP from the exact value), libmvec 2, CUDA tanhf 2 and "
                          "tanh 1, + 0.5 to the exact value (and + 0.5 for the float64 reference); measured numpy float32 "
                          "1.33; WebNN allows 16 ULP, TOSA ABS_ERROR base 12")
TANH_16_BITS = Budget(1.5, "float16/bfloat16: computed in float32 and rounded once, measured <= 0.7 ULP (numpy and "
                           "onnxruntime float16); a native half-precision kernel within 1 ULP of the correctly rounded "
                           "result is 1.5 from the exact value (JAX measures its fp16 and bf16 tanh at 0.5 to 1.0)")

TANH = Elementwise(
    op="Tanh",
    real=np.tanh,
    precise64=_tanh_mp,
    traits={"finite-nonzero-input": finite_nonzero_input},
    budget=TANH_BUDGET,
    budgets={"float16": TANH_16_BITS, "bfloat16": TANH_16_BITS},
)

# --- Gelu, Mish ---------------------------------------------------------------------------------

_erfc = np.vectorize(math.erfc, otypes=[np.float64])
GELU_TANH_C = math.sqrt(2 / math.pi)


def _approximation(approximate: Any) -> str:
    return approximate.decode() if isinstance(approximate, bytes) else str(approximate)


def _gelu(x: np.ndarray, approximate: Any = "none") -> np.ndarray:
    with np.errstate(all="ignore"):
        if _approximation(approximate) == "tanh":
            # 0.5 * (1 + tanh(u)) is sigmoid(2u), which does not cancel for negative u.
            u = GELU_TANH_C * (x + 0.044715 * x ** 3)
            value = x * _sigmoid(2.0 * u)
        else:
            value = 0.5 * x * (_erfc(-x / math.sqrt(2.0)) if x.size else x)
    return np.where(np.isneginf(x), 0.0, value)


def _gelu_mp(x, approximate: Any = "none"):
    import mpmath

    if _approximation(approximate) == "tanh":
        u = mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf("0.044715") * x ** 3)
        return x / (1 + mpmath.exp(-2 * u))
    return x / 2 * mpmath.erfc(-x / mpmath.sqrt(2))


GELU_APPROXIMATIONS = ("none", "tanh")


def _gelu_valid(value: Any) -> bool:
    return _approximation(value) in GELU_APPROXIMATIONS


GELU = Elementwise(
    op="Gelu",
    real=_gelu,
    precise64=_gelu_mp,
    attributes=(Attribute("approximate", ("tanh", "none"), _gelu_valid,
                          'approximate: Gelu approximation algorithm: `"tanh"`, `"none"`(default)', ("erf", "")),),
    alternatives=_ieee_nan_at_infinity,
    ambiguity=INF_TIMES_ZERO,
    label=LIMIT,
    **_accuracy(4, "no numpy erf in float32: erff documented within 2 ULP of the correctly rounded result (glibc 1, "
                   "libmvec 2, CUDA 2: PRECISION.md), plus three roundings, and for the tanh form x * sigmoid(2u) as "
                   "Sigmoid's 4", "TOSA erf 5 ULP, WebNN sigmoid 34 ULP"),
    traits={"negative-below-minus-one": negative_input_below(-1.0), "tanh-approximation": gelu_tanh_form,
            "infinite-input": infinite_input},
)


def _mish(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(np.isneginf(x), 0.0, x * np.tanh(np.logaddexp(0.0, x)))


def _mish_mp(x):
    import mpmath

    return x * mpmath.tanh(mpmath.log1p(mpmath.exp(x)))


MISH = Elementwise(
    op="Mish",
    real=_mish,
    precise64=_mish_mp,
    alternatives=_ieee_nan_at_infinity,
    ambiguity=INF_TIMES_ZERO,
    label=LIMIT,
    **_accuracy(4, "1.82 ULP at the 99.9th percentile, 48.9 where e^x is subnormal in float32 (x < -87: "
                   "the intermediate loses bits; a correct implementation keeps them)", "WebNN tanh 16 ULP"),
    traits={"negative-below-minus-one": negative_input_below(-1.0), "tanh-saturates": tanh_saturates},
)

# --- Swish ---------------------------------------------------------------------------------------


def _swish_alpha(alpha: float) -> float:
    return float(np.float32(alpha))


def _swish(x: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """x * sigmoid(alpha * x), its limit 0 where x is infinite and sigmoid(alpha * x) is 0."""
    alpha = _swish_alpha(alpha)
    with np.errstate(all="ignore"):
        value = x * _sigmoid(alpha * x)
    return np.where(_swish_limit(x, alpha), 0.0, value)


def _swish_limit(x: np.ndarray, alpha: float) -> np.ndarray:
    """Where the text's x * sigmoid(alpha * x) meets inf * 0: x = -inf with alpha > 0, +inf with alpha < 0."""
    return np.isneginf(x) & (alpha > 0) | np.isposinf(x) & (alpha < 0)


def _swish_mp(x, alpha: float = 1.0):
    import mpmath

    return x / (1 + mpmath.exp(-mpmath.mpf(_swish_alpha(alpha)) * x))


def _swish_ieee_nan(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """NaN where an infinite input meets inf * 0 (see `_swish_limit`)."""
    points = _swish_limit(_wide(context), _swish_alpha(context.attributes["alpha"]))
    if not points.any():
        return []
    nan = first.copy()
    nan[points] = np.nan
    return [(IEEE_NAN, nan)]


def sigmoid_argument_below_minus_one(example: Example) -> bool:
    """An element whose alpha * x is below -1 (or -inf): where a sigmoid approximation loses
    relative accuracy (see Sigmoid's negative-below-minus-one)."""
    if example.dtype not in ("float", "double", "float16", "bfloat16"):
        return False
    with np.errstate(all="ignore"):
        scaled = _first_input(example) * _attribute(example, "alpha")
    return bool((scaled < -1).any())


SWISH = Elementwise(
    op="Swish",
    real=_swish,
    precise64=_swish_mp,
    attributes=(Attribute("alpha", (1.0, 0.5, 2.0, -1.0, 0.0, 1.702)),),
    alternatives=_swish_ieee_nan,
    ambiguity=INF_TIMES_ZERO,
    label=LIMIT,
    **_accuracy(4, "3.43 ULP (x * sigmoid(x), the stable form; x / (1 + exp(-x)) 2.56); like Mish, more where "
                   "exp(alpha * x) is subnormal in float32 (alpha * x < -87)", "WebNN sigmoid 34 ULP, as Sigmoid's 4"),
    traits={"sigmoid-argument-below-minus-one": sigmoid_argument_below_minus_one,
            "alpha-inexact-in-type": alpha_inexact_in_type},
)

DECLARED = (RELU, LEAKY_RELU, PRELU, ELU, SELU, CELU, SIGMOID, HARD_SIGMOID, HARD_SWISH, SOFTPLUS, SOFTSIGN,
            TANH, THRESHOLDED_RELU, GELU, MISH, SHRINK, SWISH)
