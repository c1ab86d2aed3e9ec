"""`conform repro`: a case written as a standalone script, and every finding of docs/findings.md
reproduced by its script, in a process of its own, without conform.

A finding's minimal case is one of conform's own case files' cases, or (where only drawn cases
showed it) one written here from the finding's own example, in FINDING_CASES. Each script must exit
1 (or die of the signal the finding names) and print what the finding says. Findings on OpenVINO
and tract are skipped where those runtimes are not installed.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from conformance import casefile
from conformance.cli import app
from conformance.errors import UsageError
from conformance.execute import RunOptions, expected_for, select_examples
from conformance.model import build
from conformance.precision import Budget, check
from conformance.reference import for_op
from conformance.repro import ReproRequest, array_source, script
from conformance.runners import RunnerSpec

SCRIPT_TIMEOUT = 120  # seconds a script may take: loading OpenVINO is the slowest part


def _case(op: str, name: str, version: int, dtype: str, inputs: dict, attributes: dict | None = None,
          types: dict | None = None, spec: str = "the finding's own example") -> dict:
    """A minimal case as a case file writes it, for a finding that only drawn cases showed."""
    written = {"name": name, "spec": spec, "versions": [version], "dtypes": [dtype], "inputs": inputs}
    if types:
        written["types"] = {param: [value] for param, value in types.items()}
    if attributes:
        written["attributes"] = attributes
    return {"op": op, "case": written}


# The findings' own examples, where no case of conform's case files is one (by op: one file each).
FINDING_CASES = [
    _case("ArgMax", "finding_empty_negative_axis", 13, "float", {"data": {"shape": [0, 3], "fill": 0.0}}, {"axis": -1}),
    _case("Max", "finding_int64_beyond_int32", 13, "int64", {"data_0": [0, 0, 0, 0], "data_1": [4294967296, -4294967296, 2147483648, 1]}),
    _case("Pow", "finding_int32_power_beyond_type", 13, "int32", {"X": [2], "Y": [64]}, types={"T1": "int32"}),
    _case("Pow", "finding_int64_exponent_32_bits", 15, "int64", {"X": [-3], "Y": [6025579703385479837]}, types={"T1": "int64"}),
    _case("Pow", "finding_mixed_integer_types", 15, "int32", {"X": [3], "Y": [2]}, types={"T1": "uint16"}),
    _case("Pow", "finding_float16_float", 15, "float16", {"X": [3.0], "Y": [2.0]}, types={"T1": "float"}),
    _case("Shrink", "finding_int32_beyond_float32", 9, "int32", {"input": [16777217]}, {"lambd": 0.5, "bias": 0.0}),
    _case("Gelu", "finding_tanh_double", 20, "double", {"X": [0.5, 1.5, -0.75, 2.5]}, {"approximate": "tanh"}),
    _case("Gelu", "finding_below_minus_one", 20, "float", {"X": [-3.0, -4.0, -5.0]}),
    _case("Gelu", "finding_approximate_empty", 20, "float16", {"X": [1.0]}, {"approximate": ""}),
    _case("Elu", "finding_exp_minus_one_cancels", 22, "float", {"X": [-0.001]}),
    _case("Selu", "finding_cancellation", 22, "float", {"X": [-0.00167]}),
    _case("Softplus", "finding_negative_input", 22, "float", {"X": {"shape": [2000], "random": [-4.0, -0.1]}}),
    _case("Softplus", "finding_exp_overflows", 22, "float", {"X": [100.0]}),
    _case("Mish", "finding_below_minus_20", 22, "float", {"X": {"shape": [500], "random": [-60.0, -20.0]}}),
    _case("Mish", "finding_double", 22, "double", {"X": {"shape": [500], "random": [-30.0, 30.0]}}),
    _case("Sin", "finding_sin_pi", 7, "double", {"input": [3.141592653589793, -3.0]}),
    _case("Sigmoid", "finding_minus_four", 13, "float", {"X": [-4.0, -17.0, -18.0, -20.0]}),
    _case("PRelu", "finding_zero_with_nan_slope", 16, "float", {"X": [0.0, 1.0], "slope": ["nan"]}),
    _case("Cast", "finding_saturate_not_float8", 19, "float16", {"input": [1.5]}, {"saturate": 0}, {"T2": "float16"}),
    _case("Cast", "finding_round_mode_not_e8m0", 24, "uint8", {"input": [3]}, {"round_mode": "down"}, {"T2": "uint8"}),
    _case("Cast", "finding_e4m3fn_saturate_0", 19, "int64", {"input": [-480]}, {"saturate": 0}, {"T2": "float8e4m3fn"}),
    _case("Cast", "finding_e5m2_saturate_0", 19, "uint16", {"input": [65535]}, {"saturate": 0}, {"T2": "float8e5m2"}),
    _case("Cast", "finding_e5m2_inf_saturate_1", 19, "float8e5m2", {"input": ["-inf"]}, {"saturate": 1}, {"T2": "float8e5m2"}),
    _case("Cast", "finding_e4m3fn_minus_zero_to_bool", 19, "float8e4m3fn", {"input": ["-0.0"]}, types={"T2": "bool"}),
    _case("Cast", "finding_e8m0_smallest_to_bool", 24, "float8e8m0", {"input": [5.877471754111438e-39]}, types={"T2": "bool"}),
    _case("Cast", "finding_double_to_string", 13, "double", {"input": [2.2250738585072014e-308]}, types={"T2": "string"}),
    _case("Cast", "finding_string_subnormal", 13, "string", {"input": ["4.94065645841246544e-324"]}, types={"T2": "double"}),
    _case("Cast", "finding_e8m0_through_float32_down", 24, "uint32", {"input": [2147483647]}, {"round_mode": "down"},
          {"T2": "float8e8m0"}),
    _case("Cast", "finding_e8m0_through_float32_up", 24, "double", {"input": [16777217.0]}, {"round_mode": "up"}, {"T2": "float8e8m0"}),
    _case("Cast", "finding_string_to_bfloat16", 19, "string", {"input": ["1.5"]}, types={"T2": "bfloat16"}),
    _case("Cast", "finding_e8m0_inf_saturate", 24, "float", {"input": ["inf"]}, {"saturate": 1}, {"T2": "float8e8m0"}),
    _case("Cast", "finding_e8m0_zero_saturate_0", 24, "float", {"input": [0.0]}, {"saturate": 0}, {"T2": "float8e8m0"}),
    _case("Cast", "finding_string_trailing_nul", 19, "string", {"input": ["a\0"]}, types={"T2": "string"}),
    _case("Cast", "finding_cast_1", 1, "float", {"input": [1.5]}, types={"T2": "int32"}),
    _case("Cast", "finding_e4m3fn_saturate_1", 19, "float", {"input": [1000.0]}, {"saturate": 1}, {"T2": "float8e4m3fn"}),
    _case("Cast", "finding_into_bfloat16", 13, "float16", {"input": [-0.00036406517]}, types={"T2": "bfloat16"}),
    _case("Cast", "finding_float4_sign", 23, "float4e2m1", {"input": [-0.5, 1.0, -6.0, 3.0, -1.5, 0.5, -0.5]}, types={"T2": "bfloat16"}),
    _case("Cast", "finding_e8m0_round_up", 24, "float16", {"input": [2.5]}, {"round_mode": "up"}, {"T2": "float8e8m0"}),
    _case("Cast", "finding_e8m0_saturate_0", 24, "bfloat16", {"input": [9.18e-41]}, {"saturate": 0}, {"T2": "float8e8m0"}),
    _case("CastLike", "finding_round_mode_down", 24, "float", {"input": [1.5], "target_type": [1.0]}, {"round_mode": "down"},
          {"T2": "float8e8m0"}),
    _case("QuantizeLinear", "finding_quotient_beyond_int32", 19, "float16",
          {"x": [65504.0], "y_scale": 1.1920928955078125e-07, "y_zero_point": 0}, types={"T2": "uint8"}),
    _case("QuantizeLinear", "finding_blocked_empty", 21, "float",
          {"x": {"shape": [2, 0, 4], "fill": 1.0}, "y_scale": {"shape": [2, 0, 4], "fill": 1.0},
           "y_zero_point": {"shape": [2, 0, 4], "fill": 0}}, {"axis": 0, "block_size": 1}, {"T2": "uint8"}),
    _case("QuantizeLinear", "finding_one_element_scale_blocked", 21, "float", {"x": [3.0], "y_scale": [1.0], "y_zero_point": [0]},
          {"axis": 0, "block_size": 1}, {"T2": "uint8"}),
    _case("QuantizeLinear", "finding_e5m2_saturate_0", 19, "float16", {"x": [-65504.0], "y_scale": 1.0, "y_zero_point": 0.0},
          {"saturate": 0}, {"T2": "float8e5m2"}),
    _case("QuantizeLinear", "finding_quotient_wraps", 10, "float", {"x": [2.0], "y_scale": 3.4703241604496144e-16, "y_zero_point": 127},
          types={"T2": "int8"}),
    _case("QuantizeLinear", "finding_tie_with_zero_point", 21, "float", {"x": [-3.25], "y_scale": 0.5, "y_zero_point": -1},
          types={"T2": "int4"}),
    _case("QuantizeLinear", "finding_ties_with_zero_point", 19, "float", {"x": [2.5, 3.5, 0.5], "y_scale": 1.0, "y_zero_point": 1},
          types={"T2": "uint8"}),
    _case("QuantizeLinear", "finding_ties_without_zero_point", 19, "float", {"x": [2.5, 3.5, 0.5], "y_scale": 1.0, "y_zero_point": 0},
          types={"T2": "uint8"}),
    _case("QuantizeLinear", "finding_scale_span_overflows", 19, "float", {"x": [0.0], "y_scale": 1.18e38, "y_zero_point": 254},
          types={"T2": "uint8"}),
    _case("QuantizeLinear", "finding_float8_saturate_0_without_zero_point", 23, "float", {"x": [952.0], "y_scale": 2.0, "y_zero_point": None},
          {"saturate": 0, "output_dtype": 17}, {"T2": "float", "T3": "float8e4m3fn"}),
    _case("QuantizeLinear", "finding_to_float4", 23, "float", {"x": [1.0, -2.0], "y_scale": 1.0, "y_zero_point": 0.0},
          types={"T2": "float", "T3": "float4e2m1"}),
    _case("QuantizeLinear", "finding_negative_scale", 10, "float", {"x": [-54.5, -16.0, -64.0, -41.0], "y_scale": -0.25, "y_zero_point": 0},
          types={"T2": "uint8"}),
    _case("DequantizeLinear", "finding_float4_to_float16", 23, "float4e2m1", {"x": [1.0, -0.5], "x_scale": 2.0, "x_zero_point": None},
          {"output_dtype": 10}, {"T2": "float16", "T3": "float16"}),
    _case("DequantizeLinear", "finding_e4m3fnuz_zero_point", 19, "float8e4m3fnuz",
          {"x": [-0.5625], "x_scale": 0.333984375, "x_zero_point": -0.1875}, types={"T2": "bfloat16"}),
    _case("DequantizeLinear", "finding_empty_per_axis", 19, "float8e4m3fn",
          {"x": {"shape": [0, 1, 2, 1], "fill": 1.0}, "x_scale": {"shape": [0], "fill": 1.0}, "x_zero_point": {"shape": [0], "fill": 0.0}},
          {"axis": 0}, {"T2": "float"}),
    _case("DequantizeLinear", "finding_float4_sign", 23, "float4e2m1", {"x": [-0.5, 1.0, -6.0], "x_scale": 1.0, "x_zero_point": None},
          types={"T2": "float", "T3": "float"}),
    _case("DequantizeLinear", "finding_bfloat16_output", 23, "uint16", {"x": [2253], "x_scale": 3.0, "x_zero_point": 0},
          types={"T2": "bfloat16", "T3": "bfloat16"}),
    _case("DequantizeLinear", "finding_blocked", 21, "int8", {"x": [[1, 2, 3, 4]], "x_scale": [[1.0, 2.0]], "x_zero_point": [[0, 0]]},
          {"axis": 1, "block_size": 2}, {"T2": "float"}),
    _case("DequantizeLinear", "finding_output_dtype_float16", 23, "int8", {"x": [3, -2], "x_scale": 0.5, "x_zero_point": None},
          types={"T2": "float", "T3": "float16"}),
    _case("Slice", "finding_step_beyond_32_bits", 13, "float",
          {"data": [0, 1, 2, 3, 4, 5], "starts": [0], "ends": [6], "axes": [0], "steps": [4294967297]}, types={"Tind": "int64"}),
    _case("Slice", "finding_step_2_pow_32", 13, "float",
          {"data": [0, 1, 2, 3, 4, 5], "starts": [0], "ends": [6], "axes": [0], "steps": [4294967296]}, types={"Tind": "int64"}),
    _case("Slice", "finding_start_below_minus_dim", 13, "float", {"data": [0, 1, 2, 3, 4], "starts": [-100], "ends": [3], "axes": [0]},
          types={"Tind": "int64"}),
    _case("Slice", "finding_end_beyond_dim_step_minus_one", 13, "float",
          {"data": [0, 1, 2, 3, 4], "starts": [4], "ends": [100], "axes": [0], "steps": [-1]}, types={"Tind": "int64"}),
    _case("Slice", "finding_int64_max_end", 13, "float", {"data": {"shape": [4, 3], "values": "arange"}, "starts": [1],
                                                          "ends": ["INT64_MAX"], "axes": [0]}, types={"Tind": "int64"}),
    _case("Slice", "finding_end_2_pow_31", 13, "float", {"data": {"shape": [4, 3], "values": "arange"}, "starts": [1],
                                                         "ends": [2147483648], "axes": [0]}, types={"Tind": "int64"}),
    _case("Slice", "finding_int32_min_step", 13, "float",
          {"data": [0, 1, 2, 3, 4], "starts": [-1], "ends": [-6], "axes": [0], "steps": [-2147483648]}, types={"Tind": "int32"}),
    _case("Celu", "finding_outer_alpha", 12, "float", {"X": [-1.0, -2.0]}, {"alpha": 0.5}),
    _case("Celu", "finding_cancellation", 12, "float", {"X": [-0.001, -0.00167]}),
    _case("Div", "finding_not_correctly_rounded", 14, "float", {"A": [21.0], "B": [7.0]}),
    _case("Div", "finding_not_correctly_rounded_double", 14, "double", {"A": [-10.0], "B": [7.0]}),
    _case("Div", "finding_uint8_quotient", 14, "uint8", {"A": [254], "B": [255]}),
    _case("ThresholdedRelu", "finding_alpha_rounded", 22, "float16", {"X": ["inf"]}, {"alpha": 100000.0}),
    _case("ThresholdedRelu", "finding_minus_infinity", 22, "float16", {"X": ["-inf"]}, {"alpha": 0.0}),
    _case("IsNaN", "finding_double", 9, "double", {"X": ["nan", 1.0]}),
    _case("Clip", "finding_int64_max_ten", 13, "int64", {"input": [0, 2147483648], "min": None, "max": 10}),
    _case("Clip", "finding_int64_beyond_int32", 13, "int64", {"input": [-3000000000, 5000000000, 0], "min": -1, "max": 10}),
    _case("Clip", "finding_uint64_beyond_int32", 12, "uint64", {"input": [9167459409629397510]}),
    _case("Clip", "finding_nan_in_zero_two", 13, "float", {"input": ["nan", 1.0, 5.0], "min": 0.0, "max": 2.0}),
    _case("Clip", "finding_nan_input", 13, "float", {"input": ["nan", 1.5, -2.5], "min": -1.0, "max": 1.0}),
    _case("Add", "finding_int64_beyond_int32", 14, "int64", {"A": [2147483648, 9223372036854775807], "B": [0, 1]}),
    _case("Add", "finding_uint64_beyond_int32", 14, "uint64", {"A": [4294967296], "B": [0]}),
    _case("Add", "finding_double_as_float", 14, "double", {"A": [0.1], "B": [0.2]}),
    _case("Greater", "finding_uint32_beyond_int32", 13, "uint32", {"A": [4294967295], "B": [1]}),
    _case("Greater", "finding_nan", 9, "float", {"A": [0.0], "B": ["nan"]}),
    _case("Reciprocal", "finding_double_infinity", 13, "double", {"X": [0.0]}),
    _case("Neg", "finding_double_infinity", 13, "double", {"X": ["-inf"]}),
    _case("Neg", "finding_bfloat16_subnormal", 13, "bfloat16", {"X": [9.18e-41]}),
    _case("Relu", "finding_int32_through_float32", 14, "int32", {"X": [1338975614]}),
    _case("Mod", "finding_int32_through_float32", 10, "int32", {"A": [16777217], "B": [2147483647]}, {"fmod": 1}),
    _case("Mod", "finding_float_quotient_overflows", 28, "float", {"A": [-7.69e30], "B": [-1.18e-38]}, {"fmod": 1}),
    _case("Mod", "finding_float_floor_mod", 28, "float", {"A": [5.0, -5.0], "B": [3.0, 3.0]}, {"fmod": 0}),
    _case("BitShift", "finding_rank_0", 11, "uint8", {"X": 3, "Y": 1}, {"direction": "RIGHT"}),
    _case("BitShift", "finding_left_beyond_type", 11, "uint8", {"X": [255], "Y": [1]}, {"direction": "LEFT"}),
    _case("BitShift", "finding_right_rounds", 11, "uint8", {"X": [255], "Y": [7]}, {"direction": "RIGHT"}),
    _case("BitShift", "finding_signed_right", 28, "int8", {"X": [-1, 127], "Y": [3, 10]}, {"direction": "RIGHT"}),
    _case("BitShift", "finding_signed_left", 28, "int8", {"X": [1], "Y": [7]}, {"direction": "LEFT"}),
    _case("ConstantOfShape", "finding_int4_value", 21, "int4", {"input": [2, 3]}, {"value": [1]}),
    _case("ConstantOfShape", "finding_int4_value_23", 23, "int4", {"input": [2, 3]}, {"value": [1]}),
    _case("Mul", "finding_uint8_product_beyond_type", 14, "uint8", {"A": [255], "B": [255]}),
    _case("HardSigmoid", "finding_zero_beta", 22, "double", {"X": [0.0]}, {"alpha": 1.0, "beta": 0.0}),
    _case("LeakyRelu", "finding_bfloat16_truncated", 16, "bfloat16", {"X": [-6.6252e-31]}, {"alpha": 0.1}),
    _case("Exp", "finding_nan", 13, "float", {"input": ["nan"]}),
    _case("Exp", "finding_beyond_2_pow_64", 13, "float", {"input": [53.89]}),
    _case("Cast", "finding_int32_min_to_bool", 19, "int32", {"input": [-2147483648, 0]}, types={"T2": "bool"}),
    _case("Div", "finding_int64_through_float32", 13, "int64", {"A": [2147483647], "B": [5]}),
    _case("Pow", "finding_exponent_through_float32", 12, "float", {"X": [-1.0], "Y": [16777217]}, types={"T1": "uint64"}),
    _case("ThresholdedRelu", "finding_alpha_beyond_float16", 22, "float16", {"X": [1.0, -600.0]}, {"alpha": 1e30}),
    _case("Shrink", "finding_infinity", 9, "float", {"input": ["-inf", "inf"]}, {"lambd": 100.0, "bias": 3.0}),
    _case("Elu", "finding_exp_minus_one_cancels_1", 1, "float", {"X": [-2.4139249762489615e-14]}, {"alpha": -1.0}),
    _case("HardSigmoid", "finding_alpha_in_float16", 6, "float16", {"X": [-2.322265625]}),
    _case("Div", "finding_bfloat16_truncated", 14, "bfloat16",
          {"A": [3.3895313892515355e+38, 5.25363271219248e+22, -9.865364031216172e+34], "B": 3.03424847670629e+34}),
]

CRASH = "crash"  # a finding whose script dies of a signal (the runtime's own crash)
DIFFERS, AGREES = 1, 0  # a script's exit code: the runtime departs from the text, or keeps to it


@dataclass(frozen=True)
class Finding:
    """A finding of docs/findings.md: its runtime, its minimal case, and what its script shows."""

    label: str
    runner: str
    case: str
    shows: tuple[str, ...]
    ends: int | str = DIFFERS  # the exit code, or CRASH with the signal in `signal`
    signal: int | None = None
    options: tuple[str, ...] = field(default=())
    # A CPU feature (a /proc/cpuinfo flag) the runtime's deviating kernel needs: OpenVINO picks its
    # kernels by instruction set, and on a CPU without AVX-512 takes paths that answer otherwise.
    cpu_flag: str | None = None


def finding(label: str, runner: str, case: str, *shows: str, ends: int | str = DIFFERS, killed_by: int | None = None,
            options: tuple[str, ...] = (), cpu_flag: str | None = None) -> Finding:
    return Finding(label, runner, case, shows, ends, killed_by, options, cpu_flag)


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split(":", 1)[1].split()}


ORT, REF, OV, TRACT = "onnxruntime", "reference", "openvino", "tract"
INPUT_MODE = ("--mode", "input", "--shapes", "symbolic")  # for tract, whose runs default to static initializers
INITIALIZER_SYMBOLIC = ("--mode", "initializer", "--shapes", "symbolic")

FINDINGS = [
    # onnxruntime, CPU provider
    finding("ort: Slice INT_MAX end with a negative step", ORT, "Slice-13/negative_step_int_max_end/uint8/int32",
            "expected uint8[4, 0], got uint8[4, 5]"),
    finding("ort: Clip int64 beyond int32", ORT, "Clip-13/int64_below_int32_min/int64", "at [0]: expected -1, got -2147483649"),
    finding("ort: Clip int64 beyond int32, the text's example", ORT, "Clip-13/finding_int64_max_ten/int64", "at [1]: expected 10, got 2147483648"),
    finding("ort: Clip [1]-shaped bound accepted", ORT, "Clip-11/max_not_scalar/float", "accepted an input the text forbids (bound-not-scalar)"),
    finding("ort: Slice-10 negative axis accepted", ORT, "Slice-10/negative_axis_before_11/float/int32",
            "accepted an input the text forbids (negative-axis)"),
    finding("ort: ConstantOfShape-9 bfloat16 accepted", ORT, "ConstantOfShape-9/bfloat16_in_version_9/bfloat16",
            "accepted an input the text forbids (dtype-not-allowed)"),
    finding("ort: Div lowest / -1", ORT, "Div-7/int_lowest_by_minus_one/int32", ends=CRASH, killed_by=signal.SIGFPE),
    finding("ort: Mod lowest % -1", ORT, "Mod-10/int_lowest_mod_minus_one/int32", ends=CRASH, killed_by=signal.SIGFPE),
    finding("ort: Div zero divisor that divides nothing", ORT, "Div-7/integer_zero_divisor_in_an_empty_broadcast/int32",
            "rejected an input the text allows", "Integer division by zero"),
    finding("ort: Mod zero divisor that divides nothing", ORT, "Mod-10/integer_zero_divisor_in_an_empty_broadcast/int32",
            "rejected an input the text allows"),
    finding("ort: Split-18 num_outputs with a last part of 0", ORT, "Split-18/num_outputs_last_empty/float",
            "rejected an input the text allows", "Split size 2 exceeds the remaining size"),
    finding("ort: Concat empty input of other dims accepted", ORT, "Concat-13/empty_input_other_dims/float",
            "accepted an input the text forbids (shape-mismatch)", "float32[3, 6]"),
    finding("ort: Sign int64 in [2**31, 2**32)", ORT, "Sign-9/int64_2_pow_31_pair/int64", "at [1]: expected 1, got -1"),
    finding("ort: Max int64 beyond int32", ORT, "Max-13/finding_int64_beyond_int32/int64", "at [2]: expected 2147483648, got 0"),
    finding("ort: Pow int64 beyond 2**53", ORT, "Pow-12/int64_power_beyond_float64/int64/int64",
            "expected 9007199254740993, got 9007199254740992"),
    finding("ort: Mod fmod=1 int64 in double", ORT, "Mod-10/int64_fmod_beyond_float64/int64", "at [0]: expected 3, got 2"),
    finding("ort: Shrink in float32", ORT, "Shrink-9/finding_int32_beyond_float32/int32", "expected 16777217, got 16777216"),
    finding("ort: Sin double", ORT, "Sin-7/finding_sin_pi/double", "expected 1.2246467991473532e-16, got -0.0",
            "(4 ULP from -0.1411200080598672)"),
    finding("ort: Cos double", ORT, "Cos-7/near_multiples_of_half_pi/double", "beyond the wrong-answer line"),
    finding("ort: Asin float32 near 0.5", ORT, "Asin-7/float32_near_half/float", "IMPRECISE", "(4.46 ULP from 0.5241067135768347)"),
    finding("ort: Acos float32 near 0.57", ORT, "Acos-7/float32_near_half/float", "IMPRECISE", "(4.34 ULP from 0.9630060400826457)"),
    finding("ort: Tanh near the smallest normal", ORT, "Tanh-13/tiny_inputs/float", "(28 ULP from 1.1754943508222875e-38)"),
    finding("ort: Sigmoid tails", ORT, "Sigmoid-13/finding_minus_four/float", "(15.1 ULP from 0.017986209962091555)",
            "expected 1.5229979055675358e-08, got 0.0"),
    finding("ort: Softplus on (-4, -0.1)", ORT, "Softplus-22/finding_negative_input/float", "IMPRECISE", "beyond 2 ULP (worst 3.3 ULP)"),
    finding("ort: Mean multiplies by 1/N", ORT, "Mean-13/mean_of_three_not_a_product/float",
            "at [0]: expected 2.3333332538604736, got 2.3333334922790527"),
    finding("ort: PRelu slope that does not broadcast accepted", ORT, "PRelu-16/slope_bigger_than_x/float",
            "accepted an input the text forbids (shapes-not-broadcastable)"),
    finding("ort: Gelu approximate='' accepted", ORT, "Gelu-20/finding_approximate_empty/float16",
            "accepted an input the text forbids (attribute-out-of-range)"),
    finding("ort: Mod-13 fmod=1 on integers accepted", ORT, "Mod-13/integer_with_fmod_in_version_13/int32",
            "accepted an input the text forbids (mod-integer-without-fmod)"),
    finding("ort: Gather on strings copies one string of each slice", ORT, "Gather-13/every_dtype_axis_0/string/int64",
            "at [0, 0, 1]: expected 's5', got ''"),
    finding("ort: Unique NaN swallows its neighbours", ORT, "Unique-11/nan_sorted/float",
            "actual: float32[1] [nan]; int64[1] [0]; int64[3] [0, 0, 0]; int64[1] [3]"),
    finding("ort: Unique along an axis of empty subtensors", ORT, "Unique-11/empty_subtensors_are_one/float",
            ends=CRASH, killed_by=signal.SIGABRT),
    finding("ort: TopK NaN ranked where comparisons leave it", ORT, "TopK-11/nan_largest/float",
            "actual: float32[2] [1.0, nan]; int64[2] [0, 1]"),
    finding("ort: NonZero of a scalar as numpy's (1, N)", ORT, "NonZero-13/scalar_non_zero/float",
            "expected int64[0, 1], got int64[1, 1]"),
    finding("ort: ArgMax of a size-0 dim along a negative axis", ORT, "ArgMax-13/finding_empty_negative_axis/float",
            "expected int64[0, 1], got int64[0, 3]"),
    finding("ort: Hardmax row with NaN gets no 1", ORT, "Hardmax-13/nan_first/float", "actual: float32[1, 3] [0.0, 0.0, 0.0]"),
    finding("ort: Pad reflect past the mirror, the text's Example 2", ORT, "Pad-13/example_reflect/float",
            "rejected an input the text allows", "pre-pad (2) exceeds maximum allowed (1)"),
    finding("ort: Range int64 count through double", ORT, "Range-11/int64_span_beyond_type/int64",
            "actual: int64[2] [-9223372036854775808, -1]"),
    finding("ort: OneHot-9 negative indices counted from the back", ORT,
            "OneHot-9/negative_indices_all_off_before_11/float/int64/int64", "at [0, 2]: expected 0.0, got 1.0"),
    finding("ort: Constant sparse_value as a SparseTensor", ORT, "Constant-13/linearized_indices/float",
            "returned SparseTensor where the text gives a dense tensor"),
    finding("ort: ScatterElements add refuses float16", ORT, "ScatterElements-18/add_duplicates/float16/int64",
            "rejected an input the text allows", "MLFloat16 data type is not supported"),
    finding("ort: CenterCropPad int32 shape through its ill-typed body", ORT, "CenterCropPad-18/axes_subset/float/int32",
            "rejected an input the text allows", "bound to different types"),
    finding("ort: Cast saturate refused beyond float8", ORT, "Cast-19/finding_saturate_not_float8/float16/float16",
            "Attribute saturate is only used for cast to float 8 types"),
    finding("ort: Cast round_mode refused beyond e8m0", ORT, "Cast-24/finding_round_mode_not_e8m0/uint8/uint8",
            "Attribute round_mode is only used for cast to float8e8m0"),
    finding("ort: CastLike unknown round_mode accepted", ORT, "CastLike-24/round_mode_unknown/float/float8e8m0",
            "accepted an input the text forbids (round-mode-unknown)"),
    finding("ort: e4m3fn saturate=0", ORT, "Cast-19/finding_e4m3fn_saturate_0/int64/float8e4m3fn", "at [0]: expected nan, got -448.0"),
    finding("ort: e5m2 saturate=0", ORT, "Cast-19/finding_e5m2_saturate_0/uint16/float8e5m2", "at [0]: expected inf, got nan"),
    finding("ort: e5m2 to e5m2 saturate=1 keeps -inf", ORT, "Cast-19/finding_e5m2_inf_saturate_1/float8e5m2/float8e5m2",
            "at [0]: expected -57344.0, got -inf"),
    finding("ort: e4m3fn -0.0 to bool", ORT, "Cast-19/finding_e4m3fn_minus_zero_to_bool/float8e4m3fn/bool", "expected false, got true"),
    finding("ort: e8m0 2^-127 to bool", ORT, "Cast-24/finding_e8m0_smallest_to_bool/float8e8m0/bool", "expected true, got false"),
    finding("ort: floats to string with %.8g", ORT, "Cast-13/finding_double_to_string/double/string",
            "expected '2.2250738585072014e-308', got '2.2250739e-308'"),
    finding("ort: a string naming a subnormal", ORT, "Cast-13/finding_string_subnormal/string/double", "stod"),
    finding("ort: e8m0 through float32 (down)", ORT, "Cast-24/finding_e8m0_through_float32_down/uint32/float8e8m0",
            "expected 1073741824.0, got 2147483648.0"),
    finding("ort: e8m0 through float32 (up)", ORT, "Cast-24/finding_e8m0_through_float32_up/double/float8e8m0",
            "expected 33554432.0, got 16777216.0"),
    finding("ort: x and y_scale of different types", ORT, "QuantizeLinear-23/scale_float16_precision/float/float16/int16",
            "rejected an input the text allows", "Tensor type mismatch"),
    finding("ort: float8 zero point ignored by QuantizeLinear", ORT, "QuantizeLinear-19/float8_zero_point_nonzero/float/float8e4m3fn",
            "at [0]: expected 2.0, got 1.0"),
    finding("ort: float8 zero point refused by DequantizeLinear", ORT, "DequantizeLinear-19/float8_zero_point_nonzero/float8e4m3fn/float",
            "rejected an input the text allows", "should have no zero point or all zero points should be 0"),
    finding("ort: quotient beyond int32 to the wrong end", ORT, "QuantizeLinear-19/finding_quotient_beyond_int32/float16/uint8",
            "at [0]: expected 255, got 0"),
    finding("ort: blocked quantization of an empty input", ORT, "QuantizeLinear-21/finding_blocked_empty/float/uint8",
            ends=CRASH, killed_by=signal.SIGSEGV),
    finding("ort: QuantizeLinear e5m2 saturate=0", ORT, "QuantizeLinear-19/finding_e5m2_saturate_0/float16/float8e5m2",
            "at [0]: expected -inf, got nan"),
    finding("ort: float4e2m1 dequantized to float16 with output_dtype", ORT,
            "DequantizeLinear-23/finding_float4_to_float16/float4e2m1/float16/float16", "InsertedPrecisionFreeCast_y"),
    finding("ort: DequantizeLinear int32 with a zero point accepted", ORT, "DequantizeLinear-10/int32_zero_point_nonzero/int32",
            "accepted an input the text forbids (int32-zero-point)"),
    # onnx.reference
    finding("reference: Slice-13 start below -dims, negative step", REF, "Slice-13/negative_step_start_below_minus_dim/uint8/int32",
            "expected uint8[4, 1], got uint8[4, 0]"),
    finding("reference: repeated axes accepted", REF, "Slice-13/repeated_axes/float/int32", "accepted an input the text forbids (repeated-axes)"),
    finding("reference: starts/ends lengths accepted", REF, "Slice-13/starts_ends_length_mismatch/float/int32",
            "accepted an input the text forbids (length-mismatch)"),
    finding("reference: [1]-shaped Clip bound accepted", REF, "Clip-13/max_not_scalar/float", "accepted an input the text forbids"),
    finding("reference: Erf double through float32", REF, "Erf-13/ordinary_values/double",
            "expected 0.5204998778130465, got 0.5204998850822449 (6.55e+07 ULP"),
    finding("reference: Selu-1 with Selu-6's defaults", REF, "Selu-1/defaults/float", "(362 ULP from -1.1112876436799033)"),
    finding("reference: legacy broadcast axis", REF, "Add-6/legacy_axis_1/uint32", "rejected an input the text allows", "Issues with types"),
    finding("reference: Mean of a smaller first input", REF, "Mean-13/broadcast_three_ranks/float16",
            "non-broadcastable output operand with shape ()"),
    finding("reference: Gelu double in float32", REF, "Gelu-20/erf_values/double", "(7.38e+07 ULP from -0.15426876936299344)"),
    finding("reference: PRelu NaN slope at 0", REF, "PRelu-16/finding_zero_with_nan_slope/float", "at [0]: expected 0.0, got nan"),
    finding("reference: Shrink in float64", REF, "Shrink-9/unsigned_bias/uint64", "at [4]: expected 18446744073709551613, got 0"),
    finding("reference: Softsign rank 0", REF, "Softsign-22/rank0/float", "rejected an input the text allows"),
    finding("reference: a forbidden dtype accepted", REF, "Add-14/bool_never/bool", "accepted an input the text forbids (dtype-not-allowed)"),
    finding("reference: string to bfloat16 refused", REF, "Cast-19/finding_string_to_bfloat16/string/bfloat16", "Issues with types"),
    finding("reference: e8m0 saturate turns inf into NaN", REF, "Cast-24/finding_e8m0_inf_saturate/float/float8e8m0",
            "at [0]: expected 1.7014118346046923e+38, got nan"),
    finding("reference: e8m0 0 with saturate=0", REF, "Cast-24/finding_e8m0_zero_saturate_0/float/float8e8m0",
            "at [0]: expected nan, got 5.877471754111438e-39"),
    finding("reference: double to e8m0 through float32", REF, "Cast-24/finding_e8m0_through_float32_up/double/float8e8m0",
            "expected 33554432.0, got 16777216.0"),
    finding("reference: string to string drops a trailing NUL", REF, "Cast-19/finding_string_trailing_nul/string/string",
            "expected 'a\\x00', got 'a'"),
    finding("reference: float8 zero point ignored", REF, "QuantizeLinear-19/float8_zero_point_nonzero/float/float8e4m3fn",
            "at [0]: expected 2.0, got 1.0"),
    finding("reference: e4m3fnuz zero point ignored", REF, "DequantizeLinear-19/finding_e4m3fnuz_zero_point/float8e4m3fnuz/bfloat16",
            "at [0]: expected -0.125, got -0.1875"),
    finding("reference: quotient beyond int32 wraps", REF, "QuantizeLinear-10/finding_quotient_wraps/float/int8",
            "at [0]: expected 127, got -128"),
    finding("reference: empty input with a per-axis scale", REF, "DequantizeLinear-19/finding_empty_per_axis/float8e4m3fn/float",
            "zero-size array to reduction operation minimum"),
    # OpenVINO, CPU device
    finding("openvino: int64 Clip in 32 bits", OV, "Clip-13/finding_int64_beyond_int32/int64", "at [0]: expected -1, got 10"),
    finding("openvino: int64 Add in 32 bits", OV, "Add-14/finding_int64_beyond_int32/int64", "at [0]: expected 2147483648, got -2147483648",
            "at [1]: expected -9223372036854775808, got 0"),
    finding("openvino: Slice INT64_MAX end", OV, "Slice-13/finding_int64_max_end/float/int64", "expected float32[3, 3], got float32[2, 3]"),
    finding("openvino: Slice 2**31 end", OV, "Slice-13/finding_end_2_pow_31/float/int64", "expected float32[3, 3], got float32[0, 3]"),
    finding("openvino: uint32 Greater as int32", OV, "Greater-13/finding_uint32_beyond_int32/uint32", "at [0]: expected true, got false"),
    finding("openvino: uint64 Add as int32", OV, "Add-14/finding_uint64_beyond_int32/uint64", "at [0]: expected 4294967296, got 0"),
    finding("openvino: uint64 Clip as int32", OV, "Clip-12/finding_uint64_beyond_int32/uint64", "expected 9167459409629397510, got 63291910"),
    finding("openvino: double as float32", OV, "Add-14/finding_double_as_float/double", "expected 0.30000000000000004, got 0.30000001192092896"),
    finding("openvino: double inf as FLT_MAX (Reciprocal)", OV, "Reciprocal-13/finding_double_infinity/double",
            "expected inf, got 3.4028234663852886e+38"),
    finding("openvino: double inf as FLT_MAX (Neg)", OV, "Neg-13/finding_double_infinity/double", "expected inf, got 3.4028234663852886e+38"),
    finding("openvino: int32 Relu through float32", OV, "Relu-14/finding_int32_through_float32/int32", "expected 1338975614, got 1338975616"),
    finding("openvino: int32 Mod through float32", OV, "Mod-10/finding_int32_through_float32/int32", "expected 16777217, got 16777216"),
    finding("openvino: bfloat16 subnormal flushed", OV, "Neg-13/finding_bfloat16_subnormal/bfloat16", "expected -9.183549615799121e-41, got -0.0",
            cpu_flag="avx512f"),
    finding("openvino: Clip NaN input on symbolic dims", OV, "Clip-13/finding_nan_input/float", "at [0]: expected nan, got 1.0"),
    finding("openvino: Greater with NaN", OV, "Greater-9/finding_nan/float", "at [0]: expected false, got true", cpu_flag="avx512f"),
    finding("openvino: Cast-1 refused", OV, "Cast-1/finding_cast_1/float/int32", "Conversion is failed for: Cast-1"),
    finding("openvino: Clip-13 NaN bound as an initializer", OV, "Clip-13/nan_min/float", "ClampFusion",
            options=("--mode", "initializer")),
    finding("openvino: float8 saturation not applied", OV, "Cast-19/finding_e4m3fn_saturate_1/float/float8e4m3fn", "expected 448.0, got nan"),
    finding("openvino: BitShift rank 0", OV, "BitShift-11/finding_rank_0/uint8", "expected uint8[], got uint8[1]"),
    finding("openvino: QuantizeLinear over FakeQuantize's range", OV, "QuantizeLinear-19/quotient_not_reciprocal_product/float/uint8",
            "at [0]: expected 78, got 77"),
    finding("openvino: Slice double -inf as -FLT_MAX", OV, "Slice-13/infinities_kept/double/int64",
            "at [0]: expected -inf, got -3.4028234663852886e+38"),
    finding("openvino: Slice step INT32_MIN", OV, "Slice-13/finding_int32_min_step/float/int32", ends=CRASH, killed_by=signal.SIGFPE),
    finding("openvino: ConstantOfShape-21 int4 fills bytes", OV, "ConstantOfShape-21/finding_int4_value/int4",
            "at [0, 1]: expected 1, got 0", options=("--mode", "initializer")),
    finding("openvino: ConstantOfShape-23 int4 fills bytes", OV, "ConstantOfShape-23/finding_int4_value_23/int4",
            "at [0, 1]: expected 1, got 0", options=("--mode", "initializer")),
    finding("openvino: BitShift left beyond the type", OV, "BitShift-11/finding_left_beyond_type/uint8", "expected 254, got 255"),
    finding("openvino: BitShift right rounds", OV, "BitShift-11/finding_right_rounds/uint8", "expected 1, got 2"),
    finding("openvino: BitShift signed right", OV, "BitShift-28/finding_signed_right/int8", "at [0]: expected -1, got 0",
            "at [1]: expected 0, got 1"),
    finding("openvino: BitShift signed left", OV, "BitShift-28/finding_signed_left/int8", "expected -128, got 127"),
    finding("openvino: uint8 Mul on symbolic dims", OV, "Mul-14/finding_uint8_product_beyond_type/uint8", "expected 1, got 0"),
    finding("openvino: uint8 Div rounds", OV, "Div-14/finding_uint8_quotient/uint8", "expected 0, got 1"),
    finding("openvino: e8m0 round_mode up", OV, "Cast-24/finding_e8m0_round_up/float16/float8e8m0", "expected 4.0, got 2.0"),
    finding("openvino: e8m0 saturate=0", OV, "Cast-24/finding_e8m0_saturate_0/bfloat16/float8e8m0", "expected nan, got 5.877471754111438e-39"),
    finding("openvino: HardSigmoid beta=0", OV, "HardSigmoid-22/finding_zero_beta/double", "expected 0.0, got 0.5"),
    finding("openvino: ThresholdedRelu of -inf", OV, "ThresholdedRelu-22/finding_minus_infinity/float16", "expected 0.0, got nan"),
    finding("openvino: Mod-28 float floor not converted", OV, "Mod-28/finding_float_floor_mod/float", "Conversion is failed for: Mod-28"),
    finding("openvino: Mod-28 fmod quotient overflows", OV, "Mod-28/finding_float_quotient_overflows/float",
            "expected -1.0654024580113797e-38, got inf"),
    finding("openvino: legacy broadcast axis", OV, "Pow-1/legacy_axis_0/float16", "Eltwise shape infer input shapes dim index: 0 mismatch"),
    finding("openvino: PRelu-7 unidirectional slope", OV, "PRelu-7/trailing_slope_unidirectional/float",
            "Eltwise shape infer input shapes dim index: 1 mismatch"),
    finding("openvino: Selu-1 with Selu-6's defaults", OV, "Selu-1/defaults/float", "(362 ULP from -1.1112876436799033)"),
    finding("openvino: Exp(NaN)", OV, "Exp-13/finding_nan/float", "expected nan, got inf"),
    finding("openvino: Exp beyond 2**64", OV, "Exp-13/finding_beyond_2_pow_64/float", "IMPRECISE", "(3.41 ULP from 2.5358838898957096e+23)"),
    finding("openvino: y_zero_point with a float8 output", OV, "QuantizeLinear-19/float8_zero_point_nonzero/float/float8e4m3fn",
            "Port for tensor name y_zero_point was not found"),
    finding("openvino: QuantizeLinear to float4e2m1", OV, "QuantizeLinear-23/finding_to_float4/float/float/float4e2m1",
            "Conversion is failed for: QuantizeLinear-23"),
    finding("openvino: blocked DequantizeLinear", OV, "DequantizeLinear-21/finding_blocked/int8/float",
            "Conversion is failed for: DequantizeLinear-21"),
    finding("openvino: ties rounded after the zero point (int4)", OV, "QuantizeLinear-21/finding_tie_with_zero_point/float/int4",
            "at [0]: expected -7, got -8"),
    finding("openvino: ties rounded after the zero point", OV, "QuantizeLinear-19/finding_ties_with_zero_point/float/uint8",
            "at [0]: expected 3, got 4", "at [1]: expected 5, got 4", "at [2]: expected 1, got 2"),
    finding("openvino: a negative scale", OV, "QuantizeLinear-10/finding_negative_scale/float/uint8", "at [2]: expected 255, got 0"),
    finding("openvino: a scale whose span overflows", OV, "QuantizeLinear-19/finding_scale_span_overflows/float/uint8",
            "at [0]: expected 254, got 0"),
    finding("openvino: saturate=0 to float8", OV, "QuantizeLinear-23/finding_float8_saturate_0_without_zero_point/float/float/float8e4m3fn",
            "at [0]: expected nan, got 448.0"),
    finding("openvino: bfloat16 DequantizeLinear output truncated", OV, "DequantizeLinear-23/finding_bfloat16_output/uint16/bfloat16/bfloat16",
            "at [0]: expected 6752.0, got 6720.0", cpu_flag="avx512f"),
    finding("openvino: int32 lowest to bool", OV, "Cast-19/finding_int32_min_to_bool/int32/bool", "at [0]: expected true, got false"),
    finding("openvino: int64 Div through float32", OV, "Div-13/finding_int64_through_float32/int64", "expected 429496729, got 429496736"),
    finding("openvino: a uint64 exponent through float32", OV, "Pow-12/finding_exponent_through_float32/float/uint64",
            "expected -1.0, got 1.0"),
    finding("openvino: ThresholdedRelu alpha beyond float16 refused", OV,
            "ThresholdedRelu-22/finding_alpha_beyond_float16/float16", "rejected an input the text allows"),
    finding("openvino: Shrink of an infinity", OV, "Shrink-9/finding_infinity/float", "at [0]: expected -inf, got nan"),
    finding("openvino: Elu-1 exp(x) - 1 cancels", OV, "Elu-1/finding_exp_minus_one_cancels_1/float",
            "expected 2.4139249762489615e-14, got -0.0"),
    finding("openvino: HardSigmoid alpha in float16, rounded once", OV, "HardSigmoid-6/finding_alpha_in_float16/float16",
            "got 0.035675048828125"),
    finding("openvino: bfloat16 quotient truncated", OV, "Div-14/finding_bfloat16_truncated/bfloat16", "expected 11200.0, got 11136.0"),
    # tract (its runs default to static dims and initializers)
    finding("tract: Clip replaces NaN by a bound", TRACT, "Clip-13/finding_nan_in_zero_two/float", "at [0]: expected nan, got 0.0"),
    finding("tract: ConstantOfShape without value", TRACT, "ConstantOfShape-9/no_value_is_float_zero/float",
            "expected float32[2, 3], got float64[2, 3]"),
    finding("tract: Slice step 2**32 + 1", TRACT, "Slice-13/finding_step_beyond_32_bits/float/int64", "expected float32[1], got float32[6]"),
    finding("tract: Slice step 2**32", TRACT, "Slice-13/finding_step_2_pow_32/float/int64", "attempt to divide by zero",
            ends=CRASH, killed_by=signal.SIGABRT),
    finding("tract: Slice start below -dims on symbolic dims", TRACT, "Slice-13/finding_start_below_minus_dim/float/int64",
            "Invalid range 18446744073709551521..3", options=INITIALIZER_SYMBOLIC),
    finding("tract: Slice end beyond the dim with step -1 on symbolic dims", TRACT,
            "Slice-13/finding_end_beyond_dim_step_minus_one/float/int64", "fact.rs:21", ends=CRASH, killed_by=signal.SIGABRT,
            options=INITIALIZER_SYMBOLIC),
    finding("tract: Celu drops the outer alpha", TRACT, "Celu-12/finding_outer_alpha/float",
            "expected -0.4323323667049408, got -0.8646647334098816"),
    finding("tract: BitShift-11 'Right' shifts left", TRACT, "BitShift-11/example_spelling_right/uint8", "at [0]: expected 0, got 2",
            "at [1]: expected 2, got 8"),
    finding("tract: BitShift-28 shift modulo the width", TRACT, "BitShift-28/shift_by_8_left/uint8", "at [0]: expected 0, got 1"),
    finding("tract: Div not correctly rounded", TRACT, "Div-14/finding_not_correctly_rounded/float", "expected 3.0, got 3.000000238418579",
            options=INPUT_MODE),
    finding("tract: Div double not correctly rounded", TRACT, "Div-14/finding_not_correctly_rounded_double/double",
            "expected -1.4285714285714286, got -1.4285714285714284", options=INPUT_MODE),
    # The number NaN becomes depends on the CPU's kernels (4.47e-07 with AVX-512, 4.77e-07 with AVX2).
    finding("tract: Sigmoid of NaN", TRACT, "Sigmoid-13/nan_input/float", "at [0]: expected nan, got 4."),
    finding("tract: Tanh of NaN", TRACT, "Tanh-13/nan_input/float", "at [0]: expected nan, got -0.99999"),
    finding("tract: Celu of NaN", TRACT, "Celu-12/nan_input/float", "expected nan, got 0.0"),
    finding("tract: integer Pow with a negative exponent", TRACT, "Pow-12/integer_base_negative_exponent/int32/int32",
            "expected 0, got 954437177"),
    finding("tract: QuantizeLinear int32 x", TRACT, "QuantizeLinear-19/int32_input/int32/int8", "Impossible to unify I32 with F32"),
    finding("tract: DequantizeLinear float16 scale", TRACT, "DequantizeLinear-19/scale_float16/int8/float16", "Impossible to unify F16 with F32"),
    finding("tract: QuantizeLinear-21 output_dtype ignored", TRACT, "QuantizeLinear-21/output_dtype_int8/float/int8",
            "expected int8[3], got uint8[3]"),
    finding("tract: DequantizeLinear-23 float16 output_dtype", TRACT, "DequantizeLinear-23/finding_output_dtype_float16/int8/float/float16",
            "expected float16[2], got float32[2]"),
    finding("tract: Pow int64 exponent cut to 32 bits", TRACT, "Pow-15/finding_int64_exponent_32_bits/int64/int64",
            "expected 330020949617843309, got -1479732583625876371"),
    finding("tract: Mean multiplies by 1/count", TRACT, "Mean-13/mean_of_three_not_a_product/float",
            "expected 2.3333332538604736, got 2.3333334922790527", options=INPUT_MODE),
    finding("tract: Pow of integer types that differ", TRACT, "Pow-15/finding_mixed_integer_types/int32/uint16", "pow.rs:58",
            ends=CRASH, killed_by=signal.SIGABRT),
    finding("tract: Pow float16 ** float", TRACT, "Pow-15/finding_float16_float/float16/float", "expected ..,F16 got", "F32",
            options=INPUT_MODE),
    finding("tract: legacy broadcast axis", TRACT, "Add-6/legacy_axis_1/uint32", "Can not broadcast 5 against 4"),
    finding("tract: IsNaN on double", TRACT, "IsNaN-9/finding_double/double", "Element wise eval in-place not defined"),
    finding("tract: Cast to int64 as TDim", TRACT, "Cast-6/bool_to_int/bool/int64", "TDim"),
    finding("tract: ConstantOfShape shape [-1]", TRACT, "ConstantOfShape-9/negative_dim/float", ends=CRASH, killed_by=signal.SIGABRT),
    finding("tract: Slice-1 axis out of range", TRACT, "Slice-1/axis_above_range/float", "slice.rs", ends=CRASH, killed_by=signal.SIGABRT),
    finding("tract: integer Div by zero", TRACT, "Div-7/integer_division_by_zero/int32", "attempt to divide by zero",
            ends=CRASH, killed_by=signal.SIGABRT),
    finding("tract: Erf beyond its budget", TRACT, "Erf-13/ordinary_values/float", "(4.77 ULP from 0.8427007929497149)",
            "(42.7 ULP from 0.11246291768297051)"),
    finding("tract: Selu default constants", TRACT, "Selu-6/defaults/float", "(41.2 ULP from -1.6705687339891528)"),
    finding("tract: Atanh near -1", TRACT, "Atanh-22/just_inside_ends_float/float", "(3.63e+05 ULP from -8.664339742098155)"),
    finding("ort: AveragePool counts a window the text's floor does not", ORT,
            "AveragePool-22/empty_output_kernel_past_input/float", "expected float32[1, 1, 0], got float32[1, 1, 1]"),
    finding("ort: MaxPool counts a window the text's floor does not", ORT, "MaxPool-12/kernel_past_input_strided/float",
            "expected float32[1, 1, 0], got float32[1, 1, 1]"),
    finding("ov: Resize cubic of an outer axis", OV, "Resize-13/cubic_outer_axes_int32/int32", ends=CRASH,
            killed_by=signal.SIGSEGV),
    finding("ov: Resize keep_aspect_ratio_policy ignored", OV, "Resize-18/keep_aspect_not_larger/float",
            "expected float32[1, 1, 2, 4], got float32[1, 1, 4, 4]"),
]

# Findings whose scripts show the text allows what the runtime does: docs/findings.md says so now.
ALLOWED = [
    finding("ort: Clip-6 NaN bound rejected", ORT, "Clip-6/nan_min/float", "rejected, which the text allows", ends=AGREES),
    finding("ort: int32 Pow beyond the type gives the lowest", ORT, "Pow-13/finding_int32_power_beyond_type/int32/int32",
            "matches the reading 'x86 integer indefinite", ends=AGREES),
    finding("ort: Gelu-20 double tanh as its function body", ORT, "Gelu-20/finding_tanh_double/double",
            "matches the reading 'function body'", ends=AGREES),
    finding("ort: Gelu float below -1 as its function body", ORT, "Gelu-20/finding_below_minus_one/float",
            "matches the reading 'function body'", ends=AGREES),
    finding("ort: Elu float near 0 as its function body", ORT, "Elu-22/finding_exp_minus_one_cancels/float",
            "matches the reading 'function body'", ends=AGREES),
    finding("ort: Selu float near 0 as its function body", ORT, "Selu-22/finding_cancellation/float",
            "matches the reading 'function body'", ends=AGREES),
    finding("ort: Celu float near 0 as its function body", ORT, "Celu-12/finding_cancellation/float",
            "matches the reading 'function body'", ends=AGREES),
    finding("ort: Mish float below -20 within its budget", ORT, "Mish-22/finding_below_minus_20/float", "AGREES", ends=AGREES),
    finding("ort: a one-element blocked scale refused", ORT, "QuantizeLinear-21/finding_one_element_scale_blocked/float/uint8",
            "rejected, which the text allows", ends=AGREES),
    finding("ort: CastLike round_mode as its function body", ORT, "CastLike-24/finding_round_mode_down/float/float8e8m0",
            "matches the reading 'function body' (ambiguous", ends=AGREES),
    finding("reference: Mish double", REF, "Mish-22/finding_double/double", "matches the reading 'spec'", ends=AGREES),
    finding("reference: integer to a negative power refused", REF, "Pow-12/integer_base_negative_exponent/int32/int32",
            "rejected, which the text allows", ends=AGREES),
    finding("openvino: Clip-6 NaN bound refused", OV, "Clip-6/nan_min/float", "rejected, which the text allows", ends=AGREES),
    finding("openvino: float16 to bfloat16 toward zero", OV, "Cast-13/finding_into_bfloat16/float16/bfloat16",
            "matches the reading 'rounds toward zero'", ends=AGREES),
    finding("openvino: canonical float4e2m1 keeps its sign", OV, "Cast-23/finding_float4_sign/float4e2m1/bfloat16",
            "matches the reading 'spec'", ends=AGREES),
    finding("openvino: canonical float4e2m1 x keeps its sign", OV, "DequantizeLinear-23/finding_float4_sign/float4e2m1/float/float",
            "AGREES", ends=AGREES),
    finding("openvino: uint8 Mul on static dims saturates", OV, "Mul-14/finding_uint8_product_beyond_type/uint8",
            "matches the reading 'integer overflow saturates'", ends=AGREES, options=("--shapes", "static"), cpu_flag="avx512f"),
    finding("openvino: bfloat16 LeakyRelu within its budget", OV, "LeakyRelu-16/finding_bfloat16_truncated/bfloat16",
            "matches the reading 'spec'", ends=AGREES),
    finding("openvino: Selu near 0 as its function body", OV, "Selu-22/finding_cancellation/float", "matches the reading 'function body'",
            ends=AGREES),
    finding("openvino: ties without a zero point to even", OV, "QuantizeLinear-19/finding_ties_without_zero_point/float/uint8",
            "AGREES", ends=AGREES),
    finding("tract: Softplus(100) as its function body", TRACT, "Softplus-22/finding_exp_overflows/float",
            "matches the reading 'function body' (ambiguous", ends=AGREES),
    finding("tract: ThresholdedRelu float16 alpha as its function body", TRACT, "ThresholdedRelu-22/finding_alpha_rounded/float16",
            "matches the reading 'function body' (ambiguous", ends=AGREES),
    finding("tract: Elu near 0 as its function body", TRACT, "Elu-22/finding_exp_minus_one_cancels/float",
            "matches the reading 'function body'", ends=AGREES),
]


@pytest.fixture(scope="module")
def finding_cases(tmp_path_factory) -> Path:
    """FINDING_CASES written as case files, one an op."""
    folder = tmp_path_factory.mktemp("finding_cases")
    by_op: dict[str, list] = {}
    for entry in FINDING_CASES:
        by_op.setdefault(entry["op"], []).append(entry["case"])
    for op, cases in by_op.items():
        (folder / f"{op.lower()}.yaml").write_text(yaml.safe_dump({"op": op, "cases": cases}, sort_keys=False, allow_unicode=True))
    return folder


def _installed(runner: str) -> bool:
    return runner not in (OV, TRACT) or importlib.util.find_spec(runner) is not None


def _written(args: list[str], path: Path) -> Path:
    """`conform repro ARGS --out PATH`, in this process; the script's path."""
    result = CliRunner().invoke(app, ["repro", *args, "--out", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return path


def _ran(script_path: Path) -> subprocess.CompletedProcess:
    """The script run as a runtime team runs it: its own process, conform not importable."""
    blocked = f"import sys, runpy; sys.modules['conformance'] = None; runpy.run_path({str(script_path)!r}, run_name='__main__')"
    return subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=SCRIPT_TIMEOUT)


# Scripts of one runtime run one after another in one interpreter (conform not importable), each with
# its own stdout, stderr and exit code, one JSON line each: a process per script spends most of its
# time starting Python and the runtime. A script whose process dies takes the rest of its batch
# with it: those run again, each in a process of its own (`_ran`).
BATCH = """
import contextlib, io, json, runpy, sys, traceback
sys.modules['conformance'] = None
for label, path in json.loads(sys.argv[1]):
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(path, run_name='__main__')
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
    sys.__stdout__.write(json.dumps([label, {'returncode': code, 'stdout': out.getvalue(), 'stderr': err.getvalue()}]) + chr(10))
    sys.__stdout__.flush()
"""


def _ran_together(scripts: list[tuple[str, Path]]) -> dict[str, dict]:
    """Each script's record (`_as_record`'s), by label: run in one interpreter, those its death
    left without one each in a process of its own."""
    done: dict[str, dict] = {}
    if scripts:
        try:
            ran = subprocess.run([sys.executable, "-c", BATCH, json.dumps([(label, str(path)) for label, path in scripts])],
                                 capture_output=True, text=True, timeout=SCRIPT_TIMEOUT * len(scripts))
            lines = ran.stdout.splitlines()
        except subprocess.TimeoutExpired as stopped:
            lines = (stopped.stdout or b"").decode(errors="replace").splitlines() if isinstance(stopped.stdout, bytes) \
                else (stopped.stdout or "").splitlines()
        for line in lines:
            try:
                label, record = json.loads(line)
            except ValueError:  # a runtime's own print to the process's stdout
                continue
            done[label] = record
    return done | {label: _as_record(_ran(path)) for label, path in scripts if label not in done}


@pytest.fixture(scope="module")
def reproduced(finding_cases, tmp_path_factory) -> dict[str, dict]:
    """Each finding's script (of an installed runtime), written in this process one after another,
    then run two at a time, a runtime's scripts in one interpreter (a script on its own is mostly
    its interpreter and runtime starting), a crashing one in a process of its own: by label,
    what it did (`returncode`, `stdout`, `stderr`), or why it could not be written (`error`). Made
    once for all the workers of a pytest-xdist run (`_once_per_run`): 181 scripts cost a minute."""

    def every_script() -> dict[str, dict]:
        folder = tmp_path_factory.mktemp("repro_scripts")
        written: dict[str, Path | Exception] = {}
        for number, found in enumerate(FINDINGS + ALLOWED):
            if _installed(found.runner):
                try:
                    written[found.label] = _written([found.case, "--runner", found.runner, "--cases", str(finding_cases),
                                                     *found.options], folder / f"repro_{number}.py")
                except Exception as error:  # told by the finding's own test (a failed assert too)
                    written[found.label] = error
        crashing = {found.label for found in FINDINGS + ALLOWED if found.ends == CRASH}
        alone = [(label, path) for label, path in written.items() if isinstance(path, Path) and label in crashing]
        batches: dict[str, list[tuple[str, Path]]] = {}
        for found in FINDINGS + ALLOWED:
            path = written.get(found.label)
            if isinstance(path, Path) and found.label not in crashing:
                batches.setdefault(found.runner, []).append((found.label, path))
        halves = [part for batch in batches.values() for part in (batch[::2], batch[1::2]) if part]
        with ThreadPoolExecutor(max_workers=2) as pool:
            together = [pool.submit(_ran_together, part) for part in halves]
            single = {label: pool.submit(_ran, path) for label, path in alone}
            ran = {label: record for future in together for label, record in future.result().items()}
            ran |= {label: _as_record(future.result()) for label, future in single.items()}
        return {label: ran[label] if label in ran else {"error": f"{type(why).__name__}: {why}"}
                for label, why in written.items()}

    return _once_per_run(tmp_path_factory, "repro_scripts", every_script)


def _as_record(ran: subprocess.CompletedProcess) -> dict:
    return {"returncode": ran.returncode, "stdout": ran.stdout, "stderr": ran.stderr}


WAIT_FOR_ANOTHER_WORKER = 900  # seconds; past it, a worker makes the fixture itself


def _once_per_run(tmp_path_factory, name: str, make) -> dict:
    """`make()`, made once for all the workers of one pytest-xdist run: the first worker to ask
    makes it and writes it as JSON beside the workers' temporary folders, the others wait for it
    and read it (without xdist, made here)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return make()
    folder = tmp_path_factory.getbasetemp().parent
    done, claim = folder / f"{name}-{run}.json", folder / f"{name}-{run}.claimed"
    try:
        os.close(os.open(claim, os.O_CREAT | os.O_EXCL))
    except FileExistsError:  # another worker makes it
        deadline = time.monotonic() + WAIT_FOR_ANOTHER_WORKER
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        return json.loads(done.read_text()) if done.exists() else make()
    found = make()
    partial = done.with_suffix(".partial")
    partial.write_text(json.dumps(found))
    os.replace(partial, done)
    return found


@pytest.mark.parametrize("found", FINDINGS + ALLOWED, ids=lambda f: f.label)
def test_each_finding_is_reproduced_by_its_script(found: Finding, reproduced):
    if not _installed(found.runner):
        pytest.skip(f"{found.runner} is not installed (pip install \"conform[{found.runner}]\")")
    if found.cpu_flag is not None and found.cpu_flag not in _cpu_flags():
        pytest.skip(f"seen on a CPU with {found.cpu_flag}; this one lacks it, and {found.runner} takes other kernels")
    ran = reproduced[found.label]
    if "error" in ran:
        pytest.fail(f"the script could not be written: {ran['error']}")
    said = ran["stdout"] + ran["stderr"]
    if found.ends == CRASH:
        assert ran["returncode"] == -found.signal, \
            f"expected death by {signal.Signals(found.signal).name}, got exit {ran['returncode']}:\n{said}"
    else:
        assert ran["returncode"] == found.ends, said
    for shown in found.shows:
        assert shown in said, f"{shown!r} not in the script's output:\n{said}"


# ---- the script itself ------------------------------------------------------------------------

# Cases whose models and inputs are hard to write out exactly: 8- and 16-bit floats, NaN
# payloads, -0.0, strings with a NUL, 4-bit integers, complex values, IR 3 initializers, tensor
# attributes, Constant nodes, static dims.
EXACT_CASES = [
    ("Clip-13/hypothesis-0001/bfloat16", "initializer", "symbolic"),
    ("Cast-19/hypothesis-0000/float8e4m3fn/float16", "input", "symbolic"),
    ("Cast-23/hypothesis-0002/float4e2m1/bfloat16", "input", "symbolic"),
    ("IsNaN-9/negative_nan/double", "input", "static"),
    ("Where-9/hypothesis-0001/string", "constant", "symbolic"),
    ("ConstantOfShape-21/finding_int4_value/int4", "initializer", "symbolic"),
    ("Add-1/legacy_axis_1/float16", "initializer", "symbolic"),
    ("Slice-13/negative_step_int_max_end/uint8/int32", "constant", "static"),
    ("Slice-13/hypothesis-0000/complex128/int64", "input", "symbolic"),
    ("QuantizeLinear-21/finding_tie_with_zero_point/float/int4", "constant", "symbolic"),
]


def _example(case_id: str, finding_cases: Path, mode: str = "input", shapes: str = "symbolic"):
    op_version, name = case_id.split("/")[:2]
    op, version = op_version.rsplit("-", 1)
    hypothesis = name.startswith("hypothesis-")
    options = RunOptions(op=op, opset=int(version), case_ids=(case_id,), case_roots=(casefile.BUILTIN_CASES, finding_cases),
                         dtypes=(case_id.split("/")[2],), use_yaml=not hypothesis, use_hypothesis=hypothesis, modes=(mode,),
                         shapes=shapes)
    return select_examples(options)[0], options


@pytest.mark.parametrize("case_id, mode, shapes", EXACT_CASES)
def test_the_script_builds_conforms_model_and_feeds_its_inputs_bit_for_bit(case_id, mode, shapes, finding_cases):
    example, options = _example(case_id, finding_cases, mode, shapes)
    text = script(example, ReproRequest(options, RunnerSpec(), mode))
    written = _module_of(text)
    expected = expected_for(example)
    reference = for_op(example.op)
    built = build(example, reference.output_types(example, expected), mode, reference.data_inputs, shapes)
    assert written["model"]().SerializeToString(deterministic=True) == built.data
    feeds = written["inputs"]()
    assert list(feeds) == list(built.feeds)
    for name, array in built.feeds.items():
        assert _same(feeds[name], array), name
    for reading, readings in zip(expected.readings, written.get("READINGS", ())):
        assert all(_same(a, b) for a, b in zip(reading.outputs, readings["outputs"]))


def _module_of(text: str) -> dict:
    namespace: dict = {"__name__": "repro_under_test"}
    exec(compile(text, "repro.py", "exec"), namespace)  # noqa: S102 - the script under test
    return namespace


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return a.tolist() == b.tolist() if a.dtype.kind == "O" else a.tobytes() == b.tobytes()


@pytest.mark.parametrize("array", [
    np.array([np.nan, -0.0, 1e-45, np.inf], dtype=np.float32),
    np.array([1.0, 2.0], dtype=np.float32).view(np.uint32).__add__(np.uint32(0x7F800001 - 0x3F800000)).view(np.float32),
    np.array([[0.1, -2.5]], dtype=np.float16),
    np.array(7, dtype=np.int64),
    np.array(["a\0", "中"], dtype=object),
    np.array([complex(1.5, -0.0)], dtype=np.complex64),
    np.zeros((2, 0), dtype=np.uint8),
], ids=["specials", "nan-payloads", "float16", "rank-0", "strings", "complex", "empty"])
def test_a_literal_makes_the_same_array(array):
    import ml_dtypes

    source, _ = array_source(array)
    made = eval(source, {"np": np, "ml_dtypes": ml_dtypes})  # noqa: S307 - source conform wrote
    assert _same(made, array)


def test_a_float16_input_is_written_as_its_bit_pattern_with_its_values_beside_it():
    source, comment = array_source(np.array([1.0, -0.0], dtype=np.float16))
    assert source == "np.array([0x3c00, 0x8000], dtype=np.uint16).view(np.float16)"
    assert comment == "float16 [1.0, -0.0]"


def test_the_script_imports_only_numpy_onnx_ml_dtypes_and_its_runtime(finding_cases):
    example, options = _example("Slice-13/negative_step_int_max_end/uint8/int32", finding_cases)
    for runner in ("onnxruntime", "reference", "openvino", "tract"):
        tree = ast.parse(script(example, ReproRequest(options, RunnerSpec(runner))))
        imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert imported <= {"sys", "os", "tempfile", "ctypes", "importlib", "ml_dtypes", "numpy", "onnx", "onnxruntime",
                            "openvino", "tract"}, (runner, imported)


def test_the_budget_rule_of_the_script_is_precisions_check():
    rng = np.random.default_rng(5)
    precise = np.concatenate([rng.uniform(-3, 3, 200), [0.0, np.inf, -np.inf, np.nan, 3.5e38, 1e-40]])
    with np.errstate(over="ignore"):  # 3.5e38 rounds to inf in float32, as a correctly rounded result would
        rounded = precise.astype(np.float32)
    actual = (rounded.view(np.int32) + rng.integers(-4, 5, precise.size).astype(np.int32)).view(np.float32)
    actual[-6:] = [0.0, np.inf, 3.4028235e38, 1.0, np.inf, 0.0]
    text = script(*_ordinary_erf())
    within_budget = _module_of(text)["within_budget"]
    ok, _ = within_budget(precise, rounded, actual, 2.0, "test", False)
    assert (ok == check(precise, rounded, actual, Budget(2.0, "test")).ok).all()


def _ordinary_erf():
    options = RunOptions(op="Erf", opset=13, case_ids=("Erf-13/ordinary_values/float",), use_hypothesis=False)
    return select_examples(options)[0], ReproRequest(options, RunnerSpec())


def test_the_header_names_the_case_its_text_and_the_replay_command(tmp_path):
    text = _written(["Slice-13/negative_step_int_max_end/uint8/int32"], tmp_path / "r.py").read_text()
    header = text.split('"""')[1]
    assert "case:     Slice-13/negative_step_int_max_end/uint8/int32" in header
    assert "expected: the reading 'spec'" in header
    assert "text:" in header and "INT_MAX" in header
    assert "conform run --op Slice --opset 13 --no-hypothesis --case" in " ".join(header.split())


def test_a_replay_command_becomes_a_repro_command_by_one_word(tmp_path):
    replay = ("conform run --op Slice --opset 13 --no-hypothesis --case Slice-13/negative_step_int_max_end/uint8/int32 --strict-zero "
              "--max-elements 1000 --timeout 5 --runner onnxruntime --provider cpu --optimizations on "
              "--expect expectations/onnxruntime-cpu.yaml --strict")
    words = replay.split()
    words[1] = "repro"
    path = _written(words[2:], tmp_path / "r.py")
    text = path.read_text()
    assert "STRICT_ZERO = True" in text
    assert _ran(path).returncode == DIFFERS


def test_the_script_exits_0_where_the_runtime_keeps_to_the_text(tmp_path):
    path = _written(["Slice-13/negative_step_int_max_end/uint8/int32", "--runner", "reference"], tmp_path / "r.py")
    ran = _ran(path)
    assert ran.returncode == AGREES and "AGREES" in ran.stdout


def test_a_backend_module_is_run_through_prepare_and_run(tmp_path):
    path = _written(["Slice-13/negative_step_int_max_end/uint8/int32", "--backend", "onnxruntime.backend"], tmp_path / "r.py")
    assert 'RUNTIME = \'onnxruntime.backend\'' in path.read_text()
    ran = _ran(path)
    assert ran.returncode == DIFFERS and "expected uint8[4, 0], got uint8[4, 5]" in ran.stdout


def test_optimizations_off_is_onnxruntimes_own_setting(tmp_path):
    args = ["Slice-13/negative_step_int_max_end/uint8/int32", "--optimizations", "off"]
    assert "GraphOptimizationLevel.ORT_DISABLE_ALL" in _written(args, tmp_path / "off.py").read_text()
    assert "ORT_DISABLE_ALL" not in _written(args[:1], tmp_path / "on.py").read_text()


def test_the_script_goes_to_stdout_with_out_dash():
    result = CliRunner().invoke(app, ["repro", "Slice-13/negative_start/float/int64", "--out", "-"], catch_exceptions=False)
    assert result.exit_code == 0 and result.output.startswith('"""Reproduces, without conform')


def test_the_default_place_is_under_reports_repro(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["repro", "Slice-13/negative_start/float/int64"], catch_exceptions=False)
    written = tmp_path / "reports/repro/onnxruntime-cpu/input/slice_13_negative_start_float_int64.py"
    assert result.exit_code == 0 and written.is_file() and str(written.relative_to(tmp_path)) in result.output


@pytest.mark.parametrize("args, says", [
    (["Slice-13/no_such_case/float/int64"], "no case with id Slice-13/no_such_case/float/int64"),
    (["Nope-13/a/float"], "unknown op 'Nope'"),
    (["not-an-id"], "is no case id"),
    (["--op", "Slice", "--opset", "13"], "repro writes one case"),
    (["Slice-13/negative_start/float/int64", "--mode", "all"], "--mode all"),
])
def test_bad_input_is_a_usage_error_that_says_why(args, says, tmp_path):
    result = CliRunner().invoke(app, ["repro", *args, "--out", str(tmp_path / "r.py")])
    assert isinstance(result.exception, UsageError) and says in result.exception.message
    assert not (tmp_path / "r.py").exists()


def test_bad_input_ends_the_command_with_one_line_and_exit_2(tmp_path):
    done = subprocess.run([sys.executable, "-m", "conformance", "repro", "Slice-13/no_such_case/float/int64"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == UsageError.exit_code
    assert done.stderr.strip() == "error: no case with id Slice-13/no_such_case/float/int64 (see the 'id' field of a report)"
    assert not (tmp_path / "reports").exists()
