"""Attention (versions 23, 24, 25), from the schema text in onnx.defs (LinearAttention-27: linear_attention.py).
Each version also has a context-dependent function body, which conform evaluates itself where the
prose's reading is missed, as far as it covers the ops inside it (reference/function_body.py).

Attention, by its doc and its diagram ("Q*sqrt(scale) K*sqrt(scale) ... Transpose ... MatMul ...
softcap (if provided) ... at_mask---Add ... Softmax ... MatMul ... Y"):

- Q (batch, q_num_heads, q_seq, head_size) and K, V (batch, kv_num_heads, kv_seq, ·), or 3-D
  (batch, seq, heads·size) split by the `q_num_heads` / `kv_num_heads` attributes; past_key and
  past_value are concatenated before K and V along the sequence (present_key, present_value, 4-D);
- group-query attention: query head h reads kv head h // (q_num_heads / kv_num_heads), the groups
  of consecutive query heads of the GQA paper the text cites;
- scores scale·Q·Kᵀ (scale default 1/sqrt(head_size)), then softcap·tanh(scores / softcap) where
  softcap > 0, then the bias: a boolean attn_mask's False and the causal frontier (`j <= i +
  offset`) give −inf, a float attn_mask is added; from 24, keys at or past nonpad_kv_seqlen[b] are
  padding, a mask shorter than the total sequence is padded with −inf, and without past_key the
  causal offset is nonpad_kv_seqlen − q_seq; from 25, left_window_size / right_window_size bound
  the keys each query sees (`p - left_window_size <= j <= p + right_window_size`, −1 unbounded);
- softmax over the keys, a fully-masked row giving zeros ("produces a zero output row ... not
  NaN"), then the product with V;
- qk_matmul_output by qk_matmul_output_mode: 0 the scaled product, 1 after softcap, 2 after the
  bias, 3 the softmax (zero rows as Y's), each in T1.

An integer attn_mask (U allows every integer type) is neither of the two kinds the text
describes ("a boolean mask ... or a float mask of the same type as query"): both readings, added
as a number and taken as a boolean (nonzero attends). A float mask of another type than Q is
added, and may be refused. An IEEE NaN or infinity in Q, K or V is carried through the diagram as
written (a masked key's −inf bias added to a NaN score is NaN, 0·NaN in the product with V is NaN);
leaving the masked keys out (as a kernel that skips them does) is a reading too.

Judging Y by a per-element bound, the error carried through the diagram's steps (as
reference/softmax.py does for Softmax) in the accumulator u of each tier and the softmax's
precision u_s (softmax_precision, else the accumulator):

- each score within δ_j = γ(D + 6)·|scale|·Σ_d|q_d·k_jd| (a dot product of D terms, sqrt(scale)
  or scale rounded and applied to either side; with an absolute η·sqrt|scale|·Σ_d(|q_d|+|k_jd|) +
  (2D+2)·η, η half T1's smallest subnormal, where Q·sqrt(scale) or a product is subnormal), plus,
  with softcap, its tanh within 4 ULP and two roundings (11u·|t_j|; softcap·tanh has slope at
  most 1), plus the mask's addition (u·|z_j|);
- the softmax of scores each off by at most Δ = max δ_j: every p_j within a factor e^(±2Δ), and
  its own computation (exp, sum, division: softmax.py's (n + 7 + 5|d_j|)·u_s), with an absolute
  smallest normal where an exp underflows; a cast to T1 where softmax_precision differs (u_out);
- the product with V, a dot product of n terms: γ(n)·Σ p_j|v_j|, and the rounding to T1.

So |Ŷ − Y| ≤ Σ_j p_j|v_j|·((1+ε_j)(1+u_c)(1+γ(n)) − 1) + n·tiny·max|v| + ½ ULP(Y). The scores
output (modes 0-2) gets δ_j + ½ ULP, the softmax output (mode 3) p_j·ε_j + ½ ULP. present_key and
present_value are concatenations: exact. Where |scale|·Σ|q·k| (with the mask's bias) passes a tier's
accumulator's max, its products or partial sums overflow in some order: that score, and Y's whole
row, may be any infinity or NaN (`Tier.non_finite`; a finite answer is still held to the bound), as
may a Y element where a probability that may underflow to 0 meets an infinite value (0·inf).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, accumulators, gamma, half_ulp, unit_roundoff
from ..case import Example
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, readings

RANKS = ("Q: 4D tensor with shape `(batch_size, q_num_heads, q_sequence_length, head_size)` or 3D tensor with "
         "shape `(batch_size, q_sequence_length, q_hidden_size)` (and K, V of the same rank)")
NUM_HEADS = ("q_num_heads: Number of heads of query. Must be used with 3D inputs of Q, K and V. For cases with a 3D "
             "input tensor, `q_hidden_size = q_num_heads * head_size`")
GQA = "Group-query Attention (GQA): `q_num_heads > kv_num_heads`, `q_num_heads % kv_num_heads == 0`"
SHAPES = ("K: shape `(batch_size, kv_num_heads, kv_sequence_length, head_size)`; V: shape `(batch_size, kv_num_heads, "
          "kv_sequence_length, v_head_size)`: Q, K and V agree on batch_size, K on head_size, K and V on heads and length")
PAST = "Both past and present state key/values are optional. They shall be used together, and not allowed to use only one of them."
PAST_SHAPE = "past_key: past state cache for key with shape `(batch_size, kv_num_heads, past_sequence_length, head_size)`"
MASK = ("attn_mask: Shape must be broadcastable to 4D tensor with shape `(batch_size, q_num_heads, q_sequence_length, "
        "total_sequence_length)`")
MASK_24 = "attn_mask: The last dimension can also be shorter than `total_sequence_length` and will be padded to `total_sequence_length` with negative infinity."
MODE = ("qk_matmul_output_mode: If set to `0` ... If set to `1` ... If set to `2` ... If set to `3`, qk_matmul_output is "
        "the output after the softmax operation")
SOFTMAX_PRECISION = "softmax_precision: Supported values are: `1` (FLOAT), `10` (FLOAT16), `11` (DOUBLE), `16` (BFLOAT16)."
NONPAD = "nonpad_kv_seqlen: A vector of integers of shape `(batch_size,)`"
NONPAD_WITH_PAST = ("nonpad_kv_seqlen: This should not be used together with `past_key` and `past_value` inputs: "
                    "'should not', which a runtime may enforce")
OTHER_FLOAT_MASK = "a float mask of another type than Q: the text describes 'a float mask of the same type as query, key, value'"
INTEGER_MASK = ("an integer attn_mask: the text describes 'a boolean mask where a value of `True` indicates that the element "
                "should take part in attention' and 'a float mask of the same type as query, key, value that is added'")
AS_NUMBER, AS_BOOLEAN = "integer mask added as a number", "integer mask as a boolean (nonzero attends)"
SKIPPED = "a masked key is left out: its score and value are not read"
NON_FINITE = ("the text does not say whether a key the mask excludes is still computed: its −inf bias added to a NaN score, "
              "its probability 0 times a NaN or infinite value")
RULES = ("rank", "num-heads", "heads-not-divisible", "shape-mismatch", "past-pair", "mask-shape", "qk-mode",
         "softmax-precision", "nonpad-shape")
PRECISIONS = {1: np.dtype(np.float32), 10: np.dtype(np.float16), 11: np.dtype(np.float64), 16: np.dtype(ml_dtypes.bfloat16)}
Y_REASON = ("the error carried through the diagram: scores within γ(D+6)·|scale|·Σ|q·k| (plus softcap's tanh and the mask's "
            "addition), the softmax of scores each within Δ (e^(±2Δ)) and its own exp, sum and division, the product with V "
            "within γ(n)·Σp|v|, rounded to T1")
QK_REASON = "scores: a dot product of head_size terms scaled, γ(D+6)·|scale|·Σ|q·k|, plus softcap's tanh and the mask's addition"
P_REASON = "the softmax of scores each within Δ: e^(±2Δ), and its own exp, sum and division, rounded to T1"


@dataclass
class Setup:
    """One case's operands in the 4-D layout, as float64, and what the attributes make of them."""

    q: np.ndarray  # (B, Hq, Sq, D)
    k: np.ndarray  # (B, Hkv, T, D), past and present
    v: np.ndarray  # (B, Hkv, T, Dv)
    present_k: np.ndarray  # in K's type
    present_v: np.ndarray
    allowed: np.ndarray  # (B, Hq, Sq, T) bool: keys each query may attend
    bias: np.ndarray  # (B, Hq, Sq, T) float mask values (0 where none)
    float_mask: bool
    scale: float
    softcap: float
    mode: int
    u_softmax: np.dtype | None
    three_d: bool
    out: np.dtype
    value_type: np.dtype


