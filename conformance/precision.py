"""Precision budgets: ULP arithmetic, the rules a float output is judged by when its op declares a
budget, the grade of a result, and the precision profile of a run.

An op whose outputs cannot be judged bitwise (exp, sin, erf ...) declares, per output, a `Budget`:
the largest error it allows in units in the last place (ULP) of the output's dtype, with the
source of that figure, and the kind of function it is (elementary or composite), which names its
wrong-answer line. `check` applies it; `compare.judge` calls it for each budgeted output. NaN,
+-inf, +-0 and overflow are judged exactly in every case: a budget widens only what lies between them.

How ULPs are counted (the one convention, kept everywhere): from the exact value. An error is
|actual - exact| in units of the output dtype's spacing at |exact| (`ulp_error`): the spacing of
the binade that holds it, the subnormal spacing below the smallest normal. For float16, bfloat16,
float32 and the 8-bit types the float64 value stands in for the exact one (its own error is below
2**-29 ULP of float32). A float64 output's precise value is the exact one correctly rounded to
float64 (mpmath), so the exact value lies within half a ULP of it: conform measures from it and
gives the runtime that half ULP of doubt at every threshold (FLOAT64_REFERENCE_SLACK), and reports
the error as measured. Libraries document their bounds from the correctly rounded value (glibc,
CUDA): a function within k ULP of it is within k + 0.5 of the exact value, so a budget that admits
it is k + 0.5.

Grades, best first: correctly rounded (the exact value rounded to the dtype), faithful (less than
one ULP from the exact value), within budget, beyond budget. A result beyond its budget is not
wrong: it fails only where an element lies beyond the wrong-answer line of its dtype and kind of
function (WRONG_ANSWER_LINES), or misses a special value; between the two its outcome is
`imprecise` (IMPRECISE), which fails a run only under --strict-precision. docs/precision.md gives
the lines' reasons.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, NamedTuple

import ml_dtypes
import numpy as np

from .dtypes import from_numpy
from .errors import UsageError

FLUSHED = "subnormal flushed to zero"
# A float64 output is judged against a float64 precise value, itself up to half a ULP from the true one.
FLOAT64_REFERENCE_SLACK = 0.5
# The outcome of a result beyond its budget whose every element lies within the wrong-answer line
# (compare.OUTCOMES holds it; defined here, as compare imports this module).
IMPRECISE = "imprecise"
# The unit an accumulating op's error is measured in (bounds.py): fractions of its per-element bound.
ACCUMULATION_UNIT = "of the bound"

# The kinds of function a budget is for, each with its own wrong-answer line: an elementary
# function (exp, sin, tanh, pow ...), one library call; a composite one (Elu, Sigmoid, Mish ...),
# several operations whose roundings add up.
ELEMENTARY, COMPOSITE = "elementary", "composite"
KINDS = (ELEMENTARY, COMPOSITE)

# A result's grade, from the best to the worst (see the module's docstring).
CORRECTLY_ROUNDED, FAITHFUL, WITHIN_BUDGET, BEYOND_BUDGET = "correctly-rounded", "faithful", "within-budget", "beyond-budget"
GRADES = (CORRECTLY_ROUNDED, FAITHFUL, WITHIN_BUDGET, BEYOND_BUDGET)

# The wrong-answer line, in ULP from the exact value, per dtype class and kind of function: beyond
# it a result fails whatever its budget. docs/precision.md gives the reasons; in short: every
# budget lies below its line (the largest, 4.5, is CUDA's documented powf/tanf/acoshf plus the half
# ULP to the exact value); a cancelled exp(x) - 1 (Elu at x = -1e-3: 86 ULP in float32, 140 in
# float64, 24 in float16) and a sigmoid(-20) returned as 0 lie far beyond; a 3-ULP tanh (JAX
# measures XLA's float32 tanh at 5 ULP, its float64 tanh at 7) is imprecise, not wrong. A 16-bit
# ULP is a large relative error (bfloat16: up to 2**-7) and a 16-bit result is mostly one rounding of a
# float32 one, so its lines are tighter; float64 keeps float32's: an algorithm run in its own
# precision loses as many ULP in either, and glibc's tests flag only errors beyond 9 ULP in any.
WRONG_ANSWER_LINES = {
    "16-bit": {ELEMENTARY: 2.0, COMPOSITE: 4.0},
    "float32": {ELEMENTARY: 8.0, COMPOSITE: 16.0},
    "float64": {ELEMENTARY: 8.0, COMPOSITE: 16.0},
}


class OutputCheck:
    """What judges one float output otherwise than bitwise, against the exact value a reading holds
    (`Reading.precise`): a `Budget` of ULP, or a per-element bound (bounds.ElementBound). Each has
    `ulps` (its own figure, in `unit`), `unit`, `text`, `wrong_answer_line`, `line_text`, `judge`
    (giving a `BudgetCheck`) and `note`; compare, the reports and the profile read only these."""

    unit = "ULP"


@dataclass(frozen=True)
class Budget(OutputCheck):
    """How one float output is judged: within `ulps` ULP of the exact value, for `reason` (the
    source the figure comes from); `kind` (ELEMENTARY or COMPOSITE) names its wrong-answer line."""

    ulps: float
    reason: str  # why this figure: the source it comes from, or the measurement behind it
    # Whether a zero where the precise value is subnormal in the output dtype is allowed, as the
    # named reading FLUSHED (hardware that flushes subnormals, as TOSA allows for non-fp8 types).
    flush_subnormals: bool = False
    kind: str = ELEMENTARY

    def __post_init__(self) -> None:
        if not isinstance(self.ulps, (int, float)) or not math.isfinite(self.ulps) or self.ulps < 0:
            raise UsageError(f"a precision budget is a finite number of ULP >= 0, not {self.ulps!r}")
        if not self.reason:
            raise UsageError("a precision budget needs a reason: the source or measurement its figure comes from")
        if self.kind not in KINDS:
            raise UsageError(f"a precision budget is for an {' or a '.join(KINDS)} function, not {self.kind!r}")

    def text(self, np_dtype: np.dtype | None = None) -> str:
        """'4 ULP', with the half ULP a float64 output is also allowed (see FLOAT64_REFERENCE_SLACK)."""
        return _ulps_text(self.ulps, np_dtype)

    def wrong_answer_line(self, np_dtype: np.dtype) -> float:
        """The ULP error beyond which an output of `np_dtype` is wrong (WRONG_ANSWER_LINES), never
        below the budget itself."""
        return max(WRONG_ANSWER_LINES[_dtype_class(_format(np.dtype(np_dtype)))][self.kind], float(self.ulps))

    def line_text(self, np_dtype: np.dtype) -> str:
        """The wrong-answer line as `text` writes the budget."""
        return _ulps_text(self.wrong_answer_line(np_dtype), np_dtype)

    def judge(self, precise: np.ndarray, rounded: np.ndarray, actual: np.ndarray, strict_zero: bool = False) -> "BudgetCheck":
        return check(precise, rounded, actual, self, strict_zero)

    def note(self, precise: float, error: float, index: tuple[int, ...]) -> str:
        """What a listed element's error is, for a person."""
        if not np.isfinite(precise) or precise == 0:
            return "judged exactly"
        return f"{ulp_text(error)} ULP from {precise!r}"


