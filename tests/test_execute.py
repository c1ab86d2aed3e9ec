"""The run loop: cases staged a few at a time, results the same and in order, and each case's
seconds its own."""

import time

import numpy as np
from onnx import TensorProto

from conformance import compare, execute
from conformance.execute import RunOptions, run_examples, select_examples, staged_chunks
from conformance.runners import make_runner

OPTIONS = RunOptions(op="Slice", opset=13, dtypes=("float", "int8"), examples=5, seed=1)


def comparable(results):
    return [(r.example.id, r.verdict.outcome, r.verdict.message, [a.tobytes() for a in r.actual]) for r in results]


def test_staging_in_chunks_changes_no_result_nor_their_order(monkeypatch):
    examples = select_examples(OPTIONS)
    chunked = run_examples(examples, make_runner(), OPTIONS)
    monkeypatch.setattr(execute, "IN_PROCESS_CHUNK", 1)
    one_by_one = run_examples(examples, make_runner(), OPTIONS)
    assert len(chunked) == len(examples) > execute.IN_PROCESS_CHUNK * 2
    assert comparable(chunked) == comparable(one_by_one)


class Streaming:
    """The in-process runner, as a runner that overlaps cases (run_stream) looks to staging."""

    def __init__(self):
        self.inner = make_runner()

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def run_stream(self, builts):
        return (None if b is None else self.inner.run(b) for b in builts)


def test_a_chunk_ends_at_its_count_or_once_it_holds_its_bytes(monkeypatch):
    examples = select_examples(OPTIONS)
    sizes = [len(chunk) for chunk in staged_chunks(examples, make_runner(), OPTIONS)]
    assert sum(sizes) == len(examples) and set(sizes[:-1]) == {execute.IN_PROCESS_CHUNK}
    streamed = [len(chunk) for chunk in staged_chunks(examples, Streaming(), OPTIONS)]
    assert sum(streamed) == len(examples) and set(streamed[:-1]) == {execute.STAGE_CHUNK} != {execute.IN_PROCESS_CHUNK}
    monkeypatch.setattr(execute, "STAGE_BYTES", 1)  # every staged case holds at least one byte
    assert all(len(chunk) == 1 for chunk in staged_chunks(examples[:20], make_runner(), OPTIONS))


class SlowOn:
    """The in-process runner, but 0.2 s slower on cases with one particular `data` input."""

    def __init__(self, data):
        self.inner, self.data = make_runner(), data

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def run(self, built):
        if np.array_equal(built.feeds.get("data"), self.data):
            time.sleep(0.2)
        return self.inner.run(built)


def test_each_result_times_its_own_case_not_the_chunk_around_it():
    # Staged together, the cases after the slow one wait for it; their seconds must not say so.
    examples = select_examples(OPTIONS)[:execute.IN_PROCESS_CHUNK]
    runner = SlowOn(examples[3].inputs["data"])
    slow = {i for i, e in enumerate(examples) if np.array_equal(e.inputs["data"], runner.data)}
    seconds = [r.seconds for r in run_examples(examples, runner, OPTIONS)]
    assert all(seconds[i] >= 0.2 for i in slow)
    assert all(s < 0.1 for i, s in enumerate(seconds) if i not in slow), seconds


def test_a_case_the_text_allows_but_onnx_checker_refuses_is_not_called_a_conform_bug(tmp_path):
    # ConstantOfShape's text: value "Should be a one-element tensor"; onnx's type inference also wants
    # it one-dimensional, so a [[1.5]] value is a case the text allows that onnx.checker refuses.
    (tmp_path / "cos.yaml").write_text(
        "op: ConstantOfShape\ncases:\n  - name: value_rank_2\n    versions: [21]\n    dtypes: [float]\n"
        "    inputs: {input: [2]}\n    attributes: {value: [[1.5]]}\n")
    options = RunOptions(op="ConstantOfShape", opset=21, case_roots=(tmp_path,), use_hypothesis=False)
    [result] = run_examples(select_examples(options), make_runner(), options)
    assert result.expected.is_valid and result.outcome == "error"
    assert "case the spec text allows" in result.verdict.message and "one-dim" in result.verdict.message
    assert "either conform built it wrong or onnx is stricter than the text" in result.verdict.message
    assert not result.actual  # not run: the runtime's answer would be judged against a model onnx calls invalid


def test_shrinking_runs_each_distinct_case_once_and_finds_the_same_minimal_case():
    from conformance import strategies
    from conformance.execute import FAILING, ShrinkTask, minimal_case, run_one

    class Counting:
        """The CPU runner, counting what it is given: model and feeds."""

        def __init__(self):
            self.inner, self.seen = make_runner(), []

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def run(self, built):
            self.seen.append((built.data, tuple((k, v.dtype.str, v.shape, v.tobytes()) for k, v in built.feeds.items())))
            return self.inner.run(built)

    options = RunOptions(op="Slice", opset=13, dtypes=("uint8",), use_yaml=False)
    first_failure = next(r.example for r in run_examples(select_examples(options), make_runner(), options) if r.outcome in FAILING)
    runner = Counting()
    minimal, message = minimal_case(ShrinkTask(first_failure, "input"), runner, options)
    assert len(runner.seen) == len(set(runner.seen)) > 20
    plain = strategies.shrink(first_failure.version, dict(sorted(first_failure.types.items())), options.examples,
                              options.seed, lambda e: run_one(e, make_runner(), options).outcome in FAILING)
    assert minimal.id == plain.id and {k: v.tobytes() for k, v in minimal.inputs.items()} == \
           {k: v.tobytes() for k, v in plain.inputs.items()}
    assert message == run_one(minimal, make_runner(), options).verdict.message


