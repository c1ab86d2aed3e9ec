"""`conform check-backend`: does an adapter hand every dtype and rank to its runtime and back whole?

A runtime reached through an adapter (an onnx.backend module, or conform's own runner of it) is
judged through that adapter: a 0-d array the adapter turns into shape (1,), an int64 it narrows to
int32, a 4-bit output it leaves packed, reads in a run as the runtime's deviation from the text.
This module round-trips every tensor dtype (dtypes.all_names) at ranks 0 to 4 and one size-0
shape through two models that change nothing, Identity and a Cast to the same type, with values
chosen so that a loss shows (NaN payloads, -0.0, int64 beyond 2**31 and 2**53, the uint64 top bit,
every bit pattern of the types of 16 bits or fewer, non-ASCII strings), and says for each dtype x
shape x op: `ok`, `refused` (the runtime or adapter says no: it may have no kernel, which is
fine), `lost` (what came back differs from what was sent, and how), or `crash`/`timeout`.

`adapter_loss_hint` (adapter_loss.py, which a run's summary imports without this module) reads a
`--backend` run's results for failures that look like such a loss, so that the summary can point here.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
from onnx import helper
from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import registry
from .adapter_loss import adapter_loss_hint, dtype_name, packed_note
from .compare import same_bits
from .dtypes import DType, all_names, dtype, from_numpy
from .model import BuiltModel
from .output import write_atomic
from .report.console import print_table
from .runners.base import RunOutput
from .values import format_scalar

OPS = ("Identity", "Cast")
# Each shape by its column label. The dims of ranks 2 to 4 differ from each other, so that a
# transposed or reshaped answer shows; rank 1 holds every probe value, its length made odd (an odd
# count of 4-bit values leaves half a byte when packed).
SHAPE_LABELS = ("0-d", "rank 1", "rank 2", "rank 3", "rank 4", "size 0")
FIXED_SHAPES = {"0-d": (), "rank 2": (3, 5), "rank 3": (2, 3, 5), "rank 4": (2, 1, 3, 5), "size 0": (2, 0, 3)}
OK, REFUSED, LOST, CRASH, TIMEOUT, ABSENT = "ok", "refused", "lost", "crash", "timeout", "absent"
# Worst first: a table cell shows the worst status of its ops.
STATUS_ORDER = (LOST, CRASH, TIMEOUT, REFUSED, OK, ABSENT)
FAILING = (LOST, CRASH, TIMEOUT)
LISTED_INDICES = 3  # differing elements a loss quotes
KIND_ORDER = ("bool", "int", "uint", "float", "complex", "string")
# A Cast before version 6 takes its `to` as a STRING; every later one as an INT.
FIRST_CAST_WITH_INT_TO = 6
FIRST_CAST_WITH_SATURATE = 19


@dataclass(frozen=True)
class Probe:
    """One round trip: `sent` through `op` (the version `opset`, the lowest that takes the dtype)."""

    dtype: str
    shape_label: str
    op: str
    opset: int
    sent: np.ndarray

    @property
    def name(self) -> str:
        return f"{self.dtype} {self.shape_label} {self.op}-{self.opset}"


@dataclass(frozen=True)
class Finding:
    """What became of one probe: its status, what was lost (a phrase each), or why it was refused."""

    probe: Probe
    status: str
    lost: tuple[str, ...] = ()
    refusal: str | None = None
    refusal_kind: str | None = None  # no_kernel, unsupported or error (see runners.base.Vocabulary)
    detail: str | None = None

    def record(self) -> dict:
        probe = self.probe
        found = {"dtype": probe.dtype, "shape": probe.shape_label, "dims": list(probe.sent.shape), "op": probe.op,
                 "opset": probe.opset, "status": self.status}
        if self.lost:
            found["lost"] = list(self.lost)
        if self.refusal is not None:
            found["refusal"] = self.refusal
            found["refusal_kind"] = self.refusal_kind
        if self.detail is not None:
            found["detail"] = self.detail
        return found


# --- the values sent ----------------------------------------------------------------------------

def checked_dtypes() -> list[str]:
    """Every tensor dtype, by kind (bool, signed, unsigned, float, complex, string), then width."""
    return sorted(all_names(), key=lambda name: (KIND_ORDER.index(dtype(name).kind), dtype(name).bits, name))


@cache
def probe_values(name: str) -> np.ndarray:
    """The values sent for a dtype, the most telling first (the 0-d probe sends the first, the
    ranks 2 to 4 the first 15 or 30): the values a narrowing, a sign reading or a trip through
    another float type changes, then, for types of 16 bits or fewer, every other bit pattern."""
    dt = dtype(name)
    if dt.kind == "string":
        return np.array(["naïve café", "", "日本語", "emoji 🎉", "plain ascii", "tab\tand\nnewline", "x" * 300], dtype=object)
    if dt.kind == "bool":
        return np.array([True, False, False, True, True], dtype=bool)
    if dt.kind == "complex":
        return _complex_values(dt)
    if dt.kind in ("int", "uint"):
        telling = np.array(_integer_values(dt), dtype=object)
        values = telling.astype(dt.np_dtype)
        if dt.bits <= 16:
            values = np.concatenate([values, np.arange(int(dt.lowest), int(dt.max) + 1).astype(dt.np_dtype)])
        return _unique_bits(values)
    values = _float_values(dt)
    if dt.bits <= 16:
        # Types narrower than a byte hold one value a byte, in its low bits (ml_dtypes' layout).
        every = np.arange(2 ** dt.bits, dtype=np.dtype(f"uint{dt.np_dtype.itemsize * 8}"))
        values = np.concatenate([values, every.view(dt.np_dtype)])
    return _unique_bits(values)


def _integer_values(dt: DType) -> list[int]:
    lowest, top = int(dt.lowest), int(dt.max)
    wide = [2 ** 31, -(2 ** 31) - 1, 2 ** 32 + 1, 2 ** 53 + 1, -(2 ** 53) - 1, 2 ** 62 + 3, 2 ** 63, 2 ** 63 + 1, 2 ** 24 + 1]
    values = [lowest, top, top - 1, lowest + 1, 0, 1] + [v for v in wide if lowest <= v <= top]
    if dt.kind == "int":
        values.append(-1)
    return values


def _float_bits(dt: DType) -> list[int]:
    """Bit patterns of NaNs with payloads (quiet and signalling, either sign) for IEEE types of 16
    bits or more; the narrower ones send every pattern anyway."""
    if dt.bits == 32:
        return [0x7FC00001, 0xFFC0DEAD, 0x7F800001, 0xFFBFFFFF]
    if dt.bits == 64:
        return [0x7FF8000000000001, 0xFFF80000DEADBEEF, 0x7FF0000000000001]
    return []


def _float_values(dt: DType) -> np.ndarray:
    np_dtype = dt.np_dtype
    with np.errstate(all="ignore"):
        plain = [dt.lowest, dt.max, dt.smallest_subnormal, dt.smallest_normal, 1.0, 0.1, -1.5]
        plain += [-0.0] if dt.has_negative_zero else []
        plain += [np.inf, -np.inf] if dt.has_inf else []
        plain += [np.nan] if dt.has_nan else []
        if dt.bits == 64:  # what a trip through float32 changes: overflow, underflow, rounding
            plain += [1e300, 1e-310, 1 + 2 ** -52, 16777217.0]
        if dt.bits == 32:
            plain += [1 + 2 ** -23, 16777215.0]
        values = np.array([float(v) for v in plain], dtype=np.float64).astype(np_dtype)
    nans = _float_bits(dt)
    if nans:
        values = np.concatenate([np.array(nans, dtype=f"uint{dt.bits}").view(np_dtype), values])
    return values


def _complex_values(dt: DType) -> np.ndarray:
    part = np.float32 if dt.bits == 64 else np.float64
    nan = np.array([0x7FC00001], dtype=np.uint32).view(np.float32)[0] if part is np.float32 else \
        np.array([0x7FF8000000000001], dtype=np.uint64).view(np.float64)[0]
    big = 3e38 if part is np.float32 else 1e300
    pairs = [(1.5, -0.0), (nan, 1.0), (np.inf, -np.inf), (big, np.finfo(part).smallest_subnormal), (0.1, -0.1),
             (-0.0, 2.5)]
    values = np.empty(len(pairs), dtype=dt.np_dtype)
    values.real = np.array([p[0] for p in pairs], dtype=part)
    values.imag = np.array([p[1] for p in pairs], dtype=part)
    return values


def _unique_bits(values: np.ndarray) -> np.ndarray:
    """The values without repeats of the same bit pattern, in their first order."""
    keys = [bytes(item) for item in _element_bytes(values)]
    first = sorted({key: index for index, key in reversed(list(enumerate(keys)))}.values())
    return values[np.array(first, dtype=np.int64)]


def shape_of(label: str, count: int) -> tuple[int, ...]:
    return (count | 1,) if label == "rank 1" else FIXED_SHAPES[label]


def sent_array(name: str, label: str) -> np.ndarray:
    """The array a probe sends: the dtype's values, cycled to fill the shape."""
    values = probe_values(name)
    shape = shape_of(label, len(values))
    size = math.prod(shape)
    flat = np.resize(values, size) if size else values[:0]
    return flat.reshape(shape)


