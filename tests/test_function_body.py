"""Function bodies as readings: every covered op version with a body evaluates it; the bounds it
carries hold what a body-expanding runtime computes; the text's known contradictions between body
and prose are told apart; and a runtime that expands the body never fails."""

from __future__ import annotations

from functools import cache

import ml_dtypes
import numpy as np
import onnx
import onnx.defs
import onnx.inliner
import pytest
from onnx import helper

from conformance import casefile
from conformance.case import Example
from conformance.compare import AMBIGUOUS, FAIL, PASS, judge
from conformance.model import build
from conformance.reference import covered_ops, for_op
from conformance.reference import function_body as fb
from conformance.registry import versions
from conformance.runners.base import RunOutput


def example(op: str, since: int, dtype: str, attributes: dict | None = None, **inputs) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    param = version.inputs[0].type_param
    return Example(version, "unit", {param: dtype}, dict(inputs), dict(attributes or {}), "unit", param)


def body_reading(expected):
    return next((r for r in expected.body_readings()[0] if r.label == fb.FUNCTION_BODY), None)


def contradiction(expected) -> str:
    return expected.body_readings()[1]


def has_body(version) -> bool:
    schema = onnx.defs.get_schema(version.op, version.since_version, "")
    return schema.has_function or schema.has_context_dependent_function


@cache
def examples_of(op):
    return casefile.load_examples(op)


BODY_OPS = [op for op in covered_ops() if any(has_body(v) for v in versions(op)) and not for_op(op).body_in_readings]


def test_the_covered_ops_with_a_body_are_found():
    # onnx 1.23's ai.onnx: these covered ops carry a function body (static or context-dependent).
    assert {"Elu", "Selu", "Celu", "Softplus", "HardSigmoid", "HardSwish", "Gelu", "ThresholdedRelu", "CastLike",
            "Mish", "LeakyRelu", "PRelu", "Relu", "Shrink", "Softsign", "Clip", *CONTROL_FLOW} <= set(BODY_OPS)


# Bodies that are not valid for a type their op allows (docs/function-bodies.md): the body's op
# version in its own opset does not take the type.
ILL_TYPED = {("Clip-13", "bfloat16"),  # Where-9 takes no bfloat16 (Where-16 does)
             ("Shrink-9", "uint8"), ("Shrink-9", "uint16"), ("Shrink-9", "uint32"), ("Shrink-9", "uint64"),  # Neg-13: signed only
             *(("ReduceLogSum-18", t) for t in ("uint32", "uint64", "int32", "int64")),  # Log-13: floats only
             ("SoftmaxCrossEntropyLoss-13", "bfloat16")}  # its NegativeLogLikelihoodLoss-13 takes no bfloat16


# Bodies holding control flow, whose graph attributes conform does not evaluate yet (nor build a
# model of): AffineGrid-20's `If` on the spatial rank, LinearAttention-27's `Scan` over the tokens.
CONTROL_FLOW = {"AffineGrid", "LinearAttention"}


@pytest.mark.parametrize("op", [op for op in BODY_OPS if op not in CONTROL_FLOW])
def test_every_version_with_a_body_evaluates_it_for_every_dtype_its_cases_use(op):
    unevaluated, evaluated = [], set()
    for ex in examples_of(op):
        if not has_body(ex.version) or (ex.version.label, ex.dtype) in evaluated:
            continue
        prose = for_op(op).expected(ex, bodies=False)
        if not prose.is_valid or fb.body_of(ex) is None:
            continue
        try:
            fb.evaluate(fb.body_of(ex), ex)
        except fb.BodyUnavailable as why:
            if not (why.ill_typed and (ex.version.label, ex.dtype) in ILL_TYPED):
                unevaluated.append((ex.id, str(why)))
            evaluated.add((ex.version.label, ex.dtype))
            continue
        evaluated.add((ex.version.label, ex.dtype))
    assert not unevaluated, f"{op}: bodies that could not be evaluated: {unevaluated[:5]}"
    labels = {label for label, _ in evaluated}
    wanted = {v.label for v in versions(op) if has_body(v)}
    assert labels == wanted, f"{op}: no valid case evaluated the body of {sorted(wanted - labels)}"


