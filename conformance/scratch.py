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

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

FOLDER_VARIABLE = "CONFORM_SCRATCH"
HYPOTHESIS_VARIABLE = "HYPOTHESIS_STORAGE_DIRECTORY"  # hypothesis reads it once, when it first stores something
PREFIX = "conform-"
OWNER = ".owner"  # locked while the process that made the folder lives; lists what goes with the folder
_owner: list = []  # this process's owner file, open and locked until the process ends


def folder(kind: str) -> str:
    """The subfolder `kind` of this command's scratch folder, made (with the folder) if needed."""
    root = os.environ.get(FOLDER_VARIABLE)
    if not root or not os.path.isdir(root):
        root = os.environ[FOLDER_VARIABLE] = _made()
    path = os.path.join(root, kind)
    os.makedirs(path, exist_ok=True)
    return path


def _made() -> str:
    """A fresh scratch folder owned by this process, once those of commands that are gone are removed."""
    remove_abandoned()
    root = tempfile.mkdtemp(prefix=PREFIX)
    atexit.register(shutil.rmtree, root, True)
    if fcntl is not None:
        # Locked before it takes its name: a sweep never finds an owner file that is not locked yet.
        stream = open(os.path.join(root, OWNER + ".new"), "w", encoding="utf-8")
        fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.replace(stream.name, os.path.join(root, OWNER))
        _owner[:] = [stream]
    return root


def remove_with_it(path: str) -> None:
    """Have `path`, a folder this process made in the temporary folder, removed with its scratch
    folder by a later command, should this one be killed before it removes both itself."""
    if not _owner:
        folder("")  # makes the scratch folder, and so the owner file
    if _owner:
        _owner[0].write(path + "\n")
        _owner[0].flush()


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
    if not _own_folder(root):
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
    """Whether `path` is a folder (not a link to one) of this user's."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid()


def existing(kind: str) -> str | None:
    """The subfolder `kind` when this command has made it, else None (and nothing is made)."""
    root = os.environ.get(FOLDER_VARIABLE)
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
        os.environ[HYPOTHESIS_VARIABLE] = folder("hypothesis")
    except OSError:
        pass  # no temporary folder to be had: hypothesis stores where it would have


def discard() -> None:
    """Remove this command's scratch folder and everything in it, if it made one."""
    root = os.environ.pop(FOLDER_VARIABLE, None)
    if root:
        shutil.rmtree(root, ignore_errors=True)
    for stream in _owner:
        stream.close()
    _owner.clear()
