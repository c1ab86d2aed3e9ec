"""Thin typer commands. Each hands off to plain functions; ConformError is caught once, in `main`.

Exit codes: 0 conformant, 1 non-conformant, 2 usage or input error, 3 provider or backend not
available, 4 an output file that cannot be written; each command's help says what they mean for it.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import signal
import sys
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List, NamedTuple, NoReturn, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from . import casefile, registry, runtime_log, strategies
from .errors import ConformError, OutputError, UnavailableError, UsageError
from .execute import (DEFAULT_MAX_ELEMENTS, RunOptions, at_level, check_case_ids_found, chose_nothing, left_out_ops, parse_choice,
                      parse_shapes, parse_shard, plan, planned_count, run_examples, select_examples, shard_scope, shrink_failures, streamed_examples,
                      unsaved_minimal_cases, whole_run)
from .parallel import WorkerPool, shrink_side_by_side, shrinks_side_by_side, worker_count
from .expectations import failing_outcomes, judging, named_ids, unmatched_entries, variant_of
from .expectations import load as load_expectations
from .expectations import judge_unmatched, not_judged_lines, stale_among
from .ledger import Ledger
from .expectations import WrittenFrom, read_as_entries, write_file as write_expectations
from .reference import covered_ops, for_op
from .report import console as console_report
from .report import exit_code, gate_record, json_report, plural
from .model import DEFAULT_SHAPES, MODES
from .output import STDOUT, Writes, check_writable, is_stdout, is_stream
from .runners import DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT, OPTIMIZATIONS, RunnerSpec, make_runner, runner_of
from .runners.base import ModelNeeds
from .runners.refusals import parse_options as parse_refusals
from .lifetime import interrupt, limit_worker_memory, settle_imports


def _exit_codes(zero: str, one: str | None, usage: str = "a usage or input error",
                unavailable: str | None = "a provider or backend not available") -> str:
    """A command's help epilog: what each exit code it can end with means (an error's, read from its class)."""
    codes = [f"0 {zero}", f"1 {one}" if one else None, f"{UsageError.exit_code} {usage}",
             f"{UnavailableError.exit_code} {unavailable}" if unavailable else None,
             f"{OutputError.exit_code} a report or golden folder that cannot be written", "130 interrupted"]
    return "Exit codes: " + "; ".join(code for code in codes if code) + "."


NOT_CONFORMANT = ("not (a fail, error, crash, timeout or fallback; also a lenient case under --strict-validation, an "
                  "unsupported one under --fail-on-unsupported, an imprecise one under --strict-precision, an xpass or a "
                  "stale expectation under --strict)")
EXIT_CODES = _exit_codes("conformant", NOT_CONFORMANT)
NO_WORKER = "no worker process could be started"  # what makes exit 3 for a command that runs no runtime
# The headings a command's --help lists its options under, in this order, by what they are for.
OPTION_SECTIONS = {
    "Choosing the cases": ("--op", "--all", "--opset", "--dtype", "--case", "--cases", "--only-cases", "--examples", "--seed",
                           "--no-hypothesis", "--no-yaml", "--shard", "--from", "--out", "--include-ambiguous", "--force"),
    "The runtime": ("--runner", "--provider", "--backend", "--refusal", "--against", "--mode", "--shapes", "--optimizations", "--timeout",
                    "--no-isolation", "--memory-limit", "--jobs"),
    "Judging": ("--strict-zero", "--strict-validation", "--fail-on-unsupported", "--strict-precision", "--max-elements", "--shrink",
                "--expect"),
    "Reports": ("--report-json", "--junit", "--html", "--write-expect", "--verbose", "--missing", "--json"),
    "CI gating": ("--strict", "--ci"),
}
_SECTION_OF = {option: section for section, options in OPTION_SECTIONS.items() for option in options}


class SectionedHelp(typer.core.TyperCommand):
    """A command whose --help lists its options under headings (OPTION_SECTIONS), where one list of
    thirty-odd options left a reader to find the few they came for."""

    def format_options(self, ctx, formatter) -> None:
        sections: dict[str, list] = {section: [] for section in (*OPTION_SECTIONS, "Options")}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                sections[_SECTION_OF.get(param.opts[0], "Options")].append(record)
        for section, records in sections.items():
            if records:
                with formatter.section(section):
                    formatter.write_dl(records)


app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None, help="Spec-conformance tests for ONNX operators.",
                  epilog=EXIT_CODES)
# Help and usage errors are click's plain text, not typer's rich panels: at 80 columns (a CI log,
# a common terminal) the panels cut option names ('--strict-validati…') and folded their help into
# columns 20 letters wide, and a usage error was a box a long message wrapped inside.
# Text is printed as it is (markup off: a message quoting a YAML list like `[float]`, or a verdict
# quoting a runtime's text, would lose it to rich's markup, and a `[/x]` in it would raise), and
# messages are never wrapped where a terminal would not wrap them (soft wrap): a CI log keeps each
# error, path and command on one line, as grep and a copy-paste need.
out = Console(markup=False, soft_wrap=True)
err = Console(stderr=True, markup=False, soft_wrap=True)
DEFAULT_REPORT_DIR = Path("reports")

# Options several commands share, declared once.
OPS = typer.Option([], "--op", help="Operator name, e.g. Slice (repeatable: their cases one op after another).")
ALL_OPS = typer.Option(False, "--all", help="Every op conform covers (see `conform list`).")
OPSET = typer.Option(None, "--opset", help="The version in force at this opset (default: every version; of several ops, "
                                           "one not yet at this opset is left out).")
DTYPES = typer.Option([], "--dtype", help="Only these dtypes (repeatable; of several ops, each op in those of them it allows).")
EXAMPLES = typer.Option(strategies.DEFAULT_EXAMPLES, "--examples", min=0, help="Hypothesis examples per op version x dtype.")
SEED = typer.Option(0, "--seed", help="Hypothesis seed: the same seed gives the same cases and ids.")
NO_HYPOTHESIS = typer.Option(False, "--no-hypothesis", help="Only the YAML cases.")
NO_YAML = typer.Option(False, "--no-yaml", help="Only the hypothesis cases.")
CASES = typer.Option([], "--cases", help="Extra case files or folders.")
ONLY_CASES = typer.Option([], "--only-cases", help="Use only these case files or folders (not the built-in ones).")
TIMEOUT = typer.Option(DEFAULT_TIMEOUT, "--timeout", min=MIN_TIMEOUT, max=MAX_TIMEOUT,
                       help=f"Seconds a case may take before it is a timeout (at most {MAX_TIMEOUT}).")
NO_ISOLATION = typer.Option(False, "--no-isolation", help="Run the runtime in this process (a crash ends the run).")
REFUSAL = typer.Option([], "--refusal", metavar="KIND=REGEX",
                       help="How the runtime says why it refused, added to its own vocabulary (repeatable; KIND: "
                            "no_kernel, unsupported or invalid; see docs/gating-your-runtime.md).")
MEMORY_LIMIT = typer.Option(None, "--memory-limit", min=0, metavar="MIB",
                            help="MiB of memory each worker process may allocate; a case that needs more is a crash "
                                 "(default: half this machine's memory, at least 2048; 0: no limit).")
REPORT_JSON = typer.Option(None, "--report-json", help="Where to write the JSON report (-: stdout, the console report then on stderr).")
CASE = typer.Option([], "--case", help="Only the case with this id (repeatable); see a report's 'replay'.")
STRICT_ZERO = typer.Option(False, "--strict-zero", help="Tell +0.0 from -0.0.")
STRICT_PRECISION = typer.Option(False, "--strict-precision",
                                help="An imprecise case (beyond its precision budget, within its wrong-answer line) fails "
                                     "(see docs/precision.md).")
MODE = typer.Option("input", "--mode", metavar="[input|initializer|constant|all]", help="Non-data inputs as graph inputs, initializers, Constant nodes, or all three: input|initializer|constant|all.")
SHAPES = typer.Option(DEFAULT_SHAPES, "--shapes", metavar="[symbolic|static]",
                      help="Graph inputs' dims: symbolic (one model for every shape) or static (each case's own dims, "
                           "for engines that need static shapes).")
# run's --mode and --shapes: unset, a run uses what its runner declares it needs (tract: static,
# initializer; see runners.base.ModelNeeds), else conform's defaults.
RUN_MODE = typer.Option(None, "--mode", metavar="[input|initializer|constant|all]",
                        help="Non-data inputs as graph inputs, initializers, Constant nodes, or all three: "
                             "input|initializer|constant|all (default: input, or what the runner needs: tract initializer).")
RUN_SHAPES = typer.Option(None, "--shapes", metavar="[symbolic|static]",
                          help="Graph inputs' dims: symbolic (one model for every shape) or static (each case's own dims) "
                               "(default: symbolic, or what the runner needs: tract static).")
JOBS = typer.Option(None, "--jobs", min=1, help="Worker processes (default, for runs big enough: one per core; 1: none).")
MAX_ELEMENTS = typer.Option(DEFAULT_MAX_ELEMENTS, "--max-elements", min=1, help="Refuse cases whose output would be larger.")


@app.command("list", cls=SectionedHelp, short_help="Covered op versions, their dtypes and YAML case counts.")
def list_command(
    ops: List[str] = typer.Option([], "--op", help="Only this op (repeatable; default: every covered op)."),
    all_ops: bool = ALL_OPS,
    cases: List[Path] = CASES,
    only_cases: List[Path] = ONLY_CASES,
) -> None:
    """Every covered op version, the dtypes its type constraints allow, and its YAML case count."""
    chosen = _chosen_ops(ops, all_ops) or tuple(covered_ops())
    counts = casefile.count_cases(casefile.case_roots(cases, only_cases))
    table = Table(title="conform: covered operators")
    for column in ("op", "version", "dtypes", "cases"):
        table.add_column(column)
    for op in chosen:
        reference = for_op(op)
        for version in registry.versions(op):
            dtypes = ", ".join(version.allowed(reference.dtype_param_of(version)))
            table.add_row(op, str(version.since_version), dtypes, str(counts.get((op, version.since_version), 0)))
    out.print(table, soft_wrap=False)  # a table fits its cells to the width itself


@app.command("coverage", cls=SectionedHelp, short_help="How much of the ai.onnx domain conform covers, op by op.",
             epilog=_exit_codes("the coverage was told", None, unavailable=None))
def coverage_command(
    missing: bool = typer.Option(False, "--missing", help="Also list the op versions conform does not cover, each with why."),
    json_path: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Also write the coverage as JSON here "
                                                                                 "(-: stdout, the table then on stderr)."),
    cases: List[Path] = CASES,
    only_cases: List[Path] = ONLY_CASES,
) -> None:
    """Every op version of the ai.onnx domain in onnx.defs against what conform covers: whether it
    is covered, the dtypes covered of those its primary type parameter allows, its YAML case count,
    and, for one not covered, why (what keeps conform from building its node, or "not yet"); then
    the totals. Without --missing, only the covered op versions are listed."""
    from .coverage import compute, write_json

    _check_writable((json_path, "the coverage JSON"))
    found = compute(casefile.case_roots(cases, only_cases))
    writes = Writes()
    if json_path is not None:
        with writes.attempt():
            write_json(json_path, found)
    _print_coverage(found, missing)
    if json_path is not None and not writes.failed:
        out.print(f"JSON: {_shown(json_path)}", highlight=False)
    _stop_if_unwritten(writes)


def _print_coverage(found, missing: bool) -> None:
    """The coverage as a table (the covered op versions, and with `missing` the others too), then the totals line."""
    table = Table(title=f"conform: coverage of the ai.onnx domain (onnx {found.onnx_version}, opset {found.latest_opset})")
    for column in ("op", "version", "covered", "dtypes", "cases"):
        table.add_column(column)
    for row in found.versions:
        if row.covered or missing:
            table.add_row(row.op, str(row.version), "yes" if row.covered else f"no: {row.reason}", _dtypes_cell(row), str(row.cases))
    out.print(table, soft_wrap=False)  # a table fits its cells to the width itself
    out.print(found.totals.line(), highlight=False)


def _dtypes_cell(row) -> str:
    """'12 of 13', and which are not covered where a covered version leaves some out."""
    uncovered = [d for d in row.allowed if d not in row.dtypes]
    left_out = f" (not {', '.join(uncovered)})" if row.covered and uncovered else ""
    return f"{len(row.dtypes)} of {len(row.allowed)}{left_out}"


@app.command("run", cls=SectionedHelp, short_help="Run an op's cases on a runtime and judge them by the spec.", epilog=EXIT_CODES)
def run_command(
    ops: List[str] = typer.Option([], "--op", help="Operator name, e.g. Slice; repeatable, the cases of each op in turn "
                                                   "(with --from: only these ops' tests)."),
    all_ops: bool = ALL_OPS,
    opset: Optional[int] = OPSET,
    dtypes: List[str] = DTYPES,
    provider: str = typer.Option("cpu", "--provider", metavar="[cpu|cuda|dml]", help="onnxruntime execution provider (or its name: CUDAExecutionProvider)."),
    backend: Optional[str] = typer.Option(None, "--backend", help="An onnx.backend-style MODULE[:ATTRIBUTE] to test instead."),
    runner: str = typer.Option("onnxruntime", "--runner", metavar="[onnxruntime|reference|openvino|tract]", help="The runtime: onnxruntime, onnx.reference, or OpenVINO or tract (extras: pip install \"conform[openvino]\")."),
    refusal: List[str] = REFUSAL,
    report_json: Optional[Path] = REPORT_JSON,
    case: List[str] = CASE,
    cases: List[Path] = CASES,
    strict_zero: bool = STRICT_ZERO,
    strict_validation: bool = typer.Option(False, "--strict-validation", help="Fail when a runtime accepts invalid input."),
    fail_on_unsupported: bool = typer.Option(False, "--fail-on-unsupported", help="Fail on unsupported cases."),
    strict_precision: bool = STRICT_PRECISION,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also detail ambiguous and unsupported cases."),
    examples: int = EXAMPLES,
    seed: int = SEED,
    no_hypothesis: bool = NO_HYPOTHESIS,
    no_yaml: bool = NO_YAML,
    shrink: int = typer.Option(4, "--shrink", min=0, help="Shrink the failures of at most this many version x dtype groups."),
    mode: Optional[str] = RUN_MODE,
    shapes: Optional[str] = RUN_SHAPES,
    optimizations: str = typer.Option("on", "--optimizations", metavar="[on|off|both]", help="onnxruntime graph optimizations."),
    timeout: float = TIMEOUT,
    no_isolation: bool = NO_ISOLATION,
    memory_limit: Optional[int] = MEMORY_LIMIT,
    max_elements: int = MAX_ELEMENTS,
    only_cases: List[Path] = ONLY_CASES,
    report_passes: bool = typer.Option(False, "--report-passes", help="Record every case whole in the JSON report, passes "
                                       "included (by default pass, ambiguous, xfail and unsupported cases are "
                                       "counted per op, version and dtype in its 'tallies')."),
    expect: Optional[Path] = typer.Option(None, "--expect", help="Expectations file: known deviations, each with a reason."),
    write_expect: Optional[Path] = typer.Option(None, "--write-expect", help="Write the current deviations as an expectations file, one entry per cause (with --expect: that file brought up to date, its comments and reasons kept)."),
    strict: Optional[bool] = typer.Option(None, "--strict/--no-strict", help="xpass and stale expectations fail the run (default with --ci)."),
    ci: bool = typer.Option(False, "--ci", help="CI mode: --strict, and JUnit + HTML reports under reports/."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Write a JUnit XML report here."),
    html_report: Optional[Path] = typer.Option(None, "--html", help="Write a self-contained HTML report here."),
    shard: str = typer.Option("1/1", "--shard", help="Run shard K of N (K/N): a deterministic 1/N of the cases."),
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, help="Worker processes (default, for runs big enough: one per core; failures are shrunk in workers too; 1: none)."),
    from_dirs: List[Path] = typer.Option([], "--from", help="Run golden tests as stored (test directories or folders of them) instead of generating cases."),
) -> None:
    """Run the cases of one op or several (or stored golden tests) on a runtime and compare with the expected outputs."""
    from .dtypes import dtype

    limit_worker_memory(memory_limit)
    chosen_ops = _chosen_ops(ops, all_ops)
    if from_dirs:
        _check_golden_run_options(chosen_ops, opset, "input" if mode is None else mode, cases, only_cases,
                                  DEFAULT_SHAPES if shapes is None else shapes)
    elif not chosen_ops:
        raise UsageError("--op is required (or --all, or --from DIR to run stored golden tests)")
    needs = ModelNeeds() if from_dirs else RunnerSpec(runner, provider, backend).model_needs()
    applied = _applied_needs(needs, mode, shapes)
    mode = applied.mode or ("input" if mode is None else mode)
    shapes = applied.shapes or (DEFAULT_SHAPES if shapes is None else shapes)
    options = RunOptions(
        ops=chosen_ops,
        opset=opset,
        dtypes=tuple(dtype(d).name for d in dtypes),
        case_ids=tuple(case),
        strict_zero=strict_zero,
        case_roots=casefile.case_roots(cases, only_cases),
        use_yaml=not no_yaml,
        use_hypothesis=not no_hypothesis,
        examples=examples,
        seed=seed,
        shrink=shrink,
        modes=parse_choice(mode, MODES, "--mode"),
        shapes=parse_shapes(shapes),
        states_model_options=bool(needs.words()),
        max_elements=max_elements,
        shard=parse_shard(shard),
        timeout=timeout,
        strict_validation=strict_validation,
        fail_on_unsupported=fail_on_unsupported,
        strict_precision=strict_precision,
    )
    left_out = _note_left_out_ops(options)
    needs_note = _needs_note(runner, applied)
    if needs_note:
        _note(needs_note)
    expectations = load_expectations(expect) if expect else []
    levels = parse_choice(optimizations, OPTIMIZATIONS, "--optimizations")
    refusals = parse_refusals(refusal)
    runners = [make_runner(runner, provider, backend, level, isolate=not no_isolation, timeout=options.timeout, refusals=refusals)
               for level in levels]
    default_name = _default_report_name(options, from_dirs, all_ops)
    path = report_json or DEFAULT_REPORT_DIR / default_name
    home = _report_home(path, default_name)
    junit = junit or (home.with_suffix(".xml") if ci else None)
    html_report = html_report or (home.with_suffix(".html") if ci else None)
    _check_writable((path, "the JSON report"), (junit, "the JUnit report"), (html_report, "the HTML report"),
                    (write_expect, "the expectations file"))
    skipped: list = []  # a golden run's, filled in as it reads the stored tests
    runner_info = runners[0].describe()
    strict = ci if strict is None else strict
    ledger = Ledger(judging(expectations, runner_info, failing_outcomes(options), strict),
                    lambda result: variant_of(result, runner_info), named_ids(expectations),
                    report_every_case=report_passes, keep_all=bool(write_expect),
                    spool_dir=_spool_dir(path), record=json_report.record_line,
                    several_variants=len(options.modes) * len(levels) > 1, names_unsupported=verbose,
                    traced=read_as_entries(options))
    try:
        with _Stops() as stops:
            with stops.work():
                spec = RunnerSpec(runner, provider, backend, refusals=refusals)
                if from_dirs:
                    execute, skipped = _golden_execution(from_dirs, options, jobs, spec, not no_isolation)
                else:
                    execute, skipped = _generated_execution(options, jobs, spec, not no_isolation), []
                for level, chosen_runner in zip(levels, runners):
                    hear = lambda result, level=level: ledger.add(at_level(result, level, len(levels)))
                    shrunk = execute(chosen_runner, level, hear, home.parent / "minimal", ledger.waiting)
                    ledger.settle(None if shrunk is None else _tagged(shrunk, level, len(levels)))
            ledger.finish()
            asked = _Asked(options, runner_info, strict, expectations, path, home, junit, html_report, write_expect,
                           from_dirs, skipped, needs_note, applied, left_out, shard, report_passes, verbose)
            _report_run(ledger, asked, stops)
    finally:
        ledger.close()


class _Asked(NamedTuple):
    """What a run was asked for that decides its reports: its options, the runtime, the
    expectations, where each report goes, and what the runner's needs and the op choice noted."""

    options: RunOptions
    runner_info: dict
    strict: bool
    expectations: list
    path: Path
    home: Path
    junit: Path | None
    html_report: Path | None
    write_expect: Path | None
    from_dirs: list
    skipped: list
    needs_note: str | None
    applied: object
    left_out: tuple
    shard: str
    report_passes: bool
    verbose: bool


