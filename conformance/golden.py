"""Golden data in the ONNX backend-test layout: writing it (`generate`) and checking it (`verify`).

Layout, as onnx's backend tests and onnxruntime's onnx_test_runner read it:

    DIR/test_<name>/model.onnx
    DIR/test_<name>/test_data_set_0/input_<i>.pb, output_<j>.pb     (TensorProto files)
    DIR/manifest.json

Each test directory is written to a temporary sibling and renamed into place, so an interrupted
run never leaves half a test. Tensors are written with onnx's `numpy_helper`, so every dtype
(bfloat16, float8, int4, int2, string...) is stored exactly as onnx stores it.

`generate` writes only into a new or empty folder or one it wrote (its manifest says so), holding
a lock on the folder while it writes: a second `generate` into it is refused, and adds its tests
to the manifest rather than replacing it. What a killed `generate` leaves half-done (hidden
`.test_*` folders) is never read as a test, and the next `generate` there tidies it.

Golden folders may come from strangers: what is read from a test directory (its model and .pb
files, and any external data they name) is read through `stored_files`, which bounds it and keeps
it inside the test directory.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, NamedTuple

import numpy as np
import onnx
from onnx import numpy_helper

try:
    import fcntl
except ImportError:  # Windows: no folder locks
    fcntl = None

from . import tool_versions
from .case import HYPOTHESIS_NAME, Example, SparseValue, case_id, is_hypothesis_slug, slug
from .compare import AMBIGUOUS, IMPRECISE, PASS, Verdict, judge
from .compare import SKIPPED as SKIPPED_OUTCOME
from .dtypes import from_elem_type, from_numpy
from .errors import ConformError, UsageError
from .execute import (DEFAULT_MAX_ELEMENTS, model_of, Result, RunOptions, Staged, WorkUnit, check_selection,
                      chooser, examples_of, expected_for, judging_options, planned_ids, run_staged, too_large,
                      whole_run)
from .model import DEFAULT_SHAPES, MODES, SHAPES, BuiltModel
from .reference import covered_ops, for_op
from .reference.base import Expected
from .registry import OpVersion, version_in_force
from .output import check_folder, umask, write_atomic, writing
from .runners.base import Runner, RunOutput
from .stored_files import (GoldenError, checked_file, inside, load_tensor, read_model, refuse_link_out, tensor_array,
                           type_name)
from .text import has_control, printable

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 64 * 2**20  # a manifest.json larger than this is not one conform wrote (200,000-odd tests)
DATA_SET_PREFIX = "test_data_set_"
DATA_SET = f"{DATA_SET_PREFIX}0"
SKIPPED = "skipped"


class Unreadable(NamedTuple):
    """A test directory `verify` cannot read or check, and why (the message names the file). It is
    heard with the skipped tests, as they are, but is a finding of its own: stored data that
    cannot be read is not data the spec allows, so it fails the verify, and the rest is still
    checked."""

    path: Path
    why: str


def test_name(example: Example) -> str:
    """A directory name from the example id: lower-case letters, digits and underscores only."""
    return test_name_of_id(example.id)


def test_name_of_id(case_id: str) -> str:
    """The test directory name `generate` gives the case with this id."""
    return "test_" + slug(case_id)


def generated_case(example: Example) -> str | None:
    """Of a stored test `generate` wrote, the case it was written from, as the name writes it,
    without the op version and type binding ('' for a hypothesis case); None for a test named
    otherwise. A test that records its case (`recorded_case`) is named by it already; one written
    before conform recorded it is told by its directory's name (`test_name_of_id`), and what tells
    the tests of one case apart is their type binding, as for the cases a run generates."""
    if _named_by_its_case(example):
        return "" if is_hypothesis_slug(slug(example.name)) else example.name
    prefix, suffix = f"test_{slug(example.version.label)}_", f"_{slug(example.binding)}"
    name = example.name
    if not (name.startswith(prefix) and name.endswith(suffix)) or len(name) <= len(prefix) + len(suffix):
        return None
    case = name[len(prefix):-len(suffix)]
    return "" if is_hypothesis_slug(case) else case


def _named_by_its_case(example: Example) -> bool:
    """Whether a stored test's Example bears the name of the case it was written from: its id
    writes its directory's name, as `generate` names them."""
    return example.source.startswith("golden:") and test_name_of_id(example.id) == Path(example.source.removeprefix("golden:")).name


# Where `generate` records, in a test's model (`metadata_props`), the name of the case it was
# written from: `run --from` and `verify` rebuild the case's id from it, as `run` gives it.
CASE_KEY = "conform.case"
# A file system's names are at most 255 bytes: no directory `generate` writes holds a longer name.
MAX_CASE_NAME = 255
# Where a test's model records the input mode and shapes it was built with, when not the default
# (`generate --mode`, `--shapes`): `run --from` and `verify` report a test's results with them.
MODE_KEY = "conform.mode"
SHAPES_KEY = "conform.shapes"
DEFAULT_MODE = "input"


def generated_mode(value: str) -> str:
    """`generate --mode`: one of model.MODES. A folder holds one test per case, named by its id, so
    one mode a folder: `all` is refused, naming what to do instead."""
    if value not in MODES:
        also = (" (a folder holds one test per case: write each mode into its own --out, "
                "e.g. golden-initializer/)") if value in ("all", "both") else ""
        raise UsageError(f"generate --mode takes one of {', '.join(MODES)}, not '{value}'{also}")
    return value


def _with_case(built: BuiltModel, example: Example, mode: str = DEFAULT_MODE, shapes: str = DEFAULT_SHAPES) -> bytes:
    """The model's bytes, recording the case it was built from under CASE_KEY, and its mode and
    shapes where they are not the default."""
    model = onnx.ModelProto()
    model.CopyFrom(built.model)
    model.metadata_props.add(key=CASE_KEY, value=example.name)
    if mode != DEFAULT_MODE:
        model.metadata_props.add(key=MODE_KEY, value=mode)
    if shapes != DEFAULT_SHAPES:
        model.metadata_props.add(key=SHAPES_KEY, value=shapes)
    return model.SerializeToString(deterministic=True)


def recorded_variant(model: onnx.ModelProto) -> dict[str, str]:
    """The input mode and shapes a stored test's model records, as a result's extras name them
    (`mode`, `shapes`); only what it records that conform writes (a stranger's other values are
    not repeated into reports)."""
    found = {}
    for key, name, allowed in ((MODE_KEY, "mode", MODES), (SHAPES_KEY, "shapes", SHAPES)):
        values = [entry.value for entry in model.metadata_props if entry.key == key]
        if len(values) == 1 and values[0] in allowed:
            found[name] = values[0]
    return found


def recorded_case(model: onnx.ModelProto, path: Path) -> str | None:
    """The case name a stored test's model records under CASE_KEY (None when it records none); a
    GoldenError naming the model when what it records is no case name conform writes. Whether
    the name is the test's is for `stored_case_name` to say."""
    values = [entry.value for entry in model.metadata_props if entry.key == CASE_KEY]
    if not values:
        return None
    why = _not_a_case_name(values)
    if why:
        raise GoldenError(f"{path / 'model.onnx'}: metadata '{CASE_KEY}': {why}; conform records there the name of the "
                          "case a test was written from (remove it, and the test is named by its directory)")
    return values[0]


