"""Cast and CastLike: the conversions against values worked out by hand from the text, the case
files against the reference, and the strategies over every (from, to) pair of the latest versions."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto

from conformance.casefile import load_examples
from conformance.compare import arrays_identical, judge
from conformance.dtypes import dtype
from conformance.errors import CaseFileError
from conformance.reference import conversion as cv
from conformance.reference import for_op
from conformance.reference.cast import (
    Policy, cast_expected, convert, e4m3fn_rounds_to_480, float_needs_nine_digits, parse_number, to_attribute,
    to_type_name,
)
from conformance.registry import versions
from conformance.runners.base import RunOutput
from conformance.strategies import bindings, draw_group


def _spec(x: np.ndarray, target: str, saturate: bool = True, round_mode: str = "up") -> np.ndarray:
    return cast_expected(x, dtype(target), saturate, round_mode).readings[0].outputs[0]


def _floats(values, target: str) -> list[float]:
    return [float(v) for v in _spec(np.array(values, dtype=np.float32), target).astype(np.float64)]


# --- the text's rules, worked out by hand ---

def test_fixed_to_fixed_discards_higher_bits():
    out = _spec(np.array([200, -200, 256], dtype=np.int16), "int8")
    assert out.tolist() == [-56, 56, 0]
    assert _spec(np.array([2**64 - 1], dtype=np.uint64), "int64").tolist() == [-1]
    assert _spec(np.array([9, -9, 8], dtype=np.int8), "int4").astype(np.int8).tolist() == [-7, 7, -8]


def test_float_to_float_beyond_range_is_infinite():
    out = _spec(np.array([1e5, -1e5, 65519.0, 65520.0], dtype=np.float64), "float16")
    assert out.tolist() == [math.inf, -math.inf, 65504.0, math.inf]


def test_uint_beyond_float16_is_plus_infinity():
    assert _spec(np.array([2**64 - 1], dtype=np.uint64), "float16").tolist() == [math.inf]


def test_bool_rules():
    floats = np.array([0.0, -0.0, np.nan, 1e-45, -np.inf], dtype=np.float32)
    assert _spec(floats, "bool").tolist() == [False, False, True, True, True]
    assert _spec(np.array([True, False]), "double").tolist() == [1.0, 0.0]
    assert _spec(np.array([0, 256], dtype=np.int32), "bool").tolist() == [False, True]


@pytest.mark.parametrize("saturate, expected", [(True, [448.0, -448.0, 448.0, 448.0, 448.0]),
                                                (False, [math.nan, math.nan, math.nan, 448.0, math.nan])])
def test_float8e4m3fn_table(saturate, expected):
    x = np.array([np.inf, -np.inf, 1e6, 464.0, 465.0], dtype=np.float32)
    out = cv.float_to_float(x, dtype("float8e4m3fn"), saturate).astype(np.float64).tolist()
    assert [(math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(out, expected)] == [True] * 5


def test_float8e5m2_without_saturate_overflows_to_infinity():
    out = cv.float_to_float(np.array([61440.0, -1e9, np.inf], np.float32), dtype("float8e5m2"), False)
    assert out.astype(np.float64).tolist() == [math.inf, -math.inf, math.inf]


def test_fnuz_types_have_no_negative_zero():
    out = cv.float_to_float(np.array([-0.0, -1e-30], np.float32), dtype("float8e4m3fnuz"))
    assert out.view(np.uint8).tolist() == [0, 0]  # 0x80 would be NaN


def test_float8_rounds_ties_to_even():
    assert _floats([1.0625, 1.1875, -1.0625], "float8e4m3fn") == [1.0, 1.25, -1.0]


def test_rounding_is_once_not_through_float32():
    # 1 + 2**-11 + 2**-40 is above the float16 tie: once rounded it goes up; through float32 it
    # becomes the tie and goes to even (down).
    x = np.array([1 + 2**-11 + 2**-40], dtype=np.float64)
    assert _spec(x, "float16").tolist() == [1 + 2**-10]
    through = convert(x, dtype("double"), dtype("float16"), True, "up", Policy(through="float"))
    assert through.tolist() == [1.0]


@pytest.mark.parametrize("mode, expected", [("up", [1.0, 2.0, 2.0, 4.0]), ("down", [1.0, 1.0, 1.0, 2.0]),
                                            ("nearest", [1.0, 2.0, 1.0, 4.0])])
def test_float8e8m0_round_modes(mode, expected):
    out = cv.to_e8m0([Fraction(v) for v in (1, 1.5, 1.25, 3)], True, mode)
    assert out.astype(np.float64).tolist() == expected


def test_float8e8m0_range():
    saturated = cv.to_e8m0([0, math.inf, Fraction(2) ** 130, Fraction(2) ** -130], True, "up")
    assert saturated.view(np.uint8).tolist() == [0, 254, 254, 0]
    assert cv.to_e8m0([0, math.inf, Fraction(2) ** 130], False, "nearest").view(np.uint8).tolist() == [255] * 3
    # 1.25 * 2**127 rounds down to 2**127: in range after rounding, beyond E8M0_MAX before it
    after, before = (cv.to_e8m0([Fraction(5, 4) * 2**127], False, "down", b).view(np.uint8).tolist() for b in (False, True))
    assert (after, before) == ([254], [255])


def test_float4e2m1_ties_and_range():
    assert _floats([0.25, 0.75, 2.5, 5.0, 7.0, -100.0], "float4e2m1") == [0.0, 1.0, 2.0, 4.0, 6.0, -6.0]


def test_integer_beyond_double_precision_rounds_once():
    out = _spec(np.array([2**53 + 1, 2**24 + 1], dtype=np.int64), "float")
    assert out.tolist() == [2.0**53, 2.0**24]
    assert cv.round_fraction(Fraction(2**24 + 3), dtype("float")) == 2.0**24 + 4


def test_float_to_integer_readings():
    expected = cast_expected(np.array([2.5, -2.5, 2.7], np.float32), dtype("int32"), True, "up")
    found = {r.label: r.outputs[0].tolist() for r in expected.readings}
    assert found["spec"] == [2, -2, 2]
    assert found["float to integer rounds half to even"] == [2, -2, 3]
    assert found["float to integer rounds half away from zero"] == [3, -3, 3]


def test_float_to_integer_beyond_range_readings():
    found = {r.label: r.outputs[0].tolist() for r in cast_expected(np.array([300.0, np.nan], np.float32),
                                                                    dtype("int8"), True, "up").readings}
    assert found["spec"] == [44, 0]  # through int64
    assert [44, 0] in found.values() and [127, 0] in found.values()


def test_strings_to_numbers():
    texts = np.array(["+INF", "inf", "-Inf", "nAn", "1e-5", "1E8", "-0.0"], dtype=object)
    out = _spec(texts, "double")
    assert out[:3].tolist() == [math.inf, math.inf, -math.inf] and math.isnan(out[3])
    assert out[4:6].tolist() == [1e-5, 1e8] and math.copysign(1, out[6]) == -1
    assert parse_number("Hello World!") is None
    assert _spec(np.array(["1000", "-7"], dtype=object), "int16").tolist() == [1000, -7]


def test_numbers_to_strings_read_back():
    x = np.array([314.15926, 0.1, np.nan, -np.inf], dtype=np.float32)
    readings = cast_expected(x, dtype("string"), True, "up").readings
    shortest = readings[0].outputs[0].tolist()
    assert shortest == ["314.15927", "0.1", "NaN", "-INF"]
    assert ["314.159271", "0.100000001", "NaN", "-INF"] in [r.outputs[0].tolist() for r in readings]  # %.9g
    assert ["314.15927", "0.1", "nan", "-inf"] in [r.outputs[0].tolist() for r in readings]


def test_to_attribute_round_trip():
    assert to_attribute("float16", 1) == "FLOAT16"
    assert to_attribute("float16", 6) == 10
    assert to_type_name("FLOAT16") == to_type_name(10) == "float16"


def test_traits_name_their_values():
    from conformance.case import Example

    version = next(v for v in versions("Cast") if v.since_version == 21)
    example = Example(version, "t", {"T1": "float", "T2": "float8e4m3fn"}, {"input": np.array([470.0], np.float32)},
                      {"to": 17, "saturate": 0}, "test", "T1")
    assert e4m3fn_rounds_to_480(example)
    assert not e4m3fn_rounds_to_480(Example(version, "t", example.types, {"input": np.array([460.0], np.float32)},
                                            example.attributes, "test", "T1"))
    string = Example(version, "t", {"T1": "double", "T2": "string"}, {"input": np.array([2.0**70])}, {"to": 8}, "test", "T1")
    assert float_needs_nine_digits(string)


# --- the case files and the strategies ---

@pytest.mark.parametrize("op", ["Cast", "CastLike"])
def test_case_files_state_what_the_reference_allows(op):
    reference = for_op(op)
    examples = load_examples(op)
    assert len(examples) > 300
    wrong = []
    for example in examples:
        expected = reference.expected(example)  # raises where 'to' and T2 disagree
        stated = example.expect_outputs
        if stated is not None and not any(arrays_identical(r.outputs[0], stated[0]) for r in expected.readings):
            wrong.append(example.id)
    assert not wrong


@pytest.mark.parametrize("source, values, target, actual, defined_at", [
    ("float", [1.5, 300.0, np.nan, -1e10], "int8", [1, 42, 7, -3], 0),  # "undefined if OOR"
    ("double", [-2.0, 4.0], "float8e8m0", [1.0, 4.0], 1),  # negative into E8M0: "Unspecified"
])
def test_any_value_matches_where_the_text_leaves_a_cast_undefined(source, values, target, actual, defined_at):
    x = np.array(values, dtype=dtype(source).np_dtype)
    expected = cast_expected(x, dtype(target), True, "up")
    answer = np.array(actual, dtype=np.float64).astype(dtype(target).np_dtype)
    matched = judge(expected, RunOutput(outputs=(answer,)))
    assert matched.outcome == "ambiguous" and "any value where the text leaves it undefined" in matched.reading
    wrong = answer.copy()
    wrong[defined_at] = np.array(8.0).astype(wrong.dtype)  # wrong where the text fixes the result
    assert judge(expected, RunOutput(outputs=(wrong,))).outcome == "fail"


def test_a_string_naming_no_number_casts_to_any_value():
    x = np.array(["abc", "2.5"], dtype=object)
    expected = cast_expected(x, dtype("float"), True, "up")
    assert judge(expected, RunOutput(outputs=(np.array([123.0, 2.5], dtype=np.float32),))).outcome == "ambiguous"
    assert judge(expected, RunOutput(outputs=(np.array([123.0, 2.0], dtype=np.float32),))).outcome == "fail"


CAST_CASE = """op: Cast
cases:
- name: to_from_types
  dtypes: [float]
  types: {T2: [float16]}
  versions: [1, 13]
  inputs:
    input: [1.0]
