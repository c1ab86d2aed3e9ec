"""What a reference answers, and how an op's per-version semantics are registered.

A reference answers every Example with an `Expected`: the output readings the spec allows (one,
or several where the text is ambiguous), or the rule that makes the input invalid, quoting the
spec sentence it comes from. `OpReference` holds one op's semantic-version classes and resolves a
version as "the highest since-version <= the requested one".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..case import Example, dtype_param_in
from ..registry import OpVersion
from . import plumbing
from .expected import Bounds, Expected, Invalid, Reading, freed, readings, single  # noqa: F401 - the references' names
from .function_body import with_body


DTYPE_NOT_ALLOWED = "dtype-not-allowed"


class VersionSemantics:
    """Base of one semantic version of an op: subclasses set `since` and implement `expected`."""

    since: int = 0

    def expected(self, example: Example) -> Expected:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class OpReference:
    """One op's reference: its semantic versions and how its inputs map onto type parameters."""

    op: str
    dtype_param: str
    semantics: tuple[type[VersionSemantics], ...]
    attribute_params: dict[str, str] = field(default_factory=dict)
    data_inputs: tuple[str, ...] = ()  # inputs that stay graph inputs in every materialization mode
    shape_inputs: tuple[str, ...] = ()  # inputs whose values are a tensor's dims: a case file's are checked as shapes
    output_elements_from: Callable[[Example], int] | None = None  # when the output can outgrow the inputs
    # Whether the outputs' rank depends on the input dims' sizes (Squeeze without axes: which dims
    # are 1): the model then declares its inputs' dims as numbers (`model.SHAPES` "static"), or
    # shape inference, knowing them only as names, infers another rank than the output has.
    rank_from_sizes: Callable[[Example], bool] | None = None
    # The attributes a type binding fixes (Cast's `to` names T2): a case file that leaves one out gets it.
    binding_attributes: Callable[[OpVersion, dict[str, str]], dict] | None = None
    # What is wrong with a case whose inputs or attributes name another type than its binding
    # (QuantizeLinear's zero point and output_dtype against T3), or None: a case file's mistake.
    binding_problem: Callable[[Example], str | None] | None = None
    # Named facts about what a case contains ("a negative step meets an INT_MAX end"), for
    # expectations that describe a known deviation by its cause instead of by case ids.
    traits: dict[str, Callable[[Example], bool]] = field(default_factory=dict)
    # The ids of the rules by which its versions find an input invalid (`Invalid.rule`), besides
    # DTYPE_NOT_ALLOWED, which every op has: an expectation names a lenient deviation by its rule.
    rules: tuple[str, ...] = ()
    # Per execution provider (onnxruntime's name), what explains a failure of this op in that
    # provider's own terms: a function of the case giving a note, or None.
    provider_notes: dict[str, Callable[[Example], str | None]] = field(default_factory=dict)
    # Whether random cases run with a covering set of type bindings (every dtype of every type
    # parameter in at least one binding, as many bindings as the longest parameter has dtypes)
    # instead of every combination: OneHot's indices x depth x values types are 1,815 bindings, each
    # of which the case files and the parameters' own roles cover far better than 20 drawn cases.
    covering_bindings: bool = False
    # Whether the semantics give the function body's readings themselves, labelled as the body's,
    # where the core's body path cannot evaluate it (Range's body is a Loop over a graph attribute).
    body_in_readings: bool = False
    # The family declaration the op was made from (reference/elementwise.py), which its strategy
    # draws from too; None for an op with modules of its own.
    family: object | None = None
    # Semantics classes hold no state, so one instance per since-version serves every case.
    _instances: dict[int, VersionSemantics] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Every op has the dtype plumbing traits; an op's own trait of the same name wins, and its
        # own come first, so that --write-expect, which breaks ties by order, names the op's cause.
        shared = {name: trait for name, trait in plumbing.TRAITS.items() if name not in self.traits}
        object.__setattr__(self, "traits", {**self.traits, **shared})

    @property
    def all_rules(self) -> tuple[str, ...]:
        return (DTYPE_NOT_ALLOWED, *self.rules)

    def semantics_for(self, version: OpVersion) -> VersionSemantics:
        found = self._instances.get(version.since_version)
        if found is None:
            eligible = [s for s in self.semantics if s.since <= version.since_version]
            found = self._instances[version.since_version] = max(eligible, key=lambda s: s.since)()
        return found

    def dtype_param_of(self, version: OpVersion) -> str:
        """The dtype axis as `version` names it (see `case.dtype_param_in`)."""
        return dtype_param_in(version, self.dtype_param)

    def problem_with_binding(self, example: Example) -> str | None:
        """Why `example` contradicts its own type binding, or None (see `binding_problem`)."""
        return None if self.binding_problem is None else self.binding_problem(example)

    def attributes_of_binding(self, version: OpVersion, binding: dict[str, str]) -> dict:
        """The attributes `binding` fixes in `version` (none for most ops)."""
        return {} if self.binding_attributes is None else self.binding_attributes(version, binding)

    def output_elements(self, example: Example) -> int:
        """How many elements the output would have, computed without allocating it."""
        if self.output_elements_from is not None:
            return self.output_elements_from(example)
        largest = 0
        for array in example.inputs.values():  # a loop, not max() over a generator: asked for every case
            if array is not None and array.size > largest:
                largest = array.size
        return largest

    def shapes_for(self, example: Example, shapes: str) -> str:
        """How the example's model declares its inputs' dims: as `shapes` asks, or as numbers where
        its output's rank depends on their sizes (see `rank_from_sizes`)."""
        return "static" if self.rank_from_sizes is not None and self.rank_from_sizes(example) else shapes

    def output_types(self, example: Example, expected: Expected) -> tuple[tuple[str, int], ...]:
        """Each output's dtype (from the schema and the example's type binding) and rank (the
        reference's, or for an input it rejects, the first input's)."""
        dtypes = example.output_dtypes
        if expected.is_valid and expected.readings:
            ranks = [output.ndim for output in expected.readings[0].outputs]
        else:
            first = next((a for a in example.inputs.values() if a is not None), None)
            ranks = [first.ndim if first is not None else 0] * len(dtypes)
        return tuple(zip(dtypes, ranks))

    def expected(self, example: Example, bodies: bool = True) -> Expected:
        """What the text allows for `example`: the prose's readings, and where the version has a
        function body, the body's (`bodies`; off for a node inside a body, judged by its prose)."""
        wrong_type = self.disallowed_type(example)
        if wrong_type is not None:
            return Expected(invalid=wrong_type)
        found = asked_for(self.semantics_for(example.version).expected(example), example)
        return with_body(found, example) if bodies and not self.body_in_readings else found

    def disallowed_type(self, example: Example) -> Invalid | None:
        for param, name in example.types.items():
            if name not in example.version.allowed(param):
                return Invalid(
                    DTYPE_NOT_ALLOWED,
                    f"{example.version.label} Type Constraints: {example.version.type_constraint_text(param)}",
                )
        return None


def text_attribute(example: Example, name: str, default: str) -> str:
    """A STRING attribute as text (onnx holds it as bytes), `default` where it is left out."""
    value = example.attributes.get(name)
    if value is None:
        return default
    return value.decode() if isinstance(value, bytes) else str(value)


def asked_for(expected: Expected, example: Example) -> Expected:
    """`expected` with only the outputs the example asks for (see `Example.outputs`): a version's
    semantics answer every formal output, the node has those it names."""
    kept = example.output_positions
    answered = len(expected.readings[0].outputs) if expected.readings else len(expected.specs)
    if not example.outputs or kept == tuple(range(answered)):
        return expected  # every output the semantics answered (a node naming the first of four asks for less)

    def chosen(values: tuple) -> tuple:
        return tuple(values[k] for k in kept) if values else values

    kept_readings = tuple(dataclasses.replace(r, outputs=chosen(r.outputs), precise=chosen(r.precise), free=chosen(r.free),
                                              choices=chosen(r.choices), bounds=chosen(r.bounds)) for r in expected.readings)
    return dataclasses.replace(expected, readings=kept_readings, budgets=chosen(expected.budgets), specs=chosen(expected.specs))
