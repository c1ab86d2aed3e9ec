"""What a command writes, whatever ends it: once there are results, a signal at any moment (a
second one too) or an output that cannot be written loses neither them nor the other outputs;
and of scratch folders, a command uses and removes only the one it made."""

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance import execute, scratch
from conformance.cli import app
from conformance.errors import OutputError
from conformance.report import json_report, junit
from conftest import BACKENDS, with_test_backends
from test_reliability import conform_folders, wait_until_busy

CLIP = ("--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis")
# Ten Slice-13 cases of which one fails on onnxruntime (seed 0), so that one group is shrunk, in this process.
SHRUNK = ("--op", "Slice", "--opset", "13", "--dtype", "float", "--no-yaml", "--examples", "5", "--shrink", "1",
          "--jobs", "1", "--no-isolation")


@pytest.fixture
def temporary():
    """A temporary folder (TMPDIR) for the commands a test starts, to see what they leave in it;
    its path short, as a fork server's socket in it must fit in 108 bytes."""
    folder = tempfile.mkdtemp(prefix="t", dir="/tmp")
    yield Path(folder)
    shutil.rmtree(folder)


def started(folder: Path, temporary: Path, *args: str) -> subprocess.Popen:
    """`conform ARGS` started in `folder`, its temporary folder `temporary`."""
    return subprocess.Popen([sys.executable, "-m", "conformance", *args], cwd=folder,
                            env={**with_test_backends(), "TMPDIR": str(temporary)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def recorded_or_counted(doc: dict) -> int:
    """How many cases a JSON report holds: recorded whole, or counted in its tallies."""
    return len(doc["results"]) + sum(row["count"] for row in doc.get("tallies", []))


def invoked(*args: str):
    """`conform ARGS` in this process: its exit code, stdout and stderr."""
    return CliRunner().invoke(app, list(args))


def test_signals_while_the_report_is_written_lose_none_of_it(tmp_path, temporary):
    # The JSON report goes to a named pipe whose reader stops reading: the run is held in the
    # middle of writing it, and SIGINT, a second SIGINT and SIGTERM come then. Before, the first
    # ended the command there: half a report, no console report, exit 130.
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    process = started(tmp_path, temporary, "run", *CLIP, "--report-json", str(fifo))
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        import fcntl

        fcntl.fcntl(reader, fcntl.F_SETPIPE_SZ, 4096)  # the report, ~30 KB, fills it many times over
        while not select.select([reader], [], [], 0.1)[0]:
            assert process.poll() is None, process.communicate()[1]
        text = os.read(reader, 1)
        for stop in (signal.SIGINT, signal.SIGINT, signal.SIGTERM):
            process.send_signal(stop)
            time.sleep(0.1)
        os.set_blocking(reader, True)
        while chunk := os.read(reader, 1 << 16):
            text += chunk
    finally:
        os.close(reader)
    stdout, stderr = process.communicate(timeout=120)
    doc = json.loads(text)
    cases = doc["summary"]["total"]
    assert process.returncode == 130 and "Traceback" not in stderr, stderr
    assert doc["complete"] is True and recorded_or_counted(doc) == cases > 0  # every case had run
    assert f"{cases} cases:" in stdout  # the console report
    assert f"interrupted once all {cases} cases had finished: the reports were written whole" in stderr
    assert conform_folders(temporary) == []


def test_sigterm_before_the_work_begins_ends_the_command_as_ctrl_c_does(tmp_path, temporary):
    # The backend is imported in the command's own process before any case runs, its scratch
    # folder and fork server made by then. SIGTERM there killed the command, which left both.
    process = started(tmp_path, temporary, "run", *CLIP, "--backend", "slow_import", "--report-json", "r.json")
    wait_until_busy(process, tmp_path, "backend-importing")
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and "Traceback" not in stderr, stderr
    assert conform_folders(temporary) == []


def test_sigterm_while_shrinking_then_sigint_while_reporting_keep_every_result(tmp_path, monkeypatch):
    shrinking = []

    def interrupted_shrink(*args, **kwargs):
        shrinking.append(args)
        signal.raise_signal(signal.SIGTERM)  # the handler runs here, and raises here

    real_write = json_report.write

    def write_interrupted(path, doc, lines=None):
        signal.raise_signal(signal.SIGINT)
        real_write(path, doc, lines)

    monkeypatch.setattr(execute, "minimal_case", interrupted_shrink)
    monkeypatch.setattr(json_report, "write", write_interrupted)
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    result = invoked("run", *SHRUNK, "--report-json", str(tmp_path / "r.json"))
    doc = json.loads((tmp_path / "r.json").read_text())
    assert result.exit_code == 130 and shrinking
    assert doc["complete"] is False and doc["summary"]["total"] == recorded_or_counted(doc) == 10 and doc["summary"]["fail"]
    assert not any("minimal" in r for r in doc["results"])
    assert "interrupted: the report holds the 10 cases finished so far (complete: false)" in result.stderr
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers  # given back


def test_a_shrunk_case_that_cannot_be_written_loses_no_result(tmp_path):
    # As a folder made read-only during the run: a file where the shrunk cases go.
    (tmp_path / "minimal").write_text("")
    result = invoked("run", *SHRUNK, "--report-json", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html"))
    doc = json.loads((tmp_path / "r.json").read_text())
    [minimal] = [r["minimal"] for r in doc["results"] if "minimal" in r]
    unsaved = f"cannot write the shrunk case file {tmp_path / 'minimal'}/onnxruntime-cpu/input/shrunk_"
    assert result.exit_code == 4 and doc["complete"] is True and (tmp_path / "r.html").is_file()
    assert minimal["unsaved"].startswith(unsaved) and "file" not in minimal and "replay" not in minimal
    assert "shrunk_" in minimal["yaml"]  # the case itself is in the report
    assert f"error: {unsaved}" in result.stderr and f"{doc['summary']['total']} cases:" in result.stdout
    assert f"not saved: {unsaved}" in result.stdout


def test_a_report_that_cannot_be_written_leaves_the_others_written(tmp_path, monkeypatch):
    def read_only(path, doc, strict=False):
        raise OutputError(f"cannot write the JUnit report {path}: Read-only file system")

    monkeypatch.setattr(junit, "write", read_only)
    paths = {suffix: tmp_path / f"r.{suffix}" for suffix in ("json", "xml", "html")}
    result = invoked("run", *CLIP, "--no-isolation", "--report-json", str(paths["json"]), "--junit", str(paths["xml"]),
                     "--html", str(paths["html"]))
    doc = json.loads(paths["json"].read_text())
    assert result.exit_code == 4 and doc["complete"] is True and paths["html"].is_file() and not paths["xml"].exists()
    assert f"error: cannot write the JUnit report {paths['xml']}: Read-only file system" in result.stderr
    assert f"{doc['summary']['total']} cases:" in result.stdout and "HTML report: " in result.stdout
    assert "JUnit report: " not in result.stdout


def test_a_scratch_variable_naming_a_folder_conform_did_not_make_is_neither_used_nor_removed(own_scratch, monkeypatch):
    mine = own_scratch / "mine"
    (mine / "stderr").mkdir(parents=True)
    (mine / "stderr" / "notes.txt").write_text("mine")
    monkeypatch.setenv(scratch.FOLDER_VARIABLE, str(mine))
    assert scratch.existing("stderr") is None  # the workers' log would have been gathered from it, and it removed
    made = Path(scratch.folder("stderr")).parent
    assert made != mine and (made / scratch.OWNER).is_file()
    scratch.discard()
    assert not made.exists() and (mine / "stderr" / "notes.txt").read_text() == "mine"


def test_a_worker_writes_in_its_commands_folder_and_removes_it_not(own_scratch, monkeypatch):
    # As a worker process finds its command's folder: named in the environment, made (and
    # marked) by another process.
    command = own_scratch / "conform-command"
    command.mkdir()
    (command / scratch.OWNER).write_text("")
    monkeypatch.setenv(scratch.FOLDER_VARIABLE, str(command))
    assert Path(scratch.folder("stderr")).parent == command
    scratch.discard()
    assert command.is_dir() and os.environ[scratch.FOLDER_VARIABLE] == str(command)


@pytest.mark.skipif(scratch.fcntl is None, reason="no file locks on this system: nothing is swept")
def test_a_folder_whose_owner_file_is_a_link_is_not_swept(own_scratch):
    unlocked = own_scratch / "unlocked"
    unlocked.write_text("")
    linked = own_scratch / "conform-linked"
    linked.mkdir()
    (linked / scratch.OWNER).symlink_to(unlocked)
    scratch.remove_abandoned()
    assert linked.is_dir()


def test_a_command_leaves_the_scratch_folder_it_inherits_with_hypothesis_storage_in_it(monkeypatch):
    inherited = os.path.join("/tmp", "conform-parent")
    monkeypatch.setenv(scratch.FOLDER_VARIABLE, inherited)
    monkeypatch.setenv(scratch.HYPOTHESIS_VARIABLE, os.path.join(inherited, "hypothesis"))
    scratch.forget_inherited()
    assert scratch.FOLDER_VARIABLE not in os.environ and scratch.HYPOTHESIS_VARIABLE not in os.environ
    monkeypatch.setenv(scratch.FOLDER_VARIABLE, inherited)
    monkeypatch.setenv(scratch.HYPOTHESIS_VARIABLE, "/home/me/hypothesis")  # the user's own
    scratch.forget_inherited()
    assert os.environ[scratch.HYPOTHESIS_VARIABLE] == "/home/me/hypothesis"


def test_conform_list_leaves_a_folder_the_scratch_variable_names(conform, tmp_path, monkeypatch):
    # It removed it, and everything in it.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    monkeypatch.setenv(scratch.FOLDER_VARIABLE, str(mine))
    assert conform("list").code == 0
    assert (mine / "notes.txt").read_text() == "mine"


def test_a_conform_a_worker_starts_makes_its_own_scratch_folder_and_leaves_its_parents(conform, own_scratch, temporary,
                                                                                       monkeypatch):
    # A backend that runs `conform` in a worker passes on the worker's environment, which names
    # the command's scratch folder: the inner command used it, and removed it on its way out.
    monkeypatch.setenv(scratch.HYPOTHESIS_VARIABLE, scratch.folder("hypothesis"))  # as the outer command's workers inherit
    parent = Path(os.environ[scratch.FOLDER_VARIABLE])
    before = sorted(p.name for p in parent.iterdir())
    monkeypatch.setenv("TMPDIR", str(temporary))
    result = conform("run", *CLIP)
    assert result.code == 0, result.stderr
    assert sorted(p.name for p in parent.iterdir()) == before
    assert conform_folders(temporary) == []  # its own, made and removed
