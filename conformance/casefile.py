"""YAML case files -> validated Cases -> Examples, with every problem reported as FILE:LINE.

A case file is data only: it is read with a SafeLoader subclass that records line numbers and
refuses duplicate keys; nothing in it is evaluated. It may come from anyone, so what it costs is
bounded before it is read (a regular file of at most MAX_FILE_BYTES), parsed (no anchors, aliases
or tags; at most MAX_DEPTH levels) and expanded (MAX_LOADED_BYTES of arrays in all). The format:

    op: Slice
    defaults: {versions: [10, 11, 13]}     # optional, merged into every case
    cases:
      - name: negative_starts              # unique per op
        spec: "All negative values in starts[i] and ends[i] have dims[axes[i]] added to them"
        versions: [10, 11, 13]             # since-versions; default: every version
        dtypes: [float, int64]             # the op's dtype axis; default: all the version allows
        types: {Tind: [int32]}             # other type parameters; default: all allowed
        inputs:                            # formal inputs; for older versions that take the
          data: {shape: [3, 4], values: arange}  # same name as an attribute, it becomes one
          starts: [-2]
          ends: [INT_MAX]
        attributes: {}
        outputs: 3                         # a variadic output's count (Split's parts), or the
                                           # outputs asked for by name ([Y, inverse_indices]);
                                           # default: every formal output
        expect: {output: [[...]]}          # or {error: steps-zero}; default: the reference decides
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import yaml

from .case import (Case, Example, Expectation, SparseValue, attribute_value, is_sparse_attribute, is_typed_attribute, name_clash,
                   slug, stable_seed, type_bindings, value_dtype, bound_types)
from .dtypes import canonical_name, dtype
from .errors import CaseFileError, ConformError
from .reference import for_op
from .reference.base import DTYPE_NOT_ALLOWED, OpReference
from .registry import OpVersion, versions
from .reading import FileRefused, mib, read_bounded
from .text import has_control, printable
from .values import ValueProblem, check_shape, to_array

FILE_KEYS = ("op", "defaults", "cases")
CASE_KEYS = ("name", "spec", "versions", "dtypes", "types", "inputs", "attributes", "outputs", "expect")
EXPECT_KEYS = ("output", "outputs", "error")
BUILTIN_CASES = Path(__file__).resolve().parent.parent / "cases"
# Limits on what a YAML file conform reads may hold, so that a stranger's file costs bounded time
# and memory (the shipped case files are at most 9 KB, 10 levels deep, numbers of 20 characters).
MAX_FILE_BYTES = 1 << 20
MAX_OUTPUTS = 64  # values of a variadic output a case may ask for
MAX_DEPTH = 32  # levels of mappings and lists: a literal tensor of rank 28 in a case
MAX_NUMBER_CHARS = 100  # as written: no dtype holds an integer of more than 20 digits
# What the arrays made from the values the case files write may take in all, in one load: each
# generator has its limit, but a file of a few of them in every dtype would fill memory.
MAX_LOADED_BYTES = 256 << 20
STRING_ELEMENT_BYTES = 64  # counted for an element of a string tensor: its pointer and its str


class LineDict(dict):
    """A mapping that remembers the line it starts on and the line of each key."""

    line: int = 0
    key_lines: dict[str, int]


class Refused(Exception):
    """What conform does not read in a YAML file, valid YAML or not: the problem, and its line
    (None: the whole file)."""

    def __init__(self, message: str, mark: yaml.Mark | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = None if mark is None else mark.line + 1


def line_loader(base: type) -> type:
    """`base` (a PyYAML SafeLoader) made to record lines, and to refuse duplicate and unhashable
    keys, numbers written with more than MAX_NUMBER_CHARS characters (Python's int() refuses 5,000
    digits, and a sexagesimal 59:59:... of 1 MiB takes half a minute to read), floats beyond every
    float's range, and values its constructors cannot make (the date 2001-13-45); still plain data
    only."""

    class LineLoader(base):
        def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
            try:
                return super().construct_object(node, deep)
            except (ValueError, OverflowError) as error:  # raised where the value's own node is made
                raise Refused(f"cannot read {_written(node)}: {error}", node.start_mark) from None

    LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    LineLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
    LineLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
    return LineLoader


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    mapping = LineDict()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, Hashable):
            raise Refused("a key must be a plain value (a name or number), not a list or mapping", key_node.start_mark)
        if key in mapping:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key '{key}'", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=True)
        mapping.key_lines[key] = key_node.start_mark.line + 1
    return mapping


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    _check_number_length(node)
    return yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    _check_number_length(node)
    number = yaml.constructor.SafeConstructor.construct_yaml_float(loader, node)
    if math.isinf(number) and "inf" not in node.value.lower():
        raise Refused(f"{node.value} is beyond the range of every float dtype (write .inf for infinity)", node.start_mark)
    return number


def _check_number_length(node: yaml.ScalarNode) -> None:
    if len(node.value) > MAX_NUMBER_CHARS:
        raise Refused(f"a number written with {len(node.value):,} characters is too long: conform reads numbers of at most "
                      f"{MAX_NUMBER_CHARS} (no dtype holds one that needs more)", node.start_mark)


def _written(node: yaml.Node) -> str:
    return repr(node.value) if isinstance(node, yaml.ScalarNode) else f"this {node.tag}"


# libyaml's parser where PyYAML has it: 7x faster than PyYAML's own.
_LineLoader = line_loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@dataclass(frozen=True)
class CaseFile:
    """One loaded file: its path for messages, its cases, and their Examples (expanded once)."""

    path: str
    op: str
    cases: tuple[Case, ...]
    examples: dict[str, list[Example]] = field(default_factory=dict)  # case name -> examples


class Budget:
    """The bytes the arrays made from written values may still take in one load, shared by its
    cases: the array that takes it past MAX_LOADED_BYTES is refused."""

    def __init__(self) -> None:
        self.left = MAX_LOADED_BYTES

    def spend(self, array: Any) -> None:
        self.left -= array.size * STRING_ELEMENT_BYTES if array.dtype == object else array.nbytes
        if self.left < 0:
            raise ValueProblem(f"with this case, the values the case files write come to more than {mib(MAX_LOADED_BYTES)} of "
                               "arrays, the most conform makes in one load: write smaller generators, or list fewer 'dtypes'")


class Made(dict):
    """The arrays of the values one case writes, by (value, dtype, seed): each made once and shared
    by the case's examples; `budget` is the load's, shared by its cases."""

    def __init__(self, budget: Budget) -> None:
        super().__init__()
        self.budget = budget


class Problems:
    """Collects problems across files so the user sees all of them at once."""

    def __init__(self) -> None:
        self.items: list[tuple[str, int | None, str]] = []

    def add(self, path: str, line: int | None, message: str) -> None:
        self.items.append((path, line, message))

    def raise_if_any(self) -> None:
        if self.items:
            raise CaseFileError(self.items)


def display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        try:
            return str(path.resolve().relative_to(BUILTIN_CASES.parent))
        except ValueError:
            return str(path)


def case_roots(cases: Iterable[Path], only_cases: Iterable[Path]) -> tuple[Path, ...]:
    """The case files a command reads: `only_cases` alone, or the built-in ones plus `cases`."""
    only = tuple(only_cases)
    return only if only else (BUILTIN_CASES, *cases)


def case_files(roots: Iterable[Path]) -> list[Path]:
    """The case files under each root, a file or a folder searched for *.yaml and *.yml."""
    found: list[Path] = []
    for root in roots:
        if root.is_dir():
            inside = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
            if not inside:
                raise ConformError(f"{root}: no case files (*.yaml, *.yml) in this folder")
            found += inside
        elif root.exists():
            found.append(root)
        else:
            raise ConformError(f"{root}: no such case file or folder")
    return found


def load_files(paths: Iterable[Path], expanded: Callable[[OpVersion], bool] = lambda version: True,
               ops: Iterable[str] | None = None) -> list[CaseFile]:
    """Load and validate the files (those of `ops`, when given); raises one CaseFileError listing
    every problem found.

    Every file is read; with `ops`, a file whose `op:` line names another op is left there, and
    every other file's cases have their structure checked. A case's values are checked by
    expanding it into Examples, in each of its versions that `expanded` picks: a run expands the
    versions it runs (the others are checked when they run, and by `conform list`, which loads
    every file).
    """
    load = _Load()
    keep = None
    if ops is not None:
        wanted = {op.lower() for op in ops}
        keep = lambda text: (op := declared_op(text)) is None or op.lower() in wanted  # noqa: E731
    loaded = load.files(paths, expanded, keep)
    load.problems.raise_if_any()
    return loaded


def load_by_op(paths: Iterable[Path], expanded: Callable[[OpVersion], bool],
               ops: Iterable[str]) -> Iterator[tuple[str, list[Example]]]:
    """Each of `ops` with its case-file Examples (file order), op after op, as `load_files` with
    `ops` would load them: one op's files are read, checked and expanded only once the previous
    op's Examples were taken, so that a caller that keeps them packed holds one op's at a time.
    The problems of every file are raised together after the last op."""
    load = _Load()
    by_op: dict[str | None, list[Path]] = {}
    for path in paths:
        by_op.setdefault(_declared_op_of(path), []).append(path)
    # A file whose op is not on a line of its own is parsed first: it says its op only then.
    loose: dict[str, list[CaseFile]] = {}
    for case_file in load.files(by_op.pop(None, []), expanded):
        loose.setdefault(case_file.op.lower(), []).append(case_file)
    declared = {}
    for op, op_paths in by_op.items():
        declared.setdefault(op.lower(), []).extend(op_paths)
    for op in ops:
        files = loose.pop(op.lower(), []) + load.files(declared.pop(op.lower(), []), expanded)
        yield op, [example for case_file in files if case_file.op == op
                   for case in case_file.cases for example in case_file.examples.get(case.name, ())]
    load.problems.raise_if_any()


def _declared_op_of(path: Path) -> str | None:
    """The op a case file's `op:` line names, None when it has none or cannot be read (loading it
    then tells why)."""
    try:
        return declared_op(read_text(path))
    except (Refused, OSError, UnicodeDecodeError):
        return None


class _Load:
    """What one load shares across its files: the problems found, the budget of arrays made, and
    the names of each op's cases taken (two files of one op must not name a case alike)."""

    def __init__(self) -> None:
        self.problems = Problems()
        self.budget = Budget()
        self.names: dict[str, dict[str, tuple[str, str]]] = {}  # by op, by slug: each name and where it is

    def files(self, paths: Iterable[Path], expanded: Callable[[OpVersion], bool],
              keep: Callable[[str], bool] | None = None) -> list[CaseFile]:
        loaded = [f for f in (_load_file(p, self.problems, keep) for p in paths) if f is not None]
        for case_file in loaded:
            for case in case_file.cases:
                taken = self.names.setdefault(case.op, {})
                clash = name_clash(case.name, taken)
                if clash is not None:
                    self.problems.add(case_file.path, case.line, clash)
                taken.setdefault(slug(case.name), (case.name, f"{case_file.path}:{case.line}"))
        for case_file in loaded:
            for case in case_file.cases:
                if self.budget.left >= 0:  # once spent, one problem says so: the cases after it are not expanded
                    case_file.examples[case.name] = _validate_by_expanding(case, case_file.path, self.problems, expanded,
                                                                           self.budget)
        return loaded


