"""Hypothesis strategies: deterministic, covering every dtype, weighted to boundaries, shrinking."""

import math
from collections import Counter

import numpy as np
import pytest

from conformance import strategies
from conformance.strategies.common import CASE_BYTES, Choices
from conformance.reference import covered_ops, for_op
from conformance.registry import version_in_force, versions


def ids_and_bytes(examples):
    return [(e.id, {k: (None if v is None else (v.dtype.str, v.shape, v.tolist() if v.dtype.kind == "O" else v.tobytes()))
                    for k, v in e.inputs.items()}, repr(e.attributes)) for e in examples]


@pytest.mark.parametrize("op", ["Clip", "ConstantOfShape", "Slice"])
def test_same_seed_same_cases_same_ids(op):
    chosen = list(versions(op))
    first = strategies.generate(chosen, 5, seed=42)
    second = strategies.generate(chosen, 5, seed=42)
    assert ids_and_bytes(first) == ids_and_bytes(second)
    other = strategies.generate(chosen, 5, seed=43)
    assert ids_and_bytes(first) != ids_and_bytes(other)


@pytest.mark.parametrize("op", ["Clip", "ConstantOfShape", "Slice"])
def test_every_dtype_of_every_version_is_drawn(op):
    drawn = {(e.version.since_version, e.dtype) for e in strategies.generate(list(versions(op)), 2, seed=1)}
    param = for_op(op).dtype_param
    wanted = {(v.since_version, d) for v in versions(op) for d in v.allowed(param)}
    assert drawn == wanted


def flat_values(examples, name):
    for example in examples:
        array = example.inputs.get(name)
        if array is not None:
            yield from array.reshape(-1).tolist()


def test_integer_boundaries_appear_in_a_modest_number_of_draws():
    int64 = [e for e in strategies.draw_group(version_in_force("Clip", 13), {"T": "int64"}, 100, seed=0)]
    seen = set(flat_values(int64, "input"))
    for value in (2**63 - 1, -(2**63), 2**53 + 1, 2**53 - 1, 2**24 + 1, 0):
        assert value in seen, value
    uint64 = strategies.draw_group(version_in_force("Clip", 13), {"T": "uint64"}, 100, seed=0)
    assert {2**63, 2**64 - 1} <= set(flat_values(uint64, "input"))


def test_float_specials_appear():
    drawn = strategies.draw_group(version_in_force("Clip", 13), {"T": "float"}, 100, seed=0)
    values = list(flat_values(drawn, "input"))
    assert any(math.isnan(v) for v in values)
    assert math.inf in values and -math.inf in values
    assert any(v == 0 and math.copysign(1, v) < 0 for v in values)
    tiny = float(np.finfo(np.float32).smallest_subnormal)
    assert tiny in values or -tiny in values


def test_clip_bounds_are_present_absent_and_empty_names():
    drawn = strategies.draw_group(version_in_force("Clip", 13), {"T": "float"}, 100, seed=0)
    modes = Counter(("absent" if "min" not in e.inputs else "empty" if e.inputs["min"] is None else "present") for e in drawn)
    assert modes["absent"] and modes["empty"] and modes["present"]
    beside = 0
    for e in drawn:
        x, low = e.inputs["input"], e.inputs.get("min")
        if low is not None and x.size and low.ndim == 0 and np.isfinite(float(low)):
            beside += any(float(low) == float(v) or abs(float(low) - float(v)) <= abs(float(v)) * 1e-6 for v in x.reshape(-1) if np.isfinite(float(v)))
    assert beside > 0  # bounds equal to or next to input values


def test_slice_draws_sentinels_steps_and_axes_forms():
    drawn = strategies.draw_group(version_in_force("Slice", 13), {"T": "float", "Tind": "int32"}, 150, seed=0)
    starts_ends = set(flat_values(drawn, "starts")) | set(flat_values(drawn, "ends"))
    assert {2**31 - 1, -(2**31)} <= starts_ends
    steps = set(flat_values(drawn, "steps"))
    assert any(s < 0 for s in steps) and any(s > 1 for s in steps) and {2**31 - 1, -(2**31)} & steps
    assert any("steps" not in e.inputs for e in drawn) and any("axes" not in e.inputs for e in drawn)
    assert any(a < 0 for a in flat_values(drawn, "axes"))
    assert any(0 in e.inputs["data"].shape for e in drawn)
    ranks = {e.inputs["data"].ndim for e in drawn}
    assert ranks == {1, 2, 3, 4, 5, 6}


def test_slice_before_11_never_draws_negative_axes_as_valid():
    reference = for_op("Slice")
    for version in (1, 10):
        for example in strategies.draw_group(version_in_force("Slice", version), {"T": "float", "Tind": "int64"} if version == 10 else {"T": "float"}, 60, seed=0):
            axes = example.inputs.get("axes") if version == 10 else example.attributes.get("axes")
            if axes is not None and any(int(a) < 0 for a in np.asarray(axes).reshape(-1)):
                assert not reference.expected(example).is_valid


def test_a_small_share_is_invalid():
    reference = for_op("Slice")
    drawn = strategies.draw_group(version_in_force("Slice", 13), {"T": "int8", "Tind": "int64"}, 200, seed=0)
    invalid = sum(not reference.expected(e).is_valid for e in drawn)
    assert 0 < invalid < len(drawn) // 4


def test_constant_of_shape_draws_empty_shapes_zero_dims_and_extremes():
    drawn = strategies.draw_group(version_in_force("ConstantOfShape", 25), {"T1": "int64", "T2": "int8"}, 100, seed=0)
    shapes = [e.inputs["input"].tolist() for e in drawn]
    assert [] in shapes and any(0 in s for s in shapes)
    values = {int(e.attributes["value"][0]) for e in drawn}
    assert {-128, 127} <= values


