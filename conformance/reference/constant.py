"""Reference for Constant (versions 1, 9, 11, 12, 13, 19, 21, 23, 24, 25), from the spec text.

Constant has no inputs: its output is the value of its one value attribute. Three semantic
versions: Constant-1 (and -9, which only widens T) has `value` alone, required; Constant-11 adds
`sparse_value`, "Exactly one of the two attributes, either value or sparse_value, must be
specified"; Constant-12 adds the `value_*` forms, each of a fixed type (float32, int64, string)
and rank (scalar or 1-D). Later versions widen T only, which the registry reads from onnx.defs.

A `sparse_value` is a SparseTensorProto, whose format onnx.proto states: values of shape [NNZ] at
indices of shape [NNZ] (linearized) or [NNZ, rank] (coordinates), ascending without duplicates,
in a dense tensor of shape `dims` whose other elements are the default (zero, or the empty string).
"""

from __future__ import annotations

import math

import numpy as np

from ..case import Example, SparseValue
from ..dtypes import dtype, from_numpy
from .base import Expected, Invalid, OpReference, Reading, VersionSemantics, single

VALUE_REQUIRED = "value (required): The value for the elements of the output tensor."
EXACTLY_ONE_OF_TWO = "Exactly one of the two attributes, either value or sparse_value, must be specified."
EXACTLY_ONE = "Exactly one of the provided attributes, either value, sparse_value, or value_* must be specified."
SPARSE_VALUES_1D = "SparseTensorProto.values: The sequence of non-default values are encoded as a tensor of shape [NNZ]."
SPARSE_INDICES_SHAPE = ("SparseTensorProto.indices: (a) Indices can be a tensor of shape [NNZ, rank] ... (b) Indices can be a "
                        "tensor of shape [NNZ], in which case the i-th value must be the linearized-index of the i-th value")
SPARSE_IN_RANGE = ("SparseTensorProto.indices: The linearized-index can be converted into an index tuple (k_1,...,k_rank) "
                   "using the shape provided below.")
SPARSE_ORDER = "SparseTensorProto.indices: The indices must appear in ascending order without duplication."
SPARSE_DIMS = "SparseTensorProto.dims: The shape of the underlying dense-tensor: [dim_1, dim_2, ... dim_rank]"

# The value attributes, in the order the version texts list them.
TENSOR_FORMS = ("value", "sparse_value")
LIST_FORMS = ("value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings")
FORMS = TENSOR_FORMS + LIST_FORMS
# Each value_* attribute's output type and whether its output is 1-D (else a scalar), from its
# description ("The value for the sole element for the scalar, float32, output tensor").
LIST_FORM_TYPES = {"value_float": ("float", False), "value_floats": ("float", True), "value_int": ("int64", False),
                   "value_ints": ("int64", True), "value_string": ("string", False), "value_strings": ("string", True)}


def given_forms(example: Example) -> list[str]:
    """The value attributes the node has, of those its version knows."""
    return [name for name in FORMS
            if example.attributes.get(name) is not None and example.version.attribute(name) is not None]


class Constant1(VersionSemantics):
    """The output is the `value` tensor, as it is: its type, shape and every bit."""

    since = 1
    exactly_one = VALUE_REQUIRED

    def expected(self, example: Example) -> Expected:
        forms = given_forms(example)
        if len(forms) != 1:
            return Expected(invalid=Invalid("not-exactly-one-value", f"{example.version.label}: {self.exactly_one}"))
        return self.output_of(forms[0], example.attributes[forms[0]])

    def output_of(self, form: str, value) -> Expected:
        return single(np.array(value, copy=True))


class Constant11(Constant1):
    """`sparse_value` beside `value`: the dense tensor the sparse one stands for."""

    since = 11
    exactly_one = EXACTLY_ONE_OF_TWO

    def output_of(self, form: str, value) -> Expected:
        if form != "sparse_value":
            return super().output_of(form, value)
        problem = sparse_problem(value)
        if problem is not None:
            return Expected(invalid=problem)
        output = dense(value)
        unheld = default_positions(value) if not holds_zero(value.values.dtype) else None
        if unheld is None or not unheld.any():
            return single(output)
        # float8e8m0 holds no zero: the text's default is no value of the type, so those elements are free.
        return Expected(readings=(Reading((output,), f"any value where the default zero is not a {value.values.dtype} "
                                                    f"({int(unheld.sum())} of {unheld.size} elements)", free=(unheld,)),))


