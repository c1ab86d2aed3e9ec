"""Known deviations, written down with a reason: the expectations file of `--expect FILE`.

    expectations:
      - op: Slice
        versions: [10, 11, 13]          # optional: since-versions
        dtypes: [float, int64]          # optional
        runner: onnxruntime             # optional: runner name, or a provider (cpu, cuda, dml, CUDAExecutionProvider)
        case: Slice-13/negative_step_int_max_end/float/int64   # optional: one case id, or a list
        match: "negative_step_int*max*" # optional: glob on the case name
        when: negative-step-int-max-end # optional: a trait of what the case contains (see below)
        rule: negative-axis             # optional: the rule (or list) by which the text makes the case invalid
        message: "*dim index: * mismatch*"  # optional: a glob (or a list) on what the run said of a failing case
        flaky: true                     # optional: the deviation shows in some runs only (never xpass, never stale)
        modes: [initializer, constant]  # optional: the input modes it deviates in (--mode)
        optimizations: [on]             # optional: the onnxruntime graph optimization levels (--optimizations)
        reason: "onnxruntime reads ends == INT_MAX with a negative step as 'to the start'"  # required
        issue: https://github.com/microsoft/onnxruntime/issues/NNNN                         # optional

A case an entry matches whose outcome fails the run becomes `xfail` (a fail, error, crash, timeout or
fallback; also a lenient case under `--strict-validation`, an unsupported one under
`--fail-on-unsupported` and an imprecise one under `--strict-precision`); a matching case that
passes is `xpass`; an entry that matches no case at all is stale. Under `--strict` both xpass and
stale entries fail the run. A lenient, unsupported or imprecise case that does not fail the run
keeps its outcome, and the entry that matches it is not stale: the runtime still deviates as it
says, only this run does not gate on it.
An entry is stale only where the run chose every case it could match: not for want of the cases
that `--dtype`, `--case` or `--shard` left out (a `case:` entry whose cases were chosen, or all fall
in the run's shard, is judged all the same; `conform merge` judges the shards' entries together),
and not in a run on another runner than its `runner:`, or without the input modes or optimization
levels its `modes:` or `optimizations:` name.

`rule` names the rule by which the op's reference finds a case invalid (`rules` in reference/<op>.py,
and `dtype-not-allowed`): what a runtime that accepts such cases (`lenient`) deviates by, matched
as `when` is, for any seed.

`when` names a trait the op's reference defines (`traits` in reference/<op>.py), so an entry
covers a deviation by its cause, for any seed and any number of examples, where case ids hold only
for one seed and one version of the strategies. A trait says where a runtime may deviate, not that
every such case does: a passing case with the trait stays `pass`, and the entry is stale only
when no case with the trait deviates.

`message` (a glob, or a list of them) matches what the run said of a failing case (its verdict), for a
deviation known by what the runtime answers rather than by what the case holds; a passing case has
no such message and stays `pass`. `flaky: true` is for a deviation that shows in some runs and not
in others (one that depends on the order cases ran in a worker): its cases that pass stay `pass`
and it is never stale. Narrow such an entry with `message`, so it excuses that deviation only.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import io
import itertools
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, YAMLError as RuamelError
from ruamel.yaml.tokens import CommentToken

from .casefile import LineDict, Problems, check_keys, display_path, dtype_list, read_yaml, version_list
from .compare import AMBIGUOUS, IMPRECISE, PASS, XFAIL, XPASS, Verdict
from .errors import CaseFileError, ConformError
from .execute import in_shard
from .model import MODES
from .output import write_atomic
from .report import FAILING, LENIENT, UNSUPPORTED, gate_record, plural, recorded_gate, stale_text
from .report.console import families
from .reference import for_op
from .runners import OPTIMIZATIONS
from .runners.onnxruntime import PROVIDERS, short_provider
from .values import ValueProblem

# What a runtime does against the text whether or not the run fails on it: a `when:` entry that
# matches such a case is not stale (an imprecise case deviates from its budget).
DEVIATES = (*FAILING, LENIENT, UNSUPPORTED, IMPRECISE)
ENTRY_KEYS = ("op", "versions", "dtypes", "runner", "case", "match", "when", "rule", "message", "flaky", "modes",
              "optimizations", "reason", "issue")


@dataclass(frozen=True)
class Expectation:
    """One known deviation, with where it was written."""

    op: str
    reason: str
    source: str  # FILE:LINE, as messages name it
    file: str = ""  # the file as it was given, which a replay from the same folder finds
    versions: tuple[int, ...] | None = None
    dtypes: tuple[str, ...] | None = None
    runner: str | None = None
    case: tuple[str, ...] | None = None
    match: str | None = None
    when: str | None = None
    rule: tuple[str, ...] | None = None
    message: tuple[str, ...] | None = None
    flaky: bool | None = None
    modes: tuple[str, ...] | None = None
    optimizations: tuple[str, ...] | None = None
    issue: str | None = None

    def as_entry(self) -> dict:
        """The entry as a file writes it: its keys in the documented order, a list as a list."""
        written = {key: getattr(self, key) for key in ENTRY_KEYS if getattr(self, key) is not None}
        for key in ("case", "message"):
            if written.get(key) and len(written[key]) == 1:
                written[key] = written[key][0]
        return {key: list(value) if isinstance(value, tuple) else value for key, value in written.items()}

    def stale_text(self) -> str:
        """What a run says of this entry when no case matched it."""
        return stale_text(self.source, self.reason)

    @property
    def by_cause(self) -> bool:
        """Whether it names cases by what they contain (`when`, `rule`): such an entry says where a
        runtime may deviate, so a passing case it matches stays `pass`, not `xpass`."""
        return self.when is not None or self.rule is not None or self.message is not None or bool(self.flaky)

    def for_runner(self, runner_info: dict) -> bool:
        return self.runner is None or _runner_matches(self.runner, runner_info)

    def in_scope(self, ran: set[tuple[str, int, str, str | None]], runner_info: dict) -> bool:
        """Whether this run is about the entry at all: its runner, and an op version it names ran
        in an input mode and at an optimization level it names (`ran` holds each as `variant_of`)."""
        return self.for_runner(runner_info) and any(
            self.about_version(op, version) and self._in_variant(mode, level) for op, version, mode, level in ran)

    def about_version(self, op: str, since_version: int) -> bool:
        return op == self.op and (self.versions is None or since_version in self.versions)

    def _in_variant(self, mode: str, level: str | None) -> bool:
        return (self.modes is None or mode in self.modes) and (self.optimizations is None or level in self.optimizations)

    def covered_by(self, options, ran_ids: set[str]) -> bool:
        """Whether the run chose every case this entry could match, so that matching none makes it
        stale: an entry is not stale for want of the cases that --dtype, --case or --shard left out."""
        if self.case is not None and ran_ids.intersection(self.case):
            return True  # a case it names ran: it matched that case, or can never match it
        if options.dtypes and not (self.dtypes and set(self.dtypes) <= set(options.dtypes)):
            return False
        left_out = set(narrowing(options, dtypes=False))
        if self.case is not None:  # chosen by id, or all in this shard: so each shard judges its own
            left_out -= {"--case"} if set(self.case) <= set(options.case_ids) else set()
            left_out -= {"--shard"} if all(in_shard(case, *options.shard) for case in self.case) else set()
        return not left_out

    def matches(self, result, runner_info: dict) -> bool:
        example = result.example
        return (
            self.about_version(example.op, example.version.since_version)
            and (self.dtypes is None or example.dtype in self.dtypes)
            and (self.case is None or example.id in self.case)
            and (self.match is None or fnmatch.fnmatchcase(example.name, self.match))
            and self.for_runner(runner_info)
            and self._in_variant(*variant_of(result, runner_info)[2:])
            and (self.when is None or for_op(self.op).traits[self.when](example))
            and (self.rule is None or (not result.expected.is_valid and result.expected.invalid.rule in self.rule))
            and (self.message is None or any(fnmatch.fnmatchcase(result.verdict.message or "", m) for m in self.message))
        )


def variant_of(result, runner_info: dict) -> tuple[str, int, str, str | None]:
    """A result's op, since-version, input mode and optimization level (None on a runner without
    levels): a run tags the mode and level only where it ran several, the level otherwise being its runner's."""
    example = result.example
    level = result.extra.get("optimizations", runner_info.get("optimizations"))
    return example.op, example.version.since_version, result.extra.get("mode", "input"), level


