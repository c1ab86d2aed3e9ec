"""Reading a file someone else wrote (a case file, an expectations file, a shard's JSON report, a
golden test's external data): a regular file only, opened without blocking, and read no further
than a limit.

A named pipe opened for reading waits for a writer, and a device such as /dev/zero never ends, so
the file is opened with O_NONBLOCK and checked before anything is read; a file that grows once
opened is read no further than the limit either. Each refusal is a `FileRefused` saying why in
words a person can act on, which the caller names the file in.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_FILE_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class FileRefused(Exception):
    """Why a file is not read: not a regular file, or larger than the limit."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def open_regular(path: Path, kind: str) -> tuple[int, os.stat_result]:
    """A descriptor open for reading on `path`, a regular file, and its status; opened without
    blocking, so that a named pipe is refused rather than waited on (`kind` names such files in the
    refusal: "case files must be regular files, and this is a named pipe (FIFO)"). An OSError of
    opening it is raised as it is."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode):
        os.close(descriptor)
        kind_of_file = next((name for test, name in _FILE_KINDS if test(status.st_mode)), "not a file")
        raise FileRefused(f"{kind}s must be regular files, and this is {kind_of_file}")
    return descriptor, status


def read_bounded(path: Path, limit: int, kind: str) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (see `open_regular`)."""
    descriptor, status = open_regular(path, kind)
    try:
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            data = file.read(limit + 1)
    finally:
        os.close(descriptor)
    size = max(status.st_size, len(data))
    if size > limit:
        raise FileRefused(f"{size:,} bytes: larger than {kind}s may be (at most {mib(limit)}, {limit:,} bytes)")
    return data


def mib(size: int) -> str:
    """A size in MiB, as a limit is told: '1 MiB', '256 MiB'."""
    return f"{size / 2**20:,g} MiB"
