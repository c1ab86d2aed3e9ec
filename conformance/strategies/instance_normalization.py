"""Random cases of InstanceNormalization (reference/instance_normalization.py), every version and dtype.

Input of rank 3 to 5 (version 1: rank 4), rank 2 now and then (no spatial dim: y = B, which a
runtime may reject), channels 1 and up, long channels (4096 values) now and then; epsilon at its
default, 0, small and large. Each instance's channel drawn by batch_normalization's recipes:
exactly summable (a wrong axis or a variance over n − 1 lies far past the bound), constant (y = B),
large mean and small spread (E[X²] − E[X]² cancels), random, boundary values; scale and B dyadic or
random; and a small share of scale or B of the wrong size.
"""

from __future__ import annotations

import math



from ..dtypes import dtype
from ..registry import OpVersion
from ..values import pack
from .batch_normalization import channel_rows, dyadic
from .common import Choices, invalid_share, one_in, pick
from .movement import made

EPSILONS = (None, None, 1e-5, 0.0, 1e-3, 1.0, 1e-12)
LONG = 4096


def instance_normalization(choices: Choices, version: OpVersion, binding: dict[str, str]):
    since = version.since_version
    dt = dtype(binding["T"])
    if since == 1:
        rank = 4
    else:
        rank = 2 if one_in(choices, 12) else choices.integer(3, 5)
    dims = (choices.integer(1, 3), choices.integer(1, 4)) + tuple(choices.integer(1, 4) for _ in range(rank - 2))
    if since > 1 and one_in(choices, 12):
        dims = (1, 2, LONG)
    n = math.prod(dims[2:])
    x = channel_rows(choices, dt, dims[0] * dims[1], n).reshape(dims)
    exact = not one_in(choices, 3)
    inputs = {"input": x, "scale": dyadic(choices, dt, (dims[1],), -4, 4, exact), "B": dyadic(choices, dt, (dims[1],), -4, 4, exact)}
    attributes: dict = {}
    epsilon = pick(choices, EPSILONS)
    if epsilon is not None:
        attributes["epsilon"] = epsilon
    if invalid_share(choices):
        name = pick(choices, ("scale", "B"))
        inputs[name] = pack([1.0] * (dims[1] + 1), dt)
    return made(version, binding, inputs, attributes)


STRATEGIES = {"InstanceNormalization": instance_normalization}

