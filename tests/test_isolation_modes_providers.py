"""Runners that survive real runtimes: isolation, input modes, optimization levels, fallback
detection, DirectML semantics, and differential runs."""

import json
import os
import pickle
import time
from pathlib import Path

import numpy as np
import onnxruntime
import pytest

from conformance import casefile, scratch
from conformance.dtypes import all_names
from conformance.reference.clip import directml_clip_bound, directml_clip_note
from conformance.execute import RunOptions, Staged, select_examples, stage
from conformance.runners.fallback import PROFILES, fallback_message, next_profile_prefix, providers_that_ran, read_profile
from conformance.runners import wire
from conformance.runners.onnxruntime import OnnxRuntimeRunner, session_options
from conftest import BACKENDS, CRASHING, MY_SLICE_CASE, PASSING, failing_starts, replayed, with_test_backends

DATA = Path(__file__).parent / "data"
SLICE_FLOAT = ("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis")


def outcomes(report):
    return {(r["id"], r.get("mode", "input")): r for r in report["results"]}


def test_crashes_and_hangs_cost_one_case_each_and_the_run_goes_on(conform):
    result = conform(*SLICE_FLOAT, "--backend", "crashy", "--timeout", "2")
    assert result.code == 1
    by_case = {r["case"]: r for r in result.report["results"] if r["types"]["Tind"] == "int64"}
    assert by_case["negative_start"]["outcome"] == "crash" and "SIGSEGV" in by_case["negative_start"]["message"]
    assert by_case["negative_start_beyond_dim"]["outcome"] == "crash" and "code 7" in by_case["negative_start_beyond_dim"]["message"]
    hung = by_case["start_beyond_dim"]
    assert hung["outcome"] == "timeout"
    assert 2 <= hung["seconds"] < 6  # the hang sleeps 600 s: the worker is killed at the timeout
    others = [r for r in result.report["results"] if r["outcome"] not in ("crash", "timeout")]
    assert len(others) > 100 and sum(r["outcome"] == "pass" for r in others) > 100
    # The crashy backend's rule, applied to what each case fed: starts[0] of -3 or -100 crash, 7 hangs.
    first_start = [r["inputs"]["starts"]["data"][0] for r in result.report["results"]]
    summary = result.report["summary"]
    assert summary["crash"] == sum(s in (-3, -100) for s in first_start) >= 4
    assert summary["timeout"] == sum(s == 7 for s in first_start) >= 2


def test_report_is_complete_when_the_last_case_crashes(conform):
    last = "Slice-13/negative_start_beyond_dim/float/int64"  # after negative_end in the case file
    result = conform(*SLICE_FLOAT, "--backend", "crashy", "--case", "Slice-13/negative_end/float/int64", "--case", last)
    ids = [r["id"] for r in result.report["results"]]
    assert ids[-1] == last and result.report["results"][-1]["outcome"] == "crash"
    assert result.report["complete"] is True and result.code == 1


def test_a_case_that_fails_in_one_mode_only_is_shown_with_its_mode(conform):
    result = conform(*SLICE_FLOAT, "--backend", "mode_sensitive", "--mode", "all", "--case", "Slice-13/negative_start/float/int64")
    found = outcomes(result.report)
    modes = {mode: found[("Slice-13/negative_start/float/int64", mode)]["outcome"] for mode in ("input", "initializer", "constant")}
    assert modes == {"input": "pass", "initializer": "fail", "constant": "pass"}
    assert "differs between variants" in result.stdout and "initializer: fail" in result.stdout
    assert "--mode initializer" in found[("Slice-13/negative_start/float/int64", "initializer")]["replay"]


def test_every_mode_passes_the_checker_and_agrees_on_onnxruntime(conform):
    result = conform("run", "--op", "Clip", "--opset", "13", "--dtype", "int32", "--no-hypothesis", "--mode", "all")
    assert {r["mode"] for r in result.report["results"]} == {"input", "initializer", "constant"}
    assert not [r for r in result.report["results"] if r["outcome"] == "error"]


def test_optimization_levels_and_profiling_reach_the_session_options():
    on = session_options(onnxruntime, "on")
    off = session_options(onnxruntime, "off")
    assert off.graph_optimization_level == onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert on.graph_optimization_level != off.graph_optimization_level
    profiled = session_options(onnxruntime, "on", "/somewhere/session-1")
    assert not on.enable_profiling and profiled.enable_profiling and profiled.profile_file_prefix == "/somewhere/session-1"


