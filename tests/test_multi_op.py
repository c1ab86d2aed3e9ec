"""`conform run` of several ops: `--op A --op B` and `--all` make one run and one report, the
cases of each op in turn; an op of several that `--opset` or `--dtype` rules out is left out with
a note, not an error. Run in this process (no workers), on a few hypothesis cases per group."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from xml.etree import ElementTree

import pytest
from conftest import Invoked

from conformance.dtypes import all_names
from conformance.lifetime import MEMORY_VARIABLE
from conformance.reference import covered_ops, for_op
from conformance.registry import latest_opset, versions

def cheap(examples: int = 2) -> tuple[str, ...]:
    """Small and in this process: a few hypothesis cases per group only, none shrunk, no worker process."""
    return ("--no-yaml", "--examples", str(examples), "--shrink", "0", "--jobs", "1", "--no-isolation")


@pytest.fixture(autouse=True)
def in_a_folder_of_its_own(tmp_path, monkeypatch, own_scratch):
    """Each test in its own working folder (default reports go under it), the workers' memory
    variable a run sets given back afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(MEMORY_VARIABLE, raising=False)


def run(*args: str) -> tuple[Invoked, dict | None]:
    """`conform run ARGS` with the cheap options, and the JSON report it wrote (at --report-json),
    every case recorded (--report-passes): these tests read each case's record, in run order."""
    invoked = Invoked("run", *args, *cheap(), "--report-passes")
    path = Path(args[args.index("--report-json") + 1]) if "--report-json" in args else None
    return invoked, json.loads(path.read_text()) if path and path.exists() else None


def two_ops() -> tuple[str, str]:
    ops = covered_ops()
    if len(ops) < 2:
        pytest.skip("conform covers one op")
    return ops[0], ops[1]


def ids(report: dict) -> list[str]:
    return [record["id"] for record in report["results"]]


def test_two_ops_make_one_run_whose_report_holds_each_ops_cases_in_turn():
    first, second = two_ops()
    opset = str(latest_opset())
    alone = [run("--op", op, "--opset", opset, "--report-json", f"{op}.json") for op in (first, second)]
    both, report = run("--op", first, "--op", second, "--opset", opset, "--report-json", "both.json", "--junit", "both.xml")
    assert both.code == max(invoked.code for invoked, _ in alone), both.stderr
    assert ids(report) == ids(alone[0][1]) + ids(alone[1][1]) and report["options"]["ops"] == [first, second]
    assert [r["op"] for r in report["results"]] == [first] * len(ids(alone[0][1])) + [second] * len(ids(alone[1][1]))
    assert report["summary"]["total"] == len(report["results"])
    for record in report["results"]:  # each case replays on its own op, alone
        words = shlex.split(record["replay"])
        assert words[words.index("--op") + 1] == record["op"] and words.count("--op") == 1, record["replay"]
    root = ElementTree.parse("both.xml").getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [f"conform.{first}", f"conform.{second}"]
    assert sum(int(s.get("tests")) for s in suites) == int(root.get("tests")) == len(report["results"])


def test_a_run_of_several_ops_names_its_default_report_after_them():
    first, second = two_ops()
    opset = latest_opset()
    invoked = Invoked("run", "--op", first, "--op", second, "--opset", str(opset), *cheap())
    assert invoked.code in (0, 1), invoked.stderr
    report = json.loads(Path("reports", f"{first}+{second}-{opset}.json").read_text())
    assert {r["op"] for r in report["results"] + report["tallies"]} == {first, second}


def test_an_op_named_twice_runs_once():
    first, _ = two_ops()
    opset = str(latest_opset())
    _, once = run("--op", first, "--opset", opset, "--report-json", "once.json")
    _, twice = run("--op", first, "--op", first.lower(), "--opset", opset, "--report-json", "twice.json")
    assert ids(twice) == ids(once)


def test_all_runs_every_covered_op_in_order():
    opset = latest_opset()
    invoked = Invoked("run", "--all", "--opset", str(opset), *cheap(examples=1), "--report-passes")
    assert invoked.code in (0, 1), invoked.stderr
    report = json.loads(Path("reports", f"all-{opset}.json").read_text())
    in_force = [op for op in covered_ops() if versions(op)[0].since_version <= opset]
    assert report["options"]["ops"] == covered_ops()
    ran = list(dict.fromkeys(r["op"] for r in report["results"]))
    assert ran == in_force


def test_all_and_op_together_is_a_usage_error():
    invoked = Invoked("run", "--all", "--op", covered_ops()[0], *cheap())
    assert invoked.code == 2 and "--all" in invoked.stderr and "Traceback" not in invoked.stderr


def test_an_unknown_op_among_several_is_a_usage_error_naming_the_covered_ops():
    invoked = Invoked("run", "--op", covered_ops()[0], "--op", "NoSuchOp", *cheap())
    assert invoked.code == 2 and "unknown op 'NoSuchOp'" in invoked.stderr
    for op in covered_ops():
        assert op in invoked.stderr


def _early_and_late() -> tuple[str, str, int]:
    """Two covered ops, the second's first version above the first's, and the opset just below the
    second's first version (at which the first exists)."""
    firsts = {op: versions(op)[0].since_version for op in covered_ops()}
    late = max(firsts, key=firsts.get)
    early = [op for op in firsts if firsts[op] < firsts[late]]
    if not early:
        pytest.skip("every covered op has the same first version")
    return early[0], late, firsts[late] - 1


