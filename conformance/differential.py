"""Differential runs: the same cases on two runners, where they disagree, and who agrees with the spec.

Two runtimes disagree on a case when one rejects it and the other does not, or when both answer
and the outputs differ under conform's comparison rules. Each side also gets its own verdict
against the reference, so the report says which of them (if either) keeps to the text.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterator

from .compare import AMBIGUOUS, PASS, mismatch
from .execute import Result, RunOptions, WorkUnit, examples_of, mode_options, replay_command, run_staged, staged_chunks
from .errors import UnavailableError, UsageError
from .runners import RUNNER_NAMES, Runner, RunnerSpec, runner_of
from .runners.onnxruntime import short_provider


PROVIDERS_AND_RUNNERS = "a provider (cpu, cuda, dml)", "a runner (onnxruntime, reference)"


def spec_from_name(name: str) -> RunnerSpec:
    """`cpu`/`cuda`/`dml` (onnxruntime providers), `onnxruntime`, `reference`, or an onnx.backend
    module (`backend:NAME` where the name would be read as one of the others)."""
    if short_provider(name) is not None:
        return RunnerSpec("onnxruntime", name)
    if name in RUNNER_NAMES:
        return RunnerSpec(name)
    if not name.strip():
        raise UsageError(f"--against needs {', '.join(PROVIDERS_AND_RUNNERS)} or a backend module")
    return RunnerSpec(backend=name.removeprefix("backend:"))


def runner_from_name(name: str, isolate: bool, timeout: float) -> Runner:
    """The runner `spec_from_name` reads `name` as; UnavailableError (exit 3) when it cannot run here."""
    spec = spec_from_name(name)
    try:
        return runner_of(spec, isolate, timeout)
    except UnavailableError as error:
        if spec.backend is None or name.startswith("backend:"):
            raise
        provider, runner = PROVIDERS_AND_RUNNERS  # perhaps a misspelt provider or runner: say what else it could have been
        raise UnavailableError(f"--against {name} is neither {provider} nor {runner}, and as a backend module: {error}") from None


def against_option(runner: Runner) -> str:
    """The `--against` value that names `runner` again (as runner_from_name reads it), for a replay."""
    words = runner.replay_options()
    chosen = dict(zip(words[::2], words[1::2]))
    if "--backend" in chosen:
        spec = chosen["--backend"]
        taken = short_provider(spec) is not None or spec in RUNNER_NAMES or spec.startswith("backend:")
        return f"backend:{spec}" if taken else spec
    return chosen["--provider"] if chosen["--runner"] == "onnxruntime" else chosen["--runner"]


def runner_label(runner: Runner) -> str:
    """A runner's name in a diff's messages and columns: its name, provider and, when off, its
    optimizations (`--optimizations off --against cpu` compares onnxruntime with itself)."""
    described = runner.describe()
    words = [described.get("name"), described.get("provider")]
    if described.get("optimizations") == "off":
        words.append("optimizations off")
    return " ".join(str(word) for word in words if word)


def runner_labels(first: Runner, second: Runner) -> tuple[str, str]:
    """The two runners' labels, told apart when they are the same runner twice."""
    labels = runner_label(first), runner_label(second)
    return labels if labels[0] != labels[1] else (f"{labels[0]} (first)", f"{labels[1]} (second)")


def outputs_disagree(first: Result, second: Result, strict_zero: bool,
                     labels: tuple[str, str] = ("the first runner", "the second runner")) -> str | None:
    """Why two runners' answers to the same case differ, or None when they agree; `labels` name them."""
    if not first.actual and not second.actual:
        return None
    if not first.actual or not second.actual:
        rejecting, label = (first, labels[0]) if not first.actual else (second, labels[1])
        return f"{label} rejected the case ({rejecting.verdict.message})"
    if len(first.actual) != len(second.actual):
        return f"{labels[0]} gave {len(first.actual)} outputs, {labels[1]} {len(second.actual)}"
    for index, (a, b) in enumerate(zip(first.actual, second.actual)):
        found = mismatch(index, a, b, strict_zero)
        if found is not None:
            return found.headline(*labels)
    return None


def keeps_to_spec(result: Result) -> bool:
    return result.outcome in (PASS, AMBIGUOUS)


# Cases go to each runner this many at a time: a runner in a worker process then has the next
# cases queued while this process judges (see run_examples), and an interrupted diff loses at most
# one chunk of cases run on the first runner and not yet on the second.
DIFF_CHUNK = 64


def diff(examples, first: Runner, second: Runner, options: RunOptions,
         on_result: Callable[[Result], None] = lambda r: None) -> list[Result]:
    """One Result per case (the first runner's), carrying the second's verdict and the disagreement,
    and replayed by the `conform diff` that runs that case alone on both runners; `on_result`
    hears each as it is made (an interrupted diff keeps those)."""
    results = []
    pairing = _Pairing(first, runner_labels(first, second), ("--against", against_option(second)))
    for start in range(0, len(examples), DIFF_CHUNK):
        # Staged once, as the first runner asks for the cases, and the same staged cases handed to
        # the second: the reference and the models do not depend on the runner (only the replay
        # command does, and a paired result has a replay of its own).
        staged: list = []
        first_results = run_staged(_kept(staged_chunks(examples[start:start + DIFF_CHUNK], first, options), staged),
                                   first, options)
        for a, b in zip(first_results, run_staged(staged, second, options), strict=True):
            results.append(pairing.paired(a, b, options))
            on_result(results[-1])
    return results


@dataclasses.dataclass(frozen=True)
class DiffUnit:
    """A unit of a diff's plan for a `--jobs` worker: its cases on the worker's runner (the first)
    and on the runner `against` names, made in the worker as the first is (see parallel)."""

    unit: WorkUnit
    against: RunnerSpec

    def describe(self) -> str:
        return f"{self.unit.describe()} (diffed)"

    def parts(self, count: int) -> list["DiffUnit"]:
        """Cut as its unit is (`WorkUnit.parts`), for careful workers to share after a death."""
        return [dataclasses.replace(self, unit=part) for part in self.unit.parts(count)]


def diff_unit(task: DiffUnit, first: Runner, second: Runner, options: RunOptions) -> list[Result]:
    """`diff` of a unit's cases: the same results, in the same order, as a serial diff gives them."""
    return diff(examples_of(task.unit, options), first, second, options)


def _kept(chunks: Iterator[list], kept: list) -> Iterator[list]:
    """The chunks, each also appended to `kept` as it goes by."""
    for chunk in chunks:
        kept.append(chunk)
        yield chunk


@dataclasses.dataclass(frozen=True)
class _Pairing:
    """What a diff's paired results share: the first runner, both runners' labels, and the
    options that name the second runner in a replay."""

    first: Runner
    labels: tuple[str, str]
    against: tuple[str, ...]

    def paired(self, a: Result, b: Result, options: RunOptions) -> Result:
        """The first runner's result of a case, carrying the second's verdict, how they differ,
        and the replay of the diff."""
        disagreement = outputs_disagree(a, b, options.strict_zero, self.labels)
        agrees = {"first": keeps_to_spec(a), "second": keeps_to_spec(b)}
        spec_side = "both" if all(agrees.values()) else "neither" if not any(agrees.values()) else \
            ("first" if agrees["first"] else "second")
        extra = {"against": {"outcome": b.outcome, "message": b.verdict.message},
                 "disagreement": disagreement, "agrees_with_spec": spec_side}
        replay = replay_command(a.example, self.first, options, mode_options(a.extra.get("mode", "input")), "diff", self.against)
        return dataclasses.replace(a, replay=replay, extra={**a.extra, **extra})
