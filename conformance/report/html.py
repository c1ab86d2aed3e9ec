"""The HTML report, the page a team triages a run from. It owns, in this order: the verdict and the
outcome counts; per op a version x dtype grid of cells coloured by outcome, with a legend (each op
collapsed; filtered by outcome and searched by id with a small inline script, the page readable
without it); the failures in families as the console's panels group them, each with its inputs,
expected and actual, where they differ, its replay command and minimal case; lenient cases, expected
deviations (xfail) and xpasses with the expectation's reason and FILE:LINE, and stale expectations,
each in a section of its own; unsupported and ambiguous cases by family; the precision profile with
its grades and the imprecise cases (among the failures under --strict-precision); the environment (runtime, versions, options); and what conform covers of the ai.onnx domain.
One file: no network, no external files."""

from __future__ import annotations

import html
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ..compare import AMBIGUOUS, IMPRECISE, LENIENT, OUTCOMES, UNSUPPORTED, XFAIL, XPASS
from ..output import write_atomic
from ..precision import ProfileRow, profile_of_report, ulp_text
from . import SEVERITY, exit_code, outcome_counts, plural, record_name, recorded_gate
from .console import PROFILE_COLUMNS, _figure, _grade_cells, _RecordView, families

COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "error": "#6a1b9a", "crash": "#b71c1c", "timeout": "#b71c1c",
           "fallback": "#b71c1c", "unsupported": "#f9a825", "ambiguous": "#00838f", "lenient": "#1565c0",
           "skipped": "#9e9e9e", "xfail": "#8d6e63", "xpass": "#ef6c00", IMPRECISE: "#9e9d24"}
MEANINGS = {"pass": "matches the spec", "fail": "a wrong output, or a valid input rejected",
            "error": "could not be judged", "crash": "the runtime's worker died", "timeout": "no answer in time",
            "fallback": "ran on another provider", "unsupported": "the runtime does not implement it",
            "ambiguous": "one of the readings the text allows", "lenient": "invalid input accepted",
            "skipped": "refused before running", "xfail": "a known deviation, listed with a reason",
            "xpass": "a listed deviation that now passes",
            IMPRECISE: "beyond its precision budget, within the wrong-answer line (fails only under --strict-precision)"}
MAX_VALUES = 12  # of a tensor, as the console's `describe` shows
MAX_READINGS = 3  # of an expected answer, as the console's panel shows
# What `expectations.judge_result` writes into an xfail's or xpass's message: the entry's reason,
# then (FILE:LINE[, issue]); an xfail's then goes on with the message the case failed with.
_EXPECTED = re.compile(r"^(?P<head>expected deviation|passes, but is listed as a known deviation): (?P<reason>.*?) "
                       r"\((?P<source>\S+:\d+)(?:, (?P<issue>[^()]*))?\)(?:; (?P<rest>.*))?$", re.DOTALL)


def render(doc: dict) -> str:
    records = doc["results"]
    tallies = doc.get("tallies") or []
    failing, strict = recorded_gate(doc)
    parts = [_header(doc), _results(records, tallies), _failures(records, failing),
             _family_section("lenient", "Lenient: invalid input accepted", _of(records, LENIENT),
                             "fails this run (--strict-validation)" if LENIENT in failing
                             else "does not fail this run (--strict-validation would)"),
             _xfail_section(_of(records, XFAIL), _tallied(tallies, XFAIL)),
             _family_section("xpass", "Unexpected passes (xpass)", _of(records, XPASS),
                             "fails this run (--strict)" if strict else "does not fail this run (--strict would)"),
             _stale(doc.get("stale_expectations") or [], strict)]
    if UNSUPPORTED not in failing:
        parts.append(_compact_section("unsupported", "Unsupported, by type binding", _of(records, UNSUPPORTED)))
        parts.append(_counted_section("unsupported-counted", "Unsupported, counted by refusal", _tallied(tallies, UNSUPPORTED),
                                      "message"))
    parts += [_compact_section("ambiguous", "Ambiguous", _of(records, AMBIGUOUS)),
              _counted_section("ambiguous-counted", "Ambiguous, counted by the reading followed", _tallied(tallies, AMBIGUOUS),
                               "reading"),
              _precision(doc, failing), _environment(doc), _coverage({r["op"] for r in records} | {r["op"] for r in tallies})]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>conform report</title>
