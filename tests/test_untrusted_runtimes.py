"""Runtimes that misbehave: an answer that is no outputs, an exception that would end the process,
a flood of stderr, children left running, a leak; each costs its case, never the run."""

import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conformance import lifetime, runtime_log, scratch
from conformance.execute import RunOptions, run_examples, select_examples
from conformance.report import json_report
from conformance.runners import make_runner
from conformance.runners.base import checked_outputs, first_line
from conftest import BACKENDS, CRASHING, PASSING

OPTIONS = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False, case_ids=(CRASHING, PASSING))


@pytest.fixture
def misbehaving(monkeypatch):
    """`misbehaving(FAULT, isolate)`: the misbehaving backend's runner, doing FAULT on the CRASHING
    case (see tests/backends/misbehaving.py); closed after the test."""
    monkeypatch.syspath_prepend(str(BACKENDS))
    made = []

    def runner(fault: str, isolate: bool = False, timeout: float = 30, **environment: str):
        monkeypatch.setenv("CONFORM_TEST_MISBEHAVE", fault)
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        made.append(make_runner(backend="misbehaving", isolate=isolate, timeout=timeout))
        return made[-1]

    yield runner
    for runner in made:
        if hasattr(runner, "close"):
            runner.close()


def run_crashing_then_passing(runner) -> list[tuple[str, str]]:
    """The CRASHING case, then the PASSING one, on `runner`: each one's outcome and message, once
    the JSON report of both was made (a malformed answer once ended the command there)."""
    by_id = {example.id: example for example in select_examples(OPTIONS)}
    results = run_examples([by_id[CRASHING], by_id[PASSING]], runner, OPTIONS)
    json_report.dumps(json_report.document(results, runner.describe(), None, {}))
    return [(result.outcome, result.verdict.message) for result in results]


@pytest.mark.parametrize("fault, message", [
    ("none", "the backend returned None, not a list of arrays"),
    ("none-output", "the backend's output 0 is None, not an array"),
    ("object-output", "the backend's output 0 is a value of type object, not an array"),
    ("dict", "the backend returned a value of type dict, not a list of arrays"),
    ("object-array", "the backend's output 0 is an array of Python objects (a value of type object among them), "
                     "where only a string tensor's holds objects: str"),
    ("one-more", "the backend returned 2 outputs; the model has 1"),
])
def test_an_answer_that_is_no_outputs_fails_its_case_saying_what_came_back(misbehaving, fault, message):
    assert run_crashing_then_passing(misbehaving(fault)) == [("fail", message), ("pass", "outputs match")]


def test_a_malformed_answer_from_a_worker_process_is_the_same_fail_not_a_crash(misbehaving):
    # Returning None made the worker die in a TypeError: "exited with code 1".
    assert run_crashing_then_passing(misbehaving("none", isolate=True)) == [
        ("fail", "the backend returned None, not a list of arrays"), ("pass", "outputs match")]


def test_what_numpy_makes_a_tensor_of_is_taken_as_that_tensor():
    strings = np.array(["a", "bc"], dtype=object)
    big_endian = np.arange(3, dtype=">f4")
    checked = checked_outputs((strings, ["x", "y"], big_endian, 7, [[1.5]]), 5)
    assert checked.fault is None and checked.error is None
    assert [a.dtype for a in checked.outputs] == [np.dtype(object), np.dtype(object), np.dtype("float32"),
                                                  np.dtype("int64"), np.dtype("float64")]
    assert checked.outputs[1].tolist() == ["x", "y"] and checked.outputs[2].tolist() == [0.0, 1.0, 2.0]
    assert checked_outputs([np.zeros(2, "datetime64[s]")], 1).error == (
        "the runtime's output 0 is an array of numpy's datetime64[s], which is no tensor type")
    assert checked_outputs([[[1], [1, 2]]], 1).error.startswith(
        "the runtime's output 0 is a value of type list, which numpy makes no array of (")


@pytest.mark.parametrize("fault, raised", [("system-exit", "SystemExit(0)"), ("keyboard-interrupt", "KeyboardInterrupt()"),
                                           ("generator-exit", "GeneratorExit()")])
def test_what_would_end_the_process_is_a_crash_of_its_case_in_process_too(misbehaving, fault, raised):
    # With --no-isolation, SystemExit(0) ended conform with exit 0 and no report, and the backend's
    # own KeyboardInterrupt read as a Ctrl-C: a report of 0 cases.
    assert run_crashing_then_passing(misbehaving(fault)) == [
        ("crash", f"the runtime raised {raised}, which would end the process running it"), ("pass", "outputs match")]