def _runner_matches(wanted: str, runner_info: dict) -> bool:
    provider = short_provider(wanted)
    if provider is not None:
        return runner_info.get("provider") == PROVIDERS[provider]
    return wanted == runner_info.get("name") or runner_info.get("name", "").endswith(wanted)


def load(path: Path) -> list[Expectation]:
    """Every entry of an expectations file; CaseFileError (exit 2) listing every problem."""
    problems = Problems()
    shown = display_path(path)
    document = read_yaml(path, problems, "expectations file")
    entries = document.get("expectations") if isinstance(document, LineDict) else None
    if not problems.items and not isinstance(entries, list):
        problems.add(shown, 1, "an expectations file is a mapping with a list under 'expectations'")
    loaded = [_entry(e, shown, problems) for e in entries or []]
    problems.raise_if_any()
    return [dataclasses.replace(e, file=str(path)) for e in loaded if e is not None]


def _entry(entry, path: str, problems: Problems) -> Expectation | None:
    if not isinstance(entry, LineDict):
        problems.add(path, None, f"each expectation is a mapping, not {entry!r}")
        return None
    if not check_keys(entry, ENTRY_KEYS, path, problems):
        return None
    reason = entry.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        problems.add(path, entry.line, "every expectation needs a 'reason': why the runtime deviates, in a sentence")
        return None
    if not isinstance(entry.get("op"), str):
        problems.add(path, entry.line, "every expectation needs an 'op'")
        return None
    # An entry that can never match (an op, version or dtype misspelt) would be silently dead: it
    # is not even stale, as no run covers what it names.
    try:
        op = for_op(entry["op"]).op
        chosen_versions, chosen_dtypes = version_list(entry.get("versions"), op), dtype_list(entry.get("dtypes"))
        modes = _choice_list(entry, "modes", MODES, "the input modes of --mode")
        optimizations = _choice_list(entry, "optimizations", OPTIMIZATIONS, "the levels of --optimizations")
        _check_text(entry)
        _check_trait(op, entry.get("when"))
        rules = _choice_list(entry, "rule", for_op(op).all_rules, f"the rules of {op}'s reference")
    except (ConformError, ValueProblem) as error:
        problems.add(path, entry.line, getattr(error, "message", str(error)))
        return None
    return Expectation(
        op=op, reason=reason.strip(), source=f"{path}:{entry.line}", versions=chosen_versions, dtypes=chosen_dtypes,
        runner=entry.get("runner"), case=_text_list(entry, "case"), match=entry.get("match"), when=entry.get("when"),
        rule=rules, message=_text_list(entry, "message"), flaky=entry.get("flaky") or None, modes=modes,
        optimizations=optimizations, issue=entry.get("issue"),
    )


