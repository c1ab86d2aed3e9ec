"""Golden data: generate -> verify round trips, byte-for-byte determinism, atomic writes, and real
clients (onnx's loader and runner, onnxruntime.backend) reading what conform writes."""

import dataclasses
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from conformance import golden
from conformance.execute import YAML_CHUNK, RunOptions, examples_of, plan, select_examples
from conformance.values import describe

sys.path.insert(0, str(Path(__file__).parent))
import onnx_node_tests  # noqa: E402
from conftest import Invoked, one_and_two_jobs_meeting_hangs, without_timings  # noqa: E402


def generated_dir(record: dict) -> str:
    """The directory of the generated golden test a result record comes from (its case is the
    case's own name, as `run` gives it)."""
    return golden.test_name_of_id(record["id"])


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("op", ["Clip", "ConstantOfShape", "Slice"])
def test_generate_then_verify_agrees_for_every_op(conform, tmp_path, op):
    out = tmp_path / "golden"
    assert conform("generate", "--op", op, "--examples", "2", "--out", str(out)).code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    written = [t for t in manifest["tests"] if t["status"].startswith("written")]
    assert written and all((out / t["name"] / "model.onnx").is_file() for t in written)
    result = conform("verify", str(out), "--report-json", str(tmp_path / "v.json"))
    assert result.code == 0, result.stdout
    assert json.loads((tmp_path / "v.json").read_text())["summary"]["pass"] == len(written)


def test_one_changed_byte_makes_verify_fail_and_name_the_test(conform, tmp_path):
    out = tmp_path / "golden"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(out))
    victim = out / "test_slice_13_negative_start_float_int64" / "test_data_set_0" / "output_0.pb"
    data = bytearray(victim.read_bytes())
    data[-1] ^= 0x01  # raw_data is the last field: this flips one bit of the last stored value
    victim.write_bytes(bytes(data))
    result = conform("verify", str(out), "--report-json", str(tmp_path / "v.json"))
    assert result.code == 1
    failed = [r for r in json.loads((tmp_path / "v.json").read_text())["results"] if r["outcome"] == "fail"]
    assert [generated_dir(r) for r in failed] == ["test_slice_13_negative_start_float_int64"]
    assert "test_slice_13_negative_start_float_int64" in result.stdout


def test_same_seed_and_options_write_byte_identical_files(conform, tmp_path):
    args = ("generate", "--op", "Clip", "--opset", "13", "--examples", "3", "--seed", "5")
    conform(*args, "--out", str(tmp_path / "a"))
    conform(*args, "--out", str(tmp_path / "b"))
    assert files_of(tmp_path / "a") == files_of(tmp_path / "b")


def test_existing_tests_are_replaced_only_with_force_and_nothing_else_is_touched(conform, tmp_path):
    out = tmp_path / "golden"
    args = ("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(out))
    assert conform(*args).code == 0
    mine = out / "test_mine" / "model.onnx"
    mine.parent.mkdir()
    mine.write_bytes(b"not conform's")
    refused = conform(*args)
    assert refused.code == 2 and "--force" in refused.stderr and "Traceback" not in refused.stderr
    assert conform(*args, "--force").code == 0
    assert mine.read_bytes() == b"not conform's"
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_invalid_and_ambiguous_cases_are_listed_not_written(conform, tmp_path):
    out = tmp_path / "golden"
    conform("generate", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--out", str(out))
    tests = {t["id"]: t for t in json.loads((out / "manifest.json").read_text())["tests"]}
    invalid = tests["Clip-13/min_not_scalar/float"]
    assert invalid["status"].startswith("skipped: invalid input (bound-not-scalar)")
    assert not (out / invalid["name"]).exists()
    ambiguous = tests["Clip-13/infinite_inputs_without_bounds/float"]
    assert ambiguous["status"].startswith("skipped: ambiguous") and not (out / ambiguous["name"]).exists()
    conform("generate", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--include-ambiguous", "--force", "--out", str(out))
    assert (out / ambiguous["name"] / "model.onnx").is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"conform", "hypothesis", "onnx", "numpy"} <= set(manifest["tool"])
    written = next(t for t in manifest["tests"] if t["status"] == "written")
    assert len(written["hash"]) == 64 and written["source"].startswith("yaml:")


def test_interrupted_generation_leaves_no_half_written_test(tmp_path, monkeypatch):
    examples = select_examples(RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False))
    calls = {"n": 0}
    real = golden._tensor_bytes

    def dies_on_the_tenth(array, name):
        calls["n"] += 1
        if calls["n"] == 10:
            raise KeyboardInterrupt
        return real(array, name)

    monkeypatch.setattr(golden, "_tensor_bytes", dies_on_the_tenth)
    manifest = golden.generate(examples, golden.GenerateOptions(tmp_path))
    tests = [p for p in tmp_path.iterdir() if p.name != "manifest.json"]
    assert tests and all(not p.name.startswith(".") for p in tests)
    for test in tests:
        assert (test / "model.onnx").is_file() and (test / "test_data_set_0" / "output_0.pb").is_file()
    assert not manifest["complete"] and json.loads((tmp_path / "manifest.json").read_text()) == manifest
    assert {t["name"] for t in manifest["tests"] if t["status"] == "written"} == {p.name for p in tests}


@pytest.mark.parametrize("replacing", [False, True])
def test_a_test_renamed_into_place_just_before_the_interruption_is_in_the_manifest(tmp_path, monkeypatch, replacing):
    # The signal can come after a test's directory is renamed into place and before it is recorded:
    # the manifest then lists every test on disk as written, that one included (seen in CI).
    examples = select_examples(RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False))[:6]
    if replacing:
        golden.generate(examples, golden.GenerateOptions(tmp_path))
        examples = [dataclasses.replace(e, inputs={**e.inputs, "data": e.inputs["data"] + 1}) for e in examples]
    writes = {"n": 0}
    real = golden._write_test_dir

    def interrupted_once_written(out, name, files):
        real(out, name, files)
        writes["n"] += 1
        if writes["n"] == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(golden, "_write_test_dir", interrupted_once_written)
    manifest = golden.generate(examples, golden.GenerateOptions(tmp_path, force=replacing))
    written = [t for t in manifest.this_run if t["status"] == "written"]  # the manifest lists the first run's too
    assert not manifest["complete"] and len(written) == writes["n"] == 3
    if not replacing:
        assert {t["name"] for t in written} == {p.name for p in tmp_path.iterdir() if p.name.startswith("test_")}
    for entry in written:  # each as the manifest says, the interrupted one too
        on_disk = {str(f.relative_to(tmp_path / entry["name"])): f.read_bytes()
                   for f in (tmp_path / entry["name"]).rglob("*") if f.is_file()}
        assert golden.content_hash(on_disk) == entry["hash"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("interrupted_rename", [1, 2])
def test_an_interruption_between_the_renames_of_a_replaced_test_keeps_the_old_one(tmp_path, monkeypatch, interrupted_rename):
    # Replacing a test moves the old directory aside, then the new one in: stopped after the first
    # rename, the old one goes back; stopped at the first, it never moved. No temporary is left.
    examples = select_examples(RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False))[:3]
    golden.generate(examples, golden.GenerateOptions(tmp_path))
    before = files_of(tmp_path)
    renames = {"n": 0}
    real = golden.os.replace

    def stopped(source, target):
        renames["n"] += 1
        # After the manifest saying the run is under way, in the second test: 1 moves the old aside, 2 the new in.
        if renames["n"] == 3 + interrupted_rename:
            raise KeyboardInterrupt
        return real(source, target)

    monkeypatch.setattr(golden.os, "replace", stopped)
    changed = [dataclasses.replace(e, inputs={**e.inputs, "data": e.inputs["data"] + 1}) for e in examples]
    manifest = golden.generate(changed, golden.GenerateOptions(tmp_path, force=True))
    monkeypatch.undo()
    assert not manifest["complete"] and len(manifest.this_run) == 1 and len(manifest["tests"]) == 3
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    after = files_of(tmp_path)
    second = golden.test_name(examples[1])
    assert {k: v for k, v in after.items() if k.startswith(second)} == {k: v for k, v in before.items() if k.startswith(second)}
    assert set(after) == set(before)


