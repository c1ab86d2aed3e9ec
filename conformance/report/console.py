"""The console report, drawn with rich: a summary matrix, the precision profile (where imprecise
results are told, with their grades), and a readable diff for each kind of failure.

A run's failures come in families: a case-file case that fails fails in most of its type bindings,
a version's hypothesis cases fail for the same few reasons in every dtype, and what a runtime does
not support is a type, in every case. Each family gets one panel, its first member in full, with
the rest named in it; the JSON report holds every one.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from rich.console import Console
from rich.measure import Measurement
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..compare import (AMBIGUOUS, CRASH, ERROR, FAIL, FALLBACK, IMPRECISE, LENIENT, OUTCOMES, PASS, TIMEOUT, UNSUPPORTED,
                       XPASS)
from ..precision import GRADES, OutputCheck, ProfileRow, ulp_text
from ..values import describe
from . import FAILING, MAX_NAMED, outcome_counts, plural, record_name, recorded_gate, stale_text, tally_counts
from ..ledger import COUNTED
from .hints import as_ledger, run_notes, unjudged_line

STYLES = {PASS: "green", FAIL: "bold red", ERROR: "bold magenta", UNSUPPORTED: "yellow", AMBIGUOUS: "cyan",
          LENIENT: "blue", CRASH: "bold red", TIMEOUT: "bold red", FALLBACK: "bold red", "skipped": "dim",
          "xfail": "dim yellow", "xpass": "bold yellow", IMPRECISE: "magenta"}
MAX_DETAILED = 25  # panels, one a family


def summary_table(results) -> Table:
    """Per op version and dtype, how many results had each outcome (`results`: a Ledger or a list)."""
    title = "conform: results by op version and dtype"
    table = Table(title=title, min_width=len(title))  # narrower, the title folds
    table.add_column("op")
    table.add_column("version", justify="right")
    table.add_column("dtype")
    counts = as_ledger(results).counts
    present = {outcome for (_, _, _, outcome), count in counts.items() if count}
    shown = [o for o in OUTCOMES if o in present] or [PASS]
    for outcome in shown:
        table.add_column(outcome, justify="right", style=STYLES[outcome])
    groups: dict[tuple, Counter] = defaultdict(Counter)
    for (op, version, dtype, outcome), count in counts.items():
        groups[(op, version, dtype)][outcome] += count
    for (op, version, dtype), counts in sorted(groups.items()):
        table.add_row(op, str(version), dtype, *[str(counts.get(o, "")) for o in shown])
    return table


PROFILE_COLUMNS = ("op", "dtype", "cases", "grade", *(grade.replace("-", " ") for grade in GRADES), "worst ULP", "budget",
                   "wrong at")


def precision_table(rows: list[ProfileRow]) -> Table:
    """The precision profile: per op and dtype, the worst grade of the results judged by a budget
    and how many had each (the imprecise among those beyond budget), the largest ULP error, the
    budget and the wrong-answer line (both + 0.5 for double: see docs/precision.md)."""
    title = "conform: precision profile (error in ULP from the exact value; 'xB': in its per-element bound)"
    table = Table(title=title, min_width=len(title))
    for name in PROFILE_COLUMNS:
        table.add_column(name, justify="left" if name in ("op", "dtype", "grade") else "right")
    for row in rows:
        style = STYLES[FAIL] if row.beyond_line else STYLES[IMPRECISE] if row.over_budget else ""
        table.add_row(row.op, row.dtype, str(row.cases), Text((row.grade or "").replace("-", " "), style=style),
                      *_grade_cells(row), Text(ulp_text(row.max_ulp) + _unit_mark(row), style=style),
                      _figure(row.budget_ulps) + _unit_mark(row), _figure(row.wrong_answer_ulps) + _unit_mark(row))
    return table


def _unit_mark(row: ProfileRow) -> str:
    """'' for a row in ULP; 'xB' for one measured in its per-element bound (bounds.py)."""
    return "" if row.unit == "ULP" else "xB"


def _grade_cells(row: ProfileRow) -> list[str]:
    """How many of the row's results had each grade; the imprecise ones named among those beyond budget."""
    cells = [str(count) if count else "" for count in row.grades] or [""] * len(GRADES)
    if row.imprecise:
        cells[-1] += f" ({row.imprecise} imprecise)"
    return cells


