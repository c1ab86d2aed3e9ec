"""Report formats, one module each: `console` (rich), `json_report`, `junit` (XML) and `html`."""

from __future__ import annotations

import gc
from collections import Counter
from contextlib import contextmanager
from typing import Iterable, Iterator

from ..compare import (AMBIGUOUS, CRASH, ERROR, FAIL, FALLBACK, IMPRECISE, LENIENT, OUTCOMES, PASS, SKIPPED, TIMEOUT,
                       UNSUPPORTED, XFAIL, XPASS)


def summary(results) -> dict[str, int]:
    return tally(r.outcome for r in results)


def tally(outcomes: Iterable[str]) -> dict[str, int]:
    """The summary of a report: how many results in all, and how many of each outcome."""
    return tally_counts(Counter(outcomes))


def tally_counts(counts: Counter) -> dict[str, int]:
    """The summary of a report from how many results had each outcome."""
    return {"total": sum(counts.values()), **{o: counts.get(o, 0) for o in OUTCOMES}}


def outcomes_of(doc: dict) -> Counter:
    """How many results of a report had each outcome: its whole records and its counted ones (`tallies`)."""
    found = Counter(record["outcome"] for record in doc["results"])
    for row in doc.get("tallies") or ():
        found[row["outcome"]] += row["count"]
    return found


FAILING = (FAIL, ERROR, CRASH, TIMEOUT, FALLBACK)
MAX_NAMED = 12  # the other members of a family that a console panel (or a diff's block) names, after the first
# Outcomes from the one a reader must see first to the one that needs no look.
SEVERITY = (*FAILING, XPASS, LENIENT, IMPRECISE, UNSUPPORTED, XFAIL, AMBIGUOUS, SKIPPED, PASS)


def outcome_counts(counts: dict[str, int]) -> str:
    """'336 pass, 4 xfail': the outcomes a report's summary counts (see `tally`), in OUTCOMES' order."""
    return ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts.get(o))


def plural(noun: str, count: int) -> str:
    """`noun` as a count other than one names it: an s added (a y after a consonant made ies)."""
    if count == 1:
        return noun
    return f"{noun[:-1]}ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else f"{noun}s"


def record_name(record: dict) -> str:
    """A report record's id, with its input mode and optimization level where the run had several:
    `Slice-13/x/float/int64[constant][off]`, as JUnit names its testcase."""
    return record["id"] + "".join(f"[{record[key]}]" for key in ("mode", "optimizations") if key in record)


def stale_text(source: str, reason: str) -> str:
    """What a report says of an expectation (at `source`, FILE:LINE) that no case matched."""
    return f"expectation at {source} matches no case: {reason}"


def gate_record(strict_validation: bool, fail_on_unsupported: bool, strict: bool,
                strict_precision: bool = False) -> dict[str, bool]:
    """The options that decide what fails a run, as its report records them (in `options`), so that
    its exit code, its JUnit report and a merge of its shards judge it alike (`recorded_gate`)."""
    return {"strict_validation": strict_validation, "fail_on_unsupported": fail_on_unsupported, "strict": strict,
            "strict_precision": strict_precision}


def recorded_gate(doc: dict, strict: bool = False) -> tuple[frozenset[str], bool]:
    """The outcomes that fail the run a report records (FAILING, and what each recorded option
    adds; `strict` adds strict too), and whether a stale expectation fails it (under strict). A
    report written before these options were recorded reads as run without them."""
    options = doc.get("options") or {}
    strict = strict or bool(options.get("strict"))
    added = ((LENIENT, options.get("strict_validation")), (UNSUPPORTED, options.get("fail_on_unsupported")), (XPASS, strict),
             (IMPRECISE, options.get("strict_precision")))
    return frozenset((*FAILING, *(outcome for outcome, fails in added if fails))), strict


def exit_code(doc: dict, strict: bool = False) -> int:
    """A report's verdict under the options it records (`strict` adds --strict): 1 when a result's
    outcome fails the run, or a stale expectation does, else 0. A run and a merge of its shards
    both end with it."""
    failing, strict = recorded_gate(doc, strict)
    if strict and doc.get("stale_expectations"):
        return 1
    return 1 if any(outcome in failing for outcome, count in outcomes_of(doc).items() if count) else 0


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Python's cycle collector off while a report is built or read, and back on after.

    A report is tens of thousands of dicts and lists that live on and hold no cycle; as they pile
    up, the collector walks every object of the process again and again (the run's results too),
    a third of the time a report takes (Slice's 6,637 results: 0.50 s, 0.27 s without).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