# --- the models ------------------------------------------------------------------------------------

@cache
def lowest_version(op: str, name: str) -> int | None:
    """The lowest version of `op` whose type constraints take `name` (for Cast, one with an INT `to`)."""
    for version in registry.versions(op):
        if op == "Cast" and version.since_version < FIRST_CAST_WITH_INT_TO:
            continue
        if name in version.allowed(version.inputs[0].type_param):
            return version.since_version
    return None


def probes(names: Iterable[str]) -> list[Probe]:
    """Every probe of these dtypes: each shape through each op that takes the dtype."""
    found = []
    for name in names:
        for label in SHAPE_LABELS:
            for op in OPS:
                opset = lowest_version(op, name)
                if opset is not None:
                    found.append(Probe(name, label, op, opset, sent_array(name, label)))
    return found


def built_model(probe: Probe) -> BuiltModel:
    """A one-node model with concrete dims (an engine that wants static shapes takes it too)."""
    elem_type = dtype(probe.dtype).elem_type
    shape = list(probe.sent.shape)
    attributes = {"to": elem_type} if probe.op == "Cast" else {}
    if probe.op == "Cast" and probe.opset >= FIRST_CAST_WITH_SATURATE and dtype(probe.dtype).kind == "float" and dtype(probe.dtype).bits <= 8:
        attributes["saturate"] = 0  # saturate=1 makes a float8 Cast turn ±inf into ±max, even to the same type
    node = helper.make_node(probe.op, ["x"], ["y"], **attributes)
    graph = helper.make_graph([node], f"conform_check_{probe.op}", [helper.make_tensor_value_info("x", elem_type, shape)],
                              [helper.make_tensor_value_info("y", elem_type, shape)])
    opset = helper.make_opsetid("", probe.opset)
    model = helper.make_model(graph, opset_imports=[opset], ir_version=helper.find_min_ir_version_for([opset]),
                              producer_name="conform")
    return BuiltModel(model, model.SerializeToString(deterministic=True), {"x": probe.sent})