def test_a_signal_during_generate_is_exit_130_with_a_manifest_of_what_was_written(tmp_path):
    out = tmp_path / "golden"
    process = subprocess.Popen([sys.executable, "-m", "conformance", "generate", "--op", "Slice", "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out.is_dir() and len(list(out.iterdir())) >= 50) and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted: the manifest lists the" in stderr and "--force finishes the job" in stderr
    manifest = json.loads((out / "manifest.json").read_text())
    written = {t["name"] for t in manifest["tests"] if t["status"] == "written"}
    assert not manifest["complete"] and written == {p.name for p in out.iterdir() if p.name.startswith("test_")}
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("op, opset, dtype", [("ConstantOfShape", 25, "int2"), ("ConstantOfShape", 24, "float8e8m0"),
                                              ("ConstantOfShape", 21, "int4"), ("ConstantOfShape", 20, "bfloat16"),
                                              ("ConstantOfShape", 23, "float4e2m1"), ("Slice", 13, "string")])
def test_every_dtype_is_stored_as_numpy_helper_stores_it(conform, tmp_path, op, opset, dtype):
    out = tmp_path / "golden"
    conform("generate", "--op", op, "--opset", str(opset), "--dtype", dtype, "--examples", "2", "--out", str(out))
    outputs = list(out.glob("*/test_data_set_0/output_0.pb"))
    assert outputs
    for path in outputs:
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        array = numpy_helper.to_array(tensor)
        assert tensor.data_type == onnx.TensorProto.DataType.Value(dtype.upper())
        assert numpy_helper.from_array(array, tensor.name).SerializeToString(deterministic=True) == path.read_bytes()


def test_verify_names_each_unreadable_test_fails_for_it_and_checks_the_rest(conform, tmp_path):
    # A corrupt file stopped verify at the first such test with exit 2: the rest went unchecked,
    # and a second corrupt test was found only after the first was mended.
    out = tmp_path / "golden"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(out))
    whole = conform("verify", str(out), "--report-json", str(tmp_path / "whole.json"))
    every = {generated_dir(r) for r in json.loads((tmp_path / "whole.json").read_text())["results"]}
    corrupt_input = out / "test_slice_13_negative_start_float_int64" / "test_data_set_0" / "input_0.pb"
    corrupt_input.write_bytes(b"\xff\xff\xff garbage")
    corrupt_model = out / "test_slice_13_backward_with_stride_float_int32" / "model.onnx"
    corrupt_model.write_bytes(b"\x00junk")
    result = conform("verify", str(out), "--report-json", str(tmp_path / "v.json"))
    report = json.loads((tmp_path / "v.json").read_text())
    assert whole.code == 0 and result.code == 1 and "Traceback" not in result.stderr + result.stdout
    assert f"unreadable: {corrupt_input}: not a readable TensorProto" in result.stdout
    assert f"unreadable: {corrupt_model}: not a readable model" in result.stdout
    assert [(u["path"], u["reason"].split(":")[0]) for u in report["unreadable"]] == [  # in the order of the paths
        (str(corrupt_model.parent), str(corrupt_model)), (str(corrupt_input.parents[1]), str(corrupt_input))]
    assert {generated_dir(r) for r in report["results"]} == every - {"test_slice_13_negative_start_float_int64",
                                                             "test_slice_13_backward_with_stride_float_int32"}
    alone = conform("verify", str(corrupt_model.parent))
    assert alone.code == 1 and "unreadable:" in alone.stdout and "nothing to verify" not in alone.stderr
    assert conform("verify", str(tmp_path / "nowhere")).code == 2


def test_a_model_that_is_not_a_single_supported_node_is_skipped_not_failed(conform, tmp_path):
    conform("generate", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(tmp_path / "golden"))
    folder = tmp_path / "golden" / "test_no_such_op"
    (folder / "test_data_set_0").mkdir(parents=True)
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
    graph = onnx.helper.make_graph([onnx.helper.make_node("NoSuchOp", ["x"], ["y"])], "g", [x],
                                   [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])])
    onnx.save(onnx.helper.make_model(graph), folder / "model.onnx")
    (folder / "test_data_set_0" / "input_0.pb").write_bytes(numpy_helper.from_array(np.zeros(2, np.float32)).SerializeToString())
    result = conform("verify", str(tmp_path / "golden"))
    assert result.code == 0 and "skipped: not a single supported node" in result.stdout
    alone = conform("verify", str(folder))
    assert alone.code == 2 and "nothing to verify under" in alone.stderr and "not a single supported node" in alone.stderr


def test_verify_agrees_with_onnx_own_node_tests(conform, tmp_path):
    exported = onnx_node_tests.export(tmp_path / "node", onnx_node_tests.FEATURE_OPS)
    assert len(exported) >= 20
    result = conform("verify", str(tmp_path / "node"), "--report-json", str(tmp_path / "v.json"))
    report = json.loads((tmp_path / "v.json").read_text())
    assert result.code == 0, result.stdout
    checked = {r["case"] for r in report["results"]}
    assert {"test_slice_neg_steps", "test_clip_min_greater_than_max", "test_constantofshape_int_shape_zero"} <= checked
    assert all(s["reason"] == "skipped: not a single supported node" and s["path"].endswith("_expanded") for s in report["skipped"])


