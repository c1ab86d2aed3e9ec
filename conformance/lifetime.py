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
its workers. Each worker leads a process group of its own, which the processes its runtime starts
join: a worker is ended with its group (`kill_worker`, `end_group`), so that what a backend started
(a server, a `sleep 300`) dies with it, whether it was killed, crashed or stopped when asked.

A command run in a process that runs others (see scratch.Command) ends what it started on its way
out, however it ends: every worker it started that still lives (its owner's own stop comes first,
where it has one), with its process group, and the fork server, when the command started it. A
worker so would otherwise outlive the command until its owner was collected (a runner held by the
traceback a test keeps, say), and the fork server until the process ended. The environment
variable and the signal handler a command sets here are given back then too.

Memory: the commands that run a runtime name a limit for each worker (`limit_worker_memory`, the
`--memory-limit` option), which a worker sets on itself before it loads anything (RLIMIT_DATA:
what it allocates, not the address space onnxruntime and numpy reserve), so that a runtime that
leaks or asks for too much fails its case with a MemoryError, or dies in it, instead of bringing
the out-of-memory killer to the machine.

Interruptions: conform's own handlers of SIGINT and SIGTERM count the KeyboardInterrupts they
raise (`interrupt`, `interruptions`), so that a runner calling a runtime in this process tells a
Ctrl-C to conform, which stops the run, from a KeyboardInterrupt the runtime raised itself, which is
its case's result.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import multiprocessing.forkserver
import multiprocessing.util
import os
import pickle
import re
import shutil
import signal
import sys
import threading
import weakref
from functools import partial
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, Callable, NamedTuple, NoReturn

from . import scratch
from .errors import UnavailableError
from .runtime_log import new_file, redirect_output

_PR_SET_PDEATHSIG = 1
MEMORY_VARIABLE = "CONFORM_MEMORY_LIMIT"  # MiB each worker may allocate (0: no limit), in the environment workers get
# A `--jobs` worker of a whole Slice run (every version, hypothesis cases, 512 sessions cached)
# allocates up to ~600 MiB; with 400 it runs out in a few cases.
SMALLEST_DEFAULT_LIMIT = 2048

# What the fork server imports before it forks anything: what the workers run, minus onnxruntime.
# Hypothesis is named: conform imports it only where cases are drawn (see `strategies`); so is
# every op's reference and strategy (`preload`), which the registry imports only when asked.
# The ops a command names (`--op`), for the server to ready alone (see conformance.preload).
PRELOAD_OPS_VARIABLE = "CONFORM_PRELOAD_OPS"
SERVER_PRELOAD = ["conformance.parallel", "conformance.runners.isolated", "conformance.runners.onnxruntime", "hypothesis",
                  "conformance.preload"]


class _Server:
    """Whether this process's fork server could not be started (then its workers are spawned), and
    whether this worker process has one of its own."""

    failed = False
    own = False
    folder: str | None = None  # the folder multiprocessing made for the server's socket, in the main process

    @staticmethod
    def forget_failure() -> None:
        _Server.failed = False


def start_method() -> str:
    """'forkserver' in the main process (or a worker with a server of its own) where the platform
    has one that starts, else 'spawn'."""
    if (multiprocessing.parent_process() is None or _Server.own) and not _Server.failed and "forkserver" in multiprocessing.get_all_start_methods():
        return "forkserver"
    return "spawn"