def _choice_list(entry: LineDict, key: str, allowed: tuple[str, ...], what: str) -> tuple[str, ...] | None:
    """`modes:`, `optimizations:` or `rule:`: one of the `allowed` values or a list of them; None when absent."""
    value = entry.get(key)
    if value in (None, "all"):  # as `versions:` and `dtypes:` take it
        return None
    # A boolean is never a mode or a rule: read as a level everywhere, it is refused there all the same.
    values = [_yaml_level(v) for v in (value if isinstance(value, list) else [value])]
    wrong = [v for v in values if v not in allowed]
    if wrong or not values:
        raise ValueProblem(f"'{key}' takes {what} ({', '.join(allowed)}), one or a list, not {value!r}")
    return tuple(values)


def _yaml_level(value):
    """YAML 1.1 reads a bare on or off as a boolean: `optimizations: [on]` means the level."""
    return "on" if value is True else "off" if value is False else value


def _check_text(entry: LineDict) -> None:
    for key in ("runner", "match", "when", "issue"):
        if key in entry and not isinstance(entry[key], str):
            raise ValueProblem(f"'{key}' is text, not {entry[key]!r}")
    if not all(isinstance(m, str) for m in _text_list(entry, "message") or ()):
        raise ValueProblem(f"'message' is a glob or a list of them, not {entry['message']!r}")
    if "flaky" in entry and not isinstance(entry["flaky"], bool):
        raise ValueProblem(f"'flaky' is true or false, not {entry['flaky']!r}")
    if not all(isinstance(c, str) for c in _text_list(entry, "case") or ()):
        raise ValueProblem(f"'case' is a case id or a list of them, not {entry['case']!r}")


def _text_list(entry: LineDict, key: str) -> tuple | None:
    """A key that takes one value or a list of them (`case:`, `message:`), as a tuple; None when absent."""
    values = entry.get(key)
    if values is None:
        return None
    return tuple(values) if isinstance(values, list) else (values,)


def _check_trait(op: str, trait: str | None) -> None:
    traits = for_op(op).traits
    if trait is not None and trait not in traits:
        known = ", ".join(sorted(traits)) or "none"
        raise ValueProblem(f"'when: {trait}' is not a trait of {op} (traits of {op}: {known})")


def narrowing(options, dtypes: bool = True) -> list[str]:
    """The options by which a run chose part of its cases (each as its flag): --dtype, --case and
    --shard. The sources of cases (--no-yaml, --no-hypothesis, --only-cases, --examples, --seed)
    say what the run's cases are, which its expectations file is written for."""
    given = [(dtypes and bool(options.dtypes), "--dtype"), (bool(options.case_ids), "--case"), (options.shard[1] > 1, "--shard")]
    return [flag for narrows, flag in given if narrows]


def stale_among(unmatched: list[Expectation], options, ran_ids: set[str]) -> list[Expectation]:
    """The entries of `unmatched` (see `apply`) that the run of `options`, which ran the cases
    `ran_ids`, chose every case of."""
    return [entry for entry in unmatched if entry.covered_by(options, ran_ids)]


def judge_unmatched(unmatched: list[Expectation], options, ran_ids: set[str]) -> tuple[list[Expectation], list[Expectation]]:
    """`unmatched` (see `apply`) as the stale entries and those the run's options left unjudged."""
    stale = stale_among(unmatched, options, ran_ids)
    return stale, [entry for entry in unmatched if entry not in stale]


def not_judged_lines(expectations: list[Expectation], unjudged: list[Expectation], ran: set, runner_info: dict,
                     options) -> list[str]:
    """The lines that tell of the entries a run did not judge: for want of cases its options left
    out, for another runner, or for input modes or optimization levels it did not have (`ran`
    holds the run's variants, as `ran_variants`)."""
    lines = (_unjudged_text(unjudged, options), _other_runners_text(expectations, runner_info),
             _other_variants_text(expectations, ran, runner_info))
    return [line for line in lines if line]


def _unjudged_text(unjudged: list[Expectation], options) -> str | None:
    """The line for the entries that matched no case where the run left out cases they may match
    (neither stale nor quietly dead), or None when there are none."""
    if not unjudged:
        return None
    merged = "; `conform merge` of every shard's report judges them" if options.shard[1] > 1 else ""
    count = len(unjudged)
    return (f"{count} {plural('expectation', count)} matched no case and {'was' if count == 1 else 'were'} not judged stale: "
            f"{', '.join(narrowing(options))} left out cases they may match{merged}")


def _other_runners_text(expectations: list[Expectation], runner_info: dict) -> str | None:
    """The line naming the runners of the entries that are not about this run's, or None: a
    misspelt `runner:` would otherwise leave its entry silently matching nothing, and never stale."""
    others = [e.runner for e in expectations if not e.for_runner(runner_info)]
    if not others:
        return None
    return f"{len(others)} {plural('expectation', len(others))} for other runners, not judged here: {', '.join(sorted(set(others)))}"


