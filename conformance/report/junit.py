"""JUnit XML, as CI systems read it: one testcase per case, the diff in the failure message.

Counts: `tests` is every result; `failures` the deviations (fail, crash, timeout, fallback) and,
under strict, xpass; `errors` conform's own errors; `skipped` xfail, unsupported and skipped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

from ..compare import CRASH, ERROR, FAIL, FALLBACK, SKIPPED, TIMEOUT, UNSUPPORTED, XFAIL, XPASS
from ..output import write_atomic

FAILURES = (FAIL, CRASH, TIMEOUT, FALLBACK)
SKIPS = (XFAIL, UNSUPPORTED, SKIPPED)


def counts(outcomes: Counter, strict: bool) -> dict[str, int]:
    failures = sum(outcomes[o] for o in FAILURES) + (outcomes[XPASS] if strict else 0)
    return {"tests": sum(outcomes.values()), "failures": failures, "errors": outcomes[ERROR],
            "skipped": sum(outcomes[o] for o in SKIPS)}


def _details(record: dict) -> str:
    lines = [record["message"], f"source: {record['source']}"]
    for mismatch in record.get("mismatches", []):
        lines += mismatch
    lines.append(f"replay: {record['replay']}")
    return "\n".join(lines)


def document(doc: dict, strict: bool = False) -> ElementTree.ElementTree:
    """A <testsuites> tree from a JSON report document (so merged reports convert the same way)."""
    records = doc["results"]
    totals = counts(Counter(r["outcome"] for r in records), strict)
    suites = ElementTree.Element("testsuites", {k: str(v) for k, v in totals.items()})
    suite = ElementTree.SubElement(suites, "testsuite", {"name": "conform", **{k: str(v) for k, v in totals.items()}})
    for record in records:
        variant = "".join(f"[{record[k]}]" for k in ("mode", "optimizations") if k in record)
        case = ElementTree.SubElement(suite, "testcase", {
            "classname": f"conform.{record['op']}-{record['opset']}.{record['dtype']}",
            "name": record["id"] + variant,
            "time": str(record.get("seconds", 0)),
        })
        outcome = record["outcome"]
        if outcome in FAILURES or (strict and outcome == XPASS):
            ElementTree.SubElement(case, "failure", {"message": record["message"][:500], "type": outcome}).text = _details(record)
        elif outcome == ERROR:
            ElementTree.SubElement(case, "error", {"message": record["message"][:500], "type": outcome}).text = _details(record)
        elif outcome in SKIPS:
            ElementTree.SubElement(case, "skipped", {"message": f"{outcome}: {record['message'][:500]}"})
    return ElementTree.ElementTree(suites)


def write(path: Path, doc: dict, strict: bool = False) -> None:
    tree = document(doc, strict)
    ElementTree.indent(tree)
    write_atomic(path, ElementTree.tostring(tree.getroot(), encoding="unicode", xml_declaration=True) + "\n", "the JUnit report")
