"""RotaryEmbedding (version 23), from the schema text in onnx.defs, whose doc defines it by a Python
algorithm (`rotary_embedding(input, cos_cache, sin_cache, position_ids, interleaved,
rotary_embedding_dim, num_heads)`); the version also has a context-dependent function body, which
conform evaluates itself where the prose's reading is missed.

By the algorithm: a 4-D X (batch, num_heads, seq, head_size) or a 3-D X (batch, seq, hidden) split
into `num_heads` heads; the first `rotary_embedding_dim` (0: all) dims of each head rotated, the
rest copied; the caches indexed by `position_ids` ([max_pos, rd/2]) or given per token ([batch, seq,
rd/2]); the rotated dims split into halves, or into even and odd ones (`interleaved`), and

    real = cos·x1 − sin·x2,  imag = sin·x1 + cos·x2

put back in place. What the algorithm refuses (its `raise ValueError`, `assert`, an index or a
split it cannot do) is invalid: a cache whose last dim is not rd/2, a 3-D X without num_heads or
whose hidden size does not split into them, an odd rotary dim, one past head_size, a position id
outside the cache. A negative position id inside the cache indexes from its end, as Python's
indexing does; a runtime may also refuse it.

Judging: the copied dims exactly; each rotated element is a two-term dot product, both products
and the sum rounded in the accumulator: γ(2)·(|c·x1| + |s·x2|) + ½ ULP of the output, a tier for a
16-bit type computed in float32 and one in its own type (bounds.sum_tiers with n = 2 products).
"""

from __future__ import annotations

import numpy as np

from ..bounds import ElementBound, Tier, accumulators, gamma, half_ulp, ksb, unit_roundoff
from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics

NUM_HEADS = ("X: For cases with a 3D input tensor, `num_heads` attribute must be provided and `hidden_size` must be an "
             "even multiple of `num_heads` where `hidden_size = num_heads * head_size`")
RANK = "X: 4D tensor with shape `(batch_size, num_heads, sequence_length, head_size)` or 3D tensor"
CACHE = ("raise ValueError(f\"Last dimension of cos cache ({cos_cache.shape[-1]}) does not match "
         "rotary_embedding_dim/2 ({rotary_embedding_dim_half}).\")")
CACHE_SHAPE = ("cos_cache: 2D tensor with shape `(max_position_id_plus_1, head_size / 2)` ... when `position_ids` are "
               "provided. 3D tensor with shape `(batch_size, sequence_length, head_size / 2)` ... when `position_ids` "
               "are not provided")
ODD = "For cases with a 4D input tensor, `head_size` has to be even; x1, x2 = np.split(x_rotate, 2, axis=-1)"
TOO_WIDE = "x_rotate = input[:, :, :, :rotary_embedding_dim]: a rotary_embedding_dim past head_size"
POSITION = "cos_cache = cos_cache[position_ids]: a position id outside the cache"
NEGATIVE_POSITION = ("a negative position id: the algorithm's cos_cache[position_ids] indexes from the cache's end, "
                     "which a runtime may also refuse")
REASON = ("each rotated value a two-term dot product, both products and the sum rounded in the accumulator: "
          "γ(2)·(|c·x1| + |s·x2|) + ½ ULP")
RULES = ("num-heads", "rank", "cache-shape", "odd-rotary-dim", "rotary-dim-too-large", "position-out-of-range")


class RotaryEmbedding23(VersionSemantics):
    """Version 23: the algorithm of its doc."""

    since = 23

    def expected(self, example: Example) -> Expected:
        x = example.inputs["X"]
        out = np.dtype(x.dtype)
        found = _heads(example)
        if isinstance(found, Invalid):
            return Expected(invalid=found)
        heads, rd = found
        caches = _caches(example, heads.shape, rd)
        if isinstance(caches, Invalid):
            return Expected(invalid=caches)
        cos, sin = caches
        precise, magnitude, rotated = _rotate(heads, cos, sin, rd, bool(example.attributes.get("interleaved", 0)))
        y = _restored(precise, x.shape)
        bound = _bound(y, _restored(magnitude, x.shape), _restored(rotated, x.shape), out)
        ids = example.inputs.get("position_ids")
        negative = ids is not None and ids.size and bool((ids < 0).any())
        with np.errstate(all="ignore"):  # a rotated value past the type's max rounds to inf
            rounded = y.astype(out)
        return Expected(readings=(Reading((rounded,), precise=(y,)),), budgets=(bound,),
                        may_reject=NEGATIVE_POSITION if negative else None)


