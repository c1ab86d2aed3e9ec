"""Trigonometric and hyperbolic functions: Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh,
Acosh, Atanh (declarations of the element-wise family).

Each text is one sentence ("Calculates the sine of the given input tensor, element-wise"), so the
formula is the mathematical function, on the real numbers, of each element. IEEE 754 does not
require these functions to be correctly rounded, so each output is judged within a budget of
ULPs against the float64 value (mpmath's for float64 outputs). What the texts leave implicit is
read as IEEE 754-2019 section 9.2 defines these functions, which is what every math library
gives: an input outside the function's real domain (Asin or Acos beyond +-1, Acosh below 1,
Atanh beyond +-1, Sin/Cos/Tan of +-inf) has no real result and gives NaN; Atanh(+-1) is the
exact infinity of that sign; odd functions keep the sign of a zero. The texts leave nothing else
open, so no op names alternatives; integer inputs are outside every version's T.
"""

from __future__ import annotations

import numpy as np

from ..case import Example
from ..precision import Budget
from .elementwise import Elementwise

# The figures' sources. Documented bounds (../shared/PRECISION.md, "What the best implementations
# document"): glibc's libm-test-ulps for x86_64 (scalar and libmvec) and the CUDA C Programming
# Guide's table of maximum ULP errors, both counted from the correctly rounded result, so a function
# documented within k ULP measures up to k + 0.5 from the exact value, as conform counts (precision.py):
# each budget is at least the largest such k + 0.5. Measured on onnxruntime 1.31.1 CPU and numpy 2's
# float32 functions: 4M float32 inputs per op (half bit-uniform in the domain, half over every
# binade), ~100k float16, 20k float64 against mpmath. TOSA and WebNN judge sin/cos by absolute
# errors, far looser than ULPs near 0. Every budget is for an elementary function (line: precision.py).
_NARROW = Budget(1.5, "float16/bfloat16: computed in float32 and rounded once, measured <= 0.5002 ULP for onnxruntime "
                      "and numpy on ~100k float16 inputs; a native half-precision kernel within 1 ULP of the correctly "
                      "rounded result (JAX's measured fp16 sin, cos, tan, atan, cosh: 1.0) is 1.5 from the exact value")


def _budgets(float32: float, double: float, measured: str, documented: str) -> dict:
    """The op's budget keyword arguments: float32's and float64's figures with their sources
    (`documented`: the largest documented bounds, from the correctly rounded result), and the
    16-bit types' shared one."""
    reason = f"documented: {documented}, each + 0.5 to the exact value; measured float32: {measured}; source: PRECISION.md"
    return {"budget": Budget(float32, f"float32: {reason}"),
            "budgets": {"double": Budget(double, f"float64 (+ 0.5 for the float64 reference): {reason}"),
                        "float16": _NARROW, "bfloat16": _NARROW}}


def _mp(name: str):
    """mpmath's function of that name, imported when a float64 case first needs it."""
    def precise(x):
        import mpmath

        return getattr(mpmath, name)(x)
    return precise


def _float32_near_half(example: Example) -> bool:
    """A float32 input in 0.45 <= |x| <= 0.65, where onnxruntime's vectorised asinf/acosf switches
    its approximation and was measured at up to 4.46 ULP (exhaustively over that interval)."""
    if example.dtype != "float":
        return False
    x = np.abs(np.asarray(next(iter(example.inputs.values())), dtype=np.float64))
    return bool(((x >= 0.45) & (x <= 0.65)).any())


def _float64_beyond_tiny(example: Example) -> bool:
    """A float64 input with a finite element of |x| >= 2**-26, below which sin(x) and cos(x) round
    to x and 1 from the first term on: where onnxruntime's vectorised double sin/cos was measured
    1-3 ULP off, and up to 1e8 ULP off next to multiples of pi/2 (sin(fl(pi)) gives -0.0)."""
    if example.dtype != "double":
        return False
    x = np.abs(np.asarray(next(iter(example.inputs.values())), dtype=np.float64))
    return bool((np.isfinite(x) & (x >= 2.0 ** -26)).any())


NEAR_HALF = {"float32-near-half": _float32_near_half}
BEYOND_TINY = {"float64-beyond-tiny": _float64_beyond_tiny}

SIN = Elementwise(op="Sin", real=np.sin, precise64=_mp("sin"), domain=(-8.0, 8.0), traits=BEYOND_TINY, **_budgets(
    3, 2.5, "onnxruntime worst 2.17 ULP, numpy 1.42",
    "float32 glibc sinf 1 and libmvec 1, CUDA sinf 2; float64 glibc 1, libmvec 2, CUDA 2"))
