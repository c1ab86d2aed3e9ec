"""Static shapes (`--shapes static`), `generate --mode/--shapes`, and the summary notes that say a
run's failures are confined to one input mode or ask for static shapes."""

import json

import numpy as np
import onnx
import pytest
from typer.testing import CliRunner

from conformance import golden
from conformance.cli import app
from conformance.errors import UsageError
from conformance.compare import FAIL, PASS, UNSUPPORTED, Verdict
from conformance.execute import Result, RunOptions, expected_for, replay_command, select_examples, stage
from conformance.model import MODES, SHAPES, build, checker_problem
from conformance.reference import for_op
from conformance.reference.base import Expected
from conformance.report.hints import hint_lines
from conformance.runners.onnx_reference import OnnxReferenceRunner

# A few ops, each with index or bound inputs that a mode embeds, or broadcasting between inputs.
CHECKED = [("Slice", 13, "float"), ("Slice", 10, "int32"), ("Clip", 13, "float"), ("ConstantOfShape", 21, "float"),
           ("Add", 14, "int64"), ("Where", 16, "float")]


def yaml_examples(op: str, opset: int, dtype: str):
    return select_examples(RunOptions(op=op, opset=opset, dtypes=(dtype,), use_hypothesis=False))


def built(example, mode: str = "input", shapes: str = "symbolic"):
    reference = for_op(example.op)
    return build(example, reference.output_types(example, expected_for(example)), mode, reference.data_inputs, shapes)


def dims(value_info: onnx.ValueInfoProto) -> list:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in value_info.type.tensor_type.shape.dim]


@pytest.mark.parametrize("op, opset, dtype", CHECKED)
def test_every_valid_builtin_case_passes_the_checker_in_both_shape_options_and_every_mode(op, opset, dtype):
    checked = 0
    for example in yaml_examples(op, opset, dtype):
        if not expected_for(example).is_valid:
            continue
        for shapes in SHAPES:
            for mode in MODES:
                assert checker_problem(built(example, mode, shapes).data) is None, (example.id, shapes, mode)
                checked += 1
    assert checked >= 6 * 10


def test_static_inputs_have_the_cases_own_dims_and_outputs_stay_symbolic():
    example = next(e for e in yaml_examples("Slice", 13, "float") if e.inputs["data"].ndim == 2)
    static, symbolic = built(example, shapes="static"), built(example)
    for value_info in static.model.graph.input:
        assert dims(value_info) == list(example.inputs[value_info.name].shape)
    for value_info in symbolic.model.graph.input:
        assert all(isinstance(d, str) and d for d in dims(value_info))
        assert len(dims(value_info)) == example.inputs[value_info.name].ndim
    assert [dims(o) for o in static.model.graph.output] == [dims(o) for o in symbolic.model.graph.output]
    assert all(isinstance(d, str) for o in static.model.graph.output for d in dims(o))
    assert static.feeds.keys() == symbolic.feeds.keys()


def test_static_models_differ_by_shape_where_symbolic_ones_are_shared():
    first, second = _two_shapes(yaml_examples("Clip", 13, "float"))
    assert built(first).data == built(second).data
    assert built(first, shapes="static").data != built(second, shapes="static").data
    # The same shapes give the same model: a static engine compiles each shape once.
    assert built(first, shapes="static").data is built(first, shapes="static").data


def _two_shapes(examples) -> tuple:
    """Two examples whose symbolic models are one (same ranks and omitted inputs) but whose inputs' shapes differ."""
    def rank_key(example):
        return tuple((name, None if a is None else (a.dtype.str, a.ndim)) for name, a in example.inputs.items())

    def shape_key(example):
        return tuple(None if a is None else a.shape for a in example.inputs.values())

    for index, first in enumerate(examples):
        for second in examples[index + 1:]:
            if rank_key(first) == rank_key(second) and shape_key(first) != shape_key(second) and first.attributes == second.attributes:
                return first, second
    raise AssertionError("no two cases of one symbolic model and two shapes")