def test_golden_data_is_consumed_by_onnx_loader_and_runner_like_conform_run_says(conform, tmp_path):
    from onnx.backend.test.loader import load_model_tests
    from onnx.backend.test.runner import Runner
    import onnxruntime.backend as backend

    common = ("--op", "Slice", "--opset", "13", "--dtype", "float", "--dtype", "int64", "--examples", "4")
    # onnx 1.23's loader answers kind="node" from its own in-memory cases; any other kind reads data_dir/<kind>.
    conform("generate", *common, "--out", str(tmp_path / "data" / "conform"))
    run = conform("run", *common)
    by_name = by_test_name(run.report)
    cases = load_model_tests(data_dir=str(tmp_path / "data"), kind="conform")
    assert len(cases) > 50
    agree = 0
    for case in cases:
        model = onnx.load(Path(case.model_dir) / "model.onnx")
        data = Path(case.model_dir) / "test_data_set_0"
        load = lambda p: numpy_helper.to_array(onnx.load_tensor(str(p)))
        inputs = [load(p) for p in sorted(data.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
        expected = [load(p) for p in sorted(data.glob("output_*.pb"))]
        outputs = backend.prepare(model, "CPU").run(inputs)
        try:
            Runner.assert_similar_outputs(expected, list(outputs), rtol=case.rtol, atol=case.atol, model_dir=case.model_dir)
            onnx_says = "pass"
        except AssertionError:
            onnx_says = "fail"
        assert onnx_says == by_name[case.name], case.name
        agree += 1
    assert agree == len(cases) and "fail" in by_name.values()


# ---- conform run --from: golden tests run as stored -----------------------------------------

SLICE_SMALL = ("--op", "Slice", "--opset", "13", "--dtype", "float", "--dtype", "int64", "--examples", "4")


def by_test_name(report: dict) -> dict[str, str]:
    return {golden.test_name_of_id(r["id"]): r["outcome"] for r in report["results"]}


@pytest.mark.parametrize("backend", [(), ("--backend", "wrong_slice")])
def test_run_from_gives_the_verdicts_of_the_generated_run(conform, tmp_path, backend):
    out = tmp_path / "golden"
    conform("generate", *SLICE_SMALL, "--out", str(out))
    generated = by_test_name(conform("run", *SLICE_SMALL, *backend).report)
    stored = conform("run", "--from", str(out), *backend, "--report-json", str(tmp_path / "from.json"))
    from_golden = {generated_dir(r): r["outcome"] for r in json.loads((tmp_path / "from.json").read_text())["results"]}
    written = [t["name"] for t in json.loads((out / "manifest.json").read_text())["tests"] if t["status"].startswith("written")]
    assert sorted(from_golden) == sorted(written)
    assert {name: generated[name] for name in written} == from_golden
    if backend:  # the planted bug is caught from golden data as from generated cases
        assert "fail" in from_golden.values() and stored.code == 1
    assert "pass" in from_golden.values()


def test_run_from_holds_the_runtime_to_the_stored_output(conform, tmp_path):
    out = tmp_path / "golden"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(out))
    test = out / "test_slice_13_negative_start_float_int64"
    stored = numpy_helper.to_array(onnx.load_tensor(str(test / "test_data_set_0" / "output_0.pb")))
    # A second data set whose stored output is wrong: the runtime is held to it and "fails".
    second = test / "test_data_set_1"
    second.mkdir()
    for pb in (test / "test_data_set_0").glob("input_*.pb"):
        (second / pb.name).write_bytes(pb.read_bytes())
    wrong = stored.copy()
    wrong.reshape(-1)[0] += 1
    (second / "output_0.pb").write_bytes(numpy_helper.from_array(wrong, "output").SerializeToString())
    result = conform("run", "--from", str(test), "--report-json", str(tmp_path / "r.json"))
    outcomes = {r["case"]: r for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    # named as `run` names the case it was written from; the second data set after it
    assert outcomes["negative_start"]["outcome"] == "pass"
    assert outcomes["negative_start.set1"]["outcome"] == "fail" and result.code == 1
    assert f"--from {test} --case Slice-13/negative_start.set1/float/int64" in outcomes["negative_start.set1"]["replay"]
    # The panel says the expectation is the stored output, and that conform's reference disagrees with it.
    [stored_reading] = outcomes["negative_start"]["expected"]["readings"]
    [wrong_reading] = outcomes["negative_start.set1"]["expected"]["readings"]
    assert stored_reading["label"] == "stored in the golden test"
    assert wrong_reading["label"] == f"stored in the golden test; conform's reference gives {describe(stored)}"
    assert f"expected (stored in the golden test; conform's reference gives {describe(stored)}): {describe(wrong)}" in result.stdout
    verified = conform("verify", str(test))
    assert verified.code == 1 and ".set1" in verified.stdout  # verify checks every data set too


def test_run_from_runs_onnx_own_node_tests_and_skips_what_is_not_a_single_node(conform, tmp_path):
    onnx_node_tests.export(tmp_path / "node", onnx_node_tests.FEATURE_OPS)
    result = conform("run", "--from", str(tmp_path / "node"), "--report-json", str(tmp_path / "r.json"))
    report = json.loads((tmp_path / "r.json").read_text())
    outcomes = {r["case"]: r["outcome"] for r in report["results"]}
    assert {"test_slice_neg_steps", "test_clip_min_greater_than_max", "test_constantofshape_int_shape_zero"} <= set(outcomes)
    assert report["skipped"] and all(s["path"].endswith("_expanded") for s in report["skipped"])
    assert result.code == (1 if "fail" in outcomes.values() else 0)
    assert report["seed"] is None and report["options"]["from"] == [str(tmp_path / "node")]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_run_from_progress_counts_every_stored_test_run_or_skipped(conform, conform_on_a_terminal, tmp_path, jobs):
    out, node = tmp_path / "golden", tmp_path / "node"
    conform("generate", "--op", "Clip", "--opset", "13", "--examples", "10", "--out", str(out))
    onnx_node_tests.export(node, onnx_node_tests.FEATURE_OPS)  # the expanded ones are skipped
    drawn = conform_on_a_terminal("run", "--from", str(out), "--from", str(node), "--jobs", jobs,
                                  "--report-json", str(tmp_path / "r.json"))
    report = json.loads((tmp_path / "r.json").read_text())
    tests = len(golden.test_dirs([out, node]))
    assert report["skipped"] and report["summary"]["total"] + len(report["skipped"]) == tests
    assert drawn.counts("golden tests")[-1] == (tests, str(tests))
    # Which tests an op chooses is known once they are read: no total then.
    drawn = conform_on_a_terminal("run", "--from", str(out), "--from", str(node), "--op", "Slice", "--jobs", jobs,
                                  "--report-json", str(tmp_path / "r.json"))
    chosen = json.loads((tmp_path / "r.json").read_text())
    assert drawn.counts("golden tests")[-1] == (chosen["summary"]["total"] + len(chosen["skipped"]), "?")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_verify_progress_counts_every_stored_test_verified_or_skipped(conform, conform_on_a_terminal, tmp_path, jobs):
    out, node = tmp_path / "golden", tmp_path / "node"
    conform("generate", "--op", "Clip", "--opset", "13", "--examples", "10", "--out", str(out))
    onnx_node_tests.export(node, onnx_node_tests.FEATURE_OPS)  # the expanded ones are skipped
    drawn = conform_on_a_terminal("verify", str(out), str(node), "--jobs", jobs, "--report-json", str(tmp_path / "v.json"))
    report = json.loads((tmp_path / "v.json").read_text())
    tests = len(golden.test_dirs([out, node]))
    assert drawn.code == 0 and report["skipped"] and len(report["results"]) + len(report["skipped"]) == tests
    assert drawn.counts("verify")[-1] == (tests, str(tests))


def test_run_from_with_jobs_reads_and_runs_in_workers_and_writes_the_serial_report(conform, tmp_path):
    # Stored tests are read and run in worker processes, GOLDEN_CHUNK directories to a unit: the
    # same results, skipped tests and messages as one process, crashes and hangs included.
    out, node = tmp_path / "golden", tmp_path / "node"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(out))
    onnx_node_tests.export(node, onnx_node_tests.FEATURE_OPS)  # onnx's own tests too, the expanded ones skipped
    assert len(golden.golden_units([out, node])) >= 3
    args = ("run", "--from", str(out), "--from", str(node), "--backend", "crashy", "--timeout", "1")
    serial = conform(*args, "--jobs", "1", "--report-json", str(tmp_path / "one.json"))
    parallel = conform(*args, "--jobs", "2", "--report-json", str(tmp_path / "two.json"))
    assert without_timings(tmp_path / "one.json") == without_timings(tmp_path / "two.json")
    report = json.loads((tmp_path / "two.json").read_text())
    outcomes = [r["outcome"] for r in report["results"]]
    assert {"crash", "timeout", "pass"} <= set(outcomes) and report["skipped"]
    assert serial.code == parallel.code == 1
    # In workers: the first crash killed one, and its unit of directories ran again.
    assert "golden test directories from" in parallel.stderr and "note:" not in serial.stderr
    nothing = conform("run", "--from", str(out), "--op", "Clip", "--jobs", "2")
    assert nothing.code == 2 and "no golden test to run" in nothing.stderr and "Slice-13" in nothing.stderr
    # Unreadable data found by a worker is the one clear message a serial run gives, no traceback.
    corrupt = sorted(out.iterdir())[-1] / "test_data_set_0" / "output_0.pb"
    corrupt.write_bytes(b"\xff junk")
    for jobs in ("1", "2"):
        refused = conform("run", "--from", str(out), "--jobs", jobs)
        assert refused.code == 2 and f"{corrupt}: not a readable TensorProto" in refused.stderr, jobs
        assert "Traceback" not in refused.stderr and "note:" not in refused.stderr


def test_verify_with_jobs_checks_in_workers_and_writes_the_serial_report(conform, tmp_path):
    # Stored outputs are checked in worker processes, GOLDEN_CHUNK directories to a unit: the same
    # verdicts, skipped tests and report, byte for byte, as one process.
    out, node = tmp_path / "golden", tmp_path / "node"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(out))
    onnx_node_tests.export(node, onnx_node_tests.FEATURE_OPS)  # onnx's own tests too, the expanded ones skipped
    assert len(golden.golden_units([out, node])) >= 3
    victim = out / "test_slice_13_negative_start_float_int64" / "test_data_set_0" / "output_0.pb"
    data = bytearray(victim.read_bytes())
    data[-1] ^= 0x01
    victim.write_bytes(bytes(data))
    serial = conform("verify", str(out), str(node), "--jobs", "1", "--report-json", str(tmp_path / "one.json"))
    parallel = conform("verify", str(out), str(node), "--jobs", "2", "--report-json", str(tmp_path / "two.json"))
    assert serial.code == parallel.code == 1, parallel.stderr
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()
    report = json.loads((tmp_path / "two.json").read_text())
    assert [generated_dir(r) for r in report["results"] if r["outcome"] == "fail"] == ["test_slice_13_negative_start_float_int64"]
    assert report["skipped"] and len(report["results"]) > golden.GOLDEN_CHUNK
    # Unreadable data found by a worker is reported as a serial verify reports it.
    corrupt = sorted(out.iterdir())[-1] / "test_data_set_0" / "output_0.pb"
    corrupt.write_bytes(b"\xff junk")
    for jobs in ("1", "2"):
        found = conform("verify", str(out), str(node), "--jobs", jobs, "--report-json", str(tmp_path / f"v{jobs}.json"))
        assert found.code == 1 and f"unreadable: {corrupt}: not a readable TensorProto" in found.stdout, jobs
        assert "Traceback" not in found.stderr
    assert (tmp_path / "v1.json").read_bytes() == (tmp_path / "v2.json").read_bytes()


