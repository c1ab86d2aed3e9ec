"""LinearAttention (version 27), from the schema text in onnx.defs, run token by token.

The doc: "The query, key, value, and (where applicable) decay/beta inputs use 3D packed format
[B, T, H*D], where heads are flattened into the last dimension; q_num_heads and kv_num_heads are
always required and are used to unpack to 4D internally for computation. The optional past_state
and present_state are 4D with shape (B, H_kv, d_k, d_v)." GQA: "q_num_heads must be a positive
multiple of kv_num_heads ... each KV head (and its recurrent state) is shared by
`q_num_heads / kv_num_heads` query heads". The update rules:

- "linear": S_t = S_{t-1} + k_t ⊗ v_t; o_t = scale * q_t^T S_t
- "gated": S_t = exp(g_t) * S_{t-1} + k_t ⊗ v_t; o_t = scale * q_t^T S_t
- "delta": S_t = S_{t-1} + β_t * k_t ⊗ (v_t - S_{t-1}^T k_t); o_t = scale * q_t^T S_t
- "gated_delta": S_t = exp(g_t) * S_{t-1} + β_t * k_t ⊗ (v_t - exp(g_t) * S_{t-1}^T k_t); o_t = scale * q_t^T S_t

"Semantics: Equivalent to running the recurrent update sequentially for each token, but may be
implemented using chunk-parallel algorithms". So the reference runs the recurrence token by token
in float64 (exact for the exactly summable draws), and `chunk_size` ("Tuning hint; does not affect
output correctness") changes nothing.

How the text is read here:

- S is (d_k, d_v): k_t ⊗ v_t is the (d_k, d_v) matrix k_i·v_j, S^T k_t the d_v vector Σ_i S_ij·k_i,
  q_t^T S_t the d_v vector Σ_i q_i·S_ij;
- a per-key-dimension decay (B, T, H_kv·d_k) scales row i of the state by exp(g_i) (the only
  reading of "exp(g_t) * S_{t-1}" where g_t has d_k entries; the function body does the same); a
  per-head decay (B, T, H_kv) scales the whole state; beta (B, T, H_kv) per kv head, (B, T, 1)
  one for every head;
- query head h reads kv head h // (q_num_heads / kv_num_heads): "Group-query attention", whose
  groups are consecutive heads (the function body expands each kv state over its group the same way);
- scale 0.0 (the default) is 1/sqrt(d_k), d_k = query.shape[-1] / q_num_heads; another value is used
  as given (the attribute is a float, so as float32);
- past_state absent: zeros; present_state: the state after the last token (past_state itself for
  T = 0).

A decay given to "linear" or "delta", or a beta given to "linear" or "gated", is a gate the rule's
recurrence does not read; the doc says only "Required for ..." of each, but the schema's own shape
inference refuses the node ("update_rule 'linear' forbids decay input", so onnx.checker refuses the
model), as onnx's reference implementation does: invalid here, by that rule ("unread-gate").

Invalid: a rank other than 3 (past_state other than 4), heads that are not positive or do not
divide the packed dims, q_num_heads not a multiple of kv_num_heads, shapes that disagree on B, T,
d_k or the state's shape, an update_rule outside the four, decay missing for "gated" and
"gated_delta", beta missing for "delta" and "gated_delta", and decay or beta of another shape than
the two the text gives each.

The bound. Every rounding of a run of the recurrence (token by token, or chunk-parallel in any
association, with FMA or not) lies on one of the products and sums that the expanded recurrence is
made of; Higham's argument for a polynomial evaluated in any order then bounds the error by
γ(N)·M, M the recurrence run on absolute values (|g|, |β|, |k|, |v|, |q|, every subtraction an
addition) and N the most roundings along one term: per token d_k for the retrieval S^T k, the
exp (4), the products with g, β and k, the subtraction and the addition (12 together), and where
the decay is summed in log space by a chunked kernel, 4 more per unit of |g|; then d_k + 6 for the
output's dot product, the scale (1/sqrt(d_k) rounded twice, or folded into q) and its product.
One tier per accumulator (float32, then the 16-bit type for a 16-bit T or S, as the state may be
held in it between tokens); where every input is an integer, the decay 0 (exp(0) = 1), beta an
integer, the scale a power of two and M below the accumulator's significand, every step of every
order is exact there and that tier allows the correctly rounded value alone: a wrong head mapping,
a state not carried or a transposed outer product is told bitwise. Where M passes the accumulator's
largest finite value (a state on the way, or the output's sum before the scale: float16's 65504 is
reached by a delta rule with keys far from unit length), a partial sum may overflow in some order,
and that tier sets no requirement (TOSA's rule, as bounds.py has it).

The function body (context dependent) runs the recurrence in a Scan, in float32 (each 16-bit input
cast to float, the state kept in float between tokens, each output token cast back): within the
float32 tier. conform's body evaluator does not run Scan, so the body is not evaluated as a reading
of its own (onnx.reference running the body as a local function passes every drawn case). With no
token (T = 0) the body's `Reshape(query, [B, T, H_q, -1])` cannot infer the -1 from no elements:
a rejection is allowed there. Where S is not T and past_state is absent, the body's present_state is
`CastLike(FinalState, query)`, of type T, not the S the schema declares: a flaw of the body.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ..bounds import ElementBound, Tier, gamma, half_ulp, unit_roundoff
from ..case import Example
from ..dtypes import dtype
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, text_attribute

UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")
GATED = ("gated", "gated_delta")
DELTA = ("delta", "gated_delta")

RANK = ("The query, key, value, and (where applicable) decay/beta inputs use 3D packed format [B, T, H*D] ... "
        "The optional past_state and present_state are 4D with shape (B, H_kv, d_k, d_v).")
NUM_HEADS = ("q_num_heads and kv_num_heads are always required and are used to unpack to 4D internally: query "
             "(B, T, H_q * d_k), key (B, T, H_kv * d_k), value (B, T, H_kv * d_v)")
GQA = "q_num_heads must be a positive multiple of kv_num_heads."
SHAPES = ("query: 3D packed shape (B, T, H_q * d_k); key: (B, T, H_kv * d_k); value: (B, T, H_kv * d_v): "
          "the same B and T, key's d_k query's (d_k = query.shape[-1] / q_num_heads)")
STATE_SHAPE = "past_state: Recurrent state from previous step with shape (B, H_kv, d_k, d_v). Always 4D."
UPDATE_RULE = "update_rule: One of: 'linear', 'gated', 'delta', 'gated_delta'."
DECAY_MISSING = "decay: Required for 'gated' and 'gated_delta' modes."
BETA_MISSING = "beta: Required for 'delta' and 'gated_delta' modes."
DECAY_SHAPE = ("decay: 3D packed shape: (B, T, H_kv * d_k) for per-key-dimension decay (GLA/RWKV-6), or (B, T, H_kv) "
               "for per-head scalar decay (DeltaNet/RetNet).")
BETA_SHAPE = "beta: 3D packed shape: (B, T, H_kv) or (B, T, 1)."
UNREAD = ("decay: Required for 'gated' and 'gated_delta' modes; beta: Required for 'delta' and 'gated_delta' modes: "
          "the doc is silent on a gate the rule does not read, but the schema's own inference refuses it "
          "(\"update_rule 'linear' forbids decay input\"), as onnx's reference does")
RULES = ("rank", "num-heads", "heads-not-divisible", "shape-mismatch", "state-shape", "update-rule", "decay-missing",
         "beta-missing", "unread-gate", "decay-shape", "beta-shape")
CHUNK = ("chunk_size ≤ 0: 'Tuning hint; does not affect output correctness' sets no range, but a chunk of no tokens "
         "is nothing a chunked kernel can use")
EMPTY_BODY = ("no token or no batch: the function body's Reshape(query, [B, T, H_q, -1]) cannot infer the -1 from no "
              "elements, so a runtime expanding the body may refuse the node")
Y_REASON = ("the recurrence in any association (token by token or chunk-parallel): γ(N)·M, M the recurrence on absolute "
            "values, N the roundings along one term (per token d_k + 12, 4 more per unit of |decay|; d_k + 6 for the "
            "output), rounded to T")
STATE_REASON = "the recurrence's state in any association: γ(N)·M, M the state of the recurrence on absolute values, rounded to S"


@dataclass
class Setup:
    """One case's operands unpacked to 4-D, as float64, and what the attributes make of them."""

    q: np.ndarray  # (B, Hq, T, dk)
    k: np.ndarray  # (B, Hkv, T, dk)
    v: np.ndarray  # (B, Hkv, T, dv)
    state: np.ndarray  # (B, Hkv, dk, dv)
    g: np.ndarray  # (B, Hkv, T, dk): exp(decay), ones for a rule without decay
    decay: np.ndarray  # (B, Hkv, T, dk): the decay itself, zeros without
    beta: np.ndarray  # (B, Hkv, T): ones for a rule without beta
    rule: str
    scale: float
    default_scale: bool
    out: np.dtype  # T
    state_type: np.dtype  # S


