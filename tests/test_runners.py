"""Runners: unavailable providers, dtype feeding through OrtValue, backends."""

import re

import pytest

from conformance.errors import UnavailableError, UsageError
from conformance.execute import RunOptions, Staged, run_examples, select_examples, stage
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


def test_unknown_provider_is_a_usage_error_naming_both_spellings():
    # A misspelt name is the user's to fix (exit 2), not a provider missing from this machine (exit 3).
    with pytest.raises(UsageError, match="choose from: cpu, cuda, dml, or onnxruntime's names: CPUExecutionProvider"):
        make_runner("onnxruntime", "tpu")


@pytest.mark.parametrize("spelling", ["CPUExecutionProvider", "CPU", " cpuexecutionprovider"])
def test_onnxruntimes_own_provider_names_are_taken_and_replay_with_the_short_one(spelling):
    # The "not available (available: CPUExecutionProvider, ...)" message and reports use these names.
    runner = make_runner("onnxruntime", spelling)
    assert runner.describe()["provider"] == "CPUExecutionProvider"
    assert runner.replay_options()[:4] == ["--runner", "onnxruntime", "--provider", "cpu"]


@pytest.mark.parametrize("options, message", [
    ({"runner": "reference", "provider": "cuda"}, "--provider cuda chooses how onnxruntime runs; it does not apply to --runner reference"),
    ({"runner": "reference", "optimizations": "off"}, "--optimizations off chooses how onnxruntime runs"),
    ({"backend": "some.module", "provider": "dml"}, "it does not apply to --backend some.module"),
    ({"runner": "reference", "backend": "some.module"}, "--backend and --runner reference name two runners: give one"),
    ({"runner": "tvm"}, "unknown runner 'tvm' (choose from: onnxruntime, reference, openvino, tract)"),
])
def test_an_option_the_chosen_runner_would_ignore_is_refused(options, message):
    # Before, `--runner reference --provider cuda` ran onnx.reference and reported nothing of the ignored option.
    with pytest.raises(UsageError, match=re.escape(message)):
        make_runner(**options)


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


def test_what_numpy_warns_of_inside_onnx_reference_is_not_printed():
    # Clip-6's case-file cases make onnx.reference cast an out-of-range bound (numpy warns of the
    # overflow); the verdicts say what matters, the warning was noise on the user's stderr.
    import warnings

    runner = make_runner("reference", isolate=False)
    examples = select_examples(RunOptions(op="Clip", opset=6, use_hypothesis=False))
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        results = run_examples(examples, runner, RunOptions(op="Clip", opset=6))
    assert [str(w.message) for w in warned] == []
    assert len(results) == len(examples) and {r.outcome for r in results} >= {"pass"}


def test_backend_runner_with_onnxruntime_backend_agrees_with_the_direct_runner():
    direct = outcomes("Slice", 13, make_runner(), dtypes=("int32",))
    via_backend = outcomes("Slice", 13, make_runner(backend="onnxruntime.backend"), dtypes=("int32",))
    assert {k: r.outcome for k, r in direct.items()} == {k: r.outcome for k, r in via_backend.items()}


def test_an_op_version_without_a_kernel_is_unsupported_through_onnxruntime_backend_too():
    # Through its onnx.backend, onnxruntime refuses Clip-6 in double (no kernel) with its
    # NotImplemented exception, where before the backend runner read it as a valid input rejected:
    # 22 noisy failures (the case files alone), where the direct runner says unsupported.
    direct = outcomes("Clip", 6, make_runner(), dtypes=("double",))
    via_backend = outcomes("Clip", 6, make_runner(backend="onnxruntime.backend"), dtypes=("double",))
    assert {k: r.outcome for k, r in direct.items()} == {k: r.outcome for k, r in via_backend.items()}
    assert {r.outcome for r in via_backend.values()} == {"unsupported"}


def test_a_runtime_says_it_does_not_implement_a_case_in_the_ways_runtimes_share():
    import unittest

    from onnx.backend.test.runner import BackendIsNotSupposedToImplementIt

    from conformance.runners.base import classified

    class NotImplemented(Exception):  # onnxruntime's name for a missing kernel
        pass

    for error in (NotImplementedError("no"), unittest.SkipTest("no"), BackendIsNotSupposedToImplementIt("no"), NotImplemented("no")):
        assert (classified(error).unsupported, classified(error).error) == (True, "no"), error
    refused = classified(RuntimeError("bad input\nat line 2"))
    assert (refused.unsupported, refused.error) == (False, "bad input")


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


