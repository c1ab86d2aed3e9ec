"""The console report: one panel per family of notable results, the rest of the family named in it."""

import dataclasses
import io
import re

import numpy as np
import pytest
from rich.console import Console

from conformance.compare import FAIL, LENIENT, OUTCOMES, PASS, UNSUPPORTED, Verdict
from conformance.execute import Result, RunOptions, select_examples
from conformance.reference.base import Expected
from conformance.report import console as console_report

CASE = "negative_step_int_max_end"
OTHER_CASE = "negative_start"


def yaml_examples(name):
    options = RunOptions(op="Slice", opset=13, use_hypothesis=False)
    return [e for e in select_examples(options) if e.name == name]


def drawn_examples(count=20):
    return select_examples(RunOptions(op="Slice", opset=13, use_yaml=False, examples=count, dtypes=("float", "int8")))


def results_of(examples, outcome=FAIL, **extra):
    return [Result(e, Expected(readings=()), Verdict(outcome, f"{outcome} of {e.id}"), extra=dict(extra)) for e in examples]


def rendered(results, show=console_report.FAILING_SHOWN) -> str:
    stream = io.StringIO()
    # Wide enough that no line wraps: what a panel says can be read back whole.
    console_report.render(results, Console(file=stream, width=2000, color_system=None), "report.json", show=show)
    return stream.getvalue()


def panels(text: str) -> list[str]:
    """Each family as drawn outside a terminal: a rule with its outcome, its lines, a blank line."""
    return re.findall(r"^─+ [A-Z]+ ─+\n.*?(?=\n\n)", text, flags=re.S | re.M)


def binding(example) -> str:
    return example.id.split("/", 2)[2]


def test_a_case_failing_in_every_binding_is_one_panel_that_names_the_other_bindings():
    examples = yaml_examples(CASE)
    assert len(examples) > console_report.MAX_NAMED + 1  # enough that the list is cut
    text = rendered(results_of(examples))
    [panel] = panels(text)
    assert examples[0].id in panel and f"fail of {examples[0].id}" in panel  # the first one in full
    assert not any(f"fail of {e.id}" in panel for e in examples[1:])  # the others only named
    others = [binding(e) for e in examples[1:]]
    assert f"this case in {len(others)} more of its type bindings: " in panel
    named = ", ".join(others[:console_report.MAX_NAMED])
    assert f": {named} and {len(others) - console_report.MAX_NAMED} more (each in the JSON report)" in panel
    assert f"{len(examples)} cases: {len(examples)} fail" in text


def test_different_cases_and_different_outcomes_of_one_case_are_separate_panels():
    first, second = yaml_examples(CASE), yaml_examples(OTHER_CASE)
    results = results_of(first[:3]) + results_of(first[3:5], LENIENT) + results_of(second[:2]) + results_of(second[2:4], PASS)
    found = panels(rendered(results))
    assert len(found) == 3
    assert [p.splitlines()[0].strip("─ ") for p in found] == ["FAIL", "LENIENT", "FAIL"]
    assert f"this case in 2 more of its type bindings: {binding(first[1])}, {binding(first[2])} (each" in found[0]
    assert f"this case in 1 more of its type bindings: {binding(first[4])} (each" in found[1]
    assert first[3].id in found[1] and second[0].id in found[2]
    assert not any(binding(e) in found[2] for e in second[2:4])  # passing results are in no panel


def test_a_case_of_one_binding_has_no_list_of_others():
    [panel] = panels(rendered(results_of(yaml_examples(CASE)[:1])))
    assert "too:" not in panel


def test_each_variant_of_a_case_is_named_by_its_binding_and_mode():
    example = yaml_examples(CASE)[0]
    results = results_of([example], mode="input") + results_of([example], mode="initializer")
    [panel] = panels(rendered(results))
    assert f"this case in 1 more of its type bindings and variants: {binding(example)} [initializer] (each" in panel