def _other_variants_text(expectations: list[Expectation], ran: set, runner_info: dict) -> str | None:
    """The line naming what would bring into a run the entries about its runner and an op version it
    ran, whose input modes or optimization levels it did not have, or None: such an entry is neither
    matched nor stale, and an `optimizations:` entry on a runner without levels never can be."""
    versions_ran = {(op, version) for op, version, _, _ in ran}
    needs = [_variant_needs(entry, ran) for entry in expectations
             if entry.for_runner(runner_info) and not entry.in_scope(ran, runner_info)
             and any(entry.about_version(op, version) for op, version in versions_ran)]
    if not needs:
        return None
    return (f"{len(needs)} {plural('expectation', len(needs))} for input modes or optimization levels this run did not have, "
            f"not judged here: {', '.join(sorted(set(needs)))}")


def _variant_needs(entry: Expectation, ran: set) -> str:
    """The options of a run that has the variants `entry` names: the flags of the keys whose values
    the run had none of."""
    modes, levels = {mode for *_, mode, _ in ran}, {level for *_, level in ran}
    if entry.optimizations is not None and levels == {None}:
        return "optimizations (this runner has no levels)"
    keys = [(flag, values, every) for flag, values, every, had in
            (("--mode", entry.modes, "all", modes), ("--optimizations", entry.optimizations, "both", levels))
            if values is not None and not had.intersection(values)]
    return " ".join(f"{flag} {values[0] if len(values) == 1 else every}" for flag, values, every in keys)


def failing_outcomes(options) -> frozenset[str]:
    """The outcomes that fail a run of `options`, xpass aside: what an entry turns into xfail."""
    return recorded_gate({"options": gate_record(options.strict_validation, options.fail_on_unsupported, strict=False,
                                                 strict_precision=options.strict_precision)})[0]


def apply(results: list, expectations: list[Expectation], runner_info: dict, options,
          strict: bool = False) -> tuple[list, list[Expectation]]:
    """Results with xfail/xpass outcomes where an entry matches, and the entries about this run that
    matched no case as they say (stale, if the run chose every case they could match: `stale_among`).
    An xfail's or xpass's replay gives the file (and an xpass `--strict`, when the run has it): without
    them an xfail replays as a fail, and an xpass that failed a strict run replays as a pass."""
    failing = failing_outcomes(options)
    used: set[int] = set()
    applied = []
    for result in results:
        judged, index = judge_result(result, expectations, runner_info, failing, strict)
        applied.append(judged)
        if index is not None:
            used.add(index)
    return applied, unmatched_entries(expectations, used, ran_variants(results, runner_info), runner_info)


def judging(expectations: list[Expectation], runner_info: dict, failing: frozenset[str], strict: bool = False):
    """`judge_result` of the run's expectations, one result at a time (what a run's Ledger applies)."""
    return lambda result: judge_result(result, expectations, runner_info, failing, strict)


def named_ids(expectations: list[Expectation]) -> set[str]:
    """The case ids the `case:` entries name: of these, a run notes which ran (`Expectation.covered_by`)."""
    return {case for entry in expectations if entry.case for case in entry.case}


def judge_result(result, expectations: list[Expectation], runner_info: dict, failing: frozenset[str],
                 strict: bool = False) -> tuple:
    """`result` as `apply` leaves it (`failing`: the outcomes that fail the run, as `failing_outcomes`),
    and the index of the entry it counts as a match of (None if none): the first entry that
    matches it, unless that entry names cases by cause and the result does not deviate."""
    index = _first_match(result, expectations, runner_info)
    if index is None:
        return result, None
    entry = expectations[index]
    used = index if not entry.by_cause or result.outcome in DEVIATES else None
    note = f"{entry.reason} ({entry.source}{', ' + entry.issue if entry.issue else ''})"
    replay = f"{result.replay} --expect {shlex.quote(entry.file)}"
    if result.outcome in failing:
        verdict = Verdict(XFAIL, f"expected deviation: {note}; {result.verdict.message}", result.verdict.mismatches,
                          ulp=result.verdict.ulp, grade=result.verdict.grade)
    elif result.outcome == PASS and not entry.by_cause:
        verdict = Verdict(XPASS, f"passes, but is listed as a known deviation: {note}", ulp=result.verdict.ulp,
                          grade=result.verdict.grade)
        replay += " --strict" if strict else ""
    else:
        return result, used
    return dataclasses.replace(result, verdict=verdict, replay=replay), used


def unmatched_entries(expectations: list[Expectation], used: set[int], ran: set, runner_info: dict) -> list[Expectation]:
    """The entries about a run that matched no case as they say: those of the run's runner and
    of a variant it ran (`ran`, as `ran_variants`) whose index is not among `used`."""
    return [e for i, e in enumerate(expectations) if i not in used and not e.flaky and e.in_scope(ran, runner_info)]


def ran_variants(results: list, runner_info: dict) -> set[tuple[str, int, str, str | None]]:
    """The op versions, input modes and optimization levels of a run's results, each as `variant_of`."""
    return {variant_of(result, runner_info) for result in results}


def _first_match(result, expectations: list[Expectation], runner_info: dict) -> int | None:
    """The index of the entry that judges `result`: the first that matches it, as files are read."""
    return next((i for i, e in enumerate(expectations) if e.matches(result, runner_info)), None)


