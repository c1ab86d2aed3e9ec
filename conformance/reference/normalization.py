"""The normalizations: LayerNormalization-17, RMSNormalization-23, MeanVarianceNormalization-9
and -13, GroupNormalization-21 (18 is deprecated in onnx.defs), from the schema text; one shared
path normalizes rows of a tensor over some of its axes.

What each text computes, per row x of n values (the normalized axes flattened):

- LayerNormalization-17: `Mean = ReduceMean(X)`, `D = X - Mean`, `Var = ReduceMean(D*D)`,
  `InvStdDev = 1/Sqrt(Var + epsilon)`, `Normalized = D * InvStdDev`, all in the precision
  `stash_type` names ("the actual computation must happen in" it), then "cast `Normalized` back to
  the original type of `X`", `Y = Normalized * Scale + B` in X's type. Optional outputs `Mean` and
  `InvStdDev` of type U, the stash type, shaped `[d[0], ..., d[axis-1], 1, ..., 1]`.
- RMSNormalization-23: `RMS = Sqrt(ReduceMean(X*X) + epsilon)`, `Normalized = X / RMS` in the
  stash_type's precision, cast back to X's type, `Y = Normalized * scale` (of type V).
- GroupNormalization-21: `y = scale * (x - mean) / sqrt(variance + epsilon) + bias` per instance
  and group of C / num_groups channels, stage one in the stash type's precision, scale and bias per
  channel; its body computes the variance in one pass as LayerNormalization's does.
- MeanVarianceNormalization: the prose `(X-EX)/sqrt(E(X-EX)^2)` over `axes` (default [0, 2, 3]),
  no stash type: computed in X's type or wider. Its function body differs from the prose: it
  computes the variance in one pass, `E[X^2] - E[X]^2`, and divides by `sqrt(Variance) + 1e-9`
  (epsilon outside the root). The body is a reading that conform evaluates itself
  (reference/function_body.py): a runtime following it conforms, and passes with the reading
  "function body". Its float Exponent and Epsilon constants make the body ill-typed for double,
  float16 and bfloat16 X (`Pow`, `Add(STD, Epsilon)` mix the types): onnx.checker, which infers
  through the body, refuses those models (trait `checker-refuses`), as it refuses version 13
  without `axes` (its opset-18 body's `Constant<value_ints = @axes>` gets no default).

LayerNormalization's and RMSNormalization's context-dependent bodies are, likewise, readings of
their own: LayerNormalization's body computes `Var = E[X^2] - E[X]^2` (one pass, where the prose
writes two), which cancels where a row's mean is large beside its spread (onnxruntime issue #21935
is this class). The semantics give that computation as a tier of their own ("one-pass variance ...
as the function body computes it"), whose bound carries the cancellation (the mean of squares'
error against the variance): a runtime computing one pass as the body does passes, named by that
tier, and where the cancellation can leave any value (a variance whose error reaches it) the tier
sets no requirement. RMSNormalization's body is its prose (ill-typed where X and scale differ in
type: `Mul(NormalizedT, scale)`, and onnx's inference gives Y X's type where the schema gives V:
trait `mixed-types`); MeanVarianceNormalization's and GroupNormalization's bodies are evaluated by
the core path, and their one pass is a tier here too.

Judging: the prose's two-pass value, exact (computed in long double from the inputs as given), and
a bound per element (bounds.ElementBound) carried through the steps the text names, in the
computation type's unit roundoff u (n terms per row, Σ|x|/n = a):

- the mean: E_m = γ(n+2)·a (a sum in any order, the input cast, the division by n);
- each deviation D_i = x_i − m: its error is the mean's error e (one value per row) plus its own
  F_i = u_in·|x_i| + u·(|d_i| + E_m + u_in·|x_i|) (input cast, subtraction);
- the variance, from Σ(d_i + e + f_i)² = Σd² + n·e² + Σf² + 2Σd·f + 2eΣf (Σd = 0):
  E_v = (E_m² + mean(F²) + 2·mean(|d|·F) + 2·E_m·mean(F))·(1 + γ(n+2)) + γ(n+2)·v + 2η, which
  leaves the two-pass form's tolerance of a large mean (only e² reaches the variance);
- Var + epsilon and its root: ρ_w = E_w / w, then the inverse's relative error
  ρ_r = (1 + RSQRT_ULPS·u) / (√(1 − ρ_w)·(1 − u)) − 1: a square root and a reciprocal or
  division, or an approximate rsqrt of a few ULP; no bound where ρ_w ≥ 1 (w may be 0);
- Normalized = D·r: E_z = E_d·r·(1+ρ_r)(1+u) + |z|·((1+ρ_r)(1+u) − 1);
- stage two in X's type (the cast of Normalized, the multiply by Scale, the add of B each rounded
  once): E_y = (|γ|·(E_z + ρ_T(|z| + E_z)) + ρ_T(...))·(1 + u_T) + ½ulp(y) + η_T.

η is half a type's least subnormal (a square or a product that underflows). A stage whose every
value is exact in the computation type (an exactly summable row, a mean and deviations
representable, n a power of two, as a runtime may multiply by a rounded 1/n) carries no error, so a
constant row normalizes to exactly `B` and a wrong axis on exactly summable data lies orders of
magnitude past the bound. The mean is the exception: an updating mean (m += (x − m)/k, as
onnxruntime's LayerNormalization computes it) rounds at every step even where the sum is exact,
so a mean carries (n + 4·(ln n + 1))·u·max|x| unless its row is constant. Rows with NaN or ±inf are judged
exactly (the text's operations propagate them: a row with an infinity is NaN for LayerNormalization,
and 0 or NaN for RMSNormalization, whose RMS is inf). Where a square or the variance may pass the
computation type's max, or whose values' magnitudes sum past it (a partial sum may overflow in
some order), the bound sets no requirement (TOSA's "bnd overflow").

Each output's bound has a tier per computation (tightest first): the two-pass variance of the
prose, then the one-pass variance of the function bodies; per accumulator where the text leaves it
open (MeanVarianceNormalization), fixed by stash_type elsewhere. The verdict names the tier met.

Readings where the text is open: MeanVarianceNormalization's accumulator (X's type or float32 for
16-bit floats, one tier each); a Scale (or B) that varies along an axis that is not normalized is
"unidirectional broadcastable to tensor X" and valid, but LayerNormalization's body flattens Scale
to [1, size], and RMSNormalization's `scale` "should be broadcastable to the normalized shape": a
runtime may reject such a scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, exactly_summable, gamma, half_ulp, least_subnormal, unit_roundoff
from ..case import Example
from ..dtypes import from_elem_type
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics
from .movement import axes_in, axis_in, ints

# An approximate reciprocal square root (rsqrt with a Newton step) is within 2 ULP in float32.
RSQRT_ULPS = 2.0
AXIS_SENTENCE = "axis: The first normalization dimension. If rank(X) is r, axis' allowed range is [-r, r)."
LN_BROADCAST = ("This operator supports unidirectional broadcasting (tensors `Scale` and `B` should be unidirectional "
                "broadcastable to tensor `X`)")
RMS_BROADCAST = "This operator supports unidirectional broadcasting (`Scale` should be unidirectional broadcastable to tensor `X`)"
RMS_NORMALIZED_SHAPE = "scale: Scale tensor shape should be broadcastable to the normalized shape."
LN_BODY_SCALE = ("the function body flattens Scale (and B) to [1, size] (`Flatten<axis=0>`) and multiplies it with X flattened "
                 "to [rows, n]: it holds only a Scale of n or 1 elements")
STASH_U = "stash_type: Type of Mean and InvStdDev. This also specifies stage one's computation precision. (U: tensor(float), tensor(bfloat16))"
STASH_FLOAT = "stash_type: The floating-point precision used in stage one of the computation."
MVN_AXES_9 = ("axes: A list of integers, along which to reduce. (The body's ReduceMean-1 gives no meaning to a negative axis, "
              "nor to one the data does not have)")
MVN_AXES_13 = "axes: A list of integers, along which to reduce. (The body's ReduceMean-13: Accepted range is [-r, r-1] where r = rank(data).)"
PASSES = {False: "two-pass variance E[(X − E[X])²] as the prose writes it",
          True: "one-pass variance E[X²] − E[X]² as the function body computes it"}
EMPTY_ROWS = ("the normalized axes hold no element: the equations' ReduceMean over an empty set of values yields undefined "
              "(ReduceMean-18), so Mean and InvStdDev are any value, and a runtime may reject the input")
REPEATED = "the text neither forbids an axis named twice nor gives it a meaning: a runtime may reduce it once or reject the list"
REASON = ("the error a correct implementation may show, carried through the text's steps: a mean in any order (Higham's "
          "γ), the deviations, the variance (two-pass: the mean's error enters squared), the root and its inverse "
          "(RSQRT_ULPS), the stage-two multiply and add in X's type; exact where every step is exact")
FORMULA = "E_y = |γ|·E_z(1+u_T)² + 2u_T|γz| + ½ulp(y), E_z from the mean, variance and root (reference/normalization.py)"
STASH_TYPES_U = {1: np.dtype(np.float32), 16: np.dtype(ml_dtypes.bfloat16)}
FLOAT_TYPES = {1: np.dtype(np.float32), 10: np.dtype(np.float16), 11: np.dtype(np.float64), 16: np.dtype(ml_dtypes.bfloat16)}


@dataclass(frozen=True, eq=False)
class Normalized:
    """Stage one of every row in one computation type: the exact values (float64, rows × n for
    z, per row for the mean and the inverse deviation) and their absolute error bounds."""

    z: np.ndarray
    z_error: np.ndarray
    mean: np.ndarray
    mean_error: np.ndarray
    inverse: np.ndarray
    inverse_error: np.ndarray


def _exact(values: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    """Where a value (float64 or long double) is exactly one of the type's values."""
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(np.float64).astype(np_dtype).astype(np.longdouble) == values


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _rounding(values: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    """The most that rounding |values| to the type moves them: u·|v| and half its least subnormal."""
    return unit_roundoff(np_dtype) * np.abs(values) + 0.5 * least_subnormal(np_dtype)


def stage_one(rows: np.ndarray, compute: np.dtype, epsilon: float, centred: bool, one_pass: bool = False) -> Normalized:
    """Normalize each row of `rows` (R × n, long double, the inputs as given) in `compute`'s
    precision: subtract the mean where `centred`, divide by √(mean of squares + epsilon); the
    variance two-pass (the prose's E[(X − E[X])²]) or, with `one_pass`, as the function bodies
    compute it, E[X²] − E[X]²."""
    n = rows.shape[1]
    u = unit_roundoff(compute)
    eta = 0.5 * least_subnormal(compute)
    # A mean is exact where the sum is and n a power of two: a runtime may multiply by a rounded 1/n.
    by_n = _power_of_two(n)
    finite = np.isfinite(rows).all(axis=1)
    inputs_exact = _exact(rows, compute).all(axis=1) | ~finite
    u_in = np.where(inputs_exact, 0.0, u)[:, None]
    wide = rows.astype(np.float64)
    with np.errstate(all="ignore"):
        if centred:
            mean = rows.sum(axis=1) / n
            deviations = rows - mean[:, None]
            a = np.abs(wide).sum(axis=1) / n
            mean_error = gamma(n + 2, u) * a
            mean_exact = by_n & inputs_exact & exactly_summable(np.where(np.isfinite(wide), wide, 0.0), compute) & _exact(mean, compute)
            # An updating mean (m += (x − m)/k, onnxruntime's LayerNormalization) rounds at each step
            # even where the sum is exact: up to (n + 4·(ln n + 1))·u·max|x|, none for a constant row.
            constant = (rows == rows[:, :1]).all(axis=1) if n else np.ones(rows.shape[0], dtype=bool)
            updating = np.where(constant, 0.0, gamma(n + 4 * (math.log(max(n, 1)) + 1), u) * np.abs(wide).max(axis=1, initial=0.0))
            mean_error = np.where(mean_exact, updating, np.maximum(mean_error, updating))
            mean_exact = mean_exact & constant
        else:
            mean = np.zeros(rows.shape[0], dtype=np.longdouble)
            deviations = rows
            mean_error = np.zeros(rows.shape[0])
            mean_exact = np.ones(rows.shape[0], dtype=bool)
        d = deviations.astype(np.float64)
        own = u_in * np.abs(wide) + (u * (np.abs(d) + mean_error[:, None] + u_in * np.abs(wide)) if centred else 0.0)
        deviations_exact = mean_exact & inputs_exact & _exact(deviations, compute).all(axis=1)
        own = np.where(deviations_exact[:, None], 0.0, own)
        squares = deviations * deviations
        variance = squares.sum(axis=1) / n
        v = variance.astype(np.float64)
        g = gamma(n + 2, u)
        e = mean_error
        if one_pass:
            variance_error, variance_exact = _one_pass_error(rows, mean, mean_error, mean_exact, inputs_exact, v, compute)
        else:
            per = max(n, 1)
            variance_error = ((e * e + (own * own).sum(axis=1) / per + 2 * (np.abs(d) * own).sum(axis=1) / per
                               + 2 * e * own.sum(axis=1) / per) * (1 + g) + g * v + 2 * eta)
            variance_exact = (deviations_exact & _exact(squares, compute).all(axis=1)
                              & exactly_summable(np.where(np.isfinite(squares), squares, 0.0).astype(np.float64), compute)
                              & _exact(variance, compute) & by_n)
        variance_error = np.where(variance_exact, 0.0, variance_error)
        w = variance + np.longdouble(epsilon)
        w_wide = w.astype(np.float64)
        w_exact = variance_exact & _exact(w, compute)
        w_error = np.where(w_exact, 0.0, variance_error + u * (w_wide + variance_error) + u * abs(epsilon) + eta)
        rho_w = np.where(w_wide > 0, w_error / np.where(w_wide > 0, w_wide, 1.0), np.where(w_error > 0, np.inf, 0.0))
        rho_r = (1 + RSQRT_ULPS * u) / (np.sqrt(np.maximum(1 - rho_w, 0.0)) * (1 - u)) - 1
        rho_r = np.where(rho_w >= 1, np.inf, rho_r)
        inverse = 1 / np.sqrt(w)
        r = inverse.astype(np.float64)
        z = deviations * inverse[:, None]
        z_wide = z.astype(np.float64)
        d_error = mean_error[:, None] + own
        grow = (1 + rho_r[:, None]) * (1 + u)
        z_error = d_error * r[:, None] * grow + np.abs(z_wide) * (grow - 1)
        # Where w's error may reach w itself, the computed root may be 0: no requirement.
        unbounded = rho_w >= 1
        z_error = np.where(unbounded[:, None], np.inf, z_error)
        # A row of zero deviations is zero whatever the root (unless the root is 0: 0·inf is NaN).
        zero = deviations_exact[:, None] & (deviations == 0) & (np.isfinite(r) & ~unbounded)[:, None]
        z_error = np.where(zero, 0.0, np.where(np.isnan(z_error) & np.isfinite(z_wide), np.inf, z_error))
        inverse_error = np.where(unbounded, np.inf, np.where(np.isfinite(r), r * rho_r, 0.0))
        # A square or the variance that may pass the type's max overflows as the text's Mul does.
        top = float(ml_dtypes.finfo(compute).max)
        # A sum (of the values for the mean, of the squares for the variance) whose terms' magnitudes
        # pass the type's max may overflow in some order: no requirement (TOSA: "bnd overflow").
        summed = np.abs(wide).sum(axis=1) if centred else np.zeros(rows.shape[0])
        past = ((summed * (1 + 4 * u) > top) | (np.abs(squares.astype(np.float64)).sum(axis=1) * (1 + 4 * u) > top)
                | (w_wide + w_error > top))
        past = past & finite
        z_error = np.where(past[:, None], np.inf, z_error)
        inverse_error = np.where(past, np.inf, inverse_error)
        mean_error = np.where(finite & (summed * (1 + 4 * u) > top), np.inf, mean_error)
        # Rows with NaN or ±inf: the text's operations decide each element exactly.
        z_error = np.where(finite[:, None], z_error, 0.0)
        inverse_error = np.where(finite, inverse_error, 0.0)
        mean_error = np.where(finite, mean_error, 0.0)
    return Normalized(z_wide, z_error, mean.astype(np.float64), mean_error, r, inverse_error)


def _one_pass_error(rows: np.ndarray, mean: np.ndarray, mean_error: np.ndarray, mean_exact: np.ndarray,
                    inputs_exact: np.ndarray, v: np.ndarray, compute: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """The error of Var = ReduceMean(X·X) − Mean·Mean (the bodies' one pass), and where it is exact:
    the mean of squares' own error (γ(n+4)·q: the cast, the squares, the sum, the division), the
    square of the mean's (2|m|·E_m + E_m², rounded) and the subtraction's rounding. It cancels
    where |m| is large beside the spread: q and m² are both about m², the variance far smaller."""
    n = rows.shape[1]
    u = unit_roundoff(compute)
    eta = 0.5 * least_subnormal(compute)
    squares = rows * rows
    q = squares.sum(axis=1) / n
    q_wide = q.astype(np.float64)
    m = np.abs(mean.astype(np.float64))
    q_error = gamma(n + 4, u) * q_wide + 2 * eta
    q_exact = (_power_of_two(n) & inputs_exact & _exact(squares, compute).all(axis=1) & _exact(q, compute)
               & exactly_summable(np.where(np.isfinite(squares), squares, 0.0).astype(np.float64), compute))
    q_error = np.where(q_exact, 0.0, q_error)
    square_of_mean = mean * mean
    m_error = (2 * m * mean_error + mean_error ** 2) * (1 + u) + np.where(mean_exact & _exact(square_of_mean, compute), 0.0,
                                                                           u * m * m + eta)
    error = q_error + m_error
    exact = (error == 0) & _exact(q - square_of_mean, compute)
    return np.where(exact, 0.0, error + u * (v + error)), exact


def stage_two(found: Normalized, scale: np.ndarray | None, bias: np.ndarray | None, out: np.dtype,
              through: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Y = Normalized·Scale + B (rows × n, float64 Scale and B as given) with Normalized cast to
    `through` (X's type) and the multiply and add rounded in `out`: the exact Y and its bound."""
    z, e = found.z, found.z_error
    with np.errstate(all="ignore"):
        gamma_ = np.ones_like(z) if scale is None else scale
        beta = np.zeros_like(z) if bias is None else bias
        y = z * gamma_ + beta
        cast = e + _rounding(np.abs(z) + e, through)
        if scale is None and bias is None:
            allowed = cast - 0.5 * least_subnormal(through) + half_ulp(y, out)
            allowed = np.where(e == 0, half_ulp(y, out), allowed)
        else:
            product = np.abs(gamma_) * cast
            product = product + _rounding(np.abs(gamma_) * (np.abs(z) + cast), out)
            allowed = product * (1 + unit_roundoff(out)) + half_ulp(y, out) + 0.5 * least_subnormal(out)
            # A zero Normalized (a constant row) gives exactly B (0·γ is ±0, and ±0 + B is B).
            allowed = np.where((e == 0) & (z == 0), 0.0, allowed)
        allowed = np.where(np.isinf(e), np.inf, allowed)
        special = ~np.isfinite(y)
        allowed = np.where(special & ~np.isinf(allowed), 0.0, allowed)
    return y, allowed


# --- shapes ---

def unidirectional(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether `shape` broadcasts to `target` with `target` unchanged (ONNX's unidirectional)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


def as_rows(array: np.ndarray, shape: tuple[int, ...], reduced: list[int]) -> np.ndarray:
    """`array` broadcast to `shape`, the `reduced` axes moved last, as rows × n (long double)."""
    with np.errstate(invalid="ignore"):  # a NaN of a 16-bit type widens to NaN
        full = np.broadcast_to(array.astype(np.longdouble), shape)
    kept = [k for k in range(len(shape)) if k not in reduced]
    moved = np.transpose(full, kept + reduced)
    n = math.prod(shape[k] for k in reduced)
    return moved.reshape(-1, n) if n else moved.reshape(math.prod(shape[k] for k in kept), 0)


def from_rows(rows: np.ndarray, shape: tuple[int, ...], reduced: list[int]) -> np.ndarray:
    """The inverse of `as_rows`."""
    kept = [k for k in range(len(shape)) if k not in reduced]
    order = kept + reduced
    moved = rows.reshape([shape[k] for k in order])
    return np.transpose(moved, np.argsort(order))


def _bound(tiers: list[Tier]) -> ElementBound:
    """The bound of one output over its tiers, tightest first; the last made the loosest of all
    per element, since it decides whether an output passes at all."""
    loosest = np.maximum.reduce([tier.allowed for tier in tiers])
    last = Tier(tiers[-1].label, loosest, tiers[-1].ksb)
    return ElementBound((*tiers[:-1], last), FORMULA, REASON)


def _statistic_allowed(value: np.ndarray, error: np.ndarray, compute: np.dtype) -> np.ndarray:
    """The bound of Mean or InvStdDev, outputs of the computation type: its error and one rounding
    (only the rounding's own error where the value is exact); special values judged exactly
    unless the error is unbounded."""
    with np.errstate(invalid="ignore", over="ignore"):
        rounded_error = np.abs(_rounded(value, compute).astype(np.float64) - value)
        allowed = np.where(error == 0, rounded_error, error + half_ulp(value, compute))
    return np.where(np.isfinite(value), allowed, np.where(np.isinf(error), np.inf, 0.0))


def _tier(label: str, allowed: np.ndarray) -> Tier:
    return Tier(label, allowed, np.ones_like(allowed))


def _rounded(values: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(np_dtype)


# --- LayerNormalization ---

def axis_and_stash(example: Example, x: np.ndarray, allowed: dict, wrong_stash: Invalid) -> tuple[int, int] | Expected:
    """The normalized axis (non-negative) and stash_type of LayerNormalization and RMSNormalization,
    or the invalid input they make: no axis for a rank-0 X, one outside [-r, r-1], a stash_type
    not among `allowed`."""
    if x.ndim == 0:
        return Expected(invalid=Invalid("axis-out-of-range", AXIS_SENTENCE + " (a rank-0 X has no axis)"))
    axis = axis_in(int(example.attributes.get("axis", -1)), x.ndim, True, AXIS_SENTENCE)
    if isinstance(axis, Invalid):
        return Expected(invalid=axis)
    stash = int(example.attributes.get("stash_type", 1))
    if stash not in allowed:
        return Expected(invalid=wrong_stash)
    return axis, stash


class LayerNormalization17(VersionSemantics):
    """LayerNormalization-17: normalize over axis..r-1 in the stash type's precision, then scale
    and shift in X's type; Mean and InvStdDev of the stash type, shaped [d[0..axis-1], 1, ...]."""

    since = 17

    def expected(self, example: Example) -> Expected:
        x, scale, bias = example.inputs["X"], example.inputs["Scale"], example.inputs.get("B")
        found = axis_and_stash(example, x, STASH_TYPES_U, Invalid("stash-type-not-allowed", STASH_U))
        if isinstance(found, Expected):
            return found
        axis, stash = found
        for name, given in (("Scale", scale), ("B", bias)):
            if given is not None and not unidirectional(given.shape, x.shape):
                return Expected(invalid=Invalid("not-broadcastable", f"{LN_BROADCAST}: {name} of shape {list(given.shape)}"))
        compute = STASH_TYPES_U[stash]
        reduced = list(range(axis, x.ndim))
        shape = x.shape
        n = math.prod(shape[axis:])
        rows = as_rows(x, shape, reduced)
        eps = float(np.float32(example.attributes.get("epsilon", 1e-5)))
        scale_rows = as_rows(scale, shape, reduced).astype(np.float64)
        bias_rows = None if bias is None else as_rows(bias, shape, reduced).astype(np.float64)
        stats_shape = tuple(shape[:axis]) + (1,) * (x.ndim - axis)
        stash_name = "float32" if stash == 1 else "bfloat16"
        tiers: tuple[list[Tier], list[Tier], list[Tier]] = ([], [], [])
        for one_pass in (False, True):
            found = stage_one(rows, compute, eps, centred=True, one_pass=one_pass)
            y, allowed = stage_two(found, scale_rows, bias_rows, x.dtype, x.dtype)
            mean, inv = found.mean.reshape(stats_shape), found.inverse.reshape(stats_shape)
            label = f"{PASSES[one_pass]}, stage one in {stash_name} (stash_type={stash})"
            tiers[0].append(_tier(label, from_rows(allowed, shape, reduced)))
            tiers[1].append(_tier(label, _statistic_allowed(mean, found.mean_error.reshape(stats_shape), compute)))
            tiers[2].append(_tier(label, _statistic_allowed(inv, found.inverse_error.reshape(stats_shape), compute)))
        y = from_rows(y, shape, reduced)
        free = np.zeros(stats_shape, dtype=bool) | (n == 0)
        reading = Reading((_rounded(y, x.dtype), _rounded(mean, compute), _rounded(inv, compute)), precise=(y, mean, inv),
                          free=(None, free, free))
        budgets = tuple(_bound(found_tiers) for found_tiers in tiers)
        may_reject = None
        sizes = [given.size for given in (scale, bias) if given is not None]
        if any(size not in (n, 1) for size in sizes):
            may_reject = LN_BODY_SCALE
        if n == 0:
            may_reject = EMPTY_ROWS
        return Expected(readings=(reading,), budgets=budgets, may_reject=may_reject)


# --- RMSNormalization ---

class RMSNormalization23(VersionSemantics):
    """RMSNormalization-23: X / √(mean(X²) + epsilon) over axis..r-1 in the stash type's
    precision, cast back to X's type, times `scale`, in V."""

    since = 23

    def expected(self, example: Example) -> Expected:
        x, scale = example.inputs["X"], example.inputs["scale"]
        found = axis_and_stash(example, x, FLOAT_TYPES, Invalid("stash-type-not-float", STASH_FLOAT))
        if isinstance(found, Expected):
            return found
        axis, stash = found
        if not unidirectional(scale.shape, x.shape):
            return Expected(invalid=Invalid("not-broadcastable", f"{RMS_BROADCAST}: scale of shape {list(scale.shape)}"))
        compute = FLOAT_TYPES[stash]
        reduced = list(range(axis, x.ndim))
        shape = x.shape
        rows = as_rows(x, shape, reduced)
        eps = float(np.float32(example.attributes.get("epsilon", 1e-5)))
        found = stage_one(rows, compute, eps, centred=False)
        scale_rows = as_rows(scale, shape, reduced).astype(np.float64)
        y, allowed = stage_two(found, scale_rows, None, scale.dtype, x.dtype)
        y, allowed = from_rows(y, shape, reduced), from_rows(allowed, shape, reduced)
        label = f"stage one in {from_elem_type(stash).name} (stash_type={stash})"
        may_reject = None
        if not unidirectional(scale.shape, tuple(shape[axis:])):
            may_reject = f"{RMS_NORMALIZED_SHAPE} (scale of shape {list(scale.shape)}, normalized shape {list(shape[axis:])})"
        if rows.shape[1] == 0:
            may_reject = EMPTY_ROWS
        return Expected(readings=(Reading((_rounded(y, scale.dtype),), precise=(y,)),),
                        budgets=(_bound([_tier(label, allowed)]),), may_reject=may_reject)


# --- MeanVarianceNormalization ---

class MeanVarianceNormalization9(VersionSemantics):
    """MeanVarianceNormalization-9: (X − E[X]) / √(E[(X − E[X])²]) over `axes`, computed in X's
    type or a wider accumulator (a tier each); the body (one-pass, + 1e-9) is a reading of its own."""

    since = 9
    negative_axes = False
    axes_sentence = MVN_AXES_9

    def expected(self, example: Example) -> Expected:
        x = example.inputs["X"]
        written = ints(example.attributes.get("axes"))
        written = [0, 2, 3] if written is None else written
        axes = axes_in(written, x.ndim, self.negative_axes, self.axes_sentence)
        if isinstance(axes, Invalid):
            return Expected(invalid=axes)
        reduced = sorted(set(axes))
        shape = x.shape
        rows = as_rows(x, shape, reduced)
        tiers = []
        y = None
        for label, accumulator in accumulators(x.dtype):
            for one_pass in (False, True):
                found = stage_one(rows, np.dtype(accumulator), 0.0, centred=True, one_pass=one_pass)
                y, allowed = stage_two(found, None, None, x.dtype, x.dtype)
                tiers.append(_tier(f"{PASSES[one_pass]}, {label}", from_rows(allowed, shape, reduced)))
        y = from_rows(y, shape, reduced)
        return Expected(readings=(Reading((_rounded(y, x.dtype),), precise=(y,)),),
                        budgets=(_bound(tiers),),
                        may_reject=EMPTY_ROWS if not rows.shape[1] else REPEATED if len(reduced) != len(axes) else None)


class MeanVarianceNormalization13(MeanVarianceNormalization9):
    """MeanVarianceNormalization-13: bfloat16 allowed; negative axes as the body's ReduceMean-13 counts them."""

    since = 13
    negative_axes = True
    axes_sentence = MVN_AXES_13


# --- GroupNormalization ---

GN_GROUPS = ("num_groups: The number of groups of channels. It should be a divisor of the number of channels `C`.")
GN_RANK = ("X: Input data tensor. Dimensions for image cases are `(N x C x H x W)` ... For non-image cases, the dimensions "
           "are in the form of `(N x C x D1 x D2 ... Dn)`.")
GN_SCALE_21 = "scale: Scale tensor of shape `(C)`. bias: Bias tensor of shape `(C)`."


class GroupNormalization21(VersionSemantics):
    """GroupNormalization-21 (version 18 is deprecated in onnx.defs, and the registry leaves it out):
    per instance and group of C / num_groups channels, (x − mean) / √(variance + epsilon), the
    variance two-pass (the prose's `variance`) or one-pass (the body's E[X²] − E[X]²), in the stash
    type's precision ("the operator casts all input variables to 32-bit float, performs the
    computation, and finally casts the normalized results back to the original type of `X`"), then
    scale and bias per channel in X's type."""

    since = 21

    def expected(self, example: Example) -> Expected:
        stash = int(example.attributes.get("stash_type", 1))
        if stash not in FLOAT_TYPES:
            return Expected(invalid=Invalid("stash-type-not-float", STASH_FLOAT))
        x, scale, bias = example.inputs["X"], example.inputs["scale"], example.inputs["bias"]
        if x.ndim < 2:
            return Expected(invalid=Invalid("rank-below-2", GN_RANK))
        groups = example.attributes.get("num_groups")
        channels = x.shape[1]
        if groups is None or int(groups) <= 0 or channels % int(groups):
            return Expected(invalid=Invalid("groups-not-divisor", f"{GN_GROUPS} (num_groups {groups}, C {channels})"))
        groups = int(groups)
        wanted = (channels,)
        if scale.shape != wanted or bias.shape != wanted:
            return Expected(invalid=Invalid("scale-shape", f"{GN_SCALE_21} (shapes {list(scale.shape)}, {list(bias.shape)})"))
        with np.errstate(invalid="ignore"):
            rows = x.astype(np.longdouble).reshape(x.shape[0] * groups, -1)
        eps = float(np.float32(example.attributes.get("epsilon", 1e-5)))
        per_row = channels // groups * math.prod(x.shape[2:])
        scale_rows, bias_rows = (GroupNormalization21._per_element(given, x.shape, groups) for given in (scale, bias))
        label = f"stage one in {from_elem_type(stash).name} (stash_type={stash})"
        tiers = []
        for one_pass in (False, True):
            found = stage_one(rows, FLOAT_TYPES[stash], eps, centred=True, one_pass=one_pass)
            y, allowed = stage_two(found, scale_rows, bias_rows, x.dtype, x.dtype)
            tiers.append(_tier(f"{PASSES[one_pass]}, {label}", allowed.reshape(x.shape)))
        y = y.reshape(x.shape)
        return Expected(readings=(Reading((_rounded(y, x.dtype),), precise=(y,)),), budgets=(_bound(tiers),),
                        may_reject=EMPTY_ROWS if per_row == 0 and x.size else None)

    @staticmethod
    def _per_element(given: np.ndarray, shape: tuple[int, ...], groups: int) -> np.ndarray:
        """Scale or bias per element, as rows of one instance's group (float64)."""
        channels = shape[1]
        full = np.broadcast_to(given.astype(np.float64).reshape((1, channels) + (1,) * (len(shape) - 2)), shape)
        return full.reshape(shape[0] * groups, -1)


# --- traits: the causes a runtime may deviate by ---

def _rows_of(example: Example) -> tuple[np.ndarray, list[int]] | None:
    x = example.inputs.get("X")
    if x is None or x.ndim == 0:
        return None
    if example.op == "GroupNormalization":
        groups = example.attributes.get("num_groups")
        if x.ndim < 2 or not groups or int(groups) <= 0 or x.shape[1] % int(groups):
            return None
        return x.astype(np.float64).reshape(x.shape[0] * int(groups), -1), []
    if example.op == "MeanVarianceNormalization":
        written = ints(example.attributes.get("axes")) or [0, 2, 3]
        axes = axes_in(written, x.ndim, True, "")
        if isinstance(axes, Invalid):
            return None
        reduced = sorted(set(axes))
    else:
        axis = axis_in(int(example.attributes.get("axis", -1)), x.ndim, True, "")
        if isinstance(axis, Invalid):
            return None
        reduced = list(range(axis, x.ndim))
    return as_rows(x, x.shape, reduced).astype(np.float64), reduced


def empty_axis(example: Example) -> bool:
    """Normalized axes that hold no element (X [2, 0] at axis -1): nothing to normalize, an empty
    output, where a runtime that divides by the count divides by zero."""
    found = _rows_of(example)
    return found is not None and found[0].ndim == 2 and found[0].shape[1] == 0


def large_mean(example: Example) -> bool:
    """A row whose mean is over 100 times its standard deviation: E[x²] − E[x]² cancels there."""
    found = _rows_of(example)
    if found is None or not found[0].size:
        return False
    rows = found[0]
    with np.errstate(all="ignore"):
        mean = rows.mean(axis=1)
        spread = rows.std(axis=1)
    return bool(np.any(np.isfinite(mean) & (np.abs(mean) > 100 * spread) & (mean != 0)))


def constant_row(example: Example) -> bool:
    """A row of equal values: variance 0, Normalized 0 (or with epsilon 0, 0/0)."""
    found = _rows_of(example)
    if found is None or not found[0].size:
        return False
    rows = found[0]
    return bool(np.any(np.isfinite(rows).all(axis=1) & (rows == rows[:, :1]).all(axis=1)))


def non_finite(example: Example) -> bool:
    x = example.inputs.get("X")
    return x is not None and bool((~np.isfinite(x.astype(np.float64))).any())


def infinity_in_row(example: Example) -> bool:
    """A normalized row holding ±inf and no NaN: the text's ReduceMean gives ±inf (or NaN for both
    signs) for its Mean."""
    found = _rows_of(example)
    if found is None or not found[0].size:
        return False
    rows = found[0]
    return bool(np.any(np.isinf(rows).any(axis=1) & ~np.isnan(rows).any(axis=1)))


def stash_bfloat16(example: Example) -> bool:
    return int(example.attributes.get("stash_type", 1)) == 16


def stash_not_float(example: Example) -> bool:
    return int(example.attributes.get("stash_type", 1)) != 1


def scale_not_normalized_shape(example: Example) -> bool:
    """A Scale (or B) that is not of the normalized shape's size: it varies along a kept axis or is a scalar-like 1."""
    x = example.inputs.get("X")
    if x is None or x.ndim == 0:
        return False
    axis = axis_in(int(example.attributes.get("axis", -1)), x.ndim, True, "")
    if isinstance(axis, Invalid):
        return False
    n = math.prod(x.shape[axis:])
    return any(given is not None and given.size != n for name, given in example.inputs.items() if name != "X")


def mixed_types(example: Example) -> bool:
    """RMSNormalization with scale (V) of another type than X (T)."""
    return example.types.get("T") != example.types.get("V")


def half_data(example: Example) -> bool:
    x = example.inputs.get("X")
    return x is not None and x.dtype.itemsize == 2


def output_stats(example: Example) -> bool:
    """LayerNormalization asked for Mean or InvStdDev."""
    return bool(example.outputs) and any(example.outputs[1:]) or not example.outputs and example.op == "LayerNormalization"


def body_ill_typed(example: Example) -> bool:
    """MeanVarianceNormalization of a type other than float: the body's float Epsilon meets X's type
    in `Add(STD, Epsilon)` (and its float Exponent in Pow), which onnx's inference refuses."""
    x = example.inputs.get("X")
    return x is not None and x.dtype != np.float32


def axes_omitted(example: Example) -> bool:
    """MeanVarianceNormalization without `axes` (the default [0, 2, 3])."""
    return example.attributes.get("axes") is None


def checker_refuses(example: Example) -> bool:
    """Where onnx.checker refuses MeanVarianceNormalization's valid model, through its body: a type
    other than float (`body_ill_typed`), or version 13 without `axes`, whose opset-18 body reads
    `Constant<value_ints = @axes>` and finds no value (onnx leaves the default out)."""
    return body_ill_typed(example) or (example.version.since_version == 13 and axes_omitted(example))


def stash_binding(version, binding: dict[str, str]) -> dict:
    """LayerNormalization's stash_type where U is bfloat16 (the attribute names U's type)."""
    return {"stash_type": 16} if binding.get("U") == "bfloat16" else {}


def stash_problem(example: Example) -> str | None:
    stash = int(example.attributes.get("stash_type", 1))
    named = {1: "float", 16: "bfloat16"}.get(stash)
    if named is None or "U" not in example.types or named == example.types["U"]:
        return None
    return f"stash_type {stash} names {named}, but Mean and InvStdDev's type (U) is {example.types['U']}"


COMMON_TRAITS = {"large-mean": large_mean, "constant-row": constant_row, "non-finite": non_finite,
                 "infinity-in-row": infinity_in_row, "empty-axis": empty_axis,
                 "half-data": half_data}

REFERENCES = (
    # The body's one pass is the semantics' own tier ("as the function body computes it"): the core's
    # body path cannot evaluate this body (its ConstantOfShape's output type comes from a tensor
    # attribute the path does not read), and the tier says the same with a bound per element.
    OpReference(op="LayerNormalization", dtype_param="T", semantics=(LayerNormalization17,), data_inputs=("X",),
                body_in_readings=True, binding_attributes=stash_binding, binding_problem=stash_problem,
                traits={**COMMON_TRAITS, "stash-bfloat16": stash_bfloat16, "scale-not-normalized-shape": scale_not_normalized_shape,
                        "output-stats": output_stats},
                rules=("axis-out-of-range", "stash-type-not-allowed", "not-broadcastable")),
    OpReference(op="RMSNormalization", dtype_param="T", semantics=(RMSNormalization23,), data_inputs=("X",),
                traits={**COMMON_TRAITS, "stash-not-float": stash_not_float, "mixed-types": mixed_types,
                        "scale-not-normalized-shape": scale_not_normalized_shape},
                rules=("axis-out-of-range", "stash-type-not-float", "not-broadcastable")),
    OpReference(op="MeanVarianceNormalization", dtype_param="T",
                semantics=(MeanVarianceNormalization9, MeanVarianceNormalization13), data_inputs=("X",),
                traits={**COMMON_TRAITS, "body-ill-typed": body_ill_typed, "axes-omitted": axes_omitted,
                        "checker-refuses": checker_refuses},
                rules=("axis-out-of-range", "negative-axis")),
    OpReference(op="GroupNormalization", dtype_param="T", semantics=(GroupNormalization21,),
                data_inputs=("X",), traits={**COMMON_TRAITS, "stash-not-float": stash_not_float},
                rules=("rank-below-2", "groups-not-divisor", "scale-shape", "stash-type-not-float")),
)
