"""The files conform writes (reports, golden tests, shrunk cases, expectation files): each is written
whole or not at all, and a place that cannot take it is an OutputError naming the file, not a traceback.

`check_writable` tries a place before a run spends minutes on the results it will hold; a place
that fails later all the same (a folder made read-only meanwhile) loses only that file (`Writes`).
A report may go to stdout: `-`, as most command-line tools read it, or a path that names it (/dev/stdout).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from .errors import OutputError

STDOUT = Path("-")  # as an output path: this process's stdout


@contextmanager
def writing(path: Path, what: str) -> Iterator[None]:
    """Within it, an OSError is an OutputError saying which file could not be written, and why."""
    try:
        yield
    except OSError as error:
        reason = error.strerror or str(error)
        raise OutputError(f"cannot write {what} {path}: {reason}") from error


class Writes:
    """The files a command writes once its work is done, each tried whatever became of those before
    it: one that cannot be written is kept (`failed`, the message of its OutputError) for the command
    to tell as it ends, and the others are written all the same."""

    def __init__(self) -> None:
        self.failed: list[str] = []

    @contextmanager
    def attempt(self) -> Iterator[None]:
        """Within it, an OutputError ends the block and is kept, not raised."""
        try:
            yield
        except OutputError as error:
            self.failed.append(error.message)


def write_atomic(path: Path, text: str, what: str = "the file") -> None:
    """Write through a temporary file in the same folder, then rename: never a half-written file.

    A symbolic link keeps pointing where it did: the file it points to is the one replaced. A
    device or pipe (/dev/null, /dev/stdout, a FIFO) is written as it is: a file renamed over it
    would take its place, and nothing could make a write to it whole anyway. The text is written
    as given, its line ends untranslated: a file edited in its own line ends keeps them.
    """
    write_atomic_parts(path, (text,), what)


def write_atomic_parts(path: Path, parts: Iterable[str], what: str = "the file") -> None:
    """As `write_atomic`, the text given in pieces, written as they come (a report of every case
    is streamed from disk, never whole in memory)."""
    with writing(path, what):
        if is_stdout(path):  # through sys.stdout, after whatever this process wrote there before
            sys.stdout.writelines(parts)
            sys.stdout.flush()
            return
        if is_stream(path):
            with open(path, "w", encoding="utf-8", newline="") as stream:
                stream.writelines(parts)
            return
        target = path.resolve() if path.is_symlink() else path
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            os.fchmod(handle, _mode_for(target))
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
                stream.writelines(parts)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _mode_for(target: Path) -> int:
    """The permissions a file written in place of `target` gets: those of the file it replaces,
    or a new file's under the user's umask (0644 under the usual 022), as `open` would give it:
    mkstemp's own 0600 would keep a report or golden manifest from the rest of a team."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~umask()


def umask() -> int:
    """This process's umask (read by setting it, at once set back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def is_stdout(path: Path) -> bool:
    """Whether `path` is `-` or names the file this process's stdout is (/dev/stdout, or the
    terminal, pipe or file it goes to)."""
    if path == STDOUT:
        return True
    try:
        return os.path.samestat(os.stat(path), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):  # no such file; a stdout without a descriptor (io.UnsupportedOperation)
        return False


def is_stream(path: Path) -> bool:
    """Whether `path` (its links followed) is something other than a file or folder: a device, a
    pipe, a socket, or `-` (stdout)."""
    if path == STDOUT:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def check_writable(path: Path, what: str) -> None:
    """Raise OutputError now if `write_atomic(path, ...)` could not create the file later: its
    folder is made if missing and a temporary file is created in it and removed."""
    with writing(path, what):
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, "it is a folder")
        if path == STDOUT:
            return
        if is_stream(path):
            # Not opened to try: opening a FIFO for writing waits for its reader.
            if not os.access(path, os.W_OK):
                raise PermissionError(errno.EACCES, "Permission denied")
            return
        _try_folder((path.resolve() if path.is_symlink() else path).parent)


def check_folder(folder: Path, what: str) -> None:
    """Raise OutputError now if files cannot be created in `folder` (made if missing)."""
    with writing(folder, what):
        _try_folder(folder)


def _try_folder(folder: Path) -> None:
    # mkdir's own complaint about a file in the way ("File exists") names neither the file nor the problem.
    in_the_way = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
    if in_the_way is not None:
        raise NotADirectoryError(errno.ENOTDIR, f"{in_the_way} is a file, not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".conform-check.", suffix=".tmp")
    os.close(handle)
    os.unlink(temporary)
