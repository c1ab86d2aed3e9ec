"""Which execution provider actually ran a node, read from onnxruntime's profiling output.

A CUDA or DirectML gate must not pass on results the CPU provider computed: onnxruntime quietly
assigns a node to CPUExecutionProvider when the requested provider has no kernel for it. Each
kernel event of a profile carries the op name and the provider that ran it.
"""

from __future__ import annotations

import json
from pathlib import Path


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
