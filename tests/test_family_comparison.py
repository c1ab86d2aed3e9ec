"""The comparison declarations' own logic: the trait naming version 1's `axis` placement, and
IsInf's two switches (values worked out from the texts)."""

from __future__ import annotations

import numpy as np

from conformance.case import Example
from conformance.reference import comparison as cmp
from conformance.reference.elementwise import answer
from conformance.registry import versions


def example(op: str, since: int, dtype: str, attributes: dict | None = None, **inputs) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    param = version.inputs[0].type_param
    types = {param: dtype, version.outputs[0].type_param: "bool"}  # every comparison's output is bool
    return Example(version, "unit", types, dict(inputs), dict(attributes or {}), "unit", param)


def legacy(a_shape, b_shape, attributes, since=1):
    return example("Greater", since, "float", attributes, A=np.zeros(a_shape, np.float32), B=np.zeros(b_shape, np.float32))


def test_axis_that_moves_b_off_the_trailing_dims_is_the_trait():
    assert cmp.legacy_axis_moves_b(legacy((2, 3, 4, 5), (3, 4), {"broadcast": 1, "axis": 1}))
    assert cmp.legacy_axis_moves_b(legacy((4, 2, 4), (4,), {"broadcast": 1, "axis": 0}))


def test_axis_at_the_trailing_dims_or_no_axis_is_not():
    assert not cmp.legacy_axis_moves_b(legacy((2, 3, 4, 5), (4, 5), {"broadcast": 1, "axis": 2}))
    assert not cmp.legacy_axis_moves_b(legacy((2, 3, 4, 5), (4, 5), {"broadcast": 1}))
    assert not cmp.legacy_axis_moves_b(legacy((2, 3), (1,), {"broadcast": 1, "axis": 0}))
    assert not cmp.legacy_axis_moves_b(legacy((2, 3), (2, 3), {"axis": 0}))
    assert not cmp.legacy_axis_moves_b(legacy((2, 3), (3,), {}, since=7))


def test_axis_placement_is_what_the_reference_computes():
    a = np.arange(8, dtype=np.float32).reshape(4, 2)
    found = answer(cmp.GREATER, example("Greater", 1, "float", {"broadcast": 1, "axis": 0}, A=a, B=np.array([0, 2, 4, 6], np.float32)))
    assert found.readings[0].outputs[0].tolist() == [[False, True]] * 4


def test_is_inf_switches():
    x = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)
    def detect(**attributes):
        return answer(cmp.IS_INF, example("IsInf", 10, "float", attributes, X=x)).readings[0].outputs[0].tolist()
    assert detect() == [True, True, False, False]
    assert detect(detect_negative=0) == [True, False, False, False]
    assert detect(detect_positive=0) == [False, True, False, False]


def test_equal_on_strings_and_signed_zeros():
    found = answer(cmp.EQUAL, example("Equal", 19, "string", A=np.array(["a", "b"], object), B=np.array(["a", "c"], object)))
    assert found.readings[0].outputs[0].tolist() == [True, False]
    zeros = answer(cmp.EQUAL, example("Equal", 13, "bfloat16", A=np.array([-0.0, np.nan], np.float32).astype("bfloat16"),
                                      B=np.array([0.0, np.nan], np.float32).astype("bfloat16")))
    assert zeros.readings[0].outputs[0].tolist() == [True, False]