def read_as_entries(options) -> frozenset[str]:
    """The outcomes whose results `write_file` reads only as the entry each matched (a run keeps no
    more of them: `WrittenFrom.entries_unkept`): no family is written of them, as they do not fail
    the run, and no entry's check reads their values."""
    return frozenset({XFAIL, UNSUPPORTED, AMBIGUOUS}) - failing_outcomes(options)


@dataclass(frozen=True)
class WrittenFrom:
    """What `write_file` reads of a run: the results it keeps in memory (slim: all of the cases a
    `case:` entry names, and of the rest those that are neither passes nor of an outcome
    `read_as_entries` gives), the passing results of an op version (op, since-version) read back
    as a family of it asks, the (mode, level) variants each op version's results not in memory
    ran in, and the (entry index, outcome) pairs of the results read as entries."""

    kept: list
    passing_of: Callable[[str, int], Iterable] = lambda op, since: ()
    variants_of: Callable[[str, int], set] = lambda op, since: set()
    entries_unkept: frozenset[tuple[int, str]] = frozenset()


def write_file(results: "list | WrittenFrom", expectations: list[Expectation], stale: list[Expectation], runner_info: dict,
               path: Path, options) -> str:
    """Write the run's deviations as an expectations file that makes the same run pass, and
    return the line that tells what it holds. `results` are as `apply` left them.

    What fails the run with no entry matching it is added one entry a family (as the console's
    panels group results), matched by the trait or rule that explains all its members, so the file
    holds for other seeds too (see `_family_entry`). The entries of the run's own file (`--expect`)
    are kept as written, reasons and all, but for what the run shows fixed: a stale entry, the
    cases of a `case:` entry that now pass, an entry whose every case passes. That file is edited
    in YAML's round-trip mode, so its comments, flow lists and key order stay as a person wrote them."""
    run = results if isinstance(results, WrittenFrom) else WrittenFrom(list(results))
    results = run.kept
    by_case: dict[str, list] = {}  # each case's results, one a variant it ran in
    for result in results:
        by_case.setdefault(result.example.id, []).append(result)
    kept, fixed, taken_out = _kept_entries(results, run.entries_unkept, by_case, expectations, stale, runner_info, options)
    added = _observed_entries(run, runner_info, options)
    text = _as_written(expectations, kept, added)
    layout_lost = text is None and bool(expectations)
    if text is None:
        text = _written_afresh([entry.as_entry() for _, entry, _ in kept], added)
    write_atomic(path, text, "the expectations file")
    count = len(kept) + len(added)
    told = f"{count} {plural('deviation', count)} written to {path}"
    if expectations:
        told += (f": {len(kept)} {plural('entry', len(kept))} kept from {expectations[0].file}, {len(added)} added as observed, "
                 f"{len(stale)} stale and {fixed} fixed left out")
    if taken_out:
        told += f", {taken_out} passing {plural('case', taken_out)} taken out of 'case:' lists"
    still_passing = sum(1 for _, _, passes in kept if passes)
    if still_passing:  # a `match:` entry of cases some of which now pass: which to name is the writer's call
        told += (f"; {still_passing} kept {plural('entry', still_passing)} still {'matches' if still_passing == 1 else 'match'} "
                 "cases that pass (xpass): narrow them by hand")
    if layout_lost:
        told += f"; {expectations[0].file} was written afresh, without its comments and layout: YAML's round-trip mode could not read it"
    return told + _unexplained_text(added)


OBSERVED_NOTE = "replace each 'observed' reason with why the runtime deviates"


@dataclass(frozen=True)
class Observed:
    """An entry `--write-expect` adds for a family of deviations no entry matched (or several,
    merged): the entry, what its comment says of them, and, where no trait or rule explains
    them, the families' names."""

    entry: dict
    outcome: str
    members: int
    versions: tuple[str, ...]  # the op versions' labels, Slice-13
    why: str
    unexplained: tuple[str, ...] = ()  # the families no trait or rule explains

    @property
    def comment(self) -> str:
        versions = ", ".join(dict.fromkeys(self.versions))
        return f"{self.members} {self.outcome} {plural('result', self.members)} of {versions}: {self.why}"


def _unexplained_text(added: list[Observed]) -> str:
    """The end of the run's last line: the families no trait explains, whose entries are scoped by
    op, version, dtype and case (see `_case_scope`): they hold for other seeds only while the cause
    stays in that scope, and may match passing cases (xpass)."""
    names = [name for observed in added for name in observed.unexplained]
    if not names:
        return ""
    return (f"; no trait explains {len(names)} {plural('family', len(names))} (written by scope, with the minimal case "
            f"in {'its entry' if len(names) == 1 else 'their entries'}' comment): {', '.join(names)}")


def _observed_entries(run: WrittenFrom, runner_info: dict, options) -> list[Observed]:
    """An entry for each family of results that fail the run with no entry matching them, merged
    where entries differ in versions and dtypes only (see `_merged`)."""
    failing = failing_outcomes(options)
    runner = short_provider(runner_info.get("provider", "")) or runner_info.get("name")
    unmatched = [result for result in run.kept if result.outcome in failing]
    return _merged([entry for family in families(unmatched) for entry in _family_entries(family, run, runner, runner_info)])


