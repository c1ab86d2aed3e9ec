"""The op registry: every version of an op, read from `onnx.defs`, never retyped.

An `OpVersion` is the unit of conformance: its formal inputs, attributes and type constraints come
from the schema onnx ships. Which ops conform covers is decided by the references registered in
`conformance.reference`; this module only answers questions about the schemas.

A type constraint is never narrowed in silence: conform builds tensors only, so a constraint's
tensor types are its `type_constraints` and the others (sequences, optionals) its `left_out`,
both as the schema orders them; a version that leaves a type parameter, input or output no tensor
type at all cannot be built, and its `refusal` says which and why (`type_bindings` then raises
`Unbuildable` with it, rather than answer with no binding).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import cache, cached_property

import onnx
import onnx.defs
from onnx import AttributeProto

from .errors import UsageError


class Unbuildable(UsageError):
    """A version conform cannot build a node of, asked for what only a buildable one has (its type
    bindings): the message is the version's `refusal`."""


def instance_name(formal: str, index: int) -> str:
    """The name of the `index`-th value of a variadic input or output `formal` (0: the formal name):
    data_0, data_1, ... or inputs, inputs_1, ..."""
    if index == 0:
        return formal
    if formal.endswith("_0"):
        return f"{formal[:-1]}{index}"
    return f"{formal}_{index}"


@dataclass(frozen=True)
class FormalInput:
    """One formal input of a schema: its name, its type parameter, whether it may be omitted, and,
    for a variadic input, how many values it takes at least and whether they share one type.

    A variadic input's values are named as ONNX's node tests name them: a formal name ending in
    `_0` counts up (data_0, data_1, ...); any other gets `_1`, `_2`, ... after the first.
    """

    name: str
    type_param: str
    optional: bool
    variadic: bool = False
    min_arity: int = 1
    homogeneous: bool = True

    def instance(self, index: int) -> str:
        """The name of the `index`-th value of this input (0 is the formal name itself)."""
        return instance_name(self.name, index)

    def instance_index(self, name: str) -> int | None:
        """Which value of this input `name` is, or None when it is none of them."""
        if name == self.name:
            return 0
        stem = self.name[:-1] if self.name.endswith("_0") else f"{self.name}_"
        rest = name[len(stem):] if self.variadic and name.startswith(stem) else ""
        return int(rest) if rest.isdigit() and rest[0] != "0" else None


@dataclass(frozen=True)
class FormalOutput:
    """One formal output of a schema: its name and its type (a type parameter, or a fixed type
    written as the parameter, e.g. `tensor(int64)`)."""

    name: str
    type_param: str
    optional: bool = False
    variadic: bool = False


@dataclass(frozen=True)
class FormalAttribute:
    """One attribute of a schema, with its ONNX attribute type and default (None when it has none)."""

    name: str
    type: int  # AttributeProto.AttributeType
    required: bool
    default: object = None