def _not_a_case_name(values: list) -> str | None:
    """Why what a model records under CASE_KEY is no case name a case file or hypothesis gives
    (None when it is one): printed in every verdict and replay command, it is bounded and one line."""
    if len(values) > 1:
        return f"{len(values)} entries, where conform writes one"
    value = values[0]
    if not isinstance(value, str):  # protobuf gives the bytes of a string field that is not UTF-8
        return "not UTF-8 text"
    if not value.strip():
        return "empty"
    if len(value) > MAX_CASE_NAME:
        return f"{len(value):,} characters, more than the {MAX_CASE_NAME} of a case name conform writes"
    if has_control(value):
        one_line = printable(value).replace("\n", "\\n").replace("\t", "\\t")  # printable keeps them
        return f"'{one_line}' holds a control character (a newline, an escape)"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return "not UTF-8 text"
    if is_hypothesis_slug(slug(value)) and not re.fullmatch(r"hypothesis-\d+", value):
        return f"'{value}' is written as hypothesis's cases are named, but is not one ({HYPOTHESIS_NAME.format(1)}, ...)"
    return None


def stored_case_name(path: Path, model: onnx.ModelProto, data_set: int, version: OpVersion, types: dict[str, str],
                     dtype_param: str) -> str:
    """A stored test's case name: the case it was written from, when its model records one
    (`recorded_case`) whose id, under the test's op version and type binding, writes the
    directory's name, so that `run --from` and `verify` give a test the id `run` gave its case;
    otherwise (onnx's own tests, tests written before conform recorded it, a directory renamed)
    the directory's name (`data_set_name`). The data set's number follows the first."""
    recorded = recorded_case(model, path)
    if recorded is None or test_name_of_id(case_id(version, recorded, types, dtype_param)) != path.name:
        return data_set_name(path, data_set)
    return recorded if data_set == 0 else f"{recorded}.set{data_set}"


def _tensor_bytes(array: np.ndarray, name: str) -> bytes:
    return numpy_helper.from_array(array, name=name).SerializeToString(deterministic=True)


def _test_files(example: Example, expected: Expected, mode: str = DEFAULT_MODE, shapes: str = DEFAULT_SHAPES) -> dict[str, bytes]:
    built = model_of(example, expected, mode, shapes)
    files = {"model.onnx": _with_case(built, example, mode, shapes)}
    # The fed inputs only: an initializer that is a graph input too (IR 3) has its data in the model.
    fed = [value_info for value_info in built.model.graph.input if value_info.name in built.feeds]
    for index, value_info in enumerate(fed):
        files[f"{DATA_SET}/input_{index}.pb"] = _tensor_bytes(built.feeds[value_info.name], value_info.name)
    outputs = expected.readings[0].outputs
    for index, (value_info, array) in enumerate(zip(built.model.graph.output, outputs)):
        files[f"{DATA_SET}/output_{index}.pb"] = _tensor_bytes(array, value_info.name)
    return files


def content_hash(files: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name])
    return digest.hexdigest()


def _write_test_dir(out: Path, name: str, files: dict[str, bytes]) -> None:
    """Write into a temporary directory beside the target, then rename it into place. A test
    replaced is moved aside (`.NAME.old.X/NAME`) before the new one takes its name, and removed
    only after: killed at any step, the folder holds the old test or the new one whole, or the
    old one moved aside, which `_tidy_interrupted` puts back."""
    temporary = Path(tempfile.mkdtemp(dir=out, prefix=f".{name}."))
    try:
        temporary.chmod(0o777 & ~umask())  # mkdtemp's 0700 would keep the test from the rest of a team
        for relative, data in files.items():
            path = temporary / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        target = out / name
        if target.exists():
            retired = Path(tempfile.mkdtemp(dir=out, prefix=f".{name}.old."))
            os.replace(target, retired / name)
            os.replace(temporary, target)
            shutil.rmtree(retired)
        else:
            os.replace(temporary, target)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


def _tidy_interrupted(out: Path, name: str) -> None:
    """After an interruption inside `_write_test_dir`: the test directory whole, old or new, and no
    temporary folder left behind."""
    target = out / name
    for retired in out.glob(f".{name}.old.*"):
        if _RETIRED.fullmatch(retired.name):
            if not target.exists() and (retired / name).exists():
                os.replace(retired / name, target)  # interrupted between the two renames: put the old one back
            shutil.rmtree(retired, ignore_errors=True)
    for temporary in out.glob(f".{name}.*"):
        if _LEFTOVER.fullmatch(temporary.name):
            shutil.rmtree(temporary, ignore_errors=True)


# What conform's own writes leave in a golden folder when killed: a test directory being written or
# moved aside (`_write_test_dir`, the test's name in group 1), a manifest being written
# (output.write_atomic), the file that tries whether the folder takes files (output.check_folder).
# tempfile names each with 8 characters of its own: a person's `.test_notes.bak` is none of them.
_TEMPORARY = "[a-z0-9_]{8}"
_LEFTOVER = re.compile(rf"\.(test_[a-z0-9_]+)\.(?:old\.)?{_TEMPORARY}|\.manifest\.json\.{_TEMPORARY}\.tmp"
                       rf"|\.conform-check\.{_TEMPORARY}\.tmp")


def _tidy_leftovers(out: Path) -> None:
    """What a killed `generate` left half-done in the folder tidied: each test whole, old or new
    (`_tidy_interrupted`), and no temporary file or folder of conform's left."""
    for entry in os.listdir(out):
        found = _LEFTOVER.fullmatch(entry)
        if found and found.group(1):
            _tidy_interrupted(out, found.group(1))
        elif found:
            (out / entry).unlink(missing_ok=True)


@dataclass(frozen=True)
class GenerateOptions:
    """What `conform generate` writes and where; `selection`: what chose its cases, as
    `selection` writes it (the manifest names a run left unfinished by it)."""

    out: Path
    force: bool = False
    include_ambiguous: bool = False
    seed: int = 0
    selection: str = "{}"
    mode: str = DEFAULT_MODE  # how non-data inputs are stored (model.MODES)
    shapes: str = DEFAULT_SHAPES  # how graph inputs declare their dims (model.SHAPES)


def selection(options: RunOptions, include_ambiguous: bool) -> str:
    """The options of a `generate` that choose the tests it writes (not where, whether it replaces
    them, nor in how many processes), as JSON: a run left unfinished is finished by a later one
    that gives the same. The mode and shapes are named where not the default."""
    chosen = {"op": options.op, "opset": options.opset, "dtypes": list(options.dtypes),
              "cases": [str(root) for root in options.case_roots], "case_ids": list(options.case_ids),
              "yaml": options.use_yaml, "hypothesis": options.use_hypothesis, "examples": options.examples,
              "seed": options.seed, "include_ambiguous": include_ambiguous}
    if options.modes[0] != DEFAULT_MODE:
        chosen["mode"] = options.modes[0]
    if options.shapes != DEFAULT_SHAPES:
        chosen["shapes"] = options.shapes
    return json.dumps(chosen, sort_keys=True)


