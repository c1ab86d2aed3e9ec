"""QuantizeLinear and DequantizeLinear: the formulas against values worked out by hand from the
text, each invalid rule, the type bindings of every version, the case files against the
reference, and the strategies over every binding."""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import TensorProto

from conformance.case import Example, dtype_param_in
from conformance.casefile import load_examples
from conformance.compare import arrays_identical, judge
from conformance.dtypes import dtype
from conformance.reference import for_op
from conformance.reference.quantize import RULES, TRAITS
from conformance.registry import versions
from conformance.runners.base import RunOutput
from conformance.strategies import bindings, draw_group

Q, D = "QuantizeLinear", "DequantizeLinear"


def _version(op: str, since: int):
    return next(v for v in versions(op) if v.since_version == since)


def _q(since: int, x, scale, zero_point=None, out="uint8", attributes=None, x_type="float", scale_type=None):
    version = _version(Q, since)
    scale_type = scale_type or ("float" if since < 19 else x_type)
    types = {"T1": x_type, "T2": out} if since < 23 else {"T1": x_type, "T2": scale_type, "T3": out}
    inputs = {"x": np.array(x, dtype=np.float64).astype(dtype(x_type).np_dtype),
              "y_scale": np.array(scale, dtype=np.float64).astype(dtype(scale_type).np_dtype)}
    if zero_point is not None:
        inputs["y_zero_point"] = np.array(zero_point, dtype=np.float64).astype(dtype(out).np_dtype)
    example = Example(version, "t", types, inputs, dict(attributes or {}), "test", "T1")
    return for_op(Q).expected(example), example


def _d(since: int, x, scale, zero_point=None, x_type="int8", scale_type="float", out=None, attributes=None):
    version = _version(D, since)
    out = out or scale_type
    param = dtype_param_in(version, "T1")
    types = {param: x_type} if since < 19 else {"T1": x_type, "T2": scale_type}
    if since >= 23:
        types["T3"] = out
    attributes = dict(attributes or {})
    if since >= 23 and out != scale_type:
        attributes["output_dtype"] = dtype(out).elem_type
    inputs = {"x": np.array(x, dtype=np.float64).astype(dtype(x_type).np_dtype),
              "x_scale": np.array(scale, dtype=np.float64).astype(dtype(scale_type).np_dtype)}
    if zero_point is not None:
        inputs["x_zero_point"] = np.array(zero_point, dtype=np.float64).astype(dtype(x_type).np_dtype)
    example = Example(version, "t", types, inputs, attributes, "test", param)
    return for_op(D).expected(example), example


def _spec(expected) -> list:
    assert expected.is_valid, expected.invalid
    return expected.readings[0].outputs[0].astype(np.float64).tolist()


# --- QuantizeLinear, worked out by hand ---

def test_nan_into_an_integer_target_matches_any_value_there_only():
    from conformance.compare import judge
    from conformance.runners.base import RunOutput

    expected, _ = _q(13, [float("nan"), 2.0], 1.0, zero_point=3)
    assert judge(expected, RunOutput(outputs=(np.array([77, 5], np.uint8),))).outcome == "ambiguous"
    assert judge(expected, RunOutput(outputs=(np.array([77, 6], np.uint8),))).outcome == "fail"  # 2 / 1 + 3 is 5


@pytest.mark.parametrize("since", [10, 13, 19, 21, 23, 25, 28])
def test_quantize_rounds_half_to_even(since):
    expected, _ = _q(since, [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.0], 1.0, 0, "int8")
    assert _spec(expected) == [0, 2, 2, 0, -2, -2, 3]


def test_quantize_without_zero_point_is_uint8_with_zero_0():
    expected, _ = _q(13, [0.0, 1.0, 2.5, 300.0, -5.0], 1.0)
    assert _spec(expected) == [0, 1, 2, 255, 0]