# --- judging what came back ----------------------------------------------------------------------

def finding(probe: Probe, output: RunOutput) -> Finding:
    """What a runner's answer makes of a probe."""
    if output.fault in (CRASH, TIMEOUT):
        return Finding(probe, output.fault, refusal=output.error, detail=output.detail)
    if output.fault == "fail":  # an answer that is no outputs: the adapter's, as surely as anything
        return Finding(probe, LOST, lost=(output.error or "no outputs came back",))
    if output.error is not None and output.fault is None:
        kind = "no_kernel" if output.no_kernel else "unsupported" if output.unsupported else "error"
        return Finding(probe, REFUSED, refusal=output.error, refusal_kind=kind, detail=output.detail)
    lost = losses(probe.sent, output.outputs)
    return Finding(probe, LOST if lost else OK, lost=lost)


def losses(sent: np.ndarray, outputs: tuple[np.ndarray, ...]) -> tuple[str, ...]:
    """What the answer lost of `sent`, a phrase each; () when it came back whole, bit for bit."""
    if len(outputs) != 1:
        return (f"{len(outputs)} outputs came back; the model has 1",)
    got = outputs[0]
    sent_type = dtype_name(sent)
    packed = packed_note(sent, got)
    if packed:
        return (packed,)
    found: list[str] = []
    if sent.dtype.kind == "O":
        kinds = {type(item).__name__ for item in got.reshape(-1) if not isinstance(item, str)} if got.dtype.kind == "O" else set()
        if got.dtype.kind != "O":
            found.append(f"string came back as {dtype_name(got)}")
        elif kinds:
            found.append(f"string elements came back as {', '.join(sorted(kinds))}, not str")
    elif dtype_name(got) != sent_type:
        found.append(f"{sent_type} came back as {dtype_name(got)}")
    if got.shape != sent.shape:
        found.append(f"shape {list(sent.shape)} came back as {list(got.shape)}")
    if got.size != sent.size:
        return tuple(found)
    comparable = _comparable(got.reshape(sent.shape), sent)
    if comparable is None:
        return tuple(found) or (f"{sent_type} came back as {dtype_name(got)}",)
    found += value_changes(sent, comparable)
    return tuple(found)


