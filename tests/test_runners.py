"""Runners: unavailable providers, dtype feeding through OrtValue, backends."""

import pytest

from conformance.errors import UnavailableError
from conformance.execute import RunOptions, run_examples, select_examples
from conformance.runners import make_runner


def outcomes(op, opset, runner, dtypes=()):
    examples = select_examples(RunOptions(op=op, opset=opset, dtypes=dtypes))
    return {r.example.id: r for r in run_examples(examples, runner, RunOptions(op=op))}


def test_cuda_and_dml_say_not_available_and_list_what_is():
    import onnxruntime

    for provider in ("cuda", "dml"):
        if provider == "cuda" and "CUDAExecutionProvider" in onnxruntime.get_available_providers():
            pytest.skip("CUDA is available here")
        with pytest.raises(UnavailableError, match=r"not available \(available: .*CPUExecutionProvider"):
            make_runner("onnxruntime", provider)


def test_unknown_provider_is_refused():
    with pytest.raises(UnavailableError, match="choose from: cpu, cuda, dml"):
        make_runner("onnxruntime", "tpu")


def test_bfloat16_goes_through_ortvalues_and_comes_back_exact():
    results = outcomes("Slice", 13, make_runner(), dtypes=("bfloat16",))
    passed = [r for r in results.values() if r.outcome == "pass" and r.expected.is_valid]
    assert len(passed) > 20
    assert all(r.actual[0].dtype.name == "bfloat16" for r in passed)


def test_int4_constant_of_shape_is_reported_not_skipped():
    results = outcomes("ConstantOfShape", 21, make_runner(), dtypes=("int4",))
    assert results and {r.outcome for r in results.values()} <= {"pass", "unsupported"}
    assert all(r.verdict.message for r in results.values())


def test_onnx_reference_runner_runs_slice():
    results = outcomes("Slice", 13, make_runner("reference"), dtypes=("float",))
    assert results["Slice-13/spec_example_1/float/int64"].outcome == "pass"


def test_backend_runner_with_onnxruntime_backend_agrees_with_the_direct_runner():
    direct = outcomes("Slice", 13, make_runner(), dtypes=("int32",))
    via_backend = outcomes("Slice", 13, make_runner(backend="onnxruntime.backend"), dtypes=("int32",))
    assert {k: r.outcome for k, r in direct.items()} == {k: r.outcome for k, r in via_backend.items()}


def test_backend_that_cannot_be_imported_is_unavailable():
    with pytest.raises(UnavailableError, match="cannot import no_such_module"):
        make_runner(backend="no_such_module")


def test_an_op_version_onnx_reference_does_not_implement_is_unsupported(conform):
    # onnx.reference has no Clip-1 ("No implementation for operator 'Clip' ... version 1"): that is
    # the runtime saying it does not implement the version, not a wrong answer.
    result = conform("run", "--op", "Clip", "--opset", "1", "--runner", "reference", "--no-hypothesis")
    valid = [r for r in result.report["results"] if "invalid" not in r["expected"]]
    assert valid and {r["outcome"] for r in valid} == {"unsupported"} and result.code == 0
    assert all("No implementation for operator" in r["message"] for r in valid)