@pytest.mark.parametrize("target, low, high", [("int8", -128, 127), ("uint8", 0, 255), ("int16", -32768, 32767),
                                               ("uint16", 0, 65535), ("int4", -8, 7), ("uint4", 0, 15),
                                               ("int2", -2, 1), ("uint2", 0, 3)])
def test_quantize_saturates_to_each_range_the_text_lists(target, low, high):
    expected, _ = _q(25, [low - 1.0, float(low), float(high), high + 1.0, high + 1000.0], 1.0, 0, target)
    assert _spec(expected) == [low, low, high, high, high]


def test_quantize_adds_the_zero_point_after_rounding():
    expected, _ = _q(19, [0.5, 1.5, 2.5, -0.5, 5.0], 2.0, 128)
    assert _spec(expected) == [128, 129, 129, 128, 130]  # 0.25, 0.75, 1.25, -0.25, 2.5 rounded, + 128


def test_quantize_per_axis_and_negative_axis():
    x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    by_rows = [[1, 2, 3], [3, 3, 4]]  # row 1: /2 then +1: 2+1, 2.5->2 +1, 3+1
    assert _spec(_q(13, x, [1.0, 2.0], [0, 1], "int8", {"axis": 0})[0]) == by_rows
    assert _spec(_q(13, x, [1.0, 2.0], [0, 1], "int8", {"axis": -2})[0]) == by_rows
    assert _spec(_q(21, x, [1.0, 2.0, 4.0], [0, 1, 2], "int8")[0]) == [[1, 2, 3], [4, 3, 4]]  # default axis 1


def test_quantize_blocked_with_a_shorter_last_block():
    x = [[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]]
    scales = [[1.0, 2.0, 4.0], [1.0, 2.0, 4.0]]  # blocks of 2 along axis 1: columns {0,1}, {2,3}, {4}
    expected, example = _q(21, x, scales, [[0, 0, 0], [0, 0, 0]], "int8", {"axis": 1, "block_size": 2})
    assert _spec(expected) == [[1, 2, 2, 2, 1], [6, 7, 4, 4, 2]]  # 1.5->2, 2.5->2, 1.25->1, 4.5->4, 2.5->2
    assert TRAITS["blocked"](example) and TRAITS["last-block-shorter"](example)
    assert not TRAITS["per-axis"](example)


@pytest.mark.parametrize("target, saturate, big", [("float8e4m3fn", 1, 448.0), ("float8e4m3fn", 0, math.nan),
                                                   ("float8e5m2", 1, 57344.0), ("float8e5m2", 0, math.inf),
                                                   ("float8e4m3fnuz", 1, 240.0), ("float8e5m2fnuz", 0, math.nan)])
def test_quantize_float8_saturate(target, saturate, big):
    expected, _ = _q(19, [100000.0, 1.0], 1.0, 0.0, target, {"saturate": saturate})
    got = _spec(expected)
    assert (math.isnan(got[0]) if math.isnan(big) else got[0] == big) and got[1] == 1.0


def test_quantize_float8_rounds_to_nearest_even_and_adds_the_zero_point():
    assert _spec(_q(19, [1.0625, 1.1875], 1.0, 0.0, "float8e4m3fn")[0]) == [1.0, 1.25]  # 3 mantissa bits
    assert _spec(_q(19, [1.0, 2.0], 1.0, 1.0, "float8e4m3fn")[0]) == [2.0, 3.0]


def test_quantize_float4_and_float6_saturate_without_infinity():
    assert _spec(_q(23, [0.25, 0.75, 2.5, 7.0, -100.0], 1.0, 0.0, "float4e2m1")[0]) == [0.0, 1.0, 2.0, 6.0, -6.0]
    assert _spec(_q(28, [0.1, 7.5, 100.0, -0.3], 1.0, 0.0, "float6e2m3", {"saturate": 0})[0]) == [0.125, 7.5, 7.5, -0.25]
    assert _spec(_q(28, [0.1, 100.0, -0.3], 1.0, 0.0, "float6e3m2")[0]) == [0.125, 28.0, -0.3125]


