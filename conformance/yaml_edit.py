"""Rewriting one list of a YAML file while keeping the text of what it keeps.

`--write-expect` brings a person's expectations file up to date: it drops some entries, rewrites
a few and adds others. A YAML library reads comments as nothing and writes its own style, so
dumping the new list would lose every comment, flow list and line break that person wrote. Here
the file's text is cut at its list items instead: an item kept is copied as written, with the
comments before it; the comments before an item dropped stay, before whatever follows it (they
may head a group of entries); only rewritten and new items are dumped. The result is read back
and compared with what was meant, so a layout this cannot cut cleanly is refused (None), never
written wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml


@dataclass(frozen=True)
class Item:
    """One item of the rewritten list: the original item `index` as written (`value` None), the
    original item `index` written as `value` (its comments kept), or a new item (`index` None)."""

    index: int | None = None
    value: Any = None


@dataclass(frozen=True)
class _Cut:
    """The file's lines cut at a block list's items: the lines before the list, each item's
    comment lines before it and its own lines, the lines after the list, and the list's indent."""

    head: list[str]
    before: list[list[str]]
    own: list[list[str]]
    tail: list[str]
    indent: int
    newline: str  # the file's own, for the lines written anew
    key_end: int  # the column where the key ends on the last line of `head`


def rewritten_list(text: str, key: str, items: list[Item], new_items_note: str | None = None) -> str | None:
    """`text` with the block list under the top-level `key` made of `items` (the original items it
    keeps, in their order, then the new ones), or None when the list cannot be cut cleanly (not a
    block list of items, say); `new_items_note` is a comment line written before the new items."""
    try:
        document = yaml.safe_load(text)
        cut = _cut(text, key)
    except yaml.YAMLError:
        return None
    if cut is None:
        return None
    kept = {item.index for item in items if item.index is not None}
    lines = list(cut.head)
    for item in items:
        if item.index is not None:
            lines += _dropped_comments(cut, kept, below=item.index) + cut.before[item.index]
            lines += cut.own[item.index] if item.value is None else _dumped(item.value, cut)
    lines += _dropped_comments(cut, kept, below=len(cut.own))
    new = [item for item in items if item.index is None]
    if new and new_items_note is not None:
        lines.append(" " * cut.indent + f"# {new_items_note}{cut.newline}")
    for item in new:
        lines += _dumped(item.value, cut)
    lines += cut.tail
    if not items:  # a key with nothing under it would read as null, not as an empty list
        lines[len(cut.head) - 1] = _emptied(lines[len(cut.head) - 1], cut.key_end)
    written = "".join(lines)
    return written if _reads_as_meant(written, document, key, items) else None


def _dropped_comments(cut: _Cut, kept: set[int], below: int) -> list[str]:
    """The comment lines of the dropped items just before item `below` (back to the last kept one)."""
    start = below
    while start > 0 and start - 1 not in kept:
        start -= 1
    return [line for index in range(start, below) for line in cut.before[index]]


def _cut(text: str, key: str) -> _Cut | None:
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if not isinstance(root, yaml.MappingNode):
        return None
    found = [(k, v) for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == key]
    if len(found) != 1 or not isinstance(found[0][1], yaml.SequenceNode) or not found[0][1].value:
        return None
    key_node, sequence = found[0]
    lines = text.splitlines(keepends=True)
    if text[sequence.start_mark.index:].startswith("["):
        return None  # a flow list: its items share lines
    indents = {_dash_column(lines, node) for node in sequence.value}
    if len(indents) != 1 or None in indents:
        return None
    spans, end = [], key_node.end_mark.line
    for node in sequence.value:
        first, last = node.start_mark.line, _last_line(node)
        spans.append((end + 1, first, last))
        end = last
    return _Cut(head=lines[:key_node.end_mark.line + 1],
                before=[lines[start:first] for start, first, _ in spans],
                own=[lines[first:last + 1] for _, first, last in spans],
                tail=lines[end + 1:], indent=indents.pop(),
                newline="\r\n" if lines[0].endswith("\r\n") else "\n", key_end=key_node.end_mark.column)


def _emptied(key_line: str, key_end: int) -> str:
    colon = key_line.index(":", key_end) + 1
    return key_line[:colon] + " []" + key_line[colon:]


def _dash_column(lines: list[str], node: yaml.Node) -> int | None:
    """Where the `-` of a block list item stands, when the item starts on the dash's line."""
    before = lines[node.start_mark.line][:node.start_mark.column]
    return before.index("-") if before.strip() == "-" else None


def _last_line(node: yaml.Node) -> int:
    """The last line of a node's own text: a block collection's end mark lies past the comments
    that follow it, so its last line is its last child's."""
    block = isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style and node.value
    if block:
        last = node.value[-1]
        return _last_line(last[1] if isinstance(node, yaml.MappingNode) else last)
    end = node.end_mark
    return end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line


def _dumped(value: Any, cut: _Cut) -> list[str]:
    text = yaml.safe_dump([value], sort_keys=False, width=120)
    return [" " * cut.indent + line + cut.newline for line in text.splitlines()]


def _reads_as_meant(written: str, document: Any, key: str, items: list[Item]) -> bool:
    try:
        read = yaml.safe_load(written)
    except yaml.YAMLError:
        return False
    originals = document[key]
    meant = [originals[item.index] if item.value is None else item.value for item in items]
    rest = {k: v for k, v in document.items() if k != key}
    return isinstance(read, dict) and read.get(key) == meant and {k: v for k, v in read.items() if k != key} == rest


__all__ = ["Item", "rewritten_list"]
