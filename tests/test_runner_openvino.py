"""The OpenVINO runner on real runs: its dtype plumbing, its refusal vocabulary, a known deviation."""

from __future__ import annotations

import builtins
import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("openvino", reason="openvino is not installed (pip install \"conform[openvino]\")")

from conformance.errors import UnavailableError  # noqa: E402
from conformance.execute import RunOptions, run_examples, select_examples, stage  # noqa: E402
from conformance.runners import make_runner  # noqa: E402
from conformance.runners.openvino import VOCABULARY  # noqa: E402


@pytest.fixture(scope="module")
def openvino():
    """One in-process runner for the module: its compiled models are shared by the tests."""
    return make_runner("openvino")


def results(runner, op: str, opset: int, *case_ids: str, dtypes: tuple[str, ...] = (), mode: str = "input"):
    """The case-file cases `case_ids` of one op version (every one when none), run and judged, by id."""
    options = RunOptions(op=op, opset=opset, dtypes=dtypes, case_ids=case_ids, use_hypothesis=False, modes=(mode,))
    examples = select_examples(options)
    return {r.example.id: r for r in run_examples(examples, runner, options)}


def test_describe_names_the_device_and_the_precision_it_compiles_in(openvino):
    import openvino as ov

    assert openvino.describe() == {"name": "openvino", "version": ov.__version__, "device": "CPU",
                                   "inference_precision": "f32"}
    assert openvino.replay_options() == ["--runner", "openvino"]


def test_a_case_it_computes_right_passes(openvino):
    found = results(openvino, "Slice", 13, "Slice-13/spec_example_1/float/int64")
    result = found["Slice-13/spec_example_1/float/int64"]
    assert result.outcome == "pass", result.verdict.message
    np.testing.assert_array_equal(result.actual[0], np.array([[5, 7]], np.float32))


def test_int64_kept_to_its_low_32_bits_is_a_fail_with_the_values_it_gave(openvino):
    # Clip-13 int64 [-2147483649, ...] in [-1, 10]: OpenVINO clips the low 32 bits (2147483647) to 10.
    result = results(openvino, "Clip", 13, "Clip-13/int64_below_int32_min/int64")["Clip-13/int64_below_int32_min/int64"]
    assert result.outcome == "fail"
    assert result.actual[0].dtype == np.int64
    assert "expected -1, got 10" in result.verdict.message


@pytest.mark.parametrize("op, opset, dtype", [("Slice", 13, "complex64"), ("ConstantOfShape", 21, "float8e4m3fnuz")])
def test_a_dtype_its_python_api_cannot_carry_is_unsupported_without_asking_it(openvino, op, opset, dtype):
    found = results(openvino, op, opset, dtypes=(dtype,))
    assert found and {r.outcome for r in found.values()} == {"unsupported"}
    assert all(r.verdict.message.endswith(f"openvino's Python API cannot carry {dtype}") for r in found.values())


def test_bfloat16_and_4_bit_values_go_in_and_come_back_exact(openvino):
    bf16 = results(openvino, "Slice", 13, "Slice-13/omitted_steps/bfloat16/int64")["Slice-13/omitted_steps/bfloat16/int64"]
    assert bf16.outcome == "pass" and bf16.actual[0].dtype.name == "bfloat16"
    # ConstantOfShape-21 int4 [2, 3]: six int4 elements come back, one a value as ml_dtypes holds
    # them (not three bytes of packed pairs), whatever their values.
    int4 = results(openvino, "ConstantOfShape", 21, "ConstantOfShape-21/rank2/int4", mode="initializer")
    actual = int4["ConstantOfShape-21/rank2/int4"].actual[0]
    assert (actual.dtype.name, actual.shape) == ("int4", (2, 3))


def test_a_rank_0_output_stays_rank_0(openvino):
    found = results(openvino, "ConstantOfShape", 9, "ConstantOfShape-9/empty_shape_gives_scalar/float", mode="initializer")
    result = found["ConstantOfShape-9/empty_shape_gives_scalar/float"]
    assert result.outcome == "pass", result.verdict.message
    assert result.actual[0].shape == ()