def test_quantize_int32_input_and_float8e8m0_scale():
    assert _spec(_q(13, [7, -7, 5, -300], 2.0, 0, "int8", x_type="int32")[0]) == [4, -4, 2, -128]
    expected, example = _q(24, [3.0, 5.0, -6.0, 7.0], 2.0, 0, "int8", scale_type="float8e8m0")
    assert _spec(expected) == [2, 2, -3, 4]
    assert TRAITS["scale-float8e8m0"](example) and TRAITS["ties"](example)


def test_quantize_output_dtype_names_the_output_without_a_zero_point():
    expected, example = _q(21, [1.4, -3.0, -200.0], 1.0, None, "int8", {"output_dtype": 3})
    assert _spec(expected) == [1, -3, -128]
    assert TRAITS["output-dtype-given"](example) and TRAITS["zero-point-absent"](example)


def test_quantize_an_unexpressed_binding_is_a_mistake_in_the_case():
    with pytest.raises(ValueError, match="bind y to int8"):
        _q(21, [1.0], 1.0, None, "int8")  # neither zero point nor output_dtype: uint8


def test_quantize_division_precision_readings():
    # 1001.3 in float16 is 1001.5, which rounds to 1002; the exact quotient rounds to 1001.
    expected, _ = _q(23, [1001.3], 1.0, 0, "int16", {"precision": 10})
    by_label = {r.label.split(":")[0].split(" (")[0]: r.outputs[0].tolist() for r in expected.readings}
    assert by_label["spec"] == [1002] and by_label["exact quotient"] == [1001]
    # Without `precision`, a float scale divides in float: 1001.3 (float32 1001.29998779...) gives 1001.
    assert _spec(_q(23, [1001.3], 1.0, 0, "int16")[0]) == [1001]
    # A float16 scale: x is converted to float16 first (2049 -> 2048, a tie to even), 2048/1 = 2048.
    assert _spec(_q(23, [2049.0], 1.0, 0, "int16", scale_type="float16")[0]) == [2048]


def test_quantize_nan_into_an_integer_is_undefined_and_any_listed_reading_passes():
    expected, _ = _q(13, [math.nan, 1.0], 1.0, 128)
    answers = {tuple(r.outputs[0].tolist()) for r in expected.readings}
    assert {(0, 129), (128, 129), (255, 129)} <= answers
    assert judge(expected, RunOutput(outputs=(np.array([128, 129], dtype=np.uint8),))).outcome in ("pass", "ambiguous")
    assert judge(expected, RunOutput(outputs=(np.array([128, 130], dtype=np.uint8),))).outcome == "fail"


# --- DequantizeLinear, worked out by hand ---

@pytest.mark.parametrize("since", [10, 13, 19, 21, 23, 25, 28])
def test_dequantize_per_tensor(since):
    assert _spec(_d(since, [-128, 0, 127], 0.5, 1)[0]) == [-64.5, -0.5, 63.0]


def test_dequantize_int32_rounds_once_into_float():
    assert _spec(_d(10, [16777217, -5], 1.0, x_type="int32")[0]) == [16777216.0, -5.0]


def test_dequantize_output_type_is_the_multiplications_precision():
    assert _spec(_d(23, [30000, -3], 3.0, x_type="int16", out="float16")[0]) == [math.inf, -9.0]
    assert _spec(_d(23, [3], 1.00390625, out="bfloat16")[0]) == [3.015625]  # 3.01171875 rounds up to 8 bits
    expected, example = _d(24, [3, -5], 0.5, 0, scale_type="float8e8m0", out="float")
    assert _spec(expected) == [1.5, -2.5] and TRAITS["scale-float8e8m0"](example)


