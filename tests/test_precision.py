"""Precision budgets: ULP distances, the special-value rules, judging by a budget, and the precision profile.

Every expected figure here is worked out by hand from the formats' layouts (mantissa bits, smallest
normal exponent), not read back from the code under test.
"""

import dataclasses
import io
import json

import ml_dtypes
import numpy as np
import pytest
from rich.console import Console

from conformance.compare import AMBIGUOUS, FAIL, IMPRECISE, PASS, Verdict, judge
from conformance.errors import UsageError
from conformance.execute import Result, RunOptions, select_examples
from conformance.precision import (BEYOND_BUDGET, CORRECTLY_ROUNDED, FAITHFUL, FLUSHED, WITHIN_BUDGET, Budget, check, profile,
                                  profile_of_records, spacing, ulp_error)
from conformance.reference.base import Expected, Reading
from conformance.report import console as console_report
from conformance.report import html as html_report
from conformance.report import json_report
from conformance.runners.base import RunOutput

BF16, E4M3FN, E5M2 = ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
FOUR = Budget(4, "test budget")
ONE = Budget(1, "test budget")
HALF = Budget(0.5, "correctly rounded")


def arr(values, dtype):
    return np.array(values, dtype=np.float64).astype(dtype)


def errors(precise, actual, dtype):
    return ulp_error(np.array(precise, dtype=np.float64), arr(actual, dtype)).tolist()


def judged(precise, actual, dtype, budget=FOUR, strict_zero=False):
    precise = np.array(precise, dtype=np.float64)
    with np.errstate(over="ignore"):
        rounded = precise.astype(dtype)
    return check(precise, rounded, np.array(actual, dtype=np.float64).astype(dtype), budget, strict_zero)


# --- ULP distances ---

def test_float32_next_after_one_is_one_ulp_and_the_one_below_half_of_one():
    # The spacing of the binade [1, 2) is 2**-23; the value below 1.0 is 2**-24 away, half of it.
    up = np.nextafter(np.float32(1), np.float32(2))
    down = np.nextafter(np.float32(1), np.float32(0))
    assert ulp_error(np.array([1.0, 1.0]), np.array([up, down])).tolist() == [1.0, 0.5]


def test_float16_spacing_at_1024_is_one():
    assert spacing(np.array([1024.0, 1500.0, 2048.0]), np.float16).tolist() == [1.0, 1.0, 2.0]
    assert errors([1024.0, 1024.5], [1025.0, 1024.0], np.float16) == [1.0, 0.5]


def test_bfloat16_has_seven_mantissa_bits():
    # bfloat16 spacing at 1 is 2**-7; in [2, 4) it is 2**-6 = 0.015625.
    assert errors([1.0, 3.0], [1.0078125, 3.03125], BF16) == [1.0, 2.0]


def test_below_the_smallest_normal_the_spacing_is_the_subnormal_one():
    # float32's smallest subnormal is 2**-149; float16's is 2**-24; the smallest normal's binade has that spacing too.
    assert spacing(np.array([2.0**-130, 2.0**-126, 0.0]), np.float32).tolist() == [2.0**-149] * 3
    assert spacing(np.array([2.0**-20]), np.float16).tolist() == [2.0**-24]
    assert errors([3 * 2.0**-149], [2.0**-149], np.float32) == [2.0]


def test_float8_e4m3fn_and_e5m2():
    # e4m3fn: 3 mantissa bits, so 0.125 at 1, 32 in [256, 448], 2**-9 below 2**-6. e5m2: 0.25 at 1.
    assert errors([1.0, 400.0], [1.125, 448.0], E4M3FN) == [1.0, 1.5]
    assert spacing(np.array([0.001]), E4M3FN).tolist() == [2.0**-9]
    assert errors([1.0], [1.5], E5M2) == [2.0]
    assert spacing(np.array([1.0]), ml_dtypes.float8_e4m3fnuz).tolist() == [0.125]
    assert spacing(np.array([1e-6]), ml_dtypes.float8_e5m2fnuz).tolist() == [2.0**-17]


def test_float64_ulps():
    assert errors([1.0], [1.0 + 2.0**-52], np.float64) == [1.0]


