"""Reference for QLinearMatMul (10, 21): a matrix product of two quantized operands, requantized.

The text: "Matrix product that behaves like numpy.matmul" of the dequantized operands,
(a − a_zero_point)·a_scale and (b − b_zero_point)·b_scale, quantized by "y = saturate((x / y_scale)
+ y_zero_point). For (x / y_scale), it is rounding to nearest ties to even." Per element of y, with
S = Σ_k (a_k − a_zp)(b_k − b_zp) the dot product of the shifted operands:

    r = S · a_scale · b_scale / y_scale,      y = saturate(round_half_even(r) + y_zero_point)

(a_scale per row of A, b_scale per column of B, so both factor out of the sum.)

Shapes (MatMul's `numpy_stacks`, imported): "Scale and zero point must have same shape. They must be
either scalar (per tensor) or N-D tensor (per row for 'a' and per column for 'b')": for A, a scalar,
[M] for a 2-D A, or A's shape with its last dim 1 ([D1, D2, M, 1]); for B, a scalar, [N] for a 2-D
B, or B's shape with its second-to-last dim 1. (The text's "K element vector ... for per column
quantization" names the columns of an [M, K] input; B's columns are its N.) y's scale and zero
point have neither a row nor a column: a scalar. A one-element 1-D tensor ([1]), neither the scalar
nor the vector the text names, is read as per tensor and may be rejected, as MatMulInteger's.

The integer dot product: "Production must never overflow, and accumulation may overflow if and only
if in 32 bits." Each product of shifted 8-bit values is at most 255² = 65025 in magnitude, so an
int32 accumulator overflows only for K ≥ 33026; there the wrapped and saturated sums are readings
(as MatMulInteger's). Version 21 allows float8 operands and outputs (T1, T2, T3), whose shifted
values are not integers: their dot product is taken exactly here, and a runtime's float32
accumulation is allowed Higham's γ(K+1)·Σ|terms| ("in 32 bits").

The requantization is float arithmetic whose rounding order the text does not fix: a runtime may
form the multiplier a_scale·b_scale/y_scale first (in float32, or in the scales' type TS), or scale
step by step, or use a fixed-point multiplier. Its value v before the rounding to an integer is
taken to have at most 2 roundings in TS (the multiplier's product and quotient) and 3 in float32
(the int32 sum converted to float, the product with it, the zero point's addition):

    |v − (r + zp)| ≤ e = ((1 + u_TS)² (1 + u_32)³ − 1)·(|r| + |zp|) + γ(K+1, u_32)·Σ|terms|·|m|   (float8 operands)
                         + 2·λ·(|S|/|y_scale| + |S| + 1)                                           (underflow)

with u_32 = 2^-24, u_TS TS's unit roundoff (2^-24 for float, 2^-11 float16, 2^-8 bfloat16), m the
exact multiplier and λ the least subnormal of the coarser of TS and float32. Where every step is
exact (the scales powers of two, |S| < 2^24: the multiplier and the product are exact in any
order, fixed point included) e = 0. The judge allows every value that rounds from somewhere in
[r + zp − e, r + zp + e]: exact elsewhere, both neighbouring integers only where a rounding
boundary (a half-integer, a midpoint between float8 values) lies within e of the real value. An
exact tie with exact arithmetic must round to even.

The output type: T3, y_zero_point's. A float8 output: r + zp converted as QuantizeLinear converts
with saturate (beyond the largest finite value: ±max). What the text leaves undefined: a
non-finite or NaN real value into an integer type (a zero y_scale, a non-finite scale or float8
operand): any value there.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np

from ..bounds import least_subnormal, unit_roundoff
from ..case import Example
from ..dtypes import DType, from_numpy
from . import conversion as cv
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings
from .matmul import ACCUMULATION_32, numpy_stacks
from .broadcast import multidirectional_shape

SAME_SHAPE = "Scale and zero point must have same shape."
GRANULARITY = ("They must be either scalar (per tensor) or N-D tensor (per row for 'a' and per column for 'b'). ... If "
               "the input is 2D of shape [M, K] then zero point and scale tensor may be an M element vector [v_1, v_2, "
               "..., v_M] for per row quantization and K element vector of shape [v_1, v_2, ..., v_K] for per column "
               "quantization. If the input is N-D tensor with shape [D1, D2, M, K] then zero point and scale tensor may "
               "have shape [D1, D2, M, 1] for per row quantization and shape [D1, D2, 1, K] for per column quantization.")
Y_SCALAR = ("They must be either scalar (per tensor) or N-D tensor (per row for 'a' and per column for 'b'): y has "
            "neither rows nor columns of its own, so its scale and zero point are scalars")
ONE_ELEMENT = ("a 1-element 1-D scale and zero point are neither the scalar nor the vector the text names: read as per "
               "tensor, they may be rejected")
REQUANTIZE = ("the text does not fix the float arithmetic of x / y_scale (the multiplier a_scale·b_scale/y_scale may be "
              "formed in float32, in the scales' type, step by step or in fixed point): where the real value lies within "
              "that arithmetic's error of a rounding boundary both neighbours are allowed")
U32 = 2.0 ** -24
INT32 = np.dtype(np.int32)


# --- shapes ---

def _parameter_shape(x: np.ndarray, parameter: np.ndarray, rows: bool) -> tuple[int, ...] | None:
    """The shape that places a scale or zero point against x (per row of A, per column of B) for
    broadcasting; None where the text allows no such shape. A scalar or [1] is per tensor."""
    if parameter.ndim == 0 or parameter.shape == (1,):
        return ()
    if x.ndim < 2:
        return None
    if rows:
        allowed = [x.shape[:-1] + (1,)] + ([(x.shape[0],)] if x.ndim == 2 else [])
        return x.shape[:-1] + (1,) if tuple(parameter.shape) in allowed else None
    allowed = [x.shape[:-2] + (1, x.shape[-1])] + ([(x.shape[1],)] if x.ndim == 2 else [])
    return x.shape[:-2] + (1, x.shape[-1]) if tuple(parameter.shape) in allowed else None


def _one_element(example: Example) -> bool:
    """A [1] scale and zero point that is neither the scalar nor the vector the text names (a's
    with more than one row, b's with more than one column, y's): per tensor by conform's reading,
    and a runtime may reject it."""
    a, b = example.inputs["a"], example.inputs["b"]
    rows = a.shape[0] if a.ndim == 2 else (1 if a.ndim == 1 else 0)
    columns = b.shape[1] if b.ndim == 2 else (1 if b.ndim == 1 else 0)
    return ((example.inputs["a_scale"].shape == (1,) and rows != 1) or (example.inputs["b_scale"].shape == (1,) and columns != 1)
            or example.inputs["y_scale"].shape == (1,))


def _exact_array(array: np.ndarray) -> np.ndarray:
    """Exact values (ints, Fractions; float inf/nan) as an object array of the same shape."""
    with np.errstate(all="ignore"):
        found = np.empty(array.shape, dtype=object)
        found.reshape(-1)[:] = cv.exact_values(np.ascontiguousarray(array)) if array.size else []
    return found


def _shifted(x: np.ndarray, zero_point: np.ndarray, placed: tuple[int, ...]) -> np.ndarray:
    """x − zero point, exactly, element by element (object array); IEEE where either is special."""
    point = _exact_array(zero_point).reshape(placed) if placed else _exact_array(zero_point.reshape(()))
    values = _exact_array(x)
    return np.vectorize(_subtract, otypes=[object])(values, point) if values.size else values


def _subtract(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return float(a) - float(b)
    return a - b


def _promoted_scale(x: np.ndarray, scale: np.ndarray, placed: tuple[int, ...], rows: bool) -> np.ndarray:
    """The scale as a 2-D-or-more array against x promoted as numpy.matmul promotes it: rows (…, M, 1)
    for A, columns (…, 1, N) for B."""
    exact = _exact_array(scale)
    shaped = exact.reshape(placed) if placed else exact.reshape(()).reshape((1, 1))
    full = x.shape[:-1] + (1,) if rows else x.shape[:-2] + (1, x.shape[-1])
    return np.broadcast_to(shaped, full)  # every batch dim, so that its stacks pair with the operands' element by element


# --- the dot products ---

def _dot(left: np.ndarray, right: np.ndarray) -> tuple[object, Fraction]:
    """Σ left_k·right_k exactly (an int or Fraction; IEEE float where a term is special) and Σ|terms|."""
    total, magnitude = 0, Fraction(0)
    special = None
    for p, q in zip(left.tolist(), right.tolist()):
        if isinstance(p, float) or isinstance(q, float):
            with np.errstate(all="ignore"):
                term = float(np.float64(float(p)) * np.float64(float(q)))
            special = term if special is None else special + term
            continue
        term = p * q
        total += term
        magnitude += abs(term)
    if special is not None:
        return special + float(total), magnitude
    return total, magnitude


def _sums(stacks) -> tuple[list, list[Fraction]]:
    left, right = stacks.rows()
    found = [_dot(left[r], right[r]) for r in range(left.shape[0])]
    return [f[0] for f in found], [f[1] for f in found]


def requantize_error(total, magnitude: Fraction, multiplier: Fraction, zero_point, y_scale: Fraction, u_ts: float,
                     tiny: float, exact_steps: bool, float_operands: bool, k: int) -> Fraction:
    """e of the module's docstring for one element: how far a legal float computation of
    x / y_scale + zp may lie from the real value."""
    if exact_steps:
        return Fraction(0)
    r = abs(Fraction(total) * multiplier)
    relative = Fraction((1 + u_ts) ** 2 * (1 + U32) ** 3 - 1)
    e = relative * (r + abs(Fraction(zero_point)))
    if float_operands:
        e += Fraction((1 + U32) ** (k + 1) - 1) * magnitude * abs(multiplier)
    if tiny:
        size = abs(Fraction(total))
        e += 2 * Fraction(tiny) * (size / abs(y_scale) + size + 1)
    return e


def _exact_in_any_order(sa, sb, y_scale) -> bool:
    """Whether every product and quotient of the three scales (powers of two) is a normal number of
    every type the arithmetic may use (float16's normal range is the narrowest): then no step rounds."""
    if any(isinstance(v, float) for v in (sa, sb, y_scale)):
        return False
    sa, sb, ys = Fraction(sa), Fraction(sb), Fraction(y_scale)
    if not all(_power_of_two(v) for v in (sa, sb, ys)):
        return False
    return all(Fraction(1, 2 ** 14) <= abs(v) <= 2 ** 15 for v in (sa, sb, ys, sa * sb, sa / ys, sb / ys, sa * sb / ys))


def _power_of_two(value: Fraction) -> bool:
    value = abs(value)
    return value > 0 and value.numerator & (value.numerator - 1) == 0 and value.denominator & (value.denominator - 1) == 0


# --- the output values ---

def _integer_choices(low: Fraction, high: Fraction, target: DType) -> list[int]:
    first = min(max(round(low), target.lowest), target.max)
    last = min(max(round(high), target.lowest), target.max)
    return list(range(first, last + 1))


def _float_table(target: DType) -> np.ndarray:
    """Every finite value of a float8 type, ascending, without -0."""
    bits = np.arange(256, dtype=np.uint8).view(target.np_dtype)
    wide = bits.astype(np.float64)
    return np.unique(wide[np.isfinite(wide)])


def _float_choices(low: Fraction, high: Fraction, target: DType) -> list[float]:
    converted = cv.exact_to_float([low, high], target, saturate=True).astype(np.float64)
    table = _float_table(target)
    return [float(v) for v in table if converted[0] <= v <= converted[1]]


def element_values(total, multiplier, zero_point, e: Fraction, target: DType) -> tuple[object, list, bool]:
    """(the text's value, every value a legal arithmetic may give, undefined) for one element."""
    if isinstance(total, float) or isinstance(multiplier, float) or isinstance(zero_point, float):
        with np.errstate(all="ignore"):
            real = float(np.float64(float(total)) * np.float64(float(multiplier)) + np.float64(float(zero_point)))
        if target.kind != "float":
            return 0, [0], True
        value = float(cv.exact_to_float([real], target, saturate=True).astype(np.float64)[0])
        return value, [value], False
    real = Fraction(total) * multiplier
    if target.kind != "float":
        primary = min(max(round(real) + int(zero_point), target.lowest), target.max)
        return primary, _integer_choices(real + zero_point - e, real + zero_point + e, target), False
    shifted = real + Fraction(zero_point)
    primary = float(cv.exact_to_float([shifted], target, saturate=True).astype(np.float64)[0])
    return primary, _float_choices(shifted - e, shifted + e, target), False


def _multiplier(a_scale, b_scale, y_scale):
    """a_scale·b_scale/y_scale exactly; IEEE float where a scale is special or y_scale is 0."""
    if any(isinstance(v, float) for v in (a_scale, b_scale, y_scale)) or y_scale == 0:
        with np.errstate(all="ignore"):
            return float(np.float64(float(a_scale)) * np.float64(float(b_scale)) / np.float64(float(y_scale)))
    return Fraction(a_scale) * Fraction(b_scale) / Fraction(y_scale)


def _array(values: list, target: DType, shape: tuple[int, ...]) -> np.ndarray:
    if target.kind == "float":
        return np.array(values, dtype=np.float64).astype(target.np_dtype).reshape(shape)
    return cv.pack_integers(values, target).reshape(shape)


def _reading(label: str, sums: list, magnitudes: list, multipliers: list, scales: tuple, zero_point, target: DType,
             shape: tuple[int, ...], u_ts: float, tiny: float, float_operands: bool, k: int) -> Reading:
    primary, options, undefined = [], [], []
    y_scale = scales[2]
    for total, magnitude, multiplier, (sa, sb) in zip(sums, magnitudes, multipliers, scales[0]):
        exact_steps = (not float_operands and not isinstance(multiplier, float) and abs(total) < 2 ** 24
                       and _exact_in_any_order(sa, sb, y_scale))
        e = Fraction(0) if isinstance(multiplier, float) or isinstance(total, float) else requantize_error(
            total, magnitude, multiplier, zero_point, Fraction(y_scale), u_ts, tiny, exact_steps, float_operands, k)
        value, allowed, free = element_values(total, multiplier, zero_point, e, target)
        primary.append(value)
        options.append(allowed)
        undefined.append(free)
    outputs = _array(primary, target, shape)
    layers = max((len(o) for o in options), default=1)
    choices = None
    if layers > 1:
        padded = [[o[min(j, len(o) - 1)] for o in options] for j in range(layers)]
        choices = np.stack([_array(layer, target, shape) for layer in padded])
    free = np.array(undefined, dtype=bool).reshape(shape)
    return Reading((outputs,), label, free=(free if free.any() else None,), choices=(choices,))


class QLinearMatMul10(VersionSemantics):
    """QLinearMatMul: numpy.matmul's shapes, exact integer dot products, requantized as the module's
    docstring says; version 21 only widens the types (float8 operands and output, float16 and
    bfloat16 scales), which this class reads from the case."""

    since = 10

    def expected(self, example: Example) -> Expected:
        inputs = example.inputs
        label = example.version.label
        a, b = inputs["a"], inputs["b"]
        bare = numpy_stacks(a, b, label)  # rank 0, inner dims, batch dims: MatMul's rules, MatMul's sentences
        if isinstance(bare, Invalid):
            return Expected(invalid=bare)
        for scale, point in (("a_scale", "a_zero_point"), ("b_scale", "b_zero_point"), ("y_scale", "y_zero_point")):
            if inputs[scale].shape != inputs[point].shape:
                return Expected(invalid=Invalid("scale-zero-point-shape", f"{label}: {SAME_SHAPE} ({scale}, {point})"))
        if inputs["y_scale"].ndim != 0 and inputs["y_scale"].shape != (1,):
            return Expected(invalid=Invalid("y-scale-shape", f"{label}: {Y_SCALAR}"))
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        placed_a = _parameter_shape(a2 if a.ndim > 1 else a, inputs["a_scale"], rows=True)
        placed_b = _parameter_shape(b2 if b.ndim > 1 else b, inputs["b_scale"], rows=False)
        if placed_a is None or placed_b is None:
            return Expected(invalid=Invalid("scale-shape", f"{label}: {GRANULARITY}"))
        left = _shifted(a, inputs["a_zero_point"], placed_a if a.ndim > 1 else ())
        right = _shifted(b, inputs["b_zero_point"], placed_b if b.ndim > 1 else ())
        stacks = numpy_stacks(left, right, label)
        scale_stacks = numpy_stacks(_promoted_scale(a2, inputs["a_scale"], placed_a, True),
                                    _promoted_scale(b2, inputs["b_scale"], placed_b, False), label)
        sa, sb = scale_stacks.rows()
        y_scale = _exact_array(inputs["y_scale"]).reshape(-1)[0]
        zero_point = _exact_array(inputs["y_zero_point"]).reshape(-1)[0]
        target = from_numpy(inputs["y_zero_point"].dtype)
        scale_type = from_numpy(inputs["y_scale"].dtype)
        u_ts = max(unit_roundoff(scale_type.np_dtype), U32)
        tiny = max(least_subnormal(scale_type.np_dtype), least_subnormal(np.dtype(np.float32)))
        float_operands = from_numpy(a.dtype).kind == "float" or from_numpy(b.dtype).kind == "float"
        pairs = [(p, q) for p, q in zip(sa[:, 0].tolist(), sb[:, 0].tolist())]
        multipliers = [_multiplier(p, q, y_scale) for p, q in pairs]
        sums, magnitudes = _sums(stacks)
        candidates = {"": sums}
        if not float_operands:
            fitted = cv.wrapped_and_saturated([int(s) for s in sums], INT32)
            if fitted is not None:
                candidates = {"int32 accumulation wrapped (two's complement)": fitted[0],
                              "int32 accumulation saturated": fitted[1]}
        found = [_reading(name or "spec", values, magnitudes, multipliers, (pairs, None, y_scale), zero_point, target,
                          stacks.shape, u_ts, tiny, float_operands, stacks.k) for name, values in candidates.items()]
        result = readings(found, ACCUMULATION_32 if len(found) > 1 else REQUANTIZE)
        if result.ambiguity is None and any(c is not None for r in result.readings for c in r.choices):
            result = replace(result, ambiguity=REQUANTIZE)
        return replace(result, may_reject=ONE_ELEMENT) if _one_element(example) else result


# --- traits: the causes a runtime may deviate by ---

def _expected(example: Example) -> Expected:
    return REFERENCE.semantics_for(example.version).expected(example)


def near_boundary(example: Example) -> bool:
    """An element whose real value lies within the requantization's float error of a rounding
    boundary (both neighbours allowed)."""
    found = _expected(example)
    return found.is_valid and any(c is not None for r in found.readings for c in r.choices)


def exact_tie(example: Example) -> bool:
    """An element whose real value x / y_scale is exactly halfway between two integers."""
    found = _tie_values(example)
    return any(isinstance(v, Fraction) and v.denominator == 2 for v in found)


def _tie_values(example: Example) -> list:
    inputs = example.inputs
    if from_numpy(inputs["y_zero_point"].dtype).kind == "float":
        return []
    try:
        a, b = inputs["a"], inputs["b"]
        placed_a = _parameter_shape(a if a.ndim > 1 else a[None, :], inputs["a_scale"], rows=True)
        placed_b = _parameter_shape(b if b.ndim > 1 else b[:, None], inputs["b_scale"], rows=False)
        if placed_a is None or placed_b is None or from_numpy(a.dtype).kind == "float" or from_numpy(b.dtype).kind == "float":
            return []
        left = _shifted(a, inputs["a_zero_point"], placed_a if a.ndim > 1 else ())
        right = _shifted(b, inputs["b_zero_point"], placed_b if b.ndim > 1 else ())
        stacks = numpy_stacks(left, right, "")
        scales = numpy_stacks(_promoted_scale(a if a.ndim > 1 else a[None, :], inputs["a_scale"], placed_a, True),
                              _promoted_scale(b if b.ndim > 1 else b[:, None], inputs["b_scale"], placed_b, False), "")
    except (ValueError, IndexError):
        return []
    if isinstance(stacks, Invalid) or isinstance(scales, Invalid):
        return []
    sa, sb = scales.rows()
    y_scale = _exact_array(inputs["y_scale"]).reshape(-1)[0]
    sums, _ = _sums(stacks)
    found = []
    for total, p, q in zip(sums, sa[:, 0].tolist(), sb[:, 0].tolist()):
        m = _multiplier(p, q, y_scale)
        found.append(None if isinstance(m, float) or isinstance(total, float) else Fraction(total) * m)
    return found


def saturates(example: Example) -> bool:
    """An element whose round(x / y_scale) + y_zero_point lies beyond the output type."""
    target = from_numpy(example.inputs["y_zero_point"].dtype)
    if target.kind == "float":
        return False
    zero_point = int(example.inputs["y_zero_point"].reshape(-1)[0]) if example.inputs["y_zero_point"].size else 0
    return any(v is not None and not target.lowest <= round(v) + zero_point <= target.max for v in _tie_values(example))


def per_row(example: Example) -> bool:
    return example.inputs["a_scale"].ndim >= 1 and example.inputs["a_scale"].shape != (1,)


def per_column(example: Example) -> bool:
    return example.inputs["b_scale"].ndim >= 1 and example.inputs["b_scale"].shape != (1,)


def float8(example: Example) -> bool:
    """A float8 operand or output (version 21)."""
    return any(from_numpy(example.inputs[n].dtype).name in cv.FLOAT8 for n in ("a", "b", "y_zero_point"))


def scale_not_float32(example: Example) -> bool:
    """float16 or bfloat16 scales (version 21)."""
    return example.inputs["y_scale"].dtype != np.float32


def mixed_signedness(example: Example) -> bool:
    """Operands or output of different 8-bit integer types (int8 beside uint8)."""
    kinds = {example.inputs[n].dtype for n in ("a", "b", "y_zero_point")}
    return len(kinds) > 1


def undefined_values(example: Example) -> bool:
    """An element the text leaves undefined (a zero or non-finite scale, a NaN operand)."""
    found = _expected(example)
    return found.is_valid and any(f is not None and f.any() for r in found.readings for f in r.free)


def k_zero(example: Example) -> bool:
    a = example.inputs["a"]
    return a.ndim > 0 and a.shape[-1] == 0


def batch_broadcast(example: Example) -> bool:
    a, b = example.inputs["a"], example.inputs["b"]
    return max(a.ndim, b.ndim) >= 3 and a.shape[:-2] != b.shape[:-2]


def one_d_operand(example: Example) -> bool:
    return example.inputs["a"].ndim == 1 or example.inputs["b"].ndim == 1


def zero_point_nonzero(example: Example) -> bool:
    return any(bool(np.any(example.inputs[n].astype(np.float64) != 0)) for n in ("a_zero_point", "b_zero_point", "y_zero_point")
               if example.inputs[n].size)


TRAITS = {"near-boundary": near_boundary, "exact-tie": exact_tie, "saturates": saturates, "per-row": per_row,
          "per-column": per_column, "float8": float8, "scale-not-float32": scale_not_float32,
          "mixed-signedness": mixed_signedness, "undefined-values": undefined_values, "k-zero": k_zero,
          "batch-broadcast": batch_broadcast, "one-d-operand": one_d_operand, "zero-point-nonzero": zero_point_nonzero,
          "one-element-scale": _one_element}
RULES = ("rank-0", "inner-dims-mismatch", "batch-not-broadcastable", "scale-zero-point-shape", "scale-shape", "y-scale-shape")



def output_elements(example: Example) -> int:
    """The output's elements from the shapes alone (a product can outgrow its operands)."""
    a, b = example.inputs["a"], example.inputs["b"]
    largest = max(v.size for v in example.inputs.values() if v is not None)
    if a.ndim == 0 or b.ndim == 0:
        return largest
    left = a.shape if a.ndim > 1 else (1,) + a.shape
    right = b.shape if b.ndim > 1 else b.shape + (1,)
    batch = multidirectional_shape([left[:-2], right[:-2]])
    if batch is None:
        return largest
    count = left[-2] * right[-1]
    for d in batch:
        count *= d
    return max(largest, count)

REFERENCE = OpReference(op="QLinearMatMul", dtype_param="T1", semantics=(QLinearMatMul10,),
                        data_inputs=("a", "b", "a_zero_point", "b_zero_point", "y_zero_point"), traits=TRAITS, rules=RULES,
                        output_elements_from=output_elements, covering_bindings=True)
