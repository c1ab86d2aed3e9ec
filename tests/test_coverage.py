"""`conform coverage`: every op version of the ai.onnx domain against what conform covers, its
totals checked against onnx.defs read here on its own, its JSON whole or not at all."""

from __future__ import annotations

import json
import os
import re

import onnx.defs
import pytest
from onnx import AttributeProto
from typer.testing import CliRunner

from conformance.cli import app
from conformance.dtypes import dtype
from conformance.errors import ConformError
from conformance.reference import covered_ops, for_op
from conformance.registry import versions

TOTALS = re.compile(r"(\d+) of (\d+) ops, (\d+) of (\d+) op-versions, (\d+) of (\d+) \(op-version, dtype\) pairs")


def invoked(*args: str) -> tuple[int, str, str]:
    """`conform ARGS` in this process: exit code, stdout, stderr, a ConformError ended as `main` ends it."""
    result = CliRunner().invoke(app, list(args))
    error = result.exception if isinstance(result.exception, ConformError) else None
    if result.exception is not None and error is None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return (error.exit_code if error else result.exit_code), result.stdout, result.stderr + (error.message if error else "")


def schemas() -> list[onnx.defs.OpSchema]:
    return [s for s in onnx.defs.get_all_schemas_with_history() if s.domain == "" and not s.deprecated]


def tensor_types(type_strs) -> list[str]:
    return [t[len("tensor("):-1] for t in type_strs if t.startswith("tensor(")]


def widest_count(schema: onnx.defs.OpSchema) -> int:
    """How many dtypes an uncovered version counts: its widest type parameter's tensor types, or
    its first input's fixed tensor type."""
    if schema.type_constraints:
        return max(len(tensor_types(c.allowed_type_strs)) for c in schema.type_constraints)
    return len(tensor_types([schema.inputs[0].type_str])) if schema.inputs else 0


def carried(name: str) -> bool:
    try:
        dtype(name)
    except ConformError:
        return False
    return True


def expected_totals() -> tuple[int, ...]:
    """The totals line's six numbers, from onnx.defs and the covered ops' registered versions; a
    covered op covers every version (a test elsewhere fails when a version lacks a reference)."""
    found = schemas()
    covered = {(op, v.since_version): v.dtype_axis(for_op(op).dtype_param_of(v))
               for op in covered_ops() for v in versions(op)}
    pairs = sum(len(covered[(s.name, s.since_version)]) if (s.name, s.since_version) in covered else widest_count(s)
                for s in found)
    pairs_covered = sum(sum(map(carried, allowed)) for allowed in covered.values())
    return (len(covered_ops()), len({s.name for s in found}), len(covered), len({(s.name, s.since_version) for s in found}),
            pairs_covered, pairs)


def totals_of(text: str) -> tuple[int, ...]:
    [line] = [m for m in TOTALS.finditer(text)]
    return tuple(int(n) for n in line.groups())


def test_the_totals_agree_with_onnx_defs_read_here():
    code, stdout, stderr = invoked("coverage")
    assert code == 0, stderr
    assert totals_of(stdout) == expected_totals()


def test_every_covered_op_and_version_is_listed_as_covered(tmp_path):
    code, stdout, stderr = invoked("coverage", "--json", str(tmp_path / "c.json"))
    assert code == 0, stderr
    doc = json.loads((tmp_path / "c.json").read_text())
    rows = {(r["op"], r["version"]): r for r in doc["versions"]}
    for op in covered_ops():
        assert op in stdout
        reference = for_op(op)
        for version in versions(op):
            row = rows[(op, version.since_version)]
            assert row["covered"] is True and row["reason"] is None, row
            param = reference.dtype_param_of(version)  # DequantizeLinear-10 names it T
            assert row["type_param"] == param and row["allowed"] == list(version.dtype_axis(param))
            assert row["allowed"], f"{version.label}: a covered version with no dtype"
    assert {op for op, _ in rows if rows[(op, _)]["covered"]} == set(covered_ops())


