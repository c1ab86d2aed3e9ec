"""A deliberately wrong onnx.backend for Slice: with a negative step it clamps negative ends to 0."""

from _delegating import DelegatingRep, backend_for


class _Rep(DelegatingRep):
    def adjust(self, feeds):
        if self.model.graph.node[0].op_type == "Slice" and "steps" in feeds and (feeds["steps"] < 0).any():
            ends = feeds["ends"].copy()
            ends[(feeds["steps"] < 0) & (ends < 0)] = 0  # the bug: -1 / INT_MIN ends clamp to 0
            feeds["ends"] = ends
        return feeds


prepare = backend_for(_Rep)