SKIPPED = object()  # what read_yaml gives for a file its `keep` leaves unparsed
# A case file's `op:` line, at the top level: read without parsing, to leave the files of other ops alone.
OP_LINE = re.compile(r"""^op:[ \t]*['"]?([A-Za-z0-9_]+)['"]?[ \t]*(?:#.*)?$""", re.MULTILINE)


def declared_op(text: str) -> str | None:
    """The op a case file's one top-level `op:` line names; None when it has none or several (the
    parser then tells)."""
    found = OP_LINE.findall(text)
    return found[0] if len(found) == 1 else None


def read_yaml(path: Path, problems: Problems, kind: str = "case file", keep: Callable[[str], bool] | None = None) -> Any:
    """The document in a YAML file (mappings as LineDicts), or None with the problem recorded;
    SKIPPED for a file whose text `keep` (when given) turns down.

    The file is read only if it is a regular file of at most MAX_FILE_BYTES, and its document
    built only if it nests at most MAX_DEPTH levels and has no anchor, alias or tag (see
    `check_structure`); `kind` names the file in those refusals.
    """
    shown = display_path(path)
    try:
        text = read_text(path, kind)
        if keep is not None and not keep(text):
            return SKIPPED
        check_structure(text, kind)
        return yaml.load(text, Loader=_LineLoader)
    except Refused as refusal:
        problems.add(shown, refusal.line, refusal.message)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problems.add(shown, mark.line + 1 if mark else None, f"invalid YAML: {error.problem or error.context}")
    except yaml.reader.ReaderError as error:
        problems.add(shown, None, f"not a text file: character #x{error.character:04x} at position {error.position} "
                                  "(a case file is UTF-8 text)")
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as error:
        problems.add(shown, None, f"cannot read: {error}")
    return None