class Manifest(dict):
    """A golden folder's manifest as a `generate` wrote it (the tests of every run into the folder),
    and what that run did: `this_run`, its entries, and whether it `finished`."""

    def __init__(self, content: dict, this_run: list[dict], finished: bool) -> None:
        super().__init__(content)
        self.this_run = this_run
        self.finished = finished


def generate(examples: Iterable[Example], options: GenerateOptions, none_taken: bool = False) -> Manifest:
    """Write one test directory per valid example and add them to the folder's manifest; return it.
    Unless `--force`, or the caller found that none of the tests is there already (`none_taken`,
    see `names_taken`), every example is drawn first, so that nothing is written when a test would
    be replaced; else each is drawn as it is written."""
    drawn_first = not (options.force or none_taken)
    if drawn_first:
        examples = list(examples)
    with _claimed(options.out) as before:
        if drawn_first:
            _refuse_replacing(options.out, [test_name(e) for e in examples])
        _write_manifest(options, before, [], finished=False)
        entries: list[dict] = []
        in_hand, name = None, None  # the entry and files of the test being written, and its name
        try:
            for example in examples:
                name = test_name(example)
                in_hand = entry, files = _planned(example, name, options)
                _write_planned(options.out, name, files)
                entries.append(entry)
                name = None
        except KeyboardInterrupt:
            # Ctrl-C or SIGTERM: the tests written so far stay, and the manifest says how far it got.
            if name is not None:
                _settle_interrupted(options.out, name, in_hand, entries)
            return _write_manifest(options, before, entries, finished=False)
        return _write_manifest(options, before, entries, finished=True)


def _refuse_replacing(out: Path, names: list[str]) -> None:
    existing = [n for n in names if (out / n).exists()]
    if existing:
        raise UsageError(f"{out / existing[0]} already exists ({len(existing)} tests would be replaced); use --force to replace them")


def _write_planned(out: Path, name: str, files: dict[str, bytes]) -> None:
    if files:
        with writing(out / name, "the golden test"):
            _write_test_dir(out, name, files)


@contextmanager
def _claimed(out: Path) -> Iterator[dict | None]:
    """The folder held for one `generate`: made if missing, refused unless it is empty or a golden
    folder conform wrote, locked, and tidied of what a killed `generate` left (`_tidy_leftovers`).
    Gives the manifest found there (None in a new or empty folder)."""
    if not out.is_dir():
        check_folder(out, "golden tests into")
    with _locked(out):
        with writing(out, "golden tests into"):
            before = _manifest_found(out)
            _tidy_leftovers(out)
        check_folder(out, "golden tests into")
        yield before


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """The folder locked by this process while inside: a second `generate` into it is refused at
    once. Where the system or its file system has no such locks, it is not locked."""
    if fcntl is None:
        yield
        return
    with writing(folder, "golden tests into"):
        handle = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"{folder}: another conform generate is writing into it; wait for it to end, "
                             "or give another --out") from None
        except OSError:
            pass  # a file system without flock (some network ones)
        yield
    finally:
        os.close(handle)


ONLY_OWN_FOLDERS = "generate writes only into a new or empty folder or one it wrote, --force or not: give another --out"


def _manifest_found(out: Path) -> dict | None:
    """The manifest of a golden folder conform wrote; None for an empty one (conform's own
    leftovers aside); a UsageError for any other folder."""
    entries = sorted(entry for entry in os.listdir(out) if not _LEFTOVER.fullmatch(entry))
    if MANIFEST in entries:
        return _read_manifest(out / MANIFEST)
    if entries:
        more = f" and {len(entries) - 1:,} more" if len(entries) > 1 else ""
        raise UsageError(f"{out}: not a conform golden folder (it holds '{entries[0]}'{more}, and no manifest.json); "
                         f"{ONLY_OWN_FOLDERS}")
    return None


def _read_manifest(path: Path) -> dict:
    """A manifest.json conform wrote, read; a UsageError saying why when it is not one."""
    why, manifest = _why_not_a_manifest(path)
    if why:
        raise UsageError(f"{path}: not a manifest conform wrote ({why}); {ONLY_OWN_FOLDERS}")
    manifest.setdefault("unfinished", [] if manifest.get("complete") is True else [UNRECORDED])
    return manifest


# A manifest written before conform named the runs left unfinished, that says one was.
UNRECORDED = {"unrecorded": "an interrupted generate, from before conform recorded which"}


def _why_not_a_manifest(path: Path) -> tuple[str | None, dict]:
    """Why the file is not a manifest conform wrote (None when it is), and what it holds."""
    status = path.lstat()
    if not stat.S_ISREG(status.st_mode):
        return "not a file: a link, a folder or a device", {}
    if status.st_size > MAX_MANIFEST_BYTES:
        return f"{status.st_size:,} bytes, more than the {MAX_MANIFEST_BYTES:,} conform reads of one", {}
    try:
        manifest = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        return f"not JSON: {type(error).__name__}", {}
    if not (isinstance(manifest, dict) and isinstance(manifest.get("tool"), dict) and "conform" in manifest["tool"]):
        return "no conform version under 'tool'", {}
    tests, unfinished = manifest.get("tests"), manifest.get("unfinished", [])
    if not (isinstance(tests, list) and all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tests)):
        return "'tests' is not a list of named tests", {}
    if not (isinstance(unfinished, list) and all(isinstance(u, dict) for u in unfinished)):
        return "'unfinished' is not a list of generate options", {}
    return None, manifest


