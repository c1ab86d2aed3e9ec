"""The CLI contract: exit codes, one-line errors (never a traceback), reports, replay."""

import json
import re
from pathlib import Path
import subprocess
import sys

import numpy as np
import onnx
import pytest
from xml.etree import ElementTree
from conftest import MY_SLICE_CASE, MY_SLICE_CASE_ID, replayed, without_timings


def assert_clean_error(result, code, *fragments):
    assert result.code == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def test_main_command_on_onnxruntime_cpu_finds_only_the_int_max_deviation(conform):
    result = conform("run", "--op", "Slice", "--opset", "13", "--no-hypothesis")
    assert result.code == 1, result.stdout
    report = result.report
    failed = {r["case"] for r in report["results"] if r["outcome"] == "fail"}
    # onnxruntime reads ends == INT_MAX with a negative step as "to the start" instead of clamping.
    assert failed == {"negative_step_int_max_end", "negative_step_int32_max_end_in_int64_index"}
    assert report["summary"]["total"] > 100
    assert report["runner"]["provider"] == "CPUExecutionProvider"
    record = report["results"][0]
    for key in ("id", "op", "opset", "dtype", "case", "source", "outcome", "message", "inputs", "attributes", "expected", "actual"):
        assert key in record
    assert record["source"].startswith("yaml:cases/slice/")


def test_report_lists_every_dtype_of_each_version(conform):
    from conformance.registry import versions

    report = conform("run", "--op", "Slice", "--no-hypothesis").report
    for version in versions("Slice"):
        seen = {r["dtype"] for r in report["results"] if r["opset"] == version.since_version}
        assert set(version.allowed("T")) <= seen, version.label


def test_unknown_op_is_exit_2(conform):
    from conformance.reference import covered_ops

    assert_clean_error(conform("run", "--op", "NoSuchOp"), 2, "unknown op 'NoSuchOp'", ", ".join(covered_ops()))


def test_opset_out_of_range_is_exit_2(conform):
    assert_clean_error(conform("run", "--op", "ConstantOfShape", "--opset", "8"), 2, "first version is 9")
    assert_clean_error(conform("run", "--op", "Slice", "--opset", "99"), 2, "above the newest")


def test_dtype_the_version_does_not_allow_is_exit_2_with_the_allowed_list(conform):
    assert_clean_error(conform("run", "--op", "Clip", "--opset", "11", "--dtype", "int32"), 2,
                       "not allowed by Clip-11", "allowed: double, float, float16")


def test_provider_not_installed_is_exit_3(conform):
    assert_clean_error(conform("run", "--op", "Slice", "--provider", "dml"), 3, "not available (available:",
                       "to install it: pip install onnxruntime-directml")


def test_backend_without_prepare_is_exit_3(conform):
    assert_clean_error(conform("run", "--op", "Slice", "--backend", "not_a_backend"), 3, "no prepare(model, device)")


