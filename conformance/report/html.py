"""A self-contained HTML report: the op x version x dtype matrix coloured by outcome, and every
failure with its diff. No scripts, no external files."""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from pathlib import Path

from ..compare import LENIENT, XPASS
from ..output import write_atomic
from . import SEVERITY, outcome_counts, recorded_gate

COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "error": "#6a1b9a", "crash": "#b71c1c", "timeout": "#b71c1c",
           "fallback": "#b71c1c", "unsupported": "#f9a825", "ambiguous": "#00838f", "lenient": "#1565c0",
           "skipped": "#9e9e9e", "xfail": "#8d6e63", "xpass": "#ef6c00"}


def _cell(counts: Counter) -> str:
    worst = next(o for o in SEVERITY if counts[o]) if counts else "pass"
    text = ", ".join(f"{n} {o}" for o, n in sorted(counts.items(), key=lambda kv: SEVERITY.index(kv[0])))
    return f'<td style="background:{COLOURS[worst]};color:white" title="{html.escape(text)}">{html.escape(text)}</td>'


def render(doc: dict) -> str:
    records = doc["results"]
    matrix: dict[tuple, Counter] = defaultdict(Counter)
    for record in records:
        matrix[(record["op"], record["opset"], record["dtype"])][record["outcome"]] += 1
    rows = "".join(f"<tr><td>{html.escape(op)}</td><td>{version}</td><td>{html.escape(dtype)}</td>{_cell(counts)}</tr>"
                   for (op, version, dtype), counts in sorted(matrix.items()))
    shown = recorded_gate(doc)[0] | {XPASS, LENIENT}  # what fails the run, and what the console shows beside it
    failures = [r for r in records if r["outcome"] in shown]
    details = "".join(_failure(r) for r in failures)
    summary = outcome_counts(doc["summary"])
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>conform report</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px}}
pre{{background:#f5f5f5;padding:8px;white-space:pre-wrap}}</style></head><body>
<h1>conform report</h1>
<p>{doc["summary"]["total"]} cases: {html.escape(summary)}. Runner: {html.escape(str(doc.get("runner")))}.
Complete: {doc.get("complete", True)}.</p>
<h2>By op, version and dtype</h2>
<table><tr><th>op</th><th>version</th><th>dtype</th><th>outcomes</th></tr>{rows}</table>
<h2>Failures ({len(failures)})</h2>{details or "<p>none</p>"}
</body></html>
"""


def _failure(record: dict) -> str:
    lines = [record["message"], f"source: {record['source']}"]
    for mismatch in record.get("mismatches", []):
        lines += mismatch
    inputs = "; ".join(f"{name}: {value['dtype']}{value['shape']}" for name, value in (record.get("inputs") or {}).items() if value)
    lines += [f"inputs: {inputs}", f"replay: {record['replay']}"]
    colour = COLOURS.get(record["outcome"], "#000")
    return (f'<h3 style="color:{colour}">{html.escape(record["outcome"])}: {html.escape(record["id"])}</h3>'
            f"<pre>{html.escape(chr(10).join(lines))}</pre>")


def write(path: Path, doc: dict) -> None:
    write_atomic(path, render(doc), "the HTML report")