def test_a_versions_failing_hypothesis_cases_are_one_panel_with_each_binding_counted():
    examples = drawn_examples()
    by_binding = {}
    for example in examples:
        by_binding.setdefault(binding(example), []).append(example)
    assert len(by_binding) >= 2
    failing = [e for cases in by_binding.values() for e in cases[:3]]
    results = results_of(failing)
    second_group = len(by_binding[binding(failing[0])][:3])  # the first failure of the next binding
    minimal_file = "reports/minimal/shrunk_0123456789.yaml"
    results[second_group] = dataclasses.replace(results[second_group], extra={"minimal": {"file": minimal_file}})
    text = rendered(results)
    [panel] = panels(text)
    counts = {}
    for example in failing[1:]:
        counts[binding(example)] = counts.get(binding(example), 0) + 1
    listed = ", ".join(f"{label} ({count})" for label, count in counts.items())
    assert (f"fail too: {len(failing) - 1} more hypothesis cases of Slice-13, in {len(counts)} type bindings: {listed} (each"
            in panel)
    assert f"the other groups' minimal cases: {minimal_file}" in panel


def test_families_beyond_the_limit_are_counted_not_drawn(monkeypatch):
    monkeypatch.setattr(console_report, "MAX_DETAILED", 1)
    first, second = yaml_examples(CASE), yaml_examples(OTHER_CASE)
    text = rendered(results_of(first[:2]) + results_of(second[:3]))
    assert len(panels(text)) == 1
    assert "... and 3 more in 1 more family; every one is in the JSON report." in text
    monkeypatch.setattr(console_report, "MAX_DETAILED", 0)
    assert "... and 5 more in 2 more families; every one" in rendered(results_of(first[:2]) + results_of(second[:3]))


@pytest.mark.parametrize("outcome", [FAIL, LENIENT])
def test_families_keep_the_order_of_their_first_member(outcome):
    first, second = yaml_examples(CASE), yaml_examples(OTHER_CASE)
    results = results_of([second[0]], outcome) + results_of([first[0]], outcome) + results_of([second[1]], outcome)
    found = panels(rendered(results))
    assert [second[0].id in found[0], first[0].id in found[1]] == [True, True] and len(found) == 2


def test_unsupported_cases_are_one_panel_per_type_binding_naming_the_other_cases():
    first, second = yaml_examples(CASE), yaml_examples(OTHER_CASE)
    one, other = binding(first[0]), binding(first[1])
    chosen = [e for e in first + second if binding(e) in (one, other)]
    results = results_of(chosen, UNSUPPORTED) + results_of(first[2:4])
    found = panels(rendered(results, show=console_report.FAILING_SHOWN + (UNSUPPORTED,)))
    assert [p.splitlines()[0].strip("─ ") for p in found] == ["UNSUPPORTED", "UNSUPPORTED", "FAIL"]
    for panel, label in zip(found, (one, other)):
        members = [e for e in chosen if binding(e) == label]
        names = ", ".join(e.name for e in members[1:])
        assert f"unsupported too: {len(members) - 1} more case{'s' if len(members) > 2 else ''} of Slice-13 in {label}: {names} (counted in the JSON report's tallies)" in panel
    assert len(panels(rendered(results))) == 1  # unsupported is not shown unless asked for


def long_failure(message="fail: output 0 differs"):
    """A failing result whose spec sentence and replay command are longer than any console here is wide."""
    [example] = yaml_examples(CASE)[:1]
    example = dataclasses.replace(example, spec=" ".join(["a sentence of the spec"] * 8))
    replay = "conform run --op Slice --opset 13 --no-hypothesis --case " + example.id + " --runner onnxruntime --provider cpu"
    return Result(example, Expected(readings=()), Verdict(FAIL, message), replay=replay), replay


def drawn(results, terminal: bool, width=80) -> str:
    stream = io.StringIO()
    console_report.render(results, Console(file=stream, width=width, force_terminal=terminal, color_system=None), "r.json")
    return stream.getvalue()


