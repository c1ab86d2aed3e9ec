"""A static-shape engine's refusals, on onnxruntime: it will not compile a model whose graph inputs
have symbolic dims, nor one that feeds the node anything but its first input (an index input such
as Slice's starts, a Clip bound) as a graph input; such inputs must be constants. Models it
accepts run correctly. The refusals are plain exceptions, as a backend without a declared
vocabulary raises them: each is a `fail` ("runtime rejected a valid input")."""

from _delegating import DelegatingRep, backend_for


class _Rep(DelegatingRep):
    def __init__(self, model, device):
        graph = model.graph
        for value_info in graph.input:
            for dim in value_info.type.tensor_type.shape.dim:
                if not dim.HasField("dim_value"):
                    raise RuntimeError(f"cannot compile: input '{value_info.name}' has a dynamic shape "
                                       f"(dimension '{dim.dim_param}'); this engine needs static shapes")
        fed = {value_info.name for value_info in graph.input} - {tensor.name for tensor in graph.initializer}
        node = graph.node[-1]
        for name in node.input[1:]:
            if name in fed:
                raise RuntimeError(f"cannot compile {node.op_type}: its input '{name}' is not a constant")
        super().__init__(model, device)


prepare = backend_for(_Rep)