@pytest.mark.parametrize("isolate", [False, True])
@pytest.mark.parametrize("fault, outcome, message", [
    ("exit-when-read", "fail", "runtime rejected a valid input: Unreadable (reading it raised SystemExit)"),
    ("interrupt-when-read", "fail", "runtime rejected a valid input: Unreadable (reading it raised KeyboardInterrupt)"),
    ("error-when-read", "fail", "runtime rejected a valid input: Unreadable (reading it raised RuntimeError)"),
    ("length-exits", "crash", "the backend's answer (a value of type Unmeasurable) raised SystemExit when read, "
                              "which would end the process reading it"),
    ("length-fails", "fail", "the backend returned a value of type Unmeasurable, which raised RuntimeError when read"),
])
def test_what_raises_when_conform_reads_it_is_its_cases_result(misbehaving, isolate, fault, outcome, message):
    # An exception whose __str__ raised SystemExit(0), read for the verdict, ended conform with
    # exit 0 and no report under --no-isolation; a RuntimeError there was a traceback.
    assert run_crashing_then_passing(misbehaving(fault, isolate=isolate)) == [(outcome, message), ("pass", "outputs match")]


def test_a_backend_whose_prepare_raises_system_exit_crashes_each_case_and_is_asked_again(misbehaving):
    crash = ("crash", "the runtime raised SystemExit(3), which would end the process running it")
    assert run_crashing_then_passing(misbehaving("prepare-system-exit")) == [crash, crash]


def test_a_system_exit_in_a_worker_process_reads_as_what_it_is_and_the_worker_is_replaced(misbehaving):
    # It read as "the runtime's worker process died: exited with code 0".
    runner = misbehaving("system-exit", isolate=True)
    assert run_crashing_then_passing(runner) == [
        ("crash", "the runtime raised SystemExit(0), which would end the process running it"), ("pass", "outputs match")]
    assert runner.restarts == 1


@pytest.mark.parametrize("fault", ["sigint", "sigint-swallowed"])
def test_a_ctrl_c_to_conform_still_interrupts_a_run_in_process(misbehaving, fault):
    # A SIGINT while the runtime runs in this process is conform's to act on, whatever the runtime
    # makes of the KeyboardInterrupt it raises there: let through, or caught and answered.
    runner = misbehaving(fault)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_crashing_then_passing(runner)
    assert time.monotonic() - started < 4  # not after the backend's sleep


def test_a_worker_drops_the_middle_of_a_stderr_flood_and_the_log_says_how_much(tmp_path, monkeypatch):
    monkeypatch.setattr(runtime_log._Bound, "dropped_to", runtime_log.KEPT_HEAD)
    monkeypatch.setattr(runtime_log._Bound, "can_drop", True)
    path = tmp_path / "worker.txt"
    written = b"".join(b"line %07d\n" % n for n in range(300_000))  # 3.6 MB
    path.write_bytes(written)
    with open(path, "rb+") as stream:
        runtime_log.drop_middle(stream.fileno(), len(written))
    if not runtime_log._Bound.can_drop:
        pytest.skip("this file system cannot punch holes")
    found = os.stat(path)
    assert found.st_size == len(written)  # every offset into the file still good
    assert found.st_blocks * 512 < runtime_log.KEPT_HEAD + runtime_log.KEPT_TAIL + 2 * runtime_log.DROP_STEP
    head, tail = written[:runtime_log.KEPT_HEAD], written[-runtime_log.KEPT_TAIL:]
    assert path.read_bytes().startswith(head) and path.read_bytes().endswith(tail)
    dropped = len(written) - len(head) - len(tail)
    assert runtime_log._head_and_tail(path) == (
        f"{head.decode()}\n... {dropped:,} bytes dropped: this worker wrote {len(written):,}, of which the log keeps the "
        f"first {len(head):,} and the last {len(tail):,} ...\n{tail.decode()}", dropped)


def test_a_flood_of_stderr_is_bounded_on_disk_and_in_the_log_and_the_crash_quotes_its_end(misbehaving, own_scratch):
    runner = misbehaving("flood", isolate=True, CONFORM_TEST_FLOOD_BYTES="4000000")
    by_id = {example.id: example for example in select_examples(OPTIONS)}
    results = run_examples([by_id[PASSING], by_id[PASSING], by_id[CRASHING]], runner, OPTIONS)
    assert [r.outcome for r in results] == ["pass", "pass", "crash"]
    assert results[2].verdict.message.endswith("misbehaving: flood ends")
    assert "misbehaving floods: line 39" in results[2].verdict.message  # the last lines, from the tail
    folder = Path(scratch.existing(runtime_log.KIND))
    sizes = sorted(size for file in folder.iterdir() if not file.name.endswith(runtime_log.MARKS)
                   and (size := os.stat(file).st_size))  # a spare worker, which ran nothing, wrote nothing
    flooded = max((os.stat(file) for file in folder.iterdir()), key=lambda found: found.st_size)  # the worker that crashed
    on_disk, length = flooded.st_blocks * 512, flooded.st_size
    assert length > 12_000_000 and on_disk < 7_000_000  # the two answered floods dropped, at least
    # The crashed case was run again alone, in a second worker that flooded once and crashed again.
    assert len(sizes) == 2 and 4_000_000 < sizes[0] < 5_000_000
    log = own_scratch / "report.stderr.log"
    lines, dropped = runtime_log.keep(log)
    assert len(log.read_bytes()) < 2 * 2 * (runtime_log.KEPT_HEAD + runtime_log.KEPT_TAIL)
    kept = runtime_log.KEPT_HEAD + runtime_log.KEPT_TAIL
    assert dropped == length - kept + sizes[0] - kept and length - kept > 11_000_000
    assert f"... {length - kept:,} bytes dropped: this worker wrote {length:,}, " in log.read_text()


