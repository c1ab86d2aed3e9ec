"""Comparison rules and verdicts, and how the report writes values."""

import json

import ml_dtypes
import numpy as np
import pytest

from conformance.compare import AMBIGUOUS, FAIL, LENIENT, PASS, UNSUPPORTED, judge, mismatch
from conformance.reference.base import Expected, Invalid, Reading, readings, single
from conformance.runners.base import RunOutput
from conformance.dtypes import dtype
from conformance.reference import covered_ops, for_op
from conformance.registry import versions
from conformance.report.json_report import _json_scalar, json_values
from conformance.strategies.common import boundary_values, bulk_fill
from conformance.values import pack

EVERY_DTYPE = sorted({d for op in covered_ops() for v in versions(op) for d in v.allowed(for_op(op).dtype_param_of(v))})


def f32(*values):
    return np.array(values, dtype=np.float32)


def test_any_nan_matches_any_nan_even_with_other_payload_bits():
    quiet = f32(np.nan)
    other = np.array([0x7FC00001], dtype=np.uint32).view(np.float32)
    assert mismatch(0, quiet, other, strict_zero=False) is None


def test_signed_zeros_match_unless_strict():
    assert mismatch(0, f32(0.0), f32(-0.0), strict_zero=False) is None
    assert mismatch(0, f32(0.0), f32(-0.0), strict_zero=True) is not None


def test_values_compare_bitwise_not_approximately():
    assert mismatch(0, f32(1.0), np.nextafter(f32(1.0), f32(2.0)), strict_zero=False) is not None


def test_dtype_and_shape_must_match_exactly():
    found = mismatch(0, f32(1.0), np.array([1.0], dtype=np.float64), False)
    assert found and "float[1]" in found.lines()[0] and "double[1]" in found.lines()[0]
    assert mismatch(0, f32(1.0, 2.0), f32(1.0, 2.0).reshape(2, 1), False) is not None


def test_mismatch_lists_indices_and_both_values():
    found = mismatch(0, f32(1, 2, 3), f32(1, 5, 3), False)
    assert found.count == 1 and found.indices[0] == ((1,), "2.0", "5.0")


def test_bfloat16_compares_bitwise():
    a = np.array([1.0, np.nan], dtype=ml_dtypes.bfloat16)
    assert mismatch(0, a, a.copy(), False) is None


def test_invalid_input_rejected_passes_and_accepted_is_lenient():
    expected = Expected(invalid=Invalid("steps-zero", "'steps' cannot be 0."))
    assert judge(expected, RunOutput.failed("boom")).outcome == PASS
    verdict = judge(expected, RunOutput(outputs=(f32(1),)))
    assert verdict.outcome == LENIENT and "accepted invalid input: steps-zero" in verdict.message


def test_valid_input_rejected_fails_unless_the_spec_allows_rejection():
    assert judge(single(f32(1)), RunOutput.failed("no")).outcome == FAIL
    allowed = Expected(readings=(Reading((f32(1),)),), may_reject="min > max before 13")
    assert judge(allowed, RunOutput.failed("no")).outcome == AMBIGUOUS


def test_unsupported_is_its_own_outcome():
    assert judge(single(f32(1)), RunOutput.not_supported("NOT_IMPLEMENTED")).outcome == UNSUPPORTED


def test_matching_one_of_several_readings_is_ambiguous_and_names_it():
    expected = readings([Reading((f32(1),), "text"), Reading((f32(2),), "function body")], "which default")
    verdict = judge(expected, RunOutput(outputs=(f32(2),)))
    assert verdict.outcome == AMBIGUOUS and verdict.reading == "function body"
    assert judge(expected, RunOutput(outputs=(f32(3),))).outcome == FAIL


def test_identical_readings_collapse_into_a_plain_pass():
    expected = readings([Reading((f32(1),), "a"), Reading((f32(1),), "b")], "no difference here")
    assert len(expected.readings) == 1
    assert judge(expected, RunOutput(outputs=(f32(1),))).outcome == PASS


@pytest.mark.parametrize("name", EVERY_DTYPE)
def test_report_values_are_written_as_each_scalar_would_be(name):
    # The whole-array path of the JSON report writes exactly what the per-element path writes.
    dt = dtype(name)
    values = np.concatenate([pack(list(boundary_values(dt)), dt), bulk_fill(dt, 200, seed=3)])
    assert json.dumps(json_values(values)) == json.dumps([_json_scalar(v) for v in values])


