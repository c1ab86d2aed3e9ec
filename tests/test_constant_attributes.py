"""Attributes that hold a whole value (Constant's): a sparse tensor written as {values, indices,
dims}, a FLOATS list, a scalar tensor written with its shape; each read, built into the node,
read back from a stored model and written back as a case as it was written."""

import json
import textwrap

import numpy as np
import onnx
import yaml
from onnx import AttributeProto

from conformance import casefile, golden
from conformance.case import SparseValue
from conformance.model import build, checker_problem
from conformance.reference import for_op
from conformance.registry import versions
from conformance.regression import case_yaml


def loaded(tmp_path, text: str) -> dict:
    path = tmp_path / "cases.yaml"
    path.write_text(textwrap.dedent(text))
    [case_file] = casefile.load_files([path])
    return {e.id: e for examples in case_file.examples.values() for e in examples}


SPARSE = """\
op: Constant
cases:
  - name: sparse
    versions: [13]
    dtypes: [float16, int64]
    attributes: {sparse_value: {values: [1, max], indices: [[0, 1], [1, 2]], dims: [2, 3]}}
"""


def node_attribute(example) -> onnx.AttributeProto:
    reference = for_op(example.op)
    built = build(example, reference.output_types(example, reference.expected(example)))
    return built.model.graph.node[-1].attribute[0], built


def test_a_sparse_attribute_is_read_with_its_values_in_the_binding_type_and_int64_indices(tmp_path):
    example = loaded(tmp_path, SPARSE)["Constant-13/sparse/float16"]
    value = example.attributes["sparse_value"]
    assert isinstance(value, SparseValue)
    assert value.values.dtype == np.float16 and value.values.tolist() == [1.0, 65504.0]
    assert value.indices.dtype == np.int64 and value.indices.tolist() == [[0, 1], [1, 2]]
    assert value.dims == (2, 3)


def test_a_sparse_attribute_is_built_as_a_sparse_tensor_onnx_checker_accepts(tmp_path):
    example = loaded(tmp_path, SPARSE)["Constant-13/sparse/int64"]
    attribute, built = node_attribute(example)
    assert attribute.type == AttributeProto.SPARSE_TENSOR
    sparse = attribute.sparse_tensor
    assert list(sparse.dims) == [2, 3]
    assert onnx.numpy_helper.to_array(sparse.values).tolist() == [1, 2**63 - 1]
    assert onnx.numpy_helper.to_array(sparse.indices).tolist() == [[0, 1], [1, 2]]
    assert checker_problem(built.data) is None
    assert for_op("Constant").expected(example).readings[0].outputs[0].tolist() == [[0, 1, 0], [0, 0, 2**63 - 1]]


def test_a_sparse_attribute_not_written_as_a_mapping_is_a_file_error_at_its_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(SPARSE.replace("{values: [1, max], indices: [[0, 1], [1, 2]], dims: [2, 3]}", "[1, 2]"))
    try:
        casefile.load_files([path])
    except Exception as error:  # CaseFileError
        [(_, line, message)] = error.problems
        assert line == 3 and "SPARSE_TENSOR" in message and "{values: [...], indices: [...], dims: [...]}" in message
    else:
        raise AssertionError("a sparse attribute written as a list loaded")


def test_value_floats_of_whole_numbers_is_a_floats_attribute_and_names_resolve(tmp_path):
    examples = loaded(tmp_path, """\
        op: Constant
        cases:
          - name: floats
            versions: [13]
            dtypes: [float]
            attributes: {value_floats: [1, 2, nan, -0.0]}
        """)
    example = examples["Constant-13/floats/float"]
    assert example.attributes["value_floats"][:2] == [1.0, 2.0]
    attribute, built = node_attribute(example)
    assert attribute.type == AttributeProto.FLOATS and len(attribute.floats) == 4
    assert np.isnan(attribute.floats[2]) and np.signbit(attribute.floats[3])
    assert checker_problem(built.data) is None


def test_a_tensor_attribute_written_with_shape_keeps_it_and_a_bare_number_is_one_element_1d(tmp_path):
    examples = loaded(tmp_path, """\
        op: Constant
        cases:
          - name: scalar
            versions: [13]
            dtypes: [int8]
            attributes: {value: {shape: [], fill: -3}}
          - name: bare
            versions: [13]
            dtypes: [int8]
            attributes: {value: -3}
        """)
    assert examples["Constant-13/scalar/int8"].attributes["value"].shape == ()
    assert examples["Constant-13/bare/int8"].attributes["value"].shape == (1,)


def test_a_case_written_back_reads_as_the_same_attributes(tmp_path):
    examples = loaded(tmp_path, SPARSE + """\
  - name: scalar
    versions: [13]
    dtypes: [float16]
    attributes: {value: {shape: [], fill: 2.5}}
""")
    for example_id in ("Constant-13/sparse/float16", "Constant-13/scalar/float16"):
        example = examples[example_id]
        text = case_yaml(example, "again")
        again = loaded(tmp_path, text)[example_id.replace(example.name, "again")]
        for name, value in example.attributes.items():
            other = again.attributes[name]
            if isinstance(value, SparseValue):
                assert (other.values.tolist(), other.indices.tolist(), other.dims) == (
                    value.values.tolist(), value.indices.tolist(), value.dims)
            else:
                assert other.shape == value.shape and other.tolist() == value.tolist()
    assert yaml.safe_load(case_yaml(examples["Constant-13/scalar/float16"], "x"))["cases"][0]["attributes"] == {
        "value": {"shape": [], "fill": 2.5}}


def test_constant_versions_with_sparse_value_are_buildable():
    assert all(v.refusal is None for v in versions("Constant"))


def test_a_stored_sparse_or_value_int_constant_reads_back_with_its_type(conform, tmp_path):
    out = tmp_path / "golden"
    cases = tmp_path / "cases.yaml"
    cases.write_text(textwrap.dedent(SPARSE.replace("dims: [2, 3]}}", "dims: [2, 3]}}\n") + """\
  - name: ints
    versions: [13]
    dtypes: [int64]
    attributes: {value_ints: [1, -2]}
"""))
    assert conform("generate", "--op", "Constant", "--opset", "13", "--no-hypothesis", "--only-cases", str(cases),
                   "--out", str(out)).code == 0
    stored = {folder.name: golden.example_from_test(golden.read_tests(folder)[0]) for folder in out.iterdir() if folder.is_dir()}
    sparse = next(e for name, e in stored.items() if "sparse" in name and "int64" in name)
    assert isinstance(sparse.attributes["sparse_value"], SparseValue) and sparse.types == {"T": "int64"}
    ints = next(e for name, e in stored.items() if "ints" in name)
    assert ints.types == {"T": "int64"}
    result = conform("verify", str(out), "--report-json", str(tmp_path / "v.json"))
    assert result.code == 0, result.stdout
    assert json.loads((tmp_path / "v.json").read_text())["summary"]["pass"] == 3
