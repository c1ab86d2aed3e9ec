"""The life of a worker process: how it starts, how it serves its parent, and that it never
outlives the process that asked for it.

Start: the main process's workers (the isolated runtime's, `--jobs`') are forked from a fork
server, a process started once that has imported what every worker needs (numpy, onnx,
hypothesis, conform) and nothing that starts a thread: onnxruntime's import does, and a fork of a
threaded process may deadlock, so each worker imports onnxruntime itself after the fork (numpy's
OpenBLAS threads are safe: OpenBLAS stops them before a fork and starts them again when needed). A worker
is then ready in ~0.1 s instead of the ~0.5 s a spawned interpreter spends importing. A worker's
own workers are spawned, as the server answers only the process that started it, unless the
worker starts a server of its own (`start_own_server`: a careful `--jobs` worker, which restarts its
runtime worker after every crash). Where there is no fork server (Windows), every worker is spawned.

End: a worker watches its parent's sentinel from a thread and exits when the parent is gone,
whoever forked it; the thread runs whenever the runtime lets go of the GIL, as onnxruntime does
while it runs a session. On Linux a worker also asks the kernel for SIGKILL when the process it
was forked from dies (`PR_SET_PDEATHSIG`): for a spawned worker that is the requester, and the
kill comes even while native code holds the GIL; a forked worker's is the server, which outlives
its workers.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import multiprocessing.forkserver
import multiprocessing.util
import os
import pickle
import shutil
import signal
import sys
import threading
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, Callable, NamedTuple

from . import scratch
from .errors import UnavailableError
from .runtime_log import new_file, redirect_output

_PR_SET_PDEATHSIG = 1

# What the fork server imports before it forks anything: what the workers run, minus onnxruntime.
# Hypothesis is named: conform imports it only where cases are drawn (see `strategies`).
SERVER_PRELOAD = ["conformance.parallel", "conformance.runners.isolated", "conformance.runners.onnxruntime", "hypothesis"]


class _Server:
    """Whether this process's fork server could not be started (then its workers are spawned), and
    whether this worker process has one of its own."""

    failed = False
    own = False
    folder: str | None = None  # the folder multiprocessing made for the server's socket, in the main process


def start_method() -> str:
    """'forkserver' in the main process (or a worker with a server of its own) where the platform
    has one that starts, else 'spawn'."""
    if (multiprocessing.parent_process() is None or _Server.own) and not _Server.failed and "forkserver" in multiprocessing.get_all_start_methods():
        return "forkserver"
    return "spawn"


def start_server() -> None:
    """Start the fork server now, if this process uses one, so that its imports run beside the
    caller's own work instead of delaying the first worker. Returns at once; idempotent."""
    if start_method() != "forkserver":
        return
    multiprocessing.forkserver.set_forkserver_preload(SERVER_PRELOAD)
    try:
        multiprocessing.forkserver.ensure_running()
    except OSError:
        # No socket where the temporary folder is (a path too long for one, a read-only folder):
        # spawned workers are slower to start, not worse.
        _Server.failed = True
    if multiprocessing.parent_process() is None and _Server.folder is None:
        # Made by this process (a worker's server puts its socket in its main process's folder).
        _Server.folder = _server_folder()
        if _Server.folder is not None:
            scratch.remove_with_it(_Server.folder)  # should this command be killed before it removes it


def _server_folder() -> str | None:
    try:
        return multiprocessing.util.get_temp_dir()
    except OSError:  # the temporary folder cannot hold one: there is none to remove
        return None


def remove_server_folder() -> None:
    """Remove the folder the fork server's socket is in (/tmp/pymp-*), as the interpreter's
    tear-down would: a command ends without it (see __main__), and each one left its folder
    behind, 20,283 of them in this machine's /tmp."""
    if _Server.folder is not None:
        shutil.rmtree(_Server.folder, ignore_errors=True)
        _Server.folder = None


def start_own_server() -> None:
    """Give this worker process a fork server of its own, as the main process has, and start it:
    for a worker that starts workers often, each then starts in ~0.01 s instead of the ~0.5 s of a
    spawned interpreter. The server ends with this process."""
    _Server.own = True
    start_server()


def start_worker(target: Callable[..., None], args: tuple, daemon: bool = False,
                 stderr_to: str | None = None) -> tuple[BaseProcess, Connection]:
    """A worker process running `target(*args, connection)`, and this process's end of the pipe;
    with `stderr_to`, the worker's stderr goes to that file (see runtime_log).
    When the system will not start it (out of processes or memory): UnavailableError, no traceback."""
    start_server()
    context = multiprocessing.get_context(start_method())
    parent, child = context.Pipe()
    # A forked worker has the server's environment, from when it started: it takes this process's
    # as it is now, as a spawned one would (a backend may read it when it loads).
    process = context.Process(target=_run, args=(dict(os.environ), stderr_to, target, *args, child), daemon=daemon)
    try:
        process.start()
    except OSError as error:
        parent.close()
        raise UnavailableError(f"could not start a worker process ({error.strerror or error}); "
                               "free some memory or processes, or run with --no-isolation and fewer --jobs") from error
    finally:
        child.close()
    return process, parent


class LoggedWorker(NamedTuple):
    """A worker started by `start_logged_worker`: its process, this process's end of its pipe, and
    the file its stderr goes to."""

    process: BaseProcess
    connection: Connection
    stderr: str


def start_logged_worker(target: Callable[..., None], args: tuple, daemon: bool = False) -> LoggedWorker:
    """`start_worker`, with the worker's stderr going to a fresh file of this command's (see
    runtime_log): every worker that runs a runtime or a run's tasks, so that what it writes reaches
    a verdict or the command's log, not the console."""
    stderr = new_file()
    return LoggedWorker(*start_worker(target, args, daemon, stderr_to=stderr), stderr)


def _run(environment: dict[str, str], stderr_to: str | None, target: Callable[..., None], *args: Any) -> None:
    redirect_output(stderr_to)
    settle_imports()
    # Ctrl-C reaches the whole process group: the parent decides what an interruption means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.clear()
    os.environ.update(environment)
    die_with_parent()
    target(*args)


def settle_imports() -> None:
    """Leave what this process holds now (what it has imported) out of Python's cycle collections.

    The modules a run imports (numpy, onnx, hypothesis, typer, rich...) are ~45,000-52,000 objects
    that live until the process ends, and each collection of the oldest generation walked them
    all again as a run's results piled up; in a forked worker the walk also wrote to the pages it
    shares with the fork server. (Python's documentation suggests freezing in the parent before a
    fork; the fork server is multiprocessing's, so each worker freezes first thing instead.)
    """
    gc.freeze()


def die_with_parent() -> None:
    """End this worker when the process that started it ends."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    threading.Thread(target=_exit_when_gone, args=(parent.sentinel,), name="conform-parent-watch", daemon=True).start()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass


def _exit_when_gone(sentinel: int) -> None:
    # The sentinel is a pipe only the parent holds open: it reads as ready once the parent is gone,
    # also when that happened before this thread started.
    wait([sentinel])
    os._exit(1)


def serve(connection: Connection, handle: Callable[[Any], Any]) -> None:
    """Answer each request with `handle(request)` until the parent sends None or goes away."""
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if request is None:
            return
        try:
            # Plain pickle: multiprocessing's own pickler rebuilds its reducer table for every message.
            connection.send_bytes(pickle.dumps(handle(request), pickle.HIGHEST_PROTOCOL))
        except (BrokenPipeError, OSError):
            return
