"""Golden data conform writes is golden data conform reads back: for every op version it covers,
what `generate` writes, `verify` checks (every stored output one the spec allows, none unreadable)
and `run --from` runs (no test refused as unreadable).

The failure this guards against: QuantizeLinear-10/-13 and DequantizeLinear-10/-13 have an input
of a fixed type (`y_scale`, `x_scale`: tensor(float), no type parameter), which the stored test's
type binding took for a type parameter; every test of those versions was "cannot be checked:
KeyError: 'tensor(float)'" in `verify`, and `run --from` stopped on the first with exit 2.

A whole `generate --all` costs minutes on two cores, so the cases are sampled, every op version
still covered: one YAML case of each version for each model structure its cases have (which
optional inputs are present, which attributes are set: what a stored test's model must be read
back with), in the first type binding it runs in, and a hypothesis case for each dtype of each type
parameter of each version (a greedy cover of its bindings: the binding is what a stored test's
model is matched back to). Commands run in
this process, as `conform` runs them, one worker (no process to start).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import Invoked

from conformance import golden, strategies
from conformance.execute import RunOptions, select_examples, selected_versions
from conformance.lifetime import MEMORY_VARIABLE
from conformance.reference import covered_ops

SEED = 0
IN_THIS_PROCESS = ("--jobs", "1")


@pytest.fixture
def in_a_folder_of_its_own(tmp_path, monkeypatch, own_scratch):
    """The commands' working folder (default reports go under it) is this test's, and the workers'
    memory variable a command sets is given back afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(MEMORY_VARIABLE, raising=False)
    return tmp_path


def every_covered_version() -> list[str]:
    """The op versions `conform list` shows: every version of every covered op that conform builds."""
    return [v.label for v in selected_versions(RunOptions(ops=tuple(covered_ops())))]


def one_yaml_case_of_each_model_structure() -> list[str]:
    """For each covered op version, the id of its first YAML case of each structure (the inputs
    present, the attributes set) that `generate` stores (valid, one reading), in the first type
    binding it runs in."""
    examples = select_examples(RunOptions(ops=tuple(covered_ops()), use_hypothesis=False, seed=SEED))
    first = {}
    for example in examples:
        present = tuple(sorted(name for name, value in example.inputs.items() if value is not None))
        structure = (example.version.label, present, tuple(sorted(example.attributes)))
        if structure not in first and stored_by_generate(example):
            first[structure] = example.id
    return list(first.values())


def stored_by_generate(example) -> bool:
    """Whether `generate` writes a test for this case (not invalid, not ambiguous)."""
    expected = golden.expected_for(example)
    return expected.is_valid and not (expected.ambiguity or expected.may_reject)


def hypothesis_cases_for_every_dtype_of_every_type_parameter() -> list:
    """For each covered op version, hypothesis cases whose bindings give each type parameter each
    dtype it allows (a greedy cover: a binding is drawn when it brings a dtype not seen yet)."""
    examples = []
    for version in selected_versions(RunOptions(ops=tuple(covered_ops()))):
        seen: set[tuple[str, str]] = set()
        for binding in strategies.bindings(version):
            if set(binding.items()) - seen:
                seen |= set(binding.items())
                examples += strategies.draw_group(version, binding, 1, SEED)
    return examples


def op_versions_of(names: list[str], manifest: dict) -> dict[str, list[str]]:
    """The test directories named, by the op version the manifest says each was written for."""
    version_of = {test["name"]: f"{test['op']}-{test['version']}" for test in manifest["tests"]}
    found = defaultdict(list)
    for name in names:
        found[version_of.get(name, "(not in the manifest)")].append(name)
    return found


def unreadable_by_version(report: dict, manifest: dict) -> str:
    """What `verify` could not read, one line per op version: how many, and the first reason."""
    why = {Path(entry["path"]).name: entry["reason"] for entry in report["unreadable"]}
    return "\n".join(f"{version}: {len(names)} unreadable, e.g. {why[names[0]]}"
                     for version, names in sorted(op_versions_of(list(why), manifest).items()))


def test_every_covered_op_version_s_golden_tests_are_read_back_by_verify_and_run_from(in_a_folder_of_its_own):
    out = in_a_folder_of_its_own / "golden"
    yaml_ids = one_yaml_case_of_each_model_structure()
    written = Invoked("generate", "--all", "--no-hypothesis", "--seed", str(SEED), "--out", str(out), *IN_THIS_PROCESS,
                      *[word for case in yaml_ids for word in ("--case", case)])
    assert written.code == 0, f"generate of the YAML cases failed:\n{written.output}"
    golden.generate(hypothesis_cases_for_every_dtype_of_every_type_parameter(), golden.GenerateOptions(out, seed=SEED))
    manifest = json.loads((out / golden.MANIFEST).read_text())
    stored = [test["name"] for test in manifest["tests"] if test["status"].startswith("written")]
    missing = sorted(set(every_covered_version()) - set(op_versions_of(stored, manifest)))
    assert not missing, f"no golden test was written for {', '.join(missing)}: the sample no longer covers every op version"

    verified = Invoked("verify", str(out), "--report-json", "verify.json", *IN_THIS_PROCESS)
    report = json.loads(Path("verify.json").read_text())
    assert not report["unreadable"], ("stored tests conform wrote that verify cannot read back "
                                      f"(see golden.example_from_test and _types):\n{unreadable_by_version(report, manifest)}")
    disagreeing = [f"{r['id']}: {r['outcome']}: {r['message']}" for r in report["results"]
                   if r["outcome"] not in ("pass", "ambiguous")]
    assert verified.code == 0 and not disagreeing, f"verify exit {verified.code}:\n" + "\n".join(disagreeing[:20])
    assert not report["skipped"], f"verify skipped tests conform wrote: {report['skipped'][:5]}"
    assert report["summary"]["total"] == len(stored), (f"verify checked {report['summary']['total']} data sets of "
                                                       f"the {len(stored)} tests written")
    renamed = {t["id"] for t in manifest["tests"] if t["name"] in stored} ^ {r["id"] for r in report["results"]}
    assert not renamed, ("verify gives stored tests other ids than the cases they were written from (see "
                         f"golden.stored_case_name and the type binding read back): {sorted(renamed)[:10]}")

    ran = Invoked("run", "--from", str(out), "--runner", "reference", "--no-isolation", "--report-json", "run.json",
                  *IN_THIS_PROCESS)
    assert ran.code in (0, 1), f"run --from refused the golden folder (exit {ran.code}): {ran.output[-2000:]}"
    run_report = json.loads(Path("run.json").read_text())
    assert not run_report["skipped"], f"run --from skipped tests conform wrote: {run_report['skipped'][:5]}"
    assert run_report["summary"]["total"] == len(stored), (f"run --from ran {run_report['summary']['total']} of the "
                                                           f"{len(stored)} tests written")