def test_a_node_onnxruntime_hands_to_cpu_is_a_fallback_and_its_profiles_leave_nothing_behind(own_scratch, monkeypatch):
    # This onnxruntime has no CUDA provider: told it has, and asked for it, it runs each node on
    # CPU, as a CUDA build does with a node its provider has no kernel for. Each session made its
    # own folder in /tmp and left its profile there, one per model on every CUDA or DirectML run.
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    runner = OnnxRuntimeRunner("cuda")
    options = RunOptions(op="Clip", opset=13, dtypes=("float", "double"), use_hypothesis=False)
    staged = [item for item in (stage(e, runner, options) for e in select_examples(options)) if isinstance(item, Staged)][::10]
    assert len({item.built.data for item in staged}) >= 2  # sessions of their own
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):  # onnxruntime's own word on it
        runs = [runner.run(item.built) for item in staged + staged]  # each model's profile read once
    assert {run.error for run in runs} == {"fallback: ran on CPUExecutionProvider (requested CUDAExecutionProvider)"}
    assert {run.fault for run in runs} == {"fallback"}
    profiles = scratch.existing(PROFILES)
    assert profiles is not None and os.listdir(profiles) == []  # each read, then removed
    made = {next_profile_prefix() for _ in range(3)}  # a session's own, whichever runner makes it
    assert len(made) == 3 and {os.path.dirname(prefix) for prefix in made} == {profiles}
    scratch.discard()  # as a command does on its way out
    assert os.listdir(own_scratch) == []


def test_optimizations_both_runs_each_case_twice(conform):
    result = conform(*SLICE_FLOAT, "--optimizations", "both", "--case", "Slice-13/negative_start/float/int64")
    assert sorted(r["optimizations"] for r in result.report["results"]) == ["off", "on"]


def test_fallback_is_detected_on_a_recorded_profile():
    events = read_profile(DATA / "profile_cpu_clip13.json")
    ran = providers_that_ran(events, "Clip")
    assert ran == {"CPUExecutionProvider"}
    assert fallback_message("CUDAExecutionProvider", ran) == "fallback: ran on CPUExecutionProvider (requested CUDAExecutionProvider)"
    assert fallback_message("CPUExecutionProvider", ran) is None
    on_cuda = [dict(e, args={**e["args"], "provider": "CUDAExecutionProvider"}) if e.get("cat") == "Node" else e for e in events]
    assert fallback_message("CUDAExecutionProvider", providers_that_ran(on_cuda, "Clip")) is None
    assert fallback_message("DmlExecutionProvider", set()).startswith("fallback: the profile shows no kernel")


@pytest.mark.skipif("CUDAExecutionProvider" not in onnxruntime.get_available_providers(),
                    reason="provider not available: CUDAExecutionProvider is not in this onnxruntime build")
def test_cuda_run_reports_no_fallback_for_supported_cases(conform):  # pragma: no cover - needs a GPU
    result = conform(*SLICE_FLOAT, "--provider", "cuda")
    assert result.report["runner"]["provider"] == "CUDAExecutionProvider"


@pytest.mark.skipif("DmlExecutionProvider" not in onnxruntime.get_available_providers(),
                    reason="provider not available: DirectML exists only on Windows")