def _wide(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return x.astype(np.float64)


def _four_d(x: np.ndarray, heads: int) -> np.ndarray:
    """A 3-D (B, S, H·D) input as (B, H, S, D)."""
    return x.reshape(x.shape[0], x.shape[1], heads, x.shape[2] // heads).transpose(0, 2, 1, 3)


def setup(example: Example, since: int, mask_as_boolean: bool = False) -> Setup | Invalid:
    """The case's operands and attributes (see the module's docstring), or why the text refuses them."""
    q, k, v = example.inputs["Q"], example.inputs["K"], example.inputs["V"]
    a = example.attributes
    if q.ndim not in (3, 4) or k.ndim != q.ndim or v.ndim != q.ndim:
        return Invalid("rank", RANKS)
    three_d = q.ndim == 3
    if three_d:
        hq, hkv = int(a.get("q_num_heads", 0)), int(a.get("kv_num_heads", 0))
        if hq <= 0 or hkv <= 0 or q.shape[2] % hq or k.shape[2] % hkv or v.shape[2] % hkv:
            return Invalid("num-heads", NUM_HEADS)
        q4, k4, v4 = _four_d(q, hq), _four_d(k, hkv), _four_d(v, hkv)
    else:
        q4, k4, v4 = q, k, v
    batch, hq, sq, d = q4.shape
    hkv = k4.shape[1]
    if hkv == 0 or hq % hkv:
        return Invalid("heads-not-divisible", GQA)
    if k4.shape[0] != batch or v4.shape[0] != batch or k4.shape[3] != d or v4.shape[1] != hkv or v4.shape[2] != k4.shape[2]:
        return Invalid("shape-mismatch", SHAPES)
    past_k, past_v = example.inputs.get("past_key"), example.inputs.get("past_value")
    if (past_k is None) != (past_v is None):
        return Invalid("past-pair", PAST)
    if past_k is not None:
        if (past_k.ndim != 4 or past_v.ndim != 4 or past_k.shape[:2] != (batch, hkv) or past_v.shape[:2] != (batch, hkv)
                or past_k.shape[2] != past_v.shape[2] or past_k.shape[3] != d or past_v.shape[3] != v4.shape[3]):
            return Invalid("shape-mismatch", PAST_SHAPE)
        present_k, present_v = np.concatenate([past_k, k4], axis=2), np.concatenate([past_v, v4], axis=2)
    else:
        present_k, present_v = np.ascontiguousarray(k4), np.ascontiguousarray(v4)
    past = 0 if past_k is None else past_k.shape[2]
    total = present_k.shape[2]
    mode = int(a.get("qk_matmul_output_mode", 0))
    if mode not in (0, 1, 2, 3):
        return Invalid("qk-mode", MODE)
    precision = a.get("softmax_precision")
    u_softmax = None
    if precision is not None:
        if int(precision) not in PRECISIONS:
            if since >= 25:
                return Invalid("softmax-precision", SOFTMAX_PRECISION)
        else:
            u_softmax = PRECISIONS[int(precision)]
    allowed = np.ones((batch, hq, sq, total), dtype=bool)
    offset = np.full(batch, past, dtype=np.int64)
    nonpad = example.inputs.get("nonpad_kv_seqlen") if since >= 24 else None
    if nonpad is not None:
        if nonpad.shape != (batch,):
            return Invalid("nonpad-shape", NONPAD)
        keys = np.arange(total)
        allowed &= keys[None, None, None, :] < nonpad[:, None, None, None]
        if past_k is None:
            offset = nonpad.astype(np.int64) - sq
    rows, keys = np.arange(sq)[:, None], np.arange(total)[None, :]
    position = rows[None] + offset[:, None, None]  # (B, Sq, 1)
    if int(a.get("is_causal", 0)):
        allowed &= (keys[None] <= position)[:, None]
    if since >= 25:
        left, right = int(a.get("left_window_size", -1)), int(a.get("right_window_size", -1))
        if left >= 0:
            allowed &= (keys[None] >= position - left)[:, None]
        if right >= 0:
            allowed &= (keys[None] <= position + right)[:, None]
    bias = np.zeros(allowed.shape)
    mask = example.inputs.get("attn_mask")
    float_mask = False
    if mask is not None:
        shaped = _mask_to(mask, (batch, hq, sq, total), since)
        if shaped is None:
            return Invalid("mask-shape", MASK_24 if since >= 24 else MASK)
        values, padded = shaped
        if mask.dtype == np.bool_ or (mask.dtype.kind in "iu" and mask_as_boolean):
            allowed &= values.astype(bool) & ~padded
        else:
            float_mask = True
            bias = np.where(padded, 0.0, _wide(values))
            allowed &= ~padded
    scale = float(np.float32(a["scale"])) if "scale" in a else 1.0 / math.sqrt(d) if d else 1.0
    return Setup(_wide(q4), _wide(present_k), _wide(present_v), present_k, present_v, allowed, bias, float_mask, scale,
                 float(np.float32(a.get("softcap", 0.0))), mode, u_softmax, three_d, np.dtype(q.dtype), np.dtype(v.dtype))


def _mask_to(mask: np.ndarray, shape: tuple[int, ...], since: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The mask broadcast to `shape`, and where it was padded (from 24: a shorter last dim)."""
    padded = np.zeros(shape, dtype=bool)
    if mask.ndim > 4:
        return None
    if since >= 24 and mask.ndim and 1 < mask.shape[-1] < shape[-1] or (since >= 24 and mask.ndim and mask.shape[-1] == 0 < shape[-1]):
        short = mask.shape[-1]
        fill = np.zeros(mask.shape[:-1] + (shape[-1] - short,), dtype=mask.dtype)
        if mask.dtype.kind == "f" or mask.dtype.kind == "V":
            fill = fill.astype(np.float64)
            mask = np.concatenate([_wide(mask), fill], axis=-1)
        else:
            mask = np.concatenate([mask, fill], axis=-1)
        padded[..., short:] = True
    try:
        return np.broadcast_to(mask, shape), padded
    except ValueError:
        return None


# --- the computation, in float64 ---

def _grouped(x: np.ndarray, hq: int) -> np.ndarray:
    """K or V with each kv head repeated for its group of consecutive query heads."""
    return np.repeat(x, hq // x.shape[1], axis=1) if x.shape[1] else x


def _scores(s: Setup) -> tuple[np.ndarray, np.ndarray]:
    """scale·Q·Kᵀ per (B, Hq, Sq, T), and |scale|·Σ|q·k|."""
    k = _grouped(s.k, s.q.shape[1])
    with np.errstate(all="ignore"):
        return s.scale * np.einsum("bhid,bhjd->bhij", s.q, k), abs(s.scale) * np.einsum("bhid,bhjd->bhij", np.abs(s.q), np.abs(k))


def _capped(scores: np.ndarray, softcap: float) -> np.ndarray:
    if softcap <= 0:
        return scores
    with np.errstate(all="ignore"):
        return softcap * np.tanh(scores / softcap)


def _probabilities(z: np.ndarray, live: np.ndarray) -> np.ndarray:
    """The softmax over the keys of `z` (max-shifted, as the body does), a row with no `live` key
    zeros (the text's fully-masked row)."""
    empty = ~live.any(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        top = np.where(empty, 0.0, np.nanmax(np.where(np.isnan(z), -np.inf, z), axis=-1, keepdims=True))
        top = np.where(np.isfinite(top), top, 0.0)
        e = np.exp(z - top)
        p = e / e.sum(axis=-1, keepdims=True)
    return np.where(empty, 0.0, p)


def compute(s: Setup, skip_masked: bool = False) -> dict[str, np.ndarray]:
    """Every output's exact value (float64) and the pieces of the bound: as the diagram writes it
    (a masked key's −inf bias added to its score, its probability 0 times its value), or with the
    masked keys left out (`skip_masked`), which differ where a masked key meets a NaN or infinity."""
    scores, magnitude = _scores(s)
    capped = _capped(scores, s.softcap)
    # fully masked: every key's bias −inf (a mask, the causal frontier, padding), not a score of −inf from data
    live = s.allowed & ~np.isneginf(s.bias)
    with np.errstate(all="ignore"):
        z = capped + s.bias
        z_shown = capped + np.where(s.allowed, s.bias, -np.inf)
    p = _probabilities(np.where(live, z, -np.inf) if skip_masked else z_shown, live)
    v = _grouped(s.v, s.q.shape[1])
    with np.errstate(all="ignore"):
        if skip_masked:
            kept = live[..., None]  # (B, H, Sq, T, 1)
            y = np.sum(np.where(kept, p[..., None] * v[:, :, None, :, :], 0.0), axis=3)
        else:
            y = np.einsum("bhij,bhjd->bhid", p, v)
    qk = {0: scores, 1: capped, 2: z_shown, 3: p}[s.mode]
    return {"y": y, "p": p, "scores": scores, "magnitude": magnitude, "capped": capped, "z": z, "v": v, "qk": qk}


def _restored_y(y: np.ndarray, three_d: bool) -> np.ndarray:
    """Y in the inputs' layout: (B, Sq, Hq·Dv) for 3-D inputs."""
    if not three_d:
        return y
    b, h, sq, dv = y.shape
    return y.transpose(0, 2, 1, 3).reshape(b, sq, h * dv)


# --- the bound ---

def _score_error(s: Setup, c: dict[str, np.ndarray], u: float) -> np.ndarray:
    """δ per score (see the module's docstring)."""
    d = s.q.shape[3]
    with np.errstate(all="ignore"):
        # scale (a FLOAT attribute, its default 1/sqrt(head_size) too) and sqrt(scale) held in float32
        held = 3 * unit_roundoff(np.dtype(np.float32)) if u < unit_roundoff(np.dtype(np.float32)) else 0.0
        delta = (gamma(d + 6, u) + held) * c["magnitude"] + _underflow_error(s, u)
        if s.softcap > 0:
            delta = delta + 11 * u * np.abs(c["capped"])
        if s.float_mask:
            delta = delta + u * np.abs(np.where(np.isfinite(c["z"]), c["z"], 0.0))
    return np.where(np.isfinite(delta), delta, np.inf)


def _underflow_error(s: Setup, u: float) -> np.ndarray:
    """The absolute error of subnormal intermediates, which γ's relative bound does not cover:
    Q·sqrt(scale) and K·sqrt(scale) rounded in T1 (the body's order) each within η (half the
    smallest subnormal) beside their relative error, carried through the product with the other
    side, and η for each of the D products and D sums."""
    eta = max(_half_subnormal(s.out), _half_subnormal_of_roundoff(u))
    root = np.sqrt(abs(s.scale))
    q_sum = np.abs(s.q).sum(axis=-1)[..., :, None]
    k_sum = np.abs(_grouped(s.k, s.q.shape[1])).sum(axis=-1)[..., None, :]
    return eta * root * (q_sum + k_sum) + (2 * s.q.shape[3] + 2) * eta


def _half_subnormal(dtype) -> float:
    return float(ml_dtypes.finfo(dtype).smallest_subnormal) / 2


def _half_subnormal_of_roundoff(u: float) -> float:
    """η of the accumulator whose unit roundoff is u (float16, bfloat16, float, double)."""
    for dtype in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64):
        if unit_roundoff(np.dtype(dtype)) == u:
            return _half_subnormal(dtype)
    return 0.0


def _score_reach(s: Setup) -> tuple[np.ndarray, np.ndarray]:
    """Per score, the most its computation may reach in some order: |scale|·Σ|q·k| of the finite
    terms, or Q·sqrt(scale) or K·sqrt(scale) itself; and the same with the mask's bias added.
    Where it passes an accumulator's max (TOSA's "bnd overflow"), the text's steps as written give
    an infinity or NaN of either sign (products of opposite signs past the max, a masked key's
    overflowing score plus its −inf bias), every one of which the bound admits."""
    k = _grouped(s.k, s.q.shape[1])
    q_abs, k_abs = (np.where(np.isfinite(x), np.abs(x), 0.0) for x in (s.q, k))
    root = math.sqrt(abs(s.scale))
    with np.errstate(all="ignore"):
        reach = abs(s.scale) * np.einsum("bhid,bhjd->bhij", q_abs, k_abs)
        sides = np.maximum(q_abs.max(axis=-1, initial=0.0)[..., :, None], k_abs.max(axis=-1, initial=0.0)[..., None, :]) * root
        bias = np.where(np.isfinite(s.bias), np.abs(s.bias), 0.0) if s.float_mask else 0.0
        return np.maximum(reach, sides), np.maximum(reach + bias, sides)


def _vanishing_times_infinite(c: dict[str, np.ndarray], eps: np.ndarray, absolute: np.ndarray) -> np.ndarray:
    """Per element of Y, whether a probability that may round to 0 (its bound reaches 0: an exp
    that underflows) meets an infinite value: 0·inf is NaN where the exact product is infinite."""
    with np.errstate(all="ignore"):
        vanishing = (c["p"] * (1 - eps) - absolute <= 0).astype(np.float64)
    return np.einsum("bhij,bhjd->bhid", vanishing, np.isinf(c["v"]).astype(np.float64)) > 0


def _unless_overflow(allowed: np.ndarray, free: np.ndarray) -> np.ndarray:
    """`allowed`, with no requirement (inf) where the exact value is an infinity or NaN that an
    overflowing sum computed it as (a float64 output's scores past its max): there any value stands."""
    return np.where(free, np.inf, allowed)


def _probability_error(s: Setup, c: dict[str, np.ndarray], delta: np.ndarray, u_s: float, tiny: float):
    """Per probability, its relative error ε and an absolute one (underflow)."""
    live = s.allowed & np.isfinite(c["z"])
    n = live.sum(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        spread = np.where(live, delta, 0.0).max(axis=-1, keepdims=True)
        top = np.where(live, c["z"], -np.inf).max(axis=-1, keepdims=True)
        depth = np.where(live, np.abs(c["z"] - top), 0.0)
        eps = np.expm1(2 * spread) + (n + 7 + 5 * depth) * u_s
    return np.where(live, eps, 0.0), np.where(live, tiny, 0.0)


def _tiers(s: Setup, c: dict[str, np.ndarray]) -> tuple[ElementBound, ElementBound | None]:
    """Y's bound and the qk output's (None where it is exact: mode 2 of masked entries only...)."""
    y_tiers, qk_tiers = [], []
    scores_reach, biased_reach = _score_reach(s)
    out = s.out
    n = s.allowed.sum(axis=-1)[..., None]
    y_rest = _restored_y(c["y"], s.three_d)
    for label, acc in accumulators(out):
        u = unit_roundoff(acc)
        soft = s.u_softmax if s.u_softmax is not None else acc
        u_s = unit_roundoff(soft)
        tiny = float(ml_dtypes.finfo(soft).smallest_normal)
        u_c = unit_roundoff(out) if (s.u_softmax is not None and soft != out) or s.value_type != out else 0.0
        if s.value_type != out:
            u_c = max(u_c, unit_roundoff(s.value_type))
        delta = _score_error(s, c, u)
        eps, absolute = _probability_error(s, c, delta, u_s, tiny)
        with np.errstate(all="ignore"):
            v = np.abs(np.where(np.isfinite(c["v"]), c["v"], 0.0))
            weight = ((1 + eps) * (1 + u_c) * (1 + gamma(n, u)) - 1)
            allowed = (np.einsum("bhij,bhij,bhjd->bhid", c["p"], weight, v) + np.einsum("bhij,bhjd->bhid", absolute, v)
                       + (n * float(ml_dtypes.finfo(acc).smallest_normal)))
        allowed = _restored_y(allowed, s.three_d) + half_ulp(y_rest, out)
        allowed = np.where(np.isfinite(y_rest), np.where(np.isnan(allowed), np.inf, allowed), 0.0)
        top = float(ml_dtypes.finfo(acc).max)
        scores_over, biased_over = scores_reach > top, biased_reach > top
        # a masked key's score counts too: an overflowing score plus its −inf bias is NaN
        row_over = biased_over.any(axis=-1, keepdims=True)
        y_over = _restored_y(np.broadcast_to(row_over, c["y"].shape), s.three_d)
        y_non_finite = y_over | _restored_y(_vanishing_times_infinite(c, eps, absolute), s.three_d)
        y_tiers.append(Tier(label, _unless_overflow(allowed, y_over & ~np.isfinite(y_rest)), np.ones(y_rest.shape), y_non_finite))
        qk = c["qk"]
        if s.mode == 3:
            with np.errstate(all="ignore"):
                err = c["p"] * ((1 + eps) * (1 + u_c) - 1) + absolute
        else:
            err = delta if s.mode else _score_error(Setup(**{**s.__dict__, "softcap": 0.0, "float_mask": False}), c, u)
        err = np.where(np.isfinite(qk), np.where(np.isnan(err), np.inf, err) + half_ulp(qk, out), 0.0)
        qk_over = {0: scores_over, 1: scores_over, 2: biased_over}.get(s.mode, np.broadcast_to(row_over, qk.shape))
        qk_tiers.append(Tier(label, _unless_overflow(err, qk_over & ~np.isfinite(qk)), np.ones(qk.shape), qk_over))
    y_bound = ElementBound(tuple(y_tiers), "Σ p_j|v_j|·((1+ε_j)(1+u_c)(1+γ(n)) − 1) + ½ ulp(Y)", Y_REASON)
    qk_bound = ElementBound(tuple(qk_tiers), "δ_j + ½ ulp" if s.mode < 3 else "p_j·ε_j + ½ ulp",
                            QK_REASON if s.mode < 3 else P_REASON)
    return y_bound, qk_bound


class Attention23(VersionSemantics):
    """Version 23: the doc's diagram, causal offset past_sequence_length, zero rows where fully masked."""

    since = 23

    def expected(self, example: Example) -> Expected:
        mask = example.inputs.get("attn_mask")
        integer_mask = mask is not None and mask.dtype.kind in "iu"
        setups = [(AS_NUMBER if integer_mask else "spec", setup(example, self.since))]
        if integer_mask:
            setups.append((AS_BOOLEAN, setup(example, self.since, mask_as_boolean=True)))
        first = setups[0][1]
        if isinstance(first, Invalid):
            return Expected(invalid=first)
        candidates, bounds = [], None
        for label, s in setups:
            c = compute(s)
            found = self._outputs(s, c)
            candidates.append(Reading(found[0], label, precise=found[1]))
            if bounds is None:
                bounds = self._budgets(s, c)
            if _non_finite_masked(s):
                alt = self._outputs(s, compute(s, skip_masked=True))
                candidates.append(Reading(alt[0], f"{label}; {SKIPPED}", precise=alt[1]))
        found = readings(candidates, INTEGER_MASK if integer_mask else NON_FINITE, self._may_reject(example, first))
        if len(found.readings) == 1:
            return Expected(readings=(Reading(found.readings[0].outputs, precise=found.readings[0].precise),),
                            budgets=bounds, may_reject=found.may_reject)
        return Expected(readings=found.readings, ambiguity=found.ambiguity, budgets=bounds, may_reject=found.may_reject)

    def _may_reject(self, example: Example, s: Setup) -> str | None:
        mask = example.inputs.get("attn_mask")
        if mask is not None and mask.dtype.kind in "iu":
            return INTEGER_MASK + "; the function body adds it to the float scores, an Add of two types"
        if mask is not None and mask.dtype.kind not in "biu" and np.dtype(mask.dtype) != s.out:
            return OTHER_FLOAT_MASK
        if self.since >= 24 and example.inputs.get("nonpad_kv_seqlen") is not None and example.inputs.get("past_key") is not None:
            return NONPAD_WITH_PAST
        precision = example.attributes.get("softmax_precision")
        if precision is not None and int(precision) not in PRECISIONS:
            return "softmax_precision: a value that names no float type"
        return None

    def _outputs(self, s: Setup, c: dict[str, np.ndarray]):
        y = _restored_y(c["y"], s.three_d)
        qk = c["qk"]
        with np.errstate(all="ignore"):
            outputs = (y.astype(s.out), s.present_k.copy(), s.present_v.copy(), qk.astype(s.out))
        return outputs, (y, None, None, qk)

    def _budgets(self, s: Setup, c: dict[str, np.ndarray]):
        y_bound, qk_bound = _tiers(s, c)
        return (y_bound, None, None, qk_bound)


class Attention24(Attention23):
    """Version 24: nonpad_kv_seqlen (padding keys, the causal offset without a cache), a mask whose
    last dim may be shorter (padded with −inf)."""

    since = 24


class Attention25(Attention24):
    """Version 25: left_window_size and right_window_size bound the keys each query sees."""

    since = 25


def _non_finite_masked(s: Setup) -> bool:
    """A NaN or infinity in Q, K or V while some key is masked."""
    bad = not (np.isfinite(s.v).all() and np.isfinite(s.k).all() and np.isfinite(s.q).all())
    return bad and bool((~(s.allowed & ~np.isneginf(s.bias))).any())


# --- traits ---

def _setup_of(example: Example) -> Setup | None:
    found = setup(example, example.version.since_version)
    return None if isinstance(found, Invalid) else found


def non_finite_data(example: Example) -> bool:
    """An inf or NaN in Q, K, V, or the past."""
    return any(example.inputs.get(n) is not None and not np.isfinite(_wide(example.inputs[n])).all()
               for n in ("Q", "K", "V", "past_key", "past_value"))


def fully_masked_row(example: Example) -> bool:
    """A query row with no key to attend: the text's zero row."""
    s = _setup_of(example)
    if s is None or not s.allowed.size:
        return False
    live = s.allowed & ~np.isneginf(s.bias)
    return bool((~live.any(axis=-1)).any())


def grouped_query(example: Example) -> bool:
    s = _setup_of(example)
    return s is not None and s.q.shape[1] != s.k.shape[1]


def causal_with_offset(example: Example) -> bool:
    """is_causal with a past or (24) nonpad_kv_seqlen: the bottom-right alignment."""
    return bool(int(example.attributes.get("is_causal", 0))) and (
        example.inputs.get("past_key") is not None or example.inputs.get("nonpad_kv_seqlen") is not None
        or example.inputs["K"].shape[-2 if example.inputs["K"].ndim == 4 else 1] != example.inputs["Q"].shape[-2 if example.inputs["Q"].ndim == 4 else 1])


def softcapped(example: Example) -> bool:
    return float(example.attributes.get("softcap", 0.0)) > 0


def softmax_precision_given(example: Example) -> bool:
    return example.attributes.get("softmax_precision") is not None


def boolean_mask(example: Example) -> bool:
    m = example.inputs.get("attn_mask")
    return m is not None and m.dtype == np.bool_


def integer_mask(example: Example) -> bool:
    m = example.inputs.get("attn_mask")
    return m is not None and m.dtype.kind in "iu"


def float_mask(example: Example) -> bool:
    m = example.inputs.get("attn_mask")
    return m is not None and m.dtype.kind not in "biu"


def short_mask(example: Example) -> bool:
    """A mask whose last dim is shorter than the total sequence (24: padded with −inf)."""
    m = example.inputs.get("attn_mask")
    s = _setup_of(example)
    return m is not None and s is not None and m.ndim > 0 and 1 < m.shape[-1] < s.k.shape[2]


def mask_broadcasts_keys(example: Example) -> bool:
    """A mask whose last dim is 1 while there are more keys: broadcast by the text's rule, and from
    24 also a mask shorter than the total sequence, which the body pads with −inf."""
    m, s = example.inputs.get("attn_mask"), _setup_of(example)
    return m is not None and s is not None and m.ndim > 0 and m.shape[-1] == 1 < s.k.shape[2]


def qk_output_asked(example: Example) -> bool:
    return 3 in example.output_positions and len(example.version.outputs) > 3


def three_d_input(example: Example) -> bool:
    return example.inputs["Q"].ndim == 3


def with_past(example: Example) -> bool:
    return example.inputs.get("past_key") is not None


def with_nonpad(example: Example) -> bool:
    return example.inputs.get("nonpad_kv_seqlen") is not None


def windowed(example: Example) -> bool:
    return int(example.attributes.get("left_window_size", -1)) >= 0 or int(example.attributes.get("right_window_size", -1)) >= 0


def mixed_types(example: Example) -> bool:
    """V of another type than Q and K (T2 ≠ T1)."""
    return example.inputs["V"].dtype != example.inputs["Q"].dtype


def mask_broadcasts_query(example: Example) -> bool:
    """A mask whose query dim is 1 (or absent) while Q has more: broadcast by the text's rule."""
    m, s = example.inputs.get("attn_mask"), _setup_of(example)
    return m is not None and s is not None and (m.ndim < 2 or m.shape[-2] != s.q.shape[2])


def causal_scores_shown(example: Example) -> bool:
    """qk_matmul_output mode 2 (after the bias) with the causal frontier: its −inf entries."""
    return int(example.attributes.get("qk_matmul_output_mode", 0)) == 2 and bool(int(example.attributes.get("is_causal", 0)))


def float_bias_in_wide_body(example: Example) -> bool:
    """T1 double or bfloat16 (no onnxruntime kernel: its function body runs) with a float mask
    beside another bias (is_causal, softcap, nonpad_kv_seqlen, a window)."""
    return (example.inputs["Q"].dtype.name in ("float64", "bfloat16") and float_mask(example)
            and (bool(int(example.attributes.get("is_causal", 0))) or softcapped(example) or with_nonpad(example)
                 or windowed(example)))


def softmax_output_in_other_precision(example: Example) -> bool:
    """qk_matmul_output mode 3 with softmax_precision naming another type than T1: the errata
    emits it in T1."""
    precision = example.attributes.get("softmax_precision")
    return (int(example.attributes.get("qk_matmul_output_mode", 0)) == 3 and precision is not None
            and PRECISIONS.get(int(precision)) != np.dtype(example.inputs["Q"].dtype))


ATTENTION_TRAITS = {
    "mask-broadcasts-query": mask_broadcasts_query, "causal-scores-shown": causal_scores_shown, "float-bias-in-wide-body": float_bias_in_wide_body,
    "softmax-output-in-other-precision": softmax_output_in_other_precision,
    "non-finite-data": non_finite_data, "fully-masked-row": fully_masked_row, "grouped-query": grouped_query,
    "causal-with-offset": causal_with_offset, "softcap": softcapped, "softmax-precision": softmax_precision_given,
    "boolean-mask": boolean_mask, "integer-mask": integer_mask, "float-mask": float_mask, "short-mask": short_mask, "mask-broadcasts-keys": mask_broadcasts_keys,
    "qk-output": qk_output_asked, "three-d-input": three_d_input, "with-past": with_past, "with-nonpad": with_nonpad,
    "windowed": windowed, "mixed-types": mixed_types,
}

ATTENTION = OpReference(
    op="Attention", dtype_param="T1",
    data_inputs=("Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"),
    semantics=(Attention23, Attention24, Attention25), traits=ATTENTION_TRAITS, rules=RULES, covering_bindings=True)

REFERENCES = (ATTENTION,)
