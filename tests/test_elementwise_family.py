"""The element-wise family's shared pieces (broadcasting, rounding, integer overflow, arity,
models at old opsets) and per-op properties that iterate every family op, in-process."""

from functools import cache

import ml_dtypes
import numpy as np
import onnx
import pytest

from conformance import strategies
from conformance.case import Example
from conformance.compare import UNSUPPORTED, judge
from conformance.dtypes import dtype
from conformance.model import MODES, build, checker_problem
from conformance.reference import broadcast as bc
from conformance.reference import covered_ops, for_op
from conformance.reference.base import Expected, Invalid
from conformance.reference.elementwise import SATURATED, WRAPPED, family_of, round_to
from conformance.registry import versions
from conformance.runners.base import RunOutput


def family_ops():
    return [op for op in covered_ops() if family_of(for_op(op)) is not None]


# -- broadcasting, by the text ---------------------------------------------------------------

@pytest.mark.parametrize("shapes, out", [
    ([(2, 3, 4, 5), ()], (2, 3, 4, 5)),
    ([(2, 3, 4, 5), (5,)], (2, 3, 4, 5)),
    ([(4, 5), (2, 3, 4, 5)], (2, 3, 4, 5)),
    ([(1, 4, 5), (2, 3, 1, 1)], (2, 3, 4, 5)),
    ([(3, 4, 5), (2, 1, 1, 1)], (2, 3, 4, 5)),
    ([(0, 3), (1, 3)], (0, 3)),
    ([(0,), (1,)], (0,)),
    ([(2, 3), (3, 2)], None),
    ([(0,), (2,)], None),
    ([(2,), (3,), (1,)], None),
])
def test_multidirectional_broadcasting_follows_broadcasting_md(shapes, out):
    assert bc.multidirectional_shape(shapes) == out


@pytest.mark.parametrize("a, b, axis, placed", [
    ((2, 3, 4, 5), (3, 4), 1, (1, 3, 4, 1)),  # the example onnx.reference rejects
    ((2, 3, 4, 5), (5,), None, (1, 1, 1, 5)),
    ((2, 3, 4, 5), (4, 5), None, (1, 1, 4, 5)),
    ((2, 3, 4, 5), (2,), 0, (2, 1, 1, 1)),
    ((2, 3, 4, 5), (), None, (1, 1, 1, 1)),
    ((2, 3, 4, 5), (1, 1), None, (1, 1, 1, 1)),
    ((2, 3, 4, 5), (3, 4), -3, (1, 3, 4, 1)),
    ((2, 3, 4, 5), (3, 4), None, None),  # aligned at the end, (3,4) is not (4,5)
    ((2, 3, 4, 5), (3, 4), 2, None),
    ((2, 3), (1, 2, 3), None, None),
])
def test_legacy_broadcasting_places_b_as_the_text_says(a, b, axis, placed):
    assert bc.legacy_b_shape(a, b, axis) == placed


def test_legacy_broadcasting_needs_the_broadcast_attribute_for_different_shapes():
    add6 = next(v for v in versions("Add") if v.since_version == 6)
    a, b = np.zeros((2, 3, 4, 5), np.float32), np.ones((3, 4), np.float32)
    assert bc.broadcast(add6, [a, b], {}).invalid.rule == bc.NOT_BROADCASTABLE
    shaped = bc.broadcast(add6, [a, b], {"broadcast": 1, "axis": 1})
    assert shaped.invalid is None and shaped.shape == (2, 3, 4, 5) and shaped.arrays[1].shape == (2, 3, 4, 5)


def test_the_rule_of_each_version_is_read_from_its_schema():
    rules = {v.since_version: bc.rule_of(v) for v in versions("Add")}
    assert rules[1] == rules[6] == bc.LEGACY and rules[7] == rules[14] == bc.MULTIDIRECTIONAL
    assert all(bc.rule_of(v) == bc.UNIDIRECTIONAL for v in versions("PRelu") if v.since_version >= 7)
    assert all(bc.rule_of(v) == bc.NONE for v in versions("Abs"))


# -- rounding once, to nearest even -------------------------------------------------------------

