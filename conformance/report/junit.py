"""JUnit XML, as CI systems read it: one testcase per case, the diff in the failure message.

Counts: `tests` is every result; `failures` what fails the run under the options it recorded, as
its exit code does (fail, crash, timeout, fallback; lenient under --strict-validation, unsupported
under --fail-on-unsupported, xpass under --strict); `errors` conform's own errors; `skipped`
xfail, unsupported and skipped, where they do not fail the run. Under strict, each stale
expectation (an entry no case deviates as it says) is a failing testcase of its own, as it fails
the exit code.

A run of one op is one <testsuite>, `conform`; a run of several ops has one per op, `conform.<op>`
in the run's order (and `conform.expectations` for stale entries), so that a CI system shows
each op's counts; the <testsuites> counts are the whole run's either way.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

from ..compare import ERROR, SKIPPED, UNSUPPORTED, XFAIL
from ..output import write_atomic
from . import record_name, recorded_gate

SKIPS = (XFAIL, UNSUPPORTED, SKIPPED)


def counts(outcomes: Counter, failing: frozenset[str]) -> dict[str, int]:
    return {"tests": sum(outcomes.values()), "failures": sum(outcomes[o] for o in failing if o != ERROR),
            "errors": outcomes[ERROR], "skipped": sum(outcomes[o] for o in SKIPS if o not in failing)}


def _details(record: dict) -> str:
    lines = [record["message"], f"source: {record['source']}"]
    for mismatch in record.get("mismatches", []):
        lines += mismatch
    lines.append(f"replay: {record['replay']}")
    return "\n".join(lines)


def document(doc: dict, strict: bool = False) -> ElementTree.ElementTree:
    """A <testsuites> tree from a JSON report document (so merged reports convert the same way),
    failing what the run's recorded options fail, and xpass under `strict` too."""
    records = doc["results"] + [_tally_record(row) for row in doc.get("tallies") or ()]
    failing, strict = recorded_gate(doc, strict)
    stale = (doc.get("stale_expectations") or []) if strict else []
    totals = counts(_outcomes(records), failing)
    totals["tests"] += len(stale)
    totals["failures"] += len(stale)
    suites = ElementTree.Element("testsuites", {k: str(v) for k, v in totals.items()})
    by_op = _by_op(records)
    if len(by_op) <= 1:
        _add_suite(suites, "conform", records, failing, stale, totals)
        return ElementTree.ElementTree(suites)
    for op, of_op in by_op.items():
        _add_suite(suites, f"conform.{op}", of_op, failing, [], counts(_outcomes(of_op), failing))
    if stale:
        _add_suite(suites, "conform.expectations", [], failing, stale, {"tests": len(stale), "failures": len(stale),
                                                                         "errors": 0, "skipped": 0})
    return ElementTree.ElementTree(suites)


def _tally_record(row: dict) -> dict:
    """A row of counted results (the report's `tallies`) as one testcase's record: its op version,
    dtype and variant, how many results it counts, and what tells them apart."""
    told = next((row[key] for key in ("reading", "expectation", "message") if row.get(key)), "")
    variant = "".join(f"[{row[key]}]" for key in ("mode", "optimizations") if key in row)
    return {"id": f"{row['op']}-{row['opset']}/{row['dtype']}{variant}: {row['count']} {row['outcome']}"
                  + (f" ({told})" if told else ""),
            "op": row["op"], "opset": row["opset"], "dtype": row["dtype"], "outcome": row["outcome"],
            "message": f"{row['count']} {row['outcome']}" + (f": {told}" if told else ""), "count": row["count"],
            "source": "counted", "replay": "", "seconds": 0}


def _outcomes(records: list[dict]) -> Counter:
    """How many results had each outcome (a counted record stands for its `count`)."""
    found: Counter = Counter()
    for record in records:
        found[record["outcome"]] += record.get("count", 1)
    return found


def _by_op(records: list[dict]) -> dict[str, list[dict]]:
    """The records of each op, the ops in the order of their first record."""
    found: dict[str, list[dict]] = {}
    for record in records:
        found.setdefault(record["op"], []).append(record)
    return found


def _add_suite(suites: ElementTree.Element, name: str, records: list[dict], failing: frozenset[str], stale: list[dict],
               totals: dict[str, int]) -> None:
    """A <testsuite> of a testcase per record, then one failing testcase per stale expectation."""
    suite = ElementTree.SubElement(suites, "testsuite", {"name": name, **{k: str(v) for k, v in totals.items()}})
    for record in records:
        case = ElementTree.SubElement(suite, "testcase", {
            "classname": f"conform.{record['op']}-{record['opset']}.{record['dtype']}",
            "name": record_name(record),
            "time": str(record.get("seconds", 0)),
        })
        outcome = record["outcome"]
        if outcome == ERROR:
            ElementTree.SubElement(case, "error", {"message": record["message"][:500], "type": outcome}).text = _details(record)
        elif outcome in failing:
            ElementTree.SubElement(case, "failure", {"message": record["message"][:500], "type": outcome}).text = _details(record)
        elif outcome in SKIPS:
            ElementTree.SubElement(case, "skipped", {"message": f"{outcome}: {record['message'][:500]}"})
    for entry in stale:
        case = ElementTree.SubElement(suite, "testcase", {"classname": "conform.expectations", "name": entry["source"], "time": "0"})
        message = f"stale expectation: no case deviates as {entry['source']} says (reason given: {entry['reason']})"
        ElementTree.SubElement(case, "failure", {"message": message[:500], "type": "stale"}).text = message


def write(path: Path, doc: dict, strict: bool = False) -> None:
    tree = document(doc, strict)
    ElementTree.indent(tree)
    write_atomic(path, ElementTree.tostring(tree.getroot(), encoding="unicode", xml_declaration=True) + "\n", "the JUnit report")
