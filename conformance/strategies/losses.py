"""Random NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss cases (reference/losses.py): inputs
(N, C) or (N, C, d1..dk) with k up to 2, N = 1 and C = 1 among them, now and then 4096 samples of 2
classes in a 16-bit type (where a float16 sum and a float32 one part); targets mostly valid, some
equal to an ignore_index drawn in [0, C) or outside it (or every one of them); weights absent or
given; each reduction; the optional log_prob asked for or left out. Values by recipe:

- "exact": small integers (quarters for the softmax's scores) and weights of 1 or powers of two,
  so the losses and their sums are exact in every accumulator: a dropped term, an unapplied
  weight or a wrong denominator is told bitwise;
- "random": normal values at a drawn scale, weights in (0.1, 2);
- "boundary": the shared `array` draws (NaN, ±inf, max) for the scores and the weights;

and a small share of what the text forbids (a target outside [0, C) that is not ignore_index, a
weight of the wrong size, an unknown reduction, an input of rank 1).
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import DType, dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick
from .movement import made

LONG = 4096
RECIPES = ("exact", "exact", "random", "random", "boundary")
NAMES = {"NegativeLogLikelihoodLoss": ("input", "target", "weight"),
         "SoftmaxCrossEntropyLoss": ("scores", "labels", "weights")}


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    scores_name, target_name, weight_name = NAMES[version.op]
    dt, index = dtype(binding["T"]), dtype(binding["Tind"])
    dims = _dims(choices, dt)
    recipe = pick(choices, RECIPES)
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    softmax = version.op == "SoftmaxCrossEntropyLoss"
    values = _values(choices, rng, dt, dims, recipe, softmax)
    classes = dims[1]
    samples = (dims[0], *dims[2:])
    attributes: dict = {}
    if not one_in(choices, 4):  # else the default, mean
        attributes["reduction"] = pick(choices, ("none", "sum", "mean", "mean"))
    target = rng.integers(0, max(classes, 1), size=samples) if classes else np.zeros(samples, dtype=np.int64)
    if not one_in(choices, 3):
        ignore = pick(choices, (0, classes - 1, -1, -100, classes, 1))
        attributes["ignore_index"] = int(ignore)
        share = pick(choices, (0.0, 0.1, 0.25, 0.5, 0.25, 1.0))
        target = np.where(rng.random(samples) < share, ignore, target)
    inputs = {scores_name: values, target_name: np.asarray(target).astype(index.np_dtype).reshape(samples)}
    if one_in(choices, 2):
        inputs[weight_name] = _weights(choices, rng, dt, classes, recipe)
    if invalid_share(choices):
        _invalid(choices, inputs, attributes, scores_name, target_name, weight_name, classes, index)
    outputs = (True, False) if softmax and one_in(choices, 3) else ()
    return made(version, binding, inputs, attributes, outputs)


def _dims(choices: Choices, dt: DType) -> tuple[int, ...]:
    if one_in(choices, 16) and dt.name in ("float16", "bfloat16"):
        return (LONG, 2)
    n = pick(choices, (1, 2, 3, 4, 1))
    c = pick(choices, (1, 2, 3, 5, 4))
    extra = pick(choices, ((), (), (2,), (3,), (1,), (2, 2)))
    if one_in(choices, 24):
        n = 0
    return (n, c, *extra)


def _values(choices: Choices, rng: np.random.Generator, dt: DType, dims: tuple[int, ...], recipe: str,
            softmax: bool) -> np.ndarray:
    count = math.prod(dims)
    if recipe == "boundary" or not count:
        return array(choices, dt, dims)
    if recipe == "exact":
        drawn = rng.integers(-8, 9, size=count) * (0.25 if softmax else 1.0)
    else:
        drawn = rng.standard_normal(count) * pick(choices, (1.0, 3.0, 0.01, 30.0))
    return pack(drawn.tolist(), dt).reshape(dims)


def _weights(choices: Choices, rng: np.random.Generator, dt: DType, classes: int, recipe: str) -> np.ndarray:
    if recipe == "boundary" and one_in(choices, 2):
        return array(choices, dt, (classes,))
    if recipe == "exact":
        drawn = rng.choice(np.array([1.0, 0.5, 2.0, 0.25, 1.0, 4.0]), size=classes)
        if one_in(choices, 4):
            drawn = np.ones(classes)
    else:
        drawn = rng.uniform(0.1, 2.0, size=classes)
    return pack(drawn.tolist(), dt).reshape(classes)


def _invalid(choices: Choices, inputs: dict, attributes: dict, scores_name: str, target_name: str, weight_name: str,
             classes: int, index: DType) -> None:
    """One thing the text forbids, in place."""
    kind = pick(choices, ("target", "target", "weight", "reduction", "rank"))
    target = inputs[target_name]
    if kind == "target" and target.size:
        wrong = pick(choices, (classes, -1, classes + 7))
        if attributes.get("ignore_index") == wrong:
            attributes.pop("ignore_index")
        flat = target.reshape(-1).copy()
        flat[choices.integer(0, flat.size - 1)] = wrong
        inputs[target_name] = flat.reshape(target.shape).astype(index.np_dtype)
    elif kind == "weight":
        scores = inputs[scores_name]
        inputs[weight_name] = np.ones(classes + 1, dtype=scores.dtype)
    elif kind == "reduction":
        attributes["reduction"] = pick(choices, ("average", "MEAN", ""))
    else:
        scores = inputs[scores_name]
        inputs[scores_name] = scores.reshape(-1)[: max(scores.shape[0], 1)] if scores.size else scores.reshape(-1)
        inputs[target_name] = target.reshape(-1)[: inputs[scores_name].shape[0]]


STRATEGIES = {"NegativeLogLikelihoodLoss": example, "SoftmaxCrossEntropyLoss": example}
