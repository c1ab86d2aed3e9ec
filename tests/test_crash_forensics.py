"""Crash forensics: a crashed case run again alone says whether it crashes alone or after earlier
cases (naming them), a crash quotes its panic line, and the stderr log says which case wrote what.

The corrupting backend (tests/backends/corrupting.py) stands in for heap corruption (a case with
starts of -3 makes the next case its process runs crash) and for a Rust panic (starts of -100:
the panic line, a long backtrace, abort)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from rich.console import Console

from conformance import runtime_log
from conformance.execute import RunOptions, run_examples, select_examples
from conformance.report import json_report
from conformance.report.console import failure_text
from conformance.runners import isolated, make_runner
from conftest import BACKENDS, CRASHING, EXITING, PASSING

CORRUPTER = CRASHING  # starts of -3: it passes, and the next case its worker runs crashes
PANICKING = EXITING  # starts of -100: a Rust-style panic, then abort
EARLIER = "Slice-13/negative_axis/float/int64"
HANGING = "Slice-13/start_beyond_dim/float/int64"  # the crashy backend hangs on it
OPTIONS = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False)


@pytest.fixture
def backend(monkeypatch):
    """`backend(NAME, timeout=30, **environment)`: an isolated runner of a test backend, closed after the test."""
    monkeypatch.syspath_prepend(str(BACKENDS))
    made = []

    def runner(name: str, timeout: float = 30, **environment: str):
        for key, value in environment.items():
            monkeypatch.setenv(key, value)
        made.append(make_runner(backend=name, isolate=True, timeout=timeout))
        return made[-1]

    yield runner
    for runner in made:
        runner.close()


def run_cases(runner, *ids: str, options: RunOptions = OPTIONS) -> dict:
    """The cases, run in this order on `runner`, by id: each one's JSON record."""
    by_id = {example.id: example for example in select_examples(dataclasses.replace(options, case_ids=ids))}
    results = run_examples([by_id[case] for case in ids], runner, options)
    doc = json_report.document(results, runner.describe(), None, {})
    return {record["id"]: record for record in doc["results"]}, results


def test_a_case_crashed_by_an_earlier_case_does_not_crash_alone_and_names_the_cases_before_it(backend, own_scratch):
    runner = backend("corrupting")
    records, results = run_cases(runner, EARLIER, CORRUPTER, PASSING, "Slice-13/end_beyond_dim/float/int64")
    outcomes = {case: record["outcome"] for case, record in records.items()}
    # The innocent case crashes where it met the corruption; run alone, it passes; the fresh
    # worker that ran it alone runs the case after it.
    assert outcomes == {EARLIER: "pass", CORRUPTER: "pass", PASSING: "crash", "Slice-13/end_beyond_dim/float/int64": "pass"}
    crash = records[PASSING]
    assert crash["crash"] == {"alone": False, "rerun": "run again alone in a fresh worker, it did not crash",
                              "before": [CORRUPTER, EARLIER], "ran_before": 2}
    assert crash["message"].startswith("the runtime's worker process died: killed by signal SIGSEGV; run again alone in a "
                                       "fresh worker, it did not crash: a crash after earlier cases (possible memory "
                                       f"corruption by an earlier case); before it in that worker, most recent first: "
                                       f"{CORRUPTER}, {EARLIER}; its stderr, last: ")
    assert "crash" not in records[EARLIER] and "crash" not in records[CORRUPTER]
    assert runner.restarts == 1 and runner.runs_again == 1
    # The log marks which case wrote what: the crashed case's lines under its name.
    runner.close()
    log = own_scratch / "report.stderr.log"
    runtime_log.keep(log)
    assert (f": case {PASSING} (its worker died in it) ==\ncorrupting: a later case meets the corrupted heap\n"
            in log.read_text())


def test_a_crash_that_does_not_repeat_with_nothing_before_it_is_not_called_corruption():
    assert isolated.account({"alone": False, "rerun": "run again alone in a fresh worker, it did not crash",
                             "before": [], "ran_before": 0}) == (
        "run again alone in a fresh worker, it did not crash, and no case ran before it in its worker: a crash that "
        "does not always happen")