def test_a_verify_pool_checks_the_units_in_its_workers(tmp_path, monkeypatch):
    from conformance.parallel import WorkerPool
    from conformance.runners import RunnerSpec

    out = tmp_path / "golden"
    golden.generate(select_examples(RunOptions(op="Slice", opset=13, dtypes=("float", "int8"), use_hypothesis=False)),
                    golden.GenerateOptions(out))
    units = golden.golden_units([out], verify=True)
    options = RunOptions(op="")
    serial = golden.verify_unit(golden.GoldenUnit(tuple(p for u in units for p in u.paths), verify=True), options)

    def not_here(*args, **kwargs):
        raise AssertionError("verified in the main process")

    monkeypatch.setattr(golden, "verify_dir", not_here)
    heard = []
    with WorkerPool.for_units(units, 2, options, RunnerSpec(), False) as pool:
        pooled = pool.run_golden(units, heard.append)
    assert len(units) >= 2 and len(serial.results) > golden.GOLDEN_CHUNK
    assert [(r.example.id, r.outcome, r.replay) for r in heard] == [(r.example.id, r.outcome, r.replay) for r in serial.results]
    assert all(r.outcome == "pass" and r.replay.startswith("conform verify ") for r in heard)
    # The listener heard every result: the joined run keeps only what is read after it (the first).
    assert [r.example.id for r in pooled.results] == [serial.results[0].example.id]