def test_dml_run_explains_failures_in_directml_terms(conform):  # pragma: no cover - needs Windows
    result = conform("run", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--provider", "dml")
    assert all("DirectML" in r["message"] for r in result.report["results"] if r["outcome"] == "fail" and "dml_" in r["case"])


def test_directml_truncation_arithmetic():
    assert directml_clip_bound(16777217, "int32") == 16777216
    assert directml_clip_bound(-16777217, "int32") == -16777216  # toward zero
    assert directml_clip_bound(2**31 - 1, "int32") is None  # 2**31 as a FLOAT overflows int32
    assert directml_clip_bound(2**53 + 1, "int64") == 2**53


def test_directml_edge_cases_sit_on_bounds_float32_cannot_hold():
    edges = [e for e in casefile.load_examples("Clip") if e.name.startswith("dml_") and e.dtype != "float16"]
    assert {e.dtype for e in edges} >= {"int32", "int64", "uint32", "uint64"}
    for example in edges:
        note = directml_clip_note(example)
        assert note and "truncation toward zero" in note, example.id
        bounds = [int(example.inputs[s]) for s in ("min", "max") if example.inputs.get(s) is not None]
        assert any(float(np.float32(b)) != b for b in bounds)


def test_diff_reports_disagreements_and_who_keeps_to_the_spec(conform, tmp_path):
    report = tmp_path / "diff.json"
    result = conform("diff", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis",
                     "--backend", "wrong_slice", "--against", "cpu", "--report-json", str(report))
    assert result.code == 1
    records = json.loads(report.read_text())["results"]
    disagreeing = [r for r in records if r["disagreement"]]
    assert disagreeing and all(r["agrees_with_spec"] in ("second", "neither") for r in disagreeing)
    assert any(r["agrees_with_spec"] == "second" for r in disagreeing)
    same = conform("diff", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--against", "onnxruntime.backend")
    assert same.code == 0


# From the outcome a reader must see first to the one that needs no look.
WORST_FIRST = ["fail", "error", "crash", "timeout", "fallback", "xpass", "lenient", "unsupported", "xfail", "ambiguous",
               "skipped", "pass"]


def test_diff_in_a_ci_log_heads_each_family_with_a_line_the_wrong_answers_first(conform, tmp_path):
    report = tmp_path / "diff.json"
    result = conform("diff", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--dtype", "float", "--dtype", "uint8",
                     "--dtype", "complex64", "--backend", "wrong_slice", "--against", "reference", "--report-json", str(report), columns=None)
    doc = json.loads(report.read_text())
    records = {r["id"]: r for r in doc["results"] if r["disagreement"]}
    lines = [line for line in result.stdout.splitlines() if line.split(": ", 1)[0] in records]
    families = doc["summary"]["disagreement_families"]
    assert result.code == 1 and len(lines) == min(families, 25) and families < len(records)
    assert f"{len(records)} disagreements in {families} families." in result.stdout
    worse = {i: min(WORST_FIRST.index(r["outcome"]), WORST_FIRST.index(r["against"]["outcome"])) for i, r in records.items()}
    listed = [line.split(": ", 1)[0] for line in lines]
    assert [worse[i] for i in listed] == sorted(worse[i] for i in listed)
    assert listed != list(records)[:len(listed)]  # not the run's order, which has ambiguous cases among the first
    for case, line in zip(listed, lines):
        record = records[case]
        assert line.startswith(f"{case}: backend:wrong_slice {record['outcome']}, onnx.reference {record['against']['outcome']}; ")
        assert line.endswith(f"; {record['disagreement']}")  # whole, however long


class CountingStreams:
    """A runner that hands its cases on to another and records how many each stream held."""

    def __init__(self, runner) -> None:
        self.runner, self.streams = runner, []

    def __getattr__(self, name):
        return getattr(self.runner, name)

    def run_stream(self, builts):
        builts = list(builts)
        self.streams.append(len(builts))
        return (None if b is None else self.runner.run(b) for b in builts)


def test_diff_streams_cases_to_each_runner_and_pairs_their_answers_case_by_case():
    # A runner in a worker process answers a stream of cases far faster than one case at a time.
    from conformance.differential import DIFF_CHUNK, diff
    from conformance.execute import RunOptions, run_examples, select_examples
    from conformance.runners import make_runner

    options = RunOptions(op="Slice", opset=13, dtypes=("float", "int64"), use_hypothesis=False)
    examples = select_examples(options)
    assert len(examples) > 2 * DIFF_CHUNK
    first, second = CountingStreams(make_runner("reference")), CountingStreams(make_runner())
    results = diff(examples, first, second, options)
    assert [r.example.id for r in results] == [e.id for e in examples]
    alone = [run_examples(examples, runner, options) for runner in (make_runner("reference"), make_runner())]
    assert [r.outcome for r in results] == [r.outcome for r in alone[0]]
    assert [r.extra["against"]["outcome"] for r in results] == [r.outcome for r in alone[1]]
    assert any(r.extra["disagreement"] for r in results)  # onnxruntime's INT_MAX ends
    assert first.streams == second.streams and max(first.streams) == DIFF_CHUNK


def test_a_diff_works_out_each_case_s_expected_outputs_once_for_both_runners(monkeypatch):
    from conformance import execute
    from conformance.differential import diff
    from conformance.execute import RunOptions, run_examples, select_examples
    from conformance.runners import make_runner

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False)
    examples = select_examples(options)
    asked = []
    expected_for = execute.expected_for
    monkeypatch.setattr(execute, "expected_for", lambda example: (asked.append(example.id), expected_for(example))[-1])
    results = diff(examples, make_runner("reference"), make_runner(), options)
    assert sorted(asked) == sorted(e.id for e in examples)
    alone = run_examples(examples, make_runner(), options)  # the second runner's verdicts, as a run of its own gives them
    assert [r.extra["against"] for r in results] == [{"outcome": r.outcome, "message": r.verdict.message} for r in alone]


def test_a_diff_on_a_runtime_that_crashes_and_hangs_pins_each_on_its_case_and_goes_on(conform, tmp_path):
    # Streamed cases: the crash or hang is the case the worker was running, not one queued behind it.
    args = ("--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "crashy")
    # 3 s, not 1: a worker that replaces a crashed one starts within the case's time, and on a busy
    # machine that start alone passed 1 s (a crash in one run, a timeout in the other).
    alone = conform("run", *args, "--timeout", "3")
    result = conform("diff", *args, "--against", "cpu", "--timeout", "3", "--report-json", str(tmp_path / "diff.json"))
    records = json.loads((tmp_path / "diff.json").read_text())["results"]
    assert result.code == 1 and [(r["id"], r["outcome"]) for r in records] == \
        [(r["id"], r["outcome"]) for r in alone.report["results"]]
    assert {"crash", "timeout"} <= {r["outcome"] for r in records}
    assert all(r["disagreement"] for r in records if r["outcome"] in ("crash", "timeout"))


def test_a_diff_draws_its_progress_on_a_terminal(conform_on_a_terminal, tmp_path):
    drawn = conform_on_a_terminal("diff", "--op", "Clip", "--opset", "13", "--examples", "5", "--against", "reference",
                                  "--report-json", str(tmp_path / "diff.json"))
    cases = len(json.loads((tmp_path / "diff.json").read_text())["results"])
    assert drawn.counts("diff Clip")[-1] == (cases, str(cases))


def diff_records(conform, tmp_path, *args: str) -> tuple[object, list[dict]]:
    """`conform diff ARGS`, and its report's records of the cases the two runners disagree on."""
    result = conform("diff", *args, "--report-json", str(tmp_path / "diff.json"), columns=None)
    records = json.loads((tmp_path / "diff.json").read_text())["results"]
    return result, [r for r in records if r["disagreement"]]


def replayed_diff(conform, tmp_path, record: dict) -> list[dict]:
    """The records of a disagreement's replay command, run as a user pastes it (its report goes
    to the default place, under reports/)."""
    again = replayed(conform, record)
    assert again.code == 1, again.stderr  # a replayed disagreement is one still
    return json.loads((tmp_path / "reports" / f"diff-{record['op']}-{record['opset']}.json").read_text())["results"]


def verdicts(record: dict) -> tuple:
    return record["id"], record.get("mode"), record["outcome"], record["against"]["outcome"], record["disagreement"]


def test_each_disagreement_replays_as_a_diff_of_that_case_alone_on_both_runners(conform, tmp_path):
    # The replay was the first runner's `conform run`: it showed one side of the disagreement, and
    # a diff had no --case, --mode, --cases or --no-yaml to run the case again on both.
    result, disagreeing = diff_records(conform, tmp_path, "--op", "Slice", "--opset", "13", "--dtype", "float",
                                       "--no-hypothesis", "--mode", "all", "--backend", "mode_sensitive", "--against", "cpu")
    # int32 before int64: the first of its family, whose replay the console prints.
    by_mode = {r["mode"]: r for r in disagreeing if r["id"] == "Slice-13/negative_start/float/int32"}
    assert set(by_mode) == {"initializer"}  # mode_sensitive slices graph inputs and Constant nodes' values right
    record = by_mode["initializer"]
    assert record["replay"].startswith("conform diff ") and record["replay"].endswith(" --against cpu")
    assert " --mode initializer " in record["replay"]
    assert f"  replay: {record['replay']}" in result.stdout.splitlines()
    assert [verdicts(r) for r in replayed_diff(conform, tmp_path, record)] == [verdicts(record)]


def test_a_disagreement_on_a_users_case_or_a_hypothesis_case_replays_from_where_it_came(conform, tmp_path):
    (tmp_path / "mine.yaml").write_text(MY_SLICE_CASE)
    _, from_file = diff_records(conform, tmp_path, "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis",
                                "--cases", "mine.yaml", "--backend", "wrong_slice", "--against", "reference")
    [mine] = [r for r in from_file if r["case"] == "my_reverse_to_the_front"]
    assert "--only-cases mine.yaml" in mine["replay"]
    assert [verdicts(r) for r in replayed_diff(conform, tmp_path, mine)] == [verdicts(mine)]
    _, drawn = diff_records(conform, tmp_path, "--op", "Slice", "--opset", "13", "--dtype", "int32", "--no-yaml",
                            "--examples", "30", "--seed", "3", "--backend", "wrong_slice", "--against", "reference")
    assert drawn and all(r["source"] == "hypothesis" for r in drawn)
    assert [verdicts(r) for r in replayed_diff(conform, tmp_path, drawn[0])] == [verdicts(drawn[0])]


def test_a_diff_under_strict_zero_tells_zeros_apart_and_its_replay_does_too(conform, tmp_path):
    args = ("--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "signed_zero", "--against", "cpu")
    plain, _ = diff_records(conform, tmp_path, *args)
    strict, disagreeing = diff_records(conform, tmp_path, *args, "--strict-zero")
    assert plain.code == 0 and strict.code == 1 and disagreeing
    record = disagreeing[0]
    assert "--strict-zero" in record["replay"] and "-0.0" in record["disagreement"]
    assert [verdicts(r) for r in replayed_diff(conform, tmp_path, record)] == [verdicts(record)]


def test_a_diff_s_messages_name_each_runner_where_they_said_expected_and_got(conform, tmp_path):
    # "expected" was the first runner's answer and "got" the second's: neither is the expected one.
    _, disagreeing = diff_records(conform, tmp_path, "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis",
                                  "--backend", "wrong_slice", "--against", "reference")
    # Where onnx.reference passes, its output is the reference's one reading.
    answered = [r for r in disagreeing if r["actual"] and r["against"]["outcome"] == "pass"]
    assert answered
    for record in answered:
        [second] = [reading["outputs"][0]["shape"] for reading in record["expected"]["readings"]]
        assert record["disagreement"].startswith(f"output 0: backend:wrong_slice float{record['actual'][0]['shape']}, "
                                                 f"onnx.reference float{second}"), record["disagreement"]
        assert "expected" not in record["disagreement"] and "got" not in record["disagreement"]


def test_a_diff_of_onnxruntime_with_and_without_its_optimizations_tells_the_two_apart(conform, tmp_path):
    from conformance.differential import runner_labels
    from conformance.runners import make_runner

    result, _ = diff_records(conform, tmp_path, "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis",
                             "--optimizations", "off", "--against", "cpu")
    report = json.loads((tmp_path / "diff.json").read_text())
    assert result.code == 0 and report["runner"]["first"]["optimizations"] == "off"
    assert report["runner"]["second"]["optimizations"] == "on"
    assert runner_labels(make_runner(optimizations="off"), make_runner()) == \
        ("onnxruntime CPUExecutionProvider optimizations off", "onnxruntime CPUExecutionProvider")
    assert len(set(runner_labels(make_runner(), make_runner()))) == 2  # the same runner twice, told apart
    both = conform("diff", "--op", "Clip", "--optimizations", "both", "--against", "cpu")
    assert both.code == 2 and both.stderr.strip() == "error: --optimizations in a diff takes on or off, not 'both'"


@pytest.mark.parametrize("runner", [dict(runner="reference"), dict(), dict(backend="wrong_slice"),
                                    dict(backend="onnxruntime.backend"), dict(backend="reference")])
def test_a_diff_replay_names_its_second_runner_as_against_reads_it(runner, monkeypatch, tmp_path):
    from conformance.differential import against_option, runner_from_name
    from conformance.runners import make_runner

    # A backend module named as a runner is: `--against reference` would be onnx.reference.
    (tmp_path / "reference.py").write_text("from onnxruntime.backend import prepare, supports_device\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(BACKENDS))
    made = make_runner(**runner)
    assert runner_from_name(against_option(made), isolate=False, timeout=10).describe() == made.describe()


def test_a_diff_counts_one_case_and_one_disagreement_in_the_singular(conform, tmp_path):
    result, _ = diff_records(conform, tmp_path, "--op", "Slice", "--opset", "13", "--no-hypothesis", "--backend", "wrong_slice",
                             "--against", "reference", "--case", "Slice-13/negative_step_int_min_end/float/int64")
    assert result.code == 1 and result.stdout.splitlines()[-1].startswith("1 case, 1 disagreement. JSON report: ")


def test_diff_against_an_unavailable_provider_is_exit_3(conform):
    result = conform("diff", "--op", "Slice", "--against", "dml")
    assert result.code == 3 and "not available (available:" in result.stderr


def test_a_workers_start_up_does_not_count_against_a_cases_timeout(conform):
    # Each worker of this backend takes 1 s to load; --timeout 0.5 is for the cases alone. Before,
    # the first case timed out, and so did each next one, on a fresh worker that was slow to start.
    result = conform(*SLICE_FLOAT, "--backend", "slow_start", "--timeout", "0.5")
    summary = result.report["summary"]
    # The backend is onnxruntime underneath: its three INT_MAX deviations are the only failures.
    assert summary["timeout"] == summary["crash"] == 0 and summary["pass"] == summary["total"] - 3 > 100, summary


def failing_to_start(monkeypatch, tmp_path, fault: str, times: int | None = None):
    """Workers of the fails_starting backend fail to load it (`fault`: exit or hang), the first
    `times` of them (every one when None), a hang counting after 1 s; the file their loads are logged in."""
    from conformance.runners import isolated

    loads = tmp_path / "loads"
    monkeypatch.syspath_prepend(str(BACKENDS))
    monkeypatch.setenv("PYTHONPATH", with_test_backends()["PYTHONPATH"])
    for name, value in failing_starts(loads, fault, times).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(isolated, "WORKER_START_SECONDS", 1.0)
    return loads


@pytest.mark.parametrize("fault", ["exit", "hang"])
def test_a_worker_that_fails_to_load_its_runtime_costs_no_case(monkeypatch, tmp_path, fault):
    # The first worker dies loading its runtime (as a spare killed while it waited would), or is
    # not ready within the start-up limit: no case ran on it, so the cases sent to it run on a
    # fresh worker. Before, the oldest case was a crash, or a timeout.
    from conformance.execute import RunOptions, run_examples, select_examples
    from conformance.runners import make_runner

    loads = failing_to_start(monkeypatch, tmp_path, fault, times=1)
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False)
    examples = select_examples(options)[:6]
    runner = make_runner(backend="fails_starting", isolate=True, timeout=5.0)
    try:
        results = run_examples(examples, runner, options)
    finally:
        runner.close()
    assert [r.example.id for r in results] == [e.id for e in examples]
    assert not [r.verdict.message for r in results if r.outcome in ("crash", "timeout")]
    assert len(loads.read_text().splitlines()) >= 2  # the first worker failed; the cases ran on another


def test_a_runtime_whose_workers_never_finish_loading_it_is_unavailable_not_a_timeout_per_case(monkeypatch, tmp_path):
    # Before, each case was a timeout after the start-up limit (60 s by default), on a fresh worker
    # that hung in turn: a run of 2,000 cases would have taken a day and a half.
    from conformance.errors import UnavailableError
    from conformance.execute import RunOptions, run_examples, select_examples
    from conformance.runners import make_runner

    loads = failing_to_start(monkeypatch, tmp_path, "hang")
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False)
    runner = make_runner(backend="fails_starting", isolate=True, timeout=5.0)
    started = time.monotonic()
    try:
        with pytest.raises(UnavailableError) as raised:
            run_examples(select_examples(options)[:6], runner, options)
    finally:
        runner.close()
    assert raised.value.exit_code == 3
    assert "two workers in a row failed to load it, before running any case (the second had not loaded it after 1 s" \
        in raised.value.message
    assert 2 <= len(loads.read_text().splitlines()) <= 3 and time.monotonic() - started < 20


def test_a_runtime_whose_workers_always_die_loading_it_is_unavailable_exit_3(conform, tmp_path, monkeypatch):
    loads = tmp_path / "loads"
    for name, value in failing_starts(loads).items():
        monkeypatch.setenv(name, value)
    result = conform(*SLICE_FLOAT, "--backend", "fails_starting", "--jobs", "1")
    assert result.code == 3, result.stderr
    # The message quotes what the runtime said on stderr before the worker died.
    assert ("the runtime could not be loaded in a worker process: two workers in a row failed to load it, before running "
            "any case (the second died while loading it: exited with code 3; its stderr, last: fails_starting: cannot "
            "load here)") in result.stderr.splitlines()[-1]  # one line, however long
    assert "Traceback" not in result.stderr
    # Given up after the second death (a spare may have started loading beside it), not once per case.
    assert 2 <= len(loads.read_text().splitlines()) <= 3


def test_cases_in_flight_when_the_worker_dies_are_each_judged_once(monkeypatch):
    # The isolated runner sends later cases before reading earlier answers. A death or a hang
    # belongs to the oldest unanswered case; the ones sent after it must still run, on a fresh worker.
    import dataclasses

    from conformance.execute import RunOptions, run_examples, select_examples
    from conformance.runners import make_runner

    monkeypatch.syspath_prepend(str(BACKENDS))
    monkeypatch.setenv("PYTHONPATH", with_test_backends()["PYTHONPATH"])
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False,
                         case_ids=("Slice-13/negative_start/float/int64",))
    template = select_examples(options)[0]

    def starting_at(start: int, name: str):
        inputs = {**template.inputs, "starts": np.array([start], dtype=np.int64)}
        return dataclasses.replace(template, name=name, inputs=inputs)

    plan = [(-3, "crash"), (0, "pass"), (1, "pass"), (-100, "crash"), (7, "timeout"), (-3, "crash"), (2, "pass"), (-2, "pass")]
    examples = [starting_at(start, f"case{k}") for k, (start, _) in enumerate(plan)]
    runner = make_runner(backend="crashy", isolate=True, timeout=1.5)
    try:
        results = run_examples(examples, runner, RunOptions(op="Slice"))
    finally:
        runner.close()
    assert [r.example.name for r in results] == [e.name for e in examples]
    assert [r.outcome for r in results] == [outcome for _, outcome in plan]
    assert "SIGSEGV" in results[0].verdict.message and "code 7" in results[3].verdict.message


def test_large_cases_are_not_overlapped_into_a_deadlock():
    # Two large messages crossing in the pipe could each wait for the other side to read; a case
    # larger than the write budget is only sent once nothing else is in flight.
    import dataclasses

    from conformance.execute import RunOptions, run_examples, select_examples
    from conformance.runners import make_runner

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False,
                         case_ids=("Slice-13/negative_start/float/int64",))
    template = select_examples(options)[0]
    big = np.arange(600_000, dtype=np.float32).reshape(600, 1000)  # 2.4 MB each way
    whole = {"data": big, "starts": np.array([0]), "ends": np.array([1000])}
    examples = [dataclasses.replace(template, name=f"case{k}", inputs={**template.inputs, **(whole if k % 3 else {})})
                for k in range(7)]
    runner = make_runner(isolate=True, timeout=20)
    try:
        results = run_examples(examples, runner, RunOptions(op="Slice"))
    finally:
        runner.close()
    assert [r.outcome for r in results] == ["pass"] * 7
    assert results[1].actual[0].shape == (600, 1000) and results[0].actual[0].shape == (4, 3)