def read_text(path: Path, kind: str = "case file") -> str:
    """The UTF-8 text of a regular file of at most MAX_FILE_BYTES (see reading.read_bounded)."""
    try:
        return read_bounded(path, MAX_FILE_BYTES, kind).decode("utf-8")
    except FileRefused as refusal:
        raise Refused(refusal.message) from None


def check_structure(text: str, kind: str = "case file") -> None:
    """Refuse, from the parser's events and before any node is built, what would let a small
    file cost without bound: an anchor or alias (each alias stands for a whole subtree, so nine
    lists of nine aliases, nested, are a billion values in 643 bytes), and nesting deeper than
    MAX_DEPTH (building the document and reading its values recurse once per level); and every
    tag, whose constructors are where PyYAML fails in its own words (!!bool maybe, !!python/...)."""
    depth = 0
    for event in yaml.parse(text, Loader=_LineLoader):
        if getattr(event, "anchor", None) is not None:
            raise Refused(f"anchors and aliases (&name, *name) are not allowed in {kind}s: write each value out",
                          event.start_mark)
        if getattr(event, "tag", None) is not None:
            raise Refused(f"tags (!!str, !!python/..., !name) are not allowed in {kind}s: write the value plain "
                          "(quote a string)", event.start_mark)
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise Refused(f"nested more than {MAX_DEPTH} levels deep: {kind}s nest at most {MAX_DEPTH} lists and mappings",
                              event.start_mark)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _load_file(path: Path, problems: Problems, keep: Callable[[str], bool] | None = None) -> CaseFile | None:
    shown = display_path(path)
    count = len(problems.items)
    document = read_yaml(path, problems, keep=keep)
    if len(problems.items) > count or document is SKIPPED:
        return None
    if not isinstance(document, LineDict):
        problems.add(shown, 1, "a case file is a mapping with 'op' and 'cases'")
        return None
    check_keys(document, FILE_KEYS, shown, problems)
    op = document.get("op")
    try:
        reference = for_op(str(op))
    except ConformError as error:
        problems.add(shown, document.key_lines.get("op", document.line), error.message)
        return None
    defaults = LineDict() if document.get("defaults") is None else document["defaults"]
    if not isinstance(defaults, LineDict):
        problems.add(shown, document.key_lines.get("defaults", document.line),
                     f"'defaults' must be a mapping of keys every case shares (like 'dtypes: [float]'), not {defaults!r}")
        return None
    cases_node = document.get("cases")
    if not isinstance(cases_node, list) or not cases_node:
        problems.add(shown, document.key_lines.get("cases", document.line), "'cases' must be a non-empty list")
        return None
    cases = [_case(entry, defaults, reference, shown, problems) for entry in cases_node]
    return CaseFile(shown, reference.op, tuple(c for c in cases if c is not None))