class Constant12(Constant11):
    """The `value_*` forms: a float32, int64 or string scalar, or a 1-D tensor of them."""

    since = 12
    exactly_one = EXACTLY_ONE

    def output_of(self, form: str, value) -> Expected:
        if form not in LIST_FORM_TYPES:
            return super().output_of(form, value)
        return single(list_form_output(form, value))


def list_form_output(form: str, value) -> np.ndarray:
    """The output of a value_* attribute: its elements in its type, 1-D or a scalar."""
    type_name, one_d = LIST_FORM_TYPES[form]
    elements = list(value) if one_d else [value]
    if type_name == "string":
        elements = [e.decode("utf-8") if isinstance(e, bytes) else str(e) for e in elements]
    array = np.array(elements, dtype=dtype(type_name).np_dtype).reshape(len(elements))
    return array if one_d else array.reshape(())


# --- sparse_value -------------------------------------------------------------------------------


def sparse_problem(value: SparseValue) -> Invalid | None:
    """What makes a sparse value no SparseTensorProto the text describes, or None."""
    dims, values, indices = value.dims, value.values, value.indices
    if any(d < 0 for d in dims):
        return Invalid("sparse-negative-dim", SPARSE_DIMS)
    if values.ndim != 1:
        return Invalid("sparse-values-not-1d", SPARSE_VALUES_1D)
    nnz = values.shape[0]
    if indices.shape not in ((nnz,), (nnz, len(dims))):
        return Invalid("sparse-indices-shape", SPARSE_INDICES_SHAPE)
    linear = linearized(indices, dims)
    if linear is None:
        return Invalid("sparse-index-out-of-range", SPARSE_IN_RANGE)
    if nnz > 1 and not (np.diff(linear) > 0).all():
        # Coordinates in lexicographic order are linearized indices in ascending order.
        return Invalid("sparse-indices-unordered", SPARSE_ORDER)
    return None


def linearized(indices: np.ndarray, dims: tuple[int, ...]) -> np.ndarray | None:
    """Each value's linearized index (row-major in `dims`), or None where one lies outside."""
    size = math.prod(dims)
    if indices.ndim == 1:
        return indices.astype(np.int64) if ((indices >= 0) & (indices < size)).all() else None
    if not ((indices >= 0) & (indices < np.array(dims, dtype=np.int64))).all():
        return None
    if indices.shape[0] == 0:
        return np.zeros((0,), dtype=np.int64)
    return np.ravel_multi_index(tuple(indices.T), dims).astype(np.int64) if dims else np.zeros((indices.shape[0],), np.int64)


def holds_zero(np_dtype: np.dtype) -> bool:
    """Whether the type holds the default zero (float8e8m0, powers of two only, does not)."""
    if np_dtype.kind == "O":
        return True
    with np.errstate(all="ignore"):
        return bool(np.array(0, dtype=np_dtype).astype(np.float64) == 0) if np_dtype.kind not in "biuc" else True


def default_positions(value: SparseValue) -> np.ndarray:
    """A mask of the dense tensor's elements no value is given for."""
    given = np.zeros(math.prod(value.dims), dtype=bool)
    given[linearized(value.indices, value.dims)] = True
    return ~given.reshape(value.dims)


def dense(value: SparseValue) -> np.ndarray:
    """The dense tensor: the default (zero, or the empty string) with each value at its index."""
    values = value.values
    default = "" if values.dtype.kind == "O" else 0
    out = np.full(math.prod(value.dims), default, dtype=values.dtype)
    out[linearized(value.indices, value.dims)] = values
    return out.reshape(value.dims)


# --- facts of a case ----------------------------------------------------------------------------


