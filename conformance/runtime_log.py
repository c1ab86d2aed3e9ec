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

A verdict quotes the last LAST_LINES lines written during its case, and before them the line that
says why (a Rust panic's "panicked at", a C++ "terminate called", an assertion: see
telling.telling_line) where that line is further up: a panic's backtrace fills the last lines.

The gathered log marks which case wrote which lines: beside a worker's file, a file of case marks
(`CaseMarks`) holds the offset at which each case's lines begin, and `keep` puts a line naming the
case there. Only a case that wrote something is marked (whoever learns the file's length after a
case compares it with the length before: its worker, or the process its answers reach), so a
runtime that writes nothing costs no write at all.
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
from typing import Callable, NamedTuple

from . import scratch
from .telling import TELLING_MARKERS, telling_line
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
    _Bound.path = path
    threading.Thread(target=_keep_bounded, name="conform-stderr-bound", daemon=True).start()


class _Bound:
    """Whether this worker's stderr is a file of its own, how far into it the middle is dropped
    (see drop_middle), and whether its file system can drop anything."""

    redirected = False
    path: str | None = None  # the file, once redirected
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


MARKS = ".cases"  # the suffix of a worker's file of case marks, beside its stderr file
MARKS_READ = 1 << 22  # of a file of case marks, at most this much is read


class CaseMarks:
    """Where in one worker's stderr file each case that wrote something began, kept in a file
    beside it (`path` + MARKS) that `keep` reads: a line of offset and label for each. Written by
    the one process that learns the file's length after each of the worker's cases, each mark in
    one write of its own (a crash of that process loses none). Nothing for a worker whose stderr
    is no file (`path` None)."""

    def __init__(self, path: str | None) -> None:
        self._stderr = path
        self._path = None if path is None else path + MARKS
        self._descriptor: int | None = None
        self._pending: tuple[int, str] | None = None  # the case begun last, not marked yet (see `began`)

    def mark(self, offset: int, label: str) -> None:
        """The lines that `label` names ("case ID") begin at `offset`."""
        if self._path is None:
            return
        if self._descriptor is None:
            try:
                self._descriptor = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            except OSError:
                self._path = None  # no marks, rather than a failed run
                return
        line = printable(label).replace("\t", "\\t").replace("\n", "\\n")
        try:
            os.write(self._descriptor, f"{offset}\t{line}\n".encode("utf-8", "replace"))
        except OSError:
            pass

    def mark_if_written(self, offset: int, label: str, stderr: str | None) -> None:
        """Mark `label` at `offset` when the stderr file `stderr` has grown past it (a case that
        crashed or hung, whose end no answer told)."""
        try:
            grown = stderr is not None and os.stat(stderr).st_size > offset
        except OSError:
            grown = False
        if grown:
            self.mark(offset, label)

    def began(self, offset: int, case: str) -> None:
        """Case `case` (its id) begins at `offset`, the file's length now, which also ends the case
        begun before it: that one is marked where it wrote anything. For the process that writes
        the file itself, which so needs no second look at its length a case (see `settle`)."""
        self.settle(offset)
        self._pending = (offset, case)

    def settle(self, length: int | None = None) -> None:
        """Mark the case begun last where the file, `length` bytes long now (looked up when None),
        grew past its beginning: at the end of a task, when no case follows it."""
        pending, self._pending = self._pending, None
        if pending is None or self._stderr is None:
            return
        if length is None:
            try:
                length = os.stat(self._stderr).st_size
            except OSError:
                return
        if length > pending[0]:
            self.mark(pending[0], f"case {pending[1]}")

    def close(self) -> None:
        descriptor, self._descriptor = self._descriptor, None
        if descriptor is not None:
            os.close(descriptor)


_OWN_MARKS: dict[int, CaseMarks] = {}  # by process id: a forked worker makes its own


def own_marks() -> CaseMarks:
    """This worker's marks of its own stderr file (which marks nothing where stderr is no file of its own)."""
    marks = _OWN_MARKS.get(os.getpid())
    if marks is None:
        marks = _OWN_MARKS[os.getpid()] = CaseMarks(_Bound.path)
    return marks


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
    last = max(0, len(lines) - LAST_LINES)
    telling = _telling_before(lines[:last])
    quoted = " | ".join(lines[last:])
    room = LAST_CHARACTERS - len(telling)
    if len(quoted) > room:
        quoted = "..." + quoted[-room:]
    return f"; its stderr, last: {telling}{quoted}"