def test_small_cases_are_pipelined_several_to_a_write_within_the_byte_budget(monkeypatch):
    # Many small cases are in flight at once and go several to a write (the worker never waits for
    # the next one), but the requests in flight never add up to more than the channel's write
    # budget, the bound that rules out deadlock.
    from conformance.execute import RunOptions, run_examples, select_examples
    from conformance.runners import isolated, make_runner

    options = RunOptions(op="Slice", opset=13, dtypes=("float", "int8"), examples=5, seed=3)
    examples = select_examples(options)
    writes = []
    send = isolated.IsolatedRunner._send
    monkeypatch.setattr(isolated.IsolatedRunner, "_send", lambda self, unsent, waiting: (
        writes.append((len(unsent), sum(map(len, waiting)))) if unsent else None, send(self, unsent, waiting))[-1])
    runner = make_runner(isolate=True)
    try:
        piped = run_examples(examples, runner, options)
    finally:
        runner.close()
    direct = run_examples(examples, make_runner(), options)
    assert sum(count for count, _ in writes) == len(examples) and len(writes) < len(examples) / 4
    assert runner.overlap_bytes >= wire.SMALLEST_BUDGET
    assert all(size <= runner.overlap_bytes for count, size in writes)
    assert [r.verdict.message for r in piped] == [r.verdict.message for r in direct]
    assert all(len(p.actual) == len(d.actual) and all(a.tobytes() == b.tobytes() for a, b in zip(p.actual, d.actual))
               for p, d in zip(piped, direct))


