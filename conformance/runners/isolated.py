"""Runs another runner in a worker process, so a runtime that crashes or hangs costs one case.

One worker per runner, reused across cases. If the worker dies (segfault, abort, os._exit) the
case is a `crash` with the signal or exit code, and a fresh worker starts; if a case takes longer
than the timeout, the worker is killed and replaced and the case is a `timeout`.
"""

from __future__ import annotations

import multiprocessing
import signal
from functools import lru_cache
from multiprocessing.connection import Connection

import onnx

from ..model import BuiltModel
from . import RunnerSpec
from .base import RunOutput
from .lifetime import serve


def _serve(spec: RunnerSpec, connection: Connection) -> None:
    runner = spec.make()
    serve(connection, lambda request: runner.run(BuiltModel(_parsed(request[0]), *request)))


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
        self.start()
        try:
            self._connection.send((built.data, built.feeds, built.elem_types))
            if not self._connection.poll(self.timeout):
                self._stop(kill=True)
                return RunOutput(error=f"no answer within {self.timeout:g} s; worker killed", fault="timeout")
            return self._connection.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            return RunOutput(error=f"the runtime's worker process died: {self._stop(kill=False)}", fault="crash")

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