COS = Elementwise(op="Cos", real=np.cos, precise64=_mp("cos"), domain=(-8.0, 8.0), traits=BEYOND_TINY, **_budgets(
    3, 2.5, "onnxruntime worst 2.29 ULP, numpy 1.43",
    "float32 glibc cosf 1 and libmvec 1, CUDA cosf 2; float64 glibc 1, libmvec 2, CUDA 2"))
TAN = Elementwise(op="Tan", real=np.tan, precise64=_mp("tan"), domain=(-8.0, 8.0), **_budgets(
    4.5, 2.5, "numpy worst 3.29 ULP (huge arguments), onnxruntime 1.22",
    "float32 glibc tanf correctly rounded, libmvec 2, CUDA tanf 4; float64 glibc correctly rounded, libmvec 2, CUDA 2"))
ASIN = Elementwise(op="Asin", real=np.arcsin, precise64=_mp("asin"), domain=(-1.0, 1.0), traits=NEAR_HALF, **_budgets(
    4, 2.5, "numpy worst 2.85 ULP; onnxruntime 4.46 near |x| = 0.5 (imprecise: trait float32-near-half)",
    "float32 glibc asinf 1, CUDA asinf 2; float64 glibc 1, CUDA 2"))
ACOS = Elementwise(op="Acos", real=np.arccos, precise64=_mp("acos"), domain=(-1.0, 1.0), traits=NEAR_HALF, **_budgets(
    4, 2.5, "numpy worst 1.72 ULP; onnxruntime 4.34 near |x| = 0.57 (imprecise: trait float32-near-half)",
    "float32 glibc acosf 1 and libmvec 2, CUDA acosf 2; float64 glibc 1, CUDA 2"))
ATAN = Elementwise(op="Atan", real=np.arctan, precise64=_mp("atan"), domain=(-8.0, 8.0), **_budgets(
    4, 2.5, "onnxruntime worst 3.26 ULP, numpy 1.77",
    "float32 glibc atanf 1, CUDA atanf 2; float64 glibc 1, CUDA 2"))
SINH = Elementwise(op="Sinh", real=np.sinh, precise64=_mp("sinh"), domain=(-12.0, 12.0), **_budgets(
    3.5, 2.5, "onnxruntime worst 1.71 ULP, numpy 1.41",
    "float32 glibc sinhf 2, CUDA sinhf 3; float64 glibc sinh 2 (2.36: sinh(0.8021998203571385) is 2 ULP off), CUDA 2"))
COSH = Elementwise(op="Cosh", real=np.cosh, precise64=_mp("cosh"), domain=(-12.0, 12.0), **_budgets(
    3, 2.5, "numpy worst 2.37 ULP, onnxruntime 1.73",
    "float32 glibc coshf 2, CUDA coshf 2; float64 glibc 2, CUDA 1"))
ASINH = Elementwise(op="Asinh", real=np.arcsinh, precise64=_mp("asinh"), domain=(-8.0, 8.0), **_budgets(
    3.5, 3.5, "onnxruntime worst 1.61 ULP, numpy 0.96",
    "float32 glibc asinhf 2, CUDA asinhf 3; float64 glibc 2, CUDA 3"))
ACOSH = Elementwise(op="Acosh", real=np.arccosh, precise64=_mp("acosh"), domain=(1.0, 8.0), **_budgets(
    4.5, 3.5, "onnxruntime worst 1.38 ULP, numpy 0.86",
    "float32 glibc acoshf 2, CUDA acoshf 4; float64 glibc acosh 2 (2.36: acosh(1.1040891670124455) is 2 ULP off), CUDA 3"))


def _negative_inside_domain(example: Example) -> bool:
    """An element in (-1, 0): atanh evaluated as ln((1 + x) / (1 - x)) / 2 loses bits in 1 + x,
    the more the nearer x is to -1."""
    x = np.asarray(example.inputs[example.node_inputs[0]])
    if x.dtype.kind in "biu":
        return False
    with np.errstate(all="ignore"):
        x = x.astype(np.float64)
    return bool(((x > -1.0) & (x < 0.0)).any())


ATANH = Elementwise(op="Atanh", real=np.arctanh, precise64=_mp("atanh"), domain=(-1.0, 1.0),
                    traits={"negative-inside-domain": _negative_inside_domain}, **_budgets(
    3.5, 2.5, "onnxruntime worst 1.62 ULP, numpy 1.38",
    "float32 glibc atanhf 2, CUDA atanhf 3; float64 glibc atanh 2 (2.36: atanh(-0.11970062028984674) is 2 ULP off), CUDA 2"))

DECLARED = (SIN, COS, TAN, ASIN, ACOS, ATAN, SINH, COSH, ASINH, ACOSH, ATANH)