@pytest.mark.parametrize("raw", [True, False], ids=["file descriptor", "connection messages"])
def test_frames_cross_a_channel_whole_in_order_however_they_were_written(raw):
    import multiprocessing

    if raw and os.name != "posix":
        pytest.skip("reading the pipe's file descriptor is the POSIX path")
    ours, theirs = multiprocessing.Pipe()
    sender, receiver = wire.Channel(ours, raw), wire.Channel(theirs, raw)
    large = bytes(range(256)) * 12_000  # 3 MB: longer than one read, and than the pipe's buffer
    frames = [b"first", b"", b"\x00" * 9, large, b"last"]
    import threading

    writer = threading.Thread(target=lambda: (sender.send(frames[:3]), sender.send(frames[3:])))
    writer.start()
    received = [receiver.receive() for _ in frames]
    writer.join()
    assert received == frames
    assert not receiver.has_frame()
    ours.close()
    with pytest.raises(EOFError):
        receiver.receive()


def test_one_read_takes_every_frame_that_has_arrived():
    import multiprocessing

    ours, theirs = multiprocessing.Pipe()
    sender, receiver = wire.Channel(ours), wire.Channel(theirs)
    for k in range(5):
        sender.send([f"answer {k}".encode()])  # five writes, as a worker answers
    reads = []
    read_some = receiver.read_some
    receiver.read_some = lambda: (reads.append(1), read_some())[-1]
    assert [receiver.receive() for _ in range(5)] == [f"answer {k}".encode() for k in range(5)]
    assert len(reads) == 1