def _report_run(ledger: Ledger, asked: _Asked, stops: "_Stops") -> NoReturn:
    """Everything a run writes and prints once its cases are judged, then its exit."""
    options, runner_info, strict, expectations = asked.options, asked.runner_info, asked.strict, asked.expectations
    path, home, junit, html_report, write_expect = asked.path, asked.home, asked.junit, asked.html_report, asked.write_expect
    from_dirs, skipped, needs_note, left_out = asked.from_dirs, asked.skipped, asked.needs_note, asked.left_out
    writes = Writes()
    writes.failed += unsaved_minimal_cases(ledger.kept)
    ran_ids = ledger.ran_named_ids
    unmatched = unmatched_entries(expectations, ledger.used, ledger.ran, runner_info)
    stale, unjudged = ([], []) if stops.cut_short else judge_unmatched(unmatched, options, ran_ids)
    written = []  # what the run wrote besides its JSON report, told after the console report
    if write_expect:
        with writes.attempt():
            run = WrittenFrom(ledger.everything, ledger.passing_of, ledger.unkept_variants_of, frozenset(ledger.entries_unkept))
            written.append(write_expectations(run, expectations, stale, runner_info, write_expect, options))
    # Recorded: the JUnit report and merge judge by it.
    gate = gate_record(options.strict_validation, options.fail_on_unsupported, strict, options.strict_precision)
    doc = json_report.ledger_document(ledger, runner_info, None if from_dirs else options.seed, _options_record(options) | gate)
    if needs_note:  # which of options.modes and options.shapes the runner's declaration chose, and why
        doc["options"]["runner_defaults"] = _needs_record(asked.applied)
        doc["notes"].insert(0, needs_note)
    if from_dirs:
        doc["options"]["from"] = [str(p) for p in from_dirs]
        doc["skipped"] = _skipped_records(skipped)
    doc["complete"] = not stops.cut_short
    doc["shard"] = asked.shard
    if left_out:
        doc["ops_left_out"] = [{"op": op, "reason": why} for op, why in left_out]
    doc["stale_expectations"] = _entry_records(stale)
    if options.shard[1] > 1:  # what `merge` judges stale: the entries no shard matched
        doc["unmatched_expectations"] = _entry_records(stale_among(unmatched, whole_run(options), ran_ids))
    if asked.report_passes:  # every case recorded whole: none counted in tallies besides
        every_case = {**doc, "tallies": []}
        if junit or html_report:  # they list every case too: read back from the spool (memory grows only here)
            written += _write_other_reports({**every_case, "results": _every_record(ledger)}, junit, html_report, strict, writes)
        reported = _write_json_report(path, every_case, writes, ledger.recorded_in_order(json_report.record_line))
    else:  # doc's records are whole for each family's first, bare past it: the file's come from memory and disk
        written += _write_other_reports(doc, junit, html_report, strict, writes)
        reported = _write_json_report(path, doc, writes, ledger.recorded_in_order(json_report.record_line))
    shown = console_report.FAILING_SHOWN + (("imprecise",) if options.strict_precision else ()) + \
        (("ambiguous", "unsupported") if asked.verbose else ())
    console_report.render(ledger, out, _shown(path) if reported else None, show=shown, notes=doc["notes"])
    _print_lines(written)
    console_report.expectation_news(out, doc, strict)
    for line in not_judged_lines(expectations, unjudged, ledger.ran, runner_info, options):
        out.print(line, style="dim", highlight=False)
    _print_skipped(skipped)
    with writes.attempt():
        _keep_worker_stderr(home)
    # Last of all: a run that judged little of the op must not end on a line that looks green.
    console_report.unjudged_warning(out, ledger, runner_info.get("name", "the runtime"))
    _end(stops, writes, reported, exit_code(doc), ledger.total, "cases")