def _comparable(got: np.ndarray, sent: np.ndarray) -> np.ndarray | None:
    """`got` in `sent`'s dtype where it can be read so (a narrower int read back as the wider one,
    strings as str), to tell which values changed; None where it cannot."""
    if sent.dtype.kind == "O":
        return np.array([item.decode("utf-8", "replace") if isinstance(item, bytes) else item for item in got.reshape(-1)],
                        dtype=object).reshape(sent.shape) if got.dtype.kind in "OSU" else None
    if got.dtype == sent.dtype:
        return got
    try:
        with np.errstate(all="ignore"):
            return got.astype(sent.dtype)
    except (TypeError, ValueError):
        return None


def value_changes(sent: np.ndarray, got: np.ndarray) -> list[str]:
    """Where `got` (same dtype and shape) differs from `sent`, bit for bit: how many elements, why
    where one reason covers them (-0.0, NaN payloads), and the first few."""
    differs = ~same_bits(sent, got)
    if not differs.any():
        return []
    where = np.argwhere(differs)
    quoted = "; ".join(f"at {list(map(int, index))}: sent {_shown(sent[tuple(index)])}, got {_shown(got[tuple(index)])}"
                       for index in where[:LISTED_INDICES])
    return [f"values changed at {int(differs.sum())} of {sent.size} elements{_reason(sent[differs], got[differs])}: {quoted}"]


def _element_bytes(array: np.ndarray) -> np.ndarray:
    """Each element's stored bytes, one row each."""
    flat = np.ascontiguousarray(array).reshape(-1)
    return flat.view(np.uint8).reshape(flat.size, array.dtype.itemsize)


def _reason(sent: np.ndarray, got: np.ndarray) -> str:
    """' (...)' where one reason covers every changed element: NaN payloads, or the sign of zero."""
    if not _is_float_type(sent.dtype):
        return ""
    with np.errstate(all="ignore"):
        wide_sent, wide_got = sent.astype(np.complex128), got.astype(np.complex128)
        nan = lambda a: np.isnan(a.real) | np.isnan(a.imag)
        if (nan(wide_sent) & nan(wide_got)).all():
            return " (NaN payloads or signs changed)"
        if ((wide_sent == 0) & (wide_got == 0)).all():
            return " (-0.0 came back as 0.0, or 0.0 as -0.0)"
    return ""


