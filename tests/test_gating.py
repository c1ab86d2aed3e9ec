"""CI gating: expectations (xfail, xpass, stale, missing reason), JUnit and HTML, sharding and
merging (the pytest plugin's gate: test_pytest_plugin)."""

import json
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
import yaml
from conftest import replayed


ROOT = Path(__file__).resolve().parent.parent
DEVIATION = "Slice-13/negative_step_int_max_end/float/int64"
PASSING = "Slice-13/negative_start/float/int64"
BASE = ("run", "--op", "Slice", "--opset", "13", "--no-hypothesis")


def expectations(tmp_path, body):
    path = tmp_path / "expect.yaml"
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_a_matching_failure_is_xfail_and_does_not_fail_the_run(conform, tmp_path):
    expect = expectations(tmp_path, f"""\
        expectations:
          - op: Slice
            case: {DEVIATION}
            reason: onnxruntime reads INT_MAX with a negative step as 'to the start'
            issue: https://example.invalid/1
        """)
    result = conform(*BASE, "--case", DEVIATION, "--expect", expect, "--ci")
    [record] = result.report["results"]
    assert record["outcome"] == "xfail" and "INT_MAX with a negative step" in record["message"] and "expect.yaml:2" in record["message"]
    assert result.code == 0


def test_a_matching_pass_is_xpass_and_fails_only_under_strict(conform, tmp_path):
    expect = expectations(tmp_path, f"""\
        expectations:
          - {{op: Slice, case: {PASSING}, reason: was broken once}}
        """)
    loose = conform(*BASE, "--case", PASSING, "--expect", expect)
    assert loose.report["results"][0]["outcome"] == "xpass" and loose.code == 0 and "XPASS" in loose.stdout
    assert conform(*BASE, "--case", PASSING, "--expect", expect, "--ci").code == 1
    assert conform(*BASE, "--case", PASSING, "--expect", expect, "--strict").code == 1


def test_an_entry_that_matches_nothing_is_stale_and_fails_under_strict(conform, tmp_path):
    expect = expectations(tmp_path, """\
        expectations:
          - {op: ConstantOfShape, match: no_such_case, reason: gone}
          - {op: Clip, match: anything, reason: "other op: not stale in a ConstantOfShape run"}
        """)
    run = ("run", "--op", "ConstantOfShape", "--opset", "21", "--examples", "1")  # a run onnxruntime passes
    loose = conform(*run, "--expect", expect)
    assert loose.code == 0 and "STALE" in loose.stdout and "expect.yaml:2" in loose.stdout
    assert [e["source"].split(":")[-1] for e in loose.report["stale_expectations"]] == ["2"]
    strict = conform(*run, "--expect", expect, "--ci")
    assert strict.code == 1
    # The CI's test view fails with the exit code: the stale entry is a failing testcase of its own.
    root = ElementTree.parse(strict.report_path.with_suffix(".xml")).getroot()
    [failure] = root.findall(".//failure")
    assert root.get("failures") == "1" and root.get("tests") == str(strict.report["summary"]["total"] + 1)
    assert failure.get("type") == "stale"
    assert "no case deviates as" in failure.get("message") and "expect.yaml:2" in failure.get("message") and "gone" in failure.get("message")
    loose_junit = conform(*run, "--expect", expect, "--junit", str(tmp_path / "loose.xml"))
    assert loose_junit.code == 0 and ElementTree.parse(tmp_path / "loose.xml").getroot().get("failures") == "0"


def test_an_entry_without_reason_is_a_file_error(conform, tmp_path):
    expect = expectations(tmp_path, """\
        expectations:
          - {op: Slice, match: x}
        """)
    result = conform(*BASE, "--expect", expect)
    assert result.code == 2 and "expect.yaml:2" in result.stderr and "needs a 'reason'" in result.stderr


def test_write_expect_writes_a_file_that_turns_the_failures_into_xfail(conform, tmp_path):
    written = tmp_path / "start.yaml"
    first = conform(*BASE, "--dtype", "float", "--write-expect", str(written))
    assert first.code == 1
    second = conform(*BASE, "--dtype", "float", "--expect", str(written), "--ci")
    assert second.code == 0
    assert second.report["summary"]["xfail"] == first.report["summary"]["fail"] > 0
    # What a run wrote is told at the end, beside the JSON report, not above the summary table.
    # One family, one cause: a single entry matched by the trait, not one entry a failing case.
    [entry] = yaml.safe_load(written.read_text())["expectations"]
    assert entry["when"] == "negative-step-int-max-end" and "case" not in entry
    assert first.stdout.splitlines()[-2:] == [f"JSON report: {first.report_path}", f"1 deviation written to {written}"]
    assert second.stdout.lstrip().startswith("conform: results by op version and dtype")
    assert [line.split(":")[0] for line in second.stdout.splitlines()[-3:]] == ["JSON report", "JUnit report", "HTML report"]


