"""A deliberately broken onnx.backend: on chosen Slice cases it segfaults, exits or hangs.

Slice starts of -3 -> SIGSEGV; starts of 7 -> hangs; starts of -100 -> os._exit(7).
Everything else is delegated to onnxruntime.backend.
"""

import os
import signal
import time

import onnxruntime.backend as ort_backend


class _Rep:
    def __init__(self, model, device):
        self.model = model
        self.inner = ort_backend.prepare(model, device)

    def run(self, inputs, **kwargs):
        names = [i.name for i in self.model.graph.input]
        feeds = dict(zip(names, inputs))
        first = int(feeds["starts"].reshape(-1)[0]) if "starts" in feeds and feeds["starts"].size else None
        if first == -3:
            os.kill(os.getpid(), signal.SIGSEGV)
        if first == 7:
            time.sleep(600)
        if first == -100:
            os._exit(7)
        return self.inner.run(inputs)


def prepare(model, device="CPU", **kwargs):
    return _Rep(model, device)
