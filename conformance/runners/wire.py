"""How a case and its answer cross the pipe to a runtime's worker process.

An ndarray pickles through numpy's reduce machinery, which costs several microseconds per array;
a case sends several small arrays one way and gets outputs back the other, so that cost was most of
the isolated runner's overhead. Arrays travel here as (dtype name, shape, bytes) tuples, which
pickle as plain data, and come back as writable arrays equal in dtype, shape and every bit.
"""

from __future__ import annotations

import pickle

import numpy as np

from ..dtypes import dtype, from_numpy
from .base import RunOutput


def pack_array(array: np.ndarray):
    """The array as plain data; arrays of Python objects, strings or a foreign byte order go as they are."""
    if array.dtype.kind in "OUS" or not array.dtype.isnative:
        return array
    return from_numpy(array.dtype).name, array.shape, array.tobytes()


def unpack_array(packed) -> np.ndarray:
    if isinstance(packed, np.ndarray):
        return packed
    name, shape, data = packed
    return np.frombuffer(bytearray(data), dtype(name).np_dtype).reshape(shape)


def dump_case(data: bytes, feeds: dict[str, np.ndarray], elem_types: frozenset[int]) -> bytes:
    """A case's request: the model bytes, its feeds and its element types."""
    return pickle.dumps((data, {name: pack_array(a) for name, a in feeds.items()}, elem_types), pickle.HIGHEST_PROTOCOL)


def unpack_case(request: tuple) -> tuple[bytes, dict[str, np.ndarray], frozenset[int]]:
    """A request as the worker's connection hands it over (unpickled): the model bytes, feeds and element types."""
    data, feeds, elem_types = request
    return data, {name: unpack_array(p) for name, p in feeds.items()}, elem_types


def pack_output(output: RunOutput) -> tuple:
    return tuple(pack_array(a) for a in output.outputs), output.error, output.unsupported, output.fault, output.details


def unpack_output(packed: tuple) -> RunOutput:
    outputs, error, unsupported, fault, details = packed
    return RunOutput(tuple(unpack_array(p) for p in outputs), error, unsupported, fault, details)
