"""BatchNormalization, versions 1, 6, 7, 9, 14 and 15, from the schema text; its inference form
and its training form (statistics of the batch through reference/normalization.py's shared path).

What each version computes (X of shape (N x C x D1 ... Dn), channel axis 1):

- Inference ("test mode", `training_mode=False`): `Y = (X - input_mean) / sqrt(input_var +
  epsilon) * scale + B` per channel, elementwise. Versions 14 and 15 write it so; the older texts
  name the paper and the inputs (the estimated mean and variance "(testing)").
- Training: `current_mean = ReduceMean(X, axis=all_except_channel_index)`, `current_var =
  ReduceVar(X, ...)`, "the population variance ... sum(sqrd(x_i - x_avg)) / N", `Y = (X -
  current_mean) / sqrt(current_var + epsilon) * scale + B`, `running_mean = input_mean * momentum +
  current_mean * (1 - momentum)` (and the same for the variance). Version 15: "The computation of
  ReduceMean and ReduceVar uses float to avoid overflow for float16 inputs."
- Which mode: versions 14 and 15 by `training_mode` ("When training_mode=False, extra outputs are
  invalid": rule `outputs-in-inference`); versions 7 and 9 by the outputs asked for ("Output case
  #1: Y, mean, var, saved_mean, saved_var (training mode) / Output case #2: Y (test mode)");
  versions 1 and 6 by `is_test` ("If set to nonzero, run spatial batch normalization in test mode,
  default is 0"), which with Y alone asked for contradicts the output cases: both are readings.
- Versions 1 to 9's training outputs: `mean` and `var` the running statistics (the text gives the
  update for the mean, "e.g., running_mean = running_mean * momentum + mean * (1 - momentum)"; the
  variance by the same rule, of the population or of the sample (the paper's unbiased estimate):
  two readings); `saved_mean` and `saved_var` are "used during training to speed up gradient
  computation", their values unstated (any value: caffe2 saved the inverse deviation).
- `spatial=0` (versions 1, 6, 7): statistics per activation, over N alone. Version 7 gives scale,
  B, mean and var the shape (C x D1 x ... x Dn) then; versions 1 and 6 keep them "of size C", which
  per-activation statistics cannot fill: the running outputs are any value there, and a runtime
  may reject the case.
- Shapes: version 1's X is "The input 4-dimensional tensor of shape NCHW" (another rank may be
  rejected); versions 6 and 7 need the channel axis (rank >= 2); 9 on "also accepts single
  dimension input of size N in which case C is assumed to be 1". scale, B, mean and var of shape
  (C) (rule `parameter-shape`).

Judging. Inference is elementwise: the text's order (a subtraction, the add of epsilon, a root,
a division, a multiply, an add) or the fused form a runtime folds it into (a = scale /
sqrt(var + epsilon), c = B - mean·a, Y = a·X + c), whose error grows with |X| and |mean| where
the text's grows with |X - mean|; the text does not fix the order, so the bound covers both:
|a|·(|X − mean| + |X| + |mean|)·G + 2u·|B| + u·|Y| + ½ulp(Y), G the growth of six roundings and
the root's relative error (normalization.py's RSQRT_ULPS), per computation type (X's type, or
float32 for a 16-bit X). Where every step of both orders is exact (var + epsilon a power of four,
scale, mean and B dyadic) only the final rounding remains: judged to half an ULP. Training uses
normalization.py's stage one (the two-pass variance the text writes, in any summation order) and
stage two, plus the folded form's term; the one-pass E[X²] − E[X]² is no reading of this text (it
writes `sum(sqrd(x_i - x_avg)) / N`), and where it cancels (rows of large mean) a runtime that uses
it fails (trait `large-mean`). The running statistics get the error of the current ones carried
through the momentum update.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, exactly_summable, gamma, half_ulp, least_subnormal, unit_roundoff
from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics
from .normalization import RSQRT_ULPS, Normalized, non_finite, stage_one, stage_two

EXACT_CHECK_LIMIT = 20000  # elements checked in rational arithmetic; past it the general bound alone
OUTPUTS_IN_INFERENCE = "When training_mode=False, extra outputs are invalid."
RANK_6 = ("X: ... dimensions for image case are (N x C x H x W) ... For non image case, the dimensions are in the form "
          "of (N x C x D1 x D2 ... Dn), where N is the batch size. (a rank below 2 has no channel axis)")
RANK_9 = ("X: ... dimensions are in the form of (N x C x D1 x D2 ... Dn) ... The op also accepts single dimension input "
          "of size N in which case C is assumed to be 1 (a rank-0 X has neither)")
RANK_1 = "X: The input 4-dimensional tensor of shape NCHW."
SHAPE_C = "scale: Scale tensor of shape (C). B: Bias tensor of shape (C). ... mean tensor of shape (C). ... variance tensor of shape (C)."
SHAPE_C_1 = "scale: The scale as a 1-dimensional tensor of size C to be applied to the output. (B, mean and var likewise)"
SHAPE_7 = ("scale: If spatial is true, the dimension of scale is (C). If spatial is false, the dimensions of scale are "
           "(C x D1 x ... x Dn) (B, mean and var likewise)")
SAVED = ("saved_mean, saved_var: Saved mean (variance) used during training to speed up gradient computation: the text "
         "gives no value (caffe2 saved the inverse standard deviation)")
IS_TEST_VS_OUTPUTS = ("is_test: If set to nonzero, run spatial batch normalization in test mode, default is 0; yet "
                      "'Output case #2: Y (test mode)': with is_test=0 and Y alone, the batch's statistics or the given ones")
RUNNING_VAR = ("momentum: Factor used in computing the running mean and variance.e.g., running_mean = running_mean * "
               "momentum + mean * (1 - momentum): the text names no variance estimator (the paper's is unbiased)")
TEST_OUTPUTS = "mean, var, saved_mean, saved_var: ... Should not be used for testing. (is_test=1 with them asked for)"
SPATIAL_SIZE_C = ("spatial: If false, compute the mean and variance across per feature; yet mean and var are "
                  "1-dimensional tensors of size C: per-activation running statistics have no place there")
V1_RANK = "X: The input 4-dimensional tensor of shape NCHW. (another rank may be rejected)"
OUTPUT_CASES = ("Depending on the mode it is being run, there are multiple cases for the number of outputs, which we list "
                "below: Output case #1: Y, mean, var, saved_mean, saved_var (training mode) Output case #2: Y (test mode) "
                "(versions 1 and 6 have no optional-output sentence: another count is neither case)")
TRAINING_OUTPUTS = ("There are multiple cases for the number of outputs, which we list below: Output case #1: Y, running_mean, "
                    "running_var (training_mode=True) (fewer outputs in training mode are none of the cases)")
EMPTY = "statistics over an empty batch: ReduceMean of no values is undefined, and a runtime may reject the input"
FLOAT16_IN_FLOAT = "The computation of ReduceMean and ReduceVar uses float to avoid overflow for float16 inputs."
FORMULA = ("|a|·(|X − mean| + |X| + |mean|)·G + 2u|B| + u|Y| + ½ulp(Y), a = scale/√(var + ε), G six roundings and "
           "the root's (text order or folded a·X + c)")
REASON = ("the error of the text's order of steps or of the folded a·X + (B − mean·a) form a runtime may use, per "
          "computation type; exact where every step of both is exact")
TRAINING_FORMULA = "stage one's bound (two-pass variance, any order) through stage two, plus the folded form's u·|a|(|X| + |mean|)"


# --- shared pieces (InstanceNormalization uses them too) ---

def channel_shape(parameter: np.ndarray, rank: int) -> np.ndarray:
    """A per-channel (or per-activation) parameter laid out to broadcast against X of `rank`."""
    if rank <= 1:
        return parameter.reshape(parameter.shape[-1:] if parameter.ndim else (1,))
    return parameter.reshape((1,) + parameter.shape + (1,) * (rank - 1 - parameter.ndim))


def _exact_in(values: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    """Where a (long double) value is exactly one of the type's values, a non-finite one included."""
    with np.errstate(over="ignore", invalid="ignore"):
        back = values.astype(np.float64).astype(np_dtype).astype(np.longdouble)
    return (back == values) | np.isnan(values) & np.isnan(back)


