"""Example -> a single-node ModelProto and its feeds.

The model imports exactly the version's opset (its since-version) at the lowest IR version that
supports it. Graph inputs carry the spec's formal names and symbolic dims of the example's rank,
so every example with the same types, ranks and attributes builds the *same* model bytes and a
runner can reuse one session for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import onnx
from onnx import AttributeProto, helper, numpy_helper

from .case import Example
from .dtypes import dtype, from_numpy


@dataclass(frozen=True, eq=False)
class BuiltModel:
    """A model ready to run, its serialized bytes (the session-cache key) and the feeds."""

    model: onnx.ModelProto
    data: bytes
    feeds: dict[str, np.ndarray]


MODES = ("input", "initializer", "constant")


def build(example: Example, output_dtype: str, output_rank: int, mode: str = "input",
          data_inputs: tuple[str, ...] = ()) -> BuiltModel:
    """The model for an example; outputs get `output_rank` symbolic dims (the checker wants a shape).

    `mode` decides how inputs other than `data_inputs` reach the node: as graph inputs fed at run
    time, as initializers, or as outputs of Constant nodes. Runtimes constant-fold and pick kernels
    differently for each, so the same case is worth running all three ways.
    """
    version = example.version
    node_inputs, graph_inputs, feeds = _inputs(example)
    initializers, constants = [], []
    if mode != "input":
        for name in [n for n in list(feeds) if n not in data_inputs]:
            tensor = numpy_helper.from_array(feeds.pop(name), name=name)
            graph_inputs = [g for g in graph_inputs if g.name != name]
            if mode == "initializer":
                initializers.append(tensor)
            else:
                constants.append(helper.make_node("Constant", [], [name], value=tensor))
    node = helper.make_node(
        version.op, node_inputs, list(version.output_names), **_attributes(example)
    )
    out_dims = [f"out_d{k}" for k in range(output_rank)]
    outputs = [helper.make_tensor_value_info(name, dtype(output_dtype).elem_type, out_dims) for name in version.output_names]
    graph = helper.make_graph([*constants, node], f"conform_{version.op}", graph_inputs, outputs, initializer=initializers)
    opset = helper.make_opsetid("", version.since_version)
    model = helper.make_model(
        graph,
        opset_imports=[opset],
        ir_version=helper.find_min_ir_version_for([opset]),
        producer_name="conform",
    )
    return BuiltModel(model, model.SerializeToString(deterministic=True), feeds)


def _inputs(example: Example) -> tuple[list[str], list[onnx.ValueInfoProto], dict[str, np.ndarray]]:
    node_inputs: list[str] = []
    graph_inputs: list[onnx.ValueInfoProto] = []
    feeds: dict[str, np.ndarray] = {}
    for formal in example.version.inputs:
        array = example.inputs.get(formal.name)
        if array is None:
            node_inputs.append("")
            continue
        node_inputs.append(formal.name)
        dims = [f"{formal.name}_d{k}" for k in range(array.ndim)]
        graph_inputs.append(helper.make_tensor_value_info(formal.name, from_numpy(array.dtype).elem_type, dims))
        feeds[formal.name] = array
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    return node_inputs, graph_inputs, feeds


def _attributes(example: Example) -> dict[str, object]:
    values = {}
    for name, value in example.attributes.items():
        if value is None:
            continue
        attribute = example.version.attribute(name)
        if attribute is not None and attribute.type == AttributeProto.TENSOR:
            value = numpy_helper.from_array(np.asarray(value), name=name)
        values[name] = value
    return values


@lru_cache(maxsize=512)
def checker_problem(model_bytes: bytes) -> str | None:
    """None when onnx.checker (full check, with shape inference) accepts the model, else why not."""
    try:
        onnx.checker.check_model(onnx.load_from_string(model_bytes), full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as error:
        return str(error).strip().splitlines()[0]
    return None
