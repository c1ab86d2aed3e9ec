"""Worker processes: forked from a clean fork server in the main process, spawned below it (unless a
worker has a server of its own), given the environment of the moment, and gone when the process
that asked for them is gone."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import BACKENDS, with_test_backends
from conformance.lifetime import start_method, start_server, start_worker
from conformance.reference import covered_ops

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture
def probes(monkeypatch):
    monkeypatch.syspath_prepend(str(BACKENDS))
    import worker_probes

    return worker_probes


def found_by_a_worker(probes, probe: str = "what_it_found") -> dict:
    process, connection = start_worker(getattr(probes, probe), ())
    try:
        assert connection.poll(60), "the worker never answered"
        return connection.recv()
    finally:
        process.join(10)
        connection.close()


@pytest.mark.skipif(start_method() != "forkserver", reason="this platform has no fork server: workers are spawned")
def test_workers_come_from_a_server_that_has_imported_everything_but_onnxruntime(probes):
    found = found_by_a_worker(probes)
    # What makes a worker fast to start: the heavy imports are done before the fork ...
    assert found["preloaded"]
    # ... and what makes the fork safe: onnxruntime, whose import starts a thread, is not among them.
    assert not found["onnxruntime loaded"]
    # What it came with is never walked by its cycle collections (nor copied from the server by them).
    assert found["objects left out of cycle collections"] > 10_000


def test_every_command_that_takes_jobs_starts_the_fork_server_first_thing():
    # Its imports then run beside the command's own, and the first worker does not wait for them.
    import typer.main

    from conformance.__main__ import WORKER_COMMANDS
    from conformance.cli import app

    commands = typer.main.get_command(app).commands
    taking_jobs = {name for name, command in commands.items() if any(p.name == "jobs" for p in command.params)}
    assert {"run", "verify", "generate"} <= taking_jobs <= set(WORKER_COMMANDS)


def test_the_command_leaves_what_it_imported_out_of_cycle_collections(monkeypatch):
    import gc

    from conformance import cli

    frozen = []
    monkeypatch.setattr(cli, "app", lambda: frozen.append(gc.get_freeze_count()))
    try:
        cli.main()
    finally:
        gc.unfreeze()
    assert frozen[0] > 10_000


@linux_only
@pytest.mark.skipif(start_method() != "forkserver", reason="this platform has no fork server: workers are spawned")
def test_the_fork_server_has_no_thread_to_leave_a_lock_held(probes):
    found = found_by_a_worker(probes)
    # onnxruntime, say, would leave one (numpy's OpenBLAS stops its own before a fork).
    assert found["threads of the process it was forked from"] == 1
    native, python = found["its threads, native vs python"]
    assert native == python, "a thread started outside Python came with the fork or the start-up"


def test_a_worker_has_the_environment_of_the_moment_it_was_asked_for(probes, monkeypatch):
    start_server()  # the server's environment is older than the variable
    monkeypatch.setenv("CONFORM_TEST_MARK", "set after the server started")
    assert found_by_a_worker(probes)["mark"] == "set after the server started"


def test_a_workers_own_workers_are_spawned(probes):
    # The fork server answers only the process that started it.
    assert found_by_a_worker(probes)["start method of its own workers"] == "spawn"


@pytest.mark.skipif(start_method() != "forkserver", reason="this platform has no fork server: workers are spawned")
def test_a_worker_with_a_server_of_its_own_forks_its_workers_from_it(probes):
    # A careful --jobs worker restarts its runtime worker after every crash: forked from a
    # preloaded server of its own, not spawned (which imports everything again, ~0.5 s).
    found = found_by_a_worker(probes, "with_a_server_of_its_own")
    assert found["preloaded"] and not found["onnxruntime loaded"]
    assert found["start method of its own workers"] == "spawn"  # one level down, no server again


@linux_only
@pytest.mark.skipif(start_method() != "forkserver", reason="this platform has no fork server: workers are spawned")
def test_the_workers_of_a_worker_with_a_server_of_its_own_die_with_it(probes):
    process, connection = start_worker(probes.with_a_server_of_its_own_then_stay, ())
    try:
        assert connection.poll(60), "the worker never answered"
        inner = connection.recv()
        assert not _gone(inner)
        process.kill()
        process.join(10)
        assert _gone_within(10, inner), f"worker {inner} outlived the worker that started it"
    finally:
        process.kill()
        connection.close()


def _gone_within(seconds: float, pid: int) -> bool:
    deadline = time.monotonic() + seconds
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _gone(pid)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            return any(line.split()[:2] == ["State:", "Z"] for line in status)  # dead, not yet reaped
    except FileNotFoundError:
        return True


REQUESTER = """
import sys, time
from conformance.lifetime import start_worker
import worker_probes
if __name__ == "__main__":
    process, connection = start_worker(worker_probes.stay, ())
    print(connection.recv(), flush=True)
    time.sleep(120)