def _ulps_text(ulps: float, np_dtype: np.dtype | None) -> str:
    slack = " + 0.5 (float64 reference)" if np_dtype is not None and _format(np.dtype(np_dtype)).is_float64 else ""
    return f"{ulps:g} ULP{slack}"


@dataclass(frozen=True, eq=False)
class BudgetCheck:
    """The judgement of one output by its budget: which elements are within it, the error of each
    (in ULP; 0 for a special value matched exactly, inf for one missed), the worst error of the
    elements judged by ULP, whether a pass needed the FLUSHED reading, which elements are wrong
    (beyond the wrong-answer line `line`, or a special value missed), and the output's grade."""

    ok: np.ndarray
    errors: np.ndarray
    worst_ulp: float
    flushed: bool
    wrong: np.ndarray | None = None
    grade: str = WITHIN_BUDGET
    line: float = math.inf

    @property
    def passed(self) -> bool:
        return bool(self.ok.all())

    @property
    def imprecise(self) -> bool:
        """Beyond the budget somewhere, and nowhere wrong: the IMPRECISE outcome."""
        return not self.passed and not self.is_wrong

    @property
    def is_wrong(self) -> bool:
        return bool(self.wrong.any()) if self.wrong is not None else not self.passed


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


def _dtype_class(fmt: _Format) -> str:
    """The row of WRONG_ANSWER_LINES a dtype takes: float64, float32, or 16-bit (float16, bfloat16
    and the narrower types)."""
    if fmt.is_float64:
        return "float64"
    return "float32" if fmt.nmant >= 23 else "16-bit"


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

    A miss is wrong where it is a special value's, or beyond the budget's wrong-answer line (plus
    the same half ULP for float64); the others are imprecise. The grade is the worst element's.
    """
    fmt = _format(actual.dtype)
    precise = np.asarray(precise, dtype=np.float64)
    if precise.shape != actual.shape or expected_rounded.shape != actual.shape:
        raise UsageError(f"a precise value of shape {list(precise.shape)} cannot judge an output of shape {list(actual.shape)}")
    slack = FLOAT64_REFERENCE_SLACK if fmt.is_float64 else 0.0
    allowed = budget.ulps + slack
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
        same = (wide == rounded) | (np.isnan(wide) & np.isnan(rounded))
        line = budget.wrong_answer_line(actual.dtype)
        wrong = ~ok & (special | (errors > line + slack))
    if flushed_here is not None and flushed_here.any():
        ok = ok | flushed_here
        wrong = wrong & ~flushed_here
        measured = errors[~flushed_here]  # judged by the named reading, not by its ULPs
    else:
        flushed_here, measured = None, errors
    worst = float(measured.max()) if measured.size else 0.0
    grade = _grade(ok, errors, same, slack, flushed_here is not None)
    return BudgetCheck(ok, errors, worst, flushed_here is not None, wrong, grade, line)


def _grade(ok: np.ndarray, errors: np.ndarray, same: np.ndarray, slack: float, flushed: bool) -> str:
    """An output's grade: beyond budget where an element is; correctly rounded where every element
    is the correctly rounded value (`same`); faithful where every one is less than one ULP from the
    exact value (with float64's `slack`); else within budget, as a pass that needed FLUSHED is at best."""
    if not ok.all():
        return BEYOND_BUDGET
    if flushed:
        return WITHIN_BUDGET
    if same.all():
        return CORRECTLY_ROUNDED
    return FAITHFUL if bool((errors < 1.0 + slack).all()) else WITHIN_BUDGET


def worse_grade(first: str | None, second: str | None) -> str | None:
    """The worse of two grades (None: no grade, where nothing was judged by a budget)."""
    if first is None or second is None:
        return first if second is None else second
    return max(first, second, key=GRADES.index)


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


# --- the precision profile: per op and dtype, the grades and the worst error a run's results showed ---


class ProfileEntry(NamedTuple):
    """What one result judged by a budget adds to the profile: its op and dtype, its worst ULP
    error, its budget and wrong-answer line (the largest among its outputs), its grade (None in a
    report written before grades), and whether its outcome is IMPRECISE."""

    op: str
    dtype: str
    ulp: float
    budget: float | None
    line: float | None
    grade: str | None
    imprecise: bool
    unit: str = "ULP"  # what `ulp`, `budget` and `line` are in: ULP, or fractions of a per-element bound


@dataclass(frozen=True)
class ProfileRow:
    """One op x dtype of a run: how many results were judged by a budget, the largest ULP error
    among them, the budget and the wrong-answer line (the largest, where the op's outputs or
    versions differ), how many results had each grade (in GRADES' order; none in a report written
    before grades), and how many were imprecise."""

    op: str
    dtype: str
    cases: int
    max_ulp: float
    budget_ulps: float | None
    wrong_answer_ulps: float | None = None
    grades: tuple[int, ...] = ()
    imprecise: int = 0
    unit: str = "ULP"  # what max_ulp, the budget and the line are measured in (OutputCheck.unit)

    @property
    def grade(self) -> str | None:
        """The worst grade among the row's results."""
        return next((grade for grade, count in reversed(list(zip(GRADES, self.grades))) if count), None)

    @property
    def over_budget(self) -> bool:
        if self.grades:
            return self.grade == BEYOND_BUDGET
        return self.budget_ulps is not None and self.max_ulp > self.budget_ulps

    @property
    def beyond_line(self) -> bool:
        """Whether the worst error lies beyond the wrong-answer line (with float64's half ULP)."""
        if self.wrong_answer_ulps is None:
            return False
        return self.max_ulp > self.wrong_answer_ulps + _slack_of(self.dtype)

    def record(self) -> dict:
        """The row as the JSON report writes it (inf as the string "inf", as the report writes floats)."""
        return {"op": self.op, "dtype": self.dtype, "cases": self.cases, "max_ulp": json_ulp(self.max_ulp),
                "budget_ulps": self.budget_ulps, "wrong_answer_ulps": self.wrong_answer_ulps, "grade": self.grade,
                "grades": dict(zip(GRADES, self.grades)), "imprecise": self.imprecise} | (
                    {"unit": self.unit} if self.unit != "ULP" else {})


def _slack_of(dtype_name: str) -> float:
    """FLOAT64_REFERENCE_SLACK for a float64 output (an ONNX dtype name), else 0."""
    return FLOAT64_REFERENCE_SLACK if dtype_name == "double" else 0.0


def json_ulp(value: float | None) -> float | str | None:
    return value if value is None or math.isfinite(value) else "inf"


def unit_of(budgets: Iterable[object]) -> str:
    """What an Expected's budgeted outputs are measured in (the first's unit; ULP where none)."""
    return next((b.unit for b in budgets if isinstance(b, OutputCheck)), "ULP")


def largest_budget(budgets: Iterable[object]) -> float | None:
    """The largest ULP figure among an Expected's budgets; None when it has none."""
    figures = [b.ulps for b in budgets if isinstance(b, OutputCheck)]
    return max(figures) if figures else None


def largest_line(expected) -> float | None:
    """The largest wrong-answer line among an Expected's budgeted outputs (each at its output's
    dtype, read from the first reading); None when it has none."""
    outputs = expected.readings[0].outputs if expected.readings else ()
    lines = [budget.wrong_answer_line(outputs[index].dtype) for index, budget in enumerate(expected.budgets)
             if isinstance(budget, OutputCheck) and index < len(outputs)]
    return max(lines) if lines else None


def profile(results) -> list[ProfileRow]:
    """The precision profile of a run's Results (those whose verdict measured an ULP error)."""
    return profile_rows(ProfileEntry(r.example.op, r.example.dtype, r.verdict.ulp, largest_budget(r.expected.budgets),
                                     largest_line(r.expected), r.verdict.grade, r.outcome == IMPRECISE,
                                     unit_of(r.expected.budgets))
                        for r in results if r.verdict.ulp is not None)


class ProfileFold:
    """A run's precision profile folded one result at a time, so that a run need not keep its
    results to profile them: per op and dtype, what `_row` makes of all its entries at once."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str], ProfileRow] = {}

    def add(self, result) -> None:
        if result.verdict.ulp is None:
            return
        self.add_entry(ProfileEntry(result.example.op, result.example.dtype, result.verdict.ulp,
                                    largest_budget(result.expected.budgets), largest_line(result.expected),
                                    result.verdict.grade, result.outcome == IMPRECISE, unit_of(result.expected.budgets)))

    def add_entry(self, entry: ProfileEntry) -> None:
        key = (entry.op, entry.dtype)
        self._rows[key] = folded(self._rows.get(key), _row(entry.op, entry.dtype, [entry]))

    def add_row(self, row: ProfileRow) -> None:
        """Fold a whole row in (a shard's, when reports are merged)."""
        key = (row.op, row.dtype)
        self._rows[key] = folded(self._rows.get(key), row)

    def rows(self) -> list[ProfileRow]:
        return [row for _, row in sorted(self._rows.items())]


def folded(first: ProfileRow | None, second: ProfileRow) -> ProfileRow:
    """Two rows of one op and dtype (of disjoint results) as one."""
    if first is None:
        return second
    grades = tuple(a + b for a, b in zip(first.grades or (0,) * len(GRADES), second.grades or (0,) * len(GRADES)))
    return ProfileRow(first.op, first.dtype, first.cases + second.cases, max(first.max_ulp, second.max_ulp),
                      _largest((first.budget_ulps, second.budget_ulps)),
                      _largest((first.wrong_answer_ulps, second.wrong_answer_ulps)),
                      grades if first.grades or second.grades else (), first.imprecise + second.imprecise, first.unit)


def profile_of_records(records: Iterable[dict]) -> list[ProfileRow]:
    """The precision profile of a JSON report's result records (a merged report's, which has no
    Results), from what each budgeted record carries (`ulp`, `budget_ulps`, `wrong_answer_ulps`, `grade`)."""
    return profile_rows(ProfileEntry(r["op"], r["dtype"], float(r["ulp"]), r.get("budget_ulps"), r.get("wrong_answer_ulps"),
                                     r.get("grade"), r["outcome"] == IMPRECISE, r.get("unit", "ULP"))
                        for r in records if r.get("ulp") is not None)


def profile_of_report(doc: dict) -> list[ProfileRow]:
    """The precision profile a JSON report holds; made again from its records where it holds none
    (a merged report)."""
    if "precision" not in doc:
        return profile_of_records(doc["results"])
    return [ProfileRow(r["op"], r["dtype"], r["cases"], float(r["max_ulp"]), r.get("budget_ulps"), r.get("wrong_answer_ulps"),
                       tuple((r.get("grades") or {}).get(grade, 0) for grade in GRADES) if r.get("grades") else (),
                       r.get("imprecise", 0), r.get("unit", "ULP"))
            for r in doc["precision"]]


def profile_rows(entries: Iterable[ProfileEntry]) -> list[ProfileRow]:
    """Rows from one entry per result, sorted by op and dtype."""
    found: dict[tuple[str, str], list[ProfileEntry]] = {}
    for entry in entries:
        found.setdefault((entry.op, entry.dtype), []).append(entry)
    return [_row(op, name, of_row) for (op, name), of_row in sorted(found.items())]


def _row(op: str, dtype_name: str, entries: list[ProfileEntry]) -> ProfileRow:
    graded = [entry.grade for entry in entries if entry.grade is not None]
    grades = tuple(graded.count(grade) for grade in GRADES) if graded else ()
    return ProfileRow(op, dtype_name, len(entries), max(entry.ulp for entry in entries),
                      _largest(entry.budget for entry in entries), _largest(entry.line for entry in entries),
                      grades, sum(entry.imprecise for entry in entries), entries[0].unit)


def _largest(figures: Iterable[float | None]) -> float | None:
    known = [figure for figure in figures if figure is not None]
    return max(known) if known else None


def ulp_text(value: float) -> str:
    """An ULP figure for a person: three significant digits ('0.5', '37.5', '1.23e+04', 'inf')."""
    return f"{value:.3g}"