def _every_record(ledger: Ledger) -> list[dict]:
    """Every case's record, in run order (a run with --report-passes)."""
    import json

    return [json.loads(line) for line in ledger.recorded_in_order(json_report.record_line)]


def _spool_dir(path: Path) -> Path | None:
    """Where a command spools its records: beside its JSON report, or in the system's temporary
    folder for a report written to standard output or a stream."""
    return None if is_stdout(path) or is_stream(path) else path.parent


def _write_json_report(path: Path, doc: dict, writes: Writes, lines=None) -> bool:
    """Write the JSON report, unless it cannot be (`writes` keeps why); whether it was written.
    `lines`: its records' lines, where they are not the document's own (json_report.write)."""
    with writes.attempt():
        json_report.write(path, doc, lines)
        return True
    return False


def _end(stops: "_Stops", writes: Writes, reported: bool, code: int, finished: int, what: str) -> NoReturn:
    """How a command that reports on its work ends, its reports written: each output that could not
    be written told (exit 4, the others written all the same), else an interruption (exit 130, the
    JSON report saying whether the work was done), else `code`."""
    if stops.cut_short:
        holds = f"the report holds the {finished} {what}" if reported else f"{finished} {what}"
        err.print(f"interrupted: {holds} finished so far (complete: false)")
    elif stops.heard:
        err.print(f"interrupted once all {finished} {what} had finished: the reports were written whole (complete: true)")
    _stop_if_unwritten(writes)
    raise typer.Exit(130 if stops.heard else code)


def _stop_if_unwritten(writes: Writes) -> None:
    """Each output that could not be written told, and exit 4 (the others were written all the same)."""
    for failure in writes.failed:
        _print_error(failure)
    if writes.failed:
        raise typer.Exit(OutputError.exit_code)


