"""The built-in cases: stated expectations agree with the reference, and valid models pass onnx.checker."""

import pytest

from conformance import casefile
from conformance.compare import arrays_identical
from conformance.execute import _output_rank
from conformance.model import build, checker_problem
from conformance.reference import covered_ops, for_op


def all_examples():
    return [e for op in covered_ops() for e in casefile.load_examples(op)]


EXAMPLES = all_examples()


def test_there_are_examples_for_every_op():
    assert {e.op for e in EXAMPLES} == set(covered_ops())


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.expect_output is not None or e.expect_error], ids=lambda e: e.id)
def test_stated_expectations_agree_with_the_reference(example):
    computed = for_op(example.op).expected(example)
    if example.expect_error:
        assert not computed.is_valid and computed.invalid.rule == example.expect_error
    else:
        assert computed.is_valid
        assert any(arrays_identical(r.outputs[0], example.expect_output) for r in computed.readings)


def test_every_valid_example_builds_a_model_onnx_checker_accepts():
    rejected = []
    for example in EXAMPLES:
        expected = for_op(example.op).expected(example)
        if not expected.is_valid:
            continue
        built = build(example, for_op(example.op).output_dtype(example), _output_rank(example, expected))
        problem = checker_problem(built.data)
        if problem:
            rejected.append((example.id, problem))
    assert not rejected, rejected[:5]


def test_model_imports_exactly_the_version_opset_and_lowest_ir():
    example = next(e for e in EXAMPLES if e.id.startswith("Slice-11/"))
    expected = for_op("Slice").expected(example)
    model = build(example, "float", _output_rank(example, expected)).model
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 11)]
    assert model.ir_version == 6  # onnx's table: opset 11 came with IR version 6
    assert [i.name for i in model.graph.input][:3] == ["data", "starts", "ends"]


def test_same_types_and_ranks_build_the_same_model_bytes():
    slice13 = [e for e in EXAMPLES if e.id.startswith("Slice-13/negative_start/float/int64")
               or e.id.startswith("Slice-13/negative_end/float/int64")]
    models = {build(e, "float", 2).data for e in slice13}
    assert len(slice13) == 2 and len(models) == 1
