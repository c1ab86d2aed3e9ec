"""Random LinearAttention cases (reference/linear_attention.py): batch 1-2, kv heads 1-2 and query
heads a multiple (MHA, GQA, MQA), 1 to 4 tokens (now and then none), d_k 1 to 4, d_v 1 to 4, every
update rule (or the default, gated_delta), decay per head or per key dimension, beta per head or
one for all, now and then a past_state, an explicit scale or a chunk_size (which must change
nothing).

Values: half the cases exactly summable (small integers, decay 0 so that exp(g) = 1, beta 1 or an
integer, one-hot or integer keys, a power-of-two scale), where a wrong head mapping, a state not
carried or a transposed outer product is told bitwise; the others normal values, keys
L2-normalized for the delta rules as the text asks ("Should be L2-normalized"), decay in log space
(mostly negative), beta in (0, 1) as a sigmoid gives. And a small share of what the text refuses
(heads that do not divide, an unknown rule, decay or beta missing or of another shape, a past
state of the wrong shape, a decay or beta the rule does not read)."""

from __future__ import annotations

import numpy as np

from ..dtypes import dtype
from ..registry import OpVersion
from ..values import pack
from .common import WIDE, Choices, invalid_share, one_in, pick
from .movement import made

RULES = ("linear", "gated", "delta", "gated_delta")
BROKEN = ("heads", "rule", "decay-missing", "beta-missing", "decay-shape", "beta-shape", "state-shape", "unread")


def example(choices: Choices, version: OpVersion, binding: dict[str, str]):
    t, s_type = dtype(binding["T"]), dtype(binding.get("S", binding["T"]))
    rng = np.random.default_rng(choices.integer(0, WIDE - 1))
    batch, kv_heads = choices.integer(1, 2), pick(choices, (1, 2, 1))
    q_heads = kv_heads * pick(choices, (1, 2, 1))
    steps = 0 if one_in(choices, 15) else choices.integer(1, 4)
    dk, dv = pick(choices, (2, 4, 1, 3)), pick(choices, (2, 3, 1, 4))
    rule = pick(choices, RULES)
    default_rule = one_in(choices, 6)
    if default_rule:
        rule = "gated_delta"
    exact = one_in(choices, 2)
    broken = pick(choices, BROKEN) if invalid_share(choices) else None
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if broken == "heads":
        kv_heads, q_heads = 2, 3  # packed dims that divide, heads that do not

    def values(dt, dims, low=-3, high=3, spread=1.0):
        count = int(np.prod(dims))
        drawn = rng.integers(low, high + 1, size=count) if exact else rng.standard_normal(count) * spread
        return pack(drawn.astype(np.float64).tolist(), dt).reshape(dims)

    q = values(t, (batch, steps, q_heads * dk))
    if delta and exact and one_in(choices, 2):
        keys = np.zeros((batch, steps, kv_heads, dk))
        hot = rng.integers(0, dk, size=(batch, steps, kv_heads))
        np.put_along_axis(keys, hot[..., None], 1.0, axis=-1)  # one-hot: L2-normalized and exact
        k = pack(keys.reshape(-1).tolist(), t).reshape(batch, steps, kv_heads * dk)
    elif delta and not exact:
        keys = rng.standard_normal((batch, steps, kv_heads, dk))
        keys /= np.maximum(np.sqrt((keys ** 2).sum(axis=-1, keepdims=True)), 1e-6)
        k = pack(keys.reshape(-1).tolist(), t).reshape(batch, steps, kv_heads * dk)
    else:
        k = values(t, (batch, steps, kv_heads * dk))
    v = values(t, (batch, steps, kv_heads * dv))
    inputs = {"query": q, "key": k, "value": v}
    # S other than T needs a past_state: without one onnx's inference gives present_state T's type
    if broken == "state-shape" or s_type != t or one_in(choices, 3):
        inputs["past_state"] = values(s_type, (batch, kv_heads, dk + (broken == "state-shape"), dv))
    decay_read, beta_read = gated and broken != "decay-missing", delta and broken != "beta-missing"
    unread = pick(choices, ("decay", "beta")) if broken == "unread" else None
    if decay_read or broken == "decay-shape" or unread == "decay":
        width = pick(choices, (kv_heads * dk, kv_heads))
        if broken == "decay-shape":
            width = kv_heads * dk + 1
        count = batch * steps * width
        drawn = np.zeros(count) if exact else -rng.uniform(0.0, 2.0, size=count) * pick(choices, (1.0, 1.0, -0.25))
        inputs["decay"] = pack(drawn.tolist(), t).reshape(batch, steps, width)
    if beta_read or broken == "beta-shape" or unread == "beta":
        width = pick(choices, (kv_heads, 1))
        if broken == "beta-shape":
            width = kv_heads + 1
        count = batch * steps * width
        drawn = rng.integers(0, 2, size=count) + 1.0 * (not one_in(choices, 3)) if exact else rng.uniform(0.0, 1.0, size=count)
        inputs["beta"] = pack(np.minimum(drawn, 2.0).tolist(), t).reshape(batch, steps, width)
    attributes: dict = {"q_num_heads": q_heads, "kv_num_heads": kv_heads}
    if not default_rule:
        attributes["update_rule"] = "gated_deltas" if broken == "rule" else rule
    elif broken == "rule":
        attributes["update_rule"] = "softmax"
    if one_in(choices, 4):
        attributes["scale"] = pick(choices, (0.5, 1.0, 0.25, -0.5, 2.0))
    if one_in(choices, 4):
        attributes["chunk_size"] = pick(choices, (1, 2, 64, 3, 0))
    return made(version, binding, inputs, attributes, outputs=(True, True))


STRATEGIES = {"LinearAttention": example}