def test_elu_body_bounds_hold_exp_minus_one_from_any_exp_within_budget():
    x = np.array([-1e-3], np.float32)
    found = for_op("Elu").expected(example("Elu", 22, "float", X=x))
    body = body_reading(found)
    assert body is not None
    # A body-expanding runtime: float32 exp 1 ULP off either way, then Sub rounded in float32.
    exp = np.exp(x)
    for off in (np.nextafter(exp, np.float32(0)), exp, np.nextafter(exp, np.float32(1))):
        assert body.bounds[0].contains(off - np.float32(1)).all()
    # exp(x) - 1 is -9.995e-4; a value 1e-6 away (about 16,000 ULP) is no evaluation of the body.
    assert not body.bounds[0].contains(np.array([-9.985e-4], np.float32)).any()


def test_body_bounds_of_an_exact_body_are_one_value():
    # Relu-14's body: Max(X, CastLike(0, X)): exact, the prose's value, so no separate reading.
    found = for_op("Relu").expected(example("Relu", 14, "int8", X=np.array([3, -4], np.int8)))
    assert [r.label for r in found.readings] == ["spec"] and found.body_readings() == ((), "")


def test_the_body_is_evaluated_only_when_the_prose_is_missed():
    x = np.array([-1e-3], np.float32)
    found = for_op("Elu").expected(example("Elu", 22, "float", X=x))
    assert judge(found, RunOutput(outputs=found.readings[0].outputs)).reading == "spec"
    assert found.body._found is None  # the prose matched: the body was never evaluated


def test_step_walks_each_float_grid():
    assert fb.step(np.array([1.0], np.float16), 1)[0] == np.float16(1) + np.float16(2 ** -10)
    assert fb.step(np.array([1.0], ml_dtypes.bfloat16), -1)[0] == ml_dtypes.bfloat16(1 - 2 ** -8)
    assert fb.step(np.array([1.0], np.float32), 2)[0] == np.float32(1 + 2 * 2 ** -23)
    assert fb.step(np.array([np.finfo(np.float16).max], np.float16), 1)[0] == np.inf
    e4m3 = ml_dtypes.float8_e4m3fn
    assert fb.step(np.array([448.0], e4m3), 1)[0] == e4m3(448)  # no inf in e4m3fn: max is the end


# The contradictions between a body and its prose, each with its minimal case (docs/function-bodies.md).
CONTRADICTIONS = {
    "Softplus-22 float x=100: Exp overflows in the body": (
        example("Softplus", 22, "float", X=np.array([100], np.float32)), [100.0], [np.inf]),
    "ThresholdedRelu-22 float16 X=inf, alpha=1e30: CastLike(alpha) is inf": (
        example("ThresholdedRelu", 22, "float16", {"alpha": 1e30}, X=np.array([np.inf], np.float16)), [np.inf], [0.0]),
    "HardSigmoid-6 float16 x=3, beta=-0.5: alpha rounded to float16, two roundings": (
        example("HardSigmoid", 6, "float16", {"beta": -0.5}, X=np.array([3], np.float16)),
        # 0.2 * 3 - 0.5 rounded once; float16(0.2) * 3, rounded, then - 0.5
        [float(np.float16(0.1))], [float(np.float16(np.float16(np.float16(0.2) * np.float16(3)) - np.float16(0.5)))]),
}


@pytest.mark.parametrize("name", sorted(CONTRADICTIONS))
def test_a_contradiction_gives_both_readings_and_following_the_body_is_ambiguous(name):
    ex, prose_value, body_value = CONTRADICTIONS[name]
    found = for_op(ex.op).expected(ex)
    assert contradiction(found)
    body = body_reading(found)
    assert body.outputs[0].astype(np.float64).tolist() == body_value
    dtype = ex.inputs[next(iter(ex.inputs))].dtype
    prose = judge(found, RunOutput(outputs=(np.array(prose_value, dtype),)))
    assert prose.outcome in (PASS, AMBIGUOUS) and prose.reading == found.readings[0].label, prose.message
    body = judge(found, RunOutput(outputs=(np.array(body_value, dtype),)))
    assert (body.outcome, body.reading) == (AMBIGUOUS, fb.FUNCTION_BODY), body.message
    assert fb.CONTRADICTION in body.message