def _write_manifest(options: GenerateOptions, before: dict | None, entries: list[dict], finished: bool) -> Manifest:
    """The folder's manifest written: the tests listed `before`, an entry of this run's replacing
    one of the same name in its place, this run's others after them. It is `complete` when no
    run into the folder is left unfinished, each named by its selection under `unfinished`:
    this one, unless `finished`, and those before it, unless this one gave the same selection."""
    mine = {entry["name"]: entry for entry in entries}
    # Each listed test, or this run's entry of its name in its place (taken out of `mine`).
    kept = [mine.pop(entry["name"], entry) for entry in (before or {}).get("tests", [])]
    this = json.loads(options.selection)
    unfinished = [u for u in (before or {}).get("unfinished", []) if u != this] + ([] if finished else [this])
    manifest = {
        "tool": tool_versions(),
        "seed": options.seed,
        "include_ambiguous": options.include_ambiguous,
        "complete": not unfinished,
        "unfinished": unfinished,
        "tests": kept + list(mine.values()),
    }
    write_atomic(options.out / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n", "the manifest")
    return Manifest(manifest, entries, finished)


@dataclass(frozen=True)
class GenerateUnit:
    """Unit `index` of `generate`'s plan, for a worker process: its cases drawn, and each one's
    test written, or skipped, as `generate` does them one after another."""

    index: int
    unit: WorkUnit
    options: GenerateOptions

    def describe(self) -> str:
        return f"golden tests of the {self.unit.describe()}"


def write_unit(task: GenerateUnit, run_options: RunOptions) -> tuple[int, list[dict]]:
    """The unit's index, and the manifest entries of its cases, each test written (or skipped)."""
    entries = []
    for example in examples_of(task.unit, run_options):
        name = test_name(example)
        entry, files = _planned(example, name, task.options)
        _write_planned(task.options.out, name, files)
        entries.append(entry)
    return task.index, entries


def names_taken(units: list[WorkUnit], run_options: RunOptions, out: Path) -> bool:
    """Whether a test the units may write is in `out` already (for a hypothesis group, a test of
    any case it could draw: known without drawing, and so before anything is written)."""
    present = set(os.listdir(out)) if out.is_dir() else set()
    return any(_names_planned(unit, run_options) & present for unit in units)


def _names_planned(unit: WorkUnit, run_options: RunOptions) -> set[str]:
    """The test directories a unit may write (see `execute.planned_ids`)."""
    return {test_name_of_id(i) for i in planned_ids(unit, run_options)}


def generate_units(units: list[WorkUnit], run_options: RunOptions, options: GenerateOptions,
                   write_all: Callable[[list[GenerateUnit], Callable[[tuple[int, list[dict]]], None]], None]) -> Manifest:
    """`generate` over the plan's units, written by `write_all(tasks, hand_out)` (in worker
    processes, each unit's `write_unit` answer handed out as it comes): the same tests and
    manifest as `generate` writes over their examples, the folder held by this process throughout
    (`_claimed`). The caller makes sure first that no test would be replaced without `--force`
    (`names_taken`): the workers write as they go.

    A worker stopped while writing a test (interrupted, or dead: its unit is written again) leaves
    it half-written beside the folder's tests: it is tidied away, or a replaced one put back.
    Interrupted, the manifest lists the units that finished, and the tests of the others found
    whole on disk, with `"complete": false`: of those that wrote a test during the run, for a test
    that was there before (`--force`) is not this run's work, and finding out whether it holds the
    bytes the run would write costs its unit's cases drawn and computed again.
    """
    if not units:
        check_selection([], run_options)  # says why there is nothing to write
    with _claimed(options.out) as before:
        _write_manifest(options, before, [], finished=False)
        tasks = [GenerateUnit(index, unit, options) for index, unit in enumerate(units)]
        written: dict[int, list[dict]] = {}
        # Directory times lag the clock by a tick or so: a second's margin costs at worst a unit
        # looked at needlessly.
        since = time.time_ns() - 1_000_000_000
        try:
            write_all(tasks, lambda answer: written.__setitem__(*answer))
        except KeyboardInterrupt:
            in_folder = _tidy_units(tasks, run_options)
            _settle_units([t for t in tasks if t.index not in written and _written_since(options.out, in_folder[t.index], since)],
                          run_options, written)
        else:
            _tidy_units(tasks, run_options)
        entries = [entry for index in sorted(written) for entry in written[index]]
        return _write_manifest(options, before, entries, finished=len(written) == len(tasks))


def _tidy_units(tasks: list[GenerateUnit], run_options: RunOptions) -> dict[int, set[str]]:
    """Every test directory a stopped worker left half-written tidied (`_tidy_interrupted`); and,
    by unit, the tests it may write that were in the folder, whole or not."""
    out = tasks[0].options.out
    present = set(os.listdir(out))
    hidden = {entry.split(".")[1] for entry in present if entry.startswith(".") and entry.count(".") >= 2}
    in_folder = {}
    for task in tasks:
        names = _names_planned(task.unit, run_options)
        for name in names & hidden:
            _tidy_interrupted(out, name)
        in_folder[task.index] = names & (present | hidden)
    return in_folder


def _written_since(out: Path, names: set[str], since: int) -> bool:
    """Whether a test directory of these (some may have been tidied away) was written since then."""
    return any((out / name).is_dir() and (out / name).stat().st_mtime_ns >= since for name in names)


def _settle_units(stopped: list[GenerateUnit], run_options: RunOptions, written: dict[int, list[dict]]) -> None:
    """The entries, in `written`, of units stopped part-way: those of their tests found whole,
    and of their cases skipped."""
    for task in stopped:
        written[task.index] = [entry for entry, files in (_planned(e, test_name(e), task.options)
                                                          for e in examples_of(task.unit, run_options))
                               if not files or _holds(task.options.out / entry["name"], files)]


def _settle_interrupted(out: Path, name: str, in_hand: tuple[dict, dict[str, bytes]] | None, entries: list[dict]) -> None:
    """After an interruption while test `name` was in hand: its directory whole, old or new, and
    listed as written when the new one is in place (the signal can come after its rename)."""
    _tidy_interrupted(out, name)
    entry, files = in_hand or ({}, {})
    if entry.get("name") == name and files and _holds(out / name, files):
        entries.append(entry)


def _holds(folder: Path, files: dict[str, bytes]) -> bool:
    return all((folder / relative).is_file() and (folder / relative).read_bytes() == data for relative, data in files.items())


def _planned(example: Example, name: str, options: GenerateOptions) -> tuple[dict, dict[str, bytes]]:
    """The manifest entry of an example's test, and the files to write for it (none when skipped)."""
    refusal = too_large(example, DEFAULT_MAX_ELEMENTS)
    if refusal is not None:
        return {"name": name, "id": example.id, "op": example.op, "version": example.version.since_version,
                "dtype": example.dtype, "source": example.source, "status": refusal}, {}
    expected = expected_for(example)
    entry = {
        "name": name,
        "id": example.id,
        "op": example.op,
        "version": example.version.since_version,
        "dtype": example.dtype,
        "types": example.types,
        "source": example.source,
        "seed": example.origin.get("seed"),
        "mode": options.mode,
        "shapes": options.shapes,
    }
    if not expected.is_valid:
        return entry | {"status": f"{SKIPPED}: invalid input ({expected.invalid.rule}), no output to store"}, {}
    ambiguous = expected.ambiguity or expected.may_reject
    if ambiguous and not options.include_ambiguous:
        return entry | {"status": f"{SKIPPED}: ambiguous spec reading ({ambiguous}); use --include-ambiguous"}, {}
    files = _test_files(example, expected, options.mode, options.shapes)
    status = "written" + (f" (ambiguous: stores the reading '{expected.readings[0].label}')" if ambiguous else "")
    return entry | {"status": status, "hash": content_hash(files)}, files


# ---- verify -------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GoldenTest:
    """One data set of a test directory as read from disk (most directories hold one)."""

    path: Path
    model: onnx.ModelProto
    data: bytes
    data_set: int
    inputs: list[np.ndarray]
    outputs: list[np.ndarray]

    @property
    def fed_inputs(self) -> list[onnx.ValueInfoProto]:
        """The graph inputs the test data feeds (those without an initializer), in order."""
        initialized = {t.name for t in self.model.graph.initializer}
        return [i for i in self.model.graph.input if i.name not in initialized]


def data_set_name(path: Path, data_set: int) -> str:
    """The case name of a stored test that records none (see `stored_case_name`): the directory's
    name, and the data set's number after the first."""
    return path.name if data_set == 0 else f"{path.name}.set{data_set}"


def test_dirs(paths: Iterable[Path]) -> list[Path]:
    """Each path is a test directory (it holds model.onnx) or a folder of them.

    A link inside a given folder that leads out of it is not followed, and a hidden folder in it
    (`.test_*`: one a killed `generate` was writing) is no test; but a test that a `generate`
    killed while replacing it had moved aside (`_write_test_dir`) is read where it is, when
    nothing has taken its name: it is put back by the next `generate` there.
    """
    found: list[Path] = []
    for path in paths:
        if (path / "model.onnx").is_file():
            found.append(path)
        elif path.is_dir():
            children = _tests_in(path)
            if not children:
                raise GoldenError(f"{path}: no test directory (no model.onnx) in it")
            found += children
        else:
            raise GoldenError(f"{path}: {_not_a_folder(path)}")
    return found


_RETIRED = re.compile(rf"\.(test_[a-z0-9_]+)\.old\.{_TEMPORARY}")  # a test moved aside by `_write_test_dir`


def _tests_in(folder: Path) -> list[Path]:
    """The test directories in a folder (see `test_dirs`), in the order of their names."""
    tests: dict[str, Path] = {}
    retired: dict[str, Path] = {}
    for entry in folder.iterdir():
        moved = _RETIRED.fullmatch(entry.name)
        if (entry.name.startswith(".") and not moved) or not inside(entry, folder):
            continue
        child = entry / moved.group(1) if moved else entry
        if inside(child, folder) and child.is_dir() and (child / "model.onnx").is_file():
            (retired if moved else tests)[child.name] = child
    return [tests.get(name) or retired[name] for name in sorted(tests.keys() | retired.keys())]


def _not_a_folder(path: Path) -> str:
    """Why a path given as a test directory is none, and what to give instead."""
    if not path.exists():
        return "no such test directory"
    if path.name == "model.onnx":
        return f"a test's model, not its directory: give {path.parent}"
    return "a file, not a test directory (a folder holding model.onnx and test_data_set_N) or a folder of them"


def read_tests(path: Path) -> list[GoldenTest]:
    """Every data set of a test directory (test_data_set_0, _1, ...), each with the model."""
    model, data = read_model(path)
    tests = []
    for index in range(_count(path, DATA_SET_PREFIX, suffix="", folders=True)):
        folder = refuse_link_out(path / f"{DATA_SET_PREFIX}{index}", path)
        inputs = [load_tensor(checked_file(folder / f"input_{i}.pb", path), path) for i in range(_count(folder, "input_"))]
        outputs = [load_tensor(checked_file(folder / f"output_{i}.pb", path), path) for i in range(_count(folder, "output_"))]
        test = GoldenTest(path, model, data, index, inputs, outputs)
        if len(inputs) != len(test.fed_inputs):
            raise GoldenError(f"{folder}: {len(inputs)} input files for {len(test.fed_inputs)} graph inputs")
        _check_declared_types(test, folder)
        tests.append(test)
    if not tests:
        raise GoldenError(f"{path / DATA_SET}: missing")
    return tests


def _check_declared_types(test: GoldenTest, folder: Path) -> None:
    """Each input file holds the type its graph input declares (when it declares one): what the
    test is, and which shard or dtype it belongs to, is told from the model before its data is read."""
    for index, (value_info, array) in enumerate(zip(test.fed_inputs, test.inputs)):
        declared = value_info.type.tensor_type.elem_type
        held = from_numpy(array.dtype)
        if declared and held.elem_type != declared:
            raise GoldenError(f"{folder / f'input_{index}.pb'}: holds {held.name}, but the model declares its input "
                              f"'{value_info.name}' as {type_name(declared)}")


def _count(folder: Path, prefix: str, suffix: str = ".pb", folders: bool = False) -> int:
    """How many of `prefix<N><suffix>` the folder holds, numbered 0..N-1 without a gap."""
    pattern = re.compile(rf"{re.escape(prefix)}(\d+){re.escape(suffix)}")
    indices = sorted(int(m.group(1)) for p in folder.iterdir()
                     if (m := pattern.fullmatch(p.name)) and (p.is_dir() if folders else True))
    if indices != list(range(len(indices))):
        raise GoldenError(f"{folder}: {prefix}N{suffix} are not numbered 0..{len(indices) - 1}")
    return len(indices)


def example_from_test(test: GoldenTest) -> Example | str:
    """The Example a golden test stores, or the reason it is not one conform can check."""
    found = _node_and_version(test.model)
    if isinstance(found, str):
        return found
    node, version = found
    graph = test.model.graph
    values = {i.name: a for i, a in zip(test.fed_inputs, test.inputs)}
    model_file = test.path / "model.onnx"
    values |= {t.name: tensor_array(t, f"{model_file}: initializer '{t.name}'") for t in graph.initializer}
    values |= {n.output[0]: tensor_array(n.attribute[0].t, f"{model_file}: Constant '{n.output[0]}'") for n in graph.node[:-1]}
    inputs: dict[str, np.ndarray | None] = {}
    if len(node.input) > len(version.inputs) and not version.inputs[-1].variadic:
        raise GoldenError(f"{test.path}: the node has {len(node.input)} inputs; {version.label} takes {len(version.inputs)}")
    for formal_name, name in zip(version.positional_names(len(node.input)), node.input):
        if name and name not in values:
            raise GoldenError(f"{test.path}: the node's input '{name}' is neither a graph input nor an initializer")
        inputs[formal_name] = values[name] if name else None
    missing = [f.name for f in version.inputs if not f.optional and inputs.get(f.name) is None]
    if missing:
        raise GoldenError(f"{test.path}: the node lacks its required input(s) {', '.join(missing)}")
    attributes = {a.name: _attribute(a, f"{model_file}: attribute '{a.name}'") for a in node.attribute}
    reference = for_op(node.op_type)
    types = _types(version, {name: from_numpy(a.dtype).name for name, a in inputs.items() if a is not None},
                   _attribute_dtypes(attributes), reference.attribute_params, _output_dtypes(graph, node))
    types = _bound_by_attributes(version, types, node)
    dtype_param = reference.dtype_param_of(version)
    name = stored_case_name(test.path, test.model, test.data_set, version, types, dtype_param)
    example = Example(version, name, types, inputs, attributes, f"golden:{test.path}", dtype_param,
                      outputs=_asked_outputs(node, version, test.path))
    problem = reference.problem_with_binding(example)  # a node whose attributes contradict its output's type
    if problem is not None:
        raise GoldenError(f"{test.path}: {problem}")
    return example


def _asked_outputs(node: onnx.NodeProto, version: OpVersion, path: Path) -> tuple[bool, ...]:
    """`Example.outputs` of a stored node: () where it names every formal output, as conform's
    own nodes do; else, per output, whether it is named (a variadic output's count, an optional
    output left out)."""
    asked = tuple(bool(name) for name in node.output)
    formals = version.outputs
    if len(asked) > len(formals) and not formals[-1].variadic:
        raise GoldenError(f"{path}: the node has {len(asked)} outputs; {version.label} has {len(formals)}")
    missing = [f.name for k, f in enumerate(formals) if not f.optional and (k >= len(asked) or not asked[k])]
    if missing:
        raise GoldenError(f"{path}: the node lacks its required output(s) {', '.join(missing)}")
    return () if asked == (True,) * len(formals) else asked


def _node_and_version(model: onnx.ModelProto) -> tuple[onnx.NodeProto, OpVersion] | str:
    """The model's one node, of an op conform covers, and the op version in force at its opset; or
    the reason the model is not one conform can check. Constant nodes before it (`generate --mode
    constant`) hold some of its inputs."""
    graph = model.graph
    node = graph.node[-1] if graph.node else None
    if (node is None or node.domain not in ("", "ai.onnx") or node.op_type not in covered_ops()
            or not all(map(_is_plain_constant, graph.node[:-1]))):
        return "not a single supported node"
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        return "no default-domain opset import"
    return node, version_in_force(node.op_type, opset)


def _is_plain_constant(node: onnx.NodeProto) -> bool:
    """A Constant node as `generate --mode constant` writes one: no input, one output, one tensor `value`."""
    return (node.op_type == "Constant" and node.domain in ("", "ai.onnx") and not node.input and len(node.output) == 1
            and len(node.attribute) == 1 and node.attribute[0].name == "value"
            and node.attribute[0].type == onnx.AttributeProto.TENSOR)


def _attribute(attribute: onnx.AttributeProto, where: str):
    value = onnx.helper.get_attribute_value(attribute)
    if isinstance(value, onnx.TensorProto):
        return tensor_array(value, where)
    if isinstance(value, onnx.SparseTensorProto):
        return SparseValue(tensor_array(value.values, f"{where} values"), tensor_array(value.indices, f"{where} indices"),
                           tuple(value.dims))
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, (list, tuple)):
        return list(value)
    return value