def test_an_op_not_yet_at_the_opset_is_left_out_with_a_note():
    early, late, opset = _early_and_late()
    alone, alone_report = run("--op", early, "--opset", str(opset), "--report-json", "alone.json")
    both, report = run("--op", early, "--op", late, "--opset", str(opset), "--report-json", "both.json")
    assert both.code == alone.code, both.stderr
    assert ids(report) == ids(alone_report) and {r["op"] for r in report["results"]} == {early}
    [note] = [line for line in both.stderr.splitlines() if line.startswith("note: ") and late in line]
    assert f"first version is {versions(late)[0].since_version}" in note
    assert [entry["op"] for entry in report["ops_left_out"]] == [late]


def test_one_op_not_at_the_opset_is_still_an_error():
    _, late, opset = _early_and_late()
    invoked, _ = run("--op", late, "--opset", str(opset), "--report-json", "r.json")
    assert invoked.code == 2 and f"first version is {versions(late)[0].since_version}" in invoked.stderr


def test_no_op_at_the_opset_is_a_usage_error():
    first, second = two_ops()
    invoked, report = run("--op", first, "--op", second, "--opset", "0", "--report-json", "r.json")
    assert invoked.code == 2 and report is None
    assert first in invoked.stderr and second in invoked.stderr


def _dtype_of_one_op_only(opset: int) -> tuple[str, str, str] | None:
    """A dtype that one covered op's version in force at `opset` allows and another's does not,
    with the two ops."""
    allowed = {op: set(_in_force(op, opset).allowed(for_op(op).dtype_param_of(_in_force(op, opset)))) for op in covered_ops()
               if versions(op)[0].since_version <= opset}
    for name in all_names():
        having = [op for op in allowed if name in allowed[op]]
        lacking = [op for op in allowed if name not in allowed[op]]
        if having and lacking:
            return name, having[0], lacking[0]
    return None


def _in_force(op: str, opset: int):
    return [v for v in versions(op) if v.since_version <= opset][-1]


def test_a_dtype_restricts_each_op_to_it_and_leaves_out_an_op_without_it():
    opset = latest_opset()
    found = _dtype_of_one_op_only(opset)
    if found is None:
        pytest.skip("every covered op allows the same dtypes")
    name, having, lacking = found
    invoked, report = run("--op", having, "--op", lacking, "--opset", str(opset), "--dtype", name, "--report-json", "r.json")
    assert invoked.code in (0, 1), invoked.stderr
    assert {(r["op"], r["dtype"]) for r in report["results"]} == {(having, name)}
    assert any(line.startswith("note: ") and lacking in line for line in invoked.stderr.splitlines())


def test_a_dtype_no_op_allows_is_a_usage_error():
    first, second = two_ops()
    opset = latest_opset()
    allowed = {d for op in (first, second) for d in _in_force(op, opset).allowed(for_op(op).dtype_param_of(_in_force(op, opset)))}
    unallowed = [name for name in all_names() if name not in allowed]
    if not unallowed:
        pytest.skip("the two ops allow every dtype")
    invoked, _ = run("--op", first, "--op", second, "--opset", str(opset), "--dtype", unallowed[0], "--report-json", "r.json")
    assert invoked.code == 2 and re.search(rf"dtype '{unallowed[0]}' is not allowed", invoked.stderr), invoked.stderr


def test_a_case_id_chooses_its_case_among_several_ops():
    first, second = two_ops()
    opset = str(latest_opset())
    _, report = run("--op", first, "--op", second, "--opset", opset, "--report-json", "all.json")
    wanted = [ids(report)[0], ids(report)[-1]]
    _, chosen = run("--op", first, "--op", second, "--opset", opset, "--case", wanted[0], "--case", wanted[1],
                    "--report-json", "chosen.json")
    assert ids(chosen) == wanted


def test_generate_writes_the_golden_tests_of_several_ops_into_one_folder():
    first, second = two_ops()
    invoked = Invoked("generate", "--op", first, "--op", second, "--opset", str(latest_opset()), "--no-yaml",
                      "--examples", "1", "--jobs", "1", "--out", "golden")
    assert invoked.code == 0, invoked.stderr
    manifest = json.loads(Path("golden", "manifest.json").read_text())
    names = [path.name for path in Path("golden").iterdir() if path.is_dir()]
    assert {name.split("_")[1] for name in names} == {first.lower(), second.lower()}
    assert manifest["complete"] is True


def test_list_shows_only_the_ops_named():
    first, second = two_ops()
    shown = Invoked("list", "--op", second).stdout
    assert re.search(rf"\b{second}\b", shown) and not re.search(rf"\b{first}\b", shown)


def test_a_report_named_after_many_ops_names_the_first_few_and_how_many_more():
    from conformance.cli import MAX_OPS_IN_NAME, _ops_in_name

    many = tuple(f"MadeUpOp{index}" for index in range(30))
    name = _ops_in_name(many)
    shown, more = name.rsplit("+", 1)
    assert len(shown) <= MAX_OPS_IN_NAME and more == f"{30 - len(shown.split('+'))}more"
    assert shown.split("+") == list(many[:len(shown.split("+"))])
    assert _ops_in_name(many[:2]) == "MadeUpOp0+MadeUpOp1"
