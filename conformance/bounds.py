"""Per-element error bounds for ops that accumulate (sums, means, dot products, their compositions).

A correct runtime may sum in any order, block the sum, fuse with FMA, or accumulate a 16-bit type
in float32, so no fixed ULP budget fits these ops: it fails correct runtimes on long sums or hides
bugs on short ones. An `ElementBound` instead states, per output element, the largest error a
correct implementation may show, computed from that element's own terms:

    |ŷ − y| ≤ ½·ulp_out(y) + γ(n−1, u_acc)·Σ|a_k|,   γ(m, u) = (1 + u)^m − 1

the rounding of the result to the output type, and Higham's bound for a sum of n terms in any
order in an accumulator of unit roundoff u_acc (a dot product of n products, each exact or
rounded, takes γ(n)). y is the exact value of the terms as the inputs are rounded to their type.
Each op builds its bound from these pieces (`sum_bound`, `gamma`), carrying it through the steps
its text defines after the sum (a division, a square root, a logarithm).

The accumulator's precision is a reading of the text, which does not fix it: the bound holds a
tier per accumulator a runtime may use (float16 accumulated in float32, or in float16), tightest
first, and the verdict names the tightest tier the runtime met. Where every partial sum in any
order is exact in a tier's accumulator (small integers, dyadic values: `exactly_summable`), that
tier allows the correctly rounded result alone, so a dropped term, a wrong axis or a transposed
operand is told bitwise.

Errors are measured in units of the bound (an error of 0.25 is a quarter of what the bound
allows): within 1 the output passes, up to BOUND_LINE it is imprecise (an accumulation worse than
the worst case of any order, not a wrong answer), beyond it wrong. Over an output of at least
STATISTICAL_MIN elements the errors also pass TOSA's statistical test (the sum of squared errors,
normalised by half an output ULP at Σ|a|, below 1.6·ksb per element): a biased or truncating
accumulator that every element's worst case admits is imprecise. NaN, ±inf and exact zeros of
exact sums are judged exactly; where the bound reaches past the type's max, the overflow value
(inf, or NaN in a type without inf) is allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .precision import (ACCUMULATION_UNIT, BEYOND_BUDGET, CORRECTLY_ROUNDED, FAITHFUL, FLOAT64_REFERENCE_SLACK,
                        WITHIN_BUDGET, BudgetCheck, OutputCheck, spacing, ulp_error)

# Beyond this many times the bound an output is wrong: the bound is already the worst case of every
# summation order, which real sums stay far inside (their errors grow as √n, the bound as n); an
# element up to 4x past it is an accumulation worse than any order allows but not a wrong value.
# A dropped term, a wrong axis or a term counted twice lies past it by orders of magnitude.
BOUND_LINE = 4.0
# TOSA's statistical test needs this many outputs (its "T ≥ 1000"), and its limit per output.
STATISTICAL_MIN = 1000
STATISTICAL_LIMIT = 1.6


def unit_roundoff(np_dtype: np.dtype) -> float:
    """u of a float type: half the spacing at 1 (2**-24 for float32, 2**-11 for float16)."""
    return 2.0 ** -(int(ml_dtypes.finfo(np_dtype).nmant) + 1)


def gamma(n: np.ndarray | int, u: float) -> np.ndarray:
    """(1 + u)^n − 1 per element: the most that n roundings, each within a factor (1 + u), make of
    a sum's terms (Higham's θ_n, which his γ(n) = n·u / (1 − n·u) bounds; unlike γ it stays finite
    where n·u ≥ 1, as a float16 accumulator over thousands of terms needs)."""
    with np.errstate(over="ignore"):
        return np.expm1(np.asarray(n, dtype=np.float64) * math.log1p(u))


def exactly_summable(terms: np.ndarray, accumulator: np.dtype) -> np.ndarray:
    """Per row of `terms` (float64, shape (rows, n)): whether every partial sum of the row, in any
    order and any grouping, is exact in `accumulator`. It is where every term is a multiple of 2**q
    (q the least exponent among the row's last bits) and Σ|a| / 2**q fits the accumulator's
    significand: every partial sum is then such a multiple no larger than Σ|a|."""
    rows = terms  # (rows, n) already
    finite = np.isfinite(rows).all(axis=1)
    digits = int(ml_dtypes.finfo(accumulator).nmant) + 1
    safe = np.where(np.isfinite(rows), rows, 0.0)
    lowest = _lowest_bit(safe)
    with np.errstate(over="ignore"):
        total = np.abs(safe).sum(axis=1)  # exact enough: compared against a power of two with a margin below
    with np.errstate(over="ignore", invalid="ignore"):
        units = np.ldexp(total, -lowest)
    smallest_normal = float(ml_dtypes.finfo(accumulator).smallest_normal)
    smallest_subnormal = smallest_normal * 2.0 ** -(digits - 1)
    fits = ((units <= 2.0 ** digits) & (np.ldexp(1.0, lowest) >= smallest_subnormal)
            & (total <= float(ml_dtypes.finfo(accumulator).max)))
    return finite & (fits | (total == 0))


def last_bits(values: np.ndarray) -> np.ndarray:
    """Per element, the exponent of its least significant set bit (int64 max for a zero)."""
    mantissa, exponent = np.frexp(values)
    # A float64 significand holds 53 bits: scaled to an integer, its trailing zeros give the last bit.
    as_int = np.abs(np.ldexp(mantissa, 53)).astype(np.int64)
    nonzero = as_int != 0
    trailing = np.zeros(as_int.shape, dtype=np.int64)
    low = as_int & -as_int
    trailing[nonzero] = np.log2(low[nonzero]).astype(np.int64)
    return np.where(nonzero, exponent.astype(np.int64) - 53 + trailing, np.iinfo(np.int64).max)


def _lowest_bit(rows: np.ndarray) -> np.ndarray:
    """Per row, the exponent of the least significant set bit among its nonzero values (0 for none)."""
    last = last_bits(rows)
    found = last.min(axis=1) if last.shape[1] else np.zeros(last.shape[0], dtype=np.int64)
    return np.where(found == np.iinfo(np.int64).max, 0, found)


def least_subnormal(np_dtype: np.dtype) -> float:
    """The least positive subnormal of a float type (2**-149 for float32)."""
    info = ml_dtypes.finfo(np_dtype)
    return float(info.smallest_normal) * 2.0 ** -int(info.nmant)


def as_float(value) -> float:
    """An exact value (a Fraction) as the nearest float64, ±inf past float64's range."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


@dataclass(frozen=True, eq=False)
class Tier:
    """One accumulator a runtime may use (`label`: 'accumulated in float32'), and per element the
    largest |ŷ − y| it allows (`allowed`, float64, the output's shape) and TOSA's kernel-size term
    for the statistical test (`ksb`, the same shape)."""

    label: str
    allowed: np.ndarray
    ksb: np.ndarray
    # Per element, whether the steps as written may give an infinity or NaN of either sign with this
    # accumulator: a partial sum that may pass its max in some order (TOSA's "bnd overflow"), a weight
    # that may underflow to 0 times an infinite value. There any infinity or NaN meets the tier, and
    # a finite value is still judged by `allowed`. None: nowhere.
    non_finite: np.ndarray | None = None

    def reshaped(self, shape: tuple[int, ...]) -> "Tier":
        """The same tier with each per-element array in `shape` (an output's own)."""
        return Tier(self.label, self.allowed.reshape(shape), self.ksb.reshape(shape),
                    None if self.non_finite is None else self.non_finite.reshape(shape))


@dataclass(frozen=True, eq=False)
class ElementBound(OutputCheck):
    """How one float output of an accumulating op is judged: per element within the bound of one of
    its `tiers` (tightest first), by the rule `formula` for `reason`. `scale` is the statistical
    test's unit per element (half an output ULP at Σ|a|, TOSA's normalisation), None where the op
    has no test of its own. Stands where a `precision.Budget` stands (`Expected.budgets`), measured
    in units of the bound instead of ULP."""

    tiers: tuple[Tier, ...]
    formula: str
    reason: str
    scale: np.ndarray | None = None
    # Per element, values allowed besides those within the bound (NaN: none): what the op's formula
    # computed as written gives where an intermediate overflows or underflows in some order
    # (a product's partial products, log(Σ exp(x)) unshifted), judged exactly.
    also: tuple[np.ndarray, ...] = ()
    ulps: float = 1.0  # the bound is one unit of itself: what a budget's figure is to compare.judge
    unit: str = ACCUMULATION_UNIT
    flush_subnormals: bool = False

    @property
    def allowed(self) -> np.ndarray:
        """The loosest tier's per-element bound: within it an output passes."""
        return self.tiers[-1].allowed

    def text(self, np_dtype: np.dtype | None = None) -> str:
        return f"the bound {self.formula}"

    def wrong_answer_line(self, np_dtype: np.dtype) -> float:
        return BOUND_LINE

    def line_text(self, np_dtype: np.dtype) -> str:
        return f"{BOUND_LINE:g} times the bound"

    def judge(self, precise: np.ndarray, rounded: np.ndarray, actual: np.ndarray, strict_zero: bool = False) -> "BoundCheck":
        return judge(self, precise, rounded, actual, strict_zero)

    def note(self, precise: float, error: float, index: tuple[int, ...]) -> str:
        """What a listed element's error is, for a person."""
        if not np.isfinite(precise):
            return "judged exactly"
        allowed = float(self.allowed[index])
        return f"{error:.3g} of the bound {allowed:.3g} from {precise!r}" if allowed else f"exact sum {precise!r}"

    def widened(self, array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The values a result within the loosest tier may take around `array` (its rounded value),
        as a function body carries them (reference/function_body.py)."""
        wide = array.astype(np.float64)
        allowed = self.allowed + 0.5 * spacing(wide, array.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            low = _rounded_toward(wide - allowed, array.dtype, down=True)
            high = _rounded_toward(wide + allowed, array.dtype, down=False)
        keep = ~np.isfinite(wide)
        return np.where(keep, array, low).astype(array.dtype), np.where(keep, array, high).astype(array.dtype)


def any_non_finite(tiers) -> np.ndarray | None:
    """Where any of `tiers` (one accumulator's, of several bounds of one output merged into one)
    admits an infinity or NaN (`Tier.non_finite`); None where none does."""
    masks = [tier.non_finite for tier in tiers if tier.non_finite is not None]
    return np.logical_or.reduce(masks) if masks else None


def _rounded_toward(values: np.ndarray, np_dtype: np.dtype, down: bool) -> np.ndarray:
    """`values` (float64) rounded to `np_dtype`, then one step outward where rounding went inward."""
    from .reference.function_body import step

    near = values.astype(np_dtype)
    back = near.astype(np.float64)
    inward = (back > values) if down else (back < values)
    return np.where(inward, step(near, -1 if down else 1), near).astype(np_dtype)


@dataclass(frozen=True, eq=False)
class BoundCheck(BudgetCheck):
    """`precision.BudgetCheck` in units of an `ElementBound`, with the tier the output met (its
    label; None beyond every tier) and, where the statistical test failed, what it measured."""

    tier: str | None = None
    statistic: str | None = None

    @property
    def passed(self) -> bool:
        return bool(self.ok.all()) and self.statistic is None


def judge(bound: ElementBound, precise: np.ndarray, rounded: np.ndarray, actual: np.ndarray,
          strict_zero: bool = False) -> BoundCheck:
    """Judge `actual` against `precise` (float64, the exact value) by `bound` (see the module's
    docstring); `rounded` is precise rounded to the output type."""
    precise = np.asarray(precise, dtype=np.float64)
    if actual.dtype == rounded.dtype and actual.shape == rounded.shape and actual.tobytes() == rounded.tobytes():
        return _correctly_rounded(bound, precise, rounded)
    with np.errstate(all="ignore"):
        wide = actual.astype(np.float64)
        special = ~np.isfinite(precise) & ~np.isinf(bound.allowed)
        matched_special = (np.isnan(precise) & np.isnan(wide)) | (np.isinf(precise) & (wide == precise))
        overflowed = _overflow_allowed(precise, bound.allowed, wide, actual.dtype)
        per_tier = [_errors(precise, wide, tier.allowed, strict_zero) for tier in bound.tiers]
        tier_non_finite = [_non_finite_met(tier, wide) for tier in bound.tiers]
        errors = np.where(special, np.where(matched_special, 0.0, np.inf), per_tier[-1])
        # Where the loosest tier sets no requirement (a partial sum that may overflow, a sum whose
        # sign is unknown before a log), any value passes, a special one included (TOSA: "no requirement").
        unbounded = np.isinf(bound.allowed)
        errors = np.where(overflowed | tier_non_finite[-1] | unbounded | _also(bound, wide), 0.0, errors)
        ok = errors <= 1.0
        wrong = ~ok & (special | (errors > BOUND_LINE))
        ulps = ulp_error(precise, actual)
    loose = tier_non_finite[-1]
    met = [bool(np.all(np.where(special | overflowed, ok & (own | ~loose), (tier_errors <= 1.0) | own)))
           for tier_errors, own in zip(per_tier, tier_non_finite)]
    statistics = [_statistic(bound, precise, wide, tier, ok & ~special & ~overflowed & ~loose) for tier in bound.tiers]
    tier = next((t.label for t, m, s in zip(bound.tiers, met, statistics) if m and s is None), None)
    statistic = None if tier is not None or not met[-1] else statistics[-1]
    worst = float(errors.max()) if errors.size else 0.0
    same = (wide == rounded.astype(np.float64)) | (np.isnan(wide) & np.isnan(precise))
    grade = _grade(ok, same, ulps, actual.dtype, statistic)
    return BoundCheck(ok, errors, worst, False, wrong, grade, BOUND_LINE, tier=tier, statistic=statistic)


def _correctly_rounded(bound: ElementBound, precise: np.ndarray, rounded: np.ndarray) -> BoundCheck:
    """The judgement of the correctly rounded output, which every tier admits (each allows at least
    the rounding of the result) and whose errors, within half an output ULP, pass the statistical
    test: the tightest tier, measured without the general path's work."""
    tight = bound.tiers[0].allowed
    with np.errstate(all="ignore"):
        errors = np.abs(rounded.astype(np.float64) - precise)
        errors = np.where(np.isfinite(precise) & (tight > 0), errors / np.where(tight > 0, tight, 1.0), 0.0)
    ok = np.ones(precise.shape, dtype=bool)
    worst = float(errors.max()) if errors.size else 0.0
    return BoundCheck(ok, errors, worst, False, ~ok, CORRECTLY_ROUNDED, BOUND_LINE, tier=bound.tiers[0].label)


def _also(bound: ElementBound, wide: np.ndarray) -> np.ndarray:
    """Where the actual value is one of the bound's `also` values."""
    found = np.zeros(wide.shape, dtype=bool)
    for values in bound.also:
        found |= (wide == values) | (wide == 0) & (values == 0)
    return found


def _errors(precise: np.ndarray, wide: np.ndarray, allowed: np.ndarray, strict_zero: bool) -> np.ndarray:
    """|ŷ − y| in units of `allowed`: 0 where equal, inf where the bound is 0 and they differ; a
    NaN actual is inf. A zero for an exact zero keeps its sign only under `strict_zero`."""
    diff = np.abs(wide - precise)
    errors = np.where(allowed > 0, diff / np.where(allowed > 0, allowed, 1.0), np.where(diff == 0, 0.0, np.inf))
    if strict_zero:
        zero_sign = (precise == 0) & (wide == 0) & (allowed == 0) & (np.signbit(wide) != np.signbit(precise))
        errors = np.where(zero_sign, np.inf, errors)
    return np.where(np.isnan(errors), np.inf, errors)


def _non_finite_met(tier: Tier, wide: np.ndarray) -> np.ndarray:
    """Where `tier` admits an infinity or NaN (`Tier.non_finite`) and the actual value is one."""
    if tier.non_finite is None:
        return np.zeros(wide.shape, dtype=bool)
    return tier.non_finite & ~np.isfinite(wide)


def _overflow_allowed(precise: np.ndarray, allowed: np.ndarray, wide: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    """Where the bound reaches past the type's max and the actual value is that sign's overflow
    value (inf, or NaN in a type without inf)."""
    info = ml_dtypes.finfo(np_dtype)
    reach = np.isfinite(precise) & (np.abs(precise) + allowed > float(info.max))
    has_inf = np.isinf(np.array(np.inf).astype(np_dtype))
    overflow = (wide == np.sign(precise) * np.inf) if has_inf else np.isnan(wide)
    return reach & overflow


def _statistic(bound: ElementBound, precise: np.ndarray, wide: np.ndarray, tier: Tier, judged: np.ndarray) -> str | None:
    """TOSA's test of the mean squared error over an output of at least STATISTICAL_MIN judged
    elements: None where it holds (or does not apply), else what it measured."""
    if bound.scale is None or int(judged.sum()) < STATISTICAL_MIN:
        return None
    normalised = (wide[judged] - precise[judged]) / bound.scale[judged]
    measured = float(np.sum(normalised ** 2))
    limit = float(STATISTICAL_LIMIT * np.sum(tier.ksb[judged]))
    if measured <= limit:
        return None
    mean = float(np.mean(normalised))
    return (f"the squared errors over {int(judged.sum())} outputs sum to {measured:.4g} half-ULPs² of Σ|a|, beyond "
            f"TOSA's {STATISTICAL_LIMIT:g}·ksb limit {limit:.4g} for {tier.label} (mean error {mean:+.3g}): a biased "
            "or low-precision accumulator")


def _grade(ok: np.ndarray, same: np.ndarray, ulps: np.ndarray, np_dtype: np.dtype, statistic: str | None) -> str:
    """The output's grade (precision.GRADES), ULP errors deciding faithful."""
    if not ok.all() or statistic is not None:
        return BEYOND_BUDGET
    if same.all():
        return CORRECTLY_ROUNDED
    slack = FLOAT64_REFERENCE_SLACK if np.dtype(np_dtype) == np.float64 else 0.0
    with np.errstate(invalid="ignore"):
        faithful = bool(np.all(same | (ulps < 1.0 + slack)))
    return FAITHFUL if faithful else WITHIN_BUDGET


# --- the pieces each op's bound is made of ---

def accumulators(out: np.dtype) -> tuple[tuple[str, np.dtype], ...]:
    """The accumulators a runtime may sum an output type in, tightest first: float32 (or wider)
    then the type itself for a 16-bit float; the type itself for float32 and float64."""
    out = np.dtype(out)
    if out in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)):
        name = "float16" if out == np.float16 else "bfloat16"
        return (("accumulated in float32 or wider", np.dtype(np.float32)), (f"accumulated in {name}", out))
    return ((f"accumulated in {'float64' if out == np.float64 else 'float32'}", out),)


def half_ulp(y: np.ndarray, out: np.dtype) -> np.ndarray:
    """Half the output type's spacing at |y|: one correct rounding of the result (and, for a float64
    output, the half ULP by which its float64 reference may itself be off)."""
    extra = FLOAT64_REFERENCE_SLACK if np.dtype(out) == np.float64 else 0.0
    return (0.5 + extra) * spacing(np.where(np.isfinite(y), y, 0.0), out)


def ksb(n: np.ndarray, accumulator: np.dtype, out: np.dtype) -> np.ndarray:
    """TOSA's kernel-size term: n for an accumulator of the output's precision, less for a wider one
    (ceil(n / 2**((frac_acc − frac_out)/2)))."""
    extra = int(ml_dtypes.finfo(accumulator).nmant) - int(ml_dtypes.finfo(out).nmant)
    return np.ceil(np.asarray(n, dtype=np.float64) / 2.0 ** (max(extra, 0) / 2))


def statistical_scale(magnitude: np.ndarray, out: np.dtype) -> np.ndarray:
    """TOSA's unit for the statistical test: half an output ULP at Σ|a| (2**(−1−frac)·Σ|a|), at
    least the smallest normal."""
    info = ml_dtypes.finfo(out)
    return np.maximum(magnitude * 2.0 ** (-1 - int(info.nmant)), float(info.smallest_normal))


def sum_tiers(y: np.ndarray, magnitude: np.ndarray, n: np.ndarray, exact: dict[str, np.ndarray] | None,
              out: np.dtype, extra=None) -> tuple[Tier, ...]:
    """The tiers of a sum of n terms of exact value `y` and Σ|a| `magnitude` (arrays of the
    output's shape) rounded to `out`: per accumulator, ½ ULP + γ(n−1)·Σ|a|, or the correctly rounded
    value alone where `exact[label]` says every partial sum is exact in it. `extra(u_acc)` adds an
    op's further steps (a division, a square root) as an absolute error per element."""
    rounded = y.astype(out).astype(np.float64) if np.all(np.isfinite(y)) else _finite_rounded(y, out)
    correct = np.abs(rounded - y)
    tiers = []
    for label, accumulator in accumulators(out):
        u = unit_roundoff(accumulator)
        allowed = half_ulp(y, out) + gamma(np.maximum(n - 1, 0), u) * magnitude
        if extra is not None:
            allowed = allowed + extra(u)
        if exact is not None and label in exact:
            allowed = np.where(exact[label], correct, allowed)
        tiers.append(Tier(label, allowed, ksb(n, accumulator, out) * np.ones_like(y)))
    return tuple(tiers)


def _finite_rounded(y: np.ndarray, out: np.dtype) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isfinite(y), y.astype(out).astype(np.float64), y)


def exact_sums(terms: np.ndarray, out: np.dtype) -> np.ndarray:
    """Per row of `terms` (float64, (rows, n)), the exact sum where it exists in float64 (math.fsum:
    correctly rounded; exact where the row is exactly summable in float64), NaN for a row with NaN,
    ±inf as IEEE 754 sums infinities."""
    rows = terms  # (rows, n) already
    special = _special_sums(rows)
    if np.dtype(out) != np.float64:
        with np.errstate(invalid="ignore", over="ignore"):
            # float64 holds a narrower type's sums to far below its bound
            return np.where(np.isnan(special), np.where(np.isfinite(rows).all(axis=1), rows.sum(axis=1), special), special)
    found = special.copy()
    for r, row in enumerate(rows):
        if np.isfinite(row).all():
            try:
                found[r] = math.fsum(row.tolist())
            except OverflowError:  # the exact sum's partial sums pass float64's max: its float64 sum
                with np.errstate(over="ignore"):
                    found[r] = np.sum(row)
    return found


def _special_sums(rows: np.ndarray) -> np.ndarray:
    """Per row, the exact sum where an infinity or NaN decides it: NaN with a NaN or both
    infinities, ±inf with infinities of one sign (whatever the finite terms sum to); NaN marks a
    row of finite terms, summed by the caller."""
    nan = np.isnan(rows).any(axis=1)
    plus, minus = np.isposinf(rows).any(axis=1), np.isneginf(rows).any(axis=1)
    return np.where(nan | (plus & minus), np.nan, np.where(plus, np.inf, np.where(minus, -np.inf, np.nan)))