def test_run_from_with_an_op_reads_only_the_models_of_the_other_tests(conform, tmp_path):
    # Choosing an op version from a large store costs a model read per other test, not its data
    # and the reference's outputs: an unreadable data file of another op does not stop the run.
    store, node = tmp_path / "store", tmp_path / "node"
    for op in ("Clip", "Slice"):
        conform("generate", "--op", op, "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(store))
    onnx_node_tests.export(node, onnx_node_tests.FEATURE_OPS)
    alone = conform("run", "--from", str(store), "--from", str(node), "--op", "Clip", "--report-json", str(tmp_path / "a.json"))
    other = next(p for p in sorted(store.iterdir()) if p.name.startswith("test_slice_13"))
    (other / "test_data_set_0" / "output_0.pb").write_bytes(b"\xff junk")
    for jobs in ("1", "2"):
        chosen = conform("run", "--from", str(store), "--from", str(node), "--op", "Clip", "--jobs", jobs,
                         "--report-json", str(tmp_path / "b.json"))
        report = json.loads((tmp_path / "b.json").read_text())
        assert chosen.code == alone.code and "Traceback" not in chosen.stderr, chosen.stderr
        assert [r["id"] for r in report["results"]] == [r["id"] for r in json.loads((tmp_path / "a.json").read_text())["results"]]
        assert {r["op"] for r in report["results"]} == {"Clip"} and len(report["results"]) > 20
        assert report["skipped"] and all(s["path"].endswith("_expanded") for s in report["skipped"])  # still read, and said why
    refused = conform("run", "--from", str(store), "--op", "Slice")  # the unreadable test is chosen now
    assert refused.code == 2 and f"{other / 'test_data_set_0' / 'output_0.pb'}: not a readable TensorProto" in refused.stderr
    nothing = conform("run", "--from", str(store), "--op", "Clip", "--opset", "11")
    assert nothing.code == 2 and "Clip-13" in nothing.stderr and "Slice-13" in nothing.stderr


def test_run_from_with_a_shard_or_dtype_reads_only_the_data_of_the_tests_it_chooses(conform, tmp_path):
    # Which shard and dtype a stored test belongs to is told from its model: each shard reads the
    # data of its own tests only, and the shards still split the store exactly.
    store, node = tmp_path / "store", tmp_path / "node"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--dtype", "int8", "--no-hypothesis",
            "--out", str(store))
    onnx_node_tests.export(node, onnx_node_tests.FEATURE_OPS)
    sources = ("--from", str(store), "--from", str(node))
    whole = conform("run", *sources, "--report-json", str(tmp_path / "whole.json"))
    results = json.loads((tmp_path / "whole.json").read_text())["results"]
    shards = []
    for k in (1, 2, 3):
        conform("run", *sources, "--shard", f"{k}/3", "--jobs", "2", "--report-json", str(tmp_path / f"{k}.json"))
        shards.append(json.loads((tmp_path / f"{k}.json").read_text()))
    ids = [r["id"] for shard in shards for r in shard["results"]]
    assert sorted(ids) == sorted(r["id"] for r in results) and all(shard["results"] for shard in shards)
    assert all(shard["skipped"] == json.loads((tmp_path / "whole.json").read_text())["skipped"] for shard in shards)
    # A test of shard 2 with unreadable data stops shard 2 only; an int8 test's stops only --dtype int8.
    victim = next(r for r in shards[1]["results"] if r["dtype"] == "int8" and "golden:" + str(store) in r["source"])
    output = Path(victim["source"].removeprefix("golden:")) / "test_data_set_0" / "output_0.pb"
    output.write_bytes(b"\xff junk")
    for k, jobs in ((1, "1"), (3, "2")):
        other = conform("run", *sources, "--shard", f"{k}/3", "--jobs", jobs, "--report-json", str(tmp_path / "again.json"))
        assert other.code == whole.code and "Traceback" not in other.stderr, other.stderr
        again = json.loads((tmp_path / "again.json").read_text())["results"]
        assert [(r["id"], r["outcome"]) for r in again] == [(r["id"], r["outcome"]) for r in shards[k - 1]["results"]]
    refused = conform("run", *sources, "--shard", "2/3")
    assert refused.code == 2 and f"{output}: not a readable TensorProto" in refused.stderr
    floats = conform("run", *sources, "--dtype", "float", "--report-json", str(tmp_path / "float.json"))
    assert floats.code == whole.code and {r["dtype"] for r in json.loads((tmp_path / "float.json").read_text())["results"]} == {"float"}
    assert conform("run", *sources, "--dtype", "int8").code == 2


def test_a_stored_input_of_another_type_than_its_model_declares_is_refused(conform, tmp_path):
    # The test's type, and so its id and shard, is read from the model before its data: data that
    # says otherwise is a broken test, named, not a test filed under the wrong id.
    out = tmp_path / "golden"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(out))
    test = out / "test_slice_13_negative_start_float_int64"
    data = test / "test_data_set_0" / "input_0.pb"
    data.write_bytes(numpy_helper.from_array(numpy_helper.to_array(onnx.load_tensor(str(data))).astype(np.float64)).SerializeToString())
    said = f"{data}: holds double, but the model declares its input 'data' as float"
    refused = conform("run", "--from", str(test))
    assert refused.code == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.splitlines() == [f"error: {said}"]  # one line, however long its paths
    found = conform("verify", str(test))
    assert found.code == 1 and f"unreadable: {said}\n" in found.stdout and "Traceback" not in found.stderr


def test_what_a_stored_model_declares_is_what_its_test_reads_as(conform, tmp_path):
    # Every op, version and dtype conform writes, and onnx's own node tests: the op version, dtype
    # and id told from the model are those of the test read whole (or the model cannot tell).
    store, node = tmp_path / "store", tmp_path / "node"
    for op in ("Clip", "ConstantOfShape", "Slice"):
        conform("generate", "--op", op, "--examples", "2", "--out", str(store), "--force")
    onnx_node_tests.export(node, onnx_node_tests.FEATURE_OPS)
    told = 0
    for path in golden.test_dirs([store, node]):
        declared = golden._declared_data_sets(path)
        cases, skipped = golden.stored_cases([path])
        if declared is None:
            assert skipped and not cases, path
            continue
        told += 1
        assert [(d.version, d.dtype, d.id) for d in declared] == [(c.example.version, c.example.dtype, c.example.id) for c in cases]
    assert told > 300