def test_the_default_table_lists_only_covered_versions_and_missing_lists_the_rest():
    uncovered = next(s.name for s in schemas() if s.name not in covered_ops())
    shown = invoked("coverage")[1]
    everything = invoked("coverage", "--missing")[1]
    assert not re.search(rf"\b{uncovered}\b", shown)
    assert re.search(rf"\b{uncovered}\b", everything)
    assert totals_of(shown) == totals_of(everything)


def test_an_op_with_a_graph_attribute_is_reported_with_that_reason(tmp_path):
    with_graph = [s for s in schemas() if any(a.type == AttributeProto.GRAPH for a in s.attributes.values())]
    if not with_graph:
        pytest.skip("onnx defines no op with a graph attribute")
    schema = with_graph[0]
    graphs = [a.name for a in schema.attributes.values() if a.type == AttributeProto.GRAPH]
    assert invoked("coverage", "--json", str(tmp_path / "c.json"))[0] == 0
    doc = json.loads((tmp_path / "c.json").read_text())
    [row] = [r for r in doc["versions"] if (r["op"], r["version"]) == (schema.name, schema.since_version)]
    assert row["covered"] is False and "graph attribute" in row["reason"]
    assert all(name in row["reason"] for name in graphs), row["reason"]


def test_an_op_that_takes_only_sequences_says_so(tmp_path):
    sequences_only = [s for s in schemas() if s.type_constraints and any(
        c.allowed_type_strs and not tensor_types(c.allowed_type_strs) and all(t.startswith("seq(") for t in c.allowed_type_strs)
        for c in s.type_constraints) and not any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in s.attributes.values())]
    if not sequences_only:
        pytest.skip("onnx defines no op that takes sequences only")
    schema = sequences_only[0]
    assert invoked("coverage", "--json", str(tmp_path / "c.json"))[0] == 0
    [row] = [r for r in json.loads((tmp_path / "c.json").read_text())["versions"]
             if (r["op"], r["version"]) == (schema.name, schema.since_version)]
    assert row["covered"] is False and "sequence" in row["reason"]


def test_the_json_parses_and_holds_what_the_table_says(tmp_path):
    path = tmp_path / "out" / "coverage.json"
    code, stdout, _ = invoked("coverage", "--json", str(path))
    doc = json.loads(path.read_text())
    assert code == 0 and f"JSON: {path}" in stdout
    totals = doc["totals"]
    assert totals["line"] in stdout and totals_of(totals["line"]) == expected_totals()
    assert len(doc["versions"]) == totals["versions"] == len({(s.name, s.since_version) for s in schemas()})
    assert sum(r["covered"] for r in doc["versions"]) == totals["versions_covered"]
    assert all(set(r["dtypes"]) <= set(r["allowed"]) for r in doc["versions"])


def test_the_json_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    path = tmp_path / "coverage.json"
    path.write_text('{"earlier": true}\n')

    def fails(source, target):
        raise OSError(28, "No space left on device")

    import conformance.output

    monkeypatch.setattr(conformance.output.os, "replace", fails)
    code, stdout, stderr = invoked("coverage", "--json", str(path))
    assert code == 4 and f"cannot write the coverage JSON {path}: No space left on device" in stderr
    assert "Traceback" not in stderr
    assert json.loads(path.read_text()) == {"earlier": True}  # the earlier file, untouched
    assert os.listdir(tmp_path) == ["coverage.json"]  # and no half-written temporary file beside it
    assert TOTALS.search(stdout)  # the table is told all the same


def test_a_json_path_that_cannot_be_written_is_told_before_the_work(tmp_path):
    (tmp_path / "file").write_text("")
    code, _, stderr = invoked("coverage", "--json", str(tmp_path / "file" / "c.json"))
    assert code == 4 and "the coverage JSON" in stderr and "Traceback" not in stderr