def test_the_write_budget_stays_within_what_a_pipe_takes_without_waiting():
    # Whatever the platform's buffer, requests up to the budget, written as small as a request can
    # be, fit in the pipe while the worker reads nothing: a write never waits on it.
    import multiprocessing

    ours, theirs = multiprocessing.Pipe()
    channel = wire.Channel(ours)
    budget = channel.write_budget()
    assert wire.SMALLEST_BUDGET <= budget <= wire.LARGEST_BUDGET
    if os.name == "posix":
        os.set_blocking(ours.fileno(), False)
        written = 0
        while written < budget:  # raises BlockingIOError if the pipe would make the write wait
            channel.send([b"r" * 112])  # 120 bytes a write with the length, smaller than any request
            written += 120


@pytest.mark.parametrize("name", [n for n in all_names() if n != "string"])
def test_arrays_cross_to_the_worker_bit_for_bit_and_writable(name):
    from conformance.dtypes import dtype
    from conformance.runners.wire import pack_array, unpack_array

    np_dtype = dtype(name).np_dtype
    rng = np.random.default_rng(0)
    for shape in [(3, 4), (), (0, 5)]:
        count = int(np.prod(shape, dtype=np.int64))
        array = np.frombuffer(rng.bytes(count * np_dtype.itemsize), dtype=np_dtype).reshape(shape)
        back = unpack_array(pickle.loads(pickle.dumps(pack_array(array))))
        assert back.dtype == array.dtype and back.shape == array.shape and back.tobytes() == array.tobytes()
        assert back.flags.writeable


