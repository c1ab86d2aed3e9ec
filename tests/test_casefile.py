"""The YAML loader: data only, and every problem named by file and line."""

import textwrap

import pytest

from conformance import casefile
from conformance.errors import CaseFileError, ConformError


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def problems(*paths):
    with pytest.raises(CaseFileError) as caught:
        casefile.load_files(paths)
    return caught.value.problems


GOOD_CASE = """\
op: Slice
cases:
  - name: ok
    versions: [13]
    dtypes: [float]
    inputs: {data: [[1, 2], [3, 4]], starts: [0], ends: [1]}
"""


def test_a_good_file_loads_into_examples(tmp_path):
    [loaded] = casefile.load_files([write(tmp_path, "good.yaml", GOOD_CASE)])
    examples = loaded.examples["ok"]
    assert {e.id for e in examples} == {"Slice-13/ok/float/int32", "Slice-13/ok/float/int64"}
    assert examples[0].source.endswith("good.yaml:3")


def test_counts_follow_a_file_changed_or_broken_since_it_was_last_counted(tmp_path):
    path = write(tmp_path, "good.yaml", GOOD_CASE)
    assert casefile.count_cases([tmp_path]) == {("Slice", 13): 1}
    path.write_text(GOOD_CASE + GOOD_CASE.split("cases:\n")[1].replace("name: ok", "name: also_ok").replace("[13]", "[11, 13]"))
    assert casefile.count_cases([tmp_path]) == {("Slice", 13): 2, ("Slice", 11): 1}
    path.write_text(GOOD_CASE.replace("dtypes:", "dtypez:"))
    with pytest.raises(CaseFileError):
        casefile.count_cases([tmp_path])


def test_counts_of_some_ops_leave_the_other_ops_files_unread_and_agree_with_the_whole_count(tmp_path):
    write(tmp_path, "slice.yaml", GOOD_CASE)
    write(tmp_path, "broken_clip.yaml", "op: Clip\ncases:\n  - {name: x, dtypez: [float]}\n")
    assert casefile.count_cases([tmp_path], ops=["Slice"]) == {("Slice", 13): 1}  # Clip's file is not read
    with pytest.raises(CaseFileError):
        casefile.count_cases([tmp_path])
    (tmp_path / "broken_clip.yaml").write_text("op: Clip\ncases:\n  - {name: x, versions: [13], dtypes: [float], "
                                               "inputs: {input: [1.0]}}\n")
    whole = casefile.count_cases([tmp_path])
    assert whole == {("Slice", 13): 1, ("Clip", 13): 1}
    assert casefile.count_cases([tmp_path], ops=["Clip"]) == {("Clip", 13): 1}  # remembered counts, still of Clip only


def test_a_type_that_only_types_a_left_out_input_is_no_part_of_the_case(tmp_path):
    # Pad-18's Tind types only `axes`: without it, a model read back cannot tell int32 from int64.
    text = """\
    op: Pad
    cases:
      - name: no_axes
        versions: [18]
        dtypes: [float]
        types: {Tind: [int32, int64]}
        inputs: {data: [1.0, 2.0], pads: [1, 0]}
      - name: with_axes
        versions: [18]
        dtypes: [float]
        types: {Tind: [int32, int64]}
        inputs: {data: [1.0, 2.0], pads: [1, 0], axes: [0]}
    """
    [loaded] = casefile.load_files([write(tmp_path, "pad.yaml", text)])
    assert [e.id for e in loaded.examples["no_axes"]] == ["Pad-18/no_axes/float"]
    assert loaded.examples["no_axes"][0].types == {"T": "float"}
    assert {e.id for e in loaded.examples["with_axes"]} == {"Pad-18/with_axes/float/int32", "Pad-18/with_axes/float/int64"}


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = write(tmp_path, "bad.yaml", "op: Slice\ncases:\n  - name: [unclosed\n")
    [(where, line, message)] = problems(path)
    assert where.endswith("bad.yaml") and line == 4 and "invalid YAML" in message


def test_unknown_key_suggests_the_right_one(tmp_path):
    path = write(tmp_path, "typo.yaml", GOOD_CASE.replace("dtypes:", "dtype:"))
    [(_, line, message)] = problems(path)
    assert line == 5 and "unknown key 'dtype'" in message and "did you mean 'dtypes'" in message


