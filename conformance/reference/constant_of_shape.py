"""Reference for ConstantOfShape (versions 9, 20, 21, 23, 24, 25), from the spec text.

Every version has the same semantics; later versions only widen T2, which the registry reads from
onnx.defs. Version 25 (int2/uint2) is not in shared/spec's text; its schema says the same.
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example
from .base import Expected, Invalid, OpReference, VersionSemantics, single

SHAPE_1D = "input: 1D tensor. The shape of the expected output tensor. If empty tensor is given, the output would be a scalar."
NON_NEGATIVE = "input: All values must be >= 0."
ONE_ELEMENT = "value: (Optional) The value of the output elements. Should be a one-element tensor."


class ConstantOfShape9(VersionSemantics):
    """Output of shape `input`, every element `value` (float32 0 when `value` is absent)."""

    since = 9

    def expected(self, example: Example) -> Expected:
        shape = example.inputs["input"]
        if shape.ndim != 1:
            return Expected(invalid=Invalid("shape-not-1d", SHAPE_1D))
        if (shape < 0).any():
            return Expected(invalid=Invalid("negative-dim", NON_NEGATIVE))
        value = example.attributes.get("value")
        if value is None:
            value = np.zeros((1,), dtype=np.float32)
        if value.size != 1:
            return Expected(invalid=Invalid("value-not-one-element", ONE_ELEMENT))
        dims = tuple(int(d) for d in shape)
        return single(np.broadcast_to(value.reshape(()), dims).copy())


def output_elements(example: Example) -> int:
    """The product of the requested dims (0 when any is negative: such a case is invalid anyway)."""
    shape = example.inputs["input"]
    dims = [int(d) for d in shape.reshape(-1)]
    return 0 if any(d < 0 for d in dims) else math.prod(dims)


def value_omitted(example: Example) -> bool:
    """No value attribute: the text's output is then float32 zeros."""
    return "value" not in example.attributes


REFERENCE = OpReference(
    op="ConstantOfShape",
    dtype_param="T2",
    data_inputs=(),
    shape_inputs=("input",),
    semantics=(ConstantOfShape9,),
    attribute_params={"value": "T2"},
    output_elements_from=output_elements,
    rules=("shape-not-1d", "negative-dim", "value-not-one-element"),
    traits={"value-omitted": value_omitted},
)
