"""Unary math: Abs, Neg, Reciprocal, Sqrt, Exp, Log, Ceil, Floor, Round, Sign, Erf (declarations
of the element-wise family).

IEEE 754 rounds sqrt and division correctly, and abs, neg, ceil, floor, round and sign are exact,
so those ops are judged bit for bit against the float64 result rounded once (float64 holds more
than twice float32's precision plus two bits, so rounding sqrt and 1/x twice is innocuous). Exp,
Log and Erf are not correctly rounded by any common library: each has a budget no tighter than the
bounds glibc and CUDA document, checked against onnxruntime's CPU kernels and numpy's own functions
(the reasons say what was documented and measured).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..dtypes import DType
from ..precision import Budget
from .activation import finite_nonzero_input
from .elementwise import Context, Elementwise

Domains = dict[str, tuple[float, float]]


def drawn_within(domains: Domains, quarters: Callable[[np.random.Generator, int], np.ndarray] | None = None):
    """A `draw` hook: for a float dtype named in `domains`, about half the drawn arrays have most
    elements inside that dtype's interesting range (exp's differs by type: float16 overflows
    beyond 11); the others are left to the family. With `quarters`, some arrays are instead
    multiples of a quarter (halves, for rounding ops), as `quarters(rng, size)` gives them."""

    def draw(choices, dt: DType, dims: tuple[int, ...], position: int) -> np.ndarray | None:
        # Imported here: the strategies import the reference package, which imports this module.
        from ..strategies.common import array, one_in
        from ..strategies.elementwise import in_domain

        if dt.kind != "float" or dt.name not in domains or one_in(choices, 2):
            return None
        values = array(choices, dt, dims)
        if quarters is not None and values.size and one_in(choices, 2):
            rng = np.random.default_rng(choices.integer(0, 2**32 - 1))
            return np.where(rng.random(values.size) < 0.25, values.reshape(-1),
                            quarters(rng, values.size).astype(values.dtype)).reshape(values.shape).astype(values.dtype)
        return in_domain(choices, domains[dt.name], dt, values) if values.size else values

    return draw


def _quarters(rng: np.random.Generator, size: int) -> np.ndarray:
    """Multiples of 0.25 in [-10, 10]: halves (ties) and quarters (no ties) for the rounding ops."""
    return rng.integers(-40, 41, size) / 4.0


def _map(function: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    """A float function of one Python float applied to each element of a float64 array."""
    universal = np.frompyfunc(function, 1, 1)
    return lambda x: np.asarray(universal(x), dtype=np.float64).reshape(np.shape(x))


def _each_int(function: Callable[[int], int]) -> Callable[[np.ndarray], np.ndarray]:
    """An exact function of one Python int applied to each element of an object array."""
    return lambda x: np.array([function(v) for v in x.reshape(-1)], dtype=object).reshape(x.shape)


# --- exact ops ---

ABS = Elementwise(op="Abs", real=np.abs, integer=_each_int(abs))

NEG = Elementwise(op="Neg", real=np.negative, integer=_each_int(lambda v: -v))

RECIPROCAL = Elementwise(op="Reciprocal", real=lambda x: 1.0 / x)

# "If x is negative, then it will return NaN": np.sqrt does, and keeps sqrt(-0.0) = -0.0 (IEEE 754).
SQRT = Elementwise(op="Sqrt", real=np.sqrt, domain=(0.0, 100.0))

ROUNDING_DOMAINS: Domains = {name: (-10.0, 10.0) for name in ("float16", "bfloat16", "float", "double")}

CEIL = Elementwise(op="Ceil", real=np.ceil, draw=drawn_within(ROUNDING_DOMAINS, _quarters))

FLOOR = Elementwise(op="Floor", real=np.floor, draw=drawn_within(ROUNDING_DOMAINS, _quarters))

# "In case of halves, the rule is to round them to the nearest even integer": np.rint.
ROUND = Elementwise(op="Round", real=np.rint, draw=drawn_within(ROUNDING_DOMAINS, _quarters))

SIGN_READINGS = ("the text gives NaN no sign (none of > 0, < 0, == 0 holds) and does not say which zero 0 is; "
                 "NaN gives NaN or 0, -0.0 gives +0 or -0")
NAN_SIGN_ZERO = "NaN gives 0 (both comparisons false)"
ZERO_KEEPS_SIGN = "-0.0 gives -0.0 (a zero input returned as it is)"


def _sign_alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """Sign's open points on floats: a NaN input, and the sign of the zero that -0.0 gives."""
    if context.dt.kind != "float":
        return []
    with np.errstate(invalid="ignore"):  # bfloat16 NaN widened
        x = context.arrays[0].astype(np.float64)
    found = []
    if np.isnan(x).any():
        zeroed = first.copy()
        zeroed[np.isnan(x)] = 0
        found.append((NAN_SIGN_ZERO, zeroed))
    negative_zero = (x == 0) & np.signbit(x)
    if negative_zero.any():
        kept = first.copy()
        kept[negative_zero] = -kept.dtype.type(0)
        found.append((ZERO_KEEPS_SIGN, kept))
    return found