def _is_float_type(np_dtype: np.dtype) -> bool:
    """Whether a dtype is a float or complex tensor type, numpy's or ml_dtypes'."""
    return np_dtype.kind != "O" and from_numpy(np_dtype).kind in ("float", "complex")


def _shown(value) -> str:
    """A value as a loss quotes it: its text, and for a float type its bits (NaN payloads, -0.0)."""
    text = format_scalar(value)
    array = np.asarray(value)
    if _is_float_type(array.dtype):
        return f"{text} (0x{bytes(array.reshape(1).view(np.uint8)[::-1]).hex()})"
    return text


# --- running the check -----------------------------------------------------------------------------

def run_probes(runner, chosen: list[Probe]) -> Iterator[Finding]:
    """Each probe's finding, in order, through the runner (its worker process streams them)."""
    models = [built_model(probe) for probe in chosen]
    stream = getattr(runner, "run_stream", None)
    answers = stream(models) if stream is not None else (runner.run(model) for model in models)
    for probe, answer in zip(chosen, answers):
        yield finding(probe, answer)


@dataclass
class Check:
    """A finished check: the runtime's description and every finding."""

    runtime: dict
    findings: list[Finding] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(f.status in FAILING for f in self.findings)

    def counts(self) -> dict[str, int]:
        counted = Counter(f.status for f in self.findings)
        return {"total": len(self.findings), **{status: counted.get(status, 0) for status in (OK, REFUSED, LOST, CRASH, TIMEOUT)}}

    def document(self) -> dict:
        return {"command": "check-backend", "runtime": self.runtime, "summary": self.counts(),
                "checks": [f.record() for f in self.findings]}

    def write(self, path: Path) -> None:
        """The JSON report: its header indented, then a round trip a line."""
        doc = self.document()
        checks = ",\n".join(json.dumps(record, ensure_ascii=False) for record in doc.pop("checks"))
        head = json.dumps(doc, indent=1, ensure_ascii=False)
        write_atomic(path, f'{head[:-2]},\n "checks": [\n{checks}\n ]\n}}\n', "the JSON report")


def cell(findings: list[Finding]) -> tuple[str, str]:
    """A table cell of one dtype x shape: its worst status, naming the op where the two differ."""
    if not findings:
        return ABSENT, "-"
    worst = min(findings, key=lambda f: STATUS_ORDER.index(f.status)).status
    text = "LOST" if worst == LOST else worst
    if len({f.status for f in findings}) > 1:
        text += f" ({', '.join(f.probe.op for f in findings if f.status == worst)})"
    return worst, text


def loss_lines(findings: list[Finding]) -> list[str]:
    """A line per cause of loss, naming the dtypes and shapes where it showed and what one of them
    lost (its rank-1 round trip where it has one: every value); a crash or hang likewise. Where
    Identity kept what Cast lost, the line says so: the adapter carried both alike, so the
    runtime's Cast changed it."""
    grouped: dict[tuple[str, str], list[Finding]] = {}
    for found in findings:
        if found.status in FAILING:
            cause = _cause(found.lost[0]) if found.lost else found.refusal or found.status
            # A lost shape is one cause whatever the dtype; lost values are each dtype's own.
            name = None if cause.startswith("shape ") else found.probe.dtype
            grouped.setdefault((found.status, cause, name), []).append(found)
    kept_by_identity = {(f.probe.dtype, f.probe.shape_label) for f in findings if f.probe.op == "Identity" and f.status == OK}
    lines = []
    for (status, _, _), members in grouped.items():
        shown = next((f for f in members if f.probe.shape_label == "rank 1"), members[0])
        what = "; ".join(shown.lost) or shown.refusal or status
        if all(f.probe.op == "Cast" and (f.probe.dtype, f.probe.shape_label) in kept_by_identity for f in members):
            what += " (Identity kept it: the runtime's Cast changed it, not the adapter)"
        names = ", ".join(dict.fromkeys(f.probe.dtype for f in members))
        lines.append(f"{status.upper()} {names} in {_where(members)}: {what}")
    return lines


