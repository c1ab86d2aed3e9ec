"""Any runtime that follows `onnx.backend.base.Backend`: `prepare(model, device)` -> rep, `rep.run(inputs)`.

`--backend MODULE` or `--backend MODULE:ATTRIBUTE` names it; `onnxruntime.backend` is one such module.

A backend is anyone's Python code: whatever it raises or returns is its case's result, never
conform's end. What `rep.run` returns is checked (`checked_outputs`: None, `[None]` or a dict is a
`fail` saying so), and a SystemExit, KeyboardInterrupt or GeneratorExit it raises is a crash of
its case (`raised`), with `--no-isolation` too; a Ctrl-C to conform still stops the run.

A backend tells conform how its runtime says why it refused (see base.Vocabulary) in a
`CONFORM_REFUSALS` dict on the module (or on the backend class `MODULE:ATTRIBUTE` names):
`{"no_kernel": [regex, ...], "unsupported": [...], "invalid": [...]}`; `--refusal KIND=REGEX`
adds to it (see runners.refusals). Without either, only what every runtime shares is known:
NotImplementedError and the like say "no kernel", anything else is an error.
"""

from __future__ import annotations

import importlib

from ..errors import UnavailableError
from ..lifetime import hear_interruptions, interruptions
from ..model import BuiltModel
from .base import RunOutput, SessionCache, checked_outputs, classified, first_line, interrupted_since, raised, shown
from .refusals import Refusals, declared, described, replay_words, vocabulary


def load_backend(spec: str):
    """The backend `spec` names (a module, or MODULE:ATTRIBUTE) and the module it is found in;
    UnavailableError when it cannot be loaded."""
    module_name, _, attribute = spec.partition(":")
    heard = interruptions()
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # an unimportable backend is "not available", whatever it raised
        where = " (is the folder that holds it on PYTHONPATH?)" if _not_found(error, module_name) else ""
        raise UnavailableError(f"backend '{spec}' not available: cannot import {module_name}: {first_line(error)}{where}") from None
    except BaseException as error:  # SystemExit, say: what a module's import raises must not end conform
        interrupted_since(heard)
        raise UnavailableError(f"backend '{spec}' not available: importing {module_name} raised {shown(error)}") from None
    backend = getattr(module, attribute, None) if attribute else module
    if backend is None or not callable(getattr(backend, "prepare", None)):
        raise UnavailableError(f"backend '{spec}' not available: it has no prepare(model, device) as onnx.backend.base.Backend does")
    return backend, module


def _not_found(error: Exception, module_name: str) -> bool:
    """Whether the import failed for want of the backend's own module (or a package above it),
    not for what the module itself imports."""
    return isinstance(error, ModuleNotFoundError) and bool(error.name) and \
        (module_name == error.name or module_name.startswith(f"{error.name}."))


class BackendRunner:
    """Runs models through an onnx.backend-style module or class, reading its refusals in the
    vocabulary it declares and the one given (`refusals`: `--refusal` pairs)."""

    name = "backend"

    def __init__(self, spec: str, device: str = "CPU", refusals: Refusals = ()) -> None:
        self.spec = spec
        self.device = device
        self._given = tuple(refusals)
        hear_interruptions()  # so that a Ctrl-C is told from the backend's own KeyboardInterrupt
        self._backend, module = load_backend(spec)
        self.vocabulary = vocabulary(declared(self._backend, module, spec) + self._given)
        self._sessions = SessionCache(lambda built: self._backend.prepare(built.model, device),
                                      lambda error: classified(error, self.vocabulary))

    def describe(self) -> dict:
        words = described(self.vocabulary)
        return {"name": f"backend:{self.spec}", "version": getattr(self._backend, "__version__", None), "device": self.device,
                **({"refusals": words} if words else {})}

    def replay_options(self) -> list[str]:
        return ["--backend", self.spec, *replay_words(self._given)]

    def run(self, built: BuiltModel) -> RunOutput:
        rep, refusal = self._sessions.get(built)
        if refusal is not None:
            return refusal
        heard = interruptions()
        try:
            answer = rep.run([built.feeds[i.name] for i in built.model.graph.input])
        except BaseException as error:  # any refusal by the runtime is a result, and so is what would end a process
            return raised(error, heard, self.vocabulary)
        interrupted_since(heard)  # a Ctrl-C the backend caught
        return checked_outputs(answer, len(built.model.graph.output), "the backend")