def _figure(ulps: float | None) -> str:
    return "" if ulps is None else f"{ulps:g}"


def _budget_text(budget: OutputCheck, expected, index: int) -> str:
    """'2.5 ULP, wrong beyond 8 ULP (elementary function; REASON)': a budget (or a per-element
    bound), its wrong-answer line at its output's dtype (where a reading holds the output), and its reason."""
    outputs = expected.readings[0].outputs if expected.readings else ()
    line = f", wrong beyond {budget.line_text(outputs[index].dtype)}" if index < len(outputs) else ""
    kind = getattr(budget, "kind", None)
    return f"{budget.text()}{line} ({f'{kind} function; ' if kind else ''}{budget.reason})"


def print_table(console: Console, table: Table) -> None:
    """`table` fitted to a terminal's width; elsewhere (a CI log, a file) as wide as its cells
    need, as nothing there cuts a line at 80 columns: fitted to those, a summary with five outcomes
    or more cut its headers ('unsuppor…', 'xp…'), and a header cut is a count nobody can name."""
    if console.is_terminal:
        console.print(table, soft_wrap=False)
        return
    needed = Measurement.get(console, console.options.update_width(_UNLIMITED), table).maximum
    fitted = console.width
    console.width = max(fitted, needed)
    try:
        console.print(table, soft_wrap=False)
    finally:
        console.width = fitted


_UNLIMITED = 100_000  # columns: wider than any table conform draws


def draw_family(console: Console, result, others: list | tuple = (), untold: int = 0) -> None:
    """One notable result in full, the rest of its family (see `families`) named after it, then
    the commands that replay it. In a terminal the result is a panel; elsewhere (a CI log, a file)
    it is plain lines under a rule, as long as they need to be: a box and its width wrap a long
    line into pieces that neither grep nor a copy-paste get back. The replay commands are outside
    the box either way, one line each (the terminal folds it, a copy of it is whole). `untold`: how
    many more of the family the run counted without keeping them."""
    body, outcome = failure_text(result, others, untold=untold), result.verdict.outcome
    style = STYLES.get(outcome, "white")
    if console.is_terminal:
        console.print(Panel(body, title=outcome.upper(), border_style=style))
    else:
        console.rule(outcome.upper(), style=style)
        console.print(body, soft_wrap=True)
    for line in replay_lines(result):
        console.print(line, style="dim", soft_wrap=True, highlight=False, markup=False)
    if not console.is_terminal:
        console.print()