def _telling_before(lines: list[str]) -> str:
    """The line that says why (see telling.telling_line) among `lines`, those written before
    the last ones a verdict quotes, with ' | ... | ' after it; '' when none holds a marker of one:
    only a panic, abort or assertion line is worth quoting out of its place. What it is joined
    with (a panic's message on the next line) comes from `lines` too, never from the last ones."""
    for marker in TELLING_MARKERS:
        for index, line in enumerate(lines):
            if marker in line:
                reaches = index + 1 if line.endswith(":") else index  # a line ending in a colon is joined with the next
                gap = " | ... | " if reaches < len(lines) - 1 else " | "
                return telling_line("\n".join(lines[index:])) + gap
    return ""


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
    line saying how many between them were dropped, and a heading "== worker process N: case ID =="
    where each marked case's lines begin (see CaseMarks). Nothing kept, no file. The lines counted
    are those the workers wrote, headings left out."""
    folder = scratch.existing(KIND)
    if folder is None:
        return Kept()
    from .output import write_atomic

    parts, dropped, headings = [], 0, 0
    names = sorted(name for name in os.listdir(folder) if not name.endswith(MARKS))
    for number, name in enumerate(names, 1):
        heading = f"== worker process {number}"
        text, left_out = _head_and_tail(Path(folder, name), lambda label: f"{heading}: {label} ==")
        dropped += left_out
        if text.strip():
            parts.append(f"{heading} ==\n{text.rstrip()}\n")
            headings += 1 + text.count(f"\n{heading}: ") + text.startswith(f"{heading}: ")
    shutil.rmtree(folder, ignore_errors=True)
    if not parts:
        return Kept()
    text = "".join(parts)
    write_atomic(log, text, "the log of what worker processes wrote to stderr")
    return Kept(text.count("\n") - headings, dropped)


def _head_and_tail(path: Path, heading: Callable[[str], str] = lambda label: f"== {label} ==") -> tuple[str, int]:
    """A worker's stderr file as the log keeps it, each case's lines headed by `heading(label)`
    (see CaseMarks), and how many bytes of it that leaves out."""
    marks = _marks(Path(f"{path}{MARKS}"))
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if size <= KEPT_HEAD + KEPT_TAIL:
                return _marked(stream.read(KEPT_HEAD + KEPT_TAIL), 0, marks, heading), 0
            head = stream.read(KEPT_HEAD)
            stream.seek(size - KEPT_TAIL)
            tail = stream.read(KEPT_TAIL)
    except OSError:
        return "", 0
    dropped = size - KEPT_HEAD - KEPT_TAIL
    return (f"{_marked(head, 0, marks, heading)}\n... {dropped:,} bytes dropped: this worker wrote {size:,}, of which "
            f"the log keeps the first {KEPT_HEAD:,} and the last {KEPT_TAIL:,} ...\n"
            f"{_marked(tail, size - KEPT_TAIL, marks, heading)}"), dropped


def _marks(path: Path) -> list[tuple[int, str]]:
    """A file of case marks (see CaseMarks) as (offset, label) pairs by offset; none when it is not there."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(MARKS_READ)
    except OSError:
        return []
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        offset, tab, label = line.partition("\t")
        if tab and offset.isdigit():
            found.append((int(offset), printable(label)))
    found.sort(key=lambda mark: mark[0])
    return found


def _marked(data: bytes, start: int, marks: list[tuple[int, str]], heading: Callable[[str], str]) -> str:
    """`data`, read from offset `start` of a worker's file, as text with a heading where each
    marked case's lines begin; a piece that begins amid a case's lines is headed by it too."""
    end = start + len(data)
    inside = [(offset, label) for offset, label in marks if start <= offset < end]
    earlier = [label for offset, label in marks if offset < start]
    pieces, at = [], start
    if earlier and start > 0 and (not inside or inside[0][0] > start):
        pieces.append(heading(f"{earlier[-1]} (continued)") + "\n")
    for offset, label in inside:
        text = _readable(data[at - start:offset - start])
        pieces.append(text if not text or text.endswith("\n") else text + "\n")
        pieces.append(heading(label) + "\n")
        at = offset
    pieces.append(_readable(data[at - start:]))
    return "".join(pieces)

