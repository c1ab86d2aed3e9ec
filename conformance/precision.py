"""Precision budgets: ULP arithmetic, the rules a float output is judged by when its op declares a
budget, and the precision profile of a run.

An op whose outputs cannot be judged bitwise (exp, sin, erf ...) declares, per output, a `Budget`:
the largest error it allows in units in the last place (ULP) of the output's dtype, measured
against the precise value (float64, before rounding to the output dtype). `check` applies it;
`compare.judge` calls it for each budgeted output. NaN, +-inf, +-0 and overflow are judged
exactly in every case: a budget widens only what lies between them.

ULPs are measured as `ulp_error` says: |actual - precise| in units of the output dtype's spacing
at |precise|, the spacing of the binade that holds it (the subnormal spacing below the smallest
normal). A float64 output's precise value is itself float64 (correctly rounded, from mpmath where
the op provides it), so the true value lies up to 0.5 ULP from it either way: `check` allows
the budget plus that half ULP, and reports the error as measured.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

import ml_dtypes
import numpy as np

from .dtypes import from_numpy
from .errors import UsageError

FLUSHED = "subnormal flushed to zero"
# A float64 output is judged against a float64 precise value, itself up to half a ULP from the true one.
FLOAT64_REFERENCE_SLACK = 0.5


@dataclass(frozen=True)
class Budget:
    """How one float output is judged: within `ulps` ULP of the precise value, for `reason`."""

    ulps: float
    reason: str  # why this figure: the source it comes from, or the measurement behind it
    # Whether a zero where the precise value is subnormal in the output dtype is allowed, as the
    # named reading FLUSHED (hardware that flushes subnormals, as TOSA allows for non-fp8 types).
    flush_subnormals: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.ulps, (int, float)) or not math.isfinite(self.ulps) or self.ulps < 0:
            raise UsageError(f"a precision budget is a finite number of ULP >= 0, not {self.ulps!r}")
        if not self.reason:
            raise UsageError("a precision budget needs a reason: the source or measurement its figure comes from")

    def text(self, np_dtype: np.dtype | None = None) -> str:
        """'4 ULP', with the half ULP a float64 output is also allowed (see FLOAT64_REFERENCE_SLACK)."""
        slack = " + 0.5 (float64 reference)" if np_dtype is not None and _format(np.dtype(np_dtype)).is_float64 else ""
        return f"{self.ulps:g} ULP{slack}"


@dataclass(frozen=True, eq=False)
class BudgetCheck:
    """The judgement of one output by its budget: which elements pass, the error of each (in ULP;
    0 for a special value matched exactly, inf for one missed), the worst error of the elements
    judged by ULP, and whether a pass needed the FLUSHED reading."""

    ok: np.ndarray
    errors: np.ndarray
    worst_ulp: float
    flushed: bool

    @property
    def passed(self) -> bool:
        return bool(self.ok.all())


@dataclass(frozen=True)
class _Format:
    """What ULP arithmetic needs of a float dtype."""

    nmant: int  # stored mantissa bits
    minexp: int  # exponent of the smallest normal
    max: float
    smallest_normal: float
    has_inf: bool
    is_float64: bool
    ulp_of_max: float = 0.0


@lru_cache(maxsize=None)
def _format(np_dtype: np.dtype) -> _Format:
    try:
        dt = from_numpy(np_dtype)
    except (KeyError, ValueError, TypeError, UsageError):
        dt = None
    if dt is None or dt.kind != "float":
        raise UsageError(f"ULP errors are measured in float dtypes (float16, bfloat16, float, double, float8*), not {np_dtype}")
    info = ml_dtypes.finfo(np_dtype)
    fmt = _Format(nmant=int(info.nmant), minexp=int(info.minexp), max=float(info.max),
                  smallest_normal=float(info.smallest_normal), has_inf=dt.has_inf,
                  is_float64=np.dtype(np_dtype) == np.float64)
    return dataclasses.replace(fmt, ulp_of_max=float(spacing(np.float64(fmt.max), fmt)))


def spacing(magnitude: np.ndarray, fmt: _Format | np.dtype) -> np.ndarray:
    """The output dtype's spacing at each |value| (float64): 2**(e - nmant) in the binade
    [2**e, 2**(e+1)) that holds it, and the subnormal spacing below the smallest normal. A value
    beyond the dtype's max gets the spacing its binade would have."""
    fmt = fmt if isinstance(fmt, _Format) else _format(np.dtype(fmt))
    magnitude = np.abs(np.asarray(magnitude, dtype=np.float64))
    _, exponent = np.frexp(magnitude)  # magnitude = m * 2**exponent with m in [0.5, 1)
    binade = np.where(magnitude < fmt.smallest_normal, fmt.minexp, exponent - 1)
    return np.ldexp(1.0, (binade - fmt.nmant).astype(np.int32))


