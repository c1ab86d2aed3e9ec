"""LinearAttention-27 (reference/linear_attention.py) judged as a runtime's outputs would be: the
reference agrees with plain loops written here from the doc's recurrences (one state element at a
time, Python floats or a numpy scalar type per step), legal implementations pass (float32 token by
token, float16 computed in float32 or step by step in float16, a chunk-parallel form of the linear
rule, any chunk_size), planted wrong ones fail (the state not carried, k ⊗ v transposed, GQA heads
round robin, the decay applied after the update, per-key decay on the wrong axis, no scale), and
the text's invalid inputs are refused by their rules. Every candidate output is computed here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.case import Example
from conformance.compare import FAIL, PASS, judge
from conformance.reference import for_op
from conformance.registry import versions
from conformance.runners.base import RunOutput

RNG = np.random.default_rng(27)
RULES = ("linear", "gated", "delta", "gated_delta")
NAMES = {np.dtype(np.float32): "float", np.dtype(np.float16): "float16"}


def _version():
    return next(v for v in versions("LinearAttention") if v.since_version == 27)


def case(query, key, value, hq, hkv, rule=None, past=None, decay=None, beta=None, state_type=None, unread=False,
         **attributes) -> Example:
    """The node; a decay or beta its rule does not read is left out unless `unread` (then invalid)."""
    inputs = {"query": query, "key": key, "value": value}
    named = rule or "gated_delta"
    if not unread:
        decay = decay if named in ("gated", "gated_delta") else None
        beta = beta if named in ("delta", "gated_delta") else None
    for name, array in (("past_state", past), ("decay", decay), ("beta", beta)):
        if array is not None:
            inputs[name] = array
    attributes = {"q_num_heads": hq, "kv_num_heads": hkv, **attributes}
    if rule is not None:
        attributes["update_rule"] = rule
    s = NAMES[np.dtype(state_type or (past.dtype if past is not None else query.dtype))]
    return Example(_version(), "unit", {"T": NAMES[query.dtype], "S": s}, inputs, attributes, "unit", "T", outputs=(True, True))


def prose(found: Example, *outputs):
    return judge(for_op("LinearAttention").expected(found, bodies=False), RunOutput(outputs=tuple(np.asarray(o) for o in outputs)))


# --- the doc's recurrences, one element at a time ---

def plain(query, key, value, hq, hkv, rule="gated_delta", past=None, decay=None, beta=None, scale=None, dtype=float,
          carry=True, transposed=False, round_robin=False, decay_after=False, decay_on_values=False):
    """output (B, T, Hq·dv) and present_state (B, Hkv, dk, dv) by the doc's recurrence for `rule`,
    each step rounded to `dtype`; the keyword flags plant mistakes."""
    b_n, t_n = query.shape[:2]
    dk, dv = query.shape[2] // hq, value.shape[2] // hkv
    scale = 1 / math.sqrt(dk) if scale is None else scale
    r = dtype
    out = np.zeros((b_n, t_n, hq * dv))
    final = np.zeros((b_n, hkv, dk, dv))
    for b in range(b_n):
        states = []
        for h in range(hkv):
            states.append([[r(past[b, h, i, j]) if past is not None else r(0) for j in range(dv)] for i in range(dk)])
        for t in range(t_n):
            for h in range(hkv):
                s = states[h] if carry else [[r(0)] * dv for _ in range(dk)]
                k = [r(key[b, t, h * dk + i]) for i in range(dk)]
                v = [r(value[b, t, h * dv + j]) for j in range(dv)]
                if rule in ("gated", "gated_delta"):
                    per_head = decay.shape[2] == hkv
                    g = [r(math.exp(float(decay[b, t, h if per_head else h * dk + i]))) for i in range(dk)]
                else:
                    g = [r(1)] * dk
                if rule in ("delta", "gated_delta"):
                    beta_h = r(beta[b, t, h if beta.shape[2] > 1 else 0])
                else:
                    beta_h = r(1)

                def decayed(i, j):
                    if decay_after:
                        return s[i][j]
                    return r(g[j if decay_on_values else i] * s[i][j])

                if rule in ("delta", "gated_delta"):
                    retrieved = [r(0)] * dv
                    for j in range(dv):
                        for i in range(dk):
                            retrieved[j] = r(retrieved[j] + r(decayed(i, j) * k[i]))
                    w = [r(beta_h * r(v[j] - retrieved[j])) for j in range(dv)]
                else:
                    w = v
                new = [[r(0)] * dv for _ in range(dk)]
                for i in range(dk):
                    for j in range(dv):
                        outer = r(k[j] * w[i]) if transposed else r(k[i] * w[j])
                        new[i][j] = r(decayed(i, j) + outer)
                        if decay_after:
                            new[i][j] = r(g[i] * new[i][j])
                states[h] = new
            for hq_i in range(hq):
                h = hq_i % hkv if round_robin else hq_i // (hq // hkv)
                q = [r(query[b, t, hq_i * dk + i]) for i in range(dk)]
                for j in range(dv):
                    total = r(0)
                    for i in range(dk):
                        total = r(total + r(q[i] * states[h][i][j]))
                    out[b, t, hq_i * dv + j] = r(r(scale) * total)
        for h in range(hkv):
            final[b, h] = np.array(states[h], dtype=np.float64)
    return out, final


def draws(b=1, t=3, hq=2, hkv=1, dk=3, dv=3, exact=False, dtype=np.float32, normalized=False, per_key=True, shared_beta=False):
    def values(shape, spread=1.0):
        x = RNG.integers(-3, 4, size=shape).astype(np.float64) if exact else RNG.standard_normal(shape) * spread
        return x.astype(dtype)

    q, v = values((b, t, hq * dk)), values((b, t, hkv * dv))
    if normalized and not exact:
        keys = RNG.standard_normal((b, t, hkv, dk))
        keys /= np.sqrt((keys ** 2).sum(axis=-1, keepdims=True))
        k = keys.reshape(b, t, hkv * dk).astype(dtype)
    elif normalized:
        keys = np.zeros((b, t, hkv, dk))
        np.put_along_axis(keys, RNG.integers(0, dk, size=(b, t, hkv, 1)), 1.0, axis=-1)
        k = keys.reshape(b, t, hkv * dk).astype(dtype)
    else:
        k = values((b, t, hkv * dk))
    width = hkv * dk if per_key else hkv
    decay = np.zeros((b, t, width), dtype) if exact else (-RNG.uniform(0, 1.5, (b, t, width))).astype(dtype)
    beta = (np.ones if exact else lambda s, d: RNG.uniform(0, 1, s).astype(d))((b, t, 1 if shared_beta else hkv), dtype)
    return q, k, v, decay, beta


def _both(f32):
    return lambda x: np.float32(x) if f32 else float(x)


@pytest.mark.parametrize("rule", RULES)
def test_the_reference_is_the_recurrence_computed_exactly(rule):
    q, k, v, decay, beta = draws(b=2, t=4, hq=4, hkv=2, dk=3, dv=2, dtype=np.float32, normalized=True)
    past = RNG.standard_normal((2, 2, 3, 2)).astype(np.float32)
    found = for_op("LinearAttention").expected(case(q, k, v, 4, 2, rule, past=past, decay=decay, beta=beta), bodies=False)
    y, state = plain(q, k, v, 4, 2, rule, past=past, decay=decay, beta=beta)
    assert np.allclose(found.readings[0].precise[0], y, rtol=1e-12, atol=1e-14)
    assert np.allclose(found.readings[0].precise[1], state, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("rule", RULES)
def test_float32_token_by_token_passes(rule):
    q, k, v, decay, beta = draws(b=1, t=4, hq=2, hkv=1, dk=4, dv=3, normalized=True)
    found = case(q, k, v, 2, 1, rule, decay=decay, beta=beta)
    y, state = plain(q, k, v, 2, 1, rule, decay=decay, beta=beta, dtype=np.float32)
    verdict = prose(found, y.astype(np.float32), state.astype(np.float32))
    assert verdict.outcome == PASS, verdict.message


def test_float16_in_float32_and_in_float16_are_named_as_their_tiers():
    q, k, v, decay, beta = draws(t=4, dk=4, dv=4, dtype=np.float16, normalized=True)
    found = case(q, k, v, 2, 1, "gated_delta", decay=decay, beta=beta)
    wide = [x.astype(np.float16) for x in plain(q, k, v, 2, 1, decay=decay, beta=beta, dtype=np.float32)]
    narrow = [x.astype(np.float16) for x in plain(q, k, v, 2, 1, decay=decay, beta=beta, dtype=np.float16)]
    assert not all(np.array_equal(a, b) for a, b in zip(wide, narrow))
    verdict = prose(found, *wide)
    assert verdict.outcome == PASS and verdict.reading == "accumulated in float32 or wider", verdict.message
    verdict = prose(found, *narrow)
    assert verdict.outcome == PASS and verdict.reading == "accumulated in float16", verdict.message


def test_a_chunk_parallel_linear_rule_passes():
    """o_t = scale·(q_t·S_0 + Σ_{s≤t} (q_t·k_s)·v_s), in float32: another association of the same sums."""
    q, k, v, _, _ = draws(b=1, t=4, hq=1, hkv=1, dk=4, dv=2, dtype=np.float32)
    past = RNG.standard_normal((1, 1, 4, 2)).astype(np.float32)
    f = np.float32
    y = np.zeros((1, 4, 2), np.float32)
    for t in range(4):
        for j in range(2):
            total = f(0)
            for i in range(4):
                total = f(total + f(q[0, t, i] * past[0, 0, i, j]))
            for s in range(t + 1):
                dot = f(0)
                for i in range(4):
                    dot = f(dot + f(q[0, t, i] * k[0, s, i]))
                total = f(total + f(dot * v[0, s, j]))
            y[0, t, j] = f(f(0.5) * total)
    state = past.astype(np.float64) + np.einsum("ti,tj->ij", k[0].astype(np.float64), v[0].astype(np.float64))[None, None]
    verdict = prose(case(q, k, v, 1, 1, "linear", past=past), y, state.astype(np.float32))
    assert verdict.outcome == PASS, verdict.message


def test_chunk_size_changes_nothing():
    q, k, v, decay, beta = draws(t=4, normalized=True)
    answers = [for_op("LinearAttention").expected(case(q, k, v, 2, 1, decay=decay, beta=beta, chunk_size=c), bodies=False)
               for c in (1, 2, 64)]
    for found in answers[1:]:
        for a, b in zip(found.readings[0].outputs, answers[0].readings[0].outputs):
            assert np.array_equal(a, b)


PLANTED = {
    "state not carried": dict(carry=False),
    "k ⊗ v transposed": dict(transposed=True),
    "GQA heads round robin": dict(round_robin=True),
    "decay after the update": dict(decay_after=True),
    "per-key decay on the value axis": dict(decay_on_values=True),
    "no scale": dict(scale=1.0),
}


@pytest.mark.parametrize("wrong", list(PLANTED))
@pytest.mark.parametrize("exact", [True, False], ids=["exact", "random"])
def test_planted_mistakes_fail(wrong, exact):
    rule = "gated" if "decay" in wrong else "gated_delta" if not exact else "delta"
    q, k, v, decay, beta = draws(b=1, t=3, hq=4, hkv=2, dk=3, dv=3, exact=exact, normalized=True)
    if "decay" in wrong:
        q, k, v, decay, beta = draws(b=1, t=3, hq=4, hkv=2, dk=3, dv=3, exact=False, normalized=True)
    found = case(q, k, v, 4, 2, rule, decay=decay, beta=beta)
    y, state = plain(q, k, v, 4, 2, rule, decay=decay, beta=beta, dtype=np.float32, **PLANTED[wrong])
    verdict = prose(found, y.astype(np.float32), state.astype(np.float32))
    assert verdict.outcome == FAIL, (wrong, verdict.message)


def test_exact_draws_are_judged_bitwise():
    q, k, v, decay, beta = draws(t=3, hq=2, hkv=1, dk=4, dv=2, exact=True, normalized=True)
    found = case(q, k, v, 2, 1, "gated_delta", decay=decay, beta=beta)
    y, state = plain(q, k, v, 2, 1, decay=decay, beta=beta)
    y32 = y.astype(np.float32)
    assert prose(found, y32, state.astype(np.float32)).outcome == PASS
    nudged = y32.copy()
    flat = nudged.reshape(-1)
    index = int(np.argmax(np.abs(flat)))
    flat[index] = np.nextafter(flat[index], np.float32(np.inf))
    assert prose(found, nudged, state.astype(np.float32)).outcome != PASS


def test_the_default_rule_is_gated_delta_and_the_default_scale_one_over_root_dk():
    q, k, v, decay, beta = draws(t=2, dk=4, dv=2, normalized=True, per_key=False, shared_beta=True)
    found = case(q, k, v, 2, 1, None, decay=decay, beta=beta)
    y, state = plain(q, k, v, 2, 1, "gated_delta", decay=decay, beta=beta, scale=0.5, dtype=np.float32)
    assert prose(found, y.astype(np.float32), state.astype(np.float32)).outcome == PASS
    y, state = plain(q, k, v, 2, 1, "gated_delta", decay=decay, beta=beta, scale=1.0, dtype=np.float32)
    assert prose(found, y.astype(np.float32), state.astype(np.float32)).outcome == FAIL
    y, state = plain(q, k, v, 2, 1, "delta", decay=decay, beta=beta, dtype=np.float32)
    assert prose(found, y.astype(np.float32), state.astype(np.float32)).outcome == FAIL


def test_an_explicit_scale_is_used_and_past_state_is_carried_in():
    q, k, v, _, _ = draws(t=2, hq=1, hkv=1, dk=2, dv=2, exact=True)
    past = np.array([[[[1, 2], [3, 4]]]], np.float32)
    found = case(q, k, v, 1, 1, "linear", past=past, scale=-0.25)
    y, state = plain(q, k, v, 1, 1, "linear", past=past, scale=-0.25)
    assert prose(found, y.astype(np.float32), state.astype(np.float32)).outcome == PASS
    y0, state0 = plain(q, k, v, 1, 1, "linear", scale=-0.25)
    assert prose(found, y0.astype(np.float32), state0.astype(np.float32)).outcome == FAIL


def test_a_state_type_other_than_t():
    q, k, v, _, beta = draws(t=2, dk=2, dv=2, exact=True, normalized=True, dtype=np.float16)
    past = RNG.integers(-3, 4, size=(1, 1, 2, 2)).astype(np.float32) + 0.5 ** 12  # beyond float16's 11 bits
    found = case(q, k, v, 2, 1, "delta", past=past, beta=beta)
    y, state = plain(q, k, v, 2, 1, "delta", past=past, beta=beta)
    assert prose(found, y.astype(np.float16), state.astype(np.float32)).outcome == PASS
    assert prose(found, y.astype(np.float16), state.astype(np.float16)).outcome == FAIL


def test_no_tokens_gives_the_past_state():
    q, k, v = (np.zeros((1, 0, n), np.float32) for n in (4, 2, 2))
    past = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    found = for_op("LinearAttention").expected(case(q, k, v, 2, 1, "linear", past=past), bodies=False)
    assert found.readings[0].outputs[0].shape == (1, 0, 4)
    assert np.array_equal(found.readings[0].outputs[1], past)
    assert found.may_reject and "Reshape" in found.may_reject  # the body's Reshape to [B, 0, H, -1]


def _invalid(**changes):
    q, k, v, decay, beta = draws(t=2, dk=2, dv=2)
    parts = dict(query=q, key=k, value=v, hq=2, hkv=1, rule="gated_delta", decay=decay, beta=beta, unread=True)
    parts.update(changes)
    found = for_op("LinearAttention").expected(case(parts.pop("query"), parts.pop("key"), parts.pop("value"), **parts))
    return None if found.is_valid else found.invalid.rule


def test_invalid_inputs_are_refused_by_their_rules():
    q, k, v, decay, beta = draws(t=2, hq=3, hkv=2, dk=2, dv=2)
    assert _invalid(query=q, key=k, value=v, hq=3, hkv=2, decay=decay, beta=beta) == "heads-not-divisible"
    assert _invalid(rule="linear", decay=None, beta=None) is None
    assert _invalid(hq=0) == "num-heads"
    assert _invalid(rule="softmax") == "update-rule"
    assert _invalid(rule="gated", decay=None) == "decay-missing"
    assert _invalid(rule="gated_delta", decay=None) == "decay-missing"
    assert _invalid(rule="delta", beta=None) == "beta-missing"
    assert _invalid(decay=np.zeros((1, 2, 3), np.float32)) == "decay-shape"
    assert _invalid(beta=np.zeros((1, 2, 2), np.float32)) == "beta-shape"
    assert _invalid(past=np.zeros((1, 1, 2, 3), np.float32)) == "state-shape"
    assert _invalid(key=np.zeros((1, 2, 3), np.float32)) == "shape-mismatch"
    assert _invalid(rule="linear", decay=None, beta=None) is None
    assert _invalid(rule="linear", beta=None) == "unread-gate"
    assert _invalid(rule="gated") == "unread-gate"
    assert _invalid(rule="delta", decay=None) is None