def _check_writable(*outputs: tuple[Path | None, str]) -> None:
    """Each file the command will write can be, and no two are one file (the last written would
    silently replace the other): found out before the work, not after it."""
    claimed: dict[Path, str] = {}
    for path, what in outputs:
        if path is None:
            continue
        check_writable(path, what)
        key = STDOUT if is_stdout(path) else path.resolve()
        if key == STDOUT:
            out.file = sys.stderr  # the console report around a report on stdout would make it unreadable
        elif is_stream(path):
            continue  # /dev/null or a pipe takes both
        if key in claimed:
            raise UsageError(f"{claimed[key]} and {what} would both be written to {path}: give each its own file")
        claimed[key] = what


def _applied_needs(needs: ModelNeeds, mode: str | None, shapes: str | None) -> ModelNeeds:
    """What the runner declares it needs (`needs`) of what the user left unset: an option given
    on the command line is the user's choice, whatever the runner declares."""
    return dataclasses.replace(needs, mode=needs.mode if mode is None else None, shapes=needs.shapes if shapes is None else None)


def _needs_note(runner: str, applied: ModelNeeds) -> str | None:
    """'tract: static shapes, initializer inputs (its runtime resolves shapes at load time)...':
    the run's note when a runner's declared needs chose its --shapes or --mode; None when none did."""
    if not applied.words():
        return None
    return f"{runner}: {applied.words()} ({applied.reason}); give --shapes or --mode to choose otherwise"


def _needs_record(applied: ModelNeeds) -> dict:
    """The JSON report's `options.runner_defaults`: the options a runner's declaration chose, and why."""
    chosen = {"shapes": applied.shapes, "mode": applied.mode}
    return {key: value for key, value in chosen.items() if value} | {"reason": applied.reason}


def _check_golden_run_options(ops: tuple[str, ...], opset: int | None, mode: str, cases: list, only_cases: list,
                              shapes: str = DEFAULT_SHAPES) -> None:
    if opset is not None and not ops:
        raise UsageError("--opset with --from needs --op: the opset picks a version of that op")
    if mode != "input" or shapes != DEFAULT_SHAPES:
        option = "--mode" if mode != "input" else "--shapes"
        raise UsageError(f"{option} does not apply to --from: a golden test runs as stored (give it to generate, "
                         "whose tests record their mode and shapes)")
    if cases or only_cases:
        raise UsageError("--cases/--only-cases do not apply to --from: the cases are the stored tests")


def _default_report_name(options: RunOptions, from_dirs: list[Path], all_ops: bool = False) -> str:
    """`<op>[-<opset>].json`; of several ops `<A>+<B>[-<opset>].json` (see `_ops_in_name`), of
    `--all` `all[-<opset>].json`; for stored tests, after the folder they came from
    (`golden-Slice.json` for `--from golden/ --op Slice`), so that two stores' runs do not share a report."""
    ops = "all" if all_ops else _ops_in_name(options.ops)
    stem = "-".join(str(part) for part in (_stored_in(from_dirs), ops, options.opset or "") if part)
    return f"{stem}.json"


MAX_OPS_IN_NAME = 60  # characters of a report's name that name its ops: a few ops' names in full


def _ops_in_name(ops: tuple[str, ...]) -> str:
    """The ops as a file name names them: joined by '+', as many as fit MAX_OPS_IN_NAME, and how
    many more (`Abs+Acos+Add+5more`)."""
    shown = list(ops)
    while len("+".join(shown)) > MAX_OPS_IN_NAME and len(shown) > 1:
        shown.pop()
    more = len(ops) - len(shown)
    return "+".join(shown) + (f"+{more}more" if more else "")


def _chosen_ops(ops: list[str], all_ops: bool) -> tuple[str, ...]:
    """The ops `--op` names, each once, as conform spells them, in the order given; or with `--all`
    every covered op. A name conform does not cover is a UsageError listing those it does."""
    if all_ops and ops:
        raise UsageError("--all and --op together: --all already runs every covered op; give one or the other")
    named = covered_ops() if all_ops else [for_op(op).op for op in ops]
    return tuple(dict.fromkeys(named))


def _note_left_out_ops(options: RunOptions) -> tuple[tuple[str, str], ...]:
    """Each op of several the run leaves out (see execute.versions_by_op), told in a note; those ops, with why."""
    left_out = left_out_ops(options) if options.ops else ()
    for op, why in left_out:
        _note(f"left out of the run: {why}")
    return left_out


def _run_label(options: RunOptions) -> str:
    """What a progress bar calls the run: its op, or how many ops it has."""
    return options.op if len(options.ops) <= 1 else f"{len(options.ops)} ops"


def _stored_in(from_dirs: list[Path]) -> str:
    """A file name's part for the folders stored tests are run from ('' for none): the first one's
    name (`.` read as the folder it is), and how many more there are."""
    if not from_dirs:
        return ""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", from_dirs[0].name or from_dirs[0].resolve().name or "root").lstrip(".") or "stored"
    return name + (f"+{len(from_dirs) - 1}" if len(from_dirs) > 1 else "")


def _generated_execution(options: RunOptions, jobs: int | None, spec: RunnerSpec, isolate: bool):
    """How a generated run executes at one optimization level: serially, or across worker processes."""
    units = plan(options)
    workers = worker_count(jobs, len(units))
    # With --case, drawn first: a misspelt id is told before any case runs.
    selected = select_examples(options, units) if workers == 1 and options.case_ids else None

    def execute(runner, level: str, on_result, shrunk_into: Path, waiting) -> list:
        """Each of the level's results given to `on_result` as it comes; then the failing ones
        (`waiting()`: those heard and not yet judged, in order) with the failing groups' minimal
        cases attached (written to `shrunk_into`)."""
        leveled = dataclasses.replace(spec, optimizations=level)
        if workers == 1:
            examples = streamed_examples(options, units) if selected is None else selected
            total = planned_count(units, options) if selected is None else len(selected) * len(options.modes)
            _with_progress(_run_label(options), total, on_result,
                           lambda advance, _: run_examples(examples, runner, options, advance, collect=False))
            side_by_side = (lambda tasks: shrink_side_by_side(tasks, options, leveled, _note)) \
                if shrinks_side_by_side(jobs) else None
            return shrink_failures(waiting(), runner, options, shrunk_into, side_by_side)
        with WorkerPool.for_units(units, workers, options, leveled, isolate, _note) as pool:
            _with_progress(f"{_run_label(options)} ({workers} jobs)", planned_count(units, options), on_result,
                           lambda advance, _: pool.run(units, advance, collect=False))
            return shrink_failures(waiting(), runner, options, shrunk_into, pool.minimal_cases)

    return execute


def _golden_execution(paths: list[Path], options: RunOptions, jobs: int | None, spec: RunnerSpec, isolate: bool):
    """How a golden run executes at one optimization level (the stored tests the options choose,
    each run as stored: serially, or read and run across worker processes), and the tests it
    skips, with why (filled in as it reads them)."""
    from .golden import GoldenUnit, golden_units, run_golden

    units = golden_units(paths)
    workers = worker_count(jobs, len(units))
    skipped: list = []
    total = _golden_count(units, options)

    def execute(runner, level: str, on_result, shrunk_into: Path, waiting) -> None:
        """Each stored test's result given to `on_result` (none is shrunk: they hold no hypothesis
        group to search)."""
        skipped.clear()  # heard as each unit is read, so an interrupted run's report lists them too
        if workers == 1:
            everything = GoldenUnit(tuple(p for unit in units for p in unit.paths))
            run = _with_progress("golden tests", total, on_result,
                                 lambda advance, skip: run_golden(everything, runner, options, advance, skip), skipped.extend)
        else:
            leveled = dataclasses.replace(spec, optimizations=level)
            with WorkerPool.for_units(units, workers, options, leveled, isolate, _note) as pool:
                run = _with_progress(f"golden tests ({workers} jobs)", total, on_result,
                                     lambda advance, skip: pool.run_golden(units, advance, skip), skipped.extend)
        _check_golden_selection(run, paths, options)

    return execute, skipped


def _golden_count(units: list, options: RunOptions) -> int | None:
    """How many stored tests the run reads, when each will be run or skipped; None when the options
    choose among them (an op, dtype, case or shard), as which are chosen is known only once read."""
    from .golden import chooses_among

    return None if chooses_among(options) else sum(len(unit.paths) for unit in units)


def _check_golden_selection(run, paths: list[Path], options: RunOptions) -> None:
    """As `check_selection` for a generated run: every `--case` found, and at least one test run."""
    check_case_ids_found([r.example for r in run.results], options)
    if chose_nothing(bool(run.results), options, lambda: run.chosen_in_a_shard):
        found = sorted(run.found) or ["none that conform can run"]
        raise UsageError(f"no golden test to run{shard_scope(options)} under {', '.join(map(str, paths))} with these options "
                         f"(tests found: {', '.join(found)}; skipped: {len(run.skipped)})")


def _skipped_records(skipped) -> list[dict]:
    return [{"path": str(p), "reason": f"skipped: {why}"} for p, why in skipped]


