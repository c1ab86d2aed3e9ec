"""Runners behind one interface; `make_runner` picks one from the CLI's options."""

from __future__ import annotations

from .base import Runner, RunOutput

RUNNER_NAMES = ("onnxruntime", "reference")


def make_runner(runner: str = "onnxruntime", provider: str = "cpu", backend: str | None = None) -> Runner:
    """The runner the options name; UnavailableError (exit 3) when it cannot run here."""
    from ..errors import UsageError

    if backend:
        from .backend import BackendRunner

        return BackendRunner(backend)
    if runner == "onnxruntime":
        from .onnxruntime import OnnxRuntimeRunner

        return OnnxRuntimeRunner(provider)
    if runner == "reference":
        from .onnx_reference import OnnxReferenceRunner

        return OnnxReferenceRunner()
    raise UsageError(f"unknown runner '{runner}' (choose from: {', '.join(RUNNER_NAMES)})")


__all__ = ["Runner", "RunOutput", "make_runner", "RUNNER_NAMES"]