def _family_entries(family: list, run: WrittenFrom, runner: str | None, runner_info: dict) -> list[Observed]:
    """A family as one entry (`_family_entry`); a family of hypothesis cases that fail for several
    causes (console families group a version's by outcome) as one entry a trait, the trait that
    the most of those left have first, and the members no trait explains as one entry more."""
    entry = _family_entry(family, run, runner, runner_info)
    if not entry.unexplained:
        return [entry]
    traits = for_op(family[0].example.op).traits.values()
    held = [[r for r in family if _has_trait(trait, r.example)] for trait in traits]
    most = max(held, key=len, default=[])
    if not most:
        return [entry]
    rest = [r for r in family if r not in most]
    return [_family_entry(most, run, runner, runner_info)] + _family_entries(rest, run, runner, runner_info)


def _family_entry(family: list, run: WrittenFrom, runner: str | None, runner_info: dict) -> Observed:
    """One family as one entry, scoped by op, version, dtypes and variant: matched by the rule all
    its members break, else by the op's trait that holds for all of them (of those, the one fewest
    passing cases in scope have), else by its case (a case file's, in all its bindings: `match:`
    its name where no passing case of it is in scope, else `case:` its ids), else, for hypothesis
    cases, by `match: hypothesis-*` in its scope, which holds for any seed, where ids would not."""
    first = family[0]
    example = first.example
    scope = {"op": example.op, "versions": [example.version.since_version],
             "dtypes": sorted({r.example.dtype for r in family}), "runner": runner}
    variant = _family_variant(family, run, runner_info)
    of_version = itertools.chain(run.kept, run.passing_of(example.op, example.version.since_version))
    in_scope = [r for r in of_version if r.example.op == example.op and r.example.version == example.version
                and r.example.dtype in scope["dtypes"] and _in_variant_keys(r, variant, runner_info)]
    passing = [r for r in in_scope if r.outcome == PASS]
    cause, comment = _cause(family, passing)
    unexplained: tuple[str, ...] = ()
    if cause is None:
        cause, comment = _case_scope(family, passing)
        unexplained = () if first.outcome == UNSUPPORTED else (_family_name(family),)
    if "when" in cause or "rule" in cause:
        # A cause holds in whatever dtype a case has it (Div's unused zero divisor failed in int16 at
        # one seed only), and a passing case with it stays pass: scoped by dtype, such an entry
        # would not hold for other seeds.
        scope["dtypes"] = None
    entry = {key: value for key, value in (scope | cause | variant).items() if value is not None}
    entry["reason"] = f"observed: {first.verdict.message[:200]}"
    return Observed(entry, first.outcome, len(family), (example.version.label,), comment, unexplained)


def _cause(family: list, passing: list) -> tuple[dict | None, str]:
    """The `rule:` every member breaks or the `when:` trait every member has, and what the entry's
    comment says of it; (None, '') where none does."""
    rules = {None if r.expected.is_valid else r.expected.invalid.rule for r in family}
    if None not in rules:
        return {"rule": sorted(rules)}, f"the {plural('rule', len(rules))} of the text they break"
    traits = for_op(family[0].example.op).traits
    explaining = [name for name, trait in traits.items() if all(_has_trait(trait, r.example) for r in family)]
    if not explaining:
        return None, ""
    also = {name: sum(1 for r in passing if _has_trait(traits[name], r.example)) for name in explaining}
    best = min(explaining, key=also.get)  # the narrowest: dict order breaks ties
    passes = " (some passing cases have it too: they stay pass)" if also[best] else ""
    return {"when": best}, f"all have the trait '{best}'{passes}"


def _has_trait(trait, example) -> bool:
    """Whether `example` has a trait: one written for some types may not read every example."""
    try:
        return bool(trait(example))
    except Exception:  # noqa: BLE001 - a trait that cannot read an example does not describe it
        return False


def _case_scope(family: list, passing: list) -> tuple[dict, str]:
    """The keys that name a family no trait explains, and what its comment says: a type binding
    the runtime does not support by its dtype, a case file's case by name or ids, a version's
    hypothesis cases by `match: hypothesis-*` and the entry's scope (never by ids, which hold for
    one seed only), with the minimal case hypothesis shrank them to."""
    first = family[0]
    if first.outcome == UNSUPPORTED:
        return {}, f"the runtime does not support {first.example.binding}"
    no_trait = f"no trait of {first.example.op} explains them"
    name = first.example.name
    if first.example.source == "hypothesis":
        return {"match": "hypothesis-*"}, f"{no_trait}; {_minimal_text(family)}; add a trait, or narrow this entry by hand"
    if any(r.example.name == name for r in passing):  # some of its bindings pass: name those that fail
        return {"case": sorted({r.example.id for r in family})}, f"{no_trait}; the case {name} in the bindings that fail"
    return {"match": _glob_escaped(name)}, f"{no_trait}; the case {name} in every binding of these dtypes"


def _minimal_text(family: list) -> str:
    """The minimal case hypothesis shrank a family's failures to, as its file or its replay."""
    for result in family:
        minimal = result.extra.get("minimal") or {}
        if "file" in minimal:
            return f"minimal case: {minimal['file']}"
        if "replay" in minimal:
            return f"minimal case: {minimal['replay']}"
    return f"no minimal case (run with a larger --shrink); first case: {family[0].example.id}"


