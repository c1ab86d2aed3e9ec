"""`conform coverage`: every op and op version of the ai.onnx domain against what conform covers.

This module owns the computation and returns plain dataclasses (`Coverage.as_dict` for JSON, or
for the HTML report); the CLI only renders them. The ops and versions are those of onnx.defs'
schemas in the default domain, deprecated ones left out, as the registry leaves them out.

A version is covered when its op has a reference (`conformance.reference`) with semantics for it.
Its dtypes are those of one type parameter, its primary one: for a covered version the
reference's `dtype_param`, the one conform draws cases in; for any other the widest (the parameter
that allows the most tensor types, the first of equals), or, for a schema with no type parameter,
its first input's fixed type. A covered version covers each of those dtypes that conform can
carry (that `conformance.dtypes` knows). An uncovered version says why it is: what keeps conform
from building its node (a graph attribute; a type parameter, input or output with sequence or
optional types only), or "not yet".
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Iterable

import onnx
import onnx.defs

from . import casefile, registry
from .case import dtype_param_in
from .dtypes import dtype
from .errors import ConformError
from .output import write_atomic
from .reference import covered_ops, for_op

NOT_YET = "not yet"
# The words a schema's non-tensor types start with, as a reason names them.


@dataclass(frozen=True)
class VersionCoverage:
    """One op version: whether conform covers it; the dtypes its primary type parameter
    (`type_param`, None for a schema without one) allows, and those of them conform covers; its
    YAML case count; and, when it is not covered, why (`reason`)."""

    op: str
    version: int
    covered: bool
    type_param: str | None
    allowed: tuple[str, ...]
    dtypes: tuple[str, ...]
    cases: int
    reason: str | None = None

    @property
    def label(self) -> str:
        return f"{self.op}-{self.version}"


@dataclass(frozen=True)
class Totals:
    """How many ops, op versions and (op version, dtype) pairs there are, and how many conform covers."""

    ops: int
    ops_covered: int
    versions: int
    versions_covered: int
    pairs: int
    pairs_covered: int

    def line(self) -> str:
        """'N of 203 ops, M of 626 op-versions, D of T (op-version, dtype) pairs'."""
        return (f"{self.ops_covered} of {self.ops} ops, {self.versions_covered} of {self.versions} op-versions, "
                f"{self.pairs_covered} of {self.pairs} (op-version, dtype) pairs")


@dataclass(frozen=True)
class Coverage:
    """Every op version of the ai.onnx domain, by op name then version, and the totals."""

    versions: tuple[VersionCoverage, ...]
    totals: Totals
    onnx_version: str
    latest_opset: int

    def as_dict(self) -> dict:
        """Plain data for JSON: the totals (with their line), then each op version."""
        return {"onnx": self.onnx_version, "latest_opset": self.latest_opset,
                "totals": {**asdict(self.totals), "line": self.totals.line()},
                "versions": [asdict(v) for v in self.versions]}


def compute(case_roots: Iterable[Path] = (casefile.BUILTIN_CASES,), counted_ops: Iterable[str] | None = None) -> Coverage:
    """The coverage of every op version, with the YAML case counts of the case files under
    `case_roots`: of every op, or of `counted_ops` only (the other versions' counts are then 0:
    a report of some ops counts the cases of those, not the ~74,000 examples of all)."""
    counts = casefile.count_cases(case_roots, counted_ops)
    covered = set(covered_ops())
    rows = tuple(_version_coverage(schema, covered, counts) for schema in domain_schemas())
    return Coverage(rows, _totals(rows), onnx.__version__, registry.latest_opset())


def domain_schemas() -> list[onnx.defs.OpSchema]:
    """Every schema of the ai.onnx domain that is not deprecated, by op name then version."""
    found = [s for s in onnx.defs.get_all_schemas_with_history() if s.domain == "" and not s.deprecated]
    return sorted(found, key=lambda s: (s.name, s.since_version))


def write_json(path: Path, found: Coverage) -> None:
    """The coverage as a JSON file, written whole or not at all (OutputError when it cannot be)."""
    write_atomic(path, json.dumps(found.as_dict(), indent=1) + "\n", "the coverage JSON")


def _version_coverage(schema: onnx.defs.OpSchema, covered: set[str], counts: dict[tuple[str, int], int]) -> VersionCoverage:
    cases = counts.get((schema.name, schema.since_version), 0)
    if schema.name in covered and _has_semantics(schema):
        param = _dtype_param(schema.name, schema.since_version)
        allowed = _allowed(schema.name, schema.since_version, param)
        return VersionCoverage(schema.name, schema.since_version, True, param, allowed,
                               tuple(d for d in allowed if carried(d)), cases)
    param, allowed = _widest(schema)
    return VersionCoverage(schema.name, schema.since_version, False, param, allowed, (), cases,
                           structural_reason(schema) or NOT_YET)


def _has_semantics(schema: onnx.defs.OpSchema) -> bool:
    """Whether the op's reference answers this version (its semantics go back this far)."""
    return any(semantics.since <= schema.since_version for semantics in for_op(schema.name).semantics)


def _dtype_param(op: str, since_version: int) -> str:
    """The op's dtype axis as this version names it (DequantizeLinear-10's T, later versions' T1)."""
    param = for_op(op).dtype_param
    found = next((v for v in registry.versions(op) if v.since_version == since_version), None)
    return param if found is None else dtype_param_in(found, param)


def _allowed(op: str, since_version: int, param: str) -> tuple[str, ...]:
    """The dtypes the registry's version allows for `param`: those conform draws cases in."""
    for version in registry.versions(op):
        if version.since_version == since_version:
            return version.dtype_axis(dtype_param_in(version, param))
    return ()


def _widest(schema: onnx.defs.OpSchema) -> tuple[str | None, tuple[str, ...]]:
    """The type parameter allowing the most tensor types, and those types; for a schema without
    type parameters, its first input's fixed tensor type."""
    params = [(c.type_param_str, registry.tensor_types(c.allowed_type_strs)) for c in schema.type_constraints]
    if params:
        return max(params, key=lambda param: len(param[1]))  # max keeps the first of equals
    first = schema.inputs[0].type_str if schema.inputs else ""
    return None, registry.tensor_types([first])


structural_reason = registry.refusal_of  # one answer to "why can conform not build it", the registry's


@cache
def carried(name: str) -> bool:
    """Whether conform can carry values of this dtype (`conformance.dtypes` knows it)."""
    try:
        dtype(name)
    except ConformError:
        return False
    return True


def _totals(rows: tuple[VersionCoverage, ...]) -> Totals:
    return Totals(ops=len({r.op for r in rows}), ops_covered=len({r.op for r in rows if r.covered}),
                  versions=len(rows), versions_covered=sum(r.covered for r in rows),
                  pairs=sum(len(r.allowed) for r in rows), pairs_covered=sum(len(r.dtypes) for r in rows))


__all__ = ["Coverage", "Totals", "VersionCoverage", "NOT_YET", "compute", "domain_schemas", "structural_reason", "write_json"]
