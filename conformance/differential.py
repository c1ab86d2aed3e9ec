"""Differential runs: the same cases on two runners, where they disagree, and who agrees with the spec.

Two runtimes disagree on a case when one rejects it and the other does not, or when both answer
and the outputs differ under conform's comparison rules. Each side also gets its own verdict
against the reference, so the report says which of them (if either) keeps to the text.

Disagreements come in families as a run's failures do (a case-file case over its type bindings,
a version's hypothesis cases), families of the same pair of outcomes: `disagreement_families`
groups them, `family_lines` says what a family's block shows, and `outcome_pairs` counts every
case by the two runners' outcomes.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter, defaultdict
from typing import Callable, Iterable, Iterator

from .case import Example
from .compare import AMBIGUOUS, IMPRECISE, OUTCOMES, PASS, UNSUPPORTED, Mismatch, mismatch
from .execute import Result, RunOptions, WorkUnit, examples_of, mode_options, replay_command, run_staged, staged_chunks
from .errors import UnavailableError, UsageError
from .report import MAX_NAMED, SEVERITY, plural
from .report.json_report import tensor
from .runners import RUNNER_NAMES, Runner, RunnerSpec, runner_of
from .runners.onnxruntime import short_provider


PROVIDERS_AND_RUNNERS = "a provider (cpu, cuda, dml)", f"a runner ({', '.join(RUNNER_NAMES)})"


def spec_from_name(name: str) -> RunnerSpec:
    """`cpu`/`cuda`/`dml` (onnxruntime providers), a runner's name (`reference`, `openvino`), or an onnx.backend
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
    return _disagreement(first, second, output_mismatches(first, second, strict_zero), labels)


def output_mismatches(first: Result, second: Result, strict_zero: bool) -> list[Mismatch]:
    """Each output on which two answers differ: none unless both runners answered, with as many outputs."""
    if not first.actual or not second.actual or len(first.actual) != len(second.actual):
        return []
    found = (mismatch(index, a, b, strict_zero) for index, (a, b) in enumerate(zip(first.actual, second.actual)))
    return [m for m in found if m is not None]


def _disagreement(first: Result, second: Result, found: list[Mismatch], labels: tuple[str, str]) -> str | None:
    """`outputs_disagree`'s answer, the outputs' mismatches (`output_mismatches`) already found."""
    if not first.actual and not second.actual:
        return None
    if not first.actual or not second.actual:
        rejecting, label = (first, labels[0]) if not first.actual else (second, labels[1])
        return f"{label} rejected the case ({rejecting.verdict.message})"
    if len(first.actual) != len(second.actual):
        return f"{labels[0]} gave {len(first.actual)} outputs, {labels[1]} {len(second.actual)}"
    return found[0].headline(*labels) if found else None


def keeps_to_spec(result: Result, strict_precision: bool = False) -> bool:
    """Whether a runner's answer is one the spec allows: an imprecise one is, unless `strict_precision`."""
    return result.outcome in (PASS, AMBIGUOUS) or (result.outcome == IMPRECISE and not strict_precision)


# Cases go to each runner this many at a time: a runner in a worker process then has the next
# cases queued while this process judges (see run_examples), and an interrupted diff loses at most
# one chunk of cases run on the first runner and not yet on the second.
DIFF_CHUNK = 64


def diff(examples, first: Runner, second: Runner, options: RunOptions,
         on_result: Callable[[Result], None] = lambda r: None) -> list[Result]:
    """Every result `diffed` gives, as a list; `on_result` hears each as it is made (an
    interrupted diff keeps those)."""
    results = []
    for result in diffed(examples, first, second, options):
        results.append(result)
        on_result(result)
    return results


def diffed(examples: Iterable[Example], first: Runner, second: Runner, options: RunOptions) -> Iterator[Result]:
    """One Result per case (the first runner's), carrying the second's verdict and the disagreement,
    and replayed by the `conform diff` that runs that case alone on both runners; the cases drawn
    a chunk at a time, so that a diff of examples drawn as they are asked for holds a chunk's."""
    pairing = _Pairing(first, runner_labels(first, second), ("--against", against_option(second)))
    examples = iter(examples)
    while chunk := list(itertools.islice(examples, DIFF_CHUNK)):
        # Staged once, as the first runner asks for the cases, and the same staged cases handed to
        # the second: the reference and the models do not depend on the runner (only the replay
        # command does, and a paired result has a replay of its own).
        staged: list = []
        first_results = run_staged(_kept(staged_chunks(chunk, first, options), staged), first, options)
        for a, b in zip(first_results, run_staged(staged, second, options), strict=True):
            yield pairing.paired(a, b, options)


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
        found = output_mismatches(a, b, options.strict_zero)
        disagreement = _disagreement(a, b, found, self.labels)
        agrees = {"first": keeps_to_spec(a, options.strict_precision), "second": keeps_to_spec(b, options.strict_precision)}
        spec_side = "both" if all(agrees.values()) else "neither" if not any(agrees.values()) else \
            ("first" if agrees["first"] else "second")
        against = {"outcome": b.outcome, "message": b.verdict.message}
        if "crash" in b.extra:  # the second runner's crash, run again alone (see runners.isolated)
            against["crash"] = b.extra["crash"]
        extra = {"against": against, "disagreement": disagreement, "agrees_with_spec": spec_side}
        if disagreement:
            # Kept for a disagreement only: where the two agree, the second's outputs are the first's.
            # As report records, not arrays: extra goes into the JSON report as it is.
            extra["against_actual"] = [tensor(output) for output in b.actual]
            if found:
                extra["differences"] = [line for m in found for line in m.lines(*self.labels)]
        replay = replay_command(a.example, self.first, options, mode_options(a.extra.get("mode", "input")), "diff", self.against)
        return dataclasses.replace(a, replay=replay, extra={**a.extra, **extra})