def _glob_escaped(name: str) -> str:
    """`name` as a `match:` glob that matches it alone."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _family_name(family: list) -> str:
    first = family[0]
    kind = "hypothesis cases" if first.example.source == "hypothesis" else first.example.name
    return f"{first.example.version.label} {kind} ({first.outcome})"


def _family_variant(family: list, run: WrittenFrom, runner_info: dict) -> dict:
    """The `modes:`/`optimizations:` keys that scope a family to the variants it failed in, among
    those its op version ran in (none where it failed in every one)."""
    version = family[0].example.version
    ran = [variant_of(r, runner_info)[2:] for r in run.kept if r.example.version == version]
    ran += list(run.variants_of(version.op, version.since_version))
    bad = [variant_of(r, runner_info)[2:] for r in family]
    keys = _scope({m for m, _ in bad}, {lv for _, lv in bad}, {m for m, _ in ran}, {lv for _, lv in ran})
    return {"modes": keys.get("modes"), "optimizations": keys.get("optimizations")}


def _in_variant_keys(result, variant: dict, runner_info: dict) -> bool:
    mode, level = variant_of(result, runner_info)[2:]
    return (variant["modes"] is None or mode in variant["modes"]) and (variant["optimizations"] is None or level in variant["optimizations"])


def _merged(observed: list[Observed]) -> list[Observed]:
    """The entries that differ only in their versions as one (those matched by cause have no dtypes)."""
    merged: dict[tuple, Observed] = {}
    for item in observed:
        entry = item.entry
        ignored = ("versions", "reason")
        key = tuple((k, str(v)) for k, v in entry.items() if k not in ignored)
        if key not in merged:
            merged[key] = item
            continue
        before = merged[key]
        joined = dict(before.entry)
        joined["versions"] = sorted(set(before.entry["versions"]) | set(entry["versions"]))
        if "dtypes" in entry:
            joined["dtypes"] = sorted(set(before.entry["dtypes"]) | set(entry["dtypes"]))
        merged[key] = dataclasses.replace(before, entry=joined, members=before.members + item.members,
                                          versions=before.versions + item.versions,
                                          unexplained=before.unexplained + item.unexplained)
    return [dataclasses.replace(item, entry=_in_key_order(item.entry)) for item in merged.values()]


def _in_key_order(entry: dict) -> dict:
    return {key: entry[key] for key in ENTRY_KEYS if key in entry}


def _written_afresh(kept: list[dict], added: list[Observed]) -> str:
    """A new expectations file: the kept entries, then the added ones, each under its comment."""
    document = CommentedMap(expectations=CommentedSeq())
    document.yaml_set_start_comment(f"Known deviations; {OBSERVED_NOTE}.")
    for entry in kept:
        document["expectations"].append(_flow_lists(entry))
    _append_observed(document["expectations"], added, indent=0, note=None)
    return _dumped(document, sequence=2, offset=0)


def _as_written(expectations: list[Expectation], kept: list[tuple[int, Expectation, bool]], added: list[Observed]) -> str | None:
    """The run's own file (`--expect`) brought up to date in YAML's round-trip mode: the entries
    kept as they were written, comments, flow style and key order and all; an entry the run
    changed edited in place; the comments before and after an entry dropped kept, before whatever
    follows it (they may head a group). None without such a file, or where it cannot be read so."""
    if not expectations:
        return None
    try:
        with open(expectations[0].file, encoding="utf-8", newline="") as stream:  # its own line ends
            original = stream.read()
        document = _round_trip().load(original.replace("\r\n", "\n"))
        entries = document["expectations"]
    except (OSError, UnicodeDecodeError, RuamelError, KeyError, TypeError):
        return None
    if not isinstance(entries, CommentedSeq):
        return None
    column = _dash_column(entries)  # read before the first item may go
    kept_at = {index: entry for index, entry, _ in kept}
    for index in reversed(range(len(entries))):
        if index not in kept_at:
            _drop(entries, index, column)
        elif kept_at[index] is not expectations[index]:
            _edit(entries[index], kept_at[index].as_entry())
    if not entries.fa.flow_style():
        _append_observed(entries, added, column, f"added by --write-expect: {OBSERVED_NOTE}")
    else:  # a flow list takes no comments between its items
        entries.extend(_flow_lists(observed.entry) for observed in added)
    text = _dumped(document, sequence=column + 2, offset=column)
    return text.replace("\n", "\r\n") if "\r\n" in original else text


def _round_trip() -> YAML:
    reader = YAML()  # round-trip: comments, flow style, key order and quotes as written
    reader.preserve_quotes = True
    reader.width = 4096  # a long reason stays on one line, not folded where ruamel likes
    return reader


def _dumped(document, sequence: int, offset: int) -> str:
    writer = _round_trip()
    writer.indent(mapping=2, sequence=sequence, offset=offset)
    stream = io.StringIO()
    writer.dump(document, stream)
    return stream.getvalue()


def _dash_column(entries) -> int:
    """Where the dash of the list's items stands, as the file wrote it (an item's own column less
    the dash and its space)."""
    try:
        return max(entries.lc.item(0)[1] - 2, 0)
    except (AttributeError, IndexError, KeyError, TypeError):
        return 0


def _drop(entries, index: int, column: int) -> None:
    """Take out item `index`, moving the comments it carries (those before it, and those after
    its last line, which ruamel keeps on its last key) before the item that follows it."""
    carried = _comment_lines(_before(entries, index)) + _trailing_lines(entries[index])
    del entries[index]
    if carried and index < len(entries):
        _set_before(entries, index, carried + _comment_lines(_before(entries, index)), column)


def _before(entries, index: int) -> list:
    slot = entries.ca.items.get(index)
    return (slot[1] or []) if slot and len(slot) > 1 else []


def _set_before(entries, index: int, lines: list[str], column: int) -> None:
    slot = entries.ca.items.setdefault(index, [None, None, None, None])
    slot[1] = [CommentToken(f"{line}\n", CommentMark(column)) for line in lines]


def _comment_lines(tokens: list) -> list[str]:
    return [line.strip() for token in tokens for line in token.value.splitlines() if line.strip().startswith("#")]


def _trailing_lines(item) -> list[str]:
    """The comment lines after a block mapping item's last line (not the comment at its end)."""
    if not isinstance(item, CommentedMap) or item.fa.flow_style() or not item:
        return []
    last = list(item)[-1]
    slot = item.ca.items.get(last)
    token = slot[2] if slot and len(slot) > 2 else None
    if token is None:
        return []
    lines = token.value.splitlines()
    own_line = not token.value.startswith("\n") and token.column > item.lc.key(last)[1]
    return [line.strip() for line in lines[1 if own_line else 0:] if line.strip().startswith("#")]


