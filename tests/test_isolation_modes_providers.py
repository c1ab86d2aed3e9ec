"""Runners that survive real runtimes: isolation, input modes, optimization levels, fallback
detection, DirectML semantics, and differential runs."""

import json
from pathlib import Path

import numpy as np
import onnxruntime
import pytest

from conformance import casefile
from conformance.providers import directml_clip_bound, directml_clip_note
from conformance.runners.fallback import fallback_message, providers_that_ran, read_profile
from conformance.runners.onnxruntime import session_options

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


def test_optimization_levels_reach_the_session_options():
    on = session_options(onnxruntime, "cpu", "on")
    off = session_options(onnxruntime, "cpu", "off")
    assert off.graph_optimization_level == onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert on.graph_optimization_level != off.graph_optimization_level
    assert not on.enable_profiling and session_options(onnxruntime, "cuda", "on").enable_profiling


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


def test_diff_against_an_unavailable_provider_is_exit_3(conform):
    result = conform("diff", "--op", "Slice", "--against", "dml")
    assert result.code == 3 and "not available (available:" in result.stderr
