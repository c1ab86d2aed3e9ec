"""Reading the files of a golden test directory, which may come from a stranger: its model.onnx
and its TensorProto (.pb) files, and any external data they name, bounded and kept inside the test
directory. `golden` reads stored tests only through here.

Why: a golden folder is untrusted input. Read naively, it could have conform read a file from
outside it (a secret beside the folder, say, fed to a runtime or quoted in a report), allocate or
read without bound, hang on a named pipe, or take a tensor whose dims and data disagree for one
that holds what its dims say. So what does not meet these limits is refused with the file named
(a GoldenError: exit 2 from `run --from`, Unreadable in `verify`), never followed or guessed at:

- links: a data set folder and a file in a test directory are read only if they lead inside it
  once their links are followed (`refuse_link_out`, `checked_file`), and a test found in a folder
  only if it leads inside that folder (`inside`; one that does not is passed over). Only a link
  is resolved there, as resolving costs a system call per part of a path; a loop of links leads
  nowhere.
- size: a model or .pb file must be a regular file of at most MAX_FILE_BYTES, or it is refused
  unread (`checked_file`); a tensor whose dims need more bytes than that is refused before its
  array is made, and so is external data of more than that in all for one file's tensors.
- dims and data: every tensor read (a .pb file, a model's initializers and tensor attributes) goes
  through `tensor_array`, which refuses a negative dim and dims its data does not exactly fill:
  numpy_helper reads dims [-1] as "whatever the data holds", and a short or long field reshapes
  wrong or not at all.
- external data: read only from inside the test's own directory (a relative path, no `..`, no
  link leading out), from a regular file, at its offset and no more than the tensor's dims need,
  opened without blocking; it is read into the tensor once (`load_tensor`, `read_model`), so that
  nothing reads the file again and the model a runtime is given names no file.
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Iterator

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.external_data_helper import uses_external_data

from .dtypes import DType, from_elem_type
from .errors import ConformError
from .reading import FileRefused, open_regular

MAX_FILE_BYTES = 512 * 2**20  # a golden model or tensor file larger than this is refused unread; so is a tensor this large


class GoldenError(ConformError):
    """Unreadable golden data: a missing or corrupt model or .pb, with the path named (exit 2 from
    `run --from`; `verify` lists the test as Unreadable and goes on)."""


def inside(path: Path, root: Path) -> bool:
    """Whether `path`, a name in `root` or in a folder already found to lead inside it, leads
    inside `root` once links are followed. Only a link is resolved: resolving costs a system call
    for every part of a path, and a test folder holds several files."""
    return not path.is_symlink() or _resolves_inside(path, root)


def _resolves_inside(path: Path, root: Path) -> bool:
    """Whether `path`, its links followed, leads inside `root` (a loop of links leads nowhere)."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # RuntimeError: a loop of links
        return False


def refuse_link_out(path: Path, test: Path) -> Path:
    if not inside(path, test):
        raise GoldenError(f"{path}: a link leading out of {test}; not followed")
    return path


def checked_file(path: Path, test: Path) -> Path:
    """The file (in `test`, or in a data set folder checked by `refuse_link_out`), if it exists,
    stays inside its test directory, and is not too large to read."""
    try:
        status = path.stat()
    except OSError:
        status = None
    if status is None or not stat.S_ISREG(status.st_mode):
        raise GoldenError(f"{path}: missing")
    refuse_link_out(path, test)
    size = status.st_size
    if size > MAX_FILE_BYTES:
        raise GoldenError(f"{path}: {size:,} bytes, larger than the {MAX_FILE_BYTES:,} conform reads")
    return path


def load_tensor(path: Path, test: Path) -> np.ndarray:
    """The array a .pb file of test directory `test` holds (see `tensor_array`), its data stored
    in an external file read from there (`_inline_external`)."""
    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(path.read_bytes())
    except Exception as error:  # any parse failure is "corrupt", with its path
        raise GoldenError(f"{path}: not a readable TensorProto ({type(error).__name__}: {error})") from None
    _inline_external([(tensor, str(path))], path.parent, test)
    return tensor_array(tensor, str(path))


