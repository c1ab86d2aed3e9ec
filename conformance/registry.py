"""The op registry: every version of an op, read from `onnx.defs`, never retyped.

An `OpVersion` is the unit of conformance: its formal inputs, attributes and type constraints come
from the schema onnx ships. Which ops conform covers is decided by the references registered in
`conformance.reference`; this module only answers questions about the schemas.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

import onnx
import onnx.defs
from onnx import AttributeProto

from .errors import UsageError


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
        if index == 0:
            return self.name
        if self.name.endswith("_0"):
            return f"{self.name[:-1]}{index}"
        return f"{self.name}_{index}"

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
    # Why conform cannot build this version's node, or None: a graph attribute, a sequence or
    # optional type, a variadic output.
    refusal: str | None = None

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.outputs)

    def output_dtype(self, index: int, types: dict[str, str]) -> str:
        """The dtype of output `index` under a type binding: its type parameter's, or its fixed type."""
        param = self.outputs[index].type_param
        return types[param] if param in types else _type_name(param)

    @property
    def label(self) -> str:
        return f"{self.op}-{self.since_version}"

    def allowed(self, type_param: str) -> tuple[str, ...]:
        """The dtype names the schema allows for a type parameter, in the schema's order."""
        return self.constraints[type_param]

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
        return f"{type_param} in ({', '.join(f'tensor({t})' for t in self.allowed(type_param))})"


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
    order; a sequence or optional type is left out."""
    return tuple(_type_name(t) for t in type_strs if _is_tensor(t))


# Attribute types whose values conform can write: numbers, strings, their lists, tensors.
_WRITABLE_ATTRIBUTES = {AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING, AttributeProto.TENSOR,
                        AttributeProto.FLOATS, AttributeProto.INTS, AttributeProto.STRINGS}
_GRAPH_ATTRIBUTES = {AttributeProto.GRAPH, AttributeProto.GRAPHS}
_TYPE_KINDS = {"seq": "sequence", "optional": "optional"}


def refusal_of(schema: onnx.defs.OpSchema) -> str | None:
    """Why conform cannot build (or judge) a node of this schema, or None: a graph attribute (a
    body, a branch) or another attribute type it cannot write; a type parameter, input or output
    that takes no tensor type at all; variadic outputs."""
    graphs = sorted(a.name for a in schema.attributes.values() if a.type in _GRAPH_ATTRIBUTES)
    if graphs:
        return f"needs a graph attribute ({', '.join(graphs)})"
    for attribute in schema.attributes.values():
        if attribute.type not in _WRITABLE_ATTRIBUTES:
            kind = AttributeProto.AttributeType.Name(attribute.type)
            return f"attribute '{attribute.name}' is a {kind}, which conform cannot write yet"
    kinds = _non_tensor_kinds(schema)
    if kinds:
        return f"takes {' and '.join(kinds)} types"
    variadic = onnx.defs.OpSchema.FormalParameterOption.Variadic
    if any(o.option == variadic for o in schema.outputs):
        return "its outputs are variadic, which conform cannot judge yet"
    return None


def _non_tensor_kinds(schema: onnx.defs.OpSchema) -> list[str]:
    """The kinds of type ('sequence', 'optional') of each type parameter, input or output that
    allows no tensor type, sorted."""
    allowed = {c.type_param_str: list(c.allowed_type_strs) for c in schema.type_constraints}
    formals = [allowed.get(f.type_str, [f.type_str]) for f in (*schema.inputs, *schema.outputs)]
    kinds = set()
    for types in (*allowed.values(), *formals):
        if types and not any(_is_tensor(t) for t in types):
            kinds |= {_TYPE_KINDS.get(t.split("(")[0], t.split("(")[0]) for t in types}
    return sorted(kinds)


def _from_schema(schema: onnx.defs.OpSchema) -> OpVersion:
    option = onnx.defs.OpSchema.FormalParameterOption
    last = len(schema.inputs) - 1
    return OpVersion(
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
        # Only tensor types: a sequence or optional type an op also takes is left out, and a
        # parameter with no tensor type at all refuses the version (`refusal`).
        type_constraints=tuple(
            (c.type_param_str, tensor_types(c.allowed_type_strs))
            for c in schema.type_constraints
        ),
        outputs=tuple(FormalOutput(o.name, o.type_str, o.option == option.Optional) for o in schema.outputs),
        refusal=refusal_of(schema),
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
