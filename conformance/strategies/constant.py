"""Random Constant cases: a `value` tensor of T (scalars and empty shapes included, its dtype's
boundary values weighted in), a `sparse_value` from version 11 (linearized or coordinate indices,
none to every element), and from version 12 the value_* form whose type T is (float32, int64,
string); a small share invalid: two value attributes, none, or a sparse value whose indices are out
of order or out of range."""

from __future__ import annotations

import math

import numpy as np

from ..case import Example, SparseValue
from ..dtypes import DType, dtype, from_numpy
from ..reference.constant import LIST_FORM_TYPES
from ..registry import OpVersion
from .common import Choices, array, invalid_share, one_in, pick, scalar, shape


def example(choices: Choices, version: OpVersion, binding: dict[str, str]) -> Example:
    dt = dtype(binding["T"])
    forms = allowed_forms(version, dt)
    form = pick(choices, forms)
    attributes = {form: value_of(choices.section(48), form, dt)}
    if invalid_share(choices):
        attributes = _made_invalid(choices, version, dt, form, attributes)
    return Example(version, "hypothesis", dict(binding), {}, attributes, "hypothesis", "T")


def allowed_forms(version: OpVersion, dt: DType) -> tuple[str, ...]:
    """The value attributes that can make an output of `dt` in `version`: `value` first (where
    shrinking goes), then sparse_value, then the value_* forms of that type."""
    forms = ["value"]
    if version.attribute("sparse_value") is not None:
        forms.append("sparse_value")
    forms += [form for form, (type_name, _) in LIST_FORM_TYPES.items()
              if version.attribute(form) is not None and type_name == dt.name]
    return tuple(forms)


def value_of(choices: Choices, form: str, dt: DType):
    """A value of one form: a tensor, a sparse tensor, or a value_* attribute's plain value."""
    if form == "value":
        return array(choices, dt, shape(choices, 0, 4))
    if form == "sparse_value":
        return sparse(choices, dt)
    _, one_d = LIST_FORM_TYPES[form]
    if one_d:
        elements = array(choices, dt, (choices.integer(0, 6),))
        return [_plain(v, dt) for v in elements.tolist()]
    return _plain(scalar(choices, dt), dt)


def _plain(value, dt: DType):
    """A value as the attribute holds it: a Python float (float32's), int or str."""
    if dt.kind == "float":
        return float(np.float32(value))
    if dt.kind == "string":
        return str(value)
    return int(value)


def sparse(choices: Choices, dt: DType, ordered: bool = True) -> SparseValue:
    """A sparse value: dims of rank 1..3 (none 0: onnx.checker refuses a scalar's dims and a dim of
    0, which the case files state), a drawn subset of its positions (none to all) in ascending
    order, as linearized indices or as [NNZ, rank] coordinates."""
    dims = tuple(max(d, 1) for d in shape(choices, 1, 3))
    size = math.prod(dims)
    chosen = sorted({choices.integer(0, size - 1) for _ in range(choices.integer(0, min(size, 6)))}) if size else []
    values = array(choices, dt, (len(chosen),))
    linear = np.array(chosen, dtype=np.int64)
    if one_in(choices, 2):
        indices = np.stack(np.unravel_index(linear, dims), axis=1).astype(np.int64) if chosen else np.zeros((0, len(dims)), np.int64)
    else:
        indices = linear
    return SparseValue(values, indices, dims)


def _made_invalid(choices: Choices, version: OpVersion, dt: DType, form: str, attributes: dict) -> dict:
    """One invalid node: a second value attribute, none (where the version lets `value` be left
    out), or a sparse value whose indices break the format's rules."""
    if form == "sparse_value" and one_in(choices, 2):
        return {form: _broken_sparse(choices, attributes[form])}
    if version.since_version >= 11 and one_in(choices, 3):
        return {}
    others = [f for f in allowed_forms(version, dt) if f != form]
    if not others:
        return attributes
    other = pick(choices, others)
    return {**attributes, other: value_of(choices.section(48), other, dt)}


def _broken_sparse(choices: Choices, value: SparseValue) -> SparseValue:
    """Indices reversed (out of order) where there are two or more, else one just past the end."""
    indices = value.indices
    if indices.shape[0] >= 2:
        return SparseValue(value.values, indices[::-1].copy(), value.dims)
    size = math.prod(value.dims)
    if indices.ndim == 1:
        return SparseValue(value.values[:1] if value.values.size else array(choices, dtype_of(value), (1,)),
                           np.array([size], dtype=np.int64), value.dims)
    beyond = np.array([list(value.dims)], dtype=np.int64)
    values = value.values[:1] if value.values.size else array(choices, dtype_of(value), (1,))
    return SparseValue(values, beyond, value.dims)


def dtype_of(value: SparseValue) -> DType:
    return from_numpy(value.values.dtype)