@pytest.mark.parametrize("written, hint", [("step-zero", "did you mean 'steps-zero'"), ("nonsense", "allowed: dtype-not-allowed, ")])
def test_an_expected_error_naming_no_rule_of_the_reference_is_refused_at_its_line(tmp_path, written, hint):
    # A rule the reference does not have was taken as the verdict of every binding the reference
    # finds valid, and silently replaced by the reference's own rule for the rest.
    text = GOOD_CASE + f"    expect: {{error: {written}}}\n"
    [(where, line, message)] = problems(write(tmp_path, "rule.yaml", text))
    assert where.endswith("rule.yaml") and line == 7 and f"'error: {written}' names no rule of Slice's reference" in message
    assert hint in message


def test_an_expected_error_naming_a_rule_of_the_reference_loads(tmp_path):
    text = GOOD_CASE.replace("starts: [0], ends: [1]", "starts: [0], ends: [1], steps: [0]") + "    expect: {error: steps-zero}\n"
    [loaded] = casefile.load_files([write(tmp_path, "rule.yaml", text)])
    assert {e.expect_error for e in loaded.examples["ok"]} == {"steps-zero"}


@pytest.mark.parametrize("defaults", ["1", "[float]", "''"])
def test_defaults_that_are_not_a_mapping_are_named_with_their_line(tmp_path, defaults):
    # Found by the mutation fuzz test: `defaults: 1` ended in a TypeError traceback.
    path = write(tmp_path, "defaults.yaml", GOOD_CASE.replace("cases:", f"defaults: {defaults}\ncases:"))
    [(where, line, message)] = problems(path)
    assert where.endswith("defaults.yaml") and line == 2 and "'defaults' must be a mapping" in message


@pytest.mark.parametrize("key", ["inputs", "types", "attributes"])
def test_a_case_mapping_given_as_a_number_or_list_says_what_it_must_be(tmp_path, key):
    # These ended in Python's own words ("'int' object has no attribute 'items'").
    inputs = "    inputs: {data: [[1, 2], [3, 4]], starts: [0], ends: [1]}\n"
    for value in ("1", "[1]"):
        text = GOOD_CASE.replace(inputs, f"    {key}: {value}\n" + ("" if key == "inputs" else inputs))
        path = write(tmp_path, f"{key}.yaml", text)
        [(_, line, message)] = problems(path)
        assert line == 3 and f"'{key}' must be a mapping of" in message and "object has no attribute" not in message


def test_empty_defaults_are_no_defaults(tmp_path):
    path = write(tmp_path, "empty.yaml", GOOD_CASE.replace("cases:", "defaults:\ncases:"))
    [loaded] = casefile.load_files([path])
    assert set(loaded.examples) == {"ok"}


def test_unknown_op_and_version_and_dtype(tmp_path):
    op = write(tmp_path, "op.yaml", GOOD_CASE.replace("op: Slice", "op: Slise"))
    version = write(tmp_path, "version.yaml", GOOD_CASE.replace("[13]", "[12]"))
    dtype = write(tmp_path, "dtype.yaml", GOOD_CASE.replace("[float]", "[float33]"))
    found = problems(op, version, dtype)
    messages = {where.split("/")[-1]: message for where, _, message in found}
    assert "unknown op 'Slise'" in messages["op.yaml"]
    assert "has no version 12" in messages["version.yaml"] and "1, 10, 11, 13" in messages["version.yaml"]
    assert "unknown dtype 'float33'" in messages["dtype.yaml"]


def test_a_dtype_no_version_allows_is_refused_unless_expected(tmp_path):
    text = GOOD_CASE.replace("[13]", "[11]").replace("[float]", "[bfloat16]")
    [(_, _, message)] = problems(write(tmp_path, "t.yaml", text))
    assert "allows T=bfloat16" in message and "dtype-not-allowed" in message
    casefile.load_files([write(tmp_path, "ok.yaml", text + "    expect: {error: dtype-not-allowed}\n")])


@pytest.mark.parametrize("first, second", [("a/b", "a b"), ("Negative_Start", "negative_start"), ("edge-case", "edge_case_")])
def test_case_names_that_would_name_one_test_directory_are_refused_with_both_places(tmp_path, first, second):
    # generate wrote both cases to one directory, the second over the first, and counted two tests written.
    text = GOOD_CASE.replace("name: ok", f"name: '{first}'") + GOOD_CASE.split("cases:\n")[1].replace("name: ok", f"name: '{second}'")
    [(where, line, message)] = problems(write(tmp_path, "clash.yaml", text))
    assert where.endswith("clash.yaml") and line == 7
    assert f"case names '{second}' and '{first}' (at " in message and "clash.yaml:3) would name one test directory" in message
    other_file = write(tmp_path, "other.yaml", GOOD_CASE.replace("name: ok", f"name: '{second}'"))
    [(where, _, message)] = problems(write(tmp_path, "first.yaml", GOOD_CASE.replace("name: ok", f"name: '{first}'")), other_file)
    assert where.endswith("other.yaml") and "first.yaml:3" in message


