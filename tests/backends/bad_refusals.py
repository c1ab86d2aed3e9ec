"""An onnx.backend whose declared refusal vocabulary names a kind conform does not know."""

from onnxruntime.backend import prepare  # noqa: F401

CONFORM_REFUSALS = {"unsupported": ["fine"], "not_supported": ["Unsupported data type"]}
