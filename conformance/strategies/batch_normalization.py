"""Random cases of BatchNormalization (reference/batch_normalization.py), every version and dtype.

X of rank 2 to 5 (rank 1 from version 9, version 1 rank 4 alone), channels 1 and up; the mode by
each version's switch (`is_test` in 1 and 6, the outputs asked for in 7 and 9, `training_mode`
from 14), `spatial=0` now and then (1, 6, 7); momentum and epsilon at their defaults, 0, small and
large. Values that separate bugs from legal reorderings:

- inference on exact data: var + epsilon a power of four (epsilon 0 or 0.25 beside a var of 0.75),
  dyadic mean, scale and B, so both the text's order and the folded a·x + c form are exact up to
  the last rounding, and epsilon outside the root or a wrong channel axis lies far past the bound;
- training on exactly summable channels (small integers, quarters), constant channels, channels of
  large mean and small spread (E[X²] − E[X]² cancels: onnxruntime issue #21935) and random ones;
- the shared boundary draws (NaN, ±inf, max, subnormals);
- and a small share of what the text forbids (scale of the wrong size, extra outputs in inference).
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick
from .movement import made

RECIPES = ("summable", "summable", "random", "constant", "large-mean", "boundary")
EPSILONS = (None, None, 1e-5, 0.0, 1e-3, 0.25, 1e-12)
MOMENTUMS = (None, 0.9, 0.0, 1.0, 0.5, 0.99)


def channel_rows(choices: Choices, dt: DType, rows: int, n: int) -> np.ndarray:
    """`rows` rows of n values (float64 before packing) by a drawn recipe, packed to `dt`."""
    recipe = pick(choices, RECIPES)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    count = rows * n
    if recipe == "boundary" or not count:
        return array(choices, dt, (rows, n))
    if recipe == "summable":
        drawn = rng.integers(-8, 9, size=count) * pick(choices, (1.0, 0.25, 0.5))
    elif recipe == "constant":
        drawn = np.repeat(rng.integers(-8, 9, size=rows) * pick(choices, (0.5, 0.1)), n)
    elif recipe == "large-mean":
        centre = 100.0 if dt.name in ("float16", "bfloat16") else pick(choices, (1e4, 1e5, -3e3))
        drawn = centre + rng.standard_normal(count) * pick(choices, (1.0, 1e-2, 0.1))
    else:
        drawn = rng.standard_normal(count) * pick(choices, (1.0, 1e3, 1e-3, 3.0)) + pick(choices, (0.0, 0.0, 5.0))
    return pack(drawn.tolist(), dt).reshape(rows, n)


def dyadic(choices: Choices, dt: DType, shape: tuple[int, ...], low: int, high: int, exact: bool, positive: bool = False) -> np.ndarray:
    """Small dyadic values (halves in [low, high]) where `exact`, else random ones."""
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    count = math.prod(shape)
    if exact:
        values = rng.integers(low, high + 1, size=count) * 0.5
    else:
        values = np.abs(rng.standard_normal(count)) + 0.1 if positive else rng.standard_normal(count)
    return pack(values.tolist(), dt).reshape(shape)


def _dims(choices: Choices, since: int) -> tuple[int, ...]:
    if since == 1:
        rank = 4
    else:
        rank = choices.integer(1 if since >= 9 else 2, 5)
    dims = [choices.integer(1, 4)] + [choices.integer(1, 5)] + [choices.integer(1, 4) for _ in range(rank - 2)]
    return tuple(dims[:rank])


def _training(choices: Choices, since: int, attributes: dict) -> tuple[bool, tuple[bool, ...]]:
    """Whether the case trains, and the outputs it asks for (positions of every formal output)."""
    training = one_in(choices, 2)
    count = 3 if since >= 14 else 5
    if since >= 14:
        if training or one_in(choices, 3):
            attributes["training_mode"] = int(training)
        outputs = (True, True, True) if training else (True, False, False)
        return training, outputs
    if since < 7:
        attributes["is_test"] = 0 if training else 1
        return training, (True,) + (False,) * (count - 1)
    # Versions 7 and 9 train where statistics outputs are asked for; their names (mean, var) are
    # also the inputs' names, which conform's model builder cannot yet tell apart (see the report):
    # inference alone here, training in the case files' unit tests.
    return False, (True,) + (False,) * (count - 1)


def batch_normalization(choices: Choices, version: OpVersion, binding: dict[str, str]):
    since = version.since_version
    dt = dtype(binding["T"])
    param_dt = dtype(binding.get("T1", binding["T"]))
    stats_dt = dtype(binding.get("T2", binding.get("U", binding["T"])))
    dims = _dims(choices, since)
    attributes: dict = {}
    if since == 1:
        attributes["consumed_inputs"] = [0, 0, 0, 1, 1]
    training, outputs = _training(choices, since, attributes)
    spatial = True
    if since < 9 and len(dims) > 2 and one_in(choices, 4):
        attributes["spatial"] = 0
        spatial = False
    c = dims[1] if len(dims) > 1 else 1
    per = (c,) if spatial or since < 7 else tuple(dims[1:])
    x = _data(choices, dt, dims, spatial)
    exact = not one_in(choices, 3)
    epsilon = pick(choices, EPSILONS)
    if exact and not training:
        epsilon = pick(choices, (0.0, 0.25))
    if epsilon is not None:
        attributes["epsilon"] = epsilon
    momentum = pick(choices, MOMENTUMS)
    if momentum is not None and training:
        attributes["momentum"] = momentum
    mean_name, var_name = ("input_mean", "input_var") if since >= 14 else ("mean", "var")
    inputs = {"X": x, "scale": dyadic(choices, param_dt, per, -4, 4, exact), "B": dyadic(choices, param_dt, per, -4, 4, exact),
              mean_name: dyadic(choices, stats_dt, per, -6, 6, exact), var_name: _variance(choices, stats_dt, per, exact, epsilon)}
    if invalid_share(choices):
        if since >= 14 and not training and one_in(choices, 2):
            outputs = (True, True, True)
        else:
            wrong = (per[0] + 1,) + per[1:]
            inputs["scale"] = pack([1.0] * math.prod(wrong), param_dt).reshape(wrong)
    return made(version, binding, inputs, attributes, outputs=outputs)


def _variance(choices: Choices, dt: DType, shape: tuple[int, ...], exact: bool, epsilon: float | None) -> np.ndarray:
    """var such that var + epsilon is a power of four where `exact` (0.75 beside 0.25, 1 or 4 or
    1/4 beside 0), else positive random values."""
    if not exact or epsilon not in (0.0, 0.25):
        return dyadic(choices, dt, shape, 0, 8, False, positive=True)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    options = np.array([0.75, 3.75, 15.75]) if epsilon == 0.25 else np.array([1.0, 4.0, 0.25, 16.0])
    return pack(rng.choice(options, size=math.prod(shape)).tolist(), dt).reshape(shape)


def _data(choices: Choices, dt: DType, dims: tuple[int, ...], spatial: bool) -> np.ndarray:
    """X drawn as the rows each statistic reduces (per channel, or per activation), laid out as X."""
    if len(dims) == 1:
        return channel_rows(choices, dt, 1, dims[0]).reshape(dims)
    if not spatial:
        rows = channel_rows(choices, dt, math.prod(dims[1:]), dims[0])
        return rows.T.reshape(dims)
    rows = channel_rows(choices, dt, dims[1], math.prod(dims) // dims[1])
    moved = rows.reshape((dims[1], dims[0]) + dims[2:])
    return np.ascontiguousarray(np.moveaxis(moved, 0, 1))


STRATEGIES = {"BatchNormalization": batch_normalization}
