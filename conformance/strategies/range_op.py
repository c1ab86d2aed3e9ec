"""Random Range cases: scalar start, limit and delta of T whose count stays small (at most
MOST_ELEMENTS), drawn where runtimes break: start at T's extremes (so that `limit - start` or
`start + i*delta` leave T), negative deltas, float steps that do not divide the span (the count's
`ceil` rounds), limits just beside a step boundary (where the count depends on the precision it is
computed in), empty ranges (limit before start), and float starts far from 0 (where the values of
`start + i*delta` and of the body's `prev + delta` part); Range-27's `stash_type` written or not.
A small share is what the text forbids or leaves without a count: an input of rank 1 or more, delta 0
(limit beyond start: an endless range; limit before it: a count divided by zero), a non-finite bound.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto

from ..dtypes import DType, dtype
from ..registry import OpVersion
from .common import Choices, boundary_values, invalid_share, neighbours, one_in, pick, scalar
from .movement import made

MOST_ELEMENTS = 64  # a drawn case's count, in every reading
SMALL_DELTAS = (1, -1, 2, -2, 3, -5, 7)
FLOAT_DELTAS = (0.5, -0.5, 0.1, -0.1, 0.3, 1.5, -0.25, 1e-3, 1 / 3, -2 / 3)
STASH_TYPES = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16)


def held(value, dt: DType):
    """`value` as T holds it: a Python int (clamped into T) or a float rounded to T."""
    if dt.kind in ("int", "uint"):
        return min(max(int(value), int(dt.lowest)), int(dt.max))
    with np.errstate(all="ignore"):
        return float(np.array(value, dtype=np.float64).astype(dt.np_dtype).astype(np.float64))


def _start(choices: Choices, dt: DType):
    """A start: small, at T's extremes (ints) or far from 0 (floats), or any scalar of T."""
    kind = pick(choices, ("small", "extreme", "any"))
    if kind == "small":
        return held(choices.integer(-10, 10), dt)
    if kind == "extreme":
        if dt.kind in ("int", "uint"):
            return held(pick(choices, (dt.max, dt.lowest)) - choices.integer(-20, 20), dt)
        return held(pick(choices, _far_starts(dt)), dt)
    value = scalar(choices, dt)
    return held(value, dt) if dt.kind in ("int", "uint") or math.isfinite(value) else held(0, dt)


def _far_starts(dt: DType) -> tuple[float, ...]:
    """Float starts far from 0, finite in T: where T's integers stop being exact (2**(p+1)), a
    half-integer a million out, a quarter of T's largest value (where a few steps overflow)."""
    exact_to = float(2 ** (_precision(dt) + 1))
    found = (exact_to, -exact_to, exact_to / 3, 1e6 + 0.5, float(dt.max) / 4, -float(dt.max) / 4)
    return tuple(v for v in found if abs(v) <= float(dt.max))


def _precision(dt: DType) -> int:
    """T's significand bits after the point (float: 23, double: 52, float16: 10, bfloat16: 7)."""
    import ml_dtypes  # numpy's finfo does not know bfloat16

    return int(ml_dtypes.finfo(dt.np_dtype).nmant)


def _delta(choices: Choices, dt: DType):
    """A delta, never 0: small of either sign, a fraction (floats), or a boundary value of T."""
    kind = pick(choices, ("small", "fraction", "boundary"))
    if kind == "fraction" and dt.kind == "float":
        return held(pick(choices, FLOAT_DELTAS), dt)
    if kind == "boundary":
        found = [v for v in boundary_values(dt) if v != 0 and (dt.kind != "float" or math.isfinite(v))]
        return held(pick(choices, found), dt)
    return held(pick(choices, SMALL_DELTAS), dt)


def _limit(choices: Choices, dt: DType, start, delta):
    """A limit `count` steps (0..20, or one back: an empty range) from start, then on the step
    boundary, beside it (one ulp or one unit either way), or half a step past it."""
    count = pick(choices, (choices.integer(0, 20), 0, 1, -1))
    target = start + count * delta
    where = pick(choices, ("on", "beside", "half"))
    if where == "half":
        target += delta / 2 if dt.kind == "float" else delta // 2
    limit = held(target, dt)
    if where == "beside":
        near = neighbours(dt, limit)
        if near:
            limit = pick(choices, near)
    return limit


def _scalars(dt: DType, start, limit, delta) -> dict:
    return {name: np.array(value, dtype=np.float64).astype(dt.np_dtype) if dt.kind == "float"
            else np.array(value, dtype=dt.np_dtype) for name, value in (("start", start), ("limit", limit), ("delta", delta))}


def _broken(choices: Choices, dt: DType, inputs: dict) -> dict:
    """One thing the text forbids, or leaves without a count."""
    kinds = ["not-scalar", "delta-zero"] + (["non-finite"] if dt.kind == "float" else [])
    kind = pick(choices, kinds)
    if kind == "not-scalar":
        name = pick(choices, ("start", "limit", "delta"))
        inputs[name] = np.repeat(inputs[name].reshape(1), choices.integer(1, 2))
    elif kind == "delta-zero":
        inputs["delta"] = np.zeros((), dtype=dt.np_dtype)
    else:
        name = pick(choices, ("start", "limit", "delta"))
        inputs[name] = np.array(pick(choices, (math.nan, math.inf, -math.inf))).astype(dt.np_dtype)
    return inputs


def _attributes(choices: Choices, version: OpVersion) -> dict:
    if version.attribute("stash_type") is None or one_in(choices, 2):
        return {}
    return {"stash_type": int(pick(choices, STASH_TYPES))}


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    from ..reference.range_op import largest_count  # the reference computes every reading's count

    dt = dtype(binding["T"])
    start = _start(choices, dt)
    delta = _delta(choices, dt)
    limit = _limit(choices, dt, start, delta)
    inputs = _scalars(dt, start, limit, delta)
    attributes = _attributes(choices, version)
    if invalid_share(choices):
        inputs = _broken(choices, dt, inputs)
    drawn = made(version, binding, inputs, attributes)
    if largest_count(drawn) <= MOST_ELEMENTS:
        return drawn
    # A count beyond the cap (a tiny delta, a limit rounded far off): three steps from start instead.
    return made(version, binding, _scalars(dt, start, held(start + 3 * delta, dt), delta), attributes)


STRATEGIES = {"Range": example}