def test_a_non_float_dtype_is_a_usage_error_naming_the_float_types():
    with pytest.raises(UsageError, match="float16, bfloat16"):
        ulp_error(np.array([1.0]), np.array([1], dtype=np.int32))


@pytest.mark.parametrize("ulps", [-1, float("nan"), float("inf")])
def test_a_budget_is_a_finite_non_negative_figure(ulps):
    with pytest.raises(UsageError, match="ULP >= 0"):
        Budget(ulps, "x")


# --- the rules of check ---

def test_within_and_beyond_the_budget():
    step = 2.0**-23
    result = judged([1.0, 1.0, 1.0], [1.0 + 4 * step, 1.0 + 5 * step, 1.0], np.float32)
    assert result.ok.tolist() == [True, False, True]
    assert result.worst_ulp == 5.0 and not result.flushed


def test_a_correctly_rounded_result_measures_up_to_half_an_ulp():
    result = judged([1.0 + 2.0**-25], [1.0], np.float32, HALF)
    assert result.ok.all() and result.worst_ulp == 0.25


def test_nan_wants_any_nan():
    other_nan = np.array([0x7FC00001], dtype=np.uint32).view(np.float32)[0]
    assert judged([np.nan], [other_nan], np.float32).ok.all()
    missed = judged([np.nan], [1.0], np.float32, Budget(1e9, "any"))
    assert not missed.ok.any() and missed.worst_ulp == float("inf")
    assert not judged([1.0], [np.nan], np.float32, Budget(1e9, "any")).ok.any()


def test_inf_wants_the_same_inf():
    assert judged([np.inf, -np.inf], [np.inf, -np.inf], np.float32).ok.all()
    assert not judged([np.inf], [-np.inf], np.float32).ok.any()
    big = Budget(1e9, "any")
    assert not judged([np.inf], [3.4028234663852886e38], np.float32, big).ok.any()
    assert not judged([1e30], [np.inf], np.float32, big).ok.any()  # an inf where a finite value is due


def test_an_exact_zero_wants_zero_its_sign_under_strict_zero():
    assert judged([0.0], [-0.0], np.float32).ok.all()
    assert not judged([0.0], [-0.0], np.float32, strict_zero=True).ok.any()
    assert judged([-0.0], [-0.0], np.float32, strict_zero=True).ok.all()
    # The smallest subnormal is 1 ULP from zero, but a zero is judged exactly.
    assert not judged([0.0], [2.0**-149], np.float32, Budget(1e9, "any")).ok.any()


def test_overflow_accepts_the_same_inf_or_a_finite_value_counting_inf_as_max_plus_one_ulp():
    # float16: max 65504, its ULP 32, so inf counts as 65536; 70000 rounds to inf.
    assert judged([70000.0], [np.inf], np.float16, HALF).ok.all()
    assert not judged([70000.0], [-np.inf], np.float16, Budget(1e9, "any")).ok.any()
    assert not judged([70000.0], [np.nan], np.float16, Budget(1e9, "any")).ok.any()
    saturated = judged([70000.0], [65504.0], np.float16, ONE)
    assert saturated.ok.all() and saturated.worst_ulp == 1.0  # (65536 - 65504) / 32
    assert not judged([70000.0], [65504.0], np.float16, HALF).ok.any()
    # 65510 is beyond max but rounds to it: an inf is (65536 - 65510) / 32 = 0.8125 ULP away.
    near = judged([65510.0], [np.inf], np.float16, ONE)
    assert near.ok.all() and near.worst_ulp == 0.8125
    assert not judged([65510.0], [np.inf], np.float16, HALF).ok.any()
    # 65530 rounds to inf (65520 is halfway to 65536): inf is accepted as the correctly rounded value
    # itself, though it counts (65536 - 65530) / 32 ULP away.
    assert judged([65530.0], [np.inf], np.float16, Budget(0, "exact")).ok.all()


