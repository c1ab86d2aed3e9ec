"""Attention, RotaryEmbedding and SwiGLU (reference/attention.py, rotary_embedding.py, swiglu.py)
judged as a runtime's outputs would be: the references agree with plain loops written here from
the texts' formulas (math.exp, math.tanh, one element at a time), planted wrong implementations
fail (no scale, a top-left causal frontier, GQA heads tiled instead of grouped, a dropped key, NaN
for a fully-masked row, the halves of a rotation swapped, Swish without B), legal ones pass (any
summation order, float16 computed in float32 or in float16, each named as its tier), and the
text's invalid inputs are refused by their rules. Every candidate output is computed here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import FAIL, PASS, judge
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(64)
ATTENTION_VERSIONS = (23, 24, 25)


def _version(op: str, since: int):
    return next(v for v in versions(op) if v.since_version == since)


def attention(since: int, q, k, v, outputs=(True, False, False, False), **extra) -> Example:
    inputs = {"Q": q, "K": k, "V": v}
    attributes = {}
    for name, value in extra.items():
        (inputs if isinstance(value, np.ndarray) else attributes)[name] = value
    types = {"T1": q.dtype.name if q.dtype != np.float64 else "double", "T2": v.dtype.name if v.dtype != np.float64 else "double"}
    types = {p: {"float32": "float"}.get(t, t) for p, t in types.items()}
    mask = inputs.get("attn_mask")
    if mask is not None:
        types["U"] = "bool" if mask.dtype == np.bool_ else types["T1"]
    return Example(_version("Attention", since), "unit", types, inputs, attributes, "unit", "T1", outputs=outputs)


def prose(found: Example, *outputs: np.ndarray):
    """The verdict by the prose alone (the function body is covered by tests/test_function_body.py)."""
    return judge(for_op(found.op).expected(found, bodies=False), RunOutput(outputs=tuple(np.asarray(o) for o in outputs)))


# --- a plain implementation of the diagram, one query row at a time ---

def _sum(terms, order: str, dtype):
    terms = [dtype(t) for t in terms]
    if order == "reversed":
        terms = terms[::-1]
    if order == "pairwise":
        while len(terms) > 1:
            terms = [dtype(terms[i] + terms[i + 1]) if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
        return terms[0] if terms else dtype(0)
    total = dtype(0)
    for t in terms:
        total = dtype(total + t)
    return total


def plain_attention(q, k, v, scale=None, causal_offset=None, mask=None, group=True, drop=None, order="forward",
                    dtype=np.float64, zero_rows=True):
    """Y per the diagram, every step in `dtype` (4-D inputs; mask a bool (Sq, T) array)."""
    b, hq, sq, d = q.shape
    hkv, t = k.shape[1], k.shape[2]
    scale = 1 / math.sqrt(d) if scale is None else scale
    y = np.zeros((b, hq, sq, v.shape[3]), dtype=dtype)
    for bi in range(b):
        for h in range(hq):
            g = h // (hq // hkv) if group else h % hkv
            for i in range(sq):
                keys = [j for j in range(t) if (causal_offset is None or j <= i + causal_offset)
                        and (mask is None or mask[i, j]) and j != drop]
                if not keys:
                    y[bi, h, i] = 0 if zero_rows else np.nan
                    continue
                scores = [dtype(scale) * _sum([dtype(q[bi, h, i, x]) * dtype(k[bi, g, j, x]) for x in range(d)], order, dtype)
                          for j in keys]
                top = max(scores)
                e = [dtype(math.exp(float(s - top))) for s in scores]
                total = _sum(e, order, dtype)
                p = [dtype(x / total) for x in e]
                for c in range(v.shape[3]):
                    y[bi, h, i, c] = _sum([p[n] * dtype(v[bi, g, j, c]) for n, j in enumerate(keys)], order, dtype)
    return y


def _qkv(b=1, hq=2, hkv=1, sq=3, t=4, d=4, dv=3, dtype=np.float32, spread=1.0):
    return (np.asarray(RNG.standard_normal((b, hq, sq, d)) * spread, dtype=dtype),
            np.asarray(RNG.standard_normal((b, hkv, t, d)) * spread, dtype=dtype),
            np.asarray(RNG.standard_normal((b, hkv, t, dv)), dtype=dtype))


@pytest.mark.parametrize("since", ATTENTION_VERSIONS)
def test_the_reference_is_the_diagram_computed_exactly(since):
    q, k, v = _qkv(dtype=np.float64, hq=4, hkv=2, sq=3, t=3)
    mask = RNG.random((3, 3)) < 0.7
    mask[:, 0] = True
    found = for_op("Attention").expected(attention(since, q, k, v, is_causal=1, attn_mask=mask), bodies=False)
    plain = plain_attention(q, k, v, causal_offset=0, mask=mask)
    assert np.allclose(found.readings[0].precise[0], plain, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("order", ["forward", "reversed", "pairwise"])
def test_any_summation_order_passes(order):
    q, k, v = _qkv(sq=3, t=6, d=8)
    found = attention(23, q, k, v)
    y = plain_attention(q, k, v, order=order, dtype=np.float32)
    assert prose(found, y).outcome == PASS


def test_float16_in_float32_and_in_float16_are_named_as_their_tiers():
    q, k, v = _qkv(dtype=np.float16, sq=2, t=8, d=8, spread=2.0)
    found = attention(23, q, k, v)
    wide = plain_attention(q, k, v, dtype=np.float32).astype(np.float16)
    narrow = plain_attention(q, k, v, dtype=np.float16)
    assert not np.array_equal(wide, narrow)
    assert prose(found, wide).reading == "accumulated in float32 or wider"
    verdict = prose(found, narrow)
    assert verdict.outcome == PASS and verdict.reading == "accumulated in float16", verdict.message


@pytest.mark.parametrize("wrong", ["no scale", "dropped key", "tiled heads"])
def test_planted_mistakes_fail(wrong):
    q, k, v = _qkv(hq=4, hkv=2, sq=2, t=4, d=4, spread=1.5)
    found = attention(24, q, k, v)
    y = plain_attention(q, k, v, dtype=np.float32, scale=1.0 if wrong == "no scale" else None,
                        drop=1 if wrong == "dropped key" else None, group=wrong != "tiled heads")
    assert prose(found, y).outcome == FAIL


def test_the_causal_frontier_is_offset_by_the_past():
    q, k, v = _qkv(hq=1, hkv=1, sq=1, t=3, d=4, spread=2.0)
    past_k, past_v = (np.asarray(RNG.standard_normal((1, 1, 2, n)), np.float32) for n in (4, 3))
    found = attention(23, q, k, v, past_key=past_k, past_value=past_v, is_causal=1)
    all_k, all_v = np.concatenate([past_k, k], axis=2), np.concatenate([past_v, v], axis=2)
    text = plain_attention(q, all_k, all_v, causal_offset=2, dtype=np.float32)
    bottom_right = plain_attention(q, all_k, all_v, causal_offset=4, dtype=np.float32)
    top_left = plain_attention(q, all_k, all_v, causal_offset=0, dtype=np.float32)
    assert prose(found, text).outcome == PASS
    assert prose(found, bottom_right).outcome == FAIL and prose(found, top_left).outcome == FAIL


def test_present_key_and_value_are_the_exact_concatenation():
    q, k, v = _qkv(hq=1, hkv=1, sq=1, t=2)
    past_k, past_v = (np.asarray(RNG.standard_normal((1, 1, 3, n)), np.float32) for n in (4, 3))
    found = attention(23, q, k, v, outputs=(True, True, True, False), past_key=past_k, past_value=past_v)
    y = plain_attention(q, np.concatenate([past_k, k], 2), np.concatenate([past_v, v], 2), dtype=np.float32)
    present_k, present_v = np.concatenate([past_k, k], 2), np.concatenate([past_v, v], 2)
    assert prose(found, y, present_k, present_v).outcome == PASS
    off = present_v.copy()
    off[0, 0, -1, 0] = np.nextafter(off[0, 0, -1, 0], np.float32(np.inf))
    assert prose(found, y, present_k, off).outcome == FAIL


def test_a_fully_masked_row_is_zeros_not_nan():
    q, k, v = _qkv(hq=1, hkv=1, sq=2, t=2)
    mask = np.array([[False, False], [True, True]])
    found = attention(23, q, k, v, attn_mask=mask)
    zeros = plain_attention(q, k, v, mask=mask, dtype=np.float32)
    assert prose(found, zeros).outcome == PASS and np.all(zeros[0, 0, 0] == 0)
    nan = plain_attention(q, k, v, mask=mask, dtype=np.float32, zero_rows=False)
    assert prose(found, nan).outcome == FAIL


def test_padding_by_nonpad_kv_seqlen_from_24():
    q, k, v = _qkv(hq=1, hkv=1, sq=1, t=4, d=2)
    found = attention(24, q, k, v, nonpad_kv_seqlen=np.array([2], np.int64))
    keep = np.array([[True, True, False, False]])
    assert prose(found, plain_attention(q, k, v, mask=keep, dtype=np.float32)).outcome == PASS
    assert prose(found, plain_attention(q, k, v, dtype=np.float32)).outcome == FAIL


def test_the_scores_output_is_the_scaled_product():
    q = np.array([[[[1, 2]]]], np.float32)
    k = np.array([[[[3, 4], [-1, 1]]]], np.float32)
    v = np.array([[[[1, 2], [3, 4]]]], np.float32)
    found = for_op("Attention").expected(attention(23, q, k, v, outputs=(True, False, False, True), scale=0.5,
                                                   qk_matmul_output_mode=0), bodies=False)
    assert found.readings[0].outputs[1].tolist() == [[[[5.5, 0.5]]]]


@pytest.mark.parametrize(("extra", "rule"), [
    ({"past_key": np.zeros((1, 1, 1, 4), np.float32)}, "past-pair"),
    ({"qk_matmul_output_mode": 4}, "qk-mode"),
])
def test_what_the_text_forbids_is_invalid(extra, rule):
    q, k, v = _qkv(hq=1, hkv=1, sq=1, t=1)
    assert for_op("Attention").expected(attention(23, q, k, v, **extra)).invalid.rule == rule
    q3 = np.zeros((1, 3, 1, 2), np.float32)
    k2 = np.zeros((1, 2, 1, 2), np.float32)
    assert for_op("Attention").expected(attention(23, q3, k2, k2)).invalid.rule == "heads-not-divisible"


# --- RotaryEmbedding ---

def rotary(x, cos, sin, ids=None, **attributes) -> Example:
    inputs = {"X": x, "cos_cache": cos, "sin_cache": sin, "position_ids": ids}
    return Example(_version("RotaryEmbedding", 23), "unit", {"T": "float" if x.dtype == np.float32 else "float16"},
                   inputs, attributes, "unit", "T")


def plain_rotary(x, cos, sin, ids, interleaved, rd):
    """The doc's algorithm for a 4-D X, element by element."""
    out = x.astype(np.float64).copy()
    b, h, s, d = x.shape
    half = rd // 2
    for bi in range(b):
        for hi in range(h):
            for si in range(s):
                row = cos[ids[bi, si]], sin[ids[bi, si]]
                for n in range(half):
                    a, c = (2 * n, 2 * n + 1) if interleaved else (n, n + half)
                    x1, x2 = float(x[bi, hi, si, a]), float(x[bi, hi, si, c])
                    out[bi, hi, si, a] = float(row[0][n]) * x1 - float(row[1][n]) * x2
                    out[bi, hi, si, c] = float(row[1][n]) * x1 + float(row[0][n]) * x2
    return out


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rd", [0, 4])
def test_rotary_reference_is_the_algorithm(interleaved, rd):
    x = RNG.standard_normal((2, 2, 3, 6)).astype(np.float32)
    width = (rd or 6) // 2
    angles = np.arange(5)[:, None] * (0.5 + np.arange(width))[None, :]
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    ids = RNG.integers(0, 5, (2, 3)).astype(np.int64)
    found = for_op("RotaryEmbedding").expected(rotary(x, cos, sin, ids, interleaved=interleaved, rotary_embedding_dim=rd))
    plain = plain_rotary(x, cos, sin, ids, interleaved, rd or 6)
    assert np.allclose(found.readings[0].precise[0], plain, rtol=1e-15, atol=1e-15)
    judged = judge(found, RunOutput(outputs=(plain.astype(np.float32),)))
    assert judged.outcome == PASS
    other = plain_rotary(x, cos, sin, ids, 1 - interleaved, rd or 6).astype(np.float32)
    assert judge(found, RunOutput(outputs=(other,))).outcome == FAIL