def output_elements(example: Example) -> int:
    """The output's size, counted without building it (a sparse value's dims may be large)."""
    elements = 0
    for form in given_forms(example):
        value = example.attributes[form]
        if isinstance(value, SparseValue):
            elements = max(elements, math.prod(max(d, 0) for d in value.dims))
        elif isinstance(value, np.ndarray):
            elements = max(elements, value.size)
        elif isinstance(value, (list, tuple)):
            elements = max(elements, len(value))
        else:
            elements = max(elements, 1)
    return elements


def made_type(form: str, value) -> str:
    """The output type a value attribute makes: a tensor's own, a value_* form's fixed one."""
    if form in LIST_FORM_TYPES:
        return LIST_FORM_TYPES[form][0]
    array = value.values if isinstance(value, SparseValue) else np.asarray(value)
    return from_numpy(array.dtype).name


def binding_problem(example: Example) -> str | None:
    """Where the one value attribute makes another output type than the case's T (a case file's
    mistake: value_float makes a float output), or None."""
    forms = given_forms(example)
    if len(forms) != 1:
        return None
    made, bound = made_type(forms[0], example.attributes[forms[0]]), dtype(example.types["T"]).name
    return None if made == bound else f"'{forms[0]}' makes the output {made}, but the case's T is {bound}: write dtypes: [{made}]"


def _form_trait(form: str):
    return lambda example: given_forms(example) == [form]


def _valid_output(example: Example) -> np.ndarray | None:
    semantics = REFERENCE.semantics_for(example.version)
    found = semantics.expected(example)
    return found.readings[0].outputs[0] if found.is_valid else None


def empty_output(example: Example) -> bool:
    """The output has no elements (a dim of 0, an empty value_ints)."""
    output = _valid_output(example)
    return output is not None and output.size == 0


def scalar_output(example: Example) -> bool:
    """The output is a scalar (rank 0)."""
    output = _valid_output(example)
    return output is not None and output.ndim == 0


def sparse_indices_2d(example: Example) -> bool:
    """sparse_value's indices as [NNZ, rank] coordinates, not linearized."""
    value = example.attributes.get("sparse_value")
    return isinstance(value, SparseValue) and value.indices.ndim == 2


def sparse_dims_not_positive(example: Example) -> bool:
    """sparse_value's dense shape is a scalar's or has a dim of 0: onnx.checker refuses both ("Sparse
    tensor (sparse_value) must have a dense-rank > 0", "dimensions are not positive"); onnx.proto's
    text ("dims: The shape of the underlying dense-tensor") does not."""
    value = example.attributes.get("sparse_value")
    return isinstance(value, SparseValue) and (not value.dims or 0 in value.dims)


def several_forms(example: Example) -> bool:
    """More than one value attribute given (an invalid node)."""
    return len(given_forms(example)) > 1


def no_form(example: Example) -> bool:
    """No value attribute given (an invalid node)."""
    return not given_forms(example)


def string_output(example: Example) -> bool:
    """The output is a string tensor (T string): what a runtime whose strings are no plain buffer may not carry."""
    return example.types.get("T") == "string"


def sparse_given(example: Example) -> bool:
    """sparse_value is given (alone, or beside another value attribute in an invalid node)."""
    return "sparse_value" in given_forms(example)


TRAITS = {
    **{form.replace("_", "-"): _form_trait(form) for form in FORMS if form != "sparse_value"},
    "sparse-value": sparse_given,
    "string-output": string_output,
    "empty-output": empty_output,
    "scalar-output": scalar_output,
    "sparse-indices-2d": sparse_indices_2d,
    "sparse-dims-not-positive": sparse_dims_not_positive,
    "several-value-attributes": several_forms,
    "no-value-attribute": no_form,
}


REFERENCE = OpReference(
    op="Constant",
    dtype_param="T",
    semantics=(Constant1, Constant11, Constant12),
    attribute_params={"value": "T", "sparse_value": "T"},
    output_elements_from=output_elements,
    binding_problem=binding_problem,
    rules=("not-exactly-one-value", "sparse-negative-dim", "sparse-values-not-1d", "sparse-indices-shape",
           "sparse-index-out-of-range", "sparse-indices-unordered"),
    traits=TRAITS,
)
