"""The straight line of a run: Example -> expected (reference) -> model -> runner -> verdict -> Result.

`select_examples` picks what to run from the options; `run_examples` runs them one by one, calling
`on_result` after each so the CLI can draw progress. Nothing here prints.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import re
import shlex
import time
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from . import casefile, compare, strategies
from .case import Example, stable_seed
from .compare import Verdict
from .errors import UsageError
from .model import DEFAULT_SHAPES, SHAPES, BuiltModel, build, checker_problem, example_key
from .reference import for_op
from .reference.base import Expected, Reading
from .registry import OpVersion, version_in_force, versions
from .runners import DEFAULT_TIMEOUT
from .runners.base import Runner, RunOutput
from .values import describe


DEFAULT_MAX_ELEMENTS = 10**8
BUILTIN_ONLY = (casefile.BUILTIN_CASES,)  # the case files a run reads unless told of others


@dataclass(frozen=True)
class RunOptions:
    """Everything that decides which examples run and how they are judged.

    `ops` are the run's ops, in the order their cases run; `op` names them: the one op's name (the
    keyword most callers give, `RunOptions(op="Slice")`), or their names joined by '+'. Give one or
    the other: `ops` wins where both are given. Both are empty only in a golden run (`run --from`)
    over every op it finds.
    """

    op: str = ""
    opset: int | None = None
    dtypes: tuple[str, ...] = ()
    case_ids: tuple[str, ...] = ()
    strict_zero: bool = False
    case_roots: tuple[Path, ...] = BUILTIN_ONLY
    use_yaml: bool = True
    use_hypothesis: bool = True
    examples: int = strategies.DEFAULT_EXAMPLES
    seed: int = 0
    shrink: int = 4
    modes: tuple[str, ...] = ("input",)
    shapes: str = DEFAULT_SHAPES  # graph inputs' dims: symbolic, or each case's own (see model.SHAPES)
    # Replay commands state --mode and --shapes even at conform's defaults: the runner declares
    # defaults of its own (runners.base.ModelNeeds), which a replay without them would get instead.
    states_model_options: bool = False
    max_elements: int = DEFAULT_MAX_ELEMENTS
    shard: tuple[int, int] = (1, 1)  # K of N: a deterministic 1/N of the cases
    timeout: float = DEFAULT_TIMEOUT  # seconds a case may take in a runtime in a worker process
    # Whether a lenient or an unsupported case fails the run: its outcome is the same either way, and
    # a replay repeats them so that it ends with the run's exit code.
    strict_validation: bool = False
    fail_on_unsupported: bool = False
    # Whether an imprecise case (beyond its precision budget, within its wrong-answer line) fails the run.
    strict_precision: bool = False
    # (case id, mode, seconds, what the runtime wrote to stderr meanwhile) of the case a worker was
    # stopped in for overrunning the case timeout: a timeout without being run again (see `with_known_hang`).
    known_timeout: tuple[str, str, float, str] | None = None
    ops: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.ops:
            object.__setattr__(self, "op", "+".join(self.ops))
        elif self.op:
            object.__setattr__(self, "ops", (self.op,))


@dataclass(frozen=True, eq=False)
class Result:
    """The record of one example: what was asked, what was expected, what came back, the verdict."""

    example: Example
    expected: Expected
    verdict: Verdict
    actual: tuple[np.ndarray, ...] = ()
    seconds: float = 0.0
    replay: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def outcome(self) -> str:
        return self.verdict.outcome


def at_level(result: Result, level: str, levels: int) -> Result:
    """The result tagged with the optimization level it ran at, where the run had `levels` > 1
    (its report then names the level beside the case id; with one, the runner's own says it)."""
    return result if levels == 1 else dataclasses.replace(result, extra={**result.extra, "optimizations": level})


def selected_versions(options: RunOptions) -> list[OpVersion]:
    """The versions the run covers, op after op (see `versions_by_op`)."""
    return [version for _, chosen in versions_by_op(options) for version in chosen]


def versions_by_op(options: RunOptions) -> tuple[tuple[str, tuple[OpVersion, ...]], ...]:
    """Each op the run covers, in the run's order, with its versions: every one, or the one in
    force at `--opset`; of those, the ones that allow a `--dtype`. Of several ops, one left with no
    version is left out (`left_out_ops` says why); a UsageError when every op is, or when no op
    allows a `--dtype`. A run of one op has its errors as before: that op not at the opset, a
    dtype it does not allow."""
    return _op_choice(options)[0]


def left_out_ops(options: RunOptions) -> tuple[tuple[str, str], ...]:
    """The ops named that the run leaves out (see `versions_by_op`), each with why, in the run's order."""
    return _op_choice(options)[1]


@lru_cache(maxsize=16)  # asked for by every unit a worker runs, and by each golden test's chooser
def _op_choice(options: RunOptions) -> tuple[tuple[tuple[str, tuple[OpVersion, ...]], ...], tuple[tuple[str, str], ...]]:
    ops = [for_op(op).op for op in options.ops]  # as the registry and every case spell them
    several = len(ops) > 1
    in_force, why_not = [], {}
    for op in ops:
        found = _in_force(op, options.opset)
        if isinstance(found, str) and not several:
            raise UsageError(found)
        if isinstance(found, str):
            why_not[op] = found
        else:
            in_force.append((op, found))
    if why_not and not in_force:
        raise UsageError(f"no op of the run exists at opset {options.opset}: {'; '.join(why_not.values())}")
    chosen = []
    for op, candidates in in_force:
        reference = for_op(op)
        kept = tuple(v for v in candidates
                     if not options.dtypes or any(d in v.allowed(reference.dtype_param_of(v)) for d in options.dtypes))
        if kept:
            chosen.append((op, kept))
        else:
            allowed = sorted({d for v in candidates for d in v.allowed(reference.dtype_param_of(v))})
            who = candidates[0].label if len(candidates) == 1 else f"no version of {op}"
            what = f"{'allows none of' if len(candidates) == 1 else 'allows'} --dtype {' or '.join(options.dtypes)}"
            why_not[op] = f"{who} {what} (allowed: {', '.join(allowed)})"
    for name in options.dtypes:
        _check_dtype_allowed(name, in_force)
    return tuple(chosen), tuple((op, why_not[op]) for op in ops if op in why_not)


def _in_force(op: str, opset: int | None) -> tuple[OpVersion, ...] | str:
    """The op's versions a run at `opset` covers (every one without it), or why it has none there:
    its first version is above the opset. An opset above the newest onnx knows is an error for any op."""
    every = versions(op)
    if opset is None:
        return every
    try:
        return (version_in_force(op, opset),)
    except UsageError as error:
        if opset >= every[0].since_version:
            raise
        return error.message


def _check_dtype_allowed(name: str, in_force: list[tuple[str, tuple[OpVersion, ...]]]) -> None:
    """A `--dtype` some version of some op of the run allows; else a UsageError naming those they allow."""
    allows = lambda op, version: name in version.allowed(for_op(op).dtype_param_of(version))
    if any(allows(op, v) for op, candidates in in_force for v in candidates):
        return
    allowed = sorted({d for op, candidates in in_force for v in candidates for d in v.allowed(for_op(op).dtype_param_of(v))})
    if len(in_force) == 1:  # as a run of one op has always said it
        op, candidates = in_force[0]
        where = candidates[0].label if len(candidates) == 1 else f"any version of {op}"
    else:
        where = f"any version of {', '.join(op for op, _ in in_force)}"
    raise UsageError(f"dtype '{name}' is not allowed by {where} (allowed: {', '.join(allowed)})")


@dataclass(frozen=True)
class WorkUnit:
    """A piece of a run that can be drawn and run on its own: YAML cases, or one hypothesis group;
    or part K of N of one, every Nth of its cases from the Kth (see `parts`).

    YAML cases are held pickled (`of_cases`): a run plans every op's cases before the first runs,
    and as objects they would be most of what the main process holds."""

    packed_cases: bytes = b""
    case_count: int = 0
    version: OpVersion | None = None
    binding: tuple[tuple[str, str], ...] = ()
    part: tuple[int, int] = (0, 1)  # K (from 0) of N
    # (N, seconds, last words): a worker was stopped `seconds` into the unit's Nth runtime call
    # (counted from 1 over the whole unit, every mode of each case in turn), having written `last
    # words` to stderr during it (see runtime_log.written_since), so that call's case is a timeout.
    hang: tuple[int, float, str] | None = None

    @classmethod
    def of_cases(cls, examples: Iterable[Example]) -> "WorkUnit":
        cases = tuple(examples)
        return cls(pickle.dumps(cases, protocol=pickle.HIGHEST_PROTOCOL), len(cases))

    @property
    def yaml_examples(self) -> tuple[Example, ...]:
        return pickle.loads(self.packed_cases) if self.packed_cases else ()

    def describe(self) -> str:
        index, count = self.part
        of = f"part {index + 1} of {count} of the " if count > 1 else ""
        if self.version is not None:
            return f"{of}hypothesis group {self.version.label} {dict(self.binding)}"
        return f"{of}{self.case_count} YAML cases from {self.yaml_examples[0].id}" if self.case_count else "empty unit"

    def parts(self, count: int) -> list["WorkUnit"]:
        """YAML cases as `count` units, for workers to share: cases next to each other often hang
        or crash alike (one case in each dtype), and so go to different parts. `merge_parts` puts
        their results back in the unit's order. A hypothesis group stays whole: each part would
        draw the whole group again."""
        if self.version is not None:
            return [self]
        return [dataclasses.replace(self, part=(index, count)) for index in range(count)]


YAML_CHUNK = 64


def plan(options: RunOptions) -> list[WorkUnit]:
    """The run as independent units, in the order their results are reported: op after op, each
    op's YAML cases, then its hypothesis groups. Every case file is read and checked before this
    returns; one op's cases are objects at a time (see `WorkUnit.of_cases`)."""
    chosen = versions_by_op(options)
    yaml_examples = _yaml_examples(options, chosen) if options.use_yaml else iter(())
    units = []
    for op, chosen_versions in chosen:
        # Chosen here, not only in the worker: a unit of cases that are not run costs pickling both ways.
        examples = selected(next(yaml_examples, (op, []))[1], options)
        units += [WorkUnit.of_cases(examples[i:i + YAML_CHUNK]) for i in range(0, len(examples), YAML_CHUNK)]
        if options.use_hypothesis and options.examples > 0:
            units += [WorkUnit(version=v, binding=tuple(b.items()))
                      for v in chosen_versions for b in strategies.bindings(v, options.dtypes)]
    for _ in yaml_examples:  # the last op's problems, and every file's, are raised once all are loaded
        pass
    return units


def _yaml_examples(options: RunOptions, chosen: tuple[tuple[str, tuple[OpVersion, ...]], ...]) -> Iterator[tuple[str, list[Example]]]:
    """Every case-file Example of the chosen op versions, op by op in the run's order, each op's
    in file order (see casefile.load_by_op)."""
    wanted = {(v.op, v.since_version) for _, chosen_versions in chosen for v in chosen_versions}
    return casefile.load_by_op(casefile.case_files(options.case_roots), lambda v: (v.op, v.since_version) in wanted,
                               [op for op, _ in chosen])


def examples_of(unit: WorkUnit, options: RunOptions) -> list[Example]:
    """The unit's examples (drawing hypothesis groups here), filtered by version, dtype, shard and id."""
    examples = list(unit.yaml_examples)
    if unit.version is not None:
        examples = strategies.draw_group(unit.version, dict(unit.binding), options.examples, options.seed)
    index, count = unit.part
    return selected(examples, options)[index::count]


def planned_ids(unit: WorkUnit, options: RunOptions) -> list[str]:
    """The ids of the cases a unit may give, known before a hypothesis group is drawn: its YAML
    cases', or every id its group could draw (it gives fewer when it exhausts hypothesis' space)."""
    if unit.version is None:
        return [e.id for e in unit.yaml_examples]
    return strategies.group_ids(unit.version, dict(unit.binding), options.examples)


def planned_count(units: list[WorkUnit], options: RunOptions) -> int | None:
    """How many results the units give (each case in each mode), known before the workers draw
    the hypothesis groups unless a shard or `--case` filters them (None then). A group that
    exhausts hypothesis' space gives fewer cases than asked, so this is at most."""
    drawn = [u for u in units if u.version is not None]
    if drawn and (options.shard[1] > 1 or options.case_ids):
        return None
    return len(options.modes) * (sum(u.case_count for u in units) + options.examples * len(drawn))


def merge_parts(answers: list[list[Result]], options: RunOptions) -> list[Result]:
    """A unit's results from those of its parts (`WorkUnit.parts`, in order), in the unit's order:
    case I is case I // N of part I % N, and each case has a result in each mode."""
    modes = len(options.modes)
    by_case = [[answer[i:i + modes] for i in range(0, len(answer), modes)] for answer in answers]
    return [result for i in range(sum(map(len, by_case))) for result in by_case[i % len(by_case)][i // len(by_case)]]


def selected(examples: list[Example], options: RunOptions) -> list[Example]:
    """The examples the options choose: op (when named) and version, dtype, shard and id."""
    return list(filter(chooser(options), examples))


def chooser(options: RunOptions) -> Callable[[Any], bool]:
    """Whether the options choose a case, given anything with an Example's `version`, `dtype` and
    `id` (a stored test can tell them from its model before its data is read)."""
    versions_wanted = {(v.op, v.since_version) for v in selected_versions(options)} if options.ops else None
    index, count = options.shard

    def chooses(case) -> bool:
        return ((versions_wanted is None or (case.version.op, case.version.since_version) in versions_wanted)
                and (not options.dtypes or case.dtype in options.dtypes)
                and (count == 1 or in_shard(case.id, index, count))
                and (not options.case_ids or case.id in options.case_ids))

    return chooses


def check_case_ids_found(examples, options: RunOptions) -> None:
    """Every `--case` id is among the examples; with `--shard`, every id this shard would hold
    (the shard that owns a misspelt id reports it)."""
    check_ids_found({e.id for e in examples}, options)


def check_ids_found(ids: set[str], options: RunOptions) -> None:
    """As `check_case_ids_found`, of the ids of the examples."""
    missing = {i for i in set(options.case_ids) - ids if in_shard(i, *options.shard)}
    if missing:
        raise UsageError(f"no case with id {', '.join(sorted(missing))} (see the 'id' field of a report)")


def check_selection(examples, options: RunOptions) -> None:
    """The cases a generated run chose: every `--case` id found, and at least one case."""
    check_chosen({e.id for e in examples}, bool(examples), options)


def check_chosen(ids: set[str], chosen: bool, options: RunOptions) -> None:
    """As `check_selection`, of the chosen examples' ids (those `--case` names suffice) and whether there was one."""
    check_ids_found(ids, options)
    if chose_nothing(chosen, options, lambda: bool(plan(whole_run(options)))):
        raise UsageError(f"nothing to run{shard_scope(options)}: {_why_nothing(options)}")


def chose_nothing(chosen: bool, options: RunOptions, a_shard_holds_one: Callable[[], bool]) -> bool:
    """Whether a run ran nothing, and so must not exit 0 (it would read as a pass in CI): it chose
    no case (`chosen` false), and it is not sharded or no shard holds a case (`a_shard_holds_one`,
    asked only then). With `--case`, an empty shard is no error: the shard that owns an id missing
    from every shard reports it (`check_case_ids_found`)."""
    if chosen:
        return False
    return options.shard[1] == 1 or not (options.case_ids or a_shard_holds_one())


def whole_run(options: RunOptions) -> RunOptions:
    """The options with every shard of the run chosen."""
    return dataclasses.replace(options, shard=(1, 1))


def shard_scope(options: RunOptions) -> str:
    """' in any of the N shards' for a sharded run's message that nothing was chosen; else ''."""
    return f" in any of the {options.shard[1]} shards" if options.shard[1] > 1 else ""


def _why_nothing(options: RunOptions) -> str:
    if not (options.use_yaml or options.use_hypothesis):
        return "--no-yaml and --no-hypothesis together leave no source of cases"
    return f"no case of {_scope(options)} from {_sources(options)}"


def _sources(options: RunOptions) -> str:
    drawn = "hypothesis" if options.examples > 0 else "hypothesis with --examples 0"
    if options.use_yaml and options.use_hypothesis:
        return f"the case files and {drawn}"
    return "the case files (hypothesis is off)" if options.use_yaml else f"{drawn} (the case files are off)"


def _scope(options: RunOptions) -> str:
    ops = [op for op, _ in versions_by_op(options)]
    scope = ", ".join(ops if options.opset is None else (version_in_force(op, options.opset).label for op in ops))
    return scope + (f" in dtype {', '.join(options.dtypes)}" if options.dtypes else "")


def select_examples(options: RunOptions, units: list[WorkUnit] | None = None) -> list[Example]:
    """The examples a run covers: case files' then hypothesis', filtered by version, dtype and id.

    `units` is the run's plan when the caller has it already.
    """
    chosen = [e for unit in (plan(options) if units is None else units) for e in examples_of(unit, options)]
    check_selection(chosen, options)
    return chosen


def streamed_examples(options: RunOptions, units: list[WorkUnit]) -> Iterator[Example]:
    """The examples `select_examples` gives, drawn unit by unit as they are asked for, so that a
    serial run holds one unit's at a time; its checks (every `--case` found, a case chosen) are
    made once the last is given, as a pool's are once its last unit is done."""
    chosen = ChosenCases(options)
    for unit in units:
        for example in examples_of(unit, options):
            chosen.heard(example.id)
            yield example
    chosen.check()


class ChosenCases:
    """What a run that draws its cases as it goes checks once they are all drawn (`check_chosen`):
    every `--case` id among them, and at least one case."""

    def __init__(self, options: RunOptions) -> None:
        self._options = options
        self._named = set(options.case_ids)
        self._seen: set[str] = set()
        self._any = False

    def heard(self, case_id: str) -> None:
        self._any = True
        if case_id in self._named:
            self._seen.add(case_id)

    def check(self) -> None:
        check_chosen(self._seen, self._any, self._options)


def in_shard(case_id: str, index: int, count: int) -> bool:
    """Shard membership from the case id alone: the same split on every machine, for the same seed."""
    return stable_seed("shard", case_id) % count == index - 1


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` with 1 <= K <= N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard takes K/N, like 2/4, not '{text}'") from None
    if not 1 <= index <= count:
        raise UsageError(f"--shard {text}: K must be between 1 and N")
    return index, count


def parse_choice(value: str, allowed: tuple[str, ...], option: str) -> tuple[str, ...]:
    """The values `option` chose: `all`/`both` means every allowed value; anything else must be one of them."""
    if value in ("all", "both"):
        return allowed
    if value not in allowed:
        raise UsageError(f"{option} takes one of {', '.join(allowed)} or {'all' if len(allowed) > 2 else 'both'}, not '{value}'")
    return (value,)


def parse_shapes(value: str) -> str:
    """The `--shapes` value: one of model.SHAPES. A run builds its models one way (its JSON, its
    replay commands and expectations know one), so there is no `both`: run it twice."""
    if value not in SHAPES:
        raise UsageError(f"--shapes takes {' or '.join(SHAPES)}, not '{value}' (one a run; for both, run it twice)")
    return value


def model_of(example: Example, expected: Expected, mode: str, shapes: str) -> BuiltModel:
    """The model `example` runs as, its non-data inputs reaching the node as `mode` says and its
    inputs' dims declared as `shapes` says (as numbers where its reference needs them so)."""
    reference = for_op(example.op)
    return build(example, reference.output_types(example, expected), mode, reference.data_inputs,
                 reference.shapes_for(example, shapes))


def expected_for(example: Example) -> Expected:
    """The reference's answer, overridden by what the case file (or golden test) states when it
    states something, and then saying what the reference would have answered, when that differs."""
    reference = for_op(example.op)
    computed = reference.expected(example)
    if example.expect_error is not None:
        from .reference.base import Invalid

        return computed if not computed.is_valid else Expected(invalid=Invalid(
            example.expect_error, f"{_stated_by(example)}; conform's reference finds the input valid, giving {_first_reading(computed)}"))
    if example.expect_outputs is not None:
        agrees = stated_agrees(computed, example.expect_outputs)
        if agrees and _leaves_freedom(computed):
            return computed
        label = _stated_by(example) + ("" if agrees else f"; {_reference_said(computed)}")
        stated = Reading(example.expect_outputs, label, _stated_precise(computed, example.expect_outputs))
        return Expected(readings=(stated,), may_reject=computed.may_reject if computed.is_valid else None,
                        budgets=computed.budgets if computed.is_valid else (), body=computed.body)
    return computed


def _leaves_freedom(computed: Expected) -> bool:
    """Whether the reference allows more than one answer (several readings, elements open to a few
    values, an order left free): stated outputs it agrees with are then one answer among several,
    and a runtime is judged by them all."""
    return (len(computed.readings) > 1 or computed.order is not None
            or any(c is not None for reading in computed.readings for c in reading.choices)
            or any(mask is not None and mask.any() for reading in computed.readings for mask in reading.free))


def stated_agrees(computed: Expected, stated: tuple[np.ndarray, ...]) -> bool:
    """Whether outputs a case file or golden test states are ones the reference allows: judged as
    a runtime's would be (bitwise, or within the output's precision budget)."""
    return computed.is_valid and compare.judge(computed, RunOutput(outputs=stated)).outcome in (compare.PASS, compare.AMBIGUOUS)


def _stated_precise(computed: Expected, stated: tuple[np.ndarray, ...]) -> tuple[np.ndarray | None, ...]:
    """The precise values an output stated by a file is judged against: the reference's own, where
    it computed them for outputs of the stated types and shapes. A stated output is one correctly
    rounded value among those its budget allows, so a runtime is held to the reference's precise
    value by the same budget, not to the file's rounding bit for bit."""
    if not computed.is_valid or not computed.readings[0].precise:
        return ()
    precise = computed.readings[0].precise
    return tuple(p if p is not None and p.shape == s.shape else None for p, s in zip(precise, stated))


def _stated_by(example: Example) -> str:
    return "stored in the golden test" if example.source.startswith("golden:") else "stated by the case file"


def _reference_said(computed: Expected) -> str:
    """What the reference answered where a case file or golden test states another output: a fail
    judged by the stated output may be the file's mistake, not the runtime's."""
    if not computed.is_valid:
        return f"conform's reference rejects the input ({computed.invalid.rule})"
    return f"conform's reference gives {_first_reading(computed)}"


def _first_reading(computed: Expected) -> str:
    return describe(computed.readings[0].outputs[0])


def too_large(example: Example, limit: int) -> str | None:
    """Why a case is refused before anything is allocated for it, or None."""
    elements = for_op(example.op).output_elements(example)
    if elements > limit:
        return f"skipped: too large (the output would have {elements:,} elements; --max-elements is {limit:,})"
    return None


@dataclass(eq=False)
class Staged:
    """An example ready for the runner: its expected outputs, model and replay command.

    Not frozen, unlike the records a run reports: one is made for every case and lives only until
    the case is judged, and a frozen dataclass's __init__ sets each field through object.__setattr__,
    ~3x the time (with BuiltModel, ~1 us of a small Slice case's ~28)."""

    example: Example
    expected: Expected
    built: BuiltModel
    replay: str
    extra: dict
    seconds: float = 0.0  # spent staging it


def stage(example: Example, runner: Runner, options: RunOptions, mode: str = "input") -> Staged | Result:
    """Everything before the runner: the reference's answer and the model in `mode`; or the
    finished Result when the case goes no further (too large, or a model onnx.checker rejects)."""
    started = time.perf_counter()
    replay = replay_command(example, runner, options, mode_options(mode, options.states_model_options))
    extra = {"mode": mode} if len(options.modes) > 1 or mode != "input" else {}
    if options.shapes != DEFAULT_SHAPES:
        extra["shapes"] = options.shapes
    refusal = too_large(example, options.max_elements)
    if refusal is not None:
        return Result(example, Expected(readings=()), Verdict(compare.SKIPPED, refusal), replay=replay, extra=extra)
    expected = expected_for(example)
    built = model_of(example, expected, mode, options.shapes)
    if expected.is_valid:
        problem = checker_problem(built.data)
        if problem is not None:
            verdict = Verdict(compare.ERROR, f"not run: onnx.checker rejects the model of a case the spec text allows "
                                             f"({problem}); either conform built it wrong or onnx is stricter than the text")
            return Result(example, expected, verdict, (), time.perf_counter() - started, replay, extra)
    staged = Staged(example, expected, built, replay, extra, time.perf_counter() - started)
    known = options.known_timeout
    if known is not None and known[:2] == (example.id, mode):  # judged as the runner's own timeout would be, not run again
        return judged(staged, RunOutput.timed_out(known[2], known[3]), runner, options, known[2])
    return staged


def with_known_hang(unit: WorkUnit, options: RunOptions, runner: Runner) -> RunOptions:
    """The options to run `unit` (or a part of it) with: when a worker was stopped in the unit's
    Nth runtime call (`unit.hang`), the case of that call is the known timeout, so that running
    the unit again costs no second timeout. The case is found by staging the whole
    unit as the stopped worker did: the runtime is called for exactly the cases staging lets through."""
    if unit.hang is None:
        return options
    call, seconds, last_words = unit.hang
    whole = dataclasses.replace(unit, part=(0, 1), hang=None)
    as_run = dataclasses.replace(options, known_timeout=None)  # as the stopped worker staged it
    calls = 0
    for chunk in staged_chunks(examples_of(whole, as_run), runner, as_run):
        for item in chunk:
            if isinstance(item, Staged):
                calls += 1
                if calls == call:
                    return dataclasses.replace(options, known_timeout=(item.example.id, item.extra.get("mode", "input"), seconds, last_words))
    return options


def judged(staged: Staged, run: RunOutput, runner: Runner, options: RunOptions, run_seconds: float) -> Result:
    """The Result of a staged example, given what the runner returned and how long it took; the
    Result's seconds are the case's own: staging, running and judging it."""
    started = time.perf_counter()
    verdict = compare.judge(staged.expected, run, strict_zero=options.strict_zero)
    verdict = _explained(verdict, staged.example, runner)
    seconds = staged.seconds + run_seconds + time.perf_counter() - started
    # The runtime's whole message, where its verdict quotes only the line that says why (see RunOutput.detail).
    extra = staged.extra if run.detail is None else {**staged.extra, "detail": run.detail}
    forensics = getattr(run, "forensics", None)  # a crash run again alone (see runners.isolated.Crashed)
    if forensics is not None:
        extra = {**extra, "crash": forensics}
    return Result(staged.example, staged.expected, verdict, run.outputs, seconds, staged.replay, extra)


def run_one(example: Example, runner: Runner, options: RunOptions, mode: str = "input") -> Result:
    """Build the example's model in `mode`, run it, and judge the outputs against the reference."""
    staged = stage(example, runner, options, mode)
    return staged if isinstance(staged, Result) else _run_and_judge(staged, runner, options)


def _run_and_judge(staged: Staged, runner: Runner, options: RunOptions) -> Result:
    started = time.perf_counter()
    run = runner.run(named(staged))
    return judged(staged, run, runner, options, time.perf_counter() - started)


def named(staged: Staged) -> BuiltModel:
    """The staged case's model, telling the runner which case it is (`case_id`: its id, and its
    mode where the run names one): an isolated runner names the cases that ran before a crash."""
    built, mode = staged.built, staged.extra.get("mode")
    built.case_id = staged.example.id if mode is None else f"{staged.example.id} [{mode}]"
    return built


def _explained(verdict: Verdict, example: Example, runner: Runner) -> Verdict:
    """A failure on a provider with known semantics of its own says so in those terms."""
    if verdict.outcome != compare.FAIL:
        return verdict
    explain = for_op(example.op).provider_notes.get(runner.describe().get("provider"))
    note = explain(example) if explain is not None else None
    return dataclasses.replace(verdict, message=f"{verdict.message}. {note}") if note else verdict


# Cases are staged (reference, model) a few at a time rather than each between the run and the
# judging of the one before: the same code over and over keeps the CPU's caches warm. Per case, on
# Slice-13's 2,118 (sessions reused): in-process 105 us one at a time, 91 by 8, 87 by 32; isolated
# 105, 95, and 118 by 32, as its worker, holding only 4 KiB of cases then, idled while a long
# chunk was staged. A runner that overlaps cases (run_stream) still gets them 8 at a time: with
# its deeper queue since, 4 to 32 a chunk time alike on Linux, and 64 starve its worker (the queue
# holds ~45; 4 KiB where pipes are small). In-process, where a chunk is staged, run and judged in
# turn, 32 a chunk: 41.8 -> 40.2 us a case best, 43.3 -> 41.4 median, against 8 (10 rounds each,
# in turn, one process). A chunk ends early once its inputs and expected outputs hold STAGE_BYTES,
# so large cases are not held many at a time.
STAGE_CHUNK = 8
IN_PROCESS_CHUNK = 32
STAGE_BYTES = 16 * 2**20


def run_examples(
    examples: list[Example], runner: Runner, options: RunOptions, on_result: Callable[[Result], None] = lambda r: None,
    collect: bool = True,
) -> list[Result]:
    """Every example in every mode of the options, in order; `on_result` hears each Result as it
    comes, and they are returned too unless `collect` is false (a run's Ledger keeps what it needs).

    A runner that can overlap cases (`run_stream`) gets the next model while it runs the last one.
    """
    return run_staged(staged_chunks(examples, runner, options), runner, options, on_result, collect)


def run_staged(chunks: Iterable[list[Staged | Result]], runner: Runner, options: RunOptions,
               on_result: Callable[[Result], None] = lambda r: None, collect: bool = True) -> list[Result]:
    """Each staged case run and judged, in order (a Result among them is one that goes no
    further); the chunks are staged as the runner asks for models, overlapped where it can.
    Returned as a list unless `collect` is false."""
    if not _overlaps_cases(runner):
        return _run_chunkwise(chunks, runner, options, on_result, collect)
    staged: deque[Staged | Result] = deque()
    staging = [0.0]  # seconds spent staging so far: not part of the wait for any one case's output

    def models() -> Iterator[BuiltModel | None]:
        for chunk in chunks:
            staged.extend(chunk)
            staging[0] += sum(item.seconds for item in chunk)
            yield from [named(item) if isinstance(item, Staged) else None for item in chunk]

    results = []
    outputs = runner.run_stream(models())
    while True:
        started, staged_before = time.perf_counter(), staging[0]
        run = next(outputs, _DONE)
        if run is _DONE:
            return results
        item = staged.popleft()
        waited = time.perf_counter() - started - (staging[0] - staged_before)
        result = item if run is None else judged(item, run, runner, options, waited)
        if collect:
            results.append(result)
        on_result(result)


_DONE = object()


def _overlaps_cases(runner: Runner) -> bool:
    """Whether the runner takes a stream of cases (`run_stream`) and runs them beside this process:
    that decides both how its cases are staged and how they are run."""
    return hasattr(runner, "run_stream")


def _run_chunkwise(chunks: Iterable[list[Staged | Result]], runner: Runner, options: RunOptions,
                   on_result: Callable[[Result], None], collect: bool = True) -> list[Result]:
    """A chunk's cases run back to back, then judged: the runtime's code and conform's each keep
    the CPU's caches through a chunk instead of taking them from each other every case."""
    results = []
    for chunk in chunks:
        runs = [_timed_run(item, runner) for item in chunk]
        for item, (run, seconds) in zip(chunk, runs):
            result = item if run is None else judged(item, run, runner, options, seconds)
            if collect:
                results.append(result)
            on_result(result)
    return results


def _timed_run(item: Staged | Result, runner: Runner) -> tuple[RunOutput | None, float]:
    if not isinstance(item, Staged):
        return None, 0.0
    started = time.perf_counter()
    run = runner.run(named(item))
    return run, time.perf_counter() - started


def staged_chunks(examples: list[Example], runner: Runner, options: RunOptions) -> Iterator[list[Staged | Result]]:
    """Every example in every mode, staged, in chunks of at most STAGE_CHUNK cases (IN_PROCESS_CHUNK
    for a runner that runs them in turn) or STAGE_BYTES."""
    count = STAGE_CHUNK if _overlaps_cases(runner) else IN_PROCESS_CHUNK
    chunk: list[Staged | Result] = []
    held = 0
    for example in examples:
        for mode in options.modes:
            item = stage(example, runner, options, mode)
            chunk.append(item)
            held += _bytes_held(item)
            if len(chunk) == count or held >= STAGE_BYTES:
                yield chunk
                chunk, held = [], 0
    if chunk:
        yield chunk


def _bytes_held(item: Staged | Result) -> int:
    if not isinstance(item, Staged):
        return 0
    held = 0
    for array in item.built.feeds.values():  # loops, not sum() over generators: asked for every case
        held += array.nbytes
    for reading in item.expected.readings:
        for array in reading.outputs:
            held += array.nbytes
    return held


def replay_command(example: Example, runner: Runner, options: RunOptions, extra: tuple[str, ...] = (),
                   command: str = "run", after: tuple[str, ...] = ()) -> str:
    """The one command that re-runs just this example on the same runner and judges it as the run
    did: `conform run`, or the `command` given (`diff`, with the second runner `after` the first)."""
    hypothesis = example.source == "hypothesis"
    found_in = () if hypothesis or options.case_roots == BUILTIN_ONLY else _case_file_options(example.source, options.case_roots)
    head, tail = _replay_parts(command, example.op, example.version.since_version, hypothesis,
                               options.seed if hypothesis else None, options.examples if hypothesis else None,
                               (*found_in, *extra, *shapes_options(options.shapes, options.states_model_options)),
                               (*judging_options(options), *runner.replay_options(), *after))
    return f"{head} --case {shlex.quote(example.id)} {tail}"


def mode_options(mode: str, stated: bool = False) -> tuple[str, ...]:
    """The options that build a case's model in `mode` again (none for the default, unless `stated`)."""
    return ("--mode", mode) if stated or mode != "input" else ()


def shapes_options(shapes: str, stated: bool = False) -> tuple[str, ...]:
    """The options that build a case's model with these `shapes` again (none for the default, unless `stated`)."""
    return ("--shapes", shapes) if stated or shapes != DEFAULT_SHAPES else ()


def judging_options(options: RunOptions) -> tuple[str, ...]:
    """The options given that change a case's verdict, as a replay command repeats them: without
    --strict-zero a case failed on a -0.0 replays as a pass, --max-elements decides which cases
    are refused as too large, and --timeout which slow ones are timeouts; --strict-validation and
    --fail-on-unsupported decide whether a lenient or unsupported case fails, --strict-precision an imprecise one."""
    words: tuple[str, ...] = ()
    # Plain tests, not a loop over the flags: asked for every case, and most runs give none of them.
    if options.strict_zero:
        words += ("--strict-zero",)
    if options.strict_validation:
        words += ("--strict-validation",)
    if options.fail_on_unsupported:
        words += ("--fail-on-unsupported",)
    if options.strict_precision:
        words += ("--strict-precision",)
    if options.max_elements != DEFAULT_MAX_ELEMENTS:
        words += ("--max-elements", str(options.max_elements))
    if options.timeout != DEFAULT_TIMEOUT:
        words += ("--timeout", f"{options.timeout:g}")
    return words


def _case_file_options(source: str, roots: tuple[Path, ...]) -> tuple[str, ...]:
    """`--only-cases FILE` for a YAML case read from a file given with --cases or --only-cases,
    where a replay without it would find no case with its id; nothing for one of conform's own."""
    shown = source.removeprefix("yaml:").rpartition(":")[0]
    return ("--only-cases", shown) if shown in _given_case_files(roots) else ()


@lru_cache(maxsize=16)
def _given_case_files(roots: tuple[Path, ...]) -> frozenset[str]:
    """The case files under `roots` that are not conform's own, named as a case's source names them."""
    builtin = casefile.BUILTIN_CASES.resolve()
    given = [root for root in roots if not root.resolve().is_relative_to(builtin)]
    return frozenset(casefile.display_path(path) for path in casefile.case_files(given))


@lru_cache(maxsize=256)
def _replay_parts(command: str, op: str, version: int, hypothesis: bool, seed: int | None, examples: int | None,
                  extra: tuple[str, ...], runner_options: tuple[str, ...]) -> tuple[str, str]:
    """What every replay command of a group shares, before and after `--case ID`."""
    words = ["conform", command, "--op", op, "--opset", str(version)]
    words += ["--no-yaml", "--seed", str(seed), "--examples", str(examples)] if hypothesis else ["--no-hypothesis"]
    return shlex.join([*words, *extra]), shlex.join(runner_options)


FAILING = (compare.FAIL, compare.ERROR)


@dataclass(frozen=True)
class ShrinkTask:
    """A failing version x type binding (in one input mode) of a run, to shrink from its first failure."""

    example: Example
    mode: str

    def describe(self) -> str:
        return f"shrinking of hypothesis group {self.example.version.label} {self.example.types}"


# A failing group's minimal case, and what the runner makes of it; None when hypothesis met no failure.
Minimal = tuple[Example, str] | None


def minimal_case(task: ShrinkTask, runner: Runner, options: RunOptions) -> Minimal:
    """Shrink a failing group with hypothesis, trying each candidate on `runner`."""
    example = task.example
    # Most of what hypothesis tries while shrinking draws a case it drew before (bytes the case
    # does not read): each distinct case is run once (for Slice-13, 42-148 of 144-282 tries).
    tried: dict[tuple, Result] = {}

    def result_of(candidate: Example) -> Result:
        key = example_key(candidate)
        if key not in tried:
            tried[key] = run_one(candidate, runner, options, task.mode)
        return tried[key]

    minimal = strategies.shrink(example.version, dict(sorted(example.types.items())), options.examples, options.seed,
                                lambda candidate: result_of(candidate).outcome in FAILING)
    return None if minimal is None else (minimal, result_of(minimal).verdict.message)


def shrink_failures(results: list[Result], runner: Runner, options: RunOptions, folder: Path,
                    minimal_cases: Callable[[list[ShrinkTask]], list[Minimal]] | None = None) -> list[Result]:
    """For each version x type binding whose hypothesis cases failed, attach the shrunk minimal case.

    The minimal case is written to `folder` as a ready-to-paste YAML case file, with the command
    that replays it; where the file cannot be written, the record holds the case and says why
    (`unsaved_minimal_cases`). Results are returned in the same order. The groups are shrunk on
    `runner`, one after another, or, when there are two or more, by `minimal_cases` (worker
    processes, side by side), which answers in the order given.
    """
    groups: dict[tuple, tuple[int, ShrinkTask]] = {}  # the position of each group's first failure
    for position, result in enumerate(results):
        example, mode = result.example, result.extra.get("mode", "input")
        if example.source != "hypothesis" or result.outcome not in FAILING:
            continue
        key = (example.op, example.version.since_version, tuple(sorted(example.types.items())), mode)
        if key not in groups:
            groups[key] = position, ShrinkTask(example, mode)
    failing = list(groups.values())
    tasks = [task for _, task in failing[:options.shrink]]
    found = minimal_cases(tasks) if minimal_cases and len(tasks) > 1 else [minimal_case(task, runner, options) for task in tasks]
    shrunk = list(results)

    def attach(position: int, minimal: dict) -> None:
        shrunk[position] = dataclasses.replace(results[position], extra={**results[position].extra, "minimal": minimal})

    for (position, task), minimal in zip(failing, found):
        if minimal is not None:
            attach(position, _minimal_record(*minimal, runner, options, folder, task.mode))
    note = f"not shrunk: only the first {options.shrink} failing groups are (raise --shrink)"
    for position, _ in failing[options.shrink:]:
        attach(position, {"skipped": note})
    return shrunk


def shrunk_folder(root: Path, runner: Runner, mode: str, shapes: str = DEFAULT_SHAPES) -> Path:
    """Where a run's shrunk cases go under `root`: a folder per runner and per input mode (and
    shape option), `<root>/<runner>/<mode>`, so that two runtimes' (or two levels', two modes')
    minimal cases, named by their content's hash, never mix in one folder."""
    chosen = mode if shapes == DEFAULT_SHAPES else f"{mode}-{shapes}"
    return root / runner_folder_name(runner) / chosen


def runner_folder_name(runner: Runner) -> str:
    """A runner as a folder name, from the options that select it again: `onnxruntime-cpu`,
    `onnxruntime-cuda-optimizations-off`, `reference`, `backend-my_runtime.backend`."""
    words = runner.replay_options()
    chosen = dict(zip(words[::2], words[1::2]))  # option -> value (a repeated --refusal says nothing of which runner)
    if "--backend" in chosen:
        parts = ["backend", chosen["--backend"]]
    else:
        parts = [chosen.get("--runner", runner.name)]
        if parts[0] == "onnxruntime":
            parts.append(chosen.get("--provider", "cpu"))
        if chosen.get("--optimizations") == "off":
            parts.append("optimizations-off")
    name = "-".join(re.sub(r"[^A-Za-z0-9._-]+", "_", part) for part in parts)
    return name.lstrip(".") or "runner"  # never '.', '..' nor a hidden folder


def _minimal_record(minimal: Example, message: str, runner: Runner, options: RunOptions, folder: Path, mode: str) -> dict:
    from .errors import OutputError
    from .regression import case_yaml
    from .output import write_atomic

    draft = case_yaml(minimal, "shrunk")
    name = f"shrunk_{hashlib.sha256(draft.encode()).hexdigest()[:10]}"
    text = case_yaml(minimal, name, spec=f"shrunk by hypothesis from a failing case (seed {options.seed})")
    path = shrunk_folder(folder, runner, mode, options.shapes) / f"{name}.yaml"
    named = dataclasses.replace(minimal, name=name, source=f"yaml:{path}")
    try:
        write_atomic(path, text, "the shrunk case file")
    except OutputError as error:  # the run's results and reports are not lost for it: the case is in its record
        return {"id": named.id, "yaml": text, "unsaved": error.message, "outcome": message}
    replay = shlex.join(["conform", "run", "--op", minimal.op, "--opset", str(minimal.version.since_version),
                         "--no-hypothesis", "--cases", str(path), "--mode", mode,
                         *shapes_options(options.shapes, options.states_model_options), "--case", named.id,
                         *judging_options(options), *runner.replay_options()])
    return {"id": named.id, "yaml": text, "file": str(path), "replay": replay, "outcome": message}


def unsaved_minimal_cases(results: list[Result]) -> list[str]:
    """Why each minimal case whose file could not be written was not: the run tells it, and exits 4."""
    return [minimal["unsaved"] for result in results if "unsaved" in (minimal := result.extra.get("minimal") or {})]


__all__ = ["RunOptions", "Result", "select_examples", "run_examples", "run_one", "expected_for", "shrink_failures", "ShrinkTask", "minimal_case"]