INT64_LOW_WORD_SIGN_BIT = "int64-between-2pow31-and-2pow32"


def int64_low_word_sign_bit(example) -> bool:
    """An int64 tensor of two or more elements holding a value in [2**31, 2**32): onnxruntime's
    vectorised int64 Sign reads such a value, whose high word is 0 and whose low word has its top
    bit set, as negative (a lone element, or an odd tail, takes the scalar path and is right)."""
    if example.dtype != "int64":
        return False
    values = [int(v) for array in example.inputs.values() for v in np.asarray(array).reshape(-1)]
    return len(values) >= 2 and any(2**31 <= v < 2**32 for v in values)


SIGN = Elementwise(
    op="Sign",
    real=np.sign,  # NaN propagates, the IEEE 754 way of a function undefined at its input
    integer=_each_int(lambda v: (v > 0) - (v < 0)),
    alternatives=_sign_alternatives,
    ambiguity=SIGN_READINGS,
    label="NaN gives NaN, -0.0 gives +0",
    traits={INT64_LOW_WORD_SIGN_BIT: int64_low_word_sign_bit},
)

# --- ops with a precision budget ---

# Measured on ~100k values per dtype over every binade of the domain (1M for float32), against the
# float64 value (mpmath for float64 outputs), with onnxruntime 1.31 CPU and numpy 2.4. Documented
# bounds (../shared/PRECISION.md: glibc's libm-test-ulps for x86_64, scalar and libmvec, and the
# CUDA C Programming Guide) count from the correctly rounded result: k there is k + 0.5 from the
# exact value, as conform counts (precision.py), and no budget is below the largest k + 0.5.
NARROW = ("float16 and bfloat16 results computed in float32 and rounded once are within 0.5 ULP plus a "
          "float32 ULP's share: measured {measured}; a native half-precision kernel within 1 ULP of the correctly "
          "rounded result is 1.5 from the exact value (WebNN: {webnn}; TOSA: {tosa})")
FLOAT64 = ("float64: documented {documented} ULP from the correctly rounded result, + 0.5 to the exact value "
           "(and + 0.5 for the float64 reference); glibc/numpy's float64 {name} measured 1.0 ULP from it; source: PRECISION.md")
EXP_NARROW = NARROW.format(measured="onnxruntime float16 0.5 ULP, numpy float16 0.5 ULP",
                           webnn="1 ULP fp16", tosa="ABS_ERROR base 1 fp16/bf16")
EXP_FLOAT64 = FLOAT64.format(documented="glibc exp 1, libmvec 1, CUDA 1", name="exp")
EXP_FLOAT32 = ("float32: numpy's SIMD expf measured 2.42 ULP (1M values over [-104, 89]), onnxruntime 0.85 ULP; "
               "3 ULP is the tightest round figure both meet, above the documented bounds (glibc expf 1, libmvec 1, "
               "CUDA expf 2, + 0.5: PRECISION.md) and TOSA's base for fp32 exp (WebNN allows 32)")
LOG_NARROW = NARROW.format(measured="onnxruntime float16 0.5 ULP, numpy float16 0.5 ULP",
                           webnn="ATOL 1/1024", tosa="ABS_ERROR, lower bound 0.5")
LOG_FLOAT64 = FLOAT64.format(documented="glibc log 1, libmvec 1, CUDA 1", name="log")
LOG_FLOAT32 = ("float32: numpy's SIMD logf measured 3.61 ULP and onnxruntime 3.39 ULP (2M values, every binade "
               "and [0.5, 2]); 4 ULP is the tightest round figure both meet, above the documented bounds (glibc logf 1, "
               "libmvec 3, CUDA logf 1, + 0.5: PRECISION.md); TOSA and WebNN give only absolute errors for log, which "
               "accept thousands of ULP near x = 1")

EXP_DOMAINS: Domains = {"float16": (-18.0, 12.0), "bfloat16": (-100.0, 90.0), "float": (-105.0, 90.0),
                        "double": (-746.0, 710.0)}

def exp_beyond_2_pow_64(example) -> bool:
    """An input whose exp is beyond 2**64 (x > 44.36): a runtime reducing x by multiples of ln 2
    with too few bits of ln 2 loses accuracy as x grows."""
    x = example.inputs[example.node_inputs[0]].astype(np.float64)
    with np.errstate(invalid="ignore"):
        return bool((np.isfinite(x) & (x > 64 * math.log(2))).any())


