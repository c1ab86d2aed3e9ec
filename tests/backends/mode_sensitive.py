"""A deliberately wrong onnx.backend: when Slice's indices are initializers (constant-folded in real
runtimes), it returns its data unsliced. Fed as graph inputs, it answers correctly."""

import onnxruntime.backend as ort_backend


class _Rep:
    def __init__(self, model, device):
        self.model = model
        self.inner = ort_backend.prepare(model, device)

    def run(self, inputs, **kwargs):
        if self.model.graph.initializer:
            return [inputs[0]]  # the bug
        return self.inner.run(inputs)


def prepare(model, device="CPU", **kwargs):
    return _Rep(model, device)