def _compute_types(x_dtype: np.dtype) -> tuple[tuple[str, np.dtype], ...]:
    """The types a runtime may compute in, tightest first: X's own, or float32 for a 16-bit X."""
    return tuple((label.replace("accumulated", "computed"), np.dtype(t)) for label, t in accumulators(x_dtype))


def inference_bound(x: np.ndarray, scale: np.ndarray, bias: np.ndarray, mean: np.ndarray, var: np.ndarray, eps: float,
                    out: np.dtype) -> tuple[np.ndarray, list[Tier]]:
    """Y = (X − mean) / √(var + ε)·scale + B elementwise (parameters already laid out to broadcast):
    the exact Y (float64) and a tier per computation type covering the text's order and the folded
    a·X + c form."""
    with np.errstate(all="ignore"):
        xs, ss, bs, ms, vs = (np.asarray(a).astype(np.longdouble) for a in (x, scale, bias, mean, var))
        xs, ss, bs, ms, vs = np.broadcast_arrays(xs, ss, bs, ms, vs)
        e = np.longdouble(eps)
        w = vs + e
        root = np.sqrt(w)
        r = 1 / root
        d = xs - ms
        a = ss * r
        y_wide = _precise(xs, ss, bs, ms, r).astype(np.float64)
        finite_in = np.isfinite(xs) & np.isfinite(ss) & np.isfinite(bs) & np.isfinite(ms) & np.isfinite(vs)
        tiers = []
        for label, compute in _compute_types(np.dtype(out)):
            u = unit_roundoff(compute)
            eta = 0.5 * least_subnormal(compute)
            w64 = w.astype(np.float64)
            w_error = u * (np.abs(vs.astype(np.float64)) + abs(eps) + np.abs(w64)) + eta
            rho_w = np.where(w64 > 0, w_error / np.where(w64 > 0, w64, 1.0), np.inf)
            rho_r = (1 + RSQRT_ULPS * u) / (np.sqrt(np.maximum(1 - rho_w, 0.0)) * (1 - u)) - 1
            growth = (1 + rho_r) * (1 + u) ** 6 - 1
            magnitude = np.abs(a.astype(np.float64)) * (np.abs(d.astype(np.float64)) + np.abs(xs.astype(np.float64))
                                                        + np.abs(ms.astype(np.float64)))
            allowed = (magnitude * growth + 2 * u * np.abs(bs.astype(np.float64)) + u * np.abs(y_wide)
                       + 4 * eta * (1 + np.abs(a.astype(np.float64))) + half_ulp(y_wide, out))
            # Where var + ε may be computed as 0 or below (its error reaches it), no requirement.
            unbounded = (rho_w >= 1) & ~((w64 < 0) & (w_error < np.abs(w64)))
            allowed = np.where(unbounded, np.inf, allowed)
            exact, exact_values = _every_step_exact(xs, ss, bs, ms, vs, e, compute)
            y_wide = np.where(exact, exact_values, y_wide)
            final = half_ulp(y_wide, out) + (half_ulp(y_wide, compute) if compute != np.dtype(out) else 0.0)
            allowed = np.where(exact & ~unbounded, final, allowed)
            # A non-finite input: both orders give the text's special value (or B where var is inf).
            allowed = np.where(~finite_in & ~unbounded, np.where(np.isfinite(y_wide), final, 0.0), allowed)
            allowed = np.where(~np.isfinite(y_wide) & ~unbounded, 0.0, allowed)
            tiers.append(Tier(label, allowed, np.ones_like(allowed)))
    return y_wide, tiers


