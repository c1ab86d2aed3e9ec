"""Shared plumbing of the deliberately broken test backends: delegate to onnxruntime.backend after
letting a subclass change the feeds (or do something worse)."""

import onnxruntime.backend as ort_backend


class DelegatingRep:
    """A backend rep whose `adjust(feeds)` may rewrite the named feeds before onnxruntime runs them."""

    def __init__(self, model, device):
        self.model = model
        self.inner = ort_backend.prepare(model, device)

    def adjust(self, feeds: dict) -> dict:
        return feeds

    def run(self, inputs, **kwargs):
        names = [i.name for i in self.model.graph.input]
        feeds = self.adjust(dict(zip(names, inputs)))
        return self.inner.run([feeds[n] for n in names])


def backend_for(rep_class):
    """The module-level prepare() of an onnx.backend-style module."""
    return lambda model, device="CPU", **kwargs: rep_class(model, device)