def tensor_array(tensor: onnx.TensorProto, where: str) -> np.ndarray:
    """The array a stored tensor holds, once its dims and data are found to agree
    (`_check_tensor`); `where` names it (a .pb file, or a model's tensor) in a GoldenError."""
    if uses_external_data(tensor):
        raise GoldenError(f"{where}: its data is in an external file, which conform reads only from a test's own directory")
    try:
        _check_tensor(tensor, where)
        return numpy_helper.to_array(tensor)
    except GoldenError:
        raise
    except Exception as error:  # any conversion failure is "corrupt", with its path
        raise GoldenError(f"{where}: not a readable TensorProto ({type(error).__name__}: {error})") from None


def _check_tensor(tensor: onnx.TensorProto, where: str) -> None:
    """A GoldenError unless the tensor holds exactly the values its dims say: numpy_helper reads
    dims [-1] as 'whatever the data holds', and a short or long field reshapes wrong or not at
    all. Strings are in string_data, sub-byte types packed (int4, int2: in int32_data too),
    complex numbers two to a value."""
    dims, held = list(tensor.dims), _dtype_of(tensor, where)
    count = _element_count(dims, held, where)
    if held.kind == "string":
        found, needed, field = len(tensor.string_data), count, "string_data"
    elif tensor.HasField("raw_data"):
        found, needed, field = len(tensor.raw_data), _stored_bytes(held, count), "raw_data bytes"
    else:
        field = onnx.helper.tensor_dtype_to_field(tensor.data_type)
        packed = held.bits in (2, 4)
        found = len(getattr(tensor, field))
        needed = _stored_bytes(held, count) if packed else count * (2 if held.kind == "complex" else 1)
        field = f"values in {field}"
    if found != needed:
        raise GoldenError(f"{where}: malformed: {held.name} dims {dims} need {needed:,} {field}; it holds {found:,}")


def _element_count(dims: list[int], held: DType, where: str) -> int:
    """How many values a tensor of these dims holds, refused when a dim is negative or they need
    more than MAX_FILE_BYTES."""
    if any(d < 0 for d in dims):
        raise GoldenError(f"{where}: malformed: dims {dims} has a negative dimension")
    count = math.prod(dims)
    if _stored_bytes(held, count) > MAX_FILE_BYTES:
        raise GoldenError(f"{where}: dims {dims} make {count:,} {held.name} values ({_stored_bytes(held, count):,} bytes), "
                          f"more than the {MAX_FILE_BYTES:,} bytes conform reads")
    return count


def _dtype_of(tensor: onnx.TensorProto, where: str) -> DType:
    try:
        return from_elem_type(tensor.data_type)
    except (ConformError, ValueError):  # undefined, or a number no onnx type has
        raise GoldenError(f"{where}: not a readable TensorProto ({type_name(tensor.data_type)})") from None


def _stored_bytes(held: DType, count: int) -> int:
    """The bytes `count` values of the type take in raw_data (sub-byte types packed; a string, in
    string_data, a byte at least)."""
    return (count * (held.bits or 8) + 7) // 8


def _inline_external(tensors: list[tuple[onnx.TensorProto, str]], base: Path, test: Path) -> bool:
    """Each of the tensors (each with what names it) whose data is in an external file, that data
    read into its raw_data (`_external_bytes`), so that nothing reads the file again; whether
    there was any. Their bytes in all are bounded as one file's are (MAX_FILE_BYTES)."""
    external = [(tensor, where) for tensor, where in tensors if uses_external_data(tensor)]
    sizes = [_external_size(tensor, where) for tensor, where in external]
    if sum(sizes) > MAX_FILE_BYTES:
        raise GoldenError(f"{external[0][1]}: external data of {sum(sizes):,} bytes in all, more than the "
                          f"{MAX_FILE_BYTES:,} conform reads")
    for (tensor, where), size in zip(external, sizes):
        data = _external_bytes(tensor, size, where, base, test)
        del tensor.external_data[:]
        tensor.data_location = onnx.TensorProto.DEFAULT
        tensor.raw_data = data
    return bool(external)


