"""Runners behind one interface; `RunnerSpec` names one (picklable, so a worker can build it too)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError
from .base import Runner, RunOutput

RUNNER_NAMES = ("onnxruntime", "reference")
OPTIMIZATIONS = ("on", "off")


@dataclass(frozen=True)
class RunnerSpec:
    """Which runtime to run and how: enough to build the same runner in another process."""

    runner: str = "onnxruntime"
    provider: str = "cpu"
    backend: str | None = None
    optimizations: str = "on"

    def make(self) -> Runner:
        """The runner the spec names; UnavailableError (exit 3) when it cannot run here."""
        if self.backend:
            from .backend import BackendRunner

            return BackendRunner(self.backend)
        if self.runner == "onnxruntime":
            from .onnxruntime import OnnxRuntimeRunner

            return OnnxRuntimeRunner(self.provider, self.optimizations)
        if self.runner == "reference":
            from .onnx_reference import OnnxReferenceRunner

            return OnnxReferenceRunner()
        raise UsageError(f"unknown runner '{self.runner}' (choose from: {', '.join(RUNNER_NAMES)})")


def make_runner(runner: str = "onnxruntime", provider: str = "cpu", backend: str | None = None,
                optimizations: str = "on", isolate: bool = False, timeout: float = 10.0) -> Runner:
    """The runner the options name, in a worker process when `isolate`."""
    spec = RunnerSpec(runner, provider, backend, optimizations)
    if isolate:
        from .isolated import IsolatedRunner

        return IsolatedRunner(spec, timeout)
    return spec.make()


__all__ = ["Runner", "RunOutput", "RunnerSpec", "make_runner", "RUNNER_NAMES", "OPTIMIZATIONS"]