def _print_skipped(skipped) -> None:
    for skipped_path, why in skipped:
        out.print(f"skipped: {why}: {skipped_path}", highlight=False)


def _write_other_reports(doc: dict, junit: Path | None, html_path: Path | None, strict: bool, writes: Writes) -> list[str]:
    """Write the JUnit and HTML reports asked for, each whatever became of the other (`writes`
    keeps why one could not be); a line for each written, to print after the console report,
    beside the JSON report's path (printed before it, they led a CI log's summary)."""
    from .report import html, junit as junit_report

    told = []
    if junit:
        with writes.attempt():
            junit_report.write(junit, doc, strict)
            told.append(f"JUnit report: {junit}")
    if html_path:
        with writes.attempt():
            html.write(html_path, doc)
            told.append(f"HTML report: {html_path}")
    return told


def _print_lines(lines: list[str]) -> None:
    for line in lines:
        out.print(line, highlight=False)


def _entry_records(entries: list) -> list[dict]:
    return [{"source": e.source, "reason": e.reason} for e in entries]


@app.command("merge", cls=SectionedHelp, epilog=_exit_codes("conformant (the shards' results together, as one run's)", NOT_CONFORMANT,
                                           "a usage or input error, or a shard missing or interrupted", None))
def merge_command(
    reports: List[Path] = typer.Argument(..., metavar="REPORT...", help="JSON reports of the shards of one run."),
    report_json: Path = typer.Option(DEFAULT_REPORT_DIR / "merged.json", "--report-json", help="Where to write the merged JSON (-: stdout)."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Also write JUnit XML."),
    html_report: Optional[Path] = typer.Option(None, "--html", help="Also write HTML."),
    strict: bool = typer.Option(False, "--strict", help="xpass and stale expectations fail the merge (JUnit and exit code)."),
) -> None:
    """Merge shard reports into one JSON (and JUnit/HTML) report."""
    from .report.merge import merge, why_incomplete

    _check_writable((report_json, "the merged JSON report"), (junit, "the JUnit report"), (html_report, "the HTML report"))
    doc = merge(reports)
    writes = Writes()
    reported = _write_json_report(report_json, doc, writes)
    written = _write_other_reports(doc, junit, html_report, strict, writes)
    console_report.failing_records(out, doc, strict)
    console_report.expectation_news(out, doc, strict)
    out.print(console_report.summary_line(doc["summary"], f" from {len(reports)} reports"), soft_wrap=True)
    if reported:
        out.print(f"JSON report: {_shown(report_json)}", soft_wrap=True, highlight=False, markup=False)
    _print_lines(written)
    _stop_if_unwritten(writes)
    if not doc["complete"]:
        # The cases of a missing or interrupted shard were never judged: not a pass, whatever the rest say.
        raise UsageError(f"the merged report is incomplete: {why_incomplete(doc)}")
    raise typer.Exit(exit_code(doc, strict))  # as the shards' run was told, and --strict here too


def _tagged(results: list, level: str, levels: int) -> list:
    return [at_level(r, level, levels) for r in results]


class _Stops:
    """SIGINT and SIGTERM in a command that reports on its work. Within `work()` the first one
    stops the work cleanly (`cut_short`; `bool()` says so too); after it, and from the end of the
    work until the command ends, they are heard (`heard`) but stop nothing, so that what the work
    found is reported whole: each report written, the console report printed (well under a
    second). A signal ignored when the command started (SIGINT, in a job a shell started in the
    background) stays ignored."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __enter__(self) -> "_Stops":
        self.cut_short = self.heard = False
        self._previous = {number: signal.getsignal(number) for number in self.SIGNALS}
        self._handle(self._hear)
        return self

    def __exit__(self, kind, error, trace) -> None:
        for number, previous in self._previous.items():
            signal.signal(number, signal.SIG_DFL if previous is None else previous)  # None: not set from Python

    def __bool__(self) -> bool:
        return self.cut_short

    @contextmanager
    def work(self) -> Iterator[None]:
        """Within it, the first SIGINT or SIGTERM ends the block, cut short."""
        self._handle(self._stop)
        try:
            yield
        except KeyboardInterrupt:
            self.cut_short = self.heard = True
        finally:
            self._handle(self._hear)

    def _handle(self, handler) -> None:
        for number, previous in self._previous.items():
            if previous is not signal.SIG_IGN:
                signal.signal(number, handler)

    def _stop(self, number, frame) -> NoReturn:
        self._handle(self._hear)  # a second signal must not cut short the clean stop of the first
        interrupt()

    def _hear(self, number, frame) -> None:
        self.heard = True


@contextmanager
def _interruptible() -> Iterator[_Stops]:
    """Within it, SIGINT and SIGTERM stop the work cleanly; what it gives is true once one has."""
    with _Stops() as stops, stops.work():
        yield stops


@app.command("generate", cls=SectionedHelp, short_help="Write golden test data in the ONNX backend-test layout.",
             epilog=_exit_codes("every test written (or listed as skipped in the manifest)", None, unavailable=NO_WORKER))
def generate_command(
    ops: List[str] = OPS,
    all_ops: bool = ALL_OPS,
    out_dir: Path = typer.Option(..., "--out", help="Folder to write test_<name>/ directories and manifest.json into."),
    opset: Optional[int] = OPSET,
    dtypes: List[str] = DTYPES,
    examples: int = EXAMPLES,
    seed: int = SEED,
    cases: List[Path] = CASES,
    no_hypothesis: bool = NO_HYPOTHESIS,
    no_yaml: bool = NO_YAML,
    only_cases: List[Path] = ONLY_CASES,
    case: List[str] = CASE,
    include_ambiguous: bool = typer.Option(False, "--include-ambiguous", help="Also write cases whose spec reading is ambiguous."),
    force: bool = typer.Option(False, "--force", help="Replace test directories that already exist."),
    mode: str = typer.Option("input", "--mode", metavar="[input|initializer|constant]",
                             help="Non-data inputs stored as graph inputs (fed from .pb files), initializers or Constant "
                                  "nodes: one mode a folder (for all three, three --out folders)."),
    shapes: str = SHAPES,
    jobs: Optional[int] = JOBS,
) -> None:
    """Write golden test data (ONNX backend-test layout) with expected outputs from the reference."""
    from .dtypes import dtype
    from .golden import GenerateOptions, generate, generate_units, generated_mode, names_taken, selection

    chosen_ops = _chosen_ops(ops, all_ops)
    if not chosen_ops:
        raise UsageError("--op is required (or --all)")
    options = RunOptions(
        ops=chosen_ops, opset=opset, dtypes=tuple(dtype(d).name for d in dtypes),
        case_roots=casefile.case_roots(cases, only_cases), use_yaml=not no_yaml, use_hypothesis=not no_hypothesis,
        examples=examples, seed=seed, case_ids=tuple(case), modes=(generated_mode(mode),), shapes=parse_shapes(shapes),
    )
    _note_left_out_ops(options)
    writing = GenerateOptions(out_dir, force, include_ambiguous, seed, selection(options, include_ambiguous),
                              options.modes[0], options.shapes)
    units = plan(options)
    workers = worker_count(jobs, len(units))

    def write_all(tasks, hand_out) -> None:
        with _pool_running_no_runtime(tasks, workers, options) as pool:
            pool.write_tests(tasks, hand_out)

    with _interruptible() as interrupted:
        # Workers write as they go: where a test may be there already, and is not to be replaced,
        # every case is drawn first, so that nothing is written when one would be.
        # With --case, in this process: a few tests, and a misspelt id is told before anything is written.
        none_taken = not options.case_ids and (force or not names_taken(units, options, out_dir))
        if workers > 1 and none_taken:
            manifest = generate_units(units, options, writing, write_all)
        elif none_taken:  # drawn as they are written: memory flat in the number of tests
            examples = streamed_examples(options, units)
            first = next(examples, None)  # with nothing to write, says so before the folder is made
            manifest = generate(itertools.chain([first] if first is not None else [], examples), writing, none_taken=True)
        else:
            manifest = generate(select_examples(options, units), writing)
    if interrupted:  # before the first test, or while the manifest was written
        err.print(f"interrupted: {out_dir / 'manifest.json'} lists none of this run's tests; "
                  "the same command with --force finishes the job")
        raise typer.Exit(130)
    written = sum(t["status"].startswith("written") for t in manifest.this_run)
    skipped = len(manifest.this_run) - written
    out.print(f"{written} tests written to {out_dir}; {skipped} listed as skipped in {out_dir / 'manifest.json'}", highlight=False)
    _keep_worker_stderr(DEFAULT_REPORT_DIR / "generate.json")  # not among the tests: the folder holds tests only
    if not manifest.finished:
        err.print(f"interrupted: the manifest lists the {len(manifest.this_run)} cases done so far (complete: false); "
                  "the same command with --force finishes the job")
        raise typer.Exit(130)
    if not manifest["complete"]:
        err.print(f"note: {out_dir / 'manifest.json'} stays complete: false: it names under 'unfinished' the "
                  "generate into this folder that was interrupted; run it again with --force to finish it")


def _pool_running_no_runtime(units: list, workers: int, options: RunOptions) -> WorkerPool:
    """Worker processes for work that runs no runtime (`verify`, `generate`): no runner is ever
    made in them, so the runner spec and the options' timeout are never used, and nothing needs watching."""
    return WorkerPool.for_units(units, workers, options, RunnerSpec(), False, _note)


@app.command("verify", cls=SectionedHelp, epilog=_exit_codes("every stored output is one the spec allows", "at least one is not, or a stored test cannot be read",
                                            unavailable=NO_WORKER))
def verify_command(
    paths: List[Path] = typer.Argument(..., metavar="PATH...", help="Test directories, or folders of them."),
    report_json: Optional[Path] = REPORT_JSON,
    strict_zero: bool = STRICT_ZERO,
    strict_precision: bool = STRICT_PRECISION,
    max_elements: int = MAX_ELEMENTS,
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, help="Worker processes (default, for folders big enough: one per core; 1: none)."),
) -> None:
    """Check stored golden outputs against conform's reference."""
    from .golden import GoldenUnit, Unreadable, agreeing_outcome, golden_units, verify_unit

    path = report_json or DEFAULT_REPORT_DIR / "verify.json"
    _check_writable((path, "the JSON report"))
    options = RunOptions(op="", strict_zero=strict_zero, max_elements=max_elements)
    units = golden_units(paths, verify=True)
    workers = worker_count(jobs, len(units))
    # Every data set's record is in the report, spooled to disk as it comes: a folder of any size
    # is verified in bounded memory, the disagreeing verdicts alone kept whole for the console.
    ledger = Ledger(report_every_case=True, spool_dir=_spool_dir(path),
                    record=json_report.record_line)
    skipped = []
    total = sum(len(unit.paths) for unit in units)  # each test is verified or skipped
    try:
        with _Stops() as stops:
            with stops.work():
                if workers == 1:
                    everything = GoldenUnit(tuple(p for unit in units for p in unit.paths), verify=True)
                    _with_progress("verify", total, ledger.add,
                                   lambda advance, skip: verify_unit(everything, options, advance, skip), skipped.extend)
                else:
                    with _pool_running_no_runtime(units, workers, options) as pool:
                        _with_progress(f"verify ({workers} jobs)", total, ledger.add,
                                       lambda advance, skip: pool.run_golden(units, advance, skip), skipped.extend)
            ledger.finish()
            unreadable = [s for s in skipped if isinstance(s, Unreadable)]
            skipped = [s for s in skipped if not isinstance(s, Unreadable)]
            if not ledger.total and not unreadable and not stops.cut_short:
                first, why = skipped[0]
                raise UsageError(f"nothing to verify under {', '.join(map(str, paths))}: all {len(skipped)} tests found were "
                                 f"skipped (the first, {first}: {why})")
            # What judged the stored outputs, besides where they are: --strict-zero turns passes into fails.
            judged_by = {"paths": [str(p) for p in paths], "strict_zero": strict_zero, "max_elements": max_elements,
                         "strict_precision": strict_precision}
            doc = json_report.ledger_document(ledger, {"name": "golden data"}, None, judged_by)
            del doc["tallies"]  # every data set is recorded whole: none is only counted
            doc["skipped"] = _skipped_records(skipped)
            doc["unreadable"] = [{"path": str(p), "reason": why} for p, why in unreadable]
            doc["complete"] = not stops.cut_short
            writes = Writes()
            reported = _write_json_report(path, doc, writes, ledger.recorded_in_order(json_report.record_line))
            console_report.render(ledger, out, _shown(path) if reported else None,
                                  show=("fail", "error", "lenient") + (("imprecise",) if strict_precision else ()),
                                  notes=doc["notes"])
            _print_skipped(skipped)
            _print_unreadable(unreadable)
            with writes.attempt():
                _keep_worker_stderr(_report_home(path, "verify.json"))
            agrees = all(agreeing_outcome(outcome, strict_precision) for outcome, count in ledger.summary_counts().items() if count)
            _end(stops, writes, reported, 0 if agrees and not unreadable else 1, ledger.total, "data sets")
    finally:
        ledger.close()


