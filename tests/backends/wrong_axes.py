"""A deliberately wrong onnx.backend for Slice: it gets the sign of negative axes wrong (-1 -> 1)."""

import numpy as np
from _delegating import DelegatingRep, backend_for


class _Rep(DelegatingRep):
    def adjust(self, feeds):
        if self.model.graph.node[0].op_type == "Slice" and "axes" in feeds:
            feeds["axes"] = np.abs(feeds["axes"])  # the bug
        return feeds


prepare = backend_for(_Rep)