@pytest.mark.parametrize("x_type, values, zero_point, out", [
    ("int4", [-8, 7, 1], 0, [-16.0, 14.0, 2.0]), ("uint4", [0, 15, 3], 1, [-2.0, 28.0, 4.0]),
    ("int2", [-2, 1, 0], 0, [-4.0, 2.0, 0.0]), ("uint2", [0, 3, 2], 1, [-2.0, 4.0, 2.0]),
    ("float8e4m3fn", [448.0, -0.5], 0.0, [896.0, -1.0]), ("float4e2m1", [6.0, -0.5], 0.0, [12.0, -1.0]),
    ("float6e3m2", [28.0, -0.0625], 0.0, [56.0, -0.125]), ("uint16", [0, 65535], 1, [-2.0, 131068.0]),
])
def test_dequantize_every_input_type(x_type, values, zero_point, out):
    assert _spec(_d(28, values, 2.0, zero_point, x_type=x_type)[0]) == out


def test_dequantize_per_axis_and_blocked():
    x = [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]
    expected, example = _d(21, x, [[1.0, 2.0, 4.0], [1.0, 0.5, 0.25]], [[0, 0, 1], [0, 0, 1]],
                           attributes={"axis": 1, "block_size": 2})
    assert _spec(expected) == [[1.0, 2.0, 6.0, 8.0, 16.0], [6.0, 7.0, 4.0, 4.5, 2.25]]
    assert TRAITS["last-block-shorter"](example)
    expected, example = _d(13, [[1, 2, 3], [4, 5, 6]], [1.0, 2.0, 0.5], [0, 1, 2], attributes={"axis": -1})
    assert _spec(expected) == [[1.0, 2.0, 0.5], [4.0, 8.0, 2.0]] and TRAITS["negative-axis"](example)


# --- invalid inputs ---

@pytest.mark.parametrize("op, since, args, rule", [
    (Q, 13, dict(x=[[1.0, 2.0, 3.0]], scale=[1.0, 2.0, 4.0], zero_point=[0, 1], attributes={"axis": 1}), "zero-point-shape"),
    (Q, 13, dict(x=[[1.0, 2.0, 3.0]], scale=[1.0, 2.0], zero_point=[0, 1], attributes={"axis": 1}), "scale-shape"),
    (Q, 13, dict(x=[[1.0, 2.0, 3.0]], scale=[1.0, 2.0, 4.0], zero_point=[0, 1, 2], attributes={"axis": 2}), "axis-out-of-range"),
    (Q, 21, dict(x=[[1.0, 2.0, 3.0, 4.0]], scale=[[1.0, 2.0], [1.0, 2.0]], zero_point=[[0, 0], [0, 0]],
                 attributes={"axis": 1, "block_size": 2}), "scale-shape"),
    (Q, 21, dict(x=[[1.0, 2.0, 3.0, 4.0]], scale=[[1.0, 2.0]], zero_point=[[0, 0]],
                 attributes={"axis": 1, "block_size": 4}), "block-size-range"),
    (Q, 21, dict(x=[1.0], scale=1.0, zero_point=0, attributes={"output_dtype": 2}), "output-dtype-mismatch"),
    (Q, 13, dict(x=[[1.0, 2.0]], scale=[[1.0, 2.0]], zero_point=[[0, 0]]), "scale-rank"),
    (Q, 10, dict(x=[1.0, 2.0], scale=[1.0, 2.0], zero_point=[0, 0]), "scale-rank"),
])
def test_each_invalid_rule(op, since, args, rule):
    expected, _ = _q(since, args["x"], args["scale"], args["zero_point"], "int8", args.get("attributes"))
    assert expected.invalid is not None and expected.invalid.rule == rule
    assert expected.invalid.sentence.startswith(f"{op}-{since}:")


def test_dequantize_int32_with_a_zero_point():
    expected, _ = _d(21, [5], 1.0, 3, x_type="int32")
    assert expected.invalid.rule == "int32-zero-point"
    expected, _ = _d(21, [5], 1.0, 0, x_type="int32")
    assert expected.is_valid and expected.may_reject  # "supposed to be 0": a runtime may still refuse it


