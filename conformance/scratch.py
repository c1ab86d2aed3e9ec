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

A process may run several commands, and other work beside them (the tests run commands through
CliRunner, between library uses of runners and worker pools; so may anyone using conform
in-process). A command is a click command (the typer app's), and what it makes there is its own,
a `Command`, opened when first needed: its scratch folder, fresh wherever work before it left
something there (workers' stderr files of a library use, or of a command before it that ended
without gathering them), so that it gathers only what its own workers wrote; the environment
variables it sets (`set_for_the_command`); and what other modules end with it (`at_command_end`:
its runners, its workers, the fork server it started). On every way out of the command (its end,
an error, an interruption, an exception) all of it is ended, its folder removed and its variables
given back: the next command inherits nothing. A folder this process made before the command that
holds nothing yet but hypothesis's storage (the `conform` process's, which __main__ makes before
the command begins) serves the command too: what the command puts in it goes when it ends, the
folder with the process. Outside a command (a library use, the pytest plugin's) the folder is the
process's, as above.

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
import sys
import tempfile
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

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
    folder is removed: one for each command; as a library, one more each time the environment stops
    naming the last (a test's own temporary folder), the others' locks held all the same."""

    owners: dict[str, TextIO] = {}


class Command:
    """One command run in this process, and what it owns (see the module's docstring): its scratch
    folder, or what it put in one it shares with its process; the environment variables it set,
    with their values from before it; and what is to end with it (`at_end`). `end` ends it all."""

    def __init__(self) -> None:
        self._made_before = set(_Made.owners)
        self._before: dict[str, str | None] = {}  # each variable it set, as it was before
        self._put: list[str] = []  # the subfolders it made: all of it that goes from a folder it shares with its process
        self._at_end: list[Callable[[], None]] = []
        self._at_last: list[Callable[[], None]] = []
        if not _holds_nothing_of_before(os.environ.get(FOLDER_VARIABLE)):
            self._forget(FOLDER_VARIABLE)  # what work before it left there is not its own to gather

    def made(self, path: str) -> None:
        """`path` (a scratch subfolder) was made during the command: it goes when the command ends."""
        self._put.append(path)

    def at_end(self, callback: Callable[[], None], last: bool = False) -> None:
        """Call `callback` when the command ends, before its folder goes: newest first, and those
        given with `last` after all the others (what ends whatever they left: a sweep of worker
        processes)."""
        (self._at_last if last else self._at_end).append(callback)

    def set_variable(self, name: str, value: str) -> None:
        """Set an environment variable for the rest of the command; it is given back when it ends."""
        self._before.setdefault(name, os.environ.get(name))
        os.environ[name] = value

    def _forget(self, name: str) -> None:
        self._before.setdefault(name, os.environ.get(name))
        os.environ.pop(name, None)

    def end(self) -> None:
        """End what it owns, each callback called even where one before it raised (the first error
        raised at the end); then remove its folders and give back the variables it set."""
        try:
            _call_all(self._at_end)
        finally:
            try:
                _call_all(self._at_last)
            finally:
                for path in self._put:
                    shutil.rmtree(path, ignore_errors=True)
                _discard([root for root in _Made.owners if root not in self._made_before])
                for name, value in self._before.items():
                    if value is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = value


def _call_all(callbacks: list[Callable[[], None]]) -> None:
    """Call and drop each of `callbacks`, newest first, all of them even when one raises (a Ctrl-C
    amid them too); the first exception is raised once all were called."""
    first: BaseException | None = None
    while callbacks:
        try:
            callbacks.pop()()
        except BaseException as error:
            first = first or error
    if first is not None:
        raise first


def _holds_nothing_of_before(root: str | None) -> bool:
    """Whether `root` is a scratch folder this process made that holds nothing work before a
    command could have left for it to gather: its owner file and hypothesis's storage, if that."""
    try:
        return root in _Made.owners and set(os.listdir(root)) <= {OWNER, HYPOTHESIS_KIND}
    except OSError:
        return False


_COMMAND_KEY = "conformance.scratch.Command"  # where a command's Command is kept, in its click context


def current_command() -> Command | None:
    """The command this process runs now, opened at its first call within it; None outside one.

    A command is a click command run in this thread (typer's app is one: the `conform` process's,
    or one that CliRunner invokes): its root context, whose tear-down runs on every way out of it,
    ends the Command. Click is looked up where typer keeps it (its own copy, in typer 0.28), and
    only when typer was imported: a worker process, which runs no command, need not import it."""
    context = _click_context()
    if context is None:
        return None
    root = context.find_root()
    command = root.meta.get(_COMMAND_KEY)
    if command is None:
        command = root.meta[_COMMAND_KEY] = Command()
        root.call_on_close(command.end)
    return command


def _click_context():
    """The context of the click command running in this thread, or None: found through the click
    that typer's Context derives from (`click`, or the copy typer 0.28 keeps as `typer._click`)."""
    typer = sys.modules.get("typer")
    for base in getattr(getattr(typer, "Context", None), "__mro__", ()):
        package = base.__module__.rpartition(".")[0]
        get = getattr(sys.modules.get(f"{package}.globals"), "get_current_context", None)
        if get is not None:
            return get(silent=True)
    return None


def at_command_end(callback: Callable[[], None], last: bool = False) -> bool:
    """Have `callback` called when the command now running ends (see Command.at_end); whether one
    is running (outside one, nothing is done)."""
    command = current_command()
    if command is not None:
        command.at_end(callback, last)
    return command is not None


def set_for_the_command(name: str, value: str) -> None:
    """Set an environment variable: for the command now running, which gives it back when it ends,
    or (outside one) for good."""
    command = current_command()
    if command is None:
        os.environ[name] = value
    else:
        command.set_variable(name, value)


def folder(kind: str) -> str:
    """The subfolder `kind` of this command's scratch folder, made (with the folder) if needed."""
    command = current_command()  # first: a command opened now takes no folder holding what work before it left
    root = _named()
    if root is None:
        root = _made()
        set_for_the_command(FOLDER_VARIABLE, root)
    path = os.path.join(root, kind)
    if kind and command is not None and not os.path.isdir(path):
        command.made(path)
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
    current_command()  # first: a command opened now has made nothing yet
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
        set_for_the_command(HYPOTHESIS_VARIABLE, folder(HYPOTHESIS_KIND))
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
    _discard(list(_Made.owners))


def _discard(roots: list[str]) -> None:
    """Remove these scratch folders of this process's, and everything in them."""
    for root in roots:
        if os.environ.get(FOLDER_VARIABLE) == root:
            del os.environ[FOLDER_VARIABLE]
        _Made.owners.pop(root).close()  # first: Windows removes no open file
        shutil.rmtree(root, ignore_errors=True)


# One registration for every folder the process makes (not one a folder: a process that runs
# command after command would pile them up), for a process that ends before it removes them.
atexit.register(discard)
