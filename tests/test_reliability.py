"""Untrusted input and interruption: the element guard, --only-cases, symlinks, fuzzed case files
and golden files, and a run stopped by SIGINT."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from onnx import numpy_helper
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import casefile, golden
from conftest import with_test_backends
from conformance.errors import ConformError
from conformance.execute import RunOptions, select_examples

ROOT = Path(__file__).resolve().parent.parent
HUGE = """\
op: ConstantOfShape
cases:
  - name: huge
    versions: [25]
    dtypes: [int8]
    inputs: {input: [2147483648, 2147483648, 4]}
    attributes: {value: 1}
"""


def test_a_huge_constant_of_shape_is_refused_before_anything_is_allocated(conform, tmp_path):
    cases = tmp_path / "huge.yaml"
    cases.write_text(HUGE)
    result = conform("run", "--op", "ConstantOfShape", "--only-cases", str(cases), "--no-hypothesis")
    assert result.code == 0
    [record] = result.report["results"]
    assert record["outcome"] == "skipped" and "too large" in record["message"] and "18,446,744,073,709,551,616" in record["message"]


ALLOCATABLE = """\
op: ConstantOfShape
cases:
  - name: two_gib
    versions: [25]
    dtypes: [int8]
    inputs: {input: [32768, 32768, 2]}
    attributes: {value: 1}
