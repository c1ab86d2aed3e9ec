"""How a case and its answer cross the pipe to a runtime's worker process.

An ndarray pickles through numpy's reduce machinery, which costs several microseconds per array;
a case sends several small arrays one way and gets outputs back the other, so that cost was most of
the isolated runner's overhead. Arrays travel here as (dtype name, shape, bytes) tuples, which
pickle as plain data, and come back as writable arrays equal in dtype, shape and every bit.

Requests and answers travel as length-prefixed frames over a `Channel`: several requests go in one
write and one read takes every answer that has arrived, where a message each cost a write, a poll
and two reads per case (on Slice-13's small cases, more than conform's own work on them).
"""

from __future__ import annotations

import os
import pickle
import socket
import struct
from collections import deque
from multiprocessing.connection import Connection

import numpy as np

from ..dtypes import dtype, from_numpy
from .base import RunOutput


def pack_array(array: np.ndarray):
    """The array as plain data; arrays of Python objects, strings or a foreign byte order go as they are."""
    name = _WIRE_NAMES.get(array.dtype, _UNSEEN)
    if name is _UNSEEN:
        name = _remember_wire_name(array.dtype)
    return array if name is None else (name, array.shape, array.tobytes())


def unpack_array(packed) -> np.ndarray:
    if isinstance(packed, np.ndarray):
        return packed
    name, shape, data = packed
    return np.frombuffer(bytearray(data), dtype(name).np_dtype).reshape(shape)


# Every array of every case crosses: its dtype's wire name (or None: it goes pickled) is looked up
# once per dtype, not worked out each time (5 arrays a Slice case: 2.2 -> 1.0 us).
_WIRE_NAMES: dict[np.dtype, str | None] = {}
_UNSEEN = object()


def _remember_wire_name(np_dtype: np.dtype) -> str | None:
    name = None if np_dtype.kind in "OUS" or not np_dtype.isnative else from_numpy(np_dtype).name
    _WIRE_NAMES[np_dtype] = name
    return name


def dump_case(data: bytes, feeds: dict[str, np.ndarray], elem_types: frozenset[int]) -> bytes:
    """A case's request: the model bytes, its feeds and its element types."""
    return pickle.dumps((data, {name: pack_array(a) for name, a in feeds.items()}, elem_types), pickle.HIGHEST_PROTOCOL)


def unpack_case(request: tuple) -> tuple[bytes, dict[str, np.ndarray], frozenset[int]]:
    """A request as the worker's connection hands it over (unpickled): the model bytes, feeds and element types."""
    data, feeds, elem_types = request
    return data, {name: unpack_array(p) for name, p in feeds.items()}, elem_types


def pack_output(output: RunOutput) -> tuple:
    return (tuple(pack_array(a) for a in output.outputs), output.error, output.unsupported, output.fault, output.no_kernel,
            output.detail, output.invalid)


def unpack_output(packed: tuple) -> RunOutput:
    outputs, error, unsupported, fault, no_kernel, detail, invalid = packed
    return RunOutput(tuple(unpack_array(p) for p in outputs), error, unsupported, fault, no_kernel, detail, invalid)


_LENGTH = struct.Struct("<Q")
READ_SIZE = 1 << 16
LARGEST_READ = 1 << 24  # a large frame's rest is read in pieces of at most this, not allocated at once
# Bytes that may wait unread towards the worker while a write still never waits (see write_budget):
# at least half the smallest buffer a platform gives a pipe (macOS: 8 KiB), at most what keeps the
# worker's queue a few milliseconds deep.
SMALLEST_BUDGET = 4096
LARGEST_BUDGET = 1 << 16


class Channel:
    """Frames over one end of a worker's pipe: `send` writes several at once, `receive` hands
    them over one by one, reading every frame that has arrived in one go.

    On POSIX it reads and writes the pipe's file descriptor directly. Elsewhere (Windows) each
    `send` is one message of the connection and a read takes one message, holding one frame or
    more: the frames are the same, only how bytes cross differs.
    """

    def __init__(self, connection: Connection, raw: bool | None = None) -> None:
        self.connection = connection
        self._raw = os.name == "posix" if raw is None else raw
        self._fd = connection.fileno() if self._raw else -1
        self._buffer = bytearray()
        self._frames: deque[bytes] = deque()

    def send(self, payloads: list[bytes]) -> None:
        """Write these frames, in order, in one write where the pipe takes them whole."""
        data = b"".join([part for p in payloads for part in (_LENGTH.pack(len(p)), p)])  # each payload copied once
        if not self._raw:
            self.connection.send_bytes(data)
            return
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]

    def write_budget(self) -> int:
        """How many bytes may wait unread in this channel's outgoing direction while a write still
        never waits: a tenth of the socket's send buffer (Linux counts each write's bookkeeping,
        ~800 bytes, against the buffer too, so a 300-byte write takes ~1,100 of it), within
        SMALLEST_BUDGET and LARGEST_BUDGET; SMALLEST_BUDGET where the pipe is no socket."""
        if not self._raw:
            return SMALLEST_BUDGET
        try:
            with socket.fromfd(self._fd, socket.AF_UNIX, socket.SOCK_STREAM) as duplicate:
                size = duplicate.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
        except OSError:
            return SMALLEST_BUDGET
        return max(SMALLEST_BUDGET, min(size // 10, LARGEST_BUDGET))

    def has_frame(self) -> bool:
        """Whether a whole frame has been read and waits to be received."""
        return bool(self._frames)

    def read_some(self) -> None:
        """Read what has arrived (waiting for at least a byte); EOFError when the other end is gone."""
        if self._raw:
            chunk = os.read(self._fd, self._wanted())
            if not chunk:
                raise EOFError("the other end of the channel closed it")
        else:
            chunk = self.connection.recv_bytes()
        self._buffer += chunk
        self._split()

    def receive(self) -> bytes:
        """The next frame, reading until one is whole."""
        while not self._frames:
            self.read_some()
        return self._frames.popleft()

    def _wanted(self) -> int:
        if len(self._buffer) < _LENGTH.size:
            return READ_SIZE
        missing = _LENGTH.size + _LENGTH.unpack_from(self._buffer)[0] - len(self._buffer)
        return max(READ_SIZE, min(missing, LARGEST_READ))

    def _split(self) -> None:
        buffer = self._buffer
        while len(buffer) >= _LENGTH.size:
            end = _LENGTH.size + _LENGTH.unpack_from(buffer)[0]
            if len(buffer) < end:
                return
            with memoryview(buffer) as view:  # one copy of the frame, not a slice's and then its bytes'
                self._frames.append(bytes(view[_LENGTH.size:end]))
            del buffer[:end]