def test_replay_and_extras_name_static_shapes_only_when_chosen():
    example = yaml_examples("Clip", 13, "float")[0]
    runner = OnnxReferenceRunner()
    static = RunOptions(op="Clip", shapes="static")
    assert "--shapes static" in replay_command(example, runner, static)
    assert "--shapes" not in replay_command(example, runner, RunOptions(op="Clip"))
    staged = stage(example, runner, static)
    assert staged.extra == {"shapes": "static"}
    assert all(d.HasField("dim_value") for i in staged.built.model.graph.input for d in i.type.tensor_type.shape.dim)
    assert stage(example, runner, RunOptions(op="Clip")).extra == {}


# ---- the summary notes -----------------------------------------------------------------------

def result(example, outcome: str, mode: str | None = None, message: str = "", actual=(), **extra) -> Result:
    extras = ({"mode": mode} if mode else {}) | extra
    return Result(example, Expected(readings=()), Verdict(outcome, message), actual, extra=extras)


@pytest.fixture(scope="module")
def clip_cases():
    return yaml_examples("Clip", 13, "float")[:6]


def test_failures_all_in_one_mode_are_told_with_what_to_try(clip_cases):
    results = [result(e, FAIL if mode == "input" else PASS, mode, "runtime rejected a valid input: boom")
               for e in clip_cases for mode in MODES]
    assert hint_lines(results) == [f"all {len(clip_cases)} failures are in mode input: the runtime may need constant "
                                   "inputs (try --mode initializer)"]


def test_most_failures_in_one_mode_alone_are_told_beside_the_runtimes_own(clip_cases):
    # The first case fails in every mode (a deviation of the runtime's own); the rest only in constant.
    results = [result(e, FAIL if mode == "constant" or index == 0 else PASS, mode, actual=(np.zeros(1),))
               for index, e in enumerate(clip_cases) for mode in MODES]
    lines = hint_lines(results)
    assert len(lines) == 1 and lines[0].startswith(f"{len(clip_cases) - 1} of {len(clip_cases) + 2} failures are in mode constant alone")
    assert "Constant nodes" in lines[0]


def test_no_mode_note_for_one_mode_for_failures_spread_over_modes_or_for_one_failure(clip_cases):
    one_mode = [result(e, FAIL, "input") for e in clip_cases]
    spread = [result(e, FAIL, mode) for e in clip_cases for mode in MODES]
    single = [result(e, FAIL if (i, mode) == (0, "input") else PASS, mode) for i, e in enumerate(clip_cases) for mode in MODES]
    for results in (one_mode, spread, single):
        assert not [line for line in hint_lines(results) if "mode" in line and "refusal" not in line]


def test_unsupported_cases_confined_to_one_mode_are_told_too(clip_cases):
    results = [result(e, UNSUPPORTED if mode == "input" else PASS, mode, "StridedSlice is typable only if axis is a const")
               for e in clip_cases for mode in MODES]
    assert f"all {len(clip_cases)} unsupported cases are in mode input: the runtime may need constant inputs (try --mode initializer)" \
        in hint_lines(results)


@pytest.mark.parametrize("message, told", [
    ("runtime rejected a valid input: input 'x' has a dynamic shape", True),
    ("runtime rejected a valid input: Symbolic dimension N is not supported", True),
    ("unsupported: Can not compute: undetermined symbol S", True),
    ("runtime rejected a valid input: the node's input 'starts' is not a constant", True),
    ("runtime rejected a valid input: Unsupported data type COMPLEX64", False),
])
def test_refusals_that_ask_for_static_shapes_point_to_the_options(clip_cases, message, told):
    outcome = UNSUPPORTED if message.startswith("unsupported") else FAIL
    results = [result(e, outcome, message=message) for e in clip_cases] + [result(clip_cases[0], PASS)]
    expected = [f"{len(clip_cases)} of {len(clip_cases)} refusals mention dynamic or symbolic shapes or non-constant inputs: "
                "the runtime may need static shapes and constant inputs (try --shapes static and --mode initializer)"]
    assert hint_lines(results) == (expected if told else [])