@pytest.mark.parametrize("args", [
    # onnxruntime accepts a 2-D shape where it is an initializer or a constant, and rejects it as a graph input
    ("--op", "ConstantOfShape", "--opset", "9", "--mode", "all", "--strict-validation"),
    ("--op", "Clip", "--opset", "13", "--mode", "all", "--optimizations", "both"),  # fails alike in all six variants
    ("--op", "Slice", "--opset", "13", "--dtype", "complex64", "--dtype", "float", "--fail-on-unsupported"),
], ids=["lenient-in-some-modes", "fail-in-every-variant", "unsupported"])
def test_a_file_written_by_write_expect_makes_the_same_run_pass_under_strict(conform, tmp_path, args):
    # The file left out what --strict-validation and --fail-on-unsupported make failing, and it wrote
    # an entry per failing result: under --mode all, three entries of one case, two of them stale;
    # and a case failing in some modes only was xpass in the others.
    failing = {"fail", "error", "crash", "timeout", "fallback"}
    failing |= {"lenient"} if "--strict-validation" in args else {"unsupported"} if "--fail-on-unsupported" in args else set()
    written = tmp_path / "start.yaml"
    first = conform("run", *args, "--no-hypothesis", "--write-expect", str(written))
    second = conform("run", *args, "--no-hypothesis", "--expect", str(written), "--strict")
    assert first.code == 1 and second.code == 0, second.stdout[-3000:]
    variant = lambda r: (r["id"], r.get("mode"), r.get("optimizations"))
    before = {variant(r): r["outcome"] for r in first.report["results"]}
    after = {variant(r): r["outcome"] for r in second.report["results"]}
    assert after == {key: "xfail" if outcome in failing else outcome for key, outcome in before.items()}
    assert not second.report["stale_expectations"]
    entries = yaml.safe_load(written.read_text())["expectations"]
    # One entry a cause: each deviation by its trait or rule, an unsupported type by its dtype; no case ids.
    scopes = [str(sorted(e.items())) for e in entries]
    assert len(scopes) == len(set(scopes)) and not any("case" in e for e in entries)
    assert all({"when", "rule"} & set(e) or e.get("dtypes") == ["complex64"] for e in entries), entries
    assert first.stdout.rstrip().endswith(f"{len(entries)} deviation{'s' if len(entries) > 1 else ''} written to {written}")


UINT8_DEVIATION = "Slice-13/negative_step_int_max_end/uint8/int64"


def test_write_expect_with_expect_keeps_the_entries_still_needed_as_written(conform, tmp_path):
    # It ignored --expect: the reasons a person wrote, and their `when:` and `issue:`, were replaced
    # by one 'observed' entry a failing case, and entries for other runners were lost.
    old = expectations(tmp_path, f"""\
        expectations:
          - {{op: Slice, case: [{PASSING}, {UINT8_DEVIATION}], reason: two cases written by hand}}
          - op: Slice
            versions: [13]
            dtypes: [float]
            when: negative-step-int-max-end
            reason: onnxruntime reads INT_MAX with a negative step as 'to the start'
            issue: https://example.invalid/1
          - {{op: Slice, match: negative_start, dtypes: [float], reason: was broken once}}
          - {{op: Slice, match: no_such_case, dtypes: [float], reason: gone}}
          - {{op: Slice, runner: cuda, match: "*", reason: another runner's}}
        """)
    args = (*BASE, "--dtype", "float", "--dtype", "uint8")
    written = tmp_path / "updated.yaml"
    first = conform(*args, "--expect", old, "--write-expect", str(written))
    entries = yaml.safe_load(written.read_text())["expectations"]
    by_hand = [e for e in entries if not e["reason"].startswith("observed: ")]
    assert by_hand == [
        {"op": "Slice", "case": UINT8_DEVIATION, "reason": "two cases written by hand"},  # the passing case taken out
        {"op": "Slice", "versions": [13], "dtypes": ["float"], "when": "negative-step-int-max-end",
         "reason": "onnxruntime reads INT_MAX with a negative step as 'to the start'", "issue": "https://example.invalid/1"},
        {"op": "Slice", "runner": "cuda", "match": "*", "reason": "another runner's"},
    ]
    failing = {r["id"] for r in first.report["results"] if r["outcome"] == "fail"}
    # The failures no entry matched are one case-file case in its uint8 bindings: one entry, by its trait
    # (in any dtype: a cause holds wherever a case has it).
    assert failing and {r.split("/")[2] for r in failing} == {"uint8"}
    assert entries[len(by_hand):] == [{"op": "Slice", "versions": [13], "runner": "cpu",
                                       "when": "negative-step-int-max-end", "reason": entries[-1]["reason"]}]
    assert (f"4 deviations written to {written}: 3 entries kept from {old}, 1 added as observed, "
            "1 stale and 1 fixed left out, 1 passing case taken out of 'case:' lists") in first.stdout
    second = conform(*args, "--expect", str(written), "--strict")
    assert second.code == 0 and not second.report["stale_expectations"], second.stdout[-3000:]
    assert second.report["summary"]["xfail"] == first.report["summary"]["xfail"] + len(failing)


def test_write_expect_updates_its_own_file_in_place_and_keeps_what_the_run_did_not_judge(conform, tmp_path):
    path = expectations(tmp_path, f"""\
        expectations:
          - {{op: Slice, case: {DEVIATION}, reason: by hand}}
          - {{op: Slice, match: "negative_st*", dtypes: [uint16], reason: some of these pass}}
          - {{op: Slice, match: "negative_st*", dtypes: [int32], reason: not run with --dtype float}}
        """)
    before = yaml.safe_load(Path(path).read_text())["expectations"]
    result = conform(*BASE, "--dtype", "float", "--dtype", "uint16", "--expect", path, "--write-expect", path)
    after = yaml.safe_load(Path(path).read_text())["expectations"]
    assert after[:3] == before
    assert "3 entries kept" in result.stdout and "1 kept entry still matches cases that pass (xpass): narrow them by hand" in result.stdout
    assert {r["outcome"] for r in result.report["results"] if "some of these pass" in r.get("message", "")} == {"xfail", "xpass"}