def _edit(item, entry: dict) -> None:
    """Item rewritten to `entry` in place: keys, comments and style it keeps stay as they were."""
    for key in [key for key in item if key not in entry]:
        del item[key]
    for key, value in entry.items():
        if item.get(key) != value:
            item[key] = value


def _append_observed(entries, added: list[Observed], indent: int, note: str | None) -> None:
    for position, observed in enumerate(added):
        entries.append(_flow_lists(observed.entry))
        comment = observed.comment if position or note is None else f"{note}\n{observed.comment}"
        entries.yaml_set_comment_before_after_key(len(entries) - 1, before=comment, indent=indent)


def _flow_lists(entry: dict) -> CommentedMap:
    """An entry as a block mapping whose lists are written in flow style, `versions: [10, 13]`."""
    mapping = CommentedMap()
    for key, value in entry.items():
        if isinstance(value, list):
            value = CommentedSeq(value)
            value.fa.set_flow_style()
        mapping[key] = value
    return mapping


def _kept_entries(results: list, entries_unkept: frozenset[tuple[int, str]], by_case: dict[str, list],
                  expectations: list[Expectation], stale: list[Expectation], runner_info: dict,
                  options) -> tuple[list[tuple[int, Expectation, bool]], int, int]:
    """The entries to keep, each with its index in `expectations` (the same object unless the run
    changed it) and whether it still matches a passing case (xpass); how many the run shows fixed;
    how many cases it took out of `case:` lists that it keeps. `entries_unkept`: (index, outcome)
    of results not among `results` (of cases no `case:` entry names, so no id of theirs is read)."""
    passing: dict[int, set[str]] = {}
    deviating: dict[int, set[str]] = {index: set() for index, outcome in entries_unkept if outcome in (XFAIL, *DEVIATES)}
    for result in results:
        if result.outcome in (XPASS, XFAIL, *DEVIATES):
            judged = passing if result.outcome == XPASS else deviating
            judged.setdefault(_first_match(result, expectations, runner_info), set()).add(result.example.id)
    ran_ids = set(by_case)
    kept, fixed, taken_out = [], 0, 0
    for index, entry in enumerate(expectations):
        passes, deviates = passing.get(index, set()), deviating.get(index, set())
        if entry in stale:
            continue
        if entry.case is not None:
            entry, dropped = _without_fixed_cases(entry, deviates, by_case, runner_info)
            taken_out += dropped if entry.case else 0
            passes = passes & deviates  # cases that pass in some variants and deviate in others
        if entry.case == () or (entry.case is None and passes and index not in deviating and entry.covered_by(options, ran_ids)):
            fixed += 1
            continue
        kept.append((index, entry, bool(passes)))
    return kept, fixed, taken_out


def _without_fixed_cases(entry: Expectation, deviates: set[str], by_case: dict[str, list],
                         runner_info: dict) -> tuple[Expectation, int]:
    """A `case:` entry without the cases the run judged by it that did not deviate under it
    (passing, or matched by an entry before it), and how many those were."""
    judged = {case for case in entry.case if any(entry.matches(r, runner_info) for r in by_case.get(case, ()))}
    cases = tuple(case for case in entry.case if case in deviates or case not in judged)
    if len(cases) == len(entry.case):
        return entry, 0
    return dataclasses.replace(entry, case=cases), len(entry.case) - len(cases)


def _scope(modes: set, levels: set, ran_modes: set, ran_levels: set) -> dict:
    """The keys an entry needs to match `modes` x `levels` among the variants the run had: a key
    only where it leaves some out (so none for a runner without levels, whose one level is None)."""
    keys = {}
    if modes != ran_modes:
        keys["modes"] = [mode for mode in MODES if mode in modes]
    if levels != ran_levels:
        keys["optimizations"] = [level for level in OPTIMIZATIONS if level in levels]
    return keys


__all__ = ["Expectation", "load", "apply", "judge_result", "unmatched_entries", "ran_variants", "stale_among", "judge_unmatched", "not_judged_lines", "narrowing", "write_file", "WrittenFrom", "read_as_entries", "XFAIL", "XPASS", "CaseFileError"]