def _external_size(tensor: onnx.TensorProto, where: str) -> int:
    """The bytes a tensor whose data is in an external file reads from it: what its dims need."""
    held = _dtype_of(tensor, where)
    if held.kind == "string":
        raise GoldenError(f"{where}: a string tensor with external data, which onnx stores in the model only")
    return _stored_bytes(held, _element_count(list(tensor.dims), held, where))


def _external_bytes(tensor: onnx.TensorProto, size: int, where: str, base: Path, test: Path) -> bytes:
    """The `size` bytes of a tensor's data in an external file, named by a path relative to
    `base` (the folder of the file that stores the tensor) that must stay inside test directory
    `test`: not absolute, no `..`, no link leading out. Read from its offset, and no further."""
    info = {entry.key: entry.value for entry in tensor.external_data}
    location = info.get("location", "")
    named = f"{where}: external data '{location}'"
    if not location or os.path.isabs(location) or ".." in Path(location).parts or "\0" in location:
        raise GoldenError(f"{named}: not a path inside the test directory; conform reads external data only from there")
    path = base / location
    if not _resolves_inside(path, test):
        raise GoldenError(f"{named}: a link leading out of {test}; not followed")
    try:
        offset, length = int(info.get("offset", 0)), int(info.get("length", size))
    except ValueError:
        raise GoldenError(f"{named}: its offset and length are not whole numbers") from None
    if offset < 0 or length != size:
        raise GoldenError(f"{named}: {length:,} bytes from offset {offset:,}, where its dims need {size:,}")
    return _read_at(path, offset, size, named)


def _read_at(path: Path, offset: int, size: int, named: str) -> bytes:
    """`size` bytes of a file from `offset`; a GoldenError (`named` says what) when it is missing,
    not a regular file (a folder, a pipe, a device), or shorter."""
    try:
        handle, status = open_regular(path, "external data file")
    except FileRefused:
        raise GoldenError(f"{named}: not a regular file") from None
    except OSError as error:
        raise GoldenError(f"{named}: {'missing' if isinstance(error, FileNotFoundError) else error.strerror}") from None
    try:
        if status.st_size < offset + size:
            raise GoldenError(f"{named}: {status.st_size:,} bytes, too few for {size:,} from offset {offset:,}")
        data = os.pread(handle, size, offset)
    except OSError as error:
        raise GoldenError(f"{named}: {error.strerror}") from None
    finally:
        os.close(handle)
    if len(data) != size:
        raise GoldenError(f"{named}: shorter than {offset + size:,} bytes")
    return data


def _model_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every tensor a model stores (initializers, sparse ones' values and indices, tensor
    attributes), its subgraphs' and functions' too: any of them may name external data."""
    graphs: list = [model.graph, *model.functions]
    while graphs:
        graph = graphs.pop()
        if isinstance(graph, onnx.GraphProto):
            yield from graph.initializer
            for sparse in graph.sparse_initializer:
                yield from (sparse.values, sparse.indices)
        for node in graph.node:
            for attribute in node.attribute:
                yield from (attribute.t, *attribute.tensors)
                for sparse in (attribute.sparse_tensor, *attribute.sparse_tensors):
                    yield from (sparse.values, sparse.indices)
                graphs += [attribute.g, *attribute.graphs]


def read_model(path: Path) -> tuple[onnx.ModelProto, bytes]:
    """A test directory's model, parsed, and its bytes (once any external data is read into it:
    what a runtime is given names no file); a GoldenError naming the file when it cannot be read."""
    model_file = path / "model.onnx"
    data = checked_file(model_file, path).read_bytes()
    try:
        model = onnx.load_from_string(data)  # reads no external data
    except Exception as error:  # protobuf errors have no common base worth naming
        raise GoldenError(f"{model_file}: not a readable model ({type(error).__name__}: {error})") from None
    if _inline_external([(t, f"{model_file}: tensor '{t.name}'") for t in _model_tensors(model)], path, path):
        data = model.SerializeToString()
    return model, data


def type_name(elem_type: int) -> str:
    try:
        return from_elem_type(elem_type).name
    except (ConformError, ValueError):  # a number no onnx type has
        return f"element type {elem_type}"