def test_rotary_refuses_a_cache_of_the_wrong_width():
    x = np.ones((1, 1, 1, 4), np.float32)
    found = for_op("RotaryEmbedding").expected(rotary(x, np.ones((1, 1, 3), np.float32), np.zeros((1, 1, 3), np.float32)))
    assert found.invalid.rule == "cache-shape"


# --- SwiGLU ---

def swiglu(a, b, **attributes) -> Example:
    return Example(_version("SwiGLU", 28), "unit", {"T": {"float32": "float"}.get(a.dtype.name, a.dtype.name)},
                   {"A": a, "B": b}, attributes, "unit", "T")


def test_swiglu_is_swish_of_a_times_b():
    a = RNG.uniform(-8, 8, 64).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    alpha = 1.702
    found = for_op("SwiGLU").expected(swiglu(a, b, alpha=alpha))
    alpha32 = float(np.float32(alpha))
    plain = np.array([float(x) / (1 + math.exp(-alpha32 * float(x))) * float(y) for x, y in zip(a, b)])
    assert np.allclose(found.readings[0].precise[0], plain, rtol=1e-14)
    assert judge(found, RunOutput(outputs=(plain.astype(np.float32),))).outcome == PASS
    sigmoid_only = np.array([1 / (1 + math.exp(-alpha32 * float(x))) * float(y) for x, y in zip(a, b)], np.float32)
    assert judge(found, RunOutput(outputs=(sigmoid_only,))).outcome == FAIL


