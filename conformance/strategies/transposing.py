"""Random Transpose cases: any permutation of the input's axes, or none (the dims reversed), rank
0 to 6; and a small share of what the text forbids (an axis twice, a perm of the wrong length)."""

from __future__ import annotations

from ..dtypes import dtype
from ..registry import OpVersion
from .common import Choices, array, invalid_share, one_in, permutation, shape
from .movement import made


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    data = array(choices, dtype(binding["T"]), shape(choices))
    attributes = {}
    if not one_in(choices, 4):
        attributes["perm"] = permutation(choices, data.ndim)
    if invalid_share(choices):
        perm = attributes.get("perm") or list(range(data.ndim))
        attributes["perm"] = [*perm, 0] if one_in(choices, 2) or not perm else [perm[0]] * len(perm)
    return made(version, binding, {"data": data}, attributes)
