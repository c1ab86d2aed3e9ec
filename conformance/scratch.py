"""This command's scratch folder: the files its processes write for each other or a runtime writes
for conform to read back, none of them a result.

It holds one subfolder per kind: `stderr` (what each worker process writes, see runtime_log),
`profiles` (onnxruntime's profiles, read to tell which provider ran a node, see runners.fallback)
and `hypothesis` (hypothesis's storage, see `hold_hypothesis_storage`).
One folder per command, made on first use and named in the environment, so that every worker
process (and each of theirs) writes into the same one; the main process removes it on every way
out (`discard`, from __main__.leave), so a worker killed mid-case (a crash, a timeout) leaves
nothing in the system's temporary folder. Used as a library (tests, the pytest plugin), nothing
calls `discard`: the interpreter's exit does.

Only a folder conform made is used or removed: one holding its owner file (OWNER), which every
scratch folder gets as it is made. A `CONFORM_SCRATCH` naming anything else (a folder a user
named so) is neither used nor emptied nor removed: a fresh folder is made. A command's own
process does not take the folder named in the environment it started with either
(`forget_inherited`): that one is the folder of the command whose worker started it (a backend
that runs `conform`), and stays that command's. A process removes only the folders it made.

A command killed outright (SIGKILL: the out-of-memory killer, a CI job's hard timeout) removes
nothing. So the process that makes a scratch folder holds a lock on a file in it (OWNER) for as
long as it lives, the kernel letting go of it however the process ends, and lists there what else
it made in the temporary folder to be removed with it (`remove_with_it`: the fork server's socket
folder). Making a scratch folder first removes every one of this user's whose lock is free: its
command is gone. Where the system has no such locks (Windows), nothing is removed so.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from typing import Iterator, TextIO

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

FOLDER_VARIABLE = "CONFORM_SCRATCH"
HYPOTHESIS_VARIABLE = "HYPOTHESIS_STORAGE_DIRECTORY"  # hypothesis reads it once, when it first stores something
HYPOTHESIS_KIND = "hypothesis"
PREFIX = "conform-"
OWNER = ".owner"  # marks a folder as conform's; locked while the process that made it lives; lists what goes with it


class _Made:
    """The scratch folders this process made, each with its owner file, open (and locked) until the
    folder is removed: one for a command; as a library, one more each time the environment stops
    naming the last (a test's own temporary folder), the others' locks held all the same."""

    owners: dict[str, TextIO] = {}


def folder(kind: str) -> str:
    """The subfolder `kind` of this command's scratch folder, made (with the folder) if needed."""
    root = _named()
    if root is None:
        root = os.environ[FOLDER_VARIABLE] = _made()
    path = os.path.join(root, kind)
    os.makedirs(path, exist_ok=True)
    return path


def _named() -> str | None:
    """The scratch folder the environment names, when it is one conform made (see `_marked`)."""
    root = os.environ.get(FOLDER_VARIABLE)
    return root if root and _marked(root) else None


def _made() -> str:
    """A fresh scratch folder owned by this process, once those of commands that are gone are removed."""
    remove_abandoned()
    root = tempfile.mkdtemp(prefix=PREFIX)
    atexit.register(shutil.rmtree, root, True)
    # Locked before it takes its name: a sweep never finds an owner file that is not locked yet.
    # Where there are no locks (and no sweep), it is made under its name: Windows renames no open file.
    stream = open(os.path.join(root, OWNER + ".new" if fcntl is not None else OWNER), "w", encoding="utf-8")
    if fcntl is not None:
        fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.replace(stream.name, os.path.join(root, OWNER))
    _Made.owners[root] = stream
    return root


def forget_inherited() -> None:
    """In a command's own process, first thing: leave alone the scratch folder named in the
    environment it started with, that of the command whose worker started this one (a backend
    that runs `conform`), or a folder a user named so. This command makes its own when it needs
    one (`folder`). Hypothesis's storage in the inherited folder goes with it; one a user named stays."""
    inherited = os.environ.pop(FOLDER_VARIABLE, None)
    if inherited and os.environ.get(HYPOTHESIS_VARIABLE) == os.path.join(inherited, HYPOTHESIS_KIND):
        del os.environ[HYPOTHESIS_VARIABLE]


def remove_with_it(path: str) -> None:
    """Have `path`, a folder this process made in the temporary folder, removed with its scratch
    folder by a later command, should this one be killed before it removes both itself."""
    folder("")  # makes the scratch folder, and so the owner file, unless this is a worker of a command that has one
    owner = _Made.owners.get(_named())
    if owner is not None:
        owner.write(path + "\n")
        owner.flush()


def remove_abandoned() -> None:
    """Remove this user's scratch folders whose owner is gone, with what each listed."""
    if fcntl is None:
        return
    for root in glob.glob(os.path.join(glob.escape(tempfile.gettempdir()), PREFIX + "*")):
        listed = _abandoned(root)
        if listed is not None:
            for path in [root, *filter(_in_temporary_folder, listed)]:
                shutil.rmtree(path, ignore_errors=True)


def _abandoned(root: str) -> list[str] | None:
    """What a scratch folder's owner file lists, when the folder is this user's and its owner is
    gone; else None (its command lives, or the folder is not one of ours to judge)."""
    if not _marked(root):
        return None
    try:
        with open(os.path.join(root, OWNER), encoding="utf-8") as stream:
            fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError while the owner lives
            return stream.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None


def _in_temporary_folder(path: str) -> bool:
    """Whether a path an owner file lists is a folder of this user's directly in the temporary
    folder, as the fork server's socket folder is: nothing else is removed for it."""
    return os.path.dirname(path) == tempfile.gettempdir() and _own_folder(path)


def _own_folder(path: str) -> bool:
    """Whether `path` is a folder (not a link to one) of this user's (where files have owners)."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and (not hasattr(os, "getuid") or found.st_uid == os.getuid())


def _marked(root: str) -> bool:
    """Whether `root` is a scratch folder conform made: a folder of this user's holding an owner
    file (a file, not a link to one). Nothing else is used as one, emptied or removed."""
    try:
        return _own_folder(root) and stat.S_ISREG(os.lstat(os.path.join(root, OWNER)).st_mode)
    except OSError:
        return False


def existing(kind: str) -> str | None:
    """The subfolder `kind` when this command has made it, else None (and nothing is made)."""
    root = _named()
    path = os.path.join(root, kind) if root else None
    return path if path and os.path.isdir(path) else None


def hold_hypothesis_storage() -> None:
    """Have hypothesis store what it stores in this command's scratch folder, in this process and
    in the workers it starts (they take its environment). Hypothesis keeps a cache of the constants
    it reads in local source files (the command's own script, a --backend module) under
    `.hypothesis/` in the working folder, which a command told where to write must leave alone;
    conform's cases do not depend on it. A storage the user named is kept."""
    if HYPOTHESIS_VARIABLE in os.environ:
        return
    try:
        os.environ[HYPOTHESIS_VARIABLE] = folder(HYPOTHESIS_KIND)
    except OSError:
        pass  # no temporary folder to be had: hypothesis stores where it would have


@contextmanager
def hypothesis_storage_aside() -> Iterator[None]:
    """Within it, hypothesis stores what it stores in this process's scratch folder, and after it
    where it did before: for conform's draws inside a process that is not conform's own (the pytest
    plugin's session), whose own hypothesis tests keep their storage (`.hypothesis/`, or the
    user's HYPOTHESIS_STORAGE_DIRECTORY), where conform's would leave a `.hypothesis/` in the
    user's project."""
    from hypothesis.configuration import set_hypothesis_home_dir, storage_directory

    before = storage_directory(intent_to_write=False).home_directory
    try:
        set_hypothesis_home_dir(folder(HYPOTHESIS_KIND))
    except OSError:  # no temporary folder to be had: hypothesis stores where it would have
        yield
        return
    try:
        yield
    finally:
        set_hypothesis_home_dir(before)


def discard() -> None:
    """Remove the scratch folders this process made, and everything in them; nothing else (a folder
    the environment names that this process did not make stays, and stays named)."""
    for root, owner in _Made.owners.items():
        if os.environ.get(FOLDER_VARIABLE) == root:
            del os.environ[FOLDER_VARIABLE]
        owner.close()  # first: Windows removes no open file
        shutil.rmtree(root, ignore_errors=True)
    _Made.owners.clear()
