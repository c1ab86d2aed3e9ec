"""The straight line of a run: Example -> expected (reference) -> model -> runner -> verdict -> Result.

`select_examples` picks what to run from the options; `run_examples` runs them one by one, calling
`on_result` after each so the CLI can draw progress. Nothing here prints.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from . import casefile, compare
from .case import Example
from .compare import Verdict
from .dtypes import dtype
from .errors import UsageError
from .model import build, checker_problem
from .reference import for_op
from .reference.base import Expected, Reading, single
from .registry import OpVersion, version_in_force, versions
from .runners.base import Runner


@dataclass(frozen=True)
class RunOptions:
    """Everything that decides which examples run and how they are judged."""

    op: str
    opset: int | None = None
    dtypes: tuple[str, ...] = ()
    case_ids: tuple[str, ...] = ()
    strict_zero: bool = False
    case_roots: tuple[Path, ...] = (casefile.BUILTIN_CASES,)


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


def selected_versions(options: RunOptions) -> list[OpVersion]:
    reference = for_op(options.op)
    chosen = [version_in_force(reference.op, options.opset)] if options.opset is not None else list(versions(reference.op))
    if not options.dtypes:
        return chosen
    for name in options.dtypes:
        if not any(name in v.allowed(reference.dtype_param) for v in chosen):
            allowed = sorted({d for v in chosen for d in v.allowed(reference.dtype_param)})
            where = chosen[0].label if len(chosen) == 1 else f"any version of {reference.op}"
            raise UsageError(f"dtype '{name}' is not allowed by {where} (allowed: {', '.join(allowed)})")
    return [v for v in chosen if any(d in v.allowed(reference.dtype_param) for d in options.dtypes)]


def select_examples(options: RunOptions, extra: Iterable[Example] = ()) -> list[Example]:
    """The examples a run covers: the case files' (plus `extra`), filtered by version, dtype and id."""
    reference = for_op(options.op)
    wanted = {v.since_version for v in selected_versions(options)}
    examples = casefile.load_examples(reference.op, options.case_roots) + list(extra)
    chosen = [e for e in examples if e.version.since_version in wanted]
    if options.dtypes:
        chosen = [e for e in chosen if e.dtype in options.dtypes]
    if options.case_ids:
        chosen = [e for e in chosen if e.id in options.case_ids]
        missing = set(options.case_ids) - {e.id for e in chosen}
        if missing:
            raise UsageError(f"no case with id {', '.join(sorted(missing))} (see the 'id' field of a report)")
    return chosen


def expected_for(example: Example) -> Expected:
    """The reference's answer, overridden by what the case file states when it states something."""
    reference = for_op(example.op)
    computed = reference.expected(example)
    if example.expect_error is not None:
        from .reference.base import Invalid

        return computed if not computed.is_valid else Expected(invalid=Invalid(example.expect_error, "stated by the case file"))
    if example.expect_output is not None:
        stated = single(example.expect_output, "stated by the case file")
        if computed.is_valid and len(computed.readings) > 1 and any(
            compare.arrays_identical(r.outputs[0], example.expect_output) for r in computed.readings
        ):
            return computed
        return Expected(readings=stated.readings, may_reject=computed.may_reject if computed.is_valid else None)
    return computed


def run_one(example: Example, runner: Runner, options: RunOptions) -> Result:
    started = time.perf_counter()
    expected = expected_for(example)
    reference = for_op(example.op)
    built = build(example, reference.output_dtype(example), _output_rank(example, expected))
    replay = replay_command(example, runner)
    if expected.is_valid:
        problem = checker_problem(built.data)
        if problem is not None:
            verdict = Verdict(compare.ERROR, f"conform bug: onnx.checker rejects the model of a valid case: {problem}")
            return Result(example, expected, verdict, (), time.perf_counter() - started, replay)
    run = runner.run(built)
    verdict = compare.judge(expected, run, strict_zero=options.strict_zero)
    return Result(example, expected, verdict, run.outputs, time.perf_counter() - started, replay)


def _output_rank(example: Example, expected: Expected) -> int:
    if expected.is_valid:
        return expected.readings[0].outputs[0].ndim
    first = next((a for a in example.inputs.values() if a is not None), None)
    return first.ndim if first is not None else 0


def run_examples(
    examples: list[Example], runner: Runner, options: RunOptions, on_result: Callable[[Result], None] = lambda r: None
) -> list[Result]:
    results = []
    for example in examples:
        result = run_one(example, runner, options)
        results.append(result)
        on_result(result)
    return results


def replay_command(example: Example, runner: Runner) -> str:
    words = ["conform", "run", "--op", example.op, "--opset", str(example.version.since_version),
             "--case", example.id, *runner.replay_options()]
    return shlex.join(words)


def output_dtype_name(example: Example) -> str:
    return dtype(for_op(example.op).output_dtype(example)).name


__all__ = ["RunOptions", "Result", "select_examples", "run_examples", "run_one", "expected_for", "Reading"]