def test_castlike_24_body_drops_round_mode():
    version = next(v for v in versions("CastLike") if v.since_version == 24)
    ex = Example(version, "unit", {"T1": "float", "T2": "float8e8m0"},
                 {"input": np.array([1.5], np.float32), "target_type": np.zeros([1], ml_dtypes.float8_e8m0fnu)},
                 {"round_mode": "down"}, "unit", "T1")
    found = for_op("CastLike").expected(ex)
    assert contradiction(found) == "1 of 1 elements"
    # round_mode down: 1.5 -> 1; the body's Cast has no round_mode: its default, up: 1.5 -> 2.
    assert found.readings[0].outputs[0].astype(np.float64).tolist() == [1.0]
    assert body_reading(found).outputs[0].astype(np.float64).tolist() == [2.0]
    got = judge(found, RunOutput(outputs=(np.array([2.0], ml_dtypes.float8_e8m0fnu),)))
    assert (got.outcome, got.reading) == (AMBIGUOUS, fb.FUNCTION_BODY)


def test_gelu_tanh_double_body_uses_float32_constants():
    x = np.array([1.5], np.float64)
    found = for_op("Gelu").expected(example("Gelu", 20, "double", {"approximate": "tanh"}, X=x))
    assert contradiction(found)
    # The body in double with float32 constants: sqrt(float32(2/pi)), float32(0.044715).
    c = np.float64(np.float32(0.044715))
    k = np.sqrt(np.float64(np.float32(0.63661975)))
    body_value = 0.5 * x * (1 + np.tanh(k * (x + c * x ** 3)))
    got = judge(found, RunOutput(outputs=(body_value,)))
    assert (got.outcome, got.reading) == (AMBIGUOUS, fb.FUNCTION_BODY), got.message


def test_a_body_that_agrees_with_the_prose_passes_under_its_name():
    # Elu-22 float at -1e-3: onnxruntime's value, exp(x) - 1 in float32, 86 ULP from the prose.
    x = np.array([-1e-3], np.float32)
    found = for_op("Elu").expected(example("Elu", 22, "float", X=x))
    assert contradiction(found) == ""
    got = judge(found, RunOutput(outputs=(np.exp(x) - np.float32(1),)))
    assert (got.outcome, got.reading) == (PASS, fb.FUNCTION_BODY), got.message


def test_a_value_outside_both_readings_fails_and_says_what_the_body_allows():
    x = np.array([-1e-3], np.float32)
    found = for_op("Elu").expected(example("Elu", 22, "float", X=x))
    got = judge(found, RunOutput(outputs=(np.array([-2e-3], np.float32),)))
    assert got.outcome == FAIL
    body_miss = [m for m in got.mismatches if m.index_notes]
    assert body_miss or "none of 2 allowed readings" in got.message


def test_an_unknown_check_kind_is_an_error_not_a_bitwise_pass():
    found = for_op("Exp").expected(example("Exp", 13, "float", input=np.array([1.0], np.float32)))
    strange = type(found)(readings=found.readings, budgets=("4 ULP",))
    with pytest.raises(TypeError, match="a check compare does not know"):
        judge(strange, RunOutput(outputs=found.readings[0].outputs))


# --- a runtime that expands the body: onnxruntime running the body's nodes must never fail ---