def test_strings_are_carried_and_run():
    # In a worker process: OpenVINO corrupts its heap on a second string run (see the runner).
    isolated = make_runner("openvino", isolate=True)
    found = results(isolated, "Slice", 13, "Slice-13/omitted_steps/string/int64")
    result = found["Slice-13/omitted_steps/string/int64"]
    assert result.outcome == "pass", result.verdict.message
    assert result.actual[0].dtype == object and all(isinstance(v, str) for v in result.actual[0].flat)


def refusal(runner, op: str, opset: int, case_id: str, mode: str = "input"):
    """What the runner answers for one case-file case, as a RunOutput."""
    options = RunOptions(op=op, opset=opset, case_ids=(case_id,), use_hypothesis=False, modes=(mode,))
    staged = stage(select_examples(options)[0], runner, options, mode)
    return runner.run(staged.built)


@pytest.mark.parametrize("op, opset, case_id, mode, kind, outcome", [
    # "Unsupported data type UINT2 expected: ...": its ONNX frontend reads no uint2.
    ("ConstantOfShape", 25, "ConstantOfShape-25/rank2/uint2", "initializer", "no_kernel", "unsupported"),
    # "CPU plug-in doesn't support Broadcast operation with dynamic rank": the shape fed at run time.
    ("ConstantOfShape", 21, "ConstantOfShape-21/rank2/float", "input", "unsupported", "unsupported"),
    # "Check 'is_axis_valid(axis, r)' failed": an axis out of range, rejected as the text asks.
    ("Slice", 10, "Slice-10/axis_above_range/float/int32", "input", "invalid", "pass"),
])
def test_a_real_refusal_of_each_kind_is_classified_so(openvino, op, opset, case_id, mode, kind, outcome):
    answer = refusal(openvino, op, opset, case_id, mode)
    assert answer.error and not answer.outputs
    kinds = {"no_kernel": answer.no_kernel, "unsupported": answer.unsupported and not answer.no_kernel,
             "invalid": answer.invalid and not answer.unsupported}
    assert [name for name, said in kinds.items() if said] == [kind], answer
    found = results(openvino, op, opset, case_id, mode=mode)
    assert found[case_id].outcome == outcome, found[case_id].verdict.message


@pytest.mark.parametrize("message, kind", [
    ("Exception from src/inference/src/cpp/core.cpp:105:\nFrontEnd API failed with OpConversionFailure:\n"
     "Model wasn't fully converted.\nSummary:\n-- No conversion rule found for operations: FooBar-13", "no_kernel"),
    ("Exception from src/plugins/intel_cpu/src/node.cpp:823:\nunsupported src_prc: string", "no_kernel"),
    ("CPU plugin does not support string for use with oneDNN.", "no_kernel"),
    ("Exception from src/plugins/intel_cpu/src/node.cpp:1142:\nNonZero node with name 'Y.0' doesn't support string "
     "precision on 0 port", "no_kernel"),
    ("Exception from src/inference/src/cpp/core.cpp:105:\nFrontEnd API failed with OpConversionFailure:\nModel wasn't "
     "fully converted. Failed operations detailed log:\n-- TopK-11 with a message:\nWhile validating ONNX node "
     "'<Node(TopK): Values, Indices>': Exception from src/core/src/partial_shape.cpp:261:\nto_shape was called on a "
     "dynamic shape.", "unsupported"),
    ("Exception from src/inference/src/dev/plugin.cpp:54:\nCheck 'proposalsDims[1] == 4' failed at "
     "src/plugins/intel_cpu/src/nodes/roi_align.cpp:785:\nROIAlign node with name 'Y' has invalid shape on 1st input: "
     "[18446744073709551615,18446744073709551615]", "unsupported"),
    ("Check 'boxes_dims[2] == m_coord_num' failed at src/plugins/intel_cpu/src/nodes/non_max_suppression.cpp:116:\n"
     "NonMaxSuppression node with name 'selected_indices' has unsupported 'boxes' input 3rd dimension size: "
     "18446744073709551615", "unsupported"),
    ("While validating ONNX node '<Node(RotaryEmbedding): Y>':\ncos_cache must have static rank >= 2 and a static last "
     "dimension, got: [?,?]", "unsupported"),
    ("-- AffineGrid-20 with a message:\nWhile validating ONNX node '<Node(AffineGrid): grid>': Exception from "
     "src/core/src/dimension.cpp:208:\nCannot get length of dynamic dimension", "unsupported"),
    ("-- GlobalLpPool-1 with a message:\nFrontEnd API failed with GeneralFailure:\nFirst dimension of input data must be "
     "static", "unsupported"),
])
def test_its_refusals_for_what_no_covered_case_provokes_are_sorted_too(message, kind):
    assert VOCABULARY.says(kind, message)
    assert [other for other in ("no_kernel", "unsupported", "invalid") if other != kind and VOCABULARY.says(other, message)] == []


