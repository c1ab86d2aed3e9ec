"""Random SwiGLU cases (reference/swiglu.py): A and B of one shape (rank 0 to 6, size-0 dims
included), boundary-weighted values of the binding's type (inf, NaN, subnormals, the max, where
inf·0 and overflow arise) half the time and ordinary gate values around the sigmoid's knee the
rest, alpha at its default or drawn (0, negative, 1.702); and a small share of shapes that differ,
which the text forbids ("broadcasting is not applied")."""

from __future__ import annotations

import numpy as np

from ..case import Example
from ..dtypes import dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick, shape

ALPHAS = (None, 1.0, 0.5, 2.0, -1.0, 0.0, 1.702)


def example(choices: Choices, version: OpVersion, binding: dict[str, str]) -> Example:
    dt = dtype(binding["T"])
    dims = shape(choices, 0, 4)
    other = dims
    if invalid_share(choices):
        other = (*dims, 2) if one_in(choices, 2) or not dims else (*dims[:-1], dims[-1] + 1)
    inputs = {"A": _gate(choices, dt, dims), "B": array(choices, dt, other)}
    alpha = pick(choices, ALPHAS)
    attributes = {} if alpha is None else {"alpha": alpha}
    return Example(version, "hypothesis", dict(binding), inputs, attributes, "hypothesis", "T")


def _gate(choices: Choices, dt, dims) -> np.ndarray:
    """Boundary-weighted values, or gates spread over [-12, 12] where Swish turns."""
    if one_in(choices, 2):
        return array(choices, dt, dims)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    return pack((rng.standard_normal(int(np.prod(dims))) * 4).tolist(), dt).reshape(dims)


STRATEGIES = {"SwiGLU": example}
