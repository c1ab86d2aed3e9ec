"""Rewriting the list of a YAML file in its own text (what `--write-expect` keeps of a person's
expectations file: test_gating has the command's side)."""

import textwrap

import yaml

from conformance.yaml_edit import Item, rewritten_list


WRITTEN = textwrap.dedent("""\
    # Deviations of our runtime: the head stays.
    expectations:   # the list
      # why the first: kept with it
      - op: Slice
        versions: [10, 11]      # a flow list and a comment inside
        reason: >-
          folded over
          two lines

      # a group of entries: stays when its first is dropped
      - {op: Slice, match: "gone*", reason: fixed}
      - op: Clip
        reason: |
          a literal block
          # that is text, not a comment
      - {op: Clip, case: [a, b], reason: two}
    # the end
    """)


def _entries(text):
    return yaml.safe_load(text)["expectations"]


def test_every_item_kept_gives_the_same_text():
    assert rewritten_list(WRITTEN, "expectations", [Item(index) for index in range(4)]) == WRITTEN


def test_kept_items_keep_their_text_and_comments_and_only_changed_and_new_ones_are_dumped():
    original = _entries(WRITTEN)
    changed, new = {"op": "Clip", "case": "b", "reason": "two"}, {"op": "Slice", "case": "c", "reason": "observed: x"}
    written = rewritten_list(WRITTEN, "expectations", [Item(0), Item(2), Item(3, changed), Item(None, new)], "added here")
    assert _entries(written) == [original[0], original[2], changed, new]
    first_entry = WRITTEN[:WRITTEN.index("\n  # a group")]
    assert written.startswith(first_entry)  # head, comments, flow list, folded text: as written
    assert "# a group of entries: stays when its first is dropped\n  - op: Clip\n    reason: |" in written
    assert "gone*" not in written and "# that is text, not a comment" in written
    assert written.index("  # added here\n") > written.index("case: b") and written.endswith("# the end\n")


def test_a_file_with_windows_line_ends_keeps_them_in_the_lines_written_anew():
    windows = WRITTEN.replace("\n", "\r\n")
    written = rewritten_list(windows, "expectations", [Item(0), Item(None, {"op": "Clip", "reason": "new"})], "added")
    assert written.count("\n") == written.count("\r\n") and "  # added\r\n  - op: Clip\r\n    reason: new\r\n" in written


def test_the_comments_of_items_dropped_at_the_end_stay_where_they_were_before_the_new_items():
    written = rewritten_list(WRITTEN, "expectations", [Item(0), Item(None, {"op": "Slice", "reason": "new"})], "added here")
    assert written.index("# a group of entries") < written.index("# added here") < written.index("reason: new")
    assert written.endswith("    reason: new\n# the end\n")


def test_dropping_every_item_leaves_an_empty_list_and_the_comments():
    written = rewritten_list(WRITTEN, "expectations", [])
    assert yaml.safe_load(written) == {"expectations": []}
    assert "# Deviations of our runtime: the head stays." in written and "# a group of entries" in written


def test_a_list_it_cannot_cut_is_refused_not_written_wrong():
    flow = "expectations: [{op: Slice, reason: a}, {op: Clip, reason: b}]\n"
    assert rewritten_list(flow, "expectations", [Item(1)]) is None
    assert rewritten_list("expectations: 3\n", "expectations", []) is None
    assert rewritten_list("expectations: [oops\n", "expectations", []) is None