EXP = Elementwise(
    op="Exp",
    real=np.exp,
    precise64=lambda x: __import__("mpmath").exp(x),
    budget=Budget(1.5, EXP_NARROW),
    budgets={"float": Budget(3.0, EXP_FLOAT32), "double": Budget(1.5, EXP_FLOAT64)},
    draw=drawn_within(EXP_DOMAINS),
    traits={"beyond-2**64": exp_beyond_2_pow_64},
)

LOG = Elementwise(
    op="Log",
    real=np.log,  # log(-x) is NaN and log(+-0) is -inf, as IEEE 754 defines them; the text is silent
    precise64=lambda x: __import__("mpmath").log(x),
    budget=Budget(1.5, LOG_NARROW),
    budgets={"float": Budget(4.0, LOG_FLOAT32), "double": Budget(1.5, LOG_FLOAT64)},
    domain=(0.25, 4.0),
)

# Erf-9 allows integer types, whose output is also an integer; |erf(x)| < 1 for every finite x,
# so how the real value becomes an integer decides everything and the text does not say.
ERF_NARROW = NARROW.format(measured="onnxruntime float16 0.5 ULP", webnn="ATOL 1/1024", tosa="5 ULP")
# (named apart from ERF_FLOAT64 and ERF_FLOAT32 below, the integer readings' labels)
ERF_DOUBLE_BUDGET = FLOAT64.format(documented="glibc erf 1, libmvec 1, CUDA 2", name="erf (Python's math.erf)")
ERF_FLOAT_BUDGET = ("float32: onnxruntime's erf measured 0.93 ULP (100k values, every binade and [-6, 6]; numpy has "
                    "no erf); documented: glibc erff 1, libmvec 2, CUDA erff 2, + 0.5 (PRECISION.md): 2.5, within "
                    "TOSA's 5 ULP")
ERF_INTEGER = "Erf-9 allows integer types without saying how erf's real value (|erf(x)| < 1) becomes an integer"
ERF_TRUNCATED = "the real value truncated toward zero (always 0)"
ERF_NEAREST = "the real value rounded to nearest (sign(x))"
ERF_FLOAT64 = "erf computed in float64, then truncated (+-1 where it rounds to +-1.0, |x| >= 6)"
ERF_FLOAT32 = "erf computed in float32, then truncated (+-1 where it rounds to +-1.0f, |x| >= 4)"


def _erf_integer_alternatives(context: Context, first: np.ndarray) -> list[tuple[str, np.ndarray]]:
    if context.dt.kind not in ("int", "uint"):
        return []
    x = np.array([int(v) for v in context.arrays[0].reshape(-1)], dtype=object)
    sign = np.array([(v > 0) - (v < 0) for v in x], dtype=object)
    magnitude = np.array([abs(v) for v in x], dtype=object)

    def beyond(threshold: int) -> np.ndarray:
        return np.where(magnitude >= threshold, sign, 0).astype(first.dtype).reshape(first.shape)

    return [(ERF_NEAREST, sign.astype(first.dtype).reshape(first.shape)),
            (ERF_FLOAT64, beyond(6)), (ERF_FLOAT32, beyond(4))]


ERF_DOUBLE_BEYOND_FLOAT32 = "double-erf-beyond-float32"


def erf_double_beyond_float32(example) -> bool:
    """A double input whose erf float32 cannot hold (onnx.reference computes Erf in float32)."""
    if example.dtype != "double":
        return False
    values = [float(v) for array in example.inputs.values() for v in np.asarray(array).reshape(-1)]
    return any(math.isfinite(v) and float(np.float32(math.erf(v))) != math.erf(v) for v in values)


ERF = Elementwise(
    op="Erf",
    real=_map(math.erf),
    integer=_each_int(lambda v: 0),  # |erf(v)| < 1: truncated toward zero, always 0
    precise64=lambda x: __import__("mpmath").erf(x),
    budget=Budget(1.5, ERF_NARROW),
    budgets={"float": Budget(2.5, ERF_FLOAT_BUDGET), "double": Budget(2.5, ERF_DOUBLE_BUDGET)},
    draw=drawn_within({"float16": (-4.0, 4.0), "bfloat16": (-4.0, 4.0), "float": (-4.0, 4.0), "double": (-6.0, 6.0)}),
    alternatives=_erf_integer_alternatives,
    ambiguity=ERF_INTEGER,
    label=ERF_TRUNCATED,
    traits={ERF_DOUBLE_BEYOND_FLOAT32: erf_double_beyond_float32, "finite-nonzero-input": finite_nonzero_input},
)

DECLARED = (ABS, NEG, RECIPROCAL, SQRT, EXP, LOG, CEIL, FLOOR, ROUND, SIGN, ERF)
