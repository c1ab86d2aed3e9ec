"""A runtime's whole error text: the one line that says why in verdicts, the whole (bounded) message
in the RunOutput, across the worker pipe and in the JSON report."""

from __future__ import annotations

import pickle

import pytest

from conformance.runners.base import RunOutput, Vocabulary, bounded_detail, classified, first_line, telling_line
from conformance.runners.wire import pack_output, unpack_output
from conftest import CRASHING, PASSING

ORT_STATUS = ("[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running Slice node. Name:'n' "
              "Status Message: slice.cc:153 Compute step of 0 is not allowed")
RUST_PANIC = ("thread 'main' panicked at src/ops/array/slice.rs:61:19:\nattempt to divide by zero\n"
              "stack backtrace:\n   0: rust_begin_unwind\n   1: core::panicking::panic_fmt")
CPP_TERMINATE = ("warning: something else first\nterminate called after throwing an instance of 'std::bad_alloc'\n"
                 "  what():  std::bad_alloc")
OPENVINO = ("Exception from src/inference/src/cpp/core.cpp:105:\nException from src/inference/src/model_reader.cpp:158:\n"
            "Check 'axes_are_known' failed at src/core/shape_inference/include/slice_shape_inference.hpp:111: "
            "StridedSlice is typable only if axis is a const\n")
# OpenVINO's frontend nests the reason a model was not converted under lines that only introduce it.
OPENVINO_NOT_CONVERTED = (
    "Exception from src/inference/src/cpp/core.cpp:105:\nCheck 'false' failed at "
    "src/frontends/common_translators/src/unconverted_ops_report.cpp:151:\nFrontEnd API failed with OpConversionFailure:\n"
    "Model wasn't fully converted. Failed operations detailed log:\n-- Col2Im-18 with a message:\n"
    "Check '(dilations.size() == spatial_rank)' failed at src/frontends/onnx/frontend/src/op/col2im.cpp:37:\n"
    "While validating ONNX node '<Node(Col2Im): output>':\nCol2Im 'dilations' attribute must have size [2]. Got: 3\n\n"
    "Summary:\n-- Conversion is failed for: Col2Im-18\n")
ANYHOW_CHAIN = ("Failed analyse for node #1 \"n\" Slice\n\nCaused by:\n    0: Infering facts\n"
                "    1: Unsupported datum type: I4\n")


@pytest.mark.parametrize("text, line", [
    (ORT_STATUS, ORT_STATUS),
    (RUST_PANIC, "thread 'main' panicked at src/ops/array/slice.rs:61:19: attempt to divide by zero"),
    (CPP_TERMINATE, "terminate called after throwing an instance of 'std::bad_alloc'"),
    (OPENVINO, "Check 'axes_are_known' failed at src/core/shape_inference/include/slice_shape_inference.hpp:111: "
               "StridedSlice is typable only if axis is a const"),
    (OPENVINO_NOT_CONVERTED, "FrontEnd API failed with OpConversionFailure: Col2Im 'dilations' attribute must have "
                             "size [2]. Got: 3"),
    ("FrontEnd API failed with OpConversionFailure:\nModel wasn't fully converted. Failed operations detailed log:\n"
     "-- GlobalLpPool-1 with a message:\nWhile validating ONNX node '<Node(GlobalLpPool): Y>': Check "
     "'data_shape[0].is_static()' failed at src/frontends/onnx/frontend/src/op/lp_pool.cpp:30:\n"
     "FrontEnd API failed with GeneralFailure:\nFirst dimension of input data must be static\n",
     "FrontEnd API failed with OpConversionFailure: First dimension of input data must be static"),
    (ANYHOW_CHAIN, "Caused by: 1: Unsupported datum type: I4"),
    ("Unsupported data type COMPLEX64", "Unsupported data type COMPLEX64"),
    ("\n\n  starts must be 1-D\nmore about it\n", "starts must be 1-D"),
    ("a line\nAssertion `x < 3' failed.\nerror: later", "Assertion `x < 3' failed."),
    ("", ""),
])
def test_the_telling_line_is_the_one_that_says_why(text, line):
    assert telling_line(text) == line


def test_the_telling_line_is_printable_and_bounded():
    line = telling_line("Error: \x1b[2J" + "x" * 2000)
    # 500 characters of the runtime's text; the escape shows one of them as four
    assert line.startswith("Error: \\x1b[2J") and len(line) == 500 + len("\\x1b") - 1


def test_an_exception_saying_nothing_is_named_by_its_class():
    assert first_line(ValueError("  \n ")) == "ValueError"


