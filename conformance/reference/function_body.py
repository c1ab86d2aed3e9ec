"""A function body as a reading of the text.

An op version whose schema has a function body (`schema.has_function`, or a context-dependent
one built for the node's inputs) is defined by that body as much as by its prose: a runtime
that expands the body, as onnxruntime does for an op it has no kernel for, conforms. This
module evaluates the body of one Example in the body's own types, node by node, with conform's
own references for the ops inside, and carries each node's allowed error through the rest of
the body as a per-element interval:

- a node whose inputs are exact and whose reference fixes the result (IEEE 754 rounding, an
  integer op) gives an exact value;
- a node judged by a precision budget (Exp, Tanh...) gives its correctly rounded result widened by
  its budget, in steps of its output type's grid;
- a node whose inputs carry an interval is evaluated at the corners of the input intervals (every
  op a body here uses is monotone in each input, or is told otherwise in `_EXTRA_POINTS`), and
  every reading its reference allows joins the interval; a NaN from any corner allows a NaN.

The result is a `Reading` labelled FUNCTION_BODY whose `bounds` give, per output, the lowest and
highest value and where a NaN is allowed; `compare` judges a runtime's output against them.
Where the prose's own value lies outside the body's bounds, text and body contradict each other
for that case: both are readings, and the case's verdict names the one a runtime followed.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from ..case import Example
from ..dtypes import from_numpy
from ..equality import arrays_identical
from .expected import Bounds, Expected, Reading

FUNCTION_BODY = "function body"
FUNCTION_BODY_IN_FLOAT32 = "function body, 16-bit floats computed in float32"
CONTRADICTION = "the function body and the prose disagree"
# Inputs an op's text asks for as a scalar that onnx's own bodies hand it as a one-element 1-D
# tensor: Attention-24's body pads its mask with `Pad(..., FloatNegInfCast, ...)`, a Constant
# float[1], where Pad-11+'s text says "constant_value: A scalar value". Read inside a body as its
# one element, the only value the body's authors can mean (docs/function-bodies.md lists it);
# given by a user to Pad itself, it is still invalid.
_SCALAR_INPUTS_A_BODY_GIVES_AS_ONE_ELEMENT = {("Pad", 2)}
# More inputs with intervals than this at one node would make too many corners to evaluate; no
# body of ai.onnx comes near it (Where has three inputs, one of them a condition).
_MOST_INTERVAL_INPUTS = 4


class BodyUnavailable(Exception):
    """The body cannot be evaluated for this case: an op inside that conform does not cover, or an
    inner node whose input the op's text makes invalid. The reading is then left out.

    `ill_typed` marks the second: the body itself is not valid for a type its op allows (Shrink-9's
    Neg on unsigned integers, Clip-13's Where-9 on bfloat16), a flaw of the text to report."""

    def __init__(self, message: str, ill_typed: bool = False):
        super().__init__(message)
        self.ill_typed = ill_typed


@dataclass(frozen=True, eq=False)
class Value:
    """One value of a body in flight: the nominal array (each node's first reading), and the
    interval every allowed evaluation lands in (`low`, `high`: arrays of the same type), with the
    elements where a NaN may come out. An exact value has low is high is nominal."""

    nominal: np.ndarray
    low: np.ndarray
    high: np.ndarray
    nan: np.ndarray  # bool

    @classmethod
    def exact(cls, array: np.ndarray) -> "Value":
        return cls(array, array, array, _isnan(array))

    @property
    def is_exact(self) -> bool:
        return self.low is self.high


def body_of(example: Example):
    """The FunctionProto that defines `example`'s op version, or None where its schema has none."""
    import onnx
    import onnx.defs

    version = example.version
    schema = onnx.defs.get_schema(version.op, version.since_version, "")
    if schema.has_function:
        return _static_body(version.op, version.since_version)
    if not schema.has_context_dependent_function:
        return None
    node, types = _caller_node(example)
    try:
        found = _context_body(version.op, version.since_version, node, types)
    except Exception:  # onnx's builder refuses a node it cannot expand (an unknown target type)
        return None
    proto = onnx.FunctionProto()
    proto.ParseFromString(found)
    return proto


@lru_cache(maxsize=None)
def _static_body(op: str, since: int):
    import onnx.defs

    return onnx.defs.get_schema(op, since, "").function_body


@lru_cache(maxsize=4096)
def _context_body(op: str, since: int, node: bytes, types: tuple[bytes, ...]) -> bytes:
    import onnx.defs

    return onnx.defs.get_schema(op, since, "").get_context_dependent_function(node, list(types))


def _caller_node(example: Example) -> tuple[bytes, tuple[bytes, ...]]:
    """The node `example` makes, and its inputs' types, as onnx's body builder takes them."""
    from onnx import helper

    names = example.node_inputs
    node = helper.make_node(example.op, list(names), list(example.node_outputs),
                            **_caller_attributes(example, with_defaults=False))
    # With shapes: some builders need a dim to build any body (CausalConvWithState's channels).
    types = tuple(helper.make_tensor_type_proto(from_numpy(example.inputs[n].dtype).elem_type,
                                                example.inputs[n].shape).SerializeToString()
                  for n in names if n)
    return node.SerializeToString(), types


def _caller_attributes(example: Example, with_defaults: bool = True) -> dict:
    """The caller's attributes; with the schema's defaults for those it leaves out, which a body's
    `@name` references read (onnx's expansion fills them in the same way)."""
    given = {k: v for k, v in example.attributes.items() if v is not None and k != "consumed_inputs"}
    if not with_defaults:
        return given
    defaults = {a.name: a.default for a in example.version.attributes if a.default is not None}
    return {**defaults, **given}


def readings_of(example: Example, loose: bool = False) -> list[Reading]:
    """The body's readings of `example`: the body in its own types, and for 16-bit float inputs the
    body computed in float32 and rounded once at the end (FUNCTION_BODY_IN_FLOAT32, as a runtime
    without 16-bit kernels runs a chain of them: onnxruntime's CPU provider does); none where the
    version has no body or it cannot be evaluated for this case (see BodyUnavailable)."""
    body = body_of(example)
    if body is None:
        return []
    found = []
    for label, inputs_of, rounded in ((FUNCTION_BODY, example, None), *_in_float32(example)):
        try:
            outputs = evaluate(body, inputs_of, loose)
        except BodyUnavailable:
            continue
        if rounded is not None:
            outputs = tuple(_rounded(value, dtype) for value, dtype in zip(outputs, rounded))
        found.append(Reading(tuple(v.nominal for v in outputs), label,
                             bounds=tuple(Bounds(v.low, v.high, v.nan) for v in outputs)))
    return found


def _in_float32(example: Example) -> list[tuple[str, Example, tuple[np.dtype, ...]]]:
    """`example` with its 16-bit float inputs widened (exactly) to float32, and the output types to
    round the results back to; nothing where it has no such input."""
    narrow = {n for n, a in example.inputs.items() if a is not None and a.dtype.kind in "fV" and _is_16_bit_float(a.dtype)}
    outputs_float = all(from_numpy(dtype_of(name)).kind == "float" for name in example.output_dtypes)
    if not narrow or not outputs_float:
        return []
    wide = {n: (a.astype(np.float32) if n in narrow else a) for n, a in example.inputs.items()}
    types = {p: ("float" if _is_16_bit_float(dtype_of(t)) else t) for p, t in example.types.items()}
    outputs = tuple(dtype_of(name) for name in example.output_dtypes)
    return [(FUNCTION_BODY_IN_FLOAT32, replace(example, inputs=wide, types=types), outputs)]


def _is_16_bit_float(np_dtype: np.dtype) -> bool:
    return from_numpy(np_dtype).kind == "float" and np.dtype(np_dtype).itemsize == 2


def dtype_of(name: str) -> np.dtype:
    from ..dtypes import dtype

    return dtype(name).np_dtype


def _rounded(value: Value, np_dtype: np.dtype) -> Value:
    """A float32 result rounded once to the output type: rounding to nearest is monotone, so the
    interval's ends round to the ends of the rounded interval."""
    if value.nominal.dtype == np_dtype:
        return value
    with np.errstate(over="ignore", invalid="ignore"):
        return Value(value.nominal.astype(np_dtype), value.low.astype(np_dtype), value.high.astype(np_dtype), value.nan)


def evaluate(body, example: Example, loose: bool = False) -> tuple[Value, ...]:
    """The body's outputs for `example`'s inputs and attributes; `loose`: each budgeted node widened
    to its wrong-answer line instead of its budget (a body evaluated imprecisely, not wrongly)."""
    opset = next((o.version for o in body.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        raise BodyUnavailable("the body imports no ai.onnx opset")
    env: dict[str, Value | None] = {}
    given = [example.inputs.get(n) if n else None for n in example.node_inputs]
    for position, name in enumerate(body.input):
        array = given[position] if position < len(given) else None
        # An optional input the caller leaves out is left out of every node that reads it
        # (ReduceLogSumExp-18's `axes`, passed on to its ReduceSum).
        env[name] = Value.exact(array) if array is not None else None
    attributes = _caller_attributes(example)
    for node in body.node:
        results = _node(node, env, opset, attributes, example, loose)
        for name, value in zip(node.output, results):
            if name:
                env[name] = value
    # Only the outputs the caller asks for: a body may leave the others undefined (Attention's
    # present_key without a past_key).
    asked = [body.output[p] if p < len(body.output) else "" for p in example.output_positions]
    missing = [name or "(none)" for name in asked if env.get(name) is None]
    if missing:
        raise BodyUnavailable(f"the body leaves {missing} undefined")
    return tuple(env[name] for name in asked)


def _node(node, env: dict[str, Value], opset: int, caller: dict, example: Example, loose: bool) -> tuple[Value, ...]:
    attributes = _node_attributes(node, caller)
    if node.op_type == "Constant":
        return (Value.exact(_constant(attributes)),)
    inputs = [env.get(name) if name else None for name in node.input]
    if any(name and name not in env for name in node.input):
        raise BodyUnavailable(f"{node.op_type} reads a value the body does not define")
    if node.op_type == "Identity":
        return (inputs[0],)
    # The outputs the node asks for: a variadic one's count (Split's) is the node's, not one.
    return _apply(node.op_type, opset, inputs, attributes, example, loose, tuple(bool(name) for name in node.output))


def _node_attributes(node, caller: dict) -> dict:
    """A body node's attributes: its own, and `@name` references read from the caller (an attribute
    the caller does not have is left out, as the expansion leaves it out)."""
    from onnx import helper

    found = {}
    for attribute in node.attribute:
        if attribute.ref_attr_name:
            if attribute.ref_attr_name in caller:
                found[attribute.name] = caller[attribute.ref_attr_name]
        else:
            found[attribute.name] = helper.get_attribute_value(attribute)
    return found


def _constant(attributes: dict) -> np.ndarray:
    from onnx import TensorProto, numpy_helper

    if "value" in attributes:
        value = attributes["value"]
        return numpy_helper.to_array(value) if isinstance(value, TensorProto) else np.asarray(value)
    if "value_float" in attributes:
        return np.array(attributes["value_float"], dtype=np.float32)
    if "value_floats" in attributes:
        return np.array(attributes["value_floats"], dtype=np.float32)
    if "value_int" in attributes:
        return np.array(attributes["value_int"], dtype=np.int64)
    if "value_ints" in attributes:
        return np.array(attributes["value_ints"], dtype=np.int64)
    raise BodyUnavailable(f"a Constant with no value the body can read ({sorted(attributes)})")


def _apply(op: str, opset: int, inputs: list[Value | None], attributes: dict, example: Example,
           loose: bool, outputs: tuple[bool, ...] = ()) -> tuple[Value, ...]:
    """One node: its nominal result, and the interval of every result its reference allows over
    the corners of its inputs' intervals."""
    from ..errors import UsageError
    from ..registry import version_in_force
    from . import for_op

    try:
        reference = for_op(op)
        version = version_in_force(op, opset)
    except UsageError as error:
        raise BodyUnavailable(f"{op}-{opset} inside the body is not covered: {error}") from None
    nominal = _outcomes(reference, version, [v.nominal if v else None for v in inputs], attributes, example, outputs)
    if all(v is None or v.is_exact for v in inputs) and _is_exact(nominal):
        return tuple(Value.exact(array) for array in nominal.readings[0].outputs)
    corners = [_outcomes(reference, version, arrays, attributes, example, outputs) for arrays in _corners(op, inputs)]
    return tuple(_joined(index, nominal, corners, loose) for index in range(len(nominal.readings[0].outputs)))


def _outcomes(reference, version, arrays: list[np.ndarray | None], attributes: dict, example: Example,
              outputs: tuple[bool, ...] = ()) -> Expected:
    arrays = [_as_scalar_where_asked(version.op, index, array) for index, array in enumerate(arrays)]
    inner = _inner_example(version, arrays, attributes, example, outputs)
    found = reference.expected(inner)  # an op inside a body may itself be met by its own body
    if not found.is_valid:
        raise BodyUnavailable(f"{version.label} inside the body finds its input invalid: {found.invalid.rule}",
                              ill_typed=found.invalid.rule == "dtype-not-allowed")
    if not found.readings:
        raise BodyUnavailable(f"{version.label} inside the body gives no reading")
    return found


def _as_scalar_where_asked(op: str, index: int, array: np.ndarray | None) -> np.ndarray | None:
    """A one-element tensor a body gives where the op's text asks a scalar, as that scalar."""
    if array is not None and array.shape == (1,) and (op, index) in _SCALAR_INPUTS_A_BODY_GIVES_AS_ONE_ELEMENT:
        return array.reshape(())
    return array


def _inner_example(version, arrays: list[np.ndarray | None], attributes: dict, example: Example,
                   outputs: tuple[bool, ...] = ()) -> Example:
    from ..case import dtype_param_in

    names = version.positional_names(len(arrays))
    inputs = {name: array for name, array in zip(names, arrays) if array is not None}
    types: dict[str, str] = {}
    for name, array in inputs.items():
        formal = version.input(name)
        if formal is not None and formal.type_param in version.constraints:
            types.setdefault(formal.type_param, from_numpy(array.dtype).name)
    for param, allowed in version.type_constraints:
        if param not in types:
            types[param] = _unbound_type(version, param, attributes, allowed, inputs)
    dtype_param = dtype_param_in(version, version.inputs[0].type_param if version.inputs else "T")
    return Example(version=version, name=f"{example.name} (function body)", types=types, inputs=inputs,
                   attributes=dict(attributes), source=example.source, dtype_param=dtype_param, outputs=outputs)


def _unbound_type(version, param: str, attributes: dict, allowed: tuple[str, ...], given: dict) -> str:
    """The type of a parameter no input binds: the one type it allows (Less's bool), Cast's
    output, from its `to`, or any it allows when it types only inputs the body leaves out (Pad's
    Tind without `axes`), since then nothing depends on it."""
    from ..case import types_node
    from ..dtypes import from_elem_type

    if len(allowed) == 1:
        return allowed[0]
    if "to" in attributes and version.outputs and version.outputs[0].type_param == param:
        return from_elem_type(int(attributes["to"])).name
    if version.op == "ConstantOfShape" and param == "T2" and attributes.get("value") is None:
        return "float"  # value: "If not specified, it defaults to a tensor of value 0 and datatype float32"
    if not types_node(version, param, given):
        return allowed[0]
    raise BodyUnavailable(f"{version.label}: nothing in the body says which type {param} is (of {list(allowed)})")


def _is_exact(found: Expected) -> bool:
    """Whether a node's answer is one value: one reading, no budget, no element left free."""
    return (len(found.readings) == 1 and not any(b is not None for b in found.budgets)
            and not any(m is not None and m.any() for m in found.readings[0].free))


def _corners(op: str, inputs: list[Value | None]) -> list[list[np.ndarray | None]]:
    """The input combinations to evaluate: each interval input at its low and at its high end (and
    at the points `_EXTRA_POINTS` adds for ops not monotone in that input)."""
    choices = []
    for value in inputs:
        if value is None:
            choices.append([None])
        elif value.is_exact:
            choices.append([value.nominal])
        else:
            choices.append([value.low, value.high, *_EXTRA_POINTS.get(op, lambda v: [])(value)])
    if sum(len(c) > 1 for c in choices) > _MOST_INTERVAL_INPUTS:
        raise BodyUnavailable(f"{op}: too many inputs carry an interval to bound it by its corners")
    return [list(combo) for combo in itertools.product(*choices)]


def _zero_inside(value: Value) -> list[np.ndarray]:
    """Zero where an interval holds it and the op has an extreme there (|x|, x**2)."""
    with np.errstate(invalid="ignore"):
        spans = (value.low.astype(np.float64) < 0) & (value.high.astype(np.float64) > 0)
    if not spans.any():
        return []
    return [np.where(spans, np.zeros((), value.low.dtype), value.low).astype(value.low.dtype)]


# Ops used by bodies that are not monotone in an input: the extra points where their extremes lie.
# A divisor whose interval holds zero makes Div unbounded: `_joined` widens it to every value.
_EXTRA_POINTS = {"Abs": _zero_inside, "Pow": _zero_inside}


def _joined(index: int, nominal: Expected, corners: list[Expected], loose: bool) -> Value:
    """The interval of output `index` over every reading of every corner, each widened by its
    budget where its op has one."""
    first = nominal.readings[0].outputs[index]
    if first.dtype.kind in "OSU":
        raise BodyUnavailable("a string value with several allowed readings has no interval to carry")
    lows, highs, nans = [], [], _isnan(first)
    for found in (nominal, *corners):
        budget = found.budgets[index] if index < len(found.budgets) else None
        for reading in (*found.readings, *found.body_readings()[0]):
            bounds = reading.bounds[index] if index < len(reading.bounds) else None
            low, high = (bounds.low, bounds.high) if bounds is not None else _widened(reading.outputs[index], budget, loose)
            if bounds is not None:
                nans = nans | bounds.nan
            free = reading.free[index] if index < len(reading.free) else None
            if free is not None and free.any():
                low, high = _freed_range(low, high, free)
            nans = nans | _isnan(low)
            lows.append(low)
            highs.append(high)
    low, high = _extreme(lows, np.fmin), _extreme(highs, np.fmax)
    return Value(first, low, high, nans)


def _extreme(arrays: list[np.ndarray], pick) -> np.ndarray:
    """The element-wise least (or greatest) of `arrays`, NaNs ignored where a number is among them."""
    dtype = arrays[0].dtype
    if dtype.kind in "iub" or dtype == np.bool_:
        return (np.minimum if pick is np.fmin else np.maximum).reduce(np.stack(arrays)).astype(dtype)
    wide = np.stack([a.astype(np.float64) for a in arrays])
    with np.errstate(invalid="ignore"):
        return pick.reduce(wide).astype(dtype)


def _widened(array: np.ndarray, budget, loose: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The values a result within `budget` (a precision.Budget, or None) of `array`'s precise value
    may take: `array` itself where there is none; else so many steps of its type's grid either side."""
    if budget is None or from_numpy(array.dtype).kind != "float":
        return array, array
    if hasattr(budget, "widened"):  # a per-element bound (bounds.ElementBound): its loosest tier
        return budget.widened(array)
    from ..precision import FLOAT64_REFERENCE_SLACK

    slack = FLOAT64_REFERENCE_SLACK if array.dtype == np.float64 else 0.0
    # A result within b ULP of the exact value lies within b + 1/2 ULP of the rounded one (and a
    # float64 reference itself half a ULP off adds its slack): that many grid steps, rounded up.
    ulps = budget.wrong_answer_line(array.dtype) if loose else float(budget.ulps)
    steps = int(math.ceil(ulps + 0.5 + slack))
    return step(array, -steps), step(array, steps)


def _freed_range(low: np.ndarray, high: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Any value of the type where the text leaves an element undefined."""
    kind = from_numpy(low.dtype)
    if kind.kind == "float":
        bottom, top = (-np.inf, np.inf) if kind.has_inf else (kind.lowest, kind.max)
    else:
        bottom, top = kind.lowest, kind.max
    return (np.where(free, np.array(bottom).astype(low.dtype), low).astype(low.dtype),
            np.where(free, np.array(top).astype(high.dtype), high).astype(high.dtype))


def step(array: np.ndarray, steps: int) -> np.ndarray:
    """Each finite value moved `steps` places along its float type's grid (negative: down), stopping
    at the type's ends (inf, or max where the type has no inf); NaN and inf stay as they are."""
    if array.dtype.itemsize > 2:
        return _nextafter(array, steps)
    grid = _grid(array.dtype)
    wide = array.astype(np.float64)
    finite = np.isfinite(wide)
    position = np.searchsorted(grid, np.where(finite, wide, 0.0))
    moved = grid[np.clip(position + steps, 0, grid.size - 1)]
    return np.where(finite, moved, wide).astype(array.dtype)


def _nextafter(array: np.ndarray, steps: int) -> np.ndarray:
    """`step` for float32 and float64, whose grids are too large to list."""
    toward = np.array(np.inf if steps > 0 else -np.inf, dtype=array.dtype)
    moved = array.copy()
    finite = np.isfinite(array)
    with np.errstate(over="ignore"):  # max steps on to inf, the end of the grid
        for _ in range(abs(steps)):
            moved = np.where(finite & np.isfinite(moved), np.nextafter(moved, toward), moved)
    return moved.astype(array.dtype)


@lru_cache(maxsize=None)
def _grid(np_dtype: np.dtype) -> np.ndarray:
    """Every value of a float type of at most 16 bits in order (float64), with its infinities at the
    ends where it has them, -0.0 folded into 0.0."""
    np_dtype = np.dtype(np_dtype)
    bits = np.arange(2 ** (8 * np_dtype.itemsize), dtype=np.uint16 if np_dtype.itemsize == 2 else np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        values = bits.view(np_dtype).astype(np.float64)
    return np.unique(values[~np.isnan(values)])


def _isnan(array: np.ndarray) -> np.ndarray:
    if array.dtype.kind in "iubOSU" or array.dtype == np.bool_:
        return np.zeros(array.shape, dtype=bool)
    if array.dtype.kind == "c":
        return np.isnan(array)
    with np.errstate(invalid="ignore"):
        return np.isnan(array.astype(np.float64))


def with_body(found: Expected, example: Example) -> Expected:
    """`found` (the prose's answer) with the version's function body attached where it has one: its
    readings are evaluated when a runtime's outputs match none of the prose's (see `Body`)."""
    if not found.is_valid or not found.readings or not _has_body(example.version.op, example.version.since_version):
        return found
    return replace(found, body=Body(example))


@lru_cache(maxsize=None)
def _has_body(op: str, since: int) -> bool:
    import onnx.defs

    schema = onnx.defs.get_schema(op, since, "")
    return schema.has_function or schema.has_context_dependent_function


class Body:
    """The function body's readings of one case, evaluated once, when first asked: most cases match
    the prose, and a body costs each of its nodes' references again."""

    def __init__(self, example: Example):
        self.example = example
        self._found: tuple[tuple[Reading, ...], str] | None = None

    def readings(self, prose: tuple[Reading, ...]) -> tuple[tuple[Reading, ...], str]:
        """The body's readings that the prose's do not already give, and where the prose's first
        reading lies outside the body's own bounds ('' where nowhere: no contradiction)."""
        if self._found is None:
            bodies = tuple(body for body in readings_of(self.example) if not _same_as(body, prose))
            own = next((body for body in bodies if body.label == FUNCTION_BODY), None)
            self._found = bodies, _outside(own, prose[0]) if own is not None and prose else ""
        return self._found

    def loose_readings(self) -> tuple[Reading, ...]:
        """The body's readings with each budgeted node allowed up to its wrong-answer line: a runtime
        that follows the body with an inner function less precise than documented is imprecise, not
        wrong (asked only of outputs that match nothing else)."""
        return tuple(readings_of(self.example, loose=True))


def _same_as(body: Reading, readings: tuple[Reading, ...]) -> bool:
    """Whether the body fixes every element to the value one unbudgeted prose reading gives."""
    if any(not (b.low is b.high or arrays_identical(b.low, b.high)) or bool((b.nan & ~_isnan(b.low)).any())
           for b in body.bounds):
        return False
    return any(not r.precise and all(arrays_identical(x, y) for x, y in zip(body.outputs, r.outputs)) for r in readings)


def _outside(body: Reading, prose: Reading) -> str:
    """Where the prose's values fall outside the body's bounds: '3 of 8 elements', or ''."""
    count = total = 0
    for bounds, value in zip(body.bounds, prose.outputs):
        if bounds.low.shape != value.shape:
            return "the outputs' shapes differ"
        out = ~bounds.contains(value)
        count, total = count + int(out.sum()), total + out.size
    return f"{count} of {total} elements" if count else ""
