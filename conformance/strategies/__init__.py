"""Hypothesis strategies, one module per op, and the driver that draws and shrinks with them.

Drawing is seeded per group (op version x type binding) from the run's seed and the group's
names, so the same seed gives the same cases, in the same order, with the same ids, and adding a
dtype to one version does not move the cases of any other group. No example database is used: the
seed alone reproduces a run. Shrinking replays the same seeded search with a test that fails
where the runtime failed, so hypothesis reaches the same failure and then minimises it.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from ..case import Example, stable_seed, type_bindings
from ..reference import for_op
from ..registry import OpVersion
from . import clip, constant_of_shape, slice

STRATEGIES: dict[str, Callable[[OpVersion, dict[str, str]], st.SearchStrategy[Example]]] = {
    "Clip": clip.examples,
    "ConstantOfShape": constant_of_shape.examples,
    "Slice": slice.examples,
}
DEFAULT_EXAMPLES = 20
SHRINK_SECONDS = 3.0
NAME = "hypothesis-{:04d}"


class _Failed(Exception):
    """Raised inside a shrinking run where the runtime failed, so hypothesis minimises it."""


class _OutOfTime(BaseException):
    """Raised when the shrinking budget is spent; hypothesis propagates BaseExceptions at once."""


def _settings(count: int, phases: tuple) -> settings:
    return settings(
        max_examples=count,
        phases=phases,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
    )


def group_seed(seed: int, version: OpVersion, binding: dict[str, str]) -> int:
    return stable_seed(seed, version.label, *sorted(binding.items()))


def strategy_for(version: OpVersion, binding: dict[str, str]) -> st.SearchStrategy[Example]:
    return STRATEGIES[version.op](version, binding)


def draw_group(version: OpVersion, binding: dict[str, str], count: int, seed: int) -> list[Example]:
    """`count` examples (fewer if hypothesis exhausts the space) for one version and type binding."""
    drawn: list[Example] = []

    @hypothesis_seed(group_seed(seed, version, binding))
    @_settings(count, (Phase.generate,))
    @given(strategy_for(version, binding))
    def collect(example: Example) -> None:
        drawn.append(example)

    collect()
    return [_named(e, i, seed) for i, e in enumerate(drawn)]


def _named(example: Example, index: int, seed: int) -> Example:
    return dataclasses.replace(example, name=NAME.format(index), source="hypothesis", origin={"seed": seed, "index": index})


def bindings(version: OpVersion, dtypes: tuple[str, ...] = ()) -> list[dict[str, str]]:
    """Every type binding of a version, from its type constraints (restricted to `dtypes` if given)."""
    reference = for_op(version.op)
    all_bindings = type_bindings(version, reference.dtype_param, None, {})
    return [b for b in all_bindings if not dtypes or b[reference.dtype_param] in dtypes]


def generate(versions: list[OpVersion], count: int, seed: int, dtypes: tuple[str, ...] = ()) -> list[Example]:
    """Hypothesis examples for every version and type binding, in a fixed order."""
    return [e for v in versions for b in bindings(v, dtypes) for e in draw_group(v, b, count, seed)]


def shrink(
    version: OpVersion, binding: dict[str, str], count: int, seed: int, fails: Callable[[Example], bool],
    seconds: float = SHRINK_SECONDS,
) -> Example | None:
    """The smallest example hypothesis finds for which `fails` is true, replaying the seeded search.

    After `seconds` the search stops and the smallest failure seen so far is kept (hypothesis only
    tries candidates smaller than its current best).
    """
    failing: list[Example] = []
    deadline = time.monotonic() + seconds

    @hypothesis_seed(group_seed(seed, version, binding))
    @_settings(count, (Phase.generate, Phase.shrink))
    @given(strategy_for(version, binding))
    def check(example: Example) -> None:
        if failing and time.monotonic() > deadline:
            raise _OutOfTime()
        if fails(example):
            failing.append(example)
            raise _Failed()

    try:
        check()
    except (_Failed, _OutOfTime, HypothesisException):
        pass  # _Failed: hypothesis replayed its minimal example last
    if not failing:
        return None
    return dataclasses.replace(failing[-1], name="hypothesis-minimal", source="hypothesis:shrunk")