def test_an_empty_shard_of_stored_tests_is_no_error_and_the_shards_merge_whole(conform, tmp_path):
    # As for generated cases: one test split eight ways leaves seven shards empty, each a complete
    # report of nothing (exit 0), and the merged report holds the test once.
    out = tmp_path / "golden"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(out))
    test = out / "test_slice_13_negative_start_float_int64"
    codes, reports = [], []
    for k in range(1, 9):
        reports.append(tmp_path / f"shard{k}.json")
        result = conform("run", "--from", str(test), "--shard", f"{k}/8", "--report-json", str(reports[-1]))
        codes.append(result.code)
        assert "Traceback" not in result.stderr and "no golden test to run" not in result.stderr, result.stderr
    sizes = [len(json.loads(r.read_text())["results"]) for r in reports]
    assert sorted(sizes) == [0] * 7 + [1] and codes == [0] * 8
    merged = conform("merge", *map(str, reports), "--report-json", str(tmp_path / "all.json"))
    doc = json.loads((tmp_path / "all.json").read_text())
    assert merged.code == 0 and [generated_dir(r) for r in doc["results"]] == [test.name] and doc["complete"] is True


@pytest.mark.parametrize("choice", [("--op", "Clip"), ("--dtype", "int16")])
def test_stored_tests_no_shard_chooses_are_an_error_in_every_shard(conform, tmp_path, choice):
    # Each shard used to exit 0 with a report of nothing, so a sharded CI job over a store that
    # holds none of the tests asked for passed. With two jobs, the store's 300-odd tests are read
    # in workers, 64 at a time.
    out = tmp_path / "golden"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--dtype", "int8", "--no-hypothesis", "--out", str(out))
    for jobs in ("1", "2"):
        for shard in ("1/2", "2/2"):
            result = conform("run", "--from", str(out), *choice, "--shard", shard, "--jobs", jobs,
                             "--report-json", str(tmp_path / "shard.json"))
            assert result.code == 2 and "Traceback" not in result.stderr, result.stderr
            assert "no golden test to run in any of the 2 shards" in result.stderr and "Slice-13" in result.stderr, result.stderr
            assert not (tmp_path / "shard.json").exists()


def test_run_from_usage_errors_are_exit_2(conform, tmp_path):
    out = tmp_path / "golden"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(out))
    nothing = conform("run", "--from", str(out), "--op", "Clip")
    assert nothing.code == 2 and "no golden test to run" in nothing.stderr and "Slice-13" in nothing.stderr
    assert conform("run", "--from", str(out), "--mode", "all").code == 2
    assert conform("run", "--from", str(out), "--opset", "13").code == 2
    assert conform("run").code == 2
    (out / "test_slice_13_negative_start_float_int64" / "test_data_set_0" / "output_0.pb").write_bytes(b"\xff junk")
    corrupt = conform("run", "--from", str(out))
    assert corrupt.code == 2 and "output_0.pb" in corrupt.stderr and "Traceback" not in corrupt.stderr


def test_generate_with_jobs_writes_in_workers_the_same_bytes_as_one_process(conform, tmp_path):
    args = ("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--dtype", "int8", "--examples", "4", "--seed", "3")
    one = conform(*args, "--jobs", "1", "--out", str(tmp_path / "one"))
    two = conform(*args, "--jobs", "2", "--out", str(tmp_path / "two"))
    assert one.code == two.code == 0 and "note:" not in two.stderr, two.stderr
    written = files_of(tmp_path / "one")
    assert written == files_of(tmp_path / "two")  # the manifest too: every entry, in the same order
    manifest = json.loads(written["manifest.json"])
    assert manifest["complete"] and {t["source"] for t in manifest["tests"]} >= {"hypothesis"}
    assert len({t["name"] for t in manifest["tests"]}) > YAML_CHUNK  # more than one unit of case-file cases


def test_a_generate_pool_writes_the_tests_in_its_workers(tmp_path, monkeypatch):
    from conformance.parallel import WorkerPool
    from conformance.runners import RunnerSpec

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), examples=3)
    units = plan(options)
    serial = golden.generate(select_examples(options), golden.GenerateOptions(tmp_path / "serial"))
    tasks = [golden.GenerateUnit(i, unit, golden.GenerateOptions(tmp_path / "pooled")) for i, unit in enumerate(units)]
    (tmp_path / "pooled").mkdir()

    def not_here(*args, **kwargs):
        raise AssertionError("planned in the main process")

    monkeypatch.setattr(golden, "_planned", not_here)
    heard = []
    with WorkerPool.for_units(tasks, 2, options, RunnerSpec(), False) as pool:
        pool.write_tests(tasks, heard.append)
    assert len(tasks) >= 3 and [index for index, _ in heard] == list(range(len(tasks)))
    assert [entry for _, entries in heard for entry in entries] == serial["tests"]
    on_disk = files_of(tmp_path / "pooled")
    assert on_disk and on_disk == {k: v for k, v in files_of(tmp_path / "serial").items() if k != "manifest.json"}


def test_generate_with_jobs_replaces_a_test_it_may_draw_only_with_force(conform, tmp_path):
    # Workers write as they go: a test that a hypothesis group may draw is known to be there before
    # any is drawn, and then nothing is written unless --force says so, as with one process.
    out = tmp_path / "golden"
    args = ("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--examples", "3", "--jobs", "2", "--out", str(out))
    golden.generate([], golden.GenerateOptions(out))  # a golden folder of conform's: generate writes into no other
    mine = out / golden.test_name_of_id("Slice-13/hypothesis-0002/float/int64") / "model.onnx"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"mine")
    refused = conform(*args)
    assert refused.code == 2 and f"{mine.parent} already exists (1 tests would be replaced); use --force" in refused.stderr
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", mine.parent.name] and mine.read_bytes() == b"mine"
    assert conform(*args, "--force").code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    entry = next(t for t in manifest["tests"] if t["name"] == mine.parent.name)
    assert entry["status"] == "written" and golden.content_hash(files_of(mine.parent)) == entry["hash"]


