"""Text others wrote (a runtime's error message or stderr, a case file's names), made safe to
print: a control character is shown as its escape (`\\x1b`), so that what conform prints cannot
clear a terminal, set its title, colour a fake verdict or split a one-line replay command."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


def printable(text: str) -> str:
    """`text` with each control character but tab and newline written as its escape."""
    return _CONTROL.sub(lambda found: repr(found.group())[1:-1], text)


def has_control(text: str) -> bool:
    """Whether `text` holds a control character (a tab or newline among them)."""
    return bool(re.search(r"[\x00-\x1f\x7f-\x9f]", text))