def test_a_signalling_nan_is_a_nan_without_a_warning():
    # Bulk fills are random bit patterns, so signalling NaNs come up; widening one to float64
    # raises numpy's "invalid value" warning, which used to reach the user's terminal.
    import warnings

    from conformance.compare import arrays_identical
    from conformance.reference.clip import clip

    signalling = np.array([0x7F800001, 0x3F800000], dtype=np.uint32).view(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert arrays_identical(np.array([np.nan, 1.0], dtype=np.float32), signalling)
        clipped = clip(signalling, 0.0, 0.5)
    assert np.isnan(clipped[0]) and clipped[1] == np.float32(0.5)


def test_a_report_is_built_and_read_with_the_cycle_collector_paused_and_back_on_after(tmp_path, monkeypatch):
    # Its thousands of containers hold no cycle; collections while they pile up walked every object.
    import gc
    import json
    import types

    from conformance.execute import RunOptions, run_examples, select_examples
    from conformance.report import json_report, merge
    from conformance.runners import make_runner

    options = RunOptions(op="Clip", opset=13, use_hypothesis=False)
    results = run_examples(select_examples(options), make_runner(), options)
    collector_on = []
    record = json_report.result_record
    monkeypatch.setattr(json_report, "result_record", lambda r: collector_on.append(gc.isenabled()) or record(r))
    monkeypatch.setattr(merge, "json", types.SimpleNamespace(loads=lambda text: collector_on.append(gc.isenabled()) or json.loads(text)))
    doc = json_report.document(results, {}, 0, {})
    json_report.write(tmp_path / "r.json", doc)
    assert merge._read(tmp_path / "r.json")["summary"] == doc["summary"]
    assert len(collector_on) == len(results) + 1 > 100 and not any(collector_on) and gc.isenabled()


def test_a_reading_that_leaves_elements_free_matches_any_value_there_and_only_there():
    fixed = np.array([1, 44, 0], dtype=np.int8)
    free = Reading((fixed,), "any value where undefined", free=(np.array([False, True, True]),))
    expected = readings([Reading((fixed,), "spec"), free], ambiguity="undefined elements")
    assert len(expected.readings) == 2  # not merged with the reading that fixes those elements
    anything = judge(expected, RunOutput(outputs=(np.array([1, -7, 99], dtype=np.int8),)))
    assert anything.outcome == AMBIGUOUS and anything.reading == "any value where undefined"
    assert judge(expected, RunOutput(outputs=(fixed.copy(),))).reading == "spec"  # the fixing reading first
    wrong = judge(expected, RunOutput(outputs=(np.array([2, -7, 99], dtype=np.int8),)))
    assert wrong.outcome == FAIL and "at [0]: expected 1, got 2" in wrong.message
    other_type = judge(expected, RunOutput(outputs=(np.array([1, -7, 99], dtype=np.int16),)))
    assert other_type.outcome == FAIL


def test_an_element_open_to_a_few_values_matches_each_of_them_and_nothing_else():
    written = np.array([10, 20, 30], dtype=np.int32)  # element 1 is a duplicate target: 20 or 21
    open_one = Reading((written,), "spec", choices=(np.array([[10, 21, 30]], dtype=np.int32),))
    expected = Expected(readings=(open_one,))
    for taken in (20, 21):
        assert judge(expected, RunOutput(outputs=(np.array([10, taken, 30], dtype=np.int32),))).outcome == PASS
    other = judge(expected, RunOutput(outputs=(np.array([10, 22, 30], dtype=np.int32),)))
    assert other.outcome == FAIL and "at [1]: expected 20, got 22" in other.message
    crossed = judge(expected, RunOutput(outputs=(np.array([21, 20, 30], dtype=np.int32),)))
    assert crossed.outcome == FAIL, "a value allowed at one element is not allowed at another"


def _by_index(outputs):
    """TopK-like outputs (values, indices) put in ascending index order along the last axis."""
    values, indices = outputs
    order = np.argsort(indices, axis=-1, kind="stable")
    return np.take_along_axis(values, order, -1), np.take_along_axis(indices, order, -1)


def test_outputs_whose_order_the_text_leaves_free_are_judged_in_the_readings_order():
    written = Reading((f32(5.0, 9.0, 7.0), np.array([0, 2, 3], dtype=np.int64)))
    expected = Expected(readings=(written,), order=_by_index, order_note="sorted=0: the order is undefined")
    shuffled = RunOutput(outputs=(f32(9.0, 7.0, 5.0), np.array([2, 3, 0], dtype=np.int64)))
    assert judge(expected, shuffled).outcome == PASS
    unpaired = RunOutput(outputs=(f32(7.0, 9.0, 5.0), np.array([2, 3, 0], dtype=np.int64)))  # values moved apart from their indices
    verdict = judge(expected, unpaired)
    assert verdict.outcome == FAIL and "sorted=0: the order is undefined" in verdict.message
    assert judge(Expected(readings=(written,)), shuffled).outcome == FAIL, "without `order`, order counts"
    malformed = RunOutput(outputs=(f32(5.0, 9.0, 7.0),))  # one output: the order cannot be read, told as it came
    assert judge(expected, malformed).outcome == FAIL


def test_an_output_with_no_value_is_judged_by_its_type_and_shape():
    from conformance.reference.expected import Expected, OutputSpec

    expected = Expected(specs=(OutputSpec(np.dtype(np.float32), (2, 3)),))
    assert judge(expected, RunOutput(outputs=(np.zeros((2, 3), np.float32),))).outcome == PASS
    assert "float64" in judge(expected, RunOutput(outputs=(np.zeros((2, 3)),))).message
    assert judge(expected, RunOutput(outputs=(np.zeros((3, 2), np.float32),))).outcome == FAIL
    assert judge(expected, RunOutput(outputs=())).outcome == FAIL


def test_a_valid_case_with_nothing_to_judge_by_is_an_error_not_a_pass():
    from conformance.reference.expected import Expected

    with pytest.raises(TypeError, match="no reading and no output spec"):
        judge(Expected(), RunOutput(outputs=(np.zeros(1),)))
