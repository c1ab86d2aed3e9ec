"""Export onnx's own backend node tests for the covered ops, with onnx's own test-case collector."""

from __future__ import annotations

import warnings
from pathlib import Path

from onnx import numpy_helper
from onnx.backend.test.case import node

PREFIXES = ("test_clip", "test_slice", "test_constantofshape")


def export(out: Path) -> list[Path]:
    """Write each onnx node test of Clip, Slice and ConstantOfShape in the backend-test layout."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [c for c in node.collect_testcases() if c.name.startswith(PREFIXES)]
    written = []
    for case in cases:
        folder = out / case.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "model.onnx").write_bytes(case.model.SerializeToString())
        for k, (inputs, outputs) in enumerate(case.data_sets):
            data = folder / f"test_data_set_{k}"
            data.mkdir(exist_ok=True)
            for i, array in enumerate(inputs):
                (data / f"input_{i}.pb").write_bytes(numpy_helper.from_array(array, case.model.graph.input[i].name).SerializeToString())
            for j, array in enumerate(outputs):
                (data / f"output_{j}.pb").write_bytes(numpy_helper.from_array(array, case.model.graph.output[j].name).SerializeToString())
        written.append(folder)
    return written