def test_the_cases_before_a_crash_are_named_most_recent_first_and_bounded(backend, monkeypatch):
    monkeypatch.setattr(isolated, "BEFORE_NAMED", 2)
    runner = backend("corrupting")
    earlier = ["Slice-13/omitted_axes_full_rank/float/int64", "Slice-13/omitted_steps/float/int64", EARLIER]
    records, _ = run_cases(runner, *earlier, CORRUPTER, PASSING)
    assert records[PASSING]["crash"]["before"] == [CORRUPTER, EARLIER] and records[PASSING]["crash"]["ran_before"] == 4
    assert f"most recent first: {CORRUPTER}, {EARLIER} and 2 more;" in records[PASSING]["message"]


def test_a_panic_crashes_alone_and_its_verdict_quotes_the_panic_line_before_the_last_frames(backend):
    runner = backend("corrupting")
    records, results = run_cases(runner, PANICKING, EARLIER)
    crash = records[PANICKING]
    assert crash["outcome"] == "crash" and records[EARLIER]["outcome"] == "pass"
    assert crash["crash"]["alone"] is True
    assert crash["crash"]["rerun"] == "run again alone in a fresh worker, it crashed again (killed by signal SIGABRT)"
    message = crash["message"]
    assert message.startswith("the runtime's worker process died: killed by signal SIGABRT; its stderr, last: "
                              "thread '<unnamed>' panicked at tract-core/src/ops/array/slice.rs:42:17: attempt to "
                              "divide by zero | ... | ")
    assert message.endswith("| note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.")
    assert message.count("panicked at") == 1 and message.count("attempt to divide by zero") == 1
    assert message.count(" | ") == runtime_log.LAST_LINES + 1  # the panic line, the gap, the last lines
    # The panel says it crashes alone, so that its replay shows it.
    text = failure_text(results[0]).plain
    assert "crashes alone: run again alone in a fresh worker, it crashed again (killed by signal SIGABRT), so its " \
           "replay command shows the crash" in text


def test_reruns_are_bounded_one_model_that_crashed_alone_is_not_run_again(backend):
    runner = backend("corrupting", CORRUPTING_ALL_PANIC="1")
    same_model = [PASSING, EARLIER, "Slice-13/end_beyond_dim/float/int64"]
    records, results = run_cases(runner, *same_model)
    assert [records[case]["outcome"] for case in same_model] == ["crash"] * 3
    assert records[PASSING]["crash"]["alone"] is True
    for case in same_model[1:]:
        assert records[case]["crash"]["alone"] is None
        assert records[case]["crash"]["rerun"] == f"not run again alone: {PASSING}, of the same model, crashed alone"
        assert "run again alone" not in records[case]["message"]  # the message changes only where it does not crash alone
    assert runner.runs_again == 1 and runner.restarts == 3
    # A family's panel counts how its crashes fared.
    text = failure_text(results[0], results[1:]).plain
    assert "of these 3 crashes: 1 crash alone, 2 were not run again alone" in text


def test_reruns_stop_at_the_limit(backend, monkeypatch):
    monkeypatch.setattr(isolated, "RUN_AGAIN_LIMIT", 1)
    runner = backend("corrupting")
    records, _ = run_cases(runner, EARLIER, CORRUPTER, PASSING, CORRUPTER.replace("int64", "int32"),
                           "Slice-13/negative_end/float/int32")
    assert records[PASSING]["crash"]["alone"] is False
    second = records["Slice-13/negative_end/float/int32"]["crash"]
    assert second["alone"] is None and second["rerun"] == "not run again alone: 1 crashed cases were run again before it, the most one runner does"
    assert runner.runs_again == 1


def test_a_timeout_is_not_run_again(backend, tmp_path):
    hangs = tmp_path / "hangs.txt"
    runner = backend("crashy", timeout=1, CRASHY_HANGS=str(hangs))
    records, _ = run_cases(runner, HANGING, PASSING)
    assert records[HANGING]["outcome"] == "timeout" and "crash" not in records[HANGING]
    assert len(hangs.read_text().splitlines()) == 1 and runner.runs_again == 0