<style>{_STYLE}</style></head><body>
{"".join(parts)}<script>{_SCRIPT}</script>
</body></html>
"""


def write(path: Path, doc: dict) -> None:
    write_atomic(path, render(doc), "the HTML report")


def _of(records: list[dict], outcome: str) -> list[dict]:
    return [r for r in records if r["outcome"] == outcome]


def _e(value: Any) -> str:
    return html.escape(str(value))


# The page's head: what a person asks first.

def _header(doc: dict) -> str:
    counts, code = doc["summary"], exit_code(doc)
    verdict = ("fails its gate (exit 1)" if code else "passes its gate (exit 0)")
    complete = "" if doc.get("complete", True) else " <strong>Incomplete: the run was cut short.</strong>"
    return (f'<h1>conform report</h1>\n<p class="verdict {"bad" if code else "good"}">This run {verdict}: '
            f"{counts['total']} cases, {_e(outcome_counts(counts) or 'none')}.{complete}</p>\n"
            f"<p>Runtime: {_e(_runtime_line(doc.get('runner') or {}))}. "
            '<a href="#results">Results</a> · <a href="#failures">Failures</a> · <a href="#lenient">Lenient</a> · '
            '<a href="#xfail">Expected deviations</a> · <a href="#environment">Environment</a> · '
            '<a href="#coverage">Coverage</a></p>\n')


def _runtime_line(runner: dict) -> str:
    named = " ".join(str(runner[key]) for key in ("name", "version") if runner.get(key))
    provider = f" ({runner['provider']})" if runner.get("provider") else ""
    return (named + provider) or "not recorded"


# Results: per op a version x dtype grid.

def _results(records: list[dict], tallies: list[dict]) -> str:
    grids: dict[str, dict[tuple[int, str], Counter]] = defaultdict(lambda: defaultdict(Counter))
    present: Counter = Counter()
    for row in [*records, *tallies]:
        count = row.get("count", 1)  # a tally row counts many results, a record one
        grids[row["op"]][(row["opset"], row["dtype"])][row["outcome"]] += count
        present[row["outcome"]] += count
    ops = "".join(_op_grid(op, grids[op]) for op in sorted(grids))
    return (f'<section id="results"><h2>Results by op, version and dtype ({len(grids)} {plural("op", len(grids))})</h2>\n'
            f"{_legend(present)}{_controls(present)}{ops or '<p>no results</p>'}</section>\n")


def _legend(present: Counter) -> str:
    items = "".join(f'<li><span class="swatch" style="background:{COLOURS[o]}"></span><b>{o}</b>: {_e(MEANINGS[o])}</li>'
                    for o in SEVERITY if present[o])
    return (f'<ul class="legend">{items}</ul>\n<p class="note">A cell is coloured by its worst outcome '
            "and counts each; click an op to open its grid.</p>\n")


def _controls(present: Counter) -> str:
    """The filter and search controls: hidden until the script shows them, as without it they do nothing."""
    boxes = "".join(f'<label><input type="checkbox" value="{o}" checked> {o} ({present[o]})</label> '
                    for o in OUTCOMES if present[o])
    return ('<div id="controls" hidden><p><span class="label">Show outcomes:</span> ' + boxes + "</p>"
            '<p><label>Search by id: <input type="search" id="search" placeholder="Slice-13/negative_step" size="40"></label> '
            '<button type="button" id="expand">open all</button> <button type="button" id="collapse">close all</button> '
            '<span id="shown"></span></p></div>\n')


def _op_grid(op: str, cells: dict[tuple[int, str], Counter]) -> str:
    versions = sorted({version for version, _ in cells})
    dtypes = sorted({dtype for _, dtype in cells})
    total = sum((counts for counts in cells.values()), Counter())
    head = "".join(f"<th>{_e(d)}</th>" for d in dtypes)
    rows = "".join(f'<tr><th>{_e(op)}-{v}</th>{"".join(_cell(cells.get((v, d))) for d in dtypes)}</tr>' for v in versions)
    keys = " ".join([op] + [f"{op}-{v}" for v in versions])
    return (f'<details class="op f" data-outcomes="{" ".join(total)}" data-keys="{_e(keys)}">'
            f'<summary><span class="opname">{_e(op)}</span> {_chips(total)}</summary>\n'
            f'<table class="grid"><tr><th>version</th>{head}</tr>{rows}</table></details>\n')


def _chips(counts: Counter) -> str:
    return " ".join(f'<span class="chip" style="background:{COLOURS[o]}">{counts[o]} {o}</span>' for o in SEVERITY if counts[o])


def _cell(counts: Counter | None) -> str:
    if not counts:
        return '<td class="empty">–</td>'
    worst = next(o for o in SEVERITY if counts[o])
    text = "<br>".join(f"{counts[o]} {o}" for o in SEVERITY if counts[o])
    return f'<td class="cell" data-outcomes="{" ".join(counts)}" style="background:{COLOURS[worst]}">{text}</td>'


# Families: the notable results, grouped as the console's panels group them.

def _failures(records: list[dict], failing: frozenset[str]) -> str:
    shown = [r for r in records if r["outcome"] in failing and r["outcome"] not in (LENIENT, XPASS)]
    return _family_section("failures", "Failures", shown, "what fails this run", heading_id="failures")


def _family_section(anchor: str, title: str, records: list[dict], note: str, heading_id: str | None = None) -> str:
    grouped = _families(records)
    count = f"{len(records)} {plural('case', len(records))} in {len(grouped)} {plural('family', len(grouped))}"
    body = "".join(_family(first, others) for first, *others in grouped) or "<p>none</p>"
    return (f'<section id="{heading_id or anchor}"><h2>{_e(title)} ({count})</h2>\n'
            f'<p class="note">{_e(note)}.</p>\n{body}</section>\n')


def _families(records: list[dict]) -> list[list[dict]]:
    """Records by family, as `console.families` groups a run's results (it reads them through the
    view `merge` uses), each family in report order."""
    return [[view.record for view in family] for family in families([_RecordView(r) for r in records])]


def _family(first: dict, others: list[dict]) -> str:
    members = [first, *others]
    outcome = first["outcome"]
    more = f" and {len(others)} more {plural('case', len(others))}" if others else ""
    ids = " ".join(record_name(r) for r in members)
    return (f'<details class="family f" data-outcomes="{outcome}" data-keys="{_e(ids)}"{" open" if len(members) == 1 else ""}>'
            f'<summary><h3 style="color:{COLOURS.get(outcome, "#000")}">{_e(outcome)}: {_e(record_name(first))}</h3>'
            f'<span class="more">{_e(more)}</span></summary>\n'
            f"{_message(first)}{_case_table(first)}{_differences(first)}{_replay(first)}{_others(others)}</details>\n")


def _message(record: dict) -> str:
    """The verdict's message, once: an expectation's reason and FILE:LINE apart from what the case did."""
    found = _EXPECTED.match(record["message"])
    if not found:
        return f'<p class="message">{_e(record["message"])}</p>\n'
    issue = f" ({_e(found['issue'])})" if found["issue"] else ""
    rest = f'<p class="message">{_e(found["rest"])}</p>\n' if found["rest"] else ""
    return (f'<p class="expectation"><b>reason:</b> {_e(found["reason"])} '
            f'<span class="source">({_e(found["source"])}{issue})</span></p>\n{rest}')


def _case_table(record: dict) -> str:
    rows = [("case", record_name(record)), ("source", record["source"])]
    rows += [("spec", record["spec"])] if record.get("spec") else []
    rows += [(f"input {name}", _tensor_text(value)) for name, value in (record.get("inputs") or {}).items()]
    rows += [(f"attribute {name}", _value_text(value)) for name, value in (record.get("attributes") or {}).items()]
    rows += _expected_rows(record.get("expected") or {}, record["message"])
    actual = record.get("actual") or []
    rows += [(f"actual{_output_name(i, actual)}", _tensor_text(a)) for i, a in enumerate(actual)]
    cells = "".join(f'<tr><th>{_e(name)}</th><td><code>{_e(text)}</code></td></tr>' for name, text in rows)
    return f'<table class="case">{cells}</table>\n'


def _expected_rows(expected: dict, message: str) -> list[tuple[str, str]]:
    if "invalid" in expected:
        invalid = expected["invalid"]
        said = invalid["sentence"] in message  # a lenient case's message quotes the rule already
        return [("expected", "rejection (the rule above)" if said else f"rejection ({invalid['rule']}: {invalid['sentence']})")]
    rows = []
    for reading in expected.get("readings", [])[:MAX_READINGS]:
        outputs = reading["outputs"]
        rows += [(f"expected ({reading['label']}){_output_name(i, outputs)}", _tensor_text(o)) for i, o in enumerate(outputs)]
    budgets = expected.get("budgets") or []
    rows += [(f"budget{_output_name(i, budgets)}", f"{b['ulps']:g} ULP ({b['reason']})") for i, b in enumerate(budgets) if b]
    return rows


def _output_name(index: int, outputs: list) -> str:
    return f" output {index}" if len(outputs) > 1 else ""


def _tensor_text(value: dict | None) -> str:
    """A tensor as the console shows one: dtype, shape and its first values."""
    if value is None:
        return "(omitted, empty name)"
    data = value["data"] if isinstance(value["data"], list) else [value["data"]]
    size = 1
    for extent in value["shape"]:
        size *= extent
    shown = ", ".join(_scalar_text(v) for v in data[:MAX_VALUES])
    more = f", ... ({size} values)" if size > MAX_VALUES else ""
    return f"{value['dtype']}{value['shape']} [{shown}{more}]"


def _value_text(value: Any) -> str:
    if isinstance(value, dict) and "dtype" in value:
        return _tensor_text(value)
    if isinstance(value, list):
        return "[" + ", ".join(_scalar_text(v) for v in value) + "]"
    return _scalar_text(value)


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _differences(record: dict) -> str:
    """Where expected and actual differ: the mismatch lines the message does not already say."""
    message = record["message"]
    lines = [line for mismatch in record.get("mismatches") or [] for line in mismatch if line.strip() not in message]
    return f'<p class="label">where they differ</p><pre>{_e(chr(10).join(lines))}</pre>\n' if lines else ""


def _replay(record: dict) -> str:
    text = f'<p class="label">replay</p><pre class="replay">{_e(record["replay"])}</pre>\n'
    minimal = record.get("minimal")
    if not minimal:
        return text
    if "skipped" in minimal:
        return text + f'<p class="note">{_e(minimal["skipped"])}</p>\n'
    saved = f"saved as {minimal['file']}" if "file" in minimal else f"not saved: {minimal.get('unsaved', '')}"
    text += f'<p class="label">minimal case, shrunk by hypothesis ({_e(saved)})</p><pre>{_e(minimal.get("yaml", ""))}</pre>\n'
    if "replay" in minimal:
        text += f'<p class="label">replay the minimal case</p><pre class="replay">{_e(minimal["replay"])}</pre>\n'
    return text


def _others(others: list[dict]) -> str:
    if not others:
        return ""
    items = "".join(f"<li><code>{_e(record_name(r))}</code></li>" for r in others)
    saved = [r["minimal"]["file"] for r in others if "file" in (r.get("minimal") or {})]
    minimal = f'<p class="note">the other groups\' minimal cases: {_e(", ".join(saved))}</p>' if saved else ""
    return (f"<details><summary>the {len(others)} other {plural('case', len(others))} of this family "
            f'(same outcome; each in the JSON report)</summary><ul class="ids">{items}</ul>{minimal}</details>\n')


def _compact_section(outcome: str, title: str, records: list[dict]) -> str:
    """Outcomes that fail nothing, one row a family (its first case, its count, its message), collapsed."""
    if not records:
        return ""
    grouped = _families(records)
    rows = "".join(
        f'<tr class="f" data-outcomes="{outcome}" data-keys="{_e(" ".join(record_name(r) for r in family))}">'
        f"<td><code>{_e(record_name(family[0]))}</code></td><td>{len(family)}</td><td>{_e(family[0]['message'])}</td></tr>"
        for family in grouped)
    return (f'<section id="{outcome}"><h2>{_e(title)} ({len(records)} {plural("case", len(records))} in '
            f'{len(grouped)} {plural("family", len(grouped))})</h2>\n<details><summary>one row a family</summary>'
            f"<table><tr><th>first case</th><th>cases</th><th>message</th></tr>{rows}</table></details></section>\n")


def _xfail_section(records: list[dict], counted: list[dict]) -> str:
    """The expected deviations: in families where each is recorded (--report-passes), else counted
    per entry (its reason and FILE:LINE), op version and dtype."""
    note = "known deviations, each matched by an entry of the expectations file"
    if records or not counted:
        return _family_section("xfail", "Expected deviations (xfail)", records, note)
    by_entry: dict[str, list[dict]] = defaultdict(list)
    for row in counted:
        by_entry[row.get("expectation", "")].append(row)
    total = sum(row["count"] for row in counted)
    body = "".join(
        f'<details class="family f" data-outcomes="xfail" data-keys="{_e(" ".join(_row_key(r) for r in rows))}">'
        f'<summary><h3>reason: {_e(entry)}</h3><span class="more">{sum(r["count"] for r in rows)} '
        f'{plural("case", sum(r["count"] for r in rows))}</span></summary><ul class="ids">'
        + "".join(f"<li><code>{_e(_row_key(r))}</code>: {r['count']}</li>" for r in rows) + "</ul></details>\n"
        for entry, rows in by_entry.items())
    return (f'<section id="xfail"><h2>Expected deviations (xfail) ({total} {plural("case", total)} of '
            f'{len(by_entry)} {plural("entry", len(by_entry))})</h2>\n<p class="note">{_e(note)}, counted by entry.</p>\n'
            f"{body}</section>\n")


def _row_key(row: dict) -> str:
    variant = "".join(f"[{row[key]}]" for key in ("mode", "optimizations") if key in row)
    return f"{row['op']}-{row['opset']}/{row['dtype']}{variant}"


def _tallied(tallies: list[dict], outcome: str) -> list[dict]:
    return [row for row in tallies if row["outcome"] == outcome]


def _counted_section(anchor: str, title: str, rows: list[dict], told_by: str) -> str:
    """Counted results (the report's `tallies`) of one outcome: a row per op version, dtype and
    what tells them apart (`told_by`: the reading, the refusal, the expectation), collapsed."""
    if not rows:
        return ""
    outcome = rows[0]["outcome"]
    cells = "".join(
        f'<tr class="f" data-outcomes="{outcome}" data-keys="{_e(row["op"])}-{row["opset"]}/{_e(row["dtype"])}">'
        f'<td><code>{_e(row["op"])}-{row["opset"]}</code></td><td>{_e(row["dtype"])}</td><td>{row["count"]}</td>'
        f'<td>{_e(row.get(told_by, ""))}</td></tr>'
        for row in rows)
    total = sum(row["count"] for row in rows)
    return (f'<section id="{anchor}"><h2>{_e(title)} ({total} {plural("case", total)})</h2>\n<details><summary>one row '
            f"an op version, dtype and {told_by}</summary><table><tr><th>version</th><th>dtype</th><th>cases</th>"
            f"<th>{told_by}</th></tr>{cells}</table></details></section>\n")


def _stale(stale: list[dict], strict: bool) -> str:
    effect = "fail this run (--strict)" if strict else "do not fail this run (--strict would)"
    rows = "".join(f"<tr><td><code>{_e(e['source'])}</code></td><td>{_e(e['reason'])}</td></tr>" for e in stale)
    body = (f"<table><tr><th>entry</th><th>reason</th></tr>{rows}</table>" if stale else "<p>none</p>")
    return (f'<section id="stale"><h2>Stale expectations ({len(stale)})</h2>\n<p class="note">entries that match no '
            f"case of this run; they {effect}.</p>\n{body}</section>\n")


# The precision profile, the environment and the coverage, as tables.

def _precision(doc: dict, failing: frozenset[str] = frozenset()) -> str:
    """The precision profile as a table (per op and dtype: the worst grade, how many results had
    each, the worst error, the budget and the wrong-answer line), then the imprecise cases where
    they do not fail the run (where they do, they are among the failures); nothing when no result
    was judged by a budget."""
    rows = profile_of_report(doc)
    if not rows:
        return ""
    head = "".join(f"<th>{_e(name)}</th>" for name in PROFILE_COLUMNS)
    cells = "".join(
        f"<tr><td>{_e(row.op)}</td><td>{_e(row.dtype)}</td><td>{row.cases}</td><td{_over(row)}>{_e(_grade_text(row.grade))}</td>"
        + "".join(f"<td>{_e(cell)}</td>" for cell in _grade_cells(row))
        + f"<td{_over(row)}>{ulp_text(row.max_ulp)}</td><td>{_figure(row.budget_ulps)}</td><td>{_figure(row.wrong_answer_ulps)}</td></tr>"
        for row in rows)
    imprecise = [] if IMPRECISE in failing else _of(doc["results"], IMPRECISE)
    return ('<section id="precision"><h2>Precision profile (error in ULP from the exact value)</h2>\n'
            '<p class="note">grades: correctly rounded, faithful (under 1 ULP), within budget, beyond budget; '
            "beyond the wrong-answer line a result fails, between its budget and that line it is imprecise "
            "(docs/precision.md); a double's budget and line have half a ULP more.</p>\n"
            f"<table><tr>{head}</tr>{cells}</table>{_imprecise_list(imprecise)}</section>\n")


def _imprecise_list(records: list[dict]) -> str:
    """The imprecise cases, one row each: the case, its worst error, budget and line, and the message."""
    if not records:
        return ""
    rows = "".join(
        f'<tr class="f" data-outcomes="{IMPRECISE}" data-keys="{_e(record_name(r))}"><td><code>{_e(record_name(r))}</code></td>'
        f"<td>{ulp_text(float(r['ulp'])) if r.get('ulp') is not None else ''}</td><td>{_figure(r.get('budget_ulps'))}</td><td>{_figure(r.get('wrong_answer_ulps'))}</td>"
        f"<td>{_e(r['message'])}</td></tr>"
        for r in records)
    return (f"<details><summary>{len(records)} imprecise {plural('case', len(records))}: beyond the budget, within the "
            "wrong-answer line (they fail only under --strict-precision)</summary>"
            f"<table><tr><th>case</th><th>worst ULP</th><th>budget</th><th>wrong at</th><th>message</th></tr>{rows}</table></details>")


def _grade_text(grade: str | None) -> str:
    return (grade or "").replace("-", " ")


def _over(row: ProfileRow) -> str:
    if row.beyond_line:
        return f' style="background:{COLOURS["fail"]};color:white"'
    return f' style="background:{COLOURS[IMPRECISE]};color:white"' if row.over_budget else ""


_SHOWN_ELSEWHERE = ("results", "summary", "precision", "stale_expectations", "runner", "tool", "options")


def _environment(doc: dict) -> str:
    run = {key: value for key, value in doc.items() if key not in _SHOWN_ELSEWHERE}
    tables = [("Runtime", doc.get("runner") or {}), ("Versions", doc.get("tool") or {}), ("Run", run),
              ("Options", doc.get("options") or {})]
    body = "".join(f"<h3>{title}</h3>{_key_values(values)}" for title, values in tables)
    return f'<section id="environment"><h2>Environment</h2>\n{body}</section>\n'


def _key_values(values: dict) -> str:
    if not values:
        return "<p>not recorded</p>"
    rows = "".join(f"<tr><th>{_e(key)}</th><td>{_e(_setting_text(value))}</td></tr>" for key, value in values.items())
    return f'<table class="settings">{rows}</table>\n'


def _setting_text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(_setting_text, value)) if value else "none"
    if isinstance(value, dict):
        return "; ".join(f"{key}: {_setting_text(v)}" for key, v in value.items()) or "none"
    return str(value)


def _coverage(ops: set[str]) -> str:
    """What conform covers of the ai.onnx domain (`conform coverage`): the totals, and each
    version of the report's ops with its dtypes covered of those allowed and its YAML cases."""
    from ..coverage import compute

    found = compute(counted_ops=ops)
    cells = "".join(
        f"<tr><td>{html.escape(v.label)}</td><td>{len(v.dtypes)} of {len(v.allowed)}</td><td>{v.cases}</td>"
        f"<td>{html.escape(v.reason or '')}</td></tr>"
        for v in found.versions if v.op in ops)
    return (f'<section id="coverage"><h2>Coverage</h2>\n<p>conform covers {html.escape(found.totals.line())} of onnx '
            f"{html.escape(found.onnx_version)}.</p>\n<table><tr><th>op version</th><th>dtypes</th><th>YAML cases</th>"
            f"<th>not covered because</th></tr>{cells}</table></section>\n")


_STYLE = """body{font-family:sans-serif;margin:2em;max-width:110em}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
pre{background:#f5f5f5;padding:8px;white-space:pre-wrap;margin:.2em 0}
.verdict{font-size:1.2em;font-weight:bold}.verdict.bad{color:#c62828}.verdict.good{color:#2e7d32}
.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3em 1.5em}
.swatch{display:inline-block;width:1em;height:1em;margin-right:.3em;vertical-align:middle;border-radius:2px}
.chip{color:white;padding:1px 6px;border-radius:3px;font-size:.85em;margin-right:2px}
details.op{margin:.2em 0}details.op>summary{cursor:pointer;padding:2px}
.opname{font-weight:bold;display:inline-block;min-width:10em}
.grid td.cell{color:white;font-size:.85em;white-space:nowrap}.grid td.empty{color:#999;text-align:center}
.grid td.dim{opacity:.25}details.family{border-left:4px solid #ccc;margin:.6em 0;padding-left:.8em}
details.family>summary{cursor:pointer}details.family>summary h3{display:inline;font-size:1em;margin:0}
.more{color:#555;margin-left:.5em}.label{font-weight:bold;margin:.5em 0 0}.note{color:#555}
.case th{width:14em;font-weight:normal;color:#333}.case code{white-space:pre-wrap}.source{color:#555}
#controls{background:#f5f5f5;padding:.2em .8em;border-radius:4px}#controls label{margin-right:.8em}
.settings th{font-weight:normal;color:#333}"""

# Filter by outcome and search by id: an element of class `f` shows when one of its data-outcomes
# is ticked and its data-keys hold the search text (or an op's key starts the searched id).
_SCRIPT = """(function(){
var c=document.getElementById('controls');if(!c)return;c.hidden=false;
var boxes=[].slice.call(c.querySelectorAll('input[type=checkbox]')),q=document.getElementById('search');
function ticked(){var s={};boxes.forEach(function(b){if(b.checked)s[b.value]=1});return s}
function any(list,s){return list.split(' ').some(function(o){return s[o]})}
function found(keys,t){return !t||keys.toLowerCase().split(' ').some(function(k){return k.indexOf(t)>=0||t.indexOf(k+'/')==0})}
function apply(){var s=ticked(),t=q.value.trim().toLowerCase(),n=0,all=0;
document.querySelectorAll('.f').forEach(function(el){var on=any(el.dataset.outcomes,s)&&found(el.dataset.keys,t);
el.hidden=!on;all++;if(on){n++;if(t&&el.tagName=='DETAILS')el.open=true}});
document.querySelectorAll('td.cell').forEach(function(td){td.classList.toggle('dim',!any(td.dataset.outcomes,s))});
document.getElementById('shown').textContent=n+' of '+all+' ops and families shown'}
boxes.forEach(function(b){b.addEventListener('change',apply)});q.addEventListener('input',apply);
function openAll(v){document.querySelectorAll('details.op,details.family').forEach(function(d){if(!d.hidden)d.open=v})}
document.getElementById('expand').addEventListener('click',function(){openAll(true)});
document.getElementById('collapse').addEventListener('click',function(){openAll(false)});
apply()})();"""