def check_keys(mapping: LineDict, allowed: tuple[str, ...], path: str, problems: Problems) -> bool:
    ok = True
    for key in mapping:
        if key not in allowed:
            problems.add(path, mapping.key_lines.get(key, mapping.line), f"unknown key '{key}'{_did_you_mean(key, allowed)}")
            ok = False
    return ok


def _case(entry: Any, defaults: LineDict, reference: OpReference, path: str, problems: Problems) -> Case | None:
    if not isinstance(entry, LineDict):
        problems.add(path, None, f"each case must be a mapping, not {entry!r}")
        return None
    merged = LineDict({**defaults, **entry})
    merged.line, merged.key_lines = entry.line, {**getattr(defaults, "key_lines", {}), **entry.key_lines}
    if not check_keys(merged, CASE_KEYS, path, problems):
        return None
    name = merged.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.add(path, entry.line, "every case needs a 'name' (a non-empty string)")
        return None
    if has_control(name):  # printed in every verdict and replay command, one line each
        problems.add(path, entry.line, f"case name '{printable(name)}' holds a control character (a newline, an escape): "
                                       "write it without")
        return None
    try:
        return Case(
            op=reference.op,
            name=name,
            source=f"yaml:{path}:{entry.line}",
            versions=version_list(merged.get("versions"), reference.op),
            dtypes=dtype_list(merged.get("dtypes")),
            types=tuple((p, dtype_list(v)) for p, v in _mapping(merged, "types", "type parameters to dtypes")),
            inputs=_mapping(merged, "inputs", "input names to values"),
            attributes=_mapping(merged, "attributes", "attribute names to values"),
            outputs=_outputs_written(merged.get("outputs")),
            expect=_expectation(merged.get("expect"), reference, path, problems),
            spec=str(merged.get("spec") or ""),
            line=entry.line,
        )
    except (ConformError, ValueProblem, AttributeError, TypeError) as error:
        problems.add(path, entry.line, f"case '{name}': {getattr(error, 'message', error)}")
        return None


