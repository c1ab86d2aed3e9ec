"""Random RotaryEmbedding cases (reference/rotary_embedding.py): a 4-D X (batch, heads, seq,
head_size) or a 3-D one with `num_heads`, head sizes 2 to 8, full or partial rotation
(`rotary_embedding_dim`), halves or `interleaved`, caches indexed by `position_ids` or given per
token; the caches hold the cos and sin of real angles (pos·θ_k, as a model's are) or, now and
then, boundary-weighted values; X normal values at a drawn scale or boundary-weighted; and a small
share of what the algorithm refuses (a cache of the wrong width, an odd rotary dim, a 3-D X
without num_heads, a position id past the cache)."""

from __future__ import annotations

import numpy as np

from ..case import Example
from ..dtypes import dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, array, invalid_share, one_in, pick


def example(choices: Choices, version: OpVersion, binding: dict[str, str]) -> Example:
    dt = dtype(binding["T"])
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    batch, seq, heads = choices.integer(1, 2), choices.integer(1, 3), choices.integer(1, 2)
    head_size = pick(choices, (2, 4, 6, 8))
    rd = pick(choices, (0, head_size, 2, 4)) if head_size >= 4 else pick(choices, (0, head_size))
    attributes: dict = {}
    if rd:
        attributes["rotary_embedding_dim"] = rd
    if one_in(choices, 2):
        attributes["interleaved"] = 1
    three_d = one_in(choices, 2)
    broken = pick(choices, ("cache", "odd", "heads", "position")) if invalid_share(choices) else None
    if three_d:
        dims = (batch, seq, heads * head_size)
        if broken != "heads":
            attributes["num_heads"] = heads
    else:
        dims = (batch, heads, seq, head_size)
    if broken == "odd":
        attributes["rotary_embedding_dim"] = 3
    half = (rd or head_size) // 2 + (broken == "cache")
    x = (array(choices, dt, dims) if one_in(choices, 4)
         else pack((rng.standard_normal(int(np.prod(dims))) * pick(choices, (1.0, 10.0, 0.01))).tolist(), dt).reshape(dims))
    with_ids = one_in(choices, 2) is False
    positions = choices.integer(seq, seq + 4)
    theta = 10000.0 ** (-np.arange(half) * 2.0 / max(2 * half, 1))
    if with_ids:
        ids = rng.integers(0, positions, size=(batch, seq)).astype(np.int64)
        if broken == "position":
            ids[0, 0] = positions
        angles = np.arange(positions)[:, None] * theta[None, :]
    else:
        ids = None
        angles = rng.integers(0, 64, size=(batch, seq))[..., None] * theta
    cos, sin = np.cos(angles), np.sin(angles)
    if one_in(choices, 8):
        cos = array(choices, dt, cos.shape).astype(np.float64) if cos.size else cos
    inputs = {"X": x, "cos_cache": pack(cos.ravel().tolist(), dt).reshape(cos.shape),
              "sin_cache": pack(sin.ravel().tolist(), dt).reshape(sin.shape), "position_ids": ids}
    return Example(version, "hypothesis", dict(binding), inputs, attributes, "hypothesis", "T")


STRATEGIES = {"RotaryEmbedding": example}
