"""Shared fixtures: a CLI runner that goes through `main` (so exit codes are the real ones)."""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import scratch

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = Path(__file__).resolve().parent / "backends"
# Slice-13 cases the crashy backend (tests/backends/crashy.py) treats apart from the rest.
CRASHING = "Slice-13/negative_start/float/int64"  # it segfaults on starts of -3
EXITING = "Slice-13/negative_start_beyond_dim/float/int64"  # ... and exits with code 7 on -100
PASSING = "Slice-13/negative_end/float/int64"


def without_timings(report: Path) -> str:
    """A JSON report's text without its timings: what two runs of the same cases must agree on."""
    return re.sub(r'"seconds": [0-9.e-]+', "", report.read_text())


def one_and_two_jobs_meeting_hangs(conform, args: tuple[str, ...], hangs: Path, folder: Path):
    """`conform ARGS` with --jobs 1, then --jobs 2, on the crashy backend that hangs on two cases
    (appending a line to `hangs` each time it does): each run meets both hangs exactly once, and
    the two reports (one.json, two.json in `folder`) agree apart from timings. The two runs' results."""
    serial = conform(*args, "--jobs", "1", "--report-json", str(folder / "one.json"))
    assert len(hangs.read_text().splitlines()) == 2
    hangs.unlink()
    parallel = conform(*args, "--jobs", "2", "--report-json", str(folder / "two.json"))
    assert len(hangs.read_text().splitlines()) == 2
    assert without_timings(folder / "one.json") == without_timings(folder / "two.json")
    return serial, parallel


def failing_starts(loads: Path, fault: str = "exit", times: int | None = None) -> dict[str, str]:
    """The environment that makes worker processes of the fails_starting backend fail to load it
    (`fault`: exit or hang), the first `times` of them (every one when None), each logging its
    load to `loads`."""
    env = {"CONFORM_TEST_STARTS": str(loads), "CONFORM_TEST_START_FAULT": fault}
    if times is not None:
        env["CONFORM_TEST_FAIL_TIMES"] = str(times)
    return env


@pytest.fixture(autouse=True, scope="session")
def _sigint_heard():
    """Tests interrupt runs with SIGINT, in this process and in the runs it starts. A job a shell
    starts in the background begins with SIGINT ignored, and its children inherit that: those
    tests would then wait on a run that never stops. Heard here, it is heard in every child too."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def with_test_backends() -> dict[str, str]:
    """This process's environment, with the deliberately broken backends of tests/backends importable."""
    return {**os.environ, "PYTHONPATH": f"{BACKENDS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


class Invoked:
    """A command run in this process (typer's CliRunner), ended as `main` ends it: a ConformError
    is its exit code and message (in `stderr`); `output` is all it wrote."""

    def __init__(self, *args: str) -> None:
        from typer.testing import CliRunner

        from conformance.cli import app
        from conformance.errors import ConformError

        result = CliRunner().invoke(app, list(args))
        error = result.exception if isinstance(result.exception, ConformError) else None
        if result.exception is not None and error is None and not isinstance(result.exception, SystemExit):
            raise result.exception
        self.code = error.exit_code if error else result.exit_code
        self.stdout = result.stdout
        self.stderr = result.stderr + (error.message if error else "")
        self.output = self.stdout + self.stderr


class CliResult:
    def __init__(self, completed: subprocess.CompletedProcess, report: Path | None) -> None:
        self.code = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.report_path = report
        # Read now: the next run in the same test may write the same path.
        self._report = json.loads(report.read_text()) if report is not None and report.exists() else None

    @property
    def report(self) -> dict:
        assert self._report is not None, f"no report was written (exit {self.code}): {self.stderr}"
        return self._report


@pytest.fixture
def own_scratch(tmp_path, monkeypatch):
    """For code that uses a command's scratch folder in this process (see conformance.scratch):
    the system's temporary folder as this test's own, and no scratch folder made yet."""
    monkeypatch.delenv(scratch.FOLDER_VARIABLE, raising=False)
    monkeypatch.setattr(scratch.tempfile, "tempdir", str(tmp_path))
    yield tmp_path
    scratch.discard()


@pytest.fixture
def conform(tmp_path):
    """Run `conform ARGS...` in a subprocess; the JSON report goes to tmp_path unless given."""

    def run(*args: str, report: bool = True, columns: str | None = "200", every_case: bool = True) -> CliResult:
        """`columns` None runs it as in a CI log: no COLUMNS, so rich takes 80 for what is not a terminal.
        `every_case`: a `run` records every case whole (--report-passes), so that a test can read
        any case's record; tests/test_ledger.py checks the default, counted report."""
        argv = list(args)
        path = None
        if report and argv and argv[0] == "run" and "--report-json" not in argv:
            path = tmp_path / "report.json"
            argv += ["--report-json", str(path)]
        if every_case and argv and argv[0] == "run" and "--report-passes" not in argv:
            argv.append("--report-passes")
        env = {key: value for key, value in with_test_backends().items() if key != "COLUMNS"}
        if columns is not None:
            env["COLUMNS"] = columns
        completed = subprocess.run(
            [sys.executable, "-m", "conformance", *argv], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600
        )
        return CliResult(completed, path)

    return run


# A case file of a user's own, with a case the wrong_slice backend gets wrong.
MY_SLICE_CASE = """op: Slice
cases:
  - name: my_reverse_to_the_front
    spec: a case of the user's own, which wrong_slice gets wrong (a negative end with a negative step)
    versions: [13]
    dtypes: [float]
    types: {Tind: [int64]}
    inputs: {data: [1, 2, 3, 4], starts: [-1], ends: [-5], axes: [0], steps: [-1]}
"""
MY_SLICE_CASE_ID = "Slice-13/my_reverse_to_the_front/float/int64"


def replayed(conform, record: dict):
    """The record's replay command, run as a user pastes it (from the same folder)."""
    words = shlex.split(record["replay"])
    assert words[0] == "conform", record["replay"]
    return conform(*words[1:])


@pytest.fixture
def conform_on_a_terminal(tmp_path):
    """Run `conform ARGS...` with stderr on a pseudo-terminal, as on a user's screen: the exit code
    and everything drawn there (progress bars are drawn only on a terminal)."""
    import pty

    def run(*args: str) -> tuple[int, str]:
        leader, follower = pty.openpty()
        process = subprocess.Popen([sys.executable, "-m", "conformance", *args], stdout=subprocess.DEVNULL,
                                   stderr=follower, cwd=tmp_path, env={**with_test_backends(), "COLUMNS": "120"})
        os.close(follower)
        drawn = []
        while True:
            if select.select([leader], [], [], 0.1)[0]:
                try:
                    chunk = os.read(leader, 1 << 16)
                except OSError:  # EIO: every process that held the terminal has ended
                    break
                if not chunk:
                    break
                drawn.append(chunk)
            elif process.poll() is not None:
                break
        os.close(leader)
        return Drawn(process.wait(timeout=600), b"".join(drawn).decode("utf-8", "replace"))

    return run


class Drawn:
    """What a command drew on a terminal, and its exit code."""

    def __init__(self, code: int, text: str) -> None:
        self.code = code
        self.text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)  # the drawing's control sequences

    def counts(self, label: str) -> list[tuple[int, str]]:
        """Each frame's count on the progress bar named `label`: done, and the total ('?': unknown)."""
        found = re.findall(re.escape(label) + r"[^\r\n]*? (\d+)/(\d+|\?) ", self.text)
        return [(int(done), total) for done, total in found]