def ulp_error(precise_f64: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Per element, |actual - precise| in ULP of actual's dtype at |precise| (see `spacing`).

    Meaningful where both are finite: an inf or NaN on either side gives inf or NaN, which `check`
    judges by its special-value rules instead."""
    fmt = _format(actual.dtype)
    precise = np.asarray(precise_f64, dtype=np.float64)
    with np.errstate(all="ignore"):  # inf - inf, NaN: left as they come, for `check` to judge
        return np.abs(actual.astype(np.float64) - precise) / spacing(precise, fmt)


def check(precise: np.ndarray, expected_rounded: np.ndarray, actual: np.ndarray, budget: Budget,
          strict_zero: bool = False) -> BudgetCheck:
    """Judge `actual` against `precise` (float64) by `budget`; `expected_rounded` is precise
    rounded to the output dtype (what a correctly rounded implementation gives).

    NaN wants any NaN; +-inf the same inf; an exact 0 wants +-0 (the sign too under
    `strict_zero`). Beyond the dtype's max (a finite precise value that rounds to inf, or to NaN
    in a type without inf), the type's overflow value is accepted, and a finite value is measured
    with that overflow value counted as max + one ULP of max. Everything else must be within the
    budget (plus half a ULP for float64), where a NaN or inf actual is a miss. With
    `flush_subnormals`, +-0 where precise is subnormal passes as the FLUSHED reading.
    """
    fmt = _format(actual.dtype)
    precise = np.asarray(precise, dtype=np.float64)
    if precise.shape != actual.shape or expected_rounded.shape != actual.shape:
        raise UsageError(f"a precise value of shape {list(precise.shape)} cannot judge an output of shape {list(actual.shape)}")
    allowed = budget.ulps + (FLOAT64_REFERENCE_SLACK if fmt.is_float64 else 0.0)
    with np.errstate(all="ignore"):
        wide = actual.astype(np.float64)
        rounded = expected_rounded.astype(np.float64)
        errors = ulp_error(precise, actual)
        overflow = np.isfinite(precise) & (np.abs(precise) > fmt.max)
        if overflow.any():
            errors = np.where(overflow, _overflow_error(precise, wide, fmt), errors)
        errors = np.where(np.isnan(errors), np.inf, errors)  # a NaN actual where a number is due
        ok = errors <= allowed
        if overflow.any():
            ok |= overflow & _same_overflow(rounded, wide)
        special = ~np.isfinite(precise) | (precise == 0)
        if special.any():
            errors, ok = _special_values(precise, rounded, wide, errors, ok, strict_zero)
        flushed_here = _flushed(precise, rounded, wide, ok, fmt, strict_zero) if budget.flush_subnormals else None
    if flushed_here is not None and flushed_here.any():
        ok = ok | flushed_here
        measured = errors[~flushed_here]  # judged by the named reading, not by its ULPs
    else:
        flushed_here, measured = None, errors
    worst = float(measured.max()) if measured.size else 0.0
    return BudgetCheck(ok, errors, worst, flushed_here is not None)


def _overflow_error(precise: np.ndarray, wide: np.ndarray, fmt: _Format) -> np.ndarray:
    """ULP errors beyond max: precise and the overflow value (inf of its sign, or NaN in a type
    without inf) both counted as at most max + one ULP of max, in the spacing of max's binade. The
    other inf, and NaN in a type with inf, are no measure (NaN, a miss)."""
    top = fmt.max + fmt.ulp_of_max
    sign = np.sign(precise)
    overflowed = (wide == sign * np.inf) if fmt.has_inf else np.isnan(wide)
    measured = np.where(overflowed, sign * top, np.where(np.isinf(wide), np.nan, wide))
    reference = sign * np.minimum(np.abs(precise), top)
    return np.abs(measured - reference) / fmt.ulp_of_max


def _same_overflow(rounded: np.ndarray, wide: np.ndarray) -> np.ndarray:
    """Where the correctly rounded value overflowed (to an inf, or to NaN), the actual value is that one."""
    return (np.isinf(rounded) & (wide == rounded)) | (np.isnan(rounded) & np.isnan(wide))


def _special_values(precise, rounded, wide, errors, ok, strict_zero):
    """NaN, +-inf and exact zeros, judged exactly: 0 ULP where matched, inf where missed (a
    finite actual for an exact zero keeps its measured error)."""
    nan, inf, zero = np.isnan(precise), np.isinf(precise), precise == 0
    matched_zero = zero & (wide == 0)
    if strict_zero:
        matched_zero &= np.signbit(wide) == np.signbit(rounded)
    matched = (nan & np.isnan(wide)) | (inf & (wide == precise)) | matched_zero
    special = nan | inf | zero
    errors = np.where(special & matched, 0.0, np.where((nan | inf) & ~matched, np.inf, errors))
    return errors, np.where(special, matched, ok)


def _flushed(precise, rounded, wide, ok, fmt: _Format, strict_zero: bool) -> np.ndarray:
    """Where a miss is a zero for a precise value that is subnormal in the output dtype."""
    subnormal = (precise != 0) & (np.abs(precise) < fmt.smallest_normal)
    zero = wide == 0
    if strict_zero:  # flushing keeps the sign, as hardware that flushes does
        zero &= np.signbit(wide) == np.signbit(precise)
    return subnormal & zero & ~ok


# --- the precision profile: per op and dtype, the worst error a run's results showed ---


@dataclass(frozen=True)
class ProfileRow:
    """One op x dtype of a run: how many results were judged by a budget, the largest ULP error
    among them, and the budget (the largest, where the op's outputs or versions differ)."""

    op: str
    dtype: str
    cases: int
    max_ulp: float
    budget_ulps: float | None

    @property
    def over_budget(self) -> bool:
        return self.budget_ulps is not None and self.max_ulp > self.budget_ulps

    def record(self) -> dict:
        """The row as the JSON report writes it (inf as the string "inf", as the report writes floats)."""
        return {"op": self.op, "dtype": self.dtype, "cases": self.cases, "max_ulp": json_ulp(self.max_ulp),
                "budget_ulps": self.budget_ulps}


def json_ulp(value: float | None) -> float | str | None:
    return value if value is None or math.isfinite(value) else "inf"


def largest_budget(budgets: Iterable[object]) -> float | None:
    """The largest ULP figure among an Expected's budgets; None when it has none."""
    figures = [b.ulps for b in budgets if isinstance(b, Budget)]
    return max(figures) if figures else None


def profile(results) -> list[ProfileRow]:
    """The precision profile of a run's Results (those whose verdict measured an ULP error)."""
    return profile_rows((r.example.op, r.example.dtype, r.verdict.ulp, largest_budget(r.expected.budgets))
                        for r in results if r.verdict.ulp is not None)


def profile_of_records(records: Iterable[dict]) -> list[ProfileRow]:
    """The precision profile of a JSON report's result records (a merged report's, which has no
    Results), from the `ulp` and `budget_ulps` each budgeted record carries."""
    return profile_rows((r["op"], r["dtype"], float(r["ulp"]), r.get("budget_ulps"))
                        for r in records if r.get("ulp") is not None)


def profile_of_report(doc: dict) -> list[ProfileRow]:
    """The precision profile a JSON report holds; made again from its records where it holds none
    (a merged report)."""
    if "precision" not in doc:
        return profile_of_records(doc["results"])
    return [ProfileRow(r["op"], r["dtype"], r["cases"], float(r["max_ulp"]), r.get("budget_ulps")) for r in doc["precision"]]


def profile_rows(entries: Iterable[tuple[str, str, float, float | None]]) -> list[ProfileRow]:
    """Rows from (op, dtype, ULP error, budget) per result, sorted by op and dtype."""
    found: dict[tuple[str, str], list] = {}
    for op, dtype_name, ulp, budget in entries:
        row = found.setdefault((op, dtype_name), [0, 0.0, None])
        row[0] += 1
        row[1] = max(row[1], ulp)
        if budget is not None:
            row[2] = budget if row[2] is None else max(row[2], budget)
    return [ProfileRow(op, name, cases, worst, budget) for (op, name), (cases, worst, budget) in sorted(found.items())]


def ulp_text(value: float) -> str:
    """An ULP figure for a person: three significant digits ('0.5', '37.5', '1.23e+04', 'inf')."""
    return f"{value:.3g}"