def test_every_rule_is_declared():
    assert set(RULES) <= set(for_op(Q).all_rules) and set(RULES) <= set(for_op(D).all_rules)


# --- bindings, case files, strategies ---

@pytest.mark.parametrize("op", [Q, D])
def test_every_version_binds_every_type_combination(op):
    found = {v.since_version: len(bindings(v)) for v in versions(op)}
    assert sorted(found) == [10, 13, 19, 21, 23, 24, 25, 28]
    for version in versions(op):
        assert found[version.since_version] == math.prod(len(t) for _, t in version.type_constraints)
    expected = {Q: {10: 4, 13: 4, 19: 24, 21: 40, 23: 176, 24: 220, 25: 260, 28: 300},  # 4*11*4, 4*5*11 ...
                D: {10: 3, 13: 3, 19: 21, 21: 33, 23: 108, 24: 144, 25: 168, 28: 192}}
    assert found == expected[op]


@pytest.mark.parametrize("op", [Q, D])
def test_case_files_state_what_the_reference_allows(op):
    reference = for_op(op)
    examples = load_examples(op)
    assert len(examples) > 150
    wrong, rules = [], set()
    for example in examples:
        expected = reference.expected(example)  # raises where the attributes and the binding disagree
        stated = example.expect_outputs
        if stated is not None and not any(arrays_identical(r.outputs[0], stated[0]) for r in expected.readings):
            wrong.append(example.id)
        if example.expect_error is not None:
            rules.add(example.expect_error)
            assert expected.invalid is not None and expected.invalid.rule == example.expect_error, example.id
    assert not wrong
    assert {"zero-point-shape", "axis-out-of-range", "scale-shape"} <= rules


def _covering(version) -> list[dict[str, str]]:
    """Bindings in which every allowed type of every type parameter appears at least once."""
    chosen: list[dict[str, str]] = []
    every = bindings(version)
    for param, allowed in version.type_constraints:
        for name in allowed:
            if not any(b[param] == name for b in chosen):
                chosen.append(next(b for b in every if b[param] == name))
    return chosen


@pytest.mark.parametrize("op", [Q, D])
def test_strategies_draw_defined_cases_for_every_type_of_every_version(op):
    reference = for_op(op)
    drawn = 0
    for version in versions(op):
        for binding in _covering(version):
            for example in draw_group(version, binding, 3, 0):
                drawn += 1
                expected = reference.expected(example)  # raises where the case does not express its binding
                assert expected.readings or expected.invalid, example.id
                scale = example.inputs["y_scale" if op == Q else "x_scale"]
                with np.errstate(all="ignore"):
                    wide = scale.astype(np.float64)
                assert np.isfinite(wide).all() and (wide != 0).all(), example.id
                target = dtype(version.output_dtype(0, binding))
                if op == Q and target.is_integer and dtype(binding["T1"]).kind == "float":
                    with np.errstate(all="ignore"):  # NaN and inf into an integer are undefined: kept out
                        assert np.isfinite(example.inputs["x"].astype(np.float64)).all(), example.id
                for name, trait in reference.traits.items():
                    assert type(trait(example)) is bool, name
    assert drawn > 100