@dataclass(frozen=True)
class OpVersion:
    """One version of one op, exactly as its schema in onnx.defs describes it."""

    op: str
    since_version: int
    inputs: tuple[FormalInput, ...]
    attributes: tuple[FormalAttribute, ...]
    type_constraints: tuple[tuple[str, tuple[str, ...]], ...]
    outputs: tuple[FormalOutput, ...]
    # Why conform cannot build this version's node, or None: every reason among a graph
    # attribute, an attribute type it cannot write, a type parameter, input or output with no
    # tensor type (named, with its types).
    refusal: str | None = None
    # Per type parameter, the types of its constraint that are no tensor type, as the schema
    # writes them (`seq(tensor(float))`): left out of `type_constraints`, which conform builds
    # cases from, and kept here so that the constraint is still whole (`type_constraint_text`).
    left_out: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Made by `versions` from onnx.defs: pickled by name, so that the results a worker sends share
    # the receiver's one object per version (~2 KB each, with 100,000s of results in a run).
    registered: bool = field(default=False, compare=False, repr=False)

    def __reduce__(self):
        if self.registered:
            return _registered_version, (self.op, self.since_version)
        return super().__reduce__()

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.outputs)

    def output_formal(self, position: int) -> FormalOutput:
        """The formal output a node's `position`-th output is: past the last formal one, the last,
        when it is variadic (Split's `outputs`)."""
        return self.outputs[min(position, len(self.outputs) - 1)]

    def output_positional_names(self, count: int) -> tuple[str, ...]:
        """The names of a node's first `count` outputs: the formal names in order, and a variadic
        last output's values by their instance names (as `positional_names` names inputs)."""
        last = len(self.outputs) - 1
        return tuple(self.outputs[p].name if p < last or not self.outputs[last].variadic
                     else instance_name(self.outputs[last].name, p - last)
                     for p in range(count))

    def output_dtype(self, index: int, types: dict[str, str]) -> str:
        """The dtype of a node's output `index` under a type binding: its type parameter's, or its fixed type."""
        param = self.output_formal(index).type_param
        return types[param] if param in types else _type_name(param)

    def input_dtype(self, index: int, types: dict[str, str]) -> str:
        """The dtype of formal input `index` under a type binding: its type parameter's, or its fixed type."""
        param = self.inputs[index].type_param
        return types[param] if param in types else _type_name(param)

    @property
    def label(self) -> str:
        return f"{self.op}-{self.since_version}"

    def allowed(self, type_param: str) -> tuple[str, ...]:
        """The tensor dtype names the schema allows for a type parameter, in the schema's order
        (the other types it allows are in `left_out`); none for a fixed type (`tensor(float)`)."""
        return self.constraints.get(type_param, ())

    def dtype_axis(self, type_param: str) -> tuple[str, ...]:
        """The dtypes an op's dtype axis takes in this version: `type_param`'s, or in a version of
        fixed types only (NonMaxSuppression's) its first input's one type."""
        if not self.constraints and self.inputs:
            return (self.input_dtype(0, {}),)
        return self.allowed(type_param)

    def type_bindings(self) -> list[dict[str, str]]:
        """Every combination of one tensor dtype per type parameter, in the schema's order;
        `Unbuildable` (naming why) for a version conform cannot build, never an empty list."""
        if self.refusal is not None:
            raise Unbuildable(f"conform cannot build {self.label}: {self.refusal}")
        params = [param for param, _ in self.type_constraints]
        return [dict(zip(params, combination)) for combination in itertools.product(*self.constraints.values())]

    @cached_property
    def constraints(self) -> dict[str, tuple[str, ...]]:
        """The type constraints by type parameter, built once per version."""
        return dict(self.type_constraints)

    def __hash__(self) -> int:
        # Versions key many per-case caches; the generated hash would walk every schema field each time.
        return hash((self.op, self.since_version))

    def input(self, name: str) -> FormalInput | None:
        """The formal input `name` is, or is a value of (a variadic input's `data_1`)."""
        found = self._by_name[0].get(name)
        if found is None and self.inputs and self.inputs[-1].variadic:
            last = self.inputs[-1]
            found = last if last.instance_index(name) is not None else None
        return found

    def positional_names(self, count: int) -> tuple[str, ...]:
        """The names of a node's first `count` inputs: the formal names in order, and a variadic
        last input's values by their instance names."""
        names = []
        for position in range(count):
            if position < len(self.inputs) - 1 or not (self.inputs and self.inputs[-1].variadic):
                names.append(self.inputs[position].name if position < len(self.inputs) else f"input_{position}")
            else:
                names.append(self.inputs[-1].instance(position - len(self.inputs) + 1))
        return tuple(names)

    def attribute(self, name: str) -> FormalAttribute | None:
        return self._by_name[1].get(name)

    @cached_property
    def _by_name(self) -> tuple[dict[str, FormalInput], dict[str, FormalAttribute]]:
        # Asked for each value of each case a case file expands to: tens of thousands of times a load.
        return {i.name: i for i in self.inputs}, {a.name: a for a in self.attributes}

    def type_constraint_text(self, type_param: str) -> str:
        """The constraint as the schema states it, every type it allows (tensors first)."""
        others = dict(self.left_out).get(type_param, ())
        return f"{type_param} in ({', '.join([*(f'tensor({t})' for t in self.allowed(type_param)), *others])})"


