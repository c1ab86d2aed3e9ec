"""Any runtime that follows `onnx.backend.base.Backend`: `prepare(model, device)` -> rep, `rep.run(inputs)`.

`--backend MODULE` or `--backend MODULE:ATTRIBUTE` names it; `onnxruntime.backend` is one such module.

A backend is anyone's Python code: whatever it raises or returns is its case's result, never
conform's end. What `rep.run` returns is checked (`checked_outputs`: None, `[None]` or a dict is a
`fail` saying so), and a SystemExit, KeyboardInterrupt or GeneratorExit it raises is a crash of
its case (`raised`), with `--no-isolation` too; a Ctrl-C to conform still stops the run.
"""

from __future__ import annotations

import importlib

from ..errors import UnavailableError
from ..lifetime import hear_interruptions, interruptions
from ..model import BuiltModel
from .base import RunOutput, SessionCache, checked_outputs, classified, first_line, interrupted_since, raised, shown


def load_backend(spec: str):
    module_name, _, attribute = spec.partition(":")
    heard = interruptions()
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # an unimportable backend is "not available", whatever it raised
        raise UnavailableError(f"backend '{spec}' not available: cannot import {module_name}: {first_line(error)}") from None
    except BaseException as error:  # SystemExit, say: what a module's import raises must not end conform
        interrupted_since(heard)
        raise UnavailableError(f"backend '{spec}' not available: importing {module_name} raised {shown(error)}") from None
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
        hear_interruptions()  # so that a Ctrl-C is told from the backend's own KeyboardInterrupt
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
        heard = interruptions()
        try:
            answer = rep.run([built.feeds[i.name] for i in built.model.graph.input])
        except BaseException as error:  # any refusal by the runtime is a result, and so is what would end a process
            return raised(error, heard)
        interrupted_since(heard)  # a Ctrl-C the backend caught
        return checked_outputs(answer, len(built.model.graph.output), "the backend")


def _refused(error: Exception) -> RunOutput:
    """A backend's refusal: it has no vocabulary of its own that conform knows (see classified)."""
    return classified(error)
