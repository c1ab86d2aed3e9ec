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
    """One formal input of a schema: its name, its type parameter, and whether it may be omitted."""

    name: str
    type_param: str
    optional: bool


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
    output_names: tuple[str, ...]

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

    @cached_property
    def input_names(self) -> tuple[str, ...]:
        """The formal inputs' names, in the schema's order."""
        return tuple(i.name for i in self.inputs)

    def input(self, name: str) -> FormalInput | None:
        return self._by_name[0].get(name)

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
    return type_str[len("tensor(") : -1]


def _from_schema(schema: onnx.defs.OpSchema) -> OpVersion:
    optional = onnx.defs.OpSchema.FormalParameterOption.Optional
    return OpVersion(
        op=schema.name,
        since_version=schema.since_version,
        inputs=tuple(FormalInput(i.name, i.type_str, i.option == optional) for i in schema.inputs),
        attributes=tuple(
            FormalAttribute(a.name, int(a.type), a.required, _default(a))
            for a in sorted(schema.attributes.values(), key=lambda a: a.name)
        ),
        type_constraints=tuple(
            (c.type_param_str, tuple(_type_name(t) for t in c.allowed_type_strs))
            for c in schema.type_constraints
        ),
        output_names=tuple(o.name for o in schema.outputs),
    )


def latest_opset() -> int:
    return onnx.defs.onnx_opset_version()


@cache
def versions(op: str) -> tuple[OpVersion, ...]:
    """Every version of an op in the default domain, oldest first."""
    found = [
        _from_schema(s)
        for s in onnx.defs.get_all_schemas_with_history()
        if s.name == op and s.domain == "" and not s.deprecated
    ]
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
