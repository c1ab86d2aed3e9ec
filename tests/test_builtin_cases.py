"""The built-in cases of every covered op: stated expectations agree with the reference, and the
model of every valid case passes onnx.checker in every materialization mode."""

from functools import cache

import pytest

from conformance import casefile
from conformance.execute import stated_agrees
from conformance.model import MODES, build, checker_problem
from conformance.reference import covered_ops, for_op


@cache
def examples_of(op):
    return casefile.load_examples(op)


@pytest.mark.parametrize("op", covered_ops())
def test_every_op_has_cases_for_every_version(op):
    from conformance.registry import versions

    versions_with_cases = {e.version.since_version for e in examples_of(op)}
    missing = [v.label for v in versions(op) if v.since_version not in versions_with_cases]
    assert not missing, f"{op}: no YAML case applies to {missing}; add cases under cases/"


@pytest.mark.parametrize("op", covered_ops())
def test_stated_expectations_agree_with_the_reference(op):
    disagreements = []
    for example in examples_of(op):
        if example.expect_outputs is None and not example.expect_error:
            continue
        computed = for_op(op).expected(example)
        if example.expect_error:
            if computed.is_valid or computed.invalid.rule != example.expect_error:
                disagreements.append((example.id, example.source, "expects error", example.expect_error))
        elif not stated_agrees(computed, example.expect_outputs):
            disagreements.append((example.id, example.source, "states an output the reference does not give"))
    assert not disagreements, f"{len(disagreements)} stated expectations disagree with the reference: {disagreements[:5]}"


# Where onnx's own shape inference contradicts the text, onnx.checker rejects the model of a valid
# case, which a run reports as an error (not run). Each is listed by op version and the trait of
# the op's reference that picks its cases out: Squeeze-1's inference walks `axes` as if sorted.
CHECKER_CONTRADICTS_TEXT = {("Squeeze", 1): "axes-unsorted",
                            # TopK-1's inference refuses k = 0 ("Invalid value for attribute k"); its text
                            # ("k: Number of top elements to retrieve") gives the empty outputs.
                            ("TopK", 1): "k-zero",
                            # Pad-18 on: shape inference reads a constant `axes` as int64 only ("ParseData
                            # type mismatch for tensor: axes. Expected:int64 Actual:int32"); Tind allows int32.
                            **{("Pad", v): ("axes-int32", ("initializer", "constant")) for v in (18, 19, 21, 23, 24, 25)},
                            # Resize's inference counts a `sizes` graph input of symbolic length as 0 elements
                            # ("Number of elements of input 'sizes' (0) must be same as rank of input 'X'").
                            **{("Resize", v): ("sizes-given", ("input",)) for v in (11, 13, 18, 19)},
                            # OneHot's inference refuses 0-d indices ("Indices tensor must have rank >= 1"); the
                            # text's output is of rank(indices) + 1, a vector for them.
                            **{("OneHot", v): "rank-0-indices" for v in (9, 11, 28)},
                            # Constant-11's sparse_value: onnx.checker refuses a scalar's dims and a dim of 0
                            # ("must have a dense-rank > 0", "dimensions are not positive"); onnx.proto's
                            # SparseTensorProto ("dims: The shape of the underlying dense-tensor") allows both.
                            **{("Constant", v): "sparse-dims-not-positive" for v in (11, 12, 13, 19, 21, 23, 24, 25)},
                            # RMSNormalization-23: Y is of type V, but onnx's inference gives it X's type (T).
                            ("RMSNormalization", 23): "mixed-types",
                            # LinearAttention-27: without past_state, onnx's inference gives present_state
                            # query's type (T) where the schema gives S.
                            ("LinearAttention", 27): "state-type-from-query",
                            # MeanVarianceNormalization: inference through the body, ill-typed for non-float X;
                            # version 13's opset-18 body reads Constant<value_ints = @axes> with no default.
                            **{("MeanVarianceNormalization", v): "checker-refuses" for v in (9, 13)}}


@pytest.mark.parametrize("op", covered_ops())
def test_every_valid_example_builds_a_model_onnx_checker_accepts_in_every_mode(op):
    reference = for_op(op)
    rejected, known = [], []
    for example in examples_of(op):
        expected = reference.expected(example)
        if not expected.is_valid:
            continue
        entry = CHECKER_CONTRADICTS_TEXT.get((op, example.version.since_version))
        trait, modes = (entry, MODES) if entry is None or isinstance(entry, str) else entry
        for mode in MODES:
            built = build(example, reference.output_types(example, expected), mode, reference.data_inputs)
            problem = checker_problem(built.data)
            if trait is not None and mode in modes and reference.traits[trait](example):
                known.append((example.id, mode, problem))
            elif problem:
                rejected.append((example.id, mode, problem))
    assert not rejected, f"{len(rejected)} models onnx.checker rejects: {rejected[:5]}"
    still = [k for k in known if k[2] is None]
    assert not still, f"onnx.checker now accepts {len(still)} models CHECKER_CONTRADICTS_TEXT lists: {still[:3]}"
    assert not any(o == op for o, _ in CHECKER_CONTRADICTS_TEXT) or known, f"no case of {op} shows the listed onnx defect"


def test_model_imports_exactly_the_version_opset_and_lowest_ir():
    example = next(e for e in examples_of("Slice") if e.id.startswith("Slice-11/"))
    expected = for_op("Slice").expected(example)
    model = build(example, for_op("Slice").output_types(example, expected)).model
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 11)]
    assert model.ir_version == 6  # onnx's table: opset 11 came with IR version 6
    assert [i.name for i in model.graph.input][:3] == ["data", "starts", "ends"]


def test_same_types_and_ranks_build_the_same_model_bytes():
    slice13 = [e for e in examples_of("Slice") if e.id.startswith("Slice-13/negative_start/float/int64")
               or e.id.startswith("Slice-13/negative_end/float/int64")]
    models = {build(e, (("float", 2),)).data for e in slice13}
    assert len(slice13) == 2 and len(models) == 1