def _cause(phrase: str) -> str:
    """A loss's phrase without what varies from shape to shape (how many elements, and which)."""
    return re.sub(r" at \d+ of \d+ elements", "", phrase).split(":")[0]


def refusal_lines(findings: list[Finding]) -> list[str]:
    """A line per dtype and refusal, naming where it was refused."""
    grouped: dict[tuple[str, str], list[Finding]] = {}
    for found in findings:
        if found.status == REFUSED:
            grouped.setdefault((found.probe.dtype, found.refusal or ""), []).append(found)
    return [f"refused {name} in {_where(members)}: {why}" for (name, why), members in grouped.items()]


def _where(members: list[Finding]) -> str:
    """'every shape (Identity-1, Cast-6)', or the shapes, then the ops."""
    shapes = list(dict.fromkeys(f.probe.shape_label for f in members))
    ops = ", ".join(dict.fromkeys(f"{f.probe.op}-{f.probe.opset}" for f in members))
    where = "every shape" if len(shapes) == len(SHAPE_LABELS) else ", ".join(shapes)
    return f"{where} ({ops})"


# --- the console ----------------------------------------------------------------------------------

STYLES = {OK: "green", REFUSED: "yellow", LOST: "bold red", CRASH: "bold red", TIMEOUT: "bold red", ABSENT: "dim"}


def table(check: Check) -> Table:
    """A row per dtype, a column per shape; each cell the worst status of its ops."""
    title = f"conform check-backend: {check.runtime.get('name', 'runtime')}: what comes back through Identity and Cast"
    shown = Table(title=title, min_width=len(title))  # narrower, the title folds
    for column in ("dtype", "ops", *SHAPE_LABELS):
        shown.add_column(column)
    by_cell: dict[tuple[str, str], list[Finding]] = {}
    for found in check.findings:
        by_cell.setdefault((found.probe.dtype, found.probe.shape_label), []).append(found)
    for name in dict.fromkeys(f.probe.dtype for f in check.findings):
        ops = ", ".join(dict.fromkeys(f"{f.probe.op}-{f.probe.opset}" for f in check.findings if f.probe.dtype == name))
        cells = [cell(by_cell.get((name, label), [])) for label in SHAPE_LABELS]
        shown.add_row(name, ops, *[Text(text, style=STYLES[status]) for status, text in cells])
    return shown


def render(check: Check, console: Console) -> None:
    """The table, a line per loss and per refusal, and the totals."""
    print_table(console, table(check))
    for line in loss_lines(check.findings):
        console.print(Text(line, style=STYLES[LOST]), soft_wrap=True, highlight=False)
    for line in refusal_lines(check.findings):
        console.print(Text(line, style=STYLES[REFUSED]), soft_wrap=True, highlight=False)
    console.print(summary_line(check), soft_wrap=True, highlight=False)


def summary_line(check: Check) -> Text:
    counts = check.counts()
    names = len({f.probe.dtype for f in check.findings})
    told = ", ".join(f"{counts[status]} {status}" for status in (OK, REFUSED, LOST, CRASH, TIMEOUT) if counts[status])
    verdict = ("something was lost: the LOST lines say what" if counts[LOST] else
               "a round trip crashed or hung" if check.failed else "nothing lost")
    return Text.assemble((f"{counts['total']} round trips of {names} dtypes:", "bold"), f" {told or 'none'}; ",
                         (verdict, STYLES[LOST] if check.failed else STYLES[OK]))


__all__ = ["Check", "Finding", "Probe", "adapter_loss_hint", "cell", "checked_dtypes", "finding", "loss_lines", "losses",
           "probes", "refusal_lines", "render", "run_probes", "SHAPE_LABELS"]