def dead(pid: int) -> bool:
    """Whether the process has ended (a zombie no one has waited for has)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_what_a_runtime_started_dies_with_its_worker_killed_or_closed(misbehaving, tmp_path):
    child = tmp_path / "child.txt"
    runner = misbehaving("spawn-hang", isolate=True, timeout=1, CONFORM_TEST_CHILD=str(child))
    assert [outcome for outcome, _ in run_crashing_then_passing(runner)] == ["timeout", "pass"]
    assert dead(int(child.read_text()))
    runner = misbehaving("spawn", isolate=True, CONFORM_TEST_CHILD=str(child))
    assert [outcome for outcome, _ in run_crashing_then_passing(runner)] == ["pass", "pass"]
    alive = int(child.read_text())
    assert not dead_now(alive)
    runner.close()
    assert dead(alive)


def dead_now(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_what_a_runtime_started_in_a_jobs_worker_dies_with_it(monkeypatch, tmp_path):
    from conformance.execute import plan
    from conformance.parallel import run_parallel
    from conformance.runners import RunnerSpec

    monkeypatch.syspath_prepend(str(BACKENDS))
    monkeypatch.setenv("CONFORM_TEST_MISBEHAVE", "spawn")
    monkeypatch.setenv("CONFORM_TEST_CHILD", str(tmp_path / "child.txt"))
    results = run_parallel(plan(OPTIONS), OPTIONS, RunnerSpec(backend="misbehaving"), 1, isolate=True)
    assert [r.outcome for r in results] == ["pass", "pass"]
    assert dead(int((tmp_path / "child.txt").read_text()))


def test_a_leak_past_the_memory_limit_is_a_crash_naming_the_option_and_the_run_goes_on(misbehaving, monkeypatch):
    runner = misbehaving("leak", isolate=True, CONFORM_TEST_LEAK_MB="1024")
    monkeypatch.setenv(lifetime.MEMORY_VARIABLE, "600")
    assert run_crashing_then_passing(runner) == [
        ("crash", "the runtime ran out of memory: Unable to allocate 1.00 GiB for an array with shape (1073741824,) and "
                  "data type uint8; its worker process may use at most 600 MiB (--memory-limit)"),
        ("pass", "outputs match")]
    assert runner.restarts == 1  # a fresh worker, without the leak, runs the rest


def test_a_worker_that_died_short_of_memory_says_it_may_have_reached_its_limit(monkeypatch):
    monkeypatch.setenv(lifetime.MEMORY_VARIABLE, "2048")
    last_words = "; its stderr, last: terminate called after throwing an instance of 'std::bad_alloc'"
    assert lifetime.died_of_memory_note(last_words) == "; it may have reached its memory limit of 2,048 MiB (--memory-limit)"
    assert lifetime.died_of_memory_note("; its stderr, last: Segmentation fault") == ""
    monkeypatch.setenv(lifetime.MEMORY_VARIABLE, "0")
    assert lifetime.died_of_memory_note(last_words) == ""


def test_the_default_memory_limit_is_half_the_machine_and_at_least_enough_for_a_whole_run(monkeypatch):
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert lifetime.default_memory_limit() == max(memory // 2 >> 20, lifetime.SMALLEST_DEFAULT_LIMIT)
    monkeypatch.delenv(lifetime.MEMORY_VARIABLE, raising=False)
    lifetime.limit_worker_memory(None)
    assert os.environ[lifetime.MEMORY_VARIABLE] == str(lifetime.default_memory_limit())
    assert lifetime.limit_memory("0") is None and lifetime.limit_memory(None) is None


def test_memory_limit_on_the_command_line(conform, monkeypatch):
    monkeypatch.setenv("CONFORM_TEST_MISBEHAVE", "leak")
    result = conform("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "misbehaving",
                     "--case", CRASHING, "--case", PASSING, "--memory-limit", "600", "--jobs", "1")
    assert result.code == 1, result.stderr
    assert [(r["outcome"], r["message"]) for r in result.report["results"]] == [
        ("crash", "the runtime ran out of memory: Unable to allocate 1.00 GiB for an array with shape (1073741824,) and "
                  "data type uint8; its worker process may use at most 600 MiB (--memory-limit)"),
        ("pass", "outputs match")]


def test_a_runtimes_message_reaches_the_console_with_its_control_characters_escaped():
    # "\x1b[2J\x1b]0;pwned\x07" cleared the screen and set the terminal's title; backspaces wrote
    # over what came before.
    error = RuntimeError("\x1b[2J\x1b]0;pwned\x07bad input\x08\x08 PASS\tok")
    assert first_line(error) == "\\x1b[2J\\x1b]0;pwned\\x07bad input\\x08\\x08 PASS\tok"
    assert runtime_log._readable(b"abort\x1b]0;t\x07\n\x1b[31mred\x1b[0m\n") == "abort\\x1b]0;t\\x07\nred\n"
