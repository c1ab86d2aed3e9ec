"""The two shapes a test takes: a `Case` as written (one YAML entry) and an `Example`, concrete.

A Case names an op, the versions and dtypes it applies to, its inputs and attributes as written,
and optionally what must come out. Expanding it gives one Example per op version and type
binding, with real arrays. Hypothesis strategies produce Examples directly. Everything downstream
(reference, model, runners, comparison, reports) sees Examples only.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .dtypes import dtype
from .registry import OpVersion

FROM_ATTRIBUTE_TYPES = {"FLOAT": "float", "FLOATS": "float", "INTS": "int64", "INT": "int64"}


@dataclass(frozen=True, eq=False)
class SparseValue:
    """A SPARSE_TENSOR attribute's value (Constant's `sparse_value`), as onnx.proto's
    SparseTensorProto holds it: `values` (shape [NNZ], of the attribute's type) stand at `indices`
    (int64, [NNZ] linearized or [NNZ, rank] coordinates) of a tensor of shape `dims`, every other
    element the default (zero, or the empty string). Kept as written, unchecked: which of them are
    valid is the op's reference's to say."""

    values: np.ndarray
    indices: np.ndarray
    dims: tuple[int, ...]


@dataclass(frozen=True)
class Expectation:
    """What a case file says must happen: an output (as written) or the rule that rejects it."""

    outputs: tuple[Any, ...] | None = None  # one per output of the op, as written
    error: str | None = None


@dataclass(frozen=True)
class Case:
    """One hand-written case before values are concrete; `source` is `yaml:FILE:LINE`."""

    op: str
    name: str
    source: str
    versions: tuple[int, ...] | None = None  # since-versions; None means every version
    dtypes: tuple[str, ...] | None = None  # the op's dtype axis; None means all the version allows
    types: tuple[tuple[str, tuple[str, ...]], ...] = ()  # other type params, e.g. (("Tind", ("int32",)),)
    inputs: tuple[tuple[str, Any], ...] = ()
    attributes: tuple[tuple[str, Any], ...] = ()
    outputs: int | tuple[str, ...] | None = None  # a variadic output's count, or the output names asked for
    expect: Expectation | None = None
    spec: str = ""
    line: int | None = None


@dataclass(frozen=True, eq=False)
class Example:
    """A concrete test: one op version, one type binding, arrays for every present input.

    `inputs` maps formal input names to arrays; a name mapped to None is an omitted optional
    input written as an empty name in the node. Attributes hold plain Python values (or an
    array for tensor attributes).
    """

    version: OpVersion
    name: str
    types: dict[str, str]
    inputs: dict[str, np.ndarray | None]
    attributes: dict[str, Any]
    source: str
    dtype_param: str
    spec: str = ""
    expect_error: str | None = None
    expect_outputs: tuple[np.ndarray, ...] | None = None  # stated by a case file or golden test, one per output
    origin: dict[str, Any] = field(default_factory=dict)
    # Per output of the node, whether it is asked for: () asks for every formal output; a variadic
    # output's count is this tuple's length (Split's parts), and an optional output left out
    # (Unique's `counts`) is False here and an empty name in the node.
    outputs: tuple[bool, ...] = ()

    @property
    def op(self) -> str:
        return self.version.op

    @property
    def dtype(self) -> str:
        if self.dtype_param in self.types or not self.version.inputs:
            return self.types[self.dtype_param]
        return self.version.input_dtype(0, self.types)  # a version of fixed types only

    @cached_property
    def id(self) -> str:
        """Stable id: op-version/case/dtype[/other bindings]; what `--case` selects."""
        return case_id(self.version, self.name, self.types, self.dtype_param)

    @cached_property
    def node_inputs(self) -> tuple[str, ...]:
        """The node's input names in the schema's order: every value of a variadic input, and ""
        for an omitted optional input before a present one."""
        names: list[str] = []
        for formal in self.version.inputs:
            if formal.variadic:
                index = 0
                while formal.instance(index) in self.inputs:
                    names.append(formal.instance(index))
                    index += 1
            else:
                names.append(formal.name if self.inputs.get(formal.name) is not None else "")
        return _without_trailing_omitted(names)

    @cached_property
    def output_positions(self) -> tuple[int, ...]:
        """The node's outputs that are asked for, by position: what the model's graph outputs are,
        and what a reading's outputs hold, in this order."""
        if not self.outputs:
            return tuple(range(len(self.version.outputs)))
        return tuple(position for position, asked in enumerate(self.outputs) if asked)

    @cached_property
    def node_outputs(self) -> tuple[str, ...]:
        """The node's output names: "" for an output left out before one asked for."""
        if not self.outputs:
            return self.version.output_names
        return _without_trailing_omitted([name if asked else "" for name, asked in
                                          zip(self.version.output_positional_names(len(self.outputs)), self.outputs)])

    @property
    def output_dtypes(self) -> tuple[str, ...]:
        """The dtype of each output asked for, from the schema and the type binding."""
        return tuple(self.version.output_dtype(position, self.types) for position in self.output_positions)

    @property
    def binding(self) -> str:
        """The id's type binding: dtype[/other bindings], what tells this case from the same case in other types."""
        return binding_label(self.version, self.types, self.dtype_param)


# A hypothesis case's name, by its index in its group (version x type binding).
HYPOTHESIS_NAME = "hypothesis-{:04d}"


def bound_types(version: OpVersion, types: dict[str, str], inputs: dict[str, Any], dtype_param: str) -> dict[str, str]:
    """A new case's type binding less the parameters that type only inputs its node leaves out
    (Pad-18's Tind without `axes`): a model read back cannot tell them, so ids leave them out."""
    return {p: t for p, t in types.items() if p == dtype_param or types_node(version, p, inputs)}


def types_node(version: OpVersion, param: str, inputs: dict[str, Any]) -> bool:
    """Whether type parameter `param` types something a node with these `inputs` has: an output,
    or an input it gives; a name that is no type parameter (a fixed type) always counts."""
    if param not in version.constraints or any(formal.type_param == param for formal in version.outputs):
        return True
    for name, array in inputs.items():
        formal = version.input(name)
        if array is not None and formal is not None and formal.type_param == param:
            return True
    return not any(formal.type_param == param for formal in version.inputs)


def _without_trailing_omitted(names: list[str]) -> tuple[str, ...]:
    """A node's input or output names without the empty names at the end: an omitted optional
    one is an empty name only before one that is present."""
    while names and names[-1] == "":
        names.pop()
    return tuple(names)


def slug(text: str) -> str:
    """`text` as lower-case letters, digits and single underscores: how a test directory's name
    writes a case id (see golden.test_name), so that two case names with one slug would be one
    test directory."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def is_hypothesis_slug(text: str) -> bool:
    """Whether `text` is a hypothesis case's name as a test directory writes it (hypothesis_0001)."""
    return re.fullmatch(r"hypothesis_\d+", text) is not None


def name_clash(name: str, taken: dict[str, tuple[str, str]]) -> str | None:
    """Why a case name of an op cannot be used beside `taken` (the op's names so far, by their
    slug, each with where it is), or None. Names are told apart by their slug, as the test
    directories `generate` writes are named; and hypothesis's names are its own."""
    key = slug(name)
    if is_hypothesis_slug(key):
        return f"case name '{name}' is written as hypothesis's cases are named ({HYPOTHESIS_NAME.format(1)}, ...): choose another"
    if key not in taken:
        return None
    other, where = taken[key]
    if other == name:
        return f"duplicate case name '{name}' (also at {where})"
    return (f"case names '{name}' and '{other}' (at {where}) would name one test directory (..._{key}_...), "
            "one written over the other: rename one")


def case_id(version: OpVersion, name: str, types: dict[str, str], dtype_param: str) -> str:
    """An Example's id from what it is made of: op-version/case/dtype, then the other type
    parameters' dtypes (see `binding_label`)."""
    return "/".join([version.label, name, binding_label(version, types, dtype_param)])


def binding_label(version: OpVersion, types: dict[str, str], dtype_param: str) -> str:
    """A type binding as ids write it: the dtype, then the other type parameters' dtypes, those
    the version lets vary, by name."""
    extra = [types[p] for p in sorted(types) if p != dtype_param and len(version.allowed(p)) > 1]
    # A version with fixed types only (NonMaxSuppression's float boxes) is named by its first input's.
    first = types[dtype_param] if dtype_param in types else version.input_dtype(0, types)
    return "/".join([first, *extra])


def stable_seed(*parts: object) -> int:
    """A seed derived from names only, so generated values never depend on run order."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def dtype_param_in(version: OpVersion, dtype_param: str) -> str:
    """The op's dtype axis as `version` names it: `dtype_param`, or where the version has no type
    parameter of that name (DequantizeLinear-10 and -13 call x's type T, later versions T1), the
    type parameter of its first input."""
    if dtype_param in version.constraints or not version.inputs:
        return dtype_param
    first = version.inputs[0].type_param
    return first if first in version.constraints else dtype_param


def type_bindings(
    version: OpVersion, dtype_param: str, dtypes: tuple[str, ...] | None, types: dict[str, tuple[str, ...]]
) -> list[dict[str, str]]:
    """Every combination of type parameters a case runs with, primary dtype first."""
    params = [p for p, _ in version.type_constraints]
    dtype_param = dtype_param_in(version, dtype_param)
    choices = []
    for param in params:
        if param == dtype_param:
            choices.append(dtypes if dtypes is not None else version.allowed(param))
        else:
            given = types.get(param)  # None (`T2:` left empty) means every allowed dtype, as for `dtypes`
            choices.append(given if given is not None else version.allowed(param))
    return [dict(zip(params, combo)) for combo in itertools.product(*choices)]


def value_dtype(version: OpVersion, name: str, bindings: dict[str, str], attribute_params: dict[str, str]) -> str:
    """The dtype a named input (or input-like attribute) takes under a type binding."""
    formal = version.input(name)
    if formal is not None:
        if formal.type_param not in bindings and formal.type_param.startswith("tensor("):
            return formal.type_param[len("tensor("):-1]  # a fixed type (QuantizeLinear-10's `tensor(float)`)
        return bindings[formal.type_param]
    if name in attribute_params:
        return bindings[attribute_params[name]]
    attribute = version.attribute(name)
    if attribute is not None:
        kind = _attribute_kind(attribute.type)
        if kind in FROM_ATTRIBUTE_TYPES:
            return FROM_ATTRIBUTE_TYPES[kind]
    raise KeyError(name)


def is_typed_attribute(version: OpVersion, name: str) -> bool:
    """Whether an attribute's value is a number or a flat list of them (FLOAT, FLOATS, INT, INTS): a
    case file writes it as it writes an input, and it is read into its dtype as an input is."""
    return _attribute_kind(version.attribute(name).type) in FROM_ATTRIBUTE_TYPES


def is_sparse_attribute(version: OpVersion, name: str) -> bool:
    """Whether an attribute is a SPARSE_TENSOR (Constant's `sparse_value`): a case file writes it as
    a mapping {values, indices, dims}, read into a `SparseValue`."""
    attribute = version.attribute(name)
    return attribute is not None and _attribute_kind(attribute.type) == "SPARSE_TENSOR"


def _attribute_kind(attr_type: int) -> str:
    from onnx import AttributeProto

    return AttributeProto.AttributeType.Name(attr_type)


def attribute_value(version: OpVersion, name: str, array: np.ndarray) -> Any:
    """An array written under `inputs:` turned into the attribute value an older version takes."""
    from .values import ValueProblem

    kind = _attribute_kind(version.attribute(name).type)
    if kind in ("FLOAT", "INT") and array.ndim != 0:
        raise ValueProblem(f"'{name}' is a {kind} attribute of {version.label}: write one number, not {array.shape} values")
    if kind in ("INTS", "FLOATS") and array.ndim > 1:
        raise ValueProblem(f"'{name}' is an {kind} attribute of {version.label}: write a flat list")
    if kind == "FLOAT":
        return float(array.astype(np.float64))
    if kind == "FLOATS":
        return [float(v) for v in array.reshape(-1).astype(np.float64)]
    if kind == "INTS":
        return [int(v) for v in array.reshape(-1)]
    if kind == "INT":
        return int(array)
    return array


__all__ = ["Case", "Example", "Expectation", "SparseValue", "dtype_param_in", "stable_seed", "type_bindings", "value_dtype", "dtype"]