class _Recording:
    """An in-process runner that remembers, for each call, which Slice case (by its data array and
    the type of its indices) and mode (initializers or not) it was given."""

    name = "recording"

    def __init__(self, examples) -> None:
        self._by_data = {(id(e.inputs["data"]), e.inputs["starts"].dtype.itemsize): e for e in examples}
        assert len(self._by_data) == len(examples)
        self._real = make_runner()
        self.calls = []

    def describe(self):
        return {"name": self.name}

    def replay_options(self):
        return []

    def run(self, built):
        graph = built.model.graph
        mode = "initializer" if graph.initializer else "input"
        starts = next(i.data_type for i in graph.initializer if i.name == "starts") if graph.initializer else \
            next(i.type.tensor_type.elem_type for i in graph.input if i.name == "starts")
        width = {TensorProto.INT32: 4, TensorProto.INT64: 8}[starts]
        self.calls.append((self._by_data[id(built.feeds["data"]), width].id, mode))
        return self._real.run(built)


def test_a_known_hang_is_the_case_of_that_runtime_call_and_is_judged_a_timeout_without_running():
    # A worker stopped in a unit's Nth runtime call says only N: the case is found again by staging
    # the unit as the worker did, where cases refused before the runtime (too large here) make no call.
    import dataclasses

    from conformance.execute import examples_of, plan, with_known_hang
    from conformance.runners.base import timeout_message

    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False, modes=("input", "initializer"),
                         max_elements=20)
    unit = plan(options)[0]
    examples = examples_of(unit, options)
    first = _Recording(examples)
    results = run_examples(examples, first, options)
    assert 0 < len(first.calls) < len(results)  # some cases never reach the runtime
    for call in (1, len(first.calls) // 2, len(first.calls)):
        hung = with_known_hang(dataclasses.replace(unit, hang=(call, 2.5, "; its stderr, last: stuck")), options, first)
        assert hung.known_timeout == (*first.calls[call - 1], 2.5, "; its stderr, last: stuck")
        again = _Recording(examples)
        found = {(r.example.id, r.extra["mode"]): r for r in run_examples(examples, again, hung)}
        assert again.calls == first.calls[:call - 1] + first.calls[call:]
        timed_out = found[first.calls[call - 1]]
        assert (timed_out.outcome, timed_out.verdict.message) == ("timeout", timeout_message(2.5) + "; its stderr, last: stuck")
        assert [r.outcome for key, r in found.items() if key != first.calls[call - 1]] == \
            [r.outcome for r in results if (r.example.id, r.extra["mode"]) != first.calls[call - 1]]
    assert with_known_hang(unit, options, first) is options


def _stated(tmp_path, expect):
    from conformance import casefile

    path = tmp_path / "stated.yaml"
    path.write_text("op: Slice\ncases:\n  - name: stated\n    versions: [13]\n    dtypes: [float]\n    types: {Tind: [int64]}\n"
                    f"    inputs: {{data: [1, 2, 3], starts: [0], ends: [2]}}\n    expect: {expect}\n")
    [loaded] = casefile.load_files([path])
    [example] = loaded.examples["stated"]
    return example, execute.expected_for(example)


def test_a_stated_output_the_reference_disagrees_with_still_decides_and_names_the_reference_answer(tmp_path):
    # A fail judged by a user's stated output may be the file's mistake: the panel says what
    # conform's own reference would have expected.
    example, expected = _stated(tmp_path, "{output: [1, 2, 3]}")
    [reading] = expected.readings
    assert reading.outputs[0].tolist() == [1.0, 2.0, 3.0]
    assert reading.label == "stated by the case file; conform's reference gives float[2] [1.0, 2.0]"
    _, expected = _stated(tmp_path, "{output: [1, 2]}")
    assert [r.label for r in expected.readings] == ["stated by the case file"]


def test_a_stated_output_in_one_order_the_text_leaves_free_passes_a_runtime_with_another(tmp_path):
    # TopK with sorted=0: "order of returned 'Values' and 'Indices' are undefined". A case file
    # states the top 2 of [1, 4, 2, 3] in one order; a runtime giving the other order conforms.
    from conformance import casefile
    from conformance.runners.base import RunOutput

    path = tmp_path / "unsorted.yaml"
    path.write_text("op: TopK\ncases:\n  - name: unsorted\n    versions: [11]\n    dtypes: [float]\n"
                    "    inputs: {X: [1, 4, 2, 3], K: [2]}\n    attributes: {sorted: 0}\n"
                    "    expect: {outputs: [[4, 3], [1, 3]]}\n")
    [loaded] = casefile.load_files([path])
    [example] = loaded.examples["unsorted"]
    expected = execute.expected_for(example)
    swapped = RunOutput(outputs=(np.array([3, 4], np.float32), np.array([3, 1], np.int64)))
    assert compare.judge(expected, swapped).outcome == compare.PASS, "the text leaves the order free"
    wrong = RunOutput(outputs=(np.array([3, 2], np.float32), np.array([3, 2], np.int64)))
    assert compare.judge(expected, wrong).outcome == compare.FAIL, "2 is not among the top 2"


def test_a_stated_error_the_reference_finds_valid_still_decides_and_says_so(tmp_path):
    example, expected = _stated(tmp_path, "{error: steps-zero}")
    assert not expected.is_valid and expected.invalid.rule == "steps-zero"
    assert expected.invalid.sentence == "stated by the case file; conform's reference finds the input valid, giving float[2] [1.0, 2.0]"