def start_server() -> None:
    """Start the fork server now, if this process uses one, so that its imports run beside the
    caller's own work instead of delaying the first worker. Returns at once; idempotent. A server
    started within a command ends with it (see the module's docstring)."""
    if start_method() != "forkserver":
        return
    multiprocessing.forkserver.set_forkserver_preload(SERVER_PRELOAD)
    running = _server_pid()
    try:
        multiprocessing.forkserver.ensure_running()
    except OSError:
        # No socket where the temporary folder is (a path too long for one, a read-only folder):
        # spawned workers are slower to start, not worse. Only for this command: the next may
        # have a temporary folder that can hold one.
        _Server.failed = True
        scratch.at_command_end(_Server.forget_failure)
    started = _server_pid()
    if started is not None and started != running:
        # Last of all: after the workers forked from it (see `_end_with_the_command`).
        scratch.at_command_end(partial(_stop_server, started), last=True)
    if multiprocessing.parent_process() is None and _Server.folder is None:
        # Made by this process (a worker's server puts its socket in its main process's folder).
        _Server.folder = _server_folder()
        if _Server.folder is not None:
            scratch.remove_with_it(_Server.folder)  # should this command be killed before it removes it


def _server_pid() -> int | None:
    """The process id of this process's fork server, when it has started one (None where this
    Python does not say: its server is then never stopped before the process ends)."""
    return getattr(multiprocessing.forkserver._forkserver, "_forkserver_pid", None)


def _stop_server(pid: int) -> None:
    """Stop the fork server `pid`, unless another has taken its place meanwhile. Killed, not asked:
    asked, it waits until every process forked from it lets go of its end of a pipe, which
    something a runtime started may hold for ever. A worker still forked from it dies with it
    (die_with_parent)."""
    server = multiprocessing.forkserver._forkserver
    if _server_pid() != pid or not hasattr(server, "_stop"):
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:  # it has ended already
        pass
    try:
        server._stop()  # reaps it, and closes and removes what this process holds of it
    except OSError:  # its socket was removed already: nothing more to remove
        pass


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
    # Weakly: a worker's process object holds a descriptor until it goes, and a command that
    # replaces workers after crashes starts thousands. multiprocessing holds one that lives.
    scratch.at_command_end(partial(_end_with_the_command, weakref.ref(process)), last=True)
    return process, parent


def _end_with_the_command(worker: "weakref.ref[BaseProcess]") -> None:
    """At the end of the command that started it: kill the worker, with its process group, if
    it still lives; end what is left of its group if it ended alone."""
    process = worker()
    if process is None:
        return
    if process.is_alive():
        kill_worker(process)
        process.join(5)
    else:
        end_group(process)


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
    lead_own_group()
    redirect_output(stderr_to)
    settle_imports()
    # A worker left in its parent's process group (see lead_own_group) hears a Ctrl-C at the
    # terminal: the parent decides what an interruption means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.clear()
    os.environ.update(environment)
    _Memory.limit = limit_memory(environment.get(MEMORY_VARIABLE))
    die_with_parent()
    target(*args)


def lead_own_group() -> None:
    """Make this worker the leader of a process group of its own, which the processes it starts
    join unless they leave it: its parent ends the group with it (see `kill_worker`, `end_group`)."""
    if hasattr(os, "setpgid"):
        try:
            os.setpgid(0, 0)
        except OSError:  # a session leader, say: its group stays its parent's, and only it is ended
            pass


def kill_worker(process: BaseProcess) -> None:
    """SIGKILL to a worker and to every process of its group: what its runtime started dies with it."""
    end_group(process)
    process.kill()  # one that has not made its group yet


def end_group(process: BaseProcess) -> None:
    """SIGKILL to what is left of a worker's process group (what its runtime started and left
    running), once the worker has ended or is being ended. A group outlives its leader while
    any of its processes lives, and its id is given to no other process meanwhile; an empty one
    is gone, and there is nothing to end. Once ended after its worker ended, a group is not
    ended again: its id may be another worker's by then (a runner closed after its command
    ended its worker, say)."""
    if process.pid is None or not hasattr(os, "killpg") or process in _GroupsEnded.after_their_worker:
        return
    ended = process.exitcode is not None
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:  # no such group (it is empty, or never made): nothing left to end
        pass
    if ended:
        _GroupsEnded.after_their_worker.add(process)


class _GroupsEnded:
    """The workers whose process group was ended once they had ended (see end_group)."""

    after_their_worker: "weakref.WeakSet[BaseProcess]" = weakref.WeakSet()


