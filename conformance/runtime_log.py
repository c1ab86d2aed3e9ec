"""What runtimes (and anything else in a worker process) write to stderr (and stdout, sent there).

Each worker process writes its stderr to a file of its own, in the command's scratch folder (see
scratch: a worker's own workers write there too), instead of to the console: a runtime
that warns at every session (onnxruntime through its onnx.backend warns three times for every
opset-6 model) would otherwise bury a run's output, and nothing in those lines says which case
they belong to. What a runtime writes while running the case that crashed or hung its worker is
quoted in that case's verdict (`written_since`, from where its worker's file stood when the case
before was answered): the abort message of a runtime that throws is often the only account of
why it died. At the end of the command the files are gathered into one log beside its report
(`keep`); the scratch folder goes on every way out.

A runtime may write without end (a backend printing 100 MB a case, 11.5 GB in a run), so of what
each worker writes only its first KEPT_HEAD and last KEPT_TAIL bytes are kept, and the gathered log
says how many between them were dropped. The file stays one file whose offsets never change: the
OS writes it directly (a crash loses nothing written), and each answer's offset marks where the
next case's words begin. The worker drops the middle by punching a hole in it (`drop_middle`),
which takes no disk, between cases and every BOUND_EVERY seconds within one. No file is read
whole: a verdict reads its last LAST_BYTES_READ, and `keep` its head and tail. Where the file
system cannot punch holes (not Linux, or an old one), a file is not bounded on disk, and is still
read only so.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import sys
import threading
import time
from functools import cache
from pathlib import Path
from typing import NamedTuple

from . import scratch
from .text import printable

KIND = "stderr"  # the scratch subfolder of these files
LAST_LINES = 12  # of what a runtime wrote during a crashed or hung case, the last ones quoted
LAST_CHARACTERS = 1500
LAST_BYTES_READ = 1 << 16  # of a runtime that wrote megabytes during a case, only the end is read
# Of what one worker writes, its first and last bytes kept: a runtime's start-up warnings, and the
# last words of its last case, many times over (a verdict reads LAST_BYTES_READ of the tail).
KEPT_HEAD = KEPT_TAIL = 1 << 18
DROP_STEP = 1 << 20  # the middle is dropped once this much more of it is there to drop
BOUND_EVERY = 0.1  # seconds between looks at the file's length while a case runs
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # onnxruntime colours its log lines where stderr was a terminal


def new_file() -> str:
    """A fresh file for one worker's stderr, in this command's scratch folder."""
    folder = scratch.folder(KIND)
    # Named by when it was made, so the gathered log reads in about the order the workers started
    # (the process id tells apart files that two processes make in the same nanosecond).
    return os.path.join(folder, f"{time.time_ns():020d}-{os.getpid()}.txt")


def redirect_output(path: str | None) -> None:
    """In a worker, first thing: send file descriptor 2 (the runtime's and Python's stderr) to
    `path`, and stdout with it. Where the file cannot be made, both stay the console's.

    A runtime or backend that prints to stdout would otherwise write into the command's own
    stdout, amid the console report. Python's stdout becomes its stderr, which is line-buffered,
    so that a print lands before the answer of its case (a worker ends without flushing buffers)
    and a crashed case's last words include it."""
    if path is None:
        return
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        return
    os.dup2(descriptor, 2)
    os.dup2(descriptor, 1)
    os.close(descriptor)
    sys.stdout = sys.stderr
    _Bound.redirected = True
    threading.Thread(target=_keep_bounded, name="conform-stderr-bound", daemon=True).start()


class _Bound:
    """Whether this worker's stderr is a file of its own, how far into it the middle is dropped
    (see drop_middle), and whether its file system can drop anything."""

    redirected = False
    dropped_to = KEPT_HEAD
    can_drop = True


def position() -> int:
    """How much this worker has written to its stderr file so far (0 where stderr is no file);
    the file's middle is dropped here when there is enough of it, between cases."""
    try:
        size = os.fstat(2).st_size
    except OSError:
        return 0
    if size - KEPT_TAIL - _Bound.dropped_to >= DROP_STEP and _Bound.redirected:
        drop_middle(2, size)
    return size


def _keep_bounded() -> None:
    """Drop the middle of this worker's stderr file while a case writes on and on."""
    while _Bound.can_drop:
        time.sleep(BOUND_EVERY)
        try:
            size = os.fstat(2).st_size
        except OSError:
            return
        if size - KEPT_TAIL - _Bound.dropped_to >= DROP_STEP:
            drop_middle(2, size)