def _outputs_written(value: Any) -> int | tuple[str, ...] | None:
    """A case's `outputs`: a count (of a variadic output's values), output names, or None."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_OUTPUTS:
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueProblem(f"'outputs' takes a count from 1 to {MAX_OUTPUTS} (a variadic output's values) or a list of "
                       f"output names, not {value!r}")


def asked_outputs(version: OpVersion, written: int | tuple[str, ...] | None) -> tuple[bool, ...]:
    """`Example.outputs` from what a case writes: a count fills the version's variadic output, names
    ask for those formal outputs (every required one among them)."""
    if written is None:
        return ()
    formals = version.outputs
    if isinstance(written, int):
        if not formals[-1].variadic:
            raise ValueProblem(f"'outputs: {written}' counts a variadic output's values; {version.label}'s outputs "
                               f"({', '.join(version.output_names)}) are not variadic: name the ones asked for")
        return (True,) * (len(formals) - 1 + written)
    unknown = [name for name in written if name not in version.output_names]
    if unknown:
        raise ValueProblem(f"'outputs' names {', '.join(unknown)}, which {version.label} does not have "
                           f"(its outputs: {', '.join(version.output_names)})")
    missing = [f.name for f in formals if not f.optional and f.name not in written]
    if missing:
        raise ValueProblem(f"'outputs' leaves out {', '.join(missing)}, which {version.label} requires")
    return tuple(f.name in written for f in formals)


def _mapping(case: LineDict, key: str, of_what: str) -> tuple[tuple[Any, Any], ...]:
    """The (key, value) pairs of one of a case's mappings: none when the key is absent or null."""
    value = case.get(key)
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise ValueProblem(f"'{key}' must be a mapping of {of_what}, not {value!r}")
    return tuple(value.items())


def version_list(value: Any, op: str) -> tuple[int, ...] | None:
    """`versions:` of a case file or an expectations file: since-versions of `op`, or None for all."""
    if value in (None, "all"):
        return None
    known = [v.since_version for v in versions(op)]
    values = value if isinstance(value, list) else [value]
    for v in values:
        if v not in known:
            raise ValueProblem(f"{op} has no version {v!r} (versions: {', '.join(map(str, known))})")
    return tuple(values)


def dtype_list(value: Any) -> tuple[str, ...] | None:
    """`dtypes:` of a case file or an expectations file: canonical dtype names, or None for all."""
    if value in (None, "all"):
        return None
    values = value if isinstance(value, list) else [value]
    return tuple(dtype(str(v)).name for v in values)


def _expectation(value: Any, reference: OpReference, path: str, problems: Problems) -> Expectation | None:
    if value is None:
        return None
    if not isinstance(value, LineDict) or len(value) != 1:
        raise ValueProblem("'expect' takes exactly one of {output: ...} or {error: RULE}")
    check_keys(value, EXPECT_KEYS, path, problems)
    error = value.get("error")
    if "error" in value and error not in reference.all_rules:
        # An unknown rule would be taken as the case's verdict whenever the reference finds the
        # case valid, and ignored whenever it finds it invalid: a typo must not decide either.
        problems.add(path, value.key_lines.get("error", value.line),
                     f"'error: {error}' names no rule of {reference.op}'s reference{_did_you_mean(error, reference.all_rules)}")
    if "outputs" in value and not isinstance(value["outputs"], list):
        raise ValueProblem("'expect: {outputs: ...}' takes a list, one value per output of the op")
    outputs = value["outputs"] if "outputs" in value else None if value.get("output") is None else [value["output"]]
    return Expectation(outputs=None if outputs is None else tuple(outputs), error=error)