def expanded(ex: Example, expected) -> onnx.ModelProto:
    """`ex`'s model with its node replaced by the nodes of its function body (as a runtime without
    the op's kernel runs it)."""
    reference = for_op(ex.op)
    model = onnx.ModelProto()
    model.CopyFrom(build(ex, reference.output_types(ex, expected)).model)
    body = onnx.FunctionProto()
    body.CopyFrom(fb.body_of(ex))
    body.domain, body.name = "conform.body", ex.op
    node = model.graph.node[0]
    node.domain = "conform.body"
    present = {a.name for a in node.attribute}
    for formal in ex.version.attributes:  # the expansion reads @name from the caller, defaults filled in
        if formal.default is not None and formal.name not in present and formal.name != "consumed_inputs":
            node.attribute.append(helper.make_attribute(formal.name, formal.default))
    model.functions.append(body)
    opset = next(o.version for o in body.opset_import if o.domain in ("", "ai.onnx"))
    del model.opset_import[:]
    model.opset_import.extend([helper.make_opsetid("", opset), helper.make_opsetid("conform.body", 1)])
    model.ir_version = max(model.ir_version, 8)
    return onnx.inliner.inline_local_functions(model)


# Ops whose body holds a node onnxruntime computes beyond conform's budget (in its expectations file),
# by the trait of the op's reference that names the cause: those cases are not judged here.
INNER_DEVIATIONS = {"Swish": "sigmoid-argument-below-minus-one"}


@pytest.mark.parametrize("op", [op for op in BODY_OPS if op not in ("CastLike", *CONTROL_FLOW)])
def test_onnxruntime_running_the_expanded_body_never_fails(op):
    import onnxruntime as ort

    judged, failed, too_new = 0, [], 0
    for ex in examples_of(op):
        if not has_body(ex.version) or ex.expect_error or ex.expect_outputs is not None:
            continue
        expected = for_op(op).expected(ex)
        if not expected.is_valid or fb.body_of(ex) is None:
            continue
        trait = INNER_DEVIATIONS.get(op)
        if trait is not None and for_op(op).traits[trait](ex):
            continue
        try:
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # the body's nodes as written, unfused
            session = ort.InferenceSession(expanded(ex, expected).SerializeToString(), options, providers=["CPUExecutionProvider"])
            feeds = {k: v for k, v in ex.inputs.items() if v is not None}
            outputs = tuple(np.asarray(o) for o in session.run(None, feeds))
        except Exception as error:  # a kernel onnxruntime lacks inside the body (bfloat16 Exp...): not judged
            too_new += "Unsupported model IR version" in str(error) or "is under development" in str(error)
            continue
        judged += 1
        verdict = judge(expected, RunOutput(outputs=outputs))
        if verdict.outcome == FAIL:
            failed.append((ex.id, verdict.message[:200]))
    if not judged and too_new:  # DepthToSpace-28, SpaceToDepth-28: IR 14, beyond what this onnxruntime loads
        pytest.skip(f"{op}: every version with a body needs an IR version newer than onnxruntime loads")
    assert judged, f"{op}: no case's expanded body ran on onnxruntime"
    assert not failed, f"{op}: the body's own nodes on onnxruntime fail: {failed[:3]}"


def test_following_the_body_with_an_inner_function_beyond_its_budget_is_imprecise_not_wrong():
    # onnxruntime's double Gelu (tanh) follows the body's float32 constants, and its tanh(17.8) is 1.0,
    # 6 ULP from tanh's exact value: beyond tanh's budget, within its wrong-answer line.
    from conformance.compare import IMPRECISE

    x = np.array([7.0, 1.5])
    found = for_op("Gelu").expected(example("Gelu", 20, "double", {"approximate": "tanh"}, X=x))
    c, k = np.float64(np.float32(0.044715)), np.sqrt(np.float64(np.float32(0.63661975)))
    tanh = np.tanh(k * (x + c * x ** 3))
    tanh[0] = 1.0
    got = judge(found, RunOutput(outputs=(0.5 * x * (1 + tanh),)))
    assert (got.outcome, got.reading) == (IMPRECISE, fb.FUNCTION_BODY), got.message
    tanh[0] = 0.5  # a wrong tanh is wrong through the body too
    assert judge(found, RunOutput(outputs=(0.5 * x * (1 + tanh),))).outcome == FAIL