def test_bad_case_file_is_exit_2_naming_file_and_line(conform, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("op: Slice\ncases:\n  - name: x\n    dtypse: [float]\n")
    assert_clean_error(conform("run", "--op", "Slice", "--cases", str(bad)), 2, "bad.yaml:4", "did you mean 'dtypes'")


def test_a_wrong_backend_fails_with_a_diff_and_a_replay_command(conform):
    result = conform("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--backend", "wrong_slice", "--no-hypothesis")
    assert result.code == 1
    failures = [r for r in result.report["results"] if r["outcome"] == "fail"]
    assert failures and all(r["replay"].startswith("conform run --op Slice --opset 13 --no-hypothesis --case") for r in failures)
    assert "values differ" in result.stdout or "expected" in result.stdout
    again = replayed(conform, failures[0])
    assert again.code == 1 and again.report["summary"]["total"] == 1




@pytest.mark.parametrize("given", ["--cases", "--only-cases"])
def test_a_case_from_a_given_case_file_replays_from_that_file(conform, tmp_path, given):
    # The replay named the case's id alone, and without the file conform found no case with it (exit 2).
    (tmp_path / "mine.yaml").write_text(MY_SLICE_CASE)
    run = conform("run", "--op", "Slice", "--opset", "13", "--no-hypothesis", given, "mine.yaml", "--backend", "wrong_slice",
                  "--case", MY_SLICE_CASE_ID)
    [record] = run.report["results"]
    assert record["outcome"] == "fail" and "--only-cases mine.yaml" in record["replay"]
    again = replayed(conform, record)
    assert again.code == 1, again.stderr
    assert [(r["id"], r["outcome"]) for r in again.report["results"]] == [(MY_SLICE_CASE_ID, "fail")]


def test_a_builtin_case_replays_without_the_given_case_files(conform, tmp_path):
    (tmp_path / "mine.yaml").write_text(MY_SLICE_CASE)
    run = conform("run", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--cases", "mine.yaml", "--backend", "wrong_slice",
                  "--dtype", "float")
    builtin = [r for r in run.report["results"] if r["outcome"] == "fail" and r["id"] != MY_SLICE_CASE_ID]
    assert builtin and not any("--only-cases" in r["replay"] or "mine.yaml" in r["replay"] for r in builtin)
    assert replayed(conform, builtin[0]).code == 1


def test_a_replay_judges_its_case_under_the_runs_strict_zero(conform):
    # The replay left --strict-zero out: a case failed for a -0.0 (signed_zero answers every zero
    # so) replayed as a pass.
    args = ("run", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "signed_zero")
    plain, strict = conform(*args), conform(*args, "--strict-zero")
    failed = [r for r in strict.report["results"] if r["outcome"] == "fail"]
    assert failed and plain.code == 0 and strict.code == 1
    assert {r["id"]: r["outcome"] for r in plain.report["results"]}[failed[0]["id"]] == "pass"
    again = replayed(conform, failed[0])
    assert again.code == 1 and [(r["id"], r["outcome"]) for r in again.report["results"]] == [(failed[0]["id"], "fail")]


def test_a_value_mismatch_s_one_line_message_says_how_many_values_differ_and_where_first(conform, tmp_path):
    # The message was "output 0: expected float[3], got float[3]", which is what a CI system shows
    # of a failure (JUnit's message) and what pytest's summary quotes: it read as if nothing differed.
    junit = tmp_path / "r.xml"
    run = conform("run", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "signed_zero",
                  "--strict-zero", "--junit", str(junit))
    failed = [r for r in run.report["results"] if r["outcome"] == "fail"]
    shown = {case.get("name"): case.find("failure").get("message")
             for case in ElementTree.parse(junit).getroot().iter("testcase") if case.find("failure") is not None}
    assert failed and set(shown) == {r["id"] for r in failed}
    for record in failed:
        expected = np.array(record["expected"]["readings"][0]["outputs"][0]["data"], dtype=np.float64)
        actual = np.array(record["actual"][0]["data"], dtype=np.float64)
        differs = (np.signbit(expected) != np.signbit(actual)) | (expected != actual)
        first = [int(i) for i in np.argwhere(differs)[0]]
        for message in (record["message"], shown[record["id"]]):
            assert f"{int(differs.sum())} of {differs.size} values differ" in message, message
            assert f"; at {first}: expected " in message and ", got -0.0" in message, message


def test_a_replay_judges_its_case_under_the_runs_timeout(conform):
    # The replay left --timeout out: a case that timed out at 1 s was given 10 s on replay (and a
    # case slower than 1 s but faster than 10 replayed as a pass).
    hanging = "Slice-13/start_beyond_dim/float/int64"  # the crashy backend sleeps 600 s on it
    run = conform("run", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--backend", "crashy", "--case", hanging,
                  "--timeout", "1")
    [record] = run.report["results"]
    assert record["outcome"] == "timeout" and "--timeout 1 " in record["replay"]
    again = replayed(conform, record)
    assert [(r["id"], r["outcome"], r["message"]) for r in again.report["results"]] == [(hanging, "timeout", record["message"])]


def test_a_runs_timeout_is_in_every_replay_whatever_its_jobs(conform):
    args = ("run", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--dtype", "float", "--backend", "wrong_slice", "--timeout", "3")
    serial, side_by_side = conform(*args, "--jobs", "1"), conform(*args, "--jobs", "2")
    replays = [[r["replay"] for r in run.report["results"]] for run in (serial, side_by_side)]
    assert replays[0] == replays[1] and all(" --timeout 3 " in replay for replay in replays[0])
    default = conform(*args[:-2])
    assert not any("--timeout" in r["replay"] for r in default.report["results"])


@pytest.mark.parametrize("gate, outcome, args", [
    # onnx.reference accepts Slice's starts and ends of different lengths
    ("--strict-validation", "lenient", ("--op", "Slice", "--opset", "13", "--runner", "reference", "--dtype", "float")),
    ("--fail-on-unsupported", "unsupported", ("--op", "Clip", "--opset", "12", "--dtype", "int16")),  # not in onnxruntime
])
def test_a_replay_fails_where_its_case_failed_the_run(conform, gate, outcome, args):
    # The replay left the gate out: a case that failed the run (exit 1) replayed to exit 0.
    run = conform("run", "--no-hypothesis", *args, gate)
    gated = [r for r in run.report["results"] if r["outcome"] == outcome]
    assert run.code == 1 and gated and gate in gated[0]["replay"]
    again = replayed(conform, gated[0])
    assert again.code == 1 and [(r["id"], r["outcome"]) for r in again.report["results"]] == [(gated[0]["id"], outcome)]


def test_a_replay_refuses_a_case_too_large_as_the_run_did(conform):
    run = conform("run", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--max-elements", "6")
    refused = [r for r in run.report["results"] if r["outcome"] == "skipped"]
    assert refused and "--max-elements 6" in refused[0]["replay"]
    again = replayed(conform, refused[0])
    assert [(r["id"], r["outcome"]) for r in again.report["results"]] == [(refused[0]["id"], "skipped")]


def _with_a_negative_zero_stored(tmp_path):
    """Golden Clip-13 float tests, one of whose stored outputs has its zeros as -0.0; that test."""
    from onnx import numpy_helper

    golden = tmp_path / "golden"
    assert subprocess.run([sys.executable, "-m", "conformance", "generate", "--op", "Clip", "--opset", "13", "--dtype", "float",
                           "--no-hypothesis", "--out", str(golden)], capture_output=True).returncode == 0
    test = golden / "test_clip_13_neither_bound_float"
    stored = test / "test_data_set_0" / "output_0.pb"
    array = numpy_helper.to_array(onnx.load_tensor(str(stored)))
    assert (array == 0).any()
    signed = numpy_helper.from_array(np.where(array == 0, np.float32(-0.0), array), "output")
    stored.write_bytes(signed.SerializeToString())
    return golden, test


def test_run_from_names_its_default_report_after_the_folder_it_ran(conform, tmp_path):
    golden, _ = _with_a_negative_zero_stored(tmp_path)
    ran = conform("run", "--from", str(golden), "--op", "Clip", report=False)
    written = sorted(p.name for p in (tmp_path / "reports").glob("*.json"))
    assert ran.code in (0, 1) and written == ["golden-Clip.json"], (written, ran.stderr)


def test_golden_replays_keep_strict_zero(conform, tmp_path):
    golden, test = _with_a_negative_zero_stored(tmp_path)
    assert conform("verify", str(golden)).code == 0
    verified = conform("verify", str(golden), "--strict-zero", "--report-json", str(tmp_path / "v.json"))
    report = json.loads((tmp_path / "v.json").read_text())
    [failed] = [r for r in report["results"] if r["outcome"] == "fail"]
    assert verified.code == 1 and failed["replay"] == f"conform verify {test} --strict-zero"
    # The report says what judged it: the same data passes without --strict-zero.
    assert report["options"]["strict_zero"] is True and report["options"]["paths"] == [str(golden)]
    assert replayed(conform, failed).code == 1
    ran = conform("run", "--from", str(golden), "--backend", "signed_zero", "--strict-zero")
    failed = [r for r in ran.report["results"] if r["outcome"] == "fail"]
    assert failed and all("--strict-zero" in r["replay"] for r in failed)
    again = replayed(conform, failed[0])
    assert again.code == 1 and [r["outcome"] for r in again.report["results"]] == ["fail"]


def test_case_filter_with_unknown_id_is_exit_2(conform):
    assert_clean_error(conform("run", "--op", "Slice", "--case", "Slice-13/nope/float/int64"), 2, "no case with id")


ONE_CLIP_CASE = """\
op: Clip
cases:
  - name: only_one
    versions: [13]
    dtypes: [float]
    inputs: {input: [0, 5, 10], min: 3, max: 6}
"""


@pytest.mark.parametrize("options, why", [
    (("--no-yaml", "--no-hypothesis"), "--no-yaml and --no-hypothesis together leave no source of cases"),
    (("--no-yaml", "--examples", "0"), "no case of Clip-13 from hypothesis with --examples 0"),
    (("--no-yaml", "--examples", "0", "--jobs", "2"), "no case of Clip-13 from hypothesis with --examples 0"),
    (("--no-hypothesis", "--dtype", "double"), "no case of Clip-13 in dtype double from the case files (hypothesis is off)"),
])
def test_a_run_of_no_cases_is_an_error_not_a_pass(conform, tmp_path, options, why):
    (tmp_path / "one.yaml").write_text(ONE_CLIP_CASE)
    result = conform("run", "--op", "Clip", "--opset", "13", "--only-cases", "one.yaml", *options)
    assert_clean_error(result, 2, f"nothing to run: {why}")
    assert not result.report_path.exists()


@pytest.mark.parametrize("command", [("run", "--op", "Clip"), ("diff", "--op", "Clip", "--against", "reference")])
@pytest.mark.parametrize("seconds", ["inf", "1e300"])
def test_a_timeout_beyond_a_day_is_a_usage_error_not_a_clock_overflow(conform, command, seconds):
    # `inf` reached the worker's wait and raised OverflowError from the system clock.
    result = conform(*command, "--opset", "13", "--no-hypothesis", "--timeout", seconds)
    assert_clean_error(result, 2, "--timeout", "86400")


@pytest.mark.parametrize("outputs, first, second", [
    (("--report-json", "r.json", "--junit", "./r.json"), "the JSON report", "the JUnit report"),
    (("--report-json", "r.xml", "--ci"), "the JSON report", "the JUnit report"),
    (("--junit", "out/r.xml", "--html", "out/../out/r.xml"), "the JUnit report", "the HTML report"),
    (("--report-json", "-", "--junit", "/dev/stdout"), "the JSON report", "the JUnit report"),  # one document after the other
])
def test_two_reports_to_one_file_is_a_usage_error_before_the_run(conform, tmp_path, outputs, first, second):
    # Before, the report written last silently replaced the other.
    result = conform("run", "--op", "Clip", "--opset", "13", "--no-hypothesis", *outputs, report="--report-json" not in outputs)
    assert_clean_error(result, 2, f"{first} and {second} would both be written to")
    assert not any(p.suffix in (".json", ".xml") for p in tmp_path.rglob("*"))


@pytest.mark.parametrize("target", ["-", "/dev/stdout"])
def test_a_report_to_stdout_is_all_stdout_holds_and_what_goes_beside_it_goes_under_reports(conform, tmp_path, target):
    # `-` wrote a file named '-'; /dev/stdout got the console report around the JSON, and the
    # shrunk cases went to /dev/minimal (a folder beside the report), the --ci reports to /dev/stdout.xml.
    result = conform("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--examples", "4", "--report-json", target, "--ci",
                    report=False)
    doc = json.loads(result.stdout)
    failing = [r for r in doc["results"] if r["outcome"] == "fail"]
    assert result.code == 1 and failing and doc["summary"]["fail"] == len(failing)
    assert f"{doc['summary']['total']} cases:" in result.stderr and "JSON report: " in result.stderr
    minimal = [Path(r["minimal"]["file"]) for r in failing if "minimal" in r]
    assert minimal and all(path.parent == Path("reports/minimal/onnxruntime-cpu/input") and (tmp_path / path).is_file() for path in minimal)
    junit = ElementTree.parse(tmp_path / "reports" / "Slice-13.xml").getroot()
    assert junit.get("failures") == str(len(failing)) and (tmp_path / "reports" / "Slice-13.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reports"]


def test_merge_and_verify_write_a_report_to_stdout_alone(conform, tmp_path):
    shards = [conform("run", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--shard", f"{k}/2", "--report-json", f"s{k}.json",
                      report=False) for k in (1, 2)]
    merged = conform("merge", "s1.json", "s2.json", "--report-json", "-")
    total = sum(json.loads((tmp_path / f"s{k}.json").read_text())["summary"]["total"] for k in (1, 2))
    assert json.loads(merged.stdout)["summary"]["total"] == total and all(s.code in (0, 1) for s in shards)
    assert "JSON report: stdout" in merged.stderr
    assert conform("generate", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--out", "golden").code == 0
    verified = conform("verify", "golden", "--report-json", "-")
    assert verified.code == 0 and json.loads(verified.stdout)["summary"]["pass"] > 0 and "JSON report: stdout" in verified.stderr
    assert not (tmp_path / "-").exists()


def test_an_empty_shard_of_a_selection_passes_and_the_other_holds_the_case(conform, tmp_path):
    (tmp_path / "one.yaml").write_text(ONE_CLIP_CASE)
    totals = []
    for shard in ("1/2", "2/2"):
        result = conform("run", "--op", "Clip", "--opset", "13", "--only-cases", "one.yaml", "--no-hypothesis", "--shard", shard,
                         "--report-json", f"shard{shard[0]}.json")
        assert result.code == 0, result.stderr
        totals.append(json.loads((tmp_path / f"shard{shard[0]}.json").read_text())["summary"]["total"])
    assert sorted(totals) == [0, 1]


@pytest.mark.parametrize("options, why", [
    (("--no-yaml", "--examples", "0"), "no case of Clip-13 from hypothesis with --examples 0"),
    (("--no-yaml", "--examples", "0", "--jobs", "2"), "no case of Clip-13 from hypothesis with --examples 0"),
    (("--no-hypothesis", "--dtype", "double"), "no case of Clip-13 in dtype double from the case files (hypothesis is off)"),
])
def test_a_selection_no_shard_holds_is_an_error_in_every_shard(conform, tmp_path, options, why):
    # Each shard of an empty selection used to exit 0 with a report of nothing: a CI job sharded
    # this way passed while it ran nothing at all.
    (tmp_path / "one.yaml").write_text(ONE_CLIP_CASE)
    for shard in ("1/2", "2/2"):
        result = conform("run", "--op", "Clip", "--opset", "13", "--only-cases", "one.yaml", *options, "--shard", shard)
        assert_clean_error(result, 2, f"nothing to run in any of the 2 shards: {why}")
        assert not result.report_path.exists()


STEPS_IN_EVERY_VERSION = """\
op: Slice
cases:
  - name: stepped
    versions: [1, 13]
    dtypes: [float]
    inputs: {data: [1.0, 2.0, 3.0], starts: [0], ends: [2], axes: [0], steps: [1]}
"""


def test_a_run_checks_the_values_of_the_versions_it_runs_and_list_checks_every_one(conform, tmp_path):
    # A run expands the case files' cases only in the op versions it runs (the main job's plan:
    # 0.20 s -> 0.08 s), and checks the structure of its ops' files only (with 68 ops' files,
    # 0.22 s -> 0.05 s a run); `list` checks every file.
    (tmp_path / "stepped.yaml").write_text(STEPS_IN_EVERY_VERSION)
    (tmp_path / "clip_typo.yaml").write_text("op: Clip\ncases:\n  - name: x\n    dtypse: [float]\n")
    only = ("--only-cases", "stepped.yaml", "--no-hypothesis")
    ran = conform("run", "--op", "Slice", "--opset", "13", *only)
    assert ran.code == 0 and [r["id"] for r in ran.report["results"]] == [f"Slice-13/stepped/float/{t}" for t in ("int32", "int64")], ran.stderr
    why = "case 'stepped': 'steps' is neither an input nor an attribute of Slice-1"
    assert_clean_error(conform("run", "--op", "Slice", "--opset", "1", *only), 2, "stepped.yaml:3", why)
    assert_clean_error(conform("run", "--op", "Slice", *only), 2, "stepped.yaml:3", why)
    listed = conform("list", "--only-cases", "stepped.yaml")
    assert listed.code == 2 and "stepped.yaml:3" in listed.stderr and why in listed.stderr, listed.stderr
    other_op = conform("run", "--op", "Slice", "--opset", "13", *only, "--only-cases", "clip_typo.yaml")
    assert other_op.code == 0, other_op.stderr
    typo = conform("run", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--only-cases", "clip_typo.yaml")
    assert_clean_error(typo, 2, "clip_typo.yaml:4", "did you mean 'dtypes'")
    assert_clean_error(conform("list", "--only-cases", "clip_typo.yaml"), 2, "clip_typo.yaml:4", "did you mean 'dtypes'")


def test_a_case_folder_without_case_files_is_exit_2(conform, tmp_path):
    (tmp_path / "empty").mkdir()
    assert_clean_error(conform("run", "--op", "Clip", "--only-cases", "empty"), 2, "empty: no case files (*.yaml, *.yml)")


def test_generate_of_no_cases_is_exit_2_and_writes_nothing(conform, tmp_path):
    result = conform("generate", "--op", "Clip", "--opset", "13", "--out", "golden", "--no-yaml", "--examples", "0")
    assert_clean_error(result, 2, "nothing to run: no case of Clip-13 from hypothesis with --examples 0")
    assert not (tmp_path / "golden").exists()


def test_reference_runner_is_selectable(conform):
    result = conform("run", "--op", "Clip", "--opset", "13", "--runner", "reference")
    assert result.report["runner"]["name"] == "onnx.reference"
    assert result.code in (0, 1)


def test_lenient_fails_only_under_strict_validation(conform):
    plain = conform("run", "--op", "Slice", "--opset", "10", "--dtype", "float", "--no-hypothesis")
    assert plain.report["summary"]["lenient"] > 0
    only_lenient = ["--case", "Slice-10/negative_axis_before_11/float/int64"]
    assert conform("run", "--op", "Slice", "--opset", "10", "--no-hypothesis", *only_lenient).code == 0
    strict = conform("run", "--op", "Slice", "--opset", "10", "--no-hypothesis", "--strict-validation", *only_lenient)
    assert strict.code == 1


def test_list_shows_every_version_and_case_counts(conform):
    result = conform("list")
    assert result.code == 0
    for label in ("Clip", "ConstantOfShape", "Slice", "float8e8m0", "uint2"):
        assert label in result.stdout


def test_json_report_is_strict_json(conform):
    result = conform("run", "--op", "Clip", "--opset", "13")
    json.loads(result.report_path.read_text(), parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))


def failing_ids(result):
    return {r["id"] for r in result.report["results"] if r["outcome"] == "fail"}


@pytest.mark.parametrize("wrong", ["wrong_slice", "wrong_axes"])
def test_hypothesis_catches_a_planted_bug_with_default_examples_and_shrinks_it(conform, wrong):
    common = ("run", "--op", "Slice", "--opset", "13", "--no-yaml", "--dtype", "float", "--dtype", "int32")
    honest = conform(*common, "--backend", "onnxruntime.backend")
    planted = conform(*common, "--backend", wrong)
    assert planted.code == 1
    assert failing_ids(planted) - failing_ids(honest), "the planted bug was not caught"
    minimal = [r["minimal"] for r in planted.report["results"] if "yaml" in r.get("minimal", {})]
    assert minimal
    import yaml
    case = yaml.safe_load(minimal[0]["yaml"])["cases"][0]
    data = np.array(case["inputs"]["data"]) if isinstance(case["inputs"]["data"], list) else np.zeros(case["inputs"]["data"]["shape"])
    assert data.size <= 4  # small: the bug shows on a handful of elements
    again = replayed(conform, minimal[0])
    assert again.code == 1 and again.report["summary"]["total"] == 1


def test_same_seed_gives_byte_identical_reports_apart_from_timings(conform, tmp_path):
    args = ("run", "--op", "Clip", "--opset", "13", "--no-yaml", "--examples", "5", "--seed", "7")
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    conform(*args, "--report-json", str(first))
    conform(*args, "--report-json", str(second))
    assert without_timings(first) == without_timings(second)
    sources = {r["source"] for r in json.loads(first.read_text())["results"]}
    assert sources == {"hypothesis"}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_progress_bar_counts_to_the_number_of_results(conform_on_a_terminal, tmp_path, jobs):
    # With --jobs the workers draw the hypothesis groups: the total is counted from the plan.
    report = tmp_path / "r.json"
    drawn = conform_on_a_terminal("run", "--op", "Clip", "--opset", "13", "--mode", "all", "--examples", "7",
                                  "--shrink", "0", "--jobs", jobs, "--report-json", str(report))
    results = json.loads(report.read_text())["summary"]["total"]
    counts = drawn.counts("Clip")
    assert drawn.code == 1 and counts[-1] == (results, str(results)) and {total for _, total in counts} == {str(results)}


def test_the_progress_bar_names_the_op_running_the_ops_done_and_the_pace(conform_on_a_terminal, tmp_path):
    drawn = conform_on_a_terminal("run", "--op", "Abs", "--op", "Neg", "--opset", "13", "--examples", "20",
                                  "--jobs", "1", "--report-json", str(tmp_path / "r.json"))
    assert "Neg (1 op done)" in drawn.text, drawn.text[-2000:]
    assert re.search(r"\d cases/s", drawn.text), "the bar shows how many cases a second"
    assert " left " in drawn.text, "the bar shows the time left"


def test_a_progress_bar_whose_total_hypothesis_does_not_know_says_so(conform_on_a_terminal, tmp_path):
    # A shard of hypothesis cases is known only once they are drawn (in the workers).
    report = tmp_path / "r.json"
    drawn = conform_on_a_terminal("run", "--op", "Clip", "--opset", "13", "--examples", "10", "--shard", "1/2",
                                  "--shrink", "0", "--jobs", "2", "--report-json", str(report))
    results = json.loads(report.read_text())["summary"]["total"]
    assert drawn.counts("Clip")[-1] == (results, "?")


def test_the_entry_module_imports_nothing_so_worker_processes_start_light():
    # multiprocessing starts every worker (the isolated runtime's, --jobs') by importing the main
    # module again: the `conform` command's must not pull in the command line and its libraries.
    # Nor may what it imports to start the fork server first thing: when that module lived in
    # `conformance.runners`, importing it imported that package's numpy and onnx first (~0.25-0.4 s),
    # and the server, importing its own, was still busy when the first workers were asked for.
    import subprocess
    import sys
    from importlib.metadata import entry_points

    heavy = ("conformance.cli", "typer", "rich", "hypothesis", "onnxruntime",
             "numpy", "onnx", "conformance.runners", "conformance.model")
    probe = f"import sys, conformance.__main__, conformance.lifetime; print([m for m in {heavy!r} if m in sys.modules])"
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert completed.stdout.strip() == "[]", completed.stderr
    assert entry_points(group="console_scripts")["conform"].value == "conformance.__main__:main"


@pytest.mark.parametrize("code, status, told", [("None", 0, ""), ("3", 3, ""), ("'cannot go on'", 1, "cannot go on")])
def test_the_command_ends_without_the_interpreters_tear_down_and_loses_nothing_it_printed(code, status, told):
    # Freeing a run's results and modules object by object took 0.08-0.15 s of every command; the
    # command ends as sys.exit would, with what it printed (block-buffered in a pipe) all out.
    import os
    import subprocess
    import sys

    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    probe = ("import atexit, sys; from conformance.__main__ import leave; atexit.register(print, 'torn down'); "
             f"sys.stdout.write('the last line of the report'); sys.stderr.write('a note; '); leave({code})")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=buffered)
    assert completed.returncode == status
    assert completed.stdout == "the last line of the report"
    assert completed.stderr.strip() == f"a note; {told}".strip()


def test_planning_a_run_does_not_import_hypothesis_which_only_the_workers_that_draw_need():
    # The main process of a --jobs run plans the hypothesis groups and draws none: its start-up,
    # part of every run, is ~0.08 s shorter without hypothesis's import.
    import subprocess
    import sys

    probe = ("import sys, conformance.cli; from conformance.execute import RunOptions, plan; "
             "units = plan(RunOptions(op='Slice')); print(sum(u.version is not None for u in units), 'hypothesis' in sys.modules)")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    groups, imported = completed.stdout.split()
    assert int(groups) > 0 and imported == "False", completed.stderr


def test_a_report_that_cannot_be_written_is_exit_4_before_the_run(conform, tmp_path):
    # A file where a folder should be stops even root (CI may run as root, which ignores modes).
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    result = conform("run", "--op", "Slice", "--opset", "13", "--report-json", str(blocker / "r.json"))
    assert_clean_error(result, 4, "cannot write the JSON report", str(blocker / "r.json"))
    assert "cases:" not in result.stdout  # refused before any case ran, not after
    junit = conform("run", "--op", "Slice", "--opset", "13", "--junit", str(blocker / "r.xml"))
    assert_clean_error(junit, 4, "cannot write the JUnit report")
    folder = conform("run", "--op", "Slice", "--opset", "13", "--report-json", str(tmp_path))
    assert_clean_error(folder, 4, "cannot write the JSON report", "it is a folder")
    assert blocker.read_text() == "a file, not a folder"


def test_golden_data_that_cannot_be_written_is_exit_4(conform, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    result = conform("generate", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--out", str(blocker / "golden"))
    assert_clean_error(result, 4, "cannot write golden tests into", str(blocker / "golden"))


def test_an_error_is_printed_whole_on_one_line_with_its_square_brackets(conform, tmp_path):
    """In a CI log (80 columns, no terminal) a message longer than that stays one line, and text in
    square brackets (a YAML list, a `[/x]` a user wrote) is printed as it is, not read as markup."""
    folder = tmp_path / "cases" / "Slice"
    folder.mkdir(parents=True)
    (folder / "bad.yaml").write_text('op: Slice\ndefaults: [bold, "[/x]"]\ncases:\n  - name: a\n')
    result = conform("run", "--op", "Slice", "--opset", "13", "--cases", str(tmp_path / "cases"), columns=None)
    [line] = result.stderr.splitlines()
    assert result.code == 2 and len(line) > 80
    assert line.startswith("error: cases/Slice/bad.yaml:2: 'defaults' must be a mapping")
    assert line.endswith("(like 'dtypes: [float]'), not ['bold', '[/x]']")


def test_what_a_command_says_it_wrote_is_one_line_in_a_ci_log_however_long_its_paths(conform, tmp_path):
    out = tmp_path / ("a_folder_with_a_long_name_" * 3) / "golden"
    result = conform("generate", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--out", str(out),
                     columns=None)
    [line] = [line for line in result.stdout.splitlines() if "tests written to" in line]
    assert result.code == 0 and len(line) > 80
    assert line.endswith(f"listed as skipped in {out / 'manifest.json'}")


def _declared_options(command: str) -> list[str]:
    import typer

    from conformance.cli import app

    group = typer.main.get_command(app)
    params = group.commands[command].params
    return [name for param in params if param.param_type_name == "option" for name in param.opts + param.secondary_opts]


@pytest.mark.parametrize("command", ["list", "run", "merge", "generate", "verify", "diff", "coverage"])
def test_help_in_80_columns_names_every_option_whole_and_fits(conform, command):
    """`conform run --help` on an 80-column terminal or in a CI log: typer's panels cut option
    names ('--strict-validati…') and folded their help into columns 20 letters wide."""
    result = conform(command, "--help", columns=None)
    assert result.code == 0 and "…" not in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80, result.stdout
    listed = {word.rstrip(",") for line in result.stdout.splitlines() for word in line.split()[:4]}
    assert set(_declared_options(command)) <= listed, sorted(set(_declared_options(command)) - listed)


@pytest.mark.parametrize("command", ["run", "diff"])
def test_help_shows_the_choices_of_the_options_that_take_one_of_a_few(conform, command):
    shown = conform(command, "--help", columns=None).stdout
    for option in ("--provider [cpu|cuda|dml]", "--runner [onnxruntime|reference|openvino|tract]", "--mode [input|initializer|constant|all]"):
        assert option in shown, f"'{option}' names its choices where the option is listed:\n{shown}"


def test_run_help_lists_its_options_under_what_they_are_for(conform):
    shown = conform("run", "--help", columns=None).stdout
    sections = [line for line in shown.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
    assert sections == ["Choosing the cases:", "The runtime:", "Judging:", "Reports:", "CI gating:", "Options:"], shown
    under = {}
    for line in shown.splitlines():
        if line in sections:
            heading = line
        elif line.startswith("  -"):
            under[line.split()[0].rstrip(",")] = heading
    assert (under["--op"], under["--provider"], under["--strict-zero"], under["--junit"], under["--ci"]) == (
        "Choosing the cases:", "The runtime:", "Judging:", "Reports:", "CI gating:"), under


def test_the_command_list_gives_each_commands_help_without_cutting_it(conform):
    result = conform("--help", columns=None)
    rows = result.stdout.split("Commands:\n")[1].split("\n\n")[0].splitlines()
    assert len(rows) == 9 and not any(row.endswith("...") for row in rows), rows


def test_a_usage_error_is_one_plain_line_in_a_ci_log(conform):
    result = conform("run", "--op", "Slice", "--opset", "abc", columns=None)
    assert_clean_error(result, 2, "--help' for help.")
    [line] = [line for line in result.stderr.splitlines() if "'abc'" in line]
    assert line == "Error: Invalid value for '--opset': 'abc' is not a valid int."
    assert not set("│╭╰") & set(result.stderr)


@pytest.mark.parametrize("command", [(), ("run",)])
def test_help_gives_the_exit_codes_a_ci_gate_reads(conform, command):
    from conformance.errors import OutputError, UnavailableError, UsageError

    text = " ".join(conform(*command, "--help", columns=None).stdout.split())
    assert "Exit codes: 0 conformant; 1 not (a fail," in text and "130 interrupted." in text
    for error in (UsageError, UnavailableError, OutputError):
        assert f"; {error.exit_code} a " in text


@pytest.mark.parametrize("command, zero, one, unavailable", [
    ("diff", "the two runners agree on every case", "they disagree on at least one", "a provider or backend not available"),
    ("verify", "every stored output is one the spec allows", "at least one is not", "no worker process could be started"),
    ("generate", "every test written", None, "no worker process could be started"),
    ("merge", "conformant (the shards' results together", "not (a fail,", None),
])
def test_every_command_s_help_says_what_its_exit_codes_mean_for_it(conform, command, zero, one, unavailable):
    from conformance.errors import OutputError, UnavailableError, UsageError

    text = " ".join(conform(command, "--help", columns=None).stdout.split())
    assert f"Exit codes: 0 {zero}" in text and text.endswith("130 interrupted.")
    assert (f"; 1 {one}" in text) if one else "; 1 " not in text
    assert f"; {UsageError.exit_code} a usage or input error" in text and f"; {OutputError.exit_code} a report" in text
    assert (f"; {UnavailableError.exit_code} {unavailable};" in text) if unavailable else f"; {UnavailableError.exit_code} " not in text


def test_conforms_own_arithmetic_on_special_values_prints_no_numpy_warning():
    """A signalling NaN widened, a float32 overflow a trait looks for: numpy's RuntimeWarnings from
    conform's modules would print in the middle of a run; those from elsewhere still show."""
    import subprocess
    import sys

    code = """
import numpy as np
from conformance.case import Example
from conformance.reference import for_op
from conformance.registry import versions
version = next(v for v in versions("Shrink") if v.since_version == 9)
huge = Example(version, "unit", {"T": "double"}, {"input": np.array([1e300])}, {}, "unit", "T")
assert for_op("Shrink").traits["beyond-float32"](huge)  # float32(1e300) overflows, on purpose
np.float32(1e300)  # this script's own: still warned
"""
    run = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    warned = [line for line in run.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == 1 and "<string>" in warned[0], run.stderr
