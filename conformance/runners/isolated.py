"""Runs another runner in a worker process, so a runtime that crashes or hangs costs one case.

One worker per runner, reused across cases. If the worker dies (segfault, abort, os._exit) the
case is a `crash` with the signal or exit code, and a fresh worker starts; if a case takes longer
than the timeout, the worker is killed and replaced and the case is a `timeout`.

`run_stream` keeps one more case in flight: the worker runs case i while this process prepares
case i+1 and judges case i-1. The worker answers in order and reads a case only after answering
the one before, so when it dies or hangs the case it was running is the oldest unanswered one:
that case is the crash or timeout, and the cases sent after it go to the fresh worker.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import deque
from functools import lru_cache
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Iterable, Iterator

import onnx

from ..model import BuiltModel
from . import RunnerSpec
from .base import RunOutput
from .lifetime import serve


def _serve(spec: RunnerSpec, connection: Connection) -> None:
    runner = spec.make()
    serve(connection, lambda request: runner.run(BuiltModel(_parsed(request[0]), *request)))


# A case is sent while another is in flight only when it is at most this size, far below any
# platform's pipe buffer (macOS: 8 KiB): the send then never waits for the worker, which may be
# busy writing its answer and not reading, so neither side can block the other.
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
        self._context = multiprocessing.get_context("spawn")
        self._process = None
        self._connection: Connection | None = None
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
        parent, child = self._context.Pipe()
        self._process = self._context.Process(target=_serve, args=(self.spec, child), daemon=True)
        self._process.start()
        child.close()
        self._connection = parent

    def _stop(self, kill: bool) -> str:
        process, self._process = self._process, None
        if kill:
            process.kill()
        process.join(5)
        self._connection.close()
        self._connection = None
        self.restarts += 1
        return death(process.exitcode)

    def run(self, built: BuiltModel) -> RunOutput:
        return next(self.run_stream([built]))

    def run_stream(self, builts: Iterable[BuiltModel | None]) -> Iterator[RunOutput | None]:
        """An output for each model, in order, with the next model sent before the last one's
        answer is read; None (a case with nothing to run) gives None, after every earlier answer."""
        waiting: deque[tuple[BuiltModel, bytes]] = deque()  # sent, not yet answered; oldest first
        try:
            for built in builts:
                if built is None:
                    while waiting:
                        yield self._answer(waiting)
                    yield None
                    continue
                request = bytes(ForkingPickler.dumps((built.data, built.feeds, built.elem_types)))
                if waiting and len(request) > OVERLAP_BYTES:
                    while waiting:
                        yield self._answer(waiting)
                waiting.append((built, request))
                self._send(request, waiting)
                if len(waiting) > 1:
                    yield self._answer(waiting)
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
            if not self._connection.poll(self.timeout):
                self._stop(kill=True)
                outcome = RunOutput(error=f"no answer within {self.timeout:g} s; worker killed", fault="timeout")
            else:
                return self._connection.recv()
        except (EOFError, OSError):
            outcome = RunOutput(error=f"the runtime's worker process died: {self._stop(kill=False)}", fault="crash")
        self._resend(waiting)
        return outcome

    def _resend(self, waiting: deque) -> None:
        self.start()
        try:
            for _, request in waiting:
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
