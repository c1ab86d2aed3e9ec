"""Case files from strangers: each small file that made the loader hang, exhaust memory or end in a
traceback is one problem naming its file and line, found soon and in bounded memory."""

import json
import os
import re
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from conformance import casefile
from conformance.errors import CaseFileError

ROOT = Path(__file__).resolve().parent.parent


def slice_case(inputs: str, *more: str) -> str:
    """A Slice-13 case whose inputs (and any lines after them) are `inputs` and `more`: line 7 is
    the first of them, and a problem with a value is reported at the case's line, 3."""
    return "\n".join(["op: Slice", "cases:", "  - name: attack", "    versions: [13]", "    dtypes: [float]",
                      "    types: {Tind: [int64]}", f"    inputs: {inputs}", *more]) + "\n"


def slice_1_case(attributes: str) -> str:
    """A Slice-1 case (where starts, ends and axes are attributes) with these attributes."""
    return slice_case("{data: [1, 2]}", f"    attributes: {attributes}").replace("[13]", "[1]").replace("    types: {Tind: [int64]}\n", "")


def nested(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


# Nine lists of nine aliases to the list before: a billion values in a few hundred bytes.
LAUGHS = "[&a [1, 1, 1, 1, 1, 1, 1, 1, 1], " + ", ".join(
    f"&{name} [{', '.join([f'*{before}'] * 9)}]" for before, name in zip("abcdefgh", "bcdefghi")) + "]"
# Eight cases of the largest generator, each in six dtypes: 3.8 GB of arrays in 800 bytes.
EVERY_DTYPE = "".join(["op: Slice\n", "defaults: {versions: [13], types: {Tind: [int64]}, ",
                       "dtypes: [double, int64, uint64, complex128, float, int32]}\n", "cases:\n"] +
                      [f"  - {{name: c{i}, inputs: {{data: {{shape: [10000000], fill: 1}}, starts: [0], ends: [1]}}}}\n" for i in range(8)])
CONSTANT_OF_SHAPE = "op: ConstantOfShape\ncases:\n  - name: attack\n    dtypes: [float]\n    inputs: {{input: {}}}\n    attributes: {{value: 1}}\n"

# name: (file text, the line of its problem, words of its message)
ATTACKS = {
    "laughs_in_data": (slice_case(f"{{data: {LAUGHS}, starts: [0], ends: [1]}}"), 7, "anchors and aliases (&name, *name) are not allowed"),
    "laughs_in_spec": (slice_case("{data: [1], starts: [0], ends: [1]}", f"    spec: {LAUGHS}"), 8, "anchors and aliases"),
    "merge_of_an_alias": (slice_case("{data: [1], starts: [0], ends: [1]}", "    expect: &e {error: steps-zero}",
                                     "    attributes: {<<: *e}"), 8, "anchors and aliases"),
    "exponent_of_a_billion": (slice_case("{data: [1, 2], starts: [1e999999999], ends: [1]}"), 3, "1e999999999 does not fit int64"),
    "exponent_of_5000_as_int": (slice_case("{data: [1, 2], starts: [1e5000], ends: [1]}"), 3, "1e5000 does not fit int64"),
    "exponent_of_5000_as_float": (slice_case("{data: [1e5000], starts: [0], ends: [1]}"), 3, "1e5000 does not fit float"),
    "yaml_float_beyond_double": (slice_case("{data: [1.0e+400], starts: [0], ends: [1]}"), 7, "1.0e+400 is beyond the range of every float"),
    "integer_of_5000_digits": (slice_case(f"{{data: [1], starts: [{'9' * 5000}], ends: [1]}}"), 7,
                               "a number written with 5,000 characters is too long"),
    "nested_65_deep": (slice_case(f"{{data: {nested(65)}, starts: [0], ends: [1]}}"), 7, "nested more than 32 levels deep"),
    # libyaml meets its own limit (1,000 levels) as it looks ahead, before the events reach 33 levels.
    "nested_999_deep": (slice_case(f"{{data: {nested(999)}, starts: [0], ends: [1]}}"), 7, "nest"),
    "nested_10000_deep": (slice_case(f"{{data: {nested(10000)}, starts: [0], ends: [1]}}"), 7, "nest"),
    "shape_of_true": (slice_case("{data: {shape: [true], fill: 1}, starts: [0], ends: [1]}"), 3, "a list of non-negative integers"),
    "shape_of_int64_max_and_0": (slice_case("{data: {shape: [9223372036854775807, 0], fill: 1}, starts: [0], ends: [1]}"), 3,
                                 "[9223372036854775807, 0] has a 0 beside dims that multiply to more than 2,147,483,648"),
    "shape_of_0_and_2_to_64": (slice_case("{data: {shape: [0, 18446744073709551616], fill: 1}, starts: [0], ends: [1]}"), 3,
                               "has a 0 beside dims"),
    "shape_of_65_dims": (slice_case(f"{{data: {{shape: [{', '.join(['1'] * 65)}], fill: 1}}, starts: [0], ends: [1]}}"), 3,
                         "a generator's shape has 65 dims: conform makes tensors of at most 32"),
    "shape_input_of_int64_max_and_0": (CONSTANT_OF_SHAPE.format("[9223372036854775807, 0]"), 3,
                                       "input 'input': the shape [9223372036854775807, 0] has a 0 beside dims"),
    "shape_input_of_65_dims": (CONSTANT_OF_SHAPE.format(f"[{', '.join(['1'] * 65)}]"), 3, "the shape has 65 dims"),
    "tag_with_no_value": (slice_case("{data: [!!bool maybe], starts: [0], ends: [1]}"), 7, "tags (!!str, !!python/..., !name) are not allowed"),
    "date_that_is_no_date": (slice_case("{data: [2001-13-45], starts: [0], ends: [1]}"), 7, "cannot read '2001-13-45': month must be in 1..12"),
    "list_as_a_key": (slice_case("{data: [1], starts: [0], ends: [1], ? [1] : 2}"), 7, "a key must be a plain value"),
    "random_low_above_high": (slice_case("{data: {shape: [2], random: [5, 1]}, starts: [0], ends: [1]}"), 3,
                              "'random' takes [low, high] with low <= high, not [5.0, 1.0]"),
    "random_wider_than_a_double": (slice_case("{data: {shape: [2], random: [-max, max]}, starts: [0], ends: [1]}").replace("[float]", "[double]"),
                                   3, "is too wide a range to draw from"),
    "random_strings": (slice_case("{data: {shape: [2], random: [0, 1]}, starts: [0], ends: [1]}").replace("[float]", "[string]"), 3,
                       "'random' draws numbers, which string does not hold"),
    "generators_in_every_dtype": (EVERY_DTYPE, 4, "case 'c0': with this case, the values the case files write come to more than "
                                                  "256 MiB of arrays, the most conform makes in one load"),
    "attribute_of_a_mapping": (slice_1_case("{starts: [0], ends: [1], axes: {a: 1}}"), 3, "attribute 'axes': unknown generator key(s) ['a']"),
    "attribute_of_bools": (slice_1_case("{starts: [0], ends: [1], axes: [true]}"), 3, "attribute 'axes': True is not an integer"),
}
# The attacks on what the parser sees, again on PyYAML's own parser (where libyaml is missing).
PURE_PYTHON = ("laughs_in_data", "integer_of_5000_digits", "nested_999_deep", "nested_10000_deep", "tag_with_no_value")

# Loads each file given (LOADER:PATH, LOADER c or python) in this process's own memory limit,
# printing one JSON line for each: its problems, or what escaped, and the seconds it took.
LOAD_EACH = """
import json, os, resource, sys, time
from pathlib import Path
import yaml
from conformance import casefile
from conformance.errors import CaseFileError
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]),) * 2)
libyaml = casefile._LineLoader
for argument in sys.argv[2:]:
    loader, path = argument.split(":", 1)
    casefile._LineLoader = libyaml if loader == "c" else casefile.line_loader(yaml.SafeLoader)
    started = time.perf_counter()
    try:
        casefile.load_files([Path(path)])
        outcome = {"loaded": True}
    except CaseFileError as error:
        outcome = {"problems": error.problems}
    except BaseException as error:
        outcome = {"escaped": (type(error).__name__ + ": " + str(error))[:300]}
    print(json.dumps({"argument": argument, "seconds": time.perf_counter() - started, **outcome}), flush=True)
"""
HEADROOM = 512 << 20  # bytes of address space the loads may add to what the imports took


def address_space_after_imports() -> int:
    probe = "import yaml, conformance.casefile, os; print(int(open('/proc/self/statm').read().split()[0]) * os.sysconf('SC_PAGE_SIZE'))"
    return int(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT).stdout)


