"""onnx's own `onnx.reference.ReferenceEvaluator`, treated as one more runtime under test."""

from __future__ import annotations

import numpy as np
import onnx

from ..model import BuiltModel
from .base import RunOutput, SessionCache, Vocabulary, checked_outputs, classified

# What ReferenceEvaluator says when it has no implementation of an op version.
VOCABULARY = Vocabulary.literal(no_kernel=("No implementation for operator",))


class OnnxReferenceRunner:
    """Runs models with onnx.reference.ReferenceEvaluator (a runtime, not conform's reference)."""

    name = "reference"

    def __init__(self) -> None:
        from onnx.reference import ReferenceEvaluator

        self._evaluator = ReferenceEvaluator
        self._sessions = SessionCache(lambda built: ReferenceEvaluator(built.model), lambda error: classified(error, VOCABULARY))

    def describe(self) -> dict:
        return {"name": "onnx.reference", "version": onnx.__version__}

    def replay_options(self) -> list[str]:
        return ["--runner", "reference"]

    def run(self, built: BuiltModel) -> RunOutput:
        evaluator, refusal = self._sessions.get(built)
        if refusal is not None:
            return refusal
        try:
            # What numpy warns of inside the runtime under test (an overflowing cast, say) is its
            # own business: what it returns is judged, and the warning would only be noise on stderr.
            with np.errstate(all="ignore"):
                outputs = evaluator.run(None, dict(built.feeds))
        except Exception as error:  # any refusal by the runtime is a result
            return classified(error, VOCABULARY)
        return checked_outputs(outputs, len(built.model.graph.output), "onnx.reference")
