"""`conform diff` read as `run` is: disagreements by family, a table of both runners' outcomes, a report named after op and opset."""

from __future__ import annotations

import json
import shlex
from collections import Counter

import pytest

from conformance.differential import disagreement_families, family_lines, outcome_pair, outcome_pairs, runner_labels
from conformance.execute import RunOptions, run_examples, select_examples
from conformance.report import SEVERITY
from conformance.runners import make_runner
from conformance.values import describe

CASE = "negative_step_int_max_end"  # onnxruntime copies backwards what the text says is empty; onnx.reference keeps to it
CASE_ID = f"Slice-13/{CASE}/float/int32"


@pytest.fixture(scope="module")
def case_diffed():
    """Every binding of CASE diffed, onnxruntime CPU against onnx.reference, and each runner's results alone."""
    from conformance.differential import diff

    options = RunOptions(op="Slice", opset=13, use_hypothesis=False)
    examples = [e for e in select_examples(options) if e.name == CASE]
    first, second = make_runner(), make_runner("reference")
    alone = [run_examples(examples, runner, options) for runner in (make_runner(), make_runner("reference"))]
    return diff(examples, first, second, options), runner_labels(first, second), alone


def test_one_case_disagreeing_the_same_way_over_its_bindings_is_one_family(case_diffed):
    results, _, (first_alone, second_alone) = case_diffed
    wrong = {a.example.id for a, b in zip(first_alone, second_alone) if (a.outcome, b.outcome) == ("fail", "pass")}
    assert len(wrong) > 10  # every real dtype of the case, in both index types
    grouped = disagreement_families(results)
    [family] = [f for f in grouped if {r.example.id for r in f} & wrong]
    assert {r.example.id for r in family} == wrong
    assert [r.example.id for r in family] == [r.example.id for r in results if r.example.id in wrong]  # run order
    # What onnxruntime does not support is a type: those disagreements go by type binding.
    lacking = [f for f in grouped if "unsupported" in outcome_pair(f[0])]
    assert lacking and all(len({r.example.binding for r in f}) == 1 for f in lacking)
    assert sum(map(len, grouped)) == sum(1 for r in results if r.extra["disagreement"])


def test_a_family_s_block_shows_its_first_member_in_full_and_names_the_rest_by_binding(case_diffed):
    results, labels, (_, second_alone) = case_diffed
    [family] = [f for f in disagreement_families(results) if outcome_pair(f[0]) == ("fail", "pass")]
    first, *others = family
    lines = family_lines(first, others, labels)
    example = first.example
    for name, array in example.inputs.items():
        assert f"input {name}: {describe(array)}" in lines
    [second_output] = next(r for r in second_alone if r.example.id == example.id).actual
    assert f"{labels[0]}: {describe(first.actual[0])}" in lines
    assert f"{labels[1]}: {describe(second_output)}" in lines  # read back from the report's record, as describe tells the array
    assert first.extra["disagreement"] in lines  # where they differ
    others_line = lines[-1]
    assert others_line.startswith(f"the same disagreement in {len(others)} more of this case's type bindings: ")
    assert all(r.example.binding in others_line for r in others[:12]) and f"and {len(others) - 12} more" in others_line
    assert not any(r.example.id in "\n".join(lines) for r in others)  # named by binding, not in full


def test_the_outcome_pairs_count_every_case_once(case_diffed):
    results, _, (first_alone, second_alone) = case_diffed
    pairs = outcome_pairs(Counter(outcome_pair(r) for r in results))
    counted = Counter((a.outcome, b.outcome) for a, b in zip(first_alone, second_alone))
    assert {(f, s): n for f, row in pairs.items() for s, n in row.items()} == dict(counted)
    assert sum(n for row in pairs.values() for n in row.values()) == len(results)


def test_a_diff_in_a_ci_log_draws_a_block_a_family_the_worst_first_and_counts_outcome_pairs(conform, tmp_path):
    report = tmp_path / "diff.json"
    result = conform("diff", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--dtype", "float", "--dtype", "uint8",
                     "--dtype", "complex64", "--against", "reference", "--report-json", str(report), columns=None)
    doc = json.loads(report.read_text())
    records = {r["id"]: r for r in doc["results"]}
    assert result.code == 1
    # The JSON summary: both runners' outcomes, every case once.
    counted = Counter((r["outcome"], r["against"]["outcome"]) for r in records.values())
    pairs = doc["summary"]["outcome_pairs"]
    assert {(f, s): n for f, row in pairs.items() for s, n in row.items()} == dict(counted)
    assert sum(counted.values()) == doc["summary"]["total"] == len(records)
    disagreeing = [r for r in records.values() if r["disagreement"]]
    assert doc["summary"]["disagreements"] == len(disagreeing)
    # The console: a headline a family, each case of CASE named once, by its first binding's id.
    heads = [line for line in result.stdout.splitlines() if line.split(": ", 1)[0] in records]
    assert doc["summary"]["disagreement_families"] == len(heads) < len(disagreeing)
    assert sum(1 for line in heads if f"/{CASE}/" in line) == 1 and heads.count(next(h for h in heads if f"/{CASE}/" in h)) == 1
    worse = [min(SEVERITY.index(r["outcome"]), SEVERITY.index(r["against"]["outcome"]))
             for r in (records[h.split(": ", 1)[0]] for h in heads)]
    assert worse == sorted(worse)  # a wrong answer first; what a runtime lacks after
    replays = [line for line in result.stdout.splitlines() if line.startswith("  replay: conform diff ")]
    assert len(replays) == len(heads)
    for head in heads:
        record = records[head.split(": ", 1)[0]]
        assert head.startswith(f"{record['id']}: onnxruntime CPUExecutionProvider {record['outcome']}, "
                               f"onnx.reference {record['against']['outcome']}; ")
        assert head.endswith(f"; {record['disagreement']}") and f"  replay: {record['replay']}" in replays
    # The outcome table: a row for each of the first runner's outcomes, its counts those of the summary.
    for first, row in pairs.items():
        [line] = [line for line in result.stdout.splitlines() if line.startswith(f"│ {first} ")]
        assert [int(cell) for cell in line.strip("│ ").split("│")[1:] if cell.strip()] == list(row.values())
    assert result.stdout.splitlines()[-1].startswith(
        f"{len(records)} cases, {len(disagreeing)} disagreements in {len(heads)} families. JSON report: ")


