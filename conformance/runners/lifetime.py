"""The life of a worker process: it serves its parent's requests and never outlives the parent.

On Linux a worker asks the kernel for SIGKILL when its parent dies (`PR_SET_PDEATHSIG`), so a
killed or interrupted run leaves no runtime worker behind holding its pipes open. Elsewhere the
workers still end when their pipe closes, between cases.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import pickle
import signal
import sys
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Callable

from ..errors import UnavailableError

_PR_SET_PDEATHSIG = 1


def start_worker(target: Callable[..., None], args: tuple, daemon: bool = False) -> tuple[BaseProcess, Connection]:
    """A spawned process running `target(*args, connection)`, and this process's end of the pipe.
    When the system will not start it (out of processes or memory): UnavailableError, no traceback."""
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=target, args=(*args, child), daemon=daemon)
    try:
        process.start()
    except OSError as error:
        parent.close()
        raise UnavailableError(f"could not start a worker process ({error.strerror or error}); "
                               "free some memory or processes, or run with --no-isolation and fewer --jobs") from error
    finally:
        child.close()
    return process, parent


def die_with_parent() -> None:
    """Be killed when the parent process dies (Linux); a no-op where the kernel cannot do it."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:  # the parent died before the request
        os._exit(1)


def serve(connection: Connection, handle: Callable[[Any], Any]) -> None:
    """Answer each request with `handle(request)` until the parent sends None or goes away."""
    die_with_parent()
    # Ctrl-C reaches the whole process group: the parent decides what an interruption means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