def _attribute_dtypes(attributes: dict) -> dict[str, str]:
    """The dtype of each attribute that holds a tensor (its values', for a sparse one), by name."""
    arrays = {name: value.values if isinstance(value, SparseValue) else value for name, value in attributes.items()}
    return {name: from_numpy(array.dtype).name for name, array in arrays.items() if isinstance(array, np.ndarray)}


def _output_dtypes(graph: onnx.GraphProto, node: onnx.NodeProto) -> tuple[str | None, ...]:
    """The dtype the model's graph declares for each of the node's outputs, by position (None where
    it declares none, or the node leaves that output out)."""
    declared = {o.name: from_elem_type(o.type.tensor_type.elem_type).name for o in graph.output if o.type.tensor_type.elem_type}
    return tuple(declared.get(name) if name else None for name in node.output)


def _types(version: OpVersion, input_dtypes: dict[str, str], attribute_dtypes: dict[str, str],
           attribute_params: dict[str, str], output_dtypes: tuple[str | None, ...] = ()) -> dict[str, str]:
    """The type binding of a stored node: each type parameter's dtype from the first formal input
    that has one, then from the attributes that carry one (a tensor's dtype), then from the outputs
    the model declares, then float for a tensor attribute's parameter still unbound; a parameter
    with one allowed type has that one. An input of a fixed type (QuantizeLinear-13's `y_scale`, `tensor(float)`) binds
    no parameter: a binding holds type parameters only, as `OpVersion.type_bindings` gives them."""
    types: dict[str, str] = {}
    for name, dtype_name in input_dtypes.items():
        formal = version.input(name)
        if formal is not None and formal.type_param in version.constraints:
            types.setdefault(formal.type_param, dtype_name)
    for name, param in attribute_params.items():
        if name in attribute_dtypes:
            types.setdefault(param, attribute_dtypes[name])
    for position, dtype_name in enumerate(output_dtypes):
        formal = version.output_formal(position)
        if dtype_name is not None and formal.type_param in version.constraints:
            types.setdefault(formal.type_param, dtype_name)
    for param in attribute_params.values():
        # An omitted tensor attribute whose type nothing else names: the float default (ConstantOfShape's
        # value). After the outputs: Constant's value_int leaves `value` out, and its output names T.
        types.setdefault(param, "float")
    for param, allowed in version.type_constraints:
        if len(allowed) == 1:
            types.setdefault(param, allowed[0])
    return types


