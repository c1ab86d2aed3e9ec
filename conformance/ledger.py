"""What a run keeps of its results as they are judged: counts, the results a person must read, and
the records of the rest on disk.

A run of every op judges hundreds of thousands of cases, and most of them pass. The ledger hears
each result as it comes (`add`), applies the expectations file to it, and keeps in memory:
- per op x version x dtype, how many results had each outcome (the summary and the console's table);
- `tallies`: the outcomes a person need not read one by one (COUNTED: pass, ambiguous, xfail,
  unsupported), counted per op x version x dtype, outcome, variant and what tells them
  apart (the reading followed, the refusal, the expectation matched);
- the results that are read one by one: every failing outcome, xpass, lenient, imprecise and
  skipped (the JSON report's records), the first WHOLE_PER_FAMILY of each family whole, the others'
  records written to a spool file as they are judged and only their bare result kept (a run of
  thousands of failures keeps their names, not their arrays); and the unsupported ones: the first of each type
  binding whole, the next few without their inputs, expected values and outputs where the
  console names them (`--verbose`), and the rest counted (kept bare only in a run of several
  input modes or levels, whose hints tell whether they are confined to one); the hints fold
  every refusal as it comes; but where the caller gives `keeps` (a diff, which neither shrinks
  nor draws failures but its disagreements), every record goes to the spool as it is judged, and
  of each result only what `keeps` chooses stays;
- the precision profile, folded as results come;
- the op versions and variants that ran, the entries matched, and the ids that ran among those a
  `case:` entry names (what judges an entry stale).

The expectations file is applied through the `judge` it is given (expectations.judge_result), so
that this module stays below the expectations' and the reports'.

With `report_every_case` (`--report-passes`) every counted result's whole record is also written, as
it comes, to a spool file beside the report, and the report holds every case. With `keep_all`
(`--write-expect`, which weighs passing cases against the traits that explain failures) every result
is kept, without its expected values and outputs, but for cases no `case:` entry names: their passes
go to a temporary file and are read back an op version at a time, and of the outcomes the writer
reads only as the entry they matched (`traced`: xfail, and the unsupported and ambiguous that do not
fail the run) only that entry's index and the variant they ran in stay. A run's failing results (FAILING) that no
expectation excuses are judged only once hypothesis has shrunk them (`settle`, `finish`).
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .compare import AMBIGUOUS, PASS, UNSUPPORTED, XFAIL
from .precision import ProfileFold
from .reference.expected import Expected
from .report import FAILING, MAX_NAMED
from .report.refusals import RefusalFold

COUNTED = (PASS, AMBIGUOUS, XFAIL, UNSUPPORTED)
# Of each op version's unsupported cases in one type binding and variant, how many stay in memory:
# the console's panel shows the first whole and names MAX_NAMED more.
WHOLE_PER_BINDING, KEPT_PER_BINDING = 1, MAX_NAMED + 1
# Of each family of results read one by one (an op version's hypothesis cases, or one case file
# case, of one outcome: the console's and the HTML page's families), how many stay whole in memory:
# the panels show the first whole; the others' records go to disk as they are judged, and what
# stays is the bare result the panels name and count.
WHOLE_PER_FAMILY = 2
MESSAGE_CHARACTERS = 200  # of a refusal, what a tally row keeps


@dataclasses.dataclass
class _Facts:
    """What the hints and the last line read of a run beyond its kept results."""

    total: int = 0
    modes: set = dataclasses.field(default_factory=set)
    shapes: set = dataclasses.field(default_factory=set)
    variants_by_case: dict = dataclasses.field(default_factory=dict)  # id -> {variant: outcome}, non-pass only
    variants: set = dataclasses.field(default_factory=set)  # every variant label that ran


class Ledger:
    """A run's results as it keeps them (see the module's docstring)."""

    def __init__(self, judge: Callable = lambda result: (result, None), variant: Callable | None = None,
                 named_ids: set[str] = frozenset(), *, report_every_case: bool = False, keep_all: bool = False,
                 spool_dir: Path | None = None, record: Callable | None = None, several_variants: bool = True,
                 names_unsupported: bool = True, traced: frozenset[str] = frozenset(),
                 keeps: Callable | None = None) -> None:
        """`judge(result)`: the result as the expectations file leaves it, and the index of the entry
        it counts as a match of (expectations.judge_result); `variant(result)`: its op, version,
        mode and level (expectations.variant_of); `named_ids`: the ids `case:` entries name;
        `several_variants`: whether cases may run in several input modes or optimization levels
        (only then are a case's outcomes in each, and every unsupported case's mode, kept);
        `names_unsupported`: whether the console will name a binding's unsupported cases past
        the first (`--verbose`); `traced`: with `keep_all`, the outcomes kept as the entry they
        matched alone (expectations.read_as_entries); `keeps(result)`: with `report_every_case`,
        what of each result to keep in memory (None: nothing), every result judged at once, none
        waiting to be shrunk, and every record spooled (a diff's: differential.DiffKeeper)."""
        self._judge_one = judge
        self._variant_of = variant or _own_variant
        self._keep_all = keep_all
        self._record = record
        self._keeps = keeps
        self._sequence = 0
        self._waiting: list[tuple[int, object]] = []  # failing results, judged at `finish`
        self._kept: list[tuple[int, object]] = []
        self._everything: list[tuple[int, object]] = []  # keep_all: every result, slim, but those elsewhere
        self._traced = traced
        self._elsewhere: dict[tuple, set] = {}  # keep_all: (op, since-version) -> variants of results not in memory
        self.entries_unkept: set[tuple[int, str]] = set()  # keep_all: (entry index, outcome) of traced results
        self._whole_unsupported: Counter = Counter()
        self._several_variants = several_variants
        self._named_unsupported = KEPT_PER_BINDING if names_unsupported else WHOLE_PER_BINDING
        self.refusals = RefusalFold()
        self.counts: Counter = Counter()  # (op, since_version, dtype, outcome) -> results
        self.tallies: Counter = Counter()  # tally key -> results
        self.profile = ProfileFold()
        self.used: set[int] = set()
        self.ran: set = set()  # variant_of each result
        self._named = set(named_ids)
        self.ran_named_ids: set[str] = set()
        self.facts = _Facts()
        # Every counted result's record (report_every_case), and the records of results read one by
        # one past the first of their family (whenever the caller encodes records).
        self._spool_counted = report_every_case
        self._spool = _Spool(spool_dir) if report_every_case or (record is not None and keeps is None) else None
        self._whole_of_family: Counter = Counter()
        self._spooled: set[int] = set()  # sequences of the kept results whose records are on disk
        self._passes = _PassStore(spool_dir) if keep_all else None

    @classmethod
    def of(cls, results: Iterable, **options) -> "Ledger":
        """A ledger of results judged already (no expectations), every one added and finished."""
        ledger = cls(**options)
        for result in results:
            ledger.add(result)
        ledger.finish()
        return ledger

    # Hearing results

    def add(self, result) -> None:
        """Hear one result as the run judged it; one that fails the run, as the expectations leave
        it, waits for `finish` (shrinking). A known deviation is counted at once: it needs no
        minimal case, and a run of thousands of them keeps none in memory."""
        self._sequence += 1
        judged = self._judge_one(result) if result.outcome in FAILING else None
        if judged is not None and judged[0].outcome in FAILING and self._keeps is None:
            self._waiting.append((self._sequence, result))
        else:
            self._judge(self._sequence, result, judged)

    def waiting(self) -> list:
        """The failing results heard so far, in run order: what hypothesis shrinks."""
        return [result for _, result in self._waiting]

    def settle(self, shrunk: list | None = None) -> None:
        """Judge the failing results heard so far, as shrinking left them (`shrunk`: `waiting()` in
        the same order, minimal cases attached; None: as they were heard)."""
        finished = shrunk if shrunk is not None else self.waiting()
        for (sequence, _), result in zip(self._waiting, finished):
            self._judge(sequence, result)
        self._waiting = []

    def finish(self, shrunk: list | None = None) -> None:
        """`settle`, then order what is kept as the run ran."""
        self.settle(shrunk)
        self._kept.sort(key=lambda pair: pair[0])
        self._everything.sort(key=lambda pair: pair[0])

    def _judge(self, sequence: int, result, judged: tuple | None = None) -> None:
        judged, index = judged or self._judge_one(result)
        if index is not None:
            self.used.add(index)
        example, outcome = judged.example, judged.outcome
        self.ran.add(self._variant_of(judged))
        if example.id in self._named:
            self.ran_named_ids.add(example.id)
        self.counts[(example.op, example.version.since_version, example.dtype, outcome)] += 1
        self.profile.add(judged)
        self.refusals.add(judged)
        self._note_facts(judged)
        if self._keep_all:
            self._keep_for_writing(sequence, judged, index)
        if outcome in COUNTED:
            self._count(sequence, judged)
        elif self._keeps is None:
            self._keep_read(sequence, judged)
        elif self._spool is not None:
            self._spool.write(sequence, self._record(judged))
        if self._keeps is not None:
            chosen = self._keeps(judged)
            if chosen is not None:
                self._kept.append((sequence, chosen))

    def _keep_read(self, sequence: int, result) -> None:
        """A result read one by one: whole while its family has fewer than WHOLE_PER_FAMILY, else its
        record on disk and its bare result in memory."""
        family = _read_family(result)
        self._whole_of_family[family] += 1
        if self._spool is None or self._whole_of_family[family] <= WHOLE_PER_FAMILY:
            self._kept.append((sequence, result))
            return
        self._spool.write(sequence, self._record(result))
        self._spooled.add(sequence)
        self._kept.append((sequence, bare(result)))

    def _keep_for_writing(self, sequence: int, result, index: int | None) -> None:
        """keep_all: a result slim in memory, its pass on disk, or its trace (see the module's docstring)."""
        example, outcome = result.example, result.outcome
        if example.id in self._named or (outcome != PASS and outcome not in self._traced):
            self._everything.append((sequence, slim(result)))
            return
        self._elsewhere.setdefault((example.op, example.version.since_version), set()).add(self._variant_of(result)[2:])
        if outcome == PASS:
            self._passes.add(slim(result))
        elif index is not None:
            self.entries_unkept.add((index, outcome))

    def _count(self, sequence: int, result) -> None:
        self.tallies[tally_key(result)] += 1
        if self._spool is not None and self._spool_counted:
            self._spool.write(sequence, self._record(result))
        if result.outcome == UNSUPPORTED and self._keeps is None:
            self._keep_unsupported(sequence, result)

    def _keep_unsupported(self, sequence: int, result) -> None:
        family = _unsupported_family(result)
        self._whole_unsupported[family] += 1
        if self._whole_unsupported[family] <= WHOLE_PER_BINDING:
            self._kept.append((sequence, result))
        elif self._whole_unsupported[family] <= self._named_unsupported or self._several_variants:
            # Past the panel's names, only where the hints tell whether they are confined to one input mode.
            self._kept.append((sequence, bare(result)))

    def unsupported_not_kept(self, result) -> int:
        """How many unsupported results of this one's family (op version, type binding and
        variant) the ledger counted without keeping them (0 for a result of another outcome)."""
        if self._several_variants or result.outcome != UNSUPPORTED:
            return 0
        return max(0, self._whole_unsupported[_unsupported_family(result)] - self._named_unsupported)

    def _note_facts(self, result) -> None:
        facts = self.facts
        facts.total += 1
        facts.modes.add(result.extra.get("mode", "input"))
        facts.shapes.add(result.extra.get("shapes"))
        variant = _variant(result)
        if variant:
            facts.variants.add(variant)
            if result.outcome != PASS and self._several_variants:
                facts.variants_by_case.setdefault(result.example.id, {})[variant] = result.outcome

    # What the run's reports read

    @property
    def kept(self) -> list:
        """The results kept in memory, in run order: every one that is not counted and the
        unsupported (see `_keep_unsupported`); with `keeps`, what it chose."""
        return [result for _, result in self._kept]

    @property
    def recorded(self) -> list:
        """The results the JSON report records: those not counted (COUNTED), whole or bare (the
        bare ones' whole records are on disk: `recorded_in_order` reads them); with `keeps`, none
        in memory (every record is spooled)."""
        if self._keeps is not None:
            return []
        return [result for _, result in self._kept if result.outcome not in COUNTED]

    @property
    def everything(self) -> list:
        """With `keep_all`, every result, slim, but those of cases no `case:` entry names that
        passed (on disk: `passing_of`) or had a traced outcome (`entries_unkept`); else only those kept."""
        return [result for _, result in self._everything] if self._keep_all else self.kept

    def passing_of(self, op: str, since_version: int) -> Iterator:
        """With `keep_all`, the passing results of an op version that `everything` leaves out, read back."""
        return self._passes.of((op, since_version)) if self._passes is not None else iter(())

    def unkept_variants_of(self, op: str, since_version: int) -> set:
        """With `keep_all`, the (mode, level) variants of an op version's results `everything` leaves out."""
        return self._elsewhere.get((op, since_version), set())

    @property
    def total(self) -> int:
        return self.facts.total

    def summary_counts(self) -> Counter:
        found: Counter = Counter()
        for (_, _, _, outcome), count in self.counts.items():
            found[outcome] += count
        return found

    def tally_rows(self) -> list[dict]:
        """The counted results as the JSON report's `tallies`, sorted (where every case is recorded
        whole, a report holds no tallies: its records name each case)."""
        return [dict(key) | {"count": count} for key, count in sorted(self.tallies.items(), key=lambda item: _sortable(item[0]))]

    def spooled_records(self) -> Iterator[tuple[int, str]]:
        """The records written as they came, in run order: the counted results' (with
        `report_every_case`) and those of the results read one by one past their family's first."""
        return self._spool.read() if self._spool is not None else iter(())

    def recorded_in_order(self, encode: Callable[[object], str]) -> Iterator[str]:
        """Every record line of the report, in run order: the recorded results' (encoded here) and
        the spooled ones."""
        recorded = ((sequence, encode(result)) for sequence, result in self._recorded_pairs())
        return (line for _, line in _merged_by_sequence(recorded, self.spooled_records()))

    def _recorded_pairs(self) -> Iterator[tuple[int, object]]:
        """(sequence, result) of the results recorded from memory (`recorded`)."""
        if self._keeps is None:
            yield from ((sequence, result) for sequence, result in self._kept
                        if result.outcome not in COUNTED and sequence not in self._spooled)

    def close(self) -> None:
        if self._spool is not None:
            self._spool.close()
        if self._passes is not None:
            self._passes.close()


def _read_family(result) -> tuple:
    """A result's family as the console groups the results read one by one (or finer): its op
    version, outcome, and case (None for hypothesis cases, which a version's form one family)."""
    example = result.example
    return (example.op, example.version.since_version, result.outcome,
            None if example.source == "hypothesis" else example.name)


def _unsupported_family(result) -> tuple:
    return result.example.op, result.example.version.since_version, result.example.binding, _variant(result)


def _own_variant(result) -> tuple:
    """A result's op, since-version, input mode and optimization level, as tagged on it."""
    example = result.example
    return example.op, example.version.since_version, result.extra.get("mode", "input"), result.extra.get("optimizations")


def tally_key(result) -> tuple:
    """What a counted result is counted under: its op version and dtype, its outcome, its variant,
    and what tells it apart: the reading it followed, the entry it matched, or the refusal's words."""
    example, verdict = result.example, result.verdict
    key = [("op", example.op), ("opset", example.version.since_version), ("dtype", example.dtype),
           ("outcome", result.outcome)]
    key += [(name, str(result.extra[name])) for name in ("mode", "optimizations") if name in result.extra]
    if result.outcome in (PASS, AMBIGUOUS) and verdict.reading:
        key.append(("reading", verdict.reading))
    elif result.outcome == XFAIL:
        key.append(("expectation", _expectation_source(verdict.message)))
    elif result.outcome == UNSUPPORTED:
        key.append(("message", verdict.message.splitlines()[0][:MESSAGE_CHARACTERS] if verdict.message else ""))
    return tuple(key)


# What expectations.judge_result writes into an xfail's message: the entry's reason, then
# (FILE:LINE[, issue]), then the message the case failed with.
_EXPECTED = re.compile(r"^expected deviation: (?P<entry>.*?\(\S+:\d+(?:, [^()]*)?\))(?:; |$)", re.DOTALL)


def _expectation_source(message: str) -> str:
    """The entry an xfail's message names, its reason and (FILE:LINE), else the message's head."""
    found = _EXPECTED.match(message)
    return found["entry"] if found else message.split("; ", 1)[0][:MESSAGE_CHARACTERS]


def _sortable(key: tuple) -> tuple:
    return tuple((name, str(value) if not isinstance(value, int) else f"{value:012d}") for name, value in key)


def _variant(result) -> str:
    return "/".join(str(result.extra[name]) for name in ("mode", "optimizations") if name in result.extra)


def slim(result):
    """A result without what only its whole record and panel show: the expected values (kept: why
    the input is invalid, and what the text leaves open) and the runtime's outputs."""
    expected = result.expected
    lighter = Expected(invalid=expected.invalid, may_reject=expected.may_reject, ambiguity=expected.ambiguity)
    return dataclasses.replace(result, expected=lighter, actual=())


def bare(result):
    """A result as slim as an unsupported case's name in a panel needs it: `slim`, its inputs,
    spec and the runtime's whole message dropped too (its name, binding and variant are what the
    panels and the hints read; the hints folded its refusal's words as it came)."""
    lighter = slim(result)
    extra = {key: value for key, value in result.extra.items() if key != "detail"}
    return dataclasses.replace(lighter, example=dataclasses.replace(result.example, inputs={}, expect_outputs=None, spec=""),
                               extra=extra)


def _merged_by_sequence(*streams: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    import heapq

    return heapq.merge(*streams, key=lambda pair: pair[0])


class _ScratchFile:
    """A temporary file in `folder` (made if need be; the system's temporary folder if None),
    removed on `close`."""

    def __init__(self, folder: Path | None, prefix: str, suffix: str, mode: str) -> None:
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
        self._path = Path(name)
        self._file = os.fdopen(handle, mode, encoding=None if "b" in mode else "utf-8")

    def close(self) -> None:
        self._file.close()
        self._path.unlink(missing_ok=True)


class _Spool(_ScratchFile):
    """Records written to a temporary file as they come, read back in the order written."""

    def __init__(self, folder: Path | None) -> None:
        super().__init__(folder, ".conform-records.", ".jsonl", "w+")

    def write(self, sequence: int, line: str) -> None:
        self._file.write(f"{sequence}\t{line}\n")

    def read(self) -> Iterator[tuple[int, str]]:
        self._file.flush()
        self._file.seek(0)
        for line in self._file:
            sequence, record = line.rstrip("\n").split("\t", 1)
            yield int(sequence), record


class _PassStore(_ScratchFile):
    """Passing results (slim) in a temporary file, by op version, for `--write-expect`: it weighs
    the passes of an op version against the traits of its failures, reading them back as asked.
    Results come unit by unit, so an op version's are a few runs of the file: each run's offset
    and count is what stays in memory."""

    def __init__(self, folder: Path | None) -> None:
        super().__init__(folder, ".conform-passes.", ".pickle", "w+b")
        self._runs: dict[tuple, list[list[int]]] = {}  # (op, since-version) -> [[offset, count], ...]
        self._last: tuple | None = None

    def add(self, result) -> None:
        key = (result.example.op, result.example.version.since_version)
        if key != self._last:
            self._file.seek(0, os.SEEK_END)
            self._runs.setdefault(key, []).append([self._file.tell(), 0])
            self._last = key
        pickle.dump(result, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._runs[key][-1][1] += 1

    def of(self, key: tuple) -> Iterator:
        self._file.flush()
        self._last = None  # a later `add` seeks to the end again
        for offset, count in list(self._runs.get(key, ())):
            self._file.seek(offset)
            for _ in range(count):
                yield pickle.load(self._file)


__all__ = ["Ledger", "COUNTED", "tally_key", "slim", "bare"]