def _wide(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return x.astype(np.float64)


def _four_d(x: np.ndarray, heads: int) -> np.ndarray:
    """A packed (B, T, H·D) input as (B, H, T, D)."""
    return _wide(x).reshape(x.shape[0], x.shape[1], heads, x.shape[2] // heads).transpose(0, 2, 1, 3)


def setup(example: Example) -> Setup | Invalid:
    """The case's operands and attributes (see the module's docstring), or why the text refuses them."""
    a = example.attributes
    q, k, v = example.inputs["query"], example.inputs["key"], example.inputs["value"]
    past, decay, beta = (example.inputs.get(n) for n in ("past_state", "decay", "beta"))
    rule = text_attribute(example, "update_rule", "gated_delta")
    if rule not in UPDATE_RULES:
        return Invalid("update-rule", UPDATE_RULE)
    if any(x.ndim != 3 for x in (q, k, v, *(y for y in (decay, beta) if y is not None))) or (past is not None and past.ndim != 4):
        return Invalid("rank", RANK)
    hq, hkv = int(a.get("q_num_heads", 0)), int(a.get("kv_num_heads", 0))
    if hq <= 0 or hkv <= 0 or q.shape[2] % hq or k.shape[2] % hkv or v.shape[2] % hkv:
        return Invalid("num-heads", NUM_HEADS)
    if hq % hkv:
        return Invalid("heads-not-divisible", GQA)
    batch, steps = q.shape[:2]
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    if k.shape[:2] != (batch, steps) or v.shape[:2] != (batch, steps) or k.shape[2] != hkv * dk:
        return Invalid("shape-mismatch", SHAPES)
    if past is not None and past.shape != (batch, hkv, dk, dv):
        return Invalid("state-shape", STATE_SHAPE)
    if rule in GATED and decay is None:
        return Invalid("decay-missing", DECAY_MISSING)
    if rule in DELTA and beta is None:
        return Invalid("beta-missing", BETA_MISSING)
    if (decay is not None and rule not in GATED) or (beta is not None and rule not in DELTA):
        return Invalid("unread-gate", UNREAD)
    if decay is not None and decay.shape not in ((batch, steps, hkv * dk), (batch, steps, hkv)):
        return Invalid("decay-shape", DECAY_SHAPE)
    if beta is not None and beta.shape not in ((batch, steps, hkv), (batch, steps, 1)):
        return Invalid("beta-shape", BETA_SHAPE)
    g = np.ones((batch, hkv, steps, dk))
    logs = np.zeros((batch, hkv, steps, dk))
    if rule in GATED:
        unpacked = _four_d(decay, hkv)  # (B, Hkv, T, dk), or (B, Hkv, T, 1) per head
        logs = np.broadcast_to(unpacked, (batch, hkv, steps, dk)).copy()
        with np.errstate(all="ignore"):
            g = np.exp(logs)
    b = np.ones((batch, hkv, steps))
    if rule in DELTA:
        wide = _wide(beta).transpose(0, 2, 1)  # (B, Hkv or 1, T)
        b = np.broadcast_to(wide, (batch, hkv, steps)).copy()
    given = float(np.float32(a.get("scale", 0.0)))
    default = given == 0.0
    scale = 1.0 / math.sqrt(dk) if default and dk else (1.0 if default else given)
    state = _wide(past) if past is not None else np.zeros((batch, hkv, dk, dv))
    out, state_type = np.dtype(q.dtype), _state_type(example)
    return Setup(_four_d(q, hq), _four_d(k, hkv), _four_d(v, hkv), state, g, logs, b, rule, scale, default, out, state_type)


def _state_type(example: Example) -> np.dtype:
    """S: past_state's type, else the binding's (present_state is an output of type S)."""
    past = example.inputs.get("past_state")
    if past is not None:
        return np.dtype(past.dtype)
    name = example.types.get("S")
    return dtype(name).np_dtype if name else np.dtype(example.inputs["query"].dtype)


# --- the recurrence, in float64, and on absolute values ---

def _step(s: Setup, state: np.ndarray, t: int, absolute: bool) -> np.ndarray:
    """S_t from S_{t-1} for every (batch, kv head) by the update rule; with `absolute`, every operand
    taken by its magnitude and the subtraction made an addition (M, the bound's magnitude)."""
    k, v, g, b = s.k[:, :, t], s.v[:, :, t], s.g[:, :, t], s.beta[:, :, t]
    if absolute:
        k, v, g, b = np.abs(k), np.abs(v), np.abs(g), np.abs(b)
    decayed = g[..., :, None] * state  # (B, H, dk, dv): row i scaled by exp(g_i)
    if s.rule in DELTA:
        retrieved = np.einsum("bhij,bhi->bhj", decayed, k)  # S^T k
        write = (v + retrieved) if absolute else (v - retrieved)
        outer = b[..., None, None] * k[..., :, None] * write[..., None, :]
    else:
        outer = k[..., :, None] * v[..., None, :]
    return decayed + outer


def run(s: Setup, absolute: bool = False) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The outputs o (B, Hq, T, dv) and the final state, token by token, and every state on the way."""
    batch, hq, steps, _ = s.q.shape
    hkv = s.k.shape[1]
    group = hq // hkv
    state = np.abs(s.state) if absolute else s.state.copy()
    q = np.abs(s.q) if absolute else s.q
    scale = abs(s.scale) if absolute else s.scale
    o = np.zeros((batch, hq, steps, s.v.shape[3]))
    states = [state]
    with np.errstate(all="ignore"):
        for t in range(steps):
            state = _step(s, state, t, absolute)
            states.append(state)
            read = np.repeat(state, group, axis=1)  # query head h reads kv head h // group
            o[:, :, t] = scale * np.einsum("bhi,bhij->bhj", q[:, :, t], read)
    return o, state, states


def _packed(o: np.ndarray) -> np.ndarray:
    """o (B, Hq, T, dv) in the packed output layout (B, T, Hq·dv)."""
    b, h, t, dv = o.shape
    return o.transpose(0, 2, 1, 3).reshape(b, t, h * dv)


def _tiers_of(s: Setup) -> tuple[tuple[str, np.dtype], ...]:
    """float32 (the widest T allows), then the coarsest 16-bit type among T and S."""
    narrow = [np.dtype(d) for d in (s.out, s.state_type) if np.dtype(d).itemsize == 2]
    found = [("accumulated in float32 or wider", np.dtype(np.float32))]
    if narrow:
        worst = max(narrow, key=unit_roundoff)
        found.append((f"accumulated in {'float16' if worst == np.float16 else 'bfloat16'}", worst))
    return tuple(found)


def _integral(x: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(x)) and np.all(x == np.round(x)))


def _exact_in(s: Setup, magnitude: float, acc: np.dtype) -> bool:
    """Whether every step of every association is exact in `acc`: integer operands (q, k, v, the
    past, beta), exp(decay) = 1, a power-of-two scale, and every magnitude (a partial sum's, a
    product's) within the significand."""
    if s.rule in GATED and np.any(s.decay != 0):
        return False
    if not all(_integral(x) for x in (s.q, s.k, s.v, s.state, s.beta)):
        return False
    if s.scale == 0 or not math.isfinite(s.scale) or math.frexp(abs(s.scale))[0] != 0.5:
        return False
    return magnitude <= 2.0 ** (int(ml_dtypes.finfo(acc).nmant) + 1)


def _bounds(s: Setup, o: np.ndarray, final: np.ndarray) -> tuple[ElementBound, ElementBound]:
    o_abs, final_abs, states_abs = run(s, absolute=True)
    steps, dk = s.q.shape[2], s.q.shape[3]
    # a decay of -inf (exp: 0, every state row forgotten) adds no rounding token by token; a chunked
    # kernel's sums of log decays meet it as inf - inf, which the bound cannot cover either way
    finite = np.abs(s.decay[np.isfinite(s.decay)])
    per_token = dk + 12 + 4 * int(math.ceil(min(float(finite.max()), 1e6))) if finite.size else dk + 12
    n_state = steps * per_token
    n_out = n_state + dk + 6
    y, y_abs = _packed(o), _packed(o_abs)
    # the largest intermediate any association forms: a state entry (or a product of q or k with one),
    # and q·k products summed over the sequence
    widest = max([float(np.max(m)) if m.size else 0.0 for m in states_abs] + [0.0])
    factor = max(1.0, float(np.abs(s.q).max()) if s.q.size else 0.0, float(np.abs(s.k).max()) if s.k.size else 0.0)
    magnitude = widest * factor * max(dk, 1) * (steps + 1) + (float(np.max(y_abs)) if y_abs.size else 0.0) / abs(s.scale or 1.0)
    y_tiers, state_tiers = [], []
    for label, acc in _tiers_of(s):
        u = unit_roundoff(acc)
        tiny = float(ml_dtypes.finfo(acc).smallest_normal)
        exact = _exact_in(s, magnitude, acc)
        with np.errstate(all="ignore"):
            y_allowed = gamma(n_out, u) * y_abs + n_out * tiny + half_ulp(y, s.out)
            s_allowed = gamma(n_state, u) * final_abs + n_state * tiny + half_ulp(final, s.state_type)
            if exact:
                y_allowed = np.abs(_rounded(y, s.out) - y)
                s_allowed = np.abs(_rounded(final, s.state_type) - final)
            # Where a partial sum may pass the accumulator's max in some order (a state on the way,
            # or the output's sum before its scale), an overflow is allowed: no requirement there.
            top = float(ml_dtypes.finfo(acc).max)
            if widest > top:
                y_allowed, s_allowed = np.full(y.shape, np.inf), np.full(final.shape, np.inf)
            else:
                y_allowed = np.where(y_abs / min(1.0, abs(s.scale) or 1.0) > top, np.inf, y_allowed)
        y_tiers.append(Tier(label, _finite(y_allowed, y), np.ones(y.shape)))
        state_tiers.append(Tier(label, _finite(s_allowed, final), np.ones(final.shape)))
    return (ElementBound(tuple(y_tiers), "γ(N)·M + ½ ulp(output)", Y_REASON),
            ElementBound(tuple(state_tiers), "γ(N)·M + ½ ulp(present_state)", STATE_REASON))


def _rounded(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    with np.errstate(all="ignore"):
        return x.astype(dtype).astype(np.float64)


def _finite(allowed: np.ndarray, value: np.ndarray) -> np.ndarray:
    """No requirement where the bound itself is not a number; a non-finite value judged exactly."""
    allowed = np.where(np.isnan(allowed), np.inf, allowed)
    return np.where(np.isfinite(value), allowed, 0.0)


class LinearAttention27(VersionSemantics):
    """Version 27: the four update rules, token by token, GQA by consecutive groups, packed 3-D inputs."""

    since = 27

    def expected(self, example: Example) -> Expected:
        s = setup(example)
        if isinstance(s, Invalid):
            return Expected(invalid=s)
        o, final, _ = run(s)
        y = _packed(o)
        with np.errstate(all="ignore"):
            outputs = (y.astype(s.out), final.astype(s.state_type))
        budgets = _bounds(s, o, final)
        chunk = example.attributes.get("chunk_size")
        may_reject = CHUNK if chunk is not None and int(chunk) <= 0 else None
        if not s.q.shape[0] or not s.q.shape[2]:
            may_reject = EMPTY_BODY
        return Expected(readings=(Reading(outputs, precise=(y, final)),), budgets=budgets, may_reject=may_reject)


# --- traits ---

def _setup_of(example: Example) -> Setup | None:
    found = setup(example)
    return None if isinstance(found, Invalid) else found


def grouped_query(example: Example) -> bool:
    a = example.attributes
    return int(a.get("q_num_heads", 0)) != int(a.get("kv_num_heads", 0))


def with_past(example: Example) -> bool:
    return example.inputs.get("past_state") is not None


def per_key_decay(example: Example) -> bool:
    """A decay of (B, T, H_kv·d_k) with d_k > 1 read by a gated rule: each state row its own factor."""
    s = _setup_of(example)
    d = example.inputs.get("decay")
    return s is not None and s.rule in GATED and d is not None and s.q.shape[3] > 1 and d.shape[2] != s.k.shape[1]


def shared_beta(example: Example) -> bool:
    """beta (B, T, 1) for several kv heads, read by a delta rule."""
    s = _setup_of(example)
    b = example.inputs.get("beta")
    return s is not None and s.rule in DELTA and b is not None and b.shape[2] == 1 and s.k.shape[1] > 1


def state_type_differs(example: Example) -> bool:
    """S another type than T."""
    return _state_type(example) != np.dtype(example.inputs["query"].dtype)


def state_type_from_query(example: Example) -> bool:
    """S another type than T without a past_state: onnx's inference (and the function body's
    `CastLike(FinalState, query)`) gives present_state T's type where the schema gives S."""
    return example.inputs.get("past_state") is None and state_type_differs(example)


def empty_sequence(example: Example) -> bool:
    return example.inputs["query"].ndim == 3 and example.inputs["query"].shape[1] == 0


def explicit_scale(example: Example) -> bool:
    return float(example.attributes.get("scale", 0.0) or 0.0) != 0.0


def default_rule(example: Example) -> bool:
    return example.attributes.get("update_rule") is None


def _rule_trait(rule: str):
    def trait(example: Example) -> bool:
        return text_attribute(example, "update_rule", "gated_delta") == rule
    trait.__doc__ = f"update_rule {rule!r}"
    return trait


def unnormalized_key(example: Example) -> bool:
    """A delta rule with a key whose L2 norm is not 1 ("Should be L2-normalized for delta/gated_delta modes")."""
    s = _setup_of(example)
    if s is None or s.rule not in DELTA or not s.k.size:
        return False
    return bool(np.any(np.abs(np.sqrt((s.k ** 2).sum(axis=-1)) - 1) > 1e-2))


TRAITS = {
    "grouped-query": grouped_query, "with-past": with_past, "per-key-decay": per_key_decay, "shared-beta": shared_beta,
    "state-type-differs": state_type_differs,
    "state-type-from-query": state_type_from_query, "empty-sequence": empty_sequence,
    "explicit-scale": explicit_scale, "default-rule": default_rule, "unnormalized-key": unnormalized_key,
    **{f"rule-{r.replace('_', '-')}": _rule_trait(r) for r in UPDATE_RULES},
}

REFERENCE = OpReference(
    op="LinearAttention", dtype_param="T",
    data_inputs=("query", "key", "value", "past_state", "decay", "beta"),
    semantics=(LinearAttention27,), traits=TRAITS, rules=RULES)
