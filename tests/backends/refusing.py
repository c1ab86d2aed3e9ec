"""An onnx.backend whose runtime refuses double and float16 in its own words, and declares them.

Its module declares the words (CONFORM_REFUSALS); `refusing:Silent` is the same backend declaring
none, as an adapter written before it knew of them."""

import numpy as np

from _delegating import DelegatingRep

CONFORM_REFUSALS = {"unsupported": [r"Unsupported data type [A-Z0-9]+"], "no_kernel": "has no kernel for"}
REFUSED_AT_PREPARE = "MyRuntime: Unsupported data type DOUBLE"
REFUSED_AT_RUN = "MyRuntime: Unsupported data type FLOAT16"


class _Rep(DelegatingRep):
    def adjust(self, feeds):
        if any(np.asarray(value).dtype == np.float16 for value in feeds.values()):
            raise RuntimeError(f"Exception from src/core.cpp:10:\n{REFUSED_AT_RUN}")
        return feeds


def prepare(model, device="CPU", **kwargs):
    if model.graph.input[0].type.tensor_type.elem_type == 11:  # DOUBLE
        raise RuntimeError(f"Exception from src/core.cpp:10:\n{REFUSED_AT_PREPARE}")
    return _Rep(model, device)


class Silent:
    """The same runtime, declaring no refusals of its own."""

    CONFORM_REFUSALS: dict = {}
    prepare = staticmethod(prepare)
