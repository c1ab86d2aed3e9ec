"""What runtimes (and anything else in a worker process) write to stderr (and stdout, sent there).

Each worker process writes its stderr to a file of its own, in the command's scratch folder (see
scratch: a worker's own workers write there too), instead of to the console: a runtime
that warns at every session (onnxruntime through its onnx.backend warns three times for every
opset-6 model) would otherwise bury a run's output, and nothing in those lines says which case
they belong to. What a runtime writes while running the case that crashed or hung its worker is
quoted in that case's verdict (`written_since`, from where its worker's file stood when the case
before was answered): the abort message of a runtime that throws is often the only account of
why it died. At the end of the command the files are gathered into one log beside its report
(`keep`), so nothing written is lost; the scratch folder goes on every way out.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path

from . import scratch

KIND = "stderr"  # the scratch subfolder of these files
LAST_LINES = 12  # of what a runtime wrote during a crashed or hung case, the last ones quoted
LAST_CHARACTERS = 1500
LAST_BYTES_READ = 1 << 16  # of a runtime that wrote megabytes during a case, only the end is read
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


def position() -> int:
    """How much this worker has written to its stderr file so far (0 where stderr is no file)."""
    try:
        return os.fstat(2).st_size
    except OSError:
        return 0


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
    """What a worker wrote, as text: undecodable bytes replaced, terminal colour codes removed."""
    return _COLOUR.sub("", written.decode("utf-8", "replace"))


def keep(log: Path) -> int:
    """Gather what every worker of this command wrote to stderr into `log` (written whole, or not
    at all) and remove their files; the number of lines kept (0, and no file, when none)."""
    folder = scratch.existing(KIND)
    if folder is None:
        return 0
    from .output import write_atomic

    parts = []
    for number, name in enumerate(sorted(os.listdir(folder)), 1):
        text = _readable(Path(folder, name).read_bytes())
        if text.strip():
            parts.append(f"== worker process {number} ==\n{text.rstrip()}\n")
    shutil.rmtree(folder, ignore_errors=True)
    if not parts:
        return 0
    text = "".join(parts)
    write_atomic(log, text, "the log of what worker processes wrote to stderr")
    return text.count("\n") - len(parts)

