"""The traits every op has (reference/plumbing.py): the values a runtime's dtype plumbing changes,
in an input, an attribute or the text's output; and expectations/openvino-cpu.yaml, which names
OpenVINO's deviations by them."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto

from conformance.case import Example
from conformance.expectations import load
from conformance.reference import clip, covered_ops, for_op, plumbing
from conformance.registry import versions

ROOT = Path(__file__).resolve().parent.parent


def example(op: str, since: int, types: dict, attributes: dict | None = None, **inputs) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    return Example(version, "unit", dict(types), dict(inputs), dict(attributes or {}), "unit", for_op(op).dtype_param)


def holds(trait: str, case: Example) -> bool:
    return for_op(case.op).traits[trait](case)


def add(dtype: str, a, b, numpy_type) -> Example:
    return example("Add", 14, {"T": dtype}, A=np.array(a, numpy_type), B=np.array(b, numpy_type))


def test_every_covered_op_has_the_plumbing_traits():
    for op in covered_ops():
        assert set(plumbing.TRAITS) <= set(for_op(op).traits), op


def test_an_ops_own_trait_of_the_same_name_wins():
    # Clip's nan-input is about its data input only, not a NaN bound.
    assert for_op("Clip").traits["nan-input"] is clip.nan_input
    nan_bound = example("Clip", 13, {"T": "float"}, input=np.array([0, 1], np.float32), min=np.float32(np.nan))
    assert not holds("nan-input", nan_bound)
    assert plumbing.nan_input(nan_bound)
    assert for_op("Add").traits["nan-input"] is plumbing.nan_input


def test_int64_beyond_int32_in_an_input_an_attribute_or_the_texts_output():
    assert holds("int64-beyond-int32", add("int64", [2**31], [0], np.int64))
    assert holds("int64-beyond-int32", add("int64", [-(2**31) - 1], [0], np.int64))
    assert not holds("int64-beyond-int32", add("int64", [2**31 - 1, -(2**31)], [0, 0], np.int64))
    # Inputs in range, the sum beyond it: the text's output has it.
    assert holds("int64-beyond-int32", add("int64", [2**31 - 1], [1], np.int64))
    assert holds("int64-beyond-int32", add("int64", np.int64(2**40), np.int64(1), np.int64))  # rank 0
    # An integer attribute (Slice-1's ends) on float data.
    slice1 = example("Slice", 1, {"T": "float"}, {"starts": [0], "ends": [2**40]}, data=np.zeros((3,), np.float32))
    assert holds("int64-beyond-int32", slice1)
    assert not holds("int64-beyond-int32", example("Slice", 1, {"T": "float"}, {"starts": [0], "ends": [2]},
                                                   data=np.zeros((3,), np.float32)))
    assert not holds("int64-beyond-int32", add("int32", [2**31 - 1], [1], np.int32))


def test_an_invalid_case_is_judged_by_its_inputs_alone():
    # Shapes that do not broadcast: no output the text gives, so only the inputs count.
    small = add("int64", [[1, 2]], [1, 2, 3], np.int64)
    assert not for_op("Add").expected(small).is_valid
    assert not holds("int64-beyond-int32", small)
    assert holds("int64-beyond-int32", add("int64", [[1, 2**33]], [1, 2, 3], np.int64))
    assert not holds("double-not-float32", add("double", [[1.0, 2.0]], [1.0, 2.0, 3.0], np.float64))


def test_unsigned_beyond_int32():
    greater = example("Greater", 13, {"T": "uint32"}, A=np.array([4294967295], np.uint32), B=np.array([1], np.uint32))
    assert holds("unsigned-beyond-int32", greater)
    assert not holds("unsigned-beyond-int32", add("uint32", [2**31 - 2], [1], np.uint32))
    assert holds("unsigned-beyond-int32", add("uint32", [2**31 - 1], [1], np.uint32))  # the text's output
    assert holds("unsigned-beyond-int32", add("uint64", [2**32], [0], np.uint64))
    assert holds("unsigned-beyond-int32", add("uint64", np.uint64(2**63), np.uint64(0), np.uint64))  # rank 0
    assert not holds("unsigned-beyond-int32", add("uint8", [255], [0], np.uint8))
    assert not holds("unsigned-beyond-int32", add("int64", [2**40], [0], np.int64))


def test_empty_unsigned_wide():
    # tract 0.23 reads an empty uint32/uint64 initializer as int32/int64.
    assert holds("empty-unsigned-wide", add("uint32", np.zeros((2, 0, 3)), [[2]], np.uint32))
    assert holds("empty-unsigned-wide", add("uint64", [], [], np.uint64))
    assert not holds("empty-unsigned-wide", add("uint32", [1], [2], np.uint32))
    assert not holds("empty-unsigned-wide", add("uint16", [], [], np.uint16))
    assert not holds("empty-unsigned-wide", add("int32", [], [], np.int32))


def test_double_not_float32():
    assert holds("double-not-float32", add("double", [0.1], [0.0], np.float64))
    assert holds("double-not-float32", add("double", [1e300], [0.0], np.float64))  # beyond float32's range
    assert not holds("double-not-float32", add("double", [0.5, -2.0], [0.25, 0.0], np.float64))
    # Infinities and NaN are held by float32.
    assert not holds("double-not-float32", add("double", [np.inf, np.nan], [1.0, 1.0], np.float64))
    # Exact inputs, a quotient float32 does not hold.
    third = example("Div", 14, {"T": "double"}, A=np.array([1.0]), B=np.array([3.0]))
    assert holds("double-not-float32", third)
    assert not holds("double-not-float32", add("float", [0.1], [0.2], np.float32))


def test_double_infinity_in_an_input_or_the_output():
    assert holds("double-infinity", add("double", [-np.inf], [1.0], np.float64))
    assert holds("double-infinity", example("Div", 14, {"T": "double"}, A=np.array([1.0]), B=np.array([0.0])))
    assert not holds("double-infinity", add("double", [1.0], [1.0], np.float64))
    assert not holds("double-infinity", add("float", [np.inf], [1.0], np.float32))


def test_int32_not_float32():
    relu = example("Relu", 14, {"T": "int32"}, X=np.array([2**24 + 1], np.int32))
    assert holds("int32-not-float32", relu)
    assert not holds("int32-not-float32", example("Relu", 14, {"T": "int32"}, X=np.array([2**24, -(2**31)], np.int32)))
    assert holds("int32-not-float32", add("int32", [2**24], [1], np.int32))  # the text's output


def test_subnormal():
    tiny = float(np.finfo(np.float32).smallest_subnormal)
    assert holds("subnormal", example("Neg", 13, {"T": "float"}, X=np.array([tiny], np.float32)))
    assert not holds("subnormal", example("Neg", 13, {"T": "float"}, X=np.array([1.0, 0.0, -0.0, np.inf], np.float32)))
    bf16_tiny = ml_dtypes.finfo(ml_dtypes.bfloat16).smallest_subnormal
    assert holds("subnormal", example("Neg", 13, {"T": "bfloat16"}, X=np.array([bf16_tiny], ml_dtypes.bfloat16)))
    # Normal inputs, a subnormal quotient.
    smallest = float(np.finfo(np.float32).smallest_normal)
    assert holds("subnormal", example("Div", 14, {"T": "float"}, A=np.array([smallest], np.float32),
                                      B=np.array([4.0], np.float32)))


def test_nan_input_and_string_input():
    assert holds("nan-input", add("float", [np.nan], [1.0], np.float32))
    assert not holds("nan-input", add("float", [np.inf], [1.0], np.float32))
    assert holds("infinite-input", add("float", [1.0], [-np.inf], np.float32))
    assert not holds("infinite-input", add("float", [np.nan], [1.0], np.float32))
    assert not holds("infinite-input", add("int32", [2**31 - 1], [1], np.int32))
    strings = example("Slice", 13, {"T": "string", "Tind": "int64"}, data=np.array(["a", "b"], dtype=object),
                      starts=np.array([0], np.int64), ends=np.array([1], np.int64))
    assert holds("string-input", strings)
    assert not holds("string-input", add("float", [1.0], [1.0], np.float32))


def test_string_trailing_nul_in_an_input_or_a_tensor_attribute():
    def slice_of(*strings):
        return example("Slice", 13, {"T": "string", "Tind": "int64"}, data=np.array(strings, dtype=object),
                       starts=np.array([0], np.int64), ends=np.array([1], np.int64))
    assert holds("string-trailing-nul", slice_of("a", "b\x00"))
    assert not holds("string-trailing-nul", slice_of("a\x00b", ""))  # a NUL inside is not at the end
    constant = example("Constant", 13, {"T": "string"}, {"value": np.array(["z\x00"], dtype=object)})
    assert holds("string-trailing-nul", constant)


def test_wide_integer_not_float32():
    # Div-13 int64 2147483647 / 5: OpenVINO gives 429496736, the quotient of float32 operands.
    assert holds("wide-integer-not-float32", add("int64", [2**31 - 1], [0], np.int64))
    assert holds("wide-integer-not-float32", add("uint64", [2**24 + 1], [0], np.uint64))
    assert holds("wide-integer-not-float32", add("int64", [2**24], [1], np.int64))  # the text's output
    assert not holds("wide-integer-not-float32", add("int64", [2**24, -(2**31)], [0, 2**40], np.int64))
    assert not holds("wide-integer-not-float32", add("int32", [2**24 + 1], [0], np.int32))  # int32-not-float32's
    pow_ = example("Pow", 12, {"T": "float", "T1": "uint64"}, X=np.array([-1.0], np.float32), Y=np.array([2**24 + 1], np.uint64))
    assert holds("wide-integer-not-float32", pow_)
    assert not holds("wide-integer-not-float32", example("Pow", 12, {"T": "float", "T1": "uint64"},
                                                         X=np.array([-1.0], np.float32), Y=np.array([3], np.uint64)))


def cast(source: str, target: str, values, numpy_type, saturate: int = 1) -> Example:
    to = {"float8e4m3fn": TensorProto.FLOAT8E4M3FN, "float8e5m2": TensorProto.FLOAT8E5M2, "bfloat16": TensorProto.BFLOAT16,
          "float": TensorProto.FLOAT}[target]
    return example("Cast", 21, {"T1": source, "T2": target}, {"to": to, "saturate": saturate}, input=np.array(values, numpy_type))


def test_beyond_float8_output():
    assert holds("beyond-float8-output", cast("float", "float8e4m3fn", [500.0], np.float32))
    assert holds("beyond-float8-output", cast("float", "float8e4m3fn", [-np.inf], np.float32))
    assert not holds("beyond-float8-output", cast("float", "float8e4m3fn", [448.0, np.nan], np.float32))
    assert not holds("beyond-float8-output", cast("float", "float8e5m2", [500.0], np.float32))  # e5m2 holds it
    assert holds("beyond-float8-output", cast("int32", "float8e5m2", [60000], np.int32))
    assert not holds("beyond-float8-output", cast("float", "bfloat16", [1e30], np.float32))


def test_inexact_into_bfloat16():
    assert holds("inexact-into-bfloat16", cast("float", "bfloat16", [1.0 + 2**-10], np.float32))
    assert not holds("inexact-into-bfloat16", cast("float", "bfloat16", [1.5, np.inf, np.nan], np.float32))
    assert holds("inexact-into-bfloat16", cast("uint16", "bfloat16", [257], np.uint16))
    assert not holds("inexact-into-bfloat16", cast("float", "float", [1.0 + 2**-10], np.float32))  # no bfloat16 output


@pytest.mark.parametrize("source, numpy_type", [("int4", ml_dtypes.int4), ("float8e4m3fn", ml_dtypes.float8_e4m3fn),
                                                 ("float4e2m1", ml_dtypes.float4_e2m1fn)])
def test_narrow_types_do_not_crash_a_trait(source, numpy_type):
    case = example("Cast", 21, {"T1": source, "T2": "double"}, {"to": TensorProto.DOUBLE},
                   input=np.array([1, -2, 0], numpy_type))
    answers = {name: trait(case) for name, trait in plumbing.TRAITS.items()}
    assert all(isinstance(answer, bool) for answer in answers.values())
    # These values are float32's: a double output of them is exact, and nothing is wide.
    assert not any(answers.values())


def test_openvino_expectations_load_and_name_causes():
    entries = load(ROOT / "expectations" / "openvino-cpu.yaml")
    assert len(entries) > 50
    for entry in entries:
        assert entry.runner == "openvino", entry.source
        assert entry.match != "hypothesis-*", entry.source
        named = entry.when is not None or entry.rule is not None or entry.case is not None or entry.message is not None
        # A flaky entry excuses only what the runtime said: never a whole op version.
        assert not entry.flaky or entry.message is not None, entry.source
        # An entry with none of those names a version (or its dtypes) that OpenVINO fails whole.
        assert named or (entry.versions and entry.match is None and "every" in entry.reason), entry.source
    whens = {entry.when for entry in entries}
    assert {"int64-beyond-int32", "unsigned-beyond-int32", "double-not-float32"} <= whens


def test_rank_0_needs_every_given_input_0_d():
    assert holds("rank-0", add("float", 1.0, 2.0, np.float32))
    assert not holds("rank-0", add("float", [1.0], 2.0, np.float32))
    clip_13 = example("Clip", 13, {"T": "float"}, input=np.float32(1), min=None, max=np.float32(2))
    assert holds("rank-0", clip_13)  # an omitted optional input is no input


def test_bfloat16_result_rounded_looks_at_the_exact_result():
    # LeakyRelu's alpha * x: 0.1 * -1 is not a bfloat16 value; 0.5 * -1 is.
    leaky = lambda alpha: example("LeakyRelu", 16, {"T": "bfloat16"}, {"alpha": alpha},  # noqa: E731
                                  X=np.array([-1.0, 2.0], ml_dtypes.bfloat16))
    assert holds("bfloat16-result-rounded", leaky(0.1))
    assert not holds("bfloat16-result-rounded", leaky(0.5))
    assert not holds("bfloat16-result-rounded", example("LeakyRelu", 16, {"T": "float"}, {"alpha": 0.1},
                                                        X=np.array([-1.0], np.float32)))  # no bfloat16 output