def load_each(arguments: list[str], timeout: float = 60) -> dict[str, dict]:
    """LOAD_EACH's outcome for each argument; an argument it did not finish has none."""
    limit = address_space_after_imports() + HEADROOM
    try:
        stdout = subprocess.run([sys.executable, "-c", LOAD_EACH, str(limit), *arguments], capture_output=True, text=True,
                                timeout=timeout, cwd=ROOT).stdout
    except subprocess.TimeoutExpired as stopped:  # what it printed before: the argument after is the one that hangs
        stdout = stopped.stdout.decode() if isinstance(stopped.stdout, bytes) else stopped.stdout or ""
    return {line["argument"]: line for line in map(json.loads, stdout.splitlines())}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, dict]:
    """Each attack loaded once, all in one process with a time and memory limit."""
    if not Path("/proc/self/statm").exists():
        pytest.skip("measures memory through /proc")
    folder = tmp_path_factory.mktemp("attacks")
    arguments = []
    for name, (text, _, _) in ATTACKS.items():
        (folder / f"{name}.yaml").write_text(text)
        arguments += [f"c:{folder / name}.yaml"] + ([f"python:{folder / name}.yaml"] if name in PURE_PYTHON else [])
    os.mkfifo(folder / "pipe.yaml")  # opened to read, a FIFO waits for a writer that never comes
    arguments += [f"c:{folder / 'pipe.yaml'}"] + (["c:/dev/zero"] if Path("/dev/zero").exists() else [])
    return {argument.split(":")[0] + ":" + Path(argument).stem: outcome for argument, outcome in load_each(arguments).items()}