def _checkable(test: GoldenTest, expect_stored: bool, max_elements: int) -> tuple[Example | str, Expected | None, str | None]:
    """The test's Example (or why it is skipped), what the reference expects of it, and why it is
    refused before anything is computed (too large), if it is.

    With `expect_stored`, the stored output is the expectation (see `expected_for`): the runtime is
    held to the golden data, and a stored output that is one reading of an ambiguous text still
    lets the other readings pass.
    """
    try:
        example = example_from_test(test)
        if isinstance(example, str):
            return example, None, None
        folder = test.path / f"{DATA_SET_PREFIX}{test.data_set}"
        if len(test.outputs) < len(test.model.graph.output):  # nothing to judge, nor to hold a runtime to
            raise GoldenError(f"{folder / f'output_{len(test.outputs)}.pb'}: missing")
        if len(test.outputs) > len(test.model.graph.output):  # what they are outputs of, no one can say
            raise GoldenError(f"{folder}: {len(test.outputs)} output files for {len(test.model.graph.output)} graph outputs")
        refusal = too_large(example, max_elements)
        if refusal is not None:  # before the reference, which would allocate the output
            return example, None, refusal
        if expect_stored:
            if len(test.outputs) != len(example.output_positions):
                raise GoldenError(f"{folder}: {len(test.outputs)} output files; "
                                  f"its {example.version.label} node has {len(example.output_positions)} outputs")
            example = dataclasses.replace(example, expect_outputs=tuple(test.outputs))
        return example, expected_for(example), None
    except GoldenError:
        raise
    except ConformError as error:
        raise GoldenError(f"{test.path}: {error.message}") from None
    except Exception as error:  # a parseable model can still be nonsense; the path is what the user needs
        raise GoldenError(f"{test.path}: cannot be checked: {type(error).__name__}: {error}") from None


def verify_dir(path: Path, options: RunOptions = RunOptions(op="")) -> list[Result] | tuple[Path, str]:
    """The verdict for each data set of a test directory (judged by `options`' strict_zero; none
    larger than its max_elements), or (path, reason) when it is skipped."""
    results = []
    replay = shlex.join(["conform", "verify", str(path), *judging_options(options)])
    for test in read_tests(path):
        example, expected, refusal = _checkable(test, expect_stored=False, max_elements=options.max_elements)
        if refusal is not None:
            return path, refusal.removeprefix(f"{SKIPPED}: ")
        if isinstance(example, str):
            return path, example
        verdict = judge(expected, RunOutput(outputs=tuple(test.outputs)), strict_zero=options.strict_zero)
        if not expected.is_valid:
            verdict = Verdict(verdict.outcome, f"stores an output for invalid input: {expected.invalid.rule}: {expected.invalid.sentence}")
        results.append(Result(example, expected, verdict, tuple(test.outputs), replay=replay, extra=recorded_variant(test.model)))
    return results


