"""YAML case files -> validated Cases -> Examples, with every problem reported as FILE:LINE.

A case file is data only: it is read with a SafeLoader subclass that records line numbers and
refuses duplicate keys; nothing in it is evaluated. The format:

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
        expect: {output: [[...]]}          # or {error: steps-zero}; default: the reference decides
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml

from .case import Case, Example, Expectation, attribute_value, name_clash, slug, stable_seed, type_bindings, value_dtype
from .dtypes import canonical_name, dtype
from .errors import CaseFileError, ConformError
from .reference import for_op
from .reference.base import DTYPE_NOT_ALLOWED, OpReference
from .registry import OpVersion, versions
from .values import ValueProblem, to_array

FILE_KEYS = ("op", "defaults", "cases")
CASE_KEYS = ("name", "spec", "versions", "dtypes", "types", "inputs", "attributes", "expect")
EXPECT_KEYS = ("output", "error")
BUILTIN_CASES = Path(__file__).resolve().parent.parent / "cases"


class LineDict(dict):
    """A mapping that remembers the line it starts on and the line of each key."""

    line: int = 0
    key_lines: dict[str, int]


class _LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """SafeLoader (libyaml's parser where PyYAML has it: 7x faster) that records lines and rejects
    duplicate keys; still constructs plain data only."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    mapping = LineDict()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in mapping:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key '{key}'", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=True)
        mapping.key_lines[key] = key_node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


@dataclass(frozen=True)
class CaseFile:
    """One loaded file: its path for messages, its cases, and their Examples (expanded once)."""

    path: str
    op: str
    cases: tuple[Case, ...]
    examples: dict[str, list[Example]] = field(default_factory=dict)  # case name -> examples


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


def load_files(paths: Iterable[Path], expanded: Callable[[OpVersion], bool] = lambda version: True) -> list[CaseFile]:
    """Load and validate every file; raises one CaseFileError listing every problem found.

    Every file is read and every case's structure checked. A case's values are checked by expanding
    it into Examples, in each of its versions that `expanded` picks: a run expands the versions it
    runs (the values of the others are checked when they run, and by `conform list`).
    """
    problems = Problems()
    loaded = [f for f in (_load_file(p, problems) for p in paths) if f is not None]
    names: dict[str, dict[str, tuple[str, str]]] = {}  # by op, by slug: each name and where it is
    for case_file in loaded:
        for case in case_file.cases:
            taken = names.setdefault(case.op, {})
            clash = name_clash(case.name, taken)
            if clash is not None:
                problems.add(case_file.path, case.line, clash)
            taken.setdefault(slug(case.name), (case.name, f"{case_file.path}:{case.line}"))
    for case_file in loaded:
        for case in case_file.cases:
            case_file.examples[case.name] = _validate_by_expanding(case, case_file.path, problems, expanded)
    problems.raise_if_any()
    return loaded


def read_yaml(path: Path, problems: Problems) -> Any:
    """The document in a YAML file (mappings as LineDicts), or None with the problem recorded."""
    shown = display_path(path)
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_LineLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problems.add(shown, mark.line + 1 if mark else None, f"invalid YAML: {error.problem or error.context}")
    except yaml.reader.ReaderError as error:
        problems.add(shown, None, f"not a text file: character #x{error.character:04x} at position {error.position} "
                                  "(a case file is UTF-8 text)")
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as error:
        problems.add(shown, None, f"cannot read: {error}")
    return None


def _load_file(path: Path, problems: Problems) -> CaseFile | None:
    shown = display_path(path)
    count = len(problems.items)
    document = read_yaml(path, problems)
    if len(problems.items) > count:
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
            expect=_expectation(merged.get("expect"), reference, path, problems),
            spec=str(merged.get("spec") or ""),
            line=entry.line,
        )
    except (ConformError, ValueProblem, AttributeError, TypeError) as error:
        problems.add(path, entry.line, f"case '{name}': {getattr(error, 'message', error)}")
        return None


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
    return Expectation(output=value.get("output"), error=error)


def _did_you_mean(value: Any, allowed: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(value), allowed, n=1)
    return f" (did you mean '{close[0]}'?)" if close else f" (allowed: {', '.join(allowed)})"


def _validate_by_expanding(case: Case, path: str, problems: Problems, expanded: Callable[[OpVersion], bool]) -> list[Example]:
    try:
        _check_dtypes_exist_somewhere(case, applicable_versions(case))
        made: dict[tuple, Any] = {}  # one array per written value and dtype, shared by the versions the case expands to
        return [e for version in applicable_versions(case) if expanded(version) for e in expand(case, version, made)]
    except (ValueProblem, ConformError) as error:
        problems.add(path, case.line, f"case '{case.name}': {getattr(error, 'message', error)}")
        return []


def applicable_versions(case: Case) -> list[OpVersion]:
    all_versions = versions(case.op)
    return [v for v in all_versions if case.versions is None or v.since_version in case.versions]