@pytest.mark.parametrize("name", list(ATTACKS) + [f"{name}@python" for name in PURE_PYTHON])
def test_an_attack_is_one_problem_at_its_line_found_soon_in_bounded_memory(outcomes, name):
    name, _, parser = name.partition("@")
    _, line, words = ATTACKS[name]
    outcome = outcomes.get(f"{'python' if parser else 'c'}:{name}")
    assert outcome is not None, "the load did not finish (a hang, or killed)"
    assert "escaped" not in outcome and "loaded" not in outcome, outcome
    [(where, found_line, message)] = outcome["problems"]
    assert where.endswith(f"{name}.yaml") and found_line == line and words in message, outcome["problems"]
    assert outcome["seconds"] < 5, f"{outcome['seconds']:.1f} s"


def problems_of(path: Path) -> list[tuple[str, int | None, str]]:
    with pytest.raises(CaseFileError) as caught:
        casefile.load_files([path])
    return caught.value.problems


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(outcomes):
    [(where, line, message)] = outcomes["c:pipe"]["problems"]
    assert where.endswith("pipe.yaml") and line is None
    assert message == "case files must be regular files, and this is a named pipe (FIFO)"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_is_refused_unread(outcomes):
    [(where, line, message)] = outcomes["c:zero"]["problems"]
    assert where == "/dev/zero" and line is None and message == "case files must be regular files, and this is a character device"


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path):
    big = tmp_path / "big.yaml"
    with big.open("wb") as file:  # sparse: 50 MB that take no room
        file.truncate(50_000_000)
    [(where, line, message)] = problems_of(big)
    assert where.endswith("big.yaml") and line is None
    assert message == "50,000,000 bytes: larger than case files may be (at most 1 MiB, 1,048,576 bytes)"
    at_limit = tmp_path / "at_limit.yaml"
    at_limit.write_text(slice_case("{data: [1, 2], starts: [0], ends: [1]}").ljust(casefile.MAX_FILE_BYTES - 1) + "\n")
    assert [f.op for f in casefile.load_files([at_limit])] == ["Slice"]


def with_data(data: str) -> str:
    return slice_case(f"{{data: {data}, starts: [0], ends: [1]}}").replace("[float]", "[double]")


# (what a limit lets load, and just past it: what it refuses, and words of the refusal)
LIMITS = [
    (with_data(nested(28)), with_data(nested(29)), "nested more than 32 levels deep"),  # with the file's own 4 levels
    (with_data("{shape: [0, 2147483648], fill: 1}"), with_data("{shape: [0, 2147483649], fill: 1}"), "has a 0 beside dims"),
    (with_data(f"{{shape: [{', '.join(['1'] * 32)}], fill: 1}}"), with_data(f"{{shape: [{', '.join(['1'] * 33)}], fill: 1}}"),
     "has 33 dims"),
    (with_data("[1.7976931348623157e+308, -.inf]"), with_data("[1.8e+308]"), "1.8e+308 is beyond the range of every float"),
    (with_data(f"[{'0' * 99}1]"), with_data(f"[{'0' * 100}1]"), "a number written with 101 characters is too long"),
]


@pytest.mark.parametrize("allowed, refused, words", LIMITS, ids=["depth", "empty_shape", "rank", "float_range", "number_length"])
def test_each_limit_lets_load_what_is_within_it_and_refuses_what_is_just_past(tmp_path, allowed, refused, words):
    path = tmp_path / "limit.yaml"
    path.write_text(allowed)
    [loaded] = casefile.load_files([path])
    assert loaded.examples["attack"]
    path.write_text(refused)
    [(_, _, message)] = problems_of(path)
    assert words in message


