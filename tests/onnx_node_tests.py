"""Export onnx's own backend node tests for the covered ops, with onnx's own test-case collector."""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import Path

from onnx import numpy_helper
from onnx.backend.test.case import node

# The ops whose node tests the golden feature tests (run --from, verify, progress) use as examples.
FEATURE_OPS = ("Clip", "ConstantOfShape", "Slice")


@cache
def _all_cases() -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(node.collect_testcases())


def export(out: Path, ops: tuple[str, ...] | None = None) -> list[Path]:
    """Write each onnx node test whose model is one node of `ops` (default: every covered op) in
    the backend-test layout, with its `_expanded` twin (the op's function body, many nodes)."""
    from conformance.reference import covered_ops

    wanted = set(covered_ops() if ops is None else ops)
    single = {c.name for c in _all_cases() if len(c.model.graph.node) == 1 and c.model.graph.node[0].op_type in wanted
              and _tensors_only(c.model.graph)}
    cases = [c for c in _all_cases() if c.name in single or c.name.removesuffix("_expanded") in single]
    written = []
    for case in cases:
        folder = out / case.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "model.onnx").write_bytes(case.model.SerializeToString())
        for k, (inputs, outputs) in enumerate(case.data_sets):
            data = folder / f"test_data_set_{k}"
            data.mkdir(exist_ok=True)
            for i, array in enumerate(inputs):
                (data / f"input_{i}.pb").write_bytes(_tensor(array, case.model.graph.input[i].name).SerializeToString())
            for j, array in enumerate(outputs):
                (data / f"output_{j}.pb").write_bytes(_tensor(array, case.model.graph.output[j].name).SerializeToString())
        written.append(folder)
    return written


def _tensors_only(graph) -> bool:
    """Whether every graph input and output is a tensor: conform covers tensor types only, so
    Identity's sequence and optional tests (test_identity_sequence, test_identity_opt) are not its."""
    return all(value.type.HasField("tensor_type") for value in [*graph.input, *graph.output])


def _tensor(array, name: str):
    """A test's value as a TensorProto: onnx gives the types numpy lacks (Cast's float8, int4...)
    as TensorProtos already."""
    from onnx import TensorProto

    if isinstance(array, TensorProto):
        tensor = TensorProto()
        tensor.CopyFrom(array)
        tensor.name = name
        return tensor
    return numpy_helper.from_array(array, name)