def test_write_expect_keeps_the_comments_and_layout_of_the_file_it_brings_up_to_date(conform, tmp_path):
    # It dumped the whole list anew: a file's comments, flow lists and line breaks were lost.
    text = textwrap.dedent(f"""\
        # Our runtime's deviations, reviewed every release.
        expectations:
          # wrong answers
          - op: Slice
            versions: [13]           # only 13 checked
            dtypes: [float]
            when: negative-step-int-max-end
            reason: >-
              onnxruntime reads INT_MAX with a negative step
              as 'to the start'
          # fixed in the last release
          - {{op: Slice, match: negative_start, dtypes: [float], reason: was broken once}}
          - {{op: Slice, case: [{PASSING}, {UINT8_DEVIATION}], reason: two cases written by hand}}
        """)
    path = tmp_path / "expect.yaml"
    path.write_text(text)
    args = (*BASE, "--dtype", "float", "--dtype", "uint8")
    first = conform(*args, "--expect", str(path), "--write-expect", str(path))
    written = path.read_text()
    assert written.startswith(text[:text.index("  # fixed in the last release")])  # head, comments, layout as written
    # rewritten in place: its comment and flow style kept
    assert f"  # fixed in the last release\n  - {{op: Slice, case: {UINT8_DEVIATION}, reason: two cases written by hand}}\n" in written
    assert "was broken once" not in written and "written afresh" not in first.stdout
    added = written.index("  # added by --write-expect: replace each 'observed' reason")
    failing = {r["id"] for r in first.report["results"] if r["outcome"] == "fail"}
    observed = [e for e in yaml.safe_load(written)["expectations"] if e["reason"].startswith("observed: ")]
    assert failing and [(e.get("dtypes"), e["when"]) for e in observed] == [(None, "negative-step-int-max-end")]
    assert "observed: " not in written[:added]
    second = conform(*args, "--expect", str(path), "--strict")
    assert second.code == 0 and not second.report["stale_expectations"], second.stdout[-3000:]


def test_write_expect_keeps_the_windows_line_ends_of_the_file_it_brings_up_to_date(conform, tmp_path):
    path = tmp_path / "expect.yaml"
    path.write_bytes(f"# by hand\r\nexpectations:\r\n- {{op: Slice, case: {PASSING}, reason: by hand}}\r\n".encode())
    conform(*BASE, "--case", DEVIATION, "--case", PASSING, "--expect", str(path), "--write-expect", str(path))
    written = path.read_bytes()
    assert written.startswith(b"# by hand\r\nexpectations:\r\n") and b"when: negative-step-int-max-end\r\n" in written
    assert written.count(b"\n") == written.count(b"\r\n") > 4


def test_write_expect_keeps_a_flow_list_as_written(conform, tmp_path):
    # A hand-made text cutter could not cut a flow list into entries, and wrote the file afresh.
    path = tmp_path / "expect.yaml"
    text = f"# a flow list\nexpectations: [{{op: Slice, case: {DEVIATION}, reason: by hand}}]\n"
    path.write_text(text)
    result = conform(*BASE, "--case", DEVIATION, "--case", PASSING, "--expect", str(path), "--write-expect", str(path))
    assert f"1 deviation written to {path}: 1 entry kept" in result.stdout and "written afresh" not in result.stdout
    assert path.read_text() == text


