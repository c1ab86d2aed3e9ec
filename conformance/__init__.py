"""conform: spec-conformance tests for ONNX operators, checked against real runtimes."""

__version__ = "0.1.0"
