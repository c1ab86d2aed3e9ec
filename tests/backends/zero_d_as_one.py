"""A deliberately lossy onnx.backend adapter: every 0-d output comes back as shape (1,), as an adapter
that wraps each output in `np.atleast_1d` would hand it over."""

import numpy as np

from _delegating import DelegatingRep, backend_for


class _Rep(DelegatingRep):
    def run(self, inputs, **kwargs):
        return [np.atleast_1d(output) for output in super().run(inputs, **kwargs)]


prepare = backend_for(_Rep)