def test_the_static_note_names_only_the_options_not_tried_and_needs_most_refusals(clip_cases):
    asking = "runtime rejected a valid input: dynamic shapes are not supported"
    static = [result(e, FAIL, "input", asking, shapes="static") for e in clip_cases]
    assert hint_lines(static)[-1].endswith("(try --mode initializer)")
    every_way = [result(e, FAIL, mode, asking, shapes="static") for e in clip_cases for mode in MODES]
    assert not [line for line in hint_lines(every_way) if "refusal" in line]
    # A half or fewer of the refusals asking is no pointer; a wrong answer (outputs) is no refusal.
    half = [result(e, FAIL, message=asking if i % 2 else "wrong") for i, e in enumerate(clip_cases)]
    answered = [result(e, FAIL, message=asking, actual=(np.zeros(1),)) for e in clip_cases]
    assert hint_lines(half) == [] and hint_lines(answered) == []
    # The runtime's whole message counts where the verdict quotes one line of it.
    detailed = [result(e, FAIL, message="Exception from core.cpp:105:", detail="...\nhas dynamic rank\n") for e in clip_cases]
    assert hint_lines(detailed) and "refusals mention" in hint_lines(detailed)[0]


# ---- on the command line, with a static-shape engine ------------------------------------------

CLIP_13 = ("run", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "static_only", "--jobs", "1")


def test_a_static_engine_is_pointed_to_static_shapes_then_to_constant_inputs(conform):
    symbolic = conform(*CLIP_13)
    assert symbolic.code == 1 and symbolic.report["options"]["shapes"] == "symbolic"
    refused = [r for r in symbolic.report["results"] if r["outcome"] == "fail"]
    # The input X has dims; a rank-0 bound has none, and is refused as an input that is not a constant.
    assert refused and all("dynamic shape" in r["message"] or "is not a constant" in r["message"] for r in refused)
    assert any("dynamic shape" in r["message"] for r in refused)
    assert f"note: {len(refused)} of {len(refused)} refusals mention dynamic or symbolic shapes" in symbolic.stdout
    assert "(try --shapes static and --mode initializer)" in symbolic.stdout
    assert [f"note: {note}" for note in symbolic.report["notes"]] == [
        line.strip() for line in symbolic.stdout.splitlines() if line.startswith("note: ")]  # the JSON keeps them

    static = conform(*CLIP_13, "--shapes", "static", "--mode", "all")
    failed = [r for r in static.report["results"] if r["outcome"] == "fail"]
    assert static.report["options"]["shapes"] == "static" and failed
    assert {r["mode"] for r in failed} == {"input"} and all("is not a constant" in r["message"] for r in failed)
    assert f"note: all {len(failed)} failures are in mode input: the runtime may need constant inputs (try --mode initializer)" \
        in static.stdout
    assert all(r["shapes"] == "static" and "--shapes static" in r["replay"] for r in static.report["results"])

    constant = conform(*CLIP_13, "--shapes", "static", "--mode", "initializer")
    assert not [r for r in constant.report["results"] if r["outcome"] == "fail"] and "note:" not in constant.stdout
    assert constant.report["notes"] == []


def test_diff_builds_static_models_and_replays_them(conform, tmp_path):
    report = tmp_path / "diff.json"
    found = conform("diff", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--shapes", "static",
                    "--mode", "initializer", "--against", "static_only", "--jobs", "1", "--report-json", str(report))
    doc = json.loads(report.read_text())
    # Static dims and constant bounds: the static engine compiles every model, and answers as onnxruntime does.
    assert found.code == 0 and doc["options"]["shapes"] == "static" and doc["summary"]["disagreements"] == 0
    assert doc["results"] and all("--shapes static" in r["replay"] for r in doc["results"])