def test_swiglu_float16_node_by_node_passes():
    a = RNG.uniform(-6, 6, 64).astype(np.float16)
    b = RNG.standard_normal(64).astype(np.float16)
    gate = (a / (np.float16(1) + np.exp(-a))).astype(np.float16)
    assert judge(for_op("SwiGLU").expected(swiglu(a, b)), RunOutput(outputs=((gate * b).astype(np.float16),))).outcome == PASS


def test_swiglu_shapes_must_match():
    found = for_op("SwiGLU").expected(swiglu(np.ones((2, 2), np.float32), np.ones(2, np.float32)))
    assert found.invalid.rule == "shape-mismatch"


def test_scores_whose_products_overflow_in_the_type_may_be_any_infinity_or_nan():
    # Σ|q·k| past float's max: computed in float the products are +inf and -inf, their sum NaN
    # (or inf, -inf in another order), where the exact score is 0; the softmax row then NaN too.
    q = np.float32([[[[3e38, 3e38]]]])
    k = np.float32([[[[2.0, -2.0], [1.0, 1.0]]]])
    v = np.float32([[[[1.0], [2.0]]]])
    found = attention(23, q, k, v, outputs=(True, False, False, True), scale=1.0)
    with np.errstate(all="ignore"):
        scores = np.einsum("bhid,bhjd->bhij", q, k)  # float32: [[nan, inf]]
    assert np.isnan(scores[0, 0, 0, 0])
    for y in (np.float32([[[[np.nan]]]]), np.float32([[[[2.0]]]])):
        verdict = prose(found, y, scores)
        assert verdict.outcome == PASS, verdict.message
    # a finite score far from the exact one is still wrong
    wrong = np.float32([[[[1e36, 0.0]]]])  # past 4 times γ(D+6)·Σ|q·k| ≈ 5.8e32
    assert prose(found, np.float32([[[[2.0]]]]), np.where(np.isnan(scores), wrong, scores)).outcome == FAIL


def test_a_probability_that_underflows_may_make_nan_of_an_infinite_value():
    # exp(-200) underflows to 0 in float16: 0·inf is NaN, where the exact product is inf
    q = np.float16([[[[1.0]]]])
    k = np.float16([[[[0.0], [-200.0]]]])
    v = np.float16([[[[1.0], [np.inf]]]])
    found = attention(23, q, k, v, scale=1.0)
    assert prose(found, np.float16([[[[np.inf]]]])).outcome == PASS
    verdict = prose(found, np.float16([[[[np.nan]]]]))
    assert verdict.outcome == PASS, verdict.message
    assert prose(found, np.float16([[[[1.0]]]])).outcome == FAIL