def test_an_interrupted_generate_in_workers_lists_every_whole_test_and_tidies_the_rest(tmp_path):
    # The workers are stopped at once: what they were writing is found on disk. Unit 1 was stopped
    # after five of its tests, inside the next one, whose temporary directory is left; a test after
    # it that was to be replaced had been moved aside (it goes back). Unit 2 finished before unit 1.
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), examples=3)
    units = plan(options)
    writing = golden.GenerateOptions(tmp_path, force=True)
    stopped_in = examples_of(units[1], options)
    files = [golden._planned(e, golden.test_name(e), writing)[1] for e in stopped_in]
    valid = [i for i, f in enumerate(files) if f]
    done, half, replaced = valid[4] + 1, golden.test_name(stopped_in[valid[5]]), golden.test_name(stopped_in[valid[6]])
    old = tmp_path / f".{replaced}.old.abc_1234" / replaced / "model.onnx"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"the old test")

    def stopped(tasks, hand_out):
        hand_out(golden.write_unit(tasks[0], options))
        hand_out(golden.write_unit(tasks[2], options))
        for example, its_files in zip(stopped_in[:done], files):
            golden._write_planned(tmp_path, golden.test_name(example), its_files)
        (tmp_path / f".{half}.xyz_1234" / "test_data_set_0").mkdir(parents=True)
        raise KeyboardInterrupt

    manifest = golden.generate_units(units, options, writing, stopped)
    assert not manifest["complete"] and json.loads((tmp_path / "manifest.json").read_text()) == manifest
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert files_of(tmp_path / replaced) == {"model.onnx": b"the old test"}
    on_disk = {p.name for p in tmp_path.iterdir() if p.name.startswith("test_")}
    listed = [t for t in manifest["tests"] if t["status"] == "written"]
    assert {t["name"] for t in listed} == on_disk - {replaced}
    for entry in listed:
        assert golden.content_hash(files_of(tmp_path / entry["name"])) == entry["hash"]
    # In plan order: units 0 and 2 whole, and of unit 1 the tests written and the cases skipped.
    of_unit_1 = [e.id for i, e in enumerate(stopped_in) if i < done or not files[i]]
    assert [t["id"] for t in manifest["tests"]] == [e.id for e in examples_of(units[0], options)] + of_unit_1 + \
        [e.id for e in examples_of(units[2], options)]
    assert len(of_unit_1) < len(stopped_in)


def test_what_a_dead_worker_left_half_written_is_tidied_once_its_unit_is_written_again(tmp_path):
    # A worker killed inside a test leaves a temporary directory, or one it was replacing moved
    # aside; its unit is written again by another worker, and the folder ends as one process leaves it.
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), examples=3)
    units = plan(options)
    serial = golden.generate(select_examples(options), golden.GenerateOptions(tmp_path / "serial"))
    out = tmp_path / "pooled"
    names = [t["name"] for t in serial["tests"] if t["status"] == "written"]
    (out / f".{names[3]}.zzz_1234" / "test_data_set_0").mkdir(parents=True)
    (out / f".{names[3]}.zzz_1234" / "model.onnx").write_bytes(b"half")
    (out / f".{names[4]}.old.q_123456" / names[4]).mkdir(parents=True)
    (out / f".{names[4]}.old.q_123456" / names[4] / "model.onnx").write_bytes(b"old")

    def a_worker_died(tasks, hand_out):
        for task in tasks:
            hand_out(golden.write_unit(task, options))

    manifest = golden.generate_units(units, options, golden.GenerateOptions(out, force=True), a_worker_died)
    assert manifest["complete"] and manifest["tests"] == serial["tests"]
    assert files_of(out) == files_of(tmp_path / "serial")
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_an_interrupted_generate_in_workers_passes_over_units_that_wrote_nothing_during_the_run(tmp_path, monkeypatch):
    # With --force over an existing store, every unit has tests in the folder; only those that
    # wrote one during the run are drawn again to see which tests are whole: an interruption
    # ends at once, and a test from before is not listed as this run's work.
    import os

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), examples=3)
    units = plan(options)
    writing = golden.GenerateOptions(tmp_path, force=True)
    tasks = [golden.GenerateUnit(i, unit, writing) for i, unit in enumerate(units)]
    golden.generate([], writing)  # a golden folder of conform's: generate writes into no other
    before = golden.write_unit(tasks[3], options)[1]
    an_hour_ago = time.time() - 3600
    for entry in before:
        if (tmp_path / entry["name"]).is_dir():
            os.utime(tmp_path / entry["name"], (an_hour_ago, an_hour_ago))
    drawn_after_the_stop = []
    real = golden.examples_of

    def stopped(tasks, hand_out):
        hand_out(golden.write_unit(tasks[0], options))
        golden.write_unit(tasks[1], options)  # all written, the answer lost with the worker
        monkeypatch.setattr(golden, "examples_of", lambda unit, o: drawn_after_the_stop.append(unit) or real(unit, o))
        raise KeyboardInterrupt

    manifest = golden.generate_units(units, options, writing, stopped)
    assert drawn_after_the_stop == [units[1]]
    assert [t["id"] for t in manifest["tests"]] == [e.id for unit in units[:2] for e in real(unit, options)]
    assert not manifest["complete"] and not {t["name"] for t in before} & {t["name"] for t in manifest["tests"]}


def test_run_from_with_jobs_meets_each_hang_once_when_a_watched_worker_meets_it_first(conform, tmp_path, monkeypatch):
    # Nothing crashes first here: a watched worker meets the first hang and is stopped, and the
    # careful worker that runs its unit of stored tests again answers that call with the timeout
    # instead of running it a second time (it meets the second hang itself, as a serial run does).
    out, hangs = tmp_path / "golden", tmp_path / "hangs.txt"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(out))
    kept = {f"test_slice_13_{name}_float_{tind}" for name in ("start_beyond_dim", "negative_end") for tind in ("int32", "int64")}
    for test in golden.test_dirs([out]):
        if test.name not in kept:
            shutil.rmtree(test)
    assert len(golden.test_dirs([out])) == 4
    monkeypatch.setenv("CRASHY_HANGS", str(hangs))  # the crashy backend hangs on both start_beyond_dim tests
    args = ("run", "--from", str(out), "--backend", "crashy", "--timeout", "1")
    serial, parallel = one_and_two_jobs_meeting_hangs(conform, args, hangs, tmp_path)
    assert [r["outcome"] for r in json.loads((tmp_path / "two.json").read_text())["results"]].count("timeout") == 2
    assert serial.code == parallel.code == 1
    assert "spent more than 1 s in one runtime call" in parallel.stderr and "the case that hung is a timeout" in parallel.stderr


