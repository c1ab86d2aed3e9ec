"""Transposing: Transpose (data-movement family, movement.py): the map is numpy's transpose of the
input's positions; `perm` defaults to the dims reversed."""

from __future__ import annotations

import numpy as np

from ..case import Example
from .base import Invalid, OpReference
from .movement import MovementSemantics, Moved, ints, positions

PERM = "`perm` must contain each axis index in `[0, n-1]` exactly once, so its length is equal to the rank `n` of the input tensor."


class Transpose1(MovementSemantics):
    """Transpose: axis i of the output is axis perm[i] of the input; perm defaults to (n-1, ..., 0)."""

    since = 1
    data = ("data",)

    def moved(self, example: Example) -> Moved | Invalid:
        data = example.inputs["data"]
        perm = ints(example.attributes.get("perm"))
        if perm is None:
            perm = list(range(data.ndim))[::-1]
        if sorted(perm) != list(range(data.ndim)):
            return Invalid("not-a-permutation", PERM)
        return Moved((np.transpose(positions([data.shape])[0], perm).copy(),))


def perm_omitted(example: Example) -> bool:
    """No perm: the dims reversed."""
    return example.attributes.get("perm") is None


def reorders_elements(example: Example) -> bool:
    """Some element lands at another position of the flat output than of the flat input."""
    data = example.inputs["data"]
    perm = ints(example.attributes.get("perm"))
    perm = list(range(data.ndim))[::-1] if perm is None else perm
    if sorted(perm) != list(range(data.ndim)):
        return False
    moved = [k for k in perm if data.shape[k] != 1]
    return data.size > 1 and moved != sorted(moved)


REFERENCE = OpReference(op="Transpose", dtype_param="T", semantics=(Transpose1,), data_inputs=("data",),
                        traits={"perm-omitted": perm_omitted, "reorders-elements": reorders_elements}, rules=("not-a-permutation",))
