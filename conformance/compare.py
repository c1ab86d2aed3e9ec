"""Comparison: expected vs actual -> a Verdict (outcome, message, and the diff a person reads).

Rules: dtype and shape must match exactly; values compare bitwise, except that any NaN matches
any NaN, and +0.0 matches -0.0 unless `strict_zero`. A valid case matches when the actual output
equals any of the reference's readings; a match against one of several distinct readings is
`ambiguous`. An invalid case passes when the runtime rejects it, and is `lenient` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .dtypes import from_numpy
from .reference.base import Expected
from .runners.base import RunOutput
from .values import format_scalar

PASS, FAIL, UNSUPPORTED, AMBIGUOUS, LENIENT, ERROR = "pass", "fail", "unsupported", "ambiguous", "lenient", "error"
CRASH, TIMEOUT, FALLBACK, SKIPPED = "crash", "timeout", "fallback", "skipped"
XFAIL, XPASS = "xfail", "xpass"
OUTCOMES = (PASS, FAIL, UNSUPPORTED, AMBIGUOUS, LENIENT, ERROR, CRASH, TIMEOUT, FALLBACK, SKIPPED, XFAIL, XPASS)
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

    def lines(self, expected: str = "expected", actual: str = "got") -> list[str]:
        """What differs, a line each; `expected` and `actual` name the two sides (two runners' names
        in a diff, where neither is the expected answer)."""
        text = [f"output {self.output}: {expected} {self.expected_type}, {actual} {self.actual_type}"]
        if self.count:
            text.append(f"{self.count} of {self.total} values differ" +
                        (f" (max |diff| {self.max_abs_diff:g})" if self.max_abs_diff is not None else ""))
            text += [f"  at {list(i)}: {expected} {e}, {actual} {a}" for i, e, a in self.indices]
        return text

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


def type_text(array: np.ndarray) -> str:
    return f"{from_numpy(array.dtype).name}{list(array.shape)}"


def _same_bits(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Elementwise: are the stored bytes identical (any width, complex128 included)."""
    size = expected.dtype.itemsize
    as_bytes = lambda a: np.ascontiguousarray(a).view(np.uint8).reshape(*a.shape, size)
    return (as_bytes(expected) == as_bytes(actual)).all(axis=-1)


def _identical_bytes(expected: np.ndarray, actual: np.ndarray) -> bool:
    return (expected.dtype == actual.dtype and expected.shape == actual.shape and expected.dtype.kind != "O"
            and expected.tobytes() == actual.tobytes())


def equal_mask(expected: np.ndarray, actual: np.ndarray, strict_zero: bool = False) -> np.ndarray:
    """Elementwise agreement under conform's rules (same dtype and shape assumed)."""
    if expected.dtype.kind == "O":
        return np.array([e == a for e, a in zip(expected.reshape(-1), actual.reshape(-1))], dtype=bool).reshape(expected.shape)
    same = _same_bits(expected, actual)
    if from_numpy(expected.dtype).kind in ("float", "complex"):
        wide_e, wide_a = _wide(expected), _wide(actual)
        both_nan = _isnan(wide_e) & _isnan(wide_a)
        same |= both_nan
        if not strict_zero:
            same |= (wide_e == 0) & (wide_a == 0)
    return same


def _wide(array: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # widening a signalling NaN quiets it: still a NaN
        return array if array.dtype.kind == "c" else array.astype(np.float64)


def _isnan(array: np.ndarray) -> np.ndarray:
    return np.isnan(array) if array.dtype.kind != "c" else np.isnan(array.real) | np.isnan(array.imag)


def arrays_identical(expected: np.ndarray, actual: np.ndarray, strict_zero: bool = True) -> bool:
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        return False
    return bool(equal_mask(expected, actual, strict_zero).all())


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
    first_mismatches: list[Mismatch] = []
    for reading in expected.readings:
        found = _outputs_mismatches(reading.outputs, run.outputs, strict_zero)
        if not found:
            if len(expected.readings) > 1:
                return Verdict(AMBIGUOUS, f"matches the reading '{reading.label}' ({expected.ambiguity})", reading=reading.label)
            return _passed(reading.label)
        first_mismatches = first_mismatches or found
    readings_note = f" (none of {len(expected.readings)} allowed readings match)" if len(expected.readings) > 1 else ""
    return Verdict(FAIL, first_mismatches[0].headline() + readings_note, tuple(first_mismatches))


def _judge_invalid(expected: Expected, run: RunOutput) -> Verdict:
    rule = f"{expected.invalid.rule}: {expected.invalid.sentence}"
    if run.error is not None:
        return Verdict(PASS, f"rejected invalid input ({expected.invalid.rule})")
    return Verdict(LENIENT, f"accepted invalid input: {rule}")