def _print_unreadable(unreadable: list) -> None:
    for _, why in unreadable:
        out.print(f"unreadable: {why}", style="bold red", highlight=False)
    if unreadable:
        out.print(f"{len(unreadable)} stored {plural('test', len(unreadable))} could not be read or checked", highlight=False)


@app.command("diff", cls=SectionedHelp, short_help="Run cases on two runners and show where they disagree.",
             epilog=_exit_codes("the two runners agree on every case", "they disagree on at least one"))
def diff_command(
    ops: List[str] = typer.Option([], "--op", help="Operator name, e.g. Slice; repeatable, the cases of each op in turn."),
    against: str = typer.Option(..., "--against", help="cpu|cuda|dml, onnxruntime, reference, openvino, tract, or an onnx.backend module."),
    opset: Optional[int] = OPSET,
    dtypes: List[str] = DTYPES,
    provider: str = typer.Option("cpu", "--provider", metavar="[cpu|cuda|dml]", help="The first runner's onnxruntime provider."),
    backend: Optional[str] = typer.Option(None, "--backend", help="The first runner as an onnx.backend module."),
    runner: str = typer.Option("onnxruntime", "--runner", metavar="[onnxruntime|reference|openvino|tract]", help="The first runner."),
    refusal: List[str] = typer.Option([], "--refusal", metavar="KIND=REGEX", help="The first runner's refusal vocabulary, added to its own (as in run)."),
    optimizations: str = typer.Option("on", "--optimizations", metavar="[on|off]", help="The first runner's onnxruntime graph optimizations (the second's are on)."),
    case: List[str] = CASE,
    cases: List[Path] = CASES,
    only_cases: List[Path] = ONLY_CASES,
    examples: int = EXAMPLES,
    seed: int = SEED,
    no_hypothesis: bool = NO_HYPOTHESIS,
    no_yaml: bool = NO_YAML,
    mode: str = MODE,
    shapes: str = SHAPES,
    strict_zero: bool = STRICT_ZERO,
    strict_precision: bool = STRICT_PRECISION,
    max_elements: int = MAX_ELEMENTS,
    timeout: float = TIMEOUT,
    no_isolation: bool = NO_ISOLATION,
    memory_limit: Optional[int] = MEMORY_LIMIT,
    jobs: Optional[int] = JOBS,
    report_json: Optional[Path] = REPORT_JSON,
) -> None:
    """Run the same cases on two runners; show where they disagree and which keeps to the spec."""
    limit_worker_memory(memory_limit)
    from .differential import DiffKeeper, DiffUnit, diffed, disagreement_families, outcome_pair, runner_from_name, runner_labels, spec_from_name
    from .dtypes import dtype

    chosen_ops = _chosen_ops(ops, False)
    if not chosen_ops:
        raise UsageError("--op is required: the op whose cases the two runners run (repeatable)")
    options = RunOptions(ops=chosen_ops, opset=opset, dtypes=tuple(dtype(d).name for d in dtypes), case_ids=tuple(case),
                         strict_zero=strict_zero, case_roots=casefile.case_roots(cases, only_cases), use_yaml=not no_yaml,
                         use_hypothesis=not no_hypothesis, examples=examples, seed=seed,
                         modes=parse_choice(mode, MODES, "--mode"), shapes=parse_shapes(shapes), max_elements=max_elements,
                         timeout=timeout, strict_precision=strict_precision)
    if optimizations not in OPTIMIZATIONS:  # one level: a diff runs each case once on each runner
        raise UsageError(f"--optimizations in a diff takes {' or '.join(OPTIMIZATIONS)}, not '{optimizations}'")
    left_out = _note_left_out_ops(options)
    default_name = _diff_report_name(options)
    path = report_json or DEFAULT_REPORT_DIR / default_name
    _check_writable((path, "the JSON report"))
    first_spec = RunnerSpec(runner, provider, backend, optimizations, parse_refusals(refusal))
    first = runner_of(first_spec, not no_isolation, options.timeout)
    second = runner_from_name(against, isolate=not no_isolation, timeout=options.timeout)
    labels = runner_labels(first, second)
    # Memory flat in the cases: every record spooled beside the report as it comes; in memory, of
    # the disagreements what the console draws, and counts.
    ledger = Ledger(report_every_case=True, spool_dir=_spool_dir(path),
                    record=json_report.record_line, keeps=DiffKeeper(), several_variants=len(options.modes) > 1,
                    names_unsupported=False)
    pairs: Counter = Counter()

    def hear(result) -> None:
        pairs[outcome_pair(result)] += 1
        ledger.add(result)

    try:
        with _Stops() as stops:
            with stops.work():
                units = plan(options)
                workers = worker_count(jobs, len(units))
                if workers == 1:
                    _with_progress(f"diff {_run_label(options)}", planned_count(units, options), hear,
                                   lambda advance, _: _diff_serially(diffed(streamed_examples(options, units), first, second, options), advance))
                else:
                    against_spec = spec_from_name(against)
                    diff_units = [DiffUnit(unit, against_spec) for unit in units]
                    with WorkerPool.for_units(diff_units, workers, options, first_spec, not no_isolation, _note) as pool:
                        _with_progress(f"diff {_run_label(options)} ({workers} jobs)", planned_count(units, options), hear,
                                       lambda advance, _: pool.run(diff_units, advance, collect=False))
            ledger.finish()
            doc = json_report.ledger_document(ledger, {"first": first.describe(), "second": second.describe()}, seed,
                                              _options_record(options) | {"against": against})
            del doc["tallies"]  # every case is recorded whole
            grouped = disagreement_families(ledger.kept)
            doc["summary"] |= _diff_summary(pairs, grouped)
            doc["complete"] = not stops.cut_short
            if left_out:
                doc["ops_left_out"] = [{"op": op, "reason": why} for op, why in left_out]
            writes = Writes()
            reported = _write_json_report(path, doc, writes, ledger.recorded_in_order(json_report.record_line))
            _print_diff(pairs, grouped, labels, _shown(path) if reported else None)
            with writes.attempt():
                _keep_worker_stderr(_report_home(path, default_name))
            _end(stops, writes, reported, 1 if grouped else 0, ledger.total, "cases")
    finally:
        ledger.close()


