"""The JSON report: tool versions, runner, seed, summary, the precision profile, and one record per result.

Arrays are written as {"dtype", "shape", "data"}; non-finite floats as the strings "nan", "inf",
"-inf" so the file stays strict JSON. Large tensors are cut to their first values, and say so.
A record whose message quotes one line of a runtime's longer error keeps the whole (bounded) text
as `detail` (see runners.base.telling_line and RunOutput.detail; it comes with the result's extras).
A record judged by a precision budget carries its worst error (`ulp`), budget (`budget_ulps`),
wrong-answer line (`wrong_answer_ulps`) and grade (`grade`): what a merged report's profile is made of.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from .. import tool_versions
from ..case import SparseValue
from ..dtypes import from_numpy
from ..output import write_atomic_parts
from ..precision import Budget, OutputCheck, json_ulp, largest_budget, unit_of, largest_line, profile
from ..values import format_scalar
from . import cycle_collection_paused, summary, tally_counts
from .hints import run_notes

MAX_ELEMENTS = 4096


def tensor(array: np.ndarray | None) -> dict | None:
    if array is None:
        return None
    dt = from_numpy(array.dtype)
    flat = array.reshape(-1)
    values = json_values(flat[:MAX_ELEMENTS], dt.kind)
    record: dict[str, Any] = {"dtype": dt.name, "shape": list(array.shape), "data": values if array.ndim else values[0]}
    if flat.size > MAX_ELEMENTS:
        record["truncated"] = True
    return record


def json_values(flat: np.ndarray, kind: str | None = None) -> list:
    """The values of a flat array as `_json_scalar` writes them, a whole array at a time where the
    dtype allows (every report holds thousands of arrays); `kind` is its DType's, when known."""
    kind = kind or from_numpy(flat.dtype).kind
    if kind == "bool":
        return flat.astype(bool).tolist()
    if kind in ("int", "uint"):
        return (flat if flat.dtype.kind in "iu" else flat.astype(np.int64)).tolist()
    if kind == "float":
        values = _as_floats(flat)
        # Most arrays hold no value that is written as a string: a sum is finite only when every
        # value is, and -0.0 == 0.0, so two passes in C clear them without a look at each value.
        if not math.isfinite(sum(values)) or 0.0 in values:
            for index, value in enumerate(values):
                if not math.isfinite(value) or (value == 0 and math.copysign(1, value) < 0):
                    values[index] = format_scalar(value)
        return values
    return [_json_scalar(v) for v in flat]


def _as_floats(flat: np.ndarray) -> list[float]:
    if flat.dtype.kind == "f":  # numpy's own floats: tolist widens them exactly, without numpy's FP checks
        return flat.tolist()
    with np.errstate(invalid="ignore"):  # NaN of the narrow float types casts to NaN, as wanted
        return flat.astype(np.float64).tolist()


def _json_scalar(value: Any) -> Any:
    text = format_scalar(value)
    if isinstance(value, (str, bytes)):
        return value if isinstance(value, str) else value.decode("utf-8", "replace")
    if text in ("true", "false"):
        return text == "true"
    if text in ("nan", "inf", "-inf", "-0.0"):
        return text
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def result_record(result) -> dict:
    example, expected, verdict = result.example, result.expected, result.verdict
    record = {
        "id": example.id,
        "op": example.op,
        "opset": example.version.since_version,
        "dtype": example.dtype,
        "types": example.types,
        "case": example.name,
        "source": example.source,
        "spec": example.spec,
        "outcome": verdict.outcome,
        "message": verdict.message,
        "reading": verdict.reading,
        "inputs": {name: tensor(array) for name, array in example.inputs.items()},
        "attributes": {name: _attribute(value) for name, value in example.attributes.items()},
        "expected": _expected(expected),
        "actual": [tensor(a) for a in result.actual],
        "mismatches": [m.lines() for m in verdict.mismatches],
        "replay": result.replay,
        "seconds": round(result.seconds, 6),
    }
    if verdict.ulp is not None:  # judged by a precision budget: what the profile of a merged report is made of
        record["ulp"] = json_ulp(verdict.ulp)
        record["budget_ulps"] = largest_budget(expected.budgets)
        record["wrong_answer_ulps"] = largest_line(expected)
        record["grade"] = verdict.grade
        if unit_of(expected.budgets) != "ULP":
            record["unit"] = unit_of(expected.budgets)
    record.update(result.extra)
    return record