def failure_text(result, others: list | tuple = (), verdict_line: bool = True, untold: int = 0) -> Text:
    """What a family's panel says: the first result in full (what was asked, expected and came
    back, and where they differ), the others named, and the minimal case hypothesis shrank to.
    Without `verdict_line`, the outcome and message are left to the caller, which shows them first."""
    example, verdict = result.example, result.verdict
    body = Text()
    variant = ", ".join(f"{key}: {value}" for key, value in _variant_items(result))
    body.append(f"{example.id}" + (f"  [{variant}]" if variant else "") + "\n", style="bold")
    body.append(f"source: {example.source}\n")
    if example.spec:
        body.append(f"spec: {example.spec}\n")
    for name, array in example.inputs.items():
        body.append(f"input {name}: {'(omitted, empty name)' if array is None else describe(array)}\n")
    for name, value in example.attributes.items():
        body.append(f"attribute {name}: {describe(value) if hasattr(value, 'dtype') else value!r}\n")
    if result.expected.is_valid:
        for reading in result.expected.readings[:3]:
            for index, output in enumerate(reading.outputs):
                body.append(f"expected ({reading.label}){_output_name(index, reading.outputs)}: {describe(output)}\n")
        for index, budget in enumerate(result.expected.budgets):
            if isinstance(budget, OutputCheck):
                body.append(f"budget{_output_name(index, result.expected.budgets)}: {_budget_text(budget, result.expected, index)}\n")
    else:
        body.append(f"expected: rejection ({result.expected.invalid.rule}: {result.expected.invalid.sentence})\n")
    for index, array in enumerate(result.actual):
        body.append(f"actual{_output_name(index, result.actual)}: {describe(array)}\n")
    if verdict_line:
        body.append(f"{verdict.outcome}: {verdict.message}\n", style=STYLES.get(verdict.outcome, ""))
    for index, found in enumerate(verdict.mismatches):
        # The message holds the first mismatch's headline; the other outputs' are not in it.
        for line in found.details() if index == 0 else found.lines():
            body.append(line + "\n")
    body.append(_crash_text(result, others))
    if others or untold:
        body.append(_others_text(result, others, untold) + "\n", style=STYLES.get(verdict.outcome, ""))
    minimal = result.extra.get("minimal")
    if minimal and "skipped" in minimal:
        body.append(f"{minimal['skipped']}\n", style="dim")
    elif minimal:
        saved_as = f"saved as {minimal['file']}" if "file" in minimal else f"not saved: {minimal['unsaved']}"
        body.append(f"shrunk by hypothesis to a minimal case ({saved_as}):\n", style="bold")
        body.append(minimal["yaml"])
    saved = [m["file"] for m in (r.extra.get("minimal") for r in others) if m and "file" in m]
    if saved:
        body.append(f"the other groups' minimal cases: {', '.join(saved)}\n", style="dim")
    body.rstrip()
    return body


def _crash_text(result, others) -> str:
    """What running a crashed case again alone found (see runners.isolated.account), and, for a
    family of crashes, how many of them crash alone; '' for anything else."""
    forensics = result.extra.get("crash")
    if forensics is None:
        return ""
    from ..runners.isolated import account  # here: a report read back (`merge`) need not import the runners

    text = "" if forensics["alone"] is False else account(forensics) + "\n"  # else the message says it
    found = Counter(_alone_words(r.extra.get("crash")) for r in (result, *others))
    if others and len(found) > 1:
        text += f"of these {len(others) + 1} crashes: {', '.join(f'{count} {words}' for words, count in found.items())}\n"
    return text


def _alone_words(forensics: dict | None) -> str:
    alone = None if forensics is None else forensics["alone"]
    return {True: "crash alone", False: "do not crash alone"}.get(alone, "were not run again alone")


def _output_name(index: int, outputs) -> str:
    """' output 1' where an op has several outputs; nothing where it has one."""
    return f" output {index}" if len(outputs) > 1 else ""


def replay_lines(result) -> list[str]:
    """The commands that run a result again, and the minimal case hypothesis shrank it to."""
    minimal = result.extra.get("minimal") or {}
    return [f"replay: {result.replay}"] + ([f"replay the minimal case: {minimal['replay']}"] if "replay" in minimal else [])


def families(results) -> list[list]:
    """Notable results by family, each in run order, families in the order of their first member:
    a case-file case's results of one outcome (every type binding, input mode and optimization
    level), or a version's hypothesis cases of one outcome; but a version's unsupported cases by
    type binding, as what a runtime does not support is a type, whatever the case. The stored
    tests `generate` wrote are grouped as the cases they were written from (see `_case_family`)."""
    found: dict[tuple, list] = {}
    for result in results:
        example = result.example
        if result.outcome == UNSUPPORTED:
            kind = ("binding", _binding(result))
        else:
            kind = ("case", _case_family(example))
        found.setdefault((example.op, example.version.since_version, kind, result.outcome), []).append(result)
    return list(found.values())


def _case_family(example) -> str | None:
    """The case a result's family is named by: None for a version's hypothesis cases; a case
    file's case by its name; a stored test `generate` wrote by the case it was written from (its
    hypothesis cases as hypothesis'), any other stored test by its own name."""
    if example.source == "hypothesis":
        return None
    if example.source.startswith("golden:"):
        from ..golden import generated_case

        case = generated_case(example)
        if case is not None:
            return case or None
    return example.name