@pytest.mark.parametrize("name", ["hypothesis-0003", "Hypothesis_12", "hypothesis 7"])
def test_a_case_named_as_hypothesis_names_its_cases_is_refused(tmp_path, name):
    # Its id (or its test directory) would be a hypothesis case's: --case would pick both.
    [(_, line, message)] = problems(write(tmp_path, "h.yaml", GOOD_CASE.replace("name: ok", f"name: '{name}'")))
    assert line == 3 and f"case name '{name}' is written as hypothesis's cases are named" in message


def test_generate_refuses_cases_that_would_share_a_test_directory_and_writes_nothing(conform, tmp_path):
    (tmp_path / "clash.yaml").write_text(GOOD_CASE.replace("name: ok", "name: 'a/b'")
                                         + GOOD_CASE.split("cases:\n")[1].replace("name: ok", "name: 'a b'"))
    generated = conform("generate", "--op", "Slice", "--only-cases", "clash.yaml", "--no-hypothesis", "--out", "golden")
    assert generated.code == 2 and "clash.yaml:7: case names 'a b' and 'a/b'" in generated.stderr
    assert not (tmp_path / "golden").exists()


def test_values_that_do_not_fit_and_ragged_arrays(tmp_path):
    fit = write(tmp_path, "fit.yaml", GOOD_CASE.replace("[float]", "[uint8]").replace("[[1, 2], [3, 4]]", "[[1, 300], [3, 4]]"))
    ragged = write(tmp_path, "ragged.yaml", GOOD_CASE.replace("[[1, 2], [3, 4]]", "[[1, 2], [3]]"))
    found = {where.split("/")[-1]: (line, message) for where, line, message in problems(fit, ragged)}
    assert found["fit.yaml"][0] == 3 and "300 does not fit uint8" in found["fit.yaml"][1]
    assert "ragged" in found["ragged.yaml"][1]


def test_duplicate_case_names_and_duplicate_keys(tmp_path):
    twice = GOOD_CASE + GOOD_CASE.split("cases:\n")[1]
    found = problems(write(tmp_path, "dup.yaml", twice))
    assert any("duplicate case name 'ok'" in m for _, _, m in found)
    dup_key = write(tmp_path, "key.yaml", GOOD_CASE.replace("    versions: [13]\n", "    versions: [13]\n    versions: [13]\n"))
    assert any("duplicate key 'versions'" in m for _, _, m in problems(dup_key))


def test_python_tags_are_refused_not_executed(tmp_path):
    path = write(tmp_path, "evil.yaml", "op: !!python/object/apply:os.system ['echo hacked']\ncases: []\n")
    [(_, line, message)] = problems(path)
    assert line == 1 and "tags (!!str, !!python/..., !name) are not allowed" in message


def test_an_input_the_version_does_not_have(tmp_path):
    text = GOOD_CASE.replace("[13]", "[1]").replace("ends: [1]}", "ends: [1], steps: [1]}")
    [(_, _, message)] = problems(write(tmp_path, "steps.yaml", text))
    assert "'steps' is neither an input nor an attribute of Slice-1" in message



def test_a_string_attribute_written_as_an_input_is_a_clean_problem(tmp_path):
    # The fuzzer's case: Cast's `round_mode: nearest` moved under inputs raised a KeyError.
    text = ("op: Cast\ncases:\n  - name: e8m0\n    versions: [24]\n    dtypes: [float]\n    types: {T2: [float8e8m0]}\n"
            "    inputs: {input: [1.5], round_mode: nearest}\n")
    [(_, line, message)] = problems(write(tmp_path, "cast.yaml", text))
    assert "'round_mode' is an attribute of Cast-24 that is not a number or a list of numbers: write it under 'attributes'" in message
    assert line == 3