def test_overflow_in_a_type_without_inf_is_its_nan():
    # e4m3fn: max 448, its ULP 32; 1000 rounds to NaN, and saturating to 448 is (480 - 448) / 32 = 1 ULP.
    assert judged([1000.0], [np.nan], E4M3FN, HALF).ok.all()
    assert judged([1000.0], [448.0], E4M3FN, ONE).worst_ulp == 1.0
    assert not judged([1000.0], [448.0], E4M3FN, HALF).ok.any()


def test_a_flushed_subnormal_is_the_named_reading_where_the_budget_allows_it():
    precise, actual = [2.0**-130, 1.0], [0.0, 1.0 + 2.0**-23]
    assert not judged(precise, actual, np.float32, ONE).ok.all()
    result = judged(precise, actual, np.float32, Budget(1, "x", flush_subnormals=True))
    assert result.ok.all() and result.flushed
    assert result.worst_ulp == 1.0  # the flushed element is judged by the reading, not by its 2**19 ULP
    # Flushing keeps the sign: under strict_zero, -0 for a positive subnormal is a miss.
    assert not judged([2.0**-130], [-0.0], np.float32, Budget(1, "x", flush_subnormals=True), strict_zero=True).ok.any()
    assert judged([-2.0**-130], [-0.0], np.float32, Budget(1, "x", flush_subnormals=True), strict_zero=True).ok.all()
    # A zero within budget of a tiny precise value needs no flushing: 0.25 * 2**-149 rounds to 0.
    within = judged([0.25 * 2.0**-149], [0.0], np.float32, Budget(1, "x", flush_subnormals=True))
    assert within.ok.all() and not within.flushed


def test_float64_is_allowed_half_an_ulp_more_and_reports_the_error_as_measured():
    # Below 1.0 the float64 step is 2**-53, half of the spacing at 1.0: three steps are 1.5 ULP.
    result = judged([1.0, 1.0], [1.0 - 3 * 2.0**-53, 1.0], np.float64, ONE)
    assert result.ok.all() and result.worst_ulp == 1.5
    assert not judged([1.0], [1.0 - 4 * 2.0**-53], np.float64, ONE).ok.any()
    # float32 gets no such slack: 1.5 ULP is beyond a budget of 1.
    assert not judged([1.0], [1.0 - 3 * 2.0**-24], np.float32, ONE).ok.any()


# --- compare.judge with budgets ---

def budgeted(precise, dtype=np.float32, budget=FOUR, label="spec", *more):
    precise = np.array(precise, dtype=np.float64)
    return Reading((precise.astype(dtype), *more), label, (precise,))


def f32(*values):
    return np.array(values, dtype=np.float32)


def test_judge_passes_within_the_budget_and_says_the_worst_error():
    expected = Expected(readings=(budgeted([1.0, 2.0]),), budgets=(FOUR,))
    verdict = judge(expected, RunOutput(outputs=(f32(1.0 + 3 * 2.0**-23, 2.0),)))
    assert verdict.outcome == PASS and verdict.ulp == 3.0 and "worst 3 ULP" in verdict.message


def test_judge_fails_beyond_the_budget_with_counts_and_per_index_ulps():
    # precise is half a step above 1.0; 1 + 38 steps is 37.5 ULP from it.
    step = 2.0**-23
    precise = [1.0 + step / 2] * 8
    actual = f32(*([1.0 + 38 * step] * 3 + [1.0] * 5))
    verdict = judge(Expected(readings=(budgeted(precise),), budgets=(FOUR,)), RunOutput(outputs=(actual,)))
    assert verdict.outcome == FAIL and verdict.ulp == 37.5
    assert "3 of 8 values beyond 4 ULP (worst 37.5 ULP)" in verdict.message
    lines = verdict.mismatches[0].lines()
    assert lines[2].startswith("  at [0]: expected 1.0, got ") and lines[2].endswith(f"(37.5 ULP from {1.0 + step / 2!r})")
    assert len(lines) == 2 + 3


def test_judge_names_an_exactly_judged_miss_as_such():
    verdict = judge(Expected(readings=(budgeted([np.nan]),), budgets=(FOUR,)), RunOutput(outputs=(f32(1.0),)))
    assert verdict.outcome == FAIL and "(judged exactly)" in verdict.mismatches[0].lines()[2]