def expand(case: Case, version: OpVersion, made: dict[tuple, Any] | None = None) -> list[Example]:
    """One Example per type binding of this version; raises ValueProblem on values that do not fit.

    Dtypes a case lists apply in each version that allows them; a case that expects
    `dtype-not-allowed` applies exactly the dtypes it lists. Calls given the same `made` share the
    arrays of the values the case writes.
    """
    reference = for_op(case.op)
    bindings = type_bindings(version, reference.dtype_param, case.dtypes, dict(case.types))
    if not _expects_wrong_type(case):
        bindings = [b for b in bindings if all(name in version.allowed(p) for p, name in b.items())]
    return [_example(case, version, reference, b, {} if made is None else made) for b in bindings]


def _expects_wrong_type(case: Case) -> bool:
    return case.expect is not None and case.expect.error == DTYPE_NOT_ALLOWED


def _check_dtypes_exist_somewhere(case: Case, versions_: list[OpVersion]) -> None:
    reference = for_op(case.op)
    listed = [(reference.dtype_param, case.dtypes)] + [(p, names) for p, names in case.types]
    for param, names in listed:
        for name in names or ():
            if not any(name in v.allowed(param) for v in versions_ if param in v.constraints):
                allowed = sorted({d for v in versions_ if param in v.constraints for d in v.allowed(param)})
                if not _expects_wrong_type(case):
                    raise ValueProblem(
                        f"no version it applies to allows {param}={name} (allowed: {', '.join(allowed)}); "
                        "fix 'dtypes', or expect {error: dtype-not-allowed}"
                    )


def _example(case: Case, version: OpVersion, reference: OpReference, binding: dict[str, str], made: dict[tuple, Any]) -> Example:
    seed = stable_seed(version.label, case.name, *binding.values())
    inputs: dict[str, Any] = {}
    attributes: dict[str, Any] = {}
    for name, written in case.inputs:
        if version.input(name) is None and version.attribute(name) is None:
            raise ValueProblem(f"'{name}' is neither an input nor an attribute of {version.label}")
        if written is None:
            _place(version, name, None, inputs, attributes)
            continue
        array = _typed(written, version, name, binding, reference, seed, f"input '{name}'", made)
        _place(version, name, array, inputs, attributes)
    for name, written in case.attributes:
        if version.attribute(name) is None:
            raise ValueProblem(f"'{name}' is not an attribute of {version.label}")
        attributes[name] = _attribute(version, name, written, binding, reference, seed, made)
    _check_required_given(version, inputs, attributes)
    expect = case.expect or Expectation()
    output = None
    if expect.output is not None:
        out_dtype = dtype(binding[reference.output_param])
        output = _checked(lambda: to_array(expect.output, out_dtype, seed), "expected output")
    return Example(
        version=version, name=case.name, types=binding, inputs=inputs, attributes=attributes,
        source=case.source, dtype_param=reference.dtype_param, spec=case.spec,
        expect_error=expect.error, expect_output=output,
    )


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
           made: dict[tuple, Any]):
    """The array of a value the case writes, made once per dtype (and per seed for random values);
    read-only, as the examples of several versions share it."""
    dt = dtype(value_dtype(version, name, binding, reference.attribute_params))
    key = (id(written), dt.name, seed if isinstance(written, dict) and "random" in written else None)
    if key not in made:
        made[key] = _checked(lambda: to_array(written, dt, seed), what)
        made[key].flags.writeable = False
    return made[key]


def _checked(make, what: str):
    try:
        return make()
    except ValueProblem as problem:
        raise ValueProblem(f"{what}: {problem}") from None


def _attribute(version: OpVersion, name: str, written: Any, binding: dict, reference: OpReference, seed: int,
               made: dict[tuple, Any]) -> Any:
    if name in reference.attribute_params:
        array = _typed(written, version, name, binding, reference, seed, f"attribute '{name}'", made)
        return array.reshape(1) if array.ndim == 0 else array
    return written


def load_examples(op: str, roots: Iterable[Path] = (BUILTIN_CASES,), since_versions: Iterable[int] | None = None) -> list[Example]:
    """Every Example of every case file for `op` (in `since_versions`, when given), in file order;
    every file is read and checked, and the cases of `op` in those versions expanded (`load_files`)."""
    wanted = None if since_versions is None else frozenset(since_versions)
    expanded = lambda v: v.op == op and (wanted is None or v.since_version in wanted)
    return [
        example
        for case_file in load_files(case_files(roots), expanded)
        if case_file.op == op
        for case in case_file.cases
        for example in case_file.examples[case.name]
    ]


def count_cases(roots: Iterable[Path] = (BUILTIN_CASES,)) -> dict[tuple[str, int], int]:
    """How many cases apply to each (op, since-version)."""
    counts: dict[tuple[str, int], int] = {}
    for case_file in load_files(case_files(roots)):
        for case in case_file.cases:
            for version in applicable_versions(case):
                key = (case.op, version.since_version)
                counts[key] = counts.get(key, 0) + 1
    return counts


__all__ = ["load_files", "load_examples", "count_cases", "case_files", "expand", "canonical_name", "BUILTIN_CASES"]