@pytest.mark.parametrize("args, told", [
    (("run", "--op", "Clip", "--shapes", "both"), "--shapes takes symbolic or static, not 'both'"),
    (("diff", "--op", "Clip", "--against", "reference", "--shapes", "fixed"), "--shapes takes symbolic or static, not 'fixed'"),
    (("generate", "--op", "Clip", "--out", "g", "--mode", "all"), "write each mode into its own --out"),
    (("generate", "--op", "Clip", "--out", "g", "--shapes", "both"), "--shapes takes symbolic or static"),
    (("run", "--from", "g", "--shapes", "static"), "--shapes does not apply to --from"),
])
def test_bad_shapes_and_generate_modes_are_usage_errors(tmp_path, monkeypatch, args, told):
    monkeypatch.chdir(tmp_path)
    found = CliRunner().invoke(app, list(args))  # in this process: the error comes before any work
    assert isinstance(found.exception, UsageError) and found.exception.exit_code == 2
    assert told in found.exception.message and not (tmp_path / "g").exists()


# ---- golden tests in a mode and shapes -----------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_generated_tests_record_mode_and_shapes_and_read_back(tmp_path, mode):
    examples = yaml_examples("Clip", 13, "float")
    options = RunOptions(op="Clip", opset=13, dtypes=("float",), use_hypothesis=False, modes=(mode,), shapes="static")
    out = tmp_path / mode
    manifest = golden.generate(examples, golden.GenerateOptions(out, selection=golden.selection(options, False),
                                                                mode=mode, shapes="static"))
    written = [t for t in manifest["tests"] if t["status"].startswith("written")]
    assert written and all(t["mode"] == mode and t["shapes"] == "static" for t in written)
    assert json.loads(golden.selection(options, False))["shapes"] == "static"
    assert "shapes" not in json.loads(golden.selection(RunOptions(op="Clip"), False))  # old folders' selections still match
    model = onnx.load(out / written[0]["name"] / "model.onnx")
    props = {p.key: p.value for p in model.metadata_props}
    assert props.get(golden.SHAPES_KEY) == "static" and props.get(golden.MODE_KEY) == (None if mode == "input" else mode)
    assert all(d.HasField("dim_value") for i in model.graph.input for d in i.type.tensor_type.shape.dim)
    assert [n.op_type for n in model.graph.node][:-1] == (["Constant"] * (len(model.graph.node) - 1))
    if mode == "constant":
        assert len(model.graph.node) > 1
    variant = {"shapes": "static"} | ({} if mode == "input" else {"mode": mode})
    verified = [r for t in written for r in golden.verify_dir(out / t["name"])]
    assert verified and all(r.outcome == PASS and r.extra == variant for r in verified)
    cases, skipped = golden.stored_cases([out])
    assert not skipped and len(cases) == len(written)
    assert {c.example.id for c in cases} == {t["id"] for t in written}  # the ids `run` gives, Constant nodes or not


def test_default_generate_writes_no_variant_metadata(tmp_path):
    example = yaml_examples("Clip", 13, "float")[0]
    manifest = golden.generate([example], golden.GenerateOptions(tmp_path / "g"))
    model = onnx.load(tmp_path / "g" / manifest["tests"][0]["name"] / "model.onnx")
    assert [p.key for p in model.metadata_props] == [golden.CASE_KEY]
    assert manifest["tests"][0]["mode"] == "input" and manifest["tests"][0]["shapes"] == "symbolic"


def test_run_from_a_constant_static_folder_reports_its_variant(conform, tmp_path):
    out = tmp_path / "golden"
    assert conform("generate", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--mode", "constant",
                   "--shapes", "static", "--out", str(out), "--jobs", "1").code == 0
    assert conform("verify", str(out), "--report-json", str(tmp_path / "v.json"), "--jobs", "1").code == 0
    ran = conform("run", "--from", str(out), "--backend", "static_only", "--jobs", "1")
    assert ran.report["results"] and all(r["mode"] == "constant" and r["shapes"] == "static" for r in ran.report["results"])
    assert not [r for r in ran.report["results"] if r["outcome"] == "fail"]  # constant inputs and static shapes: it compiles
