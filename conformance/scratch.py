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
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

FOLDER_VARIABLE = "CONFORM_SCRATCH"
HYPOTHESIS_VARIABLE = "HYPOTHESIS_STORAGE_DIRECTORY"  # hypothesis reads it once, when it first stores something


def folder(kind: str) -> str:
    """The subfolder `kind` of this command's scratch folder, made (with the folder) if needed."""
    root = os.environ.get(FOLDER_VARIABLE)
    if not root or not os.path.isdir(root):
        root = os.environ[FOLDER_VARIABLE] = tempfile.mkdtemp(prefix="conform-")
        atexit.register(shutil.rmtree, root, True)
    path = os.path.join(root, kind)
    os.makedirs(path, exist_ok=True)
    return path


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
