"""Einsum (versions 12 and 28; 28 adds bfloat16, its text is the same), from the schema text.

The equation, as the text describes it:

- "a comma-separated sequence of lower case letters and/or upper case letters", "Each term
  corresponds to an operand tensor, and the characters within the terms correspond to operands
  dimensions"; "a" and "A" are distinct; "The equation string may contain space (U+0020)
  character": spaces are ignored wherever they stand. Any other character (a digit, a tab, a '-'
  or '>' outside "->", '.' outside "...") is invalid, and so are more terms or fewer than operands,
  and a term with more letters than its operand has dims (or, without an ellipsis, fewer).
- "->" followed by the right-hand side: the explicit form, the output's dims those labels in that
  order. A label on the right that no operand has, or one written there twice, names no output
  dim: invalid (numpy's reading; the text is silent). Otherwise (implicit form) the output's labels
  are "the sequence of indices appearing exactly once in the equation, sorted in increasing order
  of their ASCII values", after the ellipsis dims ("In implicit mode, the ellipsis dimensions are
  set to the beginning of the output").
- "When a dimension character is repeated in the left-hand side, it represents summation along the
  dimension": a label repeated within one term takes that operand's diagonal; every label of the
  left-hand side that is not in the output is summed ("reduce-sum performs a summation over all the
  indices occurring in the input terms that do not occur in the output-term"). The dims one label
  names must be equal: labels do not broadcast (the text gives broadcasting to the ellipsis only).
- Ellipsis: "every occurrence of ellipsis in the equation must represent the same number of
  dimensions" (so two terms whose ellipses cover different numbers of dims are invalid, though
  numpy broadcasts them right-aligned), the dims they cover broadcast (numpy-style: equal or 1), a
  term holds at most one ("The right-hand side may contain exactly one ellipsis"; one term's two
  ellipses could not "indicate a fixed number of dimensions"). Readings where the text is silent:
  an explicit output without an ellipsis where the operands' ellipses cover dims sums those dims
  (they occur in the input terms and not in the output-term), which numpy rejects: a runtime may
  reject it; an ellipsis on the right with none on the left covers no dims.

Judging: each output element is Σ over the summed labels of a product of m factors (one per
operand), N terms (N the product of the summed dims; N = 0 is an empty sum, 0).

- Integer outputs exact (Python ints); where the value does not fit the type: wrapped (two's
  complement) and saturated are readings, as for MatMul.
- Float outputs by a per-element bound (bounds.py) around the exact value of the terms as given:
  any evaluation (the terms expanded, or the operands contracted pairwise in any order with the
  labels private to one operand summed first) rounds each term's path at most R = N + m − 2 times
  in its accumulator (m − 1 products, and Σ(S_i − 1) ≤ Π S_i − 1 = N − 1 additions over its stages
  of S_i terms), so Higham's bound is γ(R)·Σ|Π factors| — for a matrix product γ(K), as MatMul's.
  A runtime contracting in stages may store its I = stages − 1 intermediates in the output type:
  the tier that accumulates a 16-bit type in float32 allows (1 + u_acc)^R·(1 + u_out)^I − 1 of
  Σ|Π|. Underflow adds, per rounding, a subnormal's worth. Rows where every partial sum and
  partial product of any staging is exact (small integers, quarters; checked on Π max(|f|, 1) and
  the least last bit of the factors) are judged bitwise; Σ|Π| past the accumulator's max sets no
  requirement (some order overflows). NaN and ±inf: the terms' IEEE products and sums, exactly.
  Over 1,000 outputs, TOSA's statistical test.
- The exact value: float64 where every product of m factors is exact in it (float16 and bfloat16
  pairs, float32 pairs), else Fractions (beyond FRACTION_LIMIT factors, math.fsum of the float64
  products, its own error added to the bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import ml_dtypes
import numpy as np

from ..bounds import (ElementBound, Tier, accumulators, as_float, exactly_summable, half_ulp, ksb, last_bits,
                      least_subnormal, statistical_scale, unit_roundoff)
from ..case import Example
from ..dtypes import from_numpy
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics
from .matmul import OVERFLOW_OPEN, integer_readings

LETTERS = "the equation string contains a comma-separated sequence of lower case letters and/or upper case letters"
SPACES = "The equation string may contain space (U+0020) character."
CHARACTERS = (f"Einsum: {LETTERS[0].upper()}{LETTERS[1:]} (each term's letters, '...' for an ellipsis), optionally "
              "followed by \"->\" and the right-hand side. " + SPACES)
TERMS = "Einsum: Each term corresponds to an operand tensor, and the characters within the terms correspond to operands dimensions."
ARROW = "Einsum: This sequence may be followed by \"->\" to separate the left and right hand side of the equation (once)."
ELLIPSIS_SAME = ("Einsum: Ellipsis must indicate a fixed number of dimensions. Specifically, every occurrence of ellipsis "
                 "in the equation must represent the same number of dimensions.")
ELLIPSIS_ONCE = ("Einsum: The right-hand side may contain exactly one ellipsis (and a term of the left-hand side with two "
                 "could not indicate a fixed number of dimensions).")
ELLIPSIS_BROADCAST = ("Einsum: The equation may contain ellipsis (\"...\") to enable broadcasting: the dims the ellipses "
                      "cover must broadcast (equal, or 1).")
LABEL_DIMS = ("Einsum: output[output-term] = reduce-sum( input1[term1] * input2[term2] ): one character indexes the same "
              "range in every dimension it names (labels do not broadcast; the text gives broadcasting to the ellipsis).")
OUTPUT_UNKNOWN = ("Einsum: the right-hand side indices indicate output tensor dimensions: an index that no input term "
                  "holds names no dimension (numpy rejects it).")
OUTPUT_TWICE = ("Einsum: the right-hand side indices indicate output tensor dimensions; only a character repeated in the "
                "left-hand side has a meaning (summation): one repeated in the output names none (numpy rejects it).")
NO_EQUATION = "Einsum: equation: Einsum expression string (a required attribute)."
SUMMED_ELLIPSIS = ("the reduce-sum performs a summation over all the indices occurring in the input terms that do not occur "
                   "in the output-term: read so, ellipsis dims absent from an explicit output are summed; numpy rejects "
                   "such an equation ('output has more dimensions than subscripts given'), so a runtime may reject it")
REASON = ("Higham's bound for a sum of N products of m factors in any order and any staging (γ(N + m − 2)·Σ|Π factors|) in "
          "each accumulator a runtime may use, intermediates stored in the output type, plus one rounding of the result; "
          "exactly summable rows judged bitwise (PRECISION.md, 'Ops that accumulate')")
FRACTION_LIMIT = 400_000  # factors multiplied and summed exactly with Fractions; beyond, math.fsum and its error
ELLIPSIS_LABEL = "..."


# --- the equation ---

@dataclass(frozen=True)
class Term:
    """One term as written: its labels in order, ELLIPSIS_LABEL standing for the ellipsis."""

    labels: tuple[str, ...]

    @property
    def has_ellipsis(self) -> bool:
        return ELLIPSIS_LABEL in self.labels

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(label for label in self.labels if label != ELLIPSIS_LABEL)


@dataclass(frozen=True)
class Equation:
    """A parsed equation: the left-hand terms and the right-hand term (None in implicit mode)."""

    inputs: tuple[Term, ...]
    output: Term | None


def equation_text(example: Example) -> str | None:
    written = example.attributes.get("equation")
    if written is None:
        return None
    return written.decode("utf-8", "replace") if isinstance(written, bytes) else str(written)


def parse(text: str) -> Equation | Invalid:
    """The equation's terms, or why the text does not allow it (see the module's docstring)."""
    compact = text.replace(" ", "")
    if compact.count("->") > 1:
        return Invalid("bad-equation", ARROW)
    left, arrow, right = compact.partition("->")
    terms = [_term(written) for written in left.split(",")]
    output = _term(right) if arrow else None
    for term in (*terms, output):
        if isinstance(term, Invalid):
            return term
    return Equation(tuple(terms), output)


def _term(written: str) -> Term | Invalid:
    labels: list[str] = []
    position = 0
    while position < len(written):
        char = written[position]
        if char == ".":
            if written[position:position + 3] != "...":
                return Invalid("bad-equation", CHARACTERS)
            labels.append(ELLIPSIS_LABEL)
            position += 3
            continue
        if not (char.isascii() and char.isalpha()):
            return Invalid("bad-equation", CHARACTERS)
        labels.append(char)
        position += 1
    if labels.count(ELLIPSIS_LABEL) > 1:
        return Invalid("ellipsis-twice", ELLIPSIS_ONCE)
    return Term(tuple(labels))


@dataclass(frozen=True)
class Plan:
    """How the operands index the output and the summed dims: `grid` the dims of the output
    (in the output's order) then the summed dims; per operand, which grid axis each of its dims
    follows (None for an ellipsis dim of size 1 that broadcasts); how many leading grid axes the
    output has; and whether ellipsis dims are summed (a reading, SUMMED_ELLIPSIS)."""

    grid: tuple[int, ...]
    axes: tuple[tuple[int | None, ...], ...]
    output_rank: int
    summed_ellipsis: bool

    @property
    def output_shape(self) -> tuple[int, ...]:
        return self.grid[:self.output_rank]

    @property
    def terms(self) -> int:
        return math.prod(self.grid[self.output_rank:])

    def private_summed(self) -> int:
        """Summed grid axes only one operand follows: a runtime may sum each apart, a stage of its own."""
        counts = {}
        for axes in self.axes:
            for axis in set(a for a in axes if a is not None and a >= self.output_rank):
                counts[axis] = counts.get(axis, 0) + 1
        return sum(1 for count in counts.values() if count == 1)


def plan(equation: Equation, shapes: list[tuple[int, ...]]) -> Plan | Invalid:
    """The grid the operands index, or why their shapes do not fit the equation."""
    if len(equation.inputs) != len(shapes):
        return Invalid("operand-count", f"{TERMS} ({len(equation.inputs)} terms, {len(shapes)} operands)")
    ellipsis = _ellipsis_shape(equation, shapes)
    if isinstance(ellipsis, Invalid):
        return ellipsis
    sizes: dict[str, int] = {}
    for term, dims in zip(equation.inputs, shapes):
        for label, size in zip(term.letters, _letter_dims(term, dims)):
            if sizes.setdefault(label, size) != size:
                return Invalid("label-dims-mismatch", f"{LABEL_DIMS} ('{label}' names dims {sizes[label]} and {size})")
    counts: dict[str, int] = {}
    for term in equation.inputs:
        for label in term.letters:
            counts[label] = counts.get(label, 0) + 1
    if equation.output is None:
        out_labels = [ELLIPSIS_LABEL] if any(t.has_ellipsis for t in equation.inputs) else []
        out_labels += sorted((label for label, count in counts.items() if count == 1), key=ord)
    else:
        out_labels = list(equation.output.labels)
        for label in equation.output.letters:
            if label not in sizes:
                return Invalid("output-label-unknown", f"{OUTPUT_UNKNOWN} ('{label}')")
            if equation.output.letters.count(label) > 1:
                return Invalid("output-label-repeated", f"{OUTPUT_TWICE} ('{label}')")
    return _grid(equation, shapes, sizes, ellipsis, out_labels)


def _letter_dims(term: Term, dims: tuple[int, ...]) -> list[int]:
    """The dims of a term's letters (those before and after its ellipsis)."""
    if not term.has_ellipsis:
        return list(dims)
    at = term.labels.index(ELLIPSIS_LABEL)
    after = len(term.labels) - at - 1
    return list(dims[:at]) + (list(dims[len(dims) - after:]) if after else [])


def _ellipsis_dims(term: Term, dims: tuple[int, ...]) -> tuple[int, ...]:
    if not term.has_ellipsis:
        return ()
    at = term.labels.index(ELLIPSIS_LABEL)
    return tuple(dims[at:len(dims) - (len(term.labels) - at - 1)])


def _ellipsis_shape(equation: Equation, shapes: list[tuple[int, ...]]) -> tuple[int, ...] | Invalid:
    """The ellipsis dims broadcast together, or why a term does not fit its operand's rank."""
    covered: list[tuple[int, ...]] = []
    for term, dims in zip(equation.inputs, shapes):
        letters = len(term.letters)
        if len(dims) < letters or (not term.has_ellipsis and len(dims) != letters):
            return Invalid("term-rank-mismatch", f"{TERMS} (term '{''.join(term.labels)}', an operand of rank {len(dims)})")
        if term.has_ellipsis:
            covered.append(_ellipsis_dims(term, dims))
    if len({len(c) for c in covered}) > 1:
        return Invalid("ellipsis-rank-differs", f"{ELLIPSIS_SAME} (they cover {sorted({len(c) for c in covered})} dims)")
    if not covered:
        return ()
    broadcast = []
    for sizes in zip(*covered):
        wide = {s for s in sizes if s != 1}
        if len(wide) > 1:
            return Invalid("ellipsis-not-broadcastable", f"{ELLIPSIS_BROADCAST} (dims {list(sizes)})")
        broadcast.append(wide.pop() if wide else 1)
    return tuple(broadcast)


def _grid(equation: Equation, shapes, sizes: dict[str, int], ellipsis: tuple[int, ...], out_labels: list[str]) -> Plan:
    grid: list[int] = []
    where: dict[str, int] = {}
    ellipsis_axes: list[int] = []
    for label in out_labels:
        if label == ELLIPSIS_LABEL:
            ellipsis_axes = list(range(len(grid), len(grid) + len(ellipsis)))
            grid.extend(ellipsis)
        else:
            where[label] = len(grid)
            grid.append(sizes[label])
    output_rank = len(grid)
    summed_ellipsis = ELLIPSIS_LABEL not in out_labels and len(ellipsis) > 0
    if summed_ellipsis:
        ellipsis_axes = list(range(len(grid), len(grid) + len(ellipsis)))
        grid.extend(ellipsis)
    for label in sorted(sizes, key=ord):
        if label not in where:
            where[label] = len(grid)
            grid.append(sizes[label])
    axes = []
    for term, dims in zip(equation.inputs, shapes):
        followed: list[int | None] = []
        covered = _ellipsis_dims(term, dims)
        for label in term.labels:
            if label == ELLIPSIS_LABEL:
                followed.extend(axis if size != 1 or ellipsis[axis - ellipsis_axes[0]] == 1 else None
                                for axis, size in zip(ellipsis_axes, covered))
            else:
                followed.append(where[label])
        axes.append(tuple(followed))
    return Plan(tuple(grid), tuple(axes), output_rank, summed_ellipsis)


def factors(plan: Plan, operands: list[np.ndarray]) -> list[np.ndarray]:
    """Per operand, its factor in each term of each output element: arrays (elements, N)."""
    grid = plan.grid
    found = []
    for operand, axes in zip(operands, plan.axes):
        index = []
        for axis in axes:
            if axis is None:
                index.append(np.zeros((1,) * len(grid), dtype=np.intp))
            else:
                shaped = [1] * len(grid)
                shaped[axis] = grid[axis]
                index.append(np.arange(grid[axis]).reshape(shaped))
        taken = operand[tuple(index)] if index else np.asarray(operand).reshape((1,) * len(grid))
        taken = np.broadcast_to(taken, grid)
        found.append(np.ascontiguousarray(taken).reshape(math.prod(plan.output_shape), plan.terms))
    return found


# --- float outputs ---

def _products(columns: list[np.ndarray]) -> np.ndarray:
    with np.errstate(all="ignore"):
        product = columns[0].copy()
        for factor in columns[1:]:
            product = product * factor
        return product


def _exact_values(columns: list[np.ndarray], out: np.dtype) -> tuple[np.ndarray, float]:
    """Σ_k Π_i f_ik per row: IEEE where a term is not finite; and the reference's own error per
    unit of Σ|Π| (0 where exact)."""
    terms = _products(columns)
    rows, n = terms.shape
    with np.errstate(all="ignore"):
        nan = np.isnan(terms).any(axis=1) | (np.isposinf(terms).any(axis=1) & np.isneginf(terms).any(axis=1))
        special = np.where(nan, np.nan, np.where(np.isposinf(terms).any(axis=1), np.inf,
                                                  np.where(np.isneginf(terms).any(axis=1), -np.inf, 0.0)))
        finite = np.isfinite(terms).all(axis=1)
        y = np.where(finite, terms.sum(axis=1) if n else 0.0, special)
    digits = int(ml_dtypes.finfo(out).nmant) + 1
    if len(columns) * digits <= 53 and np.dtype(out) != np.float64:
        return y, 0.0  # products exact in float64, their sums far within the bound
    if rows * n * len(columns) > FRACTION_LIMIT:
        for r in np.flatnonzero(finite):
            y[r] = math.fsum(terms[r].tolist())
        return y, (n + len(columns)) * 2.0 ** -52
    lists = [c.tolist() for c in columns]
    for r in np.flatnonzero(finite):
        total = Fraction(0)
        for k in range(n):
            term = Fraction(lists[0][r][k])
            for column in lists[1:]:
                term *= Fraction(column[r][k])
            total += term
        y[r] = as_float(total)
    return y, 0.0


def _exact_tier(columns: list[np.ndarray], accumulator: np.dtype, staged: bool) -> np.ndarray:
    """Per row, whether every partial sum and partial product of any staging is exact in
    `accumulator`: the terms themselves where there is no staging beyond products (m ≤ 2), else a
    stand-in row (Π max(|f|, 1) per term, and 2^q, q the least last bit any partial product can
    have) whose exactness implies every intermediate's."""
    terms = _products(columns)
    if not staged:
        return exactly_summable(terms, accumulator)
    with np.errstate(all="ignore"):
        big = np.ones_like(terms)
        lowest = np.zeros(terms.shape, dtype=np.int64)
        for column in columns:
            big = big * np.maximum(np.abs(column), 1.0)
            bits = last_bits(np.where(np.isfinite(column), column, 0.0))
            lowest = lowest + np.minimum(np.where(bits == np.iinfo(np.int64).max, 0, bits), 0)
        least = lowest.min(axis=1) if lowest.shape[1] else np.zeros(len(terms), dtype=np.int64)
        stand_in = np.concatenate([big, np.ldexp(1.0, least)[:, None]], axis=1)
    return exactly_summable(np.where(np.isfinite(terms).all(axis=1)[:, None], stand_in, np.nan), accumulator)


def float_answer(plan: Plan, operands: list[np.ndarray], out: np.dtype) -> Expected:
    out = np.dtype(out)
    with np.errstate(invalid="ignore", over="ignore"):
        columns = [f.astype(np.float64) for f in factors(plan, operands)]
    m, n = len(columns), plan.terms
    y, reference = _exact_values(columns, out)
    with np.errstate(all="ignore"):
        magnitudes = np.abs(columns[0])
        for column in columns[1:]:
            magnitudes = magnitudes * np.abs(column)
        finite_terms = np.where(np.isfinite(magnitudes), magnitudes, 0.0)
        beyond = (~np.isfinite(magnitudes) & np.isfinite(np.stack(columns)).all(axis=0)).any(axis=1)
        magnitude = np.where(beyond, np.inf, finite_terms.sum(axis=1) if n else 0.0)
        largest = max((float(np.abs(np.where(np.isfinite(c), c, 0.0)).max()) for c in columns if c.size), default=1.0)
    stages = (m - 1) + plan.private_summed()
    intermediates = max(stages - 1, 0)
    rounds = max(n + m - 2, 0)
    with np.errstate(invalid="ignore", over="ignore"):
        rounded = np.where(np.isfinite(y), y.astype(out).astype(np.float64), y)
        correct = np.abs(rounded - y)
    tiers = []
    for label, accumulator in accumulators(out):
        u = unit_roundoff(accumulator)
        stored = intermediates if accumulator != out else 0
        with np.errstate(over="ignore"):
            growth = np.expm1(rounds * math.log1p(u) + stored * math.log1p(unit_roundoff(out)))
            subnormal = least_subnormal(out if stored else accumulator)
            underflow = (n * max(m - 1, 1) + rounds + 1) * subnormal * max(largest, 1.0) ** max(m - 2, 0)
            allowed = half_ulp(y, out) + growth * magnitude + reference * magnitude + underflow
        if reference == 0.0 and n:
            exact = _exact_tier(columns, accumulator, staged=m > 2 or intermediates > 0)
            if stored:
                exact &= _exact_tier(columns, out, staged=True)
            allowed = np.where(exact, correct, allowed)
        elif not n:
            allowed = np.zeros(len(y))  # an empty sum: 0 exactly
        # Σ|Π f| past the accumulator's max: any infinity or NaN, a finite answer still within the bound
        past = magnitude > float(ml_dtypes.finfo(accumulator).max)
        allowed = np.where(past & ~np.isfinite(y), np.inf, allowed)
        tiers.append(Tier(label, allowed.reshape(plan.output_shape),
                          ksb(np.full(len(y), max(rounds, 1), dtype=np.float64), accumulator, out).reshape(plan.output_shape),
                          non_finite=past.reshape(plan.output_shape)))
    formula = "½ulp(y) + ((1 + u_acc)^(N + m − 2)·(1 + u_out)^I − 1)·Σ|Π f|"
    if reference:
        formula += " + (N + m)·2^-52·Σ|Π f| (the reference's float64 sum)"
    bound = ElementBound(tuple(tiers), formula, REASON, statistical_scale(magnitude, out).reshape(plan.output_shape))
    precise = y.reshape(plan.output_shape)
    with np.errstate(over="ignore", invalid="ignore"):
        reading = Reading((precise.astype(out),), precise=(precise,))
    return Expected(readings=(reading,), budgets=(bound,))


# --- integer outputs ---

def integer_sums(plan: Plan, operands: list[np.ndarray]) -> list[int]:
    columns = [f.astype(object) for f in factors(plan, operands)]
    terms = columns[0]
    for column in columns[1:]:
        terms = terms * column
    return [int(sum(row, 0)) for row in terms.tolist()] if plan.terms else [0] * terms.shape[0]


# --- the versions ---

def operands_of(example: Example) -> list[np.ndarray]:
    """The operands in the node's order (Inputs, Inputs_1, ...)."""
    formal = example.version.inputs[0]
    found, index = [], 0
    while formal.instance(index) in example.inputs:
        found.append(np.asarray(example.inputs[formal.instance(index)]))
        index += 1
    return found


def planned(example: Example) -> tuple[Plan, list[np.ndarray]] | Invalid:
    text = equation_text(example)
    if text is None:
        return Invalid("bad-equation", NO_EQUATION)
    equation = parse(text)
    if isinstance(equation, Invalid):
        return equation
    operands = operands_of(example)
    found = plan(equation, [tuple(o.shape) for o in operands])
    return found if isinstance(found, Invalid) else (found, operands)


class Einsum12(VersionSemantics):
    """Einsum-12: the equation as the text describes it; float outputs by the bound, integers exact."""

    since = 12

    def expected(self, example: Example) -> Expected:
        found = planned(example)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        plan_, operands = found
        out = np.dtype(operands[0].dtype)
        if from_numpy(out).kind == "float":
            answer = float_answer(plan_, operands, out)
        else:
            answer = integer_readings({"": integer_sums(plan_, operands)}, out, plan_.output_shape, OVERFLOW_OPEN)
        return replace(answer, may_reject=SUMMED_ELLIPSIS) if plan_.summed_ellipsis else answer


class Einsum28(Einsum12):
    """Einsum-28: bfloat16 too (the same text)."""

    since = 28


# --- traits: the causes a runtime may deviate by ---

def _equation(example: Example) -> Equation | None:
    text = equation_text(example)
    found = parse(text) if text is not None else None
    return found if isinstance(found, Equation) else None


def _plan(example: Example) -> Plan | None:
    found = planned(example)
    return None if isinstance(found, Invalid) else found[0]


def ellipsis_used(example: Example) -> bool:
    found = _equation(example)
    return found is not None and any(t.has_ellipsis for t in (*found.inputs, found.output) if t is not None)


def summed_ellipsis(example: Example) -> bool:
    """Ellipsis dims absent from an explicit output: summed (a reading numpy rejects)."""
    found = _plan(example)
    return found is not None and found.summed_ellipsis


def ellipsis_broadcast(example: Example) -> bool:
    """An operand's ellipsis dim of size 1 against a wider one."""
    found = _plan(example)
    return found is not None and any(axis is None for axes in found.axes for axis in axes)


def diagonal(example: Example) -> bool:
    """A label repeated within one term: the operand's diagonal."""
    found = _equation(example)
    return found is not None and any(len(set(t.letters)) < len(t.letters) for t in found.inputs)


def implicit_output(example: Example) -> bool:
    found = _equation(example)
    return found is not None and found.output is None


def uppercase_labels(example: Example) -> bool:
    text = equation_text(example) or ""
    return any(c.isupper() for c in text)


def uppercase_implicit_output(example: Example) -> bool:
    """Implicit mode with an upper-case label among the output's (one appearing exactly once)."""
    found = _equation(example)
    if found is None or found.output is not None:
        return False
    letters = [label for term in found.inputs for label in term.letters]
    return any(label.isupper() and letters.count(label) == 1 for label in letters)


def diagonal_of_empty_operand(example: Example) -> bool:
    """An operand with no elements whose term repeats a label (a diagonal of an empty tensor)."""
    found = _equation(example)
    operands = operands_of(example)
    return found is not None and len(found.inputs) == len(operands) and any(
        o.size == 0 and len(set(t.letters)) < len(t.letters) for t, o in zip(found.inputs, operands))


def empty_operand(example: Example) -> bool:
    """An operand with no elements."""
    return any(o.size == 0 for o in operands_of(example))


def int64_beyond_2pow53_summed(example: Example) -> bool:
    """A 64-bit integer operand holding a value beyond 2**53 (where a double no longer holds every
    integer) in a case that sums terms."""
    operands = operands_of(example)
    found = _plan(example)
    return (found is not None and found.terms > 1 and any(
        o.dtype.kind in "iu" and o.dtype.itemsize == 8 and o.size and bool(np.any(np.abs(o.astype(np.float64)) > 2.0 ** 53))
        for o in operands))


def spaces(example: Example) -> bool:
    return " " in (equation_text(example) or "")


def many_operands(example: Example) -> bool:
    """Three operands or more: a runtime contracts them in stages."""
    return len(operands_of(example)) >= 3


def scalar_operand(example: Example) -> bool:
    return any(o.ndim == 0 for o in operands_of(example))


def empty_sum(example: Example) -> bool:
    """A summed dim of size 0 beside a non-empty output: every output an empty sum, 0."""
    found = _plan(example)
    return found is not None and found.terms == 0 and math.prod(found.output_shape) > 0


def empty_output(example: Example) -> bool:
    found = _plan(example)
    return found is not None and math.prod(found.output_shape) == 0


def long_sum(example: Example) -> bool:
    """256 terms or more per output: where a 16-bit accumulator parts from a float32 one."""
    found = _plan(example)
    return found is not None and found.terms >= 256


def non_finite_operand(example: Example) -> bool:
    return any(from_numpy(o.dtype).kind == "float" and not np.isfinite(o.astype(np.float64)).all()
               for o in operands_of(example))


def integer_overflow(example: Example) -> bool:
    operands = operands_of(example)
    if not operands or operands[0].dtype.kind not in "iu":
        return False
    found = REFERENCE.expected(example)
    return found.is_valid and found.ambiguity == OVERFLOW_OPEN


def output_elements(example: Example) -> int:
    """The output's elements from the shapes alone (an outer product outgrows its operands)."""
    largest = max((v.size for v in example.inputs.values() if v is not None), default=0)
    found = _plan(example)
    return largest if found is None else max(largest, math.prod(found.output_shape))


TRAITS = {"ellipsis": ellipsis_used, "summed-ellipsis": summed_ellipsis, "ellipsis-broadcast": ellipsis_broadcast,
          "diagonal": diagonal, "implicit-output": implicit_output, "uppercase-labels": uppercase_labels,
          "uppercase-implicit-output": uppercase_implicit_output, "diagonal-of-empty-operand": diagonal_of_empty_operand,
          "empty-operand": empty_operand, "int64-beyond-2pow53-summed": int64_beyond_2pow53_summed,
          "spaces": spaces, "many-operands": many_operands, "scalar-operand": scalar_operand, "empty-sum": empty_sum,
          "empty-output": empty_output, "long-sum": long_sum, "non-finite-operand": non_finite_operand,
          "integer-overflow": integer_overflow}

REFERENCE = OpReference(op="Einsum", dtype_param="T", semantics=(Einsum12, Einsum28), data_inputs=("Inputs",),
                        output_elements_from=output_elements, traits=TRAITS,
                        rules=("bad-equation", "ellipsis-twice", "operand-count", "term-rank-mismatch",
                               "ellipsis-rank-differs", "ellipsis-not-broadcastable", "label-dims-mismatch",
                               "output-label-unknown", "output-label-repeated"))