def _others_text(result, others, untold: int = 0) -> str:
    outcome = result.outcome
    if outcome == UNSUPPORTED:
        named = [r.example.name for r in others]
        more = len(others) + untold
        head = f"{outcome} too: {more} more {plural('case', more)} of {result.example.version.label} in {_binding(result)}"
    elif _case_family(result.example) is None:
        bindings = Counter(_binding(r) for r in others)
        named = [f"{label} ({count})" for label, count in bindings.items()]
        where = f"in {len(bindings)} {plural('type binding', len(bindings))}"
        head = f"{outcome} too: {len(others)} more {plural('hypothesis case', len(others))} of {result.example.version.label}, {where}"
    else:
        named = [_binding(r) for r in others]
        kinds = "type bindings and variants" if any(_variant(r) for r in others) else "type bindings"
        head = f"{outcome} too: this case in {len(others)} more of its {kinds}"
    total = len(named) + untold
    listed = ", ".join(named[:MAX_NAMED]) + (f" and {total - MAX_NAMED} more" if total > MAX_NAMED else "")
    where = "counted in the JSON report's tallies" if outcome in COUNTED else "each in the JSON report"
    return f"{head}: {listed} ({where})"


def _binding(result) -> str:
    """What tells a result from the rest of its family: its type binding, and its input mode and
    optimization level when the run had several."""
    variant = _variant(result)
    return f"{result.example.binding} [{variant}]" if variant else result.example.binding


def _variant(result) -> str:
    return ", ".join(value for _, value in _variant_items(result))


def _variant_items(result) -> list[tuple[str, str]]:
    """The input mode and optimization level a result ran with, where the run had several."""
    return [(key, str(result.extra[key])) for key in ("mode", "optimizations") if key in result.extra]


FAILING_SHOWN = FAILING + (LENIENT,)  # what fails a run, and what a runtime accepts that the text forbids


def render(results, console: Console, report_path: str | None = None, show: tuple[str, ...] = FAILING_SHOWN,
           notes: list[str] | None = None) -> None:
    """The console report of a run's Ledger (or of a list of results); `notes` are the run's
    summary notes where the JSON report has them already (`hints.run_notes`, worked out here otherwise)."""
    ledger = as_ledger(results)
    if ledger.total:  # a table of no rows is only its borders (a verify that could read none of its tests)
        print_table(console, summary_table(ledger))
    rows = ledger.profile.rows()
    if rows:
        print_table(console, precision_table(rows))
    grouped = families([r for r in ledger.kept if r.outcome in show])
    for first, *others in grouped[:MAX_DETAILED]:
        draw_family(console, first, others, ledger.unsupported_not_kept(first))
    if len(grouped) > MAX_DETAILED:
        left = sum(len(family) + ledger.unsupported_not_kept(family[0]) for family in grouped[MAX_DETAILED:])
        hidden = len(grouped) - MAX_DETAILED
        console.print(f"... and {left} more in {hidden} more {plural('family', hidden)}; every one is in the JSON report.",
                      soft_wrap=True, markup=False)
    for line in differing_variants(ledger):
        console.print(line, highlight=False, soft_wrap=True)
    for line in run_notes(ledger) if notes is None else notes:  # failures in one mode, refusals asking for static shapes
        console.print(f"note: {line}", style="bold", highlight=False, soft_wrap=True, markup=False)
    console.print(summary_line(tally_counts(ledger.summary_counts())), soft_wrap=True)
    if report_path:
        console.print(f"JSON report: {report_path}", soft_wrap=True, highlight=False, markup=False)


def unjudged_warning(console: Console, results, runtime: str = "the runtime") -> None:
    """The line a run ends with when most of its cases were unsupported (see hints.unjudged_line),
    printed last, after every report line: whatever the exit code, such a run has not judged the op."""
    line = unjudged_line(results, runtime)
    if line:
        console.print(f"warning: {line}", style="bold yellow", highlight=False, soft_wrap=True, markup=False)


