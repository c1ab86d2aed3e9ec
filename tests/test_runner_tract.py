"""The tract runner on real runs: its answers, its dtype plumbing, its refusals in its own words."""

from __future__ import annotations

import sys

import pytest

from conformance.errors import UnavailableError
from conformance.execute import RunOptions, run_examples, select_examples, stage
from conformance.runners import make_runner
from conftest import replayed

pytest.importorskip("tract", reason="tract is not installed (pip install \"conform[tract]\")")

# A Slice-13 case of the user's own: a step of 2**32 + 1, which tract cuts to its low 32 bits (1),
# and one of 2**32, whose low 32 bits are zero: tract divides by it and panics.
STEPS_CASES = """op: Slice
cases:
  - name: step_beyond_int32
    spec: "steps: 1-D tensor of slice step of corresponding axis in `axes`"
    versions: [13]
    dtypes: [float]
    types: {Tind: [int64]}
    inputs: {data: [0, 1, 2, 3, 4, 5], starts: [0], ends: [6], axes: [0], steps: [4294967297]}
  - name: step_low_word_zero
    spec: "steps: 1-D tensor of slice step of corresponding axis in `axes`"
    versions: [13]
    dtypes: [float]
    types: {Tind: [int64]}
    inputs: {data: [0, 1, 2, 3, 4, 5], starts: [0], ends: [6], axes: [0], steps: [4294967296]}
"""


@pytest.fixture(scope="module")
def tract_runner():
    return make_runner("tract")


def results(runner, op: str, opset: int, dtypes=(), mode: str = "input", case: str | None = None) -> dict:
    options = RunOptions(op=op, opset=opset, dtypes=dtypes, use_hypothesis=False, modes=(mode,))
    examples = [e for e in select_examples(options) if case is None or e.name == case]
    return {r.example.id: r for r in run_examples(examples, runner, options)}


def one_run(runner, op: str, opset: int, case: str, dtype: str, mode: str = "input"):
    """What the runner itself answers for one case-file case (the RunOutput, before judging)."""
    options = RunOptions(op=op, opset=opset, dtypes=(dtype,), use_hypothesis=False, modes=(mode,))
    example = next(e for e in select_examples(options) if e.name == case)
    return runner.run(stage(example, runner, options, mode).built)


def test_describe_names_tract_its_version_and_the_cpu(tract_runner):
    import tract

    described = tract_runner.describe()
    assert (described["name"], described["version"], described["device"]) == ("tract", tract.version(), "CPU")
    assert tract_runner.replay_options() == ["--runner", "tract"]


def test_a_correct_case_passes_and_a_rank0_input_stays_rank0(tract_runner):
    found = results(tract_runner, "Clip", 13, ("float",))
    assert found["Clip-13/min_and_max/float"].outcome == "pass"
    # min and max are 0-d: fed as shape (1,), tract refuses them ("expected to match fact ,F32").
    rank0 = found["Clip-13/rank0_input/float"]
    assert rank0.outcome == "pass", rank0.verdict.message
    assert rank0.actual[0].shape == () and rank0.actual[0].dtype.name == "float32"


def test_clip_replacing_a_nan_input_with_a_bound_fails_with_what_came_back(tract_runner):
    result = results(tract_runner, "Clip", 13, ("float",), case="nan_input_stays_nan")["Clip-13/nan_input_stays_nan/float"]
    assert result.outcome == "fail"
    assert "expected nan, got -1.0" in result.verdict.message


def test_a_type_its_python_api_cannot_carry_is_unsupported_without_asking_tract(tract_runner, monkeypatch):
    monkeypatch.setattr(tract_runner, "_create", lambda built: pytest.fail("tract was asked"))
    found = results(tract_runner, "Clip", 13, ("bfloat16",), case="min_and_max")
    result = found["Clip-13/min_and_max/bfloat16"]
    assert result.outcome == "unsupported"
    assert result.verdict.message == "tract's Python API cannot carry bfloat16"


def test_an_op_version_tract_does_not_translate_is_no_kernel(tract_runner):
    answer = one_run(tract_runner, "Clip", 1, "min_and_max", "float")
    assert answer.no_kernel and answer.unsupported
    assert "Unsupported operator set for Clip operator" in answer.error


def test_an_op_version_in_a_form_tract_does_not_read_is_no_kernel(tract_runner):
    # TopK-1 takes k as an attribute; tract reads TopK-10's input K only. Unique it evaluates with
    # one output only: four asked for is a refusal, not a wrong answer.
    answer = one_run(tract_runner, "TopK", 1, "three_of_four_k_attribute", "float")
    assert answer.no_kernel and answer.unsupported, answer.error
    assert "Wrong input number" in answer.error
    answer = one_run(tract_runner, "Unique", 11, "example_1_first_occurrence", "int64")
    assert answer.no_kernel and answer.unsupported, answer.error


def test_an_input_tract_needs_constant_is_unsupported_and_runs_as_an_initializer(tract_runner):
    as_input = one_run(tract_runner, "ConstantOfShape", 9, "rank2", "float")
    assert as_input.unsupported and not as_input.no_kernel
    assert "shape input is variable" in as_input.error
    found = results(tract_runner, "ConstantOfShape", 9, ("int32",), mode="initializer", case="rank2")
    assert [r.outcome for r in found.values()] == ["pass"]


