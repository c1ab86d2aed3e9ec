"""Commands run one after another in one process (CliRunner's in the tests, any in-process use of
the typer app), between library uses of runners and worker pools (the tests', the pytest
plugin's), do not leak into each other: each owns its worker processes, its scratch folder and the
stderr files its workers write, and leaves none of them behind however it ends.

The failure this guards against: `run --op Sign ... --jobs 1`, run in a pytest worker after a test
whose workers ran Slice-13 cases there, ended on "worker processes wrote 139 lines to stderr", a log
of those Slice-13 cases. The scratch folder was the process's, not the command's: whatever earlier
work in the process left in it (a library use, a command that ended in an error before gathering
its log) the next command gathered as its own."""

from __future__ import annotations

import multiprocessing.resource_tracker
import os
import re
import signal
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance import scratch
from conformance.cli import app
from conformance.execute import RunOptions, run_examples, select_examples
from conformance.lifetime import MEMORY_VARIABLE
from conformance.runners import RunnerSpec
from conformance.runners.isolated import IsolatedRunner
from conftest import BACKENDS

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="processes are found in /proc")

SLICE = ("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis")
# Slice-13 cases the chatty backend (tests/backends/chatty.py) runs, writing two lines each.
FIRST_CASES = ("Slice-13/omitted_steps/float/int64", "Slice-13/negative_axis/float/int64")
SECOND_CASE = "Slice-13/negative_end/float/int64"
NO_SUCH_CASE = "Slice-13/no_such_case/float/int64"
NOTE = re.compile(r"worker processes wrote ([\d,]+) lines? to stderr, kept in (\S+)")
HEADING = re.compile(r"^== worker process \d+: (.*) ==$", re.MULTILINE)
STATE_VARIABLES = (scratch.FOLDER_VARIABLE, scratch.HYPOTHESIS_VARIABLE, MEMORY_VARIABLE)


@pytest.fixture
def in_process(own_scratch, monkeypatch):
    """Commands run here, in a folder of their own whose temporary folder is theirs too, the test
    backends importable, and none of the variables a command sets left over from before."""
    monkeypatch.chdir(own_scratch)
    monkeypatch.syspath_prepend(str(BACKENDS))
    monkeypatch.delenv(MEMORY_VARIABLE, raising=False)
    # multiprocessing's one resource tracker per interpreter, which the first worker of the
    # process starts and which lives as long as the interpreter: no command's to end.
    multiprocessing.resource_tracker.ensure_running()
    return own_scratch


def invoked(*args: str):
    """`conform ARGS` in this process, as the tests run it."""
    return CliRunner().invoke(app, list(args))


def cases_args(*ids: str) -> list[str]:
    return [word for case in ids for word in ("--case", case)]


def kept_log(output: str) -> tuple[int, str] | None:
    """The lines the console's worker-stderr note counts, and the log it names; None without one."""
    found = NOTE.search(output)
    return None if found is None else (int(found[1].replace(",", "")), Path(found[2]).read_text())


def named_in(log: str) -> set[str]:
    """What the headings of a kept log name: 'case ID' for each case whose lines it holds."""
    return set(HEADING.findall(log))


def lines_written(log: str) -> int:
    """The lines of a kept log that workers wrote (its headings left out)."""
    return sum(1 for line in log.splitlines() if not line.startswith("== worker process "))


