"""Hypothesis strategies, one module per op, and the driver that draws and shrinks with them.

An op's strategy is found, not listed: a family op's comes from its declaration (elementwise.py);
any other op's from the module of this package named as the module of its reference
(strategies/slice.py beside reference/slice.py), imported when the op is first drawn: its
`STRATEGIES[op]` where it draws several ops (cast.py: Cast and CastLike), else its `example`.

Drawing is seeded per group (op version x type binding) from the run's seed and the group's
names, so the same seed gives the same cases, in the same order, with the same ids, and adding a
dtype to one version does not move the cases of any other group. No example database is used: the
seed alone reproduces a run. Shrinking replays the same seeded search with a test that fails
where the runtime failed, so hypothesis reaches the same failure and then minimises it.

Each hypothesis test call draws a batch of BATCH cases as one choice of bytes, CASE_BYTES for each
case (see `common`); the first call, hypothesis's simplest, gives one case. Hypothesis's own cost
per call is several times that of drawing one case. Shrinking a batch is slow, so `shrink` first
searches and shrinks single cases, and replays the batches only when that meets no failure.

Hypothesis is imported where cases are drawn or shrunk, not with this module: the main process
of a `--jobs` run plans the groups (`bindings`) and leaves the drawing to its workers, and its
start-up, which every run waits for, is ~0.08 s shorter without that import.
"""

from __future__ import annotations

import dataclasses
import functools
import pkgutil
import time
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Callable

from ..case import HYPOTHESIS_NAME, Example, case_id, stable_seed, type_bindings
from ..reference import declaring_module, for_op
from ..registry import OpVersion
from .common import CASE_BYTES, Choices

if TYPE_CHECKING:
    from hypothesis import settings
    from hypothesis import strategies as st

DEFAULT_EXAMPLES = 20
BATCH = 10
# A group's shrinking stops after this many tries once it has a failure: a bound that does not
# depend on the machine's speed, so the same seed gives the same minimal case (Slice-13's groups
# take 150-280 tries in all, about 1 ms each). SHRINK_SECONDS caps it for a runtime so slow
# that the tries would take longer; a 3 s cap alone cut shrinking short when a busy machine
# paused the process (a 2.5 s garbage collection was seen), and gave another minimal case.
SHRINK_TRIES = 1000
SHRINK_SECONDS = 10.0


class _Failed(Exception):
    """Raised inside a shrinking run where the runtime failed, so hypothesis minimises it."""


class _OutOfTime(BaseException):
    """Raised when the shrinking budget is spent; hypothesis propagates BaseExceptions at once."""


def _settings(count: int, phases: tuple) -> settings:
    from hypothesis import HealthCheck, Verbosity, settings

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


@cache
def strategy_of(op: str) -> Callable[..., Example]:
    """How one case of `op` is drawn (a function of `Choices`, version and type binding): its
    family's from its declaration, or the one of the strategies module beside its reference's."""
    from ..reference.elementwise import family_of  # here: a --jobs run's main process draws nothing

    reference = for_op(op)
    declared = family_of(reference)
    if declared is not None:
        from . import elementwise

        return functools.partial(elementwise.example, op=declared)
    return _own_strategy(reference.op, declaring_module(reference.op))


def _own_strategy(op: str, module: str) -> Callable[..., Example]:
    """`op`'s strategy in strategies/<module>.py: its STRATEGIES[op], else its `example`."""
    missing = (f"no strategy for {op}: add strategies/{module}.py (beside reference/{module}.py) with `example`, "
               f"or with STRATEGIES['{op}'] where it draws several ops")
    if module not in _module_names():
        raise KeyError(missing)
    found = import_module(f"{__name__}.{module}")
    several = getattr(found, "STRATEGIES", None)
    strategy = several.get(op) if several is not None else getattr(found, "example", None)
    if strategy is None:
        raise KeyError(missing)
    return strategy


@cache
def _module_names() -> frozenset[str]:
    """The modules of this package, by name."""
    return frozenset(found.name for found in pkgutil.iter_modules(__path__))


def group_seed(seed: int, version: OpVersion, binding: dict[str, str]) -> int:
    return stable_seed(seed, version.label, *sorted(binding.items()))


def strategy_for(version: OpVersion, binding: dict[str, str], size: int = 1) -> st.SearchStrategy[list[Example]]:
    """Batches of `size` cases of one version and type binding."""
    one = strategy_of(version.op)
    return _bytes(size * CASE_BYTES).map(
        lambda data: [one(Choices(data[k * CASE_BYTES:(k + 1) * CASE_BYTES]), version, binding) for k in range(size)]
    )


@cache
def _bytes(size: int) -> st.SearchStrategy[bytes]:
    from hypothesis import strategies as st

    return st.binary(min_size=size, max_size=size)


