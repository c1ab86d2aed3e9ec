"""An Example written back as a ready-to-paste YAML case, so a shrunk failure becomes a regression.

Values are written exactly: integers in full, floats with enough digits to round-trip through
float64 (every narrower float is exact in float64), and special values by name (nan, inf, -0.0).
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import yaml

from .case import Example, SparseValue
from .registry import versions
from .values import format_scalar


def _value(array: np.ndarray) -> Any:
    flat = [_scalar(v) for v in array.reshape(-1)]
    return _nest(flat, array.shape)


def _nest(flat: list[Any], shape: tuple[int, ...]) -> Any:
    if not shape:
        return flat[0]
    size = len(flat) // shape[0] if shape[0] else 0
    return [_nest(flat[i * size:(i + 1) * size], shape[1:]) for i in range(shape[0])]


def _scalar(value: Any) -> Any:
    text = format_scalar(value)
    if isinstance(value, (str, bytes)):
        return value
    if text in ("true", "false"):
        return text == "true"
    if text in ("nan", "inf", "-inf", "-0.0"):
        return text
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    try:
        number = float(text)
    except ValueError:
        return text  # complex, written as '1+2j'
    return number if math.isfinite(number) else text


def _written(array: np.ndarray | None) -> Any:
    if array is None:
        return None
    if array.size == 0:
        return {"shape": list(array.shape), "fill": 0 if array.dtype.kind != "O" else ""}
    return _value(array)


def _written_attribute(array: np.ndarray) -> Any:
    """A tensor attribute as a case file writes it: a bare number is read as a one-element 1-D
    tensor (ConstantOfShape's `value`), so a scalar is written with its shape, `{shape: [], fill: v}`."""
    return {"shape": [], "fill": _value(array)} if array.ndim == 0 else _written(array)


def _input_elsewhere(op: str, name: str) -> bool:
    """Whether some version of `op` takes `name` as an input."""
    return any(version.input(name) is not None for version in versions(op))


def _outputs_written(example: Example) -> int | list[str]:
    """A case's `outputs` as a case file writes them: a variadic output's count, or the names asked for."""
    formals = example.version.outputs
    if formals[-1].variadic:
        return len(example.outputs) - len(formals) + 1
    return [f.name for f, asked in zip(formals, example.outputs) if asked]


def case_yaml(example: Example, name: str, spec: str = "") -> str:
    """The YAML text of a case file holding just this example."""
    inputs = {k: _written(v) for k, v in example.inputs.items()}
    attributes = {}
    for key, value in example.attributes.items():
        if isinstance(value, np.ndarray):
            attributes[key] = _written_attribute(value)
        elif isinstance(value, SparseValue):
            attributes[key] = {"values": _written(value.values), "indices": _written(value.indices), "dims": list(value.dims)}
        elif _input_elsewhere(example.op, key):
            inputs[key] = value  # an attribute a later version takes as an input is written as one; the loader moves it
        else:
            attributes[key] = value
    case: dict[str, Any] = {"name": name}
    if spec:
        case["spec"] = spec
    case["versions"] = [example.version.since_version]
    case["dtypes"] = [example.dtype]
    others = {p: [t] for p, t in example.types.items() if p != example.dtype_param}
    if others:
        case["types"] = others
    case["inputs"] = inputs
    if attributes:
        case["attributes"] = attributes
    if example.outputs:
        case["outputs"] = _outputs_written(example)
    document = {"op": example.op, "cases": [case]}
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=None, width=100, allow_unicode=True)