def test_a_model_whose_facts_contradict_is_a_rejection_in_tracts_words(tract_runner):
    answer = one_run(tract_runner, "ConstantOfShape", 9, "shape_not_1d", "float", mode="initializer")
    assert answer.invalid and not answer.unsupported
    assert "Impossible to unify 2 with 1" in answer.error
    found = results(tract_runner, "ConstantOfShape", 9, ("float",), mode="initializer", case="shape_not_1d")
    assert [r.outcome for r in found.values()] == ["pass"]


def test_an_error_is_told_by_its_root_cause_with_the_whole_chain_kept(tract_runner):
    answer = one_run(tract_runner, "Clip", 1, "min_and_max", "float")
    assert answer.error.startswith("Caused by:")
    assert answer.detail is not None and "Building node" in answer.detail
    assert "Stack backtrace" not in answer.detail


def test_without_tract_the_runner_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tract", None)  # an import of it raises ImportError
    with pytest.raises(UnavailableError) as raised:
        make_runner("tract")
    assert str(raised.value) == ("runner 'tract' not available: tract is not installed; "
                                 "to install it: pip install \"conform[tract]\"")


def test_slice_steps_beyond_32_bits_fail_and_crash_in_a_worker(conform, tmp_path):
    cases = tmp_path / "steps.yaml"
    cases.write_text(STEPS_CASES)
    result = conform("run", "--op", "Slice", "--opset", "13", "--only-cases", str(cases), "--no-hypothesis",
                     "--runner", "tract", "--mode", "initializer")
    assert result.code == 1, result.stderr
    by_case = {r["case"]: r for r in result.report["results"]}
    cut = by_case["step_beyond_int32"]
    assert cut["outcome"] == "fail" and "expected float[1], got float[6]" in cut["message"]
    panicked = by_case["step_low_word_zero"]
    assert panicked["outcome"] == "crash" and "attempt to divide by zero" in panicked["message"]
    assert result.report["runner"]["name"] == "tract"


# ---- the models tract needs: static dims, index inputs as initializers ------------------------

SLICE_13 = ("run", "--op", "Slice", "--opset", "13", "--runner", "tract")
NEEDS_NOTE = ("note: tract: static shapes, initializer inputs (its runtime resolves shapes and index inputs at load time); "
              "give --shapes or --mode to choose otherwise")


def test_a_run_builds_the_models_tract_needs_unless_told_otherwise(conform):
    found = conform(*SLICE_13, "--examples", "2")
    options, summary = found.report["options"], found.report["summary"]
    assert (options["modes"], options["shapes"]) == (["initializer"], "static")
    assert options["runner_defaults"] == {"shapes": "static", "mode": "initializer",
                                          "reason": "its runtime resolves shapes and index inputs at load time"}
    # Judged, most of it: only the types its Python API cannot carry stay unsupported (4 of 15 dtypes).
    assert summary["pass"] * 2 > summary["total"] and summary["unsupported"] * 3 < summary["total"], summary
    assert NEEDS_NOTE in found.stderr and NEEDS_NOTE in found.stdout  # as the run starts, and above its summary
    # A replay states both, so that it builds the same model whatever the runner declares later.
    assert all("--mode initializer --shapes static" in r["replay"] for r in found.report["results"])
    assert "warning:" not in found.stdout


def test_an_option_given_is_kept_and_a_run_that_judged_little_ends_saying_so(conform):
    found = conform(*SLICE_13, "--shapes", "symbolic", "--mode", "input", "--no-hypothesis", "--dtype", "float")
    options, summary = found.report["options"], found.report["summary"]
    assert (options["modes"], options["shapes"]) == (["input"], "symbolic") and "runner_defaults" not in options
    assert summary["unsupported"] * 2 > summary["total"] and "note: tract:" not in found.stderr
    assert found.code == 0  # unsupported fails no run without --fail-on-unsupported: the last line says it all
    assert found.stdout.splitlines()[-1] == (
        f"warning: {summary['unsupported']:,} of {summary['total']:,} cases unsupported: most of the run was not judged "
        "(tract refuses symbolic dims; try --shapes static)")
    refused = next(r for r in found.report["results"] if r["outcome"] == "unsupported")
    assert "--mode input --shapes symbolic" in refused["replay"]
    again = replayed(conform, refused)  # the user's choice, not tract's: still refused
    assert [r["outcome"] for r in again.report["results"]] == ["unsupported"]
    assert again.report["options"]["shapes"] == "symbolic"


def test_one_option_given_leaves_the_other_to_tract(conform):
    found = conform(*SLICE_13, "--shapes", "symbolic", "--no-hypothesis", "--dtype", "float", "--case",
                    "Slice-13/spec_example_1/float/int64")
    options = found.report["options"]
    assert (options["modes"], options["shapes"]) == (["initializer"], "symbolic")
    assert options["runner_defaults"] == {"mode": "initializer", "reason": "its runtime resolves shapes and index inputs at load time"}
    assert "note: tract: initializer inputs (" in found.stderr