def verify_unit(unit: GoldenUnit, options: RunOptions, on_result: Callable[[Result], None] | None = None,
                on_skipped: Callable[[list[tuple[Path, str]]], None] = lambda skipped: None) -> GoldenRun:
    """`conform verify` of the unit's test directories, under the options' `strict_zero` and
    `max_elements`: a verdict for each stored data set, and the tests skipped or Unreadable, with
    why. Each verdict and each skipped test is heard as it comes, one test directory read at a
    time; the GoldenRun keeps the verdicts as `_Kept` says (all of them, where none hears them)."""
    kept, skipped = _Kept(options, on_result), []
    for path in unit.paths:
        try:
            found = verify_dir(path, options)
        except GoldenError as error:
            found = Unreadable(path, error.message)
        if isinstance(found, tuple):
            skipped.append(found)
            on_skipped([found])
            continue
        for result in found:
            kept.hear(result)
    return GoldenRun(kept.results, skipped, frozenset())


class _Kept:
    """The results a GoldenRun hands back. Where no one hears them as they come (a worker's share
    of the tests, a library call), every one: the caller reads them all from the GoldenRun. Where
    `on_result` hears each one, only what a caller still reads of the run once it has heard them
    all: the first result (the options chose a test) and those a `--case` id names (each id was
    found), so that a run over a large golden folder holds one test at a time, not every result."""

    def __init__(self, options: RunOptions, on_result: Callable[[Result], None] | None) -> None:
        self.results: list[Result] = []
        self._on_result = on_result
        self._named = frozenset(options.case_ids)

    def hear(self, result: Result) -> None:
        if self._on_result is None:
            self.results.append(result)
            return
        self._on_result(result)
        if not self.results or result.example.id in self._named:
            self.results.append(result)


@dataclass(frozen=True, eq=False)
class StoredCase:
    """A golden test ready to run as stored: its Example, expectation and model with its feeds, or
    why it is refused unrun (too large, and then it has no expectation)."""

    example: Example
    expected: Expected | None
    built: BuiltModel
    refusal: str | None = None


def stored_cases(paths: Iterable[Path], max_elements: int = DEFAULT_MAX_ELEMENTS
                 ) -> tuple[list[StoredCase], list[tuple[Path, str]]]:
    """The golden tests under `paths` to run (`conform run --from`), and those skipped, with why."""
    cases, skipped = [], []
    for path in test_dirs(paths):
        found = stored_in(path, max_elements)
        if isinstance(found, tuple):
            skipped.append(found)
        else:
            cases += found
    return cases, skipped


def stored_in(path: Path, max_elements: int = DEFAULT_MAX_ELEMENTS) -> list[StoredCase] | tuple[Path, str]:
    """A test directory's data sets ready to run as stored, or (path, why) when it is skipped; a
    GoldenError naming the file when it cannot be read."""
    cases = []
    for test in read_tests(path):
        example, expected, refusal = _checkable(test, expect_stored=True, max_elements=max_elements)
        if isinstance(example, str):
            return path, example
        feeds = {value_info.name: array for value_info, array in zip(test.fed_inputs, test.inputs)}
        cases.append(StoredCase(example, expected, BuiltModel(test.model, test.data, feeds), refusal))
    return cases


# Test directories per unit of a `run --from` with `--jobs`: each is read and run in a worker.
GOLDEN_CHUNK = 64


@dataclass(frozen=True)
class GoldenUnit:
    """Stored test directories that can be read and run (or, with `verify`, checked against the
    reference) on their own: a worker's share of a `run --from` or a `verify`, or all of a serial one."""

    paths: tuple[Path, ...]
    verify: bool = False

    def describe(self) -> str:
        return f"{len(self.paths)} golden test directories from {self.paths[0]}"


def golden_units(paths: Iterable[Path], verify: bool = False) -> list[GoldenUnit]:
    """The test directories under `paths`, in order, GOLDEN_CHUNK to a unit."""
    found = test_dirs(paths)
    return [GoldenUnit(tuple(found[i:i + GOLDEN_CHUNK]), verify) for i in range(0, len(found), GOLDEN_CHUNK)]


@dataclass(frozen=True, eq=False)
class GoldenRun:
    """What stored tests gave: each chosen test's result, in order (where a listener heard them as
    they came, only those `_Kept` keeps); the tests skipped, with why; the op versions of the tests
    conform could run, chosen or not (to say what there was when the options chose none); and
    whether any shard's options choose one of the tests (a shard that chose none is an error only
    when no shard chose any)."""

    results: list[Result]
    skipped: list[tuple[Path, str]]
    found: frozenset[str]
    chosen_in_a_shard: bool = False



class GoldenRuns:
    """The GoldenRun of several units heard one unit at a time (the workers' shares of a run, in
    plan order): each result handed to `on_result` as its unit comes, and kept as `_Kept` says, so
    that what stays in memory is the skipped tests and the op versions found, not every result."""

    def __init__(self, options: RunOptions, on_result: Callable[[Result], None]) -> None:
        self._kept = _Kept(options, on_result)
        self._skipped: list[tuple[Path, str]] = []
        self._found: set[str] = set()
        self._chosen_in_a_shard = False

    def hear(self, run: GoldenRun) -> None:
        self._skipped.extend(run.skipped)
        self._found.update(run.found)
        self._chosen_in_a_shard = self._chosen_in_a_shard or run.chosen_in_a_shard
        for result in run.results:
            self._kept.hear(result)

    def joined(self) -> GoldenRun:
        return GoldenRun(self._kept.results, self._skipped, frozenset(self._found), self._chosen_in_a_shard)


def run_golden(unit: GoldenUnit, runner: Runner, options: RunOptions, on_result: Callable[[Result], None] | None = None,
               on_skipped: Callable[[list[tuple[Path, str]]], None] = lambda skipped: None) -> GoldenRun:
    """Read the unit's stored tests, and run those the options choose (version, dtype, shard, id),
    one test directory read at a time, as the runner asks for the next: what is in memory is the
    test being run (and the few a runner has in flight), not the folder. `on_skipped` hears of each
    test skipped as it is read; the GoldenRun keeps the results as `_Kept` says."""
    paths, passed_over, chosen_elsewhere = _chosen_paths(unit.paths, options)
    reading = _Reading(options, passed_over, chosen_elsewhere)
    judging = judging_options(options)
    chunks = ([_staged(case, runner, judging)] for case in reading.chosen(paths, on_skipped))
    kept = _Kept(options, on_result)
    run_staged(chunks, runner, options, kept.hear, collect=False)
    return GoldenRun(kept.results, reading.skipped, frozenset(reading.found), reading.in_a_shard)


