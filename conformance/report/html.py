"""A self-contained HTML report: the op x version x dtype matrix coloured by outcome, the precision
profile where some output was judged by a budget, every failure with its diff, and what conform
covers of the ai.onnx domain. No scripts, no external files."""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from pathlib import Path

from ..compare import LENIENT, XPASS
from ..output import write_atomic
from ..precision import ProfileRow, profile_of_report, ulp_text
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
{_precision(doc)}<h2>Failures ({len(failures)})</h2>{details or "<p>none</p>"}
{_coverage({r["op"] for r in records})}</body></html>
"""


def _precision(doc: dict) -> str:
    """The precision profile as a table; nothing when no result was judged by a budget."""
    rows = profile_of_report(doc)
    if not rows:
        return ""
    cells = "".join(
        f"<tr><td>{html.escape(row.op)}</td><td>{html.escape(row.dtype)}</td><td>{row.cases}</td>"
        f'<td{_over(row)}>{ulp_text(row.max_ulp)}</td><td>{"" if row.budget_ulps is None else f"{row.budget_ulps:g}"}</td></tr>'
        for row in rows)
    return ("<h2>Precision profile (worst error in ULP)</h2>\n<table><tr><th>op</th><th>dtype</th><th>cases</th>"
            f"<th>worst ULP</th><th>budget</th></tr>{cells}</table>\n")


def _coverage(ops: set[str]) -> str:
    """What conform covers of the ai.onnx domain (`conform coverage`): the totals, and each
    version of the report's ops with its dtypes covered of those allowed and its YAML cases."""
    from ..coverage import compute

    found = compute()
    cells = "".join(
        f"<tr><td>{html.escape(v.label)}</td><td>{len(v.dtypes)} of {len(v.allowed)}</td><td>{v.cases}</td>"
        f"<td>{html.escape(v.reason or '')}</td></tr>"
        for v in found.versions if v.op in ops)
    return (f"<h2>Coverage</h2>\n<p>conform covers {html.escape(found.totals.line())} of onnx "
            f"{html.escape(found.onnx_version)}.</p>\n<table><tr><th>op version</th><th>dtypes</th><th>YAML cases</th>"
            f"<th>not covered because</th></tr>{cells}</table>\n")


def _over(row: ProfileRow) -> str:
    return f' style="background:{COLOURS["fail"]};color:white"' if row.over_budget else ""


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