def test_a_crash_in_a_jobs_run_is_run_again_and_the_console_and_json_say_so(conform, tmp_path):
    # A --jobs worker runs the runtime in-process; its crash sends the unit to careful workers,
    # whose isolated runners run each crashed case again alone.
    cases = (EARLIER, CORRUPTER, PASSING, PANICKING)
    args = [arg for case in cases for arg in ("--case", case)]
    result = conform("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend",
                     "corrupting", "--jobs", "2", *args)
    assert result.code == 1, result.stderr
    records = {r["id"]: r for r in result.report["results"]}
    assert records[PANICKING]["crash"]["alone"] is True
    assert "panicked at tract-core/src/ops/array/slice.rs:42:17: attempt to divide by zero | ... |" in records[PANICKING]["message"]
    assert {records[case]["outcome"] for case in (EARLIER, CORRUPTER)} == {"pass"}
    # Which case meets the corruption depends on how the careful workers share the unit; whichever
    # it is does not crash alone, and names the corrupter among the cases before it.
    after = [r for r in records.values() if r.get("crash", {}).get("alone") is False]
    assert after and all(CORRUPTER in r["crash"]["before"] for r in after)
    assert "possible memory corruption by an earlier case" in result.stdout
    assert "crashes alone: run again alone in a fresh worker, it crashed again" in result.stdout
    # The log heads each case's lines with its id: in the --jobs worker that ran the runtime
    # in-process (the case it died in by its call: that worker told no case id), and in the careful ones.
    log = (tmp_path / "report.stderr.log").read_text()
    assert (f"== worker process 1: case {EARLIER} ==\ncorrupting warns: a case with starts 1\n== worker process 1: runtime "
            f"call 3 of its 4 YAML cases from {EARLIER} (the worker died in it) ==\ncorrupting: a later case meets the "
            "corrupted heap\n") in log
    assert f": case {PANICKING} (its worker died in it) ==\nthread '<unnamed>' panicked at" in log


def test_the_log_heads_each_cases_lines_with_its_name_and_counts_only_what_workers_wrote(own_scratch):
    path = runtime_log.new_file()
    marks = runtime_log.CaseMarks(path)
    with open(path, "a") as stream:
        stream.write("loading warning\n")
        first = stream.tell()
        stream.write("first case says\nmore\n")
        second = stream.tell()
        stream.write("no newline at the end")
        third = stream.tell()
        stream.write("third\tcase\n")
    marks.mark(first, "case Op-1/a/float")
    marks.mark(second, "case Op-1/b/float [constant]")
    marks.mark(third, "case Op-1/c\nwith a newline")
    marks.close()
    log = own_scratch / "report.stderr.log"
    assert runtime_log.keep(log) == (5, 0)  # the headings are no lines a worker wrote
    assert log.read_text() == ("== worker process 1 ==\nloading warning\n"
                               "== worker process 1: case Op-1/a/float ==\nfirst case says\nmore\n"
                               "== worker process 1: case Op-1/b/float [constant] ==\nno newline at the end\n"
                               "== worker process 1: case Op-1/c\\nwith a newline ==\nthird\tcase\n")


def test_a_log_cut_in_the_middle_heads_its_tail_with_the_case_it_continues(own_scratch, monkeypatch):
    monkeypatch.setattr(runtime_log, "KEPT_HEAD", 20)
    monkeypatch.setattr(runtime_log, "KEPT_TAIL", 20)
    path = runtime_log.new_file()
    marks = runtime_log.CaseMarks(path)
    marks.mark(0, "first")
    marks.mark(9, "second")
    marks.close()
    with open(path, "w") as stream:
        stream.write("one line\n" + "x" * 100 + "\nlast words\n")
    text, dropped = runtime_log._head_and_tail(path, lambda label: f"-- {label} --")
    assert dropped == len("one line\n" + "x" * 100 + "\nlast words\n") - 40
    assert text.startswith("-- first --\none line\n-- second --\nxxxxxxxxxxx\n... 81 bytes dropped")
    assert text.endswith(" ...\n-- second (continued) --\nxxxxxxxx\nlast words\n")