def outcome_pair(result: Result) -> tuple[str, str]:
    """A paired result's two outcomes: the first runner's, the second's."""
    return result.outcome, result.extra["against"]["outcome"]


def outcome_pairs(counts: Counter) -> dict[str, dict[str, int]]:
    """How many cases had each pair of outcomes (`counts`: `outcome_pair` -> cases, counted as the
    results came): by the first runner's outcome, then the second's, each in OUTCOMES' order."""
    return {first: {second: counts[(first, second)] for second in OUTCOMES if counts[(first, second)]}
            for first in OUTCOMES if any(pair[0] == first for pair in counts)}


def pair_severity(result: Result) -> int:
    """Where a disagreement comes in the order a reader needs them: by the worse of its two
    outcomes (a wrong answer first; what a runtime lacks, and two answers the text both allows, last)."""
    return min(SEVERITY.index(outcome) for outcome in outcome_pair(result))


def disagreement_families(results) -> list[list[Result]]:
    """The disagreements by family, as a run's panels group its results (`console.families`),
    and within one pair of outcomes: a case-file case's disagreements over its type bindings and
    variants, a version's hypothesis cases, or where either runner lacks the case's types, a
    version's cases in one type binding. Each family in run order; the families the worst first
    (`pair_severity`), then in the order of their first member."""
    # Here, not at the top: a worker process imports this module, and has no use for rich.
    from .report.console import families

    disagreeing = [r for r in results if r.extra["disagreement"]]
    order = {id(r): index for index, r in enumerate(disagreeing)}
    by_pair: dict[tuple[str, str], list[_FamilyView]] = defaultdict(list)
    for result in disagreeing:
        by_pair[outcome_pair(result)].append(_FamilyView(result))
    found = [[view.result for view in family] for views in by_pair.values() for family in families(views)]
    return sorted(found, key=lambda family: (pair_severity(family[0]), order[id(family[0])]))


class DiffKeeper:
    """What a diff keeps in memory of a result (see ledger.Ledger's `keeps`), as its console draws
    them: nothing of a case the runners agree on; of the disagreements, the first of each family
    whole and the rest by name. A family is known only once all are in, so the
    first of each group of a finer key is kept whole: the pair of outcomes, op version, type
    binding, variant, and case (a version's hypothesis cases as one)."""

    def __init__(self) -> None:
        self._seen: set[tuple] = set()

    def __call__(self, result: Result) -> Result | None:
        if not result.extra["disagreement"]:
            return None
        example = result.example
        key = (outcome_pair(result), example.op, example.version.since_version, example.binding, _variant(result),
               None if example.source == "hypothesis" else example.name)
        if key not in self._seen:
            self._seen.add(key)
            return result
        return _named_only(result)


def _named_only(result: Result) -> Result:
    """A disagreement as a family's block names it past its first member (its id, type binding,
    variant and both outcomes): `ledger.bare`, without the messages, the replay, the second
    runner's outputs and the differences."""
    from .compare import Verdict
    from .ledger import bare

    light = bare(result)
    extra = {key: value for key, value in light.extra.items() if key not in ("against_actual", "differences", "against")}
    extra["against"] = {"outcome": result.extra["against"]["outcome"]}
    return dataclasses.replace(light, verdict=Verdict(result.outcome, ""), replay="", extra=extra)


class _FamilyView:
    """A paired result as `console.families` reads one: its outcome unsupported where either
    runner's is, as what a runtime does not support is a type, whatever the case."""

    def __init__(self, result: Result) -> None:
        self.result, self.example, self.extra, self.replay = result, result.example, result.extra, result.replay
        self.outcome = UNSUPPORTED if UNSUPPORTED in outcome_pair(result) else result.outcome