def _did_you_mean(value: Any, allowed: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(value), allowed, n=1)
    return f" (did you mean '{close[0]}'?)" if close else f" (allowed: {', '.join(allowed)})"


def _validate_by_expanding(case: Case, path: str, problems: Problems, expanded: Callable[[OpVersion], bool],
                           budget: Budget) -> list[Example]:
    try:
        _check_dtypes_exist_somewhere(case, applicable_versions(case))
        made = Made(budget)  # shared by the versions the case expands to
        return [e for version in applicable_versions(case) if expanded(version) for e in expand(case, version, made)]
    except (ValueProblem, ConformError) as error:
        problems.add(path, case.line, f"case '{case.name}': {getattr(error, 'message', error)}")
        return []


def applicable_versions(case: Case) -> list[OpVersion]:
    all_versions = versions(case.op)
    return [v for v in all_versions if case.versions is None or v.since_version in case.versions]


def expand(case: Case, version: OpVersion, made: Made | None = None) -> list[Example]:
    """One Example per type binding of this version; raises ValueProblem on values that do not fit.

    Dtypes a case lists apply in each version that allows them; a case that expects
    `dtype-not-allowed` applies exactly the dtypes it lists. Calls given the same `made` share the
    arrays of the values the case writes.
    """
    reference = for_op(case.op)
    bindings = type_bindings(version, reference.dtype_param, case.dtypes, dict(case.types))
    if not _expects_wrong_type(case):
        bindings = [b for b in bindings if all(name in version.allowed(p) for p, name in b.items())]
    made = Made(Budget()) if made is None else made
    examples = {}
    for binding in bindings:  # bindings that differ only in a type the node leaves out make one case
        example = _example(case, version, reference, binding, made)
        examples.setdefault(example.id, example)
    return list(examples.values())


def _expects_wrong_type(case: Case) -> bool:
    return case.expect is not None and case.expect.error == DTYPE_NOT_ALLOWED


def _check_dtypes_exist_somewhere(case: Case, versions_: list[OpVersion]) -> None:
    reference = for_op(case.op)
    listed = [(reference.dtype_param, case.dtypes)] + [(p, names) for p, names in case.types]
    for param, names in listed:
        # The dtype axis by each version's name for it (DequantizeLinear-10's T is later versions' T1).
        named = {v: reference.dtype_param_of(v) if param == reference.dtype_param else param for v in versions_}
        for name in names or ():
            if not any(name in v.allowed(named[v]) for v in versions_ if named[v] in v.constraints):
                allowed = sorted({d for v in versions_ if named[v] in v.constraints for d in v.allowed(named[v])})
                if not _expects_wrong_type(case):
                    raise ValueProblem(
                        f"no version it applies to allows {param}={name} (allowed: {', '.join(allowed)}); "
                        "fix 'dtypes', or expect {error: dtype-not-allowed}"
                    )