def _diff_serially(results, advance) -> None:
    """A serial diff's results, each heard (`advance`) as it is made."""
    for result in results:
        advance(result)


def _diff_report_name(options: RunOptions) -> str:
    """`diff-<op>[-<opset>].json`, its ops and opset named as a run's report names them
    (`_default_report_name`): a diff of Slice-13 and one of Slice-11 keep a report each."""
    return f"diff-{_default_report_name(options, [])}"


def _diff_summary(pairs: Counter, grouped: list[list]) -> dict:
    """What a diff's JSON summary adds to the first runner's outcomes: every case by the two
    runners' outcomes (`outcome_pairs`, first runner's then second's; `pairs` counts them), the
    disagreements, and the families they come in (`grouped`, see `disagreement_families`)."""
    from .differential import outcome_pairs

    return {"outcome_pairs": outcome_pairs(pairs), "disagreements": sum(map(len, grouped)), "disagreement_families": len(grouped)}


SHOWN_FAMILIES = 25  # on the console, one block a family; the JSON report holds every disagreement


def _print_diff(pairs: Counter, grouped: list[list], labels: tuple[str, str], path: str | None) -> None:
    """A diff's console report: the cases by the two runners' outcomes (`pairs` counts them), then a
    block for each family of disagreements (`grouped`, the worst first: see `disagreement_families`),
    then the count."""
    cases = sum(pairs.values())
    if cases:  # a table of no rows is only its borders
        console_report.print_table(out, _outcome_pairs_table(pairs, labels))
    for first, *others in grouped[:SHOWN_FAMILIES]:
        _draw_diff_family(first, others, labels)
    if len(grouped) > SHOWN_FAMILIES:
        left, hidden = sum(len(family) for family in grouped[SHOWN_FAMILIES:]), len(grouped) - SHOWN_FAMILIES
        out.print(f"... and {left} more {plural('disagreement', left)} in {hidden} more {plural('family', hidden)}; "
                  "every one is in the JSON report.", highlight=False)
    disagreeing = sum(len(family) for family in grouped)
    in_families = f" in {len(grouped)} {plural('family', len(grouped))}" if len(grouped) < disagreeing else ""
    report = f" JSON report: {path}" if path else ""
    out.print(f"{cases} {plural('case', cases)}, {disagreeing} {plural('disagreement', disagreeing)}"
              f"{in_families}.{report}", highlight=False)


def _outcome_pairs_table(counts: Counter, labels: tuple[str, str]) -> Table:
    """Every case counted by the first runner's outcome (a row each) and the second's (a column each)."""
    from .compare import OUTCOMES
    from .differential import outcome_pairs

    pairs = outcome_pairs(counts)
    seconds = [o for o in OUTCOMES if any(o in row for row in pairs.values())]
    title = f"conform diff: cases by outcome, {labels[0]} (rows) by {labels[1]} (columns)"
    table = Table(title=title, min_width=min(len(title), 80))
    table.add_column(f"{labels[0]} \\ {labels[1]}")
    for outcome in seconds:
        table.add_column(outcome, justify="right", style=console_report.STYLES[outcome])
    for outcome, row in pairs.items():
        table.add_row(Text(outcome, style=console_report.STYLES[outcome]), *[str(row.get(o, "")) for o in seconds])
    return table


def _draw_diff_family(result, others: list, labels: tuple[str, str]) -> None:
    """One family of disagreements: its headline (the first member's case, both outcomes, who
    keeps to the spec, how they differ), the first member in full and the others named; then the
    command that replays it. In a terminal a panel; elsewhere (a CI log) the headline, the rest
    indented under it, as long as they need to be, as `run` draws a family there."""
    from rich.panel import Panel

    from .differential import family_lines, headline, outcome_pair

    first, second = outcome_pair(result)
    style = console_report.STYLES.get(first if first != "pass" else second, "white")
    lines = family_lines(result, others, labels)
    if out.is_terminal:
        body = Text(headline(result, labels) + "\n", style="bold")
        body.append("\n".join(lines))
        # Wrapped inside the panel: soft wrap, the console's default, would cut each long line at its border.
        out.print(Panel(body, title=f"{labels[0]} {first.upper()}, {labels[1]} {second.upper()}", border_style=style), soft_wrap=False)
        out.print(f"replay: {result.replay}", style="dim", highlight=False)
        return
    out.print(Text(headline(result, labels), style=style), highlight=False)
    for line in lines:
        out.print(f"  {line}", highlight=False)
    out.print(f"  replay: {result.replay}", highlight=False)
    out.print()


@app.command("repro", cls=SectionedHelp, short_help="Write one case as a script for a bug report, without conform.",
             epilog=_exit_codes("the script was written", None, unavailable=None))
def repro_command(
    case_id: Optional[str] = typer.Argument(None, metavar="[ID]", help="The case's id (or give --case, as a replay command does)."),
    ops: List[str] = typer.Option([], "--op", help="The case's op (a replay command names it; default: read from the id)."),
    opset: Optional[int] = typer.Option(None, "--opset", help="The version in force at this opset (a replay command names "
                                                              "it; default: read from the id)."),
    dtypes: List[str] = DTYPES,
    case: List[str] = typer.Option([], "--case", help="The case's id, as a replay command names it (or the argument)."),
    cases: List[Path] = CASES,
    only_cases: List[Path] = ONLY_CASES,
    examples: int = EXAMPLES,
    seed: int = SEED,
    no_hypothesis: bool = NO_HYPOTHESIS,
    no_yaml: bool = NO_YAML,
    runner: str = typer.Option("onnxruntime", "--runner", metavar="[onnxruntime|reference|openvino|tract]", help="The runtime the script runs."),
    provider: str = typer.Option("cpu", "--provider", metavar="[cpu|cuda|dml]", help="onnxruntime execution provider."),
    backend: Optional[str] = typer.Option(None, "--backend", help="An onnx.backend-style MODULE[:ATTRIBUTE] the script runs instead."),
    mode: Optional[str] = typer.Option(None, "--mode", metavar="[input|initializer|constant]",
                                       help="How non-data inputs reach the node, as in run (one mode; default: input, or what "
                                            "the runner needs: tract initializer)."),
    shapes: Optional[str] = typer.Option(None, "--shapes", metavar="[symbolic|static]",
                                         help="Graph inputs' dims, as in run (default: symbolic, or what the runner needs: "
                                              "tract static)."),
    optimizations: str = typer.Option("on", "--optimizations", metavar="[on|off]", help="onnxruntime graph optimizations."),
    strict_zero: bool = STRICT_ZERO,
    max_elements: int = MAX_ELEMENTS,
    out_path: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="Where to write the script (-: stdout; default: "
                                            "reports/repro/<runner>/<mode>/<case>.py)."),
    # What a replay command may also say, taken so that `run` -> `repro` is one word changed; none changes the script.
    refusal: List[str] = typer.Option([], "--refusal", hidden=True),
    strict_validation: bool = typer.Option(False, "--strict-validation", hidden=True),
    fail_on_unsupported: bool = typer.Option(False, "--fail-on-unsupported", hidden=True),
    strict_precision: bool = typer.Option(False, "--strict-precision", hidden=True),
    timeout: float = typer.Option(DEFAULT_TIMEOUT, "--timeout", hidden=True),
    expect: Optional[Path] = typer.Option(None, "--expect", hidden=True),
    strict: Optional[bool] = typer.Option(None, "--strict/--no-strict", hidden=True),
) -> None:
    """Write the case a replay command names as a Python script that needs only numpy, onnx,
    ml_dtypes and the runtime: the same model conform built, the inputs and every expected reading
    as exact literals, the runtime's answer judged as conform judges it. The script prints both and
    exits 1 where they differ, 0 where they agree: `conform run ... --case ID` -> `conform repro ... --case ID`."""
    from .dtypes import dtype
    from .repro import ReproRequest, write_repro

    named = ([case_id] if case_id else []) + list(case)
    chosen = _repro_selection(named, ops, opset, no_yaml, no_hypothesis)
    applied = _applied_needs(RunnerSpec(runner, provider, backend).model_needs(), mode, shapes)  # as run builds its models
    mode, shapes = applied.mode or mode or "input", applied.shapes or shapes or DEFAULT_SHAPES
    options = RunOptions(**chosen, dtypes=tuple(dtype(d).name for d in dtypes), case_ids=tuple(named), strict_zero=strict_zero,
                         case_roots=casefile.case_roots(cases, only_cases), examples=examples, seed=seed,
                         modes=parse_choice(mode, MODES, "--mode"), shapes=parse_shapes(shapes), max_elements=max_elements)
    if len(options.modes) != 1:
        raise UsageError("--mode all: a script builds its model one way; give input, initializer or constant")
    if optimizations not in OPTIMIZATIONS:
        raise UsageError(f"--optimizations in a repro takes {' or '.join(OPTIMIZATIONS)}, not '{optimizations}'")
    spec = RunnerSpec(runner, provider, backend, optimizations, parse_refusals(refusal))
    needs_note = _needs_note(runner, applied)
    if needs_note:
        _note(needs_note)
    path, example = write_repro(ReproRequest(options, spec, options.modes[0], out_path))
    if not is_stdout(path):
        out.print(f"repro script for {example.id}: {path} (run it: python {path})", highlight=False)


