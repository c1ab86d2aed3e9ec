"""Runners behind one interface; `RunnerSpec` names one (picklable, so a worker can build it too)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from ..errors import UsageError
from .base import ModelNeeds, Runner, RunOutput

# Each runner by its --runner name: the module under runners/ and the class in it. openvino and
# tract are optional extras (`pip install "conform[openvino]"`): their modules import the runtime
# only when made, and say what to install when it is missing.
RUNNERS = {
    "onnxruntime": ("onnxruntime", "OnnxRuntimeRunner"),
    "reference": ("onnx_reference", "OnnxReferenceRunner"),
    "openvino": ("openvino", "OpenVinoRunner"),
    "tract": ("tract", "TractRunner"),
}
RUNNER_NAMES = tuple(RUNNERS)
OPTIMIZATIONS = ("on", "off")
DEFAULT_TIMEOUT = 10.0  # seconds a case may take in a runtime before it is a timeout
# What a timeout may be set to: a day is no limit in practice, and the system's clocks overflow on `inf`.
MIN_TIMEOUT, MAX_TIMEOUT = 0.1, 86400


@dataclass(frozen=True)
class RunnerSpec:
    """Which runtime to run and how: enough to build the same runner in another process."""

    runner: str = "onnxruntime"
    provider: str = "cpu"  # cpu, cuda or dml; onnxruntime's own names are taken too
    backend: str | None = None
    optimizations: str = "on"
    # Refusal patterns given on the command line (`--refusal KIND=REGEX`), as (kind, regex) pairs:
    # added to the runner's own vocabulary, or to what a backend declares (see runners.refusals).
    refusals: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        """Refuse what names no runner, or an option the chosen runner would silently ignore."""
        from .onnxruntime import provider_name, short_provider
        from .refusals import checked_pattern

        object.__setattr__(self, "refusals", tuple(checked_pattern(kind, pattern, f"--refusal {kind}={pattern}")
                                                   for kind, pattern in self.refusals))

        if self.runner not in RUNNER_NAMES:
            raise UsageError(f"unknown runner '{self.runner}' (choose from: {', '.join(RUNNER_NAMES)})")
        provider_name(self.provider)
        object.__setattr__(self, "provider", short_provider(self.provider))
        if self.backend and self.runner != "onnxruntime":
            raise UsageError(f"--backend and --runner {self.runner} name two runners: give one")
        chosen = f"--backend {self.backend}" if self.backend else f"--runner {self.runner}"
        if (self.backend or self.runner != "onnxruntime") and (self.provider != "cpu" or self.optimizations != "on"):
            given = f"--provider {self.provider}" if self.provider != "cpu" else f"--optimizations {self.optimizations}"
            raise UsageError(f"{given} chooses how onnxruntime runs; it does not apply to {chosen}")

    def make(self) -> Runner:
        """The runner the spec names; UnavailableError (exit 3) when it cannot run here."""
        if self.backend:
            from .backend import BackendRunner

            return BackendRunner(self.backend, refusals=self.refusals)
        built = self._built_in()
        if not self.refusals:
            return built
        from .refusals import WithRefusals

        return WithRefusals(built, self.refusals)

    @property
    def runner_name(self) -> str:
        """The name the runner gives itself (`Runner.name`), read without making it."""
        if self.backend:
            from .backend import BackendRunner

            return BackendRunner.name
        module, name = RUNNERS[self.runner]
        return getattr(importlib.import_module(f"{__name__}.{module}"), name).name

    @property
    def python_only(self) -> bool:
        """Whether the runtime is Python code alone (onnx.reference): it cannot crash the
        interpreter, so a process of its own guards nothing a watch on its calls does not."""
        return self.runner == "reference" and not self.backend

    def model_needs(self) -> ModelNeeds:
        """How the runtime needs its models built (its runner class's `model_needs`), read without
        making the runner, so without importing the runtime; none declared for a --backend."""
        if self.backend:
            return ModelNeeds()
        module, name = RUNNERS[self.runner]
        runner_class = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        return getattr(runner_class, "model_needs", ModelNeeds())

    def _built_in(self) -> Runner:
        if self.runner == "onnxruntime":
            from .onnxruntime import OnnxRuntimeRunner

            return OnnxRuntimeRunner(self.provider, self.optimizations)
        module, name = RUNNERS[self.runner]
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)()


def make_runner(runner: str = "onnxruntime", provider: str = "cpu", backend: str | None = None,
                optimizations: str = "on", isolate: bool = False, timeout: float = DEFAULT_TIMEOUT,
                refusals: tuple[tuple[str, str], ...] = ()) -> Runner:
    """The runner the options name, in a worker process when `isolate`."""
    return runner_of(RunnerSpec(runner, provider, backend, optimizations, refusals), isolate, timeout)


def runner_of(spec: RunnerSpec, isolate: bool = False, timeout: float = DEFAULT_TIMEOUT) -> Runner:
    """The runner `spec` names, in a worker process when `isolate`."""
    if isolate:
        from .isolated import IsolatedRunner

        return IsolatedRunner(spec, timeout)
    return spec.make()


__all__ = ["Runner", "RunOutput", "RunnerSpec", "make_runner", "runner_of", "RUNNER_NAMES", "OPTIMIZATIONS", "DEFAULT_TIMEOUT", "MIN_TIMEOUT", "MAX_TIMEOUT"]
