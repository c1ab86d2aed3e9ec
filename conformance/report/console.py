"""The console report, drawn with rich: a summary matrix and a readable diff for each failure."""

from __future__ import annotations

from collections import Counter, defaultdict

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..compare import AMBIGUOUS, CRASH, ERROR, FAIL, FALLBACK, LENIENT, OUTCOMES, PASS, TIMEOUT, UNSUPPORTED
from ..values import describe

STYLES = {PASS: "green", FAIL: "bold red", ERROR: "bold magenta", UNSUPPORTED: "yellow", AMBIGUOUS: "cyan",
          LENIENT: "blue", CRASH: "bold red", TIMEOUT: "bold red", FALLBACK: "bold red", "skipped": "dim",
          "xfail": "dim yellow", "xpass": "bold yellow"}
MAX_DETAILED = 25


def summary_table(results) -> Table:
    table = Table(title="conform: results by op version and dtype")
    table.add_column("op")
    table.add_column("version", justify="right")
    table.add_column("dtype")
    present = {r.outcome for r in results}
    shown = [o for o in OUTCOMES if o in present] or [PASS]
    for outcome in shown:
        table.add_column(outcome, justify="right", style=STYLES[outcome])
    groups: dict[tuple, Counter] = defaultdict(Counter)
    for result in results:
        example = result.example
        groups[(example.op, example.version.since_version, example.dtype)][result.outcome] += 1
    for (op, version, dtype), counts in sorted(groups.items()):
        table.add_row(op, str(version), dtype, *[str(counts.get(o, "")) for o in shown])
    return table


def failure_panel(result) -> Panel:
    example, verdict = result.example, result.verdict
    body = Text()
    variant = ", ".join(f"{k}: {result.extra[k]}" for k in ("mode", "optimizations") if k in result.extra)
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
            body.append(f"expected ({reading.label}): {describe(reading.outputs[0])}\n")
    else:
        body.append(f"expected: rejection ({result.expected.invalid.rule}: {result.expected.invalid.sentence})\n")
    for array in result.actual:
        body.append(f"actual: {describe(array)}\n")
    body.append(f"{verdict.outcome}: {verdict.message}\n", style=STYLES.get(verdict.outcome, ""))
    for found in verdict.mismatches:
        for line in found.lines()[1:]:
            body.append(line + "\n")
    body.append(f"replay: {result.replay}", style="dim")
    minimal = result.extra.get("minimal")
    if minimal and "skipped" in minimal:
        body.append(f"\n{minimal['skipped']}", style="dim")
    elif minimal:
        body.append("\nshrunk by hypothesis to a minimal case (saved as " + minimal["file"] + "):\n", style="bold")
        body.append(minimal["yaml"])
        body.append(f"replay the minimal case: {minimal['replay']}", style="dim")
    return Panel(body, title=verdict.outcome.upper(), border_style=STYLES.get(verdict.outcome, "white"))


def render(results, console: Console, report_path: str | None = None,
           show: tuple[str, ...] = (FAIL, ERROR, LENIENT, CRASH, TIMEOUT, FALLBACK)) -> None:
    console.print(summary_table(results))
    notable = [r for r in results if r.outcome in show]
    for result in notable[:MAX_DETAILED]:
        console.print(failure_panel(result))
    if len(notable) > MAX_DETAILED:
        console.print(f"... and {len(notable) - MAX_DETAILED} more; every one is in the JSON report.")
    for line in differing_variants(results):
        console.print(line, highlight=False)
    counts = Counter(r.outcome for r in results)
    line = ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts[o])
    console.print(f"[bold]{len(results)} cases:[/bold] {line or 'none'}")
    if report_path:
        console.print(f"JSON report: {report_path}")


def differing_variants(results) -> list[str]:
    """One line per case whose outcome differs between input modes or optimization levels."""
    by_case: dict[str, dict[str, str]] = defaultdict(dict)
    for result in results:
        variant = "/".join(str(result.extra[k]) for k in ("mode", "optimizations") if k in result.extra)
        if variant:
            by_case[result.example.id][variant] = result.outcome
    return [
        f"[bold]{case}[/bold] differs between variants: " + ", ".join(f"{v}: {o}" for v, o in sorted(outcomes.items()))
        for case, outcomes in by_case.items()
        if len(set(outcomes.values())) > 1
    ]