def test_a_float64_budget_says_its_half_ulp_slack():
    precise = np.array([1.0])
    verdict = judge(Expected(readings=(Reading((precise,), "spec", (precise,)),), budgets=(ONE,)),
                    RunOutput(outputs=(np.array([1.0 + 4 * 2.0**-52]),)))
    assert "beyond 1 ULP + 0.5 (float64 reference)" in verdict.message


def test_an_output_without_budget_stays_exact_and_gives_no_ulp():
    exact = Expected(readings=(Reading((f32(1.0),)),))
    verdict = judge(exact, RunOutput(outputs=(f32(1.0),)))
    assert verdict.outcome == PASS and verdict.ulp is None
    # The second output has no budget: one ULP off is a miss there, while the first is judged by its budget.
    reading = budgeted([1.0], np.float32, FOUR, "spec", f32(5.0))
    mixed = Expected(readings=(reading,), budgets=(FOUR, None))
    off = np.nextafter(f32(5.0), f32(6.0))
    verdict = judge(mixed, RunOutput(outputs=(f32(1.0 + 2.0**-23), off)))
    assert verdict.outcome == FAIL and "1 of 1 values differ" in verdict.message and verdict.ulp == 1.0
    assert judge(mixed, RunOutput(outputs=(f32(1.0 + 2.0**-23), f32(5.0)))).outcome == PASS


def test_a_budget_without_a_precise_value_judges_exactly():
    expected = Expected(readings=(Reading((f32(1.0),)),), budgets=(FOUR,))
    verdict = judge(expected, RunOutput(outputs=(f32(1.0 + 2.0**-23),)))
    assert verdict.outcome == FAIL and verdict.ulp is None


def test_a_pass_that_needs_flushing_says_so():
    budget = Budget(1, "x", flush_subnormals=True)
    verdict = judge(Expected(readings=(budgeted([2.0**-130], np.float32, budget),), budgets=(budget,)),
                    RunOutput(outputs=(f32(0.0),)))
    assert verdict.outcome == PASS and verdict.reading == FLUSHED and FLUSHED in verdict.message


def test_several_budgeted_readings_are_ambiguous_and_name_the_one_matched():
    expected = Expected(readings=(budgeted([1.0], np.float32, FOUR, "text"), budgeted([2.0], np.float32, FOUR, "body")),
                        budgets=(FOUR,), ambiguity="which one")
    verdict = judge(expected, RunOutput(outputs=(f32(2.0 + 2 * 2.0**-22),)))
    assert verdict.outcome == AMBIGUOUS and verdict.reading == "body" and verdict.ulp == 2.0
    assert judge(expected, RunOutput(outputs=(f32(3.0),))).outcome == FAIL


def test_a_budgeted_output_of_another_dtype_is_a_type_mismatch():
    verdict = judge(Expected(readings=(budgeted([1.0]),), budgets=(FOUR,)), RunOutput(outputs=(np.array([1.0]),)))
    assert verdict.outcome == FAIL and "expected float[1], got double[1]" in verdict.message


# --- the precision profile and the reports ---

@pytest.fixture(scope="module")
def slice_example():
    return select_examples(RunOptions(op="Slice", opset=13, use_hypothesis=False))[0]


NUMPY_TYPES = {"float": np.float32, "float16": np.float16, "double": np.float64}


def fabricated(example, dtype, ulp, budget=FOUR, outcome=PASS, grade=CORRECTLY_ROUNDED):
    example = dataclasses.replace(example, types={**example.types, example.dtype_param: dtype})
    expected = Expected(readings=(budgeted([1.0], NUMPY_TYPES[dtype]),), budgets=(budget,))
    return Result(example, expected, Verdict(outcome, "x", ulp=ulp, grade=grade), actual=(f32(1.0),))


def exact_result(example):
    return Result(example, Expected(readings=(Reading((f32(1.0),)),)), Verdict(PASS, "outputs match"), actual=(f32(1.0),))


def profile_results(example):
    return [fabricated(example, "float", 0.5), fabricated(example, "float", 3.0, Budget(2, "x"), IMPRECISE, BEYOND_BUDGET),
            fabricated(example, "float16", 0.25, ONE), exact_result(example)]