def test_an_input_its_frontend_leaves_out_is_not_fed(openvino):
    # Resize-11's roi, a graph input that only tf_crop_and_resize reads: OpenVINO's model has no such
    # port, and asking for one fails ("Port for tensor name roi was not found").
    found = results(openvino, "Resize", 11, "Resize-11/linear_version_11/float/float", dtypes=("float",))
    assert found["Resize-11/linear_version_11/float/float"].outcome == "pass", found


def test_a_valid_input_it_mishandles_is_no_refusal_of_any_kind():
    # Clip-6 with a NaN min: its frontend checks min <= max; the text allows a NaN bound.
    message = ("Exception from src/inference/src/cpp/core.cpp:105:\nFrontEnd API failed with OpConversionFailure:\n"
               "While validating ONNX node '<Node(Clip): y>': Check 'm_min <= m_max' failed at src/core/src/op/clamp.cpp:119:\n"
               "Attribute 'min' must be less or equal than 'max'. Got: nan and 1")
    assert [kind for kind in ("no_kernel", "unsupported", "invalid") if VOCABULARY.says(kind, message)] == []


def test_without_openvino_it_says_what_to_install(monkeypatch):
    real_import = builtins.__import__

    def no_openvino(name, *args, **kwargs):
        if name == "openvino" or name.startswith("openvino."):
            raise ImportError("No module named 'openvino'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_openvino)
    with pytest.raises(UnavailableError, match=r"runner 'openvino' not available: openvino is not installed; "
                                               r"to install it: pip install \"conform\[openvino\]\""):
        make_runner("openvino")


def test_a_run_keeps_conforms_model_defaults_which_openvino_compiles(conform):
    # OpenVINO declares no needs: symbolic dims and index inputs fed at run time test its dynamic paths too.
    found = conform("run", "--op", "Slice", "--opset", "13", "--runner", "openvino", "--no-hypothesis", "--dtype", "float")
    options, summary = found.report["options"], found.report["summary"]
    assert (options["modes"], options["shapes"]) == (["input"], "symbolic") and "runner_defaults" not in options
    assert summary["pass"] * 2 > summary["total"], summary
    assert not any("--mode" in r["replay"] or "--shapes" in r["replay"] for r in found.report["results"])
    assert "note: openvino:" not in found.stderr and "warning:" not in found.stdout


# A Cast to the input's own type, one infer request run on inputs of changing dims: OpenVINO's API
# alone. The finding (docs/findings.md): the reused request answers from the freed input of the
# inference before, and the heap is corrupted (glibc aborts). Each script prints WRONG per wrong
# answer and "done" at the end.
SAME_TYPE_CAST = """
import sys
import numpy as np
import openvino as ov
from onnx import TensorProto, helper

dims = [f"d{i}" for i in range(4)]
graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.UINT8)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.UINT8, dims)],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, dims)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]).SerializeToString()
core = ov.Core()
rng = np.random.default_rng(0)
for _ in range(200):
    compiled = core.compile_model(core.read_model(model, b""), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    for _ in range(3):
        if sys.argv[1] == "fresh":
            request = compiled.create_infer_request()
        x = rng.integers(0, 255, size=rng.integers(1, 4, size=4), dtype=np.uint8)
        request.infer({"x": ov.Tensor(x.copy())})
        if not np.array_equal(request.get_output_tensor(0).data, x):
            print("WRONG", flush=True)
print("done")
"""


def _same_type_casts(how: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SAME_TYPE_CAST, how], capture_output=True, text=True, timeout=300)