def _default(attr: onnx.defs.OpSchema.Attribute) -> object:
    value = attr.default_value
    if value is None or value.type == AttributeProto.UNDEFINED:
        return None
    return onnx.helper.get_attribute_value(value)


def _type_name(type_str: str) -> str:
    """`tensor(uint8)` -> `uint8`; any other type string (a sequence, an optional) is no tensor:
    ValueError, never a mangled name."""
    if not (type_str.startswith("tensor(") and type_str.endswith(")")):
        raise ValueError(f"not a tensor type: {type_str}")
    return type_str[len("tensor(") : -1]


def _is_tensor(type_str: str) -> bool:
    return type_str.startswith("tensor(")


def tensor_types(type_strs) -> tuple[str, ...]:
    """The dtype names of the tensor types among `type_strs` (`tensor(uint8)` -> `uint8`), in their
    order; a sequence or optional type is left out (see `other_types`)."""
    return tuple(_type_name(t) for t in type_strs if _is_tensor(t))


def other_types(type_strs) -> tuple[str, ...]:
    """The types among `type_strs` that are no tensor type (`seq(tensor(float))`), as written."""
    return tuple(t for t in type_strs if not _is_tensor(t))


# Attribute types whose values conform can write: numbers, strings, their lists, tensors, sparse
# tensors (case.SparseValue).
_WRITABLE_ATTRIBUTES = {AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING, AttributeProto.TENSOR,
                        AttributeProto.SPARSE_TENSOR, AttributeProto.FLOATS, AttributeProto.INTS, AttributeProto.STRINGS}
_GRAPH_ATTRIBUTES = {AttributeProto.GRAPH, AttributeProto.GRAPHS}
_TYPE_KINDS = {"seq": "sequence", "optional": "optional"}


def refusal_of(schema: onnx.defs.OpSchema) -> str | None:
    """Why conform cannot build (or judge) a node of this schema, every reason joined by '; ', or
    None: a graph attribute (a body, a branch); another attribute type it cannot write; a type
    parameter, input or output that takes no tensor type at all, named with its types."""
    reasons = [_graph_reason(schema), _attribute_reason(schema), _type_reason(schema)]
    return "; ".join(reason for reason in reasons if reason) or None


def _graph_reason(schema: onnx.defs.OpSchema) -> str | None:
    graphs = sorted(a.name for a in schema.attributes.values() if a.type in _GRAPH_ATTRIBUTES)
    return f"needs a graph attribute ({', '.join(graphs)})" if graphs else None


def _attribute_reason(schema: onnx.defs.OpSchema) -> str | None:
    for attribute in sorted(schema.attributes.values(), key=lambda a: a.name):
        if attribute.type not in _WRITABLE_ATTRIBUTES | _GRAPH_ATTRIBUTES:
            kind = AttributeProto.AttributeType.Name(attribute.type)
            return f"attribute '{attribute.name}' is a {kind}, which conform cannot write yet"
    return None


def _type_reason(schema: onnx.defs.OpSchema) -> str | None:
    """'takes sequence types (S allows no tensor type: seq(tensor(uint8)) and 14 more)': each type
    parameter, and each input or output of a fixed type, that allows no tensor type, named."""
    untyped = _tensorless(schema)
    if not untyped:
        return None
    kinds = sorted({_kind(t) for _, types in untyped for t in types})
    named = "; ".join(f"{name} allows no tensor type: {types[0]}" + (f" and {len(types) - 1} more" if len(types) > 1 else "")
                      for name, types in untyped)
    return f"takes {' and '.join(kinds)} types ({named})"