"""


def conform_peak_rss(cwd: Path, *args: str) -> tuple[int, int]:
    """Exit code and peak RSS (KiB) of a `conform` command: ru_maxrss of the waited-for
    descendants covers every process of the run."""
    probe = ("import resource, subprocess, sys; "
             "code = subprocess.run(sys.argv[1:]).returncode; "
             "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    completed = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "conformance", *args],
                               capture_output=True, text=True, cwd=cwd, timeout=300)
    code, peak_kib = (int(word) for word in completed.stdout.split()[-2:])
    return code, peak_kib


def test_memory_stays_flat_when_the_element_guard_refuses(tmp_path):
    # 2 GiB of int8 could be allocated and filled, and would be without the guard.
    cases = tmp_path / "big.yaml"
    cases.write_text(ALLOCATABLE + HUGE.split("cases:\n", 1)[1])
    report = tmp_path / "r.json"
    code, peak_kib = conform_peak_rss(tmp_path, "run", "--op", "ConstantOfShape", "--only-cases", str(cases),
                                      "--no-hypothesis", "--report-json", str(report))
    assert code == 0
    outcomes = {r["case"]: r["outcome"] for r in json.loads(report.read_text())["results"]}
    assert outcomes == {"two_gib": "skipped", "huge": "skipped"}
    assert peak_kib < 1024 * 1024, f"peak RSS {peak_kib // 1024} MiB: something was allocated"


def test_golden_tests_too_large_are_refused_before_the_reference_computes_them(tmp_path):
    # A stored ConstantOfShape whose shape asks for 2 GiB, with a one-byte output file: neither
    # `run --from` nor `verify` may let the reference (or the runtime) allocate it.
    test = tmp_path / "golden" / "test_two_gib"
    (test / "test_data_set_0").mkdir(parents=True)
    value = numpy_helper.from_array(np.array([1], np.int8))
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("ConstantOfShape", ["input"], ["output"], value=value)], "g",
        [onnx.helper.make_tensor_value_info("input", onnx.TensorProto.INT64, [3])],
        [onnx.helper.make_tensor_value_info("output", onnx.TensorProto.INT8, None)])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 25)], ir_version=11)
    (test / "model.onnx").write_bytes(model.SerializeToString())
    shape = numpy_helper.from_array(np.array([32768, 32768, 2], np.int64), "input")
    (test / "test_data_set_0" / "input_0.pb").write_bytes(shape.SerializeToString())
    (test / "test_data_set_0" / "output_0.pb").write_bytes(numpy_helper.from_array(np.zeros(1, np.int8), "output").SerializeToString())

    code, peak_kib = conform_peak_rss(tmp_path, "run", "--from", str(test), "--report-json", str(tmp_path / "run.json"))
    [record] = json.loads((tmp_path / "run.json").read_text())["results"]
    assert code == 0 and record["outcome"] == "skipped" and "too large" in record["message"]
    assert peak_kib < 1024 * 1024, f"run --from: peak RSS {peak_kib // 1024} MiB: something was allocated"

    # Beside tests verify can check: a folder of nothing but refused tests is "nothing to verify".
    # (generate writes only into a folder of its own, not into one of tests it did not write.)
    subprocess.run([sys.executable, "-m", "conformance", "generate", "--op", "Clip", "--opset", "13", "--dtype", "float",
                    "--no-hypothesis", "--out", str(tmp_path / "clip")], capture_output=True, timeout=300, check=True)
    code, peak_kib = conform_peak_rss(tmp_path, "verify", str(tmp_path / "golden"), str(tmp_path / "clip"),
                                      "--report-json", str(tmp_path / "verify.json"))
    [skipped] = json.loads((tmp_path / "verify.json").read_text())["skipped"]
    assert code == 0 and skipped["reason"].startswith("skipped: too large")
    assert peak_kib < 1024 * 1024, f"verify: peak RSS {peak_kib // 1024} MiB: something was allocated"


def test_only_cases_uses_nothing_else(conform, tmp_path):
    cases = tmp_path / "huge.yaml"
    cases.write_text(HUGE)
    result = conform("run", "--op", "ConstantOfShape", "--only-cases", str(cases), "--no-hypothesis")
    assert {r["case"] for r in result.report["results"]} == {"huge"}


def test_list_with_only_cases_counts_nothing_else(conform, tmp_path):
    cases = tmp_path / "huge.yaml"
    cases.write_text(HUGE)
    listed = conform("list", "--only-cases", str(cases)).stdout
    counts = {tuple(cells[:2]): cells[-1] for line in listed.splitlines()
              if len(cells := [c.strip() for c in line.strip("│┃ ").split("│")]) >= 4 and cells[1].isdigit()}
    assert counts[("ConstantOfShape", "25")] == "1"
    assert set(counts.values()) == {"0", "1"} and list(counts.values()).count("1") == 1


def test_verify_follows_no_link_out_of_the_folder(conform, tmp_path):
    outside = tmp_path / "outside"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(outside))
    inside = tmp_path / "inside"
    inside.mkdir()
    os.symlink(outside / "test_slice_13_negative_start_float_int64", inside / "test_linked_dir")
    real = inside / "test_real"
    (real / "test_data_set_0").mkdir(parents=True)
    source = outside / "test_slice_13_negative_end_float_int64"
    (real / "model.onnx").write_bytes((source / "model.onnx").read_bytes())
    for pb in (source / "test_data_set_0").iterdir():
        os.symlink(pb, real / "test_data_set_0" / pb.name)
    result = conform("run", "--from", str(inside))
    assert result.code == 2 and "a link leading out of" in result.stderr
    result = conform("verify", str(inside))  # the test is refused unread, as one verify cannot read
    assert result.code == 1 and re.search(r"^unreadable: .*test_real/test_data_set_0/input_0.pb: a link leading out of ", result.stdout, re.M)
    (real / "test_data_set_0").rename(tmp_path / "moved")
    assert "test_linked_dir" not in conform("verify", str(inside)).stdout
    # With the real test gone only the linked directory is left, and it is not followed.
    shutil.rmtree(real)
    result = conform("run", "--from", str(inside))
    assert result.code == 2 and "no test directory" in result.stderr


def test_a_data_set_folder_linked_out_of_its_test_is_refused_and_a_link_inside_it_is_followed(conform, tmp_path):
    # Reading a test checks a link only where there is one (resolving every file cost a run of
    # 2,000 stored tests a second): a linked data set folder is checked as a linked file is.
    outside = tmp_path / "outside"
    conform("generate", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(outside))
    source = outside / "test_slice_13_negative_end_float_int64"
    test = tmp_path / "inside" / "test_real"
    test.mkdir(parents=True)
    (test / "model.onnx").write_bytes((source / "model.onnx").read_bytes())
    os.symlink(source / "test_data_set_0", test / "test_data_set_0")
    with pytest.raises(golden.GoldenError, match=f"test_data_set_0: a link leading out of {test}"):
        golden.stored_cases([test.parent])
    (test / "test_data_set_0").unlink()
    shutil.copytree(source / "test_data_set_0", test / "test_data_set_0")
    os.symlink(test / "test_data_set_0", test / "test_data_set_1")  # a second data set, linked to the first
    cases, skipped = golden.stored_cases([test.parent])
    assert not skipped and len(cases) == 2
    assert [a.tobytes() for a in cases[0].built.feeds.values()] == [a.tobytes() for a in cases[1].built.feeds.values()]


# Mutations of the real case files, and YAML built from scratch: every one must load as valid
# cases or fail with a ConformError that names the file and a line, never anything else.
BUILTIN_TEXTS = [p.read_text() for p in sorted((ROOT / "cases").rglob("*.yaml"))]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=8))
YAML_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=20)


@st.composite
def mutated_case_files(draw):
    text = draw(st.sampled_from(BUILTIN_TEXTS))
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "replace", "truncate", "indent"]))
        if action == "delete":
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, lines[index])
        elif action == "replace":
            lines[index] = lines[index][: draw(st.integers(0, len(lines[index])))] + draw(st.text(max_size=12))
        elif action == "truncate":
            lines = lines[: index + 1]
        else:
            lines[index] = "  " + lines[index]
        if not lines:
            lines = [""]
    return "\n".join(lines)


def _loads_cleanly(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzzed.yaml"
    path.write_bytes(text.encode("utf-8", "replace"))
    try:
        casefile.load_files([path])
    except ConformError as error:
        problems = getattr(error, "problems", None)
        assert problems, error.message
        assert all(where.endswith("fuzzed.yaml") for where, _, _ in problems)
        assert all(line is None or line >= 1 for _, line, _ in problems)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(text=mutated_case_files())
def test_mutated_case_files_end_in_a_clean_error_or_valid_cases(tmp_path_factory, text):
    _loads_cleanly(tmp_path_factory.mktemp("fuzz"), text)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(document=YAML_VALUES, op=st.sampled_from(["Clip", "Slice", "ConstantOfShape", "Nope"]))
def test_random_yaml_ends_in_a_clean_error_or_valid_cases(tmp_path_factory, document, op):
    text = yaml.safe_dump({"op": op, "cases": [document] if not isinstance(document, list) else document})
    _loads_cleanly(tmp_path_factory.mktemp("fuzz"), text)


GOLDEN = None


def _golden_once(tmp_path_factory) -> Path:
    global GOLDEN
    if GOLDEN is None:
        GOLDEN = tmp_path_factory.mktemp("golden")
        examples = select_examples(RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False))[:4]
        golden.generate(examples, golden.GenerateOptions(GOLDEN))
    return GOLDEN


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(data=st.data())
def test_corrupted_golden_files_end_in_a_clean_error_or_a_verdict(tmp_path_factory, data):
    source = _golden_once(tmp_path_factory)
    test = sorted(p for p in source.iterdir() if p.is_dir())[0]
    files = sorted(p for p in test.rglob("*") if p.is_file())
    victim = data.draw(st.sampled_from(files))
    original = victim.read_bytes()
    position = data.draw(st.integers(0, max(len(original) - 1, 0)))
    kind = data.draw(st.sampled_from(["flip", "truncate", "garbage"]))
    corrupted = {"flip": original[:position] + bytes([original[position] ^ data.draw(st.integers(1, 255))]) + original[position + 1:],
                 "truncate": original[:position],
                 "garbage": data.draw(st.binary(max_size=64))}[kind]
    try:
        victim.write_bytes(corrupted)
        for read in (golden.verify_dir, lambda path: golden.stored_cases([path])):  # verify, and run --from
            try:
                read(test)
            except ConformError as error:
                assert str(victim.name) in error.message or str(test.name) in error.message
    finally:
        victim.write_bytes(original)


def test_case_names_never_become_paths_outside_out(conform, tmp_path):
    cases = tmp_path / "evil.yaml"
    cases.write_text('op: Slice\ncases:\n  - name: "../../escaped/x y"\n    versions: [13]\n    dtypes: [float]\n'
                     '    types: {Tind: [int64]}\n    inputs: {data: [1.0, 2.0], starts: [0], ends: [1]}\n')
    out = tmp_path / "deep" / "out"
    result = conform("generate", "--op", "Slice", "--only-cases", str(cases), "--no-hypothesis", "--out", str(out))
    assert result.code == 0, result.stderr
    written = [p for p in tmp_path.rglob("model.onnx")]
    assert len(written) == 1 and written[0].parent.parent == out
    assert not (tmp_path / "escaped").exists()


def conform_folders(temporary: Path) -> list[str]:
    """What a command leaves in the temporary folder of its own: the scratch folder (conform-*) and
    the fork server's socket folder (pymp-*), by kind, sorted."""
    return sorted(p.name.split("-")[0] for p in temporary.iterdir() if p.name.startswith(("conform-", "pymp-")))


