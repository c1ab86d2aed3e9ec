"""Which execution provider actually ran a node, read from onnxruntime's profiling output.

A CUDA or DirectML gate must not pass on results the CPU provider computed: onnxruntime quietly
assigns a node to CPUExecutionProvider when the requested provider has no kernel for it. Each
kernel event of a profile carries the op name and the provider that ran it.

A session writes its profile in the command's scratch folder (`next_profile_prefix`): one file
per session, read once and removed.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

from .. import scratch


def providers_that_ran(events: list[dict], op_type: str) -> set[str]:
    """The providers of every kernel event for `op_type` in a profile."""
    return {
        event["args"]["provider"]
        for event in events
        if event.get("cat") == "Node" and event.get("args", {}).get("op_name") == op_type and "provider" in event["args"]
    }


def fallback_message(requested: str, ran: set[str]) -> str | None:
    """None when only the requested provider ran the op; otherwise the outcome's message."""
    others = sorted(ran - {requested})
    if not ran:
        return f"fallback: the profile shows no kernel run for the op (requested {requested})"
    if others:
        return f"fallback: ran on {', '.join(others)} (requested {requested})"
    return None


def read_profile(path: str | Path) -> list[dict]:
    return json.loads(Path(path).read_text())


def read_and_remove(path: str | Path) -> list[dict]:
    """The events of a profile a session has finished writing; the file is gone afterwards."""
    try:
        return read_profile(path)
    finally:
        Path(path).unlink(missing_ok=True)


PROFILES = "profiles"  # the scratch subfolder of the profiles
_prefixes_made = itertools.count(1)


def next_profile_prefix() -> str:
    """Where one more session writes its profile: a prefix of its own, in the command's scratch
    folder. onnxruntime names the file by the prefix and the time to the millisecond, so two
    sessions made in the same millisecond need two prefixes (counted for the whole process, which
    may hold several runners: `--optimizations both`, diff). A profile read is removed
    (`read_and_remove`); one never read (its session dropped from the cache, or its worker killed)
    goes with the scratch folder."""
    return os.path.join(scratch.folder(PROFILES), f"session-{os.getpid()}-{next(_prefixes_made)}")