def _example(case: Case, version: OpVersion, reference: OpReference, binding: dict[str, str], made: Made) -> Example:
    seed = stable_seed(version.label, case.name, *binding.values())
    inputs: dict[str, Any] = {}
    attributes: dict[str, Any] = {}
    for name, written in case.inputs:
        if version.input(name) is None and version.attribute(name) is None:
            raise ValueProblem(f"'{name}' is neither an input nor an attribute of {version.label}")
        if version.input(name) is None and name not in reference.attribute_params and not is_typed_attribute(version, name):
            raise ValueProblem(f"'{name}' is an attribute of {version.label} that is not a number or a list of numbers: "
                               "write it under 'attributes'")
        if written is None:
            _place(version, name, None, inputs, attributes)
            continue
        array = _typed(written, version, name, binding, reference, seed, f"input '{name}'", made)
        if name in reference.shape_inputs:
            _checked(lambda: check_shape([int(d) for d in array.reshape(-1)], "the shape"), f"input '{name}'")
        _place(version, name, array, inputs, attributes)
    for name, written in case.attributes:
        if version.attribute(name) is None:
            raise ValueProblem(f"'{name}' is not an attribute of {version.label}")
        attributes[name] = _attribute(version, name, written, binding, reference, seed, made)
    for name, value in reference.attributes_of_binding(version, binding).items():
        _check_agrees(name, attributes.setdefault(name, value), value, binding)
    _check_required_given(version, inputs, attributes)
    expect = case.expect or Expectation()
    dtype_param = reference.dtype_param_of(version)
    example = Example(
        version=version, name=case.name, types=bound_types(version, binding, inputs, dtype_param), inputs=inputs,
        attributes=attributes, source=case.source, dtype_param=dtype_param, spec=case.spec,
        expect_error=expect.error, outputs=asked_outputs(version, case.outputs),
    )
    if expect.outputs is not None:
        example = dataclasses.replace(example, expect_outputs=_stated_outputs(expect.outputs, example, seed, made))
    problem = reference.problem_with_binding(example)
    if problem is not None:
        raise ValueProblem(problem)
    return example


def _stated_outputs(written: tuple, example: Example, seed: int, made: Made) -> tuple:
    """The outputs a case states, each read into its output's dtype."""
    names = [name for name in example.node_outputs if name]
    if len(written) != len(names):
        raise ValueProblem(f"'expect' states {len(written)} outputs; the case asks {example.version.label} for {len(names)} "
                           f"({', '.join(names)})")
    outputs = []
    for index, (value, out_name) in enumerate(zip(written, example.output_dtypes)):
        out_dtype = dtype(out_name)
        what = "expected output" if len(written) == 1 else f"expected output '{names[index]}'"
        outputs.append(_checked(lambda: to_array(value, out_dtype, seed), what))
        made.budget.spend(outputs[-1])
    return tuple(outputs)


def _check_agrees(name: str, written: Any, fixed: Any, binding: dict[str, str]) -> None:
    """A written attribute that the type binding also fixes must say the same."""
    same = (written.lower() == fixed.lower() if isinstance(written, str) and isinstance(fixed, str)
            else repr(written) == repr(fixed))
    if not same:
        types = ", ".join(f"{param}={name_}" for param, name_ in binding.items())
        raise ValueProblem(f"'{name}' is {written!r}, but the case's types ({types}) make it {fixed!r}: "
                           f"leave '{name}' out, and the types fill it in")


def _check_required_given(version: OpVersion, inputs: dict, attributes: dict) -> None:
    """Every input the schema does not mark optional, and every required attribute, has a value."""
    missing = [i.name for i in version.inputs if not i.optional and inputs.get(i.name) is None]
    missing += [a.name for a in version.attributes if a.required and a.name not in attributes]
    if missing:
        raise ValueProblem(f"{version.label} needs {', '.join(repr(m) for m in missing)}: give it under 'inputs'")


def _place(version: OpVersion, name: str, array: Any, inputs: dict, attributes: dict) -> None:
    if version.input(name) is not None:
        inputs[name] = array
    elif array is not None:
        attributes[name] = attribute_value(version, name, array)


def _typed(written: Any, version: OpVersion, name: str, binding: dict, reference: OpReference, seed: int, what: str,
           made: Made):
    """The array of a value the case writes, made once per dtype (and per seed for random values);
    read-only, as the examples of several versions share it."""
    dt = dtype(value_dtype(version, name, binding, reference.attribute_params))
    key = (id(written), dt.name, seed if isinstance(written, dict) and "random" in written else None)
    if key not in made:
        array = _checked(lambda: to_array(written, dt, seed), what)
        made.budget.spend(array)
        array.flags.writeable = False
        made[key] = array
    return made[key]


def _checked(make, what: str):
    try:
        return make()
    except ValueProblem as problem:
        raise ValueProblem(f"{what}: {problem}") from None