def _attribute(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return tensor(value)
    if isinstance(value, SparseValue):
        return {"values": tensor(value.values), "indices": tensor(value.indices), "dims": list(value.dims)}
    if isinstance(value, list):
        return [_json_scalar(v) for v in value]
    return _json_scalar(value)


def _expected(expected) -> dict:
    if expected.invalid is not None:
        return {"invalid": {"rule": expected.invalid.rule, "sentence": expected.invalid.sentence}}
    record = {
        "readings": [_reading(r) for r in expected.readings],
        "ambiguity": expected.ambiguity,
        "may_reject": expected.may_reject,
    }
    if any(b is not None for b in expected.budgets):
        record["budgets"] = [_budget(b) for b in expected.budgets]
    return record


def _reading(reading) -> dict:
    record = {"label": reading.label, "outputs": [tensor(o) for o in reading.outputs]}
    if any(p is not None for p in reading.precise):  # the float64 value a budgeted output is measured from
        record["precise"] = [tensor(p) for p in reading.precise]
    return record


def _budget(budget) -> dict | None:
    if isinstance(budget, OutputCheck) and not isinstance(budget, Budget):  # a per-element bound (bounds.py)
        return {"bound": budget.formula, "reason": budget.reason, "unit": budget.unit,
                "tiers": [tier.label for tier in budget.tiers]}
    if not isinstance(budget, Budget):
        return None
    return {"ulps": budget.ulps, "reason": budget.reason, "flush_subnormals": budget.flush_subnormals, "kind": budget.kind}


def document(results, runner_info: dict, seed: int | None, options: dict) -> dict:
    """The report of results given as a list, every one recorded whole (a few results judged in
    process); the commands' reports are `ledger_document`'s."""
    with cycle_collection_paused():
        return _head(runner_info, seed, options) | {
            "summary": summary(results),
            "notes": run_notes(results),
            "precision": [row.record() for row in profile(results)],
            "results": [result_record(r) for r in results],
        }


def ledger_document(ledger, runner_info: dict, seed: int | None, options: dict) -> dict:
    """A run's report from what its ledger kept: the summary, the precision profile, whole records
    of the results a person reads one by one, and the rest counted in `tallies` (see ledger.py).
    With every case recorded (`--report-passes`), the file holds the spooled records too: `write`
    streams them in (`lines`), the document in memory holds the kept ones only."""
    with cycle_collection_paused():
        return _head(runner_info, seed, options) | {
            "summary": tally_counts(ledger.summary_counts()),
            "notes": run_notes(ledger),
            "precision": [row.record() for row in ledger.profile.rows()],
            "tallies": ledger.tally_rows(),
            "results": [result_record(r) for r in ledger.recorded],
        }


def _head(runner_info: dict, seed: int | None, options: dict) -> dict:
    return {"tool": tool_versions(), "runner": runner_info, "seed": seed, "options": options, "complete": True}


def record_line(result) -> str:
    """A result's whole record as one line of JSON, as the report writes it."""
    return _ENCODE(result_record(result))


_ENCODE = json.JSONEncoder(allow_nan=False).encode


def write(path: Path, doc: dict, lines: Iterable[str] | None = None) -> None:
    """Write the report atomically; `lines`, where given, are its records' lines (streamed from
    disk: a run that records every case), in place of the document's own."""
    write_atomic_parts(path, parts(doc, lines), "the JSON report")


def dumps(doc: dict) -> str:
    """The report as text: the header indented, then one result per line.

    A line per case reads well in a diff and with grep, and lets json use its C encoder for the
    bulk of the file (it has none for indented output): a 5,000-case report takes a tenth of the time.
    """
    return "".join(parts(doc))


def parts(doc: dict, lines: Iterable[str] | None = None) -> Iterator[str]:
    """The report's text in pieces, as `dumps` joins them: the header, then each record's line."""
    head = {key: value for key, value in doc.items() if key != "results"}
    text = json.dumps(head, indent=1, allow_nan=False)
    yield f'{text[:-2]},\n "results": [\n' if head else '{\n "results": [\n'
    records = map(_ENCODE, doc.get("results", [])) if lines is None else lines
    first = True
    for line in records:
        yield line if first else ",\n" + line
        first = False
    yield "\n ]\n}\n"
