"""The line of a runtime's message that says why it refused or failed (`telling_line`).

A leaf (it imports text.py alone): runners.base tells a verdict's message with it, and runtime_log
the line of a crashed case's stderr worth quoting. It lived in runners.base, which imports
lifetime, which imports runtime_log: runtime_log could only reach it by a late import, a cycle.
"""

from __future__ import annotations

import re

from .text import printable

# The words of a line that says why a runtime refused or failed, most telling first: a Rust error's
# cause, a Rust panic, a C++ abort, an assertion, onnxruntime's status, any error line.
TELLING_MARKERS = ("Caused by", "panicked at", "terminate called", "Assertion", "assertion",
                   "Status Message:", "Error:", "error:")
TELLING_LINE_LIMIT = 500
# A line that only says where a message was raised from, as OpenVINO heads each layer of its
# messages ("Exception from src/inference/src/cpp/core.cpp:105:"): the reason is further down.
_WHERE_ONLY = re.compile(r"^(Exception from|Check '.*' failed at) \S+:\d+:?$")
# Lines that only introduce the next one, as OpenVINO's frontend nests the reason a model was not
# converted ("Failed operations detailed log:", "-- Col2Im-18 with a message:", "While validating
# ONNX node '<Node(Col2Im): output>':"): the reason is the first line after them.
_INTRODUCING_ONLY = re.compile(r"(Failed operations detailed log:|^-- .* with a message:|^While validating .*:"
                               r"|^FrontEnd API failed with \w+:)$")


def telling_line(text: str) -> str:
    """The one line of a runtime's message that says why, printable and at most TELLING_LINE_LIMIT
    characters: the first line holding the most telling of TELLING_MARKERS, else the first line
    that says more than where it was raised from, else the first non-empty one; '' for no text.
    A chosen line that ends in a colon ("panicked at src/x.rs:3:5:", "Caused by:") is joined with
    what it introduces: the next line, or a cause chain's last (root) cause."""
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return ""
    index = _telling_index(lines)
    line = lines[index]
    if line.endswith(":") and index + 1 < len(lines):
        line = f"{line} {_introduced(text, lines, index)}"
    return printable(line[:TELLING_LINE_LIMIT])


def _telling_index(lines: list[str]) -> int:
    for marker in TELLING_MARKERS:
        for index, line in enumerate(lines):
            if marker in line:
                return index
    return next((index for index, line in enumerate(lines) if not _WHERE_ONLY.match(line)), 0)


def _introduced(text: str, lines: list[str], index: int) -> str:
    """What line `index` (ending in a colon) introduces: for "Caused by:", the last cause of the
    numbered chain that follows it (anyhow writes the root cause last), else the next line."""
    if lines[index].startswith("Caused by"):
        chain = []
        for line in lines[index + 1:]:
            if not _CAUSE.match(line):
                break
            chain.append(line)
        if chain:
            return chain[-1]
    following = lines[index + 1:]
    return next((line for line in following if not (_WHERE_ONLY.match(line) or _INTRODUCING_ONLY.search(line))),
                following[0])


_CAUSE = re.compile(r"^\d+: ")