@pytest.mark.parametrize("command, told", [
    (("run", "--op", "Clip", "--opset", "13", "--jobs", "1", "--report-json", "out.json"), ["out.json"]),
    (("run", "--op", "Clip", "--opset", "13", "--jobs", "2", "--report-json", "out.json"), ["out.json"]),
    (("generate", "--op", "Clip", "--opset", "13", "--out", "golden"), ["golden"]),
])
def test_a_command_writes_in_the_working_folder_only_what_it_was_told_and_leaves_no_scratch(tmp_path, command, told):
    # Hypothesis, drawing the cases, kept a cache of the constants of conform's source files (and
    # of any other local module) under .hypothesis/ in the working folder.
    work, temporary = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    temporary.mkdir()
    environment = {key: value for key, value in with_test_backends().items() if key != "HYPOTHESIS_STORAGE_DIRECTORY"}
    done = subprocess.run([sys.executable, "-m", "conformance", *command, "--examples", "5"], cwd=work,
                          env={**environment, "TMPDIR": str(temporary)}, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    assert sorted(p.name for p in work.iterdir()) == told
    # onnxruntime leaves a file of its own there (.ses); none of conform's folders stays.
    assert conform_folders(temporary) == []


def wait_until_busy(process: subprocess.Popen, folder: Path, mark: str = "slow-backend-busy") -> None:
    """Return once the slow backend, run from `folder`, says the run is under way (or another
    test backend leaves its `mark` there)."""
    busy = folder / mark
    for _ in range(600):
        if busy.exists() or process.poll() is not None:
            break
        time.sleep(0.1)
    assert busy.exists() and process.poll() is None, "the run ended before it could be interrupted"


def interrupted_when_busy(process: subprocess.Popen, folder: Path, stop: int) -> str:
    """Send `stop` once the slow backend says the run is under way; its stderr, after exit 130."""
    wait_until_busy(process, folder)
    process.send_signal(stop)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    return stderr


@pytest.mark.parametrize("command", [("run",), ("diff", "--against", "reference")])
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_run_leaves_a_valid_incomplete_report(tmp_path, stop, command):
    report = tmp_path / "report.json"
    # The slow backend takes 5 ms a case: Slice-13's cases take over 10 s, and the signal comes
    # once it has run 150 of them (in one worker, with the default --jobs), not after a guess at
    # how long start-up takes.
    process = subprocess.Popen([sys.executable, "-m", "conformance", *command, "--op", "Slice", "--opset", "13", "--no-hypothesis",
                                "--backend", "slow", "--report-json", str(report)], cwd=tmp_path, env=with_test_backends(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stderr = interrupted_when_busy(process, tmp_path, stop)
    doc = json.loads(report.read_text())
    assert doc["complete"] is False
    total = doc["summary"]["total"]
    assert 0 < total == len(doc["results"]) + sum(row["count"] for row in doc.get("tallies", [])), \
        "every finished case is recorded whole or counted"
    assert "Traceback" not in stderr and f"the report holds the {total} cases finished so far" in stderr


def test_a_run_killed_outright_leaves_its_temporary_folders_to_the_next_command(tmp_path):
    # SIGKILL (the out-of-memory killer, a CI job's hard timeout) lets nothing run: the scratch
    # folder (workers' stderr, profiles) and the fork server's socket folder stayed in /tmp for good.
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    environment = {**with_test_backends(), "TMPDIR": str(temporary)}
    process = subprocess.Popen([sys.executable, "-m", "conformance", "run", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--backend", "slow",
                                "--report-json", "killed.json"], cwd=tmp_path, env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until_busy(process, tmp_path)
    process.kill()
    process.wait(timeout=60)
    assert conform_folders(temporary) == ["conform", "pymp"]
    after = subprocess.run([sys.executable, "-m", "conformance", "run", "--op", "Clip", "--opset", "13", "--no-hypothesis",
                            "--dtype", "float", "--report-json", "after.json"], cwd=tmp_path, env=environment, capture_output=True, text=True)
    assert after.returncode == 0, after.stderr
    assert conform_folders(temporary) == []


def test_an_interrupted_golden_run_lists_the_tests_it_skipped_with_what_it_ran(conform, tmp_path):
    # The skipped tests are known once read, and read by units: those of every unit handed out
    # before the interruption are in the report.
    import onnx_node_tests

    onnx_node_tests.export(tmp_path / "node", onnx_node_tests.FEATURE_OPS)  # onnx's own tests, the expanded ones skipped
    conform("generate", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--out", str(tmp_path / "golden"))
    report = tmp_path / "report.json"
    process = subprocess.Popen([sys.executable, "-m", "conformance", "run", "--from", str(tmp_path / "node"),
                                "--from", str(tmp_path / "golden"), "--backend", "slow", "--report-json", str(report)],
                               cwd=tmp_path, env=with_test_backends(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    interrupted_when_busy(process, tmp_path, signal.SIGINT)
    doc = json.loads(report.read_text())
    assert doc["complete"] is False and 0 < len(doc["results"])
    assert doc["skipped"] and all(s["path"].startswith(str(tmp_path / "node")) for s in doc["skipped"])


def test_an_interrupted_verify_writes_what_it_checked_with_complete_false(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from conformance.cli import app

    out = tmp_path / "golden"
    examples = select_examples(RunOptions(op="Clip", opset=13, dtypes=("float",), use_hypothesis=False))[:6]
    golden.generate(examples, golden.GenerateOptions(out))
    real, calls = golden.verify_dir, {"n": 0}

    def interrupted_at_the_fifth(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(golden, "verify_dir", interrupted_at_the_fifth)
    result = CliRunner().invoke(app, ["verify", str(out), "--report-json", str(tmp_path / "v.json")])
    doc = json.loads((tmp_path / "v.json").read_text())
    assert result.exit_code == 130 and doc["complete"] is False and len(doc["results"]) == 4
