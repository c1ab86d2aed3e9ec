"""What a reference answers for one case: the readings the text allows, or the rule that makes the
input invalid; data only, a leaf that references, function bodies and comparison all read.

A `Reading` is one allowed output (per output, judged exactly, by a precision budget with its
precise value, or by per-element `Bounds`); an `Expected` holds a case's readings, or its `Invalid`
rule, and the function body whose readings are tried when the prose's are missed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..equality import arrays_identical


@dataclass(frozen=True)
class Invalid:
    """An input the spec forbids: a short rule id and the sentence of the spec that forbids it."""

    rule: str
    sentence: str


@dataclass(frozen=True, eq=False)
class Bounds:
    """A per-element check of one output: every value from `low` to `high` (arrays of the output's
    type) is allowed, and a NaN where `nan` is set. A function body's reading carries these: each
    node's allowed error carried through the body (reference/function_body.py)."""

    low: np.ndarray
    high: np.ndarray
    nan: np.ndarray

    def contains(self, values: np.ndarray) -> np.ndarray:
        """Per element, whether `values` (of the output's type and shape) is allowed: strings (which
        a body's casts fix exactly, low and high the same) by equality."""
        if values.dtype.kind in "iub":
            return (values >= self.low) & (values <= self.high)
        if values.dtype.kind in "USO":
            return np.asarray(values == self.low, dtype=bool).reshape(values.shape)
        with np.errstate(invalid="ignore"):
            wide, low, high = (a.astype(np.float64) for a in (values, self.low, self.high))
            nan = np.isnan(wide)
            return np.where(nan, self.nan | np.isnan(low), (wide >= low) & (wide <= high))


@dataclass(frozen=True, eq=False)
class Reading:
    """One allowed output, with a label saying which reading of the text produced it.

    `precise` holds, per output, the value before rounding to the output's dtype (float64), for
    outputs judged by a precision budget; None for outputs judged exactly.
    """

    outputs: tuple[np.ndarray, ...]
    label: str = "spec"
    precise: tuple[np.ndarray | None, ...] = ()
    # Per output, a mask of the elements the text leaves undefined ("undefined if OOR"): any value
    # of the output's type matches there. None (or absent) where every element is defined.
    free: tuple[np.ndarray | None, ...] = ()
    # Per output, the interval each element must fall in (`Bounds`), for an output judged by bounds
    # (a function body's reading); None (or absent) for an output judged otherwise.
    bounds: tuple[Bounds | None, ...] = ()
    # Per output, other values each element may take where the text leaves the choice among a few
    # open (duplicate scatter targets: any one of their updates): an array of shape (m, *output's
    # shape), each of its m layers an allowed value per element; None (or absent) for none.
    choices: tuple[np.ndarray | None, ...] = ()


@dataclass(frozen=True)
class OutputSpec:
    """What one output must be whatever its values: its element type (numpy's) and, where the text
    fixes it, its shape (None: any). An op whose outputs have no deterministic value states these and
    no readings, and is judged by them alone."""

    dtype: np.dtype
    shape: tuple[int, ...] | None = None

    def problem(self, actual: np.ndarray) -> str | None:
        """Why `actual` is not such an output, or None."""
        if actual.dtype != self.dtype:
            return f"expected a {self.dtype} output, got {actual.dtype}"
        if self.shape is not None and tuple(actual.shape) != tuple(self.shape):
            return f"expected shape {list(self.shape)}, got {list(actual.shape)}"
        return None


@dataclass(frozen=True, eq=False)
class Expected:
    """The reference's answer for one Example."""

    readings: tuple[Reading, ...] = ()
    invalid: Invalid | None = None
    may_reject: str | None = None  # why the spec also allows a runtime to reject this valid input
    ambiguity: str | None = None  # what is ambiguous, when readings differ
    # Per output: how a float output is judged (a `precision.Budget`), or None for exactly.
    budgets: tuple[object | None, ...] = ()
    # The version's function body (reference/function_body.py `Body`), whose readings are evaluated
    # only when a runtime's outputs match none of the prose's; None where the version has no body.
    body: object | None = None
    # Per output, its type and shape apart from any value (`OutputSpec`): what judges an output the
    # text gives no value for; () where the readings say it all.
    specs: tuple[OutputSpec, ...] = ()
    # Where the text leaves the order of the outputs' elements free (TopK with sorted=0): a function
    # that puts a runtime's outputs in the order the readings are written in, and the text that
    # frees it. A module-level function (or a partial of one), so that a result pickles.
    order: Callable[[tuple[np.ndarray, ...]], tuple[np.ndarray, ...]] | None = None
    order_note: str | None = None

    @property
    def is_valid(self) -> bool:
        return self.invalid is None

    def body_readings(self) -> tuple[tuple[Reading, ...], str]:
        """The function body's readings that differ from the prose's, and where the prose's own value
        lies outside the body's bounds ('3 of 8 elements': a contradiction of the text; '' where none)."""
        return self.body.readings(self.readings) if self.body is not None else ((), "")


def single(output: np.ndarray, label: str = "spec") -> Expected:
    return Expected(readings=(Reading((output,), label),))


def readings(candidates: list[Reading], ambiguity: str, may_reject: str | None = None) -> Expected:
    """An Expected from candidate readings, dropping those whose outputs are bitwise identical."""
    distinct: list[Reading] = []
    for candidate in candidates:
        if not any(_same_outputs(candidate, seen) for seen in distinct):
            distinct.append(candidate)
    return Expected(
        readings=tuple(distinct),
        ambiguity=ambiguity if len(distinct) > 1 else None,
        may_reject=may_reject,
    )


def spec_if_one(found: Expected) -> Expected:
    """`found` (from `readings`), or where its candidates came to one answer, that answer as the
    text's own ("spec"), unlabelled by the reading that happened to give it."""
    if len(found.readings) == 1:
        return Expected(readings=(Reading(found.readings[0].outputs),))
    return found


def freed(options: list[Reading], undefined: np.ndarray) -> list[Reading]:
    """The readings of a one-output op with any value allowed where the text leaves an element
    undefined (`undefined`, a mask of the output): one for each reading that differs from the
    others where the text defines the result, to go after those that fix every element, so that a
    runtime following a named convention is told which."""
    found: list[Reading] = []
    where = f"{int(undefined.sum())} of {undefined.size} elements"
    for option in options:
        defined = option.outputs[0][~undefined]
        if not any(arrays_identical(defined, other.outputs[0][~undefined]) for other in found):
            found.append(Reading(option.outputs, f"{option.label}; any value where the text leaves it undefined ({where})",
                                 free=(undefined,)))
    return found


def _same_outputs(a: Reading, b: Reading) -> bool:
    if any(mask is not None and mask.any() for mask in (*a.free, *b.free)) or any(c is not None for c in (*a.choices, *b.choices)):
        return False  # a reading that leaves elements free or open is kept beside one that fixes them
    return all(arrays_identical(x, y) for x, y in zip(a.outputs, b.outputs))