def drop_middle(descriptor: int, size: int) -> None:
    """Punch a hole in the file (`size` bytes long) from where it was last dropped to KEPT_TAIL
    before its end, in whole blocks: the file keeps its length and every offset into it, what is
    written on lands after the hole, and the hole takes no disk. Where the file system cannot,
    nothing is dropped again (`_Bound.can_drop`)."""
    block = 1 << 12
    start = -(-_Bound.dropped_to // block) * block
    end = (size - KEPT_TAIL) // block * block
    if end <= start:
        return
    if _punch_hole(descriptor, start, end - start):
        _Bound.dropped_to = end
    else:
        _Bound.can_drop = False
        _Bound.dropped_to = 1 << 62  # nothing more to try


# fallocate(2)'s mode: free the range's blocks, the file's length kept.
_PUNCH_HOLE_KEEP_SIZE = 0x02 | 0x01


def _punch_hole(descriptor: int, offset: int, length: int) -> bool:
    """Whether the range's blocks were freed (Linux's fallocate; False elsewhere, or where the file
    system cannot)."""
    fallocate = _fallocate()
    return fallocate is not None and fallocate(descriptor, _PUNCH_HOLE_KEEP_SIZE, offset, length) == 0


@cache
def _fallocate():
    """The C library's fallocate, on Linux; else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).fallocate64
    except (OSError, AttributeError):
        return None
    call.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
    call.restype = ctypes.c_int
    return call


def written_since(path: str | None, offset: int) -> str:
    """The last lines written to a worker's stderr file after `offset`, as one line for a verdict
    ('' when none): '; its stderr, last: "..." | "..."'."""
    if path is None:
        return ""
    try:
        with open(path, "rb") as stream:
            stream.seek(max(offset, os.fstat(stream.fileno()).st_size - LAST_BYTES_READ))
            text = stream.read()
    except OSError:
        return ""
    lines = [line.strip() for line in _readable(text).splitlines() if line.strip()]
    if not lines:
        return ""
    quoted = " | ".join(lines[-LAST_LINES:])
    if len(quoted) > LAST_CHARACTERS:
        quoted = "..." + quoted[-LAST_CHARACTERS:]
    return f"; its stderr, last: {quoted}"


def _readable(written: bytes) -> str:
    """What a worker wrote, as text: undecodable bytes replaced, terminal colour codes removed, and
    other control characters escaped (see text.printable)."""
    return printable(_COLOUR.sub("", written.decode("utf-8", "replace")))


class Kept(NamedTuple):
    """What `keep` kept: lines, and bytes dropped from the middle of what some worker wrote."""

    lines: int = 0
    dropped: int = 0


def keep(log: Path) -> Kept:
    """Gather what every worker of this command wrote to stderr into `log` (written whole, or not
    at all) and remove their files: of each, its first KEPT_HEAD and last KEPT_TAIL bytes, with a
    line saying how many between them were dropped. Nothing kept, no file."""
    folder = scratch.existing(KIND)
    if folder is None:
        return Kept()
    from .output import write_atomic

    parts, dropped = [], 0
    for number, name in enumerate(sorted(os.listdir(folder)), 1):
        text, left_out = _head_and_tail(Path(folder, name))
        dropped += left_out
        if text.strip():
            parts.append(f"== worker process {number} ==\n{text.rstrip()}\n")
    shutil.rmtree(folder, ignore_errors=True)
    if not parts:
        return Kept()
    text = "".join(parts)
    write_atomic(log, text, "the log of what worker processes wrote to stderr")
    return Kept(text.count("\n") - len(parts), dropped)


def _head_and_tail(path: Path) -> tuple[str, int]:
    """A worker's stderr file as the log keeps it, and how many bytes of it that leaves out."""
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if size <= KEPT_HEAD + KEPT_TAIL:
                return _readable(stream.read(KEPT_HEAD + KEPT_TAIL)), 0
            head = stream.read(KEPT_HEAD)
            stream.seek(size - KEPT_TAIL)
            tail = stream.read(KEPT_TAIL)
    except OSError:
        return "", 0
    dropped = size - KEPT_HEAD - KEPT_TAIL
    return (f"{_readable(head)}\n... {dropped:,} bytes dropped: this worker wrote {size:,}, of which the log keeps "
            f"the first {KEPT_HEAD:,} and the last {KEPT_TAIL:,} ...\n{_readable(tail)}"), dropped