def summary_line(counts: dict[str, int], where: str = "") -> Text:
    """'431 cases: 336 pass, 4 xfail', from a report's summary (`where` after 'cases')."""
    return Text.assemble((f"{counts['total']} cases{where}:", "bold"), f" {outcome_counts(counts) or 'none'}")


def failing_records(console: Console, doc: dict, strict: bool, listed: int = MAX_DETAILED) -> None:
    """A report's results that fail it, by family as a run's panels group them (at most `listed`
    families): the first member's line and replay, and the others named. Why `merge`, which draws
    no panels, exits as it does."""
    failing, _ = recorded_gate(doc, strict)
    shown = [_RecordView(r) for r in doc["results"] if r["outcome"] in failing and r["outcome"] != XPASS]
    grouped = families(shown)
    for first, *others in grouped[:listed]:
        record = first.record
        console.print(Text.assemble((record["outcome"].upper(), STYLES[record["outcome"]]), f" {record_name(record)}: {record['message']}"),
                      soft_wrap=True, highlight=False)
        if others:
            console.print(f"  {_others_text(first, others)}", style=STYLES[record["outcome"]], soft_wrap=True, highlight=False, markup=False)
        for line in replay_lines(first):
            console.print(f"  {line}", style="dim", soft_wrap=True, highlight=False, markup=False)
    if len(grouped) > listed:
        left, hidden = sum(len(family) for family in grouped[listed:]), len(grouped) - listed
        console.print(f"... and {left} more in {hidden} more {plural('family', hidden)}, each in the JSON report",
                      soft_wrap=True, markup=False)


class _RecordView:
    """A report record seen as the parts of a Result that `families`, `_others_text` and
    `replay_lines` read: `merge` has the shards' records, not their Results, and groups them as a
    run does."""

    def __init__(self, record: dict) -> None:
        self.record, self.outcome, self.replay = record, record["outcome"], record["replay"]
        self.extra = {key: record[key] for key in ("mode", "optimizations", "minimal") if key in record}
        self.example = _RecordExample(record)


class _RecordExample:
    """What a family reads of a record's case: op, version, source, name and type binding."""

    def __init__(self, record: dict) -> None:
        self.op, self.source, self.name = record["op"], record["source"], record["case"]
        self.version = _RecordVersion(record["op"], record["opset"])
        # The id is VERSION/NAME/BINDING, and a case's name may hold a '/'.
        self.binding = record["id"][len(f"{self.version.label}/{self.name}/"):]


class _RecordVersion:
    """A record's op version, as a family names it."""

    def __init__(self, op: str, since_version: int) -> None:
        self.since_version, self.label = since_version, f"{op}-{since_version}"


def expectation_news(console: Console, doc: dict, strict: bool) -> None:
    """A line for each xpass and each stale expectation of a report, saying whether it fails the run."""
    _, strict = recorded_gate(doc, strict)
    under_strict = " (fails the run under --strict)" if strict else ""
    flagged = [("XPASS", f"{record_name(r)}: {r['message']}") for r in doc["results"] if r["outcome"] == XPASS]
    flagged += [("STALE", stale_text(e["source"], e["reason"])) for e in doc.get("stale_expectations") or []]
    for flag, text in flagged:
        console.print(Text.assemble((flag, "bold yellow"), f" {text}{under_strict}"), soft_wrap=True, highlight=False)


def differing_variants(results) -> list[Text]:
    """One line per case whose outcome differs between input modes or optimization levels. A
    variant a case has no other outcome in passed (the ledger keeps only a case's other outcomes)."""
    facts = as_ledger(results).facts
    lines = []
    for case, outcomes in facts.variants_by_case.items():
        every = {variant: outcomes.get(variant, PASS) for variant in facts.variants}
        if len(set(every.values())) > 1:
            lines.append(Text.assemble((case, "bold"), " differs between variants: " +
                                       ", ".join(f"{v}: {o}" for v, o in sorted(every.items()))))
    return lines
