"""The element-wise family: what every element-wise op shares, so that one op is a few lines.

An op is an `Elementwise` declaration: its formula on real numbers (float64, for every float
dtype), its formula on integers (exact, on Python ints), its attributes with their valid values,
where its values are interesting (`domain`), how precisely a float result must come back
(`budget`), and the readings the text leaves open (`alternatives`). `reference(op)` turns it into
an `OpReference`; the family's strategy (strategies/elementwise.py) draws its cases from the
same declaration. Everything else is read from onnx.defs: versions, dtypes, attributes and their
defaults, arity, and the broadcasting rule (reference/broadcast.py).

How a case is answered:
1. the dtype, arity, attribute and broadcasting rules decide whether the input is valid;
2. floats are widened to float64, the formula applied, and the result rounded once to the output
   dtype (correctly: `round_to`), which is what an exact op must return bit for bit; an op with a
   budget is judged against the float64 value instead, within its ULPs (precision.py);
3. integers are computed exactly; a result beyond the output type is an ambiguity the texts
   never settle, so both readings a runtime may give are allowed and named: wrapped (two's
   complement) and saturated;
4. the op's `alternatives` add readings of its own (NaN in Relu, Max with NaN, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..case import Example
from ..dtypes import DType, dtype
from ..precision import Budget
from ..registry import OpVersion
from . import broadcast as bc
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings

TOO_FEW_INPUTS = "too-few-inputs"
ATTRIBUTE_OUT_OF_RANGE = "attribute-out-of-range"
WRAPPED, SATURATED = "integer overflow wraps (two's complement)", "integer overflow saturates"
OVERFLOW_AMBIGUITY = "the text does not say what an integer result beyond the output type is"


@dataclass(frozen=True)
class Attribute:
    """One attribute's valid values as the text states them, and the values worth drawing.

    `valid` is None when the text allows every value of the attribute's type; `draws` are the
    values the strategy picks from (the default is always among the draws: leaving it out)."""

    name: str
    draws: tuple[Any, ...]
    valid: Callable[[Any], bool] | None = None
    sentence: str = ""
    invalid_draws: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Context:
    """What an op's hooks see of one case: the inputs at the output's shape, the attributes with
    their defaults, the dtypes, and the version."""

    example: Example
    arrays: tuple[np.ndarray, ...]  # broadcast to the output's shape, in their own dtypes
    attributes: dict[str, Any]
    dt: DType  # the first input's dtype
    out: DType  # the output's dtype

    @property
    def since(self) -> int:
        return self.example.version.since_version


@dataclass(frozen=True)
class Elementwise:
    """One element-wise op, declared from its text (see the module's docstring)."""

    op: str
    real: Callable[..., np.ndarray] | None = None  # float64 arrays (and attributes) -> float64 array
    integer: Callable[..., np.ndarray] | None = None  # object arrays of Python ints -> Python ints/bools
    boolean: Callable[..., np.ndarray] | None = None  # bool arrays -> bool array
    raw: Callable[..., np.ndarray] | None = None  # any dtype, computed in the inputs' own (selection: Where)
    precise64: Callable[..., Any] | None = None  # mpmath, one element at a time: float64 outputs' precise value
    # Fractions -> a Fraction: the formula exactly, for an op whose text is one real expression that
    # float64 cannot evaluate with a single rounding (a fused multiply-add, a sum of three values);
    # the first reading is then its value rounded once to the output type (see `_rounded_once`).
    exact: Callable[..., Any] | None = None
    budget: Budget | None = None  # None: the correctly rounded result, exactly
    budgets: dict[str, Budget] = field(default_factory=dict)  # per output dtype, over `budget`
    attributes: tuple[Attribute, ...] = ()
    domain: tuple[float, float] | None = None  # where half the drawn float values fall
    alternatives: Callable[[Context, np.ndarray], list[tuple[str, np.ndarray]]] | None = None
    ambiguity: str = ""  # what `alternatives` are about
    label: str = "spec"  # the first reading's name, where `alternatives` name others beside it
    invalid: Callable[[Context], Invalid | None] | None = None
    rules: tuple[str, ...] = ()  # the rule ids `invalid` gives
    broadcasting: dict[int, str] = field(default_factory=dict)  # since-version -> rule, where the text's wording misleads
    traits: dict[str, Callable[[Example], bool]] = field(default_factory=dict)
    may_reject: Callable[[Context], str | None] | None = None
    max_inputs: int = 4  # the most values a variadic input gets in a drawn case
    # Inputs the op draws better than the family does (shift amounts, exponents): (choices, dtype,
    # dims, position) -> an array, or None to leave that input to the family.
    draw: Callable[..., np.ndarray | None] | None = None

    def budget_for(self, out: DType) -> Budget | None:
        return self.budgets.get(out.name, self.budget) if out.kind == "float" else None


def round_to(values: np.ndarray, out: DType) -> np.ndarray:
    """float64 values rounded once, to nearest even, to a float dtype (ml_dtypes rounds bfloat16
    and float8 through float32: twice, which can land on the wrong side of a tie)."""
    with np.errstate(all="ignore"):
        if out.is_numpy_native:
            return values.astype(out.np_dtype)
        finfo = __import__("ml_dtypes").finfo(out.np_dtype)
        precision = finfo.nmant + 1
        _, exponent = np.frexp(values)
        quantum = np.maximum(exponent - 1, finfo.minexp) - (precision - 1)
        finite = np.isfinite(values)
        rounded = np.where(finite, np.rint(np.ldexp(values, -quantum)), values)
        rounded = np.where(finite, np.ldexp(rounded, quantum), values)
        return rounded.astype(out.np_dtype)


class _Semantics(VersionSemantics):
    """The one semantics every version of a family op shares (versions differ in what onnx.defs says)."""

    since = 1
    op: Elementwise

    def expected(self, example: Example) -> Expected:
        return answer(self.op, example)


def reference(op: Elementwise) -> OpReference:
    """The OpReference of a declared op."""
    semantics = type(f"{op.op}Semantics", (_Semantics,), {"op": op, "__doc__": f"{op.op}: every version, as declared."})
    return OpReference(
        op=op.op, dtype_param=_dtype_param(op.op), semantics=(semantics,), traits=op.traits,
        rules=(bc.NOT_BROADCASTABLE, TOO_FEW_INPUTS, ATTRIBUTE_OUT_OF_RANGE, *op.rules), family=op,
    )


def _dtype_param(op: str) -> str:
    """The type parameter of the data, the op's dtype axis: the first input's that the output
    shares (Where's X, not its condition; Pow's X, not its exponent), else the first input's
    (a comparison's, whose output is bool)."""
    from ..registry import versions

    newest = versions(op)[-1]
    output = newest.outputs[0].type_param
    return next((f.type_param for f in newest.inputs if f.type_param == output), newest.inputs[0].type_param)


def attributes_of(op: Elementwise, example: Example) -> dict[str, Any]:
    """The case's attributes, each absent one at its schema default."""
    values = {a.name: a.default for a in example.version.attributes if a.default is not None}
    values.update({k: v for k, v in example.attributes.items() if v is not None})
    values.pop("consumed_inputs", None)  # legacy optimisation hint; the text gives it no meaning
    return values


def answer(op: Elementwise, example: Example) -> Expected:
    version = example.version
    arrays = [example.inputs[name] for name in example.node_inputs if name]
    too_few = _arity(version, arrays)
    if too_few is not None:
        return Expected(invalid=too_few)
    attributes = attributes_of(op, example)
    wrong = _attribute_problem(op, version, attributes)
    if wrong is not None:
        return Expected(invalid=wrong)
    rule = op.broadcasting.get(max((s for s in op.broadcasting if s <= version.since_version), default=-1))
    shaped = bc.broadcast(version, arrays, attributes, rule)
    if shaped.invalid is not None:
        return Expected(invalid=shaped.invalid)
    dt = dtype(example.types[example.dtype_param])
    out = dtype(version.output_dtype(0, example.types))
    context = Context(example, shaped.arrays, attributes, dt, out)
    if op.invalid is not None:
        problem = op.invalid(context)
        if problem is not None:
            return Expected(invalid=problem)
    candidates, budget = _compute(op, context, shaped.shape)
    may_reject = op.may_reject(context) if op.may_reject is not None else None
    if op.alternatives is not None and candidates:
        others = op.alternatives(context, candidates[0].outputs[0])
        if others and candidates[0].label == "spec":
            candidates[0] = Reading(candidates[0].outputs, op.label, candidates[0].precise)
        candidates += [Reading((output,), label, _alternative_precise(candidates[0], output)) for label, output in others]
    ambiguity = "; ".join(dict.fromkeys(filter(None, [op.ambiguity if len(candidates) > 1 else "",
                                                        OVERFLOW_AMBIGUITY if any(c.label in (WRAPPED, SATURATED) for c in candidates) else ""])))
    found = readings(candidates, ambiguity or "readings differ", may_reject)
    return Expected(readings=found.readings, ambiguity=found.ambiguity, may_reject=may_reject,
                    budgets=(budget,) if budget is not None else ())


def _alternative_precise(first: Reading, output: np.ndarray) -> tuple[np.ndarray, ...]:
    """A budgeted op's alternative reading judged against its own values where it differs from the
    first reading (a NaN or a limit in place of the formula's value), against the first's precise
    value elsewhere; () for an op judged exactly."""
    if not first.precise:
        return first.precise
    rounded, precise = first.outputs[0], first.precise[0]
    with np.errstate(all="ignore"):
        wide = output.astype(np.float64)
        same = (wide == rounded.astype(np.float64)) | (np.isnan(wide) & np.isnan(rounded.astype(np.float64)))
    return (np.where(same, precise, wide),)


def _arity(version: OpVersion, arrays: list[np.ndarray]) -> Invalid | None:
    variadic = next((f for f in version.inputs if f.variadic), None)
    if variadic is None:
        return None
    least = len(version.inputs) - 1 + variadic.min_arity
    if len(arrays) < least:
        return Invalid(TOO_FEW_INPUTS, f"{version.label}: {variadic.name} takes at least {variadic.min_arity} "
                                       f"input{'s' if variadic.min_arity > 1 else ''} (schema min_input {least})")
    return None


def _attribute_problem(op: Elementwise, version: OpVersion, attributes: dict) -> Invalid | None:
    for rule in op.attributes:
        if version.attribute(rule.name) is None or rule.valid is None or rule.name not in attributes:
            continue
        if not rule.valid(attributes[rule.name]):
            return Invalid(ATTRIBUTE_OUT_OF_RANGE, f"{version.label}: {rule.sentence}")
    return None


def _compute(op: Elementwise, context: Context, shape: tuple[int, ...]) -> tuple[list[Reading], Budget | None]:
    kind = context.dt.kind
    arrays = context.arrays
    if op.raw is not None:
        return [Reading((np.asarray(op.raw(*arrays, **_formula_attributes(op, context))).reshape(shape),))], None
    if kind == "float":
        found, budget = _float(op, context, shape)
        if op.exact is not None and context.out.kind == "float" and found:
            found[0] = _rounded_once(op, context, found[0])
        return found, budget
    if kind == "bool" and op.boolean is not None:
        result = np.asarray(op.boolean(*[a.astype(bool) for a in arrays], **_formula_attributes(op, context)), dtype=bool)
        return [Reading((result.reshape(shape).astype(context.out.np_dtype),))], None
    if kind in ("int", "uint", "bool") and op.integer is not None:
        exact = op.integer(*[_python_ints(a) for a in arrays], **_formula_attributes(op, context))
        return _integer_readings(np.asarray(exact, dtype=object).reshape(shape), context.out), None
    raise NotImplementedError(f"{op.op} declares no formula for {context.dt.name}")


def _formula_attributes(op: Elementwise, context: Context) -> dict[str, Any]:
    """The attributes an op's formulas take: the declared ones, by name."""
    declared = {a.name for a in op.attributes}
    return {k: v for k, v in context.attributes.items() if k in declared}


def _float(op: Elementwise, context: Context, shape: tuple[int, ...]) -> tuple[list[Reading], Budget | None]:
    with np.errstate(all="ignore"):
        wide = [a.astype(np.float64) for a in context.arrays]
        precise = np.asarray(op.real(*wide, **_formula_attributes(op, context)), dtype=np.float64).reshape(shape)
    out = context.out
    if out.kind != "float":
        return [Reading((precise.astype(out.np_dtype) if out.kind != "bool" else precise.astype(bool),))], None
    budget = op.budget_for(out)
    if out.name == "double" and op.precise64 is not None and budget is not None:
        precise = _mp(op, context, precise, shape)
    rounded = round_to(precise, out)
    if budget is None:
        return [Reading((rounded,))], None
    return [Reading((rounded,), precise=(precise,))], budget


def _mp(op: Elementwise, context: Context, fallback: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The precise float64 value of each element from mpmath, where it gives a finite one."""
    import mpmath

    attributes = _formula_attributes(op, context)
    flat = [a.astype(np.float64).reshape(-1) for a in np.broadcast_arrays(*context.arrays)]
    result = fallback.reshape(-1).copy()
    with mpmath.workdps(40):
        for index in range(result.size):
            args = [float(a[index]) for a in flat]
            if not all(np.isfinite(args)) or not np.isfinite(result[index]):
                continue  # specials are the float64 formula's, judged exactly
            try:
                result[index] = _nearest_double(op.precise64(*[mpmath.mpf(x) for x in args], **attributes))
            except (ValueError, ZeroDivisionError, OverflowError):
                pass
    return result.reshape(shape)


def _nearest_double(value) -> float:
    """An mpmath value rounded once to float64, onto the subnormal grid (2**-1074) below 2**-1022
    too: mpmath's float() rounds to 53 bits first, and a subnormal result is rounded again."""
    from fractions import Fraction

    import mpmath

    from .conversion import round_fraction

    value = mpmath.mpf(value)
    if not mpmath.isfinite(value):
        return float(value)
    mantissa, exponent = value.man_exp  # the magnitude's
    if mantissa == 0:
        return float(value)
    top = int(exponent) + int(mantissa).bit_length()  # the magnitude lies in [2**(top-1), 2**top)
    if top < -1076:  # below half the smallest subnormal: a zero of the value's sign (exp(-1e308))
        return -0.0 if value < 0 else 0.0
    if top > 1025:  # beyond float64's range: an infinity, never a Fraction of 2**top
        return float("-inf") if value < 0 else float("inf")
    magnitude = Fraction(int(mantissa)) * Fraction(2) ** int(exponent)
    return round_fraction(-magnitude if value < 0 else magnitude, dtype("double"))


def _rounded_once(op: Elementwise, context: Context, first: Reading) -> Reading:
    """The first reading with `op.exact`'s value rounded once to the output type wherever every
    input is finite and the value is not zero (the float64 formula keeps the specials and a zero's
    sign); its precise value, where a budget judges it, that value rounded once to float64."""
    from dataclasses import replace
    from fractions import Fraction

    from .conversion import exact_to_float, round_fraction

    attributes = _formula_attributes(op, context)
    with np.errstate(invalid="ignore"):  # a signalling NaN widened is still a NaN
        flat = [a.astype(np.float64).reshape(-1) for a in context.arrays]
    values: list = first.outputs[0].astype(np.float64).reshape(-1).tolist()
    precise = first.precise[0].reshape(-1).copy() if first.precise else None
    for index in range(len(values)):
        args = [float(a[index]) for a in flat]
        if not all(np.isfinite(args)):
            continue
        value = op.exact(*[Fraction(x) for x in args], **attributes)
        if value == 0:
            continue
        values[index] = value
        if precise is not None:
            precise[index] = round_fraction(value, dtype("double"))
    shape = first.outputs[0].shape
    rounded = exact_to_float(values, context.out).reshape(shape)
    return replace(first, outputs=(rounded,), precise=(precise.reshape(shape),) if precise is not None else first.precise)


def _python_ints(array: np.ndarray) -> np.ndarray:
    """An integer (or bool) array as Python ints, so that a formula is exact at any width. A float
    input of an integer op (Pow's exponent, T1, beside an integer base) stays float: Python floats."""
    if array.dtype.kind not in "iub":
        return np.array([float(v) for v in array.reshape(-1)], dtype=object).reshape(array.shape)
    return np.array([int(v) for v in array.reshape(-1)], dtype=object).reshape(array.shape)


def _integer_readings(exact: np.ndarray, out: DType) -> list[Reading]:
    if out.kind == "bool":
        return [Reading((exact.astype(bool),))]
    low, high = int(out.lowest), int(out.max)
    flat = exact.reshape(-1)
    if all(low <= v <= high for v in flat):
        return [Reading((_packed(flat, out).reshape(exact.shape),))]
    span = high - low + 1
    wrapped = [(v - low) % span + low for v in flat]
    saturated = [min(max(v, low), high) for v in flat]
    return [Reading((_packed(wrapped, out).reshape(exact.shape),), WRAPPED),
            Reading((_packed(saturated, out).reshape(exact.shape),), SATURATED)]


def _packed(values, out: DType) -> np.ndarray:
    from ..values import pack

    return pack([int(v) for v in values], out)


def family_of(reference_: OpReference) -> Elementwise | None:
    """The declaration behind a family op's reference (None for an op with a module of its own)."""
    found = reference_.family
    return found if isinstance(found, Elementwise) else None