def test_an_entry_with_modes_or_optimizations_matches_only_those_variants(conform, tmp_path):
    known, passing = "Clip-13/int64_below_int32_min/int64", "Clip-13/int64_beyond_2_pow_53/int64"  # onnxruntime leaves the first unclipped
    expect = expectations(tmp_path, f"""\
        expectations:
          - {{op: Clip, case: {known}, optimizations: off, modes: [initializer, constant], reason: left unclipped}}
          - {{op: Clip, case: {passing}, modes: constant, reason: was broken once}}
        """)
    args = ("run", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--expect", expect, "--strict")
    every = conform(*args, "--case", known, "--case", passing, "--mode", "all", "--optimizations", "both")
    outcomes = {(r["id"], r["mode"], r["optimizations"]): r["outcome"] for r in every.report["results"]}
    assert outcomes == {(case, mode, level): ("xfail" if level == "off" and mode != "input" else "fail") if case == known
                        else "xpass" if mode == "constant" else "pass"
                        for case in (known, passing) for mode in ("input", "initializer", "constant") for level in ("on", "off")}
    assert every.code == 1 and not every.report["stale_expectations"]
    # A run without the variants an entry names is not about it: neither stale nor matched.
    plain = conform(*args, "--case", passing)
    assert plain.code == 0 and [r["outcome"] for r in plain.report["results"]] == ["pass"]
    assert not plain.report["stale_expectations"]
    constant = conform(*args, "--case", passing, "--mode", "constant")
    assert constant.code == 1 and [r["outcome"] for r in constant.report["results"]] == ["xpass"]


def test_entries_about_variants_the_run_did_not_have_are_named_with_the_options_that_bring_them_in(conform, tmp_path):
    # Neither matched nor stale, they went unsaid: an `optimizations:` entry on a runner without
    # levels (onnx.reference, a backend) silently never applies.
    expect = expectations(tmp_path, """\
        expectations:
          - {op: Clip, versions: [13], modes: [initializer, constant], optimizations: off, reason: a}
          - {op: Clip, versions: [13], modes: constant, reason: b}
          - {op: Clip, versions: [6], optimizations: off, reason: "a version the run does not have: not about it"}
        """)
    args = ("run", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--dtype", "float", "--expect", expect)
    line = "2 expectations for input modes or optimization levels this run did not have, not judged here: "
    assert (line + "--mode all --optimizations off, --mode constant") in conform(*args).stdout
    assert ("1 expectation for input modes or optimization levels this run did not have, not judged here: --optimizations off"
            in conform(*args, "--mode", "constant").stdout)
    assert (line + "--mode constant, optimizations (this runner has no levels)") in conform(*args, "--runner", "reference").stdout
    everything = conform(*args, "--mode", "all", "--optimizations", "both")
    assert "this run did not have" not in everything.stdout and everything.code == 0


def test_the_shipped_expectations_make_onnxruntime_cpu_pass_in_ci_mode(conform):
    result = conform("run", "--op", "Slice", "--opset", "13", "--expect", str(ROOT / "expectations" / "onnxruntime-cpu.yaml"), "--ci")
    assert result.code == 0, result.stdout[-2000:]
    assert result.report["summary"]["xfail"] > 0 and result.report["summary"]["xpass"] == 0


@pytest.mark.parametrize("op", ["Clip", "ConstantOfShape", "Slice"])
def test_the_shipped_expectations_list_what_onnxruntime_cpu_accepts_against_the_text_too(conform, op):
    # Under --strict-validation a lenient case fails the run, and no entry could list one.
    result = conform("run", "--op", op, "--expect", str(ROOT / "expectations" / "onnxruntime-cpu.yaml"), "--ci",
                     "--strict-validation", "--mode", "all", "--examples", "2")
    assert result.code == 0, result.stdout[-2000:]
    xfails = [r for r in result.report["results"] if r["outcome"] == "xfail"]
    assert any("accepted invalid input" in r["message"] for r in xfails) and result.report["summary"]["lenient"] == 0


def test_the_shipped_expectations_hold_for_another_seed_and_more_examples(conform):
    # Entries name each deviation by its cause (`when`), not by the case ids of one seed.
    result = conform("run", "--op", "Slice", "--opset", "13", "--seed", "11", "--examples", "40",
                     "--expect", str(ROOT / "expectations" / "onnxruntime-cpu.yaml"), "--ci")
    assert result.code == 0, result.stdout[-2000:]
    random_xfails = [r for r in result.report["results"] if r["outcome"] == "xfail" and r["source"] == "hypothesis"]
    assert random_xfails and not [r for r in result.report["results"] if r["outcome"] in ("fail", "xpass")]


def test_a_when_entry_leaves_passing_cases_alone_and_is_stale_when_nothing_deviates(conform, tmp_path):
    expect = expectations(tmp_path, """\
        expectations:
          - {op: Clip, versions: [13], dtypes: [float], when: nan-bound, reason: a runtime that rejects a NaN bound}
        """)
    # onnxruntime follows the text on Clip-13's NaN bounds: the trait is there, the deviation is not.
    args = ("run", "--op", "Clip", "--opset", "13", "--dtype", "float", "--no-hypothesis", "--expect", expect)
    loose = conform(*args)
    nan_bound = [r for r in loose.report["results"] if r["case"] in ("nan_min", "nan_max")]
    assert nan_bound and {r["outcome"] for r in nan_bound} <= {"pass", "ambiguous"} and loose.code == 0
    assert [e["source"].split(":")[-1] for e in loose.report["stale_expectations"]] == ["2"]
    assert conform(*args, "--strict").code == 1


def test_a_message_entry_matches_only_failures_that_say_so_and_a_flaky_one_is_never_stale(conform, tmp_path):
    expect = expectations(tmp_path, """\
        expectations:
          - {op: Slice, versions: [13], message: "*no such words*", reason: another deviation}
          - {op: Slice, versions: [13], message: "*no such words*", flaky: true, reason: not seen in this run}
          - {op: Slice, versions: [13], message: ["*no such words*", "output 0: expected*"], flaky: true, reason: shows in some runs}
        """)
    result = conform(*BASE, "--expect", expect, "--strict")
    outcomes = {r["id"]: r["outcome"] for r in result.report["results"]}
    assert outcomes[DEVIATION] == "xfail" and outcomes[PASSING] == "pass", outcomes
    assert "fail" not in outcomes.values() and "xpass" not in outcomes.values(), outcomes
    xfail = next(r for r in result.report["results"] if r["id"] == DEVIATION)
    assert "expect.yaml:4" in xfail["message"], "the earlier entries' glob does not match: the last one judges it"
    # The first entry matched nothing: stale; the flaky one that matched nothing is not.
    assert [e["source"].split(":")[-1] for e in result.report["stale_expectations"]] == ["2"] and result.code == 1


def test_flaky_must_be_a_boolean(conform, tmp_path):
    expect = expectations(tmp_path, """\
        expectations:
          - {op: Slice, flaky: sometimes, message: "*", reason: r}
        """)
    result = conform(*BASE, "--case", PASSING, "--expect", expect)
    said = result.stdout + result.stderr
    assert result.code == 2 and "'flaky' is true or false" in said and "expect.yaml:2" in said


def test_a_rule_entry_leaves_rejected_cases_alone_and_is_stale_when_the_runtime_rejects_every_one(conform, tmp_path):
    expect = expectations(tmp_path, """\
        expectations:
          - {op: Slice, rule: steps-zero, reason: onnxruntime rejects a zero step; never a deviation}
          - {op: Slice, rule: negative-axis, reason: counted from the back before Slice-11}
        """)
    result = conform("run", "--op", "Slice", "--no-hypothesis", "--expect", expect, "--strict", "--strict-validation")
    by_rule = lambda rule: {r["outcome"] for r in result.report["results"] if f"({rule})" in r["message"] or f" {rule}:" in r["message"]}
    assert by_rule("steps-zero") == {"pass"} and by_rule("negative-axis") == {"xfail"}
    assert [e["source"].split(":")[-1] for e in result.report["stale_expectations"]] == ["2"] and result.code == 1


def test_an_unknown_trait_is_a_file_error_that_lists_the_ops_traits(conform, tmp_path):
    expect = expectations(tmp_path, """\
        expectations:
          - {op: Slice, reason: x}
          - {op: Slice, when: int-max, reason: y}
        """)
    result = conform(*BASE, "--expect", expect)
    assert result.code == 2 and "expect.yaml:3" in result.stderr
    assert "not a trait of Slice" in result.stderr and "negative-step-int-max-end" in result.stderr


def test_entries_that_could_never_match_are_file_errors_not_silently_dead(tmp_path):
    from conformance.errors import CaseFileError
    from conformance.expectations import load

    path = expectations(tmp_path, """\
        expectations:
          - {op: Slce, reason: a}
          - {op: Slice, versions: [12], reason: b}
          - {op: Slice, versions: abc, reason: c}
          - {op: Slice, dtypes: [nosuch], reason: d}
          - {op: Slice, runner: 5, reason: e}
          - {op: Slice, case: [1], reason: f}
          - {op: Slice, versions: [13], dtypes: [float32], reason: g}
          - {op: Slice, modes: [input, const], reason: h}
          - {op: Slice, optimizations: maybe, reason: i}
          - {op: Slice, modes: [constant], optimizations: off, reason: j}
          - {op: Slice, rule: [negative-axis, bound-not-scalar], reason: k}
          - {op: Slice, rule: dtype-not-allowed, reason: l}
          - {op: Slice, modes: all, optimizations: all, reason: m}
        """)
    with pytest.raises(CaseFileError) as caught:
        load(Path(path))
    found = {line: message for _, line, message in caught.value.problems}
    assert "unknown op 'Slce'" in found[2]
    assert "Slice has no version 12 (versions: 1, 10, 11, 13)" in found[3]
    assert "Slice has no version 'abc'" in found[4]
    assert "unknown dtype 'nosuch'" in found[5]
    assert "'runner' is text, not 5" in found[6]
    assert "'case' is a case id or a list of them" in found[7]
    assert 8 not in found  # float32 is another name of float
    assert "'modes' takes the input modes of --mode (input, initializer, constant), one or a list, not ['input', 'const']" in found[9]
    assert "'optimizations' takes the levels of --optimizations (on, off), one or a list, not 'maybe'" in found[10]
    assert 11 not in found  # YAML reads a bare off as false: it is the level
    assert found[12].startswith("'rule' takes the rules of Slice's reference (dtype-not-allowed, ")
    assert found[12].endswith("), one or a list, not ['negative-axis', 'bound-not-scalar']") and "negative-axis" in found[12]
    assert 13 not in found and 14 not in found


def test_an_entry_naming_a_dtype_by_another_name_matches_it(conform, tmp_path):
    expect = expectations(tmp_path, f"""\
        expectations:
          - {{op: Slice, dtypes: [float32], case: {DEVIATION}, reason: onnxruntime reads INT_MAX as 'to the start'}}
        """)
    result = conform(*BASE, "--case", DEVIATION, "--expect", expect, "--ci")
    assert result.report["results"][0]["outcome"] == "xfail" and result.code == 0


@pytest.mark.parametrize("runner, matches", [("cpu", True), ("CPUExecutionProvider", True), ("cuda", False),
                                             ("CUDAExecutionProvider", False), ("reference", False)])
def test_an_entry_names_its_provider_by_either_name(conform, tmp_path, runner, matches):
    # Before, `runner: CPUExecutionProvider` (the name reports use) matched nothing.
    expect = expectations(tmp_path, f"""\
        expectations:
          - {{op: Slice, runner: {runner}, case: {DEVIATION}, reason: onnxruntime reads INT_MAX as 'to the start'}}
        """)
    result = conform(*BASE, "--case", DEVIATION, "--expect", expect)
    assert result.report["results"][0]["outcome"] == ("xfail" if matches else "fail")


def test_junit_parses_and_its_counts_equal_the_json_summary(conform, tmp_path):
    junit, html = tmp_path / "r.xml", tmp_path / "r.html"
    result = conform("run", "--op", "Slice", "--opset", "13", "--dtype", "float", "--examples", "5",
                     "--junit", str(junit), "--html", str(html))
    summary = result.report["summary"]
    root = ElementTree.parse(junit).getroot()
    cases = root.findall(".//testcase")
    assert int(root.get("tests")) == len(cases) == summary["total"]
    assert int(root.get("failures")) == len(root.findall(".//failure")) == summary["fail"] + summary["crash"] + summary["timeout"] + summary["fallback"]
    assert int(root.get("skipped")) == len(root.findall(".//skipped")) == summary["xfail"] + summary["unsupported"] + summary["skipped"]
    failure = root.find(".//failure")
    assert failure is not None and "replay: conform run" in failure.text
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and DEVIATION.split("/")[1] in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)  # self-contained: nothing from elsewhere


def test_shards_are_disjoint_and_together_equal_the_unsharded_run(conform, tmp_path):
    args = ("run", "--op", "Clip", "--examples", "4", "--seed", "3")
    whole = {r["id"] for r in conform(*args).report["results"]}
    shards = []
    for k in (1, 2, 3):
        path = tmp_path / f"shard{k}.json"
        conform(*args, "--shard", f"{k}/3", "--report-json", str(path))
        shards.append(path)
    ids = [{r["id"] for r in json.loads(p.read_text())["results"]} for p in shards]
    assert all(ids) and not (ids[0] & ids[1]) and not (ids[0] & ids[2]) and not (ids[1] & ids[2])
    assert ids[0] | ids[1] | ids[2] == whole
    merged = tmp_path / "merged.json"
    result = conform("merge", *map(str, shards), "--report-json", str(merged), "--junit", str(tmp_path / "m.xml"))
    doc = json.loads(merged.read_text())
    assert {r["id"] for r in doc["results"]} == whole and doc["summary"]["total"] == len(whole)
    assert int(ElementTree.parse(tmp_path / "m.xml").getroot().get("tests")) == len(whole)
    assert result.code in (0, 1)


SMALL_RUN = ("run", "--op", "Clip", "--opset", "13", "--dtype", "float", "--examples", "6", "--seed", "3")


@pytest.fixture(scope="module")
def shard_reports(tmp_path_factory):
    """Reports of shards of a small run: thirds, halves, and thirds of the same run with another seed."""
    folder = tmp_path_factory.mktemp("shards")
    made = {}
    for name, extra in [("1/3", ()), ("2/3", ()), ("3/3", ()), ("1/2", ()), ("1/3 seed 4", ("--seed", "4"))]:
        path = folder / f"{name.replace('/', 'of').replace(' ', '-')}.json"
        subprocess.run([sys.executable, "-m", "conformance", *SMALL_RUN, *extra, "--shard", name.split()[0],
                        "--report-json", str(path)], capture_output=True, timeout=600, cwd=folder)
        made[name] = path
    return made


def test_merging_all_shards_is_complete(conform, shard_reports, tmp_path):
    result = conform("merge", *(str(shard_reports[k]) for k in ("1/3", "2/3", "3/3")), "--report-json", "all.json")
    doc = json.loads((tmp_path / "all.json").read_text())
    assert result.code in (0, 1) and doc["complete"] and doc["missing_shards"] == []


def test_merging_keeps_each_shards_notes_once(shard_reports, tmp_path):
    from conformance.report.merge import merge

    shards = []
    for k, notes in (("1/3", ["a", "b"]), ("2/3", ["b", "c"]), ("3/3", [])):
        doc = json.loads(shard_reports[k].read_text())
        doc["notes"] = notes
        shards.append(tmp_path / f"{k.replace('/', 'of')}.json")
        shards[-1].write_text(json.dumps(doc))
    assert merge(shards)["notes"] == ["a", "b", "c"]


def test_merging_with_a_shard_missing_is_exit_2_and_says_which(conform, shard_reports, tmp_path):
    result = conform("merge", str(shard_reports["1/3"]), str(shard_reports["3/3"]), "--report-json", "part.json")
    assert result.code == 2 and "the merged report is incomplete: shard 2/3 missing" in result.stderr, result.stderr
    doc = json.loads((tmp_path / "part.json").read_text())
    assert not doc["complete"] and doc["missing_shards"] == ["2/3"]
    assert doc["summary"]["total"] == sum(json.loads(shard_reports[k].read_text())["summary"]["total"] for k in ("1/3", "3/3"))


def test_merging_an_interrupted_shard_is_exit_2(conform, shard_reports, tmp_path):
    interrupted = tmp_path / "2of3-interrupted.json"
    interrupted.write_text(shard_reports["2/3"].read_text().replace('"complete": true', '"complete": false', 1))
    result = conform("merge", str(shard_reports["1/3"]), str(interrupted), str(shard_reports["3/3"]), "--report-json", "m.json")
    assert result.code == 2 and f"{interrupted} was interrupted (complete: false)" in result.stderr, result.stderr


@pytest.mark.parametrize("others, message", [
    (("1/3 seed 4",), "are not shards of one run: seed 3 vs 4"),
    (("1/2",), "the reports split the run different ways (into 2 and into 3)"),
])
def test_merging_reports_of_different_runs_is_refused(conform, shard_reports, tmp_path, others, message):
    result = conform("merge", str(shard_reports["2/3"]), *(str(shard_reports[k]) for k in others), "--report-json", "m.json")
    assert result.code == 2 and message in result.stderr, result.stderr
    assert not (tmp_path / "m.json").exists()


def test_shards_run_with_another_hypothesis_are_not_merged(conform, shard_reports, tmp_path):
    # The same seed draws other cases with another hypothesis: such shards would merge into a run
    # that repeats some cases and misses others, so the report names the versions and merge refuses.
    from importlib.metadata import version

    doc = json.loads(shard_reports["2/3"].read_text())
    assert doc["tool"]["hypothesis"] == version("hypothesis") and doc["tool"]["conform"] == version("conform")
    doc["tool"]["hypothesis"] = "6.0.0"
    other = tmp_path / "2of3-older-hypothesis.json"
    other.write_text(json.dumps(doc))
    result = conform("merge", str(shard_reports["1/3"]), str(other), str(shard_reports["3/3"]), "--report-json", "m.json")
    [message] = result.stderr.splitlines()  # one line, however long its paths
    assert result.code == 2 and f"are not shards of one run: tool hypothesis '{version('hypothesis')}' vs '6.0.0'" in message
    assert "install the same ones for every shard" in message and not (tmp_path / "m.json").exists()


def test_a_case_id_with_shards_is_run_by_the_shard_that_holds_it_and_misspelt_reported_by_one(conform, tmp_path):
    runs, misspelt = [], []
    for shard in ("1/2", "2/2"):
        result = conform(*BASE, "--case", DEVIATION, "--shard", shard)
        runs.append((result.code, result.report["summary"]["total"]))
        misspelt.append(conform(*BASE, "--case", "Slice-13/nope/float/int64", "--shard", shard).code)
    assert sorted(runs) == [(0, 0), (1, 1)]  # the deviation fails in its shard; the other has nothing to do
    assert sorted(misspelt) == [0, 2]


def test_bad_shard_is_exit_2(conform):
    result = conform(*BASE, "--shard", "4/3")
    assert result.code == 2 and "between 1 and N" in result.stderr


@pytest.mark.parametrize("option, outcome, case", [
    ("--strict-validation", "lenient", "Slice-10/negative_axis_before_11/float/int64"),  # onnxruntime accepts a negative axis
    ("--fail-on-unsupported", "unsupported", "Slice-13/omitted_axes_full_rank/complex64/int64"),  # and has no complex Slice
])
def test_what_an_option_makes_failing_fails_the_junit_report_and_the_merge_of_shards_too(conform, tmp_path, option, outcome, case):
    # The merge judged only fail, error, crash, timeout and fallback, and JUnit likewise: shards
    # run under --strict-validation each exited 1 on a lenient case, and their merge exited 0.
    args = ("run", "--op", "Slice", "--no-hypothesis", "--case", case, "--case", PASSING)
    plain = conform(*args, "--junit", str(tmp_path / "plain.xml"))
    assert plain.code == 0 and {r["outcome"] for r in plain.report["results"]} == {outcome, "pass"}
    assert ElementTree.parse(tmp_path / "plain.xml").getroot().get("failures") == "0"
    whole = conform(*args, option, "--junit", str(tmp_path / "whole.xml"))
    shards = [tmp_path / f"shard{k}.json" for k in (1, 2)]
    for k, shard in enumerate(shards, 1):
        conform(*args, option, "--shard", f"{k}/2", "--report-json", str(shard))
    merged = conform("merge", *map(str, shards), "--report-json", str(tmp_path / "m.json"), "--junit", str(tmp_path / "m.xml"),
                     "--html", str(tmp_path / "m.html"))
    assert whole.code == merged.code == 1, merged.stderr
    for junit in ("whole.xml", "m.xml"):
        root = ElementTree.parse(tmp_path / junit).getroot()
        [failure] = root.findall(".//failure")
        assert root.get("failures") == "1" and failure.get("type") == outcome and root.get("skipped") == "0", junit
    assert f">{outcome}: {case}</h3>" in (tmp_path / "m.html").read_text()


def test_an_entry_is_not_stale_for_want_of_the_cases_the_run_left_out_or_in_a_run_on_another_runner(conform, tmp_path):
    # Under --strict, `--dtype float` failed on an entry about int64 cases (as did a shard on the
    # entries of cases in other shards, and a CPU run on an entry for CUDA): each matched no case
    # of a run that chose none of the cases it could match.
    expect = expectations(tmp_path, """\
        expectations:
          - {op: Clip, dtypes: [int64], when: int64-beyond-int32, reason: int64 beyond int32 left unclipped}
          - {op: Clip, runner: cuda, when: nan-bound, reason: about CUDA}
          - {op: Clip, case: Clip-13/no_such_case/float, reason: a case renamed since}
          - {op: Clip, dtypes: [float], when: nan-bound, reason: no runtime here deviates on these}
        """)
    args = ("run", "--op", "Clip", "--opset", "13", "--examples", "5", "--expect", expect)
    narrowed = conform(*args, "--dtype", "float", "--strict")
    assert [e["source"].split(":")[-1] for e in narrowed.report["stale_expectations"]] == ["5"] and narrowed.code == 1
    assert "2 expectations matched no case and were not judged stale: --dtype left out cases they may match" in narrowed.stdout
    assert "1 expectation for other runners, not judged here: cuda" in narrowed.stdout  # a misspelt runner would show
    whole = conform(*args)
    assert [e["source"].split(":")[-1] for e in whole.report["stale_expectations"]] == ["4", "5"]
    assert "not judged stale" not in whole.stdout
    assert any(r["outcome"] == "xfail" and r["dtype"] == "int64" for r in whole.report["results"])


def test_each_shard_judges_the_case_entries_it_holds_and_their_merge_judges_every_entry(conform, tmp_path):
    known = "Clip-13/int64_below_int32_min/int64"  # onnxruntime leaves it unclipped
    expect = expectations(tmp_path, f"""\
        expectations:
          - {{op: Clip, case: {known}, reason: int64 beyond int32 left unclipped}}
          - {{op: Clip, case: Clip-13/no_such_case/float, reason: a case renamed since}}
          - {{op: Clip, dtypes: [float], when: nan-bound, reason: no runtime here deviates on these}}
        """)
    args = ("run", "--op", "Clip", "--opset", "13", "--no-hypothesis", "--expect", expect)
    for k in (1, 2):
        conform(*args, "--shard", f"{k}/2", "--report-json", str(tmp_path / f"{k}.json"))
    shards = [json.loads((tmp_path / f"{k}.json").read_text()) for k in (1, 2)]
    stale = [[e["source"].split(":")[-1] for e in shard["stale_expectations"]] for shard in shards]
    holding = [k for k, shard in enumerate(shards) if any(r["id"] == known for r in shard["results"])]
    assert holding and "2" not in stale[1 - holding[0]]  # the other shard does not hold its case
    assert sorted(stale) == [[], ["3"]]  # the missing case is judged by the one shard that would hold it
    merged = conform("merge", str(tmp_path / "1.json"), str(tmp_path / "2.json"), "--report-json", str(tmp_path / "m.json"))
    assert [e["source"].split(":")[-1] for e in json.loads((tmp_path / "m.json").read_text())["stale_expectations"]] == ["3", "4"]
    strict = conform("merge", str(tmp_path / "1.json"), str(tmp_path / "2.json"), "--strict", "--report-json", str(tmp_path / "m.json"))
    assert merged.code == 0 and strict.code == 1
    for line in (3, 4):  # why the merge fails, said as a run says it
        assert f"STALE expectation at expect.yaml:{line} matches no case" in strict.stdout, strict.stdout


def test_a_failing_merge_names_each_family_of_failures_with_its_replay_as_the_whole_run_groups_them(conform, tmp_path):
    # It printed only how many cases it merged, and exited 1; then a line for each failing case,
    # the first 25 only: Slice-13's 28 failing bindings of one case filled them, and its other
    # failures (another case, the hypothesis cases) were never named.
    args = ("run", "--op", "Slice", "--opset", "13", "--examples", "5")
    whole = conform(*args)
    for k in (1, 2):
        conform(*args, "--shard", f"{k}/2", "--report-json", str(tmp_path / f"{k}.json"))
    merged = conform("merge", str(tmp_path / "1.json"), str(tmp_path / "2.json"), "--report-json", str(tmp_path / "m.json"))
    failed = [r for r in json.loads((tmp_path / "m.json").read_text())["results"] if r["outcome"] == "fail"]
    assert len(failed) > 25 and merged.code == 1
    lines = merged.stdout.splitlines()
    firsts = [line for line in lines if line.startswith("FAIL ")]
    panels = [line for line in whole.stdout.splitlines() if re.fullmatch(r"─+ FAIL ─+", line)]
    assert len(firsts) == len(panels) >= 3  # one a family, as the run's panels
    named = 0
    for record in failed:
        if f"FAIL {record['id']}: {record['message']}" in lines:
            at = lines.index(f"FAIL {record['id']}: {record['message']}") + 1
            too = lines[at] if lines[at].startswith("  fail too: ") else None  # none for a family of one
            assert lines[at + (too is not None)] == f"  replay: {record['replay']}"
            if too:
                named += int(too.split(" more ")[0].split()[-1]) if "this case in" in too else int(too.split()[2])
    assert len(firsts) + named == len(failed)
    assert f"{len(json.loads((tmp_path / 'm.json').read_text())['results'])} cases from 2 reports: " in merged.stdout


def test_an_xfail_and_an_xpass_replay_with_the_expectations_file_and_end_as_the_run_did(conform, tmp_path):
    # The replay left --expect out: an xfail replayed as a fail (exit 1), and an xpass that failed
    # a --strict run replayed as a pass (exit 0).
    expect = expectations(tmp_path, f"""\
        expectations:
          - {{op: Slice, case: {DEVIATION}, reason: onnxruntime reads INT_MAX with a negative step as 'to the start'}}
          - {{op: Slice, case: {PASSING}, reason: was broken once}}
        """)
    run = conform(*BASE, "--case", DEVIATION, "--case", PASSING, "--expect", expect, "--strict")
    assert run.code == 1
    for record in run.report["results"]:
        again = replayed(conform, record)
        assert [(r["id"], r["outcome"]) for r in again.report["results"]] == [(record["id"], record["outcome"])]
        assert again.code == (1 if record["outcome"] == "xpass" else 0), record["replay"]
    assert sorted(r["outcome"] for r in run.report["results"]) == ["xfail", "xpass"]


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "expectations").glob("*.yaml")))
def test_every_shipped_expectations_file_loads_and_names_one_runner(name):
    # load checks each entry's op, versions, dtypes, traits and rules against conform's references.
    from conformance import expectations as shipped

    entries = shipped.load(ROOT / "expectations" / name)
    assert entries and all(entry.reason for entry in entries), name
    assert len({entry.runner for entry in entries}) == 1, f"{name} mixes runners: {sorted({e.runner for e in entries})}"
