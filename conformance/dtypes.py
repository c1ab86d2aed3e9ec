"""The dtype registry: ONNX element types mapped to numpy / ml_dtypes, with limits and special values.

Names are the ONNX type-constraint spellings (`float`, `double`, `float8e4m3fn`, `int4`, ...), so a
name read from `onnx.defs` is a key here without translation. Which special values a type has
(inf, NaN, -0.0) is measured by round-tripping through the type, not retyped from a table.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper

from .errors import UsageError

# Friendlier spellings users type; the canonical name is the ONNX one.
ALIASES = {"float32": "float", "float64": "double", "half": "float16", "boolean": "bool"}


@dataclass(frozen=True)
class DType:
    """One ONNX element type: its numpy type, its kind, and the limits cases are built from."""

    name: str
    elem_type: int
    np_dtype: np.dtype
    kind: str  # "float" | "int" | "uint" | "bool" | "string" | "complex"
    bits: int
    lowest: object = None
    max: object = None
    smallest_normal: object = None
    smallest_subnormal: object = None
    has_inf: bool = False
    has_nan: bool = False
    has_negative_zero: bool = False

    @property
    def is_numpy_native(self) -> bool:
        """True when onnxruntime can take and give this type as a plain numpy array."""
        return self.np_dtype.type.__module__ == "numpy"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint")

    def special_values(self) -> dict[str, object]:
        """Named values a case file or a strategy may ask for, in this type."""
        values: dict[str, object] = {}
        if self.kind in ("int", "uint", "float"):
            values.update(max=self.max, lowest=self.lowest, min=self.lowest)
        if self.kind == "bool":
            values.update(max=True, lowest=False, min=False)  # numeric_limits<bool>
        if self.kind == "float":
            values.update(tiny=self.smallest_normal, subnormal=self.smallest_subnormal)
        if self.has_inf:
            values.update({"inf": np.inf, "-inf": -np.inf})
        if self.has_nan:
            values["nan"] = np.nan
        if self.has_negative_zero:
            values["-0.0"] = -0.0
        return values


def _kind(np_dtype: np.dtype, name: str) -> str:
    if name == "string":
        return "string"
    if name == "bool":
        return "bool"
    if name.startswith("complex"):
        return "complex"
    if name.startswith("uint"):
        return "uint"
    if name.startswith("int"):
        return "int"
    return "float"


def _survives(np_dtype: np.dtype, value: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.array([value], np.float32).astype(np_dtype).astype(np.float32)


def _build(name: str) -> DType:
    elem_type = TensorProto.DataType.Value(name.upper())
    np_dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    kind = _kind(np_dtype, name)
    fields: dict[str, object] = {}
    if kind in ("int", "uint"):
        info = ml_dtypes.iinfo(np_dtype)
        fields.update(lowest=int(info.min), max=int(info.max), bits=info.bits)
    elif kind == "float":
        info = ml_dtypes.finfo(np_dtype)
        lowest = np_dtype.type(info.min) if name != "float8e8m0" else np_dtype.type(info.smallest_normal)
        fields.update(
            lowest=lowest,
            max=np_dtype.type(info.max),
            smallest_normal=np_dtype.type(info.smallest_normal),
            smallest_subnormal=np_dtype.type(info.smallest_subnormal),
            bits=info.bits,
            has_inf=bool(np.isinf(_survives(np_dtype, np.inf))[0]),
            has_nan=bool(np.isnan(_survives(np_dtype, np.nan))[0]),
            has_negative_zero=bool(np.signbit(_survives(np_dtype, -0.0))[0]),
        )
    else:
        fields["bits"] = {"bool": 8, "string": 0}.get(name, np_dtype.itemsize * 8)
    return DType(name=name, elem_type=elem_type, np_dtype=np_dtype, kind=kind, **fields)


def canonical_name(name: str) -> str:
    """The ONNX spelling for a user-typed dtype name (accepts `float32`, `tensor(float)`, ...)."""
    name = name.strip().lower()
    if name.startswith("tensor(") and name.endswith(")"):
        name = name[len("tensor(") : -1]
    return ALIASES.get(name, name)


@cache
def dtype(name: str) -> DType:
    """The DType for an ONNX type name; UsageError naming the known types if there is none."""
    canon = canonical_name(name)
    if canon.upper() not in TensorProto.DataType.keys() or canon == "undefined":
        raise UsageError(f"unknown dtype '{name}' (known: {', '.join(all_names())})")
    return _build(canon)


@cache
def from_elem_type(elem_type: int) -> DType:
    return dtype(TensorProto.DataType.Name(elem_type).lower())


@cache
def _from_numpy(np_dtype: np.dtype) -> DType:
    return from_elem_type(helper.np_dtype_to_tensor_dtype(np_dtype))


def from_numpy(np_dtype: np.dtype) -> DType:
    """The DType of a numpy dtype (memoized: it is asked for every array of every case)."""
    return _from_numpy(np.dtype(np_dtype))


def all_names() -> list[str]:
    return sorted(n.lower() for n in TensorProto.DataType.keys() if n != "UNDEFINED")