def _calls(count: int) -> tuple[int, int]:
    """(test calls, batch size) to draw `count` cases.

    Hypothesis's first call is its simplest choice sequence, so its whole batch is one case over
    and over: it gives one case, and the other calls give `size` each.
    """
    size = min(BATCH, max(count - 1, 1))
    return 1 + -(-(count - 1) // size), size


def draw_group(version: OpVersion, binding: dict[str, str], count: int, seed: int) -> list[Example]:
    """`count` examples (fewer if hypothesis exhausts the space) for one version and type binding."""
    from hypothesis import Phase, given, seed as hypothesis_seed

    drawn: list[Example] = []
    calls, size = _calls(count)

    @hypothesis_seed(group_seed(seed, version, binding))
    @_settings(calls, (Phase.generate,))
    @given(strategy_for(version, binding, size))
    def collect(batch: list[Example]) -> None:
        drawn.extend(batch if drawn else batch[:1])

    collect()
    return [_named(e, i, seed) for i, e in enumerate(drawn[:count]) if _owned(e, version, binding)]


def _owned(example: Example, version: OpVersion, binding: dict[str, str]) -> bool:
    """Whether the group of `binding` owns a drawn case: a case that leaves a type parameter out
    (Pad-18's Tind without `axes`) has the same id in every group that differs only there, so only
    the group binding it to its first allowed type keeps it; ids stay unique within a run."""
    return all(version.allowed(param)[0] == name for param, name in binding.items() if param not in example.types)


def _named(example: Example, index: int, seed: int) -> Example:
    return dataclasses.replace(example, name=HYPOTHESIS_NAME.format(index), source="hypothesis", origin={"seed": seed, "index": index})


def group_ids(version: OpVersion, binding: dict[str, str], count: int) -> list[str]:
    """The ids of the examples `draw_group` gives, known without drawing them (the first of them
    only, when hypothesis exhausts the group's space)."""
    dtype_param = for_op(version.op).dtype_param_of(version)
    return [case_id(version, HYPOTHESIS_NAME.format(index), binding, dtype_param) for index in range(count)]


def bindings(version: OpVersion, dtypes: tuple[str, ...] = ()) -> list[dict[str, str]]:
    """Every type binding of a version, from its type constraints (restricted to `dtypes` if given)."""
    reference = for_op(version.op)
    all_bindings = type_bindings(version, reference.dtype_param, None, {})
    if reference.covering_bindings:
        all_bindings = covering(all_bindings)
    return [b for b in all_bindings if not dtypes or b[reference.dtype_param_of(version)] in dtypes]


def covering(all_bindings: list[dict[str, str]]) -> list[dict[str, str]]:
    """A few of `all_bindings` (every combination, primary parameter first) in which every dtype of
    every type parameter appears: the k-th takes each parameter's (k mod its count)-th dtype, for k
    up to the longest parameter's count, so no two are the same."""
    if not all_bindings:
        return all_bindings
    params = list(all_bindings[0])
    allowed = {p: list(dict.fromkeys(b[p] for b in all_bindings)) for p in params}
    longest = max(len(values) for values in allowed.values())
    return [{p: allowed[p][k % len(allowed[p])] for p in params} for k in range(longest)]


def generate(versions: list[OpVersion], count: int, seed: int, dtypes: tuple[str, ...] = ()) -> list[Example]:
    """Hypothesis examples for every version and type binding, in a fixed order."""
    return [e for v in versions for b in bindings(v, dtypes) for e in draw_group(v, b, count, seed)]


FRESH_SEARCH = 200  # single cases tried before falling back to replaying the run's batches


def shrink(
    version: OpVersion, binding: dict[str, str], count: int, seed: int, fails: Callable[[Example], bool],
    seconds: float = SHRINK_SECONDS, tries: int = SHRINK_TRIES,
) -> Example | None:
    """A small example of the group for which `fails` is true, as hypothesis shrinks it.

    Hypothesis shrinks a single case far faster than a batch, so a fresh seeded search of single
    cases comes first; if it meets no failure, the run's own batched search is replayed, which is
    sure to reach the failure the run saw. After `tries` tries from the first failure on, or after
    `seconds`, the search stops and the smallest failure seen so far is kept (hypothesis only
    tries candidates smaller than its current best).
    """
    deadline = time.monotonic() + seconds
    found = _search_and_shrink(version, binding, stable_seed("shrink", group_seed(seed, version, binding)),
                               FRESH_SEARCH, 1, fails, deadline, tries)
    if found is None:
        calls, size = _calls(count)
        found = _search_and_shrink(version, binding, group_seed(seed, version, binding), calls, size, fails, deadline, tries)
    return dataclasses.replace(found, name="hypothesis-minimal", source="hypothesis:shrunk") if found else None


def _search_and_shrink(version: OpVersion, binding: dict[str, str], search_seed: int, calls: int, size: int,
                       fails: Callable[[Example], bool], deadline: float, tries: int) -> Example | None:
    from hypothesis import Phase, given, seed as hypothesis_seed
    from hypothesis.errors import HypothesisException

    failing: list[Example] = []
    position: list[int] = []  # where in its batch the first failure was
    shrinking_tries = [0]

    @hypothesis_seed(search_seed)
    @_settings(calls, (Phase.generate, Phase.shrink))
    @given(strategy_for(version, binding, size))
    def check(batch: list[Example]) -> None:
        if failing:
            shrinking_tries[0] += 1
            if shrinking_tries[0] > tries or time.monotonic() > deadline:
                raise _OutOfTime()
        # Until the first failure every case is tried; from then on only the failing position,
        # so the other cases of the batch are shrunk away without being run.
        candidates = [batch[position[0]]] if position else batch
        for index, example in enumerate(candidates):
            if fails(example):
                position[:] = position or [index]
                failing.append(example)
                raise _Failed()

    try:
        check()
    except (_Failed, _OutOfTime, HypothesisException):
        pass  # _Failed: hypothesis replayed its minimal example last
    return failing[-1] if failing else None