def test_outside_a_terminal_a_family_is_plain_lines_none_wrapped_so_grep_and_copy_get_them_whole():
    result, replay = long_failure()
    assert len(replay) > 80 and len(result.example.spec) > 80
    text = drawn([result], terminal=False)
    lines = text.splitlines()
    assert f"replay: {replay}" in lines  # the command, whole, on a line of its own
    assert f"spec: {result.example.spec}" in lines and result.example.id in lines
    assert not re.search("[╭╰]", text)  # no box, whose width would cut the lines


def test_in_a_terminal_a_family_is_a_panel_with_its_replay_command_whole_below_it():
    result, replay = long_failure()
    text = drawn([result], terminal=True)
    assert re.search(r"╭─+ FAIL ─+╮", text) and "│ Slice-13/" in text
    lines = text.splitlines()
    replay_line = lines.index(f"replay: {replay}")  # not folded into the box's width
    assert lines[replay_line - 1].startswith("╰")


@pytest.mark.parametrize("message", ["expected [/x] and [bold] from the runtime", "dtypes: [float]"])
def test_text_in_square_brackets_is_printed_as_it_is_not_read_as_markup(message):
    result, _ = long_failure(message)
    for terminal in (False, True):
        assert f"fail: {message}" in drawn([result], terminal, width=400)


def summary_lines(text: str) -> list[str]:
    """The summary table's lines, from its title to its bottom border."""
    lines = text.splitlines()
    return lines[:next(i for i, line in enumerate(lines) if line.startswith("└")) + 1]


def one_of_each_outcome() -> list:
    """A result of every outcome, each of its own case-file case's binding (a summary row apiece)."""
    return [r for outcome, e in zip(OUTCOMES, yaml_examples(CASE)) for r in results_of([e], outcome)]


def test_outside_a_terminal_the_summary_names_every_outcome_whole_however_many():
    lines = summary_lines(drawn(one_of_each_outcome(), terminal=False))
    [header] = [line for line in lines if line.startswith("┃")]
    assert [cell.strip() for cell in header.strip("┃").split("┃")] == ["op", "version", "dtype", *OUTCOMES]
    assert len(header) > 80 and "…" not in "".join(lines)
    assert len({len(line) for line in lines[1:]}) == 1  # every row one line, as wide as the header


def test_in_a_terminal_the_summary_fits_the_width():
    assert max(len(line) for line in summary_lines(drawn(one_of_each_outcome(), terminal=True))) <= 80


@pytest.mark.parametrize("terminal", [False, True])
def test_a_summary_narrower_than_its_title_keeps_the_title_on_one_line(terminal):
    lines = summary_lines(drawn(results_of(yaml_examples(CASE)[:1], PASS), terminal))
    assert lines[0].strip() == "conform: results by op version and dtype" and lines[1].startswith("┏")


def test_a_panel_tells_each_differing_value_once_and_every_output_s_types():
    # The message holds the first output's types, count and first place; the panel listed the
    # count and place again, and left out a second output's types.
    from conformance.compare import judge
    from conformance.reference.base import Reading
    from conformance.runners.base import RunOutput
    expected = Expected(readings=(Reading((np.array([1.0, 2.0, 3.0]), np.array([1, 2], dtype=np.int64))),))
    verdict = judge(expected, RunOutput(outputs=(np.array([1.0, 9.0, 8.0]), np.array([1, 2, 3], dtype=np.int64))))
    [example] = yaml_examples(CASE)[:1]
    [panel] = panels(rendered([Result(example, expected, verdict)]))
    lines = panel.splitlines()
    assert [line for line in lines if "values differ" in line] == [f"fail: {verdict.message}"]
    assert verdict.message.endswith("; at [1]: expected 2.0, got 9.0")
    assert lines.count("  at [2]: expected 3.0, got 8.0") == 1 and not any(line.startswith("  at [1]") for line in lines)
    assert "output 1: expected int64[2], got int64[3]" in lines