def _repro_selection(named: list[str], ops: list[str], opset: int | None, no_yaml: bool, no_hypothesis: bool) -> dict:
    """Which op, version and source of cases a repro chooses from: as a replay command names them,
    or, for a bare id, as the id does (its op and version; hypothesis for a drawn case's name)."""
    from .repro import options_from_id

    if len(ops) > 1:
        raise UsageError(f"repro writes one case of one op, not {len(ops)} (--op {' --op '.join(ops)})")
    chosen = options_from_id(named[0]) if len(named) == 1 and not ops else {}
    if ops:
        chosen["op"] = _chosen_ops(ops, False)[0]
    if opset is not None:
        chosen["opset"] = opset
    if no_yaml or no_hypothesis or ops:
        chosen.update(use_yaml=not no_yaml, use_hypothesis=not no_hypothesis)
    if not chosen.get("op"):
        raise UsageError("name the case: conform repro ID, or a replay command with repro for run")
    return chosen


@app.command("check-backend", cls=SectionedHelp, short_help="What an adapter loses of each dtype and rank, round-tripped.",
             epilog=_exit_codes("nothing lost: every round trip came back whole, bit for bit, or was refused",
                                "something was lost, or a round trip crashed or hung"))
def check_backend_command(
    backend: Optional[str] = typer.Option(None, "--backend", help="The onnx.backend-style MODULE[:ATTRIBUTE] to check."),
    runner: Optional[str] = typer.Option(None, "--runner", metavar="[onnxruntime|reference|openvino|tract]",
                                         help="Check one of conform's own runners instead."),
    dtypes: List[str] = typer.Option([], "--dtype", help="Only these dtypes (repeatable; default: every tensor dtype)."),
    report_json: Optional[Path] = typer.Option(None, "--report-json", help="Also write every round trip as JSON here "
                                                                           "(-: stdout, the console report then on stderr)."),
    timeout: float = TIMEOUT,
    no_isolation: bool = NO_ISOLATION,
    memory_limit: Optional[int] = MEMORY_LIMIT,
) -> None:
    """Send every tensor dtype at ranks 0 to 4 and a size-0 shape through Identity and a Cast to the
    same type, with values that show a loss (NaN payloads, -0.0, int64 beyond 2**53, packed 4-bit
    values, non-ASCII strings), and say per dtype and shape what came back: ok, refused (the
    runtime may lack the kernel: fine), or LOST and how. A crash or hang costs its round trip only."""
    from .check_backend import Check, checked_dtypes, probes, render, run_probes
    from .dtypes import dtype

    if (backend is None) == (runner is None):
        raise UsageError("give --backend MODULE[:ATTRIBUTE] or --runner NAME (one of them)")
    limit_worker_memory(memory_limit)
    spec = RunnerSpec(runner=runner or "onnxruntime", backend=backend)
    names = list(dict.fromkeys(dtype(d).name for d in dtypes)) or checked_dtypes()
    _check_writable((report_json, "the JSON report"))
    chosen_runner = runner_of(spec, isolate=not no_isolation, timeout=timeout)
    check = Check(chosen_runner.describe())
    try:
        check.findings.extend(run_probes(chosen_runner, probes(names)))
    finally:
        getattr(chosen_runner, "close", lambda: None)()
    writes, reported = Writes(), False
    if report_json is not None:
        with writes.attempt():
            check.write(report_json)
            reported = True
        with writes.attempt():
            _keep_worker_stderr(_report_home(report_json, "check-backend.json"))
    render(check, out)
    if reported:
        out.print(f"JSON report: {_shown(report_json)}", highlight=False)
    _stop_if_unwritten(writes)
    raise typer.Exit(1 if check.failed else 0)


def _report_home(report: Path, default_name: str) -> Path:
    """Where a report stands for the files written beside it (the JUnit and HTML reports of --ci,
    shrunk cases, the worker log): the report itself, or for a report to a stream (stdout, a
    pipe), the default report under reports/."""
    return DEFAULT_REPORT_DIR / default_name if is_stream(report) else report


def _shown(report: Path) -> str:
    return "stdout" if report == STDOUT else str(report)


def _keep_worker_stderr(report: Path) -> None:
    """What the command's worker processes wrote to stderr (mostly a runtime's own warnings) kept in
    a log beside its report, `REPORT.stderr.log` (see runtime_log), and said in one line."""
    log = report.with_suffix(".stderr.log")
    lines, dropped = runtime_log.keep(log)
    if lines:
        cut = f", and {dropped:,} bytes more, dropped from the middle of what a worker wrote (the log says where)" if dropped else ""
        err.print(f"worker processes wrote {lines:,} {plural('line', lines)} to stderr, kept in {log}{cut} (a case that crashed "
                  f"or hung quotes in its verdict the last lines its runtime wrote during it)", highlight=False)


def _note(text: str) -> None:
    err.print(f"note: {text}", highlight=False)


def _with_progress(label: str, total: int | None, on_result, work, on_skipped=lambda skipped: None):
    """`work(on_result, on_skipped)`, each result and each skipped test (golden runs skip some)
    advancing a progress bar of `total` (None: unknown) when stderr is a terminal: the op being
    run and how many ops are done, cases done of all, cases a second, time taken and time left.
    A CI log (no terminal) gets none of it."""
    if not err.is_terminal:
        return work(on_result, on_skipped)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
               TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task(label, total=total, rate="")
        ops: dict[str, None] = {}  # in the order their first result came

        def advance(result):
            on_result(result)
            op = result.example.op
            if op not in ops:
                ops[op] = None
                if len(ops) > 1:
                    progress.update(task, description=f"{label}: {op} ({len(ops) - 1} {plural('op', len(ops) - 1)} done)")
            progress.advance(task)
            speed = progress.tasks[0].speed
            progress.update(task, rate=f"{speed:,.0f} cases/s" if speed else "")

        def skip(skipped: list) -> None:
            on_skipped(skipped)
            progress.advance(task, len(skipped))

        return work(advance, skip)


def _options_record(options: RunOptions) -> dict:
    return {
        "op": options.op,
        "ops": list(options.ops),
        "opset": options.opset,
        "dtypes": list(options.dtypes),
        "cases": list(options.case_ids),
        "strict_zero": options.strict_zero,
        "yaml": options.use_yaml,
        "hypothesis": options.use_hypothesis,
        "examples": options.examples,
        "modes": list(options.modes),
        "shapes": options.shapes,
        "seed": options.seed,
    }


def main() -> None:
    """Console-script entry point: the one place a ConformError becomes a message and an exit code."""
    settle_imports()
    try:
        app()
    except ConformError as error:
        _print_error(error.message)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


def _print_error(message: str) -> None:
    err.print(Text.assemble(("error:", "bold red"), f" {message}"), highlight=False)


if __name__ == "__main__":
    main()
