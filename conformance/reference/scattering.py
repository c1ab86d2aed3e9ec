"""Scatter, ScatterElements, ScatterND and TensorScatter: a copy of `data` with `updates` written
into it at the places `indices` name.

Each update element is aimed at one element of the data (`Plan.targets`, in the order of the
updates: the text's loops, `np.ndindex` over the updates). Without a reduction the output is a
movement, every element copied bitwise from the data or the updates (movement.py's `gathered`);
where several updates aim at one element the texts leave which one is written open: Scatter-9 and
ScatterElements-11/13 say nothing of it, ScatterElements-16+ and ScatterND say the indices "should
not have duplicate entries" (ScatterND: "not supported", "The order of iteration ... is not
specified"). The reading writes the updates in their order (the last one stays), and
`Reading.choices` holds each other update aimed at an element; where the text says "should not",
a runtime may also reject the input.

With a reduction (ScatterElements-16+ and ScatterND-16+: add and mul; 18+: max and min) duplicates
are defined, each update folded into the element in turn: f(output, update). The texts do not fix
the order of the loop, and a float sum or product rounds differently in each order, so every
order's result is allowed (`outcomes`, over all orders of an element's updates); each step rounds to
the data's type, as the text's numpy loop does on an array of that type. What the texts leave open
beside it, each a reading of its own: an integer result beyond the type (wrapped, as the
element-wise family reads it, or saturated at each step), NaN in max/min (propagated, or ignored
as fmax does), addition of bools (numpy's, a logical or, or addition modulo 2: exclusive or), and
the reductions the texts give strings and complex numbers no meaning for (any value, or a
rejection).

TensorScatter (a KV-cache update) is a movement too: its pseudocode, read as numpy, in `moved`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from ..case import Example
from ..dtypes import DType, dtype
from ..equality import arrays_identical
from ..values import pack
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics
from .conversion import float_to_float, wrap
from .movement import MovementSemantics, Moved, axis_in, gathered, positions

# --- the sentences the rules quote ---

DATA_RANK = "data: Tensor of rank r >= 1."
SAME_RANK_9 = "indices: Tensor of int32/int64 indices, of r >= 1 (same rank as input)."
SAME_RANK = ("ScatterElements takes three inputs `data`, `updates`, and `indices` of the same rank r >= 1 "
             "(indices: Tensor of int32/int64 indices, of r >= 1 (same rank as input))")
SAME_SHAPE = "updates: Tensor of rank r >=1 (same rank and shape as indices)"
AXIS = "axis: Which axis to scatter on. Negative value means counting dimensions from the back. Accepted range is [-r, r-1]"
OFF_AXIS = ("the index-value for dimension != axis is obtained from the index of the entry itself: an indices "
            "tensor longer than data along such a dimension aims its entries beyond data")
OFF_AXIS_EMPTY = (f"{OFF_AXIS}; here indices has no entries, so none is aimed beyond data, and a runtime that checks "
                  "the shapes may reject it")
INDEX_BOUNDS = ("indices: All index values are expected to be within bounds [-s, s-1] along axis of size s. "
                "It is an error if any of the index values are out of bounds.")
INDEX_9 = ("For each entry in `updates`, the target index in `data` is specified by corresponding entry in `indices` "
           "for dimension = axis (Scatter-9: an index beyond the axis names no element of data)")
NEGATIVE_9 = ("For each entry in `updates`, the target index in `data` is specified by corresponding entry in `indices` "
              "(Scatter-9 gives a negative index no meaning: counting from the back starts with Scatter-11)")
ND_INDICES_RANK = "indices: Tensor of rank q >= 1."
ND_DEPTH = "Let k denote indices.shape[-1] ... Hence, k can be a value at most the rank of `data`."
ND_UPDATES = "Thus, the shape of `updates` must equal indices.shape[0:q-1] ++ data.shape[k:r]"
ND_BOUNDS = ("Index values are allowed to be negative, as per the usual convention for counting backwards from the "
             "end, but are expected in the valid range.")
REDUCTION_16 = "reduction: Type of reduction to apply: none (default), add, mul."
REDUCTION_18 = "reduction: Type of reduction to apply: none (default), add, mul, max, min."

# What each text says of several updates aimed at one element, with no reduction.
SILENT = ("the text does not say which of several updates aimed at one element is written "
          "(\"the update corresponding to the [i][j] entry is performed as below: output[indices[i][j]][j] = updates[i][j]\")")
ELEMENTS_SHOULD_NOT = ('In cases where `reduction` is set to "none", indices should not have duplicate entries: that is, '
                       "if idx1 != idx2, then indices[idx1] != indices[idx2].")
ND_NOT_SUPPORTED = ("Note that `indices` should not have duplicate entries. That is, two or more `updates` for the same "
                    "index-location is not supported. The order of iteration in the above loop is not specified.")
ND_SHOULD_NOT = ('In cases where `reduction` is set to "none", indices should not have duplicate entries: that is, if '
                 "idx1 != idx2, then indices[idx1] != indices[idx2]. This ensures that the output value does not depend "
                 "on the iteration order.")
LAST_WINS = "updates written in their order, the last one staying"
ANY_ONE = "any one of the updates aimed at an element"

# What the texts leave open under a reduction.
ORDER = "the texts do not fix the order in which an element's updates are folded in: each order's result is allowed"
OVERFLOW = "the text does not say what an integer result beyond the type is"
NAN_MAX = "the text's max and min do not say what NaN gives"
BOOL_ADD = "the text does not say what adding bools is (reduction 'add' on bool: numpy's or, or addition modulo 2)"
STRING_ADD = "the text does not say what adding strings is (numpy's loop concatenates them)"
NO_MEANING = "the text gives reduction '{}' no meaning for {} (numpy's loop has none): any value, or a rejection"
MOST_ORDERED = 8  # an element with more updates than this is left free under a float reduction: 9! orders

# --- TensorScatter's sentences ---

TS_AXIS = ("axis: Sequence dimension of the `past_cache` and `update` tensors. It cannot be 0 (the batch dimension). "
           "Default is -2.")
TS_SHAPE = ("The `update` tensor's shape only differs from the cache tensors in the sequence dimension: "
            "(batch_size, D1, D2, ..., sequence_length, ..., Dn)")
TS_LONGER = "sequence_length <= max_sequence_length"
TS_WRITE_SHAPE = "write_indices: Write indices for the incoming update tensor in the cache. Shape is `(batch_size,)`."
TS_LINEAR = "`linear` mode requires write_indices+sequence_length<=max_sequence_length."
TS_MODE = "mode: Write mode of cache update. Supported modes include `linear` and `circular`."
TS_NEGATIVE = ("write_indices: the write index for each sample in the batch; the text gives an index below 0 no meaning "
               "beyond its numpy pseudocode, where it counts from the end of the sequence axis")
TS_BELOW = (f"{TS_NEGATIVE}: here the pseudocode's index lies below -max_sequence_length, where numpy raises "
            "IndexError")


@dataclass(frozen=True)
class Plan:
    """Where each update element goes: `targets[u]` is the flat position in `data` of the u-th
    update element (updates flattened, in the order of the text's loop)."""

    data: np.ndarray
    updates: np.ndarray
    targets: np.ndarray
    may_reject: str | None = None  # a reason to reject this input the shapes give (OFF_AXIS_EMPTY)

    def aimed(self) -> dict[int, list[int]]:
        """Per targeted data position, the update positions aimed at it, in order."""
        found: dict[int, list[int]] = {}
        for update, target in enumerate(self.targets.tolist()):
            found.setdefault(target, []).append(update)
        return found


def reduction_of(example: Example) -> str:
    value = example.attributes.get("reduction", "none")
    return value.decode() if isinstance(value, bytes) else str(value)


class ScatterSemantics(VersionSemantics):
    """A scatter op's version: `plan` (where the updates go, or the Invalid rule) and the
    reductions the version allows; the outputs from the shared path."""

    reductions: tuple[str, ...] = ("none",)
    reduction_sentence = ""
    duplicates = SILENT  # what the text says of duplicate targets with no reduction
    duplicates_may_reject = False

    def plan(self, example: Example) -> Plan | Invalid:  # pragma: no cover - abstract
        raise NotImplementedError

    def expected(self, example: Example) -> Expected:
        reduction = reduction_of(example)
        if reduction not in self.reductions:
            return Expected(invalid=Invalid("reduction-not-allowed", self.reduction_sentence))
        plan = self.plan(example)
        if isinstance(plan, Invalid):
            return Expected(invalid=plan)
        if reduction == "none":
            return written(plan, self.duplicates, self.duplicates_may_reject)
        return reduced(plan, reduction, dtype(example.dtype))


# --- no reduction: a movement, with the duplicates' other updates as choices ---

def written(plan: Plan, duplicates: str, may_reject: bool) -> Expected:
    """The data with every update written at its target, in order; where several aim at one
    element, the others are its `choices` (and, where the text says "should not", a rejection
    is allowed)."""
    count = plan.data.size
    flat = np.concatenate([plan.data.reshape(-1), plan.updates.reshape(-1)])
    index = np.arange(count, dtype=np.int64)
    others: dict[int, list[int]] = {}
    for target, updates in plan.aimed().items():
        index[target] = count + updates[-1]
        if len(updates) > 1:
            others[target] = [count + u for u in updates[:-1]]
    output = gathered(flat, index.reshape(plan.data.shape))
    if not others:
        return Expected(readings=(Reading((output,)),), may_reject=plan.may_reject)
    depth = max(len(o) for o in others.values())
    layers = np.repeat(index[None, :], depth, axis=0)
    for target, positions_ in others.items():
        layers[:len(positions_), target] = positions_
    choices = gathered(flat, layers.reshape(depth, *plan.data.shape))
    reading = Reading((output,), f"{LAST_WINS}; {ANY_ONE} ({duplicates})", choices=(choices,))
    reason = duplicates if may_reject else plan.may_reject
    return Expected(readings=(reading,), may_reject=reason)


# --- reductions: values folded in any order ---

Step = Callable[[object, object], object]


@dataclass(frozen=True)
class Convention:
    """One reading of a reduction: its label, its step f(output, update) (the reading's value, in
    the updates' order) and other steps whose results are allowed too (`also`)."""

    label: str
    step: Step | None  # None: the text gives no value (any value where an update lands)
    also: tuple[Step, ...] = ()


def reduced(plan: Plan, reduction: str, dt: DType) -> Expected:
    """The readings of a reduction: one per convention the text leaves open (see `conventions`),
    each with every order's result as choices."""
    found, ambiguity, may_reject = conventions(reduction, dt)
    data, updates = _values(plan.data, dt), _values(plan.updates, dt)
    aimed = plan.aimed()
    made: list[Reading] = []
    for convention in found:
        reading = _folded(plan, data, updates, aimed, convention, dt)
        if not any(_same_reading(reading, seen) for seen in made):
            made.append(reading)
    notes = "; ".join(filter(None, (ambiguity, plan.may_reject)))
    return Expected(readings=tuple(made), ambiguity=notes or None, may_reject=may_reject or plan.may_reject)


def _folded(plan: Plan, data: list, updates: list, aimed: dict[int, list[int]], convention: Convention,
            dt: DType) -> Reading:
    values = list(data)
    others: dict[int, list] = {}
    free = np.zeros(plan.data.size, dtype=bool)
    for target, positions_ in aimed.items():
        folded = [updates[u] for u in positions_]
        if convention.step is None:
            free[target] = True
            continue
        value = data[target]
        for update in folded:
            value = convention.step(value, update)
        values[target] = value
        every = outcomes(data[target], folded, (convention.step, *convention.also))
        if every is None:
            free[target] = True
            continue
        mine = _key(value)
        rest = [v for v in every if _key(v) != mine]
        if rest:
            others[target] = rest
    output = pack(values, dt).reshape(plan.data.shape)
    label = convention.label if not others else f"{convention.label}; {ORDER}"
    choices = None
    if others:
        depth = max(len(o) for o in others.values())
        layers = [list(values) for _ in range(depth)]
        for target, rest in others.items():
            for layer, value in enumerate(rest):
                layers[layer][target] = value
        choices = np.stack([pack(layer, dt).reshape(plan.data.shape) for layer in layers])
    if free.any() and convention.step is not None:
        label = f"{label}; any value where more than {MOST_ORDERED} updates meet ({int(free.sum())} elements)"
    return Reading((output,), label, free=(free.reshape(plan.data.shape) if free.any() else None,),
                   choices=(choices,))


def outcomes(start, updates: list, steps: tuple[Step, ...]) -> list | None:
    """Every result of folding `updates` into `start` in any order, with any of `steps` at each
    step (over subsets of the updates used, each reached once); None beyond MOST_ORDERED updates."""
    if len(updates) > MOST_ORDERED:
        return None
    full = (1 << len(updates)) - 1
    reached: list[dict | None] = [None] * (full + 1)
    reached[0] = {_key(start): start}
    for mask in range(full + 1):  # every subset after those it is reached from (they are smaller numbers)
        here = reached[mask]
        if here is None:
            continue
        for j, update in enumerate(updates):
            if mask >> j & 1:
                continue
            after = reached[mask | 1 << j]
            if after is None:
                after = reached[mask | 1 << j] = {}
            for value in here.values():
                for step in steps:
                    result = step(value, update)
                    after.setdefault(_key(result), result)
    return list(reached[full].values())


def _key(value):
    """What tells values apart: NaN is one value, -0.0 is not 0.0."""
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else (value, math.copysign(1.0, value))
    if isinstance(value, complex):
        return ("c", _key(value.real), _key(value.imag))
    return (type(value).__name__, value)


def _same_reading(a: Reading, b: Reading) -> bool:
    if not arrays_identical(a.outputs[0], b.outputs[0]):
        return False
    masks = [r.free[0] for r in (a, b)]
    if any(m is not None for m in masks) and not (all(m is not None for m in masks) and np.array_equal(*masks)):
        return False
    choices = [r.choices[0] for r in (a, b)]
    if all(c is None for c in choices):
        return True
    return all(c is not None for c in choices) and choices[0].shape == choices[1].shape \
        and arrays_identical(choices[0], choices[1])


def _values(array: np.ndarray, dt: DType) -> list:
    """An array's elements as Python values the steps compute with (floats as float64)."""
    flat = array.reshape(-1)
    if dt.kind == "float":
        with np.errstate(invalid="ignore"):
            return flat.astype(np.float64).tolist()
    if dt.kind == "complex":
        return [complex(v) for v in flat.astype(np.complex128).tolist()]
    if dt.kind == "bool":
        return [bool(v) for v in flat.tolist()]
    if dt.kind == "string":
        return [str(v) for v in flat.tolist()]
    return [int(v) for v in flat.tolist()]


def conventions(reduction: str, dt: DType) -> tuple[list[Convention], str | None, str | None]:
    """The readings of `reduction` on `dt`: the conventions, what is ambiguous, why a runtime may
    also reject the input."""
    kind = dt.kind
    if kind == "float":
        return _float_conventions(reduction, dt)
    if kind in ("int", "uint"):
        return _integer_conventions(reduction, dt)
    if kind == "bool":
        return _bool_conventions(reduction)
    if kind == "complex":
        if reduction in ("max", "min"):
            why = NO_MEANING.format(reduction, "complex numbers")
            return [Convention("no value", None)], why, why
        return [Convention("spec", *_complex_steps(reduction, dt))], None, None
    if reduction == "add":
        return [Convention("concatenated", lambda a, b: a + b)], STRING_ADD, STRING_ADD
    if reduction == "mul":
        why = NO_MEANING.format(reduction, "strings")
        return [Convention("no value", None)], why, why
    pick = max if reduction == "max" else min
    why = f"the text does not say how strings are ordered for reduction '{reduction}' (Python's order: by code point)"
    return [Convention("by code point", pick)], why, why


def _float_conventions(reduction: str, dt: DType) -> tuple[list[Convention], str | None, str | None]:
    if reduction in ("add", "mul"):
        return [Convention("spec", _rounded_step(reduction, dt))], None, None
    bigger = reduction == "max"
    propagating = lambda a, b: _propagating(a, b, bigger)  # noqa: E731 - one step per reading
    ignoring = lambda a, b: _ignoring(a, b, bigger)  # noqa: E731
    # A plain comparison (C++'s std::max, Python's max) answers one operand or the other where a NaN meets a
    # number, depending on their order: either, element by element, in the third reading.
    return [Convention("NaN propagates", propagating),
            Convention("NaN ignored (as fmax, fmin)", ignoring),
            Convention("NaN compared as unordered (either operand, as a plain comparison gives)", propagating,
                       (ignoring,))], NAN_MAX, None


def _rounded_step(reduction: str, dt: DType) -> Step:
    """f(output, update) computed exactly enough in float64 and rounded once to `dt` (float64
    holds more than twice the precision of the narrower types plus two bits: the double rounding
    is innocuous)."""
    if dt.name == "double":
        return (lambda a, b: a + b) if reduction == "add" else (lambda a, b: a * b)

    def step(a: float, b: float) -> float:
        exact = a + b if reduction == "add" else a * b
        return _rounded(exact, dt)
    return step


def _rounded(value: float, dt: DType) -> float:
    with np.errstate(all="ignore"):
        return float(float_to_float(np.array([value]), dt).astype(np.float64)[0])


def _propagating(a: float, b: float, bigger: bool) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    return max(a, b) if bigger else min(a, b)


def _ignoring(a: float, b: float, bigger: bool) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return max(a, b) if bigger else min(a, b)


def _integer_conventions(reduction: str, dt: DType) -> tuple[list[Convention], str | None, str | None]:
    if reduction in ("max", "min"):
        pick = max if reduction == "max" else min
        return [Convention("spec", pick)], None, None
    combine = (lambda a, b: a + b) if reduction == "add" else (lambda a, b: a * b)
    low, high = int(dt.lowest), int(dt.max)
    return [Convention("integer overflow wraps (two's complement)", lambda a, b: wrap(combine(a, b), dt)),
            Convention("integer overflow saturates", lambda a, b: min(max(combine(a, b), low), high))], OVERFLOW, None


def _bool_conventions(reduction: str) -> tuple[list[Convention], str | None, str | None]:
    if reduction == "add":
        return [Convention("or (numpy's bool addition)", lambda a, b: a or b),
                Convention("exclusive or (addition modulo 2)", lambda a, b: a != b)], BOOL_ADD, BOOL_ADD
    either = reduction in ("max",)
    return [Convention("spec", (lambda a, b: a or b) if either else (lambda a, b: a and b))], None, None


def _complex_steps(reduction: str, dt: DType) -> tuple[Step, tuple[Step, ...]]:
    """Complex add and mul: each component rounded to the component type; a product's components
    (ac - bd, ad + bc) computed in float64 and rounded once, or (also allowed) each product and sum
    rounded in the component type."""
    part = dtype("float" if dt.name == "complex64" else "double")

    def rounded(value: complex) -> complex:
        return complex(_rounded(value.real, part), _rounded(value.imag, part))

    if reduction == "add":
        return (lambda a, b: rounded(a + b)), ()

    def each_rounded(a: complex, b: complex) -> complex:
        r = lambda v: _rounded(v, part)  # noqa: E731 - one rounding per operation
        return complex(r(r(a.real * b.real) - r(a.imag * b.imag)), r(r(a.real * b.imag) + r(a.imag * b.real)))

    def fused(first: bool) -> Step:
        """A product whose components are each one fused multiply-add (numpy's vectorised loop): one of
        the two products exact, the other rounded, the sum rounded once."""
        def step(a: complex, b: complex) -> complex:
            if not all(math.isfinite(v) for v in (a.real, a.imag, b.real, b.imag)):
                return each_rounded(a, b)
            real = (a.real, b.real, -a.imag, b.imag) if first else (-a.imag, b.imag, a.real, b.real)
            imag = (a.real, b.imag, a.imag, b.real) if first else (a.imag, b.real, a.real, b.imag)
            return complex(_fma(*real, part), _fma(*imag, part))
        return step
    return (lambda a, b: rounded(a * b)), (each_rounded, fused(True), fused(False))


def _fma(x: float, y: float, u: float, v: float, part: DType) -> float:
    """x*y + round(u*v), the first product exact and the sum rounded once to `part`."""
    product = _rounded(u * v, part)
    exact = Fraction(x) * Fraction(y) + Fraction(product)
    if not exact:
        return _rounded(x * y + product, part)  # a zero's sign, as IEEE addition gives it
    try:
        return _rounded(float(exact), part)
    except OverflowError:
        return math.copysign(math.inf, exact)


# --- Scatter and ScatterElements: the plan ---

class Scatter9(ScatterSemantics):
    """Scatter-9: ScatterElements' movement with no reduction; the text gives indices no bounds
    and a negative index no meaning (indices in [0, s-1])."""

    since = 9
    negative_indices = False
    same_rank = SAME_RANK_9

    def plan(self, example: Example) -> Plan | Invalid:
        data, indices, updates = (example.inputs[name] for name in ("data", "indices", "updates"))
        if data.ndim == 0:
            return Invalid("rank-zero", DATA_RANK)
        if indices.ndim != data.ndim:
            return Invalid("rank-mismatch", self.same_rank)
        if updates.shape != indices.shape:
            return Invalid("shape-mismatch", SAME_SHAPE)
        axis = axis_in(int(example.attributes.get("axis", 0)), data.ndim, True, AXIS)
        if isinstance(axis, Invalid):
            return axis
        beyond = any(i > d for k, (i, d) in enumerate(zip(indices.shape, data.shape)) if k != axis)
        if beyond and indices.size:
            return Invalid("indices-beyond-data", OFF_AXIS)
        values = indices.astype(np.int64)
        size = data.shape[axis]
        bad = self.index_problem(values, size)
        if bad is not None:
            return bad
        return Plan(data, updates, element_targets(values, data.shape, axis), OFF_AXIS_EMPTY if beyond else None)

    def index_problem(self, values: np.ndarray, size: int) -> Invalid | None:
        if not values.size:
            return None
        if not self.negative_indices and values.min() < 0:
            return Invalid("negative-index", NEGATIVE_9)
        if values.min() < -size or values.max() >= size:
            return Invalid("index-out-of-range", INDEX_BOUNDS if self.negative_indices else INDEX_9)
        return None


class Scatter11(Scatter9):
    """Scatter-11 (deprecated, ScatterElements-11's text): indices in [-s, s-1], others an error."""

    since = 11
    negative_indices = True
    same_rank = SAME_RANK


class ScatterElements11(Scatter11):
    """ScatterElements-11 and -13: Scatter-11 renamed (13 adds bfloat16)."""

    since = 11


class ScatterElements16(ScatterElements11):
    """ScatterElements-16: reduction add and mul; with none, duplicates "should not" be."""

    since = 16
    reductions = ("none", "add", "mul")
    reduction_sentence = REDUCTION_16
    duplicates = ELEMENTS_SHOULD_NOT
    duplicates_may_reject = True


class ScatterElements18(ScatterElements16):
    """ScatterElements-18: reduction max and min too."""

    since = 18
    reductions = ("none", "add", "mul", "max", "min")
    reduction_sentence = REDUCTION_18


def element_targets(values: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray:
    """ScatterElements' targets: each entry's own index, with its index value along `axis`."""
    if not values.size:
        return np.zeros(0, dtype=np.int64)
    grid = np.indices(values.shape)
    size = shape[axis]
    grid[axis] = np.where(values < 0, values + size, values)
    return np.ravel_multi_index(tuple(grid), shape).reshape(-1).astype(np.int64)


# --- ScatterND ---

class ScatterND11(ScatterSemantics):
    """ScatterND-11 and -13: k-tuples of indices address elements (k = r) or slices (k < r);
    negative index values count from the back; duplicates are "not supported"."""

    since = 11
    duplicates = ND_NOT_SUPPORTED
    duplicates_may_reject = True

    def plan(self, example: Example) -> Plan | Invalid:
        data, indices, updates = (example.inputs[name] for name in ("data", "indices", "updates"))
        if data.ndim == 0:
            return Invalid("rank-zero", DATA_RANK)
        if indices.ndim == 0:
            return Invalid("rank-zero", ND_INDICES_RANK)
        depth = indices.shape[-1]
        if depth > data.ndim:
            return Invalid("index-depth-beyond-rank", ND_DEPTH)
        if updates.shape != indices.shape[:-1] + data.shape[depth:]:
            return Invalid("shape-mismatch", ND_UPDATES)
        entries = indices.astype(np.int64).reshape(math.prod(indices.shape[:-1]), depth)
        if entries.size:
            sizes = np.array(data.shape[:depth], dtype=np.int64)
            if (entries < -sizes).any() or (entries >= sizes).any():
                return Invalid("index-out-of-range", ND_BOUNDS)
        return Plan(data, updates, nd_targets(entries, data.shape))


class ScatterND16(ScatterND11):
    """ScatterND-16: reduction add and mul."""

    since = 16
    reductions = ("none", "add", "mul")
    reduction_sentence = REDUCTION_16
    duplicates = ND_SHOULD_NOT


class ScatterND18(ScatterND16):
    """ScatterND-18: reduction max and min too."""

    since = 18
    reductions = ("none", "add", "mul", "max", "min")
    reduction_sentence = REDUCTION_18


def nd_targets(entries: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """ScatterND's targets: for each k-tuple in order, the positions of the element or slice it
    names (negative values counted from the back)."""
    whole = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    parts = [whole[tuple(int(v) for v in entry)].reshape(-1) for entry in entries]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


# --- TensorScatter ---

class TensorScatter24(MovementSemantics):
    """TensorScatter-24: the update written into the cache along `axis` from each batch's write
    index, linearly or modulo max_sequence_length; the pseudocode read as numpy."""

    since = 24
    data = ("past_cache", "update")

    def moved(self, example: Example) -> Moved | Invalid:
        past, update = example.inputs["past_cache"], example.inputs["update"]
        mode = example.attributes.get("mode", "linear")
        mode = mode.decode() if isinstance(mode, bytes) else str(mode)
        if mode not in ("linear", "circular"):
            return Invalid("mode-not-allowed", TS_MODE)
        axis = axis_in(int(example.attributes.get("axis", -2)), past.ndim, True, TS_AXIS)
        if isinstance(axis, Invalid):
            return axis
        if axis == 0:
            return Invalid("axis-is-batch", TS_AXIS)
        if update.ndim != past.ndim or any(u != p for k, (u, p) in enumerate(zip(update.shape, past.shape)) if k != axis):
            return Invalid("shape-mismatch", TS_SHAPE)
        length, most = update.shape[axis], past.shape[axis]
        if length > most:
            return Invalid("sequence-longer-than-cache", TS_LONGER)
        starts = self.write_indices(example, past.shape[0])
        if isinstance(starts, Invalid):
            return starts
        bad = self.start_problem(starts, length, most, mode)
        if bad is not None:
            return bad
        cache, updates = positions([past.shape, update.shape])
        for batch, start in enumerate(starts):
            for step in range(length):
                place = start + step
                if mode == "circular":
                    place %= most  # Python's modulo, as the pseudocode: never negative
                cache[(batch, *(slice(None),) * (axis - 1), place)] = updates[(batch, *(slice(None),) * (axis - 1), step)]
        return Moved((cache,), may_reject=TS_NEGATIVE if any(s < 0 for s in starts) else None)

    def write_indices(self, example: Example, batch: int) -> list[int] | Invalid:
        given = example.inputs.get("write_indices")
        if given is None:
            return [0] * batch
        if given.shape != (batch,):
            return Invalid("write-indices-shape", TS_WRITE_SHAPE)
        return [int(v) for v in given.reshape(-1)]

    def start_problem(self, starts: list[int], length: int, most: int, mode: str) -> Invalid | None:
        for start in starts:
            if mode == "linear" and start + length > most:
                return Invalid("write-beyond-cache", TS_LINEAR)
            if mode == "linear" and length and start < -most:
                return Invalid("write-index-out-of-range", TS_BELOW)
        return None


# --- traits: the causes a runtime may deviate by ---

def _plan(example: Example) -> Plan | None:
    """The case's plan, or None where it is invalid or not a scatter."""
    semantics = _reference(example).semantics_for(example.version)
    if not isinstance(semantics, ScatterSemantics) or reduction_of(example) not in semantics.reductions:
        return None
    try:
        found = semantics.plan(example)
    except (KeyError, ValueError, IndexError, TypeError, AttributeError):
        return None
    return found if isinstance(found, Plan) else None


def _reference(example: Example) -> OpReference:
    return {r.op: r for r in REFERENCES}[example.op]


def duplicate_indices(example: Example) -> bool:
    """Several updates aimed at one element of the data (undefined with no reduction; with one,
    the order of the fold is free)."""
    plan = _plan(example)
    return plan is not None and len(set(plan.targets.tolist())) < plan.targets.size


def negative_indices(example: Example) -> bool:
    """An index value below 0, which counts from the back (Scatter-9 gives it no meaning)."""
    indices = example.inputs.get("indices")
    return indices is not None and indices.size > 0 and indices.dtype.kind in "iu" and bool((indices < 0).any())


def empty_indices(example: Example) -> bool:
    """No update at all (indices or updates of size 0): the output is the data."""
    plan = _plan(example)
    return plan is not None and plan.targets.size == 0


def _reduction_is(name: str) -> Callable[[Example], bool]:
    def trait(example: Example) -> bool:
        return reduction_of(example) == name
    trait.__doc__ = f"reduction '{name}'"
    return trait


def _reduction_on(kinds: tuple[str, ...]) -> Callable[[Example], bool]:
    def trait(example: Example) -> bool:
        return reduction_of(example) != "none" and dtype(example.dtype).kind in kinds
    trait.__doc__ = f"a reduction on {'/'.join(kinds)} values, which the text gives no or an unusual meaning"
    return trait


def max_min_on_bool(example: Example) -> bool:
    """reduction max or min on bools (the text's maximum of bools: or; minimum: and)."""
    return reduction_of(example) in ("max", "min") and example.dtype == "bool"


def reduction_on_half(example: Example) -> bool:
    """Any reduction on float16 or bfloat16 values."""
    return reduction_of(example) != "none" and example.dtype in ("float16", "bfloat16")


def half_precision_reduction(example: Example) -> bool:
    """add or mul on float16/bfloat16 with several updates to an element: each step rounds to the
    type in the text's loop; a runtime summing in float32 rounds once."""
    return reduction_of(example) in ("add", "mul") and example.dtype in ("float16", "bfloat16") \
        and duplicate_indices(example)


def nan_in_max_min(example: Example) -> bool:
    """A NaN meets a max or min reduction (propagated or ignored: the text does not say)."""
    if reduction_of(example) not in ("max", "min"):
        return False
    plan = _plan(example)
    if plan is None or dtype(example.dtype).kind != "float" or not plan.targets.size:
        return False
    with np.errstate(invalid="ignore"):
        data = np.isnan(plan.data.astype(np.float64).reshape(-1))[plan.targets]
        updates = np.isnan(plan.updates.astype(np.float64).reshape(-1))
    return bool(data.any() or updates.any())


def integer_reduction_overflow(example: Example) -> bool:
    """An integer add or mul whose result lies beyond the type (wrapped or saturated: the text
    does not say)."""
    if reduction_of(example) not in ("add", "mul") or dtype(example.dtype).kind not in ("int", "uint"):
        return False
    expected = _reference(example).expected(example)
    return expected.is_valid and len(expected.readings) > 1


def indices_smaller_than_data(example: Example) -> bool:
    """ScatterElements' indices shorter than data along a dimension other than the axis: entries
    aimed by their own index there, not every element of data reached."""
    plan = _plan(example)
    indices = example.inputs.get("indices")
    if plan is None or indices is None or example.op == "ScatterND":
        return False
    axis = int(example.attributes.get("axis", 0)) % plan.data.ndim
    return any(i < d for k, (i, d) in enumerate(zip(indices.shape, plan.data.shape)) if k != axis)


def slice_updates(example: Example) -> bool:
    """ScatterND with k < rank(data): each index tuple names a slice, not an element."""
    indices, data = example.inputs.get("indices"), example.inputs.get("data")
    return example.op == "ScatterND" and indices is not None and data is not None and indices.ndim >= 1 \
        and indices.shape[-1] < data.ndim


def _mode(example: Example) -> str:
    mode = example.attributes.get("mode", "linear")
    return mode.decode() if isinstance(mode, bytes) else str(mode)


def circular_wraps(example: Example) -> bool:
    """TensorScatter in circular mode with a write running past the end of the sequence axis."""
    past, update, starts = (example.inputs.get(n) for n in ("past_cache", "update", "write_indices"))
    if _mode(example) != "circular" or past is None or update is None or past.ndim < 2 or update.ndim != past.ndim:
        return False
    axis = int(example.attributes.get("axis", -2))
    if not -past.ndim <= axis < past.ndim:
        return False
    most, length = past.shape[axis], update.shape[axis]
    values = [0] if starts is None else starts.reshape(-1).tolist()
    return any(not 0 <= s + k < most for s in values for k in range(length))


def negative_write_index(example: Example) -> bool:
    """TensorScatter's write index below 0 (the pseudocode's numpy indexing counts it from the end)."""
    starts = example.inputs.get("write_indices")
    return starts is not None and starts.size > 0 and bool((starts < 0).any())


def write_indices_absent(example: Example) -> bool:
    """TensorScatter without write_indices: every batch written from 0."""
    return example.inputs.get("write_indices") is None


def axis_not_second_last(example: Example) -> bool:
    """TensorScatter's sequence axis elsewhere than its default, -2."""
    past = example.inputs.get("past_cache")
    if past is None or past.ndim < 2:
        return False
    axis = int(example.attributes.get("axis", -2))
    return -past.ndim <= axis < past.ndim and axis % past.ndim != past.ndim - 2


def negative_axis(example: Example) -> bool:
    """An axis attribute written negative (counted from the back)."""
    return int(example.attributes.get("axis", 0)) < 0


SCATTER_TRAITS = {
    "duplicate-indices": duplicate_indices,
    "negative-indices": negative_indices,
    "empty-indices": empty_indices,
    "negative-axis-attribute": negative_axis,
    "indices-smaller-than-data": indices_smaller_than_data,
}
REDUCTION_TRAITS = {
    "reduction-add": _reduction_is("add"),
    "reduction-mul": _reduction_is("mul"),
    "reduction-max": _reduction_is("max"),
    "reduction-min": _reduction_is("min"),
    "reduction-on-bool": _reduction_on(("bool",)),
    "reduction-on-string": _reduction_on(("string",)),
    "reduction-on-complex": _reduction_on(("complex",)),
    "reduction-on-half": reduction_on_half,
    "max-min-on-bool": max_min_on_bool,
    "half-precision-reduction": half_precision_reduction,
    "nan-in-max-min": nan_in_max_min,
    "integer-reduction-overflow": integer_reduction_overflow,
}
ELEMENT_RULES = ("rank-zero", "rank-mismatch", "shape-mismatch", "axis-out-of-range", "indices-beyond-data",
                 "index-out-of-range", "reduction-not-allowed")

REFERENCES = (
    OpReference(
        op="Scatter",
        dtype_param="T",
        data_inputs=("data", "updates"),
        semantics=(Scatter9, Scatter11),
        traits=SCATTER_TRAITS,
        rules=(*ELEMENT_RULES, "negative-index"),
    ),
    OpReference(
        op="ScatterElements",
        dtype_param="T",
        data_inputs=("data", "updates"),
        semantics=(ScatterElements11, ScatterElements16, ScatterElements18),
        traits={**SCATTER_TRAITS, **REDUCTION_TRAITS},
        rules=ELEMENT_RULES,
    ),
    OpReference(
        op="ScatterND",
        dtype_param="T",
        data_inputs=("data", "updates"),
        semantics=(ScatterND11, ScatterND16, ScatterND18),
        traits={"duplicate-indices": duplicate_indices, "negative-indices": negative_indices,
                "empty-indices": empty_indices, "slice-updates": slice_updates, **REDUCTION_TRAITS},
        rules=("rank-zero", "index-depth-beyond-rank", "shape-mismatch", "index-out-of-range", "reduction-not-allowed"),
    ),
    OpReference(
        op="TensorScatter",
        dtype_param="T",
        data_inputs=("past_cache", "update"),
        semantics=(TensorScatter24,),
        traits={"circular-wraps": circular_wraps, "negative-write-index": negative_write_index,
                "write-indices-absent": write_indices_absent, "axis-not-second-last": axis_not_second_last,
                "negative-axis-attribute": negative_axis},
        rules=("mode-not-allowed", "axis-out-of-range", "axis-is-batch", "shape-mismatch", "sequence-longer-than-cache",
               "write-indices-shape", "write-beyond-cache", "write-index-out-of-range"),
    ),
)
