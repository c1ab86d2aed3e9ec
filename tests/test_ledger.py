"""A run's ledger and its counted report: passes (and ambiguous, xfail, unsupported, skipped cases)
counted per op x version x dtype, every other result recorded whole, nothing lost in the counting,
and a run that keeps no passing result in memory."""

import json

import numpy as np
import pytest

from conformance.compare import AMBIGUOUS, FAIL, PASS, UNSUPPORTED, XFAIL, Verdict
from conformance.execute import Result, RunOptions, select_examples
from conformance.ledger import COUNTED, KEPT_PER_BINDING, WHOLE_PER_BINDING, Ledger
from conformance.reference.base import Expected, Reading
from conformance.report import exit_code, outcomes_of
from conformance.report.merge import merge

SLICE = ("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--backend", "wrong_slice", "--examples", "5")


def slice_examples(count: int):
    examples = select_examples(RunOptions(op="Slice", opset=13, dtypes=("float",), use_hypothesis=False))
    return (examples * (count // len(examples) + 1))[:count]


def result_of(example, outcome: str, message: str = "", reading: str = "spec") -> Result:
    expected = Expected(readings=(Reading((np.zeros(3, np.float32),), reading),))
    return Result(example, expected, Verdict(outcome, message, reading=reading if outcome in (PASS, AMBIGUOUS) else ""),
                  actual=(np.zeros(3, np.float32),))


def test_a_ledger_keeps_no_passing_result_and_counts_every_one():
    examples = slice_examples(500)
    ledger = Ledger.of([result_of(e, PASS) for e in examples[:490]] + [result_of(e, FAIL, "wrong") for e in examples[490:]])
    assert [r.outcome for r in ledger.kept] == [FAIL] * 10, "only the failures are kept in memory"
    assert ledger.total == 500
    assert ledger.summary_counts() == {PASS: 490, FAIL: 10}
    assert sum(ledger.tallies.values()) == 490, "every pass is counted in a tally row"


def test_unsupported_results_are_kept_slim_past_the_first_of_each_binding():
    examples = slice_examples(40)
    ledger = Ledger.of([result_of(e, UNSUPPORTED, "no kernel") for e in examples])
    kept = ledger.kept
    assert len(kept) == 40, "the hints and the last line read every refusal"
    for binding in {r.example.binding for r in kept}:
        of_binding = [r for r in kept if r.example.binding == binding]
        whole = [r for r in of_binding if r.expected.readings]
        assert whole == of_binding[:WHOLE_PER_BINDING], \
            f"{binding}: {len(whole)} unsupported results kept whole, not the first {WHOLE_PER_BINDING}"
        assert all(not r.actual and not r.example.inputs for r in of_binding[WHOLE_PER_BINDING:])


def test_a_run_of_one_variant_counts_its_unsupported_results_past_the_first_of_each_binding():
    """Memory flat in unsupported cases: past each binding's first few, a run of one input mode and
    optimization level keeps their counts only, and its hints, last line and panels still count all."""
    from io import StringIO

    from rich.console import Console

    from conformance.report.console import render
    from conformance.report.hints import unjudged_line

    first_binding = slice_examples(1)[0].binding
    examples = [e for e in slice_examples(200) if e.binding == first_binding][:40]
    ledger = Ledger(several_variants=False)
    for example in examples:
        ledger.add(result_of(example, UNSUPPORTED, "no kernel for symbolic dims"))
    ledger.finish()
    assert len(ledger.kept) == KEPT_PER_BINDING, "past those a panel names, only counted"
    assert ledger.unsupported_not_kept(ledger.kept[0]) == 40 - KEPT_PER_BINDING
    assert ledger.refusals.unsupported == 40 and ledger.refusals.unsupported_asking == 40
    assert unjudged_line(ledger).startswith("40 of 40 cases unsupported")
    assert "try --shapes static" in unjudged_line(ledger)
    out = StringIO()
    render(ledger, Console(file=out, width=200), show=(UNSUPPORTED,))
    assert f"unsupported too: 39 more cases of Slice-13 in float/" in out.getvalue(), out.getvalue()[-600:]
    unnamed = Ledger(several_variants=False, names_unsupported=False)  # no --verbose: no panel names them
    for example in examples:
        unnamed.add(result_of(example, UNSUPPORTED, "no kernel for symbolic dims"))
    assert len(unnamed.kept) == WHOLE_PER_BINDING and unnamed.unsupported_not_kept(unnamed.kept[0]) == 39


def test_write_expect_keeps_passes_on_disk_and_reads_an_op_versions_back(tmp_path):
    """Memory flat under --write-expect: passes go to a file beside the report, read back by op
    version; the passes of cases a `case:` entry names stay in memory, where the entry's check reads them."""
    examples = slice_examples(30)
    named = examples[1].id
    ledger = Ledger(keep_all=True, named_ids={named}, spool_dir=tmp_path)
    for example in examples:
        ledger.add(result_of(example, FAIL if example is examples[0] else PASS))
    ledger.finish()
    in_memory = ledger.everything
    assert [r.outcome for r in in_memory] == [FAIL, PASS] and in_memory[1].example.id == named
    back = list(ledger.passing_of("Slice", 13))
    assert [r.example.id for r in back] == [e.id for e in examples[2:]]
    assert all(r.outcome == PASS and not r.actual for r in back), "kept slim"
    assert list(ledger.passing_of("Slice", 11)) == [] and ledger.unkept_variants_of("Slice", 13)
    assert len(list(tmp_path.glob(".conform-passes.*"))) == 1
    ledger.close()
    assert not list(tmp_path.glob(".conform-passes.*")), "the file goes with the ledger"


def test_write_expect_keeps_of_a_traced_outcome_the_entry_it_matched_alone(tmp_path):
    """Memory flat under --write-expect: the results the writer reads only as the entry they
    matched (xfail, unsupported, ambiguous where they do not fail the run) leave that entry's index,
    their outcome and their variant; a named case's, and any other outcome's, stay slim in memory."""
    examples = slice_examples(8)
    named = examples[0].id
    entry_of = {UNSUPPORTED: 3, AMBIGUOUS: None, XFAIL: 5}
    judge = lambda result: (result, entry_of.get(result.outcome))  # noqa: E731
    ledger = Ledger(judge, keep_all=True, named_ids={named}, spool_dir=tmp_path,
                    traced=frozenset({XFAIL, UNSUPPORTED, AMBIGUOUS}))
    outcomes = [XFAIL, UNSUPPORTED, AMBIGUOUS, XFAIL, "lenient", "imprecise", PASS, UNSUPPORTED]
    for example, outcome in zip(examples, outcomes):
        ledger.add(result_of(example, outcome))
    ledger.finish()
    assert [r.outcome for r in ledger.everything] == [XFAIL, "lenient", "imprecise"], "the named case, and what is not traced"
    assert ledger.everything[0].example.id == named
    assert ledger.entries_unkept == {(3, UNSUPPORTED), (5, XFAIL)}, "ambiguous matched no entry here"
    assert ledger.unkept_variants_of("Slice", 13) == {("input", None)}
    assert [r.outcome for r in ledger.passing_of("Slice", 13)] == [PASS]
    ledger.close()


def test_a_diff_s_ledger_spools_every_record_and_keeps_the_disagreements_alone(tmp_path):
    """Memory flat in a diff's cases: every record goes to the spool as it is judged, failing ones
    too (a diff shrinks none), and of the results only those `keeps` asks for (the disagreements
    its console draws) stay in memory, in run order."""
    import json as json_module

    from conformance.report.json_report import record_line

    examples = slice_examples(40)
    disagreeing = {examples[3].id, examples[17].id}
    ledger = Ledger(report_every_case=True, spool_dir=tmp_path, record=record_line,
                    keeps=lambda result: result if result.example.id in disagreeing else None)
    for number, example in enumerate(examples):
        ledger.add(result_of(example, FAIL if number in (3, 9) else PASS))
        assert not ledger.waiting(), "judged at once: nothing waits to be shrunk"
    ledger.finish()
    assert [r.example.id for r in ledger.kept] == [examples[3].id, examples[17].id]
    assert ledger.recorded == [] and ledger.summary_counts() == {PASS: 38, FAIL: 2}
    records = [json_module.loads(line) for line in ledger.recorded_in_order(record_line)]
    assert [r["id"] for r in records] == [e.id for e in examples], "every case recorded once, in run order"
    assert [r["outcome"] for r in records].count(FAIL) == 2
    ledger.close()


def test_results_stay_in_run_order_when_failures_are_judged_after_shrinking():
    examples = slice_examples(6)
    outcomes = [FAIL, PASS, "imprecise", FAIL, "lenient", PASS]
    ledger = Ledger()
    for example, outcome in zip(examples, outcomes):
        ledger.add(result_of(example, outcome))
    assert [r.outcome for r in ledger.waiting()] == [FAIL, FAIL]
    ledger.finish(ledger.waiting())
    assert [r.outcome for r in ledger.recorded] == [FAIL, "imprecise", FAIL, "lenient"]


def test_the_default_report_counts_passes_and_records_the_rest_whole(conform):
    run = conform(*SLICE, every_case=False)
    report = run.report
    counted = {row["outcome"] for row in report["tallies"]}
    recorded = {record["outcome"] for record in report["results"]}
    assert PASS in counted and FAIL in recorded
    assert not recorded & set(COUNTED), f"outcomes {recorded & set(COUNTED)} are recorded whole, not counted"
    assert outcomes_of(report) == {k: v for k, v in report["summary"].items() if k != "total" and v}, \
        "the tallies and the records together must add up to the summary"
    assert all(row["count"] > 0 and "ids" not in row for row in report["tallies"])
    assert exit_code(report) == run.code == 1


def test_report_passes_records_every_case_and_agrees_with_the_counted_report(conform, tmp_path):
    counted = conform(*SLICE, "--report-json", str(tmp_path / "counted.json"), every_case=False)
    every = conform(*SLICE, "--report-json", str(tmp_path / "every.json"), "--report-passes")
    counted_doc = json.loads((tmp_path / "counted.json").read_text())
    every_doc = json.loads((tmp_path / "every.json").read_text())
    assert every_doc["summary"] == counted_doc["summary"]
    assert len(every_doc["results"]) == every_doc["summary"]["total"], "--report-passes records every case"
    assert every_doc["tallies"] == [], "a report that records every case counts none besides"
    whole_ids = {r["id"] for r in every_doc["results"] if r["outcome"] not in COUNTED}
    assert whole_ids == {r["id"] for r in counted_doc["results"]}
    assert every.code == counted.code


def test_shards_merged_give_the_one_run_counts(conform, tmp_path):
    args = ("run", "--op", "Abs", "--op", "Slice", "--opset", "13", "--examples", "4")
    conform(*args, "--report-json", str(tmp_path / "whole.json"), every_case=False)
    for k in (1, 2):
        conform(*args, "--shard", f"{k}/2", "--report-json", str(tmp_path / f"s{k}.json"), every_case=False)
    merged = merge([tmp_path / "s1.json", tmp_path / "s2.json"])
    one = json.loads((tmp_path / "whole.json").read_text())
    assert merged["summary"] == one["summary"]
    assert merged["tallies"] == one["tallies"], "the shards' tally rows summed must be the one run's"
    assert merged["precision"] == one["precision"]
    assert sorted(r["id"] for r in merged["results"]) == sorted(r["id"] for r in one["results"])


def test_a_shard_given_twice_is_counted_once(conform, tmp_path):
    args = ("run", "--op", "Abs", "--opset", "13", "--examples", "4", "--shard", "1/2")
    conform(*args, "--report-json", str(tmp_path / "s1.json"), every_case=False)
    conform(*args[:-2], "--shard", "2/2", "--report-json", str(tmp_path / "s2.json"), every_case=False)
    once = merge([tmp_path / "s1.json", tmp_path / "s2.json"])
    twice = merge([tmp_path / "s1.json", tmp_path / "s1.json", tmp_path / "s2.json"])
    assert twice["summary"] == once["summary"]


def test_junit_and_html_count_what_the_report_counts(conform, tmp_path):
    from xml.etree import ElementTree

    junit, page = tmp_path / "r.xml", tmp_path / "r.html"
    run = conform(*SLICE, "--junit", str(junit), "--html", str(page), every_case=False)
    suites = ElementTree.parse(junit).getroot()
    assert int(suites.get("tests")) == run.report["summary"]["total"], "JUnit's tests count every case, counted ones too"
    assert int(suites.get("failures")) == run.report["summary"]["fail"]
    text = page.read_text()
    assert f'{run.report["summary"]["pass"]} pass' in text, "the HTML page's chips count the passes from the tallies"


@pytest.mark.parametrize("outcome", [PASS, AMBIGUOUS])
def test_a_tally_row_names_the_reading_followed(outcome):
    example = slice_examples(1)[0]
    ledger = Ledger.of([result_of(example, outcome, reading="function body")])
    [row] = ledger.tally_rows()
    assert row["reading"] == "function body" and row["outcome"] == outcome and row["count"] == 1


def test_the_profile_folded_one_result_at_a_time_is_the_profile_of_them_all():
    from conformance.precision import BEYOND_BUDGET, FAITHFUL, WITHIN_BUDGET, Budget, profile

    examples = slice_examples(6)
    figures = [(0.5, FAITHFUL, PASS), (3.0, BEYOND_BUDGET, "imprecise"), (1.5, WITHIN_BUDGET, PASS),
               (0.0, FAITHFUL, PASS), (40.0, BEYOND_BUDGET, FAIL), (2.0, WITHIN_BUDGET, PASS)]
    results = []
    for example, (ulp, grade, outcome) in zip(examples, figures):
        expected = Expected(readings=(Reading((np.zeros(3, np.float32),), "spec"),), budgets=(Budget(2.0, "a test's"),))
        results.append(Result(example, expected, Verdict(outcome, "", ulp=ulp, grade=grade)))
    folded = Ledger.of(results).profile.rows()
    assert folded == profile(results), "folding one result at a time must give what profiling them all at once gives"
    assert folded[0].cases == 6 and folded[0].max_ulp == 40.0 and folded[0].imprecise == 1