"""


def test_to_is_filled_from_the_binding(tmp_path):
    (tmp_path / "cast.yaml").write_text(CAST_CASE)
    examples = {e.version.since_version: e for e in load_examples("Cast", roots=(tmp_path,))}
    assert examples[13].attributes["to"] == TensorProto.FLOAT16 == 10
    assert examples[1].attributes["to"] == "FLOAT16"  # Cast-1's `to` is a STRING


@pytest.mark.parametrize("written, agrees", [("10", True), ("1", False)])
def test_a_written_to_must_agree_with_the_binding(tmp_path, written, agrees):
    (tmp_path / "cast.yaml").write_text(CAST_CASE.replace("versions: [1, 13]", "versions: [13]")
                                        + f"  attributes:\n    to: {written}\n")
    if agrees:
        assert load_examples("Cast", roots=(tmp_path,))[0].attributes["to"] == 10
        return
    with pytest.raises(CaseFileError) as raised:
        load_examples("Cast", roots=(tmp_path,))
    assert "cast.yaml:3" in str(raised.value) and "'to' is 1" in str(raised.value) and "T2=float16" in str(raised.value)


@pytest.mark.parametrize("op", ["Cast", "CastLike"])
def test_every_pair_of_the_latest_version_draws_defined_cases(op):
    """Every (from, to) pair draws; drawn cases stay where the text defines the result: no float
    beyond an integer target, no negative into float8e8m0, no NaN into a type without it."""
    version = versions(op)[-1]
    reference = for_op(op)
    pairs = bindings(version)
    assert len(pairs) == len(version.allowed("T1")) * len(version.allowed("T2"))
    # Every type on each side, each beside three others (all 576 pairs take the CI half a minute).
    sources, targets = version.allowed("T1"), version.allowed("T2")
    sampled = [b for b in pairs if (sources.index(b["T1"]) - targets.index(b["T2"])) % len(targets) in (0, 5, 11)]
    for binding in sampled:
        for example in draw_group(version, binding, 2, 0):
            expected = reference.expected(example)
            assert expected.readings or expected.invalid, example.id
            x, target = example.inputs["input"], dtype(binding["T2"])
            if dtype(binding["T1"]).kind == "float" and target.is_integer:
                with np.errstate(all="ignore"):
                    wide = x.astype(np.float64)
                assert np.isfinite(wide).all() and (wide >= target.lowest).all() and (wide <= float(target.max)).all()
            if op == "Cast":
                assert to_type_name(example.attributes["to"]) == target.name


def test_the_other_readings_differ_from_the_first_in_one_choice_only():
    """The readings of a wide-to-narrow cast are the first one and one change each."""
    x = np.array([1 + 2**-11 + 2**-40, 1e300], dtype=np.float64)
    labels = [r.label for r in cast_expected(x, dtype("float16"), True, "up").readings]
    assert labels[0] == "spec" and "rounds toward zero" in labels
    toward_zero = convert(x, dtype("double"), dtype("float16"), True, "up", Policy(float_rounding=cv.TOWARD_ZERO))
    assert toward_zero.tolist() == [1.0, math.inf]  # beyond range: inf, as the text says, whatever the rounding
    assert ml_dtypes.finfo(ml_dtypes.float8_e8m0fnu).bits == 8


def test_a_stored_cast_whose_to_contradicts_its_output_type_is_unreadable_not_a_traceback(tmp_path, conform):
    from onnx import helper, numpy_helper

    folder = tmp_path / "golden" / "test_cast_contradicting"
    (folder / "test_data_set_0").mkdir(parents=True)
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    (folder / "test_data_set_0" / "input_0.pb").write_bytes(numpy_helper.from_array(np.array([1.0, 2.0]), "x").SerializeToString())
    (folder / "test_data_set_0" / "output_0.pb").write_bytes(
        numpy_helper.from_array(np.array([1.0, 2.0], np.float16), "y").SerializeToString())
    result = conform("verify", str(tmp_path / "golden"))
    assert "'to' names float, but the output's type (T2) is float16" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr and result.code != 0