def test_profile_rows_per_op_and_dtype(slice_example):
    rows = profile(profile_results(slice_example))
    assert [(r.op, r.dtype, r.cases, r.max_ulp, r.budget_ulps, r.wrong_answer_ulps) for r in rows] == [
        ("Slice", "float", 2, 3.0, 4, 8.0), ("Slice", "float16", 1, 0.25, 1, 2.0)]
    assert (rows[0].grades, rows[0].grade, rows[0].imprecise) == ((1, 0, 0, 1), BEYOND_BUDGET, 1)
    assert rows[0].over_budget and not rows[0].beyond_line and rows[1].grade == CORRECTLY_ROUNDED
    assert profile([exact_result(slice_example)]) == []


def test_the_json_report_carries_the_profile_and_each_ulp(slice_example):
    results = profile_results(slice_example) + [fabricated(slice_example, "double", float("inf"), ONE, FAIL, BEYOND_BUDGET)]
    doc = json.loads(json_report.dumps(json_report.document(results, {"name": "test"}, 0, {})))
    grades = lambda cr, beyond: {CORRECTLY_ROUNDED: cr, FAITHFUL: 0, WITHIN_BUDGET: 0, BEYOND_BUDGET: beyond}
    assert doc["precision"] == [
        {"op": "Slice", "dtype": "double", "cases": 1, "max_ulp": "inf", "budget_ulps": 1, "wrong_answer_ulps": 8.0,
         "grade": BEYOND_BUDGET, "grades": grades(0, 1), "imprecise": 0},
        {"op": "Slice", "dtype": "float", "cases": 2, "max_ulp": 3.0, "budget_ulps": 4, "wrong_answer_ulps": 8.0,
         "grade": BEYOND_BUDGET, "grades": grades(1, 1), "imprecise": 1},
        {"op": "Slice", "dtype": "float16", "cases": 1, "max_ulp": 0.25, "budget_ulps": 1, "wrong_answer_ulps": 2.0,
         "grade": CORRECTLY_ROUNDED, "grades": grades(1, 0), "imprecise": 0}]
    assert [r.get("ulp") for r in doc["results"]] == [0.5, 3.0, 0.25, None, "inf"]
    assert [(r["outcome"], r.get("grade")) for r in doc["results"]] == [
        (PASS, CORRECTLY_ROUNDED), (IMPRECISE, BEYOND_BUDGET), (PASS, CORRECTLY_ROUNDED), (PASS, None), (FAIL, BEYOND_BUDGET)]
    assert doc["results"][0]["expected"]["budgets"] == [{"ulps": 4, "reason": "test budget", "flush_subnormals": False,
                                                         "kind": "elementary"}]
    assert doc["results"][0]["expected"]["readings"][0]["precise"][0]["dtype"] == "double"
    assert "budgets" not in doc["results"][3]["expected"]
    # A merged report has no profile of its own: its records make the same one again.
    assert [r.record() for r in profile_of_records(doc["results"])] == doc["precision"]


def test_the_html_report_draws_the_profile_only_when_there_is_one(slice_example):
    doc = json_report.document(profile_results(slice_example), {"name": "test"}, 0, {})
    page = html_report.render(doc)
    row = ("<td>float16</td><td>1</td><td>correctly rounded</td><td>1</td><td></td><td></td><td></td>"
           "<td>0.25</td><td>1</td><td>2</td>")
    assert "Precision profile" in page and row in page
    merged = {key: value for key, value in doc.items() if key != "precision"}
    assert row in html_report.render(merged)
    # The imprecise case is listed under the profile, not among the failures.
    assert "1 imprecise case" in page and "Slice-" in page.split('id="precision"')[1]
    assert '<section id="failures"><h2>Failures (0 cases in 0 families)</h2>' in page
    assert "Precision profile" not in html_report.render(json_report.document([exact_result(slice_example)], {}, 0, {}))


def console_text(results) -> str:
    stream = io.StringIO()
    console_report.render(results, Console(file=stream, width=2000, color_system=None), None)
    return stream.getvalue()


