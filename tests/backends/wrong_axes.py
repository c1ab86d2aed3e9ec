"""A deliberately wrong onnx.backend for Slice: it gets the sign of negative axes wrong (-1 -> 1).

Everything else is delegated to onnxruntime.backend.
"""

import numpy as np
import onnxruntime.backend as ort_backend


class _Rep:
    def __init__(self, model, device):
        self.model = model
        self.inner = ort_backend.prepare(model, device)

    def run(self, inputs, **kwargs):
        names = [i.name for i in self.model.graph.input]
        feeds = dict(zip(names, inputs))
        if self.model.graph.node[0].op_type == "Slice" and "axes" in feeds:
            feeds["axes"] = np.abs(feeds["axes"])  # the bug
        return self.inner.run([feeds[n] for n in names])


def prepare(model, device="CPU", **kwargs):
    return _Rep(model, device)


def supports_device(device):
    return device == "CPU"