def _every_step_exact(xs, ss, bs, ms, vs, e, compute: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Where every intermediate of the text's order and of the folded form is exact in `compute`
    (only the final add rounds), checked in rational arithmetic on the elements long double finds
    representable (long double itself rounds: x − m of far-apart magnitudes); and there the exact Y."""
    with np.errstate(all="ignore"):
        w = vs + e
        r = 1 / np.sqrt(w)
        d = xs - ms
        a = ss * r
        steps = (xs, ss, bs, ms, vs, np.broadcast_to(e, xs.shape), w, np.sqrt(w), r, d, d * r, d * r * ss, a, ms * a,
                 bs - ms * a, a * xs)
        candidate = np.ones(xs.shape, dtype=bool)
        for step in steps:
            candidate &= _exact_in(step, compute) & np.isfinite(step)
    exact = np.zeros(xs.shape, dtype=bool)
    values = np.zeros(xs.shape, dtype=np.float64)
    where = np.argwhere(candidate)
    if len(where) > EXACT_CHECK_LIMIT:
        return exact, values
    for index in map(tuple, where):
        found = _rational_chain(*(Fraction(float(a[index])) for a in (xs, ss, bs, ms, vs)), Fraction(float(e)), compute)
        if found is not None:
            exact[index], values[index] = True, float(found)
    return exact, values


def _rational_chain(x: Fraction, s: Fraction, b: Fraction, m: Fraction, v: Fraction, e: Fraction, compute: np.dtype) -> Fraction | None:
    """Y exactly where each step of both orders is representable in `compute`, else None."""
    w = v + e
    if w <= 0:
        return None
    num, den = math.isqrt(w.numerator), math.isqrt(w.denominator)
    if num * num != w.numerator or den * den != w.denominator:
        return None
    root = Fraction(num, den)
    r = 1 / root
    d = x - m
    a = s * r
    for step in (w, root, r, d, d * r, d * r * s, a, m * a, b - m * a, a * x):
        if not _representable(step, compute):
            return None
    return d * r * s + b


def _representable(value: Fraction, compute: np.dtype) -> bool:
    near = float(value)
    return math.isfinite(near) and Fraction(near) == value and float(np.float64(near).astype(compute)) == near


def _precise(xs, ss, bs, ms, r) -> np.ndarray:
    """Y in long double with X − mean split exactly (two-sum): its far-apart magnitudes would round."""
    d = xs - ms
    virtual = d - xs
    low = (xs - (d - virtual)) + (-ms - virtual)
    low = np.where(np.isfinite(low), low, 0)
    a = r * ss
    return (d * a + bs) + np.where(low != 0, low * a, 0)


def folded_term(scale_rows: np.ndarray, bias_rows: np.ndarray, found: Normalized, rows: np.ndarray, u: float) -> np.ndarray:
    """What the folded form a·X + (B − mean·a), a = scale·InvStdDev, adds to stage two's bound in
    a computation of unit roundoff u: three roundings of |a|·(|X| + |mean|), two of |B| (the
    subtraction's, where B − mean·a is about B)."""
    a = np.abs(scale_rows) * np.abs(found.inverse)[:, None]
    wide = np.abs(rows.astype(np.float64))
    with np.errstate(all="ignore"):
        term = 3 * u * a * (wide + np.abs(found.mean)[:, None]) + 2 * u * np.abs(bias_rows)
    return np.where(np.isfinite(term), term, 0.0)


def variance_error(rows: np.ndarray, found: Normalized, compute: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """The population variance of each row (float64) and its error bound in `compute`, two-pass as
    the text writes it: normalization.py's E_v (the mean's error enters squared, each deviation's
    own rounding, the sum of squares in any order), 0 where every step is exact. (normalization.py
    keeps it inside stage_one; see the report for a field it could expose.)"""
    n = rows.shape[1]
    u = unit_roundoff(compute)
    eta = 0.5 * least_subnormal(compute)
    with np.errstate(all="ignore"):
        mean = rows.sum(axis=1) / max(n, 1)
        deviations = rows - mean[:, None]
        squares = deviations * deviations
        variance = squares.sum(axis=1) / max(n, 1)
        v = variance.astype(np.float64)
        d = np.abs(deviations.astype(np.float64))
        e = found.mean_error
        inputs_exact = _exact_in(rows, compute).all(axis=1)
        own = np.where(inputs_exact, 0.0, u)[:, None] * np.abs(rows.astype(np.float64)) + u * (d + e[:, None])
        g = gamma(n + 2, u)
        per = max(n, 1)
        error = ((e * e + (own * own).sum(axis=1) / per + 2 * (d * own).sum(axis=1) / per + 2 * e * own.sum(axis=1) / per)
                 * (1 + g) + g * v + 2 * eta)
        power_of_two = n > 0 and n & (n - 1) == 0
        exact = ((e == 0) & inputs_exact & _exact_in(deviations, compute).all(axis=1) & _exact_in(squares, compute).all(axis=1)
                 & exactly_summable(np.where(np.isfinite(squares), squares, 0.0).astype(np.float64), compute)
                 & _exact_in(variance, compute) & power_of_two)
        error = np.where(exact, 0.0, error)
        # A sum (of the values, or of the squares) that may pass the type's max: no requirement.
        top = float(ml_dtypes.finfo(compute).max)
        summed = np.abs(rows.astype(np.float64)).sum(axis=1)
        past = (summed * (1 + 4 * u) > top) | (np.abs(squares.astype(np.float64)).sum(axis=1) * (1 + 4 * u) > top)
        error = np.where(past, np.inf, error)
        finite = np.isfinite(rows.astype(np.float64)).all(axis=1)
        error = np.where(finite, error, 0.0)
    return v, error


def training_y(rows: np.ndarray, scale_rows: np.ndarray, bias_rows: np.ndarray, eps: float, out: np.dtype,
               computes: tuple[tuple[str, np.dtype], ...]) -> tuple[np.ndarray, list[Tier], list[tuple[Normalized, np.dtype]]]:
    """Y normalized by each row's own statistics (two-pass), scale and B per element of the rows:
    the exact Y (rows × n), a tier per computation type, and stage one's result per type."""
    tiers, found_all = [], []
    y = None
    for label, compute in computes:
        found = stage_one(rows, compute, eps, centred=True)
        y, allowed = stage_two(found, scale_rows, bias_rows, out, out)
        with np.errstate(invalid="ignore"):
            extra = folded_term(scale_rows, bias_rows, found, rows, unit_roundoff(compute))
            allowed = np.where(np.isfinite(allowed) & ~np.isinf(found.z_error), allowed + extra, allowed)
        tiers.append(Tier(f"two-pass variance, {label}", allowed, np.ones_like(allowed)))
        found_all.append((found, compute))
    return y, tiers, found_all


def running(given: np.ndarray, current: np.ndarray, current_error: np.ndarray, momentum: float, out: np.dtype,
            compute: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """given·momentum + current·(1 − momentum), exact (float64) and its bound: the current value's
    error scaled by 1 − momentum, three roundings of the terms, the output's rounding."""
    u = max(unit_roundoff(compute), unit_roundoff(out))
    with np.errstate(all="ignore"):
        g = given.astype(np.longdouble)
        m = np.longdouble(momentum)
        value = g * m + current.astype(np.longdouble) * (1 - m)
        wide = value.astype(np.float64)
        terms = np.abs(g.astype(np.float64) * momentum) + np.abs(current * (1 - momentum))
        carried = np.where(np.isinf(current_error), np.inf, abs(1 - momentum) * current_error * (1 + u) ** 2)
        allowed = terms * gamma(4, u) + carried + half_ulp(wide, out) + least_subnormal(out)
        allowed = np.where(np.isfinite(wide) | np.isinf(current_error), allowed, 0.0)
    return wide, allowed


def loosest(tiers: list[Tier], formula: str, reason: str) -> ElementBound:
    """An ElementBound over tiers (tightest first), the last made the loosest of all per element."""
    widest = np.maximum.reduce([tier.allowed for tier in tiers])
    return ElementBound((*tiers[:-1], Tier(tiers[-1].label, widest, tiers[-1].ksb)), formula, reason)


def rounded(values: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(values).astype(np_dtype)


# --- BatchNormalization ---

class BatchNormalization1(VersionSemantics):
    """BatchNormalization-1 (and the versions after it through `is_training`, `parameter_shape`,
    `outputs`): see the module's docstring. `consumed_inputs` is a legacy hint without meaning."""

    since = 1
    mean_name, var_name = "mean", "var"
    rank_sentence = RANK_6
    min_rank = 2
    has_spatial = True

    def expected(self, example: Example) -> Expected:
        inputs = example.inputs
        x = inputs["X"]
        params = [inputs[name] for name in ("scale", "B", self.mean_name, self.var_name)]
        if x.ndim < self.min_rank:
            return Expected(invalid=Invalid("rank-below-2", self.rank_sentence))
        spatial = not self.has_spatial or int(example.attributes.get("spatial", 1)) != 0
        problem = self.parameter_problem(x.shape, params, spatial)
        if problem is not None:
            return Expected(invalid=problem)
        invalid = self.mode_problem(example)
        if invalid is not None:
            return Expected(invalid=invalid)
        eps = float(np.float32(example.attributes.get("epsilon", 1e-5)))
        momentum = float(np.float32(example.attributes.get("momentum", 0.9)))
        modes = self.modes(example)
        per_mode = [self.answer(example, x, params, eps, momentum, spatial, training) for training in modes]
        return self.combined(per_mode, example, x, spatial, modes)

    # -- what decides the mode and the shapes, per version --

    def modes(self, example: Example) -> tuple[bool, ...]:
        """The modes the text allows for the case, as training flags (two where it is ambiguous)."""
        if int(example.attributes.get("is_test", 0)) != 0:
            return (False,)
        return (True,) if self.extra_outputs(example) else (True, False)

    def mode_problem(self, example: Example) -> Invalid | None:
        if type(self).since < 7 and len(example.output_positions) not in (1, 5):
            return Invalid("training-outputs", OUTPUT_CASES)
        return None

    def extra_outputs(self, example: Example) -> bool:
        return any(position > 0 for position in example.output_positions)

    def parameter_problem(self, shape: tuple[int, ...], params: list[np.ndarray], spatial: bool) -> Invalid | None:
        wanted = (shape[1],) if len(shape) > 1 else (1,)
        if any(p.shape != wanted for p in params):
            return Invalid("parameter-shape", f"{self.shape_sentence()} (shapes {[list(p.shape) for p in params]}, C = {wanted[0]})")
        return None

    def shape_sentence(self) -> str:
        return SHAPE_C_1

    def stats_types(self, example: Example) -> tuple[np.dtype, np.dtype]:
        """The types of the running statistics' outputs and of scale/B."""
        x = example.inputs["X"]
        return x.dtype, x.dtype

    def computes(self, x_dtype: np.dtype) -> tuple[tuple[str, np.dtype], ...]:
        """The stage-one computation types in training, tightest first."""
        return _compute_types(x_dtype)

    def may_reject(self, example: Example, spatial: bool) -> str | None:
        x = example.inputs["X"]
        if int(example.attributes.get("is_test", 0)) != 0 and self.extra_outputs(example):
            return TEST_OUTPUTS
        if not spatial and self.has_spatial and self.extra_outputs(example) and type(self).since < 7:
            return SPATIAL_SIZE_C
        if type(self).since == 1 and x.ndim != 4:
            return V1_RANK
        return None

    # -- the answer of one mode --

    def answer(self, example: Example, x: np.ndarray, params: list[np.ndarray], eps: float, momentum: float, spatial: bool,
               training: bool) -> list[tuple[list[Reading], list]]:
        scale, bias, mean, var = params
        stats_out, _ = self.stats_types(example)
        c = x.shape[1] if x.ndim > 1 else 1
        if not training:
            y, tiers = inference_bound(x, channel_shape(scale, x.ndim), channel_shape(bias, x.ndim), channel_shape(mean, x.ndim),
                                       channel_shape(var, x.ndim), eps, x.dtype)
            stats = self.untouched_stats(params, stats_out, c)
            return [(y, tiers, stats)]
        rows, back = self.batch_rows(x, spatial)
        scale_rows, bias_rows = (self.batch_rows(np.broadcast_to(channel_shape(p, x.ndim), x.shape), spatial)[0].astype(np.float64)
                                 for p in (scale, bias))
        y, tiers, found_all = training_y(rows, scale_rows, bias_rows, eps, x.dtype, self.computes(x.dtype))
        y = back(y)
        tiers = [Tier(t.label, back(t.allowed), back(t.ksb)) for t in tiers]
        if not self.extra_outputs(example):
            return [(y, tiers, None)]
        return [(y, tiers, stats) for stats in self.running_stats(rows, found_all, mean, var, momentum, stats_out, spatial, c)]

    def batch_rows(self, x: np.ndarray, spatial: bool):
        """X as rows of the values each statistic reduces (one per channel, or per activation where
        not `spatial`), long double, and the function that lays such rows back out as X."""
        shape = x.shape
        if x.ndim == 1:
            return x.astype(np.longdouble).reshape(1, -1), lambda rows: np.asarray(rows).reshape(shape)
        if spatial:
            moved = np.moveaxis(x.astype(np.longdouble), 1, 0)
            moved_shape = moved.shape
            return (moved.reshape(shape[1], -1),
                    lambda rows: np.moveaxis(np.asarray(rows).reshape(moved_shape), 0, 1))
        flat = x.astype(np.longdouble).reshape(shape[0], -1)
        return flat.T, lambda rows: np.asarray(rows).T.reshape(shape)

    def untouched_stats(self, params, stats_out, c):
        """The statistics outputs of an inference run: the text gives none (free)."""
        return None

    def running_stats(self, rows, found_all, mean, var, momentum, stats_out, spatial, c):
        """The running statistics' readings of versions 1 to 9: mean, var (population or sample), saved_mean, saved_var
        (any value); per activation with size-C inputs (versions 1, 6), mean and var any value too."""
        if not spatial and type(self).since < 7:
            return [_free_outputs(4, mean.shape, stats_out)]
        found, compute = found_all[-1]
        v, v_error = variance_error(rows, found, compute)
        n = rows.shape[1]
        m_value, m_allowed = running(mean.reshape(-1), found.mean, found.mean_error, momentum, stats_out, compute)
        options = []
        for unbiased in (False, True):
            with np.errstate(all="ignore"):
                current = v * n / (n - 1) if unbiased else v
                error = v_error * n / (n - 1) if unbiased else v_error
            if unbiased and n < 2:
                continue
            v_value, v_allowed = running(var.reshape(-1), current, error, momentum, stats_out, compute)
            label = "running var of the sample variance (n − 1)" if unbiased else "running var of the population variance"
            options.append(((m_value, m_allowed), (v_value, v_allowed), label))
        shaped = mean.shape
        return [{"values": [(val.reshape(shaped), allow.reshape(shaped)) for val, allow in (mv, vv)]
                 + [None, None], "label": label, "free_shape": shaped, "dtype": stats_out}
                for mv, vv, label in options]

    # -- all modes and readings into one Expected --

    def output_count(self) -> int:
        return 5

    def combined(self, per_mode, example: Example, x: np.ndarray, spatial: bool, modes: tuple[bool, ...]) -> Expected:
        readings_: list[Reading] = []
        y_tiers: list[list[Tier]] = []
        stat_allowed: dict[int, list[np.ndarray]] = {}
        stats_out, _ = self.stats_types(example)
        count = self.output_count()
        for training, answers in zip(modes, per_mode):
            for y, tiers, stats in answers:
                y_tiers.append(tiers)
                mode = "training (the batch's statistics)" if training else "inference (the given statistics)"
                outputs, precise, free = [rounded(y, x.dtype)], [y], [None]
                label = mode
                for k in range(1, count):
                    value = None if stats is None else stats["values"][k - 1]
                    shape = (stats or {}).get("free_shape", (x.shape[1] if x.ndim > 1 else 1,))
                    if value is None:
                        outputs.append(np.zeros(shape, dtype=stats_out))
                        precise.append(None)
                        free.append(np.ones(shape, dtype=bool))
                    else:
                        outputs.append(rounded(value[0], stats_out))
                        precise.append(value[0])
                        free.append(None)
                        stat_allowed.setdefault(k, []).append(value[1])
                if stats is not None and stats.get("label"):
                    label = f"{mode}; {stats['label']}"
                readings_.append(Reading(tuple(outputs), label, precise=tuple(precise), free=tuple(free)))
        # The tiers of every reading, by label, loosest per element: each reading's Y is judged by its own precise value.
        merged = _merge_tiers(y_tiers)
        budgets = [loosest(merged, FORMULA if not any(modes) else TRAINING_FORMULA, REASON)]
        for k in range(1, count):
            found = stat_allowed.get(k)
            budgets.append(None if not found else loosest([Tier("running statistics", np.maximum.reduce(found),
                                                                np.ones_like(found[0]))], "γ(4)·terms + (1 − momentum)·E", REASON))
        ambiguity = None
        if len(modes) > 1:
            ambiguity = IS_TEST_VS_OUTPUTS
        elif len(readings_) > 1:
            ambiguity = RUNNING_VAR
        may_reject = self.may_reject(example, spatial)
        if any(modes) and x.size == 0:
            may_reject = EMPTY
        return Expected(readings=tuple(readings_), budgets=tuple(budgets), ambiguity=ambiguity, may_reject=may_reject)


def _free_outputs(count: int, shape: tuple[int, ...], np_dtype: np.dtype) -> dict:
    return {"values": [None] * count, "label": "", "free_shape": shape, "dtype": np_dtype}


def _merge_tiers(groups: list[list[Tier]]) -> list[Tier]:
    """Tiers of the same label from several readings, the loosest per element."""
    labels = list(dict.fromkeys(t.label for tiers in groups for t in tiers))
    merged = []
    for label in labels:
        found = [t.allowed for tiers in groups for t in tiers if t.label == label]
        merged.append(Tier(label, np.maximum.reduce(found), np.ones_like(found[0])))
    return merged


class BatchNormalization6(BatchNormalization1):
    """BatchNormalization-6: X of any rank from 2, (N x C x D1 ... Dn); `consumed_inputs` gone."""

    since = 6


class BatchNormalization7(BatchNormalization1):
    """BatchNormalization-7: no `is_test`: the outputs asked for decide the mode; with `spatial=0`
    scale, B, mean and var are of shape (C x D1 x ... x Dn) and the statistics per activation."""

    since = 7

    def modes(self, example: Example) -> tuple[bool, ...]:
        return (self.extra_outputs(example),)

    def parameter_problem(self, shape, params, spatial):
        wanted = (shape[1],) if spatial else tuple(shape[1:])
        if any(p.shape != wanted for p in params):
            return Invalid("parameter-shape", f"{SHAPE_7} (shapes {[list(p.shape) for p in params]}, wanted {list(wanted)})")
        return None


class BatchNormalization9(BatchNormalization7):
    """BatchNormalization-9: `spatial` gone (always per channel); a rank-1 X of size N has C = 1."""

    since = 9
    rank_sentence = RANK_9
    min_rank = 1
    has_spatial = False

    def parameter_problem(self, shape, params, spatial):
        wanted = (shape[1],) if len(shape) > 1 else (1,)
        if any(p.shape != wanted for p in params):
            return Invalid("parameter-shape", f"{SHAPE_C} (shapes {[list(p.shape) for p in params]}, C = {wanted[0]})")
        return None


class BatchNormalization14(BatchNormalization9):
    """BatchNormalization-14: `training_mode` decides; outputs Y, running_mean, running_var (U);
    running statistics by the text's momentum update of the population variance."""

    since = 14
    mean_name, var_name = "input_mean", "input_var"

    def modes(self, example: Example) -> tuple[bool, ...]:
        return (int(example.attributes.get("training_mode", 0)) != 0,)

    def mode_problem(self, example: Example) -> Invalid | None:
        asked = len(example.output_positions)
        if int(example.attributes.get("training_mode", 0)) == 0 and self.extra_outputs(example):
            return Invalid("outputs-in-inference", OUTPUTS_IN_INFERENCE)
        if int(example.attributes.get("training_mode", 0)) != 0 and asked != 3:
            return Invalid("training-outputs", TRAINING_OUTPUTS)
        return None

    def output_count(self) -> int:
        return 3

    def stats_types(self, example: Example) -> tuple[np.dtype, np.dtype]:
        return example.inputs[self.mean_name].dtype, example.inputs["scale"].dtype

    def running_stats(self, rows, found_all, mean, var, momentum, stats_out, spatial, c):
        found, compute = found_all[-1]
        v, v_error = variance_error(rows, found, compute)
        m_value, m_allowed = running(mean.reshape(-1), found.mean, found.mean_error, momentum, stats_out, compute)
        v_value, v_allowed = running(var.reshape(-1), v, v_error, momentum, stats_out, compute)
        return [{"values": [(m_value.reshape(mean.shape), m_allowed.reshape(mean.shape)),
                            (v_value.reshape(var.shape), v_allowed.reshape(var.shape))],
                 "label": "", "free_shape": mean.shape, "dtype": stats_out}]

    def may_reject(self, example: Example, spatial: bool) -> str | None:
        return None


class BatchNormalization15(BatchNormalization14):
    """BatchNormalization-15: scale and B of T1, input_mean and input_var of T2; "The computation of
    ReduceMean and ReduceVar uses float to avoid overflow for float16 inputs"."""

    since = 15

    def computes(self, x_dtype: np.dtype) -> tuple[tuple[str, np.dtype], ...]:
        found = _compute_types(x_dtype)
        if np.dtype(x_dtype) == np.float16:
            return tuple((label, t) for label, t in found if t == np.float32)
        return found


# --- traits ---

def training(example: Example) -> bool:
    """The case runs in training mode (by `training_mode`, `is_test=0` or the outputs asked for)."""
    if "training_mode" in example.attributes or example.version.since_version >= 14:
        return int(example.attributes.get("training_mode", 0)) != 0
    if example.version.since_version < 7 and int(example.attributes.get("is_test", 0)) == 0:
        return True
    return any(position > 0 for position in example.output_positions)


def batch_rows_of(example: Example) -> np.ndarray | None:
    x = example.inputs.get("X")
    if x is None or x.ndim == 0 or not x.size:
        return None
    if x.ndim == 1:
        return x.astype(np.float64).reshape(1, -1)
    if int(example.attributes.get("spatial", 1)) == 0 and example.version.since_version < 9:
        return x.astype(np.float64).reshape(x.shape[0], -1).T
    return np.moveaxis(x.astype(np.float64), 1, 0).reshape(x.shape[1], -1)


def large_mean(example: Example) -> bool:
    """Training on a channel whose mean is over 100 times its spread: E[X²] − E[X]² cancels there."""
    rows = batch_rows_of(example)
    if rows is None or not training(example):
        return False
    with np.errstate(all="ignore"):
        mean, spread = rows.mean(axis=1), rows.std(axis=1)
    return bool(np.any(np.isfinite(mean) & (np.abs(mean) > 100 * spread) & (mean != 0)))


def spatial_off(example: Example) -> bool:
    return int(example.attributes.get("spatial", 1)) == 0


def mixed_types(example: Example) -> bool:
    """Version 15 with scale/B (T1) or mean/var (T2) of another type than X (T)."""
    return len({example.types.get(p) for p in ("T", "T1", "T2") if p in example.types}) > 1


def half_data(example: Example) -> bool:
    x = example.inputs.get("X")
    return x is not None and x.dtype.itemsize == 2


def rank_one(example: Example) -> bool:
    x = example.inputs.get("X")
    return x is not None and x.ndim == 1


def momentum_outputs(example: Example) -> bool:
    return training(example) and any(position > 0 for position in example.output_positions)


REFERENCES = (
    OpReference(op="BatchNormalization", dtype_param="T",
                semantics=(BatchNormalization1, BatchNormalization6, BatchNormalization7, BatchNormalization9,
                           BatchNormalization14, BatchNormalization15),
                data_inputs=("X",), covering_bindings=True,
                traits={"training": training, "large-mean": large_mean, "spatial-off": spatial_off, "mixed-types": mixed_types,
                        "half-data": half_data, "rank-one": rank_one, "running-statistics": momentum_outputs,
                        "non-finite": non_finite},
                rules=("rank-below-2", "parameter-shape", "outputs-in-inference", "training-outputs")),
)