class _Reading:
    """What reading a unit's stored tests one by one finds besides the cases chosen to run: the
    tests skipped, the op versions of those conform could run (chosen or not), and whether any
    shard's options choose one of them (see GoldenRun)."""

    def __init__(self, options: RunOptions, passed_over: frozenset[str], chosen_elsewhere: bool) -> None:
        self.skipped: list[tuple[Path, str]] = []
        self.found: set[str] = set(passed_over)
        self.in_a_shard = chosen_elsewhere
        self._chooses, self._in_any_shard = chooser(options), chooser(whole_run(options))
        self._max_elements = options.max_elements

    def chosen(self, paths: Iterable[Path], on_skipped: Callable[[list[tuple[Path, str]]], None]) -> Iterator[StoredCase]:
        """The stored cases the options choose, read as they are asked for."""
        for path in paths:
            found = stored_in(path, self._max_elements)
            if isinstance(found, tuple):
                self.skipped.append(found)
                on_skipped([found])
                continue
            for case in found:
                self.found.add(case.example.version.label)
                chosen = self._chooses(case.example)
                self.in_a_shard = self.in_a_shard or chosen or self._in_any_shard(case.example)
                if chosen:
                    yield case


def chooses_among(options: RunOptions) -> bool:
    """Whether the options choose among stored tests (an op, a dtype, a shard or ids), rather than
    take every one."""
    return bool(options.op or options.dtypes or options.case_ids or options.shard[1] > 1)


def _chosen_paths(paths: Iterable[Path], options: RunOptions) -> tuple[list[Path], frozenset[str], bool]:
    """The test directories to read whole: all, unless the options choose among the tests (an op,
    a dtype, a shard or ids); then those with a data set the options choose, as their model
    declares it, or whose model cannot tell (reading it whole says why it is skipped or
    unreadable). The op versions of the others, passed over after their model alone: their data
    and the reference's outputs would be read and computed for nothing; and whether another shard
    chooses one of them."""
    if not chooses_among(options):
        return list(paths), frozenset(), False
    chooses, in_any_shard = chooser(options), chooser(whole_run(options))
    kept, passed_over, chosen_elsewhere = [], set(), False
    for path in paths:
        declared = _declared_data_sets(path)
        if declared is None or any(map(chooses, declared)):
            kept.append(path)
        else:
            passed_over.add(declared[0].version.label)
            chosen_elsewhere = chosen_elsewhere or any(map(in_any_shard, declared))
    return kept, frozenset(passed_over), chosen_elsewhere


@dataclass(frozen=True)
class _Declared:
    """One data set of a stored test as its model declares it, before its data is read: what
    `chooser` asks of a case. Its data is checked to be what the model declares when it is read
    (`_check_declared_types`), so the case read has the same id."""

    version: OpVersion
    dtype: str
    id: str


def _declared_data_sets(path: Path) -> list[_Declared] | None:
    """Each data set of a test directory as its model declares it; None when the model cannot tell
    (not a single node of a covered op, an input of no declared type, unreadable)."""
    try:
        model = read_model(path)[0]
        found = _node_and_version(model)
        if isinstance(found, str):
            return None
        node, version = found
        types = _declared_types(model, node, version)
        data_sets = _count(path, DATA_SET_PREFIX, suffix="", folders=True)
    except Exception:  # noqa: BLE001 - whatever it is, reading the test whole reports it as before
        return None
    if types is None or not data_sets:
        return None
    dtype_param = for_op(version.op).dtype_param_of(version)
    return [_Declared(version, types[dtype_param],
                      case_id(version, stored_case_name(path, model, index, version, types, dtype_param), types, dtype_param))
            for index in range(data_sets)]


def _declared_types(model: onnx.ModelProto, node: onnx.NodeProto, version: OpVersion) -> dict[str, str] | None:
    """The node's type binding from the types its model declares; None when an input declares none."""
    graph = model.graph
    declared = {i.name: i.type.tensor_type.elem_type for i in graph.input} | {t.name: t.data_type for t in graph.initializer}
    declared |= {n.output[0]: n.attribute[0].t.data_type for n in graph.node[:-1]}  # Constant nodes (see _node_and_version)
    inputs = {formal: declared.get(name) for formal, name in zip(version.positional_names(len(node.input)), node.input) if name}
    if not all(inputs.values()):
        return None
    tensors = {a.name: a.t.data_type for a in node.attribute if a.type == onnx.AttributeProto.TENSOR}
    tensors |= {a.name: a.sparse_tensor.values.data_type for a in node.attribute if a.type == onnx.AttributeProto.SPARSE_TENSOR}
    types = _types(version, {name: from_elem_type(t).name for name, t in inputs.items()},
                   {name: from_elem_type(t).name for name, t in tensors.items()}, for_op(version.op).attribute_params,
                   _output_dtypes(graph, node))
    return _bound_by_attributes(version, types, node)


def _bound_by_attributes(version: OpVersion, types: dict[str, str], node: onnx.NodeProto) -> dict[str, str]:
    """`types` with each parameter nothing else bound read from the attributes its type fixes
    (LayerNormalization's `stash_type` names U where the node leaves Mean and InvStdDev out): the
    type whose attributes (`OpReference.attributes_of_binding`) the node has, one that fixes some
    before one that fixes none."""
    reference = for_op(version.op)
    if reference.binding_attributes is None:
        return types
    written = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    found = dict(types)
    for param, allowed in version.type_constraints:
        if param in found or len(allowed) < 2:
            continue
        fixed = {name: reference.attributes_of_binding(version, {**found, param: name}) for name in allowed}
        fitting = [name for name in allowed if all(written.get(k) == v for k, v in fixed[name].items())]
        chosen = [name for name in fitting if fixed[name]] or fitting
        if chosen:
            found[param] = chosen[0]
    return found


def _staged(case: StoredCase, runner: Runner, judging: tuple[str, ...]) -> Staged | Result:
    """The stored test ready for the runner, or its Result when it is not to be run; `judging`:
    the options its replay command repeats (see execute.judging_options)."""
    path = case.example.source.removeprefix("golden:")
    replay = shlex.join(["conform", "run", "--from", path, "--case", case.example.id, *judging, *runner.replay_options()])
    if case.refusal is not None:
        return Result(case.example, Expected(readings=()), Verdict(SKIPPED_OUTCOME, case.refusal), replay=replay,
                      extra=recorded_variant(case.built.model))
    return Staged(case.example, case.expected, case.built, replay, recorded_variant(case.built.model))


def agreeing(result: Result, strict_precision: bool = False) -> bool:
    """Whether a stored output is one the spec allows: an imprecise one is, unless `strict_precision`."""
    return agreeing_outcome(result.outcome, strict_precision)


def agreeing_outcome(outcome: str, strict_precision: bool = False) -> bool:
    """Whether a verify verdict of this outcome says the stored output is one the spec allows (see `agreeing`)."""
    return outcome in (PASS, AMBIGUOUS) or (outcome == IMPRECISE and not strict_precision)