def test_a_verdict_quotes_the_telling_line_once_before_the_last_lines(tmp_path, monkeypatch):
    log = tmp_path / "worker.txt"
    frames = [f"frame {n}" for n in range(30)]
    log.write_text("\n".join(["panicked at src/lib.rs:3:5:", "attempt to subtract with overflow", *frames]) + "\n")
    assert runtime_log.written_since(str(log), 0) == (
        "; its stderr, last: panicked at src/lib.rs:3:5: attempt to subtract with overflow | ... | "
        + " | ".join(frames[-runtime_log.LAST_LINES:]))
    # Among the last lines already: quoted once, in its place.
    log.write_text("terminate called after throwing an instance of 'std::bad_alloc'\nAborted\n")
    assert runtime_log.written_since(str(log), 0) == (
        "; its stderr, last: terminate called after throwing an instance of 'std::bad_alloc' | Aborted")
    # Right before the last lines, it is joined to them without a gap; with its message among
    # them, the message is not repeated.
    lines = ["Assertion `x' failed.", *frames[:runtime_log.LAST_LINES]]
    log.write_text("\n".join(lines) + "\n")
    assert runtime_log.written_since(str(log), 0) == "; its stderr, last: " + " | ".join(lines)
    log.write_text("\n".join(["panicked at src/lib.rs:3:5:", *frames[:runtime_log.LAST_LINES]]) + "\n")
    assert runtime_log.written_since(str(log), 0) == (
        "; its stderr, last: panicked at src/lib.rs:3:5: | " + " | ".join(frames[:runtime_log.LAST_LINES]))
    # No telling line: the last lines only, as before; and the whole stays within LAST_CHARACTERS.
    log.write_text("\n".join(frames) + "\n")
    assert runtime_log.written_since(str(log), 0) == "; its stderr, last: " + " | ".join(frames[-runtime_log.LAST_LINES:])
    log.write_text("Assertion failed\n" + "\n".join("y" * 400 for _ in range(20)) + "\n")
    quoted = runtime_log.written_since(str(log), 0)
    assert quoted.startswith("; its stderr, last: Assertion failed | ... | ...")
    assert len(quoted) == len("; its stderr, last: ...") + runtime_log.LAST_CHARACTERS


def test_a_worker_marks_a_case_when_the_next_begins_and_only_one_that_wrote(own_scratch):
    path = runtime_log.new_file()
    marks = runtime_log.CaseMarks(path)

    def case(name: str, writes: str) -> None:
        with open(path, "a") as stream:
            marks.began(stream.tell(), name)
            stream.write(writes)

    case("Op-1/a/float", "a writes\n")
    case("Op-1/quiet/float", "")
    case("Op-1/c/float", "c writes\n")
    marks.settle()  # the end of a task: no case follows the last one
    marks.close()
    log = own_scratch / "report.stderr.log"
    runtime_log.keep(log)
    assert log.read_text() == ("== worker process 1 ==\n== worker process 1: case Op-1/a/float ==\na writes\n"
                               "== worker process 1: case Op-1/c/float ==\nc writes\n")


@pytest.mark.parametrize("order", ["first", "second"])
def test_diff_keeps_the_forensics_of_a_crash_on_either_side(conform, tmp_path, order):
    crashing = ("--backend", "corrupting", "--against", "reference") if order == "first" else \
        ("--runner", "reference", "--against", "backend:corrupting")
    result = conform("diff", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", *crashing,
                     "--case", PANICKING, "--report-json", "diff.json")
    [record] = json.loads((tmp_path / "diff.json").read_text())["results"]
    crashed = record if order == "first" else record["against"]
    assert crashed["outcome"] == "crash" and crashed["crash"]["alone"] is True, record
    assert "crash" not in (record["against"] if order == "first" else record)
