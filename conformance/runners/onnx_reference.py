"""onnx's own `onnx.reference.ReferenceEvaluator`, treated as one more runtime under test."""

from __future__ import annotations

import numpy as np
import onnx

from ..model import BuiltModel
from .base import RunOutput, SessionCache, first_line


class OnnxReferenceRunner:
    """Runs models with onnx.reference.ReferenceEvaluator (a runtime, not conform's reference)."""

    name = "reference"

    def __init__(self) -> None:
        from onnx.reference import ReferenceEvaluator

        self._evaluator = ReferenceEvaluator
        self._sessions = SessionCache(lambda built: ReferenceEvaluator(built.model))

    def describe(self) -> dict:
        return {"name": "onnx.reference", "version": onnx.__version__}

    def replay_options(self) -> list[str]:
        return ["--runner", "reference"]

    def run(self, built: BuiltModel) -> RunOutput:
        evaluator, error = self._sessions.get(built)
        if error is not None:
            return RunOutput.failed(first_line(error))
        try:
            outputs = evaluator.run(None, dict(built.feeds))
        except NotImplementedError as error:
            return RunOutput.not_supported(first_line(error))
        except Exception as error:  # any refusal by the runtime is a result
            return RunOutput.failed(first_line(error))
        return RunOutput(outputs=tuple(np.asarray(o) for o in outputs))
