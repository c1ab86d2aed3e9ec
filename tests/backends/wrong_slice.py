"""A deliberately wrong onnx.backend for Slice: with a negative step it clamps ends to 0.

Everything else is delegated to onnxruntime.backend. Used to show conform catches the bug.
"""

import numpy as np
import onnxruntime.backend as ort_backend


class _Rep:
    def __init__(self, model, device):
        self.model = model
        self.inner = ort_backend.prepare(model, device)

    def run(self, inputs, **kwargs):
        node = self.model.graph.node[0]
        names = [i.name for i in self.model.graph.input]
        feeds = dict(zip(names, inputs))
        if node.op_type == "Slice" and "steps" in feeds and (feeds["steps"] < 0).any():
            ends = feeds["ends"].copy()
            ends[(feeds["steps"] < 0) & (ends < 0)] = 0  # the bug: -1 / INT_MIN ends clamp to 0
            feeds["ends"] = ends
        return self.inner.run([feeds[n] for n in names])


def prepare(model, device="CPU", **kwargs):
    return _Rep(model, device)


def supports_device(device):
    return device == "CPU"
