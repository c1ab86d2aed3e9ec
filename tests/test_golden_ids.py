"""One id per case in every command: a golden test `generate` wrote carries the case it was written
from, so `run --from` and `verify` give its results the ids `run` gave, and an expectations file
written by `run` applies to `run --from` on the golden data written from the same cases."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from conftest import with_test_backends

from conformance import golden
from conformance.stored_files import GoldenError

SLICE_13 = ("--op", "Slice", "--opset", "13")
# A case Slice-13's case file writes, and a test directory `generate` writes of it.
KNOWN_CASE = "negative_step_int_max_end"
KNOWN_TEST = "test_slice_13_negative_step_int_max_end_uint8_int32"
KNOWN_ID = "Slice-13/negative_step_int_max_end/uint8/int32"


def generated_once(folder: Path, *options: str) -> Path:
    """What `conform generate` writes for Slice-13 with `options` into `folder`/golden."""
    out = folder / "golden"
    completed = subprocess.run([sys.executable, "-m", "conformance", "generate", *SLICE_13, *options, "--out", str(out)],
                               capture_output=True, text=True, cwd=folder, env=with_test_backends(), timeout=600)
    assert completed.returncode == 0, completed.stderr
    return out


@pytest.fixture(scope="module")
def _generated(tmp_path_factory) -> Path:
    return generated_once(tmp_path_factory.mktemp("generated"), "--examples", "2")


@pytest.fixture(scope="module")
def _uint8_cases(tmp_path_factory) -> Path:
    return generated_once(tmp_path_factory.mktemp("uint8"), "--dtype", "uint8", "--no-hypothesis")


@pytest.fixture
def generated(_generated, tmp_path) -> Path:
    """Slice-13's case-file cases and two hypothesis examples per group, as `generate` writes them
    (written once per module, each test given its own copy)."""
    return Path(shutil.copytree(_generated, tmp_path / "golden"))


@pytest.fixture
def uint8_cases(_uint8_cases, tmp_path) -> Path:
    """Slice-13's uint8 case-file cases as `generate` writes them, a copy of the test's own."""
    return Path(shutil.copytree(_uint8_cases, tmp_path / "golden"))


def by_id(report: dict) -> dict[str, dict]:
    records = {r["id"]: r for r in report["results"]}
    assert len(records) == len(report["results"]), "two results with one id"
    return records


def written_tests(out: Path) -> dict[str, str]:
    """Each test the manifest lists as written, by the id of the case it was written from."""
    tests = json.loads((out / "manifest.json").read_text())["tests"]
    return {t["id"]: t["name"] for t in tests if t["status"].startswith("written")}


def test_run_from_and_verify_give_the_ids_run_gives(conform, tmp_path, generated):
    ran = by_id(conform("run", *SLICE_13, "--examples", "2").report)
    stored = by_id(conform("run", "--from", str(generated)).report)
    verified = conform("verify", str(generated), "--report-json", str(tmp_path / "verify.json"))
    checked = by_id(json.loads((tmp_path / "verify.json").read_text()))

    written = written_tests(generated)
    assert KNOWN_ID in written and written[KNOWN_ID] == KNOWN_TEST
    assert any("/hypothesis-" in i for i in written)  # hypothesis's cases are named by their case too
    assert set(stored) == set(checked) == set(written) and set(written) < set(ran)
    assert verified.code == 0 and all(r["outcome"] == "pass" for r in checked.values())
    for case_id, record in stored.items():
        assert record["case"] == ran[case_id]["case"] == case_id.split("/")[1]
        assert record["outcome"] == ran[case_id]["outcome"], case_id  # the golden data holds the reference's output
        assert record["source"] == f"golden:{generated / written[case_id]}"
        assert f" --case {shlex.quote(case_id)} " in record["replay"]


def test_a_replay_of_run_from_runs_the_one_case_under_its_id(conform, tmp_path, generated):
    run = conform("run", "--from", str(generated))
    record = next(r for r in run.report["results"] if r["outcome"] == "unsupported" or r["outcome"] == "fail")
    words = shlex.split(record["replay"])
    again = conform(*words[1:])
    assert [(r["id"], r["outcome"]) for r in again.report["results"]] == [(record["id"], record["outcome"])]


def test_run_from_groups_failures_as_run_does(conform, tmp_path, generated):
    run = conform("run", *SLICE_13, "--examples", "2")
    stored = conform("run", "--from", str(generated))
    assert run.code == stored.code == 1  # onnxruntime deviates from the text in Slice-13

    def families(text: str) -> list[str]:
        """The family each FAIL panel shows: its case, or a version's hypothesis cases."""
        shown = re.findall(r"^─+ FAIL ─+\n(\S+)", text, flags=re.M)
        return ["hypothesis" if "/hypothesis-" in i else i.split("/")[1] for i in shown]

    # A golden run goes through its tests in their directories' order: the same families, in another order.
    assert families(stored.stdout) and sorted(families(stored.stdout)) == sorted(families(run.stdout))


