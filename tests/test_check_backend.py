"""`conform check-backend`: the values it sends, how it tells a loss, the command's exits and reports,
and the hint a `--backend` run's summary gives when its failures look like an adapter's loss."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

from conformance.check_backend import (LOST, OK, REFUSED, SHAPE_LABELS, Probe, adapter_loss_hint, checked_dtypes, finding,
                                       loss_lines, losses, probe_values, probes, run_probes, sent_array)
from conformance.dtypes import all_names
from conformance.runners.backend import BackendRunner
from conformance.runners.base import RunOutput

from conftest import BACKENDS

sys.path.insert(0, str(BACKENDS))  # the test backends, for the in-process checks


def bits_of(values: np.ndarray) -> set[bytes]:
    return {item.tobytes() for item in values.reshape(-1)}


# --- what is sent ----------------------------------------------------------------------------------

def test_every_tensor_dtype_is_sent_in_every_shape():
    sent = probes(checked_dtypes())
    assert {p.dtype for p in sent} == set(all_names())
    for name in all_names():
        assert {p.shape_label for p in sent if p.dtype == name} == set(SHAPE_LABELS)
    shapes = {p.shape_label: p.sent.shape for p in sent if p.dtype == "float" and p.op == "Identity"}
    assert shapes["0-d"] == () and 0 in shapes["size 0"] and len(shapes["rank 4"]) == 4
    assert shapes["rank 1"][0] % 2 == 1  # an odd count of 4-bit values leaves half a byte when packed


def test_identity_and_cast_each_take_the_dtypes_their_schemas_allow():
    sent = probes(["complex64", "float6e2m3", "int4"])
    assert {p.op for p in sent if p.dtype == "complex64"} == {"Identity"}  # no Cast takes complex
    assert {(p.op, p.opset) for p in sent if p.dtype == "float6e2m3"} == {("Cast", 28)}
    assert {(p.op, p.opset) for p in sent if p.dtype == "int4"} == {("Identity", 21), ("Cast", 21)}


def test_the_values_expose_narrowing_and_sign_reading():
    int64 = set(probe_values("int64").tolist())
    assert {2 ** 31, 2 ** 53 + 1, -(2 ** 63), 2 ** 63 - 1} <= int64
    assert {2 ** 63, 2 ** 64 - 1} <= set(probe_values("uint64").tolist())
    assert 2 ** 31 in set(probe_values("uint32").tolist())


def test_the_float_values_hold_nan_payloads_and_negative_zero():
    floats = bits_of(probe_values("float"))
    assert np.array([0x7FC00001, 0x7F800001], dtype=np.uint32).view(np.float32)[0].tobytes() in floats
    assert np.float32(-0.0).tobytes() in floats
    assert np.float64(1e300).tobytes() in bits_of(probe_values("double"))  # what float32 cannot hold


@pytest.mark.parametrize("name,count", [("int4", 16), ("uint2", 4), ("float4e2m1", 16), ("float8e5m2", 256),
                                        ("float16", 65536), ("bfloat16", 65536)])
def test_narrow_types_send_every_bit_pattern(name, count):
    assert len(bits_of(probe_values(name))) == count


def test_strings_are_not_all_ascii():
    assert any(not text.isascii() for text in probe_values("string"))


# --- how a loss is told --------------------------------------------------------------------------

def test_a_whole_answer_loses_nothing():
    sent = sent_array("float", "rank 2")
    assert losses(sent, (sent.copy(),)) == ()


def test_a_zero_d_array_that_came_back_as_shape_one_is_a_lost_shape():
    sent = sent_array("int64", "0-d")
    assert losses(sent, (sent.reshape(1),)) == ("shape [] came back as [1]",)


def test_a_narrowed_int64_says_so_and_which_values_changed():
    sent = np.array([1, 2 ** 31, 2 ** 53 + 1], dtype=np.int64)
    lost = losses(sent, (sent.astype(np.int32),))
    assert lost[0] == "int64 came back as int32"
    assert lost[1].startswith("values changed at 2 of 3 elements") and "sent 2147483648, got -2147483648" in lost[1]


def test_a_changed_nan_payload_is_a_loss_though_any_nan_passes_a_run():
    sent = np.array([0x7FC00001, 0x3F800000], dtype=np.uint32).view(np.float32)
    quieted = np.array([0x7FC00000, 0x3F800000], dtype=np.uint32).view(np.float32)
    (lost,) = losses(sent, (quieted,))
    assert "NaN payloads" in lost and "0x7fc00001" in lost and "0x7fc00000" in lost


def test_negative_zero_that_came_back_positive_is_a_loss():
    (lost,) = losses(np.array([-0.0, 1.0]), (np.array([0.0, 1.0]),))
    assert "-0.0 came back as 0.0" in lost


def test_a_four_bit_output_left_packed_is_told_as_such():
    sent = np.arange(-8, 7).astype(ml_dtypes.int4)  # 15 values: 8 bytes packed
    from onnx import numpy_helper

    packed = np.frombuffer(numpy_helper.from_array(sent).raw_data, dtype=np.uint8)
    (lost,) = losses(sent, (packed,))
    assert lost.startswith("a 4-bit output left packed: int4[15] came back as uint8[8]") and "packed bytes themselves" in lost


def test_strings_that_came_back_as_bytes_are_a_loss():
    sent = np.array(["naïve", "x"], dtype=object)
    (lost,) = losses(sent, (np.array([s.encode() for s in sent], dtype=object),))
    assert lost == "string elements came back as bytes, not str"
    assert losses(sent, (np.array(["naïve", "x"]).astype(object),)) == ()  # numpy's str_ is a str


def test_a_refusal_is_no_loss_and_keeps_the_telling_line():
    probe = Probe("float", "0-d", "Identity", 1, sent_array("float", "0-d"))
    found = finding(probe, RunOutput.not_supported("no kernel for Identity", no_kernel=True))
    assert (found.status, found.refusal, found.refusal_kind) == (REFUSED, "no kernel for Identity", "no_kernel")
    assert finding(probe, RunOutput.malformed("the backend returned None, not a list of arrays")).status == LOST
    assert finding(probe, RunOutput.crashed("died")).status == "crash"


def test_what_only_cast_loses_is_put_on_the_runtimes_cast():
    sent = sent_array("float8e5m2", "rank 1")
    changed = sent.copy()
    changed[0] = 0
    identity = finding(Probe("float8e5m2", "rank 1", "Identity", 19, sent), RunOutput((sent.copy(),)))
    cast = finding(Probe("float8e5m2", "rank 1", "Cast", 19, sent), RunOutput((changed,)))
    (line,) = loss_lines([identity, cast])
    assert line.startswith("LOST float8e5m2 in rank 1 (Cast-19): values changed") and "the runtime's Cast" in line


# --- real adapters, in this process ----------------------------------------------------------------

def test_onnxruntime_backend_loses_nothing():
    found = list(run_probes(BackendRunner("onnxruntime.backend"), probes(checked_dtypes())))
    assert [f.record() for f in found if f.status not in (OK, REFUSED)] == []
    # What numpy holds natively it carries whole; what it cannot hand over (bfloat16, float8, int4...) it refuses.
    assert {f.probe.dtype for f in found if f.status == OK} >= {"float", "double", "float16", "int64", "uint64", "string", "bool"}


def test_an_adapter_that_turns_zero_d_into_shape_one_loses_exactly_the_zero_d_round_trips():
    found = list(run_probes(BackendRunner("zero_d_as_one"), probes(["float", "int64"])))
    assert {(f.probe.dtype, f.probe.op) for f in found if f.status == LOST} == {(d, op) for d in ("float", "int64") for op in ("Identity", "Cast")}
    assert {f.probe.shape_label for f in found if f.status == LOST} == {"0-d"}
    assert {f.lost for f in found if f.status == LOST} == {("shape [] came back as [1]",)}


# --- the command ------------------------------------------------------------------------------------

def test_check_backend_exit_1_and_json_name_the_narrowed_int64(conform, tmp_path):
    report = tmp_path / "check.json"
    done = conform("check-backend", "--backend", "int64_as_int32", "--dtype", "int64", "--dtype", "int32",
                   "--report-json", str(report))
    assert done.code == 1, done.stderr
    doc = json.loads(report.read_text())
    lost = [c for c in doc["checks"] if c["status"] == LOST]
    assert {c["dtype"] for c in lost} == {"int64"} and len(lost) == len(SHAPE_LABELS) * 2
    assert all(c["lost"][0] == "int64 came back as int32" for c in lost)
    assert {c["status"] for c in doc["checks"] if c["dtype"] == "int32"} == {OK}
    assert doc["summary"]["lost"] == len(lost)
    assert "LOST int64 in every shape" in done.stdout and "int64 came back as int32" in done.stdout


def test_check_backend_tells_packed_four_bit_outputs(conform):
    done = conform("check-backend", "--backend", "packs_nibbles", "--dtype", "int4", "--dtype", "uint8")
    assert done.code == 1
    assert "a 4-bit output left packed: int4[17] came back as uint8[9]" in done.stdout


def test_a_crash_costs_its_round_trip_and_the_check_goes_on(conform, tmp_path):
    report = tmp_path / "check.json"
    done = conform("check-backend", "--backend", "dies_on_bool", "--dtype", "bool", "--dtype", "int8",
                   "--report-json", str(report))
    assert done.code == 1
    checks = json.loads(report.read_text())["checks"]
    assert {c["status"] for c in checks if c["dtype"] == "bool" and c["shape"] != "size 0"} == {"crash"}
    assert {c["status"] for c in checks if c["dtype"] == "int8"} == {OK}
    assert "exited with code 9" in checks[0]["refusal"]


def test_a_builtin_runner_that_loses_nothing_exits_0(conform):
    done = conform("check-backend", "--runner", "onnxruntime", "--dtype", "float", "--dtype", "bfloat16")
    assert done.code == 0, done.stdout + done.stderr
    assert "nothing lost" in done.stdout


@pytest.mark.parametrize("args,code,words", [
    ((), 2, "give --backend"),
    (("--backend", "onnxruntime.backend", "--runner", "reference"), 2, "give --backend"),
    (("--runner", "nosuch"), 2, "choose from"),
    (("--backend", "onnxruntime.backend", "--dtype", "float99"), 2, "known:"),
    (("--backend", "no_such_backend_module"), 3, "not available"),
])
def test_bad_options_are_told_without_a_traceback(conform, args, code, words):
    done = conform("check-backend", *args)
    assert done.code == code and words in done.stderr and "Traceback" not in done.stderr


# --- the hint in a run's summary --------------------------------------------------------------------

def _failed(expected: np.ndarray, actual: np.ndarray, backend: str | None = "my_adapter", message: str = "mismatch",
            inputs: dict | None = None):
    """A failing result as the hint reads it."""
    replay = "conform run --op Abs --opset 13" + (f" --backend {backend}" if backend else "")
    return SimpleNamespace(outcome="fail", replay=replay, actual=(actual,), verdict=SimpleNamespace(message=message),
                           expected=SimpleNamespace(is_valid=True, readings=[SimpleNamespace(outputs=(expected,))]),
                           example=SimpleNamespace(inputs=inputs or {}, version=SimpleNamespace(label="Abs-13")))


def test_a_backend_runs_zero_d_that_came_back_as_shape_one_points_to_check_backend():
    hint = adapter_loss_hint([_failed(np.float32(1), np.array([1], np.float32))])
    assert "0-d outputs came back as shape [1] (1)" in hint and "conform check-backend --backend my_adapter" in hint


def test_a_narrowed_or_packed_output_points_to_check_backend():
    assert "int64 outputs came back as int32" in adapter_loss_hint([_failed(np.arange(3), np.arange(3, dtype=np.int32))])
    four_bit = np.arange(5).astype(ml_dtypes.uint4)
    assert "sub-byte outputs came back packed" in adapter_loss_hint([_failed(four_bit, np.zeros(3, np.uint8))])


def test_valid_inputs_rejected_only_where_one_is_zero_d_point_to_check_backend():
    rejected = "runtime rejected a valid input: rank mismatch"
    zero_d = _failed(np.float32(1), np.float32(1), message=rejected, inputs={"X": np.array(1, np.float32)})
    other = _failed(np.ones(2, np.float32), np.ones(2, np.float32), message=rejected, inputs={"X": np.ones(2, np.float32)})
    assert "valid inputs rejected only where one is 0-d (1)" in adapter_loss_hint([zero_d])
    assert adapter_loss_hint([zero_d, other]) is None  # rejected with or without a 0-d input: not the sign


def test_no_hint_for_wrong_values_or_for_a_run_without_a_backend():
    assert adapter_loss_hint([_failed(np.arange(3), np.arange(3) + 1)]) is None
    assert adapter_loss_hint([_failed(np.float32(1), np.array([1], np.float32), backend=None)]) is None


def test_the_run_summary_of_a_lossy_adapter_names_the_check(conform):
    done = conform("run", "--backend", "zero_d_as_one", "--op", "Abs", "--opset", "13", "--dtype", "float", "--examples", "5")
    assert done.code == 1
    assert "note: some failures look like the adapter's loss" in done.stdout
    assert "conform check-backend --backend zero_d_as_one" in done.stdout