class _Memory:
    """The limit this worker process set on its memory, in MiB (None: none)."""

    limit: int | None = None


def limit_worker_memory(mebibytes: int | None) -> None:
    """Have every worker started from now on (and each of theirs) limit its memory to `mebibytes`
    (None: the default, `default_memory_limit`; 0: no limit)."""
    scratch.set_for_the_command(MEMORY_VARIABLE, str(default_memory_limit() if mebibytes is None else mebibytes))


def default_memory_limit() -> int:
    """Half this machine's memory, and at least SMALLEST_DEFAULT_LIMIT MiB, in MiB: a worker that
    leaks gets a MemoryError in its case (or dies in it) while the machine still has the other
    half. 0 (no limit) where the machine does not say how much memory it has."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 0
    return max(memory // 2 >> 20, SMALLEST_DEFAULT_LIMIT)


def limit_memory(mebibytes: str | None) -> int | None:
    """Limit what this process may allocate (RLIMIT_DATA) to `mebibytes` (as the environment holds
    it); the limit set, or None where none is (none asked, 0, or a system without such a limit)."""
    try:
        import resource

        size = int(mebibytes or 0) << 20
        if size <= 0:
            return None
        hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
        if hard != resource.RLIM_INFINITY:
            size = min(size, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (size, size))
    except (ImportError, AttributeError, ValueError, OSError):
        return None
    return size >> 20


def memory_limit_note() -> str:
    """What a verdict adds when the runtime ran out of memory in a worker with a memory limit:
    the limit and the option that sets it ('' without one)."""
    if _Memory.limit is None:
        return ""
    return f"; its worker process may use at most {_Memory.limit:,} MiB (--memory-limit)"


# What a runtime or Python writes when an allocation fails: C++'s std::bad_alloc, numpy's "Unable
# to allocate", onnxruntime's "Failed to allocate memory", the C library's ENOMEM.
_OUT_OF_MEMORY = re.compile(r"MemoryError|bad_alloc|Unable to allocate|Failed to allocate|Cannot allocate memory|[Oo]ut of memory")


def died_of_memory_note(last_words: str) -> str:
    """What the verdict of a worker that died adds when its last words (see runtime_log) read as a
    failed allocation and workers have a memory limit: that it may have reached it ('' otherwise)."""
    limit = os.environ.get(MEMORY_VARIABLE, "0")
    if not limit.isdigit() or not int(limit) or not _OUT_OF_MEMORY.search(last_words):
        return ""
    return f"; it may have reached its memory limit of {int(limit):,} MiB (--memory-limit)"


class _Interruptions:
    """How many KeyboardInterrupts conform's own signal handlers have raised in this process."""

    raised = 0


def interrupt() -> NoReturn:
    """Raise KeyboardInterrupt from one of conform's signal handlers, counted (see `interruptions`)."""
    _Interruptions.raised += 1
    raise KeyboardInterrupt


def interruptions() -> int:
    """How many KeyboardInterrupts conform's own signal handlers have raised so far: a runner that
    catches a KeyboardInterrupt from a runtime called in this process raises it again when this
    changed during the call (conform was interrupted), and makes it the case's result otherwise."""
    return _Interruptions.raised


def hear_interruptions() -> None:
    """Count a SIGINT that would raise KeyboardInterrupt through Python's own handler (a library
    user's, pytest's) as one of conform's (see `interruptions`); where SIGINT is ignored or handled
    otherwise, or away from the main thread, nothing changes."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted)
        scratch.at_command_end(_stop_hearing)


def _stop_hearing() -> None:
    """Python's own SIGINT handler back, where `hear_interruptions` put conform's and nothing changed it since."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is _interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _interrupted(signum, frame) -> NoReturn:
    interrupt()


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
    if hasattr(os, "killpg") and os.getpgid(0) == os.getpid():  # with what its runtime started
        os.killpg(0, signal.SIGKILL)
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