def headline(result: Result, labels: tuple[str, str]) -> str:
    """A disagreement in one line: the case, each runner's outcome, who keeps to the spec, how they differ."""
    first, second = outcome_pair(result)
    side = {"first": labels[0], "second": labels[1]}.get(result.extra["agrees_with_spec"], result.extra["agrees_with_spec"])
    return (f"{_case_name(result)}: {labels[0]} {first}, {labels[1]} {second}; keeps to the spec: {side}; "
            f"{result.extra['disagreement']}")


def family_lines(result: Result, others: list[Result] | tuple = (), labels: tuple[str, str] = ("first", "second")) -> list[str]:
    """What a family's block says after its headline: the first member in full (what was asked,
    what the text expects, what each runner answered, where the answers differ), then the others
    named (each in the JSON report). The replay command is the caller's to print, on a line of its own."""
    from .values import describe

    example = result.example
    lines = [f"source: {example.source}"] + ([f"spec: {example.spec}"] if example.spec else [])
    lines += [f"input {name}: {'(omitted, empty name)' if array is None else describe(array)}" for name, array in example.inputs.items()]
    lines += [f"attribute {name}: {describe(value) if hasattr(value, 'dtype') else value!r}" for name, value in example.attributes.items()]
    if result.expected.is_valid:
        lines += [f"expected ({reading.label}){_output_name(i, reading.outputs)}: {describe(output)}"
                  for reading in result.expected.readings[:3] for i, output in enumerate(reading.outputs)]
    else:
        lines.append(f"expected: rejection ({result.expected.invalid.rule}: {result.expected.invalid.sentence})")
    answers = ((labels[0], result.outcome, result.verdict.message, [describe(a) for a in result.actual]),
               (labels[1], outcome_pair(result)[1], result.extra["against"]["message"],
                [_describe_record(r) for r in result.extra.get("against_actual", [])]))
    for label, outcome, message, outputs in answers:
        lines.append(f"{label}: {outcome}: {message}")
        lines += [f"{label}{_output_name(i, outputs)}: {text}" for i, text in enumerate(outputs)]
    lines += result.extra.get("differences", [])
    if others:
        lines.append(_others_line(result, others))
    return lines


def _case_name(result: Result) -> str:
    """A case as a diff names it: its id, and its input mode and optimization level where the diff had several."""
    variant = _variant(result)
    return f"{result.example.id} [{variant}]" if variant else result.example.id


def _variant(result: Result) -> str:
    return ", ".join(str(result.extra[key]) for key in ("mode", "optimizations") if key in result.extra)


def _member_name(result: Result) -> str:
    """What tells a family's member from the rest: its type binding, and its variant where the diff had several."""
    variant = _variant(result)
    return f"{result.example.binding} [{variant}]" if variant else result.example.binding


def _others_line(result: Result, others: list[Result] | tuple) -> str:
    """The rest of a family, named by what tells each from the first (`disagreement_families`)."""
    count, version = len(others), result.example.version.label
    if _FamilyView(result).outcome == UNSUPPORTED:
        named = [r.example.name for r in others]
        head = f"the same disagreement in {count} more {plural('case', count)} of {version} in {_member_name(result)}"
    elif result.example.source == "hypothesis":
        bindings = Counter(_member_name(r) for r in others)
        named = [f"{label} ({n})" for label, n in bindings.items()]
        head = (f"the same disagreement in {count} more {plural('hypothesis case', count)} of {version}, "
                f"in {len(bindings)} {plural('type binding', len(bindings))}")
    else:
        named = [_member_name(r) for r in others]
        kinds = "type bindings and variants" if any(_variant(r) for r in others) else "type bindings"
        head = f"the same disagreement in {count} more of this case's {kinds}" if count > 1 else \
            f"the same disagreement in one more of this case's {kinds}"
    listed = ", ".join(named[:MAX_NAMED]) + (f" and {len(named) - MAX_NAMED} more" if len(named) > MAX_NAMED else "")
    return f"{head}: {listed} (each in the JSON report)"


def _output_name(index: int, outputs) -> str:
    """' output 1' where an op has several outputs; nothing where it has one."""
    return f" output {index}" if len(outputs) > 1 else ""


def _describe_record(record: dict | None, limit: int = 12) -> str:
    """A report record's tensor (json_report.tensor) as `values.describe` tells an array: dtype,
    shape and first values."""
    if record is None:
        return "(none)"
    data = record["data"] if isinstance(record["data"], list) else [record["data"]]
    shown = ", ".join(repr(v) if record["dtype"] == "string" else _scalar_text(v) for v in data[:limit])
    size = 1
    for dim in record["shape"]:
        size *= dim
    more = f", ... ({size} values)" if size > limit else ""
    return f"{record['dtype']}{record['shape']} [{shown}{more}]"


def _scalar_text(value) -> str:
    """A number of a report record as `values.format_scalar` writes it (the record keeps true and
    false as JSON's, and what JSON has no number for as the text format_scalar gives it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value) if isinstance(value, float) else str(value)
