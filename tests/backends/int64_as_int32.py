"""A deliberately lossy onnx.backend adapter: every int64 output comes back as int32, as an adapter
for a runtime whose buffers are 32-bit would narrow it."""

import numpy as np

from _delegating import DelegatingRep, backend_for


class _Rep(DelegatingRep):
    def run(self, inputs, **kwargs):
        return [output.astype(np.int32) if output.dtype == np.int64 else output for output in super().run(inputs, **kwargs)]


prepare = backend_for(_Rep)