def _tensorless(schema: onnx.defs.OpSchema) -> list[tuple[str, tuple[str, ...]]]:
    """(name, its types) of each type parameter, and of each input or output of a fixed type (not
    a type parameter), that allows types but no tensor type, in the schema's order."""
    params = {c.type_param_str: tuple(c.allowed_type_strs) for c in schema.type_constraints}
    fixed = [(f"{role} '{f.name}'", (f.type_str,)) for role, formals in (("input", schema.inputs), ("output", schema.outputs))
             for f in formals if f.type_str not in params]
    return [(name, types) for name, types in (*params.items(), *fixed) if types and not any(_is_tensor(t) for t in types)]


def _kind(type_str: str) -> str:
    """'sequence' for `seq(...)`, 'optional' for `optional(...)`, else the type's own first word."""
    word = type_str.split("(")[0]
    return _TYPE_KINDS.get(word, word)


def _registered_version(op: str, since_version: int) -> OpVersion:
    """The one object `versions` holds for this version (how a registered OpVersion unpickles)."""
    return next(v for v in versions(op) if v.since_version == since_version)


def _from_schema(schema: onnx.defs.OpSchema) -> OpVersion:
    option = onnx.defs.OpSchema.FormalParameterOption
    last = len(schema.inputs) - 1
    return OpVersion(
        registered=True,
        op=schema.name,
        since_version=schema.since_version,
        inputs=tuple(
            FormalInput(i.name, i.type_str, i.option == option.Optional, i.option == option.Variadic,
                        # onnx states a variadic input's least count as the schema's min_input
                        # less the inputs before it.
                        max(schema.min_input - last, 0) if i.option == option.Variadic else 1,
                        i.is_homogeneous)
            for i in schema.inputs
        ),
        attributes=tuple(
            FormalAttribute(a.name, int(a.type), a.required, _default(a))
            for a in sorted(schema.attributes.values(), key=lambda a: a.name)
        ),
        # The tensor types, which conform builds; the others go to `left_out`, and a parameter
        # with no tensor type at all refuses the version (`refusal`).
        type_constraints=tuple(
            (c.type_param_str, tensor_types(c.allowed_type_strs))
            for c in schema.type_constraints
        ),
        outputs=tuple(FormalOutput(o.name, o.type_str, o.option == option.Optional, o.option == option.Variadic)
                      for o in schema.outputs),
        refusal=refusal_of(schema),
        left_out=tuple(
            (c.type_param_str, other_types(c.allowed_type_strs))
            for c in schema.type_constraints if other_types(c.allowed_type_strs)
        ),
    )


def latest_opset() -> int:
    return onnx.defs.onnx_opset_version()


@cache
def _schemas_by_op() -> dict[str, list[onnx.defs.OpSchema]]:
    """The default domain's schemas that are not deprecated, by op: onnx hands the whole list over
    at each call (~5 ms), so it is read once, not once per op."""
    found: dict[str, list[onnx.defs.OpSchema]] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain == "" and not schema.deprecated:
            found.setdefault(schema.name, []).append(schema)
    return found


@cache
def versions(op: str) -> tuple[OpVersion, ...]:
    """Every version of an op in the default domain, oldest first."""
    found = [_from_schema(s) for s in _schemas_by_op().get(op, ())]
    if not found:
        raise UsageError(f"unknown op '{op}'")
    return tuple(sorted(found, key=lambda v: v.since_version))


def version_in_force(op: str, opset: int) -> OpVersion:
    """The version of `op` in force at `opset`: the highest since-version <= opset."""
    all_versions = versions(op)
    if opset > latest_opset():
        raise UsageError(f"opset {opset} is above the newest onnx knows ({latest_opset()})")
    candidates = [v for v in all_versions if v.since_version <= opset]
    if not candidates:
        raise UsageError(
            f"{op} does not exist at opset {opset}: its first version is {all_versions[0].since_version}"
        )
    return candidates[-1]