def living_descendants() -> dict[tuple[int, int], str]:
    """Every process this one started, and each of theirs, that has not ended (zombies left out):
    (pid, start time) to its command line."""
    children: dict[int, list[tuple[int, int, str]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
            command = Path("/proc", entry, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended while it was read
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append((int(entry), int(fields[19]), command))
    found, parents = {}, [os.getpid()]
    while parents:
        for pid, started, command in children.get(parents.pop(), []):
            found[(pid, started)] = command
            parents.append(pid)
    return found


def state() -> dict[str, object]:
    """What a command may set for itself and must give back: its environment variables, and the
    SIGINT handler (a backend runner hears Ctrl-C through conform's own)."""
    return {**{name: os.environ.get(name) for name in STATE_VARIABLES}, "SIGINT": signal.getsignal(signal.SIGINT)}


def scratch_folders(temporary: Path) -> list[str]:
    return sorted(path.name for path in temporary.glob(scratch.PREFIX + "*"))


def test_a_command_gathers_nothing_that_workers_of_earlier_work_in_this_process_wrote(in_process):
    # The reported failure: a library use of an isolated runner (as test_parallel's tests make)
    # ran Slice-13 cases on a runtime that writes to stderr; nothing gathers a library use's log.
    options = RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False, case_ids=FIRST_CASES)
    runner = IsolatedRunner(RunnerSpec(backend="chatty"))
    try:
        run_examples(select_examples(options), runner, options)
    finally:
        runner.close()
    result = invoked(*SLICE, *cases_args(SECOND_CASE), "--jobs", "1", "--report-json", "second.json")
    assert result.exit_code == 0, result.output[-2000:]
    assert kept_log(result.output) is None, f"the command gathered a log though its runtime wrote nothing:\n{result.output[-2000:]}"
    assert not Path("second.stderr.log").exists(), Path("second.stderr.log").read_text()[:2000]


def test_two_commands_one_after_another_keep_their_stderr_logs_apart(in_process):
    # The first ends in a usage error once its pool's workers ran its cases (a --case that names no
    # case is told after the others ran), gathering no log: the second gathered what they wrote.
    first = invoked(*SLICE, *cases_args(*FIRST_CASES, NO_SUCH_CASE), "--backend", "chatty", "--jobs", "2",
                    "--report-json", "first.json")
    assert "no case with id Slice-13/no_such_case" in str(first.exception), first.output[-2000:]
    second = invoked(*SLICE, *cases_args(SECOND_CASE), "--backend", "chatty", "--jobs", "1", "--report-json", "second.json")
    assert second.exit_code == 0, second.output[-2000:]
    kept = kept_log(second.output)
    assert kept is not None, f"the second command's workers wrote, and it kept no log:\n{second.output[-2000:]}"
    counted, log = kept
    assert second.output.rstrip().splitlines()[-1].startswith("worker processes wrote"), second.output[-2000:]
    assert named_in(log) == {f"case {SECOND_CASE}"}, f"the second command's log names other commands' cases:\n{log[:3000]}"
    assert counted == lines_written(log) == 2, f"the note counts {counted} lines, the log holds:\n{log[:3000]}"
    assert not Path("first.stderr.log").exists()


def interrupted_at_the_first_answer(monkeypatch) -> None:
    """Ctrl-C, as a user gives it, once the runtime's worker answered its first case."""
    answered = IsolatedRunner._answered

    def interrupting(self, case, logged):
        monkeypatch.setattr(IsolatedRunner, "_answered", answered)
        signal.raise_signal(signal.SIGINT)  # conform's handler raises KeyboardInterrupt here
        answered(self, case, logged)

    monkeypatch.setattr(IsolatedRunner, "_answered", interrupting)


def failing_at_the_first_answer(monkeypatch) -> None:
    """A bug of conform's own: an exception no command expects, raised amid the run."""

    def failing(self, case, logged):
        raise RuntimeError("a bug amid the run")

    monkeypatch.setattr(IsolatedRunner, "_answered", failing)


ENDINGS = {
    # how it ends: (its --jobs, the extra cases it is given, what is done to it, what tells it ended so)
    "finished": ("1", (), None, lambda result: result.exit_code == 0),
    "usage error": ("2", (NO_SUCH_CASE,), None, lambda result: "no case with id" in str(result.exception)),
    "interrupted": ("1", (), interrupted_at_the_first_answer, lambda result: result.exit_code == 130),
    "exception": ("1", (), failing_at_the_first_answer, lambda result: isinstance(result.exception, RuntimeError)),
}


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_once_a_command_ends_nothing_it_started_lives_and_its_scratch_folder_is_gone(in_process, monkeypatch, ending):
    jobs, extra, done_to_it, ended_so = ENDINGS[ending]
    if done_to_it is not None:
        done_to_it(monkeypatch)
    before, variables = living_descendants(), state()
    result = invoked(*SLICE, *cases_args(*FIRST_CASES, *extra), "--backend", "chatty", "--jobs", jobs, "--report-json", "r.json")
    assert ended_so(result), f"the command did not end as one {ending} does: {result.exception!r}\n{result.output[-2000:]}"
    # `result` holds the command's traceback, and so its frames and runners: what lives on does so
    # although the caller still holds all that, as a test (or a library user) does.
    left = {key: command for key, command in living_descendants().items() if key not in before}
    assert not left, f"processes the command started outlive it: {left}"
    assert scratch_folders(in_process) == [], f"the command's scratch folder outlives it in {in_process}"
    assert state() == variables, "the command left its environment variables or signal handler set for the next one"


def test_a_command_takes_away_what_it_put_in_a_folder_it_shares_with_its_process(in_process):
    # As in the `conform` process, whose folder __main__ makes before the command begins (with
    # hypothesis's storage in it), and which the command then uses: one folder, not two, for a
    # command killed outright to leave. What the command put there goes with it, however it ends.
    shared = Path(scratch.folder(scratch.HYPOTHESIS_KIND)).parent
    result = invoked(*SLICE, *cases_args(*FIRST_CASES, NO_SUCH_CASE), "--backend", "chatty", "--jobs", "2", "--report-json", "r.json")
    assert "no case with id" in str(result.exception), result.output[-2000:]
    assert sorted(os.listdir(shared)) == sorted([scratch.OWNER, scratch.HYPOTHESIS_KIND]), \
        f"the command left in its process's folder {shared} what its workers wrote"
    assert scratch_folders(in_process) == [shared.name]