def test_a_refusal_keeps_its_whole_message_where_the_line_says_less():
    refused = classified(RuntimeError(RUST_PANIC))
    assert refused.error == "thread 'main' panicked at src/ops/array/slice.rs:61:19: attempt to divide by zero"
    assert refused.detail == RUST_PANIC
    assert classified(RuntimeError("one line only")).detail is None
    unsupported = classified(RuntimeError(OPENVINO), Vocabulary(unsupported=("typable only",)))
    assert unsupported.unsupported and unsupported.detail == OPENVINO.strip()


def test_the_detail_keeps_head_and_tail_within_its_bound():
    text = "HEAD" + "a" * 40_000 + "TAIL"
    detail = bounded_detail(text, limit=16 * 1024)
    assert detail.startswith("HEAD") and detail.endswith("TAIL")
    assert f"[... {len(text) - 16 * 1024} bytes left out ...]" in detail
    assert len(detail.encode()) < 16 * 1024 + 100
    assert bounded_detail("short\x07") == "short\\x07"


def test_the_detail_crosses_the_worker_pipe():
    sent = RunOutput.failed("the line", detail="the line\nand the rest")
    back = unpack_output(pickle.loads(pickle.dumps(pack_output(sent))))
    assert (back.error, back.detail, back.fault) == ("the line", "the line\nand the rest", None)
    assert unpack_output(pack_output(RunOutput())).detail is None


PANICKY_BACKEND = '''
from _delegating import DelegatingRep, backend_for

MESSAGE = """{message}"""


class _Rep(DelegatingRep):
    def run(self, inputs, **kwargs):
        names = [i.name for i in self.model.graph.input]
        feeds = dict(zip(names, inputs))
        if "starts" in feeds and feeds["starts"].size and int(feeds["starts"].reshape(-1)[0]) == -3:
            raise RuntimeError(MESSAGE)
        return super().run(inputs, **kwargs)


prepare = backend_for(_Rep)
'''


def test_a_cli_run_reports_the_telling_line_and_keeps_the_whole_text(conform, tmp_path, monkeypatch):
    folder = tmp_path / "own_backends"
    folder.mkdir()
    (folder / "panicky.py").write_text(PANICKY_BACKEND.format(message=RUST_PANIC))
    monkeypatch.setenv("PYTHONPATH", str(folder))
    result = conform("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "panicky",
                     "--case", CRASHING, "--case", PASSING, "--jobs", "1")
    records = {record["id"]: record for record in result.report["results"]}
    failed = records[CRASHING]
    assert failed["outcome"] == "fail", result.stderr
    assert failed["message"] == ("runtime rejected a valid input: thread 'main' panicked at src/ops/array/slice.rs:61:19: "
                                 "attempt to divide by zero")
    assert failed["detail"] == RUST_PANIC
    assert records[PASSING]["outcome"] == "pass" and "detail" not in records[PASSING]


def test_a_vocabulary_tells_unsupported_from_invalid_and_judges_invalid_cases_by_it():
    from conformance.compare import PASS, UNSUPPORTED, judge
    from conformance.reference.base import Expected, Invalid

    vocabulary = Vocabulary(no_kernel=(r"Unsupported data type \w+",), unsupported=("dynamic rank",),
                            invalid=("INVALID_GRAPH",))
    no_kernel = classified(RuntimeError("Unsupported data type COMPLEX64"), vocabulary)
    dynamic = classified(RuntimeError("Exception from core.cpp:105:\nShapeOf: dynamic rank is not supported"), vocabulary)
    both = classified(RuntimeError("[ONNXRuntimeError] INVALID_GRAPH: dynamic rank"), vocabulary)
    other = classified(RuntimeError("bad axis 7"), vocabulary)
    assert (no_kernel.no_kernel, no_kernel.unsupported) == (True, True)
    assert (dynamic.unsupported, dynamic.invalid, dynamic.error) == (True, False, "ShapeOf: dynamic rank is not supported")
    assert (both.unsupported, both.invalid) == (True, True)
    assert (other.unsupported, other.invalid) == (False, False)
    invalid = Expected(invalid=Invalid("axes in range", "Accepted range is [-r, r-1]"))
    outcomes = [judge(invalid, refusal).outcome for refusal in (no_kernel, dynamic, both, other)]
    assert outcomes == [UNSUPPORTED, UNSUPPORTED, PASS, PASS], "only a refusal that may say why the input is invalid passes"
    assert unpack_output(pickle.loads(pickle.dumps(pack_output(both)))).invalid


def test_a_vocabulary_of_phrases_escapes_them_and_two_join():
    phrases = Vocabulary.literal(unsupported=("a (b).",))
    assert phrases.says("unsupported", "x a (b). y") and not phrases.says("unsupported", "a b!")
    joined = phrases | Vocabulary(invalid=("bad",))
    assert joined.says("invalid", "so bad") and joined.says("unsupported", "a (b).")