def test_round_to_bfloat16_rounds_once_where_through_float32_rounds_twice():
    value = np.array([1 + 2.0**-8 + 2.0**-30])  # just above the tie between 1 and 1 + 2**-7
    assert float(round_to(value, dtype("bfloat16"))[0]) == 1 + 2.0**-7
    assert float(value.astype(np.float32).astype(ml_dtypes.bfloat16)[0]) == 1.0  # the double rounding avoided


def test_round_to_bfloat16_is_the_nearest_value_ties_to_even_by_brute_force():
    every = np.arange(2**16, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
    finite = np.unique(every[np.isfinite(every)])  # sorted; -0.0 and 0.0 are one
    rng = np.random.default_rng(0)
    values = rng.standard_normal(3000) * 2.0 ** rng.integers(-140, 120, 3000)
    ties = (finite[1000:1100] + finite[1001:1101]) / 2  # exactly halfway: the even one wins
    values = np.concatenate([values, ties])
    above = np.clip(np.searchsorted(finite, values), 1, len(finite) - 1)
    low, high = finite[above - 1], finite[above]
    even_high = (np.array(high, np.float64).astype(ml_dtypes.bfloat16).view(np.uint16) & 1) == 0
    nearest = np.where(values - low < high - values, low, np.where(values - low > high - values, high,
                                                                    np.where(even_high, high, low)))
    got = round_to(values, dtype("bfloat16")).astype(np.float64)
    assert np.array_equal(got, nearest), values[got != nearest][:5]


def test_round_to_overflows_to_infinity_from_half_an_ulp_above_max():
    top = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    ulp = 2.0 ** (127 - 7)
    got = round_to(np.array([top + ulp / 2 - ulp / 8, top + ulp / 2]), dtype("bfloat16")).astype(np.float64)
    assert got[0] == top and np.isinf(got[1])


# -- integer results beyond the output type: both readings, named -------------------------------

def _example(op, since, inputs, types, attributes=None):
    version = next(v for v in versions(op) if v.since_version == since)
    return Example(version, "t", types, inputs, attributes or {}, "test", for_op(op).dtype_param)


def test_integer_overflow_gives_the_wrapped_and_the_saturated_reading():
    example = _example("Add", 14, {"A": np.array([127, 1], np.int8), "B": np.array([1, 1], np.int8)}, {"T": "int8"})
    expected = for_op("Add").expected(example)
    by_label = {r.label: r.outputs[0].tolist() for r in expected.readings}
    assert by_label == {WRAPPED: [-128, 2], SATURATED: [127, 2]}
    assert "integer result beyond the output type" in expected.ambiguity


def test_an_integer_result_in_range_is_one_exact_reading():
    example = _example("Add", 14, {"A": np.array([2**62], np.int64), "B": np.array([2**62 - 1], np.int64)}, {"T": "int64"})
    [reading] = for_op("Add").expected(example).readings
    assert reading.outputs[0].tolist() == [2**63 - 1]


def test_shapes_that_do_not_broadcast_are_invalid_by_broadcasting_md():
    example = _example("Add", 14, {"A": np.zeros((2, 3), np.float32), "B": np.zeros((3, 2), np.float32)}, {"T": "float"})
    expected = for_op("Add").expected(example)
    assert not expected.is_valid and expected.invalid.rule == bc.NOT_BROADCASTABLE


# -- a missing kernel is no rejection ---------------------------------------------------------

def test_a_missing_kernel_on_an_invalid_input_is_unsupported_not_a_pass():
    expected = Expected(invalid=Invalid("shapes-not-broadcastable", "text"))
    verdict = judge(expected, RunOutput.not_supported("NOT_IMPLEMENTED: Could not find an implementation", no_kernel=True))
    assert verdict.outcome == UNSUPPORTED and "no kernel" in verdict.message
    from conformance.runners.base import classified
    from conformance.runners.onnxruntime import VOCABULARY

    invalid_graph = classified(RuntimeError("[ONNXRuntimeError] : 10 : INVALID_GRAPH : type error"), VOCABULARY)
    assert invalid_graph.unsupported and judge(expected, invalid_graph).outcome == "pass"
    assert judge(expected, RunOutput.not_supported("dynamic rank is not supported")).outcome == UNSUPPORTED


# -- models at every opset ---------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_models_below_ir_4_keep_initializers_as_graph_inputs_and_pass_the_checker(mode):
    example = _example("Add", 7, {"A": np.arange(6, dtype=np.int32).reshape(2, 3), "B": np.array([1, 2, 3], np.int32)},
                       {"T": "int32"})
    expected = for_op("Add").expected(example)
    built = build(example, for_op("Add").output_types(example, expected), mode)
    assert built.model.ir_version == 3
    assert checker_problem(built.data) is None
    names = {i.name for i in built.model.graph.input}
    assert {"A", "B"} <= names  # IR 3: an initializer is a graph input too; Constant-1 cannot hold int32
    assert not built.model.graph.node[:-1] or all(n.op_type == "Constant" for n in built.model.graph.node[:-1])


# -- per op, every family op -------------------------------------------------------------------

@cache
def drawn(op):
    """A few drawn cases of every version and type binding of `op`."""
    return [e for v in versions(op) for b in strategies.bindings(v) for e in strategies.draw_group(v, b, 3, 0)]


@pytest.mark.parametrize("op", family_ops())
def test_every_drawn_case_gets_an_answer_of_the_output_type(op):
    reference = for_op(op)
    problems = []
    for example in drawn(op):
        expected = reference.expected(example)
        if not expected.is_valid:
            continue
        for reading in expected.readings:
            for index, output in enumerate(reading.outputs):
                want = dtype(example.version.output_dtype(index, example.types)).np_dtype
                if output.dtype != want:
                    problems.append((example.id, reading.label, str(output.dtype), str(want)))
    assert not problems, f"{op}: outputs of the wrong dtype: {problems[:5]}"


@pytest.mark.parametrize("op", family_ops())
def test_every_type_binding_of_every_version_is_drawn(op):
    expected_groups = {(v.since_version, tuple(sorted(b.items()))) for v in versions(op) for b in strategies.bindings(v)}
    drawn_groups = {(e.version.since_version, tuple(sorted(e.types.items()))) for e in drawn(op)}
    assert drawn_groups == expected_groups, f"{op}: groups never drawn: {sorted(expected_groups - drawn_groups)[:5]}"


@pytest.mark.parametrize("op", family_ops())
def test_the_same_seed_gives_the_same_cases(op):
    version = versions(op)[-1]
    binding = strategies.bindings(version)[0]
    first = strategies.draw_group(version, binding, 5, 7)
    again = strategies.draw_group(version, binding, 5, 7)
    assert [e.id for e in first] == [e.id for e in again]
    for a, b in zip(first, again):
        assert a.attributes == b.attributes
        assert all(a.inputs[k].tobytes() == b.inputs[k].tobytes() for k in a.inputs)


@pytest.mark.parametrize("op", family_ops())
def test_drawn_valid_cases_build_models_onnx_checker_accepts(op):
    reference = for_op(op)
    rejected = []
    for example in drawn(op)[::3]:
        expected = reference.expected(example)
        if expected.is_valid:
            built = build(example, reference.output_types(example, expected), "input", reference.data_inputs)
            problem = checker_problem(built.data)
            if problem:
                rejected.append((example.id, problem))
    assert not rejected, f"{op}: {rejected[:3]}"


def test_a_variadic_input_takes_each_value_under_its_own_name():
    [formal] = versions("Sum")[-1].inputs
    assert [formal.instance(k) for k in range(3)] == ["data_0", "data_1", "data_2"]
    assert formal.instance_index("data_2") == 2 and formal.instance_index("data_02") is None
    assert versions("Sum")[-1].input("data_7") is formal


def test_ops_conform_cannot_build_are_refused_with_the_reason_not_mangled():
    schemas = [s for s in onnx.defs.get_all_schemas_with_history() if s.domain == "" and not s.deprecated]
    graph_op = next(s for s in schemas if any(a.type == onnx.AttributeProto.GRAPH for a in s.attributes.values()))
    sequence_op = next(s for s in schemas if s.type_constraints and all(
        t.startswith("seq(") for c in s.type_constraints for t in c.allowed_type_strs))
    graph_version = next(v for v in versions(graph_op.name) if v.since_version == graph_op.since_version)
    sequence_version = next(v for v in versions(sequence_op.name) if v.since_version == sequence_op.since_version)
    assert graph_version.refusal.startswith("needs a graph attribute")
    assert sequence_version.refusal.startswith("takes sequence types (") and "allows no tensor type: seq(" in sequence_version.refusal
    assert all("sor(" not in name for _, names in sequence_version.type_constraints for name in names)
