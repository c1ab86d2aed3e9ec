"""The runner interface: a built single-node model in, outputs or a classified error out."""

from __future__ import annotations

import unittest
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import numpy as np

from ..model import BuiltModel


@dataclass(frozen=True, eq=False)
class RunOutput:
    """What a runtime did with one model: outputs, or an error (marked when it means 'unsupported')."""

    outputs: tuple[np.ndarray, ...] = ()
    error: str | None = None
    unsupported: bool = False
    fault: str | None = None  # "crash", "timeout" (its process died or hung) or "fallback" (another provider ran the node)

    @classmethod
    def failed(cls, error: str) -> "RunOutput":
        return cls(error=error)

    @classmethod
    def not_supported(cls, reason: str) -> "RunOutput":
        return cls(error=reason, unsupported=True)

    @classmethod
    def timed_out(cls, seconds: float, last_words: str = "") -> "RunOutput":
        """A call that overran the case timeout of `seconds`, wherever it was caught; `last_words`:
        what the runtime wrote to stderr during it (see runtime_log.written_since)."""
        return cls(error=timeout_message(seconds) + last_words, fault="timeout")


class Runner(Protocol):
    """One runtime under test. Implementations keep their own session caches.

    A runner that can work on one case while the caller prepares the next also offers
    `run_stream(models) -> outputs`, in order, None for None (see `runners.isolated`).
    """

    name: str

    def describe(self) -> dict:
        """Name, version and options of the runtime, for the report."""

    def run(self, built: BuiltModel) -> RunOutput:
        """Run the model on its feeds; never raises for a runtime's own errors."""

    def replay_options(self) -> list[str]:
        """The CLI options that select this runner again, for the replay command."""


class SessionCache:
    """Sessions keyed by model bytes, least recently used dropped first. A model the runtime
    refused is remembered as its refusal (the RunOutput `refused` makes of the error), so its
    later cases are answered without asking the runtime again or classifying its error again."""

    # A session of a single-node model holds ~40-100 KB; 512 of them per runtime worker keeps a
    # default run (several workers) under 500 MB, and cases reuse the models of their group
    # soon after each other, so a larger cache gains little.
    def __init__(self, create: Callable[[BuiltModel], Any], refused: Callable[[Exception], RunOutput],
                 size: int = 512) -> None:
        self._create = create
        self._refused = refused
        self._size = size
        self._items: OrderedDict[bytes, tuple[Any, RunOutput | None]] = OrderedDict()

    def get(self, built: BuiltModel) -> tuple[Any, RunOutput | None]:
        """(session, None), or (None, the refusal) when the runtime refused the model."""
        found = self._items.get(built.data)
        if found is None:
            found = self._items[built.data] = self._make(built)
            if len(self._items) > self._size:
                self._items.popitem(last=False)
        else:
            self._items.move_to_end(built.data)
        return found

    def _make(self, built: BuiltModel) -> tuple[Any, RunOutput | None]:
        try:
            return self._create(built), None
        except Exception as error:  # a runtime refusing a model is a result, not a crash
            return None, self._refused(error)


def timeout_message(seconds: float) -> str:
    """What a case that overran the case timeout is told, wherever it was caught."""
    return f"no answer within {seconds:g} s; worker killed"


def first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:500]


def classified(error: BaseException, unsupported_markers: tuple[str, ...]) -> RunOutput:
    """A runtime's refusal as a result: `unsupported` when it says it does not implement the op,
    version or type, in a way runtimes share whatever their vocabulary (NotImplementedError;
    unittest.SkipTest, which onnx's backend test runner takes as "not supposed to implement it",
    BackendIsNotSupposedToImplementIt; an exception class named NotImplemented, as onnxruntime
    raises for an op version or type it has no kernel for, also through its onnx.backend) or in
    its own (a message with one of the markers); else an error."""
    text = first_line(error)
    if _says_not_implemented(error) or any(marker in str(error) for marker in unsupported_markers):
        return RunOutput.not_supported(text)
    return RunOutput.failed(text)


def _says_not_implemented(error: BaseException) -> bool:
    return isinstance(error, (NotImplementedError, unittest.SkipTest)) or type(error).__name__ == "NotImplemented"