def test_a_golden_run_groups_its_failures_by_the_case_each_test_was_generated_from(conform, tmp_path):
    out = tmp_path / "golden"
    assert conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--dtype", "uint8", "--out", str(out)).code == 0
    result = conform("run", "--from", str(out), "--backend", "wrong_slice", columns=None)
    tests = {t["name"]: t for t in json.loads((out / "manifest.json").read_text())["tests"]}

    def family(record):  # from what generate recorded of the test, not from its name
        test = tests[generated_dir(record)]
        return None if test["source"] == "hypothesis" else test["id"].split("/")[1]

    failing = [r for r in result.report["results"] if r["outcome"] == "fail"]
    families = {family(r) for r in failing}
    assert result.code == 1 and None in families and len(families) >= 3
    assert len(re.findall(r"^─+ FAIL ─+$", result.stdout, flags=re.M)) == len(families) < len(failing)
    drawn = sum(family(r) is None for r in failing) - 1
    assert f"fail too: {drawn} more hypothesis cases of Slice-13, in " in result.stdout
    for name in families - {None}:
        members = [r for r in failing if family(r) == name]
        if len(members) > 1:
            assert f"{members[0]['id']}\n" in result.stdout  # the first in full, the others named after it
            assert f"fail too: this case in {len(members) - 1} more of its type bindings: " in result.stdout


def test_the_case_a_stored_test_was_generated_from_is_read_from_its_name_and_type_binding():
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), examples=1)
    yaml_case = next(e for e in select_examples(options) if e.source != "hypothesis" and "/int64" in e.id)
    drawn = next(e for e in select_examples(options) if e.source == "hypothesis")

    def stored(example, name):
        return dataclasses.replace(example, name=name, source=f"golden:out/{name}")

    assert golden.generated_case(stored(yaml_case, golden.test_name(yaml_case))) == yaml_case.name.lower()
    assert golden.generated_case(stored(drawn, golden.test_name(drawn))) == ""
    assert golden.generated_case(stored(yaml_case, "test_slice_neg_steps")) is None  # onnx's own, named otherwise
    other_binding = golden.test_name(yaml_case).replace("_int64", "_int32")
    assert golden.generated_case(stored(yaml_case, other_binding)) is None  # the name's binding is not the test's


def test_a_file_given_as_a_test_directory_is_named_as_such(conform, tmp_path):
    out = tmp_path / "golden"
    conform("generate", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis",
            "--out", str(out))
    model = next(out.glob("*/model.onnx"))
    notes = tmp_path / "notes.json"
    notes.write_text("{}")
    for command in (("verify",), ("run", "--from")):
        given_the_model = conform(*command, str(model))
        assert given_the_model.code == 2 and f"{model}: a test's model, not its directory: give {model.parent}" in given_the_model.stderr
        given_a_file = conform(*command, str(notes))
        assert given_a_file.code == 2 and f"{notes}: a file, not a test directory" in given_a_file.stderr
        missing = conform(*command, str(tmp_path / "gone"))
        assert missing.code == 2 and "gone: no such test directory" in missing.stderr


def test_generate_case_writes_just_those_tests_as_a_whole_generate_writes_them(conform, tmp_path):
    # generate had no --case: golden data for the one case a report names meant writing them all.
    args = ("generate", "--op", "Slice", "--opset", "13", "--examples", "3", "--seed", "4")
    conform(*args, "--out", str(tmp_path / "all"))
    tests = json.loads((tmp_path / "all" / "manifest.json").read_text())["tests"]
    written = [t for t in tests if t["status"].startswith("written")]
    chosen = [next(t for t in written if t["source"] == "hypothesis"), next(t for t in written if t["source"] != "hypothesis")]
    result = conform(*args, "--out", str(tmp_path / "some"), *(word for t in chosen for word in ("--case", t["id"])), "--jobs", "2")
    assert result.code == 0, result.stderr
    assert sorted(t["name"] for t in json.loads((tmp_path / "some" / "manifest.json").read_text())["tests"]) == sorted(t["name"] for t in chosen)
    for test in chosen:
        assert files_of(tmp_path / "some" / test["name"]) == files_of(tmp_path / "all" / test["name"])
    misspelt = conform(*args, "--out", str(tmp_path / "none"), "--case", "Slice-13/no_such_case/float/int64")
    assert misspelt.code == 2 and "no case with id Slice-13/no_such_case/float/int64" in misspelt.stderr
    assert not (tmp_path / "none").exists()


def test_golden_tests_are_written_as_the_users_umask_allows(tmp_path):
    examples = select_examples(RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False))[:2]
    previous = os.umask(0o022)
    try:
        golden.generate(examples, golden.GenerateOptions(tmp_path / "out"))
    finally:
        os.umask(previous)
    written = [p for p in (tmp_path / "out").rglob("*")]
    modes = {p.relative_to(tmp_path): stat.S_IMODE(p.stat().st_mode) for p in written}
    assert written and all(mode == (0o755 if p.is_dir() else 0o644) for p, mode in zip(written, modes.values())), (
        f"a team shares a golden folder: every folder 0755 and file 0644 under umask 022, found {modes}")


def test_the_workers_shares_of_a_golden_run_keep_only_what_is_read_after_it():
    """A run over a large golden folder in workers holds one unit's results at a time: the joined
    run keeps the first result and those a --case id names; the listener hears every one."""
    from types import SimpleNamespace

    def result(case_id):
        return SimpleNamespace(example=SimpleNamespace(id=case_id))

    options = RunOptions(case_ids=("B-1/x/float",))
    heard = []
    runs = golden.GoldenRuns(options, heard.append)
    runs.hear(golden.GoldenRun([result("A-1/x/float"), result("A-1/y/float")], [(Path("t1"), "too large")], frozenset({"A-1"})))
    runs.hear(golden.GoldenRun([result("B-1/x/float"), result("B-1/y/float")], [], frozenset({"B-1"}), True))
    joined = runs.joined()
    assert [r.example.id for r in heard] == ["A-1/x/float", "A-1/y/float", "B-1/x/float", "B-1/y/float"]
    assert [r.example.id for r in joined.results] == ["A-1/x/float", "B-1/x/float"]
    assert joined.skipped == [(Path("t1"), "too large")] and joined.found == {"A-1", "B-1"} and joined.chosen_in_a_shard


def test_a_stored_node_naming_fewer_outputs_than_its_op_has_is_judged_on_those_it_names(tmp_path):
    # Unique with Y alone: the node's output list is ['Y'], the op has four; only Y is stored.
    from conformance.execute import expected_for

    out = tmp_path / "golden"
    assert Invoked("generate", "--op", "Unique", "--opset", "11", "--no-hypothesis", "--case", "Unique-11/y_only/int64",
                   "--out", str(out)).code == 0
    [test] = list(golden.read_tests(out / "test_unique_11_y_only_int64"))
    example = golden.example_from_test(test)
    assert [len(r.outputs) for r in expected_for(example).readings] == [1], "only Y is asked for"
    assert Invoked("verify", str(out)).code == 0