def test_a_disagreement_s_record_holds_both_runners_outputs_and_where_they_differ(conform, tmp_path):
    report = tmp_path / "diff.json"
    conform("diff", "--op", "Slice", "--opset", "13", "--no-hypothesis", "--dtype", "float", "--against", "reference",
            "--report-json", str(report))
    records = json.loads(report.read_text())["results"]
    [record] = [r for r in records if r["id"] == CASE_ID]
    assert record["actual"][0]["shape"] == [4, 5] and record["against_actual"][0]["shape"] == [4, 0]
    assert record["differences"][0] == record["disagreement"]
    agreeing = [r for r in records if not r["disagreement"]]
    assert agreeing and not any("against_actual" in r or "differences" in r for r in agreeing)


@pytest.mark.parametrize("args, name", [
    (("--op", "Slice", "--opset", "13"), "diff-Slice-13.json"),
    (("--op", "Slice"), "diff-Slice.json"),
    (("--op", "Clip", "--op", "Slice", "--opset", "13"), "diff-Clip+Slice-13.json"),
])
def test_a_diff_s_default_report_is_named_after_its_ops_and_opset(conform, tmp_path, args, name):
    result = conform("diff", *args, "--no-hypothesis", "--dtype", "float", "--case", CASE_ID, "--against", "reference")
    assert result.code == 1, result.stderr
    assert sorted(p.name for p in (tmp_path / "reports").glob("*.json")) == [name]
    assert f"JSON report: reports/{name}" in result.stdout


def test_a_family_s_replay_writes_the_report_a_diff_of_that_op_version_writes(conform, tmp_path):
    first = conform("diff", "--op", "Slice", "--no-hypothesis", "--dtype", "float", "--case", CASE_ID, "--against", "reference")
    [replay] = [line.split("replay: ", 1)[1] for line in first.stdout.splitlines() if "replay: " in line]
    again = conform(*shlex.split(replay)[1:])
    assert again.code == 1
    replayed = json.loads((tmp_path / "reports" / "diff-Slice-13.json").read_text())["results"]
    assert [r["id"] for r in replayed] == [CASE_ID]


def test_a_diff_without_an_op_is_a_usage_error(conform):
    result = conform("diff", "--against", "reference")
    assert result.code == 2 and "--op is required" in result.stderr


def test_a_diff_keeps_in_memory_what_its_blocks_draw_and_names_the_rest(case_diffed):
    """Memory flat in a diff's disagreements (differential.DiffKeeper): kept as the ledger keeps
    them, the families, their order and every block's lines are those of the whole results, the
    first member of each family whole, and past it, a version's hypothesis cases by name only."""
    import dataclasses

    from conformance.differential import DiffKeeper

    results, labels, _ = case_diffed
    as_hypothesis = [dataclasses.replace(r, example=dataclasses.replace(r.example, source="hypothesis", name=f"hypothesis-{n:04d}"))
                     for n in range(3) for r in results]
    keeper = DiffKeeper()
    kept = [k for k in (keeper(r) for r in results + as_hypothesis) if k is not None]
    whole_families = disagreement_families(results + as_hypothesis)
    kept_families = disagreement_families(kept)
    assert [[r.example.id for r in f] for f in kept_families] == [[r.example.id for r in f] for f in whole_families]
    for whole, light in zip(whole_families, kept_families):
        assert light[0] is whole[0], f"{whole[0].example.id}: a family's first member is kept whole"
        assert family_lines(light[0], light[1:], labels) == family_lines(whole[0], whole[1:], labels)
    # Each type binding's first (hypothesis-0000) is whole: the key a family is known by at the end is coarser.
    later = [r for f in kept_families for r in f if r.example.name != "hypothesis-0000" and r.example.source == "hypothesis"]
    assert later and all(not r.example.inputs and not r.actual and "against_actual" not in r.extra
                         for r in later), "past the first of a version's hypothesis cases in a binding, by name only"
    assert len(kept) == sum(1 for r in results + as_hypothesis if r.extra["disagreement"])