def _heads(example: Example) -> tuple[np.ndarray, int] | Invalid:
    """X as float64 (batch, seq, heads, head_size), and the rotary dim; or why the text refuses it."""
    x = example.inputs["X"]
    with np.errstate(all="ignore"):
        wide = x.astype(np.float64)
    if x.ndim == 4:
        heads = np.transpose(wide, (0, 2, 1, 3))
    elif x.ndim == 3:
        num_heads = int(example.attributes.get("num_heads", 0))
        if num_heads <= 0 or x.shape[2] % num_heads:
            return Invalid("num-heads", NUM_HEADS)
        heads = wide.reshape(x.shape[0], x.shape[1], num_heads, x.shape[2] // num_heads)
    else:
        return Invalid("rank", RANK)
    head_size = heads.shape[3]
    rd = int(example.attributes.get("rotary_embedding_dim", 0)) or head_size
    if rd > head_size or rd < 0:
        return Invalid("rotary-dim-too-large", TOO_WIDE)
    if rd % 2:
        return Invalid("odd-rotary-dim", ODD)
    return heads, rd


def _caches(example: Example, shape: tuple[int, ...], rd: int) -> tuple[np.ndarray, np.ndarray] | Invalid:
    """cos and sin per (batch, seq, rd/2), as float64; or why the text refuses them."""
    batch, seq = shape[0], shape[1]
    with np.errstate(all="ignore"):
        cos, sin = (example.inputs[name].astype(np.float64) for name in ("cos_cache", "sin_cache"))
    ids = example.inputs.get("position_ids")
    if cos.shape != sin.shape:
        return Invalid("cache-shape", CACHE_SHAPE)
    if ids is not None:
        if cos.ndim != 2 or ids.shape != (batch, seq):
            return Invalid("cache-shape", CACHE_SHAPE)
        if ids.size and (ids.max() >= cos.shape[0] or ids.min() < -cos.shape[0]):
            return Invalid("position-out-of-range", POSITION)
        cos, sin = cos[ids], sin[ids]
    elif cos.shape[:-1] != (batch, seq) or cos.ndim != 3:
        return Invalid("cache-shape", CACHE_SHAPE)
    if cos.shape[-1] != rd // 2:
        return Invalid("cache-shape", CACHE)
    return cos, sin


def _rotate(heads: np.ndarray, cos: np.ndarray, sin: np.ndarray, rd: int, interleaved: bool):
    """The rotated heads (float64), Σ|products| per element (0 where copied) and where rotated."""
    c, s = cos[:, :, None, :], sin[:, :, None, :]
    part = heads[..., :rd]
    x1, x2 = (part[..., 0::2], part[..., 1::2]) if interleaved else (part[..., :rd // 2], part[..., rd // 2:])
    with np.errstate(all="ignore"):
        real, imag = c * x1 - s * x2, s * x1 + c * x2
        real_size = np.abs(c * x1) + np.abs(s * x2)
        imag_size = np.abs(s * x1) + np.abs(c * x2)
    out = heads.copy()
    magnitude = np.zeros(heads.shape)
    rotated = np.zeros(heads.shape, dtype=bool)
    if interleaved:
        out[..., 0:rd:2], out[..., 1:rd:2] = real, imag
        magnitude[..., 0:rd:2], magnitude[..., 1:rd:2] = real_size, imag_size
    else:
        out[..., :rd // 2], out[..., rd // 2:rd] = real, imag
        magnitude[..., :rd // 2], magnitude[..., rd // 2:rd] = real_size, imag_size
    rotated[..., :rd] = True
    return out, magnitude, rotated


def _restored(heads: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """(batch, seq, heads, head_size) back to X's layout."""
    if len(shape) == 4:
        return np.transpose(heads, (0, 2, 1, 3))
    return heads.reshape(shape)


def _bound(y: np.ndarray, magnitude: np.ndarray, rotated: np.ndarray, out: np.dtype) -> ElementBound:
    tiers = []
    finite = np.isfinite(y) & np.isfinite(magnitude)
    with np.errstate(all="ignore"):
        rounding = np.abs(np.where(finite, y, 0.0).astype(out).astype(np.float64) - np.where(finite, y, 0.0))
    for label, acc in accumulators(out):
        allowed = half_ulp(y, out) + gamma(2, unit_roundoff(acc)) * np.where(finite, magnitude, 0.0)
        # a copied value is exact; a rotated one allows at least its own rounding
        allowed = np.where(rotated & finite, np.maximum(allowed, rounding), 0.0)
        tiers.append(Tier(label, allowed, ksb(2, acc, out) * np.ones(y.shape)))
    return ElementBound(tuple(tiers), "½ ulp(y) + γ(2)·(|c·x1| + |s·x2|)", REASON)


def interleaved(example: Example) -> bool:
    return bool(example.attributes.get("interleaved", 0))


def partial_rotation(example: Example) -> bool:
    rd = int(example.attributes.get("rotary_embedding_dim", 0))
    x = example.inputs.get("X")
    if x is None or not rd:
        return False
    head = x.shape[-1] if x.ndim == 4 else x.shape[-1] // max(int(example.attributes.get("num_heads", 1)), 1)
    return rd < head


def three_d(example: Example) -> bool:
    x = example.inputs.get("X")
    return x is not None and x.ndim == 3


def without_position_ids(example: Example) -> bool:
    return example.inputs.get("position_ids") is None


def non_finite_data(example: Example) -> bool:
    """An inf or NaN in X or the caches."""
    with np.errstate(all="ignore"):
        return any(example.inputs.get(name) is not None and not np.isfinite(example.inputs[name].astype(np.float64)).all()
                   for name in ("X", "cos_cache", "sin_cache"))


REFERENCE = OpReference(
    op="RotaryEmbedding", dtype_param="T", data_inputs=("X", "cos_cache", "sin_cache", "position_ids"),
    semantics=(RotaryEmbedding23,),
    traits={"interleaved": interleaved, "partial-rotation": partial_rotation, "three-d-input": three_d,
            "without-position-ids": without_position_ids, "non-finite-data": non_finite_data},
    rules=RULES)
