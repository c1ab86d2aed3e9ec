"""Random Attention cases (reference/attention.py): batch 1-2, heads 1-4 with kv heads dividing
them (MHA, GQA, MQA), sequence lengths of 1 to 4, head sizes 1 to 8 (V's its own), 4-D or 3-D
inputs; now and then a past cache (with its present outputs), is_causal, a boolean, float or
integer attn_mask (of Q's, K's and V's rank or less, from 24 a shorter last dim), softcap, scale,
softmax_precision, qk_matmul_output in each mode, nonpad_kv_seqlen (24) and sliding windows (25).
Values: normal at a drawn scale (so that scores spread), small integers and quarters (exact
scores), rows that make the softmax saturate, and now and then boundary-weighted values; and a
small share of what the text refuses (heads that do not divide, head sizes that differ, a past
key without its value, a mode past 3)."""

from __future__ import annotations

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick
from .movement import made

SCALES = (1.0, 3.0, 0.25, 10.0)


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    since = version.since_version
    t1, t2 = dtype(binding["T1"]), dtype(binding["T2"])
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    batch, kv_heads = choices.integer(1, 2), pick(choices, (1, 1, 2))
    q_heads = kv_heads * pick(choices, (1, 1, 2))
    sq, skv = choices.integer(1, 4), choices.integer(1, 4)
    d, dv = pick(choices, (2, 4, 8, 1, 3)), pick(choices, (2, 4, 3, 8))
    broken = pick(choices, ("heads", "size", "past", "mode")) if invalid_share(choices) else None
    recipe = pick(choices, ("normal", "normal", "integers", "saturate", "boundary"))
    scale = pick(choices, SCALES)

    def values(dt, dims):
        if recipe == "boundary":
            return array(choices, dt, dims)
        count = int(np.prod(dims))
        if recipe == "integers":
            drawn = rng.integers(-4, 5, size=count) / pick(choices, (1.0, 4.0))
        elif recipe == "saturate":
            drawn = rng.standard_normal(count) * 20
        else:
            drawn = rng.standard_normal(count) * scale
        return pack(drawn.tolist(), dt).reshape(dims)

    three_d = one_in(choices, 3)
    attributes: dict = {}
    k_heads = kv_heads + (broken == "heads")
    kd = d + (broken == "size")
    if three_d:
        q = values(t1, (batch, sq, q_heads * d))
        k = values(t1, (batch, skv, k_heads * kd))
        v = values(t2, (batch, skv, k_heads * dv))
        attributes.update(q_num_heads=q_heads, kv_num_heads=k_heads)
    else:
        q = values(t1, (batch, q_heads, sq, d))
        k = values(t1, (batch, k_heads, skv, kd))
        v = values(t2, (batch, k_heads, skv, dv))
    inputs = {"Q": q, "K": k, "V": v}
    past = choices.integer(1, 3) if one_in(choices, 3) else 0
    if past:
        inputs["past_key"] = values(t1, (batch, kv_heads, past, d))
        if broken != "past":
            inputs["past_value"] = values(t2, (batch, kv_heads, past, dv))
    total = past + skv
    if one_in(choices, 2):
        attributes["is_causal"] = 1
    if one_in(choices, 2):
        inputs["attn_mask"] = _mask(choices, rng, dtype(binding["U"]), (batch, q_heads, sq, total), since)
    if since >= 24 and not past and one_in(choices, 4):
        inputs["nonpad_kv_seqlen"] = rng.integers(0, skv + 1, size=batch).astype(np.int64)
    if since >= 25 and one_in(choices, 3):
        attributes["left_window_size"] = pick(choices, (-1, 0, 1, 2))
        attributes["right_window_size"] = pick(choices, (-1, 0, 1))
    if one_in(choices, 4):
        attributes["softcap"] = pick(choices, (1.0, 5.0, 30.0))
    if one_in(choices, 4):
        attributes["scale"] = pick(choices, (0.5, 1.0, 0.125, 2.0))
    if one_in(choices, 5):
        attributes["softmax_precision"] = pick(choices, (1, 10, 11, 16))
    mode = pick(choices, (0, 1, 2, 3)) if one_in(choices, 2) else None
    if broken == "mode":
        mode = 4
    if mode is not None:
        attributes["qk_matmul_output_mode"] = mode
    outputs = (True, bool(past), bool(past), mode is not None)
    return made(version, binding, inputs, attributes, outputs=outputs)


def _mask(choices: Choices, rng, dt, full: tuple[int, ...], since: int) -> np.ndarray:
    """A mask of a broadcastable shape: (Sq, T), (B, 1, Sq, T), (1, T) or the full 4-D; from 24 a
    shorter last dim now and then."""
    batch, heads, sq, total = full
    dims = pick(choices, ((sq, total), (batch, 1, sq, total), (1, total), full))
    if since >= 24 and total > 2 and one_in(choices, 4):
        dims = (*dims[:-1], total - 1)
    count = int(np.prod(dims))
    if dt.kind == "bool":
        drawn = rng.random(count) < pick(choices, (0.8, 0.5, 1.0, 0.0))
        return drawn.reshape(dims)
    if dt.kind in ("int", "uint"):
        return pack(rng.integers(0, 2, size=count).tolist(), dt).reshape(dims)
    drawn = rng.standard_normal(count) * 2
    if one_in(choices, 2):
        drawn[rng.random(count) < 0.3] = -np.inf
    return pack(drawn.tolist(), dt).reshape(dims)


STRATEGIES = {"Attention": example}
