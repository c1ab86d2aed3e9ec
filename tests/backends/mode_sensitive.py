"""A deliberately wrong onnx.backend: when Slice's indices are initializers (constant-folded in real
runtimes), it returns its data unsliced. Fed as graph inputs, it answers correctly."""

from _delegating import DelegatingRep, backend_for


class _Rep(DelegatingRep):
    def run(self, inputs, **kwargs):
        if self.model.graph.initializer:
            return [inputs[0]]  # the bug
        return super().run(inputs, **kwargs)


prepare = backend_for(_Rep)