def test_an_expectations_file_written_by_run_applies_to_run_from(conform, tmp_path):
    out, expect = tmp_path / "golden", tmp_path / "expect.yaml"
    assert conform("generate", *SLICE_13, "--no-hypothesis", "--out", str(out)).code == 0
    first = conform("run", *SLICE_13, "--no-hypothesis", "--write-expect", str(expect))
    assert first.code == 1 and expect.is_file()  # onnxruntime deviates from the text in Slice-13

    gated = conform("run", *SLICE_13, "--no-hypothesis", "--expect", str(expect), "--strict")
    stored = conform("run", "--from", str(out), "--expect", str(expect), "--strict")
    assert stored.code == gated.code == 0, stored.stdout
    assert stored.report["stale_expectations"] == gated.report["stale_expectations"] == []
    assert "STALE" not in stored.stdout
    xfail = lambda report: {r["id"] for r in report["results"] if r["outcome"] == "xfail"}
    assert xfail(stored.report) and xfail(stored.report) == xfail(gated.report) & set(by_id(stored.report))


def test_a_test_without_a_recorded_case_keeps_its_directory_name(conform, tmp_path, uint8_cases):
    out = uint8_cases
    model_file = out / KNOWN_TEST / "model.onnx"
    model = onnx.load(model_file)
    assert [(p.key, p.value) for p in model.metadata_props] == [(golden.CASE_KEY, KNOWN_CASE)]
    del model.metadata_props[:]  # as conform wrote tests before it recorded their case, or as onnx writes its own
    onnx.save(model, model_file)
    run = conform("run", "--from", str(out / KNOWN_TEST))
    assert [r["id"] for r in run.report["results"]] == [f"Slice-13/{KNOWN_TEST}/uint8/int32"]


def _recording(out: Path, *values) -> Path:
    """The known test, its model recording `values` (str or raw bytes) under the case key."""
    model_file = out / KNOWN_TEST / "model.onnx"
    model = onnx.load(model_file)
    del model.metadata_props[:]
    placeholders = {}
    for index, value in enumerate(values):
        stand_in = f"@@{index:04d}@@" if isinstance(value, bytes) else value
        placeholders[stand_in.encode()] = value
        model.metadata_props.add(key=golden.CASE_KEY, value=stand_in)
    data = model.SerializeToString()
    for stand_in, value in placeholders.items():
        if isinstance(value, bytes):  # what protobuf will not write from Python: a string that is not UTF-8
            assert len(value) == len(stand_in)
            data = data.replace(stand_in, value)
    model_file.write_bytes(data)
    return out / KNOWN_TEST


HOSTILE = [
    (("evil\x1b[2J\nname",), "'evil\\x1b[2J\\nname' holds a control character"),
    (("x" * 100_000,), "100,000 characters, more than the 255"),
    ((KNOWN_CASE, "negative_start"), "2 entries, where conform writes one"),
    (("   ",), "empty"),
    ((b"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8",), "not UTF-8 text"),
    (("Hypothesis 0001",), "'Hypothesis 0001' is written as hypothesis's cases are named"),
]


@pytest.mark.parametrize("values, why", HOSTILE)
def test_a_malformed_recorded_case_is_refused_naming_the_model(conform, tmp_path, uint8_cases, values, why):
    out = uint8_cases
    test = _recording(out, *values)

    verified = conform("verify", str(out), "--report-json", str(tmp_path / "v.json"))
    assert verified.code == 1 and "Traceback" not in verified.stdout + verified.stderr
    [unreadable] = json.loads((tmp_path / "v.json").read_text())["unreadable"]
    message = unreadable["reason"]
    assert unreadable["path"] == str(test) and message.startswith(f"{test / 'model.onnx'}: metadata '{golden.CASE_KEY}': ")
    assert why in message and "\n" not in message  # one line, whatever the model holds
    assert f"metadata '{golden.CASE_KEY}'" in verified.stdout and "\x1b[2J" not in verified.stdout

    stored = conform("run", "--from", str(test))
    assert stored.code == 2 and "Traceback" not in stored.stdout + stored.stderr
    assert why in (stored.stdout + stored.stderr).replace("\n", "")


@pytest.mark.parametrize("recorded", ["negative_start", "NEGATIVE step int max end!", "negative_step_int_max_end/uint8"])
def test_a_recorded_case_that_does_not_name_the_directory_is_ignored(conform, tmp_path, uint8_cases, recorded):
    """Another case's name (a directory renamed, or a stranger's claim) never gives the test that
    case's id: the directory's name names it, as it names any test."""
    out = uint8_cases
    test = _recording(out, recorded)
    run = conform("run", "--from", str(test))
    expected = "Slice-13/NEGATIVE step int max end!/uint8/int32" if recorded.startswith("NEGATIVE") else \
        f"Slice-13/{KNOWN_TEST}/uint8/int32"
    assert [r["id"] for r in run.report["results"]] == [expected]


def test_the_recorded_case_is_read_within_bounds(tmp_path):
    model = onnx.ModelProto()
    assert golden.recorded_case(model, tmp_path) is None
    model.metadata_props.add(key="other.tool", value="\x1b" * 10)  # another tool's keys are not conform's to judge
    assert golden.recorded_case(model, tmp_path) is None
    model.metadata_props.add(key=golden.CASE_KEY, value="a" * golden.MAX_CASE_NAME)
    assert golden.recorded_case(model, tmp_path) == "a" * golden.MAX_CASE_NAME
    model.metadata_props[-1].value = "a" * (golden.MAX_CASE_NAME + 1)
    with pytest.raises(GoldenError, match=f"{golden.MAX_CASE_NAME + 1} characters"):
        golden.recorded_case(model, tmp_path)