def test_a_reused_infer_request_answers_a_same_type_cast_from_freed_memory_and_a_fresh_one_does_not():
    reused = _same_type_casts("reuse")
    assert "WRONG" in reused.stdout or reused.returncode != 0, (
        "OpenVINO no longer deviates on a reused request: the finding and the runner's request per case may go; "
        f"{reused.stdout[-300:]}{reused.stderr[-300:]}")
    fresh = _same_type_casts("fresh")
    assert fresh.returncode == 0 and "WRONG" not in fresh.stdout and "done" in fresh.stdout, fresh.stdout[-300:] + fresh.stderr[-300:]


def test_the_runner_gives_same_type_casts_of_changing_dims_right_after_other_models():
    """What the runner does for each case (a request of its own) keeps the answers right and the
    process alive: every same-type Cast of Cast-19 at --seed 0 after every other binding's cases
    (its case-file cases and 3 hypothesis cases a binding, dims changing from one to the next)."""
    run = subprocess.run([sys.executable, "-m", "conformance", "run", "--op", "Cast", "--opset", "19", "--runner", "openvino",
                          "--jobs", "1", "--no-isolation", "--examples", "3", "--report-json", "-"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode in (0, 1), run.stderr[-500:]  # 1: OpenVINO's other deviations; a crash would end it
    report = json.loads(run.stdout)
    # Of the types OpenVINO carries as they are (its 64-bit and double plumbing is a cause of its own).
    carried = {"uint8", "int8", "uint16", "int16", "bool", "float"}
    same_type = [r for r in report["results"] if len(set(r["id"].split("/")[-2:])) == 1 and r["id"].split("/")[-1] in carried]
    assert not [r["id"] for r in same_type if r["outcome"] not in ("pass", "unsupported")]
    assert report["complete"] and report["summary"]["crash"] == 0


# float16 Mul with symbolic dims, one compiled model: OpenVINO's API alone. The finding
# (docs/findings.md): once the compiled model has refused shapes that do not broadcast, it refuses
# valid ones too. Prints each answer's values or "REFUSED".
REFUSAL_STICKS = """
import numpy as np
import openvino as ov
from onnx import TensorProto, helper

graph = helper.make_graph([helper.make_node("Mul", ["A", "B"], ["C"])], "g",
                          [helper.make_tensor_value_info("A", TensorProto.FLOAT16, ["a"]),
                           helper.make_tensor_value_info("B", TensorProto.FLOAT16, ["b"])],
                          [helper.make_tensor_value_info("C", TensorProto.FLOAT16, ["c"])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
core = ov.Core()
compiled = core.compile_model(core.read_model(model, b""), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
for a, b in [([1], [2]), ([], [1, 2]), ([2], [1, 2, 3])]:
    request = compiled.create_infer_request()
    try:
        request.infer({"A": ov.Tensor(np.array(a, np.float16)), "B": ov.Tensor(np.array(b, np.float16))})
        print(request.get_output_tensor(0).data.tolist())
    except RuntimeError:
        print("REFUSED")
"""


def test_a_compiled_model_that_refused_shapes_refuses_valid_ones_after():
    run = subprocess.run([sys.executable, "-c", REFUSAL_STICKS], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
    assert run.stdout.split("\n")[:2] == ["[2.0]", "REFUSED"], run.stdout  # [0] x [2] does not broadcast
    assert run.stdout.split("\n")[2] == "REFUSED", (
        "OpenVINO now answers [2] x [1, 2, 3] after a refusal: the finding and the runner's fresh model "
        f"after a refusal may go; {run.stdout}")


def test_the_runner_answers_a_valid_case_right_after_its_model_refused_another():
    """Mul-13 float16 at --seed 1, one compiled model: hypothesis-0005 ([1] x [1]) runs, 0006 ([0]
    x [2]) is refused, as the text asks, and 0017 ([1] x [3]) after it is judged on its own."""
    options = RunOptions(op="Mul", opset=13, dtypes=("float16",), seed=1)
    wanted = ("Mul-13/hypothesis-0005/float16", "Mul-13/hypothesis-0006/float16", "Mul-13/hypothesis-0017/float16")
    examples = [e for e in select_examples(options) if e.id in wanted]
    assert [e.id for e in examples] == list(wanted)
    found = {r.example.id: r for r in run_examples(examples, make_runner("openvino"), options)}
    assert [found[w].outcome for w in wanted] == ["pass"] * 3, [found[w].verdict.message for w in wanted]