@pytest.mark.parametrize("op", covered_ops())
def test_every_covered_op_has_a_strategy(op):
    assert callable(strategies.strategy_of(op))


def test_shrinking_a_planted_predicate_ends_at_a_small_case():
    # "Fails" whenever a negative step meets an axis longer than 1: the smallest such case has 2
    # elements and one negative step, whatever the search met first.
    def fails(example):
        steps = example.inputs.get("steps")
        axes = example.inputs.get("axes")
        if steps is None:
            return False
        shape = example.inputs["data"].shape
        named = range(len(steps)) if axes is None else [int(a) % len(shape) for a in axes]
        return any(int(s) < 0 and shape[a] > 1 for s, a in zip(steps, named))

    minimal = strategies.shrink(version_in_force("Slice", 13), {"T": "float", "Tind": "int64"}, 20, 0, fails, seconds=20)
    assert minimal is not None and fails(minimal)
    assert minimal.inputs["data"].size == 2 and sum(int(s) < 0 for s in minimal.inputs["steps"]) == 1


def test_shrinking_is_bounded_by_its_tries_not_by_the_clock():
    # The same seed must give the same minimal case on a fast or a slow (busy) machine: the
    # shrinking budget counts tries, and a runtime ten times slower stops at the same case.
    import time

    group = (version_in_force("Slice", 13), {"T": "float", "Tind": "int64"})

    def negative_step(example, pause=0.0):
        time.sleep(pause)
        steps = example.inputs.get("steps")
        return steps is not None and bool((steps < 0).any())

    fast = strategies.shrink(*group, 20, 0, negative_step, seconds=60, tries=15)
    slow = strategies.shrink(*group, 20, 0, lambda e: negative_step(e, 0.01), seconds=60, tries=15)
    unbounded = strategies.shrink(*group, 20, 0, negative_step, seconds=60)
    assert ids_and_bytes([fast]) == ids_and_bytes([slow])
    assert ids_and_bytes([fast]) != ids_and_bytes([unbounded])  # 15 tries are too few to finish
    assert negative_step(fast) and negative_step(unbounded)


def test_a_failure_only_the_run_met_is_still_reached_and_kept():
    # A predicate true for one drawn case only: a fresh search cannot meet it, so shrinking falls
    # back to replaying the run's own search, which reaches that very case.
    group = (version_in_force("Slice", 13), {"T": "float", "Tind": "int64"})
    drawn = strategies.draw_group(*group, 20, seed=5)
    target = ids_and_bytes([drawn[13]])[0][1:]

    minimal = strategies.shrink(*group, 20, 5, lambda e: ids_and_bytes([e])[0][1:] == target, seconds=2)
    assert minimal is not None and ids_and_bytes([minimal])[0][1:] == target


@pytest.mark.parametrize("group", [(version_in_force("Clip", 13), {"T": "float"}),
                                   (version_in_force("Slice", 13), {"T": "int32", "Tind": "int64"})])
def test_a_large_group_is_made_of_distinct_cases(group):
    # Hypothesis mutates a test call by copying spans onto spans of the same kind; with many small
    # draws per batch that made most of a large group repeat earlier cases (158 distinct of 400).
    drawn = strategies.draw_group(*group, 400, seed=0)
    distinct = {repr(found[1:]) for found in ids_and_bytes(drawn)}
    assert len(drawn) == 400 and len(distinct) >= 396


def test_choices_read_the_fewest_bytes_and_sections_keep_later_choices_in_place():
    data = bytes([3, 0, 1, 200, 7, 9, 250, 251, 252, 253, 254, 255])
    choices = Choices(data)
    assert choices.integer(0, 255) == 3 and choices.used == 1
    assert choices.integer(10, 10) == 10 and choices.used == 1  # no choice, no byte
    assert choices.integer(0, 2**16 - 1) == 1 and choices.used == 3
    part = choices.section(3)
    part.integer(0, 2**64 - 1)  # reads far past its three bytes...
    assert choices.used == 6 and choices.integer(0, 255) == 250  # ...and the next choice is unmoved
    assert Choices(bytes(8)).integer(-5, 99) == -5  # all-zero bytes: every choice at its simplest


@pytest.mark.parametrize("op", ["Clip", "ConstantOfShape", "Slice"])
def test_no_case_reads_past_the_bytes_hypothesis_draws_for_it(op):
    # Past CASE_BYTES a case reads a hashed stream that hypothesis cannot shrink byte by byte.
    rng = np.random.default_rng(0)
    for version in versions(op):
        for binding in strategies.bindings(version):
            extremes = [bytes(CASE_BYTES), bytes([255]) * CASE_BYTES]
            for data in extremes + [rng.integers(0, 256, CASE_BYTES, dtype=np.uint8).tobytes() for _ in range(40)]:
                choices = Choices(data)
                strategies.strategy_of(op)(choices, version, binding)
                assert choices.used <= CASE_BYTES, (version.label, binding)


def test_a_covering_set_of_bindings_names_every_dtype_of_every_parameter_once_at_least():
    from conformance.strategies import covering

    every = [{"T1": a, "T2": b, "T3": c} for a in ("int32", "int64") for b in ("float", "double", "int8")
             for c in ("bool", "string", "float16", "uint8")]
    chosen = covering(every)
    assert len(chosen) == 4, "as many as the longest parameter's dtypes"
    assert len({tuple(b.values()) for b in chosen}) == 4, "no binding twice"
    for param in ("T1", "T2", "T3"):
        assert {b[param] for b in chosen} == {b[param] for b in every}, f"every dtype of {param} appears"
    assert all(b in every for b in chosen)
