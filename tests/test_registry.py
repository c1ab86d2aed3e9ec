"""The registry reads versions and constraints from onnx.defs; every version is covered."""

import math

import onnx.defs
import pytest

from conformance import casefile
from conformance import reference as registered
from conformance.errors import UsageError
from conformance.execute import RunOptions, select_examples
from conformance.reference import covered_ops, for_op
from conformance.registry import Unbuildable, latest_opset, version_in_force, versions

# The versions the project brief names for each op (independent of the code under test).
EXPECTED_VERSIONS = {"Clip": [1, 6, 11, 12, 13], "ConstantOfShape": [9, 20, 21, 23, 24, 25], "Slice": [1, 10, 11, 13]}


@pytest.mark.parametrize("op", sorted(EXPECTED_VERSIONS))
def test_versions_come_from_onnx_defs(op):
    assert [v.since_version for v in versions(op)] == EXPECTED_VERSIONS[op]


def test_version_in_force_is_the_highest_since_version_not_above_the_opset():
    assert version_in_force("Slice", 12).since_version == 11
    assert version_in_force("Clip", 13).since_version == 13
    assert version_in_force("ConstantOfShape", 22).since_version == 21


def test_opset_below_first_version_names_the_first_version():
    with pytest.raises(UsageError, match="first version is 9"):
        version_in_force("ConstantOfShape", 8)


def test_opset_above_onnx_is_refused():
    with pytest.raises(UsageError, match="above the newest"):
        version_in_force("Slice", latest_opset() + 1)


def test_formal_names_and_constraints_are_the_schema_ones():
    slice13 = version_in_force("Slice", 13)
    assert [i.name for i in slice13.inputs] == ["data", "starts", "ends", "axes", "steps"]
    assert set(slice13.allowed("Tind")) == {"int32", "int64"}
    assert "bfloat16" in slice13.allowed("T") and "bfloat16" not in version_in_force("Slice", 11).allowed("T")
    clip6 = version_in_force("Clip", 6)
    assert {a.name for a in clip6.attributes} == {"min", "max"}


def test_every_registered_version_of_a_covered_op_has_a_reference_and_cases():
    counts = casefile.count_cases()
    for op in covered_ops():
        reference = for_op(op)
        for version in versions(op):
            assert reference.semantics_for(version).since <= version.since_version
            assert counts.get((op, version.since_version), 0) > 0, f"{version.label} has no YAML case"


def test_unknown_op_lists_the_covered_ones():
    with pytest.raises(UsageError, match=f"covered: {', '.join(covered_ops())}"):
        for_op("NoSuchOp")


@pytest.mark.parametrize("op", covered_ops())
def test_every_trait_and_rule_answers_for_every_case_conform_chooses_invalid_ones_too(op):
    # An expectations entry `when: nan-bound` on Clip-12 ended the run in a traceback: the trait
    # read a [1]-shaped bound (an invalid case) as a scalar. And `rule:` entries are checked against
    # the op's declared rules: a rule the reference gives but does not declare could never be named,
    # and its lenient cases never listed.
    reference = for_op(op)
    examples = select_examples(RunOptions(op=op, examples=_examples_within(op, 10, drawn=1000)))
    expected = [reference.expected(e) for e in examples]
    given = {answer.invalid.rule for answer in expected if not answer.is_valid}
    assert given, f"no invalid case of {op} among {len(examples)} drawn and stated"
    assert given <= set(reference.all_rules), given - set(reference.all_rules)
    written = {e.expect_error for e in examples if e.expect_error is not None}  # what the built-in case files state
    assert written <= set(reference.all_rules), written - set(reference.all_rules)
    for name, trait in reference.traits.items():
        answers = [trait(example) for example in examples]
        assert all(type(answer) is bool for answer in answers), name


