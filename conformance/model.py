"""Example -> a single-node ModelProto and its feeds.

The model imports exactly the version's opset (its since-version) at the lowest IR version that
supports it. Graph inputs carry the spec's formal names and, by default, symbolic dims of the
example's rank, so every example with the same types, ranks and attributes builds the *same* model
bytes and a runner can reuse one session for all of them. With `shapes="static"` each graph input
has the example's own dims instead, for engines that compile a model for one shape only (a model
per distinct shape then).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import onnx
from onnx import AttributeProto, helper, numpy_helper

from .case import Example, SparseValue
from .dtypes import dtype, from_numpy


@dataclass(eq=False)
class BuiltModel:
    """A model ready to run, its serialized bytes (the session-cache key) and the feeds.

    Not frozen: one is made for every case (see execute.Staged).

    `elem_types` are the ONNX element types of the graph's inputs and outputs (derived from the
    model when not given).
    """

    model: onnx.ModelProto
    data: bytes
    feeds: dict[str, np.ndarray]
    elem_types: frozenset[int] = frozenset()
    # Which case this is, where the caller says (execute.named): an isolated runner names the cases
    # that ran before a crash by it.
    case_id: str | None = None

    def __post_init__(self) -> None:
        if not self.elem_types:
            self.elem_types = element_types(self.model)


def element_types(model: onnx.ModelProto) -> frozenset[int]:
    graph = model.graph
    return frozenset(v.type.tensor_type.elem_type for v in [*graph.input, *graph.output])


MODES = ("input", "initializer", "constant")
# How graph inputs declare their dims: symbolic names of the example's rank (one model for every
# shape), or the example's own sizes (engines that need static shapes).
SHAPES = ("symbolic", "static")
DEFAULT_SHAPES = "symbolic"


def build(example: Example, outputs: tuple[tuple[str, int], ...], mode: str = "input",
          data_inputs: tuple[str, ...] = (), shapes: str = DEFAULT_SHAPES) -> BuiltModel:
    """The model for an example; `outputs` gives each output's dtype and rank, and each gets that
    many symbolic dims (the checker wants a shape). Outputs stay symbolic under either `shapes`:
    an engine needs its inputs' shapes to compile, and infers its outputs'.

    `mode` decides how inputs other than `data_inputs` reach the node: as graph inputs fed at run
    time, as initializers, or as outputs of Constant nodes. Runtimes constant-fold and pick kernels
    differently for each, so the same case is worth running all three ways.

    Models are remembered by what shapes them (types, ranks, attributes, embedded values), so the
    many examples that share a model share one ModelProto and one bytes object.
    """
    version = example.version
    inputs = example.inputs
    names = example.node_inputs
    embedded = () if mode == "input" else tuple(
        name for name in names if name and name not in data_inputs and version.input(name).name not in data_inputs)
    static = shapes == "static"
    inputs_key = tuple([_input_key(inputs.get(name), name in embedded, static) for name in names])
    # The op and since-version stand for the version: their hashes are cached, an OpVersion's is computed.
    key = (version.op, version.since_version, mode, static, outputs, example.outputs, inputs_key,
           _attributes_key(example.attributes))
    found = _MODELS.get(key)
    if found is None:
        found = _MODELS[key] = _build(example, outputs, mode, embedded, static)
        if len(_MODELS) > MODEL_CACHE_SIZE:
            del _MODELS[next(iter(_MODELS))]
    model, data, elem_types = found
    feeds = {}
    for name in names:  # a loop, not a comprehension: asked for every case
        if name and name not in embedded:
            feeds[name] = inputs[name]
    return BuiltModel(model, data, feeds, elem_types)


MODEL_CACHE_SIZE = 4096
_MODELS: dict[tuple, tuple[onnx.ModelProto, bytes, frozenset[int]]] = {}


def _input_key(array: np.ndarray | None, embedded: bool, static: bool) -> tuple | None:
    if array is None:
        return None
    if not embedded:
        return (array.dtype, array.shape) if static else (array.dtype, array.ndim)
    return array.dtype, array.ndim, array.shape, value_key(array)


def _attributes_key(attributes: dict) -> tuple:
    return tuple([(name, value_key(value)) for name, value in sorted(attributes.items())]) if attributes else ()


def value_key(value) -> object:
    """A hashable stand-in that tells apart every value a model could embed (-0.0 from 0.0 too)."""
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, repr(value.tolist()) if value.dtype.kind == "O" else value.tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(value_key(v) for v in value)
    if isinstance(value, SparseValue):
        return ("sparse", value_key(value.values), value_key(value.indices), value.dims)
    return (type(value).__name__, repr(value))


def example_key(example: Example) -> tuple:
    """A hashable stand-in for everything a runner is given for an example: two examples with the
    same key are the same test."""
    return (example.version, tuple(sorted(example.types.items())),
            tuple((name, value_key(value)) for name, value in example.inputs.items()),
            tuple((name, value_key(value)) for name, value in sorted(example.attributes.items())), example.outputs)


# IR version 4 (opset 9) is the first that lets an initializer be no graph input; Constant-9 the
# first Constant that holds any type (Constant-1 takes float16, float and double only).
IR_INITIALIZER_NOT_INPUT = 4
CONSTANT_ANY_TYPE_OPSET = 9
CONSTANT_1_TYPES = frozenset({np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)})


def _build(example: Example, outputs: tuple[tuple[str, int], ...], mode: str,
           embedded: tuple[str, ...], static: bool = False) -> tuple[onnx.ModelProto, bytes, frozenset[int]]:
    version = example.version
    opset = helper.make_opsetid("", version.since_version)
    ir_version = lowest_ir_version(version.since_version)
    graph_inputs = [_value_info(name, example.inputs[name], static) for name in example.node_inputs if name]
    initializers, constants = [], []
    for name in embedded:
        array = example.inputs[name]
        tensor = numpy_helper.from_array(array, name=name)
        if mode == "constant" and (version.since_version >= CONSTANT_ANY_TYPE_OPSET or array.dtype in CONSTANT_1_TYPES):
            constants.append(helper.make_node("Constant", [], [name], value=tensor))
        else:  # an initializer, also where no Constant of this opset can hold the type
            initializers.append(tensor)
            if ir_version < IR_INITIALIZER_NOT_INPUT:  # IR 3 wants every initializer to be a graph input too
                _concrete(graph_inputs, name, array.shape)
                continue
        graph_inputs = [g for g in graph_inputs if g.name != name]
    node = helper.make_node(version.op, list(example.node_inputs), list(example.node_outputs))
    node.attribute.extend(_attribute_protos(example))
    graph_outputs = [
        helper.make_tensor_value_info(name, dtype(out_dtype).elem_type, [f"{name}_out_d{k}" for k in range(rank)])
        for name, (out_dtype, rank) in zip([n for n in example.node_outputs if n], outputs)
    ]
    graph = helper.make_graph([*constants, node], f"conform_{version.op}", graph_inputs, graph_outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[opset], ir_version=ir_version, producer_name="conform")
    return model, model.SerializeToString(deterministic=True), element_types(model)


def lowest_ir_version(opset: int) -> int:
    """The lowest IR version that can hold a model of this default-domain opset. onnx's table skips
    opsets 2 to 4 (Concat-4, Split-2), which IR 3 holds as it holds opset 1."""
    for candidate in range(opset, 0, -1):
        try:
            return helper.find_min_ir_version_for([helper.make_opsetid("", candidate)])
        except ValueError:
            continue
    raise ValueError(f"no IR version is known for opset {opset}")


def _value_info(name: str, array: np.ndarray, static: bool = False) -> onnx.ValueInfoProto:
    dims = list(array.shape) if static else [f"{name}_d{k}" for k in range(array.ndim)]
    return helper.make_tensor_value_info(name, from_numpy(array.dtype).elem_type, dims)


def _concrete(graph_inputs: list[onnx.ValueInfoProto], name: str, shape: tuple[int, ...]) -> None:
    """Give the graph input `name` the concrete dims of the initializer that feeds it."""
    for value_info in graph_inputs:
        if value_info.name == name:
            for dim, size in zip(value_info.type.tensor_type.shape.dim, shape):
                dim.Clear()
                dim.dim_value = size


def _attribute_protos(example: Example) -> list[onnx.AttributeProto]:
    """The node's attributes, sorted by name as helper.make_node sorts them; each of its schema's
    type, which an empty list (Squeeze-1's `axes: []`) cannot tell by itself."""
    made = []
    for name, value in sorted(_attributes(example).items()):
        formal = example.version.attribute(name)
        # A list takes its schema's type whole: [1, 2] written for a FLOATS attribute (Constant's
        # value_floats) is no INTS, and an empty one has no type of its own.
        typed = formal is not None and isinstance(value, (list, tuple))
        made.append(helper.make_attribute(name, value, attr_type=formal.type if typed else None))
    return made


def _attributes(example: Example) -> dict[str, object]:
    values = {}
    for name, value in example.attributes.items():
        if value is None:
            continue
        attribute = example.version.attribute(name)
        if attribute is not None and attribute.type == AttributeProto.TENSOR:
            value = numpy_helper.from_array(np.asarray(value), name=name)
        elif isinstance(value, SparseValue):
            value = sparse_tensor(value, name)
        values[name] = value
    return values


def sparse_tensor(value: SparseValue, name: str) -> onnx.SparseTensorProto:
    """A SparseTensorProto of a `SparseValue`, as written (its values' tensor named after the attribute)."""
    return helper.make_sparse_tensor(numpy_helper.from_array(np.asarray(value.values), name=name),
                                     numpy_helper.from_array(np.asarray(value.indices), name=f"{name}_indices"), list(value.dims))


@lru_cache(maxsize=512)
def checker_problem(model_bytes: bytes) -> str | None:
    """None when onnx.checker (full check, with shape inference) accepts the model, else why not."""
    try:
        onnx.checker.check_model(onnx.load_from_string(model_bytes), full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as error:
        return str(error).strip().splitlines()[0]
    return None