# Where a shipped case file writes a value, each of these: every load ends in valid cases or in
# problems naming the file and a line. (What hung in C, where no alarm stops it, is among the
# attacks above, loaded in a process of their own.)
HOSTILE = ["true", "null", "-1e5000", "1.0e+400", "99999999999999999999", ".nan", "[]", "[[]]", "{}", "[true]", "[1, [2]]",
           "'x'", "2001-13-45", "!!bool maybe", "[9223372036854775807, 0]", "{shape: [true], fill: 1}", "{shape: 2, fill: 1}",
           "{shape: [2], fill: [1]}", "{shape: [2], random: [nan, 1]}", "{shape: [2], random: [5, 1]}", "{a: 1}"]
# (file, what it writes, where a hostile value goes instead): an input, a shape input, a tensor
# attribute, an input older versions take as an attribute, an INTS attribute.
MUTATED = [("slice/examples.yaml", "[[1, 2, 3, 4], [5, 6, 7, 8]]", "{}"), ("constant_of_shape/invalid.yaml", "[2, -1]", "{}"),
           ("constant_of_shape/invalid.yaml", "{value: 1}", "{{value: {}}}"), ("clip/bounds.yaml", "min: 3", "min: {}"),
           ("clip/bounds.yaml", "consumed_inputs: [0]", "consumed_inputs: {}")]


@contextmanager
def time_limit(seconds: int):
    """Python code that runs past `seconds` raises TimeoutError."""
    def stop(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("file, written, instead", MUTATED)
def test_hostile_values_where_a_shipped_file_writes_one_end_in_problems_with_lines(tmp_path, file, written, instead):
    text = (ROOT / "cases" / file).read_text()
    assert written in text
    for number, hostile in enumerate(HOSTILE):
        path = tmp_path / f"mutated_{number}.yaml"
        path.write_text(text.replace(written, instead.format(hostile), 1))
        try:
            with time_limit(10):
                casefile.load_files([path])
        except CaseFileError as error:
            assert error.problems and all(where.endswith(path.name) and (line is None or line >= 1) for where, line, _ in error.problems)


def test_the_case_that_overspends_a_load_is_its_one_problem(tmp_path, monkeypatch):
    monkeypatch.setattr(casefile, "MAX_LOADED_BYTES", 10_000)
    cases = [f"  - {{name: c{i}, inputs: {{data: {{shape: [500], fill: 1}}, starts: [0], ends: [1]}}}}" for i in range(3)]
    path = tmp_path / "spent.yaml"  # 2,000 bytes of float and 4,000 of double a case: the second passes 10,000
    path.write_text("\n".join(["op: Slice", "defaults: {versions: [13], types: {Tind: [int64]}, dtypes: [float, double]}",
                               "cases:", *cases]) + "\n")
    [(_, line, message)] = problems_of(path)
    assert line == 5 and message.startswith("case 'c1': with this case, the values the case files write come to more than ")


def test_a_case_name_with_a_control_character_is_refused_at_its_line(tmp_path):
    # Printed in every verdict and replay command: "\x1b[31m" coloured the console, "\r\n" split
    # the one-line replay in two.
    path = tmp_path / "names.yaml"
    path.write_text('op: Slice\ncases:\n  - name: "red\\e[31m"\n    inputs: {data: [1, 2], starts: [0], ends: [1]}\n')
    [(_, line, message)] = problems_of(path)
    assert line == 3 and message == ("case name 'red\\x1b[31m' holds a control character (a newline, an escape): "
                                     "write it without")


def test_run_and_list_end_with_the_line_and_exit_2(conform, tmp_path):
    # Attacks that end in a traceback without the limits, not in a hang: a hang would hold the suite.
    (tmp_path / "shape.yaml").write_text(ATTACKS["shape_input_of_int64_max_and_0"][0])
    (tmp_path / "digits.yaml").write_text(ATTACKS["integer_of_5000_digits"][0])
    run = conform("run", "--op", "ConstantOfShape", "--only-cases", "shape.yaml", report=False)
    assert run.code == 2 and re.fullmatch(r"error: shape\.yaml:3: case 'attack': input 'input': the shape "
                                          r"\[9223372036854775807, 0\] has a 0 beside dims [^\n]*\n", run.stderr), run.stderr
    listed = conform("list", "--cases", "digits.yaml")
    assert listed.code == 2 and listed.stderr == ("error: digits.yaml:7: a number written with 5,000 characters is too long: "
                                                  "conform reads numbers of at most 100 (no dtype holds one that needs more)\n")


def test_an_expectations_file_meets_the_same_limits(tmp_path):
    # read_yaml serves the expectations files too; its refusals name the kind of file.
    path = tmp_path / "expectations.yaml"
    path.write_text("known: [&a 1, *a]\n")
    problems = casefile.Problems()
    assert casefile.read_yaml(path, problems, "expectations file") is None
    assert problems.items == [(str(path), 1, "anchors and aliases (&name, *name) are not allowed in expectations files: "
                                             "write each value out")]