def test_cause_traits_name_their_values():
    _, zero_minus = _d(19, [2.0], 2.0, -0.0, x_type="float8e4m3fn")
    _, zero_plus = _d(19, [2.0], 2.0, 0.0, x_type="float8e4m3fn")
    assert TRAITS["float-zero-point-not-plus-zero"](zero_minus) and not TRAITS["float-zero-point-not-plus-zero"](zero_plus)
    _, huge = _q(19, [65504.0], 1.1920928955078125e-07, 0, "uint8", x_type="float16")
    _, small = _q(19, [65504.0], 1.0, 0, "uint8", x_type="float16")
    assert TRAITS["quotient-beyond-int32"](huge) and not TRAITS["quotient-beyond-int32"](small)
    _, one = _q(21, [[3.0]], [[1.0]], [[0]], "int8", {"axis": 0, "block_size": 1})  # rank 2: a rank-1 x is per-tensor
    assert TRAITS["one-element-scale"](one) and TRAITS["blocked"](one) and not TRAITS["blocked-empty"](one)
    _, empty = _q(21, np.zeros((2, 0, 4)), np.zeros((2, 0, 4)) + 1, np.zeros((2, 0, 4)), "int8", {"axis": 0, "block_size": 1})
    assert TRAITS["blocked-empty"](empty)
    _, overflow = _q(19, [-65504.0], 1.0, 0.0, "float8e5m2", {"saturate": 0}, x_type="float16")
    _, inside = _q(19, [-57344.0], 1.0, 0.0, "float8e5m2", {"saturate": 0}, x_type="float16")
    assert TRAITS["e5m2-overflow"](overflow) and not TRAITS["e5m2-overflow"](inside)
    _, mixed = _q(23, [1.0], 1.0, 0, "int8", scale_type="float16")
    assert TRAITS["x-type-differs-from-scale"](mixed)


def test_an_infinite_quotient_of_finite_values_saturates():
    # 65504 / 2**-23 is beyond float16: the quotient is +inf in the division's precision, and
    # saturate gives 255; only a NaN or inf x is undefined.
    expected, _ = _q(19, [65504.0], 1.1920928955078125e-07, 0, "uint8", x_type="float16")
    assert {tuple(r.outputs[0].tolist()) for r in expected.readings} == {(255,)}


# --- traits that name runtimes' causes (expectations' `when:`) ---

def _holds(trait: str, made) -> bool:
    _, example = made
    return for_op(example.op).traits[trait](example)


def test_quantize_traits_name_their_cause():
    per_axis_first = _q(13, [[1.0, 2.0], [3.0, 4.0]], [1.0, 2.0], [0, 0], attributes={"axis": 0})
    per_axis_last = _q(13, [[1.0, 2.0], [3.0, 4.0]], [1.0, 2.0], [0, 0], attributes={"axis": 1})
    assert _holds("per-axis-not-last", per_axis_first) and not _holds("per-axis-not-last", per_axis_last)
    assert _holds("negative-scale", _q(10, [1.0], -0.25)) and not _holds("negative-scale", _q(10, [1.0], 0.25))
    assert _holds("float8-zero-point", _q(19, [1.0], 1.0, 0.0, out="float8e4m3fn"))
    assert not _holds("float8-zero-point", _q(19, [1.0], 1.0, 0, out="int8"))
    assert _holds("to-float4", _q(23, [1.0], 1.0, out="float4e2m1", attributes={"output_dtype": TensorProto.FLOAT4E2M1}))
    beyond = _q(19, [952.0], 2.0, 0.0, out="float8e4m3fn", attributes={"saturate": 0})
    assert _holds("float8-unsaturated-beyond", beyond)
    assert not _holds("float8-unsaturated-beyond", _q(19, [952.0], 4.0, 0.0, out="float8e4m3fn", attributes={"saturate": 0}))
    assert not _holds("float8-unsaturated-beyond", _q(19, [952.0], 2.0, 0.0, out="float8e4m3fn"))  # saturate=1
    assert _holds("scale-range-overflows", _q(13, [0.0], 1.18e38, 254))  # 255 * 1.18e38 > FLT_MAX
    assert not _holds("scale-range-overflows", _q(13, [0.0], 1e30, 254))
    assert _holds("not-float32", _q(19, [1.0], 1.0, 0, out="int8", x_type="float16"))
    assert not _holds("not-float32", _q(19, [1.0], 1.0, 0, out="int8"))