def test_the_console_draws_the_profile_only_when_there_is_one(slice_example):
    text = console_text(profile_results(slice_example))
    assert "precision profile" in text
    row = next(line for line in text.splitlines() if "float16" in line and "0.25" in line)
    assert [cell.strip() for cell in row.split("│")[1:-1]] == [
        "Slice", "float16", "1", "correctly rounded", "1", "", "", "", "0.25", "1", "2"]
    beyond = next(line for line in text.splitlines() if "beyond budget" in line and "Slice" in line)
    assert [cell.strip() for cell in beyond.split("│")[1:-1]] == [
        "Slice", "float", "2", "beyond budget", "1", "", "", "1 (1 imprecise)", "3", "4", "8"]
    assert "precision profile" not in console_text([exact_result(slice_example)])


def test_the_console_shows_every_output_and_the_budget(slice_example):
    reading = Reading((f32(1.0), f32(7.0)), "spec", (np.array([1.0]), None))
    expected = Expected(readings=(reading,), budgets=(FOUR, None))
    result = Result(slice_example, expected, Verdict(FAIL, "x", ulp=9.0), actual=(f32(1.5), f32(8.0)))
    text = console_text([result])
    for line in ("expected (spec) output 0: float[1] [1.0]", "expected (spec) output 1: float[1] [7.0]",
                 "budget output 0: 4 ULP, wrong beyond 8 ULP (elementary function; test budget)",
                 "actual output 0: float[1] [1.5]", "actual output 1: float[1] [8.0]"):
        assert line in text



def _nudged(path, ulps):
    """The float32 tensor stored at `path` with every finite, nonzero element below max moved
    `ulps` ULPs toward zero."""
    from onnx import TensorProto, numpy_helper

    tensor = TensorProto()
    tensor.ParseFromString(path.read_bytes())
    array = numpy_helper.to_array(tensor).copy()
    movable = np.isfinite(array) & (array != 0) & (np.abs(array) < np.finfo(np.float32).max / 2)
    array.view(np.int32)[movable] -= ulps  # the magnitude's bits: toward zero whatever the sign
    path.write_bytes(numpy_helper.from_array(array, tensor.name).SerializeToString())


@pytest.mark.parametrize("ulps", [1, 400])
def test_verify_and_run_from_judge_stored_outputs_by_the_ops_budget(conform, tmp_path, ulps):
    from conformance.reference import covered_ops, for_op
    from conformance.registry import versions

    # a unary op judged by a budget of a few ULPs in float32: any one, found by its declaration
    op, since = next((op, v.since_version) for op in covered_ops() for v in versions(op)
                     if getattr(for_op(op).family, "budget", None) is not None and for_op(op).family.budget.ulps < 100
                     and "float" in v.allowed(for_op(op).dtype_param_of(v)) and len(v.inputs) == 1)
    out = tmp_path / "golden"
    assert conform("generate", "--op", op, "--opset", str(since), "--dtype", "float", "--no-hypothesis", "--out", str(out)).code == 0
    for path in out.glob("*/test_data_set_0/output_0.pb"):
        _nudged(path, ulps)
    verified = conform("verify", str(out), "--report-json", str(tmp_path / "v.json"))
    ran = conform("run", "--from", str(out), "--no-isolation", "--report-json", str(tmp_path / "r.json"))
    stored = json.loads((tmp_path / "v.json").read_text())["results"]
    failed = [r for r in stored if r["outcome"] == "fail"]
    if ulps == 1:  # within every budget: a stored output one ULP off is one the text allows
        assert verified.code == 0 and not failed, [(r["id"], r["message"][:120]) for r in failed][:3]
    else:
        assert verified.code == 1 and failed and all("ULP" in r["message"] for r in failed), failed[:1]
    # run --from holds the runtime to the reference's precise values by the same budget, not to
    # the stored rounding bit for bit: it passes within the budget whatever the nudge
    assert all(r["outcome"] != "fail" or "ULP" in r["message"] for r in json.loads((tmp_path / "r.json").read_text())["results"])
    assert ran.code in (0, 1)