def _attribute(version: OpVersion, name: str, written: Any, binding: dict, reference: OpReference, seed: int,
               made: Made) -> Any:
    if is_sparse_attribute(version, name):
        return _sparse(version, name, written, binding, reference, seed, made)
    if name not in reference.attribute_params and not is_typed_attribute(version, name):
        return written
    array = _typed(written, version, name, binding, reference, seed, f"attribute '{name}'", made)
    if name in reference.attribute_params:
        # A bare number is a one-element 1-D tensor (ConstantOfShape's `value`: "a one-element
        # tensor"); a generator states its shape, `{shape: [], fill: 3}` a scalar (Constant's).
        return array.reshape(1) if array.ndim == 0 and not isinstance(written, dict) else array
    return attribute_value(version, name, array)  # as the same value written under 'inputs' is


SPARSE_KEYS = ("values", "indices", "dims")


def _sparse(version: OpVersion, name: str, written: Any, binding: dict, reference: OpReference, seed: int,
            made: Made) -> SparseValue:
    """A SPARSE_TENSOR attribute written as {values, indices, dims}: `values` read as the attribute's
    type is (its type parameter's dtype), `indices` as int64, `dims` a list of whole numbers."""
    if not isinstance(written, dict) or sorted(written) != sorted(SPARSE_KEYS):
        raise ValueProblem(f"attribute '{name}' is a SPARSE_TENSOR of {version.label}: write it as a mapping "
                           f"{{values: [...], indices: [...], dims: [...]}}, not {written!r}")
    dims = written["dims"]
    if not isinstance(dims, list) or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise ValueProblem(f"attribute '{name}': 'dims' takes a list of whole numbers, not {dims!r}")
    values = _typed(written["values"], version, name, binding, reference, seed, f"attribute '{name}' values", made)
    indices = _checked(lambda: to_array(written["indices"], dtype("int64"), seed), f"attribute '{name}' indices")
    made.budget.spend(indices)
    return SparseValue(values, indices, tuple(dims))


def load_examples(op: str, roots: Iterable[Path] = (BUILTIN_CASES,), since_versions: Iterable[int] | None = None) -> list[Example]:
    """Every Example of every case file for `op` (in `since_versions`, when given), in file order;
    every file is read and checked, and the cases of `op` in those versions expanded (`load_files`)."""
    wanted = None if since_versions is None else frozenset(since_versions)
    expanded = lambda v: v.op == op and (wanted is None or v.since_version in wanted)
    return [
        example
        for case_file in load_files(case_files(roots), expanded, ops=(op,))
        if case_file.op == op
        for case in case_file.cases
        for example in case_file.examples[case.name]
    ]


def count_cases(roots: Iterable[Path] = (BUILTIN_CASES,), ops: Iterable[str] | None = None) -> dict[tuple[str, int], int]:
    """How many cases apply to each (op, since-version): of every op, or of `ops` only (the files
    of other ops left unread, as `load_files` leaves them)."""
    wanted = None if ops is None else tuple(ops)
    counts: dict[tuple[str, int], int] = {}
    for path in case_files(roots):
        for key in _versions_of_each_case(path, wanted):
            if wanted is None or key[0] in wanted:
                counts[key] = counts.get(key, 0) + 1
    return counts


# By a file's (path, device, inode, size, mtime): what `count_cases` found in it. Every case is
# expanded to check it (the built-in files: ~74,000 examples, 7 s): done once a process for
# a file not changed since.
_COUNTED: dict[tuple, list[tuple[str, int]]] = {}


def _versions_of_each_case(path: Path, ops: tuple[str, ...] | None = None) -> list[tuple[str, int]]:
    """(op, since-version) for each case of the file and each version it applies to; none for a
    file of an op not among `ops` (when given), which is left unread."""
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    except OSError:
        key = None  # loading it tells why it cannot be read
    if key in _COUNTED:
        return _COUNTED[key]
    # A file at a time: the parsed files of every op together are ~100 MB, which a report that
    # tells its coverage would add to a whole run's peak.
    loaded = load_files([path], ops=ops)
    found = [(case.op, version.since_version) for case_file in loaded
             for case in case_file.cases for version in applicable_versions(case)]
    if key is not None and (ops is None or loaded):  # a file left unread says nothing of its cases
        _COUNTED[key] = found
    return found


__all__ = ["load_files", "load_by_op", "load_examples", "count_cases", "case_files", "expand", "canonical_name", "BUILTIN_CASES"]