def test_the_html_lists_an_imprecise_body_match_which_measured_no_ulp():
    from conformance.report.html import _imprecise_list

    record = {"id": "Gelu-20/hypothesis-0001/double", "message": "matches the reading 'function body' only with ..."}
    row = _imprecise_list([record])
    assert "Gelu-20/hypothesis-0001/double" in row and "<td></td>" in row


def test_strict_zero_holds_in_a_body_reading_too():
    from conformance.compare import bounds_mismatch
    from conformance.reference.expected import Bounds

    zero = np.array([0.0, 1.0], np.float32)
    bounds = Bounds(zero, zero, np.zeros(2, bool))
    negative = np.array([-0.0, 1.0], np.float32)
    assert bounds_mismatch(0, zero, negative, bounds) is None
    assert bounds_mismatch(0, zero, negative, bounds, strict_zero=True).count == 1


def test_a_wrong_string_from_a_body_with_casts_fails_as_a_mismatch_not_a_traceback():
    # CastLike-21 string -> string: its body's bounds hold strings. onnx.reference drops a trailing
    # NUL (numpy's fixed-width strings), and `conform run --op CastLike --runner reference` stopped
    # there with "could not convert string to float".
    version = next(v for v in versions("CastLike") if v.since_version == 21)
    strings = np.array(["zZz\x00", "a"], dtype=object)
    case = Example(version, "unit", {"T1": "string", "T2": "string"},
                   {"input": strings, "target_type": np.array([], dtype=object)}, {}, "unit", "T1")
    found = for_op("CastLike").expected(case)
    wrong = judge(found, RunOutput(outputs=(np.array(["zZz", "a"], dtype=object),)))
    assert wrong.outcome == FAIL and "got 'zZz'" in wrong.message, wrong.message
    assert judge(found, RunOutput(outputs=(strings.copy(),))).outcome == PASS


def test_range_gives_its_loop_body_s_accumulated_values_as_a_reading_of_its_own():
    # Range's body is a Loop (a graph attribute the body path does not evaluate): its reference
    # gives the body's reading, prev + delta accumulated in T, which start + i*delta does not match.
    start, limit, delta = np.float32(0), np.float32(1), np.float32(0.1)
    ex = example("Range", 11, "float", start=np.array(start), limit=np.array(limit), delta=np.array(delta))
    found = for_op("Range").expected(ex)
    accumulated, value = [], start
    for _ in range(10):
        accumulated.append(value)
        value = np.float32(value + delta)
    assert found.body is None, "Range's body readings come from its own reference, not the body path"
    matching = [r.label for r in found.readings if np.array_equal(r.outputs[0], np.array(accumulated, np.float32))]
    assert any("function body" in label for label in matching), \
        f"no reading labelled as the body's gives the accumulated values; labels: {[r.label for r in found.readings]}"


@pytest.mark.parametrize("since", [23, 24])
def test_attention_with_a_mask_evaluates_its_body_whose_pad_gets_a_one_element_fill(since):
    # The body pads the mask with Pad(..., FloatNegInfCast) where FloatNegInfCast is a Constant
    # float[1]; Pad's text asks a scalar. Read as its element inside the body, the body's reading
    # of every masked case is there (it was lost: "Pad-... finds its input invalid").
    masked = [ex for ex in examples_of("Attention") if ex.version.since_version == since
              and ex.inputs.get("attn_mask") is not None and for_op("Attention").expected(ex, bodies=False).is_valid]
    assert masked, f"Attention-{since} has no valid YAML case with an attn_mask"
    for ex in masked:
        outputs = fb.evaluate(fb.body_of(ex), ex)
        assert outputs and outputs[0].nominal.shape == for_op("Attention").expected(ex, bodies=False).readings[0].outputs[0].shape, ex.id


def test_a_one_element_fill_given_to_pad_itself_is_still_invalid():
    data = np.arange(3, dtype=np.float32)
    given = example("Pad", 18, "float", {}, data=data, pads=np.array([1, 1], np.int64), constant_value=np.array([5.0], np.float32))
    found = for_op("Pad").expected(given)
    assert not found.is_valid and found.invalid.rule == "constant-value-not-scalar"