def test_dequantize_traits_name_their_cause():
    assert _holds("negative-float4", _d(23, [-3.0, 1.0], 3.0, x_type="float4e2m1"))
    assert not _holds("negative-float4", _d(23, [3.0, 1.0], 3.0, x_type="float4e2m1"))
    # 2253 * 3 = 6759 is no bfloat16 value; 2252 * 2 = 4504 neither, 2048 * 3 = 6144 is.
    assert _holds("product-not-bfloat16", _d(25, [2253], 3.0, x_type="uint16", out="bfloat16"))
    assert not _holds("product-not-bfloat16", _d(25, [2048], 3.0, x_type="uint16", out="bfloat16"))
    assert not _holds("product-not-bfloat16", _d(25, [2253], 3.0, x_type="uint16", out="float"))


def test_a_case_whose_output_dtype_contradicts_its_types_is_a_file_error(tmp_path):
    from conformance.casefile import load_examples
    from conformance.errors import CaseFileError

    (tmp_path / "q.yaml").write_text("op: QuantizeLinear\ncases:\n- name: wrong_output_dtype\n  dtypes: [float]\n"
                                     "  types: {T2: [float], T3: [int8]}\n  versions: [23]\n"
                                     "  inputs: {x: [1.0], y_scale: 1.0}\n  attributes: {output_dtype: 2}\n")
    with pytest.raises(CaseFileError) as raised:
        load_examples(Q, roots=(tmp_path,))
    assert "q.yaml:3" in str(raised.value) and "say uint8, but its types bind y to int8" in str(raised.value)


def test_ties_counts_a_tie_of_any_reading():
    # 568980.25 / 36.5 is 15588.5 exactly and in float32; in bfloat16 (the scale's precision) x is
    # 569344 and the quotient 15616: a tie only where the division is wider than the text's.
    made = _q(24, [568980.25], 36.5, 1, out="int16", scale_type="bfloat16")
    assert _holds("ties", made)
    assert not _holds("ties", _q(24, [568980.0], 36.5, 1, out="int16", scale_type="bfloat16"))
    assert _holds("ties", _q(13, [2.5], 1.0, 0, out="int8"))  # 2.5 in every reading


# --- a rank-1 x: "When the rank of the input is 1, per-tensor quantization is applied" ---

@pytest.mark.parametrize("since", [21, 23, 24, 25])
@pytest.mark.parametrize("attributes", [{"block_size": 2}, {"block_size": 1, "axis": 0}, {}, {"axis": 0}])
def test_a_rank_1_x_with_a_one_element_scale_is_per_tensor(since, attributes):
    # 3/2, 4/2, 7/2 rounded half to even: 2, 2, 4; plus the zero point 1.
    expected, _ = _q(since, [3.0, 4.0, 7.0], [2.0], [1], "int8", attributes)
    assert _spec(expected) == [3, 3, 5]
    assert "per-tensor" in expected.may_reject  # the granularity list reads the scale as blocked or per-axis


@pytest.mark.parametrize("since", [21, 25])
def test_a_rank_1_x_of_one_element_with_a_one_element_scale_needs_no_rejection(since):
    expected, _ = _q(since, [3.0], [2.0], [1], "int8", {"axis": 0})
    assert _spec(expected) == [3] and expected.may_reject is None  # per-axis along the only axis gives the same


@pytest.mark.parametrize("since", [13, 19])
def test_before_21_a_one_element_scale_on_a_longer_axis_stays_invalid(since):
    expected, _ = _q(since, [3.0, 4.0, 7.0], [2.0], [1], "int8", {"axis": 0})
    assert expected.invalid.rule == "scale-shape"


def test_a_rank_1_x_takes_blocks_along_its_only_axis_whatever_axis_says():
    expected, _ = _q(21, [2.0, 4.0, 8.0, 8.0], [2.0, 4.0], [0, 0], "int8", {"block_size": 2})  # axis 1 by default
    assert _spec(expected) == [1, 2, 2, 2] and "axis" in expected.may_reject


def test_dequantize_19_rank_1_one_element_scale_is_per_tensor():
    expected, _ = _d(19, [1, 2, 3], [2.0], [1], attributes={"axis": 0})
    assert _spec(expected) == [0.0, 2.0, 4.0]
