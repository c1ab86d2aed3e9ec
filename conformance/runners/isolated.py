"""Runs another runner in a worker process, so a runtime that crashes or hangs costs one case.

One worker per runner, reused across cases. If the worker dies (segfault, abort, os._exit) the
case is a `crash` with the signal or exit code, and a fresh worker starts; if a case takes longer
than the timeout, the worker is killed and replaced and the case is a `timeout`.

`run_stream` keeps several cases in flight, so the worker always has the next case queued while
this process prepares new cases and judges answered ones. The worker answers in order and reads a
case only after answering the one before, so when it dies or hangs the case it was running is the
oldest unanswered one: that case is the crash or timeout, and the cases sent after it go to the
fresh worker.
"""

from __future__ import annotations

import select
import signal
from collections import deque
from functools import lru_cache
from multiprocessing.connection import Connection
from typing import Iterable, Iterator

import onnx

from ..model import BuiltModel
from . import RunnerSpec
from .base import RunOutput
from ..lifetime import serve, start_worker
from .wire import dump_case, pack_output, unpack_case, unpack_output


# The first message of every worker, once its runtime is loaded: a case's timeout starts then, so
# that a worker's start-up (importing the runtime takes ~0.3 s, more on a busy machine) never makes
# its first case a timeout, nor, with a short --timeout, every case after each replacement too.
READY = "ready"
WORKER_START_SECONDS = 60.0


def _serve(spec: RunnerSpec, connection: Connection) -> None:
    runner = spec.make()
    connection.send(READY)

    def handle(request: tuple) -> tuple:
        data, feeds, elem_types = unpack_case(request)
        return pack_output(runner.run(BuiltModel(_parsed(data), data, feeds, elem_types)))

    serve(connection, handle)


# A case is sent while others are in flight only when all their requests together stay within
# this size, far below any platform's pipe buffer (macOS: 8 KiB): the send then never waits for
# the worker, which may be busy writing an answer and not reading, so neither side can block the
# other. A larger case waits until every earlier one is answered, and goes alone.
OVERLAP_BYTES = 4096


@lru_cache(maxsize=2048)
def _parsed(data: bytes) -> onnx.ModelProto:
    """Parsed once per distinct model: most cases share their model with many others."""
    return onnx.load_from_string(data)


def death(exitcode: int | None) -> str:
    """How a process ended, in words: the signal that killed it, or its exit code."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


class IsolatedRunner:
    """The runner a spec names, driven in a worker process."""

    def __init__(self, spec: RunnerSpec, timeout: float = 10.0) -> None:
        self.spec = spec
        self.timeout = timeout
        self._local = spec.make()  # fails here, in the parent, when the runtime is not available
        self.name = self._local.name
        self._process = None
        self._connection: Connection | None = None
        self._poller = None
        self._ready = False
        self.restarts = 0

    def describe(self) -> dict:
        return {**self._local.describe(), "isolation": "worker process", "timeout": self.timeout}

    def replay_options(self) -> list[str]:
        return self._local.replay_options()

    def start(self) -> None:
        """Start the worker now rather than at the first case, so its start-up overlaps other work."""
        if self._process is None:
            self._start()

    def _start(self) -> None:
        self._process, self._connection = start_worker(_serve, (self.spec,), daemon=True)
        self._ready = False
        # Connection.poll builds a selector for every call; where the pipe is a file descriptor
        # (POSIX), one poll object per worker answers the same question for a fraction of the cost.
        self._poller = select.poll() if hasattr(select, "poll") else None
        if self._poller is not None:
            self._poller.register(self._connection.fileno(), select.POLLIN)

    def _stop(self, kill: bool) -> str:
        process, self._process = self._process, None
        if process is None:  # never started, or it failed to
            return "not started"
        if kill:
            process.kill()
        process.join(5)
        self._connection.close()
        self._connection, self._poller = None, None
        self.restarts += 1
        return death(process.exitcode)

    def run(self, built: BuiltModel) -> RunOutput:
        return next(self.run_stream([built]))

    def run_stream(self, builts: Iterable[BuiltModel | None]) -> Iterator[RunOutput | None]:
        """An output for each model, in order, with later models sent before earlier answers are
        read; None (a case with nothing to run) gives None, after every earlier answer."""
        waiting: deque[bytes] = deque()  # requests sent and not yet answered, oldest first
        in_flight = 0  # their bytes together
        try:
            for built in builts:
                request = None if built is None else dump_case(built.data, built.feeds, built.elem_types)
                room = 0 if request is None else OVERLAP_BYTES - len(request)
                while waiting and in_flight > room:
                    in_flight -= len(waiting[0])
                    yield self._answer(waiting)
                if request is None:
                    yield None
                    continue
                waiting.append(request)
                in_flight += len(request)
                self._send(request, waiting)
            while waiting:
                yield self._answer(waiting)
        finally:
            if waiting:  # abandoned with answers outstanding: none may be read as another case's
                self._stop(kill=True)

    def _send(self, request: bytes, waiting: deque) -> None:
        self.start()
        try:
            self._connection.send_bytes(request)
        except OSError:
            if len(waiting) == 1:  # the worker died between cases: this case goes to a fresh one
                self._stop(kill=True)
                self._resend(waiting)
            # else the oldest case's answer will show the death; the rest are sent again then

    def _answer(self, waiting: deque) -> RunOutput:
        """The oldest waiting case's output; a crash or timeout is that case's, and the cases
        after it are sent to a fresh worker."""
        waiting.popleft()
        try:
            late = self._late()
            if late is not None:
                self._stop(kill=True)
                outcome = RunOutput(error=late, fault="timeout")
            else:
                return unpack_output(self._connection.recv())
        except (EOFError, OSError):
            outcome = RunOutput(error=f"the runtime's worker process died: {self._stop(kill=False)}", fault="crash")
        self._resend(waiting)
        return outcome

    def _late(self) -> str | None:
        """Why the oldest case's answer did not come in time (worker start-up aside), or None when
        it is there to read."""
        if not self._ready:
            if not self._arrives_within(WORKER_START_SECONDS):
                return f"the runtime's worker did not start within {WORKER_START_SECONDS:g} s; worker killed"
            self._connection.recv()  # READY
            self._ready = True
        if not self._arrives_within(self.timeout):
            return f"no answer within {self.timeout:g} s; worker killed"
        return None

    def _arrives_within(self, seconds: float) -> bool:
        """Whether the worker's next message arrives within `seconds`."""
        if self._poller is None:
            return self._connection.poll(seconds)
        return bool(self._poller.poll(seconds * 1000))

    def _resend(self, waiting: deque) -> None:
        self.start()
        try:
            for request in waiting:
                self._connection.send_bytes(request)
        except OSError:
            pass  # the fresh worker died at once: the next answer shows it

    def close(self) -> None:
        if self._process is not None:
            try:
                self._connection.send(None)
            except OSError:
                pass
            self._stop(kill=False)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to clean up properly
            pass