def test_diff_against_an_onnxruntime_provider_name_means_that_provider_not_a_backend_module():
    from conformance.differential import runner_from_name

    # Before, it was tried as a Python module: "backend 'CUDAExecutionProvider' not available: cannot import".
    import onnxruntime

    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("CUDA is available here")
    with pytest.raises(UnavailableError, match=r"provider 'cuda' \(CUDAExecutionProvider\) not available"):
        runner_from_name("CUDAExecutionProvider", isolate=False, timeout=10)


def test_diff_against_a_name_no_runner_has_says_what_it_could_have_been(conform):
    misspelt = conform("diff", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--against", "referenc")
    assert misspelt.code == 3 and misspelt.stderr.startswith(
        "error: --against referenc is neither a provider (cpu, cuda, dml) nor a runner (onnxruntime, reference, openvino, tract), "
        "and as a backend module: backend 'referenc' not available: cannot import referenc")
    named_a_backend = conform("diff", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--against", "backend:referenc")
    assert named_a_backend.code == 3 and named_a_backend.stderr.startswith("error: backend 'referenc' not available")


def _a_staged_slice_case():
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False, case_ids=("Slice-13/spec_example_1/float/int64",))
    staged = stage(select_examples(options)[0], make_runner(), options)
    assert isinstance(staged, Staged)
    return staged


def test_a_session_runs_through_onnxruntimes_binding_not_the_wrapper_that_retries_on_cpu():
    # The public InferenceSession.run, when a provider fails a run, prints to stdout and runs the
    # case again on CPU: a conformance run must see that failure, so the runner never calls it.
    import onnxruntime

    from conformance.runners.onnxruntime import _Session, session_options

    staged = _a_staged_slice_case()
    inference = onnxruntime.InferenceSession(staged.built.data, session_options(onnxruntime, "on"),
                                             providers=["CPUExecutionProvider"])
    inference.run = lambda *args, **kwargs: pytest.fail("the public wrapper was called")
    outputs = _Session(inference).run(staged.built.feeds)
    expected = staged.expected.readings[0].outputs[0]
    assert len(outputs) == 1 and outputs[0].dtype == expected.dtype and outputs[0].tolist() == expected.tolist()


def test_a_session_without_the_binding_runs_through_the_public_call_naming_every_output():
    from conformance.runners.onnxruntime import _Session

    class PublicOnly:
        """An InferenceSession as a later onnxruntime might shape it: no `_sess`."""

        def __init__(self) -> None:
            self.calls = []

        def get_outputs(self):
            return [type("Output", (), {"name": name})() for name in ("values", "indices")]

        def run(self, names, feeds):
            self.calls.append((names, feeds))
            return ["ran"]

    inference = PublicOnly()
    assert _Session(inference).run({"data": 1}) == ["ran"]
    assert inference.calls == [(["values", "indices"], {"data": 1})]


def test_a_refused_type_does_not_decide_the_verdict_of_the_next_model_of_that_type():
    # The runner used to remember "complex128 is not registered" and refuse every later model with
    # complex128 the same way, without asking: a BitCast from complex128 to bfloat16, invalid (the
    # widths differ) and rejected as such when asked alone, came out unsupported after a
    # complex128-to-complex128 case, so a whole run and its shards gave different verdicts.
    from conformance.compare import PASS, UNSUPPORTED
    from conformance.execute import run_examples

    options = RunOptions(op="BitCast", opset=26, dtypes=("complex128",), use_yaml=False, examples=2)
    drawn = select_examples(options)
    unregistered = [e for e in drawn if e.types.get("T2") == "complex128"][:1]
    invalid = [e for e in drawn if e.types.get("T2") == "bfloat16"][:1]
    assert unregistered and invalid
    alone = run_examples(invalid, make_runner(), options)
    after = run_examples(unregistered + invalid, make_runner(), options)
    assert [r.outcome for r in alone] == [PASS], alone[0].message
    assert [r.outcome for r in after] == [UNSUPPORTED, PASS], [r.message for r in after]