"""


@linux_only
def test_a_worker_dies_with_the_process_that_asked_for_it_whoever_forked_it(tmp_path):
    # The worker's parent is the fork server, not the requester; killed with SIGKILL, the requester
    # has no chance to stop it. Before, a worker outlived a killed run until its case ended.
    requester = subprocess.Popen([sys.executable, "-c", REQUESTER], stdout=subprocess.PIPE, text=True,
                                 env={**with_test_backends(), "TMPDIR": str(tmp_path)})  # the server's socket, left behind
    try:
        worker = int(requester.stdout.readline())
        assert not _gone(worker)
        requester.send_signal(signal.SIGKILL)
        requester.wait(10)
        assert _gone_within(10, worker), f"worker {worker} outlived the process that started it"
    finally:
        requester.kill()
        requester.stdout.close()


def test_without_a_fork_server_workers_are_spawned_and_still_start(probes, monkeypatch):
    import multiprocessing.forkserver

    from conformance import lifetime

    def no_socket():
        raise OSError(36, "File name too long")

    monkeypatch.setattr(lifetime._Server, "failed", False)
    monkeypatch.setattr(multiprocessing.forkserver, "ensure_running", no_socket)
    found = found_by_a_worker(probes)
    assert start_method() == "spawn"
    # A spawned worker imports only what it runs: nothing was preloaded for it.
    assert not found["preloaded"] and found["start method of its own workers"] == "spawn"


@pytest.mark.parametrize("args", [
    ("run", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis"),
    ("run", "--op", "NoSuchOp"),  # an error, after the fork server started
    # A --jobs worker the crash makes careful starts a fork server of its own, its socket in the
    # main process's folder: removed once, by the main process, after every worker is gone.
    ("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--backend", "crashy", "--jobs", "2"),
])
def test_a_command_leaves_nothing_in_the_temporary_folder(conform, monkeypatch, args):
    # The command ends without the interpreter's tear-down, which removed multiprocessing's
    # folder for the fork server's socket (/tmp/pymp-*): every command left one behind.
    folder = tempfile.mkdtemp(prefix="t", dir="/tmp")  # short: a socket's path must fit in 108 bytes
    monkeypatch.setenv("TMPDIR", folder)  # the command's environment (see conftest's `conform`)
    try:
        result = conform(*args)
        assert "Traceback" not in result.stderr and result.code in (0, 1, 2), result.stderr
        # onnxruntime keeps one file there, .ses, the same one for every process.
        assert [name for name in os.listdir(folder) if name != ".ses"] == []
    finally:
        shutil.rmtree(folder)


def test_the_fork_server_readies_only_the_ops_a_command_names(monkeypatch):
    # Readying all 166 ops took the server ~1 s of CPU at every `conform run --op Slice`.
    from conformance.__main__ import ops_named
    from conformance.lifetime import PRELOAD_OPS_VARIABLE

    assert ops_named(["--op", "Slice", "--opset", "13", "--op=Clip", "--case", "x"]) == ["Clip", "Slice"]
    assert ops_named(["--all", "--opset", "13"]) == [] and ops_named(["--from", "golden"]) == []
    monkeypatch.setenv(PRELOAD_OPS_VARIABLE, "Slice,Clip")
    import conformance.preload as preload

    assert preload._ops_to_ready() == ["Slice", "Clip"]
    monkeypatch.setenv(PRELOAD_OPS_VARIABLE, "")
    assert preload._ops_to_ready() == covered_ops()