@pytest.mark.parametrize("versions, inputs, missing", [
    ("[13]", "{data: [[1, 2], [3, 4]], starts: [0]}", "Slice-13 needs 'ends'"),
    ("[13]", "{data: null, starts: [0], ends: [1]}", "Slice-13 needs 'data'"),
    ("[1]", "{data: [1, 2], ends: [1]}", "Slice-1 needs 'starts'"),  # a required attribute there
])
def test_a_required_input_left_out_is_a_file_error_not_a_traceback(tmp_path, versions, inputs, missing):
    # Before, the case loaded and the reference raised KeyError mid-run.
    text = GOOD_CASE.replace("[13]", versions).replace("{data: [[1, 2], [3, 4]], starts: [0], ends: [1]}", inputs)
    [(_, line, message)] = problems(write(tmp_path, "missing.yaml", text))
    assert line == 3 and f"case 'ok': {missing}: give it under 'inputs'" in message


def test_every_problem_in_every_file_is_reported(tmp_path):
    a = write(tmp_path, "a.yaml", GOOD_CASE.replace("dtypes:", "dtype:"))
    b = write(tmp_path, "b.yaml", "op: Clip\ncases: 3\n")
    assert len(problems(a, b)) == 2


def test_a_binary_file_is_named_as_not_text(tmp_path):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"op: Slice\x00\x01")
    [(where, _, message)] = problems(path)
    assert where.endswith("binary.yaml") and "not a text file" in message and "#x0000" in message


def test_a_folder_without_case_files_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("op: Slice\n")
    with pytest.raises(ConformError, match="no case files"):
        casefile.case_files([tmp_path])


def test_numbers_for_every_dtype_point_to_dtypes_when_string_cannot_take_them(tmp_path):
    text = GOOD_CASE.replace("    dtypes: [float]\n", "")
    [(_, line, message)] = problems(write(tmp_path, "all.yaml", text))
    assert line == 3 and "is not a string" in message and "give the case 'dtypes' without string" in message


def test_a_value_is_made_once_per_dtype_and_a_random_one_anew_for_each_version(tmp_path):
    # The versions a case expands to share the array of a value it writes (read-only, so no
    # example can change another's), but a random generator is seeded by the version.
    path = write(tmp_path, "shared.yaml", """\
        op: Slice
        cases:
          - name: shared
            versions: [11, 13]
            dtypes: [float]
            types: {Tind: [int64]}
            inputs: {data: {shape: [3, 4], random: [-5, 5]}, starts: [1], ends: [3]}
        """)
    [loaded] = casefile.load_files([path])
    eleven, thirteen = loaded.examples["shared"]
    assert eleven.inputs["starts"] is thirteen.inputs["starts"] and eleven.inputs["starts"].tolist() == [1]
    assert not thirteen.inputs["starts"].flags.writeable
    assert not (eleven.inputs["data"] == thirteen.inputs["data"]).all()


BROKEN_CLIP = """\
op: Clip
cases:
  - name: broken
    versions: [13]
    dtypes: [float]
    inputs: {input: [1, 2], min: [[0]]}
    surprise: 1
"""


def test_loading_op_by_op_gives_each_ops_cases_in_turn_and_every_problem_after_the_last(tmp_path):
    # A run plans one op's cases at a time (execute.plan), and still tells every broken file
    # before a case runs: the problems come once every op was loaded, all of them together.
    good = write(tmp_path, "good.yaml", GOOD_CASE)
    broken = write(tmp_path, "clip.yaml", BROKEN_CLIP)
    other = write(tmp_path, "other.yaml", GOOD_CASE.replace("op: Slice", "op: Abs").replace("name: ok", "name: absent"))
    loading = casefile.load_by_op([broken, good, other], lambda version: True, ["Slice", "Clip"])
    op, examples = next(loading)
    assert (op, {e.id for e in examples}) == ("Slice", {"Slice-13/ok/float/int32", "Slice-13/ok/float/int64"})
    assert next(loading)[0] == "Clip"
    with pytest.raises(CaseFileError) as caught:
        next(loading)
    assert [(path.endswith("clip.yaml"), line) for path, line, _ in caught.value.problems] == [(True, 7)]


def test_loading_op_by_op_finds_the_cases_loading_them_all_at_once_does():
    ops = ["Slice", "Clip", "Gather"]
    by_op = dict(casefile.load_by_op(casefile.case_files([casefile.BUILTIN_CASES]), lambda version: True, ops))
    for op in ops:
        assert [e.id for e in by_op[op]] == [e.id for e in casefile.load_examples(op)], op