def _examples_within(op: str, most: int, drawn: int) -> int:
    """Examples per type binding for a per-op test: `most`, or fewer for an op of many bindings, so
    that about `drawn` examples are drawn in all, beside every case file's cases. An op of more
    bindings than that (Cast's every (from, to) pair: 3,554 draws of one took 7 s) is checked on
    its case files' cases alone, several hundred of them."""
    bindings = sum(math.prod(len(version.allowed(param)) for param, _ in version.type_constraints)
                   for version in versions(op))
    return min(most, drawn // bindings)


def _every_version():
    """Every version of every op of the default domain in onnx.defs (deprecated ones left out)."""
    names = sorted({s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == "" and not s.deprecated})
    return [version for name in names for version in versions(name)]


def test_every_covered_version_has_type_bindings():
    empty = [v.label for op in covered_ops() for v in versions(op) if v.refusal is not None or not v.type_bindings()]
    assert not empty, f"covered versions without a type binding: {empty}"


def test_every_version_in_onnx_defs_has_type_bindings_or_says_why_not():
    for version in _every_version():
        if version.refusal is None:
            assert version.type_bindings(), f"{version.label} has no type binding and no refusal"
        else:
            with pytest.raises(Unbuildable, match=f"cannot build {version.label}: "):
                version.type_bindings()


def test_a_constraint_is_never_narrowed_in_silence():
    # What the registry leaves out of a constraint (sequences, optionals) it keeps in `left_out`.
    by_label = {(s.name, s.since_version): s for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""}
    for version in _every_version():
        schema = by_label[(version.op, version.since_version)]
        left_out = dict(version.left_out)
        for constraint in schema.type_constraints:
            param = constraint.type_param_str
            kept = [f"tensor({name})" for name in version.allowed(param)]
            assert sorted(kept + list(left_out.get(param, ()))) == sorted(constraint.allowed_type_strs), version.label


def test_a_sequence_op_is_refused_naming_its_sequence_types_not_given_no_binding():
    sequence_at = versions("SequenceAt")[0]
    assert "takes sequence types" in sequence_at.refusal and "S allows no tensor type: seq(tensor(" in sequence_at.refusal
    with pytest.raises(Unbuildable, match=r"SequenceAt-11: takes sequence types \(S allows no tensor type: seq\(tensor\("):
        sequence_at.type_bindings()
    identity = versions("Identity")[-1]  # tensors, sequences and optionals: built with its tensors, the rest kept
    assert identity.refusal is None and identity.type_bindings()
    assert any(t.startswith("seq(") for t in dict(identity.left_out)["V"])
    assert "seq(tensor(float))" in identity.type_constraint_text("V")


def test_every_reason_a_version_cannot_be_built_is_given():
    sequence_map = versions("SequenceMap")[0]  # a graph attribute, sequence types and variadic outputs
    assert sequence_map.refusal.split("; ")[0] == "needs a graph attribute (body)"
    assert "takes sequence types" in sequence_map.refusal and "variadic" not in sequence_map.refusal
    split = versions("Split")[-1]  # a variadic output is built, as many values as a case asks
    assert split.refusal is None and split.outputs[-1].variadic


def test_covered_ops_come_from_the_modules_in_a_fixed_order_each_once():
    ops = covered_ops()
    assert len(ops) == len(set(ops)) and ops == covered_ops()
    modules = [registered.declaring_module(op) for op in ops]
    assert modules == sorted(modules)  # the modules by name, each one's ops together, in its own order
    assert registered.declaring_module("CastLike") == "cast" and registered.declaring_module("Slice") == "slice"
    assert ops.index("QuantizeLinear") + 1 == ops.index("DequantizeLinear")


def test_an_op_is_found_in_the_module_named_after_it_whatever_its_case():
    assert registered.module_named_after("ConstantOfShape") == "constant_of_shape"
    assert for_op("constantofshape") is for_op("ConstantOfShape") and for_op("SLICE").op == "Slice"
    assert for_op("Add").family is not None and for_op("Add") is for_op("Add")  # a family op, built once



def test_a_registered_version_pickles_by_name_and_unpickles_as_the_one_object():
    """Results a worker sends carry their OpVersion: by name, the receiver keeps one object per
    version, not one per result (a run's main process holds 100,000s of results' worth)."""
    import dataclasses
    import pickle

    from conformance.registry import versions

    version = versions("Slice")[-1]
    data = pickle.dumps(version)
    assert pickle.loads(data) is version
    assert len(data) < 200, f"{len(data)} bytes: the schema's fields went along"
    made_here = dataclasses.replace(version, registered=False)  # not from onnx.defs: pickled whole
    again = pickle.loads(pickle.dumps(made_here))
    assert again == version and again is not version