def test_strings_foreign_byte_order_and_outputs_cross_unchanged():
    from conformance.runners.base import RunOutput
    from conformance.runners.wire import dump_case, pack_output, unpack_case, unpack_output

    strings = np.array(["a", "", "ü"], dtype=object)
    big_endian = np.arange(4, dtype=">f4")
    data, feeds, elem_types = unpack_case(pickle.loads(dump_case(b"model", {"s": strings, "b": big_endian}, frozenset({1, 8}))))
    assert data == b"model" and elem_types == frozenset({1, 8})
    assert feeds["s"].tolist() == ["a", "", "ü"] and feeds["b"].dtype == big_endian.dtype
    assert feeds["b"].tolist() == [0.0, 1.0, 2.0, 3.0]
    output = RunOutput((np.float32([np.nan, -0.0]),), "said no", True, "fallback")
    back = unpack_output(pickle.loads(pickle.dumps(pack_output(output))))
    assert (back.error, back.unsupported, back.fault) == ("said no", True, "fallback")
    assert back.outputs[0].tobytes() == output.outputs[0].tobytes()


def test_after_a_crash_the_next_worker_loads_its_runtime_ahead_and_takes_over_at_the_next(monkeypatch):
    # A runtime that died once may die again: from the first restart on, the isolated runner keeps
    # a spare worker loading its runtime beside the running one, and a crash hands the cases on to
    # it. A spare that died meanwhile is not taken (its death is no case's): a fresh one is.
    from conformance.execute import RunOptions, run_examples, select_examples
    from conformance.runners import make_runner

    monkeypatch.syspath_prepend(str(BACKENDS))
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False, case_ids=(CRASHING, PASSING))
    by_id = {e.id: e for e in select_examples(options)}
    runner = make_runner(backend="crashy", isolate=True, timeout=30)

    def crash_then_pass():
        found = run_examples([by_id[CRASHING], by_id[PASSING]], runner, options)
        # The verdict quotes what the runtime wrote during the crashing case, and nothing from before it.
        assert [(r.outcome, r.verdict.message) for r in found] == [
            ("crash", "the runtime's worker process died: killed by signal SIGSEGV; its stderr, last: "
                      "crashy warns: a case with starts -3 | crashy: about to segfault"), ("pass", "outputs match")]

    try:
        assert [r.outcome for r in run_examples([by_id[PASSING]], runner, options)] == ["pass"]
        runner.close()  # closed and started again: no worker died, so no spare either
        assert [r.outcome for r in run_examples([by_id[PASSING]], runner, options)] == ["pass"]
        assert runner._spare is None
        crash_then_pass()
        spare = runner._spare
        assert spare is not None and spare[0].is_alive() and spare[0].pid != runner._process.pid
        crash_then_pass()
        assert runner._process.pid == spare[0].pid and runner._spare[0].pid != spare[0].pid
        dead = runner._spare[0]
        dead.kill()
        dead.join(10)
        crash_then_pass()
        assert runner._process.pid != dead.pid
        last = runner._spare[0]
    finally:
        runner.close()
    assert not last.is_alive() and runner._spare is None
