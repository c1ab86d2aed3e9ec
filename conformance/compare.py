"""Comparison: expected vs actual -> a Verdict (outcome, message, and the diff a person reads).

Rules: dtype and shape must match exactly; values compare bitwise, except that any NaN matches
any NaN, and +0.0 matches -0.0 unless `strict_zero`. An output whose op declares a precision
budget (`Expected.budgets`) and whose reading holds its precise value is judged by
`precision.check` instead: within so many ULP of the precise value, special values exactly (beyond
the budget and within its wrong-answer line, a reading's outputs are `imprecise`, not wrong). A
valid case matches when the actual output equals any of the reference's readings (a reading may
leave elements free where the text leaves them undefined: any value matches there); a match against
one of several distinct readings is `ambiguous`, and outputs that match none are told against the
nearest reading (fewest differing values, then smallest ULP error or difference), named. Where
outputs match none of the prose's readings and the op version has a function body, the body's
readings are tried next (each output within its per-element `Bounds`): a match passes under the
body's name, or is `ambiguous` where the body and the prose disagree for the case. An invalid case
passes when the runtime rejects it, and is `lenient` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .dtypes import from_numpy
from .equality import arrays_identical, equal_mask, same_bits  # noqa: F401 - compare's names, kept public
from .precision import FLUSHED, IMPRECISE, BudgetCheck, OutputCheck, worse_grade, ulp_text
from .reference.expected import Bounds, Expected, Reading
from .reference.function_body import CONTRADICTION
from .runners.base import RunOutput
from .values import format_scalar

PASS, FAIL, UNSUPPORTED, AMBIGUOUS, LENIENT, ERROR = "pass", "fail", "unsupported", "ambiguous", "lenient", "error"
CRASH, TIMEOUT, FALLBACK, SKIPPED = "crash", "timeout", "fallback", "skipped"
XFAIL, XPASS = "xfail", "xpass"
# IMPRECISE (precision.py): beyond a budget, within its wrong-answer line; a fail only under --strict-precision.
OUTCOMES = (PASS, IMPRECISE, FAIL, UNSUPPORTED, AMBIGUOUS, LENIENT, ERROR, CRASH, TIMEOUT, FALLBACK, SKIPPED, XFAIL, XPASS)
MAX_LISTED_MISMATCHES = 10
# A one-line message tells the two types, how many values differ and the first of them: "expected
# int64[4], got int64[4]" alone reads as if nothing were wrong, and it is what a CI system shows.
HEADLINE_LINES = 3


@dataclass(frozen=True)
class Mismatch:
    """Where one output differs: shape/dtype, or the first differing indices with both values."""

    output: int
    expected_type: str
    actual_type: str
    indices: tuple[tuple[tuple[int, ...], str, str], ...] = ()
    count: int = 0
    total: int = 0
    max_abs_diff: float | None = None
    # For an output judged by a precision budget: the budget ('4 ULP'), the worst error measured,
    # and per listed index what its error is ('37.5 ULP from 0.8414709848078965'); the wrong-answer
    # line ('8 ULP') and how many values lie beyond it (none: the output is imprecise, not wrong).
    budget: str | None = None
    worst_ulp: float | None = None
    index_notes: tuple[str, ...] = ()
    line: str | None = None
    wrong: int = 0
    unit: str = "ULP"  # what worst_ulp is measured in: ULP, or fractions of a per-element bound (bounds.py)
    # Where every value is within its bound but the statistical test over the output failed: what it measured.
    statistic: str | None = None

    @property
    def imprecise(self) -> bool:
        """Beyond its budget (or its statistical test), and no value beyond the wrong-answer line."""
        return (self.budget is not None and self.line is not None and (self.count > 0 or self.statistic is not None)
                and not self.wrong)

    def lines(self, expected: str = "expected", actual: str = "got") -> list[str]:
        """What differs, a line each; `expected` and `actual` name the two sides (two runners' names
        in a diff, where neither is the expected answer)."""
        text = [f"output {self.output}: {expected} {self.expected_type}, {actual} {self.actual_type}"]
        if self.count and self.budget is not None:
            text.append(f"{self.count} of {self.total} values beyond {self.budget} (worst {ulp_text(self.worst_ulp)} {self.unit})"
                        + self._line_text())
        elif self.statistic is not None:
            text.append(f"every value within {self.budget}, but {self.statistic}")
        elif self.count:
            text.append(f"{self.count} of {self.total} values differ" +
                        (f" (max |diff| {self.max_abs_diff:g})" if self.max_abs_diff is not None else ""))
        notes = [f" ({note})" for note in self.index_notes] + [""] * (len(self.indices) - len(self.index_notes))
        text += [f"  at {list(i)}: {expected} {e}, {actual} {a}{note}" for (i, e, a), note in zip(self.indices, notes)]
        return text

    def _line_text(self) -> str:
        """Where the budgeted values stand against the wrong-answer line."""
        if self.line is None:
            return ""
        return f", {self.wrong} beyond the wrong-answer line {self.line}" if self.wrong else f", within the wrong-answer line {self.line}"

    def headline(self, expected: str = "expected", actual: str = "got") -> str:
        """What differs, in one line: the first HEADLINE_LINES of `lines`."""
        return "; ".join(line.strip() for line in self.lines(expected, actual)[:HEADLINE_LINES])

    def details(self) -> list[str]:
        """The lines of `lines` that its headline leaves out."""
        return self.lines()[HEADLINE_LINES:]


@dataclass(frozen=True)
class Verdict:
    """The outcome of one example, with a one-line message and, for failures, the mismatch."""

    outcome: str
    message: str
    mismatches: tuple[Mismatch, ...] = field(default_factory=tuple)
    reading: str | None = None
    # The worst ULP error measured over the outputs judged by a precision budget (of the matching
    # reading; of the nearest, when none matches: see judge); None when no output was.
    ulp: float | None = None
    # The grade of those outputs (precision.GRADES: the worst of them); None when no output was.
    grade: str | None = None


def type_text(array: np.ndarray) -> str:
    return f"{from_numpy(array.dtype).name}{list(array.shape)}"


def _identical_bytes(expected: np.ndarray, actual: np.ndarray) -> bool:
    return (expected.dtype == actual.dtype and expected.shape == actual.shape and expected.dtype.kind != "O"
            and expected.tobytes() == actual.tobytes())


def mismatch(index: int, expected: np.ndarray, actual: np.ndarray, strict_zero: bool) -> Mismatch | None:
    """None when the two agree; otherwise where and by how much they differ."""
    if _identical_bytes(expected, actual):
        return None  # the common case, decided without the NaN and zero rules
    expected_type, actual_type = type_text(expected), type_text(actual)
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        return Mismatch(index, expected_type, actual_type)
    differs = ~equal_mask(expected, actual, strict_zero)
    if not differs.any():
        return None
    where = np.argwhere(differs)
    listed = tuple(
        (tuple(int(i) for i in idx), format_scalar(expected[tuple(idx)]), format_scalar(actual[tuple(idx)]))
        for idx in where[:MAX_LISTED_MISMATCHES]
    )
    return Mismatch(index, expected_type, actual_type, listed, int(differs.sum()), int(differs.size),
                    _max_abs_diff(expected[differs], actual[differs]))


def _max_abs_diff(expected: np.ndarray, actual: np.ndarray) -> float | None:
    kind = from_numpy(expected.dtype).kind
    if kind not in ("float", "int", "uint"):
        return None
    if kind != "float" and expected.dtype.itemsize == 8:  # 64-bit integers: in Python ints, as float64 would round them
        wide = [abs(int(e) - int(a)) for e, a in zip(expected.reshape(-1).tolist(), actual.reshape(-1).tolist())]
        return float(max(wide)) if wide else None
    with np.errstate(all="ignore"):
        diff = np.abs(expected.astype(np.float64) - actual.astype(np.float64))
    finite = diff[np.isfinite(diff)]
    return float(finite.max()) if finite.size else None


def _outputs_mismatches(expected: tuple[np.ndarray, ...], actual: tuple[np.ndarray, ...], strict_zero: bool) -> list[Mismatch]:
    if len(expected) != len(actual):
        return [Mismatch(0, f"{len(expected)} outputs", f"{len(actual)} outputs")]
    found = []
    for index, (reference, output) in enumerate(zip(expected, actual)):
        differs = mismatch(index, reference, output, strict_zero)
        if differs is not None:
            found.append(differs)
    return found


@dataclass(frozen=True)
class _Measured:
    """What the budgeted outputs of one reading showed: the worst ULP error, and whether a pass
    needed the reading that a subnormal is flushed to zero."""

    ulp: float
    flushed: bool
    grade: str | None = None  # the worst of the outputs' grades (precision.GRADES)
    unit: str = "ULP"  # what `ulp` is measured in (precision.OutputCheck.unit)
    tier: str | None = None  # the accumulator tier an output bounded per element met (bounds.py)


def _has_budgets(expected: Expected) -> bool:
    """Whether any output is judged otherwise than exactly: by a budget, or by a reading's bounds.
    An output check of a kind this module does not know is an error, never judged bitwise."""
    for budget in expected.budgets:
        if budget is not None and not isinstance(budget, OutputCheck):
            raise TypeError(f"an output is to be judged by {type(budget).__name__}, a check compare does not know")
    return any(isinstance(budget, OutputCheck) for budget in expected.budgets)


def bounds_mismatch(index: int, expected: np.ndarray, actual: np.ndarray, bounds: Bounds,
                    strict_zero: bool = False) -> Mismatch | None:
    """None when every element of `actual` lies within `bounds` (a function body's reading), else
    where it does not, each with the interval it should lie in. Under `strict_zero` a zero where the
    bounds allow only zeros must carry the sign of one of them."""
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        return Mismatch(index, type_text(expected), type_text(actual))
    misses = ~bounds.contains(actual)
    if strict_zero and from_numpy(actual.dtype).kind == "float":
        misses |= _zero_of_another_sign(bounds, actual)
    if not misses.any():
        return None
    where = np.argwhere(misses)[:MAX_LISTED_MISMATCHES]
    listed = tuple((tuple(int(i) for i in idx), format_scalar(expected[tuple(idx)]), format_scalar(actual[tuple(idx)]))
                   for idx in where)
    notes = tuple(_interval_note(bounds, tuple(idx)) for idx in where)
    return Mismatch(index, type_text(expected), type_text(actual), listed, int(misses.sum()), int(misses.size),
                    _max_abs_diff(expected[misses], actual[misses]), index_notes=notes)


def _zero_of_another_sign(bounds: Bounds, actual: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        low, high, got = (a.astype(np.float64) for a in (bounds.low, bounds.high, actual))
    only_zeros = (low == 0) & (high == 0) & (got == 0)
    return only_zeros & (np.signbit(got) != np.signbit(low)) & (np.signbit(got) != np.signbit(high))


def _interval_note(bounds: Bounds, index: tuple[int, ...]) -> str:
    low, high = format_scalar(bounds.low[index]), format_scalar(bounds.high[index])
    nan = " or NaN" if bool(bounds.nan[index]) else ""
    return f"the body allows {low}" + (f" to {high}" if low != high else "") + nan


def _budget_of(expected: Expected, reading: Reading, index: int) -> tuple[OutputCheck, np.ndarray] | None:
    """The budget and precise value output `index` is judged by; None when it is judged exactly."""
    budget = expected.budgets[index] if index < len(expected.budgets) else None
    precise = reading.precise[index] if index < len(reading.precise) else None
    if isinstance(budget, OutputCheck) and isinstance(precise, np.ndarray):
        return budget, precise
    return None


def reading_outputs(reading: Reading, actual: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """The outputs `reading` allows, given what came back: its own, except where it leaves an
    element free (`Reading.free`) or open to a few values (`Reading.choices`) that the actual
    value is one of, which hold the actual value (where type and shape agree)."""
    if not reading.free and not reading.choices:
        return reading.outputs
    found = []
    for k, output in enumerate(reading.outputs):
        got = actual[k] if k < len(actual) else None
        if got is None or output.dtype != got.dtype or output.shape != got.shape:
            found.append(output)
            continue
        taken = _free_mask(reading, k, output.shape)
        options = reading.choices[k] if k < len(reading.choices) else None
        for option in options if options is not None else ():
            taken = taken | equal_mask(option, got, strict_zero=True)
        found.append(_taken(output, taken, got))
    return tuple(found)


def _free_mask(reading: Reading, index: int, shape: tuple[int, ...]) -> np.ndarray:
    mask = reading.free[index] if index < len(reading.free) else None
    return mask if mask is not None else np.zeros(shape, dtype=bool)


def _taken(expected: np.ndarray, taken: np.ndarray, actual: np.ndarray) -> np.ndarray:
    if not taken.any():
        return expected
    freed = expected.copy()
    freed[taken] = actual[taken]
    return freed


def _reading_mismatches(expected: Expected, reading: Reading, actual: tuple[np.ndarray, ...],
                        strict_zero: bool) -> tuple[list[Mismatch], _Measured | None]:
    """`_outputs_mismatches` for a reading with budgeted outputs, and what those outputs measured."""
    if len(reading.outputs) != len(actual):
        return [Mismatch(0, f"{len(reading.outputs)} outputs", f"{len(actual)} outputs")], None
    found: list[Mismatch] = []
    worst, flushed, grade, unit, tiers = 0.0, False, None, "ULP", []
    for index, (reference, output) in enumerate(zip(reading_outputs(reading, actual), actual)):
        bounds = reading.bounds[index] if index < len(reading.bounds) else None
        judged_by = _budget_of(expected, reading, index)
        if bounds is not None:
            differs = bounds_mismatch(index, reference, output, bounds, strict_zero)
        elif judged_by is None:
            differs = mismatch(index, reference, output, strict_zero)
        else:
            differs, judged = budget_mismatch(index, reference, output, *judged_by, strict_zero)
            if judged is not None:
                worst, flushed, grade = max(worst, judged.worst_ulp), flushed or judged.flushed, worse_grade(grade, judged.grade)
                unit = judged_by[0].unit
                tiers.append(getattr(judged, "tier", None))
        if differs is not None:
            found.append(differs)
    tier = "; ".join(dict.fromkeys(t for t in tiers if t)) or None
    return found, _Measured(worst, flushed, grade, unit, tier) if grade is not None else None


def budget_mismatch(index: int, expected: np.ndarray, actual: np.ndarray, budget: OutputCheck, precise: np.ndarray,
                    strict_zero: bool) -> tuple[Mismatch | None, BudgetCheck | None]:
    """None when `actual` is within `budget` of `precise` (see `precision.check`, `bounds.judge`),
    else where it is not and by how much in the budget's unit, and how many values lie beyond the
    wrong-answer line (none: imprecise, not wrong; those listed first); with the check itself, or
    None where dtype or shape differ."""
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        return Mismatch(index, type_text(expected), type_text(actual)), None
    judged = budget.judge(precise, expected, actual, strict_zero)
    misses = ~judged.ok
    statistic = getattr(judged, "statistic", None)
    if not misses.any() and statistic is None:
        return None, judged
    wrong = judged.wrong if judged.wrong is not None else misses
    where = np.argwhere(wrong if wrong.any() else misses)[:MAX_LISTED_MISMATCHES]
    listed = tuple((tuple(int(i) for i in idx), format_scalar(expected[tuple(idx)]), format_scalar(actual[tuple(idx)]))
                   for idx in where)
    notes = tuple(budget.note(float(precise[tuple(idx)]), float(judged.errors[tuple(idx)]), tuple(idx)) for idx in where)
    return Mismatch(index, type_text(expected), type_text(actual), listed, int(misses.sum()), int(misses.size),
                    budget=budget.text(expected.dtype), worst_ulp=judged.worst_ulp, index_notes=notes,
                    line=budget.line_text(expected.dtype), wrong=int(wrong.sum()), unit=budget.unit,
                    statistic=statistic), judged


@lru_cache(maxsize=None)
def _passed(label: str) -> Verdict:
    """The verdict of a case whose outputs match the reading `label` (one object per label: a
    verdict is frozen, and most cases of a run pass)."""
    return Verdict(PASS, "outputs match", reading=label)


def judge(expected: Expected, run: RunOutput, strict_zero: bool = False) -> Verdict:
    """The verdict for one example: what the spec expects vs what the runner did."""
    if run.fault is not None:
        return Verdict(run.fault, run.error or run.fault)
    if not expected.is_valid:
        return _judge_invalid(expected, run)
    if run.unsupported:
        return Verdict(UNSUPPORTED, run.error or "unsupported")
    if run.error is not None:
        if expected.may_reject:
            return Verdict(AMBIGUOUS, f"rejected; the spec allows it: {expected.may_reject}. Runtime said: {run.error}")
        return Verdict(FAIL, f"runtime rejected a valid input: {run.error}")
    if not expected.readings:
        return _judge_by_specs(expected, run.outputs)
    actual = in_text_order(expected, run.outputs)
    budgeted = _has_budgets(expected)
    missed: list[tuple[Reading, list[Mismatch], _Measured | None]] = []
    for reading in expected.readings:
        if budgeted:
            found, measured = _reading_mismatches(expected, reading, actual, strict_zero)
        else:  # the exact path, as every case of most ops takes it
            found, measured = _outputs_mismatches(reading_outputs(reading, actual), actual, strict_zero), None
        if not found:
            return _matched(expected, reading, measured)
        missed.append((reading, found, measured))
    bodies, outside = expected.body_readings()
    for reading in bodies:
        found, measured = _reading_mismatches(expected, reading, actual, strict_zero)
        if not found:
            return _matched_body(expected, reading, outside)
        missed.append((reading, found, measured))
    verdict = _missed(missed, expected.order_note if actual is not run.outputs else None)
    if verdict.outcome == FAIL and expected.body is not None:
        return _within_body_lines(expected, actual, strict_zero) or verdict
    return verdict


def in_text_order(expected: Expected, outputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """A runtime's outputs put in the order the readings are written in, where the text leaves the
    order free (`Expected.order`); as they came where it does not, or where they are not outputs
    the order can be read from (another count, type or shape: the comparison tells that)."""
    if expected.order is None:
        return outputs
    try:
        return expected.order(outputs)
    except (ValueError, IndexError, TypeError):
        return outputs


def _within_body_lines(expected: Expected, actual: tuple[np.ndarray, ...], strict_zero: bool) -> Verdict | None:
    """IMPRECISE where the outputs follow the function body with its inner functions beyond their
    budgets and within their wrong-answer lines (see function_body.Body.loose_readings); else None."""
    for reading in expected.body.loose_readings():
        found, _ = _reading_mismatches(expected, reading, actual, strict_zero)
        if not found:
            return Verdict(IMPRECISE, f"matches the reading '{reading.label}' only with the body's inner functions "
                                      "beyond their precision budgets (within their wrong-answer lines)", reading=reading.label)
    return None


def _judge_by_specs(expected: Expected, actual: tuple[np.ndarray, ...]) -> Verdict:
    """A valid case whose text fixes no value: judged by each output's type and shape
    (`Expected.specs`); with neither readings nor specs there is nothing to judge by, an error."""
    if not expected.specs:
        raise TypeError("a valid case with no reading and no output spec cannot be judged")
    if len(actual) != len(expected.specs):
        return Verdict(FAIL, f"expected {len(expected.specs)} outputs, got {len(actual)}")
    for index, (spec, output) in enumerate(zip(expected.specs, actual)):
        problem = spec.problem(output)
        if problem is not None:
            return Verdict(FAIL, f"output {index}: {problem}")
    return Verdict(PASS, "outputs have the types and shapes the text gives (it fixes no values)", reading="types and shapes")


def _matched_body(expected: Expected, reading: Reading, outside: str) -> Verdict:
    """The verdict of outputs that match only a function body's reading: a pass under its name
    where the body agrees with the prose for this case; ambiguous where they disagree (`outside`:
    where the prose's value lies outside the body's bounds), the text allowing both."""
    if not outside:
        return _passed(reading.label)
    why = "; ".join(filter(None, [expected.ambiguity, f"{CONTRADICTION} ({outside})"]))
    return Verdict(AMBIGUOUS, f"matches the reading '{reading.label}' ({why})", reading=reading.label)


def _missed(missed: list[tuple[Reading, list[Mismatch], _Measured | None]], reordered: str | None = None) -> Verdict:
    """The verdict of outputs that match no reading: told against the nearest (see `_distance`),
    named where the text allows several, so the mismatch shown is the runtime's smallest departure.
    A reading whose only departures are budgeted outputs beyond their budget and within their
    wrong-answer line comes before any other: the outputs are imprecise, not wrong (IMPRECISE).
    `reordered`: why the outputs shown are the runtime's put in the text's order, where they are."""
    imprecise = [miss for miss in missed if all(found.imprecise for found in miss[1])]
    reading, found, measured = min(imprecise or missed, key=lambda miss: _distance(miss[1]))  # the first of equals
    ulp, grade = (measured.ulp, measured.grade) if measured else (None, None)
    if imprecise:
        label = f"{reading.label}, {FLUSHED}" if measured.flushed else reading.label
        note = f" (the reading '{label}', of {len(missed)} allowed)" if len(missed) > 1 else ""
        return Verdict(IMPRECISE, found[0].headline() + note, tuple(found), reading=label, ulp=ulp, grade=grade)
    note = f" (none of {len(missed)} allowed readings match; nearest: '{reading.label}')" if len(missed) > 1 else ""
    if reordered:
        note += f" (compared in the readings' order: {reordered})"
    return Verdict(FAIL, found[0].headline() + note, tuple(found), ulp=ulp, grade=grade)


def _distance(found: list[Mismatch]) -> tuple[float, float, float]:
    """How far outputs are from a reading they miss: how many values differ (every one, where a
    type, shape or output count differs), then the worst ULP error, then the largest |difference|."""
    differing = worst_ulp = largest = 0.0
    for miss in found:
        if not miss.count:  # no values compared: the types, shapes or output counts differ
            return float("inf"), 0.0, 0.0
        differing += miss.count
        worst_ulp = max(worst_ulp, _ordered(miss.worst_ulp, 0.0))
        # No |difference| measured: every differing value is a NaN or an infinity against a
        # number (the farthest), or the type has no differences to measure (alike for every reading).
        largest = max(largest, _ordered(miss.max_abs_diff, float("inf")))
    return differing, worst_ulp, largest


def _ordered(value: float | None, unmeasured: float) -> float:
    """A measure to order by: `unmeasured` for none, a NaN as the worst."""
    if value is None:
        return unmeasured
    return float("inf") if value != value else value


def _matched(expected: Expected, reading: Reading, measured: _Measured | None) -> Verdict:
    """The verdict of outputs that match `reading`: ambiguous when the reference allows several."""
    several = len(expected.readings) > 1
    if measured is None:
        if several:
            return Verdict(AMBIGUOUS, f"matches the reading '{reading.label}' ({expected.ambiguity})", reading=reading.label)
        return _passed(reading.label)
    label = reading.label
    if measured.flushed:
        label = f"{reading.label}, {FLUSHED}" if several else FLUSHED
    if measured.tier:
        label = f"{label}, {measured.tier}" if several or label != "spec" else measured.tier
    graded = measured.grade.replace("-", " ") if measured.grade else "within budget"
    within = (f"within budget (worst {ulp_text(measured.ulp)} {measured.unit}, {graded})" + (f"; {FLUSHED}" if measured.flushed else "")
              + (f"; {measured.tier}" if measured.tier else ""))
    if several:
        return Verdict(AMBIGUOUS, f"matches the reading '{label}' {within} ({expected.ambiguity})", reading=label,
                       ulp=measured.ulp, grade=measured.grade)
    return Verdict(PASS, f"outputs match {within}", reading=label, ulp=measured.ulp, grade=measured.grade)


def _judge_invalid(expected: Expected, run: RunOutput) -> Verdict:
    rule = f"{expected.invalid.rule}: {expected.invalid.sentence}"
    if run.no_kernel:  # a runtime without the kernel rejects valid and invalid inputs alike
        return Verdict(UNSUPPORTED, f"not judged: the runtime has no kernel for it ({run.error}); the input is invalid: {rule}")
    if run.unsupported and not run.invalid:  # "dynamic rank not supported" says nothing of the input's validity
        return Verdict(UNSUPPORTED, f"not judged: the runtime does not support it ({run.error}); the input is invalid: {rule}")
    if run.error is not None:
        return Verdict(PASS, f"rejected invalid input ({expected.invalid.rule})")
    return Verdict(LENIENT, f"accepted invalid input: {rule}")
