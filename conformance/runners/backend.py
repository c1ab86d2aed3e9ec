"""Any runtime that follows `onnx.backend.base.Backend`: `prepare(model, device)` -> rep, `rep.run(inputs)`.

`--backend MODULE` or `--backend MODULE:ATTRIBUTE` names it; `onnxruntime.backend` is one such module.
"""

from __future__ import annotations

import importlib

import numpy as np

from ..errors import UnavailableError
from ..model import BuiltModel
from .base import RunOutput, SessionCache, classified, first_line


def load_backend(spec: str):
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # an unimportable backend is "not available", whatever it raised
        raise UnavailableError(f"backend '{spec}' not available: cannot import {module_name}: {first_line(error)}") from None
    backend = getattr(module, attribute, None) if attribute else module
    if backend is None or not callable(getattr(backend, "prepare", None)):
        raise UnavailableError(f"backend '{spec}' not available: it has no prepare(model, device) as onnx.backend.base.Backend does")
    return backend


class BackendRunner:
    """Runs models through an onnx.backend-style module or class."""

    name = "backend"

    def __init__(self, spec: str, device: str = "CPU") -> None:
        self.spec = spec
        self.device = device
        self._backend = load_backend(spec)
        self._sessions = SessionCache(lambda built: self._backend.prepare(built.model, device), _refused)

    def describe(self) -> dict:
        return {"name": f"backend:{self.spec}", "version": getattr(self._backend, "__version__", None), "device": self.device}

    def replay_options(self) -> list[str]:
        return ["--backend", self.spec]

    def run(self, built: BuiltModel) -> RunOutput:
        rep, refusal = self._sessions.get(built)
        if refusal is not None:
            return refusal
        try:
            outputs = rep.run([built.feeds[i.name] for i in built.model.graph.input])
        except Exception as error:  # any refusal by the runtime is a result
            return _refused(error)
        return RunOutput(outputs=tuple(np.asarray(o) for o in outputs))


def _refused(error: Exception) -> RunOutput:
    """A backend's refusal: it has no vocabulary of its own that conform knows (see classified)."""
    return classified(error, ())
